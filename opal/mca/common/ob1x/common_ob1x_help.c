/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_help.c - help files and messages (common_ob1x_help.h).
 */
#define _GNU_SOURCE /* dladdr */
#include "opal_config.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common_ob1x_help.h"

/* <dir>/../share/openmpi for this library at <dir>: where an install under
 * another prefix than configure's (make install prefix=..., a staged
 * install moved into place) put the help files, since this library is in
 * $(libdir), <prefix>/lib, and $(datadir) is <prefix>/share. */
static void add_dso_relative_dir(void)
{
    Dl_info info;
    char path[PATH_MAX];
    char *slash;

    if (0 == dladdr((void *) add_dso_relative_dir, &info) || NULL == info.dli_fname ||
        (size_t) snprintf(path, sizeof(path), "%s", info.dli_fname) >= sizeof(path)) {
        return;
    }
    slash = strrchr(path, '/');
    if (NULL == slash) {
        return;
    }
    *slash = '\0';
    if ((size_t) snprintf(slash, sizeof(path) - (size_t) (slash - path), "/../share/openmpi") <
            sizeof(path) - (size_t) (slash - path) &&
        0 == access(path, R_OK)) {
        (void) opal_show_help_add_dir(path);
    }
}

void ob1x_help_dirs_add(const char *component_srcdir)
{
    /* one flag per process: every component shares this library */
    static bool common_added;

    /* the build tree first: a run from it uses its own texts even where
     * an older ob1x is installed */
    if (NULL != component_srcdir && 0 == access(component_srcdir, R_OK)) {
        (void) opal_show_help_add_dir(component_srcdir);
    }
    if (common_added) {
        return;
    }
    common_added = true;
    if (0 == access(OB1X_COMMON_SRCDIR, R_OK)) {
        (void) opal_show_help_add_dir(OB1X_COMMON_SRCDIR);
    }
    (void) opal_show_help_add_dir(OB1X_HELP_DIR);
    add_dso_relative_dir();
}

void ob1x_show_help_now(const char *file, const char *topic, ...)
{
    va_list ap;
    char *text;

    va_start(ap, topic);
    text = opal_show_help_vstring(file, topic, true, ap);
    va_end(ap);
    if (NULL != text) {
        fputs(text, stderr);
        fflush(stderr);
        free(text);
    }
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_help.h - user-facing messages of the ob1x components: where
 * their help files (help-*.txt) are found, and how a message that the end
 * of the process follows is shown.
 */
#ifndef COMMON_OB1X_HELP_H
#define COMMON_OB1X_HELP_H

#include <stddef.h>

#include "opal/util/proc.h"
#include "opal/util/show_help.h"

/* This node's name for help messages (also before Open MPI has set it). */
static inline const char *ob1x_host(void)
{
    return NULL != opal_process_info.nodename ? opal_process_info.nodename : "(unknown)";
}

/* Adds the directories that hold the ob1x help files to opal_show_help's
 * search path: the component's source directory (for runs from the build
 * tree), common/ob1x's, then the installed one ($(datadir)/openmpi as
 * configured, and share/openmpi beside the lib directory this library was
 * loaded from). */
void ob1x_help_dirs_add(const char *component_srcdir);

/* opal_show_help for a message that the end of this process follows (a
 * component disabled at startup, a job about to abort). An application's
 * help message reaches mpirun asynchronously in Open MPI 4.1, and one sent
 * just before the process exits is at times garbled or lost there ("Data
 * unpack would read past end of buffer in util/show_help.c", open-mpi/ompi
 * issue 8356); this one is rendered from the same help file and written to
 * stderr at once, which mpirun forwards before it reports the exit. */
void ob1x_show_help_now(const char *file, const char *topic, ...);

#endif /* COMMON_OB1X_HELP_H */

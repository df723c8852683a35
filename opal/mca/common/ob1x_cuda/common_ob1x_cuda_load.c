/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_cuda_load.c - finding and loading the driver
 * (common_ob1x_cuda.h).
 */
#define _GNU_SOURCE /* RTLD_NOLOAD */
#include "opal_config.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "opal/constants.h"
#include "opal/util/show_help.h"

#include "common_ob1x_cuda_internal.h"
#include "common_ob1x_help.h"

#define HELP_FILE "help-ob1x-cuda.txt"
#define DRIVER_SONAME "libcuda.so.1"
#define OB1X_CUDA_STR2(x) #x
#define OB1X_CUDA_STR(x) OB1X_CUDA_STR2(x)

ob1x_cuda_table_t ob1x_cuda_drv;

enum { LOAD_UNTRIED = 0, LOAD_OK, LOAD_FAILED };

/* Written under load_lock (atomically: ob1x_cuda_loaded reads it
 * without the lock); LOAD_OK is published with release order after
 * the table is filled, so a reader that sees it (acquire) sees the table. */
static int load_state;
static bool load_reported;
/* Why the load failed, kept for a later caller that requires CUDA. */
static const char *failed_topic;
static char failed_what[256];
static void *driver_handle;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

bool ob1x_cuda_loaded(void)
{
    return LOAD_OK == __atomic_load_n(&load_state, __ATOMIC_ACQUIRE);
}

static void help_dirs(void)
{
    ob1x_help_dirs_add(OB1X_CUDA_SRCDIR);
}

/* Fills the table; the name of the first missing symbol otherwise. */
static const char *resolve_symbols(void *handle)
{
#define OB1X_CUDA_RESOLVE(f)                                                                       \
    ob1x_cuda_drv.f = (__typeof__(&f)) dlsym(handle, OB1X_CUDA_STR(f));                            \
    if (NULL == ob1x_cuda_drv.f) {                                                                 \
        return OB1X_CUDA_STR(f);                                                                   \
    }
    OB1X_CUDA_CALLS(OB1X_CUDA_RESOLVE)
#undef OB1X_CUDA_RESOLVE
    return NULL;
}

/* Keeps the reason for a failed load and shows it once, where CUDA is
 * needed (now or by a later caller). Written to stderr at once
 * (ob1x_show_help_now): the caller that required CUDA typically ends the
 * process or disables its GPU path next, and Open MPI 4.1 loses help
 * messages sent just before a process exits (common_ob1x_help.h). */
static void report_load_failure(bool required, const char *topic, const char *what)
{
    if (NULL != topic) {
        failed_topic = topic;
        snprintf(failed_what, sizeof(failed_what), "%s", NULL != what ? what : "");
    }
    if (!required || load_reported || NULL == failed_topic) {
        return;
    }
    load_reported = true;
    help_dirs();
    ob1x_show_help_now(HELP_FILE, failed_topic, ob1x_host(), (int) getpid(), DRIVER_SONAME,
                       failed_what);
}

static const char *error_text(CUresult rc)
{
    const char *text = NULL;

    if (NULL == ob1x_cuda_drv.cuGetErrorString ||
        CUDA_SUCCESS != ob1x_cuda_drv.cuGetErrorString(rc, &text) || NULL == text) {
        return "(no description)";
    }
    return text;
}

/* dlopen + dlsym + cuInit, with load_lock held. */
/* required: failures are shown. may_load: the driver is opened even when
 * the process has not loaded it (else only one already there is used). */
static int load_locked(bool required, bool may_load)
{
    const char *missing;
    char rc_text[256];
    CUresult rc;

    driver_handle = dlopen(DRIVER_SONAME, RTLD_NOW | RTLD_LOCAL | (may_load ? 0 : RTLD_NOLOAD));
    if (NULL == driver_handle) {
        if (required) {
            report_load_failure(true, "dlopen failed", dlerror());
        }
        return OPAL_ERR_NOT_FOUND;
    }
    missing = resolve_symbols(driver_handle);
    if (NULL != missing) {
        report_load_failure(required, "symbol missing", missing);
        goto close_driver;
    }
    rc = ob1x_cuda_drv.cuInit(0);
    if (CUDA_SUCCESS != rc) {
        snprintf(rc_text, sizeof(rc_text), "cuInit: error %d: %s", (int) rc, error_text(rc));
        report_load_failure(required, "init failed", rc_text);
        goto close_driver;
    }
    __atomic_store_n(&load_state, LOAD_OK, __ATOMIC_RELEASE);
    return OPAL_SUCCESS;

close_driver:
    memset(&ob1x_cuda_drv, 0, sizeof(ob1x_cuda_drv));
    dlclose(driver_handle);
    driver_handle = NULL;
    return OPAL_ERR_NOT_AVAILABLE;
}

int ob1x_cuda_init(bool required)
{
    int rc = OPAL_ERR_NOT_AVAILABLE;

    if (ob1x_cuda_loaded()) {
        return OPAL_SUCCESS;
    }
    pthread_mutex_lock(&load_lock);
    if (LOAD_OK == load_state) {
        rc = OPAL_SUCCESS;
    } else if (LOAD_FAILED == load_state) {
        report_load_failure(required, NULL, NULL);
    } else {
        rc = load_locked(required, required);
        /* A quiet attempt that found no driver in the process may be
         * retried later: the application can load CUDA after MPI_Init.
         * Any other failure is final. */
        if (OPAL_SUCCESS != rc && (required || OPAL_ERR_NOT_FOUND != rc)) {
            __atomic_store_n(&load_state, LOAD_FAILED, __ATOMIC_RELAXED);
        }
        rc = OPAL_SUCCESS == rc ? rc : OPAL_ERR_NOT_AVAILABLE;
    }
    pthread_mutex_unlock(&load_lock);
    return rc;
}

static int runtime_cb(struct dl_phdr_info *info, size_t size, void *found)
{
    const char *name = NULL != info->dlpi_name ? info->dlpi_name : "";
    const char *slash = strrchr(name, '/');

    (void) size;
    name = NULL != slash ? slash + 1 : name;
    if (0 == strncmp(name, "libcudart.so", strlen("libcudart.so"))) {
        *(bool *) found = true;
        return 1;
    }
    return 0;
}

/* Whether the executable carries CUDA device code: nvcc puts it in a
 * section .nv_fatbin (or .nvFatBinSegment), and links the CUDA runtime
 * statically by default, so such a program has no libcudart.so to be
 * seen by and loads the driver at its first CUDA call. Reads the section
 * headers of /proc/self/exe once (a few system calls, at MPI_Init). */
static bool exe_has_device_code(void)
{
    Elf64_Ehdr eh;
    Elf64_Shdr names, sh;
    char name[24];
    bool found = false;
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

    if (fd < 0) {
        return false;
    }
    if (sizeof(eh) != pread(fd, &eh, sizeof(eh), 0) || 0 != memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        ELFCLASS64 != eh.e_ident[EI_CLASS] || sizeof(sh) != eh.e_shentsize ||
        eh.e_shstrndx >= eh.e_shnum ||
        sizeof(names) != pread(fd, &names, sizeof(names),
                               (off_t) (eh.e_shoff + (Elf64_Off) eh.e_shstrndx * sizeof(sh)))) {
        close(fd);
        return false;
    }
    for (Elf64_Half i = 0; i < eh.e_shnum && !found; ++i) {
        ssize_t got;
        if (sizeof(sh) != pread(fd, &sh, sizeof(sh), (off_t) (eh.e_shoff + (Elf64_Off) i * sizeof(sh))) ||
            sh.sh_name >= names.sh_size) {
            continue;
        }
        got = pread(fd, name, sizeof(name) - 1, (off_t) (names.sh_offset + sh.sh_name));
        name[got > 0 ? got : 0] = '\0';
        found = 0 == strcmp(name, ".nv_fatbin") || 0 == strcmp(name, ".nvFatBinSegment");
    }
    close(fd);
    return found;
}

int ob1x_cuda_init_for_runtime(void)
{
    bool found = false;
    int rc = OPAL_ERR_NOT_AVAILABLE;

    if (ob1x_cuda_loaded()) {
        return OPAL_SUCCESS;
    }
    (void) dl_iterate_phdr(runtime_cb, &found);
    if (!found) {
        found = exe_has_device_code();
    }
    if (!found) {
        return OPAL_ERR_NOT_FOUND;
    }
    pthread_mutex_lock(&load_lock);
    if (LOAD_OK == load_state) {
        rc = OPAL_SUCCESS;
    } else if (LOAD_FAILED != load_state) {
        /* quiet: a process linked with the runtime may never use a GPU
         * (none on this node); a driver that fails cuInit is final, and
         * said if a device buffer later needs it */
        rc = load_locked(false, true);
        if (OPAL_SUCCESS != rc && OPAL_ERR_NOT_FOUND != rc) {
            __atomic_store_n(&load_state, LOAD_FAILED, __ATOMIC_RELAXED);
        }
        rc = OPAL_SUCCESS == rc ? rc : OPAL_ERR_NOT_AVAILABLE;
    }
    pthread_mutex_unlock(&load_lock);
    return rc;
}

int ob1x_cuda_failed(const char *call, CUresult rc)
{
    /* call names are few and string literals: remember them, not copies */
    static const char *reported[32];
    static int n_reported;
    bool first = true;

    pthread_mutex_lock(&load_lock);
    for (int i = 0; i < n_reported; i++) {
        first = first && 0 != strcmp(reported[i], call);
    }
    if (first && n_reported < (int) (sizeof(reported) / sizeof(reported[0]))) {
        reported[n_reported++] = call;
    }
    pthread_mutex_unlock(&load_lock);
    if (first) {
        help_dirs();
        /* at once, as the load failures: the caller's fallback or abort
         * may end the process soon after */
        ob1x_show_help_now(HELP_FILE, "call failed", ob1x_host(), (int) getpid(), call, (int) rc,
                           error_text(rc));
    }
    return OPAL_ERROR;
}

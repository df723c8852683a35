/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_cma.c - Cross Memory Attach (process_vm_readv/writev) as the
 * host single-copy mechanism.
 */
#define _GNU_SOURCE
#include "btl_smcuda.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER 0x59616d61
#endif
#ifndef PR_SET_PTRACER_ANY
#define PR_SET_PTRACER_ANY ((unsigned long) -1)
#endif

/* Yama: 0 = classic, 1 = only declared tracers (we declare "any"),
 * 2 = admin only, 3 = none. */
static int yama_scope(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int scope = 0;

    if (NULL == f) {
        return 0; /* no Yama */
    }
    if (1 != fscanf(f, "%d", &scope)) {
        scope = 0;
    }
    fclose(f);
    return scope;
}

static int cma_query(const char **why)
{
    static char msg[128];
    char src[8] = "smcuda", dst[8] = {0};
    struct iovec l = {dst, sizeof(dst)}, r = {src, sizeof(src)};
    int scope = yama_scope();

    if (scope >= 2) {
        snprintf(msg, sizeof(msg), "kernel.yama.ptrace_scope is %d", scope);
        *why = msg;
        return OPAL_ERR_NOT_AVAILABLE;
    }
    if (1 == scope) {
        (void) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    }
    if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t) sizeof(dst) ||
        0 != memcmp(src, dst, sizeof(dst))) {
        snprintf(msg, sizeof(msg), "process_vm_readv: %s", strerror(errno));
        *why = msg;
        return OPAL_ERR_NOT_AVAILABLE;
    }
    return OPAL_SUCCESS;
}

static int cma_read(mca_btl_base_endpoint_t *ep, void *local, uint64_t remote, size_t len)
{
    while (len > 0) {
        struct iovec l = {local, len}, r = {(void *) (uintptr_t) remote, len};
        ssize_t n = process_vm_readv(ep->pid, &l, 1, &r, 1, 0);
        if (n <= 0) {
            if (n < 0 && EINTR == errno) {
                continue;
            }
            return OPAL_ERROR;
        }
        local = (char *) local + n;
        remote += (uint64_t) n;
        len -= (size_t) n;
    }
    return OPAL_SUCCESS;
}

static int cma_write(mca_btl_base_endpoint_t *ep, const void *local, uint64_t remote, size_t len)
{
    while (len > 0) {
        struct iovec l = {(void *) local, len}, r = {(void *) (uintptr_t) remote, len};
        ssize_t n = process_vm_writev(ep->pid, &l, 1, &r, 1, 0);
        if (n <= 0) {
            if (n < 0 && EINTR == errno) {
                continue;
            }
            return OPAL_ERROR;
        }
        local = (const char *) local + n;
        remote += (uint64_t) n;
        len -= (size_t) n;
    }
    return OPAL_SUCCESS;
}

/* Reads the magic of the peer's segment through CMA and compares it with
 * what our mapping shows. */
static int cma_check_peer(mca_btl_base_endpoint_t *ep)
{
    const smcuda_seg_hdr_t *hdr = (const smcuda_seg_hdr_t *) ep->seg;
    uint64_t magic = 0;

    if (OPAL_SUCCESS != cma_read(ep, &magic, hdr->owner_base, sizeof(magic)) ||
        SMCUDA_SHM_MAGIC != magic) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    return OPAL_SUCCESS;
}

const mca_btl_smcuda_copy_ops_t mca_btl_smcuda_cma_ops = {
    .name = "cma",
    .query = cma_query,
    .check_peer = cma_check_peer,
    .read = cma_read,
    .write = cma_write,
};

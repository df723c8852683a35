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
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common_ob1x_copy.h"

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

/* process_vm_readv and process_vm_writev take the same arguments. */
typedef ssize_t (*cma_call_t)(pid_t, const struct iovec *, unsigned long, const struct iovec *,
                              unsigned long, unsigned long);

/* One CMA transfer between our `local` and the peer's `remote`, resumed
 * after short transfers and signals. */
static int cma_direct(pid_t pid, void *local, uint64_t remote, size_t len, bool read)
{
    cma_call_t call = read ? process_vm_readv : process_vm_writev;

    while (len > 0) {
        struct iovec l = {local, len}, r = {(void *) (uintptr_t) remote, len};
        ssize_t n = call(pid, &l, 1, &r, 1, 0);
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

/*
 * The kernel copies for process_vm_readv/writev with `rep movsb`, which is
 * 5-6 times slower when the destination lies 1..15 bytes past the source
 * modulo 4096 (common_ob1x_copy.h). Such transfers go through a bounce
 * buffer placed at the remote address's page offset: the kernel copy then
 * has distance 0 and the local side is copied with ob1x_copy, chunk by
 * chunk so that the second copy reads from cache (256 KiB: 87 us direct,
 * about 24 bounced).
 */
#define CMA_BOUNCE_MIN 4096
#define CMA_BOUNCE_CHUNK (64 * 1024)

static int cma_copy(mca_btl_base_endpoint_t *ep, void *local, uint64_t remote, size_t len,
                    bool read)
{
    const void *r = (const void *) (uintptr_t) remote;
    bool slow = read ? ob1x_copy_distance_slow(local, r) : ob1x_copy_distance_slow(r, local);
    unsigned char *raw, *loc = local;
    int rc = OPAL_SUCCESS;

    if (len < CMA_BOUNCE_MIN || !slow || NULL == (raw = malloc(CMA_BOUNCE_CHUNK + 4096))) {
        return cma_direct(ep->pid, local, remote, len, read);
    }
    while (len > 0 && OPAL_SUCCESS == rc) {
        size_t n = len < CMA_BOUNCE_CHUNK ? len : CMA_BOUNCE_CHUNK;
        /* same page offset as the remote address */
        unsigned char *b = raw + ((remote - (uintptr_t) raw) & 4095);
        if (read) {
            rc = cma_direct(ep->pid, b, remote, n, true);
            ob1x_copy(loc, b, n);
        } else {
            ob1x_copy(b, loc, n);
            rc = cma_direct(ep->pid, b, remote, n, false);
        }
        smcuda_pv_add(SMCUDA_PV_CMA_BOUNCED_BYTES, n);
        loc += n;
        remote += n;
        len -= n;
    }
    free(raw);
    return rc;
}

static int cma_read(mca_btl_base_endpoint_t *ep, void *local, uint64_t remote, size_t len)
{
    return cma_copy(ep, local, remote, len, true);
}

static int cma_write(mca_btl_base_endpoint_t *ep, const void *local, uint64_t remote, size_t len)
{
    return cma_copy(ep, (void *) local, remote, len, false);
}

/* Reads the magic of the peer's segment through CMA and compares it with
 * what our mapping shows. */
static int cma_check_peer(mca_btl_base_endpoint_t *ep)
{
    const smcuda_seg_hdr_t *hdr = (const smcuda_seg_hdr_t *) ep->seg;
    uint64_t magic = 0;

    if (OPAL_SUCCESS != cma_direct(ep->pid, &magic, hdr->owner_base, sizeof(magic), true) ||
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

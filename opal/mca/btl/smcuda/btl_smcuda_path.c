/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_path.c - per message, the copy path or single copy.
 *
 * The upper layer offers a large send for single copy by registering its
 * buffer for remote reading; declining the registration makes it move the
 * message through the copy-in/copy-out pipeline instead. The rules:
 *   - below cma_min_size: copy path (single copy's round trips cost more
 *     than the copies they save);
 *   - an isolated message (no other single-copy send of ours is live), a
 *     two-way stream (both cores busy anyway) and anything from busy_limit
 *     up: single copy;
 *   - a one-way stream below busy_limit: the path that the receiver has
 *     measured faster (single_copy_adapt), else the copy path.
 *
 * Why measure: the copy pipeline keeps both cores copying; where they
 * share a cache it streams at two to four times one core's single copy,
 * but where every cache line that crosses between them is dear (cores on
 * different dies or sockets, or virtual CPUs the host has placed apart) it
 * moves each line across twice and falls to half of single copy. That is
 * a property of where the processes run, and under a VM it can change.
 *
 * What is measured, by each receiving process on its own clock: the time
 * per byte its upper layer takes to copy a bulk fragment out (the copy
 * path's receiving half, which pays for the crossing lines) and the time
 * per byte of its single-copy gets (helper included), as moving averages in
 * its segment header. A sender reads them from the receiver's header. A
 * measurement older than STALE_NS is refreshed by sending one message that
 * way; the first message of each burst goes single copy anyway.
 */
#include "btl_smcuda.h"

#include <time.h>

#define STALE_NS 100000000ull /* 100 ms */

uint64_t mca_btl_smcuda_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* A receive that took `ns` for `bytes` bytes: single copy or copy path. */
void mca_btl_smcuda_path_note(mca_btl_smcuda_module_t *m, bool single, size_t bytes, uint64_t ns)
{
    uint32_t *avg = single ? &m->hdr->get_ps : &m->hdr->copy_ps;
    uint64_t *when = single ? &m->hdr->get_when : &m->hdr->copy_when;
    uint64_t ps = bytes > 0 ? ns * 1000 / bytes : 0;
    uint32_t old = __atomic_load_n(avg, __ATOMIC_RELAXED);

    if (0 == ps || ps > UINT32_MAX) {
        return;
    }
    /* moving average over about four samples; a stale one is replaced */
    if (0 != old && mca_btl_smcuda_now_ns() - __atomic_load_n(when, __ATOMIC_RELAXED) < STALE_NS) {
        ps = (3 * (uint64_t) old + ps) / 4;
    }
    __atomic_store_n(avg, (uint32_t) ps, __ATOMIC_RELAXED);
    __atomic_store_n(when, mca_btl_smcuda_now_ns(), __ATOMIC_RELAXED);
}

/* The receiver's view: true for single copy. */
static bool measured_single(const mca_btl_base_endpoint_t *ep)
{
    const smcuda_seg_hdr_t *peer = (const smcuda_seg_hdr_t *) ep->seg;
    uint64_t now = mca_btl_smcuda_now_ns();
    uint64_t copy_when = __atomic_load_n(&peer->copy_when, __ATOMIC_RELAXED);
    uint64_t get_when = __atomic_load_n(&peer->get_when, __ATOMIC_RELAXED);

    if (0 == copy_when || now - copy_when > STALE_NS) {
        return false; /* one message through the copy path measures it */
    }
    if (0 == get_when || now - get_when > STALE_NS) {
        return true;
    }
    return __atomic_load_n(&peer->get_ps, __ATOMIC_RELAXED) <
           __atomic_load_n(&peer->copy_ps, __ATOMIC_RELAXED);
}

bool mca_btl_smcuda_path_single(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep,
                                size_t size)
{
    const mca_btl_smcuda_component_t *c = &mca_btl_smcuda_component;
    bool two_way = m->rx_bulk > 0; /* receiving a stream too */

    m->rx_bulk = 0;
    if (size < c->cma_min_size) {
        return false;
    }
    if (size >= c->busy_limit || 0 == m->remote_regs || two_way) {
        return true;
    }
    return c->path_adapt && NULL != ep && MCA_BTL_ENDPOINT_ANY != ep && measured_single(ep);
}

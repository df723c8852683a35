/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_path.c - per message, the copy path or single copy.
 *
 * The upper layer offers a large send for single copy by registering its
 * buffer for remote reading; declining the registration makes it move the
 * message through the copy-in/copy-out pipeline instead. The rules:
 *   - below cma_min_size: copy path (single copy's round trips cost more
 *     than the copies they save), unless the receiver is far away (below);
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
 * What is measured, by each receiving process on its own clock, as moving
 * averages of the time per byte in its segment header: the pace at which
 * pipeline fragments arrive in a run (the copy path as a whole: the
 * sender's copy-in, the hand-offs and our copy-out), and its single-copy
 * gets (helper included). A sender reads them from the receiver's header.
 * The pace of a run is the median of its intervals, each fragment's bytes
 * over the time since the one before: a stream that pauses now and then
 * (an application that waits for its windows, the rendezvous of the next
 * message) would otherwise lend the copy path the pauses' time and make
 * single copy look the faster one where the pipeline is several times
 * faster (seen: 16 KiB windows at a quarter of the pipeline's rate).
 * While a figure is older than STALE_NS, stream messages take that way
 * until it is measured again; the first message of each burst goes single
 * copy anyway.
 *
 * Far receivers. Below cma_min_size the copy path wins where the cores
 * share a cache (8 KiB ping-pong: 1.4 us against 2.5 by single copy) and
 * loses where they do not (5.3 us against 2.8; 16 KiB 6.9 against 3.5):
 * it moves each cache line across twice, and each crossing costs what
 * handing one line over costs. The receiver measures that: one pipeline
 * fragment in four carries the time of its push, and the least delay to
 * its pop over 16 samples is published in the receiver's header (on this
 * machine 90-130 ns where the cores are near, 330-420 ns where they are
 * not). Only fragments pushed when the receiver had read all earlier ones,
 * and popped after an empty progress call, are samples: others measure a
 * queue or a busy receiver. A sender finds the receiver far when that
 * figure is fresh, at least far_handoff_ns (220) and below FAR_BUSY times
 * that, and then offers messages from the eager limit up for single copy. The sender reads the
 * figure again every 256 such choices. A stale figure (1 s) means the copy path, whose sampled
 * fragments measure it again (up to 256 messages a second); under ob1x the
 * pulled fragments are sampled too.
 */
#include "btl_smcuda.h"

#include <stdlib.h>
#include <time.h>

#include "opal/util/output.h"

#define STALE_NS 100000000ull /* 100 ms */
/* A far receiver is sent messages by single copy, which yields no more
 * samples (under ob1); its figure is renewed by copy-path messages once it
 * is this old. */
#define HANDOFF_STALE_NS 1000000000ull /* 1 s */
#define RUN_GAP_NS 200000ull           /* fragments further apart do not make a run */
#define WARM_RUNS 8                    /* runs not measured at the start of a job */

uint64_t mca_btl_smcuda_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* Fold one time-per-byte sample, taken at `now`, into a figure of the
 * segment header. */
static void note_ps(uint32_t *avg, uint64_t *when, uint64_t ps, uint64_t now)
{
    uint32_t old = __atomic_load_n(avg, __ATOMIC_RELAXED);

    if (0 == ps || ps > UINT32_MAX) {
        return;
    }
    /* moving average over about four samples; a stale one is replaced */
    if (0 != old && now - __atomic_load_n(when, __ATOMIC_RELAXED) < STALE_NS) {
        ps = (3 * (uint64_t) old + ps) / 4;
    }
    __atomic_store_n(avg, (uint32_t) ps, __ATOMIC_RELAXED);
    __atomic_store_n(when, now, __ATOMIC_RELAXED);
}

/* A single-copy get of `bytes` that started at t0 is done (the helper
 * copied alongside). Its end time is the figure's timestamp too, so a timed
 * get reads the clock twice in all. */
void mca_btl_smcuda_path_get(mca_btl_smcuda_module_t *m, size_t bytes, uint64_t t0)
{
    uint64_t now = mca_btl_smcuda_now_ns();

    note_ps(&m->hdr->get_ps, &m->hdr->get_when, bytes > 0 ? (now - t0) * 1000 / bytes : 0, now);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
    return (x > y) - (x < y);
}

/* A pipeline fragment arrives. The copy path's speed is the pace of such
 * fragments in a run (each within RUN_GAP_NS of the previous one), the
 * median of its intervals: it covers the sender's copy-in, the hand-offs
 * and our copy-out alike, whichever of them is the bottleneck. */
uint64_t mca_btl_smcuda_path_fragment(mca_btl_smcuda_module_t *m, size_t bytes)
{
    uint64_t now = mca_btl_smcuda_now_ns();

    if (0 == m->run_frags || now - m->run_last > RUN_GAP_NS) {
        m->run_frags = 1; /* the first fragment opens the run: its bytes arrived before */
    } else {
        /* bytes > eager limit (the caller's test); +1: never a zero sample */
        m->run_ps[m->run_frags - 1] = (uint32_t) ((now - m->run_last) * 1000 / bytes + 1);
        if (++m->run_frags > SMCUDA_RUN_FRAGS) {
            /* The first runs of a job meet fragments touched for the first
             * time (page faults on both sides): not the path's pace. */
            if (m->runs_seen < WARM_RUNS) {
                m->runs_seen++;
            } else {
                qsort(m->run_ps, SMCUDA_RUN_FRAGS, sizeof(m->run_ps[0]), cmp_u32);
                note_ps(&m->hdr->copy_ps, &m->hdr->copy_when, m->run_ps[SMCUDA_RUN_FRAGS / 2], now);
            }
            m->run_frags = 1;
        }
    }
    m->run_last = now;
    return now;
}

/* A sampled pipeline fragment, pushed at `stamp` (the sender's clock, low
 * 32 bits), was popped now. The least of SMCUDA_HANDOFF_SAMPLES such
 * delays is published: the receiving loop's own delay and the sender being
 * descheduled only ever add to it. */
void mca_btl_smcuda_path_handoff(mca_btl_smcuda_module_t *m, uint32_t stamp, uint64_t now)
{
    uint32_t d = (uint32_t) now - stamp;

    if (d > 1000000u) {
        return; /* a millisecond: not a hand-off (or the clock wrapped) */
    }
    if (0 == m->ho_n++ || d < m->ho_min) {
        m->ho_min = d;
    }
    if (m->ho_n == SMCUDA_HANDOFF_SAMPLES) {
        __atomic_store_n(&m->hdr->handoff_ns, m->ho_min, __ATOMIC_RELAXED);
        __atomic_store_n(&m->hdr->handoff_when, now, __ATOMIC_RELAXED);
        opal_output_verbose(20, mca_btl_smcuda_component.output,
                            "btl/smcuda: hand-off from senders takes %u ns", m->ho_min);
        m->ho_n = 0;
    }
}

/* Whether the receiver `ep` is far away: its hand-off figure is fresh and
 * at least far_handoff_ns, but below FAR_BUSY times that. A larger figure
 * says that the receiver was busy (a job's first, cold messages; a stream
 * it could not keep up with), not where it is: 1.8-2 us was seen at the
 * start of a windowed stream where the cores share a cache. Either way the
 * copy path is taken, and its sampled fragments measure the figure again. */
#define FAR_BUSY 4

static bool peer_far(const mca_btl_base_endpoint_t *ep)
{
    const smcuda_seg_hdr_t *peer;
    uint64_t when, ns;

    if (NULL == ep->seg) {
        return false; /* a departed guest (btl_smcuda_guest.c) */
    }
    peer = (const smcuda_seg_hdr_t *) ep->seg;
    when = __atomic_load_n(&peer->handoff_when, __ATOMIC_RELAXED);
    ns = __atomic_load_n(&peer->handoff_ns, __ATOMIC_RELAXED);
    return 0 != when && mca_btl_smcuda_now_ns() - when < HANDOFF_STALE_NS &&
           ns >= mca_btl_smcuda_component.far_handoff_ns &&
           ns < (uint64_t) FAR_BUSY * mca_btl_smcuda_component.far_handoff_ns;
}

/* peer_far(), read again every FAR_RECHECK choices: reading the clock and
 * the peer's header line for every message would cost a few percent of an
 * 8 KiB message (the line may even be in the other core's cache). */
#define FAR_RECHECK 256

static bool far_cached(mca_btl_base_endpoint_t *ep)
{
    const mca_btl_smcuda_component_t *c = &mca_btl_smcuda_component;

    if (0 == c->far_handoff_ns) {
        return true;
    }
    if (NULL == ep || MCA_BTL_ENDPOINT_ANY == ep) {
        return false;
    }
    if (0 == ep->far_left) {
        ep->far = peer_far(ep);
        ep->far_left = FAR_RECHECK;
    }
    ep->far_left--;
    return ep->far;
}

/* True when the receiver `ep` has measured single copy the cheaper per
 * byte. A figure that is missing or stale sends stream messages that way
 * until the receiver has measured it again. */
static bool measured_single(const mca_btl_base_endpoint_t *ep)
{
    const smcuda_seg_hdr_t *peer;
    uint64_t now, copy_when, get_when;

    if (NULL == ep || MCA_BTL_ENDPOINT_ANY == ep || NULL == ep->seg) {
        return false; /* no receiver's figures to read */
    }
    peer = (const smcuda_seg_hdr_t *) ep->seg;
    now = mca_btl_smcuda_now_ns();
    copy_when = __atomic_load_n(&peer->copy_when, __ATOMIC_RELAXED);
    get_when = __atomic_load_n(&peer->get_when, __ATOMIC_RELAXED);

    if (0 == copy_when || now - copy_when > STALE_NS) {
        return false;
    }
    if (0 == get_when || now - get_when > STALE_NS) {
        return true;
    }
    return __atomic_load_n(&peer->get_ps, __ATOMIC_RELAXED) <
           __atomic_load_n(&peer->copy_ps, __ATOMIC_RELAXED);
}

/* A pipeline fragment of `bytes` about to be packed: leave the data for
 * the receiver to pull (single copy) instead? A fragment below
 * cma_min_size is the tail of a message, or all of a small one: to a far
 * receiver it goes as a small message would by RGET. */
bool mca_btl_smcuda_path_pull(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep, size_t bytes)
{
    const mca_btl_smcuda_component_t *c = &mca_btl_smcuda_component;

    if (0 == c->pull_fragments || NULL == m->pull_buf || NULL == ep || !ep->copy_ok) {
        return false;
    }
    if (2 == c->pull_fragments) {
        return true;
    }
    if (bytes >= c->cma_min_size) {
        return measured_single(ep);
    }
    /* as for whole messages (mca_btl_smcuda_path_single): below
     * cma_min_size the figures do not apply, a single copy's fixed costs
     * do (a 4 KiB pull streams at 3 GB/s where the pipeline does 7) */
    if (far_cached(ep)) {
        smcuda_pv_add(SMCUDA_PV_FAR_SINGLE, 1);
        return true;
    }
    return false;
}

bool mca_btl_smcuda_path_single(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep,
                                size_t size)
{
    const mca_btl_smcuda_component_t *c = &mca_btl_smcuda_component;
    bool two_way = m->rx_bulk > 0; /* receiving a stream too */
    bool single;

    m->rx_bulk = 0;
    if (size < c->cma_min_size) {
        /* the copy path moves each cache line across twice, single copy
         * once plus a rendezvous: where lines are dear the latter wins */
        single = far_cached(ep);
        if (single) {
            smcuda_pv_add(SMCUDA_PV_FAR_SINGLE, 1);
        }
        return single;
    }
    if (size >= c->busy_limit || 0 == m->remote_regs || two_way) {
        return true;
    }
    single = c->path_adapt && measured_single(ep);
    smcuda_pv_add(single ? SMCUDA_PV_STREAM_SINGLE : SMCUDA_PV_STREAM_COPY, 1);
    return single;
}

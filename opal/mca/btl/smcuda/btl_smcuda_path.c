/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_path.c - what this BTL measures of its two ways of moving a
 * large message (the copy path: send/recv fragments; single copy:
 * btl_put/btl_get), published per peer as hints (common_ob1x_hints.h) for
 * the upper layer, which chooses the way of each message. The BTL itself
 * chooses nothing: it accepts every registration and every fragment is a
 * plain copy.
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
 * sender's copy-in, the hand-offs and our copy-out), and the pace at which
 * its single-copy gets complete in a run (helper, control messages and
 * matching included). A sender reads them from the receiver's header.
 * The pace of a run is the median of its intervals, each arrival's bytes
 * over the time since the one before: a stream that pauses now and then
 * (an application that waits for its windows, the rendezvous of the next
 * message) would otherwise lend the copy path the pauses' time and make
 * single copy look the faster one where the pipeline is several times
 * faster (seen: 16 KiB windows at a quarter of the pipeline's rate).
 * A figure older than STALE_NS is published as not fresh: it is measured
 * again only if messages take its way.
 *
 * Far receivers. Below cma_min_size the copy path wins where the cores
 * share a cache (8 KiB ping-pong: 1.4 us against 2.5 by single copy) and
 * loses where they do not (5.3 us against 2.8; 16 KiB 6.9 against 3.5):
 * it moves each cache line across twice, and each crossing costs what
 * handing one line over costs. The receiver measures that: one FIFO
 * fragment of 1 KiB or more in three carries the time of its push (the
 * send side, btl_smcuda_send.c), and the least delay to
 * its pop over 16 samples is published in the receiver's header (on this
 * machine 90-130 ns where the cores are near, 330-420 ns where they are
 * not; 260-270 ns on the Intel Xeon VM of 2026-11-27). Fragments within
 * the eager limit from SMCUDA_HANDOFF_MIN_BYTES up are sampled too: a 4-8
 * KiB message goes as two FIFO fragments within it, and before they were
 * sampled such messages never learnt that the receiver was far (6 KiB
 * ping-pong 1.84 us by the copy path there, 1.17 by single copy).
 * Only fragments pushed when the receiver had read all earlier ones,
 * and popped after an empty progress call, are samples: others measure a
 * queue or a busy receiver. A receiver is far when that figure is fresh
 * (HANDOFF_STALE_NS), at least far_handoff_ns (220) and below FAR_BUSY
 * times that; the sender reads the figure again every 256 hint reads. A
 * stale figure says "not far", so the upper layer takes the copy path,
 * whose sampled fragments measure it again.
 */
#include "btl_smcuda.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal/util/output.h"

#include "common_ob1x_hints.h"

#define STALE_NS 100000000ull /* 100 ms */
/* A far receiver is sent messages by single copy, which yields no more
 * samples; its figure is renewed by copy-path messages once it is this
 * old. */
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

/* Run r ends (full, cut by a pause, or by an arrival the other way): its
 * pace, the total time of its intervals over the bytes that arrived at
 * their ends, is folded into the figure at avg/when. The pace of a run
 * covers everything between two arrivals (for the copy path
 * the sender's copy-in, the hand-offs, each message's rendezvous and our
 * copy-out; for single copy the control messages, the matching and the
 * get itself) and the stream's pauses shorter than RUN_GAP_NS (a windowed
 * stream's turn between windows), as the stream pays them.
 *
 * A total, not the median of the intervals (as until 2026-11-27): the
 * intervals of one way vary by several times (a fragment drained right
 * after another, a message that arrives as fragments of 64 KiB and of
 * the rest), and the median of a 96 KiB stream's intervals was 70 or 160
 * ps/B by turns where its pace was 85; leaving out the intervals well
 * above the run's average (pauses) favoured the copy path, whose every
 * message waits for its rendezvous, where streams of gets were 10%
 * faster. A pause weighs less in a run of 16 intervals than it did in
 * the 8 of the first totals (one run of 8 fragments of 12 KiB in 46 us,
 * 462 ps/B against about 70 for steady runs, made single copy look
 * cheaper then). */
static void run_close(smcuda_run_t *r, uint32_t *avg, uint64_t *when, const char *way)
{
    uint64_t ps;

    /* n arrivals: n - 1 intervals. A run cut short by a pause or by the
     * other way still counts from SMCUDA_RUN_MIN intervals on, so that
     * windows of 9 to 16 messages are measured too. */
    if (r->n > SMCUDA_RUN_MIN) {
        /* The first runs of a job meet memory touched for the first time
         * (page faults on both sides): not the path's pace. */
        if (r->seen < WARM_RUNS) {
            r->seen++;
        } else {
            ps = (r->last - r->first) * 1000 / r->bytes + 1;
            note_ps(avg, when, ps, r->last);
            opal_output_verbose(30, mca_btl_smcuda_component.output,
                                "btl/smcuda: %s run of %u: %" PRIu64 " ps/B, figure %u", way,
                                r->n - 1, ps, *avg);
        }
    }
    r->n = 0;
}

/* One arrival of `bytes` at `now` on run r (the figure at avg/when). */
static void run_note(smcuda_run_t *r, size_t bytes, uint64_t now, uint32_t *avg, uint64_t *when,
                     const char *way)
{
    if (0 != r->n && now - r->last > RUN_GAP_NS) {
        run_close(r, avg, when, way);
    }
    if (0 == r->n) { /* the first arrival opens the run: its bytes came before */
        r->first = now;
        r->bytes = 0;
    } else {
        r->bytes += bytes; /* > 0: the callers' sizes */
    }
    r->last = now;
    if (++r->n > SMCUDA_RUN_FRAGS) {
        run_close(r, avg, when, way);
        r->n = 1; /* this arrival opens the next run */
        r->first = now;
        r->bytes = 0;
    }
}

/* The last get, not timed yet, completed by `now`. */
static void stamp_get(mca_btl_smcuda_module_t *m, uint64_t now)
{
    run_note(&m->get_run, m->get_unstamped, now, &m->hdr->get_ps, &m->hdr->get_when,
             "single-copy");
    m->get_unstamped = 0;
}

/* One of our single-copy gets of `bytes` is done and completed (for a
 * shared get whose helper is still copying: we have copied our last
 * chunk); called after the completion, so that its clock read is not on
 * the way to it. Only gets in a run are samples, and a run
 * is broken by any pipeline fragment that arrives (and a run of fragments
 * by any get). An isolated get says nothing of a stream's pace, and the
 * ones an upper layer sends this way while it favours the copy path (the
 * first message of each window) run while the data owner is still
 * posting the window's sends, so it does not help, and the window's copy
 * traffic competes with them: timed on their own they made single copy
 * look half as fast as a stream of gets moves (125 against 54 ps/B at
 * 384 KiB); with fragments between them, the intervals of a run
 * counted the fragments' work too (197 ps/B at 128 KiB, where a stream of
 * gets moved 100). The figure is published for streams from cma_min_size
 * up: a smaller get (a far receiver's) is no sample, whichever way (shared
 * or not) it went.
 *
 * The get's time is taken later: at the next progress pass that finds
 * nothing to do, or at the next get or pipeline fragment, whichever comes
 * first. Read here, the clock sat between the completion and whatever the
 * application does next (a ping-pong's reply: 64 KiB about 1% slower); a
 * stream's gets follow each other or an idle pass, so its intervals keep
 * their lengths (shifted by at most one get). */
void mca_btl_smcuda_path_get(mca_btl_smcuda_module_t *m, size_t bytes)
{
    if (bytes < mca_btl_smcuda_component.cma_min_size) {
        return;
    }
    /* a run is of one way only (above) */
    run_close(&m->copy_run, &m->hdr->copy_ps, &m->hdr->copy_when, "copy-path");
    if (0 != m->get_unstamped) {
        stamp_get(m, mca_btl_smcuda_now_ns()); /* the previous one: a busy stream */
    }
    m->get_unstamped = bytes;
}

/* A progress pass found nothing: the last get's time is now. */
void mca_btl_smcuda_path_idle(mca_btl_smcuda_module_t *m)
{
    stamp_get(m, mca_btl_smcuda_now_ns());
}

/* A pipeline fragment arrives. The copy path's speed is the pace of such
 * fragments in a run (run_note). */
uint64_t mca_btl_smcuda_path_fragment(mca_btl_smcuda_module_t *m, size_t bytes)
{
    uint64_t now = mca_btl_smcuda_now_ns();

    if (0 != m->get_unstamped) {
        stamp_get(m, now); /* it ends the run of gets it is in */
    }
    run_close(&m->get_run, &m->hdr->get_ps, &m->hdr->get_when, "single-copy");
    run_note(&m->copy_run, bytes, now, &m->hdr->copy_ps, &m->hdr->copy_when, "copy-path");
    return now;
}

/* A sampled fragment, pushed at `stamp` (the sender's clock, low 32 bits),
 * was popped now. The least of SMCUDA_HANDOFF_SAMPLES such
 * delays is published: the receiving loop's own delay and the sender being
 * descheduled only ever add to it. */
void mca_btl_smcuda_path_handoff(mca_btl_smcuda_module_t *m, uint32_t stamp, uint64_t now)
{
    uint32_t d = (uint32_t) now - stamp;

    if (d > 1000000u) {
        return; /* a millisecond: not a hand-off (or the clock wrapped) */
    }
    smcuda_pv_add(SMCUDA_PV_HANDOFF_SAMPLES, 1);
    if (0 == m->ho_n++ || d < m->ho_min) {
        m->ho_min = d;
    }
    if (m->ho_n == SMCUDA_HANDOFF_SAMPLES) {
        mca_btl_smcuda_component.pv[SMCUDA_PV_HANDOFF_NS] = m->ho_min;
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
 * copy path is the upper layer's way, and its sampled fragments measure
 * the figure again. */
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

/* peer_far(), read again every FAR_RECHECK hint reads: reading the clock
 * and the peer's header line for every message would cost a few percent
 * of an 8 KiB message (the line may even be in the other core's cache). */
#define FAR_RECHECK 256

/* Reads the peer's figure into ep->far and sets the ring limit that
 * follows from it (below). The hints' countdown and the ring sends' one
 * both end here, so that the two read one answer. The hints' read holds
 * no lock: a sender reads either limit, both within the ring's own. */
static void far_refresh(mca_btl_base_endpoint_t *ep)
{
    uint32_t far_max = mca_btl_smcuda_component.fbox_far_max_size;

    ep->far = 0 == mca_btl_smcuda_component.far_handoff_ns || peer_far(ep);
    ep->out_max = ep->far && far_max < ep->out_max_near ? far_max : ep->out_max_near;
}

static bool far_cached(mca_btl_base_endpoint_t *ep)
{
    if (0 == ep->far_left) {
        far_refresh(ep);
        ep->far_left = FAR_RECHECK;
    }
    ep->far_left--;
    return ep->far;
}

/* The largest message for ep's ring (smcuda_ring_max). To a far peer a
 * record of many lines goes by a FIFO fragment instead: the reader of a
 * ring polls the record the writer is filling and its reads run right
 * behind the writes, where every line that crosses costs a hand-off.
 * Windows of 1 KiB messages on the Intel Xeon VM of 2026-11-27 (far
 * cores): 4.8 against 2.6 million messages/s and 4.8 against 2.7 GB/s by
 * FIFO fragments, latency level; 768 B mixed (rate +16%, latency +2%),
 * 512 B better by the ring (5.9 against 4.3). Where the cores share a
 * cache the ring is the faster way at every size it takes. */
void mca_btl_smcuda_ring_limit(mca_btl_base_endpoint_t *ep)
{
    far_refresh(ep);
    ep->ring_left = SMCUDA_RING_RECHECK;
}

/* The receiver's figure at `avg`, measured at `*when`: fresh when measured
 * within STALE_NS of `now`. */
static bool figure(const uint32_t *avg, const uint64_t *when, uint64_t now, uint32_t *ps)
{
    uint64_t t = __atomic_load_n(when, __ATOMIC_RELAXED);

    *ps = __atomic_load_n(avg, __ATOMIC_RELAXED);
    return 0 != t && now - t <= STALE_NS && 0 != *ps;
}

/* The receiver's measured figures. Read only where a rule can compare
 * them (a one-way stream to a near peer, single_min up to busy_limit,
 * adapt on): elsewhere they are left "not fresh" and the clock is not
 * read. */
static void read_figures(const mca_btl_base_endpoint_t *ep, ob1x_btl_hints_t *out)
{
    const smcuda_seg_hdr_t *peer = (const smcuda_seg_hdr_t *) ep->seg;
    uint64_t now;

    if (NULL == peer) {
        return; /* a departed guest: nothing measured */
    }
    now = mca_btl_smcuda_now_ns();
    out->copy_fresh = figure(&peer->copy_ps, &peer->copy_when, now, &out->copy_ps);
    out->single_fresh = figure(&peer->get_ps, &peer->get_when, now, &out->single_ps);
}

/* The hints of module `btl` for `size` bytes to `ep` (ob1x_btl_hints_fn_t).
 * `two_way` says whether this process received a bulk transfer (a
 * pipeline fragment or a get) since the previous read, `two_way_recent`
 * whether it did within the last SMCUDA_TWO_WAY_READS reads, as a stream
 * in the other direction does. */
static bool smcuda_hints(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                         size_t size, bool stream, ob1x_btl_hints_t *out)
{
    mca_btl_smcuda_module_t *m = (mca_btl_smcuda_module_t *) btl;
    const mca_btl_smcuda_component_t *c = &mca_btl_smcuda_component;

    if (NULL == m->copy || NULL == ep || MCA_BTL_ENDPOINT_ANY == ep || ep->self || !ep->copy_ok) {
        return false; /* no single copy to this peer: nothing to weigh */
    }
    memset(out, 0, sizeof(*out));
    out->single_min = c->cma_min_size;
    out->busy_limit = c->busy_limit;
    out->adapt = c->path_adapt;
    out->far = far_cached(ep);
    out->two_way = 0 != m->rx_bulk;
    if (out->two_way) {
        m->rx_bulk = 0;
        m->rx_recent = SMCUDA_TWO_WAY_READS;
    } else if (m->rx_recent > 0) {
        m->rx_recent--;
    }
    out->two_way_recent = 0 != m->rx_recent;
    if (stream && out->adapt && !out->far && !out->two_way && size >= out->single_min &&
        size < out->busy_limit) {
        read_figures(ep, out);
    }
    return true;
}

int mca_btl_smcuda_hints_register(mca_btl_smcuda_module_t *m)
{
    if (0 != ob1x_btl_hints_register(&m->super, smcuda_hints)) {
        return -1;
    }
    /* our handles only name an address range (single copy reads the peer's
     * memory in place): registering pins nothing, and the local side of a
     * put or get needs none. Not said through the BTL's own
     * btl_{get,put}_local_registration_threshold: with those raised, stock
     * osc/rdma 4.1 over smcuda dies of a call through a NULL pointer
     * (btl.smcuda.osc*). */
    if (SMCUDA_HOST_HANDLE_SIZE < sizeof(mca_btl_base_registration_handle_t) &&
        0 != ob1x_btl_device_handle_size_set(&m->super,
                                             sizeof(mca_btl_base_registration_handle_t))) {
        return -1;
    }
    return ob1x_btl_props_set(&m->super,
                              OB1X_BTL_PROP_REG_FREE | OB1X_BTL_PROP_LOCAL_FREE |
                                  OB1X_BTL_PROP_HOST_FREE | OB1X_BTL_PROP_GET_SOLO |
                                  (NULL != m->super.btl_get ? mca_btl_smcuda_cuda_props() : 0));
}

void mca_btl_smcuda_hints_deregister(mca_btl_smcuda_module_t *m)
{
    ob1x_btl_hints_deregister(&m->super);
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_recv.c - receive side and the progress function: poll the
 * rings of the peers that have started using them, then the FIFO; deliver
 * in per-pair sequence order; then whatever else waits (sends to complete
 * or retry, shared copies, atomic replies).
 *
 * Ordering argument: a sender takes sequence numbers in program order and
 * publishes each message with a release store.  When we pop a FIFO fragment
 * with sequence s while expecting e < s, messages e..s-1 went through the
 * ring before the fragment was pushed, so (acquire on the FIFO slot) they
 * are visible in the ring now and are delivered first.  When a ring record
 * carries a sequence ahead of the expected one, the missing message is a
 * FIFO fragment not popped yet; the ring waits for it.
 */
#include "btl_smcuda.h"
#include "btl_smcuda_fbox.h"
#include "btl_smcuda_fifo.h"
#include "btl_smcuda_ipc.h"

#include <string.h>

#define SMCUDA_FIFO_BUDGET 32 /* fragments handled per progress call */

static inline void deliver(mca_btl_smcuda_module_t *m, mca_btl_base_tag_t tag, void *payload,
                           uint32_t len)
{
    const mca_btl_active_message_callback_t *reg = mca_btl_base_active_message_trigger + tag;

    m->rseg.seg_addr.pval = payload;
    m->rseg.seg_len = len;
    m->rdesc.des_segments = &m->rseg;
    m->rdesc.des_segment_count = 1;
    reg->cbfunc(&m->super, tag, &m->rdesc, reg->cbdata);
}

/* Our own control messages: the first word says which kind. */
void mca_btl_smcuda_ctl_cb(struct mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                           mca_btl_base_descriptor_t *des, void *cbdata)
{
    mca_btl_smcuda_module_t *m = (mca_btl_smcuda_module_t *) cbdata;
    const void *msg = des->des_segments[0].seg_addr.pval;
    size_t len = des->des_segments[0].seg_len;
    uint32_t kind;

    (void) btl;
    (void) tag;
    if (len < sizeof(kind)) {
        return;
    }
    memcpy(&kind, msg, sizeof(kind));
    switch (kind) {
        case SMCUDA_CTL_COPY_REQ:
            mca_btl_smcuda_copy_req(m, msg, len);
            break;
        case SMCUDA_CTL_AMO:
        case SMCUDA_CTL_AMO_REPLY:
            mca_btl_smcuda_atomic_msg(m, msg, len);
            break;
        case SMCUDA_IPC_MSG_REQ:
        case SMCUDA_IPC_MSG_ACK:
        case SMCUDA_IPC_MSG_NAK:
        case SMCUDA_IPC_MSG_NOTREADY:
            mca_btl_smcuda_cuda_ctl(m, msg, len);
            break;
        default:
            mca_btl_smcuda_report_corruption("control message kind", -1);
    }
}

/* Delivers ring records of `ep` in order.  With `until`, stops once the
 * expected sequence number reaches `target`. */
static int drain_ring(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep, bool until,
                      uint16_t target)
{
    uint64_t *kept = NULL; /* header word of the record before, left alone */
    int n = 0;

    while (!until || ep->recv_seq != target) {
        uint64_t w = smcuda_fbox_peek(ep);
        uint32_t len;

        if (0 == w || SMCUDA_FBOX_W_SEQ(w) != ep->recv_seq) {
            break;
        }
        if (NULL != kept) {
            smcuda_fbox_hand_back(kept); /* records pile up */
        }
        len = SMCUDA_FBOX_W_LEN(w);
        deliver(m, SMCUDA_FBOX_W_TAG(w), smcuda_fbox_payload(ep), len);
        kept = smcuda_fbox_consume(ep, len);
        ep->recv_seq++;
        ++n;
    }
    if (n > 0) {
        smcuda_fbox_release(ep);
        __atomic_store_n(&ep->answering, true, __ATOMIC_RELAXED);
    }
    return n;
}

void mca_btl_smcuda_poll_ring_add(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep)
{
    for (int i = 0; i < m->n_polled; ++i) {
        if (m->polled[i] == ep) {
            return;
        }
    }
    m->polled[m->n_polled++] = ep;
}

/* A sender started using its ring to us: find which (rare, out of line). */
void mca_btl_smcuda_poll_rings_update(mca_btl_smcuda_module_t *m)
{
    /* acquire: pairs with the senders' release; their `active` flags are
     * visible */
    m->ring_epoch = __atomic_load_n(&m->hdr->ring_epoch, __ATOMIC_ACQUIRE);
    for (int i = 0; i < m->n_local; ++i) {
        mca_btl_base_endpoint_t *ep = m->eps[i];
        if (NULL != ep && NULL != ep->in_ring &&
            __atomic_load_n(&ep->in_ctl->active, __ATOMIC_RELAXED)) {
            mca_btl_smcuda_poll_ring_add(m, ep);
        }
    }
}

static int handle_frag(mca_btl_smcuda_module_t *m, uint64_t ref)
{
    int lrank = SMCUDA_FIFO_REF_LRANK(ref);
    mca_btl_base_endpoint_t *ep = smcuda_ep_by_id(m, lrank);
    smcuda_frag_hdr_t *hdr;
    uint64_t now = 0; /* read once for a pipeline fragment */
    int n = 1;

    if (SMCUDA_UNLIKELY(NULL == ep || SMCUDA_FIFO_REF_OFF(ref) + sizeof(*hdr) > ep->seg_size)) {
        mca_btl_smcuda_report_corruption("fragment from unknown peer", lrank);
        return 0;
    }
    hdr = (smcuda_frag_hdr_t *) (ep->seg + SMCUDA_FIFO_REF_OFF(ref));
    if (SMCUDA_UNLIKELY(SMCUDA_FIFO_REF_OFF(ref) + sizeof(*hdr) + hdr->len > ep->seg_size)) {
        mca_btl_smcuda_report_corruption("fragment length", lrank);
        return 0;
    }
    if (SMCUDA_UNLIKELY(hdr->seq != ep->recv_seq)) {
        if (NULL != ep->in_ring) {
            n += drain_ring(m, ep, true, hdr->seq);
        }
        if (hdr->seq != ep->recv_seq) {
            mca_btl_smcuda_report_corruption("sequence", lrank);
            ep->recv_seq = hdr->seq;
        }
    }
    if (hdr->len > m->super.btl_eager_limit) {
        m->rx_bulk++; /* a pipeline fragment: someone streams to us */
        now = mca_btl_smcuda_path_fragment(m, hdr->len);
    }
    if (SMCUDA_UNLIKELY(0 != hdr->stamp) && m->was_idle) {
        /* stamped, above the eager limit or within it (4-8 KiB messages) */
        mca_btl_smcuda_path_handoff(m, hdr->stamp, 0 != now ? now : mca_btl_smcuda_now_ns());
    }
    deliver(m, hdr->tag, hdr + 1, hdr->len);
    ep->recv_seq++;
    /* release: our reads of the fragment are complete before the sender
     * sees it done and reuses it */
    __atomic_store_n(&hdr->complete, 1, __ATOMIC_RELEASE);
    return n;
}

static int poll(mca_btl_smcuda_module_t *m)
{
    uint64_t ref;
    int n = 0;

    if (SMCUDA_UNLIKELY(__atomic_load_n(&m->hdr->ring_epoch, __ATOMIC_RELAXED) != m->ring_epoch)) {
        mca_btl_smcuda_poll_rings_update(m);
    }
    for (int i = 0; i < m->n_polled; ++i) {
        n += drain_ring(m, m->polled[i], false, 0);
    }
    for (int budget = SMCUDA_FIFO_BUDGET;
         budget > 0 && smcuda_fifo_pop(m->fifo, m->fifo_mask, &m->fifo_head, &ref); --budget) {
        n += handle_frag(m, ref);
    }
    return n;
}

/* Whether only the rings can need us: no new ring to poll, no FIFO
 * fragment, no deferred work, no progress call below us. The common state
 * of a waiting process, checked with loads only (relaxed: a fragment that
 * just arrived is seen by the next call). */
static inline bool rings_only(mca_btl_smcuda_module_t *m)
{
    return __atomic_load_n(&m->hdr->ring_epoch, __ATOMIC_RELAXED) == m->ring_epoch &&
           !smcuda_fifo_ready(m->fifo, m->fifo_mask, m->fifo_head) && 0 == m->inflight &&
           0 == m->jobs_busy && 0 == m->accel_busy && 0 == m->in_progress &&
           opal_list_is_empty(&m->done) && opal_list_is_empty(&m->pending_eps) &&
           opal_list_is_empty(&m->amo_backlog);
}

/* The end of a progress pass that handled n events. */
static inline void note_idle(mca_btl_smcuda_module_t *m, int n)
{
    m->idle = 0 == n;
    if (SMCUDA_UNLIKELY(0 != m->get_unstamped) && 0 == n) {
        mca_btl_smcuda_path_idle(m); /* the last get's time, now that it costs nothing */
    }
}

static __opal_attribute_noinline__ int progress_busy(mca_btl_smcuda_module_t *m)
{
    int n;

    /* a callback may re-enter opal_progress; and with threads only one
     * thread drains the FIFO (it is single-consumer) */
    if (opal_using_threads()) {
        if (0 != __atomic_exchange_n(&m->in_progress, 1, __ATOMIC_ACQUIRE)) {
            return 0;
        }
    } else if (m->in_progress) {
        return 0;
    } else {
        m->in_progress = 1;
    }
    m->was_idle = m->idle;
    n = poll(m);
    if (m->inflight) {
        n += mca_btl_smcuda_reap(m);
    }
    if (SMCUDA_UNLIKELY(0 != m->jobs_busy)) {
        n += mca_btl_smcuda_jobs_progress(m);
    }
    if (SMCUDA_UNLIKELY(0 != m->accel_busy)) {
        n += mca_btl_smcuda_cuda_progress(m);
    }
    if (SMCUDA_UNLIKELY(!opal_list_is_empty(&m->done))) {
        n += mca_btl_smcuda_complete_done(m);
    }
    if (SMCUDA_UNLIKELY(!opal_list_is_empty(&m->pending_eps))) {
        n += mca_btl_smcuda_retry_pending(m);
    }
    if (SMCUDA_UNLIKELY(!opal_list_is_empty(&m->amo_backlog))) {
        n += mca_btl_smcuda_atomic_backlog(m);
    }
    note_idle(m, n);
    __atomic_store_n(&m->in_progress, 0, __ATOMIC_RELEASE);
    return n;
}

int mca_btl_smcuda_progress(void)
{
    mca_btl_smcuda_module_t *m = &mca_btl_smcuda;

    if (SMCUDA_UNLIKELY(NULL == m->seg)) {
        return 0;
    }
    /* the common case, without the guarded pass: nothing or a ring record
     * (with threads another thread may be changing what this reads) */
    if (SMCUDA_LIKELY(!opal_using_threads()) && rings_only(m)) {
        int n = 0;
        for (int i = 0; i < m->n_polled; ++i) {
            mca_btl_base_endpoint_t *ep = m->polled[i];
            if (smcuda_fbox_pending(ep)) {
                m->in_progress = 1; /* a callback may re-enter progress */
                n += drain_ring(m, ep, false, 0);
                m->in_progress = 0;
            }
        }
        note_idle(m, n);
        return n;
    }
    return progress_busy(m);
}

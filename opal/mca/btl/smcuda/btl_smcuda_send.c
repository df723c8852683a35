/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_send.c - btl_send, the flow-control queue, and completion of
 * fragments.
 *
 * Paths: a message of at most fbox_max_size bytes is copied into the peer's
 * ring when there is room; otherwise the fragment itself is pushed into the
 * peer's FIFO; when neither is possible it is queued on the endpoint and
 * retried from progress (counted in flow_control_stalls).
 *
 * Order: every message to a peer, ring or FIFO, takes the next per-pair
 * sequence number; the receiver delivers in that order (btl_smcuda_recv.c).
 * Once one fragment to a peer is queued, every later message to that peer
 * queues behind it, so the queue never reorders either.
 *
 * Completion: a fragment sent through a ring is done at once (its callback,
 * if one is due, runs from progress); a FIFO fragment is done when the
 * receiver has stored `complete` in its header.
 */
#include "btl_smcuda.h"
#include "btl_smcuda_fbox.h"
#include "btl_smcuda_fifo.h"
#include "btl_smcuda_frag.h"

#include <string.h>

/* The in-flight total spans endpoints, so it is shared between threads
 * that hold different endpoint locks. */
static inline void inflight_add(mca_btl_smcuda_module_t *m, long delta)
{
    if (opal_using_threads()) {
        __atomic_add_fetch(&m->inflight, (size_t) delta, __ATOMIC_RELAXED);
    } else {
        m->inflight += (size_t) delta;
    }
}

/* Whether the peer has read every fragment we pushed to it: only then does
 * a fragment's push-to-pop delay measure the hand-off, not a queue (in a
 * stream it waits behind the others, and would make a near peer look far). */
static inline bool caught_up(mca_btl_base_endpoint_t *ep)
{
    mca_btl_smcuda_frag_t *last = (mca_btl_smcuda_frag_t *) opal_list_get_last(&ep->inflight);

    return &last->base.super.super == opal_list_get_end(&ep->inflight) ||
           0 != __atomic_load_n(&last->hdr->complete, __ATOMIC_RELAXED);
}

/* Pushes a fragment into the peer's FIFO; false when the FIFO is full.
 * Caller holds ep->lock. */
static inline bool push_frag(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep,
                             mca_btl_smcuda_frag_t *frag)
{
    smcuda_frag_hdr_t *hdr = frag->hdr;

    hdr->len = (uint32_t) frag->segment.seg_len;
    hdr->tag = frag->tag;
    hdr->flags = 0;
    hdr->seq = ep->send_seq;
    hdr->complete = 0;
    hdr->stamp = 0;
    /* one fragment in three of a kilobyte or more carries its push time:
     * the receiver measures how far away we are (btl_smcuda_path.c). In
     * three, not four: a message of two fragments (4-8 KiB) then has its
     * first one stamped every other time; its second one follows the
     * receiver's answer, often before the receiver has marked the first
     * one done, and is no sample then (caught_up) */
    if (SMCUDA_UNLIKELY(hdr->len >= SMCUDA_HANDOFF_MIN_BYTES) && 0 == ++ep->ho_tick % 3 &&
        caught_up(ep)) {
        hdr->stamp = (uint32_t) mca_btl_smcuda_now_ns() | 1u;
    }
    /* the push's release orders the header and payload stores before it */
    if (SMCUDA_UNLIKELY(
            !smcuda_fifo_push(ep->fifo, ep->fifo_mask, SMCUDA_FIFO_REF(ep->ref_id, frag->off)))) {
        return false;
    }
    ep->send_seq++;
    opal_list_append(&ep->inflight, &frag->base.super.super);
    inflight_add(m, 1);
    SMCUDA_PV_ADD(FIFO, hdr->len);
    return true;
}

/* Copies a fragment into the peer's ring; false when the ring lacks room.
 * Caller holds ep->lock. */
static inline bool ring_frag(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep,
                             mca_btl_smcuda_frag_t *frag)
{
    uint32_t len = (uint32_t) frag->segment.seg_len;
    unsigned char *dst = smcuda_fbox_reserve(ep, len);

    if (SMCUDA_UNLIKELY(NULL == dst)) {
        return false;
    }
    memcpy(dst, frag->segment.seg_addr.pval, len);
    smcuda_fbox_publish(ep, len, frag->tag, ep->send_seq++);
    SMCUDA_PV_ADD(FBOX, len);
    if (frag->need_cb) {
        OPAL_THREAD_LOCK(&m->lock);
        opal_list_append(&m->done, &frag->base.super.super);
        OPAL_THREAD_UNLOCK(&m->lock);
    } else if (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
        mca_btl_smcuda_frag_return(frag);
    }
    return true;
}

/* Whether the fragment goes through the ring. A private one can go no
 * other way: the ring's own limit, not the far peer's (that may have come
 * since it was allocated). */
static inline bool ring_ok(mca_btl_base_endpoint_t *ep, mca_btl_smcuda_frag_t *frag)
{
    uint32_t max = frag->priv ? ep->out_max_near : smcuda_ring_max(ep);

    return frag->segment.seg_len <= max && NULL != ep->out_ring;
}

/* Queues a fragment behind the ones already waiting. Caller holds ep->lock. */
static void queue_frag(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep,
                       mca_btl_smcuda_frag_t *frag)
{
    opal_list_append(&ep->pending, &frag->base.super.super);
    smcuda_pv_add(SMCUDA_PV_FLOW_CONTROL_STALLS, 1);
    if (!ep->on_pending_list) {
        ep->on_pending_list = true;
        OPAL_THREAD_LOCK(&m->lock);
        opal_list_append(&m->pending_eps, &ep->super);
        OPAL_THREAD_UNLOCK(&m->lock);
    }
}

/* Sends a fragment by ring or FIFO, or queues it. Caller holds ep->lock. */
int mca_btl_smcuda_frag_start(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep,
                              mca_btl_smcuda_frag_t *frag)
{
    if (SMCUDA_LIKELY(opal_list_is_empty(&ep->pending))) {
        if (ring_ok(ep, frag) && ring_frag(m, ep, frag)) {
            return OPAL_SUCCESS;
        }
        if (!frag->priv && push_frag(m, ep, frag)) {
            return OPAL_SUCCESS;
        }
    }
    queue_frag(m, ep, frag);
    return OPAL_SUCCESS;
}

int mca_btl_smcuda_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                        struct mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag)
{
    mca_btl_smcuda_module_t *m = (mca_btl_smcuda_module_t *) btl;
    mca_btl_smcuda_frag_t *frag = (mca_btl_smcuda_frag_t *) des;
    uint32_t flags = des->des_flags;
    bool need_cb =
        (flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK) || !(flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP);

    if (SMCUDA_UNLIKELY(ep->self)) {
        return mca_btl_smcuda_self_send(m, frag, tag);
    }
    frag->tag = tag;
    frag->need_cb = need_cb;
    OPAL_THREAD_LOCK(&ep->lock);
    (void) mca_btl_smcuda_frag_start(m, ep, frag);
    OPAL_THREAD_UNLOCK(&ep->lock);
    /* the data is in shared memory (or queued with its own copy): complete
     * now unless a callback is due */
    return need_cb ? OPAL_SUCCESS : 1;
}

/* Runs the upper layer's completion and releases a fragment. */
static void frag_done(mca_btl_smcuda_module_t *m, mca_btl_smcuda_frag_t *frag)
{
    if (frag->need_cb && NULL != frag->base.des_cbfunc) {
        frag->base.des_cbfunc(&m->super, frag->ep, &frag->base, OPAL_SUCCESS);
    }
    if (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
        mca_btl_smcuda_frag_return(frag);
    }
}

/* Completions of ring sends that owe the upper layer a callback. */
int mca_btl_smcuda_complete_done(mca_btl_smcuda_module_t *m)
{
    int n = 0;

    for (;;) {
        mca_btl_smcuda_frag_t *frag;
        OPAL_THREAD_LOCK(&m->lock);
        frag = (mca_btl_smcuda_frag_t *) opal_list_remove_first(&m->done);
        OPAL_THREAD_UNLOCK(&m->lock);
        if (NULL == frag) {
            return n;
        }
        frag_done(m, frag);
        ++n;
    }
}

/* Completes ep's FIFO fragments whose receiver has stored `complete`; they
 * complete in push order, so only the list's head needs checking. */
int mca_btl_smcuda_reap_peer(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep)
{
    int n = 0;

    if (NULL == ep || opal_list_is_empty(&ep->inflight)) {
        return 0;
    }
    for (;;) {
        mca_btl_smcuda_frag_t *frag;
        OPAL_THREAD_LOCK(&ep->lock);
        frag = (mca_btl_smcuda_frag_t *) opal_list_get_first(&ep->inflight);
        /* acquire: the receiver's reads of the fragment are complete
         * before we reuse it */
        if (&frag->base.super.super == opal_list_get_end(&ep->inflight) ||
            0 == __atomic_load_n(&frag->hdr->complete, __ATOMIC_ACQUIRE)) {
            OPAL_THREAD_UNLOCK(&ep->lock);
            return n;
        }
        opal_list_remove_first(&ep->inflight);
        inflight_add(m, -1);
        OPAL_THREAD_UNLOCK(&ep->lock);
        frag_done(m, frag); /* without the lock: the callback may send */
        ++n;
    }
}

/* Completes FIFO fragments of every peer, local ranks first, then guests. */
int mca_btl_smcuda_reap(mca_btl_smcuda_module_t *m)
{
    /* acquire: pairs with guest_new's release; the slots below it are set */
    int guests = __atomic_load_n(&m->n_guest_eps, __ATOMIC_ACQUIRE);
    int n = 0;

    for (int i = 0; i < m->n_local && m->inflight; ++i) {
        n += mca_btl_smcuda_reap_peer(m, m->eps[i]);
    }
    for (int i = 0; i < guests && m->inflight; ++i) {
        n += mca_btl_smcuda_reap_peer(m, m->guest_eps[i]);
    }
    return n;
}

/* Sends as many queued fragments of one peer as fit, oldest first.
 * Caller holds ep->lock. */
static int drain_pending(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep)
{
    int n = 0;

    while (!opal_list_is_empty(&ep->pending)) {
        mca_btl_smcuda_frag_t *frag = (mca_btl_smcuda_frag_t *) opal_list_get_first(&ep->pending);
        bool sent;

        opal_list_remove_first(&ep->pending);
        sent = (ring_ok(ep, frag) && ring_frag(m, ep, frag)) ||
               (!frag->priv && push_frag(m, ep, frag));
        if (!sent) {
            opal_list_prepend(&ep->pending, &frag->base.super.super);
            break;
        }
        ++n;
    }
    return n;
}

/* Retries queued fragments, per peer. */
int mca_btl_smcuda_retry_pending(mca_btl_smcuda_module_t *m)
{
    size_t count;
    int n = 0;

    OPAL_THREAD_LOCK(&m->lock);
    count = opal_list_get_size(&m->pending_eps);
    OPAL_THREAD_UNLOCK(&m->lock);
    while (count--) {
        mca_btl_base_endpoint_t *ep;
        OPAL_THREAD_LOCK(&m->lock);
        ep = (mca_btl_base_endpoint_t *) opal_list_remove_first(&m->pending_eps);
        OPAL_THREAD_UNLOCK(&m->lock);
        if (NULL == ep) {
            break;
        }
        OPAL_THREAD_LOCK(&ep->lock);
        ep->on_pending_list = false;
        n += drain_pending(m, ep);
        if (!opal_list_is_empty(&ep->pending)) {
            ep->on_pending_list = true;
            OPAL_THREAD_LOCK(&m->lock);
            opal_list_append(&m->pending_eps, &ep->super);
            OPAL_THREAD_UNLOCK(&m->lock);
        }
        OPAL_THREAD_UNLOCK(&ep->lock);
    }
    return n;
}

/* Internal control message through the ring only; false when it does not
 * fit now (the caller does without). */
bool mca_btl_smcuda_ring_send_ctl(mca_btl_base_endpoint_t *ep, mca_btl_base_tag_t tag,
                                  const void *data, uint32_t len)
{
    bool ok = false;

    OPAL_THREAD_LOCK(&ep->lock);
    if (NULL != ep->out_ring && opal_list_is_empty(&ep->pending)) {
        unsigned char *dst = smcuda_fbox_reserve(ep, len);
        if (NULL != dst) {
            memcpy(dst, data, len);
            smcuda_fbox_publish(ep, len, tag, ep->send_seq++);
            ok = true;
        }
    }
    OPAL_THREAD_UNLOCK(&ep->lock);
    return ok;
}

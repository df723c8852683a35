/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_send.c - btl_send, the flow-control queue, and completion of
 * fragments once their receiver is done with them.
 *
 * Order: every message to a peer, ring or FIFO, takes the next per-pair
 * sequence number; the receiver delivers in that order (btl_smcuda_recv.c).
 * Once one fragment to a peer is queued, every later message to that peer
 * queues behind it, so the queue never reorders either.
 */
#include "btl_smcuda.h"
#include "btl_smcuda_fbox.h"
#include "btl_smcuda_fifo.h"
#include "btl_smcuda_frag.h"

#include <string.h>

/* Pushes a fragment into the peer's FIFO; false when the FIFO is full.
 * Caller holds ep->lock. */
static inline bool push_frag(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep,
                             mca_btl_smcuda_frag_t *frag)
{
    smcuda_frag_hdr_t *hdr = frag->hdr;
    bool start = !ep->out_active && NULL != ep->out_ring;

    hdr->len = (uint32_t) frag->segment.seg_len;
    hdr->flags = start ? SMCUDA_HDR_FBOX_START : 0;
    hdr->seq = ep->send_seq;
    hdr->complete = 0;
    /* the push's release orders the header and payload stores before it */
    if (SMCUDA_UNLIKELY(!smcuda_fifo_push(ep->fifo, ep->fifo_mask,
                                          SMCUDA_FIFO_REF(m->my_lrank, frag->off)))) {
        return false;
    }
    ep->send_seq++;
    ep->out_active |= start;
    opal_list_append(&ep->inflight, &frag->base.super.super);
    m->inflight++;
    SMCUDA_PV_ADD(FIFO, hdr->len);
    return true;
}

/* Queues a fragment behind the ones already waiting. Caller holds ep->lock. */
static void queue_frag(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep,
                       mca_btl_smcuda_frag_t *frag)
{
    opal_list_append(&ep->pending, &frag->base.super.super);
    mca_btl_smcuda_component.pv[SMCUDA_PV_FLOW_CONTROL_STALLS]++;
    if (!ep->on_pending_list) {
        ep->on_pending_list = true;
        OPAL_THREAD_LOCK(&m->lock);
        opal_list_append(&m->pending_eps, &ep->super);
        OPAL_THREAD_UNLOCK(&m->lock);
    }
}

/* Starts a fragment through the FIFO, or queues it. Caller holds ep->lock. */
int mca_btl_smcuda_frag_start(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep,
                              mca_btl_smcuda_frag_t *frag)
{
    if (SMCUDA_LIKELY(opal_list_is_empty(&ep->pending)) && push_frag(m, ep, frag)) {
        return OPAL_SUCCESS;
    }
    queue_frag(m, ep, frag);
    return OPAL_SUCCESS;
}

int mca_btl_smcuda_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                        struct mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag)
{
    mca_btl_smcuda_module_t *m = (mca_btl_smcuda_module_t *) btl;
    mca_btl_smcuda_frag_t *frag = (mca_btl_smcuda_frag_t *) des;
    uint32_t len = (uint32_t) frag->segment.seg_len;
    uint32_t flags = des->des_flags;
    bool need_cb;

    frag->hdr->tag = tag;
    frag->need_cb = (flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK)
                    || !(flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP);
    OPAL_THREAD_LOCK(&ep->lock);
    /* small and nobody waiting for a callback: copy into the ring, done */
    if (len <= mca_btl_smcuda_component.fbox_max_size && ep->out_active
        && !(flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK) && opal_list_is_empty(&ep->pending)) {
        unsigned char *dst = smcuda_fbox_reserve(ep, len);
        if (NULL != dst) {
            memcpy(dst, frag->segment.seg_addr.pval, len);
            smcuda_fbox_publish(ep, len, tag, ep->send_seq++);
            OPAL_THREAD_UNLOCK(&ep->lock);
            SMCUDA_PV_ADD(FBOX, len);
            if (flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
                mca_btl_smcuda_frag_return(frag);
            }
            return 1;
        }
    }
    need_cb = frag->need_cb; /* frag may complete as soon as the lock drops */
    (void) mca_btl_smcuda_frag_start(m, ep, frag);
    OPAL_THREAD_UNLOCK(&ep->lock);
    /* the data is in shared memory: complete now unless a callback is due */
    return need_cb ? OPAL_SUCCESS : 1;
}

/* Runs the upper layer's completion and releases a fragment the receiver
 * is done with. */
static void frag_done(mca_btl_smcuda_module_t *m, mca_btl_smcuda_frag_t *frag)
{
    if (frag->need_cb && NULL != frag->base.des_cbfunc) {
        frag->base.des_cbfunc(&m->super, frag->ep, &frag->base, OPAL_SUCCESS);
    }
    if (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
        mca_btl_smcuda_frag_return(frag);
    }
}

/* Completes fragments whose receiver has stored `complete`; per peer they
 * complete in push order, so only each list's head needs checking. */
int mca_btl_smcuda_reap(mca_btl_smcuda_module_t *m)
{
    int n = 0;

    for (int i = 0; i < m->n_local && m->inflight; ++i) {
        mca_btl_base_endpoint_t *ep = m->eps[i];
        if (NULL == ep || opal_list_is_empty(&ep->inflight)) {
            continue;
        }
        for (;;) {
            mca_btl_smcuda_frag_t *frag;
            OPAL_THREAD_LOCK(&ep->lock);
            frag = (mca_btl_smcuda_frag_t *) opal_list_get_first(&ep->inflight);
            /* acquire: the receiver's reads of the fragment are complete
             * before we reuse it */
            if (&frag->base.super.super == opal_list_get_end(&ep->inflight)
                || 0 == __atomic_load_n(&frag->hdr->complete, __ATOMIC_ACQUIRE)) {
                OPAL_THREAD_UNLOCK(&ep->lock);
                break;
            }
            opal_list_remove_first(&ep->inflight);
            m->inflight--;
            OPAL_THREAD_UNLOCK(&ep->lock);
            frag_done(m, frag); /* without the lock: the callback may send */
            ++n;
        }
    }
    return n;
}

/* Retries queued fragments, oldest first, per peer. */
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
        while (!opal_list_is_empty(&ep->pending)) {
            mca_btl_smcuda_frag_t *frag = (mca_btl_smcuda_frag_t *) opal_list_get_first(
                &ep->pending);
            opal_list_remove_first(&ep->pending);
            if (!push_frag(m, ep, frag)) {
                opal_list_prepend(&ep->pending, &frag->base.super.super);
                break;
            }
            ++n;
        }
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

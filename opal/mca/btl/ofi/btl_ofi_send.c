/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_ofi_send.c - btl_alloc / free / prepare_src / send / sendi.
 *
 * Every message goes from the calling thread's context to the peer's
 * receive context 0. A message that fits the provider's inject size
 * leaves by fi_inject: no completion, no fragment held, and btl_send
 * says "done" (1) so the upper layer skips its callback. Larger ones
 * leave by fi_sendmsg from a fragment, asking only for transmit
 * completion (the endpoint's default, delivery completion, is for RMA:
 * a send's buffer is reusable once sent); the CQ entry then calls the
 * descriptor back and returns a BTL-owned fragment.
 *
 * -FI_EAGAIN is back-pressure, not an error: the call is refused with
 * OPAL_ERR_OUT_OF_RESOURCE and the upper layer queues and retries from
 * progress, which reads the CQ and so frees the provider's queues.
 */
#include "btl_ofi_frag.h"

#include "opal/util/output.h"

#include "common_ob1x_convertor.h"

/* The largest message built on the stack for fi_inject. */
#define MCA_BTL_OFI_INJECT_MAX 4096

static inline size_t inject_limit(const mca_btl_ofi_twosided_t *ts)
{
    return ts->inject_size < MCA_BTL_OFI_INJECT_MAX ? ts->inject_size : MCA_BTL_OFI_INJECT_MAX;
}

static int refused(mca_btl_ofi_module_t *m, ssize_t rc, const char *call)
{
    if (OFI_LIKELY(-FI_EAGAIN == rc)) {
        mca_btl_ofi_pv_add(m, OFI_PV_EAGAIN_RETRIES, 1);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    opal_output_verbose(1, mca_btl_ofi_component.output, "btl/ofi: %s: %s: %s", m->nic_name, call,
                        fi_strerror((int) -rc));
    return OPAL_ERROR;
}

static inline void count_send(mca_btl_ofi_module_t *m, size_t wire, bool injected)
{
    mca_btl_ofi_pv_add(m, OFI_PV_SEND_OPS, 1);
    mca_btl_ofi_pv_add(m, OFI_PV_SEND_BYTES, wire);
    if (injected) {
        mca_btl_ofi_pv_add(m, OFI_PV_INJECT_OPS, 1);
    }
}

/* fi_inject of `len` bytes at buf to ep's receive context 0. */
static inline ssize_t inject(mca_btl_ofi_module_t *m, mca_btl_ofi_endpoint_t *ep, const void *buf,
                             size_t len)
{
    mca_btl_ofi_context_t *ctx = mca_btl_ofi_context_get(m);
    ssize_t rc;

    mca_btl_ofi_ctx_lock(ctx);
    rc = fi_inject(ctx->tx, buf, len, mca_btl_ofi_peer_addr(ep, 0));
    mca_btl_ofi_ctx_unlock(ctx);
    if (OFI_LIKELY(0 == rc)) {
        count_send(m, len, true);
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* fragments in flight                                                 */
/* ------------------------------------------------------------------ */

/* Send completion: the descriptor's callback, then a BTL-owned fragment
 * goes back to its list. */
static void send_done(mca_btl_ofi_context_t *ctx, mca_btl_ofi_op_t *op,
                      const struct fi_cq_data_entry *entry, int status)
{
    mca_btl_ofi_frag_t *frag =
        (mca_btl_ofi_frag_t *) ((char *) op - offsetof(mca_btl_ofi_frag_t, op));
    mca_btl_ofi_module_t *m = frag->module;

    (void) ctx;
    (void) entry;
    if (NULL != frag->base.des_cbfunc) {
        frag->base.des_cbfunc(&m->super, frag->ep, &frag->base, status);
    }
    if (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
        mca_btl_ofi_frag_return(frag);
    }
    /* room in the provider's queue: fragments waiting for it go now */
    if (OFI_UNLIKELY(mca_btl_ofi_ts(m)->npending > 0)) {
        mca_btl_ofi_send_retry(m);
    }
}

/* Hands a fragment (header in place) to libfabric: one buffer, or two
 * when the data is the user's (in place). */
static inline ssize_t post_frag(mca_btl_ofi_module_t *m, mca_btl_ofi_frag_t *frag)
{
    mca_btl_ofi_context_t *ctx = mca_btl_ofi_context_get(m);
    struct iovec iov[2] = {
        {.iov_base = frag->hdr, .iov_len = sizeof(*frag->hdr) + frag->segments[0].seg_len},
        {.iov_base = frag->segments[1].seg_addr.pval, .iov_len = frag->segments[1].seg_len},
    };
    void *desc[2] = {frag->desc, frag->user_desc};
    struct fi_msg msg = {
        .msg_iov = iov,
        .desc = desc,
        .iov_count = frag->base.des_segment_count,
        .addr = mca_btl_ofi_peer_addr(frag->ep, 0),
        .context = &frag->op.fi,
    };
    ssize_t rc;

    frag->op.done = send_done;
    mca_btl_ofi_ctx_lock(ctx);
    rc = fi_sendmsg(ctx->tx, &msg, FI_COMPLETION | FI_TRANSMIT_COMPLETE);
    mca_btl_ofi_ctx_unlock(ctx);
    if (OFI_LIKELY(0 == rc)) {
        count_send(m, sizeof(*frag->hdr) + frag->hdr->len, false);
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* alloc / free / prepare_src                                          */
/* ------------------------------------------------------------------ */

mca_btl_base_descriptor_t *mca_btl_ofi_alloc(mca_btl_base_module_t *btl,
                                             mca_btl_base_endpoint_t *ep, uint8_t order,
                                             size_t size, uint32_t flags)
{
    mca_btl_ofi_frag_t *frag = mca_btl_ofi_frag_alloc((mca_btl_ofi_module_t *) btl, ep, size);

    (void) order;
    if (OFI_UNLIKELY(NULL == frag)) {
        return NULL;
    }
    frag->base.des_flags = flags;
    return &frag->base;
}

int mca_btl_ofi_free(mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    (void) btl;
    mca_btl_ofi_frag_return((mca_btl_ofi_frag_t *) des);
    return OPAL_SUCCESS;
}

/* The user's data stays where it is: segment 0 holds the upper layer's
 * header, segment 1 is the data, sent with fi_sendv. NULL when it cannot
 * (no in-place fragment, or no registration under FI_MR_LOCAL). */
static mca_btl_ofi_frag_t *prepare_inplace(mca_btl_ofi_module_t *m, mca_btl_ofi_endpoint_t *ep,
                                           opal_convertor_t *conv, size_t reserve, size_t *size)
{
    mca_btl_ofi_frag_t *frag = (mca_btl_ofi_frag_t *) opal_free_list_get(&m->frags_user);
    size_t pos;
    void *data;

    if (OFI_UNLIKELY(NULL == frag)) {
        return NULL;
    }
    opal_convertor_get_current_pointer(conv, &data);
    frag->user_desc = mca_btl_ofi_local_desc_temp(m, data, *size, NULL, &frag->user_reg);
    if (m->mr_local && NULL == frag->user_reg) {
        mca_btl_ofi_frag_return(frag);
        return NULL;
    }
    pos = conv->bConverted + *size;
    opal_convertor_set_position(conv, &pos);
    frag->ep = ep;
    frag->segments[0].seg_len = reserve;
    frag->segments[1].seg_addr.pval = data;
    frag->segments[1].seg_len = *size;
    frag->base.des_segment_count = 2;
    frag->base.des_cbfunc = NULL;
    return frag;
}

/* Packs up to *size bytes after `reserve` bytes for the upper layer's
 * header; *size becomes what was packed. */
static mca_btl_ofi_frag_t *prepare_copy(mca_btl_ofi_module_t *m, mca_btl_ofi_endpoint_t *ep,
                                        opal_convertor_t *conv, size_t reserve, size_t *size)
{
    mca_btl_ofi_frag_t *frag = mca_btl_ofi_frag_alloc(m, ep, reserve + *size);
    unsigned char *dst;

    if (OFI_UNLIKELY(NULL == frag)) {
        return NULL;
    }
    dst = (unsigned char *) frag->segments[0].seg_addr.pval + reserve;
    *size = *size > 0 ? ob1x_convertor_pack(conv, dst, *size) : 0;
    frag->segments[0].seg_len = reserve + *size;
    return frag;
}

mca_btl_base_descriptor_t *mca_btl_ofi_prepare_src(mca_btl_base_module_t *btl,
                                                   mca_btl_base_endpoint_t *ep,
                                                   struct opal_convertor_t *convertor,
                                                   uint8_t order, size_t reserve, size_t *size,
                                                   uint32_t flags)
{
    mca_btl_ofi_module_t *m = (mca_btl_ofi_module_t *) btl;
    mca_btl_ofi_frag_t *frag = NULL;

    (void) order;
    if (OFI_UNLIKELY(reserve + *size > btl->btl_max_send_size)) {
        *size = btl->btl_max_send_size - reserve;
    }
    if (*size >= MCA_BTL_OFI_INPLACE_MIN && reserve <= MCA_BTL_OFI_INPLACE_RESERVE &&
        mca_btl_ofi_ts(m)->inplace && ob1x_convertor_flat(convertor)) {
        frag = prepare_inplace(m, ep, convertor, reserve, size);
    }
    if (NULL == frag) {
        frag = prepare_copy(m, ep, convertor, reserve, size);
        if (OFI_UNLIKELY(NULL == frag)) {
            return NULL;
        }
    }
    frag->base.des_flags = flags;
    return &frag->base;
}

/* ------------------------------------------------------------------ */
/* back-pressure                                                       */
/* ------------------------------------------------------------------ */

/* A fragment the provider refused for now (-FI_EAGAIN): queued behind the
 * others, sent from progress. Refusing it instead would hand the upper
 * layer a descriptor whose data its convertor has already moved past. */
static void queue_frag(mca_btl_ofi_module_t *m, mca_btl_ofi_frag_t *frag)
{
    mca_btl_ofi_twosided_t *ts = mca_btl_ofi_ts(m);

    mca_btl_ofi_pv_add(m, OFI_PV_EAGAIN_RETRIES, 1);
    OPAL_THREAD_LOCK(&ts->pending_lock);
    opal_list_append(&ts->pending_frags, (opal_list_item_t *) frag);
    OPAL_THREAD_UNLOCK(&ts->pending_lock);
    __atomic_add_fetch(&ts->npending, 1, __ATOMIC_RELAXED);
}

/* A queued fragment that failed for good: its sender learns it. */
static void frag_failed(mca_btl_ofi_module_t *m, mca_btl_ofi_frag_t *frag, ssize_t rc)
{
    (void) refused(m, rc, "fi_sendmsg");
    if (NULL != frag->base.des_cbfunc) {
        frag->base.des_cbfunc(&m->super, frag->ep, &frag->base, OPAL_ERROR);
    }
    if (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
        mca_btl_ofi_frag_return(frag);
    }
}

void mca_btl_ofi_send_retry(mca_btl_ofi_module_t *m)
{
    mca_btl_ofi_twosided_t *ts = mca_btl_ofi_ts(m);
    opal_list_item_t *item;

    OPAL_THREAD_LOCK(&ts->pending_lock);
    while (NULL != (item = opal_list_get_first(&ts->pending_frags)) &&
           item != opal_list_get_end(&ts->pending_frags)) {
        mca_btl_ofi_frag_t *frag = (mca_btl_ofi_frag_t *) item;
        ssize_t rc = post_frag(m, frag);
        if (-FI_EAGAIN == rc) {
            break; /* still full: next time, in order */
        }
        (void) opal_list_remove_first(&ts->pending_frags);
        __atomic_sub_fetch(&ts->npending, 1, __ATOMIC_RELAXED);
        if (OFI_UNLIKELY(0 != rc)) {
            frag_failed(m, frag, rc);
        }
    }
    OPAL_THREAD_UNLOCK(&ts->pending_lock);
}

static inline bool frags_queued(const mca_btl_ofi_module_t *m)
{
    return OFI_UNLIKELY(!opal_list_is_empty(&mca_btl_ofi_ts(m)->pending_frags));
}

/* ------------------------------------------------------------------ */
/* send / sendi                                                        */
/* ------------------------------------------------------------------ */

/* A one-segment message small enough to inject, whose sender needs no
 * callback: sent now, the fragment is free at once (1: done). */
static inline int send_injected(mca_btl_ofi_module_t *m, mca_btl_ofi_endpoint_t *ep,
                                mca_btl_ofi_frag_t *frag)
{
    ssize_t rc = inject(m, ep, frag->hdr, sizeof(*frag->hdr) + frag->hdr->len);

    if (OFI_UNLIKELY(0 != rc)) {
        return rc;
    }
    if (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
        mca_btl_ofi_frag_return(frag);
    }
    return 1;
}

int mca_btl_ofi_send(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                     mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag)
{
    mca_btl_ofi_module_t *m = (mca_btl_ofi_module_t *) btl;
    mca_btl_ofi_frag_t *frag = (mca_btl_ofi_frag_t *) des;
    size_t len = frag->segments[0].seg_len;
    ssize_t rc;

    if (2 == des->des_segment_count) {
        len += frag->segments[1].seg_len;
    }
    mca_btl_ofi_hdr_set(frag->hdr, MCA_BTL_OFI_TYPE_SEND, tag, len);
    frag->ep = ep;
    if (frags_queued(m)) {
        queue_frag(m, frag); /* behind the others: order kept */
        return OPAL_SUCCESS;
    }
    if (1 == des->des_segment_count &&
        sizeof(*frag->hdr) + len <= inject_limit(mca_btl_ofi_ts(m)) &&
        !(des->des_flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK)) {
        rc = send_injected(m, ep, frag);
        if (OFI_LIKELY(1 == rc)) {
            return 1;
        }
    } else {
        rc = post_frag(m, frag);
    }
    if (OFI_LIKELY(0 == rc)) {
        return OPAL_SUCCESS;
    }
    if (-FI_EAGAIN == rc) {
        queue_frag(m, frag);
        return OPAL_SUCCESS;
    }
    return refused(m, rc, "fi_sendmsg");
}

/* header + payload into dst (header first); the convertor advances. */
static inline void fill(unsigned char *dst, const void *header, size_t header_size,
                        opal_convertor_t *convertor, size_t payload_size)
{
    memcpy(dst, header, header_size);
    if (payload_size > 0) {
        (void) ob1x_convertor_pack(convertor, dst + header_size, payload_size);
    }
}

/* sendi's fragment path: the message is in the provider's hands (or
 * refused) when this returns; the fragment comes back by itself. */
static int sendi_frag(mca_btl_ofi_module_t *m, mca_btl_ofi_endpoint_t *ep,
                      opal_convertor_t *convertor, void *header, size_t header_size,
                      size_t payload_size, uint32_t flags, mca_btl_base_tag_t tag)
{
    size_t total = header_size + payload_size;
    size_t pos = NULL != convertor ? convertor->bConverted : 0;
    mca_btl_ofi_frag_t *frag = mca_btl_ofi_frag_alloc(m, ep, total);
    ssize_t rc;

    if (OFI_UNLIKELY(NULL == frag)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    fill((unsigned char *) (frag->hdr + 1), header, header_size, convertor, payload_size);
    mca_btl_ofi_hdr_set(frag->hdr, MCA_BTL_OFI_TYPE_SEND, tag, total);
    frag->base.des_flags = flags | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
    rc = post_frag(m, frag);
    if (OFI_UNLIKELY(0 != rc)) {
        if (payload_size > 0) {
            /* not sent: the upper layer packs these bytes again */
            opal_convertor_set_position(convertor, &pos);
        }
        mca_btl_ofi_frag_return(frag);
        return refused(m, rc, "fi_sendmsg");
    }
    return OPAL_SUCCESS;
}

int mca_btl_ofi_sendi(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                      struct opal_convertor_t *convertor, void *header, size_t header_size,
                      size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t **descriptor)
{
    mca_btl_ofi_module_t *m = (mca_btl_ofi_module_t *) btl;
    size_t total = header_size + payload_size;
    size_t wire = sizeof(mca_btl_ofi_hdr_t) + total;
    ssize_t rc;

    (void) order;
    if (NULL != descriptor) {
        *descriptor = NULL;
    }
    /* over the eager limit, or behind queued fragments (order) */
    if (OFI_UNLIKELY(total > btl->btl_eager_limit) || frags_queued(m)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (wire > inject_limit(mca_btl_ofi_ts(m))) {
        return sendi_frag(m, ep, convertor, header, header_size, payload_size, flags, tag);
    }
    {
        uint64_t buf[(wire + 7) / 8]; /* 8-byte aligned, at most MCA_BTL_OFI_INJECT_MAX */
        size_t pos = NULL != convertor ? convertor->bConverted : 0;
        mca_btl_ofi_hdr_set((mca_btl_ofi_hdr_t *) buf, MCA_BTL_OFI_TYPE_SEND, tag, total);
        fill((unsigned char *) buf + sizeof(mca_btl_ofi_hdr_t), header, header_size, convertor,
             payload_size);
        rc = inject(m, ep, buf, wire);
        if (OFI_UNLIKELY(0 != rc) && payload_size > 0) {
            /* not sent: the upper layer packs these bytes again */
            opal_convertor_set_position(convertor, &pos);
        }
    }
    return OFI_LIKELY(0 == rc) ? OPAL_SUCCESS : refused(m, rc, "fi_inject");
}

/* ------------------------------------------------------------------ */
/* BTL-internal messages (active-message atomics)                      */
/* ------------------------------------------------------------------ */

int mca_btl_ofi_send_internal(mca_btl_ofi_module_t *m, mca_btl_ofi_endpoint_t *ep, int type,
                              const void *payload, size_t len)
{
    size_t wire = sizeof(mca_btl_ofi_hdr_t) + len;
    mca_btl_ofi_frag_t *frag;
    ssize_t rc;

    if (OFI_LIKELY(wire <= inject_limit(mca_btl_ofi_ts(m)))) {
        uint64_t buf[(wire + 7) / 8];
        mca_btl_ofi_hdr_set((mca_btl_ofi_hdr_t *) buf, type, 0, len);
        memcpy((unsigned char *) buf + sizeof(mca_btl_ofi_hdr_t), payload, len);
        rc = inject(m, ep, buf, wire);
        return OFI_LIKELY(0 == rc) ? OPAL_SUCCESS : refused(m, rc, "fi_inject");
    }
    frag = mca_btl_ofi_frag_alloc(m, ep, len);
    if (OFI_UNLIKELY(NULL == frag)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    memcpy(frag->hdr + 1, payload, len);
    mca_btl_ofi_hdr_set(frag->hdr, type, 0, len);
    frag->base.des_flags = MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
    rc = post_frag(m, frag);
    if (OFI_UNLIKELY(0 != rc)) {
        mca_btl_ofi_frag_return(frag);
        return refused(m, rc, "fi_sendmsg");
    }
    return OPAL_SUCCESS;
}

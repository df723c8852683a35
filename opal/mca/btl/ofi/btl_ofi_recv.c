/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_ofi_recv.c - receive buffers posted on context 0 (the receive
 * context every peer sends to) and delivery of what lands in them.
 *
 * With FI_MULTI_RECV (no provider for now: see multi_recv_trusted): two
 * large buffers of btl_ofi_rd_num slots each; the provider packs messages into a buffer
 * one after the other and says FI_MULTI_RECV on the last completion of a
 * buffer, which is then re-posted. FI_OPT_MIN_MULTI_RECV is one slot, so
 * no message is ever cut short. Without it (or with MPI_THREAD_MULTIPLE,
 * where two threads may deliver from one buffer while a third would
 * re-post it): rd_num buffers of one slot, each re-posted after its
 * message is delivered.
 *
 * Delivery never copies: the upper layer's descriptor points into the
 * buffer, valid for the callback only (BTL rules).
 */
#include "btl_ofi_frag.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/output.h"

/* Multi-receive buffers posted per module. Two: one fills while the
 * other, released, is delivered from and re-posted. */
#define MCA_BTL_OFI_MULTI_RECV_BUFS 2

/* ------------------------------------------------------------------ */
/* delivery                                                            */
/* ------------------------------------------------------------------ */

static void bad_message(mca_btl_ofi_module_t *m, const mca_btl_ofi_hdr_t *hdr, size_t len)
{
    mca_btl_ofi_pv_add(m, OFI_PV_CQ_ERRORS, 1);
    opal_output_verbose(1, mca_btl_ofi_component.output,
                        "btl/ofi: %s: dropped a message of %zu bytes that is not ours "
                        "(magic 0x%x, version %u, length %u)",
                        m->nic_name, len, len >= sizeof(*hdr) ? hdr->magic : 0,
                        len >= sizeof(*hdr) ? hdr->version : 0, len >= sizeof(*hdr) ? hdr->len : 0);
}

/* The upper layer's callback for `tag`, with a descriptor pointing at the
 * payload in the receive buffer. */
static inline void deliver_send(mca_btl_ofi_module_t *m, const mca_btl_ofi_hdr_t *hdr)
{
    const mca_btl_active_message_callback_t *reg = mca_btl_base_active_message_trigger + hdr->tag;
    mca_btl_base_segment_t seg;
    mca_btl_base_descriptor_t des;

    seg.seg_addr.pval = (void *) (hdr + 1);
    seg.seg_len = hdr->len;
    des.des_segments = &seg;
    des.des_segment_count = 1;
    des.des_flags = 0;
    des.des_cbfunc = NULL;
    des.des_cbdata = NULL;
    des.des_context = NULL;
    mca_btl_ofi_pv_add(m, OFI_PV_RECV_OPS, 1);
    mca_btl_ofi_pv_add(m, OFI_PV_RECV_BYTES, hdr->len);
    if (OFI_LIKELY(NULL != reg->cbfunc)) {
        reg->cbfunc(&m->super, hdr->tag, &des, reg->cbdata);
    }
}

/* One message of `len` bytes at buf: checked, then handed on by type. */
static inline void deliver(mca_btl_ofi_module_t *m, const void *buf, size_t len)
{
    const mca_btl_ofi_hdr_t *hdr = (const mca_btl_ofi_hdr_t *) buf;

    if (OFI_UNLIKELY(len < sizeof(*hdr) || MCA_BTL_OFI_HDR_MAGIC != hdr->magic ||
                     MCA_BTL_OFI_WIRE_VERSION != hdr->version || hdr->len != len - sizeof(*hdr))) {
        bad_message(m, hdr, len);
        return;
    }
    switch (hdr->type) {
        case MCA_BTL_OFI_TYPE_SEND:
            deliver_send(m, hdr);
            break;
        case MCA_BTL_OFI_TYPE_AM_REQ:
            if (hdr->len == sizeof(mca_btl_ofi_am_req_t)) {
                mca_btl_ofi_am_request(m, (const mca_btl_ofi_am_req_t *) (hdr + 1));
            } else {
                bad_message(m, hdr, len);
            }
            break;
        case MCA_BTL_OFI_TYPE_AM_REPLY:
            if (hdr->len == sizeof(mca_btl_ofi_am_reply_t)) {
                mca_btl_ofi_am_reply(m, (const mca_btl_ofi_am_reply_t *) (hdr + 1));
            } else {
                bad_message(m, hdr, len);
            }
            break;
        default:
            bad_message(m, hdr, len);
    }
}

/* ------------------------------------------------------------------ */
/* posting                                                             */
/* ------------------------------------------------------------------ */

static void recv_done(mca_btl_ofi_context_t *ctx, mca_btl_ofi_op_t *op,
                      const struct fi_cq_data_entry *entry, int status);

static ssize_t post_one(mca_btl_ofi_module_t *m, mca_btl_ofi_rbuf_t *rb)
{
    mca_btl_ofi_context_t *ctx = rb->ctx;
    ssize_t rc;

    mca_btl_ofi_ctx_lock(ctx);
    if (mca_btl_ofi_ts(m)->multi_recv) {
        struct iovec iov = {.iov_base = rb->base, .iov_len = rb->size};
        struct fi_msg msg = {
            .msg_iov = &iov,
            .desc = &rb->desc,
            .iov_count = 1,
            .addr = FI_ADDR_UNSPEC,
            .context = &rb->op.fi,
        };
        rc = fi_recvmsg(ctx->rx, &msg, FI_MULTI_RECV | FI_COMPLETION);
    } else {
        rc = fi_recv(ctx->rx, rb->base, rb->size, rb->desc, FI_ADDR_UNSPEC, &rb->op.fi);
    }
    mca_btl_ofi_ctx_unlock(ctx);
    return rc;
}

/* Hands a buffer (back) to the provider; refused for now, it is retried
 * from progress (mca_btl_ofi_recv_retry). */
static int post(mca_btl_ofi_module_t *m, mca_btl_ofi_rbuf_t *rb)
{
    ssize_t rc = post_one(m, rb);

    if (OFI_LIKELY(0 == rc)) {
        rb->posted = true;
        return OPAL_SUCCESS;
    }
    rb->posted = false;
    if (-FI_EAGAIN == rc) {
        mca_btl_ofi_pv_add(m, OFI_PV_EAGAIN_RETRIES, 1);
        __atomic_add_fetch(&mca_btl_ofi_ts(m)->npending, 1, __ATOMIC_RELAXED);
        return OPAL_SUCCESS;
    }
    opal_output_verbose(1, mca_btl_ofi_component.output,
                        "btl/ofi: %s: posting a receive buffer failed: %s", m->nic_name,
                        fi_strerror((int) -rc));
    return OPAL_ERROR;
}

void mca_btl_ofi_recv_retry(mca_btl_ofi_module_t *m)
{
    mca_btl_ofi_twosided_t *ts = mca_btl_ofi_ts(m);

    for (int i = 0; i < ts->nbufs; ++i) {
        mca_btl_ofi_rbuf_t *rb = &ts->bufs[i];
        if (!rb->posted && 0 == post_one(m, rb)) {
            rb->posted = true;
            __atomic_sub_fetch(&ts->npending, 1, __ATOMIC_RELAXED);
        }
    }
}

/* A message landed (or the buffer was released, or failed): deliver,
 * then re-post a buffer the provider gave back. */
static void recv_done(mca_btl_ofi_context_t *ctx, mca_btl_ofi_op_t *op,
                      const struct fi_cq_data_entry *entry, int status)
{
    mca_btl_ofi_rbuf_t *rb = (mca_btl_ofi_rbuf_t *) op;
    mca_btl_ofi_module_t *m = rb->module;
    bool multi = mca_btl_ofi_ts(m)->multi_recv;

    (void) ctx;
    if (OFI_LIKELY(OPAL_SUCCESS == status) && entry->len > 0) {
        deliver(m, multi ? entry->buf : rb->base, entry->len);
    }
    if (!multi || (entry->flags & FI_MULTI_RECV)) {
        (void) post(m, rb);
    }
}

/* ------------------------------------------------------------------ */
/* init / fini                                                         */
/* ------------------------------------------------------------------ */

/* Providers whose multi-receive buffers are used: none for now. With
 * libfabric 1.17, shm and udp;ofi_rxd stop delivering into re-posted
 * multi-receive buffers under a flood (btl.ofi.pml_flood_*), sockets did
 * too in a CI run, and tcp;ofi_rxm between hosts delivered wrong bytes
 * and hung (ofi.netns_soak_rxm, 4 namespace hosts); with one-slot buffers
 * all of these pass. Whether the fault is the providers' or our re-posting
 * is not settled, so the path stays, switched off. */
static bool multi_recv_trusted(const char *prov)
{
    (void) prov;
    return false;
}

/* Multi-receive when the provider offers it (and is trusted with it), and
 * accepts one slot as the least room a buffer keeps before it is
 * released. */
static bool use_multi_recv(mca_btl_ofi_module_t *m, mca_btl_ofi_context_t *ctx)
{
    size_t min = mca_btl_ofi_ts(m)->slot;

    if (mca_btl_ofi_component.mpi_threads ||
        !((m->info->caps | m->info->rx_attr->caps) & FI_MULTI_RECV) ||
        !multi_recv_trusted(m->info->fabric_attr->prov_name)) {
        return false;
    }
    return 0 == fi_setopt(&ctx->rx->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min, sizeof(min));
}

static int buf_alloc(mca_btl_ofi_module_t *m, mca_btl_ofi_rbuf_t *rb, mca_btl_ofi_context_t *ctx,
                     size_t size)
{
    void *base = NULL;

    if (0 != posix_memalign(&base, 4096, size)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    rb->op.done = recv_done;
    rb->module = m;
    rb->ctx = ctx;
    rb->base = base;
    rb->size = size;
    rb->desc = mca_btl_ofi_local_desc_temp(m, base, size, NULL, &rb->reg);
    if (m->mr_local && NULL == rb->reg) {
        free(base);
        rb->base = NULL;
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    return OPAL_SUCCESS;
}

int mca_btl_ofi_recv_init(mca_btl_ofi_module_t *m)
{
    mca_btl_ofi_twosided_t *ts = mca_btl_ofi_ts(m);
    mca_btl_ofi_context_t *ctx = &m->contexts[0];
    int rd_num = mca_btl_ofi_component.rd_num;
    size_t size = ts->slot;

    ts->multi_recv = use_multi_recv(m, ctx);
    if (ts->multi_recv) {
        ts->nbufs = MCA_BTL_OFI_MULTI_RECV_BUFS;
        size = (size_t) (rd_num > 1 ? rd_num : 2) * ts->slot;
    } else {
        ts->nbufs = rd_num;
    }
    ts->bufs = calloc((size_t) ts->nbufs, sizeof(*ts->bufs));
    if (NULL == ts->bufs) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (int i = 0; i < ts->nbufs; ++i) {
        int rc = buf_alloc(m, &ts->bufs[i], ctx, size);
        if (OPAL_SUCCESS == rc) {
            rc = post(m, &ts->bufs[i]);
        }
        if (OPAL_SUCCESS != rc) {
            mca_btl_ofi_recv_fini(m);
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

/* Nothing is cancelled: closing the endpoint (next, in finalize) releases
 * the posted buffers inside the provider. */
void mca_btl_ofi_recv_fini(mca_btl_ofi_module_t *m)
{
    mca_btl_ofi_twosided_t *ts = mca_btl_ofi_ts(m);

    for (int i = 0; NULL != ts->bufs && i < ts->nbufs; ++i) {
        mca_btl_ofi_rbuf_t *rb = &ts->bufs[i];
        mca_btl_ofi_local_release(m, rb->reg);
        free(rb->base);
    }
    free(ts->bufs);
    ts->bufs = NULL;
    ts->nbufs = 0;
}

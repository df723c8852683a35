/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * RDMA direct get, the sender's side. The sender registers its contiguous
 * buffer with each BTL to the peer that can get (at most
 * pml_ob1x_max_rdma_per_request) and sends an RGET: the matching fields,
 * the length, the buffer's address and one registration per BTL. The
 * receiver gets the data (pml_ob1x_recv_rget.c) and answers a FIN per get;
 * the request completes when the FINs (and the FRAGs of any range the
 * receiver asked for instead, by ACK_MORE) cover the message and the RGET
 * descriptor itself is done. The registrations are released then.
 */
#include "ompi_config.h"

#include <string.h>

#include "ompi/mca/bml/base/base.h"

#include "common_ob1x_copy.h"

#include "pml_ob1x.h"
#include "pml_ob1x_sendreq.h"

/* A device RGET: the buffer is device memory, registered for a BTL that
 * reads it (pml_ob1x_cuda.c), and not staged (yet). */
static inline bool rget_device(const ob1x_send_request_t *req)
{
    return NULL != req->cuda_reg && NULL == req->cuda_stage;
}

/* Handle bytes of BTL i (none for a BTL that needs no registration). */
static size_t rget_hs(const ob1x_send_request_t *req, int i)
{
    return NULL != req->rdma[i].handle
               ? ob1x_handle_size(req->rdma[i].bml_btl->btl, rget_device(req))
               : 0;
}

/* Bytes of the RGET with n BTLs, as many as fit the BTL's eager limit. */
static size_t rget_len(const ob1x_send_request_t *req, int *n, size_t limit)
{
    size_t len = sizeof(ob1x_hdr_rget_t);
    int i;

    for (i = 0; i < *n; ++i) {
        size_t e = OB1X_HDR_RDMA_BTL_LEN(rget_hs(req, i));
        if (len + e > limit) {
            break;
        }
        len += e;
    }
    *n = i;
    return len;
}

/* A handle into the header, zero-padded to whole words. */
static inline void handle_copy(unsigned char *dst, const unsigned char *src, size_t hs)
{
    ob1x_copy_words(dst, src, hs);
    if (OPAL_UNLIKELY(0 != hs % 8)) {
        memset(dst + hs, 0, ((hs + 7) & ~(size_t) 7) - hs); /* the alignment padding */
    }
}

static void rget_fill(ob1x_send_request_t *req, ob1x_hdr_rget_t *hdr, unsigned char *base, int n)
{
    unsigned char *p = (unsigned char *) (hdr + 1);

    ob1x_send_request_fill_match(&hdr->rndv.match, req, OB1X_HDR_RGET,
                                 rget_device(req) ? OB1X_HDR_FLAG_DEVICE : 0);
    hdr->rndv.match.in_rndv = 0;
    hdr->rndv.msg_length = req->base.req_bytes_packed;
    hdr->rndv.src_req = (uint64_t) (uintptr_t) req;
    hdr->src_addr = (uint64_t) (uintptr_t) base;
    hdr->nbtls = (uint32_t) n;
    hdr->pad = 0;
    for (int i = 0; i < n; ++i) {
        ob1x_hdr_rdma_btl_t *e = (ob1x_hdr_rdma_btl_t *) p;
        size_t hs = rget_hs(req, i);
        e->btl_id = req->rdma[i].id;
        e->handle_size = (uint16_t) hs;
        e->pad = 0;
        handle_copy(e->handle, (const unsigned char *) req->rdma[i].handle, hs);
        p += OB1X_HDR_RDMA_BTL_LEN(hs);
    }
}

/* Registers the whole buffer with each BTL that can get and whose handle
 * fits our header. Returns how many. */
static int rget_register(ob1x_send_request_t *req, unsigned char *base)
{
    int n, kept = 0;

    if (OPAL_UNLIKELY(rget_device(req))) {
        /* the one device-get BTL, registered (directly) by the entry point */
        memset(&req->rdma[0], 0, sizeof(req->rdma[0]));
        req->rdma[0].bml_btl = req->cuda_btl;
        req->rdma[0].handle = req->cuda_reg;
        req->rdma[0].id = ob1x_btl_id(req->cuda_btl->btl);
        req->rdma[0].length = req->base.req_bytes_packed;
        return 1;
    }
    n = ob1x_rdma_btls(ob1x_rdma_peer(req->oproc, req->endpoint), MCA_BTL_FLAGS_GET, req->rdma);

    for (int i = 0; i < n; ++i) {
        if (req->rdma[i].bml_btl->btl->btl_registration_handle_size <= OB1X_MAX_HANDLE) {
            req->rdma[kept] = req->rdma[i];
            req->rdma[kept].offset = 0;
            req->rdma[kept++].length = req->base.req_bytes_packed;
        }
    }
    return ob1x_rdma_register(req->rdma, kept, base, MCA_BTL_REG_FLAG_REMOTE_READ);
}

/* Undoes rget_started for an RGET the BTL did not take (the registrations
 * stay for the next try). */
static void rget_unstart(ob1x_send_request_t *req)
{
    size_t size = req->base.req_bytes_packed;

    (void) ob1x_counter_add(&ob1x_counters.messages[OB1X_PROTO_RGET], (uint64_t) -1);
    (void) ob1x_counter_add(&ob1x_counters.bytes[OB1X_PROTO_RGET], (uint64_t) - (int64_t) size);
    if (MCA_PML_BASE_SEND_SYNCHRONOUS == req->base.req_send_mode) {
        (void) ob1x_counter_add(&ob1x_counters.events[OB1X_EV_SYNCHRONOUS], (uint64_t) -1);
    }
    OPAL_THREAD_ADD_FETCH32(&mca_pml_ob1x.rdma_live, -1);
    if (rget_device(req)) {
        (void) ob1x_counter_add(&ob1x_counters.events[OB1X_EV_CUDA_RGET], (uint64_t) -1);
    }
    req->protocol = OB1X_PROTO_COUNT;
    req->outstanding = (int64_t) size;
}

/* Accounting and counters of an RGET that is on its way; `unit` 1 when a
 * descriptor's completion is still to come. */
static void rget_started(ob1x_send_request_t *req, int n, int unit)
{
    size_t size = req->base.req_bytes_packed;

    req->rdma_cnt = n;
    req->protocol = OB1X_PROTO_RGET;
    req->rndv_bytes = 0;
    req->offset = req->frag_end = 0;
    memset(req->frag_bytes, 0, sizeof(req->frag_bytes));
    req->outstanding = (int64_t) size + unit; /* no ACK comes */
    OPAL_THREAD_ADD_FETCH32(&mca_pml_ob1x.rdma_live, 1);
    ob1x_count_protocol(OB1X_PROTO_RGET, size);
    if (MCA_PML_BASE_SEND_SYNCHRONOUS == req->base.req_send_mode) {
        ob1x_count_event(OB1X_EV_SYNCHRONOUS);
    }
    if (rget_device(req)) {
        ob1x_count_event(OB1X_EV_CUDA_RGET);
    }
}

/* The RGET by the BTL's immediate send: no descriptor to wait for, and on
 * shared memory the fast path the receiver polls first. */
static bool rget_immediate(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl, void *base,
                           int n, size_t len)
{
    union {
        ob1x_hdr_rget_t hdr;
        unsigned char bytes[sizeof(ob1x_hdr_rget_t) +
                            OB1X_MAX_RDMA_BTLS * sizeof(ob1x_hdr_rdma_btl_t)];
    } u;

    if (NULL == bml_btl->btl->btl_sendi || OPAL_UNLIKELY(ob1x_fault_injected())) {
        return false;
    }
    rget_fill(req, &u.hdr, base, n);
    /* counted before the send: the FINs may complete it at once */
    rget_started(req, n, 0);
    if (OMPI_SUCCESS == mca_bml_base_sendi(bml_btl, NULL, &u, len, 0, MCA_BTL_NO_ORDER,
                                           MCA_BTL_DES_FLAGS_PRIORITY |
                                               MCA_BTL_DES_FLAGS_BTL_OWNERSHIP,
                                           OB1X_BTL_TAG(OB1X_HDR_RGET), NULL)) {
        return true;
    }
    rget_unstart(req);
    return false;
}

int ob1x_send_start_rget(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl)
{
    mca_btl_base_descriptor_t *des;
    size_t len;
    void *base;
    int n, registered, rc;

    opal_convertor_get_offset_pointer(&req->base.req_base.req_convertor, 0, &base);
    n = registered = rget_register(req, (unsigned char *) base);
    len = rget_len(req, &n, bml_btl->btl->btl_eager_limit);
    ob1x_rdma_deregister(req->rdma + n, registered - n); /* those that did not fit */
    if (0 == n) {
        if (OPAL_UNLIKELY(rget_device(req))) {
            /* the handle does not fit the BTL's eager fragment */
            int rc = ob1x_cuda_send_stage_late(req);
            if (OMPI_SUCCESS != rc) {
                return rc;
            }
        }
        return ob1x_send_start_sendrecv_pipeline(req, bml_btl);
    }
    if (rget_immediate(req, bml_btl, base, n, len)) {
        return OMPI_SUCCESS;
    }
    mca_bml_base_alloc(bml_btl, &des, MCA_BTL_NO_ORDER, len,
                       MCA_BTL_DES_FLAGS_PRIORITY | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP |
                           MCA_BTL_DES_FLAGS_SIGNAL);
    if (OPAL_UNLIKELY(NULL == des)) {
        ob1x_rdma_deregister(req->rdma, n);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    des->des_segments[0].seg_len = len;
    rget_fill(req, (ob1x_hdr_rget_t *) des->des_segments[0].seg_addr.pval, base, n);
    des->des_cbfunc = ob1x_send_one_done;
    des->des_cbdata = req;
    rget_started(req, n, 1);
    rc = mca_bml_base_send(bml_btl, des, OB1X_BTL_TAG(OB1X_HDR_RGET));
    if (OPAL_LIKELY(rc >= 0)) {
        if (1 == rc) {
            ob1x_send_request_subtract(req, 1);
        }
        return OMPI_SUCCESS;
    }
    mca_bml_base_free(bml_btl, des);
    rget_unstart(req);
    ob1x_rdma_deregister(req->rdma, n);
    req->rdma_cnt = 0;
    return OMPI_ERR_OUT_OF_RESOURCE;
}

/* The receiver is done with [offset, offset + length): got, or past its
 * truncated buffer (btl_id 0). */
void ob1x_send_request_fin(ob1x_send_request_t *req, const ob1x_hdr_fin_t *fin)
{
    if (0 != fin->btl_id) {
        ob1x_btl_count_id(fin->btl_id, (size_t) fin->length);
    }
    ob1x_send_request_subtract(req, (int64_t) fin->length);
}

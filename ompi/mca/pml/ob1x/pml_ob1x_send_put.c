/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * RDMA direct put and the RDMA pipeline, the sender's side.
 *
 * Direct put: the sender registers its contiguous buffer with each BTL to
 * the peer that can put and sends a RNDV without data, flagged CONTIG|PIN.
 * The receiver (pml_ob1x_recv_put.c) registers its buffer and answers an
 * ACK (with the range, if any, past its truncated buffer, to send by
 * FRAGs) and a PUT per BTL share; the sender puts each and sends a FIN.
 *
 * RDMA pipeline: the RNDV carries the first part and is flagged CONTIG.
 * The receiver's ACK names the tail (btl_rdma_pipeline_send_length bytes)
 * to send by FRAGs, and it offers the middle in pieces of
 * btl_rdma_pipeline_frag_size, each registered on its own on both sides,
 * a few at a time.
 *
 * A put that still fails after pml_ob1x_rdma_retries_limit tries goes by
 * FRAGs, and its FIN tells the receiver so. Either way the request
 * completes by the usual accounting: every byte is subtracted once, by its
 * put's completion or its FRAG's.
 */
#include "ompi_config.h"

#include <string.h>

#include "ompi/mca/bml/base/base.h"

#include "pml_ob1x.h"
#include "pml_ob1x_ctl.h"
#include "pml_ob1x_sendreq.h"

static unsigned char *send_base(ob1x_send_request_t *req)
{
    void *base;
    opal_convertor_get_offset_pointer(&req->base.req_base.req_convertor, 0, &base);
    return (unsigned char *) base;
}

int ob1x_send_start_rput(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl)
{
    const ob1x_rdma_peer_t *v = ob1x_rdma_peer(req->oproc, req->endpoint);
    int n = ob1x_rdma_btls(v, MCA_BTL_FLAGS_PUT, req->rdma), rc;

    for (int i = 0; i < n; ++i) {
        req->rdma[i].offset = 0;
        req->rdma[i].length = req->base.req_bytes_packed;
    }
    /* A BTL that refuses here registers each put on its own (below). */
    req->rdma_cnt = ob1x_rdma_register(req->rdma, n, send_base(req), MCA_BTL_REG_FLAG_LOCAL_WRITE);
    rc = ob1x_send_rndv_as(req, bml_btl, 0, OB1X_HDR_FLAG_CONTIG | OB1X_HDR_FLAG_PIN,
                           OB1X_PROTO_RPUT);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        ob1x_rdma_deregister(req->rdma, req->rdma_cnt);
        req->rdma_cnt = 0;
    }
    return rc;
}

int ob1x_send_start_rdma_pipeline(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl)
{
    size_t first = req->oproc->congested ? 0 : ob1x_rndv_first_size(bml_btl->btl);

    return ob1x_send_rndv_as(req, bml_btl, first, OB1X_HDR_FLAG_CONTIG, OB1X_PROTO_RDMA_PIPELINE);
}

static void send_fin_put(const ob1x_rdma_op_t *op, bool failed)
{
    ob1x_hdr_t fin;

    memset(&fin, 0, sizeof(fin));
    ob1x_hdr_common_init(&fin.common, OB1X_HDR_FIN, OB1X_HDR_FLAG_FIN_PUT);
    fin.fin.slot = op->slot;
    fin.fin.failed = failed;
    fin.fin.req = op->peer_req;
    fin.fin.offset = op->offset;
    fin.fin.length = op->length;
    fin.fin.btl_id = NULL != op->bml_btl ? ob1x_btl_id(op->bml_btl->btl) : 0;
    if (OMPI_SUCCESS != ob1x_ctl_send((struct ompi_proc_t *) op->proc, &fin)) {
        ob1x_send_fatal((struct ompi_proc_t *) op->proc, OMPI_ERR_UNREACH);
    }
}

static void put_done(ob1x_rdma_op_t *op, int status)
{
    ob1x_send_request_t *req = (ob1x_send_request_t *) op->req;
    size_t offset = op->offset, length = op->length;

    if (OPAL_LIKELY(OMPI_SUCCESS == status)) {
        send_fin_put(op, false);
        ob1x_btl_count(op->bml_btl->btl, length);
        ob1x_rdma_op_return(op);
        ob1x_send_request_subtract(req, (int64_t) length);
        return;
    }
    /* Given up: the range goes by FRAGs; the FIN frees the receiver's piece. */
    ob1x_rdma_fallback_notice(op, status);
    OPAL_THREAD_ADD_FETCH64(&req->outstanding, 1); /* live for the pass */
    if (0 == req->dst_req) {
        req->dst_req = op->peer_req;
    }
    ob1x_send_request_add_range(req, offset, length);
    send_fin_put(op, true);
    ob1x_rdma_op_return(op);
    ob1x_send_request_schedule(req);
    ob1x_send_request_subtract(req, 1);
}

/* Our registration of the buffer with bml_btl, made at the start (direct
 * put), or NULL. */
static bool held_handle(ob1x_send_request_t *req, mca_bml_base_btl_t *b,
                        mca_btl_base_registration_handle_t **handle)
{
    for (int i = 0; i < req->rdma_cnt; ++i) {
        if (req->rdma[i].bml_btl == b) {
            *handle = req->rdma[i].handle;
            return true;
        }
    }
    return false;
}

void ob1x_send_request_put(ob1x_send_request_t *req, const ob1x_hdr_put_t *put)
{
    ob1x_rdma_op_t *op = ob1x_rdma_op_alloc();
    const ob1x_rdma_peer_btl_t *e = ob1x_rdma_btl_by_id(ob1x_rdma_peer(req->oproc, req->endpoint),
                                                        put->btl_id, MCA_BTL_FLAGS_PUT);
    mca_bml_base_btl_t *b = NULL != e ? e->bml_btl : NULL;

    op->kind = OB1X_RDMA_PUT;
    op->done = put_done;
    op->req = req;
    op->proc = req->base.req_base.req_proc;
    op->bml_btl = b;
    op->offset = (size_t) put->offset;
    op->length = (size_t) put->length;
    op->local = send_base(req) + op->offset;
    op->remote = put->dst_addr;
    op->peer_req = put->dst_req;
    op->slot = (uint16_t) put->piece;
    op->remote_handle_size = put->handle_size;
    memcpy(op->remote_handle, put->handle, put->handle_size);
    if (OPAL_UNLIKELY(NULL == b)) {
        put_done(op, OMPI_ERR_NOT_AVAILABLE); /* no such BTL here: send/recv */
        return;
    }
    if (!held_handle(req, b, &op->local_handle) &&
        OMPI_SUCCESS != ob1x_reg_acquire(b, op->local, op->length, MCA_BTL_REG_FLAG_LOCAL_WRITE,
                                         &op->own_reg, &op->local_handle)) {
        put_done(op, OMPI_ERR_OUT_OF_RESOURCE);
        return;
    }
    ob1x_rdma_op_start(op);
}

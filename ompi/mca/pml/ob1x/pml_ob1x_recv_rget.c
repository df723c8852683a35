/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * RDMA direct get, the receiver's side. A matched RGET names the sender's
 * buffer and its registration with each of its BTLs. The receiver keeps
 * the BTLs it shares with the sender, registers its own buffer, splits the
 * message in shares of their bandwidth and gets each share (in pieces of
 * at most the BTL's get limit); each completed get is reported to the
 * sender by a FIN. A receive buffer that is not contiguous, no BTL in
 * common or a failed registration turn the message into send/recv: an
 * ACK_MORE asks the sender for all of it by FRAGs. A get that still fails
 * after pml_ob1x_rdma_retries_limit tries asks for its own range the same
 * way.
 */
#include "ompi_config.h"

#include <string.h>

#include "ompi/mca/bml/base/base.h"

#include "common_ob1x_hints.h"

#include "pml_ob1x.h"
#include "pml_ob1x_ctl.h"
#include "pml_ob1x_rdma.h"
#include "pml_ob1x_recvreq.h"

/* Tell the sender that [offset, offset + length) is done with. */
static void send_fin(struct ompi_proc_t *proc, uint64_t src_req, size_t offset, size_t length,
                     uint32_t btl_id)
{
    ob1x_hdr_t fin;

    memset(&fin.fin, 0, sizeof(fin.fin)); /* not the whole union: a PUT is 184 bytes */
    ob1x_hdr_common_init(&fin.common, OB1X_HDR_FIN, 0);
    fin.fin.req = src_req;
    fin.fin.offset = offset;
    fin.fin.length = length;
    fin.fin.btl_id = btl_id;
    if (OMPI_SUCCESS != ob1x_ctl_send(proc, &fin)) {
        ob1x_send_fatal(proc, OMPI_ERR_UNREACH);
    }
}

static void rget_done(ob1x_rdma_op_t *op, int status)
{
    ob1x_recv_request_t *req = (ob1x_recv_request_t *) op->req;
    size_t offset = op->offset, length = op->length;

    if (OPAL_UNLIKELY(OMPI_SUCCESS != status)) {
        if (req->cuda_direct) {
            ob1x_cuda_recv_note_fallback(req, offset, length);
        }
        ob1x_rdma_fallback_notice(op, status);
        ob1x_rdma_op_return(op);
        ob1x_recv_request_ack(req, offset, length, true);
        return;
    }
    send_fin(req->src, req->src_req, offset, length, op->btl_id);
    ob1x_rdma_op_return(op);
    ob1x_recv_request_add_bytes(req, length);
}

/* Reads the sender's list of BTLs: keeps those this process has too (their
 * handles go to handles[]). Returns how many. */
static int rget_btls(ob1x_recv_request_t *req, const unsigned char *data, size_t len,
                     const ob1x_hdr_rdma_btl_t **handles, uint32_t nbtls, bool device)
{
    const ob1x_rdma_peer_t *v = ob1x_rdma_peer_of(
        req->base.req_base.req_comm, req->base.req_base.req_ompi.req_status.MPI_SOURCE);
    int n = 0;

    for (uint32_t i = 0; i < nbtls && NULL != v; ++i) {
        const ob1x_hdr_rdma_btl_t *e = (const ob1x_hdr_rdma_btl_t *) data;
        const ob1x_rdma_peer_btl_t *b;

        if (len < offsetof(ob1x_hdr_rdma_btl_t, handle) || e->handle_size > OB1X_MAX_HANDLE ||
            len < OB1X_HDR_RDMA_BTL_LEN(e->handle_size)) {
            break; /* a short list: use what is whole */
        }
        data += OB1X_HDR_RDMA_BTL_LEN(e->handle_size);
        len -= OB1X_HDR_RDMA_BTL_LEN(e->handle_size);
        b = ob1x_rdma_btl_by_id(v, e->btl_id, MCA_BTL_FLAGS_GET);
        if (NULL == b || n == mca_pml_ob1x.params.max_rdma_per_request ||
            (device && !(ob1x_btl_props(b->bml_btl->btl) & OB1X_BTL_PROP_DEVICE_GET) &&
             !mca_pml_ob1x.params.cuda_test_device_get)) {
            continue;
        }
        memset(&req->rdma[n], 0, sizeof(req->rdma[n]));
        req->rdma[n].bml_btl = b->bml_btl;
        req->rdma[n].id = e->btl_id;
        req->rdma[n].reg_kind = b->reg_kind;
        handles[n++] = e;
    }
    return n;
}

/* Refused: all of it by send/recv. */
static void rget_refuse(ob1x_recv_request_t *req, ob1x_event_t why)
{
    if (OPAL_UNLIKELY(NULL != req->cuda_user)) {
        ob1x_cuda_recv_stage(req); /* the FRAGs land in the host copy */
    }
    ob1x_count_event(why);
    ob1x_recv_request_ack(req, 0, req->msg_length, true);
}

/* Gets of one BTL's share, each at most its get limit. Reads nothing of
 * the request: the last get may complete it, and it may be reused at once. */
static void rget_share(ob1x_recv_request_t *req, struct ompi_proc_t *src, unsigned char *base,
                       ob1x_rdma_btl_t b, const ob1x_hdr_rdma_btl_t *h, uint64_t src_addr)
{
    size_t limit = b.bml_btl->btl->btl_get_limit ? b.bml_btl->btl->btl_get_limit : SIZE_MAX;

    for (size_t done = 0; done < b.length;) {
        ob1x_rdma_op_t *op = ob1x_rdma_op_alloc();
        size_t len = b.length - done < limit ? b.length - done : limit;

        op->kind = OB1X_RDMA_GET;
        op->done = rget_done;
        op->req = req;
        op->proc = src;
        op->bml_btl = b.bml_btl;
        op->btl_id = b.id;
        op->offset = b.offset + done;
        op->length = len;
        op->local = base + op->offset;
        op->remote = src_addr + op->offset;
        op->local_handle = b.handle;
        op->remote_handle_size = h->handle_size;
        memcpy(op->remote_handle, h->handle, h->handle_size);
        done += len;
        ob1x_rdma_op_start(op);
    }
}

void ob1x_recv_request_rget(ob1x_recv_request_t *req, const ob1x_hdr_rget_t *hdr,
                            const unsigned char *data, size_t data_len)
{
    const ob1x_hdr_rdma_btl_t *handles[OB1X_MAX_RDMA_BTLS];
    ob1x_rdma_btl_t btls[OB1X_MAX_RDMA_BTLS];
    struct ompi_proc_t *src = req->src;
    size_t total = req->msg_length;
    size_t len = total < req->capacity ? total : req->capacity;
    unsigned char *base = ob1x_recv_request_contig_base(req);
    bool device = 0 != (hdr->rndv.match.common.flags & OB1X_HDR_FLAG_DEVICE);
    int n, kept;

    /* A device RGET into a buffer that is not contiguous is refused like
     * any RGET: the sender stages and sends by FRAGs. */
    if (NULL == base) {
        rget_refuse(req, OB1X_EV_FALLBACK_NONCONTIG);
        return;
    }
    n = rget_btls(req, data, data_len, handles, hdr->nbtls, device);
    if (0 == n) {
        rget_refuse(req, OB1X_EV_FALLBACK_NO_BTL);
        return;
    }
    if (device && NULL != req->cuda_user) {
        /* device to device: into the user's buffer itself, not its host
         * copy (the BTL classifies the local address) */
        base = (unsigned char *) req->cuda_user + req->cuda_gap;
        req->cuda_direct = true;
    }
    req->rdma_base = base;
    ob1x_rdma_shares(req->rdma, n, 0, len, 64);
    /* A device get takes no local registration (the contract's
     * local_handle NULL); a host RGET into a device receive buffer lands
     * in its host copy, registered as any host buffer. */
    kept = device ? n : ob1x_rdma_register(req->rdma, n, base, MCA_BTL_REG_FLAG_LOCAL_WRITE);
    if (kept < n) {
        /* the shares were made for all of them: simplest to send/recv */
        ob1x_rdma_deregister(req->rdma, kept);
        rget_refuse(req, OB1X_EV_FALLBACK_REGISTRATION);
        return;
    }
    req->rdma_cnt = n;
    memcpy(btls, req->rdma, (size_t) n * sizeof(btls[0]));
    /* Past a truncated buffer nothing is moved: done with at once. Sent
     * before the gets, whose completion may recycle the request. */
    if (total > len) {
        send_fin(src, req->src_req, len, total - len, 0);
    }
    for (int i = 0; i < n; ++i) {
        rget_share(req, src, base, btls[i], handles[i], hdr->src_addr);
    }
    if (total > len) {
        ob1x_recv_request_add_bytes(req, total - len); /* cannot have completed before */
    }
}

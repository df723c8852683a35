/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Receive requests. A request is matched under its communicator's lock;
 * the data is delivered after the lock is dropped. `bytes_received` counts
 * every payload byte the sender sends (also those dropped by truncation), and
 * whoever brings it to the message length completes the request.
 */
#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "ompi/mca/bml/base/base.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/rte/rte.h"

#include "common_ob1x_convertor.h"
#include "common_ob1x_help.h"

#include "pml_ob1x.h"
#include "pml_ob1x_ctl.h"
#include "pml_ob1x_match.h"
#include "pml_ob1x_recvreq.h"

static int recv_request_free(struct ompi_request_t **request);
static int recv_request_cancel(struct ompi_request_t *request, int complete);

static void recv_request_construct(ob1x_recv_request_t *req)
{
    req->base.req_base.req_type = MCA_PML_REQUEST_RECV;
    req->base.req_base.req_ompi.req_start = ob1x_start;
    req->base.req_base.req_ompi.req_free = recv_request_free;
    req->base.req_base.req_ompi.req_cancel = recv_request_cancel;
    OBJ_CONSTRUCT(&req->lock, opal_mutex_t);
    OBJ_CONSTRUCT(&req->early_pieces, opal_list_t);
    /* zero whenever the request is idle: completion deregisters and clears
     * it, so every way of matching (posting, imrecv) starts from here */
    req->rdma_cnt = 0;
    req->cuda_user = NULL;
    req->cuda_stage = NULL;
    req->cuda_pieces = NULL;
    req->cuda_back = NULL;
    req->cuda_back_n = 0;
}

static void recv_request_destruct(ob1x_recv_request_t *req)
{
    OBJ_DESTRUCT(&req->early_pieces);
    OBJ_DESTRUCT(&req->lock);
}

OBJ_CLASS_INSTANCE(ob1x_recv_request_t, mca_pml_base_recv_request_t, recv_request_construct,
                   recv_request_destruct);

void ob1x_recv_request_init(ob1x_recv_request_t *req, void *buf, size_t count,
                            struct ompi_datatype_t *dtype, int src, int tag,
                            struct ompi_communicator_t *comm, bool persistent)
{
    if (OPAL_UNLIKELY(ob1x_cuda_check())) {
        /* a device buffer: everything below works on its host copy */
        ob1x_cuda_recv_setup(req, &buf, count, dtype, persistent);
    }
    MCA_PML_BASE_RECV_REQUEST_INIT(&req->base, buf, count, dtype, src, tag, comm, persistent);
    /* The job is homogeneous (checked at add_procs), so the local convertor
     * serves every sender and can be prepared before the match. */
    opal_convertor_copy_and_prepare_for_recv(ompi_proc_local()->super.proc_convertor, &dtype->super,
                                             count, buf, 0, &req->base.req_base.req_convertor);
    opal_convertor_get_packed_size(&req->base.req_base.req_convertor, &req->capacity);
    req->release_bits = 0;
}

static void recv_request_release(ob1x_recv_request_t *req)
{
    if (OPAL_UNLIKELY(NULL != req->cuda_user)) {
        ob1x_cuda_recv_release(req);
    }
    MCA_PML_BASE_RECV_REQUEST_FINI(&req->base);
    opal_free_list_return(&mca_pml_ob1x.recv_requests, (opal_free_list_item_t *) req);
}

void ob1x_recv_request_complete(ob1x_recv_request_t *req)
{
    ompi_status_public_t *status = &req->base.req_base.req_ompi.req_status;
    opal_list_item_t *piece;

    /* Pieces past a truncated receive buffer are never reached. */
    while (OPAL_UNLIKELY(!opal_list_is_empty(&req->early_pieces))) {
        piece = opal_list_remove_first(&req->early_pieces);
        OBJ_DESTRUCT(piece);
        free(piece);
    }

    if (req->rdma_cnt > 0) {
        ob1x_rdma_deregister(req->rdma, req->rdma_cnt);
        req->rdma_cnt = 0;
    }
    if (OPAL_UNLIKELY(NULL != req->cuda_user)) {
        ob1x_cuda_recv_done(req); /* before MPI sees the request complete */
    }
    if (OPAL_UNLIKELY(req->msg_length > req->capacity)) {
        status->MPI_ERROR = MPI_ERR_TRUNCATE;
        status->_ucount = req->capacity;
    } else {
        status->_ucount = req->msg_length;
    }
    req->base.req_base.req_pml_complete = true;
    /* Mark before signalling: once MPI sees completion, the user may free or
     * restart the request in another thread. */
    if (OPAL_THREAD_FETCH_OR32(&req->release_bits, OB1X_REL_PML_DONE) & OB1X_REL_FREED) {
        recv_request_release(req);
        return;
    }
    ompi_request_complete(&req->base.req_base.req_ompi, true);
}

/*
 * A FRAG payload that arrived before the convertor reached its offset.
 * Non-contiguous receives are unpacked strictly in order: repositioning the
 * host's convertor into the middle of a nested struct type is not reliable,
 * so early pieces wait here (a copy) until the gap before them is filled.
 */
typedef struct early_piece {
    opal_list_item_t super;
    size_t offset;
    size_t len;
    unsigned char data[];
} early_piece_t;

static OBJ_CLASS_INSTANCE(early_piece_t, opal_list_item_t, NULL, NULL);

static void keep_early(ob1x_recv_request_t *req, size_t offset, struct iovec *iov,
                       uint32_t iov_count)
{
    size_t len = 0;
    early_piece_t *piece, *cur;

    for (uint32_t i = 0; i < iov_count; ++i) {
        len += iov[i].iov_len;
    }
    piece = (early_piece_t *) malloc(sizeof(*piece) + len);
    if (NULL == piece) {
        ob1x_show_help_now("help-mpi-pml-ob1x.txt", "out-of-memory",
                           "a fragment that arrived ahead of its predecessors",
                           "the job is aborted", ob1x_host());
        ompi_rte_abort(OMPI_ERR_OUT_OF_RESOURCE, NULL);
        return;
    }
    OBJ_CONSTRUCT(piece, early_piece_t);
    piece->offset = offset;
    piece->len = 0;
    for (uint32_t i = 0; i < iov_count; ++i) {
        ob1x_copy(piece->data + piece->len, iov[i].iov_base, iov[i].iov_len);
        piece->len += iov[i].iov_len;
    }
    OPAL_LIST_FOREACH(cur, &req->early_pieces, early_piece_t)
    {
        if (cur->offset > offset) {
            opal_list_insert_pos(&req->early_pieces, &cur->super, &piece->super);
            return;
        }
    }
    opal_list_append(&req->early_pieces, &piece->super);
}

/* Unpack one piece of payload at `offset` of the packed message. */
static void recv_unpack(ob1x_recv_request_t *req, size_t offset, struct iovec *iov,
                        uint32_t iov_count)
{
    opal_convertor_t *conv = &req->base.req_base.req_convertor;
    early_piece_t *piece;

    if (offset >= req->capacity) {
        return; /* truncated part: counted, not stored */
    }
    if (conv->bConverted != offset) {
        if (opal_convertor_need_buffers(conv)) {
            keep_early(req, offset, iov, iov_count);
            return;
        }
        size_t position = offset;
        opal_convertor_set_position(conv, &position);
    }
    ob1x_convertor_unpack(conv, iov, iov_count);
    while (NULL != (piece = (early_piece_t *) opal_list_get_first(&req->early_pieces)) &&
           &piece->super != opal_list_get_end(&req->early_pieces) &&
           piece->offset == conv->bConverted) {
        struct iovec one = {.iov_base = piece->data, .iov_len = piece->len};
        opal_list_remove_first(&req->early_pieces);
        ob1x_convertor_unpack(conv, &one, 1);
        OBJ_DESTRUCT(piece);
        free(piece);
    }
    if (OPAL_UNLIKELY(NULL != req->cuda_pieces)) {
        /* contiguous: this payload (never early); strided: what the
         * in-order unpacking has passed */
        ob1x_cuda_recv_landed(req, offset, iov, iov_count);
    }
}

/* Gather the payload pieces of a BTL descriptor: the first segment minus
 * the header, then any further segments. */
static uint32_t payload_iov(struct iovec *iov, const unsigned char *data, size_t data_len,
                            const mca_btl_base_segment_t *more, size_t nmore)
{
    uint32_t n = 0;
    if (data_len > 0) {
        iov[n].iov_base = (void *) data;
        iov[n++].iov_len = data_len;
    }
    for (size_t i = 0; i < nmore && n < MCA_BTL_DES_MAX_SEGMENTS; ++i) {
        iov[n].iov_base = more[i].seg_addr.pval;
        iov[n++].iov_len = more[i].seg_len;
    }
    return n;
}

void ob1x_recv_request_add_bytes(ob1x_recv_request_t *req, size_t bytes)
{
    /* Read before the add: once another thread's add completes the
     * request, it may be recycled and matched to a new message. */
    size_t total = req->msg_length;

    if (OPAL_THREAD_ADD_FETCH_SIZE_T(&req->bytes_received, bytes) == total) {
        ob1x_recv_request_complete(req);
    }
}

void ob1x_recv_request_ack(ob1x_recv_request_t *req, size_t offset, size_t length, bool more)
{
    ob1x_hdr_t ack;
    int rc;

    memset(&ack, 0, sizeof(ack));
    ob1x_hdr_common_init(&ack.common, OB1X_HDR_ACK, more ? OB1X_HDR_FLAG_ACK_MORE : 0);
    ack.ack.src_req = req->src_req;
    ack.ack.dst_req = (uint64_t) (uintptr_t) req;
    ack.ack.offset = offset;
    ack.ack.length = length;
    rc = ob1x_ctl_send(req->src, &ack);
    if (OMPI_SUCCESS != rc) {
        opal_show_help("help-mpi-pml-ob1x.txt", "ack-failed", true, ob1x_host(),
                       OMPI_NAME_PRINT(&req->src->super.proc_name), rc);
    }
}

unsigned char *ob1x_recv_request_contig_base(ob1x_recv_request_t *req)
{
    opal_convertor_t *conv = &req->base.req_base.req_convertor;
    void *base;

    if (opal_convertor_need_buffers(conv)) {
        return NULL;
    }
    opal_convertor_get_offset_pointer(conv, 0, &base);
    return (unsigned char *) base;
}

void ob1x_recv_request_deliver(ob1x_recv_request_t *req, ob1x_comm_peer_t *peer,
                               const ob1x_hdr_t *hdr, const mca_btl_base_segment_t *segs,
                               size_t nsegs, size_t hdr_len)
{
    const unsigned char *data = (const unsigned char *) segs[0].seg_addr.pval + hdr_len;
    size_t data_len = segs[0].seg_len - hdr_len, nmore = nsegs - 1;
    const mca_btl_base_segment_t *more = segs + 1;
    struct iovec iov[MCA_BTL_DES_MAX_SEGMENTS + 1];
    uint32_t n;
    size_t payload = 0, total;

    if (OPAL_LIKELY(0 == nmore && OB1X_HDR_MATCH == hdr->common.type)) {
        /* The common eager case: one piece, no accounting against FRAGs. */
        ob1x_recv_request_matched(req, peer, &hdr->match, data_len);
        if (data_len > 0 && req->capacity > 0) {
            iov[0].iov_base = (void *) data;
            iov[0].iov_len = data_len;
            ob1x_convertor_unpack(&req->base.req_base.req_convertor, iov, 1);
        }
        req->bytes_received = data_len;
        ob1x_recv_request_complete(req);
        return;
    }
    n = payload_iov(iov, data, data_len, more, nmore);
    for (uint32_t i = 0; i < n; ++i) {
        payload += iov[i].iov_len;
    }
    if (OB1X_HDR_MATCH == hdr->common.type) {
        ob1x_recv_request_matched(req, peer, &hdr->match, payload);
        if (payload > 0 && req->capacity > 0) {
            /* The whole message in one go: no early pieces to consider. */
            ob1x_convertor_unpack(&req->base.req_base.req_convertor, iov, n);
        }
        req->bytes_received = payload;
        ob1x_recv_request_complete(req);
        return;
    }
    total = (size_t) hdr->rndv.msg_length;
    ob1x_recv_request_matched(req, peer, &hdr->match, total);
    req->src_req = hdr->rndv.src_req;
    req->src = ompi_comm_peer_lookup(req->base.req_base.req_comm, hdr->match.src);
    if (OB1X_HDR_RGET == hdr->common.type) {
        ob1x_recv_request_rget(req, &hdr->rget, data, data_len);
        return;
    }
    /* ACK before unpacking: the sender's next fragments travel while we copy
     * this one. It must also leave before the last byte is counted, or the
     * user could recycle the request while we still read it. Fragments the
     * ACK releases may be unpacked by another thread meanwhile, hence the
     * lock; recv_unpack places pieces by offset, whatever their order. */
    if (!(hdr->common.flags & OB1X_HDR_FLAG_CONTIG) ||
        !ob1x_recv_request_offer_puts(req, &hdr->rndv, payload)) {
        ob1x_recv_request_ack(req, payload, total - payload, false);
    }
    if (payload > 0) {
        OPAL_THREAD_LOCK(&req->lock);
        recv_unpack(req, 0, iov, n);
        OPAL_THREAD_UNLOCK(&req->lock);
    }
    /* Not req->msg_length: after the ACK, FRAGs handled by other threads
     * may complete an empty-RNDV message and the request be reused. */
    if (0 == total) {
        ob1x_recv_request_complete(req);
    } else if (payload > 0) {
        ob1x_recv_request_add_bytes(req, payload);
    }
}

/* Kept out of deliver (noinline): inlined, its call's arguments cost the
 * receive path registers, recording on or off. */
__opal_attribute_noinline__ void
ob1x_recv_request_monitor(const ob1x_recv_request_t *req, const ob1x_hdr_match_t *hdr,
                          size_t msg_length)
{
    ob1x_monitor_msg(req->base.req_base.req_comm, hdr->src, msg_length, hdr->tag, false);
}

void ob1x_recv_request_deliver_frag(ob1x_recv_request_t *req, ob1x_recv_frag_t *frag)
{
    mca_btl_base_segment_t seg;

    seg.seg_addr.pval = frag->data;
    seg.seg_len = frag->data_len;
    ob1x_recv_request_deliver(
        req, &ob1x_comm_of(req->base.req_base.req_comm)->peers[frag->hdr.match.src], &frag->hdr,
        &seg, 1, 0);
    ob1x_recv_frag_release(frag);
}

void ob1x_recv_request_frag(ob1x_recv_request_t *req, const ob1x_hdr_frag_t *hdr,
                            const mca_btl_base_segment_t *segs, size_t nsegs)
{
    struct iovec iov[MCA_BTL_DES_MAX_SEGMENTS + 1];
    const unsigned char *first = (const unsigned char *) segs[0].seg_addr.pval + sizeof(*hdr);
    uint32_t n = payload_iov(iov, first, segs[0].seg_len - sizeof(*hdr), segs + 1, nsegs - 1);
    size_t payload = 0;

    for (uint32_t i = 0; i < n; ++i) {
        payload += iov[i].iov_len;
    }
    OPAL_THREAD_LOCK(&req->lock);
    recv_unpack(req, (size_t) hdr->offset, iov, n);
    OPAL_THREAD_UNLOCK(&req->lock);
    ob1x_recv_request_add_bytes(req, payload);
}

static int recv_request_free(struct ompi_request_t **request)
{
    ob1x_recv_request_t *req = (ob1x_recv_request_t *) *request;

    req->base.req_base.req_free_called = true;
    if (OPAL_THREAD_FETCH_OR32(&req->release_bits, OB1X_REL_FREED) & OB1X_REL_PML_DONE) {
        recv_request_release(req);
    }
    *request = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

/* A receive can be cancelled while it waits in a posted queue. */
static int recv_request_cancel(struct ompi_request_t *request, int complete)
{
    ob1x_recv_request_t *req = (ob1x_recv_request_t *) request;
    ob1x_comm_t *oc = ob1x_comm_of(req->base.req_base.req_comm);
    bool posted = false;

    (void) complete;
    if (NULL == oc || REQUEST_COMPLETE(request)) {
        return OMPI_SUCCESS;
    }
    OPAL_THREAD_LOCK(&oc->lock);
    /* Still in a posted queue means nothing has matched it. */
    opal_list_t *queue = OMPI_ANY_SOURCE == req->base.req_base.req_peer
                             ? &oc->wildcard
                             : &oc->peers[req->base.req_base.req_peer].specific;
    opal_list_item_t *item;
    OPAL_LIST_FOREACH(item, queue, opal_list_item_t)
    {
        if (item == (opal_list_item_t *) req) {
            opal_list_remove_item(queue, item);
            posted = true;
            break;
        }
    }
    OPAL_THREAD_UNLOCK(&oc->lock);
    if (posted) {
        req->base.req_base.req_ompi.req_status._cancelled = 1;
        req->msg_length = 0;
        ob1x_recv_request_complete(req);
    }
    return OMPI_SUCCESS;
}

void ob1x_recv_request_start(ob1x_recv_request_t *req)
{
    struct ompi_communicator_t *comm = req->base.req_base.req_comm;
    ob1x_comm_t *oc = ob1x_comm_of(comm);
    int src = req->base.req_base.req_peer;
    ob1x_comm_peer_t *peer = NULL;
    ob1x_recv_frag_t *frag;

    MCA_PML_BASE_RECV_START(&req->base);
    req->msg_length = 0;
    req->bytes_received = 0;
    req->release_bits &= OB1X_REL_FREED;
    if (OPAL_UNLIKELY(NULL != req->cuda_user) && req->base.req_base.req_ompi.req_persistent) {
        ob1x_cuda_recv_start(req);
    }
    if (0 != req->base.req_base.req_convertor.bConverted) {
        size_t zero = 0;
        opal_convertor_set_position(&req->base.req_base.req_convertor, &zero);
    }

    OPAL_THREAD_LOCK(&oc->lock);
    req->post_seq = oc->post_seq++;
    frag = ob1x_unexpected_find_any(oc, src, req->base.req_base.req_tag, &peer);
    if (NULL != frag) {
        ob1x_unexpected_remove(oc, peer, frag);
    } else {
        opal_list_append(OMPI_ANY_SOURCE == src ? &oc->wildcard : &oc->peers[src].specific,
                         (opal_list_item_t *) req);
    }
    OPAL_THREAD_UNLOCK(&oc->lock);

    if (NULL != frag) {
        ob1x_recv_request_deliver_frag(req, frag);
        ob1x_flow_release();
    }
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Send requests: each protocol's start, the pipeline scheduler, completion.
 *
 * Completion accounting: `outstanding` starts at the packed size; a
 * rendezvous adds one for the ACK and one for the RNDV descriptor itself (it
 * may carry no payload, yet its completion must be waited for). Every local
 * BTL completion subtracts its payload bytes (+1 for the RNDV) and the ACK
 * subtracts one; whoever brings it to zero completes the request. This needs
 * no lock and no ordering between the ACK and the local completion of the
 * RNDV. An eager send counts its one descriptor instead (and a buffered
 * one a unit for its MPI completion). The counters are atomic only when
 * threads may race on them
 * (OPAL_THREAD_*): a locked add costs as much as the rest of an eager send's
 * bookkeeping.
 */
#include "ompi_config.h"

#include <string.h>

#include "ompi/mca/bml/base/base.h"
#include "ompi/mca/pml/base/pml_base_bsend.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/rte/rte.h"

#include "common_ob1x_convertor.h"

#include "pml_ob1x.h"
#include "pml_ob1x_ctl.h"
#include "pml_ob1x_sendreq.h"
#include "pml_ob1x_recvreq.h"

static int send_request_free(struct ompi_request_t **request);
static int send_request_cancel(struct ompi_request_t *request, int complete);

static void send_request_construct(ob1x_send_request_t *req)
{
    req->base.req_base.req_type = MCA_PML_REQUEST_SEND;
    req->base.req_base.req_ompi.req_start = ob1x_start;
    req->base.req_base.req_ompi.req_free = send_request_free;
    req->base.req_base.req_ompi.req_cancel = send_request_cancel;
}

OBJ_CLASS_INSTANCE(ob1x_send_request_t, mca_pml_base_send_request_t, send_request_construct, NULL);

/* A restarted persistent buffered send: its convertor still reads the copy
 * in the attached buffer, which is gone. */
void ob1x_send_request_reprepare(ob1x_send_request_t *req)
{
    req->convertor_on_copy = false;
    opal_convertor_copy_and_prepare_for_send(
        req->base.req_base.req_proc->super.proc_convertor, &req->base.req_base.req_datatype->super,
        req->base.req_base.req_count, req->base.req_addr, 0, &req->base.req_base.req_convertor);
}

void ob1x_send_request_release(ob1x_send_request_t *req)
{
    MCA_PML_BASE_SEND_REQUEST_FINI(&req->base);
    opal_free_list_return(&mca_pml_ob1x.send_requests, (opal_free_list_item_t *) req);
}

void ob1x_send_request_mpi_complete(ob1x_send_request_t *req)
{
    ompi_status_public_t *status = &req->base.req_base.req_ompi.req_status;

    /* A buffered send completes for MPI once packed, while progress in
     * another thread may complete the whole request: one of them signals. */
    if (OPAL_UNLIKELY(opal_using_threads())) {
        int32_t expected = 0;
        if (!opal_atomic_compare_exchange_strong_32(&req->mpi_done, &expected, 1)) {
            return;
        }
    } else if (req->mpi_done) {
        return;
    } else {
        req->mpi_done = 1;
    }
    status->MPI_SOURCE = req->base.req_base.req_comm->c_my_rank;
    status->MPI_TAG = req->base.req_base.req_tag;
    status->MPI_ERROR = OMPI_SUCCESS;
    status->_ucount = req->base.req_bytes_packed;
    ompi_request_complete(&req->base.req_base.req_ompi, true);
}

static void send_request_pml_complete(ob1x_send_request_t *req)
{
    if (req->bsend_packed) {
        mca_pml_base_bsend_request_fini((ompi_request_t *) req);
        req->bsend_packed = false;
    }
    req->base.req_base.req_pml_complete = true;
    /* Mark before signalling: once MPI sees completion, the user may free or
     * restart the request in another thread. */
    if (OPAL_THREAD_FETCH_OR32(&req->release_bits, OB1X_REL_PML_DONE) & OB1X_REL_FREED) {
        ob1x_send_request_release(req);
        return;
    }
    ob1x_send_request_mpi_complete(req);
}

void ob1x_send_request_subtract(ob1x_send_request_t *req, int64_t done)
{
    if (0 == OPAL_THREAD_ADD_FETCH64(&req->outstanding, -done)) {
        send_request_pml_complete(req);
    }
}

void ob1x_send_request_queue(ob1x_send_request_t *req, ob1x_send_state_t state)
{
    ob1x_count_event(OB1X_EV_RESOURCE_RETRIES);
    OPAL_THREAD_LOCK(&mca_pml_ob1x.pending_lock);
    if (OB1X_SEND_IDLE == req->state) {
        req->state = state;
        opal_list_append(&mca_pml_ob1x.pending_sends,
                         (opal_list_item_t *) &req->base.req_base.req_ompi.super);
        ob1x_pending_added();
        if (OB1X_SEND_START_PENDING == state) {
            OPAL_THREAD_ADD_FETCH32(&req->oproc->starts_queued, 1);
        }
    }
    OPAL_THREAD_UNLOCK(&mca_pml_ob1x.pending_lock);
}

/* A queued start that progress took off the list and could not start
 * either: back in front, so that the messages behind it keep their order
 * (it still counts in starts_queued). */
void ob1x_send_request_requeue_start(ob1x_send_request_t *req)
{
    ob1x_count_event(OB1X_EV_RESOURCE_RETRIES);
    OPAL_THREAD_LOCK(&mca_pml_ob1x.pending_lock);
    req->state = OB1X_SEND_START_PENDING;
    opal_list_prepend(&mca_pml_ob1x.pending_sends,
                      (opal_list_item_t *) &req->base.req_base.req_ompi.super);
    ob1x_pending_added();
    OPAL_THREAD_UNLOCK(&mca_pml_ob1x.pending_lock);
}

static void fill_match(ob1x_hdr_match_t *hdr, const ob1x_send_request_t *req, uint8_t type,
                       uint8_t flags)
{
    const struct ompi_communicator_t *comm = req->base.req_base.req_comm;
    ob1x_hdr_match_init(hdr, type, flags, (uint16_t) comm->c_contextid, req->seq, comm->c_my_rank,
                        req->base.req_base.req_tag);
}

/* ---------------------------------------------------------------- eager */

int ob1x_send_start_sendi(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl)
{
    ob1x_hdr_match_t hdr;
    size_t size = req->base.req_bytes_packed;
    int rc;

    fill_match(&hdr, req, OB1X_HDR_MATCH, 0);
    rc = mca_bml_base_sendi(bml_btl, &req->base.req_base.req_convertor, &hdr, OB1X_HDR_MATCH_LEN,
                            size, MCA_BTL_NO_ORDER,
                            MCA_BTL_DES_FLAGS_PRIORITY | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP,
                            OB1X_BTL_TAG(OB1X_HDR_MATCH), NULL);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        /* The convertor may have moved; the other protocols start from 0. */
        ob1x_send_request_rewind(req);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    ob1x_count_protocol(OB1X_PROTO_EAGER_IMMEDIATE, size);
    req->outstanding = 0;
    send_request_pml_complete(req);
    return OMPI_SUCCESS;
}

static void send_failed(const ob1x_send_request_t *req, int status)
{
    opal_output(0, "pml:ob1x: a BTL failed to send to %s (%d); the job cannot continue",
                OMPI_NAME_PRINT(&req->base.req_base.req_proc->super.proc_name), status);
    ompi_rte_abort(status, NULL);
}

/* Local completion of an eager message: its one descriptor carried it all. */
static void send_eager_done(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                            mca_btl_base_descriptor_t *des, int status)
{
    ob1x_send_request_t *req = (ob1x_send_request_t *) des->des_cbdata;

    (void) btl;
    (void) ep;
    if (OPAL_UNLIKELY(OMPI_SUCCESS != status)) {
        send_failed(req, status);
    }
    ob1x_send_request_subtract(req, 1);
}

/* Local completion of a RNDV or a FRAG. */
static void send_frag_done(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                           mca_btl_base_descriptor_t *des, int status)
{
    ob1x_send_request_t *req = (ob1x_send_request_t *) des->des_cbdata;
    const ob1x_hdr_common_t *hdr = (const ob1x_hdr_common_t *) des->des_segments[0].seg_addr.pval;
    size_t hdr_len = ob1x_hdr_size(hdr->type);
    int64_t payload = 0;

    (void) btl;
    (void) ep;
    for (size_t i = 0; i < des->des_segment_count; ++i) {
        payload += (int64_t) des->des_segments[i].seg_len;
    }
    payload -= (int64_t) hdr_len;
    if (OB1X_HDR_RNDV == hdr->type) {
        payload += 1; /* the descriptor's own unit, see the top of this file */
    }
    if (OPAL_UNLIKELY(OMPI_SUCCESS != status)) {
        send_failed(req, status);
    }
    if (OB1X_HDR_FRAG == hdr->type) {
        OPAL_THREAD_ADD_FETCH32(&req->frags_in_flight, -1);
    }
    ob1x_send_request_subtract(req, payload);
}

/* Local completion of a FRAG: account it and keep the pipeline full. */
static void send_pipeline_frag_done(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                                    mca_btl_base_descriptor_t *des, int status)
{
    ob1x_send_request_t *req = (ob1x_send_request_t *) des->des_cbdata;
    bool more = req->offset < req->base.req_bytes_packed;

    /* Decide before the subtraction: afterwards the request may be gone. */
    if (more) {
        /* Hold the request: the scheduler must run on a live request. */
        OPAL_THREAD_ADD_FETCH64(&req->outstanding, 1);
    }
    send_frag_done(btl, ep, des, status);
    if (more) {
        ob1x_send_request_schedule(req);
        ob1x_send_request_subtract(req, 1);
    }
}

void ob1x_send_request_adopt_eager(ob1x_send_request_t *req, mca_btl_base_descriptor_t *des,
                                   ob1x_protocol_t proto)
{
    req->protocol = proto;
    req->outstanding = 1; /* the descriptor */
    des->des_cbfunc = send_eager_done;
    des->des_cbdata = req;
}

static inline __opal_attribute_always_inline__ int send_eager_des(ob1x_send_request_t *req,
                                                                  mca_bml_base_btl_t *bml_btl,
                                                                  mca_btl_base_descriptor_t *des,
                                                                  ob1x_protocol_t proto)
{
    size_t size = req->base.req_bytes_packed;
    bool buffered = MCA_PML_BASE_SEND_BUFFERED == req->base.req_send_mode;
    int rc;

    fill_match((ob1x_hdr_match_t *) des->des_segments[0].seg_addr.pval, req, OB1X_HDR_MATCH, 0);
    des->des_cbfunc = send_eager_done;
    des->des_cbdata = req;
    /* One unit for the descriptor; a buffered send holds one more until it
     * has signalled MPI completion below, so that the BTL's callback in
     * another thread cannot complete and recycle the request first. */
    req->outstanding = buffered ? 2 : 1;
    ob1x_count_protocol(proto, size);
    rc = mca_bml_base_send(bml_btl, des, OB1X_BTL_TAG(OB1X_HDR_MATCH));
    if (OPAL_LIKELY(rc >= 0)) {
        int64_t done = 1 == rc ? 1 : 0; /* 1: sent, and the BTL will not call back */
        if (buffered) {
            /* The data is in the descriptor: the user may reuse the buffer. */
            ob1x_send_request_mpi_complete(req);
            done += 1;
        }
        if (done > 0) {
            ob1x_send_request_subtract(req, done);
        }
        return OMPI_SUCCESS;
    }
    req->outstanding = (int64_t) size;
    ob1x_count_add(&ob1x_counters.messages[proto], (uint64_t) -1);
    ob1x_count_add(&ob1x_counters.bytes[proto], (uint64_t) - (int64_t) size);
    mca_bml_base_free(bml_btl, des);
    return OMPI_ERR_OUT_OF_RESOURCE;
}

mca_btl_base_descriptor_t *ob1x_eager_des(mca_bml_base_btl_t *bml_btl, opal_convertor_t *conv,
                                          size_t size, bool prepared)
{
    const uint32_t flags = MCA_BTL_DES_FLAGS_PRIORITY | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
    mca_btl_base_descriptor_t *des = NULL;

    if (OPAL_UNLIKELY(ob1x_fault_injected())) {
        return NULL;
    }
    if (prepared) {
        size_t len = size;
        mca_bml_base_prepare_src(bml_btl, conv, MCA_BTL_NO_ORDER, OB1X_HDR_MATCH_LEN, &len, flags,
                                 &des);
        if (OPAL_UNLIKELY(NULL != des && len != size)) {
            mca_bml_base_free(bml_btl, des);
            des = NULL;
        }
        return des;
    }
    mca_bml_base_alloc(bml_btl, &des, MCA_BTL_NO_ORDER, OB1X_HDR_MATCH_LEN + size, flags);
    if (NULL != des && size > 0) {
        (void) ob1x_convertor_pack(
            conv, (unsigned char *) des->des_segments[0].seg_addr.pval + OB1X_HDR_MATCH_LEN, size);
    }
    if (NULL != des) {
        des->des_segments[0].seg_len = OB1X_HDR_MATCH_LEN + size;
    }
    return des;
}

int ob1x_send_start_prepared(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl)
{
    mca_btl_base_descriptor_t *des = ob1x_eager_des(bml_btl, &req->base.req_base.req_convertor,
                                                    req->base.req_bytes_packed, true);

    if (OPAL_UNLIKELY(NULL == des)) {
        ob1x_send_request_rewind(req);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    return send_eager_des(req, bml_btl, des, OB1X_PROTO_EAGER_PREPARED);
}

int ob1x_send_start_allocated(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl)
{
    mca_btl_base_descriptor_t *des = ob1x_eager_des(bml_btl, &req->base.req_base.req_convertor,
                                                    req->base.req_bytes_packed, false);
    int rc;

    if (OPAL_UNLIKELY(NULL == des)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    rc = send_eager_des(req, bml_btl, des, OB1X_PROTO_EAGER_ALLOCATED);
    if (OMPI_SUCCESS != rc) {
        ob1x_send_request_rewind(req);
    }
    return rc;
}

/* ----------------------------------------------------------- rendezvous */

int ob1x_send_start_rndv(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl, size_t first,
                         uint8_t flags)
{
    mca_btl_base_descriptor_t *des;
    ob1x_hdr_rndv_t *hdr;
    size_t size = req->base.req_bytes_packed;
    int rc;

    if (first > size) {
        first = size;
    }
    if (OPAL_UNLIKELY(ob1x_fault_injected())) {
        des = NULL;
    } else if (first > 0) {
        mca_bml_base_prepare_src(bml_btl, &req->base.req_base.req_convertor, MCA_BTL_NO_ORDER,
                                 sizeof(ob1x_hdr_rndv_t), &first,
                                 MCA_BTL_DES_FLAGS_PRIORITY | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP |
                                     MCA_BTL_DES_FLAGS_SIGNAL,
                                 &des);
    } else {
        mca_bml_base_alloc(bml_btl, &des, MCA_BTL_NO_ORDER, sizeof(ob1x_hdr_rndv_t),
                           MCA_BTL_DES_FLAGS_PRIORITY | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP |
                               MCA_BTL_DES_FLAGS_SIGNAL);
        if (NULL != des) {
            des->des_segments[0].seg_len = sizeof(ob1x_hdr_rndv_t);
        }
    }
    if (OPAL_UNLIKELY(NULL == des)) {
        ob1x_send_request_rewind(req);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    hdr = (ob1x_hdr_rndv_t *) des->des_segments[0].seg_addr.pval;
    fill_match(&hdr->match, req, OB1X_HDR_RNDV, flags);
    hdr->match.in_rndv = 0;
    hdr->msg_length = size;
    hdr->src_req = (uint64_t) (uintptr_t) req;

    if (!req->bsend_packed) {
        req->protocol = OB1X_PROTO_SENDRECV_PIPELINE;
    }
    req->rndv_bytes = first;
    req->offset = first;
    req->outstanding = (int64_t) size + 2; /* +1 the ACK, +1 this descriptor */
    des->des_cbfunc = send_frag_done;
    des->des_cbdata = req;
    if (flags & OB1X_HDR_FLAG_SYNC) {
        ob1x_count_event(OB1X_EV_SYNCHRONOUS);
    }
    ob1x_count_protocol(req->protocol, size);
    rc = mca_bml_base_send(bml_btl, des, OB1X_BTL_TAG(OB1X_HDR_RNDV));
    if (OPAL_LIKELY(rc >= 0)) {
        if (1 == rc) {
            ob1x_send_request_subtract(req, (int64_t) first + 1);
        }
        return OMPI_SUCCESS;
    }
    ob1x_count_add(&ob1x_counters.messages[req->protocol], (uint64_t) -1);
    ob1x_count_add(&ob1x_counters.bytes[req->protocol], (uint64_t) - (int64_t) size);
    mca_bml_base_free(bml_btl, des);
    req->offset = 0;
    req->rndv_bytes = 0;
    req->outstanding = (int64_t) size;
    ob1x_send_request_rewind(req);
    return OMPI_ERR_OUT_OF_RESOURCE;
}

/*
 * Packs the whole message into the MPI_Buffer_attach buffer and points the
 * convertor at that copy, so the user may reuse the buffer at once. Not
 * mca_pml_base_bsend_request_start: in Open MPI 4.1 it counts the pending
 * buffered send after dropping its lock, racing with the locked count-down
 * of a completion in another thread; a lost update leaves MPI_Buffer_detach
 * waiting forever. The allocation, which counts under the lock, comes from
 * the base; the packing is ours.
 */
static int bsend_pack(ob1x_send_request_t *req)
{
    opal_convertor_t *conv = &req->base.req_base.req_convertor;
    int rc = mca_pml_base_bsend_request_alloc((ompi_request_t *) req);
    size_t packed;

    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        return rc;
    }
    /* req_addr is const for the user buffer it usually names; here it is ours */
    packed = ob1x_convertor_pack(conv, (void *) req->base.req_addr, req->base.req_bytes_packed);
    opal_convertor_prepare_for_send(conv, &ompi_mpi_packed.dt.super, packed, req->base.req_addr);
    return OMPI_SUCCESS;
}

/* The message moves to the attached buffer: from now on it is sent from
 * that copy and the send is complete for MPI. */
static int bsend_copy(ob1x_send_request_t *req)
{
    int rc = bsend_pack(req);

    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        return rc;
    }
    req->bsend_packed = true;
    req->convertor_on_copy = true;
    req->protocol = OB1X_PROTO_BUFFERED_PIPELINE;
    /* Complete for MPI now, before any BTL holds the request: once the
     * rendezvous is out, another thread may finish and recycle it. A start
     * that must wait for resources resends from the copy. */
    ob1x_send_request_mpi_complete(req);
    return OMPI_SUCCESS;
}

int ob1x_send_start_buffered(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl)
{
    if (!req->bsend_packed) {
        int rc = bsend_copy(req);
        if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
            return rc;
        }
    }
    return ob1x_send_start_rndv(req, bml_btl, ob1x_rndv_first_size(bml_btl->btl), 0);
}

/*
 * A buffered send that will need the attached buffer is copied there before
 * it draws its sequence number. A send refused for lack of room then costs
 * nothing: no sequence slot to fill with a VOID, no message at all. (An
 * application that retries refused sends in a loop would otherwise send a
 * VOID per try, and the receiver would hold each one until its turn.)
 */
int ob1x_send_request_begin_buffered(ob1x_send_request_t *req)
{
    int rc;

    ob1x_send_request_reset(req, 0); /* its sequence number comes once the copy is made */
    rc = bsend_copy(req);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        return rc;
    }
    req->seq = (uint16_t) ob1x_send_request_draw_seq(req);
    /* Packed: the start sends the rendezvous or queues, it cannot fail. */
    return ob1x_send_request_start_or_queue(req);
}

/* A queued start, retried from progress. The retry may pick another BTL
 * than the first try (round robin over BTLs with different eager limits):
 * a buffered send that was eager there may need the attached buffer here
 * and find it full. Its caller was told the send went through and its data
 * is still in the user's buffer (it is not complete for MPI before it
 * leaves), so it goes as a standard rendezvous instead of failing. */
int ob1x_send_request_restart(ob1x_send_request_t *req)
{
    int rc = ob1x_send_request_start(req);

    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc && OMPI_ERR_OUT_OF_RESOURCE != rc &&
                      MCA_PML_BASE_SEND_BUFFERED == req->base.req_send_mode &&
                      !req->bsend_packed)) {
        mca_bml_base_btl_t *bml_btl = mca_bml_base_btl_array_get_next(&req->endpoint->btl_eager);
        rc = ob1x_send_start_rndv(req, bml_btl, ob1x_rndv_first_size(bml_btl->btl), 0);
    }
    return rc;
}

/* ------------------------------------------------------------- pipeline */

/* Hand one FRAG to a BTL. Returns false when resources ran out. */
static bool send_one_frag(ob1x_send_request_t *req)
{
    mca_bml_base_btl_t *bml_btl = mca_bml_base_btl_array_get_next(&req->endpoint->btl_send);
    mca_btl_base_module_t *btl = bml_btl->btl;
    size_t remaining = req->base.req_bytes_packed - req->offset;
    size_t size = btl->btl_max_send_size - sizeof(ob1x_hdr_frag_t);
    size_t position = req->offset;
    mca_btl_base_descriptor_t *des;
    ob1x_hdr_frag_t *hdr;
    int rc;

    if (size > remaining) {
        size = remaining;
    }
    if (OPAL_UNLIKELY(ob1x_fault_injected())) {
        return false;
    }
    opal_convertor_set_position(&req->base.req_base.req_convertor, &position);
    mca_bml_base_prepare_src(bml_btl, &req->base.req_base.req_convertor, MCA_BTL_NO_ORDER,
                             sizeof(ob1x_hdr_frag_t), &size,
                             MCA_BTL_DES_FLAGS_BTL_OWNERSHIP | MCA_BTL_DES_SEND_ALWAYS_CALLBACK |
                                 MCA_BTL_DES_FLAGS_SIGNAL,
                             &des);
    if (OPAL_UNLIKELY(NULL == des)) {
        return false;
    }
    hdr = (ob1x_hdr_frag_t *) des->des_segments[0].seg_addr.pval;
    ob1x_hdr_common_init(&hdr->common, OB1X_HDR_FRAG, 0);
    hdr->pad16 = 0;
    hdr->pad = 0;
    hdr->offset = req->offset;
    hdr->dst_req = req->dst_req;
    des->des_cbfunc = send_pipeline_frag_done;
    des->des_cbdata = req;

    OPAL_THREAD_ADD_FETCH32(&req->frags_in_flight, 1);
    rc = mca_bml_base_send(bml_btl, des, OB1X_BTL_TAG(OB1X_HDR_FRAG));
    if (OPAL_UNLIKELY(rc < 0)) {
        OPAL_THREAD_ADD_FETCH32(&req->frags_in_flight, -1);
        mca_bml_base_free(bml_btl, des);
        return false;
    }
    /* Advanced only once the FRAG is out: a completion in another thread
     * reads it to decide whether to call the scheduler, and must never see
     * the end of the message before it is really all handed out. */
    req->offset += size;
    return true;
}

/*
 * Keep up to send_pipeline_depth FRAGs in flight. Several threads may call
 * this at once (ACK, completions, progress); the counter lets exactly one of
 * them run the loop, and makes it loop again if others called meanwhile.
 * A pass serves only the calls counted before it began: a completion that
 * calls while a pass is failing for lack of resources (and so did not queue
 * the request, a FRAG being in flight) must get a pass of its own, or
 * nothing would ever schedule the rest.
 */
bool ob1x_send_request_schedule(ob1x_send_request_t *req)
{
    bool queued = false;

    if (OPAL_THREAD_ADD_FETCH32(&req->schedule_lock, 1) != 1) {
        return false;
    }
    for (;;) {
        /* acquire: what this pass reads is at least as new as the calls */
        int32_t calls = __atomic_load_n(&req->schedule_lock, __ATOMIC_ACQUIRE);
        /* A request queued for progress (by an earlier pass) stays on the
         * pending list until progress takes it off: sending more now could
         * complete and recycle it while it is still listed there. */
        while (req->offset < req->base.req_bytes_packed &&
               req->frags_in_flight < mca_pml_ob1x.params.send_pipeline_depth &&
               OB1X_SEND_IDLE == req->state) {
            if (!send_one_frag(req)) {
                if (0 == req->frags_in_flight) {
                    /* Nothing in flight will call us back: progress must. */
                    ob1x_send_request_queue(req, OB1X_SEND_SCHEDULE_PENDING);
                    queued = true;
                }
                break;
            }
        }
        /* Absorb the calls this pass served; loop again if more came. */
        if (0 == OPAL_THREAD_ADD_FETCH32(&req->schedule_lock, -calls)) {
            break;
        }
    }
    return queued;
}

void ob1x_send_request_acked(ob1x_send_request_t *req, uint64_t dst_req)
{
    req->dst_req = dst_req;
    if (req->offset < req->base.req_bytes_packed) {
        ob1x_send_request_schedule(req);
    }
    ob1x_send_request_subtract(req, 1);
}

/* A started send that failed before anything left still owns a sequence
 * number; the receiver must see that slot filled or it would wait forever. */
void ob1x_send_request_void(ob1x_send_request_t *req)
{
    ob1x_hdr_t hdr;

    memset(&hdr, 0, sizeof(hdr));
    fill_match(&hdr.match, req, OB1X_HDR_MATCH, OB1X_HDR_FLAG_VOID);
    (void) ob1x_ctl_send(req->base.req_base.req_proc, &hdr);
}

/* ---------------------------------------------------------------- cancel */

void ob1x_send_request_cancel_answer(ob1x_send_request_t *req, bool cancelled)
{
    if (!cancelled) {
        /* Matched already: the ACK completes it as usual. */
        req->cancel_state = OB1X_CANCEL_NONE;
        return;
    }
    req->cancel_state = OB1X_CANCEL_DONE;
    req->base.req_base.req_ompi.req_status._cancelled = 1;
    /* No ACK and no FRAG will ever come: drop what they would have settled. */
    ob1x_send_request_subtract(req, (int64_t) (req->base.req_bytes_packed - req->rndv_bytes) + 1);
}

/* A send still waiting for BTL resources to start has sent nothing: take it
 * off the pending list and complete it as cancelled. Its sequence slot is
 * filled with a VOID so the receiver does not wait for it. */
static bool withdraw_unstarted(ob1x_send_request_t *req)
{
    bool taken = false;

    OPAL_THREAD_LOCK(&mca_pml_ob1x.pending_lock);
    if (OB1X_SEND_START_PENDING == req->state) {
        opal_list_remove_item(&mca_pml_ob1x.pending_sends,
                              (opal_list_item_t *) &req->base.req_base.req_ompi.super);
        req->state = OB1X_SEND_IDLE;
        opal_atomic_add_fetch_32(&mca_pml_ob1x.pending_count, -1);
        OPAL_THREAD_ADD_FETCH32(&req->oproc->starts_queued, -1);
        taken = true;
    }
    OPAL_THREAD_UNLOCK(&mca_pml_ob1x.pending_lock);
    if (taken) {
        ob1x_send_request_void(req);
        req->cancel_state = OB1X_CANCEL_DONE;
        req->base.req_base.req_ompi.req_status._cancelled = 1;
        send_request_pml_complete(req);
    }
    return taken;
}

static int send_request_cancel(struct ompi_request_t *request, int complete)
{
    ob1x_send_request_t *req = (ob1x_send_request_t *) request;
    ob1x_hdr_t hdr;

    (void) complete;
    if (OPAL_UNLIKELY(OB1X_SEND_START_PENDING == req->state) && withdraw_unstarted(req)) {
        return OMPI_SUCCESS;
    }
    /* Only an unacknowledged rendezvous can be withdrawn; anything else has
     * been delivered or is being delivered, and MPI lets the cancel fail. */
    if (req->mpi_done || OB1X_PROTO_SENDRECV_PIPELINE != req->protocol || 0 != req->dst_req ||
        OB1X_SEND_IDLE != req->state) {
        return OMPI_SUCCESS;
    }
    int32_t expected = OB1X_CANCEL_NONE;
    if (!opal_atomic_compare_exchange_strong_32(&req->cancel_state, &expected, OB1X_CANCEL_ASKED)) {
        return OMPI_SUCCESS;
    }
    memset(&hdr, 0, sizeof(hdr));
    ob1x_hdr_common_init(&hdr.common, OB1X_HDR_CANCEL, 0);
    hdr.cancel.ctx = (uint16_t) req->base.req_base.req_comm->c_contextid;
    hdr.cancel.seq = req->seq;
    hdr.cancel.src = req->base.req_base.req_comm->c_my_rank;
    hdr.cancel.src_req = (uint64_t) (uintptr_t) req;
    return ob1x_ctl_send(req->base.req_base.req_proc, &hdr);
}

static int send_request_free(struct ompi_request_t **request)
{
    ob1x_send_request_t *req = (ob1x_send_request_t *) *request;

    req->base.req_base.req_free_called = true;
    if (OPAL_THREAD_FETCH_OR32(&req->release_bits, OB1X_REL_FREED) & OB1X_REL_PML_DONE) {
        ob1x_send_request_release(req);
    }
    *request = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

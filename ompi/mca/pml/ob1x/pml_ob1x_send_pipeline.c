/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * The pipeline protocols: send/recv pipeline (RNDV + ACK + FRAGs) and
 * buffered pipeline (packed into the MPI_Buffer_attach buffer first, then
 * the same pipeline), and the scheduler that keeps FRAGs in flight.
 */
#include "ompi_config.h"

#include <string.h>

#include "ompi/mca/bml/base/base.h"
#include "ompi/mca/pml/base/pml_base_bsend.h"
#include "ompi/datatype/ompi_datatype.h"

#include "common_ob1x_convertor.h"

#include "pml_ob1x.h"
#include "pml_ob1x_sendreq.h"

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
        ob1x_send_fatal(req->base.req_base.req_proc, status);
    }
    if (OB1X_HDR_FRAG == hdr->type) {
        OPAL_THREAD_ADD_FETCH32(&req->frags_in_flight, -1);
    }
    ob1x_send_request_subtract(req, payload);
}

/* Are there FRAGs left to send: of the current range, or a range waiting? */
static inline bool frags_left(const ob1x_send_request_t *req)
{
    return req->offset < req->frag_end || 0 != req->ranges_pending;
}

/* Local completion of a FRAG: account it and keep the pipeline full. */
static void send_pipeline_frag_done(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                                    mca_btl_base_descriptor_t *des, int status)
{
    ob1x_send_request_t *req = (ob1x_send_request_t *) des->des_cbdata;
    bool more = frags_left(req);

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
    ob1x_progress_freed();
}

/* ----------------------------------------------------------- rendezvous */

int ob1x_send_rndv(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl, size_t first,
                   uint8_t flags)
{
    return ob1x_send_rndv_as(req, bml_btl, first, flags,
                             req->bsend_packed ? OB1X_PROTO_BUFFERED_PIPELINE
                                               : OB1X_PROTO_SENDRECV_PIPELINE);
}

int ob1x_send_rndv_as(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl, size_t first,
                      uint8_t flags, ob1x_protocol_t proto)
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
    ob1x_send_request_fill_match(&hdr->match, req, OB1X_HDR_RNDV, flags);
    hdr->match.in_rndv = 0;
    hdr->msg_length = size;
    hdr->src_req = (uint64_t) (uintptr_t) req;

    req->protocol = proto;
    req->rndv_bytes = first;
    req->offset = first;
    req->frag_end = first; /* the ACK says what goes by FRAGs */
    memset(req->frag_bytes, 0, sizeof(req->frag_bytes));
    req->outstanding = (int64_t) size + 2; /* +1 the ACK, +1 this descriptor */
    des->des_cbfunc = send_frag_done;
    des->des_cbdata = req;
    if (MCA_PML_BASE_SEND_SYNCHRONOUS == req->base.req_send_mode) {
        ob1x_count_event(OB1X_EV_SYNCHRONOUS);
    }
    ob1x_count_protocol(req->protocol, size);
    rc = mca_bml_base_send(bml_btl, des, OB1X_BTL_TAG(OB1X_HDR_RNDV));
    if (OPAL_LIKELY(rc >= 0)) {
        ob1x_btl_count(bml_btl->btl, first);
        if (1 == rc) {
            ob1x_send_request_subtract(req, (int64_t) first + 1);
        }
        return OMPI_SUCCESS;
    }
    (void) ob1x_counter_add(&ob1x_counters.messages[req->protocol], (uint64_t) -1);
    (void) ob1x_counter_add(&ob1x_counters.bytes[req->protocol], (uint64_t) - (int64_t) size);
    mca_bml_base_free(bml_btl, des);
    req->offset = 0;
    req->rndv_bytes = 0;
    req->outstanding = (int64_t) size;
    ob1x_send_request_rewind(req);
    return OMPI_ERR_OUT_OF_RESOURCE;
}

/* A synchronous send's RNDV asks for an ACK, which completes the send; a
 * congested receiver gets a RNDV without data, so that nothing more piles
 * up there before a receive matches; others carry the first part. */
int ob1x_send_start_sendrecv_pipeline(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl)
{
    size_t first = ob1x_rndv_first_size(bml_btl->btl);

    if (OPAL_UNLIKELY(MCA_PML_BASE_SEND_SYNCHRONOUS == req->base.req_send_mode)) {
        return ob1x_send_rndv(req, bml_btl, first, OB1X_HDR_FLAG_SYNC);
    }
    if (OPAL_UNLIKELY(req->oproc->congested)) {
        ob1x_count_event(OB1X_EV_FLOW_CONTROL_RNDV);
        return ob1x_send_rndv(req, bml_btl, 0, 0);
    }
    return ob1x_send_rndv(req, bml_btl, first, 0);
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

int ob1x_send_start_buffered_pipeline(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl)
{
    if (!req->bsend_packed) {
        int rc = bsend_copy(req);
        if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
            return rc;
        }
    }
    /* A congested receiver gets no data with the RNDV (as the send/recv
     * pipeline does); the copy is made either way: MPI_Bsend completes
     * locally, whatever the receiver. */
    if (OPAL_UNLIKELY(req->oproc->congested)) {
        ob1x_count_event(OB1X_EV_FLOW_CONTROL_RNDV);
        return ob1x_send_rndv(req, bml_btl, 0, 0);
    }
    return ob1x_send_rndv(req, bml_btl, ob1x_rndv_first_size(bml_btl->btl), 0);
}

/*
 * A buffered send that will need the attached buffer is copied there before
 * it draws its sequence number. A send refused for lack of room then costs
 * nothing: no sequence slot to fill with a VOID, no message at all. (An
 * application that retries refused sends in a loop would otherwise send a
 * VOID per try, and the receiver would hold each one until its turn.)
 */
int ob1x_send_request_begin_buffered(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl,
                                     ob1x_protocol_t proto)
{
    int rc;

    ob1x_send_request_reset(req, 0); /* its sequence number comes once the copy is made */
    rc = bsend_copy(req);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        return rc;
    }
    req->seq = (uint16_t) ob1x_send_request_draw_seq(req);
    /* Packed: the start sends the rendezvous or queues, it cannot fail. */
    return ob1x_send_request_start_or_queue(req, bml_btl, proto);
}

/* ------------------------------------------------------------- pipeline */

/* The BTL for the next FRAG of `size` bytes: of the first
 * pml_ob1x_max_send_per_range BTLs of btl_send, the one whose bytes of this
 * message stay the smallest share of its bandwidth once it carries them. */
static mca_bml_base_btl_t *frag_btl(ob1x_send_request_t *req, size_t remaining, int *index)
{
    mca_bml_base_btl_array_t *send = &req->endpoint->btl_send;
    size_t n = mca_bml_base_btl_array_get_size(send);
    double best = 0;

    *index = 0;
    if (n > (size_t) mca_pml_ob1x.params.max_send_per_range) {
        n = (size_t) mca_pml_ob1x.params.max_send_per_range;
    }
    if (n > OB1X_MAX_RDMA_BTLS) {
        n = OB1X_MAX_RDMA_BTLS;
    }
    for (size_t i = 0; n > 1 && i < n; ++i) {
        const mca_btl_base_module_t *btl = mca_bml_base_btl_array_get_index(send, i)->btl;
        size_t size = btl->btl_max_send_size - sizeof(ob1x_hdr_frag_t);
        double share = (double) (req->frag_bytes[i] + (size < remaining ? size : remaining)) /
                       ((double) btl->btl_bandwidth + 1);
        if (0 == i || share < best) {
            best = share;
            *index = (int) i;
        }
    }
    return mca_bml_base_btl_array_get_index(send, *index);
}

/* Hand one FRAG to a BTL. Returns false when resources ran out. */
static bool send_one_frag(ob1x_send_request_t *req)
{
    size_t remaining = req->frag_end - req->offset;
    int index;
    mca_bml_base_btl_t *bml_btl = frag_btl(req, remaining, &index);
    mca_btl_base_module_t *btl = bml_btl->btl;
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
    /* a device buffer staged piece by piece: its copy must have reached
     * this FRAG's bytes (else later, as when out of resources) */
    if (OPAL_UNLIKELY(NULL != req->cuda_pieces) &&
        !ob1x_cuda_send_staged(req, req->offset + size)) {
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
    req->frag_bytes[index] += size;
    ob1x_btl_count(btl, size);
    /* Advanced only once the FRAG is out: a completion in another thread
     * reads it to decide whether to call the scheduler, and must never see
     * the end of the message before it is really all handed out. */
    req->offset += size;
    return true;
}

/* A range waiting for FRAGs: the request's own one, or allocated when
 * that is taken (ranges of RDMA given up). */
typedef struct ob1x_frag_range frag_range_t;

static OBJ_CLASS_INSTANCE(frag_range_t, opal_list_item_t, NULL, NULL);

void ob1x_send_request_add_range(ob1x_send_request_t *req, size_t offset, size_t length)
{
    frag_range_t *r;

    OPAL_THREAD_LOCK(&req->range_lock);
    if (!req->range0_used) {
        req->range0_used = true;
        r = &req->range0;
    } else if (OPAL_UNLIKELY(NULL == (r = OBJ_NEW(frag_range_t)))) {
        OPAL_THREAD_UNLOCK(&req->range_lock);
        ob1x_send_fatal(req->base.req_base.req_proc, OMPI_ERR_OUT_OF_RESOURCE);
        return;
    }
    r->offset = offset;
    r->length = length;
    opal_list_append(&req->ranges, &r->super);
    OPAL_THREAD_ADD_FETCH32(&req->ranges_pending, 1);
    OPAL_THREAD_UNLOCK(&req->range_lock);
}

/* The current range is sent: take the next one, if any. Only the
 * scheduler (one thread at a time) moves offset and frag_end. */
static bool next_range(ob1x_send_request_t *req)
{
    frag_range_t *r;

    if (req->offset < req->frag_end) {
        return true;
    }
    if (0 == req->ranges_pending) {
        return false;
    }
    OPAL_THREAD_LOCK(&req->range_lock);
    r = (frag_range_t *) opal_list_remove_first(&req->ranges);
    if (NULL != r) {
        /* frag_end first: a completion reading offset < frag_end in another
         * thread must not see the new offset with the old end */
        req->frag_end = r->offset + r->length;
        req->offset = r->offset;
        if (r == &req->range0) {
            req->range0_used = false;
        } else {
            OBJ_RELEASE(r);
        }
    }
    OPAL_THREAD_UNLOCK(&req->range_lock);
    if (NULL == r) {
        return false;
    }
    OPAL_THREAD_ADD_FETCH32(&req->ranges_pending, -1);
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
        while (req->frags_in_flight < mca_pml_ob1x.params.send_pipeline_depth &&
               OB1X_SEND_IDLE == req->state && next_range(req)) {
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

/* An ACK: the answer to a RNDV (holds a unit of `outstanding`), or a
 * further range (ACK_MORE). Either may name bytes to send by FRAGs. */
void ob1x_send_request_acked(ob1x_send_request_t *req, const ob1x_hdr_ack_t *ack)
{
    bool answer = !(ack->common.flags & OB1X_HDR_FLAG_ACK_MORE);

    OPAL_THREAD_ADD_FETCH64(&req->outstanding, 1); /* live for the pass */
    req->dst_req = ack->dst_req;
    if (OPAL_UNLIKELY(NULL != req->cuda_reg) && ack->length > 0 &&
        OMPI_SUCCESS != ob1x_cuda_send_stage_late(req)) {
        ob1x_send_fatal(req->base.req_base.req_proc, OMPI_ERROR);
    }
    if (ack->length > 0) {
        ob1x_send_request_add_range(req, (size_t) ack->offset, (size_t) ack->length);
    }
    if (frags_left(req)) {
        ob1x_send_request_schedule(req);
    }
    ob1x_send_request_subtract(req, answer ? 2 : 1);
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Send requests, and how every entry point starts a message: it asks the
 * one selector (ob1x_protocol_select, pml_ob1x_protocol.h) and calls the
 * chosen protocol's start (a row of ob1x_protocols[], out of line in
 * pml_ob1x_send_eager.c or pml_ob1x_send_pipeline.c).
 */
#ifndef PML_OB1X_SENDREQ_H
#define PML_OB1X_SENDREQ_H

#include "ompi_config.h"

#include "opal/datatype/opal_convertor.h"
#include "opal/runtime/opal_params.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/bml/bml.h"
#include "ompi/mca/pml/base/pml_base_sendreq.h"

#include "pml_ob1x.h"
#include "pml_ob1x_comm.h"
#include "pml_ob1x_cuda.h"
#include "pml_ob1x_hdr.h"
#include "pml_ob1x_protocol.h"
#include "pml_ob1x_rdma.h"

BEGIN_C_DECLS

/* Where a request that went to the pending list must resume. */
typedef enum ob1x_send_state {
    OB1X_SEND_IDLE,
    OB1X_SEND_START_PENDING,    /* its first fragment could not be handed to a BTL */
    OB1X_SEND_SCHEDULE_PENDING, /* pipeline fragments are waiting for BTL resources */
} ob1x_send_state_t;

typedef enum ob1x_cancel_state {
    OB1X_CANCEL_NONE,
    OB1X_CANCEL_ASKED, /* CANCEL sent, CANCEL_ACK not yet received */
    OB1X_CANCEL_DONE,  /* receiver withdrew the message */
} ob1x_cancel_state_t;

typedef struct ob1x_send_request {
    mca_pml_base_send_request_t base;
    mca_bml_base_endpoint_t *endpoint;
    ob1x_proc_t *oproc;
    uint16_t seq;
    ob1x_protocol_t protocol;
    ob1x_send_state_t state;
    volatile int32_t cancel_state;
    volatile int32_t mpi_done;    /* 1 once the MPI request is complete (claimed atomically) */
    bool bsend_packed;            /* payload lives in the MPI_Buffer_attach buffer */
    bool convertor_on_copy;       /* the convertor reads that copy (re-prepare to restart) */
    size_t rndv_bytes;            /* payload carried by the RNDV */
    size_t offset;                /* packed bytes handed to BTLs so far */
    uint64_t dst_req;             /* receiver's request, from the ACK */
    volatile int64_t outstanding; /* bytes not yet locally complete, +1 until ACKed */
    volatile int32_t frags_in_flight;
    volatile int32_t schedule_lock; /* >0 while some thread runs the scheduler */
    volatile int32_t release_bits;  /* OB1X_REL_* as for receive requests */
    /* FRAGs go out for [offset, frag_end); further ranges (the ACK's, and
     * RDMA ranges given up) wait in `ranges` (pml_ob1x_send_pipeline.c). */
    size_t frag_end;
    volatile int32_t ranges_pending;
    opal_list_t ranges;
    /* The range of the ACK that answers the RNDV, kept here: the common
     * case costs no allocation. */
    struct ob1x_frag_range {
        opal_list_item_t super;
        size_t offset;
        size_t length;
    } range0;
    bool range0_used;
    opal_mutex_t range_lock;
    size_t frag_bytes[OB1X_MAX_RDMA_BTLS]; /* FRAG bytes per BTL of btl_send, for the shares */
    /* RDMA: the BTLs the sender registered its buffer with (rget, rput). */
    int rdma_cnt;
    ob1x_rdma_btl_t rdma[OB1X_MAX_RDMA_BTLS];
    /* A device (CUDA) buffer (pml_ob1x_cuda.c): the user's address (NULL
     * for host buffers), its host copy when staged, and its device
     * registration when it goes by a device RGET. */
    const void *cuda_user;
    void *cuda_stage;
    mca_btl_base_registration_handle_t *cuda_reg;
    mca_bml_base_btl_t *cuda_btl;
    /* The copies to cuda_stage when they run piece by piece, ahead of the
     * FRAGs that read them (NULL: the copy was made whole). */
    struct ob1x_cuda_pieces *cuda_pieces;
} ob1x_send_request_t;

OBJ_CLASS_DECLARATION(ob1x_send_request_t);

/* The one descriptor of an eager message, room for the MATCH header first:
 * prepared on the user data (in-place BTLs) or allocated and packed. NULL
 * when the BTL has no room now. Used with and without a request. */
mca_btl_base_descriptor_t *ob1x_eager_des(mca_bml_base_btl_t *bml_btl, opal_convertor_t *conv,
                                          size_t size, bool prepared);

/* Does an eager descriptor carry its own copy of the payload? Then the
 * user's buffer is free as soon as the BTL has accepted the descriptor, not
 * only when the BTL calls back (shared-memory BTLs call back when the
 * receiver hands the fragment back). One segment holding our header and the
 * whole payload cannot be the user's memory: the header sits in front. */
static inline bool ob1x_eager_des_copied(const mca_btl_base_descriptor_t *des, size_t size)
{
    return 1 == des->des_segment_count && des->des_segments[0].seg_len == OB1X_HDR_MATCH_LEN + size;
}

/* des_cbfunc of a descriptor that holds one unit of `outstanding` (an
 * eager message's, an RGET's) (pml_ob1x_send_eager.c). */
void ob1x_send_one_done(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                        mca_btl_base_descriptor_t *des, int status);

/* Protocol starts, one per row of ob1x_protocols[] (pml_ob1x_send_eager.c,
 * pml_ob1x_send_pipeline.c). Each returns OMPI_SUCCESS, or
 * OMPI_ERR_OUT_OF_RESOURCE when the caller should queue the request. */
int ob1x_send_start_eager_immediate(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl);
int ob1x_send_start_eager_prepared(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl);
int ob1x_send_start_eager_allocated(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl);
int ob1x_send_start_sendrecv_pipeline(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl);
int ob1x_send_start_buffered_pipeline(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl);
int ob1x_send_start_rget(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl);
int ob1x_send_start_rput(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl);
int ob1x_send_start_rdma_pipeline(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl);
/* The RNDV that opens both pipelines, with `first` payload bytes. */
int ob1x_send_rndv(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl, size_t first,
                   uint8_t flags);
/* The same for protocol `proto` (rput, rdma_pipeline: flags CONTIG/PIN). */
int ob1x_send_rndv_as(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl, size_t first,
                      uint8_t flags, ob1x_protocol_t proto);
/* Bytes [offset, offset + length) go by FRAGs too; the caller holds a unit
 * of `outstanding` (pml_ob1x_send_pipeline.c). */
void ob1x_send_request_add_range(ob1x_send_request_t *req, size_t offset, size_t length);
/* A PUT from the receiver (pml_ob1x_send_put.c) and a FIN of its get
 * (pml_ob1x_send_rget.c). */
void ob1x_send_request_put(ob1x_send_request_t *req, const ob1x_hdr_put_t *put);
void ob1x_send_request_fin(ob1x_send_request_t *req, const ob1x_hdr_fin_t *fin);

/* A non-blocking eager send that left without a request while the BTL
 * still holds its descriptor: req (made afterwards, already reset) completes
 * when the descriptor does. Single-threaded progress only: nothing may call
 * the descriptor back between the send and this call. */
void ob1x_send_request_adopt_eager(ob1x_send_request_t *req, mca_btl_base_descriptor_t *des,
                                   ob1x_protocol_t proto);
void ob1x_send_request_reprepare(ob1x_send_request_t *req);
/* ob1x_send_request_begin for a buffered send that needs the attached
 * buffer and has no sequence number yet. */
int ob1x_send_request_begin_buffered(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl,
                                     ob1x_protocol_t proto);
/* ob1x_send_request_start for a start that waited in the pending list. */
int ob1x_send_request_restart(ob1x_send_request_t *req);
/* The caller must hold a unit of `outstanding` across the call (the ACK,
 * a FRAG's completion, or one taken for it): the pass reads and writes the
 * request after handing FRAGs to BTLs, which may complete them in other
 * threads. Returns true when the call put the request on the pending list
 * (a BTL ran out of resources with nothing in flight). */
bool ob1x_send_request_schedule(ob1x_send_request_t *req);
/* Fill the sequence slot of a send that failed before sending anything. */
void ob1x_send_request_void(ob1x_send_request_t *req);
/* Back to the free list; only for requests nothing else references. */
void ob1x_send_request_release(ob1x_send_request_t *req);
void ob1x_send_request_acked(ob1x_send_request_t *req, const ob1x_hdr_ack_t *ack);
void ob1x_send_request_cancel_answer(ob1x_send_request_t *req, bool cancelled);
void ob1x_send_request_mpi_complete(ob1x_send_request_t *req);
void ob1x_send_request_subtract(ob1x_send_request_t *req, int64_t done);
void ob1x_send_request_queue(ob1x_send_request_t *req, ob1x_send_state_t state);
/* A queued start that progress could not start either: back in front. */
void ob1x_send_request_requeue_start(ob1x_send_request_t *req);
/* The PML is done with the request (pml_ob1x_sendreq.c). */
void ob1x_send_request_pml_complete(ob1x_send_request_t *req);
/* req_cancel of a send request (pml_ob1x_send_cancel.c). */
int ob1x_send_request_cancel(struct ompi_request_t *request, int complete);

static inline void ob1x_send_request_fill_match(ob1x_hdr_match_t *hdr,
                                                const ob1x_send_request_t *req, uint8_t type,
                                                uint8_t flags)
{
    const struct ompi_communicator_t *comm = req->base.req_base.req_comm;
    ob1x_hdr_match_init(hdr, type, flags, (uint16_t) comm->c_contextid, req->seq, comm->c_my_rank,
                        req->base.req_base.req_tag);
}

/* ------------------------------------------------------------------
 * Request set-up, inline: every request-path send runs it, and on this
 * path the cost is in stores and calls more than in instructions.
 * ------------------------------------------------------------------ */

/* A request from the free list, initialised for one message or a persistent
 * send (then inactive until MPI_Start). */
static inline __opal_attribute_always_inline__ int
ob1x_send_request_create(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst,
                         int tag, mca_pml_base_send_mode_t mode, struct ompi_communicator_t *comm,
                         bool persistent, ob1x_send_request_t **out)
{
    ob1x_comm_peer_t *peer = ob1x_peer(comm, dst);
    ob1x_send_request_t *req;

    if (OPAL_UNLIKELY(NULL == peer->endpoint)) {
        return OMPI_ERR_UNREACH;
    }
    req = (ob1x_send_request_t *) opal_free_list_get(&mca_pml_ob1x.send_requests);
    if (OPAL_UNLIKELY(NULL == req)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    req->endpoint = peer->endpoint;
    req->oproc = peer->oproc;
    req->base.req_base.req_proc = peer->oproc->proc;
    MCA_PML_BASE_SEND_REQUEST_INIT(&req->base, buf, count, dtype, dst, tag, comm, mode, persistent,
                                   0);
    req->convertor_on_copy = false;
    /* An inactive persistent request is finished as far as the PML goes. */
    req->release_bits = persistent ? OB1X_REL_PML_DONE : 0;
    req->base.req_base.req_pml_complete = persistent;
    *out = req;
    return OMPI_SUCCESS;
}

/* Back to the start of the message after a failed attempt, so that the
 * next protocol (or the retry) packs from byte 0. A zero-byte request has no
 * prepared convertor. */
static inline void ob1x_send_request_rewind(ob1x_send_request_t *req)
{
    size_t zero = 0;
    if (req->base.req_bytes_packed > 0) {
        opal_convertor_set_position(&req->base.req_base.req_convertor, &zero);
    }
}

/* The next sequence number of the message's peer on its communicator. */
static inline int ob1x_send_request_draw_seq(const ob1x_send_request_t *req)
{
    return ob1x_peer_draw_seq(
        &ob1x_comm_of(req->base.req_base.req_comm)->peers[req->base.req_base.req_peer]);
}

/* Activate for one (re)start; seq < 0 draws the next sequence number for
 * the peer. */
static inline __opal_attribute_always_inline__ void
ob1x_send_request_reset(ob1x_send_request_t *req, int seq)
{
    ompi_request_t *ompi = &req->base.req_base.req_ompi;

    req->base.req_base.req_pml_complete = false;
    ompi->req_complete = REQUEST_PENDING;
    ompi->req_state = OMPI_REQUEST_ACTIVE;
    ompi->req_status._cancelled = 0;
    ompi->req_status.MPI_ERROR = OMPI_SUCCESS;
    if (OPAL_UNLIKELY(req->convertor_on_copy)) {
        ob1x_send_request_reprepare(req);
    } else if (OPAL_UNLIKELY(0 != req->base.req_base.req_convertor.bConverted)) {
        ob1x_send_request_rewind(req);
    }
    if (seq < 0) {
        seq = ob1x_send_request_draw_seq(req);
    }
    req->seq = (uint16_t) seq;
    req->state = OB1X_SEND_IDLE;
    req->cancel_state = OB1X_CANCEL_NONE;
    req->mpi_done = 0;
    req->bsend_packed = false;
    req->rndv_bytes = 0;
    req->offset = 0;
    req->dst_req = 0;
    req->protocol = OB1X_PROTO_COUNT;
    req->outstanding = (int64_t) req->base.req_bytes_packed;
    req->frags_in_flight = 0;
    req->schedule_lock = 0;
    req->release_bits &= OB1X_REL_FREED;
    req->frag_end = 0;
    req->ranges_pending = 0;
    req->range0_used = false;
    req->rdma_cnt = 0;
}

/* Payload bytes that fit in the first fragment of a rendezvous on this BTL. */
static inline size_t ob1x_rndv_first_size(const mca_btl_base_module_t *btl)
{
    size_t limit = mca_pml_ob1x.params.rndv_eager_limit ? mca_pml_ob1x.params.rndv_eager_limit
                                                        : btl->btl_rndv_eager_limit;
    if (limit > btl->btl_eager_limit) {
        limit = btl->btl_eager_limit;
    }
    return limit > sizeof(ob1x_hdr_rndv_t) ? limit - sizeof(ob1x_hdr_rndv_t) : 0;
}

static inline size_t ob1x_eager_max(const mca_btl_base_module_t *btl)
{
    return btl->btl_eager_limit - OB1X_HDR_MATCH_LEN;
}

/* The selector's view of one message on one BTL. */
static inline __opal_attribute_always_inline__ void
ob1x_proto_in_init(ob1x_proto_in_t *in, const mca_btl_base_module_t *btl, size_t size,
                   mca_pml_base_send_mode_t mode, const ob1x_proc_t *oproc)
{
    in->size = size;
    in->eager_max = ob1x_eager_max(btl);
    in->sendi_max = mca_pml_ob1x.params.sendi_max;
    in->sendi = NULL != btl->btl_sendi;
    in->inplace = 0 != (btl->btl_flags & MCA_BTL_FLAGS_SEND_INPLACE);
    in->synchronous = MCA_PML_BASE_SEND_SYNCHRONOUS == mode;
    in->buffered = MCA_PML_BASE_SEND_BUFFERED == mode;
    in->congested = 0 != oproc->congested;
}

/* The selector's view of the RDMA BTLs of the peer, for a message above
 * the eager size (the only ones that read it). */
static inline void ob1x_proto_in_rdma(ob1x_proto_in_t *in, ob1x_send_request_t *req)
{
    const ob1x_rdma_peer_btl_t *r = NULL;

    in->contiguous = !opal_convertor_need_buffers(&req->base.req_base.req_convertor);
    in->get = in->put = in->leave_pinned = in->prefer_copy = false;
    in->min_rdma_pipeline = 0;
    if (in->contiguous && !in->buffered) {
        r = ob1x_rdma_btl_first(ob1x_rdma_peer(req->oproc, req->endpoint));
    }
    in->rdma = NULL != r;
    if (NULL == r) {
        return;
    }
    in->get = 0 != (r->can & MCA_BTL_FLAGS_GET);
    in->put = 0 != (r->can & MCA_BTL_FLAGS_PUT);
    /* set by the user, or "auto" turned on by the registration cache */
    in->leave_pinned = 1 == opal_leave_pinned || ob1x_reg_leave_pinned();
    in->min_rdma_pipeline = r->bml_btl->btl->btl_min_rdma_pipeline_size;
    in->prefer_copy = ob1x_rdma_prefer_copy(r, in->size);
}

/* A message whose bytes may be read only in order, through the convertor
 * (a device buffer staged piece by piece, pml_ob1x_cuda.c): no RDMA BTL is
 * offered, so the selector takes the send/recv pipeline. */
static inline void ob1x_proto_in_no_rdma(ob1x_proto_in_t *in)
{
    in->contiguous = true;
    in->rdma = in->get = in->put = in->leave_pinned = in->prefer_copy = false;
    in->min_rdma_pipeline = 0;
}

/* Start with a protocol already chosen for this BTL (a request-less send
 * that could not run it hands it over). Not eager immediate: that one
 * never needs a request. */
static inline int ob1x_send_request_start_as(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl,
                                             ob1x_protocol_t proto)
{
    return ob1x_protocols[proto].start(req, bml_btl);
}

/* Choose the protocol of the request's message on bml_btl and start it.
 * A refused immediate send goes on with the next row. */
static inline int ob1x_send_request_start_on(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl)
{
    ob1x_proto_in_t in;
    ob1x_protocol_t proto;

    if (OPAL_UNLIKELY(NULL != req->cuda_reg && NULL == req->cuda_stage)) {
        return ob1x_send_start_rget(req, bml_btl); /* the device RGET */
    }
    ob1x_proto_in_init(&in, bml_btl->btl, req->base.req_bytes_packed, req->base.req_send_mode,
                       req->oproc);
    if (in.size > in.eager_max) {
        if (OPAL_LIKELY(NULL == req->cuda_pieces)) {
            ob1x_proto_in_rdma(&in, req);
        } else {
            ob1x_proto_in_no_rdma(&in); /* read piece by piece, by FRAGs */
        }
    }
    proto = ob1x_protocol_select(&in);
    if (OB1X_PROTO_EAGER_IMMEDIATE == proto) {
        if (OPAL_LIKELY(OMPI_SUCCESS == ob1x_send_start_eager_immediate(req, bml_btl))) {
            return OMPI_SUCCESS;
        }
        proto = ob1x_protocol_after_immediate(&in);
    }
    return ob1x_send_request_start_as(req, bml_btl, proto);
}

/* The same on the next BTL of the peer. */
static inline int ob1x_send_request_start(ob1x_send_request_t *req)
{
    return ob1x_send_request_start_on(
        req, mca_bml_base_btl_array_get_next(&req->endpoint->btl_eager));
}

/* Start (as chosen; chosen now on bml_btl when proto is OB1X_PROTO_COUNT,
 * on the next BTL when bml_btl is NULL too), or queue for progress to
 * start when the BTL is out of resources or earlier sends to the peer wait
 * there. */
static inline int ob1x_send_request_start_or_queue(ob1x_send_request_t *req,
                                                   mca_bml_base_btl_t *bml_btl,
                                                   ob1x_protocol_t proto)
{
    int rc = OMPI_ERR_OUT_OF_RESOURCE;

    /* Earlier sends to the peer that wait for BTL room go first. */
    if (OPAL_LIKELY(0 == req->oproc->starts_queued)) {
        rc = NULL == bml_btl                ? ob1x_send_request_start(req)
             : OB1X_PROTO_COUNT == proto ? ob1x_send_request_start_on(req, bml_btl)
                                         : ob1x_send_request_start_as(req, bml_btl, proto);
    }
    if (OPAL_UNLIKELY(OMPI_ERR_OUT_OF_RESOURCE == rc)) {
        ob1x_send_request_queue(req, OB1X_SEND_START_PENDING);
        rc = OMPI_SUCCESS;
    }
    return rc;
}

/* Does a buffered send need the attached buffer on every BTL it may start
 * on (larger than each one's eager limit)? */
static inline bool ob1x_bsend_needs_buffer(ob1x_send_request_t *req)
{
    mca_bml_base_btl_array_t *eager = &req->endpoint->btl_eager;
    size_t n = mca_bml_base_btl_array_get_size(eager);

    if (MCA_PML_BASE_SEND_BUFFERED != req->base.req_send_mode || 0 == req->base.req_bytes_packed) {
        return false;
    }
    for (size_t i = 0; i < n; ++i) {
        if (req->base.req_bytes_packed <=
            ob1x_eager_max(mca_bml_base_btl_array_get_index(eager, i)->btl)) {
            return false;
        }
    }
    return true;
}

/* Activate (seq as for ob1x_send_request_reset) and start or queue, with
 * the protocol chosen for bml_btl, or chosen now when bml_btl is NULL. On
 * an error nothing is in flight and the request is not complete; the
 * sequence slot, if one was drawn, has been filled with a VOID. */
static inline int ob1x_send_request_begin(ob1x_send_request_t *req, int seq,
                                          mca_bml_base_btl_t *bml_btl, ob1x_protocol_t proto)
{
    int rc;

    if (OPAL_UNLIKELY(seq < 0 && ob1x_bsend_needs_buffer(req))) {
        return ob1x_send_request_begin_buffered(req, bml_btl, proto);
    }
    ob1x_send_request_reset(req, seq);
    rc = ob1x_send_request_start_or_queue(req, bml_btl, proto);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        ob1x_send_request_void(req);
    }
    return rc;
}

END_C_DECLS

#endif /* PML_OB1X_SENDREQ_H */

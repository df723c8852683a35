/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * MPI_Send / MPI_Isend / MPI_Send_init entry points. Every send asks the
 * selector (pml_ob1x_protocol.h) once, before any request exists. The
 * eager protocols run here without a request: the immediate send always,
 * a send that fits one descriptor unless the BTL keeps that descriptor past
 * the call and the send is non-blocking. Anything else goes to the request
 * path with the protocol, BTL and sequence number chosen here.
 */
#include "ompi_config.h"

#include <string.h>

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/bml/base/base.h"
#include "ompi/mca/rte/rte.h"

#include "pml_ob1x.h"
#include "pml_ob1x_monitor.h"
#include "pml_ob1x_sendreq.h"

/* Eager Isends to a peer that go request-first after one needed a late
 * request; then the request-less path is tried again. */
#define OB1X_LATE_BACKOFF 64

/* The arguments of one send, as the request-less paths need them. */
typedef struct send_args {
    const void *buf;
    size_t count;
    struct ompi_datatype_t *dtype;
    int dst;
    int tag;
    mca_pml_base_send_mode_t mode;
    struct ompi_communicator_t *comm;
} send_args_t;

/* Called by the BTL when a descriptor sent without a request is locally
 * complete: its cbdata is a flag on the sender's stack, or NULL when the
 * descriptor held a copy of the data and nobody waits for it. */
static void requestless_frag_done(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                                  mca_btl_base_descriptor_t *des, int status)
{
    (void) btl;
    (void) ep;
    if (OPAL_UNLIKELY(OMPI_SUCCESS != status)) {
        ob1x_send_fatal(NULL, status);
    }
    if (NULL != des->des_cbdata) {
        *(volatile bool *) des->des_cbdata = true;
    }
}

/*
 * The BTL took a non-blocking send's descriptor but will call back later:
 * make the request now and hand it the descriptor. If no request can be
 * had, wait for the descriptor instead (correct, only slower).
 */
static int adopt_late(const send_args_t *a, int seq, mca_btl_base_descriptor_t *des,
                      ob1x_protocol_t proto, volatile bool *done, ompi_request_t **request)
{
    ob1x_send_request_t *req = NULL;

    /* This BTL keeps descriptors for now (a FIFO, a full ring, a socket
     * that would block): for the next sends to this peer the request
     * first is cheaper than a request after the fact. */
    ob1x_peer(a->comm, a->dst)->oproc->late_backoff = OB1X_LATE_BACKOFF;

    if (OMPI_SUCCESS != ob1x_send_request_create(a->buf, a->count, a->dtype, a->dst, a->tag,
                                                 a->mode, a->comm, false, &req)) {
        while (!*done) {
            opal_progress();
        }
        *request = &ompi_request_empty;
        return OMPI_SUCCESS;
    }
    ob1x_send_request_reset(req, seq);
    ob1x_send_request_adopt_eager(req, des, proto);
    ob1x_count_event(OB1X_EV_LATE_REQUEST);
    *request = (ompi_request_t *) req;
    return OMPI_SUCCESS;
}

/*
 * Eager prepared or allocated without a request. The send is finished once
 * the BTL has the descriptor if the descriptor holds a copy of the data
 * (every allocated one; a prepared one from a BTL that copied), or if the
 * BTL completed it at once. Otherwise the data is still read from the
 * user's buffer: a blocking send (request NULL) waits on a flag on its
 * stack, a non-blocking one gets a request after the fact. Returns
 * OMPI_ERR_OUT_OF_RESOURCE, having sent nothing, when the BTL has no
 * descriptor.
 */
static int send_eager_requestless(mca_bml_base_btl_t *bml_btl, ob1x_protocol_t proto,
                                  const ob1x_hdr_match_t *hdr, opal_convertor_t *conv, size_t size,
                                  const send_args_t *a, int seq, ompi_request_t **request)
{
    mca_btl_base_descriptor_t *des =
        ob1x_eager_des(bml_btl, conv, size, OB1X_PROTO_EAGER_PREPARED == proto);
    volatile bool done = false;
    bool copied;
    int rc;

    if (OPAL_UNLIKELY(NULL == des)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    memcpy(des->des_segments[0].seg_addr.pval, hdr, OB1X_HDR_MATCH_LEN);
    /* Decided before the send: afterwards the descriptor is the BTL's. */
    copied = ob1x_eager_des_copied(des, size);
    des->des_cbfunc = requestless_frag_done;
    des->des_cbdata = copied ? NULL : (void *) &done;
    rc = mca_bml_base_send(bml_btl, des, OB1X_BTL_TAG(OB1X_HDR_MATCH));
    if (OPAL_UNLIKELY(rc < 0)) {
        mca_bml_base_free(bml_btl, des);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    ob1x_count_protocol(proto, size);
    /* 1: sent, and the BTL will not call back. */
    if (1 == rc || copied || done) {
        if (NULL != request) {
            *request = &ompi_request_empty;
        }
        return OMPI_SUCCESS;
    }
    if (NULL != request) {
        return adopt_late(a, seq, des, proto, &done, request);
    }
    while (!done) {
        opal_progress();
    }
    return OMPI_SUCCESS;
}

/* A convertor for one request-less send: the process's shared one when
 * no other thread can be in here and it is free, else one on the caller's
 * stack. Held until the send has left; a send started from progress while a
 * blocking send waits for its descriptor finds it busy and makes its own. */
static inline opal_convertor_t *conv_take(opal_convertor_t *mine)
{
    if (OPAL_LIKELY(!opal_using_threads() && !mca_pml_ob1x.solo_conv_busy)) {
        mca_pml_ob1x.solo_conv_busy = true;
        return &mca_pml_ob1x.solo_conv;
    }
    OBJ_CONSTRUCT(mine, opal_convertor_t);
    return mine;
}

static inline void conv_give(opal_convertor_t *conv)
{
    if (OPAL_LIKELY(conv == &mca_pml_ob1x.solo_conv)) {
        opal_convertor_cleanup(conv);
        mca_pml_ob1x.solo_conv_busy = false;
    } else {
        OBJ_DESTRUCT(conv);
    }
}

/* May a non-blocking send of this mode go out without a request? A request
 * made after the send must be attached before any other thread could
 * progress the BTL; a buffered send keeps its own path. */
static inline bool isend_requestless_eager(mca_pml_base_send_mode_t mode)
{
    return mca_pml_ob1x.params.isend_requestless && MCA_PML_BASE_SEND_BUFFERED != mode &&
           !opal_using_threads();
}

/* The protocol one send would start with, and where; handed to the request
 * path when the request-less path cannot run it. bml_btl NULL: not chosen. */
typedef struct send_choice {
    mca_bml_base_btl_t *bml_btl;
    ob1x_protocol_t proto;
    int seq; /* drawn already, or -1 */
} send_choice_t;

/* The immediate send, or OMPI_ERR_OUT_OF_RESOURCE if the BTL refused it. */
static inline int send_immediate(mca_bml_base_btl_t *bml_btl, opal_convertor_t *conv,
                                 ob1x_hdr_match_t *hdr, size_t size, ompi_request_t **request)
{
    int rc = mca_bml_base_sendi(bml_btl, conv, hdr, OB1X_HDR_MATCH_LEN, size, MCA_BTL_NO_ORDER,
                                MCA_BTL_DES_FLAGS_PRIORITY | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP,
                                OB1X_BTL_TAG(OB1X_HDR_MATCH), NULL);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    ob1x_count_protocol(OB1X_PROTO_EAGER_IMMEDIATE, size);
    if (NULL != request) {
        /* Only "cancelled" is meaningful in a send status, and this send
         * can no longer be cancelled. */
        *request = &ompi_request_empty;
    }
    return OMPI_SUCCESS;
}

/*
 * The request-less path. The selector chooses the protocol; this path runs
 * eager immediate (btl_sendi) for any send, and eager prepared/allocated
 * for a blocking standard or ready send (request NULL) and for a
 * non-blocking one in a single-threaded process. Returns OMPI_SUCCESS when
 * the message left (a non-blocking send then has *request set); otherwise
 * *choice holds what the request path must start, with its sequence
 * number if one was drawn.
 */
static inline __opal_attribute_always_inline__ int
send_requestless(const send_args_t *a, ompi_request_t **request, send_choice_t *choice)
{
    bool copy_eager =
        NULL == request ? MCA_PML_BASE_SEND_BUFFERED != a->mode : isend_requestless_eager(a->mode);
    ob1x_comm_peer_t *peer;
    ob1x_hdr_match_t hdr;
    opal_convertor_t mine, *conv;
    ob1x_proto_in_t in;
    size_t size;
    int rc;

    choice->bml_btl = NULL;
    choice->seq = -1;
    ompi_datatype_type_size(a->dtype, &size);
    size *= a->count;
    peer = ob1x_peer(a->comm, a->dst);
    if (OPAL_UNLIKELY(NULL == peer->endpoint) || peer->oproc->starts_queued > 0) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    choice->bml_btl = mca_bml_base_btl_array_get_next(&peer->endpoint->btl_eager);
    ob1x_proto_in_init(&in, choice->bml_btl->btl, size, a->mode, peer->oproc);
    if (size > in.eager_max) {
        /* a rendezvous on this BTL: the request path chooses which (the
         * RDMA inputs need its convertor) */
        choice->proto = OB1X_PROTO_COUNT;
        return OMPI_ERR_NOT_AVAILABLE;
    }
    choice->proto = ob1x_protocol_select(&in);
    if (!ob1x_protocol_requestless(choice->proto, copy_eager)) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    if (OB1X_PROTO_EAGER_IMMEDIATE != choice->proto && NULL != request &&
        peer->oproc->late_backoff > 0) {
        --peer->oproc->late_backoff;
        return OMPI_ERR_NOT_AVAILABLE;
    }
    choice->seq = (uint16_t) ob1x_peer_draw_seq(peer);
    ob1x_hdr_match_init(&hdr, OB1X_HDR_MATCH, 0, (uint16_t) a->comm->c_contextid,
                        (uint16_t) choice->seq, a->comm->c_my_rank, a->tag);

    conv = conv_take(&mine);
    opal_convertor_copy_and_prepare_for_send(peer->oproc->proc->super.proc_convertor,
                                             &a->dtype->super, a->count, a->buf, 0, conv);
    rc = OMPI_ERR_NOT_AVAILABLE;
    if (OB1X_PROTO_EAGER_IMMEDIATE == choice->proto) {
        rc = send_immediate(choice->bml_btl, conv, &hdr, size, request);
        if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
            choice->proto = ob1x_protocol_after_immediate(&in);
            if (copy_eager) {
                size_t zero = 0;
                opal_convertor_set_position(conv, &zero);
            }
        }
    }
    if (OMPI_SUCCESS != rc && copy_eager) {
        rc = send_eager_requestless(choice->bml_btl, choice->proto, &hdr, conv, size, a,
                                    choice->seq, request);
    }
    conv_give(conv);
    return rc;
}

/* The request-less path, unless the message is larger than any BTL's
 * eager payload: then it is a rendezvous, which needs a request, and the
 * request path chooses (71 of the 1190 instructions of an RGET's
 * MPI_Isend went into finding that out). */
static inline __opal_attribute_always_inline__ int
send_first(const send_args_t *a, ompi_request_t **request, send_choice_t *choice)
{
    if (a->dtype->super.size * a->count > mca_pml_ob1x.eager_max_any) {
        choice->bml_btl = NULL;
        choice->proto = OB1X_PROTO_COUNT;
        choice->seq = -1;
        return OMPI_ERR_NOT_AVAILABLE;
    }
    return send_requestless(a, request, choice);
}

/* Allocate, initialise and start a send request as chosen (or choose now
 * if the request-less path did not get that far). */
static inline __opal_attribute_always_inline__ int
send_request_begin(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst, int tag,
                   mca_pml_base_send_mode_t mode, struct ompi_communicator_t *comm,
                   const send_choice_t *choice, ob1x_send_request_t **out)
{
    ob1x_send_request_t *req = NULL;
    int rc = ob1x_send_request_create(buf, count, dtype, dst, tag, mode, comm, false, &req);

    *out = NULL;
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        return rc;
    }
    *out = req;
    rc = ob1x_send_request_begin(req, choice->seq, choice->bml_btl, choice->proto);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        /* Not started (e.g. MPI_Bsend without room): nothing is in flight. */
        ob1x_send_request_release(req);
        *out = NULL;
    }
    return rc;
}

static inline __opal_attribute_always_inline__ int
isend_body(const send_args_t *a, struct ompi_request_t **request)
{
    ob1x_send_request_t *req = NULL;
    send_choice_t choice;
    int rc;

    if (OPAL_UNLIKELY(ob1x_cuda_check()) && ob1x_cuda_is_device(a->buf, a->count, a->dtype)) {
        return ob1x_cuda_isend(a->buf, a->count, a->dtype, a->dst, a->tag, a->mode, a->comm,
                               request);
    }
    if (OPAL_LIKELY(OMPI_SUCCESS == send_first(a, request, &choice))) {
        return OMPI_SUCCESS;
    }
    rc = send_request_begin(a->buf, a->count, a->dtype, a->dst, a->tag, a->mode, a->comm, &choice,
                            &req);
    *request = (ompi_request_t *) req;
    return rc;
}

/* Monitoring records a send once it is posted, with its packed size, as
 * Open MPI's pml/monitoring does. It counts after the message has left:
 * the peer is already reading it while we count, so the record stays off
 * the round trip of a ping-pong. */
static inline void monitor_posted(const send_args_t *a)
{
    if (ob1x_monitor_on()) {
        ob1x_monitor_send(a->comm, a->dst, a->dtype->super.size * a->count, a->tag);
    }
}

int ob1x_isend(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst, int tag,
               mca_pml_base_send_mode_t mode, struct ompi_communicator_t *comm,
               struct ompi_request_t **request)
{
    const send_args_t a = {buf, count, dtype, dst, tag, mode, comm};
    int rc = isend_body(&a, request);

    monitor_posted(&a);
    return rc;
}

static inline __opal_attribute_always_inline__ int send_body(const send_args_t *a)
{
    ob1x_send_request_t *req = NULL;
    ompi_request_t *request;
    send_choice_t choice;
    int rc;

    if (OPAL_UNLIKELY(ob1x_cuda_check()) && ob1x_cuda_is_device(a->buf, a->count, a->dtype)) {
        return ob1x_cuda_isend(a->buf, a->count, a->dtype, a->dst, a->tag, a->mode, a->comm, NULL);
    }
    if (OPAL_LIKELY(OMPI_SUCCESS == send_first(a, NULL, &choice))) {
        return OMPI_SUCCESS;
    }
    rc = send_request_begin(a->buf, a->count, a->dtype, a->dst, a->tag, a->mode, a->comm, &choice,
                            &req);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        return rc;
    }
    request = (ompi_request_t *) req;
    ompi_request_wait_completion(request);
    rc = request->req_status.MPI_ERROR;
    ompi_request_free(&request);
    return rc;
}

int ob1x_send(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst, int tag,
              mca_pml_base_send_mode_t mode, struct ompi_communicator_t *comm)
{
    const send_args_t a = {buf, count, dtype, dst, tag, mode, comm};
    int rc = send_body(&a);

    monitor_posted(&a);
    return rc;
}

int ob1x_isend_init(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst, int tag,
                    mca_pml_base_send_mode_t mode, struct ompi_communicator_t *comm,
                    struct ompi_request_t **request)
{
    ob1x_send_request_t *req = NULL;
    int rc;

    if (OPAL_UNLIKELY(ob1x_cuda_check()) && ob1x_cuda_is_device(buf, count, dtype)) {
        return ob1x_cuda_isend_init(buf, count, dtype, dst, tag, mode, comm, request);
    }
    rc = ob1x_send_request_create(buf, count, dtype, dst, tag, mode, comm, true, &req);
    *request = (ompi_request_t *) req;
    return rc;
}

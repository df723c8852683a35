/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * MPI_Send / MPI_Isend / MPI_Send_init entry points. Small sends try the
 * BTL's immediate send before any request is allocated; a blocking send
 * that fits the eager limit needs no request at all.
 */
#include "ompi_config.h"

#include <string.h>

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/bml/base/base.h"
#include "ompi/mca/rte/rte.h"

#include "pml_ob1x.h"
#include "pml_ob1x_sendreq.h"

/* Called by the BTL when a blocking send's descriptor is locally complete. */
static void blocking_frag_done(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                               mca_btl_base_descriptor_t *des, int status)
{
    (void) btl;
    (void) ep;
    if (OPAL_UNLIKELY(OMPI_SUCCESS != status)) {
        opal_output(0, "pml:ob1x: a BTL failed to send (%d); the job cannot continue", status);
        ompi_rte_abort(status, NULL);
    }
    *(volatile bool *) des->des_cbdata = true;
}

/*
 * Eager prepared or allocated for MPI_Send, without a request: the caller
 * cannot return before the buffer is reusable anyway, so a flag on its
 * stack is all the completion state there is.
 */
static int send_eager_blocking(mca_bml_base_btl_t *bml_btl, const ob1x_hdr_match_t *hdr,
                               opal_convertor_t *conv, size_t size)
{
    bool prepared = 0 != size && (bml_btl->btl->btl_flags & MCA_BTL_FLAGS_SEND_INPLACE);
    mca_btl_base_descriptor_t *des = ob1x_eager_des(bml_btl, conv, size, prepared);
    volatile bool done = false;
    int rc;

    if (OPAL_UNLIKELY(NULL == des)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    memcpy(des->des_segments[0].seg_addr.pval, hdr, sizeof(*hdr));
    des->des_cbfunc = blocking_frag_done;
    des->des_cbdata = (void *) &done;
    rc = mca_bml_base_send(bml_btl, des, OB1X_BTL_TAG(OB1X_HDR_MATCH));
    if (OPAL_UNLIKELY(rc < 0)) {
        mca_bml_base_free(bml_btl, des);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    ob1x_count_protocol(prepared ? OB1X_PROTO_EAGER_PREPARED : OB1X_PROTO_EAGER_ALLOCATED, size);
    /* 1: sent and the BTL will not call back. */
    while (1 != rc && !done) {
        opal_progress();
    }
    return OMPI_SUCCESS;
}

/*
 * The request-less eager paths: eager immediate (btl_sendi) for any send
 * but MPI_Ssend, and for a blocking standard or ready send also eager
 * prepared/allocated. Returns OMPI_SUCCESS when the message left; otherwise
 * *seq holds the sequence number the request path must reuse (or -1 if none
 * was drawn).
 */
static inline __opal_attribute_always_inline__ int
send_requestless(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst, int tag,
                 struct ompi_communicator_t *comm, bool blocking, int *seq)
{
    ob1x_comm_peer_t *peer;
    mca_bml_base_btl_t *bml_btl;
    ob1x_hdr_match_t hdr;
    opal_convertor_t conv;
    size_t size, eager_max;
    bool sendi;
    int rc;

    *seq = -1;
    /* The size test first: messages past both limits pay one compare. */
    ompi_datatype_type_size(dtype, &size);
    size *= count;
    if (size > mca_pml_ob1x.params.sendi_max && !blocking) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    peer = ob1x_peer(comm, dst);
    if (OPAL_UNLIKELY(NULL == peer->endpoint) || peer->oproc->congested) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    bml_btl = mca_bml_base_btl_array_get_next(&peer->endpoint->btl_eager);
    eager_max = ob1x_eager_max(bml_btl->btl);
    sendi = NULL != bml_btl->btl->btl_sendi && size <= mca_pml_ob1x.params.sendi_max;
    if (size > eager_max || (!sendi && !blocking)) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    *seq = (uint16_t) OPAL_THREAD_FETCH_ADD32(&peer->send_seq, 1);
    ob1x_hdr_match_init(&hdr, OB1X_HDR_MATCH, 0, (uint16_t) comm->c_contextid, (uint16_t) *seq,
                        comm->c_my_rank, tag);

    OBJ_CONSTRUCT(&conv, opal_convertor_t);
    opal_convertor_copy_and_prepare_for_send(peer->proc->super.proc_convertor, &dtype->super, count,
                                             buf, 0, &conv);
    rc = OMPI_ERR_NOT_AVAILABLE;
    if (sendi) {
        rc = mca_bml_base_sendi(bml_btl, &conv, &hdr, sizeof(hdr), size, MCA_BTL_NO_ORDER,
                                MCA_BTL_DES_FLAGS_PRIORITY | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP,
                                OB1X_BTL_TAG(OB1X_HDR_MATCH), NULL);
        if (OPAL_LIKELY(OMPI_SUCCESS == rc)) {
            ob1x_count_protocol(OB1X_PROTO_EAGER_IMMEDIATE, size);
        } else if (blocking) {
            size_t zero = 0;
            opal_convertor_set_position(&conv, &zero);
        }
    }
    if (OMPI_SUCCESS != rc && blocking) {
        rc = send_eager_blocking(bml_btl, &hdr, &conv, size);
    }
    OBJ_DESTRUCT(&conv);
    return rc;
}

/* Allocate, initialise and start a send request with a given sequence. */
static inline __opal_attribute_always_inline__ int
send_request_begin(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst, int tag,
                   mca_pml_base_send_mode_t mode, struct ompi_communicator_t *comm, int seq,
                   ob1x_send_request_t **out)
{
    ob1x_send_request_t *req = NULL;
    int rc = ob1x_send_request_create(buf, count, dtype, dst, tag, mode, comm, false, &req);

    *out = NULL;
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        return rc;
    }
    ob1x_send_request_reset(req, seq);
    *out = req;
    rc = ob1x_send_request_start_or_queue(req);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        /* Not started (e.g. MPI_Bsend without room): nothing is in flight. */
        ob1x_send_request_void(req);
        ob1x_send_request_release(req);
        *out = NULL;
    }
    return rc;
}

int ob1x_isend(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst, int tag,
               mca_pml_base_send_mode_t mode, struct ompi_communicator_t *comm,
               struct ompi_request_t **request)
{
    ob1x_send_request_t *req = NULL;
    int seq = -1, rc;

    if (MCA_PML_BASE_SEND_SYNCHRONOUS != mode) {
        rc = send_requestless(buf, count, dtype, dst, tag, comm, false, &seq);
        if (OPAL_LIKELY(OMPI_SUCCESS == rc)) {
            /* Only "cancelled" is meaningful in a send status, and this
             * send can no longer be cancelled. */
            *request = &ompi_request_empty;
            return OMPI_SUCCESS;
        }
    }
    rc = send_request_begin(buf, count, dtype, dst, tag, mode, comm, seq, &req);
    *request = (ompi_request_t *) req;
    return rc;
}

int ob1x_send(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst, int tag,
              mca_pml_base_send_mode_t mode, struct ompi_communicator_t *comm)
{
    ob1x_send_request_t *req = NULL;
    ompi_request_t *request;
    int seq = -1, rc;

    if (MCA_PML_BASE_SEND_SYNCHRONOUS != mode) {
        rc = send_requestless(buf, count, dtype, dst, tag, comm, MCA_PML_BASE_SEND_BUFFERED != mode,
                              &seq);
        if (OPAL_LIKELY(OMPI_SUCCESS == rc)) {
            return OMPI_SUCCESS;
        }
    }
    rc = send_request_begin(buf, count, dtype, dst, tag, mode, comm, seq, &req);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        return rc;
    }
    request = (ompi_request_t *) req;
    ompi_request_wait_completion(request);
    rc = request->req_status.MPI_ERROR;
    ompi_request_free(&request);
    return rc;
}

int ob1x_isend_init(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst, int tag,
                    mca_pml_base_send_mode_t mode, struct ompi_communicator_t *comm,
                    struct ompi_request_t **request)
{
    ob1x_send_request_t *req = NULL;
    int rc = ob1x_send_request_create(buf, count, dtype, dst, tag, mode, comm, true, &req);

    *request = (ompi_request_t *) req;
    return rc;
}

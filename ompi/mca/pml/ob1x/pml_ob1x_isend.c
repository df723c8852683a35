/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * MPI_Send / MPI_Isend / MPI_Send_init entry points. Small sends try the
 * BTL's immediate send before any request is allocated.
 */
#include "ompi_config.h"

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/bml/base/base.h"

#include "pml_ob1x.h"
#include "pml_ob1x_sendreq.h"

/*
 * Eager immediate without a request. Returns OMPI_SUCCESS when the message
 * left; otherwise *seq holds the sequence number the caller must reuse
 * (or -1 if none was drawn).
 */
static inline int send_inline(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst,
                              int tag, struct ompi_communicator_t *comm, int *seq)
{
    ob1x_comm_peer_t *peer = ob1x_peer(comm, dst);
    mca_bml_base_btl_t *bml_btl;
    ob1x_hdr_match_t hdr;
    opal_convertor_t conv;
    size_t size;
    int rc;

    *seq = -1;
    if (OPAL_UNLIKELY(NULL == peer->endpoint) || peer->oproc->congested) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    bml_btl = mca_bml_base_btl_array_get_next(&peer->endpoint->btl_eager);
    ompi_datatype_type_size(dtype, &size);
    size *= count;
    if (NULL == bml_btl->btl->btl_sendi || size > mca_pml_ob1x.params.sendi_max ||
        size > ob1x_eager_max(bml_btl->btl)) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    *seq = (uint16_t) OPAL_THREAD_FETCH_ADD32(&peer->send_seq, 1);
    ob1x_hdr_common_init(&hdr.common, OB1X_HDR_MATCH, 0);
    hdr.ctx = (uint16_t) comm->c_contextid;
    hdr.seq = (uint16_t) *seq;
    hdr.src = comm->c_my_rank;
    hdr.tag = tag;

    OBJ_CONSTRUCT(&conv, opal_convertor_t);
    opal_convertor_copy_and_prepare_for_send(peer->proc->super.proc_convertor, &dtype->super, count,
                                             buf, 0, &conv);
    rc = mca_bml_base_sendi(bml_btl, &conv, &hdr, sizeof(hdr), size, MCA_BTL_NO_ORDER,
                            MCA_BTL_DES_FLAGS_PRIORITY | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP,
                            OB1X_BTL_TAG(OB1X_HDR_MATCH), NULL);
    OBJ_DESTRUCT(&conv);
    if (OPAL_LIKELY(OMPI_SUCCESS == rc)) {
        ob1x_count_protocol(OB1X_PROTO_EAGER_IMMEDIATE, size);
    }
    return rc;
}

/* Allocate, initialise and start a send request with a given sequence. */
static int send_request_begin(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst,
                              int tag, mca_pml_base_send_mode_t mode,
                              struct ompi_communicator_t *comm, int seq, ob1x_send_request_t **out)
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
        rc = send_inline(buf, count, dtype, dst, tag, comm, &seq);
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
    ompi_request_t *request;
    int rc = ob1x_isend(buf, count, dtype, dst, tag, mode, comm, &request);

    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc) || &ompi_request_empty == request) {
        return rc;
    }
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

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * MPI_Recv / MPI_Irecv / MPI_Recv_init / MPI_Mrecv / MPI_Imrecv entry points.
 */
#include "ompi_config.h"

#include "ompi/message/message.h"

#include "pml_ob1x.h"
#include "pml_ob1x_match.h"
#include "pml_ob1x_recvreq.h"

int ob1x_irecv_init(void *buf, size_t count, struct ompi_datatype_t *dtype, int src, int tag,
                    struct ompi_communicator_t *comm, struct ompi_request_t **request)
{
    ob1x_recv_request_t *req = ob1x_recv_request_alloc();

    if (OPAL_UNLIKELY(NULL == req)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    ob1x_recv_request_init(req, buf, count, dtype, src, tag, comm, true);
    req->release_bits = OB1X_REL_PML_DONE;
    req->base.req_base.req_pml_complete = true;
    *request = (ompi_request_t *) req;
    return OMPI_SUCCESS;
}

int ob1x_irecv(void *buf, size_t count, struct ompi_datatype_t *dtype, int src, int tag,
               struct ompi_communicator_t *comm, struct ompi_request_t **request)
{
    ob1x_recv_request_t *req = ob1x_recv_request_alloc();

    if (OPAL_UNLIKELY(NULL == req)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    ob1x_recv_request_init(req, buf, count, dtype, src, tag, comm, false);
    *request = (ompi_request_t *) req;
    ob1x_recv_request_start(req);
    return OMPI_SUCCESS;
}

/* Wait, copy the status out, free; returns the MPI error of the receive.
 * The status's MPI_ERROR field is left as the caller had it: only calls
 * that complete several requests write it (MPI standard, "Return Status"). */
static int recv_finish(ompi_request_t *request, ompi_status_public_t *status)
{
    int rc;

    ompi_request_wait_completion(request);
    rc = request->req_status.MPI_ERROR;
    if (MPI_STATUS_IGNORE != status) {
        OMPI_COPY_STATUS(status, request->req_status, false);
    }
    ompi_request_free(&request);
    return rc;
}

int ob1x_recv(void *buf, size_t count, struct ompi_datatype_t *dtype, int src, int tag,
              struct ompi_communicator_t *comm, ompi_status_public_t *status)
{
    ompi_request_t *request;
    int rc = ob1x_irecv(buf, count, dtype, src, tag, comm, &request);

    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        return rc;
    }
    return recv_finish(request, status);
}

int ob1x_imrecv(void *buf, size_t count, struct ompi_datatype_t *dtype,
                struct ompi_message_t **message, struct ompi_request_t **request)
{
    ompi_message_t *msg = *message;
    ob1x_recv_frag_t *frag = (ob1x_recv_frag_t *) msg->req_ptr;
    ob1x_recv_request_t *req = ob1x_recv_request_alloc();

    if (OPAL_UNLIKELY(NULL == req)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    ob1x_recv_request_init(req, buf, count, dtype, msg->peer, frag->hdr.match.tag, msg->comm,
                           false);
    MCA_PML_BASE_RECV_START(&req->base);
    req->msg_length = 0;
    req->bytes_received = 0;
    *request = (ompi_request_t *) req;
    ompi_message_return(msg);
    *message = MPI_MESSAGE_NULL;
    ob1x_recv_request_deliver_frag(req, frag);
    return OMPI_SUCCESS;
}

int ob1x_mrecv(void *buf, size_t count, struct ompi_datatype_t *dtype,
               struct ompi_message_t **message, ompi_status_public_t *status)
{
    ompi_request_t *request;
    int rc = ob1x_imrecv(buf, count, dtype, message, &request);

    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        return rc;
    }
    return recv_finish(request, status);
}

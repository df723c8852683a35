/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * MPI_Start / MPI_Startall for persistent requests.
 */
#include "ompi_config.h"

#include "pml_ob1x.h"
#include "pml_ob1x_monitor.h"
#include "pml_ob1x_recvreq.h"
#include "pml_ob1x_sendreq.h"

/*
 * A persistent send may be complete for MPI while the PML still uses it
 * (a buffered send draining from the attached buffer). Restarting it then
 * takes a fresh request; the old one is released when it drains.
 */
static int replace_busy_send(ompi_request_t **slot)
{
    ob1x_send_request_t *old = (ob1x_send_request_t *) *slot;
    ompi_request_t *fresh;
    const void *addr = NULL != old->cuda_user ? old->cuda_user : old->base.req_base.req_addr;
    int rc = ob1x_isend_init(addr, old->base.req_base.req_count, old->base.req_base.req_datatype,
                             old->base.req_base.req_peer, old->base.req_base.req_tag,
                             old->base.req_send_mode, old->base.req_base.req_comm, &fresh);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    /* Keep the user's Fortran handle pointing at the live request. */
    fresh->req_f_to_c_index = old->base.req_base.req_ompi.req_f_to_c_index;
    old->base.req_base.req_ompi.req_f_to_c_index = MPI_UNDEFINED;
    ompi_request_free(slot);
    *slot = fresh;
    return OMPI_SUCCESS;
}

/* Monitoring of a persistent send: each start is one message, with the
 * request's own tag and peer. */
static __opal_attribute_noinline__ void monitor_start(const ob1x_send_request_t *req)
{
    const mca_pml_base_request_t *b = &req->base.req_base;

    ob1x_monitor_send(b->req_comm, b->req_peer, req->base.req_bytes_packed, b->req_tag);
}

static int start_send(ompi_request_t **slot)
{
    ob1x_send_request_t *req = (ob1x_send_request_t *) *slot;
    int rc;

    if (OPAL_UNLIKELY(!req->base.req_base.req_pml_complete)) {
        rc = replace_busy_send(slot);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
        req = (ob1x_send_request_t *) *slot;
    }
    if (ob1x_monitor_on()) {
        monitor_start(req);
    }
    rc = OMPI_SUCCESS;
    if (OPAL_UNLIKELY(NULL != req->cuda_stage)) {
        rc = ob1x_cuda_send_restage(req); /* the device data of this start */
    }
    if (OPAL_LIKELY(OMPI_SUCCESS == rc)) {
        rc = ob1x_send_request_begin(req, -1, NULL, OB1X_PROTO_COUNT);
    }
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        /* Report through the request, as MPI_Start must leave it usable. */
        req->base.req_base.req_ompi.req_status.MPI_ERROR = rc;
        req->base.req_base.req_pml_complete = true;
        req->release_bits |= OB1X_REL_PML_DONE;
        ompi_request_complete(&req->base.req_base.req_ompi, true);
        req->mpi_done = 1;
    }
    return rc;
}

int ob1x_start(size_t count, struct ompi_request_t **requests)
{
    for (size_t i = 0; i < count; ++i) {
        mca_pml_base_request_t *base = (mca_pml_base_request_t *) requests[i];
        int rc;

        if (NULL == base || OMPI_REQUEST_PML != base->req_ompi.req_type) {
            continue;
        }
        switch (base->req_type) {
            case MCA_PML_REQUEST_SEND:
                rc = start_send(&requests[i]);
                if (OMPI_SUCCESS != rc) {
                    return rc;
                }
                break;
            case MCA_PML_REQUEST_RECV:
                ob1x_recv_request_start((ob1x_recv_request_t *) base);
                break;
            default:
                return OMPI_ERR_REQUEST;
        }
    }
    return OMPI_SUCCESS;
}

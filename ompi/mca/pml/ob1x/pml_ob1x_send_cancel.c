/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Cancel of a send: withdrawn while it waits to start, or by CANCEL /
 * CANCEL_ACK while it is a rendezvous not yet acknowledged.
 */
#include "ompi_config.h"

#include <string.h>

#include "pml_ob1x.h"
#include "pml_ob1x_ctl.h"
#include "pml_ob1x_sendreq.h"

void ob1x_send_request_cancel_answer(ob1x_send_request_t *req, bool cancelled)
{
    if (!cancelled) {
        /* Matched already: the ACK completes it as usual. */
        req->cancel_state = OB1X_CANCEL_NONE;
        return;
    }
    req->cancel_state = OB1X_CANCEL_DONE;
    req->base.req_base.req_ompi.req_status._cancelled = 1;
    /* No ACK, FRAG or FIN will ever come: drop what they would have
     * settled (an RGET expects no ACK). */
    ob1x_send_request_subtract(req, (int64_t) (req->base.req_bytes_packed - req->rndv_bytes) +
                                        (OB1X_PROTO_RGET == req->protocol ? 0 : 1));
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
        ob1x_send_request_pml_complete(req);
    }
    return taken;
}

/* The rendezvous protocols whose first message waits for a match; a
 * buffered send is complete for MPI before it starts. */
static bool ob1x_protocol_cancellable(ob1x_protocol_t proto)
{
    return OB1X_PROTO_SENDRECV_PIPELINE == proto || OB1X_PROTO_RGET == proto ||
           OB1X_PROTO_RPUT == proto || OB1X_PROTO_RDMA_PIPELINE == proto;
}

int ob1x_send_request_cancel(struct ompi_request_t *request, int complete)
{
    ob1x_send_request_t *req = (ob1x_send_request_t *) request;
    ob1x_hdr_t hdr;

    (void) complete;
    if (OPAL_UNLIKELY(OB1X_SEND_START_PENDING == req->state) && withdraw_unstarted(req)) {
        return OMPI_SUCCESS;
    }
    /* Only an unacknowledged rendezvous can be withdrawn; anything else has
     * been delivered or is being delivered, and MPI lets the cancel fail. */
    if (req->mpi_done || !ob1x_protocol_cancellable(req->protocol) || 0 != req->dst_req ||
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

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Send requests: life cycle (set-up, restart, release) and completion. Each
 * protocol family has its own file: pml_ob1x_send_eager.c,
 * pml_ob1x_send_pipeline.c; cancel is in pml_ob1x_send_cancel.c.
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

#include "pml_ob1x.h"
#include "pml_ob1x_ctl.h"
#include "pml_ob1x_sendreq.h"

static int send_request_free(struct ompi_request_t **request);

static void send_request_construct(ob1x_send_request_t *req)
{
    req->base.req_base.req_type = MCA_PML_REQUEST_SEND;
    req->base.req_base.req_ompi.req_start = ob1x_start;
    req->base.req_base.req_ompi.req_free = send_request_free;
    req->base.req_base.req_ompi.req_cancel = ob1x_send_request_cancel;
    OBJ_CONSTRUCT(&req->ranges, opal_list_t);
    OBJ_CONSTRUCT(&req->range_lock, opal_mutex_t);
    OBJ_CONSTRUCT(&req->range0, opal_list_item_t);
    req->range0_used = false;
    req->cuda_user = NULL;
    req->cuda_stage = NULL;
    req->cuda_reg = NULL;
    req->cuda_pieces = NULL;
}

static void send_request_destruct(ob1x_send_request_t *req)
{
    OPAL_LIST_DESTRUCT(&req->ranges);
    OBJ_DESTRUCT(&req->range_lock);
    OBJ_DESTRUCT(&req->range0);
}

OBJ_CLASS_INSTANCE(ob1x_send_request_t, mca_pml_base_send_request_t, send_request_construct,
                   send_request_destruct);

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
    if (OPAL_UNLIKELY(NULL != req->cuda_user)) {
        ob1x_cuda_send_release(req);
    }
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

void ob1x_send_request_pml_complete(ob1x_send_request_t *req)
{
    if (req->rdma_cnt > 0) {
        ob1x_rdma_deregister(req->rdma, req->rdma_cnt);
        req->rdma_cnt = 0;
    }
    if (OPAL_UNLIKELY(NULL != req->cuda_reg)) {
        ob1x_cuda_send_fini(req);
    }
    if (OB1X_PROTO_RGET == req->protocol) {
        OPAL_THREAD_ADD_FETCH32(&mca_pml_ob1x.rdma_live, -1);
    }
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
        ob1x_send_request_pml_complete(req);
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
        rc = ob1x_send_rndv(req, bml_btl, ob1x_rndv_first_size(bml_btl->btl), 0);
    }
    return rc;
}

/* A started send that failed before anything left still owns a sequence
 * number; the receiver must see that slot filled or it would wait forever. */
void ob1x_send_request_void(ob1x_send_request_t *req)
{
    ob1x_hdr_t hdr;

    memset(&hdr, 0, sizeof(hdr));
    ob1x_send_request_fill_match(&hdr.match, req, OB1X_HDR_MATCH, OB1X_HDR_FLAG_VOID);
    (void) ob1x_ctl_send(req->base.req_base.req_proc, &hdr);
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

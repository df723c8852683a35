/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * MPI_Iprobe / MPI_Probe / MPI_Improbe / MPI_Mprobe. A probe looks at the
 * unexpected queues only: a message that arrived ahead of its sequence is
 * not matchable yet, so probing it would break MPI ordering.
 */
#include "ompi_config.h"

#include "ompi/message/message.h"
#include "opal/runtime/opal_progress.h"

#include "pml_ob1x.h"
#include "pml_ob1x_match.h"

/* MPI_ERROR stays as the caller had it (single-completion call). */
static void probe_status(ompi_status_public_t *status, const ob1x_recv_frag_t *frag)
{
    if (MPI_STATUS_IGNORE != status) {
        status->MPI_SOURCE = frag->hdr.match.src;
        status->MPI_TAG = frag->hdr.match.tag;
        status->_ucount = ob1x_frag_msg_length(frag);
        status->_cancelled = 0;
    }
}

/* One look; with `take`, the fragment leaves the queue (matched probe). */
static ob1x_recv_frag_t *probe_once(int src, int tag, struct ompi_communicator_t *comm, bool take)
{
    ob1x_comm_t *oc = ob1x_comm_of(comm);
    ob1x_comm_peer_t *peer = NULL;
    ob1x_recv_frag_t *frag;

    OPAL_THREAD_LOCK(&oc->lock);
    frag = ob1x_unexpected_find_any(oc, src, tag, &peer);
    if (NULL != frag && take) {
        ob1x_unexpected_remove(oc, peer, frag);
    }
    OPAL_THREAD_UNLOCK(&oc->lock);
    return frag;
}

int ob1x_iprobe(int src, int tag, struct ompi_communicator_t *comm, int *matched,
                ompi_status_public_t *status)
{
    ob1x_recv_frag_t *frag = probe_once(src, tag, comm, false);

    if (NULL == frag) {
        /* Let arrivals in; a later iprobe must be able to see them. */
        opal_progress();
        frag = probe_once(src, tag, comm, false);
    }
    *matched = NULL != frag;
    if (NULL != frag) {
        probe_status(status, frag);
    }
    return OMPI_SUCCESS;
}

int ob1x_probe(int src, int tag, struct ompi_communicator_t *comm, ompi_status_public_t *status)
{
    ob1x_recv_frag_t *frag;

    while (NULL == (frag = probe_once(src, tag, comm, false))) {
        opal_progress();
    }
    probe_status(status, frag);
    return OMPI_SUCCESS;
}

static void make_message(struct ompi_communicator_t *comm, ob1x_recv_frag_t *frag,
                         struct ompi_message_t **message)
{
    ompi_message_t *msg = ompi_message_alloc();

    msg->comm = comm;
    msg->req_ptr = frag;
    msg->peer = frag->hdr.match.src;
    msg->count = ob1x_frag_msg_length(frag);
    *message = msg;
}

int ob1x_improbe(int src, int tag, struct ompi_communicator_t *comm, int *matched,
                 struct ompi_message_t **message, ompi_status_public_t *status)
{
    ob1x_recv_frag_t *frag = probe_once(src, tag, comm, true);

    if (NULL == frag) {
        opal_progress();
        frag = probe_once(src, tag, comm, true);
    }
    *matched = NULL != frag;
    if (NULL == frag) {
        *message = MPI_MESSAGE_NULL;
        return OMPI_SUCCESS;
    }
    probe_status(status, frag);
    make_message(comm, frag, message);
    ob1x_flow_release();
    return OMPI_SUCCESS;
}

int ob1x_mprobe(int src, int tag, struct ompi_communicator_t *comm, struct ompi_message_t **message,
                ompi_status_public_t *status)
{
    ob1x_recv_frag_t *frag;

    while (NULL == (frag = probe_once(src, tag, comm, true))) {
        opal_progress();
    }
    probe_status(status, frag);
    make_message(comm, frag, message);
    ob1x_flow_release();
    return OMPI_SUCCESS;
}

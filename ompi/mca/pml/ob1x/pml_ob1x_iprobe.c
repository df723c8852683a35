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

/* One look; with `take`, the fragment leaves the queue (matched probe).
 * An empty communicator is seen without the lock: a polling MPI_Iprobe
 * would otherwise contend with the thread matching arrivals for it. A
 * message that another thread is queueing right now is seen next time. */
static ob1x_recv_frag_t *probe_once(int src, int tag, struct ompi_communicator_t *comm, bool take)
{
    ob1x_comm_t *oc = ob1x_comm_of(comm);
    ob1x_comm_peer_t *peer = NULL;
    ob1x_recv_frag_t *frag;

    if (0 == *(volatile size_t *) &oc->unexpected_count) {
        return NULL;
    }
    OPAL_THREAD_LOCK(&oc->lock);
    frag = ob1x_unexpected_find_any(oc, src, tag, &peer);
    if (NULL != frag && take) {
        ob1x_unexpected_remove(oc, peer, frag);
    }
    OPAL_THREAD_UNLOCK(&oc->lock);
    return frag;
}

/*
 * MPI_Probe / MPI_Mprobe. Under threads the caller sleeps like a blocked
 * receive (Open MPI's wait: one waiting thread progresses, the others sleep)
 * until a message joins an unexpected queue of the communicator, then looks
 * again. Spinning on opal_progress instead kept up to two threads per
 * process polling beside the one progressing, each taking the matching
 * lock once per turn, on cores that also run the threads moving the data.
 */
static ob1x_recv_frag_t *probe_blocking(int src, int tag, struct ompi_communicator_t *comm,
                                        bool take)
{
    ob1x_comm_t *oc = ob1x_comm_of(comm);
    ob1x_comm_peer_t *peer = NULL;
    ob1x_probe_waiter_t w;
    ob1x_recv_frag_t *frag;

    if (!opal_using_threads()) {
        while (NULL == (frag = probe_once(src, tag, comm, take))) {
            opal_progress();
        }
        return frag;
    }
    for (;;) {
        OPAL_THREAD_LOCK(&oc->lock);
        frag = ob1x_unexpected_find_any(oc, src, tag, &peer);
        if (NULL != frag) {
            if (take) {
                ob1x_unexpected_remove(oc, peer, frag);
            }
            OPAL_THREAD_UNLOCK(&oc->lock);
            return frag;
        }
        /* Listed under the lock that queues arrivals: none can slip by. */
        WAIT_SYNC_INIT(&w.sync, 1);
        w.next = oc->probe_waiters;
        oc->probe_waiters = &w;
        OPAL_THREAD_UNLOCK(&oc->lock);
        SYNC_WAIT(&w.sync);
        WAIT_SYNC_RELEASE(&w.sync);
    }
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
    ob1x_recv_frag_t *frag = probe_blocking(src, tag, comm, false);

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
    ob1x_recv_frag_t *frag = probe_blocking(src, tag, comm, true);

    probe_status(status, frag);
    make_message(comm, frag, message);
    ob1x_flow_release();
    return OMPI_SUCCESS;
}

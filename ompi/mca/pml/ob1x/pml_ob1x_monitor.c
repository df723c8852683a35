/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pml_ob1x_monitor.c - recording into the monitoring engine from ob1x's
 * send, start and receive paths (pml_ob1x_monitor.h).
 *
 * The engine's counters of a peer are found once per communicator peer,
 * through the communicator's group and the engine's table (tens of
 * instructions), and their address kept in the communicator's peer slot:
 * the records that cannot be staged then cost one load, a branch and a few
 * adds. A receive adds its message and bytes to the sender's slot
 * (pml_ob1x_recvreq.h, while receives are counted), a send one message to
 * the receiver's run of sends of its size (pml_ob1x_monitor.h), or of its
 * histogram bin out of line; both are handed to the engine before it
 * reads, dumps or resets (ob1x_monitor_settle) and when the communicator
 * goes.
 */
#include "ompi_config.h"

#include "common_ob1x_monitoring.h"
#include "pml_ob1x_comm.h"
#include "pml_ob1x_monitor.h"

int ob1x_monitor_state = OB1X_MON_OFF;
int ob1x_monitor_recv_state = OB1X_MON_OFF;

/* The counters of rank's process (in comm's remote group), found at
 * first use and kept in the peer slot; NULL when out of memory. */
static ob1x_mon_counts_t *peer_counts(ompi_communicator_t *comm, int rank)
{
    ob1x_comm_peer_t *peer = &ob1x_comm_of(comm)->peers[rank];
    ob1x_mon_counts_t *c = __atomic_load_n(&peer->mon, __ATOMIC_ACQUIRE);

    if (NULL == c) {
        c = ob1x_mon_peer_counters(ompi_group_get_proc_name(comm->c_remote_group, rank));
        if (NULL != c) {
            /* Any thread finding them finds the same address: no lock needed. */
            __atomic_store_n(&peer->mon, c, __ATOMIC_RELEASE);
        }
    }
    return c;
}

void ob1x_monitor_msg(ompi_communicator_t *comm, int rank, size_t bytes, int tag, bool sent)
{
    ob1x_mon_counts_t *c = peer_counts(comm, rank);

    if (NULL == c) {
        return; /* out of memory: not counted */
    }
    if (sent) {
        ob1x_mon_count_send(c, bytes, tag);
    } else {
        ob1x_mon_count_recv(c, bytes, tag);
    }
}

/* Hands the receives staged in the slot to c. */
static void settle_rx(ob1x_comm_peer_t *peer, ob1x_mon_counts_t *c)
{
    ob1x_mon_count_recvs(c, peer->rx[0], peer->rx[1]);
    peer->rx[0] = peer->rx[1] = 0;
}

/* Hands the run of sends staged in the slot to c; its size stays, so
 * that the stream goes on staging inline. */
static void settle_tx(ob1x_comm_peer_t *peer, ob1x_mon_counts_t *c)
{
    uint64_t n = peer->tx[1];

    if (0 != n) {
        ob1x_mon_count_sends(c, n, n * peer->tx[0], ob1x_mon_hist_bin(peer->tx[0]));
    }
    peer->tx[1] = 0;
}

void ob1x_monitor_send_other(ompi_communicator_t *comm, int rank, size_t bytes, int tag)
{
    ob1x_comm_peer_t *peer = &ob1x_comm_of(comm)->peers[rank];
    ob1x_mon_counts_t *c;
    int bin;

    if (!ob1x_monitor_can_stage(tag, ob1x_monitor_state)) {
        ob1x_monitor_msg(comm, rank, bytes, tag, true);
        return;
    }
    if (NULL == (c = peer_counts(comm, rank))) {
        return; /* out of memory: not counted, as in ob1x_monitor_msg */
    }
    bin = ob1x_mon_hist_bin(bytes);
    if (0 != peer->tx[1] && bin == ob1x_mon_hist_bin(peer->tx[0])) {
        /* Another size of the run's bin joins the run; the bytes it has
         * beyond the run's size go to c now (unsigned: also when fewer),
         * so that the run still hands over n * tx[0]. */
        peer->tx[1] += 1;
        ob1x_mon_count_sends(c, 0, bytes - peer->tx[0], bin);
        return;
    }
    /* Another size class: the run goes, this send starts one. */
    settle_tx(peer, c);
    peer->tx[0] = bytes;
    peer->tx[1] = 1;
}

void ob1x_monitor_settle_comm(ompi_communicator_t *comm)
{
    ob1x_comm_t *oc = ob1x_comm_of(comm);

    for (int i = 0; NULL != oc && i < oc->num_peers; ++i) {
        ob1x_comm_peer_t *peer = &oc->peers[i];
        ob1x_mon_counts_t *c;

        if (0 == peer->rx[0] && 0 == peer->tx[1]) {
            continue;
        }
        if (NULL == (c = peer_counts(comm, i))) {
            continue; /* out of memory: kept for the next try */
        }
        settle_rx(peer, c);
        settle_tx(peer, c);
    }
}

/* Every communicator of the process (ob1x made the PML state of each).
 * Nothing is staged when Open MPI runs threads (ob1x_monitor_can_stage), and
 * then another thread may be freeing a communicator: no walk. */
void ob1x_monitor_settle(void)
{
    int n = opal_using_threads() ? 0 : opal_pointer_array_get_size(&ompi_mpi_communicators);

    for (int cid = 0; cid < n; ++cid) {
        ompi_communicator_t *comm = opal_pointer_array_get_item(&ompi_mpi_communicators, cid);

        if (NULL != comm) {
            ob1x_monitor_settle_comm(comm);
        }
    }
}

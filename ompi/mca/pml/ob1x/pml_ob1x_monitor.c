/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pml_ob1x_monitor.c - recording into the monitoring engine from ob1x's
 * send, start and receive paths (pml_ob1x_monitor.h).
 *
 * The engine's counters of a peer are found once per communicator peer,
 * through the communicator's group and the engine's table (tens of
 * instructions), and their address kept in the communicator's peer slot:
 * a send then costs one load, a branch and a few adds. A receive adds its
 * message and bytes to the sender's slot (pml_ob1x_recvreq.h), handed to
 * the engine before it reads, dumps or resets (ob1x_monitor_settle) and
 * when the communicator goes.
 */
#include "ompi_config.h"

#include "common_ob1x_monitoring.h"
#include "pml_ob1x_comm.h"
#include "pml_ob1x_monitor.h"

/* First message with this peer on this communicator: find, keep, count. */
void ob1x_monitor_first(ompi_communicator_t *comm, int rank, size_t bytes, int tag, bool sent)
{
    ob1x_mon_counts_t *c =
        ob1x_mon_peer_counters(ompi_group_get_proc_name(comm->c_remote_group, rank));

    if (NULL == c) {
        return;
    }
    /* Any thread finding them finds the same address: no lock needed. */
    __atomic_store_n(&ob1x_comm_of(comm)->peers[rank].mon, c, __ATOMIC_RELEASE);
    ob1x_monitor_count(c, bytes, tag, sent);
}

void ob1x_monitor_settle_comm(ompi_communicator_t *comm)
{
    ob1x_comm_t *oc = ob1x_comm_of(comm);

    for (int i = 0; NULL != oc && i < oc->num_peers; ++i) {
        ob1x_comm_peer_t *peer = &oc->peers[i];
        ob1x_mon_counts_t *c;

        if (0 == peer->rx[0]) {
            continue;
        }
        if (NULL == (c = ob1x_monitor_counts(peer))) {
            c = ob1x_mon_peer_counters(ompi_group_get_proc_name(comm->c_remote_group, i));
            if (NULL == c) {
                continue; /* out of memory: kept for the next try */
            }
            __atomic_store_n(&peer->mon, c, __ATOMIC_RELEASE);
        }
        ob1x_mon_count_recvs(c, peer->rx[0], peer->rx[1]);
        peer->rx[0] = peer->rx[1] = 0;
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

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pml_ob1x_monitor.c - recording into the monitoring engine from ob1x's
 * send, start and receive paths (pml_ob1x_monitor.h).
 *
 * The engine's counters of a peer are found once per communicator peer,
 * through the communicator's group and the engine's table (tens of
 * instructions), and their address kept in the communicator's peer slot:
 * each message then costs one load, a branch and a few adds on each side,
 * inline (pml_ob1x_monitor.h).
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
    if (sent) {
        ob1x_mon_count_send(c, bytes, tag);
    } else {
        ob1x_mon_count_recv(c, bytes, tag);
    }
}

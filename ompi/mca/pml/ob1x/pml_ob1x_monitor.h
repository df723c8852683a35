/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pml_ob1x_monitor.h - recording into the monitoring engine
 * (pml_monitoring_enable) from ob1x's own send, start and receive paths.
 *
 * Each communicator's peer slot keeps the address of the engine's counters
 * of its process (pml_ob1x_monitor.c). Callers test ob1x_mon_is_on() first.
 */
#ifndef PML_OB1X_MONITOR_H
#define PML_OB1X_MONITOR_H

#include "ompi_config.h"

#include "ompi/communicator/communicator.h"

#include "common_ob1x_monitoring.h"
#include "pml_ob1x_comm.h"

BEGIN_C_DECLS

/* First message recorded with this peer on this communicator: finds its
 * counters (out of line), then counts it as sent or received. */
void ob1x_monitor_first(struct ompi_communicator_t *comm, int rank, size_t bytes, int tag,
                        bool sent);

/* One message of `bytes` packed bytes with tag, sent to rank (in comm's
 * remote group) or matched from it (the receive side is beyond Open MPI's
 * monitoring, which counts only at the sender); peer is rank's slot in
 * comm, which the caller often holds already. Inline, with `sent` a
 * constant at each caller: a call's set-up and return would cost a third
 * of the record itself, and the record is all that monitoring adds to a
 * message. */
static inline void ob1x_monitor_peer_msg(ob1x_comm_peer_t *peer, struct ompi_communicator_t *comm,
                                         int rank, size_t bytes, int tag, bool sent)
{
    ob1x_mon_counts_t *c = __atomic_load_n(&peer->mon, __ATOMIC_ACQUIRE);

    if (OPAL_UNLIKELY(NULL == c)) {
        ob1x_monitor_first(comm, rank, bytes, tag, sent);
    } else if (sent) {
        ob1x_mon_count_send(c, bytes, tag);
    } else {
        ob1x_mon_count_recv(c, bytes, tag);
    }
}

/* The same, the peer slot found from comm and rank. */
static inline void ob1x_monitor_msg(struct ompi_communicator_t *comm, int rank, size_t bytes,
                                    int tag, bool sent)
{
    ob1x_monitor_peer_msg(&ob1x_comm_of(comm)->peers[rank], comm, rank, bytes, tag, sent);
}

END_C_DECLS

#endif /* PML_OB1X_MONITOR_H */

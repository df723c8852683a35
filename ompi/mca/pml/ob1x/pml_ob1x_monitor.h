/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pml_ob1x_monitor.h - recording into the monitoring engine
 * (pml_monitoring_enable) from ob1x's own send, start and receive paths.
 *
 * Each communicator keeps, per peer, the address of the engine's counters of
 * its process (pml_ob1x_monitor.c). Callers test ob1x_mon_is_on() first.
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

/* The counters of rank's process, once found on this communicator; else
 * NULL. */
static inline ob1x_mon_counts_t *ob1x_monitor_known(struct ompi_communicator_t *comm, int rank)
{
    ob1x_mon_counts_t **t = __atomic_load_n(&ob1x_comm_of(comm)->mon, __ATOMIC_ACQUIRE);

    return OPAL_LIKELY(NULL != t) ? __atomic_load_n(&t[rank], __ATOMIC_ACQUIRE) : NULL;
}

/* One message of `bytes` packed bytes with tag, sent to rank (in comm's
 * remote group) or matched from it (the receive side is beyond Open MPI's
 * monitoring, which counts only at the sender). Inline, with `sent` a
 * constant at each caller: a call's set-up and return would cost a third
 * of the record itself, and the record is all that monitoring adds to a
 * message. */
static inline void ob1x_monitor_msg(struct ompi_communicator_t *comm, int rank, size_t bytes,
                                    int tag, bool sent)
{
    ob1x_mon_counts_t *c = ob1x_monitor_known(comm, rank);

    if (OPAL_UNLIKELY(NULL == c)) {
        ob1x_monitor_first(comm, rank, bytes, tag, sent);
    } else if (sent) {
        ob1x_mon_count_send(c, bytes, tag);
    } else {
        ob1x_mon_count_recv(c, bytes, tag);
    }
}

END_C_DECLS

#endif /* PML_OB1X_MONITOR_H */

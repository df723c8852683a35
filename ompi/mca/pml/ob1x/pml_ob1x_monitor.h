/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pml_ob1x_monitor.h - recording into the monitoring engine
 * (pml_monitoring_enable) from ob1x's own send, start and receive paths.
 *
 * Each communicator's peer slot keeps the address of the engine's counters
 * of its process (pml_ob1x_monitor.c). Callers test ob1x_monitor_on() first.
 */
#ifndef PML_OB1X_MONITOR_H
#define PML_OB1X_MONITOR_H

#include "ompi_config.h"

#include "ompi/communicator/communicator.h"

#include "common_ob1x_monitoring.h"
#include "pml_ob1x_comm.h"

BEGIN_C_DECLS

/* ob1x_mon_state as the engine keeps it here (ob1x_mon_set_state_mirror),
 * from ob1x's enable to its finalize: one load per test. */
extern int ob1x_monitor_state __attribute__((visibility("hidden")));

/* The same while receives are counted too (ob1x_mon_set_recv_state_mirror),
 * OB1X_MON_OFF otherwise. */
extern int ob1x_monitor_recv_state __attribute__((visibility("hidden")));

/* True when messages are being recorded now. */
static inline bool ob1x_monitor_on(void)
{
    return __builtin_expect(0 != ob1x_monitor_state, 0);
}

/* True when matched receives are being recorded now. */
static inline bool ob1x_monitor_recv_on(void)
{
    return __builtin_expect(0 != ob1x_monitor_recv_state, 0);
}

/* One message of `bytes` packed bytes with tag, counted at once (out of
 * line) as sent to or matched from (the receive side is beyond Open MPI's
 * monitoring, which counts only at the sender) rank in comm's remote
 * group: for the records that cannot be staged (internal tags, threads). */
void ob1x_monitor_msg(struct ompi_communicator_t *comm, int rank, size_t bytes, int tag,
                      bool sent);

/* Whether a message with tag can be staged in the peer's slot, state
 * being the word the caller's path tested (ob1x_monitor_state or
 * ob1x_monitor_recv_state): one thread (no atomics), external tag
 * (internal ones may be counted apart). Both are sign bits
 * (OB1X_MON_THREADS): one or, one test. */
static inline bool ob1x_monitor_can_stage(int tag, int state)
{
    return (tag | state) >= 0;
}

/* One receive of `bytes` staged in the sender's slot. */
static inline void ob1x_monitor_stage_recv(ob1x_comm_peer_t *peer, size_t bytes)
{
    ob1x_mon_add_pair(peer->rx, bytes);
}

/* A send the inline record could not stage (another tag class, threads,
 * another size than the staged run's), out of line. */
void ob1x_monitor_send_other(struct ompi_communicator_t *comm, int rank, size_t bytes, int tag);

/* One message of `bytes` packed bytes with tag sent to rank (in comm's
 * remote group). In a stream of one size this is one compare and one add
 * on the first line of the peer's slot, which the send reads anyway: no
 * line of the engine's is touched until it reads, and the bytes and the
 * histogram bin are worked out once per run when it is handed over. */
static inline void ob1x_monitor_send(struct ompi_communicator_t *comm, int rank, size_t bytes,
                                     int tag)
{
    /* one address for the compare and the add (the slot's would be a second) */
    uint64_t *tx = ob1x_comm_of(comm)->peers[rank].tx;

    if (OPAL_LIKELY(ob1x_monitor_can_stage(tag, ob1x_monitor_state) && tx[0] == bytes)) {
        tx[1] += 1;
    } else {
        ob1x_monitor_send_other(comm, rank, bytes, tag);
    }
}

/* Hands the staged counts of every communicator to the engine
 * (registered with ob1x_mon_set_settle), or those of one communicator
 * before it goes. */
void ob1x_monitor_settle(void);
void ob1x_monitor_settle_comm(struct ompi_communicator_t *comm);

END_C_DECLS

#endif /* PML_OB1X_MONITOR_H */

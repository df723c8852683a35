/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Matching state. Each communicator holds one ob1x_comm_t (hung on
 * comm->c_pml_comm) with a slot per peer of its remote group, so that
 * matching a message from one peer never walks queues of unrelated peers.
 * Each process also keeps one ob1x_proc_t per peer process (flow control).
 *
 * Locking: everything in ob1x_comm_t and its peers is protected by
 * ob1x_comm_t.lock, except send_seq which is an atomic counter.
 */
#ifndef PML_OB1X_COMM_H
#define PML_OB1X_COMM_H

#include "ompi_config.h"

#include "opal/class/opal_list.h"
#include "opal/threads/mutex.h"
#include "ompi/communicator/communicator.h"
#include "ompi/mca/bml/bml.h"
#include "ompi/proc/proc.h"

#include "pml_ob1x_order.h"

BEGIN_C_DECLS

struct ob1x_proc;
struct ob1x_mon_counts;

typedef struct ob1x_comm_peer {
    /* Where sends to this peer go, resolved on first use (ob1x_peer_resolve);
     * `endpoint` is published last, so non-NULL means both are set. The
     * peer's ompi_proc_t is oproc->proc. */
    struct mca_bml_base_endpoint_t *volatile endpoint;
    struct ob1x_proc *oproc;
    volatile int32_t send_seq; /* next sequence number we send to this peer (low 16 bits) */
    uint16_t expected_seq;     /* next sequence number we accept from this peer */
    /* Cancelled-message markers waiting in out_of_order: at most one per
     * 16-bit sequence number ahead of expected_seq. */
    uint16_t tombstones;
    /* The monitoring engine's counters of the peer's process, found at the
     * first message recorded (pml_ob1x_monitor.c). */
    struct ob1x_mon_counts *mon;
    /* Monitoring's staging (external tags, one thread), on the line a send
     * and a match touch anyway, so that a record adds no cache line: the
     * messages matched from the peer and their bytes (rx[0], rx[1]); a run
     * of tx[1] messages sent to it, each of tx[0] bytes (a send of another
     * size of the same histogram bin joins the run, its bytes beyond tx[0]
     * added to `mon` at once). A send of the run's size adds one to tx[1]
     * and nothing else (pml_ob1x_monitor.h). Handed to `mon` before the
     * engine reads (ob1x_monitor_settle) and, for tx, when the bin changes. */
    uint64_t rx[2];
    uint64_t tx[2];
    opal_list_t specific;     /* posted receives naming this peer, in posting order */
    opal_list_t unexpected;   /* in-sequence fragments nobody has matched yet */
    opal_list_t out_of_order; /* fragments ahead of expected_seq, sorted by sequence */
} ob1x_comm_peer_t;

typedef struct ob1x_comm {
    opal_mutex_t lock;
    volatile int32_t held;   /* testing aid: arrivals are treated as orphans while set */
    uint32_t post_seq;       /* posting order of receives: decides specific vs. wildcard */
    opal_list_t wildcard;    /* posted MPI_ANY_SOURCE receives, in posting order */
    size_t unexpected_count; /* unexpected fragments over all peers */
    int num_peers;
    opal_list_item_t held_item;       /* on mca_pml_ob1x.held_comms while held */
    struct ompi_communicator_t *comm; /* the communicator, for the release */
    uint64_t held_until_us;           /* when the hold ends (monotonic clock) */
    /* Indexed by rank in the remote group; each slot starts a cache line
     * (ob1x_add_comm allocates aligned), so that the fields a send or a
     * match reads (the slot's first 64 bytes) lie on one line. */
    ob1x_comm_peer_t peers[] __attribute__((aligned(64)));
} ob1x_comm_t;

/* Per peer process (not per communicator): receiver-congestion state. */
typedef struct ob1x_proc {
    volatile int32_t congested; /* the peer asked us to send by rendezvous only */
    int32_t late_backoff;       /* request-first eager Isends left after a late request */
    /* Our sends to the peer queued to start (no BTL room): later ones queue
     * behind them instead of overtaking, which would make the peer hold
     * every message that overtook in its out-of-order queue. */
    volatile int32_t starts_queued;
    struct ompi_proc_t *proc;   /* beside what a send reads (starts_queued) */
    uint64_t flow_gen_seen;     /* newest FLOW generation received from the peer */
    uint64_t flow_gen_sent;     /* generation of the last FLOW we sent to the peer */
    bool xoff_sent;             /* we told the peer we are congested */
    bool cuda_warmed;           /* a device buffer was offered to its device-get BTL */
    opal_list_item_t xoff_item; /* on the list of peers told so */
    /* Its BTLs as the RDMA protocols see them (pml_ob1x_rdma.h), made on
     * first use. */
    struct ob1x_rdma_peer *rdma;
} ob1x_proc_t;

static inline ob1x_comm_t *ob1x_comm_of(struct ompi_communicator_t *comm)
{
    return (ob1x_comm_t *) comm->c_pml_comm;
}

/* The per-process state of a peer, created on first use (NULL when out
 * of memory). Cold paths only: a communicator's peer keeps its own. */
ob1x_proc_t *ob1x_proc_lookup(struct ompi_proc_t *proc);

/* Drop the per-process state of departing processes. */
void ob1x_procs_release(struct ompi_proc_t **procs, size_t nprocs);
/* Component close: what is left of the per-process state's table. */
void ob1x_procs_fini(void);

/* The next sequence number of a message to this peer (low 16 bits used). */
static inline int ob1x_peer_draw_seq(ob1x_comm_peer_t *peer)
{
    return OPAL_THREAD_FETCH_ADD32(&peer->send_seq, 1);
}

/* Fill peer->oproc/endpoint; returns the endpoint, NULL if unreachable. */
struct mca_bml_base_endpoint_t *ob1x_peer_resolve(struct ompi_communicator_t *comm, int rank);

/* The destination of a send: one load once resolved. */
static inline ob1x_comm_peer_t *ob1x_peer(struct ompi_communicator_t *comm, int rank)
{
    ob1x_comm_peer_t *peer = &ob1x_comm_of(comm)->peers[rank];
    if (OPAL_UNLIKELY(NULL == peer->endpoint)) {
        (void) ob1x_peer_resolve(comm, rank);
    } else {
        opal_atomic_rmb(); /* pairs with the wmb before endpoint is published */
    }
    return peer;
}

END_C_DECLS

#endif /* PML_OB1X_COMM_H */

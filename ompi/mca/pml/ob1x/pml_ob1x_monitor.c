/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pml_ob1x_monitor.c - recording into the monitoring engine from ob1x's
 * send, start and receive paths (pml_ob1x_monitor.h).
 *
 * The engine's counters of a peer are found once per communicator peer,
 * through the communicator's group and the engine's table (tens of
 * instructions), and their address kept in the communicator's table: each message
 * then costs two loads, a branch and a few adds on each side, inline
 * (pml_ob1x_monitor.h).
 */
#include "ompi_config.h"

#include <stdlib.h>

#include "common_ob1x_monitoring.h"
#include "pml_ob1x_comm.h"
#include "pml_ob1x_monitor.h"

/* The communicator's table of counter addresses, made on first use. */
static ob1x_mon_counts_t **table_get(ob1x_comm_t *oc)
{
    ob1x_mon_counts_t **t = __atomic_load_n(&oc->mon, __ATOMIC_ACQUIRE), **expected = NULL;

    if (NULL != t) {
        return t;
    }
    if (NULL == (t = calloc((size_t) oc->num_peers, sizeof(*t)))) {
        return NULL;
    }
    if (!__atomic_compare_exchange_n(&oc->mon, &expected, t, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        free(t); /* another thread made it first */
        return expected;
    }
    return t;
}

static __opal_attribute_noinline__ ob1x_mon_counts_t *counters_find(ompi_communicator_t *comm,
                                                                    int rank)
{
    ob1x_mon_counts_t **t = table_get(ob1x_comm_of(comm));
    ob1x_mon_counts_t *c;

    if (NULL == t) {
        return NULL;
    }
    c = ob1x_mon_peer_counters(ompi_group_get_proc_name(comm->c_remote_group, rank));
    /* Any thread finding them finds the same address: no lock needed. */
    __atomic_store_n(&t[rank], c, __ATOMIC_RELEASE);
    return c;
}

/* First message with this peer on this communicator: find, then count. */
void ob1x_monitor_first(ompi_communicator_t *comm, int rank, size_t bytes, int tag, bool sent)
{
    ob1x_mon_counts_t *c = counters_find(comm, rank);

    if (NULL == c) {
        return;
    }
    if (sent) {
        ob1x_mon_count_send(c, bytes, tag);
    } else {
        ob1x_mon_count_recv(c, bytes, tag);
    }
}

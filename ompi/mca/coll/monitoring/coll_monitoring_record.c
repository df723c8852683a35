/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * coll_monitoring_record.c - per-peer recording shared by the collectives.
 * Peers are given to the engine as ranks of the remote group; it keeps
 * them under their MPI_COMM_WORLD rank (or their own key for another
 * job's processes).
 */
#include "coll_monitoring.h"

size_t mca_coll_monitoring_to_all(ompi_communicator_t *comm, size_t bytes)
{
    const int n = mon_peers(comm), self = mon_self(comm);
    size_t total = 0;

    for (int i = 0; i < n; ++i) {
        if (i != self) {
            ob1x_mon_record_coll(comm->c_remote_group, i, bytes);
            total += bytes;
        }
    }
    return total;
}

size_t mca_coll_monitoring_to_each(ompi_communicator_t *comm, const int *counts, size_t type_size)
{
    const int n = mon_peers(comm), self = mon_self(comm);
    size_t total = 0;

    for (int i = 0; i < n; ++i) {
        if (i != self) {
            size_t bytes = (size_t) counts[i] * type_size;
            ob1x_mon_record_coll(comm->c_remote_group, i, bytes);
            total += bytes;
        }
    }
    return total;
}

size_t mca_coll_monitoring_to_each_w(ompi_communicator_t *comm, const int *counts,
                                     ompi_datatype_t *const *types)
{
    const int n = mon_peers(comm), self = mon_self(comm);
    size_t total = 0;

    for (int i = 0; i < n; ++i) {
        if (i != self) {
            size_t bytes = (size_t) counts[i] * mon_type_size(types[i]);
            ob1x_mon_record_coll(comm->c_remote_group, i, bytes);
            total += bytes;
        }
    }
    return total;
}

size_t mca_coll_monitoring_to_above(ompi_communicator_t *comm, size_t bytes)
{
    const int n = ompi_comm_size(comm);
    size_t total = 0;

    for (int i = ompi_comm_rank(comm) + 1; i < n; ++i) {
        ob1x_mon_record_coll(comm->c_remote_group, i, bytes);
        total += bytes;
    }
    return total;
}

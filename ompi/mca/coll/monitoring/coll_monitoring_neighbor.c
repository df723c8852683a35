/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * coll_monitoring_neighbor.c - the neighbourhood collectives, blocking
 * and not (class all-to-all). Each process records what it sends to each
 * of its out-neighbours, in the order MPI gives them: for a Cartesian
 * topology, per dimension the neighbour at -1 then at +1; for a graph, its
 * edges; for a distributed graph, its destinations. A send slot whose
 * neighbour is MPI_PROC_NULL or this process itself moves nothing over
 * the network and is not counted. (Open MPI 4.1's component handles
 * Cartesian topologies only, and miscounts slots when a neighbour is
 * MPI_PROC_NULL.)
 */
#include "coll_monitoring.h"

#include "ompi/mca/topo/topo.h"

static int out_degree(ompi_communicator_t *comm)
{
    if (OMPI_COMM_IS_CART(comm)) {
        return 2 * comm->c_topo->mtc.cart->ndims;
    }
    if (OMPI_COMM_IS_GRAPH(comm)) {
        const mca_topo_base_comm_graph_t *g = comm->c_topo->mtc.graph;
        const int r = ompi_comm_rank(comm);
        return g->index[r] - (0 == r ? 0 : g->index[r - 1]);
    }
    if (OMPI_COMM_IS_DIST_GRAPH(comm)) {
        return comm->c_topo->mtc.dist_graph->outdegree;
    }
    return 0;
}

/* The rank in comm of out-neighbour slot i (MPI_PROC_NULL possible). */
static int out_neighbor(ompi_communicator_t *comm, int i)
{
    if (OMPI_COMM_IS_CART(comm)) {
        int source = MPI_PROC_NULL, dest = MPI_PROC_NULL;
        comm->c_topo->topo.cart.cart_shift(comm, i / 2, 1, &source, &dest);
        return 0 == i % 2 ? source : dest;
    }
    if (OMPI_COMM_IS_GRAPH(comm)) {
        const mca_topo_base_comm_graph_t *g = comm->c_topo->mtc.graph;
        const int r = ompi_comm_rank(comm);
        return g->edges[(0 == r ? 0 : g->index[r - 1]) + i];
    }
    return comm->c_topo->mtc.dist_graph->out[i];
}

/* Sends of one slot: counted unless it stays in this process. */
static size_t rec_slot(ompi_communicator_t *comm, int i, size_t bytes)
{
    const int peer = out_neighbor(comm, i);

    if (MPI_PROC_NULL == peer || ompi_comm_rank(comm) == peer) {
        return 0;
    }
    ob1x_mon_record_coll(comm->c_remote_group, peer, bytes);
    return bytes;
}

/* counts == NULL: count to every slot, else counts[i]; types == NULL: type
 * for every slot, else types[i]. */
static void rec_neighbors(ompi_communicator_t *comm, mca_coll_base_module_t *m, int count,
                          const int *counts, ompi_datatype_t *type, ompi_datatype_t *const *types)
{
    const int n = out_degree(comm);
    size_t total = 0;

    for (int i = 0; i < n; ++i) {
        size_t c = NULL == counts ? (size_t) count : (size_t) counts[i];
        total += rec_slot(comm, i, c * mon_type_size(NULL == types ? type : types[i]));
    }
    ob1x_mon_coll_record(mon_module(m)->data, OB1X_MON_A2A, total);
}

static int mon_neighbor_allgather(const void *sbuf, int scount, ompi_datatype_t *sdtype, void *rbuf,
                                  int rcount, ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                                  mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    if (ob1x_mon_is_on()) {
        rec_neighbors(comm, m, scount, NULL, sdtype, NULL);
    }
    return real->coll_neighbor_allgather(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm,
                                         real->coll_neighbor_allgather_module);
}

static int mon_ineighbor_allgather(const void *sbuf, int scount, ompi_datatype_t *sdtype,
                                   void *rbuf, int rcount, ompi_datatype_t *rdtype,
                                   ompi_communicator_t *comm, ompi_request_t **req,
                                   mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    if (ob1x_mon_is_on()) {
        rec_neighbors(comm, m, scount, NULL, sdtype, NULL);
    }
    return real->coll_ineighbor_allgather(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, req,
                                          real->coll_ineighbor_allgather_module);
}

static int mon_neighbor_allgatherv(const void *sbuf, int scount, ompi_datatype_t *sdtype,
                                   void *rbuf, const int *rcounts, const int *disps,
                                   ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                                   mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    if (ob1x_mon_is_on()) {
        rec_neighbors(comm, m, scount, NULL, sdtype, NULL);
    }
    return real->coll_neighbor_allgatherv(sbuf, scount, sdtype, rbuf, rcounts, disps, rdtype, comm,
                                          real->coll_neighbor_allgatherv_module);
}

static int mon_ineighbor_allgatherv(const void *sbuf, int scount, ompi_datatype_t *sdtype,
                                    void *rbuf, const int *rcounts, const int *disps,
                                    ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                                    ompi_request_t **req, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    if (ob1x_mon_is_on()) {
        rec_neighbors(comm, m, scount, NULL, sdtype, NULL);
    }
    return real->coll_ineighbor_allgatherv(sbuf, scount, sdtype, rbuf, rcounts, disps, rdtype, comm,
                                           req, real->coll_ineighbor_allgatherv_module);
}

static int mon_neighbor_alltoall(const void *sbuf, int scount, ompi_datatype_t *sdtype, void *rbuf,
                                 int rcount, ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                                 mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    if (ob1x_mon_is_on()) {
        rec_neighbors(comm, m, scount, NULL, sdtype, NULL);
    }
    return real->coll_neighbor_alltoall(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm,
                                        real->coll_neighbor_alltoall_module);
}

static int mon_ineighbor_alltoall(const void *sbuf, int scount, ompi_datatype_t *sdtype, void *rbuf,
                                  int rcount, ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                                  ompi_request_t **req, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    if (ob1x_mon_is_on()) {
        rec_neighbors(comm, m, scount, NULL, sdtype, NULL);
    }
    return real->coll_ineighbor_alltoall(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, req,
                                         real->coll_ineighbor_alltoall_module);
}

static int mon_neighbor_alltoallv(const void *sbuf, const int *scounts, const int *sdisps,
                                  ompi_datatype_t *sdtype, void *rbuf, const int *rcounts,
                                  const int *rdisps, ompi_datatype_t *rdtype,
                                  ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    if (ob1x_mon_is_on()) {
        rec_neighbors(comm, m, 0, scounts, sdtype, NULL);
    }
    return real->coll_neighbor_alltoallv(sbuf, scounts, sdisps, sdtype, rbuf, rcounts, rdisps,
                                         rdtype, comm, real->coll_neighbor_alltoallv_module);
}

static int mon_ineighbor_alltoallv(const void *sbuf, const int *scounts, const int *sdisps,
                                   ompi_datatype_t *sdtype, void *rbuf, const int *rcounts,
                                   const int *rdisps, ompi_datatype_t *rdtype,
                                   ompi_communicator_t *comm, ompi_request_t **req,
                                   mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    if (ob1x_mon_is_on()) {
        rec_neighbors(comm, m, 0, scounts, sdtype, NULL);
    }
    return real->coll_ineighbor_alltoallv(sbuf, scounts, sdisps, sdtype, rbuf, rcounts, rdisps,
                                          rdtype, comm, req, real->coll_ineighbor_alltoallv_module);
}

static int mon_neighbor_alltoallw(const void *sbuf, const int *scounts, const MPI_Aint *sdisps,
                                  ompi_datatype_t *const *sdtypes, void *rbuf, const int *rcounts,
                                  const MPI_Aint *rdisps, ompi_datatype_t *const *rdtypes,
                                  ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    if (ob1x_mon_is_on()) {
        rec_neighbors(comm, m, 0, scounts, NULL, sdtypes);
    }
    return real->coll_neighbor_alltoallw(sbuf, scounts, sdisps, sdtypes, rbuf, rcounts, rdisps,
                                         rdtypes, comm, real->coll_neighbor_alltoallw_module);
}

static int mon_ineighbor_alltoallw(const void *sbuf, const int *scounts, const MPI_Aint *sdisps,
                                   ompi_datatype_t *const *sdtypes, void *rbuf, const int *rcounts,
                                   const MPI_Aint *rdisps, ompi_datatype_t *const *rdtypes,
                                   ompi_communicator_t *comm, ompi_request_t **req,
                                   mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    if (ob1x_mon_is_on()) {
        rec_neighbors(comm, m, 0, scounts, NULL, sdtypes);
    }
    return real->coll_ineighbor_alltoallw(sbuf, scounts, sdisps, sdtypes, rbuf, rcounts, rdisps,
                                          rdtypes, comm, req,
                                          real->coll_ineighbor_alltoallw_module);
}

void mca_coll_monitoring_set_neighbor(mca_coll_base_module_t *m)
{
    m->coll_neighbor_allgather = mon_neighbor_allgather;
    m->coll_ineighbor_allgather = mon_ineighbor_allgather;
    m->coll_neighbor_allgatherv = mon_neighbor_allgatherv;
    m->coll_ineighbor_allgatherv = mon_ineighbor_allgatherv;
    m->coll_neighbor_alltoall = mon_neighbor_alltoall;
    m->coll_ineighbor_alltoall = mon_ineighbor_alltoall;
    m->coll_neighbor_alltoallv = mon_neighbor_alltoallv;
    m->coll_ineighbor_alltoallv = mon_ineighbor_alltoallv;
    m->coll_neighbor_alltoallw = mon_neighbor_alltoallw;
    m->coll_ineighbor_alltoallw = mon_ineighbor_alltoallw;
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * coll_monitoring_all.c - the collectives where every process sends
 * (class all-to-all), blocking and not. Each process records what it
 * sends to each peer, as Open MPI 4.1's coll/monitoring does: the send
 * count times its type's size (allgather(v), alltoall(v,w)), the whole
 * vector for allreduce, each peer's block for reduce_scatter(_block), the
 * ranks above for scan/exscan, and an empty message for barrier.
 */
#include "coll_monitoring.h"

/* bytes to every peer, class all-to-all. */
static void rec_all(ompi_communicator_t *comm, mca_coll_base_module_t *m, size_t bytes)
{
    if (ob1x_mon_is_on()) {
        size_t total = mca_coll_monitoring_to_all(comm, bytes);
        ob1x_mon_coll_record(mon_module(m)->data, OB1X_MON_A2A, total);
    }
}

static void rec_each(ompi_communicator_t *comm, mca_coll_base_module_t *m, const int *counts,
                     ompi_datatype_t *type)
{
    if (ob1x_mon_is_on()) {
        size_t total = mca_coll_monitoring_to_each(comm, counts, mon_type_size(type));
        ob1x_mon_coll_record(mon_module(m)->data, OB1X_MON_A2A, total);
    }
}

static void rec_count(ompi_communicator_t *comm, mca_coll_base_module_t *m, int count,
                      ompi_datatype_t *type)
{
    if (ob1x_mon_is_on()) {
        rec_all(comm, m, (size_t) count * mon_type_size(type));
    }
}

/* --- allgather, allgatherv: the send buffer to every peer ---------------- */

static int mon_allgather(const void *sbuf, int scount, ompi_datatype_t *sdtype, void *rbuf,
                         int rcount, ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                         mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_count(comm, m, scount, sdtype);
    return real->coll_allgather(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm,
                                real->coll_allgather_module);
}

static int mon_iallgather(const void *sbuf, int scount, ompi_datatype_t *sdtype, void *rbuf,
                          int rcount, ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                          ompi_request_t **req, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_count(comm, m, scount, sdtype);
    return real->coll_iallgather(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, req,
                                 real->coll_iallgather_module);
}

static int mon_allgatherv(const void *sbuf, int scount, ompi_datatype_t *sdtype, void *rbuf,
                          const int *rcounts, const int *disps, ompi_datatype_t *rdtype,
                          ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_count(comm, m, scount, sdtype);
    return real->coll_allgatherv(sbuf, scount, sdtype, rbuf, rcounts, disps, rdtype, comm,
                                 real->coll_allgatherv_module);
}

static int mon_iallgatherv(const void *sbuf, int scount, ompi_datatype_t *sdtype, void *rbuf,
                           const int *rcounts, const int *disps, ompi_datatype_t *rdtype,
                           ompi_communicator_t *comm, ompi_request_t **req,
                           mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_count(comm, m, scount, sdtype);
    return real->coll_iallgatherv(sbuf, scount, sdtype, rbuf, rcounts, disps, rdtype, comm, req,
                                  real->coll_iallgatherv_module);
}

/* --- allreduce: the vector to every peer --------------------------------- */

static int mon_allreduce(const void *sbuf, void *rbuf, int count, ompi_datatype_t *type,
                         struct ompi_op_t *op, ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_count(comm, m, count, type);
    return real->coll_allreduce(sbuf, rbuf, count, type, op, comm, real->coll_allreduce_module);
}

static int mon_iallreduce(const void *sbuf, void *rbuf, int count, ompi_datatype_t *type,
                          struct ompi_op_t *op, ompi_communicator_t *comm, ompi_request_t **req,
                          mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_count(comm, m, count, type);
    return real->coll_iallreduce(sbuf, rbuf, count, type, op, comm, req,
                                 real->coll_iallreduce_module);
}

/* --- alltoall, alltoallv, alltoallw: each peer's block ------------------- */

static int mon_alltoall(const void *sbuf, int scount, ompi_datatype_t *sdtype, void *rbuf,
                        int rcount, ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                        mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_count(comm, m, scount, sdtype);
    return real->coll_alltoall(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm,
                               real->coll_alltoall_module);
}

static int mon_ialltoall(const void *sbuf, int scount, ompi_datatype_t *sdtype, void *rbuf,
                         int rcount, ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                         ompi_request_t **req, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_count(comm, m, scount, sdtype);
    return real->coll_ialltoall(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, req,
                                real->coll_ialltoall_module);
}

static int mon_alltoallv(const void *sbuf, const int *scounts, const int *sdisps,
                         ompi_datatype_t *sdtype, void *rbuf, const int *rcounts, const int *rdisps,
                         ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                         mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_each(comm, m, scounts, sdtype);
    return real->coll_alltoallv(sbuf, scounts, sdisps, sdtype, rbuf, rcounts, rdisps, rdtype, comm,
                                real->coll_alltoallv_module);
}

static int mon_ialltoallv(const void *sbuf, const int *scounts, const int *sdisps,
                          ompi_datatype_t *sdtype, void *rbuf, const int *rcounts,
                          const int *rdisps, ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                          ompi_request_t **req, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_each(comm, m, scounts, sdtype);
    return real->coll_ialltoallv(sbuf, scounts, sdisps, sdtype, rbuf, rcounts, rdisps, rdtype, comm,
                                 req, real->coll_ialltoallv_module);
}

static void rec_each_w(ompi_communicator_t *comm, mca_coll_base_module_t *m, const int *counts,
                       ompi_datatype_t *const *types)
{
    if (ob1x_mon_is_on()) {
        size_t total = mca_coll_monitoring_to_each_w(comm, counts, types);
        ob1x_mon_coll_record(mon_module(m)->data, OB1X_MON_A2A, total);
    }
}

static int mon_alltoallw(const void *sbuf, const int *scounts, const int *sdisps,
                         ompi_datatype_t *const *sdtypes, void *rbuf, const int *rcounts,
                         const int *rdisps, ompi_datatype_t *const *rdtypes,
                         ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_each_w(comm, m, scounts, sdtypes);
    return real->coll_alltoallw(sbuf, scounts, sdisps, sdtypes, rbuf, rcounts, rdisps, rdtypes,
                                comm, real->coll_alltoallw_module);
}

static int mon_ialltoallw(const void *sbuf, const int *scounts, const int *sdisps,
                          ompi_datatype_t *const *sdtypes, void *rbuf, const int *rcounts,
                          const int *rdisps, ompi_datatype_t *const *rdtypes,
                          ompi_communicator_t *comm, ompi_request_t **req,
                          mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_each_w(comm, m, scounts, sdtypes);
    return real->coll_ialltoallw(sbuf, scounts, sdisps, sdtypes, rbuf, rcounts, rdisps, rdtypes,
                                 comm, req, real->coll_ialltoallw_module);
}

/* --- barrier: an empty message to every peer ----------------------------- */

static int mon_barrier(ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_all(comm, m, 0);
    return real->coll_barrier(comm, real->coll_barrier_module);
}

static int mon_ibarrier(ompi_communicator_t *comm, ompi_request_t **req, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_all(comm, m, 0);
    return real->coll_ibarrier(comm, req, real->coll_ibarrier_module);
}

/* --- reduce_scatter(_block): each peer's block of the result ------------- */

static int mon_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                              ompi_datatype_t *type, struct ompi_op_t *op,
                              ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_each(comm, m, rcounts, type);
    return real->coll_reduce_scatter(sbuf, rbuf, rcounts, type, op, comm,
                                     real->coll_reduce_scatter_module);
}

static int mon_ireduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                               ompi_datatype_t *type, struct ompi_op_t *op,
                               ompi_communicator_t *comm, ompi_request_t **req,
                               mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_each(comm, m, rcounts, type);
    return real->coll_ireduce_scatter(sbuf, rbuf, rcounts, type, op, comm, req,
                                      real->coll_ireduce_scatter_module);
}

static int mon_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, ompi_datatype_t *type,
                                    struct ompi_op_t *op, ompi_communicator_t *comm,
                                    mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_count(comm, m, rcount, type);
    return real->coll_reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm,
                                           real->coll_reduce_scatter_block_module);
}

static int mon_ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
                                     ompi_datatype_t *type, struct ompi_op_t *op,
                                     ompi_communicator_t *comm, ompi_request_t **req,
                                     mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_count(comm, m, rcount, type);
    return real->coll_ireduce_scatter_block(sbuf, rbuf, rcount, type, op, comm, req,
                                            real->coll_ireduce_scatter_block_module);
}

/* --- scan, exscan: the vector to every rank above this one --------------- */

static void rec_above(ompi_communicator_t *comm, mca_coll_base_module_t *m, int count,
                      ompi_datatype_t *type)
{
    if (ob1x_mon_is_on()) {
        size_t bytes = (size_t) count * mon_type_size(type);
        size_t total = mca_coll_monitoring_to_above(comm, bytes);
        ob1x_mon_coll_record(mon_module(m)->data, OB1X_MON_A2A, total);
    }
}

static int mon_scan(const void *sbuf, void *rbuf, int count, ompi_datatype_t *type,
                    struct ompi_op_t *op, ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_above(comm, m, count, type);
    return real->coll_scan(sbuf, rbuf, count, type, op, comm, real->coll_scan_module);
}

static int mon_iscan(const void *sbuf, void *rbuf, int count, ompi_datatype_t *type,
                     struct ompi_op_t *op, ompi_communicator_t *comm, ompi_request_t **req,
                     mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_above(comm, m, count, type);
    return real->coll_iscan(sbuf, rbuf, count, type, op, comm, req, real->coll_iscan_module);
}

static int mon_exscan(const void *sbuf, void *rbuf, int count, ompi_datatype_t *type,
                      struct ompi_op_t *op, ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_above(comm, m, count, type);
    return real->coll_exscan(sbuf, rbuf, count, type, op, comm, real->coll_exscan_module);
}

static int mon_iexscan(const void *sbuf, void *rbuf, int count, ompi_datatype_t *type,
                       struct ompi_op_t *op, ompi_communicator_t *comm, ompi_request_t **req,
                       mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_above(comm, m, count, type);
    return real->coll_iexscan(sbuf, rbuf, count, type, op, comm, req, real->coll_iexscan_module);
}

void mca_coll_monitoring_set_all(mca_coll_base_module_t *m)
{
    m->coll_allgather = mon_allgather;
    m->coll_iallgather = mon_iallgather;
    m->coll_allgatherv = mon_allgatherv;
    m->coll_iallgatherv = mon_iallgatherv;
    m->coll_allreduce = mon_allreduce;
    m->coll_iallreduce = mon_iallreduce;
    m->coll_alltoall = mon_alltoall;
    m->coll_ialltoall = mon_ialltoall;
    m->coll_alltoallv = mon_alltoallv;
    m->coll_ialltoallv = mon_ialltoallv;
    m->coll_alltoallw = mon_alltoallw;
    m->coll_ialltoallw = mon_ialltoallw;
    m->coll_barrier = mon_barrier;
    m->coll_ibarrier = mon_ibarrier;
    m->coll_reduce_scatter = mon_reduce_scatter;
    m->coll_ireduce_scatter = mon_ireduce_scatter;
    m->coll_reduce_scatter_block = mon_reduce_scatter_block;
    m->coll_ireduce_scatter_block = mon_ireduce_scatter_block;
    m->coll_scan = mon_scan;
    m->coll_iscan = mon_iscan;
    m->coll_exscan = mon_exscan;
    m->coll_iexscan = mon_iexscan;
}

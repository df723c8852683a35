/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * coll_monitoring_rooted.c - the rooted collectives, blocking and not.
 * Only the root records, as Open MPI 4.1's coll/monitoring does: for
 * bcast and scatter(v) what it sends to each peer (class one-to-all), for
 * gather(v) and reduce what each peer contributes (class all-to-one).
 */
#include "coll_monitoring.h"

static void rec_bcast(ompi_communicator_t *comm, mca_coll_base_module_t *m, int count,
                      ompi_datatype_t *type, int root)
{
    if (ob1x_mon_is_on() && mon_is_root(comm, root)) {
        size_t total = mca_coll_monitoring_to_all(comm, (size_t) count * mon_type_size(type));
        ob1x_mon_coll_record(mon_module(m)->data, OB1X_MON_O2A, total);
    }
}

static int mon_bcast(void *buf, int count, ompi_datatype_t *type, int root,
                     ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_bcast(comm, m, count, type, root);
    return real->coll_bcast(buf, count, type, root, comm, real->coll_bcast_module);
}

static int mon_ibcast(void *buf, int count, ompi_datatype_t *type, int root,
                      ompi_communicator_t *comm, ompi_request_t **req, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_bcast(comm, m, count, type, root);
    return real->coll_ibcast(buf, count, type, root, comm, req, real->coll_ibcast_module);
}

/* scatter: scount of sdtype to each peer. */
static void rec_scatter(ompi_communicator_t *comm, mca_coll_base_module_t *m, int scount,
                        ompi_datatype_t *sdtype, int root)
{
    rec_bcast(comm, m, scount, sdtype, root);
}

static int mon_scatter(const void *sbuf, int scount, ompi_datatype_t *sdtype, void *rbuf,
                       int rcount, ompi_datatype_t *rdtype, int root, ompi_communicator_t *comm,
                       mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_scatter(comm, m, scount, sdtype, root);
    return real->coll_scatter(sbuf, scount, sdtype, rbuf, rcount, rdtype, root, comm,
                              real->coll_scatter_module);
}

static int mon_iscatter(const void *sbuf, int scount, ompi_datatype_t *sdtype, void *rbuf,
                        int rcount, ompi_datatype_t *rdtype, int root, ompi_communicator_t *comm,
                        ompi_request_t **req, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_scatter(comm, m, scount, sdtype, root);
    return real->coll_iscatter(sbuf, scount, sdtype, rbuf, rcount, rdtype, root, comm, req,
                               real->coll_iscatter_module);
}

/* scatterv: scounts[i] of sdtype to peer i. */
static void rec_scatterv(ompi_communicator_t *comm, mca_coll_base_module_t *m, const int *scounts,
                         ompi_datatype_t *sdtype, int root)
{
    if (ob1x_mon_is_on() && mon_is_root(comm, root)) {
        size_t total = mca_coll_monitoring_to_each(comm, scounts, mon_type_size(sdtype));
        ob1x_mon_coll_record(mon_module(m)->data, OB1X_MON_O2A, total);
    }
}

static int mon_scatterv(const void *sbuf, const int *scounts, const int *disps,
                        ompi_datatype_t *sdtype, void *rbuf, int rcount, ompi_datatype_t *rdtype,
                        int root, ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_scatterv(comm, m, scounts, sdtype, root);
    return real->coll_scatterv(sbuf, scounts, disps, sdtype, rbuf, rcount, rdtype, root, comm,
                               real->coll_scatterv_module);
}

static int mon_iscatterv(const void *sbuf, const int *scounts, const int *disps,
                         ompi_datatype_t *sdtype, void *rbuf, int rcount, ompi_datatype_t *rdtype,
                         int root, ompi_communicator_t *comm, ompi_request_t **req,
                         mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_scatterv(comm, m, scounts, sdtype, root);
    return real->coll_iscatterv(sbuf, scounts, disps, sdtype, rbuf, rcount, rdtype, root, comm, req,
                                real->coll_iscatterv_module);
}

/* gather and reduce: count of type from each peer, at the root. */
static void rec_to_root(ompi_communicator_t *comm, mca_coll_base_module_t *m, int count,
                        ompi_datatype_t *type, int root)
{
    if (ob1x_mon_is_on() && mon_is_root(comm, root)) {
        size_t total = mca_coll_monitoring_to_all(comm, (size_t) count * mon_type_size(type));
        ob1x_mon_coll_record(mon_module(m)->data, OB1X_MON_A2O, total);
    }
}

static int mon_gather(const void *sbuf, int scount, ompi_datatype_t *sdtype, void *rbuf, int rcount,
                      ompi_datatype_t *rdtype, int root, ompi_communicator_t *comm,
                      mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_to_root(comm, m, rcount, rdtype, root);
    return real->coll_gather(sbuf, scount, sdtype, rbuf, rcount, rdtype, root, comm,
                             real->coll_gather_module);
}

static int mon_igather(const void *sbuf, int scount, ompi_datatype_t *sdtype, void *rbuf,
                       int rcount, ompi_datatype_t *rdtype, int root, ompi_communicator_t *comm,
                       ompi_request_t **req, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_to_root(comm, m, rcount, rdtype, root);
    return real->coll_igather(sbuf, scount, sdtype, rbuf, rcount, rdtype, root, comm, req,
                              real->coll_igather_module);
}

static void rec_gatherv(ompi_communicator_t *comm, mca_coll_base_module_t *m, const int *rcounts,
                        ompi_datatype_t *rdtype, int root)
{
    if (ob1x_mon_is_on() && mon_is_root(comm, root)) {
        size_t total = mca_coll_monitoring_to_each(comm, rcounts, mon_type_size(rdtype));
        ob1x_mon_coll_record(mon_module(m)->data, OB1X_MON_A2O, total);
    }
}

static int mon_gatherv(const void *sbuf, int scount, ompi_datatype_t *sdtype, void *rbuf,
                       const int *rcounts, const int *disps, ompi_datatype_t *rdtype, int root,
                       ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_gatherv(comm, m, rcounts, rdtype, root);
    return real->coll_gatherv(sbuf, scount, sdtype, rbuf, rcounts, disps, rdtype, root, comm,
                              real->coll_gatherv_module);
}

static int mon_igatherv(const void *sbuf, int scount, ompi_datatype_t *sdtype, void *rbuf,
                        const int *rcounts, const int *disps, ompi_datatype_t *rdtype, int root,
                        ompi_communicator_t *comm, ompi_request_t **req, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_gatherv(comm, m, rcounts, rdtype, root);
    return real->coll_igatherv(sbuf, scount, sdtype, rbuf, rcounts, disps, rdtype, root, comm, req,
                               real->coll_igatherv_module);
}

static int mon_reduce(const void *sbuf, void *rbuf, int count, ompi_datatype_t *type,
                      struct ompi_op_t *op, int root, ompi_communicator_t *comm,
                      mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_to_root(comm, m, count, type, root);
    return real->coll_reduce(sbuf, rbuf, count, type, op, root, comm, real->coll_reduce_module);
}

static int mon_ireduce(const void *sbuf, void *rbuf, int count, ompi_datatype_t *type,
                       struct ompi_op_t *op, int root, ompi_communicator_t *comm,
                       ompi_request_t **req, mca_coll_base_module_t *m)
{
    const mca_coll_base_comm_coll_t *real = &mon_module(m)->real;
    rec_to_root(comm, m, count, type, root);
    return real->coll_ireduce(sbuf, rbuf, count, type, op, root, comm, req,
                              real->coll_ireduce_module);
}

void mca_coll_monitoring_set_rooted(mca_coll_base_module_t *m)
{
    m->coll_bcast = mon_bcast;
    m->coll_ibcast = mon_ibcast;
    m->coll_scatter = mon_scatter;
    m->coll_iscatter = mon_iscatter;
    m->coll_scatterv = mon_scatterv;
    m->coll_iscatterv = mon_iscatterv;
    m->coll_gather = mon_gather;
    m->coll_igather = mon_igather;
    m->coll_gatherv = mon_gatherv;
    m->coll_igatherv = mon_igatherv;
    m->coll_reduce = mon_reduce;
    m->coll_ireduce = mon_ireduce;
}

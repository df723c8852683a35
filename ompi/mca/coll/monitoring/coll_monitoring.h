/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * coll_monitoring.h - coll/monitoring: records what every collective sends
 * to each peer, and its one-to-all / all-to-one / all-to-all class per
 * communicator, into the monitoring engine (common_ob1x_monitoring.h),
 * then calls the collective of the component that would have run it.
 *
 * Its module has the highest priority, so the collective selection
 * enables it last: at that moment the communicator's table (c_coll) holds
 * the functions of the components below it, which the module keeps (with
 * a reference on their modules) and calls. Active only when
 * pml_monitoring_enable > 0. Persistent collectives (MPIX_*_init) and
 * reduce_local are left to the component below (not recorded).
 */
#ifndef COLL_MONITORING_H
#define COLL_MONITORING_H

#include "ompi_config.h"
#include "common_ob1x_monitoring.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/request/request.h"

BEGIN_C_DECLS

typedef struct {
    mca_coll_base_module_t super;
    /* The functions and modules below us on this communicator. */
    mca_coll_base_comm_coll_t real;
    ob1x_mon_coll_data_t *data;
} mca_coll_monitoring_module_t;
OBJ_CLASS_DECLARATION(mca_coll_monitoring_module_t);

OMPI_DECLSPEC extern mca_coll_base_component_2_0_0_t mca_coll_monitoring_component;

/* Installs the collective entry points of each file into the module. */
void mca_coll_monitoring_set_rooted(mca_coll_base_module_t *m);
void mca_coll_monitoring_set_all(mca_coll_base_module_t *m);
void mca_coll_monitoring_set_neighbor(mca_coll_base_module_t *m);

/* --- recording helpers (coll_monitoring_record.c) ----------------------- */

static inline mca_coll_monitoring_module_t *mon_module(mca_coll_base_module_t *m)
{
    return (mca_coll_monitoring_module_t *) m;
}

static inline size_t mon_type_size(ompi_datatype_t *type)
{
    size_t size;
    ompi_datatype_type_size(type, &size);
    return size;
}

/* Number of peers a collective can send to: the remote group's size
 * (the communicator's size for an intracommunicator). */
static inline int mon_peers(ompi_communicator_t *comm)
{
    /* (ompi_comm_remote_size is 0 on an intracommunicator) */
    return ompi_group_size(comm->c_remote_group);
}

/* The peer that is this process (not counted), -1 on an intercommunicator. */
static inline int mon_self(ompi_communicator_t *comm)
{
    return OMPI_COMM_IS_INTER(comm) ? -1 : ompi_comm_rank(comm);
}

/* This process is the root of a rooted collective. */
static inline bool mon_is_root(ompi_communicator_t *comm, int root)
{
    return OMPI_COMM_IS_INTER(comm) ? MPI_ROOT == root : ompi_comm_rank(comm) == root;
}

/* bytes to every peer but self; returns the total. */
size_t mca_coll_monitoring_to_all(ompi_communicator_t *comm, size_t bytes);
/* counts[i] * type_size to peer i, self skipped; returns the total. */
size_t mca_coll_monitoring_to_each(ompi_communicator_t *comm, const int *counts, size_t type_size);
/* counts[i] * size of types[i] to peer i, self skipped; returns the total. */
size_t mca_coll_monitoring_to_each_w(ompi_communicator_t *comm, const int *counts,
                                     ompi_datatype_t *const *types);
/* bytes to every rank above this one (scan, exscan); returns the total. */
size_t mca_coll_monitoring_to_above(ompi_communicator_t *comm, size_t bytes);

END_C_DECLS

#endif /* COLL_MONITORING_H */

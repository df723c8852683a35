/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * coll_monitoring_component.c - coll/monitoring's component and module
 * life cycle: which collectives it takes over on a communicator, and the
 * references it keeps on the modules below it.
 */
#include "coll_monitoring.h"

#include <limits.h>
#include <stddef.h>
#include <string.h>

#include "common_ob1x_help.h"
#include "ob1x_version.h"
#include "ompi/mca/coll/base/base.h"
#include "ompi/mca/pml/base/base.h"

/* Where a collective's function and module sit in the communicator's
 * table (and so in our copy of it), and its function in a module. */
typedef struct {
    size_t table_fn, table_module, module_fn;
} mon_api_t;

#define MON_API(name)                                                                              \
    {                                                                                              \
        offsetof(mca_coll_base_comm_coll_t, coll_##name),                                          \
            offsetof(mca_coll_base_comm_coll_t, coll_##name##_module),                             \
            offsetof(mca_coll_base_module_t, coll_##name)                                          \
    }

/* Every collective we record: blocking, non-blocking, neighbourhood. */
static const mon_api_t mon_apis[] = {
    MON_API(allgather),
    MON_API(allgatherv),
    MON_API(allreduce),
    MON_API(alltoall),
    MON_API(alltoallv),
    MON_API(alltoallw),
    MON_API(barrier),
    MON_API(bcast),
    MON_API(exscan),
    MON_API(gather),
    MON_API(gatherv),
    MON_API(reduce),
    MON_API(reduce_scatter),
    MON_API(reduce_scatter_block),
    MON_API(scan),
    MON_API(scatter),
    MON_API(scatterv),
    MON_API(iallgather),
    MON_API(iallgatherv),
    MON_API(iallreduce),
    MON_API(ialltoall),
    MON_API(ialltoallv),
    MON_API(ialltoallw),
    MON_API(ibarrier),
    MON_API(ibcast),
    MON_API(iexscan),
    MON_API(igather),
    MON_API(igatherv),
    MON_API(ireduce),
    MON_API(ireduce_scatter),
    MON_API(ireduce_scatter_block),
    MON_API(iscan),
    MON_API(iscatter),
    MON_API(iscatterv),
    MON_API(neighbor_allgather),
    MON_API(neighbor_allgatherv),
    MON_API(neighbor_alltoall),
    MON_API(neighbor_alltoallv),
    MON_API(neighbor_alltoallw),
    MON_API(ineighbor_allgather),
    MON_API(ineighbor_allgatherv),
    MON_API(ineighbor_alltoall),
    MON_API(ineighbor_alltoallv),
    MON_API(ineighbor_alltoallw),
};
#define MON_N_APIS (sizeof(mon_apis) / sizeof(mon_apis[0]))

static inline void **slot(void *base, size_t offset)
{
    return (void **) ((char *) base + offset);
}

/* We hold a reference on the engine (monitoring enabled). */
static bool mon_engine_held = false;

/* Point-to-point messages go unrecorded when the selected PML neither
 * records (ob1x) nor was interposed on (pml/monitoring): say so once,
 * since the user asked for monitoring. */
static void mon_check_pml(void)
{
    static bool checked = false;
    const char *pml = mca_pml_base_selected_component.pmlm_version.mca_component_name;

    if (checked) {
        return;
    }
    checked = true;
    /* Every process has the same setting: rank 0 speaks for all. Written at
     * once: a short job's asynchronous help message is at times lost on its
     * way to mpirun (see ob1x_show_help_now). */
    if (0 != strcmp(pml, "ob1x") && 0 != strcmp(pml, "monitoring") &&
        0 == ompi_comm_rank(&ompi_mpi_comm_world.comm)) {
        ob1x_show_help_now("help-mpi-pml-monitoring.txt", "pml-not-monitored", ob1x_mon_enabled(),
                           pml, pml, ob1x_host());
    }
}

/* Takes over every collective the modules below provide on comm; one they
 * do not provide is left out (our entry NULL), so the table keeps none. */
static int mon_module_enable(mca_coll_base_module_t *module, ompi_communicator_t *comm)
{
    mca_coll_monitoring_module_t *m = mon_module(module);

    for (size_t i = 0; i < MON_N_APIS; ++i) {
        mca_coll_base_module_t *below = *slot(comm->c_coll, mon_apis[i].table_module);
        if (NULL == below) {
            *slot(module, mon_apis[i].module_fn) = NULL;
            continue;
        }
        OBJ_RETAIN(below);
        *slot(&m->real, mon_apis[i].table_module) = below;
        *slot(&m->real, mon_apis[i].table_fn) = *slot(comm->c_coll, mon_apis[i].table_fn);
    }
    m->data = ob1x_mon_coll_new(comm);
    return OMPI_SUCCESS;
}

/* Drops the modules below us, telling each one, as the framework would
 * have, that it no longer serves the collectives we took. */
static void mon_release_below(mca_coll_monitoring_module_t *m, ompi_communicator_t *comm)
{
    for (size_t i = 0; i < MON_N_APIS; ++i) {
        mca_coll_base_module_t **below =
            (mca_coll_base_module_t **) slot(&m->real, mon_apis[i].table_module);
        if (NULL == *below) {
            continue;
        }
        if (NULL != comm && NULL != (*below)->coll_module_disable) {
            (*below)->coll_module_disable(*below, comm);
        }
        OBJ_RELEASE(*below);
        *below = NULL;
        *slot(&m->real, mon_apis[i].table_fn) = NULL;
    }
}

/* Called once per collective slot we hold when comm goes away: the first
 * call does the work. */
static int mon_module_disable(mca_coll_base_module_t *module, ompi_communicator_t *comm)
{
    mca_coll_monitoring_module_t *m = mon_module(module);

    if (NULL != m->data) {
        ob1x_mon_coll_release(m->data);
        m->data = NULL;
    }
    mon_release_below(m, comm);
    return OMPI_SUCCESS;
}

static void mon_module_construct(mca_coll_monitoring_module_t *m)
{
    memset(&m->real, 0, sizeof(m->real));
    m->data = NULL;
}

static void mon_module_destruct(mca_coll_monitoring_module_t *m)
{
    if (NULL != m->data) {
        ob1x_mon_coll_release(m->data);
    }
    mon_release_below(m, NULL);
}

OBJ_CLASS_INSTANCE(mca_coll_monitoring_module_t, mca_coll_base_module_t, mon_module_construct,
                   mon_module_destruct);

static mca_coll_base_module_t *mon_comm_query(ompi_communicator_t *comm, int *priority)
{
    mca_coll_monitoring_module_t *m;

    if (!mon_engine_held) {
        return NULL;
    }
    if (comm == &ompi_mpi_comm_world.comm) {
        mon_check_pml();
    }
    m = OBJ_NEW(mca_coll_monitoring_module_t);
    if (NULL == m) {
        return NULL;
    }
    m->super.coll_module_enable = mon_module_enable;
    m->super.coll_module_disable = mon_module_disable;
    mca_coll_monitoring_set_rooted(&m->super);
    mca_coll_monitoring_set_all(&m->super);
    mca_coll_monitoring_set_neighbor(&m->super);
    /* Enabled last, above every component that does the work. */
    *priority = INT_MAX;
    return &m->super;
}

static int mon_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    if (mon_engine_held) {
        return OMPI_SUCCESS;
    }
    if (OMPI_SUCCESS != ob1x_mon_register() || ob1x_mon_enabled() <= 0 ||
        OMPI_SUCCESS != ob1x_mon_init()) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    mon_engine_held = true;
    ob1x_help_dirs_add(OB1X_HELP_SRCDIR);
    return OMPI_SUCCESS;
}

static int mon_component_register(void)
{
    return ob1x_mon_register();
}

static int mon_component_close(void)
{
    if (mon_engine_held) {
        mon_engine_held = false;
        ob1x_mon_finalize();
    }
    return OMPI_SUCCESS;
}

mca_coll_base_component_2_0_0_t mca_coll_monitoring_component = {
    .collm_version =
        {
            MCA_COLL_BASE_VERSION_2_0_0,
            .mca_component_name = "monitoring",
            .mca_component_major_version = OB1X_MAJOR_VERSION,
            .mca_component_minor_version = OB1X_MINOR_VERSION,
            .mca_component_release_version = OB1X_RELEASE_VERSION,
            .mca_close_component = mon_component_close,
            .mca_register_component_params = mon_component_register,
        },
    .collm_data = {MCA_BASE_METADATA_PARAM_CHECKPOINT},
    .collm_init_query = mon_init_query,
    .collm_comm_query = mon_comm_query,
};

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * osc_monitoring_component.c - the component: stands aside when
 * monitoring is off; else chooses the OSC component that would have been
 * chosen without it and interposes on the module that one builds.
 */
#include "osc_monitoring.h"

#include <limits.h>

#include "opal/mca/base/mca_base_pvar.h"
#include "ompi/mca/osc/base/base.h"

#include "common_ob1x_monitoring.h"
#include "ob1x_version.h"

/* pml_monitoring_enable > 0 when the component was initialized. */
static bool osc_monitoring_on = false;
static bool osc_monitoring_initialized = false;

static int osc_monitoring_windows_get(const mca_base_pvar_t *pvar, void *value, void *obj)
{
    (void) pvar;
    (void) obj;
    *(unsigned long long *) value = osc_monitoring_window_count;
    return OMPI_SUCCESS;
}

static int osc_monitoring_register(void)
{
    /* The engine's variables are registered at init (ob1x_mon_init), not
     * here: registering pml_monitoring_* beside Open MPI's own
     * pml/monitoring, which ompi_info also opens, crashes ompi_info at
     * exit (as pml/ob1x found; see docs/mca-params.md, Monitoring). */
    /* Beyond stock: whether windows are interposed (tests, debugging). */
    (void) mca_base_component_pvar_register(
        &mca_osc_monitoring_component.osc_version, "windows",
        "Windows whose RMA calls osc/monitoring counts now (0 when monitoring is off)",
        OPAL_INFO_LVL_9, MPI_T_PVAR_CLASS_LEVEL, MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG, NULL,
        MPI_T_BIND_NO_OBJECT, MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS,
        osc_monitoring_windows_get, NULL, NULL, NULL);
    return OMPI_SUCCESS;
}

/* Always succeeds, also when monitoring is off: the component then stays
 * loaded but answers no query, so that its own pvar (osc_monitoring_windows)
 * stays valid for the run and reads 0. */
static int osc_monitoring_init(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    if (OMPI_SUCCESS != ob1x_mon_init()) {
        return OMPI_SUCCESS; /* the engine said why; nothing counted */
    }
    osc_monitoring_initialized = true;
    osc_monitoring_on = ob1x_mon_enabled() > 0 && OMPI_SUCCESS == osc_monitoring_windows_init();
    return OMPI_SUCCESS;
}

static int osc_monitoring_finalize(void)
{
    if (osc_monitoring_on) {
        osc_monitoring_windows_fini();
        osc_monitoring_on = false;
    }
    if (osc_monitoring_initialized) {
        osc_monitoring_initialized = false;
        ob1x_mon_finalize();
    }
    return OMPI_SUCCESS;
}

static int osc_monitoring_query(ompi_win_t *win, void **base, size_t size, int disp_unit,
                                ompi_communicator_t *comm, opal_info_t *info, int flavor)
{
    (void) win, (void) base, (void) size, (void) disp_unit;
    (void) comm, (void) info, (void) flavor;
    return osc_monitoring_on ? INT_MAX : -1;
}

/* The selection Open MPI's base would make without us: the highest
 * priority among the other components. Returns OMPI_ERR_RMA_SHARED as
 * the base does when a shared window is refused that way. */
static int best_other(ompi_win_t *win, void **base, size_t size, int disp_unit,
                      ompi_communicator_t *comm, opal_info_t *info, int flavor,
                      ompi_osc_base_component_t **best)
{
    mca_base_component_list_item_t *cli;
    int best_priority = -1;

    *best = NULL;
    OPAL_LIST_FOREACH(cli, &ompi_osc_base_framework.framework_components,
                      mca_base_component_list_item_t)
    {
        ompi_osc_base_component_t *c = (ompi_osc_base_component_t *) cli->cli_component;
        int priority;

        if (c == &mca_osc_monitoring_component) {
            continue;
        }
        priority = c->osc_query(win, base, size, disp_unit, comm, info, flavor);
        if (MPI_WIN_FLAVOR_SHARED == flavor && OMPI_ERR_RMA_SHARED == priority) {
            return OMPI_ERR_RMA_SHARED;
        }
        if (priority > best_priority) {
            best_priority = priority;
            *best = c;
        }
    }
    return NULL == *best ? OMPI_ERR_NOT_SUPPORTED : OMPI_SUCCESS;
}

static int osc_monitoring_select(ompi_win_t *win, void **base, size_t size, int disp_unit,
                                 ompi_communicator_t *comm, opal_info_t *info, int flavor,
                                 int *model)
{
    ompi_osc_base_component_t *best;
    int rc = best_other(win, base, size, disp_unit, comm, info, flavor, &best);

    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    rc = best->osc_select(win, base, size, disp_unit, comm, info, flavor, model);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    rc = osc_monitoring_interpose(win);
    if (OMPI_SUCCESS == rc) {
        /* --mca osc_base_verbose 10 shows who really serves each window */
        opal_output_verbose(10, ompi_osc_base_framework.framework_output,
                            "osc/monitoring: counting window \"%s\", served by osc/%s", win->w_name,
                            best->osc_version.mca_component_name);
    } else {
        /* Out of memory for the record: the window works, uncounted. */
        opal_output_verbose(1, ompi_osc_base_framework.framework_output,
                            "osc/monitoring: window not monitored (%d)", rc);
    }
    return OMPI_SUCCESS;
}

ompi_osc_base_component_t mca_osc_monitoring_component = {
    .osc_version =
        {
            OMPI_OSC_BASE_VERSION_3_0_0,
            .mca_component_name = "monitoring",
            .mca_component_major_version = OB1X_MAJOR_VERSION,
            .mca_component_minor_version = OB1X_MINOR_VERSION,
            .mca_component_release_version = OB1X_RELEASE_VERSION,
            .mca_register_component_params = osc_monitoring_register,
        },
    .osc_data = {MCA_BASE_METADATA_PARAM_CHECKPOINT},
    .osc_init = osc_monitoring_init,
    .osc_query = osc_monitoring_query,
    .osc_select = osc_monitoring_select,
    .osc_finalize = osc_monitoring_finalize,
};

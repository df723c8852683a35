/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pml_monitoring_component.c - how pml/monitoring gets in front of the
 * selected PML.
 *
 * Open MPI's PML selection calls init on every PML in mca_pml_base_pml,
 * keeps the highest priority, and then closes the others. We add our name
 * to that list when monitoring is enabled (so "--mca pml ob1,monitoring"
 * and an unrestricted list both work), answer init with priority 0, and
 * when we are closed as a loser we save the winner and put our send entry
 * points into mca_pml. An extra reference on our DSO keeps the code
 * loaded after that close. At MPI_Finalize our finalize puts the winner
 * back and finalizes it.
 *
 * pml/ob1x records in its own send path; when it wins we do nothing (else
 * every message would be counted twice).
 */
#include "pml_monitoring.h"

#include <string.h>

#include "common_ob1x_help.h"
#include "common_ob1x_monitoring.h"
#include "ob1x_version.h"
#include "ompi/mca/pml/base/base.h"
#include "opal/mca/base/mca_base_component_repository.h"

mca_pml_base_component_t mca_pml_monitoring_real_component;

/* Monitoring is enabled: we take part in the selection. */
static bool mon_wanted = false;
/* We hold a reference on the engine (from interposing to MPI_Finalize). */
static bool mon_engine_held = false;
/* Our entry points are in mca_pml. */
static bool mon_interposed = false;

static int mon_component_register(void)
{
    /* The MCA variables and pvars are known to ompi_info even when
     * monitoring is off. */
    return ob1x_mon_register();
}

static int mon_component_open(void)
{
    /* Only the setting is needed here. The engine's reference is taken when
     * we interpose: released at select time, a reference would be the last
     * one (pml/ob1x takes its own later) and dump an empty report. */
    if (OMPI_SUCCESS != ob1x_mon_register() || ob1x_mon_enabled() <= 0) {
        return OMPI_SUCCESS; /* monitoring off: stay out of the way */
    }
    mon_wanted = true;
    ob1x_help_dirs_add(OB1X_HELP_SRCDIR);
    /* Be among the PMLs the selection initializes, whatever the user's
     * list (it was restricted to ours by "--mca pml X,monitoring"). */
    opal_pointer_array_add(&mca_pml_base_pml,
                           strdup(mca_pml_monitoring_component.pmlm_version.mca_component_name));
    return OMPI_SUCCESS;
}

static mca_pml_base_module_t *mon_component_init(int *priority, bool enable_progress_threads,
                                                 bool enable_mpi_threads)
{
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    if (!mon_wanted) {
        return NULL;
    }
    *priority = 0; /* take part, lose to any real PML */
    return &mca_pml_monitoring_alone;
}

static void mon_release_engine(void)
{
    if (mon_engine_held) {
        mon_engine_held = false;
        ob1x_mon_finalize();
    }
}

static bool winner_is(const char *name)
{
    return 0 == strcmp(mca_pml_base_selected_component.pmlm_version.mca_component_name, name);
}

/* Called by the selection once the winner is in mca_pml. */
static int mon_interpose(void)
{
    int rc = ob1x_mon_init();
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    mon_engine_held = true;
    rc = mca_base_component_repository_retain_component(
        mca_pml_monitoring_component.pmlm_version.mca_type_name,
        mca_pml_monitoring_component.pmlm_version.mca_component_name);
    if (OPAL_SUCCESS != rc) {
        mon_release_engine();
        return rc;
    }
    mca_pml_monitoring_real_component = mca_pml_base_selected_component;
    mca_pml_monitoring_real = mca_pml;
    mca_pml = mca_pml_monitoring_module_wrap(&mca_pml_monitoring_real);
    mca_pml_base_selected_component = mca_pml_monitoring_component;
    mon_interposed = true;
    return OMPI_SUCCESS;
}

static int mon_component_close(void)
{
    if (!mon_wanted || mon_interposed) {
        return OMPI_SUCCESS;
    }
    mon_wanted = false;
    if (winner_is("ob1x")) {
        return OMPI_SUCCESS; /* ob1x records by itself */
    }
    return mon_interpose();
}

/* Called for every loser during the selection (nothing to do then), and
 * at MPI_Finalize as the selected component once we interposed. */
static int mon_component_finalize(void)
{
    if (!mon_interposed) {
        return OMPI_SUCCESS;
    }
    /* The last reference dumps the data (pml_monitoring_enable_output). */
    mon_release_engine();
    mca_pml = mca_pml_monitoring_real;
    mca_pml_base_selected_component = mca_pml_monitoring_real_component;
    mon_interposed = false;
    mca_pml_monitoring_persistent_fini();
    if (NULL != mca_pml_monitoring_real_component.pmlm_finalize) {
        return mca_pml_monitoring_real_component.pmlm_finalize();
    }
    return OMPI_SUCCESS;
}

mca_pml_base_component_2_0_0_t mca_pml_monitoring_component = {
    .pmlm_version =
        {
            MCA_PML_BASE_VERSION_2_0_0,
            .mca_component_name = "monitoring",
            .mca_component_major_version = OB1X_MAJOR_VERSION,
            .mca_component_minor_version = OB1X_MINOR_VERSION,
            .mca_component_release_version = OB1X_RELEASE_VERSION,
            .mca_open_component = mon_component_open,
            .mca_close_component = mon_component_close,
            .mca_register_component_params = mon_component_register,
        },
    .pmlm_data = {MCA_BASE_METADATA_PARAM_CHECKPOINT},
    .pmlm_init = mon_component_init,
    .pmlm_finalize = mon_component_finalize,
};

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * routed/ob1x_radix: component, parameters and selection.
 */
#include "orte_config.h"
#include "orte/constants.h"

#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/show_help.h"
#include "orte/mca/routed/base/base.h"
#include "orte/util/proc_info.h"

#include "ob1x_version.h"
#include "routed_ob1x_radix.h"

/* Sizes of the seed's thresholds: 32 children per interior daemon up to
 * 1K daemons, 64 up to 4K, 128 beyond. */
#define RADIX_SMALL 32
#define RADIX_MEDIUM 64
#define RADIX_LARGE 128

static int ob1x_radix_register(void);
static int ob1x_radix_open(void);
static int ob1x_radix_query(mca_base_module_t **module, int *priority);

orte_routed_ob1x_radix_component_t mca_routed_ob1x_radix_component = {
    .super =
        {
            .base_version =
                {
                    ORTE_ROUTED_BASE_VERSION_3_0_0,
                    .mca_component_name = "ob1x_radix",
                    MCA_BASE_MAKE_VERSION(component, OB1X_MAJOR_VERSION, OB1X_MINOR_VERSION,
                                          OB1X_RELEASE_VERSION),
                    .mca_open_component = ob1x_radix_open,
                    .mca_query_component = ob1x_radix_query,
                    .mca_register_component_params = ob1x_radix_register,
                },
            .base_data = {MCA_BASE_METADATA_PARAM_CHECKPOINT},
        },
};

static int ob1x_radix_register(void)
{
    mca_base_component_t *c = &mca_routed_ob1x_radix_component.super.base_version;

    mca_routed_ob1x_radix_component.radix = 0;
    (void) mca_base_component_var_register(
        c, "radix",
        "Children per interior daemon of the routing (and tree spawn) tree; 0: chosen from "
        "the number of daemons (32 up to routed_ob1x_radix_medium_limit daemons, 64 up to "
        "routed_ob1x_radix_large_limit, 128 beyond). Must be the same on every daemon",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_routed_ob1x_radix_component.radix);
    mca_routed_ob1x_radix_component.medium_limit = 1024;
    (void) mca_base_component_var_register(
        c, "medium_limit",
        "Largest number of daemons (mpirun included) with a radix of 32 when "
        "routed_ob1x_radix_radix is 0",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_routed_ob1x_radix_component.medium_limit);
    mca_routed_ob1x_radix_component.large_limit = 4096;
    (void) mca_base_component_var_register(
        c, "large_limit",
        "Largest number of daemons (mpirun included) with a radix of 64 when "
        "routed_ob1x_radix_radix is 0; 128 beyond",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_routed_ob1x_radix_component.large_limit);
    /* only matters among several named routed components */
    mca_routed_ob1x_radix_component.priority = 5;
    (void) mca_base_component_var_register(
        c, "priority",
        "Selection priority among the routed components named with --mca routed (stock "
        "radix: 70); ob1x_radix is started only when named there",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_routed_ob1x_radix_component.priority);
    return ORTE_SUCCESS;
}

static char *host_name(void)
{
    return NULL != orte_process_info.nodename ? orte_process_info.nodename : "?";
}

/* The help texts: the build tree's first (a run from it), then the
 * installed ones. */
static void add_help_dirs(void)
{
    if (0 == access(OB1X_HELP_SRCDIR, R_OK)) {
        (void) opal_show_help_add_dir(OB1X_HELP_SRCDIR);
    }
    (void) opal_show_help_add_dir(OB1X_HELP_DIR);
}

static int ob1x_radix_open(void)
{
    orte_routed_ob1x_radix_component_t *c = &mca_routed_ob1x_radix_component;

    add_help_dirs();
    if (c->radix < 0 || c->medium_limit < 1 || c->large_limit < c->medium_limit) {
        opal_show_help("help-routed-ob1x-radix.txt", "bad-params", true, host_name(), c->radix,
                       c->medium_limit, c->large_limit);
        return ORTE_ERR_BAD_PARAM;
    }
    return ORTE_SUCCESS;
}

/* Whether the user selected us by name (the framework's "routed"
 * variable lists ob1x_radix, not as an exclusion). Open MPI 4.1 starts
 * every routed module that its query accepts and makes all of them compute
 * their plan, whichever one routes: an installed ob1x_radix that is not
 * named must not even be started. */
static bool named_by_user(void)
{
    const char **value = NULL;
    int idx = -1;

    if (OPAL_SUCCESS != mca_base_var_find_by_name("routed", &idx) ||
        OPAL_SUCCESS != mca_base_var_get_value(idx, &value, NULL, NULL) || NULL == value ||
        NULL == value[0] || '^' == value[0][0]) {
        return false;
    }
    return NULL != strstr(value[0], "ob1x_radix");
}

static int ob1x_radix_query(mca_base_module_t **module, int *priority)
{
    if (!named_by_user()) {
        *module = NULL;
        return ORTE_ERROR;
    }
    *priority = mca_routed_ob1x_radix_component.priority;
    *module = (mca_base_module_t *) &orte_routed_ob1x_radix_module;
    return ORTE_SUCCESS;
}

int routed_ob1x_radix_for(orte_vpid_t n)
{
    orte_routed_ob1x_radix_component_t *c = &mca_routed_ob1x_radix_component;

    if (c->radix > 0) {
        return c->radix;
    }
    if (n <= (orte_vpid_t) c->medium_limit) {
        return RADIX_SMALL;
    }
    return n <= (orte_vpid_t) c->large_limit ? RADIX_MEDIUM : RADIX_LARGE;
}

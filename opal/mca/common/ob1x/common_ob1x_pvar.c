/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_pvar.c - MPI_T registration of counter tables
 * (common_ob1x_pvar.h).
 */
#include "opal_config.h"

#include "opal/constants.h"

#include "common_ob1x_pvar.h"

int ob1x_pvar_register(const mca_base_component_t *component, const ob1x_pvar_t *pvar)
{
    int rc = mca_base_component_pvar_register(
        component, pvar->name, pvar->description, OPAL_INFO_LVL_4, pvar->var_class,
        MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG, NULL, MCA_BASE_VAR_BIND_NO_OBJECT,
        MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS, NULL, NULL, NULL,
        pvar->storage);
    return rc < 0 ? rc : OPAL_SUCCESS;
}

int ob1x_pvars_register(const mca_base_component_t *component, const ob1x_pvar_t *table,
                        size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        int rc = ob1x_pvar_register(component, &table[i]);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_pvar.h - counters of the ob1x components and their MPI_T
 * performance variables: one table row per variable (name, description,
 * class, storage), registered in one call; ob1x_counter_add updates one.
 */
#ifndef COMMON_OB1X_PVAR_H
#define COMMON_OB1X_PVAR_H

#include <stddef.h>
#include <stdint.h>

#include "opal/mca/base/mca_base_pvar.h"
#include "opal/runtime/opal.h"
#include "opal/threads/threads.h"

typedef struct ob1x_pvar {
    const char *name; /* without the "<framework>_<component>_" prefix */
    const char *description;
    int var_class;     /* MCA_BASE_PVAR_CLASS_COUNTER, _LEVEL, _HIGHWATERMARK ... */
    uint64_t *storage; /* read by MPI_T as unsigned long long */
} ob1x_pvar_t;

/* Registers one read-only, continuous, unbound variable (level 4, as
 * Open MPI's own counters). Returns OPAL_SUCCESS or the error. */
int ob1x_pvar_register(const mca_base_component_t *component, const ob1x_pvar_t *pvar);

/* Registers every row; returns the first error. */
int ob1x_pvars_register(const mca_base_component_t *component, const ob1x_pvar_t *table,
                        size_t count);

/* Adds to a counter and returns its new value. Exact under
 * MPI_THREAD_MULTIPLE, and no dearer than a plain add when one thread
 * runs: a locked add would cost as much as the rest of a small send. */
static inline uint64_t ob1x_counter_add(uint64_t *counter, uint64_t value)
{
    if (opal_using_threads()) {
        return __atomic_add_fetch(counter, value, __ATOMIC_RELAXED);
    }
    return *counter += value;
}

#endif /* COMMON_OB1X_PVAR_H */

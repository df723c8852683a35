/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_param.h - MCA parameters of the ob1x components described as
 * tables: one row per parameter (name, type, default, accepted values,
 * level, description, storage), registered in one call and checked in one
 * call that names a bad value through opal_show_help.
 */
#ifndef COMMON_OB1X_PARAM_H
#define COMMON_OB1X_PARAM_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/mca/base/mca_base_var.h"
#include "common_ob1x_help.h"

/* Upper end of a range that has none. */
#define OB1X_PARAM_NO_MAX LLONG_MAX

/* Row flags. */
#define OB1X_PARAM_CHECK_ONLY 0x1 /* registered elsewhere (e.g. the BTL base): only checked */
#define OB1X_PARAM_READONLY 0x2   /* MCA_BASE_VAR_SCOPE_READONLY whatever the table's scope */

typedef struct ob1x_param {
    const char *name;         /* without the "<framework>_<component>_" prefix */
    mca_base_var_type_t type; /* INT, UNSIGNED_INT, SIZE_T, BOOL or STRING */
    void *storage;            /* variable of that type */
    long long def;            /* default of a number or bool */
    const char *def_string;   /* default of a STRING */
    /* Accepted range of a number, checked when min < max. Open MPI reads
     * "-1" for a size_t variable as 2^64 - 1: no byte count of that size is
     * meant, so a size_t above SIZE_MAX/2 is checked (and shown) as the
     * negative number it was written as. */
    long long min, max;
    bool (*valid)(void);    /* further check, NULL: none */
    const char *valid_text; /* the accepted values in words; NULL: from min..max */
    const mca_base_var_enum_value_t *enum_vals; /* INT chosen by name; NULL: plain number */
    int level;                                  /* OPAL_INFO_LVL_* */
    unsigned flags;                             /* OB1X_PARAM_* */
    const char *description;
} ob1x_param_t;

/* Sets every row's storage to its default and registers it with
 * `component` in `scope`. Returns the first error. */
int ob1x_params_register(const mca_base_component_t *component, const ob1x_param_t *table,
                         size_t count, mca_base_var_scope_t scope);

/* Checks the current values; on the first bad one shows the help message
 * "invalid-param" (naming the parameter, its value and what is accepted;
 * ob1x_show_help_now) and returns OPAL_ERR_BAD_PARAM. */
int ob1x_params_check(const mca_base_component_t *component, const ob1x_param_t *table,
                      size_t count);

#endif /* COMMON_OB1X_PARAM_H */

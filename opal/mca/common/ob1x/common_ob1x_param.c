/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_param.c - registration and checking of parameter tables
 * (common_ob1x_param.h).
 */
#include "opal_config.h"

#include <stdio.h>

#include "opal/constants.h"
#include "common_ob1x_param.h"

/* "<framework>_<component>_<name><suffix>", the name users set. */
static void full_name(const mca_base_component_t *component, const ob1x_param_t *p,
                      const char *suffix, char *buf, size_t len)
{
    snprintf(buf, len, "%s_%s_%s%s", component->mca_type_name, component->mca_component_name,
             p->name, suffix);
}

static void set_default(const ob1x_param_t *p)
{
    switch (p->type) {
        case MCA_BASE_VAR_TYPE_INT:
            *(int *) p->storage = (int) p->def;
            break;
        case MCA_BASE_VAR_TYPE_UNSIGNED_INT:
            *(unsigned int *) p->storage = (unsigned int) p->def;
            break;
        case MCA_BASE_VAR_TYPE_SIZE_T:
            *(size_t *) p->storage = (size_t) p->def;
            break;
        case MCA_BASE_VAR_TYPE_BOOL:
            *(bool *) p->storage = 0 != p->def;
            break;
        case MCA_BASE_VAR_TYPE_STRING:
            /* the variable system copies it; the row's string stays ours */
            *(const char **) p->storage = p->def_string;
            break;
        default:
            break;
    }
}

/* The enumerator's names as "a, b, c". */
static void enum_names(const mca_base_var_enum_value_t *vals, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int i = 0; NULL != vals[i].string && used < len; ++i) {
        used +=
            (size_t) snprintf(buf + used, len - used, "%s%s", 0 == i ? "" : ", ", vals[i].string);
    }
}

/* The variable system refuses a value that names no enumerator when the
 * variable is registered; its own message can be lost when the job ends
 * at once, so this one goes through the help system too. */
static void show_invalid_enum(const mca_base_component_t *component, const ob1x_param_t *p)
{
    char full[128], names[256];

    full_name(component, p, "", full, sizeof(full));
    enum_names(p->enum_vals, names, sizeof(names));
    ob1x_show_help_now("help-ob1x-common.txt", "invalid-enum-param", component->mca_type_name,
                       component->mca_component_name, ob1x_host(), full, names);
}

static int register_one(const mca_base_component_t *component, const ob1x_param_t *p,
                        mca_base_var_scope_t scope)
{
    mca_base_var_enum_t *enumerator = NULL;
    int rc;

    if (NULL != p->enum_vals) {
        char name[128];
        full_name(component, p, "s", name, sizeof(name));
        rc = mca_base_var_enum_create(name, p->enum_vals, &enumerator);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    if (p->flags & OB1X_PARAM_READONLY) {
        scope = MCA_BASE_VAR_SCOPE_READONLY;
    }
    rc = mca_base_component_var_register(component, p->name, p->description, p->type, enumerator, 0,
                                         0, p->level, scope, p->storage);
    if (NULL != enumerator) {
        OBJ_RELEASE(enumerator);
        if (rc < 0) {
            show_invalid_enum(component, p);
        }
    }
    return rc < 0 ? rc : OPAL_SUCCESS;
}

int ob1x_params_register(const mca_base_component_t *component, const ob1x_param_t *table,
                         size_t count, mca_base_var_scope_t scope)
{
    for (size_t i = 0; i < count; ++i) {
        if (table[i].flags & OB1X_PARAM_CHECK_ONLY) {
            continue;
        }
        set_default(&table[i]);
        int rc = register_one(component, &table[i], scope);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

/* The value of a number row as a signed number (a size_t written as a
 * negative number comes back negative). */
static long long value_of(const ob1x_param_t *p)
{
    switch (p->type) {
        case MCA_BASE_VAR_TYPE_INT:
            return *(const int *) p->storage;
        case MCA_BASE_VAR_TYPE_UNSIGNED_INT:
            return *(const unsigned int *) p->storage;
        case MCA_BASE_VAR_TYPE_SIZE_T:
            return (long long) *(const size_t *) p->storage;
        default:
            return 0;
    }
}

static bool in_range(const ob1x_param_t *p)
{
    long long v = value_of(p);
    return p->min >= p->max || (v >= p->min && v <= p->max);
}

static void show_invalid(const mca_base_component_t *component, const ob1x_param_t *p)
{
    char full[128], value[32], range[64];
    const char *valid = p->valid_text;

    full_name(component, p, "", full, sizeof(full));
    snprintf(value, sizeof(value), "%lld", value_of(p));
    if (NULL == valid) {
        if (OB1X_PARAM_NO_MAX == p->max) {
            snprintf(range, sizeof(range), ">= %lld", p->min);
        } else {
            snprintf(range, sizeof(range), "%lld..%lld", p->min, p->max);
        }
        valid = range;
    }
    ob1x_show_help_now("help-ob1x-common.txt", "invalid-param", component->mca_type_name,
                       component->mca_component_name, ob1x_host(), full, value, valid);
}

int ob1x_params_check(const mca_base_component_t *component, const ob1x_param_t *table,
                      size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        const ob1x_param_t *p = &table[i];
        if (!in_range(p) || (NULL != p->valid && !p->valid())) {
            show_invalid(component, p);
            return OPAL_ERR_BAD_PARAM;
        }
    }
    return OPAL_SUCCESS;
}

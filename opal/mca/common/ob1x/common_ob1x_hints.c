/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 * (interim registry; see common_ob1x_hints.h)
 */
#include "common_ob1x_hints.h"

#define MAX_HINTS 16
static struct {
    struct mca_btl_base_module_t *btl;
    ob1x_btl_hints_fn_t fn;
} table[MAX_HINTS];

int ob1x_btl_hints_register(struct mca_btl_base_module_t *btl, ob1x_btl_hints_fn_t fn)
{
    for (int i = 0; i < MAX_HINTS; ++i) {
        if (NULL == table[i].btl) {
            table[i].fn = fn;
            table[i].btl = btl;
            return 0;
        }
    }
    return -1;
}

void ob1x_btl_hints_deregister(struct mca_btl_base_module_t *btl)
{
    for (int i = 0; i < MAX_HINTS; ++i) {
        if (table[i].btl == btl) {
            table[i].btl = NULL;
        }
    }
}

ob1x_btl_hints_fn_t ob1x_btl_hints_find(const struct mca_btl_base_module_t *btl)
{
    for (int i = 0; i < MAX_HINTS; ++i) {
        if (table[i].btl == btl) {
            return table[i].fn;
        }
    }
    return NULL;
}

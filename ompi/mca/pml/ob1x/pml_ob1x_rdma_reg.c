/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 * (interim: registration without a cache)
 */
#include "ompi_config.h"

#include <stdlib.h>

#include "pml_ob1x.h"
#include "pml_ob1x_rdma_reg.h"

struct ob1x_reg {
    mca_bml_base_btl_t *bml_btl;
    mca_btl_base_registration_handle_t *handle;
};

int ob1x_reg_init(void)
{
    return OMPI_SUCCESS;
}

void ob1x_reg_fini(void)
{
}

int ob1x_reg_acquire(mca_bml_base_btl_t *bml_btl, void *base, size_t size, uint32_t access,
                     ob1x_reg_t **reg, mca_btl_base_registration_handle_t **handle)
{
    *reg = NULL;
    *handle = NULL;
    if (NULL == bml_btl->btl->btl_register_mem) {
        return OMPI_SUCCESS;
    }
    *reg = malloc(sizeof(**reg));
    if (NULL == *reg) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    mca_bml_base_register_mem(bml_btl, base, size, access, handle);
    if (NULL == *handle) {
        free(*reg);
        *reg = NULL;
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    (*reg)->bml_btl = bml_btl;
    (*reg)->handle = *handle;
    ob1x_count_event(OB1X_EV_REG_MADE);
    return OMPI_SUCCESS;
}

void ob1x_reg_release(ob1x_reg_t *reg)
{
    if (NULL != reg) {
        mca_bml_base_deregister_mem(reg->bml_btl, reg->handle);
        free(reg);
    }
}

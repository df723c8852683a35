/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_rdma.c - btl_put / btl_get over the module's single-copy
 * mechanism (mca_btl_smcuda_copy_ops_t).  Both complete before returning.
 */
#include "btl_smcuda.h"

int mca_btl_smcuda_put(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                       void *local_address, uint64_t remote_address,
                       struct mca_btl_base_registration_handle_t *local_handle,
                       struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                       int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc,
                       void *cbcontext, void *cbdata)
{
    mca_btl_smcuda_module_t *m = (mca_btl_smcuda_module_t *) btl;
    int rc;

    (void) remote_handle;
    (void) flags;
    (void) order;
    if (SMCUDA_UNLIKELY(!ep->copy_ok)) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    rc = m->copy->write(ep, local_address, remote_address, size);
    if (SMCUDA_UNLIKELY(OPAL_SUCCESS != rc)) {
        return rc;
    }
    SMCUDA_PV_ADD(PUT, size);
    cbfunc(btl, ep, local_address, local_handle, cbcontext, cbdata, OPAL_SUCCESS);
    return OPAL_SUCCESS;
}

int mca_btl_smcuda_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                       void *local_address, uint64_t remote_address,
                       struct mca_btl_base_registration_handle_t *local_handle,
                       struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                       int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc,
                       void *cbcontext, void *cbdata)
{
    mca_btl_smcuda_module_t *m = (mca_btl_smcuda_module_t *) btl;
    int rc;

    (void) remote_handle;
    (void) flags;
    (void) order;
    if (SMCUDA_UNLIKELY(!ep->copy_ok)) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    rc = m->copy->read(ep, local_address, remote_address, size);
    if (SMCUDA_UNLIKELY(OPAL_SUCCESS != rc)) {
        return rc;
    }
    SMCUDA_PV_ADD(GET, size);
    cbfunc(btl, ep, local_address, local_handle, cbcontext, cbdata, OPAL_SUCCESS);
    return OPAL_SUCCESS;
}

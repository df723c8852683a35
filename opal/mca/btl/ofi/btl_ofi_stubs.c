/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_ofi_stubs.c - TEMPORARY stand-ins for the two-sided path and the
 * active-message atomics, so that the one-sided core builds and runs on
 * its own. REMOVED WHEN THE TWO-SIDED FILES LAND (btl_ofi_frag.h/.c,
 * btl_ofi_send.c, btl_ofi_recv.c, btl_ofi_am.c): Makefile.am then lists
 * those instead of this file.
 */
#include "btl_ofi.h"

/* Leaves m->two_sided false: the module offers no btl_send. */
int mca_btl_ofi_twosided_init(mca_btl_ofi_module_t *m)
{
    (void) m;
    return OPAL_SUCCESS;
}

void mca_btl_ofi_twosided_fini(mca_btl_ofi_module_t *m)
{
    (void) m;
}

mca_btl_base_descriptor_t *mca_btl_ofi_alloc(mca_btl_base_module_t *btl,
                                             mca_btl_base_endpoint_t *ep, uint8_t order,
                                             size_t size, uint32_t flags)
{
    (void) btl, (void) ep, (void) order, (void) size, (void) flags;
    return NULL;
}

int mca_btl_ofi_free(mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    (void) btl, (void) des;
    return OPAL_ERR_NOT_SUPPORTED;
}

mca_btl_base_descriptor_t *mca_btl_ofi_prepare_src(mca_btl_base_module_t *btl,
                                                   mca_btl_base_endpoint_t *ep,
                                                   struct opal_convertor_t *convertor,
                                                   uint8_t order, size_t reserve, size_t *size,
                                                   uint32_t flags)
{
    (void) btl, (void) ep, (void) convertor, (void) order, (void) reserve, (void) size;
    (void) flags;
    return NULL;
}

int mca_btl_ofi_send(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                     mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag)
{
    (void) btl, (void) ep, (void) des, (void) tag;
    return OPAL_ERR_NOT_SUPPORTED;
}

int mca_btl_ofi_sendi(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                      struct opal_convertor_t *convertor, void *header, size_t header_size,
                      size_t payload_size, uint8_t order, uint32_t flags,
                      mca_btl_base_tag_t tag, mca_btl_base_descriptor_t **descriptor)
{
    (void) btl, (void) ep, (void) convertor, (void) header, (void) header_size;
    (void) payload_size, (void) order, (void) flags, (void) tag;
    if (NULL != descriptor) {
        *descriptor = NULL;
    }
    return OPAL_ERR_NOT_SUPPORTED;
}

int mca_btl_ofi_am_aop(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                       uint64_t remote_address,
                       mca_btl_base_registration_handle_t *remote_handle,
                       mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                       mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    (void) btl, (void) ep, (void) remote_address, (void) remote_handle, (void) op;
    (void) operand, (void) flags, (void) order, (void) cbfunc, (void) cbcontext, (void) cbdata;
    return OPAL_ERR_NOT_SUPPORTED;
}

int mca_btl_ofi_am_afop(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                        void *local_address, uint64_t remote_address,
                        mca_btl_base_registration_handle_t *local_handle,
                        mca_btl_base_registration_handle_t *remote_handle,
                        mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                        mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                        void *cbdata)
{
    (void) btl, (void) ep, (void) local_address, (void) remote_address, (void) local_handle;
    (void) remote_handle, (void) op, (void) operand, (void) flags, (void) order;
    (void) cbfunc, (void) cbcontext, (void) cbdata;
    return OPAL_ERR_NOT_SUPPORTED;
}

int mca_btl_ofi_am_acswap(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                          void *local_address, uint64_t remote_address,
                          mca_btl_base_registration_handle_t *local_handle,
                          mca_btl_base_registration_handle_t *remote_handle, uint64_t compare,
                          uint64_t value, int flags, int order,
                          mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                          void *cbdata)
{
    (void) btl, (void) ep, (void) local_address, (void) remote_address, (void) local_handle;
    (void) remote_handle, (void) compare, (void) value, (void) flags, (void) order;
    (void) cbfunc, (void) cbcontext, (void) cbdata;
    return OPAL_ERR_NOT_SUPPORTED;
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_ofi_mr.c - memory registration through an rcache (grdma), for every
 * MR mode btl/ofi supports:
 *   FI_MR_VIRT_ADDR   peers address our memory by virtual address; without
 *                     it, by offset into the registration (handle base_addr)
 *   FI_MR_PROV_KEY    the provider picks keys; without it we do (unique per
 *                     process and domain: a counter)
 *   FI_MR_ALLOCATED   nothing to do: we only register allocated memory
 *   FI_MR_LOCAL       local operands need a descriptor (mca_btl_ofi_local_desc)
 *   FI_MR_ENDPOINT    each MR is bound to our endpoint and enabled
 * and, with FI_HMEM (btl_ofi_hmem.c), device buffers as FI_HMEM_CUDA.
 */
#include "btl_ofi.h"

#include <stdio.h>
#include <string.h>

#include "opal/mca/rcache/base/base.h"
#include "opal/util/output.h"

#define REG_OF(handle_ptr)                                                                         \
    ((mca_btl_ofi_reg_t *) ((char *) (handle_ptr) -offsetof(mca_btl_ofi_reg_t, handle)))

static uint64_t access_of(const mca_btl_ofi_module_t *m)
{
    uint64_t access = 0;

    if (m->info->caps & (FI_RMA | FI_ATOMIC)) {
        access |= FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    }
    if (m->info->caps & FI_MSG) {
        access |= FI_SEND | FI_RECV;
    }
    return access;
}

/* A provider that does not require FI_MR_ENDPOINT may refuse the binding
 * (sockets: -FI_EINVAL, util-based ones: -FI_ENOSYS); under btl_ofi_mr_force
 * endpoint that only means the MR works without it. */
static bool declined(const mca_btl_ofi_module_t *m, int rc)
{
    return m->mr_endpoint_forced && (-FI_ENOSYS == rc || -FI_EINVAL == rc);
}

/* FI_MR_ENDPOINT: the MR is usable once bound to the endpoint that
 * serves it and enabled. */
static int bind_to_endpoint(mca_btl_ofi_module_t *m, struct fid_mr *mr)
{
    struct fid *ep = m->is_scalable_ep ? &m->sep->fid : &m->contexts[0].own_ep->fid;
    int rc = fi_mr_bind(mr, ep, 0);

    if (0 == rc || declined(m, rc)) {
        rc = fi_mr_enable(mr);
    }
    if (declined(m, rc)) {
        rc = 0;
    }
    if (0 == rc) {
        mca_btl_ofi_pv_add(m, OFI_PV_MR_ENDPOINT_BINDS, 1);
    }
    return rc;
}

/* fi_mr_reg, or for a device buffer on a module with FI_HMEM its
 * FI_HMEM_CUDA registration. */
static int register_region(mca_btl_ofi_module_t *m, void *base, size_t size, uint64_t key,
                           struct fid_mr **mr)
{
    int device = m->hmem ? mca_btl_ofi_cuda_device_of(base) : -1;

    if (device >= 0) {
        mca_btl_ofi_pv_add(m, OFI_PV_HMEM_REGS, 1);
        return mca_btl_ofi_hmem_reg(m, base, size, access_of(m), key, device, mr);
    }
    return fi_mr_reg(m->domain, base, size, access_of(m), 0, key, 0, mr, NULL);
}

/* rcache callback: registers [base, base+size) with the provider. */
static int reg_mem(void *reg_data, void *base, size_t size, mca_rcache_base_registration_t *reg)
{
    mca_btl_ofi_module_t *m = (mca_btl_ofi_module_t *) reg_data;
    mca_btl_ofi_reg_t *r = (mca_btl_ofi_reg_t *) reg;
    uint64_t key = m->use_prov_key ? 0 : __atomic_add_fetch(&m->next_key, 1, __ATOMIC_RELAXED);
    int rc;

    rc = register_region(m, base, size, key, &r->mr);
    if (0 == rc && m->mr_endpoint) {
        rc = bind_to_endpoint(m, r->mr);
        if (0 != rc) {
            (void) fi_close(&r->mr->fid);
        }
    }
    if (0 != rc) {
        opal_output_verbose(1, mca_btl_ofi_component.output,
                            "btl/ofi: %s: registering %zu bytes at %p failed: %s", m->nic_name,
                            size, base, fi_strerror(-rc));
        r->mr = NULL;
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    r->handle.rkey = fi_mr_key(r->mr);
    r->handle.desc = fi_mr_desc(r->mr);
    r->handle.base_addr = (uint64_t) (uintptr_t) base;
    return OPAL_SUCCESS;
}

static int dereg_mem(void *reg_data, mca_rcache_base_registration_t *reg)
{
    mca_btl_ofi_reg_t *r = (mca_btl_ofi_reg_t *) reg;

    (void) reg_data;
    if (NULL != r->mr) {
        int rc = fi_close(&r->mr->fid);
        r->mr = NULL;
        return 0 == rc ? OPAL_SUCCESS : OPAL_ERROR;
    }
    return OPAL_SUCCESS;
}

mca_btl_base_registration_handle_t *mca_btl_ofi_register_mem(mca_btl_base_module_t *btl,
                                                             mca_btl_base_endpoint_t *ep,
                                                             void *base, size_t size,
                                                             uint32_t flags)
{
    mca_btl_ofi_module_t *m = (mca_btl_ofi_module_t *) btl;
    mca_rcache_base_registration_t *reg = NULL;
    int access = (int) (flags & MCA_BTL_REG_FLAG_ACCESS_ANY);
    int rc;

    (void) ep;
#if OPAL_CUDA_SUPPORT
    if (OFI_UNLIKELY(flags & MCA_BTL_REG_FLAG_CUDA_GPU_MEM) && !m->hmem) {
        return NULL; /* device memory needs a provider with FI_HMEM (docs/ofi.md) */
    }
#endif
    rc = m->rcache->rcache_register(m->rcache, base, size, 0, access, &reg);
    if (OFI_UNLIKELY(OPAL_SUCCESS != rc || NULL == reg)) {
        return NULL;
    }
    return &((mca_btl_ofi_reg_t *) reg)->handle;
}

int mca_btl_ofi_deregister_mem(mca_btl_base_module_t *btl,
                               mca_btl_base_registration_handle_t *handle)
{
    mca_btl_ofi_module_t *m = (mca_btl_ofi_module_t *) btl;

    return m->rcache->rcache_deregister(m->rcache, &REG_OF(handle)->base);
}

void *mca_btl_ofi_local_desc_temp(mca_btl_ofi_module_t *m, void *addr, size_t len,
                                  mca_btl_base_registration_handle_t *local_handle,
                                  mca_rcache_base_registration_t **temp)
{
    mca_rcache_base_registration_t *reg = NULL;

    *temp = NULL;
    if (OFI_LIKELY(!m->mr_local)) {
        return NULL;
    }
    if (NULL != local_handle) {
        return local_handle->desc;
    }
    if (OPAL_SUCCESS !=
        m->rcache->rcache_register(m->rcache, addr, len, 0, MCA_RCACHE_ACCESS_LOCAL_WRITE, &reg)) {
        return NULL;
    }
    *temp = reg;
    return ((mca_btl_ofi_reg_t *) reg)->handle.desc;
}

void mca_btl_ofi_local_release(mca_btl_ofi_module_t *m, mca_rcache_base_registration_t *temp)
{
    if (NULL != temp) {
        (void) m->rcache->rcache_deregister(m->rcache, temp);
    }
}

/* Without a handle the registration is kept (the rcache finds it again
 * for the same buffer): for buffers that live as long as the module. */
void *mca_btl_ofi_local_desc(mca_btl_ofi_module_t *m, void *addr, size_t len,
                             mca_btl_base_registration_handle_t *local_handle)
{
    mca_rcache_base_registration_t *temp;

    return mca_btl_ofi_local_desc_temp(m, addr, len, local_handle, &temp);
}

/* ------------------------------------------------------------------ */
/* set up                                                              */
/* ------------------------------------------------------------------ */

static int op_init(opal_free_list_item_t *item, void *ctx)
{
    mca_btl_ofi_rdma_op_t *op = (mca_btl_ofi_rdma_op_t *) item;

    op->module = (mca_btl_ofi_module_t *) ctx;
    op->operands = (uint64_t *) item->ptr;
    op->operands_desc =
        NULL != item->registration ? ((mca_btl_ofi_reg_t *) item->registration)->handle.desc : NULL;
    return OPAL_SUCCESS;
}

static void rdma_op_construct(mca_btl_ofi_rdma_op_t *op)
{
    op->temp_reg = NULL;
    op->operands = NULL;
    op->operands_desc = NULL;
}

OBJ_CLASS_INSTANCE(mca_btl_ofi_rdma_op_t, opal_free_list_item_t, rdma_op_construct, NULL);

int mca_btl_ofi_mr_init(mca_btl_ofi_module_t *m)
{
    char name[64];
    mca_rcache_base_resources_t res = {
        .cache_name = name,
        .reg_data = m,
        .sizeof_reg = sizeof(mca_btl_ofi_reg_t),
        .register_mem = reg_mem,
        .deregister_mem = dereg_mem,
    };
    int rc;

    /* grdma shares a cache between modules of the same name: one each */
    snprintf(name, sizeof(name), "ofi.%s.%d", m->nic_name, m->module_index);
    m->rcache = mca_rcache_base_module_create("grdma", m, &res);
    if (NULL == m->rcache) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    /* the operands of atomics live in the items' payloads, registered
     * when the provider wants local descriptors */
    rc = opal_free_list_init(&m->rdma_ops, sizeof(mca_btl_ofi_rdma_op_t), opal_cache_line_size,
                             OBJ_CLASS(mca_btl_ofi_rdma_op_t), 2 * sizeof(uint64_t), 8, 64, -1, 64,
                             NULL, 0, m->mr_local ? m->rcache : NULL, op_init, m);
    if (OPAL_SUCCESS != rc) {
        mca_btl_ofi_mr_fini(m);
    }
    return rc;
}

/* The operation list first: its chunks are registered in the rcache. */
void mca_btl_ofi_mr_fini(mca_btl_ofi_module_t *m)
{
    OBJ_DESTRUCT(&m->rdma_ops);
    if (NULL != m->rcache) {
        (void) mca_rcache_base_module_destroy(m->rcache);
        m->rcache = NULL;
    }
}

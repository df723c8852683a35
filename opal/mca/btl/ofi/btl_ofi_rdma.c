/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_ofi_rdma.c - btl_put / btl_get over fi_write / fi_read, the
 * operation objects they and the atomics share, and btl_flush.
 *
 * Every operation is asynchronous: it is counted in flight (module and
 * endpoint) once libfabric accepted it, and its completion, read from the
 * context's CQ by progress, calls the upper layer's callback. The
 * endpoints ask for FI_DELIVERY_COMPLETE, so a completed write or atomic
 * is at the target: that is what btl_flush waits for.
 */
#include "btl_ofi.h"

#include "opal/util/output.h"

mca_btl_ofi_rdma_op_t *mca_btl_ofi_rdma_op_alloc(mca_btl_ofi_module_t *m,
                                                 mca_btl_ofi_endpoint_t *ep, void *local_address,
                                                 mca_btl_base_registration_handle_t *local_handle,
                                                 mca_btl_base_rdma_completion_fn_t cbfunc,
                                                 void *cbcontext, void *cbdata)
{
    mca_btl_ofi_rdma_op_t *op = (mca_btl_ofi_rdma_op_t *) opal_free_list_get(&m->rdma_ops);

    if (OFI_UNLIKELY(NULL == op)) {
        return NULL;
    }
    op->endpoint = ep;
    op->local_address = local_address;
    op->local_handle = local_handle;
    op->temp_reg = NULL;
    op->cbfunc = cbfunc;
    op->cbcontext = cbcontext;
    op->cbdata = cbdata;
    return op;
}

void mca_btl_ofi_rdma_op_return(mca_btl_ofi_rdma_op_t *op)
{
    mca_btl_ofi_local_release(op->module, op->temp_reg);
    op->temp_reg = NULL;
    opal_free_list_return(&op->module->rdma_ops, &op->super);
}

void mca_btl_ofi_rdma_op_posted(mca_btl_ofi_rdma_op_t *op)
{
    mca_btl_ofi_op_started(op->module);
    __atomic_add_fetch(&op->endpoint->outstanding, 1, __ATOMIC_RELAXED);
}

void mca_btl_ofi_rdma_op_refused(mca_btl_ofi_rdma_op_t *op)
{
    mca_btl_ofi_module_t *m = op->module;

    __atomic_sub_fetch(&op->endpoint->outstanding, 1, __ATOMIC_RELEASE);
    mca_btl_ofi_rdma_op_return(op);
    mca_btl_ofi_op_finished(m);
}

/* Completion (or error) of a put, get or atomic: the upper layer's
 * callback, then the operation goes back. */
static void rdma_done(mca_btl_ofi_context_t *ctx, mca_btl_ofi_op_t *fop,
                      const struct fi_cq_data_entry *entry, int status)
{
    mca_btl_ofi_rdma_op_t *op =
        (mca_btl_ofi_rdma_op_t *) ((char *) fop - offsetof(mca_btl_ofi_rdma_op_t, op));
    mca_btl_ofi_module_t *m = op->module;
    mca_btl_ofi_endpoint_t *ep = op->endpoint;

    (void) ctx;
    (void) entry;
    if (NULL != op->cbfunc) {
        op->cbfunc(&m->super, ep, op->local_address, op->local_handle, op->cbcontext, op->cbdata,
                   status);
    }
    mca_btl_ofi_rdma_op_return(op);
    __atomic_sub_fetch(&ep->outstanding, 1, __ATOMIC_RELEASE);
    mca_btl_ofi_op_finished(m);
}

void mca_btl_ofi_throttle(mca_btl_ofi_module_t *m, mca_btl_ofi_context_t *ctx)
{
    if (OFI_UNLIKELY(m->outstanding_rdma >= mca_btl_ofi_component.progress_threshold)) {
        (void) mca_btl_ofi_context_progress(ctx);
    }
}

/* A write or read of `size` bytes: the common part of put and get. */
static int start_rma(mca_btl_ofi_module_t *m, mca_btl_ofi_endpoint_t *ep, bool is_put,
                     void *local_address, uint64_t remote_address,
                     mca_btl_base_registration_handle_t *local_handle,
                     mca_btl_base_registration_handle_t *remote_handle, size_t size,
                     mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    mca_btl_ofi_context_t *ctx = mca_btl_ofi_context_get(m);
    uint64_t raddr = mca_btl_ofi_remote_addr(m, remote_address, remote_handle);
    fi_addr_t dest = mca_btl_ofi_peer_addr(ep, ctx->index);
    mca_btl_ofi_rdma_op_t *op;
    void *desc;
    ssize_t rc;
    int tries = 0;

    mca_btl_ofi_throttle(m, ctx);
    op = mca_btl_ofi_rdma_op_alloc(m, ep, local_address, local_handle, cbfunc, cbcontext, cbdata);
    if (OFI_UNLIKELY(NULL == op)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    op->op.done = rdma_done;
    desc = mca_btl_ofi_local_desc_temp(m, local_address, size, local_handle, &op->temp_reg);
    mca_btl_ofi_rdma_op_posted(op);
    do {
        mca_btl_ofi_ctx_lock(ctx);
        rc = is_put ? fi_write(ctx->tx, local_address, size, desc, dest, raddr, remote_handle->rkey,
                               &op->op.fi)
                    : fi_read(ctx->tx, local_address, size, desc, dest, raddr, remote_handle->rkey,
                              &op->op.fi);
        mca_btl_ofi_ctx_unlock(ctx);
    } while (mca_btl_ofi_again(m, ctx, rc, &tries));
    if (OFI_UNLIKELY(0 != rc)) {
        mca_btl_ofi_rdma_op_refused(op);
        opal_output_verbose(10, mca_btl_ofi_component.output, "btl/ofi: fi_%s: %s",
                            is_put ? "write" : "read", fi_strerror((int) -rc));
        return mca_btl_ofi_refusal(rc);
    }
    mca_btl_ofi_pv_add(m, is_put ? OFI_PV_PUT_OPS : OFI_PV_GET_OPS, 1);
    mca_btl_ofi_pv_add(m, is_put ? OFI_PV_PUT_BYTES : OFI_PV_GET_BYTES, size);
    return OPAL_SUCCESS;
}

int mca_btl_ofi_put(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep, void *local_address,
                    uint64_t remote_address, mca_btl_base_registration_handle_t *local_handle,
                    mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                    int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata)
{
    (void) flags;
    (void) order;
    return start_rma((mca_btl_ofi_module_t *) btl, ep, true, local_address, remote_address,
                     local_handle, remote_handle, size, cbfunc, cbcontext, cbdata);
}

int mca_btl_ofi_get(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep, void *local_address,
                    uint64_t remote_address, mca_btl_base_registration_handle_t *local_handle,
                    mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                    int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata)
{
    (void) flags;
    (void) order;
    return start_rma((mca_btl_ofi_module_t *) btl, ep, false, local_address, remote_address,
                     local_handle, remote_handle, size, cbfunc, cbcontext, cbdata);
}

/* Waits, progressing every context of the module, until nothing is in
 * flight towards `ep` (NULL: towards anyone). Completions land through
 * the normal callbacks. */
int mca_btl_ofi_flush(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep)
{
    mca_btl_ofi_module_t *m = (mca_btl_ofi_module_t *) btl;
    volatile int64_t *count = NULL != ep ? &ep->outstanding : &m->outstanding_rdma;

    while (__atomic_load_n(count, __ATOMIC_ACQUIRE) > 0) {
        (void) mca_btl_ofi_module_progress(m);
    }
    return OPAL_SUCCESS;
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_ofi_atomic.c - btl_atomic_op / fop / cswap carried by the provider
 * (FI_ATOMIC): 64-bit operands, or 32-bit with MCA_BTL_ATOMIC_FLAG_32BIT.
 * Operands live in the operation's registered payload until completion;
 * results land straight in the caller's buffer. Tracked like RMA
 * (btl_flush waits for them). Providers without FI_ATOMIC get
 * btl_ofi_am.c's versions instead.
 *
 * osc/rdma passes no remote handle (NULL) for memory it considers local
 * (its own window on MPI_COMM_SELF, a node's shared segment): that address
 * is ours, and btl_ofi_am.c's entry points apply the operation at once
 * with a CPU atomic (counted as am_atomic_ops), as they do for their own
 * local targets.
 */
#include "btl_ofi.h"

#include "opal/util/output.h"

/* The BTL's atomic operations, libfabric's for them, and the bit that
 * says the module offers them. */
static const struct {
    uint32_t flag;
    mca_btl_base_atomic_op_t op;
    enum fi_op fi_op;
} atomic_table[] = {
    {MCA_BTL_ATOMIC_SUPPORTS_ADD, MCA_BTL_ATOMIC_ADD, FI_SUM},
    {MCA_BTL_ATOMIC_SUPPORTS_AND, MCA_BTL_ATOMIC_AND, FI_BAND},
    {MCA_BTL_ATOMIC_SUPPORTS_OR, MCA_BTL_ATOMIC_OR, FI_BOR},
    {MCA_BTL_ATOMIC_SUPPORTS_XOR, MCA_BTL_ATOMIC_XOR, FI_BXOR},
    {MCA_BTL_ATOMIC_SUPPORTS_LAND, MCA_BTL_ATOMIC_LAND, FI_LAND},
    {MCA_BTL_ATOMIC_SUPPORTS_LOR, MCA_BTL_ATOMIC_LOR, FI_LOR},
    {MCA_BTL_ATOMIC_SUPPORTS_LXOR, MCA_BTL_ATOMIC_LXOR, FI_LXOR},
    {MCA_BTL_ATOMIC_SUPPORTS_SWAP, MCA_BTL_ATOMIC_SWAP, FI_ATOMIC_WRITE},
    {MCA_BTL_ATOMIC_SUPPORTS_MIN, MCA_BTL_ATOMIC_MIN, FI_MIN},
    {MCA_BTL_ATOMIC_SUPPORTS_MAX, MCA_BTL_ATOMIC_MAX, FI_MAX},
};
#define N_ATOMICS (sizeof(atomic_table) / sizeof(atomic_table[0]))

/* The libfabric operation of a BTL one; false when there is none. */
static bool fi_op_of(mca_btl_base_atomic_op_t op, enum fi_op *out)
{
    for (size_t i = 0; i < N_ATOMICS; ++i) {
        if (atomic_table[i].op == op) {
            *out = atomic_table[i].fi_op;
            return true;
        }
    }
    return false;
}

/* min and max compare signed integers (as osc/rdma's emulation does),
 * the others work on bits. */
static enum fi_datatype datatype_of(enum fi_op op, bool is32)
{
    if (FI_MIN == op || FI_MAX == op) {
        return is32 ? FI_INT32 : FI_INT64;
    }
    return is32 ? FI_UINT32 : FI_UINT64;
}

static void set_operand(mca_btl_ofi_rdma_op_t *op, int index, uint64_t value, bool is32)
{
    if (is32) {
        ((uint32_t *) op->operands)[index * 2] = (uint32_t) value;
    } else {
        op->operands[index] = value;
    }
}

static void *operand(mca_btl_ofi_rdma_op_t *op, int index, bool is32)
{
    return is32 ? (void *) &((uint32_t *) op->operands)[index * 2] : (void *) &op->operands[index];
}

/* Completion: as for put/get (btl_ofi_rdma.c), the upper layer's callback
 * with the result already in its buffer. */
static void atomic_done(mca_btl_ofi_context_t *ctx, mca_btl_ofi_op_t *fop,
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

/* What the three entry points share: an operation object, the context,
 * the addresses. */
typedef struct atomic_args {
    mca_btl_ofi_context_t *ctx;
    mca_btl_ofi_rdma_op_t *op;
    fi_addr_t dest;
    uint64_t raddr;
    uint64_t rkey;
    void *result_desc;
} atomic_args_t;

static int atomic_begin(mca_btl_ofi_module_t *m, mca_btl_ofi_endpoint_t *ep, void *local_address,
                        mca_btl_base_registration_handle_t *local_handle, uint64_t remote_address,
                        mca_btl_base_registration_handle_t *remote_handle, size_t result_size,
                        mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata,
                        atomic_args_t *a)
{
    a->ctx = mca_btl_ofi_context_get(m);
    mca_btl_ofi_throttle(m, a->ctx);
    a->op =
        mca_btl_ofi_rdma_op_alloc(m, ep, local_address, local_handle, cbfunc, cbcontext, cbdata);
    if (OFI_UNLIKELY(NULL == a->op)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    a->op->op.done = atomic_done;
    a->dest = mca_btl_ofi_peer_addr(ep, a->ctx->index);
    a->raddr = mca_btl_ofi_remote_addr(m, remote_address, remote_handle);
    a->rkey = remote_handle->rkey;
    a->result_desc = NULL != local_address
                         ? mca_btl_ofi_local_desc_temp(m, local_address, result_size, local_handle,
                                                       &a->op->temp_reg)
                         : NULL;
    mca_btl_ofi_rdma_op_posted(a->op);
    return OPAL_SUCCESS;
}

static int atomic_end(mca_btl_ofi_module_t *m, atomic_args_t *a, ssize_t rc, const char *call)
{
    if (OFI_UNLIKELY(0 != rc)) {
        mca_btl_ofi_rdma_op_refused(a->op);
        opal_output_verbose(10, mca_btl_ofi_component.output, "btl/ofi: %s: %s", call,
                            fi_strerror((int) -rc));
        return mca_btl_ofi_refusal(rc);
    }
    mca_btl_ofi_pv_add(m, OFI_PV_ATOMIC_OPS, 1);
    return OPAL_SUCCESS;
}

int mca_btl_ofi_aop(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                    uint64_t remote_address, mca_btl_base_registration_handle_t *remote_handle,
                    mca_btl_base_atomic_op_t op, uint64_t operand_value, int flags, int order,
                    mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    mca_btl_ofi_module_t *m = (mca_btl_ofi_module_t *) btl;
    bool is32 = 0 != (flags & MCA_BTL_ATOMIC_FLAG_32BIT);
    enum fi_op fop;
    atomic_args_t a;
    ssize_t rc;
    int tries = 0;

    if (OFI_UNLIKELY(NULL == remote_handle)) {
        /* our own memory (see the comment at the top) */
        return mca_btl_ofi_am_aop(btl, ep, remote_address, NULL, op, operand_value, flags, order,
                                  cbfunc, cbcontext, cbdata);
    }
    if (!fi_op_of(op, &fop)) {
        return OPAL_ERR_NOT_SUPPORTED;
    }
    rc = atomic_begin(m, ep, NULL, NULL, remote_address, remote_handle, 0, cbfunc, cbcontext,
                      cbdata, &a);
    if (OPAL_SUCCESS != rc) {
        return (int) rc;
    }
    set_operand(a.op, 0, operand_value, is32);
    do {
        mca_btl_ofi_ctx_lock(a.ctx);
        rc = fi_atomic(a.ctx->tx, operand(a.op, 0, is32), 1, a.op->operands_desc, a.dest, a.raddr,
                       a.rkey, datatype_of(fop, is32), fop, &a.op->op.fi);
        mca_btl_ofi_ctx_unlock(a.ctx);
    } while (mca_btl_ofi_again(m, a.ctx, rc, &tries));
    return atomic_end(m, &a, rc, "fi_atomic");
}

int mca_btl_ofi_afop(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep, void *local_address,
                     uint64_t remote_address, mca_btl_base_registration_handle_t *local_handle,
                     mca_btl_base_registration_handle_t *remote_handle, mca_btl_base_atomic_op_t op,
                     uint64_t operand_value, int flags, int order,
                     mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    mca_btl_ofi_module_t *m = (mca_btl_ofi_module_t *) btl;
    bool is32 = 0 != (flags & MCA_BTL_ATOMIC_FLAG_32BIT);
    enum fi_op fop;
    atomic_args_t a;
    ssize_t rc;
    int tries = 0;

    if (OFI_UNLIKELY(NULL == remote_handle)) {
        return mca_btl_ofi_am_afop(btl, ep, local_address, remote_address, local_handle, NULL, op,
                                   operand_value, flags, order, cbfunc, cbcontext, cbdata);
    }
    if (!fi_op_of(op, &fop)) {
        return OPAL_ERR_NOT_SUPPORTED;
    }
    rc = atomic_begin(m, ep, local_address, local_handle, remote_address, remote_handle,
                      is32 ? 4 : 8, cbfunc, cbcontext, cbdata, &a);
    if (OPAL_SUCCESS != rc) {
        return (int) rc;
    }
    set_operand(a.op, 0, operand_value, is32);
    do {
        mca_btl_ofi_ctx_lock(a.ctx);
        rc = fi_fetch_atomic(a.ctx->tx, operand(a.op, 0, is32), 1, a.op->operands_desc,
                             local_address, a.result_desc, a.dest, a.raddr, a.rkey,
                             datatype_of(fop, is32), fop, &a.op->op.fi);
        mca_btl_ofi_ctx_unlock(a.ctx);
    } while (mca_btl_ofi_again(m, a.ctx, rc, &tries));
    return atomic_end(m, &a, rc, "fi_fetch_atomic");
}

int mca_btl_ofi_acswap(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep, void *local_address,
                       uint64_t remote_address, mca_btl_base_registration_handle_t *local_handle,
                       mca_btl_base_registration_handle_t *remote_handle, uint64_t compare,
                       uint64_t value, int flags, int order,
                       mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    mca_btl_ofi_module_t *m = (mca_btl_ofi_module_t *) btl;
    bool is32 = 0 != (flags & MCA_BTL_ATOMIC_FLAG_32BIT);
    atomic_args_t a;
    ssize_t rc;
    int tries = 0;

    if (OFI_UNLIKELY(NULL == remote_handle)) {
        return mca_btl_ofi_am_acswap(btl, ep, local_address, remote_address, local_handle, NULL,
                                     compare, value, flags, order, cbfunc, cbcontext, cbdata);
    }
    rc = atomic_begin(m, ep, local_address, local_handle, remote_address, remote_handle,
                      is32 ? 4 : 8, cbfunc, cbcontext, cbdata, &a);
    if (OPAL_SUCCESS != rc) {
        return (int) rc;
    }
    set_operand(a.op, 0, value, is32);
    set_operand(a.op, 1, compare, is32);
    do {
        mca_btl_ofi_ctx_lock(a.ctx);
        rc = fi_compare_atomic(a.ctx->tx, operand(a.op, 0, is32), 1, a.op->operands_desc,
                               operand(a.op, 1, is32), a.op->operands_desc, local_address,
                               a.result_desc, a.dest, a.raddr, a.rkey, is32 ? FI_UINT32 : FI_UINT64,
                               FI_CSWAP, &a.op->op.fi);
        mca_btl_ofi_ctx_unlock(a.ctx);
    } while (mca_btl_ofi_again(m, a.ctx, rc, &tries));
    return atomic_end(m, &a, rc, "fi_compare_atomic");
}

int mca_btl_ofi_afop_gate(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                          void *local_address, uint64_t remote_address,
                          mca_btl_base_registration_handle_t *local_handle,
                          mca_btl_base_registration_handle_t *remote_handle,
                          mca_btl_base_atomic_op_t op, uint64_t operand_value, int flags, int order,
                          mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    mca_btl_ofi_module_t *m = (mca_btl_ofi_module_t *) btl;

    /* with a peer elsewhere osc/rdma's locks need them: carried then */
    if (!mca_btl_ofi_component.fetching_atomics &&
        !__atomic_load_n(&m->remote_peers, __ATOMIC_RELAXED)) {
        return OPAL_ERR_NOT_SUPPORTED; /* osc/rdma: get, operation, put */
    }
    return m->fop_carrier(btl, ep, local_address, remote_address, local_handle, remote_handle, op,
                          operand_value, flags, order, cbfunc, cbcontext, cbdata);
}

/* ------------------------------------------------------------------ */
/* what the provider supports                                          */
/* ------------------------------------------------------------------ */

/* Whether op is carried both plain and fetching on `is32` operands. */
static bool op_valid(struct fid_ep *ep, mca_btl_base_atomic_op_t op, bool is32)
{
    size_t count = 0;
    enum fi_op fop;

    if (!fi_op_of(op, &fop)) {
        return false;
    }
    return 0 == fi_atomicvalid(ep, datatype_of(fop, is32), fop, &count) && count > 0 &&
           0 == fi_fetch_atomicvalid(ep, datatype_of(fop, is32), fop, &count) && count > 0;
}

static bool cswap_valid(struct fid_ep *ep, bool is32)
{
    size_t count = 0;
    return 0 == fi_compare_atomicvalid(ep, is32 ? FI_UINT32 : FI_UINT64, FI_CSWAP, &count) &&
           count > 0;
}

/* The operations offered: each that the provider carries on 64-bit
 * operands; 32-bit ones too when it carries every one of them. Nothing
 * (0) unless at least fetch-and-add and compare-and-swap are there, the
 * two that one-sided MPI's locks are built from. */
uint32_t mca_btl_ofi_atomic_query(mca_btl_ofi_module_t *m)
{
    struct fid_ep *ep = m->contexts[0].tx;
    uint32_t flags = 0;
    bool all32 = cswap_valid(ep, true);

    if (!(m->info->caps & FI_ATOMIC)) {
        return 0;
    }
    for (size_t i = 0; i < N_ATOMICS; ++i) {
        if (op_valid(ep, atomic_table[i].op, false)) {
            flags |= atomic_table[i].flag;
            all32 = all32 && op_valid(ep, atomic_table[i].op, true);
        }
    }
    if (cswap_valid(ep, false)) {
        flags |= MCA_BTL_ATOMIC_SUPPORTS_CSWAP;
    }
    if (!(flags & MCA_BTL_ATOMIC_SUPPORTS_ADD) || !(flags & MCA_BTL_ATOMIC_SUPPORTS_CSWAP)) {
        return 0;
    }
    return all32 ? flags | MCA_BTL_ATOMIC_SUPPORTS_32BIT : flags;
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_ofi_am.c - atomics carried as active messages, for providers
 * without FI_ATOMIC (tcp;ofi_rxm, udp;ofi_rxd).
 *
 * The requester sends the operation (mca_btl_ofi_am_req_t) over the
 * two-sided path; the target's progress applies it with a CPU atomic on
 * the target address and replies with the value found there; the reply
 * writes that value to the requester's local_address and calls the upper
 * layer back. Each operation is an RDMA operation object (btl_ofi_rdma.c)
 * counted in flight from the request until the reply, so btl_flush waits
 * for it. Atomicity: every AM atomic on one address is applied by its
 * owner's CPU with __atomic builtins (a compare-exchange loop where the
 * CPU has no such instruction), so concurrent requesters never lose an
 * update; they are atomic with the target's own CPU atomics as well.
 *
 * Cost: one two-sided round trip plus however long the target takes to
 * enter progress (docs/ofi.md, "Atomics without FI_ATOMIC").
 */
#include "btl_ofi_frag.h"

#include "opal/util/output.h"
#include "opal/util/proc.h"

/* ------------------------------------------------------------------ */
/* target side: apply                                                  */
/* ------------------------------------------------------------------ */

/* The new value of `op` applied to old and v (32-bit values arrive
 * zero-extended; the caller keeps the low half). Min and max compare
 * signed integers, as FI_MIN/FI_MAX on FI_INT* and osc/rdma do. */
static uint64_t combine(uint32_t op, uint64_t old, uint64_t v, bool is32)
{
    int64_t sold = is32 ? (int64_t) (int32_t) old : (int64_t) old;
    int64_t sv = is32 ? (int64_t) (int32_t) v : (int64_t) v;

    switch (op) {
        case MCA_BTL_ATOMIC_ADD:
            return old + v;
        case MCA_BTL_ATOMIC_AND:
            return old & v;
        case MCA_BTL_ATOMIC_OR:
            return old | v;
        case MCA_BTL_ATOMIC_XOR:
            return old ^ v;
        case MCA_BTL_ATOMIC_LAND:
            return old && v;
        case MCA_BTL_ATOMIC_LOR:
            return old || v;
        case MCA_BTL_ATOMIC_LXOR:
            return !old != !v;
        case MCA_BTL_ATOMIC_SWAP:
            return v;
        case MCA_BTL_ATOMIC_MIN:
            return sold < sv ? old : v;
        case MCA_BTL_ATOMIC_MAX:
            return sold > sv ? old : v;
        default:
            return old;
    }
}

/* The value at p before the operation. Add, and, or, xor and swap have
 * their own instructions; the others loop on compare-exchange. */
static uint64_t apply64(uint64_t *p, uint32_t op, uint64_t v)
{
    uint64_t old;

    switch (op) {
        case MCA_BTL_ATOMIC_ADD:
            return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
        case MCA_BTL_ATOMIC_AND:
            return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);
        case MCA_BTL_ATOMIC_OR:
            return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
        case MCA_BTL_ATOMIC_XOR:
            return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);
        case MCA_BTL_ATOMIC_SWAP:
            return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
        default:
            break;
    }
    old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(p, &old, combine(op, old, v, false), false,
                                        __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
        /* old now holds the current value */
    }
    return old;
}

static uint32_t apply32(uint32_t *p, uint32_t op, uint32_t v)
{
    uint32_t old;

    switch (op) {
        case MCA_BTL_ATOMIC_ADD:
            return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
        case MCA_BTL_ATOMIC_AND:
            return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);
        case MCA_BTL_ATOMIC_OR:
            return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
        case MCA_BTL_ATOMIC_XOR:
            return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);
        case MCA_BTL_ATOMIC_SWAP:
            return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
        default:
            break;
    }
    old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(p, &old, (uint32_t) combine(op, old, v, true), false,
                                        __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
    }
    return old;
}

/* The old value; a failed compare leaves the target as it was. */
static uint64_t apply(const mca_btl_ofi_am_req_t *req)
{
    bool is32 = 0 != (req->flags & MCA_BTL_OFI_AM_32BIT);

    if (req->flags & MCA_BTL_OFI_AM_CSWAP) {
        if (is32) {
            uint32_t expected = (uint32_t) req->compare;
            (void) __atomic_compare_exchange_n((uint32_t *) (uintptr_t) req->addr, &expected,
                                               (uint32_t) req->operand, false, __ATOMIC_SEQ_CST,
                                               __ATOMIC_SEQ_CST);
            return expected;
        }
        uint64_t expected = req->compare;
        (void) __atomic_compare_exchange_n((uint64_t *) (uintptr_t) req->addr, &expected,
                                           req->operand, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        return expected;
    }
    if (is32) {
        return apply32((uint32_t *) (uintptr_t) req->addr, req->op, (uint32_t) req->operand);
    }
    return apply64((uint64_t *) (uintptr_t) req->addr, req->op, req->operand);
}

/* The requester's endpoint: known once add_procs saw it; else made now
 * (a process may reach us before we reached it). */
static mca_btl_ofi_endpoint_t *requester_endpoint(mca_btl_ofi_module_t *m, uint64_t id)
{
    opal_process_name_t name;
    mca_btl_ofi_endpoint_t *ep;
    struct opal_proc_t *proc;

    memcpy(&name, &id, sizeof(name));
    ep = mca_btl_ofi_endpoint_lookup(m, name);
    if (OFI_LIKELY(NULL != ep)) {
        return ep;
    }
    proc = opal_proc_for_name(name);
    if (NULL == proc || OPAL_SUCCESS != m->super.btl_add_procs(&m->super, 1, &proc, &ep, NULL)) {
        return NULL;
    }
    return ep;
}

/* A reply the provider refused: queued, sent again from progress. */
static void queue_reply(mca_btl_ofi_module_t *m, mca_btl_ofi_endpoint_t *ep,
                        const mca_btl_ofi_am_reply_t *rep)
{
    mca_btl_ofi_twosided_t *ts = mca_btl_ofi_ts(m);
    mca_btl_ofi_pending_reply_t *p = OBJ_NEW(mca_btl_ofi_pending_reply_t);

    if (NULL == p) {
        opal_output(0, "btl/ofi: %s: out of memory queueing an atomic's reply", m->nic_name);
        return;
    }
    p->ep = ep;
    p->reply = *rep;
    OPAL_THREAD_LOCK(&ts->pending_lock);
    opal_list_append(&ts->pending_replies, &p->super);
    OPAL_THREAD_UNLOCK(&ts->pending_lock);
    __atomic_add_fetch(&ts->npending, 1, __ATOMIC_RELAXED);
}

void mca_btl_ofi_am_request(mca_btl_ofi_module_t *m, const mca_btl_ofi_am_req_t *req)
{
    mca_btl_ofi_am_reply_t rep = {.cookie = req->cookie};
    mca_btl_ofi_endpoint_t *ep = requester_endpoint(m, req->requester);

    if (OFI_UNLIKELY(NULL == ep)) {
        opal_output(0, "btl/ofi: %s: an atomic from an unknown process was dropped", m->nic_name);
        return;
    }
    rep.result = apply(req);
    if (OFI_UNLIKELY(OPAL_SUCCESS != mca_btl_ofi_send_internal(m, ep, MCA_BTL_OFI_TYPE_AM_REPLY,
                                                               &rep, sizeof(rep)))) {
        queue_reply(m, ep, &rep);
    }
}

void mca_btl_ofi_am_retry(mca_btl_ofi_module_t *m)
{
    mca_btl_ofi_twosided_t *ts = mca_btl_ofi_ts(m);
    mca_btl_ofi_pending_reply_t *p;

    OPAL_THREAD_LOCK(&ts->pending_lock);
    while (NULL !=
               (p = (mca_btl_ofi_pending_reply_t *) opal_list_get_first(&ts->pending_replies)) &&
           &p->super != opal_list_get_end(&ts->pending_replies)) {
        if (OPAL_SUCCESS != mca_btl_ofi_send_internal(m, p->ep, MCA_BTL_OFI_TYPE_AM_REPLY,
                                                      &p->reply, sizeof(p->reply))) {
            break; /* still refused: next time, in order */
        }
        (void) opal_list_remove_first(&ts->pending_replies);
        OBJ_RELEASE(p);
        __atomic_sub_fetch(&ts->npending, 1, __ATOMIC_RELAXED);
    }
    OPAL_THREAD_UNLOCK(&ts->pending_lock);
}

/* ------------------------------------------------------------------ */
/* requester side                                                      */
/* ------------------------------------------------------------------ */

/* Marks an operation object as waiting for its AM reply: never called
 * (no libfabric operation carries it), compared on receipt. */
static void am_waiting(mca_btl_ofi_context_t *ctx, mca_btl_ofi_op_t *op,
                       const struct fi_cq_data_entry *entry, int status)
{
    (void) ctx, (void) op, (void) entry, (void) status;
}

void mca_btl_ofi_am_reply(mca_btl_ofi_module_t *m, const mca_btl_ofi_am_reply_t *rep)
{
    mca_btl_ofi_rdma_op_t *op = (mca_btl_ofi_rdma_op_t *) (uintptr_t) rep->cookie;
    mca_btl_ofi_endpoint_t *ep;

    if (OFI_UNLIKELY(NULL == op || op->module != m || am_waiting != op->op.done)) {
        mca_btl_ofi_pv_add(m, OFI_PV_CQ_ERRORS, 1);
        return;
    }
    op->op.done = NULL;
    ep = op->endpoint;
    if (NULL != op->local_address) {
        if (op->operands[1] & MCA_BTL_OFI_AM_32BIT) {
            *(uint32_t *) op->local_address = (uint32_t) rep->result;
        } else {
            *(uint64_t *) op->local_address = rep->result;
        }
    }
    if (NULL != op->cbfunc) {
        op->cbfunc(&m->super, ep, op->local_address, op->local_handle, op->cbcontext, op->cbdata,
                   OPAL_SUCCESS);
    }
    mca_btl_ofi_rdma_op_return(op);
    __atomic_sub_fetch(&ep->outstanding, 1, __ATOMIC_RELEASE);
    mca_btl_ofi_op_finished(m);
}

/* Without a remote handle the address is one of ours: osc/rdma passes
 * its own mapping of a node's shared segment (MPI_Win_allocate windows
 * with every rank on one node), which a CPU atomic serves at once,
 * consistent with the ones targets apply for AM requests. */
static int am_local(mca_btl_ofi_module_t *m, mca_btl_ofi_endpoint_t *ep,
                    const mca_btl_ofi_am_req_t *req, void *local_address,
                    mca_btl_base_registration_handle_t *local_handle,
                    mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    uint64_t old = apply(req);

    if (NULL != local_address) {
        if (req->flags & MCA_BTL_OFI_AM_32BIT) {
            *(uint32_t *) local_address = (uint32_t) old;
        } else {
            *(uint64_t *) local_address = old;
        }
    }
    mca_btl_ofi_pv_add(m, OFI_PV_AM_ATOMIC_OPS, 1);
    if (NULL != cbfunc) {
        cbfunc(&m->super, ep, local_address, local_handle, cbcontext, cbdata, OPAL_SUCCESS);
    }
    return OPAL_SUCCESS;
}

/* Sends one request; the operation is in flight until its reply. */
static int am_start(mca_btl_ofi_module_t *m, mca_btl_ofi_endpoint_t *ep, mca_btl_ofi_am_req_t *req,
                    void *local_address, mca_btl_base_registration_handle_t *local_handle,
                    mca_btl_base_registration_handle_t *remote_handle,
                    mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    mca_btl_ofi_rdma_op_t *op;
    int rc;

    if (OFI_UNLIKELY(NULL == remote_handle)) {
        return am_local(m, ep, req, local_address, local_handle, cbfunc, cbcontext, cbdata);
    }
    mca_btl_ofi_throttle(m, mca_btl_ofi_context_get(m));
    op = mca_btl_ofi_rdma_op_alloc(m, ep, local_address, local_handle, cbfunc, cbcontext, cbdata);
    if (OFI_UNLIKELY(NULL == op)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    op->op.done = am_waiting;
    /* the reply needs only the width: kept in the (unused) operand slot */
    op->operands[1] = req->flags;
    req->cookie = (uint64_t) (uintptr_t) op;
    memcpy(&req->requester, &OPAL_PROC_MY_NAME, sizeof(req->requester));
    mca_btl_ofi_rdma_op_posted(op);
    rc = mca_btl_ofi_send_internal(m, ep, MCA_BTL_OFI_TYPE_AM_REQ, req, sizeof(*req));
    if (OFI_UNLIKELY(OPAL_SUCCESS != rc)) {
        op->op.done = NULL;
        mca_btl_ofi_rdma_op_refused(op);
        return rc;
    }
    mca_btl_ofi_pv_add(m, OFI_PV_AM_ATOMIC_OPS, 1);
    return OPAL_SUCCESS;
}

static inline uint32_t width_flag(int flags)
{
    return (flags & MCA_BTL_ATOMIC_FLAG_32BIT) ? MCA_BTL_OFI_AM_32BIT : 0;
}

int mca_btl_ofi_am_aop(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                       uint64_t remote_address, mca_btl_base_registration_handle_t *remote_handle,
                       mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                       mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    mca_btl_ofi_am_req_t req = {
        .addr = remote_address,
        .operand = operand,
        .op = (uint32_t) op,
        .flags = width_flag(flags),
    };

    (void) order;
    return am_start((mca_btl_ofi_module_t *) btl, ep, &req, NULL, NULL, remote_handle, cbfunc,
                    cbcontext, cbdata);
}

int mca_btl_ofi_am_afop(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                        void *local_address, uint64_t remote_address,
                        mca_btl_base_registration_handle_t *local_handle,
                        mca_btl_base_registration_handle_t *remote_handle,
                        mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                        mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    mca_btl_ofi_am_req_t req = {
        .addr = remote_address,
        .operand = operand,
        .op = (uint32_t) op,
        .flags = width_flag(flags) | MCA_BTL_OFI_AM_FETCH,
    };

    (void) order;
    return am_start((mca_btl_ofi_module_t *) btl, ep, &req, local_address, local_handle,
                    remote_handle, cbfunc, cbcontext, cbdata);
}

int mca_btl_ofi_am_acswap(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                          void *local_address, uint64_t remote_address,
                          mca_btl_base_registration_handle_t *local_handle,
                          mca_btl_base_registration_handle_t *remote_handle, uint64_t compare,
                          uint64_t value, int flags, int order,
                          mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    mca_btl_ofi_am_req_t req = {
        .addr = remote_address,
        .operand = value,
        .compare = compare,
        .flags = width_flag(flags) | MCA_BTL_OFI_AM_FETCH | MCA_BTL_OFI_AM_CSWAP,
    };

    (void) order;
    return am_start((mca_btl_ofi_module_t *) btl, ep, &req, local_address, local_handle,
                    remote_handle, cbfunc, cbcontext, cbdata);
}

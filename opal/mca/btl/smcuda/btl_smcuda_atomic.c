/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_atomic.c - btl_atomic_op / btl_atomic_fop / btl_atomic_cswap.
 *
 * Single copy cannot make a read-modify-write atomic, so the operation is
 * shipped to the process that owns the memory: the origin sends a control
 * message (ring, or FIFO when the ring is full), the target's progress
 * applies it with a CPU atomic on its own memory and replies with the old
 * value, and the origin completes the operation when the reply arrives.
 * Because the target uses ordinary CPU atomics, the results are coherent
 * with atomics the processes do directly on shared memory
 * (MCA_BTL_ATOMIC_SUPPORTS_GLOB), which is what one-sided MPI (osc/rdma)
 * relies on.  An operation completes (callback) only once the target has
 * applied it, so btl_flush has nothing of its own to wait for beyond the
 * replies still due.
 *
 * The target must enter the MPI library (progress) for an operation to be
 * applied: like every active-message scheme, a target computing outside
 * MPI delays the origin.
 */
#include "btl_smcuda.h"

#include <string.h>

#include "opal/runtime/opal_progress.h"

/* what the origin keeps for an operation in flight */
typedef struct {
    smcuda_rdma_done_t done; /* done.cbfunc NULL: slot free */
    uint16_t gen;
    uint16_t flags;
    bool fetch;
} smcuda_amo_slot_t;

typedef struct {
    opal_list_item_t super;
    mca_btl_base_endpoint_t *ep;
    smcuda_amo_msg_t msg;
} smcuda_amo_reply_t;
static OBJ_CLASS_INSTANCE(smcuda_amo_reply_t, opal_list_item_t, NULL, NULL);

static smcuda_amo_slot_t amo_slots[SMCUDA_AMO_SLOTS];
static uint16_t amo_free[SMCUDA_AMO_SLOTS]; /* stack of free slot indices */
static int amo_nfree = -1;                  /* -1: not set up yet */

/* ------------------------------------------------------------------ */
/* origin side                                                         */
/* ------------------------------------------------------------------ */

static int slot_take(mca_btl_smcuda_module_t *m)
{
    int idx = -1;

    OPAL_THREAD_LOCK(&m->lock);
    if (amo_nfree < 0) {
        for (int i = 0; i < SMCUDA_AMO_SLOTS; ++i) {
            amo_free[i] = (uint16_t) (SMCUDA_AMO_SLOTS - 1 - i);
        }
        amo_nfree = SMCUDA_AMO_SLOTS;
    }
    if (amo_nfree > 0) {
        idx = amo_free[--amo_nfree];
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    return idx;
}

static void slot_give(mca_btl_smcuda_module_t *m, int idx)
{
    OPAL_THREAD_LOCK(&m->lock);
    amo_slots[idx].gen++;
    amo_free[amo_nfree++] = (uint16_t) idx;
    OPAL_THREAD_UNLOCK(&m->lock);
}

/* Sends a control message to ep through its ring, or a FIFO fragment when
 * the ring is full; false when neither has room now. */
static bool ctl_send(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep,
                     const smcuda_amo_msg_t *msg)
{
    return OPAL_SUCCESS == mca_btl_smcuda_sendi(&m->super, ep, NULL, (void *) msg, sizeof(*msg), 0,
                                                MCA_BTL_NO_ORDER, 0, MCA_BTL_TAG_SMCUDA, NULL);
}

static int amo_apply(smcuda_amo_msg_t *msg);

/* Stores the old value of a fetching operation where the caller asked. */
static void amo_store_result(void *local_address, uint16_t flags, uint64_t value)
{
    if (flags & MCA_BTL_ATOMIC_FLAG_32BIT) {
        uint32_t v32 = (uint32_t) value;
        memcpy(local_address, &v32, sizeof(v32));
    } else {
        memcpy(local_address, &value, sizeof(value));
    }
}

/*
 * osc/rdma hands us memory of our own address space in two cases:
 *  - the target is ourselves: our own endpoint (btl_smcuda_self.c), or
 *    none when another BTL reaches us; the address is ours;
 *  - the target's memory is mapped here: an MPI_Win_allocate window lives
 *    in osc/rdma's shared segment, which every process of the node maps;
 *    osc/rdma then passes the peer's endpoint but the address of the
 *    peer's memory in OUR mapping, and no registration handle (every
 *    memory a peer registered with us comes with one).
 * Shipping such an operation to the peer would apply it at an address
 * that means nothing there. It is applied here instead, with the same CPU
 * atomics the owner uses (coherent with them: the memory is shared), and
 * completes before we return: the callback is called now, never the
 * return value 1, with which osc/rdma 4.1 copies 8 bytes of result even
 * for a 32-bit operation.
 */
static bool amo_is_local(const mca_btl_base_endpoint_t *ep,
                         const mca_btl_base_registration_handle_t *remote_handle)
{
    return NULL == ep || ep->self || NULL == remote_handle;
}

static int amo_local(mca_btl_base_module_t *btl, const smcuda_rdma_done_t *done, uint64_t addr,
                     uint16_t op, int flags, uint64_t operand, uint64_t compare, bool fetch)
{
    smcuda_amo_msg_t msg = {.kind = SMCUDA_CTL_AMO,
                            .op = op,
                            .flags = (uint16_t) flags,
                            .addr = addr,
                            .operand = operand,
                            .compare = compare,
                            .lo = 0,
                            .hi = UINT64_MAX};
    int rc = amo_apply(&msg);

    if (OPAL_SUCCESS != rc) {
        return rc; /* nothing was done: the caller may take another way */
    }
    if (fetch) {
        amo_store_result(done->local_address, msg.flags, msg.value);
    }
    smcuda_pv_add(SMCUDA_PV_ATOMIC_OPS, 1);
    smcuda_rdma_done((mca_btl_smcuda_module_t *) btl, done, OPAL_SUCCESS);
    return OPAL_SUCCESS;
}

/* Starts one operation: op (or SMCUDA_AMO_CSWAP) on the 32- or 64-bit word
 * at addr in the peer; fetch: the old value goes to done->local_address. */
static int amo_start(mca_btl_base_module_t *btl, const smcuda_rdma_done_t *done,
                     const mca_btl_base_registration_handle_t *remote_handle, uint64_t addr,
                     uint16_t op, int flags, uint64_t operand, uint64_t compare, bool fetch)
{
    mca_btl_smcuda_module_t *m = (mca_btl_smcuda_module_t *) btl;
    smcuda_amo_msg_t msg = {.kind = SMCUDA_CTL_AMO,
                            .op = op,
                            .flags = (uint16_t) flags,
                            .lrank = NULL != done->ep ? (uint32_t) done->ep->ref_id : 0,
                            .addr = addr,
                            .operand = operand,
                            .compare = compare,
                            .lo = NULL != remote_handle ? remote_handle->base : 0,
                            .hi = NULL != remote_handle ? remote_handle->base + remote_handle->len
                                                        : UINT64_MAX};
    smcuda_amo_slot_t *s;
    int idx;

    if (amo_is_local(done->ep, remote_handle)) {
        return amo_local(btl, done, addr, op, flags, operand, compare, fetch);
    }
    idx = slot_take(m);
    if (idx < 0) {
        return OPAL_ERR_OUT_OF_RESOURCE; /* the caller progresses and retries */
    }
    s = &amo_slots[idx];
    s->done = *done;
    s->flags = msg.flags;
    s->fetch = fetch;
    msg.slot = (uint32_t) idx | ((uint32_t) s->gen << 16);
    /* counted before the send: under threads the reply may be handled
     * (and the count dropped) before ctl_send returns */
    OPAL_THREAD_ADD_FETCH32(&m->amo_live, 1);
    if (!ctl_send(m, done->ep, &msg)) {
        OPAL_THREAD_ADD_FETCH32(&m->amo_live, -1);
        s->done.cbfunc = NULL;
        slot_give(m, idx);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    smcuda_pv_add(SMCUDA_PV_ATOMIC_OPS, 1);
    return OPAL_SUCCESS;
}

int mca_btl_smcuda_atomic_op(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                             uint64_t remote_address,
                             struct mca_btl_base_registration_handle_t *remote_handle,
                             mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                             mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                             void *cbdata)
{
    smcuda_rdma_done_t done = {ep, NULL, NULL, cbfunc, cbcontext, cbdata};

    (void) order;
    return amo_start(btl, &done, remote_handle, remote_address, (uint16_t) op, flags, operand, 0,
                     false);
}

int mca_btl_smcuda_atomic_fop(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                              void *local_address, uint64_t remote_address,
                              struct mca_btl_base_registration_handle_t *local_handle,
                              struct mca_btl_base_registration_handle_t *remote_handle,
                              mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                              mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                              void *cbdata)
{
    smcuda_rdma_done_t done = {ep, local_address, local_handle, cbfunc, cbcontext, cbdata};

    (void) order;
    if (!mca_btl_smcuda_component.fetching_atomics) {
        /* osc/rdma then gets, operates and puts under its lock (see
         * SMCUDA_FETCHING_ATOMICS_DEFAULT) */
        return OPAL_ERR_NOT_SUPPORTED;
    }
    return amo_start(btl, &done, remote_handle, remote_address, (uint16_t) op, flags, operand, 0,
                     true);
}

int mca_btl_smcuda_atomic_cswap(
    struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep, void *local_address,
    uint64_t remote_address, struct mca_btl_base_registration_handle_t *local_handle,
    struct mca_btl_base_registration_handle_t *remote_handle, uint64_t compare, uint64_t value,
    int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    smcuda_rdma_done_t done = {ep, local_address, local_handle, cbfunc, cbcontext, cbdata};

    (void) order;
    return amo_start(btl, &done, remote_handle, remote_address, SMCUDA_AMO_CSWAP, flags, value,
                     compare, true);
}

/* The target's reply: store the old value, complete the operation. */
static void amo_complete(mca_btl_smcuda_module_t *m, const smcuda_amo_msg_t *msg)
{
    int idx = (int) (msg->slot & 0xffffu);
    smcuda_amo_slot_t s;

    if (idx >= SMCUDA_AMO_SLOTS || amo_slots[idx].gen != (uint16_t) (msg->slot >> 16) ||
        NULL == amo_slots[idx].done.cbfunc) {
        mca_btl_smcuda_report_corruption("atomic reply", -1);
        return;
    }
    s = amo_slots[idx];
    amo_slots[idx].done.cbfunc = NULL;
    if (s.fetch && OPAL_SUCCESS == msg->status) {
        amo_store_result(s.done.local_address, s.flags, msg->value);
    }
    /* the slot is free before the callback, which may start another */
    slot_give(m, idx);
    OPAL_THREAD_ADD_FETCH32(&m->amo_live, -1);
    smcuda_rdma_done(m, &s.done, msg->status);
}

/* Waits until every operation in flight has been applied by its target. */
void mca_btl_smcuda_atomic_flush(mca_btl_smcuda_module_t *m)
{
    while (__atomic_load_n(&m->amo_live, __ATOMIC_ACQUIRE) > 0) {
        opal_progress();
    }
}

/* ------------------------------------------------------------------ */
/* target side                                                         */
/* ------------------------------------------------------------------ */

static inline uint64_t int_apply(uint16_t op, uint64_t old, uint64_t x, bool is32)
{
    int64_t a = is32 ? (int64_t) (int32_t) old : (int64_t) old;
    int64_t b = is32 ? (int64_t) (int32_t) x : (int64_t) x;

    switch (op) {
        case MCA_BTL_ATOMIC_LAND:
            return (uint64_t) (old && x);
        case MCA_BTL_ATOMIC_LOR:
            return (uint64_t) (old || x);
        case MCA_BTL_ATOMIC_LXOR:
            return (uint64_t) (!old != !x);
        case MCA_BTL_ATOMIC_MIN:
            return b < a ? x : old;
        case MCA_BTL_ATOMIC_MAX:
            return b > a ? x : old;
        default:
            return old;
    }
}

static inline uint64_t float_apply(uint16_t op, uint64_t old, uint64_t x, bool is32)
{
    double a, b, r;

    if (is32) {
        float fa, fb;
        uint32_t o32 = (uint32_t) old, x32 = (uint32_t) x;
        memcpy(&fa, &o32, sizeof(fa));
        memcpy(&fb, &x32, sizeof(fb));
        a = fa;
        b = fb;
    } else {
        memcpy(&a, &old, sizeof(a));
        memcpy(&b, &x, sizeof(b));
    }
    switch (op) {
        case MCA_BTL_ATOMIC_ADD:
            r = a + b;
            break;
        case MCA_BTL_ATOMIC_MIN:
            r = b < a ? b : a;
            break;
        case MCA_BTL_ATOMIC_MAX:
            r = b > a ? b : a;
            break;
        default:
            return old;
    }
    if (is32) {
        float f = (float) r;
        uint32_t r32;
        memcpy(&r32, &f, sizeof(r32));
        return r32;
    }
    memcpy(&old, &r, sizeof(old));
    return old;
}

/* The operations without a one-instruction form: a compare-and-swap loop.
 * Relaxed would do for the value itself; acq_rel keeps the operation
 * ordered with the shared-memory accesses around it, as a NIC atomic is. */
#define SMCUDA_CAS_LOOP(T, p, fn)                                                                  \
    do {                                                                                           \
        T o_ = __atomic_load_n((T *) (p), __ATOMIC_ACQUIRE);                                       \
        while (!__atomic_compare_exchange_n((T *) (p), &o_, (T) fn, false, __ATOMIC_ACQ_REL,       \
                                            __ATOMIC_ACQUIRE)) {                                   \
        }                                                                                          \
        old = o_;                                                                                  \
    } while (0)

/* Applies msg to our memory; the old contents go to msg->value. */
static int amo_apply(smcuda_amo_msg_t *msg)
{
    bool is32 = 0 != (msg->flags & MCA_BTL_ATOMIC_FLAG_32BIT);
    bool isfloat = 0 != (msg->flags & MCA_BTL_ATOMIC_FLAG_FLOAT);
    size_t width = is32 ? 4 : 8;
    uint64_t x = msg->operand, old = 0;
    void *p = (void *) (uintptr_t) msg->addr;

    if (0 != (msg->addr & (width - 1)) || msg->addr < msg->lo || msg->addr + width > msg->hi) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (SMCUDA_AMO_CSWAP == msg->op) {
        if (is32) {
            uint32_t e = (uint32_t) msg->compare;
            (void) __atomic_compare_exchange_n((uint32_t *) p, &e, (uint32_t) x, false,
                                               __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
            old = e;
        } else {
            uint64_t e = msg->compare;
            (void) __atomic_compare_exchange_n((uint64_t *) p, &e, x, false, __ATOMIC_ACQ_REL,
                                               __ATOMIC_ACQUIRE);
            old = e;
        }
    } else if (MCA_BTL_ATOMIC_SWAP == msg->op) {
        old = is32 ? __atomic_exchange_n((uint32_t *) p, (uint32_t) x, __ATOMIC_ACQ_REL)
                   : __atomic_exchange_n((uint64_t *) p, x, __ATOMIC_ACQ_REL);
    } else if (isfloat) {
        if (MCA_BTL_ATOMIC_ADD != msg->op && MCA_BTL_ATOMIC_MIN != msg->op &&
            MCA_BTL_ATOMIC_MAX != msg->op) {
            return OPAL_ERR_NOT_SUPPORTED;
        }
        if (is32) {
            SMCUDA_CAS_LOOP(uint32_t, p, float_apply(msg->op, o_, x, true));
        } else {
            SMCUDA_CAS_LOOP(uint64_t, p, float_apply(msg->op, o_, x, false));
        }
    } else {
        switch (msg->op) {
            case MCA_BTL_ATOMIC_ADD:
                old = is32 ? __atomic_fetch_add((uint32_t *) p, (uint32_t) x, __ATOMIC_ACQ_REL)
                           : __atomic_fetch_add((uint64_t *) p, x, __ATOMIC_ACQ_REL);
                break;
            case MCA_BTL_ATOMIC_AND:
                old = is32 ? __atomic_fetch_and((uint32_t *) p, (uint32_t) x, __ATOMIC_ACQ_REL)
                           : __atomic_fetch_and((uint64_t *) p, x, __ATOMIC_ACQ_REL);
                break;
            case MCA_BTL_ATOMIC_OR:
                old = is32 ? __atomic_fetch_or((uint32_t *) p, (uint32_t) x, __ATOMIC_ACQ_REL)
                           : __atomic_fetch_or((uint64_t *) p, x, __ATOMIC_ACQ_REL);
                break;
            case MCA_BTL_ATOMIC_XOR:
                old = is32 ? __atomic_fetch_xor((uint32_t *) p, (uint32_t) x, __ATOMIC_ACQ_REL)
                           : __atomic_fetch_xor((uint64_t *) p, x, __ATOMIC_ACQ_REL);
                break;
            case MCA_BTL_ATOMIC_LAND:
            case MCA_BTL_ATOMIC_LOR:
            case MCA_BTL_ATOMIC_LXOR:
            case MCA_BTL_ATOMIC_MIN:
            case MCA_BTL_ATOMIC_MAX:
                if (is32) {
                    SMCUDA_CAS_LOOP(uint32_t, p, int_apply(msg->op, o_, x, true));
                } else {
                    SMCUDA_CAS_LOOP(uint64_t, p, int_apply(msg->op, o_, x, false));
                }
                break;
            default:
                return OPAL_ERR_NOT_SUPPORTED;
        }
    }
    msg->value = old;
    return OPAL_SUCCESS;
}

/* Sends a reply now, or keeps it for progress when the origin's ring and
 * FIFO are full (a reply is never dropped: the origin waits for it). */
static void reply_send(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep,
                       const smcuda_amo_msg_t *msg)
{
    smcuda_amo_reply_t *r;

    if (opal_list_is_empty(&m->amo_backlog) && ctl_send(m, ep, msg)) {
        return;
    }
    r = OBJ_NEW(smcuda_amo_reply_t);
    if (NULL == r) {
        /* the origin will wait for this reply: say why */
        opal_output(0,
                    "btl/smcuda: out of memory queueing the reply to an atomic operation "
                    "of local peer %u; that peer cannot complete it",
                    msg->lrank);
        return;
    }
    r->ep = ep;
    r->msg = *msg;
    opal_list_append(&m->amo_backlog, &r->super);
}

int mca_btl_smcuda_atomic_backlog(mca_btl_smcuda_module_t *m)
{
    int n = 0;
    smcuda_amo_reply_t *r;

    while (NULL != (r = (smcuda_amo_reply_t *) opal_list_get_first(&m->amo_backlog)) &&
           &r->super != opal_list_get_end(&m->amo_backlog)) {
        if (!ctl_send(m, r->ep, &r->msg)) {
            break;
        }
        opal_list_remove_first(&m->amo_backlog);
        OBJ_RELEASE(r);
        ++n;
    }
    return n;
}

/* A control message of kind SMCUDA_CTL_AMO or SMCUDA_CTL_AMO_REPLY. */
void mca_btl_smcuda_atomic_msg(mca_btl_smcuda_module_t *m, const void *data, size_t len)
{
    smcuda_amo_msg_t msg;
    mca_btl_base_endpoint_t *ep;

    if (len < sizeof(msg)) {
        return;
    }
    memcpy(&msg, data, sizeof(msg));
    if (SMCUDA_CTL_AMO_REPLY == msg.kind) {
        amo_complete(m, &msg);
        return;
    }
    /* a guest that sends to us has given us an id to answer under
     * (btl_smcuda_guest.c); without one the reply could not be addressed */
    if (NULL == (ep = smcuda_ep_by_id(m, (int) msg.lrank)) || ep->ref_id < 0) {
        mca_btl_smcuda_report_corruption("atomic operation", (int) msg.lrank);
        return;
    }
    msg.status = amo_apply(&msg);
    msg.kind = SMCUDA_CTL_AMO_REPLY;
    reply_send(m, ep, &msg);
}

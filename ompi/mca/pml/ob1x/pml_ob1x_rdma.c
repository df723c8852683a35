/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * What the RDMA protocols share: BTL naming and byte counters, the choice
 * of BTLs and their shares, registration of a message's memory, and RDMA
 * operations with their retries (pml_ob1x_rdma.h).
 */
#include "ompi_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/base/base.h"
#include "ompi/mca/bml/base/base.h"

#include "common_ob1x_help.h"
#include "common_ob1x_hints.h"
#include "common_ob1x_pvar.h"

#include "pml_ob1x.h"
#include "pml_ob1x_rdma.h"

OBJ_CLASS_INSTANCE(ob1x_rdma_op_t, opal_free_list_item_t, NULL, NULL);

/* ------------------------------------------------------------- BTL table */

typedef struct btl_entry {
    const mca_btl_base_module_t *btl;
    uint32_t id;
    int slot; /* index of its byte counter */
} btl_entry_t;

#define MAX_BTLS 32
static btl_entry_t btls[MAX_BTLS];
static int nbtls;

/* FNV-1a: stable across processes and builds. */
static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; ++s) {
        h = (h ^ (uint8_t) *s) * 16777619u;
    }
    return h;
}

static int register_counter(const char *name, int k, int slot)
{
    char pname[96], desc[256];
    ob1x_pvar_t pvar = {pname, desc, MCA_BASE_PVAR_CLASS_COUNTER, &ob1x_counters.btl_bytes[slot]};

    if (0 == k) {
        snprintf(pname, sizeof(pname), "bytes_%s", name);
    } else {
        snprintf(pname, sizeof(pname), "bytes_%s_%d", name, k);
    }
    snprintf(desc, sizeof(desc),
             "Payload bytes of rendezvous messages of this process that btl/%s (module %d) "
             "carried: RNDV data, FRAGs, gets and puts",
             name, k);
    return ob1x_pvar_register(&mca_pml_ob1x_component.pmlm_version, &pvar);
}

int ob1x_btls_setup(void)
{
    mca_btl_base_selected_module_t *sm;

    if (nbtls > 0) {
        return OMPI_SUCCESS;
    }
    OPAL_LIST_FOREACH(sm, &mca_btl_base_modules_initialized, mca_btl_base_selected_module_t)
    {
        const char *name = sm->btl_component->btl_version.mca_component_name;
        int k = 0;

        if (nbtls == MAX_BTLS) {
            break;
        }
        for (int i = 0; i < nbtls; ++i) {
            if (btls[i].btl->btl_component == sm->btl_module->btl_component) {
                ++k; /* another module of the same component (several NICs) */
            }
        }
        btls[nbtls].btl = sm->btl_module;
        btls[nbtls].id = (name_hash(name) & ~0xffu) | (uint32_t) k;
        btls[nbtls].slot = nbtls < OB1X_MAX_BTL_COUNTERS ? nbtls : OB1X_MAX_BTL_COUNTERS - 1;
        if (nbtls < OB1X_MAX_BTL_COUNTERS) {
            (void) register_counter(name, k, btls[nbtls].slot);
        }
        ++nbtls;
    }
    return OMPI_SUCCESS;
}

static const btl_entry_t *btl_find(const mca_btl_base_module_t *btl)
{
    /* a message usually asks about the BTL the previous one used */
    static int last; /* a hint only: relaxed, checked before use */
    int i = __atomic_load_n(&last, __ATOMIC_RELAXED);

    if (OPAL_LIKELY(i < nbtls && btls[i].btl == btl)) {
        return &btls[i];
    }
    for (i = 0; i < nbtls; ++i) {
        if (btls[i].btl == btl) {
            __atomic_store_n(&last, i, __ATOMIC_RELAXED);
            return &btls[i];
        }
    }
    return NULL;
}

uint32_t ob1x_btl_id(const mca_btl_base_module_t *btl)
{
    const btl_entry_t *e = btl_find(btl);
    return NULL != e ? e->id : 0;
}

void ob1x_btl_count(const mca_btl_base_module_t *btl, size_t bytes)
{
    const btl_entry_t *e = btl_find(btl);
    if (NULL != e) {
        (void) ob1x_counter_add(&ob1x_counters.btl_bytes[e->slot], bytes);
    }
}

void ob1x_btl_count_id(uint32_t id, size_t bytes)
{
    for (int i = 0; i < nbtls; ++i) {
        if (btls[i].id == id) {
            (void) ob1x_counter_add(&ob1x_counters.btl_bytes[btls[i].slot], bytes);
            return;
        }
    }
}

/* ---------------------------------------------------------- BTL choice */

/* What b can do for RDMA: the flag, and the function behind it. */
static uint32_t rdma_can(const mca_bml_base_btl_t *b)
{
    uint32_t f = 0;

    if ((b->btl_flags & MCA_BTL_FLAGS_GET) && NULL != b->btl->btl_get) {
        f |= MCA_BTL_FLAGS_GET;
    }
    if ((b->btl_flags & MCA_BTL_FLAGS_PUT) && NULL != b->btl->btl_put) {
        f |= MCA_BTL_FLAGS_PUT;
    }
    return f;
}

static opal_mutex_t peer_lock = OPAL_MUTEX_STATIC_INIT;

const ob1x_rdma_peer_t *ob1x_rdma_peer_make(ob1x_proc_t *op, mca_bml_base_endpoint_t *ep)
{
    ob1x_rdma_peer_t *v = calloc(1, sizeof(*v));
    size_t n = mca_bml_base_btl_array_get_size(&ep->btl_rdma);

    if (NULL == v) {
        /* no view: nothing goes by RDMA (a stable empty one) */
        static ob1x_rdma_peer_t none = {.first = -1};
        none.ep = ep;
        none.n_rdma = ep->btl_rdma.arr_size;
        none.n_send = ep->btl_send.arr_size;
        return &none;
    }
    v->ep = ep;
    v->n_rdma = n;
    v->n_send = mca_bml_base_btl_array_get_size(&ep->btl_send);
    v->first = -1;
    for (size_t i = 0; i < n && v->n < OB1X_RDMA_PEER_MAX; ++i) {
        ob1x_rdma_peer_btl_t *e = &v->b[v->n++];

        e->bml_btl = mca_bml_base_btl_array_get_index(&ep->btl_rdma, i);
        e->id = ob1x_btl_id(e->bml_btl->btl);
        e->can = rdma_can(e->bml_btl);
        e->reg_kind = ob1x_reg_kind(e->bml_btl->btl);
        e->hints = ob1x_btl_hints_find(e->bml_btl->btl);
        e->ours =
            0 != e->can && (mca_pml_ob1x.params.use_all_rdma ||
                            NULL != mca_bml_base_btl_array_find(&ep->btl_send, e->bml_btl->btl));
        if (e->ours && v->first < 0) {
            v->first = (int) (e - v->b);
        }
    }
    /* The newest view is published; the ones it replaces stay readable
     * (another thread may hold one) until the peer's state goes. */
    OPAL_THREAD_LOCK(&peer_lock);
    v->older = op->rdma;
    __atomic_store_n(&op->rdma, v, __ATOMIC_RELEASE);
    OPAL_THREAD_UNLOCK(&peer_lock);
    return v;
}

void ob1x_rdma_peer_free(ob1x_rdma_peer_t *v)
{
    while (NULL != v) {
        ob1x_rdma_peer_t *older = v->older;
        free(v);
        v = older;
    }
}

int ob1x_rdma_btls(const ob1x_rdma_peer_t *v, uint32_t flags, ob1x_rdma_btl_t *out)
{
    int used = 0;

    for (int i = 0; i < v->n && used < mca_pml_ob1x.params.max_rdma_per_request; ++i) {
        if (v->b[i].ours && 0 != (v->b[i].can & flags)) {
            memset(&out[used], 0, sizeof(out[used]));
            out[used].bml_btl = v->b[i].bml_btl;
            out[used].reg_kind = v->b[i].reg_kind;
            out[used++].id = v->b[i].id;
        }
    }
    return used;
}

const ob1x_rdma_peer_btl_t *ob1x_rdma_btl_by_id(const ob1x_rdma_peer_t *v, uint32_t id,
                                                uint32_t flags)
{
    for (int i = 0; i < v->n; ++i) {
        if (v->b[i].id == id && 0 != (v->b[i].can & flags)) {
            return &v->b[i];
        }
    }
    return NULL;
}

void ob1x_rdma_shares(ob1x_rdma_btl_t *btls_, int n, size_t offset, size_t length, size_t align)
{
    double total = 0;
    size_t left = length;

    if (1 == n) { /* the usual case: no floating point */
        btls_[0].offset = offset;
        btls_[0].length = length;
        return;
    }

    for (int i = 0; i < n; ++i) {
        total += btls_[i].bml_btl->btl->btl_bandwidth ? btls_[i].bml_btl->btl->btl_bandwidth : 1;
    }
    for (int i = 0; i < n; ++i) {
        double bw = btls_[i].bml_btl->btl->btl_bandwidth ? btls_[i].bml_btl->btl->btl_bandwidth : 1;
        size_t share = i == n - 1 ? left : (size_t) ((double) length * bw / total);
        if (i < n - 1 && align > 1) {
            share -= share % align;
        }
        if (share > left) {
            share = left;
        }
        btls_[i].offset = offset;
        btls_[i].length = share;
        offset += share;
        left -= share;
    }
}

bool ob1x_rdma_prefer_copy(const ob1x_rdma_peer_btl_t *b, size_t size)
{
    ob1x_btl_hints_t h;
    bool stream = mca_pml_ob1x.rdma_live > 0;

    if (NULL == b->hints || !b->hints(b->bml_btl->btl, b->bml_btl->btl_endpoint, size, stream, &h)) {
        return false;
    }
    if (ob1x_hints_prefer_copy(&h, size, stream)) {
        ob1x_count_event(OB1X_EV_HINT_COPY);
        return true;
    }
    return false;
}

/* One share's registration, the way its BTL is known to take it. */
static int register_share(ob1x_rdma_btl_t *b, unsigned char *base, uint32_t access)
{
    unsigned kind = b->reg_kind;
    int rc;

    if (ob1x_reg_kind_needs_none(kind, access)) {
        b->reg = NULL;
        b->handle = NULL;
        b->bare = false;
        return OMPI_SUCCESS;
    }
    if (kind & OB1X_REG_KIND_DIRECT) {
        b->reg = NULL;
        rc = ob1x_reg_bare(b->bml_btl, base + b->offset, b->length, access, &b->handle);
        b->bare = OMPI_SUCCESS == rc;
        return rc;
    }
    return ob1x_reg_acquire_bare(b->bml_btl, base + b->offset, b->length, access, &b->reg,
                                 &b->handle, &b->bare);
}

int ob1x_rdma_register(ob1x_rdma_btl_t *b, int n, unsigned char *base, uint32_t access)
{
    int kept = 0;

    for (int i = 0; i < n; ++i) {
        if (0 != b[i].length && OMPI_SUCCESS != register_share(&b[i], base, access)) {
            continue;
        }
        if (kept != i) {
            b[kept] = b[i];
        }
        ++kept;
    }
    return kept;
}

void ob1x_rdma_deregister(ob1x_rdma_btl_t *b, int n)
{
    for (int i = 0; i < n; ++i) {
        if (NULL != b[i].reg) {
            ob1x_reg_release(b[i].reg);
            b[i].reg = NULL;
        } else if (b[i].bare) {
            ob1x_reg_release_bare(b[i].bml_btl->btl, b[i].handle);
            b[i].handle = NULL;
        }
        b[i].bare = false;
    }
}

/* ----------------------------------------------------------- operations */

ob1x_rdma_op_t *ob1x_rdma_op_alloc(void)
{
    ob1x_rdma_op_t *op = (ob1x_rdma_op_t *) opal_free_list_wait(&mca_pml_ob1x.rdma_ops);

    op->tries = 0;
    op->btl_id = 0;
    op->own_reg = NULL;
    op->local_handle = NULL;
    op->remote_handle_size = 0;
    op->peer_req = 0;
    op->slot = 0;
    return op;
}

void ob1x_rdma_op_return(ob1x_rdma_op_t *op)
{
    if (NULL != op->own_reg) {
        ob1x_reg_release(op->own_reg);
        op->own_reg = NULL;
    }
    opal_free_list_return(&mca_pml_ob1x.rdma_ops, &op->super);
}

/* Testing aid (pml_ob1x_rdma_fault_every): this operation fails. */
static bool rdma_fault_injected(void)
{
    static volatile int32_t calls;

    if (OPAL_LIKELY(0 == mca_pml_ob1x.params.rdma_fault_every)) {
        return false;
    }
    return 0 == OPAL_THREAD_ADD_FETCH32(&calls, 1) % mca_pml_ob1x.params.rdma_fault_every;
}

static void op_queue(ob1x_rdma_op_t *op)
{
    OPAL_THREAD_LOCK(&mca_pml_ob1x.pending_lock);
    opal_list_append(&mca_pml_ob1x.pending_rdma, &op->super.super);
    OPAL_THREAD_UNLOCK(&mca_pml_ob1x.pending_lock);
    ob1x_pending_added();
}

/* A failed try: again from progress (never from inside the BTL's
 * callback, which could recurse), or give up after the limit. */
static void op_failed(ob1x_rdma_op_t *op, int status)
{
    if (op->tries++ < mca_pml_ob1x.params.rdma_retries_limit) {
        ob1x_count_event(OB1X_EV_RDMA_RETRIES);
        op_queue(op);
        return;
    }
    op->done(op, OMPI_SUCCESS == status ? OMPI_ERROR : status);
}

static void op_cb(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep, void *local,
                  mca_btl_base_registration_handle_t *local_handle, void *context, void *cbdata,
                  int status)
{
    ob1x_rdma_op_t *op = (ob1x_rdma_op_t *) cbdata;

    (void) btl;
    (void) ep;
    (void) local;
    (void) local_handle;
    (void) context;
    if (OPAL_LIKELY(OPAL_SUCCESS == status)) {
        op->done(op, OMPI_SUCCESS);
    } else {
        op_failed(op, status);
    }
}

/* btl_get's flags: alone while RGET sends of ours are live (policy; the
 * BTL only offers the mechanism). A lone get, as in a ping-pong, is
 * shared: the owner then waits for our answer with its core free. */
static int get_flags(const ob1x_rdma_op_t *op)
{
    return mca_pml_ob1x.rdma_live > 0 &&
                   (ob1x_btl_props(op->bml_btl->btl) & OB1X_BTL_PROP_GET_SOLO)
               ? OB1X_BTL_GET_FLAG_SOLO
               : 0;
}

/* One try; OMPI_ERR_OUT_OF_RESOURCE when the BTL has no room now. */
static int op_try(ob1x_rdma_op_t *op)
{
    mca_btl_base_registration_handle_t *remote =
        op->remote_handle_size ? (mca_btl_base_registration_handle_t *) op->remote_handle : NULL;
    int rc;

    if (OPAL_UNLIKELY(rdma_fault_injected())) {
        rc = OMPI_ERROR;
    } else if (OB1X_RDMA_GET == op->kind) {
        rc = mca_bml_base_get(op->bml_btl, op->local, op->remote, op->local_handle, remote,
                              op->length, get_flags(op), MCA_BTL_NO_ORDER, op_cb, op);
    } else {
        rc = mca_bml_base_put(op->bml_btl, op->local, op->remote, op->local_handle, remote,
                              op->length, 0, MCA_BTL_NO_ORDER, op_cb, op);
    }
    if (1 == rc) {
        op->done(op, OMPI_SUCCESS); /* complete already, no callback comes */
    } else if (OPAL_UNLIKELY(OMPI_SUCCESS != rc && OMPI_ERR_OUT_OF_RESOURCE != rc)) {
        op_failed(op, rc);
    }
    return OMPI_ERR_OUT_OF_RESOURCE == rc ? rc : OMPI_SUCCESS;
}

void ob1x_rdma_op_start(ob1x_rdma_op_t *op)
{
    if (OMPI_ERR_OUT_OF_RESOURCE == op_try(op)) {
        ob1x_count_event(OB1X_EV_RESOURCE_RETRIES);
        op_queue(op);
    }
}

static int op_retry(opal_list_item_t *item)
{
    return op_try((ob1x_rdma_op_t *) item);
}

int ob1x_rdma_progress(void)
{
    return ob1x_pending_retry(&mca_pml_ob1x.pending_rdma, op_retry);
}

void ob1x_rdma_fallback_notice(const ob1x_rdma_op_t *op, int status)
{
    static volatile int32_t told;

    ob1x_count_event(OB1X_EV_FALLBACK_FAILED);
    if (0 == OPAL_THREAD_ADD_FETCH32(&told, 1) - 1) {
        ob1x_show_help_now("help-mpi-pml-ob1x.txt", "rdma-fallback", ob1x_host(),
                           OB1X_RDMA_GET == op->kind ? "get" : "put",
                           NULL != op->bml_btl
                               ? op->bml_btl->btl->btl_component->btl_version.mca_component_name
                               : "(none in common)",
                           status, op->tries, mca_pml_ob1x.params.rdma_retries_limit);
    }
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_ofi_frag.c - the two-sided path's life: limits and flags of the
 * module, the fragment free lists, the receive buffers (btl_ofi_recv.c)
 * and the retry of work the provider refused where no caller could retry
 * it (a low-priority progress callback shared by all modules).
 */
#include "btl_ofi_frag.h"

#include <stdlib.h>

#include "opal/runtime/opal_progress.h"
#include "opal/util/output.h"

/* Free-list sizes: fragments in flight at once per module. An exhausted
 * list makes alloc/sendi refuse (the PML queues and retries). */
#define FRAGS_EAGER_MAX 4096
#define FRAGS_MAX_MAX 512
#define FRAGS_USER_MAX 1024
#define FRAGS_PER_ALLOC 16

static void frag_construct(mca_btl_ofi_frag_t *frag)
{
    frag->base.des_segments = frag->segments;
    frag->base.des_segment_count = 1;
    frag->user_desc = NULL;
    frag->user_reg = NULL;
}

OBJ_CLASS_INSTANCE(mca_btl_ofi_frag_t, mca_btl_base_descriptor_t, frag_construct, NULL);
OBJ_CLASS_INSTANCE(mca_btl_ofi_pending_reply_t, opal_list_item_t, NULL, NULL);

/* Binds a fragment to its list's buffer: our header first, the upper
 * layer's bytes after it. */
static int frag_bind(opal_free_list_item_t *item, mca_btl_ofi_module_t *m, opal_free_list_t *list,
                     size_t cap)
{
    mca_btl_ofi_frag_t *frag = (mca_btl_ofi_frag_t *) item;

    frag->module = m;
    frag->list = list;
    frag->cap = cap;
    frag->hdr = (mca_btl_ofi_hdr_t *) item->ptr;
    frag->desc =
        NULL != item->registration ? ((mca_btl_ofi_reg_t *) item->registration)->handle.desc : NULL;
    frag->segments[0].seg_addr.pval = frag->hdr + 1;
    return OPAL_SUCCESS;
}

static int frag_init_eager(opal_free_list_item_t *item, void *ctx)
{
    mca_btl_ofi_module_t *m = (mca_btl_ofi_module_t *) ctx;
    return frag_bind(item, m, &m->frags_eager, m->super.btl_eager_limit);
}

static int frag_init_max(opal_free_list_item_t *item, void *ctx)
{
    mca_btl_ofi_module_t *m = (mca_btl_ofi_module_t *) ctx;
    return frag_bind(item, m, &m->frags_max, m->super.btl_max_send_size);
}

static int frag_init_user(opal_free_list_item_t *item, void *ctx)
{
    mca_btl_ofi_module_t *m = (mca_btl_ofi_module_t *) ctx;
    return frag_bind(item, m, &m->frags_user, MCA_BTL_OFI_INPLACE_RESERVE);
}

static int list_init(mca_btl_ofi_module_t *m, opal_free_list_t *list, size_t cap, int max,
                     opal_free_list_item_init_fn_t init)
{
    return opal_free_list_init(list, sizeof(mca_btl_ofi_frag_t), opal_cache_line_size,
                               OBJ_CLASS(mca_btl_ofi_frag_t), sizeof(mca_btl_ofi_hdr_t) + cap,
                               opal_cache_line_size, FRAGS_PER_ALLOC, max, FRAGS_PER_ALLOC, NULL, 0,
                               m->mr_local ? m->rcache : NULL, init, m);
}

/* The lists were constructed by the module; they are left constructed
 * and empty for its destruct. */
static void list_fini(opal_free_list_t *list)
{
    OBJ_DESTRUCT(list);
    OBJ_CONSTRUCT(list, opal_free_list_t);
}

/* The max list only when max_send_size is above the eager limit; the
 * in-place list only when prepare_src may send in place. */
int mca_btl_ofi_frag_lists_init(mca_btl_ofi_module_t *m)
{
    int rc =
        list_init(m, &m->frags_eager, m->super.btl_eager_limit, FRAGS_EAGER_MAX, frag_init_eager);

    if (OPAL_SUCCESS == rc && m->super.btl_max_send_size > m->super.btl_eager_limit) {
        rc = list_init(m, &m->frags_max, m->super.btl_max_send_size, FRAGS_MAX_MAX, frag_init_max);
    }
    if (OPAL_SUCCESS == rc && mca_btl_ofi_ts(m)->inplace) {
        rc = list_init(m, &m->frags_user, MCA_BTL_OFI_INPLACE_RESERVE, FRAGS_USER_MAX,
                       frag_init_user);
    }
    if (OPAL_SUCCESS != rc) {
        mca_btl_ofi_frag_lists_fini(m);
    }
    return rc;
}

void mca_btl_ofi_frag_lists_fini(mca_btl_ofi_module_t *m)
{
    list_fini(&m->frags_user);
    list_fini(&m->frags_max);
    list_fini(&m->frags_eager);
}

/* ------------------------------------------------------------------ */
/* retry from progress                                                 */
/* ------------------------------------------------------------------ */

static int hook_users = 0;

/* Low priority: only modules with refused work do anything. */
static int twosided_progress(void)
{
    mca_btl_ofi_component_t *c = &mca_btl_ofi_component;

    for (int i = 0; i < c->num_modules; ++i) {
        mca_btl_ofi_module_t *m = c->modules[i];
        mca_btl_ofi_twosided_t *ts = m->two_sided ? mca_btl_ofi_ts(m) : NULL;
        if (NULL != ts && OFI_UNLIKELY(ts->npending > 0)) {
            mca_btl_ofi_recv_retry(m);
            mca_btl_ofi_send_retry(m);
            mca_btl_ofi_am_retry(m);
        }
    }
    return 0;
}

static void hook_add(void)
{
    if (0 == hook_users++) {
        (void) opal_progress_register_lp(twosided_progress);
    }
}

static void hook_remove(void)
{
    if (0 == --hook_users) {
        (void) opal_progress_unregister(twosided_progress);
    }
}

/* ------------------------------------------------------------------ */
/* init / fini                                                         */
/* ------------------------------------------------------------------ */

/* The user's eager/max-send sizes (btl_ofi_eager_limit, ...), kept
 * consistent and within what one libfabric message may carry. */
static void set_limits(mca_btl_ofi_module_t *m, mca_btl_ofi_twosided_t *ts)
{
    mca_btl_base_module_t *b = &m->super;
    size_t max_msg = m->info->ep_attr->max_msg_size - sizeof(mca_btl_ofi_hdr_t);

    if (b->btl_max_send_size > max_msg) {
        b->btl_max_send_size = max_msg;
    }
    if (b->btl_eager_limit > b->btl_max_send_size) {
        b->btl_eager_limit = b->btl_max_send_size;
    }
    if (b->btl_rndv_eager_limit > b->btl_eager_limit) {
        b->btl_rndv_eager_limit = b->btl_eager_limit;
    }
    ts->slot = sizeof(mca_btl_ofi_hdr_t) + b->btl_max_send_size;
    ts->inject_size = m->info->tx_attr->inject_size;
    /* in place: a second iovec for the user's data */
    ts->inplace = m->info->tx_attr->iov_limit >= 2;
}

static void set_flags(mca_btl_ofi_module_t *m, mca_btl_ofi_twosided_t *ts)
{
    mca_btl_base_module_t *b = &m->super;

    b->btl_flags |= MCA_BTL_FLAGS_SEND;
    if (ts->inplace) {
        b->btl_flags |= MCA_BTL_FLAGS_SEND_INPLACE;
    }
    /* kept by set_module_ops only when the atomics travel as active
     * messages: they carry 32-bit operands as well, and the target's CPU
     * applies them, so they are atomic with CPU atomics (global) */
    b->btl_atomic_flags |= MCA_BTL_ATOMIC_SUPPORTS_32BIT | MCA_BTL_ATOMIC_SUPPORTS_GLOB;
    b->btl_alloc = mca_btl_ofi_alloc;
    b->btl_free = mca_btl_ofi_free;
    b->btl_prepare_src = mca_btl_ofi_prepare_src;
    b->btl_send = mca_btl_ofi_send;
    b->btl_sendi = mca_btl_ofi_sendi;
}

static void ts_free(mca_btl_ofi_module_t *m)
{
    mca_btl_ofi_twosided_t *ts = mca_btl_ofi_ts(m);
    opal_list_item_t *item;

    while (NULL != (item = opal_list_remove_first(&ts->pending_replies))) {
        OBJ_RELEASE(item);
    }
    /* queued fragments belong to their free lists (destroyed next) */
    while (NULL != opal_list_remove_first(&ts->pending_frags)) {
    }
    OBJ_DESTRUCT(&ts->pending_frags);
    OBJ_DESTRUCT(&ts->pending_replies);
    OBJ_DESTRUCT(&ts->pending_lock);
    free(ts);
    m->recv_state = NULL;
}

int mca_btl_ofi_twosided_init(mca_btl_ofi_module_t *m)
{
    mca_btl_ofi_twosided_t *ts = calloc(1, sizeof(*ts));
    int rc;

    if (NULL == ts) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    OBJ_CONSTRUCT(&ts->pending_lock, opal_mutex_t);
    OBJ_CONSTRUCT(&ts->pending_frags, opal_list_t);
    OBJ_CONSTRUCT(&ts->pending_replies, opal_list_t);
    m->recv_state = ts;
    set_limits(m, ts);
    rc = mca_btl_ofi_frag_lists_init(m);
    if (OPAL_SUCCESS != rc) {
        ts_free(m);
        return rc;
    }
    rc = mca_btl_ofi_recv_init(m);
    if (OPAL_SUCCESS != rc) {
        mca_btl_ofi_frag_lists_fini(m);
        ts_free(m);
        return rc;
    }
    set_flags(m, ts);
    hook_add();
    m->two_sided = true;
    opal_output_verbose(10, mca_btl_ofi_component.output,
                        "btl/ofi: %s: two-sided: eager %zu, max send %zu, inject %zu, %d "
                        "receive buffer(s)%s%s",
                        m->nic_name, m->super.btl_eager_limit, m->super.btl_max_send_size,
                        ts->inject_size, ts->nbufs, ts->multi_recv ? " (multi-recv)" : "",
                        ts->inplace ? ", in-place sends" : "");
    return OPAL_SUCCESS;
}

/* Called by finalize before the contexts close: the posted buffers are
 * freed here and released by the provider when the endpoints close. */
void mca_btl_ofi_twosided_fini(mca_btl_ofi_module_t *m)
{
    if (NULL == m->recv_state) {
        return;
    }
    hook_remove();
    mca_btl_ofi_recv_fini(m);
    mca_btl_ofi_frag_lists_fini(m);
    ts_free(m);
    m->two_sided = false;
}

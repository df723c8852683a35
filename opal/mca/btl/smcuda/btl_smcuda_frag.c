/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_frag.c - fragment free lists carved from the shared pool.
 */
#include "btl_smcuda_frag.h"

static void frag_construct(mca_btl_smcuda_frag_t *frag)
{
    frag->base.des_segments = &frag->segment;
    frag->base.des_segment_count = 1;
    frag->hdr = NULL;
    frag->ep = NULL;
}

OBJ_CLASS_INSTANCE(mca_btl_smcuda_frag_t, mca_btl_base_descriptor_t, frag_construct, NULL);

/* Context of one list's pool region. */
typedef struct {
    mca_btl_smcuda_module_t *m;
    uint64_t *next, end;
    uint32_t cap;
    opal_free_list_t *list;
} carve_ctx_t;

static carve_ctx_t eager_ctx, max_ctx;

/* Free-list item constructor: binds the new descriptor to the next pool
 * buffer of its region; fails (the list stops growing) when none is left. */
static int frag_carve(opal_free_list_item_t *item, void *arg)
{
    carve_ctx_t *ctx = (carve_ctx_t *) arg;
    mca_btl_smcuda_frag_t *frag = (mca_btl_smcuda_frag_t *) item;
    uint64_t bytes = SMCUDA_ALIGN(SMCUDA_FRAG_HDR_SIZE + ctx->cap, SMCUDA_CACHE_LINE);

    if (*ctx->next + bytes > ctx->end) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    frag->off = *ctx->next;
    *ctx->next += bytes;
    frag->hdr = (smcuda_frag_hdr_t *) (ctx->m->seg + frag->off);
    frag->cap = ctx->cap;
    frag->list = ctx->list;
    frag->priv = false;
    frag->segment.seg_addr.pval = (unsigned char *) frag->hdr + SMCUDA_FRAG_HDR_SIZE;
    frag->segment.seg_len = 0;
    return OPAL_SUCCESS;
}

/* Free-list item constructor for private overflow fragments. */
static int frag_priv_init(opal_free_list_item_t *item, void *arg)
{
    mca_btl_smcuda_module_t *m = (mca_btl_smcuda_module_t *) arg;
    mca_btl_smcuda_frag_t *frag = (mca_btl_smcuda_frag_t *) item;

    frag->hdr = NULL;
    frag->off = 0;
    frag->cap = mca_btl_smcuda_component.fbox_max_size;
    frag->list = &m->priv_frags;
    frag->priv = true;
    frag->segment.seg_addr.pval = item->ptr;
    frag->segment.seg_len = 0;
    return OPAL_SUCCESS;
}

int mca_btl_smcuda_frag_lists_init(mca_btl_smcuda_module_t *m)
{
    mca_btl_smcuda_component_t *c = &mca_btl_smcuda_component;
    int rc, eager_num;

    eager_ctx = (carve_ctx_t){m, &m->eager_next, m->eager_end, (uint32_t) m->super.btl_eager_limit,
                              &m->eager_frags};
    max_ctx = (carve_ctx_t){m, &m->max_next, m->max_end, (uint32_t) m->super.btl_max_send_size,
                            &m->max_frags};
    OBJ_CONSTRUCT(&m->eager_frags, opal_free_list_t);
    OBJ_CONSTRUCT(&m->max_frags, opal_free_list_t);
    OBJ_CONSTRUCT(&m->priv_frags, opal_free_list_t);
    rc =
        opal_free_list_init(&m->priv_frags, sizeof(mca_btl_smcuda_frag_t), opal_cache_line_size,
                            OBJ_CLASS(mca_btl_smcuda_frag_t), c->fbox_max_size,
                            opal_cache_line_size, 0, 1 << 20, 16, NULL, 0, NULL, frag_priv_init, m);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    /* as many as the pool holds (btl_smcuda_max_pool_size may have made
     * that fewer than free_list_max and max_frags) */
    eager_num =
        (uint64_t) c->free_list_num < m->eager_count ? c->free_list_num : (int) m->eager_count;
    rc =
        opal_free_list_init(&m->eager_frags, sizeof(mca_btl_smcuda_frag_t), opal_cache_line_size,
                            OBJ_CLASS(mca_btl_smcuda_frag_t), 0, 0, eager_num, (int) m->eager_count,
                            c->free_list_inc, NULL, 0, NULL, frag_carve, &eager_ctx);
    if (OPAL_SUCCESS != rc || 0 == m->max_count) {
        return rc;
    }
    return opal_free_list_init(&m->max_frags, sizeof(mca_btl_smcuda_frag_t), opal_cache_line_size,
                               OBJ_CLASS(mca_btl_smcuda_frag_t), 0, 0, 0, (int) m->max_count,
                               m->max_count < 8 ? (int) m->max_count : 8, NULL, 0, NULL, frag_carve,
                               &max_ctx);
}

void mca_btl_smcuda_frag_lists_fini(mca_btl_smcuda_module_t *m)
{
    OBJ_DESTRUCT(&m->eager_frags);
    OBJ_DESTRUCT(&m->max_frags);
    OBJ_DESTRUCT(&m->priv_frags);
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_frag.h - send fragments.
 *
 * A fragment is a private descriptor bound for life to one buffer of the
 * owner's shared pool (smcuda_frag_hdr_t + payload).  Two free lists: one
 * with eager_limit payloads, one with max_send_size payloads (only when
 * that is above the eager limit); how many of each the pool holds is set
 * at init within btl_smcuda_max_pool_size.  Buffers are
 * carved from the pool when a list grows; when the pool region is used up
 * the list stops growing.  Small allocations then fall back to fragments
 * in private memory that can only travel through a ring (copied in at send
 * time), so control messages of the upper layer never starve.
 */
#ifndef MCA_BTL_SMCUDA_FRAG_H
#define MCA_BTL_SMCUDA_FRAG_H

#include "btl_smcuda.h"

typedef struct mca_btl_smcuda_frag_t {
    mca_btl_base_descriptor_t base;
    mca_btl_base_segment_t segment; /* points into the shared payload */
    mca_btl_base_endpoint_t *ep;
    smcuda_frag_hdr_t *hdr; /* shared header, in our segment (NULL: private) */
    uint64_t off;           /* offset of hdr in our segment */
    uint32_t cap;           /* payload capacity */
    bool need_cb;           /* call des_cbfunc when the receiver is done */
    bool priv;              /* private-memory overflow fragment: ring only */
    mca_btl_base_tag_t tag;
    opal_free_list_t *list; /* list it returns to */
} mca_btl_smcuda_frag_t;
OBJ_CLASS_DECLARATION(mca_btl_smcuda_frag_t);

int mca_btl_smcuda_frag_lists_init(mca_btl_smcuda_module_t *m);
void mca_btl_smcuda_frag_lists_fini(mca_btl_smcuda_module_t *m);

static inline mca_btl_smcuda_frag_t *
mca_btl_smcuda_frag_alloc(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep, size_t size)
{
    opal_free_list_t *list;
    mca_btl_smcuda_frag_t *frag;

    if (SMCUDA_LIKELY(size <= m->super.btl_eager_limit)) {
        list = &m->eager_frags;
    } else if (size <= m->super.btl_max_send_size) {
        list = &m->max_frags;
    } else {
        return NULL;
    }
    frag = (mca_btl_smcuda_frag_t *) opal_free_list_get(list);
    if (SMCUDA_UNLIKELY(NULL == frag)) {
        if (size > ep->out_max_near || NULL == ep->out_ring) {
            return NULL;
        }
        frag = (mca_btl_smcuda_frag_t *) opal_free_list_get(&m->priv_frags);
        if (NULL == frag) {
            return NULL;
        }
    }
    frag->ep = ep;
    frag->segment.seg_len = size;
    frag->base.des_segment_count = 1;
    frag->base.des_cbfunc = NULL;
    frag->base.des_flags = 0;
    frag->need_cb = false;
    return frag;
}

static inline void mca_btl_smcuda_frag_return(mca_btl_smcuda_frag_t *frag)
{
    opal_free_list_return(frag->list, &frag->base.super);
}

#endif /* MCA_BTL_SMCUDA_FRAG_H */

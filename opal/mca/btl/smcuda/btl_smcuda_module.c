/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_module.c - module life cycle, descriptors, registration.
 */
#include "btl_smcuda.h"
#include "btl_smcuda_frag.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "opal/class/opal_bitmap.h"
#include "opal/datatype/opal_convertor.h"
#include "opal/mca/hwloc/hwloc-internal.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"

#include "common_ob1x_convertor.h"
#include "common_ob1x_hints.h"

static mca_btl_base_descriptor_t *smcuda_alloc(struct mca_btl_base_module_t *btl,
                                               struct mca_btl_base_endpoint_t *ep, uint8_t order,
                                               size_t size, uint32_t flags)
{
    mca_btl_smcuda_frag_t *frag;

    (void) order;
    frag = mca_btl_smcuda_frag_alloc((mca_btl_smcuda_module_t *) btl, ep, size);
    if (SMCUDA_UNLIKELY(NULL == frag)) {
        return NULL;
    }
    frag->base.des_flags = flags;
    frag->base.order = MCA_BTL_NO_ORDER;
    return &frag->base;
}

static int smcuda_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    (void) btl;
    mca_btl_smcuda_frag_return((mca_btl_smcuda_frag_t *) des);
    return OPAL_SUCCESS;
}

/* Packs `reserve` header bytes (filled in later by the caller) and up to
 * *size data bytes straight into a shared fragment: the data is written
 * once, in place, where the receiver will read it. */
static mca_btl_base_descriptor_t *smcuda_prepare_src(struct mca_btl_base_module_t *btl,
                                                     struct mca_btl_base_endpoint_t *ep,
                                                     struct opal_convertor_t *convertor,
                                                     uint8_t order, size_t reserve, size_t *size,
                                                     uint32_t flags)
{
    mca_btl_smcuda_module_t *m = (mca_btl_smcuda_module_t *) btl;
    mca_btl_smcuda_frag_t *frag;
    size_t data = *size;

    (void) order;
    if (reserve + data > btl->btl_max_send_size) {
        data = btl->btl_max_send_size - reserve;
    }
    frag = mca_btl_smcuda_frag_alloc(m, ep, reserve + data);
    if (SMCUDA_UNLIKELY(NULL == frag)) {
        return NULL;
    }
    if (data > 0) {
        data = ob1x_convertor_pack(convertor,
                                   (unsigned char *) frag->segment.seg_addr.pval + reserve, data);
        if (SMCUDA_UNLIKELY(0 == data)) {
            mca_btl_smcuda_frag_return(frag);
            return NULL;
        }
    }
    frag->segment.seg_len = reserve + data;
    frag->base.des_flags = flags;
    frag->base.order = MCA_BTL_NO_ORDER;
    *size = data;
    return &frag->base;
}

/* Handles come from a small cache of released ones (malloc when it is
 * empty, or when threads could race on it). */
static mca_btl_base_registration_handle_t *smcuda_reg_alloc(mca_btl_smcuda_module_t *m)
{
    if (m->reg_cached > 0 && !opal_using_threads()) {
        return m->reg_cache[--m->reg_cached];
    }
    return (mca_btl_base_registration_handle_t *) malloc(
        sizeof(mca_btl_base_registration_handle_t));
}

static void smcuda_reg_release(mca_btl_smcuda_module_t *m, mca_btl_base_registration_handle_t *h)
{
    if (m->reg_cached < SMCUDA_REG_CACHE && !opal_using_threads()) {
        m->reg_cache[m->reg_cached++] = h;
    } else {
        free(h);
    }
}

/* Registration only records the range: single-copy needs no pinning.
 * Every registration with a peer that single copy reaches is accepted:
 * whether a message goes by single copy is the upper layer's choice (our
 * figures for it: btl_smcuda_path.c). */
static mca_btl_base_registration_handle_t *smcuda_register_mem(struct mca_btl_base_module_t *btl,
                                                               struct mca_btl_base_endpoint_t *ep,
                                                               void *base, size_t size,
                                                               uint32_t flags)
{
    mca_btl_smcuda_module_t *m = (mca_btl_smcuda_module_t *) btl;
    mca_btl_base_registration_handle_t *h;

    if (NULL != ep && MCA_BTL_ENDPOINT_ANY != ep && !ep->copy_ok && !ep->self) {
        return NULL;
    }
    h = smcuda_reg_alloc(m);
    if (NULL != h) {
        h->base = (uint64_t) (uintptr_t) base;
        h->len = size;
        h->flags = flags;
        h->rsvd = 0;
        if (SMCUDA_UNLIKELY(flags & OB1X_BTL_REG_FLAG_DEVICE) &&
            OPAL_SUCCESS != mca_btl_smcuda_cuda_register(m, ep, base, size, h)) {
            /* not exportable to that peer (now): the PML stages */
            smcuda_reg_release(m, h);
            return NULL;
        }
    }
    return h;
}

static int smcuda_deregister_mem(struct mca_btl_base_module_t *btl,
                                 mca_btl_base_registration_handle_t *handle)
{
    smcuda_reg_release((mca_btl_smcuda_module_t *) btl, handle);
    return OPAL_SUCCESS;
}

static int smcuda_register_error(struct mca_btl_base_module_t *btl,
                                 mca_btl_base_module_error_cb_fn_t cbfunc)
{
    ((mca_btl_smcuda_module_t *) btl)->error_cb = cbfunc;
    return OPAL_SUCCESS;
}

/* puts complete before they return; gets once every chunk of a shared get
 * has landed; atomics once the target replied */
static int smcuda_flush(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep)
{
    (void) ep;
    mca_btl_smcuda_jobs_flush((mca_btl_smcuda_module_t *) btl);
    mca_btl_smcuda_cuda_flush((mca_btl_smcuda_module_t *) btl);
    mca_btl_smcuda_atomic_flush((mca_btl_smcuda_module_t *) btl);
    return OPAL_SUCCESS;
}

int mca_btl_smcuda_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                             struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                             struct opal_bitmap_t *reachable)
{
    mca_btl_smcuda_module_t *m = (mca_btl_smcuda_module_t *) btl;
    opal_proc_t *self = opal_proc_local_get();

    mca_btl_smcuda_name_segment(m); /* before any peer of our job opens it */
    for (size_t i = 0; i < nprocs; ++i) {
        opal_proc_t *proc = procs[i];
        mca_btl_base_endpoint_t *ep = NULL;
        int rc;

        peers[i] = NULL;
        if (proc == self) {
            /* one-sided MPI needs us to reach ourselves (btl_smcuda_self.c) */
            if (NULL == (ep = mca_btl_smcuda_self_endpoint(m, proc))) {
                continue;
            }
        } else if (!OPAL_PROC_ON_LOCAL_NODE(proc->proc_flags)) {
            continue;
        } else {
            /* local ranks are per job: a process of another job is a guest */
            rc = proc->proc_name.jobid == self->proc_name.jobid
                     ? mca_btl_smcuda_endpoint_attach(m, proc, &ep)
                     : mca_btl_smcuda_guest_attach(m, proc, &ep);
            if (OPAL_SUCCESS != rc) {
                continue;
            }
        }
        peers[i] = ep;
        if (NULL != reachable) {
            rc = opal_bitmap_set_bit(reachable, (int) i);
            if (OPAL_SUCCESS != rc) {
                return rc;
            }
        }
    }
    return OPAL_SUCCESS;
}

/* Peers stay mapped until finalize: their fragments may still be in our
 * FIFO, and a later add_procs finds them again. */
int mca_btl_smcuda_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                             struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers)
{
    (void) btl;
    (void) nprocs;
    (void) procs;
    (void) peers;
    return OPAL_SUCCESS;
}

int mca_btl_smcuda_finalize(struct mca_btl_base_module_t *btl)
{
    mca_btl_smcuda_module_t *m = (mca_btl_smcuda_module_t *) btl;

    if (NULL == m->seg) {
        return OPAL_SUCCESS;
    }
    mca_btl_smcuda_hints_deregister(m);
    mca_btl_smcuda_cuda_fini(m); /* device copies, mappings of peers' memory */
    mca_btl_base_active_message_trigger[MCA_BTL_TAG_SMCUDA].cbfunc = NULL;
    mca_btl_base_active_message_trigger[MCA_BTL_TAG_SMCUDA].cbdata = NULL;
    for (int i = 0; i < m->n_local; ++i) {
        if (NULL != m->eps[i]) {
            mca_btl_smcuda_endpoint_detach(m->eps[i]);
            m->eps[i] = NULL;
        }
    }
    mca_btl_smcuda_guest_fini(m);
    if (NULL != m->self_ep) {
        OBJ_RELEASE(m->self_ep);
        m->self_ep = NULL;
    }
    free(m->guest_eps);
    m->guest_eps = NULL;
    free(m->eps);
    free(m->polled);
    m->eps = m->polled = NULL;
    m->n_polled = 0;
    while (m->reg_cached > 0) {
        free(m->reg_cache[--m->reg_cached]);
    }
    OBJ_DESTRUCT(&m->guest_lock);
    OBJ_DESTRUCT(&m->departed);
    OBJ_DESTRUCT(&m->pending_eps);
    OBJ_DESTRUCT(&m->done);
    OPAL_LIST_DESTRUCT(&m->amo_backlog);
    mca_btl_smcuda_frag_lists_fini(m);
    /* a name is normally already gone: the last peer to attach removed it */
    mca_btl_smcuda_unlink_segment(m);
    munmap(m->seg, m->seg_size);
    close(m->seg_fd);
    m->seg = NULL;
    return OPAL_SUCCESS;
}

void mca_btl_smcuda_module_set_ops(mca_btl_base_module_t *b)
{
    b->btl_component = &mca_btl_smcuda_component.super;
    b->btl_add_procs = mca_btl_smcuda_add_procs;
    b->btl_del_procs = mca_btl_smcuda_del_procs;
    b->btl_finalize = mca_btl_smcuda_finalize;
    b->btl_alloc = smcuda_alloc;
    b->btl_free = smcuda_free;
    b->btl_prepare_src = smcuda_prepare_src;
    b->btl_send = mca_btl_smcuda_send;
    b->btl_sendi = mca_btl_smcuda_sendi;
    b->btl_put = mca_btl_smcuda_put;
    b->btl_get = mca_btl_smcuda_get;
    b->btl_register_mem = smcuda_register_mem;
    b->btl_deregister_mem = smcuda_deregister_mem;
    b->btl_register_error = smcuda_register_error;
    b->btl_flush = smcuda_flush;
    b->btl_atomic_op = mca_btl_smcuda_atomic_op;
    b->btl_atomic_fop = mca_btl_smcuda_atomic_fop;
    b->btl_atomic_cswap = mca_btl_smcuda_atomic_cswap;
    b->btl_registration_handle_size = SMCUDA_HOST_HANDLE_SIZE;
}

int mca_btl_smcuda_module_init(mca_btl_smcuda_module_t *m)
{
    m->eps = calloc((size_t) m->n_eps, sizeof(*m->eps));
    m->polled = calloc((size_t) m->n_local, sizeof(*m->polled));
    /* +1: calloc(0) may return NULL */
    m->guest_eps = calloc((size_t) mca_btl_smcuda_component.max_guests + 1, sizeof(*m->guest_eps));
    if (NULL == m->eps || NULL == m->polled || NULL == m->guest_eps) {
        free(m->eps);
        free(m->polled);
        free(m->guest_eps);
        m->eps = m->polled = m->guest_eps = NULL;
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    m->n_guest_eps = 0;
    m->self_ep = NULL;
    OBJ_CONSTRUCT(&m->guest_lock, opal_mutex_t);
    OBJ_CONSTRUCT(&m->departed, opal_list_t);
    m->n_polled = 0;
    m->inflight = 0;
    m->in_progress = 0;
    m->error_cb = NULL;
    OBJ_CONSTRUCT(&m->pending_eps, opal_list_t);
    OBJ_CONSTRUCT(&m->done, opal_list_t);
    OBJ_CONSTRUCT(&m->amo_backlog, opal_list_t);
    m->amo_live = 0;
    m->accel_busy = 0;
    m->rx_bulk = 0;
    m->rx_recent = 0;
    m->ring_epoch = 0;
    OBJ_CONSTRUCT(&m->lock, opal_mutex_t);
    m->rdesc.des_segments = &m->rseg;
    m->rdesc.des_segment_count = 1;
    return OPAL_SUCCESS;
}

mca_btl_smcuda_module_t mca_btl_smcuda;

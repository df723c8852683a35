/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_rdma.c - btl_put / btl_get over the module's single-copy
 * mechanism (mca_btl_smcuda_copy_ops_t).
 *
 * put, and get below single_copy_split_min, complete before returning.
 * A larger get becomes a shared job (layout in btl_smcuda_shm.h): we post
 * it in our job table, ask the data owner through its ring to help, and
 * copy chunks ourselves; the data owner, when its progress sees the
 * request, copies chunks the other way.  Two cores move the message; if
 * the data owner is busy elsewhere we simply do every chunk.  The get
 * completes (from our progress) when every chunk is done.
 */
#include "btl_smcuda.h"
#include "btl_smcuda_split.h"

#include <string.h>

#include "common_ob1x_hints.h"

typedef struct {
    smcuda_rdma_done_t done;
    int status;
} smcuda_job_state_t;

static smcuda_job_state_t job_state[SMCUDA_COPY_JOBS];

int mca_btl_smcuda_put(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                       void *local_address, uint64_t remote_address,
                       struct mca_btl_base_registration_handle_t *local_handle,
                       struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                       int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc,
                       void *cbcontext, void *cbdata)
{
    mca_btl_smcuda_module_t *m = (mca_btl_smcuda_module_t *) btl;
    int rc;

    (void) remote_handle;
    (void) flags;
    (void) order;
    if (SMCUDA_UNLIKELY(NULL == ep || ep->self)) { /* ourselves (see amo_is_local) */
        memcpy((void *) (uintptr_t) remote_address, local_address, size);
        cbfunc(btl, ep, local_address, local_handle, cbcontext, cbdata, OPAL_SUCCESS);
        return OPAL_SUCCESS;
    }
    if (SMCUDA_UNLIKELY(!ep->copy_ok)) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    rc = m->copy->write(ep, local_address, remote_address, size);
    if (SMCUDA_UNLIKELY(OPAL_SUCCESS != rc)) {
        return rc;
    }
    SMCUDA_PV_ADD(PUT, size);
    cbfunc(btl, ep, local_address, local_handle, cbcontext, cbdata, OPAL_SUCCESS);
    return OPAL_SUCCESS;
}

/* Claims the next chunk of generation `gen`: its index, or -1 when none is
 * left or the slot has moved on to another generation. */
static inline int64_t job_claim(smcuda_copy_job_t *job, uint32_t gen)
{
    /* acquire: the job description of this generation is visible */
    uint64_t v = __atomic_load_n(&job->claim, __ATOMIC_ACQUIRE);

    for (;;) {
        if ((uint32_t) (v >> 32) != gen || (uint32_t) v >= job->nchunks) {
            return -1;
        }
        if (__atomic_compare_exchange_n(&job->claim, &v, v + 1, false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_ACQUIRE)) {
            return (int64_t) (uint32_t) v;
        }
    }
}

/* Copies chunk c: as the reader (pull from the data owner `ep`) or as the
 * helper (push into the reader `ep`). */
static inline int job_chunk(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep,
                            smcuda_copy_job_t *job, uint32_t c, bool reader)
{
    uint64_t off = (uint64_t) c * job->chunk;
    size_t n = (size_t) smcuda_split_len(job->len, job->chunk, job->nchunks, c);
    int rc;

    if (reader) {
        rc = m->copy->read(ep, (void *) (uintptr_t) (job->dst + off), job->src + off, n);
    } else {
        rc = m->copy->write(ep, (const void *) (uintptr_t) (job->src + off), job->dst + off, n);
    }
    if (OPAL_SUCCESS != rc) {
        __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
    }
    /* release: the copied bytes (or the failure flag) are in place before
     * the count says so */
    __atomic_add_fetch(&job->done, 1, __ATOMIC_RELEASE);
    return rc;
}

/* Completes the job in `slot`, all of whose chunks are done. */
static void job_finish(mca_btl_smcuda_module_t *m, int slot)
{
    smcuda_job_state_t st = job_state[slot];
    smcuda_copy_job_t *job = &m->jobs[slot];

    if (job->failed && OPAL_SUCCESS == st.status) {
        /* the helper could not copy its part: read the whole range
         * ourselves rather than hand back an error (osc/rdma does not look
         * at the status of a get) */
        st.status =
            m->copy->read(st.done.ep, (void *) (uintptr_t) job->dst, job->src, (size_t) job->len);
    }
    m->jobs_busy &= ~(1u << slot);
    smcuda_rdma_done(m, &st.done, st.status);
}

/* Completes shared jobs whose chunks are all done. */
int mca_btl_smcuda_jobs_progress(mca_btl_smcuda_module_t *m)
{
    int n = 0;

    for (int slot = 0; slot < SMCUDA_COPY_JOBS; ++slot) {
        smcuda_copy_job_t *job = &m->jobs[slot];
        /* acquire: pairs with the helper's release; its bytes are in place */
        if ((m->jobs_busy & (1u << slot)) &&
            __atomic_load_n(&job->done, __ATOMIC_ACQUIRE) == job->nchunks) {
            job_finish(m, slot);
            ++n;
        }
    }
    return n;
}

/* Waits until every shared job of ours is complete (its callback called).
 * A get returns once we have claimed every chunk, while the data owner may
 * still be copying the chunks it claimed; osc/rdma counts no get when the
 * BTL has btl_flush and takes flush's return as the completion of all of
 * them, so flush must wait for those chunks. Progress is not needed for
 * that (the data owner finishes a claimed chunk on its own), only to call
 * the callbacks, which is done here directly: flush may be called from
 * inside our progress. */
void mca_btl_smcuda_jobs_flush(mca_btl_smcuda_module_t *m)
{
    while (0 != m->jobs_busy) {
        (void) mca_btl_smcuda_jobs_progress(m);
    }
}

/* The data owner's side: a reader asks for help with a job. */
void mca_btl_smcuda_copy_req(mca_btl_smcuda_module_t *m, const void *msg, size_t len)
{
    smcuda_copy_req_t req;
    mca_btl_base_endpoint_t *ep;
    smcuda_copy_job_t *job;
    int64_t c;

    if (len < sizeof(req)) {
        return;
    }
    memcpy(&req, msg, sizeof(req));
    if (req.job >= SMCUDA_COPY_JOBS || NULL == (ep = smcuda_ep_by_id(m, (int) req.lrank)) ||
        !ep->copy_ok) {
        return;
    }
    job = (smcuda_copy_job_t *) (ep->seg + ((smcuda_seg_hdr_t *) ep->seg)->jobs_off) + req.job;
    while ((c = job_claim(job, req.gen)) >= 0) {
        smcuda_pv_add(SMCUDA_PV_GET_HELPED_BYTES,
                      smcuda_split_len(job->len, job->chunk, job->nchunks, (uint32_t) c));
        (void) job_chunk(m, ep, job, (uint32_t) c, false);
    }
}

/* Posts a shared job and works on it; false when no slot or ring room. */
static bool get_shared(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep, void *local,
                       uint64_t remote, size_t size, smcuda_job_state_t *st)
{
    smcuda_copy_req_t req;
    smcuda_copy_job_t *job;
    uint64_t chunk;
    uint32_t gen, nchunks;
    int slot, rc = OPAL_SUCCESS, mine = 0;
    int64_t c;
    bool done;

    if (0xffffu == (m->jobs_busy & 0xffffu)) {
        return false;
    }
    slot = __builtin_ctz(~m->jobs_busy);
    job = &m->jobs[slot];
    gen = ++m->job_gen[slot];
    chunk = smcuda_split_chunk(size);
    nchunks = (uint32_t) ((size + chunk - 1) / chunk);
    if (2 == nchunks) {
        chunk = smcuda_split_first(size, ep->split_lead);
    }
    job->src = remote;
    job->dst = (uint64_t) (uintptr_t) local;
    job->len = size;
    job->chunk = (uint32_t) chunk;
    job->nchunks = nchunks;
    job->done = 0;
    job->failed = 0;
    /* release: the description above is visible to whoever claims */
    __atomic_store_n(&job->claim, (uint64_t) gen << 32, __ATOMIC_RELEASE);

    req = (smcuda_copy_req_t){.kind = SMCUDA_CTL_COPY_REQ,
                              .lrank = (uint32_t) ep->ref_id,
                              .job = (uint32_t) slot,
                              .gen = gen};
    (void) mca_btl_smcuda_ring_send_ctl(ep, MCA_BTL_TAG_SMCUDA, &req, sizeof(req));

    m->jobs_busy |= 1u << slot;
    job_state[slot] = *st;
    while ((c = job_claim(job, gen)) >= 0) {
        int r = job_chunk(m, ep, job, (uint32_t) c, true);
        rc = OPAL_SUCCESS == rc ? r : rc;
        ++mine;
    }
    job_state[slot].status = rc;
    /* acquire: the helper's chunks are in place */
    done = __atomic_load_n(&job->done, __ATOMIC_ACQUIRE) == job->nchunks;
    if (2 == job->nchunks && 1 == mine) {
        /* the helper took the other chunk: was it in place first? (a job
         * we copied whole says nothing of the balance) */
        ep->split_lead = smcuda_split_learn(ep->split_lead, done);
    }
    if (done) {
        job_finish(m, slot);
    }
    /* after the completion: its clock read is no part of the get's time
     * (a figure of a run's pace, not of one get) */
    mca_btl_smcuda_path_get(m, size);
    return true;
}

int mca_btl_smcuda_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                       void *local_address, uint64_t remote_address,
                       struct mca_btl_base_registration_handle_t *local_handle,
                       struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                       int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc,
                       void *cbcontext, void *cbdata)
{
    mca_btl_smcuda_module_t *m = (mca_btl_smcuda_module_t *) btl;
    size_t split = mca_btl_smcuda_component.split_min_size;
    int rc;

    (void) remote_handle;
    (void) order;
    if (SMCUDA_UNLIKELY(NULL == ep || ep->self)) { /* ourselves (see amo_is_local) */
        memcpy(local_address, (const void *) (uintptr_t) remote_address, size);
        cbfunc(btl, ep, local_address, local_handle, cbcontext, cbdata, OPAL_SUCCESS);
        return OPAL_SUCCESS;
    }
    if (SMCUDA_UNLIKELY(!ep->copy_ok)) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    if (SMCUDA_UNLIKELY(NULL != remote_handle &&
                        (remote_handle->flags & OB1X_BTL_REG_FLAG_DEVICE))) {
        /* the peer's device memory: CUDA IPC, completed from our progress */
        smcuda_rdma_done_t d = {ep, local_address, local_handle, cbfunc, cbcontext, cbdata};
        return mca_btl_smcuda_cuda_get(m, &d, remote_address, remote_handle, size);
    }
    SMCUDA_PV_ADD(GET, size);
    m->rx_bulk++;
    if (split > 0 && size >= split && NULL != ep->out_ring && !opal_using_threads() &&
        !(flags & OB1X_BTL_GET_FLAG_SOLO)) {
        smcuda_job_state_t st = {{ep, local_address, local_handle, cbfunc, cbcontext, cbdata},
                                 OPAL_SUCCESS};
        if (get_shared(m, ep, local_address, remote_address, size, &st)) {
            return OPAL_SUCCESS;
        }
    }
    rc = m->copy->read(ep, local_address, remote_address, size);
    if (SMCUDA_UNLIKELY(OPAL_SUCCESS != rc)) {
        return rc;
    }
    cbfunc(btl, ep, local_address, local_handle, cbcontext, cbdata, OPAL_SUCCESS);
    mca_btl_smcuda_path_get(m, size);
    return OPAL_SUCCESS;
}

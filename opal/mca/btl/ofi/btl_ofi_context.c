/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_ofi_context.c - transmit/receive contexts and their CQs: a scalable
 * endpoint with num_contexts_per_module tx/rx pairs when the provider has
 * them, else one regular endpoint per context sharing the module's AV;
 * reading a context's CQ.
 */
#include "btl_ofi.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/output.h"

static void ctx_line(mca_btl_ofi_module_t *m, const char *call, int rc)
{
    opal_output_verbose(1, mca_btl_ofi_component.output,
                        "btl/ofi: provider %s on %s not used: %s failed: %s",
                        m->info->fabric_attr->prov_name, m->nic_name, call, fi_strerror(-rc));
}

static int open_cq(mca_btl_ofi_module_t *m, mca_btl_ofi_context_t *ctx)
{
    struct fi_cq_attr attr = {
        .format = FI_CQ_FORMAT_DATA,
        .wait_obj = FI_WAIT_NONE,
        .size = 0,
    };
    int rc = fi_cq_open(m->domain, &attr, &ctx->cq, NULL);

    if (0 != rc) {
        ctx_line(m, "fi_cq_open", rc);
        ctx->cq = NULL;
        return OPAL_ERROR;
    }
    return OPAL_SUCCESS;
}

static int open_av(mca_btl_ofi_module_t *m, int rx_ctx_bits)
{
    struct fi_av_attr attr = {
        .type = FI_AV_UNSPEC != m->info->domain_attr->av_type ? m->info->domain_attr->av_type
                                                              : FI_AV_MAP,
        .rx_ctx_bits = rx_ctx_bits,
        .count = 0,
    };
    int rc = fi_av_open(m->domain, &attr, &m->av, NULL);

    if (0 != rc) {
        ctx_line(m, "fi_av_open", rc);
        m->av = NULL;
        return OPAL_ERROR;
    }
    return OPAL_SUCCESS;
}

/* How many contexts, and whether on a scalable endpoint. */
static void plan_contexts(mca_btl_ofi_module_t *m)
{
    mca_btl_ofi_component_t *c = &mca_btl_ofi_component;
    const struct fi_domain_attr *d = m->info->domain_attr;
    int n = c->num_contexts_per_module;

    m->is_scalable_ep = n > 1 && !c->disable_sep && d->max_ep_tx_ctx > 1 && d->max_ep_rx_ctx > 1;
    if (m->is_scalable_ep) {
        if ((size_t) n > d->max_ep_tx_ctx) {
            n = (int) d->max_ep_tx_ctx;
        }
        if ((size_t) n > d->max_ep_rx_ctx) {
            n = (int) d->max_ep_rx_ctx;
        }
    }
    /* an MR bound to an endpoint (FI_MR_ENDPOINT) serves that endpoint
     * only: one regular endpoint then */
    if (m->mr_endpoint && !m->is_scalable_ep) {
        n = 1;
    }
    m->num_contexts = n;
    m->rx_ctx_bits = 0;
    if (m->is_scalable_ep) {
        while ((1 << m->rx_ctx_bits) < n) {
            ++m->rx_ctx_bits;
        }
    }
}

static int enable_pair(mca_btl_ofi_module_t *m, mca_btl_ofi_context_t *ctx)
{
    int rc = fi_ep_bind(ctx->tx, &ctx->cq->fid, FI_TRANSMIT);

    if (0 == rc) {
        rc = fi_ep_bind(ctx->rx, &ctx->cq->fid, FI_RECV);
    }
    if (0 == rc) {
        rc = fi_enable(ctx->tx);
    }
    if (0 == rc) {
        rc = fi_enable(ctx->rx);
    }
    if (0 != rc) {
        ctx_line(m, "binding a context", rc);
        return OPAL_ERROR;
    }
    return OPAL_SUCCESS;
}

static int open_sep_context(mca_btl_ofi_module_t *m, mca_btl_ofi_context_t *ctx)
{
    int rc = fi_tx_context(m->sep, ctx->index, NULL, &ctx->tx, NULL);

    if (0 != rc) {
        ctx_line(m, "fi_tx_context", rc);
        ctx->tx = NULL;
        return OPAL_ERROR;
    }
    rc = fi_rx_context(m->sep, ctx->index, NULL, &ctx->rx, NULL);
    if (0 != rc) {
        ctx_line(m, "fi_rx_context", rc);
        ctx->rx = NULL;
        return OPAL_ERROR;
    }
    return enable_pair(m, ctx);
}

static int open_regular_context(mca_btl_ofi_module_t *m, mca_btl_ofi_context_t *ctx)
{
    int rc = fi_endpoint(m->domain, m->info, &ctx->own_ep, NULL);

    if (0 != rc) {
        ctx_line(m, "fi_endpoint", rc);
        ctx->own_ep = NULL;
        return OPAL_ERROR;
    }
    rc = fi_ep_bind(ctx->own_ep, &m->av->fid, 0);
    if (0 == rc) {
        rc = fi_ep_bind(ctx->own_ep, &ctx->cq->fid, FI_TRANSMIT | FI_RECV);
    }
    if (0 == rc) {
        rc = fi_enable(ctx->own_ep);
    }
    if (0 != rc) {
        ctx_line(m, "enabling an endpoint", rc);
        return OPAL_ERROR;
    }
    ctx->tx = ctx->rx = ctx->own_ep;
    return OPAL_SUCCESS;
}

static int open_sep(mca_btl_ofi_module_t *m)
{
    int rc;

    m->info->ep_attr->tx_ctx_cnt = (size_t) m->num_contexts;
    m->info->ep_attr->rx_ctx_cnt = (size_t) m->num_contexts;
    rc = fi_scalable_ep(m->domain, m->info, &m->sep, NULL);
    if (0 != rc) {
        ctx_line(m, "fi_scalable_ep", rc);
        m->sep = NULL;
        return OPAL_ERROR;
    }
    rc = fi_scalable_ep_bind(m->sep, &m->av->fid, 0);
    if (0 != rc) {
        ctx_line(m, "fi_scalable_ep_bind", rc);
        return OPAL_ERROR;
    }
    return OPAL_SUCCESS;
}

static int open_contexts(mca_btl_ofi_module_t *m)
{
    for (int i = 0; i < m->num_contexts; ++i) {
        mca_btl_ofi_context_t *ctx = &m->contexts[i];
        int rc;

        ctx->index = i;
        ctx->module = m;
        OBJ_CONSTRUCT(&ctx->lock, opal_mutex_t);
        rc = open_cq(m, ctx);
        if (OPAL_SUCCESS == rc) {
            rc = m->is_scalable_ep ? open_sep_context(m, ctx) : open_regular_context(m, ctx);
        }
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    if (m->is_scalable_ep) {
        int rc = fi_enable(m->sep);
        if (0 != rc) {
            ctx_line(m, "fi_enable (scalable endpoint)", rc);
            return OPAL_ERROR;
        }
    }
    return OPAL_SUCCESS;
}

/* Our address as peers insert it: the scalable endpoint's, or context 0's
 * endpoint's (the others share its AV and reach peers from there). */
static int read_name(mca_btl_ofi_module_t *m)
{
    struct fid *fid = m->is_scalable_ep ? &m->sep->fid : &m->contexts[0].own_ep->fid;
    size_t len = sizeof(m->addr);
    int rc = fi_getname(fid, m->addr, &len);

    if (0 != rc) {
        ctx_line(m, "fi_getname", rc);
        return OPAL_ERROR;
    }
    m->addr_len = len;
    return OPAL_SUCCESS;
}

int mca_btl_ofi_contexts_init(mca_btl_ofi_module_t *m)
{
    int rc;

    plan_contexts(m);
    m->contexts = calloc((size_t) m->num_contexts, sizeof(*m->contexts));
    if (NULL == m->contexts) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    rc = open_av(m, m->rx_ctx_bits);
    if (OPAL_SUCCESS == rc && m->is_scalable_ep) {
        rc = open_sep(m);
    }
    if (OPAL_SUCCESS == rc) {
        rc = open_contexts(m);
    }
    if (OPAL_SUCCESS == rc) {
        rc = read_name(m);
    }
    if (OPAL_SUCCESS != rc) {
        mca_btl_ofi_contexts_fini(m);
    }
    return rc;
}

static void close_fid(struct fid *fid)
{
    if (NULL != fid) {
        (void) fi_close(fid);
    }
}

#define FID_OF(p) (NULL != (p) ? &(p)->fid : NULL)

/* Endpoints and contexts first (the provider stops delivering into our
 * CQs and memory), then the scalable endpoint, the CQs, the AV. */
void mca_btl_ofi_contexts_fini(mca_btl_ofi_module_t *m)
{
    if (NULL == m->contexts) {
        return;
    }
    for (int i = 0; i < m->num_contexts; ++i) {
        mca_btl_ofi_context_t *ctx = &m->contexts[i];
        if (m->is_scalable_ep) {
            close_fid(FID_OF(ctx->tx));
            close_fid(FID_OF(ctx->rx));
        } else {
            close_fid(FID_OF(ctx->own_ep));
        }
        ctx->tx = ctx->rx = ctx->own_ep = NULL;
    }
    close_fid(FID_OF(m->sep));
    m->sep = NULL;
    for (int i = 0; i < m->num_contexts; ++i) {
        close_fid(FID_OF(m->contexts[i].cq));
        if (NULL != m->contexts[i].module) {
            OBJ_DESTRUCT(&m->contexts[i].lock);
        }
    }
    close_fid(FID_OF(m->av));
    m->av = NULL;
    free(m->contexts);
    m->contexts = NULL;
}

/* ------------------------------------------------------------------ */
/* use                                                                 */
/* ------------------------------------------------------------------ */

/* Threads take contexts round robin, once each, for the life of the
 * thread: a thread keeps its CQ, so its completions stay in its cache. */
static __thread int my_slot = -1;
static int next_slot = 0;

mca_btl_ofi_context_t *mca_btl_ofi_context_get(mca_btl_ofi_module_t *m)
{
    if (OFI_LIKELY(1 == m->num_contexts)) {
        return &m->contexts[0];
    }
    if (OFI_UNLIKELY(my_slot < 0)) {
        my_slot = __atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED);
    }
    return &m->contexts[my_slot % m->num_contexts];
}

/* An error entry turned into an ordinary one for the op's done function. */
static void read_error(mca_btl_ofi_context_t *ctx, struct fi_cq_data_entry *entry)
{
    struct fi_cq_err_entry err;

    memset(&err, 0, sizeof(err));
    if (fi_cq_readerr(ctx->cq, &err, 0) <= 0) {
        entry->op_context = NULL;
        return;
    }
    entry->op_context = err.op_context;
    entry->flags = err.flags;
    entry->len = err.len;
    entry->buf = err.buf;
    entry->data = err.data;
    mca_btl_ofi_pv_add(ctx->module, OFI_PV_CQ_ERRORS, 1);
    opal_output_verbose(10, mca_btl_ofi_component.output,
                        "btl/ofi: completion error on %s: %s (provider: %s)", ctx->module->nic_name,
                        fi_strerror(err.err),
                        fi_cq_strerror(ctx->cq, err.prov_errno, err.err_data, NULL, 0));
}

/* Runs the done functions of n entries, outside the context's lock: they
 * may start new operations on it. */
static void run_done(mca_btl_ofi_context_t *ctx, struct fi_cq_data_entry *entries, int n,
                     int status)
{
    for (int i = 0; i < n; ++i) {
        mca_btl_ofi_op_t *op = MCA_BTL_OFI_OP_OF(entries[i].op_context);
        if (OFI_LIKELY(NULL != op)) {
            op->done(ctx, op, &entries[i], status);
        }
    }
}

int mca_btl_ofi_context_progress(mca_btl_ofi_context_t *ctx)
{
    int max = mca_btl_ofi_component.num_cq_read;
    struct fi_cq_data_entry entries[max > 0 ? max : 1];
    ssize_t n;

    if (mca_btl_ofi_component.mpi_threads) {
        if (0 != opal_mutex_trylock(&ctx->lock)) {
            return 0; /* another thread reads this CQ now */
        }
    }
    n = fi_cq_read(ctx->cq, entries, (size_t) max);
    if (OFI_UNLIKELY(-FI_EAVAIL == n)) {
        read_error(ctx, &entries[0]);
    }
    if (mca_btl_ofi_component.mpi_threads) {
        opal_mutex_unlock(&ctx->lock);
    }
    if (n > 0) {
        run_done(ctx, entries, (int) n, OPAL_SUCCESS);
        return (int) n;
    }
    if (-FI_EAVAIL == n) {
        run_done(ctx, entries, 1, OPAL_ERROR);
        return 1;
    }
    return 0;
}

int mca_btl_ofi_module_progress(mca_btl_ofi_module_t *m)
{
    int count = 0;

    for (int i = 0; i < m->num_contexts; ++i) {
        count += mca_btl_ofi_context_progress(&m->contexts[i]);
    }
    return count;
}

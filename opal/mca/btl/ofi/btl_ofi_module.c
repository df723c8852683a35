/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_ofi_module.c - a module's life: opening fabric and domain for one
 * NIC, the MR mode it implies, add/del procs, finalize in the order the
 * provider needs, and the module template.
 */
#include "btl_ofi.h"

#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_bitmap.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"

#include "common_ob1x_help.h"

static int ofi_add_procs(mca_btl_base_module_t *btl, size_t nprocs, struct opal_proc_t **procs,
                         mca_btl_base_endpoint_t **peers, opal_bitmap_t *reachable);
static int ofi_del_procs(mca_btl_base_module_t *btl, size_t nprocs, struct opal_proc_t **procs,
                         mca_btl_base_endpoint_t **peers);

mca_btl_ofi_module_t mca_btl_ofi_module_template = {
    .super =
        {
            .btl_component = &mca_btl_ofi_component.super,
            .btl_add_procs = ofi_add_procs,
            .btl_del_procs = ofi_del_procs,
            .btl_finalize = mca_btl_ofi_finalize,
            .btl_put = mca_btl_ofi_put,
            .btl_get = mca_btl_ofi_get,
            .btl_atomic_op = mca_btl_ofi_aop,
            .btl_atomic_fop = mca_btl_ofi_afop,
            .btl_atomic_cswap = mca_btl_ofi_acswap,
            .btl_register_mem = mca_btl_ofi_register_mem,
            .btl_deregister_mem = mca_btl_ofi_deregister_mem,
            .btl_flush = mca_btl_ofi_flush,
        },
};

/* ------------------------------------------------------------------ */
/* MR mode                                                             */
/* ------------------------------------------------------------------ */

/* Sets the module's MR flags from the provider's mode; the reason it
 * cannot be used, or NULL. */
static const char *apply_mr_mode(mca_btl_ofi_module_t *m)
{
    int mode = m->info->domain_attr->mr_mode;
    const int known =
        FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_LOCAL | FI_MR_ENDPOINT;
    int force = mca_btl_ofi_component.mr_force;
    const int hmem = 0 != (m->info->caps & FI_HMEM) ? FI_MR_HMEM : 0;

    /* the API 1.0 values: BASIC means exactly these three bits, SCALABLE
     * none of them (offset addressing, keys of our choosing) */
    if (FI_MR_BASIC == mode) {
        mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    } else if (FI_MR_SCALABLE == mode) {
        mode = 0;
    }
    if (0 != (mode & ~(known | hmem))) {
        return "it needs MR mode bits btl/ofi does not support (FI_MR_MMU_NOTIFY, "
               "FI_MR_RMA_EVENT, FI_MR_RAW or FI_MR_HMEM)";
    }
    m->use_virt_addr = 0 != (mode & FI_MR_VIRT_ADDR);
    m->use_prov_key = 0 != (mode & FI_MR_PROV_KEY);
    m->mr_local =
        0 != (mode & (FI_MR_LOCAL | FI_MR_HMEM)) || 0 != (force & MCA_BTL_OFI_MR_FORCE_LOCAL);
    m->mr_endpoint = 0 != (mode & FI_MR_ENDPOINT);
    m->mr_endpoint_forced = !m->mr_endpoint && 0 != (force & MCA_BTL_OFI_MR_FORCE_ENDPOINT);
    m->mr_endpoint |= m->mr_endpoint_forced;
    m->hmem = 0 != (m->info->caps & FI_HMEM);
    if (m->use_virt_addr && 0 != (force & MCA_BTL_OFI_MR_FORCE_OFFSET)) {
        return "it requires FI_MR_VIRT_ADDR and btl_ofi_mr_force asks for offset addressing";
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* open                                                                */
/* ------------------------------------------------------------------ */

static void skip_line(const struct fi_info *info, const char *why)
{
    opal_output_verbose(1, mca_btl_ofi_component.output, "btl/ofi: provider %s on %s not used: %s",
                        info->fabric_attr->prov_name, info->domain_attr->name, why);
}

/* The upper layer's view: which operations this module offers. */
static void set_module_ops(mca_btl_ofi_module_t *m)
{
    mca_btl_base_module_t *b = &m->super;
    uint32_t native = m->native_atomics ? mca_btl_ofi_atomic_query(m) : 0;

    if (!(m->info->caps & FI_RMA)) {
        b->btl_flags &= ~(MCA_BTL_FLAGS_PUT | MCA_BTL_FLAGS_GET);
        b->btl_put = NULL;
        b->btl_get = NULL;
    }
    if (0 != native) {
        b->btl_atomic_flags = native;
    } else if (m->two_sided && (m->info->caps & FI_RMA)) {
        /* carried as active messages, applied by the target's CPU */
        m->native_atomics = false;
        b->btl_atomic_op = mca_btl_ofi_am_aop;
        b->btl_atomic_fop = mca_btl_ofi_am_afop;
        b->btl_atomic_cswap = mca_btl_ofi_am_acswap;
    } else {
        m->native_atomics = false;
        b->btl_flags &= ~(MCA_BTL_FLAGS_ATOMIC_OPS | MCA_BTL_FLAGS_ATOMIC_FOPS);
        b->btl_atomic_flags = 0;
        b->btl_atomic_op = NULL;
        b->btl_atomic_fop = NULL;
        b->btl_atomic_cswap = NULL;
    }
    if (!m->two_sided) {
        b->btl_flags &= ~MCA_BTL_FLAGS_SEND;
    } else {
        b->btl_alloc = mca_btl_ofi_alloc;
        b->btl_free = mca_btl_ofi_free;
        b->btl_prepare_src = mca_btl_ofi_prepare_src;
        b->btl_send = mca_btl_ofi_send;
        b->btl_sendi = mca_btl_ofi_sendi;
    }
    if (NULL != b->btl_atomic_fop) {
        m->fop_carrier = b->btl_atomic_fop;
        b->btl_atomic_fop = mca_btl_ofi_afop_gate;
    }
    /* local operands must be registered: the upper layer does it for us
     * from the first byte when it can */
    if (m->mr_local) {
        b->btl_get_local_registration_threshold = 0;
        b->btl_put_local_registration_threshold = 0;
    }
}

static int open_domain(mca_btl_ofi_module_t *m)
{
    int rc = fi_fabric(m->info->fabric_attr, &m->fabric, NULL);

    if (0 != rc) {
        skip_line(m->info, fi_strerror(-rc));
        return OPAL_ERROR;
    }
    rc = fi_domain(m->fabric, m->info, &m->domain, NULL);
    if (0 != rc) {
        skip_line(m->info, fi_strerror(-rc));
        (void) fi_close(&m->fabric->fid);
        m->fabric = NULL;
        return OPAL_ERROR;
    }
    return OPAL_SUCCESS;
}

static void close_domain(mca_btl_ofi_module_t *m)
{
    if (NULL != m->domain) {
        (void) fi_close(&m->domain->fid);
        m->domain = NULL;
    }
    if (NULL != m->fabric) {
        (void) fi_close(&m->fabric->fid);
        m->fabric = NULL;
    }
}

static void module_construct(mca_btl_ofi_module_t *m, int index)
{
    memcpy(m, &mca_btl_ofi_module_template, sizeof(*m));
    m->module_index = index;
    m->pv = mca_btl_ofi_component.pv_module[index];
    OBJ_CONSTRUCT(&m->lock, opal_mutex_t);
    OBJ_CONSTRUCT(&m->endpoints, opal_list_t);
    OBJ_CONSTRUCT(&m->id_to_endpoint, opal_hash_table_t);
    (void) opal_hash_table_init(&m->id_to_endpoint, 512);
    OBJ_CONSTRUCT(&m->rdma_ops, opal_free_list_t);
    OBJ_CONSTRUCT(&m->frags_eager, opal_free_list_t);
    OBJ_CONSTRUCT(&m->frags_max, opal_free_list_t);
    OBJ_CONSTRUCT(&m->frags_user, opal_free_list_t);
}

static void module_destruct(mca_btl_ofi_module_t *m)
{
    OBJ_DESTRUCT(&m->frags_user);
    OBJ_DESTRUCT(&m->frags_max);
    OBJ_DESTRUCT(&m->frags_eager);
    OBJ_DESTRUCT(&m->id_to_endpoint);
    OBJ_DESTRUCT(&m->endpoints);
    OBJ_DESTRUCT(&m->lock);
    if (NULL != m->info) {
        fi_freeinfo(m->info);
    }
    free(m->nic_name);
    free(m);
}

/* Opens what the one-sided path needs; the reason on failure. */
static int open_resources(mca_btl_ofi_module_t *m)
{
    const char *why = apply_mr_mode(m);
    int rc;

    if (NULL != why) {
        skip_line(m->info, why);
        return OPAL_ERR_NOT_SUPPORTED;
    }
    rc = open_domain(m);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = mca_btl_ofi_contexts_init(m);
    if (OPAL_SUCCESS != rc) {
        close_domain(m);
        return rc;
    }
    rc = mca_btl_ofi_mr_init(m);
    if (OPAL_SUCCESS != rc) {
        skip_line(m->info, "could not set up memory registration");
        mca_btl_ofi_contexts_fini(m);
        close_domain(m);
    }
    return rc;
}

/* btl_ofi_progress_mode unspec leaves the provider its default, except
 * for sockets: its progress thread (auto progress, its default) stops
 * completing reads in a stress of osc/rdma atomics and reads with
 * libfabric 1.17, while manual progress, driven by our CQ reads, does not;
 * it also leaves no provider thread to race with finalize. */
static void choose_progress(struct fi_info *info)
{
    if (FI_PROGRESS_UNSPEC == mca_btl_ofi_component.progress_mode &&
        0 == strcmp(info->fabric_attr->prov_name, "sockets")) {
        info->domain_attr->control_progress = FI_PROGRESS_MANUAL;
        info->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    }
}

/* libfabric 1.17's ofi_rxd offers FI_ATOMIC, but the target of an
 * fi_atomic / fi_fetch_atomic on registered memory crashes in its CQ read
 * (address = the offset): its atomics are not used (active messages
 * instead, when the two-sided path is on). */
static bool atomics_broken(const struct fi_info *info)
{
    if (NULL != strstr(info->fabric_attr->prov_name, "ofi_rxd")) {
        skip_line(info, "native atomics (crash in libfabric 1.17's ofi_rxd; active messages "
                        "instead)");
        return true;
    }
    return false;
}

mca_btl_ofi_module_t *mca_btl_ofi_module_open(struct fi_info *info, int index)
{
    mca_btl_ofi_component_t *c = &mca_btl_ofi_component;
    mca_btl_ofi_module_t *m = malloc(sizeof(*m));

    if (NULL == m) {
        return NULL;
    }
    module_construct(m, index);
    m->info = fi_dupinfo(info);
    if (NULL != m->info) {
        choose_progress(m->info);
    }
    m->nic_name = strdup(info->domain_attr->name);
    m->native_atomics = 0 != (info->caps & FI_ATOMIC) && !atomics_broken(info);
    if (NULL == m->info || NULL == m->nic_name || OPAL_SUCCESS != open_resources(m)) {
        module_destruct(m);
        return NULL;
    }
    if (MCA_BTL_OFI_MODE_ONE_SIDED != c->mode && (info->caps & FI_MSG) &&
        OPAL_SUCCESS != mca_btl_ofi_twosided_init(m)) {
        skip_line(info, "the two-sided path could not be set up");
        m->two_sided = false;
    }
    set_module_ops(m);
    if (!(m->super.btl_flags & (MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_RDMA))) {
        /* btl_ofi_mode asked for what this build or provider lacks */
        skip_line(info, "it would offer neither send nor put/get (btl_ofi_mode)");
        (void) mca_btl_ofi_finalize(&m->super);
        return NULL;
    }
    c->eager_size = m->super.btl_eager_limit;
    opal_output_verbose(
        1, c->output,
        "btl/ofi: module %d: provider %s, domain %s, %d context(s)%s, MR:%s%s%s%s%s, "
        "atomics %s, two-sided %s",
        index, info->fabric_attr->prov_name, m->nic_name, m->num_contexts,
        m->is_scalable_ep ? " on a scalable endpoint" : "",
        m->use_virt_addr ? " virt_addr" : " offset", m->use_prov_key ? " prov_key" : " own keys",
        m->mr_local ? " local" : "", m->mr_endpoint ? " endpoint" : "", m->hmem ? " hmem" : "",
        m->native_atomics                 ? "native"
        : NULL != m->super.btl_atomic_fop ? "as active messages"
                                          : "none",
        m->two_sided ? "on" : "off");
    return m;
}

/* ------------------------------------------------------------------ */
/* procs                                                               */
/* ------------------------------------------------------------------ */

/* Whether the module's provider reaches this node only. Without the two
 * bits in the hints, libfabric (1.17) reports neither FI_LOCAL_COMM nor
 * FI_REMOTE_COMM for most providers (tcp;ofi_rxm, udp;ofi_rxd, shm), so
 * the absence of FI_REMOTE_COMM proves nothing: only FI_LOCAL_COMM alone,
 * or the shm provider, mean node-local. */
static bool node_local_only(const mca_btl_ofi_module_t *m)
{
    uint64_t comm = m->info->caps & (FI_LOCAL_COMM | FI_REMOTE_COMM);

    return FI_LOCAL_COMM == comm || 0 == strcmp(m->info->fabric_attr->prov_name, "shm");
}

/* The endpoint of `proc` on this module, created from its modex entry on
 * first use; NULL when the peer has no module of ours on this NIC. */
static mca_btl_ofi_endpoint_t *proc_endpoint(mca_btl_ofi_module_t *m, struct opal_proc_t *proc)
{
    mca_btl_ofi_endpoint_t *ep = mca_btl_ofi_endpoint_lookup(m, proc->proc_name);
    char addr[256];
    int rx_contexts = 0;
    size_t len;

    if (NULL != ep) {
        return ep;
    }
    /* a provider for this node only (shm) reaches no other node */
    if (node_local_only(m) && !OPAL_PROC_ON_LOCAL_NODE(proc->proc_flags)) {
        return NULL;
    }
    len = mca_btl_ofi_peer_address(m, proc, addr, &rx_contexts);
    if (0 == len) {
        return NULL;
    }
    ep = mca_btl_ofi_endpoint_create(m, proc, addr, len, rx_contexts);
    if (NULL != ep && !OPAL_PROC_ON_LOCAL_NODE(proc->proc_flags)) {
        __atomic_store_n(&m->remote_peers, true, __ATOMIC_RELAXED);
    }
    return ep;
}

static int ofi_add_procs(mca_btl_base_module_t *btl, size_t nprocs, struct opal_proc_t **procs,
                         mca_btl_base_endpoint_t **peers, opal_bitmap_t *reachable)
{
    mca_btl_ofi_module_t *m = (mca_btl_ofi_module_t *) btl;

    OPAL_THREAD_LOCK(&m->lock);
    for (size_t i = 0; i < nprocs; ++i) {
        peers[i] = proc_endpoint(m, procs[i]);
        if (NULL != peers[i] && NULL != reachable) {
            (void) opal_bitmap_set_bit(reachable, (int) i);
        }
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    return OPAL_SUCCESS;
}

static int ofi_del_procs(mca_btl_base_module_t *btl, size_t nprocs, struct opal_proc_t **procs,
                         mca_btl_base_endpoint_t **peers)
{
    mca_btl_ofi_module_t *m = (mca_btl_ofi_module_t *) btl;

    (void) procs;
    OPAL_THREAD_LOCK(&m->lock);
    for (size_t i = 0; i < nprocs; ++i) {
        if (NULL != peers[i]) {
            mca_btl_ofi_endpoint_destroy(m, peers[i]);
        }
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    return OPAL_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* finalize                                                            */
/* ------------------------------------------------------------------ */

static void destroy_endpoints(mca_btl_ofi_module_t *m)
{
    opal_list_item_t *item;

    while (NULL != (item = opal_list_get_first(&m->endpoints)) &&
           item != opal_list_get_end(&m->endpoints)) {
        mca_btl_ofi_endpoint_destroy(m, (mca_btl_ofi_endpoint_t *) item);
    }
}

/* Closes in the order libfabric needs, so that a provider's own progress
 * thread (sockets) never runs on something freed, with no sleep: the
 * two-sided buffers (their receives are cancelled by closing the
 * endpoints), the endpoints/contexts (the provider stops using our memory
 * and CQs there), the CQs and the AV, then the registrations (operation
 * lists, rcache), the domain (which joins the provider's thread) and the
 * fabric. */
int mca_btl_ofi_finalize(mca_btl_base_module_t *btl)
{
    mca_btl_ofi_module_t *m = (mca_btl_ofi_module_t *) btl;
    mca_btl_ofi_component_t *c = &mca_btl_ofi_component;

    if (m->finalized) {
        return OPAL_SUCCESS;
    }
    m->finalized = true;
    (void) mca_btl_ofi_flush(btl, NULL);
    if (m->two_sided) {
        mca_btl_ofi_twosided_fini(m);
    }
    destroy_endpoints(m);
    if (m->mr_endpoint) {
        opal_output_verbose(1, c->output,
                            "btl/ofi: module %d closing: %llu registrations bound to the endpoint",
                            m->module_index, (unsigned long long) m->pv[OFI_PV_MR_ENDPOINT_BINDS]);
        /* registrations bound to an endpoint go before it */
        mca_btl_ofi_mr_fini(m);
    }
    mca_btl_ofi_contexts_fini(m);
    if (!m->mr_endpoint) {
        mca_btl_ofi_mr_fini(m);
    }
    close_domain(m);
    for (int i = 0; i < c->num_modules; ++i) {
        if (c->modules[i] == m) {
            c->modules[i] = c->modules[--c->num_modules];
            break;
        }
    }
    module_destruct(m);
    return OPAL_SUCCESS;
}

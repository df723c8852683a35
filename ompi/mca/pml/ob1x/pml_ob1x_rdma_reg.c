/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Registration of user memory with the BTLs (pml_ob1x_rdma_reg.h), through
 * one grdma registration cache (Open MPI's rcache framework) per BTL module
 * that has btl_register_mem.
 *
 * grdma keeps the records: it looks a range up, calls back here to make a
 * registration with the BTL when none covers it with the access asked
 * (merging the access of the one it replaces), counts references, and keeps
 * unreferenced registrations on its LRU list when "leave pinned" is on. The
 * rcache base registers its memory-release callback with Open MPI's memory
 * hooks (memory/patcher intercepts munmap, mremap, madvise, brk, shmdt):
 * when the application frees memory, every cached registration in the range
 * is marked invalid and deregistered at the next registration on that cache,
 * so memory allocated again at the same address is registered anew.
 *
 * Whether a registration is kept after its message is decided per call:
 * only when mpi_leave_pinned (or mpi_leave_pinned_pipeline) is on and the
 * memory hooks are in place; otherwise the registration bypasses the cache
 * and is undone at release.
 *
 * A BTL whose registration pins nothing (OB1X_BTL_PROP_REG_FREE in the hints
 * registry: smcuda) is registered directly, without grdma, unless the user
 * set mpi_leave_pinned to 1: a cache lookup (lock, interval tree, LRU) costs
 * several times the registration it saves, and a handle that only names an
 * address range cannot go stale. Where its puts and gets of host memory
 * need no handle either (OB1X_BTL_PROP_HOST_FREE: smcuda's CMA), host
 * memory is not registered at all then (a 64 KiB ping-pong 1.5% faster
 * without the registration and its handle in the RGET); mpi_leave_pinned
 * 1 still registers and keeps, as the user asked.
 */
#include "ompi_config.h"

#include <stdio.h>
#include <string.h>

#include "opal/mca/base/base.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/btl/base/base.h"
#include "opal/mca/rcache/base/base.h"
#include "opal/memoryhooks/memory.h"
#include "opal/runtime/opal_params.h"
#include "opal/sys/atomic.h"

#include "pml_ob1x.h"
#include "pml_ob1x_pvars.h"
#include "pml_ob1x_rdma_reg.h"
#include "common_ob1x_hints.h"

/* One registration: grdma's record (first, grdma allocates sizeof_reg) and
 * the BTL's handle. */
struct ob1x_reg {
    mca_rcache_base_registration_t super;
    mca_btl_base_module_t *btl;
    mca_btl_base_registration_handle_t *handle;
    /* Set when the BTL registered it, cleared by the first acquire that
     * returns it: an acquire that finds it clear reused a cached one. */
    volatile int32_t fresh;
};

/* The cache of one BTL module. */
typedef struct ob1x_reg_cache {
    mca_btl_base_module_t *btl;
    mca_rcache_base_module_t *rcache; /* NULL: creation failed, every acquire is refused */
    bool keep;                        /* ob1x may keep this BTL's registrations (leave pinned) */
    bool direct;                      /* registered without the cache (free registration) */
    bool none;                        /* direct, and host memory needs no handle: none made */
    bool local_free;                  /* the local side of put/get needs no registration */
    char name[64];                    /* grdma's cache name, unique to the module */
} ob1x_reg_cache_t;

/* BTL modules of one process: a handful; more are refused (no RDMA). */
#define OB1X_REG_MAX_CACHES 16

static struct {
    opal_mutex_t lock; /* creation and teardown of caches */
    bool inited;
    bool leave_pinned_set; /* mpi_leave_pinned=1 given by the user */
    opal_free_list_t direct_regs; /* records of direct registrations */
    ob1x_reg_cache_t caches[OB1X_REG_MAX_CACHES];
    /* Entries [0, count) are complete: written before count is raised,
     * so acquire reads them without the lock. */
    volatile int32_t count;
} ob1x_reg_state = {.inited = false, .count = 0};

/* The endpoint and extra flags of the acquire in progress on this thread:
 * grdma calls register_mem from inside rcache_register with the cache's
 * data only. */
static _Thread_local struct {
    struct mca_btl_base_endpoint_t *ep;
    uint32_t extra_flags;
} reg_call;

/*
 * BTLs that keep no registration cache of their own, so that ob1x may keep
 * theirs. Open MPI's BTLs with btl_register_mem (openib, ofi, uct, ugni,
 * usnic, vader with knem) each cache inside with grdma and implement leave
 * pinned there. Caching above them would hold a reference on their record
 * after the message: when the application then frees the buffer, their
 * cache finds an in-use registration at the freed address and the rcache
 * base ends the process (_exit). Registrations on those BTLs bypass ob1x's
 * cache; ob1x's own BTLs register without pinning and leave caching to the
 * PML.
 */
static bool btl_has_no_cache(const mca_btl_base_module_t *btl)
{
    static const char *const uncached[] = {"smcuda"};
    const char *name = btl->btl_component->btl_version.mca_component_name;

    for (size_t i = 0; i < sizeof(uncached) / sizeof(uncached[0]); i++) {
        if (0 == strcmp(name, uncached[i])) {
            return true;
        }
    }
    return false;
}

bool ob1x_reg_leave_pinned(void)
{
    const int hooks = OPAL_MEMORY_FREE_SUPPORT | OPAL_MEMORY_MUNMAP_SUPPORT;

    /* -1 (auto) is resolved by the rcache base at the first cache created in
     * the process: on when the memory hooks work. The base registers its
     * release callback then, unless leave pinned was 0, which it stays (a
     * read-only variable). Never keep registrations without the hooks: a
     * freed and reallocated buffer would be served a stale one. */
    return (1 == opal_leave_pinned || opal_leave_pinned_pipeline) &&
           hooks == (hooks & opal_mem_hooks_support_level());
}

/* grdma's callback: register [base, base + size) (whole pages) with the
 * BTL for the access grdma computed (the caller's, merged with that of a
 * cached registration too narrow for it). */
static int reg_register_cb(void *reg_data, void *base, size_t size,
                           mca_rcache_base_registration_t *rreg)
{
    ob1x_reg_cache_t *c = (ob1x_reg_cache_t *) reg_data;
    ob1x_reg_t *reg = (ob1x_reg_t *) rreg;
    uint32_t flags = (uint32_t) rreg->access_flags | reg_call.extra_flags;

    reg->btl = c->btl;
    reg->handle = c->btl->btl_register_mem(c->btl, reg_call.ep, base, size, flags);
    if (NULL == reg->handle) {
        /* grdma then evicts an unused cached registration and retries,
         * until none is left: a BTL out of pinnable memory gets room. */
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    reg->fresh = 1;
    ob1x_count_event(OB1X_EV_REG_MADE);
    return OPAL_SUCCESS;
}

static int reg_deregister_cb(void *reg_data, mca_rcache_base_registration_t *rreg)
{
    ob1x_reg_cache_t *c = (ob1x_reg_cache_t *) reg_data;
    ob1x_reg_t *reg = (ob1x_reg_t *) rreg;
    int rc = c->btl->btl_deregister_mem(c->btl, reg->handle);

    reg->handle = NULL;
    return rc;
}

/* Called with the lock held, on an entry not yet published. */
static void reg_cache_create(ob1x_reg_cache_t *c, mca_btl_base_module_t *btl, int index)
{
    mca_rcache_base_resources_t res;

    c->btl = btl;
    c->keep = btl_has_no_cache(btl);
    c->direct = !ob1x_reg_state.leave_pinned_set &&
                0 != (ob1x_btl_props(btl) & OB1X_BTL_PROP_REG_FREE);
    c->local_free = 0 != (ob1x_btl_props(btl) & OB1X_BTL_PROP_LOCAL_FREE);
    c->none = c->direct && 0 != (ob1x_btl_props(btl) & OB1X_BTL_PROP_HOST_FREE);
    snprintf(c->name, sizeof(c->name), "pml_ob1x.%s.%d",
             btl->btl_component->btl_version.mca_component_name, index);
    memset(&res, 0, sizeof(res));
    res.cache_name = c->name;
    res.reg_data = c;
    res.sizeof_reg = sizeof(ob1x_reg_t);
    res.register_mem = reg_register_cb;
    res.deregister_mem = reg_deregister_cb;
    /* The first cache of the process also installs the memory hooks and
     * resolves mpi_leave_pinned=auto (on when the hooks work); with
     * leave_pinned=1 and no hooks it shows its help message and fails. */
    c->rcache = mca_rcache_base_module_create("grdma", c, &res);
    OB1X_VERBOSE(10, "registration cache %s: %s%s%s", c->name, c->rcache ? "created" : "FAILED",
                 c->keep ? "" : " (the BTL caches its own registrations)",
                 c->direct ? " (free registrations: made directly)" : "");
}

/* Called with the lock held. */
static ob1x_reg_cache_t *reg_cache_find(const mca_btl_base_module_t *btl, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        if (ob1x_reg_state.caches[i].btl == btl) {
            return &ob1x_reg_state.caches[i];
        }
    }
    return NULL;
}

static ob1x_reg_cache_t *reg_cache_add(mca_btl_base_module_t *btl)
{
    ob1x_reg_cache_t *c;
    int32_t n;

    OPAL_THREAD_LOCK(&ob1x_reg_state.lock);
    n = ob1x_reg_state.count;
    c = reg_cache_find(btl, n);
    if (NULL == c && n < OB1X_REG_MAX_CACHES) {
        c = &ob1x_reg_state.caches[n];
        reg_cache_create(c, btl, n);
        opal_atomic_wmb(); /* the entry before the count that publishes it */
        ob1x_reg_state.count = n + 1;
    }
    OPAL_THREAD_UNLOCK(&ob1x_reg_state.lock);
    return c;
}

static ob1x_reg_cache_t *reg_cache_get(mca_btl_base_module_t *btl)
{
    static int32_t last; /* a hint only: relaxed, checked before use */
    int32_t n = ob1x_reg_state.count;
    int32_t k = __atomic_load_n(&last, __ATOMIC_RELAXED);

    opal_atomic_rmb(); /* the count before the entries it covers */
    if (OPAL_LIKELY(k < n && ob1x_reg_state.caches[k].btl == btl)) {
        return &ob1x_reg_state.caches[k];
    }
    for (int32_t i = 0; i < n; i++) {
        if (ob1x_reg_state.caches[i].btl == btl) {
            __atomic_store_n(&last, i, __ATOMIC_RELAXED);
            return &ob1x_reg_state.caches[i];
        }
    }
    return reg_cache_add(btl);
}

/* Did the user set mpi_leave_pinned to 1 (rather than leave it "auto",
 * which the rcache base resolves to 1 when the memory hooks work)? */
static bool leave_pinned_given(void)
{
    mca_base_var_source_t source = MCA_BASE_VAR_SOURCE_DEFAULT;
    int idx = mca_base_var_find("opal", "mpi", NULL, "leave_pinned");

    if (idx < 0 || OPAL_SUCCESS != mca_base_var_get_value(idx, NULL, &source, NULL)) {
        return false;
    }
    return 1 == opal_leave_pinned && MCA_BASE_VAR_SOURCE_DEFAULT != source &&
           MCA_BASE_VAR_SOURCE_SET != source;
}

/* Open MPI opens the rcache framework in MPI_Init; ob1x holds its own
 * reference so that it stays open until ob1x_reg_fini. The caches of the
 * BTL modules that register memory are made now: the first one resolves
 * mpi_leave_pinned=auto, which the protocol selection reads per message. */
int ob1x_reg_init(void)
{
    mca_btl_base_selected_module_t *sm;
    int rc;

    if (ob1x_reg_state.inited) {
        return OMPI_SUCCESS;
    }
    rc = mca_base_framework_open(&opal_rcache_base_framework, 0);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    OBJ_CONSTRUCT(&ob1x_reg_state.lock, opal_mutex_t);
    OBJ_CONSTRUCT(&ob1x_reg_state.direct_regs, opal_free_list_t);
    rc = opal_free_list_init(&ob1x_reg_state.direct_regs, sizeof(ob1x_reg_t), 8,
                             OBJ_CLASS(mca_rcache_base_registration_t), 0, 0, 16, -1, 16, NULL,
                             0, NULL, NULL, NULL);
    if (OPAL_SUCCESS != rc) {
        OBJ_DESTRUCT(&ob1x_reg_state.direct_regs);
        OBJ_DESTRUCT(&ob1x_reg_state.lock);
        (void) mca_base_framework_close(&opal_rcache_base_framework);
        return rc;
    }
    ob1x_reg_state.leave_pinned_set = leave_pinned_given();
    ob1x_reg_state.inited = true;
    OPAL_LIST_FOREACH(sm, &mca_btl_base_modules_initialized, mca_btl_base_selected_module_t)
    {
        if (NULL != sm->btl_module->btl_register_mem) {
            (void) reg_cache_get(sm->btl_module);
        }
    }
    return OMPI_SUCCESS;
}

/* Deregisters every cached registration: must run before the BTLs are
 * finalized. Registrations still acquired belong to requests that never
 * completed; grdma leaves them to the BTL's own teardown. */
void ob1x_reg_fini(void)
{
    if (!ob1x_reg_state.inited) {
        return;
    }
    for (int32_t i = 0; i < ob1x_reg_state.count; i++) {
        ob1x_reg_cache_t *c = &ob1x_reg_state.caches[i];

        if (NULL != c->rcache) {
            (void) mca_rcache_base_module_destroy(c->rcache);
            c->rcache = NULL;
        }
        c->btl = NULL;
    }
    ob1x_reg_state.count = 0;
    OBJ_DESTRUCT(&ob1x_reg_state.direct_regs);
    OBJ_DESTRUCT(&ob1x_reg_state.lock);
    ob1x_reg_state.inited = false;
    (void) mca_base_framework_close(&opal_rcache_base_framework);
}

/* The local side of a put or get (no remote access asked for) on a BTL
 * that reads and writes it in place needs no registration. */
static inline bool local_needs_none(const ob1x_reg_cache_t *c, uint32_t access)
{
    return ob1x_reg_kind_needs_none(c->local_free ? OB1X_REG_KIND_LOCAL_FREE : 0u, access);
}

/* A direct registration, the handle only (ob1x_reg_acquire_bare; reg_direct
 * keeps it in a record). */
int ob1x_reg_bare(mca_bml_base_btl_t *bml_btl, void *base, size_t size, uint32_t access,
                  mca_btl_base_registration_handle_t **handle)
{
    mca_btl_base_module_t *btl = bml_btl->btl;

    *handle = btl->btl_register_mem(btl, bml_btl->btl_endpoint, base, size > 0 ? size : 1, access);
    if (OPAL_UNLIKELY(NULL == *handle)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    ob1x_count_event(OB1X_EV_REG_MADE);
    return OMPI_SUCCESS;
}

/* A registration of a BTL whose registration is free: made for this call
 * and undone at release, its record from our own free list. */
static int reg_direct(ob1x_reg_cache_t *c, mca_bml_base_btl_t *bml_btl, void *base, size_t size,
                      uint32_t access, ob1x_reg_t **reg, mca_btl_base_registration_handle_t **handle)
{
    ob1x_reg_t *r = (ob1x_reg_t *) opal_free_list_get(&ob1x_reg_state.direct_regs);

    if (OPAL_UNLIKELY(NULL == r)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    r->super.rcache = NULL; /* marks a direct registration for release */
    r->btl = c->btl;
    if (OPAL_UNLIKELY(OMPI_SUCCESS != ob1x_reg_bare(bml_btl, base, size, access, &r->handle))) {
        opal_free_list_return(&ob1x_reg_state.direct_regs, &r->super.super);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    *reg = r;
    *handle = r->handle;
    return OMPI_SUCCESS;
}

static int reg_acquire(mca_bml_base_btl_t *bml_btl, void *base, size_t size, uint32_t access,
                       ob1x_reg_t **reg, mca_btl_base_registration_handle_t **handle, bool *bare)
{
    mca_btl_base_module_t *btl = bml_btl->btl;
    const uint32_t rc_access = access & MCA_BTL_REG_FLAG_ACCESS_ANY;
    mca_rcache_base_registration_t *rreg;
    ob1x_reg_cache_t *c;
    bool keep;
    int rc;

    *reg = NULL;
    *handle = NULL;
    if (NULL == btl->btl_register_mem) {
        return OMPI_SUCCESS;
    }
    if (OPAL_UNLIKELY(!ob1x_reg_state.inited) && OMPI_SUCCESS != ob1x_reg_init()) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    c = reg_cache_get(btl);
    if (OPAL_UNLIKELY(NULL == c || NULL == c->rcache)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (local_needs_none(c, access) || (c->none && rc_access == access)) {
        return OMPI_SUCCESS;
    }
    if (c->direct) {
        if (NULL != bare) {
            *bare = true;
            return ob1x_reg_bare(bml_btl, base, size, access, handle);
        }
        return reg_direct(c, bml_btl, base, size, access, reg, handle);
    }
    /* Flags beyond the access bits (GPU memory) are the BTL's business:
     * grdma's page ranges and hooks are for host memory. */
    keep = c->keep && rc_access == access && ob1x_reg_leave_pinned();
    /* A kept registration serves every peer of the BTL. */
    reg_call.ep = keep ? MCA_BTL_ENDPOINT_ANY : bml_btl->btl_endpoint;
    reg_call.extra_flags = access & ~MCA_BTL_REG_FLAG_ACCESS_ANY;
    rc = c->rcache->rcache_register(c->rcache, base, size > 0 ? size : 1,
                                    keep ? 0 : MCA_RCACHE_FLAGS_CACHE_BYPASS, (int32_t) rc_access,
                                    &rreg);
    if (OPAL_UNLIKELY(OPAL_SUCCESS != rc)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    *reg = (ob1x_reg_t *) rreg;
    *handle = (*reg)->handle;
    if (0 == opal_atomic_swap_32(&(*reg)->fresh, 0)) {
        ob1x_count_event(OB1X_EV_REG_REUSED);
    }
    return OMPI_SUCCESS;
}

unsigned ob1x_reg_kind(mca_btl_base_module_t *btl)
{
    ob1x_reg_cache_t *c;

    if (NULL == btl->btl_register_mem) {
        return OB1X_REG_KIND_NONE;
    }
    if ((!ob1x_reg_state.inited && OMPI_SUCCESS != ob1x_reg_init()) ||
        NULL == (c = reg_cache_get(btl)) || NULL == c->rcache) {
        return 0; /* ob1x_reg_acquire refuses: as it says */
    }
    if (c->none) {
        return OB1X_REG_KIND_NONE;
    }
    return (c->direct ? OB1X_REG_KIND_DIRECT : 0u) |
           (c->local_free ? OB1X_REG_KIND_LOCAL_FREE : 0u);
}

int ob1x_reg_acquire(mca_bml_base_btl_t *bml_btl, void *base, size_t size, uint32_t access,
                     ob1x_reg_t **reg, mca_btl_base_registration_handle_t **handle)
{
    return reg_acquire(bml_btl, base, size, access, reg, handle, NULL);
}

int ob1x_reg_acquire_bare(mca_bml_base_btl_t *bml_btl, void *base, size_t size, uint32_t access,
                          ob1x_reg_t **reg, mca_btl_base_registration_handle_t **handle,
                          bool *bare)
{
    *bare = false;
    return reg_acquire(bml_btl, base, size, access, reg, handle, bare);
}

void ob1x_reg_release_bare(mca_btl_base_module_t *btl, mca_btl_base_registration_handle_t *handle)
{
    (void) btl->btl_deregister_mem(btl, handle);
}

void ob1x_reg_release(ob1x_reg_t *reg)
{
    if (NULL == reg) {
        return;
    }
    if (NULL == reg->super.rcache) {
        ob1x_reg_release_bare(reg->btl, reg->handle);
        reg->handle = NULL;
        opal_free_list_return(&ob1x_reg_state.direct_regs, &reg->super.super);
        return;
    }
    (void) reg->super.rcache->rcache_deregister(reg->super.rcache, &reg->super);
}

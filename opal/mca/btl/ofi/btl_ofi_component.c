/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_ofi_component.c - MCA parameters, performance variables, provider
 * choice (fi_getinfo, include/exclude lists), one module per NIC, the
 * address exchange and component progress.
 */
#include "btl_ofi.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/pmix/pmix.h"
#include "opal/runtime/opal_params.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"

#include "common_ob1x_help.h"
#include "common_ob1x_param.h"
#include "common_ob1x_pvar.h"

#include "ob1x_version.h"

static int ofi_register(void);
static int ofi_open(void);
static int ofi_close(void);
static mca_btl_base_module_t **ofi_init(int *num_btls, bool progress_threads, bool mpi_threads);
static int ofi_progress(void);

mca_btl_ofi_component_t mca_btl_ofi_component = {
    .super =
        {
            .btl_version =
                {
                    MCA_BTL_BASE_VERSION_3_1_0,
                    .mca_component_name = "ofi",
                    MCA_BASE_MAKE_VERSION(component, OB1X_MAJOR_VERSION, OB1X_MINOR_VERSION,
                                          OB1X_RELEASE_VERSION),
                    .mca_open_component = ofi_open,
                    .mca_close_component = ofi_close,
                    .mca_register_component_params = ofi_register,
                },
            .btl_data =
                {
                    .param_field = MCA_BASE_METADATA_PARAM_CHECKPOINT,
                },
            .btl_init = ofi_init,
            .btl_progress = ofi_progress,
        },
};

/* ------------------------------------------------------------------ */
/* parameters and counters                                             */
/* ------------------------------------------------------------------ */

#define COUNTER(which, name, description)                                                          \
    {                                                                                              \
        name, description, MCA_BASE_PVAR_CLASS_COUNTER,                                            \
            &mca_btl_ofi_component.pv_total[OFI_PV_##which]                                        \
    }

/* Sums over the modules (NICs) of this process, in the order of the enum. */
static const ob1x_pvar_t pvars[] = {
    COUNTER(PUT_OPS, "put_ops", "RDMA writes started (btl_put)"),
    COUNTER(PUT_BYTES, "put_bytes", "Bytes written by btl_put"),
    COUNTER(GET_OPS, "get_ops", "RDMA reads started (btl_get)"),
    COUNTER(GET_BYTES, "get_bytes", "Bytes read by btl_get"),
    COUNTER(ATOMIC_OPS, "atomic_ops",
            "Atomic operations (btl_atomic_op, fop, cswap) carried by the provider (FI_ATOMIC)"),
    COUNTER(AM_ATOMIC_OPS, "am_atomic_ops",
            "Atomic operations carried as active messages over the two-sided path and applied "
            "by the target's progress (providers without FI_ATOMIC)"),
    COUNTER(SEND_OPS, "send_ops", "Two-sided fragments sent (fi_send or fi_inject)"),
    COUNTER(SEND_BYTES, "send_bytes", "Bytes of two-sided fragments sent"),
    COUNTER(INJECT_OPS, "inject_ops", "Two-sided fragments sent by fi_inject (of send_ops)"),
    COUNTER(RECV_OPS, "recv_ops", "Two-sided fragments received and delivered"),
    COUNTER(RECV_BYTES, "recv_bytes", "Bytes of two-sided fragments delivered"),
    COUNTER(CQ_ERRORS, "cq_errors",
            "Operations that completed in error (entries read with fi_cq_readerr)"),
    COUNTER(EAGAIN_RETRIES, "eagain_retries",
            "libfabric calls answered -FI_EAGAIN and retried after progress"),
    COUNTER(MR_ENDPOINT_BINDS, "mr_endpoint_binds",
            "Registrations bound to the endpoint and enabled (FI_MR_ENDPOINT, or "
            "btl_ofi_mr_force endpoint)"),
    COUNTER(HMEM_REGS, "hmem_regs", "GPU buffers registered with FI_HMEM_CUDA"),
};
_Static_assert(sizeof(pvars) / sizeof(pvars[0]) == OFI_PV_COUNT, "one row per counter");

#define C(field) (&mca_btl_ofi_component.field)

static const mca_base_var_enum_value_t mr_force_names[] = {
    {0, "none"},
    {MCA_BTL_OFI_MR_FORCE_OFFSET, "offset"},
    {MCA_BTL_OFI_MR_FORCE_LOCAL, "local"},
    {MCA_BTL_OFI_MR_FORCE_OFFSET | MCA_BTL_OFI_MR_FORCE_LOCAL, "offset_local"},
    {MCA_BTL_OFI_MR_FORCE_ENDPOINT, "endpoint"},
    {MCA_BTL_OFI_MR_FORCE_OFFSET | MCA_BTL_OFI_MR_FORCE_ENDPOINT, "offset_endpoint"},
    {MCA_BTL_OFI_MR_FORCE_LOCAL | MCA_BTL_OFI_MR_FORCE_ENDPOINT, "local_endpoint"},
    {MCA_BTL_OFI_MR_FORCE_OFFSET | MCA_BTL_OFI_MR_FORCE_LOCAL | MCA_BTL_OFI_MR_FORCE_ENDPOINT,
     "offset_local_endpoint"},
    {0, NULL}};

static bool progress_mode_valid(void)
{
    const char *s = mca_btl_ofi_component.progress_mode_string;
    return NULL == s || 0 == strcasecmp(s, "unspec") || 0 == strcasecmp(s, "auto") ||
           0 == strcasecmp(s, "manual");
}

/* Providers that stock excludes by default (shm, sockets, tcp, udp) are
 * ours to use; these are not: rstream has no RDM endpoint, usnic is
 * Cisco's UD NIC (no RMA), net is libfabric 1.17's experimental tcp
 * rewrite (tcp;ofi_rxm is the tested one). */
#define OFI_DEFAULT_EXCLUDE "rstream,usnic,net"

static const ob1x_param_t params[] = {
    {.name = "mode",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = C(mode),
     .def = MCA_BTL_OFI_MODE_FULL_SUPPORT,
     .min = 0,
     .max = 2,
     .level = OPAL_INFO_LVL_5,
     .description = "What the BTL offers: 0 = one-sided only (put, get, atomics), 1 = two-sided "
                    "only (send), 2 = both (default; stock's is 0, with which ob1 cannot use it)"},
    {.name = "provider_include",
     .type = MCA_BASE_VAR_TYPE_STRING,
     .storage = C(provider_include),
     .def_string = "",
     .level = OPAL_INFO_LVL_1,
     .description = "Comma-separated libfabric providers considered, in fi_getinfo's order "
                    "(\"shm\", \"tcp;ofi_rxm\", \"sockets\"; an entry matches the whole name or "
                    "one of its ';' parts); empty: all. When left at its default, "
                    "opal_common_ofi_provider_include is used if the user set it"},
    {.name = "provider_exclude",
     .type = MCA_BASE_VAR_TYPE_STRING,
     .storage = C(provider_exclude),
     .def_string = OFI_DEFAULT_EXCLUDE,
     .level = OPAL_INFO_LVL_1,
     .description = "Comma-separated libfabric providers never used (same matching as "
                    "provider_include). When left at its default, "
                    "opal_common_ofi_provider_exclude is used if the user set it"},
    {.name = "num_cq_read",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = C(num_cq_read),
     .def = 64,
     .min = 1,
     .max = 4096,
     .level = OPAL_INFO_LVL_5,
     .description = "Completion entries read from one context's CQ per progress call"},
    {.name = "progress_mode",
     .type = MCA_BASE_VAR_TYPE_STRING,
     .storage = C(progress_mode_string),
     .def_string = "unspec",
     .valid = progress_mode_valid,
     .valid_text = "unspec, auto or manual",
     .level = OPAL_INFO_LVL_5,
     .description = "Provider progress mode asked for: unspec (the provider's choice), auto or "
                    "manual"},
    {.name = "num_contexts_per_module",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = C(num_contexts_per_module),
     .def = 1,
     .min = 1,
     .max = 1024,
     .level = OPAL_INFO_LVL_5,
     .description = "Transmit/receive contexts (each with its own CQ) per module; threads are "
                    "spread over them round robin. On a scalable endpoint when the provider "
                    "offers them, else one regular endpoint each; at most the number of cores "
                    "is advised"},
    {.name = "fetching_atomics",
     .type = MCA_BASE_VAR_TYPE_BOOL,
     .storage = C(fetching_atomics),
     .def = MCA_BTL_OFI_FETCHING_ATOMICS_DEFAULT,
     .level = OPAL_INFO_LVL_5,
     .description = "Fetching atomic operations (btl_atomic_fop) are carried out; false: they "
                    "are declined while every peer is on this node, and one-sided MPI does them "
                    "by get, operation and put under its own lock. Default false with Open MPI "
                    "older than 4.1.5, whose osc/rdma puts the results of MPI_Get_accumulate on "
                    "derived datatypes in the wrong place whenever a BTL carries them out. "
                    "Carried out whatever this says once a peer is on another node (osc/rdma's "
                    "locks need them); compare-and-swap is always carried out"},
    {.name = "disable_sep",
     .type = MCA_BASE_VAR_TYPE_BOOL,
     .storage = C(disable_sep),
     .def = false,
     .level = OPAL_INFO_LVL_5,
     .description = "Never use a scalable endpoint: every context is a regular endpoint"},
    {.name = "progress_threshold",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = C(progress_threshold),
     .def = 64,
     .min = 0,
     .max = OB1X_PARAM_NO_MAX,
     .level = OPAL_INFO_LVL_5,
     .description = "Operations in flight on a module above which starting another one first "
                    "reads the CQ (0: always)"},
    {.name = "rd_num",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = C(rd_num),
     .def = 10,
     .min = 1,
     .max = OB1X_PARAM_NO_MAX,
     .level = OPAL_INFO_LVL_5,
     .description = "Receive buffers posted per context (two-sided)"},
    {.name = "max_modules",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = C(max_modules),
     .def = MCA_BTL_OFI_MAX_MODULES,
     .min = 1,
     .max = MCA_BTL_OFI_MAX_MODULES,
     .level = OPAL_INFO_LVL_5,
     .description = "Most modules (one per NIC/domain of the chosen provider) opened"},
    {.name = "mr_force",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = C(mr_force),
     .def = 0,
     .enum_vals = mr_force_names,
     .level = OPAL_INFO_LVL_9,
     .description = "Testing only: use the registration paths a provider does not need: offset "
                    "(address remote memory by offset into its registration, as without "
                    "FI_MR_VIRT_ADDR; providers that require virtual addresses are then not "
                    "selected), local (register local operands, as with FI_MR_LOCAL), "
                    "endpoint (bind every registration to the endpoint, as with "
                    "FI_MR_ENDPOINT), the combinations offset_local, offset_endpoint, "
                    "local_endpoint, offset_local_endpoint, or none"},
    {.name = "verbose",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = C(verbose),
     .def = 0,
     .min = 0,
     .max = 100,
     .level = OPAL_INFO_LVL_3,
     .description = "Verbosity of btl/ofi diagnostics (1: why a provider or NIC was not used, "
                    "the modules opened)"},
};

#define N_PARAMS (sizeof(params) / sizeof(params[0]))

static void set_module_defaults(mca_btl_base_module_t *b)
{
    /* stock's rank: below the shared-memory BTLs, above tcp */
    b->btl_exclusivity = MCA_BTL_EXCLUSIVITY_HIGH - 50;
    b->btl_eager_limit = 16 * 1024;
    b->btl_rndv_eager_limit = 16 * 1024;
    b->btl_max_send_size = 64 * 1024;
    b->btl_rdma_pipeline_send_length = 64 * 1024;
    b->btl_rdma_pipeline_frag_size = 4 * 1024 * 1024;
    b->btl_min_rdma_pipeline_size = 64 * 1024;
    b->btl_latency = 10;
    b->btl_bandwidth = 10000;
    b->btl_flags = MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_PUT | MCA_BTL_FLAGS_GET |
                   MCA_BTL_FLAGS_ATOMIC_OPS | MCA_BTL_FLAGS_ATOMIC_FOPS;
    b->btl_atomic_flags = MCA_BTL_ATOMIC_SUPPORTS_ADD | MCA_BTL_ATOMIC_SUPPORTS_AND |
                          MCA_BTL_ATOMIC_SUPPORTS_OR | MCA_BTL_ATOMIC_SUPPORTS_XOR |
                          MCA_BTL_ATOMIC_SUPPORTS_SWAP | MCA_BTL_ATOMIC_SUPPORTS_MIN |
                          MCA_BTL_ATOMIC_SUPPORTS_MAX | MCA_BTL_ATOMIC_SUPPORTS_CSWAP;
    b->btl_get_limit = 1ul << 30;
    b->btl_put_limit = 1ul << 30;
    b->btl_get_alignment = 0;
    b->btl_put_alignment = 0;
    b->btl_registration_handle_size = sizeof(mca_btl_base_registration_handle_t);
}

static int ofi_register(void)
{
    mca_btl_ofi_component_t *c = &mca_btl_ofi_component;
    const mca_base_component_t *v = &c->super.btl_version;
    int rc;

    ob1x_help_dirs_add(OB1X_HELP_SRCDIR);
    rc = ob1x_params_register(v, params, N_PARAMS, MCA_BASE_VAR_SCOPE_LOCAL);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    (void) ob1x_pvars_register(v, pvars, OFI_PV_COUNT);
    set_module_defaults(&mca_btl_ofi_module_template.super);
    return mca_btl_base_param_register(&c->super.btl_version, &mca_btl_ofi_module_template.super);
}

static int ofi_open(void)
{
    mca_btl_ofi_component_t *c = &mca_btl_ofi_component;

    c->num_modules = 0;
    c->output = opal_output_open(NULL);
    opal_output_set_verbosity(c->output, c->verbose);
    return OPAL_SUCCESS;
}

static int ofi_close(void)
{
    mca_btl_ofi_component_t *c = &mca_btl_ofi_component;

    /* an MPI_Init that failed after our init may close the framework
     * without finalizing the modules */
    while (c->num_modules > 0) {
        /* removes itself from modules[] */
        (void) mca_btl_ofi_finalize(&c->modules[c->num_modules - 1]->super);
    }
    mca_btl_ofi_hmem_fini();
    if (c->output > 0) {
        opal_output_close(c->output);
        c->output = -1;
    }
    return OPAL_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* provider lists                                                      */
/* ------------------------------------------------------------------ */

/* Whether `entry` (len bytes) names provider `prov` ("tcp;ofi_rxm"): the
 * whole name or one of its ';'-separated parts, any case. */
static bool entry_matches(const char *entry, size_t len, const char *prov)
{
    const char *p = prov;

    if (strlen(prov) == len && 0 == strncasecmp(entry, prov, len)) {
        return true;
    }
    while (NULL != p && '\0' != *p) {
        const char *end = strchr(p, ';');
        size_t plen = NULL != end ? (size_t) (end - p) : strlen(p);
        if (plen == len && 0 == strncasecmp(entry, p, len)) {
            return true;
        }
        p = NULL != end ? end + 1 : NULL;
    }
    return false;
}

/* Whether the comma-separated `list` names `prov`. */
static bool list_has(const char *list, const char *prov)
{
    const char *p = list;

    while (NULL != p && '\0' != *p) {
        const char *end = strchr(p, ',');
        size_t len = NULL != end ? (size_t) (end - p) : strlen(p);
        while (len > 0 && ' ' == *p) {
            ++p, --len;
        }
        if (len > 0 && entry_matches(p, len, prov)) {
            return true;
        }
        p = NULL != end ? end + 1 : NULL;
    }
    return false;
}

/* The value of Open MPI's opal_common_ofi_provider_<what> when the user
 * set it: registered (by mtl/ofi's common code) with a non-default source,
 * or, when nothing registered it in this process, from the environment,
 * which is where mpirun's --mca options arrive. NULL when not set. */
static const char *common_ofi_list(const char *what)
{
    const char **value = NULL;
    mca_base_var_source_t source;
    char env[64];
    int idx = mca_base_var_find("opal", "common", "ofi", what);

    if (idx >= 0) {
        if (OPAL_SUCCESS == mca_base_var_get_value(idx, &value, &source, NULL) &&
            MCA_BASE_VAR_SOURCE_DEFAULT != source && NULL != value) {
            return *value;
        }
        return NULL;
    }
    snprintf(env, sizeof(env), "OMPI_MCA_opal_common_ofi_%s", what);
    return getenv(env);
}

/* Whether our own btl_ofi_<what> was set by the user. */
static bool own_list_set(const char *what)
{
    mca_base_var_source_t source;
    int idx = mca_base_var_find("opal", "btl", "ofi", what);

    return idx >= 0 && OPAL_SUCCESS == mca_base_var_get_value(idx, NULL, &source, NULL) &&
           MCA_BASE_VAR_SOURCE_DEFAULT != source;
}

/* The include or exclude list in force: ours when set, else the common
 * one when set, else ours (its default). */
static const char *effective_list(const char *what, const char *own)
{
    const char *common = own_list_set(what) ? NULL : common_ofi_list(what);
    return NULL != common ? common : own;
}

static bool provider_allowed(const char *prov, const char *include, const char *exclude)
{
    if (NULL != include && '\0' != include[0] && !list_has(include, prov)) {
        return false;
    }
    return NULL == exclude || !list_has(exclude, prov);
}

/* ------------------------------------------------------------------ */
/* fi_getinfo                                                          */
/* ------------------------------------------------------------------ */

/* MR mode bits we can work with (docs/ofi.md). */
static int supported_mr_mode(void)
{
    int bits = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_LOCAL | FI_MR_ENDPOINT;

    if (mca_btl_ofi_component.mr_force & MCA_BTL_OFI_MR_FORCE_OFFSET) {
        bits &= ~FI_MR_VIRT_ADDR;
    }
    /* device buffers as local operands are registered like host ones
     * (the FI_MR_LOCAL path) */
    if (mca_btl_ofi_cuda_present()) {
        bits |= FI_MR_HMEM;
    }
    return bits;
}

static struct fi_info *make_hints(bool atomics, bool hmem)
{
    mca_btl_ofi_component_t *c = &mca_btl_ofi_component;
    struct fi_info *hints = fi_allocinfo();

    if (NULL == hints) {
        return NULL;
    }
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = 0;
    if (MCA_BTL_OFI_MODE_TWO_SIDED != c->mode) {
        hints->caps |= FI_RMA | (atomics ? FI_ATOMIC : 0);
    }
    if (MCA_BTL_OFI_MODE_ONE_SIDED != c->mode) {
        hints->caps |= FI_MSG;
    }
    /* every operation carries an mca_btl_ofi_op_t, whose first member is a
     * struct fi_context2 */
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->addr_format = FI_FORMAT_UNSPEC;
    /* a local completion of a write or an atomic must mean the data is at
     * the target: osc/rdma's flush relies on it */
    hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    hints->domain_attr->mr_mode = supported_mr_mode();
    hints->domain_attr->threading = c->mpi_threads ? FI_THREAD_SAFE : FI_THREAD_DOMAIN;
    hints->domain_attr->control_progress = c->progress_mode;
    hints->domain_attr->data_progress = c->progress_mode;
    /* GPU buffers by RDMA only where CUDA is present at run time: asking
     * always, as stock does, makes libfabric 1.17 offer no provider at all
     * on a machine without it (btl_ofi_hmem.c) */
    if (hmem) {
        hints->caps |= FI_HMEM;
    }
    return hints;
}

static struct fi_info *getinfo_hmem(bool atomics, bool hmem)
{
    struct fi_info *hints = make_hints(atomics, hmem), *list = NULL;
    int rc;

    if (NULL == hints) {
        return NULL;
    }
    rc = fi_getinfo(hmem ? MCA_BTL_OFI_FI_HMEM_VERSION : MCA_BTL_OFI_FI_VERSION, NULL, NULL, 0,
                    hints, &list);
    fi_freeinfo(hints);
    if (0 != rc) {
        if (atomics) {
            opal_output_verbose(1, mca_btl_ofi_component.output,
                                "btl/ofi: fi_getinfo (with FI_ATOMIC): %s", fi_strerror(-rc));
        }
        return NULL;
    }
    return list;
}

/* With CUDA present, the providers that offer FI_HMEM first; where none
 * does, the others (GPU buffers then do not move by RDMA through us). */
static struct fi_info *getinfo(bool atomics)
{
    struct fi_info *list = NULL;

    if (mca_btl_ofi_cuda_present()) {
        list = getinfo_hmem(atomics, true);
        if (NULL == list) {
            opal_output_verbose(1, mca_btl_ofi_component.output,
                                "btl/ofi: no provider offers FI_HMEM%s: GPU buffers are not "
                                "registered",
                                atomics ? " with FI_ATOMIC" : "");
        }
    }
    return NULL != list ? list : getinfo_hmem(atomics, false);
}

static bool same_nic(const struct fi_info *a, const struct fi_info *b)
{
    return 0 == strcmp(a->fabric_attr->prov_name, b->fabric_attr->prov_name) &&
           0 == strcmp(a->fabric_attr->name, b->fabric_attr->name) &&
           0 == strcmp(a->domain_attr->name, b->domain_attr->name);
}

/* The entry of `with_atomics` for the same provider, fabric and domain as
 * `info`: the one to open when there is one (native atomics). */
static struct fi_info *atomic_twin(struct fi_info *info, struct fi_info *with_atomics)
{
    for (struct fi_info *i = with_atomics; NULL != i; i = i->next) {
        if (same_nic(info, i)) {
            return i;
        }
    }
    return info;
}

static bool is_loopback(const struct fi_info *info)
{
    return 0 == strcmp(info->domain_attr->name, "lo");
}

/* Whether `chosen` already has a module on info's domain. */
static bool domain_taken(struct fi_info **chosen, int n, const struct fi_info *info)
{
    for (int i = 0; i < n; ++i) {
        if (0 == strcmp(chosen[i]->domain_attr->name, info->domain_attr->name)) {
            return true;
        }
    }
    return false;
}

/* Whether an entry before `info` in `list` has the same provider. */
static bool seen_before(const struct fi_info *list, const struct fi_info *info)
{
    for (const struct fi_info *i = list; i != info; i = i->next) {
        if (0 == strcmp(i->fabric_attr->prov_name, info->fabric_attr->prov_name)) {
            return true;
        }
    }
    return false;
}

/* Says (verbose) which providers fi_getinfo left out because of MR mode
 * bits we do not support: asked again with every bit, a provider that
 * shows up only then needs one of them. */
static void report_mr_refusals(const struct fi_info *ours)
{
    struct fi_info *hints = make_hints(false, false), *all = NULL;

    if (NULL == hints) {
        return;
    }
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_RAW | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
                                  FI_MR_PROV_KEY | FI_MR_MMU_NOTIFY | FI_MR_RMA_EVENT |
                                  FI_MR_ENDPOINT;
    if (0 == fi_getinfo(MCA_BTL_OFI_FI_VERSION, NULL, NULL, 0, hints, &all)) {
        for (struct fi_info *i = all; NULL != i; i = i->next) {
            bool listed = false;
            for (const struct fi_info *j = ours; NULL != j && !listed; j = j->next) {
                listed = 0 == strcmp(i->fabric_attr->prov_name, j->fabric_attr->prov_name);
            }
            if (!listed && !seen_before(all, i)) {
                opal_output_verbose(1, mca_btl_ofi_component.output,
                                    "btl/ofi: provider %s not used: it requires MR mode 0x%x, "
                                    "btl/ofi works with 0x%x (docs/ofi.md)",
                                    i->fabric_attr->prov_name, i->domain_attr->mr_mode,
                                    supported_mr_mode());
            }
        }
        fi_freeinfo(all);
    }
    fi_freeinfo(hints);
}

/* Picks, from fi_getinfo's list in its order, the first provider the
 * lists allow, then one entry per distinct domain (NIC) of that provider:
 * several NICs make several modules that the BML stripes over. The
 * loopback interface is left out when the provider has another: its
 * address means "this host" to every peer. Returns the count. */
static int choose(struct fi_info *list, struct fi_info *with_atomics, struct fi_info **chosen,
                  int max)
{
    mca_btl_ofi_component_t *c = &mca_btl_ofi_component;
    const char *include = effective_list("provider_include", c->provider_include);
    const char *exclude = effective_list("provider_exclude", c->provider_exclude);
    const char *prov = NULL;
    int n = 0;

    for (struct fi_info *i = list; NULL != i; i = i->next) {
        const char *name = i->fabric_attr->prov_name;
        if (NULL == prov && !provider_allowed(name, include, exclude)) {
            if (!seen_before(list, i)) {
                opal_output_verbose(1, c->output,
                                    "btl/ofi: provider %s not used (btl_ofi_provider_include "
                                    "\"%s\", btl_ofi_provider_exclude \"%s\")",
                                    name, include, exclude);
            }
            continue;
        }
        if (NULL == prov) {
            prov = name;
        }
        if (0 != strcmp(prov, name) || n >= max || domain_taken(chosen, n, i)) {
            continue;
        }
        chosen[n++] = atomic_twin(i, with_atomics);
    }
    if (n > 1) {
        int k = 0;
        for (int j = 0; j < n; ++j) {
            if (!is_loopback(chosen[j])) {
                chosen[k++] = chosen[j];
            }
        }
        n = k > 0 ? k : n;
    }
    return n;
}

/* ------------------------------------------------------------------ */
/* init                                                                */
/* ------------------------------------------------------------------ */

/* Our modules' endpoint names, as peers find them in the modex. */
typedef struct ofi_modex_entry {
    uint32_t len;
    uint32_t rx_contexts; /* of a scalable endpoint; 0: a regular endpoint */
    char prov[24];
    char addr[256];
} ofi_modex_entry_t;

static int publish_addresses(void)
{
    mca_btl_ofi_component_t *c = &mca_btl_ofi_component;
    ofi_modex_entry_t entries[MCA_BTL_OFI_MAX_MODULES];
    int rc;

    memset(entries, 0, sizeof(entries));
    for (int i = 0; i < c->num_modules; ++i) {
        mca_btl_ofi_module_t *m = c->modules[i];
        entries[i].len = (uint32_t) m->addr_len;
        entries[i].rx_contexts = m->is_scalable_ep ? (uint32_t) m->num_contexts : 0;
        snprintf(entries[i].prov, sizeof(entries[i].prov), "%s", m->info->fabric_attr->prov_name);
        memcpy(entries[i].addr, m->addr, m->addr_len);
    }
    OPAL_MODEX_SEND(rc, OPAL_PMIX_GLOBAL, &c->super.btl_version, entries,
                    (size_t) c->num_modules * sizeof(entries[0]));
    return rc;
}

/* Copies into buf (256 bytes) the endpoint name that the peer's module of
 * the same index as m published, when it runs the same provider, and the
 * receive contexts of its scalable endpoint; the name's length, or 0. */
size_t mca_btl_ofi_peer_address(mca_btl_ofi_module_t *m, struct opal_proc_t *proc, void *buf,
                                int *rx_contexts)
{
    ofi_modex_entry_t *entries = NULL, *e;
    size_t size = 0, len = 0;
    int rc;

    OPAL_MODEX_RECV(rc, &mca_btl_ofi_component.super.btl_version, &proc->proc_name,
                    (void **) &entries, &size);
    if (OPAL_SUCCESS != rc || NULL == entries) {
        return 0;
    }
    e = &entries[m->module_index];
    if (size >= (size_t) (m->module_index + 1) * sizeof(*entries) &&
        0 == strncmp(e->prov, m->info->fabric_attr->prov_name, sizeof(e->prov) - 1) &&
        e->len <= sizeof(e->addr)) {
        len = e->len;
        memcpy(buf, e->addr, len);
        *rx_contexts = (int) e->rx_contexts;
    }
    free(entries);
    return len;
}

/* A user who named providers and got none of them is told why, once per
 * node; without a list, finding no usable provider is not news. */
static void report_nothing_usable(const struct fi_info *list)
{
    const char *include =
        effective_list("provider_include", mca_btl_ofi_component.provider_include);
    char refused[256] = "";
    size_t used = 0;

    if (NULL == include || '\0' == include[0] || 0 != opal_process_info.my_local_rank) {
        return;
    }
    for (const struct fi_info *i = list; NULL != i && used < sizeof(refused) - 1; i = i->next) {
        if (!seen_before(list, i) && list_has(include, i->fabric_attr->prov_name)) {
            used += (size_t) snprintf(refused + used, sizeof(refused) - used, "%s%s",
                                      0 == used ? "" : ", ", i->fabric_attr->prov_name);
        }
    }
    ob1x_show_help_now("help-btl-ofi.txt", "no-usable-provider", ob1x_host(), include,
                       0 == used ? "(none of them offered by libfabric here)" : refused);
}

static enum fi_progress parse_progress_mode(const char *s)
{
    if (NULL != s && 0 == strcasecmp(s, "auto")) {
        return FI_PROGRESS_AUTO;
    }
    if (NULL != s && 0 == strcasecmp(s, "manual")) {
        return FI_PROGRESS_MANUAL;
    }
    return FI_PROGRESS_UNSPEC;
}

/* btl_ofi_<counter>_m<K> for every module K opened: registered once they
 * exist (what K is depends on the NICs), as pml/ob1x does for its
 * per-BTL counters. */
static void register_module_pvars(void)
{
    static int registered;
    mca_btl_ofi_component_t *c = &mca_btl_ofi_component;

    for (; registered < c->num_modules; ++registered) {
        const mca_btl_ofi_module_t *m = c->modules[registered];
        for (int i = 0; i < OFI_PV_COUNT; ++i) {
            char name[64], desc[320];
            ob1x_pvar_t pv = {name, desc, MCA_BASE_PVAR_CLASS_COUNTER,
                              &c->pv_module[m->module_index][i]};
            snprintf(name, sizeof(name), "%s_m%d", pvars[i].name, m->module_index);
            snprintf(desc, sizeof(desc), "%s; module %d (provider %s, domain %s)",
                     pvars[i].description, m->module_index, m->info->fabric_attr->prov_name,
                     m->nic_name);
            (void) ob1x_pvar_register(&c->super.btl_version, &pv);
        }
    }
}

static mca_btl_base_module_t **open_modules(struct fi_info **chosen, int n, int *num_btls)
{
    mca_btl_ofi_component_t *c = &mca_btl_ofi_component;
    mca_btl_base_module_t **btls;

    for (int i = 0; i < n; ++i) {
        mca_btl_ofi_module_t *m = mca_btl_ofi_module_open(chosen[i], c->num_modules);
        if (NULL != m) {
            c->modules[c->num_modules++] = m;
        }
    }
    if (0 == c->num_modules) {
        return NULL;
    }
    btls = (mca_btl_base_module_t **) malloc((size_t) c->num_modules * sizeof(*btls));
    if (NULL == btls || OPAL_SUCCESS != publish_addresses()) {
        free(btls);
        while (c->num_modules > 0) {
            (void) mca_btl_ofi_finalize(&c->modules[c->num_modules - 1]->super);
        }
        return NULL;
    }
    for (int i = 0; i < c->num_modules; ++i) {
        btls[i] = &c->modules[i]->super;
    }
    register_module_pvars();
    *num_btls = c->num_modules;
    return btls;
}

/* The sockets provider peeks at a message's header and reads nothing until
 * all of it is in. Left to the kernel's receive-buffer autotuning, a
 * flooded connection can stop with a partial header in its socket and no
 * room for the rest (seen with Linux 6.18 on loopback: the receive buffer
 * full of out-of-order data, window closed, both sides waiting). A fixed
 * large buffer (the kernel caps it at net.core.rmem_max) keeps room. Set
 * before libfabric reads its parameters (its first fi_getinfo in the
 * process), and never over the user's own value. Only where the sockets
 * provider may be chosen: setenv can free the environment array that
 * another thread is reading, and the PMIx thread reads it during MPI_Init
 * (a getenv there crashed once in a loaded test run with shm chosen). */
static void sockets_buffer_default(void)
{
    mca_btl_ofi_component_t *c = &mca_btl_ofi_component;

    if (!provider_allowed("sockets", effective_list("provider_include", c->provider_include),
                          effective_list("provider_exclude", c->provider_exclude))) {
        return;
    }
    if (NULL == getenv("FI_SOCKETS_MAX_BUF_SZ")) {
        (void) setenv("FI_SOCKETS_MAX_BUF_SZ", "4194304", 0);
    }
}

static mca_btl_base_module_t **ofi_init(int *num_btls, bool progress_threads, bool mpi_threads)
{
    mca_btl_ofi_component_t *c = &mca_btl_ofi_component;
    struct fi_info *list, *with_atomics, *chosen[MCA_BTL_OFI_MAX_MODULES];
    mca_btl_base_module_t **btls = NULL;
    int n;

    (void) progress_threads;
    *num_btls = 0;
    if (OPAL_SUCCESS != ob1x_params_check(&c->super.btl_version, params, N_PARAMS)) {
        return NULL;
    }
    c->mpi_threads = mpi_threads;
    c->progress_mode = parse_progress_mode(c->progress_mode_string);
    sockets_buffer_default();
    list = getinfo(false);
    if (c->verbose > 0) {
        report_mr_refusals(list);
    }
    if (NULL == list) {
        opal_output_verbose(1, c->output, "btl/ofi: no libfabric provider offers what we need");
        return NULL;
    }
    with_atomics = MCA_BTL_OFI_MODE_TWO_SIDED != c->mode ? getinfo(true) : NULL;
    n = choose(list, with_atomics, chosen, c->max_modules);
    if (0 == n) {
        opal_output_verbose(1, c->output,
                            "btl/ofi: no provider left after the include/exclude "
                            "lists");
    } else {
        btls = open_modules(chosen, n, num_btls);
    }
    if (NULL == btls) {
        report_nothing_usable(list);
    }
    /* every module holds its own copy of its fi_info */
    fi_freeinfo(list);
    if (NULL != with_atomics) {
        fi_freeinfo(with_atomics);
    }
    return btls;
}

static int ofi_progress(void)
{
    mca_btl_ofi_component_t *c = &mca_btl_ofi_component;
    int count = 0;

    for (int i = 0; i < c->num_modules; ++i) {
        count += mca_btl_ofi_module_progress(c->modules[i]);
    }
    return count;
}

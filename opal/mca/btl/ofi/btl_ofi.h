/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_ofi.h - libfabric BTL: component, module, endpoint and the
 * interfaces between its files.
 *
 * File map:
 *   btl_ofi_component.c  MCA parameters, performance variables, fi_getinfo,
 *                        provider filtering, one module per NIC, progress
 *   btl_ofi_module.c     add/del procs (address exchange, AV), finalize,
 *                        flush, the module template
 *   btl_ofi_context.c    transmit/receive contexts: scalable endpoint,
 *                        regular endpoints, CQs, reading a CQ
 *   btl_ofi_endpoint.c   endpoint objects, lookup by process name
 *   btl_ofi_mr.c         memory registration (rcache, MR modes)
 *   btl_ofi_rdma.c       btl_put / btl_get
 *   btl_ofi_atomic.c     btl_atomic_op / fop / cswap with FI_ATOMIC
 *   btl_ofi_frag.h/.c    two-sided fragments and their free lists
 *   btl_ofi_send.c       btl_alloc / free / prepare_src / send / sendi
 *   btl_ofi_recv.c       posted receive buffers, delivery to the upper layer
 *   btl_ofi_am.c         atomics carried as active messages (providers
 *                        without FI_ATOMIC), applied by the target's progress
 *
 * Every operation handed to libfabric carries an mca_btl_ofi_op_t: the CQ
 * entry's op_context points at it, and progress calls its done function.
 */
#ifndef MCA_BTL_OFI_H
#define MCA_BTL_OFI_H

#include "opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "opal/class/opal_free_list.h"
#include "opal/class/opal_hash_table.h"
#include "opal/class/opal_list.h"
#include "opal/mca/btl/btl.h"
#include "opal/mca/btl/base/base.h"
#include "opal/mca/rcache/rcache.h"
#include "opal/threads/mutex.h"
#include "opal/util/proc.h"

#include "../../common/ob1x/common_ob1x_pvar.h"

BEGIN_C_DECLS

#define OFI_LIKELY(x) __builtin_expect(!!(x), 1)
#define OFI_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* libfabric API version we ask for */
#define MCA_BTL_OFI_FI_VERSION FI_VERSION(1, 5)
/* ... and when asking for FI_HMEM (fi_mr_attr's iface and device) */
#define MCA_BTL_OFI_FI_HMEM_VERSION FI_VERSION(1, 9)
#define MCA_BTL_OFI_MAX_MODULES 16

/* btl_ofi_mode: the stock parameter's values */
enum {
    MCA_BTL_OFI_MODE_ONE_SIDED = 0,
    MCA_BTL_OFI_MODE_TWO_SIDED = 1,
    MCA_BTL_OFI_MODE_FULL_SUPPORT = 2,
};

struct mca_btl_ofi_context;
struct mca_btl_ofi_op;
/* btl.h names the endpoint only as a struct */
typedef struct mca_btl_base_endpoint_t mca_btl_base_endpoint_t;

/* Called from progress when the operation's completion (or error) is read
 * from its context's CQ. `entry` is the CQ entry (len, buf, flags for
 * receives); status is OPAL_SUCCESS or an OPAL error. */
typedef void (*mca_btl_ofi_op_done_fn_t)(struct mca_btl_ofi_context *ctx, struct mca_btl_ofi_op *op,
                                         const struct fi_cq_data_entry *entry, int status);

/* Embedded in every object whose operation is in flight in libfabric.
 * &op->fi is the context handed to fi_* calls (FI_CONTEXT/FI_CONTEXT2
 * scratch space first, as libfabric requires). */
typedef struct mca_btl_ofi_op {
    struct fi_context2 fi;
    mca_btl_ofi_op_done_fn_t done;
} mca_btl_ofi_op_t;

#define MCA_BTL_OFI_OP_OF(fi_ctx_ptr) ((mca_btl_ofi_op_t *) (fi_ctx_ptr))

/* One transmit/receive pair and its CQ. With a scalable endpoint the
 * pairs are contexts of one SEP; without, each is a regular endpoint
 * (tx == rx). */
typedef struct mca_btl_ofi_context {
    struct fid_ep *tx;
    struct fid_ep *rx;
    struct fid_cq *cq;
    struct fid_ep *own_ep; /* a regular endpoint of this context (no SEP), else NULL */
    int index;
    opal_mutex_t lock; /* taken around fi_* calls and CQ reads when threads are on */
    struct mca_btl_ofi_module *module;
} mca_btl_ofi_context_t;

/* Counters per module (MPI_T: btl_ofi_<name>, summed over modules). */
enum {
    OFI_PV_PUT_OPS,
    OFI_PV_PUT_BYTES,
    OFI_PV_GET_OPS,
    OFI_PV_GET_BYTES,
    OFI_PV_ATOMIC_OPS,    /* native FI_ATOMIC operations */
    OFI_PV_AM_ATOMIC_OPS, /* atomics carried as active messages */
    OFI_PV_SEND_OPS,      /* two-sided fragments sent (fi_send / fi_inject) */
    OFI_PV_SEND_BYTES,
    OFI_PV_INJECT_OPS, /* of which by fi_inject */
    OFI_PV_RECV_OPS,   /* two-sided fragments delivered */
    OFI_PV_RECV_BYTES,
    OFI_PV_CQ_ERRORS,
    OFI_PV_EAGAIN_RETRIES,    /* fi_* calls answered -FI_EAGAIN and retried */
    OFI_PV_MR_ENDPOINT_BINDS, /* registrations bound to the endpoint (FI_MR_ENDPOINT) */
    OFI_PV_HMEM_REGS,         /* device buffers registered with FI_HMEM_CUDA */
    OFI_PV_COUNT
};

/* The registration handle: what a peer needs to address our memory. The
 * whole struct is btl_registration_handle_size (desc travels, unused). */
struct mca_btl_base_registration_handle_t {
    uint64_t rkey;      /* fi_mr_key */
    uint64_t base_addr; /* start of the registration: offset addressing when
                           the provider lacks FI_MR_VIRT_ADDR */
    void *desc;         /* fi_mr_desc, for local operands (FI_MR_LOCAL) */
};

typedef struct mca_btl_ofi_reg {
    mca_rcache_base_registration_t base;
    struct fid_mr *mr;
    mca_btl_base_registration_handle_t handle;
} mca_btl_ofi_reg_t;

typedef struct mca_btl_ofi_module {
    mca_btl_base_module_t super;

    struct fi_info *info; /* the fi_info this module was opened with (dup) */
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_ep *sep; /* scalable endpoint, NULL without */
    mca_btl_ofi_context_t *contexts;
    int num_contexts;
    int rx_ctx_bits; /* for fi_rx_addr, 0 without SEP */
    bool is_scalable_ep;

    /* MR mode */
    bool use_virt_addr;
    bool use_prov_key;
    bool mr_local;           /* FI_MR_LOCAL: local operands need a desc */
    bool mr_endpoint;        /* FI_MR_ENDPOINT: MRs bound to the endpoint and enabled */
    bool mr_endpoint_forced; /* ... by btl_ofi_mr_force only: the provider may decline */
    bool native_atomics;     /* FI_ATOMIC offered; else btl_ofi_am.c */
    bool hmem;               /* FI_HMEM requested and granted */
    bool two_sided;          /* btl_send etc. offered (btl_ofi_mode) */

    /* btl_atomic_fop as set up (native or AM): btl_atomic_fop itself is
     * mca_btl_ofi_afop_gate (btl_ofi_fetching_atomics) */
    mca_btl_base_module_atomic_fop64_fn_t fop_carrier;
    bool remote_peers; /* a peer on another node has an endpoint here */

    /* operations started and not yet completed: btl_flush waits for 0 */
    volatile int64_t outstanding_rdma;

    opal_mutex_t lock;
    opal_list_t endpoints;
    opal_hash_table_t id_to_endpoint; /* opal_process_name_t (uint64) -> endpoint */
    mca_rcache_base_module_t *rcache;

    char *nic_name; /* domain name, for messages */
    int module_index;

    /* two-sided state, owned by btl_ofi_send.c / btl_ofi_recv.c */
    opal_free_list_t frags_eager;
    opal_free_list_t frags_max;
    opal_free_list_t frags_user; /* prepare_src in place */
    void *recv_state;

    uint64_t *pv; /* this module's counters: mca_btl_ofi_component.pv_module[index] */

    /* --- added by the core (btl_ofi_rdma.c, btl_ofi_mr.c, btl_ofi_context.c) --- */
    opal_free_list_t rdma_ops; /* mca_btl_ofi_rdma_op_t, operands in registered memory */
    uint64_t next_key;         /* our own MR keys when the provider lacks FI_MR_PROV_KEY */
    size_t addr_len;           /* bytes of our endpoint name (fi_getname) */
    char addr[256];            /* our endpoint name, published in the modex */
    bool finalized;
} mca_btl_ofi_module_t;

struct mca_btl_base_endpoint_t {
    opal_list_item_t super;
    struct opal_proc_t *ep_proc;
    mca_btl_ofi_module_t *module;
    fi_addr_t peer_addr;          /* AV address of the peer's (scalable) endpoint */
    volatile int64_t outstanding; /* RDMA/atomics to this peer in flight (btl_flush) */
    int peer_rx_contexts;         /* receive contexts of the peer's scalable endpoint,
                                     0: a regular endpoint */
};
typedef struct mca_btl_base_endpoint_t mca_btl_ofi_endpoint_t;
OBJ_CLASS_DECLARATION(mca_btl_ofi_endpoint_t);

typedef struct mca_btl_ofi_component {
    mca_btl_base_component_3_0_0_t super;

    int num_modules;
    mca_btl_ofi_module_t *modules[MCA_BTL_OFI_MAX_MODULES];

    /* MCA parameters (docs/ofi.md) */
    char *provider_include;
    char *provider_exclude;
    int mode; /* MCA_BTL_OFI_MODE_* */
    int num_contexts_per_module;
    bool disable_sep;
    int progress_threshold; /* operations in flight above which starting one more
                               progresses first (stock meaning) */
    int max_modules;
    int verbose;
    int output;
    int mr_force;          /* test-only: force the offset / local-registration paths */
    bool fetching_atomics; /* false: btl_atomic_fop declined while every peer is on
                              this node (MCA_BTL_OFI_FETCHING_ATOMICS_DEFAULT) */
    int rd_num;            /* receive buffers posted */
    size_t eager_size;     /* size of a posted receive buffer */

    /* --- added by the core --- */
    int num_cq_read;            /* CQ entries read per context per progress call */
    char *progress_mode_string; /* btl_ofi_progress_mode: unspec, auto, manual */
    enum fi_progress progress_mode;
    bool mpi_threads; /* MPI_THREAD_MULTIPLE: contexts are locked */
    /* MPI_T counters: the sums over modules (mca_btl_ofi_pv_add adds to both) */
    uint64_t pv_total[OFI_PV_COUNT];
    /* ... and per module (btl_ofi_<counter>_m<index>): here, not in the
     * module, so that MPI_T may read them after the module is gone */
    uint64_t pv_module[MCA_BTL_OFI_MAX_MODULES][OFI_PV_COUNT];
} mca_btl_ofi_component_t;

/* osc/rdma before Open MPI 4.1.5 puts the results of MPI_Get_accumulate on
 * a derived datatype in the wrong place whenever the BTL carries out
 * fetching atomics (as btl/smcuda, SMCUDA_FETCHING_ATOMICS_DEFAULT);
 * declined, it does them by get, operation and put, which is right. It
 * needs them for its locks only towards peers on other nodes, so they are
 * declined only while every peer is on this node (docs/ofi.md). */
#if OPAL_MAJOR_VERSION < 4 || (OPAL_MAJOR_VERSION == 4 && OPAL_MINOR_VERSION < 1) ||               \
    (OPAL_MAJOR_VERSION == 4 && OPAL_MINOR_VERSION == 1 && OPAL_RELEASE_VERSION < 5)
#define MCA_BTL_OFI_FETCHING_ATOMICS_DEFAULT false
#else
#define MCA_BTL_OFI_FETCHING_ATOMICS_DEFAULT true
#endif

/* btl_ofi_mr_force bits (test only) */
enum {
    MCA_BTL_OFI_MR_FORCE_OFFSET = 0x1,   /* act as if the provider lacked FI_MR_VIRT_ADDR */
    MCA_BTL_OFI_MR_FORCE_LOCAL = 0x2,    /* act as if it required FI_MR_LOCAL */
    MCA_BTL_OFI_MR_FORCE_ENDPOINT = 0x4, /* act as if it required FI_MR_ENDPOINT */
};

/* An RDMA or native atomic operation in flight (btl_ofi_rdma.c,
 * btl_ofi_atomic.c). The item's payload (registered through the rcache)
 * holds the operands of atomics, so FI_MR_LOCAL providers get a desc. */
typedef struct mca_btl_ofi_rdma_op {
    opal_free_list_item_t super;
    mca_btl_ofi_op_t op;
    mca_btl_ofi_module_t *module;
    mca_btl_ofi_endpoint_t *endpoint;
    void *local_address;
    mca_btl_base_registration_handle_t *local_handle;
    mca_rcache_base_registration_t *temp_reg; /* registered for this op only (FI_MR_LOCAL) */
    mca_btl_base_rdma_completion_fn_t cbfunc;
    void *cbcontext;
    void *cbdata;
    uint64_t *operands; /* [0] operand, [1] compare: item->ptr */
    void *operands_desc;
} mca_btl_ofi_rdma_op_t;
OBJ_CLASS_DECLARATION(mca_btl_ofi_rdma_op_t);

OPAL_MODULE_DECLSPEC extern mca_btl_ofi_component_t mca_btl_ofi_component;
extern mca_btl_ofi_module_t mca_btl_ofi_module_template;

/* ---- contexts (btl_ofi_context.c) --------------------------------------- */

/* The context the calling thread uses (one per thread, round robin). */
mca_btl_ofi_context_t *mca_btl_ofi_context_get(mca_btl_ofi_module_t *m);
/* Reads up to num_cq_read entries of ctx's CQ and runs their ops'
 * done functions (without the context's lock held); the number of
 * completions handled. A CQ error calls done with an error status. */
int mca_btl_ofi_context_progress(mca_btl_ofi_context_t *ctx);
/* Progress of every context of one module. */
int mca_btl_ofi_module_progress(mca_btl_ofi_module_t *m);
/* Opens the endpoint(s), CQs and AV of a module whose domain is open;
 * undone by mca_btl_ofi_contexts_fini. */
int mca_btl_ofi_contexts_init(mca_btl_ofi_module_t *m);
void mca_btl_ofi_contexts_fini(mca_btl_ofi_module_t *m);

/* ---- module (btl_ofi_module.c) ---------------------------------------------- */

/* Sets up a module for `info` (fabric, domain, contexts, rcache, lists);
 * NULL with a verbose line when the provider cannot be used. */
mca_btl_ofi_module_t *mca_btl_ofi_module_open(struct fi_info *info, int index);
/* Copies into buf (256 bytes) the endpoint name that the peer's module of
 * the same index published (btl_ofi_component.c), and sets *rx_contexts
 * to the receive contexts of its scalable endpoint (0: none); the name's
 * length, 0 if none. */
size_t mca_btl_ofi_peer_address(mca_btl_ofi_module_t *m, struct opal_proc_t *proc, void *buf,
                                int *rx_contexts);
int mca_btl_ofi_finalize(mca_btl_base_module_t *btl);
/* fi_* calls answered -FI_EAGAIN are retried after progress at most this
 * many times before the operation is refused as out of resources. */
#define MCA_BTL_OFI_RETRY_LIMIT 100000

/* The address of the peer's receive context `rx_index`. */
static inline fi_addr_t mca_btl_ofi_peer_addr(const mca_btl_ofi_endpoint_t *ep, int rx_index)
{
    const mca_btl_ofi_module_t *m = ep->module;
    /* a peer may run fewer contexts than we do, or none on a SEP */
    return m->is_scalable_ep && ep->peer_rx_contexts > 0
               ? fi_rx_addr(ep->peer_addr, rx_index % ep->peer_rx_contexts, m->rx_ctx_bits)
               : ep->peer_addr;
}

/* ---- endpoints (btl_ofi_endpoint.c) -------------------------------------- */

/* NULL when the process is not (yet) a peer of this module. */
mca_btl_ofi_endpoint_t *mca_btl_ofi_endpoint_lookup(mca_btl_ofi_module_t *m,
                                                    opal_process_name_t name);
/* Creates, inserts into the AV and records the endpoint of `proc`, whose
 * address (endpoint name) is addr/len. */
mca_btl_ofi_endpoint_t *mca_btl_ofi_endpoint_create(mca_btl_ofi_module_t *m,
                                                    struct opal_proc_t *proc, const void *addr,
                                                    size_t len, int rx_contexts);
void mca_btl_ofi_endpoint_destroy(mca_btl_ofi_module_t *m, mca_btl_ofi_endpoint_t *ep);

/* ---- registration (btl_ofi_mr.c) ----------------------------------------- */

/* The descriptor of a local operand for FI_MR_LOCAL providers (NULL when
 * not needed); registers through the rcache when the handle is NULL. */
void *mca_btl_ofi_local_desc(mca_btl_ofi_module_t *m, void *addr, size_t len,
                             mca_btl_base_registration_handle_t *local_handle);
/* As above; a registration made for this call only is returned in *temp
 * (release it with mca_btl_ofi_local_release once the operation is done). */
void *mca_btl_ofi_local_desc_temp(mca_btl_ofi_module_t *m, void *addr, size_t len,
                                  mca_btl_base_registration_handle_t *local_handle,
                                  mca_rcache_base_registration_t **temp);
void mca_btl_ofi_local_release(mca_btl_ofi_module_t *m, mca_rcache_base_registration_t *temp);
/* The address of `remote_address` as the provider wants it: virtual, or
 * the offset into the peer's registration. */
static inline uint64_t mca_btl_ofi_remote_addr(const mca_btl_ofi_module_t *m,
                                               uint64_t remote_address,
                                               const mca_btl_base_registration_handle_t *h)
{
    return m->use_virt_addr ? remote_address : remote_address - h->base_addr;
}
int mca_btl_ofi_mr_init(mca_btl_ofi_module_t *m);

/* ---- GPU memory (btl_ofi_hmem.c) ------------------------------------------- */
bool mca_btl_ofi_cuda_present(void);
int mca_btl_ofi_cuda_device_of(const void *addr);
int mca_btl_ofi_hmem_reg(mca_btl_ofi_module_t *m, void *base, size_t size, uint64_t access,
                         uint64_t key, int device, struct fid_mr **mr);
void mca_btl_ofi_hmem_fini(void);

void mca_btl_ofi_mr_fini(mca_btl_ofi_module_t *m);
mca_btl_base_registration_handle_t *mca_btl_ofi_register_mem(mca_btl_base_module_t *btl,
                                                             mca_btl_base_endpoint_t *ep,
                                                             void *base, size_t size,
                                                             uint32_t flags);
int mca_btl_ofi_deregister_mem(mca_btl_base_module_t *btl,
                               mca_btl_base_registration_handle_t *handle);

/* ---- operations (btl_ofi_rdma.c) ------------------------------------------- */

/* An operation object for the RDMA/atomic paths; NULL when none is left. */
mca_btl_ofi_rdma_op_t *mca_btl_ofi_rdma_op_alloc(mca_btl_ofi_module_t *m,
                                                 mca_btl_ofi_endpoint_t *ep, void *local_address,
                                                 mca_btl_base_registration_handle_t *local_handle,
                                                 mca_btl_base_rdma_completion_fn_t cbfunc,
                                                 void *cbcontext, void *cbdata);
/* Counts op as in flight (module and endpoint), before its fi_* call: a
 * completion read by another thread cannot precede the count. */
void mca_btl_ofi_rdma_op_posted(mca_btl_ofi_rdma_op_t *op);
/* Undoes mca_btl_ofi_rdma_op_posted and returns op, whose fi_* call was
 * refused. */
void mca_btl_ofi_rdma_op_refused(mca_btl_ofi_rdma_op_t *op);
/* Returns an operation to its list (and its temporary registration). */
void mca_btl_ofi_rdma_op_return(mca_btl_ofi_rdma_op_t *op);
/* The upper layer's status for an fi_* call's refusal. */
static inline int mca_btl_ofi_refusal(ssize_t rc)
{
    return -FI_EAGAIN == rc ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_ERROR;
}
/* Progresses ctx before an operation is started when too many are in
 * flight (btl_ofi_progress_threshold). */
void mca_btl_ofi_throttle(mca_btl_ofi_module_t *m, mca_btl_ofi_context_t *ctx);
int mca_btl_ofi_flush(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep);
/* Which atomics the provider carries natively (btl_ofi_atomic.c): the
 * MCA_BTL_ATOMIC_SUPPORTS_* bits; 0 without FI_ATOMIC. */
uint32_t mca_btl_ofi_atomic_query(mca_btl_ofi_module_t *m);

/* ---- two-sided (btl_ofi_frag.c, btl_ofi_send.c, btl_ofi_recv.c) ------------ */

/* Free lists and posted receive buffers of a module whose contexts are
 * up; undone by fini (called before the contexts are closed). */
int mca_btl_ofi_twosided_init(mca_btl_ofi_module_t *m);
void mca_btl_ofi_twosided_fini(mca_btl_ofi_module_t *m);

mca_btl_base_descriptor_t *mca_btl_ofi_alloc(mca_btl_base_module_t *btl,
                                             mca_btl_base_endpoint_t *ep, uint8_t order,
                                             size_t size, uint32_t flags);
int mca_btl_ofi_free(mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des);
mca_btl_base_descriptor_t *mca_btl_ofi_prepare_src(mca_btl_base_module_t *btl,
                                                   mca_btl_base_endpoint_t *ep,
                                                   struct opal_convertor_t *convertor,
                                                   uint8_t order, size_t reserve, size_t *size,
                                                   uint32_t flags);
int mca_btl_ofi_send(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                     mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag);
int mca_btl_ofi_sendi(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                      struct opal_convertor_t *convertor, void *header, size_t header_size,
                      size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t **descriptor);

/* ---- one-sided (btl_ofi_rdma.c, btl_ofi_atomic.c, btl_ofi_am.c) ----------- */

int mca_btl_ofi_put(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep, void *local_address,
                    uint64_t remote_address, mca_btl_base_registration_handle_t *local_handle,
                    mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                    int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata);
int mca_btl_ofi_get(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep, void *local_address,
                    uint64_t remote_address, mca_btl_base_registration_handle_t *local_handle,
                    mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                    int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata);
int mca_btl_ofi_aop(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                    uint64_t remote_address, mca_btl_base_registration_handle_t *remote_handle,
                    mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                    mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata);
int mca_btl_ofi_afop(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep, void *local_address,
                     uint64_t remote_address, mca_btl_base_registration_handle_t *local_handle,
                     mca_btl_base_registration_handle_t *remote_handle, mca_btl_base_atomic_op_t op,
                     uint64_t operand, int flags, int order,
                     mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata);
int mca_btl_ofi_acswap(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep, void *local_address,
                       uint64_t remote_address, mca_btl_base_registration_handle_t *local_handle,
                       mca_btl_base_registration_handle_t *remote_handle, uint64_t compare,
                       uint64_t value, int flags, int order,
                       mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata);
/* btl_atomic_fop of every module: declines (OPAL_ERR_NOT_SUPPORTED) when
 * btl_ofi_fetching_atomics is false and every peer is on this node, else
 * calls fop_carrier. */
int mca_btl_ofi_afop_gate(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                          void *local_address, uint64_t remote_address,
                          mca_btl_base_registration_handle_t *local_handle,
                          mca_btl_base_registration_handle_t *remote_handle,
                          mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                          mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata);
/* The same three carried as active messages (btl_ofi_am.c), installed in
 * the module instead of the above when the provider lacks FI_ATOMIC. */
int mca_btl_ofi_am_aop(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                       uint64_t remote_address, mca_btl_base_registration_handle_t *remote_handle,
                       mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                       mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata);
int mca_btl_ofi_am_afop(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                        void *local_address, uint64_t remote_address,
                        mca_btl_base_registration_handle_t *local_handle,
                        mca_btl_base_registration_handle_t *remote_handle,
                        mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                        mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata);
int mca_btl_ofi_am_acswap(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                          void *local_address, uint64_t remote_address,
                          mca_btl_base_registration_handle_t *local_handle,
                          mca_btl_base_registration_handle_t *remote_handle, uint64_t compare,
                          uint64_t value, int flags, int order,
                          mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata);

/* Counts one more operation in flight / one less (btl_flush waits). */
static inline void mca_btl_ofi_op_started(mca_btl_ofi_module_t *m)
{
    __atomic_add_fetch(&m->outstanding_rdma, 1, __ATOMIC_RELAXED);
}
static inline void mca_btl_ofi_op_finished(mca_btl_ofi_module_t *m)
{
    __atomic_sub_fetch(&m->outstanding_rdma, 1, __ATOMIC_RELEASE);
}

static inline void mca_btl_ofi_pv_add(mca_btl_ofi_module_t *m, int which, uint64_t value)
{
    ob1x_counter_add(&m->pv[which], value);
    ob1x_counter_add(&mca_btl_ofi_component.pv_total[which], value);
}

/* Taken around fi_* calls on a context: only when threads share
 * contexts (MPI_THREAD_MULTIPLE). */
static inline void mca_btl_ofi_ctx_lock(mca_btl_ofi_context_t *ctx)
{
    if (mca_btl_ofi_component.mpi_threads) {
        opal_mutex_lock(&ctx->lock);
    }
}

static inline void mca_btl_ofi_ctx_unlock(mca_btl_ofi_context_t *ctx)
{
    if (mca_btl_ofi_component.mpi_threads) {
        opal_mutex_unlock(&ctx->lock);
    }
}

/* Whether an fi_* call that returned rc should be tried again: on
 * -FI_EAGAIN, after progressing ctx (so the provider frees room), counted,
 * at most MCA_BTL_OFI_RETRY_LIMIT times per call. */
static inline bool mca_btl_ofi_again(mca_btl_ofi_module_t *m, mca_btl_ofi_context_t *ctx,
                                     ssize_t rc, int *tries)
{
    if (OFI_LIKELY(-FI_EAGAIN != rc) || ++*tries > MCA_BTL_OFI_RETRY_LIMIT) {
        return false;
    }
    mca_btl_ofi_pv_add(m, OFI_PV_EAGAIN_RETRIES, 1);
    (void) mca_btl_ofi_context_progress(ctx);
    return true;
}

END_C_DECLS

#endif /* MCA_BTL_OFI_H */

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda.h - shared-memory BTL: component, module and private interfaces.
 *
 * File map:
 *   btl_smcuda_shm.h        shared-memory layout (segment, FIFO, fragments, rings)
 *   btl_smcuda_component.c  MCA parameters, performance variables, init, progress
 *   btl_smcuda_module.c     add/del procs, finalize, alloc/free/prepare_src, registration
 *   btl_smcuda_endpoint.c   attaching to a peer's segment
 *   btl_smcuda_self.c       the endpoint of our own process (sends delivered in place)
 *   btl_smcuda_frag.h/.c    fragment descriptors and their free lists
 *   btl_smcuda_fifo.h       receive FIFO operations (inline)
 *   btl_smcuda_fbox.h       fast-box ring operations (inline)
 *   btl_smcuda_send.c       btl_send, flow control queue, completion of fragments
 *   btl_smcuda_sendi.c      btl_sendi
 *   btl_smcuda_recv.c       polling the rings and the FIFO, delivering to the upper layer
 *   btl_smcuda_rdma.c       btl_put / btl_get over a single-copy mechanism
 *   btl_smcuda_atomic.c     btl_atomic_op / fop / cswap, applied by the target's progress
 *   btl_smcuda_cma.c        the CMA single-copy mechanism (process_vm_readv/writev)
 */
#ifndef MCA_BTL_SMCUDA_H
#define MCA_BTL_SMCUDA_H

#include "opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "opal/class/opal_free_list.h"
#include "opal/class/opal_list.h"
#include "opal/mca/btl/btl.h"
#include "opal/threads/mutex.h"

#include "btl_smcuda_shm.h"

/* 1 when the CUDA headers were found (Makefile.am): the CUDA IPC path of
 * btl_smcuda_cuda.c is built in */
#ifndef SMCUDA_HAVE_CUDA
#define SMCUDA_HAVE_CUDA 0
#endif
/* by its place beside this header: the unit tests (test/btl/*_unit.c)
 * compile this header with Open MPI's include paths only */
#include "../../common/ob1x/common_ob1x_pvar.h"

#if defined(__has_include)
#if __has_include("ob1x_version.h")
#include "ob1x_version.h"
#endif
#endif
#ifndef OB1X_MAJOR_VERSION
#define OB1X_MAJOR_VERSION 0
#define OB1X_MINOR_VERSION 1
#define OB1X_RELEASE_VERSION 0
#endif

BEGIN_C_DECLS

#define SMCUDA_LIKELY(x) __builtin_expect(!!(x), 1)
#define SMCUDA_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ------------------------------------------------------------------ */
/* performance variables (sender side unless noted)                    */
/* ------------------------------------------------------------------ */

enum {
    SMCUDA_PV_FBOX_MESSAGES, /* messages written into a peer's ring */
    SMCUDA_PV_FBOX_BYTES,
    SMCUDA_PV_FIFO_MESSAGES, /* fragments pushed into a peer's FIFO */
    SMCUDA_PV_FIFO_BYTES,
    SMCUDA_PV_SENDI_MESSAGES, /* messages accepted by btl_sendi (either path) */
    SMCUDA_PV_SENDI_BYTES,
    SMCUDA_PV_PUT_MESSAGES, /* single-copy writes (btl_put) */
    SMCUDA_PV_PUT_BYTES,
    SMCUDA_PV_GET_MESSAGES, /* single-copy reads (btl_get) */
    SMCUDA_PV_GET_BYTES,
    /* sends queued because the FIFO was full or older sends waited */
    SMCUDA_PV_FLOW_CONTROL_STALLS,
    /* bytes this process pushed into a peer as the helper of its shared get */
    SMCUDA_PV_GET_HELPED_BYTES,
    /* atomic operations started (btl_atomic_op, btl_atomic_fop, btl_atomic_cswap) */
    SMCUDA_PV_ATOMIC_OPS,
    /* single-copy bytes moved through a bounce buffer (kernel copy at a slow distance) */
    SMCUDA_PV_CMA_BOUNCED_BYTES,
    SMCUDA_PV_HANDOFF_SAMPLES, /* fragments timed as hand-off samples (receiver side) */
    SMCUDA_PV_HANDOFF_NS,      /* level: the hand-off figure published last (ns) */
    SMCUDA_PV_GUEST_PEERS,     /* local peers of other jobs attached (either side) */
    SMCUDA_PV_FBOX_ANSWERS,    /* ring records written first line last (btl_smcuda_sendi.c) */
    /* CUDA IPC (btl_smcuda_cuda.c) */
    SMCUDA_PV_IPC_SETUPS_OK,       /* peers with which the handshake turned IPC on */
    SMCUDA_PV_IPC_SETUPS_BAD,      /* peers with which it ended IPC_BAD */
    SMCUDA_PV_IPC_CACHE_HITS,      /* device gets served by an open mapping */
    SMCUDA_PV_IPC_CACHE_MISSES,    /* cuIpcOpenMemHandle calls */
    SMCUDA_PV_IPC_CACHE_EVICTIONS, /* mappings closed for room or as stale */
    SMCUDA_PV_IPC_BYTES,           /* bytes read from peers' device memory */
    SMCUDA_PV_IPC_PEERS,           /* level: peers with IPC on now */
    SMCUDA_PV_IPC_PEER_MASK,       /* level: bit r: IPC on with local rank r (< 64) */
    SMCUDA_PV_COUNT
};

/* ------------------------------------------------------------------ */
/* single-copy mechanisms                                              */
/* ------------------------------------------------------------------ */

enum { SMCUDA_COPY_CMA = 1, SMCUDA_COPY_NONE = 3 };

struct mca_btl_base_endpoint_t;

/* One single-copy mechanism.  btl_put/btl_get only see this table; CMA is
 * the host implementation, a GPU (IPC) mechanism plugs in the same way. */
typedef struct mca_btl_smcuda_copy_ops_t {
    const char *name;
    /* usable on this node at all?  OPAL_SUCCESS or an error + *why */
    int (*query)(const char **why);
    /* usable with this peer? (called once per peer in add_procs) */
    int (*check_peer)(struct mca_btl_base_endpoint_t *ep);
    /* copy len bytes from the peer's address space at remote into local */
    int (*read)(struct mca_btl_base_endpoint_t *ep, void *local, uint64_t remote, size_t len);
    /* copy len bytes from local into the peer's address space at remote */
    int (*write)(struct mca_btl_base_endpoint_t *ep, const void *local, uint64_t remote,
                 size_t len);
} mca_btl_smcuda_copy_ops_t;

extern const mca_btl_smcuda_copy_ops_t mca_btl_smcuda_cma_ops;

/* ------------------------------------------------------------------ */
/* registration handle (what the upper layer ships to the peer)      */
/* ------------------------------------------------------------------ */

struct mca_btl_base_registration_handle_t {
    uint64_t base;  /* first byte of the registered range (owner's address space) */
    uint64_t len;   /* bytes */
    uint32_t flags; /* MCA_BTL_REG_FLAG_* it was registered with */
    uint32_t rsvd;
#if SMCUDA_HAVE_CUDA
    /* device memory (flags has OB1X_BTL_REG_FLAG_DEVICE) only: what the
     * peer needs to map the allocation holding [base, base + len) */
    uint64_t alloc_base; /* the allocation, in the owner's address space */
    uint64_t alloc_size;
    uint64_t buffer_id;    /* new for each allocation, even at the same address */
    unsigned char ipc[64]; /* the allocation's CUipcMemHandle */
#endif
};

/* The bytes of a handle that name host memory: btl_registration_handle_size,
 * what upper layers ship to the peer with each RDMA message. A device
 * handle is the whole structure; only an upper layer that registers device
 * memory ships one, and the module publishes its size for it
 * (ob1x_btl_device_handle_size, btl_smcuda_path.c). Without this split every
 * host RGET would carry the 88 bytes of an unused IPC description: 1-2% of
 * a 64 KiB ping-pong. */
#if SMCUDA_HAVE_CUDA
#define SMCUDA_HOST_HANDLE_SIZE offsetof(struct mca_btl_base_registration_handle_t, alloc_base)
#else
#define SMCUDA_HOST_HANDLE_SIZE sizeof(struct mca_btl_base_registration_handle_t)
#endif

/* ------------------------------------------------------------------ */
/* endpoint: one per local peer                                        */
/* ------------------------------------------------------------------ */

struct mca_btl_base_endpoint_t {
    opal_list_item_t super; /* on the module's list of endpoints with queued sends */
    struct opal_proc_t *proc;
    int lrank;          /* peer's local rank; for a guest, the id it sends under here
                         * (-1 until its first fragment arrives) */
    int ref_id;         /* the id we send under in the peer's FIFO: our local rank,
                         * or n_local + our guest index for a peer of another job */
    smcuda_guest_t who; /* a guest's pid, job, rank and segment (state unused) */
    pid_t pid;          /* peer's pid (single-copy target) */
    unsigned char *seg; /* peer's segment, mapped here */
    size_t seg_size;
    smcuda_fifo_t *fifo; /* peer's receive FIFO */
    uint32_t fifo_mask;

    /* outgoing ring: lives in the peer's segment, we are its only writer */
    smcuda_fbox_ctl_t *out_ctl;
    unsigned char *out_ring; /* NULL: the peer has no ring for us */
    uint32_t out_mask;
    uint32_t out_max;  /* largest message for that ring now (out_max_near, or less for a
                        * far peer: mca_btl_smcuda_ring_limit) */
    uint32_t out_max_near; /* largest message for that ring (ours and the peer's limits) */
    uint32_t ring_left;    /* ring sends left before out_max is worked out again */
    uint64_t out_rec;  /* position of the reserved record */
    uint64_t out_head; /* bytes written (monotonic) */
    uint64_t out_tail; /* last tail read from out_ctl */
    uint16_t send_seq; /* next sequence number to this peer */
    uint32_t ho_tick;  /* pipeline fragments pushed to this peer (hand-off sampling) */
    uint32_t far_left; /* hint reads left before `far` is read again from the peer's figure */
    bool far;          /* the peer is far away (btl_smcuda_path.c) */

    /* incoming ring: lives in our segment, the peer is its only writer */
    smcuda_fbox_ctl_t *in_ctl;
    unsigned char *in_ring; /* NULL: no ring for this peer */
    uint32_t in_mask;
    uint64_t in_pos;   /* bytes consumed (monotonic) */
    uint16_t recv_seq; /* next sequence number expected from this peer */

    opal_list_t inflight; /* our fragments pushed to the peer, in push order */
    opal_list_t pending;  /* our fragments waiting for room in the peer's FIFO */
    bool on_pending_list;
    bool copy_ok;       /* single-copy works with this peer */
    bool answering;     /* a ring record of the peer was delivered since our last record of
                         * more than one line to it (btl_smcuda_sendi.c; relaxed loads and
                         * stores, a hint) */
    int32_t split_lead; /* bytes the reader's chunk of a two-chunk shared get
                         * takes beyond half (btl_smcuda_split.h) */
    bool self;          /* our own process (btl_smcuda_self.c) */
    opal_mutex_t lock;  /* send side, only taken when threads are in use */
    void *accel;        /* accelerator (GPU IPC) state; NULL for host-only peers */
};
typedef struct mca_btl_base_endpoint_t mca_btl_base_endpoint_t;
OBJ_CLASS_DECLARATION(mca_btl_base_endpoint_t);

/* ------------------------------------------------------------------ */
/* module and component                                                */
/* ------------------------------------------------------------------ */

/* Hand-off samples whose least is published (btl_smcuda_path.c). */
#define SMCUDA_HANDOFF_SAMPLES 16
/* FIFO fragments of at least this many bytes may carry a hand-off stamp:
 * pipeline fragments, and the first fragment and the tail of a message
 * just above the eager limit (too large for the ring: 4-8 KiB with the
 * defaults), whose copy path is what a far receiver makes slow. Smaller
 * ones are not worth a clock read. */
#define SMCUDA_HANDOFF_MIN_BYTES 1024

/* Intervals between arrivals measured together (btl_smcuda_path.c). */
#define SMCUDA_RUN_FRAGS 16
/* The fewest intervals of a run cut short that still make a sample. */
#define SMCUDA_RUN_MIN 8
/* A run of arrivals of one way of receiving (pipeline fragments, or
 * single-copy gets), each within a short gap of the one before: when it
 * opened, its last arrival, the bytes since the opening one, and how many
 * runs were seen (btl_smcuda_path.c). */
typedef struct smcuda_run {
    uint64_t first, last, bytes;
    uint32_t n;
    uint32_t seen;
} smcuda_run_t;

/* upper bound of btl_smcuda_max_guests (sender ids are 16 bits) */
#define SMCUDA_MAX_GUESTS 4096

/* released registration handles kept for reuse */
#define SMCUDA_REG_CACHE 16

/* Reads of the hints (one per large send) for which a bulk transfer
 * received earlier still makes the traffic two-way: enough to span a
 * window of sends posted before any of the other direction's data is in
 * (windows of 64 sends each way saw nothing received between two sends
 * of a window). btl_smcuda_path.c */
#define SMCUDA_TWO_WAY_READS 256

typedef struct mca_btl_smcuda_module_t {
    mca_btl_base_module_t super;

    /* our segment */
    unsigned char *seg;
    size_t seg_size;
    char seg_path[256]; /* its name, or for a nameless segment its directory */
    bool seg_named;     /* seg_path names it (still): btl_smcuda_named_segment */
    bool seg_unnamed;   /* ... not yet: named at add_procs (mca_btl_smcuda_name_segment) */
    smcuda_seg_hdr_t *hdr;
    smcuda_fifo_t *fifo;
    uint32_t fifo_mask;
    uint64_t fifo_head; /* consumer ticket (private) */
    int seg_fd;         /* kept open: peers of other jobs open /proc/<pid>/fd/<seg_fd> */
    int my_lrank;
    int n_local;
    int n_eps; /* n_local + guest entries of our segment */

    mca_btl_base_endpoint_t **eps;    /* by sender id (local rank, then guests); NULL until known */
    mca_btl_base_endpoint_t **polled; /* peers whose ring we poll */
    int n_polled;
    uint32_t ring_epoch; /* last value of hdr->ring_epoch acted upon */

    /* fragment pool carving (offsets in our segment) */
    uint64_t eager_count, max_count; /* fragments the pool holds (btl_smcuda_max_pool_size) */
    uint64_t eager_next, eager_end;
    uint64_t max_next, max_end;
    opal_free_list_t eager_frags; /* payload capacity: eager_limit */
    opal_free_list_t max_frags;   /* payload capacity: max_send_size */
    opal_free_list_t priv_frags;  /* private memory, fbox_max_size: ring-only overflow */
    opal_list_t done;             /* sent through a ring, completion callback still due */

    size_t inflight;         /* fragments waiting for a receiver, all peers */
    int32_t amo_live;        /* our atomic operations not yet applied by their target */
    opal_list_t amo_backlog; /* atomic replies waiting for room toward their origin */
    /* released registration handles kept for reuse (btl_smcuda_module.c):
     * a rendezvous by single copy registers on both sides, and malloc with
     * free cost about 60 instructions a pair */
    mca_btl_base_registration_handle_t *reg_cache[SMCUDA_REG_CACHE];
    int reg_cached;
    uint32_t rx_bulk;   /* bulk transfers received since the last read of our hints */
    uint32_t rx_recent; /* reads of our hints left that see two-way traffic (btl_smcuda_path.c) */
    smcuda_run_t copy_run;   /* pipeline fragments received in a run (btl_smcuda_path.c) */
    smcuda_run_t get_run;    /* our single-copy gets completing in a run */
    size_t get_unstamped;    /* bytes of our last get, whose time is not taken yet
                              * (mca_btl_smcuda_path_get) */
    uint32_t ho_min;         /* least hand-off time of the samples so far (btl_smcuda_path.c) */
    uint32_t ho_n;           /* samples so far */
    bool idle;               /* the last progress call found nothing */
    bool was_idle;           /* so did the one before the current call: a fragment popped
                              * now was waited for, its push-to-pop delay is a hand-off */
    opal_list_t pending_eps; /* endpoints with queued fragments */
    int32_t in_progress;     /* progress re-entrance guard */

    const mca_btl_smcuda_copy_ops_t *copy; /* NULL: no single copy */

    /* shared single-copy jobs (btl_smcuda_rdma.c) */
    smcuda_copy_job_t *jobs; /* table in our segment */
    uint32_t jobs_busy;      /* bitmap of slots in use */
    uint32_t job_gen[SMCUDA_COPY_JOBS];
    mca_btl_base_module_error_cb_fn_t error_cb;
    opal_mutex_t lock; /* pending list, only taken when threads are in use */

    /* peers of other jobs (btl_smcuda_guest.c) */
    smcuda_guest_t *guests;              /* our guest table (in our segment) */
    mca_btl_base_endpoint_t **guest_eps; /* attached guests, in attach order */
    int n_guest_eps;
    mca_btl_base_endpoint_t *self_ep; /* our own process (btl_smcuda_self.c); NULL until added */
    opal_list_t departed;             /* guests whose process exited, unmapped (until finalize) */
    opal_mutex_t guest_lock;          /* add_procs against the receive path */

    uint32_t accel_busy; /* device copies in flight (btl_smcuda_cuda.c) */

    /* receive descriptor handed to the upper layer (valid during its callback) */
    mca_btl_base_descriptor_t rdesc;
    mca_btl_base_segment_t rseg;
} mca_btl_smcuda_module_t;

typedef struct mca_btl_smcuda_component_t {
    mca_btl_base_component_3_0_0_t super;

    /* MCA parameters (see docs/mca-params.md) */
    unsigned int fbox_size;     /* bytes of each incoming ring */
    unsigned int fbox_count;    /* peers (by local rank) that get a ring */
    unsigned int fbox_max_size; /* largest message (header + payload) sent through a ring */
    unsigned int fbox_far_max_size; /* the same, to a peer measured far */
    unsigned int fifo_size;     /* FIFO slots */
    int free_list_num, free_list_max, free_list_inc; /* eager fragments */
    int max_frags;                                   /* fragments of max_send_size */
    size_t max_pool_size;                            /* bytes of the shared fragment pool at most */
    int single_copy_mechanism;
    size_t cma_min_size;         /* hint: below, single copy's fixed costs exceed its savings */
    size_t split_min_size;       /* gets this large are shared by both processes */
    bool path_adapt;             /* hint: one-way streams may compare the measured figures */
    bool fetching_atomics;       /* btl_atomic_fop is carried out (btl_smcuda_atomic.c) */
    size_t busy_limit;           /* hint: from this size single copy always wins */
    unsigned int max_guests;     /* peers of other jobs that may attach to us */
    unsigned int far_handoff_ns; /* hint: a receiver whose hand-off takes this long is far */
    char *backing_directory;
    bool named_segment; /* segments get a file name (else nameless, shared through /proc) */
    int verbose;
    unsigned int cuda_ipc_cache_size; /* opened peer allocations kept, per peer */
    size_t cuda_copy_piece;           /* device gets are split into copies this large */

    int output;                   /* opal_output stream */
    uint64_t pv[SMCUDA_PV_COUNT]; /* MPI_T counters (common_ob1x_pvar.h) */
} mca_btl_smcuda_component_t;

OPAL_MODULE_DECLSPEC extern mca_btl_smcuda_component_t mca_btl_smcuda_component;
extern mca_btl_smcuda_module_t mca_btl_smcuda;

/* Adds to a performance variable (atomic only when threads may race). */
static inline void smcuda_pv_add(int which, uint64_t value)
{
    (void) ob1x_counter_add(&mca_btl_smcuda_component.pv[which], value);
}

#define SMCUDA_PV_ADD(which, bytes)                                                                \
    do {                                                                                           \
        smcuda_pv_add(SMCUDA_PV_##which##_MESSAGES, 1);                                            \
        smcuda_pv_add(SMCUDA_PV_##which##_BYTES, (bytes));                                         \
    } while (0)

/* ------------------------------------------------------------------ */
/* module functions                                                    */
/* ------------------------------------------------------------------ */

void mca_btl_smcuda_module_set_ops(mca_btl_base_module_t *btl);
int mca_btl_smcuda_module_init(mca_btl_smcuda_module_t *m);
int mca_btl_smcuda_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                             struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                             struct opal_bitmap_t *reachable);
int mca_btl_smcuda_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                             struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers);
int mca_btl_smcuda_finalize(struct mca_btl_base_module_t *btl);
int mca_btl_smcuda_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                        struct mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag);
int mca_btl_smcuda_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                         struct opal_convertor_t *convertor, void *header, size_t header_size,
                         size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                         mca_btl_base_descriptor_t **descriptor);
int mca_btl_smcuda_put(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                       void *local_address, uint64_t remote_address,
                       struct mca_btl_base_registration_handle_t *local_handle,
                       struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                       int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc,
                       void *cbcontext, void *cbdata);
int mca_btl_smcuda_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                       void *local_address, uint64_t remote_address,
                       struct mca_btl_base_registration_handle_t *local_handle,
                       struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                       int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc,
                       void *cbcontext, void *cbdata);

/* What an RDMA or atomic operation that completes later calls back with. */
typedef struct {
    mca_btl_base_endpoint_t *ep;
    void *local_address;
    mca_btl_base_registration_handle_t *local_handle;
    mca_btl_base_rdma_completion_fn_t cbfunc;
    void *cbcontext, *cbdata;
} smcuda_rdma_done_t;

static inline void smcuda_rdma_done(mca_btl_smcuda_module_t *m, const smcuda_rdma_done_t *d,
                                    int status)
{
    d->cbfunc(&m->super, d->ep, d->local_address, d->local_handle, d->cbcontext, d->cbdata, status);
}

/* shared single-copy jobs (btl_smcuda_rdma.c) */
int mca_btl_smcuda_jobs_progress(mca_btl_smcuda_module_t *m);
void mca_btl_smcuda_jobs_flush(mca_btl_smcuda_module_t *m);
void mca_btl_smcuda_copy_req(mca_btl_smcuda_module_t *m, const void *msg, size_t len);

/* atomics (btl_smcuda_atomic.c); operations in flight per process */
#define SMCUDA_AMO_SLOTS 256
/* osc/rdma before Open MPI 4.1.5 unpacks the results of a get-accumulate on
 * a derived datatype from past the values a BTL's fetching atomics return
 * (upstream commit 58ac969, "fix data integrity ... in rdma
 * get_accumulate"); declining them makes it use get, operation and put,
 * which is right. We are built against the Open MPI we run in. */
#if OPAL_MAJOR_VERSION < 4 || (OPAL_MAJOR_VERSION == 4 && OPAL_MINOR_VERSION < 1) ||               \
    (OPAL_MAJOR_VERSION == 4 && OPAL_MINOR_VERSION == 1 && OPAL_RELEASE_VERSION < 5)
#define SMCUDA_FETCHING_ATOMICS_DEFAULT false
#else
#define SMCUDA_FETCHING_ATOMICS_DEFAULT true
#endif
int mca_btl_smcuda_atomic_op(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                             uint64_t remote_address,
                             struct mca_btl_base_registration_handle_t *remote_handle,
                             mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                             mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                             void *cbdata);
int mca_btl_smcuda_atomic_fop(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                              void *local_address, uint64_t remote_address,
                              struct mca_btl_base_registration_handle_t *local_handle,
                              struct mca_btl_base_registration_handle_t *remote_handle,
                              mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                              mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                              void *cbdata);
int mca_btl_smcuda_atomic_cswap(
    struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep, void *local_address,
    uint64_t remote_address, struct mca_btl_base_registration_handle_t *local_handle,
    struct mca_btl_base_registration_handle_t *remote_handle, uint64_t compare, uint64_t value,
    int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata);
void mca_btl_smcuda_atomic_msg(mca_btl_smcuda_module_t *m, const void *data, size_t len);
int mca_btl_smcuda_atomic_backlog(mca_btl_smcuda_module_t *m);
void mca_btl_smcuda_atomic_flush(mca_btl_smcuda_module_t *m);

/* control messages (tag MCA_BTL_TAG_SMCUDA) to the two above (btl_smcuda_recv.c) */
void mca_btl_smcuda_ctl_cb(struct mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                           mca_btl_base_descriptor_t *des, void *cbdata);

/* endpoints (btl_smcuda_endpoint.c) */
int mca_btl_smcuda_endpoint_map(const char *path, size_t seg_size, pid_t pid,
                                unsigned char **seg_out);
mca_btl_base_endpoint_t *mca_btl_smcuda_endpoint_new(mca_btl_smcuda_module_t *m,
                                                     struct opal_proc_t *proc, pid_t pid,
                                                     unsigned char *seg, size_t seg_size);
int mca_btl_smcuda_endpoint_attach(mca_btl_smcuda_module_t *m, struct opal_proc_t *proc,
                                   mca_btl_base_endpoint_t **ep_out);
void mca_btl_smcuda_endpoint_detach(mca_btl_base_endpoint_t *ep);

/* our own process (btl_smcuda_self.c) */
struct mca_btl_smcuda_frag_t;
mca_btl_base_endpoint_t *mca_btl_smcuda_self_endpoint(mca_btl_smcuda_module_t *m,
                                                      struct opal_proc_t *proc);
int mca_btl_smcuda_self_send(mca_btl_smcuda_module_t *m, struct mca_btl_smcuda_frag_t *frag,
                             mca_btl_base_tag_t tag);
int mca_btl_smcuda_self_sendi(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep,
                              struct opal_convertor_t *convertor, const void *header,
                              size_t header_size, size_t payload_size, mca_btl_base_tag_t tag);

/* peers of other jobs (btl_smcuda_guest.c) */
int mca_btl_smcuda_guest_attach(mca_btl_smcuda_module_t *m, struct opal_proc_t *proc,
                                mca_btl_base_endpoint_t **ep_out);
mca_btl_base_endpoint_t *mca_btl_smcuda_guest_arrived(mca_btl_smcuda_module_t *m, int id);
void mca_btl_smcuda_guest_fini(mca_btl_smcuda_module_t *m);

/* The endpoint of sender `id` (FIFO references, control messages); a
 * guest's is set up when its first fragment arrives. NULL: no such sender. */
static inline mca_btl_base_endpoint_t *smcuda_ep_by_id(mca_btl_smcuda_module_t *m, int id)
{
    mca_btl_base_endpoint_t *ep = id < m->n_eps ? m->eps[id] : NULL;

    if (SMCUDA_UNLIKELY(NULL == ep && id >= m->n_local && id < m->n_eps)) {
        ep = mca_btl_smcuda_guest_arrived(m, id);
    }
    return ep;
}

/* send side internals (btl_smcuda_send.c) */
struct mca_btl_smcuda_frag_t;
int mca_btl_smcuda_frag_start(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep,
                              struct mca_btl_smcuda_frag_t *frag);
int mca_btl_smcuda_reap(mca_btl_smcuda_module_t *m);
int mca_btl_smcuda_reap_peer(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep);
int mca_btl_smcuda_retry_pending(mca_btl_smcuda_module_t *m);

int mca_btl_smcuda_complete_done(mca_btl_smcuda_module_t *m);
bool mca_btl_smcuda_ring_send_ctl(mca_btl_base_endpoint_t *ep, mca_btl_base_tag_t tag,
                                  const void *data, uint32_t len);

/* what the module measures of its copy path and single copy, published
 * per peer as hints for the upper layer (btl_smcuda_path.c) */
int mca_btl_smcuda_hints_register(mca_btl_smcuda_module_t *m);
void mca_btl_smcuda_hints_deregister(mca_btl_smcuda_module_t *m);
uint64_t mca_btl_smcuda_now_ns(void);
void mca_btl_smcuda_path_get(mca_btl_smcuda_module_t *m, size_t bytes);
void mca_btl_smcuda_path_idle(mca_btl_smcuda_module_t *m);
void mca_btl_smcuda_ring_limit(mca_btl_base_endpoint_t *ep);

/* The largest message for ep's ring now: worked out again every
 * SMCUDA_RING_RECHECK calls, as the peer's hand-off figure may change.
 * Caller holds ep->lock. */
#define SMCUDA_RING_RECHECK 256
static inline uint32_t smcuda_ring_max(mca_btl_base_endpoint_t *ep)
{
    if (SMCUDA_UNLIKELY(0 == --ep->ring_left)) {
        mca_btl_smcuda_ring_limit(ep);
    }
    return ep->out_max;
}
uint64_t mca_btl_smcuda_path_fragment(mca_btl_smcuda_module_t *m, size_t bytes);
void mca_btl_smcuda_path_handoff(mca_btl_smcuda_module_t *m, uint32_t stamp, uint64_t now);

/* receive side and progress (btl_smcuda_recv.c) */
int mca_btl_smcuda_progress(void);
void mca_btl_smcuda_poll_rings_update(mca_btl_smcuda_module_t *m);
void mca_btl_smcuda_poll_ring_add(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep);

/* removes the name of our segment, if it has one (btl_smcuda_component.c) */
void mca_btl_smcuda_unlink_segment(mca_btl_smcuda_module_t *m);
/* Gives a named segment made without its name (O_TMPFILE) that name, once:
 * at the first add_procs, when the job's peers are about to open it. */
void mca_btl_smcuda_name_segment(mca_btl_smcuda_module_t *m);

/* CUDA IPC (btl_smcuda_cuda.c; docs/cuda.md, "btl/smcuda"): the per-peer
 * handshake, device registrations, gets from a peer's device memory
 * through a per-peer cache of opened IPC handles */
#if SMCUDA_HAVE_CUDA
unsigned mca_btl_smcuda_cuda_props(void);
int mca_btl_smcuda_cuda_register(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep,
                                 void *base, size_t size, mca_btl_base_registration_handle_t *h);
int mca_btl_smcuda_cuda_get(mca_btl_smcuda_module_t *m, const smcuda_rdma_done_t *done,
                            uint64_t remote_address,
                            const mca_btl_base_registration_handle_t *remote_handle, size_t size);
void mca_btl_smcuda_cuda_ctl(mca_btl_smcuda_module_t *m, const void *msg, size_t len);
int mca_btl_smcuda_cuda_progress(mca_btl_smcuda_module_t *m);
void mca_btl_smcuda_cuda_flush(mca_btl_smcuda_module_t *m);
void mca_btl_smcuda_cuda_fini(mca_btl_smcuda_module_t *m);
void mca_btl_smcuda_cuda_close(void);
#else
static inline unsigned mca_btl_smcuda_cuda_props(void)
{
    return 0;
}
static inline int mca_btl_smcuda_cuda_register(mca_btl_smcuda_module_t *m,
                                               mca_btl_base_endpoint_t *ep, void *base, size_t size,
                                               mca_btl_base_registration_handle_t *h)
{
    (void) m, (void) ep, (void) base, (void) size, (void) h;
    return OPAL_ERR_NOT_SUPPORTED;
}
static inline int mca_btl_smcuda_cuda_get(mca_btl_smcuda_module_t *m, const smcuda_rdma_done_t *d,
                                          uint64_t remote_address,
                                          const mca_btl_base_registration_handle_t *remote_handle,
                                          size_t size)
{
    (void) m, (void) d, (void) remote_address, (void) remote_handle, (void) size;
    return OPAL_ERR_NOT_SUPPORTED;
}
static inline void mca_btl_smcuda_cuda_ctl(mca_btl_smcuda_module_t *m, const void *msg, size_t len)
{
    (void) m, (void) msg, (void) len;
}
static inline int mca_btl_smcuda_cuda_progress(mca_btl_smcuda_module_t *m)
{
    (void) m;
    return 0;
}
static inline void mca_btl_smcuda_cuda_flush(mca_btl_smcuda_module_t *m)
{
    (void) m;
}
static inline void mca_btl_smcuda_cuda_fini(mca_btl_smcuda_module_t *m)
{
    (void) m;
}
static inline void mca_btl_smcuda_cuda_close(void)
{
}
#endif

/* a protocol violation seen in shared memory: report once */
void mca_btl_smcuda_report_corruption(const char *what, int peer);

END_C_DECLS

#endif /* MCA_BTL_SMCUDA_H */

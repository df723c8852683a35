/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_component.c - parameters, performance variables, segment
 * creation at init.
 */
#include "btl_smcuda.h"
#include "btl_smcuda_fifo.h"
#include "btl_smcuda_frag.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_pvar.h"
#include "opal/mca/btl/base/base.h"
#include "opal/mca/pmix/pmix.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#if OPAL_CUDA_SUPPORT
#include "opal/mca/common/cuda/common_cuda.h"
#endif

#include "common_ob1x_param.h"
#include "common_ob1x_help.h"
#include "common_ob1x_pvar.h"

static int smcuda_register(void);
static int smcuda_open(void);
static int smcuda_close(void);
static mca_btl_base_module_t **smcuda_init(int *num_btls, bool progress_threads, bool mpi_threads);

mca_btl_smcuda_component_t mca_btl_smcuda_component = {
    .super =
        {
            .btl_version =
                {
                    MCA_BTL_BASE_VERSION_3_1_0,
                    .mca_component_name = "smcuda",
                    MCA_BASE_MAKE_VERSION(component, OB1X_MAJOR_VERSION, OB1X_MINOR_VERSION,
                                          OB1X_RELEASE_VERSION),
                    .mca_open_component = smcuda_open,
                    .mca_close_component = smcuda_close,
                    .mca_register_component_params = smcuda_register,
                },
            .btl_data =
                {
                    .param_field = MCA_BASE_METADATA_PARAM_CHECKPOINT,
                },
            .btl_init = smcuda_init,
            .btl_progress = mca_btl_smcuda_progress,
        },
};

/* ------------------------------------------------------------------ */
/* parameters                                                          */
/* ------------------------------------------------------------------ */

/* Performance variables (all counters), in the order ompi_info lists them. */
#define COUNTER(which, name, description)                                                          \
    {                                                                                              \
        name, description, MCA_BASE_PVAR_CLASS_COUNTER,                                            \
            &mca_btl_smcuda_component.pv[SMCUDA_PV_##which]                                        \
    }

static const ob1x_pvar_t pvars[] = {
    COUNTER(FBOX_MESSAGES, "fbox_messages", "Messages sent through a peer's fast-box ring"),
    COUNTER(FBOX_BYTES, "fbox_bytes",
            "Bytes (upper-layer header + payload) sent through fast-box rings"),
    COUNTER(FIFO_MESSAGES, "fifo_messages", "Fragments pushed into a peer's receive FIFO"),
    COUNTER(FIFO_BYTES, "fifo_bytes",
            "Bytes (upper-layer header + payload) sent through receive FIFOs"),
    COUNTER(SENDI_MESSAGES, "sendi_messages",
            "Messages accepted by the immediate send (btl_sendi), ring or FIFO"),
    COUNTER(SENDI_BYTES, "sendi_bytes", "Bytes accepted by the immediate send"),
    COUNTER(PUT_MESSAGES, "put_messages", "Single-copy writes (btl_put)"),
    COUNTER(PUT_BYTES, "put_bytes", "Bytes written by btl_put"),
    COUNTER(GET_MESSAGES, "get_messages", "Single-copy reads (btl_get)"),
    COUNTER(GET_BYTES, "get_bytes", "Bytes read by btl_get"),
    COUNTER(FLOW_CONTROL_STALLS, "flow_control_stalls",
            "Sends queued because the peer's FIFO was full or older sends were still queued"),
    COUNTER(GET_HELPED_BYTES, "get_helped_bytes",
            "Bytes this process copied into a peer on its behalf, as the helper of a shared get"),
    COUNTER(ATOMIC_OPS, "atomic_ops",
            "Atomic operations started (btl_atomic_op, btl_atomic_fop, btl_atomic_cswap); each is "
            "applied by the target process and answered with the old value"),
    COUNTER(
        CMA_BOUNCED_BYTES, "cma_bounced_bytes",
        "Bytes of single-copy transfers (CMA) moved through a bounce buffer because the kernel's "
        "copy would have run at its slow distance (destination 1..15 bytes past the source modulo "
        "4096)"),
    COUNTER(HANDOFF_SAMPLES, "handoff_samples",
            "Fragments from local peers whose push-to-pop delay this process timed as a sample of "
            "the hand-off between the two cores (btl_smcuda_far_handoff_ns)"),
    {"handoff_ns",
     "The least push-to-pop delay of the last 16 hand-off samples, in ns, as published to "
     "senders (0: none yet); a sender takes this process for far from btl_smcuda_far_handoff_ns "
     "up",
     MCA_BASE_PVAR_CLASS_LEVEL, &mca_btl_smcuda_component.pv[SMCUDA_PV_HANDOFF_NS]},
    COUNTER(GUEST_PEERS, "guest_peers",
            "Local peers of other jobs (MPI_Comm_spawn, MPI_Comm_connect/accept) reached through "
            "shared memory"),
    COUNTER(FBOX_ANSWERS, "fbox_answers",
            "Ring records of more than one cache line that answered a record of the peer, "
            "written with their first line last (the line the waiting peer polls)"),
    COUNTER(IPC_SETUPS_OK, "ipc_setups_ok",
            "Local peers with which the CUDA IPC handshake turned IPC on (this process's side)"),
    COUNTER(IPC_SETUPS_BAD, "ipc_setups_bad",
            "Local peers with which the CUDA IPC handshake ended without IPC (their device "
            "buffers are staged through host memory)"),
    COUNTER(IPC_CACHE_HITS, "ipc_cache_hits",
            "Gets from a peer's device memory served by an IPC mapping already open"),
    COUNTER(IPC_CACHE_MISSES, "ipc_cache_misses",
            "Gets from a peer's device memory that opened an IPC handle (cuIpcOpenMemHandle)"),
    COUNTER(IPC_CACHE_EVICTIONS, "ipc_cache_evictions",
            "IPC mappings closed before finalize: least recently used ones for room "
            "(btl_smcuda_cuda_ipc_cache_size), or of an allocation the peer freed"),
    COUNTER(IPC_BYTES, "ipc_bytes", "Bytes read from peers' device memory by CUDA IPC"),
    {"ipc_peers", "Local peers with which CUDA IPC is in use", MCA_BASE_PVAR_CLASS_LEVEL,
     &mca_btl_smcuda_component.pv[SMCUDA_PV_IPC_PEERS]},
    {"ipc_peer_mask",
     "CUDA IPC in use per local peer of this job: bit r set when it is with local rank r "
     "(r < 64)",
     MCA_BASE_PVAR_CLASS_LEVEL, &mca_btl_smcuda_component.pv[SMCUDA_PV_IPC_PEER_MASK]},
};

_Static_assert(sizeof(pvars) / sizeof(pvars[0]) == SMCUDA_PV_COUNT, "one row per counter");

#define C(field) (&mca_btl_smcuda_component.field)
#define B(field) (&mca_btl_smcuda.super.field)

static const mca_base_var_enum_value_t mechanisms[] = {
    {SMCUDA_COPY_CMA, "cma"}, {SMCUDA_COPY_NONE, "none"}, {0, NULL}};

/* Every MCA parameter of btl/smcuda but those of the BTL base, in the order
 * ompi_info lists them; the base's that need more than its own checks come
 * first, as check-only rows. Sizes and counts that the layout rounds or
 * clamps are not refused (see sanitize_params). */
static const ob1x_param_t params[] = {
    {.name = "eager_limit",
     .type = MCA_BASE_VAR_TYPE_SIZE_T,
     .storage = B(btl_eager_limit),
     .min = 0,
     .max = SMCUDA_MAX_FRAG_SIZE,
     .valid_text = "0..64 MiB",
     .flags = OB1X_PARAM_CHECK_ONLY},
    {.name = "max_send_size",
     .type = MCA_BASE_VAR_TYPE_SIZE_T,
     .storage = B(btl_max_send_size),
     .min = 0,
     .max = SMCUDA_MAX_FRAG_SIZE,
     .valid_text = "0..64 MiB",
     .flags = OB1X_PARAM_CHECK_ONLY},
    {.name = "rndv_eager_limit",
     .type = MCA_BASE_VAR_TYPE_SIZE_T,
     .storage = B(btl_rndv_eager_limit),
     .min = 0,
     .max = OB1X_PARAM_NO_MAX,
     .flags = OB1X_PARAM_CHECK_ONLY},
    {.name = "fbox_size",
     .type = MCA_BASE_VAR_TYPE_UNSIGNED_INT,
     .storage = C(fbox_size),
     .def = 8 * 1024,
     .level = OPAL_INFO_LVL_5,
     .description = "Bytes of each per-peer fast-box ring (power of two, 4 KiB..1 MiB; rounded "
                    "up)"},
    {.name = "fbox_count",
     .type = MCA_BASE_VAR_TYPE_UNSIGNED_INT,
     .storage = C(fbox_count),
     .def = 64,
     .level = OPAL_INFO_LVL_5,
     .description = "Number of local peers (lowest local ranks first) that get a fast-box ring "
                    "towards this process; others use only the FIFO"},
    {.name = "fbox_max_size",
     .type = MCA_BASE_VAR_TYPE_UNSIGNED_INT,
     .storage = C(fbox_max_size),
     .def = 2048,
     .level = OPAL_INFO_LVL_5,
     .description = "Largest message (upper-layer header + payload, bytes) sent through a "
                    "fast-box ring; at most fbox_size/4 and eager_limit"},
    {.name = "fbox_far_max_size",
     .type = MCA_BASE_VAR_TYPE_UNSIGNED_INT,
     .storage = C(fbox_far_max_size),
     .def = 1024,
     .level = OPAL_INFO_LVL_5,
     .description = "Largest message (upper-layer header + payload, bytes) sent through the "
                    "fast-box ring of a peer measured far (see far_handoff_ns): larger ones go by "
                    "FIFO fragments, which stream faster where the cores share no cache (at most "
                    "fbox_max_size)"},
    {.name = "fifo_size",
     .type = MCA_BASE_VAR_TYPE_UNSIGNED_INT,
     .storage = C(fifo_size),
     .def = 1024,
     .level = OPAL_INFO_LVL_5,
     .description = "Slots of the per-process receive FIFO (power of two; rounded up)"},
    {.name = "free_list_num",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = C(free_list_num),
     .def = 8,
     .min = 0,
     .max = OB1X_PARAM_NO_MAX,
     .level = OPAL_INFO_LVL_9,
     .description = "Initial number of eager fragments (eager_limit bytes each)"},
    {.name = "free_list_max",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = C(free_list_max),
     .def = 256,
     .min = 0,
     .max = OB1X_PARAM_NO_MAX,
     .valid_text = ">= 0 (it sizes the shared fragment pool: there is no unlimited)",
     .level = OPAL_INFO_LVL_9,
     .description = "Maximum number of eager fragments; sizes this process's shared fragment "
                    "pool"},
    {.name = "free_list_inc",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = C(free_list_inc),
     .def = 32,
     .min = 0,
     .max = OB1X_PARAM_NO_MAX,
     .level = OPAL_INFO_LVL_9,
     .description = "Eager fragments added each time the list grows"},
    {.name = "max_frags",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = C(max_frags),
     .def = 64,
     .min = 0,
     .max = OB1X_PARAM_NO_MAX,
     .valid_text = ">= 0 (it sizes the shared fragment pool: there is no unlimited)",
     .level = OPAL_INFO_LVL_9,
     .description = "Maximum number of max_send_size fragments (pipeline protocol)"},
    {.name = "max_pool_size",
     .type = MCA_BASE_VAR_TYPE_SIZE_T,
     .storage = C(max_pool_size),
     .def = 64 * 1024 * 1024,
     .min = 0,
     .max = OB1X_PARAM_NO_MAX,
     .level = OPAL_INFO_LVL_5,
     .description = "Largest shared fragment pool of a process, in bytes (reserved at MPI_Init): "
                    "fewer eager and max_send_size fragments than free_list_max and max_frags ask "
                    "for when those do not fit; refused with a message when not even one of each "
                    "fits"},
    {.name = "single_copy_mechanism",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = C(single_copy_mechanism),
     .def = SMCUDA_COPY_CMA,
     .enum_vals = mechanisms,
     .level = OPAL_INFO_LVL_3,
     .description = "Single-copy mechanism for btl_put/btl_get of host memory: cma "
                    "(process_vm_readv/writev; falls back to none with a notice when the kernel "
                    "refuses it) or none (copy-in/copy-out through shared fragments only)"},
    {.name = "cma_min_size",
     .type = MCA_BASE_VAR_TYPE_SIZE_T,
     .storage = C(cma_min_size),
     .def = 32 * 1024,
     .min = 0,
     .max = OB1X_PARAM_NO_MAX,
     .level = OPAL_INFO_LVL_5,
     .description = "Published to the upper layer as the smallest message for which single "
                    "copy (btl_put/btl_get) pays: below it its fixed costs (a rendezvous round "
                    "trip, system calls) exceed the copies it saves, unless the receiver is far "
                    "(far_handoff_ns). A hint: the BTL itself accepts single copy at any size"},
    {.name = "single_copy_busy_limit",
     .type = MCA_BASE_VAR_TYPE_SIZE_T,
     .storage = C(busy_limit),
     .def = 2 * 1024 * 1024,
     .min = 0,
     .max = OB1X_PARAM_NO_MAX,
     .level = OPAL_INFO_LVL_5,
     .description = "Published to the upper layer as the size from which single copy always "
                    "beats the copy path; below it, in a one-way stream, the measured figures "
                    "decide (single_copy_adapt), while isolated messages and two-way streams "
                    "use single copy from cma_min_size up (0: single copy at every size from "
                    "cma_min_size). A hint: the BTL itself accepts either way at any size"},
    {.name = "single_copy_adapt",
     .type = MCA_BASE_VAR_TYPE_BOOL,
     .storage = C(path_adapt),
     .def = true,
     .level = OPAL_INFO_LVL_5,
     .description = "Published to the upper layer: one-way streams of messages below "
                    "single_copy_busy_limit may take the copy path or single copy, whichever the "
                    "receiving process measured faster per byte (a figure older than 100 ms is "
                    "published as stale, and is measured again by taking its way); false: the "
                    "copy path for them"},
    {.name = "single_copy_split_min",
     .type = MCA_BASE_VAR_TYPE_SIZE_T,
     .storage = C(split_min_size),
     .def = 64 * 1024,
     .min = 0,
     .max = OB1X_PARAM_NO_MAX,
     .level = OPAL_INFO_LVL_5,
     .description = "btl_get of at least this many bytes is shared between both processes: the "
                    "reader pulls chunks while the data owner pushes chunks from its progress "
                    "loop (0: never split)"},
    {.name = "fetching_atomics",
     .type = MCA_BASE_VAR_TYPE_BOOL,
     .storage = C(fetching_atomics),
     .def = SMCUDA_FETCHING_ATOMICS_DEFAULT,
     .level = OPAL_INFO_LVL_5,
     .description = "Fetching atomic operations (btl_atomic_fop) are carried out; false: they "
                    "are declined and one-sided MPI does them by get, operation and put under its "
                    "own lock. Default false with Open MPI older than 4.1.5, whose osc/rdma puts "
                    "the results of MPI_Get_accumulate on derived datatypes in the wrong place "
                    "whenever a BTL carries them out (compare-and-swap is not affected and always "
                    "carried out)"},
    {.name = "backing_directory",
     .type = MCA_BASE_VAR_TYPE_STRING,
     .storage = C(backing_directory),
     .def_string = "/dev/shm",
     .level = OPAL_INFO_LVL_3,
     .flags = OB1X_PARAM_READONLY,
     .description = "Directory that holds the shared-memory segments (local file system; falls "
                    "back to the job session directory when not writable or full). Segments are "
                    "nameless files there (O_TMPFILE), or with btl_smcuda_named_segment 0600 files "
                    "removed as soon as every local peer has mapped them"},
    {.name = "named_segment",
     .type = MCA_BASE_VAR_TYPE_BOOL,
     .storage = C(named_segment),
     .def = false,
     .level = OPAL_INFO_LVL_5,
     .description = "Give the segment a file name in the backing directory that local peers of "
                    "the job open (removed once all of them have attached it, and by the run time "
                    "when the job ends) instead of sharing it nameless through "
                    "/proc/<pid>/fd/<fd>: for systems where the processes of a job may not open "
                    "each other's /proc entries. Chosen by itself when this process is not "
                    "dumpable or the directory cannot hold nameless files"},
    {.name = "max_guests",
     .type = MCA_BASE_VAR_TYPE_UNSIGNED_INT,
     .storage = C(max_guests),
     .def = 256,
     .min = 0,
     .max = SMCUDA_MAX_GUESTS,
     .level = OPAL_INFO_LVL_5,
     .description = "Local processes of other jobs (MPI_Comm_spawn, MPI_Comm_connect/accept, "
                    "MPI_Comm_join) that can reach this process through shared memory at a "
                    "time; exited ones give their entries back when a new one comes (0..4096; "
                    "0: only processes of the same job); beyond that they use another BTL"},
    {.name = "far_handoff_ns",
     .type = MCA_BASE_VAR_TYPE_UNSIGNED_INT,
     .storage = C(far_handoff_ns),
     .def = 220,
     .level = OPAL_INFO_LVL_5,
     .description = "A receiver that takes at least this many nanoseconds to see a fragment "
                    "pushed into its FIFO (the least of 16 sampled fragments of 1 KiB or more, renewed "
                    "after 1 s) is published to the upper layer as far away: the cores do not "
                    "share a cache and every line that crosses costs that much, so single copy "
                    "beats the copy path below cma_min_size too; a figure of 4 times this or "
                    "more means the receiver was busy, not far (0: every peer is far; a large "
                    "value: none is)"},
    {.name = "cuda_ipc_cache_size",
     .type = MCA_BASE_VAR_TYPE_UNSIGNED_INT,
     .storage = C(cuda_ipc_cache_size),
     .def = 64,
     .min = 1,
     .max = 65536,
     .valid_text = "1..65536",
     .level = OPAL_INFO_LVL_5,
     .description = "Peer GPU allocations kept mapped (CUDA IPC handles left open), per local "
                    "peer; beyond it the least recently used mapping is closed (each costs "
                    "device address space, and opening one about 90 us)"},
    {.name = "cuda_copy_piece",
     .type = MCA_BASE_VAR_TYPE_SIZE_T,
     .storage = C(cuda_copy_piece),
     .def = 1024 * 1024,
     .min = 0,
     .max = OB1X_PARAM_NO_MAX,
     .level = OPAL_INFO_LVL_5,
     .description = "A get from a peer's GPU memory is split into asynchronous copies of this "
                    "many bytes, all in flight together (at most 32: larger pieces beyond; 0: "
                    "32 pieces)"},
    {.name = "verbose",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = C(verbose),
     .def = 0,
     .level = OPAL_INFO_LVL_9,
     .description = "Verbosity of btl/smcuda diagnostics (0: errors only)"},
};

#define N_PARAMS (sizeof(params) / sizeof(params[0]))

static void set_module_defaults(mca_btl_base_module_t *b)
{
    b->btl_exclusivity = MCA_BTL_EXCLUSIVITY_HIGH + 1; /* above vader (HIGH) */
    b->btl_eager_limit = 4 * 1024;
    b->btl_rndv_eager_limit = 4 * 1024;
    b->btl_max_send_size = 64 * 1024;
    b->btl_rdma_pipeline_send_length = 4 * 1024;
    b->btl_rdma_pipeline_frag_size = 2 * 1024 * 1024;
    b->btl_min_rdma_pipeline_size = INT32_MAX;
    b->btl_latency = 1;
    b->btl_bandwidth = 40000;
    b->btl_flags = MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_PUT | MCA_BTL_FLAGS_GET |
                   MCA_BTL_FLAGS_ATOMIC_OPS | MCA_BTL_FLAGS_ATOMIC_FOPS;
    /* applied with CPU atomics by the target: coherent with the processes'
     * own atomics on shared memory (GLOB) */
    b->btl_atomic_flags =
        MCA_BTL_ATOMIC_SUPPORTS_ADD | MCA_BTL_ATOMIC_SUPPORTS_AND | MCA_BTL_ATOMIC_SUPPORTS_OR |
        MCA_BTL_ATOMIC_SUPPORTS_XOR | MCA_BTL_ATOMIC_SUPPORTS_LAND | MCA_BTL_ATOMIC_SUPPORTS_LOR |
        MCA_BTL_ATOMIC_SUPPORTS_LXOR | MCA_BTL_ATOMIC_SUPPORTS_SWAP | MCA_BTL_ATOMIC_SUPPORTS_MIN |
        MCA_BTL_ATOMIC_SUPPORTS_MAX | MCA_BTL_ATOMIC_SUPPORTS_CSWAP | MCA_BTL_ATOMIC_SUPPORTS_GLOB;
    b->btl_get_limit = SIZE_MAX;
    b->btl_put_limit = SIZE_MAX;
    b->btl_get_alignment = 0;
    b->btl_put_alignment = 0;
    b->btl_registration_handle_size = SMCUDA_HOST_HANDLE_SIZE;
}

static int smcuda_register(void)
{
    mca_btl_smcuda_component_t *c = &mca_btl_smcuda_component;
    const mca_base_component_t *v = &c->super.btl_version;
    int rc;

    ob1x_help_dirs_add(OB1X_HELP_SRCDIR);
    rc = ob1x_params_register(v, params, N_PARAMS, MCA_BASE_VAR_SCOPE_LOCAL);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    (void) ob1x_pvars_register(v, pvars, SMCUDA_PV_COUNT);

    set_module_defaults(&mca_btl_smcuda.super);
    mca_btl_smcuda_module_set_ops(&mca_btl_smcuda.super);
    return mca_btl_base_param_register(&c->super.btl_version, &mca_btl_smcuda.super);
}

static int smcuda_open(void)
{
    int v = mca_btl_smcuda_component.verbose;

    /* btl_base_verbose counts too (why CUDA IPC is off with a peer) */
    if (opal_btl_base_framework.framework_verbose > v) {
        v = opal_btl_base_framework.framework_verbose;
    }
    mca_btl_smcuda_component.output = opal_output_open(NULL);
    opal_output_set_verbosity(mca_btl_smcuda_component.output, v);
    return OPAL_SUCCESS;
}

/* On an Open MPI built with CUDA support (OPAL_CUDA_SUPPORT in its
 * opal_config.h), stock ob1's datatype engine recognises device buffers
 * only once a BTL has started the stock CUDA library; the stock smcuda,
 * which this one shadows, is one that does (docs/cuda.md). */
static bool stock_cuda_started;

static void stock_cuda_start(void)
{
#if OPAL_CUDA_SUPPORT
    stock_cuda_started = OPAL_SUCCESS == mca_common_cuda_stage_one_init();
#endif
}

static void stock_cuda_stop(void)
{
#if OPAL_CUDA_SUPPORT
    if (stock_cuda_started) {
        mca_common_cuda_fini();
    }
#endif
    stock_cuda_started = false;
}

static int smcuda_close(void)
{
    /* MPI_Init that failed after our init (an upper layer refused to start, say)
     * may close the framework without finalizing the module: the segment,
     * and a name it may still have, go now */
    (void) mca_btl_smcuda_finalize(&mca_btl_smcuda.super);
    mca_btl_smcuda_cuda_close(); /* the common library's stream and events */
    stock_cuda_stop();
    if (mca_btl_smcuda_component.output > 0) {
        opal_output_close(mca_btl_smcuda_component.output);
        mca_btl_smcuda_component.output = -1;
    }
    return OPAL_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* init: create and publish our segment                                */
/* ------------------------------------------------------------------ */

static uint32_t pow2_ceil(uint32_t v)
{
    uint32_t p = 1;
    while (p < v && p < (1u << 30)) {
        p <<= 1;
    }
    return p;
}

/* Clamps parameters to what the layout supports. */
static void sanitize_params(mca_btl_smcuda_component_t *c, mca_btl_base_module_t *b)
{
    c->fbox_size = pow2_ceil(c->fbox_size < 4096 ? 4096 : c->fbox_size);
    if (c->fbox_size > (1u << 20)) {
        c->fbox_size = 1u << 20;
    }
    if (c->fbox_max_size > c->fbox_size / 4) {
        c->fbox_max_size = c->fbox_size / 4;
    }
    if (c->fbox_max_size > b->btl_eager_limit) {
        c->fbox_max_size = (unsigned int) b->btl_eager_limit;
    }
    c->fifo_size = pow2_ceil(c->fifo_size < 64 ? 64 : c->fifo_size);
    if (b->btl_eager_limit < 64) {
        b->btl_eager_limit = 64;
    }
    if (b->btl_max_send_size < b->btl_eager_limit) {
        b->btl_max_send_size = b->btl_eager_limit;
    }
    if (b->btl_rndv_eager_limit > b->btl_eager_limit) {
        /* the first rendezvous fragment must fit an eager fragment */
        b->btl_rndv_eager_limit = b->btl_eager_limit;
    }
    if (c->free_list_max < 16) {
        c->free_list_max = 16;
    }
    if (c->max_frags < 4) {
        c->max_frags = 4;
    }
}

/* Bytes of one pool buffer (fragment header and payload). */
static uint64_t frag_bytes(size_t payload)
{
    return SMCUDA_ALIGN(SMCUDA_FRAG_HDR_SIZE + (uint64_t) payload, 64);
}

/* How many fragments the shared pool holds: what free_list_max and
 * max_frags ask for, fewer when that is more than max_pool_size (eager
 * fragments first, then max_send_size ones), at least one of each kind in
 * use. Fragments of max_send_size exist only above the eager limit: below
 * it every size fits an eager fragment. Refuses, with a message, what not
 * even that minimum fits. */
static int size_pool(mca_btl_smcuda_module_t *m)
{
    mca_btl_smcuda_component_t *c = &mca_btl_smcuda_component;
    uint64_t cap = c->max_pool_size;
    uint64_t eager = frag_bytes(m->super.btl_eager_limit);
    uint64_t max = m->super.btl_max_send_size > m->super.btl_eager_limit
                       ? frag_bytes(m->super.btl_max_send_size)
                       : 0;

    if (eager + max > cap) {
        /* the same parameters hold on every process: one of them says so */
        if (0 == opal_process_info.my_local_rank) {
            ob1x_show_help_now("help-btl-smcuda.txt", "pool-too-small", opal_process_info.nodename,
                               (unsigned long long) m->super.btl_eager_limit,
                               (unsigned long long) m->super.btl_max_send_size,
                               (unsigned long long) (eager + max), (unsigned long long) cap);
        }
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    m->eager_count = (cap - max) / eager;
    if (m->eager_count > (uint64_t) c->free_list_max) {
        m->eager_count = (uint64_t) c->free_list_max;
    }
    m->max_count = 0;
    if (0 != max) {
        m->max_count = (cap - m->eager_count * eager) / max;
        if (m->max_count > (uint64_t) c->max_frags) {
            m->max_count = (uint64_t) c->max_frags;
        }
    }
    if (m->eager_count < (uint64_t) c->free_list_max ||
        (0 != max && m->max_count < (uint64_t) c->max_frags)) {
        opal_output_verbose(1, c->output,
                            "btl/smcuda: btl_smcuda_max_pool_size %llu holds %llu eager and %llu "
                            "max_send_size fragments (asked: %d and %d)",
                            (unsigned long long) cap, (unsigned long long) m->eager_count,
                            (unsigned long long) m->max_count, c->free_list_max, c->max_frags);
    }
    return OPAL_SUCCESS;
}

/* Whether local peers can open our descriptor through /proc/<pid>/fd: the
 * kernel lets a process of the same user do so only while we are dumpable
 * (ptrace "read" access). */
static bool proc_fd_shareable(void)
{
    return 1 == prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) && 0 == access("/proc/self/fd", X_OK);
}

/* A nameless file in `dir` (O_TMPFILE): nothing to remove, whatever
 * happens to the process, even SIGKILL. -1 with errno set; EOPNOTSUPP (or
 * EISDIR/EINVAL from older kernels) when the file system cannot. */
static int create_nameless(mca_btl_smcuda_module_t *m, const char *dir)
{
    snprintf(m->seg_path, sizeof(m->seg_path), "%s", dir);
    m->seg_named = false;
    return open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, S_IRUSR | S_IWUSR);
}

/* The process that named the segment (see unlink_at_exit). */
static pid_t seg_namer;

/* A process that exits without closing the BTL (an MPI_Init that fails
 * after the segment was made ends in exit, not in MPI_Finalize) removes
 * the segment's name itself: the run time's cleanup of the file, which a
 * killed process depends on, was once not done before mpirun exited (a
 * loaded test run). Not in a forked child: the name is its parent's. */
static void __attribute__((destructor)) unlink_at_exit(void)
{
    if (mca_btl_smcuda.seg_named && getpid() == seg_namer) {
        mca_btl_smcuda_unlink_segment(&mca_btl_smcuda);
    }
}

/* Asks the run time to remove the name when the job ends: a process
 * killed before every peer attached (and so before the last one removed
 * the name) cannot do it itself. */
static void register_name_cleanup(mca_btl_smcuda_module_t *m)
{
    if (NULL != opal_pmix.register_cleanup) {
        (void) opal_pmix.register_cleanup(m->seg_path, false, false, false);
    }
}

/* A file named after our job, rank and pid. Where the file system can, it
 * is made without a name (O_TMPFILE) and named only at add_procs
 * (mca_btl_smcuda_name_segment): an MPI_Init that fails before, even by a
 * kill, leaves nothing; the run time's cleanup of a killed process's
 * files, which it would otherwise depend on, was seen to miss them. */
static int create_named(mca_btl_smcuda_module_t *m, const char *dir)
{
    int fd;

    snprintf(m->seg_path, sizeof(m->seg_path), "%s/ob1x_smcuda.%u.%u.%d", dir,
             (unsigned) OPAL_PROC_MY_NAME.jobid, (unsigned) OPAL_PROC_MY_NAME.vpid, (int) getpid());
    m->seg_named = true;
    seg_namer = getpid();
    fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, S_IRUSR | S_IWUSR);
    if (fd >= 0) {
        m->seg_unnamed = true;
        return fd;
    }
    m->seg_unnamed = false;
    register_name_cleanup(m);
    return open(m->seg_path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, S_IRUSR | S_IWUSR);
}

void mca_btl_smcuda_name_segment(mca_btl_smcuda_module_t *m)
{
    char self_fd[64];

    if (!m->seg_named || !m->seg_unnamed) {
        return;
    }
    m->seg_unnamed = false;
    register_name_cleanup(m);
    snprintf(self_fd, sizeof(self_fd), "/proc/self/fd/%d", m->seg_fd);
    if (0 != linkat(AT_FDCWD, self_fd, AT_FDCWD, m->seg_path, AT_SYMLINK_FOLLOW)) {
        /* the peers cannot open it: they find us unreachable */
        opal_output_verbose(1, mca_btl_smcuda_component.output,
                            "btl/smcuda: cannot name the segment %s: %s", m->seg_path,
                            strerror(errno));
        m->seg_named = false;
    }
}

/* Removes the segment's name, if it has one (still). */
void mca_btl_smcuda_unlink_segment(mca_btl_smcuda_module_t *m)
{
    if (m->seg_named) {
        if (!m->seg_unnamed) {
            (void) unlink(m->seg_path);
        }
        m->seg_named = false;
        m->seg_unnamed = false;
    }
}

/* Creates our segment file in `dir` (0600 whatever the umask), nameless
 * unless peers could not open it through /proc, with all of its `size`
 * bytes reserved: a tmpfs (such as a container's small /dev/shm) accepts a
 * sparse file of any size and raises SIGBUS only when a page is first
 * touched, in the middle of a transfer; reserving now turns that into an
 * error here. Returns the descriptor, or -1 with errno set and nothing
 * left behind. */
static int create_backing_file(mca_btl_smcuda_module_t *m, const char *dir, uint64_t size)
{
    int fd = -1, err;

    if (!mca_btl_smcuda_component.named_segment && proc_fd_shareable()) {
        fd = create_nameless(m, dir);
        if (fd < 0 && EOPNOTSUPP != errno && EISDIR != errno && EINVAL != errno) {
            return -1;
        }
    }
    if (fd < 0) {
        fd = create_named(m, dir);
        if (fd < 0) {
            m->seg_named = false;
            return -1;
        }
    }
    (void) fchmod(fd, S_IRUSR | S_IWUSR);
    err = 0 == ftruncate(fd, (off_t) size) ? posix_fallocate(fd, 0, (off_t) size) : errno;
    if (0 != err) {
        close(fd);
        mca_btl_smcuda_unlink_segment(m);
        errno = err;
        return -1;
    }
    return fd;
}

/* Opens the backing file in btl_smcuda_backing_directory, or, when that
 * is not writable or has no room, in the job session directory. */
static int open_backing(mca_btl_smcuda_module_t *m, uint64_t size)
{
    const char *dir = mca_btl_smcuda_component.backing_directory;
    const char *session = opal_process_info.job_session_dir;
    int fd = -1, err = 0;

    if (NULL != dir && '\0' != dir[0]) {
        fd = create_backing_file(m, dir, size);
        err = errno;
    }
    if (fd < 0 && NULL != session && (NULL == dir || 0 != strcmp(dir, session))) {
        fd = create_backing_file(m, session, size);
        /* a missing or read-only directory is a choice; a full one is news,
         * written here: mpirun 4.1.4 garbles help messages that several
         * processes send it at once during start-up (show_help.c unpack
         * errors), and this one comes from every process of the node */
        if (fd >= 0 && (ENOSPC == err || EFBIG == err || ENOMEM == err)) {
            ob1x_show_help_now("help-btl-smcuda.txt", "segment-moved", ob1x_host(), dir,
                               strerror(err), (unsigned long long) size, session);
        }
        err = fd < 0 ? errno : 0;
    }
    if (fd < 0) {
        ob1x_show_help_now("help-btl-smcuda.txt", "segment-create-failed", ob1x_host(), m->seg_path,
                           (unsigned long long) size, strerror(err));
    }
    return fd;
}

static int create_segment(mca_btl_smcuda_module_t *m)
{
    mca_btl_smcuda_component_t *c = &mca_btl_smcuda_component;
    mca_btl_base_module_t *b = &m->super;
    uint32_t nrings = c->fbox_count < (uint32_t) m->n_local ? c->fbox_count : (uint32_t) m->n_local;
    uint64_t page = (uint64_t) getpagesize();
    uint64_t eager_bytes = m->eager_count * frag_bytes(b->btl_eager_limit);
    uint64_t max_bytes = m->max_count * frag_bytes(b->btl_max_send_size);
    uint64_t jobs_off = page;
    uint64_t guests_off =
        SMCUDA_ALIGN(jobs_off + SMCUDA_COPY_JOBS * sizeof(smcuda_copy_job_t), SMCUDA_CACHE_LINE);
    uint64_t fifo_off =
        SMCUDA_ALIGN(guests_off + (uint64_t) c->max_guests * sizeof(smcuda_guest_t), page);
    uint64_t fbox_off = SMCUDA_ALIGN(fifo_off + sizeof(smcuda_fifo_t) +
                                         (uint64_t) c->fifo_size * sizeof(smcuda_fifo_slot_t),
                                     page);
    uint32_t stride = sizeof(smcuda_fbox_ctl_t) + c->fbox_size;
    uint64_t frag_off = SMCUDA_ALIGN(fbox_off + (uint64_t) nrings * stride, page);
    uint64_t size = SMCUDA_ALIGN(frag_off + eager_bytes + max_bytes, page);
    smcuda_seg_hdr_t *hdr;
    int fd;

    fd = open_backing(m, size);
    if (fd < 0) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    m->seg = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED == m->seg) {
        m->seg = NULL;
        ob1x_show_help_now("help-btl-smcuda.txt", "segment-map-failed", ob1x_host(), m->seg_path,
                           (unsigned long long) size, strerror(errno));
        close(fd);
        mca_btl_smcuda_unlink_segment(m);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    /* kept: peers open it through /proc/<pid>/fd/<fd> */
    m->seg_fd = fd;
    m->seg_size = size;
    if (1 == m->n_local) {
        mca_btl_smcuda_unlink_segment(m); /* no peer of our job will open it by name */
    }

    hdr = m->hdr = (smcuda_seg_hdr_t *) m->seg;
    hdr->version = SMCUDA_SHM_VERSION;
    hdr->n_local = (uint32_t) m->n_local;
    hdr->seg_size = size;
    hdr->fifo_off = fifo_off;
    hdr->jobs_off = jobs_off;
    hdr->guests_off = guests_off;
    hdr->guest_count = c->max_guests; /* the file is zero-filled: every entry is free */
    m->guests = (smcuda_guest_t *) (m->seg + guests_off);
    m->jobs = (smcuda_copy_job_t *) (m->seg + jobs_off);
    hdr->fifo_slots = c->fifo_size;
    hdr->fbox_count = nrings;
    hdr->fbox_off = fbox_off;
    hdr->fbox_size = c->fbox_size;
    hdr->fbox_stride = stride;
    hdr->frag_off = frag_off;
    hdr->frag_size = eager_bytes + max_bytes;
    hdr->owner_pid = (int32_t) getpid();
    hdr->owner_lrank = m->my_lrank;
    hdr->owner_base = (uint64_t) (uintptr_t) m->seg;
    hdr->attached = 1; /* ourselves */
    m->fifo = (smcuda_fifo_t *) (m->seg + fifo_off);
    m->fifo_mask = c->fifo_size - 1;
    m->fifo_head = 0;
    smcuda_fifo_init(m->fifo, c->fifo_size);
    m->eager_next = frag_off;
    m->eager_end = m->max_next = frag_off + eager_bytes;
    m->max_end = m->max_next + max_bytes;
    /* release: the whole layout is initialized before the magic that tells
     * attachers it is usable */
    __atomic_store_n(&hdr->magic, SMCUDA_SHM_MAGIC, __ATOMIC_RELEASE);
    return OPAL_SUCCESS;
}

static void select_copy_mechanism(mca_btl_smcuda_module_t *m)
{
    const char *why = NULL;

    m->copy = NULL;
    if (SMCUDA_COPY_CMA == mca_btl_smcuda_component.single_copy_mechanism) {
        if (OPAL_SUCCESS == mca_btl_smcuda_cma_ops.query(&why)) {
            m->copy = &mca_btl_smcuda_cma_ops;
        } else if (0 == m->my_lrank) {
            opal_show_help("help-btl-smcuda.txt", "cma-unavailable", true, ob1x_host(), why);
        }
    }
    if (NULL == m->copy) {
        m->super.btl_flags &= ~(MCA_BTL_FLAGS_PUT | MCA_BTL_FLAGS_GET);
        m->super.btl_put = NULL;
        m->super.btl_get = NULL;
        m->super.btl_register_mem = NULL;
        m->super.btl_deregister_mem = NULL;
        m->super.btl_registration_handle_size = 0;
    }
}

static int publish_segment(mca_btl_smcuda_module_t *m)
{
    smcuda_modex_t mx;
    int rc;

    memset(&mx, 0, sizeof(mx));
    mx.version = SMCUDA_SHM_VERSION;
    mx.lrank = m->my_lrank;
    mx.pid = (int32_t) getpid();
    mx.fd = m->seg_fd;
    mx.seg_size = m->seg_size;
    /* no path: peers open /proc/<pid>/fd/<fd> */
    if (m->seg_named) {
        snprintf(mx.path, sizeof(mx.path), "%s", m->seg_path);
    }
    OPAL_MODEX_SEND(rc, OPAL_PMIX_LOCAL, &mca_btl_smcuda_component.super.btl_version, &mx,
                    sizeof(mx));
    return rc;
}

static mca_btl_base_module_t **smcuda_init(int *num_btls, bool progress_threads, bool mpi_threads)
{
    mca_btl_smcuda_module_t *m = &mca_btl_smcuda;
    mca_btl_base_module_t **btls;
    int rc;

    (void) progress_threads;
    (void) mpi_threads;
    *num_btls = 0;
    if (opal_process_info.my_local_rank < 0 ||
        OPAL_SUCCESS !=
            ob1x_params_check(&mca_btl_smcuda_component.super.btl_version, params, N_PARAMS)) {
        return NULL;
    }
    /* alone on the node, only processes of other jobs (spawned or
     * connecting later) can use us */
    if (0 == opal_process_info.num_local_peers && 0 == mca_btl_smcuda_component.max_guests) {
        return NULL;
    }
    sanitize_params(&mca_btl_smcuda_component, &m->super);
    if (OPAL_SUCCESS != size_pool(m)) {
        return NULL;
    }
    m->my_lrank = opal_process_info.my_local_rank;
    m->n_local = opal_process_info.num_local_peers + 1;
    m->n_eps = m->n_local + (int) mca_btl_smcuda_component.max_guests;
    if (m->my_lrank >= m->n_local) {
        return NULL;
    }
    rc = mca_btl_smcuda_module_init(m);
    if (OPAL_SUCCESS != rc) {
        return NULL;
    }
    select_copy_mechanism(m);
    /* Open MPI 4.1's names for btl_smcuda_atomic_flags lack these two bits
     * (a value holding them cannot be shown), so they join after the
     * parameters are registered */
    m->super.btl_atomic_flags |= MCA_BTL_ATOMIC_SUPPORTS_32BIT | MCA_BTL_ATOMIC_SUPPORTS_FLOAT;
    rc = create_segment(m);
    if (OPAL_SUCCESS != rc) {
        goto undo_module;
    }
    rc = mca_btl_smcuda_frag_lists_init(m);
    if (OPAL_SUCCESS != rc) {
        goto undo_segment;
    }
    rc = publish_segment(m);
    if (OPAL_SUCCESS != rc) {
        goto undo_lists;
    }
    mca_btl_base_active_message_trigger[MCA_BTL_TAG_SMCUDA].cbfunc = mca_btl_smcuda_ctl_cb;
    mca_btl_base_active_message_trigger[MCA_BTL_TAG_SMCUDA].cbdata = m;
    btls = (mca_btl_base_module_t **) malloc(sizeof(*btls));
    if (NULL == btls) {
        goto undo_lists;
    }
    btls[0] = &m->super;
    *num_btls = 1;
    stock_cuda_start();
    /* without the registry's room the upper layer applies its standard
     * rules: nothing to report */
    (void) mca_btl_smcuda_hints_register(m);
    return btls;

undo_lists:
    mca_btl_smcuda_frag_lists_fini(m);
undo_segment:
    munmap(m->seg, m->seg_size);
    close(m->seg_fd);
    m->seg = NULL;
    mca_btl_smcuda_unlink_segment(m);
undo_module:
    free(m->eps);
    free(m->polled);
    free(m->guest_eps);
    m->eps = m->polled = m->guest_eps = NULL;
    OBJ_DESTRUCT(&m->guest_lock);
    OBJ_DESTRUCT(&m->departed);
    return NULL;
}

void mca_btl_smcuda_report_corruption(const char *what, int peer)
{
    static bool reported = false;
    if (!reported) {
        reported = true;
        opal_output(0, "btl/smcuda: shared-memory protocol error (%s) from local peer %d", what,
                    peer);
    }
}

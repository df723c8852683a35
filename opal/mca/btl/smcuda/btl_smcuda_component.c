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

#include "common_ob1x_param.h"

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

static const char *pv_names[SMCUDA_PV_COUNT] = {
    "fbox_messages",
    "fbox_bytes",
    "fifo_messages",
    "fifo_bytes",
    "sendi_messages",
    "sendi_bytes",
    "put_messages",
    "put_bytes",
    "get_messages",
    "get_bytes",
    "flow_control_stalls",
    "get_helped_bytes",
    "atomic_ops",
    "cma_bounced_bytes",
    "stream_single_messages",
    "stream_copy_messages",
    "pull_messages",
    "pull_bytes",
    "guest_peers",
    "far_single_messages",
};
static const char *pv_help[SMCUDA_PV_COUNT] = {
    "Messages sent through a peer's fast-box ring",
    "Bytes (upper-layer header + payload) sent through fast-box rings",
    "Fragments pushed into a peer's receive FIFO",
    "Bytes (upper-layer header + payload) sent through receive FIFOs",
    "Messages accepted by the immediate send (btl_sendi), ring or FIFO",
    "Bytes accepted by the immediate send",
    "Single-copy writes (btl_put)",
    "Bytes written by btl_put",
    "Single-copy reads (btl_get)",
    "Bytes read by btl_get",
    "Sends queued because the peer's FIFO was full or older sends were still queued",
    "Bytes this process copied into a peer on its behalf, as the helper of a shared get",
    "Atomic operations started (btl_atomic_op, btl_atomic_fop, btl_atomic_cswap); each is "
    "applied by the target process and answered with the old value",
    "Bytes of single-copy transfers (CMA) moved through a bounce buffer because the kernel's "
    "copy would have run at its slow distance (destination 1..15 bytes past the source modulo "
    "4096)",
    "Messages of one-way streams below btl_smcuda_single_copy_busy_limit sent by single copy "
    "(the receiver measured it cheaper: btl_smcuda_single_copy_adapt)",
    "Messages of one-way streams below btl_smcuda_single_copy_busy_limit sent through the copy "
    "path",
    "Pipeline fragments received whose data this process read from the sender's buffer "
    "(btl_smcuda_pull_fragments)",
    "Bytes read for pulled pipeline fragments",
    "Local peers of other jobs (MPI_Comm_spawn, MPI_Comm_connect/accept) reached through "
    "shared memory",
    "Messages below btl_smcuda_cma_min_size sent by single copy because the receiver is far "
    "away (btl_smcuda_far_handoff_ns); pipeline fragments below it left for such a receiver "
    "to pull count too",
};

static int reg_uint(const char *name, const char *help, unsigned int *storage,
                    mca_base_var_info_lvl_t lvl)
{
    return mca_base_component_var_register(&mca_btl_smcuda_component.super.btl_version, name, help,
                                           MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL, 0, 0, lvl,
                                           MCA_BASE_VAR_SCOPE_LOCAL, storage);
}

static int reg_int(const char *name, const char *help, int *storage, mca_base_var_info_lvl_t lvl)
{
    return mca_base_component_var_register(&mca_btl_smcuda_component.super.btl_version, name, help,
                                           MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, lvl,
                                           MCA_BASE_VAR_SCOPE_LOCAL, storage);
}

static int reg_size(const char *name, const char *help, size_t *storage)
{
    return mca_base_component_var_register(&mca_btl_smcuda_component.super.btl_version, name, help,
                                           MCA_BASE_VAR_TYPE_SIZE_T, NULL, 0, 0, OPAL_INFO_LVL_5,
                                           MCA_BASE_VAR_SCOPE_LOCAL, storage);
}

static int reg_bool(const char *name, const char *help, bool *storage)
{
    return mca_base_component_var_register(&mca_btl_smcuda_component.super.btl_version, name, help,
                                           MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_5,
                                           MCA_BASE_VAR_SCOPE_LOCAL, storage);
}

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
    b->btl_registration_handle_size = sizeof(mca_btl_base_registration_handle_t);
}

static void register_pvars(const mca_base_component_t *v)
{
    for (int i = 0; i < SMCUDA_PV_COUNT; ++i) {
        (void) mca_base_component_pvar_register(
            v, pv_names[i], pv_help[i], OPAL_INFO_LVL_4, MCA_BASE_PVAR_CLASS_COUNTER,
            MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG, NULL, MCA_BASE_VAR_BIND_NO_OBJECT,
            MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS, NULL, NULL, NULL,
            &mca_btl_smcuda_component.pv[i]);
    }
}

static int smcuda_register(void)
{
    mca_btl_smcuda_component_t *c = &mca_btl_smcuda_component;
    const mca_base_component_t *v = &c->super.btl_version;
    static const mca_base_var_enum_value_t mechs[] = {
        {SMCUDA_COPY_CMA, "cma"}, {SMCUDA_COPY_NONE, "none"}, {0, NULL}};
    mca_base_var_enum_t *mech_enum = NULL;
    int rc;

    c->priority = 0;
    reg_int("priority",
            "Informational rank among shared-memory BTLs (selection between BTLs is by "
            "btl_smcuda_exclusivity, which is above vader's by default)",
            &c->priority, OPAL_INFO_LVL_9);
    c->fbox_size = 8 * 1024;
    reg_uint("fbox_size",
             "Bytes of each per-peer fast-box ring (power of two, 4 KiB..1 MiB; rounded up)",
             &c->fbox_size, OPAL_INFO_LVL_5);
    c->fbox_count = 64;
    reg_uint("fbox_count",
             "Number of local peers (lowest local ranks first) that get a fast-box ring "
             "towards this process; others use only the FIFO",
             &c->fbox_count, OPAL_INFO_LVL_5);
    c->fbox_max_size = 2048;
    reg_uint("fbox_max_size",
             "Largest message (upper-layer header + payload, bytes) sent through a fast-box "
             "ring; at most fbox_size/4 and eager_limit",
             &c->fbox_max_size, OPAL_INFO_LVL_5);
    c->fifo_size = 1024;
    reg_uint("fifo_size", "Slots of the per-process receive FIFO (power of two; rounded up)",
             &c->fifo_size, OPAL_INFO_LVL_5);
    c->free_list_num = 8;
    reg_int("free_list_num", "Initial number of eager fragments (eager_limit bytes each)",
            &c->free_list_num, OPAL_INFO_LVL_9);
    c->free_list_max = 256;
    reg_int("free_list_max",
            "Maximum number of eager fragments; sizes this process's shared fragment pool",
            &c->free_list_max, OPAL_INFO_LVL_9);
    c->free_list_inc = 32;
    reg_int("free_list_inc", "Eager fragments added each time the list grows", &c->free_list_inc,
            OPAL_INFO_LVL_9);
    c->max_frags = 64;
    reg_int("max_frags", "Maximum number of max_send_size fragments (pipeline protocol)",
            &c->max_frags, OPAL_INFO_LVL_9);
    c->max_pool_size = 64 * 1024 * 1024;
    reg_size("max_pool_size",
             "Largest shared fragment pool of a process, in bytes (reserved at MPI_Init): fewer "
             "eager and max_send_size fragments than free_list_max and max_frags ask for when "
             "those do not fit; refused with a message when not even one of each fits",
             &c->max_pool_size);

    c->single_copy_mechanism = SMCUDA_COPY_CMA;
    rc = mca_base_var_enum_create("btl_smcuda_single_copy_mechanisms", mechs, &mech_enum);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = mca_base_component_var_register(
        v, "single_copy_mechanism",
        "Single-copy mechanism for btl_put/btl_get of host memory: cma (process_vm_readv/"
        "writev; falls back to none with a notice when the kernel refuses it) or none "
        "(copy-in/copy-out through shared fragments only)",
        MCA_BASE_VAR_TYPE_INT, mech_enum, 0, 0, OPAL_INFO_LVL_3, MCA_BASE_VAR_SCOPE_LOCAL,
        &c->single_copy_mechanism);
    OBJ_RELEASE(mech_enum);
    if (rc < 0) {
        /* the variable system rejected the value; say so on stderr directly
         * (its own help message can be lost when the job ends quickly) */
        opal_output(0, "btl/smcuda: invalid value for btl_smcuda_single_copy_mechanism; "
                       "valid values: cma, none. btl/smcuda disabled");
        return rc;
    }
    c->cma_min_size = 32 * 1024;
    reg_size("cma_min_size",
             "Messages smaller than this many bytes are not offered for single copy (the "
             "registration is declined), so the upper layer moves them through shared fragments",
             &c->cma_min_size);
    c->busy_limit = 2 * 1024 * 1024;
    reg_size("single_copy_busy_limit",
             "Messages below this many bytes, sent while another single-copy send is still in "
             "flight and no peer is streaming to us (a one-way stream), take the path that "
             "single_copy_adapt chooses; isolated messages and two-way streams use single copy "
             "from cma_min_size up (0: always single copy)",
             &c->busy_limit);
    c->path_adapt = true;
    reg_bool("single_copy_adapt",
             "One-way streams of messages below single_copy_busy_limit take the copy path or "
             "single copy, whichever the receiving process measures faster per byte (each is "
             "re-measured at least every 100 ms); false: always the copy path",
             &c->path_adapt);
    c->pull_fragments = 1;
    reg_int("pull_fragments",
            "Pipeline fragments (messages above the eager limit that the upper layer sends "
            "through fragments) leave their data in the sender's buffer for the receiver to "
            "read by single copy: 0 never, 1 when the receiver has measured single copy "
            "cheaper than the copy path (as single_copy_adapt does for streams), 2 always",
            &c->pull_fragments, OPAL_INFO_LVL_5);
    c->split_min_size = 64 * 1024;
    reg_size("single_copy_split_min",
             "btl_get of at least this many bytes is shared between both processes: the reader "
             "pulls chunks while the data owner pushes chunks from its progress loop (0: never "
             "split)",
             &c->split_min_size);
    c->fetching_atomics = SMCUDA_FETCHING_ATOMICS_DEFAULT;
    reg_bool("fetching_atomics",
             "Fetching atomic operations (btl_atomic_fop) are carried out; false: they are "
             "declined and one-sided MPI does them by get, operation and put under its own "
             "lock. Default false with Open MPI older than 4.1.5, whose osc/rdma puts the "
             "results of MPI_Get_accumulate on derived datatypes in the wrong place whenever "
             "a BTL carries them out (compare-and-swap is not affected and always carried out)",
             &c->fetching_atomics);
    c->backing_directory = "/dev/shm";
    mca_base_component_var_register(
        v, "backing_directory",
        "Directory that holds the shared-memory segments (local file system; falls back to "
        "the job session directory when not writable or full). Segments are nameless files "
        "there (O_TMPFILE), or with btl_smcuda_named_segment 0600 files removed as soon as "
        "every local peer has mapped them",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_3, MCA_BASE_VAR_SCOPE_READONLY,
        &c->backing_directory);
    c->named_segment = false;
    reg_bool("named_segment",
             "Give the segment a file name in the backing directory that local peers of the job "
             "open (removed once all of them have attached it, and by the run time when the job "
             "ends) instead of sharing it nameless through /proc/<pid>/fd/<fd>: for systems where "
             "the processes of a job may not open each other's /proc entries. Chosen by itself "
             "when this process is not dumpable or the directory cannot hold nameless files",
             &c->named_segment);
    c->max_guests = 256;
    reg_uint("max_guests",
             "Local processes of other jobs (MPI_Comm_spawn, MPI_Comm_connect/accept, "
             "MPI_Comm_join) that can reach this process through shared memory at a time; "
             "exited ones give their entries back when a new one comes (0..4096; 0: only "
             "processes of the same job); beyond that they use another BTL",
             &c->max_guests, OPAL_INFO_LVL_5);
    c->far_handoff_ns = 220;
    reg_uint("far_handoff_ns",
             "A receiver that takes at least this many nanoseconds to see a fragment pushed "
             "into its FIFO (the least of 16 sampled pipeline fragments, renewed after 1 s) is "
             "far away: the cores do not share a cache, every line that crosses "
             "costs that much, and messages from the eager limit up to cma_min_size go by "
             "single copy instead of the copy path; a figure of 4 times this or more means the "
             "receiver was busy, not far (0: every peer is far; a large value: none is)",
             &c->far_handoff_ns, OPAL_INFO_LVL_5);
    c->verbose = 0;
    reg_int("verbose", "Verbosity of btl/smcuda diagnostics (0: errors only)", &c->verbose,
            OPAL_INFO_LVL_9);

    register_pvars(v);

    set_module_defaults(&mca_btl_smcuda.super);
    mca_btl_smcuda_module_set_ops(&mca_btl_smcuda.super);
    return mca_btl_base_param_register(&c->super.btl_version, &mca_btl_smcuda.super);
}

static int smcuda_open(void)
{
    /* where help-btl-smcuda.txt is: installed, or in the build tree */
    (void) opal_show_help_add_dir(SMCUDA_HELP_DIR);
    (void) opal_show_help_add_dir(SMCUDA_SRC_HELP_DIR);
    mca_btl_smcuda_component.output = opal_output_open(NULL);
    opal_output_set_verbosity(mca_btl_smcuda_component.output, mca_btl_smcuda_component.verbose);
    return OPAL_SUCCESS;
}

static int smcuda_close(void)
{
    /* MPI_Init that failed after our init (the PML refused to start, say)
     * may close the framework without finalizing the module: the segment,
     * and a name it may still have, go now */
    (void) mca_btl_smcuda_finalize(&mca_btl_smcuda.super);
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

/* Refuses values no clamping can make sense of (negative counts and sizes,
 * fragments too large for the shared pool), naming the parameter. */
static bool params_valid(const mca_btl_smcuda_component_t *c, const mca_btl_base_module_t *b)
{
    const char *bad = NULL;

    if (ob1x_param_size_negative(b->btl_eager_limit) || b->btl_eager_limit > SMCUDA_MAX_FRAG_SIZE) {
        bad = "btl_smcuda_eager_limit must be 0..64 MiB";
    } else if (ob1x_param_size_negative(b->btl_max_send_size) ||
               b->btl_max_send_size > SMCUDA_MAX_FRAG_SIZE) {
        bad = "btl_smcuda_max_send_size must be 0..64 MiB";
    } else if (ob1x_param_size_negative(b->btl_rndv_eager_limit)) {
        bad = "btl_smcuda_rndv_eager_limit must be >= 0";
    } else if (c->pull_fragments < 0 || c->pull_fragments > 2) {
        bad = "btl_smcuda_pull_fragments must be 0, 1 or 2";
    } else if (ob1x_param_size_negative(c->cma_min_size)) {
        bad = "btl_smcuda_cma_min_size must be >= 0";
    } else if (ob1x_param_size_negative(c->busy_limit)) {
        bad = "btl_smcuda_single_copy_busy_limit must be >= 0";
    } else if (ob1x_param_size_negative(c->split_min_size)) {
        bad = "btl_smcuda_single_copy_split_min must be >= 0";
    } else if (c->max_guests > SMCUDA_MAX_GUESTS) {
        bad = "btl_smcuda_max_guests must be 0..4096";
    } else if (c->free_list_num < 0) {
        bad = "btl_smcuda_free_list_num must be >= 0";
    } else if (c->free_list_inc < 0) {
        bad = "btl_smcuda_free_list_inc must be >= 0";
    } else if (c->free_list_max < 0) {
        bad = "btl_smcuda_free_list_max must be >= 0 (it sizes the shared fragment pool: "
              "there is no unlimited)";
    } else if (ob1x_param_size_negative(c->max_pool_size)) {
        bad = "btl_smcuda_max_pool_size must be >= 0";
    } else if (c->max_frags < 0) {
        bad = "btl_smcuda_max_frags must be >= 0 (it sizes the shared fragment pool: there "
              "is no unlimited)";
    }
    if (NULL != bad) {
        opal_output(0, "btl/smcuda: invalid MCA parameter: %s; btl/smcuda disabled", bad);
        return false;
    }
    return true;
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

/* Shows a message of help-btl-smcuda.txt on this process's stderr. Open
 * MPI 4.1.4's mpirun loses the help messages processes send it while the
 * job fails (unpack errors in orte/util/show_help.c, seen whenever its
 * output is not a terminal), so the text is rendered here and written
 * directly. */
void mca_btl_smcuda_show_help(const char *topic, ...)
{
    va_list ap;
    char *msg;

    va_start(ap, topic);
    msg = opal_show_help_vstring("help-btl-smcuda.txt", topic, true, ap);
    va_end(ap);
    if (NULL != msg) {
        opal_output(0, "%s", msg);
        free(msg);
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
            mca_btl_smcuda_show_help("pool-too-small", opal_process_info.nodename,
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

/* A file named after our job, rank and pid, which the run time is asked to
 * remove when the job ends: a process killed before every peer attached
 * (and so before the last one removed the name) cannot do it itself. */
static int create_named(mca_btl_smcuda_module_t *m, const char *dir)
{
    snprintf(m->seg_path, sizeof(m->seg_path), "%s/ob1x_smcuda.%u.%u.%d", dir,
             (unsigned) OPAL_PROC_MY_NAME.jobid, (unsigned) OPAL_PROC_MY_NAME.vpid, (int) getpid());
    m->seg_named = true;
    if (NULL != opal_pmix.register_cleanup) {
        (void) opal_pmix.register_cleanup(m->seg_path, false, false, false);
    }
    return open(m->seg_path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, S_IRUSR | S_IWUSR);
}

/* Removes the segment's name, if it has one (still). */
void mca_btl_smcuda_unlink_segment(mca_btl_smcuda_module_t *m)
{
    if (m->seg_named) {
        (void) unlink(m->seg_path);
        m->seg_named = false;
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
        /* a missing or read-only directory is a choice; a full one is news */
        if (fd >= 0 && (ENOSPC == err || EFBIG == err || ENOMEM == err)) {
            opal_output(0, "btl/smcuda: %s: %s for %llu bytes; segment placed in %s", dir,
                        strerror(err), (unsigned long long) size, session);
        }
        err = fd < 0 ? errno : 0;
    }
    if (fd < 0) {
        opal_output(0,
                    "btl/smcuda: cannot create a %llu-byte segment (%s: %s); component "
                    "disabled",
                    (unsigned long long) size, m->seg_path, strerror(err));
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
        opal_output(0, "btl/smcuda: cannot map %s (%llu bytes): %s; component disabled",
                    m->seg_path, (unsigned long long) size, strerror(errno));
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
            /* pulled fragments are assembled here; without it none are sent */
            m->pull_cap = m->super.btl_max_send_size;
            if (mca_btl_smcuda_component.pull_fragments > 0 &&
                0 != posix_memalign((void **) &m->pull_buf, 64, m->pull_cap)) {
                m->pull_buf = NULL;
            }
        } else if (0 == m->my_lrank) {
            opal_output(0, "btl/smcuda: CMA single copy unavailable (%s); using copy-in/copy-out",
                        why);
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
        !params_valid(&mca_btl_smcuda_component, &m->super)) {
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

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Component: MCA parameters, selection, initialisation and teardown.
 */
#include "ompi_config.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/runtime/opal_progress.h"
#include "ompi/mca/bml/base/base.h"
#include "ompi/mca/pml/base/pml_base_bsend.h"

#include "common_ob1x_param.h"
#include "common_ob1x_monitoring.h"
#include "ob1x_version.h"
#include "pml_ob1x.h"
#include "pml_ob1x_comm.h"
#include "pml_ob1x_cuda.h"
#include "pml_ob1x_ctl.h"
#include "pml_ob1x_hdr.h"
#include "pml_ob1x_rdma.h"
#include "pml_ob1x_recvfrag.h"
#include "pml_ob1x_recvreq.h"
#include "pml_ob1x_sendreq.h"

static int component_register(void);
static int component_open(void);
static int component_close(void);
static mca_pml_base_module_t *component_init(int *priority, bool progress_threads,
                                             bool mpi_threads);
static int component_finalize(void);

mca_pml_base_component_2_0_0_t mca_pml_ob1x_component = {
    .pmlm_version =
        {
            MCA_PML_BASE_VERSION_2_0_0,
            .mca_component_name = "ob1x",
            .mca_component_major_version = OB1X_MAJOR_VERSION,
            .mca_component_minor_version = OB1X_MINOR_VERSION,
            .mca_component_release_version = OB1X_RELEASE_VERSION,
            .mca_open_component = component_open,
            .mca_close_component = component_close,
            .mca_register_component_params = component_register,
        },
    .pmlm_data =
        {
            .param_field = MCA_BASE_METADATA_PARAM_CHECKPOINT,
        },
    .pmlm_init = component_init,
    .pmlm_finalize = component_finalize,
};

#define P(field) (&mca_pml_ob1x.params.field)

static bool free_list_max_valid(void)
{
    const ob1x_params_t *p = &mca_pml_ob1x.params;
    return -1 == p->free_list_max || p->free_list_max >= p->free_list_num;
}

static bool fault_every_valid(void)
{
    return 1 != mca_pml_ob1x.params.fault_every;
}

/* Every MCA parameter of pml/ob1x, in the order ompi_info lists them. */
static const ob1x_param_t params[] = {
    {.name = "priority",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = P(priority),
     .def = 20,
     .level = OPAL_INFO_LVL_3,
     .description = "Selection priority of pml/ob1x (default 20, as ob1; "
                    "select explicitly with --mca pml ob1x)"},
    {.name = "verbose",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = P(verbose),
     .def = 0,
     .level = OPAL_INFO_LVL_9,
     .description = "Verbosity of pml/ob1x diagnostics, 0 (quiet) to 100"},
    {.name = "free_list_num",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = P(free_list_num),
     .def = 16,
     .min = 0,
     .max = OB1X_PARAM_NO_MAX,
     .level = OPAL_INFO_LVL_9,
     .description = "Requests and held fragments allocated up front (>= 0)"},
    {.name = "free_list_max",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = P(free_list_max),
     .def = -1,
     .valid = free_list_max_valid,
     .valid_text = "-1 or >= pml_ob1x_free_list_num",
     .level = OPAL_INFO_LVL_9,
     .description = "Upper bound of each free list; -1: unbounded"},
    {.name = "free_list_inc",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = P(free_list_inc),
     .def = 64,
     .min = 1,
     .max = OB1X_PARAM_NO_MAX,
     .level = OPAL_INFO_LVL_9,
     .description = "Elements added when a free list grows (>= 1)"},
    {.name = "send_pipeline_depth",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = P(send_pipeline_depth),
     .def = 16,
     .min = 1,
     .max = OB1X_PARAM_NO_MAX,
     .level = OPAL_INFO_LVL_6,
     .description = "FRAG messages a rendezvous sender keeps in flight per message (>= 1). Deep "
                    "enough that the receiver's copies never wait for the sender's (default 16: "
                    "a 1 MiB ping-pong over smcuda takes 38 us, against 104 us with 3)"},
    {.name = "rndv_eager_limit",
     .type = MCA_BASE_VAR_TYPE_SIZE_T,
     .storage = P(rndv_eager_limit),
     .def = 0,
     .min = 0,
     .max = OB1X_PARAM_NO_MAX,
     .valid_text = ">= 0 (a byte count)",
     .level = OPAL_INFO_LVL_5,
     .description = "Payload bytes sent with the first fragment of a rendezvous; 0 uses each "
                    "BTL's btl_<name>_rndv_eager_limit. Never more than the BTL's eager limit."},
    {.name = "sendi_max",
     .type = MCA_BASE_VAR_TYPE_SIZE_T,
     .storage = P(sendi_max),
     .def = 256,
     .min = 0,
     .max = OB1X_PARAM_NO_MAX,
     .valid_text = ">= 0 (a byte count)",
     .level = OPAL_INFO_LVL_5,
     .description = "Largest payload tried with the BTL's immediate send (eager immediate "
                    "protocol) on BTLs that can send in place; BTLs that copy eager data anyway "
                    "get btl_sendi up to their eager limit"},
    {.name = "thread_yield",
     .type = MCA_BASE_VAR_TYPE_BOOL,
     .storage = P(thread_yield),
     .def = true,
     .level = OPAL_INFO_LVL_5,
     .description = "Under MPI_THREAD_MULTIPLE, turn on mpi_yield_when_idle (a pass of "
                    "opal_progress that finds nothing gives up the core) unless it was set "
                    "explicitly. Threads waiting in MPI calls otherwise spin on the core that "
                    "the threads matching and copying data need"},
    {.name = "isend_requestless",
     .type = MCA_BASE_VAR_TYPE_BOOL,
     .storage = P(isend_requestless),
     .def = true,
     .level = OPAL_INFO_LVL_5,
     .description = "Non-blocking standard/ready eager sends of a single-threaded process are "
                    "handed to the BTL before any request exists; the send needs none when the "
                    "descriptor holds a copy of the data or the BTL completes it at once, else "
                    "one is made afterwards (counted by pml_ob1x_late_requests). false: always "
                    "allocate the request first"},
    {.name = "unexpected_limit",
     .type = MCA_BASE_VAR_TYPE_SIZE_T,
     .storage = P(unexpected_limit),
     .def = 64LL << 20,
     .min = 0,
     .max = OB1X_PARAM_NO_MAX,
     .valid_text = ">= 0 (a byte count)",
     .level = OPAL_INFO_LVL_5,
     .description = "Bytes of unexpected eager data a receiver holds before it tells senders to "
                    "use rendezvous (header-only first fragment) until it drains below half; 0 "
                    "disables"},
    {.name = "fault_every",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = P(fault_every),
     .def = 0,
     .min = 0,
     .max = OB1X_PARAM_NO_MAX,
     .valid = fault_every_valid,
     .valid_text = "0 (off) or >= 2",
     .level = OPAL_INFO_LVL_9,
     .description = "Testing aid: every Nth BTL descriptor request of ob1x acts as if the BTL "
                    "were out of resources, to exercise the queue-and-retry paths; 0 (default) "
                    "disables"},
    {.name = "orphan_hold_ms",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = P(orphan_hold_ms),
     .def = 0,
     .min = 0,
     .max = OB1X_PARAM_NO_MAX,
     .level = OPAL_INFO_LVL_9,
     .description = "Testing aid: every communicator the application creates treats the "
                    "messages that reach it during its first N milliseconds as sent to a "
                    "communicator not created here yet (held, counted by "
                    "pml_ob1x_orphan_messages, matched in order afterwards); 0 (default) "
                    "disables"},
    {.name = "use_all_rdma",
     .type = MCA_BASE_VAR_TYPE_BOOL,
     .storage = P(use_all_rdma),
     .def = false,
     .level = OPAL_INFO_LVL_5,
     .description = "RDMA protocols use every BTL to the peer that can do RDMA, also those "
                    "that do not carry its send/recv traffic (lower exclusivity); false: only "
                    "the RDMA BTLs that also send"},
    {.name = "max_rdma_per_request",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = P(max_rdma_per_request),
     .def = 4,
     .min = 1,
     .max = OB1X_MAX_RDMA_BTLS,
     .level = OPAL_INFO_LVL_5,
     .description = "Most BTLs one RDMA message (get, put or RDMA pipeline) is spread over, in "
                    "shares of their bandwidth (btl_<name>_bandwidth) (1 to 4)"},
    {.name = "max_send_per_range",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = P(max_send_per_range),
     .def = 4,
     .min = 1,
     .max = OB1X_PARAM_NO_MAX,
     .level = OPAL_INFO_LVL_5,
     .description = "Most BTLs the FRAGs of one pipelined message are spread over, in shares "
                    "of their bandwidth (>= 1)"},
    {.name = "rdma_retries_limit",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = P(rdma_retries_limit),
     .def = 5,
     .min = 0,
     .max = OB1X_PARAM_NO_MAX,
     .level = OPAL_INFO_LVL_5,
     .description = "Times a failed RDMA operation is tried again before the rest of its "
                    "message goes by send/recv (reported once per process) (>= 0)"},
    {.name = "rdma_fault_every",
     .type = MCA_BASE_VAR_TYPE_INT,
     .storage = P(rdma_fault_every),
     .def = 0,
     .min = 0,
     .max = OB1X_PARAM_NO_MAX,
     .level = OPAL_INFO_LVL_9,
     .description = "Testing aid: every Nth RDMA operation (get or put) of ob1x fails as if "
                    "the BTL had reported an error, to exercise retries and the fallback to "
                    "send/recv; 0 (default) disables, 1 fails every one"},
    {.name = "cuda_test_device_get",
     .type = MCA_BASE_VAR_TYPE_BOOL,
     .storage = P(cuda_test_device_get),
     .def = false,
     .level = OPAL_INFO_LVL_9,
     .description = "Testing aid: every RDMA BTL counts as able to read device (GPU) memory "
                    "(OB1X_BTL_PROP_DEVICE_GET), so that device buffers take the device RGET "
                    "and its refusals and failures can be tested without CUDA IPC; false "
                    "(default) disables"},
};

#define N_PARAMS (sizeof(params) / sizeof(params[0]))

static int component_register(void)
{
    int rc;

    ob1x_help_dirs_add(OB1X_HELP_SRCDIR);
    rc = ob1x_params_register(&mca_pml_ob1x_component.pmlm_version, params, N_PARAMS,
                              MCA_BASE_VAR_SCOPE_READONLY);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    ob1x_cuda_register_params();
    return ob1x_pvars_register_all();
}

static int component_open(void)
{
    mca_pml_ob1x.output = opal_output_open(NULL);
    opal_output_set_verbosity(mca_pml_ob1x.output, mca_pml_ob1x.params.verbose);
    return ob1x_params_check(&mca_pml_ob1x_component.pmlm_version, params, N_PARAMS);
}

static int component_close(void)
{
    ob1x_procs_fini();
    opal_output_close(mca_pml_ob1x.output);
    return OMPI_SUCCESS;
}

static int init_list(opal_free_list_t *list, size_t size, opal_class_t *cls)
{
    const ob1x_params_t *p = &mca_pml_ob1x.params;

    OBJ_CONSTRUCT(list, opal_free_list_t);
    return opal_free_list_init(list, size, opal_cache_line_size, cls, 0, opal_cache_line_size,
                               p->free_list_num, p->free_list_max, p->free_list_inc, NULL, 0, NULL,
                               NULL, NULL);
}

static mca_pml_base_module_t *component_init(int *priority, bool progress_threads, bool mpi_threads)
{
    mca_pml_ob1x_t *m = &mca_pml_ob1x;

    *priority = m->params.priority;
    if (OMPI_SUCCESS != mca_bml_base_init(progress_threads, mpi_threads)) {
        return NULL;
    }
    if (OMPI_SUCCESS != mca_pml_base_bsend_init(mpi_threads)) {
        return NULL;
    }
    if (OMPI_SUCCESS != init_list(&m->send_requests, sizeof(ob1x_send_request_t),
                                  OBJ_CLASS(ob1x_send_request_t)) ||
        OMPI_SUCCESS != init_list(&m->recv_requests, sizeof(ob1x_recv_request_t),
                                  OBJ_CLASS(ob1x_recv_request_t)) ||
        OMPI_SUCCESS !=
            init_list(&m->recv_frags, sizeof(ob1x_recv_frag_t), OBJ_CLASS(ob1x_recv_frag_t)) ||
        OMPI_SUCCESS !=
            init_list(&m->rdma_ops, sizeof(ob1x_rdma_op_t), OBJ_CLASS(ob1x_rdma_op_t))) {
        ob1x_show_help_now("help-mpi-pml-ob1x.txt", "out-of-memory", "its request free lists",
                           "it was not selected", ob1x_host());
        return NULL;
    }
    OBJ_CONSTRUCT(&m->pending_lock, opal_mutex_t);
    OBJ_CONSTRUCT(&m->pending_ctl, opal_list_t);
    OBJ_CONSTRUCT(&m->pending_sends, opal_list_t);
    OBJ_CONSTRUCT(&m->pending_rdma, opal_list_t);
    OBJ_CONSTRUCT(&m->xoff_procs, opal_list_t);
    OBJ_CONSTRUCT(&m->orphan_lock, opal_mutex_t);
    OBJ_CONSTRUCT(&m->orphan_frags, opal_list_t);
    OBJ_CONSTRUCT(&m->held_comms, opal_list_t);
    OBJ_CONSTRUCT(&m->solo_conv, opal_convertor_t);
    m->solo_conv_busy = false;
    m->eager_max_any = SIZE_MAX; /* until add_procs knows the BTLs */
    m->pending_count = 0;
    m->unexpected_bytes = 0;
    m->rdma_live = 0;
    /* Low priority: queued work is rare, and every pass of the polling loop
     * would otherwise pay for the check. The module's pml_progress is NULL
     * so that the PML base does not register it a second time. */
    opal_progress_register_lp(ob1x_progress);
    return &m->super;
}

static int component_finalize(void)
{
    mca_pml_ob1x_t *m = &mca_pml_ob1x;

    opal_progress_unregister(ob1x_progress);
    ob1x_cuda_close();
    ob1x_monitoring_fini();
    ob1x_reg_fini(); /* before the BTLs are finalized */
    mca_pml_base_bsend_fini();
    ob1x_recv_frags_drop(&m->orphan_frags);
    OPAL_LIST_DESTRUCT(&m->pending_ctl);
    /* Requests still pending here belong to an erroneous program; the free
     * list teardown reclaims their memory. */
    while (NULL != opal_list_remove_first(&m->pending_sends)) {
    }
    OBJ_DESTRUCT(&m->pending_sends);
    while (NULL != opal_list_remove_first(&m->pending_rdma)) {
    }
    OBJ_DESTRUCT(&m->pending_rdma);
    while (NULL != opal_list_remove_first(&m->xoff_procs)) {
    }
    OBJ_DESTRUCT(&m->xoff_procs);
    OBJ_DESTRUCT(&m->held_comms); /* empty: del_comm ends every hold */
    OBJ_DESTRUCT(&m->orphan_frags);
    OBJ_DESTRUCT(&m->orphan_lock);
    OBJ_DESTRUCT(&m->solo_conv);
    OBJ_DESTRUCT(&m->pending_lock);
    OBJ_DESTRUCT(&m->recv_frags);
    OBJ_DESTRUCT(&m->rdma_ops);
    OBJ_DESTRUCT(&m->recv_requests);
    OBJ_DESTRUCT(&m->send_requests);
    return OMPI_SUCCESS;
}

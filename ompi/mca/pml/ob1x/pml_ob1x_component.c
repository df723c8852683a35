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
#include "ob1x_version.h"
#include "pml_ob1x.h"
#include "pml_ob1x_ctl.h"
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

/* One read-only MCA variable of this component. */
static void reg(const char *name, const char *desc, mca_base_var_type_t type, void *storage,
                int level)
{
    (void) mca_base_component_var_register(&mca_pml_ob1x_component.pmlm_version, name, desc, type,
                                           NULL, 0, 0, level, MCA_BASE_VAR_SCOPE_READONLY, storage);
}

static void reg_int(const char *name, const char *desc, int *storage, int level)
{
    reg(name, desc, MCA_BASE_VAR_TYPE_INT, storage, level);
}

static void reg_bool(const char *name, const char *desc, bool *storage, int level)
{
    reg(name, desc, MCA_BASE_VAR_TYPE_BOOL, storage, level);
}

static void reg_size(const char *name, const char *desc, size_t *storage, int level)
{
    reg(name, desc, MCA_BASE_VAR_TYPE_SIZE_T, storage, level);
}

static int component_register(void)
{
    ob1x_params_t *p = &mca_pml_ob1x.params;

    *p = (ob1x_params_t){
        .priority = 20,
        .verbose = 0,
        .free_list_num = 16,
        .free_list_max = -1,
        .free_list_inc = 64,
        .send_pipeline_depth = 16,
        .recv_pipeline_depth = 4,
        .rndv_eager_limit = 0,
        .sendi_max = 256,
        .isend_requestless = true,
        .unexpected_limit = 64UL << 20,
        .fault_every = 0,
        .orphan_hold_ms = 0,
    };
    reg_int("priority",
            "Selection priority of pml/ob1x (default 20, as ob1; "
            "select explicitly with --mca pml ob1x)",
            &p->priority, OPAL_INFO_LVL_3);
    reg_int("verbose", "Verbosity of pml/ob1x diagnostics, 0 (quiet) to 100", &p->verbose,
            OPAL_INFO_LVL_9);
    reg_int("free_list_num", "Requests and held fragments allocated up front (>= 0)",
            &p->free_list_num, OPAL_INFO_LVL_9);
    reg_int("free_list_max", "Upper bound of each free list; -1: unbounded", &p->free_list_max,
            OPAL_INFO_LVL_9);
    reg_int("free_list_inc", "Elements added when a free list grows (>= 1)", &p->free_list_inc,
            OPAL_INFO_LVL_9);
    reg_int("send_pipeline_depth",
            "FRAG messages a rendezvous sender keeps in flight per message (>= 1). Deep enough "
            "that the receiver's copies never wait for the sender's (default 16: a 1 MiB "
            "ping-pong over smcuda takes 38 us, against 104 us with 3)",
            &p->send_pipeline_depth, OPAL_INFO_LVL_6);
    reg_int("recv_pipeline_depth",
            "Receive-side pipeline depth, used by the RDMA pipeline protocol (>= 1)",
            &p->recv_pipeline_depth, OPAL_INFO_LVL_6);
    reg_size("rndv_eager_limit",
             "Payload bytes sent with the first fragment of a rendezvous; 0 uses each BTL's "
             "btl_<name>_rndv_eager_limit. Never more than the BTL's eager limit.",
             &p->rndv_eager_limit, OPAL_INFO_LVL_5);
    reg_size("sendi_max",
             "Largest payload tried with the BTL's immediate send (eager immediate protocol) on "
             "BTLs that can send in place; BTLs that copy eager data anyway get btl_sendi up to "
             "their eager limit",
             &p->sendi_max, OPAL_INFO_LVL_5);
    reg_bool("isend_requestless",
             "Non-blocking standard/ready eager sends of a single-threaded process are handed to "
             "the BTL before any request exists; the send needs none when the descriptor holds a "
             "copy of the data or the BTL completes it at once, else one is made afterwards "
             "(counted by pml_ob1x_late_requests). false: "
             "always allocate the request first",
             &p->isend_requestless, OPAL_INFO_LVL_5);
    reg_size("unexpected_limit",
             "Bytes of unexpected eager data a receiver holds before it tells senders to use "
             "rendezvous (header-only first fragment) until it drains below half; 0 disables",
             &p->unexpected_limit, OPAL_INFO_LVL_5);
    reg_int("fault_every",
            "Testing aid: every Nth BTL descriptor request of ob1x acts as if the BTL were out "
            "of resources, to exercise the queue-and-retry paths; 0 (default) disables",
            &p->fault_every, OPAL_INFO_LVL_9);
    reg_int("orphan_hold_ms",
            "Testing aid: every communicator the application creates treats the messages that "
            "reach it during its first N milliseconds as sent to a communicator not created "
            "here yet (held, counted by pml_ob1x_orphan_messages, matched in order afterwards); "
            "0 (default) disables",
            &p->orphan_hold_ms, OPAL_INFO_LVL_9);
    return ob1x_pvars_register();
}

/* Refuse values that cannot work, with a message naming the parameter. */
static int check_params(void)
{
    const ob1x_params_t *p = &mca_pml_ob1x.params;
    const char *bad = NULL;

    if (p->free_list_num < 0) {
        bad = "pml_ob1x_free_list_num must be >= 0";
    } else if (p->free_list_inc < 1) {
        bad = "pml_ob1x_free_list_inc must be >= 1";
    } else if (p->free_list_max != -1 && p->free_list_max < p->free_list_num) {
        bad = "pml_ob1x_free_list_max must be -1 or >= pml_ob1x_free_list_num";
    } else if (p->send_pipeline_depth < 1) {
        bad = "pml_ob1x_send_pipeline_depth must be >= 1";
    } else if (p->recv_pipeline_depth < 1) {
        bad = "pml_ob1x_recv_pipeline_depth must be >= 1";
    } else if (p->fault_every < 0 || 1 == p->fault_every) {
        bad = "pml_ob1x_fault_every must be 0 (off) or >= 2";
    } else if (p->orphan_hold_ms < 0) {
        bad = "pml_ob1x_orphan_hold_ms must be >= 0";
    } else if (ob1x_param_size_negative(p->rndv_eager_limit)) {
        bad = "pml_ob1x_rndv_eager_limit must be >= 0 (a byte count)";
    } else if (ob1x_param_size_negative(p->sendi_max)) {
        bad = "pml_ob1x_sendi_max must be >= 0 (a byte count)";
    } else if (ob1x_param_size_negative(p->unexpected_limit)) {
        bad = "pml_ob1x_unexpected_limit must be >= 0 (a byte count)";
    }
    if (NULL != bad) {
        opal_output(0, "pml:ob1x: invalid MCA parameter: %s; pml/ob1x disabled", bad);
        return OMPI_ERR_BAD_PARAM;
    }
    return OMPI_SUCCESS;
}

static int component_open(void)
{
    mca_pml_ob1x.output = opal_output_open(NULL);
    opal_output_set_verbosity(mca_pml_ob1x.output, mca_pml_ob1x.params.verbose);
    return check_params();
}

static int component_close(void)
{
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
            init_list(&m->recv_frags, sizeof(ob1x_recv_frag_t), OBJ_CLASS(ob1x_recv_frag_t))) {
        opal_output(0, "pml:ob1x: cannot allocate the request free lists");
        return NULL;
    }
    OBJ_CONSTRUCT(&m->pending_lock, opal_mutex_t);
    OBJ_CONSTRUCT(&m->pending_ctl, opal_list_t);
    OBJ_CONSTRUCT(&m->pending_sends, opal_list_t);
    OBJ_CONSTRUCT(&m->xoff_procs, opal_list_t);
    OBJ_CONSTRUCT(&m->orphan_lock, opal_mutex_t);
    OBJ_CONSTRUCT(&m->orphan_frags, opal_list_t);
    OBJ_CONSTRUCT(&m->held_comms, opal_list_t);
    OBJ_CONSTRUCT(&m->solo_conv, opal_convertor_t);
    m->solo_conv_busy = false;
    m->pending_count = 0;
    m->unexpected_bytes = 0;
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
    mca_pml_base_bsend_fini();
    ob1x_recv_frags_drop(&m->orphan_frags);
    OPAL_LIST_DESTRUCT(&m->pending_ctl);
    /* Requests still pending here belong to an erroneous program; the free
     * list teardown reclaims their memory. */
    while (NULL != opal_list_remove_first(&m->pending_sends)) {
    }
    OBJ_DESTRUCT(&m->pending_sends);
    while (NULL != opal_list_remove_first(&m->xoff_procs)) {
    }
    OBJ_DESTRUCT(&m->xoff_procs);
    OBJ_DESTRUCT(&m->held_comms); /* empty: del_comm ends every hold */
    OBJ_DESTRUCT(&m->orphan_frags);
    OBJ_DESTRUCT(&m->orphan_lock);
    OBJ_DESTRUCT(&m->solo_conv);
    OBJ_DESTRUCT(&m->pending_lock);
    OBJ_DESTRUCT(&m->recv_frags);
    OBJ_DESTRUCT(&m->recv_requests);
    OBJ_DESTRUCT(&m->send_requests);
    return OMPI_SUCCESS;
}

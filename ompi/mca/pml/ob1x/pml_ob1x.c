/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * The PML module: process and communicator management, progress, dump.
 */
#include "ompi_config.h"

#include "opal/class/opal_bitmap.h"
#include "opal/mca/btl/base/base.h"
#include "ompi/mca/bml/base/base.h"
#include "ompi/mca/pml/base/base.h"
#include "ompi/mca/rte/rte.h"

#include "common_ob1x_monitoring.h"
#include "common_ob1x_param.h"
#include "pml_ob1x.h"
#include "pml_ob1x_comm.h"
#include "pml_ob1x_ctl.h"
#include "pml_ob1x_monitor.h"
#include "pml_ob1x_rdma.h"
#include "pml_ob1x_recvfrag.h"
#include "pml_ob1x_sendreq.h"

mca_pml_ob1x_t mca_pml_ob1x = {
    .super =
        {
            .pml_add_procs = ob1x_add_procs,
            .pml_del_procs = ob1x_del_procs,
            .pml_enable = ob1x_enable,
            /* NULL: ob1x_progress is registered as a low-priority callback
             * by the component instead (see component_init). */
            .pml_progress = NULL,
            .pml_add_comm = ob1x_add_comm,
            .pml_del_comm = ob1x_del_comm,
            .pml_irecv_init = ob1x_irecv_init,
            .pml_irecv = ob1x_irecv,
            .pml_recv = ob1x_recv,
            .pml_isend_init = ob1x_isend_init,
            .pml_isend = ob1x_isend,
            .pml_send = ob1x_send,
            .pml_iprobe = ob1x_iprobe,
            .pml_probe = ob1x_probe,
            .pml_start = ob1x_start,
            .pml_improbe = ob1x_improbe,
            .pml_mprobe = ob1x_mprobe,
            .pml_imrecv = ob1x_imrecv,
            .pml_mrecv = ob1x_mrecv,
            .pml_dump = ob1x_dump,
            .pml_ft_event = ob1x_ft_event,
            .pml_max_contextid = OB1X_MAX_CONTEXTID,
            .pml_max_tag = OB1X_MAX_TAG,
            .pml_flags = 0,
        },
};

static void btl_error(struct mca_btl_base_module_t *btl, int32_t flags, opal_proc_t *errproc,
                      char *btlinfo)
{
    if (!(flags & MCA_BTL_ERROR_FLAGS_FATAL)) {
        return;
    }
    ob1x_show_help_now("help-mpi-pml-ob1x.txt", "btl-fatal-error",
                       btl->btl_component->btl_version.mca_component_name, ob1x_host(),
                       NULL != errproc ? OPAL_NAME_PRINT(errproc->proc_name) : "(unknown)",
                       NULL != btlinfo ? btlinfo : "(none)");
    ompi_rte_abort(OMPI_ERR_UNREACH, NULL);
}

void ob1x_send_fatal(const struct ompi_proc_t *proc, int status)
{
    ob1x_show_help_now("help-mpi-pml-ob1x.txt", "btl-send-failed", status, ob1x_host(),
                       NULL != proc ? OMPI_NAME_PRINT(&proc->super.proc_name) : "(unknown)");
    ompi_rte_abort(status, NULL);
}

/* ob1x sends raw bytes without conversion: every process must share our
 * data representation. */
static int check_homogeneous(struct ompi_proc_t **procs, size_t nprocs)
{
    for (size_t i = 0; i < nprocs; ++i) {
        if (procs[i]->super.proc_arch != ompi_proc_local()->super.proc_arch) {
            ob1x_show_help_now("help-mpi-pml-ob1x.txt", "heterogeneous", ob1x_host(),
                               OMPI_NAME_PRINT(&procs[i]->super.proc_name));
            return OMPI_ERR_NOT_SUPPORTED;
        }
    }
    return OMPI_SUCCESS;
}

/* Refuses a BTL whose limits cannot hold ob1x's headers: an eager
 * fragment must hold the largest header sent in one (RNDV; control
 * messages are smaller), and a pipeline fragment must carry at least one
 * byte after its FRAG header. Smaller limits would underflow the payload
 * sizes derived from them (see ob1x_eager_max, ob1x_rndv_payload).
 * Notes the largest eager payload of them (mca_pml_ob1x.eager_max_any). */
static int check_btl_limits(void)
{
    mca_btl_base_selected_module_t *sm;
    size_t eager_max_any = 0;

    OPAL_LIST_FOREACH(sm, &mca_btl_base_modules_initialized, mca_btl_base_selected_module_t)
    {
        const mca_btl_base_module_t *btl = sm->btl_module;
        const char *name = sm->btl_component->btl_version.mca_component_name;
        const char *topic = NULL;
        size_t value = 0, minimum = 0;

        if (btl->btl_eager_limit < sizeof(ob1x_hdr_rndv_t)) {
            topic = "eager-limit-too-small";
            value = btl->btl_eager_limit;
            minimum = sizeof(ob1x_hdr_rndv_t);
        } else if (btl->btl_max_send_size <= sizeof(ob1x_hdr_frag_t)) {
            topic = "max-send-size-too-small";
            value = btl->btl_max_send_size;
            minimum = sizeof(ob1x_hdr_frag_t) + 1;
        }
        if (NULL != topic) {
            ob1x_show_help_now("help-mpi-pml-ob1x.txt", topic, name, ob1x_host(), name,
                               (unsigned long) value, (unsigned long) minimum, name);
            return OMPI_ERR_BAD_PARAM;
        }
        if (ob1x_eager_max(btl) > eager_max_any) {
            eager_max_any = ob1x_eager_max(btl);
        }
    }
    mca_pml_ob1x.eager_max_any = eager_max_any;
    return OMPI_SUCCESS;
}

int ob1x_add_procs(struct ompi_proc_t **procs, size_t nprocs)
{
    OB1X_VERBOSE(10, "add_procs(%zu)", nprocs);
    static bool registered;
    opal_bitmap_t reachable;
    int rc;

    if (!registered) {
        /* Before any peer is known: messages may arrive as soon as it is. */
        rc = ob1x_register_callbacks();
        if (OMPI_SUCCESS == rc) {
            rc = mca_bml.bml_register_error(btl_error);
        }
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
        registered = true;
    }
    if (0 == nprocs) {
        return OMPI_SUCCESS;
    }
    rc = check_homogeneous(procs, nprocs);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    rc = mca_pml_base_pml_check_selected("ob1x", procs, nprocs);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    OBJ_CONSTRUCT(&reachable, opal_bitmap_t);
    rc = opal_bitmap_init(&reachable, (int) nprocs);
    if (OMPI_SUCCESS == rc) {
        rc = mca_bml.bml_add_procs(nprocs, procs, &reachable);
    }
    OBJ_DESTRUCT(&reachable);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    /* after bml_add_procs: the BTLs it opened are the ones ob1x will use */
    rc = check_btl_limits();
    if (OMPI_SUCCESS == rc) {
        rc = ob1x_btls_setup();
    }
    if (OMPI_SUCCESS == rc) {
        /* before the first message: it settles mpi_leave_pinned's "auto" */
        rc = ob1x_reg_init();
    }
    if (OMPI_SUCCESS == rc) {
        /* is the CUDA driver loaded here (device buffers possible)? */
        rc = ob1x_cuda_open();
    }
    return rc;
}

int ob1x_del_procs(struct ompi_proc_t **procs, size_t nprocs)
{
    ob1x_procs_release(procs, nprocs);
    return mca_bml.bml_del_procs(nprocs, procs);
}

/* Defined by libmpi (the mpi_yield_when_idle parameter), which applies it
 * to opal_progress at the end of MPI_Init; 4.1 installs no header for it. */
extern bool ompi_mpi_yield_when_idle;

/*
 * Under MPI_THREAD_MULTIPLE the threads of a rank share the core(s) it is
 * bound to (one, by mpirun's default). Open MPI's wait lets one waiting
 * thread run opal_progress in a loop, and threads that probe spin through
 * it too; without yielding, each spins for its whole time slice while the
 * thread that must finish signalling a completion, or that holds a BTL's
 * progress, waits for the core. Open MPI yields only when it sees the node
 * oversubscribed; with threads, a rank oversubscribes its own core. A value
 * the user set for mpi_yield_when_idle is left alone.
 */
static void thread_yield_setup(void)
{
    const mca_base_var_t *var;
    int idx;

    if (!opal_using_threads() || !mca_pml_ob1x.params.thread_yield) {
        return;
    }
    idx = mca_base_var_find("ompi", "mpi", NULL, "yield_when_idle");
    if (idx >= 0 && OPAL_SUCCESS == mca_base_var_get(idx, &var) &&
        MCA_BASE_VAR_SOURCE_DEFAULT != var->mbv_source) {
        return;
    }
    ompi_mpi_yield_when_idle = true;
}

/* The monitoring engine holds a reference while ob1x is the selected PML
 * only: a PML that loses the selection must not dump anything. */
static bool monitoring_held = false;

void ob1x_monitoring_fini(void)
{
    if (monitoring_held) {
        monitoring_held = false;
        ob1x_monitor_settle(); /* what is left staged, before the last dump */
        ob1x_mon_set_settle(NULL);
        ob1x_mon_set_pml_records_itself(false);
        ob1x_mon_finalize();
        ob1x_mon_set_state_mirror(NULL);
        ob1x_mon_set_recv_state_mirror(NULL);
        ob1x_monitor_state = ob1x_monitor_recv_state = OB1X_MON_OFF;
    }
}

/* Called once, on the selected PML, before MPI_Init applies
 * mpi_yield_when_idle. */
int ob1x_enable(bool enable)
{
    if (enable) {
        thread_yield_setup();
        if (!monitoring_held && OMPI_SUCCESS == ob1x_mon_init()) {
            monitoring_held = true;
            ob1x_mon_set_pml_records_itself(true);
            ob1x_mon_set_settle(ob1x_monitor_settle);
            ob1x_mon_set_state_mirror(&ob1x_monitor_state);
            ob1x_mon_set_recv_state_mirror(&ob1x_monitor_recv_state);
        }
    }
    return OMPI_SUCCESS;
}

int ob1x_pending_retry(opal_list_t *list, int (*try_one)(opal_list_item_t *item))
{
    int done = 0;

    for (;;) {
        opal_list_item_t *item;

        OPAL_THREAD_LOCK(&mca_pml_ob1x.pending_lock);
        item = opal_list_remove_first(list);
        OPAL_THREAD_UNLOCK(&mca_pml_ob1x.pending_lock);
        if (NULL == item) {
            break;
        }
        if (OMPI_ERR_OUT_OF_RESOURCE == try_one(item)) {
            /* Still no room: back in front, to keep the order. */
            OPAL_THREAD_LOCK(&mca_pml_ob1x.pending_lock);
            opal_list_prepend(list, item);
            OPAL_THREAD_UNLOCK(&mca_pml_ob1x.pending_lock);
            break;
        }
        opal_atomic_add_fetch_32(&mca_pml_ob1x.pending_count, -1);
        ++done;
    }
    return done;
}

/* Retry sends that waited for BTL resources. */
static int progress_sends(void)
{
    int done = 0;

    for (;;) {
        ob1x_send_request_t *req;
        ob1x_send_state_t state;

        OPAL_THREAD_LOCK(&mca_pml_ob1x.pending_lock);
        req = (ob1x_send_request_t *) opal_list_remove_first(&mca_pml_ob1x.pending_sends);
        if (NULL != req) {
            state = req->state;
            req->state = OB1X_SEND_IDLE;
        }
        OPAL_THREAD_UNLOCK(&mca_pml_ob1x.pending_lock);
        if (NULL == req) {
            break;
        }
        opal_atomic_add_fetch_32(&mca_pml_ob1x.pending_count, -1);
        if (OB1X_SEND_START_PENDING == state) {
            ob1x_proc_t *oproc = req->oproc; /* the request may be gone once started */
            int rc = ob1x_send_request_restart(req);
            if (OMPI_ERR_OUT_OF_RESOURCE == rc) {
                /* In front again: appended, it would let the sends queued
                 * behind it overtake it. */
                ob1x_send_request_requeue_start(req);
                break; /* still no room: try again on a later call */
            }
            OPAL_THREAD_ADD_FETCH32(&oproc->starts_queued, -1);
        } else {
            /* Hold the request for the pass, as the other callers of the
             * scheduler do: FRAGs it sends may complete in other threads,
             * and the last of them must not recycle it under the pass. */
            bool queued;
            OPAL_THREAD_ADD_FETCH64(&req->outstanding, 1);
            queued = ob1x_send_request_schedule(req);
            ob1x_send_request_subtract(req, 1);
            if (queued) {
                break; /* still no room: try again on a later call */
            }
        }
        ++done;
    }
    return done;
}

/*
 * Registered with opal_progress as a low-priority callback (run every few
 * passes, so the latency-critical polling loop does not pay for it). It
 * costs a load when nothing waits, and makes queued work go out on its own,
 * never only when some other completion happens to fire.
 */
static int __opal_attribute_noinline__ progress_pending(void)
{
    int done = 0;

    if (!opal_list_is_empty(&mca_pml_ob1x.pending_ctl)) {
        done += ob1x_ctl_progress();
    }
    if (!opal_list_is_empty(&mca_pml_ob1x.pending_sends)) {
        done += progress_sends();
    }
    if (!opal_list_is_empty(&mca_pml_ob1x.pending_rdma)) {
        done += ob1x_rdma_progress();
    }
    if (OPAL_UNLIKELY(!opal_list_is_empty(&mca_pml_ob1x.held_comms))) {
        done += ob1x_comm_release_held();
    }
    return done;
}

int ob1x_progress(void)
{
    /* Kept to a load and a test: it runs every few passes of opal_progress. */
    if (OPAL_LIKELY(0 == mca_pml_ob1x.pending_count)) {
        return 0;
    }
    return progress_pending();
}

/*
 * A BTL resource was just given back (a FRAG completed): work queued for
 * want of one goes now, not at the next low-priority progress pass, which
 * comes only every few passes of opal_progress (a stream of rendezvous
 * messages that outruns the BTL's fragments would otherwise wait there
 * for most of its time). Not re-entered: a send made here may complete at
 * once and call back.
 */
void ob1x_progress_freed(void)
{
    static volatile int32_t busy;

    if (OPAL_LIKELY(0 == mca_pml_ob1x.pending_count)) {
        return;
    }
    if (0 != OPAL_THREAD_ADD_FETCH32(&busy, 1) - 1) {
        OPAL_THREAD_ADD_FETCH32(&busy, -1);
        return;
    }
    (void) progress_pending();
    OPAL_THREAD_ADD_FETCH32(&busy, -1);
}

int ob1x_dump(struct ompi_communicator_t *comm, int verbose)
{
    ob1x_comm_t *oc = ob1x_comm_of(comm);

    (void) verbose;
    if (NULL == oc) {
        return OMPI_SUCCESS;
    }
    opal_output(0, "pml:ob1x: communicator %d: %zu unexpected, %zu wildcard receives posted",
                comm->c_contextid, oc->unexpected_count, opal_list_get_size(&oc->wildcard));
    for (int i = 0; i < oc->num_peers; ++i) {
        ob1x_comm_peer_t *peer = &oc->peers[i];
        opal_output(0,
                    "pml:ob1x:   peer %d: send seq %d, expected seq %d, %zu posted, "
                    "%zu unexpected, %zu out of order",
                    i, (int) (uint16_t) peer->send_seq, peer->expected_seq,
                    opal_list_get_size(&peer->specific), opal_list_get_size(&peer->unexpected),
                    opal_list_get_size(&peer->out_of_order));
    }
    return OMPI_SUCCESS;
}

int ob1x_ft_event(int state)
{
    (void) state;
    return OMPI_ERR_NOT_SUPPORTED;
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pml/ob1x: an ob1-style point-to-point engine over the BML/BTLs of Open MPI 4.1.
 * This header holds the component's global state, its tunables and the module
 * entry points. The per-message hot path: pml_ob1x_isend.c (the request-less
 * send), pml_ob1x_protocol.h (the protocol choice), pml_ob1x_send_eager.c
 * (eager starts), pml_ob1x_recvfrag.c (receive callbacks) and
 * pml_ob1x_match.c (matching).
 */
#ifndef PML_OB1X_H
#define PML_OB1X_H

#include "ompi_config.h"

#include "opal/class/opal_free_list.h"
#include "opal/class/opal_list.h"
#include "opal/datatype/opal_convertor.h"
#include "opal/threads/mutex.h"
#include "ompi/mca/pml/pml.h"
#include "ompi/request/request.h"

#include "pml_ob1x_pvars.h"
#include "common_ob1x_monitoring.h"

BEGIN_C_DECLS

/* Tunables (MCA parameters); see pml_ob1x_component.c for their documentation. */
typedef struct ob1x_params {
    int priority;
    int verbose;
    int free_list_num;
    int free_list_max;
    int free_list_inc;
    int send_pipeline_depth;
    size_t rndv_eager_limit; /* 0: use each BTL's own */
    size_t sendi_max;        /* largest payload tried with btl_sendi */
    bool isend_requestless;  /* eager Isend before any request (see pml_ob1x_isend.c) */
    bool thread_yield;       /* idle progress yields under MPI_THREAD_MULTIPLE (pml_ob1x.c) */
    size_t unexpected_limit; /* unexpected eager bytes before senders are throttled */
    int fault_every;         /* testing aid: every Nth descriptor request fails; 0 off */
    int orphan_hold_ms;      /* testing aid: new communicators ignore arrivals this long */
    bool use_all_rdma;        /* RDMA over every RDMA BTL, not only those that also send */
    int max_rdma_per_request; /* BTLs one RDMA message is spread over */
    int max_send_per_range;   /* BTLs one pipeline range is spread over */
    int rdma_retries_limit;   /* tries of a failed RDMA operation before send/recv */
    int rdma_fault_every;     /* testing aid: every Nth RDMA operation fails; 0 off */
    bool cuda_test_device_get; /* testing aid: every RDMA BTL counts as a device-get one */
} ob1x_params_t;

typedef struct mca_pml_ob1x_t {
    mca_pml_base_module_t super;
    ob1x_params_t params;
    int output; /* opal_output stream for verbose messages */

    opal_free_list_t send_requests;
    opal_free_list_t recv_requests;
    opal_free_list_t recv_frags; /* unexpected / out-of-order fragments */

    /* Work that could not be handed to a BTL yet, retried by ob1x_progress(). */
    opal_mutex_t pending_lock;
    opal_list_t pending_ctl;   /* ob1x_ctl_t: control messages (ACK, CANCEL, FLOW...) */
    opal_list_t pending_sends; /* send requests that need (re)scheduling */
    opal_list_t pending_rdma;  /* ob1x_rdma_op_t a BTL had no room for */
    opal_free_list_t rdma_ops; /* ob1x_rdma_op_t */
    volatile int32_t rdma_live; /* RGET sends of ours not yet complete */
    volatile int32_t pending_count;
    opal_list_t xoff_procs; /* ob1x_proc_t we told to stop eager sends */

    /* Fragments for communicators this process has not created yet, and
     * (testing aid pml_ob1x_orphan_hold_ms) communicators still held back. */
    opal_mutex_t orphan_lock;
    opal_list_t orphan_frags;
    opal_list_t held_comms;

    /* The largest eager payload of any BTL in use (set at add_procs):
     * larger sends are rendezvous, which skip the request-less path. */
    size_t eager_max_any;

    /* Bytes of unexpected eager data held, over all communicators. */
    volatile int64_t unexpected_bytes;

    /* The request-less sends' convertor in a single-threaded process:
     * constructing one per message costs about as much as the send. */
    opal_convertor_t solo_conv;
    bool solo_conv_busy; /* in use (a send nested in progress makes its own) */

} mca_pml_ob1x_t;

OMPI_DECLSPEC extern mca_pml_ob1x_t mca_pml_ob1x;
OMPI_DECLSPEC extern mca_pml_base_component_2_0_0_t mca_pml_ob1x_component;

/* A request goes back to its free list once both the user freed it and the
 * PML finished with it; whichever comes second does the release. */
#define OB1X_REL_FREED 0x1
#define OB1X_REL_PML_DONE 0x2

/* Our header limits the context id and the tag to these. */
#define OB1X_MAX_CONTEXTID 0xffff
#define OB1X_MAX_TAG 0x7fffffff

/* Module entry points (one file per entry point family). */
int ob1x_add_procs(struct ompi_proc_t **procs, size_t nprocs);
/* A BTL failed a send (to `proc`, NULL if unknown) with no way to retry:
 * says so through the help system and aborts the job. */
void ob1x_send_fatal(const struct ompi_proc_t *proc, int status);
int ob1x_del_procs(struct ompi_proc_t **procs, size_t nprocs);
int ob1x_enable(bool enable);
/* Drops the monitoring engine's reference taken by ob1x_enable. */
void ob1x_monitoring_fini(void);
int ob1x_progress(void);
/* Retries queued work right after a BTL resource came back. */
void ob1x_progress_freed(void);
int ob1x_add_comm(struct ompi_communicator_t *comm);
/* Testing aid (pml_ob1x_orphan_hold_ms): let go of the communicators whose
 * hold is over; returns how many. */
int ob1x_comm_release_held(void);
int ob1x_del_comm(struct ompi_communicator_t *comm);

int ob1x_isend_init(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst, int tag,
                    mca_pml_base_send_mode_t mode, struct ompi_communicator_t *comm,
                    struct ompi_request_t **request);
int ob1x_isend(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst, int tag,
               mca_pml_base_send_mode_t mode, struct ompi_communicator_t *comm,
               struct ompi_request_t **request);
int ob1x_send(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst, int tag,
              mca_pml_base_send_mode_t mode, struct ompi_communicator_t *comm);

int ob1x_irecv_init(void *buf, size_t count, struct ompi_datatype_t *dtype, int src, int tag,
                    struct ompi_communicator_t *comm, struct ompi_request_t **request);
int ob1x_irecv(void *buf, size_t count, struct ompi_datatype_t *dtype, int src, int tag,
               struct ompi_communicator_t *comm, struct ompi_request_t **request);
int ob1x_recv(void *buf, size_t count, struct ompi_datatype_t *dtype, int src, int tag,
              struct ompi_communicator_t *comm, ompi_status_public_t *status);
int ob1x_imrecv(void *buf, size_t count, struct ompi_datatype_t *dtype,
                struct ompi_message_t **message, struct ompi_request_t **request);
int ob1x_mrecv(void *buf, size_t count, struct ompi_datatype_t *dtype,
               struct ompi_message_t **message, ompi_status_public_t *status);

int ob1x_iprobe(int src, int tag, struct ompi_communicator_t *comm, int *matched,
                ompi_status_public_t *status);
int ob1x_probe(int src, int tag, struct ompi_communicator_t *comm, ompi_status_public_t *status);
int ob1x_improbe(int src, int tag, struct ompi_communicator_t *comm, int *matched,
                 struct ompi_message_t **message, ompi_status_public_t *status);
int ob1x_mprobe(int src, int tag, struct ompi_communicator_t *comm, struct ompi_message_t **message,
                ompi_status_public_t *status);

int ob1x_start(size_t count, struct ompi_request_t **requests);
int ob1x_dump(struct ompi_communicator_t *comm, int verbose);
int ob1x_ft_event(int state);

/* Registers the BTL receive callbacks (pml_ob1x_recvfrag.c). */
int ob1x_register_callbacks(void);

/*
 * Testing aid (pml_ob1x_fault_every): pretend that every Nth request for a
 * BTL descriptor found the BTL out of resources, so that the queue-and-retry
 * paths run on any BTL. One predictable branch when off.
 */
static inline bool ob1x_fault_injected(void)
{
    static volatile int32_t calls;
    if (OPAL_LIKELY(0 == mca_pml_ob1x.params.fault_every)) {
        return false;
    }
    return 0 == OPAL_THREAD_ADD_FETCH32(&calls, 1) % mca_pml_ob1x.params.fault_every;
}

/* Takes the items of a pending list in order and hands each to try_one,
 * which owns it unless it returns OMPI_ERR_OUT_OF_RESOURCE: then the item
 * goes back in front and the pass stops. Returns how many went. */
int ob1x_pending_retry(opal_list_t *list, int (*try_one)(opal_list_item_t *item));

/* Note that ob1x_progress() has work to retry. */
static inline void ob1x_pending_added(void)
{
    opal_atomic_add_fetch_32(&mca_pml_ob1x.pending_count, 1);
}

#define OB1X_VERBOSE(level, ...)                                                                   \
    do {                                                                                           \
        if (mca_pml_ob1x.params.verbose >= (level)) {                                              \
            opal_output(mca_pml_ob1x.output, "pml:ob1x: " __VA_ARGS__);                            \
        }                                                                                          \
    } while (0)

END_C_DECLS

#endif /* PML_OB1X_H */

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pml_monitoring.c - the send entry points put in front of another PML's:
 * record, then call the real one. Sizes are counted as Open MPI 4.1's
 * pml/monitoring counts them: count times the datatype's size.
 */
#include "pml_monitoring.h"

#include "common_ob1x_monitoring.h"
#include "common_ob1x_help.h"
#include "ompi/datatype/ompi_datatype.h"
#include "opal/class/opal_hash_table.h"
#include "opal/threads/mutex.h"

mca_pml_base_module_t mca_pml_monitoring_real;

static inline void record_send(size_t count, ompi_datatype_t *datatype, int dst, int tag,
                               ompi_communicator_t *comm)
{
    size_t type_size;

    /* Sends to MPI_PROC_NULL move nothing. */
    if (MPI_PROC_NULL == dst) {
        return;
    }
    ompi_datatype_type_size(datatype, &type_size);
    ob1x_mon_record_pml(comm->c_remote_group, dst, count * type_size, tag);
}

static int mon_isend(const void *buf, size_t count, ompi_datatype_t *datatype, int dst, int tag,
                     mca_pml_base_send_mode_t mode, ompi_communicator_t *comm,
                     ompi_request_t **request)
{
    if (ob1x_mon_is_on()) {
        record_send(count, datatype, dst, tag, comm);
    }
    return mca_pml_monitoring_real.pml_isend(buf, count, datatype, dst, tag, mode, comm, request);
}

static int mon_send(const void *buf, size_t count, ompi_datatype_t *datatype, int dst, int tag,
                    mca_pml_base_send_mode_t mode, ompi_communicator_t *comm)
{
    if (ob1x_mon_is_on()) {
        record_send(count, datatype, dst, tag, comm);
    }
    return mca_pml_monitoring_real.pml_send(buf, count, datatype, dst, tag, mode, comm);
}

/* --- persistent sends ------------------------------------------------------
 *
 * MPI_Start calls the request's own req_start, not mca_pml (so Open MPI
 * 4.1's pml/monitoring never counts persistent sends). Our isend_init
 * notes what the request will send, keyed by its address, and points its
 * req_start at ours, which records at each start with the request's real
 * tag and calls the PML's. A request's address is reused only after
 * MPI_Request_free, and a reused one goes through isend_init again (which
 * rewrites the note) or through another init (which resets req_start):
 * only requests whose req_start is ours are looked up. */

typedef struct {
    ompi_group_t *group; /* the communicator's remote group (alive while the request is) */
    int peer;
    int tag;
    size_t bytes;
} mon_persistent_t;

static opal_hash_table_t mon_persistent;
static opal_mutex_t mon_persistent_lock;
static bool mon_persistent_ready = false;
/* The PML's own req_start (one per PML: ob1, cm and ucx each have one). */
static ompi_request_start_fn_t mon_real_req_start = NULL;

static int mon_req_start(size_t count, ompi_request_t **requests);

static void note_persistent(ompi_request_t *request, const mon_persistent_t *what)
{
    void *old = NULL;
    mon_persistent_t *note;

    OPAL_THREAD_LOCK(&mon_persistent_lock);
    if (OPAL_SUCCESS ==
        opal_hash_table_get_value_uint64(&mon_persistent, (uintptr_t) request, &old)) {
        note = old;
    } else {
        note = malloc(sizeof(*note));
        if (NULL == note || OPAL_SUCCESS != opal_hash_table_set_value_uint64(
                                                &mon_persistent, (uintptr_t) request, note)) {
            free(note);
            note = NULL; /* out of memory: this request's starts go unrecorded */
        }
    }
    if (NULL != note) {
        *note = *what;
        request->req_start = mon_req_start;
    }
    OPAL_THREAD_UNLOCK(&mon_persistent_lock);
}

static void record_start(ompi_request_t *request)
{
    void *value = NULL;
    mon_persistent_t note = {NULL, MPI_PROC_NULL, 0, 0};

    if (NULL == request || mon_req_start != request->req_start) {
        return;
    }
    OPAL_THREAD_LOCK(&mon_persistent_lock);
    if (OPAL_SUCCESS ==
        opal_hash_table_get_value_uint64(&mon_persistent, (uintptr_t) request, &value)) {
        note = *(mon_persistent_t *) value;
    }
    OPAL_THREAD_UNLOCK(&mon_persistent_lock);
    if (MPI_PROC_NULL != note.peer) {
        ob1x_mon_record_pml(note.group, note.peer, note.bytes, note.tag);
    }
}

static int mon_req_start(size_t count, ompi_request_t **requests)
{
    if (ob1x_mon_is_on()) {
        for (size_t i = 0; i < count; ++i) {
            record_start(requests[i]);
        }
    }
    return mon_real_req_start(count, requests);
}

static int mon_isend_init(const void *buf, size_t count, ompi_datatype_t *datatype, int dst,
                          int tag, mca_pml_base_send_mode_t mode, ompi_communicator_t *comm,
                          ompi_request_t **request)
{
    size_t type_size;
    int rc =
        mca_pml_monitoring_real.pml_isend_init(buf, count, datatype, dst, tag, mode, comm, request);

    if (OMPI_SUCCESS != rc || MPI_PROC_NULL == dst || NULL == (*request)->req_start) {
        return rc;
    }
    if (NULL == mon_real_req_start) {
        mon_real_req_start = (*request)->req_start;
    } else if (mon_real_req_start != (*request)->req_start) {
        return rc; /* not the PML's usual start: leave it alone */
    }
    ompi_datatype_type_size(datatype, &type_size);
    note_persistent(*request,
                    &(mon_persistent_t){comm->c_remote_group, dst, tag, count * type_size});
    return rc;
}

/* mca_pml.pml_start, for callers that start requests through the PML. */
static int mon_start(size_t count, ompi_request_t **requests)
{
    if (ob1x_mon_is_on()) {
        for (size_t i = 0; i < count; ++i) {
            record_start(requests[i]);
        }
    }
    return mca_pml_monitoring_real.pml_start(count, requests);
}

static void free_note(void *note)
{
    free(note);
}

void mca_pml_monitoring_persistent_fini(void)
{
    if (!mon_persistent_ready) {
        return;
    }
    uint64_t key;
    void *value, *node = NULL;
    int rc = opal_hash_table_get_first_key_uint64(&mon_persistent, &key, &value, &node);
    while (OPAL_SUCCESS == rc) {
        free_note(value);
        rc = opal_hash_table_get_next_key_uint64(&mon_persistent, &key, &value, node, &node);
    }
    OBJ_DESTRUCT(&mon_persistent);
    OBJ_DESTRUCT(&mon_persistent_lock);
    mon_persistent_ready = false;
}

static bool persistent_init(void)
{
    OBJ_CONSTRUCT(&mon_persistent, opal_hash_table_t);
    OBJ_CONSTRUCT(&mon_persistent_lock, opal_mutex_t);
    if (OPAL_SUCCESS != opal_hash_table_init(&mon_persistent, 64)) {
        OBJ_DESTRUCT(&mon_persistent);
        OBJ_DESTRUCT(&mon_persistent_lock);
        return false;
    }
    mon_persistent_ready = true;
    return true;
}

mca_pml_base_module_t mca_pml_monitoring_module_wrap(const mca_pml_base_module_t *real)
{
    mca_pml_base_module_t wrapped = *real;

    wrapped.pml_isend = mon_isend;
    wrapped.pml_send = mon_send;
    /* Without the table, persistent sends go through unrecorded. */
    if (persistent_init()) {
        wrapped.pml_isend_init = mon_isend_init;
        wrapped.pml_start = mon_start;
    }
    return wrapped;
}

/* Selected because no other PML could be ("--mca pml monitoring", or the
 * PMLs listed disqualified themselves): there is nothing to monitor. Said
 * once per process, and MPI_Init fails instead of crashing. */
static int alone_add_procs(struct ompi_proc_t **procs, size_t nprocs)
{
    (void) procs;
    (void) nprocs;
    ob1x_show_help_now("help-mpi-pml-monitoring.txt", "alone", ob1x_host());
    return OMPI_ERR_NOT_SUPPORTED;
}

static int alone_enable(bool enable)
{
    (void) enable;
    return OMPI_SUCCESS;
}

static int alone_progress(void)
{
    return 0;
}

mca_pml_base_module_t mca_pml_monitoring_alone = {
    .pml_add_procs = alone_add_procs,
    .pml_enable = alone_enable,
    .pml_progress = alone_progress,
    .pml_max_contextid = 65535,
    .pml_max_tag = INT_MAX,
};

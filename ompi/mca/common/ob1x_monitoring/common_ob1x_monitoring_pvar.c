/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_monitoring_pvar.c - the MPI_T performance variables of the
 * monitoring: the names, classes, datatypes (unsigned long long) and
 * bindings of Open MPI 4.1's, with its start/stop/flush semantics, and:
 *
 *  - registered once by this library, which stays loaded (-z nodelete),
 *    and without MCA_BASE_PVAR_FLAG_IWG: closing a pml/coll/osc component
 *    named "monitoring" (whose MCA group they share) does not invalidate
 *    them, so they stay valid for the whole run, also when looked up after
 *    MPI_Init;
 *  - the per-peer ones readable on any communicator (stock: only
 *    MPI_COMM_WORLD), entries in that communicator's rank order (the
 *    remote group's for an intercommunicator);
 *  - more of them: receive-side counts, internal-tag counts and the size
 *    histogram.
 */
#include "ompi_config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_pvar.h"
#include "opal/util/show_help.h"

#include "common_ob1x_help.h"
#include "common_ob1x_monitoring_internal.h"

#define PVAR_TYPE MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG
#define PVAR_RO MCA_BASE_PVAR_FLAG_READONLY

/* The group whose ranks a communicator-bound per-peer pvar lists. */
static ompi_group_t *peer_group(ompi_communicator_t *comm)
{
    return OMPI_COMM_IS_INTER(comm) ? comm->c_remote_group : comm->c_local_group;
}

/* --- notify: start/stop drive the recording, as stock ------------------- */

static int start_stop(mca_base_pvar_event_t event)
{
    if (MCA_BASE_PVAR_HANDLE_START == event) {
        ob1x_mon_set_recording(true);
    } else if (MCA_BASE_PVAR_HANDLE_STOP == event) {
        ob1x_mon_set_recording(false);
    }
    return OMPI_SUCCESS;
}

static int peer_notify(mca_base_pvar_t *pvar, mca_base_pvar_event_t event, void *obj, int *count)
{
    (void) pvar;
    if (MCA_BASE_PVAR_HANDLE_BIND == event) {
        *count = ompi_group_size(peer_group((ompi_communicator_t *) obj));
        return OMPI_SUCCESS;
    }
    return start_stop(event);
}

/* A receive-side variable: receives are counted from its first handle on
 * (pml_monitoring_count_receives auto). */
static int recv_notify(mca_base_pvar_t *pvar, mca_base_pvar_event_t event, void *obj, int *count)
{
    if (MCA_BASE_PVAR_HANDLE_BIND == event) {
        ob1x_mon_want_receives();
    }
    return peer_notify(pvar, event, obj, count);
}

static int hist_notify(mca_base_pvar_t *pvar, mca_base_pvar_event_t event, void *obj, int *count)
{
    (void) pvar;
    if (MCA_BASE_PVAR_HANDLE_BIND == event) {
        *count = OB1X_MON_HIST_BINS * ompi_group_size(peer_group((ompi_communicator_t *) obj));
        return OMPI_SUCCESS;
    }
    return start_stop(event);
}

static int coll_notify(mca_base_pvar_t *pvar, mca_base_pvar_event_t event, void *obj, int *count)
{
    (void) pvar, (void) obj;
    if (MCA_BASE_PVAR_HANDLE_BIND == event) {
        *count = 1;
        return OMPI_SUCCESS;
    }
    return start_stop(event);
}

/* --- readers ------------------------------------------------------------ */

/* pvar->ctx: offset of the field in ob1x_mon_counts_t. */
static int peer_get(const mca_base_pvar_t *pvar, void *value, void *obj)
{
    ompi_group_t *group = peer_group((ompi_communicator_t *) obj);
    size_t off = (size_t) (uintptr_t) pvar->ctx;
    unsigned long long *out = value;

    ob1x_mon_settle();
    for (int i = 0; i < ompi_group_size(group); ++i) {
        const ob1x_mon_counts_t *c = ob1x_mon_peer_find(ompi_group_get_proc_name(group, i));
        out[i] = NULL != c ? *(const uint64_t *) ((const char *) c + off) : 0;
    }
    return OMPI_SUCCESS;
}

/* Same, from the counts since the start of the run: for the counter
 * classes, where MPI_T itself keeps each handle's start value (start, stop,
 * reset and read work per handle). */
static int peer_total_get(const mca_base_pvar_t *pvar, void *value, void *obj)
{
    ompi_group_t *group = peer_group((ompi_communicator_t *) obj);
    size_t off = (size_t) (uintptr_t) pvar->ctx;
    unsigned long long *out = value;

    ob1x_mon_settle();
    for (int i = 0; i < ompi_group_size(group); ++i) {
        const ob1x_mon_counts_t *c = ob1x_mon_peer_find_total(ompi_group_get_proc_name(group, i));
        out[i] = NULL != c ? *(const uint64_t *) ((const char *) c + off) : 0;
    }
    return OMPI_SUCCESS;
}

static int hist_get(const mca_base_pvar_t *pvar, void *value, void *obj)
{
    ompi_group_t *group = peer_group((ompi_communicator_t *) obj);
    unsigned long long *out = value;

    (void) pvar;
    for (int i = 0; i < ompi_group_size(group); ++i) {
        const ob1x_mon_counts_t *c = ob1x_mon_peer_find(ompi_group_get_proc_name(group, i));
        for (int j = 0; j < OB1X_MON_HIST_BINS; ++j) {
            out[i * OB1X_MON_HIST_BINS + j] = NULL != c ? c->hist[j] : 0;
        }
    }
    return OMPI_SUCCESS;
}

/* pvar->ctx: class * 2 + (0 messages, 1 bytes). */
static int coll_get(const mca_base_pvar_t *pvar, void *value, void *obj)
{
    int which = (int) (uintptr_t) pvar->ctx;
    uint64_t pair[2];

    ob1x_mon_coll_get((ompi_communicator_t *) obj, (ob1x_mon_coll_class_t) (which / 2), pair);
    *(unsigned long long *) value = pair[which % 2];
    return OMPI_SUCCESS;
}

/* --- the flush variable: write a base name, start, communicate, stop --- */

static int flush_set(mca_base_pvar_t *pvar, const void *value, void *obj)
{
    const char *name = value;

    (void) pvar, (void) obj;
    free(ob1x_mon_filename);
    ob1x_mon_filename = NULL;
    if (NULL != name && '\0' != name[0] && NULL == (ob1x_mon_filename = strdup(name))) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    return OMPI_SUCCESS;
}

/* Nothing to read: the variable only carries the name. */
static int flush_get(const mca_base_pvar_t *pvar, void *value, void *obj)
{
    (void) pvar, (void) value, (void) obj;
    return OMPI_SUCCESS;
}

static int flush_notify(mca_base_pvar_t *pvar, mca_base_pvar_event_t event, void *obj, int *count)
{
    (void) pvar, (void) obj;
    switch (event) {
        case MCA_BASE_PVAR_HANDLE_BIND:
            /* a phase starts from zero, as stock; its files show receives */
            ob1x_mon_want_receives();
            ob1x_mon_reset();
            *count = NULL == ob1x_mon_filename ? 0 : (int) strlen(ob1x_mon_filename);
            return OMPI_SUCCESS;
        case MCA_BASE_PVAR_HANDLE_START:
            ob1x_mon_set_recording(true);
            /* MPI_T drives the phases now: no dump at MPI_Finalize */
            ob1x_mon_output = OB1X_MON_OUT_NONE;
            return OMPI_SUCCESS;
        case MCA_BASE_PVAR_HANDLE_STOP:
            return ob1x_mon_flush(OB1X_MON_OUT_FILE, ob1x_mon_filename);
        default:
            return OMPI_SUCCESS;
    }
}

/* --- the table ---------------------------------------------------------- */

typedef struct mon_pvar {
    const char *framework, *name, *description;
    int var_class;
    mca_base_get_value_fn_t get;
    mca_base_notify_fn_t notify;
    uintptr_t ctx;
} mon_pvar_t;

#define PEER(fw, n, field, d)                                                                      \
    {                                                                                              \
        fw, n, d, MCA_BASE_PVAR_CLASS_SIZE, peer_get, peer_notify,                                 \
            offsetof(ob1x_mon_counts_t, field)                                                     \
    }
#define RECV(n, field, d)                                                                          \
    {                                                                                              \
        "pml", n, d, MCA_BASE_PVAR_CLASS_SIZE, peer_get, recv_notify,                              \
            offsetof(ob1x_mon_counts_t, field)                                                     \
    }
#define TOTAL(n, cls, field, d)                                                                    \
    {                                                                                              \
        "pml", n, d, cls, peer_total_get, peer_notify, offsetof(ob1x_mon_counts_t, field)          \
    }
#define COLL(n, cls, bytes, d)                                                                     \
    {                                                                                              \
        "coll", n, d, (bytes) ? MCA_BASE_PVAR_CLASS_AGGREGATE : MCA_BASE_PVAR_CLASS_COUNTER,       \
            coll_get, coll_notify, (cls) *2 + (bytes)                                              \
    }

static const mon_pvar_t mon_pvars[] = {
    PEER("pml", "messages_count", pml_count,
         "Number of messages sent to each peer through the "
         "PML (external tags only when pml_monitoring_enable >= 2)"),
    PEER("pml", "messages_size", pml_bytes, "Bytes sent to each peer through the PML"),
    PEER("osc", "messages_sent_count", osc_sent_count,
         "Number of one-sided messages sent to each peer"),
    PEER("osc", "messages_sent_size", osc_sent_bytes, "Bytes sent one-sided to each peer"),
    PEER("osc", "messages_recv_count", osc_recv_count,
         "Number of one-sided messages received from each peer"),
    PEER("osc", "messages_recv_size", osc_recv_bytes, "Bytes received one-sided from each peer"),
    PEER("coll", "messages_count", coll_count, "Number of messages collectives sent to each peer"),
    PEER("coll", "messages_size", coll_bytes, "Bytes collectives sent to each peer"),
    COLL("o2a_count", OB1X_MON_O2A, 0, "Number of one-to-all collectives on the communicator"),
    COLL("o2a_size", OB1X_MON_O2A, 1, "Bytes of one-to-all collectives on the communicator"),
    COLL("a2o_count", OB1X_MON_A2O, 0, "Number of all-to-one collectives on the communicator"),
    COLL("a2o_size", OB1X_MON_A2O, 1, "Bytes of all-to-one collectives on the communicator"),
    COLL("a2a_count", OB1X_MON_A2A, 0, "Number of all-to-all collectives on the communicator"),
    COLL("a2a_size", OB1X_MON_A2A, 1, "Bytes of all-to-all collectives on the communicator"),
    /* beyond stock */
    PEER("pml", "messages_internal_count", pml_int_count,
         "Number of messages with internal "
         "tags sent to each peer (pml_monitoring_enable >= 2; else counted in messages_count)"),
    PEER("pml", "messages_internal_size", pml_int_bytes,
         "Bytes of messages with internal tags sent to each peer"),
    RECV("messages_recv_count", recv_count,
         "Number of messages received from each peer (external tags only when "
         "pml_monitoring_enable >= 2; pml/ob1x only; counted from the first handle of a "
         "receive variable on unless pml_monitoring_count_receives says otherwise)"),
    RECV("messages_recv_size", recv_bytes, "Bytes received from each peer"),
    RECV("messages_recv_internal_count", recv_int_count,
         "Number of messages with internal tags received from each peer"),
    RECV("messages_recv_internal_size", recv_int_bytes,
         "Bytes of messages with internal tags received from each peer"),
    TOTAL("messages_count_resettable", MCA_BASE_PVAR_CLASS_COUNTER, pml_count,
          "Number of messages sent to each peer through the PML, as a counter: each handle "
          "counts from its start, and MPI_T_pvar_reset zeroes it (external tags only when "
          "pml_monitoring_enable >= 2)"),
    TOTAL("messages_size_resettable", MCA_BASE_PVAR_CLASS_AGGREGATE, pml_bytes,
          "Bytes sent to each peer through the PML, as a sum: each handle counts from its "
          "start, and MPI_T_pvar_reset zeroes it"),
    {"pml", "messages_histogram",
     "Sizes of the messages sent to each peer: 66 bins per peer "
     "(peer-major); bin 0 empty messages, bin k >= 1 sizes in [2^(k-1), 2^k)",
     MCA_BASE_PVAR_CLASS_SIZE, hist_get, hist_notify, 0},
};

static void register_one(const mon_pvar_t *p)
{
    int rc = mca_base_pvar_register(
        "ompi", p->framework, "monitoring", p->name, p->description, OPAL_INFO_LVL_4, p->var_class,
        PVAR_TYPE, NULL, MPI_T_BIND_MPI_COMM, PVAR_RO, p->get, NULL, p->notify, (void *) p->ctx);
    if (rc < 0) {
        opal_show_help("help-ob1x-monitoring.txt", "pvar register failed", true, p->name,
                       ob1x_host(), rc);
    }
}

int ob1x_mon_pvars_register(void)
{
    static bool done = false;
    int rc;

    if (done) {
        return OMPI_SUCCESS;
    }
    done = true;
    rc = mca_base_pvar_register(
        "ompi", "pml", "monitoring", "flush",
        "Base name of a monitoring phase's files: write it, start the handle, communicate, "
        "stop it: each process writes <name>.<MPI_COMM_WORLD rank>.prof and counts restart "
        "from zero",
        OPAL_INFO_LVL_1, MCA_BASE_PVAR_CLASS_GENERIC, MCA_BASE_VAR_TYPE_STRING, NULL,
        MPI_T_BIND_NO_OBJECT, 0, flush_get, flush_set, flush_notify, NULL);
    if (rc < 0) {
        opal_show_help("help-ob1x-monitoring.txt", "pvar register failed", true, "flush",
                       ob1x_host(), rc);
    }
    for (size_t i = 0; i < sizeof(mon_pvars) / sizeof(mon_pvars[0]); ++i) {
        register_one(&mon_pvars[i]);
    }
    return OMPI_SUCCESS;
}

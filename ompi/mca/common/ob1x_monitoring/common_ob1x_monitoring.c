/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_monitoring.c - the monitoring engine: configuration, life
 * cycle, per-peer storage and recording (common_ob1x_monitoring.h).
 *
 * Storage: a table of pointers indexed by MPI_COMM_WORLD rank, allocated at
 * the first message recorded; each entry points to the peer's counts,
 * allocated the first time that peer is talked to. A process that talks to
 * 4 neighbours of a 100k-process job holds 800 KB of pointers and 4 sets of
 * counts, not 100k. Processes of other jobs are kept in a short list,
 * searched (slow path) by process name.
 */
#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "ompi/mca/rte/rte.h"
#include "opal/mca/base/mca_base_var.h"

#include "common_ob1x_help.h"
#include "common_ob1x_monitoring_internal.h"

int ob1x_mon_state = OB1X_MON_OFF;
int ob1x_mon_enable = OB1X_MON_OFF;
int ob1x_mon_output = OB1X_MON_OUT_NONE;
char *ob1x_mon_filename = NULL;
int ob1x_mon_receives = OB1X_MON_RECV_AUTO;

/* Whether receive-side counts are kept (ob1x_mon_want_receives). */
static bool receives_wanted = false;

/* The MCA variable's own string (owned by the MCA system). */
static char *filename_param = NULL;
static int init_count = 0;

/* A peer's counts since the start of the run ("now", only ever growing, so
 * that MPI_T counter handles can take differences) and their values at the
 * last reset ("base": a phase flushed through pml_monitoring_flush, a
 * reset). What a dump or a SIZE pvar shows is now - base. */
typedef struct peer {
    ob1x_mon_counts_t now;
    ob1x_mon_counts_t base;
} peer_t;

typedef struct other_peer {
    struct other_peer *next;
    opal_process_name_t name;
    peer_t p;
} other_peer_t;

static peer_t **world_peers = NULL; /* world_size pointers, lazily */
static int world_size = 0;
static other_peer_t *other_peers = NULL;
static opal_mutex_t other_lock = OPAL_MUTEX_STATIC_INIT;

/* ------------------------------------------------------------------------ */
/* MCA variables                                                            */

static const mca_base_var_enum_value_t receives_values[] = {
    {OB1X_MON_RECV_AUTO, "auto"}, {0, "no"}, {1, "yes"}, {0, NULL}};

/* pml_monitoring_count_receives, by name or number (the MCA system
 * rejects anything else and keeps the default). */
static void receives_param_register(void)
{
    mca_base_var_enum_t *values = NULL;

    if (OPAL_SUCCESS !=
        mca_base_var_enum_create("pml_monitoring_count_receives", receives_values, &values)) {
        values = NULL;
    }
    (void) mca_base_var_register(
        "ompi", "pml", "monitoring", "count_receives",
        "Receive-side counts of pml/ob1x (messages and bytes matched from each peer; Open MPI's "
        "monitoring counts only at the sender): auto (-1, default) from the moment something "
        "will show them (pml_monitoring_enable_output >= 1, a handle of a "
        "pml_monitoring_messages_recv_* variable or of pml_monitoring_flush allocated), "
        "no (0) never, yes (1) from MPI_Init (a few instructions per message received)",
        MCA_BASE_VAR_TYPE_INT, values, 0, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_READONLY,
        &ob1x_mon_receives);
    if (NULL != values) {
        OBJ_RELEASE(values);
    }
}

/* Registered once per process with framework "pml", component "monitoring"
 * (the stock names) but without DWG: closing a pml/monitoring component,
 * whose group they share, must not deregister them. */
static void params_register(void)
{
    static bool done = false;

    if (done) {
        return;
    }
    done = true;
    (void) mca_base_var_register(
        "ompi", "pml", "monitoring", "enable",
        "Monitoring of communications: 0 off (default), 1 every message counted together, "
        ">= 2 messages with internal tags (collectives over point-to-point, communicator "
        "management) counted apart",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_READONLY,
        &ob1x_mon_enable);
    (void) mca_base_var_register(
        "ompi", "pml", "monitoring", "enable_output",
        "Where the monitoring data goes at MPI_Finalize: 0 nowhere (default), 1 stdout, "
        "2 stderr, >= 3 the file <pml_monitoring_filename>.<MPI_COMM_WORLD rank>.prof. "
        "Turned off when MPI_T drives the monitoring through pml_monitoring_flush",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
        &ob1x_mon_output);
    receives_param_register();
    (void) mca_base_var_register("ompi", "pml", "monitoring", "filename",
                                 "Base name of the monitoring files: each process writes "
                                 "<filename>.<MPI_COMM_WORLD rank>.prof",
                                 MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_9,
                                 MCA_BASE_VAR_SCOPE_READONLY, &filename_param);
}

int ob1x_mon_register(void)
{
    params_register();
    return ob1x_mon_pvars_register();
}

int ob1x_mon_init(void)
{
    ob1x_help_dirs_add(OB1X_MON_SRCDIR);
    (void) ob1x_mon_register();
    if (init_count++ > 0) {
        return OMPI_SUCCESS;
    }
    if (ob1x_mon_enable < 0) {
        ob1x_mon_enable = OB1X_MON_OFF;
    }
    free(ob1x_mon_filename);
    ob1x_mon_filename = NULL;
    if (NULL != filename_param && '\0' != filename_param[0]) {
        ob1x_mon_filename = strdup(filename_param);
    }
    if (ob1x_mon_receives > 0 || OB1X_MON_OUT_NONE != ob1x_mon_output) {
        ob1x_mon_want_receives(); /* yes, or the dump at MPI_Finalize shows them */
    }
    ob1x_mon_set_recording(true);
    return OMPI_SUCCESS;
}

static int *state_mirror = NULL;
static int *recv_mirror = NULL;

/* The mirrors take the state; the receive one only while receives are
 * counted. */
static void publish_state(void)
{
    if (NULL != state_mirror) {
        *state_mirror = ob1x_mon_state;
    }
    if (NULL != recv_mirror) {
        *recv_mirror = receives_wanted ? ob1x_mon_state : OB1X_MON_OFF;
    }
}

void ob1x_mon_set_state_mirror(int *word)
{
    state_mirror = word;
    publish_state();
}

void ob1x_mon_set_recv_state_mirror(int *word)
{
    recv_mirror = word;
    publish_state();
}

void ob1x_mon_want_receives(void)
{
    if (0 != ob1x_mon_receives && !receives_wanted) {
        receives_wanted = true;
        publish_state();
    }
}

void ob1x_mon_set_recording(bool on)
{
    int mode = ob1x_mon_enable > OB1X_MON_FILTERED ? OB1X_MON_FILTERED : ob1x_mon_enable;

    /* MPI_Init has set the thread level before any component records */
    if (!on || mode <= OB1X_MON_OFF) {
        ob1x_mon_state = OB1X_MON_OFF;
    } else {
        ob1x_mon_state = mode | (opal_using_threads() ? OB1X_MON_THREADS : 0);
    }
    publish_state();
}

void ob1x_mon_finalize(void)
{
    if (init_count <= 0 || --init_count > 0) {
        return;
    }
    (void) ob1x_mon_flush(ob1x_mon_output, ob1x_mon_filename);
    ob1x_mon_set_recording(false);
    ob1x_mon_peers_free();
    ob1x_mon_coll_free_all();
    free(ob1x_mon_filename);
    ob1x_mon_filename = NULL;
}

int ob1x_mon_enabled(void)
{
    return ob1x_mon_enable;
}

static bool pml_native = false;
static ob1x_mon_settle_fn_t settle_fn = NULL;

void ob1x_mon_set_settle(ob1x_mon_settle_fn_t fn)
{
    settle_fn = fn;
}

void ob1x_mon_settle(void)
{
    if (NULL != settle_fn) {
        settle_fn();
    }
}

void ob1x_mon_set_pml_records_itself(bool yes)
{
    pml_native = yes;
}

bool ob1x_mon_pml_records_itself(void)
{
    return pml_native;
}

/* ------------------------------------------------------------------------ */
/* Peers                                                                    */

int ob1x_mon_my_world_rank(void)
{
    return (int) OMPI_PROC_MY_NAME->vpid;
}

/* The size of this process's job, which is MPI_COMM_WORLD. */
int ob1x_mon_world_size(void)
{
    return (int) ompi_process_info.num_procs;
}

/* In Open MPI 4.1 a process's MPI_COMM_WORLD rank is its vpid in its job. */
int ob1x_mon_world_rank_of_name(opal_process_name_t name)
{
    if (name.jobid != OMPI_PROC_MY_NAME->jobid ||
        name.vpid >= (opal_vpid_t) ob1x_mon_world_size()) {
        return -1;
    }
    return (int) name.vpid;
}

int ob1x_mon_world_rank(ompi_group_t *group, int rank)
{
    return ob1x_mon_world_rank_of_name(ompi_group_get_proc_name(group, rank));
}

/* Installs *slot (or keeps another thread's). */
static void *install_zeroed(void **slot, size_t size)
{
    void *fresh = calloc(1, size), *expected = NULL;

    if (NULL == fresh) {
        return NULL;
    }
    if (!__atomic_compare_exchange_n(slot, &expected, fresh, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        free(fresh);
        return expected;
    }
    return fresh;
}

static __opal_attribute_noinline__ peer_t *world_peer_alloc(int world_rank)
{
    if (NULL == __atomic_load_n(&world_peers, __ATOMIC_ACQUIRE)) {
        world_size = ob1x_mon_world_size();
        if (NULL ==
            install_zeroed((void **) &world_peers, (size_t) world_size * sizeof(*world_peers))) {
            return NULL;
        }
    }
    return install_zeroed((void **) &world_peers[world_rank], sizeof(peer_t));
}

static other_peer_t *other_find(opal_process_name_t name)
{
    other_peer_t *p;

    for (p = other_peers; NULL != p; p = p->next) {
        if (p->name.jobid == name.jobid && p->name.vpid == name.vpid) {
            return p;
        }
    }
    return NULL;
}

/* Processes of other jobs: rare, so a locked list. */
static __opal_attribute_noinline__ ob1x_mon_counts_t *other_peer_get(opal_process_name_t name)
{
    other_peer_t *p;

    OPAL_THREAD_LOCK(&other_lock);
    p = other_find(name);
    if (NULL == p && NULL != (p = calloc(1, sizeof(*p)))) {
        p->name = name;
        p->next = other_peers;
        other_peers = p;
    }
    OPAL_THREAD_UNLOCK(&other_lock);
    return NULL != p ? &p->p.now : NULL;
}

/* The counts of a peer, allocated on first use; NULL only when out of memory. */
static inline ob1x_mon_counts_t *peer_get(opal_process_name_t name)
{
    int wr = ob1x_mon_world_rank_of_name(name);
    peer_t *p;

    if (wr < 0) {
        return other_peer_get(name);
    }
    if (NULL == world_peers || NULL == (p = __atomic_load_n(&world_peers[wr], __ATOMIC_ACQUIRE))) {
        p = world_peer_alloc(wr);
    }
    return NULL != p ? &p->now : NULL;
}

/* *out = now - base, field by field (the struct is all uint64_t). */
static const ob1x_mon_counts_t *view(const peer_t *p, ob1x_mon_counts_t *out)
{
    const uint64_t *n = (const uint64_t *) &p->now, *b = (const uint64_t *) &p->base;
    uint64_t *o = (uint64_t *) out;

    for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); ++i) {
        o[i] = n[i] - b[i];
    }
    return out;
}

static const peer_t *world_peer_raw(int world_rank)
{
    if (NULL == world_peers || world_rank < 0 || world_rank >= world_size) {
        return NULL;
    }
    return __atomic_load_n(&world_peers[world_rank], __ATOMIC_ACQUIRE);
}

static const peer_t *peer_find_raw(opal_process_name_t name)
{
    int wr = ob1x_mon_world_rank_of_name(name);
    other_peer_t *o;

    if (wr >= 0) {
        return world_peer_raw(wr);
    }
    OPAL_THREAD_LOCK(&other_lock);
    o = other_find(name);
    OPAL_THREAD_UNLOCK(&other_lock);
    return NULL != o ? &o->p : NULL;
}

const ob1x_mon_counts_t *ob1x_mon_world_peer(int world_rank)
{
    static ob1x_mon_counts_t out;
    const peer_t *p = world_peer_raw(world_rank);

    return NULL != p ? view(p, &out) : NULL;
}

const ob1x_mon_counts_t *ob1x_mon_peer_find(opal_process_name_t name)
{
    static ob1x_mon_counts_t out;
    const peer_t *p = peer_find_raw(name);

    return NULL != p ? view(p, &out) : NULL;
}

const ob1x_mon_counts_t *ob1x_mon_peer_find_total(opal_process_name_t name)
{
    const peer_t *p = peer_find_raw(name);

    return NULL != p ? &p->now : NULL;
}

void ob1x_mon_other_foreach(ob1x_mon_other_fn_t fn, void *arg)
{
    ob1x_mon_counts_t out;

    for (other_peer_t *o = other_peers; NULL != o; o = o->next) {
        fn(o->name, view(&o->p, &out), arg);
    }
}

void ob1x_mon_peers_reset(void)
{
    for (int i = 0; NULL != world_peers && i < world_size; ++i) {
        if (NULL != world_peers[i]) {
            world_peers[i]->base = world_peers[i]->now;
        }
    }
    for (other_peer_t *o = other_peers; NULL != o; o = o->next) {
        o->p.base = o->p.now;
    }
}

void ob1x_mon_peers_free(void)
{
    other_peer_t *p;

    for (int i = 0; NULL != world_peers && i < world_size; ++i) {
        free(world_peers[i]);
    }
    free(world_peers);
    world_peers = NULL;
    while (NULL != (p = other_peers)) {
        other_peers = p->next;
        free(p);
    }
}

int ob1x_mon_get_counts(int world_rank, ob1x_mon_counts_t *out)
{
    const ob1x_mon_counts_t *c;

    if (world_rank < 0 || world_rank >= ob1x_mon_world_size()) {
        return OMPI_ERR_BAD_PARAM;
    }
    ob1x_mon_settle();
    c = ob1x_mon_world_peer(world_rank); /* since the last reset */
    if (NULL != c) {
        *out = *c;
    } else {
        memset(out, 0, sizeof(*out));
    }
    return OMPI_SUCCESS;
}

void ob1x_mon_reset(void)
{
    ob1x_mon_settle(); /* what was counted before the reset goes with it */
    ob1x_mon_peers_reset();
    ob1x_mon_coll_reset_all();
}

/* ------------------------------------------------------------------------ */
/* Recording                                                                */

static inline void count_pair(uint64_t *count, size_t bytes)
{
    ob1x_mon_add_msg(count, bytes, NULL);
}

ob1x_mon_counts_t *ob1x_mon_peer_counters(opal_process_name_t name)
{
    return peer_get(name);
}

static void record_send(opal_process_name_t name, size_t bytes, int tag)
{
    ob1x_mon_counts_t *c = peer_get(name);

    if (NULL != c) {
        ob1x_mon_count_send(c, bytes, tag);
    }
}

static void record_recv(opal_process_name_t name, size_t bytes, int tag)
{
    ob1x_mon_counts_t *c = peer_get(name);

    if (NULL != c) {
        ob1x_mon_count_recv(c, bytes, tag);
    }
}

void ob1x_mon_record_pml_proc(const ompi_proc_t *proc, size_t bytes, int tag)
{
    if (ob1x_mon_is_on()) {
        record_send(proc->super.proc_name, bytes, tag);
    }
}

void ob1x_mon_record_pml(ompi_group_t *group, int rank, size_t bytes, int tag)
{
    if (ob1x_mon_is_on()) {
        record_send(ompi_group_get_proc_name(group, rank), bytes, tag);
    }
}

void ob1x_mon_record_pml_recv_proc(const ompi_proc_t *proc, size_t bytes, int tag)
{
    if (ob1x_mon_is_on()) {
        record_recv(proc->super.proc_name, bytes, tag);
    }
}

void ob1x_mon_record_pml_recv(ompi_group_t *group, int rank, size_t bytes, int tag)
{
    if (ob1x_mon_is_on()) {
        record_recv(ompi_group_get_proc_name(group, rank), bytes, tag);
    }
}

static void record_osc(opal_process_name_t name, size_t bytes, ob1x_mon_osc_dir_t dir)
{
    ob1x_mon_counts_t *c = peer_get(name);

    if (NULL != c) {
        count_pair(OB1X_MON_OSC_SENT == dir ? &c->osc_sent_count : &c->osc_recv_count, bytes);
    }
}

void ob1x_mon_record_osc(ompi_group_t *group, int rank, size_t bytes, ob1x_mon_osc_dir_t dir)
{
    if (ob1x_mon_is_on()) {
        record_osc(ompi_group_get_proc_name(group, rank), bytes, dir);
    }
}

void ob1x_mon_record_osc_proc(const ompi_proc_t *proc, size_t bytes, ob1x_mon_osc_dir_t dir)
{
    if (ob1x_mon_is_on()) {
        record_osc(proc->super.proc_name, bytes, dir);
    }
}

static void record_coll(opal_process_name_t name, size_t bytes)
{
    ob1x_mon_counts_t *c = peer_get(name);

    if (NULL != c) {
        count_pair(&c->coll_count, bytes);
    }
}

void ob1x_mon_record_coll(ompi_group_t *group, int rank, size_t bytes)
{
    if (ob1x_mon_is_on()) {
        record_coll(ompi_group_get_proc_name(group, rank), bytes);
    }
}

void ob1x_mon_record_coll_proc(const ompi_proc_t *proc, size_t bytes)
{
    if (ob1x_mon_is_on()) {
        record_coll(proc->super.proc_name, bytes);
    }
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Creation and teardown of per-communicator and per-process state.
 */
#include "ompi_config.h"

#include "ompi/mca/bml/base/base.h"
#include "opal/class/opal_hash_table.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pml_ob1x.h"
#include "pml_ob1x_comm.h"
#include "pml_ob1x_cuda.h"
#include "pml_ob1x_match.h"
#include "pml_ob1x_monitor.h"
#include "pml_ob1x_orphans.h"
#include "pml_ob1x_rdma.h"
#include "pml_ob1x_recvfrag.h"

/* Where the per-process state is kept. Open MPI gives the PML a slot in
 * each ompi_proc_t only when a component of its build asked for one at
 * configure time (pml/ucx does: Debian's build has it); a build without it
 * gets a table keyed by the proc's address. */
#ifdef OMPI_PROC_ENDPOINT_TAG_PML

static ob1x_proc_t *proc_state(struct ompi_proc_t *proc)
{
    return (ob1x_proc_t *) proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_PML];
}

/* Two threads may race to create it: the first one wins (returned). */
static ob1x_proc_t *proc_state_add(struct ompi_proc_t *proc, ob1x_proc_t *op)
{
    void *expected = NULL;

    if (!opal_atomic_compare_exchange_strong_ptr(&proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_PML],
                                                 &expected, op)) {
        return (ob1x_proc_t *) expected;
    }
    return op;
}

static void proc_state_remove(struct ompi_proc_t *proc)
{
    proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_PML] = NULL;
}

void ob1x_procs_fini(void)
{
}

#else /* no PML slot in this Open MPI's ompi_proc_t */

static opal_hash_table_t *proc_table;
static opal_mutex_t proc_table_lock = OPAL_MUTEX_STATIC_INIT;

static uint64_t proc_key(struct ompi_proc_t *proc)
{
    return (uint64_t) (uintptr_t) proc;
}

static ob1x_proc_t *proc_state(struct ompi_proc_t *proc)
{
    void *op = NULL;

    OPAL_THREAD_LOCK(&proc_table_lock);
    if (NULL != proc_table) {
        (void) opal_hash_table_get_value_uint64(proc_table, proc_key(proc), &op);
    }
    OPAL_THREAD_UNLOCK(&proc_table_lock);
    return (ob1x_proc_t *) op;
}

static ob1x_proc_t *proc_state_add(struct ompi_proc_t *proc, ob1x_proc_t *op)
{
    void *there = NULL;

    OPAL_THREAD_LOCK(&proc_table_lock);
    if (NULL == proc_table && NULL != (proc_table = OBJ_NEW(opal_hash_table_t)) &&
        OPAL_SUCCESS != opal_hash_table_init(proc_table, 64)) {
        OBJ_RELEASE(proc_table);
    }
    if (NULL == proc_table) {
        op = NULL;
    } else if (OPAL_SUCCESS ==
               opal_hash_table_get_value_uint64(proc_table, proc_key(proc), &there)) {
        op = (ob1x_proc_t *) there;
    } else if (OPAL_SUCCESS !=
               opal_hash_table_set_value_uint64(proc_table, proc_key(proc), op)) {
        op = NULL;
    }
    OPAL_THREAD_UNLOCK(&proc_table_lock);
    return op;
}

static void proc_state_remove(struct ompi_proc_t *proc)
{
    OPAL_THREAD_LOCK(&proc_table_lock);
    if (NULL != proc_table) {
        (void) opal_hash_table_remove_value_uint64(proc_table, proc_key(proc));
    }
    OPAL_THREAD_UNLOCK(&proc_table_lock);
}

void ob1x_procs_fini(void)
{
    if (NULL != proc_table) {
        OBJ_RELEASE(proc_table);
    }
}

#endif

ob1x_proc_t *ob1x_proc_lookup(struct ompi_proc_t *proc)
{
    ob1x_proc_t *op = proc_state(proc), *won;

    if (OPAL_LIKELY(NULL != op)) {
        return op;
    }
    if (NULL == (op = calloc(1, sizeof(*op)))) {
        return NULL;
    }
    OBJ_CONSTRUCT(&op->xoff_item, opal_list_item_t);
    op->proc = proc;
    won = proc_state_add(proc, op);
    if (won != op) {
        OBJ_DESTRUCT(&op->xoff_item);
        free(op);
    }
    return won;
}

struct mca_bml_base_endpoint_t *ob1x_peer_resolve(struct ompi_communicator_t *comm, int rank)
{
    ob1x_comm_peer_t *peer = &ob1x_comm_of(comm)->peers[rank];
    struct ompi_proc_t *proc = ompi_comm_peer_lookup(comm, rank);
    mca_bml_base_endpoint_t *ep = mca_bml_base_get_endpoint(proc);
    ob1x_proc_t *op = ob1x_proc_lookup(proc);

    if (NULL == ep || NULL == op) {
        return NULL;
    }
    /* Several threads may resolve at once; they write the same values. */
    peer->oproc = op;
    opal_atomic_wmb(); /* oproc before endpoint: readers test endpoint */
    peer->endpoint = ep;
    return ep;
}

static void proc_release(struct ompi_proc_t *proc)
{
    ob1x_proc_t *op = proc_state(proc);

    if (NULL == op) {
        return;
    }
    proc_state_remove(proc);
    OPAL_THREAD_LOCK(&mca_pml_ob1x.pending_lock);
    if (op->xoff_sent) {
        opal_list_remove_item(&mca_pml_ob1x.xoff_procs, &op->xoff_item);
    }
    OPAL_THREAD_UNLOCK(&mca_pml_ob1x.pending_lock);
    OBJ_DESTRUCT(&op->xoff_item);
    ob1x_rdma_peer_free(op->rdma);
    free(op);
}

void ob1x_procs_release(struct ompi_proc_t **procs, size_t nprocs)
{
    for (size_t i = 0; i < nprocs; ++i) {
        proc_release(procs[i]);
    }
}

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

/* Testing aid: arrivals for this communicator become orphans until
 * ob1x_comm_release_held lets it go (every communicator the application
 * creates; MPI_COMM_WORLD and MPI_COMM_SELF never). */
static bool comm_hold(ob1x_comm_t *oc, struct ompi_communicator_t *comm)
{
    if (OPAL_LIKELY(0 == mca_pml_ob1x.params.orphan_hold_ms) || comm == &ompi_mpi_comm_world.comm ||
        comm == &ompi_mpi_comm_self.comm) {
        return false;
    }
    oc->held = 1;
    oc->held_until_us = now_us() + 1000u * (uint64_t) mca_pml_ob1x.params.orphan_hold_ms;
    OPAL_THREAD_LOCK(&mca_pml_ob1x.orphan_lock);
    opal_list_append(&mca_pml_ob1x.held_comms, &oc->held_item);
    OPAL_THREAD_UNLOCK(&mca_pml_ob1x.orphan_lock);
    ob1x_pending_added(); /* so that progress comes back for the release */
    return true;
}

static ob1x_comm_t *held_comm_of(opal_list_item_t *item)
{
    return (ob1x_comm_t *) ((char *) item - offsetof(ob1x_comm_t, held_item));
}

int ob1x_comm_release_held(void)
{
    uint64_t now = now_us();
    opal_list_item_t *item, *next;
    ob1x_comm_t *due[16];
    int n = 0;

    OPAL_THREAD_LOCK(&mca_pml_ob1x.orphan_lock);
    for (item = opal_list_get_first(&mca_pml_ob1x.held_comms);
         item != opal_list_get_end(&mca_pml_ob1x.held_comms) && n < 16; item = next) {
        next = opal_list_get_next(item);
        if (held_comm_of(item)->held_until_us <= now) {
            opal_list_remove_item(&mca_pml_ob1x.held_comms, item);
            due[n] = held_comm_of(item);
            due[n++]->held = 0; /* under orphan_lock, see pml_ob1x_orphans.c */
        }
    }
    OPAL_THREAD_UNLOCK(&mca_pml_ob1x.orphan_lock);
    for (int i = 0; i < n; ++i) {
        opal_atomic_add_fetch_32(&mca_pml_ob1x.pending_count, -1);
        ob1x_recv_orphans_replay(due[i]->comm);
    }
    return n;
}

/* A communicator freed while held: its held messages can only be its own
 * (its context id cannot be reused before every member freed it). */
static void comm_unhold(ob1x_comm_t *oc)
{
    bool was_held;

    OPAL_THREAD_LOCK(&mca_pml_ob1x.orphan_lock);
    was_held = oc->held;
    if (was_held) {
        opal_list_remove_item(&mca_pml_ob1x.held_comms, &oc->held_item);
        oc->held = 0;
    }
    OPAL_THREAD_UNLOCK(&mca_pml_ob1x.orphan_lock);
    if (was_held) {
        opal_atomic_add_fetch_32(&mca_pml_ob1x.pending_count, -1);
        ob1x_recv_orphans_drop(oc->comm);
    }
}

int ob1x_add_comm(struct ompi_communicator_t *comm)
{
    int n = comm->c_remote_group->grp_proc_count;
    ob1x_comm_t *oc;
    size_t size;

    if (comm->c_contextid > OB1X_MAX_CONTEXTID) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    (void) ob1x_cuda_check(); /* CUDA loaded since MPI_Init? */
    size = sizeof(*oc) + (size_t) n * sizeof(ob1x_comm_peer_t);
    if (0 != posix_memalign((void **) &oc, 64, size)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    memset(oc, 0, size);
    OBJ_CONSTRUCT(&oc->lock, opal_mutex_t);
    OBJ_CONSTRUCT(&oc->wildcard, opal_list_t);
    oc->num_peers = n;
    for (int i = 0; i < n; ++i) {
        OBJ_CONSTRUCT(&oc->peers[i].specific, opal_list_t);
        OBJ_CONSTRUCT(&oc->peers[i].unexpected, opal_list_t);
        OBJ_CONSTRUCT(&oc->peers[i].out_of_order, opal_list_t);
    }
    oc->comm = comm;
    OBJ_CONSTRUCT(&oc->held_item, opal_list_item_t);
    if (comm_hold(oc, comm)) {
        comm->c_pml_comm = (struct mca_pml_comm_t *) oc;
        return OMPI_SUCCESS;
    }
    /* Published under orphan_lock, so that a message is either saved
     * before this point (and replayed now) or matched directly. */
    OPAL_THREAD_LOCK(&mca_pml_ob1x.orphan_lock);
    comm->c_pml_comm = (struct mca_pml_comm_t *) oc;
    OPAL_THREAD_UNLOCK(&mca_pml_ob1x.orphan_lock);
    ob1x_recv_orphans_replay(comm);
    return OMPI_SUCCESS;
}

int ob1x_del_comm(struct ompi_communicator_t *comm)
{
    ob1x_comm_t *oc = ob1x_comm_of(comm);

    if (NULL == oc) {
        return OMPI_SUCCESS;
    }
    comm_unhold(oc);
    ob1x_monitor_settle_comm(comm); /* its staged receive counts outlive it */
    comm->c_pml_comm = NULL;
    for (int i = 0; i < oc->num_peers; ++i) {
        ob1x_comm_peer_t *peer = &oc->peers[i];
        while (!opal_list_is_empty(&peer->unexpected)) {
            ob1x_recv_frag_t *frag = (ob1x_recv_frag_t *) opal_list_get_first(&peer->unexpected);
            ob1x_unexpected_remove(oc, peer, frag);
            ob1x_recv_frag_release(frag);
        }
        ob1x_recv_frags_drop(&peer->out_of_order);
        OBJ_DESTRUCT(&peer->specific);
        OBJ_DESTRUCT(&peer->unexpected);
        OBJ_DESTRUCT(&peer->out_of_order);
    }
    OBJ_DESTRUCT(&oc->wildcard);
    OBJ_DESTRUCT(&oc->held_item);
    OBJ_DESTRUCT(&oc->lock);
    free(oc);
    return OMPI_SUCCESS;
}

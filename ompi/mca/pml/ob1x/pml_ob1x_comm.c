/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Creation and teardown of per-communicator and per-process state.
 */
#include "ompi_config.h"

#include "ompi/mca/bml/base/base.h"

#include <stdlib.h>

#include "pml_ob1x.h"
#include "pml_ob1x_comm.h"
#include "pml_ob1x_recvfrag.h"

ob1x_proc_t *ob1x_proc_create(struct ompi_proc_t *proc)
{
    ob1x_proc_t *op = calloc(1, sizeof(*op));
    void *expected = NULL;

    if (NULL == op) {
        return NULL;
    }
    OBJ_CONSTRUCT(&op->xoff_item, opal_list_item_t);
    op->proc = proc;
    /* Two threads may race to create it: the first one wins. */
    if (!opal_atomic_compare_exchange_strong_ptr(&proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_PML],
                                                 &expected, op)) {
        free(op);
        return (ob1x_proc_t *) expected;
    }
    return op;
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
    peer->proc = proc;
    peer->oproc = op;
    opal_atomic_wmb(); /* proc and oproc before endpoint: readers test endpoint */
    peer->endpoint = ep;
    return ep;
}

static void proc_release(struct ompi_proc_t *proc)
{
    ob1x_proc_t *op = (ob1x_proc_t *) proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_PML];

    if (NULL == op) {
        return;
    }
    proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_PML] = NULL;
    OPAL_THREAD_LOCK(&mca_pml_ob1x.pending_lock);
    if (op->xoff_sent) {
        opal_list_remove_item(&mca_pml_ob1x.xoff_procs, &op->xoff_item);
    }
    OPAL_THREAD_UNLOCK(&mca_pml_ob1x.pending_lock);
    OBJ_DESTRUCT(&op->xoff_item);
    free(op);
}

void ob1x_procs_release(struct ompi_proc_t **procs, size_t nprocs)
{
    for (size_t i = 0; i < nprocs; ++i) {
        proc_release(procs[i]);
    }
}

int ob1x_add_comm(struct ompi_communicator_t *comm)
{
    int n = comm->c_remote_group->grp_proc_count;
    ob1x_comm_t *oc;

    if (comm->c_contextid > OB1X_MAX_CONTEXTID) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    oc = calloc(1, sizeof(*oc) + (size_t) n * sizeof(ob1x_comm_peer_t));
    if (NULL == oc) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    OBJ_CONSTRUCT(&oc->lock, opal_mutex_t);
    OBJ_CONSTRUCT(&oc->wildcard, opal_list_t);
    oc->num_peers = n;
    for (int i = 0; i < n; ++i) {
        OBJ_CONSTRUCT(&oc->peers[i].specific, opal_list_t);
        OBJ_CONSTRUCT(&oc->peers[i].unexpected, opal_list_t);
        OBJ_CONSTRUCT(&oc->peers[i].out_of_order, opal_list_t);
    }
    comm->c_pml_comm = (struct mca_pml_comm_t *) oc;
    ob1x_recv_orphans_replay(comm);
    return OMPI_SUCCESS;
}

int ob1x_del_comm(struct ompi_communicator_t *comm)
{
    ob1x_comm_t *oc = ob1x_comm_of(comm);

    if (NULL == oc) {
        return OMPI_SUCCESS;
    }
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
    OBJ_DESTRUCT(&oc->lock);
    free(oc);
    return OMPI_SUCCESS;
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Orphans: messages for a communicator this process has not created yet,
 * held until it is (or until the pml_ob1x_orphan_hold_ms testing aid lets
 * it go), then replayed in arrival order.
 */
#include "ompi_config.h"

#include "pml_ob1x.h"
#include "pml_ob1x_match.h"
#include "pml_ob1x_orphans.h"
#include "pml_ob1x_recvfrag.h"

/*
 * A message for a communicator we have not created yet: keep it until
 * ob1x_add_comm (or the end of a hold) replays it. The test is repeated
 * under orphan_lock, which publication also takes, so that a message is
 * either saved before the replay or matched directly, never left behind.
 * Returns the communicator's state if it became ready meanwhile.
 */
ob1x_comm_t *__opal_attribute_noinline__ ob1x_orphan_or_ready(const ob1x_hdr_t *hdr,
                                                              const mca_btl_base_segment_t *segs,
                                                              size_t nsegs,
                                                              struct ompi_communicator_t **comm)
{
    ob1x_recv_frag_t *frag;
    ob1x_comm_t *oc;

    OPAL_THREAD_LOCK(&mca_pml_ob1x.orphan_lock);
    *comm = ompi_comm_lookup(hdr->match.ctx);
    if (NULL != (oc = ob1x_comm_ready(*comm))) {
        OPAL_THREAD_UNLOCK(&mca_pml_ob1x.orphan_lock);
        return oc;
    }
    frag = ob1x_recv_frag_save(hdr, ob1x_hdr_size(hdr->common.type), segs, nsegs);
    opal_list_append(&mca_pml_ob1x.orphan_frags, &frag->super.super);
    OPAL_THREAD_UNLOCK(&mca_pml_ob1x.orphan_lock);
    ob1x_count_event(OB1X_EV_ORPHAN);
    return NULL;
}

/* Moves the orphans of one communicator to `mine`, in arrival order. */
static void orphans_take(struct ompi_communicator_t *comm, opal_list_t *mine)
{
    ob1x_recv_frag_t *frag, *next;

    OPAL_THREAD_LOCK(&mca_pml_ob1x.orphan_lock);
    OPAL_LIST_FOREACH_SAFE(frag, next, &mca_pml_ob1x.orphan_frags, ob1x_recv_frag_t)
    {
        if (frag->hdr.match.ctx == (uint16_t) comm->c_contextid) {
            opal_list_remove_item(&mca_pml_ob1x.orphan_frags, &frag->super.super);
            opal_list_append(mine, &frag->super.super);
        }
    }
    OPAL_THREAD_UNLOCK(&mca_pml_ob1x.orphan_lock);
}

void ob1x_recv_orphans_replay(struct ompi_communicator_t *comm)
{
    ob1x_comm_t *oc = ob1x_comm_of(comm);
    ob1x_recv_frag_t *frag;
    opal_list_t mine;

    if (opal_list_is_empty(&mca_pml_ob1x.orphan_frags)) {
        return; /* publication took orphan_lock after any save: this look is current */
    }
    OBJ_CONSTRUCT(&mine, opal_list_t);
    orphans_take(comm, &mine);
    /* Arrival order is kept, and sequence numbers restore MPI order anyway. */
    while (NULL != (frag = (ob1x_recv_frag_t *) opal_list_remove_first(&mine))) {
        ob1x_match_incoming_frag(oc, frag);
    }
    OBJ_DESTRUCT(&mine);
}

void ob1x_recv_orphans_drop(struct ompi_communicator_t *comm)
{
    opal_list_t mine;

    OBJ_CONSTRUCT(&mine, opal_list_t);
    orphans_take(comm, &mine);
    ob1x_recv_frags_drop(&mine);
    OBJ_DESTRUCT(&mine);
}

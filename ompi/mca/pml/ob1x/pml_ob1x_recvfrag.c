/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * BTL receive callbacks, one per header type, and the fragments that must
 * outlive a callback.
 */
#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "ompi/mca/bml/base/base.h"
#include "ompi/mca/rte/rte.h"

#include "common_ob1x_copy.h"

#include "pml_ob1x.h"
#include "pml_ob1x_ctl.h"
#include "pml_ob1x_match.h"
#include "pml_ob1x_recvfrag.h"
#include "pml_ob1x_recvreq.h"
#include "pml_ob1x_sendreq.h"

OBJ_CLASS_INSTANCE(ob1x_recv_frag_t, opal_free_list_item_t, NULL, NULL);

ob1x_recv_frag_t *ob1x_recv_frag_save(const ob1x_hdr_t *hdr, size_t hdr_len,
                                      const mca_btl_base_segment_t *segs, size_t nsegs)
{
    ob1x_recv_frag_t *frag = (ob1x_recv_frag_t *) opal_free_list_wait(&mca_pml_ob1x.recv_frags);
    size_t len = 0;
    unsigned char *dst;

    frag->tombstone = false;
    frag->arrived = false;
    frag->req = NULL;
    frag->data_len = 0;
    frag->data = frag->inline_data;
    if (NULL == hdr) {
        memset(&frag->hdr, 0, sizeof(frag->hdr));
        return frag;
    }
    memcpy(&frag->hdr, hdr, hdr_len);
    for (size_t i = 0; i < nsegs; ++i) {
        len += segs[i].seg_len;
    }
    len -= hdr_len;
    if (len > OB1X_FRAG_INLINE) {
        frag->data = malloc(len);
        if (NULL == frag->data) {
            opal_output(0, "pml:ob1x: out of memory holding a %zu-byte unexpected message", len);
            ompi_rte_abort(OMPI_ERR_OUT_OF_RESOURCE, NULL);
        }
    }
    frag->data_len = len;
    dst = frag->data;
    ob1x_copy(dst, (const unsigned char *) segs[0].seg_addr.pval + hdr_len,
              segs[0].seg_len - hdr_len);
    dst += segs[0].seg_len - hdr_len;
    for (size_t i = 1; i < nsegs; ++i) {
        ob1x_copy(dst, segs[i].seg_addr.pval, segs[i].seg_len);
        dst += segs[i].seg_len;
    }
    return frag;
}

void ob1x_recv_frag_release(ob1x_recv_frag_t *frag)
{
    if (frag->data != frag->inline_data) {
        free(frag->data);
    }
    opal_free_list_return(&mca_pml_ob1x.recv_frags, &frag->super);
}

void ob1x_recv_frags_drop(opal_list_t *list)
{
    opal_list_item_t *item;
    while (NULL != (item = opal_list_remove_first(list))) {
        ob1x_recv_frag_release((ob1x_recv_frag_t *) item);
    }
}

/* --------------------------------------------------------------- orphans */

/* The matching state of a communicator that can take messages now, or NULL
 * (not created here yet, or held by the pml_ob1x_orphan_hold_ms aid). */
static inline ob1x_comm_t *comm_ready(struct ompi_communicator_t *comm)
{
    ob1x_comm_t *oc = NULL == comm ? NULL : ob1x_comm_of(comm);
    return NULL == oc || oc->held ? NULL : oc;
}

/*
 * A message for a communicator we have not created yet: keep it until
 * ob1x_add_comm (or the end of a hold) replays it. The test is repeated
 * under orphan_lock, which publication also takes, so that a message is
 * either saved before the replay or matched directly, never left behind.
 * Returns the communicator's state if it became ready meanwhile.
 */
static ob1x_comm_t *__opal_attribute_noinline__ orphan_or_ready(const ob1x_hdr_t *hdr,
                                                                const mca_btl_base_segment_t *segs,
                                                                size_t nsegs,
                                                                struct ompi_communicator_t **comm)
{
    ob1x_recv_frag_t *frag;
    ob1x_comm_t *oc;

    OPAL_THREAD_LOCK(&mca_pml_ob1x.orphan_lock);
    *comm = ompi_comm_lookup(hdr->match.ctx);
    if (NULL != (oc = comm_ready(*comm))) {
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

/* ------------------------------------------------------------- callbacks */

static void __opal_attribute_noinline__ bad_hdr(const mca_btl_base_descriptor_t *des)
{
    const ob1x_hdr_t *hdr = (const ob1x_hdr_t *) des->des_segments[0].seg_addr.pval;

    opal_output(0,
                "pml:ob1x: received a header of wire version %d (type %d, %zu bytes); this "
                "build speaks version %d. All processes of a job must use the same ob1x.",
                ob1x_hdr_version(&hdr->common), hdr->common.type,
                (size_t) des->des_segments[0].seg_len, OB1X_HDR_VERSION);
    ompi_rte_abort(OMPI_ERR_BAD_PARAM, NULL);
}

/* Reject what this build cannot read; a mismatch means two different
 * builds of ob1x in one job, which can only end the job. */
static inline const ob1x_hdr_t *checked_hdr(const mca_btl_base_descriptor_t *des)
{
    const ob1x_hdr_t *hdr = (const ob1x_hdr_t *) des->des_segments[0].seg_addr.pval;

    if (OPAL_UNLIKELY(ob1x_hdr_version(&hdr->common) != OB1X_HDR_VERSION ||
                      des->des_segments[0].seg_len < ob1x_hdr_size(hdr->common.type) ||
                      0 == ob1x_hdr_size(hdr->common.type))) {
        bad_hdr(des);
    }
    return hdr;
}

static void recv_cb_match(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                          mca_btl_base_descriptor_t *des, void *cbdata)
{
    const ob1x_hdr_t *hdr = checked_hdr(des);
    struct ompi_communicator_t *comm;
    ob1x_comm_t *oc;

    (void) btl;
    (void) tag;
    (void) cbdata;
    comm = ompi_comm_lookup(hdr->match.ctx);
    oc = comm_ready(comm);
    if (OPAL_UNLIKELY(NULL == oc) &&
        NULL == (oc = orphan_or_ready(hdr, des->des_segments, des->des_segment_count, &comm))) {
        return;
    }
    if (OPAL_UNLIKELY(hdr->match.src < 0 || hdr->match.src >= oc->num_peers)) {
        opal_output(0, "pml:ob1x: dropping a message from invalid rank %d on context %d",
                    hdr->match.src, hdr->match.ctx);
        return;
    }
    ob1x_match_incoming(oc, comm, hdr, des->des_segments, des->des_segment_count);
}

static void recv_cb_ack(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                        mca_btl_base_descriptor_t *des, void *cbdata)
{
    const ob1x_hdr_t *hdr = checked_hdr(des);
    ob1x_send_request_t *req = (ob1x_send_request_t *) (uintptr_t) hdr->ack.src_req;

    (void) btl;
    (void) tag;
    (void) cbdata;
    ob1x_send_request_acked(req, hdr->ack.dst_req);
}

static void recv_cb_frag(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                         mca_btl_base_descriptor_t *des, void *cbdata)
{
    const ob1x_hdr_t *hdr = checked_hdr(des);
    ob1x_recv_request_t *req = (ob1x_recv_request_t *) (uintptr_t) hdr->frag.dst_req;

    (void) btl;
    (void) tag;
    (void) cbdata;
    ob1x_recv_request_frag(req, &hdr->frag, des->des_segments, des->des_segment_count);
}

static void recv_cb_cancel(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                           mca_btl_base_descriptor_t *des, void *cbdata)
{
    const ob1x_hdr_t *hdr = checked_hdr(des);
    struct ompi_communicator_t *comm = ompi_comm_lookup(hdr->cancel.ctx);
    ob1x_comm_t *oc = NULL == comm ? NULL : ob1x_comm_of(comm);
    ob1x_hdr_t answer = *hdr;

    (void) btl;
    (void) tag;
    (void) cbdata;
    if (NULL == oc || hdr->cancel.src < 0 || hdr->cancel.src >= oc->num_peers) {
        return; /* nothing here can name the sender; it waits for the match */
    }
    answer.common.type = OB1X_HDR_CANCEL_ACK;
    answer.cancel.cancelled = ob1x_match_cancel(oc, hdr->cancel.src, hdr->cancel.seq);
    (void) ob1x_ctl_send(ompi_comm_peer_lookup(comm, hdr->cancel.src), &answer);
}

static void recv_cb_cancel_ack(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                               mca_btl_base_descriptor_t *des, void *cbdata)
{
    const ob1x_hdr_t *hdr = checked_hdr(des);

    (void) btl;
    (void) tag;
    (void) cbdata;
    ob1x_send_request_cancel_answer((ob1x_send_request_t *) (uintptr_t) hdr->cancel.src_req,
                                    0 != hdr->cancel.cancelled);
}

static void recv_cb_flow(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                         mca_btl_base_descriptor_t *des, void *cbdata)
{
    const ob1x_hdr_t *hdr = checked_hdr(des);
    opal_process_name_t name = {.jobid = hdr->flow.jobid, .vpid = hdr->flow.vpid};
    struct ompi_proc_t *proc = (struct ompi_proc_t *) ompi_proc_for_name(name);
    ob1x_proc_t *op;

    (void) btl;
    (void) tag;
    (void) cbdata;
    if (NULL == proc) {
        return;
    }
    op = ob1x_proc_lookup(proc);
    OPAL_THREAD_LOCK(&mca_pml_ob1x.pending_lock);
    if (hdr->flow.generation > op->flow_gen_seen) {
        /* FLOWs may overtake each other on different BTLs: newest wins. */
        op->flow_gen_seen = hdr->flow.generation;
        op->congested = (int32_t) hdr->flow.congested;
    }
    OPAL_THREAD_UNLOCK(&mca_pml_ob1x.pending_lock);
}

int ob1x_register_callbacks(void)
{
    static const struct {
        uint8_t type;
        mca_btl_base_module_recv_cb_fn_t cb;
    } table[] = {
        {OB1X_HDR_MATCH, recv_cb_match},   {OB1X_HDR_RNDV, recv_cb_match},
        {OB1X_HDR_ACK, recv_cb_ack},       {OB1X_HDR_FRAG, recv_cb_frag},
        {OB1X_HDR_CANCEL, recv_cb_cancel}, {OB1X_HDR_CANCEL_ACK, recv_cb_cancel_ack},
        {OB1X_HDR_FLOW, recv_cb_flow},
    };

    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); ++i) {
        int rc = mca_bml.bml_register(OB1X_BTL_TAG(table[i].type), table[i].cb, NULL);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
    }
    return OMPI_SUCCESS;
}

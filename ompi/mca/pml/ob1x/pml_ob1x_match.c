/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Matching. Per peer: a queue of receives naming that peer, an unexpected
 * queue and an out-of-order queue; per communicator: one queue of
 * MPI_ANY_SOURCE receives. A message from peer P is matched against P's
 * queue and the wildcard queue only, and the earlier-posted candidate wins,
 * so the cost does not grow with the number of peers.
 *
 * Messages from one peer are matched strictly in sequence-number order;
 * those that arrive early (several BTLs, or a BTL without ordering) wait in
 * out_of_order. A cancelled message that was never matched leaves a
 * tombstone there, which keeps its sequence slot.
 */
#include "ompi_config.h"

#include <string.h>

#include "pml_ob1x.h"
#include "pml_ob1x_ctl.h"
#include "pml_ob1x_match.h"

_Static_assert(OMPI_ANY_TAG == MPI_ANY_TAG, "pml_ob1x_order.h tests MPI_ANY_TAG");

static ob1x_recv_request_t *first_match(opal_list_t *queue, int32_t tag)
{
    ob1x_recv_request_t *req;
    OPAL_LIST_FOREACH(req, queue, ob1x_recv_request_t)
    {
        if (ob1x_tag_matches(req->base.req_base.req_tag, tag)) {
            return req;
        }
    }
    return NULL;
}

ob1x_recv_request_t *ob1x_match_posted(ob1x_comm_t *oc, ob1x_comm_peer_t *peer,
                                       const ob1x_hdr_match_t *hdr)
{
    ob1x_recv_request_t *spec = first_match(&peer->specific, hdr->tag);
    ob1x_recv_request_t *wild = NULL;

    if (OPAL_UNLIKELY(!opal_list_is_empty(&oc->wildcard))) {
        wild = first_match(&oc->wildcard, hdr->tag);
    }
    if (ob1x_wildcard_wins(NULL != wild, NULL != wild ? wild->post_seq : 0, NULL != spec,
                           NULL != spec ? spec->post_seq : 0)) {
        opal_list_remove_item(&oc->wildcard, (opal_list_item_t *) wild);
        return wild;
    }
    if (NULL != spec) {
        opal_list_remove_item(&peer->specific, (opal_list_item_t *) spec);
    }
    return spec;
}

static void unexpected_add(ob1x_comm_t *oc, ob1x_comm_peer_t *peer, ob1x_recv_frag_t *frag)
{
    opal_list_append(&peer->unexpected, &frag->super.super);
    oc->unexpected_count++;
    OPAL_THREAD_ADD_FETCH64(&mca_pml_ob1x.unexpected_bytes, (int64_t) frag->data_len);
    ob1x_count_unexpected(1);
}

void ob1x_unexpected_remove(ob1x_comm_t *oc, ob1x_comm_peer_t *peer, ob1x_recv_frag_t *frag)
{
    opal_list_remove_item(&peer->unexpected, &frag->super.super);
    oc->unexpected_count--;
    OPAL_THREAD_ADD_FETCH64(&mca_pml_ob1x.unexpected_bytes, -(int64_t) frag->data_len);
    ob1x_count_unexpected(-1);
}

ob1x_recv_frag_t *ob1x_unexpected_find(ob1x_comm_peer_t *peer, int tag)
{
    ob1x_recv_frag_t *frag;
    OPAL_LIST_FOREACH(frag, &peer->unexpected, ob1x_recv_frag_t)
    {
        if (ob1x_tag_matches(tag, frag->hdr.match.tag)) {
            return frag;
        }
    }
    return NULL;
}

/* Insert into out_of_order keeping sequence order (usually appends). A
 * straggler older than everything held goes in front at once: walked from
 * the tail, each one would cost the whole queue. */
static void ooo_insert(ob1x_comm_peer_t *peer, ob1x_recv_frag_t *frag)
{
    ob1x_recv_frag_t *cur = (ob1x_recv_frag_t *) opal_list_get_first(&peer->out_of_order);

    if (!opal_list_is_empty(&peer->out_of_order) && cur->hdr.match.seq != frag->hdr.match.seq &&
        ob1x_seq_ahead(cur->hdr.match.seq, frag->hdr.match.seq)) {
        opal_list_prepend(&peer->out_of_order, &frag->super.super);
        return;
    }
    OPAL_LIST_FOREACH_REV(cur, &peer->out_of_order, ob1x_recv_frag_t)
    {
        if (ob1x_seq_ahead(frag->hdr.match.seq, cur->hdr.match.seq)) {
            opal_list_insert_pos(&peer->out_of_order, opal_list_get_next(&cur->super.super),
                                 &frag->super.super);
            return;
        }
    }
    opal_list_prepend(&peer->out_of_order, &frag->super.super);
}

static ob1x_recv_frag_t *ooo_find(ob1x_comm_peer_t *peer, uint16_t seq)
{
    ob1x_recv_frag_t *cur;
    OPAL_LIST_FOREACH(cur, &peer->out_of_order, ob1x_recv_frag_t)
    {
        if (cur->hdr.match.seq == seq) {
            return cur;
        }
    }
    return NULL;
}

/* An in-sequence saved fragment: match it or make it unexpected. Lock held. */
static void take_in_sequence(ob1x_comm_t *oc, ob1x_comm_peer_t *peer, ob1x_recv_frag_t *frag,
                             ob1x_deliveries_t *out)
{
    peer->expected_seq++;
    frag->req = ob1x_match_posted(oc, peer, &frag->hdr.match);
    if (NULL != frag->req) {
        frag->next_delivery = NULL;
        *out->tail = frag;
        out->tail = &frag->next_delivery;
    } else {
        unexpected_add(oc, peer, frag);
    }
}

/* Release held fragments that are now in sequence. Lock held. */
static void drain_out_of_order(ob1x_comm_t *oc, ob1x_comm_peer_t *peer, ob1x_deliveries_t *out)
{
    ob1x_recv_frag_t *head;

    while (NULL != (head = (ob1x_recv_frag_t *) opal_list_get_first(&peer->out_of_order)) &&
           head != (ob1x_recv_frag_t *) opal_list_get_end(&peer->out_of_order) &&
           head->hdr.match.seq == peer->expected_seq) {
        if (head->tombstone && !head->arrived) {
            break; /* the cancelled message must still come through */
        }
        opal_list_remove_first(&peer->out_of_order);
        if (head->tombstone) {
            peer->tombstones--;
            peer->expected_seq++;
            ob1x_recv_frag_release(head);
            continue;
        }
        take_in_sequence(oc, peer, head, out);
    }
}

static void deliver_all(ob1x_deliveries_t *out)
{
    ob1x_recv_frag_t *frag;
    ob1x_recv_frag_t *next;
    for (frag = out->head; NULL != frag; frag = next) {
        next = frag->next_delivery;
        ob1x_recv_request_deliver_frag(frag->req, frag);
    }
}

/*
 * The uncommon cases of an arriving MATCH/RNDV: ahead of sequence, or a
 * tombstone exists. Takes ownership of the lock and releases it.
 */
static void __opal_attribute_noinline__ match_slow(ob1x_comm_t *oc, ob1x_comm_peer_t *peer,
                                                   ob1x_recv_frag_t *frag, ob1x_deliveries_t *out)
{
    uint16_t seq = frag->hdr.match.seq;
    ob1x_recv_frag_t *tomb = peer->tombstones ? ooo_find(peer, seq) : NULL;

    if (frag->tombstone) {
        ooo_insert(peer, frag); /* a void message: drained below when in turn */
    } else if (NULL != tomb && tomb->tombstone) {
        /* It was cancelled before it arrived: drop it, let the slot go. */
        tomb->arrived = true;
        ob1x_recv_frag_release(frag);
    } else if (seq != peer->expected_seq) {
        ob1x_count_event(OB1X_EV_OUT_OF_ORDER);
        ooo_insert(peer, frag);
        return;
    } else {
        take_in_sequence(oc, peer, frag, out);
    }
    drain_out_of_order(oc, peer, out);
}

void ob1x_match_incoming(ob1x_comm_t *oc, struct ompi_communicator_t *comm, const ob1x_hdr_t *hdr,
                         const mca_btl_base_segment_t *segs, size_t nsegs)
{
    size_t hdr_len = ob1x_hdr_size(hdr->common.type);
    ob1x_comm_peer_t *peer = &oc->peers[hdr->match.src];
    ob1x_recv_request_t *req;
    ob1x_deliveries_t out;
    bool stored = false;

    out.head = NULL;
    out.tail = &out.head;
    OPAL_THREAD_LOCK(&oc->lock);
    if (OPAL_UNLIKELY(hdr->match.seq != peer->expected_seq || 0 != peer->tombstones ||
                      (hdr->common.flags & OB1X_HDR_FLAG_VOID))) {
        ob1x_recv_frag_t *frag = ob1x_recv_frag_save(hdr, hdr_len, segs, nsegs);
        if (hdr->common.flags & OB1X_HDR_FLAG_VOID) {
            /* Holds a sequence slot and nothing else: a tombstone that came. */
            frag->tombstone = true;
            frag->arrived = true;
            peer->tombstones++;
        }
        match_slow(oc, peer, frag, &out);
        OPAL_THREAD_UNLOCK(&oc->lock);
        deliver_all(&out);
        return;
    }
    peer->expected_seq++;
    req = ob1x_match_posted(oc, peer, &hdr->match);
    if (NULL == req) {
        unexpected_add(oc, peer, ob1x_recv_frag_save(hdr, hdr_len, segs, nsegs));
        stored = true;
    }
    if (OPAL_UNLIKELY(!opal_list_is_empty(&peer->out_of_order))) {
        drain_out_of_order(oc, peer, &out);
    }
    OPAL_THREAD_UNLOCK(&oc->lock);

    if (NULL != req) {
        ob1x_recv_request_deliver(req, peer, hdr, segs, nsegs, hdr_len);
    }
    if (OPAL_UNLIKELY(NULL != out.head)) {
        deliver_all(&out);
    }
    if (stored) {
        ob1x_flow_check(ompi_comm_peer_lookup(comm, hdr->match.src));
    }
}

void ob1x_match_incoming_frag(ob1x_comm_t *oc, ob1x_recv_frag_t *frag)
{
    ob1x_comm_peer_t *peer = &oc->peers[frag->hdr.match.src];
    ob1x_deliveries_t out;

    out.head = NULL;
    out.tail = &out.head;
    OPAL_THREAD_LOCK(&oc->lock);
    match_slow(oc, peer, frag, &out);
    OPAL_THREAD_UNLOCK(&oc->lock);
    deliver_all(&out);
}

bool ob1x_match_cancel(ob1x_comm_t *oc, int32_t src, uint16_t seq)
{
    ob1x_comm_peer_t *peer = &oc->peers[src];
    ob1x_recv_frag_t *frag;
    bool cancelled = false;

    OPAL_THREAD_LOCK(&oc->lock);
    OPAL_LIST_FOREACH(frag, &peer->unexpected, ob1x_recv_frag_t)
    {
        if (frag->hdr.match.seq == seq) {
            ob1x_unexpected_remove(oc, peer, frag);
            ob1x_recv_frag_release(frag);
            cancelled = true;
            break;
        }
    }
    if (!cancelled && ob1x_seq_ahead(seq, peer->expected_seq)) {
        /* Not matched yet: held out of order, or still on its way. */
        frag = ooo_find(peer, seq);
        if (NULL != frag) {
            frag->tombstone = true;
            frag->arrived = true;
        } else {
            frag = ob1x_recv_frag_save(NULL, 0, NULL, 0);
            frag->hdr.match.seq = seq;
            frag->tombstone = true;
            frag->arrived = false;
            ooo_insert(peer, frag);
        }
        peer->tombstones++;
        cancelled = true;
    }
    OPAL_THREAD_UNLOCK(&oc->lock);
    return cancelled;
}

/*
 * Find an unexpected fragment for (src, tag), src possibly MPI_ANY_SOURCE.
 * Any peer's message may satisfy a wildcard (MPI orders only messages from
 * one sender); the scan starts where the previous one ended, for fairness.
 * Lock held.
 */
ob1x_recv_frag_t *ob1x_unexpected_find_any(ob1x_comm_t *oc, int src, int tag,
                                           ob1x_comm_peer_t **peer_out)
{
    static int next_start;
    ob1x_recv_frag_t *frag;

    if (0 == oc->unexpected_count) {
        return NULL;
    }
    if (OMPI_ANY_SOURCE != src) {
        *peer_out = &oc->peers[src];
        return ob1x_unexpected_find(*peer_out, tag);
    }
    for (int i = 0; i < oc->num_peers; ++i) {
        int p = (next_start + i) % oc->num_peers;
        if (NULL != (frag = ob1x_unexpected_find(&oc->peers[p], tag))) {
            next_start = p + 1;
            *peer_out = &oc->peers[p];
            return frag;
        }
    }
    return NULL;
}

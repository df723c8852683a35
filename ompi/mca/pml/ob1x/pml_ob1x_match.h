/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * The matching engine: posted receives against incoming MATCH/RNDV headers,
 * with MPI's ordering per (communicator, sender).
 */
#ifndef PML_OB1X_MATCH_H
#define PML_OB1X_MATCH_H

#include "ompi_config.h"

#include "pml_ob1x_comm.h"
#include "pml_ob1x_flow.h"
#include "pml_ob1x_order.h"
#include "pml_ob1x_recvfrag.h"
#include "pml_ob1x_recvreq.h"

BEGIN_C_DECLS

/* Take the earliest-posted receive that accepts hdr, or NULL. Lock held. */
ob1x_recv_request_t *ob1x_match_posted(ob1x_comm_t *oc, ob1x_comm_peer_t *peer,
                                       const ob1x_hdr_match_t *hdr);

/* Matched fragments collected under the lock, delivered after it is dropped.
 * A plain chain through ob1x_recv_frag_t.next_delivery: it costs nothing to
 * set up on the common path, where it stays empty. */
typedef struct ob1x_deliveries {
    ob1x_recv_frag_t *head;
    ob1x_recv_frag_t **tail;
} ob1x_deliveries_t;

/*
 * A MATCH/RNDV arrived from a BTL. Matches it (or stores it), releases more
 * held fragments that are now in sequence, and delivers everything matched.
 */
void ob1x_match_incoming(ob1x_comm_t *oc, struct ompi_communicator_t *comm, const ob1x_hdr_t *hdr,
                         const mca_btl_base_segment_t *segs, size_t nsegs);

/* Same for a fragment that was saved earlier (orphans being replayed). */
void ob1x_match_incoming_frag(ob1x_comm_t *oc, ob1x_recv_frag_t *frag);

/* Handle a CANCEL for (src, seq); returns true if the message was withdrawn. */
bool ob1x_match_cancel(ob1x_comm_t *oc, int32_t src, uint16_t seq);

/* Search a peer's unexpected queue (probe / posted receive). Lock held. */
ob1x_recv_frag_t *ob1x_unexpected_find(ob1x_comm_peer_t *peer, int tag);

/* Remove a fragment from a peer's unexpected queue, with accounting. Lock held. */
void ob1x_unexpected_remove(ob1x_comm_t *oc, ob1x_comm_peer_t *peer, ob1x_recv_frag_t *frag);

/* Unexpected fragment for (src, tag), src may be MPI_ANY_SOURCE. Lock held. */
ob1x_recv_frag_t *ob1x_unexpected_find_any(ob1x_comm_t *oc, int src, int tag,
                                           ob1x_comm_peer_t **peer_out);

END_C_DECLS

#endif /* PML_OB1X_MATCH_H */

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Receive requests: posting, delivery of matched data, completion.
 */
#ifndef PML_OB1X_RECVREQ_H
#define PML_OB1X_RECVREQ_H

#include "ompi_config.h"

#include "opal/mca/btl/btl.h"
#include "ompi/mca/pml/base/pml_base_recvreq.h"

#include "pml_ob1x.h"
#include "pml_ob1x_comm.h"
#include "pml_ob1x_recvfrag.h"

BEGIN_C_DECLS

typedef struct ob1x_recv_request {
    mca_pml_base_recv_request_t base;
    uint32_t post_seq;              /* posting order within the communicator */
    size_t capacity;                /* packed bytes the receive buffer can take */
    size_t msg_length;              /* packed bytes the sender sends */
    volatile size_t bytes_received; /* payload bytes seen, delivered or truncated */
    opal_mutex_t lock;              /* serialises the convertor between fragments */
    opal_list_t early_pieces;       /* FRAG payloads ahead of the convertor, by offset */
    volatile int32_t release_bits;  /* OB1X_REL_* : who is done with the request */
} ob1x_recv_request_t;

OBJ_CLASS_DECLARATION(ob1x_recv_request_t);

static inline ob1x_recv_request_t *ob1x_recv_request_alloc(void)
{
    return (ob1x_recv_request_t *) opal_free_list_get(&mca_pml_ob1x.recv_requests);
}

void ob1x_recv_request_init(ob1x_recv_request_t *req, void *buf, size_t count,
                            struct ompi_datatype_t *dtype, int src, int tag,
                            struct ompi_communicator_t *comm, bool persistent);

/* Post (or match against the unexpected queue). Called by irecv/start. */
void ob1x_recv_request_start(ob1x_recv_request_t *req);

/* Match a fragment taken from the unexpected queue (imrecv / posting). */
void ob1x_recv_request_deliver_frag(ob1x_recv_request_t *req, ob1x_recv_frag_t *frag);

/* Deliver the first fragment (MATCH or RNDV) straight from the BTL. */
void ob1x_recv_request_deliver(ob1x_recv_request_t *req, const ob1x_hdr_t *hdr,
                               const unsigned char *data, size_t data_len,
                               const mca_btl_base_segment_t *more_segs, size_t nmore);

/* A FRAG for this request arrived. */
void ob1x_recv_request_frag(ob1x_recv_request_t *req, const ob1x_hdr_frag_t *hdr,
                            const mca_btl_base_segment_t *segs, size_t nsegs);

/* Cancelled or matched-and-finished. */
void ob1x_recv_request_complete(ob1x_recv_request_t *req);

/* Set the fields of the status that matching decides. */
static inline void ob1x_recv_request_matched(ob1x_recv_request_t *req, const ob1x_hdr_match_t *hdr,
                                             size_t msg_length)
{
    req->base.req_base.req_ompi.req_status.MPI_SOURCE = hdr->src;
    req->base.req_base.req_ompi.req_status.MPI_TAG = hdr->tag;
    req->msg_length = msg_length;
    req->base.req_bytes_packed = msg_length;
}

END_C_DECLS

#endif /* PML_OB1X_RECVREQ_H */

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
#include "pml_ob1x_cuda.h"
#include "pml_ob1x_monitor.h"
#include "pml_ob1x_rdma.h"
#include "pml_ob1x_recvfrag.h"

BEGIN_C_DECLS

/* Pieces of an RDMA pipeline the receiver keeps offered at once. */
#define OB1X_RECV_PUT_DEPTH 4

typedef struct ob1x_recv_request {
    mca_pml_base_recv_request_t base;
    uint32_t post_seq;              /* posting order within the communicator */
    size_t capacity;                /* packed bytes the receive buffer can take */
    size_t msg_length;              /* packed bytes the sender sends */
    volatile size_t bytes_received; /* payload bytes seen, delivered or truncated */
    opal_mutex_t lock;              /* serialises the convertor between fragments */
    opal_list_t early_pieces;       /* FRAG payloads ahead of the convertor, by offset */
    volatile int32_t release_bits;  /* OB1X_REL_* : who is done with the request */
    /* RDMA protocols (pml_ob1x_recv_rget.c, pml_ob1x_recv_put.c) */
    uint64_t src_req;        /* the sender's request */
    struct ompi_proc_t *src; /* the sender */
    int rdma_cnt;            /* registrations of our buffer held in rdma[] */
    ob1x_rdma_btl_t rdma[OB1X_MAX_RDMA_BTLS];
    unsigned char *rdma_base; /* our contiguous buffer */
    size_t put_cursor;        /* next byte to offer for a PUT */
    size_t put_end;           /* end of the bytes that go by PUTs */
    int puts_in_flight;
    int put_btls;                                /* BTLs the pieces go over */
    size_t put_bytes[OB1X_MAX_RDMA_BTLS];        /* bytes offered per BTL, for the shares */
    ob1x_reg_t *piece_reg[OB1X_RECV_PUT_DEPTH];  /* pipeline pieces' registrations */
    bool piece_busy[OB1X_RECV_PUT_DEPTH];
    /* A device (CUDA) receive buffer (pml_ob1x_cuda.c): the user's address
     * (NULL for host buffers), the host copy the message is received into
     * (NULL until a payload needs it), its span and offset (true_lb), and
     * whether a device RGET wrote the device buffer itself (nothing to
     * copy back). */
    void *cuda_user;
    void *cuda_stage;
    size_t cuda_span;
    ptrdiff_t cuda_gap;
    bool cuda_contig;
    bool cuda_piecewise; /* its host copy goes to the device in pieces */
    bool cuda_direct;
    /* Ranges of a direct device RGET that failed and come by FRAGs into
     * the host copy instead: only they are copied to the device. */
    int cuda_back_n;
    struct ob1x_cuda_range {
        size_t offset, length;
    } *cuda_back;
    /* The copies of the host copy's pieces to the device, each started
     * once its bytes have arrived (NULL: one copy at completion). */
    struct ob1x_cuda_pieces *cuda_pieces;
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

/* Deliver the first fragment (MATCH or RNDV) straight from the BTL: the
 * header hdr, then the payload from hdr_len bytes into segs[0] and in the
 * other segments. peer is the sender's slot in the request's
 * communicator (six arguments: all in registers). */
void ob1x_recv_request_deliver(ob1x_recv_request_t *req, ob1x_comm_peer_t *peer,
                               const ob1x_hdr_t *hdr, const mca_btl_base_segment_t *segs,
                               size_t nsegs, size_t hdr_len);

/* A FRAG for this request arrived. */
void ob1x_recv_request_frag(ob1x_recv_request_t *req, const ob1x_hdr_frag_t *hdr,
                            const mca_btl_base_segment_t *segs, size_t nsegs);

/* `bytes` more of the message are accounted for (delivered, or dropped by
 * truncation); the last of them completes the request. */
void ob1x_recv_request_add_bytes(ob1x_recv_request_t *req, size_t bytes);

/* Ask the sender for [offset, offset + length) by FRAGs: the answer to its
 * RNDV (more = false), or a further range (RDMA refused or given up). */
void ob1x_recv_request_ack(ob1x_recv_request_t *req, size_t offset, size_t length, bool more);

/* The RDMA protocols' sides of the receiver: an RGET matched (its list of
 * BTLs in `data`); a RNDV that offers RDMA (CONTIG) matched, which returns
 * false when the receiver refuses and the caller ACKs the rest; a FIN of a
 * put. */
void ob1x_recv_request_rget(ob1x_recv_request_t *req, const ob1x_hdr_rget_t *hdr,
                            const unsigned char *data, size_t data_len);
bool ob1x_recv_request_offer_puts(ob1x_recv_request_t *req, const ob1x_hdr_rndv_t *hdr,
                                  size_t payload);
void ob1x_recv_request_fin_put(ob1x_recv_request_t *req, const ob1x_hdr_fin_t *fin);
/* The buffer's contiguous base, or NULL when it is not contiguous. */
unsigned char *ob1x_recv_request_contig_base(ob1x_recv_request_t *req);

/* Cancelled or matched-and-finished. */
void ob1x_recv_request_complete(ob1x_recv_request_t *req);

/* Monitoring's record of a matched receive that cannot be staged
 * (ob1x_monitor_can_stage), out of line. */
void ob1x_recv_request_monitor(const ob1x_recv_request_t *req, const ob1x_hdr_match_t *hdr,
                               size_t msg_length);

/* Set the fields of the status that matching decides. */
static inline void ob1x_recv_request_matched(ob1x_recv_request_t *req, ob1x_comm_peer_t *peer,
                                             const ob1x_hdr_match_t *hdr, size_t msg_length)
{
    req->base.req_base.req_ompi.req_status.MPI_SOURCE = hdr->src;
    req->base.req_base.req_ompi.req_status.MPI_TAG = hdr->tag;
    req->msg_length = msg_length;
    req->base.req_bytes_packed = msg_length;
    if (OPAL_UNLIKELY(NULL != req->cuda_user) && NULL == req->cuda_stage &&
        (OB1X_HDR_RGET != hdr->common.type || !(hdr->common.flags & OB1X_HDR_FLAG_DEVICE))) {
        /* payload for the host copy (a device RGET decides in recv_rget) */
        ob1x_cuda_recv_stage(req);
    }
    if (ob1x_monitor_recv_on()) {
        /* inline only the common case, staged in the sender's slot: the
         * fewer values it keeps live, the less it costs with recording off */
        if (OPAL_LIKELY(ob1x_monitor_can_stage(hdr->tag, ob1x_monitor_recv_state))) {
            ob1x_monitor_stage_recv(peer, msg_length);
        } else {
            ob1x_recv_request_monitor(req, hdr, msg_length);
        }
    }
}

END_C_DECLS

#endif /* PML_OB1X_RECVREQ_H */

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * The send protocols of ob1x and the one choice among them.
 *
 * Every entry point (MPI_Send/MPI_Isend without a request, the request
 * path, MPI_Start, a start retried from the pending list, buffered sends)
 * asks ob1x_protocol_select() and nothing else. The choice is a pure
 * function of what it is given, so this header includes no Open MPI header
 * and test/pml/select_unit.c runs it without mpirun.
 *
 * Each protocol is one row of ob1x_protocols[] (pml_ob1x_protocol.c): its
 * name, which is also the name of its MPI_T counters
 * (pml_ob1x_<name>_messages / _bytes, indexed by the enum below) and of its
 * row in docs/ob1x.md, its start function, ob1x_send_start_<name>, and a
 * short description.
 */
#ifndef PML_OB1X_PROTOCOL_H
#define PML_OB1X_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>

/* Sender-side protocols, in the order of the table. */
typedef enum ob1x_protocol {
    OB1X_PROTO_EAGER_IMMEDIATE,   /* btl_sendi, no request needed */
    OB1X_PROTO_EAGER_PREPARED,    /* btl_prepare_src straight from the user buffer */
    OB1X_PROTO_EAGER_ALLOCATED,   /* btl_alloc + pack */
    OB1X_PROTO_SENDRECV_PIPELINE, /* RNDV + ACK + FRAGs */
    OB1X_PROTO_BUFFERED_PIPELINE, /* packed into the attached buffer, then pipeline */
    OB1X_PROTO_RGET,              /* RGET; the receiver btl_gets and answers FINs */
    OB1X_PROTO_RPUT,              /* RNDV (PIN); the receiver's PUTs; btl_put + FIN each */
    OB1X_PROTO_RDMA_PIPELINE,     /* RNDV with the first part; PUTs per piece; FRAGs for the tail */
    OB1X_PROTO_COUNT
} ob1x_protocol_t;

/* What the choice depends on: the message, the BTL it starts on, the peer. */
typedef struct ob1x_proto_in {
    size_t size;      /* packed bytes of the message */
    size_t eager_max; /* payload one eager descriptor of the BTL holds (eager limit - MATCH) */
    size_t sendi_max; /* pml_ob1x_sendi_max */
    bool sendi;       /* the BTL has btl_sendi */
    bool inplace;     /* the BTL sends from the user's memory (MCA_BTL_FLAGS_SEND_INPLACE) */
    bool synchronous; /* MPI_Ssend, MPI_Issend, MPI_Ssend_init */
    bool buffered;    /* MPI_Bsend, MPI_Ibsend, MPI_Bsend_init */
    bool congested;   /* the receiver asked for rendezvous only (FLOW) */
    /* Read only for messages above eager_max (the caller fills them there
     * alone, ob1x_proto_in_rdma): */
    bool contiguous;          /* the send buffer is one contiguous range */
    bool rdma;                /* a BTL to the peer can move it by RDMA */
    bool get;                 /* that BTL has btl_get */
    bool put;                 /* that BTL has btl_put */
    bool leave_pinned;        /* mpi_leave_pinned, read per message */
    bool prefer_copy;         /* the BTL's figures favour its copy pipeline (ob1x_prefer_copy) */
    size_t min_rdma_pipeline; /* that BTL's btl_min_rdma_pipeline_size */
} ob1x_proto_in_t;

/* What a BTL publishes about one peer through ob1x_btl_hints (common/ob1x):
 * the copy pipeline against single copy, for the rule below. */
struct ob1x_btl_hints;

struct ob1x_send_request;
struct mca_bml_base_btl_t;

/* Starts one message with a protocol. OMPI_SUCCESS, or
 * OMPI_ERR_OUT_OF_RESOURCE when the caller should queue the request. */
typedef int (*ob1x_protocol_start_fn_t)(struct ob1x_send_request *req,
                                        struct mca_bml_base_btl_t *bml_btl);

typedef struct ob1x_protocol_desc {
    const char *name;               /* MPI_T counters pml_ob1x_<name>_messages / _bytes */
    ob1x_protocol_start_fn_t start; /* ob1x_send_start_<name> */
    const char *description;        /* one line, for MPI_T and readers */
} ob1x_protocol_desc_t;

extern const ob1x_protocol_desc_t ob1x_protocols[OB1X_PROTO_COUNT];

/* Is btl_sendi worth a try for this payload? Up to sendi_max on any BTL
 * with one; beyond, only on BTLs that copy eager data anyway (no in-place
 * send): their immediate send is that copy without a descriptor. A BTL
 * that sends in place may keep its fastest path for prepare_src. */
static inline bool ob1x_protocol_sendi_fits(const ob1x_proto_in_t *in)
{
    return in->sendi && (in->size <= in->sendi_max || !in->inplace);
}

/* The eager row that needs a descriptor: prepared on the user's data by a
 * BTL that sends in place (a buffered send's data is not the user's to
 * keep), else allocated and packed. Also the next row when the BTL refused
 * an immediate send. */
static inline ob1x_protocol_t ob1x_protocol_after_immediate(const ob1x_proto_in_t *in)
{
    return !in->buffered && 0 != in->size && in->inplace ? OB1X_PROTO_EAGER_PREPARED
                                                         : OB1X_PROTO_EAGER_ALLOCATED;
}

/* The rendezvous protocol of a message above the eager size (the seed's
 * procedure, then the BTL's own figures):
 *   buffered                                   -> buffered pipeline
 *   not contiguous, no RDMA BTL, or the BTL's
 *   figures favour its copy pipeline           -> send/recv pipeline
 *   leave_pinned, no btl_put, or at most the
 *   BTL's min_rdma_pipeline_size               -> RGET if btl_get, else RPUT
 *   otherwise                                  -> RDMA pipeline */
static inline ob1x_protocol_t ob1x_protocol_select_rndv(const ob1x_proto_in_t *in)
{
    if (in->buffered) {
        return OB1X_PROTO_BUFFERED_PIPELINE;
    }
    if (!in->contiguous || !in->rdma || in->prefer_copy) {
        return OB1X_PROTO_SENDRECV_PIPELINE;
    }
    if (in->leave_pinned || !in->put || in->size <= in->min_rdma_pipeline) {
        return in->get ? OB1X_PROTO_RGET : OB1X_PROTO_RPUT;
    }
    return OB1X_PROTO_RDMA_PIPELINE;
}

/*
 * The protocol of one message (first row that holds):
 *   receiver congested, fits eager     -> send/recv pipeline (no data in the RNDV)
 *   synchronous, fits eager            -> send/recv pipeline (the RNDV asks for an ACK)
 *   fits one eager descriptor:
 *     sendi fits                       -> eager immediate
 *     standard/ready, in-place BTL     -> eager prepared
 *     otherwise                        -> eager allocated
 *   otherwise                          -> ob1x_protocol_select_rndv
 * (The start of the send/recv pipeline tells synchronous, congested and
 * large apart: the RNDV asks for an ACK, carries no data, or carries the
 * first part. Every rendezvous completes a synchronous send only once the
 * receiver has matched it.)
 */
static inline __attribute__((always_inline)) ob1x_protocol_t
ob1x_protocol_select(const ob1x_proto_in_t *in)
{
    if (in->size <= in->eager_max) {
        if (__builtin_expect(in->synchronous || in->congested, 0)) {
            return OB1X_PROTO_SENDRECV_PIPELINE;
        }
        return ob1x_protocol_sendi_fits(in) ? OB1X_PROTO_EAGER_IMMEDIATE
                                            : ob1x_protocol_after_immediate(in);
    }
    return ob1x_protocol_select_rndv(in);
}

/*
 * Can the request-less path run this protocol? The immediate send always
 * can (it is complete when it returns). The eager rows with a descriptor
 * can when the caller may go without a request (copy_eager: a blocking
 * standard/ready send, which waits for its descriptor if it must, or a
 * non-blocking one in a single-threaded process, which gets a request after
 * the send if the BTL keeps the descriptor). The pipelines need a request.
 */
static inline bool ob1x_protocol_requestless(ob1x_protocol_t proto, bool copy_eager)
{
    return OB1X_PROTO_EAGER_IMMEDIATE == proto ||
           (copy_eager &&
            (OB1X_PROTO_EAGER_PREPARED == proto || OB1X_PROTO_EAGER_ALLOCATED == proto));
}

#endif /* PML_OB1X_PROTOCOL_H */

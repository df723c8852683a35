/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Wire headers of pml/ob1x. Every message a BTL carries for us starts with one
 * of these. All fields are in the sender's byte order: ob1x refuses
 * heterogeneous jobs at add_procs, so no conversion is ever needed.
 *
 * Every header starts with the same two bytes: the type, and a byte whose
 * low four bits are flags and whose high four bits are the wire version,
 * checked on receipt so that two different builds of ob1x in one job fail
 * loudly instead of misreading each other.
 *
 * MATCH is 14 bytes on the wire, not 16: behind a BTL header of a whole
 * number of cache lines minus 16 bytes (vader's 48-byte fragment header),
 * a 16-byte MATCH puts the payload on a line boundary, and glibc's copy of
 * 513 bytes and more writes the first line of such a payload last, after
 * its loop, apart from the header's line (measured: message rate at
 * 520 B-1 KiB over vader 10-15% lower than with 14 bytes, where the
 * payload starts inside the header's line; docs/performance.md).
 */
#ifndef PML_OB1X_HDR_H
#define PML_OB1X_HDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/mca/btl/btl.h"

/* Bump whenever a header layout or meaning changes (1..15; it shares a byte
 * with the flags). */
#define OB1X_HDR_VERSION 3
#define OB1X_HDR_VERSION_SHIFT 4

/* Header types; the BTL tag of a message is MCA_BTL_TAG_PML + type. */
enum ob1x_hdr_type {
    OB1X_HDR_MATCH = 1,      /* eager message: header + whole payload */
    OB1X_HDR_RNDV = 2,       /* rendezvous: header + first part of the payload */
    OB1X_HDR_ACK = 3,        /* receiver matched a RNDV; sender may continue */
    OB1X_HDR_FRAG = 4,       /* a pipeline fragment of a matched message */
    OB1X_HDR_RGET = 5,       /* RDMA direct get: RNDV + the sender's registrations */
    OB1X_HDR_PUT = 6,        /* receiver offers a registered range for the sender to btl_put */
    OB1X_HDR_FIN = 7,        /* an RDMA operation is over (see the FIN flags) */
    OB1X_HDR_CANCEL = 8,     /* sender asks to withdraw an unmatched message */
    OB1X_HDR_CANCEL_ACK = 9, /* receiver's answer to CANCEL */
    OB1X_HDR_FLOW = 10,      /* receiver's unexpected-queue congestion state */
    OB1X_HDR_TYPE_MAX
};

#define OB1X_BTL_TAG(type) ((mca_btl_base_tag_t) (MCA_BTL_TAG_PML + (type)))

/* Flags of the common header. */
#define OB1X_HDR_FLAG_SYNC 0x01 /* sender wants an ACK even if all data came with RNDV */
#define OB1X_HDR_FLAG_VOID                                                                         \
    0x02 /* MATCH only: fills a sequence slot whose send failed                                    \
            locally (e.g. MPI_Bsend without buffer space) */
/* RNDV only: the sender's data is contiguous and it accepts PUTs (RDMA
 * pipeline); the receiver may offer its buffer piece by piece. */
#define OB1X_HDR_FLAG_CONTIG 0x04
/* RNDV only, with CONTIG: direct put; the RNDV carries no data and the
 * receiver answers with PUTs for the whole message (or an ACK). */
#define OB1X_HDR_FLAG_PIN 0x08
/* RGET only: the sender's data is device (GPU) memory, registered with
 * OB1X_BTL_REG_FLAG_DEVICE; only a BTL with OB1X_BTL_PROP_DEVICE_GET may
 * get it (docs/cuda.md). */
#define OB1X_HDR_FLAG_DEVICE 0x04
/* ACK only: a further range to send by FRAGs (an RDMA range given up or
 * refused), not the answer to a RNDV. */
#define OB1X_HDR_FLAG_ACK_MORE 0x04
/* FIN only: it ends a put (sent to the receiver, `req` names its piece);
 * without it, a get (sent to the sender, `req` names its request). */
#define OB1X_HDR_FLAG_FIN_PUT 0x04

typedef struct ob1x_hdr_common {
    uint8_t type;  /* enum ob1x_hdr_type */
    uint8_t flags; /* OB1X_HDR_FLAG_* | OB1X_HDR_VERSION << OB1X_HDR_VERSION_SHIFT */
} ob1x_hdr_common_t;

/* MATCH: everything the receiver needs to match; the payload follows the
 * first OB1X_HDR_MATCH_LEN bytes. */
typedef struct ob1x_hdr_match {
    ob1x_hdr_common_t common;
    uint16_t ctx;     /* communicator context id (c_contextid) */
    int32_t src;      /* sender's rank in the communicator (local group) */
    int32_t tag;      /* MPI tag */
    uint16_t seq;     /* per (communicator, sender, receiver) sequence number */
    uint16_t in_rndv; /* not sent with a MATCH (payload there); 0 in a RNDV */
} ob1x_hdr_match_t;

#define OB1X_HDR_MATCH_LEN 14
_Static_assert(offsetof(ob1x_hdr_match_t, in_rndv) == OB1X_HDR_MATCH_LEN,
               "a MATCH ends where its payload starts");

/* RNDV: a MATCH plus the total length and the sender's request. 32 bytes. */
typedef struct ob1x_hdr_rndv {
    ob1x_hdr_match_t match;
    uint64_t msg_length; /* total packed bytes of the message */
    uint64_t src_req;    /* sender's request, echoed back in ACK/CANCEL_ACK */
} ob1x_hdr_rndv_t;

/* ACK: receiver matched a RNDV (or refused RDMA, or gave up on an RDMA
 * range): the sender sends [offset, offset + length) as FRAGs. 40 bytes. */
typedef struct ob1x_hdr_ack {
    ob1x_hdr_common_t common;
    uint16_t pad16;
    uint32_t pad;
    uint64_t src_req; /* sender's request from the RNDV */
    uint64_t dst_req; /* receiver's request, carried by every FRAG */
    uint64_t offset;  /* first byte the sender sends by FRAGs */
    uint64_t length;  /* bytes from there; 0: none (all came, or come, by RDMA) */
} ob1x_hdr_ack_t;

/* Largest registration handle a PUT or an RGET carries per BTL. */
#define OB1X_MAX_HANDLE 128
/* Most BTLs one RDMA message is spread over (pml_ob1x_max_rdma_per_request). */
#define OB1X_MAX_RDMA_BTLS 4

/* One BTL's part of an RGET: which BTL (ob1x_btl_id(), the same in every
 * process), and its registration of the sender's buffer. */
typedef struct ob1x_hdr_rdma_btl {
    uint32_t btl_id;
    uint16_t handle_size; /* bytes of handle that follow */
    uint16_t pad;
    uint8_t handle[OB1X_MAX_HANDLE];
} ob1x_hdr_rdma_btl_t;

#define OB1X_HDR_RDMA_BTL_LEN(hs) (offsetof(ob1x_hdr_rdma_btl_t, handle) + (((hs) + 7) & ~(size_t) 7))

/* RGET: a RNDV without data plus where the data is. One
 * ob1x_hdr_rdma_btl_t (of OB1X_HDR_RDMA_BTL_LEN bytes) per BTL follows, and
 * the receiver treats them as the message's "payload" until it matches. */
typedef struct ob1x_hdr_rget {
    ob1x_hdr_rndv_t rndv;
    uint64_t src_addr; /* the sender's contiguous data */
    uint32_t nbtls;    /* entries that follow */
    uint32_t pad;
} ob1x_hdr_rget_t;

/* PUT: the receiver registered [dst_addr, dst_addr + length) of its buffer,
 * which holds bytes [offset, offset + length) of the message, for the
 * sender to btl_put over the BTL btl_id. The handle follows. */
typedef struct ob1x_hdr_put {
    ob1x_hdr_common_t common;
    uint16_t handle_size;
    uint32_t btl_id;
    uint64_t src_req;  /* sender's request from the RNDV */
    uint64_t dst_req;  /* receiver's request (for FRAGs of a range the put gave up) */
    uint64_t piece;    /* receiver's piece number, echoed by the FIN */
    uint64_t offset;
    uint64_t length;
    uint64_t dst_addr;
    uint8_t handle[OB1X_MAX_HANDLE];
} ob1x_hdr_put_t;

#define OB1X_HDR_PUT_LEN(hs) (offsetof(ob1x_hdr_put_t, handle) + (hs))

/* FIN: an RDMA operation of [offset, offset + length) is over. 40 bytes. */
typedef struct ob1x_hdr_fin {
    ob1x_hdr_common_t common;
    uint16_t slot;   /* put only: the receiver's piece (PUT's `piece`) */
    uint32_t failed; /* put only: 1 when the sender gave up and sends the range by FRAGs */
    uint64_t req;    /* sender's request (get) or receiver's request (put, FLAG_FIN_PUT) */
    uint64_t offset;
    uint64_t length;
    uint32_t btl_id; /* the BTL that moved the bytes */
    uint32_t pad;
} ob1x_hdr_fin_t;

/* FRAG: one pipeline fragment; payload follows. 24 bytes. */
typedef struct ob1x_hdr_frag {
    ob1x_hdr_common_t common;
    uint16_t pad16;
    uint32_t pad;
    uint64_t offset;  /* byte offset of the payload in the packed message */
    uint64_t dst_req; /* receiver's request from the ACK */
} ob1x_hdr_frag_t;

/* CANCEL / CANCEL_ACK: identify a message by (ctx, src, seq). 24 bytes. */
typedef struct ob1x_hdr_cancel {
    ob1x_hdr_common_t common;
    uint16_t ctx;
    int32_t src; /* sender's rank in the communicator */
    uint16_t seq;
    uint16_t pad16;
    uint32_t cancelled; /* CANCEL_ACK only: 1 if the message was withdrawn */
    uint64_t src_req;   /* sender's request */
} ob1x_hdr_cancel_t;

/* FLOW: tells a sender whether the receiver's unexpected queue is over its limit.
 * A BTL callback does not name the sending process, so the header does. 24 bytes. */
typedef struct ob1x_hdr_flow {
    ob1x_hdr_common_t common;
    uint16_t pad16;
    uint32_t congested;  /* 1: send everything by rendezvous; 0: eager allowed again */
    uint64_t generation; /* increases with every FLOW sent to this peer; stale ones are ignored */
    uint32_t jobid;      /* the receiver's process name (opal_process_name_t) */
    uint32_t vpid;
} ob1x_hdr_flow_t;

typedef union ob1x_hdr {
    ob1x_hdr_common_t common;
    ob1x_hdr_match_t match;
    ob1x_hdr_rndv_t rndv;
    ob1x_hdr_ack_t ack;
    ob1x_hdr_frag_t frag;
    ob1x_hdr_cancel_t cancel;
    ob1x_hdr_flow_t flow;
    ob1x_hdr_rget_t rget;
    ob1x_hdr_put_t put;
    ob1x_hdr_fin_t fin;
} ob1x_hdr_t;

_Static_assert(sizeof(ob1x_hdr_rndv_t) == 32 && sizeof(ob1x_hdr_ack_t) == 40 &&
                   sizeof(ob1x_hdr_rget_t) == 48 && sizeof(ob1x_hdr_fin_t) == 40 &&
                   offsetof(ob1x_hdr_put_t, handle) == 56 &&
                   sizeof(ob1x_hdr_frag_t) == 24 && sizeof(ob1x_hdr_cancel_t) == 24 &&
                   sizeof(ob1x_hdr_flow_t) == 24,
               "wire header sizes as documented in docs/ob1x.md");

static inline void ob1x_hdr_common_init(ob1x_hdr_common_t *hdr, uint8_t type, uint8_t flags)
{
    hdr->type = type;
    hdr->flags = (uint8_t) (flags | OB1X_HDR_VERSION << OB1X_HDR_VERSION_SHIFT);
}

static inline int ob1x_hdr_version(const ob1x_hdr_common_t *hdr)
{
    return hdr->flags >> OB1X_HDR_VERSION_SHIFT;
}

static inline void ob1x_hdr_match_init(ob1x_hdr_match_t *hdr, uint8_t type, uint8_t flags,
                                       uint16_t ctx, uint16_t seq, int32_t src, int32_t tag)
{
    ob1x_hdr_common_init(&hdr->common, type, flags);
    hdr->ctx = ctx;
    hdr->src = src;
    hdr->tag = tag;
    hdr->seq = seq;
}

/* Size of the header of a message of the given type (0: unknown type);
 * a PUT's handle and an RGET's BTL entries come on top. */
static inline size_t ob1x_hdr_size(uint8_t type)
{
    static const uint8_t sizes[OB1X_HDR_TYPE_MAX] = {
        [OB1X_HDR_MATCH] = OB1X_HDR_MATCH_LEN,
        [OB1X_HDR_RNDV] = sizeof(ob1x_hdr_rndv_t),
        [OB1X_HDR_ACK] = sizeof(ob1x_hdr_ack_t),
        [OB1X_HDR_FRAG] = sizeof(ob1x_hdr_frag_t),
        [OB1X_HDR_CANCEL] = sizeof(ob1x_hdr_cancel_t),
        [OB1X_HDR_CANCEL_ACK] = sizeof(ob1x_hdr_cancel_t),
        [OB1X_HDR_FLOW] = sizeof(ob1x_hdr_flow_t),
        [OB1X_HDR_RGET] = sizeof(ob1x_hdr_rget_t),
        [OB1X_HDR_PUT] = offsetof(ob1x_hdr_put_t, handle), /* + handle_size */
        [OB1X_HDR_FIN] = sizeof(ob1x_hdr_fin_t),
    };
    return type < OB1X_HDR_TYPE_MAX ? sizes[type] : 0;
}

/* Can this build read a header of `len` bytes? Its wire version must be
 * ours, its type known and all of its header present. */
static inline bool ob1x_hdr_readable(const ob1x_hdr_common_t *hdr, size_t len)
{
    size_t need;

    if (len < sizeof(*hdr)) {
        return false;
    }
    need = ob1x_hdr_size(hdr->type);
    return ob1x_hdr_version(hdr) == OB1X_HDR_VERSION && 0 != need && len >= need;
}

#endif /* PML_OB1X_HDR_H */

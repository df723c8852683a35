/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_ofi_frag.h - the two-sided path: its wire format, send fragments,
 * posted receive buffers and the per-module state behind m->recv_state.
 *
 * Every message is one libfabric message: an 8-byte header, then the
 * bytes. A SEND message carries the upper layer's header and data for
 * mca_btl_base_active_message_trigger[tag]; the AM types carry atomics
 * for providers without FI_ATOMIC (btl_ofi_am.c).
 *
 * Send fragments come from three free lists: eager (eager_limit bytes),
 * max (max_send_size bytes), and in-place fragments whose buffer holds
 * only the headers while the data is sent from the user's memory
 * (fi_sendv). With FI_MR_LOCAL the lists' memory is registered through
 * the module's rcache, so every fragment has its descriptor.
 */
#ifndef MCA_BTL_OFI_FRAG_H
#define MCA_BTL_OFI_FRAG_H

#include "btl_ofi.h"

#include <string.h>

/* ---- wire format ----------------------------------------------------------- */

/* Checked on receipt: a message whose first byte differs is not from this
 * version of btl/ofi and is dropped (counted as a CQ error). */
#define MCA_BTL_OFI_HDR_MAGIC 0xB1
#define MCA_BTL_OFI_WIRE_VERSION 1

enum {
    MCA_BTL_OFI_TYPE_SEND = 1,     /* upper layer's fragment for trigger[tag] */
    MCA_BTL_OFI_TYPE_AM_REQ = 2,   /* an atomic to apply (mca_btl_ofi_am_req_t) */
    MCA_BTL_OFI_TYPE_AM_REPLY = 3, /* its old value (mca_btl_ofi_am_reply_t) */
};

typedef struct mca_btl_ofi_hdr {
    uint8_t magic;   /* MCA_BTL_OFI_HDR_MAGIC */
    uint8_t version; /* MCA_BTL_OFI_WIRE_VERSION */
    uint8_t type;    /* MCA_BTL_OFI_TYPE_* */
    uint8_t tag;     /* SEND: the upper layer's tag; else 0 */
    uint32_t len;    /* bytes after this header (the message is 8 + len) */
} mca_btl_ofi_hdr_t;
_Static_assert(sizeof(mca_btl_ofi_hdr_t) == 8, "the payload stays 8-byte aligned");

/* AM atomic flags */
enum {
    MCA_BTL_OFI_AM_32BIT = 0x1, /* 32-bit operand and target */
    MCA_BTL_OFI_AM_FETCH = 0x2, /* the requester wants the old value */
    MCA_BTL_OFI_AM_CSWAP = 0x4, /* compare-and-swap (op is ignored) */
};

typedef struct mca_btl_ofi_am_req {
    uint64_t addr;      /* target's virtual address of the operand */
    uint64_t operand;   /* operand; the new value for swap and cswap */
    uint64_t compare;   /* cswap: the value expected */
    uint64_t cookie;    /* requester's operation object, echoed back */
    uint64_t requester; /* requester's opal_process_name_t: whom to reply to */
    uint32_t op;        /* mca_btl_base_atomic_op_t (not for cswap) */
    uint32_t flags;     /* MCA_BTL_OFI_AM_* */
} mca_btl_ofi_am_req_t;
_Static_assert(sizeof(mca_btl_ofi_am_req_t) == 48, "fits rxm's 64-byte inject with the header");

typedef struct mca_btl_ofi_am_reply {
    uint64_t cookie; /* the request's cookie */
    uint64_t result; /* the target's value before the operation */
} mca_btl_ofi_am_reply_t;

/* ---- send fragments -------------------------------------------------------- */

typedef struct mca_btl_ofi_frag {
    mca_btl_base_descriptor_t base;
    mca_btl_base_segment_t segments[2]; /* [0] in our buffer; [1] user data (in place) */
    mca_btl_ofi_op_t op;                /* the fi_send in flight */
    mca_btl_ofi_module_t *module;
    mca_btl_ofi_endpoint_t *ep;
    mca_btl_ofi_hdr_t *hdr;                   /* item's buffer: our header, then segments[0] */
    void *desc;                               /* the buffer's fi_mr_desc (FI_MR_LOCAL), else NULL */
    size_t cap;                               /* bytes the buffer holds after the header */
    void *user_desc;                          /* in place: the user data's desc (FI_MR_LOCAL) */
    mca_rcache_base_registration_t *user_reg; /* registered for this send only */
    opal_free_list_t *list;
} mca_btl_ofi_frag_t;
OBJ_CLASS_DECLARATION(mca_btl_ofi_frag_t);

/* In-place fragments: room for the upper layer's header (ob1's largest
 * is well below). */
#define MCA_BTL_OFI_INPLACE_RESERVE 128
/* Data from this size on is sent from the user's memory by prepare_src
 * (below it a copy costs less than a second iovec). */
#define MCA_BTL_OFI_INPLACE_MIN 4096

/* ---- posted receive buffers ------------------------------------------------ */

typedef struct mca_btl_ofi_rbuf {
    mca_btl_ofi_op_t op; /* its fi_recv; first: the op is the buffer */
    mca_btl_ofi_module_t *module;
    mca_btl_ofi_context_t *ctx; /* where it is posted */
    unsigned char *base;
    size_t size;
    void *desc; /* FI_MR_LOCAL */
    mca_rcache_base_registration_t *reg;
    bool posted; /* handed to libfabric and not yet released by it */
} mca_btl_ofi_rbuf_t;

/* ---- per-module two-sided state (m->recv_state) ---------------------------- */

typedef struct mca_btl_ofi_twosided {
    size_t inject_size; /* the provider's (0: never fi_inject) */
    size_t slot;        /* the largest message: header + max_send_size */
    bool inplace;       /* prepare_src may send from the user's memory */
    bool multi_recv;    /* buffers posted with FI_MULTI_RECV */
    int nbufs;
    mca_btl_ofi_rbuf_t *bufs;
    /* work refused by the provider (-FI_EAGAIN) where no caller can retry:
     * AM replies and re-posts, retried from progress */
    opal_mutex_t pending_lock;
    opal_list_t pending_frags;   /* btl_send fragments refused, in order */
    opal_list_t pending_replies; /* mca_btl_ofi_pending_reply_t */
    volatile int32_t npending;   /* fragments + replies queued + buffers not posted */
} mca_btl_ofi_twosided_t;

typedef struct mca_btl_ofi_pending_reply {
    opal_list_item_t super;
    mca_btl_ofi_endpoint_t *ep;
    mca_btl_ofi_am_reply_t reply;
} mca_btl_ofi_pending_reply_t;
OBJ_CLASS_DECLARATION(mca_btl_ofi_pending_reply_t);

static inline mca_btl_ofi_twosided_t *mca_btl_ofi_ts(const mca_btl_ofi_module_t *m)
{
    return (mca_btl_ofi_twosided_t *) m->recv_state;
}

static inline void mca_btl_ofi_hdr_set(mca_btl_ofi_hdr_t *hdr, int type, int tag, size_t len)
{
    hdr->magic = MCA_BTL_OFI_HDR_MAGIC;
    hdr->version = MCA_BTL_OFI_WIRE_VERSION;
    hdr->type = (uint8_t) type;
    hdr->tag = (uint8_t) tag;
    hdr->len = (uint32_t) len;
}

/* A fragment of the list that holds `size` bytes; NULL when too large or
 * when the list is exhausted (the caller reports out of resources). */
static inline mca_btl_ofi_frag_t *mca_btl_ofi_frag_alloc(mca_btl_ofi_module_t *m,
                                                         mca_btl_ofi_endpoint_t *ep, size_t size)
{
    opal_free_list_t *list;
    mca_btl_ofi_frag_t *frag;

    if (OFI_LIKELY(size <= m->super.btl_eager_limit)) {
        list = &m->frags_eager;
    } else if (size <= m->super.btl_max_send_size) {
        list = &m->frags_max;
    } else {
        return NULL;
    }
    frag = (mca_btl_ofi_frag_t *) opal_free_list_get(list);
    if (OFI_UNLIKELY(NULL == frag)) {
        return NULL;
    }
    frag->ep = ep;
    frag->segments[0].seg_len = size;
    frag->base.des_segment_count = 1;
    frag->base.des_cbfunc = NULL;
    frag->base.des_flags = 0;
    return frag;
}

static inline void mca_btl_ofi_frag_return(mca_btl_ofi_frag_t *frag)
{
    if (OFI_UNLIKELY(NULL != frag->user_reg)) {
        mca_btl_ofi_local_release(frag->module, frag->user_reg);
        frag->user_reg = NULL;
    }
    opal_free_list_return(frag->list, &frag->base.super);
}

/* ---- between the two-sided files ------------------------------------------- */

/* btl_ofi_frag.c: the fragment lists. */
int mca_btl_ofi_frag_lists_init(mca_btl_ofi_module_t *m);
void mca_btl_ofi_frag_lists_fini(mca_btl_ofi_module_t *m);

/* btl_ofi_recv.c: post the receive buffers of context 0 (the one peers
 * send to) / free them; retry re-posts refused earlier. */
int mca_btl_ofi_recv_init(mca_btl_ofi_module_t *m);
void mca_btl_ofi_recv_fini(mca_btl_ofi_module_t *m);
void mca_btl_ofi_recv_retry(mca_btl_ofi_module_t *m);

/* btl_ofi_send.c: sends a BTL-internal message (AM request or reply) of
 * `len` bytes to ep: by fi_inject when it fits, else from a fragment.
 * OPAL_ERR_OUT_OF_RESOURCE when the provider or the lists refuse. */
int mca_btl_ofi_send_internal(mca_btl_ofi_module_t *m, mca_btl_ofi_endpoint_t *ep, int type,
                              const void *payload, size_t len);

/* btl_ofi_send.c: fragments queued by btl_send, sent again in order. */
void mca_btl_ofi_send_retry(mca_btl_ofi_module_t *m);

/* btl_ofi_am.c: a received request (apply, reply) / reply (complete). */
void mca_btl_ofi_am_request(mca_btl_ofi_module_t *m, const mca_btl_ofi_am_req_t *req);
void mca_btl_ofi_am_reply(mca_btl_ofi_module_t *m, const mca_btl_ofi_am_reply_t *rep);
/* Replies queued because the provider refused them, sent again. */
void mca_btl_ofi_am_retry(mca_btl_ofi_module_t *m);

#endif /* MCA_BTL_OFI_FRAG_H */

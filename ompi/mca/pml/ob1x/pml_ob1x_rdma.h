/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * What the RDMA protocols share (pml_ob1x_rdma.c): which BTLs of a peer
 * carry an RDMA message and in which shares, how a BTL is named to the
 * peer, the bytes each BTL carried (MPI_T), and one RDMA operation (a get
 * of the receiver or a put of the sender) with its retries.
 *
 * The protocols themselves: pml_ob1x_send_rget.c and pml_ob1x_recv_rget.c
 * (direct get), pml_ob1x_send_put.c and pml_ob1x_recv_put.c (direct put
 * and RDMA pipeline).
 */
#ifndef PML_OB1X_RDMA_H
#define PML_OB1X_RDMA_H

#include "ompi_config.h"

#include "opal/class/opal_free_list.h"
#include "opal/mca/btl/btl.h"
#include "ompi/mca/bml/bml.h"

#include "common_ob1x_hints.h"

#include "pml_ob1x_comm.h"
#include "pml_ob1x_hdr.h"
#include "pml_ob1x_rdma_reg.h"

BEGIN_C_DECLS

/* One BTL of an RDMA message and the registration of our side of it. */
typedef struct ob1x_rdma_btl {
    mca_bml_base_btl_t *bml_btl;
    ob1x_reg_t *reg;
    mca_btl_base_registration_handle_t *handle; /* NULL: the BTL needs none */
    bool bare;                                  /* handle made without reg (reg_acquire_bare) */
    uint32_t id;                                /* ob1x_btl_id of the BTL */
    unsigned reg_kind;                          /* ob1x_reg_kind of the BTL */
    size_t offset;                              /* its share of the message */
    size_t length;
} ob1x_rdma_btl_t;

/* Numbers every BTL module in use, once the BML has opened them: its
 * name to peers (ob1x_btl_id) and its MPI_T byte counter. */
int ob1x_btls_setup(void);

/* The same in every process of the job for the same BTL: a hash of the
 * component's name and which module of that component it is. */
uint32_t ob1x_btl_id(const mca_btl_base_module_t *btl);

/* Payload bytes `btl` carried for a message of ours
 * (pml_ob1x_bytes_<btl>). */
void ob1x_btl_count(const mca_btl_base_module_t *btl, size_t bytes);
/* The same for the BTL named `id` (a FIN reports the peer's get). */
void ob1x_btl_count_id(uint32_t id, size_t bytes);

/* Bytes of btl's registration handle to ship to the peer: a device handle
 * may be larger than btl_registration_handle_size (common_ob1x_hints.h). */
static inline size_t ob1x_handle_size(const mca_btl_base_module_t *btl, bool device)
{
    size_t hs = btl->btl_registration_handle_size;

    if (device) {
        size_t d = ob1x_btl_device_handle_size(btl);
        hs = d > hs ? d : hs;
    }
    return hs;
}

/* ------------------------------------------------------------ peer view */

/* The most BTLs to one peer that the view keeps (more are not used for
 * RDMA). */
#define OB1X_RDMA_PEER_MAX 8

/* One BTL of the peer's BML endpoint (btl_rdma array). */
typedef struct ob1x_rdma_peer_btl {
    mca_bml_base_btl_t *bml_btl;
    uint32_t id;               /* ob1x_btl_id: how the peer names it */
    uint32_t can;              /* MCA_BTL_FLAGS_GET and/or _PUT: the flag and the function */
    unsigned reg_kind;         /* ob1x_reg_kind */
    ob1x_btl_hints_fn_t hints; /* what it publishes (common_ob1x_hints.h), or NULL */
    bool ours;                 /* our protocols may start RDMA on it (pml_ob1x_use_all_rdma,
                                * or it carries send/recv traffic to the peer too) */
} ob1x_rdma_peer_btl_t;

/* What the RDMA protocols need of a peer's BTLs, worked out once instead of
 * per message (ob1x_rdma_peer): the BML's arrays for a peer change only
 * when a BTL goes away, which their sizes tell. */
typedef struct ob1x_rdma_peer {
    struct ob1x_rdma_peer *older; /* views it replaced: freed with the peer */
    mca_bml_base_endpoint_t *ep;
    size_t n_rdma, n_send; /* sizes of ep's btl_rdma and btl_send then */
    int n;
    int first; /* the first BTL our protocols may start RDMA on, or -1 */
    ob1x_rdma_peer_btl_t b[OB1X_RDMA_PEER_MAX];
} ob1x_rdma_peer_t;

/* Makes the view of peer op anew and publishes it (ob1x_rdma_peer's slow
 * path): at its first RDMA message, and after a BTL to it went away. */
const ob1x_rdma_peer_t *ob1x_rdma_peer_make(ob1x_proc_t *op, mca_bml_base_endpoint_t *ep);

/* The view of peer op (whose BML endpoint is ep): a few loads once made. */
static inline const ob1x_rdma_peer_t *ob1x_rdma_peer(ob1x_proc_t *op, mca_bml_base_endpoint_t *ep)
{
    const ob1x_rdma_peer_t *v = __atomic_load_n(&op->rdma, __ATOMIC_ACQUIRE);

    if (OPAL_LIKELY(NULL != v && v->ep == ep && v->n_rdma == ep->btl_rdma.arr_size &&
                    v->n_send == ep->btl_send.arr_size)) {
        return v;
    }
    return ob1x_rdma_peer_make(op, ep);
}

/* The view of rank `rank` of comm's remote group (the receiver's side: the
 * sender of a matched message), or NULL when it cannot be reached. */
static inline const ob1x_rdma_peer_t *ob1x_rdma_peer_of(struct ompi_communicator_t *comm, int rank)
{
    ob1x_comm_peer_t *peer = ob1x_peer(comm, rank);

    return NULL != peer->endpoint ? ob1x_rdma_peer(peer->oproc, peer->endpoint) : NULL;
}

/* Frees the views of a peer whose state is dropped. */
void ob1x_rdma_peer_free(struct ob1x_rdma_peer *v);

/*
 * The BTLs to the peer that can move a message by RDMA (`flags`:
 * MCA_BTL_FLAGS_GET or _PUT), at most pml_ob1x_max_rdma_per_request;
 * without pml_ob1x_use_all_rdma only those that also carry its send/recv
 * traffic. Returns how many were written to out[] (bml_btl and id set).
 */
int ob1x_rdma_btls(const ob1x_rdma_peer_t *v, uint32_t flags, ob1x_rdma_btl_t *out);

/* The first of them, or NULL: what the protocol selector looks at. */
static inline const ob1x_rdma_peer_btl_t *ob1x_rdma_btl_first(const ob1x_rdma_peer_t *v)
{
    return v->first >= 0 ? &v->b[v->first] : NULL;
}

/* Do b's published figures favour its copy path for `size` bytes
 * (common_ob1x_hints.h; false for a BTL that publishes none)? Counted. */
bool ob1x_rdma_prefer_copy(const ob1x_rdma_peer_btl_t *b, size_t size);

/* This process's BTL to the peer named `id` by the other side, if it can
 * do `flags`, or NULL. */
const ob1x_rdma_peer_btl_t *ob1x_rdma_btl_by_id(const ob1x_rdma_peer_t *v, uint32_t id,
                                                uint32_t flags);

/* Splits [offset, offset + length) over btls[0..n) in shares of their
 * bandwidth (btl_bandwidth), each a multiple of `align` except the last. */
void ob1x_rdma_shares(ob1x_rdma_btl_t *btls, int n, size_t offset, size_t length, size_t align);

/* Registers each share's memory, [base + offset, + length); drops the
 * BTLs that refuse and compacts the array. Returns how many remain. */
int ob1x_rdma_register(ob1x_rdma_btl_t *btls, int n, unsigned char *base, uint32_t access);
void ob1x_rdma_deregister(ob1x_rdma_btl_t *btls, int n);

/* ------------------------------------------------------------ operations */

typedef enum { OB1X_RDMA_GET, OB1X_RDMA_PUT } ob1x_rdma_kind_t;

struct ob1x_rdma_op;
/* Called once per operation: status OMPI_SUCCESS, or the error after
 * pml_ob1x_rdma_retries_limit tries. The callee returns the op. */
typedef void (*ob1x_rdma_done_fn_t)(struct ob1x_rdma_op *op, int status);

typedef struct ob1x_rdma_op {
    opal_free_list_item_t super;
    ob1x_rdma_kind_t kind;
    ob1x_rdma_done_fn_t done;
    void *req;  /* the request it serves */
    void *proc; /* the peer (struct ompi_proc_t *) */
    mca_bml_base_btl_t *bml_btl;
    uint32_t btl_id; /* ob1x_btl_id of bml_btl's BTL (a get's, for its FIN) */
    unsigned char *local;
    uint64_t remote;
    mca_btl_base_registration_handle_t *local_handle;
    ob1x_reg_t *own_reg; /* a registration made for this op alone, or NULL */
    size_t offset;       /* in the packed message */
    size_t length;
    uint64_t peer_req; /* the other side's request */
    uint16_t slot;     /* put: the receiver's piece */
    int tries;
    uint16_t remote_handle_size;
    uint8_t remote_handle[OB1X_MAX_HANDLE] __opal_attribute_aligned__(8);
} ob1x_rdma_op_t;

OBJ_CLASS_DECLARATION(ob1x_rdma_op_t);

ob1x_rdma_op_t *ob1x_rdma_op_alloc(void);
void ob1x_rdma_op_return(ob1x_rdma_op_t *op);

/* Issues the operation now, or queues it for progress when the BTL has no
 * room; a failure is retried up to the limit, then op->done gets it. */
void ob1x_rdma_op_start(ob1x_rdma_op_t *op);

/* Retries queued operations (from ob1x_progress); returns how many went. */
int ob1x_rdma_progress(void);

/* Reports, once per process, that RDMA failed and send/recv took over. */
void ob1x_rdma_fallback_notice(const ob1x_rdma_op_t *op, int status);

END_C_DECLS

#endif /* PML_OB1X_RDMA_H */

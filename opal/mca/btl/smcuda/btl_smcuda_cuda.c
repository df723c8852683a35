/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_cuda.c - CUDA IPC between the processes of a node (built when
 * configure found the CUDA headers; docs/cuda.md, "btl/smcuda").
 *
 *  - The per-peer handshake (btl_smcuda_ipc.c) is started by the first
 *    device registration for a peer; its messages travel as our own
 *    control messages (MCA_BTL_TAG_SMCUDA). Until it has turned IPC on,
 *    device registrations return NULL and the PML stages; once it ended
 *    IPC_BAD they return NULL for good.
 *  - A device registration carries the allocation's IPC handle (asked
 *    each time: cheap), range and buffer id.
 *  - The reader maps the peer's allocation through a per-peer cache keyed
 *    by (base, size, buffer id), bounded, LRU; a mapping of an older
 *    allocation that overlaps a new one is closed (the peer freed it).
 *  - The copy is split into pieces started together on the common
 *    library's stream; our progress polls their events and completes the
 *    get when all are done.
 *
 * One lock (taken only when threads are in use) covers the peers' state,
 * the caches and the list of copies.
 */
#include "btl_smcuda.h"
#include "btl_smcuda_ipc.h"

#include <string.h>
#include <unistd.h>

#include "opal/util/output.h"
#include "opal/util/show_help.h"

#include "common_ob1x_cuda.h"
#include "common_ob1x_help.h"
#include "common_ob1x_hints.h"

/* A device get is split into at most this many copies (larger pieces
 * than btl_smcuda_cuda_copy_piece beyond that). */
#define SMCUDA_CUDA_MAX_PIECES 32

/* One opened allocation of the peer. */
typedef struct {
    uint64_t base, size, buffer_id; /* the peer's allocation */
    void *mapped;                   /* its address here; NULL: a free entry */
    uint64_t used;                  /* LRU stamp */
    int refs;                       /* copies in flight reading it */
} smcuda_ipc_map_t;

/* What hangs off ep->accel. */
typedef struct {
    smcuda_ipc_peer_t ipc;
    mca_btl_base_endpoint_t *ep;
    smcuda_ipc_state_t seen; /* the state last accounted for */
    smcuda_ipc_map_t *maps;
    unsigned n_maps;
    uint64_t tick;
} smcuda_cuda_peer_t;

/* A get in flight. */
typedef struct smcuda_cuda_op_t {
    struct smcuda_cuda_op_t *next;
    smcuda_rdma_done_t done;
    smcuda_ipc_map_t *map;
    size_t size;
    int status;
    int n;                               /* copies started */
    int tickets[SMCUDA_CUDA_MAX_PIECES]; /* -1: done */
} smcuda_cuda_op_t;

static opal_mutex_t cuda_lock = OPAL_MUTEX_STATIC_INIT;
static smcuda_cuda_op_t *ops_head, **ops_tail = &ops_head;
static bool refused_shown;

static const smcuda_ipc_devq_t devq = {
    .device_count = ob1x_cuda_device_count,
    .device_uuid = ob1x_cuda_device_uuid,
    .can_access_peer = ob1x_cuda_can_access_peer,
};

unsigned mca_btl_smcuda_cuda_props(void)
{
    return OB1X_BTL_PROP_DEVICE_GET;
}

/* --- the handshake ------------------------------------------------------- */

/* The state machine's messages go out as our control messages; `from` is
 * the id the peer knows us by (its smcuda_ep_by_id). */
static int ipc_send(void *ctx, const smcuda_ipc_msg_t *msg)
{
    smcuda_cuda_peer_t *p = (smcuda_cuda_peer_t *) ctx;
    smcuda_ipc_msg_t m = *msg;

    m.from = (uint32_t) p->ep->ref_id;
    return OPAL_SUCCESS == mca_btl_smcuda_sendi(&mca_btl_smcuda.super, p->ep, NULL, &m, sizeof(m),
                                                0, MCA_BTL_NO_ORDER, 0, MCA_BTL_TAG_SMCUDA, NULL)
               ? 0
               : -1;
}

/* The peer's state, created at its first use. cuda_lock held. */
static smcuda_cuda_peer_t *peer_of(mca_btl_base_endpoint_t *ep)
{
    smcuda_cuda_peer_t *p = (smcuda_cuda_peer_t *) ep->accel;
    unsigned n = mca_btl_smcuda_component.cuda_ipc_cache_size;

    if (NULL != p) {
        return p;
    }
    p = calloc(1, sizeof(*p));
    if (NULL == p) {
        return NULL;
    }
    p->n_maps = n > 0 ? n : 1;
    p->maps = calloc(p->n_maps, sizeof(*p->maps));
    if (NULL == p->maps) {
        free(p);
        return NULL;
    }
    p->ep = ep;
    /* pids order the two sides the same way in both processes (local
     * ranks do not for peers of another job) */
    smcuda_ipc_peer_init(&p->ipc, (int) getpid(), (int) ep->pid, &devq, ipc_send, p);
    ep->accel = p;
    return p;
}

/* Whether IPC is on with this peer (for MPI_T: the count and the mask). */
static void publish_on(smcuda_cuda_peer_t *p)
{
    /* a peer of our job: its local rank (a guest's id is n_local or more) */
    int r = p->ep->lrank >= 0 && p->ep->lrank < 64 && p->ep->lrank < mca_btl_smcuda.n_local
                ? p->ep->lrank
                : -1;

    smcuda_pv_add(SMCUDA_PV_IPC_SETUPS_OK, 1);
    smcuda_pv_add(SMCUDA_PV_IPC_PEERS, 1);
    if (r >= 0) {
        __atomic_or_fetch(&mca_btl_smcuda_component.pv[SMCUDA_PV_IPC_PEER_MASK], 1ull << r,
                          __ATOMIC_RELAXED);
    }
    opal_output_verbose(10, mca_btl_smcuda_component.output,
                        "btl/smcuda: CUDA IPC on with local peer %d (pid %d), %s", p->ep->lrank,
                        (int) p->ep->pid, smcuda_ipc_state_name(p->ipc.state));
}

/* IPC with this peer is off for good: say why (verbose always, a warning
 * once per process). */
static void publish_bad(smcuda_cuda_peer_t *p)
{
    const char *why = NULL != p->ipc.why ? p->ipc.why : "unknown";

    smcuda_pv_add(SMCUDA_PV_IPC_SETUPS_BAD, 1);
    opal_output_verbose(1, mca_btl_smcuda_component.output,
                        "btl/smcuda: no CUDA IPC with local peer %d (pid %d): %s; its device "
                        "buffers are staged through host memory",
                        p->ep->lrank, (int) p->ep->pid, why);
    if (!refused_shown) {
        refused_shown = true;
        /* written at once: mpirun 4.1.4 at times garbles help messages
         * sent to it (see ob1x_show_help_now) */
        ob1x_show_help_now("help-btl-smcuda-cuda.txt", "cuda-ipc-refused", ob1x_host(),
                           (int) getpid(), (int) p->ep->pid, why);
    }
}

/* Accounts for a change of the peer's state. cuda_lock held. */
static void account(smcuda_cuda_peer_t *p)
{
    smcuda_ipc_state_t s = p->ipc.state;
    bool was_on = SMCUDA_IPC_OK == p->seen || SMCUDA_IPC_ACKED == p->seen;

    if (s == p->seen) {
        return;
    }
    p->seen = s;
    if (p->ipc.rdma && !was_on) {
        publish_on(p);
    } else if (SMCUDA_IPC_BAD == s) {
        publish_bad(p);
    }
}

/* Our device, once this process has used one: what answers a request. */
static void note_device(smcuda_cuda_peer_t *p)
{
    if (p->ipc.device < 0) {
        int dev = ob1x_cuda_noted_device();
        if (dev >= 0) {
            smcuda_ipc_set_device(&p->ipc, dev);
        }
    }
}

void mca_btl_smcuda_cuda_ctl(mca_btl_smcuda_module_t *m, const void *msg, size_t len)
{
    smcuda_ipc_msg_t h;
    mca_btl_base_endpoint_t *ep;
    smcuda_cuda_peer_t *p;

    if (len < sizeof(h)) {
        return;
    }
    memcpy(&h, msg, sizeof(h));
    ep = smcuda_ep_by_id(m, (int) h.from);
    if (NULL == ep || ep->self) {
        return;
    }
    OPAL_THREAD_LOCK(&cuda_lock);
    p = peer_of(ep);
    if (NULL != p) {
        note_device(p);
        smcuda_ipc_handle(&p->ipc, msg, len);
        account(p);
    }
    OPAL_THREAD_UNLOCK(&cuda_lock);
}

/* --- registration --------------------------------------------------------- */

/* Starts the handshake where needed; whether IPC is on. */
static bool ipc_ready(mca_btl_base_endpoint_t *ep, int dev)
{
    smcuda_cuda_peer_t *p;
    bool on = false;

    OPAL_THREAD_LOCK(&cuda_lock);
    p = peer_of(ep);
    if (NULL != p) {
        if (p->ipc.device < 0) {
            smcuda_ipc_set_device(&p->ipc, dev);
        }
        on = smcuda_ipc_start(&p->ipc);
        account(p);
    }
    OPAL_THREAD_UNLOCK(&cuda_lock);
    return on;
}

int mca_btl_smcuda_cuda_register(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep,
                                 void *base, size_t size, mca_btl_base_registration_handle_t *h)
{
    ob1x_cuda_ptr_info_t info;
    ob1x_cuda_ipc_handle_t ipc;

    (void) m;
    /* a device buffer is exported to one peer at a time (and never to
     * ourselves: the PML copies those) */
    if (NULL == ep || MCA_BTL_ENDPOINT_ANY == ep || ep->self || !ep->copy_ok) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    /* managed memory is never exported (the issue: staged); the upper
     * layer has just classified the buffer, usually */
    if (OPAL_SUCCESS != ob1x_cuda_classify_again(base, size, &info) ||
        OB1X_CUDA_MEM_DEVICE != info.type) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    if (!ipc_ready(ep, info.device)) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    /* the peer reads it by IPC, on its own stream, which cannot be ordered
     * after ours: the application's queued writes must have landed first */
    if (OPAL_SUCCESS != ob1x_cuda_sync_legacy() ||
        OPAL_SUCCESS != ob1x_cuda_ipc_get_alloc(info.base, &ipc)) {
        return OPAL_ERROR;
    }
    h->alloc_base = (uint64_t) info.base;
    h->alloc_size = (uint64_t) info.size;
    h->buffer_id = info.buffer_id;
    memcpy(h->ipc, ipc.bytes, sizeof(h->ipc));
    return OPAL_SUCCESS;
}

/* --- the cache of opened allocations ---------------------------------------- */

static void map_close(smcuda_ipc_map_t *e)
{
    (void) ob1x_cuda_ipc_close(e->mapped);
    e->mapped = NULL;
    smcuda_pv_add(SMCUDA_PV_IPC_CACHE_EVICTIONS, 1);
}

static bool map_overlaps(const smcuda_ipc_map_t *e, const mca_btl_base_registration_handle_t *h)
{
    return e->base < h->alloc_base + h->alloc_size && h->alloc_base < e->base + e->size;
}

/* The entry mapping the peer's allocation that h names, with a reference
 * taken; NULL and *rc when it cannot be had (OPAL_ERR_OUT_OF_RESOURCE:
 * every entry is in use, try later). cuda_lock held. */
static smcuda_ipc_map_t *map_acquire(smcuda_cuda_peer_t *p,
                                     const mca_btl_base_registration_handle_t *h, int *rc)
{
    smcuda_ipc_map_t *free_e = NULL, *lru = NULL;
    ob1x_cuda_ipc_handle_t ipc;
    void *mapped;

    for (unsigned i = 0; i < p->n_maps; ++i) {
        smcuda_ipc_map_t *e = &p->maps[i];
        if (NULL == e->mapped) {
            free_e = NULL != free_e ? free_e : e;
            continue;
        }
        if (e->base == h->alloc_base && e->size == h->alloc_size && e->buffer_id == h->buffer_id) {
            e->refs++;
            e->used = ++p->tick;
            smcuda_pv_add(SMCUDA_PV_IPC_CACHE_HITS, 1);
            return e;
        }
        if (0 != e->refs) {
            continue;
        }
        if (map_overlaps(e, h)) {
            /* an allocation the peer freed since: never served again */
            map_close(e);
            free_e = NULL != free_e ? free_e : e;
        } else if (NULL == lru || e->used < lru->used) {
            lru = e;
        }
    }
    if (NULL == free_e) {
        if (NULL == lru) {
            *rc = OPAL_ERR_OUT_OF_RESOURCE;
            return NULL;
        }
        map_close(lru);
        free_e = lru;
    }
    memcpy(ipc.bytes, h->ipc, sizeof(ipc.bytes));
    smcuda_pv_add(SMCUDA_PV_IPC_CACHE_MISSES, 1);
    if (OPAL_SUCCESS != ob1x_cuda_ipc_open(&ipc, &mapped)) {
        *rc = OPAL_ERROR; /* shown by the library; the PML falls back */
        return NULL;
    }
    *free_e = (smcuda_ipc_map_t){.base = h->alloc_base,
                                 .size = h->alloc_size,
                                 .buffer_id = h->buffer_id,
                                 .mapped = mapped,
                                 .used = ++p->tick,
                                 .refs = 1};
    return free_e;
}

/* --- gets ------------------------------------------------------------------- */

/* Starts the pieces of op; the number started (0: none could be). */
static int op_start(smcuda_cuda_op_t *op, void *dst, const unsigned char *src, size_t size)
{
    size_t piece = mca_btl_smcuda_component.cuda_copy_piece;
    size_t off = 0;

    if (0 == piece || size / piece >= SMCUDA_CUDA_MAX_PIECES) {
        piece = (size + SMCUDA_CUDA_MAX_PIECES - 1) / SMCUDA_CUDA_MAX_PIECES;
    }
    if (0 == piece) {
        piece = 1;
    }
    op->n = 0;
    do {
        size_t n = size - off < piece ? size - off : piece;
        if (OPAL_SUCCESS !=
            ob1x_cuda_copy_start((unsigned char *) dst + off, src + off, n, &op->tickets[op->n])) {
            op->status = OPAL_ERROR;
            break;
        }
        op->n++;
        off += n;
    } while (off < size && op->n < SMCUDA_CUDA_MAX_PIECES);
    return op->n;
}

int mca_btl_smcuda_cuda_get(mca_btl_smcuda_module_t *m, const smcuda_rdma_done_t *done,
                            uint64_t remote_address,
                            const mca_btl_base_registration_handle_t *remote_handle, size_t size)
{
    smcuda_cuda_peer_t *p;
    smcuda_cuda_op_t *op;
    smcuda_ipc_map_t *e;
    int rc = OPAL_ERR_OUT_OF_RESOURCE;

    if (NULL == done->ep || done->ep->self || remote_address < remote_handle->alloc_base ||
        remote_address + size > remote_handle->alloc_base + remote_handle->alloc_size) {
        return OPAL_ERR_BAD_PARAM;
    }
    op = calloc(1, sizeof(*op));
    if (NULL == op) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    OPAL_THREAD_LOCK(&cuda_lock);
    p = peer_of(done->ep);
    e = NULL != p ? map_acquire(p, remote_handle, &rc) : NULL;
    if (NULL == e) {
        OPAL_THREAD_UNLOCK(&cuda_lock);
        free(op);
        return rc;
    }
    op->done = *done;
    op->map = e;
    op->size = size;
    if (0 == size) {
        op->n = 0;
    } else if (0 == op_start(op, done->local_address,
                             (const unsigned char *) e->mapped +
                                 (remote_address - remote_handle->alloc_base),
                             size)) {
        e->refs--;
        OPAL_THREAD_UNLOCK(&cuda_lock);
        free(op);
        return OPAL_ERROR;
    }
    *ops_tail = op;
    ops_tail = &op->next;
    m->accel_busy++;
    OPAL_THREAD_UNLOCK(&cuda_lock);
    SMCUDA_PV_ADD(GET, size);
    return OPAL_SUCCESS;
}

/* Whether every copy of op is done (polled without blocking). */
static bool op_done(smcuda_cuda_op_t *op)
{
    bool all = true;

    for (int i = 0; i < op->n; ++i) {
        int rc;
        if (op->tickets[i] < 0) {
            continue;
        }
        rc = ob1x_cuda_copy_test(op->tickets[i]);
        if (OPAL_ERR_RESOURCE_BUSY == rc) {
            all = false;
            continue;
        }
        op->tickets[i] = -1;
        if (OPAL_SUCCESS != rc) {
            op->status = OPAL_ERROR;
        }
    }
    return all;
}

/* Completes the gets whose copies are all done, in no particular order. */
int mca_btl_smcuda_cuda_progress(mca_btl_smcuda_module_t *m)
{
    smcuda_cuda_op_t *finished = NULL, **pp;
    int n = 0;

    OPAL_THREAD_LOCK(&cuda_lock);
    pp = &ops_head;
    while (NULL != *pp) {
        smcuda_cuda_op_t *op = *pp;
        if (!op_done(op)) {
            pp = &op->next;
            continue;
        }
        *pp = op->next;
        op->map->refs--;
        m->accel_busy--;
        op->next = finished;
        finished = op;
    }
    ops_tail = pp;
    OPAL_THREAD_UNLOCK(&cuda_lock);
    /* callbacks without the lock: they may start the next get */
    while (NULL != finished) {
        smcuda_cuda_op_t *op = finished;
        finished = op->next;
        if (OPAL_SUCCESS == op->status) {
            smcuda_pv_add(SMCUDA_PV_IPC_BYTES, op->size);
        }
        smcuda_rdma_done(m, &op->done, op->status);
        free(op);
        ++n;
    }
    return n;
}

void mca_btl_smcuda_cuda_flush(mca_btl_smcuda_module_t *m)
{
    while (0 != __atomic_load_n(&m->accel_busy, __ATOMIC_RELAXED)) {
        (void) mca_btl_smcuda_cuda_progress(m);
    }
}

/* --- the end ---------------------------------------------------------------- */

static void peer_fini(mca_btl_base_endpoint_t *ep)
{
    smcuda_cuda_peer_t *p = NULL != ep ? (smcuda_cuda_peer_t *) ep->accel : NULL;

    if (NULL == p) {
        return;
    }
    for (unsigned i = 0; i < p->n_maps; ++i) {
        if (NULL != p->maps[i].mapped) {
            (void) ob1x_cuda_ipc_close(p->maps[i].mapped);
            p->maps[i].mapped = NULL;
        }
    }
    free(p->maps);
    free(p);
    ep->accel = NULL;
}

/* Finishes the copies in flight, closes every mapping, frees the peers'
 * state. Before the endpoints go. */
void mca_btl_smcuda_cuda_fini(mca_btl_smcuda_module_t *m)
{
    mca_btl_smcuda_cuda_flush(m);
    for (int i = 0; i < m->n_local && NULL != m->eps; ++i) {
        peer_fini(m->eps[i]);
    }
    for (int i = 0; i < m->n_guest_eps && NULL != m->guest_eps; ++i) {
        peer_fini(m->guest_eps[i]);
    }
}

void mca_btl_smcuda_cuda_close(void)
{
    ob1x_cuda_finalize();
}

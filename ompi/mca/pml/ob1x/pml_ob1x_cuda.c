/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Device (CUDA) buffers in ob1x: recognition, staging through host memory,
 * and the policy of the device RGET (pml_ob1x_cuda.h, docs/cuda.md).
 *
 * Staging is a whole-span copy: the device span of the message is copied
 * to plain host memory (malloc: the common library has no pinned
 * allocator, and the copy is a cuMemcpyAsync polled to completion) before
 * the send starts, and the message is sent from that copy with the user's
 * datatype, so every protocol, send mode and BTL works unchanged. A device
 * receive buffer receives into such a copy, which goes to the device when
 * the last byte has arrived, before the request completes.
 */
#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/runtime/opal_progress.h"
#include "ompi/mca/bml/base/base.h"
#include "ompi/mca/rte/rte.h"

#include "common_ob1x_help.h"
#include "common_ob1x_hints.h"

#include "pml_ob1x.h"
#include "pml_ob1x_cuda.h"
#include "pml_ob1x_cuda_pieces.h"
#include "pml_ob1x_cuda_stage.h"
#include "pml_ob1x_recvreq.h"
#include "pml_ob1x_sendreq.h"

#if OB1X_PML_CUDA
#include "common_ob1x_cuda.h"
#endif

bool ob1x_cuda_live = false;

static struct link_map *no_watch = NULL;
struct link_map *volatile *ob1x_cuda_watch = &no_watch;

/* pml_ob1x_cuda_support: ob1x was built with CUDA support. */
static bool cuda_support = OB1X_PML_CUDA ? true : false;

void ob1x_cuda_register_params(void)
{
    (void) mca_base_component_var_register(
        &mca_pml_ob1x_component.pmlm_version, "cuda_support",
        "Whether this pml/ob1x was built with CUDA support (read only): device buffers are "
        "then recognised in any process that has loaded the CUDA driver; see the MPI_T "
        "variable pml_ob1x_cuda_enabled for a given run",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, MCA_BASE_VAR_FLAG_DEFAULT_ONLY, OPAL_INFO_LVL_4,
        MCA_BASE_VAR_SCOPE_CONSTANT, &cuda_support);
#if OB1X_PML_CUDA
    ob1x_cuda_stage_register_params();
    ob1x_cuda_pieces_register_params();
#endif
}

#if OB1X_PML_CUDA

/* ------------------------------------------------------------ recognition */

static int refresh_progress(void);
static bool progress_registered;

/* Sets the flag when the driver is loaded now. */
static void ob1x_cuda_refresh(void)
{
    if (ob1x_cuda_live || !ob1x_cuda_driver_present()) {
        return;
    }
    ob1x_cuda_live = true;
    ob1x_counters.events[OB1X_EV_CUDA_ENABLED] = 1;
}

/* Threads may run this together: each sets a valid watch (pinned objects
 * stay loaded), and the flag only ever turns true. */
bool ob1x_cuda_rewatch(void)
{
    struct link_map *volatile *watch;

    ob1x_cuda_refresh();
    if (!ob1x_cuda_live) {
        watch = ob1x_cuda_load_watch();
        __atomic_store_n(&ob1x_cuda_watch, NULL != watch ? watch : &no_watch, __ATOMIC_RELAXED);
    }
    return ob1x_cuda_live;
}

/* So that pml_ob1x_cuda_enabled turns 1 in a process that loads CUDA
 * and then only polls, the flag is also looked at from progress, while it
 * is false: at every low-priority call through the watch (one load);
 * without a watch, by asking the dynamic loader (its lock and a walk,
 * some 200 instructions) once every 64 such calls (which opal_progress
 * makes every 8th time), out of a host-only process's polling loops. */
static int refresh_progress(void)
{
    static unsigned int calls;

    if (&no_watch != ob1x_cuda_watch) {
        (void) ob1x_cuda_check();
    } else if (0 == (++calls & 63)) {
        ob1x_cuda_refresh();
    }
    return 0;
}

int ob1x_cuda_open(void)
{
    /* a program linked with the CUDA runtime loads the driver at its first
     * CUDA call, usually after MPI_Init, and may pass a device buffer to
     * MPI right after: load the driver now */
    (void) ob1x_cuda_init_for_runtime();
    if (!ob1x_cuda_rewatch() && !progress_registered) {
        progress_registered = OPAL_SUCCESS == opal_progress_register_lp(refresh_progress);
    }
    return OMPI_SUCCESS;
}

void ob1x_cuda_close(void)
{
    if (progress_registered) {
        (void) opal_progress_unregister(refresh_progress);
        progress_registered = false;
    }
    ob1x_cuda_stage_drain();
}

bool ob1x_cuda_is_device(const void *buf, size_t count, struct ompi_datatype_t *dtype)
{
    ob1x_cuda_ptr_info_t info;
    ptrdiff_t gap;
    size_t span = opal_datatype_span(&dtype->super, count, &gap);

    if (0 == span || 0 == dtype->super.size) {
        return false; /* nothing is read or written */
    }
    if (OPAL_SUCCESS != ob1x_cuda_classify((const char *) buf + gap, span, &info) ||
        OB1X_CUDA_MEM_DEVICE != info.type) {
        return false;
    }
    /* The first device buffer: the driver is needed for good. */
    return OPAL_SUCCESS == ob1x_cuda_init(true);
}

/* ------------------------------------------------------------- copies */

/* A copy polled to completion (progress is not called: the caller may be
 * inside it). */
static int copy_sync(void *dst, const void *src, size_t len)
{
    int ticket, rc;

    if (0 == len) {
        return OMPI_SUCCESS;
    }
    rc = ob1x_cuda_copy_start(dst, src, len, &ticket);
    while (OPAL_SUCCESS == rc) {
        rc = ob1x_cuda_copy_test(ticket);
        if (OPAL_ERR_RESOURCE_BUSY != rc) {
            break;
        }
        rc = OPAL_SUCCESS;
    }
    if (OPAL_SUCCESS == rc) {
        (void) ob1x_counter_add(&ob1x_counters.events[OB1X_EV_CUDA_STAGED], len);
    }
    return OPAL_SUCCESS == rc ? OMPI_SUCCESS : OMPI_ERROR;
}

/* Why a device buffer is staged where CUDA IPC might have been expected. */
typedef enum { WHY_NONCONTIG, WHY_NO_DEVICE_BTL, WHY_COUNT } stage_why_t;

static void warn_staged(stage_why_t why, struct ompi_proc_t *peer)
{
    static bool shown[WHY_COUNT];
    static const char *const text[WHY_COUNT] = {
        "its datatype is not contiguous (a peer reads only contiguous device memory)",
        "no BTL to that process can read device memory (no btl/smcuda CUDA IPC to it)"};

    if (shown[why]) {
        return;
    }
    shown[why] = true;
    ob1x_show_help_now("help-mpi-pml-ob1x-cuda.txt", "cuda-staged", ob1x_host(), text[why],
                       OMPI_NAME_PRINT(&peer->super.proc_name));
}

/* ------------------------------------------------------------- sends */

/* The BTL to the peer that reads device memory, or NULL. */
static mca_bml_base_btl_t *device_get_btl(mca_bml_base_endpoint_t *ep)
{
    size_t n = mca_bml_base_btl_array_get_size(&ep->btl_rdma);

    for (size_t i = 0; i < n; ++i) {
        mca_bml_base_btl_t *b = mca_bml_base_btl_array_get_index(&ep->btl_rdma, i);
        if ((ob1x_btl_props(b->btl) & OB1X_BTL_PROP_DEVICE_GET) ||
            mca_pml_ob1x.params.cuda_test_device_get) {
            return b;
        }
    }
    return NULL;
}

/* Registers [base, base + len) of device memory with the device-get BTL b
 * for the peer to read, directly, never through a registration cache (a
 * device buffer's registration names its allocation, which may be freed at
 * any time). NULL: the BTL cannot (yet) serve it, or its handle would not
 * fit our headers. */
static mca_btl_base_registration_handle_t *device_register(mca_bml_base_btl_t *b, void *base,
                                                           size_t len)
{
    if (NULL == b->btl->btl_register_mem || ob1x_handle_size(b->btl, true) > OB1X_MAX_HANDLE) {
        return NULL;
    }
    return b->btl->btl_register_mem(b->btl, b->btl_endpoint, base, len,
                                    MCA_BTL_REG_FLAG_REMOTE_READ | OB1X_BTL_REG_FLAG_DEVICE);
}

/*
 * The first device buffer sent to a process of the node, whatever its
 * size, is registered once with the peer's device-get BTL and released:
 * that starts the BTL's set-up (smcuda: the CUDA IPC handshake, started
 * by whichever side first sends a device buffer), so that it is done by
 * the first message large enough for a device RGET instead of staging
 * that one. A registration is a BTL's documented start of it.
 */
static void device_warm(const void *buf, size_t count, struct ompi_datatype_t *dtype,
                        ob1x_comm_peer_t *peer)
{
    mca_bml_base_btl_t *b = device_get_btl(peer->endpoint);
    mca_btl_base_registration_handle_t *h;
    ptrdiff_t gap;
    size_t span = opal_datatype_span(&dtype->super, count, &gap);

    peer->oproc->cuda_warmed = true;
    if (NULL == b || 0 == span) {
        return;
    }
    h = device_register(b, (char *) buf + gap, span);
    if (NULL != h) {
        (void) b->btl->btl_deregister_mem(b->btl, h); /* was ready already */
    }
}

/*
 * The device RGET, if it may carry this message: contiguous, not buffered
 * (MPI_Bsend packs into the attached buffer), of rendezvous size, to a
 * peer with a device-get BTL that registers the buffer now (NULL: CUDA IPC
 * with the peer is not set up yet, or refused; the BTL started the set-up
 * and the message is staged). Warns once when IPC might have been
 * expected and cannot serve.
 */
static mca_btl_base_registration_handle_t *
device_rget_reg(const void *buf, size_t count, struct ompi_datatype_t *dtype,
                mca_pml_base_send_mode_t mode, ob1x_comm_peer_t *peer, mca_bml_base_btl_t **out)
{
    mca_bml_base_endpoint_t *ep = peer->endpoint;
    mca_bml_base_btl_t *eager, *b;
    mca_btl_base_registration_handle_t *h;
    size_t size = dtype->super.size * count;
    bool local = OPAL_PROC_ON_LOCAL_NODE(peer->oproc->proc->super.proc_flags);

    if (OPAL_UNLIKELY(local && !peer->oproc->cuda_warmed)) {
        device_warm(buf, count, dtype, peer);
    }
    eager = mca_bml_base_btl_array_get_index(&ep->btl_eager, 0);
    if (MCA_PML_BASE_SEND_BUFFERED == mode || NULL == eager || size <= ob1x_eager_max(eager->btl)) {
        return NULL;
    }
    if (!opal_datatype_is_contiguous_memory_layout(&dtype->super, (int32_t) count)) {
        if (local) {
            warn_staged(WHY_NONCONTIG, peer->oproc->proc);
        }
        return NULL;
    }
    b = device_get_btl(ep);
    if (NULL == b) {
        if (local) {
            warn_staged(WHY_NO_DEVICE_BTL, peer->oproc->proc);
        }
        return NULL;
    }
    h = device_register(b, (char *) buf + dtype->super.true_lb, size);
    *out = b;
    return h;
}

/* The host copy of a device send buffer; *host is the address to give the
 * datatype (the copy minus the span's offset). */
static int stage_send(const void *buf, size_t count, struct ompi_datatype_t *dtype, bool copy,
                      void **block, void **host)
{
    ptrdiff_t gap;
    size_t span = opal_datatype_span(&dtype->super, count, &gap);

    *block = ob1x_cuda_stage_get(span);
    if (NULL == *block) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    *host = (char *) *block - gap;
    if (copy && OMPI_SUCCESS != copy_sync(*block, (const char *) buf + gap, span)) {
        ob1x_cuda_stage_put(*block);
        *block = NULL;
        return OMPI_ERROR;
    }
    return OMPI_SUCCESS;
}

/* The most payload a message to the peer carries before its first FRAG:
 * the largest eager size of its BTLs (a RNDV's first part is within it). */
static size_t eager_head(mca_bml_base_endpoint_t *ep)
{
    size_t n = mca_bml_base_btl_array_get_size(&ep->btl_eager), head = 0;

    for (size_t i = 0; i < n; ++i) {
        size_t e = ob1x_eager_max(mca_bml_base_btl_array_get_index(&ep->btl_eager, i)->btl);
        head = e > head ? e : head;
    }
    return head;
}

/* Whether the span of count elements of dtype can be copied in pieces
 * that follow the packing: contiguous, or elements laid out at a positive
 * extent (element i lies within [i * extent, i * extent + width) of the
 * span, width = true_ub - true_lb). */
static bool pieces_layout(const opal_datatype_t *dt, size_t count)
{
    return opal_datatype_is_contiguous_memory_layout(dt, (int32_t) count) || dt->ub > dt->lb;
}

/* The span bytes [0, n) that hold the first `packed` bytes of count
 * elements of dtype (pieces_layout): a sender's copy must have reached n
 * before they are packed. */
static size_t span_holding(const opal_datatype_t *dt, size_t count, size_t span, size_t packed)
{
    size_t end;

    if (opal_datatype_is_contiguous_memory_layout(dt, (int32_t) count)) {
        return packed < span ? packed : span;
    }
    if (0 == packed || 0 == dt->size) {
        return 0;
    }
    /* up to the end of the element that holds the last of those bytes */
    end =
        (packed - 1) / dt->size * (size_t) (dt->ub - dt->lb) + (size_t) (dt->true_ub - dt->true_lb);
    return end < span ? end : span;
}

/* The span bytes [0, n) that are final once the first `packed` bytes were
 * unpacked, in order, into a host copy that held the device's bytes
 * (pieces_layout): every element before the one being filled, and the
 * gaps among them. */
static size_t span_final(const opal_datatype_t *dt, size_t count, size_t span, size_t packed)
{
    size_t whole;

    if (0 == dt->size || packed >= dt->size * count) {
        return span;
    }
    whole = packed / dt->size; /* complete elements */
    return whole * (size_t) (dt->ub - dt->lb);
}

/* Is a send of this device buffer copied piece by piece: a layout the
 * pieces can follow, not buffered, at least two pieces, larger than any
 * eager message to the peer (whose first bytes, up to *head packed, go
 * with the first message)? */
static bool send_pieces_fit(size_t count, struct ompi_datatype_t *dtype,
                            mca_pml_base_send_mode_t mode, mca_bml_base_endpoint_t *ep, size_t span,
                            size_t *head)
{
    return MCA_PML_BASE_SEND_BUFFERED != mode && NULL != ep &&
           pieces_layout(&dtype->super, count) && ob1x_cuda_pieces_fit(span) &&
           (*head = eager_head(ep)) < dtype->super.size * count;
}

/* Starts every piece's copy and waits for the first `head` bytes of the
 * span; the FRAGs wait for the rest (ob1x_cuda_send_staged). */
static int send_pieces_start(ob1x_cuda_pieces_t *pieces, size_t head)
{
    bool ready = false;
    int rc = ob1x_cuda_pieces_start_all(pieces);

    while (OMPI_SUCCESS == rc && !ready) {
        rc = ob1x_cuda_pieces_ready(pieces, head, &ready);
    }
    if (OMPI_SUCCESS == rc) {
        ob1x_count_event(OB1X_EV_CUDA_PIECEWISE);
    }
    return rc;
}

/* The copy of a device send buffer that send_pieces_fit, made piece by
 * piece (pml_ob1x_cuda_pieces.c) into a block taken here. *pieces stays
 * NULL when the message does not qualify; the caller then copies it
 * whole. */
static int stage_send_pieces(const void *buf, size_t count, struct ompi_datatype_t *dtype,
                             mca_pml_base_send_mode_t mode, ob1x_comm_peer_t *peer, void **block,
                             void **host, ob1x_cuda_pieces_t **pieces)
{
    ptrdiff_t gap;
    size_t span = opal_datatype_span(&dtype->super, count, &gap), head;

    *pieces = NULL;
    if (!send_pieces_fit(count, dtype, mode, peer->endpoint, span, &head)) {
        return OMPI_SUCCESS; /* copied whole, without a second block taken here */
    }
    *block = ob1x_cuda_stage_get(span);
    *pieces = ob1x_cuda_pieces_new(*block, (const char *) buf + gap, span);
    if (NULL == *pieces) {
        ob1x_cuda_stage_put(*block);
        *block = NULL;
        return OMPI_SUCCESS;
    }
    *host = (char *) *block - gap;
    if (OMPI_SUCCESS !=
        send_pieces_start(*pieces, span_holding(&dtype->super, count, span, head))) {
        ob1x_cuda_pieces_free(*pieces);
        ob1x_cuda_stage_put(*block);
        *pieces = NULL;
        *block = NULL;
        return OMPI_ERROR;
    }
    return OMPI_SUCCESS;
}

bool ob1x_cuda_send_staged(ob1x_send_request_t *req, size_t upto)
{
    const opal_datatype_t *dt = &req->base.req_base.req_datatype->super;
    size_t count = req->base.req_base.req_count;
    ptrdiff_t gap;
    bool ready = false;

    upto = span_holding(dt, count, opal_datatype_span(dt, count, &gap), upto);
    if (OMPI_SUCCESS != ob1x_cuda_pieces_ready(req->cuda_pieces, upto, &ready)) {
        ob1x_send_fatal(req->base.req_base.req_proc, OMPI_ERROR); /* a copy failed */
    }
    return ready;
}

static int wait_send(ob1x_send_request_t *req)
{
    ompi_request_t *request = (ompi_request_t *) req;
    int rc;

    ompi_request_wait_completion(request);
    rc = request->req_status.MPI_ERROR;
    ompi_request_free(&request);
    return rc;
}

int ob1x_cuda_isend(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst, int tag,
                    mca_pml_base_send_mode_t mode, struct ompi_communicator_t *comm,
                    struct ompi_request_t **request)
{
    ob1x_comm_peer_t *peer = ob1x_peer(comm, dst);
    mca_bml_base_btl_t *dev_btl = NULL;
    mca_btl_base_registration_handle_t *reg = NULL;
    ob1x_send_request_t *req = NULL;
    ob1x_cuda_pieces_t *pieces = NULL;
    void *block = NULL, *host = (void *) buf;
    int rc;

    if (OPAL_UNLIKELY(NULL == peer->endpoint)) {
        return OMPI_ERR_UNREACH;
    }
    reg = device_rget_reg(buf, count, dtype, mode, peer, &dev_btl);
    if (NULL == reg) {
        rc = stage_send_pieces(buf, count, dtype, mode, peer, &block, &host, &pieces);
        if (OMPI_SUCCESS == rc && NULL == pieces) {
            rc = stage_send(buf, count, dtype, true, &block, &host);
        }
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
    }
    rc = ob1x_send_request_create(host, count, dtype, dst, tag, mode, comm, false, &req);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        ob1x_cuda_pieces_free(pieces);
        ob1x_cuda_stage_put(block);
        if (NULL != reg) {
            (void) dev_btl->btl->btl_deregister_mem(dev_btl->btl, reg);
        }
        return rc;
    }
    req->cuda_user = buf;
    req->cuda_stage = block;
    req->cuda_pieces = pieces;
    req->cuda_reg = reg;
    req->cuda_btl = dev_btl;
    rc = ob1x_send_request_begin(req, -1, NULL, OB1X_PROTO_COUNT);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        ob1x_cuda_send_fini(req);
        ob1x_send_request_release(req);
        return rc;
    }
    if (NULL != request) {
        *request = (ompi_request_t *) req;
        return OMPI_SUCCESS;
    }
    return wait_send(req);
}

/* A persistent send of a device buffer is always staged: the copy is
 * made again at each MPI_Start, piece by piece where an isend's would be
 * (the pieces are kept with the request). */
int ob1x_cuda_isend_init(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst,
                         int tag, mca_pml_base_send_mode_t mode, struct ompi_communicator_t *comm,
                         struct ompi_request_t **request)
{
    ob1x_send_request_t *req = NULL;
    void *block, *host;
    ptrdiff_t gap;
    size_t span = opal_datatype_span(&dtype->super, count, &gap), head;
    int rc = stage_send(buf, count, dtype, false, &block, &host);

    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    rc = ob1x_send_request_create(host, count, dtype, dst, tag, mode, comm, true, &req);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        ob1x_cuda_stage_put(block);
        return rc;
    }
    req->cuda_user = buf;
    req->cuda_stage = block;
    if (send_pieces_fit(count, dtype, mode, ob1x_peer(comm, dst)->endpoint, span, &head)) {
        req->cuda_pieces = ob1x_cuda_pieces_new(block, (const char *) buf + gap, span);
    }
    *request = (ompi_request_t *) req;
    return OMPI_SUCCESS;
}

int ob1x_cuda_send_restage(ob1x_send_request_t *req)
{
    ptrdiff_t gap;
    size_t span = opal_datatype_span(&req->base.req_base.req_datatype->super,
                                     req->base.req_base.req_count, &gap);

    if (NULL != req->cuda_pieces) {
        /* the previous start's copies have all landed: it completed */
        ob1x_cuda_pieces_reset(req->cuda_pieces);
        return send_pieces_start(req->cuda_pieces,
                                 span_holding(&req->base.req_base.req_datatype->super,
                                              req->base.req_base.req_count, span,
                                              eager_head(req->endpoint)));
    }
    return copy_sync(req->cuda_stage, (const char *) req->cuda_user + gap, span);
}

int ob1x_cuda_send_stage_late(ob1x_send_request_t *req)
{
    void *block, *host;
    int rc;

    if (NULL != req->cuda_stage) {
        return OMPI_SUCCESS; /* staged already */
    }
    rc = stage_send(req->cuda_user, req->base.req_base.req_count, req->base.req_base.req_datatype,
                    true, &block, &host);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    req->cuda_stage = block;
    req->base.req_addr = host;
    /* From now on the convertor reads the copy (positioned by each range
     * the scheduler sends). */
    ob1x_send_request_reprepare(req);
    return OMPI_SUCCESS;
}

void ob1x_cuda_send_fini(ob1x_send_request_t *req)
{
    if (NULL != req->cuda_reg) {
        (void) req->cuda_btl->btl->btl_deregister_mem(req->cuda_btl->btl, req->cuda_reg);
        req->cuda_reg = NULL;
    }
}

void ob1x_cuda_send_release(ob1x_send_request_t *req)
{
    ob1x_cuda_pieces_free(req->cuda_pieces); /* waits for copies still in flight */
    req->cuda_pieces = NULL;
    ob1x_cuda_stage_put(req->cuda_stage);
    req->cuda_stage = NULL;
    req->cuda_user = NULL;
}

/* ------------------------------------------------------------- receives */

void ob1x_cuda_recv_setup(ob1x_recv_request_t *req, void **buf, size_t count,
                          struct ompi_datatype_t *dtype, bool persistent)
{
    ptrdiff_t gap;
    size_t span;

    if (!ob1x_cuda_is_device(*buf, count, dtype)) {
        return;
    }
    span = opal_datatype_span(&dtype->super, count, &gap);
    req->cuda_user = *buf;
    req->cuda_span = span;
    req->cuda_gap = gap;
    req->cuda_contig = opal_datatype_is_contiguous_memory_layout(&dtype->super, (int32_t) count);
    req->cuda_piecewise = pieces_layout(&dtype->super, count);
    req->cuda_direct = false;
    req->cuda_stage = NULL;
    req->cuda_pieces = NULL;
    if (req->cuda_contig) {
        /* The host copy waits for the first payload that needs it: a
         * device RGET never does, and pinning a copy it does not use costs
         * about a millisecond per MiB. Meanwhile the convertor is prepared
         * on the device address, which nothing reads. */
        return;
    }
    /* the gaps of the datatype are refreshed from the device at each start */
    ob1x_cuda_recv_stage(req);
    if (NULL == req->cuda_stage) {
        req->cuda_user = NULL;
        return;
    }
    *buf = (char *) req->cuda_stage - gap;
    if (!persistent) {
        ob1x_cuda_recv_start(req);
    }
}

void ob1x_cuda_recv_stage(ob1x_recv_request_t *req)
{
    opal_convertor_t *conv = &req->base.req_base.req_convertor;
    unsigned char *host;

    if (NULL != req->cuda_stage) {
        return;
    }
    req->cuda_stage = ob1x_cuda_stage_get(req->cuda_span);
    if (NULL == req->cuda_stage) {
        return; /* the job is being aborted (stage_get said why) */
    }
    host = (unsigned char *) req->cuda_stage - req->cuda_gap;
    if (req->cuda_contig) {
        /* Called before any payload was unpacked: the convertor's
         * positions are relative to its base, which moves to the copy. */
        conv->pBaseBuf = host;
        req->base.req_base.req_addr = host;
    }
    if (req->cuda_piecewise) {
        req->cuda_pieces = ob1x_cuda_pieces_new((char *) req->cuda_user + req->cuda_gap,
                                                req->cuda_stage, req->cuda_span);
    }
}

void ob1x_cuda_recv_start(ob1x_recv_request_t *req)
{
    req->cuda_direct = false;
    req->cuda_back_n = 0;
    if (NULL != req->cuda_pieces) {
        ob1x_cuda_pieces_reset(req->cuda_pieces);
    }
    if (!req->cuda_contig &&
        OMPI_SUCCESS !=
            copy_sync(req->cuda_stage, (char *) req->cuda_user + req->cuda_gap, req->cuda_span)) {
        req->base.req_base.req_ompi.req_status.MPI_ERROR = MPI_ERR_INTERN;
    }
}

void ob1x_cuda_recv_landed(ob1x_recv_request_t *req, size_t offset, const struct iovec *iov,
                           uint32_t iov_count)
{
    size_t len = 0, end;

    if (req->cuda_direct) {
        return; /* a device RGET writes the device itself */
    }
    for (uint32_t i = 0; i < iov_count; ++i) {
        len += iov[i].iov_len;
    }
    if (!req->cuda_contig) {
        /* strided: unpacked in order, into a copy that held the device's
         * bytes (its gaps); a piece that could not start is copied at
         * completion */
        (void) ob1x_cuda_pieces_final_upto(req->cuda_pieces,
                                           span_final(&req->base.req_base.req_datatype->super,
                                                      req->base.req_base.req_count, req->cuda_span,
                                                      req->base.req_base.req_convertor.bConverted));
        return;
    }
    end = offset + len < req->capacity ? offset + len : req->capacity;
    if (offset < end) {
        /* a piece that could not start is copied at completion */
        (void) ob1x_cuda_pieces_landed(req->cuda_pieces, offset, end - offset);
    }
}

void ob1x_cuda_recv_done(ob1x_recv_request_t *req)
{
    size_t len = req->cuda_span;
    int early = 0;

    if (req->cuda_direct) {
        /* a device RGET wrote the device buffer itself, but for the
         * ranges of gets that failed */
        for (int i = 0; i < req->cuda_back_n; ++i) {
            struct ob1x_cuda_range *r = &req->cuda_back[i];
            size_t end = r->offset + r->length;
            end = end < req->capacity ? end : req->capacity;
            if (r->offset < end &&
                OMPI_SUCCESS != copy_sync((char *) req->cuda_user + req->cuda_gap + r->offset,
                                          (char *) req->cuda_stage + r->offset, end - r->offset)) {
                req->base.req_base.req_ompi.req_status.MPI_ERROR = MPI_ERR_INTERN;
            }
        }
        req->cuda_back_n = 0;
        return;
    }
    if (NULL == req->cuda_stage) {
        return; /* no payload came (an empty or wholly truncated message) */
    }
    if (req->cuda_contig) {
        /* only what arrived: the rest of the buffer stays as it was */
        len = req->msg_length < req->capacity ? req->msg_length : req->capacity;
    }
    if (NULL != req->cuda_pieces) {
        if (OMPI_SUCCESS != ob1x_cuda_pieces_finish(req->cuda_pieces, len, &early)) {
            req->base.req_base.req_ompi.req_status.MPI_ERROR = MPI_ERR_INTERN;
        }
        if (early > 0) {
            ob1x_count_event(OB1X_EV_CUDA_PIECEWISE);
        }
        return;
    }
    if (OMPI_SUCCESS != copy_sync((char *) req->cuda_user + req->cuda_gap, req->cuda_stage, len)) {
        req->base.req_base.req_ompi.req_status.MPI_ERROR = MPI_ERR_INTERN;
    }
}

void ob1x_cuda_recv_note_fallback(ob1x_recv_request_t *req, size_t offset, size_t length)
{
    struct ob1x_cuda_range *r =
        realloc(req->cuda_back, (size_t) (req->cuda_back_n + 1) * sizeof(*r));

    ob1x_cuda_recv_stage(req); /* the FRAGs land there */

    if (NULL == r) {
        ob1x_show_help_now("help-mpi-pml-ob1x.txt", "out-of-memory",
                           "the record of a failed device get", "the job is aborted", ob1x_host());
        ompi_rte_abort(OMPI_ERR_OUT_OF_RESOURCE, NULL);
        return;
    }
    req->cuda_back = r;
    r[req->cuda_back_n++] = (struct ob1x_cuda_range){offset, length};
}

void ob1x_cuda_recv_release(ob1x_recv_request_t *req)
{
    free(req->cuda_back);
    req->cuda_back = NULL;
    req->cuda_back_n = 0;
    ob1x_cuda_pieces_free(req->cuda_pieces);
    req->cuda_pieces = NULL;
    ob1x_cuda_stage_put(req->cuda_stage);
    req->cuda_stage = NULL;
    req->cuda_user = NULL;
}

#else /* !OB1X_PML_CUDA: the flag is never set, nothing below is called */

bool ob1x_cuda_rewatch(void)
{
    return false;
}

int ob1x_cuda_open(void)
{
    return OMPI_SUCCESS;
}

void ob1x_cuda_close(void)
{
}

bool ob1x_cuda_is_device(const void *buf, size_t count, struct ompi_datatype_t *dtype)
{
    (void) buf;
    (void) count;
    (void) dtype;
    return false;
}

int ob1x_cuda_isend(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst, int tag,
                    mca_pml_base_send_mode_t mode, struct ompi_communicator_t *comm,
                    struct ompi_request_t **request)
{
    return OMPI_ERR_NOT_SUPPORTED;
}

int ob1x_cuda_isend_init(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst,
                         int tag, mca_pml_base_send_mode_t mode, struct ompi_communicator_t *comm,
                         struct ompi_request_t **request)
{
    return OMPI_ERR_NOT_SUPPORTED;
}

int ob1x_cuda_send_restage(ob1x_send_request_t *req)
{
    return OMPI_ERR_NOT_SUPPORTED;
}

int ob1x_cuda_send_stage_late(ob1x_send_request_t *req)
{
    return OMPI_ERR_NOT_SUPPORTED;
}

bool ob1x_cuda_send_staged(ob1x_send_request_t *req, size_t upto)
{
    return true;
}

void ob1x_cuda_send_fini(ob1x_send_request_t *req)
{
}

void ob1x_cuda_send_release(ob1x_send_request_t *req)
{
}

void ob1x_cuda_recv_setup(ob1x_recv_request_t *req, void **buf, size_t count,
                          struct ompi_datatype_t *dtype, bool persistent)
{
}

void ob1x_cuda_recv_stage(ob1x_recv_request_t *req)
{
    (void) req;
}

void ob1x_cuda_recv_start(ob1x_recv_request_t *req)
{
}

void ob1x_cuda_recv_landed(ob1x_recv_request_t *req, size_t offset, const struct iovec *iov,
                           uint32_t iov_count)
{
}

void ob1x_cuda_recv_done(ob1x_recv_request_t *req)
{
}

void ob1x_cuda_recv_release(ob1x_recv_request_t *req)
{
}

void ob1x_cuda_recv_note_fallback(ob1x_recv_request_t *req, size_t offset, size_t length)
{
}

#endif

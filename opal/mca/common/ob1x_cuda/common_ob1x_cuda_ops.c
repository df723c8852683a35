/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_cuda_ops.c - IPC handles, asynchronous copies and device
 * queries (common_ob1x_cuda.h).
 */
#include "opal_config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "opal/constants.h"

#include "common_ob1x_cuda_internal.h"

_Static_assert(sizeof(ob1x_cuda_ipc_handle_t) == sizeof(CUipcMemHandle),
               "ob1x_cuda_ipc_handle_t must hold a CUipcMemHandle");
_Static_assert(sizeof(((ob1x_cuda_ipc_handle_t *) 0)->bytes) == CU_IPC_HANDLE_SIZE,
               "CU_IPC_HANDLE_SIZE changed");

/* The copy engine: one stream, and a pool of events indexed by ticket
 * (grown by doubling, never shrunk; an event is created once and reused). */
static struct {
    pthread_mutex_t lock;
    CUcontext noted_ctx; /* last device buffer's context */
    CUstream stream;
    CUevent *events;
    bool *busy;
    int n_events;
} copier = {.lock = PTHREAD_MUTEX_INITIALIZER};

void ob1x_cuda_note_context(CUcontext ctx)
{
    __atomic_store_n(&copier.noted_ctx, ctx, __ATOMIC_RELAXED);
}

static int ensure_context(void);

/* --- IPC ------------------------------------------------------------------- */

int ob1x_cuda_ipc_get(const void *ptr, ob1x_cuda_ipc_handle_t *handle, uintptr_t *base,
                      size_t *size)
{
    CUdeviceptr range_base = 0;
    size_t range_size = 0;
    CUresult rc;

    if (OPAL_SUCCESS != ob1x_cuda_need()) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    rc =
        ob1x_cuda_drv.cuMemGetAddressRange(&range_base, &range_size, (CUdeviceptr) (uintptr_t) ptr);
    if (CUDA_SUCCESS != rc) {
        return ob1x_cuda_failed("cuMemGetAddressRange", rc);
    }
    *base = (uintptr_t) range_base;
    *size = range_size;
    return ob1x_cuda_ipc_get_alloc((uintptr_t) range_base, handle);
}

int ob1x_cuda_ipc_get_alloc(uintptr_t base, ob1x_cuda_ipc_handle_t *handle)
{
    CUipcMemHandle h;
    CUresult rc;

    if (OPAL_SUCCESS != ob1x_cuda_need()) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    rc = ob1x_cuda_drv.cuIpcGetMemHandle(&h, (CUdeviceptr) base);
    if (CUDA_SUCCESS != rc) {
        return ob1x_cuda_failed("cuIpcGetMemHandle", rc);
    }
    memcpy(handle->bytes, &h, sizeof(h));
    return OPAL_SUCCESS;
}

int ob1x_cuda_ipc_open(const ob1x_cuda_ipc_handle_t *handle, void **base)
{
    CUipcMemHandle h;
    CUdeviceptr mapped = 0;
    CUresult rc;
    int ctx_rc;

    if (OPAL_SUCCESS != ob1x_cuda_need()) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    /* the mapping belongs to the current context: it must have one */
    pthread_mutex_lock(&copier.lock);
    ctx_rc = ensure_context();
    pthread_mutex_unlock(&copier.lock);
    if (OPAL_SUCCESS != ctx_rc) {
        return ctx_rc;
    }
    memcpy(&h, handle->bytes, sizeof(h));
    rc = ob1x_cuda_drv.cuIpcOpenMemHandle(&mapped, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    if (CUDA_SUCCESS != rc) {
        return ob1x_cuda_failed("cuIpcOpenMemHandle", rc);
    }
    *base = (void *) (uintptr_t) mapped;
    return OPAL_SUCCESS;
}

int ob1x_cuda_ipc_close(void *base)
{
    CUresult rc;

    if (!ob1x_cuda_loaded()) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    rc = ob1x_cuda_drv.cuIpcCloseMemHandle((CUdeviceptr) (uintptr_t) base);
    return CUDA_SUCCESS == rc ? OPAL_SUCCESS : ob1x_cuda_failed("cuIpcCloseMemHandle", rc);
}

/* --- copies ---------------------------------------------------------------- */

/* A current context in this thread (driver calls act on it): the caller's, else the last device
 * buffer's, else device 0's primary context. copier.lock held. */
static int ensure_context(void)
{
    CUcontext ctx = NULL;
    CUdevice dev;
    CUresult rc;

    rc = ob1x_cuda_drv.cuCtxGetCurrent(&ctx);
    if (CUDA_SUCCESS != rc) {
        return ob1x_cuda_failed("cuCtxGetCurrent", rc);
    }
    if (NULL != ctx) {
        return OPAL_SUCCESS;
    }
    ctx = __atomic_load_n(&copier.noted_ctx, __ATOMIC_RELAXED);
    if (NULL == ctx) {
        rc = ob1x_cuda_drv.cuDeviceGet(&dev, 0);
        if (CUDA_SUCCESS != rc) {
            return ob1x_cuda_failed("cuDeviceGet", rc);
        }
        rc = ob1x_cuda_drv.cuDevicePrimaryCtxRetain(&ctx, dev);
        if (CUDA_SUCCESS != rc) {
            return ob1x_cuda_failed("cuDevicePrimaryCtxRetain", rc);
        }
    }
    rc = ob1x_cuda_drv.cuCtxSetCurrent(ctx);
    return CUDA_SUCCESS == rc ? OPAL_SUCCESS : ob1x_cuda_failed("cuCtxSetCurrent", rc);
}

/* The stream, created on first use. copier.lock held. A blocking stream
 * (flags 0): its copies start only after the work the application queued
 * on the legacy default stream, such as the DMA of a cuMemcpyHtoD from
 * pageable memory, which returns before its bytes have landed. A
 * non-blocking stream read device buffers too early (seen on an H100:
 * small messages sent with their old bytes). */
static int ensure_stream(void)
{
    CUresult rc;

    if (NULL != copier.stream) {
        return OPAL_SUCCESS;
    }
    if (OPAL_SUCCESS != ensure_context()) {
        return OPAL_ERROR;
    }
    rc = ob1x_cuda_drv.cuStreamCreate(&copier.stream, 0);
    return CUDA_SUCCESS == rc ? OPAL_SUCCESS : ob1x_cuda_failed("cuStreamCreate", rc);
}

/* A free event's index, creating events as needed. copier.lock held. */
static int take_event(void)
{
    int i, n;
    CUresult rc;

    for (i = 0; i < copier.n_events && copier.busy[i]; i++) {
    }
    if (i == copier.n_events) {
        n = copier.n_events > 0 ? 2 * copier.n_events : 16;
        CUevent *events = realloc(copier.events, (size_t) n * sizeof(*events));
        bool *busy = NULL != events ? realloc(copier.busy, (size_t) n * sizeof(*busy)) : NULL;
        if (NULL != events) {
            copier.events = events;
        }
        if (NULL == busy) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        copier.busy = busy;
        memset(events + copier.n_events, 0, (size_t) (n - copier.n_events) * sizeof(*events));
        memset(busy + copier.n_events, 0, (size_t) (n - copier.n_events) * sizeof(*busy));
        copier.n_events = n;
    }
    if (NULL == copier.events[i]) {
        /* no timing: the cheapest event to record and query */
        rc = ob1x_cuda_drv.cuEventCreate(&copier.events[i], CU_EVENT_DISABLE_TIMING);
        if (CUDA_SUCCESS != rc) {
            copier.events[i] = NULL;
            return ob1x_cuda_failed("cuEventCreate", rc);
        }
    }
    copier.busy[i] = true;
    return i;
}

/* cuMemcpyAsync + cuEventRecord. copier.lock held. */
static int start_locked(void *dst, const void *src, size_t len, int *ticket)
{
    int i;
    CUresult rc;

    if (OPAL_SUCCESS != ensure_stream() || OPAL_SUCCESS != ensure_context()) {
        return OPAL_ERROR;
    }
    i = take_event();
    if (i < 0) {
        return i;
    }
    rc = ob1x_cuda_drv.cuMemcpyAsync((CUdeviceptr) (uintptr_t) dst, (CUdeviceptr) (uintptr_t) src,
                                     len, copier.stream);
    if (CUDA_SUCCESS == rc) {
        rc = ob1x_cuda_drv.cuEventRecord(copier.events[i], copier.stream);
        if (CUDA_SUCCESS != rc) {
            copier.busy[i] = false;
            return ob1x_cuda_failed("cuEventRecord", rc);
        }
        *ticket = i;
        return OPAL_SUCCESS;
    }
    copier.busy[i] = false;
    return ob1x_cuda_failed("cuMemcpyAsync", rc);
}

int ob1x_cuda_copy_start(void *dst, const void *src, size_t len, int *ticket)
{
    int rc;

    if (OPAL_SUCCESS != ob1x_cuda_need()) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    pthread_mutex_lock(&copier.lock);
    rc = start_locked(dst, src, len, ticket);
    pthread_mutex_unlock(&copier.lock);
    return rc;
}

int ob1x_cuda_sync_legacy(void)
{
    CUresult rc;

    if (OPAL_SUCCESS != ob1x_cuda_need()) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    pthread_mutex_lock(&copier.lock);
    rc = OPAL_SUCCESS == ensure_context() ? ob1x_cuda_drv.cuStreamSynchronize(CU_STREAM_LEGACY)
                                          : CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_unlock(&copier.lock);
    return CUDA_SUCCESS == rc ? OPAL_SUCCESS : ob1x_cuda_failed("cuStreamSynchronize", rc);
}

int ob1x_cuda_host_alloc(size_t len, void **p)
{
    CUresult rc;

    *p = NULL;
    if (OPAL_SUCCESS != ob1x_cuda_need()) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    pthread_mutex_lock(&copier.lock);
    rc = OPAL_SUCCESS == ensure_context()
             ? ob1x_cuda_drv.cuMemHostAlloc(p, len, CU_MEMHOSTALLOC_PORTABLE)
             : CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_unlock(&copier.lock);
    if (CUDA_SUCCESS != rc) {
        *p = NULL;
        return OPAL_ERR_OUT_OF_RESOURCE; /* not worth a message: the caller has malloc */
    }
    return OPAL_SUCCESS;
}

void ob1x_cuda_host_free(void *p)
{
    if (NULL != p && OPAL_SUCCESS == ob1x_cuda_need()) {
        (void) ob1x_cuda_drv.cuMemFreeHost(p);
    }
}

int ob1x_cuda_copy_test(int ticket)
{
    CUevent ev;
    CUresult rc;

    pthread_mutex_lock(&copier.lock);
    ev = ticket >= 0 && ticket < copier.n_events && copier.busy[ticket] ? copier.events[ticket]
                                                                        : NULL;
    pthread_mutex_unlock(&copier.lock);
    if (NULL == ev) {
        return OPAL_ERR_BAD_PARAM;
    }
    rc = ob1x_cuda_drv.cuEventQuery(ev);
    if (CUDA_ERROR_NOT_READY == rc) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    pthread_mutex_lock(&copier.lock);
    copier.busy[ticket] = false;
    pthread_mutex_unlock(&copier.lock);
    return CUDA_SUCCESS == rc ? OPAL_SUCCESS : ob1x_cuda_failed("cuEventQuery", rc);
}

/* --- devices --------------------------------------------------------------- */

int ob1x_cuda_device_count(int *count)
{
    CUresult rc;

    if (OPAL_SUCCESS != ob1x_cuda_need()) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    rc = ob1x_cuda_drv.cuDeviceGetCount(count);
    return CUDA_SUCCESS == rc ? OPAL_SUCCESS : ob1x_cuda_failed("cuDeviceGetCount", rc);
}

int ob1x_cuda_device_uuid(int ordinal, unsigned char uuid[16])
{
    CUdevice dev;
    CUuuid u;
    CUresult rc;

    if (OPAL_SUCCESS != ob1x_cuda_need()) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    rc = ob1x_cuda_drv.cuDeviceGet(&dev, ordinal);
    if (CUDA_SUCCESS != rc) {
        return ob1x_cuda_failed("cuDeviceGet", rc);
    }
    rc = ob1x_cuda_drv.cuDeviceGetUuid(&u, dev);
    if (CUDA_SUCCESS != rc) {
        return ob1x_cuda_failed("cuDeviceGetUuid", rc);
    }
    _Static_assert(sizeof(u.bytes) == 16, "CUuuid is 16 bytes");
    memcpy(uuid, u.bytes, 16);
    return OPAL_SUCCESS;
}

int ob1x_cuda_can_access_peer(int ordinal, int peer_ordinal, bool *can)
{
    CUdevice dev, peer;
    int yes = 0;
    CUresult rc;

    if (OPAL_SUCCESS != ob1x_cuda_need()) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    rc = ob1x_cuda_drv.cuDeviceGet(&dev, ordinal);
    if (CUDA_SUCCESS == rc) {
        rc = ob1x_cuda_drv.cuDeviceGet(&peer, peer_ordinal);
    }
    if (CUDA_SUCCESS != rc) {
        return ob1x_cuda_failed("cuDeviceGet", rc);
    }
    rc = ob1x_cuda_drv.cuDeviceCanAccessPeer(&yes, dev, peer);
    if (CUDA_SUCCESS != rc) {
        return ob1x_cuda_failed("cuDeviceCanAccessPeer", rc);
    }
    *can = 0 != yes;
    return OPAL_SUCCESS;
}

/* --- end ------------------------------------------------------------------- */

void ob1x_cuda_finalize(void)
{
    if (!ob1x_cuda_loaded()) {
        return;
    }
    pthread_mutex_lock(&copier.lock);
    for (int i = 0; i < copier.n_events; i++) {
        if (NULL != copier.events[i]) {
            (void) ob1x_cuda_drv.cuEventDestroy(copier.events[i]);
        }
    }
    free(copier.events);
    free(copier.busy);
    copier.events = NULL;
    copier.busy = NULL;
    copier.n_events = 0;
    if (NULL != copier.stream) {
        (void) ob1x_cuda_drv.cuStreamDestroy(copier.stream);
        copier.stream = NULL;
    }
    pthread_mutex_unlock(&copier.lock);
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * cuemu.c - a CUDA driver emulation for the tests, built as libcuda.so.1
 * (test/cuda/emu.sh; installed nowhere). It exports exactly the driver
 * entry points libmca_common_ob1x_cuda uses, under the names cuda.h maps
 * them to (cuIpcOpenMemHandle_v2, ...: the definitions below are written
 * with cuda.h's names, which its macros turn into the exported ones), and
 * the cuemu_* helpers of cuemu.h. Environment and memory: see cuemu.h.
 * Built with -DCUEMU_STOCK_CALLS (contrib/check-cuda-build only), it also
 * exports the further entry points stock Open MPI's CUDA library loads.
 */
#define _GNU_SOURCE
#include <cuda.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common_ob1x_cuda_calls.h"
#include "cuemu.h"

#define EMU_EXPORT __attribute__((visibility("default")))
#define EMU_STR2(x) #x
#define EMU_STR(x) EMU_STR2(x)

/* The entry points the library uses, and only those. */
#define EMU_CALLS(X) OB1X_CUDA_CALLS(X)

enum {
#define EMU_ENUM(f) CALL_##f,
    EMU_CALLS(EMU_ENUM)
#undef EMU_ENUM
        N_CALLS
};
/* #f: the name before cuda.h's mapping; EMU_STR(f): the exported one */
static const char *const call_names[N_CALLS] = {
#define EMU_NAME(f) #f,
    EMU_CALLS(EMU_NAME)
#undef EMU_NAME
};
static const char *const call_symbols[N_CALLS] = {
#define EMU_SYM(f) EMU_STR(f),
    EMU_CALLS(EMU_SYM)
#undef EMU_SYM
};

#define MAX_DEVICES 8
#define MAX_BLOCKS 4096
#define MAX_IMPORTS 1024
#define HANDLE_MAGIC 0x6375656dU /* "cuem" */

struct CUctx_st {
    int dev;
};
/* A copy queued on a stream (OB1X_CUEMU_ASYNC=1). */
typedef struct {
    void *dst;
    const void *src;
    size_t len;
} queued_copy_t;

struct CUstream_st {
    bool non_blocking; /* CU_STREAM_NON_BLOCKING: no order with the legacy stream */
    /* OB1X_CUEMU_ASYNC: copies numbered from 0 in order; those not run yet
     * are ran..queued - 1, at q[number - base] */
    queued_copy_t *q;
    long ran, queued, base;
    int cap;
};
struct CUevent_st {
    int polls_left; /* NOT_READY answers before SUCCESS */
    CUstream stream; /* OB1X_CUEMU_ASYNC: the copies before it: numbers < upto */
    long upto;
};

typedef struct {
    int phys; /* "physical" device (OB1X_CUEMU_VISIBLE) */
    int fd;   /* the device memory file, -1 until first allocation */
    char *base;
    char path[128];
    struct CUctx_st ctx;
} emu_device_t;

typedef struct {
    bool live;
    int dev;
    size_t off, size;
    unsigned long long id;
} emu_block_t;

typedef struct {
    bool live;
    int dev; /* the importer's device */
    char *addr;
    size_t size;
    unsigned long long id;
} emu_import_t;

/* What travels in a CUipcMemHandle. */
typedef struct {
    uint32_t magic;
    int32_t pid, dev, phys;
    uint64_t off, size;
} emu_handle_t;
_Static_assert(sizeof(emu_handle_t) <= sizeof(CUipcMemHandle), "handle too large");

static struct {
    pthread_mutex_t lock;
    bool set_up, initialised, no_peer, protect, lazy, async;
    int n_devices, event_polls;
    size_t arena;
    const char *count_path;
    bool fail[N_CALLS];
    unsigned long count[N_CALLS];
    unsigned long long next_id;
    emu_device_t dev[MAX_DEVICES];
    emu_block_t block[MAX_BLOCKS];
    emu_import_t import[MAX_IMPORTS];
} emu = {.lock = PTHREAD_MUTEX_INITIALIZER, .next_id = 1};

static __thread CUcontext current_ctx;

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return NULL != v && '\0' != *v ? strtol(v, NULL, 10) : dflt;
}

static void read_fail_list(void)
{
    const char *list = getenv("OB1X_CUEMU_FAIL");
    char word[64];

    while (NULL != list && '\0' != *list) {
        size_t n = strcspn(list, ",");
        snprintf(word, sizeof(word), "%.*s", (int) n, list);
        for (int i = 0; i < N_CALLS; i++) {
            emu.fail[i] |= 0 == strcmp(word, call_names[i]) || 0 == strcmp(word, call_symbols[i]);
        }
        list += n + (',' == list[n]);
    }
}

static void read_visible(void)
{
    const char *v = getenv("OB1X_CUEMU_VISIBLE");

    for (int i = 0; i < MAX_DEVICES; i++) {
        emu.dev[i].phys = i;
        emu.dev[i].fd = -1;
        emu.dev[i].ctx.dev = i;
    }
    for (int i = 0; NULL != v && '\0' != *v && i < MAX_DEVICES; i++) {
        emu.dev[i].phys = (int) strtol(v, NULL, 10);
        v += strcspn(v, ",");
        v += ',' == *v;
    }
}

/* The environment, once (emu.lock held). */
static void set_up(void)
{
    if (emu.set_up) {
        return;
    }
    emu.set_up = true;
    emu.n_devices = (int) env_long("OB1X_CUEMU_DEVICES", 1);
    emu.n_devices = emu.n_devices > MAX_DEVICES ? MAX_DEVICES : emu.n_devices;
    emu.no_peer = 0 != env_long("OB1X_CUEMU_NO_PEER", 0);
    emu.protect = 0 != env_long("OB1X_CUEMU_PROTECT", 0);
    emu.lazy = 0 != env_long("OB1X_CUEMU_LAZY", 0);
    emu.async = 0 != env_long("OB1X_CUEMU_ASYNC", 0);
    emu.event_polls = (int) env_long("OB1X_CUEMU_EVENT_POLLS", 2);
    emu.arena = (size_t) env_long("OB1X_CUEMU_ARENA_MB", 64) << 20;
    emu.count_path = getenv("OB1X_CUEMU_COUNT");
    read_fail_list();
    read_visible();
}

/* Every entry point starts here: counts the call, applies OB1X_CUEMU_FAIL
 * and, but for cuInit and the error strings, wants cuInit done first. */
static CUresult enter(int call)
{
    CUresult rc = CUDA_SUCCESS;

    pthread_mutex_lock(&emu.lock);
    set_up();
    emu.count[call]++;
    if (emu.fail[call]) {
        rc = CUDA_ERROR_UNKNOWN;
    } else if (!emu.initialised && CALL_cuInit != call && CALL_cuGetErrorName != call &&
               CALL_cuGetErrorString != call) {
        rc = CUDA_ERROR_NOT_INITIALIZED;
    }
    pthread_mutex_unlock(&emu.lock);
    return rc;
}

#define ENTER(f)                                                                                   \
    do {                                                                                           \
        CUresult enter_rc_ = enter(CALL_##f);                                                      \
        if (CUDA_SUCCESS != enter_rc_) {                                                           \
            return enter_rc_;                                                                      \
        }                                                                                          \
    } while (0)

/* --- memory (emu.lock held) ------------------------------------------------ */

/* OB1X_CUEMU_PROTECT=1: device memory (our arenas and the peers' views
 * mapped by cuIpcOpenMemHandle) is PROT_NONE but inside the emulation's
 * own copies, so host code that touches it faults as on a GPU. */
static int dev_prot(void)
{
    return emu.protect ? PROT_NONE : PROT_READ | PROT_WRITE;
}

/* Sets prot on the pages of [p, p + len) that are device memory. */
static void protect_span(const void *p, size_t len, int prot)
{
    size_t page = (size_t) sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t) p, hi = lo + len;

    for (int i = 0; i < MAX_DEVICES + MAX_IMPORTS; i++) {
        uintptr_t a, b;
        if (i < MAX_DEVICES) {
            a = (uintptr_t) emu.dev[i].base;
            b = NULL != emu.dev[i].base ? a + emu.arena : 0;
        } else {
            emu_import_t *m = &emu.import[i - MAX_DEVICES];
            a = (uintptr_t) m->addr;
            b = m->live ? a + m->size : 0;
        }
        if (lo < b && a < hi) {
            uintptr_t s = (lo > a ? lo : a) / page * page;
            uintptr_t e = hi < b ? hi : b;
            (void) mprotect((void *) s, e - s, prot);
        }
    }
}

/* The one place device memory is read or written (emu.lock held). */
static void dev_copy(void *dst, const void *src, size_t len)
{
    if (emu.protect) {
        protect_span(dst, len, PROT_READ | PROT_WRITE);
        protect_span(src, len, PROT_READ | PROT_WRITE);
    }
    memmove(dst, src, len);
    if (emu.protect) {
        protect_span(dst, len, PROT_NONE);
        protect_span(src, len, PROT_NONE);
    }
}

/* OB1X_CUEMU_LAZY=1: a host-to-device cuemu_memcpy (the program's
 * cuMemcpyHtoD from pageable memory) returns before its data has landed,
 * as a GPU's may: the bytes reach device memory only at the next operation
 * ordered after the legacy default stream (a synchronous copy, a copy on a
 * blocking stream, cuStreamSynchronize). A copy on a non-blocking stream,
 * or a peer reading by IPC, sees the old bytes until then. */
#define MAX_PENDING 256
static struct {
    void *dst;
    void *data;
    size_t len;
} pending[MAX_PENDING];
static int n_pending;

/* emu.lock held */
static void flush_pending(void)
{
    for (int i = 0; i < n_pending; i++) {
        dev_copy(pending[i].dst, pending[i].data, pending[i].len);
        free(pending[i].data);
    }
    n_pending = 0;
}

static emu_block_t *block_of(uintptr_t ptr);

/* emu.lock held; true when the copy was deferred */
static bool defer_fill(void *dst, const void *src, size_t len)
{
    void *data;

    if (!emu.lazy || 0 == len || NULL == block_of((uintptr_t) dst) ||
        NULL != block_of((uintptr_t) src)) {
        return false;
    }
    if (MAX_PENDING == n_pending) {
        flush_pending();
    }
    data = malloc(len);
    if (NULL == data) {
        return false;
    }
    memcpy(data, src, len);
    pending[n_pending].dst = dst;
    pending[n_pending].data = data;
    pending[n_pending].len = len;
    n_pending++;
    return true;
}

/* /dev/shm/ob1x-cuemu.[<OB1X_CUEMU_TAG>.]<pid>.<device>: the tag (one per
 * test, shared by the job's processes through the environment) lets a test
 * tell its own files from those of jobs running beside it. */
static void arena_path(char *buf, size_t len, int pid, int d)
{
    const char *tag = getenv("OB1X_CUEMU_TAG");

    if (NULL != tag && '\0' != tag[0]) {
        snprintf(buf, len, "/dev/shm/ob1x-cuemu.%s.%d.%d", tag, pid, d);
    } else {
        snprintf(buf, len, "/dev/shm/ob1x-cuemu.%d.%d", pid, d);
    }
}

static int open_arena(int d)
{
    emu_device_t *dev = &emu.dev[d];
    void *p;

    if (dev->fd >= 0) {
        return 0;
    }
    arena_path(dev->path, sizeof(dev->path), (int) getpid(), d);
    dev->fd = open(dev->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (dev->fd < 0) {
        return -1;
    }
    p = MAP_FAILED;
    if (0 == ftruncate(dev->fd, (off_t) emu.arena)) {
        p = mmap(NULL, emu.arena, dev_prot(), MAP_SHARED, dev->fd, 0);
    }
    if (MAP_FAILED == p) {
        close(dev->fd);
        unlink(dev->path);
        dev->fd = -1;
        return -1;
    }
    dev->base = p;
    return 0;
}

static emu_block_t *overlapping(int d, size_t off, size_t size)
{
    for (int i = 0; i < MAX_BLOCKS; i++) {
        emu_block_t *b = &emu.block[i];
        if (b->live && b->dev == d && off < b->off + b->size && b->off < off + size) {
            return b;
        }
    }
    return NULL;
}

static emu_block_t *free_slot(void)
{
    for (int i = 0; i < MAX_BLOCKS; i++) {
        if (!emu.block[i].live) {
            return &emu.block[i];
        }
    }
    return NULL;
}

static size_t page_round(size_t n)
{
    size_t page = (size_t) sysconf(_SC_PAGESIZE);
    return (n + page - 1) / page * page;
}

/* The block holding ptr, in this process's device memory. */
static emu_block_t *block_of(uintptr_t ptr)
{
    for (int i = 0; i < MAX_BLOCKS; i++) {
        emu_block_t *b = &emu.block[i];
        uintptr_t lo = b->live ? (uintptr_t) emu.dev[b->dev].base + b->off : 0;
        if (b->live && ptr >= lo && ptr < lo + b->size) {
            return b;
        }
    }
    return NULL;
}

static emu_import_t *import_of(uintptr_t ptr)
{
    for (int i = 0; i < MAX_IMPORTS; i++) {
        emu_import_t *m = &emu.import[i];
        if (m->live && ptr >= (uintptr_t) m->addr && ptr < (uintptr_t) m->addr + m->size) {
            return m;
        }
    }
    return NULL;
}

/* --- the cudart-like helpers (not counted) --------------------------------- */

EMU_EXPORT void *cuemu_malloc(size_t size, int d)
{
    emu_block_t *b, *slot;
    size_t off = 0;
    void *p = NULL;

    size = page_round(size > 0 ? size : 1);
    pthread_mutex_lock(&emu.lock);
    set_up();
    if (d >= 0 && d < emu.n_devices && 0 == open_arena(d) && NULL != (slot = free_slot())) {
        while (NULL != (b = overlapping(d, off, size))) {
            off = b->off + b->size; /* first fit */
        }
        if (off + size <= emu.arena) {
            *slot = (emu_block_t){
                .live = true, .dev = d, .off = off, .size = size, .id = emu.next_id++};
            p = emu.dev[d].base + off;
        }
    }
    pthread_mutex_unlock(&emu.lock);
    return p;
}

EMU_EXPORT void cuemu_free(void *ptr)
{
    emu_block_t *b;

    pthread_mutex_lock(&emu.lock);
    b = block_of((uintptr_t) ptr);
    if (NULL != b && (uintptr_t) ptr == (uintptr_t) emu.dev[b->dev].base + b->off) {
        b->live = false;
    }
    pthread_mutex_unlock(&emu.lock);
}

EMU_EXPORT int cuemu_memcpy(void *dst, const void *src, size_t len)
{
    pthread_mutex_lock(&emu.lock);
    set_up();
    if (!defer_fill(dst, src, len)) {
        flush_pending(); /* a synchronous copy follows the legacy stream */
        dev_copy(dst, src, len); /* all emulated memory is mapped here */
    }
    pthread_mutex_unlock(&emu.lock);
    return 0;
}

EMU_EXPORT unsigned long cuemu_count(const char *name)
{
    unsigned long n = 0;

    pthread_mutex_lock(&emu.lock);
    for (int i = 0; i < N_CALLS; i++) {
        if (0 == strcmp(name, call_names[i]) || 0 == strcmp(name, call_symbols[i])) {
            n = emu.count[i];
        }
    }
    pthread_mutex_unlock(&emu.lock);
    return n;
}

/* Normal exit: counters out, device memory files removed. */
__attribute__((destructor)) static void emu_exit(void)
{
    char path[4096];
    FILE *f;

    for (int d = 0; d < MAX_DEVICES; d++) {
        if (emu.dev[d].fd >= 0) {
            unlink(emu.dev[d].path);
        }
    }
    if (NULL == emu.count_path) {
        return;
    }
    snprintf(path, sizeof(path), "%s.%d", emu.count_path, (int) getpid());
    f = fopen(path, "w");
    for (int i = 0; NULL != f && i < N_CALLS; i++) {
        fprintf(f, "%s %lu\n", call_names[i], emu.count[i]);
    }
    if (NULL != f) {
        fclose(f);
    }
}

/* --- entry points: initialisation, errors, devices, contexts --------------- */

EMU_EXPORT CUresult cuInit(unsigned int flags)
{
    ENTER(cuInit);
    if (0 != flags) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&emu.lock);
    emu.initialised = emu.n_devices > 0;
    pthread_mutex_unlock(&emu.lock);
    return emu.initialised ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

EMU_EXPORT CUresult cuGetErrorName(CUresult error, const char **str)
{
    ENTER(cuGetErrorName);
    *str = "CUDA_ERROR_EMULATED";
    (void) error;
    return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuGetErrorString(CUresult error, const char **str)
{
    ENTER(cuGetErrorString);
    switch (error) {
        case CUDA_ERROR_UNKNOWN:
            *str = "unknown error (injected by OB1X_CUEMU_FAIL)";
            break;
        case CUDA_ERROR_NO_DEVICE:
            *str = "no CUDA-capable device is detected";
            break;
        case CUDA_ERROR_PEER_ACCESS_UNSUPPORTED:
            *str = "peer access is not supported between these two devices";
            break;
        default:
            *str = "emulated driver error";
    }
    return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuDeviceGetCount(int *count)
{
    ENTER(cuDeviceGetCount);
    *count = emu.n_devices;
    return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    ENTER(cuDeviceGet);
    if (ordinal < 0 || ordinal >= emu.n_devices) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    *device = ordinal;
    return CUDA_SUCCESS;
}

/* Left out with -DCUEMU_OLD_DRIVER: a driver older than CUDA 11.4 has no
 * cuDeviceGetUuid_v2. */
#ifndef CUEMU_OLD_DRIVER
EMU_EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    ENTER(cuDeviceGetUuid);
    if (dev < 0 || dev >= emu.n_devices) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    memset(uuid->bytes, 0, sizeof(uuid->bytes));
    memcpy(uuid->bytes, "ob1x-cuemu-gpu", 14); /* then the physical device */
    uuid->bytes[15] = (char) emu.dev[dev].phys;
    return CUDA_SUCCESS;
}
#endif

EMU_EXPORT CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer)
{
    ENTER(cuDeviceCanAccessPeer);
    if (dev < 0 || dev >= emu.n_devices || peer < 0 || peer >= emu.n_devices) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    *can = !emu.no_peer && emu.dev[dev].phys != emu.dev[peer].phys;
    return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    ENTER(cuDevicePrimaryCtxRetain);
    if (dev < 0 || dev >= emu.n_devices) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    *ctx = &emu.dev[dev].ctx;
    return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    ENTER(cuCtxGetCurrent);
    *ctx = current_ctx;
    return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    ENTER(cuCtxSetCurrent);
    current_ctx = ctx;
    return CUDA_SUCCESS;
}

/* --- entry points: pointers and IPC ---------------------------------------- */

/* What the driver says of ptr (emu.lock held); host memory: all zero. */
static void describe(uintptr_t ptr, unsigned int *type, int *dev, unsigned long long *id,
                     uintptr_t *base, size_t *size)
{
    emu_block_t *b = block_of(ptr);
    emu_import_t *m = NULL == b ? import_of(ptr) : NULL;

    *type = 0;
    *dev = 0;
    *id = 0;
    *base = 0;
    *size = 0;
    if (NULL != b) {
        *type = CU_MEMORYTYPE_DEVICE;
        *dev = b->dev;
        *id = b->id;
        *base = (uintptr_t) emu.dev[b->dev].base + b->off;
        *size = b->size;
    } else if (NULL != m) {
        *type = CU_MEMORYTYPE_DEVICE;
        *dev = m->dev;
        *id = m->id;
        *base = (uintptr_t) m->addr;
        *size = m->size;
    }
}

static CUresult put_attribute(CUpointer_attribute a, void *data, unsigned int type, int dev,
                              unsigned long long id, uintptr_t base, size_t size)
{
    switch (a) {
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
            *(unsigned int *) data = type;
            break;
        case CU_POINTER_ATTRIBUTE_IS_MANAGED:
            *(unsigned int *) data = 0;
            break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
            *(int *) data = type ? dev : -2; /* the driver's value for host memory */
            break;
        case CU_POINTER_ATTRIBUTE_BUFFER_ID:
            *(unsigned long long *) data = id;
            break;
        case CU_POINTER_ATTRIBUTE_CONTEXT:
            *(CUcontext *) data = type ? &emu.dev[dev].ctx : NULL;
            break;
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
            *(CUdeviceptr *) data = base;
            break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
            *(size_t *) data = size;
            break;
        default:
            return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attrs, void **data,
                                           CUdeviceptr ptr)
{
    unsigned int type;
    int dev;
    unsigned long long id;
    uintptr_t base;
    size_t size;
    CUresult rc = CUDA_SUCCESS;

    ENTER(cuPointerGetAttributes);
    pthread_mutex_lock(&emu.lock);
    describe((uintptr_t) ptr, &type, &dev, &id, &base, &size);
    for (unsigned int i = 0; i < n && CUDA_SUCCESS == rc; i++) {
        rc = put_attribute(attrs[i], data[i], type, dev, id, base, size);
    }
    pthread_mutex_unlock(&emu.lock);
    return rc;
}

EMU_EXPORT CUresult cuMemGetAddressRange(CUdeviceptr *pbase, size_t *psize, CUdeviceptr ptr)
{
    unsigned int type;
    int dev;
    unsigned long long id;
    uintptr_t base;
    size_t size;

    ENTER(cuMemGetAddressRange);
    pthread_mutex_lock(&emu.lock);
    describe((uintptr_t) ptr, &type, &dev, &id, &base, &size);
    pthread_mutex_unlock(&emu.lock);
    if (0 == type) {
        return CUDA_ERROR_NOT_FOUND;
    }
    *pbase = base;
    *psize = size;
    return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle *handle, CUdeviceptr ptr)
{
    emu_handle_t h;
    emu_block_t *b;

    ENTER(cuIpcGetMemHandle);
    memset(handle, 0, sizeof(*handle));
    pthread_mutex_lock(&emu.lock);
    b = block_of((uintptr_t) ptr);
    if (NULL != b) {
        h = (emu_handle_t){.magic = HANDLE_MAGIC,
                           .pid = (int32_t) getpid(),
                           .dev = b->dev,
                           .phys = emu.dev[b->dev].phys,
                           .off = b->off,
                           .size = b->size};
        memcpy(handle->reserved, &h, sizeof(h));
    }
    pthread_mutex_unlock(&emu.lock);
    return NULL != b ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Maps the exporter's device memory file (emu.lock held). */
static CUresult map_import(const emu_handle_t *h, int dev, CUdeviceptr *out)
{
    char path[128];
    emu_import_t *m = NULL;
    void *p;
    int fd;

    for (int i = 0; i < MAX_IMPORTS && NULL == m; i++) {
        m = emu.import[i].live ? NULL : &emu.import[i];
    }
    arena_path(path, sizeof(path), (int) h->pid, (int) h->dev);
    fd = NULL != m ? open(path, O_RDWR | O_CLOEXEC) : -1;
    if (fd < 0) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    p = mmap(NULL, h->size, dev_prot(), MAP_SHARED, fd, (off_t) h->off);
    close(fd);
    if (MAP_FAILED == p) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *m = (emu_import_t){.live = true, .dev = dev, .addr = p, .size = h->size, .id = emu.next_id++};
    *out = (CUdeviceptr) (uintptr_t) p;
    return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle,
                                       unsigned int flags)
{
    emu_handle_t h;
    CUresult rc;
    int dev;

    ENTER(cuIpcOpenMemHandle);
    (void) flags;
    memcpy(&h, handle.reserved, sizeof(h));
    if (HANDLE_MAGIC != h.magic) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (NULL == current_ctx || h.pid == (int32_t) getpid()) {
        /* as the driver: no context, or a handle of this very process */
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    dev = current_ctx->dev;
    if (emu.no_peer && emu.dev[dev].phys != h.phys) {
        return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    }
    pthread_mutex_lock(&emu.lock);
    rc = map_import(&h, dev, pdptr);
    pthread_mutex_unlock(&emu.lock);
    return rc;
}

EMU_EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
    emu_import_t *m;

    ENTER(cuIpcCloseMemHandle);
    pthread_mutex_lock(&emu.lock);
    m = import_of((uintptr_t) dptr);
    if (NULL != m && m->addr == (char *) (uintptr_t) dptr) {
        munmap(m->addr, m->size);
        m->live = false;
    } else {
        m = NULL;
    }
    pthread_mutex_unlock(&emu.lock);
    return NULL != m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* --- entry points: streams, events, copies --------------------------------- */

EMU_EXPORT CUresult cuStreamCreate(CUstream *stream, unsigned int flags)
{
    ENTER(cuStreamCreate);
    if (NULL == current_ctx) {
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    *stream = calloc(1, sizeof(**stream));
    if (NULL == *stream) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    (*stream)->non_blocking = 0 != (flags & CU_STREAM_NON_BLOCKING);
    return CUDA_SUCCESS;
}

/* Waits for the stream: here, the pending fills land (every stream
 * handle, CU_STREAM_LEGACY included, is ordered after them). */
/* OB1X_CUEMU_ASYNC: run the stream's queued copies up to upto. emu.lock
 * held. */
static void run_queue(CUstream stream, long upto)
{
    if (NULL == stream || CU_STREAM_LEGACY == stream) {
        return;
    }
    for (; stream->ran < upto && stream->ran < stream->queued; stream->ran++) {
        const queued_copy_t *c = &stream->q[stream->ran - stream->base];
        dev_copy(c->dst, c->src, c->len);
    }
}

EMU_EXPORT CUresult cuStreamSynchronize(CUstream stream)
{
    ENTER(cuStreamSynchronize);
    pthread_mutex_lock(&emu.lock);
    flush_pending();
    if (NULL != stream && CU_STREAM_LEGACY != stream) {
        run_queue(stream, stream->queued);
    }
    pthread_mutex_unlock(&emu.lock);
    return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuStreamDestroy(CUstream stream)
{
    ENTER(cuStreamDestroy);
    pthread_mutex_lock(&emu.lock);
    run_queue(stream, stream->queued);
    pthread_mutex_unlock(&emu.lock);
    free(stream->q);
    free(stream);
    return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuEventCreate(CUevent *event, unsigned int flags)
{
    ENTER(cuEventCreate);
    (void) flags;
    if (NULL == current_ctx) {
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    *event = calloc(1, sizeof(**event));
    return NULL != *event ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EMU_EXPORT CUresult cuEventRecord(CUevent event, CUstream stream)
{
    ENTER(cuEventRecord);
    pthread_mutex_lock(&emu.lock);
    event->stream = NULL != stream && CU_STREAM_LEGACY != stream ? stream : NULL;
    event->upto = NULL != event->stream ? stream->queued : 0;
    pthread_mutex_unlock(&emu.lock);
    __atomic_store_n(&event->polls_left, emu.event_polls, __ATOMIC_RELAXED);
    return CUDA_SUCCESS;
}

/* With OB1X_CUEMU_ASYNC the copies before the event run only when it is
 * seen complete: a reader that does not wait for it sees old bytes. */
EMU_EXPORT CUresult cuEventQuery(CUevent event)
{
    ENTER(cuEventQuery);
    if (__atomic_load_n(&event->polls_left, __ATOMIC_RELAXED) > 0) {
        __atomic_sub_fetch(&event->polls_left, 1, __ATOMIC_RELAXED);
        return CUDA_ERROR_NOT_READY;
    }
    pthread_mutex_lock(&emu.lock);
    run_queue(event->stream, event->upto);
    pthread_mutex_unlock(&emu.lock);
    return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuEventDestroy(CUevent event)
{
    ENTER(cuEventDestroy);
    free(event);
    return CUDA_SUCCESS;
}

/* The copy is done at once; the event that follows it still answers
 * NOT_READY a few times, so that callers must poll as with a GPU. With
 * OB1X_CUEMU_ASYNC=1 a copy on a created stream is only queued: it runs,
 * in order, when an event recorded after it is seen complete or the
 * stream is synchronised. */
EMU_EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t len, CUstream stream)
{
    ENTER(cuMemcpyAsync);
    if (NULL == current_ctx) {
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    pthread_mutex_lock(&emu.lock);
    if (NULL == stream || CU_STREAM_LEGACY == stream || !stream->non_blocking) {
        flush_pending(); /* ordered after the legacy stream's work */
    }
    if (emu.async && NULL != stream && CU_STREAM_LEGACY != stream) {
        if (stream->ran == stream->queued) {
            stream->base = stream->queued; /* all run: the array starts over */
        }
        if (stream->queued - stream->base == stream->cap) {
            int cap = stream->cap > 0 ? 2 * stream->cap : 64;
            queued_copy_t *q = realloc(stream->q, (size_t) cap * sizeof(*q));
            if (NULL == q) {
                pthread_mutex_unlock(&emu.lock);
                return CUDA_ERROR_OUT_OF_MEMORY;
            }
            stream->q = q;
            stream->cap = cap;
        }
        stream->q[stream->queued++ - stream->base] =
            (queued_copy_t){(void *) (uintptr_t) dst, (const void *) (uintptr_t) src, len};
    } else {
        dev_copy((void *) (uintptr_t) dst, (const void *) (uintptr_t) src, len);
    }
    pthread_mutex_unlock(&emu.lock);
    return CUDA_SUCCESS;
}

/* --- pinned host memory -------------------------------------------------- */

/* Ordinary host memory (the emulation has no DMA to lock pages for); the
 * counts tell the tests how often ob1x pinned and released. */
EMU_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
    ENTER(cuMemHostAlloc);
    (void) flags;
    if (NULL == current_ctx) {
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    if (0 != posix_memalign(pp, 4096, bytesize > 0 ? bytesize : 1)) {
        *pp = NULL;
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuMemFreeHost(void *p)
{
    ENTER(cuMemFreeHost);
    free(p);
    return CUDA_SUCCESS;
}

/* --- entry points of stock Open MPI's common_cuda (-DCUEMU_STOCK_CALLS) ---
 *
 * An Open MPI built with CUDA support loads these at its first use of CUDA
 * and turns its CUDA support off when one is missing. Built in only for
 * contrib/check-cuda-build, which runs stock ob1 of such a build against
 * the emulation; not counted, no injected failures. */
#ifdef CUEMU_STOCK_CALLS
static CUresult stock_enter(void)
{
    CUresult rc;

    pthread_mutex_lock(&emu.lock);
    set_up();
    rc = emu.initialised ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
    pthread_mutex_unlock(&emu.lock);
    return rc;
}

EMU_EXPORT CUresult cuCtxGetDevice(CUdevice *dev)
{
    if (NULL == current_ctx) {
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    *dev = current_ctx->dev;
    return stock_enter();
}

EMU_EXPORT CUresult cuEventSynchronize(CUevent event)
{
    pthread_mutex_lock(&emu.lock);
    run_queue(event->stream, event->upto);
    pthread_mutex_unlock(&emu.lock);
    __atomic_store_n(&event->polls_left, 0, __ATOMIC_RELAXED);
    return stock_enter();
}

EMU_EXPORT CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags)
{
    (void) stream;
    (void) flags;
    return cuEventSynchronize(event);
}

/* IPC events belong to stock smcuda's IPC, which ours replaces. */
EMU_EXPORT CUresult cuIpcGetEventHandle(CUipcEventHandle *handle, CUevent event)
{
    (void) handle;
    (void) event;
    return CUDA_ERROR_NOT_SUPPORTED;
}

EMU_EXPORT CUresult cuIpcOpenEventHandle(CUevent *event, CUipcEventHandle handle)
{
    (void) event;
    (void) handle;
    return CUDA_ERROR_NOT_SUPPORTED;
}

EMU_EXPORT CUresult cuMemAlloc(CUdeviceptr *ptr, size_t size)
{
    void *p;

    if (NULL == current_ctx) {
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    p = cuemu_malloc(size, current_ctx->dev);
    *ptr = (CUdeviceptr) (uintptr_t) p;
    return NULL != p ? stock_enter() : CUDA_ERROR_OUT_OF_MEMORY;
}

EMU_EXPORT CUresult cuMemFree(CUdeviceptr ptr)
{
    cuemu_free((void *) (uintptr_t) ptr);
    return stock_enter();
}

/* No DMA to lock pages for. */
EMU_EXPORT CUresult cuMemHostRegister(void *p, size_t size, unsigned int flags)
{
    (void) p;
    (void) size;
    (void) flags;
    return stock_enter();
}

EMU_EXPORT CUresult cuMemHostUnregister(void *p)
{
    (void) p;
    return stock_enter();
}

EMU_EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t len)
{
    if (NULL == current_ctx) {
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    (void) cuemu_memcpy((void *) (uintptr_t) dst, (const void *) (uintptr_t) src, len);
    return stock_enter();
}

/* As the driver: host memory the driver does not know has no memory type. */
EMU_EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr ptr)
{
    unsigned int type;
    int dev;
    unsigned long long id;
    uintptr_t base;
    size_t size;
    CUresult rc = stock_enter();

    if (CUDA_SUCCESS != rc) {
        return rc;
    }
    pthread_mutex_lock(&emu.lock);
    describe((uintptr_t) ptr, &type, &dev, &id, &base, &size);
    rc = 0 == type ? CUDA_ERROR_INVALID_VALUE
                   : put_attribute(attr, data, type, dev, id, base, size);
    pthread_mutex_unlock(&emu.lock);
    return rc;
}

EMU_EXPORT CUresult cuPointerSetAttribute(const void *value, CUpointer_attribute attr,
                                          CUdeviceptr ptr)
{
    (void) value;
    (void) attr;
    (void) ptr;
    return stock_enter();
}
#endif /* CUEMU_STOCK_CALLS */

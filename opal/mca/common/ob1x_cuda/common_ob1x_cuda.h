/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_cuda.h - the CUDA driver as the ob1x components see it.
 *
 * One instance per process (libmca_common_ob1x_cuda, shared by pml/ob1x
 * and btl/smcuda) owns the one table of driver functions. The driver
 * (libcuda.so.1) is never linked: it is dlopen'ed on the first call that
 * needs it, never at MPI_Init, so a process that never touches a GPU never
 * loads it. Only the driver API is used.
 *
 * This header needs no CUDA header: handles are opaque here.
 *
 * Return values are Open MPI's: OPAL_SUCCESS, OPAL_ERR_NOT_AVAILABLE (no
 * usable driver), OPAL_ERR_RESOURCE_BUSY (a copy still in flight),
 * OPAL_ERROR (a driver call failed; its name and the driver's error string
 * were shown once per call name through opal_show_help).
 *
 * Thread safety: every function may be called from several threads.
 */
#ifndef COMMON_OB1X_CUDA_H
#define COMMON_OB1X_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a buffer is, for the PML and the BTLs. Managed (unified) memory is
 * reported apart: it must never be exported by IPC. */
typedef enum {
    OB1X_CUDA_MEM_HOST = 0,
    OB1X_CUDA_MEM_DEVICE,
    OB1X_CUDA_MEM_MANAGED,
} ob1x_cuda_mem_t;

/* A classified pointer. For host memory only type is meaningful. */
typedef struct {
    ob1x_cuda_mem_t type;
    int device;         /* device ordinal in this process */
    uint64_t buffer_id; /* process-wide unique id of the allocation: a
                         * buffer freed and reallocated at the same address
                         * gets a new one */
    void *context;      /* CUcontext the memory belongs to */
    uintptr_t base;     /* the allocation holding the pointer */
    size_t size;
} ob1x_cuda_ptr_info_t;

/* A CUipcMemHandle (CU_IPC_HANDLE_SIZE bytes), passed to a peer as is. */
typedef struct {
    unsigned char bytes[64];
} ob1x_cuda_ipc_handle_t;

/* Loads the driver when not loaded yet and calls cuInit. required: the
 * caller needs CUDA (it was asked for, or a device buffer was seen), so a
 * failure is shown to the user (once per process); otherwise the load is
 * attempted only where the process has loaded libcuda.so.1 itself, and
 * fails quietly. OPAL_SUCCESS or OPAL_ERR_NOT_AVAILABLE. */
int ob1x_cuda_init(bool required);

/* In a process that will use the CUDA runtime, which loads the driver
 * only at its first CUDA call, often after MPI_Init: linked with
 * libcudart.so, or an executable with CUDA device code (nvcc's
 * .nv_fatbin section; nvcc links the runtime statically): loads the
 * driver now, quietly, so that the first device buffer, even one passed
 * to MPI before any other MPI call, is recognised. cuInit only: no
 * context is made. OPAL_ERR_NOT_FOUND in other processes, else as
 * ob1x_cuda_init (failures are not shown). */
int ob1x_cuda_init_for_runtime(void);

/* Whether the process has the driver loaded (the table is then loaded
 * too): the dynamic loader is asked only when a library was loaded since
 * the last answer "no" (a walk under its lock, some 200 instructions). */
bool ob1x_cuda_driver_present(void);

/* For a caller that must notice at once a driver loaded after its last
 * look, without asking the loader each time: the address of a word that
 * stays NULL until the dynamic loader loads any library after this call
 * (the l_next of the last object loaded, which is kept loaded for good).
 * Reading it costs one load; when it turns non-NULL, ask
 * ob1x_cuda_driver_present() and take a new watch. NULL when no watch
 * can be set. */
struct link_map;
struct link_map *volatile *ob1x_cuda_load_watch(void);

/* Whether the driver table is loaded (no attempt to load it). */
bool ob1x_cuda_loaded(void);

/* Classifies [ptr, ptr + len). Never loads the driver into a process that
 * has not loaded libcuda.so.1 itself (no device memory can exist there).
 *
 * Host memory costs no driver call when it lies where the driver never
 * maps device memory: this program's static data, the brk heap (small
 * malloc()s) and the main thread's stack, all checked by address range
 * without a lock. Other host memory (mmap'ed, such as large malloc()s) is
 * asked to the driver every time: without memory release hooks (Debian's
 * Open MPI has none active) a cached "host" answer could outlive an
 * munmap after which the driver maps device memory at the same address.
 * Device memory is asked to the driver every time, so that the buffer id
 * of a reallocation at the same address is always the new one. */
int ob1x_cuda_classify(const void *ptr, size_t len, ob1x_cuda_ptr_info_t *info);

/* The same, for a caller that classifies again a range an upper layer of
 * the same call has just classified (smcuda registering the device buffer
 * ob1x found): the answer of this thread's last ob1x_cuda_classify, when
 * it was device memory holding the range, is used once without a driver
 * call. Within one MPI call the buffer cannot be freed, so the answer is
 * current; used once and cleared by every classification, it never
 * serves a later call. */
int ob1x_cuda_classify_again(const void *ptr, size_t len, ob1x_cuda_ptr_info_t *info);

/* The device ordinal of the last device buffer classified in this process
 * (by any component), -1 when none was yet: whether this process uses a
 * GPU, and which, without a driver call (btl/smcuda answers a peer's IPC
 * request only once it does). */
int ob1x_cuda_noted_device(void);

/* IPC: the handle of the allocation holding the device pointer ptr, and
 * that allocation's range (the peer maps the whole allocation; the offset
 * of ptr in it is for the caller to send along). */
int ob1x_cuda_ipc_get(const void *ptr, ob1x_cuda_ipc_handle_t *handle, uintptr_t *base,
                      size_t *size);
/* The handle of the allocation starting at base, whose range the caller
 * knows (ob1x_cuda_classify's base and size): no range query. */
int ob1x_cuda_ipc_get_alloc(uintptr_t base, ob1x_cuda_ipc_handle_t *handle);
/* Maps a peer's allocation; *base is its address here. */
int ob1x_cuda_ipc_open(const ob1x_cuda_ipc_handle_t *handle, void **base);
/* Unmaps what ob1x_cuda_ipc_open mapped. */
int ob1x_cuda_ipc_close(void *base);

/* Starts an asynchronous copy on the library's own stream and records an
 * event after it; *ticket identifies it for ob1x_cuda_copy_test. The
 * stream belongs to the current context, else to the context of the last
 * device buffer classified, else to device 0's primary context. */
int ob1x_cuda_copy_start(void *dst, const void *src, size_t len, int *ticket);
/* Polls a copy: OPAL_SUCCESS (done; the ticket is free again),
 * OPAL_ERR_RESOURCE_BUSY (in flight) or OPAL_ERROR (failed; freed). Never
 * blocks. */
int ob1x_cuda_copy_test(int ticket);

/* Waits until the work queued on the legacy default stream is done (a
 * cuMemcpyHtoD from pageable memory may still be landing when it
 * returns). For memory another process is about to read by IPC: its
 * copies cannot be ordered after this process's streams. */
int ob1x_cuda_sync_legacy(void);

/* Page-locked host memory that every context may use (cuMemHostAlloc,
 * portable): copies between it and device memory are DMA transfers the
 * copy stream overlaps, where pageable memory goes through the driver's
 * own bounce buffers, synchronously. Pinning costs about a millisecond per
 * MiB, so callers keep what they pin (pml/ob1x's staging pool). *p is NULL
 * on any failure. */
int ob1x_cuda_host_alloc(size_t len, void **p);
void ob1x_cuda_host_free(void *p);

/* Devices: how many, their UUID (what identifies a device across
 * processes, whose ordinals differ under CUDA_VISIBLE_DEVICES), and
 * whether device dev can access peer's memory (false for dev == peer). */
int ob1x_cuda_device_count(int *count);
int ob1x_cuda_device_uuid(int dev, unsigned char uuid[16]);
int ob1x_cuda_can_access_peer(int dev, int peer, bool *can);

/* Releases the stream and events (the driver stays loaded: mappings other
 * libraries made may still use it). Called at the components' close. */
void ob1x_cuda_finalize(void);

#endif /* COMMON_OB1X_CUDA_H */

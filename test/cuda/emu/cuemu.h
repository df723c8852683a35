/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * cuemu.h - the test programs' side of the CUDA driver emulation
 * (libcuda.so.1 built from cuemu.c, for tests only, installed nowhere).
 *
 * "Device memory" of device d of process p is a file
 * /dev/shm/ob1x-cuemu.<p>.<d> (0600, removed when p exits normally),
 * mapped shared, so that another process can open an IPC handle of it and
 * see the same bytes. Environment (read at the first call):
 *
 *   OB1X_CUEMU_DEVICES=N      devices (default 1; 0: cuInit fails with
 *                             CUDA_ERROR_NO_DEVICE)
 *   OB1X_CUEMU_VISIBLE=a,b    ordinal i is "physical" device list[i] (as
 *                             CUDA_VISIBLE_DEVICES): UUIDs follow physical
 *   OB1X_CUEMU_NO_PEER=1      cuDeviceCanAccessPeer answers 0, and opening
 *                             a handle of another physical device fails
 *   OB1X_CUEMU_FAIL=f[,f..]   these entry points (names as in cuda.h before
 *                             its _v2 mapping, or as exported) return
 *                             CUDA_ERROR_UNKNOWN
 *   OB1X_CUEMU_COUNT=PATH     at exit, "name count" per entry point into
 *                             PATH.<pid>
 *   OB1X_CUEMU_ARENA_MB=N     size of each device's memory (default 64)
 *   OB1X_CUEMU_TAG=T          the files are /dev/shm/ob1x-cuemu.T.<p>.<d>
 *                             (a test's own tag: files of jobs beside it
 *                             are not taken for its leftovers)
 *   OB1X_CUEMU_EVENT_POLLS=N  cuEventQuery answers CUDA_ERROR_NOT_READY N
 *                             times after each record (default 2)
 *   OB1X_CUEMU_PROTECT=1      device memory (this process's and the views
 *                             of peers' memory opened by IPC) is PROT_NONE
 *                             except inside cuMemcpyAsync and cuemu_memcpy:
 *                             host code touching it faults, as on a GPU
 *   OB1X_CUEMU_ASYNC=1        a cuMemcpyAsync on a created stream runs
 *                             only when an event recorded after it is
 *                             seen complete (cuEventQuery) or the stream
 *                             is synchronised: code that reads a copy's
 *                             target before then sees the old bytes
 */
#ifndef CUEMU_H
#define CUEMU_H

#include <stddef.h>

/* cudaMalloc/cudaFree on emulated device dev (no driver call counted).
 * First fit, page aligned: a buffer freed and allocated again with the
 * same size comes back at the same address, with a new buffer id. */
void *cuemu_malloc(size_t size, int dev);
void cuemu_free(void *ptr);
/* cudaMemcpy, any direction (synchronous). 0 or -1. */
int cuemu_memcpy(void *dst, const void *src, size_t len);
/* How many times the entry point was called in this process (its name as
 * in cuda.h, e.g. "cuIpcOpenMemHandle"). */
unsigned long cuemu_count(const char *name);

#endif /* CUEMU_H */

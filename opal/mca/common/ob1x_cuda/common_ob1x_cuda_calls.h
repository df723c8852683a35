/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_cuda_calls.h - the list of CUDA driver entry points that
 * libmca_common_ob1x_cuda uses, in one place: the library builds its driver
 * table from it and the test-only driver emulation (test/cuda/emu) exports
 * exactly these. Needs <cuda.h> first; nothing else.
 */
#ifndef COMMON_OB1X_CUDA_CALLS_H
#define COMMON_OB1X_CUDA_CALLS_H

/* Every driver entry point used. cuda.h maps some names to versioned
 * symbols (cuIpcOpenMemHandle is cuIpcOpenMemHandle_v2, cuEventDestroy is
 * cuEventDestroy_v2, ...): the table's fields and the names looked up with
 * dlsym are the mapped ones, so the prototype and the symbol always
 * match. The emulation library of the tests (test/cuda/emu) exports the
 * same list. */
#define OB1X_CUDA_CALLS(X)                                                                         \
    X(cuInit)                                                                                      \
    X(cuGetErrorName)                                                                              \
    X(cuGetErrorString)                                                                            \
    X(cuDeviceGetCount)                                                                            \
    X(cuDeviceGet)                                                                                 \
    X(cuDeviceGetUuid)                                                                             \
    X(cuDeviceCanAccessPeer)                                                                       \
    X(cuDevicePrimaryCtxRetain)                                                                    \
    X(cuCtxGetCurrent)                                                                             \
    X(cuCtxSetCurrent)                                                                             \
    X(cuPointerGetAttributes)                                                                      \
    X(cuMemGetAddressRange)                                                                        \
    X(cuIpcGetMemHandle)                                                                           \
    X(cuIpcOpenMemHandle)                                                                          \
    X(cuIpcCloseMemHandle)                                                                         \
    X(cuStreamCreate)                                                                              \
    X(cuStreamDestroy)                                                                             \
    X(cuStreamSynchronize)                                                                         \
    X(cuEventCreate)                                                                               \
    X(cuEventRecord)                                                                               \
    X(cuEventQuery)                                                                                \
    X(cuEventDestroy)                                                                              \
    X(cuMemcpyAsync)                                                                               \
    X(cuMemHostAlloc)                                                                              \
    X(cuMemFreeHost)

#endif /* COMMON_OB1X_CUDA_CALLS_H */

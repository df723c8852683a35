/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * fail.c - driver failures (injected by the emulation's OB1X_CUEMU_FAIL)
 * give the caller an error and the user one clear message. Arguments:
 *   init   cuInit fails (or the driver lacks a symbol): a device buffer
 *          is still classified (as host: without the driver nothing else
 *          can be said), the required init fails (message shown by it)
 *   call   cuIpcGetMemHandle fails twice: two errors, one message
 * Run by fail_run.sh.
 */
#include "common_ob1x_cuda.h"
#include "cuemu.h"
#include "tpml.h"

int main(int argc, char **argv)
{
    ob1x_cuda_ipc_handle_t h;
    ob1x_cuda_ptr_info_t info;
    uintptr_t base;
    size_t size;
    char *d;

    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    d = cuemu_malloc(4096, 0);
    T_CHECK(NULL != d, "cuemu_malloc");
    if (t_has_arg(argc, argv, "init")) {
        T_CHECK(0 == ob1x_cuda_classify(d, 4096, &info), "classify failed");
        T_CHECK(!ob1x_cuda_loaded(), "loaded although cuInit failed");
        T_CHECK(0 != ob1x_cuda_init(true), "init(required) worked although cuInit failed");
        T_CHECK(0 != ob1x_cuda_ipc_get(d, &h, &base, &size), "ipc_get worked without a driver");
    } else {
        T_CHECK(0 != ob1x_cuda_ipc_get(d, &h, &base, &size), "ipc_get worked");
        T_CHECK(0 != ob1x_cuda_ipc_get(d, &h, &base, &size), "ipc_get worked (2)");
        T_CHECK(2 == cuemu_count("cuIpcGetMemHandle"), "cuIpcGetMemHandle called %lu times",
                cuemu_count("cuIpcGetMemHandle"));
    }
    cuemu_free(d);
    return t_finalize();
}

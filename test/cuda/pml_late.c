/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pml_late.c - an application that loads CUDA after MPI_Init (not linked
 * with the driver emulation: it dlopens it, as the CUDA runtime does) and
 * creates no communicator: pml/ob1x notices the driver from progress
 * (pml_ob1x_cuda_enabled becomes 1) and then moves device buffers, under
 * OB1X_CUEMU_PROTECT=1. Two ranks. Run by pml_run.sh late; with the
 * argument "runtime" by pml_run.sh runtime (linked with a stand-in
 * libcudart) and fatbin (built with -DT_FATBIN: a section .nv_fatbin, as
 * nvcc's device code, and no libcudart.so). With the arguments "now"
 * and a library's path (pml_run.sh now): that library is loaded after
 * MPI_Init and host messages move (ob1x's loader watch fires without
 * CUDA and is set again), then CUDA is loaded and device buffers are sent
 * and received at once, eager and rendezvous, with no MPI call between
 * the dlopen and the first device buffer: no progress has run.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpml.h"

#ifdef T_FATBIN
/* what nvcc leaves in an executable with device code (the bytes do not
 * matter: only the section's name is looked at) */
__attribute__((used, section(".nv_fatbin"))) static const unsigned char fatbin_stand_in[16] = {1};
#endif

static unsigned long long read_enabled(void)
{
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
    unsigned long long v = 0;
    int idx, count, provided;

    T_CHECK(MPI_SUCCESS == MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), "MPI_T_init");
    T_CHECK(MPI_SUCCESS ==
                MPI_T_pvar_get_index("pml_ob1x_cuda_enabled", MPI_T_PVAR_CLASS_LEVEL, &idx),
            "no pml_ob1x_cuda_enabled");
    MPI_T_pvar_session_create(&session);
    MPI_T_pvar_handle_alloc(session, idx, NULL, &handle, &count);
    MPI_T_pvar_read(session, handle, &v);
    MPI_T_pvar_handle_free(session, &handle);
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
    return v;
}

int main(int argc, char **argv)
{
    const size_t len = 300000; /* rendezvous on every BTL */
    void *(*dev_malloc)(size_t, int);
    int (*dev_memcpy)(void *, const void *, size_t);
    unsigned char *d, *h = t_malloc(len);
    void *lib;
    int rank, flag;

    /* runtime: linked with a (stand-in) CUDA runtime, which loads the
     * driver only at its first call: ob1x loads it at MPI_Init, and a device
     * buffer passed to MPI with no MPI call in between is recognised */
    bool runtime = argc > 1 && 0 == strcmp(argv[1], "runtime");
    bool now = argc > 2 && 0 == strcmp(argv[1], "now");
    unsigned char small[100];

    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    T_CHECK((runtime ? 1 : 0) == read_enabled(), "pml_ob1x_cuda_enabled %s at MPI_Init",
            runtime ? "0 in a process linked with the CUDA runtime" : "1 before CUDA is loaded");
    if (now) {
        unsigned char out[8] = {0}, in[8] = {0};
        int peer = 1 - rank;

        T_CHECK(NULL != dlopen(argv[2], RTLD_NOW), "cannot load %s: %s", argv[2], dlerror());
        T_MPI(MPI_Sendrecv(out, 8, MPI_BYTE, peer, 2, in, 8, MPI_BYTE, peer, 2, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
        T_CHECK(0 == read_enabled(), "pml_ob1x_cuda_enabled 1 before CUDA is loaded");
    }
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    T_CHECK(NULL != lib, "cannot load the emulation: %s", dlerror());
    dev_malloc = (void *(*) (size_t, int) ) dlsym(lib, "cuemu_malloc");
    dev_memcpy = (int (*)(void *, const void *, size_t)) dlsym(lib, "cuemu_memcpy");
    T_CHECK(NULL != dev_malloc && NULL != dev_memcpy, "cuemu symbols");
    d = dev_malloc(len, 0);
    T_CHECK(NULL != d, "cuemu_malloc");
    /* the application's MPI calls run progress: ob1x looks again there */
    for (int i = 0; i < (runtime || now ? 0 : 8192); i++) {
        T_MPI(MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    }
    if (!runtime && !now) {
        T_CHECK(1 == read_enabled(), "pml_ob1x_cuda_enabled still 0 after CUDA was loaded");
        T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    if (0 == rank) {
        t_fill(h, len, 42);
        dev_memcpy(d, h, len);
        if (now) { /* eager from the same device buffer first */
            T_MPI(MPI_Send(d, (int) sizeof(small), MPI_BYTE, 1, 3, MPI_COMM_WORLD));
        }
        T_MPI(MPI_Send(d, (int) len, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
    } else if (1 == rank) {
        if (now) {
            T_MPI(MPI_Recv(d, (int) sizeof(small), MPI_BYTE, 0, 3, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
            dev_memcpy(small, d, sizeof(small));
            t_check_data(small, sizeof(small), 42, "eager device buffer right after dlopen");
        }
        T_MPI(MPI_Recv(d, (int) len, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        memset(h, 0, len);
        dev_memcpy(h, d, len);
        t_check_data(h, len, 42, "device buffer of a late CUDA");
    }
    free(h);
    if (0 == rank) {
        printf("cuda/pml_late: CUDA loaded after MPI_Init was noticed%s\n",
               now ? " at the first device buffer" : "");
    }
    return t_finalize();
}

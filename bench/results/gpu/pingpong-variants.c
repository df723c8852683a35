/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * The program of bench/results/gpu/2026-11-27-h200.md, section 2: per
 * message times (µs) of two-rank ping-pongs with device and host buffers
 * in every combination, and the same pattern with the copies made by hand
 * around host messages (RAW). Built with mpicc -I/usr/local/cuda/include
 * ... -ldl; needs a GPU (the driver is dlopened). PP_RAW_ONLY=1: only the
 * RAW lines (for a PML that does not handle device buffers).
 */
#include <cuda.h>
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int rank;
typedef CUresult (*f_init)(unsigned);
typedef CUresult (*f_dget)(CUdevice *, int);
typedef CUresult (*f_pret)(CUcontext *, CUdevice);
typedef CUresult (*f_cset)(CUcontext);
typedef CUresult (*f_malloc)(CUdeviceptr *, size_t);
typedef CUresult (*f_dtoh)(void *, CUdeviceptr, size_t);
typedef CUresult (*f_htod)(CUdeviceptr, const void *, size_t);
typedef CUresult (*f_cpya)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
typedef CUresult (*f_screate)(CUstream *, unsigned);
typedef CUresult (*f_ecreate)(CUevent *, unsigned);
typedef CUresult (*f_erec)(CUevent, CUstream);
typedef CUresult (*f_eq)(CUevent);
typedef CUresult (*f_hostalloc)(void **, size_t, unsigned);
static f_dtoh dtoh;
static f_htod htod;
static f_cpya cpya;
static f_erec erec;
static f_eq eq;
static CUstream st;
static CUevent ev;
static void acopy(void *dst, const void *src, size_t n)
{
    cpya((CUdeviceptr) dst, (CUdeviceptr) src, n, st);
    erec(ev, st);
    while (CUDA_ERROR_NOT_READY == eq(ev)) {
    }
}
/* the both-dev pattern with host MPI messages and the copies done by hand;
 * mode 0: synchronous cuMemcpy, 1: async + event spin */
static double raw(void *d, void *h, size_t n, int reps, int mode)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int i = 0; i < reps; i++) {
        if (0 == rank) {
            if (mode)
                acopy(h, d, n);
            else
                dtoh(h, (CUdeviceptr) d, n);
            MPI_Send(h, (int) n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(h, (int) n, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (mode)
                acopy(d, h, n);
            else
                htod((CUdeviceptr) d, h, n);
        } else {
            MPI_Recv(h, (int) n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (mode)
                acopy(d, h, n);
            else
                htod((CUdeviceptr) d, h, n);
            if (mode)
                acopy(h, d, n);
            else
                dtoh(h, (CUdeviceptr) d, n);
            MPI_Send(h, (int) n, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t) / reps / 2 * 1e6;
}
static double pp(void *s0, void *r0, void *s1, void *r1, size_t len, int reps, int barrier)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int i = 0; i < reps; i++) {
        if (barrier)
            MPI_Barrier(MPI_COMM_WORLD);
        if (0 == rank) {
            MPI_Send(s0, (int) len, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(r0, (int) len, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(r1, (int) len, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(s1, (int) len, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t) / reps / 2 * 1e6;
}
int main(int argc, char **argv)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    f_init cinit = (f_init) dlsym(h, "cuInit");
    f_dget dget = (f_dget) dlsym(h, "cuDeviceGet");
    f_pret pret = (f_pret) dlsym(h, "cuDevicePrimaryCtxRetain");
    f_cset cset = (f_cset) dlsym(h, "cuCtxSetCurrent");
    f_malloc cmalloc = (f_malloc) dlsym(h, "cuMemAlloc_v2");
    if (!cinit || !dget || !pret || !cset || !cmalloc) {
        printf("no driver symbols\n");
        return 1;
    }
    dtoh = (f_dtoh) dlsym(h, "cuMemcpyDtoH_v2");
    htod = (f_htod) dlsym(h, "cuMemcpyHtoD_v2");
    cpya = (f_cpya) dlsym(h, "cuMemcpyAsync");
    erec = (f_erec) dlsym(h, "cuEventRecord");
    eq = (f_eq) dlsym(h, "cuEventQuery");
    f_screate screate = (f_screate) dlsym(h, "cuStreamCreate");
    f_ecreate ecreate = (f_ecreate) dlsym(h, "cuEventCreate");
    f_hostalloc hostalloc = (f_hostalloc) dlsym(h, "cuMemHostAlloc");
    CUdevice d;
    CUcontext c;
    CUdeviceptr a, b, big1, big2;
    cinit(0);
    dget(&d, 0);
    pret(&c, d);
    cset(c);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    cmalloc(&a, 1 << 24);
    cmalloc(&b, 1 << 24);
    size_t bs = getenv("PP_SMALL") ? (size_t) 1 << 26 : (size_t) 1 << 30;
    if (cmalloc(&big1, bs) || cmalloc(&big2, bs)) {
        printf("alloc failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    static char hs[1 << 20], hr[1 << 20];
    void *pin = NULL;
    screate(&st, 0);
    ecreate(&ev, CU_EVENT_DISABLE_TIMING);
    hostalloc(&pin, 1 << 20, 0);
    for (int k = 0; k < 2; k++) {
        size_t n = k ? 65536 : 1024;
        raw((void *) a, pin, n, 20, 0);
        double r0 = raw((void *) a, pin, n, 100, 0), r1 = raw((void *) a, pin, n, 100, 1);
        double r2 = raw((void *) a, hs, n, 100, 0);
        if (0 == rank)
            printf("RAW %6zu both-dev by hand: sync cuMemcpy %7.1f  async+event %7.1f  sync "
                   "pageable %7.1f us/msg\n",
                   n, r0, r1, r2);
    }
    if (getenv("PP_RAW_ONLY")) {
        MPI_Finalize();
        return 0;
    }
    size_t sizes[] = {1024, 65536, 1 << 20};
    for (int k = 0; k < 3; k++) {
        size_t n = sizes[k];
        void *A = (void *) a, *B = (void *) b, *G1 = (void *) big1, *G2 = (void *) big2;
        pp(A, B, A, B, n, 20, 0);
        double t1 = pp(A, B, B, B, n, 50, 0);     /* sweep-like: rank1 replies from its recv buf */
        double t2 = pp(A, B, A, B, n, 50, 0);     /* rank1 replies from another buffer */
        double t3 = pp(A, B, B, B, n, 50, 1);     /* with barrier */
        double t4 = pp(G1, G2, G2, G2, n, 50, 0); /* 1 GiB allocations */
        double t5 = pp(hs, hr, hr, hr, n, 50, 0); /* host */
        double t6 = pp(A, hr, hs, B, n, 50,
                       0); /* rank0 sends dev, receives host; rank1 receives dev sends host */
        double t7 = pp(A, hr, B, B, n, 50, 0); /* rank1 does both device */
        double t8 =
            pp(hs, B, hs, hr, n, 50, 0); /* rank 0 sends host, receives device; rank 1 host both */
        double t9 = pp(A, B, hs, hr, n, 50, 0); /* rank0 both device, rank1 host both */
        if (0 == rank)
            printf("PP %8zu  both-dev %7.1f  other-buf %7.1f  barrier %7.1f  1GiB %7.1f  host "
                   "%7.1f  0s1r-dev %7.1f  r1-both %7.1f  0r-dev %7.1f  r0-both %7.1f us/msg\n",
                   n, t1, t2, t3, t4, t5, t6, t7, t8, t9);
    }
    MPI_Finalize();
    return 0;
}

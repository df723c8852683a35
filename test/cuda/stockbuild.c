/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * stockbuild.c - host and device buffers between two ranks, for
 * contrib/check-cuda-build: an Open MPI built with CUDA support, our
 * components built against it, stock ob1 or ob1x selected. Linked with the
 * driver emulation (built with CUEMU_STOCK_CALLS): like a CUDA program, it
 * makes a context current before MPI_Init. Plain MPI only (no test
 * library), so that it builds with any Open MPI's mpicc.
 *
 *   stockbuild host     host buffers only
 *   stockbuild device   device buffers on both sides as well
 *
 * Sizes 0 B to 5 MiB, blocking and non-blocking, contents checked; rank 0
 * prints the PML and BTL files it has mapped and "stockbuild: N messages
 * ok", exits 1 on the first wrong byte.
 */
#include <cuda.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuemu.h"

static const size_t sizes[] = {0, 1, 100, 4096, 12288, 65537, 300000, 1 << 20, 5 << 20};
#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))

static unsigned char pattern(size_t i, int round)
{
    return (unsigned char) (i * 7 + (size_t) round * 13 + 1);
}

static int check(const unsigned char *h, size_t len, int round, const char *what)
{
    for (size_t i = 0; i < len; i++) {
        if (h[i] != pattern(i, round)) {
            fprintf(stderr, "stockbuild: %s, %zu bytes: byte %zu is %u, not %u\n", what, len, i,
                    h[i], pattern(i, round));
            return 1;
        }
    }
    return 0;
}

/* One message of len bytes from rank 0 to rank 1 out of (device ? device
 * : host) memory, blocking or not; rank 1 checks what arrived. */
static int one(size_t len, int round, int device, int nonblocking, int rank, unsigned char *h,
               unsigned char *d)
{
    unsigned char *buf = device ? d : h;
    MPI_Request req;
    int got = -1;
    MPI_Status st;

    if (0 == rank) {
        for (size_t i = 0; i < len; i++) {
            h[i] = pattern(i, round);
        }
        if (device) {
            cuemu_memcpy(d, h, len);
        }
        if (nonblocking) {
            MPI_Isend(buf, (int) len, MPI_BYTE, 1, round, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Send(buf, (int) len, MPI_BYTE, 1, round, MPI_COMM_WORLD);
        }
        return 0;
    }
    memset(h, 0, len);
    if (device) {
        cuemu_memcpy(d, h, len);
    }
    if (nonblocking) {
        MPI_Irecv(buf, (int) len, MPI_BYTE, 0, round, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, &st);
    } else {
        MPI_Recv(buf, (int) len, MPI_BYTE, 0, round, MPI_COMM_WORLD, &st);
    }
    MPI_Get_count(&st, MPI_BYTE, &got);
    if ((size_t) got != len) {
        fprintf(stderr, "stockbuild: %zu bytes sent, %d received\n", len, got);
        return 1;
    }
    if (device) {
        cuemu_memcpy(h, d, len);
    }
    return check(h, len, round, device ? "device buffer" : "host buffer");
}

/* Which PML and BTL components this process runs (the check wants ours
 * where it selected ours): their files as mapped. */
static void print_components(void)
{
    char line[4096], seen[64][512];
    int n = 0;
    FILE *maps = fopen("/proc/self/maps", "r");

    while (NULL != maps && NULL != fgets(line, sizeof(line), maps)) {
        char *path = strchr(line, '/');
        int known = 0;

        if (NULL == path || (NULL == strstr(path, "/mca_pml_") && NULL == strstr(path, "/mca_btl_"))) {
            continue;
        }
        path[strcspn(path, "\n")] = '\0';
        for (int i = 0; i < n; i++) {
            known |= 0 == strcmp(seen[i], path);
        }
        if (!known && n < 64) {
            snprintf(seen[n++], sizeof(seen[0]), "%s", path);
            printf("stockbuild: loaded %s\n", path);
        }
    }
    if (NULL != maps) {
        fclose(maps);
    }
}

int main(int argc, char **argv)
{
    int device = argc > 1 && 0 == strcmp(argv[1], "device");
    size_t max = sizes[N_SIZES - 1];
    unsigned char *h = malloc(max), *d = NULL;
    CUcontext ctx;
    int rank, bad = 0, all_bad = 0, n = 0;

    /* as a CUDA program: a current context before MPI_Init */
    if (CUDA_SUCCESS != cuInit(0) || CUDA_SUCCESS != cuDevicePrimaryCtxRetain(&ctx, 0) ||
        CUDA_SUCCESS != cuCtxSetCurrent(ctx)) {
        fprintf(stderr, "stockbuild: no emulated CUDA context\n");
        return 1;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (device && NULL == (d = cuemu_malloc(max, 0))) {
        fprintf(stderr, "stockbuild: no emulated device memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int dev = 0; dev <= device; dev++) {
        for (size_t s = 0; s < N_SIZES && rank < 2; s++) {
            for (int nb = 0; nb < 2; nb++) {
                bad |= one(sizes[s], n % 1000, dev, nb, rank, h, d);
                n++;
            }
        }
    }
    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (0 == rank) {
        print_components();
    }
    if (0 == rank && 0 == all_bad) {
        printf("stockbuild: %d messages ok (%s buffers)\n", n, device ? "host and device" : "host");
    }
    free(h);
    MPI_Finalize();
    return all_bad;
}

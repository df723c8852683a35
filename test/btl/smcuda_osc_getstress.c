/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_osc_getstress.c - large MPI_Get inside fence epochs, thousands of
 * times, every byte checked after the closing fence.
 *
 * Rank 1 exposes int[ints + 1] (all 1) through MPI_Win_create. Rank 0, in
 * each epoch (MPI_MODE_NOPRECEDE ... MPI_MODE_NOSUCCEED), gets `ints` ints
 * from displacement 1 into a zeroed buffer and puts one int at
 * displacement 0; after the closing fence every int must be 1. A get this
 * large is shared by both processes in btl/smcuda (the data owner copies
 * chunks too); osc/rdma takes btl_flush returning as the completion of
 * every get, so a chunk still being copied by the data owner when the
 * fence returns shows up here as zeros.
 *
 * Arguments: epochs=N (default 4000), ints=N (default 100000),
 * seconds=N (stop early after this long, default 60),
 * expect=helped (the data owner must have copied part of the gets).
 */
#include "osc_util.h"

#define PROG "btl/smcuda_osc_getstress"

/* Index of the first int that is not 1, or -1. */
static long first_bad(const int *buf, long n)
{
    for (long i = 0; i < n; ++i) {
        if (1 != buf[i]) {
            return i;
        }
    }
    return -1;
}

/* The rest of a late chunk may still be landing: the run is what is seen
 * now, the first value what was seen at the check. */
static void report_bad(const int *buf, long n, long bad, int seen, int epoch)
{
    long end = bad;

    while (end < n && 1 != buf[end]) {
        ++end;
    }
    bu_fail("epoch %d: int %ld (byte %ld) was %d after the closing fence; ints %ld..%ld still "
            "wrong now",
            epoch, bad, bad * (long) sizeof(int), seen, bad, end - 1);
}

int main(int argc, char **argv)
{
    const char *a;
    int epochs = 4000, done = 0, one = 1;
    long ints = 100000;
    double seconds = 60, t0;
    int *win_mem = NULL, *dst = NULL, stop = 0;
    bu_counters_t before;
    MPI_Win win;

    bu_init(&argc, &argv);
    BU_CHECK(bu_size >= 2, "needs 2 ranks");
    if (NULL != (a = bu_arg(argc, argv, "epochs"))) {
        epochs = atoi(a);
    }
    if (NULL != (a = bu_arg(argc, argv, "ints"))) {
        ints = atol(a);
    }
    if (NULL != (a = bu_arg(argc, argv, "seconds"))) {
        seconds = atof(a);
    }

    if (1 == bu_rank) {
        win_mem = malloc(sizeof(int) * (size_t) (ints + 1));
        BU_CHECK(win_mem, "out of memory");
        for (long i = 0; i <= ints; ++i) {
            win_mem[i] = 1;
        }
    }
    dst = malloc(sizeof(int) * (size_t) ints);
    BU_CHECK(dst, "out of memory");
    MPI_Win_create(win_mem, 1 == bu_rank ? sizeof(int) * (MPI_Aint) (ints + 1) : 0, sizeof(int),
                   MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    bu_counters_total(&before);

    t0 = MPI_Wtime();
    for (int e = 0; e < epochs && !stop; ++e) {
        long bad;

        if (0 == bu_rank) {
            memset(dst, 0, sizeof(int) * (size_t) ints);
        }
        MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
        if (0 == bu_rank) {
            MPI_Get(dst, (int) ints, MPI_INT, 1, 1, (int) ints, MPI_INT, win);
            MPI_Put(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
        }
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        if (0 == bu_rank && (bad = first_bad(dst, ints)) >= 0) {
            report_bad(dst, ints, bad, dst[bad], e);
        }
        ++done;
        /* every rank stops at the same epoch: rank 0's clock decides */
        if (0 == e % 64) {
            stop = MPI_Wtime() - t0 > seconds;
            MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
        }
    }
    if (1 == bu_rank) {
        BU_CHECK(1 == win_mem[0], "the put of 1 int is missing: %d", win_mem[0]);
    }
    MPI_Win_free(&win);
    if (0 == bu_rank) {
        printf("%s: %d epochs of %ld-byte gets in %.1f s, every byte received\n", PROG, done,
               ints * (long) sizeof(int), MPI_Wtime() - t0);
    }
    ou_counters_check(PROG, &before, ou_expected(argc, argv, "helped") ? OU_GETS | OU_HELPED : 0);
    free(dst);
    free(win_mem);
    return bu_finalize(PROG);
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * finalize_job.c - one short job for test/ofi/finalize.sh: two-sided traffic
 * (eager and 1 MiB, a ring) and one-sided traffic (put, fetch-and-op,
 * flush on an allocated window), then MPI_Finalize, which must not sleep:
 * sleep, usleep and nanosleep are wrapped (the program is linked with
 * -rdynamic, so a component's calls come here) and any pause of 100 ms or
 * more asked for inside MPI_Finalize is reported. Rank 0 prints
 * "finalize: ok" when the data was right.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BIG (1 << 20)

static volatile int in_finalize;
static double longest; /* seconds, the longest pause asked for in MPI_Finalize */

static void asked(double s)
{
    if (in_finalize && s > longest) {
        longest = s;
    }
}

unsigned int sleep(unsigned int s)
{
    struct timespec ts = {(time_t) s, 0};
    asked(s);
    nanosleep(&ts, NULL); /* ours: counted again, the same length */
    return 0;
}

int usleep(useconds_t us)
{
    struct timespec ts = {(time_t) (us / 1000000), (long) (us % 1000000) * 1000};
    asked(us / 1e6);
    return nanosleep(&ts, NULL);
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
    static int (*real)(const struct timespec *, struct timespec *);
    if (NULL == real) {
        real = (int (*)(const struct timespec *, struct timespec *)) dlsym(RTLD_NEXT, "nanosleep");
    }
    asked((double) req->tv_sec + req->tv_nsec / 1e9);
    return real(req, rem);
}

static int ring(int rank, int size, int len)
{
    unsigned char *out = malloc((size_t) len + 1), *in = malloc((size_t) len + 1);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, bad = 0;

    for (int i = 0; i < len; ++i) {
        out[i] = (unsigned char) (i + rank);
    }
    MPI_Sendrecv(out, len, MPI_BYTE, next, 7, in, len, MPI_BYTE, prev, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < len; ++i) {
        bad |= in[i] != (unsigned char) (i + prev);
    }
    free(out);
    free(in);
    return bad;
}

static int one_sided(int rank, int size)
{
    int64_t *base, one = 1, old = -1, v = 1000 + rank, total = 0;
    MPI_Win win;
    int next = (rank + 1) % size, bad;

    MPI_Win_allocate(2 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                     &win);
    base[0] = base[1] = 0;
    MPI_Win_fence(0, win);
    MPI_Put(&v, 1, MPI_INT64_T, next, 1, 1, MPI_INT64_T, win);
    MPI_Win_fence(0, win);
    MPI_Win_lock_all(0, win);
    MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, 0, MPI_SUM, win);
    MPI_Win_flush(0, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    MPI_Get(&total, 1, MPI_INT64_T, rank, 0, 1, MPI_INT64_T, win);
    MPI_Win_unlock(rank, win);
    bad = base[1] != 1000 + (rank + size - 1) % size || old < 0 || old >= size ||
          (0 == rank && total != size);
    MPI_Win_free(&win);
    return bad;
}

int main(int argc, char **argv)
{
    int rank, size, bad = 0, anybad = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bad |= ring(rank, size, 100);
    bad |= ring(rank, size, BIG);
    bad |= one_sided(rank, size);
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (0 == rank) {
        printf(anybad ? "FAIL: data wrong\n" : "finalize: data ok\n");
        fflush(stdout);
    }
    in_finalize = 1;
    MPI_Finalize();
    in_finalize = 0;
    if (longest >= 0.1) {
        printf("FAIL: rank %d: MPI_Finalize paused %.3f s (sleep)\n", rank, longest);
        return 1;
    }
    if (0 == rank) {
        printf("finalize: ok\n");
    }
    return anybad;
}

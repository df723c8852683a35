/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_threads.c - MPI_THREAD_MULTIPLE: several threads per rank
 * exchange messages of random sizes with the peer rank at the same time
 * (one tag per thread), content verified; the path counters, updated from
 * every thread at once, must account for every payload byte.
 *
 * Arguments: threads=N (default 4), iters=N (default 300)
 */
#include "btl_util.h"

#include <pthread.h>

#define PROG "btl/smcuda_threads"
#define MAXMSG (300 * 1024)

static int nthreads = 4, iters = 300, peer;
static volatile int failed;
static unsigned long long payload; /* bytes this rank sent, all threads */

static size_t size_for(int t, int i)
{
    uint64_t x = (uint64_t) (t + 1) * 0x9e3779b97f4a7c15ULL ^ (uint64_t) i * 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 29;
    switch (x % 4) {
        case 0:
            return (size_t) (x >> 8) % 128;
        case 1:
            return (size_t) (x >> 8) % 4096;
        case 2:
            return (size_t) (x >> 8) % 70000;
        default:
            return (size_t) (x >> 8) % MAXMSG;
    }
}

static void *worker(void *arg)
{
    int t = (int) (intptr_t) arg;
    unsigned char *sbuf = malloc(MAXMSG), *rbuf = malloc(MAXMSG);
    for (int i = 0; i < iters && !failed; ++i) {
        size_t size = size_for(t, i);
        MPI_Request req[2];
        long bad;
        bu_fill(sbuf, size, bu_rank * 1000 + t * 7 + i);
        __atomic_fetch_add(&payload, size, __ATOMIC_RELAXED);
        MPI_Irecv(rbuf, MAXMSG, MPI_BYTE, peer, t, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(sbuf, (int) size, MPI_BYTE, peer, t, MPI_COMM_WORLD, &req[1]);
        if (MPI_SUCCESS != MPI_Waitall(2, req, MPI_STATUSES_IGNORE)) {
            printf("FAIL: rank %d thread %d: waitall failed\n", bu_rank, t);
            failed = 1;
            break;
        }
        bad = bu_verify(rbuf, size, peer * 1000 + t * 7 + i);
        if (bad >= 0) {
            printf("FAIL: rank %d thread %d iter %d (%zu bytes): wrong byte at %ld\n", bu_rank, t,
                   i, size, bad);
            failed = 1;
        }
    }
    free(sbuf);
    free(rbuf);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *a;
    int provided;
    pthread_t th[64];

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &bu_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &bu_size);
    if (MPI_THREAD_MULTIPLE != provided) {
        if (0 == bu_rank)
            printf("SKIP: MPI_THREAD_MULTIPLE not provided\n");
        MPI_Finalize();
        return 77;
    }
    if ((a = bu_arg(argc, argv, "threads")))
        nthreads = atoi(a);
    if ((a = bu_arg(argc, argv, "iters")))
        iters = atoi(a);
    BU_CHECK(bu_size == 2 && nthreads > 0 && nthreads <= 64, "needs 2 ranks, 1..64 threads");
    peer = 1 - bu_rank;
    MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided);
    bu_counters_start();
    for (int t = 0; t < nthreads; ++t)
        pthread_create(&th[t], NULL, worker, (void *) (intptr_t) t);
    for (int t = 0; t < nthreads; ++t)
        pthread_join(th[t], NULL);
    BU_CHECK(!failed, "a thread failed");
    MPI_Barrier(MPI_COMM_WORLD);
    {
        bu_counters_t c;
        unsigned long long sent = 0, counted;
        bu_counters_total(&c);
        MPI_Allreduce(&payload, &sent, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        bu_counters_print(PROG, &c);
        counted = c.bytes[BU_FBOX] + c.bytes[BU_FIFO] + c.bytes[BU_PUT] + c.bytes[BU_GET];
        /* every payload byte crossed through one of the paths (plus headers) */
        BU_CHECK(c.found, "btl_smcuda counters not found");
        BU_CHECK(counted >= sent, "path counters account for %llu bytes of %llu sent", counted,
                 sent);
    }
    for (int i = 0; i < 2 * BU_NCOUNT + 4; ++i)
        if (bu_have[i])
            MPI_T_pvar_handle_free(bu_session, &bu_handles[i]);
    MPI_T_pvar_session_free(&bu_session);
    MPI_T_finalize();
    MPI_Finalize();
    if (0 == bu_rank)
        printf("PASS: %s\n", PROG);
    return 0;
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * ofi_threads.c - one-sided MPI from several threads at once
 * (MPI_THREAD_MULTIPLE) over btl/ofi, whose threads spread over the
 * module's contexts: every thread of every rank takes tickets from rank
 * 0's counter (fetch-and-add), writes its last ticket into rank 0's window
 * and flushes; the tickets are all different and the counter adds up.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#define THREADS 4
#define ROUNDS 200

static MPI_Win win;
static int rank, size;
static int64_t tickets[THREADS][ROUNDS];

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL: rank %d: ", rank);                                                       \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            fflush(stdout);                                                                        \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static void *worker(void *arg)
{
    int t = (int) (intptr_t) arg;
    int64_t one = 1;

    for (int r = 0; r < ROUNDS; ++r) {
        MPI_Fetch_and_op(&one, &tickets[t][r], MPI_INT64_T, 0, 0, MPI_SUM, win);
        MPI_Win_flush(0, win);
    }
    MPI_Put(&tickets[t][ROUNDS - 1], 1, MPI_INT64_T, 0, 1 + rank * THREADS + t, 1, MPI_INT64_T,
            win);
    MPI_Win_flush(0, win);
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int provided;
    int64_t *base, *all;
    pthread_t th[THREADS];
    MPI_Aint n = 1 + 64 * THREADS;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(MPI_THREAD_MULTIPLE == provided, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
    CHECK(size <= 64, "at most 64 ranks");
    base = calloc((size_t) n, sizeof(*base));
    CHECK(base, "out of memory");
    MPI_Win_create(base, n * (MPI_Aint) sizeof(*base), sizeof(*base), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &win);
    MPI_Win_lock_all(0, win);
    for (int t = 0; t < THREADS; ++t) {
        pthread_create(&th[t], NULL, worker, (void *) (intptr_t) t);
    }
    for (int t = 0; t < THREADS; ++t) {
        pthread_join(th[t], NULL);
    }
    MPI_Win_unlock_all(win);
    all = malloc(sizeof(tickets) * (size_t) size);
    CHECK(all, "out of memory");
    MPI_Gather(tickets, THREADS * ROUNDS, MPI_INT64_T, all, THREADS * ROUNDS, MPI_INT64_T, 0,
               MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) {
        int64_t total = (int64_t) size * THREADS * ROUNDS;
        CHECK(base[0] == total, "counter %lld, expected %lld", (long long) base[0],
              (long long) total);
        qsort(all, (size_t) total, sizeof(*all), cmp);
        for (int64_t i = 0; i < total; ++i) {
            CHECK(all[i] == i, "ticket %lld handed out %s", (long long) i,
                  all[i] < i ? "twice" : "never");
        }
        for (int i = 0; i < size * THREADS; ++i) {
            CHECK(base[1 + i] > 0, "the put of thread %d of rank %d did not land", i % THREADS,
                  i / THREADS);
        }
    }
    MPI_Win_free(&win);
    free(all);
    free(base);
    MPI_Finalize();
    if (0 == rank) {
        printf("PASS: btl/ofi_threads\n");
    }
    return 0;
}

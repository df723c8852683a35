/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * osc_threads.c - under MPI_THREAD_MULTIPLE, threads create, use and free
 * windows at the same time (each on its own communicator): osc/monitoring's
 * window records stay right (every RMA call reaches its own window's
 * component, none is lost or counted twice, none is left at the end).
 *
 * Thread t of every rank, ROUNDS times: a window, t + 1 ints put into the
 * right neighbour's, checked there, freed.
 */
#include <pthread.h>
#include <stdlib.h>

#include "tosc.h"

#define THREADS 4
#define ROUNDS 25

static MPI_Comm comms[THREADS];

static void *worker(void *arg)
{
    int t = (int) (intptr_t) arg, right = (t_rank + 1) % t_size;
    int left = (t_rank + t_size - 1) % t_size, val[THREADS];

    for (int n = 0; n < ROUNDS; n++) {
        MPI_Win win;
        int *base;

        T_MPI(MPI_Win_allocate(THREADS * sizeof(int), sizeof(int), MPI_INFO_NULL, comms[t], &base,
                               &win));
        for (int i = 0; i <= t; i++) {
            val[i] = 1000 * t_rank + 100 * t + n + i;
        }
        T_MPI(MPI_Win_fence(0, win));
        T_MPI(MPI_Put(val, t + 1, MPI_INT, right, 0, t + 1, MPI_INT, win));
        T_MPI(MPI_Win_fence(0, win));
        for (int i = 0; i <= t; i++) {
            T_CHECK(base[i] == 1000 * left + 100 * t + n + i, "thread %d round %d [%d] = %d", t, n,
                    i, base[i]);
        }
        T_MPI(MPI_Win_free(&win));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h[2];
    pthread_t th[THREADS];
    unsigned long long got[2][64] = {{0}}, held, bytes = 0;
    int right;

    setenv("OB1X_TEST_NO_PVARS", "1", 1); /* no pml_ob1x counters needed */
    t_init(&argc, &argv, MPI_THREAD_MULTIPLE);
    T_CHECK(t_size <= 64, "at most 64 ranks");
    right = (t_rank + 1) % t_size;
    T_MPI(MPI_T_pvar_session_create(&s));
    h[0] = tosc_open_peer_var(s, "osc_monitoring_messages_sent_count");
    h[1] = tosc_open_peer_var(s, "osc_monitoring_messages_sent_size");
    for (int t = 0; t < THREADS; t++) {
        T_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    }
    for (int t = 0; t < THREADS; t++) {
        T_CHECK(0 == pthread_create(&th[t], NULL, worker, (void *) (intptr_t) t), "pthread_create");
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        bytes += (unsigned long long) ROUNDS * 4 * (t + 1);
    }
    held = tosc_windows_held(s);
    T_CHECK(0 == held, "%llu windows held after every thread freed its own", held);
    T_MPI(MPI_T_pvar_read(s, h[0], got[0]));
    T_MPI(MPI_T_pvar_read(s, h[1], got[1]));
    T_CHECK(got[0][right] == THREADS * ROUNDS && got[1][right] == bytes,
            "sent to %d: %llu messages %llu bytes, want %d and %llu", right, got[0][right],
            got[1][right], THREADS * ROUNDS, bytes);
    for (int t = 0; t < THREADS; t++) {
        MPI_Comm_free(&comms[t]);
    }
    MPI_T_pvar_handle_free(s, &h[0]);
    MPI_T_pvar_handle_free(s, &h[1]);
    MPI_T_pvar_session_free(&s);
    return t_finalize();
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * threads.c - exact counts under MPI_THREAD_MULTIPLE: 4 threads per
 * process each send 500 messages of 8 bytes to the right neighbour (and
 * receive as many from the left) at the same time; every message must be
 * counted once, at the sender and at the receiver (the engine's adds are
 * atomic when Open MPI runs threads). Run with pml_monitoring_enable 2.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmon.c"

#define NTHREADS 4
#define NMSG 500

static void *worker(void *arg)
{
    int t = (int) (intptr_t) arg, right = (t_rank + 1) % t_size,
        left = (t_rank + t_size - 1) % t_size;
    char out[8] = {0}, in[8];

    for (int i = 0; i < NMSG; ++i) {
        MPI_Sendrecv(out, 8, MPI_BYTE, right, 100 + t, in, 8, MPI_BYTE, left, 100 + t,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    static const char *names[] = {"pml_monitoring_messages_count", "pml_monitoring_messages_size",
                                  "pml_monitoring_messages_recv_count"};
    unsigned long long v[3][64], want[3];
    MPI_T_pvar_handle h[3];
    pthread_t th[NTHREADS];
    int provided, count, right, left;
    const char *slash = strrchr(argv[0], '/');

    t_prog = NULL != slash ? slash + 1 : argv[0];
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
    T_CHECK(MPI_THREAD_MULTIPLE == provided && t_size <= 64, "thread level %d, size %d", provided,
            t_size);
    T_MPI(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    T_MPI(MPI_T_pvar_session_create(&tmon_session));
    right = (t_rank + 1) % t_size;
    left = (t_rank + t_size - 1) % t_size;
    for (int i = 0; i < 3; ++i) {
        h[i] = tmon_handle(names[i], MPI_COMM_WORLD, &count);
        T_MPI(MPI_T_pvar_start(tmon_session, h[i]));
    }
    for (int t = 0; t < NTHREADS; ++t) {
        pthread_create(&th[t], NULL, worker, (void *) (intptr_t) t);
    }
    for (int t = 0; t < NTHREADS; ++t) {
        pthread_join(th[t], NULL);
    }
    want[0] = NTHREADS * NMSG;
    want[1] = NTHREADS * NMSG * 8;
    want[2] = NTHREADS * NMSG;
    for (int i = 0; i < 3; ++i) {
        tmon_read(h[i], v[i]);
        T_CHECK(v[i][i < 2 ? right : left] == want[i], "%s[%d] = %llu, expected %llu", names[i],
                i < 2 ? right : left, v[i][i < 2 ? right : left], want[i]);
        T_MPI(MPI_T_pvar_stop(tmon_session, h[i]));
        T_MPI(MPI_T_pvar_handle_free(tmon_session, &h[i]));
    }
    tmon_finalize();
    return 0;
}

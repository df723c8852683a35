/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * kill_worker.c - for test/ofi/kill.sh: every rank streams to the next one
 * (MPI_Sendrecv of 4 MiB and of small sizes) and puts 64 KiB into it in
 * a lock_all epoch (MPI_Put + MPI_Win_flush), forever; the last rank prints
 * "worker: killing" and SIGKILLs itself after 0.5 s. The job must then end
 * with an error (the driver checks how and when).
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BIG (4 << 20)
#define PUT (64 << 10)

int main(int argc, char **argv)
{
    int rank, size, next, prev;
    unsigned char *sbuf = malloc(BIG), *rbuf = malloc(BIG), *wbase;
    MPI_Win win;
    double t0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* for kill.sh: the ranks die without MPI_Finalize, so libfabric's shm
     * provider leaves its /dev/shm file ("PID:...") of each behind */
    printf("worker: rank %d pid %ld\n", rank, (long) getpid());
    fflush(stdout);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    memset(sbuf, rank, BIG);
    MPI_Win_allocate(PUT, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wbase, &win);
    MPI_Win_lock_all(0, win);
    t0 = MPI_Wtime();
    for (long it = 0;; ++it) {
        int len = 0 == it % 3 ? BIG : (int) (it % 2000);
        MPI_Sendrecv(sbuf, len, MPI_BYTE, next, 1, rbuf, BIG, MPI_BYTE, prev, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Put(sbuf, PUT, MPI_BYTE, next, 0, PUT, MPI_BYTE, win);
        MPI_Win_flush(next, win);
        if (size - 1 == rank && MPI_Wtime() - t0 > 0.5) {
            printf("worker: killing rank %d after %ld iterations\n", rank, it);
            fflush(stdout);
            kill(getpid(), SIGKILL);
        }
    }
    return 0; /* not reached */
}

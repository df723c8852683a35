/* Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE. */
/*
 * The application of monitoring-tools.stock_run (built by stock_run.sh):
 * each rank sends 3 messages of 400, 800 and 1200 bytes (tag 7) to the next
 * rank of a ring, then puts 20 bytes into the next rank's window under a
 * fence. Known matrices: external 2400 bytes / 3 messages per ring edge,
 * one-sided 20 bytes / 1 put per edge.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, buf[300] = {0}, in[300];
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int k = 1; k <= 3; k++) {
        MPI_Sendrecv(buf, 100 * k, MPI_INT, next, 7, in, 300, MPI_INT, prev, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    }
    MPI_Win_create(in, sizeof(in), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    MPI_Put(buf, 5, MPI_INT, next, 0, 5, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}

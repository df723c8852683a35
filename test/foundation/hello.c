/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Smallest real job: every rank passes a token around the ring and the sum of
 * the ranks is checked with an allreduce. Proves the harness builds and runs
 * a program under mpirun with whatever PML/BTLs the list line selects.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, token, sum;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int next = (rank + 1) % size;
    int prev = (rank + size - 1) % size;
    MPI_Sendrecv(&rank, 1, MPI_INT, next, 7, &token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (token != prev) {
        printf("FAIL: rank %d got token %d from rank %d\n", rank, token, prev);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum != size * (size - 1) / 2) {
        printf("FAIL: rank %d: sum of ranks is %d, expected %d\n", rank, sum,
               size * (size - 1) / 2);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    if (0 == rank) {
        printf("%d ranks passed the token around\n", size);
    }
    MPI_Finalize();
    return 0;
}

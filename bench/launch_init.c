/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * launch_init.c - for bench/launch-times -m: rank 0 prints the wall-clock
 * time (CLOCK_REALTIME, seconds) once every rank has returned from
 * MPI_Init (a barrier after it), and the number of ranks. The script
 * subtracts mpirun's start: "mpirun start to all ranks in MPI_Init". The
 * hosts must share a clock (namespace hosts of one machine do).
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv)
{
    struct timespec ts;
    int rank = 0, size = 0;

    MPI_Init(&argc, &argv);
    MPI_Barrier(MPI_COMM_WORLD);
    clock_gettime(CLOCK_REALTIME, &ts);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (0 == rank) {
        printf("launch_init: %d ranks %.6f\n", size, (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec);
    }
    MPI_Finalize();
    return 0;
}

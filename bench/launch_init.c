/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * launch_init.c - for bench/launch-times -m: every rank prints the
 * wall-clock time (CLOCK_REALTIME, seconds) at which it returned from
 * MPI_Init, with its rank and the number of ranks. The script takes the
 * latest of them and subtracts mpirun's start: "mpirun start to all ranks
 * in MPI_Init". The hosts must share a clock (namespace hosts of one
 * machine do). No message is exchanged after MPI_Init: a barrier would
 * add the time the BTLs need to connect every pair, which is not launch
 * time (and btl/tcp between 128 namespace hosts on two cores could not
 * connect within 300 s).
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv)
{
    struct timespec ts;
    int rank = 0, size = 0;

    MPI_Init(&argc, &argv);
    clock_gettime(CLOCK_REALTIME, &ts);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("launch_init: %d ranks %.6f rank %d\n", size,
           (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec, rank);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * An application that knows nothing of monitoring (no MPI_T, no test
 * helpers), for libob1x_monitoring_prof.so to watch (preload_ring.sh, preload_missing.sh):
 * a token of BYTES bytes goes LAPS times round MPI_COMM_WORLD, so every
 * rank sends LAPS messages of BYTES bytes to its right neighbour and
 * nothing else. Each hop adds one to the token's first byte, checked.
 *
 *   preload_app LAPS BYTES
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, laps, bytes, errors = 0;
    unsigned char *token;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    laps = argc > 1 ? atoi(argv[1]) : 4;
    bytes = argc > 2 ? atoi(argv[2]) : 1000;
    token = calloc(bytes > 0 ? bytes : 1, 1);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int lap = 0; lap < laps; lap++) {
        if (0 != rank) {
            MPI_Recv(token, bytes, MPI_BYTE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (bytes > 0 && token[0] != (unsigned char) (lap * size + rank)) {
                errors++;
            }
        }
        if (bytes > 0) {
            token[0]++;
        }
        MPI_Send(token, bytes, MPI_BYTE, right, 7, MPI_COMM_WORLD);
        if (0 == rank) {
            MPI_Recv(token, bytes, MPI_BYTE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (bytes > 0 && token[0] != (unsigned char) ((lap + 1) * size)) {
                errors++;
            }
        }
    }
    if (errors) {
        fprintf(stderr, "rank %d: %d wrong tokens\n", rank, errors);
    }
    free(token);
    MPI_Finalize();
    return errors ? 1 : 0;
}

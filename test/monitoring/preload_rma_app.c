/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * An application that knows nothing of monitoring, for
 * libob1x_monitoring_prof.so (preload_rma.sh): in a window from
 * MPI_Win_allocate, between fences, every rank puts PUTS blocks of BYTES
 * bytes into its right neighbour and gets GETS blocks of BYTES bytes from
 * its left one; the data are checked.
 *
 *   preload_rma_app PUTS GETS BYTES
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, errors = 0;
    unsigned char *base, *buf;
    MPI_Win win;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int puts = atoi(argv[1]), gets = atoi(argv[2]), bytes = atoi(argv[3]);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    /* Block k of the window: what the left neighbour put (k < puts), then
     * this rank's own bytes for the right neighbour to get. */
    MPI_Win_allocate((MPI_Aint) (puts + 1) * bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    buf = malloc((size_t) bytes * 2);
    memset(base, 0, (size_t) (puts + 1) * bytes);
    memset(base + (size_t) puts * bytes, 100 + rank, bytes);
    memset(buf, rank, bytes);
    MPI_Win_fence(0, win);
    for (int k = 0; k < puts; k++) {
        MPI_Put(buf, bytes, MPI_BYTE, right, (MPI_Aint) k * bytes, bytes, MPI_BYTE, win);
    }
    for (int k = 0; k < gets; k++) {
        MPI_Get(buf + bytes, bytes, MPI_BYTE, left, (MPI_Aint) puts * bytes, bytes, MPI_BYTE, win);
    }
    MPI_Win_fence(0, win);
    for (int k = 0; k < puts * bytes; k++) {
        errors += base[k] != (unsigned char) left;
    }
    for (int k = 0; k < bytes; k++) {
        errors += buf[bytes + k] != (unsigned char) (100 + left);
    }
    if (errors) {
        fprintf(stderr, "rank %d: %d wrong bytes\n", rank, errors);
    }
    MPI_Win_free(&win);
    free(buf);
    MPI_Finalize();
    return errors ? 1 : 0;
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * ofi_hmem.c - a GPU program as btl/ofi sees it at MPI_Init: the driver
 * (here the emulation, linked in) is loaded and initialised before
 * MPI_Init, as an application choosing its device does. Then the two ranks
 * exchange host messages over btl/ofi, contents checked. What btl/ofi made
 * of CUDA is checked by the script from its verbose lines.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/* The driver entry point (cuda.h is not needed: CUresult is an int, 0 on
 * success). */
extern int cuInit(unsigned int flags);

int main(int argc, char **argv)
{
    char buf[4096];
    int rank, size, bad = 0;

    if (0 != cuInit(0)) {
        fprintf(stderr, "ofi_hmem: cuInit failed\n");
        return 1;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int round = 0; round < 10 && 2 == size; ++round) {
        if (0 == rank) {
            memset(buf, 'a' + round, sizeof(buf));
            MPI_Send(buf, sizeof(buf), MPI_CHAR, 1, round, MPI_COMM_WORLD);
        } else {
            memset(buf, 0, sizeof(buf));
            MPI_Recv(buf, sizeof(buf), MPI_CHAR, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (size_t i = 0; i < sizeof(buf); ++i) {
                bad += buf[i] != 'a' + round;
            }
        }
    }
    if (bad) {
        fprintf(stderr, "ofi_hmem: %d wrong bytes\n", bad);
    }
    MPI_Finalize();
    return 0 != bad || 2 != size;
}

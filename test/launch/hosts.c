/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * hosts.c - every rank reports the host it runs on: rank 0 gathers the
 * host names and prints one line per rank,
 *     hosts: rank R host H
 * then "hosts: N ranks reported". Used by the ssh launch tests
 * (test/launch/ssh_hosts.sh), which compare the lines with the hostfile.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME_LEN 64

int main(int argc, char **argv)
{
    char mine[NAME_LEN];
    char *all = NULL;
    int rank, size, r;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    memset(mine, 0, sizeof(mine));
    if (0 != gethostname(mine, sizeof(mine) - 1)) {
        strcpy(mine, "?");
    }
    if (0 == rank) {
        all = calloc((size_t) size, NAME_LEN);
        if (NULL == all) {
            fprintf(stderr, "hosts: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    /* every rank, not only those rank 0 can reach directly: the job's
     * communication works between all hosts */
    MPI_Gather(mine, NAME_LEN, MPI_CHAR, all, NAME_LEN, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        for (r = 0; r < size; r++) {
            printf("hosts: rank %d host %.*s\n", r, NAME_LEN, all + (size_t) r * NAME_LEN);
        }
        printf("hosts: %d ranks reported\n", size);
        free(all);
    }
    MPI_Finalize();
    return 0;
}

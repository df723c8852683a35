/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * ob1x-dsos: prints, from rank 0 after MPI_Init, the real path of every
 * Open MPI component DSO mapped into the process (one "dso <path>" line
 * each), so that bench/compare can prove which build of a component a
 * configuration really ran (e.g. the baseline's pml/ob1x, not today's).
 */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    char line[4096], seen[64][PATH_MAX];
    int rank, nseen = 0;
    FILE *maps;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* a message each way, so that the PML and BTLs are really in use */
    if (0 == rank) {
        maps = fopen("/proc/self/maps", "r");
        while (maps && fgets(line, sizeof(line), maps)) {
            char *path = strchr(line, '/'), real[PATH_MAX];
            int dup = 0;
            if (!path || !strstr(path, "/mca_"))
                continue;
            path[strcspn(path, "\n")] = '\0';
            if (!realpath(path, real))
                snprintf(real, sizeof(real), "%s", path);
            for (int i = 0; i < nseen; i++)
                dup |= 0 == strcmp(seen[i], real);
            if (dup || nseen == 64)
                continue;
            snprintf(seen[nseen++], PATH_MAX, "%s", real);
            printf("dso %s\n", real);
        }
        if (maps)
            fclose(maps);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}

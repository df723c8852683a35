/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Proves which component DSOs a job really loaded, and from where. After
 * MPI_Init every rank reads /proc/self/maps and checks:
 *   --expect fw_name   mca_fw_name.so is mapped, from inside the build tree
 *                      ($OB1X_BUILDDIR, set by test/run-tests)
 *   --present fw_name  mca_fw_name.so is mapped, from anywhere
 *   --absent fw_name   no mca_fw_name.so is mapped at all
 * Rank 0 prints every component DSO it found.
 */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DSOS 256

struct dso {
    char name[128]; /* fw_name, from the file name mca_fw_name.so */
    char path[PATH_MAX];
};

/* Fills dsos[] with the distinct mca_*.so mapped into this process. */
static int read_maps(struct dso *dsos, int max)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[PATH_MAX + 256];
    int n = 0;

    if (NULL == maps) {
        return -1;
    }
    while (n < max && fgets(line, sizeof(line), maps)) {
        char *path = strchr(line, '/');
        if (NULL == path) {
            continue;
        }
        path[strcspn(path, "\n")] = '\0';
        const char *base = strrchr(path, '/') + 1;
        size_t len = strlen(base);
        if (strncmp(base, "mca_", 4) != 0 || len < 8 || strcmp(base + len - 3, ".so") != 0) {
            continue;
        }
        int seen = 0;
        for (int i = 0; i < n; i++) {
            seen |= (0 == strcmp(dsos[i].path, path));
        }
        if (seen) {
            continue;
        }
        snprintf(dsos[n].name, sizeof(dsos[n].name), "%.*s", (int) (len - 7), base + 4);
        snprintf(dsos[n].path, sizeof(dsos[n].path), "%s", path);
        n++;
    }
    fclose(maps);
    return n;
}

int main(int argc, char **argv)
{
    struct dso dsos[MAX_DSOS];
    char builddir[PATH_MAX];
    int rank, errors = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    const char *env = getenv("OB1X_BUILDDIR");
    if (NULL == env || NULL == realpath(env, builddir)) {
        printf("FAIL: OB1X_BUILDDIR is not set to a directory (run me from test/run-tests)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    int n = read_maps(dsos, MAX_DSOS);
    if (n < 0) {
        printf("FAIL: cannot read /proc/self/maps\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (0 == rank) {
        for (int i = 0; i < n; i++) {
            printf("loaded %-20s %s\n", dsos[i].name, dsos[i].path);
        }
    }

    for (int a = 1; a < argc; a++) {
        int expect = (0 == strcmp(argv[a], "--expect"));
        int present = (0 == strcmp(argv[a], "--present"));
        if ((!expect && !present && strcmp(argv[a], "--absent") != 0) || a + 1 >= argc) {
            printf("FAIL: usage: loaded_from [--expect|--present|--absent fw_name] ...\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        const char *want = argv[++a];
        int found = 0;
        for (int i = 0; i < n; i++) {
            if (strcmp(dsos[i].name, want) != 0) {
                continue;
            }
            found = 1;
            if (present) {
                continue;
            }
            if (!expect) {
                printf("FAIL: rank %d: %s is loaded (%s) but should not be\n", rank, want,
                       dsos[i].path);
                errors++;
            } else if (strncmp(dsos[i].path, builddir, strlen(builddir)) != 0 ||
                       dsos[i].path[strlen(builddir)] != '/') {
                printf("FAIL: rank %d: %s is loaded from %s, outside the build tree %s\n", rank,
                       want, dsos[i].path, builddir);
                errors++;
            }
        }
        if ((expect || present) && !found) {
            printf("FAIL: rank %d: %s is not loaded\n", rank, want);
            errors++;
        }
    }

    int total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return total ? 1 : 0;
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_kill.c - one rank is SIGKILLed in the middle of transfers: the
 * job must end with an error within 10 s of the kill, and no btl/smcuda
 * file may be left behind.
 *
 * Run as a single process (np 1): it does not call MPI_Init itself but
 * starts a child job (mpirun -np 3 of this program with the `worker`
 * argument, a private backing directory under /dev/shm, a clean
 * environment), watches its output for the kill, and checks the result.
 *
 * Arguments: pml=NAME (default ob1), any further --mca pairs are passed
 * to the child as "mca:NAME=VALUE".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "btl_child.h"

#define PROG "btl/smcuda_kill"
#define VICTIM 2
#define KILL_DEADLINE 10.0

static int fail(const char *what)
{
    printf("FAIL: %s\n", what);
    fflush(stdout);
    return 1;
}

/* ------------------------------------------------------------------ */

static int worker(void)
{
    int rank, size;
    const size_t big = 4u << 20;
    unsigned char *sbuf = malloc(big), *rbuf = malloc(big);
    double t0;

    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    memset(sbuf, rank, big);
    t0 = MPI_Wtime();
    for (long it = 0;; ++it) {
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        size_t len = (it % 3 == 0) ? big : (size_t) (it % 2000);
        MPI_Sendrecv(sbuf, (int) len, MPI_BYTE, right, 1, rbuf, (int) big, MPI_BYTE, left, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (VICTIM == rank && MPI_Wtime() - t0 > 0.5) {
            printf("worker: killing rank %d after %ld iterations\n", rank, it);
            fflush(stdout);
            kill(getpid(), SIGKILL);
        }
    }
    return 0; /* not reached */
}

/* ------------------------------------------------------------------ */

static int dir_empty(const char *dir, char *leftover, size_t len)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int empty = 1;
    if (NULL == d)
        return 1;
    while ((de = readdir(d))) {
        if (0 == strcmp(de->d_name, ".") || 0 == strcmp(de->d_name, ".."))
            continue;
        snprintf(leftover, len, "%s", de->d_name);
        empty = 0;
    }
    closedir(d);
    return empty;
}

static int driver(int argc, char **argv)
{
    char dir[256], self[1024], leftover[256] = "", pmlbuf[64] = "ob1";
    char *cargv[64];
    const char *mpirun = getenv("OB1X_MPIRUN") ? getenv("OB1X_MPIRUN") : "mpirun";
    int status = 0, na = 0, killed;
    double t_kill = 0, t_end;
    ssize_t sl;

    sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (sl <= 0)
        return fail("cannot find own executable");
    self[sl] = '\0';
    snprintf(dir, sizeof(dir), "/dev/shm/ob1x_killtest.%d", (int) getpid());
    if (0 != mkdir(dir, 0700))
        return fail("cannot create the backing directory");

    cargv[na++] = (char *) mpirun;
    cargv[na++] = "-np";
    cargv[na++] = "3";
    cargv[na++] = "--oversubscribe";
    for (int i = 1; i < argc; ++i)
        if (0 == strncmp(argv[i], "pml=", 4))
            snprintf(pmlbuf, sizeof(pmlbuf), "%s", argv[i] + 4);
    cargv[na++] = "--mca";
    cargv[na++] = "pml";
    cargv[na++] = pmlbuf;
    cargv[na++] = "--mca";
    cargv[na++] = "btl";
    cargv[na++] = "self,smcuda";
    cargv[na++] = "--mca";
    cargv[na++] = "btl_smcuda_backing_directory";
    cargv[na++] = dir;
    for (int i = 1; i < argc && na < 56; ++i) {
        if (0 == strncmp(argv[i], "mca:", 4) && strchr(argv[i], '=')) {
            char *kv = strdup(argv[i] + 4);
            char *eq = strchr(kv, '=');
            *eq = '\0';
            cargv[na++] = "--mca";
            cargv[na++] = kv;
            cargv[na++] = eq + 1;
        }
    }
    cargv[na++] = self;
    cargv[na++] = "worker";
    cargv[na] = NULL;

    if (0 != btl_child_run_kill(cargv, 120, NULL != getenv("SMCUDA_KILL_VERBOSE"), &t_kill, &t_end,
                                &status))
        return fail("cannot start mpirun");
    killed = 0 != t_kill;

    if (!killed)
        return fail("the child job never reached the kill");
    if (WIFEXITED(status) && 0 == WEXITSTATUS(status))
        return fail("the child job exited 0");
    printf("%s: job ended %.2f s after the kill (status %d)\n", PROG, t_end - t_kill,
           WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
    if (t_end - t_kill > KILL_DEADLINE)
        return fail("job took more than 10 s to end");
    if (!dir_empty(dir, leftover, sizeof(leftover))) {
        printf("FAIL: left in %s: %s\n", dir, leftover);
        return 1;
    }
    rmdir(dir);
    printf("PASS: %s\n", PROG);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && 0 == strcmp(argv[1], "worker"))
        return worker();
    return driver(argc, argv);
}

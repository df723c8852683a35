/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * rdma_kill.c - a peer dies in the middle of a 64 MiB RDMA transfer: the
 * job must end with an error within 15 s of the kill, never hang.
 *
 * Run as a single process (np 1): it does not call MPI_Init itself but
 * starts a child job (mpirun -np 2 with the list line's own mpirun options,
 * OB1X_MPIRUN_OPTS, and a clean environment) of this program with the
 * `worker` argument, watches its output for the kill, and judges the end.
 *
 * Workers: rank 0 sends 64 MiB messages to rank 1 in a loop (with the
 * protocols of the line's options: RGET over vader with CMA). On the third
 * message the victim (victim=0: the sender, right after its MPI_Isend
 * started the RGET; victim=1: the receiver, after a few MPI_Test calls
 * started its gets) SIGKILLs itself.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../btl/btl_child.h"

#define PROG "pml/rdma_kill"
#define BIG (64u << 20)
#define KILL_DEADLINE 15.0

static int fail(const char *what)
{
    printf("FAIL: %s [%s]\n", what, PROG);
    fflush(stdout);
    return 1;
}

static void die_now(int rank, long it)
{
    printf("worker: killing rank %d in the middle of message %ld\n", rank, it);
    fflush(stdout);
    kill(getpid(), SIGKILL);
}

static int worker(int victim)
{
    int rank;
    unsigned char *buf = malloc(BIG);
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    memset(buf, 0x5a + rank, BIG);
    for (long it = 0;; ++it) {
        MPI_Request r;
        int done = 0;
        if (0 == rank)
            MPI_Isend(buf, BIG, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &r);
        else
            MPI_Irecv(buf, BIG, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &r);
        if (2 == it && victim == rank) {
            /* the receiver starts its gets in progress; the sender has
             * sent its RGET (registration and all) in the Isend */
            for (int i = 0; i < 3 && 1 == rank; i++)
                MPI_Test(&r, &done, MPI_STATUS_IGNORE);
            die_now(rank, it);
        }
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    return 0; /* not reached */
}

static int driver(int argc, char **argv)
{
    char self[1024], victim[32] = "worker1";
    char *cargv[96], *opts;
    const char *mpirun = getenv("MPIRUN") ? getenv("MPIRUN") : "mpirun";
    int status = 0, na = 0, killed;
    double t_kill = 0, t_end;
    ssize_t sl;

    sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (sl <= 0)
        return fail("cannot find own executable");
    self[sl] = '\0';
    for (int i = 1; i < argc; ++i)
        if (0 == strncmp(argv[i], "victim=", 7))
            snprintf(victim, sizeof(victim), "worker%s", argv[i] + 7);

    cargv[na++] = (char *) mpirun;
    cargv[na++] = "-np";
    cargv[na++] = "2";
    cargv[na++] = "--oversubscribe";
    cargv[na++] = "--mca";
    cargv[na++] = "btl_base_warn_component_unused";
    cargv[na++] = "0";
    /* the list line's options (--mca pml ob1x --mca btl ...) */
    opts = strdup(getenv("OB1X_MPIRUN_OPTS") ? getenv("OB1X_MPIRUN_OPTS") : "");
    for (char *tok = strtok(opts, " \t"); tok && na < 90; tok = strtok(NULL, " \t"))
        cargv[na++] = tok;
    cargv[na++] = self;
    cargv[na++] = victim;
    cargv[na] = NULL;

    if (0 != btl_child_run_kill(cargv, 150, 1, &t_kill, &t_end, &status))
        return fail("cannot start mpirun");
    killed = 0 != t_kill;

    if (!killed)
        return fail("the child job never reached the kill");
    if (WIFEXITED(status) && 0 == WEXITSTATUS(status))
        return fail("the child job exited 0");
    printf("%s: job ended %.2f s after the kill (status %d)\n", PROG, t_end - t_kill,
           WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
    if (t_end - t_kill > KILL_DEADLINE)
        return fail("the job took more than 15 s to end");
    printf("PASS: %s\n", PROG);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && 0 == strncmp(argv[1], "worker", 6))
        return worker(atoi(argv[1] + 6));
    return driver(argc, argv);
}

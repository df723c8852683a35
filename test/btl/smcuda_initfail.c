/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_initfail.c - MPI_Init that does not complete must leave no
 * btl/smcuda file behind: the PML refuses a parameter (case=param) or
 * cannot be selected (case=prio, pml_ob1x_priority -1) after btl/smcuda
 * made its segment, or one rank is SIGKILLed at a random moment 0-0.3 s
 * after it entered MPI_Init (case=kill, `rounds` jobs).
 *
 * Run as a single process (np 1): it does not call MPI_Init itself but
 * starts child jobs (mpirun -np 2 of this program with the `worker`
 * argument, a clean environment, the default backing directory). Each
 * worker writes its pid into a private directory before MPI_Init; after the
 * job has ended (within 60 s, or the test fails as a hang), the driver looks
 * in /dev/shm for files of those pids only (btl/smcuda names a file
 * ob1x_smcuda.<jobid>.<vpid>.<pid>), as other jobs may run on the machine.
 * Files it finds are reported and removed.
 *
 * case=refuse: parameters btl/smcuda must refuse (given as mca:...) make
 * MPI_Init fail, with a message that contains expect_msg=TEXT, and leave
 * nothing either.
 *
 * Arguments: case=param|prio|kill|refuse, rounds=N (kill; default 20),
 * pml=NAME (default ob1x), expect_msg=TEXT (refuse: a word of the
 * message), cleanup=runtime, further child parameters as "mca:NAME=VALUE".
 *
 * cleanup=runtime is for named segments, whose names a killed process
 * leaves to the run time to remove when the job ends: a round in which
 * mpirun itself hung in Open MPI's shutdown and had to be killed never
 * reaches that cleanup, so files left in such a round are reported, not
 * failed. Every other round must still leave nothing.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "btl_child.h"

#define PROG "btl/smcuda_initfail"
#define NP 2
#define JOB_DEADLINE 60.0
#define SHM_DIR "/dev/shm"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ */
/* worker                                                              */
/* ------------------------------------------------------------------ */

static long kill_delay_us;

static void *killer(void *arg)
{
    struct timespec ts = {kill_delay_us / 1000000, (kill_delay_us % 1000000) * 1000};
    (void) arg;
    nanosleep(&ts, NULL);
    kill(getpid(), SIGKILL);
    return NULL;
}

static void mark(const char *dir, const char *what, int rank)
{
    char path[512], text[32];
    int fd;
    snprintf(path, sizeof(path), "%s/%s.%d", dir, what, rank);
    fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
    if (fd >= 0) {
        int n = snprintf(text, sizeof(text), "%d\n", (int) getpid());
        (void) !write(fd, text, (size_t) n);
        close(fd);
    }
}

/* worker DIR KILL_RANK DELAY_US */
static int worker(int argc, char **argv)
{
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    int rank = r ? atoi(r) : -1, token = 1;
    pthread_t t;

    if (argc < 5)
        return 2;
    mark(argv[2], "pid", rank);
    kill_delay_us = atol(argv[4]);
    if (rank == atoi(argv[3]) && 0 != pthread_create(&t, NULL, killer, NULL))
        return 2;
    MPI_Init(NULL, NULL);
    mark(argv[2], "init", rank);
    MPI_Allreduce(MPI_IN_PLACE, &token, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == atoi(argv[3]))
        pause(); /* the kill comes after MPI_Init: still the job must end */
    MPI_Finalize();
    return 0;
}

/* ------------------------------------------------------------------ */
/* driver                                                              */
/* ------------------------------------------------------------------ */

typedef struct {
    const char *kase;
    const char *pml;
    const char *expect_msg;
    int rounds;
    int runtime_cleanup; /* cleanup=runtime: see the top of this file */
    char *extra[32]; /* "--mca NAME VALUE" triples from mca:NAME=VALUE */
    int n_extra;
} opts_t;

static int read_pid(const char *dir, const char *what, int rank)
{
    char path[512];
    int pid = 0;
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s.%d", dir, what, rank);
    f = fopen(path, "r");
    if (NULL == f)
        return 0;
    if (1 != fscanf(f, "%d", &pid))
        pid = 0;
    fclose(f);
    return pid;
}

/* Files of process `pid` in /dev/shm: reported, then removed. */
static int leftovers_of(int pid)
{
    char suffix[32], path[600];
    size_t sl;
    DIR *d = opendir(SHM_DIR);
    struct dirent *de;
    int found = 0;

    if (NULL == d)
        return 0;
    sl = (size_t) snprintf(suffix, sizeof(suffix), ".%d", pid);
    while ((de = readdir(d))) {
        size_t nl = strlen(de->d_name);
        if (0 != strncmp(de->d_name, "ob1x_smcuda.", 12) || nl < sl ||
            0 != strcmp(de->d_name + nl - sl, suffix))
            continue;
        snprintf(path, sizeof(path), "%s/%s", SHM_DIR, de->d_name);
        printf("left behind by pid %d: %s\n", pid, path);
        unlink(path);
        ++found;
    }
    closedir(d);
    return found;
}

/* Whether process `pid` still runs (a zombie does not). */
static int alive(int pid)
{
    char path[64], line[256], *p;
    FILE *f;
    int running = 0;
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    f = fopen(path, "r");
    if (NULL == f)
        return 0;
    if (fgets(line, sizeof(line), f) && NULL != (p = strrchr(line, ')')))
        running = 'Z' != p[2] && 'X' != p[2];
    fclose(f);
    return running;
}

/* Workers still running; -1 before any has started. */
static int workers_alive(const char *dir)
{
    int n = 0, known = 0;
    for (int r = 0; r < NP; ++r) {
        int pid = read_pid(dir, "pid", r);
        known += 0 != pid;
        n += 0 != pid && alive(pid);
    }
    return known ? n : -1;
}

/* Open MPI 4.1.4's mpirun now and then deadlocks in its own finalize
 * (PMIx_server_finalize, waiting on a lock) after a rank was killed,
 * every rank being gone already: not a hang of the job's processes. */
#define MPIRUN_STUCK 15.0

/* Starts one child job; returns its exit status (-1: hung, -2: mpirun
 * stuck after every rank ended; both killed). */
static int run_job(const opts_t *o, const char *self, const char *dir, int kill_rank, long delay_us)
{
    double gone_since = 0;
    const char *mpirun = getenv("OB1X_MPIRUN") ? getenv("OB1X_MPIRUN") : "mpirun";
    char *av[80], krank[16], delay[32], np[8];
    int na = 0, status;
    double t0 = now();
    pid_t child;

    snprintf(krank, sizeof(krank), "%d", kill_rank);
    snprintf(delay, sizeof(delay), "%ld", delay_us);
    snprintf(np, sizeof(np), "%d", NP);
    av[na++] = (char *) mpirun;
    av[na++] = "-np";
    av[na++] = np;
    av[na++] = "--oversubscribe";
    av[na++] = "--mca";
    av[na++] = "btl_base_warn_component_unused";
    av[na++] = "0";
    av[na++] = "--mca";
    av[na++] = "pml";
    av[na++] = (char *) o->pml;
    av[na++] = "--mca";
    av[na++] = "btl";
    av[na++] = "self,smcuda";
    if (0 == strcmp(o->kase, "param")) {
        av[na++] = "--mca";
        av[na++] = "pml_ob1x_send_pipeline_depth";
        av[na++] = "0";
    } else if (0 == strcmp(o->kase, "prio")) {
        av[na++] = "--mca";
        av[na++] = "pml_ob1x_priority";
        av[na++] = "-1";
    }
    for (int i = 0; i < o->n_extra; ++i)
        av[na++] = o->extra[i];
    av[na++] = (char *) self;
    av[na++] = "worker";
    av[na++] = (char *) dir;
    av[na++] = krank;
    av[na++] = delay;
    av[na] = NULL;

    child = fork();
    if (0 == child) {
        char out[300];
        int null = open("/dev/null", O_RDWR), fd;
        snprintf(out, sizeof(out), "%s/out", dir);
        fd = open(out, O_CREAT | O_WRONLY | O_TRUNC, 0600);
        if (!getenv("SMCUDA_INITFAIL_VERBOSE")) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        dup2(null, 0);
        setpgid(0, 0);
        execvpe(mpirun, av, btl_child_env());
        _exit(127);
    }
    for (;;) {
        pid_t w = waitpid(child, &status, WNOHANG);
        if (w == child)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (0 == workers_alive(dir)) {
            if (0 == gone_since)
                gone_since = now();
            if (now() - gone_since > MPIRUN_STUCK) {
                kill(-child, SIGKILL);
                waitpid(child, &status, 0);
                return -2;
            }
        } else {
            gone_since = 0;
        }
        if (now() - t0 > JOB_DEADLINE) {
            kill(-child, SIGKILL);
            waitpid(child, &status, 0);
            return -1;
        }
        usleep(20000);
    }
}

/* Whether the job's output (stdout and stderr) contains `text`. */
static int output_has(const char *dir, const char *text)
{
    char path[300], line[1024];
    int found = 0;
    FILE *f;
    snprintf(path, sizeof(path), "%s/out", dir);
    f = fopen(path, "r");
    if (NULL == f)
        return 0;
    while (!found && fgets(line, sizeof(line), f)) {
        if (getenv("SMCUDA_INITFAIL_VERBOSE") || strstr(line, "btl/smcuda"))
            fputs(line, stdout);
        found = NULL != strstr(line, text);
    }
    fclose(f);
    return found;
}

static int one_round(const opts_t *o, const char *self, int round, int *in_init)
{
    char dir[256];
    int kill = 0 == strcmp(o->kase, "kill");
    int kill_rank = kill ? round % NP : -1;
    /* spread over 0-0.3 s: one slice per round, a random point in it */
    long slice = 300000 / (o->rounds > 0 ? o->rounds : 1);
    long delay = kill ? round * slice + random() % slice : 0;
    int rc, left = 0, pids = 0, msg_ok;

    snprintf(dir, sizeof(dir), "/tmp/ob1x_initfail.%d.%d", (int) getpid(), round);
    if (0 != mkdir(dir, 0700)) {
        printf("FAIL: cannot create %s\n", dir);
        return 1;
    }
    rc = run_job(o, self, dir, kill_rank, delay);
    msg_ok = NULL == o->expect_msg || output_has(dir, o->expect_msg);
    for (int r = 0; r < NP; ++r) {
        int pid = read_pid(dir, "pid", r);
        if (0 == pid)
            continue;
        ++pids;
        left += leftovers_of(pid);
        if (r == kill_rank && 0 == read_pid(dir, "init", r))
            ++*in_init;
    }
    for (int r = 0; r < NP; ++r) {
        char p[300];
        snprintf(p, sizeof(p), "%s/pid.%d", dir, r);
        unlink(p);
        snprintf(p, sizeof(p), "%s/init.%d", dir, r);
        unlink(p);
    }
    {
        char p[300];
        snprintf(p, sizeof(p), "%s/out", dir);
        unlink(p);
    }
    rmdir(dir);
    if (kill)
        printf("round %d: rank %d killed %.3f s into MPI_Init, job exit %d\n", round, kill_rank,
               delay * 1e-6, rc);
    else
        printf("round %d: job exit %d\n", round, rc);
    if (-2 == rc)
        printf("round %d: note: every rank had ended but mpirun did not exit within %.0f s "
               "(Open MPI's own finalize); killed\n",
               round, MPIRUN_STUCK);
    if (-1 == rc) {
        printf("FAIL: round %d: the job did not end within %.0f s\n", round, JOB_DEADLINE);
        return 1;
    }
    if (0 == rc) {
        printf("FAIL: round %d: the job exited 0\n", round);
        return 1;
    }
    if (!msg_ok) {
        printf("FAIL: round %d: the job's output does not say \"%s\"\n", round, o->expect_msg);
        return 1;
    }
    if (0 == pids) {
        printf("FAIL: round %d: no worker started\n", round);
        return 1;
    }
    if (left > 0 && -2 == rc && o->runtime_cleanup) {
        printf("round %d: note: %d named file(s) left: mpirun was killed before its cleanup\n",
               round, left);
        return 0;
    }
    if (left > 0) {
        printf("FAIL: round %d: %d file(s) of the job left in %s\n", round, left, SHM_DIR);
        return 1;
    }
    return 0;
}

static int driver(int argc, char **argv)
{
    opts_t o = {.kase = "kill", .pml = "ob1x", .rounds = 20};
    char self[1024];
    ssize_t sl;
    int failed = 0, in_init = 0;

    for (int i = 1; i < argc; ++i) {
        if (0 == strncmp(argv[i], "case=", 5))
            o.kase = argv[i] + 5;
        else if (0 == strncmp(argv[i], "pml=", 4))
            o.pml = argv[i] + 4;
        else if (0 == strncmp(argv[i], "expect_msg=", 11)) {
            o.expect_msg = argv[i] + 11;
        } else if (0 == strcmp(argv[i], "cleanup=runtime")) {
            o.runtime_cleanup = 1;
        } else if (0 == strncmp(argv[i], "rounds=", 7))
            o.rounds = atoi(argv[i] + 7);
        else if (0 == strncmp(argv[i], "mca:", 4) && strchr(argv[i], '=') && o.n_extra < 30) {
            char *kv = strdup(argv[i] + 4), *eq = strchr(kv, '=');
            *eq = '\0';
            o.extra[o.n_extra++] = "--mca";
            o.extra[o.n_extra++] = kv;
            o.extra[o.n_extra++] = eq + 1;
        }
    }
    if (0 != strcmp(o.kase, "kill"))
        o.rounds = 1;
    sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (sl <= 0) {
        printf("FAIL: cannot find own executable\n");
        return 1;
    }
    self[sl] = '\0';
    srandom((unsigned) getpid());
    for (int round = 0; round < o.rounds && !failed; ++round)
        failed = one_round(&o, self, round, &in_init);
    if (failed)
        return 1;
    if (0 == strcmp(o.kase, "kill"))
        printf("%s: %d of %d kills landed inside MPI_Init\n", PROG, in_init, o.rounds);
    printf("PASS: %s (case %s)\n", PROG, o.kase);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && 0 == strcmp(argv[1], "worker"))
        return worker(argc, argv);
    return driver(argc, argv);
}

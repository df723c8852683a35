/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_child.h - for test drivers that start their own child mpirun: an
 * environment without the outer job's variables, and a run of a job one of
 * whose processes kills itself (header only).
 */
#ifndef OB1X_TEST_BTL_CHILD_H
#define OB1X_TEST_BTL_CHILD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* The child mpirun must not believe it runs inside our (outer) job; keep
 * only the root permission and the component path. */
static char **btl_child_env(void)
{
    int n = 0;
    char **env;
    for (char **e = environ; *e; ++e)
        ++n;
    env = calloc((size_t) n + 1, sizeof(*env));
    n = 0;
    for (char **e = environ; *e; ++e) {
        int ours = 0 == strncmp(*e, "OMPI_", 5) || 0 == strncmp(*e, "PMIX_", 5) ||
                   0 == strncmp(*e, "ORTE_", 5) || 0 == strncmp(*e, "OPAL_", 5);
        int keep = 0 == strncmp(*e, "OMPI_ALLOW_RUN_AS_ROOT", 22) ||
                   0 == strncmp(*e, "OMPI_MCA_mca_base_component_path=", 33);
        if (!ours || keep)
            env[n++] = *e;
    }
    return env;
}

/*
 * Runs cargv (a child mpirun) with btl_child_env(), its output read line by
 * line (copied to our stdout when `echo`), bounded by alarm(alarm_s). A
 * worker that kills itself prints "worker: killing" first: *t_kill is the
 * time that line came (CLOCK_MONOTONIC seconds, 0 if it never did) and
 * *t_end the time the job ended; *status is waitpid's. Returns 0, or -1
 * when the child could not be started.
 */
static double btl_child_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static int btl_child_run_kill(char **cargv, unsigned alarm_s, int echo, double *t_kill,
                              double *t_end, int *status)
{
    char line[512];
    int pfd[2];
    pid_t child;
    FILE *out;

    *t_kill = 0;
    if (0 != pipe(pfd))
        return -1;
    child = fork();
    if (child < 0)
        return -1;
    if (0 == child) {
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        close(pfd[0]);
        close(pfd[1]);
        setpgid(0, 0);
        execvpe(cargv[0], cargv, btl_child_env());
        _exit(127);
    }
    close(pfd[1]);
    out = fdopen(pfd[0], "r");
    alarm(alarm_s); /* the harness has its own timeout too */
    while (fgets(line, sizeof(line), out)) {
        if (0 == *t_kill && strstr(line, "worker: killing"))
            *t_kill = btl_child_now();
        if (echo)
            fputs(line, stdout);
    }
    waitpid(child, status, 0);
    *t_end = btl_child_now();
    alarm(0);
    fclose(out);
    return 0;
}

#endif

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_badparam.c - an unknown btl_smcuda_single_copy_mechanism value is
 * rejected with a message naming the parameter and the valid values, and
 * the job fails instead of running with another mechanism.
 *
 * Run as a single process (np 1); it starts a child job of /bin/true-like
 * workers (this program with `worker`) and reads the child's output.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "btl_child.h"

#define PROG "btl/smcuda_badparam"

int main(int argc, char **argv)
{
    char self[1024], line[512], all[16384] = "";
    const char *mpirun = getenv("OB1X_MPIRUN") ? getenv("OB1X_MPIRUN") : "mpirun";
    int pfd[2], status, named = 0, listed = 0;
    ssize_t sl;
    pid_t child;
    FILE *out;

    if (argc > 1 && 0 == strcmp(argv[1], "worker")) {
        MPI_Init(NULL, NULL);
        MPI_Finalize();
        return 0;
    }
    sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (sl <= 0) {
        printf("FAIL: cannot find own executable\n");
        return 1;
    }
    self[sl] = '\0';
    if (0 != pipe(pfd))
        return 1;
    child = fork();
    if (0 == child) {
        char *cargv[] = {
            (char *) mpirun, "-np",         "2",      "--oversubscribe",
            "--mca",         "pml",         "ob1",    "--mca",
            "btl",           "self,smcuda", "--mca",  "btl_smcuda_single_copy_mechanism",
            "bogus",         self,          "worker", NULL};
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        close(pfd[0]);
        close(pfd[1]);
        execvpe(mpirun, cargv, btl_child_env());
        _exit(127);
    }
    close(pfd[1]);
    out = fdopen(pfd[0], "r");
    alarm(60);
    while (fgets(line, sizeof(line), out)) {
        if (strlen(all) + strlen(line) < sizeof(all))
            strcat(all, line);
        named |= NULL != strstr(line, "btl_smcuda_single_copy_mechanism");
        listed |= NULL != strstr(line, "cma") && NULL != strstr(line, "none");
    }
    waitpid(child, &status, 0);
    if (WIFEXITED(status) && 0 == WEXITSTATUS(status)) {
        printf("FAIL: the job ran with an invalid single-copy mechanism\n");
        return 1;
    }
    if (!named || !listed) {
        printf("child output:\n%s", all);
        printf("FAIL: the error does not name the parameter and its valid values\n");
        return 1;
    }
    printf("PASS: %s\n", PROG);
    return 0;
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pattern.c - the known pattern of tmon_pattern and nothing else, for the
 * output tests (output.sh): what MPI_Finalize writes with
 * pml_monitoring_enable_output 1, 2, 3. With "stop" the recording is
 * stopped through MPI_T before the pattern: nothing may be written. With
 * "nopersistent" no persistent send is started (stock.sh).
 * Uses no MPI_T otherwise, so that it runs under stock monitoring too.
 */
#include <stdio.h>
#include <string.h>

#include "tmon.c"

static void stop_recording(void)
{
    MPI_T_pvar_handle h;
    int count;

    T_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &count));
    T_MPI(MPI_T_pvar_session_create(&tmon_session));
    h = tmon_handle("pml_monitoring_messages_count", MPI_COMM_WORLD, &count);
    T_MPI(MPI_T_pvar_start(tmon_session, h));
    T_MPI(MPI_T_pvar_stop(tmon_session, h));
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &h));
    T_MPI(MPI_T_pvar_session_free(&tmon_session));
    T_MPI(MPI_T_finalize());
}

int main(int argc, char **argv)
{
    t_prog = "pattern";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
    if (argc > 1 && 0 == strcmp(argv[1], "stop")) {
        stop_recording();
    }
    if (argc > 1 && 0 == strcmp(argv[1], "nopersistent")) {
        tmon_no_persistent = 1;
    }
    tmon_pattern(1);
    MPI_Finalize();
    return 0;
}

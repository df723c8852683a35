/*
 * ob1x benchmarks: monitoring toggled within one run (option -M).
 *
 * Monitoring's cost is a few nanoseconds per message, while two launches of
 * the same program differ by several percent (core placement, page layout):
 * on/off ratios taken between launches cannot resolve a 1% target. With -M
 * the job runs with monitoring enabled and each size's trials alternate
 * between recording stopped and started through MPI_T (stopping the
 * monitoring pvars stops recording, as Open MPI's monitoring defines), so
 * both states are measured in the same processes, minutes apart at most.
 * With recording stopped a message takes the same path as with monitoring
 * disabled: one test of the recording state.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A pvar whose start and stop drive the recording (pml_monitoring_enable). */
#define MON_PVAR "pml_monitoring_messages_count"

static MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
static MPI_T_pvar_handle handle = MPI_T_PVAR_HANDLE_NULL;
static int entries;                /* of the pvar: one per rank of the communicator */
static unsigned long long *counts; /* read buffer */
static int recording;
static unsigned long long at_stop; /* messages counted when recording last stopped */
static unsigned long long at_start;

/* The messages counted so far (all peers); read only while recording, when every MPI
 * implements the read. */
static unsigned long long counted(void)
{
    unsigned long long sum = 0;

    if (MPI_SUCCESS != MPI_T_pvar_read(session, handle, counts)) {
        return 0;
    }
    for (int i = 0; i < entries; i++) {
        sum += counts[i];
    }
    return sum;
}

static int find_pvar(int *index)
{
    int n = 0;
    char name[256];

    if (MPI_SUCCESS != MPI_T_pvar_get_num(&n)) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        int len = sizeof(name), verb, cls, bind, ro, cont, atomic, nl = 0;
        MPI_Datatype dt;
        MPI_T_enum en;

        if (MPI_SUCCESS == MPI_T_pvar_get_info(i, name, &len, &verb, &cls, &dt, &en, NULL, &nl,
                                               &bind, &ro, &cont, &atomic) &&
            0 == strcmp(name, MON_PVAR)) {
            *index = i;
            return 0;
        }
    }
    return -1;
}

int bench_mon_open(MPI_Comm comm)
{
    int provided, index;

    if (MPI_SUCCESS != MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) || find_pvar(&index)) {
        fprintf(stderr, "ob1x-bench -M: no MPI_T variable %s (is a monitoring component "
                        "loaded and pml_monitoring_enable set?)\n", MON_PVAR);
        return -1;
    }
    if (MPI_SUCCESS != MPI_T_pvar_session_create(&session) ||
        MPI_SUCCESS != MPI_T_pvar_handle_alloc(session, index, &comm, &handle, &entries) ||
        NULL == (counts = calloc((size_t) entries + 1, sizeof(*counts)))) {
        fprintf(stderr, "ob1x-bench -M: cannot open %s\n", MON_PVAR);
        return -1;
    }
    return bench_mon_record(1, 0);
}

/* Checks as it goes that the toggling works: nothing counted while stopped, something
 * counted while started when this rank had traffic (busy). */
int bench_mon_record(int on, int busy)
{
    int rc;

    if (on == recording) {
        return 0;
    }
    if (!on && busy && counted() == at_start) {
        fprintf(stderr, "ob1x-bench -M: %s counted nothing while recording\n", MON_PVAR);
        return -1;
    }
    if (!on) {
        at_stop = counted();
    }
    rc = on ? MPI_T_pvar_start(session, handle) : MPI_T_pvar_stop(session, handle);
    if (MPI_SUCCESS != rc) {
        fprintf(stderr, "ob1x-bench -M: MPI_T_pvar_%s failed (%d)\n", on ? "start" : "stop", rc);
        return -1;
    }
    recording = on;
    if (on) {
        at_start = counted();
        if (at_start != at_stop) {
            fprintf(stderr, "ob1x-bench -M: %s counted messages while recording was stopped\n",
                    MON_PVAR);
            return -1;
        }
    }
    return 0;
}

void bench_mon_close(void)
{
    if (MPI_T_PVAR_HANDLE_NULL != handle) {
        MPI_T_pvar_handle_free(session, &handle);
        MPI_T_pvar_session_free(&session);
        MPI_T_finalize();
        free(counts);
    }
}

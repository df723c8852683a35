/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * recv_mode.c - when pml/ob1x counts receives (pml_monitoring_count_receives):
 * recording is started through pml_monitoring_messages_count, the pattern
 * runs, a handle of pml_monitoring_messages_recv_count/size is allocated,
 * the pattern runs again. Expected receive-side counts from the left
 * neighbour: auto, no dump at MPI_Finalize: the second pattern only (from
 * the handle on); auto with pml_monitoring_enable_output >= 1 and yes:
 * both; no: none. Sends are counted in every case.
 * Run with pml_monitoring_enable 2 (internal tags apart: exact counts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmon.c"

static MPI_T_pvar_handle started(const char *name)
{
    int count;
    MPI_T_pvar_handle h = tmon_handle(name, MPI_COMM_WORLD, &count);

    T_CHECK(count == t_size, "%s: count %d", name, count);
    T_MPI(MPI_T_pvar_start(tmon_session, h));
    return h;
}

static unsigned long long value_of(MPI_T_pvar_handle h, int peer)
{
    unsigned long long v[256];

    memset(v, 0xff, sizeof(v));
    tmon_read(h, v);
    return v[peer];
}

int main(int argc, char **argv)
{
    int setting, output, before, after;
    int right, left;
    MPI_T_pvar_handle sent, rcount, rsize;

    tmon_init(&argc, &argv);
    T_CHECK(t_size <= 256, "at most 256 processes");
    right = (t_rank + 1) % t_size;
    left = (t_rank + t_size - 1) % t_size;
    setting = tmon_cvar_int("pml_monitoring_count_receives");
    output = tmon_cvar_int("pml_monitoring_enable_output");
    T_CHECK(2 == tmon_cvar_int("pml_monitoring_enable"), "run with pml_monitoring_enable 2");
    T_CHECK(-1 <= setting && setting <= 1, "pml_monitoring_count_receives %d", setting);
    before = 1 == setting || (-1 == setting && output > 0);
    after = 0 != setting;

    sent = started("pml_monitoring_messages_count");
    tmon_pattern(0);
    rcount = started("pml_monitoring_messages_recv_count");
    rsize = started("pml_monitoring_messages_recv_size");
    T_CHECK(value_of(rcount, left) == (before ? TMON_EXT_COUNT : 0),
            "setting %d output %d: %llu receives counted before the first receive handle, "
            "expected %d", setting, output, value_of(rcount, left),
            before ? TMON_EXT_COUNT : 0);
    tmon_pattern(0);
    T_CHECK(value_of(rcount, left) == (unsigned long long) (before + after) * TMON_EXT_COUNT &&
                value_of(rsize, left) == (unsigned long long) (before + after) * TMON_EXT_BYTES,
            "setting %d output %d: received %llu messages, %llu bytes from %d; expected %d, %d",
            setting, output, value_of(rcount, left), value_of(rsize, left), left,
            (before + after) * TMON_EXT_COUNT, (before + after) * TMON_EXT_BYTES);
    T_CHECK(value_of(sent, right) == 2 * TMON_EXT_COUNT, "sent %llu messages to %d, expected %d",
            value_of(sent, right), right, 2 * TMON_EXT_COUNT);
    T_MPI(MPI_T_pvar_stop(tmon_session, rsize));
    T_MPI(MPI_T_pvar_stop(tmon_session, rcount));
    T_MPI(MPI_T_pvar_stop(tmon_session, sent));
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &rsize));
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &rcount));
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &sent));
    tmon_finalize();
    return 0;
}

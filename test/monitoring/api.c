/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * api.c - the engine's API as the coll/osc interposition components will
 * call it (common_ob1x_monitoring.h), from a program linked with the
 * build tree's libmca_common_ob1x_monitoring (the same instance pml/ob1x
 * uses): world-rank translation, osc and coll per-peer records, the
 * per-communicator classes; read back through the stock MPI_T pvars and
 * through a flushed file (S, R, C, D, O2A, A2O, A2A lines), released
 * communicators reported once more, then dropped. argv[1]: a directory.
 * Run with pml ob1x and pml_monitoring_enable 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_ob1x_monitoring.h"
#include "tmon.c"

static int right, left;

static unsigned long long pvar_at(const char *name, int cls, MPI_Comm comm, int at)
{
    MPI_T_pvar_handle h;
    unsigned long long v[64];
    int count, idx = tmon_pvar_index(name, cls, MPI_UNSIGNED_LONG_LONG, MPI_T_BIND_MPI_COMM);

    T_MPI(MPI_T_pvar_handle_alloc(tmon_session, idx, &comm, &h, &count));
    T_MPI(MPI_T_pvar_start(tmon_session, h));
    tmon_read(h, v);
    /* not stopped: stopping a monitoring handle stops recording (stock) */
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &h));
    return v[at];
}

/* Number of lines of this process's file base that start with prefix. */
static int lines(const char *base, const char *prefix, char *last, size_t lastlen)
{
    char path[4096], line[4096];
    int n = 0;
    FILE *f;

    snprintf(path, sizeof(path), "%s.%d.prof", base, t_rank);
    f = fopen(path, "r");
    T_CHECK(NULL != f, "%s not written", path);
    while (NULL != fgets(line, sizeof(line), f)) {
        if (0 == strncmp(line, prefix, strlen(prefix))) {
            ++n;
            snprintf(last, lastlen, "%s", line);
        }
    }
    fclose(f);
    return n;
}

static void check_translation(void)
{
    ompi_group_t *g = ((ompi_communicator_t *) MPI_COMM_WORLD)->c_remote_group;

    T_CHECK(ob1x_mon_is_on() && 2 == ob1x_mon_enabled(), "monitoring not on in mode 2");
    T_CHECK(ob1x_mon_pml_records_itself(), "pml/ob1x selected but not recording by itself");
    T_CHECK(ob1x_mon_my_world_rank() == t_rank && ob1x_mon_world_size() == t_size,
            "my world rank %d size %d", ob1x_mon_my_world_rank(), ob1x_mon_world_size());
    for (int i = 0; i < t_size; ++i) {
        T_CHECK(ob1x_mon_world_rank(g, i) == i, "world rank of %d: %d", i,
                ob1x_mon_world_rank(g, i));
    }
}

/* A process of another job (as after MPI_Comm_spawn): counted under its
 * own name, never as a world rank. */
static opal_process_name_t other_job(void)
{
    static ompi_proc_t fake;
    opal_process_name_t n = OMPI_PROC_MY_NAME[0];

    n.jobid += 1;
    n.vpid = 3;
    T_CHECK(-1 == ob1x_mon_world_rank_of_name(n), "another job's process taken for a world rank");
    fake.super.proc_name = n;
    ob1x_mon_record_pml_proc(&fake, 10, 5);
    ob1x_mon_record_pml_recv_proc(&fake, 7, 5);
    ob1x_mon_record_pml_recv_proc(&fake, 7, 5);
    return n;
}

static void record(ob1x_mon_coll_data_t *d)
{
    ompi_group_t *g = ((ompi_communicator_t *) MPI_COMM_WORLD)->c_remote_group;

    ob1x_mon_record_osc(g, right, 100, OB1X_MON_OSC_SENT);
    ob1x_mon_record_osc(g, left, 50, OB1X_MON_OSC_RECV);
    ob1x_mon_record_osc(g, left, 50, OB1X_MON_OSC_RECV);
    ob1x_mon_record_coll(g, right, 10);
    ob1x_mon_record_coll(g, right, 10);
    ob1x_mon_coll_record(d, OB1X_MON_O2A, 64);
    for (int i = 0; i < 3; ++i) {
        ob1x_mon_coll_record(d, OB1X_MON_A2A, 8);
    }
}

static void check_pvars(MPI_Comm dup)
{
    T_CHECK(pvar_at("osc_monitoring_messages_sent_count", MPI_T_PVAR_CLASS_SIZE, MPI_COMM_WORLD,
                    right) == 1 &&
                pvar_at("osc_monitoring_messages_sent_size", MPI_T_PVAR_CLASS_SIZE, MPI_COMM_WORLD,
                        right) == 100 &&
                pvar_at("osc_monitoring_messages_recv_count", MPI_T_PVAR_CLASS_SIZE, MPI_COMM_WORLD,
                        left) == 2 &&
                pvar_at("osc_monitoring_messages_recv_size", MPI_T_PVAR_CLASS_SIZE, MPI_COMM_WORLD,
                        left) == 100,
            "osc pvars wrong");
    T_CHECK(pvar_at("coll_monitoring_messages_count", MPI_T_PVAR_CLASS_SIZE, MPI_COMM_WORLD,
                    right) == 2 &&
                pvar_at("coll_monitoring_messages_size", MPI_T_PVAR_CLASS_SIZE, MPI_COMM_WORLD,
                        right) == 20,
            "coll per-peer pvars wrong");
    (void) dup;
}

int main(int argc, char **argv)
{
    char base[4096], last[4096];
    ob1x_mon_coll_data_t *d;
    MPI_T_pvar_handle o2a, a2a;
    unsigned long long v;
    MPI_Comm dup;
    opal_process_name_t other;
    char want[256];
    int count;

    tmon_init(&argc, &argv);
    T_CHECK(argc > 1 && t_size <= 64, "usage: api DIR (at most 64 processes)");
    right = (t_rank + 1) % t_size;
    left = (t_rank + t_size - 1) % t_size;
    check_translation();
    T_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    T_MPI(MPI_Comm_set_name(dup, "apicomm"));
    d = ob1x_mon_coll_new((ompi_communicator_t *) dup);
    T_CHECK(NULL != d, "ob1x_mon_coll_new failed");
    /* counter classes count from the handle's start */
    T_MPI(MPI_T_pvar_handle_alloc(tmon_session,
                                  tmon_pvar_index("coll_monitoring_o2a_count",
                                                  MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                                                  MPI_T_BIND_MPI_COMM),
                                  &dup, &o2a, &count));
    T_MPI(MPI_T_pvar_handle_alloc(tmon_session,
                                  tmon_pvar_index("coll_monitoring_a2a_size",
                                                  MPI_T_PVAR_CLASS_AGGREGATE,
                                                  MPI_UNSIGNED_LONG_LONG, MPI_T_BIND_MPI_COMM),
                                  &dup, &a2a, &count));
    T_MPI(MPI_T_pvar_start(tmon_session, o2a));
    T_MPI(MPI_T_pvar_start(tmon_session, a2a));
    record(d);
    other = other_job();
    check_pvars(dup);
    tmon_read(o2a, &v);
    T_CHECK(1 == v, "coll_monitoring_o2a_count %llu, expected 1", v);
    tmon_read(a2a, &v);
    T_CHECK(24 == v, "coll_monitoring_a2a_size %llu, expected 24", v);

    snprintf(base, sizeof(base), "%s/api1", argv[1]);
    T_CHECK(OMPI_SUCCESS == ob1x_mon_flush(OB1X_MON_OUT_FILE, base), "flush failed");
    T_CHECK(1 == lines(base, "S\t", last, sizeof(last)), "S lines");
    T_CHECK(1 == lines(base, "R\t", last, sizeof(last)), "R lines");
    T_CHECK(1 == lines(base, "C\t", last, sizeof(last)), "C lines");
    T_CHECK(1 == lines(base, "D\tapicomm\tprocs: ", last, sizeof(last)), "no D line of apicomm");
    snprintf(want, sizeof(want), "#X\t%d\t[%u,%u]\t10 bytes\t1 msgs sent\t14 bytes\t2 msgs recv\n",
             t_rank, (unsigned) other.jobid, (unsigned) other.vpid);
    T_CHECK(1 == lines(base, "#X\t", last, sizeof(last)) && 0 == strcmp(last, want),
            "other job's line: '%s', expected '%s'", last, want);
    snprintf(base + strlen(base), 16, "%s", "");
    /* released: reported by the next dump, then dropped */
    ob1x_mon_coll_release(d);
    T_MPI(MPI_T_pvar_stop(tmon_session, o2a));
    T_MPI(MPI_T_pvar_stop(tmon_session, a2a));
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &o2a));
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &a2a));
    T_MPI(MPI_Comm_free(&dup));
    ob1x_mon_set_recording(true); /* the stops above stopped recording (stock rule) */
    snprintf(base, sizeof(base), "%s/api2", argv[1]);
    T_CHECK(OMPI_SUCCESS == ob1x_mon_flush(OB1X_MON_OUT_FILE, base), "flush 2 failed");
    T_CHECK(1 == lines(base, "D\tapicomm\t", last, sizeof(last)), "released apicomm not reported");
    T_CHECK(0 == lines(base, "S\t", last, sizeof(last)), "S line after the reset");
    snprintf(base, sizeof(base), "%s/api3", argv[1]);
    T_CHECK(OMPI_SUCCESS == ob1x_mon_flush(OB1X_MON_OUT_FILE, base), "flush 3 failed");
    T_CHECK(0 == lines(base, "D\tapicomm\t", last, sizeof(last)), "released apicomm kept");
    tmon_finalize();
    return 0;
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * reset.c - MPI_T reset of the monitoring counts:
 *  - pml_monitoring_messages_{count,size}_resettable (counter classes):
 *    each handle counts from its start; MPI_T_pvar_reset zeroes it; two
 *    handles are independent; a phase flushed through pml_monitoring_flush
 *    (which restarts the stock pvars from zero) leaves them alone;
 *  - the stock SIZE pvars are read-only (reset refused, as in stock);
 *  - MPI_T_pvar_readreset: a stub in Open MPI 4.1's libmpi (always
 *    MPI_T_ERR_INVALID_HANDLE), which no component can replace; checked so
 *    that the day it works this test says so.
 * Run with pml_monitoring_enable 2 (internal tags apart: exact counts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmon.c"

static MPI_T_pvar_handle counter(const char *name, int cls)
{
    MPI_T_pvar_handle h;
    int count, idx = tmon_pvar_index(name, cls, MPI_UNSIGNED_LONG_LONG, MPI_T_BIND_MPI_COMM);
    MPI_Comm comm = MPI_COMM_WORLD;

    T_MPI(MPI_T_pvar_handle_alloc(tmon_session, idx, &comm, &h, &count));
    T_CHECK(count == t_size, "%s: count %d", name, count);
    T_MPI(MPI_T_pvar_start(tmon_session, h));
    return h;
}

static unsigned long long right_value(MPI_T_pvar_handle h)
{
    unsigned long long v[256];

    tmon_read(h, v);
    return v[(t_rank + 1) % t_size];
}

int main(int argc, char **argv)
{
    MPI_T_pvar_handle a, b, sz, stock, flush_h;
    unsigned long long v[256];
    int count, rc, idx;

    tmon_init(&argc, &argv);
    T_CHECK(t_size <= 256, "at most 256 processes");
    a = counter("pml_monitoring_messages_count_resettable", MPI_T_PVAR_CLASS_COUNTER);
    sz = counter("pml_monitoring_messages_size_resettable", MPI_T_PVAR_CLASS_AGGREGATE);
    tmon_pattern(0);
    T_CHECK(right_value(a) == TMON_EXT_COUNT, "count %llu, expected %d", right_value(a),
            TMON_EXT_COUNT);
    T_CHECK(right_value(sz) == TMON_EXT_BYTES, "size %llu, expected %d", right_value(sz),
            TMON_EXT_BYTES);

    /* a second handle starts from zero; reset zeroes only its own handle */
    b = counter("pml_monitoring_messages_count_resettable", MPI_T_PVAR_CLASS_COUNTER);
    T_CHECK(right_value(b) == 0, "new handle reads %llu", right_value(b));
    tmon_pattern(0);
    T_MPI(MPI_T_pvar_reset(tmon_session, a));
    T_CHECK(right_value(a) == 0, "after reset: %llu", right_value(a));
    T_CHECK(right_value(b) == TMON_EXT_COUNT, "other handle after reset: %llu", right_value(b));
    tmon_pattern(0);
    T_CHECK(right_value(a) == TMON_EXT_COUNT, "after reset and a pattern: %llu", right_value(a));

    /* a flushed phase resets the stock counts, not the counters */
    stock = tmon_handle("pml_monitoring_messages_count", MPI_COMM_WORLD, &count);
    T_MPI(MPI_T_pvar_start(tmon_session, stock));
    idx = tmon_pvar_index("pml_monitoring_flush", MPI_T_PVAR_CLASS_GENERIC, MPI_CHAR,
                          MPI_T_BIND_NO_OBJECT);
    T_MPI(MPI_T_pvar_handle_alloc(tmon_session, idx, NULL, &flush_h, &count));
    T_MPI(MPI_T_pvar_write(tmon_session, flush_h, "/dev/null/never"));
    /* no start/stop of the flush handle: binding it zeroed the stock counts */
    tmon_read(stock, v);
    T_CHECK(0 == v[(t_rank + 1) % t_size], "stock count after the flush handle's bind: %llu",
            v[(t_rank + 1) % t_size]);
    T_CHECK(right_value(a) == TMON_EXT_COUNT && right_value(b) == 2 * TMON_EXT_COUNT,
            "counters after a phase reset: %llu %llu, expected %d %d", right_value(a),
            right_value(b), TMON_EXT_COUNT, 2 * TMON_EXT_COUNT);

    rc = MPI_T_pvar_reset(tmon_session, stock);
    /* refused (Open MPI 4.1 says MPI_T_ERR_INVALID) */
    T_CHECK(MPI_SUCCESS != rc, "reset of a read-only SIZE pvar succeeded");
    rc = MPI_T_pvar_readreset(tmon_session, a, v);
    T_CHECK(MPI_T_ERR_INVALID_HANDLE == rc || MPI_SUCCESS == rc, "readreset returned %d", rc);
    if (MPI_SUCCESS == rc) {
        T_CHECK(v[(t_rank + 1) % t_size] == TMON_EXT_COUNT && right_value(a) == 0,
                "readreset read %llu, then %llu", v[(t_rank + 1) % t_size], right_value(a));
    }

    T_MPI(MPI_T_pvar_stop(tmon_session, a));
    T_MPI(MPI_T_pvar_stop(tmon_session, b));
    T_MPI(MPI_T_pvar_stop(tmon_session, sz));
    T_MPI(MPI_T_pvar_stop(tmon_session, stock));
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &a));
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &b));
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &sz));
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &stock));
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &flush_h));
    tmon_finalize();
    return 0;
}

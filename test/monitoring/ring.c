/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * ring.c - exact counts of a known pattern (tmon_pattern: token ring,
 * persistent sends, an empty message, a linear barrier) read through the
 * monitoring pvars looked up after MPI_Init, per pml_monitoring_enable:
 *   0  pvars valid, start/read work, everything zero;
 *   1  internal-tag messages (the barrier) counted with the others;
 *   2  internal ones apart (pml_monitoring_messages_internal_*).
 * Also: stock classes/datatypes/bindings, the histogram, receive-side
 * counts, a handle on a split communicator (entries in its rank order),
 * stop (nothing recorded while stopped) and restart, reset.
 * Run with --mca coll basic,self,libnbc (a linear barrier: exact counts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmon.c"

enum { CNT, SIZ, ICNT, ISIZ, RCNT, RSIZ, NPV };
static const char *names[NPV] = {
    "pml_monitoring_messages_count",          "pml_monitoring_messages_size",
    "pml_monitoring_messages_internal_count", "pml_monitoring_messages_internal_size",
    "pml_monitoring_messages_recv_count",     "pml_monitoring_messages_recv_size"};
static MPI_T_pvar_handle h[NPV], hist;
static unsigned long long *v[NPV], *hv;

static void check_stock_pvars(void)
{
    static const char *size_pvars[] = {
        "pml_monitoring_messages_count",      "pml_monitoring_messages_size",
        "osc_monitoring_messages_sent_count", "osc_monitoring_messages_sent_size",
        "osc_monitoring_messages_recv_count", "osc_monitoring_messages_recv_size",
        "coll_monitoring_messages_count",     "coll_monitoring_messages_size"};
    static const char *coll_pvars[] = {"coll_monitoring_o2a_count", "coll_monitoring_a2o_count",
                                       "coll_monitoring_a2a_count"};
    static const char *agg_pvars[] = {"coll_monitoring_o2a_size", "coll_monitoring_a2o_size",
                                      "coll_monitoring_a2a_size"};

    for (size_t i = 0; i < sizeof(size_pvars) / sizeof(size_pvars[0]); ++i) {
        tmon_pvar_index(size_pvars[i], MPI_T_PVAR_CLASS_SIZE, MPI_UNSIGNED_LONG_LONG,
                        MPI_T_BIND_MPI_COMM);
    }
    for (int i = 0; i < 3; ++i) {
        tmon_pvar_index(coll_pvars[i], MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                        MPI_T_BIND_MPI_COMM);
        tmon_pvar_index(agg_pvars[i], MPI_T_PVAR_CLASS_AGGREGATE, MPI_UNSIGNED_LONG_LONG,
                        MPI_T_BIND_MPI_COMM);
    }
    tmon_pvar_index("pml_monitoring_flush", MPI_T_PVAR_CLASS_GENERIC, MPI_CHAR,
                    MPI_T_BIND_NO_OBJECT);
}

static void handles_alloc(void)
{
    int count;

    for (int i = 0; i < NPV; ++i) {
        h[i] = tmon_handle(names[i], MPI_COMM_WORLD, &count);
        T_CHECK(count == t_size, "%s: count %d, expected %d", names[i], count, t_size);
        v[i] = calloc((size_t) count, sizeof(*v[i]));
        T_MPI(MPI_T_pvar_start(tmon_session, h[i]));
    }
    hist = tmon_handle("pml_monitoring_messages_histogram", MPI_COMM_WORLD, &count);
    T_CHECK(count == t_size * TMON_BINS, "histogram count %d", count);
    hv = calloc((size_t) count, sizeof(*hv));
    T_MPI(MPI_T_pvar_start(tmon_session, hist));
}

static void read_all(void)
{
    for (int i = 0; i < NPV; ++i) {
        tmon_read(h[i], v[i]);
    }
    tmon_read(hist, hv);
}

/* What this process must have sent to / received from peer p. */
static void expect(int mode, int p, unsigned long long e[NPV])
{
    int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    unsigned long long bar_out = tmon_barrier_msgs(t_rank, p),
                       bar_in = tmon_barrier_msgs(p, t_rank);

    memset(e, 0, NPV * sizeof(e[0]));
    if (0 == mode) {
        return;
    }
    e[CNT] = p == right ? TMON_EXT_COUNT : 0;
    e[SIZ] = p == right ? TMON_EXT_BYTES : 0;
    e[RCNT] = p == left ? TMON_EXT_COUNT : 0;
    e[RSIZ] = p == left ? TMON_EXT_BYTES : 0;
    if (1 == mode) {
        e[CNT] += bar_out;
        e[RCNT] += bar_in;
    } else {
        e[ICNT] = bar_out;
        (void) bar_in; /* internal receives: pml_monitoring_messages_recv_internal_* */
    }
}

static void check_counts(int mode)
{
    unsigned long long e[NPV];

    for (int p = 0; p < t_size; ++p) {
        expect(mode, p, e);
        for (int i = 0; i < NPV; ++i) {
            T_CHECK(v[i][p] == e[i], "mode %d: %s[%d] = %llu, expected %llu", mode, names[i], p,
                    v[i][p], e[i]);
        }
    }
}

/* Bins of the messages sent to the right neighbour: 1000 B -> bin 10,
 * 16 B -> bin 5, empty -> bin 0 (with the empty barrier messages). */
static void check_histogram(int mode)
{
    int right = (t_rank + 1) % t_size;

    for (int p = 0; p < t_size; ++p) {
        unsigned long long *b = hv + (size_t) p * TMON_BINS, e0 = 0, e5 = 0, e10 = 0, sum = 0;
        if (0 != mode) {
            e0 = (p == right) + tmon_barrier_msgs(t_rank, p);
            e5 = p == right ? 2 : 0;
            e10 = p == right ? TMON_ROUNDS : 0;
        }
        for (int j = 0; j < TMON_BINS; ++j) {
            sum += b[j];
        }
        T_CHECK(b[0] == e0 && b[5] == e5 && b[10] == e10 && sum == e0 + e5 + e10,
                "mode %d: histogram to %d: bin0 %llu bin5 %llu bin10 %llu total %llu, expected "
                "%llu %llu %llu",
                mode, p, b[0], b[5], b[10], sum, e0, e5, e10);
    }
}

/* The same counts on a communicator with the ranks reversed. */
static void check_split(int mode)
{
    MPI_Comm rev;
    MPI_T_pvar_handle hr;
    unsigned long long *rv;
    int count;

    T_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, t_size - t_rank, &rev));
    hr = tmon_handle("pml_monitoring_messages_size", rev, &count);
    T_CHECK(count == t_size, "split: count %d", count);
    rv = calloc((size_t) count, sizeof(*rv));
    /* a stopped SIZE handle reads its value at stop: start it */
    T_MPI(MPI_T_pvar_start(tmon_session, hr));
    tmon_read(hr, rv);
    /* MPI_Comm_split's own messages count too at enable 1: compare with now */
    tmon_read(h[SIZ], v[SIZ]);
    T_MPI(MPI_T_pvar_stop(tmon_session, hr));
    for (int j = 0; j < count; ++j) {
        T_CHECK(rv[j] == v[SIZ][t_size - 1 - j],
                "mode %d: size on the reversed communicator, rank %d: %llu, world rank %d: %llu",
                mode, j, rv[j], t_size - 1 - j, v[SIZ][t_size - 1 - j]);
    }
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &hr));
    free(rv);
    T_MPI(MPI_Comm_free(&rev));
}

/* A communicator of a subset (same parity of world rank): one value per
 * member, member j being world rank 2j + parity. */
static void check_subset(int mode)
{
    MPI_Comm half;
    MPI_T_pvar_handle hh;
    unsigned long long rv[64];
    int count, size, parity = t_rank % 2;

    T_MPI(MPI_Comm_split(MPI_COMM_WORLD, parity, t_rank, &half));
    MPI_Comm_size(half, &size);
    hh = tmon_handle("pml_monitoring_messages_count", half, &count);
    T_CHECK(count == size && size <= 64, "subset: count %d, communicator size %d", count, size);
    T_MPI(MPI_T_pvar_start(tmon_session, hh));
    tmon_read(hh, rv);
    tmon_read(h[CNT], v[CNT]);
    T_MPI(MPI_T_pvar_stop(tmon_session, hh));
    for (int j = 0; j < size; ++j) {
        T_CHECK(rv[j] == v[CNT][2 * j + parity],
                "mode %d: count on the parity communicator, rank %d: %llu, world rank %d: %llu",
                mode, j, rv[j], 2 * j + parity, v[CNT][2 * j + parity]);
    }
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &hh));
    T_MPI(MPI_Comm_free(&half));
}

/* Messages on a communicator freed before the counts are read still count
 * (pml/ob1x stages receive counts, and send counts with their histogram
 * bin, in the communicator's peer slots and hands them to the engine when
 * the communicator goes), and a read shows every message so far. */
static void check_freed_comm(int mode)
{
    int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    unsigned long long e_count = mode ? 5 : 0, e_bytes = mode ? 5 * 40 : 0;
    unsigned long long r0, rs0, s0, ss0, b0, *bin = hv + (size_t) right * TMON_BINS + 6;
    char out[40] = {0}, in[40];
    MPI_T_pvar_handle on;
    MPI_Comm dup;
    int count;

    /* the stops of the checks above stopped recording (stock rule): a
     * started handle starts it again */
    on = tmon_handle("pml_monitoring_messages_recv_count", MPI_COMM_WORLD, &count);
    T_MPI(MPI_T_pvar_start(tmon_session, on));
    T_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    read_all();
    r0 = v[RCNT][left];
    rs0 = v[RSIZ][left];
    s0 = v[CNT][right];
    ss0 = v[SIZ][right];
    b0 = *bin; /* 40 bytes: bin 6 */
    for (int k = 0; k < 5; ++k) {
        T_MPI(MPI_Sendrecv(out, 40, MPI_BYTE, right, 7, in, 40, MPI_BYTE, left, 7, dup,
                           MPI_STATUS_IGNORE));
    }
    read_all();
    T_CHECK(v[RCNT][left] - r0 == e_count && v[CNT][right] - s0 == e_count &&
                *bin - b0 == e_count,
            "mode %d: on a live communicator, read %llu receives, %llu sends, %llu in the "
            "sends' bin, expected %llu each",
            mode, v[RCNT][left] - r0, v[CNT][right] - s0, *bin - b0, e_count);
    for (int k = 0; k < 5; ++k) {
        T_MPI(MPI_Sendrecv(out, 40, MPI_BYTE, right, 7, in, 40, MPI_BYTE, left, 7, dup,
                           MPI_STATUS_IGNORE));
    }
    T_MPI(MPI_Comm_free(&dup));
    read_all();
    T_CHECK(v[RCNT][left] - r0 == 2 * e_count && v[RSIZ][left] - rs0 == 2 * e_bytes &&
                v[CNT][right] - s0 == 2 * e_count && v[SIZ][right] - ss0 == 2 * e_bytes &&
                *bin - b0 == 2 * e_count,
            "mode %d: on a freed communicator: received %llu messages, %llu bytes; sent %llu, "
            "%llu, %llu in the bin; expected %llu, %llu",
            mode, v[RCNT][left] - r0, v[RSIZ][left] - rs0, v[CNT][right] - s0,
            v[SIZ][right] - ss0, *bin - b0, 2 * e_count, 2 * e_bytes);
    T_MPI(MPI_T_pvar_stop(tmon_session, on));
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &on));
}

/* Stopped: a stopped handle reads what it had at stop, and nothing is
 * recorded until a handle starts again. */
static void check_stop_restart(int mode)
{
    unsigned long long before;

    tmon_read(h[CNT], v[CNT]);
    before = v[CNT][(t_rank + 1) % t_size];
    for (int i = 0; i < NPV; ++i) {
        T_MPI(MPI_T_pvar_stop(tmon_session, h[i]));
    }
    T_MPI(MPI_T_pvar_stop(tmon_session, hist));
    tmon_pattern(0);
    read_all();
    T_CHECK(v[CNT][(t_rank + 1) % t_size] == before, "mode %d: stopped handle changed %llu -> %llu",
            mode, before, v[CNT][(t_rank + 1) % t_size]);
    T_MPI(MPI_T_pvar_start(tmon_session, h[CNT]));
    tmon_read(h[CNT], v[CNT]);
    T_CHECK(v[CNT][(t_rank + 1) % t_size] == before,
            "mode %d: traffic while stopped was recorded: %llu, expected %llu", mode,
            v[CNT][(t_rank + 1) % t_size], before);
    tmon_pattern(0);
    tmon_read(h[CNT], v[CNT]);
    T_CHECK(v[CNT][(t_rank + 1) % t_size] == before + (mode ? TMON_EXT_COUNT : 0),
            "mode %d: after restart %llu, expected %llu", mode, v[CNT][(t_rank + 1) % t_size],
            before + (mode ? TMON_EXT_COUNT : 0));
    T_MPI(MPI_T_pvar_stop(tmon_session, h[CNT]));
}

int main(int argc, char **argv)
{
    int mode;

    tmon_init(&argc, &argv);
    mode = tmon_cvar_int("pml_monitoring_enable");
    mode = mode > 2 ? 2 : mode;
    check_stock_pvars();
    handles_alloc();
    /* nothing before the pattern: MPI_Init's traffic is not the PML's */
    read_all();
    for (int i = 0; i < NPV; ++i) {
        for (int p = 0; p < t_size; ++p) {
            T_CHECK(0 == v[i][p], "%s[%d] = %llu before any traffic", names[i], p, v[i][p]);
        }
    }
    tmon_pattern(1);
    read_all();
    check_counts(mode);
    check_histogram(mode);
    check_split(mode);
    check_subset(mode);
    check_freed_comm(mode);
    check_stop_restart(mode);
    for (int i = 0; i < NPV; ++i) {
        T_MPI(MPI_T_pvar_handle_free(tmon_session, &h[i]));
    }
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &hist));
    tmon_finalize();
    return 0;
}

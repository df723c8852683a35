/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * osc_counts.c - osc/monitoring counts every RMA call exactly, per peer,
 * whichever OSC component serves the window, and changes no result.
 *
 * Every rank sends to every other rank, in a fence epoch, a PSCW epoch
 * and a lock epoch: put (3 + target ints), get (5 ints), accumulate (2
 * ints), get_accumulate, fetch_and_op, compare_and_swap (1 int each) and,
 * in the lock epoch, rput (2), rget (4), raccumulate (1) and
 * rget_accumulate (1). Each call adds what Open MPI 4.1's osc/monitoring
 * counts for it to an expected table (see osc_monitoring_rma.c); at the
 * end the engine's MPI_T variables osc_monitoring_messages_{sent,recv}_
 * {count,size} must hold exactly that table, per peer (world rank), and
 * every window and result buffer must hold the values MPI defines.
 *
 * Arguments:
 *   off             monitoring is off: every count must read zero and
 *                   osc/monitoring must not hold the window
 *                   (osc_monitoring_windows == 0)
 *   flavor=create   MPI_Win_create instead of MPI_Win_allocate
 *   nopvars         no handle on the per-peer variables (the counts are
 *                   then checked in the .prof files, by osc_prof.sh)
 */
#include <stdlib.h>
#include <string.h>

#include "tosc.h"

#define STRIDE 32     /* ints of one (epoch, origin) region of a window */
#define STATIC_BASE 0 /* 8 ints read by get/rget, never written */
#define REGION_BASE 8
#define EPOCHS 3

/* Offsets inside a region. */
enum { PUT = 0, ACC = 16, GACC = 18, FOP = 19, CAS = 20, RPUT = 24, RACC = 26, RGACC = 27 };

enum { SENT_COUNT, SENT_SIZE, RECV_COUNT, RECV_SIZE, NVARS };
static const char *var_names[NVARS] = {
    "osc_monitoring_messages_sent_count", "osc_monitoring_messages_sent_size",
    "osc_monitoring_messages_recv_count", "osc_monitoring_messages_recv_size"};

static unsigned long long *expected[NVARS]; /* per world rank */
static int *winbuf;
static MPI_Win win;

/* One RMA call to peer: sent bytes always, received bytes when >= 0. */
static void expect(int peer, long sent, long recv)
{
    expected[SENT_COUNT][peer] += 1;
    expected[SENT_SIZE][peer] += (unsigned long long) sent;
    if (recv >= 0) {
        expected[RECV_COUNT][peer] += 1;
        expected[RECV_SIZE][peer] += (unsigned long long) recv;
    }
}

static MPI_Aint region(int epoch, int origin)
{
    return REGION_BASE + ((MPI_Aint) epoch * t_size + origin) * STRIDE;
}

/* Results fetched during an epoch, checked after it. */
typedef struct {
    int get[5], rget[4];
    int gacc, fop, cas, rgacc;
} fetched_t;

static void blocking_ops(int epoch, int p, fetched_t *f)
{
    int put[16], acc[2] = {t_rank + 1, t_rank + 2}, ten = 10, seven = 7, zero = 0;
    int swap = t_rank + 100;
    MPI_Aint r = region(epoch, t_rank);

    for (int i = 0; i < 3 + p; i++) {
        put[i] = 10000 * t_rank + 100 * p + i;
    }
    T_MPI(MPI_Put(put, 3 + p, MPI_INT, p, r + PUT, 3 + p, MPI_INT, win));
    expect(p, 4L * (3 + p), -1);
    T_MPI(MPI_Get(f->get, 5, MPI_INT, p, STATIC_BASE, 5, MPI_INT, win));
    expect(p, 0, 20);
    T_MPI(MPI_Accumulate(acc, 2, MPI_INT, p, r + ACC, 2, MPI_INT, MPI_SUM, win));
    expect(p, 8, -1);
    T_MPI(MPI_Get_accumulate(&ten, 1, MPI_INT, &f->gacc, 1, MPI_INT, p, r + GACC, 1, MPI_INT,
                             MPI_SUM, win));
    expect(p, 4, 4);
    T_MPI(MPI_Fetch_and_op(&seven, &f->fop, MPI_INT, p, r + FOP, MPI_SUM, win));
    expect(p, 4, 4);
    T_MPI(MPI_Compare_and_swap(&swap, &zero, &f->cas, MPI_INT, p, r + CAS, win));
    expect(p, 4, 4);
}

/* Request-based calls: passive target only. */
static void request_ops(int p, fetched_t *f)
{
    static int rput[2], racc, five = 5;
    MPI_Request req[4];
    MPI_Aint r = region(2, t_rank);

    rput[0] = t_rank + 50;
    rput[1] = t_rank + 51;
    racc = t_rank + 3;
    T_MPI(MPI_Rput(rput, 2, MPI_INT, p, r + RPUT, 2, MPI_INT, win, &req[0]));
    expect(p, 8, -1);
    T_MPI(MPI_Rget(f->rget, 4, MPI_INT, p, STATIC_BASE + 4, 4, MPI_INT, win, &req[1]));
    expect(p, 0, 16);
    T_MPI(MPI_Raccumulate(&racc, 1, MPI_INT, p, r + RACC, 1, MPI_INT, MPI_SUM, win, &req[2]));
    expect(p, 4, -1);
    T_MPI(MPI_Rget_accumulate(&five, 1, MPI_INT, &f->rgacc, 1, MPI_INT, p, r + RGACC, 1, MPI_INT,
                              MPI_SUM, win, &req[3]));
    expect(p, 4, 4);
    T_MPI(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
}

static void check_fetched(const fetched_t *f, int p, int with_requests, const char *epoch)
{
    for (int i = 0; i < 5; i++) {
        T_CHECK(f->get[i] == 1000 * p + i, "%s: get from %d [%d] = %d", epoch, p, i, f->get[i]);
    }
    T_CHECK(0 == f->gacc && 0 == f->fop && 0 == f->cas,
            "%s: fetched from %d: get_accumulate %d fetch_and_op %d compare_and_swap %d (want 0)",
            epoch, p, f->gacc, f->fop, f->cas);
    if (with_requests) {
        for (int i = 0; i < 4; i++) {
            T_CHECK(f->rget[i] == 1000 * p + 4 + i, "%s: rget from %d [%d] = %d", epoch, p, i,
                    f->rget[i]);
        }
        T_CHECK(0 == f->rgacc, "%s: rget_accumulate from %d fetched %d", epoch, p, f->rgacc);
    }
}

static void run_epoch(int epoch, MPI_Group others)
{
    fetched_t *f = calloc((size_t) t_size, sizeof(*f));
    static const char *names[EPOCHS] = {"fence", "pscw", "lock"};

    T_CHECK(NULL != f, "out of memory");
    if (0 == epoch) {
        T_MPI(MPI_Win_fence(0, win));
    } else if (1 == epoch) {
        T_MPI(MPI_Win_post(others, 0, win));
        T_MPI(MPI_Win_start(others, 0, win));
    }
    for (int p = 0; p < t_size; p++) {
        if (p == t_rank) {
            continue;
        }
        if (2 == epoch) {
            T_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, p, 0, win));
            request_ops(p, &f[p]);
        }
        blocking_ops(epoch, p, &f[p]);
        if (2 == epoch) {
            T_MPI(MPI_Win_unlock(p, win));
        }
    }
    if (0 == epoch) {
        T_MPI(MPI_Win_fence(0, win));
    } else if (1 == epoch) {
        T_MPI(MPI_Win_complete(win));
        T_MPI(MPI_Win_wait(win));
    }
    for (int p = 0; p < t_size; p++) {
        if (p != t_rank) {
            check_fetched(&f[p], p, 2 == epoch, names[epoch]);
        }
    }
    free(f);
}

/* What each origin left in this rank's window. */
static void check_window(void)
{
    for (int e = 0; e < EPOCHS; e++) {
        for (int o = 0; o < t_size; o++) {
            const int *w = winbuf + region(e, o);
            if (o == t_rank) {
                continue;
            }
            for (int i = 0; i < 3 + t_rank; i++) {
                T_CHECK(w[PUT + i] == 10000 * o + 100 * t_rank + i,
                        "epoch %d: put from %d [%d] = %d", e, o, i, w[PUT + i]);
            }
            T_CHECK(w[ACC] == o + 1 && w[ACC + 1] == o + 2 && w[GACC] == 10 && w[FOP] == 7 &&
                        w[CAS] == o + 100,
                    "epoch %d: from %d: accumulate %d,%d get_accumulate %d fetch_and_op %d "
                    "compare_and_swap %d",
                    e, o, w[ACC], w[ACC + 1], w[GACC], w[FOP], w[CAS]);
            if (2 == e) {
                T_CHECK(w[RPUT] == o + 50 && w[RPUT + 1] == o + 51 && w[RACC] == o + 3 &&
                            w[RGACC] == 5,
                        "lock epoch: from %d: rput %d,%d raccumulate %d rget_accumulate %d", o,
                        w[RPUT], w[RPUT + 1], w[RACC], w[RGACC]);
            }
        }
    }
}

static void check_counts(MPI_T_pvar_session s, MPI_T_pvar_handle *h, int off)
{
    unsigned long long *got = calloc((size_t) t_size, sizeof(*got));

    for (int v = 0; v < NVARS; v++) {
        T_MPI(MPI_T_pvar_read(s, h[v], got));
        for (int p = 0; p < t_size; p++) {
            unsigned long long want = off ? 0 : expected[v][p];
            T_CHECK(got[p] == want, "%s[%d] = %llu, want %llu", var_names[v], p, got[p], want);
        }
    }
    free(got);
}

static void open_counts(MPI_T_pvar_session s, MPI_T_pvar_handle *h)
{
    for (int v = 0; v < NVARS; v++) {
        h[v] = tosc_open_peer_var(s, var_names[v]);
    }
}

int main(int argc, char **argv)
{
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h[NVARS];
    MPI_Group world, others;
    MPI_Aint bytes;
    int off = t_has_arg(argc, argv, "off"), me[1];
    int pvars = !t_has_arg(argc, argv, "nopvars");
    const char *flavor = t_arg_value(argc, argv, "flavor");
    unsigned long long held;

    /* No pml_ob1x counters needed here: the same program runs under ob1. */
    setenv("OB1X_TEST_NO_PVARS", "1", 1);
    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    T_CHECK(t_size >= 2 && t_size <= 12, "needs 2 to 12 ranks");
    for (int v = 0; v < NVARS; v++) {
        expected[v] = calloc((size_t) t_size, sizeof(unsigned long long));
    }
    T_MPI(MPI_T_pvar_session_create(&s));
    if (pvars) {
        open_counts(s, h);
    }

    bytes = (REGION_BASE + (MPI_Aint) EPOCHS * t_size * STRIDE) * (MPI_Aint) sizeof(int);
    if (NULL != flavor && 0 == strcmp(flavor, "create")) {
        winbuf = calloc(1, (size_t) bytes);
        T_MPI(MPI_Win_create(winbuf, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else {
        T_MPI(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &winbuf, &win));
        memset(winbuf, 0, (size_t) bytes);
    }
    for (int i = 0; i < 8; i++) {
        winbuf[STATIC_BASE + i] = 1000 * t_rank + i;
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));

    held = tosc_windows_held(s);
    T_CHECK(held == (off ? 0u : 1u), "osc_monitoring_windows = %llu with the window open", held);

    T_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    me[0] = t_rank;
    T_MPI(MPI_Group_excl(world, 1, me, &others));
    for (int e = 0; e < EPOCHS; e++) {
        run_epoch(e, others);
    }
    T_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    check_window();
    if (pvars) {
        check_counts(s, h, off);
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));

    T_MPI(MPI_Win_free(&win));
    held = tosc_windows_held(s);
    T_CHECK(0 == held, "osc_monitoring_windows = %llu after MPI_Win_free", held);
    if (NULL != flavor && 0 == strcmp(flavor, "create")) {
        free(winbuf);
    }
    MPI_Group_free(&others);
    MPI_Group_free(&world);
    for (int v = 0; v < NVARS; v++) {
        if (pvars) {
            MPI_T_pvar_handle_free(s, &h[v]);
        }
        free(expected[v]);
    }
    MPI_T_pvar_session_free(&s);
    return t_finalize();
}

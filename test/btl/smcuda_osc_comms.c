/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_osc_comms.c - one-sided MPI on communicators other than
 * MPI_COMM_WORLD: MPI_COMM_SELF and the halves of a split.
 *
 * osc/rdma serves a window only over one BTL that reaches every process
 * of the communicator, the caller included; on MPI_COMM_SELF that is the
 * caller alone. For each flavour (create, allocate, dynamic):
 *   - MPI_COMM_SELF: put, get, accumulate (SUM, int64), fetch-and-op
 *     (SUM, int64 and double), compare-and-swap (int64 and int32) on our
 *     own window in a lock epoch, values checked;
 *   - split by rank parity: in fence epochs every rank puts into the next
 *     rank of its half, gets it back, fetch-and-adds into the half's first
 *     rank and compare-and-swaps there (one winner), values checked.
 *     The halves create their windows one after the other: osc/rdma of
 *     Open MPI 4.1 names its shared segment by communicator id, which
 *     the two halves of a split share, so windows created by both halves
 *     at once collide in one file (with any BTL; fixed upstream after 4.1).
 * Every MPI error is returned, not fatal: a window that cannot be created
 * is reported as such.
 */
#include "osc_util.h"

#define PROG "btl/smcuda_osc_comms"
#define WBYTES 4096

/* windows that return their errors (see the header) */
static void win_open(ou_window_t *w, int fl, MPI_Comm comm, const char *where)
{
    ou_win_open(w, fl, comm, WBYTES, MPI_INFO_NULL, where);
    MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN);
}

#define OK(call, ...)                                                                              \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        BU_CHECK(MPI_SUCCESS == rc_, __VA_ARGS__);                                                 \
    } while (0)

static void self_window(int fl)
{
    ou_window_t w;
    int64_t v = 42, got = 0, one = 5, old = -1, cmp, nv;
    int32_t c32 = 0, n32 = 7, o32 = -1;
    double dx = 1.5, dold = -1;
    MPI_Aint d;

    win_open(&w, fl, MPI_COMM_SELF, "MPI_COMM_SELF");
    d = w.disp[0];
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win), "lock self");
    OK(MPI_Put(&v, 1, MPI_INT64_T, 0, d, 1, MPI_INT64_T, w.win), "put to self");
    OK(MPI_Win_flush(0, w.win), "flush");
    OK(MPI_Get(&got, 1, MPI_INT64_T, 0, d, 1, MPI_INT64_T, w.win), "get from self");
    OK(MPI_Win_flush(0, w.win), "flush");
    BU_CHECK(42 == got, "%s on MPI_COMM_SELF: get returned %lld", w.name, (long long) got);
    OK(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, d, 1, MPI_INT64_T, MPI_SUM, w.win), "accumulate");
    OK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, d, MPI_SUM, w.win), "fetch_and_op");
    OK(MPI_Win_flush(0, w.win), "flush");
    BU_CHECK(47 == old, "%s on MPI_COMM_SELF: fetch-and-op fetched %lld, expected 47", w.name,
             (long long) old);
    cmp = 52, nv = 1000;
    OK(MPI_Compare_and_swap(&nv, &cmp, &old, MPI_INT64_T, 0, d, w.win), "compare_and_swap");
    OK(MPI_Win_flush(0, w.win), "flush");
    BU_CHECK(52 == old, "%s on MPI_COMM_SELF: compare-and-swap fetched %lld", w.name,
             (long long) old);
    OK(MPI_Compare_and_swap(&n32, &c32, &o32, MPI_INT32_T, 0, d + 8, w.win), "cas32");
    OK(MPI_Fetch_and_op(&dx, &dold, MPI_DOUBLE, 0, d + 16, MPI_SUM, w.win), "fop double");
    OK(MPI_Win_unlock(0, w.win), "unlock");
    BU_CHECK(1000 == *(int64_t *) w.base && 0 == o32 && 7 == *(int32_t *) (w.base + 8) &&
                 0 == dold && 1.5 == *(double *) (w.base + 16),
             "%s on MPI_COMM_SELF: window holds %lld %d %g (cas32 fetched %d, fop fetched %g)",
             w.name, (long long) *(int64_t *) w.base, *(int32_t *) (w.base + 8),
             *(double *) (w.base + 16), o32, dold);
    ou_win_close(&w);
}

static void split_window(int fl, MPI_Comm half, int color)
{
    ou_window_t w;
    int me, n, next, prev, winner = -2, wins, minus1 = -1;
    int64_t mine, got = -1, one = 1, ticket = -1, all_tickets = 0;

    MPI_Comm_rank(half, &me);
    MPI_Comm_size(half, &n);
    next = (me + 1) % n, prev = (me + n - 1) % n;
    /* the halves take turns (see the header) */
    for (int turn = 0; turn < 2; ++turn) {
        if (turn == color) {
            win_open(&w, fl, half, "a split communicator");
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    *(int32_t *) (w.base + 16) = -1;
    mine = 1000 * bu_rank + fl;
    OK(MPI_Win_fence(0, w.win), "fence");
    OK(MPI_Put(&mine, 1, MPI_INT64_T, next, w.disp[next], 1, MPI_INT64_T, w.win), "put");
    OK(MPI_Win_fence(0, w.win), "fence");
    OK(MPI_Get(&got, 1, MPI_INT64_T, next, w.disp[next], 1, MPI_INT64_T, w.win), "get");
    OK(MPI_Fetch_and_op(&one, &ticket, MPI_INT64_T, 0, w.disp[0] + 8, MPI_SUM, w.win), "fop");
    OK(MPI_Win_fence(0, w.win), "fence");
    OK(MPI_Compare_and_swap(&me, &minus1, &winner, MPI_INT32_T, 0, w.disp[0] + 16, w.win), "cas");
    OK(MPI_Win_fence(0, w.win), "fence");
    BU_CHECK(got == mine, "%s window on a split: got %lld back from the next rank, put %lld",
             w.name, (long long) got, (long long) mine);
    {
        int64_t from_prev = *(int64_t *) w.base;
        int prev_world = -1;
        MPI_Group g, wg;
        MPI_Comm_group(half, &g);
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Group_translate_ranks(g, 1, &prev, wg, &prev_world);
        MPI_Group_free(&g);
        MPI_Group_free(&wg);
        BU_CHECK(from_prev == 1000 * prev_world + fl, "%s window on a split: holds %lld from %d",
                 w.name, (long long) from_prev, prev_world);
    }
    wins = -1 == winner;
    MPI_Allreduce(MPI_IN_PLACE, &wins, 1, MPI_INT, MPI_SUM, half);
    MPI_Allreduce(&ticket, &all_tickets, 1, MPI_INT64_T, MPI_SUM, half);
    BU_CHECK(1 == wins, "%s window on a split: %d compare-and-swap winners", w.name, wins);
    BU_CHECK(all_tickets == (int64_t) n * (n - 1) / 2, "%s window on a split: tickets sum %lld",
             w.name, (long long) all_tickets);
    if (0 == me) {
        BU_CHECK(n == *(int64_t *) (w.base + 8), "%s window on a split: counter %lld", w.name,
                 (long long) *(int64_t *) (w.base + 8));
    }
    for (int turn = 0; turn < 2; ++turn) {
        if (turn == color) {
            ou_win_close(&w);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    MPI_Comm half;
    int color;

    bu_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int fl = 0; fl < OU_NFLAVOURS; ++fl) {
        self_window(fl);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == bu_rank) {
        printf("%s: MPI_COMM_SELF windows ok\n", PROG);
    }
    color = bu_rank % 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, bu_rank, &half);
    MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
    for (int fl = 0; fl < OU_NFLAVOURS; ++fl) {
        split_window(fl, half, color);
    }
    MPI_Comm_free(&half);
    if (0 == bu_rank) {
        printf("%s: split communicator windows ok\n", PROG);
    }
    return bu_finalize(PROG);
}

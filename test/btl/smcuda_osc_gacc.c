/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_osc_gacc.c - MPI_Get_accumulate and MPI_Accumulate on derived
 * datatypes, all to all inside fence epochs, results and windows checked.
 *
 * Each rank owns a slot of 5 elements in every rank's window (itself
 * included). In each epoch every rank get-accumulates 5 values into its
 * slot at every rank: int, long, float and double; ops SUM, REPLACE and
 * NO_OP; datatypes MPI_Type_contiguous(1, T) x 5 on all three sides, or
 * predefined origin and target with a derived result. The fetched values
 * must be the slot's old contents, the slot must end as the operation says.
 * Then the same with MPI_Accumulate (SUM). Window flavours: create,
 * allocate, dynamic.
 *
 * osc/rdma of Open MPI 4.1.4 returns wrong results here (every remote
 * target) whenever the BTL carries out the fetching atomics: it unpacks the
 * results from past the values the atomics returned.
 */
#include "osc_util.h"

#define PROG "btl/smcuda_osc_gacc"
#define N 5
#define SLOT 64 /* bytes per origin rank */

enum { T_INT, T_LONG, T_FLT, T_DBL, T_COUNT };
static const char *type_names[T_COUNT] = {"int", "long", "float", "double"};
static MPI_Datatype types[T_COUNT];
static const int sizes[T_COUNT] = {sizeof(int), sizeof(long), sizeof(float), sizeof(double)};
/* how each type is read and written (osc_util.h) */
static const int kinds[T_COUNT] = {OU_KIND_OF_INT(int), OU_KIND_OF_INT(long), OU_FLT, OU_DBL};

static double init_val(int tgt, int o, int e)
{
    return 1000 * tgt + 10 * o + e + 1;
}

static double operand(int tgt, int o, int e)
{
    return 3 * e + o + tgt + 1;
}

static void put_val(int t, void *p, double v)
{
    ou_store(kinds[t], p, ou_val(v));
}

static double get_val(int t, const void *p)
{
    return ou_shown(kinds[t], p);
}

/* op: 0 SUM, 1 REPLACE, 2 NO_OP; shape: 0 all derived, 1 derived result
 * only; acc: MPI_Accumulate (SUM) instead of MPI_Get_accumulate. */
static void one_epoch(const ou_window_t *w, int t, int op, int shape, int acc)
{
    static const char *op_names[] = {"SUM", "REPLACE", "NO_OP"};
    const MPI_Op mop = 0 == op ? MPI_SUM : 1 == op ? MPI_REPLACE : MPI_NO_OP;
    unsigned char src[N * 8], res[64][N * 8];
    MPI_Datatype one, dt_src, dt_res, dt_tgt;
    int n_src, n_res, n_tgt;

    MPI_Type_contiguous(1, types[t], &one);
    MPI_Type_commit(&one);
    dt_res = one, n_res = N;
    dt_src = dt_tgt = 0 == shape ? one : types[t];
    n_src = n_tgt = N;

    for (int o = 0; o < bu_size; ++o) {
        for (int e = 0; e < N; ++e) {
            put_val(t, w->base + (size_t) o * SLOT + (size_t) e * sizes[t],
                    init_val(bu_rank, o, e));
        }
    }
    memset(res, 0xa5, sizeof(res));
    MPI_Win_fence(0, w->win);
    for (int tgt = 0; tgt < bu_size; ++tgt) {
        MPI_Aint d = w->disp[tgt] + (MPI_Aint) bu_rank * SLOT;
        for (int e = 0; e < N; ++e) {
            put_val(t, src + e * sizes[t], operand(tgt, bu_rank, e));
        }
        if (acc) {
            MPI_Accumulate(src, n_src, dt_src, tgt, d, n_tgt, dt_tgt, MPI_SUM, w->win);
        } else {
            MPI_Get_accumulate(src, n_src, dt_src, res[tgt], n_res, dt_res, tgt, d, n_tgt, dt_tgt,
                               mop, w->win);
        }
    }
    MPI_Win_fence(0, w->win);
    for (int tgt = 0; tgt < bu_size && !acc; ++tgt) {
        for (int e = 0; e < N; ++e) {
            double got = get_val(t, res[tgt] + e * sizes[t]), want = init_val(tgt, bu_rank, e);
            BU_CHECK(got == want,
                     "%s window, Get_accumulate %s %s (%s) from rank %d: result %d is %.17g, "
                     "expected %.17g",
                     w->name, type_names[t], op_names[op],
                     0 == shape ? "all derived" : "derived result", tgt, e, got, want);
        }
    }
    for (int o = 0; o < bu_size; ++o) {
        for (int e = 0; e < N; ++e) {
            double old = init_val(bu_rank, o, e), x = operand(bu_rank, o, e);
            double want = acc || 0 == op ? old + x : 1 == op ? x : old;
            double got = get_val(t, w->base + (size_t) o * SLOT + (size_t) e * sizes[t]);
            BU_CHECK(got == want,
                     "%s window, %s %s %s from rank %d: element %d is %.17g, not %.17g", w->name,
                     acc ? "Accumulate" : "Get_accumulate", type_names[t],
                     acc ? "SUM" : op_names[op], o, e, got, want);
        }
    }
    MPI_Type_free(&one);
}

static void run_window(ou_window_t *w)
{
    for (int t = 0; t < T_COUNT; ++t) {
        for (int shape = 0; shape < 2; ++shape) {
            for (int op = 0; op < 3; ++op) {
                one_epoch(w, t, op, shape, 0);
            }
        }
        one_epoch(w, t, 0, 0, 1);
    }
}

int main(int argc, char **argv)
{
    bu_init(&argc, &argv);
    BU_CHECK(bu_size <= 64, "at most 64 ranks");
    types[T_INT] = MPI_INT;
    types[T_LONG] = MPI_LONG;
    types[T_FLT] = MPI_FLOAT;
    types[T_DBL] = MPI_DOUBLE;
    ou_each_flavour(PROG, NULL, (MPI_Aint) SLOT * 64, MPI_INFO_NULL, run_window);
    return bu_finalize(PROG);
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_osc_amo.c - every one-sided atomic on every window flavour, to
 * every rank including the origin itself, values checked.
 *
 * For each flavour (create, allocate, dynamic), type (int32, int64, float,
 * double) and operation (SUM, REPLACE, NO_OP, MAX, MIN, BAND, BOR, BXOR;
 * the bitwise ones on integers only), each rank applies MPI_Accumulate,
 * MPI_Fetch_and_op, MPI_Get_accumulate (count 1 and count 3) and, for the
 * integers, MPI_Compare_and_swap (one that matches, one that does not) to
 * a slot of its own in every rank's window, itself included: the fetched
 * values must be the slot's old contents and the slot must end as the
 * operation says (an element past the slot is a guard). Then all ranks
 * fetch-and-add into one counter of every rank (int64 and double): the
 * fetched values must be distinct and the total exact.
 *
 * Arguments: flavours=create,allocate,dynamic (a subset), expect=atomics
 * (btl_smcuda_atomic_ops must have moved: the BTL's atomics were used).
 */
#include "osc_util.h"

#include <stddef.h>

#define PROG "btl/smcuda_osc_amo"
#define SLOT 64 /* bytes of window per origin rank */
#define ROUNDS 50

enum { T_I32 = OU_I32, T_I64 = OU_I64, T_FLT = OU_FLT, T_DBL = OU_DBL, T_COUNT = OU_NKINDS };
static const char *type_names[T_COUNT] = {"int32", "int64", "float", "double"};
static MPI_Datatype types[T_COUNT];

enum { F_ACC, F_FOP, F_GACC, F_GACC3, F_COUNT };
static const char *func_names[F_COUNT] = {"Accumulate", "Fetch_and_op", "Get_accumulate",
                                          "Get_accumulate(count 3)"};

#define NOPS 8
static MPI_Op ops[NOPS];
static const char *op_names[NOPS] = {"SUM", "REPLACE", "NO_OP", "MAX",
                                     "MIN", "BAND",    "BOR",   "BXOR"};

/* The slot's old value (target t, origin o, element e). */
static ou_val_t init_val(int t, int tgt, int o, int e)
{
    ou_val_t v;
    int64_t base = 1000 * tgt + 10 * o + 3 + 100 * e;

    v.i = T_I64 == t ? ((int64_t) (tgt + 1) << 40) + base : (tgt & 1 ? -base : base);
    v.d = (double) base * (tgt & 1 ? -1 : 1);
    return v;
}

/* The origin's operand: above or below the old value depending on the
 * origin, so that MAX and MIN both keep and replace. */
static ou_val_t operand(int t, int tgt, int o, int e, int op)
{
    ou_val_t v = init_val(t, tgt, o, e);
    int up = (o + e) & 1;

    if (op >= 5) { /* bitwise */
        v.i = (T_I64 == t ? 0x5555aaaa0f0f3c3cll : 0x0f0f3c3c) ^ (int64_t) (o * 7 + e);
        return v;
    }
    v.i += T_I64 == t ? (up ? (1ll << 35) + o : -(1ll << 36) - o) : (up ? 5 + o : -5 - o);
    v.d += up ? 0.5 + o : -4.25 - o;
    return v;
}

/* The slot after op with operand x. Both fields are worked out, the one
 * of the type's kind counts (the bitwise operations are for integers). */
static ou_val_t apply(int t, int op, ou_val_t old, ou_val_t x)
{
    ou_val_t r = old;

    switch (op) {
        case 0:
            r.i = old.i + x.i;
            r.d = old.d + x.d;
            break;
        case 1:
            r = x;
            break;
        case 2:
            break;
        case 3:
            r.i = x.i > old.i ? x.i : old.i;
            r.d = x.d > old.d ? x.d : old.d;
            break;
        case 4:
            r.i = x.i < old.i ? x.i : old.i;
            r.d = x.d < old.d ? x.d : old.d;
            break;
        case 5:
            r.i = old.i & x.i;
            break;
        case 6:
            r.i = old.i | x.i;
            break;
        case 7:
            r.i = old.i ^ x.i;
            break;
    }
    return ou_narrow(t, r);
}

static MPI_Aint slot_disp(const ou_window_t *w, int tgt, int o, int e, int t)
{
    return w->disp[tgt] + (MPI_Aint) o * SLOT + (MPI_Aint) e * ou_kind_size[t];
}

/* Our slots (one per origin) get their old values; elements 3 are guards. */
static void init_slots(const ou_window_t *w, int t)
{
    for (int o = 0; o < bu_size; ++o) {
        for (int e = 0; e < 4; ++e) {
            ou_store(t, w->base + (size_t) o * SLOT + (size_t) e * ou_kind_size[t],
                     init_val(t, bu_rank, o, e));
        }
    }
}

/* One function with one operation from us to every rank; fetched values
 * checked here, the slots by their owner (check_slots). */
static void issue(const ou_window_t *w, int t, int op, int f)
{
    int n = F_GACC3 == f ? 3 : 1;

    for (int tgt = 0; tgt < bu_size; ++tgt) {
        unsigned char x[3 * 8], res[3 * 8];
        for (int e = 0; e < n; ++e) {
            ou_store(t, x + e * ou_kind_size[t], operand(t, tgt, bu_rank, e, op));
        }
        memset(res, 0xa5, sizeof(res));
        switch (f) {
            case F_ACC:
                MPI_Accumulate(x, 1, types[t], tgt, slot_disp(w, tgt, bu_rank, 0, t), 1, types[t],
                               ops[op], w->win);
                break;
            case F_FOP:
                MPI_Fetch_and_op(x, res, types[t], tgt, slot_disp(w, tgt, bu_rank, 0, t), ops[op],
                                 w->win);
                break;
            default:
                MPI_Get_accumulate(x, n, types[t], res, n, types[t], tgt,
                                   slot_disp(w, tgt, bu_rank, 0, t), n, types[t], ops[op], w->win);
                break;
        }
        MPI_Win_flush(tgt, w->win);
        for (int e = 0; F_ACC != f && e < n; ++e) {
            ou_val_t old = init_val(t, tgt, bu_rank, e);
            BU_CHECK(ou_same(t, res + e * ou_kind_size[t], old),
                     "%s window, %s %s %s to rank %d: fetched element %d is %.17g, expected %.17g",
                     w->name, func_names[f], type_names[t], op_names[op], tgt, e,
                     ou_shown(t, res + e * ou_kind_size[t]), ou_val_shown(t, old));
        }
    }
}

static void check_slots(const ou_window_t *w, int t, int op, int f)
{
    int n = F_GACC3 == f ? 3 : 1;

    for (int o = 0; o < bu_size; ++o) {
        for (int e = 0; e < 4; ++e) {
            ou_val_t old = init_val(t, bu_rank, o, e);
            ou_val_t want = e < n ? apply(t, op, old, operand(t, bu_rank, o, e, op)) : old;
            const unsigned char *p = w->base + (size_t) o * SLOT + (size_t) e * ou_kind_size[t];
            BU_CHECK(ou_same(t, p, want),
                     "%s window, %s %s %s from rank %d: element %d is %.17g, expected %.17g",
                     w->name, func_names[f], type_names[t], op_names[op], o, e, ou_shown(t, p),
                     ou_val_shown(t, want));
        }
    }
}

/* One epoch: slots set, operations from every rank, slots checked. */
static void one_case(const ou_window_t *w, int t, int op, int f)
{
    MPI_Win_lock_all(0, w->win);
    init_slots(w, t);
    MPI_Win_sync(w->win);
    MPI_Barrier(MPI_COMM_WORLD);
    issue(w, t, op, f);
    MPI_Win_flush_all(w->win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(w->win);
    check_slots(w, t, op, f);
    MPI_Win_unlock_all(w->win);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Compare-and-swap: one that matches (swaps), one that does not. */
static void cas_case(const ou_window_t *w, int t)
{
    MPI_Win_lock_all(0, w->win);
    init_slots(w, t);
    MPI_Win_sync(w->win);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int tgt = 0; tgt < bu_size; ++tgt) {
        unsigned char x[8], cmp[8], res[8];
        ou_val_t old = init_val(t, tgt, bu_rank, 0), nv = operand(t, tgt, bu_rank, 0, 0);
        MPI_Aint d = slot_disp(w, tgt, bu_rank, 0, t);

        ou_store(t, x, nv);
        ou_store(t, cmp, old);
        MPI_Compare_and_swap(x, cmp, res, types[t], tgt, d, w->win);
        MPI_Win_flush(tgt, w->win);
        BU_CHECK(ou_same(t, res, old), "%s window, Compare_and_swap %s to rank %d: fetched %.17g",
                 w->name, type_names[t], tgt, ou_shown(t, res));
        /* the old value no longer matches: nothing changes */
        ou_store(t, x, old);
        MPI_Compare_and_swap(x, cmp, res, types[t], tgt, d, w->win);
        MPI_Win_flush(tgt, w->win);
        BU_CHECK(ou_same(t, res, nv),
                 "%s window, failing Compare_and_swap %s to rank %d: fetched %.17g", w->name,
                 type_names[t], tgt, ou_shown(t, res));
    }
    MPI_Win_flush_all(w->win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(w->win);
    for (int o = 0; o < bu_size; ++o) {
        ou_val_t want = operand(t, bu_rank, o, 0, 0);
        const unsigned char *p = w->base + (size_t) o * SLOT;
        BU_CHECK(ou_same(t, p, want), "%s window, Compare_and_swap %s from rank %d left %.17g",
                 w->name, type_names[t], o, ou_shown(t, p));
    }
    MPI_Win_unlock_all(w->win);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* All ranks fetch-and-add 1 into one counter of every rank: tickets distinct. */
static void contention(const ou_window_t *w, int t)
{
    int64_t *mine = malloc(sizeof(int64_t) * ROUNDS * (size_t) bu_size), *all = NULL;
    int n = ROUNDS * bu_size;
    unsigned char one[8], res[8];
    MPI_Aint off = (MPI_Aint) bu_size * SLOT; /* past the slots */

    BU_CHECK(mine, "out of memory");
    MPI_Win_lock_all(0, w->win);
    memset(w->base + off, 0, 8);
    MPI_Win_sync(w->win);
    MPI_Barrier(MPI_COMM_WORLD);
    ou_store(t, one, (ou_val_t){1, 1.0});
    for (int r = 0; r < ROUNDS; ++r) {
        for (int tgt = 0; tgt < bu_size; ++tgt) {
            MPI_Fetch_and_op(one, res, types[t], tgt, w->disp[tgt] + off, MPI_SUM, w->win);
            MPI_Win_flush(tgt, w->win);
            mine[tgt * ROUNDS + r] = (int64_t) ou_shown(t, res);
        }
    }
    MPI_Win_flush_all(w->win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(w->win);
    BU_CHECK(ou_same(t, w->base + off, (ou_val_t){n, (double) n}),
             "%s window, %s counter: %.17g, not %d", w->name, type_names[t],
             ou_shown(t, w->base + off), n);
    MPI_Win_unlock_all(w->win);
    /* per target: the tickets of all origins together are 0..n-1 */
    all = malloc(sizeof(int64_t) * (size_t) n * (size_t) bu_size);
    BU_CHECK(all, "out of memory");
    MPI_Alltoall(mine, ROUNDS, MPI_INT64_T, all, ROUNDS, MPI_INT64_T, MPI_COMM_WORLD);
    qsort(all, (size_t) n, sizeof(*all), ou_cmp_i64);
    for (int i = 0; i < n; ++i) {
        BU_CHECK(all[i] == i, "%s window, %s fetch-and-add tickets: #%d is %lld", w->name,
                 type_names[t], i, (long long) all[i]);
    }
    free(all);
    free(mine);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void run_window(ou_window_t *w)
{
    for (int t = 0; t < T_COUNT; ++t) {
        for (int op = 0; op < NOPS; ++op) {
            if (op >= 5 && !ou_is_int(t)) {
                continue; /* bitwise operations are for integers only */
            }
            for (int f = 0; f < F_COUNT; ++f) {
                if (F_ACC == f && 2 == op) {
                    continue; /* MPI_NO_OP is not an accumulate operation */
                }
                one_case(w, t, op, f);
            }
        }
        if (ou_is_int(t)) {
            cas_case(w, t);
        }
    }
    contention(w, T_I64);
    contention(w, T_DBL);
}

int main(int argc, char **argv)
{
    bu_counters_t before;

    bu_init(&argc, &argv);
    BU_CHECK(bu_size <= 63, "at most 63 ranks");
    types[T_I32] = MPI_INT32_T;
    types[T_I64] = MPI_INT64_T;
    types[T_FLT] = MPI_FLOAT;
    types[T_DBL] = MPI_DOUBLE;
    ops[0] = MPI_SUM, ops[1] = MPI_REPLACE, ops[2] = MPI_NO_OP, ops[3] = MPI_MAX;
    ops[4] = MPI_MIN, ops[5] = MPI_BAND, ops[6] = MPI_BOR, ops[7] = MPI_BXOR;
    bu_counters_total(&before);
    ou_each_flavour(PROG, bu_arg(argc, argv, "flavours"), (MPI_Aint) SLOT * 64, MPI_INFO_NULL,
                    run_window);
    ou_counters_check(PROG, &before, ou_expected(argc, argv, "atomics") ? OU_ATOMICS : 0);
    return bu_finalize(PROG);
}

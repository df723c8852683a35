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
#include "btl_util.h"

#include <stdbool.h>
#include <stddef.h>

#define PROG "btl/smcuda_osc_amo"
#define SLOT 64 /* bytes of window per origin rank */
#define ROUNDS 50

enum { T_I32, T_I64, T_FLT, T_DBL, T_COUNT };
static const char *type_names[T_COUNT] = {"int32", "int64", "float", "double"};
static MPI_Datatype types[T_COUNT];
static const int sizes[T_COUNT] = {4, 8, 4, 8};

enum { F_ACC, F_FOP, F_GACC, F_GACC3, F_COUNT };
static const char *func_names[F_COUNT] = {"Accumulate", "Fetch_and_op", "Get_accumulate",
                                          "Get_accumulate(count 3)"};

#define NOPS 8
static MPI_Op ops[NOPS];
static const char *op_names[NOPS] = {"SUM", "REPLACE", "NO_OP", "MAX",
                                     "MIN", "BAND",    "BOR",   "BXOR"};

typedef struct {
    MPI_Win win;
    unsigned char *base;
    MPI_Aint *disp; /* per rank: window address (dynamic) or 0 */
    const char *name;
} window_t;

/* A value of any of the types, carried as int64 or double. */
typedef struct {
    int64_t i;
    double d;
} val_t;

static bool is_int(int t)
{
    return T_I32 == t || T_I64 == t;
}

/* The slot's old value (target t, origin o, element e). */
static val_t init_val(int t, int tgt, int o, int e)
{
    val_t v;
    int64_t base = 1000 * tgt + 10 * o + 3 + 100 * e;

    v.i = T_I64 == t ? ((int64_t) (tgt + 1) << 40) + base : (tgt & 1 ? -base : base);
    v.d = (double) base * (tgt & 1 ? -1 : 1);
    return v;
}

/* The origin's operand: above or below the old value depending on the
 * origin, so that MAX and MIN both keep and replace. */
static val_t operand(int t, int tgt, int o, int e, int op)
{
    val_t v = init_val(t, tgt, o, e);
    int up = (o + e) & 1;

    if (op >= 5) { /* bitwise */
        v.i = (T_I64 == t ? 0x5555aaaa0f0f3c3cll : 0x0f0f3c3c) ^ (int64_t) (o * 7 + e);
        return v;
    }
    v.i += T_I64 == t ? (up ? (1ll << 35) + o : -(1ll << 36) - o) : (up ? 5 + o : -5 - o);
    v.d += up ? 0.5 + o : -4.25 - o;
    return v;
}

static val_t apply(int t, int op, val_t old, val_t x)
{
    val_t r = old;

    if (is_int(t)) {
        switch (op) {
            case 0:
                r.i = old.i + x.i;
                break;
            case 1:
                r.i = x.i;
                break;
            case 2:
                break;
            case 3:
                r.i = x.i > old.i ? x.i : old.i;
                break;
            case 4:
                r.i = x.i < old.i ? x.i : old.i;
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
        if (T_I32 == t) {
            r.i = (int32_t) r.i;
        }
    } else {
        switch (op) {
            case 0:
                r.d = old.d + x.d;
                break;
            case 1:
                r.d = x.d;
                break;
            case 3:
                r.d = x.d > old.d ? x.d : old.d;
                break;
            case 4:
                r.d = x.d < old.d ? x.d : old.d;
                break;
        }
        if (T_FLT == t) {
            r.d = (float) r.d;
        }
    }
    return r;
}

static void store(int t, void *p, val_t v)
{
    switch (t) {
        case T_I32:
            *(int32_t *) p = (int32_t) v.i;
            break;
        case T_I64:
            *(int64_t *) p = v.i;
            break;
        case T_FLT:
            *(float *) p = (float) v.d;
            break;
        case T_DBL:
            *(double *) p = v.d;
            break;
    }
}

static bool same(int t, const void *p, val_t v)
{
    switch (t) {
        case T_I32:
            return *(const int32_t *) p == (int32_t) v.i;
        case T_I64:
            return *(const int64_t *) p == v.i;
        case T_FLT:
            return *(const float *) p == (float) v.d;
        default:
            return *(const double *) p == v.d;
    }
}

static double shown(int t, const void *p)
{
    switch (t) {
        case T_I32:
            return *(const int32_t *) p;
        case T_I64:
            return (double) *(const int64_t *) p;
        case T_FLT:
            return *(const float *) p;
        default:
            return *(const double *) p;
    }
}

static MPI_Aint slot_disp(const window_t *w, int tgt, int o, int e, int t)
{
    return w->disp[tgt] + (MPI_Aint) o * SLOT + (MPI_Aint) e * sizes[t];
}

/* Our slots (one per origin) get their old values; elements 3 are guards. */
static void init_slots(const window_t *w, int t)
{
    for (int o = 0; o < bu_size; ++o) {
        for (int e = 0; e < 4; ++e) {
            store(t, w->base + (size_t) o * SLOT + (size_t) e * sizes[t],
                  init_val(t, bu_rank, o, e));
        }
    }
}

/* One function with one operation from us to every rank; fetched values
 * checked here, the slots by their owner (check_slots). */
static void issue(const window_t *w, int t, int op, int f)
{
    int n = F_GACC3 == f ? 3 : 1;

    for (int tgt = 0; tgt < bu_size; ++tgt) {
        unsigned char x[3 * 8], res[3 * 8];
        for (int e = 0; e < n; ++e) {
            store(t, x + e * sizes[t], operand(t, tgt, bu_rank, e, op));
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
            val_t old = init_val(t, tgt, bu_rank, e);
            BU_CHECK(same(t, res + e * sizes[t], old),
                     "%s window, %s %s %s to rank %d: fetched element %d is %.17g, expected %.17g",
                     w->name, func_names[f], type_names[t], op_names[op], tgt, e,
                     shown(t, res + e * sizes[t]), is_int(t) ? (double) old.i : old.d);
        }
    }
}

static void check_slots(const window_t *w, int t, int op, int f)
{
    int n = F_GACC3 == f ? 3 : 1;

    for (int o = 0; o < bu_size; ++o) {
        for (int e = 0; e < 4; ++e) {
            val_t old = init_val(t, bu_rank, o, e);
            val_t want = e < n ? apply(t, op, old, operand(t, bu_rank, o, e, op)) : old;
            const unsigned char *p = w->base + (size_t) o * SLOT + (size_t) e * sizes[t];
            BU_CHECK(same(t, p, want),
                     "%s window, %s %s %s from rank %d: element %d is %.17g, expected %.17g",
                     w->name, func_names[f], type_names[t], op_names[op], o, e, shown(t, p),
                     is_int(t) ? (double) want.i : want.d);
        }
    }
}

/* One epoch: slots set, operations from every rank, slots checked. */
static void one_case(const window_t *w, int t, int op, int f)
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
static void cas_case(const window_t *w, int t)
{
    MPI_Win_lock_all(0, w->win);
    init_slots(w, t);
    MPI_Win_sync(w->win);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int tgt = 0; tgt < bu_size; ++tgt) {
        unsigned char x[8], cmp[8], res[8];
        val_t old = init_val(t, tgt, bu_rank, 0), nv = operand(t, tgt, bu_rank, 0, 0);
        MPI_Aint d = slot_disp(w, tgt, bu_rank, 0, t);

        store(t, x, nv);
        store(t, cmp, old);
        MPI_Compare_and_swap(x, cmp, res, types[t], tgt, d, w->win);
        MPI_Win_flush(tgt, w->win);
        BU_CHECK(same(t, res, old), "%s window, Compare_and_swap %s to rank %d: fetched %.17g",
                 w->name, type_names[t], tgt, shown(t, res));
        /* the old value no longer matches: nothing changes */
        store(t, x, old);
        MPI_Compare_and_swap(x, cmp, res, types[t], tgt, d, w->win);
        MPI_Win_flush(tgt, w->win);
        BU_CHECK(same(t, res, nv),
                 "%s window, failing Compare_and_swap %s to rank %d: fetched %.17g", w->name,
                 type_names[t], tgt, shown(t, res));
    }
    MPI_Win_flush_all(w->win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(w->win);
    for (int o = 0; o < bu_size; ++o) {
        val_t want = operand(t, bu_rank, o, 0, 0);
        const unsigned char *p = w->base + (size_t) o * SLOT;
        BU_CHECK(same(t, p, want), "%s window, Compare_and_swap %s from rank %d left %.17g",
                 w->name, type_names[t], o, shown(t, p));
    }
    MPI_Win_unlock_all(w->win);
    MPI_Barrier(MPI_COMM_WORLD);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return x < y ? -1 : x > y;
}

/* All ranks fetch-and-add 1 into one counter of every rank: tickets distinct. */
static void contention(const window_t *w, int t)
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
    store(t, one, (val_t){1, 1.0});
    for (int r = 0; r < ROUNDS; ++r) {
        for (int tgt = 0; tgt < bu_size; ++tgt) {
            MPI_Fetch_and_op(one, res, types[t], tgt, w->disp[tgt] + off, MPI_SUM, w->win);
            MPI_Win_flush(tgt, w->win);
            mine[tgt * ROUNDS + r] = (int64_t) shown(t, res);
        }
    }
    MPI_Win_flush_all(w->win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(w->win);
    BU_CHECK(same(t, w->base + off, (val_t){n, (double) n}), "%s window, %s counter: %.17g, not %d",
             w->name, type_names[t], shown(t, w->base + off), n);
    MPI_Win_unlock_all(w->win);
    /* per target: the tickets of all origins together are 0..n-1 */
    all = malloc(sizeof(int64_t) * (size_t) n * (size_t) bu_size);
    BU_CHECK(all, "out of memory");
    MPI_Alltoall(mine, ROUNDS, MPI_INT64_T, all, ROUNDS, MPI_INT64_T, MPI_COMM_WORLD);
    qsort(all, (size_t) n, sizeof(*all), cmp_i64);
    for (int i = 0; i < n; ++i) {
        BU_CHECK(all[i] == i, "%s window, %s fetch-and-add tickets: #%d is %lld", w->name,
                 type_names[t], i, (long long) all[i]);
    }
    free(all);
    free(mine);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void run_window(window_t *w)
{
    for (int t = 0; t < T_COUNT; ++t) {
        for (int op = 0; op < NOPS; ++op) {
            if (op >= 5 && !is_int(t)) {
                continue; /* bitwise operations are for integers only */
            }
            for (int f = 0; f < F_COUNT; ++f) {
                if (F_ACC == f && 2 == op) {
                    continue; /* MPI_NO_OP is not an accumulate operation */
                }
                one_case(w, t, op, f);
            }
        }
        if (is_int(t)) {
            cas_case(w, t);
        }
    }
    contention(w, T_I64);
    contention(w, T_DBL);
    if (0 == bu_rank) {
        printf("%s: %s window ok\n", PROG, w->name);
    }
}

static bool wanted(const char *list, const char *name)
{
    return NULL == list || NULL != strstr(list, name);
}

int main(int argc, char **argv)
{
    const MPI_Aint bytes = (MPI_Aint) SLOT * 64;
    const char *flavours;
    bu_counters_t before, after;
    window_t w;
    int expect_atomics;

    bu_init(&argc, &argv);
    BU_CHECK(bu_size <= 63, "at most 63 ranks");
    flavours = bu_arg(argc, argv, "flavours");
    expect_atomics = NULL != bu_arg(argc, argv, "expect") &&
                     0 == strcmp(bu_arg(argc, argv, "expect"), "atomics");
    types[T_I32] = MPI_INT32_T;
    types[T_I64] = MPI_INT64_T;
    types[T_FLT] = MPI_FLOAT;
    types[T_DBL] = MPI_DOUBLE;
    ops[0] = MPI_SUM, ops[1] = MPI_REPLACE, ops[2] = MPI_NO_OP, ops[3] = MPI_MAX;
    ops[4] = MPI_MIN, ops[5] = MPI_BAND, ops[6] = MPI_BOR, ops[7] = MPI_BXOR;
    w.disp = calloc((size_t) bu_size, sizeof(*w.disp));
    BU_CHECK(w.disp, "out of memory");
    bu_counters_total(&before);

    if (wanted(flavours, "create")) {
        w.base = malloc((size_t) bytes);
        BU_CHECK(w.base, "out of memory");
        MPI_Win_create(w.base, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w.win);
        w.name = "create";
        run_window(&w);
        MPI_Win_free(&w.win);
        free(w.base);
    }
    if (wanted(flavours, "allocate")) {
        MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w.base, &w.win);
        w.name = "allocate";
        run_window(&w);
        MPI_Win_free(&w.win);
    }
    if (wanted(flavours, "dynamic")) {
        MPI_Aint mine;
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w.win);
        w.base = malloc((size_t) bytes);
        BU_CHECK(w.base, "out of memory");
        MPI_Win_attach(w.win, w.base, bytes);
        MPI_Get_address(w.base, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, w.disp, 1, MPI_AINT, MPI_COMM_WORLD);
        w.name = "dynamic";
        run_window(&w);
        MPI_Win_detach(w.win, w.base);
        MPI_Win_free(&w.win);
        free(w.base);
    }
    bu_counters_total(&after);
    bu_counters_print(PROG, &after);
    if (expect_atomics && 0 == bu_rank) {
        BU_CHECK(after.found, "btl_smcuda counters not found");
        BU_CHECK(after.atomics > before.atomics, "no atomic operation went through btl/smcuda");
    }
    free(w.disp);
    return bu_finalize(PROG);
}

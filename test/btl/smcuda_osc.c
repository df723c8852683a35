/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_osc.c - one-sided MPI over btl/smcuda (osc/rdma needs a BTL with
 * put, get and atomics).  For each window flavor (create, allocate,
 * dynamic):
 *   - fence epochs: every rank puts sizes from 1 B to 2 MiB into the next
 *     rank's window, then gets them back from the previous one; verified;
 *   - passive target (lock_all): all ranks hammer rank 0 with
 *     MPI_Fetch_and_op (64- and 32-bit SUM: every fetched value must be
 *     distinct, the final value exact), MPI_Compare_and_swap (exactly one
 *     winner), MPI_Accumulate (SUM of doubles, MAX of int, MIN of negative
 *     long, BXOR of uint64), MPI_Get_accumulate (REPLACE) and
 *     MPI_Fetch_and_op (NO_OP), and a burst of 1000 accumulates per rank
 *     with no flush in between (many operations in flight), all checked.
 * The create window asks osc for single-element atomics
 * (acc_single_intrinsic), which osc/rdma then does with the BTL's atomics.
 *
 * Arguments:
 *   expect=atomics   btl_smcuda_atomic_ops and the put/get counters must have
 *                    moved (osc/rdma on smcuda)
 */
#include "osc_util.h"

#define PROG "btl/smcuda_osc"
#define WIN_BYTES (4u << 20)
#define ROUNDS 200
#define BURST 1000 /* accumulates without a flush in between: many in flight */

/* The counters live at the start of rank 0's window (the puts of the
 * fence part use the rest). */
typedef struct {
    int64_t sum64;
    int32_t sum32;
    int32_t lock;
    double dsum;
    int32_t imax;
    int32_t pad;
    int64_t lmin;
    uint64_t bxor;
    int64_t swap;
    int64_t burst;
} counters_t;

#define CTR_DISP(field) ((MPI_Aint) offsetof(counters_t, field))
#define DATA_OFF 4096

static MPI_Aint target_disp(const ou_window_t *w, int rank, MPI_Aint off)
{
    return w->disp[rank] + off;
}

static void fence_part(ou_window_t *w)
{
    static const size_t sizes[] = {1, 8, 100, 4095, 4096, 40000, 300000, 2u << 20};
    int next = (bu_rank + 1) % bu_size, prev = (bu_rank + bu_size - 1) % bu_size;
    unsigned char *src = malloc(2u << 20), *back = malloc(2u << 20);

    BU_CHECK(src && back, "out of memory");
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        size_t n = sizes[i];
        long bad;

        bu_fill(src, n, bu_rank + (int) i);
        memset(w->base + DATA_OFF, 0xee, n);
        MPI_Win_fence(0, w->win);
        MPI_Put(src, (int) n, MPI_BYTE, next, target_disp(w, next, DATA_OFF), (int) n, MPI_BYTE,
                w->win);
        MPI_Win_fence(0, w->win);
        bad = bu_verify(w->base + DATA_OFF, n, prev + (int) i);
        BU_CHECK(bad < 0, "%s: put of %zu B from rank %d wrong at byte %ld", w->name, n, prev, bad);
        /* read back what we put into the next rank */
        memset(back, 0, n);
        MPI_Get(back, (int) n, MPI_BYTE, next, target_disp(w, next, DATA_OFF), (int) n, MPI_BYTE,
                w->win);
        MPI_Win_fence(0, w->win);
        bad = bu_verify(back, n, bu_rank + (int) i);
        BU_CHECK(bad < 0, "%s: get of %zu B from rank %d wrong at byte %ld", w->name, n, next, bad);
    }
    free(src);
    free(back);
}

/* Every fetched value of a fetch-and-add by 1 must be distinct: 0..n-1. */
static void check_tickets(const ou_window_t *w, const char *what, int64_t *mine, int n)
{
    int64_t *all = NULL;

    if (0 == bu_rank) {
        all = malloc(sizeof(*all) * (size_t) n * (size_t) bu_size);
        BU_CHECK(all, "out of memory");
    }
    MPI_Gather(mine, n, MPI_INT64_T, all, n, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (0 == bu_rank) {
        qsort(all, (size_t) n * (size_t) bu_size, sizeof(*all), ou_cmp_i64);
        for (int i = 0; i < n * bu_size; ++i) {
            BU_CHECK(all[i] == i, "%s: %s tickets not distinct: #%d is %lld", w->name, what, i,
                     (long long) all[i]);
        }
        free(all);
    }
}

static void passive_part(ou_window_t *w)
{
    counters_t *c = (counters_t *) w->base;
    int64_t one64 = 1, t64[ROUNDS], old64, lmin = -(int64_t) bu_rank * 1000, swap_old;
    int32_t one32 = 1, old32, winner, minus1 = -1, me = bu_rank, imax = bu_rank * 10;
    int64_t t32[ROUNDS];
    double half = 0.5 * (bu_rank + 1);
    uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t) (bu_rank + 1);
    int64_t snapshot, swapped_in = 1000 + bu_rank;
    int wins = 0, total_wins;

    if (0 == bu_rank) {
        memset(c, 0, sizeof(*c));
        c->lock = -1;
        c->lmin = 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, w->win);
    for (int r = 0; r < ROUNDS; ++r) {
        MPI_Fetch_and_op(&one64, &old64, MPI_INT64_T, 0, target_disp(w, 0, CTR_DISP(sum64)),
                         MPI_SUM, w->win);
        MPI_Fetch_and_op(&one32, &old32, MPI_INT32_T, 0, target_disp(w, 0, CTR_DISP(sum32)),
                         MPI_SUM, w->win);
        MPI_Win_flush(0, w->win);
        t64[r] = old64;
        t32[r] = old32;
        MPI_Accumulate(&half, 1, MPI_DOUBLE, 0, target_disp(w, 0, CTR_DISP(dsum)), 1, MPI_DOUBLE,
                       MPI_SUM, w->win);
    }
    for (int r = 0; r < BURST; ++r) {
        MPI_Accumulate(&one64, 1, MPI_INT64_T, 0, target_disp(w, 0, CTR_DISP(burst)), 1,
                       MPI_INT64_T, MPI_SUM, w->win);
    }
    MPI_Compare_and_swap(&me, &minus1, &winner, MPI_INT32_T, 0, target_disp(w, 0, CTR_DISP(lock)),
                         w->win);
    MPI_Accumulate(&imax, 1, MPI_INT32_T, 0, target_disp(w, 0, CTR_DISP(imax)), 1, MPI_INT32_T,
                   MPI_MAX, w->win);
    MPI_Accumulate(&lmin, 1, MPI_INT64_T, 0, target_disp(w, 0, CTR_DISP(lmin)), 1, MPI_INT64_T,
                   MPI_MIN, w->win);
    MPI_Accumulate(&x, 1, MPI_UINT64_T, 0, target_disp(w, 0, CTR_DISP(bxor)), 1, MPI_UINT64_T,
                   MPI_BXOR, w->win);
    MPI_Get_accumulate(&swapped_in, 1, MPI_INT64_T, &swap_old, 1, MPI_INT64_T, 0,
                       target_disp(w, 0, CTR_DISP(swap)), 1, MPI_INT64_T, MPI_REPLACE, w->win);
    MPI_Win_unlock_all(w->win);
    wins = -1 == winner;
    MPI_Reduce(&wins, &total_wins, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    check_tickets(w, "64-bit fetch-and-add", t64, ROUNDS);
    check_tickets(w, "32-bit fetch-and-add", t32, ROUNDS);

    /* atomic read of the counter (NO_OP) once everyone is done */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w->win);
    MPI_Fetch_and_op(NULL, &snapshot, MPI_INT64_T, 0, target_disp(w, 0, CTR_DISP(sum64)), MPI_NO_OP,
                     w->win);
    MPI_Win_unlock(0, w->win);
    BU_CHECK(snapshot == (int64_t) ROUNDS * bu_size, "%s: NO_OP read %lld, expected %lld", w->name,
             (long long) snapshot, (long long) ROUNDS * bu_size);

    if (0 == bu_rank) {
        double dsum = 0;
        uint64_t bx = 0;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w->win);
        for (int r = 0; r < bu_size; ++r) {
            dsum += ROUNDS * 0.5 * (r + 1);
            bx ^= 0x9e3779b97f4a7c15ull * (uint64_t) (r + 1);
        }
        BU_CHECK(c->sum64 == (int64_t) ROUNDS * bu_size, "%s: sum64 %lld", w->name,
                 (long long) c->sum64);
        BU_CHECK(c->sum32 == ROUNDS * bu_size, "%s: sum32 %d", w->name, c->sum32);
        BU_CHECK(c->burst == (int64_t) BURST * bu_size, "%s: burst sum %lld", w->name,
                 (long long) c->burst);
        BU_CHECK(1 == total_wins && c->lock >= 0 && c->lock < bu_size,
                 "%s: compare-and-swap: %d winners, lock %d", w->name, total_wins, c->lock);
        BU_CHECK(c->dsum == dsum, "%s: double sum %.17g, expected %.17g", w->name, c->dsum, dsum);
        BU_CHECK(c->imax == (bu_size - 1) * 10, "%s: max %d", w->name, c->imax);
        BU_CHECK(c->lmin == -(int64_t) (bu_size - 1) * 1000, "%s: min %lld", w->name,
                 (long long) c->lmin);
        BU_CHECK(c->bxor == bx, "%s: bxor %llx, expected %llx", w->name,
                 (unsigned long long) c->bxor, (unsigned long long) bx);
        BU_CHECK(c->swap >= 1000 && c->swap < 1000 + bu_size, "%s: swap %lld", w->name,
                 (long long) c->swap);
        MPI_Win_unlock(0, w->win);
    }
    /* the swap chain: each old value is 0 or another rank's value, all distinct */
    {
        int64_t *olds = 0 == bu_rank ? malloc(sizeof(*olds) * (size_t) bu_size) : NULL;
        MPI_Gather(&swap_old, 1, MPI_INT64_T, olds, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
        if (0 == bu_rank) {
            int zeros = 0;
            qsort(olds, (size_t) bu_size, sizeof(*olds), ou_cmp_i64);
            for (int i = 0; i < bu_size; ++i) {
                zeros += 0 == olds[i];
                BU_CHECK(0 == i || olds[i] != olds[i - 1], "%s: swap returned %lld twice", w->name,
                         (long long) olds[i]);
            }
            BU_CHECK(1 == zeros, "%s: %d swaps saw the initial value", w->name, zeros);
            free(olds);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void run_window(ou_window_t *w)
{
    fence_part(w);
    passive_part(w);
}

int main(int argc, char **argv)
{
    bu_counters_t before;
    MPI_Info info;

    bu_init(&argc, &argv);
    bu_counters_total(&before);
    /* the create window asks for single-element atomics */
    MPI_Info_create(&info);
    MPI_Info_set(info, "acc_single_intrinsic", "true");
    ou_each_flavour(PROG, NULL, WIN_BYTES, info, run_window);
    MPI_Info_free(&info);
    ou_counters_check(PROG, &before,
                      ou_expected(argc, argv, "atomics") ? OU_ATOMICS | OU_PUTS_OR_GETS : 0);
    return bu_finalize(PROG);
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * ofi_osc.c - smoke test of one-sided MPI (stock osc/rdma) over btl/ofi:
 * on a window of each flavour, puts and gets of several sizes checked
 * under fence, then 64- and 32-bit fetch-and-add, compare-and-swap and
 * accumulate under lock_all with flush, results checked; and btl/ofi's
 * counters must show that it carried puts or gets and atomics.
 *
 * Arguments:
 *   expect=native   the atomics went through the provider (btl_ofi_atomic_ops)
 *   expect=am       the atomics went as active messages (btl_ofi_am_atomic_ops)
 */
#include "osc_util.h"

#define PROG "btl/ofi_osc"
#define WIN_BYTES (1u << 20)
#define ROUNDS 50
#define DATA_OFF 4096

typedef struct {
    int64_t sum64;
    int32_t sum32;
    int32_t lock;
    int64_t acc;
} counters_t;

#define CTR(field) ((MPI_Aint) offsetof(counters_t, field))

static MPI_Aint disp(const ou_window_t *w, int rank, MPI_Aint off)
{
    return w->disp[rank] + off;
}

/* Every rank writes a pattern into the next rank's window and reads it
 * back from there, one size after the other. */
static void fence_part(ou_window_t *w)
{
    static const size_t sizes[] = {1, 8, 100, 4096, 40000, 300000};
    int next = (bu_rank + 1) % bu_size, prev = (bu_rank + bu_size - 1) % bu_size;
    unsigned char *src = malloc(WIN_BYTES), *back = malloc(WIN_BYTES);

    BU_CHECK(src && back, "out of memory");
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        size_t n = sizes[i];
        long bad;

        bu_fill(src, n, bu_rank + (int) i);
        MPI_Win_fence(0, w->win);
        MPI_Put(src, (int) n, MPI_BYTE, next, disp(w, next, DATA_OFF), (int) n, MPI_BYTE, w->win);
        MPI_Win_fence(0, w->win);
        bad = bu_verify(w->base + DATA_OFF, n, prev + (int) i);
        BU_CHECK(bad < 0, "%s: put of %zu bytes from rank %d: byte %ld wrong", w->name, n, prev,
                 bad);
        memset(back, 0, n);
        MPI_Get(back, (int) n, MPI_BYTE, next, disp(w, next, DATA_OFF), (int) n, MPI_BYTE, w->win);
        MPI_Win_fence(0, w->win);
        bad = bu_verify(back, n, bu_rank + (int) i);
        BU_CHECK(bad < 0, "%s: get of %zu bytes from rank %d: byte %ld wrong", w->name, n, next,
                 bad);
    }
    free(src);
    free(back);
}

/* Tickets from fetch-and-add are all different; rank 0's counters add up
 * after everyone's flushes. */
static void passive_part(ou_window_t *w)
{
    counters_t *c = (counters_t *) w->base;
    int64_t one64 = 1, old64, acc = bu_rank + 1;
    int32_t one32 = 1, old32, me = bu_rank, minus1 = -1, winner = -2;
    int64_t expect_acc = (int64_t) ROUNDS * bu_size * (bu_size + 1) / 2;
    int wins, total_wins = 0;

    if (0 == bu_rank) {
        memset(c, 0, sizeof(*c));
        c->lock = -1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, w->win);
    for (int r = 0; r < ROUNDS; ++r) {
        MPI_Fetch_and_op(&one64, &old64, MPI_INT64_T, 0, disp(w, 0, CTR(sum64)), MPI_SUM, w->win);
        MPI_Fetch_and_op(&one32, &old32, MPI_INT32_T, 0, disp(w, 0, CTR(sum32)), MPI_SUM, w->win);
        MPI_Accumulate(&acc, 1, MPI_INT64_T, 0, disp(w, 0, CTR(acc)), 1, MPI_INT64_T, MPI_SUM,
                       w->win);
        MPI_Win_flush(0, w->win);
        BU_CHECK(old64 >= 0 && old64 < (int64_t) ROUNDS * bu_size, "%s: ticket %lld out of range",
                 w->name, (long long) old64);
    }
    MPI_Compare_and_swap(&me, &minus1, &winner, MPI_INT32_T, 0, disp(w, 0, CTR(lock)), w->win);
    MPI_Win_flush_local(0, w->win);
    MPI_Win_unlock_all(w->win);
    wins = -1 == winner;
    MPI_Reduce(&wins, &total_wins, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == bu_rank) {
        BU_CHECK(c->sum64 == (int64_t) ROUNDS * bu_size, "%s: 64-bit sum %lld, expected %lld",
                 w->name, (long long) c->sum64, (long long) ROUNDS * bu_size);
        BU_CHECK(c->sum32 == ROUNDS * bu_size, "%s: 32-bit sum %d, expected %d", w->name, c->sum32,
                 ROUNDS * bu_size);
        BU_CHECK(c->acc == expect_acc, "%s: accumulate %lld, expected %lld", w->name,
                 (long long) c->acc, (long long) expect_acc);
        BU_CHECK(1 == total_wins, "%s: %d ranks won the compare-and-swap", w->name, total_wins);
        BU_CHECK(c->lock >= 0 && c->lock < bu_size, "%s: lock holds %d", w->name, c->lock);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void run_window(ou_window_t *w)
{
    fence_part(w);
    passive_part(w);
}

static unsigned long long total(const char *name)
{
    unsigned long long mine = bu_named_counter(name), all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

int main(int argc, char **argv)
{
    unsigned long long rma, native, am;

    /* this test proves that ofi carries fetch-and-add; btl/ofi declines
     * fetching atomics on one node by default (btl_ofi_fetching_atomics:
     * osc/rdma < 4.1.5 gets derived-datatype get-accumulates wrong with
     * them), and nothing here is such a get-accumulate. The command line
     * may still say otherwise (overwrite 0). */
    setenv("OMPI_MCA_btl_ofi_fetching_atomics", "true", 0);
    bu_init(&argc, &argv);
    /* first calls open the counters: they count from here */
    (void) total("btl_ofi_put_ops"), (void) total("btl_ofi_get_ops");
    (void) total("btl_ofi_atomic_ops"), (void) total("btl_ofi_am_atomic_ops");
    ou_each_flavour(PROG, bu_arg(argc, argv, "only"), WIN_BYTES, MPI_INFO_NULL, run_window);
    rma = total("btl_ofi_put_ops") + total("btl_ofi_get_ops");
    native = total("btl_ofi_atomic_ops");
    am = total("btl_ofi_am_atomic_ops");
    if (0 == bu_rank) {
        printf("%s: btl/ofi carried %llu puts+gets, %llu native atomics, %llu AM atomics\n", PROG,
               rma, native, am);
        BU_CHECK(rma > 0, "btl/ofi carried no put or get (osc/rdma used something else)");
        BU_CHECK(native + am > 0, "btl/ofi carried no atomic operation");
        if (ou_expected(argc, argv, "native")) {
            BU_CHECK(native > 0, "no atomic went through the provider (FI_ATOMIC)");
        }
        if (ou_expected(argc, argv, "am")) {
            BU_CHECK(am > 0 && 0 == native, "atomics were not carried as active messages");
        }
    }
    return bu_finalize(PROG);
}

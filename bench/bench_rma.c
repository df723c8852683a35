/*
 * ob1x benchmarks: one-sided tests (passive target, MPI_Win_allocate + MPI_Win_lock_all).
 *
 *   put_lat / get_lat / acc_lat  one operation then MPI_Win_flush, per operation (us)
 *   put_bw  / get_bw  / acc_bw   a window of operations then one MPI_Win_flush     (MB/s)
 *
 * Accumulate uses MPI_SUM on MPI_UNSIGNED_CHAR, so after `iters` rounds target byte j of slot w
 * equals iters * pattern(seed, w, j) modulo 256.  The target rank makes no MPI calls in the
 * timed loop.
 */
#include "bench.h"

#include <string.h>

static int rma_begin(bench_ctx_t *ctx)
{
    if (MPI_SUCCESS != MPI_Win_allocate((MPI_Aint) ctx->buf_bytes, 1, MPI_INFO_NULL, ctx->comm,
                                        &ctx->wbuf, &ctx->win)) {
        return -1;
    }
    memset(ctx->wbuf, 0, ctx->buf_bytes);
    MPI_Win_lock_all(0, ctx->win);
    return 0;
}

static void rma_end(bench_ctx_t *ctx)
{
    MPI_Win_unlock_all(ctx->win);
    MPI_Win_free(&ctx->win);
}

static unsigned char *slot(unsigned char *base, const bench_ctx_t *ctx, int w)
{
    return base + (size_t) w * ctx->stride;
}

/* Origin: send slots hold the pattern.  Target: window slots cleared. */
static void put_prepare(bench_ctx_t *ctx, unsigned seed)
{
    for (int w = 0; w < ctx->window && ctx->peer >= 0; w++) {
        if (ctx->initiator) {
            bench_fill(slot(ctx->sbuf, ctx, w), ctx->size, seed, w);
        } else {
            memset(slot(ctx->wbuf, ctx, w), 0, ctx->size);
        }
    }
    MPI_Win_sync(ctx->win);
}

/* Target: window slots hold the pattern.  Origin: receive slots cleared. */
static void get_prepare(bench_ctx_t *ctx, unsigned seed)
{
    for (int w = 0; w < ctx->window && ctx->peer >= 0; w++) {
        if (ctx->initiator) {
            memset(slot(ctx->rbuf, ctx, w), 0, ctx->size);
        } else {
            bench_fill(slot(ctx->wbuf, ctx, w), ctx->size, seed, w);
        }
    }
    MPI_Win_sync(ctx->win);
}

static void rma_ops(bench_ctx_t *ctx, int iters, int op)
{
    int cnt = (int) ctx->size;
    if (ctx->peer < 0 || !ctx->initiator) {
        return;
    }
    for (int i = 0; i < iters; i++) {
        for (int w = 0; w < ctx->window; w++) {
            MPI_Aint disp = (MPI_Aint) w * (MPI_Aint) ctx->stride;
            if (0 == op) {
                MPI_Put(slot(ctx->sbuf, ctx, w), cnt, MPI_BYTE, ctx->peer, disp, cnt, MPI_BYTE,
                        ctx->win);
            } else if (1 == op) {
                MPI_Get(slot(ctx->rbuf, ctx, w), cnt, MPI_BYTE, ctx->peer, disp, cnt, MPI_BYTE,
                        ctx->win);
            } else {
                MPI_Accumulate(slot(ctx->sbuf, ctx, w), cnt, MPI_UNSIGNED_CHAR, ctx->peer, disp,
                               cnt, MPI_UNSIGNED_CHAR, MPI_SUM, ctx->win);
            }
        }
        MPI_Win_flush(ctx->peer, ctx->win);
    }
}

static void put_run(bench_ctx_t *ctx, int iters)
{
    rma_ops(ctx, iters, 0);
}
static void get_run(bench_ctx_t *ctx, int iters)
{
    rma_ops(ctx, iters, 1);
}
static void acc_run(bench_ctx_t *ctx, int iters)
{
    rma_ops(ctx, iters, 2);
}

/* The barrier orders the origin's flush before the target's look at its window. */
static int put_check(bench_ctx_t *ctx, unsigned seed, int iters)
{
    (void) iters;
    MPI_Barrier(ctx->comm);
    MPI_Win_sync(ctx->win);
    if (ctx->peer < 0 || ctx->initiator) {
        return 0;
    }
    for (int w = 0; w < ctx->window; w++) {
        if (bench_verify(slot(ctx->wbuf, ctx, w), ctx->size, seed, w) >= 0) {
            return 1;
        }
    }
    return 0;
}

static int get_check(bench_ctx_t *ctx, unsigned seed, int iters)
{
    (void) iters;
    MPI_Barrier(ctx->comm);
    if (ctx->peer < 0 || !ctx->initiator) {
        return 0;
    }
    for (int w = 0; w < ctx->window; w++) {
        if (bench_verify(slot(ctx->rbuf, ctx, w), ctx->size, seed, w) >= 0) {
            return 1;
        }
    }
    return 0;
}

/* Target byte j of slot w must be iters * pattern(seed, w, j) mod 256; the expected bytes repeat
 * with the pattern's period, so compare block by block. */
static int acc_check(bench_ctx_t *ctx, unsigned seed, int iters)
{
    unsigned char want[256];
    MPI_Barrier(ctx->comm);
    MPI_Win_sync(ctx->win);
    if (ctx->peer < 0 || ctx->initiator) {
        return 0;
    }
    for (int w = 0; w < ctx->window; w++) {
        const unsigned char *p = slot(ctx->wbuf, ctx, w);
        for (size_t j = 0; j < sizeof(want); j++) {
            want[j] = (unsigned char) ((unsigned) iters * bench_pattern(seed, w, j));
        }
        for (size_t off = 0; off < ctx->size; off += sizeof(want)) {
            size_t len = ctx->size - off < sizeof(want) ? ctx->size - off : sizeof(want);
            if (0 != memcmp(p + off, want, len)) {
                return 1;
            }
        }
    }
    return 0;
}

static double op_latency(const bench_ctx_t *ctx, int iters, double sec)
{
    (void) ctx;
    return sec * 1e6 / iters;
}

static double op_bandwidth(const bench_ctx_t *ctx, int iters, double sec)
{
    return (double) ctx->size * ctx->window * iters / sec / 1e6;
}

#define RMA_TEST(tname, unit_, win_, prep, runf, chk, met)                                         \
    {                                                                                              \
        .name = tname, .unit = unit_, .lower_is_better = !(win_), .uses_window = win_,             \
        .bytes_per_iter = 1, .begin = rma_begin, .end = rma_end, .prepare = prep, .run = runf,     \
        .check = chk, .metric = met                                                                \
    }

const bench_test_t bench_rma_tests[] = {
    RMA_TEST("put_lat", "us", 0, put_prepare, put_run, put_check, op_latency),
    RMA_TEST("get_lat", "us", 0, get_prepare, get_run, get_check, op_latency),
    RMA_TEST("acc_lat", "us", 0, put_prepare, acc_run, acc_check, op_latency),
    RMA_TEST("put_bw", "MB/s", 1, put_prepare, put_run, put_check, op_bandwidth),
    RMA_TEST("get_bw", "MB/s", 1, get_prepare, get_run, get_check, op_bandwidth),
    RMA_TEST("acc_bw", "MB/s", 1, put_prepare, acc_run, acc_check, op_bandwidth),
};
const int bench_rma_ntests = sizeof(bench_rma_tests) / sizeof(bench_rma_tests[0]);

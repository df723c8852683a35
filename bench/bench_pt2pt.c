/*
 * ob1x benchmarks: two-sided tests.
 *
 *   latency  ping-pong, half the round-trip time                       (us, lower is better)
 *   latency_1buf  the same, each rank sending from and receiving into one buffer, as NetPIPE
 *            does (bench/netpipe-check compares like with like; it is slower for large
 *            messages because the buffer just read by the peer is then overwritten)
 *   bw       uni-directional: window of Isends, Irecvs, 1 ack per window (MB/s = 1e6 B/s)
 *   bibw     bi-directional: both sides post a window of Irecvs and Isends   (MB/s, both ways)
 *   rate     every pair does the bw pattern at once; messages per second      (Mmsg/s)
 *
 * Slot w of the initiator carries pattern (seed, w); slot w of the other side (bibw, latency
 * reply) carries pattern (seed, w + PEER_SLOT).
 */
#include "bench.h"

#include <string.h>

#define TAG_DATA 100
#define TAG_ACK 101
#define PEER_SLOT 1000

static int my_slot(const bench_ctx_t *ctx, int w)
{
    return ctx->initiator ? w : w + PEER_SLOT;
}

static int peer_slot(const bench_ctx_t *ctx, int w)
{
    return ctx->initiator ? w + PEER_SLOT : w;
}

/* Fill my send slots, clear my receive slots. */
static void prepare_both(bench_ctx_t *ctx, unsigned seed)
{
    if (ctx->peer < 0) {
        return;
    }
    for (int w = 0; w < ctx->window; w++) {
        bench_fill(ctx->sbuf + w * ctx->stride, ctx->size, seed, my_slot(ctx, w));
        memset(ctx->rbuf + w * ctx->stride, 0, ctx->size);
    }
}

/* 0 if every receive slot holds the peer's pattern. */
static int check_received(bench_ctx_t *ctx, unsigned seed, int iters)
{
    (void) iters;
    if (ctx->peer < 0) {
        return 0;
    }
    for (int w = 0; w < ctx->window; w++) {
        long at = bench_verify(ctx->rbuf + w * ctx->stride, ctx->size, seed, peer_slot(ctx, w));
        if (at >= 0) {
            return 1;
        }
    }
    return 0;
}

/* Uni-directional: only the non-initiator receives. */
static int check_target(bench_ctx_t *ctx, unsigned seed, int iters)
{
    return ctx->initiator ? 0 : check_received(ctx, seed, iters);
}

/* Ping-pong: the initiator sends first; replies land in `rbuf`. */
static void pingpong(bench_ctx_t *ctx, int iters, void *rbuf)
{
    int cnt = (int) ctx->size;
    if (ctx->peer < 0) {
        return;
    }
    for (int i = 0; i < iters; i++) {
        if (ctx->initiator) {
            MPI_Send(ctx->sbuf, cnt, MPI_BYTE, ctx->peer, TAG_DATA, ctx->comm);
            MPI_Recv(rbuf, cnt, MPI_BYTE, ctx->peer, TAG_DATA, ctx->comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, cnt, MPI_BYTE, ctx->peer, TAG_DATA, ctx->comm, MPI_STATUS_IGNORE);
            MPI_Send(ctx->sbuf, cnt, MPI_BYTE, ctx->peer, TAG_DATA, ctx->comm);
        }
    }
}

static void latency_run(bench_ctx_t *ctx, int iters)
{
    pingpong(ctx, iters, ctx->rbuf);
}

/* One buffer per rank: the initiator's pattern travels there and back; both end up holding it. */
static void onebuf_prepare(bench_ctx_t *ctx, unsigned seed)
{
    if (ctx->peer < 0) {
        return;
    }
    if (ctx->initiator) {
        bench_fill(ctx->sbuf, ctx->size, seed, 0);
    } else {
        memset(ctx->sbuf, 0, ctx->size);
    }
}

static void onebuf_run(bench_ctx_t *ctx, int iters)
{
    pingpong(ctx, iters, ctx->sbuf);
}

static int onebuf_check(bench_ctx_t *ctx, unsigned seed, int iters)
{
    (void) iters;
    return ctx->peer >= 0 && bench_verify(ctx->sbuf, ctx->size, seed, 0) >= 0;
}

static double latency_metric(const bench_ctx_t *ctx, int iters, double sec)
{
    (void) ctx;
    return sec * 1e6 / (2.0 * iters);
}

/* One window: the initiator sends, the other side receives and acknowledges. */
static void window_one_way(bench_ctx_t *ctx)
{
    int cnt = (int) ctx->size;
    char ack = 0;
    for (int w = 0; w < ctx->window; w++) {
        if (ctx->initiator) {
            MPI_Isend(ctx->sbuf + w * ctx->stride, cnt, MPI_BYTE, ctx->peer, TAG_DATA, ctx->comm,
                      &ctx->reqs[w]);
        } else {
            MPI_Irecv(ctx->rbuf + w * ctx->stride, cnt, MPI_BYTE, ctx->peer, TAG_DATA, ctx->comm,
                      &ctx->reqs[w]);
        }
    }
    MPI_Waitall(ctx->window, ctx->reqs, MPI_STATUSES_IGNORE);
    if (ctx->initiator) {
        MPI_Recv(&ack, 0, MPI_BYTE, ctx->peer, TAG_ACK, ctx->comm, MPI_STATUS_IGNORE);
    } else {
        MPI_Send(&ack, 0, MPI_BYTE, ctx->peer, TAG_ACK, ctx->comm);
    }
}

static void bw_run(bench_ctx_t *ctx, int iters)
{
    if (ctx->peer < 0) {
        return;
    }
    for (int i = 0; i < iters; i++) {
        window_one_way(ctx);
    }
}

static double bw_metric(const bench_ctx_t *ctx, int iters, double sec)
{
    return (double) ctx->size * ctx->window * iters / sec / 1e6;
}

static void bibw_run(bench_ctx_t *ctx, int iters)
{
    int cnt = (int) ctx->size, n = ctx->window;
    if (ctx->peer < 0) {
        return;
    }
    for (int i = 0; i < iters; i++) {
        for (int w = 0; w < n; w++) {
            MPI_Irecv(ctx->rbuf + w * ctx->stride, cnt, MPI_BYTE, ctx->peer, TAG_DATA, ctx->comm,
                      &ctx->reqs[w]);
        }
        for (int w = 0; w < n; w++) {
            MPI_Isend(ctx->sbuf + w * ctx->stride, cnt, MPI_BYTE, ctx->peer, TAG_DATA, ctx->comm,
                      &ctx->reqs[n + w]);
        }
        MPI_Waitall(2 * n, ctx->reqs, MPI_STATUSES_IGNORE);
    }
}

static double bibw_metric(const bench_ctx_t *ctx, int iters, double sec)
{
    return 2.0 * ctx->size * ctx->window * iters / sec / 1e6;
}

static double rate_metric(const bench_ctx_t *ctx, int iters, double sec)
{
    return (double) ctx->pairs * ctx->window * iters / sec / 1e6;
}

const bench_test_t bench_pt2pt_tests[] = {
    {.name = "latency",
     .unit = "us",
     .lower_is_better = 1,
     .bytes_per_iter = 2,
     .prepare = prepare_both,
     .run = latency_run,
     .check = check_received,
     .metric = latency_metric},
    {.name = "latency_1buf",
     .unit = "us",
     .lower_is_better = 1,
     .bytes_per_iter = 2,
     .prepare = onebuf_prepare,
     .run = onebuf_run,
     .check = onebuf_check,
     .metric = latency_metric},
    {.name = "bw",
     .unit = "MB/s",
     .uses_window = 1,
     .bytes_per_iter = 1,
     .prepare = prepare_both,
     .run = bw_run,
     .check = check_target,
     .metric = bw_metric},
    {.name = "bibw",
     .unit = "MB/s",
     .uses_window = 1,
     .bytes_per_iter = 2,
     .prepare = prepare_both,
     .run = bibw_run,
     .check = check_received,
     .metric = bibw_metric},
    {.name = "rate",
     .unit = "Mmsg/s",
     .uses_window = 1,
     .all_pairs = 1,
     .bytes_per_iter = 1,
     .prepare = prepare_both,
     .run = bw_run,
     .check = check_target,
     .metric = rate_metric},
};
const int bench_pt2pt_ntests = sizeof(bench_pt2pt_tests) / sizeof(bench_pt2pt_tests[0]);

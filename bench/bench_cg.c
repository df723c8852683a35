/*
 * ob1x benchmarks: instruction counting under valgrind --tool=callgrind.
 *
 * Run with --collect-atstart=no: only the loops between the CALLGRIND_TOGGLE_COLLECT pairs are
 * counted.  bench/compare --callgrind runs each test with N and 2N iterations and takes the
 * difference, which cancels everything done once (request setup, the first and last message).
 *
 *   cg_pingpong  ping-pong of opts->sizes[0] bytes; receives are always pre-posted
 *                (MPI_Irecv, then MPI_Test until done).  Prints the number of MPI_Test calls
 *                that found nothing ("empty polls"), summed over both ranks.
 *   cg_poll      MPI_Test on a receive that never matches: the cost of one empty poll.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_TOGGLE_COLLECT /* not built with valgrind headers: counts whole program */
#endif

#define TAG_CG 200
#define TAG_NEVER 201
#define CG_WARMUP 100

/* Returns the number of MPI_Test calls that found the request incomplete. */
static long wait_polling(MPI_Request *req)
{
    long empty = 0;
    int done = 0;
    for (;;) {
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (done) {
            return empty;
        }
        empty++;
    }
}

static long pingpong(bench_ctx_t *ctx, int iters, int collect)
{
    int cnt = (int) ctx->size;
    long empty = 0;
    MPI_Request r;

    if (!ctx->initiator) {
        MPI_Irecv(ctx->rbuf, cnt, MPI_BYTE, ctx->peer, TAG_CG, ctx->comm, &r);
    }
    MPI_Barrier(ctx->comm);
    if (collect) {
        CALLGRIND_TOGGLE_COLLECT;
    }
    for (int i = 0; i < iters; i++) {
        if (ctx->initiator) {
            MPI_Irecv(ctx->rbuf, cnt, MPI_BYTE, ctx->peer, TAG_CG, ctx->comm, &r);
            MPI_Send(ctx->sbuf, cnt, MPI_BYTE, ctx->peer, TAG_CG, ctx->comm);
            empty += wait_polling(&r);
        } else {
            empty += wait_polling(&r);
            if (i + 1 < iters) {
                MPI_Irecv(ctx->rbuf, cnt, MPI_BYTE, ctx->peer, TAG_CG, ctx->comm, &r);
            }
            MPI_Send(ctx->sbuf, cnt, MPI_BYTE, ctx->peer, TAG_CG, ctx->comm);
        }
    }
    if (collect) {
        CALLGRIND_TOGGLE_COLLECT;
    }
    return empty;
}

static void empty_polls(bench_ctx_t *ctx, int iters)
{
    MPI_Request r;
    int done = 0;
    MPI_Irecv(ctx->rbuf, 1, MPI_BYTE, ctx->peer, TAG_NEVER, ctx->comm, &r);
    MPI_Barrier(ctx->comm);
    CALLGRIND_TOGGLE_COLLECT;
    for (int i = 0; i < iters; i++) {
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    }
    CALLGRIND_TOGGLE_COLLECT;
    MPI_Cancel(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}

int bench_cg_run(const char *name, bench_ctx_t *ctx)
{
    const bench_opts_t *o = ctx->opts;
    long empty = 0, total = 0;

    if (ctx->nprocs != 2) {
        if (0 == ctx->rank) {
            fprintf(stderr, "%s needs exactly 2 ranks\n", name);
        }
        return -1;
    }
    ctx->peer = 1 - ctx->rank;
    ctx->initiator = 0 == ctx->rank;
    ctx->size = o->sizes[0];
    ctx->sbuf = calloc(1, ctx->size + 1);
    ctx->rbuf = calloc(1, ctx->size + 1);
    if (NULL == ctx->sbuf || NULL == ctx->rbuf) {
        return -1;
    }
    if (0 == strcmp(name, "cg_pingpong")) {
        pingpong(ctx, CG_WARMUP, 0);
        empty = pingpong(ctx, o->cg_iters, 1);
    } else {
        empty_polls(ctx, o->cg_iters);
    }
    MPI_Reduce(&empty, &total, 1, MPI_LONG, MPI_SUM, 0, ctx->comm);
    if (0 == ctx->rank) {
        printf("# test=%s size=%zu iters=%d empty_polls=%ld\n", name, ctx->size, o->cg_iters,
               total);
    }
    free(ctx->sbuf);
    free(ctx->rbuf);
    ctx->sbuf = ctx->rbuf = NULL;
    return 0;
}

/*
 * ob1x benchmarks: instruction counting under valgrind --tool=callgrind.
 *
 * Run with --collect-atstart=no: only the code between the CALLGRIND_TOGGLE_COLLECT pairs is
 * counted.  bench/compare --callgrind runs each test with N and 2N iterations and takes the
 * difference, which cancels everything done once.
 *
 *   cg_pingpong  ping-pong of opts->sizes[0] bytes (keep it under the eager limit).  Receives
 *                are pre-posted, and a rank calls MPI_Waitall only once the peer has said, through
 *                a shared-memory counter that MPI does not see, that its MPI_Isend returned: the
 *                data is then already there, so the count holds the send path, the receive path
 *                and one successful progress pass, with no empty polling whose amount would
 *                depend on timing.
 *   cg_poll      MPI_Test on a receive that never matches: the cost of one empty progress pass.
 */
#include "bench.h"

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* Side channel between the two ranks: how many messages each has finished sending. */
typedef struct cg_flags {
    volatile long sent[2];
} cg_flags_t;

static cg_flags_t *map_flags(bench_ctx_t *ctx)
{
    char name[64];
    int pid = (int) getpid(), fd;
    void *p;

    MPI_Bcast(&pid, 1, MPI_INT, 0, ctx->comm);
    snprintf(name, sizeof(name), "/ob1x-bench-cg-%d", pid);
    fd = shm_open(name, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(cg_flags_t))) {
        bench_fail(ctx, "shm_open(%s) failed", name);
    }
    p = mmap(NULL, sizeof(cg_flags_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (MAP_FAILED == p) {
        bench_fail(ctx, "mmap of %s failed", name);
    }
    MPI_Barrier(ctx->comm); /* both mapped: the name can go */
    if (0 == ctx->rank) {
        shm_unlink(name);
        memset(p, 0, sizeof(cg_flags_t));
    }
    MPI_Barrier(ctx->comm);
    return p;
}

static void announce_sent(cg_flags_t *f, int rank)
{
    __atomic_add_fetch(&f->sent[rank], 1, __ATOMIC_RELEASE);
}

/* Spin, outside MPI and outside the counted region, until the peer has sent `n` messages. */
static void await_sent(cg_flags_t *f, int peer, long n)
{
    while (__atomic_load_n(&f->sent[peer], __ATOMIC_ACQUIRE) < n) {
        sched_yield();
    }
}

/* Start or stop counting (callgrind's collection state flips on each call). */
static void cg_toggle(int collect)
{
    if (collect) {
        CALLGRIND_TOGGLE_COLLECT;
    }
}

/*
 * Sends are MPI_Isend, completed together with the next receive: over a BTL
 * that returns a sender's fragment only once the receiver has consumed it
 * (vader, smcuda) a blocking MPI_Send of a non-inline eager message cannot
 * return before the peer polls, and the peer here only polls after it.
 */
static void pingpong(bench_ctx_t *ctx, cg_flags_t *f, int iters, int collect)
{
    int cnt = (int) ctx->size;
    long base = __atomic_load_n(&f->sent[ctx->peer], __ATOMIC_ACQUIRE);
    MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}; /* receive, send */

    if (!ctx->initiator) {
        MPI_Irecv(ctx->rbuf, cnt, MPI_BYTE, ctx->peer, TAG_CG, ctx->comm, &r[0]);
    }
    MPI_Barrier(ctx->comm);
    for (int i = 0; i < iters; i++) {
        if (ctx->initiator) {
            cg_toggle(collect);
            MPI_Irecv(ctx->rbuf, cnt, MPI_BYTE, ctx->peer, TAG_CG, ctx->comm, &r[0]);
            MPI_Isend(ctx->sbuf, cnt, MPI_BYTE, ctx->peer, TAG_CG, ctx->comm, &r[1]);
            cg_toggle(collect);
            announce_sent(f, ctx->rank);
            await_sent(f, ctx->peer, base + i + 1);
            cg_toggle(collect);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            cg_toggle(collect);
        } else {
            await_sent(f, ctx->peer, base + i + 1);
            cg_toggle(collect);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            if (i + 1 < iters) {
                MPI_Irecv(ctx->rbuf, cnt, MPI_BYTE, ctx->peer, TAG_CG, ctx->comm, &r[0]);
            }
            MPI_Isend(ctx->sbuf, cnt, MPI_BYTE, ctx->peer, TAG_CG, ctx->comm, &r[1]);
            cg_toggle(collect);
            announce_sent(f, ctx->rank);
        }
    }
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    MPI_Barrier(ctx->comm);
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
        cg_flags_t *f = map_flags(ctx);
        pingpong(ctx, f, CG_WARMUP, 0);
        pingpong(ctx, f, o->cg_iters, 1);
        munmap((void *) f, sizeof(*f));
    } else {
        empty_polls(ctx, o->cg_iters);
    }
    if (0 == ctx->rank) {
        printf("# test=%s size=%zu iters=%d\n", name, ctx->size, o->cg_iters);
    }
    free(ctx->sbuf);
    free(ctx->rbuf);
    ctx->sbuf = ctx->rbuf = NULL;
    return 0;
}

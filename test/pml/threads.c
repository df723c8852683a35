/*
 * threads.c - MPI_THREAD_MULTIPLE stress: 4 threads per rank at once.
 *
 * Each thread t of every rank:
 *  1. exchanges with thread t of every other rank on its own tags
 *     (Irecv/Isend pairs, eager and rendezvous sizes), content verified;
 *  2. receives a stream on its own tag through Iprobe+Recv and
 *     Improbe+Mrecv/Imrecv alternately (per-source order checked);
 *  3. takes part in a shared pool on a second communicator: every thread
 *     sends to every other rank with random tags, and the receiving rank's
 *     threads all receive with MPI_ANY_SOURCE/MPI_ANY_TAG (some through
 *     Improbe+Mrecv) an equal share; every message is verified and must be
 *     received exactly once;
 *  4. exchanges with thread t of every other rank through MPI_Ibsend
 *     (eager and buffered-pipeline sizes): a buffered send is complete for
 *     MPI once packed while progress in another thread may finish it.
 *
 * Arguments: --long (more messages).
 */
#include "tpml.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NT 4
static t_limits lim;
static int iters = 200, stream = 400, poolq = 300;
static MPI_Comm pool;
static unsigned char *pool_seen; /* [src][sender thread][j] */
static size_t maxlen;

static size_t pick_len(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t h = t_seed(a, b, c) % 100;
    if (h < 70)
        return T_MSG_HDR + h * 5;
    if (h < 90)
        return lim.eager_min - 64;
    return 2 * lim.eager_max + h;
}

typedef int (*isend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

/* Thread t exchanges with thread t of every other rank on its own tags:
 * n rounds of Irecv + `isend` to every peer, content and status verified.
 * `salt` gives each use its own message lengths. */
static void exchange(int t, int n, int tag_base, uint32_t salt, isend_fn isend, const char *what)
{
    int np = t_size - 1, k;
    MPI_Request *r = t_malloc(sizeof(MPI_Request) * 2 * (size_t) np);
    MPI_Status *st = t_malloc(sizeof(MPI_Status) * 2 * (size_t) np);
    unsigned char **sb = t_malloc(sizeof(*sb) * (size_t) t_size);
    unsigned char **rb = t_malloc(sizeof(*rb) * (size_t) t_size);
    for (int p = 0; p < t_size; p++) {
        sb[p] = t_malloc(maxlen);
        rb[p] = t_malloc(maxlen);
    }
    for (int i = 0; i < n; i++) {
        int tag = tag_base + t * 10 + i % 10;
        k = 0;
        for (int p = 0; p < t_size; p++) {
            if (p == t_rank)
                continue;
            t_status_reset(&st[k]);
            T_MPI(MPI_Irecv(rb[p], (int) maxlen, MPI_BYTE, p, tag, MPI_COMM_WORLD, &r[k++]));
        }
        for (int p = 0; p < t_size; p++) {
            size_t len;
            if (p == t_rank)
                continue;
            len = pick_len((uint32_t) t_rank, (uint32_t) (p * NT + t) + salt, (uint32_t) i);
            t_msg_fill(sb[p], len, t_rank, tag, (uint32_t) i);
            T_MPI(isend(sb[p], (int) len, MPI_BYTE, p, tag, MPI_COMM_WORLD, &r[k++]));
        }
        T_MPI(MPI_Waitall(2 * np, r, st));
        k = 0;
        for (int p = 0; p < t_size; p++) {
            char ctx[80];
            if (p == t_rank)
                continue;
            snprintf(ctx, sizeof(ctx), "thread %d %s iter %d from %d", t, what, i, p);
            t_check_status(
                &st[k], p, tag,
                (long) pick_len((uint32_t) p, (uint32_t) (t_rank * NT + t) + salt, (uint32_t) i),
                ctx);
            T_CHECK((uint32_t) i == t_msg_check(rb[p], &st[k], (uint32_t) i, ctx), "%s: wrong seq",
                    ctx);
            k++;
        }
    }
    for (int p = 0; p < t_size; p++) {
        free(sb[p]);
        free(rb[p]);
    }
    free(sb);
    free(rb);
    free(r);
    free(st);
}

static void phase_probe(int t)
{
    int tag = 300 + t, np = t_size - 1, n = stream * np, k = 0;
    MPI_Request *r = t_malloc(sizeof(MPI_Request) * (size_t) n);
    unsigned char *data = t_malloc(maxlen * (size_t) n), *b = t_malloc(maxlen);
    uint32_t *next = calloc((size_t) t_size, sizeof(uint32_t));
    for (int j = 0; j < stream; j++)
        for (int p = 0; p < t_size; p++) {
            size_t len;
            if (p == t_rank)
                continue;
            len = pick_len((uint32_t) t_rank, (uint32_t) tag, (uint32_t) j);
            t_msg_fill(data + maxlen * (size_t) k, len, t_rank, tag, (uint32_t) j);
            T_MPI(MPI_Isend(data + maxlen * (size_t) k, (int) len, MPI_BYTE, p, tag, MPI_COMM_WORLD,
                            &r[k]));
            k++;
        }
    for (int i = 0; i < n; i++) {
        MPI_Status st;
        int flag = 0;
        char ctx[80];
        uint32_t seq;
        t_status_reset(&st);
        if (i % 2) {
            while (!flag)
                T_MPI(MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st));
            T_MPI(MPI_Recv(b, (int) maxlen, MPI_BYTE, st.MPI_SOURCE, tag, MPI_COMM_WORLD, &st));
        } else {
            MPI_Message m;
            while (!flag)
                T_MPI(MPI_Improbe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &m, &st));
            t_status_reset(&st);
            if (i % 4) {
                T_MPI(MPI_Mrecv(b, (int) maxlen, MPI_BYTE, &m, &st));
            } else {
                MPI_Request q;
                T_MPI(MPI_Imrecv(b, (int) maxlen, MPI_BYTE, &m, &q));
                T_MPI(MPI_Wait(&q, &st));
            }
        }
        snprintf(ctx, sizeof(ctx), "thread %d probe stream msg %d from %d", t, i, st.MPI_SOURCE);
        T_CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < t_size && st.MPI_SOURCE != t_rank,
                "%s: bad source", ctx);
        t_check_status(
            &st, st.MPI_SOURCE, tag,
            (long) pick_len((uint32_t) st.MPI_SOURCE, (uint32_t) tag, next[st.MPI_SOURCE]), ctx);
        seq = t_msg_check(b, &st, next[st.MPI_SOURCE], ctx);
        T_CHECK(seq == next[st.MPI_SOURCE], "%s: seq %u, expected %u", ctx, seq,
                next[st.MPI_SOURCE]);
        next[st.MPI_SOURCE]++;
    }
    T_MPI(MPI_Waitall(n, r, MPI_STATUSES_IGNORE));
    free(r);
    free(data);
    free(b);
    free(next);
}

static void phase_pool(int t)
{
    int np = t_size - 1, n = poolq * np, k = 0;
    MPI_Request *r = t_malloc(sizeof(MPI_Request) * (size_t) n);
    unsigned char *data = t_malloc(maxlen * (size_t) n), *b = t_malloc(maxlen);
    t_rng rng;
    t_rng_init(&rng, (uint64_t) (t_rank * NT + t) * 7919u + 1);
    for (int j = 0; j < poolq; j++)
        for (int p = 0; p < t_size; p++) {
            int tag;
            size_t len;
            uint32_t seq = (uint32_t) (t * poolq + j);
            if (p == t_rank)
                continue;
            tag = (int) t_rng_below(&rng, 50);
            len = pick_len((uint32_t) t_rank, (uint32_t) p, seq + 100000);
            t_msg_fill(data + maxlen * (size_t) k, len, t_rank, tag, seq);
            T_MPI(MPI_Isend(data + maxlen * (size_t) k, (int) len, MPI_BYTE, p, tag, pool, &r[k]));
            k++;
        }
    /* this thread's share of what arrives at this rank */
    for (int i = 0; i < n; i++) {
        MPI_Status st;
        uint32_t seq;
        char ctx[80];
        t_status_reset(&st);
        if (i % 3 == 2) {
            MPI_Message m;
            T_MPI(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, pool, &m, &st));
            t_status_reset(&st);
            T_MPI(MPI_Mrecv(b, (int) maxlen, MPI_BYTE, &m, &st));
        } else {
            T_MPI(MPI_Recv(b, (int) maxlen, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, pool, &st));
        }
        snprintf(ctx, sizeof(ctx), "thread %d pool msg from %d tag %d", t, st.MPI_SOURCE,
                 st.MPI_TAG);
        T_CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < t_size && st.MPI_SOURCE != t_rank &&
                    st.MPI_TAG >= 0 && st.MPI_TAG < 50,
                "%s: bad envelope", ctx);
        seq = t_msg_check(b, &st, 0, ctx);
        T_CHECK(seq < (uint32_t) (NT * poolq), "%s: bad seq %u", ctx, seq);
        {
            size_t want = pick_len((uint32_t) st.MPI_SOURCE, (uint32_t) t_rank, seq + 100000);
            int count;
            T_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
            T_CHECK((size_t) count == want, "%s: length %d, expected %zu", ctx, count, want);
        }
        T_CHECK(
            0 == __atomic_fetch_add(&pool_seen[(size_t) st.MPI_SOURCE * NT * (size_t) poolq + seq],
                                    1, __ATOMIC_RELAXED),
            "%s: seq %u received twice", ctx, seq);
    }
    T_MPI(MPI_Waitall(n, r, MPI_STATUSES_IGNORE));
    free(r);
    free(data);
    free(b);
}

static pthread_barrier_t tbar;

static void *worker(void *arg)
{
    int t = (int) (long) arg;
    exchange(t, iters, 100, 0, MPI_Isend, "pairs");
    pthread_barrier_wait(&tbar);
    phase_probe(t);
    pthread_barrier_wait(&tbar);
    phase_pool(t);
    pthread_barrier_wait(&tbar);
    /* a buffered send is complete for MPI once packed, while progress in
     * another thread may finish it */
    exchange(t, iters / 2, 500, 7, MPI_Ibsend, "bsend");
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t th[NT];
    double t0;
    int bsize;
    void *battach;
    t_init(&argc, &argv, MPI_THREAD_MULTIPLE);
    T_CHECK(t_size >= 2, "needs at least 2 ranks");
    t_limits_get(argc, argv, &lim);
    if (t_has_arg(argc, argv, "--long")) {
        iters *= 10;
        stream *= 10;
        poolq *= 10;
    }
    maxlen = 2 * lim.eager_max + 100;
    if (lim.eager_min - 64 > maxlen)
        maxlen = lim.eager_min - 64;
    T_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &pool));
    pool_seen = calloc((size_t) t_size * NT * (size_t) poolq, 1);
    /* room for every thread's sends of two rounds: a buffer is released
     * only when its pipeline has left, after MPI completion */
    bsize = (int) (2 * NT * (size_t) t_size * (maxlen + MPI_BSEND_OVERHEAD + 64));
    battach = t_malloc((size_t) bsize);
    T_MPI(MPI_Buffer_attach(battach, bsize));
    if (0 == t_rank)
        t_limits_print(&lim);
    t0 = t_now();
    pthread_barrier_init(&tbar, NULL, NT);
    for (long t = 0; t < NT; t++)
        T_CHECK(0 == pthread_create(&th[t], NULL, worker, (void *) t), "pthread_create failed");
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&tbar);
    for (int s = 0; s < t_size; s++)
        for (int q = 0; q < NT * poolq; q++)
            if (s != t_rank)
                T_CHECK(1 == pool_seen[(size_t) s * NT * (size_t) poolq + (size_t) q],
                        "pool message seq %d from rank %d received %d times", q, s,
                        pool_seen[(size_t) s * NT * (size_t) poolq + (size_t) q]);
    free(pool_seen);
    T_MPI(MPI_Buffer_detach(&battach, &bsize));
    free(battach);
    MPI_Comm_free(&pool);
    /* which retry paths this run exercised (they vary with the timing) */
    t_log("done in %.1f s, %llu resource retries, %llu late requests", t_now() - t0,
          t_pv_read(T_PV_RES_RETRIES), t_pv_read(T_PV_LATE_REQ));
    return t_finalize();
}

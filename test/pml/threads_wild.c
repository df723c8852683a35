/*
 * threads_wild.c - MPI_THREAD_MULTIPLE: send, wildcard receive, wait.
 *
 * 2 ranks x 4 threads. Each thread repeats iters= times (default 6000):
 * MPI_Isend or MPI_Issend (alternately) of 16 B-200 KB to the other rank,
 * then one MPI_ANY_SOURCE receive through, in turn, Recv, Probe+Recv,
 * Iprobe-poll+Recv, Mprobe+Mrecv and Improbe-poll+Imrecv, then a wait for
 * its send. The sender's thread is the tag.
 *
 *   mode=any (default): every receive takes MPI_ANY_TAG, so any thread
 *     receives any thread's message; each message is verified and must be
 *     received exactly once (tallied per rank at the end);
 *   mode=tag: thread t receives tag t only, so it gets the messages of
 *     thread t of the other rank, in order.
 *
 * A lost wake-up or progress that only one thread makes shows as a run that
 * does not finish: a watchdog fails it after limit= seconds (default 120),
 * saying what each thread of the rank is doing, and notes every 10 s
 * without any iteration done.
 */
#include "tpml.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NT 4
#define MAXLEN (200 * 1024)

static int iters = 6000, any_tag = 1;
static double limit = 120, t_start;
static unsigned char *seen; /* [sender thread][i], messages received by this rank */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

/* What each thread is doing, for the watchdog's report. */
enum { PH_SEND, PH_RECV, PH_WAIT, PH_DONE };
static const char *const phase_name[] = {"send", "receive", "wait for its send", "done"};
static volatile int phase[NT], iter[NT], method[NT];

static size_t msg_len(int rank, int t, int i)
{
    uint32_t h = t_seed((uint32_t) rank, (uint32_t) t, (uint32_t) i);
    uint32_t r = h >> 8;
    switch (h % 10) {
        case 0: case 1: case 2: case 3: case 4:
            return 16 + r % 1009;
        case 5: case 6: case 7:
            return 1024 + r % (32 * 1024);
        default:
            return 32 * 1024 + r % (MAXLEN - 32 * 1024 + 1);
    }
}

/* One MPI_ANY_SOURCE receive of tag `tag` (MPI_ANY_TAG in mode=any), by
 * the method chosen by i. A probed message may be taken by another thread
 * in mode=any, so the receive after a probe takes any message there. */
static void receive(int i, int tag, unsigned char *b, MPI_Status *st)
{
    int flag = 0, rtag;
    MPI_Message m;
    MPI_Request q;

    t_status_reset(st);
    switch (i % 5) {
        case 0:
            T_MPI(MPI_Recv(b, MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, st));
            break;
        case 1:
            T_MPI(MPI_Probe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, st));
            rtag = any_tag ? MPI_ANY_TAG : st->MPI_TAG;
            T_MPI(MPI_Recv(b, MAXLEN, MPI_BYTE, st->MPI_SOURCE, rtag, MPI_COMM_WORLD, st));
            break;
        case 2:
            while (!flag)
                T_MPI(MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, st));
            rtag = any_tag ? MPI_ANY_TAG : st->MPI_TAG;
            T_MPI(MPI_Recv(b, MAXLEN, MPI_BYTE, st->MPI_SOURCE, rtag, MPI_COMM_WORLD, st));
            break;
        case 3:
            T_MPI(MPI_Mprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &m, st));
            T_MPI(MPI_Mrecv(b, MAXLEN, MPI_BYTE, &m, st));
            break;
        default:
            while (!flag)
                T_MPI(MPI_Improbe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &m, st));
            T_MPI(MPI_Imrecv(b, MAXLEN, MPI_BYTE, &m, &q));
            T_MPI(MPI_Wait(&q, st));
            break;
    }
}

static void *worker(void *arg)
{
    int t = (int) (intptr_t) arg, peer = 1 - t_rank;
    unsigned char *sb = t_malloc(MAXLEN), *rb = t_malloc(MAXLEN);
    MPI_Request r;
    MPI_Status st;

    for (int i = 0; i < iters; i++) {
        size_t len = msg_len(t_rank, t, i);
        uint32_t seq;
        int count;
        char ctx[96];

        iter[t] = i;
        method[t] = i % 5;
        phase[t] = PH_SEND;
        t_msg_fill(sb, len, t_rank, t, (uint32_t) i);
        if (i % 2)
            T_MPI(MPI_Issend(sb, (int) len, MPI_BYTE, peer, t, MPI_COMM_WORLD, &r));
        else
            T_MPI(MPI_Isend(sb, (int) len, MPI_BYTE, peer, t, MPI_COMM_WORLD, &r));
        phase[t] = PH_RECV;
        receive(i, any_tag ? MPI_ANY_TAG : t, rb, &st);
        snprintf(ctx, sizeof(ctx), "thread %d receive %d (method %d) tag %d", t, i, i % 5,
                 st.MPI_TAG);
        T_CHECK(peer == st.MPI_SOURCE && st.MPI_TAG >= 0 && st.MPI_TAG < NT, "%s: source %d",
                ctx, st.MPI_SOURCE);
        seq = t_msg_check(rb, &st, 0, ctx);
        T_CHECK(seq < (uint32_t) iters, "%s: sequence %u", ctx, seq);
        T_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
        T_CHECK(msg_len(peer, st.MPI_TAG, (int) seq) == (size_t) count,
                "%s: length %d of message %u", ctx, count, seq);
        T_CHECK(any_tag || seq == (uint32_t) i, "%s: sequence %u, expected %d", ctx, seq, i);
        pthread_mutex_lock(&seen_lock);
        T_CHECK(!seen[st.MPI_TAG * iters + (int) seq], "%s: message %u received twice", ctx, seq);
        seen[st.MPI_TAG * iters + (int) seq] = 1;
        pthread_mutex_unlock(&seen_lock);
        phase[t] = PH_WAIT;
        T_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
    phase[t] = PH_DONE;
    free(sb);
    free(rb);
    return NULL;
}

/* Fails the run once it passes the limit, saying where every thread is (a
 * hang would otherwise end in the harness's kill, telling nothing); notes
 * every 10 s without any iteration completed. */
static void *watchdog(void *arg)
{
    int last = -1, still = 0;

    (void) arg;
    for (;;) {
        int sum = 0, done = 0;
        char where[400];
        size_t off = 0;
        sleep(1);
        for (int t = 0; t < NT; t++) {
            sum += iter[t];
            done += PH_DONE == phase[t];
            off += (size_t) snprintf(where + off, sizeof(where) - off, "; thread %d: %s, iteration %d (method %d)",
                                     t, phase_name[phase[t]], iter[t], method[t]);
        }
        if (NT == done)
            return NULL;
        still = sum == last ? still + 1 : 0;
        last = sum;
        if (still > 0 && 0 == still % 10)
            t_log("no iteration done for %d s%s", still, where);
        T_CHECK(t_now() - t_start < limit, "not finished after %.0f s%s", limit, where);
    }
}

int main(int argc, char **argv)
{
    pthread_t th[NT], dog;
    const char *v;
    double secs;

    t_init(&argc, &argv, MPI_THREAD_MULTIPLE);
    T_CHECK(2 == t_size, "needs exactly 2 ranks");
    if (NULL != (v = t_arg_value(argc, argv, "iters")))
        iters = atoi(v);
    if (NULL != (v = t_arg_value(argc, argv, "limit")))
        limit = atof(v);
    if (NULL != (v = t_arg_value(argc, argv, "mode")))
        any_tag = 0 != strcmp(v, "tag");
    T_CHECK(iters > 0, "iters must be positive");
    seen = calloc((size_t) NT * (size_t) iters, 1);
    T_CHECK(NULL != seen, "out of memory");
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    t_start = t_now();
    for (int t = 0; t < NT; t++)
        T_CHECK(0 == pthread_create(&th[t], NULL, worker, (void *) (intptr_t) t), "thread %d", t);
    T_CHECK(0 == pthread_create(&dog, NULL, watchdog, NULL), "watchdog");
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    secs = t_now() - t_start; /* not the watchdog's last second */
    pthread_join(dog, NULL);
    for (int k = 0; k < NT * iters; k++)
        T_CHECK(seen[k], "message %d of thread %d never received", k % iters, k / iters);
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    t_log("%d threads x %d sends, mode=%s: %.2f s", NT, iters, any_tag ? "any" : "tag", secs);
    free(seen);
    return t_finalize();
}

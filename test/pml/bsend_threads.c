/*
 * bsend_threads.c - buffered sends from several threads at once, then
 * MPI_Buffer_detach, in a few attach/detach cycles.
 *
 * Rank 0: NT threads each send `iters` messages with MPI_Ibsend (sizes of
 * the buffered pipeline, above the eager limit) to rank 1 on their own tag;
 * a send refused for lack of buffer space (MPI_ERR_BUFFER) is retried.
 * Every completion returns buffer space while other threads pack into it,
 * so the bookkeeping of pending buffered sends is updated from several
 * threads at once: if one update is lost, MPI_Buffer_detach waits forever
 * (a hang, caught by the harness's timeout). Rank 1: NT threads receive
 * and verify every message, in order per tag.
 *
 * Arguments: iters=N (per thread and cycle, default 500).
 */
#include "tpml.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NT 4
#define CYCLES 3

static t_limits lim;
static int iters = 500;
static size_t len;

static void *sender(void *arg)
{
    int t = (int) (long) arg;
    unsigned char *m = t_malloc(len);

    for (int i = 0; i < iters; i++) {
        MPI_Request r;
        int rc;
        t_msg_fill(m, len, 0, t, (uint32_t) i);
        while (MPI_SUCCESS != (rc = MPI_Ibsend(m, (int) len, MPI_BYTE, 1, t, MPI_COMM_WORLD, &r))) {
            T_CHECK(MPI_ERR_BUFFER == t_err_class(rc), "thread %d Ibsend %d returned %s", t, i,
                    t_err_string(rc));
            int flag;
            /* the buffer is full: drive progress so completions return space */
            T_MPI(MPI_Iprobe(1, NT, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        }
        T_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
    free(m);
    return NULL;
}

static void *receiver(void *arg)
{
    int t = (int) (long) arg;
    unsigned char *b = t_malloc(len);

    for (int i = 0; i < iters; i++) {
        MPI_Status st;
        char ctx[64];
        snprintf(ctx, sizeof(ctx), "thread %d message %d", t, i);
        t_status_reset(&st);
        T_MPI(MPI_Recv(b, (int) len, MPI_BYTE, 0, t, MPI_COMM_WORLD, &st));
        t_check_status(&st, 0, t, (long) len, ctx);
        T_CHECK((uint32_t) i == t_msg_check(b, &st, (uint32_t) i, ctx), "%s: out of order", ctx);
    }
    free(b);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *v;
    pthread_t th[NT];
    int bsize, sz;
    void *bb, *old;

    t_init(&argc, &argv, MPI_THREAD_MULTIPLE);
    T_CHECK(t_size >= 2, "needs at least 2 ranks");
    t_limits_get(argc, argv, &lim);
    if (NULL != (v = t_arg_value(argc, argv, "iters")))
        iters = atoi(v);
    len = lim.eager_max + 1000;
    /* room for two messages per thread: sends often find it full */
    bsize = (int) (2 * NT * (len + MPI_BSEND_OVERHEAD) + 64);
    bb = t_malloc((size_t) bsize);
    if (0 == t_rank)
        t_limits_print(&lim);
    for (int c = 0; c < CYCLES && t_rank < 2; c++) {
        if (0 == t_rank)
            T_MPI(MPI_Buffer_attach(bb, bsize));
        for (long t = 0; t < NT; t++)
            T_CHECK(0 == pthread_create(&th[t], NULL, 0 == t_rank ? sender : receiver, (void *) t),
                    "pthread_create failed");
        for (int t = 0; t < NT; t++)
            pthread_join(th[t], NULL);
        if (0 == t_rank) {
            /* returns once every buffered send has left; a lost update of
             * the pending count makes it wait forever */
            T_MPI(MPI_Buffer_detach(&old, &sz));
            T_CHECK(old == bb && sz == bsize, "detach returned %p/%d, attached %p/%d", old, sz, bb,
                    bsize);
        }
    }
    if (0 == t_rank)
        t_log("%d cycles of %d threads x %d buffered sends of %zu bytes", CYCLES, NT, iters, len);
    free(bb);
    return t_finalize();
}

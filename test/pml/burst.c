/*
 * burst.c - a small message behind a burst of non-blocking sends.
 *
 * Rank 0 posts n non-blocking sends of 3000 bytes to rank 1 (tags i % 1000),
 * then a blocking 4-byte send with a tag of its own, then waits for the
 * burst. Rank 1 receives the 4-byte message first (it is matched only once
 * all n messages before it are held as unexpected), then the n messages in
 * order of their tags, and verifies every one (source, tag, length, content,
 * sequence). The time until the small message arrived and the total must stay
 * under limit= seconds: the cost of a burst must grow linearly with n.
 *
 * Over one ordered BTL nothing may arrive out of order
 * (pml_ob1x_out_of_order_frags stays put on the receiver): a send that found
 * the BTL full waits in the sender's pending list, and the sends after it
 * must neither overtake it nor be overtaken by it (that made the receiver
 * hold tens of thousands of messages out of order, walked for every insert).
 *
 * Arguments: n=N (default 30000), limit=S (default 60), --ibsend (MPI_Ibsend
 * into a 1 MiB attached buffer instead of MPI_Isend), --expect-in-order.
 */
#include "tpml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEN 3000
#define NTAGS 1000
#define SMALL_TAG 4242
#define BSEND_BYTES (1 << 20)

static void sender(int n, int ibsend)
{
    unsigned char *buf = t_malloc((size_t) n * LEN);
    MPI_Request *r = t_malloc(sizeof(MPI_Request) * (size_t) n);
    int small = 0x5a5a5a5a;
    void *bbuf = NULL;
    int bsize;

    if (ibsend) {
        bbuf = t_malloc(BSEND_BYTES);
        T_MPI(MPI_Buffer_attach(bbuf, BSEND_BYTES));
    }
    for (int i = 0; i < n; i++)
        t_msg_fill(buf + (size_t) i * LEN, LEN, 0, i % NTAGS, (uint32_t) i);
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < n; i++) {
        if (ibsend)
            T_MPI(MPI_Ibsend(buf + (size_t) i * LEN, LEN, MPI_BYTE, 1, i % NTAGS, MPI_COMM_WORLD,
                             &r[i]));
        else
            T_MPI(MPI_Isend(buf + (size_t) i * LEN, LEN, MPI_BYTE, 1, i % NTAGS, MPI_COMM_WORLD,
                            &r[i]));
    }
    T_MPI(MPI_Send(&small, 4, MPI_BYTE, 1, SMALL_TAG, MPI_COMM_WORLD));
    T_MPI(MPI_Waitall(n, r, MPI_STATUSES_IGNORE));
    if (ibsend)
        T_MPI(MPI_Buffer_detach(&bbuf, &bsize));
    free(bbuf);
    free(r);
    free(buf);
}

static void receiver(int n, double limit, int in_order)
{
    t_snap before, after;
    unsigned char *buf = t_malloc(LEN + 64);
    MPI_Status st;
    int small = 0;
    double t0, t_small, t_all;

    t_snap_take(&before);
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    t0 = t_now();
    t_status_reset(&st);
    T_MPI(MPI_Recv(&small, 4, MPI_BYTE, 0, SMALL_TAG, MPI_COMM_WORLD, &st));
    t_small = t_now() - t0;
    t_check_status(&st, 0, SMALL_TAG, 4, "small message");
    T_CHECK(0x5a5a5a5a == small, "small message holds 0x%x", small);
    for (int i = 0; i < n; i++) {
        char ctx[64];
        uint32_t seq;
        snprintf(ctx, sizeof(ctx), "burst message %d", i);
        t_status_reset(&st);
        T_MPI(MPI_Recv(buf, LEN + 64, MPI_BYTE, 0, i % NTAGS, MPI_COMM_WORLD, &st));
        t_check_status(&st, 0, i % NTAGS, LEN, ctx);
        seq = t_msg_check(buf, &st, 0, ctx);
        T_CHECK(seq == (uint32_t) i, "%s: carries sequence %u (order broken)", ctx, seq);
    }
    t_all = t_now() - t0;
    t_snap_take(&after);
    t_log("n=%d: small message after %.3f s, all after %.3f s, %llu held out of order", n,
          t_small, t_all, t_snap_delta(&before, &after, T_PV_OOO_FRAGS));
    T_CHECK(!in_order || 0 == t_snap_delta(&before, &after, T_PV_OOO_FRAGS),
            "%llu messages arrived out of order over one BTL",
            t_snap_delta(&before, &after, T_PV_OOO_FRAGS));
    T_CHECK(t_all <= limit, "n=%d took %.1f s, limit %.0f s: the burst costs more than linear",
            n, t_all, limit);
    free(buf);
}

int main(int argc, char **argv)
{
    const char *v;
    int n = 30000, ibsend;
    double limit = 60;

    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    T_CHECK(2 == t_size, "needs exactly 2 ranks");
    if (NULL != (v = t_arg_value(argc, argv, "n")))
        n = atoi(v);
    if (NULL != (v = t_arg_value(argc, argv, "limit")))
        limit = atof(v);
    ibsend = t_has_arg(argc, argv, "--ibsend");
    T_CHECK(n > 0, "n must be positive");
    if (0 == t_rank)
        sender(n, ibsend);
    else
        receiver(n, limit, t_has_arg(argc, argv, "--expect-in-order"));
    return t_finalize();
}

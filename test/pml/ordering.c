/*
 * ordering.c - non-overtaking: thousands of messages on one tag and
 * communicator from every peer, sizes mixed across the eager/rendezvous
 * boundary, must be matched in the order they were sent (sequence number
 * and pattern embedded in the data).
 *
 * Phase 1: ranks 1..n-1 stream to rank 0 through windows of Isends; rank 0
 *          pre-posts windows of receives for each source (receive i of a
 *          source must hold seq i).
 * Phase 2: the same stream arriving unexpected: rank 0 receives one at a
 *          time with blocking receives, after the senders have started.
 * Phase 3: all-to-all: every rank streams to every other rank at once.
 *
 * Counters (sender): the message counters of all protocols together move
 * by exactly the number of messages sent and the byte counters by their
 * total size. The receiver reports pml_ob1x_out_of_order_frags (over two
 * BTLs fragments may overtake each other on the wire; the PML must still
 * match in order).
 *
 * Arguments: --long (more messages); --quick (600 per stream: slow links,
 * such as the namespace hosts of ofi-net.list); --expect-ooo (the out-of-order counter
 * must have moved: for runs where MATCH headers go over two BTLs, i.e. two
 * BTLs of equal exclusivity and latency, so that the ordering code is proven
 * to have reordered real traffic).
 */
#include "tpml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG 11
#define WIN 48

static t_limits lim;
static int nmsgs = 3000;
static size_t maxlen;

/* Message i of a stream: mostly small, some just either side of the eager
 * limit, some several pipeline fragments long. */
static size_t msg_len(uint32_t src, uint32_t dst, uint32_t i)
{
    uint32_t h = t_seed(src, dst, i) % 100;
    if (h < 55)
        return T_MSG_HDR + h * 3;
    if (h < 70)
        return lim.eager_min - 64;
    if (h < 80)
        return lim.eager_min + 1;
    if (h < 88)
        return lim.eager_max + 1 + h;
    if (h < 96)
        return 2 * lim.eager_max + 333;
    return lim.first_frag_min + 2 * lim.max_send_max + 17;
}

/* Sends nmsgs messages to dst, WIN at a time; returns total bytes. */
static long long stream_send(int dst)
{
    unsigned char *bufs[WIN];
    MPI_Request r[WIN];
    long long total = 0;
    for (int w = 0; w < WIN; w++)
        bufs[w] = t_malloc(maxlen);
    for (int i = 0; i < nmsgs; i += WIN) {
        int n = nmsgs - i < WIN ? nmsgs - i : WIN;
        for (int w = 0; w < n; w++) {
            size_t len = msg_len((uint32_t) t_rank, (uint32_t) dst, (uint32_t) (i + w));
            t_msg_fill(bufs[w], len, t_rank, TAG, (uint32_t) (i + w));
            T_MPI(MPI_Isend(bufs[w], (int) len, MPI_BYTE, dst, TAG, MPI_COMM_WORLD, &r[w]));
            total += (long long) len;
        }
        T_MPI(MPI_Waitall(n, r, MPI_STATUSES_IGNORE));
    }
    for (int w = 0; w < WIN; w++)
        free(bufs[w]);
    return total;
}

static void check_one(const unsigned char *b, MPI_Status *st, int src, uint32_t want,
                      const char *phase)
{
    char ctx[96];
    uint32_t seq;
    snprintf(ctx, sizeof(ctx), "%s: message %u from rank %d", phase, want, src);
    t_check_status(st, src, TAG, (long) msg_len((uint32_t) src, (uint32_t) t_rank, want), ctx);
    seq = t_msg_check(b, st, want, ctx);
    T_CHECK(seq == want, "%s: out of order, got seq %u", ctx, seq);
}

/* Receives nmsgs messages from src through windows of pre-posted receives. */
static void stream_recv_preposted(int src, const char *phase)
{
    unsigned char *bufs[WIN];
    MPI_Request r[WIN];
    MPI_Status st[WIN];
    for (int w = 0; w < WIN; w++)
        bufs[w] = t_malloc(maxlen);
    for (int i = 0; i < nmsgs; i += WIN) {
        int n = nmsgs - i < WIN ? nmsgs - i : WIN;
        for (int w = 0; w < n; w++) {
            t_status_reset(&st[w]);
            T_MPI(MPI_Irecv(bufs[w], (int) maxlen, MPI_BYTE, src, TAG, MPI_COMM_WORLD, &r[w]));
        }
        T_MPI(MPI_Waitall(n, r, st));
        for (int w = 0; w < n; w++)
            check_one(bufs[w], &st[w], src, (uint32_t) (i + w), phase);
    }
    for (int w = 0; w < WIN; w++)
        free(bufs[w]);
}

static void senders_to_root(int preposted)
{
    const char *phase = preposted ? "pre-posted stream" : "unexpected stream";
    if (0 == t_rank) {
        if (preposted) {
            /* receives for all sources are outstanding at once */
            for (int s = 1; s < t_size; s++)
                stream_recv_preposted(s, phase);
        } else {
            unsigned char *b = t_malloc(maxlen);
            uint32_t *next = calloc((size_t) t_size, sizeof(uint32_t));
            double t0 = t_now();
            while (t_now() - t0 < 0.2) { /* let messages pile up unexpected */
                int flag;
                T_MPI(
                    MPI_Iprobe(MPI_ANY_SOURCE, TAG + 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
            }
            for (int i = 0; i < nmsgs * (t_size - 1); i++) {
                MPI_Status st;
                int s = 1 + i % (t_size - 1);
                t_status_reset(&st);
                T_MPI(MPI_Recv(b, (int) maxlen, MPI_BYTE, s, TAG, MPI_COMM_WORLD, &st));
                check_one(b, &st, s, next[s]++, phase);
            }
            free(next);
            free(b);
        }
    } else {
        t_snap a, b;
        long long bytes;
        t_snap_take(&a);
        bytes = stream_send(0);
        t_snap_take(&b);
        t_expect_proto(&a, &b, T_P_ANY, nmsgs, bytes, 0, phase);
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* Everyone streams to everyone: one Isend window per peer in flight. */
static void all_to_all(void)
{
    int peers = t_size - 1;
    unsigned char **sb = t_malloc(sizeof(*sb) * (size_t) t_size);
    unsigned char **rb = t_malloc(sizeof(*rb) * (size_t) t_size);
    MPI_Request *r = t_malloc(sizeof(MPI_Request) * 2 * (size_t) t_size);
    MPI_Status *st = t_malloc(sizeof(MPI_Status) * 2 * (size_t) t_size);
    int n = nmsgs / 2;
    t_snap a, b;
    long long bytes = 0;
    for (int p = 0; p < t_size; p++) {
        sb[p] = t_malloc(maxlen);
        rb[p] = t_malloc(maxlen);
    }
    t_snap_take(&a);
    for (int i = 0; i < n; i++) {
        int k = 0;
        for (int p = 0; p < t_size; p++) {
            if (p == t_rank)
                continue;
            t_status_reset(&st[k]);
            T_MPI(MPI_Irecv(rb[p], (int) maxlen, MPI_BYTE, p, TAG, MPI_COMM_WORLD, &r[k++]));
        }
        for (int p = 0; p < t_size; p++) {
            size_t len;
            if (p == t_rank)
                continue;
            len = msg_len((uint32_t) t_rank, (uint32_t) p, (uint32_t) i);
            t_msg_fill(sb[p], len, t_rank, TAG, (uint32_t) i);
            T_MPI(MPI_Isend(sb[p], (int) len, MPI_BYTE, p, TAG, MPI_COMM_WORLD, &r[k++]));
            bytes += (long long) len;
        }
        T_MPI(MPI_Waitall(2 * peers, r, st));
        k = 0;
        for (int p = 0; p < t_size; p++) {
            if (p == t_rank)
                continue;
            check_one(rb[p], &st[k++], p, (uint32_t) i, "all-to-all");
        }
    }
    t_snap_take(&b);
    t_expect_proto(&a, &b, T_P_ANY, n * peers, bytes, 0, "all-to-all");
    for (int p = 0; p < t_size; p++) {
        free(sb[p]);
        free(rb[p]);
    }
    free(sb);
    free(rb);
    free(r);
    free(st);
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    double t0;
    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    T_CHECK(t_size >= 2, "needs at least 2 ranks");
    t_limits_get(argc, argv, &lim);
    if (t_has_arg(argc, argv, "--long"))
        nmsgs = 20000;
    else if (t_has_arg(argc, argv, "--quick"))
        nmsgs = 600;
    maxlen = lim.first_frag_min + 2 * lim.max_send_max + 17;
    if (2 * lim.eager_max + 333 > maxlen)
        maxlen = 2 * lim.eager_max + 333;
    if (lim.eager_max + 101 > maxlen)
        maxlen = lim.eager_max + 101;
    if (0 == t_rank)
        t_limits_print(&lim);
    t0 = t_now();

    senders_to_root(1);
    senders_to_root(0);
    all_to_all();

    if (t_pvars) {
        unsigned long long ooo = t_pv_read(T_PV_OOO_FRAGS), mx = 0;
        MPI_Reduce(&ooo, &mx, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (0 == t_rank)
            t_log("pml_ob1x_out_of_order_frags (sum over ranks): %llu", mx);
        if (0 == t_rank && t_has_arg(argc, argv, "--expect-ooo"))
            T_CHECK(mx > 0, "no message arrived out of order: the run did not exercise reordering");
    }
    if (0 == t_rank)
        t_log("%d messages per stream, %.1f s", nmsgs, t_now() - t0);
    return t_finalize();
}

/*
 * wildcards.c - MPI_ANY_SOURCE / MPI_ANY_TAG matching, mixed with specific
 * receives, posted before and after the messages arrive; statuses checked
 * (MPI_SOURCE, MPI_TAG, MPI_Get_count / MPI_Get_elements).
 *
 * Rank 0 receives, ranks 1..n-1 send (n >= 3). Messages are eager (100
 * bytes), rendezvous (2 * eager_limit + 100) and zero bytes.
 *
 * A. pre-posted receives match in posting order: with receives
 *    (ANY,ANY) (s,5) (ANY,6) (s,ANY) posted, sender s's messages tag 5, 5,
 *    6, 8 land in that order, whatever their size.
 * B. receives posted after arrival: unexpected messages tag 3,4,3,7 from s;
 *    recv(ANY,4) takes the tag-4 one, recv(s,ANY) the first tag-3,
 *    recv(ANY,ANY) the second tag-3, recv(ANY,7) the last.
 * C. one pre-posted (ANY,20) receive plus later ones: every sender's tag-20
 *    message is received exactly once.
 * D. many-to-one stream with (ANY,ANY): per-source order preserved.
 * E. counts in other units: MPI_Get_count(MPI_INT) and MPI_UNDEFINED,
 *    MPI_Get_elements; zero-byte messages; MPI_PROC_NULL receives.
 * F. communicators isolate matching (world, a duplicate, a split with
 *    reversed ranks), statuses in ranks of the receiving communicator.
 */
#include "tpml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static t_limits lim;
static size_t small_sz = 100, big_sz;

static void send_msg(int tag, uint32_t seq, size_t len, MPI_Request *req)
{
    unsigned char *b = t_malloc(len);
    t_msg_fill(b, len, t_rank, tag, seq);
    if (req) {
        /* the buffer is released by the caller through free_pending() */
        T_MPI(MPI_Isend(b, (int) len, MPI_BYTE, 0, tag, MPI_COMM_WORLD, req));
        return;
    }
    T_MPI(MPI_Send(b, (int) len, MPI_BYTE, 0, tag, MPI_COMM_WORLD));
    free(b);
}

/* Receives into a fresh buffer and checks status and content; returns seq. */
static uint32_t recv_msg(int src, int tag, int want_src, int want_tag, size_t want_len,
                         const char *ctx)
{
    size_t cap = big_sz + 64;
    unsigned char *b = t_malloc(cap);
    MPI_Status st;
    uint32_t seq;
    t_status_reset(&st);
    T_MPI(MPI_Recv(b, (int) cap, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st));
    t_check_status(&st, want_src, want_tag, (long) want_len, ctx);
    seq = t_msg_check(b, &st, 0, ctx);
    free(b);
    return seq;
}

static void phase_a(void)
{
    for (int s = 1; s < t_size; s++) {
        size_t len[4] = {big_sz, small_sz, s % 2 ? big_sz : small_sz, small_sz};
        int tags[4] = {5, 5, 6, 8};
        if (0 == t_rank) {
            MPI_Request r[4];
            MPI_Status st[4];
            unsigned char *b[4];
            int src[4] = {MPI_ANY_SOURCE, s, MPI_ANY_SOURCE, s};
            int tg[4] = {MPI_ANY_TAG, 5, 6, MPI_ANY_TAG};
            for (int i = 0; i < 4; i++) {
                b[i] = t_malloc(big_sz + 64);
                t_status_reset(&st[i]);
                T_MPI(MPI_Irecv(b[i], (int) big_sz + 64, MPI_BYTE, src[i], tg[i], MPI_COMM_WORLD,
                                &r[i]));
            }
            T_MPI(MPI_Barrier(MPI_COMM_WORLD));
            T_MPI(MPI_Waitall(4, r, st));
            for (int i = 0; i < 4; i++) {
                char ctx[96];
                snprintf(ctx, sizeof(ctx), "A: pre-posted receive %d (sender %d)", i, s);
                t_check_status(&st[i], s, tags[i], (long) len[i], ctx);
                T_CHECK(t_msg_check(b[i], &st[i], 0, ctx) == (uint32_t) i,
                        "%s: matched message seq %u, expected %d", ctx,
                        t_msg_check(b[i], &st[i], 0, ctx), i);
                free(b[i]);
            }
        } else {
            T_MPI(MPI_Barrier(MPI_COMM_WORLD));
            if (s == t_rank) {
                MPI_Request r[4];
                unsigned char *b[4];
                for (int i = 0; i < 4; i++) {
                    b[i] = t_malloc(len[i]);
                    t_msg_fill(b[i], len[i], t_rank, tags[i], (uint32_t) i);
                    T_MPI(
                        MPI_Isend(b[i], (int) len[i], MPI_BYTE, 0, tags[i], MPI_COMM_WORLD, &r[i]));
                }
                T_MPI(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
                for (int i = 0; i < 4; i++)
                    free(b[i]);
            }
        }
        T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
}

static void phase_b(void)
{
    for (int s = 1; s < t_size; s++) {
        int tags[4] = {3, 4, 3, 7};
        size_t len[4] = {small_sz, big_sz, small_sz, big_sz};
        if (s == t_rank) {
            MPI_Request r[4];
            unsigned char *b[4];
            for (int i = 0; i < 4; i++) {
                b[i] = t_malloc(len[i]);
                t_msg_fill(b[i], len[i], t_rank, tags[i], (uint32_t) i);
                T_MPI(MPI_Isend(b[i], (int) len[i], MPI_BYTE, 0, tags[i], MPI_COMM_WORLD, &r[i]));
            }
            T_MPI(MPI_Barrier(MPI_COMM_WORLD));
            T_MPI(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
            for (int i = 0; i < 4; i++)
                free(b[i]);
        } else if (0 == t_rank) {
            MPI_Status st;
            T_MPI(MPI_Barrier(MPI_COMM_WORLD));
            /* the last message's envelope has arrived, hence all of them */
            t_status_reset(&st);
            T_MPI(MPI_Probe(s, 7, MPI_COMM_WORLD, &st));
            t_check_status(&st, s, 7, (long) big_sz, "B: probe");
            T_CHECK(1 == recv_msg(MPI_ANY_SOURCE, 4, s, 4, big_sz, "B: recv(ANY_SOURCE, 4)"),
                    "B: recv(ANY_SOURCE,4) got the wrong message");
            T_CHECK(0 == recv_msg(s, MPI_ANY_TAG, s, 3, small_sz, "B: recv(s, ANY_TAG)"),
                    "B: recv(s,ANY_TAG) got the wrong message");
            T_CHECK(2 == recv_msg(MPI_ANY_SOURCE, MPI_ANY_TAG, s, 3, small_sz, "B: recv(ANY,ANY)"),
                    "B: recv(ANY,ANY) got the wrong message");
            T_CHECK(3 == recv_msg(MPI_ANY_SOURCE, 7, s, 7, big_sz, "B: recv(ANY_SOURCE, 7)"),
                    "B: recv(ANY,7) got the wrong message");
        } else {
            T_MPI(MPI_Barrier(MPI_COMM_WORLD));
        }
        T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
}

static void phase_c(void)
{
    if (0 == t_rank) {
        int *seen = calloc((size_t) t_size, sizeof(int));
        unsigned char *b = t_malloc(big_sz + 64);
        MPI_Request r;
        MPI_Status st;
        t_status_reset(&st);
        T_MPI(MPI_Irecv(b, (int) big_sz + 64, MPI_BYTE, MPI_ANY_SOURCE, 20, MPI_COMM_WORLD, &r));
        T_MPI(MPI_Barrier(MPI_COMM_WORLD));
        T_MPI(MPI_Wait(&r, &st));
        T_CHECK(st.MPI_SOURCE > 0 && st.MPI_SOURCE < t_size, "C: bad source %d", st.MPI_SOURCE);
        t_check_status(&st, MPI_ANY_SOURCE, 20, -1, "C: pre-posted (ANY,20)");
        t_msg_check(b, &st, 0, "C: pre-posted (ANY,20)");
        seen[st.MPI_SOURCE]++;
        for (int i = 2; i < t_size; i++) {
            t_status_reset(&st);
            T_MPI(
                MPI_Recv(b, (int) big_sz + 64, MPI_BYTE, MPI_ANY_SOURCE, 20, MPI_COMM_WORLD, &st));
            t_check_status(&st, MPI_ANY_SOURCE, 20, -1, "C: (ANY,20)");
            t_msg_check(b, &st, 0, "C: (ANY,20)");
            T_CHECK(st.MPI_SOURCE > 0 && st.MPI_SOURCE < t_size, "C: bad source %d", st.MPI_SOURCE);
            seen[st.MPI_SOURCE]++;
        }
        for (int i = 1; i < t_size; i++)
            T_CHECK(1 == seen[i], "C: tag-20 message of rank %d received %d times", i, seen[i]);
        /* then the tag-21 message of each sender, by specific source */
        for (int i = 1; i < t_size; i++)
            recv_msg(i, MPI_ANY_TAG, i, 21, small_sz, "C: (s,ANY)");
        free(seen);
        free(b);
    } else {
        T_MPI(MPI_Barrier(MPI_COMM_WORLD));
        send_msg(20, 0, t_rank % 2 ? big_sz : small_sz, NULL);
        send_msg(21, 1, small_sz, NULL);
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void phase_d(int per_sender)
{
    if (0 == t_rank) {
        uint32_t *next = calloc((size_t) t_size, sizeof(uint32_t));
        unsigned char *b = t_malloc(big_sz + 64);
        int total = per_sender * (t_size - 1);
        for (int i = 0; i < total; i++) {
            MPI_Status st;
            uint32_t seq;
            t_status_reset(&st);
            T_MPI(MPI_Recv(b, (int) big_sz + 64, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                           MPI_COMM_WORLD, &st));
            T_CHECK(st.MPI_SOURCE > 0 && st.MPI_SOURCE < t_size, "D: bad source %d", st.MPI_SOURCE);
            T_CHECK(st.MPI_TAG >= 30 && st.MPI_TAG < 35, "D: bad tag %d", st.MPI_TAG);
            seq = t_msg_check(b, &st, 0, "D: (ANY,ANY) stream");
            T_CHECK(seq == next[st.MPI_SOURCE], "D: from rank %d got seq %u, expected %u",
                    st.MPI_SOURCE, seq, next[st.MPI_SOURCE]);
            next[st.MPI_SOURCE]++;
        }
        free(next);
        free(b);
    } else {
        for (int i = 0; i < per_sender; i++) {
            size_t len = (i % 17 == 5) ? big_sz : (size_t) (T_MSG_HDR + (i * 37) % 900);
            send_msg(30 + i % 5, (uint32_t) i, len, NULL);
        }
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void phase_e(void)
{
    if (1 == t_rank) {
        int ints[64];
        char odd[10] = {0};
        for (int i = 0; i < 64; i++)
            ints[i] = i * 3 + 1;
        T_MPI(MPI_Send(ints, 64, MPI_INT, 0, 40, MPI_COMM_WORLD));
        T_MPI(MPI_Send(odd, 10, MPI_BYTE, 0, 41, MPI_COMM_WORLD));
        T_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, 42, MPI_COMM_WORLD));
        T_MPI(MPI_Ssend(NULL, 0, MPI_INT, 0, 43, MPI_COMM_WORLD));
    } else if (0 == t_rank) {
        int ints[100], count = -5;
        char odd[10];
        MPI_Status st;
        MPI_Request r;
        t_status_reset(&st);
        T_MPI(MPI_Recv(ints, 100, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        t_check_status(&st, 1, 40, 64 * (long) sizeof(int), "E: ints");
        T_MPI(MPI_Get_count(&st, MPI_INT, &count));
        T_CHECK(64 == count, "E: MPI_Get_count(MPI_INT) %d, expected 64", count);
        T_MPI(MPI_Get_elements(&st, MPI_INT, &count));
        T_CHECK(64 == count, "E: MPI_Get_elements(MPI_INT) %d, expected 64", count);
        for (int i = 0; i < 64; i++)
            T_CHECK(ints[i] == i * 3 + 1, "E: int %d is %d", i, ints[i]);
        t_status_reset(&st);
        T_MPI(MPI_Recv(odd, 10, MPI_BYTE, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        t_check_status(&st, 1, 41, 10, "E: 10 bytes");
        T_MPI(MPI_Get_count(&st, MPI_INT, &count));
        T_CHECK(MPI_UNDEFINED == count,
                "E: MPI_Get_count(MPI_INT) of 10 bytes %d, expected "
                "MPI_UNDEFINED",
                count);
        /* zero-byte messages by wildcards */
        t_status_reset(&st);
        T_MPI(MPI_Recv(ints, 100, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        t_check_status(&st, 1, 42, 0, "E: zero bytes (ANY,ANY)");
        t_status_reset(&st);
        T_MPI(MPI_Irecv(ints, 100, MPI_INT, MPI_ANY_SOURCE, 43, MPI_COMM_WORLD, &r));
        T_MPI(MPI_Wait(&r, &st));
        t_check_status(&st, 1, 43, 0, "E: zero-byte Ssend (ANY,43)");
        /* MPI_PROC_NULL */
        t_status_reset(&st);
        T_MPI(MPI_Recv(ints, 100, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
        T_CHECK(MPI_PROC_NULL == st.MPI_SOURCE && MPI_ANY_TAG == st.MPI_TAG,
                "E: MPI_PROC_NULL receive status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
        T_MPI(MPI_Get_count(&st, MPI_INT, &count));
        T_CHECK(0 == count, "E: MPI_PROC_NULL receive count %d", count);
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* Communicators isolate matching: the same (source, tag) on MPI_COMM_WORLD,
 * a duplicate and a split communicator with reversed rank order never
 * cross-match, even with wildcards; statuses carry ranks of the receiving
 * communicator. */
static void phase_f(void)
{
    MPI_Comm dup, rev;
    int rrank, rsize;
    T_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    T_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, t_size - t_rank, &rev));
    T_MPI(MPI_Comm_rank(rev, &rrank));
    T_MPI(MPI_Comm_size(rev, &rsize));
    T_CHECK(rrank == t_size - 1 - t_rank, "split rank %d", rrank);
    if (0 != t_rank) {
        /* world, then rev, then dup, all with tag 50, to world rank 0 */
        unsigned char b[3][64];
        MPI_Request r[3];
        int wr = t_rank, rr = rrank;
        t_msg_fill(b[0], 64, wr, 50, 100);
        t_msg_fill(b[1], 64, rr, 50, 200);
        t_msg_fill(b[2], 64, wr, 50, 300);
        T_MPI(MPI_Isend(b[0], 64, MPI_BYTE, 0, 50, MPI_COMM_WORLD, &r[0]));
        T_MPI(MPI_Isend(b[1], 64, MPI_BYTE, rsize - 1, 50, rev, &r[1]));
        T_MPI(MPI_Isend(b[2], 64, MPI_BYTE, 0, 50, dup, &r[2]));
        T_MPI(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
    } else {
        unsigned char b[64];
        MPI_Status st;
        int flag = 0;
        /* wait until every sender's dup message is there: then the others
         * are too; receive dup first, then rev, then world */
        for (int i = 1; i < t_size; i++) {
            t_status_reset(&st);
            T_MPI(MPI_Probe(i, 50, dup, &st));
        }
        for (int i = 1; i < t_size; i++) {
            t_status_reset(&st);
            T_MPI(MPI_Recv(b, 64, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &st));
            T_CHECK(300 == t_msg_check(b, &st, 0, "F: dup"), "F: dup receive got another "
                                                             "communicator's message");
        }
        T_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &flag, &st));
        T_CHECK(!flag, "F: dup has a message left");
        for (int i = 1; i < t_size; i++) {
            t_status_reset(&st);
            T_MPI(MPI_Recv(b, 64, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, rev, &st));
            T_CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize - 1,
                    "F: rev status source %d is not a rank of the split communicator",
                    st.MPI_SOURCE);
            T_CHECK(200 == t_msg_check(b, &st, 0, "F: rev"), "F: rev receive got another "
                                                             "communicator's message");
        }
        for (int i = 1; i < t_size; i++) {
            t_status_reset(&st);
            T_MPI(MPI_Recv(b, 64, MPI_BYTE, i, 50, MPI_COMM_WORLD, &st));
            T_CHECK(100 == t_msg_check(b, &st, 0, "F: world"), "F: world receive got another "
                                                               "communicator's message");
        }
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Comm_free(&dup);
    MPI_Comm_free(&rev);
}

int main(int argc, char **argv)
{
    int flag;
    MPI_Status st;
    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    T_CHECK(t_size >= 3, "needs at least 3 ranks");
    t_limits_get(argc, argv, &lim);
    big_sz = 2 * lim.eager_max + 100;
    if (0 == t_rank)
        t_limits_print(&lim);

    for (int rep = 0; rep < 3; rep++) {
        phase_a();
        phase_b();
        phase_c();
    }
    phase_d(t_has_arg(argc, argv, "--long") ? 5000 : 600);
    phase_e();
    phase_f();
    if (0 == t_rank) {
        T_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        T_CHECK(!flag, "a message from %d tag %d is left over", st.MPI_SOURCE, st.MPI_TAG);
    }
    return t_finalize();
}

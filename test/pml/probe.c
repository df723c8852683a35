/*
 * probe.c - MPI_Probe / MPI_Iprobe / MPI_Mprobe / MPI_Improbe / MPI_Mrecv /
 * MPI_Imrecv semantics, at eager, rendezvous and zero sizes.
 *
 *  - a probe does not remove the message: probing twice sees the same
 *    envelope, the receive then gets it, a later Iprobe sees nothing;
 *  - probe statuses carry source, tag and the full count (also for
 *    rendezvous messages, of which only the first fragment has arrived);
 *  - a matched probe removes the message: a receive or probe posted later
 *    cannot match it, even with wildcards; the message handle then receives
 *    it (in any order relative to other matched messages);
 *  - MPI_PROC_NULL: Mprobe/Improbe give MPI_MESSAGE_NO_PROC with an empty
 *    status, and Mrecv of it completes at once;
 *  - Iprobe/Improbe for a message that was never sent return false;
 *  - calls that complete one request (Recv, Probe, Iprobe, Mprobe,
 *    Improbe, Mrecv, Wait, Test) leave the status's MPI_ERROR field as the
 *    caller set it (MPI standard, "Return Status").
 *
 * Rank 0 sends, rank 1 probes and receives; with 3 ranks rank 2 also sends
 * (ANY_SOURCE probes).
 */
#include "tpml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static t_limits lim;
static size_t sizes[3];
static size_t maxsz;

static void send_one(int tag, uint32_t seq, size_t len)
{
    unsigned char *b = t_malloc(len);
    t_msg_fill(b, len, t_rank, tag, seq);
    T_MPI(MPI_Send(b, (int) len, MPI_BYTE, 1, tag, MPI_COMM_WORLD));
    free(b);
}

static void isend_one(int tag, uint32_t seq, size_t len, MPI_Request *r, unsigned char **b)
{
    *b = t_malloc(len);
    t_msg_fill(*b, len, t_rank, tag, seq);
    T_MPI(MPI_Isend(*b, (int) len, MPI_BYTE, 1, tag, MPI_COMM_WORLD, r));
}

static void expect_nothing(int src, int tag, const char *ctx)
{
    int flag = 1;
    MPI_Status st;
    MPI_Message m = MPI_MESSAGE_NULL;
    T_MPI(MPI_Iprobe(src, tag, MPI_COMM_WORLD, &flag, &st));
    T_CHECK(!flag, "%s: Iprobe(%d,%d) found a message from %d tag %d", ctx, src, tag, st.MPI_SOURCE,
            st.MPI_TAG);
    T_MPI(MPI_Improbe(src, tag, MPI_COMM_WORLD, &flag, &m, &st));
    T_CHECK(!flag, "%s: Improbe(%d,%d) found a message", ctx, src, tag);
}

/* Probe twice, Iprobe, then receive: the message stays until received. */
static void probe_does_not_remove(size_t len, int tag)
{
    char ctx[96];
    snprintf(ctx, sizeof(ctx), "probe/recv size %zu", len);
    if (0 == t_rank) {
        send_one(tag, 1, len);
    } else if (1 == t_rank) {
        MPI_Status st;
        int flag = 0;
        unsigned char *b = t_malloc(maxsz);
        t_status_reset(&st);
        T_MPI(MPI_Probe(0, tag, MPI_COMM_WORLD, &st));
        t_check_status(&st, 0, tag, (long) len, ctx);
        t_status_reset(&st);
        T_MPI(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        t_check_status(&st, 0, tag, (long) len, ctx);
        t_status_reset(&st);
        T_MPI(MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        T_CHECK(flag, "%s: Iprobe after Probe found nothing", ctx);
        t_check_status(&st, 0, tag, (long) len, ctx);
        t_status_reset(&st);
        T_MPI(MPI_Recv(b, (int) maxsz, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st));
        t_check_status(&st, 0, tag, (long) len, ctx);
        t_msg_check(b, &st, 1, ctx);
        expect_nothing(MPI_ANY_SOURCE, MPI_ANY_TAG, ctx);
        free(b);
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* Mprobe A; a later receive (wildcards) must get B, not A; then Mrecv A. */
static void mprobe_removes(size_t la, size_t lb, int tag, int use_improbe)
{
    char ctx[128];
    snprintf(ctx, sizeof(ctx), "%s sizes %zu/%zu", use_improbe ? "Improbe" : "Mprobe", la, lb);
    if (0 == t_rank) {
        MPI_Request r[2];
        unsigned char *b[2];
        isend_one(tag, 0, la, &r[0], &b[0]);
        isend_one(tag, 1, lb, &r[1], &b[1]);
        /* C: only sent once rank 1 has posted its wildcard receive; A may
         * be a rendezvous message received last, so wait for A and B after */
        T_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        send_one(tag + 1, 2, la);
        T_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        free(b[0]);
        free(b[1]);
    } else if (1 == t_rank) {
        MPI_Message ma = MPI_MESSAGE_NULL;
        MPI_Status st;
        MPI_Request r;
        int flag = 0;
        unsigned char *ba = t_malloc(maxsz), *bb = t_malloc(maxsz), *bc = t_malloc(maxsz);
        t_status_reset(&st);
        if (use_improbe) {
            while (!flag)
                T_MPI(MPI_Improbe(0, tag, MPI_COMM_WORLD, &flag, &ma, &st));
        } else {
            T_MPI(MPI_Mprobe(0, tag, MPI_COMM_WORLD, &ma, &st));
        }
        T_CHECK(MPI_MESSAGE_NULL != ma && MPI_MESSAGE_NO_PROC != ma, "%s: no message handle", ctx);
        t_check_status(&st, 0, tag, (long) la, ctx);
        /* B is now the first matching message for any probe or receive */
        t_status_reset(&st);
        T_MPI(MPI_Probe(0, tag, MPI_COMM_WORLD, &st));
        t_check_status(&st, 0, tag, (long) lb, ctx);
        t_status_reset(&st);
        T_MPI(
            MPI_Recv(bb, (int) maxsz, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        t_check_status(&st, 0, tag, (long) lb, ctx);
        T_CHECK(1 == t_msg_check(bb, &st, 1, ctx), "%s: recv after mprobe got A", ctx);
        /* a wildcard receive posted now must not match A either */
        T_MPI(
            MPI_Irecv(bc, (int) maxsz, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
        T_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, 999, MPI_COMM_WORLD));
        t_status_reset(&st);
        T_MPI(MPI_Wait(&r, &st));
        t_check_status(&st, 0, tag + 1, (long) la, ctx);
        T_CHECK(2 == t_msg_check(bc, &st, 2, ctx), "%s: wildcard receive matched A", ctx);
        /* finally receive A through its handle */
        t_status_reset(&st);
        if (use_improbe) {
            T_MPI(MPI_Imrecv(ba, (int) maxsz, MPI_BYTE, &ma, &r));
            T_CHECK(MPI_MESSAGE_NULL == ma, "%s: Imrecv did not reset the handle", ctx);
            T_MPI(MPI_Wait(&r, &st));
        } else {
            T_MPI(MPI_Mrecv(ba, (int) maxsz, MPI_BYTE, &ma, &st));
            T_CHECK(MPI_MESSAGE_NULL == ma, "%s: Mrecv did not reset the handle", ctx);
        }
        t_check_status(&st, 0, tag, (long) la, ctx);
        T_CHECK(0 == t_msg_check(ba, &st, 0, ctx), "%s: Mrecv got the wrong message", ctx);
        expect_nothing(MPI_ANY_SOURCE, MPI_ANY_TAG, ctx);
        free(ba);
        free(bb);
        free(bc);
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* Several matched messages received through their handles in reverse
 * order, into a derived (vector) receive type for one of them. */
static void mrecv_reverse(int tag)
{
    enum { N = 6 };
    if (0 == t_rank || 2 == t_rank) {
        MPI_Request r[N];
        unsigned char *b[N];
        int n = 0;
        /* nonblocking: rendezvous sends complete only at the Mrecv */
        for (int i = 0; i < N; i++)
            if (i % 2 == (0 == t_rank ? 0 : 1) || t_size < 3) {
                isend_one(tag, (uint32_t) i, sizes[i % 3] + T_MSG_HDR, &r[n], &b[n]);
                n++;
            }
        T_MPI(MPI_Waitall(n, r, MPI_STATUSES_IGNORE));
        for (int i = 0; i < n; i++)
            free(b[i]);
    } else if (1 == t_rank) {
        MPI_Message m[N];
        MPI_Status st[N];
        for (int i = 0; i < N; i++) {
            t_status_reset(&st[i]);
            T_MPI(MPI_Mprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &m[i], &st[i]));
        }
        expect_nothing(MPI_ANY_SOURCE, tag, "Mprobe all then Iprobe");
        for (int i = N - 1; i >= 0; i--) {
            MPI_Status s2;
            int count;
            char ctx[64];
            snprintf(ctx, sizeof(ctx), "Mrecv reverse %d", i);
            T_MPI(MPI_Get_count(&st[i], MPI_BYTE, &count));
            if (i == 1) {
                t_typed t;
                uint32_t seq;
                t_typed_create(&t, T_DT_VECTOR, (size_t) count);
                t_typed_guard(&t, 0x5a);
                t_status_reset(&s2);
                T_MPI(MPI_Mrecv(t.buf, t.count, t.type, &m[i], &s2));
                t_check_status(&s2, st[i].MPI_SOURCE, tag, count, ctx);
                /* data bytes in type-map order: pack back and check */
                {
                    unsigned char *p = t_malloc((size_t) count);
                    int pos = 0;
                    T_MPI(MPI_Pack(t.buf, t.count, t.type, p, count, &pos, MPI_COMM_SELF));
                    seq = t_msg_check(p, &s2, 0, ctx);
                    free(p);
                }
                (void) seq;
                t_typed_free(&t);
            } else {
                unsigned char *b = t_malloc(maxsz);
                t_status_reset(&s2);
                T_MPI(MPI_Mrecv(b, (int) maxsz, MPI_BYTE, &m[i], &s2));
                t_check_status(&s2, st[i].MPI_SOURCE, tag, count, ctx);
                t_msg_check(b, &s2, 0, ctx);
                free(b);
            }
        }
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void proc_null(void)
{
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status st;
    MPI_Request r;
    int flag = 0, count = -1;
    char b[4];
    T_MPI(MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &m, &st));
    T_CHECK(MPI_MESSAGE_NO_PROC == m, "Mprobe(MPI_PROC_NULL) did not give MPI_MESSAGE_NO_PROC");
    T_CHECK(MPI_PROC_NULL == st.MPI_SOURCE && MPI_ANY_TAG == st.MPI_TAG,
            "Mprobe(MPI_PROC_NULL) status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    T_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
    T_CHECK(0 == count, "Mprobe(MPI_PROC_NULL) count %d", count);
    T_MPI(MPI_Mrecv(b, 4, MPI_BYTE, &m, &st));
    T_CHECK(MPI_PROC_NULL == st.MPI_SOURCE, "Mrecv(NO_PROC) status source %d", st.MPI_SOURCE);
    T_MPI(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st));
    T_CHECK(flag && MPI_MESSAGE_NO_PROC == m, "Improbe(MPI_PROC_NULL) flag %d", flag);
    T_MPI(MPI_Imrecv(b, 4, MPI_BYTE, &m, &r));
    T_MPI(MPI_Wait(&r, &st));
    T_CHECK(MPI_PROC_NULL == st.MPI_SOURCE, "Imrecv(NO_PROC) status source %d", st.MPI_SOURCE);
    T_MPI(MPI_Iprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &st));
    T_CHECK(flag && MPI_PROC_NULL == st.MPI_SOURCE, "Iprobe(MPI_PROC_NULL) flag %d", flag);
    T_MPI(MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    T_CHECK(MPI_PROC_NULL == st.MPI_SOURCE, "Probe(MPI_PROC_NULL) source %d", st.MPI_SOURCE);
}

#define ERROR_SENTINEL (-4711)

static void check_untouched(const MPI_Status *st, const char *call, const char *ctx)
{
    T_CHECK(ERROR_SENTINEL == st->MPI_ERROR, "%s: %s wrote MPI_ERROR (%d)", ctx, call,
            st->MPI_ERROR);
}

/* Every single-completion receive and probe call on one message size. */
static void status_error_untouched(size_t len, int tag)
{
    enum { N = 4 };
    char ctx[96];
    snprintf(ctx, sizeof(ctx), "status MPI_ERROR size %zu", len);
    if (0 == t_rank) {
        for (int i = 0; i < N; i++)
            send_one(tag, (uint32_t) i, len);
    } else if (1 == t_rank) {
        unsigned char *b = t_malloc(maxsz);
        MPI_Status st;
        MPI_Message m;
        MPI_Request r;
        int flag = 0;

        st.MPI_ERROR = ERROR_SENTINEL;
        T_MPI(MPI_Probe(0, tag, MPI_COMM_WORLD, &st));
        check_untouched(&st, "MPI_Probe", ctx);
        while (!flag)
            T_MPI(MPI_Iprobe(0, tag, MPI_COMM_WORLD, &flag, &st));
        check_untouched(&st, "MPI_Iprobe", ctx);
        T_MPI(MPI_Recv(b, (int) maxsz, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st));
        check_untouched(&st, "MPI_Recv", ctx);
        T_MPI(MPI_Mprobe(0, tag, MPI_COMM_WORLD, &m, &st));
        check_untouched(&st, "MPI_Mprobe", ctx);
        T_MPI(MPI_Mrecv(b, (int) maxsz, MPI_BYTE, &m, &st));
        check_untouched(&st, "MPI_Mrecv", ctx);
        for (flag = 0; !flag;)
            T_MPI(MPI_Improbe(0, tag, MPI_COMM_WORLD, &flag, &m, &st));
        check_untouched(&st, "MPI_Improbe", ctx);
        T_MPI(MPI_Imrecv(b, (int) maxsz, MPI_BYTE, &m, &r));
        T_MPI(MPI_Wait(&r, &st));
        check_untouched(&st, "MPI_Wait", ctx);
        T_MPI(MPI_Irecv(b, (int) maxsz, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &r));
        for (flag = 0; !flag;)
            T_MPI(MPI_Test(&r, &flag, &st));
        check_untouched(&st, "MPI_Test", ctx);
        st.MPI_ERROR = MPI_SUCCESS;
        T_CHECK(N - 1 == t_msg_check(b, &st, N - 1, ctx), "%s: last message out of order", ctx);
        free(b);
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    int tag = 100;
    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    T_CHECK(t_size >= 2, "needs at least 2 ranks");
    t_limits_get(argc, argv, &lim);
    sizes[0] = 0;
    sizes[1] = lim.eager_min - 64;
    sizes[2] = lim.first_frag_min + 2 * lim.max_send_max + 5;
    maxsz = sizes[2] + T_MSG_HDR + 64;
    if (0 == t_rank)
        t_limits_print(&lim);

    proc_null();
    expect_nothing(MPI_ANY_SOURCE, MPI_ANY_TAG, "start");
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int rep = 0; rep < 3; rep++) {
        for (int i = 0; i < 3; i++)
            probe_does_not_remove(sizes[i], tag++);
        probe_does_not_remove(100, tag++);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                size_t la = sizes[i] < T_MSG_HDR ? T_MSG_HDR : sizes[i];
                size_t lb = sizes[j] < T_MSG_HDR ? T_MSG_HDR : sizes[j];
                mprobe_removes(la, lb, tag, (i + j + rep) % 2);
                tag += 2;
            }
        mrecv_reverse(tag++);
    }
    for (int i = 0; i < 3; i++)
        status_error_untouched(sizes[i] < T_MSG_HDR ? T_MSG_HDR : sizes[i], tag++);
    return t_finalize();
}

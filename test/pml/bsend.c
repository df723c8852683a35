/*
 * bsend.c - buffered mode limits and zero-byte messages.
 *
 *  - MPI_Bsend / MPI_Ibsend of a message above the eager limit without an
 *    attached buffer, or larger than the attached buffer, return an error
 *    of class MPI_ERR_BUFFER (with MPI_ERRORS_RETURN) and nothing is sent;
 *    no crash. (Eager-sized buffered messages may legitimately go straight
 *    into a BTL fragment without using the attached buffer, as ob1 does,
 *    so they are not required to fail.)
 *    The communicator keeps working afterwards (except under stock ob1,
 *    see fail_comm);
 *  - a buffer holding three pending buffered-pipeline messages (receiver
 *    not posted) refuses a fourth; once the receiver takes them, detach
 *    returns and new Bsends with a big enough buffer work;
 *  - zero-byte messages in every mode, blocking and nonblocking, with a
 *    NULL buffer and into a larger receive buffer that stays untouched;
 *    counters: standard/ready/buffered zero-byte sends are eager (immediate
 *    on BTLs with sendi), synchronous ones go through the send/recv
 *    pipeline and count as synchronous.
 *  - many Ibsends at a buffer with room for two (crowded below).
 * Rank 0 sends, rank 1 receives.
 */
#include "tpml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_TOKEN 1
static t_limits lim;
/* Communicator for sends expected to fail with MPI_ERR_BUFFER: MPI_COMM_WORLD
 * (which must keep working afterwards), except under the stock PML: stock
 * ob1 of Open MPI 4.1.4 spends the message sequence number of a refused
 * Bsend, so every later message to that peer on that communicator is held
 * back forever; there the refused sends go to a scratch communicator. */
static MPI_Comm fail_comm = MPI_COMM_WORLD;

static void recv_check(int tag, size_t len, uint32_t seq, const char *ctx)
{
    unsigned char *b = t_malloc(len + 16);
    MPI_Status st;
    t_status_reset(&st);
    T_MPI(MPI_Recv(b, (int) len + 16, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st));
    t_check_status(&st, 0, tag, (long) len, ctx);
    t_msg_check(b, &st, seq, ctx);
    free(b);
}

static void too_small(void)
{
    size_t big = 2 * lim.eager_max + 1000, small = 100;
    int bsize = (int) (1000 + MPI_BSEND_OVERHEAD);
    void *bb = t_malloc((size_t) bsize), *old;
    MPI_Comm fc = fail_comm;
    if (0 == t_rank) {
        unsigned char *m = t_malloc(big);
        MPI_Request r;
        int rc, sz;
        t_snap a, b;
        t_msg_fill(m, big, 0, 10, 1);
        /* nothing attached */
        t_snap_take(&a);
        rc = MPI_Bsend(m, (int) big, MPI_BYTE, 1, 10, fc);
        T_CHECK(MPI_ERR_BUFFER == t_err_class(rc), "Bsend of %zu without buffer returned %s", big,
                t_err_string(rc));
        t_snap_take(&b);
        t_expect_proto(&a, &b, 0, 0, 0, 0, "failed Bsend sent nothing");
        /* attached, too small */
        T_MPI(MPI_Buffer_attach(bb, bsize));
        t_msg_fill(m, big, 0, 10, 1);
        rc = MPI_Bsend(m, (int) big, MPI_BYTE, 1, 10, fc);
        T_CHECK(MPI_ERR_BUFFER == t_err_class(rc), "Bsend of %zu into %d-byte buffer returned %s",
                big, bsize, t_err_string(rc));
        rc = MPI_Bsend(m, (int) lim.eager_max + 1, MPI_BYTE, 1, 10, fc);
        T_CHECK(MPI_ERR_BUFFER == t_err_class(rc), "Bsend of %llu into %d-byte buffer returned %s",
                lim.eager_max + 1, bsize, t_err_string(rc));
        rc = MPI_Ibsend(m, (int) big, MPI_BYTE, 1, 10, fc, &r);
        if (MPI_SUCCESS == rc)
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        T_CHECK(MPI_ERR_BUFFER == t_err_class(rc), "Ibsend of %zu into %d-byte buffer returned %s",
                big, bsize, t_err_string(rc));
        /* a message that fits still goes */
        t_msg_fill(m, small, 0, 10, 2);
        T_MPI(MPI_Bsend(m, (int) small, MPI_BYTE, 1, 10, MPI_COMM_WORLD));
        T_MPI(MPI_Buffer_detach(&old, &sz));
        T_CHECK(old == bb && sz == bsize, "detach returned %p/%d, attached %p/%d", old, sz, bb,
                bsize);
        /* now a big enough buffer */
        {
            int bs2 = (int) (big + MPI_BSEND_OVERHEAD);
            void *b2 = t_malloc((size_t) bs2);
            T_MPI(MPI_Buffer_attach(b2, bs2));
            t_msg_fill(m, big, 0, 10, 3);
            T_MPI(MPI_Bsend(m, (int) big, MPI_BYTE, 1, 10, MPI_COMM_WORLD));
            memset(m, 0, big); /* the data must have been copied */
            T_MPI(MPI_Buffer_detach(&old, &sz));
            free(b2);
        }
        free(m);
    } else if (1 == t_rank) {
        recv_check(10, small, 2, "Bsend that fits after refused ones");
        recv_check(10, big, 3, "Bsend after attaching a big enough buffer");
    }
    free(bb);
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* Three pending buffered-pipeline messages fill the buffer. */
static void buffer_full(void)
{
    size_t s = lim.eager_max + 1000;
    int per = (int) (s + MPI_BSEND_OVERHEAD), bsize = 3 * per + 64, sz;
    void *bb = t_malloc((size_t) bsize), *old;
    if (0 == t_rank) {
        unsigned char *m = t_malloc(s);
        int rc;
        T_MPI(MPI_Buffer_attach(bb, bsize));
        for (int i = 0; i < 3; i++) {
            t_msg_fill(m, s, 0, 20, (uint32_t) i);
            T_MPI(MPI_Bsend(m, (int) s, MPI_BYTE, 1, 20, MPI_COMM_WORLD));
        }
        t_msg_fill(m, s, 0, 20, 3);
        rc = MPI_Bsend(m, (int) s, MPI_BYTE, 1, 20, fail_comm);
        T_CHECK(MPI_ERR_BUFFER == t_err_class(rc),
                "fourth Bsend of %zu into a buffer holding three pending ones returned %s", s,
                t_err_string(rc));
        T_MPI(MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_TOKEN, MPI_COMM_WORLD));
        /* detach blocks until the three are delivered */
        T_MPI(MPI_Buffer_detach(&old, &sz));
        T_MPI(MPI_Buffer_attach(bb, bsize));
        T_MPI(MPI_Bsend(m, (int) s, MPI_BYTE, 1, 20, MPI_COMM_WORLD));
        T_MPI(MPI_Buffer_detach(&old, &sz));
        free(m);
    } else if (1 == t_rank) {
        T_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_TOKEN, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 4; i++)
            recv_check(20, s, (uint32_t) i, "buffered message after full");
    }
    free(bb);
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void zero_bytes(void)
{
    static const char *names[8] = {"Send",  "Ssend",  "Bsend",  "Rsend",
                                   "Isend", "Issend", "Ibsend", "Irsend"};
    int bsize = 4 * MPI_BSEND_OVERHEAD + 64, sz;
    void *bb = t_malloc((size_t) bsize), *old;
    T_MPI(MPI_Buffer_attach(bb, bsize));
    for (int rep = 0; rep < 4; rep++)
        for (int k = 0; k < 8; k++) {
            int tag = 30 + k;
            char ctx[64];
            snprintf(ctx, sizeof(ctx), "zero-byte %s rep %d", names[k], rep);
            if (0 == t_rank) {
                t_snap a, b;
                MPI_Request r;
                t_mode mode = (t_mode[]){T_MODE_STD, T_MODE_SYNC, T_MODE_BUF, T_MODE_READY}[k % 4];
                int allowed = T_MODE_SYNC == mode ? T_P_SRPIPE
                              : lim.sendi_capable ? T_P_IMM
                                                  : T_P_EAGER;
                T_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_TOKEN, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                t_snap_take(&a);
                if (k < 4) {
                    T_MPI(
                        t_send_mode(mode, rep % 2 ? NULL : bb, 0, MPI_INT, 1, tag, MPI_COMM_WORLD));
                } else {
                    T_MPI(t_isend_mode(mode, rep % 2 ? NULL : bb, 0, MPI_INT, 1, tag,
                                       MPI_COMM_WORLD, &r));
                    T_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
                }
                t_snap_take(&b);
                t_expect_proto(&a, &b, allowed, 1, 0, T_MODE_SYNC == mode, ctx);
            } else if (1 == t_rank) {
                unsigned char buf[16];
                MPI_Request r;
                MPI_Status st;
                memset(buf, 0xEE, sizeof(buf));
                t_status_reset(&st);
                if (rep % 2)
                    T_MPI(MPI_Irecv(NULL, 0, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &r));
                else
                    T_MPI(MPI_Irecv(buf, (int) sizeof(buf), MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                    MPI_COMM_WORLD, &r));
                T_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_TOKEN, MPI_COMM_WORLD));
                T_MPI(MPI_Wait(&r, &st));
                t_check_status(&st, 0, tag, 0, ctx);
                t_check_guard(buf, sizeof(buf), 0xEE, ctx);
            }
        }
    T_MPI(MPI_Buffer_detach(&old, &sz));
    free(bb);
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* Many Ibsends at a buffer with room for two pending messages, receiver
 * not posted: each is refused at the call (MPI_ERR_BUFFER) or delivered.
 * With two BTLs of different eager limits, a send taken as eager on one BTL
 * may be retried (after a resource failure, see pml_ob1x_fault_every) on the
 * other, where it needs the full buffer: it was accepted, so it must still
 * arrive. Zero-byte sends on another tag between some of them vary the BTL
 * each one starts on (the BTLs take turns). Every accepted message is
 * checked, in order. ob1x only: stock ob1 loses the sequence number of a
 * refused send (see fail_comm). */
static void crowded(void)
{
    enum { N = 200, TAG_NUDGE = 31 };
    size_t s =
        lim.eager_min < lim.eager_max ? (lim.eager_min + lim.eager_max) / 2 : lim.eager_max + 1000;
    int bsize = (int) (2 * (s + MPI_BSEND_OVERHEAD) + 64), sz, refused = 0;
    int counts[2] = {0, 0}; /* accepted, nudges */
    void *bb = t_malloc((size_t) bsize), *old;

    if (0 == t_rank) {
        unsigned char *m = t_malloc(s * N);
        MPI_Request r[N];
        T_MPI(MPI_Buffer_attach(bb, bsize));
        for (int i = 0; i < N; i++) {
            unsigned char *mi = m + s * (size_t) counts[0];
            int rc;
            if (t_seed(0, 30, (uint32_t) i) % 2) {
                T_MPI(MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_NUDGE, MPI_COMM_WORLD));
                counts[1]++;
            }
            t_msg_fill(mi, s, 0, 30, (uint32_t) counts[0]);
            rc = MPI_Ibsend(mi, (int) s, MPI_BYTE, 1, 30, MPI_COMM_WORLD, &r[counts[0]]);
            if (MPI_SUCCESS == rc) {
                counts[0]++;
            } else {
                T_CHECK(MPI_ERR_BUFFER == t_err_class(rc), "crowded Ibsend %d returned %s", i,
                        t_err_string(rc));
                refused++;
            }
        }
        T_CHECK(refused > 0, "a buffer for two messages took all %d", N);
        t_log("crowded: %d of %d Ibsends of %zu bytes accepted", counts[0], N, s);
        T_MPI(MPI_Send(counts, 2, MPI_INT, 1, TAG_TOKEN, MPI_COMM_WORLD));
        T_MPI(MPI_Waitall(counts[0], r, MPI_STATUSES_IGNORE));
        T_MPI(MPI_Buffer_detach(&old, &sz));
        free(m);
    } else if (1 == t_rank) {
        T_MPI(MPI_Recv(counts, 2, MPI_INT, 0, TAG_TOKEN, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < counts[0]; i++)
            recv_check(30, s, (uint32_t) i, "crowded buffered message");
        for (int i = 0; i < counts[1]; i++)
            T_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_NUDGE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    free(bb);
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    T_CHECK(t_size >= 2, "needs at least 2 ranks");
    t_limits_get(argc, argv, &lim);
    if (0 == t_rank)
        t_limits_print(&lim);
    if (!t_pvars)
        T_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &fail_comm));
    for (int rep = 0; rep < 3; rep++) {
        too_small();
        buffer_full();
    }
    zero_bytes();
    if (t_pvars)
        crowded();
    return t_finalize();
}

/*
 * edge.c - corners of point-to-point MPI that applications and conformance
 * suites reach and the other PML tests do not, each at an eager size and at
 * rendezvous sizes:
 *
 *  - tag_ub:     the largest legal tag (MPI_TAG_UB attribute) travels intact;
 *  - bottom:     MPI_BOTTOM with a struct of absolute addresses spanning two
 *                separate allocations, on both sides;
 *  - underflow:  a receive larger than the message (also ANY_SOURCE and a
 *                vector receive type): count, elements and untouched tail;
 *  - self:       every mode to oneself (Issend to self is not complete until
 *                the receive is posted);
 *  - freed:      MPI_Request_free on active Isend/Issend/Ibsend/Irsend: the
 *                messages still arrive intact;
 *  - nullreqs:   Waitany/Testany/Waitsome/Testsome/Waitall over arrays that
 *                hold MPI_REQUEST_NULL, alone or mixed with live requests;
 *  - comms:      thousands of communicators alive at once, a message on each
 *                received in reverse order of creation, then all freed;
 *  - commfree:   MPI_Comm_free right after an Isend/Irecv on it; both
 *                requests complete and deliver;
 *  - anysrc_big: every other rank sends rendezvous-sized messages at once to
 *                rank 0, which receives them all with MPI_ANY_SOURCE (the
 *                senders' counters must show the send/recv pipeline);
 *  - packed:     MPI_Pack'ed data sent as MPI_PACKED, received as a derived
 *                type, and the reverse;
 *  - zerotype:   a datatype of size 0 and count 0 messages with NULL buffers
 *                in every mode, with wildcard receives.
 *
 * 2 or more ranks; ranks beyond 1 take part in anysrc_big only (and in the
 * collective steps).
 */
#include "tpml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_ACK 7

static t_limits lim;
static size_t sizes[4];
static int nsizes;

static int peer_of_01(void)
{
    return 0 == t_rank ? 1 : 0;
}

static void pick_sizes(void)
{
    sizes[0] = 8;
    sizes[1] = lim.eager_min + 1;
    sizes[2] = 3 * lim.max_send_max + 17;
    sizes[3] = 4u << 20;
    nsizes = 4;
}

static void test_tag_ub(void)
{
    int *ub, flag;
    T_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    T_CHECK(flag && *ub >= 32767, "MPI_TAG_UB %d below the standard's minimum", flag ? *ub : -1);
    if (t_rank > 1)
        return;
    for (int i = 0; i < nsizes; i++) {
        size_t len = sizes[i];
        unsigned char *b = t_malloc(len);
        MPI_Status st;
        char ctx[64];
        snprintf(ctx, sizeof(ctx), "tag_ub %d size %zu", *ub, len);
        if (0 == t_rank) {
            t_fill(b, len, t_seed(1, i, 0));
            T_MPI(MPI_Send(b, (int) len, MPI_BYTE, 1, *ub, MPI_COMM_WORLD));
            t_fill(b, len, t_seed(1, i, 1));
            T_MPI(MPI_Ssend(b, (int) len, MPI_BYTE, 1, *ub, MPI_COMM_WORLD));
        } else {
            t_status_reset(&st);
            T_MPI(MPI_Recv(b, (int) len, MPI_BYTE, 0, *ub, MPI_COMM_WORLD, &st));
            t_check_status(&st, 0, *ub, (long) len, ctx);
            t_check_data(b, len, t_seed(1, i, 0), ctx);
            t_status_reset(&st);
            T_MPI(MPI_Recv(b, (int) len, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            t_check_status(&st, 0, *ub, (long) len, ctx);
            t_check_data(b, len, t_seed(1, i, 1), ctx);
        }
        free(b);
    }
}

/* A struct type of absolute addresses: part one in `a`, part two in `b`. */
static MPI_Datatype bottom_type(unsigned char *a, size_t la, unsigned char *b, size_t lb)
{
    MPI_Aint disp[2];
    int blen[2] = {(int) la, (int) lb};
    MPI_Datatype types[2] = {MPI_BYTE, MPI_BYTE}, t;
    T_MPI(MPI_Get_address(a, &disp[0]));
    T_MPI(MPI_Get_address(b, &disp[1]));
    T_MPI(MPI_Type_create_struct(2, blen, disp, types, &t));
    T_MPI(MPI_Type_commit(&t));
    return t;
}

static void test_bottom(void)
{
    if (t_rank > 1)
        return;
    for (int i = 0; i < nsizes; i++) {
        size_t len = sizes[i], la = len / 3, lb = len - la;
        unsigned char *a = t_malloc(la + 1), *b = t_malloc(lb + 1);
        unsigned char *flat = t_malloc(len);
        MPI_Datatype t = bottom_type(a, la, b, lb);
        MPI_Status st;
        char ctx[64];
        snprintf(ctx, sizeof(ctx), "MPI_BOTTOM size %zu", len);
        if (0 == t_rank) {
            t_fill(flat, len, t_seed(2, i, 0));
            memcpy(a, flat, la);
            memcpy(b, flat + la, lb);
            T_MPI(MPI_Send(MPI_BOTTOM, 1, t, 1, 20 + i, MPI_COMM_WORLD));
        } else {
            memset(a, 0xEE, la + 1);
            memset(b, 0xEE, lb + 1);
            t_status_reset(&st);
            T_MPI(MPI_Recv(MPI_BOTTOM, 1, t, 0, 20 + i, MPI_COMM_WORLD, &st));
            t_check_status(&st, 0, 20 + i, (long) len, ctx);
            memcpy(flat, a, la);
            memcpy(flat + la, b, lb);
            t_check_data(flat, len, t_seed(2, i, 0), ctx);
            T_CHECK(0xEE == a[la] && 0xEE == b[lb], "%s: wrote past a block", ctx);
        }
        MPI_Type_free(&t);
        free(a);
        free(b);
        free(flat);
    }
}

/* The message is `len` bytes; the receive offers len * 2 + 100. */
static void test_underflow(void)
{
    if (t_rank > 1)
        return;
    for (int i = 0; i < nsizes; i++) {
        size_t len = sizes[i], cap = 2 * len + 100;
        unsigned char *b = t_malloc(cap);
        MPI_Status st;
        char ctx[64];
        snprintf(ctx, sizeof(ctx), "underflow size %zu", len);
        if (0 == t_rank) {
            t_fill(b, cap, t_seed(3, i, 0));
            T_MPI(MPI_Send(b, (int) len, MPI_BYTE, 1, 30, MPI_COMM_WORLD));
            T_MPI(MPI_Send(b, (int) len, MPI_BYTE, 1, 31, MPI_COMM_WORLD));
            /* a whole number of ints plus 2 bytes for the vector receive */
            T_MPI(MPI_Send(b, (int) (len / 4 * 4 + 2), MPI_BYTE, 1, 32, MPI_COMM_WORLD));
        } else {
            memset(b, 0xEE, cap);
            t_status_reset(&st);
            T_MPI(MPI_Recv(b, (int) cap, MPI_BYTE, 0, 30, MPI_COMM_WORLD, &st));
            t_check_status(&st, 0, 30, (long) len, ctx);
            t_check_data(b, len, t_seed(3, i, 0), ctx);
            t_check_guard(b + len, cap - len, 0xEE, ctx);

            memset(b, 0xEE, cap);
            t_status_reset(&st);
            T_MPI(
                MPI_Recv(b, (int) cap, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            t_check_status(&st, 0, 31, (long) len, ctx);
            t_check_data(b, len, t_seed(3, i, 0), ctx);
            t_check_guard(b + len, cap - len, 0xEE, ctx);

            /* vector of 2-int blocks, stride 3 ints: the message fills
             * len/4 ints and 2 bytes of the next one */
            size_t nints = len / 4 + 1, nblk = nints / 2 + 2;
            MPI_Datatype v;
            T_MPI(MPI_Type_vector((int) nblk, 2, 3, MPI_INT, &v));
            T_MPI(MPI_Type_commit(&v));
            int *vb = t_malloc(nblk * 3 * sizeof(int));
            memset(vb, 0xEE, nblk * 3 * sizeof(int));
            t_status_reset(&st);
            T_MPI(MPI_Recv(vb, 1, v, 0, 32, MPI_COMM_WORLD, &st));
            int count = -5, elems = -5;
            T_MPI(MPI_Get_count(&st, v, &count));
            T_MPI(MPI_Get_elements(&st, MPI_INT, &elems));
            T_CHECK(MPI_UNDEFINED == count, "%s: vector Get_count %d, want MPI_UNDEFINED", ctx,
                    count);
            T_CHECK(MPI_UNDEFINED == elems,
                    "%s: Get_elements(MPI_INT) %d, want UNDEFINED "
                    "(partial int)",
                    ctx, elems);
            T_MPI(MPI_Get_elements(&st, MPI_BYTE, &elems));
            T_CHECK((size_t) elems == len / 4 * 4 + 2, "%s: Get_elements(MPI_BYTE) %d", ctx, elems);
            unsigned char *flat = t_malloc(nints * 4);
            for (size_t k = 0; k < nints; k++)
                memcpy(flat + 4 * k, vb + (k / 2) * 3 + (k % 2), 4);
            t_check_data(flat, len / 4 * 4 + 2, t_seed(3, i, 0), ctx);
            t_check_guard(flat + len / 4 * 4 + 2, 2, 0xEE, ctx);
            for (size_t k = 0; k < nblk; k++)
                t_check_guard(vb + 3 * k + 2, sizeof(int), 0xEE, ctx);
            free(flat);
            free(vb);
            MPI_Type_free(&v);
        }
        free(b);
    }
}

static void test_self(void)
{
    int bsz = 0;
    for (int i = 0; i < nsizes; i++)
        bsz += (int) sizes[i] + MPI_BSEND_OVERHEAD;
    void *bbuf = t_malloc((size_t) bsz);
    T_MPI(MPI_Buffer_attach(bbuf, bsz));
    for (int i = 0; i < nsizes; i++) {
        size_t len = sizes[i];
        unsigned char *s = t_malloc(len), *r = t_malloc(len);
        MPI_Request rr, sr;
        MPI_Status st;
        int flag;
        char ctx[64];
        for (int m = 0; m < T_MODE_COUNT; m++) {
            snprintf(ctx, sizeof(ctx), "self %s size %zu", t_mode_name((t_mode) m), len);
            t_fill(s, len, t_seed(4, i, m));
            memset(r, 0, len);
            T_MPI(MPI_Irecv(r, (int) len, MPI_BYTE, t_rank, 40 + m, MPI_COMM_WORLD, &rr));
            T_MPI(t_send_mode((t_mode) m, s, (int) len, MPI_BYTE, t_rank, 40 + m, MPI_COMM_WORLD));
            t_status_reset(&st);
            T_MPI(MPI_Wait(&rr, &st));
            t_check_status(&st, t_rank, 40 + m, (long) len, ctx);
            t_check_data(r, len, t_seed(4, i, m), ctx);
        }
        /* Issend to self first: it may not complete before the receive */
        snprintf(ctx, sizeof(ctx), "self Issend first size %zu", len);
        t_fill(s, len, t_seed(4, i, 9));
        T_MPI(MPI_Issend(s, (int) len, MPI_BYTE, t_rank, 49, MPI_COMM_WORLD, &sr));
        for (int k = 0; k < 50; k++) {
            T_MPI(MPI_Test(&sr, &flag, MPI_STATUS_IGNORE));
            T_CHECK(!flag, "%s: complete before the receive was posted", ctx);
        }
        T_MPI(MPI_Recv(r, (int) len, MPI_BYTE, MPI_ANY_SOURCE, 49, MPI_COMM_WORLD, &st));
        t_check_status(&st, t_rank, 49, (long) len, ctx);
        T_MPI(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        t_check_data(r, len, t_seed(4, i, 9), ctx);
        free(s);
        free(r);
    }
    T_MPI(MPI_Buffer_detach(&bbuf, &bsz));
    free(bbuf);
}

static void test_freed(void)
{
    if (t_rank > 1)
        return;
    int bsz = 0;
    for (int i = 0; i < nsizes; i++)
        bsz += (int) sizes[i] + MPI_BSEND_OVERHEAD;
    void *bbuf = t_malloc((size_t) bsz);
    if (0 == t_rank)
        T_MPI(MPI_Buffer_attach(bbuf, bsz));
    for (int i = 0; i < nsizes; i++) {
        size_t len = sizes[i];
        unsigned char *b[T_MODE_COUNT];
        MPI_Request r[T_MODE_COUNT];
        MPI_Status st;
        char ctx[64];
        if (1 == t_rank) {
            /* ready sends need the receives posted: tell rank 0 */
            for (int m = 0; m < T_MODE_COUNT; m++) {
                b[m] = t_malloc(len);
                T_MPI(MPI_Irecv(b[m], (int) len, MPI_BYTE, 0, 50 + m, MPI_COMM_WORLD, &r[m]));
            }
            T_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_ACK, MPI_COMM_WORLD));
            for (int m = 0; m < T_MODE_COUNT; m++) {
                snprintf(ctx, sizeof(ctx), "freed %s size %zu", t_mode_name((t_mode) m), len);
                t_status_reset(&st);
                T_MPI(MPI_Wait(&r[m], &st));
                t_check_status(&st, 0, 50 + m, (long) len, ctx);
                t_check_data(b[m], len, t_seed(5, i, m), ctx);
                free(b[m]);
            }
            T_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_ACK, MPI_COMM_WORLD));
        } else {
            T_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int m = 0; m < T_MODE_COUNT; m++) {
                b[m] = t_malloc(len);
                t_fill(b[m], len, t_seed(5, i, m));
                T_MPI(t_isend_mode((t_mode) m, b[m], (int) len, MPI_BYTE, 1, 50 + m, MPI_COMM_WORLD,
                                   &r[m]));
                T_MPI(MPI_Request_free(&r[m]));
                T_CHECK(MPI_REQUEST_NULL == r[m], "Request_free left the handle set");
            }
            /* the buffers may go only once the receiver has everything */
            T_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int m = 0; m < T_MODE_COUNT; m++)
                free(b[m]);
        }
    }
    if (0 == t_rank)
        T_MPI(MPI_Buffer_detach(&bbuf, &bsz));
    free(bbuf);
}

static void check_empty(const MPI_Status *st, const char *ctx)
{
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    T_CHECK(MPI_ANY_SOURCE == st->MPI_SOURCE && MPI_ANY_TAG == st->MPI_TAG && 0 == count,
            "%s: status not empty (source %d tag %d count %d)", ctx, st->MPI_SOURCE, st->MPI_TAG,
            count);
}

static void test_nullreqs(void)
{
    MPI_Request r[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st[4];
    int idx = 5, flag = 0, out = 5, ids[4];
    T_MPI(MPI_Waitany(4, r, &idx, &st[0]));
    T_CHECK(MPI_UNDEFINED == idx, "Waitany over null requests: index %d", idx);
    check_empty(&st[0], "Waitany over null requests");
    T_MPI(MPI_Testany(4, r, &idx, &flag, &st[0]));
    T_CHECK(flag && MPI_UNDEFINED == idx, "Testany over null requests: flag %d index %d", flag,
            idx);
    T_MPI(MPI_Waitsome(4, r, &out, ids, st));
    T_CHECK(MPI_UNDEFINED == out, "Waitsome over null requests: outcount %d", out);
    T_MPI(MPI_Testsome(4, r, &out, ids, st));
    T_CHECK(MPI_UNDEFINED == out, "Testsome over null requests: outcount %d", out);
    T_MPI(MPI_Waitall(4, r, st));
    for (int k = 0; k < 4; k++)
        check_empty(&st[k], "Waitall over null requests");
    T_MPI(MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE));
    if (t_rank > 1)
        return;

    /* live requests at positions 1 and 3 */
    int peer = peer_of_01();
    for (int i = 0; i < nsizes; i++) {
        size_t len = sizes[i];
        unsigned char *sb = t_malloc(len), *rb = t_malloc(len);
        char ctx[64];
        snprintf(ctx, sizeof(ctx), "mixed null requests size %zu", len);
        t_fill(sb, len, t_seed(6, i, t_rank));
        r[0] = r[2] = MPI_REQUEST_NULL;
        T_MPI(MPI_Irecv(rb, (int) len, MPI_BYTE, peer, 60, MPI_COMM_WORLD, &r[1]));
        T_MPI(MPI_Isend(sb, (int) len, MPI_BYTE, peer, 60, MPI_COMM_WORLD, &r[3]));
        int done = 0, seen_recv = 0;
        while (done < 2) {
            for (int k = 0; k < 4; k++)
                t_status_reset(&st[k]);
            T_MPI(MPI_Waitsome(4, r, &out, ids, st));
            T_CHECK(out >= 1 && out <= 2, "%s: Waitsome outcount %d", ctx, out);
            for (int k = 0; k < out; k++) {
                T_CHECK(1 == ids[k] || 3 == ids[k], "%s: Waitsome index %d", ctx, ids[k]);
                if (1 == ids[k]) {
                    t_check_status(&st[k], peer, 60, (long) len, ctx);
                    seen_recv = 1;
                }
                T_CHECK(MPI_REQUEST_NULL == r[ids[k]], "%s: completed request not freed", ctx);
            }
            done += out;
        }
        T_CHECK(seen_recv, "%s: receive never reported", ctx);
        t_check_data(rb, len, t_seed(6, i, peer), ctx);
        T_MPI(MPI_Waitsome(4, r, &out, ids, st));
        T_CHECK(MPI_UNDEFINED == out, "%s: Waitsome after all done: %d", ctx, out);

        /* Testany polling until both are found */
        T_MPI(MPI_Irecv(rb, (int) len, MPI_BYTE, peer, 61, MPI_COMM_WORLD, &r[1]));
        T_MPI(MPI_Isend(sb, (int) len, MPI_BYTE, peer, 61, MPI_COMM_WORLD, &r[3]));
        done = 0;
        while (done < 2) {
            MPI_Status s1;
            t_status_reset(&s1);
            T_MPI(MPI_Testany(4, r, &idx, &flag, &s1));
            if (!flag)
                continue;
            T_CHECK(1 == idx || 3 == idx, "%s: Testany index %d", ctx, idx);
            if (1 == idx)
                t_check_status(&s1, peer, 61, (long) len, ctx);
            done++;
        }
        t_check_data(rb, len, t_seed(6, i, peer), ctx);
        free(sb);
        free(rb);
    }
}

#define NCOMMS 2000
static void test_comms(void)
{
    MPI_Comm *c = t_malloc(NCOMMS * sizeof(MPI_Comm));
    int *vals = t_malloc(NCOMMS * sizeof(int));
    MPI_Request *rq = t_malloc(NCOMMS * sizeof(MPI_Request));
    for (int k = 0; k < NCOMMS; k++)
        T_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c[k]));
    if (t_rank <= 1) {
        int peer = peer_of_01();
        /* the receiver posts in reverse order of creation, the sender sends
         * in creation order: every message has the same tag and source, only
         * the communicator tells them apart */
        if (1 == t_rank) {
            for (int k = NCOMMS - 1; k >= 0; k--) {
                vals[k] = -1;
                T_MPI(MPI_Irecv(&vals[k], 1, MPI_INT, peer, 70, c[k], &rq[k]));
            }
            T_MPI(MPI_Waitall(NCOMMS, rq, MPI_STATUSES_IGNORE));
            for (int k = 0; k < NCOMMS; k++)
                T_CHECK(vals[k] == k * 7 + 1, "comms: communicator %d got %d", k, vals[k]);
        } else {
            for (int k = 0; k < NCOMMS; k++) {
                vals[k] = k * 7 + 1;
                T_MPI(MPI_Isend(&vals[k], 1, MPI_INT, peer, 70, c[k], &rq[k]));
            }
            T_MPI(MPI_Waitall(NCOMMS, rq, MPI_STATUSES_IGNORE));
        }
    }
    for (int k = 0; k < NCOMMS; k++)
        T_MPI(MPI_Comm_free(&c[k]));
    free(c);
    free(vals);
    free(rq);
}

static void test_commfree(void)
{
    int peer = peer_of_01();
    for (int i = 0; i < nsizes; i++) {
        size_t len = sizes[i];
        MPI_Comm c;
        T_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c)); /* collective: every rank */
        if (t_rank > 1) {
            T_MPI(MPI_Comm_free(&c));
            continue;
        }
        unsigned char *sb = t_malloc(len), *rb = t_malloc(len);
        MPI_Request r[2];
        MPI_Status st[2];
        char ctx[64];
        snprintf(ctx, sizeof(ctx), "Comm_free with pending requests size %zu", len);
        t_fill(sb, len, t_seed(8, i, t_rank));
        T_MPI(MPI_Irecv(rb, (int) len, MPI_BYTE, peer, 80, c, &r[0]));
        T_MPI(MPI_Isend(sb, (int) len, MPI_BYTE, peer, 80, c, &r[1]));
        T_MPI(MPI_Comm_free(&c));
        T_MPI(MPI_Waitall(2, r, st));
        t_check_status(&st[0], peer, 80, (long) len, ctx);
        t_check_data(rb, len, t_seed(8, i, peer), ctx);
        free(sb);
        free(rb);
    }
}

static void test_anysrc_big(void)
{
    size_t len = 3 * lim.max_send_max + 5;
    int per = 4;
    if (0 == t_rank) {
        int n = (t_size - 1) * per;
        unsigned char **b = t_malloc((size_t) n * sizeof(*b));
        MPI_Request *r = t_malloc((size_t) n * sizeof(*r));
        MPI_Status *st = t_malloc((size_t) n * sizeof(*st));
        uint32_t *next = calloc((size_t) t_size, sizeof(uint32_t));
        for (int k = 0; k < n; k++) {
            b[k] = t_malloc(len);
            T_MPI(MPI_Irecv(b[k], (int) len, MPI_BYTE, MPI_ANY_SOURCE, 90, MPI_COMM_WORLD, &r[k]));
        }
        T_MPI(MPI_Barrier(MPI_COMM_WORLD));
        T_MPI(MPI_Waitall(n, r, st));
        for (int k = 0; k < n; k++) {
            uint32_t seq = t_msg_check(b[k], &st[k], 0, "anysrc_big");
            /* per sender, order of posting = order of sending */
            T_CHECK(seq == next[st[k].MPI_SOURCE], "anysrc_big: from %d got seq %u, want %u",
                    st[k].MPI_SOURCE, seq, next[st[k].MPI_SOURCE]);
            next[st[k].MPI_SOURCE]++;
            free(b[k]);
        }
        for (int s = 1; s < t_size; s++)
            T_CHECK(next[s] == (uint32_t) per, "anysrc_big: %u messages from %d", next[s], s);
        free(b);
        free(r);
        free(st);
        free(next);
    } else {
        unsigned char **b = t_malloc((size_t) per * sizeof(*b));
        MPI_Request *r = t_malloc((size_t) per * sizeof(*r));
        t_snap before, after;
        T_MPI(MPI_Barrier(MPI_COMM_WORLD));
        t_snap_take(&before);
        for (int k = 0; k < per; k++) {
            b[k] = t_malloc(len);
            t_msg_fill(b[k], len, t_rank, 90, (uint32_t) k);
            T_MPI(MPI_Isend(b[k], (int) len, MPI_BYTE, 0, 90, MPI_COMM_WORLD, &r[k]));
        }
        T_MPI(MPI_Waitall(per, r, MPI_STATUSES_IGNORE));
        t_snap_take(&after);
        t_expect_proto(&before, &after, T_P_RNDV, per, (long long) (per * len), 0,
                       "anysrc_big sends");
        for (int k = 0; k < per; k++)
            free(b[k]);
        free(b);
        free(r);
    }
}

static void test_packed(void)
{
    if (t_rank > 1)
        return;
    int peer = peer_of_01();
    for (int i = 0; i < nsizes; i++) {
        size_t len = sizes[i];
        t_typed t;
        char ctx[64];
        int psz = 0, pos = 0;
        MPI_Status st;
        t_typed_create(&t, T_DT_VECTOR, len);
        T_MPI(MPI_Pack_size(t.count, t.type, MPI_COMM_WORLD, &psz));
        unsigned char *p = t_malloc((size_t) psz);
        snprintf(ctx, sizeof(ctx), "MPI_PACKED size %zu", len);
        if (0 == t_rank) {
            /* packed -> typed */
            t_typed_fill(&t, t_seed(10, i, 0), 0x11);
            T_MPI(MPI_Pack(t.buf, t.count, t.type, p, psz, &pos, MPI_COMM_WORLD));
            T_MPI(MPI_Send(p, pos, MPI_PACKED, peer, 100, MPI_COMM_WORLD));
            /* typed -> packed, checked back here */
            T_MPI(MPI_Recv(p, psz, MPI_PACKED, peer, 101, MPI_COMM_WORLD, &st));
            int got = 0;
            T_MPI(MPI_Get_count(&st, MPI_PACKED, &got));
            t_typed_guard(&t, 0x5A);
            pos = 0;
            T_MPI(MPI_Unpack(p, got, &pos, t.buf, t.count, t.type, MPI_COMM_WORLD));
            t_typed_check(&t, len, t_seed(10, i, 1), 0x5A, ctx);
        } else {
            t_typed_guard(&t, 0x5A);
            t_status_reset(&st);
            T_MPI(MPI_Recv(t.buf, t.count, t.type, peer, 100, MPI_COMM_WORLD, &st));
            T_CHECK(MPI_SUCCESS == st.MPI_ERROR, "%s: status error", ctx);
            t_typed_check(&t, len, t_seed(10, i, 0), 0x5A, ctx);
            t_typed_fill(&t, t_seed(10, i, 1), 0x22);
            T_MPI(MPI_Send(t.buf, t.count, t.type, peer, 101, MPI_COMM_WORLD));
        }
        free(p);
        t_typed_free(&t);
    }
}

static void test_zerotype(void)
{
    if (t_rank > 1)
        return;
    int peer = peer_of_01();
    MPI_Datatype z;
    T_MPI(MPI_Type_contiguous(0, MPI_INT, &z));
    T_MPI(MPI_Type_commit(&z));
    int bsz = 4 * MPI_BSEND_OVERHEAD;
    void *bbuf = t_malloc((size_t) bsz);
    T_MPI(MPI_Buffer_attach(bbuf, bsz));
    for (int m = 0; m < T_MODE_COUNT; m++) {
        MPI_Status st;
        MPI_Request r;
        char ctx[64];
        snprintf(ctx, sizeof(ctx), "zero-size %s", t_mode_name((t_mode) m));
        if (0 == t_rank) {
            T_MPI(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            T_MPI(t_send_mode((t_mode) m, NULL, 5, z, peer, 110 + m, MPI_COMM_WORLD));
            T_MPI(t_send_mode((t_mode) m, NULL, 0, MPI_INT, peer, 120 + m, MPI_COMM_WORLD));
        } else {
            T_MPI(MPI_Irecv(NULL, 3, z, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
            T_MPI(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD));
            t_status_reset(&st);
            T_MPI(MPI_Wait(&r, &st));
            t_check_status(&st, peer, 110 + m, 0, ctx);
            int count = -1;
            T_MPI(MPI_Get_count(&st, z, &count));
            T_CHECK(0 == count, "%s: Get_count of a zero-size type %d, want 0", ctx, count);
            t_status_reset(&st);
            T_MPI(MPI_Recv(NULL, 0, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            t_check_status(&st, peer, 120 + m, 0, ctx);
        }
    }
    T_MPI(MPI_Buffer_detach(&bbuf, &bsz));
    free(bbuf);
    MPI_Type_free(&z);
}

int main(int argc, char **argv)
{
    struct {
        const char *name;
        void (*fn)(void);
    } steps[] = {
        {"tag_ub", test_tag_ub}, {"bottom", test_bottom},     {"underflow", test_underflow},
        {"self", test_self},     {"freed", test_freed},       {"nullreqs", test_nullreqs},
        {"comms", test_comms},   {"commfree", test_commfree}, {"anysrc_big", test_anysrc_big},
        {"packed", test_packed}, {"zerotype", test_zerotype}};
    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    T_CHECK(t_size >= 2, "needs 2 or more ranks");
    t_limits_get(argc, argv, &lim);
    pick_sizes();
    for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
        steps[s].fn();
        T_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (0 == t_rank)
            t_log("%s done", steps[s].name);
    }
    return t_finalize();
}

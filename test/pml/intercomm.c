/*
 * intercomm.c - point-to-point on intercommunicators (two groups, even and
 * odd ranks of MPI_COMM_WORLD, joined with MPI_Intercomm_create):
 *  - every rank sends to every rank of the remote group at sizes on both
 *    sides of the eager and rendezvous limits, received with a specific
 *    source and with MPI_ANY_SOURCE; content and statuses checked (the
 *    status names the remote group's rank);
 *  - MPI_Issend across, completing only after the match;
 *  - MPI_Iprobe/MPI_Mprobe/MPI_Mrecv on the intercommunicator;
 *  - MPI_Intercomm_merge, then an allreduce and a ring over the merged
 *    communicator.
 * Needs at least 2 ranks. Arguments: --btl=<a,b> (ignored).
 */
#include "tpml.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const size_t sizes[] = {0, 1, 255, 4096, 12000, 70000, 1u << 20};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* Pattern seed of a message from (group color, rank in group) at size i. */
static uint32_t seed_of(int color, int grank, size_t i)
{
    return t_seed((uint32_t) color, (uint32_t) grank, (uint32_t) i);
}

static void all_to_remote(MPI_Comm inter, int color, int grank, int rsize, bool any)
{
    for (size_t i = 0; i < NSIZES; ++i) {
        size_t n = sizes[i];
        int tag = 100 + (int) i;
        unsigned char *sb = t_malloc(n + 1);
        unsigned char **rb = t_malloc(sizeof(*rb) * (size_t) rsize);
        MPI_Request *rq = t_malloc(sizeof(*rq) * 2 * (size_t) rsize);
        MPI_Status *st = t_malloc(sizeof(*st) * 2 * (size_t) rsize);
        char ctx[128];

        t_fill(sb, n, seed_of(color, grank, i));
        for (int r = 0; r < rsize; ++r) {
            rb[r] = t_malloc(n + 1);
            T_MPI(
                MPI_Irecv(rb[r], (int) n, MPI_BYTE, any ? MPI_ANY_SOURCE : r, tag, inter, &rq[r]));
        }
        for (int r = 0; r < rsize; ++r) {
            T_MPI(MPI_Isend(sb, (int) n, MPI_BYTE, r, tag, inter, &rq[rsize + r]));
        }
        T_MPI(MPI_Waitall(2 * rsize, rq, st));
        for (int r = 0; r < rsize; ++r) {
            int src = st[r].MPI_SOURCE;
            snprintf(ctx, sizeof(ctx), "intercomm %s size %zu from remote %d",
                     any ? "any-source" : "specific", n, src);
            if (!any && src != r) {
                T_FAIL("%s: status source %d, expected %d", ctx, src, r);
            }
            if (src < 0 || src >= rsize) {
                T_FAIL("%s: status source out of the remote group", ctx);
            }
            t_check_status(&st[r], src, tag, (long) n, ctx);
            t_check_data(rb[r], n, seed_of(!color, src, i), ctx);
            free(rb[r]);
        }
        free(sb);
        free(rb);
        free(rq);
        free(st);
    }
}

/* Synchronous sends across: every rank of group 0 sends to remote rank 0,
 * which receives only after a barrier the senders reach after a test; the
 * send cannot be complete at that test (no receive is posted yet). */
static void issend_across(MPI_Comm inter, int color, int grank)
{
    int token = 7 + grank, flag = 1;
    MPI_Request rq;

    if (0 == color) {
        T_MPI(MPI_Issend(&token, 1, MPI_INT, 0, 5, inter, &rq));
        T_MPI(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
        if (flag) {
            T_FAIL("intercomm Issend complete before the receive was posted");
        }
        T_MPI(MPI_Barrier(MPI_COMM_WORLD));
        T_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        return;
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (0 == grank) {
        int lsize, got;
        MPI_Status st;
        MPI_Comm_remote_size(inter, &lsize);
        for (int r = 0; r < lsize; ++r) {
            T_MPI(MPI_Recv(&got, 1, MPI_INT, r, 5, inter, &st));
            t_check_status(&st, r, 5, (long) sizeof(int), "intercomm issend");
            if (7 + r != got) {
                T_FAIL("intercomm issend from %d: got %d", r, got);
            }
        }
    }
}

static void probe_across(MPI_Comm inter, int color, int grank)
{
    if (0 == color && 0 == grank) {
        double v[3] = {1.5, 2.5, 3.5};
        T_MPI(MPI_Send(v, 3, MPI_DOUBLE, 0, 9, inter));
    } else if (1 == color && 0 == grank) {
        MPI_Message msg;
        MPI_Status st;
        double v[3];
        int flag = 0, count;
        while (!flag) {
            T_MPI(MPI_Iprobe(MPI_ANY_SOURCE, 9, inter, &flag, &st));
        }
        t_check_status(&st, 0, 9, (long) sizeof(v), "intercomm iprobe");
        T_MPI(MPI_Mprobe(0, 9, inter, &msg, &st));
        T_MPI(MPI_Get_count(&st, MPI_DOUBLE, &count));
        if (3 != count) {
            T_FAIL("intercomm mprobe: count %d", count);
        }
        T_MPI(MPI_Mrecv(v, 3, MPI_DOUBLE, &msg, &st));
        if (1.5 != v[0] || 2.5 != v[1] || 3.5 != v[2]) {
            T_FAIL("intercomm mrecv: wrong data");
        }
    }
}

static void merged_checks(MPI_Comm inter, int color)
{
    MPI_Comm merged;
    int mrank, msize;
    long v, sum = 0;

    T_MPI(MPI_Intercomm_merge(inter, color, &merged));
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    if (msize != t_size) {
        T_FAIL("merged size %d, expected %d", msize, t_size);
    }
    v = mrank + 1;
    T_MPI(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, merged));
    if (sum != (long) msize * (msize + 1) / 2) {
        T_FAIL("merged allreduce: %ld", sum);
    }
    {
        int right = (mrank + 1) % msize, left = (mrank + msize - 1) % msize;
        unsigned char *s = t_malloc(100000), *r = t_malloc(100000);
        MPI_Status st;
        t_fill(s, 100000, t_seed(77, (uint32_t) mrank, 0));
        T_MPI(
            MPI_Sendrecv(s, 100000, MPI_BYTE, right, 3, r, 100000, MPI_BYTE, left, 3, merged, &st));
        t_check_status(&st, left, 3, 100000, "merged ring");
        t_check_data(r, 100000, t_seed(77, (uint32_t) left, 0), "merged ring");
        free(s);
        free(r);
    }
    T_MPI(MPI_Comm_free(&merged));
}

int main(int argc, char **argv)
{
    MPI_Comm half, inter;
    int color, grank, rsize;

    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    if (t_size < 2) {
        T_FAIL("needs at least 2 ranks");
    }
    color = t_rank % 2;
    T_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, t_rank, &half));
    /* leaders: world rank 0 for the evens, world rank 1 for the odds */
    T_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? 0 : 1, 11, &inter));
    MPI_Comm_rank(inter, &grank);
    MPI_Comm_remote_size(inter, &rsize);

    all_to_remote(inter, color, grank, rsize, false);
    all_to_remote(inter, color, grank, rsize, true);
    issend_across(inter, color, grank);
    probe_across(inter, color, grank);
    merged_checks(inter, color);

    T_MPI(MPI_Comm_free(&inter));
    T_MPI(MPI_Comm_free(&half));
    return t_finalize();
}

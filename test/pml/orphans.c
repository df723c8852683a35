/*
 * orphans.c - messages that reach a process before it has created the
 * communicator they belong to are held, not lost, and matched in order
 * once the communicator exists.
 *
 * Open MPI 4.1 adds a communicator to the PML before the barrier that ends
 * its creation, so a correct program rarely makes such messages; the list
 * runs this test with the testing aid pml_ob1x_orphan_hold_ms, under which
 * each new communicator treats what reaches it during its first
 * milliseconds as sent to a communicator that does not exist yet.
 *
 * Each round creates a communicator (MPI_Comm_dup, MPI_Comm_idup or
 * MPI_Comm_split, in turn); rank 0 sends on it at once: a small eager
 * message, an eager one near the eager limit and a rendezvous one, all
 * with one tag so that their order is checked, then one with another tag
 * that the receivers take first. On even rounds the receivers post their
 * receives at once (matched when the held messages are replayed), on odd
 * rounds only after the hold is over (replayed into the unexpected queue).
 * Every receiver checks contents, statuses and order; the counter
 * pml_ob1x_orphan_messages must show that messages really were held.
 * Options: --rounds=N (default 60), --late-us=N (odd rounds' delay, default
 * 20000), --no-orphan-check (count not required, e.g. without the aid).
 */
#include "tpml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG 11
#define TAG_FIRST 12
#define NMSG 3

static size_t msg_len[NMSG];
static int late_us = 20000;

static void make_comm(int round, MPI_Comm *c)
{
    MPI_Request r;

    switch (round % 3) {
        case 0:
            T_MPI(MPI_Comm_dup(MPI_COMM_WORLD, c));
            break;
        case 1:
            T_MPI(MPI_Comm_idup(MPI_COMM_WORLD, c, &r));
            T_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
            break;
        default:
            T_MPI(MPI_Comm_split(MPI_COMM_WORLD, 1, t_size - t_rank, c));
            break;
    }
    T_MPI(MPI_Comm_set_errhandler(*c, MPI_ERRORS_RETURN));
}

static void round_once(int round, unsigned char *buf)
{
    MPI_Comm c;
    int me, root;
    char ctx[96];

    make_comm(round, &c);
    MPI_Comm_rank(c, &me);
    /* rank 0 of MPI_COMM_WORLD sends; its rank in c depends on the split */
    root = (2 == round % 3) ? t_size - 1 : 0;
    if (0 == t_rank) {
        /* Non-blocking: the receivers take the last message first. */
        unsigned char *out[NMSG + 1];
        MPI_Request req[NMSG + 1];
        for (int d = 0; d < t_size; ++d) {
            if (d == root) {
                continue;
            }
            for (int m = 0; m <= NMSG; ++m) {
                size_t len = msg_len[m < NMSG ? m : 0];
                out[m] = t_malloc(len);
                if (m < NMSG) {
                    t_msg_fill(out[m], len, me, TAG, (uint32_t) (round * NMSG + m));
                } else {
                    t_msg_fill(out[m], len, me, TAG_FIRST, (uint32_t) round);
                }
                T_MPI(MPI_Isend(out[m], (int) len, MPI_BYTE, d, m < NMSG ? TAG : TAG_FIRST, c,
                                &req[m]));
            }
            T_MPI(MPI_Waitall(NMSG + 1, req, MPI_STATUSES_IGNORE));
            for (int m = 0; m <= NMSG; ++m) {
                free(out[m]);
            }
        }
    } else {
        MPI_Status st;
        if (round % 2) {
            usleep((useconds_t) late_us); /* the hold ends first: unexpected */
        }
        snprintf(ctx, sizeof(ctx), "round %d, other tag", round);
        t_status_reset(&st);
        T_MPI(MPI_Recv(buf, (int) msg_len[0], MPI_BYTE, root, TAG_FIRST, c, &st));
        t_check_status(&st, root, TAG_FIRST, (long) msg_len[0], ctx);
        T_CHECK(t_msg_check(buf, &st, 0, ctx) == (uint32_t) round, "%s: wrong message", ctx);
        for (int m = 0; m < NMSG; ++m) {
            uint32_t seq;
            snprintf(ctx, sizeof(ctx), "round %d message %d (%zu B)", round, m, msg_len[m]);
            t_status_reset(&st);
            memset(buf, 0, msg_len[m]);
            T_MPI(MPI_Recv(buf, (int) msg_len[m], MPI_BYTE, MPI_ANY_SOURCE, TAG, c, &st));
            t_check_status(&st, root, TAG, (long) msg_len[m], ctx);
            seq = t_msg_check(buf, &st, 0, ctx);
            T_CHECK(seq == (uint32_t) (round * NMSG + m),
                    "%s: got sequence %u, messages out of order", ctx, seq);
        }
    }
    T_MPI(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
    const char *v;
    int rounds = 60;
    unsigned long long orphans = 0, total = 0;
    unsigned char *buf;
    t_snap a, z;
    t_limits lim;

    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    if (NULL != (v = t_arg_value(argc, argv, "--rounds"))) {
        rounds = atoi(v);
    }
    if (NULL != (v = t_arg_value(argc, argv, "--late-us"))) {
        late_us = atoi(v);
    }
    t_limits_get(argc, argv, &lim);
    msg_len[0] = 64;
    msg_len[1] = lim.eager_min > 64 ? lim.eager_min - 64 : 32;
    msg_len[2] = 4 * lim.eager_max + 100;
    buf = t_malloc(msg_len[2]);

    t_snap_take(&a);
    for (int r = 0; r < rounds; ++r) {
        round_once(r, buf);
    }
    t_snap_take(&z);
    orphans = t_snap_delta(&a, &z, T_PV_ORPHAN);
    T_MPI(MPI_Reduce(&orphans, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (0 == t_rank) {
        t_log("%d communicators, %llu messages held for a communicator not yet created", rounds,
              total);
        T_CHECK(!t_pvars || total > 0 || t_has_arg(argc, argv, "--no-orphan-check"),
                "no message arrived before its communicator: the orphan path was not exercised");
    }
    free(buf);
    return t_finalize();
}

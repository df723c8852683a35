/*
 * persistent.c - persistent requests restarted many times:
 * MPI_Send_init / Ssend_init / Bsend_init / Rsend_init against Recv_init,
 * started with MPI_Start and MPI_Startall, at eager, boundary and
 * rendezvous sizes, contiguous and vector datatypes; the buffer contents
 * change between starts and every delivery is verified.
 *
 * Counters (sender): per round the message counters move by 4 (one send
 * per mode), bytes by 4 * size, synchronous_messages by 1.
 * Also: MPI_Test/MPI_Wait on an inactive persistent request return at once
 * with an empty status.
 *
 * Arguments: --long (more rounds).
 */
#include "tpml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_TOKEN 1
#define GUARD 0x77
static t_limits lim;
static int rounds = 60;

static void run_size(size_t len, t_dt_kind kind, int tagbase)
{
    t_typed buf[4];
    MPI_Request req[4];
    MPI_Status st[4];
    char ctx[128];
    for (int m = 0; m < 4; m++)
        t_typed_create(&buf[m], kind, len);

    if (0 == t_rank) {
        T_MPI(MPI_Send_init(buf[0].buf, buf[0].count, buf[0].type, 1, tagbase + 0, MPI_COMM_WORLD,
                            &req[0]));
        T_MPI(MPI_Ssend_init(buf[1].buf, buf[1].count, buf[1].type, 1, tagbase + 1, MPI_COMM_WORLD,
                             &req[1]));
        T_MPI(MPI_Bsend_init(buf[2].buf, buf[2].count, buf[2].type, 1, tagbase + 2, MPI_COMM_WORLD,
                             &req[2]));
        T_MPI(MPI_Rsend_init(buf[3].buf, buf[3].count, buf[3].type, 1, tagbase + 3, MPI_COMM_WORLD,
                             &req[3]));
    } else if (1 == t_rank) {
        for (int m = 0; m < 4; m++)
            T_MPI(MPI_Recv_init(buf[m].buf, buf[m].count, buf[m].type, 0, tagbase + m,
                                MPI_COMM_WORLD, &req[m]));
    }
    if (t_rank < 2) {
        /* inactive persistent requests complete at once with an empty status */
        int flag = 0;
        T_MPI(MPI_Test(&req[0], &flag, &st[0]));
        T_CHECK(flag && MPI_ANY_SOURCE == st[0].MPI_SOURCE && MPI_ANY_TAG == st[0].MPI_TAG,
                "MPI_Test on an inactive persistent request: flag %d source %d tag %d", flag,
                st[0].MPI_SOURCE, st[0].MPI_TAG);
        T_MPI(MPI_Wait(&req[1], &st[1]));
        T_CHECK(MPI_REQUEST_NULL != req[1], "MPI_Wait freed an inactive persistent request");
    }

    for (int k = 0; k < rounds; k++) {
        snprintf(ctx, sizeof(ctx), "size %zu %s round %d", len, t_dt_name(kind), k);
        if (0 == t_rank) {
            t_snap a, b;
            for (int m = 0; m < 4; m++)
                t_typed_fill(&buf[m], t_seed((uint32_t) k, (uint32_t) (tagbase + m), 9), 0);
            T_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_TOKEN, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            t_snap_take(&a);
            if (k % 2) {
                T_MPI(MPI_Startall(4, req));
            } else {
                for (int m = 3; m >= 0; m--)
                    T_MPI(MPI_Start(&req[m]));
            }
            T_MPI(MPI_Waitall(4, req, st));
            t_snap_take(&b);
            if (!t_pvars && len + 64 > lim.eager_min) {
                /* stock ob1 of Open MPI 4.1 resends stale data when a
                 * Bsend_init request above the eager limit is restarted:
                 * under the stock PML only, use a fresh request per round */
                T_MPI(MPI_Request_free(&req[2]));
                T_MPI(MPI_Bsend_init(buf[2].buf, buf[2].count, buf[2].type, 1, tagbase + 2,
                                     MPI_COMM_WORLD, &req[2]));
            }
            for (int m = 0; m < 4; m++)
                T_CHECK(MPI_REQUEST_NULL != req[m], "%s: Waitall freed persistent send %d", ctx, m);
            t_expect_proto(&a, &b, T_P_ANY, 4, 4 * (long long) len, 1, ctx);
        } else if (1 == t_rank) {
            for (int m = 0; m < 4; m++)
                t_typed_guard(&buf[m], GUARD);
            for (int m = 0; m < 4; m++)
                t_status_reset(&st[m]);
            if (k % 3) {
                T_MPI(MPI_Startall(4, req));
            } else {
                for (int m = 0; m < 4; m++)
                    T_MPI(MPI_Start(&req[m]));
            }
            /* the ready-mode send needs the receive posted: tell rank 0 */
            T_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_TOKEN, MPI_COMM_WORLD));
            if (k % 2) {
                T_MPI(MPI_Waitall(4, req, st));
            } else {
                for (int m = 0; m < 4; m++) {
                    int idx;
                    MPI_Status s1;
                    t_status_reset(&s1);
                    T_MPI(MPI_Waitany(4, req, &idx, &s1));
                    T_CHECK(idx >= 0 && idx < 4, "%s: Waitany index %d", ctx, idx);
                    st[idx] = s1;
                }
            }
            /* check the buffered one (index 2) last */
            for (int mi = 0; mi < 4; mi++) {
                int m = (int[]){0, 1, 3, 2}[mi];
                char c2[160];
                snprintf(
                    c2, sizeof(c2), "%s mode %s", ctx,
                    t_mode_name((t_mode[]){T_MODE_STD, T_MODE_SYNC, T_MODE_BUF, T_MODE_READY}[m]));
                T_CHECK(MPI_REQUEST_NULL != req[m], "%s: persistent receive freed", c2);
                t_check_status(&st[m], 0, tagbase + m, (long) len, c2);
                t_typed_check(&buf[m], len, t_seed((uint32_t) k, (uint32_t) (tagbase + m), 9),
                              GUARD, c2);
            }
        }
    }
    if (t_rank < 2)
        for (int m = 0; m < 4; m++)
            T_MPI(MPI_Request_free(&req[m]));
    for (int m = 0; m < 4; m++)
        t_typed_free(&buf[m]);
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    size_t sizes[8];
    int n = 0, tag = 100, bsize;
    void *bbuf;
    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    T_CHECK(t_size >= 2, "needs at least 2 ranks");
    t_limits_get(argc, argv, &lim);
    if (t_has_arg(argc, argv, "--long"))
        rounds = 500;
    sizes[n++] = 0;
    sizes[n++] = 8;
    sizes[n++] = lim.sendi_max + 1;
    sizes[n++] = lim.eager_min - 64;
    sizes[n++] = lim.eager_max + 1;
    sizes[n++] = lim.first_frag_min + 3 * lim.max_send_max + 1;
    sizes[n++] = 1u << 20;
    if (0 == t_rank)
        t_limits_print(&lim);
    bsize =
        (int) (4 * ((1u << 20) + lim.first_frag_min + 3 * lim.max_send_max + MPI_BSEND_OVERHEAD));
    bbuf = t_malloc((size_t) bsize);
    T_MPI(MPI_Buffer_attach(bbuf, bsize));

    for (int i = 0; i < n; i++) {
        run_size(sizes[i], T_DT_CONTIG, tag);
        tag += 4;
        if (i % 2 == 1 || i == n - 1) {
            run_size(sizes[i], T_DT_VECTOR, tag);
            tag += 4;
        }
    }
    T_MPI(MPI_Buffer_detach(&bbuf, &bsize));
    free(bbuf);
    return t_finalize();
}

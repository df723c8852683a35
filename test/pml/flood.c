/*
 * flood.c - unexpected-message flood: ranks 1..n-1 send thousands of
 * eager-sized messages to rank 0 before it posts any receive (rounds of
 * Isends separated by barriers, rank 0 only progressing in between); then
 * rank 0 receives everything, source by source interleaved, and verifies
 * order and content. No hang allowed (messages may be switched to
 * rendezvous by flow control, so senders use Isend and wait at the end).
 *
 * Counters:
 *  - rank 0: pml_ob1x_unexpected_highwater > 0 after the flood and
 *    >= pml_ob1x_unexpected_length; unexpected_length back to 0 at the end;
 *  - senders: the message counters moved by exactly the messages sent;
 *  - when the cvar pml_ob1x_unexpected_limit is set below the flood volume
 *    (e.g. --mca pml_ob1x_unexpected_limit 65536), the senders' sum of
 *    pml_ob1x_flow_control_rndv must have moved.
 *
 * Arguments: --long (more messages), --no-flow-check (report only).
 */
#include "tpml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG 21
static t_limits lim;
static int rounds = 4, per_round = 1000;

static size_t msg_len(int src, int i)
{
    uint32_t h = t_seed((uint32_t) src, (uint32_t) i, 5) % 100;
    size_t maxeager = lim.eager_min - 64;
    if (h < 60)
        return T_MSG_HDR + h;
    if (h < 90)
        return T_MSG_HDR + (h * 97) % (maxeager - T_MSG_HDR);
    return maxeager;
}

static void spin(double secs)
{
    double t0 = t_now();
    int flag;
    while (t_now() - t0 < secs)
        T_MPI(MPI_Iprobe(MPI_ANY_SOURCE, TAG + 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    int total;
    unsigned long long limit = 0, flow = 0, flow_sum = 0;
    long long volume = 0, volume_all = 0;
    int have_limit;
    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    T_CHECK(t_size >= 2, "needs at least 2 ranks");
    t_limits_get(argc, argv, &lim);
    if (t_has_arg(argc, argv, "--long"))
        per_round = 4000;
    total = rounds * per_round;
    have_limit = t_cvar_ull("pml_ob1x_unexpected_limit", &limit);
    if (0 == t_rank) {
        t_limits_print(&lim);
        t_log("%d messages per sender; pml_ob1x_unexpected_limit %s%llu", total,
              have_limit ? "" : "(absent) ", limit);
    }

    if (0 != t_rank) {
        size_t off = 0, *offs = t_malloc(sizeof(size_t) * (size_t) total);
        unsigned char *data;
        MPI_Request *r = t_malloc(sizeof(MPI_Request) * (size_t) total);
        t_snap a, b;
        int barrier_msgs = 0;
        for (int i = 0; i < total; i++) {
            offs[i] = off;
            off += msg_len(t_rank, i);
        }
        data = t_malloc(off);
        for (int i = 0; i < total; i++) {
            t_msg_fill(data + offs[i], msg_len(t_rank, i), t_rank, TAG, (uint32_t) i);
            volume += (long long) msg_len(t_rank, i);
        }
        /* the barriers below send zero-byte messages through the PML too:
         * count what the same number of barriers sends, beforehand */
        t_snap_take(&a);
        for (int k = 0; k < 2 * rounds + 1; k++)
            T_MPI(MPI_Barrier(MPI_COMM_WORLD));
        t_snap_take(&b);
        for (int i = T_PV_IMM_MSG; i <= T_PV_BUFPIPE_MSG; i += 2)
            barrier_msgs += (int) t_snap_delta(&a, &b, (t_pv) i);
        t_snap_take(&a);
        for (int k = 0; k < rounds; k++) {
            for (int i = k * per_round; i < (k + 1) * per_round; i++)
                T_MPI(MPI_Isend(data + offs[i], (int) msg_len(t_rank, i), MPI_BYTE, 0, TAG,
                                MPI_COMM_WORLD, &r[i]));
            T_MPI(MPI_Barrier(MPI_COMM_WORLD));
            T_MPI(MPI_Barrier(MPI_COMM_WORLD));
        }
        T_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* rank 0 starts receiving */
        T_MPI(MPI_Waitall(total, r, MPI_STATUSES_IGNORE));
        t_snap_take(&b);
        /* send nothing more until rank 0 has checked its unexpected queue */
        T_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG + 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        t_expect_proto(&a, &b, T_P_ANY, total + barrier_msgs, volume, 0,
                       "flood senders (+ zero-byte barrier messages)");
        flow = t_snap_delta(&a, &b, T_PV_FLOW_RNDV);
        free(data);
        free(offs);
        free(r);
    } else {
        unsigned char *b = t_malloc(lim.eager_min);
        uint32_t *next = calloc((size_t) t_size, sizeof(uint32_t));
        unsigned long long len, high;
        for (int k = 0; k < 2 * rounds + 1; k++)
            T_MPI(MPI_Barrier(MPI_COMM_WORLD));
        for (int k = 0; k < rounds; k++) {
            T_MPI(MPI_Barrier(MPI_COMM_WORLD));
            spin(0.05); /* take the round in as unexpected messages */
            T_MPI(MPI_Barrier(MPI_COMM_WORLD));
        }
        spin(0.1);
        len = t_pv_read(T_PV_UNEXP_LEN);
        high = t_pv_read(T_PV_UNEXP_HIGH);
        t_log("after the flood: pml_ob1x_unexpected_length %llu, highwater %llu", len, high);
        if (t_pvars) {
            T_CHECK(high > 0, "pml_ob1x_unexpected_highwater is 0 after the flood");
            T_CHECK(high >= len, "unexpected highwater %llu < length %llu", high, len);
        }
        T_MPI(MPI_Barrier(MPI_COMM_WORLD));
        for (int i = 0; i < total * (t_size - 1); i++) {
            int s = 1 + i % (t_size - 1);
            MPI_Status st;
            char ctx[80];
            uint32_t seq;
            snprintf(ctx, sizeof(ctx), "flood message %u from %d", next[s], s);
            t_status_reset(&st);
            T_MPI(MPI_Recv(b, (int) lim.eager_min, MPI_BYTE, s, TAG, MPI_COMM_WORLD, &st));
            t_check_status(&st, s, TAG, (long) msg_len(s, (int) next[s]), ctx);
            seq = t_msg_check(b, &st, next[s], ctx);
            T_CHECK(seq == next[s], "%s: got seq %u", ctx, seq);
            next[s]++;
        }
        if (t_pvars) {
            len = t_pv_read(T_PV_UNEXP_LEN);
            T_CHECK(0 == len, "pml_ob1x_unexpected_length %llu after receiving everything", len);
        }
        for (int p = 1; p < t_size; p++)
            T_MPI(MPI_Send(NULL, 0, MPI_BYTE, p, TAG + 2, MPI_COMM_WORLD));
        free(b);
        free(next);
    }
    T_MPI(MPI_Reduce(&flow, &flow_sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    T_MPI(MPI_Reduce(&volume, &volume_all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (0 == t_rank) {
        t_log("flood volume %lld bytes; pml_ob1x_flow_control_rndv (senders) %llu", volume_all,
              flow_sum);
        if (t_pvars && have_limit && limit > 0 && (unsigned long long) volume_all > 2 * limit &&
            !t_has_arg(argc, argv, "--no-flow-check"))
            T_CHECK(flow_sum > 0,
                    "pml_ob1x_unexpected_limit %llu < flood volume %lld but "
                    "pml_ob1x_flow_control_rndv did not move",
                    limit, volume_all);
    }
    return t_finalize();
}

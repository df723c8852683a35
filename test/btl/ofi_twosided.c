/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * ofi_twosided.c - btl/ofi's two-sided path proven by its counters: rank 0
 * and rank 1 ping-pong small messages (they fit every provider's inject
 * size with the PML's header: they must leave by fi_inject), messages of
 * 8 KiB (above every inject size here, shm's 4 KiB the largest, and below
 * the eager limit: fi_sendmsg from a fragment) and 1 MiB (fragments or
 * RDMA), contents checked each way. Then rank 0 checks, summed over the
 * ranks, that btl_ofi_inject_ops moved by at least the small messages,
 * btl_ofi_send_ops less those by at least the 8 KiB ones, and that every
 * fragment sent was delivered (recv_ops: every message, and send_ops up
 * to the few control messages that a barrier does not wait for).
 *
 * Arguments: rounds=N (default 200).
 */
#include "btl_util.h"

#define PROG "btl/ofi_twosided"
#define SMALL 8
#define MID 8192
#define BIG (1 << 20)

static void local_counters(unsigned long long out[3])
{
    out[0] = bu_named_counter("btl_ofi_send_ops");
    out[1] = bu_named_counter("btl_ofi_inject_ops");
    out[2] = bu_named_counter("btl_ofi_recv_ops");
}

/* rounds ping-pongs of size bytes between ranks 0 and 1, checked. */
static void pingpong(unsigned char *buf, size_t size, int rounds)
{
    int peer = 1 - bu_rank;

    for (int r = 0; r < rounds && bu_rank < 2; ++r) {
        int seed = r * 2 + (int) size;
        if (0 == bu_rank) {
            bu_fill(buf, size, seed);
            MPI_Send(buf, (int) size, MPI_BYTE, peer, r, MPI_COMM_WORLD);
            MPI_Recv(buf, (int) size, MPI_BYTE, peer, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            BU_CHECK(bu_verify(buf, size, seed + 1) < 0, "reply %d of %zu bytes wrong", r, size);
        } else {
            MPI_Recv(buf, (int) size, MPI_BYTE, peer, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            BU_CHECK(bu_verify(buf, size, seed) < 0, "message %d of %zu bytes wrong", r, size);
            bu_fill(buf, size, seed + 1);
            MPI_Send(buf, (int) size, MPI_BYTE, peer, r, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv)
{
    const char *arg;
    int rounds;
    unsigned char *buf;
    unsigned long long before[3], after[3], t[3], sends, injects, recvs;

    bu_init(&argc, &argv);
    arg = bu_arg(argc, argv, "rounds");
    rounds = NULL != arg ? atoi(arg) : 200;
    buf = malloc(BIG);
    BU_CHECK(NULL != buf && bu_size >= 2, "needs 2 ranks and memory");
    /* the first reads open the counters; read again after a barrier, and
     * after the traffic and a barrier */
    local_counters(before);
    MPI_Barrier(MPI_COMM_WORLD);
    local_counters(before);
    pingpong(buf, SMALL, rounds);
    pingpong(buf, MID, rounds);
    pingpong(buf, BIG, 3);
    MPI_Barrier(MPI_COMM_WORLD);
    local_counters(after);
    for (int i = 0; i < 3; ++i) {
        after[i] -= before[i];
    }
    printf("%s: rank %d: sent %llu (injected %llu), delivered %llu\n", PROG, bu_rank, after[0],
           after[1], after[2]);
    MPI_Allreduce(after, t, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    sends = t[0], injects = t[1], recvs = t[2];
    if (0 == bu_rank) {
        printf("%s: %llu fragments sent (%llu by fi_inject), %llu delivered\n", PROG, sends,
               injects, recvs);
        BU_CHECK(injects >= 2ull * rounds, "%llu injected, fewer than the %d small messages",
                 injects, 2 * rounds);
        BU_CHECK(sends - injects >= 2ull * rounds,
                 "%llu sent by fi_sendmsg, fewer than the %d "
                 "8 KiB messages",
                 sends - injects, 2 * rounds);
        /* the PML's fire-and-forget control messages (a FIN, an ACK) may
         * still be in flight at either barrier: a few either way */
        BU_CHECK(recvs >= 4ull * rounds && recvs + 4 >= sends && recvs <= sends + 4,
                 "%llu fragments sent but %llu delivered", sends, recvs);
    }
    free(buf);
    return bu_finalize(PROG);
}

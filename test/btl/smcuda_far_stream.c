/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_far_stream.c - pml/ob1x's choice between the copy path and single
 * copy for a far peer (common_ob1x_hints.h, ob1x_hints_prefer_copy), seen
 * through its protocol counters. Run with btl_smcuda_far_handoff_ns 0
 * (every peer is far), 2 ranks; every message verified. Three phases:
 *   1. ping-pong of `small` bytes (default 8 KiB): each message is alone,
 *      so every one goes by RGET (single copy: one crossing of the data
 *      instead of two);
 *   2. a one-way stream of `small`-byte messages (windows of WINDOW sends
 *      answered by one zero-byte reply): at least a third go by the copy
 *      path, which keeps both cores copying (the rule before took single
 *      copy for all of them). Not all: a send that finds no RGET of ours
 *      live is a lone message, and the first sends after the ping-pong
 *      still count the traffic as two-way;
 *   3. a two-way stream of `two_way`-byte messages (default 16 KiB, from
 *      single_min / 4 up): after its first window each side knows the
 *      traffic is two-way, and at least half of its messages go by RGET
 *      (a two-way flag that only lasted until the next send saw none of
 *      the other direction's data between the sends of one window, and
 *      took the copy path).
 * With the peer forced near instead (a huge btl_smcuda_far_handoff_ns) and
 * btl_smcuda_single_copy_adapt false (no measured figures: the rule alone
 * decides), two phases of `big`-byte messages (default 64 KiB, from
 * single_min up):
 *   1. a one-way stream: at least half by the copy path;
 *   2. a two-way stream: at least half by RGET (a near rule that read only
 *      the two-way flag of each read sent all but the first of each window
 *      by the copy path), and, with a 2 MiB RGET of each side left
 *      unmatched until the end (so that sends of both are live throughout),
 *      at most one get's bytes copied by a data owner for the other side
 *      (shared gets; 6-10 MB when they were shared): with traffic both
 *      ways each side copies its own.
 * Arguments: small=BYTES two_way=BYTES big=BYTES windows=N
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/tpml.h"

#define WINDOW 64
#define PIN_BYTES (2 * 1024 * 1024) /* btl_smcuda_single_copy_busy_limit's default */

typedef struct {
    unsigned long long rget, pipe;
} counts_t;

static counts_t counts_now(void)
{
    counts_t c = {t_pv_read(T_PV_RGET_MSG), t_pv_read(T_PV_SRPIPE_MSG)};
    return c;
}

static counts_t counts_since(counts_t before)
{
    counts_t now = counts_now();

    now.rget -= before.rget;
    now.pipe -= before.pipe;
    return now;
}

static size_t size_arg(int argc, char **argv, const char *name, size_t def)
{
    const char *v = t_arg_value(argc, argv, name);
    return NULL != v ? (size_t) strtoull(v, NULL, 0) : def;
}

/* Windows of WINDOW messages from rank 0 to rank 1 (both ways when
 * `both`), each window closed by a zero-byte reply one way. */
static void stream(unsigned char *buf, size_t size, int windows, int peer, bool both)
{
    MPI_Request req[2 * WINDOW];

    for (int w = 0; w < windows; ++w) {
        int n = 0;
        bool sends = both || 0 == t_rank, recvs = both || 1 == t_rank;

        if (recvs) {
            memset(buf, 0, size * WINDOW);
            for (int i = 0; i < WINDOW; ++i) {
                T_MPI(MPI_Irecv(buf + (size_t) i * size, (int) size, MPI_BYTE, peer, 2,
                                MPI_COMM_WORLD, &req[n++]));
            }
        }
        if (sends) {
            unsigned char *out = buf + (size_t) WINDOW * size;
            for (int i = 0; i < WINDOW; ++i) {
                t_fill(out + (size_t) i * size, size, t_seed((uint32_t) w, (uint32_t) i, t_rank));
                T_MPI(MPI_Isend(out + (size_t) i * size, (int) size, MPI_BYTE, peer, 2,
                                MPI_COMM_WORLD, &req[n++]));
            }
        }
        T_MPI(MPI_Waitall(n, req, MPI_STATUSES_IGNORE));
        if (recvs) {
            for (int i = 0; i < WINDOW; ++i) {
                t_check_data(buf + (size_t) i * size, size,
                             t_seed((uint32_t) w, (uint32_t) i, (uint32_t) peer), "stream message");
            }
        }
        if (0 == t_rank) {
            T_MPI(MPI_Recv(NULL, 0, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            T_MPI(MPI_Send(NULL, 0, MPI_BYTE, peer, 3, MPI_COMM_WORLD));
        }
    }
}

/* A near peer, the figures not used: one-way windows by the copy path,
 * two-way ones by single copy, each side copying its own gets (the data
 * owner is busy with its own: pml/ob1x asks smcuda not to share them). */
static void near_streams(size_t big, int windows, int peer)
{
    unsigned long long adapt = 1, sent = (unsigned long long) windows * WINDOW, helped;
    unsigned char *buf = t_malloc(2 * WINDOW * big), *pin = t_malloc(2 * PIN_BYTES);
    MPI_Request pins[2];
    counts_t c0, one, two;

    T_CHECK(t_cvar_ull("btl_smcuda_single_copy_adapt", &adapt) && 0 == adapt,
            "run with btl_smcuda_single_copy_adapt 0 (the rule alone decides)");
    c0 = counts_now();
    stream(buf, big, windows, peer, false);
    one = counts_since(c0);
    printf("%s rank %d: near, one-way stream of %zu B: %llu by RGET, %llu by the copy path\n",
           t_prog, t_rank, big, one.rget, one.pipe);
    if (0 == t_rank) {
        T_CHECK(one.rget + one.pipe == sent && 2 * one.pipe >= sent,
                "a one-way stream of %zu B to a near peer: %llu of %llu by the copy path", big,
                one.pipe, sent);
    }
    /* A message from busy_limit up goes by RGET; unmatched until the end,
     * it keeps an RGET send of each side live through the whole stream, so
     * that every get of the stream finds the traffic two-way (without it a
     * side whose own sends were all read already may share its last gets,
     * rightly: the owner is then idle). */
    t_fill(pin, PIN_BYTES, t_seed(99, 0, t_rank));
    T_MPI(MPI_Isend(pin, PIN_BYTES, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &pins[0]));
    c0 = counts_now();
    helped = t_pv_read_name("btl_smcuda_get_helped_bytes");
    stream(buf, big, windows, peer, true);
    two = counts_since(c0);
    helped = t_pv_read_name("btl_smcuda_get_helped_bytes") - helped;
    T_MPI(MPI_Irecv(pin + PIN_BYTES, PIN_BYTES, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &pins[1]));
    T_MPI(MPI_Waitall(2, pins, MPI_STATUSES_IGNORE));
    t_check_data(pin + PIN_BYTES, PIN_BYTES, t_seed(99, 0, (uint32_t) peer), "pin message");
    printf("%s rank %d: near, two-way stream of %zu B: %llu by RGET, %llu by the copy path, "
           "%llu bytes copied for the peer's gets\n",
           t_prog, t_rank, big, two.rget, two.pipe, helped);
    T_MPI(MPI_Allreduce(MPI_IN_PLACE, &helped, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                        MPI_COMM_WORLD));
    T_CHECK(helped <= big, "a two-way stream of %zu B: %llu bytes of gets shared (at most one get's)",
            big, helped);
    T_CHECK(two.rget + two.pipe == sent && 2 * two.rget >= sent,
            "a two-way stream of %zu B with a near peer: %llu of %llu by RGET", big, two.rget,
            sent);
    free(pin);
    free(buf);
}

int main(int argc, char **argv)
{
    size_t small, two_way, biggest;
    int windows, iters = 200, peer;
    unsigned long long far_ns = 1, sent;
    unsigned char *buf;
    counts_t c0;

    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    T_CHECK(2 == t_size, "needs 2 ranks");
    T_CHECK(t_cvar_ull("btl_smcuda_far_handoff_ns", &far_ns) &&
                (0 == far_ns || far_ns >= 1000000000ull),
            "run with btl_smcuda_far_handoff_ns 0 (every peer far) or 1000000000 (near)");
    small = size_arg(argc, argv, "small", 8192);
    two_way = size_arg(argc, argv, "two_way", 16384);
    windows = (int) size_arg(argc, argv, "windows", 20);
    peer = 1 - t_rank;
    if (0 != far_ns) {
        near_streams(size_arg(argc, argv, "big", 65536), windows, peer);
        return t_finalize();
    }
    biggest = small > two_way ? small : two_way;
    buf = t_malloc(2 * WINDOW * biggest);

    c0 = counts_now();
    t_pingpong(buf, small, iters, peer, 1);
    counts_t pp = counts_since(c0);
    printf("%s rank %d: ping-pong of %zu B: %llu by RGET, %llu by the copy path\n", t_prog, t_rank,
           small, pp.rget, pp.pipe);
    T_CHECK(pp.rget == (unsigned long long) iters / 2 && 0 == pp.pipe,
            "a lone %zu-byte message to a far peer did not go by RGET (%llu of %d)", small, pp.rget,
            iters / 2);

    c0 = counts_now();
    stream(buf, small, windows, peer, false);
    counts_t one = counts_since(c0);
    sent = (unsigned long long) windows * WINDOW;
    printf("%s rank %d: one-way stream of %zu B: %llu by RGET, %llu by the copy path\n", t_prog,
           t_rank, small, one.rget, one.pipe);
    if (0 == t_rank) {
        T_CHECK(one.rget + one.pipe == sent, "%llu of %llu stream messages counted",
                one.rget + one.pipe, sent);
        T_CHECK(3 * one.pipe >= sent,
                "a one-way stream of %zu B to a far peer: %llu of %llu by the "
                "copy path",
                small, one.pipe, sent);
    }

    c0 = counts_now();
    stream(buf, two_way, windows, peer, true);
    counts_t two = counts_since(c0);
    printf("%s rank %d: two-way stream of %zu B: %llu by RGET, %llu by the copy path\n", t_prog,
           t_rank, two_way, two.rget, two.pipe);
    T_CHECK(two.rget + two.pipe == sent, "%llu of %llu stream messages counted",
            two.rget + two.pipe, sent);
    T_CHECK(2 * two.rget >= sent, "a two-way stream of %zu B with a far peer: %llu of %llu by RGET",
            two_way, two.rget, sent);
    free(buf);
    return t_finalize();
}

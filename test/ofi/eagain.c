/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * eagain.c - back-pressure counted: every rank but 0 starts `count` small
 * nonblocking sends to rank 0 while rank 0 stays out of MPI (a busy loop
 * of `hold` ms), so the provider's queues fill and answer -FI_EAGAIN; then
 * rank 0 receives everything, per sender in order, contents checked.
 * moved=... (ofi_pvars.h) then proves which counters grew, e.g.
 * moved=eagain_retries,send_ops.
 *
 * Arguments: count=N (default 20000), hold=MS (default 1500), moved=...
 */
#include "ofi_pvars.h"

#include <time.h>

#define PROG "ofi/eagain"
#define LEN 64

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Rank 0 stays out of MPI: no progress, the senders' queues fill. */
static void hold_off(double ms)
{
    double end = now_ms() + ms;
    while (now_ms() < end) {
    }
}

static void send_all(int count)
{
    unsigned char *buf = malloc((size_t) count * LEN);
    MPI_Request *reqs = malloc((size_t) count * sizeof(*reqs));

    BU_CHECK(NULL != buf && NULL != reqs, "out of memory");
    for (int i = 0; i < count; ++i) {
        int tag[2] = {bu_rank, i}; /* sender and sequence: order is checked */
        bu_fill(buf + (size_t) i * LEN, LEN, i);
        memcpy(buf + (size_t) i * LEN, tag, sizeof(tag));
        MPI_Isend(buf + (size_t) i * LEN, LEN, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &reqs[i]);
    }
    MPI_Waitall(count, reqs, MPI_STATUSES_IGNORE);
    free(reqs);
    free(buf);
}

static void receive_all(int count)
{
    unsigned char buf[LEN];

    for (int src = 1; src < bu_size; ++src) {
        for (int i = 0; i < count; ++i) {
            MPI_Status st;
            int n = 0;
            MPI_Recv(buf, LEN, MPI_BYTE, src, 7, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &n);
            BU_CHECK(LEN == n, "message %d from %d: %d bytes, not %d", i, src, n, LEN);
            int tag[2];
            memcpy(tag, buf, sizeof(tag));
            BU_CHECK(src == tag[0] && i == tag[1],
                     "message %d from %d: carries sender %d, number %d (out of order)", i, src,
                     tag[0], tag[1]);
            for (size_t j = sizeof(tag); j < LEN; ++j) {
                BU_CHECK(buf[j] == bu_byte(j, LEN, i), "message %d from %d: byte %zu wrong", i, src,
                         j);
            }
        }
    }
}

int main(int argc, char **argv)
{
    const char *a;
    int count = 20000, hold = 1500;

    bu_init(&argc, &argv);
    op_start();
    if (NULL != (a = bu_arg(argc, argv, "count"))) {
        count = atoi(a);
    }
    if (NULL != (a = bu_arg(argc, argv, "hold"))) {
        hold = atoi(a);
    }
    BU_CHECK(bu_size >= 2, "needs at least 2 ranks");
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == bu_rank) {
        hold_off(hold);
        receive_all(count);
    } else {
        send_all(count);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    op_check(PROG, argc, argv);
    return bu_finalize(PROG);
}

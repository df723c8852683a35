/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_far_ring.c - which way a stream of small messages takes to a far
 * peer. Rank 0 sends windows of `small` (900) and of `large` (1100) bytes
 * to rank 1, every message verified; rank 0's counters say how many went
 * through the ring (btl_smcuda_fbox_messages) and how many by FIFO
 * fragments (btl_smcuda_fifo_messages). Args:
 *   far=yes   (the job sets btl_smcuda_far_handoff_ns 0: every peer far)
 *             900 B through the ring, 1100 B by FIFO fragments (above
 *             btl_smcuda_fbox_far_max_size, 1 KiB);
 *   far=no    (far_handoff_ns huge: never far) both through the ring,
 *             except what a full ring spills into the FIFO.
 * The ring is made large enough (the job's btl_smcuda_fbox_size) that a
 * window never fills it, so every message is counted where the rule put it.
 */
#include <stdbool.h>

#include "btl_util.h"

#define PROG "btl/smcuda_far_ring"
#define WINDOW 16
#define WINDOWS 40

/* One size's windows; returns the (ring, fifo) messages rank 0 sent. */
static void stream(size_t size, unsigned long long *ring, unsigned long long *fifo)
{
    unsigned char *buf = malloc(size * WINDOW);
    unsigned long long r0 = bu_named_counter("btl_smcuda_fbox_messages");
    unsigned long long f0 = bu_named_counter("btl_smcuda_fifo_messages");

    BU_CHECK(NULL != buf, "malloc");
    for (int w = 0; w < WINDOWS; ++w) {
        MPI_Request req[WINDOW];
        for (int i = 0; i < WINDOW; ++i) {
            unsigned char *b = buf + (size_t) i * size;
            if (0 == bu_rank) {
                bu_fill(b, size, w * WINDOW + i);
                MPI_Isend(b, (int) size, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &req[i]);
            } else {
                memset(b, 0, size);
                MPI_Irecv(b, (int) size, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &req[i]);
            }
        }
        MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
        if (1 == bu_rank) {
            for (int i = 0; i < WINDOW; ++i) {
                long bad = bu_verify(buf + (size_t) i * size, size, w * WINDOW + i);
                BU_CHECK(bad < 0, "%zu B, window %d, message %d: byte %ld wrong", size, w, i, bad);
            }
        }
        /* the window is drained before the next one starts */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    *ring = bu_named_counter("btl_smcuda_fbox_messages") - r0;
    *fifo = bu_named_counter("btl_smcuda_fifo_messages") - f0;
    free(buf);
}

int main(int argc, char **argv)
{
    const char *far;
    bool is_far;
    unsigned long long ring_s, fifo_s, ring_l, fifo_l;
    const unsigned long long n = (unsigned long long) WINDOW * WINDOWS;

    bu_init(&argc, &argv);
    BU_CHECK(2 == bu_size, "needs 2 ranks");
    far = bu_arg(argc, argv, "far");
    BU_CHECK(NULL != far && (0 == strcmp(far, "yes") || 0 == strcmp(far, "no")),
             "needs far=yes or far=no");
    is_far = 0 == strcmp(far, "yes");

    stream(900, &ring_s, &fifo_s);
    stream(1100, &ring_l, &fifo_l);
    if (0 == bu_rank) {
        printf("%s: far=%s: 900 B: %llu ring, %llu FIFO; 1100 B: %llu ring, %llu FIFO "
               "(of %llu each, barriers' messages included)\n",
               PROG, far, ring_s, fifo_s, ring_l, fifo_l, n);
        /* the barriers' small messages count as ring messages too */
        BU_CHECK(ring_s >= n && 0 == fifo_s, "900 B: %llu FIFO fragments, all expected in the ring",
                 fifo_s);
        if (is_far) {
            BU_CHECK(fifo_l >= n, "1100 B to a far peer: only %llu of %llu by FIFO fragments",
                     fifo_l, n);
        } else {
            BU_CHECK(ring_l >= n && 0 == fifo_l,
                     "1100 B to a near peer: %llu FIFO fragments, all expected in the ring",
                     fifo_l);
        }
    }
    return bu_finalize(PROG);
}

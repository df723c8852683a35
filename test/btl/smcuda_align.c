/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_align.c - message data between buffers at every relative page
 * offset that matters to the copies (common_ob1x_copy.h): the receive
 * buffer lies 0..20, 30..40, 60..70 and 4080..4095 bytes past the send
 * buffer modulo 4096, at sizes below and above the vector-copy threshold,
 * the eager limit, single-copy sizes and fragment multiples; content and
 * the bytes around the receive buffer are verified.
 *
 * Under a PML that reads large messages with btl_get (ob1), the transfers
 * at distances 1..15 must go through the bounce buffer: the counter
 * btl_smcuda_cma_bounced_bytes has to move (expect=bounce), and by at
 * least the data of those messages.  expect=any: the counter is not checked
 * (ob1x, whose protocols copy through fragments, or mechanism none).
 */
#include "btl_util.h"

#define PROG "btl/smcuda_align"
#define GUARD 0xA5

static const size_t sizes[] = {2047,      2048,  3001,          4096,   4097,        8192,
                               32768 + 5, 65536, 65536 * 3 + 7, 262144, 1048576 + 13};

static int distance_list(int *d)
{
    int n = 0;
    for (int i = 0; i <= 20; ++i)
        d[n++] = i;
    for (int i = 30; i <= 40; ++i)
        d[n++] = i;
    for (int i = 60; i <= 70; ++i)
        d[n++] = i;
    for (int i = 4080; i <= 4095; ++i)
        d[n++] = i;
    return n;
}

int main(int argc, char **argv)
{
    const char *expect = bu_arg(argc, argv, "expect");
    int bounce = NULL != expect && 0 == strcmp(expect, "bounce");
    int dist[64], nd = distance_list(dist);
    size_t maxsz = sizes[sizeof(sizes) / sizeof(sizes[0]) - 1];
    unsigned long long slow_bytes = 0;
    unsigned char *sraw, *rraw;
    bu_counters_t c0, c1;

    bu_init(&argc, &argv);
    BU_CHECK(2 == bu_size, "run with 2 ranks");
    if (posix_memalign((void **) &sraw, 4096, maxsz + 2 * 4096) ||
        posix_memalign((void **) &rraw, 4096, maxsz + 3 * 4096))
        bu_fail("out of memory");
    bu_counters_total(&c0);

    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); ++k) {
        size_t len = sizes[k];
        for (int i = 0; i < nd; ++i) {
            /* the sender's buffer starts 24 bytes into a page (like a heap
             * block), the receiver's `dist` bytes further modulo 4096 */
            unsigned char *sbuf = sraw + 24, *rbuf = rraw + 4096 + 24 + dist[i];
            int seed = (int) (k * 100 + (size_t) i);
            if (0 == bu_rank) {
                bu_fill(sbuf, len, seed);
                MPI_Send(sbuf, (int) len, MPI_BYTE, 1, seed, MPI_COMM_WORLD);
            } else {
                MPI_Status st;
                int got = -1;
                memset(rbuf - 64, GUARD, len + 128);
                MPI_Recv(rbuf, (int) len, MPI_BYTE, 0, seed, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, MPI_BYTE, &got);
                BU_CHECK((size_t) got == len, "size %zu distance %d: count %d", len, dist[i], got);
                long bad = bu_verify(rbuf, len, seed);
                BU_CHECK(bad < 0, "size %zu distance %d: wrong byte at %ld", len, dist[i], bad);
                for (int g = 1; g <= 64; ++g)
                    BU_CHECK(GUARD == rbuf[-g] && GUARD == rbuf[len + (size_t) g - 1],
                             "size %zu distance %d: bytes around the buffer overwritten", len,
                             dist[i]);
            }
            if (dist[i] >= 1 && dist[i] <= 15 && len >= 65536)
                slow_bytes += len;
        }
    }

    bu_counters_total(&c1);
    if (0 == bu_rank) {
        unsigned long long bounced = c1.bounced - c0.bounced;
        printf("%s: %d distances x %zu sizes verified; get %llu messages, bounced %llu bytes "
               "(messages >= 64 KiB at distances 1..15: %llu bytes)\n",
               PROG, nd, sizeof(sizes) / sizeof(sizes[0]),
               c1.messages[BU_GET] - c0.messages[BU_GET], bounced, slow_bytes);
        if (bounce) {
            BU_CHECK(c1.found, "btl_smcuda counters not found");
            BU_CHECK(bounced >= slow_bytes,
                     "bounced %llu bytes, want at least %llu (every single copy at a slow "
                     "distance)",
                     bounced, slow_bytes);
        }
    }
    bu_counters_print(PROG, &c1);
    free(sraw);
    free(rraw);
    return bu_finalize(PROG);
}

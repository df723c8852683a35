/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_flood.c - every rank floods every other rank at once with windows
 * of non-blocking messages of random sizes (mostly small, some up to
 * 512 KiB), content verified.  Meant for 4+ oversubscribed ranks, and with
 * tiny FIFOs/rings/free lists to force the flow-control paths.
 *
 * Arguments:
 *   rounds=N        windows per run (default 40)
 *   window=N        messages per peer per window (default 32)
 *   expect_stalls   the btl_smcuda_flow_control_stalls counter must be > 0
 */
#include "btl_util.h"

#define PROG "btl/smcuda_flood"
#define MAXMSG (512 * 1024)

/* xorshift, seeded per (src, dst) so both sides draw the same sizes */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static size_t draw_size(uint64_t *s)
{
    uint64_t r = rng_next(s);
    switch (r % 8) {
        case 0:
        case 1:
        case 2:
            return (size_t) (r >> 8) % 64; /* tiny: rings */
        case 3:
        case 4:
            return (size_t) (r >> 8) % 1200; /* around the ring limit */
        case 5:
            return (size_t) (r >> 8) % 8192; /* eager / first fragment */
        case 6:
            return (size_t) (r >> 8) % 70000; /* pipeline */
        default:
            return (size_t) (r >> 8) % MAXMSG; /* single copy */
    }
}

int main(int argc, char **argv)
{
    const char *a;
    int rounds = 40, window = 32, expect_stalls;
    unsigned char **sbufs, **rbufs;
    uint64_t *sstate, *rstate;
    MPI_Request *reqs;
    size_t *rsizes;
    bu_counters_t c;

    bu_init(&argc, &argv);
    if ((a = bu_arg(argc, argv, "rounds")))
        rounds = atoi(a);
    if ((a = bu_arg(argc, argv, "window")))
        window = atoi(a);
    expect_stalls = 0;
    for (int i = 1; i < argc; ++i)
        if (0 == strcmp(argv[i], "expect_stalls"))
            expect_stalls = 1;
    BU_CHECK(bu_size >= 2, "needs 2+ ranks");

    sbufs = calloc((size_t) bu_size * window, sizeof(*sbufs));
    rbufs = calloc((size_t) bu_size * window, sizeof(*rbufs));
    rsizes = calloc((size_t) bu_size * window, sizeof(*rsizes));
    reqs = calloc((size_t) 2 * bu_size * window, sizeof(*reqs));
    sstate = calloc((size_t) bu_size, sizeof(*sstate));
    rstate = calloc((size_t) bu_size, sizeof(*rstate));
    BU_CHECK(sbufs && rbufs && rsizes && reqs && sstate && rstate, "out of memory");
    for (int i = 0; i < bu_size * window; ++i) {
        sbufs[i] = malloc(MAXMSG);
        rbufs[i] = malloc(MAXMSG);
        BU_CHECK(sbufs[i] && rbufs[i], "out of memory");
    }
    for (int p = 0; p < bu_size; ++p) {
        sstate[p] = 0x9e3779b97f4a7c15ULL * (uint64_t) (bu_rank * 131 + p + 1);
        rstate[p] = 0x9e3779b97f4a7c15ULL * (uint64_t) (p * 131 + bu_rank + 1);
    }

    for (int r = 0; r < rounds; ++r) {
        int nreq = 0;
        for (int p = 0; p < bu_size; ++p) {
            if (p == bu_rank)
                continue;
            for (int w = 0; w < window; ++w) {
                int slot = p * window + w;
                rsizes[slot] = draw_size(&rstate[p]);
                MPI_Irecv(rbufs[slot], MAXMSG, MPI_BYTE, p, w, MPI_COMM_WORLD, &reqs[nreq++]);
            }
        }
        for (int w = 0; w < window; ++w) {
            for (int k = 1; k < bu_size; ++k) {
                int p = (bu_rank + k) % bu_size; /* stagger destinations */
                int slot = p * window + w;
                size_t size = draw_size(&sstate[p]);
                bu_fill(sbufs[slot], size, bu_rank * 7919 + r * 31 + w);
                MPI_Isend(sbufs[slot], (int) size, MPI_BYTE, p, w, MPI_COMM_WORLD, &reqs[nreq++]);
            }
        }
        {
            MPI_Status *st = calloc((size_t) nreq, sizeof(*st));
            int rc = MPI_Waitall(nreq, reqs, st);
            BU_CHECK(MPI_SUCCESS == rc, "waitall failed in round %d", r);
            free(st);
        }
        for (int p = 0; p < bu_size; ++p) {
            if (p == bu_rank)
                continue;
            for (int w = 0; w < window; ++w) {
                int slot = p * window + w;
                long bad = bu_verify(rbufs[slot], rsizes[slot], p * 7919 + r * 31 + w);
                BU_CHECK(bad < 0, "round %d from %d msg %d (%zu bytes): wrong byte at %ld", r, p, w,
                         rsizes[slot], bad);
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    bu_counters_total(&c);
    bu_counters_print(PROG, &c);
    if (0 == bu_rank) {
        BU_CHECK(c.found, "btl_smcuda_* performance variables not found");
        BU_CHECK(c.messages[BU_FBOX] > 0, "no traffic through fast boxes");
        BU_CHECK(
            c.messages[BU_FBOX] + c.messages[BU_FIFO] + c.messages[BU_GET] + c.messages[BU_PUT] > 0,
            "no traffic at all");
        if (expect_stalls)
            BU_CHECK(c.stalls > 0, "flow control never engaged");
    }
    return bu_finalize(PROG);
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_split_unit.c - unit test of how btl/smcuda cuts a shared get in
 * chunks (btl_smcuda_split.h), no MPI traffic:
 *   - for sizes from just past a chunk to 32 MiB, the chunks cover the job
 *     exactly once, in order, none empty, with an even count;
 *   - a two-chunk job's first chunk is half plus the lead, whole cache
 *     lines, clamped to a quarter .. three quarters, and both chunks still
 *     cover the job for any lead, negative ones included;
 *   - the lead grows while the helper finishes last and shrinks while it
 *     finishes first, stays within its bounds, and a helper that is late
 *     by a fixed time (the reader copying faster or slower than the
 *     helper) makes it settle where both finish together, within two steps.
 */
#include <stdio.h>
#include <stdlib.h>

#include "unit_check.h"

#include "../../opal/mca/btl/smcuda/btl_smcuda_split.h"

#define PROG "btl/smcuda_split_unit"

/* Chunks of a job of `len` bytes cut as btl_smcuda_rdma.c cuts it. */
static void check_cover(uint64_t len, uint64_t chunk, uint32_t nchunks)
{
    uint64_t at = 0;

    for (uint32_t c = 0; c < nchunks; ++c) {
        uint64_t n = smcuda_split_len(len, chunk, nchunks, c);
        UNIT_CHECK(c * chunk == at, return, "len %llu chunk %u starts at %llu, not %llu",
                   (unsigned long long) len, c, (unsigned long long) (c * chunk),
                   (unsigned long long) at);
        UNIT_CHECK(n > 0 && n <= len, return, "len %llu chunk %u has %llu bytes",
                   (unsigned long long) len, c, (unsigned long long) n);
        at += n;
    }
    UNIT_CHECK(at == len, return, "len %llu: chunks cover %llu bytes", (unsigned long long) len,
               (unsigned long long) at);
}

static void test_sizes(void)
{
    static const uint64_t sizes[] = {
        32 * 1024 + 1, 64 * 1024 - 1, 64 * 1024,       64 * 1024 + 7,       96 * 1024,
        100000,        256 * 1024,    512 * 1024 - 64, 512 * 1024,          512 * 1024 + 1,
        768 * 1024,    1000 * 1000,   4 * 1024 * 1024, 5 * 1024 * 1024 + 3, 32 * 1024 * 1024};
    static const int32_t leads[] = {0, 256, -256, 4096, -4096, 1000000, -1000000, 65536, -65536};

    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        uint64_t len = sizes[i], chunk = smcuda_split_chunk(len);
        uint32_t n = (uint32_t) ((len + chunk - 1) / chunk);

        UNIT_CHECK(n >= 2 && 0 == n % 2, continue, "len %llu: %u chunks of %llu",
                   (unsigned long long) len, n, (unsigned long long) chunk);
        check_cover(len, chunk, n);
        if (2 != n) {
            continue;
        }
        for (size_t j = 0; j < sizeof(leads) / sizeof(leads[0]); ++j) {
            uint64_t first = smcuda_split_first(len, leads[j]);
            int64_t want = (int64_t) (len / 2) + leads[j];

            if (want < (int64_t) (len / 4)) {
                want = (int64_t) (len / 4);
            } else if (want > (int64_t) (len - len / 4)) {
                want = (int64_t) (len - len / 4);
            }
            UNIT_CHECK(0 == first % SMCUDA_CACHE_LINE && first >= (uint64_t) want &&
                           first < (uint64_t) want + SMCUDA_CACHE_LINE && first < len,
                       continue, "len %llu lead %d: first chunk %llu, wanted about %lld",
                       (unsigned long long) len, leads[j], (unsigned long long) first,
                       (long long) want);
            check_cover(len, first, 2);
        }
    }
}

static void test_learn(void)
{
    int32_t lead = 0;

    for (int i = 0; i < 10; ++i) {
        lead = smcuda_split_learn(lead, false);
    }
    UNIT_CHECK(10 * SMCUDA_SPLIT_LEAD_STEP == lead, return, "late helper x10: lead %d", lead);
    for (int i = 0; i < 30; ++i) {
        lead = smcuda_split_learn(lead, true);
    }
    UNIT_CHECK(-20 * SMCUDA_SPLIT_LEAD_STEP == lead, return, "early helper x30: lead %d", lead);
    for (int i = 0; i < 100000; ++i) {
        lead = smcuda_split_learn(lead, false);
    }
    UNIT_CHECK(SMCUDA_SPLIT_LEAD_MAX == lead, return, "bounded above: %d", lead);
    for (int i = 0; i < 100000; ++i) {
        lead = smcuda_split_learn(lead, true);
    }
    UNIT_CHECK(-SMCUDA_SPLIT_LEAD_MAX == lead, return, "bounded below: %d", lead);
}

/* A model of the two cores: the reader copies `rns` ns per KiB from time
 * 0, the helper `hns` ns per KiB from `late` ns. The lead must settle
 * where both end together, to within two steps of copying. */
static void test_settle(double rns, double hns, double late)
{
    const uint64_t len = 64 * 1024;
    int32_t lead = 0;
    double worst = 0;

    for (int i = 0; i < 2000; ++i) {
        uint64_t first = smcuda_split_first(len, lead);
        double r_end = rns * (double) first / 1024;
        double h_end = late + hns * (double) (len - first) / 1024;

        lead = smcuda_split_learn(lead, h_end <= r_end);
        if (i >= 1000) { /* settled: how far apart they end */
            double gap = r_end > h_end ? r_end - h_end : h_end - r_end;
            worst = gap > worst ? gap : worst;
        }
    }
    UNIT_CHECK(worst <= 2.0 * (rns + hns) * SMCUDA_SPLIT_LEAD_STEP / 1024 + 1, return,
               "reader %.0f ns/KiB, helper %.0f ns/KiB from %.0f ns: ends still %.0f ns apart", rns,
               hns, late, worst);
}

int main(void)
{
    test_sizes();
    test_learn();
    test_settle(53, 59, 250); /* the Xeon VM of the comment */
    test_settle(50, 50, 0);   /* even halves */
    test_settle(60, 40, 0);   /* a faster helper: the lead goes negative */
    test_settle(30, 30, 600); /* a helper late by a fifth of the job */
    printf("%s: %s (%d failures)\n", PROG, failures ? "FAIL" : "ok", failures);
    return failures ? 1 : 0;
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_split.h - how a shared get (btl_smcuda_rdma.c) is cut in
 * chunks. Plain arithmetic on sizes, kept apart so that a unit test can
 * check it (test/btl/smcuda_split_unit.c).
 */
#ifndef MCA_BTL_SMCUDA_SPLIT_H
#define MCA_BTL_SMCUDA_SPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "btl_smcuda_shm.h"

#define SMCUDA_SPLIT_MIN_CHUNK (32 * 1024)
#define SMCUDA_SPLIT_GOOD_CHUNK (256 * 1024)

/* The chunk size of a shared get of `size` bytes. 16 chunks: enough to
 * balance two cores, few enough that the system call and hand-off per
 * chunk stay small next to its copy; but chunks of about
 * SMCUDA_SPLIT_GOOD_CHUNK at least: a 256-512 KiB get cut in 16 spent more
 * on its 16 calls than the second core saved (ping-pong 22-25 us at 256
 * KiB, 14 unshared). And an even number of them: the two cores claim
 * chunks as they go, so with three equal chunks one core copies two while
 * the other waits (768 KiB: one third longer than two halves). */
static inline uint64_t smcuda_split_chunk(size_t size)
{
    /* rounded up: size / 16 rounded down left a 17th chunk of the last
     * few bytes whenever it fell on a page (5 MiB + 3) */
    uint64_t chunk = SMCUDA_ALIGN((size + 15) / 16, 4096);

    if (chunk < SMCUDA_SPLIT_GOOD_CHUNK) {
        size_t pairs = (size + 2 * SMCUDA_SPLIT_GOOD_CHUNK - 1) / (2 * SMCUDA_SPLIT_GOOD_CHUNK);
        chunk = SMCUDA_ALIGN((size + 2 * pairs - 1) / (2 * pairs), 4096);
    }
    return chunk < SMCUDA_SPLIT_MIN_CHUNK ? SMCUDA_SPLIT_MIN_CHUNK : chunk;
}

/* Bytes of chunk c of a job: `chunk` each, the last one the rest. */
static inline uint64_t smcuda_split_len(uint64_t len, uint64_t chunk, uint32_t nchunks, uint32_t c)
{
    return c + 1 == nchunks ? len - (uint64_t) c * chunk : chunk;
}

/* Two-chunk jobs (up to twice SMCUDA_SPLIT_GOOD_CHUNK) are not cut in
 * halves. The data owner starts its chunk only once our request has crossed
 * to it and its progress loop has seen it (150-300 ns on the Intel Xeon VM
 * of 2026-11-27), and its single-copy write ran a little slower than our
 * read there: with halves the reader waited 350-500 ns of a 2.7 us 64 KiB
 * get. So the reader's chunk is half the job plus a lead in bytes, kept per
 * peer: one step more each time the helper's chunk is still being copied
 * when ours is done, one step less each time it was in place first. It
 * settles where either is as likely to finish first. A lead in bytes
 * rather than a fraction, because the helper's lateness is a time: about
 * the same number of bytes at every size. */
#define SMCUDA_SPLIT_LEAD_STEP 256
#define SMCUDA_SPLIT_LEAD_MAX (64 * 1024)

/* The reader's (first) chunk of a two-chunk job of `size` bytes: half plus
 * the lead, between a quarter and three quarters, whole cache lines. */
static inline uint64_t smcuda_split_first(size_t size, int32_t lead)
{
    int64_t first = (int64_t) (size / 2) + lead;

    if (first < (int64_t) (size / 4)) {
        first = (int64_t) (size / 4);
    } else if (first > (int64_t) (size - size / 4)) {
        first = (int64_t) (size - size / 4);
    }
    return SMCUDA_ALIGN((uint64_t) first, SMCUDA_CACHE_LINE);
}

/* The lead after a two-chunk job whose second chunk the helper copied:
 * `helper_first` when that chunk was in place by the end of ours. */
static inline int32_t smcuda_split_learn(int32_t lead, bool helper_first)
{
    lead += helper_first ? -SMCUDA_SPLIT_LEAD_STEP : SMCUDA_SPLIT_LEAD_STEP;
    if (lead < -SMCUDA_SPLIT_LEAD_MAX) {
        return -SMCUDA_SPLIT_LEAD_MAX;
    }
    return lead > SMCUDA_SPLIT_LEAD_MAX ? SMCUDA_SPLIT_LEAD_MAX : lead;
}

#endif /* MCA_BTL_SMCUDA_SPLIT_H */

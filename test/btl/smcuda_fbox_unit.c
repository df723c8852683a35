/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_fbox_unit.c - table-driven unit test of the btl/smcuda fast-box
 * ring (btl_smcuda_fbox.h), no MPI traffic.  One endpoint is both writer
 * and reader of a ring in private memory.  For each case (ring size, a
 * cycle of message lengths, how many records the reader lets pile up)
 * every record must come out once, in order, with its length, tag,
 * sequence number and content; reserve must fail only when the ring lacks
 * room and never hand out bytes of a record not yet consumed (a shadow map
 * of the ring tracks them); records never cross the end of the ring.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_check.h"

#include "../../opal/mca/btl/smcuda/btl_smcuda_fbox.h"

#define PROG "btl/smcuda_fbox_unit"

static int corruption;
static unsigned long guards; /* records published with a guard, all cases */
void mca_btl_smcuda_report_corruption(const char *what, int peer)
{
    (void) peer;
    printf("corruption reported: %s\n", what);
    ++corruption;
}

#define CHECK(cond, ...) UNIT_CHECK(cond, goto out, __VA_ARGS__)

static unsigned char pattern(uint64_t msg, uint32_t i)
{
    return (unsigned char) (msg * 31 + i * 7 + 1);
}

/* The payload of message `msg` at ring position `rec`.  `hostile`: at each
 * slot boundary inside it, the header word a record of the next lap (or of
 * the lap after) would carry there, which the reader must never take for
 * one (btl_smcuda_fbox.h). */
static void fill(unsigned char *dst, uint64_t msg, uint32_t len, uint64_t rec, uint64_t lap,
                 bool hostile)
{
    for (uint32_t i = 0; i < len; ++i)
        dst[i] = pattern(msg, i);
    for (uint32_t off = SMCUDA_FBOX_SLOT; hostile && off + 8 <= SMCUDA_FBOX_HDR_SIZE + len;
         off += SMCUDA_FBOX_SLOT) {
        uint64_t w = smcuda_fbox_word(rec + off + lap * (1 + off / SMCUDA_FBOX_SLOT % 2),
                                      (uint16_t) msg, 0, 7, 0);
        memcpy(dst - SMCUDA_FBOX_HDR_SIZE + off, &w, sizeof(w));
    }
}

/* Length of message `i`: lens[] in turn, or without lens[] one-slot
 * records and others scattered up to a quarter ring, so that skipped ends
 * of the ring and second slots hold records of a later lap. */
static uint32_t msg_len(const uint32_t *lens, int nlens, uint64_t i, uint32_t ring_size)
{
    uint32_t cap = ring_size / 4 - SMCUDA_FBOX_HDR_SIZE;

    uint64_t h = (i * 2654435761u) >> 11;

    if (0 == nlens) /* half one-slot records, half anything */
        return (uint32_t) (h & 1 ? (h >> 1) % (SMCUDA_FBOX_SLOT - SMCUDA_FBOX_HDR_SIZE + 1)
                                 : (h >> 1) % (cap < 4096 ? cap : 4096));
    return lens[i % nlens];
}

/* Writes `count` messages with lengths from msg_len, letting at most
 * `backlog` records wait before the reader drains them.  `hostile`:
 * payloads hold would-be headers of later laps (fill). */
static void run_case(uint32_t ring_size, const uint32_t *lens, int nlens, int backlog, int count,
                     bool hostile)
{
    mca_btl_base_endpoint_t ep;
    smcuda_fbox_ctl_t *ctl = aligned_alloc(64, sizeof(*ctl) + ring_size);
    uint64_t written = 0, read = 0;
    uint16_t seq_out = 0;
    unsigned char *busy = calloc(ring_size, 1);  /* bytes of unconsumed records */
    unsigned char *want = malloc(ring_size + 8); /* expected header room + payload */
    uint64_t rec, *kept;

    memset(ctl, 0, sizeof(*ctl) + ring_size);
    memset(&ep, 0, sizeof(ep));
    ep.out_ctl = ep.in_ctl = ctl;
    ep.out_ring = ep.in_ring = (unsigned char *) (ctl + 1);
    ep.out_mask = ep.in_mask = ring_size - 1;
    ep.lrank = 1;

    while (read < (uint64_t) count) {
        /* write until the backlog is reached or the ring is full */
        while (written < (uint64_t) count && written - read < (uint64_t) backlog) {
            uint32_t len = msg_len(lens, nlens, written, ring_size);
            unsigned char *dst = smcuda_fbox_reserve(&ep, len);
            if (NULL == dst) {
                /* full: only legal when something is waiting to be read */
                CHECK(written > read, "ring %u: reserve of %u bytes failed on an empty ring",
                      ring_size, len);
                break;
            }
            CHECK(((uintptr_t) (dst - 8) & (SMCUDA_FBOX_SLOT - 1)) == 0, "record not slot aligned");
            CHECK(smcuda_fbox_rec_size(len) == SMCUDA_FBOX_SLOT ||
                      ((uintptr_t) (dst - 8) & (SMCUDA_CACHE_LINE - 1)) == 0,
                  "record of %u bytes not line aligned", len);
            if (smcuda_fbox_guards(ep.out_rec, smcuda_fbox_rec_size(len))) {
                /* the guard word after the record must be free space */
                size_t g = (size_t) (dst - 8 - ep.out_ring) + smcuda_fbox_rec_size(len);
                CHECK(g < ring_size && !busy[g], "ring %u msg %llu: guard over an unread record",
                      ring_size, (unsigned long long) written);
                ++guards;
            }
            CHECK(dst + len <= ep.out_ring + ring_size, "record of %u bytes crosses the end", len);
            for (uint32_t i = 0; i < smcuda_fbox_rec_size(len); ++i) {
                size_t at = (size_t) (dst - 8 - ep.out_ring) + i;
                CHECK(!busy[at], "ring %u msg %llu: reserve overlaps an unread record", ring_size,
                      (unsigned long long) written);
                busy[at] = 1;
            }
            rec = ep.out_rec;
            fill(dst, written, len, rec, ring_size, hostile);
            smcuda_fbox_publish(&ep, len, (uint8_t) (written % 200 + 1), seq_out++);
            ++written;
        }
        /* read what is available; with a large backlog only part of it, so
         * that the writer meets unread records when it wraps */
        for (int budget = backlog > 8 ? (int) (written - read + 1) / 2 : 1 << 30; budget > 0;
             --budget) {
            uint64_t w = smcuda_fbox_peek(&ep);
            uint32_t len;
            unsigned char *p;
            if (0 == w)
                break;
            CHECK(read < written, "ring %u: record %llu appeared before it was written", ring_size,
                  (unsigned long long) read);
            len = SMCUDA_FBOX_W_LEN(w);
            p = smcuda_fbox_payload(&ep);
            CHECK(len == msg_len(lens, nlens, read, ring_size),
                  "ring %u msg %llu: length %u want %u", ring_size, (unsigned long long) read, len,
                  msg_len(lens, nlens, read, ring_size));
            CHECK(SMCUDA_FBOX_W_TAG(w) == (uint8_t) (read % 200 + 1), "ring %u msg %llu: bad tag",
                  ring_size, (unsigned long long) read);
            CHECK(SMCUDA_FBOX_W_SEQ(w) == (uint16_t) read, "ring %u msg %llu: bad sequence",
                  ring_size, (unsigned long long) read);
            fill(want + 8, read, len, ep.in_pos, ring_size, hostile);
            for (uint32_t i = 0; i < len; ++i)
                CHECK(p[i] == want[8 + i], "ring %u msg %llu: byte %u wrong", ring_size,
                      (unsigned long long) read, i);
            memset(busy + (p - 8 - ep.in_ring), 0, smcuda_fbox_rec_size(len));
            kept = smcuda_fbox_consume(&ep, len);
            if (NULL != kept && 1 == read % 3) {
                smcuda_fbox_hand_back(kept); /* optional: do it now and then */
            }
            ++read;
        }
        smcuda_fbox_release(&ep);
        CHECK(backlog > 8 || read == written, "ring %u: %llu written but only %llu readable",
              ring_size, (unsigned long long) written, (unsigned long long) read);
    }
    CHECK(0 == corruption, "ring %u: corruption reported", ring_size);
out:
    free(want);
    free(busy);
    free(ctl);
}

int main(void)
{
    static const uint32_t tiny[] = {0};
    static const uint32_t line_edges[] = {55, 56, 57, 119, 120, 121};
    static const uint32_t mixed[] = {0, 1023, 7, 200, 1024, 63, 511, 8};
    static const uint32_t big[] = {1024, 1000, 1017};
    static const uint32_t odd[] = {300, 13, 777, 64, 5, 900};
    static const struct {
        uint32_t ring;
        const uint32_t *lens;
        int nlens, backlog, count;
    } cases[] = {
        {4096, tiny, 1, 1, 5000},       /* one line per record, many laps */
        {4096, tiny, 1, 64, 5000},      /* exactly full ring */
        {4096, line_edges, 6, 3, 5000}, /* header + payload across line edges */
        {4096, mixed, 8, 2, 5000},      /* skips at the end of the ring */
        {4096, big, 3, 4, 3000},        /* quarter-ring records: fill then wrap */
        {8192, odd, 6, 10, 8000},
        {8192, mixed, 8, 1000, 8000}, /* writer runs until full every time */
        {65536, odd, 6, 50, 20000},
        {4096, NULL, 0, 1, 20000}, /* scattered lengths: skips move around */
        {8192, NULL, 0, 5, 20000},
        {4096, NULL, 0, 1000, 20000}, /* scattered, filled every time */
        {1 << 20, NULL, 0, 3, 60000}, /* the largest ring: 16384 lines */
    };

    for (int hostile = 0; hostile < 2; ++hostile)
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i)
            run_case(cases[i].ring, cases[i].lens, cases[i].nlens, cases[i].backlog, cases[i].count,
                     hostile);
    /* the scattered cases must have needed guards, or they test nothing */
    UNIT_CHECK(guards > 0, return 1, "no record needed a guard");
    if (failures)
        return 1;
    printf("PASS: %s\n", PROG);
    return 0;
}

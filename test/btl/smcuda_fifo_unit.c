/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_fifo_unit.c - table-driven unit test of the btl/smcuda receive
 * FIFO (btl_smcuda_fifo.h), no MPI traffic: fill/drain laps, full
 * detection at exactly `slots` entries, tickets wrapping around 2^64, and
 * several producer threads against one consumer (order per producer, no
 * loss, no duplicate).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_check.h"

#include "../../opal/mca/btl/smcuda/btl_smcuda_fifo.h"

#define PROG "btl/smcuda_fifo_unit"

#define CHECK(cond, ...) UNIT_CHECK(cond, return, __VA_ARGS__)

static smcuda_fifo_t *fifo_new(uint32_t slots, uint64_t base)
{
    smcuda_fifo_t *f = aligned_alloc(64, sizeof(*f) + slots * sizeof(smcuda_fifo_slot_t));
    smcuda_fifo_init(f, slots);
    /* start every ticket at `base` (as after `base` pushes and pops) */
    for (uint32_t i = 0; i < slots; ++i) {
        uint64_t t = base + i;
        f->slots[t & (slots - 1)].seq = t;
    }
    f->tail = base;
    return f;
}

/* one thread: `laps` times fill to full, check full, drain in order */
static void case_laps(uint32_t slots, uint64_t base, int laps)
{
    smcuda_fifo_t *f = fifo_new(slots, base);
    uint64_t head = base, v, next = 1;
    for (int lap = 0; lap < laps; ++lap) {
        uint64_t first = next;
        for (uint32_t i = 0; i < slots; ++i)
            CHECK(smcuda_fifo_push(f, slots - 1, next++),
                  "slots %u base %llu lap %d: push %u failed", slots, (unsigned long long) base,
                  lap, i);
        CHECK(!smcuda_fifo_push(f, slots - 1, 999), "slots %u lap %d: push into a full FIFO", slots,
              lap);
        for (uint32_t i = 0; i < slots; ++i) {
            CHECK(smcuda_fifo_pop(f, slots - 1, &head, &v), "slots %u lap %d: pop %u failed", slots,
                  lap, i);
            CHECK(v == first + i, "slots %u lap %d: got %llu want %llu", slots, lap,
                  (unsigned long long) v, (unsigned long long) (first + i));
        }
        CHECK(!smcuda_fifo_pop(f, slots - 1, &head, &v), "slots %u lap %d: pop from empty", slots,
              lap);
        /* partial lap: shift the phase */
        for (int i = 0; i < lap % 3; ++i) {
            CHECK(smcuda_fifo_push(f, slots - 1, next), "phase push");
            CHECK(smcuda_fifo_pop(f, slots - 1, &head, &v) && v == next, "phase pop");
            ++next;
        }
    }
    free(f);
}

typedef struct {
    smcuda_fifo_t *f;
    uint32_t mask;
    int id;
    long count;
} prod_t;

static void *producer(void *arg)
{
    prod_t *p = arg;
    for (long i = 0; i < p->count; ++i) {
        uint64_t v = ((uint64_t) p->id << 48) | (uint64_t) i;
        while (!smcuda_fifo_push(p->f, p->mask, v)) {
            sched_yield(); /* mpirun may bind all threads to one core */
        }
    }
    return NULL;
}

static void case_threads(uint32_t slots, int nprod, long count, uint64_t base)
{
    smcuda_fifo_t *f = fifo_new(slots, base);
    pthread_t th[8];
    prod_t pr[8];
    long seen[8] = {0}, total = 0;
    uint64_t head = base, v;

    for (int i = 0; i < nprod; ++i) {
        pr[i] = (prod_t){f, slots - 1, i, count};
        pthread_create(&th[i], NULL, producer, &pr[i]);
    }
    while (total < nprod * count) {
        if (!smcuda_fifo_pop(f, slots - 1, &head, &v)) {
            sched_yield();
            continue;
        }
        int id = (int) (v >> 48);
        long i = (long) (v & ((1ULL << 48) - 1));
        if (id >= nprod || i != seen[id]) {
            printf("FAIL: slots %u producers %d: producer %d item %ld, expected %ld\n", slots,
                   nprod, id, i, id < nprod ? seen[id] : -1L);
            ++failures;
            break;
        }
        ++seen[id];
        ++total;
    }
    for (int i = 0; i < nprod; ++i)
        pthread_join(th[i], NULL);
    free(f);
}

int main(void)
{
    static const struct {
        uint32_t slots;
        uint64_t base;
        int laps;
    } laps[] = {
        {2, 0, 9},
        {4, 0, 5},
        {64, 0, 7},
        {1024, 0, 3},              /* at least 2 slots */
        {64, UINT64_MAX - 100, 7}, /* tickets wrap around 2^64 */
        {8, UINT64_MAX - 3, 11},
    };
    static const struct {
        uint32_t slots;
        int producers;
        long count;
        uint64_t base;
    } threads[] = {
        {64, 1, 50000, 0},
        {64, 3, 30000, 0},
        {16, 4, 20000, 0},
        {1024, 3, 30000, UINT64_MAX - 5000},
    };

    for (size_t i = 0; i < sizeof(laps) / sizeof(laps[0]); ++i)
        case_laps(laps[i].slots, laps[i].base, laps[i].laps);
    for (size_t i = 0; i < sizeof(threads) / sizeof(threads[0]); ++i)
        case_threads(threads[i].slots, threads[i].producers, threads[i].count, threads[i].base);
    if (failures)
        return 1;
    printf("PASS: %s\n", PROG);
    return 0;
}

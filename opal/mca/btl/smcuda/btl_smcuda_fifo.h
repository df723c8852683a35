/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_fifo.h - the receive FIFO (layout in btl_smcuda_shm.h).
 *
 * Any local peer pushes fragment references; only the owner pops.  A push
 * never blocks: when the slot for the current ticket still holds the
 * previous lap's entry the FIFO is full and the caller queues its fragment.
 * At least 2 slots: with one, "full" and "free for the next ticket" would
 * carry the same sequence number (the component uses 64 or more).
 */
#ifndef MCA_BTL_SMCUDA_FIFO_H
#define MCA_BTL_SMCUDA_FIFO_H

#include "btl_smcuda_shm.h"
#include <stdbool.h>

static inline void smcuda_fifo_init(smcuda_fifo_t *fifo, uint32_t slots)
{
    for (uint32_t i = 0; i < slots; ++i) {
        fifo->slots[i].seq = i;
        fifo->slots[i].value = 0;
    }
    fifo->tail = 0;
}

/* Returns false when the FIFO is full. */
static inline bool smcuda_fifo_push(smcuda_fifo_t *fifo, uint32_t mask, uint64_t value)
{
    uint64_t t = __atomic_load_n(&fifo->tail, __ATOMIC_RELAXED);

    for (;;) {
        smcuda_fifo_slot_t *slot = &fifo->slots[t & mask];
        /* acquire: pairs with the consumer's release of the slot, so our
         * value store below cannot overtake its read of the old value */
        uint64_t seq = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
        int64_t diff = (int64_t) (seq - t);

        if (0 == diff) {
            if (__atomic_compare_exchange_n(&fifo->tail, &t, t + 1, true, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED)) {
                slot->value = value;
                /* release: the fragment header and payload written by the
                 * caller, and the value above, are visible before the slot
                 * is marked full */
                __atomic_store_n(&slot->seq, t + 1, __ATOMIC_RELEASE);
                return true;
            }
            /* t was reloaded by the failed CAS */
        } else if (diff < 0) {
            return false; /* previous lap not consumed yet: full */
        } else {
            t = __atomic_load_n(&fifo->tail, __ATOMIC_RELAXED);
        }
    }
}

/* Pops into *value; returns false when empty (or the next producer has
 * claimed its slot but not yet filled it). */
/* Whether the slot at head holds a value (a hint: no ordering implied). */
static inline bool smcuda_fifo_ready(const smcuda_fifo_t *fifo, uint32_t mask, uint64_t head)
{
    return __atomic_load_n(&fifo->slots[head & mask].seq, __ATOMIC_RELAXED) == head + 1;
}

static inline bool smcuda_fifo_pop(smcuda_fifo_t *fifo, uint32_t mask, uint64_t *head,
                                   uint64_t *value)
{
    smcuda_fifo_slot_t *slot = &fifo->slots[*head & mask];
    /* acquire: pairs with the producer's release; makes the value and the
     * fragment it references visible */
    uint64_t seq = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);

    if (seq != *head + 1) {
        return false;
    }
    *value = slot->value;
    /* release: our read of value happens before a producer of the next
     * lap may overwrite it */
    __atomic_store_n(&slot->seq, *head + mask + 1, __ATOMIC_RELEASE);
    ++*head;
    return true;
}

#endif /* MCA_BTL_SMCUDA_FIFO_H */

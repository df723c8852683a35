/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pml_ob1x_cuda_stage.c - the host copies of staged device buffers live in
 * pinned (page-locked) memory: a copy between the GPU and pinned memory is
 * a DMA transfer at the bus's speed, where pageable memory goes through
 * the driver's bounce buffers at a fraction of it. Pinning costs about a
 * millisecond per MiB, so blocks are kept and reused:
 *
 * - blocks come in power-of-two size classes from 4 KiB; each starts with
 *   a header naming its class and whether it is pinned, so that callers
 *   give back a pointer and nothing else;
 * - a released pinned block returns to its class's free list while the
 *   idle blocks stay within pml_ob1x_cuda_stage_cache bytes; to make room,
 *   idle blocks of other classes are unpinned first, the largest first: the
 *   block just used is the likeliest to be wanted again (a loop over one
 *   size that found the cache full of another size's blocks would
 *   otherwise pin and unpin at every message, ~1 ms per MiB);
 * - a message whose class is larger than that cache, or for which the
 *   driver cannot pin, gets pageable malloc memory (pinning a block that
 *   could not be kept would cost more than its copy gains); 0 turns
 *   pinning off.
 */
#include "ompi_config.h"

#include <stdint.h>
#include <stdlib.h>

#include "opal/threads/mutex.h"
#include "ompi/mca/rte/rte.h"

#include "common_ob1x_help.h"

#include "pml_ob1x.h"
#include "pml_ob1x_cuda_stage.h"

#if OB1X_PML_CUDA
#include "common_ob1x_cuda.h"

#define MIN_SHIFT 12
#define N_CLASSES 52 /* 4 KiB .. 2^63 */
#define HDR 64       /* keeps the data 64-byte aligned */

typedef struct block {
    struct block *next; /* in its class's free list */
    uint32_t cls;
    uint32_t pinned;
} block_t;

static size_t cache_limit = 256u << 20;
static size_t idle_bytes;
static block_t *free_list[N_CLASSES];
static opal_mutex_t lock = OPAL_MUTEX_STATIC_INIT;

void ob1x_cuda_stage_register_params(void)
{
    (void) mca_base_component_var_register(
        &mca_pml_ob1x_component.pmlm_version, "cuda_stage_cache",
        "Bytes of pinned (page-locked) host memory that ob1x keeps for staging device (GPU) "
        "buffers while no message uses them. Staged copies to and from the GPU run at DMA speed "
        "from pinned memory; a message larger than this (rounded up to a power of two) is staged "
        "through pageable memory instead; 0: never pin (docs/cuda.md)",
        MCA_BASE_VAR_TYPE_SIZE_T, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_LOCAL,
        &cache_limit);
}

static uint32_t class_of(size_t len)
{
    uint32_t c = 0;

    while (c < N_CLASSES - 1 && ((size_t) 1 << (c + MIN_SHIFT)) < len) {
        ++c;
    }
    return c;
}

static size_t class_size(uint32_t c)
{
    return (size_t) 1 << (c + MIN_SHIFT);
}

/* A pinned block of class c from its free list, or newly pinned; NULL when
 * the cache cannot hold one or the driver refuses. */
static block_t *pinned_get(uint32_t c)
{
    block_t *b;
    void *p;

    if (class_size(c) > cache_limit) {
        return NULL;
    }
    OPAL_THREAD_LOCK(&lock);
    b = free_list[c];
    if (NULL != b) {
        free_list[c] = b->next;
        idle_bytes -= class_size(c);
    }
    OPAL_THREAD_UNLOCK(&lock);
    if (NULL != b) {
        (void) ob1x_counter_add(&ob1x_counters.events[OB1X_EV_CUDA_STAGE_REUSED], 1);
        return b;
    }
    if (OPAL_SUCCESS != ob1x_cuda_host_alloc(HDR + class_size(c), &p)) {
        return NULL;
    }
    (void) ob1x_counter_add(&ob1x_counters.events[OB1X_EV_CUDA_STAGE_PINNED], 1);
    b = p;
    b->pinned = 1;
    return b;
}

void *ob1x_cuda_stage_get(size_t span)
{
    uint32_t c = class_of(span);
    block_t *b = pinned_get(c);

    if (NULL == b) {
        b = malloc(HDR + span);
        if (OPAL_UNLIKELY(NULL == b)) {
            ob1x_show_help_now("help-mpi-pml-ob1x.txt", "out-of-memory",
                               "the host copy of a device (GPU) buffer", "the job is aborted",
                               ob1x_host());
            ompi_rte_abort(OMPI_ERR_OUT_OF_RESOURCE, NULL);
            return NULL;
        }
        b->pinned = 0;
    }
    b->cls = c;
    b->next = NULL;
    return (char *) b + HDR;
}

/* Under the lock: moves idle blocks of class c to *evicted until size more
 * bytes fit in the cache. */
static void evict(uint32_t c, size_t size, block_t **evicted)
{
    while (NULL != free_list[c] && idle_bytes + size > cache_limit) {
        block_t *e = free_list[c];
        free_list[c] = e->next;
        idle_bytes -= class_size(c);
        e->next = *evicted;
        *evicted = e;
    }
}

/* Under the lock: takes idle blocks off their lists until size more bytes
 * fit in the cache (size is at most the limit): other classes' first, the
 * largest first, then keep's own; returns them chained. */
static block_t *make_room(uint32_t keep, size_t size)
{
    block_t *evicted = NULL;

    for (uint32_t c = N_CLASSES; c-- > 0;) {
        if (c != keep) {
            evict(c, size, &evicted);
        }
    }
    evict(keep, size, &evicted);
    return evicted;
}

void ob1x_cuda_stage_put(void *block)
{
    block_t *b, *evicted = NULL;
    size_t size;

    if (NULL == block) {
        return;
    }
    b = (block_t *) ((char *) block - HDR);
    if (!b->pinned) {
        free(b);
        return;
    }
    size = class_size(b->cls);
    OPAL_THREAD_LOCK(&lock);
    if (size <= cache_limit) {
        evicted = make_room(b->cls, size);
        b->next = free_list[b->cls];
        free_list[b->cls] = b;
        idle_bytes += size;
        b = NULL;
    }
    OPAL_THREAD_UNLOCK(&lock);
    /* unpinned outside the lock: each costs a driver call */
    while (NULL != evicted) {
        block_t *e = evicted;
        evicted = e->next;
        ob1x_cuda_host_free(e);
    }
    if (NULL != b) {
        ob1x_cuda_host_free(b);
    }
}

void ob1x_cuda_stage_drain(void)
{
    OPAL_THREAD_LOCK(&lock);
    for (uint32_t c = 0; c < N_CLASSES; ++c) {
        while (NULL != free_list[c]) {
            block_t *b = free_list[c];
            free_list[c] = b->next;
            ob1x_cuda_host_free(b);
        }
    }
    idle_bytes = 0;
    OPAL_THREAD_UNLOCK(&lock);
}

#endif /* OB1X_PML_CUDA */

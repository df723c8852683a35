/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_hints.c - the registry of BTL hints (common_ob1x_hints.h).
 *
 * One table per process (this library is shared by every ob1x component
 * the process loads). Writers (a BTL's module creation and finalize) are
 * rare and serialized by a mutex; the reader, an upper layer choosing a
 * protocol per message, takes no lock: it scans a few slots with acquire
 * loads. A slot's function is stored before its module (release), so a
 * reader that finds the module finds its function too.
 *
 * A module is deregistered only when its BTL is finalized, after the upper
 * layer has stopped sending through it, so a reader never races with the
 * removal of the module it looks up.
 */
#include <pthread.h>
#include <stddef.h>

#include "common_ob1x_hints.h"

/* BTL modules of one process that publish hints: smcuda has one; room for
 * a few more (several BTLs, or a BTL with one module per device). */
#define OB1X_HINTS_SLOTS 16

typedef struct {
    const struct mca_btl_base_module_t *btl; /* NULL: free */
    ob1x_btl_hints_fn_t fn;
    unsigned props; /* OB1X_BTL_PROP_* */
    size_t device_handle_size;
} hints_slot_t;

static hints_slot_t slots[OB1X_HINTS_SLOTS];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
/* Slots [0, slots_high) have ever been used: lookups stop there, so a BTL
 * that publishes nothing (looked up per message) costs a few instructions. */
static int slots_high;

static hints_slot_t *slot_of(const struct mca_btl_base_module_t *btl)
{
    int high = NULL == btl ? OB1X_HINTS_SLOTS : __atomic_load_n(&slots_high, __ATOMIC_ACQUIRE);

    for (int i = 0; i < high; ++i) {
        if (__atomic_load_n(&slots[i].btl, __ATOMIC_ACQUIRE) == btl) {
            return &slots[i];
        }
    }
    return NULL;
}

/* 0, or -1 when the table is full (the BTL then publishes nothing, and the
 * upper layer applies its standard rules). Registering a module again
 * replaces its function. */
int ob1x_btl_hints_register(struct mca_btl_base_module_t *btl, ob1x_btl_hints_fn_t fn)
{
    hints_slot_t *s;
    int rc = 0;

    if (NULL == btl || NULL == fn) {
        return -1;
    }
    pthread_mutex_lock(&slots_lock);
    s = slot_of(btl);
    if (NULL != s) {
        __atomic_store_n(&s->fn, fn, __ATOMIC_RELEASE);
    } else if (NULL != (s = slot_of(NULL))) {
        int index = (int) (s - slots);

        __atomic_store_n(&s->fn, fn, __ATOMIC_RELAXED);
        __atomic_store_n(&s->props, 0u, __ATOMIC_RELAXED);
        __atomic_store_n(&s->device_handle_size, (size_t) 0, __ATOMIC_RELAXED);
        __atomic_store_n(&s->btl, btl, __ATOMIC_RELEASE);
        if (index >= slots_high) {
            /* after the slot: a reader that sees the new bound sees it */
            __atomic_store_n(&slots_high, index + 1, __ATOMIC_RELEASE);
        }
    } else {
        rc = -1;
    }
    pthread_mutex_unlock(&slots_lock);
    return rc;
}

void ob1x_btl_hints_deregister(struct mca_btl_base_module_t *btl)
{
    hints_slot_t *s;

    if (NULL == btl) {
        return;
    }
    pthread_mutex_lock(&slots_lock);
    s = slot_of(btl);
    if (NULL != s) {
        __atomic_store_n(&s->btl, NULL, __ATOMIC_RELEASE);
        __atomic_store_n(&s->fn, NULL, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&slots_lock);
}

ob1x_btl_hints_fn_t ob1x_btl_hints_find(const struct mca_btl_base_module_t *btl)
{
    hints_slot_t *s;

    if (NULL == btl) {
        return NULL;
    }
    s = slot_of(btl);
    return NULL != s ? __atomic_load_n(&s->fn, __ATOMIC_ACQUIRE) : NULL;
}

/* The slot of a registered btl, with the lock held (NULL, and the lock
 * not held, when btl has none): for the setters of its values. */
static hints_slot_t *slot_lock(const struct mca_btl_base_module_t *btl)
{
    hints_slot_t *s;

    if (NULL == btl) {
        return NULL;
    }
    pthread_mutex_lock(&slots_lock);
    if (NULL == (s = slot_of(btl))) {
        pthread_mutex_unlock(&slots_lock);
    }
    return s;
}

int ob1x_btl_props_set(struct mca_btl_base_module_t *btl, unsigned props)
{
    hints_slot_t *s = slot_lock(btl);

    if (NULL == s) {
        return -1;
    }
    __atomic_store_n(&s->props, props, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&slots_lock);
    return 0;
}

unsigned ob1x_btl_props(const struct mca_btl_base_module_t *btl)
{
    hints_slot_t *s = NULL == btl ? NULL : slot_of(btl);

    return NULL != s ? __atomic_load_n(&s->props, __ATOMIC_ACQUIRE) : 0u;
}

int ob1x_btl_device_handle_size_set(struct mca_btl_base_module_t *btl, size_t size)
{
    hints_slot_t *s = slot_lock(btl);

    if (NULL == s) {
        return -1;
    }
    __atomic_store_n(&s->device_handle_size, size, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&slots_lock);
    return 0;
}

size_t ob1x_btl_device_handle_size(const struct mca_btl_base_module_t *btl)
{
    hints_slot_t *s = NULL == btl ? NULL : slot_of(btl);

    return NULL != s ? __atomic_load_n(&s->device_handle_size, __ATOMIC_ACQUIRE) : 0;
}

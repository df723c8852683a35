/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * hints_unit.c - unit test of the BTL hints registry and rule of the
 * common library (opal/mca/common/ob1x/common_ob1x_hints.*), no MPI
 * traffic: lookups of unknown modules, registering again replaces the
 * function, deregistering frees the slot, a full table refuses, NULL
 * arguments; lookups from several threads while another thread registers
 * and deregisters other modules always find a registered module's
 * function; a module's properties and device handle size (0 until set,
 * set only for a registered module, cleared when its slot is reused); and
 * ob1x_hints_prefer_copy on each branch of its rule.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../btl/unit_check.h"

#include "../../opal/mca/common/ob1x/common_ob1x_hints.c"

#define PROG "foundation/hints_unit"
#define CHECK(cond, ...) UNIT_CHECK(cond, return 1, __VA_ARGS__)

/* Stand-ins for BTL modules: only their addresses matter. */
static char modules[OB1X_HINTS_SLOTS + 4];
#define MOD(i) ((struct mca_btl_base_module_t *) &modules[i])

static bool fn_a(struct mca_btl_base_module_t *b, struct mca_btl_base_endpoint_t *e, size_t s,
                 bool st, ob1x_btl_hints_t *o)
{
    (void) b, (void) e, (void) s, (void) st, (void) o;
    return true;
}

static bool fn_b(struct mca_btl_base_module_t *b, struct mca_btl_base_endpoint_t *e, size_t s,
                 bool st, ob1x_btl_hints_t *o)
{
    (void) b, (void) e, (void) s, (void) st, (void) o;
    return false;
}

static int registry(void)
{
    CHECK(NULL == ob1x_btl_hints_find(MOD(0)), "an unknown module has a function");
    CHECK(NULL == ob1x_btl_hints_find(NULL), "NULL has a function");
    CHECK(0 != ob1x_btl_hints_register(NULL, fn_a), "NULL module registered");
    CHECK(0 != ob1x_btl_hints_register(MOD(0), NULL), "NULL function registered");
    CHECK(0 == ob1x_btl_hints_register(MOD(0), fn_a), "register failed");
    CHECK(fn_a == ob1x_btl_hints_find(MOD(0)), "registered function not found");
    CHECK(NULL == ob1x_btl_hints_find(MOD(1)), "another module found");
    CHECK(0 == ob1x_btl_hints_register(MOD(0), fn_b), "register again failed");
    CHECK(fn_b == ob1x_btl_hints_find(MOD(0)), "register again did not replace");
    ob1x_btl_hints_deregister(MOD(0));
    CHECK(NULL == ob1x_btl_hints_find(MOD(0)), "deregistered module still found");
    ob1x_btl_hints_deregister(MOD(0)); /* twice: nothing happens */
    ob1x_btl_hints_deregister(NULL);

    for (int i = 0; i < OB1X_HINTS_SLOTS; ++i) {
        CHECK(0 == ob1x_btl_hints_register(MOD(i), fn_a), "slot %d refused", i);
    }
    CHECK(0 != ob1x_btl_hints_register(MOD(OB1X_HINTS_SLOTS), fn_a), "a full table accepted");
    CHECK(NULL == ob1x_btl_hints_find(MOD(OB1X_HINTS_SLOTS)), "refused module found");
    CHECK(0 == ob1x_btl_hints_register(MOD(3), fn_b), "replacing in a full table refused");
    ob1x_btl_hints_deregister(MOD(5));
    CHECK(0 == ob1x_btl_hints_register(MOD(OB1X_HINTS_SLOTS), fn_b), "freed slot not reused");
    for (int i = 0; i <= OB1X_HINTS_SLOTS; ++i) {
        ob1x_btl_hints_fn_t want = 5 == i ? NULL : (3 == i || OB1X_HINTS_SLOTS == i) ? fn_b : fn_a;
        CHECK(want == ob1x_btl_hints_find(MOD(i)), "module %d: wrong function", i);
    }
    for (int i = 0; i <= OB1X_HINTS_SLOTS; ++i) {
        ob1x_btl_hints_deregister(MOD(i));
    }
    for (int i = 0; i <= OB1X_HINTS_SLOTS; ++i) {
        CHECK(NULL == ob1x_btl_hints_find(MOD(i)), "module %d left registered", i);
    }
    return 0;
}

/* Properties and the device handle size of a registered module. */
static int properties(void)
{
    CHECK(0 != ob1x_btl_props_set(MOD(0), OB1X_BTL_PROP_REG_FREE), "unknown module took props");
    CHECK(0 != ob1x_btl_device_handle_size_set(MOD(0), 112), "unknown module took a size");
    CHECK(0 == ob1x_btl_device_handle_size(MOD(0)) && 0 == ob1x_btl_props(MOD(0)),
          "unknown module has values");
    CHECK(0 == ob1x_btl_device_handle_size(NULL) && 0 == ob1x_btl_props(NULL), "NULL has values");
    CHECK(0 == ob1x_btl_hints_register(MOD(0), fn_a), "register failed");
    CHECK(0 == ob1x_btl_device_handle_size(MOD(0)), "size before it was set");
    CHECK(0 == ob1x_btl_props_set(MOD(0), OB1X_BTL_PROP_REG_FREE | OB1X_BTL_PROP_LOCAL_FREE),
          "props refused");
    CHECK(0 == ob1x_btl_device_handle_size_set(MOD(0), 112), "size refused");
    CHECK(112 == ob1x_btl_device_handle_size(MOD(0)), "size not kept");
    CHECK((OB1X_BTL_PROP_REG_FREE | OB1X_BTL_PROP_LOCAL_FREE) == ob1x_btl_props(MOD(0)),
          "props not kept");
    CHECK(0 == ob1x_btl_device_handle_size(MOD(1)), "another module has the size");
    ob1x_btl_hints_deregister(MOD(0));
    CHECK(0 == ob1x_btl_device_handle_size(MOD(0)), "size kept after deregistering");
    CHECK(0 == ob1x_btl_hints_register(MOD(1), fn_a), "register failed");
    CHECK(0 == ob1x_btl_device_handle_size(MOD(1)) && 0 == ob1x_btl_props(MOD(1)),
          "a reused slot kept the values of the module before");
    ob1x_btl_hints_deregister(MOD(1));
    return 0;
}

#define ROUNDS 200000
static volatile int stop;
static volatile int lost;

static void *reader(void *arg)
{
    (void) arg;
    while (!stop) {
        if (fn_a != ob1x_btl_hints_find(MOD(0))) {
            lost = 1;
        }
    }
    return NULL;
}

static int threads(void)
{
    pthread_t t[3];

    CHECK(0 == ob1x_btl_hints_register(MOD(0), fn_a), "register failed");
    for (int i = 0; i < 3; ++i) {
        CHECK(0 == pthread_create(&t[i], NULL, reader, NULL), "no thread");
    }
    for (int r = 0; r < ROUNDS; ++r) {
        int m = 1 + r % (OB1X_HINTS_SLOTS + 2);
        if (0 == ob1x_btl_hints_register(MOD(m), fn_b) && r % 3 == 0) {
            ob1x_btl_hints_deregister(MOD(m));
        }
        if (r % 7 == 0) {
            ob1x_btl_hints_deregister(MOD(1 + (r / 7) % (OB1X_HINTS_SLOTS + 2)));
        }
    }
    stop = 1;
    for (int i = 0; i < 3; ++i) {
        pthread_join(t[i], NULL);
    }
    CHECK(!lost, "a registered module was not found while others came and went");
    return 0;
}

/* The rule, one case per branch (common_ob1x_hints.h). */
static int rule(void)
{
    ob1x_btl_hints_t h = {.single_min = 32768, .busy_limit = 2097152, .adapt = true};

    CHECK(ob1x_hints_prefer_copy(&h, 8192, false), "small, near: copy");
    h.far = true;
    CHECK(!ob1x_hints_prefer_copy(&h, 8192, false), "small, far, isolated: single copy");
    CHECK(ob1x_hints_prefer_copy(&h, 8192, true), "small, far, one-way stream: copy");
    CHECK(ob1x_hints_prefer_copy(&h, 32767, true), "below single_min, far, one-way stream: copy");
    CHECK(ob1x_hints_prefer_copy(&h, 65535, true), "below 2 single_min, far, one-way stream: copy");
    CHECK(!ob1x_hints_prefer_copy(&h, 65536, true), "2 single_min, far, one-way stream: single");
    CHECK(!ob1x_hints_prefer_copy(&h, 65535, false), "below 2 single_min, far, isolated: single");
    h.two_way = true; /* consumed by a read: the far rule looks at two_way_recent */
    CHECK(ob1x_hints_prefer_copy(&h, 8192, true), "far, two_way alone: one-way limit");
    h.two_way_recent = true;
    CHECK(ob1x_hints_prefer_copy(&h, 8191, true), "far, two-way stream below single_min/4: copy");
    CHECK(!ob1x_hints_prefer_copy(&h, 8192, true), "far, two-way stream from single_min/4: single");
    CHECK(!ob1x_hints_prefer_copy(&h, 4096, false), "far, two-way, isolated: single");
    h.two_way = false;
    h.two_way_recent = false;
    h.far = false;
    CHECK(!ob1x_hints_prefer_copy(&h, 65536, false), "isolated: single copy");
    CHECK(!ob1x_hints_prefer_copy(&h, 2097152, true), "from busy_limit: single copy");
    h.two_way = true;
    CHECK(!ob1x_hints_prefer_copy(&h, 65536, true), "two-way stream: single copy");
    h.two_way = false;
    h.two_way_recent = true;
    CHECK(!ob1x_hints_prefer_copy(&h, 65536, true),
          "near, a window of sends after the other direction's data: single copy");
    CHECK(ob1x_hints_prefer_copy(&h, 32767, true), "near, two-way, below single_min: copy");
    h.two_way_recent = false;
    CHECK(ob1x_hints_prefer_copy(&h, 65536, true), "stream, copy figure stale: copy");
    h.copy_fresh = true;
    h.copy_ps = 100;
    CHECK(!ob1x_hints_prefer_copy(&h, 65536, true), "stream, single figure stale: single copy");
    h.single_fresh = true;
    h.single_ps = 200;
    CHECK(ob1x_hints_prefer_copy(&h, 65536, true), "stream, copy measured faster: copy");
    h.single_ps = 50;
    CHECK(!ob1x_hints_prefer_copy(&h, 65536, true), "stream, single measured faster: single");
    h.single_ps = 200;
    h.far = true;
    CHECK(!ob1x_hints_prefer_copy(&h, 65536, true), "stream, far, copy measured faster: single");
    h.far = false;
    h.adapt = false;
    CHECK(ob1x_hints_prefer_copy(&h, 65536, true), "stream, adapt off: copy");
    h.far = true;
    CHECK(!ob1x_hints_prefer_copy(&h, 65536, true), "stream, adapt off, far: single copy");
    return 0;
}

int main(void)
{
    if (0 != registry() || 0 != properties() || 0 != threads() || 0 != rule()) {
        return 1;
    }
    printf("PASS: %s\n", PROG);
    return 0;
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * copy_unit.c - unit test of the message-data copy shared by the ob1x
 * components (opal/mca/common/ob1x/common_ob1x_copy.*), no MPI traffic:
 * every length 0..9000 and a set up to 1 MiB + odd bytes, source and
 * destination at every offset 0..63 within a cache line and at distances
 * around the slow ones; each variant of the loop (AVX2 when the CPU has
 * it, SSE2) and the dispatcher; the bytes around the destination stay
 * untouched. Also the distance predicates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../btl/unit_check.h"

#include "../../opal/mca/common/ob1x/common_ob1x_copy.c"

#define PROG "foundation/copy_unit"
#define CHECK(cond, ...) UNIT_CHECK(cond, return 1, __VA_ARGS__)

typedef void (*copy_t)(void *, const void *, size_t);

#if defined(__x86_64__)
static void v_avx2(void *d, const void *s, size_t n)
{
    copy_avx2(d, s, n);
}
static void v_sse2(void *d, const void *s, size_t n)
{
    copy_sse2(d, s, n);
}
#endif

static int check_one(copy_t fn, const char *name, unsigned char *src, unsigned char *dstbase,
                     size_t n, size_t so, size_t doff)
{
    unsigned char *s = src + so, *d = dstbase + 128 + doff;
    for (size_t i = 0; i < n; ++i)
        s[i] = (unsigned char) (i * 31 + so * 7 + n);
    memset(d - 128, 0x5A, n + 256);
    fn(d, s, n);
    CHECK(0 == memcmp(d, s, n), "%s: n %zu src+%zu dst+%zu: data differs", name, n, so, doff);
    for (size_t g = 1; g <= 128; ++g)
        CHECK(0x5A == d[-(long) g] && 0x5A == d[n + g - 1],
              "%s: n %zu src+%zu dst+%zu: wrote outside the destination", name, n, so, doff);
    return 0;
}

int main(void)
{
    struct {
        copy_t fn;
        const char *name;
        size_t min;
    } v[3];
    int nv = 0, failures = 0;
    size_t big[] = {65536, 65536 + 31, 262144 + 5, 1048576 + 13};
    size_t maxn = 1048576 + 13 + 8192;
    unsigned char *src = aligned_alloc(4096, maxn), *dst = aligned_alloc(4096, maxn + 8192);

    v[nv].fn = ob1x_copy;
    v[nv].name = "ob1x_copy";
    v[nv++].min = 0;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        v[nv].fn = v_avx2;
        v[nv].name = "avx2 loop";
        v[nv++].min = 64;
    }
    v[nv].fn = v_sse2;
    v[nv].name = "sse2 loop";
    v[nv++].min = 64;
#endif
    for (int k = 0; k < nv; ++k) {
        for (size_t n = v[k].min; n <= 9000; n += (n < 300 ? 1 : 37))
            for (size_t so = 0; so < 64; so += 7)
                for (size_t doff = 0; doff < 64; doff += 5)
                    failures += check_one(v[k].fn, v[k].name, src, dst, n, so, doff);
        for (size_t b = 0; b < sizeof(big) / sizeof(big[0]); ++b)
            for (size_t doff = 0; doff < 4096; doff += (doff < 70 ? 1 : 1009))
                failures += check_one(v[k].fn, v[k].name, src, dst, big[b], 24, doff);
        printf("%s: %s checked\n", PROG, v[k].name);
    }
    {
        char *a = (char *) src;
        CHECK(!ob1x_copy_distance_slow(a, a) && ob1x_copy_distance_slow(a + 1, a) &&
                  ob1x_copy_distance_slow(a + 4096 + 15, a) &&
                  !ob1x_copy_distance_slow(a + 16, a) && !ob1x_copy_distance_slow(a, a + 8),
              "ob1x_copy_distance_slow");
        CHECK(8 == ob1x_copy_distance(a + 8192 + 8, a) && 4088 == ob1x_copy_distance(a, a + 8),
              "ob1x_copy_distance");
    }
    free(src);
    free(dst);
    if (failures)
        return 1;
    printf("PASS: %s\n", PROG);
    return 0;
}

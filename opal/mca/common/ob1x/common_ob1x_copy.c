/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_copy.c - vector copy loop for common_ob1x_copy.h: 32-byte
 * (AVX2) or 16-byte (SSE2) unaligned loads and aligned stores, four per
 * iteration; the first and last vector are written unaligned and may overlap
 * the aligned middle. Chosen once per process from the CPU's features;
 * plain memcpy elsewhere than x86-64.
 */
#include "common_ob1x_copy.h"

#if defined(__x86_64__)
#include <immintrin.h>

typedef void (*copy_fn_t)(unsigned char *, const unsigned char *, size_t);

__attribute__((target("avx2"))) static void copy_avx2(unsigned char *d, const unsigned char *s,
                                                      size_t n)
{
    __m256i last = _mm256_loadu_si256((const __m256i *) (s + n - 32));
    unsigned char *dlast = d + n - 32;
    size_t skew = 32 - ((uintptr_t) d & 31);

    _mm256_storeu_si256((__m256i *) d, _mm256_loadu_si256((const __m256i *) s));
    d += skew;
    s += skew;
    n -= skew;
    for (; n >= 128; n -= 128, d += 128, s += 128) {
        __m256i a = _mm256_loadu_si256((const __m256i *) s);
        __m256i b = _mm256_loadu_si256((const __m256i *) (s + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *) (s + 64));
        __m256i e = _mm256_loadu_si256((const __m256i *) (s + 96));
        _mm256_store_si256((__m256i *) d, a);
        _mm256_store_si256((__m256i *) (d + 32), b);
        _mm256_store_si256((__m256i *) (d + 64), c);
        _mm256_store_si256((__m256i *) (d + 96), e);
    }
    for (; n >= 32; n -= 32, d += 32, s += 32) {
        _mm256_store_si256((__m256i *) d, _mm256_loadu_si256((const __m256i *) s));
    }
    _mm256_storeu_si256((__m256i *) dlast, last);
}

static void copy_sse2(unsigned char *d, const unsigned char *s, size_t n)
{
    __m128i last = _mm_loadu_si128((const __m128i *) (s + n - 16));
    unsigned char *dlast = d + n - 16;
    size_t skew = 16 - ((uintptr_t) d & 15);

    _mm_storeu_si128((__m128i *) d, _mm_loadu_si128((const __m128i *) s));
    d += skew;
    s += skew;
    n -= skew;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *) s);
        __m128i b = _mm_loadu_si128((const __m128i *) (s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *) (s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *) (s + 48));
        _mm_store_si128((__m128i *) d, a);
        _mm_store_si128((__m128i *) (d + 16), b);
        _mm_store_si128((__m128i *) (d + 32), c);
        _mm_store_si128((__m128i *) (d + 48), e);
    }
    for (; n >= 16; n -= 16, d += 16, s += 16) {
        _mm_store_si128((__m128i *) d, _mm_loadu_si128((const __m128i *) s));
    }
    _mm_storeu_si128((__m128i *) dlast, last);
}

static copy_fn_t pick(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? copy_avx2 : copy_sse2;
}

void ob1x_copy_loop(void *dst, const void *src, size_t n)
{
    /* every thread that races here computes the same answer */
    static copy_fn_t fn;
    copy_fn_t f = __atomic_load_n(&fn, __ATOMIC_RELAXED);
    if (NULL == f) {
        f = pick();
        __atomic_store_n(&fn, f, __ATOMIC_RELAXED);
    }
    f((unsigned char *) dst, (const unsigned char *) src, n);
}

#else

void ob1x_copy_loop(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}

#endif

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_copy.h - the memory copy that pml/ob1x and btl/smcuda use for
 * message data.
 *
 * Why not plain memcpy: from 2 KiB up, glibc (2.36 here) copies with
 * `rep movsb` on CPUs that advertise fast string moves (ERMS/FSRM, e.g. AMD
 * EPYC), and on the build machine that instruction is the slower choice
 * for message data:
 *  - when the destination lies 1..15 bytes past the source modulo 4096 it
 *    runs 5-16 times slower (64 KiB: 19 us instead of 1.1 us), and up to
 *    2.5 times slower at 16..63 bytes; where message data lands relative to
 *    the user's buffer depends on header sizes and fragment offsets, so
 *    transfers hit those distances at random;
 *  - on data another core has just written or will read next (shared-memory
 *    fragments) it is slower at every distance: a stream of 256 KiB
 *    messages through smcuda's fragments moves 18.8 GB/s with the vector
 *    loop here against 10-11 GB/s with memcpy, 1-4 MiB 15-16 against 11.
 * The loop here uses plain vector loads and stores; below 2 KiB glibc's own
 * code does the same and is kept.
 */
#ifndef COMMON_OB1X_COPY_H
#define COMMON_OB1X_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Smallest copy that glibc does with `rep movsb`. */
#define OB1X_COPY_LOOP_MIN 2048

/* The vector loop; n >= 64, regions must not overlap. */
void ob1x_copy_loop(void *dst, const void *src, size_t n);

/* Distance of dst past src modulo 4096. */
static inline size_t ob1x_copy_distance(const void *dst, const void *src)
{
    return ((uintptr_t) dst - (uintptr_t) src) & 4095;
}

/* memcpy for message data (regions must not overlap). */
static inline void ob1x_copy(void *dst, const void *src, size_t n)
{
    if (n >= OB1X_COPY_LOOP_MIN) {
        ob1x_copy_loop(dst, src, n);
    } else {
        memcpy(dst, src, n);
    }
}

/* A few words of a header (regions must not overlap): word by word when n
 * is a multiple of 8, the usual header and handle sizes, so that no library
 * call sits on a rendezvous's way; memcpy otherwise. */
static inline void ob1x_copy_words(void *dst, const void *src, size_t n)
{
    if (0 == n % 8) {
        for (size_t k = 0; k < n; k += 8) {
            memcpy((unsigned char *) dst + k, (const unsigned char *) src + k, 8);
        }
        return;
    }
    memcpy(dst, src, n);
}

/* True when the kernel's copy for process_vm_readv/writev from src to dst
 * (also `rep movsb`) falls in its slowest case. */
static inline int ob1x_copy_distance_slow(const void *dst, const void *src)
{
    size_t d = ob1x_copy_distance(dst, src);
    return d >= 1 && d <= 15;
}

#endif /* COMMON_OB1X_COPY_H */

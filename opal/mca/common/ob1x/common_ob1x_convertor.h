/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_convertor.h - pack and unpack message data with ob1x_copy
 * (common_ob1x_copy.h) when the user's buffer is one contiguous host
 * region; through the Open MPI convertor (whose copies are plain memcpy)
 * for everything else: derived datatypes with gaps, heterogeneous peers,
 * GPU buffers, checksummed convertors.
 */
#ifndef COMMON_OB1X_CONVERTOR_H
#define COMMON_OB1X_CONVERTOR_H

#include <stdbool.h>
#include <sys/uio.h>

#include "opal/datatype/opal_convertor.h"

#include "common_ob1x_copy.h"

/* True when the convertor's data is local_size bytes in a row of host
 * memory in this process's own representation. */
static inline bool ob1x_convertor_flat(const opal_convertor_t *conv)
{
    return !opal_convertor_need_buffers(conv) &&
           !(conv->flags & (CONVERTOR_CUDA | CONVERTOR_CUDA_UNIFIED | CONVERTOR_WITH_CHECKSUM));
}

/* For a flat convertor (ob1x_convertor_flat): the address of the next
 * *n bytes at its position, *n lowered to what it holds, and the position
 * moved past them; the caller copies them in any order it likes. */
static inline const unsigned char *ob1x_convertor_flat_take(opal_convertor_t *conv, size_t *n)
{
    size_t pos = conv->bConverted, left = conv->local_size - pos;
    void *src;

    if (*n > left) {
        *n = left;
    }
    opal_convertor_get_current_pointer(conv, &src);
    pos += *n;
    opal_convertor_set_position(conv, &pos);
    return (const unsigned char *) src;
}

/* Packs up to `max` bytes at the convertor's position into dst and
 * advances it; returns the bytes packed. */
static inline size_t ob1x_convertor_pack(opal_convertor_t *conv, void *dst, size_t max)
{
    if (ob1x_convertor_flat(conv)) {
        const unsigned char *src = ob1x_convertor_flat_take(conv, &max);
        ob1x_copy(dst, src, max);
        return max;
    }
    struct iovec iov = {.iov_base = dst, .iov_len = max};
    uint32_t iov_count = 1;
    size_t packed = max;
    if (opal_convertor_pack(conv, &iov, &iov_count, &packed) < 0) {
        return 0;
    }
    return packed;
}

/* Pieces from this size are unpacked with memcpy (see below). */
#define OB1X_UNPACK_MEMCPY_MIN 16384

/* Unpacks the pieces at the convertor's position and advances it; data
 * beyond the receive buffer is dropped (the caller reports truncation). */
static inline void ob1x_convertor_unpack(opal_convertor_t *conv, struct iovec *iov,
                                         uint32_t iov_count)
{
    if (ob1x_convertor_flat(conv)) {
        size_t pos = conv->bConverted;
        for (uint32_t i = 0; i < iov_count && pos < conv->local_size; ++i) {
            size_t left = conv->local_size - pos;
            size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;
            void *dst;
            opal_convertor_get_offset_pointer(conv, pos, &dst);
            /* Large pieces into the user's buffer: glibc's copy (fast
             * string moves), which writes whole lines without reading the
             * destination first. The user's buffer is usually cold, and a
             * stream of 64 KiB-1 MiB messages through a 4 MiB window of
             * them moves 10.5-11 GB/s so against 6-8 with ob1x_copy's
             * plain stores. Not at the distances where that instruction is
             * slowest (common_ob1x_copy.h). */
            if (n >= OB1X_UNPACK_MEMCPY_MIN && !ob1x_copy_distance_slow(dst, iov[i].iov_base)) {
                memcpy(dst, iov[i].iov_base, n);
            } else {
                ob1x_copy(dst, iov[i].iov_base, n);
            }
            pos += n;
        }
        opal_convertor_set_position(conv, &pos);
        return;
    }
    size_t max_data = 0;
    for (uint32_t i = 0; i < iov_count; ++i) {
        max_data += iov[i].iov_len;
    }
    opal_convertor_unpack(conv, iov, &iov_count, &max_data);
}

#endif /* COMMON_OB1X_CONVERTOR_H */

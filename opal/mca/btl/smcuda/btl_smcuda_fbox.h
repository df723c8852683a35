/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_fbox.h - fast boxes: per-pair byte rings (layout in btl_smcuda_shm.h).
 *
 * Writer (sender) side: reserve -> copy payload -> publish (one release store
 * of the header word).  Reader (receiver) side: peek (one acquire load) ->
 * deliver -> advance -> publish tail once per poll.
 */
#ifndef MCA_BTL_SMCUDA_FBOX_H
#define MCA_BTL_SMCUDA_FBOX_H

#include "btl_smcuda.h"

/* Bytes a record of `len` payload bytes occupies. */
static inline uint32_t smcuda_fbox_rec_size(uint32_t len)
{
    return (uint32_t) SMCUDA_ALIGN(SMCUDA_FBOX_HDR_SIZE + len, SMCUDA_CACHE_LINE);
}

/* Protocol invariant: the first word of every cache line of the ring that
 * the writer may use next is zero.  The file starts zeroed, and the reader
 * clears the first word of each line of a record it has consumed before it
 * releases that space (tail).  Records start on line boundaries, so the
 * reader, which only looks at record starts, sees either zero or a
 * complete record: stale bytes of an earlier lap never pass for a header.
 * Clearing is done by the reader (plain stores, off the sender's critical
 * path) so that the line the reader polls next is not one the writer has
 * just touched.  The stamp in each header is a consistency check on top. */

/* Reserves room for a record with `len` payload bytes in the ring to `ep`.
 * Returns the payload pointer, or NULL when the ring lacks room.  A record
 * never crosses the end of the ring: it then goes to offset 0 and a skip
 * record fills the end (written by smcuda_fbox_publish). */
static inline unsigned char *smcuda_fbox_reserve(mca_btl_base_endpoint_t *ep, uint32_t len)
{
    uint32_t need = smcuda_fbox_rec_size(len);
    uint32_t size = ep->out_mask + 1;
    uint64_t head = ep->out_head;
    uint32_t at = (uint32_t) head & ep->out_mask;
    uint32_t room = size - at;
    bool wrap = need > room;
    uint64_t total = wrap ? (uint64_t) room + need : need;

    if (SMCUDA_UNLIKELY(head + total - ep->out_tail > size)) {
        /* acquire: the reader's loads from the records it has released are
         * complete before we overwrite them */
        ep->out_tail = __atomic_load_n(&ep->out_ctl->tail, __ATOMIC_ACQUIRE);
        if (head + total - ep->out_tail > size) {
            return NULL;
        }
    }
    ep->out_wrap = wrap;
    return ep->out_ring + (wrap ? 0 : at) + SMCUDA_FBOX_HDR_SIZE;
}

/* Publishes the record reserved last; its payload has been written. */
static inline void smcuda_fbox_publish(mca_btl_base_endpoint_t *ep, uint32_t len, uint8_t tag,
                                       uint16_t seq)
{
    uint32_t need = smcuda_fbox_rec_size(len);
    uint64_t head = ep->out_head;
    uint32_t at = (uint32_t) head & ep->out_mask;
    uint64_t rec = ep->out_wrap ? head + (ep->out_mask + 1 - at) : head;
    uint32_t rec_at = (uint32_t) rec & ep->out_mask;

    /* release: the payload is visible before the header that validates
     * the record */
    __atomic_store_n((uint64_t *) (ep->out_ring + rec_at), smcuda_fbox_word(rec, seq, len, tag, 0),
                     __ATOMIC_RELEASE);
    if (SMCUDA_UNLIKELY(ep->out_wrap)) {
        /* release: the record at offset 0 is complete before the skip
         * record sends the reader there */
        __atomic_store_n((uint64_t *) (ep->out_ring + at),
                         smcuda_fbox_word(head, 0, 0, 0, SMCUDA_FBOX_SKIP), __ATOMIC_RELEASE);
    }
    ep->out_head = rec + need;
}

/* Reader: the header word of the record at the current position, or 0 when
 * none is there yet.  Skip records are consumed here. */
static inline uint64_t smcuda_fbox_peek(mca_btl_base_endpoint_t *ep)
{
    for (;;) {
        uint64_t pos = ep->in_pos;
        /* acquire: pairs with the writer's release; the payload is visible */
        uint64_t w = __atomic_load_n((uint64_t *) (ep->in_ring + ((uint32_t) pos & ep->in_mask)),
                                     __ATOMIC_ACQUIRE);
        if (SMCUDA_LIKELY(0 == w)) {
            return 0;
        }
        if (SMCUDA_UNLIKELY(SMCUDA_FBOX_W_STAMP(w) != SMCUDA_FBOX_STAMP(pos))) {
            mca_btl_smcuda_report_corruption("fast-box stamp", ep->lrank);
            return 0;
        }
        if (SMCUDA_LIKELY(0 == (SMCUDA_FBOX_W_FLAGS(w) & SMCUDA_FBOX_SKIP))) {
            return w;
        }
        /* the writer wrote only this word of the skipped region */
        __atomic_store_n((uint64_t *) (ep->in_ring + ((uint32_t) pos & ep->in_mask)), 0,
                         __ATOMIC_RELAXED);
        ep->in_pos = pos + (ep->in_mask + 1) - ((uint32_t) pos & ep->in_mask);
    }
}

/* Reader: whether anything (a record, or a skip) may be at the current
 * position; a hint without ordering, smcuda_fbox_peek decides. */
static inline bool smcuda_fbox_pending(const mca_btl_base_endpoint_t *ep)
{
    return 0 !=
           __atomic_load_n((const uint64_t *) (ep->in_ring + ((uint32_t) ep->in_pos & ep->in_mask)),
                           __ATOMIC_RELAXED);
}

static inline unsigned char *smcuda_fbox_payload(mca_btl_base_endpoint_t *ep)
{
    return ep->in_ring + ((uint32_t) ep->in_pos & ep->in_mask) + SMCUDA_FBOX_HDR_SIZE;
}

/* Done with the current record: clear the first word of each of its lines
 * (see the invariant) and step over it. */
static inline void smcuda_fbox_consume(mca_btl_base_endpoint_t *ep, uint32_t len)
{
    uint32_t size = smcuda_fbox_rec_size(len);
    unsigned char *rec = ep->in_ring + ((uint32_t) ep->in_pos & ep->in_mask);

    for (uint32_t off = 0; off < size; off += SMCUDA_CACHE_LINE) {
        __atomic_store_n((uint64_t *) (rec + off), 0, __ATOMIC_RELAXED);
    }
    ep->in_pos += size;
}

/* Tells the writer how far we have read. */
static inline void smcuda_fbox_release(mca_btl_base_endpoint_t *ep)
{
    /* release: our reads of the consumed records, and the clearing
     * stores, complete before the writer can see the space as free */
    __atomic_store_n(&ep->in_ctl->tail, ep->in_pos, __ATOMIC_RELEASE);
}

#endif /* MCA_BTL_SMCUDA_FBOX_H */

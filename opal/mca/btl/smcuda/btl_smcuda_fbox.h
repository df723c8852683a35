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

/* Protocol invariant: when the writer comes back to a cache line of the
 * ring, the line's first word is either zero or the header word the
 * previous lap wrote there, whose stamp is SMCUDA_FBOX_STAMP(p - ring size)
 * and never SMCUDA_FBOX_STAMP(p) (a ring has fewer than 65536 lines).
 * Records start on line boundaries and the reader only looks at record
 * starts, so it sees either a record of this lap (stamp matches) or
 * something it takes for "not yet".  The reader keeps the invariant: it
 * clears the first word of a record's later lines (user bytes) and of
 * every line a skip record passed over (older headers) before it releases
 * that space (tail).
 *
 * Whether it also clears the header line is its choice.  A cleared line
 * comes back to the writer modified in the reader's cache; a line left
 * alone comes back shared.  Where the two cores share no cache, measured on
 * a 2-core VM: leaving the header line alone takes 12-16% off the one-way
 * time of a 1-2 line record, while records of three lines or more, and
 * records that pile up (message rate), measured faster with every line
 * cleared.  SMCUDA_FBOX_KEEP_MAX and the reader's drain loop
 * (btl_smcuda_recv.c) apply this.  The file starts zeroed. */

/* Largest record whose header line the reader leaves alone. */
#define SMCUDA_FBOX_KEEP_MAX (2 * SMCUDA_CACHE_LINE)

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

/* A header word that is neither this lap's nor the previous lap's at `pos`
 * (nor zero) was not written by the protocol. */
static inline bool smcuda_fbox_stale(const mca_btl_base_endpoint_t *ep, uint64_t w, uint64_t pos)
{
    return 0 == w || SMCUDA_FBOX_W_STAMP(w) == SMCUDA_FBOX_STAMP(pos - (ep->in_mask + 1));
}

/* Reader: the header word of the record at the current position, or 0 when
 * none is there yet.  Skip records are consumed here. */
static inline uint64_t smcuda_fbox_peek(mca_btl_base_endpoint_t *ep)
{
    for (;;) {
        uint64_t pos = ep->in_pos;
        uint32_t at = (uint32_t) pos & ep->in_mask;
        /* acquire: pairs with the writer's release; the payload is visible */
        uint64_t w = __atomic_load_n((uint64_t *) (ep->in_ring + at), __ATOMIC_ACQUIRE);
        if (SMCUDA_UNLIKELY(0 == w || SMCUDA_FBOX_W_STAMP(w) != SMCUDA_FBOX_STAMP(pos))) {
            if (SMCUDA_UNLIKELY(!smcuda_fbox_stale(ep, w, pos))) {
                mca_btl_smcuda_report_corruption("fast-box stamp", ep->lrank);
            }
            return 0;
        }
        if (SMCUDA_LIKELY(0 == (SMCUDA_FBOX_W_FLAGS(w) & SMCUDA_FBOX_SKIP))) {
            return w;
        }
        /* the writer wrote only the skip word; the other lines of the
         * region still hold whatever earlier laps left (see the invariant) */
        for (uint32_t off = at + SMCUDA_CACHE_LINE; off <= ep->in_mask; off += SMCUDA_CACHE_LINE) {
            __atomic_store_n((uint64_t *) (ep->in_ring + off), 0, __ATOMIC_RELAXED);
        }
        ep->in_pos = pos + (ep->in_mask + 1) - at;
    }
}

/* Reader: whether a record (or a skip) of this lap may be at the current
 * position; a hint without ordering, smcuda_fbox_peek decides. */
static inline bool smcuda_fbox_pending(const mca_btl_base_endpoint_t *ep)
{
    uint64_t pos = ep->in_pos;
    uint64_t w = __atomic_load_n((const uint64_t *) (ep->in_ring + ((uint32_t) pos & ep->in_mask)),
                                 __ATOMIC_RELAXED);
    return SMCUDA_FBOX_W_STAMP(w) == SMCUDA_FBOX_STAMP(pos);
}

static inline unsigned char *smcuda_fbox_payload(mca_btl_base_endpoint_t *ep)
{
    return ep->in_ring + ((uint32_t) ep->in_pos & ep->in_mask) + SMCUDA_FBOX_HDR_SIZE;
}

/* Done with the current record: clear the first word of its later lines
 * (see the invariant) and step over it.  Returns the header word when it
 * was left alone (a short record), for smcuda_fbox_hand_back, else NULL. */
static inline uint64_t *smcuda_fbox_consume(mca_btl_base_endpoint_t *ep, uint32_t len)
{
    uint32_t size = smcuda_fbox_rec_size(len);
    unsigned char *rec = ep->in_ring + ((uint32_t) ep->in_pos & ep->in_mask);

    for (uint32_t off = SMCUDA_CACHE_LINE; off < size; off += SMCUDA_CACHE_LINE) {
        __atomic_store_n((uint64_t *) (rec + off), 0, __ATOMIC_RELAXED);
    }
    ep->in_pos += size;
    if (size > SMCUDA_FBOX_KEEP_MAX) {
        __atomic_store_n((uint64_t *) rec, 0, __ATOMIC_RELAXED);
        return NULL;
    }
    return (uint64_t *) rec;
}

/* Clears a header word smcuda_fbox_consume left alone, before the tail is
 * released: for records that piled up (see the invariant). */
static inline void smcuda_fbox_hand_back(uint64_t *hdr)
{
    __atomic_store_n(hdr, 0, __ATOMIC_RELAXED);
}

/* Tells the writer how far we have read. */
static inline void smcuda_fbox_release(mca_btl_base_endpoint_t *ep)
{
    /* release: our reads of the consumed records, and the clearing
     * stores, complete before the writer can see the space as free */
    __atomic_store_n(&ep->in_ctl->tail, ep->in_pos, __ATOMIC_RELEASE);
}

#endif /* MCA_BTL_SMCUDA_FBOX_H */

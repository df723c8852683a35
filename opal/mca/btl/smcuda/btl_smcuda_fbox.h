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

/* Bytes a record of `len` payload bytes occupies: one slot, or whole
 * lines. */
static inline uint32_t smcuda_fbox_rec_size(uint32_t len)
{
    uint32_t bytes = SMCUDA_FBOX_HDR_SIZE + len;

    return (uint32_t) (bytes <= SMCUDA_FBOX_SLOT ? SMCUDA_FBOX_SLOT
                                                 : SMCUDA_ALIGN(bytes, SMCUDA_CACHE_LINE));
}

/* Offset of the first line that starts after ring offset `at`. */
static inline uint32_t smcuda_fbox_next_line(uint32_t at)
{
    return (at | (SMCUDA_CACHE_LINE - 1)) + 1;
}

/* Whether a record of `need` bytes at `rec` zeroes the second slot of its
 * line (the guard, see the invariant). */
static inline bool smcuda_fbox_guards(uint64_t rec, uint32_t need)
{
    return SMCUDA_FBOX_SLOT == need && 0 == (rec & (SMCUDA_CACHE_LINE - 1));
}

/* Reader: clears the first word of each line starting in ring offsets
 * [from, to) (the reader's half of the invariant). */
static inline void smcuda_fbox_clear_lines(unsigned char *ring, uint32_t from, uint32_t to)
{
    for (uint32_t off = from; off < to; off += SMCUDA_CACHE_LINE) {
        __atomic_store_n((uint64_t *) (ring + off), 0, __ATOMIC_RELAXED);
    }
}

/* Protocol invariant: at the writer's next position the first word is zero
 * or the header word the previous lap wrote there, whose stamp is
 * SMCUDA_FBOX_STAMP(p - ring size) and never SMCUDA_FBOX_STAMP(p) (a ring
 * has fewer than 65536 slots).  Records start on slot boundaries and the
 * reader only looks at record starts, so it sees either a record of this
 * lap (stamp matches) or something it takes for "not yet".
 *
 * A record is one slot or whole lines, and a record of whole lines starts
 * on a line (a pad record fills a second slot before it), so a second slot
 * is a record start only after a one-slot record on the first slot.  The
 * writer then zeroes the second slot along with its record (the same line:
 * no extra transfer).  For first slots the reader keeps the invariant:
 * before it releases the space (tail) it clears the first word of every
 * later line of a record (user bytes) and of every line a skip record
 * passes over (older headers).  Two small records share a line, as small
 * messages do in vader's rings: where the two cores share no cache every
 * line crossing counts (1-byte streams then beat vader's rate instead of
 * reaching 0.8-0.9 of it).
 *
 * Whether the reader also clears header lines is its choice.  A cleared
 * line comes back to the writer modified in the reader's cache; a line left
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
 * record fills the end.  A record of whole lines starts on a line: after a
 * one-slot record a pad record fills the second slot (both written by
 * smcuda_fbox_publish).  A one-slot record on the first slot of a line also
 * zeroes the second one (the guard), so that slot needs to be free too. */
static inline unsigned char *smcuda_fbox_reserve(mca_btl_base_endpoint_t *ep, uint32_t len)
{
    uint32_t need = smcuda_fbox_rec_size(len);
    uint32_t size = ep->out_mask + 1;
    uint64_t head = ep->out_head;
    uint32_t at = (uint32_t) head & ep->out_mask;
    uint32_t pad = need > SMCUDA_FBOX_SLOT && (at & (SMCUDA_CACHE_LINE - 1)) ? SMCUDA_FBOX_SLOT : 0;
    bool wrap = pad + need > size - at;
    uint64_t rec = wrap ? head + (size - at) : head + pad;
    uint64_t end = rec + (smcuda_fbox_guards(rec, need) ? SMCUDA_CACHE_LINE : need);

    if (SMCUDA_UNLIKELY(end - ep->out_tail > size)) {
        /* acquire: the reader's loads from the records it has released are
         * complete before we overwrite them */
        ep->out_tail = __atomic_load_n(&ep->out_ctl->tail, __ATOMIC_ACQUIRE);
        if (end - ep->out_tail > size) {
            return NULL;
        }
    }
    ep->out_rec = rec;
    return ep->out_ring + ((uint32_t) rec & ep->out_mask) + SMCUDA_FBOX_HDR_SIZE;
}

/* Writer: after a record of `need` bytes, fetches for writing the lines a
 * record of the same size would take next, past its first line, and at
 * least the line after that first line, where the ring is known to be free.
 * The reader cleared those lines, so they sit modified in its cache: every
 * store of a later record would otherwise wait for one to cross, and while
 * the sender waits, the reader catches up and polls the very line being
 * written.  Fetched while the application is between sends (or waiting for
 * the answer), they are local when the record is written.  The next
 * record's first line stays where it is: a reader that has caught up polls
 * it.  Measured on a 2-core VM whose cores share no cache: 512 B ping-pong
 * 0.48 -> 0.34 us; windowed rate 8 B +20%, 64 B +16%, 768 B +60%. */
static inline void smcuda_fbox_warm(mca_btl_base_endpoint_t *ep, uint64_t next, uint32_t need)
{
    uint64_t line = next & ~(uint64_t) (SMCUDA_CACHE_LINE - 1);
    uint64_t end = line + (need > 2 * SMCUDA_CACHE_LINE ? need : 2 * SMCUDA_CACHE_LINE);
    uint64_t free_end = ep->out_tail + ep->out_mask + 1;

    if (end > free_end) {
        end = free_end;
    }
    for (uint64_t l = line + SMCUDA_CACHE_LINE; l < end; l += SMCUDA_CACHE_LINE) {
        __builtin_prefetch(ep->out_ring + ((uint32_t) l & ep->out_mask), 1, 3);
    }
}

/* Publishes the record reserved last; its payload has been written. */
static inline void smcuda_fbox_publish(mca_btl_base_endpoint_t *ep, uint32_t len, uint8_t tag,
                                       uint16_t seq)
{
    uint32_t need = smcuda_fbox_rec_size(len);
    uint64_t head = ep->out_head;
    uint32_t at = (uint32_t) head & ep->out_mask;
    uint64_t rec = ep->out_rec;
    uint32_t rec_at = (uint32_t) rec & ep->out_mask;

    if (smcuda_fbox_guards(rec, need)) {
        /* the second slot of the line we are writing anyway */
        __atomic_store_n((uint64_t *) (ep->out_ring + rec_at + SMCUDA_FBOX_SLOT), 0,
                         __ATOMIC_RELAXED);
    }
    /* release: the payload (and the guard) are visible before the header
     * that validates the record */
    __atomic_store_n((uint64_t *) (ep->out_ring + rec_at), smcuda_fbox_word(rec, seq, len, tag, 0),
                     __ATOMIC_RELEASE);
    if (SMCUDA_UNLIKELY(rec != head)) {
        /* release: the record is complete before the pad or skip word that
         * sends the reader to it */
        __atomic_store_n(
            (uint64_t *) (ep->out_ring + at),
            smcuda_fbox_word(head, 0, 0, 0, rec_at < at ? SMCUDA_FBOX_SKIP : SMCUDA_FBOX_PAD),
            __ATOMIC_RELEASE);
    }
    ep->out_head = rec + need;
    smcuda_fbox_warm(ep, rec + need, need);
}

/* Whether a word at `pos` that is not this lap's header is one the protocol
 * leaves there (zero, or the previous lap's header); anything else is
 * corruption. */
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
        if (SMCUDA_LIKELY(0 == SMCUDA_FBOX_W_FLAGS(w))) {
            return w;
        }
        if (SMCUDA_FBOX_W_FLAGS(w) & SMCUDA_FBOX_PAD) {
            ep->in_pos = pos + SMCUDA_FBOX_SLOT; /* the record is on the next line */
            continue;
        }
        /* the writer wrote only the skip word; the other lines of the
         * region still hold whatever earlier laps left (see the invariant) */
        smcuda_fbox_clear_lines(ep->in_ring, smcuda_fbox_next_line(at), ep->in_mask + 1);
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

/* Done with the current record: clear the first word of the lines it
 * covers after its header's line (see the invariant) and step over it.
 * Returns the header word when it was left alone (a short record), for
 * smcuda_fbox_hand_back, else NULL. */
static inline uint64_t *smcuda_fbox_consume(mca_btl_base_endpoint_t *ep, uint32_t len)
{
    uint32_t size = smcuda_fbox_rec_size(len);
    uint32_t at = (uint32_t) ep->in_pos & ep->in_mask;
    unsigned char *rec = ep->in_ring + at;

    smcuda_fbox_clear_lines(ep->in_ring, smcuda_fbox_next_line(at), at + size);
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

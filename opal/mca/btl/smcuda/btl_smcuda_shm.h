/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_shm.h - everything that lives in shared memory, in one place.
 *
 * Each process owns one segment (a 0600 file in the backing directory,
 * mapped MAP_SHARED by every local peer of the same job, and later by local
 * peers of other jobs through /proc/<owner pid>/fd/<fd>: its name is gone by
 * then).  The owner is the receiver for the FIFO and the rings in its
 * segment, and the sender for the fragments in its pool:
 *
 *   offset 0           smcuda_seg_hdr_t      layout description + attach count
 *   jobs_off           smcuda_copy_job_t[SMCUDA_COPY_JOBS]  shared single-copy jobs
 *   guests_off         smcuda_guest_t[guest_count]  peers of other jobs that attached
 *   fifo_off           smcuda_fifo_t         receive FIFO (many producers, owner consumes)
 *   fbox_off           fbox_count x [smcuda_fbox_ctl_t + fbox_size bytes]
 *                                            one incoming ring per sender local rank
 *   frag_off           owner's fragment pool (smcuda_frag_hdr_t + payload each)
 *
 * Peers read the layout from the header, never from their own parameters, so
 * processes may run with different sizes.  SMCUDA_SHM_VERSION changes with
 * any change in this file; an attacher refuses a segment of another version.
 *
 * Memory ordering: all cross-process synchronization uses the GCC __atomic
 * builtins (C11 memory model) on naturally aligned 64- or 32-bit words.  Each
 * acquire/release below carries a comment saying what it orders.
 */
#ifndef MCA_BTL_SMCUDA_SHM_H
#define MCA_BTL_SMCUDA_SHM_H

#include <stdint.h>

#define SMCUDA_SHM_MAGIC 0x786331626f6d73ULL /* "smob1cx" */
#define SMCUDA_SHM_VERSION 7
#define SMCUDA_CACHE_LINE 64

#define SMCUDA_ALIGN(x, a) (((x) + ((a) -1)) & ~((uint64_t) (a) -1))

/* ------------------------------------------------------------------ */
/* segment header                                                      */
/* ------------------------------------------------------------------ */

typedef struct smcuda_seg_hdr_t {
    uint64_t magic;       /* SMCUDA_SHM_MAGIC; written before the segment is published */
    uint32_t version;     /* SMCUDA_SHM_VERSION */
    uint32_t n_local;     /* processes of the job on this node (owner included) */
    uint64_t seg_size;    /* bytes of the whole mapping */
    uint64_t fifo_off;    /* offset of the receive FIFO */
    uint32_t fifo_slots;  /* FIFO slot count, a power of two */
    uint32_t fbox_count;  /* incoming rings: one for each sender with local rank < fbox_count */
    uint64_t fbox_off;    /* offset of the control line of ring 0 */
    uint32_t fbox_size;   /* payload bytes of each ring, a power of two */
    uint32_t fbox_stride; /* bytes from one ring's control line to the next one's */
    uint64_t frag_off;    /* offset of the owner's fragment pool */
    uint64_t frag_size;   /* bytes of the fragment pool */
    int32_t owner_pid;    /* pid of the owner (single-copy target) */
    int32_t owner_lrank;  /* local rank of the owner */
    uint64_t owner_base;  /* address of the segment in the owner's address space */
    uint64_t jobs_off;    /* offset of the shared-copy job table */
    uint64_t guests_off;  /* offset of the guest table */
    uint32_t guest_count; /* its entries; a guest's sender id is n_local + its index */
    uint32_t rsvd0;
    uint8_t pad0[SMCUDA_CACHE_LINE * 2 - 112];
    /* own cache line, written only while peers attach: */
    /* processes that have mapped the segment, owner included.  Each
     * attacher increments it (acq_rel); the one that brings it to n_local
     * unlinks the backing file, so a killed job leaves no file. */
    uint32_t attached;
    /* bumped (release) by each sender after it set its ring's `active`; the
     * owner polls this one word to learn which rings to poll */
    uint32_t ring_epoch;
    uint8_t pad1[SMCUDA_CACHE_LINE - 8];
    /* own cache line: what the owner measured of its two ways of receiving a
     * large message, read by its senders and published to their upper layer
     * (btl_smcuda_path.c); relaxed stores and loads, hints only */
    uint32_t copy_ps;   /* picoseconds per byte of pipeline fragments arriving in a run */
    uint32_t get_ps;    /* picoseconds per byte of single-copy gets completing in a run */
    uint64_t copy_when; /* CLOCK_MONOTONIC ns of the last copy_ps update; 0: never */
    uint64_t get_when;  /* the same for get_ps */
    /* least time (ns) from a sender's FIFO push of a sampled pipeline
     * fragment to our pop of it, over the last SMCUDA_HANDOFF_SAMPLES:
     * what handing a cache line over costs between the two cores */
    uint32_t handoff_ns;
    uint32_t rsvd2;
    uint64_t handoff_when; /* CLOCK_MONOTONIC ns of its update; 0: never */
    uint8_t pad2[SMCUDA_CACHE_LINE - 40];
} smcuda_seg_hdr_t;

/* ------------------------------------------------------------------ */
/* receive FIFO: bounded multi-producer / single-consumer ring          */
/* ------------------------------------------------------------------ */

/* A slot is free for ticket t when seq == t, and full for the consumer at
 * ticket t when seq == t + 1.  The consumer frees it for the next lap by
 * storing seq = t + slots.  Producers claim tickets by CAS on `tail`, so a
 * full FIFO is detected without reserving anything (the sender queues). */
typedef struct smcuda_fifo_slot_t {
    uint64_t seq;   /* lap marker described above */
    uint64_t value; /* fragment reference: SMCUDA_FIFO_REF(sender local rank, pool offset) */
} smcuda_fifo_slot_t;

typedef struct smcuda_fifo_t {
    uint64_t tail; /* next ticket producers claim (CAS); own cache line */
    uint8_t pad[SMCUDA_CACHE_LINE - 8];
    smcuda_fifo_slot_t slots[]; /* fifo_slots entries */
} smcuda_fifo_t;

/* A fragment reference names its sender by the id under which the owner of
 * the FIFO knows it: the sender's local rank for a process of the owner's
 * job, n_local + its guest index for one of another job. */
#define SMCUDA_FIFO_REF(lrank, off) (((uint64_t) (lrank) << 48) | (uint64_t) (off))
#define SMCUDA_FIFO_REF_LRANK(ref) ((int) ((ref) >> 48))
#define SMCUDA_FIFO_REF_OFF(ref) ((ref) & ((1ULL << 48) - 1))

/* ------------------------------------------------------------------ */
/* fragments (pool of the sender, referenced through the receiver's FIFO) */
/* ------------------------------------------------------------------ */

typedef struct smcuda_frag_hdr_t {
    uint32_t len;      /* payload bytes following this header */
    uint8_t tag;       /* active-message tag the receiver dispatches on */
    uint8_t flags;     /* reserved, 0 */
    uint16_t seq;      /* per sender->receiver sequence number (shared with rings) */
    uint32_t complete; /* 0 in flight; the receiver stores 1 (release) after its callback */
    uint32_t stamp;    /* sampled pipeline fragments: low 32 bits of CLOCK_MONOTONIC ns at
                        * the push, odd; 0: not sampled (btl_smcuda_path.c) */
} smcuda_frag_hdr_t;

#define SMCUDA_FRAG_HDR_SIZE ((uint32_t) sizeof(smcuda_frag_hdr_t))
/* Largest eager_limit / max_send_size accepted: every process's pool holds
 * free_list_max + max_frags fragments, so much larger ones would ask for
 * tens of GiB of shared memory. */
#define SMCUDA_MAX_FRAG_SIZE ((size_t) 64 << 20)

/* ------------------------------------------------------------------ */
/* fast boxes: one single-producer / single-consumer byte ring per pair */
/* ------------------------------------------------------------------ */

/* The ring lives in the receiver's segment.  A record is one 32-byte slot
 * or whole 64-byte lines: an 8-byte header word followed by the payload.
 * Positions are monotonic byte counts; a record at position p carries stamp
 * SMCUDA_FBOX_STAMP(p), which differs from the stamp the previous lap left
 * there; receiver and sender zero the words that held user bytes before a
 * record may start there, so that nothing else can pass for a header
 * (btl_smcuda_fbox.h). */
typedef struct smcuda_fbox_ctl_t {
    uint64_t tail;   /* bytes consumed by the receiver; written only by it (release) */
    uint32_t active; /* set once by the sender when it starts using the ring */
    uint8_t pad[SMCUDA_CACHE_LINE - 12];
} smcuda_fbox_ctl_t;

/* header word: stamp:16 | seq:16 | len:16 | tag:8 | flags:8 */
#define SMCUDA_FBOX_HDR_SIZE 8
#define SMCUDA_FBOX_SLOT 32 /* a record is one slot or whole lines */
#define SMCUDA_FBOX_STAMP(pos) ((uint16_t) (((pos) / SMCUDA_FBOX_SLOT) + 1))
#define SMCUDA_FBOX_SKIP 0x01 /* flags: rest of the ring is unused, go to position 0 */
#define SMCUDA_FBOX_PAD 0x02  /* flags: this slot is unused, the record is on the next line */
#define SMCUDA_FBOX_MAX_PAYLOAD 65535

static inline uint64_t smcuda_fbox_word(uint64_t pos, uint16_t seq, uint32_t len, uint8_t tag,
                                        uint8_t flags)
{
    return (uint64_t) SMCUDA_FBOX_STAMP(pos) | ((uint64_t) seq << 16) | ((uint64_t) len << 32) |
           ((uint64_t) tag << 48) | ((uint64_t) flags << 56);
}
#define SMCUDA_FBOX_W_STAMP(w) ((uint16_t) (w))
#define SMCUDA_FBOX_W_SEQ(w) ((uint16_t) ((w) >> 16))
#define SMCUDA_FBOX_W_LEN(w) ((uint32_t) (((w) >> 32) & 0xffff))
#define SMCUDA_FBOX_W_TAG(w) ((uint8_t) ((w) >> 48))
#define SMCUDA_FBOX_W_FLAGS(w) ((uint8_t) ((w) >> 56))

/* ------------------------------------------------------------------ */
/* shared single-copy jobs                                              */
/* ------------------------------------------------------------------ */

/* A large btl_get is split in chunks that the reader (owner of the job
 * table) and the data owner both work on: the reader pulls chunks with
 * single-copy reads while the data owner, told through its ring, pushes
 * chunks with single-copy writes.  Whoever is idle takes the next chunk, so
 * a busy data owner costs nothing but its absence. */
#define SMCUDA_COPY_JOBS 16

typedef struct smcuda_copy_job_t {
    uint64_t src;   /* first byte in the data owner's address space */
    uint64_t dst;   /* first byte in the reader's address space */
    uint64_t len;   /* bytes */
    uint32_t chunk; /* bytes per chunk; the last one is the rest (shorter, or in a
                     * two-chunk job longer too: btl_smcuda_rdma.c) */
    uint32_t nchunks;
    uint8_t pad0[SMCUDA_CACHE_LINE - 32];
    /* generation:32 | next chunk:32.  Written (release) by the reader when
     * the job is posted; claimed by either side with CAS, which fails once
     * the generation has changed, so a late helper never touches a reused
     * slot.  src/dst/len are stable for a generation until `done` reaches
     * nchunks. */
    uint64_t claim;
    uint8_t pad1[SMCUDA_CACHE_LINE - 8];
    uint32_t done;   /* chunks finished; incremented (release) after each copy */
    uint32_t failed; /* set before `done` by a side whose copy failed */
    uint8_t pad2[SMCUDA_CACHE_LINE - 8];
} smcuda_copy_job_t;

/* ------------------------------------------------------------------ */
/* control messages (tag MCA_BTL_TAG_SMCUDA): the first word says which */
/* ------------------------------------------------------------------ */

enum {
    SMCUDA_CTL_COPY_REQ = 1,  /* smcuda_copy_req_t */
    SMCUDA_CTL_AMO = 2,       /* smcuda_amo_msg_t, origin -> target */
    SMCUDA_CTL_AMO_REPLY = 3, /* smcuda_amo_msg_t, target -> origin */
};

/* asks the data owner to help with a shared get */
typedef struct smcuda_copy_req_t {
    uint32_t kind;  /* SMCUDA_CTL_COPY_REQ */
    uint32_t lrank; /* reader's sender id at the owner (it owns the job table) */
    uint32_t job;   /* slot */
    uint32_t gen;   /* generation the request is for */
} smcuda_copy_req_t;

/* compare-and-swap travels as one more operation code */
#define SMCUDA_AMO_CSWAP 0xffffu

/* An atomic operation the target performs on its own memory, and the
 * reply that carries the old value back.  The reply is the request with
 * kind, value (old contents) and status filled in. */
typedef struct smcuda_amo_msg_t {
    uint32_t kind;    /* SMCUDA_CTL_AMO or SMCUDA_CTL_AMO_REPLY */
    uint16_t op;      /* mca_btl_base_atomic_op_t, or SMCUDA_AMO_CSWAP */
    uint16_t flags;   /* MCA_BTL_ATOMIC_FLAG_32BIT, MCA_BTL_ATOMIC_FLAG_FLOAT */
    uint32_t lrank;   /* origin's sender id at the target */
    uint32_t slot;    /* origin's operation slot: index (low 16 bits) + generation */
    uint64_t addr;    /* target address, in the target's address space */
    uint64_t operand; /* operand; the new value of a compare-and-swap */
    uint64_t compare; /* compare-and-swap: expected value */
    uint64_t lo, hi;  /* registered range that holds addr (checked by the target) */
    uint64_t value;   /* reply: contents of addr before the operation */
    int32_t status;   /* reply: OPAL_SUCCESS or an error */
    uint32_t rsvd;
} smcuda_amo_msg_t;

/* ------------------------------------------------------------------ */
/* guests: local peers of other jobs (MPI_Comm_spawn, connect/accept)   */
/* ------------------------------------------------------------------ */

/* Entry k names the process that sends to the owner under the id
 * n_local + k. The first process of a pair to attach claims both entries
 * (its own in the peer's table, the peer's in its own) before it sends
 * anything; the owner reads the entry when the first fragment with that id
 * arrives and maps the guest's segment through /proc. The owner gives the
 * entries of a guest that has exited back (state FREE) when a new guest
 * comes (btl_smcuda_guest.c). */
enum {
    SMCUDA_GUEST_FREE = 0,    /* unclaimed */
    SMCUDA_GUEST_CLAIMED = 1, /* taken, being filled in */
    SMCUDA_GUEST_READY = 2,   /* filled in (release) */
};

typedef struct smcuda_guest_t {
    uint32_t state; /* SMCUDA_GUEST_*; claimed by compare-and-swap */
    int32_t pid;    /* the guest's pid */
    int32_t fd;     /* descriptor of its segment in the guest (/proc/<pid>/fd/<fd>) */
    uint32_t jobid; /* its job and rank, for messages */
    uint32_t vpid;
    uint32_t rsvd;
    uint64_t seg_size; /* bytes of its segment */
} smcuda_guest_t;

/* ------------------------------------------------------------------ */
/* modex: what each process publishes about its segment                */
/* ------------------------------------------------------------------ */

typedef struct smcuda_modex_t {
    uint32_t version;  /* SMCUDA_SHM_VERSION */
    int32_t lrank;     /* local rank of the publisher */
    int32_t pid;       /* its pid */
    int32_t fd;        /* its descriptor of the segment: peers of other jobs
                        * open /proc/<pid>/fd/<fd> (the name is unlinked) */
    uint64_t seg_size; /* bytes to map */
    char path[256];    /* backing file */
} smcuda_modex_t;

_Static_assert(sizeof(smcuda_seg_hdr_t) == 4 * SMCUDA_CACHE_LINE, "segment header layout");
_Static_assert(sizeof(smcuda_guest_t) == 32, "guest entry layout");
_Static_assert(sizeof(smcuda_frag_hdr_t) == 16, "fragment header layout");
_Static_assert(sizeof(smcuda_fbox_ctl_t) == SMCUDA_CACHE_LINE, "ring control layout");
_Static_assert(sizeof(smcuda_copy_job_t) == 3 * SMCUDA_CACHE_LINE, "copy job layout");

#endif /* MCA_BTL_SMCUDA_SHM_H */

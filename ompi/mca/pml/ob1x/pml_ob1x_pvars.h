/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * The MPI_T performance variables of ob1x. Each send protocol (a row of
 * ob1x_protocols[], pml_ob1x_protocol.h) is counted under its name, and
 * every counter is exported as pml_ob1x_<name>, so tests can prove which
 * protocol carried a message.
 */
#ifndef PML_OB1X_PVARS_H
#define PML_OB1X_PVARS_H

#include <stdint.h>

#include "common_ob1x_pvar.h"

#include "pml_ob1x_protocol.h"

/* BTL modules whose bytes are counted apart (more share the last). */
#define OB1X_MAX_BTL_COUNTERS 8

/* Other counters, one MPI_T variable each. */
typedef enum ob1x_event {
    OB1X_EV_SYNCHRONOUS,          /* synchronous-mode sends */
    OB1X_EV_FLOW_CONTROL_RNDV,    /* sends forced to rendezvous by a congested receiver */
    OB1X_EV_OUT_OF_ORDER,         /* MATCH/RNDV received ahead of sequence */
    OB1X_EV_RESOURCE_RETRIES,     /* sends / control messages queued for lack of BTL resources */
    OB1X_EV_UNEXPECTED_HIGHWATER, /* largest unexpected-queue length seen (messages) */
    OB1X_EV_LATE_REQUEST,         /* non-blocking eager sends given a request after the send */
    OB1X_EV_ORPHAN,               /* messages held for a communicator not created here yet */
    OB1X_EV_FALLBACK_NONCONTIG,   /* RDMA refused: the receive buffer is not contiguous */
    OB1X_EV_FALLBACK_REGISTRATION, /* RDMA refused: the receiver could not register its buffer */
    OB1X_EV_FALLBACK_NO_BTL,      /* RDMA refused: no RDMA BTL in common with the sender */
    OB1X_EV_FALLBACK_FAILED,      /* RDMA ranges sent by FRAGs after failures beyond the limit */
    OB1X_EV_RDMA_RETRIES,         /* RDMA operations retried after a failure */
    OB1X_EV_REG_MADE,             /* registrations made with a BTL */
    OB1X_EV_REG_REUSED,           /* registrations served from the cache */
    OB1X_EV_HINT_COPY,            /* RDMA-eligible sends moved by the copy pipeline on BTL figures */
    OB1X_EV_CUDA_STAGED,          /* bytes copied between device memory and host copies */
    OB1X_EV_CUDA_RGET,            /* device RGETs sent (device memory read by the peer's BTL) */
    OB1X_EV_CUDA_ENABLED,         /* 1 once ob1x checks buffers for device memory */
    OB1X_EV_CUDA_STAGE_PINNED,    /* staging blocks pinned (cuMemHostAlloc) */
    OB1X_EV_CUDA_STAGE_REUSED,    /* staging blocks served from the pinned pool */
    OB1X_EV_CUDA_PIECEWISE,       /* staged messages whose copy overlapped the transfer */
    OB1X_EV_COUNT
} ob1x_event_t;

typedef struct ob1x_counters {
    uint64_t messages[OB1X_PROTO_COUNT];
    uint64_t bytes[OB1X_PROTO_COUNT];
    uint64_t events[OB1X_EV_COUNT];
    uint64_t unexpected_length; /* current number of unexpected messages */
    /* Payload bytes of rendezvous messages per BTL module (RNDV data,
     * FRAGs, gets, puts), in the order of pml_ob1x_rdma.c's BTL table;
     * pml_ob1x_bytes_<btl>. */
    uint64_t btl_bytes[OB1X_MAX_BTL_COUNTERS];
} ob1x_counters_t;

extern ob1x_counters_t ob1x_counters;

int ob1x_pvars_register_all(void);

/* Exact under MPI_THREAD_MULTIPLE, a plain add otherwise (common/ob1x). */
static inline void ob1x_count_protocol(ob1x_protocol_t proto, size_t bytes)
{
    (void) ob1x_counter_add(&ob1x_counters.messages[proto], 1);
    (void) ob1x_counter_add(&ob1x_counters.bytes[proto], bytes);
}

static inline void ob1x_count_event(ob1x_event_t ev)
{
    (void) ob1x_counter_add(&ob1x_counters.events[ev], 1);
}

/* Called with the communicator's matching lock held. */
static inline void ob1x_count_unexpected(int delta)
{
    /* kept as a two's-complement uint64_t: an MPI_T counter's type */
    int64_t now = (int64_t) ob1x_counter_add(&ob1x_counters.unexpected_length, (uint64_t) delta);

    if (now > (int64_t) ob1x_counters.events[OB1X_EV_UNEXPECTED_HIGHWATER]) {
        /* A racy max is fine: the lock of one communicator serialises its own
         * updates, and the mark is a diagnostic, not a limit. */
        ob1x_counters.events[OB1X_EV_UNEXPECTED_HIGHWATER] = (uint64_t) now;
    }
}

#endif /* PML_OB1X_PVARS_H */

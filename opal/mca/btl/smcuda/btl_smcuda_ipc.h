/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_ipc.h - the per-peer CUDA IPC handshake of btl/smcuda.
 *
 * IPC is set up lazily, per peer, by whichever side first needs to send a
 * device buffer to the other (docs/smcuda.md, "Accelerator hook"):
 *
 *   sender:   IPC_INIT --REQ--> IPC_SENT --ACK--> IPC_OK
 *                                        --NAK--> IPC_BAD
 *                                        --NOTREADY--> IPC_INIT (retry on
 *                                          the next device send; the 5th
 *                                          NOTREADY gives IPC_BAD)
 *   receiver: IPC_INIT --REQ--> IPC_ACKING --(check)--> IPC_ACKED, ACK
 *                                                   or IPC_BAD, NAK
 *             (no device yet: NOTREADY, state unchanged)
 *
 * The check: the peer's device, named by its UUID (ordinals differ between
 * processes under CUDA_VISIBLE_DEVICES), is ours, or both devices can
 * access each other (cuDeviceCanAccessPeer both ways). IPC_ACKED and
 * IPC_OK turn on large-message RDMA of device buffers for the endpoint
 * (rdma, read by the upper layer).
 *
 * Everything here is pure state over smcuda_ipc_peer_t: messages go out
 * through the peer's send callback, the device queries through a table
 * with the signatures of libmca_common_ob1x_cuda's, so that the whole
 * machine is driven without MPI by test/cuda/ipcstate.c. Not thread safe:
 * the caller serializes per peer (smcuda's per-peer send lock and its one
 * receiving thread).
 */
#ifndef BTL_SMCUDA_IPC_H
#define BTL_SMCUDA_IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Attempts of the sender before it gives up (seed: 5). */
#define SMCUDA_IPC_MAX_ATTEMPTS 5

typedef enum {
    SMCUDA_IPC_INIT = 0, /* nothing happened */
    SMCUDA_IPC_SENT,     /* our request is on its way */
    SMCUDA_IPC_ACKING,   /* checking a peer's request */
    SMCUDA_IPC_ACKED,    /* we acknowledged: IPC on */
    SMCUDA_IPC_OK,       /* our request was acknowledged: IPC on */
    SMCUDA_IPC_BAD,      /* no IPC with this peer, for good */
} smcuda_ipc_state_t;

typedef enum {
    SMCUDA_IPC_MSG_REQ = 0x49504301, /* "IPC" + kind: never a valid other word */
    SMCUDA_IPC_MSG_ACK,
    SMCUDA_IPC_MSG_NAK,
    SMCUDA_IPC_MSG_NOTREADY,
} smcuda_ipc_kind_t;

/* On the wire (same node, same ABI): what a control message carries. The
 * kinds differ from smcuda's other control kinds (SMCUDA_CTL_*), so they
 * share the first word of MCA_BTL_TAG_SMCUDA's messages. */
typedef struct {
    uint32_t kind;    /* smcuda_ipc_kind_t */
    uint32_t attempt; /* REQ: 1..SMCUDA_IPC_MAX_ATTEMPTS */
    uint32_t from;    /* the sender's local rank: finds its endpoint */
    uint32_t pad;
    unsigned char uuid[16]; /* REQ, ACK: the sender's device */
} smcuda_ipc_msg_t;

/* Device queries, as libmca_common_ob1x_cuda has them: 0 on success. */
typedef struct {
    int (*device_count)(int *count);
    int (*device_uuid)(int dev, unsigned char uuid[16]);
    int (*can_access_peer)(int dev, int peer, bool *can);
} smcuda_ipc_devq_t;

/* Hands msg to the peer; 0 when it is on its way. */
typedef int (*smcuda_ipc_send_fn_t)(void *ctx, const smcuda_ipc_msg_t *msg);

typedef struct {
    smcuda_ipc_state_t state;
    int attempts;    /* requests sent so far */
    int my_rank;     /* local ranks: when both sides request at once */
    int peer_rank;   /* the lower rank answers, the higher one waits */
    int device;      /* our device ordinal; -1: CUDA not initialised */
    bool rdma;       /* large-message RDMA of device buffers is on */
    const char *why; /* IPC_BAD: the cause, for a warning */
    const smcuda_ipc_devq_t *devq;
    smcuda_ipc_send_fn_t send;
    void *ctx;
} smcuda_ipc_peer_t;

void smcuda_ipc_peer_init(smcuda_ipc_peer_t *p, int my_rank, int peer_rank,
                          const smcuda_ipc_devq_t *devq, smcuda_ipc_send_fn_t send, void *ctx);

/* CUDA is initialised here and our device buffers live on device dev:
 * from now on a peer's request is answered. */
void smcuda_ipc_set_device(smcuda_ipc_peer_t *p, int dev);

/* A device buffer is about to go to this peer: sends a request when in
 * IPC_INIT (and a device is set). Returns true when IPC is on. */
bool smcuda_ipc_start(smcuda_ipc_peer_t *p);

/* A control message from the peer (len bytes). Messages that make no sense
 * in the current state are ignored. */
void smcuda_ipc_handle(smcuda_ipc_peer_t *p, const void *msg, size_t len);

/* The state's name, for messages and tests. */
const char *smcuda_ipc_state_name(smcuda_ipc_state_t s);

#endif /* BTL_SMCUDA_IPC_H */

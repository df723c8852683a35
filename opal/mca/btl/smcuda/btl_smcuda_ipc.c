/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_ipc.c - the per-peer CUDA IPC handshake (btl_smcuda_ipc.h).
 */
#include <string.h>

#include "btl_smcuda_ipc.h"

void smcuda_ipc_peer_init(smcuda_ipc_peer_t *p, int my_rank, int peer_rank,
                          const smcuda_ipc_devq_t *devq, smcuda_ipc_send_fn_t send, void *ctx)
{
    memset(p, 0, sizeof(*p));
    p->state = SMCUDA_IPC_INIT;
    p->my_rank = my_rank;
    p->peer_rank = peer_rank;
    p->device = -1;
    p->devq = devq;
    p->send = send;
    p->ctx = ctx;
}

void smcuda_ipc_set_device(smcuda_ipc_peer_t *p, int dev)
{
    p->device = dev;
}

const char *smcuda_ipc_state_name(smcuda_ipc_state_t s)
{
    static const char *const names[] = {"IPC_INIT",  "IPC_SENT", "IPC_ACKING",
                                        "IPC_ACKED", "IPC_OK",   "IPC_BAD"};

    return (unsigned) s < sizeof(names) / sizeof(names[0]) ? names[s] : "IPC_?";
}

static void go_bad(smcuda_ipc_peer_t *p, const char *why)
{
    p->state = SMCUDA_IPC_BAD;
    p->rdma = false;
    p->why = why;
}

static void go_on(smcuda_ipc_peer_t *p, smcuda_ipc_state_t s)
{
    p->state = s;
    p->rdma = true;
}

/* A message of kind, carrying our device's UUID where we have one. */
static int send_kind(smcuda_ipc_peer_t *p, smcuda_ipc_kind_t kind)
{
    smcuda_ipc_msg_t m;

    memset(&m, 0, sizeof(m));
    m.kind = (uint32_t) kind;
    m.attempt = (uint32_t) p->attempts;
    m.from = (uint32_t) p->my_rank;
    if (p->device >= 0 && 0 != p->devq->device_uuid(p->device, m.uuid)) {
        return -1;
    }
    return p->send(p->ctx, &m);
}

bool smcuda_ipc_start(smcuda_ipc_peer_t *p)
{
    if (SMCUDA_IPC_INIT != p->state || p->device < 0) {
        return p->rdma;
    }
    if (p->attempts >= SMCUDA_IPC_MAX_ATTEMPTS) {
        go_bad(p, "the peer never had CUDA initialised");
        return false;
    }
    p->attempts++;
    p->state = SMCUDA_IPC_SENT;
    if (0 != send_kind(p, SMCUDA_IPC_MSG_REQ)) {
        /* the attempt counts: a peer we cannot reach gets no endless retries */
        p->state = SMCUDA_IPC_INIT;
    }
    return false;
}

/* Whether our device and the peer's (by UUID) can map each other's memory:
 * the same device, or peer access both ways. NULL when they can, else why
 * not. */
static const char *check_peer(const smcuda_ipc_peer_t *p, const unsigned char uuid[16])
{
    unsigned char u[16];
    int n = 0, d;
    bool there = false, back = false;

    if (0 != p->devq->device_count(&n)) {
        return "the CUDA devices cannot be counted";
    }
    for (d = 0; d < n; d++) {
        if (0 == p->devq->device_uuid(d, u) && 0 == memcmp(u, uuid, 16)) {
            break;
        }
    }
    if (d == n) {
        return "the peer's device is not visible to this process";
    }
    if (d == p->device) {
        return NULL;
    }
    if (0 != p->devq->can_access_peer(p->device, d, &there) ||
        0 != p->devq->can_access_peer(d, p->device, &back) || !there || !back) {
        return "the two devices have no peer access";
    }
    return NULL;
}

static void on_request(smcuda_ipc_peer_t *p, const smcuda_ipc_msg_t *m)
{
    const char *why;

    if (SMCUDA_IPC_BAD == p->state) {
        (void) send_kind(p, SMCUDA_IPC_MSG_NAK); /* the peer stops asking too */
        return;
    }
    /* Both sides asked at once: the higher rank waits for the lower one's
     * answer to its own request and ignores the crossing one. */
    if (!(SMCUDA_IPC_INIT == p->state ||
          (SMCUDA_IPC_SENT == p->state && p->my_rank < p->peer_rank))) {
        return;
    }
    if (p->device < 0) {
        (void) send_kind(p, SMCUDA_IPC_MSG_NOTREADY);
        return;
    }
    p->state = SMCUDA_IPC_ACKING;
    why = check_peer(p, m->uuid);
    if (NULL != why) {
        go_bad(p, why);
        (void) send_kind(p, SMCUDA_IPC_MSG_NAK);
        return;
    }
    if (0 != send_kind(p, SMCUDA_IPC_MSG_ACK)) {
        go_bad(p, "the acknowledgement could not be sent");
        return;
    }
    go_on(p, SMCUDA_IPC_ACKED);
}

void smcuda_ipc_handle(smcuda_ipc_peer_t *p, const void *msg, size_t len)
{
    smcuda_ipc_msg_t m;

    if (len < sizeof(m)) {
        return;
    }
    memcpy(&m, msg, sizeof(m)); /* the payload may be unaligned */
    switch (m.kind) {
        case SMCUDA_IPC_MSG_REQ:
            on_request(p, &m);
            break;
        case SMCUDA_IPC_MSG_ACK:
            if (SMCUDA_IPC_SENT == p->state) {
                go_on(p, SMCUDA_IPC_OK);
            }
            break;
        case SMCUDA_IPC_MSG_NAK:
            if (SMCUDA_IPC_SENT == p->state) {
                go_bad(p, "the peer refused (no peer access between the devices)");
            }
            break;
        case SMCUDA_IPC_MSG_NOTREADY:
            if (SMCUDA_IPC_SENT == p->state) {
                p->state = SMCUDA_IPC_INIT;
                if (p->attempts >= SMCUDA_IPC_MAX_ATTEMPTS) {
                    go_bad(p, "the peer never had CUDA initialised");
                }
            }
            break;
        default:
            break;
    }
}

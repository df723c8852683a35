/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * ipcstate.c - btl/smcuda's per-peer CUDA IPC handshake
 * (opal/mca/btl/smcuda/btl_smcuda_ipc.c), without MPI: two state machines,
 * "rank 0" and "rank 1", talk through an in-memory queue; the device
 * queries are libmca_common_ob1x_cuda's against the driver emulation
 * (OB1X_CUEMU_DEVICES=2). Argument:
 *   peer     the emulation gives peer access (every path but "no access")
 *   nopeer   OB1X_CUEMU_NO_PEER=1: two devices refuse, one device works
 * Prints "PASS: ..." and exits 0, or "FAIL: ..." and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btl_smcuda_ipc.h"
#include "common_ob1x_cuda.h"

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL: ipcstate line %d: ", __LINE__);                                          \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* The queue: messages in flight, each with the side it goes to. */
#define QLEN 64
static struct {
    int to;
    smcuda_ipc_msg_t msg;
} queue[QLEN];
static int qhead, qtail;
static int sent[2][5]; /* per side, per kind (index kind - REQ) */
static int fail_send;  /* the next send callback fails */

static smcuda_ipc_peer_t side[2];
static const smcuda_ipc_devq_t devq = {ob1x_cuda_device_count, ob1x_cuda_device_uuid,
                                       ob1x_cuda_can_access_peer};

static int enqueue(void *ctx, const smcuda_ipc_msg_t *msg)
{
    int from = (int) (intptr_t) ctx;

    if (fail_send) {
        fail_send = 0;
        return -1;
    }
    CHECK(qtail - qhead < QLEN, "queue overflow");
    CHECK(msg->kind >= SMCUDA_IPC_MSG_REQ && msg->kind <= SMCUDA_IPC_MSG_NOTREADY &&
              msg->from == (uint32_t) from,
          "side %d sent kind %#x from %u", from, msg->kind, msg->from);
    queue[qtail % QLEN].to = 1 - from;
    queue[qtail % QLEN].msg = *msg;
    qtail++;
    sent[from][msg->kind - SMCUDA_IPC_MSG_REQ]++;
    return 0;
}

/* Delivers everything in flight, and what that sends, in order. */
static int deliver(void)
{
    int n = 0;

    for (; qhead < qtail; qhead++, n++) {
        int to = queue[qhead % QLEN].to;
        smcuda_ipc_handle(&side[to], &queue[qhead % QLEN].msg, sizeof(smcuda_ipc_msg_t));
    }
    return n;
}

/* Both sides fresh; dev < 0: CUDA not initialised on that side. */
static void reset(int dev0, int dev1)
{
    qhead = qtail = 0;
    memset(sent, 0, sizeof(sent));
    for (int s = 0; s < 2; s++) {
        smcuda_ipc_peer_init(&side[s], s, 1 - s, &devq, enqueue, (void *) (intptr_t) s);
        if ((s ? dev1 : dev0) >= 0) {
            smcuda_ipc_set_device(&side[s], s ? dev1 : dev0);
        }
    }
}

static void expect(int s, smcuda_ipc_state_t state, bool rdma, const char *what)
{
    CHECK(side[s].state == state && side[s].rdma == rdma,
          "%s: side %d is %s rdma %d, not %s rdma %d", what, s,
          smcuda_ipc_state_name(side[s].state), (int) side[s].rdma, smcuda_ipc_state_name(state),
          (int) rdma);
}

/* IPC on: side asker got the ACK, the other side sent it. */
static void enabled_by(int asker, const char *what)
{
    expect(asker, SMCUDA_IPC_OK, true, what);
    expect(1 - asker, SMCUDA_IPC_ACKED, true, what);
    CHECK(smcuda_ipc_start(&side[0]) && smcuda_ipc_start(&side[1]) && qhead == qtail,
          "%s: start on an enabled peer sends or says off", what);
}

static void enabled(const char *what)
{
    enabled_by(0, what);
}

static void one_way(int dev0, int dev1, const char *what)
{
    reset(dev0, dev1);
    CHECK(!smcuda_ipc_start(&side[0]), "%s: on before any answer", what);
    expect(0, SMCUDA_IPC_SENT, false, what);
    CHECK(2 == deliver(), "%s: not one request and one answer", what);
}

static void test_same_device(void)
{
    one_way(0, 0, "same device");
    enabled("same device");
    CHECK(1 == sent[0][0] && 1 == sent[1][1], "same device: messages");
}

static void test_peer_access(void)
{
    one_way(0, 1, "devices 0 and 1, peer access");
    enabled("devices 0 and 1, peer access");
    one_way(1, 0, "devices 1 and 0, peer access");
    enabled("devices 1 and 0, peer access");
}

static void test_no_peer_access(void)
{
    one_way(0, 1, "no peer access");
    expect(0, SMCUDA_IPC_BAD, false, "no peer access");
    expect(1, SMCUDA_IPC_BAD, false, "no peer access");
    CHECK(NULL != side[0].why && NULL != side[1].why && 1 == sent[1][2], "no peer access: NAK");
    CHECK(!smcuda_ipc_start(&side[0]) && !smcuda_ipc_start(&side[1]) && qhead == qtail,
          "no peer access: BAD sends again");
    printf("no peer access: %s / %s\n", side[0].why, side[1].why);
}

/* Both sides start before either hears the other: one pair of REQs, the
 * lower rank answers, the higher one's crossing request is ignored. */
static void test_both_start(int dev0, int dev1)
{
    reset(dev0, dev1);
    smcuda_ipc_start(&side[0]);
    smcuda_ipc_start(&side[1]);
    CHECK(3 == deliver(), "both start: not 2 requests and 1 answer");
    enabled_by(1, "both start"); /* rank 0 answered rank 1's request */
    CHECK(1 == sent[0][1] && 0 == sent[1][1], "both start: rank 1 answered");
}

static void test_notready_retry(void)
{
    reset(0, -1);
    smcuda_ipc_start(&side[0]);
    deliver();
    expect(0, SMCUDA_IPC_INIT, false, "notready");
    expect(1, SMCUDA_IPC_INIT, false, "notready (peer)");
    CHECK(1 == sent[1][3] && 1 == side[0].attempts, "notready: messages");
    CHECK(!smcuda_ipc_start(&side[1]) && qhead == qtail, "a side without device requested");
    smcuda_ipc_set_device(&side[1], 1);
    smcuda_ipc_start(&side[0]);
    deliver();
    enabled("notready, retry");
    CHECK(2 == side[0].attempts, "retry: %d attempts", side[0].attempts);
}

static void test_five_attempts(void)
{
    reset(0, -1);
    for (int i = 1; i <= SMCUDA_IPC_MAX_ATTEMPTS; i++) {
        CHECK(SMCUDA_IPC_INIT == side[0].state, "attempt %d: not in INIT", i);
        smcuda_ipc_start(&side[0]);
        deliver();
    }
    expect(0, SMCUDA_IPC_BAD, false, "5 attempts");
    CHECK(SMCUDA_IPC_MAX_ATTEMPTS == sent[0][0] && SMCUDA_IPC_MAX_ATTEMPTS == sent[1][3],
          "5 attempts: %d requests, %d notready", sent[0][0], sent[1][3]);
    smcuda_ipc_start(&side[0]);
    CHECK(qhead == qtail, "a 6th request");
    /* the peer initialises later and asks itself: refused, both BAD */
    smcuda_ipc_set_device(&side[1], 0);
    smcuda_ipc_start(&side[1]);
    deliver();
    expect(1, SMCUDA_IPC_BAD, false, "peer of a BAD side");
}

/* A request that cannot be sent counts as an attempt, stays in INIT. */
static void test_send_failure(void)
{
    reset(0, 0);
    fail_send = 1;
    smcuda_ipc_start(&side[0]);
    expect(0, SMCUDA_IPC_INIT, false, "failed send");
    smcuda_ipc_start(&side[0]);
    deliver();
    enabled("after a failed send");
    /* an answer that cannot be sent: the receiver is BAD, the sender waits */
    reset(0, 0);
    smcuda_ipc_start(&side[0]);
    fail_send = 1;
    deliver();
    expect(1, SMCUDA_IPC_BAD, false, "failed ACK");
    expect(0, SMCUDA_IPC_SENT, false, "failed ACK (sender)");
}

static void inject(int to, smcuda_ipc_kind_t kind, size_t len)
{
    smcuda_ipc_msg_t m;

    memset(&m, 0, sizeof(m));
    m.kind = kind;
    ob1x_cuda_device_uuid(0, m.uuid);
    smcuda_ipc_handle(&side[to], &m, len);
}

/* Messages that make no sense where they arrive change nothing and send
 * nothing. */
static void test_unexpected(void)
{
    smcuda_ipc_msg_t m;

    reset(0, 0);
    inject(0, SMCUDA_IPC_MSG_ACK, sizeof(m));
    inject(0, SMCUDA_IPC_MSG_NAK, sizeof(m));
    inject(0, SMCUDA_IPC_MSG_NOTREADY, sizeof(m));
    inject(0, (smcuda_ipc_kind_t) 7, sizeof(m));
    inject(0, SMCUDA_IPC_MSG_REQ, sizeof(m) - 1); /* short */
    expect(0, SMCUDA_IPC_INIT, false, "unexpected in INIT");
    CHECK(qhead == qtail, "unexpected in INIT: answered");

    one_way(0, 0, "before unexpected");
    for (int s = 0; s < 2; s++) {
        inject(s, SMCUDA_IPC_MSG_REQ, sizeof(m));
        inject(s, SMCUDA_IPC_MSG_ACK, sizeof(m));
        inject(s, SMCUDA_IPC_MSG_NAK, sizeof(m));
        inject(s, SMCUDA_IPC_MSG_NOTREADY, sizeof(m));
    }
    CHECK(qhead == qtail, "unexpected when enabled: answered");
    enabled("unexpected when enabled");

    /* a request naming a device that is not ours nor visible: refused */
    reset(-1, 0);
    memset(&m, 0xa5, sizeof(m));
    m.kind = SMCUDA_IPC_MSG_REQ;
    smcuda_ipc_handle(&side[1], &m, sizeof(m));
    expect(1, SMCUDA_IPC_BAD, false, "unknown UUID");
    CHECK(1 == sent[1][2], "unknown UUID: no NAK");
    deliver(); /* the NAK reaches side 0 in INIT: ignored */
    expect(0, SMCUDA_IPC_INIT, false, "NAK in INIT");
}

int main(int argc, char **argv)
{
    bool nopeer = argc > 1 && 0 == strcmp(argv[1], "nopeer");
    int n = 0;

    CHECK(0 == ob1x_cuda_init(true), "no CUDA driver (the emulation)");
    CHECK(0 == ob1x_cuda_device_count(&n) && 2 == n, "%d devices, not 2", n);
    test_same_device();
    test_both_start(0, 0);
    if (nopeer) {
        test_no_peer_access();
        test_both_start(0, 0);
    } else {
        test_peer_access();
        test_both_start(1, 0);
        test_notready_retry();
        test_five_attempts();
        test_send_failure();
        test_unexpected();
    }
    printf("PASS: ipcstate %s\n", nopeer ? "nopeer" : "peer");
    return 0;
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pml.c - pml/ob1x moves device (GPU) buffers: the driver emulation's
 * device memory (OB1X_CUEMU_PROTECT=1 by pml_run.sh: host code touching it
 * faults, as on a GPU). Two ranks (or one, sending to itself), every
 * direction (device->device, device->host, host->device) and size (0 B,
 * 1 B, eager, rendezvous, several MiB), every send mode (standard, Ssend,
 * Bsend, Rsend), Isend/Irecv with wildcards, persistent requests,
 * Mprobe/Mrecv, a strided (vector) device datatype whose gaps must stay
 * untouched; content checked through the emulation's copies. Counters:
 * pml_ob1x_cuda_bytes_staged grows on each side that has a device buffer
 * unless a device RGET carried the message (pml_ob1x_cuda_rget_device),
 * pml_ob1x_cuda_enabled is 1, and each start of a 5 MiB persistent device
 * send is copied piece by piece (pml_ob1x_cuda_stage_pieces; none with
 * --expect-whole, pieces off).
 * Arguments:
 *   --staged   no device RGET may happen (BTLs without device get)
 *   --nopvars  no pml/ob1x counters (another PML: pml_run.sh protect)
 *   --host     host buffers only: nothing staged (built as pml_host.c,
 *              without the emulation: the driver is never loaded, checked
 *              in /proc/self/maps, and pml_ob1x_cuda_enabled is 0)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpml.h"

#ifndef T_HOST_ONLY
#include "cuemu.h"
#endif

static int rank, nprocs, peer;
static int staged_only, host_only, no_pvars, expect_whole;

/* ---------------------------------------------------------------- MPI_T */

enum { PV_STAGED, PV_RGET_DEV, PV_ENABLED, PV_PINNED, PV_REUSED, PV_PIECES, PV_N };
static const char *const pv_names[PV_N] = {
    "pml_ob1x_cuda_bytes_staged", "pml_ob1x_cuda_rget_device",  "pml_ob1x_cuda_enabled",
    "pml_ob1x_cuda_stage_pinned", "pml_ob1x_cuda_stage_reused", "pml_ob1x_cuda_stage_pieces"};
static MPI_T_pvar_session pv_session;
static MPI_T_pvar_handle pv_handle[PV_N];

static void pv_setup(void)
{
    int n, provided;

    T_CHECK(MPI_SUCCESS == MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), "MPI_T_init");
    T_CHECK(MPI_SUCCESS == MPI_T_pvar_session_create(&pv_session), "pvar session");
    MPI_T_pvar_get_num(&n);
    for (int v = 0; v < PV_N; v++) {
        int idx = -1, count;
        for (int i = 0; i < n && idx < 0; i++) {
            char name[256], desc[1024];
            int nl = sizeof(name), dl = sizeof(desc), verb, cls, bind, ro, cont, atomic;
            MPI_Datatype dt;
            MPI_T_enum et;
            if (MPI_SUCCESS == MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &dt, &et, desc, &dl,
                                                   &bind, &ro, &cont, &atomic) &&
                0 == strcmp(name, pv_names[v])) {
                idx = i;
            }
        }
        T_CHECK(idx >= 0, "no MPI_T variable %s", pv_names[v]);
        T_CHECK(MPI_SUCCESS ==
                    MPI_T_pvar_handle_alloc(pv_session, idx, NULL, &pv_handle[v], &count),
                "handle of %s", pv_names[v]);
    }
}

static unsigned long long pv(int v)
{
    unsigned long long x = 0;

    if (no_pvars) {
        return 0;
    }
    T_CHECK(MPI_SUCCESS == MPI_T_pvar_read(pv_session, pv_handle[v], &x), "read %s", pv_names[v]);
    return x;
}

/* ------------------------------------------------------------- buffers */

typedef struct {
    int dev;          /* device memory */
    unsigned char *p; /* the buffer */
    size_t len;
} buf_t;

static void buf_alloc(buf_t *b, int dev, size_t len)
{
    b->dev = dev;
    b->len = len;
#ifndef T_HOST_ONLY
    if (dev) {
        b->p = cuemu_malloc(len + 1, 0);
        T_CHECK(NULL != b->p, "cuemu_malloc(%zu)", len);
        return;
    }
#endif
    b->p = t_malloc(len + 1);
}

static void buf_free(buf_t *b)
{
#ifndef T_HOST_ONLY
    if (b->dev) {
        cuemu_free(b->p);
        return;
    }
#endif
    free(b->p);
}

/* Host copies in and out (the emulation's copy for device memory: with
 * PROTECT the test itself must not touch it either). */
static void buf_put(buf_t *b, const void *src, size_t len)
{
#ifndef T_HOST_ONLY
    if (b->dev) {
        cuemu_memcpy(b->p, src, len);
        return;
    }
#endif
    memcpy(b->p, src, len);
}

static void buf_get(const buf_t *b, void *dst, size_t len)
{
#ifndef T_HOST_ONLY
    if (b->dev) {
        cuemu_memcpy(dst, b->p, len);
        return;
    }
#endif
    memcpy(dst, b->p, len);
}

static void buf_fill(buf_t *b, uint32_t seed)
{
    unsigned char *h = t_malloc(b->len + 1);
    t_fill(h, b->len, seed);
    buf_put(b, h, b->len);
    free(h);
}

static void buf_poison(buf_t *b)
{
    unsigned char *h = t_malloc(b->len + 1);
    memset(h, 0xee, b->len + 1);
    buf_put(b, h, b->len + 1);
    free(h);
}

/* The message arrived whole, and not a byte more (the guard byte). */
static void buf_check(const buf_t *b, size_t n, uint32_t seed, const char *ctx)
{
    unsigned char *h = t_malloc(b->len + 1);
    buf_get(b, h, b->len + 1);
    t_check_data(h, n, seed, ctx);
    T_CHECK(0xee == h[b->len], "%s: a byte written past the message", ctx);
    free(h);
}

/* --------------------------------------------------------------- cases */

typedef enum { P_SEND, P_SSEND, P_BSEND, P_RSEND, P_WILD, P_PERSIST, P_MRECV, P_N } pattern_t;
static const char *const p_names[P_N] = {
    "send", "ssend", "bsend", "rsend", "isend/irecv-any", "persistent", "mprobe/mrecv"};

/* One message src -> dst of len bytes with the pattern; sbuf/rbuf are
 * this rank's (NULL when it has no part). */
static void one(pattern_t p, buf_t *sbuf, buf_t *rbuf, int src, int dst, size_t len, int tag)
{
    MPI_Request rq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st;
    MPI_Message msg;
    int me_send = rank == src, me_recv = rank == dst;

    switch (p) {
        case P_SEND:
        case P_SSEND:
        case P_BSEND:
            if (me_recv) {
                T_MPI(MPI_Irecv(rbuf->p, (int) len, MPI_BYTE, src, tag, MPI_COMM_WORLD, &rq[1]));
            }
            if (me_send) {
                if (P_SEND == p) {
                    T_MPI(MPI_Send(sbuf->p, (int) len, MPI_BYTE, dst, tag, MPI_COMM_WORLD));
                } else if (P_SSEND == p) {
                    T_MPI(
                        MPI_Issend(sbuf->p, (int) len, MPI_BYTE, dst, tag, MPI_COMM_WORLD, &rq[0]));
                } else {
                    T_MPI(MPI_Bsend(sbuf->p, (int) len, MPI_BYTE, dst, tag, MPI_COMM_WORLD));
                }
            }
            break;
        case P_RSEND:
            if (me_recv) {
                T_MPI(MPI_Irecv(rbuf->p, (int) len, MPI_BYTE, src, tag, MPI_COMM_WORLD, &rq[1]));
            }
            T_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* the receive is posted */
            if (me_send) {
                T_MPI(MPI_Irsend(sbuf->p, (int) len, MPI_BYTE, dst, tag, MPI_COMM_WORLD, &rq[0]));
            }
            break;
        case P_WILD:
            if (me_recv) {
                T_MPI(MPI_Irecv(rbuf->p, (int) len, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                MPI_COMM_WORLD, &rq[1]));
            }
            if (me_send) {
                T_MPI(MPI_Isend(sbuf->p, (int) len, MPI_BYTE, dst, tag, MPI_COMM_WORLD, &rq[0]));
            }
            break;
        case P_PERSIST: {
            unsigned long long pieces0 = no_pvars ? 0 : pv(PV_PIECES);

            if (me_recv) {
                T_MPI(
                    MPI_Recv_init(rbuf->p, (int) len, MPI_BYTE, src, tag, MPI_COMM_WORLD, &rq[1]));
            }
            if (me_send) {
                T_MPI(
                    MPI_Send_init(sbuf->p, (int) len, MPI_BYTE, dst, tag, MPI_COMM_WORLD, &rq[0]));
            }
            /* a first start with other data: the second must carry the new */
            if (me_send) {
                buf_fill(sbuf, 7777);
                T_MPI(MPI_Start(&rq[0]));
            }
            if (me_recv) {
                T_MPI(MPI_Start(&rq[1]));
            }
            T_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
            if (me_recv) {
                buf_check(rbuf, len, 7777, "persistent, first start");
                buf_poison(rbuf);
            }
            if (me_send) {
                buf_fill(sbuf, t_seed((uint32_t) len, (uint32_t) tag, 1));
                T_MPI(MPI_Start(&rq[0]));
            }
            if (me_recv) {
                T_MPI(MPI_Start(&rq[1]));
            }
            T_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
            for (int i = 0; i < 2; i++) {
                if (MPI_REQUEST_NULL != rq[i]) {
                    T_MPI(MPI_Request_free(&rq[i]));
                }
            }
            /* each start of a large device send is copied piece by piece
             * (pml_ob1x_cuda_stage_piece, 1 MiB; with pieces off, whole) */
            if (me_send && sbuf->dev && !no_pvars && len >= (2u << 20)) {
                unsigned long long n = pv(PV_PIECES) - pieces0;
                T_CHECK(expect_whole ? 0 == n : n >= 2,
                        "persistent device send of %zu bytes: %llu of its 2 starts copied in "
                        "pieces (pieces %s)",
                        len, n, expect_whole ? "off" : "on");
            }
            return;
        }
        case P_MRECV:
            if (me_send) {
                T_MPI(MPI_Isend(sbuf->p, (int) len, MPI_BYTE, dst, tag, MPI_COMM_WORLD, &rq[0]));
            }
            if (me_recv) {
                T_MPI(MPI_Mprobe(src, tag, MPI_COMM_WORLD, &msg, &st));
                T_MPI(MPI_Imrecv(rbuf->p, (int) len, MPI_BYTE, &msg, &rq[1]));
            }
            break;
        default:
            T_FAIL("pattern %d", (int) p);
    }
    T_MPI(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    if (me_recv) {
        T_MPI(MPI_Wait(&rq[1], &st));
        t_check_status(&st, src, tag, (long) len, p_names[p]);
    }
}

/* Staged-byte and device-RGET deltas of one case, checked. */
static void check_counters(unsigned long long staged0, unsigned long long rget0, int my_dev,
                           size_t len, const char *ctx)
{
    unsigned long long staged = pv(PV_STAGED) - staged0, rget = pv(PV_RGET_DEV) - rget0, all;

    if (no_pvars) {
        return;
    }

    /* whether a device RGET carried it, on either side */
    T_MPI(MPI_Allreduce(&rget, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (staged_only || host_only) {
        T_CHECK(0 == all, "%s: %llu device RGETs where none can be", ctx, all);
    }
    if (!my_dev || 0 == len) {
        T_CHECK(0 == staged, "%s: %llu bytes staged for host buffers", ctx, staged);
    } else if (0 == all) {
        T_CHECK(staged >= len, "%s: device buffer, only %llu bytes staged", ctx, staged);
    }
}

/* The staging pool (pml_ob1x_cuda_stage.c): a rank that staged dozens of
 * messages pinned a few blocks (about one per size class in use at once)
 * and reused them; with --expect-no-pin (pml_ob1x_cuda_stage_cache 0, or
 * pinning refused by the driver) it pinned none and staged all the same.
 * Pieces (pml_ob1x_cuda_pieces.c): where everything is staged, the 5 MiB
 * contiguous messages were copied piece by piece on this rank's side (as
 * sender, receiver or both); --expect-whole: none (piece size 0). */
static void check_pool(int expect_no_pin, int expect_whole)
{
    unsigned long long pinned = pv(PV_PINNED), reused = pv(PV_REUSED), pieces = pv(PV_PIECES);

    if (no_pvars || host_only || 0 == pv(PV_STAGED)) {
        return;
    }
    t_log("staging pool: %llu blocks pinned, %llu reused; %llu messages copied in pieces", pinned,
          reused, pieces);
    if (expect_whole) {
        T_CHECK(0 == pieces, "%llu messages copied in pieces with pieces off", pieces);
    } else if (staged_only) {
        /* each side of the five device-to-device 5 MiB messages that are
         * neither buffered nor persistent (the receiver's pieces follow
         * FRAGs; a host sender may use RDMA, which lands whole) */
        T_CHECK(pieces >= 5, "only %llu staged 5 MiB messages were copied in pieces", pieces);
    }
    if (expect_no_pin) {
        T_CHECK(0 == pinned && 0 == reused, "%llu blocks pinned, %llu reused with pinning off",
                pinned, reused);
        return;
    }
    T_CHECK(pinned > 0, "device buffers were staged but no host block was pinned");
    T_CHECK(reused > 2 * pinned, "%llu pinned blocks reused only %llu times", pinned, reused);
    T_CHECK(pinned <= 24, "%llu blocks pinned: the pool does not keep them", pinned);
}

static void run_case(pattern_t p, int sdev, int rdev, size_t len, int tag);

/* --pool-classes (pml_ob1x_cuda_stage_cache 512 KiB, one rank to itself:
 * each message takes two blocks, the sender's and the receiver's): one
 * message of the 128 KiB size class leaves its blocks idle, then twelve of
 * the 256 KiB class need two blocks of 512 KiB in all. The pool must unpin
 * the idle smaller blocks to keep the larger ones, not pin a block anew
 * at every message. */
static void run_pool_classes(void)
{
    unsigned long long pinned0 = pv(PV_PINNED), pinned;

    run_case(P_SEND, 1, 1, 100000, 1);
    for (int i = 0; i < 12; ++i) {
        run_case(P_SEND, 1, 1, 200000, 2 + i);
    }
    pinned = pv(PV_PINNED) - pinned0;
    t_log("staging pool, two size classes: %llu blocks pinned, %llu reused", pinned, pv(PV_REUSED));
    T_CHECK(pinned <= 4,
            "%llu blocks pinned for 13 messages of two size classes: the pool "
            "unpins the blocks it is asked for again",
            pinned);
}

/* --warm (2 ranks over smcuda with CUDA IPC, a fresh job): a first device
 * message of eager size starts the IPC set-up with the peer, so the first
 * large device message after it goes by device RGET, not staged. The
 * receiver has passed a device buffer to MPI before (a message to itself):
 * a process that has not answers the request NOTREADY and the set-up
 * completes only at the sender's next device send (docs/cuda.md, "The
 * handshake"); without it, whether the request came before or after the
 * receiver's first device receive depended on which rank left a barrier
 * first, and a loaded machine staged the large message. */
static void run_warm(void)
{
    unsigned long long staged0, rget0;

    if (1 == rank) {
        buf_t out = {0}, in = {0};

        buf_alloc(&out, 1, 64);
        buf_alloc(&in, 1, 64);
        buf_fill(&out, 7);
        buf_poison(&in);
        T_MPI(MPI_Sendrecv(out.p, 64, MPI_BYTE, rank, 99, in.p, 64, MPI_BYTE, rank, 99,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        buf_check(&in, 64, 7, "a device message to itself");
        buf_free(&out);
        buf_free(&in);
    }
    run_case(P_SEND, 1, 1, 1000, 1);
    T_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* the handshake's answer came in first */
    staged0 = pv(PV_STAGED);
    rget0 = pv(PV_RGET_DEV);
    run_case(P_SEND, 1, 1, 3000000, 2);
    T_CHECK(pv(PV_STAGED) == staged0, "the first large device message was staged (%llu bytes)",
            pv(PV_STAGED) - staged0);
    if (0 == rank) {
        T_CHECK(pv(PV_RGET_DEV) - rget0 == 1,
                "the first large device message went by %llu "
                "device RGETs, not 1",
                pv(PV_RGET_DEV) - rget0);
    }
}

/* --direct-no-pin (2 ranks over smcuda with CUDA IPC): once IPC is up, a
 * device-to-device message of a size class not seen before goes by a
 * device RGET into the receive buffer itself, and the receiver takes no
 * host copy for it (no block pinned: the copy is taken only when a payload
 * needs it). */
static void run_direct_no_pin(void)
{
    unsigned long long pinned0, rget0;

    for (int i = 0; i < 4; ++i) { /* IPC set up by the first ones */
        run_case(P_SEND, 1, 1, 200000, 1 + i);
    }
    pinned0 = pv(PV_PINNED);
    rget0 = pv(PV_RGET_DEV);
    for (int i = 0; i < 4; ++i) {
        run_case(P_SEND, 1, 1, 3000000, 10 + i);
    }
    if (1 == rank) {
        T_CHECK(pv(PV_PINNED) == pinned0, "the receiver pinned %llu host blocks for device RGETs",
                pv(PV_PINNED) - pinned0);
    } else {
        T_CHECK(pv(PV_RGET_DEV) - rget0 == 4, "%llu of 4 messages went by device RGET",
                pv(PV_RGET_DEV) - rget0);
    }
}

static void run_case(pattern_t p, int sdev, int rdev, size_t len, int tag)
{
    int src = 0, dst = nprocs > 1 ? 1 : 0;
    buf_t sbuf = {0}, rbuf = {0};
    unsigned long long staged0, rget0;
    char ctx[160];
    int my_dev = 0;

    snprintf(ctx, sizeof(ctx), "%s %s->%s %zu B", p_names[p], sdev ? "dev" : "host",
             rdev ? "dev" : "host", len);
    if (rank == src) {
        buf_alloc(&sbuf, sdev, len);
        buf_fill(&sbuf, t_seed((uint32_t) len, (uint32_t) tag, 1));
        my_dev |= sdev;
    }
    if (rank == dst) {
        buf_alloc(&rbuf, rdev, len);
        buf_poison(&rbuf);
        my_dev |= rdev;
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    staged0 = pv(PV_STAGED);
    rget0 = pv(PV_RGET_DEV);
    one(p, rank == src ? &sbuf : NULL, rank == dst ? &rbuf : NULL, src, dst, len, tag);
    if (rank == dst) {
        buf_check(&rbuf, len, t_seed((uint32_t) len, (uint32_t) tag, 1), ctx);
    }
    check_counters(staged0, rget0, my_dev, len, ctx);
    if (rank == src) {
        buf_free(&sbuf);
    }
    if (rank == dst) {
        buf_free(&rbuf);
    }
}

/* A strided device buffer both ways: n blocks of 8 bytes every 24; the
 * receiver's gaps must keep their bytes. */
static void run_vector(int sdev, int rdev, int n)
{
    int src = 0, dst = nprocs > 1 ? 1 : 0;
    size_t span = (size_t) (n - 1) * 24 + 8;
    unsigned char *h = t_malloc(span + 1), *want = t_malloc(span + 1);
    unsigned long long staged0 = pv(PV_STAGED), rget0 = pv(PV_RGET_DEV), pieces0 = pv(PV_PIECES);
    MPI_Datatype vec;
    MPI_Request rq = MPI_REQUEST_NULL;
    buf_t sbuf = {0}, rbuf = {0};
    char ctx[96];
    int my_dev = 0, pieced = 0;

    snprintf(ctx, sizeof(ctx), "vector %s->%s %d blocks", sdev ? "dev" : "host",
             rdev ? "dev" : "host", n);
    T_MPI(MPI_Type_vector(n, 8, 24, MPI_BYTE, &vec));
    T_MPI(MPI_Type_commit(&vec));
    t_fill(h, span, 99);
    if (rank == dst) {
        buf_alloc(&rbuf, rdev, span);
        memset(want, 0x5a, span + 1);
        buf_put(&rbuf, want, span + 1);
        for (int i = 0; i < n; i++) {
            memcpy(want + (size_t) i * 24, h + (size_t) i * 24, 8);
        }
        T_MPI(MPI_Irecv(rbuf.p, 1, vec, src, 5, MPI_COMM_WORLD, &rq));
        my_dev |= rdev;
    }
    if (rank == src) {
        buf_alloc(&sbuf, sdev, span);
        buf_put(&sbuf, h, span);
        T_MPI(MPI_Send(sbuf.p, 1, vec, dst, 5, MPI_COMM_WORLD));
        my_dev |= sdev;
    }
    if (rank == dst) {
        T_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        buf_get(&rbuf, h, span + 1);
        T_CHECK(0 == memcmp(h, want, span + 1), "%s: data or gaps wrong", ctx);
        buf_free(&rbuf);
    }
    if (rank == src) {
        buf_free(&sbuf);
    }
    check_counters(staged0, rget0, my_dev, (size_t) n * 8, ctx);
    /* A span of two pieces or more is copied in pieces on a device side:
     * the sender's copy ahead of its FRAGs, the receiver's behind its
     * in-order unpacking (which passes a piece before the last FRAG when
     * there are several, i.e. between two processes). */
    pieced = (rank == src && sdev) || (rank == dst && rdev && nprocs > 1);
    if (!no_pvars && !host_only && !expect_whole && span >= ((size_t) 2 << 20) && pieced) {
        T_CHECK(pv(PV_PIECES) > pieces0, "%s: the device side's copy was not made in pieces", ctx);
    }
    T_MPI(MPI_Type_free(&vec));
    free(h);
    free(want);
}

/* A contiguous device send of rendezvous size into a strided receive
 * buffer: a device RGET (where a BTL offers one) is refused by the
 * receiver, and the sender stages at that point. */
static void run_refuse(int rdev, int n)
{
    int src = 0, dst = nprocs > 1 ? 1 : 0;
    size_t span = (size_t) (n - 1) * 24 + 8, len = (size_t) n * 8;
    unsigned char *h = t_malloc(span + 1), *want = t_malloc(span + 1);
    unsigned long long staged0 = pv(PV_STAGED), rget0 = pv(PV_RGET_DEV);
    MPI_Datatype vec;
    MPI_Request rq = MPI_REQUEST_NULL;
    buf_t sbuf = {0}, rbuf = {0};
    char ctx[96];
    int my_dev = 0;

    snprintf(ctx, sizeof(ctx), "contiguous dev->strided %s %zu B", rdev ? "dev" : "host", len);
    T_MPI(MPI_Type_vector(n, 8, 24, MPI_BYTE, &vec));
    T_MPI(MPI_Type_commit(&vec));
    if (rank == dst) {
        buf_alloc(&rbuf, rdev, span);
        memset(want, 0x5a, span + 1);
        buf_put(&rbuf, want, span + 1);
        T_MPI(MPI_Irecv(rbuf.p, 1, vec, src, 6, MPI_COMM_WORLD, &rq));
        my_dev |= rdev;
    }
    if (rank == src) {
        buf_alloc(&sbuf, 1, len);
        buf_fill(&sbuf, 1234);
        T_MPI(MPI_Send(sbuf.p, (int) len, MPI_BYTE, dst, 6, MPI_COMM_WORLD));
        my_dev = 1;
    }
    if (rank == dst) {
        T_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        t_fill(h, len, 1234);
        for (int i = 0; i < n; i++) {
            memcpy(want + (size_t) i * 24, h + (size_t) i * 8, 8);
        }
        buf_get(&rbuf, h, span + 1);
        T_CHECK(0 == memcmp(h, want, span + 1), "%s: data or gaps wrong", ctx);
        buf_free(&rbuf);
    }
    if (rank == src) {
        buf_free(&sbuf);
    }
    if (!no_pvars && rank == src) {
        /* staged at the entry, or after the refusal of a device RGET */
        T_CHECK(pv(PV_STAGED) - staged0 >= len, "%s: not staged", ctx);
    }
    (void) my_dev;
    (void) rget0;
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    T_MPI(MPI_Type_free(&vec));
    free(h);
    free(want);
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {0, 1, 1000, 200000, 5u << 20};
    const int nsizes = (int) (sizeof(sizes) / sizeof(sizes[0]));
    static const int dirs[3][2] = {{1, 1}, {1, 0}, {0, 1}};
    void *bsend_buf;
    int bsend_len = (int) (sizes[nsizes - 1] + 4 * MPI_BSEND_OVERHEAD), ncases = 0;

    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    peer = nprocs > 1 ? 1 - rank : 0;
    staged_only = t_has_arg(argc, argv, "--staged");
#ifdef T_HOST_ONLY
    host_only = 1;
#else
    host_only = t_has_arg(argc, argv, "--host");
#endif
    no_pvars = t_has_arg(argc, argv, "--nopvars");
    expect_whole = t_has_arg(argc, argv, "--expect-whole");
    if (!no_pvars) {
        pv_setup();
    }
    bsend_buf = t_malloc((size_t) bsend_len);
    T_MPI(MPI_Buffer_attach(bsend_buf, bsend_len));

    if (t_has_arg(argc, argv, "--warm")) {
        run_warm();
        T_MPI(MPI_Buffer_detach(&bsend_buf, &bsend_len));
        free(bsend_buf);
        return t_finalize();
    }
    if (t_has_arg(argc, argv, "--direct-no-pin")) {
        run_direct_no_pin();
        T_MPI(MPI_Buffer_detach(&bsend_buf, &bsend_len));
        free(bsend_buf);
        return t_finalize();
    }
    if (t_has_arg(argc, argv, "--pool-classes")) {
        run_pool_classes();
        T_MPI(MPI_Buffer_detach(&bsend_buf, &bsend_len));
        free(bsend_buf);
        return t_finalize();
    }
    for (int d = 0; d < (host_only ? 1 : 3); d++) {
        int sdev = host_only ? 0 : dirs[d][0], rdev = host_only ? 0 : dirs[d][1];
        for (int s = 0; s < nsizes; s++) {
            for (int p = 0; p < P_N; p++) {
                run_case((pattern_t) p, sdev, rdev, sizes[s], 10 * s + p);
                ncases++;
            }
        }
        run_vector(sdev, rdev, 3);
        run_vector(sdev, rdev, 50000);  /* rendezvous on every BTL */
        run_vector(sdev, rdev, 200000); /* 4.8 MB span: copied in pieces */
        ncases += 3;
    }
    if (!host_only) {
        run_refuse(0, 50000);
        run_refuse(1, 50000);
        ncases += 2;
    }
    if (t_has_arg(argc, argv, "--expect-device-rget")) {
        T_CHECK(pv(PV_RGET_DEV) > 0 || rank != 0, "no device RGET was sent");
    }
    T_CHECK(no_pvars || pv(PV_ENABLED) == (unsigned long long) !host_only,
            "pml_ob1x_cuda_enabled is %llu", pv(PV_ENABLED));
    check_pool(t_has_arg(argc, argv, "--expect-no-pin"), expect_whole);
#ifdef T_HOST_ONLY
    {
        FILE *maps = fopen("/proc/self/maps", "r");
        char line[1024];
        T_CHECK(NULL != maps, "/proc/self/maps");
        while (NULL != fgets(line, sizeof(line), maps)) {
            T_CHECK(NULL == strstr(line, "libcuda"), "the CUDA driver was loaded: %s", line);
        }
        fclose(maps);
    }
#endif
    T_MPI(MPI_Buffer_detach(&bsend_buf, &bsend_len));
    free(bsend_buf);
    if (0 == rank) {
        printf("cuda/pml: %d cases on %d process(es)%s, %llu bytes staged here\n", ncases, nprocs,
               host_only ? " (host only)" : "", pv(PV_STAGED));
    }
    return t_finalize();
}

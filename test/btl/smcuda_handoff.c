/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_handoff.c - a receiver learns how far away its sender is from
 * messages just above the eager limit too (btl_smcuda_path.c, "Far
 * receivers").
 *
 * A ping-pong of `size`-byte messages (default 6 KiB: with the default
 * limits two FIFO fragments within the eager limit each, no pipeline
 * fragment above it), every message verified. Then each rank:
 *   - has timed at least 16 fragments as hand-off samples
 *     (btl_smcuda_handoff_samples) and published a figure
 *     (btl_smcuda_handoff_ns > 0); before such fragments were sampled,
 *     only fragments above the eager limit were, and a 6 KiB ping-pong
 *     never learnt the figure;
 *   - where that figure makes the peer far (at least
 *     btl_smcuda_far_handoff_ns, below four times that), pml/ob1x moved
 *     later messages by RGET (pml_ob1x_rget_messages > 0); where it does
 *     not, every message went by the copy path (checked only where the
 *     figure is clear of those bounds by 10%).
 * Arguments: size=BYTES iters=N
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btl_util.h"

#define PROG "btl/smcuda_handoff"

/* A handle on pvar `name`; counters read from its allocation on. */
static MPI_T_pvar_handle pvar_open(MPI_T_pvar_session s, const char *name, int cls)
{
    MPI_T_pvar_handle h;
    int idx, count;

    BU_CHECK(MPI_SUCCESS == MPI_T_pvar_get_index(name, cls, &idx), "no pvar %s", name);
    BU_CHECK(MPI_SUCCESS == MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count), "alloc %s", name);
    return h;
}

static unsigned long long pvar_read(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = 0;

    BU_CHECK(MPI_SUCCESS == MPI_T_pvar_read(s, h, &v), "pvar read");
    return v;
}

static unsigned long long param(const char *name)
{
    MPI_T_cvar_handle h;
    unsigned long long v = 0;
    int idx, count;

    /* the MCA variable's value, read as text (its type is unsigned int) */
    BU_CHECK(MPI_SUCCESS == MPI_T_cvar_get_index(name, &idx), "no cvar %s", name);
    BU_CHECK(MPI_SUCCESS == MPI_T_cvar_handle_alloc(idx, NULL, &h, &count), "alloc %s", name);
    BU_CHECK(MPI_SUCCESS == MPI_T_cvar_read(h, &v), "read %s", name);
    MPI_T_cvar_handle_free(&h);
    return v & 0xffffffffull;
}

int main(int argc, char **argv)
{
    size_t size = 6144;
    int iters = 4000, provided, peer;
    unsigned long long samples, ns, far_ns, rget, pipe;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h[4];
    unsigned char *buf;

    for (int i = 1; i < argc; ++i) {
        if (0 == strncmp(argv[i], "size=", 5)) {
            size = (size_t) strtoull(argv[i] + 5, NULL, 0);
        } else if (0 == strncmp(argv[i], "iters=", 6)) {
            iters = atoi(argv[i] + 6);
        }
    }
    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &bu_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &bu_size);
    BU_CHECK(2 == bu_size, "needs 2 ranks");
    peer = 1 - bu_rank;
    BU_CHECK(MPI_SUCCESS == MPI_T_pvar_session_create(&s), "pvar session");
    h[0] = pvar_open(s, "btl_smcuda_handoff_samples", MPI_T_PVAR_CLASS_COUNTER);
    h[1] = pvar_open(s, "btl_smcuda_handoff_ns", MPI_T_PVAR_CLASS_LEVEL);
    h[2] = pvar_open(s, "pml_ob1x_rget_messages", MPI_T_PVAR_CLASS_COUNTER);
    h[3] = pvar_open(s, "pml_ob1x_sendrecv_pipeline_messages", MPI_T_PVAR_CLASS_COUNTER);
    buf = calloc(1, size);
    BU_CHECK(NULL != buf, "out of memory");
    for (int i = 0; i < iters; ++i) {
        if ((i & 1) == bu_rank) {
            bu_fill(buf, size, i);
            MPI_Send(buf, (int) size, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
        } else {
            memset(buf, 0, size);
            MPI_Recv(buf, (int) size, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            BU_CHECK(bu_verify(buf, size, i) < 0, "message %d: wrong byte at %ld", i,
                     bu_verify(buf, size, i));
        }
    }
    samples = pvar_read(s, h[0]);
    ns = pvar_read(s, h[1]);
    rget = pvar_read(s, h[2]);
    pipe = pvar_read(s, h[3]);
    far_ns = param("btl_smcuda_far_handoff_ns");
    printf("%s rank %d: %llu samples, hand-off %llu ns (far from %llu), sent %llu by RGET, %llu "
           "by the copy path\n",
           PROG, bu_rank, samples, ns, far_ns, rget, pipe);
    BU_CHECK(samples >= 16 && ns > 0, "no hand-off figure from %zu-byte messages", size);
    /* the peer's figure decides our choice: exchange them */
    {
        unsigned long long peer_ns = 0;
        MPI_Sendrecv(&ns, 1, MPI_UNSIGNED_LONG_LONG, peer, 8, &peer_ns, 1, MPI_UNSIGNED_LONG_LONG,
                     peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* Figures are renewed while the copy path is taken, and the
         * sender reads them every 256 messages: only a figure clear of the
         * thresholds by 10% says which way the last messages went. */
        if (10 * peer_ns >= 11 * far_ns && 10 * peer_ns < 36 * far_ns) {
            BU_CHECK(rget > 0, "peer far (%llu ns) but nothing sent by RGET", peer_ns);
        } else if (10 * peer_ns < 9 * far_ns) {
            BU_CHECK(0 == rget && pipe == (unsigned long long) iters / 2,
                     "peer near (%llu ns): %llu by RGET, %llu by the copy path of %d", peer_ns,
                     rget, pipe, iters / 2);
        }
    }
    for (int i = 0; i < 4; ++i) {
        MPI_T_pvar_handle_free(s, &h[i]);
    }
    MPI_T_pvar_session_free(&s);
    free(buf);
    MPI_T_finalize();
    MPI_Finalize();
    if (0 == bu_rank) {
        printf("%s: ok\n", PROG);
    }
    return 0;
}

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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/tpml.h"

/* A handle on one of smcuda's pvars (the harness holds pml/ob1x's);
 * a counter reads from the handle's allocation on. */
static MPI_T_pvar_handle pvar_open(MPI_T_pvar_session s, const char *name, int cls)
{
    MPI_T_pvar_handle h;
    int idx, count;

    T_CHECK(MPI_SUCCESS == MPI_T_pvar_get_index(name, cls, &idx), "no pvar %s", name);
    T_MPI(MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count));
    return h;
}

static unsigned long long pvar_read(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = 0;

    T_MPI(MPI_T_pvar_read(s, h, &v));
    return v;
}

int main(int argc, char **argv)
{
    size_t size = 6144;
    int iters = 4000, peer;
    unsigned long long samples, ns, peer_ns = 0, far_ns = 0, rget, pipe;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h[2];
    unsigned char *buf;

    for (int i = 1; i < argc; ++i) {
        if (0 == strncmp(argv[i], "size=", 5)) {
            size = (size_t) strtoull(argv[i] + 5, NULL, 0);
        } else if (0 == strncmp(argv[i], "iters=", 6)) {
            iters = atoi(argv[i] + 6);
        }
    }
    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    T_CHECK(2 == t_size, "needs 2 ranks");
    T_CHECK(t_cvar_ull("btl_smcuda_far_handoff_ns", &far_ns), "no btl_smcuda_far_handoff_ns");
    peer = 1 - t_rank;
    T_MPI(MPI_T_pvar_session_create(&s));
    h[0] = pvar_open(s, "btl_smcuda_handoff_samples", MPI_T_PVAR_CLASS_COUNTER);
    h[1] = pvar_open(s, "btl_smcuda_handoff_ns", MPI_T_PVAR_CLASS_LEVEL);
    buf = t_malloc(size);
    t_pingpong(buf, size, iters, peer, 7);
    samples = pvar_read(s, h[0]);
    ns = pvar_read(s, h[1]);
    rget = t_pv_read(T_PV_RGET_MSG);
    pipe = t_pv_read(T_PV_SRPIPE_MSG);
    printf("%s rank %d: %llu samples, hand-off %llu ns (far from %llu), sent %llu by RGET, %llu "
           "by the copy path\n",
           t_prog, t_rank, samples, ns, far_ns, rget, pipe);
    T_CHECK(samples >= 16 && ns > 0, "no hand-off figure from %zu-byte messages", size);
    /* the peer's figure decides our choice */
    T_MPI(MPI_Sendrecv(&ns, 1, MPI_UNSIGNED_LONG_LONG, peer, 8, &peer_ns, 1, MPI_UNSIGNED_LONG_LONG,
                       peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    /* Figures are renewed while the copy path is taken, and the sender
     * reads them every 256 messages: only a figure clear of the thresholds
     * by 10% says which way the last messages went. */
    if (10 * peer_ns >= 11 * far_ns && 10 * peer_ns < 36 * far_ns) {
        T_CHECK(rget > 0, "peer far (%llu ns) but nothing sent by RGET", peer_ns);
    } else if (10 * peer_ns < 9 * far_ns) {
        T_CHECK(0 == rget && pipe == (unsigned long long) iters / 2,
                "peer near (%llu ns): %llu by RGET, %llu by the copy path of %d", peer_ns, rget,
                pipe, iters / 2);
    }
    for (int i = 0; i < 2; ++i) {
        MPI_T_pvar_handle_free(s, &h[i]);
    }
    MPI_T_pvar_session_free(&s);
    free(buf);
    return t_finalize();
}

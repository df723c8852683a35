/*
 * resources.c - queue-and-retry under BTL resource exhaustion.
 *
 * Run with --mca pml_ob1x_fault_every N: every Nth BTL descriptor request of
 * ob1x then acts as if the BTL had none left, so first fragments, pipeline
 * fragments and control messages (ACK, CANCEL, FLOW) all go through the
 * pending queues. Both ranks send to each other at once, every mode, sizes
 * from 0 B to 2 MiB, non-blocking and blocking, and an unmatched Issend is
 * cancelled. Every byte is checked, and with --expect-retries the
 * pml_ob1x_resource_retries counter must have moved on both ranks: the
 * retries happened and nothing was lost or hung.
 */
#include "tpml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 3

static const size_t sizes[] = {0, 1, 200, 3000, 40000, 300000, 2u << 20};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define NMSG (NSIZES * T_MODE_COUNT)

static void exchange(int round)
{
    int peer = 1 - t_rank;
    MPI_Request reqs[2 * NMSG];
    unsigned char *sbuf[NMSG], *rbuf[NMSG];
    size_t len[NMSG];
    int n = 0;

    /* Receives first for ready mode, then a barrier so they are posted. */
    for (size_t i = 0; i < NMSG; i++) {
        len[i] = sizes[i % NSIZES];
        rbuf[i] = t_malloc(len[i] + 1);
        T_MPI(
            MPI_Irecv(rbuf[i], (int) len[i], MPI_BYTE, peer, (int) i, MPI_COMM_WORLD, &reqs[n++]));
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (size_t i = 0; i < NMSG; i++) {
        t_mode mode = (t_mode) (i / NSIZES);
        sbuf[i] = t_malloc(len[i] + 1);
        t_fill(sbuf[i], len[i], t_seed((uint32_t) t_rank, (uint32_t) i, (uint32_t) round));
        T_MPI(t_isend_mode(mode, sbuf[i], (int) len[i], MPI_BYTE, peer, (int) i, MPI_COMM_WORLD,
                           &reqs[n++]));
    }
    T_MPI(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
    for (size_t i = 0; i < NMSG; i++) {
        char ctx[96];
        snprintf(ctx, sizeof(ctx), "round %d message %zu (%zu B, %s)", round, i, len[i],
                 t_mode_name((t_mode) (i / NSIZES)));
        t_check_data(rbuf[i], len[i], t_seed((uint32_t) peer, (uint32_t) i, (uint32_t) round), ctx);
        free(sbuf[i]);
        free(rbuf[i]);
    }
}

/* A blocking rendezvous in each direction, one after the other. */
static void blocking(int round)
{
    size_t n = 1u << 20;
    unsigned char *b = t_malloc(n);
    uint32_t seed = t_seed(7, (uint32_t) round, 0);
    MPI_Status st;

    if (0 == t_rank) {
        t_fill(b, n, seed);
        T_MPI(MPI_Ssend(b, (int) n, MPI_BYTE, 1, 1000, MPI_COMM_WORLD));
        T_MPI(MPI_Recv(b, (int) n, MPI_BYTE, 1, 1001, MPI_COMM_WORLD, &st));
        t_check_data(b, n, seed + 1, "blocking reply");
    } else {
        T_MPI(MPI_Recv(b, (int) n, MPI_BYTE, 0, 1000, MPI_COMM_WORLD, &st));
        t_check_data(b, n, seed, "blocking send");
        t_fill(b, n, seed + 1);
        T_MPI(MPI_Send(b, (int) n, MPI_BYTE, 0, 1001, MPI_COMM_WORLD));
    }
    free(b);
}

/* CANCEL and CANCEL_ACK are control messages too. */
static void cancel_unmatched(void)
{
    char c = 'x';
    MPI_Request r;
    MPI_Status st;
    int flag = 0;

    if (0 == t_rank) {
        T_MPI(MPI_Issend(&c, 1, MPI_CHAR, 1, 2000, MPI_COMM_WORLD, &r));
        T_MPI(MPI_Cancel(&r));
        T_MPI(MPI_Wait(&r, &st));
        T_MPI(MPI_Test_cancelled(&st, &flag));
        T_CHECK(flag, "an unmatched Issend was not cancelled under resource exhaustion");
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (1 == t_rank) {
        T_MPI(MPI_Iprobe(0, 2000, MPI_COMM_WORLD, &flag, &st));
        T_CHECK(!flag, "the cancelled Issend can still be received");
    }
}

int main(int argc, char **argv)
{
    t_snap before, after;
    unsigned long long retries;
    int expect = 0;

    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    expect = t_has_arg(argc, argv, "--expect-retries");
    T_CHECK(2 == t_size, "run with 2 ranks");
    {
        /* room for one round of buffered sends */
        int bsize = 0;
        for (size_t i = 0; i < NSIZES; i++)
            bsize += (int) sizes[i] + MPI_BSEND_OVERHEAD;
        T_MPI(MPI_Buffer_attach(t_malloc((size_t) bsize), bsize));
    }
    t_snap_take(&before);
    for (int round = 0; round < ROUNDS; round++) {
        exchange(round);
        blocking(round);
    }
    cancel_unmatched();
    {
        void *b;
        int bsize;
        T_MPI(MPI_Buffer_detach(&b, &bsize));
        free(b);
    }
    t_snap_take(&after);
    retries = t_snap_delta(&before, &after, T_PV_RES_RETRIES);
    t_log("resource retries on rank %d: %llu", t_rank, retries);
    if (expect) {
        T_CHECK(retries > 0, "no send or control message was retried: the fault injection "
                             "did not reach the pending queues");
    }
    return t_finalize();
}

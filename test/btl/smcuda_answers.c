/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_answers.c - ring records that answer a record of the peer are
 * written with their first cache line last (btl_smcuda_sendi.c,
 * fill_first_last); every byte still arrives where it belongs.
 *
 * 2 ranks, whatever PML the list gives. For each size from 1 to 2100
 * bytes (every offset at which the payload crosses into a record's second
 * line, and on to the ring's largest records):
 *   - a verified ping-pong of 4 messages of contiguous bytes: every send
 *     but rank 0's first answers a record, so the sizes of two lines and
 *     more count in btl_smcuda_fbox_answers;
 *   - the same with a strided datatype (a vector of 3-byte blocks every 5
 *     bytes): the data goes through the convertor, in order, and the gaps
 *     of the receive buffer stay untouched;
 * then a one-way window of 32 messages of 300 bytes, also verified (sends
 * that answer nothing: in order).
 * Checks: the data; fbox_answers at least the ping-pong answers of the
 * contiguous sizes up to 1 KiB that take two lines or more (each message of
 * this rank but rank 0's first of a size, counted low: only the job's
 * very first send answers nothing), the PML's header hdr=BYTES (default
 * 14, ob1's and ob1x's match header).
 */
#include <stdbool.h>

#include "btl_util.h"

#define PROG "btl/smcuda_answers"
#define MAX_SIZE 2100
#define ROUNDS 4
#define WINDOW 32
#define RGET_SIZE 65536
#define RGET_ROUNDS 16
/* sizes that surely go through the ring (btl_smcuda_fbox_max_size 2048,
 * and btl_smcuda_fbox_far_max_size 1024 once the peer is measured far,
 * header included) */
#define RING_SURE 1000

/* Bytes of a record before the payload: the ring's header word and the
 * PML's match header. */
static size_t record_head;

static void pingpong(unsigned char *buf, MPI_Datatype dt, int count, size_t bytes, size_t extent,
                     int seed)
{
    int peer = 1 - bu_rank;

    for (int r = 0; r < ROUNDS; ++r) {
        if ((r & 1) == bu_rank) {
            bu_fill(buf, extent, seed + r);
            MPI_Send(buf, count, dt, peer, r, MPI_COMM_WORLD);
        } else {
            memset(buf, 0xa5, extent);
            MPI_Recv(buf, count, dt, peer, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (MPI_BYTE == dt) {
                long bad = bu_verify(buf, bytes, seed + r);
                BU_CHECK(bad < 0, "%zu B contiguous, round %d: byte %ld wrong", bytes, r, bad);
            } else {
                /* blocks of 3 bytes every 5: data where the blocks are, the
                 * fill byte in the gaps */
                for (size_t i = 0; i < extent; ++i) {
                    bool data = i % 5 < 3;
                    unsigned char want = data ? bu_byte(i, extent, seed + r) : 0xa5;
                    BU_CHECK(buf[i] == want, "%zu B strided, round %d: byte %zu %s", bytes, r, i,
                             data ? "wrong" : "of a gap written");
                }
            }
        }
    }
}

int main(int argc, char **argv)
{
    const char *hdr;
    unsigned char *buf;
    unsigned long long answers0, answers, expected = 0;

    bu_init(&argc, &argv);
    BU_CHECK(2 == bu_size, "needs 2 ranks");
    hdr = bu_arg(argc, argv, "hdr");
    record_head = 8 + (NULL != hdr ? (size_t) atoi(hdr) : 14);
    buf = malloc(5 * MAX_SIZE + 64);
    BU_CHECK(NULL != buf, "malloc");
    answers0 = bu_named_counter("btl_smcuda_fbox_answers");

    for (size_t n = 1; n <= MAX_SIZE; ++n) {
        pingpong(buf, MPI_BYTE, (int) n, n, n, (int) n);
        if (record_head + n > 64 && n <= RING_SURE) {
            expected += ROUNDS / 2 - (0 == bu_rank); /* rank 0's first answers nothing */
        }
    }
    answers = bu_named_counter("btl_smcuda_fbox_answers") - answers0;

    for (int blocks = 1; blocks <= MAX_SIZE / 3; blocks += 7) {
        MPI_Datatype dt;
        MPI_Type_vector(blocks, 3, 5, MPI_BYTE, &dt);
        MPI_Type_commit(&dt);
        pingpong(buf, dt, 1, 3 * (size_t) blocks, 5 * (size_t) blocks - 2, 7 * blocks);
        MPI_Type_free(&dt);
    }

    /* a window of sends in a row, then one zero-byte reply */
    {
        MPI_Request req[WINDOW];
        for (int i = 0; i < WINDOW; ++i) {
            if (0 == bu_rank) {
                bu_fill(buf + i * 300, 300, 1000 + i);
                MPI_Isend(buf + i * 300, 300, MPI_BYTE, 1, 500, MPI_COMM_WORLD, &req[i]);
            } else {
                memset(buf + i * 300, 0, 300);
                MPI_Irecv(buf + i * 300, 300, MPI_BYTE, 0, 500, MPI_COMM_WORLD, &req[i]);
            }
        }
        MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
        if (1 == bu_rank) {
            for (int i = 0; i < WINDOW; ++i) {
                long bad = bu_verify(buf + i * 300, 300, 1000 + i);
                BU_CHECK(bad < 0, "window message %d: byte %ld wrong", i, bad);
            }
        }
    }

    if (NULL != bu_arg(argc, argv, "rget")) {
        /* 64 KiB by RGET (pml/ob1x): each side's RGET follows the FIN of
         * the one it answers, a record of one line, and is a header longer
         * than the first line: all but a side's first go first line last */
        unsigned long long before = bu_named_counter("btl_smcuda_fbox_answers"), rgets;
        unsigned char *big = malloc(RGET_SIZE);

        BU_CHECK(NULL != big, "malloc");
        for (int r = 0; r < RGET_ROUNDS; ++r) {
            if ((r & 1) == bu_rank) {
                bu_fill(big, RGET_SIZE, 77 + r);
                MPI_Send(big, RGET_SIZE, MPI_BYTE, 1 - bu_rank, 600 + r, MPI_COMM_WORLD);
            } else {
                long bad;
                memset(big, 0, RGET_SIZE);
                MPI_Recv(big, RGET_SIZE, MPI_BYTE, 1 - bu_rank, 600 + r, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                bad = bu_verify(big, RGET_SIZE, 77 + r);
                BU_CHECK(bad < 0, "64 KiB round %d: byte %ld wrong", r, bad);
            }
        }
        rgets = bu_named_counter("btl_smcuda_fbox_answers") - before;
        printf("%s: rank %d: %llu of its %d RGETs first line last\n", PROG, bu_rank, rgets,
               RGET_ROUNDS / 2);
        BU_CHECK(rgets >= RGET_ROUNDS / 2 - 1, "only %llu of %d RGETs written first line last",
                 rgets, RGET_ROUNDS / 2);
        free(big);
    }
    if (0 == bu_rank) {
        printf("%s: %llu ring records answered first line last (at least %llu expected)\n", PROG,
               answers, expected);
    }
    BU_CHECK(answers >= expected,
             "%llu ring records written first line last, %llu ping-pong answers of two lines "
             "or more",
             answers, expected);
    free(buf);
    return bu_finalize(PROG);
}

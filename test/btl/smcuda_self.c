/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_self.c - messages a process sends to itself, now carried by
 * smcuda's own endpoint (btl_smcuda_self.c: delivered in place, as btl/self
 * does).
 *
 * Every rank sends to itself every size from 0 B to 9 MiB around the
 * protocol limits, receive posted before and after the send, standard and
 * synchronous mode, contiguous and strided (derived) buffers, and
 * MPI_Sendrecv; contents verified. With expect=noshm (np 1), no fast-box
 * ring or FIFO counter may move: nothing to oneself goes through shared
 * memory.
 */
#include "btl_util.h"

#define PROG "btl/smcuda_self"

static const size_t sizes[] = {0,     1,     255,   256,    4095,    4096,          4097,
                               8192,  65535, 65536, 65537,  200000,  (2u << 20) + 3, 9u << 20};

static void one(size_t n, int mode, int strided)
{
    MPI_Datatype vec = MPI_BYTE;
    size_t span = strided ? 2 * n : n;
    unsigned char *src = malloc(span + 1), *dst = malloc(span + 1);
    int count = (int) n;
    MPI_Request r[2];

    BU_CHECK(src && dst, "out of memory");
    if (strided && n > 0) {
        MPI_Type_vector((int) n, 1, 2, MPI_BYTE, &vec);
        MPI_Type_commit(&vec);
        count = 1;
    }
    for (size_t i = 0; i < span; ++i) {
        src[i] = bu_byte(i, n, mode + 7 * bu_rank);
    }
    memset(dst, 0, span + 1);
    switch (mode) {
        case 0: /* send first: the message waits unexpected */
            MPI_Isend(src, count, vec, bu_rank, 1, MPI_COMM_WORLD, &r[0]);
            MPI_Recv(dst, count, vec, bu_rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Wait(&r[0], MPI_STATUS_IGNORE);
            break;
        case 1: /* receive first */
            MPI_Irecv(dst, count, vec, bu_rank, 2, MPI_COMM_WORLD, &r[0]);
            MPI_Send(src, count, vec, bu_rank, 2, MPI_COMM_WORLD);
            MPI_Wait(&r[0], MPI_STATUS_IGNORE);
            break;
        case 2: /* synchronous */
            MPI_Issend(src, count, vec, bu_rank, 3, MPI_COMM_WORLD, &r[0]);
            MPI_Irecv(dst, count, vec, bu_rank, 3, MPI_COMM_WORLD, &r[1]);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            break;
        default:
            MPI_Sendrecv(src, count, vec, bu_rank, 4, dst, count, vec, bu_rank, 4, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            break;
    }
    for (size_t i = 0; i < span; i += strided ? 2 : 1) {
        BU_CHECK(dst[i] == src[i], "%zu B to self (mode %d%s): byte %zu wrong", n, mode,
                 strided ? ", strided" : "", i);
    }
    for (size_t i = 1; strided && i < span; i += 2) {
        BU_CHECK(0 == dst[i], "%zu B to self, strided: gap byte %zu written", n, i);
    }
    BU_CHECK(0 == dst[span], "%zu B to self: byte past the end written", n);
    if (MPI_BYTE != vec) {
        MPI_Type_free(&vec);
    }
    free(src);
    free(dst);
}

int main(int argc, char **argv)
{
    bu_counters_t before, after;
    const char *e;
    int noshm;

    bu_init(&argc, &argv);
    noshm = NULL != (e = bu_arg(argc, argv, "expect")) && 0 == strcmp(e, "noshm");
    bu_counters(&before);
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
        for (int mode = 0; mode < 4; ++mode) {
            for (int strided = 0; strided < 2; ++strided) {
                one(sizes[s], mode, strided);
            }
        }
    }
    bu_counters(&after);
    if (noshm) {
        BU_CHECK(after.found, "btl_smcuda counters not found (is smcuda loaded?)");
        BU_CHECK(after.messages[BU_FBOX] == before.messages[BU_FBOX] &&
                     after.messages[BU_FIFO] == before.messages[BU_FIFO],
                 "messages to self went through shared memory: fbox %llu, fifo %llu",
                 after.messages[BU_FBOX] - before.messages[BU_FBOX],
                 after.messages[BU_FIFO] - before.messages[BU_FIFO]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == bu_rank) {
        printf("%s: every size to self ok\n", PROG);
    }
    return bu_finalize(PROG);
}

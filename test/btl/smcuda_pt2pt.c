/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_pt2pt.c - every size from 0 B to 64 MiB around each btl/smcuda
 * threshold (fast-box limit, eager limit, max send size, powers of two),
 * between rank pairs, content verified; blocking ping-pong, simultaneous
 * exchange, and a non-contiguous datatype.  Afterwards the btl_smcuda_*
 * counters must show which paths carried traffic.
 *
 * Arguments:
 *   expect=get   (default) fbox, fifo, sendi and get counters > 0
 *   expect=put   fbox, fifo, sendi and put counters > 0 (run with btl_smcuda_flags send,put)
 *   expect=copy  fbox, fifo, sendi > 0 and put == get == 0 (single_copy_mechanism none)
 *   expect=any   fbox, fifo, sendi > 0; single copy at the PML's discretion
 *   max=BYTES    largest size (default 64 MiB)
 */
#include "btl_util.h"

#define PROG "btl/smcuda_pt2pt"

static size_t sizes[1024];
static int nsizes;

static void add_size(size_t s, size_t max)
{
    if (s > max)
        return;
    for (int i = 0; i < nsizes; ++i)
        if (sizes[i] == s)
            return;
    if (nsizes < (int) (sizeof(sizes) / sizeof(sizes[0])))
        sizes[nsizes++] = s;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *) a, y = *(const size_t *) b;
    return x < y ? -1 : x > y;
}

static void make_sizes(size_t max)
{
    static const size_t thresholds[] = {1024, 4096, 32768, 65536};
    for (size_t s = 0; s <= 130; ++s)
        add_size(s, max);
    for (size_t p = 256; p <= max; p *= 2) {
        add_size(p - 33, max);
        add_size(p - 17, max);
        add_size(p - 1, max);
        add_size(p, max);
        add_size(p + 1, max);
        add_size(p + 17, max);
    }
    /* headers of the upper layer are 14..40 bytes: cover the whole band */
    for (size_t t = 0; t < sizeof(thresholds) / sizeof(thresholds[0]); ++t)
        for (size_t s = thresholds[t] - 48; s <= thresholds[t] + 8; ++s)
            add_size(s, max);
    add_size(max, max);
    qsort(sizes, (size_t) nsizes, sizeof(sizes[0]), cmp_size);
}

static void pingpong(unsigned char *sbuf, unsigned char *rbuf, size_t size, int peer, int first)
{
    MPI_Status st;
    int count;
    long bad;
    for (int dir = 0; dir < 2; ++dir) {
        int sending = (dir == 0) == first;
        if (sending) {
            bu_fill(sbuf, size, bu_rank + 1);
            if (MPI_SUCCESS != MPI_Send(sbuf, (int) size, MPI_BYTE, peer, 7, MPI_COMM_WORLD))
                bu_fail("send of %zu bytes failed", size);
        } else {
            memset(rbuf, 0xa5, size);
            if (MPI_SUCCESS != MPI_Recv(rbuf, (int) size, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &st))
                bu_fail("recv of %zu bytes failed", size);
            MPI_Get_count(&st, MPI_BYTE, &count);
            BU_CHECK((size_t) count == size, "size %zu: received %d bytes", size, count);
            bad = bu_verify(rbuf, size, peer + 1);
            BU_CHECK(bad < 0, "size %zu: wrong byte at offset %ld (ping-pong)", size, bad);
        }
    }
}

static void exchange(unsigned char *sbuf, unsigned char *rbuf, size_t size, int peer)
{
    MPI_Request req[2];
    long bad;
    bu_fill(sbuf, size, 100 + bu_rank);
    memset(rbuf, 0x5a, size);
    MPI_Irecv(rbuf, (int) size, MPI_BYTE, peer, 8, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(sbuf, (int) size, MPI_BYTE, peer, 8, MPI_COMM_WORLD, &req[1]);
    if (MPI_SUCCESS != MPI_Waitall(2, req, MPI_STATUSES_IGNORE))
        bu_fail("exchange of %zu bytes failed", size);
    bad = bu_verify(rbuf, size, 100 + peer);
    BU_CHECK(bad < 0, "size %zu: wrong byte at offset %ld (exchange)", size, bad);
}

/* Every other 8-byte block: exercises packing on both sides. */
static void strided(unsigned char *sbuf, unsigned char *rbuf, size_t size, int peer, int first)
{
    MPI_Datatype vec;
    size_t blocks = size / 8;
    long bad;
    if (0 == blocks || blocks > (1u << 20))
        return;
    MPI_Type_vector((int) blocks, 8, 16, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    if (first) {
        unsigned char *tmp = malloc(blocks * 8);
        bu_fill(tmp, blocks * 8, 55);
        for (size_t b = 0; b < blocks; ++b)
            memcpy(sbuf + 16 * b, tmp + 8 * b, 8);
        free(tmp);
        MPI_Send(sbuf, 1, vec, peer, 9, MPI_COMM_WORLD);
    } else {
        memset(rbuf, 0, blocks * 8);
        MPI_Recv(rbuf, (int) (blocks * 8), MPI_BYTE, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad = bu_verify(rbuf, blocks * 8, 55);
        BU_CHECK(bad < 0, "size %zu: wrong byte at offset %ld (strided)", size, bad);
    }
    MPI_Type_free(&vec);
}

int main(int argc, char **argv)
{
    const char *expect = bu_arg(argc, argv, "expect");
    const char *maxarg = bu_arg(argc, argv, "max");
    size_t max = maxarg ? strtoull(maxarg, NULL, 0) : (64u << 20);
    unsigned char *sbuf, *rbuf;
    bu_counters_t c;
    int peer, first;

    bu_init(&argc, &argv);
    if (NULL == expect)
        expect = "get";
    BU_CHECK(bu_size % 2 == 0, "needs an even number of ranks");
    peer = bu_rank ^ 1;
    first = 0 == (bu_rank & 1);
    make_sizes(max);
    sbuf = malloc(2 * max + 64);
    rbuf = malloc(2 * max + 64);
    BU_CHECK(sbuf && rbuf, "out of memory");

    for (int i = 0; i < nsizes; ++i) {
        pingpong(sbuf, rbuf, sizes[i], peer, first);
        exchange(sbuf, rbuf, sizes[i], peer);
        if (sizes[i] <= (8u << 20))
            strided(sbuf, rbuf, sizes[i], peer, first);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    bu_counters_total(&c);
    bu_counters_print(PROG, &c);
    if (0 == bu_rank) {
        BU_CHECK(c.found, "btl_smcuda_* performance variables not found (is btl/smcuda in use?)");
        BU_CHECK(c.messages[BU_FBOX] > 0, "no traffic through fast boxes");
        BU_CHECK(c.messages[BU_FIFO] > 0, "no traffic through the FIFO");
        BU_CHECK(c.messages[BU_SENDI] > 0, "no immediate sends");
        if (0 == strcmp(expect, "get")) {
            BU_CHECK(c.messages[BU_GET] > 0, "no single-copy get");
        } else if (0 == strcmp(expect, "put")) {
            BU_CHECK(c.messages[BU_PUT] > 0, "no single-copy put");
        } else if (0 == strcmp(expect, "copy")) {
            BU_CHECK(0 == c.messages[BU_PUT] && 0 == c.messages[BU_GET],
                     "single copy used although disabled");
        } else if (0 != strcmp(expect, "any")) {
            bu_fail("unknown expect=%s", expect);
        }
    }
    free(sbuf);
    free(rbuf);
    return bu_finalize(PROG);
}

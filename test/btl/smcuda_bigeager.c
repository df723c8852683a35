/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_bigeager.c - a large eager limit (btl_smcuda_eager_limit 8 MiB or
 * 64 MiB) costs a bounded segment: each process maps one segment per local
 * process, none larger than seg_max bytes; messages around the eager limit
 * arrive intact, both ways at once, also when a burst of them exhausts
 * the few eager fragments such a limit leaves room for (the receiver
 * posts late: the senders must wait for fragments, not fail or hang).
 *
 * Arguments: eager=BYTES (the eager limit the job runs with), seg_max=BYTES
 * (largest segment allowed), burst=N (messages of the burst, default 12).
 */
#include "btl_util.h"

#include <unistd.h>

#define PROG "btl/smcuda_bigeager"

static size_t arg_size(int argc, char **argv, const char *name, size_t dflt)
{
    const char *v = bu_arg(argc, argv, name);
    return v ? (size_t) strtoull(v, NULL, 0) : dflt;
}

/* Segments mapped here: shared mappings of nameless (or removed) files
 * of /dev/shm. Returns how many; *largest gets the size of the largest. */
static int segments(size_t *largest)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[1024];
    int n = 0;

    *largest = 0;
    BU_CHECK(NULL != maps, "cannot read /proc/self/maps");
    while (fgets(line, sizeof(line), maps)) {
        unsigned long lo, hi;
        char perms[8];
        char *p = strchr(line, '/');
        if (NULL == p || 0 != strncmp(p, "/dev/shm/", 9) || NULL == strstr(p, "(deleted)") ||
            3 != sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) || 's' != perms[3])
            continue;
        ++n;
        if (hi - lo > *largest)
            *largest = hi - lo;
    }
    fclose(maps);
    return n;
}

/* Both ranks send `size` bytes to each other at once; contents checked. */
static void exchange(unsigned char *sbuf, unsigned char *rbuf, size_t size, int seed)
{
    int peer = 1 - bu_rank;
    MPI_Status st;
    int count;
    long bad;

    bu_fill(sbuf, size, seed + bu_rank);
    memset(rbuf, 0xa5, size);
    MPI_Sendrecv(sbuf, (int) size, MPI_BYTE, peer, seed, rbuf, (int) size, MPI_BYTE, peer, seed,
                 MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    BU_CHECK((size_t) count == size, "size %zu: received %d bytes", size, count);
    bad = bu_verify(rbuf, size, seed + peer);
    BU_CHECK(bad < 0, "size %zu: byte %ld wrong", size, bad);
}

/* Rank 0 sends `n` messages of `size` bytes before rank 1 posts a receive
 * (it waits 300 ms): more than the eager fragments of rank 0's pool. */
static void burst(unsigned char *buf, size_t size, int n)
{
    MPI_Request *req = calloc((size_t) n, sizeof(*req));
    unsigned char *rbuf;

    BU_CHECK(NULL != req, "out of memory");
    if (0 == bu_rank) {
        for (int i = 0; i < n; ++i) {
            bu_fill(buf + (size_t) i * size, size, 100 + i);
            MPI_Isend(buf + (size_t) i * size, (int) size, MPI_BYTE, 1, 77, MPI_COMM_WORLD,
                      &req[i]);
        }
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    } else {
        rbuf = buf;
        usleep(300000);
        for (int i = 0; i < n; ++i) {
            long bad;
            MPI_Recv(rbuf, (int) size, MPI_BYTE, 0, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            bad = bu_verify(rbuf, size, 100 + i);
            BU_CHECK(bad < 0, "burst message %d of %zu bytes: byte %ld wrong", i, size, bad);
        }
    }
    free(req);
}

int main(int argc, char **argv)
{
    size_t eager = arg_size(argc, argv, "eager", 8u << 20);
    size_t seg_max = arg_size(argc, argv, "seg_max", 96u << 20);
    int nburst = (int) arg_size(argc, argv, "burst", 12);
    size_t sizes[] = {0,          1,          2048,        4096,  65536,     eager / 2,
                      eager - 64, eager - 65, eager - 200, eager, eager + 1, eager + 4099};
    size_t nsizes = sizeof(sizes) / sizeof(sizes[0]), largest, big = 0, bsize = eager / 4;
    unsigned char *sbuf, *rbuf;
    int n;

    bu_init(&argc, &argv);
    BU_CHECK(2 == bu_size, "run with 2 processes");
    MPI_Barrier(MPI_COMM_WORLD); /* both past add_procs: peers mapped */
    n = segments(&largest);
    printf("rank %d: %d segments mapped, largest %zu bytes (at most %zu)\n", bu_rank, n, largest,
           seg_max);
    BU_CHECK(2 == n, "%d segments mapped, want 2", n);
    BU_CHECK(largest <= seg_max, "a segment of %zu bytes, want at most %zu", largest, seg_max);

    for (size_t i = 0; i < nsizes; ++i)
        big = sizes[i] > big ? sizes[i] : big;
    if ((size_t) nburst * bsize > big)
        big = (size_t) nburst * bsize;
    sbuf = malloc(big);
    rbuf = malloc(big);
    BU_CHECK(NULL != sbuf && NULL != rbuf, "cannot allocate %zu bytes", big);
    for (size_t i = 0; i < nsizes; ++i)
        exchange(sbuf, rbuf, sizes[i], (int) i);
    burst(1 == bu_rank ? rbuf : sbuf, bsize, nburst);
    free(sbuf);
    free(rbuf);
    return bu_finalize(PROG);
}

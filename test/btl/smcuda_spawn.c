/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_spawn.c - processes of different jobs on one node (MPI_Comm_spawn)
 * reach each other through btl/smcuda ("guests", docs/smcuda.md).
 *
 * The parents spawn `children` processes, `rounds` times one after the
 * other. Each time, parents and children merge into one communicator and:
 *   - every pair exchanges messages of every protocol's sizes (0 B..4 MiB),
 *     contents and counts verified;
 *   - each rank receives one message from every other with MPI_ANY_SOURCE
 *     and checks the status;
 *   - a ring of MPI_Ssend;
 *   - one-sided: MPI_Fetch_and_op on rank 0 and MPI_Put into the last rank
 *     from every rank under MPI_Win_lock_all, results checked;
 * then disconnect. At the end no backing file of a process that has exited
 * may be left in /dev/shm.
 *
 * Arguments:
 *   children=N rounds=R
 *   expect=shm    each process reached every peer of another job through
 *                 smcuda: btl_smcuda_guest_peers counts the children each
 *                 parent met, and a child that is alone in its job moved
 *                 FIFO traffic (to its parents, the only peers it has)
 *   expect=other  no peer of another job through smcuda (the parents'
 *                 guest_peers 0; a lone child moved nothing through smcuda)
 *   expect=any    contents only (some pairs may use another BTL)
 *   dead_maps=N   at the end each parent may still map the segments of at
 *                 most N exited children (the others were given back when
 *                 later children came)
 */
#include "btl_util.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include "../../opal/mca/btl/smcuda/btl_smcuda_shm.h"

#define PROG "btl/smcuda_spawn"

static const size_t sizes[] = {0,     1,     64,    2000,       4096,    4097,
                               16384, 32768, 65539, 256 * 1024, 1 << 20, 4 << 20};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static int seed_of(int src, int dst, size_t k)
{
    return (int) (src * 1009 + dst * 31 + (int) k);
}

static unsigned long long guest_peers(void)
{
    return bu_named_counter("btl_smcuda_guest_peers");
}

/* Every pair, every size, both directions at once. */
static void all_pairs(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (size_t k = 0; k < NSIZES; ++k) {
        size_t n = sizes[k];
        unsigned char **rb = calloc((size_t) size, sizeof(*rb));
        unsigned char *sb = malloc(n + 1);
        MPI_Request *req = malloc(2 * (size_t) size * sizeof(*req));
        int nreq = 0;
        for (int p = 0; p < size; ++p) {
            if (p == rank)
                continue;
            rb[p] = malloc(n + 1);
            MPI_Irecv(rb[p], (int) n, MPI_BYTE, p, (int) k, comm, &req[nreq++]);
        }
        /* the same bytes to every peer, seeded by the sender */
        bu_fill(sb, n, seed_of(rank, 0, k));
        for (int p = 0; p < size; ++p) {
            if (p != rank)
                MPI_Isend(sb, (int) n, MPI_BYTE, p, (int) k, comm, &req[nreq++]);
        }
        MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
        for (int p = 0; p < size; ++p) {
            long bad;
            if (p == rank)
                continue;
            bad = bu_verify(rb[p], n, seed_of(p, 0, k));
            BU_CHECK(bad < 0, "%zu bytes from merged rank %d: byte %ld wrong", n, p, bad);
            free(rb[p]);
        }
        free(rb);
        free(sb);
        free(req);
    }
}

static void any_source(MPI_Comm comm)
{
    int rank, size, seen = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int p = 0; p < size; ++p) {
        if (p != rank)
            MPI_Send(&rank, 1, MPI_INT, p, 77, comm);
    }
    for (int i = 0; i < size - 1; ++i) {
        MPI_Status st;
        int from = -1, count = -1;
        MPI_Recv(&from, 1, MPI_INT, MPI_ANY_SOURCE, 77, comm, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        BU_CHECK(count == 1 && st.MPI_SOURCE == from && st.MPI_TAG == 77 && from != rank &&
                     !(seen & (1 << from)),
                 "ANY_SOURCE receive: source %d, payload %d, count %d", st.MPI_SOURCE, from, count);
        seen |= 1 << from;
    }
}

static void ssend_ring(MPI_Comm comm)
{
    int rank, size, got = -1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (0 == rank) {
        MPI_Ssend(&rank, 1, MPI_INT, 1 % size, 5, comm);
        MPI_Recv(&got, 1, MPI_INT, size - 1, 5, comm, MPI_STATUS_IGNORE);
        BU_CHECK(got == size - 1, "Ssend ring came back with %d", got);
    } else {
        MPI_Recv(&got, 1, MPI_INT, rank - 1, 5, comm, MPI_STATUS_IGNORE);
        BU_CHECK(got == rank - 1, "Ssend ring: %d from %d", got, rank - 1);
        MPI_Ssend(&rank, 1, MPI_INT, (rank + 1) % size, 5, comm);
    }
}

static void one_sided(MPI_Comm comm)
{
    int rank, size;
    int64_t *mem, one = 1, old = -1;
    MPI_Win win;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Alloc_mem((MPI_Aint) (size + 1) * 8, MPI_INFO_NULL, &mem);
    for (int i = 0; i <= size; ++i)
        mem[i] = 0;
    MPI_Win_create(mem, (MPI_Aint) (size + 1) * 8, 8, MPI_INFO_NULL, comm, &win);
    MPI_Win_lock_all(0, win);
    MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, 0, MPI_SUM, win);
    MPI_Win_flush(0, win);
    BU_CHECK(old >= 0 && old < size, "fetch-and-op on merged rank 0 returned %lld",
             (long long) old);
    {
        int64_t mine = 1000 + rank;
        MPI_Put(&mine, 1, MPI_INT64_T, size - 1, 1 + rank, 1, MPI_INT64_T, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(comm);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win); /* our own memory, synchronized */
    if (0 == rank)
        BU_CHECK(mem[0] == size, "fetch-and-op total %lld, expected %d", (long long) mem[0], size);
    if (size - 1 == rank) {
        for (int r = 0; r < size; ++r)
            BU_CHECK(mem[1 + r] == 1000 + r, "put from merged rank %d: %lld", r,
                     (long long) mem[1 + r]);
    }
    MPI_Win_unlock(rank, win);
    MPI_Win_free(&win);
    MPI_Free_mem(mem);
}

/* Returns, in pids (parents only), the children's pids. */
static void together(MPI_Comm inter, int high, int *pids)
{
    MPI_Comm merged;
    int me = (int) getpid(), size, nparents;
    int *all;
    MPI_Intercomm_merge(inter, high, &merged);
    all_pairs(merged);
    any_source(merged);
    ssend_ring(merged);
    one_sided(merged);
    MPI_Comm_size(merged, &size);
    all = malloc((size_t) size * sizeof(int));
    MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, merged);
    if (!high) {
        MPI_Comm_size(MPI_COMM_WORLD, &nparents);
        memcpy(pids, all + nparents, (size_t) (size - nparents) * sizeof(int));
    }
    free(all);
    MPI_Comm_free(&merged);
}

/* Waits (up to 10 s each) until the children's processes are gone, so
 * that the next round can give their guest entries back. */
static void wait_exited(const int *pids, int n)
{
    for (int i = 0; i < n; ++i) {
        for (int t = 0; t < 1000 && 0 == kill(pids[i], 0); ++t)
            usleep(10000);
    }
}

/* Open MPI 4.1.4 over PMIx 4 (Debian 12) hangs in MPI_Comm_spawn now and
 * then, before any BTL is involved: the new child never returns from
 * PMIx_Init while the parent waits in PMIx_Lookup. It happens with the
 * stock BTLs as well (about one spawn in 35 here; upstream openpmix issue
 * 2735). A spawn that has not returned in time is reported as a skip (exit
 * 77), naming that defect, rather than as a failure of ours. */
static void spawn_hung(int sig)
{
    static const char msg[] = "MPI_Comm_spawn did not return in 60 s: the Open MPI 4.1/PMIx 4 "
                              "spawn hang (child stuck in PMIx_Init), not a BTL failure\n";
    (void) sig;
    (void) write(1, msg, sizeof(msg) - 1);
    _exit(77);
}

/* A backing file of one of our children (pids) that has exited is a
 * leak. (Files of other jobs, such as one killed in MPI_Init earlier, are
 * not this test's business.) */
static void check_no_leak(const int *pids, int n)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    if (NULL == d)
        return;
    while (NULL != (e = readdir(d))) {
        unsigned job, vpid;
        int pid;
        if (3 != sscanf(e->d_name, "ob1x_smcuda.%u.%u.%d", &job, &vpid, &pid) ||
            (0 == kill(pid, 0) || ESRCH != errno))
            continue;
        for (int i = 0; i < n; ++i)
            BU_CHECK(pids[i] != pid, "/dev/shm/%s left behind by a child that has exited",
                     e->d_name);
    }
    closedir(d);
}

/* foreign: peers of other jobs met since the counters were opened (a
 * child meets its parents inside MPI_Init, before: it passes 0); alone:
 * no process of our own job, so all our smcuda traffic went to guests. */
/* Our mappings of segments whose owner has exited; *all: segments mapped
 * (our own among them). Segments have no name: they are the shared
 * mappings of removed files that start with a segment header, which names
 * the owner. */
static int dead_mappings(int *all)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    int n = 0;
    *all = 0;
    if (NULL == f)
        return 0;
    while (NULL != fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        char perms[8];
        const smcuda_seg_hdr_t *hdr;
        if (NULL == strstr(line, "(deleted)") ||
            3 != sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) || 'r' != perms[0] ||
            's' != perms[3] || hi - lo < sizeof(*hdr))
            continue;
        hdr = (const smcuda_seg_hdr_t *) lo;
        if (SMCUDA_SHM_MAGIC != hdr->magic)
            continue;
        ++*all;
        if (0 != kill(hdr->owner_pid, 0) && ESRCH == errno)
            ++n;
    }
    fclose(f);
    return n;
}

static void check_expect(const char *expect, int foreign, int alone)
{
    unsigned long long g = guest_peers();
    bu_counters_t c;

    bu_counters(&c);
    if (0 == strcmp(expect, "shm")) {
        BU_CHECK(g >= (unsigned long long) foreign,
                 "btl_smcuda_guest_peers is %llu; expected at least %d peers of other jobs", g,
                 foreign);
        BU_CHECK(!alone || c.messages[BU_FIFO] > 0,
                 "a process alone in its job moved nothing through the FIFO");
    } else if (0 == strcmp(expect, "other")) {
        BU_CHECK(0 == g, "btl_smcuda_guest_peers is %llu; expected 0", g);
        BU_CHECK(!alone || 0 == c.messages[BU_FIFO] + c.messages[BU_FBOX],
                 "a process alone in its job moved %llu FIFO messages through smcuda",
                 c.messages[BU_FIFO]);
    }
}

int main(int argc, char **argv)
{
    const char *a;
    int children = (a = bu_arg(argc, argv, "children")) ? atoi(a) : 2;
    int rounds = (a = bu_arg(argc, argv, "rounds")) ? atoi(a) : 1;
    const char *expect = (a = bu_arg(argc, argv, "expect")) ? a : "any";
    int dead_maps = (a = bu_arg(argc, argv, "dead_maps")) ? atoi(a) : -1;
    int *pids = calloc((size_t) (children * rounds) + 1, sizeof(int));
    MPI_Comm parent;

    bu_init(&argc, &argv);
    (void) guest_peers(); /* opens the counter's handle */
    MPI_Comm_get_parent(&parent);
    if (MPI_COMM_NULL != parent) {
        together(parent, 1, NULL);
        check_expect(expect, 0, 1 == bu_size);
        MPI_Comm_disconnect(&parent);
        /* bu_finalize prints PASS only from rank 0 of the parents' job */
        MPI_T_finalize();
        MPI_Finalize();
        return 0;
    }
    for (int r = 0; r < rounds; ++r) {
        MPI_Comm inter;
        int *errs = malloc((size_t) children * sizeof(int));
        char **cargv = calloc((size_t) argc, sizeof(char *));
        /* the children get our own arguments */
        for (int i = 1; i < argc; ++i)
            cargv[i - 1] = argv[i];
        signal(SIGALRM, spawn_hung);
        alarm(60);
        MPI_Comm_spawn(argv[0], cargv, children, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
        alarm(0);
        for (int i = 0; i < children; ++i)
            BU_CHECK(MPI_SUCCESS == errs[i], "spawn of child %d failed: %d", i, errs[i]);
        free(errs);
        free(cargv);
        together(inter, 0, pids + r * children);
        MPI_Comm_disconnect(&inter);
        wait_exited(pids + r * children, children);
        if (0 == bu_rank)
            printf("%s: round %d: %d parents and %d children exchanged\n", PROG, r, bu_size,
                   children);
    }
    check_expect(expect, rounds * children, 0);
    if (dead_maps >= 0) {
        int all, n = dead_mappings(&all);
        BU_CHECK(all >= 1, "no segment found in /proc/self/maps, not even our own");
        BU_CHECK(n <= dead_maps, "%d segments of exited children still mapped (at most %d)", n,
                 dead_maps);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == bu_rank) {
        sleep(1); /* the last children finish their exit */
        check_no_leak(pids, rounds * children);
        printf("%s: guest peers of rank 0: %llu\n", PROG, guest_peers());
    }
    return bu_finalize(PROG);
}

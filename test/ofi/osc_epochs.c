/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * osc_epochs.c - the synchronisations of one-sided MPI that
 * test/btl/smcuda_osc*.c (fence, lock_all) leave out, on every window
 * flavour (create, allocate, dynamic), over MPI_COMM_WORLD, over each half
 * of a split and over MPI_COMM_SELF; every result checked:
 *   - PSCW: each rank exposes its window to the previous rank of the ring
 *     and accesses the next one: puts of 8 B..64 KiB and a SUM accumulate
 *     in one epoch, gets of the same data back in a second one;
 *   - exclusive lock: every rank increments a counter of the first rank
 *     with a get, flush and put inside MPI_Win_lock(EXCLUSIVE): the total
 *     is exact only if the lock excludes;
 *   - contention: in lock_all, every rank fetch-and-adds 1 (int64) at
 *     every rank, flushing each: the tickets of each target are distinct
 *     and its counter exact; then a spin lock made of compare-and-swap on
 *     the first rank guards a get/put increment: exact total, and each
 *     release returns our own value;
 *   - flush_local: a buffer put, flush_local, then rewritten and put to
 *     the next place: the target holds both versions; MPI_Rput/MPI_Rget
 *     waited for (local completion), then flush / flush_all.
 * The halves of the split create their windows one after the other
 * (osc/rdma of Open MPI 4.1 names its segment by communicator id, which
 * both halves share; see smcuda_osc_comms.c).
 *
 * Arguments: moved=A,B|C (ofi_pvars.h: btl_ofi_A must have grown, and
 * btl_ofi_B or btl_ofi_C), rounds=N (default 20), flavours=... and
 * comms=world,split,self (subsets).
 */
#include "../btl/osc_util.h"
#include "ofi_pvars.h"

#define PROG "ofi/osc_epochs"
#define CTR_BYTES 64          /* counters at the start of every window */
#define SLOT (128 * 1024)     /* then one data slot per origin rank */
#define MAX_PUT (64 * 1024)

enum { C_EXCL = 0, C_FOP = 8, C_SPIN = 16, C_GUARDED = 24, C_PSCW = 32 };

static int rounds = 20;

typedef struct {
    ou_window_t w;
    MPI_Comm comm;
    int me, n, next, prev;
    const char *where;
} ctx_t;

static MPI_Aint at(const ctx_t *c, int rank, MPI_Aint off)
{
    return c->w.disp[rank] + off;
}

static MPI_Aint slot(int origin)
{
    return CTR_BYTES + (MPI_Aint) origin * SLOT;
}

#define FAILC(c, ...)                                                                              \
    do {                                                                                           \
        char m_[300];                                                                              \
        snprintf(m_, sizeof(m_), __VA_ARGS__);                                                     \
        bu_fail("%s window on %s: %s", (c)->w.name, (c)->where, m_);                               \
    } while (0)

/* Our own window's bytes, read in a lock epoch on ourselves (so that the
 * public and private copies agree whatever the memory model). */
static void read_own(const ctx_t *c, MPI_Aint off, void *dst, int bytes)
{
    MPI_Win_lock(MPI_LOCK_SHARED, c->me, 0, c->w.win);
    MPI_Get(dst, bytes, MPI_BYTE, c->me, at(c, c->me, off), bytes, MPI_BYTE, c->w.win);
    MPI_Win_unlock(c->me, c->w.win);
}

static int64_t read_own64(const ctx_t *c, MPI_Aint off)
{
    int64_t v;
    read_own(c, off, &v, sizeof(v));
    return v;
}

/* ---- PSCW ---- */

static MPI_Group group_of(const ctx_t *c, int rank)
{
    MPI_Group all, one;
    MPI_Comm_group(c->comm, &all);
    MPI_Group_incl(all, 1, &rank, &one);
    MPI_Group_free(&all);
    return one;
}

static void pscw_part(ctx_t *c)
{
    static const int sizes[] = {8, 4000, MAX_PUT};
    MPI_Group to = group_of(c, c->next), from = group_of(c, c->prev);
    /* an origin buffer may be reused only after the epoch: one per put */
    unsigned char *src[3], *back = malloc(MAX_PUT), *mine = malloc(MAX_PUT);
    int64_t add = c->me + 1;
    int off = 0;
    long bad;

    for (int i = 0; i < 3; ++i) {
        src[i] = malloc(MAX_PUT);
        BU_CHECK(src[i], "out of memory");
    }
    BU_CHECK(back && mine, "out of memory");
    /* epoch 1: puts and an accumulate into the next rank */
    MPI_Win_post(from, 0, c->w.win);
    MPI_Win_start(to, 0, c->w.win);
    off = 0;
    for (int i = 0; i < 3; ++i) {
        bu_fill(src[i], (size_t) sizes[i], 100 * c->me + i);
        MPI_Put(src[i], sizes[i], MPI_BYTE, c->next, at(c, c->next, slot(c->me) + off), sizes[i],
                MPI_BYTE, c->w.win);
        off += sizes[i];
    }
    MPI_Accumulate(&add, 1, MPI_INT64_T, c->next, at(c, c->next, C_PSCW), 1, MPI_INT64_T, MPI_SUM,
                   c->w.win);
    MPI_Win_complete(c->w.win);
    MPI_Win_wait(c->w.win);
    off = 0;
    for (int i = 0; i < 3; ++i) {
        read_own(c, slot(c->prev) + off, mine, sizes[i]);
        bad = bu_verify(mine, (size_t) sizes[i], 100 * c->prev + i);
        if (bad >= 0) {
            FAILC(c, "PSCW put of %d B from rank %d wrong at byte %ld", sizes[i], c->prev, bad);
        }
        off += sizes[i];
    }
    if (read_own64(c, C_PSCW) != c->prev + 1) {
        FAILC(c, "PSCW accumulate: %lld, expected %d", (long long) read_own64(c, C_PSCW),
              c->prev + 1);
    }
    MPI_Barrier(c->comm);

    /* epoch 2: what we put, got back */
    MPI_Win_post(from, 0, c->w.win);
    MPI_Win_start(to, 0, c->w.win);
    MPI_Get(back, MAX_PUT, MPI_BYTE, c->next, at(c, c->next, slot(c->me) + 4008), MAX_PUT,
            MPI_BYTE, c->w.win);
    MPI_Win_complete(c->w.win);
    MPI_Win_wait(c->w.win);
    bad = bu_verify(back, MAX_PUT, 100 * c->me + 2);
    if (bad >= 0) {
        FAILC(c, "PSCW get of %d B from rank %d wrong at byte %ld", MAX_PUT, c->next, bad);
    }
    MPI_Group_free(&to);
    MPI_Group_free(&from);
    for (int i = 0; i < 3; ++i) {
        free(src[i]);
    }
    free(back);
    free(mine);
}

/* ---- exclusive lock ---- */

static void excl_part(ctx_t *c)
{
    int64_t v;

    for (int r = 0; r < rounds; ++r) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, c->w.win);
        MPI_Get(&v, 1, MPI_INT64_T, 0, at(c, 0, C_EXCL), 1, MPI_INT64_T, c->w.win);
        MPI_Win_flush(0, c->w.win);
        ++v;
        MPI_Put(&v, 1, MPI_INT64_T, 0, at(c, 0, C_EXCL), 1, MPI_INT64_T, c->w.win);
        MPI_Win_unlock(0, c->w.win);
    }
    MPI_Barrier(c->comm);
    if (0 == c->me && read_own64(c, C_EXCL) != (int64_t) rounds * c->n) {
        FAILC(c, "exclusive lock: counter %lld, expected %lld (the lock did not exclude)",
              (long long) read_own64(c, C_EXCL), (long long) rounds * c->n);
    }
}

/* ---- contention: fetch-and-op, compare-and-swap ---- */

static void fop_part(ctx_t *c)
{
    int64_t one = 1, *tickets = malloc(sizeof(int64_t) * (size_t) (rounds * c->n));
    int64_t *all = malloc(sizeof(int64_t) * (size_t) (rounds * c->n * c->n));

    BU_CHECK(tickets && all, "out of memory");
    MPI_Win_lock_all(0, c->w.win);
    for (int r = 0; r < rounds; ++r) {
        for (int t = 0; t < c->n; ++t) {
            MPI_Fetch_and_op(&one, &tickets[t * rounds + r], MPI_INT64_T, t, at(c, t, C_FOP),
                             MPI_SUM, c->w.win);
            MPI_Win_flush(t, c->w.win);
        }
    }
    MPI_Win_unlock_all(c->w.win);
    /* all[o][t][r]: what origin o fetched at target t in round r */
    MPI_Allgather(tickets, rounds * c->n, MPI_INT64_T, all, rounds * c->n, MPI_INT64_T, c->comm);
    {
        int64_t *mine = malloc(sizeof(int64_t) * (size_t) (rounds * c->n));
        for (int o = 0; o < c->n; ++o) {
            memcpy(mine + o * rounds, all + ((size_t) o * c->n + c->me) * rounds,
                   sizeof(int64_t) * (size_t) rounds);
        }
        qsort(mine, (size_t) (rounds * c->n), sizeof(*mine), ou_cmp_i64);
        for (int i = 0; i < rounds * c->n; ++i) {
            if (mine[i] != i) {
                FAILC(c, "fetch-and-add tickets at rank %d not distinct: #%d is %lld", c->me, i,
                      (long long) mine[i]);
            }
        }
        free(mine);
    }
    MPI_Barrier(c->comm);
    if (read_own64(c, C_FOP) != (int64_t) rounds * c->n) {
        FAILC(c, "fetch-and-add: counter %lld, expected %lld", (long long) read_own64(c, C_FOP),
              (long long) rounds * c->n);
    }
    free(tickets);
    free(all);
}

static void spin_part(ctx_t *c)
{
    int64_t free_ = 0, me = c->me + 1, old, v;
    int spins = 0, srounds = rounds / 2 + 1;

    MPI_Win_lock_all(0, c->w.win);
    for (int r = 0; r < srounds; ++r) {
        do { /* acquire: 0 -> me */
            MPI_Compare_and_swap(&me, &free_, &old, MPI_INT64_T, 0, at(c, 0, C_SPIN), c->w.win);
            MPI_Win_flush(0, c->w.win);
            ++spins;
        } while (0 != old);
        MPI_Get(&v, 1, MPI_INT64_T, 0, at(c, 0, C_GUARDED), 1, MPI_INT64_T, c->w.win);
        MPI_Win_flush(0, c->w.win);
        ++v;
        MPI_Put(&v, 1, MPI_INT64_T, 0, at(c, 0, C_GUARDED), 1, MPI_INT64_T, c->w.win);
        MPI_Win_flush(0, c->w.win);
        /* release: me -> 0, which must find our own value */
        MPI_Compare_and_swap(&free_, &me, &old, MPI_INT64_T, 0, at(c, 0, C_SPIN), c->w.win);
        MPI_Win_flush(0, c->w.win);
        if (old != me) {
            FAILC(c, "compare-and-swap lock: release found %lld, we hold %lld", (long long) old,
                  (long long) me);
        }
    }
    MPI_Win_unlock_all(c->w.win);
    MPI_Barrier(c->comm);
    if (0 == c->me && read_own64(c, C_GUARDED) != (int64_t) srounds * c->n) {
        FAILC(c, "compare-and-swap lock: guarded counter %lld, expected %lld (%d tries)",
              (long long) read_own64(c, C_GUARDED), (long long) srounds * c->n, spins);
    }
}

/* ---- flush_local, request-based operations ---- */

static void flush_part(ctx_t *c)
{
    const int half = MAX_PUT / 2;
    unsigned char *buf = malloc(MAX_PUT), *got = malloc(MAX_PUT);
    MPI_Aint dst = at(c, c->next, slot(c->me));
    MPI_Request req;
    long bad;

    BU_CHECK(buf && got, "out of memory");
    MPI_Win_lock(MPI_LOCK_SHARED, c->next, 0, c->w.win);
    bu_fill(buf, (size_t) half, 7 * c->me + 1);
    MPI_Put(buf, half, MPI_BYTE, c->next, dst, half, MPI_BYTE, c->w.win);
    MPI_Win_flush_local(c->next, c->w.win); /* buf may be rewritten now */
    bu_fill(buf, (size_t) half, 7 * c->me + 2);
    MPI_Put(buf, half, MPI_BYTE, c->next, dst + half, half, MPI_BYTE, c->w.win);
    /* not flush_local_all: under MPI_Win_lock, osc/rdma of Open MPI 4.1
     * keeps the locks of jobs up to its lock array's size where its
     * flush_all (and so flush_local_all) does not look, and returns at once
     * (docs/ofi.md, known limits); no BTL can make that wait */
    MPI_Win_flush_local(c->next, c->w.win);
    memset(buf, 0, (size_t) half);
    MPI_Win_flush(c->next, c->w.win);
    /* request-based: waiting completes the origin side only */
    bu_fill(buf, 1000, 7 * c->me + 3);
    MPI_Rput(buf, 1000, MPI_BYTE, c->next, dst + MAX_PUT, 1000, MPI_BYTE, c->w.win, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    memset(buf, 0, 1000);
    MPI_Win_flush(c->next, c->w.win);
    MPI_Rget(got, MAX_PUT, MPI_BYTE, c->next, dst, MAX_PUT, MPI_BYTE, c->w.win, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Win_unlock(c->next, c->w.win);
    if ((bad = bu_verify(got, (size_t) half, 7 * c->me + 1)) >= 0 ||
        (bad = bu_verify(got + half, (size_t) half, 7 * c->me + 2)) >= 0) {
        FAILC(c, "flush_local: what we put into rank %d reads back wrong at byte %ld", c->next,
              bad);
    }
    MPI_Win_lock_all(0, c->w.win);
    MPI_Rget(got, 1000, MPI_BYTE, c->next, dst + MAX_PUT, 1000, MPI_BYTE, c->w.win, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Win_flush_all(c->w.win);
    MPI_Win_unlock_all(c->w.win);
    if ((bad = bu_verify(got, 1000, 7 * c->me + 3)) >= 0) {
        FAILC(c, "Rput/Rget with rank %d wrong at byte %ld", c->next, bad);
    }
    free(buf);
    free(got);
    MPI_Barrier(c->comm);
}

/* ---- driver ---- */

static void run_all(ctx_t *c)
{
    pscw_part(c);
    MPI_Barrier(c->comm);
    excl_part(c);
    fop_part(c);
    spin_part(c);
    flush_part(c);
}

static void on_comm(MPI_Comm comm, const char *where, int fl, int turns, int my_turn)
{
    ctx_t c;

    c.comm = comm;
    c.where = where;
    MPI_Comm_rank(comm, &c.me);
    MPI_Comm_size(comm, &c.n);
    c.next = (c.me + 1) % c.n;
    c.prev = (c.me + c.n - 1) % c.n;
    BU_CHECK(c.n <= 8, "at most 8 ranks per communicator");
    for (int t = 0; t < turns; ++t) {
        if (t == my_turn) {
            ou_win_open(&c.w, fl, comm, CTR_BYTES + 8 * SLOT, MPI_INFO_NULL, where);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    run_all(&c);
    for (int t = 0; t < turns; ++t) {
        if (t == my_turn) {
            ou_win_close(&c.w);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    const char *only, *comms, *a;
    MPI_Comm half;

    bu_init(&argc, &argv);
    op_start();
    only = bu_arg(argc, argv, "flavours");
    comms = bu_arg(argc, argv, "comms");
    if (NULL != (a = bu_arg(argc, argv, "rounds"))) {
        rounds = atoi(a) > 0 ? atoi(a) : rounds;
    }
    MPI_Comm_split(MPI_COMM_WORLD, bu_rank % 2, bu_rank, &half);
    for (int fl = 0; fl < OU_NFLAVOURS; ++fl) {
        if (NULL != only && NULL == strstr(only, ou_flavour_names[fl])) {
            continue;
        }
        if (NULL == comms || strstr(comms, "world")) {
            on_comm(MPI_COMM_WORLD, "MPI_COMM_WORLD", fl, 1, 0);
        }
        if (NULL == comms || strstr(comms, "split")) {
            on_comm(half, "a half of a split", fl, 2, bu_rank % 2);
        }
        if (NULL == comms || strstr(comms, "self")) {
            on_comm(MPI_COMM_SELF, "MPI_COMM_SELF", fl, 1, 0);
        }
        if (0 == bu_rank) {
            printf("%s: %s windows ok (%s)\n", PROG, ou_flavour_names[fl],
                   comms ? comms : "world,split,self");
        }
    }
    MPI_Comm_free(&half);
    op_check(PROG, argc, argv);
    return bu_finalize(PROG);
}

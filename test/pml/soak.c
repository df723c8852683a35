/*
 * soak.c - randomized soak: every rank sends thousands of messages of
 * random sizes (0 to 8 MiB, skewed toward small), random destinations
 * (itself included), tags and modes (standard, synchronous, buffered,
 * ready), nonblocking; receivers take them with a random mix of specific
 * receive batches and single wildcard receives (MPI_ANY_SOURCE and/or
 * MPI_ANY_TAG). Every message is self-describing; the receiver checks its
 * content, its length against the status, and that it is the oldest
 * outstanding message of its (source, tag) pair (non-overtaking).
 *
 * The whole plan derives from one seed, printed at the start; rerun with
 * --seed=N to reproduce. --long: more epochs and bigger messages allowed;
 * --quick: 15 epochs (slow links, such as the namespace hosts of ofi-net.list).
 *
 * Counters (every rank, every epoch): message counters moved by the number
 * of messages it sent, byte counters by their total size, and
 * synchronous_messages by the number of synchronous ones.
 */
#include "tpml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NTAGS 6
#define BSEND_CAP (24u << 20)

typedef struct {
    int src, dst, tag;
    t_mode mode;
    size_t len;
    uint32_t seq;
    int done; /* received */
} smsg;

static t_limits lim;
static int epochs = 40, per_epoch = 40;
static size_t maxlen = 8u << 20;
static MPI_Comm rcomm; /* ready-mode messages */

static size_t pick_size(t_rng *r)
{
    uint64_t h = t_rng_below(r, 1000);
    if (h < 5)
        return 0;
    if (h < 500)
        return T_MSG_HDR + t_rng_below(r, 241);
    if (h < 750)
        return T_MSG_HDR + t_rng_below(r, 2 * lim.eager_max);
    if (h < 900)
        return T_MSG_HDR + t_rng_below(r, 256u << 10);
    if (h < 975)
        return T_MSG_HDR + t_rng_below(r, 1u << 20);
    return T_MSG_HDR + t_rng_below(r, maxlen - T_MSG_HDR + 1);
}

/* The plan of one epoch: per_epoch messages from every rank. */
static smsg *make_plan(t_rng *r, uint32_t *seqs, int n)
{
    smsg *p = t_malloc(sizeof(smsg) * (size_t) n);
    size_t *bsum = calloc((size_t) t_size, sizeof(size_t));
    int k = 0;
    for (int s = 0; s < t_size; s++)
        for (int i = 0; i < per_epoch; i++, k++) {
            smsg *m = &p[k];
            m->src = s;
            m->dst = (int) t_rng_below(r, (uint64_t) t_size);
            m->tag = (int) t_rng_below(r, NTAGS);
            m->len = pick_size(r);
            m->mode = (t_mode) t_rng_below(r, T_MODE_COUNT);
            m->seq = seqs[s]++;
            m->done = 0;
            if (T_MODE_BUF == m->mode) {
                size_t need = m->len + MPI_BSEND_OVERHEAD + 64;
                if (bsum[s] + need > BSEND_CAP)
                    m->mode = T_MODE_STD;
                else
                    bsum[s] += need;
            }
        }
    free(bsum);
    return p;
}

static MPI_Comm comm_of(const smsg *m)
{
    return T_MODE_READY == m->mode ? rcomm : MPI_COMM_WORLD;
}

/* Oldest not yet received message src->me with the tag (same comm kind). */
static smsg *oldest(smsg *p, int n, int src, int tag, int ready)
{
    for (int i = 0; i < n; i++)
        if (!p[i].done && p[i].dst == t_rank && p[i].src == src && p[i].tag == tag &&
            (T_MODE_READY == p[i].mode) == ready)
            return &p[i];
    return NULL;
}

/* Marks the received message done after checking it is the oldest of its
 * (source, tag) pair and that the content matches. */
static void account(smsg *p, int n, const unsigned char *buf, MPI_Status *st, int ready,
                    const char *how)
{
    char ctx[160];
    smsg *m = oldest(p, n, st->MPI_SOURCE, st->MPI_TAG, ready);
    int count;
    snprintf(ctx, sizeof(ctx), "%s receive from %d tag %d", how, st->MPI_SOURCE, st->MPI_TAG);
    T_CHECK(st->MPI_SOURCE >= 0 && st->MPI_SOURCE < t_size && NULL != m,
            "%s: no such message outstanding", ctx);
    T_MPI(MPI_Get_count(st, MPI_BYTE, &count));
    T_CHECK((size_t) count == m->len,
            "%s: length %d, expected the oldest outstanding "
            "(seq %u, %zu bytes, mode %s)",
            ctx, count, m->seq, m->len, t_mode_name(m->mode));
    T_CHECK(t_msg_check(buf, st, m->seq, ctx) == m->seq,
            "%s: got another message than "
            "seq %u (overtaking?)",
            ctx, m->seq);
    m->done = 1;
}

static void run_epoch(int e, smsg *p, int n, unsigned char *rbuf)
{
    MPI_Request *sreq = t_malloc(sizeof(MPI_Request) * (size_t) per_epoch);
    unsigned char **sbuf = t_malloc(sizeof(*sbuf) * (size_t) per_epoch);
    MPI_Request *rreq = t_malloc(sizeof(MPI_Request) * (size_t) n);
    unsigned char **rrb = t_malloc(sizeof(*rrb) * (size_t) n);
    smsg **rrm = t_malloc(sizeof(*rrm) * (size_t) n);
    int nsend = 0, nready = 0, nsync = 0, left = 0;
    long long bytes = 0;
    t_snap a, b;
    t_rng rr;
    char ctx[96];
    t_rng_init(&rr, (uint64_t) e * 1000003u + (uint64_t) t_rank);

    /* pre-post the ready-mode receives, in per-(source,tag) order */
    for (int i = 0; i < n; i++) {
        if (p[i].dst != t_rank)
            continue;
        if (T_MODE_READY == p[i].mode) {
            rrb[nready] = t_malloc(p[i].len + 1);
            rrm[nready] = &p[i];
            T_MPI(MPI_Irecv(rrb[nready], (int) p[i].len, MPI_BYTE, p[i].src, p[i].tag, rcomm,
                            &rreq[nready]));
            nready++;
        } else {
            left++;
        }
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    t_snap_take(&a);
    for (int i = 0; i < n; i++) {
        smsg *m = &p[i];
        if (m->src != t_rank)
            continue;
        sbuf[nsend] = t_malloc(m->len + 1);
        t_msg_fill(sbuf[nsend], m->len, m->src, m->tag, m->seq);
        T_MPI(t_isend_mode(m->mode, sbuf[nsend], (int) m->len, MPI_BYTE, m->dst, m->tag, comm_of(m),
                           &sreq[nsend]));
        nsend++;
        bytes += (long long) m->len;
        nsync += T_MODE_SYNC == m->mode;
    }

    /* receive everything else: specific batches and single wildcards */
    while (left > 0) {
        if (t_rng_below(&rr, 3)) {
            /* a batch of specific receives, each for the next message of
             * a random outstanding (source, tag) pair */
            MPI_Request q[8];
            MPI_Status st[8];
            unsigned char *qb[8];
            int k = 0, want = 1 + (int) t_rng_below(&rr, 8);
            int *taken = calloc((size_t) n, sizeof(int));
            for (int tries = 0; tries < 4 * want && k < want && k < left; tries++) {
                int i = (int) t_rng_below(&rr, (uint64_t) n);
                smsg *m = NULL;
                if (p[i].dst != t_rank || p[i].done || taken[i] || T_MODE_READY == p[i].mode)
                    continue;
                /* the next not yet taken message of that pair */
                for (int j = 0; j < n && !m; j++)
                    if (!p[j].done && !taken[j] && p[j].dst == t_rank && p[j].src == p[i].src &&
                        p[j].tag == p[i].tag && T_MODE_READY != p[j].mode)
                        m = &p[j];
                taken[m - p] = 1;
                qb[k] = t_malloc(m->len + 1);
                t_status_reset(&st[k]);
                T_MPI(MPI_Irecv(qb[k], (int) m->len, MPI_BYTE, m->src, m->tag, MPI_COMM_WORLD,
                                &q[k]));
                k++;
            }
            free(taken);
            T_MPI(MPI_Waitall(k, q, st));
            for (int j = 0; j < k; j++) {
                account(p, n, qb[j], &st[j], 0, "specific");
                free(qb[j]);
                left--;
            }
        } else {
            /* one wildcard receive shaped after a random outstanding message */
            int i, src, tag, cap = 0, shape = (int) t_rng_below(&rr, 3);
            MPI_Status st;
            do
                i = (int) t_rng_below(&rr, (uint64_t) n);
            while (p[i].dst != t_rank || p[i].done || T_MODE_READY == p[i].mode);
            src = 1 == shape ? p[i].src : MPI_ANY_SOURCE;
            tag = 2 == shape ? MPI_ANY_TAG : p[i].tag;
            if (0 == shape && t_rng_below(&rr, 2))
                tag = MPI_ANY_TAG;
            for (int j = 0; j < n; j++)
                if (!p[j].done && p[j].dst == t_rank && T_MODE_READY != p[j].mode &&
                    (MPI_ANY_SOURCE == src || p[j].src == src) &&
                    (MPI_ANY_TAG == tag || p[j].tag == tag) && (int) p[j].len > cap)
                    cap = (int) p[j].len;
            t_status_reset(&st);
            T_MPI(MPI_Recv(rbuf, cap, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st));
            account(p, n, rbuf, &st, 0, "wildcard");
            left--;
        }
    }
    /* the ready-mode receives */
    for (int j = 0; j < nready; j++) {
        MPI_Status st;
        t_status_reset(&st);
        T_MPI(MPI_Wait(&rreq[j], &st));
        T_CHECK(st.MPI_SOURCE == rrm[j]->src && st.MPI_TAG == rrm[j]->tag,
                "ready receive: status %d/%d, expected %d/%d", st.MPI_SOURCE, st.MPI_TAG,
                rrm[j]->src, rrm[j]->tag);
        account(p, n, rrb[j], &st, 1, "ready");
        free(rrb[j]);
    }
    T_MPI(MPI_Waitall(nsend, sreq, MPI_STATUSES_IGNORE));
    t_snap_take(&b);
    snprintf(ctx, sizeof(ctx), "epoch %d sends (%d messages, %d synchronous)", e, nsend, nsync);
    t_expect_proto(&a, &b, T_P_ANY, nsend, bytes, nsync, ctx);
    for (int j = 0; j < nsend; j++)
        free(sbuf[j]);
    for (int i = 0; i < n; i++)
        T_CHECK(p[i].dst != t_rank || p[i].done, "epoch %d: message seq %u from %d never came", e,
                p[i].seq, p[i].src);
    free(sreq);
    free(sbuf);
    free(rreq);
    free(rrb);
    free(rrm);
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    unsigned long long seed;
    const char *sv;
    uint32_t *seqs;
    unsigned char *rbuf;
    void *bbuf;
    int bsize, n;
    long long total = 0;
    double t0;
    t_rng plan;

    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    T_CHECK(t_size >= 2, "needs at least 2 ranks");
    t_limits_get(argc, argv, &lim);
    if (t_has_arg(argc, argv, "--long")) {
        epochs = 100;
        per_epoch = 60;
    } else if (t_has_arg(argc, argv, "--quick")) {
        epochs = 15;
    }
    sv = t_arg_value(argc, argv, "--seed");
    seed = sv ? strtoull(sv, NULL, 0) : (unsigned long long) time(NULL);
    T_MPI(MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD));
    if (0 == t_rank) {
        t_limits_print(&lim);
        t_log("seed %llu (rerun with --seed=%llu), %d epochs x %d messages per rank", seed, seed,
              epochs, per_epoch);
    }
    T_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &rcomm));
    bsize = (int) (2 * BSEND_CAP);
    bbuf = t_malloc((size_t) bsize);
    T_MPI(MPI_Buffer_attach(bbuf, bsize));
    rbuf = t_malloc(maxlen + 1);
    seqs = calloc((size_t) t_size, sizeof(uint32_t));
    t_rng_init(&plan, seed);
    n = per_epoch * t_size;
    t0 = t_now();
    for (int e = 0; e < epochs; e++) {
        smsg *p = make_plan(&plan, seqs, n);
        for (int i = 0; i < n; i++)
            if (p[i].src == t_rank)
                total += (long long) p[i].len;
        run_epoch(e, p, n, rbuf);
        free(p);
    }
    {
        long long all = 0;
        T_MPI(MPI_Reduce(&total, &all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
        if (0 == t_rank)
            t_log("%d messages, %.1f MiB in %.1f s (seed %llu)", epochs * n,
                  (double) all / (1 << 20), t_now() - t0, seed);
    }
    T_MPI(MPI_Buffer_detach(&bbuf, &bsize));
    free(bbuf);
    free(rbuf);
    free(seqs);
    MPI_Comm_free(&rcomm);
    return t_finalize();
}

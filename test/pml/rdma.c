/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * rdma.c - the rendezvous protocols of pml/ob1x over RDMA (RGET, RPUT, the
 * RDMA pipeline), their receiver fallbacks, failures, truncation, striping
 * over two BTLs and cancel. Rank 0 sends, rank 1 receives; every message is
 * checked byte for byte (gaps of non-contiguous receive buffers and the
 * bytes past them included), and, with the ob1x counters, the protocol the
 * SENDER chose is proven per message by pml_ob1x_<protocol>_messages/_bytes
 * and the receiver's refusals by pml_ob1x_rdma_fallback_*.
 *
 * Arguments:
 *   nobtl=1        the receiver has no RDMA BTL the sender has (its flags
 *                  lack put and get): each RDMA message the sender starts
 *                  moves the receiver's rdma_fallback_no_btl by one;
 *   case=NAME      protocols (default): every send mode (standard, ready
 *                  with a pre-posted receive, synchronous, buffered into an
 *                  attached buffer) x contiguous/vector send x
 *                  contiguous/vector receive x sizes around each threshold
 *                  up to max=;
 *                  noncontig: 16 MiB contiguous sends into a vector receive
 *                  type: rdma_fallback_noncontig +1 on the receiver each;
 *                  faults: contiguous sends, run with
 *                  pml_ob1x_rdma_fault_every: rdma_retries > 0 at the end
 *                  (expect_failed=1: rdma_fallback_failed > 0 too);
 *                  truncate: a truncating receive at every protocol size:
 *                  MPI_ERR_TRUNCATE from MPI_Recv / MPI_Wait, the prefix
 *                  delivered, nothing written past the buffer;
 *                  stripe: 16-64 MiB messages, contiguous (the RDMA
 *                  protocol) and vector (send/recv pipeline) sends; the
 *                  bytes per BTL (pml_ob1x_bytes_<btl>) must follow the
 *                  weights of stripe=A:wa,B:wb within 10 %;
 *                  cancel: an unmatched rendezvous Isend / Issend is
 *                  cancelled (MPI_Test_cancelled true), and the next message
 *                  on the same tag arrives intact;
 *                  reuse: one 1 MiB buffer sent 1000 times (and received
 *                  into one buffer): with leave_pinned=1 (the job's
 *                  mpi_leave_pinned) registrations_reused >= 999 and
 *                  registrations_made <= 4, summed over both ranks; with
 *                  leave_pinned=0 nothing reused, a registration per message
 *                  (regs=none: none at all, a BTL whose puts and gets of
 *                  host memory need no handle);
 *                  realloc: a buffer is sent, freed, and a new one of the
 *                  same size (at the same address when malloc gives it back)
 *                  with other data is sent: the receiver gets the new data,
 *                  never the old (no stale registration), 20 times.
 *   big=PROTO      protocol of contiguous sends above the eager size (rget,
 *                  rput, rdma_pipeline, sendrecv_pipeline); default rget.
 *   small=PROTO split=N   sizes above the eager size and at most N bytes use
 *                  small= instead (the RDMA pipeline's direct protocol below
 *                  btl_<name>_min_rdma_pipeline_size).
 *   max=N          largest message (default 64 MiB).
 *   --btl=a,b      the BTLs (else from the "btl" parameter).
 * Non-contiguous sends always expect the send/recv pipeline, buffered sends
 * above the eager size the buffered pipeline, synchronous sends at or below
 * the eager size the send/recv pipeline. A receiver falls back (counted by
 * it, pml_ob1x_rdma_fallback_noncontig) exactly when the sender chose an
 * RDMA protocol and the receive type is not contiguous.
 *
 * Under stock ob1 (OB1X_TEST_NO_PVARS=1) the data checks run, the counters
 * do not, and the cancel case is skipped (stock 4.1 cannot cancel sends).
 */
#include "tpml.h"

#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#define GUARD 0xA5
#define GAPFILL 0x3C
#define TAG_GO 7
#define MiB ((size_t) 1 << 20)

/* ------------------------------------------------------------------ */
/* counters (a session of our own: handles allocated once, at start)   */
/* ------------------------------------------------------------------ */

enum { P_IMM, P_PREP, P_ALLOC, P_SRPIPE, P_BUFPIPE, P_RGET, P_RPUT, P_RDMAPIPE, P_COUNT };
static const char *const proto_name[P_COUNT] = {"eager_immediate",
                                                "eager_prepared",
                                                "eager_allocated",
                                                "sendrecv_pipeline",
                                                "buffered_pipeline",
                                                "rget",
                                                "rput",
                                                "rdma_pipeline"};
#define P_EAGER ((1 << P_IMM) | (1 << P_PREP) | (1 << P_ALLOC))
#define P_RDMA ((1 << P_RGET) | (1 << P_RPUT) | (1 << P_RDMAPIPE))

enum {
    E_SYNC,
    E_FB_NONCONTIG,
    E_FB_REG,
    E_FB_NOBTL,
    E_FB_FAILED,
    E_RETRIES,
    E_REG_MADE,
    E_REG_REUSED,
    E_HINT_COPY,
    E_COUNT
};
static const char *const event_name[E_COUNT] = {
    "synchronous_messages", "rdma_fallback_noncontig", "rdma_fallback_registration",
    "rdma_fallback_no_btl", "rdma_fallback_failed",    "rdma_retries",
    "registrations_made",   "registrations_reused",    "btl_hint_copy"};

#define NPV (2 * P_COUNT + E_COUNT + 4)
#define PV_MSG(p) (2 * (p))
#define PV_BYTES(p) (2 * (p) + 1)
#define PV_EV(e) (2 * P_COUNT + (e))
#define PV_BTL(i) (2 * P_COUNT + E_COUNT + (i))

typedef struct {
    unsigned long long v[NPV];
} snap_t;

static MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
static MPI_T_pvar_handle handle[NPV];
static int have[NPV];
static char pv_name[NPV][96];
static t_limits lim;
static int counters; /* the ob1x counters are there */

static int pv_open(int i, const char *name)
{
    int idx, verb, cls, bind, ro, cont, atomic, nlen = 0, dlen = 0, count = 0;
    MPI_Datatype dt;
    MPI_T_enum en;
    snprintf(pv_name[i], sizeof(pv_name[i]), "%s", name);
    if (MPI_SUCCESS != MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx) &&
        MPI_SUCCESS != MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_HIGHWATERMARK, &idx) &&
        MPI_SUCCESS != MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_LEVEL, &idx))
        return 0;
    T_MPI(MPI_T_pvar_get_info(idx, NULL, &nlen, &verb, &cls, &dt, &en, NULL, &dlen, &bind, &ro,
                              &cont, &atomic));
    T_CHECK(MPI_UNSIGNED_LONG_LONG == dt || MPI_UINT64_T == dt || MPI_UNSIGNED_LONG == dt,
            "pvar %s: not a 64-bit counter", name);
    T_MPI(MPI_T_pvar_handle_alloc(session, idx, NULL, &handle[i], &count));
    T_CHECK(1 == count, "pvar %s has %d values", name, count);
    if (!cont)
        T_MPI(MPI_T_pvar_start(session, handle[i]));
    have[i] = 1;
    return 1;
}

static void pv_init(void)
{
    char name[96];
    int missing = 0;
    counters = t_pvars;
    if (!counters)
        return;
    T_MPI(MPI_T_pvar_session_create(&session));
    for (int p = 0; p < P_COUNT; p++) {
        snprintf(name, sizeof(name), "pml_ob1x_%s_messages", proto_name[p]);
        missing += !pv_open(PV_MSG(p), name);
        snprintf(name, sizeof(name), "pml_ob1x_%s_bytes", proto_name[p]);
        missing += !pv_open(PV_BYTES(p), name);
    }
    for (int e = 0; e < E_COUNT; e++) {
        snprintf(name, sizeof(name), "pml_ob1x_%s", event_name[e]);
        missing += !pv_open(PV_EV(e), name);
    }
    T_CHECK(0 == missing, "%d pml_ob1x protocol/RDMA counters missing", missing);
    /* bytes per BTL: pml_ob1x_bytes_<btl> (docs/mca-params.md) */
    for (int i = 0; i < lim.nbtl && i < 4; i++) {
        snprintf(name, sizeof(name), "pml_ob1x_bytes_%s", lim.names[i]);
        if (!pv_open(PV_BTL(i), name))
            snprintf(pv_name[PV_BTL(i)], sizeof(pv_name[0]), "pml_ob1x_bytes_%s", lim.names[i]);
    }
}

static void pv_fini(void)
{
    if (!counters)
        return;
    for (int i = 0; i < NPV; i++)
        if (have[i])
            MPI_T_pvar_handle_free(session, &handle[i]);
    MPI_T_pvar_session_free(&session);
}

static void snap(snap_t *s)
{
    memset(s, 0, sizeof(*s));
    for (int i = 0; i < NPV; i++)
        if (have[i])
            T_MPI(MPI_T_pvar_read(session, handle[i], &s->v[i]));
}

static unsigned long long delta(const snap_t *a, const snap_t *b, int i)
{
    return b->v[i] - a->v[i];
}

/* Every counter that moved, for failure messages. */
static const char *moved(const snap_t *a, const snap_t *b)
{
    static char buf[1024];
    size_t off = 0;
    buf[0] = 0;
    for (int i = 0; i < NPV && off < sizeof(buf) - 100; i++)
        if (have[i] && delta(a, b, i))
            off += (size_t) snprintf(buf + off, sizeof(buf) - off, " %s+%llu", pv_name[i] + 9,
                                     delta(a, b, i));
    return buf;
}

static int proto_of(const char *name)
{
    for (int p = 0; p < P_COUNT; p++)
        if (0 == strcmp(name, proto_name[p]))
            return p;
    T_FAIL("unknown protocol '%s'", name);
}

/* ------------------------------------------------------------------ */
/* what the sender must choose                                          */
/* ------------------------------------------------------------------ */

static int big_proto = P_RGET, small_proto = P_RGET;
static size_t split_size = 0, max_size = 64 * MiB;
static size_t eager_payload; /* largest eager message: eager limit - MATCH header */

/* Bit mask of the protocols allowed for one message. */
static int expected(t_mode mode, t_dt_kind skind, size_t size)
{
    if (size <= eager_payload)
        return T_MODE_SYNC == mode ? 1 << P_SRPIPE : P_EAGER;
    if (T_MODE_BUF == mode)
        return 1 << P_BUFPIPE;
    if (T_DT_CONTIG != skind)
        return 1 << P_SRPIPE;
    return 1 << (size <= split_size ? small_proto : big_proto);
}

static const char *mask_names(int mask)
{
    static char buf[256];
    size_t off = 0;
    buf[0] = 0;
    for (int p = 0; p < P_COUNT; p++)
        if (mask & (1 << p))
            off += (size_t) snprintf(buf + off, sizeof(buf) - off, "%s%s", off ? "|" : "",
                                     proto_name[p]);
    return buf;
}

/* The sender's counters around one message: exactly one message, of
 * `size` bytes, in the allowed protocols; none elsewhere. */
static void expect_sender(const snap_t *a, const snap_t *b, int allowed, size_t size, int sync,
                          const char *ctx)
{
    unsigned long long m = 0, by = 0;
    if (!counters)
        return;
    for (int p = 0; p < P_COUNT; p++) {
        if (allowed & (1 << p)) {
            m += delta(a, b, PV_MSG(p));
            by += delta(a, b, PV_BYTES(p));
        } else {
            T_CHECK(0 == delta(a, b, PV_MSG(p)), "%s: sender chose %s, expected %s [moved:%s]", ctx,
                    proto_name[p], mask_names(allowed), moved(a, b));
        }
    }
    T_CHECK(1 == m && size == by,
            "%s: %s moved by %llu messages / %llu bytes, expected 1 / %zu "
            "[moved:%s]",
            ctx, mask_names(allowed), m, by, size, moved(a, b));
    T_CHECK((unsigned long long) sync == delta(a, b, PV_EV(E_SYNC)),
            "%s: synchronous_messages moved by %llu, expected %d", ctx, delta(a, b, PV_EV(E_SYNC)),
            sync);
}

/* The receiver's refusals around one message. faults: failures are being
 * injected, so rdma_fallback_failed may move. */
/* nobtl=1: the receiver refuses every RDMA message for want of a BTL */
static int nobtl_mode;

static void expect_receiver(const snap_t *a, const snap_t *b, int noncontig_fallback, int faults,
                            const char *ctx)
{
    if (!counters)
        return;
    if (nobtl_mode) {
        /* one refusal per RDMA message, for want of a BTL or (checked
         * first) of a contiguous buffer */
        unsigned long long refused =
            delta(a, b, PV_EV(E_FB_NOBTL)) + delta(a, b, PV_EV(E_FB_NONCONTIG));
        T_CHECK((unsigned long long) noncontig_fallback == refused,
                "%s: receiver's rdma_fallback_no_btl + _noncontig moved by %llu, expected %d "
                "[moved:%s]",
                ctx, refused, noncontig_fallback, moved(a, b));
        return;
    }
    T_CHECK((unsigned long long) noncontig_fallback == delta(a, b, PV_EV(E_FB_NONCONTIG)),
            "%s: receiver's rdma_fallback_noncontig moved by %llu, expected %d [moved:%s]", ctx,
            delta(a, b, PV_EV(E_FB_NONCONTIG)), noncontig_fallback, moved(a, b));
    T_CHECK(0 == delta(a, b, PV_EV(E_FB_REG)) && 0 == delta(a, b, PV_EV(E_FB_NOBTL)),
            "%s: unexpected receiver fallback [moved:%s]", ctx, moved(a, b));
    if (!faults)
        T_CHECK(0 == delta(a, b, PV_EV(E_FB_FAILED)) && 0 == delta(a, b, PV_EV(E_RETRIES)),
                "%s: RDMA failures without injection [moved:%s]", ctx, moved(a, b));
}

/* The bytes each BTL of lim.names carried for one message of `size`
 * bytes, into by[]: the sender's counters (the brief: "payload bytes each
 * BTL carried for this sender") when they account for the whole message,
 * else the sums over both ranks (bytes counted on the side that moves
 * them, e.g. the receiver's gets). Collective. */
static void btl_bytes(const snap_t *a, const snap_t *b, size_t size, unsigned long long *by)
{
    unsigned long long mine[4] = {0, 0, 0, 0}, sender[4], sum[4], tot = 0;
    int n = lim.nbtl < 4 ? lim.nbtl : 4;
    for (int i = 0; i < n; i++)
        mine[i] = have[PV_BTL(i)] ? delta(a, b, PV_BTL(i)) : 0;
    memcpy(sender, mine, sizeof(sender));
    T_MPI(MPI_Allreduce(mine, sum, 4, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    T_MPI(MPI_Bcast(sender, 4, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++)
        tot += sender[i];
    for (int i = 0; i < n; i++)
        by[i] = tot >= size ? sender[i] : sum[i];
}

/* Sum over both ranks of one counter's movement. */
static unsigned long long both(const snap_t *a, const snap_t *b, int i)
{
    unsigned long long mine = have[i] ? delta(a, b, i) : 0, sum = 0;
    T_MPI(MPI_Allreduce(&mine, &sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    return sum;
}

/* ------------------------------------------------------------------ */
/* one message                                                          */
/* ------------------------------------------------------------------ */

typedef struct {
    t_mode mode;
    t_dt_kind skind, rkind;
    size_t size;
    size_t cap;    /* receive capacity (< size: truncation) */
    int late_post; /* the receiver probes first: the message arrives unexpected */
    int how;       /* receive: 0 MPI_Recv, 1 Irecv + MPI_Wait */
    int faults;    /* injected RDMA failures */
    int tag;
} msg_t;

static void describe(const msg_t *m, char *ctx, size_t len)
{
    snprintf(ctx, len, "%s %s->%s %zu bytes%s%s (tag %d)", t_mode_name(m->mode),
             t_dt_name(m->skind), t_dt_name(m->rkind), m->size,
             m->cap < m->size ? " truncated" : "", m->late_post ? " unexpected" : "", m->tag);
}

static void send_side(const msg_t *m, const char *ctx, snap_t *a, snap_t *b)
{
    t_typed s;
    int rc;
    uint32_t seed = t_seed((uint32_t) m->size, (uint32_t) m->tag, 19);
    t_typed_create(&s, m->skind, m->size);
    t_typed_fill(&s, seed, GAPFILL);
    if (T_MODE_READY == m->mode)
        T_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    snap(a);
    rc = t_send_mode(m->mode, s.buf, s.count, s.type, 1, m->tag, MPI_COMM_WORLD);
    snap(b);
    T_CHECK(MPI_SUCCESS == rc, "%s: send returned %s", ctx, t_err_string(rc));
    if (T_MODE_BUF == m->mode) {
        /* the attached buffer holds one message of max=: wait until this
         * one has left it (detach blocks until then) */
        void *bb;
        int bs;
        T_MPI(MPI_Buffer_detach(&bb, &bs));
        T_MPI(MPI_Buffer_attach(bb, bs));
    }
    /* the send buffer is the user's: untouched, gaps included */
    {
        t_typed ref;
        t_typed_create(&ref, m->skind, m->size);
        t_typed_fill(&ref, seed, GAPFILL);
        T_CHECK(0 == memcmp(ref.buf, s.buf, s.span), "%s: send buffer modified", ctx);
        t_typed_free(&ref);
    }
    t_typed_free(&s);
}

static void recv_side(const msg_t *m, const char *ctx, snap_t *a, snap_t *b)
{
    t_typed r;
    MPI_Status st;
    MPI_Request q;
    int rc, count = -1;
    uint32_t seed = t_seed((uint32_t) m->size, (uint32_t) m->tag, 19);
    size_t slack = t_typed_slack;
    /* a truncating receive is followed by a guarded zone as long as the
     * rest of the message: writing it all is a failure, not corruption */
    if (m->cap < m->size)
        t_typed_slack = m->size - m->cap + 4096;
    t_typed_create(&r, m->rkind, m->cap);
    t_typed_slack = slack;
    t_typed_guard(&r, GUARD);
    t_status_reset(&st);
    st.MPI_ERROR = -12345;
    snap(a);
    if (m->late_post) {
        MPI_Status pst;
        T_MPI(MPI_Probe(0, m->tag, MPI_COMM_WORLD, &pst));
        t_check_status(&pst, 0, m->tag, (long) m->size, ctx);
    }
    if (1 == m->how || T_MODE_READY == m->mode) {
        T_MPI(MPI_Irecv(r.buf, r.count, r.type, 0, m->tag, MPI_COMM_WORLD, &q));
        if (T_MODE_READY == m->mode)
            T_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD));
        rc = MPI_Wait(&q, &st);
    } else {
        rc = MPI_Recv(r.buf, r.count, r.type, 0, m->tag, MPI_COMM_WORLD, &st);
    }
    snap(b);
    if (m->cap < m->size) {
        T_CHECK(MPI_ERR_TRUNCATE == t_err_class(rc),
                "%s: receive returned %s, expected "
                "MPI_ERR_TRUNCATE",
                ctx, t_err_string(rc));
        T_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
        T_CHECK(count >= 0 && (size_t) count <= m->size, "%s: MPI_Get_count %d", ctx, count);
    } else {
        T_CHECK(MPI_SUCCESS == rc, "%s: receive returned %s", ctx, t_err_string(rc));
        t_check_status(&st, 0, m->tag, (long) m->size, ctx);
    }
    T_CHECK(0 == st.MPI_SOURCE && m->tag == st.MPI_TAG, "%s: status source %d tag %d", ctx,
            st.MPI_SOURCE, st.MPI_TAG);
    t_typed_check(&r, m->cap < m->size ? m->cap : m->size, seed, GUARD, ctx);
    t_typed_free(&r);
}

/* Sends one message from rank 0 to rank 1 and checks everything. Returns
 * the protocol mask expected (for callers that check more). */
static int one_msg(const msg_t *m, snap_t *sa, snap_t *sb)
{
    char ctx[200];
    int allowed = expected(m->mode, m->skind, m->size);
    int fallback = (allowed & P_RDMA) && (nobtl_mode || T_DT_CONTIG != m->rkind);
    snap_t a, b;
    describe(m, ctx, sizeof(ctx));
    if (getenv("T_TRACE") && 0 == t_rank)
        t_log("%s: expect %s%s", ctx, mask_names(allowed), fallback ? " + fallback" : "");
    if (0 == t_rank) {
        send_side(m, ctx, &a, &b);
        expect_sender(&a, &b, allowed, m->size, T_MODE_SYNC == m->mode, ctx);
    } else if (1 == t_rank) {
        recv_side(m, ctx, &a, &b);
        expect_receiver(&a, &b, fallback, m->faults, ctx);
    } else {
        snap(&a);
        b = a;
    }
    /* one BTL: it carried the whole payload of a rendezvous (eager
     * messages are not counted per BTL, to keep their path short; a
     * buffered send is complete before its data has left) */
    if (counters && 1 == lim.nbtl && have[PV_BTL(0)] && !(allowed & P_EAGER) &&
        T_MODE_BUF != m->mode) {
        unsigned long long by[4];
        btl_bytes(&a, &b, m->size, by);
        if (0 == t_rank && m->cap >= m->size)
            T_CHECK(by[0] == m->size, "%s: %s moved by %llu, expected %zu", ctx, pv_name[PV_BTL(0)],
                    by[0], m->size);
    }
    if (sa) {
        *sa = a;
        *sb = b;
    }
    return allowed;
}

/* ------------------------------------------------------------------ */
/* cases                                                                */
/* ------------------------------------------------------------------ */

/* Sizes around each threshold: the eager size, split= and the pipeline
 * fragment sizes, then powers up to max=. */
static int sizes_of(size_t *out, int cap)
{
    size_t cand[40];
    int n = 0, k = 0;
    size_t e = eager_payload;
    cand[n++] = e;
    cand[n++] = e + 1;
    cand[n++] = 2 * e + 3;
    if (split_size) {
        cand[n++] = split_size - 1;
        cand[n++] = split_size;
        cand[n++] = split_size + 1;
    }
    cand[n++] = 64 * 1024 + 1;
    cand[n++] = lim.max_send_max + 1;
    cand[n++] = 3 * lim.max_send_max - 1;
    cand[n++] = 256 * 1024;
    cand[n++] = MiB + 4093;
    cand[n++] = 4 * MiB;
    cand[n++] = 16 * MiB - 1;
    cand[n++] = 64 * MiB;
    /* sort, unique, <= max */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (cand[j] < cand[i]) {
                size_t t = cand[i];
                cand[i] = cand[j];
                cand[j] = t;
            }
    for (int i = 0; i < n && k < cap; i++)
        if (cand[i] <= max_size && (0 == k || out[k - 1] != cand[i]))
            out[k++] = cand[i];
    return k;
}

static void case_protocols(int faults)
{
    size_t sizes[40];
    int n = sizes_of(sizes, 40), tag = 1000;
    for (int i = 0; i < n; i++)
        for (int mode = 0; mode < T_MODE_COUNT; mode++)
            for (int sk = 0; sk < 2; sk++)
                for (int rk = 0; rk < 2; rk++) {
                    msg_t m = {(t_mode) mode,
                               sk ? T_DT_VECTOR : T_DT_CONTIG,
                               rk ? T_DT_VECTOR : T_DT_CONTIG,
                               sizes[i],
                               sizes[i],
                               0,
                               0,
                               faults,
                               0};
                    /* the largest sizes once per mode, contiguous send */
                    if (sizes[i] > 16 * MiB && (sk || (rk && mode)))
                        continue;
                    /* faults: contiguous only (the RDMA protocols) */
                    if (faults && (sk || rk))
                        continue;
                    m.tag = tag++;
                    m.late_post = T_MODE_READY != mode && (m.tag & 1);
                    m.how = (m.tag >> 1) & 1;
                    one_msg(&m, NULL, NULL);
                }
}

static void case_noncontig(void)
{
    for (int i = 0; i < 4; i++) {
        msg_t m = {i & 1 ? T_MODE_SYNC : T_MODE_STD,
                   T_DT_CONTIG,
                   T_DT_VECTOR,
                   16 * MiB,
                   16 * MiB,
                   i >> 1,
                   i & 1,
                   0,
                   200 + i};
        T_CHECK(!(expected(m.mode, m.skind, m.size) & (1 << P_SRPIPE)),
                "case noncontig needs an RDMA protocol for 16 MiB (big=)");
        one_msg(&m, NULL, NULL);
    }
}

static void case_faults(int expect_failed)
{
    snap_t a, b;
    unsigned long long retries, failed;
    snap(&a);
    case_protocols(1);
    snap(&b);
    retries = both(&a, &b, PV_EV(E_RETRIES));
    failed = both(&a, &b, PV_EV(E_FB_FAILED));
    if (0 == t_rank)
        t_log("injected faults: rdma_retries %llu, rdma_fallback_failed %llu", retries, failed);
    if (counters) {
        T_CHECK(retries > 0, "no RDMA operation was retried (pml_ob1x_rdma_fault_every set?)");
        if (expect_failed)
            T_CHECK(failed > 0, "no RDMA range fell back to send/recv after the retry limit");
    }
}

static void case_truncate(void)
{
    size_t sizes[40];
    int n = sizes_of(sizes, 40), tag = 3000;
    for (int i = 0; i < n; i++)
        for (int v = 0; v < 4; v++) {
            msg_t m = {v & 2 ? T_MODE_SYNC : T_MODE_STD,
                       T_DT_CONTIG,
                       v == 3 ? T_DT_VECTOR : T_DT_CONTIG,
                       sizes[i],
                       0,
                       0,
                       v & 1,
                       0,
                       tag++};
            /* cut in the middle and one byte short */
            m.cap = v & 1 ? sizes[i] - 1 : sizes[i] / 2 + 7;
            /* stock ob1 of Open MPI 4.1.4 writes truncated messages past
             * the buffer from 64 bytes below its eager limit up
             * (test/pml/truncate.c): those under ob1x only */
            if (!counters && sizes[i] + 64 > lim.eager_min)
                continue;
            m.late_post = (m.tag >> 2) & 1;
            one_msg(&m, NULL, NULL);
            /* the next message on the pair arrives intact */
            {
                msg_t f = {T_MODE_STD, T_DT_CONTIG, T_DT_CONTIG, 300, 300, 0, 0, 0, tag++};
                one_msg(&f, NULL, NULL);
            }
        }
}

/* stripe=vader:1,smcuda:3 */
static void case_stripe(const char *spec)
{
    char names[2][32];
    double w[2];
    int idx[2] = {-1, -1};
    size_t sizes[] = {16 * MiB, 32 * MiB + 5, 64 * MiB};
    T_CHECK(spec && 4 == sscanf(spec, "%31[^:]:%lf,%31[^:]:%lf", names[0], &w[0], names[1], &w[1]),
            "case stripe needs stripe=A:wa,B:wb");
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < lim.nbtl && i < 4; i++)
            if (0 == strcmp(lim.names[i], names[k]))
                idx[k] = i;
    T_CHECK(idx[0] >= 0 && idx[1] >= 0, "stripe: BTLs %s and %s not both in use", names[0],
            names[1]);
    if (counters)
        for (int k = 0; k < 2; k++)
            T_CHECK(have[PV_BTL(idx[k])], "stripe: no counter %s", pv_name[PV_BTL(idx[k])]);
    for (int sk = 0; sk < 2; sk++)
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && sizes[i] <= max_size; i++) {
            msg_t m = {T_MODE_STD,
                       sk ? T_DT_VECTOR : T_DT_CONTIG,
                       T_DT_CONTIG,
                       sizes[i],
                       sizes[i],
                       (int) i & 1,
                       0,
                       0,
                       4000 + (int) (10 * sk + i)};
            snap_t a, b;
            unsigned long long by[2], all[4];
            double share, want = w[0] / (w[0] + w[1]);
            one_msg(&m, &a, &b);
            btl_bytes(&a, &b, m.size, all);
            by[0] = all[idx[0]];
            by[1] = all[idx[1]];
            if (!counters)
                continue;
            share = (double) by[0] / (double) (by[0] + by[1]);
            if (0 == t_rank)
                t_log("stripe %s %zu bytes: %s %llu, %s %llu (share of %s %.3f, weight %.3f)",
                      t_dt_name(m.skind), m.size, names[0], by[0], names[1], by[1], names[0], share,
                      want);
            T_CHECK(by[0] + by[1] >= m.size && by[0] + by[1] <= m.size + 64 * 1024,
                    "stripe %s %zu: %llu bytes counted on the two BTLs", t_dt_name(m.skind), m.size,
                    by[0] + by[1]);
            T_CHECK(share >= 0.9 * want && share <= 1.1 * want && (1 - share) >= 0.9 * (1 - want) &&
                        (1 - share) <= 1.1 * (1 - want),
                    "stripe %s %zu: %s carried %.3f of the bytes, weight says %.3f (+-10%%)",
                    t_dt_name(m.skind), m.size, names[0], share, want);
        }
}

/* An unmatched rendezvous send is cancelled; the next message on the same
 * tag is the one received. */
static void case_cancel(void)
{
    size_t size = 16 * MiB > max_size ? max_size : 16 * MiB;
    for (int kind = 0; kind < 2; kind++) {
        int tag = 5000 + kind, cancelled = -1;
        char ctx[96];
        snprintf(ctx, sizeof(ctx), "cancel unmatched %s of %zu bytes", kind ? "Issend" : "Isend",
                 size);
        if (0 == t_rank) {
            unsigned char *buf = t_malloc(size);
            MPI_Request r;
            MPI_Status st;
            snap_t a, b;
            t_fill(buf, size, t_seed(1, (uint32_t) tag, 0));
            snap(&a);
            T_MPI(kind ? MPI_Issend(buf, (int) size, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r)
                       : MPI_Isend(buf, (int) size, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r));
            snap(&b);
            expect_sender(&a, &b, expected(kind ? T_MODE_SYNC : T_MODE_STD, T_DT_CONTIG, size),
                          size, kind, ctx);
            /* the receiver has seen the envelope (unexpected there) */
            T_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            T_MPI(MPI_Cancel(&r));
            T_MPI(MPI_Wait(&r, &st));
            T_MPI(MPI_Test_cancelled(&st, &cancelled));
            T_CHECK(1 == cancelled, "%s: MPI_Test_cancelled false", ctx);
            t_check_data(buf, size, t_seed(1, (uint32_t) tag, 0), ctx);
            T_MPI(MPI_Send(&cancelled, 1, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD));
            free(buf);
        } else if (1 == t_rank) {
            MPI_Status st;
            int flag = 1;
            double t0;
            T_MPI(MPI_Probe(0, tag, MPI_COMM_WORLD, &st));
            t_check_status(&st, 0, tag, (long) size, ctx);
            T_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD));
            T_MPI(MPI_Recv(&cancelled, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            T_CHECK(1 == cancelled, "%s: the sender could not cancel", ctx);
            t0 = t_now();
            while (t_now() - t0 < 0.1) {
                T_MPI(MPI_Iprobe(0, tag, MPI_COMM_WORLD, &flag, &st));
                T_CHECK(!flag, "%s: the cancelled message can still be matched", ctx);
            }
        }
        /* the next message on the same tag, sent once the receiver has
         * stopped probing for the cancelled one: this one, intact */
        T_MPI(MPI_Barrier(MPI_COMM_WORLD));
        {
            msg_t m = {T_MODE_STD, T_DT_CONTIG, T_DT_CONTIG, size, size, 0, 0, 0, tag};
            one_msg(&m, NULL, NULL);
        }
        T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
}

/* One 1 MiB buffer sent `n` times into one receive buffer. */
static void case_reuse(int leave_pinned, bool none)
{
    const int n = 1000;
    const size_t size = MiB;
    unsigned char *buf = t_malloc(size);
    snap_t a, b;
    unsigned long long made, reused;
    snap(&a);
    for (int i = 0; i < n; i++) {
        uint32_t seed = t_seed((uint32_t) i, 77, 5);
        if (0 == t_rank) {
            /* a few bytes change per message: the data must be this message's */
            t_fill(buf, size, seed);
            T_MPI(MPI_Send(buf, (int) size, MPI_BYTE, 1, 600, MPI_COMM_WORLD));
        } else if (1 == t_rank) {
            memset(buf, GUARD, size);
            T_MPI(MPI_Recv(buf, (int) size, MPI_BYTE, 0, 600, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            if (0 == i % 50 || n - 1 == i)
                t_check_data(buf, size, seed, "reuse");
            else
                T_CHECK(buf[0] == t_pat(seed, 0) && buf[size - 1] == t_pat(seed, size - 1),
                        "reuse: message %d: first/last byte not this message's", i);
        }
    }
    snap(&b);
    made = both(&a, &b, PV_EV(E_REG_MADE));
    reused = both(&a, &b, PV_EV(E_REG_REUSED));
    if (0 == t_rank)
        t_log("reuse, leave_pinned %d: %d messages, registrations made %llu, reused %llu",
              leave_pinned, n, made, reused);
    if (counters && 0 == t_rank) {
        unsigned long long m = delta(&a, &b, PV_MSG(big_proto));
        T_CHECK(m == (unsigned long long) n, "reuse: %s moved by %llu, expected %d",
                proto_name[big_proto], m, n);
        if (leave_pinned)
            T_CHECK(reused >= (unsigned long long) n - 1 && made <= 4,
                    "reuse: leave_pinned on: %llu registrations made, %llu reused for %d sends "
                    "of one buffer (expected <= 4 made, >= %d reused)",
                    made, reused, n, n - 1);
        else if (none)
            T_CHECK(0 == reused && 0 == made,
                    "reuse: leave_pinned off: %llu registrations made, %llu reused for %d sends "
                    "(expected none: the BTL's puts and gets of host memory need no handle)",
                    made, reused, n);
        else
            T_CHECK(0 == reused && made >= (unsigned long long) n,
                    "reuse: leave_pinned off: %llu registrations made, %llu reused for %d sends "
                    "(expected >= %d made, none reused)",
                    made, reused, n, n);
    }
    free(buf);
}

/* Sent, freed, reallocated (same size: glibc maps it again, usually at the
 * same address) with other data, sent again. */
static void case_realloc(void)
{
    const size_t size = 4 * MiB + 4096;
    int same = 0;
    uintptr_t prev = 0;
    for (int i = 0; i < 20; i++) {
        uint32_t seed = t_seed((uint32_t) i, 99, 3);
        unsigned char *buf = t_malloc(size);
        if (0 == t_rank) {
            same += prev == (uintptr_t) buf;
            prev = (uintptr_t) buf;
            t_fill(buf, size, seed);
            T_MPI(MPI_Send(buf, (int) size, MPI_BYTE, 1, 700, MPI_COMM_WORLD));
        } else if (1 == t_rank) {
            memset(buf, GUARD, size);
            T_MPI(MPI_Recv(buf, (int) size, MPI_BYTE, 0, 700, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            t_check_data(buf, size, seed, "realloc: a buffer freed and allocated again");
        }
        free(buf);
    }
    if (0 == t_rank)
        t_log("realloc: %d of 19 new buffers at the address of the freed one", same);
}

int main(int argc, char **argv)
{
    const char *c, *v;
    void *bbuf = NULL;
    int bsize = 0;
    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    c = t_arg_value(argc, argv, "case");
    T_CHECK(2 == t_size, "needs 2 ranks");
    t_limits_get(argc, argv, &lim);
    if ((v = t_arg_value(argc, argv, "big")))
        big_proto = small_proto = proto_of(v);
    if ((v = t_arg_value(argc, argv, "small")))
        small_proto = proto_of(v);
    if ((v = t_arg_value(argc, argv, "split")))
        split_size = strtoull(v, NULL, 0);
    if ((v = t_arg_value(argc, argv, "max")))
        max_size = strtoull(v, NULL, 0);
    nobtl_mode = NULL != t_arg_value(argc, argv, "nobtl");
    /* the eager size of the BTL messages start on (the smallest) */
    eager_payload = lim.eager_min - T_MATCH_HDR;
    pv_init();
    if (0 == t_rank) {
        t_limits_print(&lim);
        t_log("case %s: contiguous sends above %zu bytes expect %s (%s up to %zu)",
              c ? c : "protocols", eager_payload, proto_name[big_proto], proto_name[small_proto],
              split_size);
    }
    /* buffered sends up to the largest message */
    bsize = (int) (max_size + 2 * MiB);
    bbuf = t_malloc((size_t) bsize);
    T_MPI(MPI_Buffer_attach(bbuf, bsize));

    if (!c || 0 == strcmp(c, "protocols"))
        case_protocols(0);
    else if (0 == strcmp(c, "noncontig"))
        case_noncontig();
    else if (0 == strcmp(c, "faults"))
        case_faults(t_arg_value(argc, argv, "expect_failed") != NULL);
    else if (0 == strcmp(c, "truncate"))
        case_truncate();
    else if (0 == strcmp(c, "stripe"))
        case_stripe(t_arg_value(argc, argv, "stripe"));
    else if (0 == strcmp(c, "reuse"))
        case_reuse(t_arg_value(argc, argv, "leave_pinned") &&
                       0 != strcmp(t_arg_value(argc, argv, "leave_pinned"), "0"),
                   t_arg_value(argc, argv, "regs") &&
                       0 == strcmp(t_arg_value(argc, argv, "regs"), "none"));
    else if (0 == strcmp(c, "realloc"))
        case_realloc();
    else if (0 == strcmp(c, "cancel")) {
        if (counters)
            case_cancel();
        else if (0 == t_rank)
            t_log("stock PML: send cancel not tested");
    } else
        T_FAIL("unknown case '%s'", c);

    T_MPI(MPI_Buffer_detach(&bbuf, &bsize));
    free(bbuf);
    pv_fini();
    return t_finalize();
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * match_unit.c - unit test of the ordering rules of pml/ob1x matching
 * (pml_ob1x_order.h), no MPI traffic. The queues of pml_ob1x_match.c are
 * Open MPI lists under Open MPI locks, which a program without the
 * runtime cannot link, so the rules they apply are pure functions and this
 * test drives them through queues of its own built the same way:
 *  - 16-bit sequence numbers: "ahead" within half the space, and messages
 *    that arrive out of order across 65535 -> 0 are held in sequence order
 *    (the insertion of pml_ob1x_match.c's ooo_insert) and released in send
 *    order;
 *  - posting order: receives naming a peer and MPI_ANY_SOURCE receives,
 *    with and without MPI_ANY_TAG, posted interleaved (posting numbers
 *    wrapping at 32 bits), must take messages exactly as one list in
 *    posting order would (MPI's rule), with the per-peer queue plus the
 *    wildcard queue and ob1x_wildcard_wins deciding;
 *  - MPI_ANY_TAG never matches the negative tags of collectives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../btl/unit_check.h"

#include "../../ompi/mca/pml/ob1x/pml_ob1x_order.h"

#define PROG "pml/match_unit"
#define CHECK(cond, ...) UNIT_CHECK(cond, return, __VA_ARGS__)

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t) (rng % n);
}

static void check_seq_ahead(void)
{
    const struct {
        uint16_t seq, expected;
        bool ahead;
    } c[] = {
        {0, 0, true},          {1, 0, true},           {0, 65535, true},      {5, 65530, true},
        {65535, 0, false},     {65530, 5, false},      {0x7fff, 0, true},     {0x8000, 0, false},
        {0x7ffe, 65535, true}, {0x7fff, 65535, false}, {65535, 0x8000, true}, {100, 101, false},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); ++i) {
        CHECK(ob1x_seq_ahead(c[i].seq, c[i].expected) == c[i].ahead, "seq %u vs expected %u: %s",
              c[i].seq, c[i].expected, c[i].ahead ? "should be ahead" : "should be behind");
    }
}

/* The out-of-order queue of one peer: held sequence numbers, in order. */
#define HOLD_MAX 64
typedef struct {
    uint16_t held[HOLD_MAX];
    int n;
    uint16_t expected;
} peer_t;

/* As ooo_insert: from the back, after the last one the new one is ahead of. */
static void hold(peer_t *p, uint16_t seq)
{
    int i = p->n;
    while (i > 0 && !ob1x_seq_ahead(seq, p->held[i - 1])) {
        --i;
    }
    memmove(&p->held[i + 1], &p->held[i], (size_t) (p->n - i) * sizeof(p->held[0]));
    p->held[i] = seq;
    ++p->n;
}

/* One arrival: matched at once if in turn (then held ones that became in
 * turn follow), else held. Appends what is matched to out[]. */
static void arrive(peer_t *p, uint16_t seq, uint16_t *out, size_t *nout)
{
    if (seq != p->expected) {
        hold(p, seq);
        return;
    }
    out[(*nout)++] = seq;
    p->expected++;
    while (p->n > 0 && p->held[0] == p->expected) {
        out[(*nout)++] = p->held[0];
        memmove(&p->held[0], &p->held[1], (size_t) --p->n * sizeof(p->held[0]));
        p->expected++;
    }
}

/* Messages drawn as the sender draws them (a 32-bit counter, low 16 bits
 * on the wire), starting at `first`, arriving shuffled within windows of
 * `window`; they must be matched in send order. */
static void check_wrap(uint32_t first, size_t count, int window)
{
    static uint16_t sent[1 << 18], arrival[1 << 18], matched[1 << 18];
    int32_t send_seq = (int32_t) first;
    peer_t p = {.n = 0, .expected = (uint16_t) first};
    size_t nmatched = 0;

    for (size_t i = 0; i < count; ++i) {
        sent[i] = (uint16_t) send_seq++;
        arrival[i] = sent[i];
    }
    for (size_t base = 0; base < count; base += (size_t) window) {
        size_t n = count - base < (size_t) window ? count - base : (size_t) window;
        for (size_t i = n; i > 1; --i) {
            size_t j = rnd((uint32_t) i);
            uint16_t t = arrival[base + i - 1];
            arrival[base + i - 1] = arrival[base + j];
            arrival[base + j] = t;
        }
    }
    for (size_t i = 0; i < count; ++i) {
        arrive(&p, arrival[i], matched, &nmatched);
        CHECK(p.n < HOLD_MAX, "first %u window %d: %d held", first, window, p.n);
    }
    CHECK(nmatched == count && 0 == p.n, "first %u window %d: %zu of %zu matched, %d held", first,
          window, nmatched, count, p.n);
    for (size_t i = 0; i < count; ++i) {
        CHECK(matched[i] == sent[i], "first %u window %d: message %zu matched seq %u, sent %u",
              first, window, i, matched[i], sent[i]);
    }
}

/* Posted receives: per-peer queues and one wildcard queue, as
 * ob1x_comm_t keeps them; and a reference list of all in posting order. */
#define NPEERS 4
#define NRECV 4096
typedef struct {
    int src, tag, id;
    uint32_t post_seq;
    bool taken;
} recv_t;

static recv_t recvs[NRECV];
static int spec_q[NPEERS][NRECV], spec_n[NPEERS], wild_q[NRECV], wild_n;

static int first_accepting(const int *q, int n, int tag)
{
    for (int i = 0; i < n; ++i) {
        if (!recvs[q[i]].taken && ob1x_tag_matches(recvs[q[i]].tag, tag)) {
            return q[i];
        }
    }
    return -1;
}

/* The receive ob1x takes for a message (src, tag), as ob1x_match_posted. */
static int match_posted(int src, int tag)
{
    int spec = first_accepting(spec_q[src], spec_n[src], tag);
    int wild = wild_n ? first_accepting(wild_q, wild_n, tag) : -1;

    if (ob1x_wildcard_wins(wild >= 0, wild >= 0 ? recvs[wild].post_seq : 0, spec >= 0,
                           spec >= 0 ? recvs[spec].post_seq : 0)) {
        return wild;
    }
    return spec;
}

/* MPI's rule: the first receive posted that accepts the message. */
static int match_reference(int nposted, int src, int tag)
{
    for (int i = 0; i < nposted; ++i) {
        if (!recvs[i].taken && (MPI_ANY_SOURCE == recvs[i].src || src == recvs[i].src) &&
            ob1x_tag_matches(recvs[i].tag, tag)) {
            return i;
        }
    }
    return -1;
}

static void check_posting_order(uint32_t first_post, int wild_pct, int anytag_pct)
{
    uint32_t post_seq = first_post;
    int matches = 0;

    memset(spec_n, 0, sizeof(spec_n));
    wild_n = 0;
    for (int i = 0; i < NRECV; ++i) {
        recv_t *r = &recvs[i];
        r->src = (int) rnd(100) < wild_pct ? MPI_ANY_SOURCE : (int) rnd(NPEERS);
        r->tag = (int) rnd(100) < anytag_pct ? MPI_ANY_TAG : (int) rnd(3);
        r->id = i;
        r->post_seq = post_seq++;
        r->taken = false;
        if (MPI_ANY_SOURCE == r->src) {
            wild_q[wild_n++] = i;
        } else {
            spec_q[r->src][spec_n[r->src]++] = i;
        }
    }
    for (int m = 0; m < 3 * NRECV; ++m) {
        int src = (int) rnd(NPEERS), tag = (int) rnd(4) - (0 == rnd(8)); /* some negative */
        int got = match_posted(src, tag), want = match_reference(NRECV, src, tag);
        CHECK(got == want,
              "post from %u, %d%% wildcard, %d%% any tag: message %d (src %d tag %d) took "
              "receive %d, MPI says %d",
              first_post, wild_pct, anytag_pct, m, src, tag, got, want);
        if (got >= 0) {
            recvs[got].taken = true;
            ++matches;
        }
    }
    CHECK(matches > NRECV / 4, "too few matches (%d) to mean anything", matches);
}

static void check_tags(void)
{
    CHECK(ob1x_tag_matches(MPI_ANY_TAG, 0) && ob1x_tag_matches(MPI_ANY_TAG, 0x7fffffff),
          "MPI_ANY_TAG takes user tags");
    CHECK(!ob1x_tag_matches(MPI_ANY_TAG, -2) && !ob1x_tag_matches(MPI_ANY_TAG, -1000),
          "MPI_ANY_TAG must not take collective (negative) tags");
    CHECK(ob1x_tag_matches(-2, -2) && !ob1x_tag_matches(5, 6) && !ob1x_tag_matches(5, -1),
          "specific tags");
}

int main(void)
{
    const uint32_t firsts[] = {0, 65500, 65535, 131000, 0x7fffffff - 100, 0xfffffff0u};
    const int windows[] = {1, 2, 7, 33};
    const uint32_t posts[] = {0, 0xffffffffu - 1000, 0x7fffffffu - 500};

    check_seq_ahead();
    check_tags();
    for (size_t f = 0; f < sizeof(firsts) / sizeof(firsts[0]); ++f) {
        for (size_t w = 0; w < sizeof(windows) / sizeof(windows[0]); ++w) {
            check_wrap(firsts[f], 3 * 65536 + 77, windows[w]);
        }
    }
    for (size_t p = 0; p < sizeof(posts) / sizeof(posts[0]); ++p) {
        check_posting_order(posts[p], 30, 30);
        check_posting_order(posts[p], 5, 50);
        check_posting_order(posts[p], 80, 10);
        check_posting_order(posts[p], 50, 0);
    }
    if (failures) {
        printf("FAIL: %s: %d check(s) failed\n", PROG, failures);
        return 1;
    }
    printf("%s: all checks passed\n", PROG);
    return 0;
}

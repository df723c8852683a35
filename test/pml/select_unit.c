/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * select_unit.c - unit test of the send-protocol selector of pml/ob1x
 * (pml_ob1x_protocol.h), no MPI traffic. A table of cases (send mode,
 * size around each threshold, btl_sendi or not, in-place BTL or not,
 * congested receiver or not, and above the eager size the RDMA inputs:
 * contiguity, an RDMA BTL with get and/or put, leave_pinned, its minimum
 * RDMA pipeline size, the BTL's figures) with the protocol each must get,
 * the row that follows a refused immediate send, and whether the
 * request-less path may run it; then every combination of those inputs
 * against the rules of docs/ob1x.md, written out again here; then the rule
 * that reads a BTL's published figures (common_ob1x_hints.h).
 */
#include <stdio.h>
#include <string.h>

#include "../btl/unit_check.h"

#include "../../ompi/mca/pml/ob1x/pml_ob1x_protocol.h"
#include "../../opal/mca/common/ob1x/common_ob1x_hints.h"

#define PROG "pml/select_unit"
#define CHECK(cond, ...) UNIT_CHECK(cond, return, __VA_ARGS__)

/* The table the PML defines in pml_ob1x_protocol.c; only the names are
 * needed here (they are the MPI_T counter names tests look for). */
const ob1x_protocol_desc_t ob1x_protocols[OB1X_PROTO_COUNT] = {
    [OB1X_PROTO_EAGER_IMMEDIATE] = {"eager_immediate", NULL, ""},
    [OB1X_PROTO_EAGER_PREPARED] = {"eager_prepared", NULL, ""},
    [OB1X_PROTO_EAGER_ALLOCATED] = {"eager_allocated", NULL, ""},
    [OB1X_PROTO_SENDRECV_PIPELINE] = {"sendrecv_pipeline", NULL, ""},
    [OB1X_PROTO_BUFFERED_PIPELINE] = {"buffered_pipeline", NULL, ""},
    [OB1X_PROTO_RGET] = {"rget", NULL, ""},
    [OB1X_PROTO_RPUT] = {"rput", NULL, ""},
    [OB1X_PROTO_RDMA_PIPELINE] = {"rdma_pipeline", NULL, ""},
};

enum mode { STD, RDY, SYN, BUF };
static const char *const mode_names[] = {"standard", "ready", "synchronous", "buffered"};

#define EAGER_MAX 4082 /* vader: 4 KiB eager limit - 14-byte MATCH */
#define SENDI_MAX 256

#define IMM OB1X_PROTO_EAGER_IMMEDIATE
#define PRE OB1X_PROTO_EAGER_PREPARED
#define ALC OB1X_PROTO_EAGER_ALLOCATED
#define SRP OB1X_PROTO_SENDRECV_PIPELINE
#define BFP OB1X_PROTO_BUFFERED_PIPELINE
#define RGT OB1X_PROTO_RGET
#define RPT OB1X_PROTO_RPUT
#define RDP OB1X_PROTO_RDMA_PIPELINE

typedef struct {
    enum mode mode;
    size_t size;
    bool sendi, inplace, congested;
    ob1x_protocol_t want;  /* the choice */
    ob1x_protocol_t after; /* the row after a refused immediate send */
} select_case_t;

static const select_case_t cases[] = {
    /* standard, BTL with sendi sending in place (vader-like) */
    {STD, 0, true, true, false, IMM, ALC},
    {STD, 1, true, true, false, IMM, PRE},
    {STD, SENDI_MAX, true, true, false, IMM, PRE},
    {STD, SENDI_MAX + 1, true, true, false, PRE, PRE},
    {STD, EAGER_MAX, true, true, false, PRE, PRE},
    {STD, EAGER_MAX + 1, true, true, false, SRP, SRP},
    {STD, 1 << 20, true, true, false, SRP, SRP},
    /* standard, BTL with sendi that copies (smcuda-like): sendi to the limit */
    {STD, 0, true, false, false, IMM, ALC},
    {STD, SENDI_MAX + 1, true, false, false, IMM, ALC},
    {STD, EAGER_MAX, true, false, false, IMM, ALC},
    {STD, EAGER_MAX + 1, true, false, false, SRP, SRP},
    /* standard, no sendi */
    {STD, 0, false, true, false, ALC, ALC},
    {STD, 1, false, true, false, PRE, PRE},
    {STD, SENDI_MAX, false, true, false, PRE, PRE},
    {STD, EAGER_MAX, false, false, false, ALC, ALC},
    {STD, EAGER_MAX + 1, false, false, false, SRP, SRP},
    /* ready is standard */
    {RDY, 1, true, true, false, IMM, PRE},
    {RDY, SENDI_MAX + 1, true, true, false, PRE, PRE},
    {RDY, EAGER_MAX + 1, true, true, false, SRP, SRP},
    /* synchronous: the pipeline up to the eager size (no RDMA BTL here) */
    {SYN, 0, true, true, false, SRP, SRP},
    {SYN, 1, true, false, false, SRP, SRP},
    {SYN, EAGER_MAX, false, true, false, SRP, SRP},
    {SYN, 1 << 20, true, true, true, SRP, SRP},
    /* buffered: eager sizes never prepared; beyond, the buffered pipeline */
    {BUF, 0, true, true, false, IMM, ALC},
    {BUF, SENDI_MAX, true, true, false, IMM, ALC},
    {BUF, SENDI_MAX + 1, true, true, false, ALC, ALC},
    {BUF, EAGER_MAX, false, true, false, ALC, ALC},
    {BUF, EAGER_MAX, true, false, false, IMM, ALC},
    {BUF, EAGER_MAX + 1, true, true, false, BFP, BFP},
    {BUF, 1 << 20, false, false, false, BFP, BFP},
    /* congested receiver: the pipeline (header-only RNDV), whatever else */
    {STD, 0, true, true, true, SRP, SRP},
    {STD, SENDI_MAX, true, false, true, SRP, SRP},
    {STD, EAGER_MAX, false, true, true, SRP, SRP},
    {RDY, 1, true, true, true, SRP, SRP},
    {BUF, 1, true, true, true, SRP, SRP},
    /* a buffered send above the eager size is copied whatever the receiver */
    {BUF, 1 << 20, true, true, true, BFP, BFP},
};

/* Above the eager size, with an RDMA BTL: the seed's procedure. */
typedef struct {
    enum mode mode;
    size_t size;
    bool contiguous, rdma, get, put, leave_pinned, prefer_copy;
    size_t min_rdma_pipeline;
    ob1x_protocol_t want;
} rdma_case_t;

#define BIG ((size_t) 1 << 31)
static const rdma_case_t rdma_cases[] = {
    /* vader with CMA: get and put, min_rdma_pipeline_size 2^31 - 1 */
    {STD, EAGER_MAX + 1, true, true, true, true, false, false, BIG, RGT},
    {STD, 64 << 20, true, true, true, true, false, false, BIG, RGT},
    {SYN, 1 << 20, true, true, true, true, false, false, BIG, RGT},
    {RDY, 1 << 20, true, true, true, true, false, false, BIG, RGT},
    {BUF, 1 << 20, true, true, true, true, false, false, BIG, BFP},
    /* not contiguous, or no RDMA BTL: send/recv pipeline */
    {STD, 1 << 20, false, true, true, true, false, false, BIG, SRP},
    {SYN, 1 << 20, true, false, false, false, false, false, BIG, SRP},
    /* the BTL's figures favour its copy path */
    {STD, 1 << 20, true, true, true, true, false, true, BIG, SRP},
    {STD, 1 << 20, true, true, true, true, true, true, BIG, SRP},
    /* tcp-like: put only, min_rdma_pipeline_size 192 KiB */
    {STD, 196608, true, true, false, true, false, false, 196608, RPT},
    {STD, 196609, true, true, false, true, false, false, 196608, RDP},
    {STD, 196609, true, true, false, true, true, false, 196608, RPT},
    /* get and put with a minimum: above it the pipeline unless leave_pinned */
    {STD, 196609, true, true, true, true, false, false, 196608, RDP},
    {STD, 196609, true, true, true, true, true, false, 196608, RGT},
    /* get only: direct get at every size */
    {STD, 64 << 20, true, true, true, false, false, false, 0, RGT},
};

static ob1x_proto_in_t make_in(enum mode mode, size_t size, bool sendi, bool inplace,
                               bool congested, size_t eager_max, size_t sendi_max)
{
    ob1x_proto_in_t in;

    memset(&in, 0, sizeof(in));
    in.size = size;
    in.eager_max = eager_max;
    in.sendi_max = sendi_max;
    in.sendi = sendi;
    in.inplace = inplace;
    in.synchronous = SYN == mode;
    in.buffered = BUF == mode;
    in.congested = congested;
    return in;
}

static void check_case(const select_case_t *c)
{
    ob1x_proto_in_t in =
        make_in(c->mode, c->size, c->sendi, c->inplace, c->congested, EAGER_MAX, SENDI_MAX);
    ob1x_protocol_t got = ob1x_protocol_select(&in);

    CHECK(got == c->want, "%s %zu B sendi %d inplace %d congested %d: %s, expected %s",
          mode_names[c->mode], c->size, c->sendi, c->inplace, c->congested,
          ob1x_protocols[got].name, ob1x_protocols[c->want].name);
    if (IMM == got) {
        got = ob1x_protocol_after_immediate(&in);
        CHECK(got == c->after,
              "%s %zu B sendi %d inplace %d: after a refused sendi %s, expected %s",
              mode_names[c->mode], c->size, c->sendi, c->inplace, ob1x_protocols[got].name,
              ob1x_protocols[c->after].name);
    }
}

static void check_rdma_case(const rdma_case_t *c)
{
    ob1x_proto_in_t in = make_in(c->mode, c->size, true, true, false, EAGER_MAX, SENDI_MAX);
    ob1x_protocol_t got;

    in.contiguous = c->contiguous;
    in.rdma = c->rdma;
    in.get = c->get;
    in.put = c->put;
    in.leave_pinned = c->leave_pinned;
    in.prefer_copy = c->prefer_copy;
    in.min_rdma_pipeline = c->min_rdma_pipeline;
    got = ob1x_protocol_select(&in);
    CHECK(got == c->want,
          "%s %zu B contiguous %d rdma %d get %d put %d leave_pinned %d prefer_copy %d "
          "min %zu: %s, expected %s",
          mode_names[c->mode], c->size, c->contiguous, c->rdma, c->get, c->put, c->leave_pinned,
          c->prefer_copy, c->min_rdma_pipeline, ob1x_protocols[got].name,
          ob1x_protocols[c->want].name);
}

/* The rules of docs/ob1x.md, "Protocol selection", first row that holds. */
static ob1x_protocol_t rules(const ob1x_proto_in_t *in)
{
    if (in->size <= in->eager_max && (in->synchronous || in->congested)) {
        return SRP;
    }
    if (in->size <= in->eager_max && in->sendi && (in->size <= in->sendi_max || !in->inplace)) {
        return IMM;
    }
    if (in->size <= in->eager_max && !in->buffered && in->size > 0 && in->inplace) {
        return PRE;
    }
    if (in->size <= in->eager_max) {
        return ALC;
    }
    if (in->buffered) {
        return BFP;
    }
    if (!in->contiguous || !in->rdma || in->prefer_copy) {
        return SRP;
    }
    if (in->leave_pinned || !in->put || in->size <= in->min_rdma_pipeline) {
        return in->get ? RGT : RPT;
    }
    return RDP;
}

/* Every mode x size near each threshold x sendi x in-place x congestion,
 * for two BTL shapes (sendi_max below and above the eager limit). */
static void check_all(void)
{
    const size_t shapes[][2] = {{EAGER_MAX, SENDI_MAX}, {200, 1024}};
    unsigned long n = 0;

    for (size_t s = 0; s < 2 && 0 == failures; ++s) {
        size_t em = shapes[s][0], sm = shapes[s][1];
        const size_t sizes[] = {0, 1, sm - 1, sm, sm + 1, em - 1, em, em + 1, 65536, 1 << 24};
        for (int mode = STD; mode <= BUF; ++mode) {
            for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
                for (int bits = 0; bits < 1024; ++bits) {
                    bool sendi = bits & 1, inplace = bits & 2, congested = bits & 4;
                    ob1x_proto_in_t in =
                        make_in((enum mode) mode, sizes[i], sendi, inplace, congested, em, sm);
                    ob1x_protocol_t got, want;
                    in.contiguous = bits & 8;
                    in.rdma = bits & 16;
                    in.get = bits & 32;
                    in.put = bits & 64;
                    in.leave_pinned = bits & 128;
                    in.prefer_copy = bits & 256;
                    in.min_rdma_pipeline = bits & 512 ? 65536 : 0;
                    got = ob1x_protocol_select(&in);
                    want = rules(&in);
                    ++n;
                    CHECK(got == want,
                          "eager_max %zu sendi_max %zu: %s %zu B sendi %d inplace %d "
                          "congested %d: %s, expected %s",
                          em, sm, mode_names[mode], sizes[i], sendi, inplace, congested,
                          ob1x_protocols[got].name, ob1x_protocols[want].name);
                    /* A refused immediate send goes on with the next row. */
                    if (IMM == got) {
                        in.sendi = false;
                        CHECK(ob1x_protocol_after_immediate(&in) == rules(&in),
                              "%s %zu B: the row after a refused sendi is not the next rule",
                              mode_names[mode], sizes[i]);
                    }
                }
            }
        }
    }
    printf("%lu combinations checked against the rules\n", n);
}

/* The rule that reads a BTL's figures, against its table in docs/ob1x.md. */
static void check_hints(void)
{
    ob1x_btl_hints_t h;
    const size_t min = 32768, busy = 2 << 20;

    memset(&h, 0, sizeof(h));
    h.single_min = min;
    h.busy_limit = busy;
    h.adapt = true;
    CHECK(ob1x_hints_prefer_copy(&h, min - 1, true), "below single_min: copy");
    h.far = true;
    CHECK(!ob1x_hints_prefer_copy(&h, min - 1, false), "below single_min, far, alone: single");
    CHECK(ob1x_hints_prefer_copy(&h, min - 1, true), "below single_min, far, a stream: copy");
    CHECK(ob1x_hints_prefer_copy(&h, 2 * min - 1, true), "below 2 single_min, far, a stream: copy");
    CHECK(!ob1x_hints_prefer_copy(&h, 2 * min, true), "2 single_min, far, a stream: single copy");
    CHECK(!ob1x_hints_prefer_copy(&h, 2 * min - 1, false), "far, alone: single copy");
    h.two_way_recent = true;
    CHECK(ob1x_hints_prefer_copy(&h, min / 4 - 1, true), "far, two-way below single_min/4: copy");
    CHECK(!ob1x_hints_prefer_copy(&h, min / 4, true), "far, two-way from single_min/4: single");
    h.two_way_recent = false;
    h.far = false;
    CHECK(!ob1x_hints_prefer_copy(&h, busy, true), "from busy_limit: single copy");
    CHECK(!ob1x_hints_prefer_copy(&h, min, false), "an isolated message: single copy");
    h.two_way = true;
    CHECK(!ob1x_hints_prefer_copy(&h, min, true), "a two-way stream: single copy");
    h.two_way = false;
    CHECK(ob1x_hints_prefer_copy(&h, min, true), "a stream, copy figure stale: copy");
    h.copy_fresh = true;
    h.copy_ps = 100;
    CHECK(!ob1x_hints_prefer_copy(&h, min, true), "a stream, single figure stale: single");
    h.single_fresh = true;
    h.single_ps = 200;
    CHECK(ob1x_hints_prefer_copy(&h, min, true), "a stream, copy measured faster: copy");
    h.single_ps = 50;
    CHECK(!ob1x_hints_prefer_copy(&h, min, true), "a stream, single measured faster: single");
    h.adapt = false;
    CHECK(ob1x_hints_prefer_copy(&h, min, true), "a stream without adapt: copy");
}

/* Which protocols the request-less path runs itself. */
static void check_requestless(void)
{
    for (int p = 0; p < OB1X_PROTO_COUNT; ++p) {
        bool copy_eager_ok = IMM == p || PRE == p || ALC == p;
        CHECK(ob1x_protocol_requestless((ob1x_protocol_t) p, true) == copy_eager_ok,
              "%s: request-less when the caller may go without a request", ob1x_protocols[p].name);
        CHECK(ob1x_protocol_requestless((ob1x_protocol_t) p, false) == (IMM == p),
              "%s: request-less when the caller needs a request", ob1x_protocols[p].name);
    }
}

int main(void)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        check_case(&cases[i]);
    }
    for (size_t i = 0; i < sizeof(rdma_cases) / sizeof(rdma_cases[0]); ++i) {
        check_rdma_case(&rdma_cases[i]);
    }
    printf("%zu table cases\n",
           sizeof(cases) / sizeof(cases[0]) + sizeof(rdma_cases) / sizeof(rdma_cases[0]));
    check_all();
    check_hints();
    check_requestless();
    if (failures) {
        printf("FAIL: %s: %d check(s) failed\n", PROG, failures);
        return 1;
    }
    printf("%s: all checks passed\n", PROG);
    return 0;
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * select_unit.c - unit test of the send-protocol selector of pml/ob1x
 * (pml_ob1x_protocol.h), no MPI traffic. A table of cases (send mode,
 * size around each threshold, btl_sendi or not, in-place BTL or not,
 * congested receiver or not) with the protocol each must get, the row that
 * follows a refused immediate send, and whether the request-less path may
 * run it; then every combination of those inputs against the rules of
 * docs/ob1x.md, written out again here.
 */
#include <stdio.h>
#include <string.h>

#include "../btl/unit_check.h"

#include "../../ompi/mca/pml/ob1x/pml_ob1x_protocol.h"

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
    /* synchronous: always the pipeline, at every size */
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
    {BUF, 1 << 20, true, true, true, SRP, SRP},
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

/* The rules of docs/ob1x.md, "Protocol selection", first row that holds. */
static ob1x_protocol_t rules(const ob1x_proto_in_t *in)
{
    if (in->synchronous) {
        return SRP;
    }
    if (in->congested) {
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
    return SRP;
}

/* Every mode x size near each threshold x sendi x in-place x congestion,
 * for two BTL shapes (sendi_max below and above the eager limit). */
static void check_all(void)
{
    const size_t shapes[][2] = {{EAGER_MAX, SENDI_MAX}, {200, 1024}};
    unsigned long n = 0;

    for (size_t s = 0; s < 2; ++s) {
        size_t em = shapes[s][0], sm = shapes[s][1];
        const size_t sizes[] = {0, 1, sm - 1, sm, sm + 1, em - 1, em, em + 1, 65536, 1 << 24};
        for (int mode = STD; mode <= BUF; ++mode) {
            for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
                for (int bits = 0; bits < 8; ++bits) {
                    bool sendi = bits & 1, inplace = bits & 2, congested = bits & 4;
                    ob1x_proto_in_t in =
                        make_in((enum mode) mode, sizes[i], sendi, inplace, congested, em, sm);
                    ob1x_protocol_t got = ob1x_protocol_select(&in), want = rules(&in);
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
    printf("%zu table cases\n", sizeof(cases) / sizeof(cases[0]));
    check_all();
    check_requestless();
    if (failures) {
        printf("FAIL: %s: %d check(s) failed\n", PROG, failures);
        return 1;
    }
    printf("%s: all checks passed\n", PROG);
    return 0;
}

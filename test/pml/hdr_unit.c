/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * hdr_unit.c - unit test of the wire headers of pml/ob1x (pml_ob1x_hdr.h),
 * no MPI traffic: each header's bytes at their documented offsets
 * (docs/ob1x.md, "Wire headers"), the version and flags sharing a byte, the
 * size of every type, and the check on receipt: every other version, every
 * unknown type and every truncated header is rejected, ours accepted.
 */
#include <stdio.h>
#include <string.h>

#include "../btl/unit_check.h"

#include "../../ompi/mca/pml/ob1x/pml_ob1x_hdr.h"

#define PROG "pml/hdr_unit"
#define CHECK(cond, ...) UNIT_CHECK(cond, return, __VA_ARGS__)

static uint16_t get16(const unsigned char *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

/* MATCH: type 0, flags|version 1, ctx 2, src 4, tag 8, seq 12; 14 bytes. */
static void check_match(void)
{
    const struct {
        uint8_t flags;
        uint16_t ctx, seq;
        int32_t src, tag;
    } in[] = {
        {0, 0, 0, 0, 0},
        {OB1X_HDR_FLAG_SYNC, 1, 65535, 3, 0x7fffffff},
        {OB1X_HDR_FLAG_VOID, 65535, 1, 1 << 20, -17},
        {OB1X_HDR_FLAG_SYNC | OB1X_HDR_FLAG_VOID, 0x1234, 0x8000, 65535, -1},
    };
    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); ++i) {
        unsigned char b[sizeof(ob1x_hdr_t)];
        ob1x_hdr_match_t *h = (ob1x_hdr_match_t *) b;

        memset(b, 0xA5, sizeof(b));
        ob1x_hdr_match_init(h, OB1X_HDR_MATCH, in[i].flags, in[i].ctx, in[i].seq, in[i].src,
                            in[i].tag);
        CHECK(OB1X_HDR_MATCH == b[0], "match %zu: type byte %d", i, b[0]);
        CHECK(b[1] == (in[i].flags | OB1X_HDR_VERSION << 4), "match %zu: flag byte 0x%x", i, b[1]);
        CHECK(OB1X_HDR_VERSION == ob1x_hdr_version(&h->common), "match %zu: version %d", i,
              ob1x_hdr_version(&h->common));
        CHECK((h->common.flags & 0xf) == in[i].flags, "match %zu: flags lost", i);
        CHECK(get16(b + 2) == in[i].ctx, "match %zu: ctx at 2", i);
        CHECK((int32_t) get32(b + 4) == in[i].src, "match %zu: src at 4", i);
        CHECK((int32_t) get32(b + 8) == in[i].tag, "match %zu: tag at 8", i);
        CHECK(get16(b + 12) == in[i].seq, "match %zu: seq at 12", i);
        CHECK(0xA5 == b[14] && 0xA5 == b[15], "match %zu: init wrote past the 14 wire bytes", i);
    }
    CHECK(14 == OB1X_HDR_MATCH_LEN && 14 == ob1x_hdr_size(OB1X_HDR_MATCH), "MATCH is 14 bytes");
}

/* RNDV: MATCH, in_rndv 14 (0), msg_length 16, src_req 24; 32 bytes. */
static void check_rndv(void)
{
    unsigned char b[sizeof(ob1x_hdr_t)];
    ob1x_hdr_rndv_t *h = (ob1x_hdr_rndv_t *) b;

    memset(b, 0xA5, sizeof(b));
    ob1x_hdr_match_init(&h->match, OB1X_HDR_RNDV, OB1X_HDR_FLAG_SYNC, 7, 65535, 2, 99);
    h->match.in_rndv = 0;
    h->msg_length = 0x0123456789abcdefull;
    h->src_req = 0xfedcba9876543210ull;
    CHECK(OB1X_HDR_RNDV == b[0] && get16(b + 12) == 65535, "rndv: match part");
    CHECK(0 == get16(b + 14), "rndv: in_rndv at 14 is 0");
    CHECK(0x0123456789abcdefull == get64(b + 16), "rndv: msg_length at 16");
    CHECK(0xfedcba9876543210ull == get64(b + 24), "rndv: src_req at 24");
    CHECK(32 == ob1x_hdr_size(OB1X_HDR_RNDV), "rndv: 32 bytes");
}

/* ACK (40 bytes: range at 24 and 32), FRAG, CANCEL, FLOW (24 bytes): their
 * 64-bit fields at 8 and 16; RGET, PUT, FIN of the RDMA protocols. */
static void check_others(void)
{
    ob1x_hdr_t h;
    const unsigned char *b = (const unsigned char *) &h;

    memset(&h, 0, sizeof(h));
    ob1x_hdr_common_init(&h.common, OB1X_HDR_ACK, 0);
    h.ack.src_req = 11;
    h.ack.dst_req = 22;
    h.ack.offset = 23;
    h.ack.length = 24;
    CHECK(11 == get64(b + 8) && 22 == get64(b + 16) && 23 == get64(b + 24) &&
              24 == get64(b + 32),
          "ack: src_req at 8, dst_req at 16, offset at 24, length at 32");
    memset(&h, 0, sizeof(h));
    ob1x_hdr_common_init(&h.common, OB1X_HDR_RGET, 0);
    h.rget.rndv.msg_length = 1;
    h.rget.rndv.src_req = 2;
    h.rget.src_addr = 3;
    h.rget.nbtls = 4;
    CHECK(1 == get64(b + 16) && 2 == get64(b + 24) && 3 == get64(b + 32) && 4 == get32(b + 40),
          "rget: msg_length 16, src_req 24, src_addr 32, nbtls 40");
    memset(&h, 0, sizeof(h));
    ob1x_hdr_common_init(&h.common, OB1X_HDR_PUT, 0);
    h.put.handle_size = 5;
    h.put.btl_id = 6;
    h.put.src_req = 7;
    h.put.dst_req = 8;
    h.put.piece = 9;
    h.put.offset = 10;
    h.put.length = 11;
    h.put.dst_addr = 12;
    CHECK(5 == get16(b + 2) && 6 == get32(b + 4) && 7 == get64(b + 8) && 8 == get64(b + 16) &&
              9 == get64(b + 24) && 10 == get64(b + 32) && 11 == get64(b + 40) &&
              12 == get64(b + 48),
          "put: handle_size 2, btl_id 4, src_req 8, dst_req 16, piece 24, offset 32, length 40, "
          "dst_addr 48, handle 56");
    memset(&h, 0, sizeof(h));
    ob1x_hdr_common_init(&h.common, OB1X_HDR_FIN, OB1X_HDR_FLAG_FIN_PUT);
    h.fin.slot = 13;
    h.fin.failed = 1;
    h.fin.req = 14;
    h.fin.offset = 15;
    h.fin.length = 16;
    h.fin.btl_id = 17;
    CHECK(13 == get16(b + 2) && 1 == get32(b + 4) && 14 == get64(b + 8) && 15 == get64(b + 16) &&
              16 == get64(b + 24) && 17 == get32(b + 32),
          "fin: slot 2, failed 4, req 8, offset 16, length 24, btl_id 32");
    memset(&h, 0, sizeof(h));
    ob1x_hdr_common_init(&h.common, OB1X_HDR_FRAG, 0);
    h.frag.offset = 1ull << 40;
    h.frag.dst_req = 33;
    CHECK((1ull << 40) == get64(b + 8) && 33 == get64(b + 16), "frag: offset at 8, dst_req at 16");
    memset(&h, 0, sizeof(h));
    ob1x_hdr_common_init(&h.common, OB1X_HDR_CANCEL, 0);
    h.cancel.ctx = 5;
    h.cancel.src = 6;
    h.cancel.seq = 7;
    h.cancel.cancelled = 1;
    h.cancel.src_req = 44;
    CHECK(5 == get16(b + 2) && 6 == get32(b + 4) && 7 == get16(b + 8) && 1 == get32(b + 12) &&
              44 == get64(b + 16),
          "cancel: ctx 2, src 4, seq 8, cancelled 12, src_req 16");
    memset(&h, 0, sizeof(h));
    ob1x_hdr_common_init(&h.common, OB1X_HDR_FLOW, 0);
    h.flow.congested = 1;
    h.flow.generation = 55;
    h.flow.jobid = 66;
    h.flow.vpid = 77;
    CHECK(1 == get32(b + 4) && 55 == get64(b + 8) && 66 == get32(b + 16) && 77 == get32(b + 20),
          "flow: congested 4, generation 8, jobid 16, vpid 20");
    for (uint8_t t = OB1X_HDR_ACK; t < OB1X_HDR_TYPE_MAX; ++t) {
        size_t want = OB1X_HDR_ACK == t || OB1X_HDR_FIN == t ? 40
                      : OB1X_HDR_RGET == t                 ? 48
                      : OB1X_HDR_PUT == t                  ? 56
                                                           : 24;
        CHECK(ob1x_hdr_size(t) == want, "type %d: %zu bytes, expected %zu", t, ob1x_hdr_size(t),
              want);
    }
}

/* The check on receipt. */
static void check_readable(void)
{
    unsigned char b[64];
    ob1x_hdr_common_t *h = (ob1x_hdr_common_t *) b;
    unsigned long accepted = 0;

    memset(b, 0, sizeof(b));
    for (int type = 0; type < 256; ++type) {
        size_t need = ob1x_hdr_size((uint8_t) type);
        for (int version = 0; version < 16; ++version) {
            for (int flags = 0; flags < 16; flags += 5) {
                b[0] = (unsigned char) type;
                b[1] = (unsigned char) (flags | version << OB1X_HDR_VERSION_SHIFT);
                for (size_t len = 0; len <= 40; ++len) {
                    bool ok = ob1x_hdr_readable(h, len);
                    bool want = OB1X_HDR_VERSION == version && 0 != need && len >= need;
                    CHECK(ok == want, "type %d version %d flags %d, %zu bytes: %s", type, version,
                          flags, len, ok ? "accepted" : "rejected");
                    accepted += ok;
                }
            }
        }
    }
    /* A header made by this build is read back, whatever its flags. */
    ob1x_hdr_common_init(h, OB1X_HDR_FLOW, OB1X_HDR_FLAG_SYNC | OB1X_HDR_FLAG_VOID);
    CHECK(ob1x_hdr_readable(h, 24) && !ob1x_hdr_readable(h, 23), "own FLOW header");
    CHECK(accepted > 0, "nothing was ever accepted");
}

int main(void)
{
    check_match();
    check_rndv();
    check_others();
    check_readable();
    if (OB1X_BTL_TAG(OB1X_HDR_MATCH) != MCA_BTL_TAG_PML + 1) {
        printf("FAIL: the BTL tag of MATCH is not MCA_BTL_TAG_PML + 1\n");
        ++failures;
    }
    if (failures) {
        printf("FAIL: %s: %d check(s) failed\n", PROG, failures);
        return 1;
    }
    printf("%s: all checks passed\n", PROG);
    return 0;
}

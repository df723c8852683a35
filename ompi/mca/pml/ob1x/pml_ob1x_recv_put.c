/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * RDMA direct put and the RDMA pipeline, the receiver's side: a matched
 * RNDV flagged CONTIG offers RDMA. The receiver accepts when its buffer is
 * contiguous and a BTL to the sender can put; it then answers the ACK
 * (the range the sender sends by FRAGs: the pipeline's tail, and whatever
 * lies past a truncated buffer) and offers its buffer by PUT messages:
 *   direct put (PIN): one PUT per BTL share (at most the BTL's put limit
 *     each), the shares registered once;
 *   pipeline: pieces of btl_rdma_pipeline_frag_size, each registered on
 *     its own, OB1X_RECV_PUT_DEPTH at a time, spread over the BTLs in
 *     shares of their bandwidth.
 * Each FIN counts its piece's bytes and frees its registration. A FIN that
 * says the sender gave up, or a piece we cannot register, sends the rest of
 * the offered range by FRAGs (ACK_MORE).
 */
#include "ompi_config.h"

#include <string.h>

#include "ompi/mca/bml/base/base.h"

#include "pml_ob1x.h"
#include "pml_ob1x_ctl.h"
#include "pml_ob1x_rdma.h"
#include "pml_ob1x_recvreq.h"

#define NO_SLOT 0xffff

static size_t put_limit(const mca_bml_base_btl_t *b)
{
    return b->btl->btl_put_limit ? b->btl->btl_put_limit : SIZE_MAX;
}

/* Direct put: the share holding the cursor, to its end or the put limit. */
static int pin_piece(ob1x_recv_request_t *req, size_t *len)
{
    for (int i = 0; i < req->rdma_cnt; ++i) {
        const ob1x_rdma_btl_t *b = &req->rdma[i];
        if (req->put_cursor >= b->offset && req->put_cursor < b->offset + b->length) {
            size_t left = b->offset + b->length - req->put_cursor;
            *len = left < put_limit(b->bml_btl) ? left : put_limit(b->bml_btl);
            return i;
        }
    }
    return -1;
}

/* Pipeline: the BTL whose share of the bytes offered so far stays the
 * smallest relative to its bandwidth. */
static int pipe_piece(ob1x_recv_request_t *req, size_t *len)
{
    double best = 0;
    int pick = 0;

    for (int i = 0; i < req->put_btls; ++i) {
        const mca_btl_base_module_t *btl = req->rdma[i].bml_btl->btl;
        double share = (double) (req->put_bytes[i] + btl->btl_rdma_pipeline_frag_size) /
                       ((double) btl->btl_bandwidth + 1);
        if (0 == i || share < best) {
            best = share;
            pick = i;
        }
    }
    *len = req->rdma[pick].bml_btl->btl->btl_rdma_pipeline_frag_size;
    if (*len > put_limit(req->rdma[pick].bml_btl)) {
        *len = put_limit(req->rdma[pick].bml_btl);
    }
    if (*len > req->put_end - req->put_cursor) {
        *len = req->put_end - req->put_cursor;
    }
    return pick;
}

static int free_slot(const ob1x_recv_request_t *req)
{
    for (int s = 0; s < OB1X_RECV_PUT_DEPTH; ++s) {
        if (!req->piece_busy[s]) {
            return s;
        }
    }
    return -1;
}

/* The rest of the offered range goes by FRAGs. Lock held. */
static void give_up_rest(ob1x_recv_request_t *req)
{
    if (req->put_cursor < req->put_end) {
        ob1x_recv_request_ack(req, req->put_cursor, req->put_end - req->put_cursor, true);
        req->put_cursor = req->put_end;
    }
}

/* One PUT message; false when the piece could not be registered. */
static bool offer_one(ob1x_recv_request_t *req, bool pin)
{
    ob1x_hdr_t put;
    mca_btl_base_registration_handle_t *handle = NULL;
    size_t len = 0, hs;
    int slot = NO_SLOT, i = pin ? pin_piece(req, &len) : pipe_piece(req, &len);

    if (i < 0 || 0 == len) {
        return false;
    }
    if (pin) {
        handle = req->rdma[i].handle;
    } else {
        slot = free_slot(req);
        if (OMPI_SUCCESS != ob1x_reg_acquire(req->rdma[i].bml_btl, req->rdma_base + req->put_cursor,
                                             len, MCA_BTL_REG_FLAG_REMOTE_WRITE,
                                             &req->piece_reg[slot], &handle)) {
            return false;
        }
        req->piece_busy[slot] = true;
    }
    hs = NULL != handle ? req->rdma[i].bml_btl->btl->btl_registration_handle_size : 0;
    memset(&put, 0, OB1X_HDR_PUT_LEN(0));
    ob1x_hdr_common_init(&put.common, OB1X_HDR_PUT, 0);
    put.put.handle_size = (uint16_t) hs;
    put.put.btl_id = req->rdma[i].id;
    put.put.src_req = req->src_req;
    put.put.dst_req = (uint64_t) (uintptr_t) req;
    put.put.piece = (uint64_t) slot;
    put.put.offset = req->put_cursor;
    put.put.length = len;
    put.put.dst_addr = (uint64_t) (uintptr_t) (req->rdma_base + req->put_cursor);
    if (hs > 0) {
        memcpy(put.put.handle, handle, hs);
    }
    req->put_cursor += len;
    req->put_bytes[i] += len;
    req->puts_in_flight++;
    if (OMPI_SUCCESS != ob1x_ctl_send(req->src, &put)) {
        ob1x_send_fatal(req->src, OMPI_ERR_UNREACH);
    }
    return true;
}

/* Offer pieces up to the depth (all shares at once for a direct put). */
static void offer_puts(ob1x_recv_request_t *req)
{
    bool pin = 0 == req->put_btls; /* direct put: shares in rdma[0..rdma_cnt) */

    OPAL_THREAD_LOCK(&req->lock);
    while (req->put_cursor < req->put_end && (pin || req->puts_in_flight < OB1X_RECV_PUT_DEPTH)) {
        if (!offer_one(req, pin)) {
            ob1x_count_event(OB1X_EV_FALLBACK_REGISTRATION);
            give_up_rest(req);
            break;
        }
    }
    OPAL_THREAD_UNLOCK(&req->lock);
}

/* Where the RDMA part ends: a direct put takes everything that fits the
 * buffer; the pipeline leaves the first part (in the RNDV) and the tail. */
static size_t rdma_end(const ob1x_recv_request_t *req, bool pin, const mca_bml_base_btl_t *b)
{
    size_t total = req->msg_length, end;
    size_t cap = total < req->capacity ? total : req->capacity;

    if (pin) {
        return cap;
    }
    end = total > b->btl->btl_rdma_pipeline_send_length
              ? total - b->btl->btl_rdma_pipeline_send_length
              : 0;
    return end < cap ? end : cap;
}

bool ob1x_recv_request_offer_puts(ob1x_recv_request_t *req, const ob1x_hdr_rndv_t *hdr,
                                  size_t payload)
{
    bool pin = 0 != (hdr->match.common.flags & OB1X_HDR_FLAG_PIN);
    unsigned char *base = ob1x_recv_request_contig_base(req);
    const ob1x_rdma_peer_t *v = ob1x_rdma_peer_of(
        req->base.req_base.req_comm, req->base.req_base.req_ompi.req_status.MPI_SOURCE);
    size_t total = req->msg_length, end;
    int n;

    if (NULL == base) {
        ob1x_count_event(OB1X_EV_FALLBACK_NONCONTIG);
        return false;
    }
    n = NULL != v ? ob1x_rdma_btls(v, MCA_BTL_FLAGS_PUT, req->rdma) : 0;
    if (0 == n) {
        ob1x_count_event(OB1X_EV_FALLBACK_NO_BTL);
        return false;
    }
    end = rdma_end(req, pin, req->rdma[0].bml_btl);
    if (end <= payload) {
        return false; /* nothing left for RDMA: all of it by FRAGs */
    }
    req->rdma_base = base;
    req->put_cursor = payload;
    req->put_end = end;
    req->puts_in_flight = 0;
    memset(req->put_bytes, 0, sizeof(req->put_bytes));
    memset(req->piece_busy, 0, sizeof(req->piece_busy));
    if (pin) {
        int kept;
        ob1x_rdma_shares(req->rdma, n, payload, end - payload, 64);
        kept = ob1x_rdma_register(req->rdma, n, base, MCA_BTL_REG_FLAG_REMOTE_WRITE);
        if (kept < n) {
            ob1x_rdma_deregister(req->rdma, kept);
            ob1x_count_event(OB1X_EV_FALLBACK_REGISTRATION);
            return false;
        }
        req->rdma_cnt = n;
        req->put_btls = 0;
    } else {
        req->put_btls = n;
    }
    ob1x_recv_request_ack(req, end, total - end, false);
    offer_puts(req);
    return true;
}

void ob1x_recv_request_fin_put(ob1x_recv_request_t *req, const ob1x_hdr_fin_t *fin)
{
    bool failed = 0 != fin->failed;

    OPAL_THREAD_LOCK(&req->lock);
    if (fin->slot < OB1X_RECV_PUT_DEPTH && req->piece_busy[fin->slot]) {
        ob1x_reg_release(req->piece_reg[fin->slot]);
        req->piece_busy[fin->slot] = false;
    }
    req->puts_in_flight--;
    if (failed) {
        give_up_rest(req); /* the sender's put failed: no more RDMA for it */
    }
    OPAL_THREAD_UNLOCK(&req->lock);
    offer_puts(req);
    if (!failed) {
        ob1x_recv_request_add_bytes(req, (size_t) fin->length);
    }
}

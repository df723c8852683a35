/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Receipt of the control messages of the send protocols: ACK (the receiver
 * matched a rendezvous, or a range goes by FRAGs), PUT and FIN of the RDMA
 * protocols, CANCEL and CANCEL_ACK. FLOW is received in
 * pml_ob1x_flow.c.
 */
#include "ompi_config.h"

#include "ompi/mca/bml/base/base.h"

#include "pml_ob1x.h"
#include "pml_ob1x_ctl.h"
#include "pml_ob1x_match.h"
#include "pml_ob1x_recvfrag.h"
#include "pml_ob1x_recvreq.h"
#include "pml_ob1x_sendreq.h"

void ob1x_recv_cb_ack(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t *des, void *cbdata)
{
    const ob1x_hdr_t *hdr = ob1x_checked_hdr(des);
    ob1x_send_request_t *req = (ob1x_send_request_t *) (uintptr_t) hdr->ack.src_req;

    (void) btl;
    (void) tag;
    (void) cbdata;
    ob1x_send_request_acked(req, &hdr->ack);
}

/* A PUT is whole only with its handle: check the length it claims. */
void ob1x_recv_cb_put(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t *des, void *cbdata)
{
    const ob1x_hdr_t *hdr = ob1x_checked_hdr(des);

    (void) btl;
    (void) tag;
    (void) cbdata;
    if (OPAL_UNLIKELY(hdr->put.handle_size > OB1X_MAX_HANDLE ||
                      des->des_segments[0].seg_len < OB1X_HDR_PUT_LEN(hdr->put.handle_size))) {
        ob1x_recv_bad_hdr(des);
        return;
    }
    ob1x_send_request_put((ob1x_send_request_t *) (uintptr_t) hdr->put.src_req, &hdr->put);
}

/* FIN of a put goes to the receiver, FIN of a get to the sender. */
void ob1x_recv_cb_fin(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t *des, void *cbdata)
{
    const ob1x_hdr_t *hdr = ob1x_checked_hdr(des);

    (void) btl;
    (void) tag;
    (void) cbdata;
    if (hdr->common.flags & OB1X_HDR_FLAG_FIN_PUT) {
        ob1x_recv_request_fin_put((ob1x_recv_request_t *) (uintptr_t) hdr->fin.req, &hdr->fin);
    } else {
        ob1x_send_request_fin((ob1x_send_request_t *) (uintptr_t) hdr->fin.req, &hdr->fin);
    }
}

void ob1x_recv_cb_cancel(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                         mca_btl_base_descriptor_t *des, void *cbdata)
{
    const ob1x_hdr_t *hdr = ob1x_checked_hdr(des);
    struct ompi_communicator_t *comm = ompi_comm_lookup(hdr->cancel.ctx);
    ob1x_comm_t *oc = NULL == comm ? NULL : ob1x_comm_of(comm);
    ob1x_hdr_t answer = *hdr;

    (void) btl;
    (void) tag;
    (void) cbdata;
    if (NULL == oc || hdr->cancel.src < 0 || hdr->cancel.src >= oc->num_peers) {
        return; /* nothing here can name the sender; it waits for the match */
    }
    answer.common.type = OB1X_HDR_CANCEL_ACK;
    answer.cancel.cancelled = ob1x_match_cancel(oc, hdr->cancel.src, hdr->cancel.seq);
    (void) ob1x_ctl_send(ompi_comm_peer_lookup(comm, hdr->cancel.src), &answer);
}

void ob1x_recv_cb_cancel_ack(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                             mca_btl_base_descriptor_t *des, void *cbdata)
{
    const ob1x_hdr_t *hdr = ob1x_checked_hdr(des);

    (void) btl;
    (void) tag;
    (void) cbdata;
    ob1x_send_request_cancel_answer((ob1x_send_request_t *) (uintptr_t) hdr->cancel.src_req,
                                    0 != hdr->cancel.cancelled);
}

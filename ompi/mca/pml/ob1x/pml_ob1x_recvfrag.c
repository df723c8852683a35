/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Received fragments that must outlive a BTL callback, the receive
 * callbacks of MATCH/RNDV and FRAG, and the registration of every receive
 * callback (control messages: pml_ob1x_ctl_recv.c, FLOW: pml_ob1x_flow.c,
 * orphans: pml_ob1x_orphans.c).
 */
#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "ompi/mca/bml/base/base.h"
#include "ompi/mca/rte/rte.h"

#include "common_ob1x_copy.h"
#include "common_ob1x_help.h"

#include "pml_ob1x.h"
#include "pml_ob1x_ctl.h"
#include "pml_ob1x_flow.h"
#include "pml_ob1x_match.h"
#include "pml_ob1x_orphans.h"
#include "pml_ob1x_recvfrag.h"
#include "pml_ob1x_recvreq.h"
#include "pml_ob1x_sendreq.h"

OBJ_CLASS_INSTANCE(ob1x_recv_frag_t, opal_free_list_item_t, NULL, NULL);

ob1x_recv_frag_t *ob1x_recv_frag_save(const ob1x_hdr_t *hdr, size_t hdr_len,
                                      const mca_btl_base_segment_t *segs, size_t nsegs)
{
    ob1x_recv_frag_t *frag = (ob1x_recv_frag_t *) opal_free_list_wait(&mca_pml_ob1x.recv_frags);
    size_t len = 0;
    unsigned char *dst;

    frag->tombstone = false;
    frag->arrived = false;
    frag->req = NULL;
    frag->data_len = 0;
    frag->data = frag->inline_data;
    if (NULL == hdr) {
        memset(&frag->hdr, 0, sizeof(frag->hdr));
        return frag;
    }
    memcpy(&frag->hdr, hdr, hdr_len);
    for (size_t i = 0; i < nsegs; ++i) {
        len += segs[i].seg_len;
    }
    len -= hdr_len;
    if (len > OB1X_FRAG_INLINE) {
        frag->data = malloc(len);
        if (NULL == frag->data) {
            ob1x_show_help_now("help-mpi-pml-ob1x.txt", "out-of-memory",
                               "a message that arrived before its receive was posted",
                               "the job is aborted", ob1x_host());
            ompi_rte_abort(OMPI_ERR_OUT_OF_RESOURCE, NULL);
        }
    }
    frag->data_len = len;
    dst = frag->data;
    ob1x_copy(dst, (const unsigned char *) segs[0].seg_addr.pval + hdr_len,
              segs[0].seg_len - hdr_len);
    dst += segs[0].seg_len - hdr_len;
    for (size_t i = 1; i < nsegs; ++i) {
        ob1x_copy(dst, segs[i].seg_addr.pval, segs[i].seg_len);
        dst += segs[i].seg_len;
    }
    return frag;
}

void ob1x_recv_frag_release(ob1x_recv_frag_t *frag)
{
    if (frag->data != frag->inline_data) {
        free(frag->data);
    }
    opal_free_list_return(&mca_pml_ob1x.recv_frags, &frag->super);
}

void ob1x_recv_frags_drop(opal_list_t *list)
{
    opal_list_item_t *item;
    while (NULL != (item = opal_list_remove_first(list))) {
        ob1x_recv_frag_release((ob1x_recv_frag_t *) item);
    }
}

/* ------------------------------------------------------------- callbacks */

void __opal_attribute_noinline__ ob1x_recv_bad_hdr(const mca_btl_base_descriptor_t *des)
{
    const ob1x_hdr_t *hdr = (const ob1x_hdr_t *) des->des_segments[0].seg_addr.pval;

    ob1x_show_help_now("help-mpi-pml-ob1x.txt", "wire-version-mismatch", ob1x_host(),
                       (int) ob1x_hdr_version(&hdr->common), (int) OB1X_HDR_VERSION);
    ompi_rte_abort(OMPI_ERR_BAD_PARAM, NULL);
}

static void recv_cb_match(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                          mca_btl_base_descriptor_t *des, void *cbdata)
{
    const ob1x_hdr_t *hdr = ob1x_checked_hdr(des);
    struct ompi_communicator_t *comm;
    ob1x_comm_t *oc;

    (void) btl;
    (void) tag;
    (void) cbdata;
    comm = ompi_comm_lookup(hdr->match.ctx);
    oc = ob1x_comm_ready(comm);
    if (OPAL_UNLIKELY(NULL == oc) &&
        NULL ==
            (oc = ob1x_orphan_or_ready(hdr, des->des_segments, des->des_segment_count, &comm))) {
        return;
    }
    if (OPAL_UNLIKELY(hdr->match.src < 0 || hdr->match.src >= oc->num_peers)) {
        opal_output(0, "pml:ob1x: dropping a message from invalid rank %d on context %d",
                    hdr->match.src, hdr->match.ctx);
        return;
    }
    ob1x_match_incoming(oc, comm, hdr, des->des_segments, des->des_segment_count);
}

static void recv_cb_frag(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                         mca_btl_base_descriptor_t *des, void *cbdata)
{
    const ob1x_hdr_t *hdr = ob1x_checked_hdr(des);
    ob1x_recv_request_t *req = (ob1x_recv_request_t *) (uintptr_t) hdr->frag.dst_req;

    (void) btl;
    (void) tag;
    (void) cbdata;
    ob1x_recv_request_frag(req, &hdr->frag, des->des_segments, des->des_segment_count);
}

int ob1x_register_callbacks(void)
{
    static const struct {
        uint8_t type;
        mca_btl_base_module_recv_cb_fn_t cb;
    } table[] = {
        {OB1X_HDR_MATCH, recv_cb_match},        {OB1X_HDR_RNDV, recv_cb_match},
        {OB1X_HDR_ACK, ob1x_recv_cb_ack},       {OB1X_HDR_FRAG, recv_cb_frag},
        {OB1X_HDR_CANCEL, ob1x_recv_cb_cancel}, {OB1X_HDR_CANCEL_ACK, ob1x_recv_cb_cancel_ack},
        {OB1X_HDR_FLOW, ob1x_recv_cb_flow},     {OB1X_HDR_RGET, recv_cb_match},
        {OB1X_HDR_PUT, ob1x_recv_cb_put},       {OB1X_HDR_FIN, ob1x_recv_cb_fin},
    };

    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); ++i) {
        int rc = mca_bml.bml_register(OB1X_BTL_TAG(table[i].type), table[i].cb, NULL);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
    }
    return OMPI_SUCCESS;
}

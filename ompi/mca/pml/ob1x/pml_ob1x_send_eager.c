/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * The eager protocols: eager immediate (btl_sendi), eager prepared
 * (btl_prepare_src on the user's data) and eager allocated (btl_alloc +
 * pack). One message, one descriptor, no reply.
 */
#include "ompi_config.h"

#include <string.h>

#include "ompi/mca/bml/base/base.h"

#include "common_ob1x_convertor.h"

#include "pml_ob1x.h"
#include "pml_ob1x_sendreq.h"

int ob1x_send_start_eager_immediate(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl)
{
    ob1x_hdr_match_t hdr;
    size_t size = req->base.req_bytes_packed;
    int rc;

    ob1x_send_request_fill_match(&hdr, req, OB1X_HDR_MATCH, 0);
    rc = mca_bml_base_sendi(bml_btl, &req->base.req_base.req_convertor, &hdr, OB1X_HDR_MATCH_LEN,
                            size, MCA_BTL_NO_ORDER,
                            MCA_BTL_DES_FLAGS_PRIORITY | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP,
                            OB1X_BTL_TAG(OB1X_HDR_MATCH), NULL);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        /* The convertor may have moved; the other protocols start from 0. */
        ob1x_send_request_rewind(req);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    ob1x_count_protocol(OB1X_PROTO_EAGER_IMMEDIATE, size);
    req->outstanding = 0;
    ob1x_send_request_pml_complete(req);
    return OMPI_SUCCESS;
}

/* Local completion of a descriptor that holds one unit of `outstanding`:
 * an eager message's only one, or an RGET. */
void ob1x_send_one_done(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                        mca_btl_base_descriptor_t *des, int status)
{
    ob1x_send_request_t *req = (ob1x_send_request_t *) des->des_cbdata;

    (void) btl;
    (void) ep;
    if (OPAL_UNLIKELY(OMPI_SUCCESS != status)) {
        ob1x_send_fatal(req->base.req_base.req_proc, status);
    }
    ob1x_send_request_subtract(req, 1);
}

void ob1x_send_request_adopt_eager(ob1x_send_request_t *req, mca_btl_base_descriptor_t *des,
                                   ob1x_protocol_t proto)
{
    req->protocol = proto;
    req->outstanding = 1; /* the descriptor */
    des->des_cbfunc = ob1x_send_one_done;
    des->des_cbdata = req;
}

static inline __opal_attribute_always_inline__ int send_eager_des(ob1x_send_request_t *req,
                                                                  mca_bml_base_btl_t *bml_btl,
                                                                  mca_btl_base_descriptor_t *des,
                                                                  ob1x_protocol_t proto)
{
    size_t size = req->base.req_bytes_packed;
    bool buffered = MCA_PML_BASE_SEND_BUFFERED == req->base.req_send_mode;
    int rc;

    ob1x_send_request_fill_match((ob1x_hdr_match_t *) des->des_segments[0].seg_addr.pval, req,
                                 OB1X_HDR_MATCH, 0);
    des->des_cbfunc = ob1x_send_one_done;
    des->des_cbdata = req;
    /* One unit for the descriptor; a buffered send holds one more until it
     * has signalled MPI completion below, so that the BTL's callback in
     * another thread cannot complete and recycle the request first. */
    req->outstanding = buffered ? 2 : 1;
    ob1x_count_protocol(proto, size);
    rc = mca_bml_base_send(bml_btl, des, OB1X_BTL_TAG(OB1X_HDR_MATCH));
    if (OPAL_LIKELY(rc >= 0)) {
        int64_t done = 1 == rc ? 1 : 0; /* 1: sent, and the BTL will not call back */
        if (buffered) {
            /* The data is in the descriptor: the user may reuse the buffer. */
            ob1x_send_request_mpi_complete(req);
            done += 1;
        }
        if (done > 0) {
            ob1x_send_request_subtract(req, done);
        }
        return OMPI_SUCCESS;
    }
    req->outstanding = (int64_t) size;
    (void) ob1x_counter_add(&ob1x_counters.messages[proto], (uint64_t) -1);
    (void) ob1x_counter_add(&ob1x_counters.bytes[proto], (uint64_t) - (int64_t) size);
    mca_bml_base_free(bml_btl, des);
    return OMPI_ERR_OUT_OF_RESOURCE;
}

mca_btl_base_descriptor_t *ob1x_eager_des(mca_bml_base_btl_t *bml_btl, opal_convertor_t *conv,
                                          size_t size, bool prepared)
{
    const uint32_t flags = MCA_BTL_DES_FLAGS_PRIORITY | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
    mca_btl_base_descriptor_t *des = NULL;

    if (OPAL_UNLIKELY(ob1x_fault_injected())) {
        return NULL;
    }
    if (prepared) {
        size_t len = size;
        mca_bml_base_prepare_src(bml_btl, conv, MCA_BTL_NO_ORDER, OB1X_HDR_MATCH_LEN, &len, flags,
                                 &des);
        if (OPAL_UNLIKELY(NULL != des && len != size)) {
            mca_bml_base_free(bml_btl, des);
            des = NULL;
        }
        return des;
    }
    mca_bml_base_alloc(bml_btl, &des, MCA_BTL_NO_ORDER, OB1X_HDR_MATCH_LEN + size, flags);
    if (NULL != des && size > 0) {
        (void) ob1x_convertor_pack(
            conv, (unsigned char *) des->des_segments[0].seg_addr.pval + OB1X_HDR_MATCH_LEN, size);
    }
    if (NULL != des) {
        des->des_segments[0].seg_len = OB1X_HDR_MATCH_LEN + size;
    }
    return des;
}

int ob1x_send_start_eager_prepared(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl)
{
    mca_btl_base_descriptor_t *des = ob1x_eager_des(bml_btl, &req->base.req_base.req_convertor,
                                                    req->base.req_bytes_packed, true);

    int rc;

    if (OPAL_UNLIKELY(NULL == des)) {
        ob1x_send_request_rewind(req);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    rc = send_eager_des(req, bml_btl, des, OB1X_PROTO_EAGER_PREPARED);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        /* prepare_src moved the convertor past the data: the retry from
         * the pending list packs it again from the start */
        ob1x_send_request_rewind(req);
    }
    return rc;
}

int ob1x_send_start_eager_allocated(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl)
{
    mca_btl_base_descriptor_t *des = ob1x_eager_des(bml_btl, &req->base.req_base.req_convertor,
                                                    req->base.req_bytes_packed, false);
    int rc;

    if (OPAL_UNLIKELY(NULL == des)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    rc = send_eager_des(req, bml_btl, des, OB1X_PROTO_EAGER_ALLOCATED);
    if (OMPI_SUCCESS != rc) {
        ob1x_send_request_rewind(req);
    }
    return rc;
}

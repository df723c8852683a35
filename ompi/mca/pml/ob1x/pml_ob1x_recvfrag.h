/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Received fragments that must outlive the BTL callback: unexpected messages,
 * messages that arrived ahead of their sequence, messages for communicators
 * not created yet, and cancel markers ("tombstones").
 */
#ifndef PML_OB1X_RECVFRAG_H
#define PML_OB1X_RECVFRAG_H

#include "ompi_config.h"

#include "opal/class/opal_free_list.h"
#include "opal/mca/btl/btl.h"

#include "pml_ob1x_comm.h"
#include "pml_ob1x_hdr.h"

BEGIN_C_DECLS

/* Payloads up to this size live inside the fragment; larger ones are malloc'ed. */
#define OB1X_FRAG_INLINE 1024

typedef struct ob1x_recv_frag {
    opal_free_list_item_t super;
    ob1x_hdr_t hdr;                /* copy of the MATCH, RNDV or RGET header */
    size_t data_len;               /* payload bytes held in data */
    unsigned char *data;           /* inline_data or a heap block */
    bool tombstone;                /* marker of a cancelled message, no payload */
    bool arrived;                  /* tombstone only: the cancelled message itself came in */
    struct ob1x_recv_request *req; /* set while a matched fragment waits for delivery */
    struct ob1x_recv_frag *next_delivery;
    unsigned char inline_data[OB1X_FRAG_INLINE];
} ob1x_recv_frag_t;

OBJ_CLASS_DECLARATION(ob1x_recv_frag_t);

ob1x_recv_frag_t *ob1x_recv_frag_save(const ob1x_hdr_t *hdr, size_t hdr_len,
                                      const mca_btl_base_segment_t *segs, size_t nsegs);
void ob1x_recv_frag_release(ob1x_recv_frag_t *frag);

/* Release every fragment of a list (no unexpected-queue accounting). */
void ob1x_recv_frags_drop(opal_list_t *list);

/* Total payload of a MATCH/RNDV/RGET: the eager data or the announced
 * length (an RGET's "data" is its list of BTLs). */
static inline size_t ob1x_frag_msg_length(const ob1x_recv_frag_t *frag)
{
    return OB1X_HDR_MATCH != frag->hdr.common.type ? (size_t) frag->hdr.rndv.msg_length
                                                   : frag->data_len;
}

/* Ends the job over a header this build cannot read (pml_ob1x_recvfrag.c). */
void ob1x_recv_bad_hdr(const mca_btl_base_descriptor_t *des);

/* Reject what this build cannot read; a mismatch means two different
 * builds of ob1x in one job, which can only end the job. */
static inline const ob1x_hdr_t *ob1x_checked_hdr(const mca_btl_base_descriptor_t *des)
{
    const ob1x_hdr_t *hdr = (const ob1x_hdr_t *) des->des_segments[0].seg_addr.pval;

    if (OPAL_UNLIKELY(!ob1x_hdr_readable(&hdr->common, des->des_segments[0].seg_len))) {
        ob1x_recv_bad_hdr(des);
    }
    return hdr;
}

END_C_DECLS

#endif /* PML_OB1X_RECVFRAG_H */

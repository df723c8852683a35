/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Control messages (ACK, PUT, FIN, CANCEL, CANCEL_ACK, FLOW): header-only messages that
 * must never be lost. When no BTL descriptor is available they are copied to
 * the pending list and ob1x_progress() sends them by itself, independently of
 * any other completion.
 */
#ifndef PML_OB1X_CTL_H
#define PML_OB1X_CTL_H

#include "ompi_config.h"

#include "opal/class/opal_list.h"
#include "opal/mca/btl/btl.h"
#include "ompi/proc/proc.h"

#include "pml_ob1x_hdr.h"

BEGIN_C_DECLS

typedef struct ob1x_ctl {
    opal_list_item_t super;
    struct ompi_proc_t *proc;
    ob1x_hdr_t hdr;
} ob1x_ctl_t;

OBJ_CLASS_DECLARATION(ob1x_ctl_t);

/* Bytes of a control message on the wire (a PUT's handle included). */
static inline size_t ob1x_ctl_len(const ob1x_hdr_t *hdr)
{
    return OB1X_HDR_PUT == hdr->common.type ? OB1X_HDR_PUT_LEN(hdr->put.handle_size)
                                            : ob1x_hdr_size(hdr->common.type);
}

/* Send hdr (of ob1x_ctl_len bytes) to proc now, or queue it. Never fails silently:
 * returns an error only if the peer cannot be reached at all. */
int ob1x_ctl_send(struct ompi_proc_t *proc, const ob1x_hdr_t *hdr);

/* Retry queued control messages; returns how many went out. */
int ob1x_ctl_progress(void);

/* BTL receive callbacks of ACK, PUT, FIN, CANCEL and CANCEL_ACK (pml_ob1x_ctl_recv.c). */
void ob1x_recv_cb_ack(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t *des, void *cbdata);
void ob1x_recv_cb_put(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t *des, void *cbdata);
void ob1x_recv_cb_fin(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t *des, void *cbdata);
void ob1x_recv_cb_cancel(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                         mca_btl_base_descriptor_t *des, void *cbdata);
void ob1x_recv_cb_cancel_ack(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                             mca_btl_base_descriptor_t *des, void *cbdata);

END_C_DECLS

#endif /* PML_OB1X_CTL_H */

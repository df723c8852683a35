/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Receiver-side flow control of unexpected data: the receiver sends FLOW
 * messages (ob1x_flow_check), the sender records them (ob1x_recv_cb_flow)
 * and sends by rendezvous while congested.
 */
#include "ompi_config.h"

#include <string.h>

#include "pml_ob1x.h"
#include "pml_ob1x_comm.h"
#include "pml_ob1x_ctl.h"
#include "pml_ob1x_flow.h"
#include "pml_ob1x_recvfrag.h"

/*
 * Receiver-side flow control: above unexpected_limit bytes of unexpected
 * data, each sender that adds more is told to switch to rendezvous; below
 * half the limit, everyone told so is released again.
 */
void ob1x_flow_check(struct ompi_proc_t *sender)
{
    int64_t held = mca_pml_ob1x.unexpected_bytes;
    size_t limit = mca_pml_ob1x.params.unexpected_limit;
    ob1x_proc_t *op;
    ob1x_hdr_t hdr;

    if (0 == limit) {
        return;
    }
    memset(&hdr, 0, sizeof(hdr));
    ob1x_hdr_common_init(&hdr.common, OB1X_HDR_FLOW, 0);
    hdr.flow.jobid = ompi_proc_local()->super.proc_name.jobid;
    hdr.flow.vpid = ompi_proc_local()->super.proc_name.vpid;
    if (NULL != sender && held > (int64_t) limit) {
        op = ob1x_proc_lookup(sender);
        OPAL_THREAD_LOCK(&mca_pml_ob1x.pending_lock);
        bool tell = !op->xoff_sent;
        if (tell) {
            op->xoff_sent = true;
            hdr.flow.generation = ++op->flow_gen_sent;
            opal_list_append(&mca_pml_ob1x.xoff_procs, &op->xoff_item);
        }
        OPAL_THREAD_UNLOCK(&mca_pml_ob1x.pending_lock);
        if (tell) {
            hdr.flow.congested = 1;
            (void) ob1x_ctl_send(sender, &hdr);
        }
        return;
    }
    if (held > (int64_t) (limit / 2) || opal_list_is_empty(&mca_pml_ob1x.xoff_procs)) {
        return;
    }
    for (;;) {
        opal_list_item_t *item;
        OPAL_THREAD_LOCK(&mca_pml_ob1x.pending_lock);
        item = opal_list_remove_first(&mca_pml_ob1x.xoff_procs);
        if (NULL != item) {
            op = (ob1x_proc_t *) ((char *) item - offsetof(ob1x_proc_t, xoff_item));
            op->xoff_sent = false;
            hdr.flow.generation = ++op->flow_gen_sent;
        }
        OPAL_THREAD_UNLOCK(&mca_pml_ob1x.pending_lock);
        if (NULL == item) {
            break;
        }
        hdr.flow.congested = 0;
        (void) ob1x_ctl_send(op->proc, &hdr);
    }
}

void ob1x_recv_cb_flow(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                       mca_btl_base_descriptor_t *des, void *cbdata)
{
    const ob1x_hdr_t *hdr = ob1x_checked_hdr(des);
    opal_process_name_t name = {.jobid = hdr->flow.jobid, .vpid = hdr->flow.vpid};
    struct ompi_proc_t *proc = (struct ompi_proc_t *) ompi_proc_for_name(name);
    ob1x_proc_t *op;

    (void) btl;
    (void) tag;
    (void) cbdata;
    if (NULL == proc) {
        return;
    }
    op = ob1x_proc_lookup(proc);
    OPAL_THREAD_LOCK(&mca_pml_ob1x.pending_lock);
    if (hdr->flow.generation > op->flow_gen_seen) {
        /* FLOWs may overtake each other on different BTLs: newest wins. */
        op->flow_gen_seen = hdr->flow.generation;
        op->congested = (int32_t) hdr->flow.congested;
    }
    OPAL_THREAD_UNLOCK(&mca_pml_ob1x.pending_lock);
}

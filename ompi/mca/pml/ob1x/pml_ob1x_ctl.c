/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 */
#include "ompi_config.h"

#include <string.h>

#include "ompi/mca/bml/base/base.h"

#include "pml_ob1x.h"
#include "pml_ob1x_ctl.h"

OBJ_CLASS_INSTANCE(ob1x_ctl_t, opal_list_item_t, NULL, NULL);

/* BTLs may call back even without MCA_BTL_DES_SEND_ALWAYS_CALLBACK (vader
 * does when it had to queue the fragment), so a callback must exist. */
static void ctl_sent(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                     mca_btl_base_descriptor_t *des, int status)
{
    (void) btl;
    (void) ep;
    (void) des;
    (void) status;
}

/* One attempt on one BTL; OMPI_ERR_OUT_OF_RESOURCE when it has no room now. */
static int ctl_try_send(struct ompi_proc_t *proc, const ob1x_hdr_t *hdr)
{
    mca_bml_base_endpoint_t *ep = mca_bml_base_get_endpoint(proc);
    size_t size = ob1x_ctl_len(hdr);
    mca_btl_base_descriptor_t *des;
    mca_bml_base_btl_t *bml_btl;
    int rc;

    if (OPAL_UNLIKELY(NULL == ep || 0 == mca_bml_base_btl_array_get_size(&ep->btl_eager))) {
        return OMPI_ERR_UNREACH;
    }
    if (OPAL_UNLIKELY(ob1x_fault_injected())) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    bml_btl = mca_bml_base_btl_array_get_next(&ep->btl_eager);
    /* Immediate send first: on shared memory it is the fast-box path, which
     * the peer polls before its FIFO. No payload, so no convertor. */
    if (NULL != bml_btl->btl->btl_sendi &&
        OMPI_SUCCESS ==
            mca_bml_base_sendi(bml_btl, NULL, (void *) hdr, size, 0, MCA_BTL_NO_ORDER,
                               MCA_BTL_DES_FLAGS_PRIORITY | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP,
                               OB1X_BTL_TAG(hdr->common.type), NULL)) {
        return OMPI_SUCCESS;
    }
    mca_bml_base_alloc(bml_btl, &des, MCA_BTL_NO_ORDER, size,
                       MCA_BTL_DES_FLAGS_PRIORITY | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP);
    if (OPAL_UNLIKELY(NULL == des)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    memcpy(des->des_segments[0].seg_addr.pval, hdr, size);
    des->des_segments[0].seg_len = size;
    des->des_cbfunc = ctl_sent;
    rc = mca_bml_base_send(bml_btl, des, OB1X_BTL_TAG(hdr->common.type));
    if (OPAL_UNLIKELY(rc < 0)) {
        mca_bml_base_free(bml_btl, des);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    return OMPI_SUCCESS;
}

int ob1x_ctl_send(struct ompi_proc_t *proc, const ob1x_hdr_t *hdr)
{
    ob1x_ctl_t *ctl;
    int rc = ctl_try_send(proc, hdr);

    if (OPAL_LIKELY(OMPI_ERR_OUT_OF_RESOURCE != rc)) {
        return rc;
    }
    ob1x_count_event(OB1X_EV_RESOURCE_RETRIES);
    ctl = OBJ_NEW(ob1x_ctl_t);
    if (NULL == ctl) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    ctl->proc = proc;
    memcpy(&ctl->hdr, hdr, ob1x_ctl_len(hdr));
    OPAL_THREAD_LOCK(&mca_pml_ob1x.pending_lock);
    opal_list_append(&mca_pml_ob1x.pending_ctl, &ctl->super);
    OPAL_THREAD_UNLOCK(&mca_pml_ob1x.pending_lock);
    ob1x_pending_added();
    return OMPI_SUCCESS;
}

/* One queued control message: sent (and freed), or still no room. */
static int ctl_retry(opal_list_item_t *item)
{
    ob1x_ctl_t *ctl = (ob1x_ctl_t *) item;

    if (OMPI_ERR_OUT_OF_RESOURCE == ctl_try_send(ctl->proc, &ctl->hdr)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    OBJ_RELEASE(ctl);
    return OMPI_SUCCESS;
}

int ob1x_ctl_progress(void)
{
    return ob1x_pending_retry(&mca_pml_ob1x.pending_ctl, ctl_retry);
}

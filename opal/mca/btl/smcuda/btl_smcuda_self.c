/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_self.c - the endpoint of our own process.
 *
 * osc/rdma runs a window only over one BTL that reaches every process of
 * the window's communicator, the origin itself included (MPI_COMM_SELF has
 * only that one): a BTL with put, get and fetching atomics must be among
 * the RDMA BTLs of our own process. So smcuda reaches itself. Its
 * exclusivity (above btl/self's) then also makes it the send BTL to
 * ourselves, so sends to ourselves are delivered here as btl/self does it:
 * straight to the upper layer's receive callback, inside btl_send. Put and
 * get to ourselves are memcpy, atomics CPU atomics on our own memory
 * (btl_smcuda_atomic.c), nothing goes through shared memory or CMA.
 */
#include "btl_smcuda.h"
#include "btl_smcuda_frag.h"

#include <string.h>
#include <unistd.h>

#include "opal/datatype/opal_convertor.h"

/* Our own endpoint, made once. */
mca_btl_base_endpoint_t *mca_btl_smcuda_self_endpoint(mca_btl_smcuda_module_t *m,
                                                      struct opal_proc_t *proc)
{
    mca_btl_base_endpoint_t *ep = m->self_ep;

    if (NULL != ep) {
        return ep;
    }
    ep = OBJ_NEW(mca_btl_base_endpoint_t);
    if (NULL == ep) {
        return NULL;
    }
    ep->proc = proc;
    ep->pid = getpid();
    ep->lrank = ep->ref_id = m->my_lrank;
    ep->self = true;
    /* no single copy, no ring, no FIFO: nothing takes the shared-memory
     * paths */
    ep->copy_ok = false;
    m->self_ep = ep;
    return ep;
}

/* Hands the fragment's contents to the receive callback of `tag`, as if
 * it had arrived; a descriptor of our own, since the callback may send to
 * ourselves again before it returns. */
static void self_deliver(mca_btl_smcuda_module_t *m, mca_btl_smcuda_frag_t *frag,
                         mca_btl_base_tag_t tag)
{
    const mca_btl_active_message_callback_t *reg = mca_btl_base_active_message_trigger + tag;
    mca_btl_base_segment_t seg = frag->segment;
    mca_btl_base_descriptor_t des;

    memset(&des, 0, sizeof(des));
    des.des_segments = &seg;
    des.des_segment_count = 1;
    reg->cbfunc(&m->super, tag, &des, reg->cbdata);
}

/* btl_send to ourselves: delivered and complete on return (1), the
 * callback called only when asked for always. */
int mca_btl_smcuda_self_send(mca_btl_smcuda_module_t *m, mca_btl_smcuda_frag_t *frag,
                             mca_btl_base_tag_t tag)
{
    uint32_t flags = frag->base.des_flags;

    self_deliver(m, frag, tag);
    if (flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK) {
        frag->base.des_cbfunc(&m->super, frag->ep, &frag->base, OPAL_SUCCESS);
    }
    if (flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
        mca_btl_smcuda_frag_return(frag);
    }
    return 1;
}

/* btl_sendi to ourselves: header and payload gathered in a fragment, then
 * delivered; OPAL_ERR_OUT_OF_RESOURCE when no fragment is free. */
int mca_btl_smcuda_self_sendi(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep,
                              struct opal_convertor_t *convertor, const void *header,
                              size_t header_size, size_t payload_size, mca_btl_base_tag_t tag)
{
    mca_btl_smcuda_frag_t *frag = mca_btl_smcuda_frag_alloc(m, ep, header_size + payload_size);
    unsigned char *dst;

    if (NULL == frag) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    dst = (unsigned char *) frag->segment.seg_addr.pval;
    memcpy(dst, header, header_size);
    if (payload_size > 0) {
        struct iovec iov = {.iov_base = dst + header_size, .iov_len = payload_size};
        uint32_t iov_count = 1;
        size_t bytes = payload_size;
        (void) opal_convertor_pack(convertor, &iov, &iov_count, &bytes);
    }
    self_deliver(m, frag, tag);
    mca_btl_smcuda_frag_return(frag);
    return OPAL_SUCCESS;
}

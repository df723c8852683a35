/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * The RDMA send protocols (in progress: they start the send/recv pipeline).
 */
#include "ompi_config.h"

#include "pml_ob1x_sendreq.h"

int ob1x_send_start_rget(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl)
{
    return ob1x_send_start_sendrecv_pipeline(req, bml_btl);
}

int ob1x_send_start_rput(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl)
{
    return ob1x_send_start_sendrecv_pipeline(req, bml_btl);
}

int ob1x_send_start_rdma_pipeline(ob1x_send_request_t *req, mca_bml_base_btl_t *bml_btl)
{
    return ob1x_send_start_sendrecv_pipeline(req, bml_btl);
}

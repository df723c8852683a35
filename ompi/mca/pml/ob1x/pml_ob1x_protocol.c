/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * The table of send protocols (pml_ob1x_protocol.h). A row's index is its
 * ob1x_protocol_t and the index of its counters; its name is the one MPI_T,
 * docs/ob1x.md and the start function use.
 */
#include "ompi_config.h"

#include "pml_ob1x_protocol.h"
#include "pml_ob1x_sendreq.h"

const ob1x_protocol_desc_t ob1x_protocols[OB1X_PROTO_COUNT] = {
    [OB1X_PROTO_EAGER_IMMEDIATE] = {"eager_immediate", ob1x_send_start_eager_immediate,
                                    "header and data in one btl_sendi call, no descriptor"},
    [OB1X_PROTO_EAGER_PREPARED] = {"eager_prepared", ob1x_send_start_eager_prepared,
                                   "one descriptor prepared on the user's data"},
    [OB1X_PROTO_EAGER_ALLOCATED] = {"eager_allocated", ob1x_send_start_eager_allocated,
                                    "one descriptor allocated, the data packed into it"},
    [OB1X_PROTO_SENDRECV_PIPELINE] = {"sendrecv_pipeline", ob1x_send_start_sendrecv_pipeline,
                                      "RNDV with the first part, ACK, then pipelined FRAGs"},
    [OB1X_PROTO_BUFFERED_PIPELINE] = {"buffered_pipeline", ob1x_send_start_buffered_pipeline,
                                      "packed into the MPI_Buffer_attach buffer, then as "
                                      "sendrecv_pipeline from that copy"},
    [OB1X_PROTO_RGET] = {"rget", ob1x_send_start_rget,
                         "RGET with the sender's registration; the receiver gets the data "
                         "and answers FINs"},
    [OB1X_PROTO_RPUT] = {"rput", ob1x_send_start_rput,
                         "RNDV without data; the receiver's PUTs name its registered buffer; "
                         "btl_put and a FIN per PUT"},
    [OB1X_PROTO_RDMA_PIPELINE] = {"rdma_pipeline", ob1x_send_start_rdma_pipeline,
                                  "RNDV with the first part; the middle by puts into pieces the "
                                  "receiver registers one by one; the tail by FRAGs"},
};

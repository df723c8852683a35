/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * MPI_T performance variables of pml/ob1x, registered from two tables.
 */
#include "ompi_config.h"

#include "pml_ob1x.h"
#include "pml_ob1x_protocol.h"

ob1x_counters_t ob1x_counters;

#define EVENT(ev) (&ob1x_counters.events[ev])

/* In the order ompi_info lists them, after the protocols' pairs. */
static const ob1x_pvar_t other_pvars[] = {
    {"synchronous_messages", "Synchronous-mode sends started", MCA_BASE_PVAR_CLASS_COUNTER,
     EVENT(OB1X_EV_SYNCHRONOUS)},
    {"flow_control_rndv",
     "Sends forced to rendezvous because the receiver's unexpected queue was over "
     "pml_ob1x_unexpected_limit",
     MCA_BASE_PVAR_CLASS_COUNTER, EVENT(OB1X_EV_FLOW_CONTROL_RNDV)},
    {"out_of_order_frags",
     "Incoming MATCH/RNDV headers that arrived ahead of their sequence number and were held",
     MCA_BASE_PVAR_CLASS_COUNTER, EVENT(OB1X_EV_OUT_OF_ORDER)},
    {"resource_retries",
     "Sends or control messages queued because a BTL had no descriptors, retried from progress",
     MCA_BASE_PVAR_CLASS_COUNTER, EVENT(OB1X_EV_RESOURCE_RETRIES)},
    {"unexpected_highwater", "Largest number of unexpected messages held at once",
     MCA_BASE_PVAR_CLASS_HIGHWATERMARK, EVENT(OB1X_EV_UNEXPECTED_HIGHWATER)},
    {"late_requests",
     "Non-blocking eager sends that left without a request and got one afterwards because the "
     "BTL kept the descriptor",
     MCA_BASE_PVAR_CLASS_COUNTER, EVENT(OB1X_EV_LATE_REQUEST)},
    {"orphan_messages",
     "Messages that arrived for a communicator this process had not created yet; held and "
     "matched once it is",
     MCA_BASE_PVAR_CLASS_COUNTER, EVENT(OB1X_EV_ORPHAN)},
    {"rdma_fallback_noncontig",
     "RDMA rendezvous the receiver turned into send/recv because its buffer is not contiguous",
     MCA_BASE_PVAR_CLASS_COUNTER, EVENT(OB1X_EV_FALLBACK_NONCONTIG)},
    {"rdma_fallback_registration",
     "RDMA rendezvous the receiver turned into send/recv because it could not register its "
     "buffer",
     MCA_BASE_PVAR_CLASS_COUNTER, EVENT(OB1X_EV_FALLBACK_REGISTRATION)},
    {"rdma_fallback_no_btl",
     "RDMA rendezvous the receiver turned into send/recv because no BTL of the sender's can "
     "do RDMA here",
     MCA_BASE_PVAR_CLASS_COUNTER, EVENT(OB1X_EV_FALLBACK_NO_BTL)},
    {"rdma_fallback_failed",
     "Ranges of RDMA messages sent by send/recv after their operation failed "
     "pml_ob1x_rdma_retries_limit times",
     MCA_BASE_PVAR_CLASS_COUNTER, EVENT(OB1X_EV_FALLBACK_FAILED)},
    {"rdma_retries", "RDMA operations (get or put) tried again after a failure",
     MCA_BASE_PVAR_CLASS_COUNTER, EVENT(OB1X_EV_RDMA_RETRIES)},
    {"registrations_made", "Memory registrations made with a BTL (btl_register_mem)",
     MCA_BASE_PVAR_CLASS_COUNTER, EVENT(OB1X_EV_REG_MADE)},
    {"registrations_reused",
     "Memory registrations served from the registration cache (mpi_leave_pinned)",
     MCA_BASE_PVAR_CLASS_COUNTER, EVENT(OB1X_EV_REG_REUSED)},
    {"btl_hint_copy",
     "Messages that could go by RDMA sent by the send/recv pipeline because the BTL's "
     "published figures favour its copy path",
     MCA_BASE_PVAR_CLASS_COUNTER, EVENT(OB1X_EV_HINT_COPY)},
    {"cuda_bytes_staged",
     "Bytes ob1x copied between device (GPU) buffers and their host copies: sends and "
     "receives of device memory that no device RGET carried (docs/cuda.md)",
     MCA_BASE_PVAR_CLASS_COUNTER, EVENT(OB1X_EV_CUDA_STAGED)},
    {"cuda_rget_device",
     "Messages sent from device memory by a device RGET (the peer's BTL read the device "
     "buffer, e.g. by CUDA IPC); a refused one is staged afterwards and counted here too",
     MCA_BASE_PVAR_CLASS_COUNTER, EVENT(OB1X_EV_CUDA_RGET)},
    {"cuda_stage_pinned",
     "Host blocks ob1x pinned (page-locked) to stage device (GPU) buffers; they are kept "
     "for reuse up to pml_ob1x_cuda_stage_cache bytes (docs/cuda.md)",
     MCA_BASE_PVAR_CLASS_COUNTER, EVENT(OB1X_EV_CUDA_STAGE_PINNED)},
    {"cuda_stage_reused",
     "Staged messages whose host copy was a pinned block kept from an earlier message",
     MCA_BASE_PVAR_CLASS_COUNTER, EVENT(OB1X_EV_CUDA_STAGE_REUSED)},
    {"cuda_stage_pieces",
     "Staged device (GPU) messages whose copy ran piece by piece beside the transfer: sends "
     "copied to host ahead of their FRAGs, receives copied to the device as pieces arrived "
     "(pml_ob1x_cuda_stage_piece; docs/cuda.md)",
     MCA_BASE_PVAR_CLASS_COUNTER, EVENT(OB1X_EV_CUDA_PIECEWISE)},
    {"cuda_enabled",
     "1 when ob1x handles CUDA device buffers in this process now: built with CUDA support "
     "and the CUDA driver is loaded here (by the application or by ob1x), so every buffer is "
     "classified; 0 otherwise (no device memory can exist in this process)",
     MCA_BASE_PVAR_CLASS_LEVEL, EVENT(OB1X_EV_CUDA_ENABLED)},
    {"unexpected_length", "Unexpected messages held now", MCA_BASE_PVAR_CLASS_LEVEL,
     &ob1x_counters.unexpected_length},
};

_Static_assert(sizeof(other_pvars) / sizeof(other_pvars[0]) == OB1X_EV_COUNT + 1,
               "one variable per event, and the unexpected length");

/* <protocol>_messages and <protocol>_bytes of one protocol. */
static int register_protocol(const mca_base_component_t *v, int p)
{
    char name[2][64], desc[2][256];
    ob1x_pvar_t pair[2] = {
        {name[0], desc[0], MCA_BASE_PVAR_CLASS_COUNTER, &ob1x_counters.messages[p]},
        {name[1], desc[1], MCA_BASE_PVAR_CLASS_COUNTER, &ob1x_counters.bytes[p]},
    };

    snprintf(name[0], sizeof(name[0]), "%s_messages", ob1x_protocols[p].name);
    snprintf(desc[0], sizeof(desc[0]), "Messages this process sent with the %s protocol (%s)",
             ob1x_protocols[p].name, ob1x_protocols[p].description);
    snprintf(name[1], sizeof(name[1]), "%s_bytes", ob1x_protocols[p].name);
    snprintf(desc[1], sizeof(desc[1]), "Payload bytes this process sent with the %s protocol",
             ob1x_protocols[p].name);
    return ob1x_pvars_register(v, pair, 2);
}

int ob1x_pvars_register_all(void)
{
    const mca_base_component_t *v = &mca_pml_ob1x_component.pmlm_version;

    for (int p = 0; p < OB1X_PROTO_COUNT; ++p) {
        int rc = register_protocol(v, p);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
    }
    return ob1x_pvars_register(v, other_pvars, sizeof(other_pvars) / sizeof(other_pvars[0]));
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * MPI_T performance variables of pml/ob1x, registered from two tables.
 */
#include "ompi_config.h"

#include "mpi.h"
#include "opal/mca/base/mca_base_pvar.h"

#include "pml_ob1x.h"

ob1x_counters_t ob1x_counters;

static const struct {
    const char *name;
    const char *description;
    int var_class;
} event_vars[OB1X_EV_COUNT] = {
    [OB1X_EV_SYNCHRONOUS] = {"synchronous_messages", "Synchronous-mode sends started",
                             MCA_BASE_PVAR_CLASS_COUNTER},
    [OB1X_EV_FLOW_CONTROL_RNDV] = {"flow_control_rndv",
                                   "Sends forced to rendezvous because the receiver's "
                                   "unexpected queue was over pml_ob1x_unexpected_limit",
                                   MCA_BASE_PVAR_CLASS_COUNTER},
    [OB1X_EV_OUT_OF_ORDER] = {"out_of_order_frags",
                              "Incoming MATCH/RNDV headers that arrived ahead of their "
                              "sequence number and were held",
                              MCA_BASE_PVAR_CLASS_COUNTER},
    [OB1X_EV_RESOURCE_RETRIES] = {"resource_retries",
                                  "Sends or control messages queued because a BTL had no "
                                  "descriptors, retried from progress",
                                  MCA_BASE_PVAR_CLASS_COUNTER},
    [OB1X_EV_UNEXPECTED_HIGHWATER] = {"unexpected_highwater",
                                      "Largest number of unexpected messages held at once",
                                      MCA_BASE_PVAR_CLASS_HIGHWATERMARK},
    [OB1X_EV_LATE_REQUEST] = {"late_requests",
                              "Non-blocking eager sends that left without a request and got "
                              "one afterwards because the BTL kept the descriptor",
                              MCA_BASE_PVAR_CLASS_COUNTER},
    [OB1X_EV_ORPHAN] = {"orphan_messages",
                        "Messages that arrived for a communicator this process had not "
                        "created yet; held and matched once it is",
                        MCA_BASE_PVAR_CLASS_COUNTER},
};

static int register_one(const char *name, const char *desc, int var_class, void *storage,
                        mca_base_var_type_t type)
{
    int rc = mca_base_component_pvar_register(
        &mca_pml_ob1x_component.pmlm_version, name, desc, OPAL_INFO_LVL_4, var_class, type, NULL,
        MPI_T_BIND_NO_OBJECT, MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS, NULL,
        NULL, NULL, storage);
    return rc < 0 ? rc : OMPI_SUCCESS;
}

int ob1x_pvars_register(void)
{
    char name[64], desc[256];
    int rc;

    for (int p = 0; p < OB1X_PROTO_COUNT; ++p) {
        snprintf(name, sizeof(name), "%s_messages", ob1x_protocols[p].name);
        snprintf(desc, sizeof(desc), "Messages this process sent with the %s protocol (%s)",
                 ob1x_protocols[p].name, ob1x_protocols[p].description);
        rc = register_one(name, desc, MCA_BASE_PVAR_CLASS_COUNTER, &ob1x_counters.messages[p],
                          MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
        snprintf(name, sizeof(name), "%s_bytes", ob1x_protocols[p].name);
        snprintf(desc, sizeof(desc), "Payload bytes this process sent with the %s protocol",
                 ob1x_protocols[p].name);
        rc = register_one(name, desc, MCA_BASE_PVAR_CLASS_COUNTER, &ob1x_counters.bytes[p],
                          MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
    }
    for (int e = 0; e < OB1X_EV_COUNT; ++e) {
        rc = register_one(event_vars[e].name, event_vars[e].description, event_vars[e].var_class,
                          &ob1x_counters.events[e], MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
    }
    return register_one("unexpected_length", "Unexpected messages held now",
                        MCA_BASE_PVAR_CLASS_LEVEL, &ob1x_counters.unexpected_length,
                        MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG);
}

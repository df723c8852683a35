/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Receiver-side flow control of unexpected data (pml_ob1x_flow.c).
 */
#ifndef PML_OB1X_FLOW_H
#define PML_OB1X_FLOW_H

#include "ompi_config.h"

#include "opal/mca/btl/btl.h"
#include "ompi/proc/proc.h"

#include "pml_ob1x.h"

BEGIN_C_DECLS

/* Sends FLOW messages if the unexpected total crossed a threshold; sender is
 * the peer that just added unexpected data, or NULL after data was consumed. */
void ob1x_flow_check(struct ompi_proc_t *sender);

/* After unexpected data was consumed: release throttled senders if any. */
static inline void ob1x_flow_release(void)
{
    if (OPAL_UNLIKELY(!opal_list_is_empty(&mca_pml_ob1x.xoff_procs))) {
        ob1x_flow_check(NULL);
    }
}

/* BTL receive callback of FLOW (the sender's side). */
void ob1x_recv_cb_flow(mca_btl_base_module_t *btl, mca_btl_base_tag_t tag,
                       mca_btl_base_descriptor_t *des, void *cbdata);

END_C_DECLS

#endif /* PML_OB1X_FLOW_H */

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Orphans: messages that arrive for a communicator not created here yet
 * (pml_ob1x_orphans.c).
 */
#ifndef PML_OB1X_ORPHANS_H
#define PML_OB1X_ORPHANS_H

#include "ompi_config.h"

#include "opal/mca/btl/btl.h"

#include "pml_ob1x_comm.h"
#include "pml_ob1x_hdr.h"

BEGIN_C_DECLS

/* The matching state of a communicator that can take messages now, or NULL
 * (not created here yet, or held by the pml_ob1x_orphan_hold_ms aid). */
static inline ob1x_comm_t *ob1x_comm_ready(struct ompi_communicator_t *comm)
{
    ob1x_comm_t *oc = NULL == comm ? NULL : ob1x_comm_of(comm);
    return NULL == oc || oc->held ? NULL : oc;
}

/* Keep a MATCH/RNDV for a communicator that is not ready, or return its
 * state if it became ready meanwhile (*comm is looked up again). */
ob1x_comm_t *ob1x_orphan_or_ready(const ob1x_hdr_t *hdr, const mca_btl_base_segment_t *segs,
                                  size_t nsegs, struct ompi_communicator_t **comm);

/* Replays fragments that were held for a communicator now being added. */
void ob1x_recv_orphans_replay(struct ompi_communicator_t *comm);
/* Releases those of a communicator being freed before it took them. */
void ob1x_recv_orphans_drop(struct ompi_communicator_t *comm);

END_C_DECLS

#endif /* PML_OB1X_ORPHANS_H */

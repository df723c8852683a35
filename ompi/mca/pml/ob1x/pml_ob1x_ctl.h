/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Control messages (ACK, CANCEL, CANCEL_ACK, FLOW): header-only messages that
 * must never be lost. When no BTL descriptor is available they are copied to
 * the pending list and ob1x_progress() sends them by itself, independently of
 * any other completion.
 */
#ifndef PML_OB1X_CTL_H
#define PML_OB1X_CTL_H

#include "ompi_config.h"

#include "opal/class/opal_list.h"
#include "ompi/proc/proc.h"

#include "pml_ob1x_hdr.h"

BEGIN_C_DECLS

typedef struct ob1x_ctl {
    opal_list_item_t super;
    struct ompi_proc_t *proc;
    ob1x_hdr_t hdr;
} ob1x_ctl_t;

OBJ_CLASS_DECLARATION(ob1x_ctl_t);

/* Send hdr (of its type's size) to proc now, or queue it. Never fails silently:
 * returns an error only if the peer cannot be reached at all. */
int ob1x_ctl_send(struct ompi_proc_t *proc, const ob1x_hdr_t *hdr);

/* Retry queued control messages; returns how many went out. */
int ob1x_ctl_progress(void);

END_C_DECLS

#endif /* PML_OB1X_CTL_H */

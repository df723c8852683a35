/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * osc_monitoring_rma.h - the counting entry points of an interposed module.
 */
#ifndef OSC_MONITORING_RMA_H
#define OSC_MONITORING_RMA_H

#include "osc_monitoring.h"

/* Points the RMA entry points of module that the component provides
 * (non-NULL) to the counting ones. */
void osc_monitoring_wrap(ompi_osc_base_module_t *module);

/* Puts back the entry points saved in real where module holds ours. */
void osc_monitoring_unwrap(ompi_osc_base_module_t *module, const ompi_osc_base_module_t *real);

#endif /* OSC_MONITORING_RMA_H */

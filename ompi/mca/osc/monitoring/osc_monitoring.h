/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * osc_monitoring.h - osc/monitoring: counts the one-sided traffic of
 * every window, whichever OSC component (rdma, sm, pt2pt, ucx, ...) serves
 * it, into the monitoring engine (common_ob1x_monitoring.h).
 *
 * How: when pml_monitoring_enable > 0 the component answers every window
 * query with the highest priority, runs the selection itself among the
 * other components, lets the best one build its module, then replaces the
 * module's RMA entry points (put, get, the accumulate family, their
 * request variants, fetch_and_op, compare_and_swap) and osc_free with
 * ours. The module stays the component's own object (its functions cast
 * win->w_osc_module to their type); its original table is kept in a
 * per-window record, found from the module's address, and put back when
 * the window is freed. Synchronization calls are not touched.
 *
 * When monitoring is off the component answers no query: selection is
 * exactly what it would be without it. It stays loaded all the same (it
 * is not closed at MPI_Init), so that its osc_monitoring_windows MPI_T
 * variable stays valid (reading 0).
 */
#ifndef OSC_MONITORING_H
#define OSC_MONITORING_H

#include "ompi_config.h"

#include "ompi/mca/osc/osc.h"
#include "ompi/win/win.h"

BEGIN_C_DECLS

OMPI_DECLSPEC extern ompi_osc_base_component_t mca_osc_monitoring_component;

/* The component's original entry points of one interposed window. */
typedef struct osc_monitoring_window {
    ompi_osc_base_module_t real;
} osc_monitoring_window_t;

/* Replaces the RMA entry points and osc_free of the module of win (just
 * built by the selected component) with the monitoring ones. */
int osc_monitoring_interpose(ompi_win_t *win);

/* The original entry points of the module of win (NULL if it was not
 * interposed, which the wrappers never see). */
const ompi_osc_base_module_t *osc_monitoring_real(ompi_win_t *win);

/* Window records: set up at component init, released at finalize. */
int osc_monitoring_windows_init(void);
void osc_monitoring_windows_fini(void);

/* Windows interposed now (pvar osc_monitoring_windows). */
extern size_t osc_monitoring_window_count;

END_C_DECLS

#endif /* OSC_MONITORING_H */

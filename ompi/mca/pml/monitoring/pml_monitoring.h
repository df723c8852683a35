/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pml_monitoring.h - pml/monitoring: records every message another PML
 * (ob1, ucx, cm) sends into the monitoring engine
 * (common_ob1x_monitoring.h), for runs with pml_monitoring_enable > 0.
 *
 * It is never selected itself. Like Open MPI 4.1's component of the same
 * name it takes part in the PML selection with priority 0, loses, and
 * when the PML framework closes it as a loser it puts its own send entry
 * points in front of the winner's (mca_pml). pml/ob1x records in its own
 * send path: when it wins, this component stands aside.
 */
#ifndef PML_MONITORING_H
#define PML_MONITORING_H

#include "ompi_config.h"
#include "ompi/mca/pml/pml.h"

BEGIN_C_DECLS

OMPI_DECLSPEC extern mca_pml_base_component_2_0_0_t mca_pml_monitoring_component;

/* The winner's module and component, saved when we interpose. */
extern mca_pml_base_module_t mca_pml_monitoring_real;
extern mca_pml_base_component_t mca_pml_monitoring_real_component;

/* Builds the module installed in mca_pml: the winner's, with our send
 * entry points (send, isend, isend_init, start). */
mca_pml_base_module_t mca_pml_monitoring_module_wrap(const mca_pml_base_module_t *real);

/* Frees the notes kept on persistent send requests (at MPI_Finalize). */
void mca_pml_monitoring_persistent_fini(void);

/* The module returned by component init (priority 0: never the winner
 * unless it is the only PML allowed, which add_procs then refuses). */
extern mca_pml_base_module_t mca_pml_monitoring_alone;

END_C_DECLS

#endif /* PML_MONITORING_H */

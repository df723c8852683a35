/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pml_ob1x_monitor.h - recording into the monitoring engine
 * (pml_monitoring_enable) from ob1x's own send, start and receive paths.
 *
 * Each communicator keeps, per peer, the address of the engine's counters of
 * its process (pml_ob1x_monitor.c). Callers test ob1x_mon_is_on() first.
 */
#ifndef PML_OB1X_MONITOR_H
#define PML_OB1X_MONITOR_H

#include "ompi_config.h"

#include "ompi/communicator/communicator.h"

BEGIN_C_DECLS

/* A message of `bytes` packed bytes sent to rank (in comm's remote group)
 * with tag. Out of line: the paths that call it pay only the test of
 * ob1x_mon_is_on() when monitoring is off. */
void ob1x_monitor_send(struct ompi_communicator_t *comm, int rank, size_t bytes, int tag);

/* A message matched from rank (receive side: beyond Open MPI's monitoring,
 * which counts only at the sender). */
void ob1x_monitor_recv(struct ompi_communicator_t *comm, int rank, size_t bytes, int tag);

END_C_DECLS

#endif /* PML_OB1X_MONITOR_H */

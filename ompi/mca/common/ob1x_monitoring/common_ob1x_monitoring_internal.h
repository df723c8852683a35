/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_monitoring_internal.h - what the engine's files share:
 * per-peer storage, configuration, the per-communicator collective data.
 * Not for components: they use common_ob1x_monitoring.h.
 */
#ifndef COMMON_OB1X_MONITORING_INTERNAL_H
#define COMMON_OB1X_MONITORING_INTERNAL_H

#include "common_ob1x_monitoring.h"
#include "opal/runtime/opal.h"
#include "opal/threads/threads.h"

/* Configuration, from the MCA variables (ob1x_mon_params_register). */
extern int ob1x_mon_enable;     /* pml_monitoring_enable */
extern int ob1x_mon_output;     /* pml_monitoring_enable_output; 0 once MPI_T drives */
extern char *ob1x_mon_filename; /* our copy: the flush pvar may replace it */
extern int ob1x_mon_receives;   /* pml_monitoring_count_receives */

/* Has the PML hand over the counts it keeps (ob1x_mon_set_settle): call
 * before reading, dumping or resetting counts. */
void ob1x_mon_settle(void);

/* Counts of a peer since the last reset, or NULL when it was never talked
 * to (no allocation). The result lives in a static buffer until the next
 * call: for the dump and MPI_T reads, which Open MPI serializes. */
const ob1x_mon_counts_t *ob1x_mon_peer_find(opal_process_name_t name);

/* Counts of the world rank since the last reset (same buffer rules). */
const ob1x_mon_counts_t *ob1x_mon_world_peer(int world_rank);

/* Counts of a peer since the start of the run (never reset, only grow):
 * for MPI_T counter handles, which take differences. */
const ob1x_mon_counts_t *ob1x_mon_peer_find_total(opal_process_name_t name);

/* Visits every peer of another job (spawned, connected) that has counts. */
typedef void (*ob1x_mon_other_fn_t)(opal_process_name_t name, const ob1x_mon_counts_t *c,
                                    void *arg);
void ob1x_mon_other_foreach(ob1x_mon_other_fn_t fn, void *arg);

/* Zeros the per-peer counts / the per-communicator ones. */
void ob1x_mon_peers_reset(void);
void ob1x_mon_coll_reset_all(void);
/* Frees the per-peer state (finalize). */
void ob1x_mon_peers_free(void);

/* Writes the D/O2A/A2O/A2A lines of every communicator, then frees the
 * data of communicators released since (they have been reported once). */
void ob1x_mon_coll_dump_all(FILE *f);
/* Frees all of it (finalize). */
void ob1x_mon_coll_free_all(void);
/* The counts of comm's collective class cls: [0] messages, [1] bytes
 * (zeros for a communicator without collective monitoring). */
void ob1x_mon_coll_get(ompi_communicator_t *comm, ob1x_mon_coll_class_t cls, uint64_t out[2]);

/* Registers the MPI_T performance variables (common_ob1x_monitoring_pvar.c). */
int ob1x_mon_pvars_register(void);

#endif /* COMMON_OB1X_MONITORING_INTERNAL_H */

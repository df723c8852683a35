/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * libob1x_monitoring_prof: the C entry points' work, shared with the
 * Fortran ones (ob1x_monitoring_prof_f.c).
 */
#ifndef OB1X_MONITORING_PROF_H
#define OB1X_MONITORING_PROF_H

#include <mpi.h>

#define OB1X_PROF_HIDDEN __attribute__((visibility("hidden")))

/* PMPI_Init (required < 0) or PMPI_Init_thread, then start monitoring. */
OB1X_PROF_HIDDEN int ob1x_prof_init(int *argc, char ***argv, int required, int *provided);
/* Stop monitoring, write the matrices, then PMPI_Finalize. */
OB1X_PROF_HIDDEN int ob1x_prof_finalize(void);

#endif

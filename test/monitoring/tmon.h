/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * tmon.h - helpers of the monitoring tests (test/monitoring/): MPI_T
 * performance variables looked up AFTER MPI_Init (as an application
 * instrumented with MPI_T does, and as stock Open MPI 4.1.4 fails), and
 * the known traffic pattern they all use.
 */
#ifndef TMON_H
#define TMON_H

#include <mpi.h>
#include <stdint.h>

#include "../common/tpml.h"

#define TMON_ROUNDS 5   /* ring rounds */
#define TMON_BYTES 1000 /* bytes per even ring round's message (histogram bin 10) */
#define TMON_BYTES_ODD 600 /* per odd round's: the same bin, fewer bytes */
#define TMON_PBYTES 16  /* persistent send, started twice (bin 5) */
#define TMON_TAG 7
#define TMON_PTAG 9
#define TMON_ZTAG 11 /* one empty message (bin 0) */
#define TMON_BINS 66

/* Messages and bytes each process sends to its right neighbour (external tags). */
#define TMON_EXT_COUNT (TMON_ROUNDS + 2 + 1)
#define TMON_RING_BYTES                                                                            \
    ((TMON_ROUNDS + 1) / 2 * TMON_BYTES + TMON_ROUNDS / 2 * TMON_BYTES_ODD)
#define TMON_EXT_BYTES (TMON_RING_BYTES + 2 * TMON_PBYTES)

/* MPI_Init, then MPI_T, then a session. */
void tmon_init(int *argc, char ***argv);
void tmon_finalize(void);

/* The value of an integer control variable (e.g. "pml_monitoring_enable"). */
int tmon_cvar_int(const char *name);

/* Index of a pvar by name; checks class, datatype and binding when
 * var_class >= 0. */
int tmon_pvar_index(const char *name, int var_class, MPI_Datatype type, int bind);

/* Allocates a handle of the named (SIZE, bound to comm) pvar; *count gets
 * its number of values. */
MPI_T_pvar_handle tmon_handle(const char *name, MPI_Comm comm, int *count);

/* Reads a handle into values (count unsigned long long). */
void tmon_read(MPI_T_pvar_handle h, unsigned long long *values);

/* The pattern: TMON_ROUNDS ring messages to the right, of TMON_BYTES and
 * TMON_BYTES_ODD bytes in turn (tag TMON_TAG), a persistent send of
 * TMON_PBYTES started twice (TMON_PTAG), one empty message (TMON_ZTAG);
 * then one MPI_Barrier (with coll basic:
 * linear, one empty internal-tag message from every rank to 0 and from 0 to
 * every rank). */
void tmon_pattern(int with_barrier);
/* Set: tmon_pattern starts no persistent send (Open MPI 4.1's monitoring
 * does not count them; for comparisons with it). */
extern int tmon_no_persistent;

/* Internal messages rank "from" sends to rank "to" in tmon_pattern's barrier. */
int tmon_barrier_msgs(int from, int to);

extern MPI_T_pvar_session tmon_session;

#endif /* TMON_H */

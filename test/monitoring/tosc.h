/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * tosc.h - MPI_T helpers of the osc/monitoring tests (osc_*.c).
 */
#ifndef TOSC_H
#define TOSC_H

#include "tpml.h"

/* osc_monitoring_windows (windows osc/monitoring holds now), or 0 when
 * the variable is not there (osc/monitoring not loaded). */
static inline unsigned long long tosc_windows_held(MPI_T_pvar_session s)
{
    MPI_T_pvar_handle h;
    unsigned long long v = 0;
    int idx, count;

    if (MPI_SUCCESS !=
            MPI_T_pvar_get_index("osc_monitoring_windows", MPI_T_PVAR_CLASS_LEVEL, &idx) ||
        MPI_SUCCESS != MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count)) {
        return 0;
    }
    T_MPI(MPI_T_pvar_read(s, h, &v));
    MPI_T_pvar_handle_free(s, &h);
    return v;
}

/* A handle on the per-peer (MPI_COMM_WORLD) variable name, started. */
static inline MPI_T_pvar_handle tosc_open_peer_var(MPI_T_pvar_session s, const char *name)
{
    MPI_T_pvar_handle h;
    MPI_Comm comm = MPI_COMM_WORLD;
    int idx, count, rc;

    T_MPI(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_SIZE, &idx));
    T_MPI(MPI_T_pvar_handle_alloc(s, idx, &comm, &h, &count));
    T_CHECK(count == t_size, "%s: %d entries for %d ranks", name, count, t_size);
    rc = MPI_T_pvar_start(s, h);
    T_CHECK(MPI_SUCCESS == rc || MPI_T_ERR_PVAR_NO_STARTSTOP == rc, "start %s: %d", name, rc);
    return h;
}

#endif /* TOSC_H */

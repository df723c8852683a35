/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Fortran (mpif.h, "use mpi" and "use mpi_f08") entry points of libob1x_monitoring_prof:
 * Open MPI's Fortran MPI_INIT/MPI_FINALIZE call PMPI_Init/PMPI_Finalize
 * directly, past the C MPI_Init of a preloaded library, so they are
 * replaced here too, under each name mangling Open MPI provides.
 */
#include <stddef.h>

#include "ob1x_monitoring_prof.h"

static void prof_f_init(MPI_Fint *ierr)
{
    int rc = ob1x_prof_init(NULL, NULL, -1, NULL);
    if (NULL != ierr) {
        *ierr = (MPI_Fint) rc;
    }
}

static void prof_f_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    int got = 0;
    int rc = ob1x_prof_init(NULL, NULL, (int) *required, &got);
    *provided = (MPI_Fint) got;
    if (NULL != ierr) {
        *ierr = (MPI_Fint) rc;
    }
}

static void prof_f_finalize(MPI_Fint *ierr)
{
    int rc = ob1x_prof_finalize();
    if (NULL != ierr) {
        *ierr = (MPI_Fint) rc;
    }
}

/* The four manglings: MPI_INIT, mpi_init, mpi_init_, mpi_init__. */
#define PROF_F_NAMES(upper, lower, impl, params, args)                                             \
    void upper params;                                                                             \
    void lower params;                                                                             \
    void lower##_ params;                                                                          \
    void lower##__ params;                                                                         \
    void upper params                                                                              \
    {                                                                                              \
        impl args;                                                                                 \
    }                                                                                              \
    void lower params                                                                              \
    {                                                                                              \
        impl args;                                                                                 \
    }                                                                                              \
    void lower##_ params                                                                           \
    {                                                                                              \
        impl args;                                                                                 \
    }                                                                                              \
    void lower##__ params                                                                          \
    {                                                                                              \
        impl args;                                                                                 \
    }

PROF_F_NAMES(MPI_INIT, mpi_init, prof_f_init, (MPI_Fint * ierr), (ierr))
PROF_F_NAMES(MPI_INIT_THREAD, mpi_init_thread, prof_f_init_thread,
             (MPI_Fint * required, MPI_Fint *provided, MPI_Fint *ierr), (required, provided, ierr))
PROF_F_NAMES(MPI_FINALIZE, mpi_finalize, prof_f_finalize, (MPI_Fint * ierr), (ierr))

/* "use mpi_f08": Open MPI 4.1's MPI_Init/MPI_Init_thread/MPI_Finalize
 * module procedures (an absent optional ierror comes as NULL). */
void mpi_init_f08_(MPI_Fint *ierr);
void mpi_init_thread_f08_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);
void mpi_finalize_f08_(MPI_Fint *ierr);

void mpi_init_f08_(MPI_Fint *ierr)
{
    prof_f_init(ierr);
}

void mpi_init_thread_f08_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    prof_f_init_thread(required, provided, ierr);
}

void mpi_finalize_f08_(MPI_Fint *ierr)
{
    prof_f_finalize(ierr);
}

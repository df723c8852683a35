/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * osc_util.h - what the one-sided test programs (smcuda_osc*.c) share,
 * header only, on top of btl_util.h: opening and closing a window of each
 * flavour, elements of several types read and written through one value
 * type, and the check that btl/smcuda carried the operations (counters).
 */
#ifndef OB1X_TEST_OSC_UTIL_H
#define OB1X_TEST_OSC_UTIL_H

#include "btl_util.h"

#include <stdbool.h>

/* ---- windows ---- */

enum { OU_CREATE, OU_ALLOCATE, OU_DYNAMIC, OU_NFLAVOURS };
static const char *ou_flavour_names[OU_NFLAVOURS] = {"create", "allocate", "dynamic"};

typedef struct {
    MPI_Win win;
    unsigned char *base; /* our window memory */
    unsigned char *mem;  /* what we allocated for it (create, dynamic), else NULL */
    MPI_Aint *disp;      /* per rank of the communicator: window address (dynamic) or 0 */
    const char *name;    /* the flavour */
} ou_window_t;

/* Opens a window of flavour fl on comm, its memory zeroed; info goes to
 * MPI_Win_create only. Collective. A window that cannot be created fails
 * the test (where comm returns errors; otherwise MPI aborts first), named
 * by where. */
static inline void ou_win_open(ou_window_t *w, int fl, MPI_Comm comm, MPI_Aint bytes, MPI_Info info,
                               const char *where)
{
    int rc, n;
    MPI_Aint mine;

    MPI_Comm_size(comm, &n);
    w->name = ou_flavour_names[fl];
    w->disp = calloc((size_t) n, sizeof(*w->disp));
    w->mem = NULL;
    BU_CHECK(w->disp, "out of memory");
    if (OU_ALLOCATE == fl) {
        rc = MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, comm, &w->base, &w->win);
    } else {
        w->base = w->mem = calloc(1, (size_t) bytes);
        BU_CHECK(w->mem, "out of memory");
        if (OU_CREATE == fl) {
            rc = MPI_Win_create(w->base, bytes, 1, info, comm, &w->win);
        } else {
            rc = MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &w->win);
            if (MPI_SUCCESS == rc) {
                rc = MPI_Win_attach(w->win, w->base, bytes);
            }
            /* displacements are addresses: every rank learns everyone's */
            MPI_Get_address(w->base, &mine);
            MPI_Allgather(&mine, 1, MPI_AINT, w->disp, 1, MPI_AINT, comm);
        }
    }
    if (MPI_SUCCESS != rc) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        bu_fail("%s window on %s: %s", w->name, where, msg);
    }
    memset(w->base, 0, (size_t) bytes);
}

static inline void ou_win_close(ou_window_t *w)
{
    if (0 == strcmp(w->name, ou_flavour_names[OU_DYNAMIC])) {
        MPI_Win_detach(w->win, w->base);
    }
    MPI_Win_free(&w->win);
    free(w->mem);
    free(w->disp);
}

/* Runs run() on a window of each flavour named in only (NULL: all) over
 * MPI_COMM_WORLD, one after the other, and prints "PROG: FLAVOUR window
 * ok" after each. */
static inline void ou_each_flavour(const char *prog, const char *only, MPI_Aint bytes,
                                   MPI_Info create_info, void (*run)(ou_window_t *))
{
    ou_window_t w;

    for (int fl = 0; fl < OU_NFLAVOURS; ++fl) {
        if (NULL != only && NULL == strstr(only, ou_flavour_names[fl])) {
            continue;
        }
        ou_win_open(&w, fl, MPI_COMM_WORLD, bytes, create_info, "MPI_COMM_WORLD");
        run(&w);
        if (0 == bu_rank) {
            printf("%s: %s window ok\n", prog, w.name);
        }
        ou_win_close(&w);
    }
}

/* ---- typed elements ---- */

enum { OU_I32, OU_I64, OU_FLT, OU_DBL, OU_NKINDS };
static const int ou_kind_size[OU_NKINDS] = {4, 8, 4, 8};

/* The kind of an integer C type: OU_KIND_OF_INT(long) */
#define OU_KIND_OF_INT(ctype) (4 == sizeof(ctype) ? OU_I32 : OU_I64)

/* A value of any kind, carried as int64 (integers) and double (floats). */
typedef struct {
    int64_t i;
    double d;
} ou_val_t;

static inline bool ou_is_int(int kind)
{
    return OU_I32 == kind || OU_I64 == kind;
}

static inline ou_val_t ou_val(double v)
{
    return (ou_val_t){(int64_t) v, v};
}

/* v as an element of this kind holds it (narrower kinds round). */
static inline ou_val_t ou_narrow(int kind, ou_val_t v)
{
    if (OU_I32 == kind) {
        v.i = (int32_t) v.i;
    } else if (OU_FLT == kind) {
        v.d = (float) v.d;
    }
    return v;
}

static inline void ou_store(int kind, void *p, ou_val_t v)
{
    switch (kind) {
        case OU_I32:
            *(int32_t *) p = (int32_t) v.i;
            break;
        case OU_I64:
            *(int64_t *) p = v.i;
            break;
        case OU_FLT:
            *(float *) p = (float) v.d;
            break;
        default:
            *(double *) p = v.d;
            break;
    }
}

static inline bool ou_same(int kind, const void *p, ou_val_t v)
{
    switch (kind) {
        case OU_I32:
            return *(const int32_t *) p == (int32_t) v.i;
        case OU_I64:
            return *(const int64_t *) p == v.i;
        case OU_FLT:
            return *(const float *) p == (float) v.d;
        default:
            return *(const double *) p == v.d;
    }
}

/* The element at p as a double, for messages and float comparisons. */
static inline double ou_shown(int kind, const void *p)
{
    switch (kind) {
        case OU_I32:
            return *(const int32_t *) p;
        case OU_I64:
            return (double) *(const int64_t *) p;
        case OU_FLT:
            return *(const float *) p;
        default:
            return *(const double *) p;
    }
}

/* v as a double, for messages. */
static inline double ou_val_shown(int kind, ou_val_t v)
{
    return ou_is_int(kind) ? (double) v.i : v.d;
}

static inline int ou_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return x < y ? -1 : x > y;
}

/* ---- what btl/smcuda carried ---- */

/* Whether the program's arguments hold expect=what. */
static inline bool ou_expected(int argc, char **argv, const char *what)
{
    const char *a = bu_arg(argc, argv, "expect");
    return NULL != a && 0 == strcmp(a, what);
}

enum { OU_ATOMICS = 1, OU_PUTS_OR_GETS = 2, OU_GETS = 4, OU_HELPED = 8 };

/* Totals the counters (collective) and prints them; then rank 0 checks
 * that each counter named in moved (OU_* bits) grew since before. */
static inline void ou_counters_check(const char *prog, const bu_counters_t *before, unsigned moved)
{
    bu_counters_t after;

    bu_counters_total(&after);
    bu_counters_print(prog, &after);
    if (0 == moved || 0 != bu_rank) {
        return;
    }
    BU_CHECK(after.found, "btl_smcuda counters not found");
    if (moved & OU_ATOMICS) {
        BU_CHECK(after.atomics > before->atomics, "no atomic operation went through btl/smcuda");
    }
    if (moved & OU_PUTS_OR_GETS) {
        BU_CHECK(after.messages[BU_PUT] + after.messages[BU_GET] >
                     before->messages[BU_PUT] + before->messages[BU_GET],
                 "no single-copy put or get went through btl/smcuda");
    }
    if (moved & OU_GETS) {
        BU_CHECK(after.messages[BU_GET] > before->messages[BU_GET], "no get went through smcuda");
    }
    if (moved & OU_HELPED) {
        BU_CHECK(after.helped > before->helped,
                 "the data owner copied no part of the gets (no shared get tested)");
    }
}

#endif

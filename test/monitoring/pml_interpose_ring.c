/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pml_interpose_ring.c - exact send-side counts of tmon_pattern (token
 * ring, a persistent send started twice with its own tag, an empty
 * message, a linear barrier) recorded by pml/monitoring in front of
 * another PML, or by pml/ob1x with pml/monitoring present (which must
 * stand aside: every count would be doubled otherwise). Read through the
 * stock pvars looked up after MPI_Init, per pml_monitoring_enable (1: the
 * barrier's internal-tag messages with the others; 2: apart).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmon.c"

enum { CNT, SIZ, ICNT, ISIZ, NPV };
static const char *names[NPV] = {"pml_monitoring_messages_count", "pml_monitoring_messages_size",
                                 "pml_monitoring_messages_internal_count",
                                 "pml_monitoring_messages_internal_size"};

static void expect(int mode, int p, unsigned long long e[NPV])
{
    const int right = (t_rank + 1) % t_size;
    const unsigned long long bar = (unsigned long long) tmon_barrier_msgs(t_rank, p);

    memset(e, 0, NPV * sizeof(e[0]));
    e[CNT] = p == right ? TMON_EXT_COUNT : 0;
    e[SIZ] = p == right ? TMON_EXT_BYTES : 0;
    if (1 == mode) {
        e[CNT] += bar; /* the barrier's messages are empty */
    } else {
        e[ICNT] = bar;
    }
}

static void check_histogram(MPI_T_pvar_handle hist)
{
    const int right = (t_rank + 1) % t_size;
    unsigned long long *hv = calloc((size_t) t_size * TMON_BINS, sizeof(*hv));

    tmon_read(hist, hv);
    for (int p = 0; p < t_size; ++p) {
        const unsigned long long *b = hv + (size_t) p * TMON_BINS;
        unsigned long long e0 = (p == right) + tmon_barrier_msgs(t_rank, p);
        unsigned long long e5 = p == right ? 2 : 0, e10 = p == right ? TMON_ROUNDS : 0;
        T_CHECK(b[0] == e0 && b[5] == e5 && b[10] == e10,
                "histogram to %d: bins 0/5/10 = %llu/%llu/%llu, expected %llu/%llu/%llu", p, b[0],
                b[5], b[10], e0, e5, e10);
    }
    free(hv);
}

int main(int argc, char **argv)
{
    MPI_T_pvar_handle h[NPV], hist;
    unsigned long long *v[NPV], e[NPV];
    int mode, count;

    tmon_init(&argc, &argv);
    mode = tmon_cvar_int("pml_monitoring_enable");
    T_CHECK(mode >= 1, "run with pml_monitoring_enable >= 1 (got %d)", mode);
    mode = mode > 2 ? 2 : mode;
    for (int i = 0; i < NPV; ++i) {
        h[i] = tmon_handle(names[i], MPI_COMM_WORLD, &count);
        T_CHECK(count == t_size, "%s: %d values", names[i], count);
        v[i] = calloc((size_t) count, sizeof(*v[i]));
        T_MPI(MPI_T_pvar_start(tmon_session, h[i]));
    }
    hist = tmon_handle("pml_monitoring_messages_histogram", MPI_COMM_WORLD, &count);
    T_MPI(MPI_T_pvar_start(tmon_session, hist));
    /* The handles read from zero: MPI_Init's traffic is not counted. */
    tmon_pattern(1);
    for (int i = 0; i < NPV; ++i) {
        tmon_read(h[i], v[i]);
    }
    for (int p = 0; p < t_size; ++p) {
        expect(mode, p, e);
        for (int i = 0; i < NPV; ++i) {
            T_CHECK(v[i][p] == e[i], "enable %d: %s[%d] = %llu, expected %llu", mode, names[i], p,
                    v[i][p], e[i]);
        }
    }
    check_histogram(hist);
    for (int i = 0; i < NPV; ++i) {
        T_MPI(MPI_T_pvar_stop(tmon_session, h[i]));
        T_MPI(MPI_T_pvar_handle_free(tmon_session, &h[i]));
        free(v[i]);
    }
    T_MPI(MPI_T_pvar_stop(tmon_session, hist));
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &hist));
    tmon_finalize();
    return 0;
}

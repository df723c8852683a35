/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * tcoll.c - helpers of the coll/monitoring tests (included by them, as
 * tmon.c is): the per-peer collective pvars of MPI_COMM_WORLD and the
 * per-communicator class pvars (coll_monitoring_{o2a,a2o,a2a}_{count,size}),
 * read before and after each step so that each step is checked alone.
 */
#include "tmon.c"

enum { TC_O2A, TC_A2O, TC_A2A, TC_CLASSES };
static const char *tc_class_names[TC_CLASSES] = {"o2a", "a2o", "a2a"};

typedef struct {
    MPI_T_pvar_handle peer_count, peer_size; /* on MPI_COMM_WORLD, one value per rank */
    MPI_T_pvar_handle cls[TC_CLASSES][2];    /* on comm: [class][0 count, 1 size] */
    unsigned long long *count, *size;        /* last read, per world rank */
    unsigned long long cls_v[TC_CLASSES][2];
} tcoll_t;

static void tc_start(MPI_T_pvar_handle h)
{
    int rc = MPI_T_pvar_start(tmon_session, h);
    /* continuous variables cannot be started: they always count */
    T_CHECK(MPI_SUCCESS == rc || MPI_T_ERR_PVAR_NO_STARTSTOP == rc, "pvar start: rc %d", rc);
}

static void tc_open(tcoll_t *t, MPI_Comm comm)
{
    int n;

    t->peer_count = tmon_handle("coll_monitoring_messages_count", MPI_COMM_WORLD, &n);
    t->peer_size = tmon_handle("coll_monitoring_messages_size", MPI_COMM_WORLD, &n);
    T_CHECK(n == t_size, "coll_monitoring_messages_size: %d values", n);
    tc_start(t->peer_count);
    tc_start(t->peer_size);
    for (int c = 0; c < TC_CLASSES; ++c) {
        char name[64];
        int idx;
        snprintf(name, sizeof(name), "coll_monitoring_%s_count", tc_class_names[c]);
        idx = tmon_pvar_index(name, MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                              MPI_T_BIND_MPI_COMM);
        T_MPI(MPI_T_pvar_handle_alloc(tmon_session, idx, &comm, &t->cls[c][0], &n));
        snprintf(name, sizeof(name), "coll_monitoring_%s_size", tc_class_names[c]);
        idx = tmon_pvar_index(name, MPI_T_PVAR_CLASS_AGGREGATE, MPI_UNSIGNED_LONG_LONG,
                              MPI_T_BIND_MPI_COMM);
        T_MPI(MPI_T_pvar_handle_alloc(tmon_session, idx, &comm, &t->cls[c][1], &n));
        tc_start(t->cls[c][0]);
        tc_start(t->cls[c][1]);
    }
    t->count = calloc((size_t) t_size, sizeof(*t->count));
    t->size = calloc((size_t) t_size, sizeof(*t->size));
}

static void tc_read(tcoll_t *t)
{
    tmon_read(t->peer_count, t->count);
    tmon_read(t->peer_size, t->size);
    for (int c = 0; c < TC_CLASSES; ++c) {
        tmon_read(t->cls[c][0], &t->cls_v[c][0]);
        tmon_read(t->cls[c][1], &t->cls_v[c][1]);
    }
}

/* What one step must add at this process. */
typedef struct {
    unsigned long long *count, *size; /* per world rank */
    int cls;                          /* class recorded here, or -1 */
    unsigned long long cls_size;
} tc_expect_t;

static tc_expect_t *tc_expect_new(void)
{
    tc_expect_t *e = calloc(1, sizeof(*e));
    e->count = calloc((size_t) t_size, sizeof(*e->count));
    e->size = calloc((size_t) t_size, sizeof(*e->size));
    e->cls = -1;
    return e;
}

static void tc_expect_free(tc_expect_t *e)
{
    free(e->count);
    free(e->size);
    free(e);
}

/* One message of bytes to world rank p. */
static void tc_to(tc_expect_t *e, int p, unsigned long long bytes)
{
    e->count[p] += 1;
    e->size[p] += bytes;
}

/* Runs step (a collective), then checks the increments against what
 * expect says (called after the step, which may set the counts). */
static void tc_check(tcoll_t *t, const char *what, void (*step)(void),
                     void (*expect)(tc_expect_t *))
{
    tc_expect_t *e = tc_expect_new();
    unsigned long long *c0 = malloc((size_t) t_size * sizeof(*c0));
    unsigned long long *s0 = malloc((size_t) t_size * sizeof(*s0));
    unsigned long long k0[TC_CLASSES][2];

    tc_read(t);
    memcpy(c0, t->count, (size_t) t_size * sizeof(*c0));
    memcpy(s0, t->size, (size_t) t_size * sizeof(*s0));
    memcpy(k0, t->cls_v, sizeof(k0));
    step();
    expect(e);
    tc_read(t);
    for (int p = 0; p < t_size; ++p) {
        T_CHECK(t->count[p] - c0[p] == e->count[p] && t->size[p] - s0[p] == e->size[p],
                "%s: to rank %d: %llu messages %llu bytes, expected %llu %llu", what, p,
                t->count[p] - c0[p], t->size[p] - s0[p], e->count[p], e->size[p]);
    }
    for (int c = 0; c < TC_CLASSES; ++c) {
        unsigned long long dc = t->cls_v[c][0] - k0[c][0], ds = t->cls_v[c][1] - k0[c][1];
        unsigned long long ec = c == e->cls ? 1 : 0, es = c == e->cls ? e->cls_size : 0;
        T_CHECK(dc == ec && ds == es, "%s: %s count %llu size %llu, expected %llu %llu", what,
                tc_class_names[c], dc, ds, ec, es);
    }
    free(c0);
    free(s0);
    tc_expect_free(e);
}

static void tc_close(tcoll_t *t)
{
    MPI_T_pvar_handle_free(tmon_session, &t->peer_count);
    MPI_T_pvar_handle_free(tmon_session, &t->peer_size);
    for (int c = 0; c < TC_CLASSES; ++c) {
        MPI_T_pvar_handle_free(tmon_session, &t->cls[c][0]);
        MPI_T_pvar_handle_free(tmon_session, &t->cls[c][1]);
    }
    free(t->count);
    free(t->size);
}

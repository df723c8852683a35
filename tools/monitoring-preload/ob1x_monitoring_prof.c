/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * libob1x_monitoring_prof: monitors an unmodified MPI application.
 *
 *   mpirun -x LD_PRELOAD=$libdir/libob1x_monitoring_prof.so --mca pml ob1x ./app
 *
 * Through the profiling interface (MPI_Init* and MPI_Finalize replaced, the
 * real ones reached as PMPI_*): monitoring is turned on before MPI_Init
 * reads its parameters, the per-peer MPI_T size pvars (pml, osc sent and
 * received, coll; messages and bytes) are started on MPI_COMM_WORLD after
 * it, and at MPI_Finalize they are stopped, read, gathered to rank 0, which
 * writes the communication matrices (files PREFIX_{pml,coll,osc,all}_
 * {msg,size,avg}.mat, the text format of Open MPI 4.1's
 * ompi_monitoring_prof.so), before the real MPI_Finalize.
 *
 * Only MPI and MPI_T are used, so any component that provides the pvars
 * (pml/ob1x, the ob1x pml/coll/osc monitoring components) serves; when none
 * does, the application runs on and a message says why (once, rank 0).
 */
#include "ompi_config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/util/show_help.h"

#include "ob1x_monitoring_prof.h"

#define PROF_HELP "help-ob1x-monitoring-prof.txt"
#define PROF_ENABLE_ENV "OMPI_MCA_pml_monitoring_enable"
#define PROF_PREFIX_ENV "OB1X_MONITORING_PROF_PREFIX"
#define PROF_PREFIX_DEFAULT "monitoring"

enum prof_var {
    PML_COUNT,
    PML_SIZE,
    OSC_SENT_COUNT,
    OSC_SENT_SIZE,
    OSC_RECV_COUNT,
    OSC_RECV_SIZE,
    COLL_COUNT,
    COLL_SIZE,
    PROF_NVARS
};

static const char *const prof_var_name[PROF_NVARS] = {
    "pml_monitoring_messages_count",      "pml_monitoring_messages_size",
    "osc_monitoring_messages_sent_count", "osc_monitoring_messages_sent_size",
    "osc_monitoring_messages_recv_count", "osc_monitoring_messages_recv_size",
    "coll_monitoring_messages_count",     "coll_monitoring_messages_size",
};

static struct {
    bool active; /* an MPI_T session is open: MPI_Finalize reads it */
    int rank;
    int size;
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle[PROF_NVARS];
    unsigned usable; /* bit v: handle[v] bound to MPI_COMM_WORLD and started */
    char why[PROF_NVARS][96];
} prof;

/*
 * Monitoring must be on when MPI_Init (or an early MPI_T_init_thread) reads
 * pml_monitoring_enable, so before main. 2 keeps the messages the library
 * sends with internal tags out of the pml pvars, as stock does at 2: the
 * pml matrices are the application's point-to-point traffic. A value the
 * user gave (mpirun --mca exports it in this variable) is left alone.
 */
__attribute__((constructor)) static void prof_enable_monitoring(void)
{
    (void) setenv(PROF_ENABLE_ENV, "2", 0);
}

static void prof_help_dirs(void)
{
    /* The build tree's copy first (tests, uninstalled use), then the
     * installed one. */
    if (0 == access(OB1X_PROF_SRCDIR "/" PROF_HELP, R_OK)) {
        (void) opal_show_help_add_dir(OB1X_PROF_SRCDIR);
    }
    (void) opal_show_help_add_dir(OB1X_PROF_HELPDIR);
}

/*
 * A message from the help file, written to stderr here and now: only rank
 * 0 speaks, so it appears once. (Not through opal_show_help's relay to
 * mpirun, which drops messages sent from within MPI_Init's wrapper.)
 */
static void prof_help(const char *topic, ...)
{
    va_list ap;
    char *text;

    va_start(ap, topic);
    text = opal_show_help_vstring(PROF_HELP, topic, true, ap);
    va_end(ap);
    if (NULL != text) {
        fputs(text, stderr);
        fflush(stderr);
        free(text);
    }
}

static void prof_var_unusable(enum prof_var v, const char *what, int rc)
{
    snprintf(prof.why[v], sizeof(prof.why[v]), "%s (MPI_T error %d)", what, rc);
}

/* Bind pvar v to MPI_COMM_WORLD and start it; prof.why[v] says why not. */
static void prof_var_start(enum prof_var v)
{
    MPI_Comm world = MPI_COMM_WORLD;
    int idx, count, rc;

    rc = MPI_T_pvar_get_index(prof_var_name[v], MPI_T_PVAR_CLASS_SIZE, &idx);
    if (MPI_SUCCESS != rc) {
        prof_var_unusable(v, "not found", rc);
        return;
    }
    rc = MPI_T_pvar_handle_alloc(prof.session, idx, &world, &prof.handle[v], &count);
    if (MPI_SUCCESS != rc) {
        prof_var_unusable(v, "cannot be bound to MPI_COMM_WORLD", rc);
        return;
    }
    if (count != prof.size) {
        snprintf(prof.why[v], sizeof(prof.why[v]), "has %d values for %d processes", count,
                 prof.size);
        (void) MPI_T_pvar_handle_free(prof.session, &prof.handle[v]);
        return;
    }
    rc = MPI_T_pvar_start(prof.session, prof.handle[v]);
    if (MPI_SUCCESS != rc && MPI_T_ERR_PVAR_NO_STARTSTOP != rc) {
        prof_var_unusable(v, "cannot be started", rc);
        (void) MPI_T_pvar_handle_free(prof.session, &prof.handle[v]);
        return;
    }
    prof.usable |= 1u << v;
}

/* Rank 0 says, once, which pvars cannot be used. */
static void prof_report_unusable(void)
{
    char list[PROF_NVARS * 160] = "";
    int missing = 0;

    if (0 != prof.rank || (1u << PROF_NVARS) - 1 == prof.usable) {
        return;
    }
    if (0 == prof.usable) {
        prof_help("no pvars", prof_var_name[0], prof.why[0]);
        return;
    }
    for (int v = 0; v < PROF_NVARS; v++) {
        if (!(prof.usable & (1u << v))) {
            size_t len = strlen(list);
            snprintf(list + len, sizeof(list) - len, "  %s: %s\n", prof_var_name[v], prof.why[v]);
            missing++;
        }
    }
    prof_help("some pvars", missing, list);
}

static void prof_start(int thread_level)
{
    int provided, rc;

    PMPI_Comm_rank(MPI_COMM_WORLD, &prof.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &prof.size);
    prof_help_dirs();
    rc = MPI_T_init_thread(thread_level, &provided);
    if (MPI_SUCCESS != rc) {
        if (0 == prof.rank) {
            prof_help("mpit failed", "MPI_T_init_thread", rc);
        }
        return;
    }
    rc = MPI_T_pvar_session_create(&prof.session);
    if (MPI_SUCCESS != rc) {
        if (0 == prof.rank) {
            prof_help("mpit failed", "MPI_T_pvar_session_create", rc);
        }
        (void) MPI_T_finalize();
        return;
    }
    for (int v = 0; v < PROF_NVARS; v++) {
        prof_var_start((enum prof_var) v);
    }
    prof_report_unusable();
    prof.active = true;
}

int ob1x_prof_init(int *argc, char ***argv, int required, int *provided)
{
    int rc, level = MPI_THREAD_SINGLE;

    if (required < 0) {
        rc = PMPI_Init(argc, argv);
    } else {
        rc = PMPI_Init_thread(argc, argv, required, provided);
        level = *provided;
    }
    if (MPI_SUCCESS == rc) {
        prof_start(level);
    }
    return rc;
}

int MPI_Init(int *argc, char ***argv)
{
    return ob1x_prof_init(argc, argv, -1, NULL);
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    return ob1x_prof_init(argc, argv, required, provided);
}

/* Stop and read every usable pvar into vals[v * size ...], close MPI_T. */
static void prof_stop_read(uint64_t *vals)
{
    for (int v = 0; v < PROF_NVARS; v++) {
        if (!(prof.usable & (1u << v))) {
            continue;
        }
        (void) MPI_T_pvar_stop(prof.session, prof.handle[v]);
        /* The pvars are MPI_UNSIGNED_LONG_LONG. */
        if (MPI_SUCCESS != MPI_T_pvar_read(prof.session, prof.handle[v], vals + v * prof.size)) {
            memset(vals + v * prof.size, 0, prof.size * sizeof(*vals));
        }
        (void) MPI_T_pvar_handle_free(prof.session, &prof.handle[v]);
    }
    (void) MPI_T_pvar_session_free(&prof.session);
    (void) MPI_T_finalize();
}

/* What rank i recorded towards rank j in pvar v, in the gathered block
 * (rank i's PROF_NVARS vectors, one after the other). */
static uint64_t prof_raw(const uint64_t *all, int v, int i, int j)
{
    return all[((size_t) i * PROF_NVARS + v) * prof.size + j];
}

static void prof_write_mat(const char *prefix, const char *group, const char *what,
                           const uint64_t *mat)
{
    size_t len = strlen(prefix) + strlen(group) + strlen(what) + 8;
    char *name = malloc(len);
    FILE *f;

    if (NULL == name) {
        return;
    }
    snprintf(name, len, "%s_%s_%s.mat", prefix, group, what);
    f = fopen(name, "w");
    if (NULL == f) {
        prof_help("write failed", name, strerror(errno));
        free(name);
        return;
    }
    printf("writing %dx%d matrix to %s\n", prof.size, prof.size, name);
    for (int i = 0; i < prof.size; i++) {
        for (int j = 0; j < prof.size; j++) {
            fprintf(f, "%llu ", (unsigned long long) mat[(size_t) i * prof.size + j]);
        }
        fputc('\n', f);
    }
    if (0 != fclose(f)) {
        prof_help("write failed", name, strerror(errno));
    }
    free(name);
}

/*
 * One group's three matrices, symmetric as stock writes them: entry [i][j]
 * is half of what i and j exchanged both ways (so a rank's traffic to
 * itself is on the diagonal once), summed over the group's count pvars
 * (msg) and size pvars (size); avg is size / msg from the unhalved sums, 0
 * where nothing was exchanged.
 */
static void prof_write_group(const char *prefix, const char *group, const uint64_t *all,
                             const int *vars, int nvars, uint64_t *work)
{
    size_t cells = (size_t) prof.size * prof.size;
    uint64_t *msg = work, *bytes = work + cells, *avg = work + 2 * cells;

    for (int i = 0; i < prof.size; i++) {
        for (int j = 0; j < prof.size; j++) {
            uint64_t c = 0, b = 0;
            for (int k = 0; k < nvars; k++) {
                /* vars[k] is a count pvar, the next one its size pvar. */
                c += prof_raw(all, vars[k], i, j) + prof_raw(all, vars[k], j, i);
                b += prof_raw(all, vars[k] + 1, i, j) + prof_raw(all, vars[k] + 1, j, i);
            }
            size_t cell = (size_t) i * prof.size + j;
            msg[cell] = c / 2;
            bytes[cell] = b / 2;
            avg[cell] = 0 == c ? 0 : b / c;
        }
    }
    prof_write_mat(prefix, group, "msg", msg);
    prof_write_mat(prefix, group, "size", bytes);
    prof_write_mat(prefix, group, "avg", avg);
}

/* Rank 0: the twelve files, in stock's order (pml, coll, osc, all). */
static void prof_write_all(const uint64_t *all)
{
    static const int pml[] = {PML_COUNT}, coll[] = {COLL_COUNT},
                     osc[] = {OSC_SENT_COUNT, OSC_RECV_COUNT},
                     every[] = {PML_COUNT, COLL_COUNT, OSC_SENT_COUNT, OSC_RECV_COUNT};
    const char *prefix = getenv(PROF_PREFIX_ENV);
    uint64_t *work = malloc(3 * (size_t) prof.size * prof.size * sizeof(*work));

    if (NULL == work) {
        return;
    }
    if (NULL == prefix || '\0' == prefix[0]) {
        prefix = PROF_PREFIX_DEFAULT;
    }
    prof_write_group(prefix, "pml", all, pml, 1, work);
    prof_write_group(prefix, "coll", all, coll, 1, work);
    prof_write_group(prefix, "osc", all, osc, 2, work);
    prof_write_group(prefix, "all", all, every, 4, work);
    fflush(stdout);
    free(work);
}

/* Collective over MPI_COMM_WORLD: every process gets here from
 * MPI_Finalize with the same prof.active (MPI_T behaves alike on all). */
static void prof_finish(void)
{
    size_t per_rank = (size_t) PROF_NVARS * prof.size;
    uint64_t *vals = calloc(per_rank, sizeof(*vals)), *all = NULL;
    unsigned usable = prof.usable, everywhere = 0;

    if (NULL == vals) {
        abort(); /* the collectives below need every process */
    }
    prof_stop_read(vals);
    /* Only the pvars every process could use: the others read zero. */
    PMPI_Allreduce(&usable, &everywhere, 1, MPI_UNSIGNED, MPI_BAND, MPI_COMM_WORLD);
    if (0 == everywhere) {
        free(vals);
        return; /* said at MPI_Init */
    }
    for (int v = 0; v < PROF_NVARS; v++) {
        if (!(everywhere & (1u << v))) {
            memset(vals + v * prof.size, 0, prof.size * sizeof(*vals));
        }
    }
    if (0 == prof.rank) {
        all = malloc(per_rank * prof.size * sizeof(*all));
        if (NULL == all) {
            abort();
        }
    }
    PMPI_Gather(vals, (int) per_rank, MPI_UINT64_T, all, (int) per_rank, MPI_UINT64_T, 0,
                MPI_COMM_WORLD);
    if (NULL != all) {
        prof_write_all(all);
    }
    free(all);
    free(vals);
}

int ob1x_prof_finalize(void)
{
    if (prof.active) {
        prof.active = false;
        prof_finish();
    }
    return PMPI_Finalize();
}

int MPI_Finalize(void)
{
    return ob1x_prof_finalize();
}

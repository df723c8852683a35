/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_util.h - small helpers for the btl/smcuda test programs (header only):
 * failure reporting, data patterns, and reading btl_smcuda_* counters
 * through MPI_T.
 */
#ifndef OB1X_TEST_BTL_UTIL_H
#define OB1X_TEST_BTL_UTIL_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bu_rank, bu_size;

static void bu_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void bu_fail(const char *fmt, ...)
{
    va_list ap;
    char msg[512];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    printf("FAIL: rank %d: %s\n", bu_rank, msg);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

#define BU_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond))                                                                               \
            bu_fail(__VA_ARGS__);                                                                  \
    } while (0)

static inline unsigned char bu_byte(size_t i, size_t size, int seed)
{
    return (unsigned char) ((i * 131u) ^ (i >> 8) ^ (size * 7u) ^ (unsigned) seed);
}

static inline void bu_fill(unsigned char *buf, size_t size, int seed)
{
    for (size_t i = 0; i < size; ++i)
        buf[i] = bu_byte(i, size, seed);
}

/* Returns the index of the first wrong byte, or -1. */
static inline long bu_verify(const unsigned char *buf, size_t size, int seed)
{
    for (size_t i = 0; i < size; ++i)
        if (buf[i] != bu_byte(i, size, seed))
            return (long) i;
    return -1;
}

/* ---- btl_smcuda_* counters ---- */

enum { BU_FBOX, BU_FIFO, BU_SENDI, BU_PUT, BU_GET, BU_NCOUNT };
static const char *bu_counter_names[BU_NCOUNT] = {"fbox", "fifo", "sendi", "put", "get"};

typedef struct {
    unsigned long long messages[BU_NCOUNT];
    unsigned long long bytes[BU_NCOUNT];
    unsigned long long stalls;
    unsigned long long helped;  /* bytes pushed as the helper of a peer's shared get */
    unsigned long long atomics; /* atomic operations started (btl_atomic_op/fop/cswap) */
    unsigned long long bounced; /* single-copy bytes moved through a bounce buffer */
    int found;
} bu_counters_t;

static MPI_T_pvar_session bu_session;
static MPI_T_pvar_handle bu_handles[2 * BU_NCOUNT + 4];
static int bu_have[2 * BU_NCOUNT + 4];

static void bu_pvar_open(int slot, const char *name)
{
    int idx, count;
    bu_have[slot] =
        MPI_SUCCESS == MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx) &&
        MPI_SUCCESS == MPI_T_pvar_handle_alloc(bu_session, idx, NULL, &bu_handles[slot], &count);
}

/* Opens handles on the counters; values read later count from here. */
static void bu_counters_start(void)
{
    char name[128];
    if (MPI_SUCCESS != MPI_T_pvar_session_create(&bu_session))
        return;
    for (int i = 0; i < BU_NCOUNT; ++i) {
        snprintf(name, sizeof(name), "btl_smcuda_%s_messages", bu_counter_names[i]);
        bu_pvar_open(2 * i, name);
        snprintf(name, sizeof(name), "btl_smcuda_%s_bytes", bu_counter_names[i]);
        bu_pvar_open(2 * i + 1, name);
    }
    bu_pvar_open(2 * BU_NCOUNT, "btl_smcuda_flow_control_stalls");
    bu_pvar_open(2 * BU_NCOUNT + 1, "btl_smcuda_get_helped_bytes");
    bu_pvar_open(2 * BU_NCOUNT + 2, "btl_smcuda_atomic_ops");
    bu_pvar_open(2 * BU_NCOUNT + 3, "btl_smcuda_cma_bounced_bytes");
}

static int bu_pvar_get(int slot, unsigned long long *value)
{
    *value = 0;
    if (!bu_have[slot])
        return 0;
    return MPI_SUCCESS == MPI_T_pvar_read(bu_session, bu_handles[slot], value);
}

/* Reads this process's counters. */
static void bu_counters(bu_counters_t *c)
{
    memset(c, 0, sizeof(*c));
    c->found = 1;
    for (int i = 0; i < BU_NCOUNT; ++i) {
        c->found &= bu_pvar_get(2 * i, &c->messages[i]);
        c->found &= bu_pvar_get(2 * i + 1, &c->bytes[i]);
    }
    c->found &= bu_pvar_get(2 * BU_NCOUNT, &c->stalls);
    c->found &= bu_pvar_get(2 * BU_NCOUNT + 1, &c->helped);
    c->found &= bu_pvar_get(2 * BU_NCOUNT + 2, &c->atomics);
    c->found &= bu_pvar_get(2 * BU_NCOUNT + 3, &c->bounced);
}

/* Sums the counters over all ranks (collective). */
static void bu_counters_total(bu_counters_t *c)
{
    bu_counters_t mine;
    bu_counters(&mine);
    MPI_Allreduce(mine.messages, c->messages, BU_NCOUNT, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                  MPI_COMM_WORLD);
    MPI_Allreduce(mine.bytes, c->bytes, BU_NCOUNT, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&mine.stalls, &c->stalls, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&mine.helped, &c->helped, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&mine.atomics, &c->atomics, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&mine.bounced, &c->bounced, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&mine.found, &c->found, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
}

/* A btl_smcuda_* counter other than the above, by name, as counted since
 * this function was first called with that name (call it once early);
 * 0 when it does not exist. */
static unsigned long long bu_named_counter(const char *name)
{
    static const char *names[8];
    static MPI_T_pvar_handle handles[8];
    static int ok[8], used;
    unsigned long long v = 0;
    int i, idx, count;

    for (i = 0; i < used && 0 != strcmp(names[i], name); ++i)
        ;
    if (i == used) {
        if (used == 8)
            return 0;
        names[i] = name;
        ok[i] = MPI_SUCCESS == MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx) &&
                MPI_SUCCESS == MPI_T_pvar_handle_alloc(bu_session, idx, NULL, &handles[i], &count);
        ++used;
    }
    if (ok[i])
        MPI_T_pvar_read(bu_session, handles[i], &v);
    return v;
}

static void bu_counters_print(const char *prog, const bu_counters_t *c)
{
    if (0 != bu_rank)
        return;
    printf("%s: counters:", prog);
    for (int i = 0; i < BU_NCOUNT; ++i)
        printf(" %s=%llu/%lluB", bu_counter_names[i], c->messages[i], c->bytes[i]);
    printf(" stalls=%llu helped=%lluB atomics=%llu bounced=%lluB\n", c->stalls, c->helped,
           c->atomics, c->bounced);
}

/* Value of "name=value" in argv, or NULL. */
static const char *bu_arg(int argc, char **argv, const char *name)
{
    size_t n = strlen(name);
    for (int i = 1; i < argc; ++i)
        if (0 == strncmp(argv[i], name, n) && '=' == argv[i][n])
            return argv[i] + n + 1;
    return NULL;
}

static void bu_init(int *argc, char ***argv)
{
    int provided;
    MPI_Init(argc, argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &bu_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &bu_size);
    bu_counters_start();
}

static int bu_finalize(const char *prog)
{
    for (int i = 0; i < 2 * BU_NCOUNT + 4; ++i)
        if (bu_have[i])
            MPI_T_pvar_handle_free(bu_session, &bu_handles[i]);
    MPI_T_pvar_session_free(&bu_session);
    MPI_T_finalize();
    MPI_Finalize();
    if (0 == bu_rank)
        printf("PASS: %s\n", prog);
    return 0;
}

#endif

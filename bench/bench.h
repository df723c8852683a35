/*
 * ob1x benchmarks: shared declarations.
 *
 * One program (ob1x-bench) runs any subset of the tests below over a list of message sizes and
 * prints one section per test:
 *
 *   # test=<name> unit=<unit> better=<lower|higher> np=<n> pairs=<p> window=<w> ...
 *   <size> <median> <min> <max> <trials>
 *
 * With -M (monitoring toggled, bench_mon.c) each test prints two sections: <name> for the
 * trials run with recording stopped, then <name>+mon for those run with it started.
 *
 * Every value is the metric of one timed trial; median/min/max are taken over the trials of
 * that size.  Buffers are filled before and validated after each trial, never inside the timed
 * loop.
 */
#ifndef OB1X_BENCH_H
#define OB1X_BENCH_H

#include <stddef.h>
#include <mpi.h>

/* Default bound on the bytes one side dedicates to a window of in-flight messages: the window
 * shrinks for large messages so that window * size stays under it (option -B). */
#define BENCH_WINDOW_BYTES (64u << 20)

typedef struct bench_opts {
    size_t *sizes; /* sorted, unique message sizes in bytes */
    int nsizes;
    int trials;           /* recorded trials per size */
    int window;           /* in-flight messages for bandwidth/rate tests */
    int min_iters;        /* iterations per trial, lower bound */
    int max_msgs;         /* messages per trial, upper bound (sets iterations for small sizes) */
    size_t trial_bytes;   /* target payload bytes moved per trial (sets iterations) */
    size_t window_bytes;  /* window * size is kept under this (window >= 1) */
    int warmup_pct;       /* warm-up iterations as a percentage of the trial's iterations */
    double trial_seconds; /* > 0: fewer iterations when the warm-up shows a trial would last
                           * longer than this (keeps slow transports within a time budget) */
    int cg_iters;         /* callgrind tests: iterations inside the collected region */
    int mon_toggle;       /* -M: trials alternate monitoring stopped/started (bench_mon.c) */
} bench_opts_t;

/* Everything a test needs about the current size and the communication pattern. */
typedef struct bench_ctx {
    const bench_opts_t *opts;
    MPI_Comm comm;
    int rank;
    int nprocs;
    int pairs;           /* pair k is (k, k + pairs); pair 0 reports */
    int peer;            /* partner in my pair, or -1 if this rank is idle */
    int initiator;       /* 1 for the first rank of a pair */
    size_t size;         /* current message size */
    int window;          /* current window (reduced for large sizes) */
    unsigned char *sbuf; /* window slots of `size` bytes each, stride `stride` */
    unsigned char *rbuf;
    size_t stride;
    size_t buf_bytes;  /* bytes allocated for each of sbuf / rbuf */
    MPI_Request *reqs; /* 2 * opts->window requests */
    MPI_Win win;       /* RMA tests: window over `wbuf` */
    unsigned char *wbuf;
} bench_ctx_t;

/* One test: how to move data for one size and what the elapsed time means. */
typedef struct bench_test {
    const char *name;
    const char *unit;
    int lower_is_better;
    int uses_window;                /* window > 1 messages per iteration */
    int all_pairs;                  /* every pair works (message rate) vs pair 0 only */
    double bytes_per_iter;          /* payload factor per iteration, times size (x window) */
    int (*begin)(bench_ctx_t *ctx); /* once per test: windows, etc. (may be NULL) */
    void (*end)(bench_ctx_t *ctx);
    void (*prepare)(bench_ctx_t *ctx, unsigned seed);
    void (*run)(bench_ctx_t *ctx, int iters);
    int (*check)(bench_ctx_t *ctx, unsigned seed, int iters); /* 0 if the data is right */
    double (*metric)(const bench_ctx_t *ctx, int iters, double seconds);
} bench_test_t;

/* bench_common.c */
unsigned char bench_pattern(unsigned seed, int slot, size_t i);
void bench_fill(unsigned char *buf, size_t n, unsigned seed, int slot);
long bench_verify(const unsigned char *buf, size_t n, unsigned seed, int slot);
int bench_parse_sizes(const char *spec, size_t **sizes, int *n);
double bench_median(double *v, int n);
int bench_iterations(const bench_opts_t *o, const bench_test_t *t, size_t size, int window);
void bench_fail(const bench_ctx_t *ctx, const char *fmt, ...);
int bench_run_test(const bench_test_t *t, bench_ctx_t *ctx);

/* bench_mon.c: recording of the monitoring components started/stopped through MPI_T */
int bench_mon_open(MPI_Comm comm);
int bench_mon_record(int on, int busy);
void bench_mon_close(void);

/* bench_pt2pt.c, bench_rma.c, bench_cg.c */
extern const bench_test_t bench_pt2pt_tests[];
extern const int bench_pt2pt_ntests;
extern const bench_test_t bench_rma_tests[];
extern const int bench_rma_ntests;
int bench_cg_run(const char *name, bench_ctx_t *ctx);

#endif

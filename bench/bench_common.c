/*
 * ob1x benchmarks: data patterns, size lists, statistics and the per-size trial driver.
 */
#include "bench.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATTERN_PERIOD 256 /* bench_pattern() repeats every 256 bytes (131 is odd) */
#define SLOT_ALIGN 64

unsigned char bench_pattern(unsigned seed, int slot, size_t i)
{
    return (unsigned char) (i * 131u + (unsigned) slot * 29u + seed * 7u + 1u);
}

static void pattern_block(unsigned char *blk, unsigned seed, int slot)
{
    for (size_t i = 0; i < PATTERN_PERIOD; i++) {
        blk[i] = bench_pattern(seed, slot, i);
    }
}

void bench_fill(unsigned char *buf, size_t n, unsigned seed, int slot)
{
    unsigned char blk[PATTERN_PERIOD];
    pattern_block(blk, seed, slot);
    for (size_t off = 0; off < n; off += PATTERN_PERIOD) {
        size_t len = n - off < PATTERN_PERIOD ? n - off : PATTERN_PERIOD;
        memcpy(buf + off, blk, len);
    }
}

/* Returns the index of the first wrong byte, or -1 if all n bytes match. */
long bench_verify(const unsigned char *buf, size_t n, unsigned seed, int slot)
{
    unsigned char blk[PATTERN_PERIOD];
    pattern_block(blk, seed, slot);
    for (size_t off = 0; off < n; off += PATTERN_PERIOD) {
        size_t len = n - off < PATTERN_PERIOD ? n - off : PATTERN_PERIOD;
        if (0 != memcmp(buf + off, blk, len)) {
            for (size_t i = 0; i < len; i++) {
                if (buf[off + i] != blk[i]) {
                    return (long) (off + i);
                }
            }
        }
    }
    return -1;
}

/* "4096", "4K", "16M", "1G" (binary multiples). Returns 0 on success. */
static int parse_one_size(const char *s, const char **end, size_t *out)
{
    char *e;
    unsigned long long v = strtoull(s, &e, 10);
    if (e == s) {
        return -1;
    }
    switch (toupper((unsigned char) *e)) {
        case 'K':
            v <<= 10;
            e++;
            break;
        case 'M':
            v <<= 20;
            e++;
            break;
        case 'G':
            v <<= 30;
            e++;
            break;
        default:
            break;
    }
    *out = (size_t) v;
    *end = e;
    return 0;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *) a, y = *(const size_t *) b;
    return x < y ? -1 : x > y;
}

static int push_size(size_t **v, int *n, int *cap, size_t s)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        size_t *nv = realloc(*v, (size_t) *cap * sizeof(**v));
        if (NULL == nv) {
            return -1;
        }
        *v = nv;
    }
    (*v)[(*n)++] = s;
    return 0;
}

/*
 * Size list: comma-separated items, each either a size ("4095", "32K") or a range "A..B"
 * meaning every power of two in [A, B] (plus 0 when A is 0).  Result is sorted and unique.
 */
int bench_parse_sizes(const char *spec, size_t **sizes, int *n)
{
    size_t *v = NULL;
    int cnt = 0, cap = 0;
    const char *p = spec;
    while (*p) {
        size_t a, b;
        const char *e;
        if (parse_one_size(p, &e, &a)) {
            goto fail;
        }
        if (0 == strncmp(e, "..", 2)) {
            if (parse_one_size(e + 2, &e, &b)) {
                goto fail;
            }
            if (0 == a && push_size(&v, &cnt, &cap, 0)) {
                goto fail;
            }
            for (size_t s = 1; s <= b; s <<= 1) {
                if (s >= a && push_size(&v, &cnt, &cap, s)) {
                    goto fail;
                }
            }
        } else if (push_size(&v, &cnt, &cap, a)) {
            goto fail;
        }
        if (*e == ',') {
            e++;
        } else if (*e != '\0') {
            goto fail;
        }
        p = e;
    }
    if (0 == cnt) {
        goto fail;
    }
    qsort(v, (size_t) cnt, sizeof(*v), cmp_size);
    int u = 1;
    for (int i = 1; i < cnt; i++) {
        if (v[i] != v[u - 1]) {
            v[u++] = v[i];
        }
    }
    *sizes = v;
    *n = u;
    return 0;
fail:
    free(v);
    return -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* Sorts v in place. */
double bench_median(double *v, int n)
{
    qsort(v, (size_t) n, sizeof(*v), cmp_double);
    return (n & 1) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Iterations per trial: enough to move opts->trial_bytes, within [min_iters, max_msgs/window]. */
int bench_iterations(const bench_opts_t *o, const bench_test_t *t, size_t size, int window)
{
    double per_iter = t->bytes_per_iter * (double) size * window;
    double want = per_iter > 0 ? (double) o->trial_bytes / per_iter : 1e18;
    double cap = (double) o->max_msgs / window;
    if (want > cap) {
        want = cap;
    }
    if (want < o->min_iters) {
        want = o->min_iters;
    }
    return (int) want;
}

void bench_fail(const bench_ctx_t *ctx, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAIL: rank %d: ", ctx->rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    MPI_Abort(ctx->comm, 1);
}

static int window_for(const bench_test_t *t, const bench_opts_t *o, size_t size)
{
    if (!t->uses_window) {
        return 1;
    }
    size_t fit = o->window_bytes / (size ? size : 1);
    return fit < 1 ? 1 : (fit < (size_t) o->window ? (int) fit : o->window);
}

static size_t stride_for(size_t size)
{
    return (size + SLOT_ALIGN - 1) / SLOT_ALIGN * SLOT_ALIGN + SLOT_ALIGN;
}

static void set_peer(bench_ctx_t *ctx, const bench_test_t *t)
{
    int p = ctx->pairs;
    int working = t->all_pairs ? 2 * p : 0;
    ctx->peer = -1;
    ctx->initiator = 0;
    if (t->all_pairs ? ctx->rank < working : (ctx->rank == 0 || ctx->rank == p)) {
        ctx->initiator = ctx->rank < p;
        ctx->peer = ctx->initiator ? ctx->rank + p : ctx->rank - p;
    }
}

/* Allocates sbuf/rbuf large enough for every size of this test. */
static int alloc_buffers(bench_ctx_t *ctx, const bench_test_t *t)
{
    const bench_opts_t *o = ctx->opts;
    size_t need = 0;
    for (int i = 0; i < o->nsizes; i++) {
        size_t b = stride_for(o->sizes[i]) * (size_t) window_for(t, o, o->sizes[i]);
        need = b > need ? b : need;
    }
    ctx->buf_bytes = need;
    if (posix_memalign((void **) &ctx->sbuf, 4096, need) ||
        posix_memalign((void **) &ctx->rbuf, 4096, need)) {
        return -1;
    }
    /* touch every page now so first-use faults never land in a timed loop */
    memset(ctx->sbuf, 0, need);
    memset(ctx->rbuf, 0, need);
    return 0;
}

/* One timed trial.  Returns the reporting rank's seconds (max over pairs for all-pair tests). */
static double one_trial(const bench_test_t *t, bench_ctx_t *ctx, unsigned seed, int iters)
{
    double t0, sec, maxsec = 0;
    int bad, anybad;

    t->prepare(ctx, seed);
    MPI_Barrier(ctx->comm);
    t0 = MPI_Wtime();
    t->run(ctx, iters);
    sec = MPI_Wtime() - t0;
    if (t->all_pairs) {
        double mine = ctx->initiator ? sec : 0.0;
        MPI_Reduce(&mine, &maxsec, 1, MPI_DOUBLE, MPI_MAX, 0, ctx->comm);
        sec = maxsec;
    }
    bad = t->check(ctx, seed, iters);
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, ctx->comm);
    if (anybad && 0 == ctx->rank) {
        bench_fail(ctx, "test %s size %zu: received data is wrong", t->name, ctx->size);
    }
    return sec;
}

static void print_header(const bench_test_t *t, const bench_ctx_t *ctx, const char *suffix)
{
    const bench_opts_t *o = ctx->opts;
    printf("# test=%s%s unit=%s better=%s np=%d pairs=%d window=%d trials=%d "
           "window_bytes=%zu trial_bytes=%zu max_msgs=%d min_iters=%d trial_seconds=%g\n",
           t->name, suffix, t->unit, t->lower_is_better ? "lower" : "higher", ctx->nprocs,
           t->all_pairs ? ctx->pairs : 1, t->uses_window ? o->window : 1, o->trials,
           o->window_bytes, o->trial_bytes, o->max_msgs, o->min_iters, o->trial_seconds);
    printf("# size median min max trials\n");
    fflush(stdout);
}

/* Iterations for the recorded trials: the count-based figure, lowered when the warm-up says a
 * trial would take longer than opts->trial_seconds.  Rank 0 decides so all ranks agree. */
static int timed_iterations(const bench_ctx_t *ctx, int iters, int warm, double warm_sec)
{
    const bench_opts_t *o = ctx->opts;
    if (o->trial_seconds > 0 && warm_sec > 0) {
        double fit = o->trial_seconds / (warm_sec / warm);
        if (fit < iters) {
            iters = fit < o->min_iters ? o->min_iters : (int) fit;
        }
    }
    MPI_Bcast(&iters, 1, MPI_INT, 0, ctx->comm);
    return iters;
}

/* One size's row: median, first and last of the sorted trials. */
static void size_row(char *row, size_t len, size_t size, double *vals, int n)
{
    double med = bench_median(vals, n);
    snprintf(row, len, "%zu %.6g %.6g %.6g %d\n", size, med, vals[0], vals[n - 1], n);
}

/* Point-to-point tests send PML messages (which -M checks are counted while recording);
 * one-sided ones may not. */
static int sends_pt2pt(const bench_test_t *t)
{
    return t >= bench_pt2pt_tests && t < bench_pt2pt_tests + bench_pt2pt_ntests;
}

/* With -M, trial k runs with recording started when k % 4 is 1 or 2 (off, on, on, off, ...:
 * a drift over the trials weighs the same on both states). */
static int trial_records(int k)
{
    return ((k + 1) >> 1) & 1;
}

/* The trials of one size: rows (the row of the trials with recording started too, with -M)
 * for rank 0 to print. */
static void run_size(const bench_test_t *t, bench_ctx_t *ctx, double *vals, char *row,
                     char *row_mon, size_t len)
{
    const bench_opts_t *o = ctx->opts;
    int iters = bench_iterations(o, t, ctx->size, ctx->window);
    int warm = iters * o->warmup_pct / 100;
    int n = o->mon_toggle ? 2 * o->trials : o->trials, noff = 0, non = 0;
    double warm_sec, *on = vals + o->trials;

    warm = warm > 0 ? warm : 1;
    ctx->stride = stride_for(ctx->size);
    if (o->mon_toggle && bench_mon_record(1, 0)) {
        MPI_Abort(ctx->comm, 1);
    }
    warm_sec = one_trial(t, ctx, 0, warm);
    iters = timed_iterations(ctx, iters, warm, warm_sec);
    for (int k = 0; k < n; k++) {
        int rec = o->mon_toggle && trial_records(k);
        double sec;

        if (o->mon_toggle && bench_mon_record(rec, ctx->peer >= 0 && sends_pt2pt(t))) {
            MPI_Abort(ctx->comm, 1);
        }
        sec = one_trial(t, ctx, (unsigned) k + 1, iters);
        if (rec) {
            on[non++] = t->metric(ctx, iters, sec);
        } else {
            vals[noff++] = t->metric(ctx, iters, sec);
        }
    }
    if (0 == ctx->rank) {
        size_row(row, len, ctx->size, vals, noff);
        if (o->mon_toggle) {
            size_row(row_mon, len, ctx->size, on, non);
        }
    }
}

int bench_run_test(const bench_test_t *t, bench_ctx_t *ctx)
{
    const bench_opts_t *o = ctx->opts;
    double *vals = calloc(2 * (size_t) o->trials, sizeof(*vals));
    char(*rows)[96] = calloc(2 * (size_t) o->nsizes, sizeof(*rows));
    int rc = -1;

    set_peer(ctx, t);
    if (NULL == vals || NULL == rows || alloc_buffers(ctx, t)) {
        goto out_free;
    }
    if (t->begin && t->begin(ctx)) {
        goto out_free;
    }
    if (0 == ctx->rank) {
        print_header(t, ctx, "");
    }
    for (int i = 0; i < o->nsizes; i++) {
        ctx->size = o->sizes[i];
        ctx->window = window_for(t, o, ctx->size);
        run_size(t, ctx, vals, rows[i], rows[o->nsizes + i], sizeof(rows[i]));
        if (0 == ctx->rank) {
            fputs(rows[i], stdout);
            fflush(stdout);
        }
    }
    if (o->mon_toggle && 0 == ctx->rank) {
        print_header(t, ctx, "+mon");
        for (int i = 0; i < o->nsizes; i++) {
            fputs(rows[o->nsizes + i], stdout);
        }
        fflush(stdout);
    }
    if (t->end) {
        t->end(ctx);
    }
    rc = 0;
out_free:
    free(ctx->sbuf);
    free(ctx->rbuf);
    ctx->sbuf = ctx->rbuf = NULL;
    free(vals);
    free(rows);
    return rc;
}

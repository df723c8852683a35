/*
 * ob1x-bench: point-to-point and one-sided micro-benchmarks for comparing PML/BTL stacks.
 * See docs/performance.md; bench/compare drives it.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_SIZES "0..16M"
#define DEFAULT_TESTS "latency,bw,bibw,rate,put_lat,get_lat,acc_lat,put_bw,get_bw,acc_bw"

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [-t tests] [-s sizes] [-r trials] [-w window] [-n min_iters]\n"
            "          [-m max_msgs] [-b trial_bytes] [-B window_bytes] [-p warmup_pct]\n"
            "          [-T trial_seconds] [-N cg_iters] [-M]\n"
            "  tests: comma list of latency latency_1buf bw bibw rate put_lat get_lat\n"
            "         acc_lat put_bw get_bw acc_bw cg_pingpong cg_poll\n"
            "         (default: all but latency_1buf and cg_*)\n"
            "  sizes: comma list of sizes (4095, 32K, 1M) and A..B ranges of powers of two\n"
            "         (default %s)\n"
            "  -M:    run with monitoring enabled (pml_monitoring_enable) and alternate each\n"
            "         size's trials between recording stopped and started through MPI_T;\n"
            "         prints <test> (stopped) and <test>+mon (started), each of -r trials\n",
            prog, DEFAULT_SIZES);
}

static size_t parse_bytes(const char *s)
{
    size_t *v = NULL;
    int n = 0;
    size_t r = 0;
    if (0 == bench_parse_sizes(s, &v, &n)) {
        r = v[n - 1];
    }
    free(v);
    return r;
}

static int parse_opts(int argc, char **argv, bench_opts_t *o, char **tests)
{
    const char *sizes = DEFAULT_SIZES;
    int c;
    *o = (bench_opts_t){.trials = 5,
                        .window = 64,
                        .min_iters = 3,
                        .max_msgs = 2000,
                        .trial_bytes = 8u << 20,
                        .window_bytes = BENCH_WINDOW_BYTES,
                        .warmup_pct = 20,
                        .cg_iters = 1000};
    *tests = DEFAULT_TESTS;
    while (-1 != (c = getopt(argc, argv, "t:s:r:w:n:m:b:B:p:T:N:Mh"))) {
        switch (c) {
            case 't':
                *tests = optarg;
                break;
            case 's':
                sizes = optarg;
                break;
            case 'r':
                o->trials = atoi(optarg);
                break;
            case 'w':
                o->window = atoi(optarg);
                break;
            case 'n':
                o->min_iters = atoi(optarg);
                break;
            case 'm':
                o->max_msgs = atoi(optarg);
                break;
            case 'b':
                o->trial_bytes = parse_bytes(optarg);
                break;
            case 'B':
                o->window_bytes = parse_bytes(optarg);
                break;
            case 'p':
                o->warmup_pct = atoi(optarg);
                break;
            case 'T':
                o->trial_seconds = atof(optarg);
                break;
            case 'N':
                o->cg_iters = atoi(optarg);
                break;
            case 'M':
                o->mon_toggle = 1;
                break;
            default:
                return -1;
        }
    }
    if (o->trials < 1 || o->window < 1 || o->min_iters < 1 || o->max_msgs < 1 ||
        o->trial_bytes < 1 || o->window_bytes < 1 || o->warmup_pct < 0 || o->cg_iters < 1) {
        return -1;
    }
    return bench_parse_sizes(sizes, &o->sizes, &o->nsizes);
}

static const bench_test_t *find_test(const char *name)
{
    for (int i = 0; i < bench_pt2pt_ntests; i++) {
        if (0 == strcmp(name, bench_pt2pt_tests[i].name)) {
            return &bench_pt2pt_tests[i];
        }
    }
    for (int i = 0; i < bench_rma_ntests; i++) {
        if (0 == strcmp(name, bench_rma_tests[i].name)) {
            return &bench_rma_tests[i];
        }
    }
    return NULL;
}

static int run_one(const char *name, bench_ctx_t *ctx)
{
    const bench_test_t *t;
    if (0 == strncmp(name, "cg_", 3)) {
        return bench_cg_run(name, ctx);
    }
    t = find_test(name);
    if (NULL == t) {
        if (0 == ctx->rank) {
            fprintf(stderr, "unknown test '%s'\n", name);
        }
        return -1;
    }
    return bench_run_test(t, ctx);
}

int main(int argc, char **argv)
{
    bench_opts_t opts;
    bench_ctx_t ctx = {.opts = &opts, .comm = MPI_COMM_WORLD};
    char *tests, *list, *save = NULL;
    int rc = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(ctx.comm, &ctx.rank);
    MPI_Comm_size(ctx.comm, &ctx.nprocs);
    if (parse_opts(argc, argv, &opts, &tests) || ctx.nprocs < 2) {
        if (0 == ctx.rank) {
            usage(argv[0]);
        }
        MPI_Finalize();
        return 2;
    }
    ctx.pairs = ctx.nprocs / 2;
    ctx.reqs = malloc(2 * (size_t) opts.window * sizeof(*ctx.reqs));
    list = strdup(tests);
    if (NULL == ctx.reqs || NULL == list || (opts.mon_toggle && bench_mon_open(ctx.comm))) {
        MPI_Abort(ctx.comm, 1);
    }
    for (char *t = strtok_r(list, ",", &save); t && 0 == rc; t = strtok_r(NULL, ",", &save)) {
        rc = run_one(t, &ctx);
    }
    if (opts.mon_toggle) {
        bench_mon_close();
    }
    free(list);
    free(ctx.reqs);
    free(opts.sizes);
    MPI_Finalize();
    return rc ? 1 : 0;
}

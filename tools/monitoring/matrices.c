/* Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE. */
/*
 * ob1x-monitoring matrices: the per-rank .prof files of a run (or of each
 * phase) to the .mat files Open MPI's profile2mat.pl writes from their
 * concatenation, byte for byte:
 *
 *   <out>_{size,msg,avg}_all.mat       every E, I, S, R and C line
 *   <out>_{size,msg,avg}_external.mat  E lines (application tags)
 *   <out>_{size,msg,avg}_internal.mat  I lines (negative tags)
 *   <out>_{size,msg,avg}_osc.mat       S and R lines (one-sided)
 *   <out>_{size,msg,avg}_coll.mat      C lines (collectives)
 *
 * The stock semantics, kept so that existing post-processing reads the same
 * numbers: entry [i][j] is (i->j + j->i) / 2 (the matrix is symmetric); a
 * category's matrix is sized by the highest rank among ITS lines; "all" is
 * written when any line matched, the four others only when the input has E
 * lines (and each when it has lines of its own); avg = size / msg, 0 when
 * msg is 0. Values print "%.0f" (ties to even).
 */
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mon_tool.h"

enum { CAT_ALL, CAT_EXTERNAL, CAT_INTERNAL, CAT_OSC, CAT_COLL, CAT_COUNT };
static const char *const cat_name[CAT_COUNT] = {"all", "external", "internal", "osc", "coll"};

/* Highest rank a matrix may have: a guard against a corrupt file asking for
 * terabytes. */
#define MON_MAX_RANK (1 << 20)

typedef struct prof_rec {
    unsigned cats; /* bit per category */
    int p1, p2;
    double bytes, msgs;
} prof_rec_t;

typedef struct prof_set {
    prof_rec_t *rec;
    size_t len, cap;
} prof_set_t;

typedef struct matrices_opts {
    const char *out;
    int phases, svg, png, quiet;
    mon_picture_opts_t pic;
} matrices_opts_t;

static unsigned cats_of(char type)
{
    switch (type) {
        case 'E':
            return 1u << CAT_ALL | 1u << CAT_EXTERNAL;
        case 'I':
            return 1u << CAT_ALL | 1u << CAT_INTERNAL;
        case 'S':
        case 'R':
            return 1u << CAT_ALL | 1u << CAT_OSC;
        case 'C':
            return 1u << CAT_ALL | 1u << CAT_COLL;
        default:
            return 0;
    }
}

/* Perl's \s (no vertical tab in older perls; it does not occur in these files). */
static int is_space(char c)
{
    return ' ' == c || '\t' == c || '\n' == c || '\r' == c || '\f' == c || '\v' == c;
}

/* Reads \d+ at *p into *v; 0 when there is no digit. */
static int digits(const char **p, double *v)
{
    const char *s = *p;
    *v = 0;
    while (isdigit((unsigned char) **p)) {
        *v = *v * 10 + (**p - '0');
        (*p)++;
    }
    return *p != s;
}

static int spaces(const char **p)
{
    const char *s = *p;
    while (is_space(**p)) {
        (*p)++;
    }
    return *p != s;
}

/* The line pattern of profile2mat.pl:
 * ^(TYPE)\s+(\d+)\s+(\d+)\s+(\d+)\D+(\d+)  (p1, p2, bytes, messages).
 * Other lines (comments, D/O2A/A2O/A2A) are not matrix entries. */
static int parse_line(const char *p, prof_rec_t *r)
{
    double p1, p2;
    r->cats = cats_of(p[0]);
    if (0 == r->cats) {
        return 0;
    }
    p++;
    if (!spaces(&p) || !digits(&p, &p1) || !spaces(&p) || !digits(&p, &p2) || !spaces(&p) ||
        !digits(&p, &r->bytes)) {
        return 0;
    }
    const char *s = p;
    while (*p && !isdigit((unsigned char) *p)) {
        p++;
    }
    if (p == s || !digits(&p, &r->msgs)) {
        return 0;
    }
    if (p1 > MON_MAX_RANK || p2 > MON_MAX_RANK) {
        return -1;
    }
    r->p1 = (int) p1;
    r->p2 = (int) p2;
    return 1;
}

static int set_add(prof_set_t *set, const prof_rec_t *r)
{
    if (set->len == set->cap) {
        set->cap = set->cap ? 2 * set->cap : 256;
        prof_rec_t *nr = realloc(set->rec, set->cap * sizeof(*nr));
        if (NULL == nr) {
            return mon_error("out of memory");
        }
        set->rec = nr;
    }
    set->rec[set->len++] = *r;
    return 0;
}

static int read_prof(const char *path, prof_set_t *set)
{
    FILE *f = fopen(path, "r");
    if (NULL == f) {
        return mon_error("cannot read %s: %s", path, strerror(errno));
    }
    char *line = NULL;
    size_t cap = 0;
    int rc = 0, lineno = 0;
    prof_rec_t r;
    while (0 == rc && getline(&line, &cap, f) > 0) {
        lineno++;
        int got = parse_line(line, &r);
        if (got < 0) {
            rc = mon_error("%s:%d: rank above %d", path, lineno, MON_MAX_RANK);
        } else if (got > 0) {
            rc = set_add(set, &r);
        }
    }
    free(line);
    fclose(f);
    return rc;
}

/* Size, message and average matrices of one category; n = 0 if no line. */
static int build_category(const prof_set_t *set, int cat, mon_matrix_t mat[3])
{
    int top = -1;
    for (size_t k = 0; k < set->len; k++) {
        const prof_rec_t *r = &set->rec[k];
        if (r->cats & 1u << cat) {
            top = r->p1 > top ? r->p1 : top;
            top = r->p2 > top ? r->p2 : top;
        }
    }
    if (top < 0) {
        mat[0].n = mat[1].n = mat[2].n = 0;
        return 0;
    }
    for (int k = 0; k < 3; k++) {
        if (0 != mon_matrix_alloc(&mat[k], top + 1)) {
            return mon_error("out of memory for a %d x %d matrix", top + 1, top + 1);
        }
    }
    for (size_t k = 0; k < set->len; k++) {
        const prof_rec_t *r = &set->rec[k];
        if (r->cats & 1u << cat) {
            *mon_at(&mat[0], r->p1, r->p2) += r->bytes;
            *mon_at(&mat[0], r->p2, r->p1) += r->bytes;
            *mon_at(&mat[1], r->p1, r->p2) += r->msgs;
            *mon_at(&mat[1], r->p2, r->p1) += r->msgs;
        }
    }
    size_t nn = (size_t) mat[0].n * mat[0].n;
    for (size_t k = 0; k < nn; k++) {
        mat[0].v[k] /= 2;
        mat[1].v[k] /= 2;
        mat[2].v[k] = mat[1].v[k] != 0 ? mat[0].v[k] / mat[1].v[k] : 0;
    }
    return 0;
}

static int write_pictures(const char *matpath, const mon_matrix_t *m, const matrices_opts_t *o,
                          const char *kind, const char *cat, const char *out)
{
    char path[4096], title[512];
    size_t base = strlen(matpath) - 4; /* drop ".mat" */
    mon_picture_opts_t pic = o->pic;
    const char *what = 0 == strcmp(kind, "size")  ? "bytes"
                       : 0 == strcmp(kind, "msg") ? "messages"
                                                  : "average message size";
    const char *slash = strrchr(out, '/');
    snprintf(title, sizeof(title), "%s: %s, %s", slash ? slash + 1 : out, what, cat);
    pic.title = o->pic.title ? o->pic.title : title;
    pic.units = mon_units_from_name(matpath);
    if (o->svg) {
        snprintf(path, sizeof(path), "%.*s.svg", (int) base, matpath);
        if (0 != mon_picture_svg(path, m, &pic)) {
            return 1;
        }
        if (!o->quiet) {
            puts(path);
        }
    }
    if (o->png) {
        snprintf(path, sizeof(path), "%.*s.png", (int) base, matpath);
        if (0 != mon_picture_png(path, m, &pic)) {
            return 1;
        }
        if (!o->quiet) {
            puts(path);
        }
    }
    return 0;
}

static int write_category(const prof_set_t *set, int cat, const char *out, const matrices_opts_t *o,
                          int *written)
{
    static const char *const kind[3] = {"size", "msg", "avg"};
    mon_matrix_t mat[3] = {{0}};
    int rc = build_category(set, cat, mat);
    *written = 0 == rc && mat[0].n > 0;
    for (int k = 0; k < 3 && 0 == rc && *written; k++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s_%s_%s.mat", out, kind[k], cat_name[cat]);
        rc = mon_matrix_write(path, &mat[k]);
        if (0 == rc && !o->quiet) {
            puts(path);
        }
        if (0 == rc) {
            rc = write_pictures(path, &mat[k], o, kind[k], cat_name[cat], out);
        }
    }
    for (int k = 0; k < 3; k++) {
        mon_matrix_free(&mat[k]);
    }
    return rc;
}

/* The stock rule: "all" always; the split only when there are E lines. */
static int write_all(const prof_set_t *set, const char *out, const matrices_opts_t *o)
{
    int written, rc = write_category(set, CAT_ALL, out, o, &written);
    if (0 != rc) {
        return rc;
    }
    if (!written) {
        return mon_error("%s: no E, I, S, R or C line in the input: no matrix written", out);
    }
    rc = write_category(set, CAT_EXTERNAL, out, o, &written);
    for (int cat = CAT_INTERNAL; 0 == rc && written && cat < CAT_COUNT; cat++) {
        int any;
        rc = write_category(set, cat, out, o, &any);
    }
    return rc;
}

/* Whether s is "<digits>.prof" (what follows the prefix in a rank's file). */
static int is_rank_suffix(const char *s)
{
    size_t d = strspn(s, "0123456789");
    return d > 0 && 0 == strcmp(s + d, ".prof");
}

static int glob_ranks(const char *prefix, glob_t *g)
{
    char pat[4096];
    snprintf(pat, sizeof(pat), "%s.*.prof", prefix);
    int rc = glob(pat, 0, NULL, g);
    if (GLOB_NOMATCH == rc) {
        g->gl_pathc = 0;
        return 0;
    }
    return 0 == rc ? 0 : mon_error("cannot list %s", pat);
}

int mon_for_each_rank_file(const char *prefix, int (*fn)(const char *path, void *ctx), void *ctx,
                           int *files)
{
    glob_t g;
    size_t plen = strlen(prefix);
    if (0 != glob_ranks(prefix, &g)) {
        return 1;
    }
    int rc = 0;
    *files = 0;
    for (size_t k = 0; 0 == rc && k < g.gl_pathc; k++) {
        if (is_rank_suffix(g.gl_pathv[k] + plen + 1)) {
            rc = fn(g.gl_pathv[k], ctx);
            (*files)++;
        }
    }
    if (g.gl_pathc) {
        globfree(&g);
    }
    return rc;
}

static int read_prof_cb(const char *path, void *set)
{
    return read_prof(path, set);
}

static int run_one(const char *prefix, const char *out, const matrices_opts_t *o)
{
    prof_set_t set = {0};
    int files, rc = mon_for_each_rank_file(prefix, read_prof_cb, &set, &files);
    if (0 == rc && 0 == files) {
        rc = mon_error("no file %s.<rank>.prof", prefix);
    }
    if (0 == rc) {
        rc = write_all(&set, out, o);
    }
    free(set.rec);
    return rc;
}

static int run_file(const char *path, const char *out, const matrices_opts_t *o)
{
    prof_set_t set = {0};
    int rc = read_prof(path, &set);
    if (0 == rc) {
        rc = write_all(&set, out, o);
    }
    free(set.rec);
    return rc;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *) a, y = *(const long *) b;
    return (x > y) - (x < y);
}

/* Phase ids N of the files PREFIX_N.<rank>.prof (the names a program gives
 * the flush pvar, "PREFIX_N", as Open MPI's aggregate_profile.pl expects). */
static int find_phases(const char *prefix, long **ids, size_t *count)
{
    char pat[4096];
    glob_t g;
    snprintf(pat, sizeof(pat), "%s_*.*.prof", prefix);
    *count = 0;
    *ids = NULL;
    int rc = glob(pat, 0, NULL, &g);
    if (GLOB_NOMATCH == rc) {
        return 0;
    }
    if (0 != rc || NULL == (*ids = calloc(g.gl_pathc, sizeof(long)))) {
        return mon_error("cannot list %s", pat);
    }
    for (size_t k = 0; k < g.gl_pathc; k++) {
        const char *s = g.gl_pathv[k] + strlen(prefix) + 1;
        size_t d = strspn(s, "0123456789");
        if (d > 0 && '.' == s[d] && is_rank_suffix(s + d + 1)) {
            long id = strtol(s, NULL, 10);
            if (0 == *count || NULL == bsearch(&id, *ids, *count, sizeof(long), cmp_long)) {
                (*ids)[(*count)++] = id;
                qsort(*ids, *count, sizeof(long), cmp_long);
            }
        }
    }
    globfree(&g);
    return 0;
}

static int run_phases(const char *prefix, const matrices_opts_t *o)
{
    long *ids;
    size_t count;
    if (0 != find_phases(prefix, &ids, &count)) {
        return 1;
    }
    int rc = 0 == count ? mon_error("no phase file %s_<phase>.<rank>.prof", prefix) : 0;
    for (size_t k = 0; 0 == rc && k < count; k++) {
        char in[4096], out[4096];
        snprintf(in, sizeof(in), "%s_%ld", prefix, ids[k]);
        snprintf(out, sizeof(out), "%s_%ld", o->out ? o->out : prefix, ids[k]);
        rc = run_one(in, out, o);
    }
    free(ids);
    return rc;
}

static void matrices_usage(FILE *f)
{
    fputs("Usage: ob1x-monitoring matrices [options] PREFIX\n"
          "       ob1x-monitoring matrices [options] FILE[.prof]\n"
          "\n"
          "Reads PREFIX.<rank>.prof of every rank (the files pml_monitoring_filename=PREFIX\n"
          "gives), or one FILE (their concatenation, or a job's output with the\n"
          "monitoring printed on stdout or stderr among other lines), and writes\n"
          "OUT_{size,msg,avg}_{all,external,internal,osc,coll}.mat exactly as Open MPI's\n"
          "profile2mat.pl does on the concatenated file. OUT: PREFIX, or FILE less .prof.\n"
          "\n"
          "Options:\n"
          "  -o, --output OUT  prefix of the files written\n"
          "  --phases          read PREFIX_<N>.<rank>.prof (one set per phase N, as the\n"
          "                    flush pvar writes them) and write OUT_<N>_*.mat per phase\n"
          "  --svg, --png      also draw each matrix (same name, .svg / .png)\n"
          "  --log             pictures: logarithmic colour scale\n"
          "  --title TEXT      pictures: title (default: name, quantity, category)\n"
          "  -q, --quiet       do not list the files written\n",
          f);
}

static int parse_matrices_opts(int argc, char **argv, matrices_opts_t *o, int *first)
{
    int npos = 0;
    for (int k = 1; k < argc; k++) {
        const char *a = argv[k];
        if ('-' != a[0]) {
            *first = k; /* the one operand, wherever it stands */
            npos++;
        } else if ((0 == strcmp(a, "-o") || 0 == strcmp(a, "--output")) && k + 1 < argc) {
            o->out = argv[++k];
        } else if (0 == strcmp(a, "--title") && k + 1 < argc) {
            o->pic.title = argv[++k];
        } else if (0 == strcmp(a, "--phases")) {
            o->phases = 1;
        } else if (0 == strcmp(a, "--svg")) {
            o->svg = 1;
        } else if (0 == strcmp(a, "--png")) {
            o->png = 1;
        } else if (0 == strcmp(a, "--log")) {
            o->pic.log_scale = 1;
        } else if (0 == strcmp(a, "-q") || 0 == strcmp(a, "--quiet")) {
            o->quiet = 1;
        } else if (0 == strcmp(a, "-h") || 0 == strcmp(a, "--help")) {
            matrices_usage(stdout);
            exit(0);
        } else {
            mon_error("matrices: unknown option '%s'", a);
            matrices_usage(stderr);
            return 2;
        }
    }
    if (1 != npos) {
        matrices_usage(stderr);
        return 2;
    }
    return 0;
}

int mon_cmd_matrices(int argc, char **argv)
{
    matrices_opts_t o = {0};
    int first, rc = parse_matrices_opts(argc, argv, &o, &first);
    if (0 != rc) {
        return rc;
    }
    const char *arg = argv[first];
    size_t len = strlen(arg);
    struct stat st;
    if (o.phases) {
        return run_phases(arg, &o);
    }
    /* A file: a concatenation, or what pml_monitoring_enable_output 1 or 2
     * printed among the program's own output (other lines are ignored). */
    if (0 == stat(arg, &st) && S_ISREG(st.st_mode)) {
        char out[4096];
        int ext = len > 5 && 0 == strcmp(arg + len - 5, ".prof") ? 5 : 0;
        snprintf(out, sizeof(out), "%.*s", (int) (len - ext), arg);
        return run_file(arg, o.out ? o.out : out, &o);
    }
    return run_one(arg, o.out ? o.out : arg, &o);
}

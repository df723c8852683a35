/* Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE. */
/*
 * ob1x-monitoring place: a TreeMatch-style placement (Jeannot & Mercier).
 *
 * The machine is a tree: [hosts] x the hwloc levels that branch, down to
 * cores (or PUs); when there are more ranks than leaves, a last virtual
 * level puts several ranks on a leaf. Bottom-up, the objects of a level
 * (ranks first, padded with idle ones to fill the tree) are grouped by the
 * arity of the level above so that as much traffic as possible stays inside
 * a group; the groups' traffic forms the matrix of the next level up. Top-
 * down, each group gets one subtree. Grouping is greedy (seed = the object
 * that talks most, then whoever talks most to the group) and then improved
 * by swapping pairs between groups while that keeps more traffic inside.
 * The same is run from consecutive ranks (swaps only); the cheaper of the
 * two is proposed, or packed if that is cheaper still.
 *
 * Cost of a placement: sum over ordered pairs of matrix[i][j] x hops, hops
 * being the number of tree edges between the two leaves (0 on one leaf),
 * and the largest per-rank sum. Printed for the proposal, packed (rank i on
 * leaf i) and round-robin (rank i on the i-th top-level subtree in turn).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mon_tool.h"
#include "mon_place.h"

/* Largest tree handled: its matrices are leaves x leaves doubles. */
#define MON_MAX_OBJECTS 8192

typedef struct place_opts {
    const char *topology, *output, *hosts, *save_xml;
    int use_pu;
} place_opts_t;

/* The tree with the hosts level on top and the virtual level at the
 * bottom: arity[0..depth-1]; `over` ranks per physical leaf. */
typedef struct full_tree {
    int depth, arity[MON_MAX_LEVELS + 2];
    int phys_depth; /* levels without the virtual one */
    int leaves;     /* physical leaves */
    int over;
    char **hosts;
    int nhosts;
} full_tree_t;

/* Sum of c[x][g-members], per x, kept up to date across swaps. */
static double group_weight(const double *c, int m, const int *members, int a, int x)
{
    double w = 0;
    for (int k = 0; k < a; k++) {
        if (members[k] != x) {
            w += c[(size_t) x * m + members[k]];
        }
    }
    return w;
}

static int pick_seed(const double *c, int m, const char *used)
{
    int best = -1;
    double bw = -1;
    for (int x = 0; x < m; x++) {
        if (used[x]) {
            continue;
        }
        double w = 0;
        for (int y = 0; y < m; y++) {
            w += y != x && !used[y] ? c[(size_t) x * m + y] : 0;
        }
        if (w > bw) {
            bw = w;
            best = x;
        }
    }
    return best;
}

/* Greedy groups of a: members of group g in out[g*a .. g*a+a-1]. */
static void greedy_groups(const double *c, int m, int a, int *out, char *used, double *gain)
{
    memset(used, 0, (size_t) m);
    for (int g = 0; g < m / a; g++) {
        int x = pick_seed(c, m, used);
        for (int k = 0; k < a; k++) {
            if (k > 0) {
                x = -1;
                for (int y = 0; y < m; y++) {
                    if (!used[y] && (x < 0 || gain[y] > gain[x])) {
                        x = y;
                    }
                }
            }
            if (x < 0) {
                return; /* cannot happen: m is a multiple of a */
            }
            used[x] = 1;
            out[g * a + k] = x;
            for (int y = 0; y < m; y++) {
                gain[y] = (k == 0 ? 0 : gain[y]) + c[(size_t) y * m + x];
            }
        }
    }
}

/* One pass of pair swaps between groups; returns whether anything moved. */
static int improve_pass(const double *c, int m, int a, int *grp)
{
    int moved = 0, ng = m / a;
    for (int g = 0; g < ng; g++) {
        for (int h = g + 1; h < ng; h++) {
            for (int i = 0; i < a; i++) {
                for (int j = 0; j < a; j++) {
                    int *x = &grp[g * a + i], *y = &grp[h * a + j];
                    double cxy = c[(size_t) *x * m + *y];
                    double gain = group_weight(c, m, &grp[h * a], a, *x) - cxy +
                                  group_weight(c, m, &grp[g * a], a, *y) - cxy -
                                  group_weight(c, m, &grp[g * a], a, *x) -
                                  group_weight(c, m, &grp[h * a], a, *y);
                    if (gain > 1e-9 * (cxy + 1)) {
                        int t = *x;
                        *x = *y;
                        *y = t;
                        moved = 1;
                    }
                }
            }
        }
    }
    return moved;
}

/* Groups the m objects of matrix c by a; *up gets the (m/a)^2 matrix of the
 * traffic between groups. */
static int group_level(const double *c, int m, int a, int greedy, int *grp, double **up)
{
    char *used = malloc((size_t) m);
    double *gain = malloc((size_t) m * sizeof(double));
    int ng = m / a;
    *up = calloc((size_t) ng * ng + 1, sizeof(double));
    if (NULL == used || NULL == gain || NULL == *up) {
        free(used);
        free(gain);
        return mon_error("out of memory");
    }
    if (greedy) {
        greedy_groups(c, m, a, grp, used, gain);
    } else {
        for (int k = 0; k < m; k++) {
            grp[k] = k; /* start from consecutive objects (packed) */
        }
    }
    for (int pass = 0; pass < 8 && a > 1 && ng > 1 && m <= 2048 && improve_pass(c, m, a, grp);
         pass++) {
    }
    int *of = (int *) gain; /* reuse: group of each object */
    for (int k = 0; k < m; k++) {
        of[grp[k]] = k / a;
    }
    for (int x = 0; x < m; x++) {
        for (int y = 0; y < m; y++) {
            if (of[x] != of[y]) {
                (*up)[(size_t) of[x] * ng + of[y]] += c[(size_t) x * m + y];
            }
        }
    }
    free(used);
    free(gain);
    return 0;
}

static void assign(int **grp, const full_tree_t *t, int k, int o, int base, int *pos, int nreal)
{
    if (k == t->depth) {
        if (o < nreal) {
            pos[o] = base;
        }
        return;
    }
    int a = t->arity[k];
    for (int j = 0; j < a; j++) {
        assign(grp, t, k + 1, grp[k][o * a + j], base * a + j, pos, nreal);
    }
}

/* TreeMatch: pos[rank] = physical leaf. */
static int treematch(const mon_matrix_t *mat, const full_tree_t *t, int greedy, int *pos)
{
    int m = t->leaves * t->over, rc = 0;
    int *grp[MON_MAX_LEVELS + 2] = {0};
    double *c = calloc((size_t) m * m + 1, sizeof(double));
    if (NULL == c) {
        return mon_error("out of memory");
    }
    for (int i = 0; i < mat->n; i++) {
        for (int j = 0; j < mat->n; j++) {
            c[(size_t) i * m + j] = i == j ? 0 : mat->v[(size_t) i * mat->n + j];
        }
    }
    for (int k = t->depth - 1; 0 == rc && k >= 0; k--) {
        double *up = NULL;
        grp[k] = malloc((size_t) m * sizeof(int));
        rc = NULL == grp[k] ? mon_error("out of memory")
                            : group_level(c, m, t->arity[k], greedy, grp[k], &up);
        free(c);
        c = up;
        m /= t->arity[k];
    }
    if (0 == rc) {
        assign(grp, t, 0, 0, 0, pos, mat->n);
        for (int r = 0; r < mat->n; r++) {
            pos[r] /= t->over;
        }
    }
    free(c);
    for (int k = 0; k < t->depth; k++) {
        free(grp[k]);
    }
    return rc;
}

static int hops(const full_tree_t *t, int p, int q)
{
    int h = 0;
    for (int k = t->phys_depth - 1; k >= 0 && p != q; k--) {
        p /= t->arity[k];
        q /= t->arity[k];
        h += 2;
    }
    return h;
}

static void cost(const mon_matrix_t *mat, const full_tree_t *t, const int *pos, double *total,
                 double *max)
{
    *total = *max = 0;
    for (int i = 0; i < mat->n; i++) {
        double mine = 0;
        for (int j = 0; j < mat->n; j++) {
            if (i != j) {
                mine += mat->v[(size_t) i * mat->n + j] * hops(t, pos[i], pos[j]);
            }
        }
        *total += mine;
        *max = mine > *max ? mine : *max;
    }
}

static void packed(const full_tree_t *t, int n, int *pos)
{
    for (int r = 0; r < n; r++) {
        pos[r] = r / t->over;
    }
}

/* The proposal: the cheaper of two groupings (greedy; consecutive ranks
 * improved by swaps), and never worse than packed. A greedy start finds
 * scattered partners that swaps from packed would not reach; swaps from
 * packed keep the locality of banded matrices that greedy seeds break. */
static int propose(const mon_matrix_t *mat, const full_tree_t *t, int *pos)
{
    int *alt = calloc((size_t) mat->n + 1, sizeof(int));
    double best, other, max;
    int rc = NULL == alt ? mon_error("out of memory") : treematch(mat, t, 1, pos);
    for (int k = 0; 0 == rc && k < 2; k++) {
        if (0 == k) {
            rc = treematch(mat, t, 0, alt);
        } else {
            packed(t, mat->n, alt);
        }
        cost(mat, t, pos, &best, &max);
        cost(mat, t, alt, &other, &max);
        if (0 == rc && other < best) {
            memcpy(pos, alt, (size_t) mat->n * sizeof(int));
        }
    }
    free(alt);
    return rc;
}

static void round_robin(const full_tree_t *t, int n, int *pos)
{
    int a = t->arity[0], per = t->leaves / a;
    for (int r = 0; r < n; r++) {
        pos[r] = (r % a) * per + (r / a) % per;
    }
}

static int split_hosts(const char *list, full_tree_t *t)
{
    char *copy = strdup(list ? list : "localhost"), *save = NULL;
    t->hosts = calloc(strlen(copy) + 1, sizeof(char *));
    if (NULL == copy || NULL == t->hosts) {
        return mon_error("out of memory");
    }
    for (char *h = strtok_r(copy, ",", &save); h; h = strtok_r(NULL, ",", &save)) {
        t->hosts[t->nhosts++] = h;
    }
    return t->nhosts > 0 ? 0 : mon_error("--hosts: no host name");
}

static int build_tree(const mon_tree_t *node, int n, const char *hosts, full_tree_t *t)
{
    memset(t, 0, sizeof(*t));
    if (0 != split_hosts(hosts, t)) {
        return 1;
    }
    if (t->nhosts > 1) {
        t->arity[t->depth++] = t->nhosts;
    }
    for (int k = 0; k < node->depth; k++) {
        t->arity[t->depth++] = node->arity[k];
    }
    if (0 == t->depth) {
        t->arity[t->depth++] = 1; /* one leaf: everything on it */
    }
    t->phys_depth = t->depth;
    t->leaves = node->leaves * t->nhosts;
    t->over = (n + t->leaves - 1) / t->leaves;
    if (t->over > 1) {
        t->arity[t->depth++] = t->over;
    }
    if ((double) t->leaves * t->over > MON_MAX_OBJECTS) {
        return mon_error("%d leaves x %d ranks per leaf: more than the %d objects handled",
                         t->leaves, t->over, MON_MAX_OBJECTS);
    }
    return 0;
}

static int write_rankfile(const char *path, const full_tree_t *t, const mon_tree_t *node,
                          const int *pos, int n)
{
    FILE *f = path ? fopen(path, "w") : stdout;
    if (NULL == f) {
        return mon_error("cannot write %s", path);
    }
    for (int r = 0; r < n; r++) {
        fprintf(f, "rank %d=%s slot=%s\n", r, t->hosts[pos[r] / node->leaves],
                node->slot[pos[r] % node->leaves].text);
    }
    return path && 0 != fclose(f) ? mon_error("cannot write %s", path) : 0;
}

static void report(const mon_matrix_t *mat, const full_tree_t *t, const mon_tree_t *node,
                   int *const pos[3])
{
    static const char *const name[3] = {"treematch", "packed", "round-robin"};
    printf("# topology: %d host(s) x", t->nhosts);
    for (int k = 0; k < node->depth; k++) {
        printf(" %d", node->arity[k]);
    }
    printf(" = %d %s leaves, %d rank(s), %d per leaf\n", t->leaves, node->leaf_type, mat->n,
           t->over);
    printf("# %-12s %20s %20s\n", "placement", "cost(bytes*hops)", "max-rank-cost");
    for (int k = 0; k < 3; k++) {
        double total, max;
        cost(mat, t, pos[k], &total, &max);
        printf("%-14s %20.0f %20.0f\n", name[k], total, max);
    }
}

static void place_usage(FILE *f)
{
    fputs("Usage: ob1x-monitoring place [options] FILE.mat\n"
          "\n"
          "Maps the ranks of a communication matrix (e.g. PREFIX_size_all.mat) onto a\n"
          "topology, writes the placement as an Open MPI rankfile and prints its cost\n"
          "(bytes x hops, and the largest per-rank cost) beside packed and round-robin.\n"
          "\n"
          "Options:\n"
          "  -t, --topology SPEC  live (default: this machine), xml:FILE or FILE.xml\n"
          "                       (lstopo --of xml), or a synthetic topology: hwloc's\n"
          "                       \"package:2 core:8\" or \"2 packages x 8 cores\"\n"
          "  --hosts H1,H2,...    the topology is one node of each host (default localhost)\n"
          "  --pu                 place on hardware threads instead of cores\n"
          "  --save-topology F    also write the topology used as lstopo XML to F\n"
          "  -o, --output FILE    write the rankfile there (default: stdout, after the costs)\n"
          "Run: mpirun -np N --rankfile FILE ./app\n",
          f);
}

static int parse_place_opts(int argc, char **argv, place_opts_t *o, int *first)
{
    int npos = 0;
    for (int k = 1; k < argc; k++) {
        const char *a = argv[k];
        if ('-' != a[0]) {
            *first = k; /* the one operand, wherever it stands */
            npos++;
        } else if ((0 == strcmp(a, "-t") || 0 == strcmp(a, "--topology")) && k + 1 < argc) {
            o->topology = argv[++k];
        } else if ((0 == strcmp(a, "-o") || 0 == strcmp(a, "--output")) && k + 1 < argc) {
            o->output = argv[++k];
        } else if (0 == strcmp(a, "--hosts") && k + 1 < argc) {
            o->hosts = argv[++k];
        } else if (0 == strcmp(a, "--save-topology") && k + 1 < argc) {
            o->save_xml = argv[++k];
        } else if (0 == strcmp(a, "--pu")) {
            o->use_pu = 1;
        } else if (0 == strcmp(a, "-h") || 0 == strcmp(a, "--help")) {
            place_usage(stdout);
            exit(0);
        } else {
            mon_error("place: unknown option '%s'", a);
            place_usage(stderr);
            return 2;
        }
    }
    if (1 != npos) {
        place_usage(stderr);
        return 2;
    }
    return 0;
}

int mon_cmd_place(int argc, char **argv)
{
    place_opts_t o = {0};
    mon_matrix_t mat;
    mon_tree_t node;
    full_tree_t t = {0};
    int first, rc = parse_place_opts(argc, argv, &o, &first);
    if (0 != rc || 0 != mon_matrix_read(argv[first], &mat)) {
        return rc ? rc : 1;
    }
    if (0 != mon_tree_load(o.topology, o.use_pu, o.save_xml, &node)) {
        mon_matrix_free(&mat);
        return 1;
    }
    int *pos[3] = {calloc(mat.n, sizeof(int)), calloc(mat.n, sizeof(int)),
                   calloc(mat.n, sizeof(int))};
    rc = NULL == pos[0] || NULL == pos[1] || NULL == pos[2] ? mon_error("out of memory") : 0;
    rc = rc ? rc : build_tree(&node, mat.n, o.hosts, &t);
    rc = rc ? rc : propose(&mat, &t, pos[0]);
    if (0 == rc) {
        packed(&t, mat.n, pos[1]);
        round_robin(&t, mat.n, pos[2]);
        report(&mat, &t, &node, pos);
        if (NULL == o.output) {
            putchar('\n');
        }
        rc = write_rankfile(o.output, &t, &node, pos[0], mat.n);
    }
    for (int k = 0; k < 3; k++) {
        free(pos[k]);
    }
    if (t.hosts) {
        free(t.hosts[0]);
        free(t.hosts);
    }
    mon_tree_free(&node);
    mon_matrix_free(&mat);
    return rc;
}

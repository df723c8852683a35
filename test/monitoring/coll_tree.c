/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * coll_tree.c - the matrix shows the algorithm: one MPI_Reduce on 7
 * processes, root 0, with coll/tuned's algorithm forced
 * (coll_tuned_use_dynamic_rules 1, coll_tuned_reduce_algorithm N). Each
 * process but the root sends its vector once to its parent, as an
 * internal-tag point-to-point message (pml_monitoring_enable 2 keeps
 * those apart): pml_monitoring_messages_internal_count/size must hold
 * exactly one message of the vector's size to the parent, nothing else.
 * coll/monitoring records the reduce at the root (all-to-one, the vector
 * from each peer), whatever the algorithm.
 * Argument: the expected tree, "binary" (algorithm 4) or "linear" (1).
 */
#include "tcoll.c"

#define TREE_N 7
#define TREE_COUNT 1000

/* coll/tuned's binary tree over 7 ranks from root 0: 0 -> {1, 2},
 * 1 -> {3, 5}, 2 -> {4, 6} (children at distance 2^level). */
static const int binary_parent[TREE_N] = {-1, 0, 0, 1, 2, 1, 2};

static int sb[TREE_COUNT], rb[TREE_COUNT];

static void s_reduce(void)
{
    T_MPI(MPI_Reduce(sb, rb, TREE_COUNT, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
}

static void e_reduce(tc_expect_t *e)
{
    if (0 == t_rank) {
        for (int p = 1; p < t_size; ++p) {
            tc_to(e, p, 4 * TREE_COUNT);
            e->cls_size += 4 * TREE_COUNT;
        }
        e->cls = TC_A2O;
    }
}

int main(int argc, char **argv)
{
    MPI_T_pvar_handle hc, hs;
    unsigned long long *c0, *s0, *c1, *s1;
    int n, binary, parent;
    tcoll_t t;

    tmon_init(&argc, &argv);
    T_CHECK(TREE_N == t_size, "run with %d processes", TREE_N);
    T_CHECK(argc > 1, "usage: coll_tree binary|linear");
    binary = 0 == strcmp(argv[1], "binary");
    parent = 0 == t_rank ? -1 : binary ? binary_parent[t_rank] : 0;
    T_CHECK(2 <= tmon_cvar_int("pml_monitoring_enable"), "run with pml_monitoring_enable 2");
    for (int i = 0; i < TREE_COUNT; ++i) {
        sb[i] = t_rank + i;
    }
    hc = tmon_handle("pml_monitoring_messages_internal_count", MPI_COMM_WORLD, &n);
    hs = tmon_handle("pml_monitoring_messages_internal_size", MPI_COMM_WORLD, &n);
    T_MPI(MPI_T_pvar_start(tmon_session, hc));
    T_MPI(MPI_T_pvar_start(tmon_session, hs));
    c0 = calloc(TREE_N, sizeof(*c0)), s0 = calloc(TREE_N, sizeof(*s0));
    c1 = calloc(TREE_N, sizeof(*c1)), s1 = calloc(TREE_N, sizeof(*s1));
    tc_open(&t, MPI_COMM_WORLD);
    tmon_read(hc, c0);
    tmon_read(hs, s0);
    tc_check(&t, "MPI_Reduce", s_reduce, e_reduce);
    tmon_read(hc, c1);
    tmon_read(hs, s1);
    for (int p = 0; p < TREE_N; ++p) {
        unsigned long long ec = p == parent ? 1 : 0, es = p == parent ? 4 * TREE_COUNT : 0;
        T_CHECK(c1[p] - c0[p] == ec && s1[p] - s0[p] == es,
                "%s tree: rank %d sent %llu internal messages (%llu bytes) to %d, expected %llu "
                "(%llu)",
                argv[1], t_rank, c1[p] - c0[p], s1[p] - s0[p], p, ec, es);
    }
    if (0 == t_rank) {
        for (int i = 0; i < TREE_COUNT; ++i) {
            T_CHECK(rb[i] == TREE_N * i + TREE_N * (TREE_N - 1) / 2, "reduce result [%d] = %d", i,
                    rb[i]);
        }
    }
    tc_close(&t);
    MPI_T_pvar_handle_free(tmon_session, &hc);
    MPI_T_pvar_handle_free(tmon_session, &hs);
    tmon_finalize();
    return 0;
}

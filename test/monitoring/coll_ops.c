/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * coll_ops.c - coll/monitoring records every collective exactly: for each
 * one, blocking and non-blocking, on MPI_COMM_WORLD, the bytes and
 * messages per peer (coll_monitoring_messages_count/size) and the class
 * of the communicator (coll_monitoring_{o2a,a2o,a2a}_{count,size}) must
 * grow by exactly what the operation sends, counted as Open MPI 4.1's
 * coll/monitoring counts it: the root of bcast/scatter(v) one-to-all, the
 * root of gather(v)/reduce all-to-one, everyone for the others.
 */
#include "tcoll.c"

#define TC_MAX 4096
static int sb[TC_MAX], rb[TC_MAX], counts[64], disps[64], rcounts[64], rdisps[64];
static MPI_Datatype types[64];
static MPI_Request req;

static void fill_counts(int (*f)(int i))
{
    int d = 0;
    for (int i = 0; i < t_size; ++i) {
        counts[i] = f(i);
        disps[i] = d;
        d += counts[i];
    }
}

static int plus_one(int i)
{
    return i + 1;
}
static int twice_plus_one(int i)
{
    return 2 * i + 1;
}

/* expectations ------------------------------------------------------------ */

static void to_all_but(tc_expect_t *e, int skip, unsigned long long bytes, int cls)
{
    for (int p = 0; p < t_size; ++p) {
        if (p != skip) {
            tc_to(e, p, bytes);
            e->cls_size += bytes;
        }
    }
    e->cls = cls;
}

static void to_each_but(tc_expect_t *e, int skip, const int *c, unsigned long long unit, int cls)
{
    for (int p = 0; p < t_size; ++p) {
        if (p != skip) {
            tc_to(e, p, (unsigned long long) c[p] * unit);
            e->cls_size += (unsigned long long) c[p] * unit;
        }
    }
    e->cls = cls;
}

/* the steps ----------------------------------------------------------------- */

static void s_bcast(void)
{
    T_MPI(MPI_Bcast(sb, 100, MPI_BYTE, 1, MPI_COMM_WORLD));
}
static void e_bcast(tc_expect_t *e)
{
    if (1 == t_rank)
        to_all_but(e, 1, 100, TC_O2A);
}

static void s_ibcast(void)
{
    T_MPI(MPI_Ibcast(sb, 50, MPI_BYTE, 0, MPI_COMM_WORLD, &req));
    T_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
}
static void e_ibcast(tc_expect_t *e)
{
    if (0 == t_rank)
        to_all_but(e, 0, 50, TC_O2A);
}

static void s_scatter(void)
{
    T_MPI(MPI_Scatter(sb, 10, MPI_INT, rb, 10, MPI_INT, 2, MPI_COMM_WORLD));
}
static void e_scatter(tc_expect_t *e)
{
    if (2 == t_rank)
        to_all_but(e, 2, 40, TC_O2A);
}

static void s_scatterv(void)
{
    fill_counts(plus_one);
    T_MPI(MPI_Scatterv(sb, counts, disps, MPI_INT, rb, t_rank + 1, MPI_INT, 0, MPI_COMM_WORLD));
}
static void e_scatterv(tc_expect_t *e)
{
    if (0 == t_rank)
        to_each_but(e, 0, counts, 4, TC_O2A);
}

static void s_gather(void)
{
    T_MPI(MPI_Gather(sb, 5, MPI_DOUBLE, rb, 5, MPI_DOUBLE, 3 % t_size, MPI_COMM_WORLD));
}
static void e_gather(tc_expect_t *e)
{
    if (3 % t_size == t_rank)
        to_all_but(e, t_rank, 40, TC_A2O);
}

static void s_igatherv(void)
{
    fill_counts(twice_plus_one);
    T_MPI(MPI_Igatherv(sb, 2 * t_rank + 1, MPI_INT, rb, counts, disps, MPI_INT, 0, MPI_COMM_WORLD,
                       &req));
    T_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
}
static void e_igatherv(tc_expect_t *e)
{
    if (0 == t_rank)
        to_each_but(e, 0, counts, 4, TC_A2O);
}

static void s_reduce(void)
{
    T_MPI(MPI_Reduce(sb, rb, 7, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
}
static void e_reduce(tc_expect_t *e)
{
    if (0 == t_rank)
        to_all_but(e, 0, 28, TC_A2O);
}

static void s_allreduce(void)
{
    T_MPI(MPI_Allreduce(sb, rb, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
}
static void e_allreduce(tc_expect_t *e)
{
    to_all_but(e, t_rank, 12, TC_A2A);
}

static void s_iallreduce(void)
{
    T_MPI(MPI_Iallreduce(sb, rb, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
    T_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
}
static void e_iallreduce(tc_expect_t *e)
{
    to_all_but(e, t_rank, 4, TC_A2A);
}

static void s_alltoall(void)
{
    T_MPI(MPI_Alltoall(sb, 2, MPI_INT, rb, 2, MPI_INT, MPI_COMM_WORLD));
}
static void e_alltoall(tc_expect_t *e)
{
    to_all_but(e, t_rank, 8, TC_A2A);
}

/* alltoallv: rank r sends r + p + 1 ints to p */
static void s_alltoallv(void)
{
    int d = 0, rd = 0;
    for (int p = 0; p < t_size; ++p) {
        counts[p] = t_rank + p + 1;
        disps[p] = d;
        d += counts[p];
        rcounts[p] = p + t_rank + 1;
        rdisps[p] = rd;
        rd += rcounts[p];
    }
    T_MPI(MPI_Alltoallv(sb, counts, disps, MPI_INT, rb, rcounts, rdisps, MPI_INT, MPI_COMM_WORLD));
}
static void e_alltoallv(tc_expect_t *e)
{
    to_each_but(e, t_rank, counts, 4, TC_A2A);
}

/* alltoallw: one int to everyone, one double from everyone... same type both ways */
static void s_ialltoallw(void)
{
    for (int p = 0; p < t_size; ++p) {
        counts[p] = 3;
        disps[p] = 3 * p * (int) sizeof(int);
        types[p] = MPI_INT;
    }
    T_MPI(MPI_Ialltoallw(sb, counts, disps, types, rb, counts, disps, types, MPI_COMM_WORLD, &req));
    T_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
}
static void e_ialltoallw(tc_expect_t *e)
{
    to_all_but(e, t_rank, 12, TC_A2A);
}

static void s_barrier(void)
{
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
}
static void s_ibarrier(void)
{
    T_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &req));
    T_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
}
static void e_barrier(tc_expect_t *e)
{
    to_all_but(e, t_rank, 0, TC_A2A);
}

static void s_scan(void)
{
    T_MPI(MPI_Scan(sb, rb, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
}
static void s_exscan(void)
{
    T_MPI(MPI_Exscan(sb, rb, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
}
static void e_scan(tc_expect_t *e)
{
    for (int p = t_rank + 1; p < t_size; ++p) {
        tc_to(e, p, 8);
        e->cls_size += 8;
    }
    e->cls = TC_A2A;
}

static void s_reduce_scatter_block(void)
{
    T_MPI(MPI_Reduce_scatter_block(sb, rb, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
}
static void e_reduce_scatter_block(tc_expect_t *e)
{
    to_all_but(e, t_rank, 12, TC_A2A);
}

static void s_reduce_scatter(void)
{
    fill_counts(plus_one);
    T_MPI(MPI_Reduce_scatter(sb, rb, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
}
static void e_reduce_scatter(tc_expect_t *e)
{
    to_each_but(e, t_rank, counts, 4, TC_A2A);
}

static void s_allgather(void)
{
    T_MPI(MPI_Allgather(sb, 4, MPI_BYTE, rb, 4, MPI_BYTE, MPI_COMM_WORLD));
}
static void e_allgather(tc_expect_t *e)
{
    to_all_but(e, t_rank, 4, TC_A2A);
}

static void s_iallgatherv(void)
{
    fill_counts(plus_one);
    T_MPI(
        MPI_Iallgatherv(sb, t_rank + 1, MPI_INT, rb, counts, disps, MPI_INT, MPI_COMM_WORLD, &req));
    T_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
}
static void e_iallgatherv(tc_expect_t *e)
{
    to_all_but(e, t_rank, 4ULL * (t_rank + 1), TC_A2A);
}

static const struct {
    const char *name;
    void (*step)(void);
    void (*expect)(tc_expect_t *);
} steps[] = {
    {"MPI_Bcast", s_bcast, e_bcast},
    {"MPI_Ibcast", s_ibcast, e_ibcast},
    {"MPI_Scatter", s_scatter, e_scatter},
    {"MPI_Scatterv", s_scatterv, e_scatterv},
    {"MPI_Gather", s_gather, e_gather},
    {"MPI_Igatherv", s_igatherv, e_igatherv},
    {"MPI_Reduce", s_reduce, e_reduce},
    {"MPI_Allreduce", s_allreduce, e_allreduce},
    {"MPI_Iallreduce", s_iallreduce, e_iallreduce},
    {"MPI_Alltoall", s_alltoall, e_alltoall},
    {"MPI_Alltoallv", s_alltoallv, e_alltoallv},
    {"MPI_Ialltoallw", s_ialltoallw, e_ialltoallw},
    {"MPI_Barrier", s_barrier, e_barrier},
    {"MPI_Ibarrier", s_ibarrier, e_barrier},
    {"MPI_Scan", s_scan, e_scan},
    {"MPI_Exscan", s_exscan, e_scan},
    {"MPI_Reduce_scatter_block", s_reduce_scatter_block, e_reduce_scatter_block},
    {"MPI_Reduce_scatter", s_reduce_scatter, e_reduce_scatter},
    {"MPI_Allgather", s_allgather, e_allgather},
    {"MPI_Iallgatherv", s_iallgatherv, e_iallgatherv},
};

int main(int argc, char **argv)
{
    tcoll_t t;

    tmon_init(&argc, &argv);
    T_CHECK(t_size >= 4 && t_size <= 64, "run with 4 to 64 processes");
    tc_open(&t, MPI_COMM_WORLD);
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); ++i) {
        tc_check(&t, steps[i].name, steps[i].step, steps[i].expect);
    }
    tc_close(&t);
    tmon_finalize();
    return 0;
}

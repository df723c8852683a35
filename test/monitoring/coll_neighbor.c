/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * coll_neighbor.c - neighbourhood collectives recorded per out-neighbour
 * slot (class all-to-all on the topology's communicator), on 4 processes:
 *   - a periodic ring (Cartesian, 1 dimension): alltoall, alltoallw;
 *   - a 2x2 non-periodic grid: alltoallv, where half the slots are
 *     MPI_PROC_NULL and the counts differ per slot (a slot must keep its
 *     place even when its neighbour is MPI_PROC_NULL);
 *   - a distributed graph r -> r+1, r+2: ineighbor_allgather.
 */
#include "tcoll.c"

static int sb[64], rb[64], counts[8], rcounts[8], idisps[8];
static MPI_Aint adisps[8];
static MPI_Datatype types[8];
static MPI_Comm ring, grid, dgraph;

static int right(void)
{
    return (t_rank + 1) % t_size;
}
static int left(void)
{
    return (t_rank + t_size - 1) % t_size;
}

static void s_ring_alltoall(void)
{
    T_MPI(MPI_Neighbor_alltoall(sb, 3, MPI_INT, rb, 3, MPI_INT, ring));
}
static void e_ring_alltoall(tc_expect_t *e)
{
    tc_to(e, left(), 12);
    tc_to(e, right(), 12);
    e->cls = TC_A2A;
    e->cls_size = 24;
}

/* slot 0 (left) 1 int, slot 1 (right) 2 ints; so 2 arrive from the left
 * (its right slot) and 1 from the right */
static void s_ring_alltoallw(void)
{
    for (int i = 0; i < 2; ++i) {
        counts[i] = i + 1;
        rcounts[i] = 2 - i;
        adisps[i] = (MPI_Aint) (4 * i * sizeof(int));
        types[i] = MPI_INT;
    }
    T_MPI(MPI_Neighbor_alltoallw(sb, counts, adisps, types, rb, rcounts, adisps, types, ring));
}
static void e_ring_alltoallw(tc_expect_t *e)
{
    tc_to(e, left(), 4);
    tc_to(e, right(), 8);
    e->cls = TC_A2A;
    e->cls_size = 12;
}

/* 2x2 grid, rank r at (r / 2, r % 2); slots: dim 0 -1, +1, dim 1 -1, +1;
 * slot i sends i + 1 ints. */
static int grid_neighbor(int slot)
{
    const int row = t_rank / 2, col = t_rank % 2;
    switch (slot) {
        case 0:
            return 1 == row ? t_rank - 2 : -1;
        case 1:
            return 0 == row ? t_rank + 2 : -1;
        case 2:
            return 1 == col ? t_rank - 1 : -1;
        default:
            return 0 == col ? t_rank + 1 : -1;
    }
}

static void s_grid_alltoallv(void)
{
    for (int i = 0; i < 4; ++i) {
        counts[i] = i + 1;
        idisps[i] = 4 * i;
    }
    /* what arrives from slot i is what the neighbour sends through its
     * opposite slot: i ^ 1, i.e. (i ^ 1) + 1 ints */
    for (int i = 0; i < 4; ++i) {
        rcounts[i] = (i ^ 1) + 1;
    }
    T_MPI(MPI_Neighbor_alltoallv(sb, counts, idisps, MPI_INT, rb, rcounts, idisps, MPI_INT, grid));
}
static void e_grid_alltoallv(tc_expect_t *e)
{
    for (int i = 0; i < 4; ++i) {
        if (grid_neighbor(i) >= 0) {
            tc_to(e, grid_neighbor(i), 4ULL * (i + 1));
            e->cls_size += 4ULL * (i + 1);
        }
    }
    e->cls = TC_A2A;
}

static void s_dgraph_iallgather(void)
{
    MPI_Request req;
    T_MPI(MPI_Ineighbor_allgather(sb, 5, MPI_BYTE, rb, 5, MPI_BYTE, dgraph, &req));
    T_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
}
static void e_dgraph_iallgather(tc_expect_t *e)
{
    tc_to(e, (t_rank + 1) % t_size, 5);
    tc_to(e, (t_rank + 2) % t_size, 5);
    e->cls = TC_A2A;
    e->cls_size = 10;
}

static void check_on(MPI_Comm comm, const char *what, void (*step)(void),
                     void (*expect)(tc_expect_t *))
{
    tcoll_t t;
    tc_open(&t, comm);
    tc_check(&t, what, step, expect);
    tc_close(&t);
}

int main(int argc, char **argv)
{
    int dims1[1] = {0}, periods1[1] = {1}, dims2[2] = {2, 2}, periods2[2] = {0, 0};
    int dest[2], src[2];

    tmon_init(&argc, &argv);
    T_CHECK(4 == t_size, "run with 4 processes");
    dims1[0] = t_size;
    T_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims1, periods1, 0, &ring));
    T_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims2, periods2, 0, &grid));
    dest[0] = (t_rank + 1) % t_size, dest[1] = (t_rank + 2) % t_size;
    src[0] = (t_rank + t_size - 1) % t_size, src[1] = (t_rank + t_size - 2) % t_size;
    T_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dest,
                                         MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dgraph));
    check_on(ring, "MPI_Neighbor_alltoall (ring)", s_ring_alltoall, e_ring_alltoall);
    check_on(ring, "MPI_Neighbor_alltoallw (ring)", s_ring_alltoallw, e_ring_alltoallw);
    check_on(grid, "MPI_Neighbor_alltoallv (2x2 grid)", s_grid_alltoallv, e_grid_alltoallv);
    check_on(dgraph, "MPI_Ineighbor_allgather (dist graph)", s_dgraph_iallgather,
             e_dgraph_iallgather);
    T_MPI(MPI_Comm_free(&ring));
    T_MPI(MPI_Comm_free(&grid));
    T_MPI(MPI_Comm_free(&dgraph));
    tmon_finalize();
    return 0;
}

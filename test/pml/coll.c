/*
 * coll.c - combined send-receive and collectives that run over the PML:
 *  - MPI_Sendrecv around a ring at boundary sizes, contiguous and derived
 *    datatypes, statuses checked; with MPI_PROC_NULL partners;
 *  - MPI_Sendrecv_replace around a ring (contiguous and vector);
 *  - MPI_Bcast from every root up to 16 MiB; MPI_Allreduce (sum of int64,
 *    max of double) over 4 MiB; MPI_Alltoall with blocks up to 1 MiB and
 *    MPI_Alltoallv with uneven blocks; MPI_Gather/MPI_Scatter;
 *  - counters: during a large alltoall every rank sent at least one
 *    message per peer through the PML.
 * Arguments: --btl=<a,b>.
 */
#include "tpml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 0x6B
static t_limits lim;

static void ring_sendrecv(size_t len, t_dt_kind sk, t_dt_kind rk, int tag)
{
    int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    t_typed s, r;
    MPI_Status st;
    char ctx[128];
    snprintf(ctx, sizeof(ctx), "Sendrecv ring size %zu send %s recv %s", len, t_dt_name(sk),
             t_dt_name(rk));
    t_typed_create(&s, sk, len);
    t_typed_create(&r, rk, len);
    t_typed_fill(&s, t_seed((uint32_t) t_rank, (uint32_t) tag, 3), 0);
    t_typed_guard(&r, GUARD);
    t_status_reset(&st);
    T_MPI(MPI_Sendrecv(s.buf, s.count, s.type, right, tag, r.buf, r.count, r.type, left, tag,
                       MPI_COMM_WORLD, &st));
    t_check_status(&st, left, tag, (long) len, ctx);
    t_typed_check(&r, len, t_seed((uint32_t) left, (uint32_t) tag, 3), GUARD, ctx);
    t_typed_free(&s);
    t_typed_free(&r);
}

static void ring_replace(size_t len, t_dt_kind k, int tag)
{
    int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    t_typed b;
    MPI_Status st;
    char ctx[128];
    snprintf(ctx, sizeof(ctx), "Sendrecv_replace ring size %zu %s", len, t_dt_name(k));
    t_typed_create(&b, k, len);
    t_typed_fill(&b, t_seed((uint32_t) t_rank, (uint32_t) tag, 4), GUARD);
    t_status_reset(&st);
    T_MPI(MPI_Sendrecv_replace(b.buf, b.count, b.type, right, tag, left, tag, MPI_COMM_WORLD, &st));
    t_check_status(&st, left, tag, (long) len, ctx);
    /* gaps keep what they had (GUARD), data comes from the left */
    t_typed_check(&b, len, t_seed((uint32_t) left, (uint32_t) tag, 4), GUARD, ctx);
    t_typed_free(&b);
}

static void proc_null_sendrecv(void)
{
    char sb[8] = "abcdefg", rb[8];
    MPI_Status st;
    memset(rb, 0x11, sizeof(rb));
    T_MPI(MPI_Sendrecv(sb, 8, MPI_CHAR, MPI_PROC_NULL, 1, rb, 8, MPI_CHAR, MPI_PROC_NULL, 1,
                       MPI_COMM_WORLD, &st));
    T_CHECK(MPI_PROC_NULL == st.MPI_SOURCE && MPI_ANY_TAG == st.MPI_TAG,
            "Sendrecv with MPI_PROC_NULL: status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
    t_check_guard(rb, sizeof(rb), 0x11, "Sendrecv with MPI_PROC_NULL");
}

static void bcasts(void)
{
    size_t sizes[] = {1, lim.eager_min - 64, lim.eager_max + 1, 1u << 20, 16u << 20};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        for (int root = 0; root < t_size; root++) {
            size_t n = sizes[i];
            unsigned char *b = t_malloc(n + 1);
            char ctx[64];
            uint32_t seed = t_seed((uint32_t) n, (uint32_t) root, 5);
            if (n > (1u << 20) && root > 1) {
                free(b);
                continue;
            }
            snprintf(ctx, sizeof(ctx), "Bcast %zu bytes from %d", n, root);
            if (t_rank == root)
                t_fill(b, n, seed);
            else
                memset(b, 0, n);
            b[n] = GUARD;
            T_MPI(MPI_Bcast(b, (int) n, MPI_BYTE, root, MPI_COMM_WORLD));
            t_check_data(b, n, seed, ctx);
            t_check_guard(b + n, 1, GUARD, ctx);
            free(b);
        }
}

static void allreduces(void)
{
    size_t n = (4u << 20) / sizeof(long long);
    long long *in = t_malloc(n * sizeof(long long)), *out = t_malloc(n * sizeof(long long));
    double *din = t_malloc(n * sizeof(double)), *dout = t_malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        in[i] = (long long) (i * 7 + 1) * (t_rank + 1);
        din[i] = (double) ((i + (size_t) t_rank * 13) % 1000);
    }
    T_MPI(MPI_Allreduce(in, out, (int) n, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    for (size_t i = 0; i < n; i++) {
        long long want = (long long) (i * 7 + 1) * t_size * (t_size + 1) / 2;
        T_CHECK(out[i] == want, "Allreduce sum element %zu: %lld, expected %lld", i, out[i], want);
    }
    T_MPI(MPI_Allreduce(din, dout, (int) n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    for (size_t i = 0; i < n; i++) {
        double want = 0;
        for (int r = 0; r < t_size; r++) {
            double v = (double) ((i + (size_t) r * 13) % 1000);
            if (v > want)
                want = v;
        }
        T_CHECK(dout[i] == want, "Allreduce max element %zu: %g, expected %g", i, dout[i], want);
    }
    free(in);
    free(out);
    free(din);
    free(dout);
}

static void alltoalls(void)
{
    size_t blocks[] = {1, 100, lim.eager_min - 64, lim.eager_max + 7, 1u << 20};
    for (size_t k = 0; k < sizeof(blocks) / sizeof(blocks[0]); k++) {
        size_t bl = blocks[k];
        unsigned char *s = t_malloc(bl * (size_t) t_size), *r = t_malloc(bl * (size_t) t_size);
        t_snap a, b;
        for (int p = 0; p < t_size; p++)
            t_fill(s + bl * (size_t) p, bl, t_seed((uint32_t) t_rank, (uint32_t) p, (uint32_t) bl));
        memset(r, 0, bl * (size_t) t_size);
        t_snap_take(&a);
        T_MPI(MPI_Alltoall(s, (int) bl, MPI_BYTE, r, (int) bl, MPI_BYTE, MPI_COMM_WORLD));
        t_snap_take(&b);
        for (int p = 0; p < t_size; p++) {
            char ctx[64];
            snprintf(ctx, sizeof(ctx), "Alltoall block %zu from %d", bl, p);
            t_check_data(r + bl * (size_t) p, bl,
                         t_seed((uint32_t) p, (uint32_t) t_rank, (uint32_t) bl), ctx);
        }
        if (t_pvars && bl >= (1u << 20)) {
            unsigned long long moved = 0;
            static const t_pv msgs[] = {T_PV_IMM_MSG,     T_PV_PREP_MSG, T_PV_ALLOC_MSG,
                                        T_PV_SRPIPE_MSG,  T_PV_BUFPIPE_MSG, T_PV_RGET_MSG,
                                        T_PV_RPUT_MSG,    T_PV_RDMAPIPE_MSG};
            for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++)
                moved += t_snap_delta(&a, &b, msgs[i]);
            T_CHECK(moved >= (unsigned long long) (t_size - 1),
                    "Alltoall of 1 MiB blocks moved the message counters by %llu only", moved);
        }
        free(s);
        free(r);
    }
    /* uneven blocks: rank p sends (p+1)*(q+1)*1000 bytes to q */
    {
        int *sc = t_malloc(sizeof(int) * (size_t) t_size),
            *sd = t_malloc(sizeof(int) * (size_t) t_size);
        int *rc = t_malloc(sizeof(int) * (size_t) t_size),
            *rd = t_malloc(sizeof(int) * (size_t) t_size);
        int st = 0, rt = 0;
        unsigned char *s, *r;
        for (int p = 0; p < t_size; p++) {
            sc[p] = (t_rank + 1) * (p + 1) * 1000 + p;
            sd[p] = st;
            st += sc[p] + 3;
            rc[p] = (p + 1) * (t_rank + 1) * 1000 + t_rank;
            rd[p] = rt;
            rt += rc[p] + 5;
        }
        s = t_malloc((size_t) st);
        r = t_malloc((size_t) rt);
        memset(r, GUARD, (size_t) rt);
        for (int p = 0; p < t_size; p++)
            t_fill(s + sd[p], (size_t) sc[p], t_seed((uint32_t) t_rank, (uint32_t) p, 77));
        T_MPI(MPI_Alltoallv(s, sc, sd, MPI_BYTE, r, rc, rd, MPI_BYTE, MPI_COMM_WORLD));
        for (int p = 0; p < t_size; p++) {
            t_check_data(r + rd[p], (size_t) rc[p], t_seed((uint32_t) p, (uint32_t) t_rank, 77),
                         "Alltoallv");
            t_check_guard(r + rd[p] + rc[p], 5, GUARD, "Alltoallv gap");
        }
        free(s);
        free(r);
        free(sc);
        free(sd);
        free(rc);
        free(rd);
    }
}

static void gather_scatter(void)
{
    size_t bl = lim.eager_max + 3;
    unsigned char *all = t_malloc(bl * (size_t) t_size), *mine = t_malloc(bl);
    for (int root = 0; root < t_size; root++) {
        t_fill(mine, bl, t_seed((uint32_t) t_rank, (uint32_t) root, 88));
        T_MPI(MPI_Gather(mine, (int) bl, MPI_BYTE, all, (int) bl, MPI_BYTE, root, MPI_COMM_WORLD));
        if (t_rank == root)
            for (int p = 0; p < t_size; p++)
                t_check_data(all + bl * (size_t) p, bl, t_seed((uint32_t) p, (uint32_t) root, 88),
                             "Gather");
        if (t_rank == root)
            for (int p = 0; p < t_size; p++)
                t_fill(all + bl * (size_t) p, bl, t_seed((uint32_t) p, (uint32_t) root, 99));
        memset(mine, 0, bl);
        T_MPI(MPI_Scatter(all, (int) bl, MPI_BYTE, mine, (int) bl, MPI_BYTE, root, MPI_COMM_WORLD));
        t_check_data(mine, bl, t_seed((uint32_t) t_rank, (uint32_t) root, 99), "Scatter");
    }
    free(all);
    free(mine);
}

int main(int argc, char **argv)
{
    size_t sizes[128];
    int n, tag = 100;
    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    t_limits_get(argc, argv, &lim);
    n = t_boundary_sizes(&lim, sizes, 128, 4u << 20);
    if (0 == t_rank)
        t_limits_print(&lim);

    proc_null_sendrecv();
    for (int i = 0; i < n; i++) {
        t_dt_kind rk = (t_dt_kind) ((i / 2) % T_DT_COUNT);
        /* stock ob1 over two BTLs overruns nested struct receive buffers
         * (unpacking a fragment at an offset); only under the stock PML */
        if (!t_pvars && lim.nbtl > 1 && T_DT_STRUCT == rk)
            rk = T_DT_INDEXED;
        ring_sendrecv(sizes[i], T_DT_CONTIG, T_DT_CONTIG, tag++);
        ring_sendrecv(sizes[i], (t_dt_kind) (i % T_DT_COUNT), rk, tag++);
        ring_replace(sizes[i], T_DT_CONTIG, tag++);
        if (i % 3 == 0)
            ring_replace(sizes[i], T_DT_VECTOR, tag++);
    }
    bcasts();
    allreduces();
    alltoalls();
    gather_scatter();
    return t_finalize();
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * osc_windows.c - osc/monitoring keeps one record per window: windows of
 * every flavor open at once (allocate, create, allocate_shared, dynamic;
 * under the default selection served by different OSC components, e.g.
 * sm for the shared one and rdma for the others), each counted exactly,
 * the calls it leaves alone (shared_query, attach) still the component's,
 * and each record dropped at MPI_Win_free in any order (the
 * osc_monitoring_windows count goes back to 0, also after 40 windows
 * created and freed in a row).
 *
 * Every rank puts k + 1 ints into window k of its right neighbour.
 */
#include <stdlib.h>
#include <string.h>

#include "tosc.h"

#define NWIN 4
#define CHURN 40
#define INTS 8

static MPI_Win win[NWIN];
static int *mem[NWIN];
static MPI_Aint dyn_disp; /* the right neighbour's attached buffer */

static void open_windows(int right)
{
    MPI_Aint mine, bytes = INTS * (MPI_Aint) sizeof(int);

    T_MPI(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem[0], &win[0]));
    mem[1] = calloc(INTS, sizeof(int));
    T_MPI(MPI_Win_create(mem[1], bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win[1]));
    T_MPI(MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem[2],
                                  &win[2]));
    mem[3] = calloc(INTS, sizeof(int));
    T_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win[3]));
    T_MPI(MPI_Win_attach(win[3], mem[3], bytes));
    memset(mem[0], 0, (size_t) bytes);
    memset(mem[2], 0, (size_t) bytes);
    T_MPI(MPI_Get_address(mem[3], &mine));
    {
        MPI_Aint *all = calloc((size_t) t_size, sizeof(MPI_Aint));
        T_MPI(MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD));
        dyn_disp = all[right];
        free(all);
    }
}

static void put_all(int right)
{
    int val[NWIN + 1];

    for (int k = 0; k < NWIN; k++) {
        for (int i = 0; i <= k; i++) {
            val[i] = 100 * t_rank + 10 * k + i;
        }
        T_MPI(MPI_Win_lock_all(0, win[k]));
        T_MPI(MPI_Put(val, k + 1, MPI_INT, right, 3 == k ? dyn_disp : 0, k + 1, MPI_INT, win[k]));
        T_MPI(MPI_Win_unlock_all(win[k]));
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void check_data(int left, int right)
{
    MPI_Aint size;
    int disp, *theirs;

    for (int k = 0; k < NWIN; k++) {
        T_MPI(MPI_Win_sync(win[k]));
        for (int i = 0; i <= k; i++) {
            T_CHECK(mem[k][i] == 100 * left + 10 * k + i, "window %d [%d] = %d", k, i, mem[k][i]);
        }
    }
    /* shared_query stays the component's own: the neighbour's segment,
     * holding what this rank put there. */
    T_MPI(MPI_Win_shared_query(win[2], right, &size, &disp, &theirs));
    T_CHECK(size == INTS * (MPI_Aint) sizeof(int) && disp == (int) sizeof(int),
            "shared_query: size %ld disp %d", (long) size, disp);
    for (int i = 0; i < 3; i++) {
        T_CHECK(theirs[i] == 100 * t_rank + 20 + i, "shared segment of %d [%d] = %d", right, i,
                theirs[i]);
    }
}

static void check_sent(MPI_T_pvar_session s, MPI_T_pvar_handle *h, int right,
                       unsigned long long count, unsigned long long bytes)
{
    unsigned long long *got = calloc((size_t) t_size, sizeof(*got));

    T_MPI(MPI_T_pvar_read(s, h[0], got));
    T_CHECK(got[right] == count, "sent_count[%d] = %llu, want %llu", right, got[right], count);
    T_MPI(MPI_T_pvar_read(s, h[1], got));
    T_CHECK(got[right] == bytes, "sent_size[%d] = %llu, want %llu", right, got[right], bytes);
    free(got);
}

/* Frees in an order unlike creation, checking the record count each time. */
static void free_windows(MPI_T_pvar_session s)
{
    static const int order[NWIN] = {2, 0, 3, 1};
    unsigned long long held;

    for (int j = 0; j < NWIN; j++) {
        int k = order[j];
        if (3 == k) {
            T_MPI(MPI_Win_detach(win[3], mem[3]));
        }
        T_MPI(MPI_Win_free(&win[k]));
        held = tosc_windows_held(s);
        T_CHECK(held == (unsigned long long) (NWIN - 1 - j),
                "%llu windows held after freeing %d of %d", held, j + 1, NWIN);
    }
    free(mem[1]);
    free(mem[3]);
}

static void churn(int right)
{
    for (int n = 0; n < CHURN; n++) {
        MPI_Win w;
        int *base, one = n;

        T_MPI(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w));
        T_MPI(MPI_Win_fence(0, w));
        T_MPI(MPI_Put(&one, 1, MPI_INT, right, 0, 1, MPI_INT, w));
        T_MPI(MPI_Win_fence(0, w));
        T_CHECK(*base == n, "window %d of the churn holds %d", n, *base);
        T_MPI(MPI_Win_free(&w));
    }
}

int main(int argc, char **argv)
{
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h[2];
    int right, left;
    unsigned long long held;

    setenv("OB1X_TEST_NO_PVARS", "1", 1); /* no pml_ob1x counters needed */
    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    right = (t_rank + 1) % t_size;
    left = (t_rank + t_size - 1) % t_size;
    T_MPI(MPI_T_pvar_session_create(&s));
    h[0] = tosc_open_peer_var(s, "osc_monitoring_messages_sent_count");
    h[1] = tosc_open_peer_var(s, "osc_monitoring_messages_sent_size");

    open_windows(right);
    held = tosc_windows_held(s);
    T_CHECK(NWIN == held, "%llu windows held with %d open", held, NWIN);
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    put_all(right);
    check_data(left, right);
    check_sent(s, h, right, NWIN, 4 * (1 + 2 + 3 + 4));
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    free_windows(s);

    churn(right);
    held = tosc_windows_held(s);
    T_CHECK(0 == held, "%llu windows held after the churn", held);
    check_sent(s, h, right, NWIN + CHURN, 4 * (1 + 2 + 3 + 4) + 4 * CHURN);

    MPI_T_pvar_handle_free(s, &h[0]);
    MPI_T_pvar_handle_free(s, &h[1]);
    MPI_T_pvar_session_free(&s);
    return t_finalize();
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * ofi_shortjob.c - one short one-sided exchange over btl/ofi (a get, a
 * fetch-and-add, a put, all checked) and MPI_Finalize right after it: the
 * job that ofi_finalize.sh runs many times in a row, so that a finalize
 * racing a provider's own progress thread (sockets) shows as a crash.
 */
#include "btl_util.h"

#define PROG "btl/ofi_shortjob"

int main(int argc, char **argv)
{
    int64_t *base, got[4], one = 1, old = -1;
    int peer;
    MPI_Win win;

    bu_init(&argc, &argv);
    peer = (bu_rank + 1) % bu_size;
    base = calloc(64, sizeof(*base));
    BU_CHECK(base, "out of memory");
    for (int i = 0; i < 64; ++i) {
        base[i] = bu_rank * 1000 + i;
    }
    MPI_Win_create(base, 64 * sizeof(*base), sizeof(*base), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_lock_all(0, win);
    MPI_Get(got, 4, MPI_INT64_T, peer, 8, 4, MPI_INT64_T, win);
    MPI_Fetch_and_op(&one, &old, MPI_INT64_T, peer, 0, MPI_SUM, win);
    MPI_Win_flush(peer, win);
    BU_CHECK(got[0] == peer * 1000 + 8 && got[3] == peer * 1000 + 11, "get read %lld, %lld",
             (long long) got[0], (long long) got[3]);
    BU_CHECK(old == peer * 1000, "fetch-and-add returned %lld, expected %d", (long long) old,
             peer * 1000);
    MPI_Put(&old, 1, MPI_INT64_T, peer, 63, 1, MPI_INT64_T, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    BU_CHECK(base[0] == bu_rank * 1000 + 1, "our counter holds %lld", (long long) base[0]);
    BU_CHECK(base[63] == bu_rank * 1000, "the put left %lld", (long long) base[63]);
    MPI_Win_free(&win);
    free(base);
    return bu_finalize(PROG);
}

/*
 * isend_eager.c - non-blocking eager sends above sendi_max go out without a
 * request: complete at once when the descriptor holds a copy of the data or
 * the BTL finished it, and given a request after the fact when the BTL keeps
 * a descriptor that still reads the user's buffer (pml_ob1x_late_requests).
 *
 * Rank 0 posts `count` MPI_Isend of `len` bytes (sendi_max < len <=
 * eager_limit - 64) to rank 1, which has posted nothing yet. Then rank 1
 * receives them in order and checks content; rank 0 checks:
 *  - the eager counters moved by exactly `count`;
 *  - late_requests moved by at most `count` (after a late request the next
 *    sends to that peer allocate their request first);
 *  - --expect-late: late_requests moved (the BTL kept some descriptor, e.g.
 *    tcp while it makes the connection);
 *  - --expect-at-once=N: at least N sends were complete when MPI_Isend
 *    returned (shared-memory BTLs copy eager data: all of them);
 *  - --expect-no-late: late_requests did not move (MPI_THREAD_MULTIPLE
 *    always uses the request path, or the BTL never keeps the user's data).
 * A cancel of a request-less send is a no-op reported as not cancelled.
 *
 * Arguments: --len=N (default 1024), --count=N (default 256), --warmup=N
 * (zero-byte ping-pongs first, so that connections and fast boxes exist),
 * --threads (MPI_THREAD_MULTIPLE), --expect-late, --expect-no-late.
 */
#include "tpml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG 31
#define TAG_GO 32

static long arg_long(int argc, char **argv, const char *name, long dflt)
{
    size_t n = strlen(name);
    for (int i = 1; i < argc; i++) {
        if (0 == strncmp(argv[i], name, n) && '=' == argv[i][n])
            return atol(argv[i] + n + 1);
    }
    return dflt;
}

static void warm_up(int rounds)
{
    /* Shared-memory BTLs set up a peer's fast box only after some traffic. */
    for (int i = 0; i < rounds; i++) {
        if (0 == t_rank) {
            T_MPI(MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD));
            T_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else if (1 == t_rank) {
            T_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            T_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD));
        }
    }
}

static void sender(size_t len, int count, int expect_late, int expect_no_late, int at_once)
{
    unsigned char *data = t_malloc(len * (size_t) count);
    MPI_Request *r = t_malloc(sizeof(MPI_Request) * (size_t) count);
    unsigned long long late, eager;
    int done_at_once = 0;
    t_snap a, b;

    for (int i = 0; i < count; i++)
        t_msg_fill(data + len * (size_t) i, len, 0, TAG, (uint32_t) i);
    t_snap_take(&a);
    for (int i = 0; i < count; i++) {
        MPI_Status st;
        int flag = 0;
        T_MPI(
            MPI_Isend(data + len * (size_t) i, (int) len, MPI_BYTE, 1, TAG, MPI_COMM_WORLD, &r[i]));
        T_MPI(MPI_Request_get_status(r[i], &flag, &st));
        done_at_once += flag;
    }
    t_snap_take(&b);
    {
        /* Cancelling a send that already left is allowed and a no-op. */
        int cancelled = 1;
        MPI_Status st;
        T_MPI(MPI_Cancel(&r[0]));
        T_MPI(MPI_Wait(&r[0], &st));
        T_MPI(MPI_Test_cancelled(&st, &cancelled));
        T_CHECK(!cancelled, "a send that already left reports cancelled");
    }
    T_MPI(MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD));
    T_MPI(MPI_Waitall(count, r, MPI_STATUSES_IGNORE));

    late = t_snap_delta(&a, &b, T_PV_LATE_REQ);
    eager = t_snap_delta(&a, &b, T_PV_PREP_MSG) + t_snap_delta(&a, &b, T_PV_ALLOC_MSG) +
            t_snap_delta(&a, &b, T_PV_IMM_MSG);
    t_log("%d sends of %zu B: eager %llu, late requests %llu, complete at once %d", count, len,
          eager, late, done_at_once);
    if (t_pvars) {
        T_CHECK(eager == (unsigned long long) count, "eager counters moved by %llu, expected %d",
                eager, count);
        T_CHECK(late <= (unsigned long long) count, "late_requests moved by %llu > %d", late,
                count);
        T_CHECK(!expect_late || late > 0, "no late request: the BTL never kept a descriptor");
        T_CHECK(!expect_no_late || 0 == late, "late_requests moved by %llu, expected 0", late);
        T_CHECK(done_at_once >= at_once, "%d sends complete at once, expected at least %d",
                done_at_once, at_once);
    }
    free(r);
    free(data);
}

static void receiver(size_t len, int count)
{
    unsigned char *buf = t_malloc(len);
    T_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < count; i++) {
        MPI_Status st;
        memset(buf, 0, len);
        T_MPI(MPI_Recv(buf, (int) len, MPI_BYTE, 0, TAG, MPI_COMM_WORLD, &st));
        T_CHECK(t_msg_check(buf, &st, (uint32_t) i, "isend_eager") == (uint32_t) i,
                "message %d out of order", i);
    }
    free(buf);
}

int main(int argc, char **argv)
{
    size_t len = (size_t) arg_long(argc, argv, "--len", 1024);
    int count = (int) arg_long(argc, argv, "--count", 256);
    int threads = t_has_arg(argc, argv, "--threads");
    t_limits lim;

    t_init(&argc, &argv, threads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE);
    T_CHECK(t_size >= 2, "needs at least 2 ranks");
    t_limits_get(argc, argv, &lim);
    T_CHECK(len > lim.sendi_max && len + 64 <= lim.eager_min,
            "--len=%zu must be above sendi_max %llu and at most eager_limit-64 (%llu)", len,
            lim.sendi_max, lim.eager_min - 64);
    warm_up((int) arg_long(argc, argv, "--warmup", 0));
    if (0 == t_rank) {
        sender(len, count, t_has_arg(argc, argv, "--expect-late"),
               t_has_arg(argc, argv, "--expect-no-late"),
               (int) arg_long(argc, argv, "--expect-at-once", 0));
    } else if (1 == t_rank) {
        receiver(len, count);
    }
    return t_finalize();
}

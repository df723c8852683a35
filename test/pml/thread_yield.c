/*
 * thread_yield.c - under MPI_THREAD_MULTIPLE, ob1x turns on
 * mpi_yield_when_idle (pml_ob1x_thread_yield) unless the user set it.
 *
 * Reads the mpi_yield_when_idle control variable after MPI_Init_thread
 * (MPI_Init applies it to opal_progress at its end) and compares it with
 * expect=:
 *   expect=1        yielding is on;
 *   expect=0        it is off;
 *   expect=default  Open MPI's own default: on only when the node is
 *                   oversubscribed (the mpi_oversubscribe variable).
 * level=single asks for MPI_THREAD_SINGLE instead. A ping-pong checks that
 * the job runs.
 */
#include "tpml.h"

#include <stdlib.h>
#include <string.h>

/* Open MPI's boolean variables read back as MPI_C_BOOL (or MPI_INT). */
static unsigned long long cvar(const char *name)
{
    MPI_T_cvar_handle h;
    MPI_Datatype dt;
    MPI_T_enum en;
    int idx, verb, bind, scope, count, nlen = 0, dlen = 0;
    union {
        int i;
        _Bool b;
        unsigned long long u;
    } v;

    memset(&v, 0, sizeof(v));
    T_CHECK(MPI_SUCCESS == MPI_T_cvar_get_index(name, &idx), "no control variable %s", name);
    T_MPI(MPI_T_cvar_get_info(idx, NULL, &nlen, &verb, &dt, &en, NULL, &dlen, &bind, &scope));
    T_MPI(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count));
    T_MPI(MPI_T_cvar_read(h, &v));
    MPI_T_cvar_handle_free(&h);
    if (MPI_C_BOOL == dt) {
        return v.b;
    }
    T_CHECK(MPI_INT == dt, "control variable %s has an unexpected type", name);
    return (unsigned long long) v.i;
}

int main(int argc, char **argv)
{
    const char *level = t_arg_value(argc, argv, "level");
    const char *expect = t_arg_value(argc, argv, "expect");
    int single = NULL != level && 0 == strcmp(level, "single");
    unsigned long long want, got;
    int x;

    t_init(&argc, &argv, single ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE);
    T_CHECK(2 == t_size, "needs exactly 2 ranks");
    T_CHECK(NULL != expect, "usage: thread_yield expect=0|1|default [level=single]");
    x = t_rank;
    got = cvar("mpi_yield_when_idle");
    want = 0 == strcmp(expect, "default") ? cvar("mpi_oversubscribe") : strtoull(expect, NULL, 10);
    t_log("mpi_yield_when_idle = %llu (expected %llu, %s)", got, want, expect);
    T_CHECK(got == want, "mpi_yield_when_idle is %llu, expected %llu (expect=%s, %s)", got, want,
            expect, single ? "MPI_THREAD_SINGLE" : "MPI_THREAD_MULTIPLE");

    if (0 == t_rank) {
        T_MPI(MPI_Send(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD));
        T_MPI(MPI_Recv(&x, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        T_CHECK(1 == x, "ping-pong returned %d", x);
    } else {
        T_MPI(MPI_Recv(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        T_CHECK(0 == x, "ping carried %d", x);
        x = t_rank;
        T_MPI(MPI_Send(&x, 1, MPI_INT, 0, 8, MPI_COMM_WORLD));
    }
    return t_finalize();
}

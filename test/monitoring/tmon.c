/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * tmon.c - helpers of the monitoring tests (tmon.h). Built into each
 * monitoring test with #include, as the harness builds one .c per test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmon.h"

MPI_T_pvar_session tmon_session;

void tmon_init(int *argc, char ***argv)
{
    int provided;
    const char *slash = strrchr((*argv)[0], '/');

    t_prog = NULL != slash ? slash + 1 : (*argv)[0];
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* after MPI_Init, as the paper's Fig. 1 */
    T_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    T_MPI(MPI_T_pvar_session_create(&tmon_session));
}

void tmon_finalize(void)
{
    T_MPI(MPI_T_pvar_session_free(&tmon_session));
    T_MPI(MPI_T_finalize());
    MPI_Finalize();
    if (0 == t_rank) {
        printf("PASS: %s\n", t_prog);
    }
}

int tmon_cvar_int(const char *name)
{
    int idx, count, value = -1;
    MPI_T_cvar_handle h;

    T_MPI(MPI_T_cvar_get_index(name, &idx));
    T_MPI(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count));
    T_MPI(MPI_T_cvar_read(h, &value));
    T_MPI(MPI_T_cvar_handle_free(&h));
    return value;
}

int tmon_pvar_index(const char *name, int var_class, MPI_Datatype type, int bind)
{
    int idx, rc, verb, cls, b, ro, cont, atomic, nlen = 256, dlen = 0;
    char n[256];
    MPI_Datatype dt;
    MPI_T_enum en;

    rc = MPI_T_pvar_get_index(name, var_class < 0 ? MPI_T_PVAR_CLASS_SIZE : var_class, &idx);
    T_CHECK(MPI_SUCCESS == rc, "pvar %s not found after MPI_Init (rc %d)", name, rc);
    T_MPI(MPI_T_pvar_get_info(idx, n, &nlen, &verb, &cls, &dt, &en, NULL, &dlen, &b, &ro, &cont,
                              &atomic));
    if (var_class >= 0) {
        T_CHECK(cls == var_class && dt == type && b == bind,
                "%s: class %d datatype %s binding %d, expected %d, %s, %d", name, cls,
                dt == MPI_UNSIGNED_LONG_LONG ? "ull" : "other", b, var_class,
                type == MPI_UNSIGNED_LONG_LONG ? "ull" : "other", bind);
    }
    return idx;
}

MPI_T_pvar_handle tmon_handle(const char *name, MPI_Comm comm, int *count)
{
    MPI_T_pvar_handle h;
    int idx =
        tmon_pvar_index(name, MPI_T_PVAR_CLASS_SIZE, MPI_UNSIGNED_LONG_LONG, MPI_T_BIND_MPI_COMM);

    T_MPI(MPI_T_pvar_handle_alloc(tmon_session, idx, &comm, &h, count));
    return h;
}

void tmon_read(MPI_T_pvar_handle h, unsigned long long *values)
{
    T_MPI(MPI_T_pvar_read(tmon_session, h, values));
}

int tmon_no_persistent = 0;

void tmon_pattern(int with_barrier)
{
    int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    char buf[TMON_BYTES], in[TMON_BYTES];
    MPI_Request req;

    memset(buf, t_rank, sizeof(buf));
    for (int r = 0; r < TMON_ROUNDS; ++r) {
        int n = r % 2 ? TMON_BYTES_ODD : TMON_BYTES;

        T_MPI(MPI_Sendrecv(buf, n, MPI_BYTE, right, TMON_TAG, in, n, MPI_BYTE, left, TMON_TAG,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        T_CHECK(in[0] == (char) left, "ring data from %d wrong", left);
    }
    T_MPI(MPI_Send_init(buf, TMON_PBYTES, MPI_BYTE, right, TMON_PTAG, MPI_COMM_WORLD, &req));
    for (int s = 0; s < (tmon_no_persistent ? 0 : 2); ++s) {
        T_MPI(MPI_Start(&req));
        T_MPI(MPI_Recv(in, TMON_PBYTES, MPI_BYTE, left, TMON_PTAG, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
        T_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    T_MPI(MPI_Request_free(&req));
    T_MPI(MPI_Sendrecv(NULL, 0, MPI_BYTE, right, TMON_ZTAG, NULL, 0, MPI_BYTE, left, TMON_ZTAG,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (with_barrier) {
        T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
}

int tmon_barrier_msgs(int from, int to)
{
    return from != to && (0 == from || 0 == to) ? 1 : 0;
}

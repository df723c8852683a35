/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * ofi_pvars.h - the btl_ofi_* MPI_T counters for the test/ofi programs
 * (header only, on top of test/btl/btl_util.h): every counter whose name
 * starts with btl_ofi_ is opened at start, totalled over the ranks at the
 * end and printed; "moved=A,B|C" then requires btl_ofi_A to have grown,
 * and btl_ofi_B or btl_ofi_C.
 */
#ifndef OB1X_TEST_OFI_PVARS_H
#define OB1X_TEST_OFI_PVARS_H

#include "../btl/btl_util.h"

#define OP_MAX 64

static struct {
    MPI_T_pvar_session session;
    int n;
    char name[OP_MAX][80];
    MPI_T_pvar_handle handle[OP_MAX];
    int count[OP_MAX]; /* elements of the handle (one per module, or a sum) */
    unsigned long long total[OP_MAX];
} op_pv;

/* Opens a handle on every btl_ofi_* counter (call after MPI_T_init_thread,
 * before the traffic: counters count from here). */
static void op_start(void)
{
    int num = 0;

    if (MPI_SUCCESS != MPI_T_pvar_session_create(&op_pv.session)) {
        return;
    }
    MPI_T_pvar_get_num(&num);
    for (int i = 0; i < num && op_pv.n < OP_MAX; ++i) {
        char name[80], desc[8];
        int nlen = sizeof(name), dlen = sizeof(desc), verb, cls, bind, ro, cont, atom, count;
        MPI_Datatype dt;
        MPI_T_enum en;

        if (MPI_SUCCESS != MPI_T_pvar_get_info(i, name, &nlen, &verb, &cls, &dt, &en, desc, &dlen,
                                               &bind, &ro, &cont, &atom) ||
            0 != strncmp(name, "btl_ofi_", 8) || MPI_T_PVAR_CLASS_COUNTER != cls ||
            (MPI_UNSIGNED_LONG_LONG != dt && MPI_UNSIGNED_LONG != dt && MPI_UINT64_T != dt)) {
            continue;
        }
        if (MPI_SUCCESS != MPI_T_pvar_handle_alloc(op_pv.session, i, NULL,
                                                   &op_pv.handle[op_pv.n], &count) ||
            count < 1 || count > 64) {
            continue;
        }
        snprintf(op_pv.name[op_pv.n], sizeof(op_pv.name[0]), "%s", name);
        op_pv.count[op_pv.n++] = count;
    }
}

/* Totals every counter over MPI_COMM_WORLD (collective: every rank must
 * have found the same counters, which they do when they load one BTL). */
static void op_total(void)
{
    for (int i = 0; i < op_pv.n; ++i) {
        unsigned long long v[64] = {0}, mine = 0;
        MPI_T_pvar_read(op_pv.session, op_pv.handle[i], v);
        for (int k = 0; k < op_pv.count[i]; ++k) {
            mine += v[k];
        }
        MPI_Allreduce(&mine, &op_pv.total[i], 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    }
}

/* The total of btl_ofi_<short>, or -1 when there is no such counter. */
static long long op_value(const char *short_name)
{
    char name[96];
    snprintf(name, sizeof(name), "btl_ofi_%s", short_name);
    for (int i = 0; i < op_pv.n; ++i) {
        if (0 == strcmp(op_pv.name[i], name)) {
            return (long long) op_pv.total[i];
        }
    }
    return -1;
}

/* Totals, prints the counters that moved, and (rank 0) checks moved=...
 * from argv. Collective. */
static void op_check(const char *prog, int argc, char **argv)
{
    const char *want = bu_arg(argc, argv, "moved");
    char list[256], *save = NULL;

    op_total();
    if (0 != bu_rank) {
        return;
    }
    printf("%s: btl_ofi counters (%d found):", prog, op_pv.n);
    for (int i = 0; i < op_pv.n; ++i) {
        if (op_pv.total[i]) {
            printf(" %s=%llu", op_pv.name[i] + 8, op_pv.total[i]);
        }
    }
    printf("\n");
    if (NULL == want) {
        return;
    }
    snprintf(list, sizeof(list), "%s", want);
    for (char *item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char alt[128], *save2 = NULL;
        int ok = 0;
        snprintf(alt, sizeof(alt), "%s", item);
        for (char *a = strtok_r(alt, "|", &save2); a; a = strtok_r(NULL, "|", &save2)) {
            long long v = op_value(a);
            BU_CHECK(v >= 0, "there is no counter btl_ofi_%s (is our btl/ofi loaded?)", a);
            ok |= v > 0;
        }
        BU_CHECK(ok, "btl_ofi_%s did not move: the traffic did not go through btl/ofi", item);
    }
}

#endif

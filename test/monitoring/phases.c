/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * phases.c - phases through the pml_monitoring_flush pvar, as Open MPI's
 * documentation describes them: write a base name into the flush handle,
 * start it, communicate, stop it: each process writes
 * <base>.<world rank>.prof and the counts restart from zero. Two phases
 * with different patterns go to two files, which every process parses back
 * and compares with the pml_monitoring_messages_count/size values it read
 * just before the stop. argv[1]: a directory for the files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmon.c"

static MPI_T_pvar_handle flush_h, cnt_h, siz_h;
static unsigned long long *cnt, *siz;

/* Reads the E lines of this process's file of phase base into per-peer
 * arrays; checks the sender column. */
static void parse(const char *base, unsigned long long *fc, unsigned long long *fs)
{
    char path[4096], line[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s.%d.prof", base, t_rank);
    f = fopen(path, "r");
    T_CHECK(NULL != f, "phase file %s not written", path);
    memset(fc, 0, (size_t) t_size * sizeof(*fc));
    memset(fs, 0, (size_t) t_size * sizeof(*fs));
    while (NULL != fgets(line, sizeof(line), f)) {
        int me, peer;
        unsigned long long b, m;
        if (4 == sscanf(line, "E\t%d\t%d\t%llu bytes\t%llu msgs sent\t", &me, &peer, &b, &m)) {
            T_CHECK(me == t_rank && peer >= 0 && peer < t_size, "bad E line in %s: %s", path, line);
            fc[peer] = m;
            fs[peer] = b;
        }
    }
    fclose(f);
}

static void phase(const char *dir, int n, void (*pattern)(void))
{
    char base[4096];
    unsigned long long fc[64], fs[64];

    snprintf(base, sizeof(base), "%s/phase%d", dir, n);
    T_MPI(MPI_T_pvar_write(tmon_session, flush_h, base));
    T_MPI(MPI_T_pvar_start(tmon_session, flush_h));
    pattern();
    tmon_read(cnt_h, cnt);
    tmon_read(siz_h, siz);
    T_MPI(MPI_T_pvar_stop(tmon_session, flush_h));
    parse(base, fc, fs);
    for (int p = 0; p < t_size; ++p) {
        T_CHECK(fc[p] == cnt[p] && fs[p] == siz[p],
                "phase %d, peer %d: file %llu msgs %llu bytes, pvars %llu msgs %llu bytes", n, p,
                fc[p], fs[p], cnt[p], siz[p]);
    }
}

static void pattern1(void)
{
    tmon_pattern(0);
}

/* Three messages of 100 bytes to the left neighbour. */
static void pattern2(void)
{
    int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    char buf[100] = {0}, in[100];

    for (int i = 0; i < 3; ++i) {
        T_MPI(MPI_Sendrecv(buf, 100, MPI_BYTE, left, 5, in, 100, MPI_BYTE, right, 5, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    }
}

int main(int argc, char **argv)
{
    int count, idx, right, left;

    tmon_init(&argc, &argv);
    T_CHECK(argc > 1, "usage: phases DIR");
    T_CHECK(t_size <= 64, "at most 64 processes");
    right = (t_rank + 1) % t_size;
    left = (t_rank + t_size - 1) % t_size;
    idx = tmon_pvar_index("pml_monitoring_flush", MPI_T_PVAR_CLASS_GENERIC, MPI_CHAR,
                          MPI_T_BIND_NO_OBJECT);
    T_MPI(MPI_T_pvar_handle_alloc(tmon_session, idx, NULL, &flush_h, &count));
    cnt_h = tmon_handle("pml_monitoring_messages_count", MPI_COMM_WORLD, &count);
    siz_h = tmon_handle("pml_monitoring_messages_size", MPI_COMM_WORLD, &count);
    cnt = calloc((size_t) count, sizeof(*cnt));
    siz = calloc((size_t) count, sizeof(*siz));
    T_MPI(MPI_T_pvar_start(tmon_session, cnt_h));
    T_MPI(MPI_T_pvar_start(tmon_session, siz_h));

    phase(argv[1], 1, pattern1);
    T_CHECK(cnt[right] == TMON_EXT_COUNT && siz[right] == TMON_EXT_BYTES,
            "phase 1: %llu msgs %llu bytes to the right, expected %d %d", cnt[right], siz[right],
            TMON_EXT_COUNT, TMON_EXT_BYTES);
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    phase(argv[1], 2, pattern2);
    /* phase 2 starts from zero: only its own messages (with 2 processes
     * left and right are the same peer) */
    T_CHECK(cnt[left] == 3 && siz[left] == 300 && (left == right || 0 == cnt[right]),
            "phase 2: %llu msgs %llu bytes to the left, %llu to the right; expected 3 300 0",
            cnt[left], siz[left], cnt[right]);
    T_MPI(MPI_T_pvar_stop(tmon_session, cnt_h));
    T_MPI(MPI_T_pvar_stop(tmon_session, siz_h));
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &cnt_h));
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &siz_h));
    T_MPI(MPI_T_pvar_handle_free(tmon_session, &flush_h));
    tmon_finalize();
    return 0;
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smipc.c - btl/smcuda's CUDA IPC end to end (pml/ob1x, btl self,smcuda,
 * the driver emulation): rank 0 sends device buffers, rank 1 receives
 * them (into device memory, or host memory with "host-dst"); every
 * message's content is checked; the btl_smcuda_ipc_* MPI_T variables and
 * the emulation's call counts say how it went. The first argument:
 *   ok        IPC set up, then a repeated buffer: one cuIpcOpenMemHandle
 *   realloc   the buffer freed and allocated again at the same address:
 *             a miss (new buffer id), the stale mapping closed, new data
 *   evict     4 buffers in turn through a cache of 2 (run with
 *             btl_smcuda_cuda_ipc_cache_size 2): evictions, every handle
 *             opened is closed by MPI_Finalize
 *   split     pieces=N: each IPC message is N cuMemcpyAsync on the reader
 *   refused   no IPC (devices without peer access): IPC_BAD on both sides,
 *             messages staged and correct
 *   notready  rank 1 uses no device at first (NOTREADY), then does: IPC on
 *   neverready rank 1 never uses a device: rank 0 gives up (IPC_BAD)
 *   openfail  cuIpcOpenMemHandle fails on rank 1: the message still
 *             arrives, correct (the PML's fallback)
 * Run by smipc_run.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_ob1x_cuda.h"
#include "cuemu.h"
#include "tpml.h"

#define LEN (1024 * 1024)

/* Reads an MPI_T variable by name. A counter's handle reads what it
 * counted since the handle was made: handles are made once, at the first
 * read (pv_init, before any traffic). */
static MPI_T_pvar_session pv_session;
static struct {
    const char *name;
    MPI_T_pvar_handle h;
} pv_handles[16];

static unsigned long long pv(const char *name)
{
    unsigned long long v = 0;
    int i, idx, count;

    for (i = 0; i < 16 && NULL != pv_handles[i].name; i++) {
        if (0 == strcmp(pv_handles[i].name, name)) {
            break;
        }
    }
    T_CHECK(i < 16, "too many variables");
    if (NULL == pv_handles[i].name) {
        if (MPI_SUCCESS != MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx)) {
            T_CHECK(MPI_SUCCESS == MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_LEVEL, &idx),
                    "no MPI_T variable %s", name);
        }
        T_MPI(MPI_T_pvar_handle_alloc(pv_session, idx, NULL, &pv_handles[i].h, &count));
        pv_handles[i].name = name;
    }
    T_MPI(MPI_T_pvar_read(pv_session, pv_handles[i].h, &v));
    return v;
}

static void pv_init(void)
{
    static const char *const names[] = {
        "btl_smcuda_ipc_setups_ok",       "btl_smcuda_ipc_setups_bad",
        "btl_smcuda_ipc_cache_hits",      "btl_smcuda_ipc_cache_misses",
        "btl_smcuda_ipc_cache_evictions", "btl_smcuda_ipc_bytes",
        "btl_smcuda_ipc_peers",           "btl_smcuda_ipc_peer_mask"};

    T_MPI(MPI_T_pvar_session_create(&pv_session));
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        (void) pv(names[i]);
    }
}

static void pv_fini(void)
{
    for (int i = 0; i < 16 && NULL != pv_handles[i].name; i++) {
        MPI_T_pvar_handle_free(pv_session, &pv_handles[i].h);
    }
    MPI_T_pvar_session_free(&pv_session);
}

static void fill(char *buf, size_t len, int seed)
{
    for (size_t i = 0; i < len; i++) {
        buf[i] = (char) (i * 7 + (size_t) seed * 131 + i / 4096);
    }
}

/* Marks a device buffer as used by this process (what the PML's
 * classification of its buffers does): btl/smcuda answers IPC requests
 * from then on. */
static void use_device(void *dev)
{
    ob1x_cuda_ptr_info_t info;

    T_CHECK(0 == ob1x_cuda_classify(dev, 1, &info) && OB1X_CUDA_MEM_DEVICE == info.type,
            "not device memory");
}

/* Rank 0: device buffer buf, seed. */
static void send_dev(char *buf, int seed, int to)
{
    static char host[LEN];

    fill(host, LEN, seed);
    T_CHECK(0 == cuemu_memcpy(buf, host, LEN), "cuemu_memcpy");
    T_MPI(MPI_Send(buf, LEN, MPI_BYTE, to, seed, MPI_COMM_WORLD));
}

/* Rank 1: receives seed into dst (device or host), checks it. */
static void recv_check(char *dst, bool dev, int seed, int from)
{
    static char host[LEN], want[LEN];

    memset(host, 0, LEN);
    if (dev) {
        T_CHECK(0 == cuemu_memcpy(dst, host, LEN), "cuemu_memcpy");
    } else {
        memset(dst, 0, LEN);
    }
    T_MPI(MPI_Recv(dst, LEN, MPI_BYTE, from, seed, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (dev) {
        T_CHECK(0 == cuemu_memcpy(host, dst, LEN), "cuemu_memcpy");
    } else {
        memcpy(host, dst, LEN);
    }
    fill(want, LEN, seed);
    T_CHECK(0 == memcmp(host, want, LEN), "message %d: wrong content", seed);
}

/* One message both ways of synchronisation: rank 1 has handled what rank
 * 0 sent before (control messages keep their order). */
static void sync_pair(void)
{
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static bool has(int argc, char **argv, const char *a)
{
    return t_has_arg(argc, argv, a);
}

/* Messages until IPC is on (rank 0 asks, rank 1 answers), at most 8. */
static int warm_up(char *sbuf, char *rbuf, bool dev, int *seed)
{
    int on = 0;

    for (int i = 0; i < 8 && !on; i++) {
        if (0 == t_rank) {
            send_dev(sbuf, ++*seed, 1);
        } else {
            recv_check(rbuf, dev, ++*seed, 0);
        }
        sync_pair();
        on = (int) pv("btl_smcuda_ipc_peers");
        T_MPI(MPI_Allreduce(MPI_IN_PLACE, &on, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    }
    return on;
}

/* Sends n messages from buffer sbuf (rank 0) into rbuf (rank 1). */
static void stream(char *sbuf, char *rbuf, bool dev, int *seed, int n)
{
    for (int i = 0; i < n; i++) {
        if (0 == t_rank) {
            send_dev(sbuf, ++*seed, 1);
        } else {
            recv_check(rbuf, dev, ++*seed, 0);
        }
    }
    sync_pair();
}

static void case_ok(char *sbuf, char *rbuf, bool dev, int *seed)
{
    unsigned long long opens, bytes, hits;

    T_CHECK(warm_up(sbuf, rbuf, dev, seed), "IPC never came on");
    T_CHECK(1 == pv("btl_smcuda_ipc_setups_ok") && 0 == pv("btl_smcuda_ipc_setups_bad"),
            "setups ok %llu bad %llu", pv("btl_smcuda_ipc_setups_ok"),
            pv("btl_smcuda_ipc_setups_bad"));
    T_CHECK(pv("btl_smcuda_ipc_peer_mask") == (1ull << (1 - t_rank)), "peer mask %#llx",
            pv("btl_smcuda_ipc_peer_mask"));
    opens = cuemu_count("cuIpcOpenMemHandle");
    bytes = pv("btl_smcuda_ipc_bytes");
    hits = pv("btl_smcuda_ipc_cache_hits");
    stream(sbuf, rbuf, dev, seed, 5);
    if (1 == t_rank) {
        T_CHECK(bytes + 5ull * LEN == pv("btl_smcuda_ipc_bytes"), "ipc bytes %llu -> %llu", bytes,
                pv("btl_smcuda_ipc_bytes"));
        T_CHECK(opens <= 1 && 1 == cuemu_count("cuIpcOpenMemHandle"),
                "a repeated buffer opened again: %lu cuIpcOpenMemHandle",
                cuemu_count("cuIpcOpenMemHandle"));
        T_CHECK(1 == pv("btl_smcuda_ipc_cache_misses") &&
                    hits + 4 == pv("btl_smcuda_ipc_cache_hits"),
                "misses %llu hits %llu", pv("btl_smcuda_ipc_cache_misses"),
                pv("btl_smcuda_ipc_cache_hits"));
    }
}

static void case_realloc(char **sbuf, char *rbuf, bool dev, int *seed)
{
    char *again;

    case_ok(*sbuf, rbuf, dev, seed);
    if (0 == t_rank) {
        cuemu_free(*sbuf);
        again = cuemu_malloc(LEN, 0);
        T_CHECK(again == *sbuf, "the emulation did not reuse the address");
    }
    stream(*sbuf, rbuf, dev, seed, 2);
    if (1 == t_rank) {
        T_CHECK(2 == pv("btl_smcuda_ipc_cache_misses") && 2 == cuemu_count("cuIpcOpenMemHandle"),
                "the reallocation was not opened anew (misses %llu)",
                pv("btl_smcuda_ipc_cache_misses"));
        T_CHECK(1 == pv("btl_smcuda_ipc_cache_evictions") &&
                    1 == cuemu_count("cuIpcCloseMemHandle"),
                "the stale mapping was not closed (evictions %llu)",
                pv("btl_smcuda_ipc_cache_evictions"));
    }
}

static void case_evict(char *sbuf, char *rbuf, bool dev, int *seed)
{
    char *more[4] = {sbuf, NULL, NULL, NULL};

    T_CHECK(warm_up(sbuf, rbuf, dev, seed), "IPC never came on");
    for (int i = 1; i < 4; i++) {
        more[i] = 0 == t_rank ? cuemu_malloc(LEN, 0) : NULL;
    }
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 4; i++) {
            stream(more[i], rbuf, dev, seed, 1);
        }
    }
    if (1 == t_rank) {
        /* 4 buffers in turn through 2 entries: every get misses (the
         * warm-up's buffer is the first of them) */
        T_CHECK(pv("btl_smcuda_ipc_cache_misses") >= 8 && pv("btl_smcuda_ipc_cache_evictions") >= 6,
                "misses %llu evictions %llu", pv("btl_smcuda_ipc_cache_misses"),
                pv("btl_smcuda_ipc_cache_evictions"));
        T_CHECK(cuemu_count("cuIpcCloseMemHandle") + 2 == cuemu_count("cuIpcOpenMemHandle"),
                "open %lu close %lu with a cache of 2", cuemu_count("cuIpcOpenMemHandle"),
                cuemu_count("cuIpcCloseMemHandle"));
    } else {
        for (int i = 1; i < 4; i++) {
            cuemu_free(more[i]);
        }
    }
}

static void case_split(char *sbuf, char *rbuf, bool dev, int *seed, int pieces)
{
    unsigned long copies;

    T_CHECK(warm_up(sbuf, rbuf, dev, seed), "IPC never came on");
    copies = cuemu_count("cuMemcpyAsync");
    stream(sbuf, rbuf, dev, seed, 1);
    if (1 == t_rank) {
        T_CHECK(copies + (unsigned long) pieces == cuemu_count("cuMemcpyAsync"),
                "one message made %lu copies, not %d", cuemu_count("cuMemcpyAsync") - copies,
                pieces);
    }
}

/* IPC is refused, or never set up: every message correct, none by IPC. */
static void case_no_ipc(char *sbuf, char *rbuf, bool dev, int *seed, int n, bool bad_here)
{
    stream(sbuf, rbuf, dev, seed, 1);
    for (int i = 0; i < n; i++) {
        stream(sbuf, rbuf, dev, seed, 1); /* each waits for the answer before the next */
    }
    T_CHECK(0 == pv("btl_smcuda_ipc_bytes") && 0 == pv("btl_smcuda_ipc_peers") &&
                0 == pv("btl_smcuda_ipc_setups_ok"),
            "IPC in use: %llu bytes", pv("btl_smcuda_ipc_bytes"));
    if (bad_here) {
        T_CHECK(1 == pv("btl_smcuda_ipc_setups_bad"), "setups_bad %llu",
                pv("btl_smcuda_ipc_setups_bad"));
    }
    T_CHECK(0 == cuemu_count("cuIpcOpenMemHandle"), "a handle was opened");
}

static void case_notready(char *sbuf, char *rbuf, int *seed)
{
    /* rank 1 receives into host memory and has used no device: it
     * answers NOTREADY */
    static char host[LEN];

    stream(sbuf, host, false, seed, 2);
    T_CHECK(0 == pv("btl_smcuda_ipc_peers"), "IPC on before rank 1 used a device");
    if (1 == t_rank) {
        use_device(rbuf);
    }
    T_CHECK(warm_up(sbuf, rbuf, true, seed), "IPC never came on after NOTREADY");
    stream(sbuf, rbuf, true, seed, 2);
    if (1 == t_rank) {
        T_CHECK(pv("btl_smcuda_ipc_bytes") >= 2ull * LEN, "no IPC after NOTREADY");
    }
}

static void case_openfail(char *sbuf, char *rbuf, bool dev, int *seed)
{
    T_CHECK(warm_up(sbuf, rbuf, dev, seed), "IPC never came on");
    stream(sbuf, rbuf, dev, seed, 3);
    if (1 == t_rank) {
        T_CHECK(0 == pv("btl_smcuda_ipc_bytes") && pv("btl_smcuda_ipc_cache_misses") >= 1 &&
                    cuemu_count("cuIpcOpenMemHandle") >= 1,
                "bytes %llu misses %llu", pv("btl_smcuda_ipc_bytes"),
                pv("btl_smcuda_ipc_cache_misses"));
    }
}

int main(int argc, char **argv)
{
    const char *p = t_arg_value(argc, argv, "pieces");
    bool dev = !has(argc, argv, "host-dst");
    char *sbuf = NULL, *rbuf = NULL;
    static char hbuf[LEN];
    unsigned long opened = 0, closed = 0;
    int seed = 0;

    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    T_CHECK(2 == t_size, "needs 2 processes");
    pv_init();
    if (0 == t_rank) {
        sbuf = cuemu_malloc(LEN, 0);
        T_CHECK(NULL != sbuf, "cuemu_malloc");
        use_device(sbuf);
    } else {
        rbuf = cuemu_malloc(LEN, 0);
        T_CHECK(NULL != rbuf, "cuemu_malloc");
        if (!has(argc, argv, "notready") && !has(argc, argv, "neverready")) {
            use_device(rbuf);
        }
        if (!dev) {
            rbuf = hbuf;
        }
    }
    if (has(argc, argv, "ok")) {
        case_ok(sbuf, rbuf, dev, &seed);
    } else if (has(argc, argv, "realloc")) {
        case_realloc(&sbuf, rbuf, dev, &seed);
    } else if (has(argc, argv, "evict")) {
        case_evict(sbuf, rbuf, dev, &seed);
    } else if (has(argc, argv, "split")) {
        case_split(sbuf, rbuf, dev, &seed, NULL != p ? atoi(p) : 1);
    } else if (has(argc, argv, "refused")) {
        case_no_ipc(sbuf, rbuf, dev, &seed, 3, true);
    } else if (has(argc, argv, "neverready")) {
        case_no_ipc(sbuf, hbuf, false, &seed, 8, 0 == t_rank);
    } else if (has(argc, argv, "notready")) {
        case_notready(sbuf, rbuf, &seed);
    } else if (has(argc, argv, "openfail")) {
        case_openfail(sbuf, rbuf, dev, &seed);
    } else {
        T_FAIL("which case?");
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (0 == t_rank) {
        cuemu_free(sbuf);
    }
    pv_fini();
    t_finalize();
    /* MPI_Finalize closed every mapping btl/smcuda had open */
    opened = cuemu_count("cuIpcOpenMemHandle");
    closed = cuemu_count("cuIpcCloseMemHandle");
    if (!has(argc, argv, "openfail") && opened != closed) {
        printf("FAIL: smipc: rank %d: %lu handles opened, %lu closed\n", t_rank, opened, closed);
        return 1;
    }
    if (1 == t_rank) {
        printf("rank 1: %lu handles opened and closed\n", opened);
    }
    return 0;
}

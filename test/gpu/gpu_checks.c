/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * gpu_checks.c - the MPI program of test/gpu/run-gpu-checks: two ranks
 * move device (GPU) buffers through MPI and check every byte.
 *
 * The CUDA driver is loaded with dlopen("libcuda.so.1") before MPI_Init
 * (never linked), as an application using CUDA would have it loaded. With
 * the driver emulation of test/cuda/emu (no GPU) the entry points it lacks
 * (cuMemAlloc, cuMemcpyHtoD...) are replaced by its cuemu_* calls, so the
 * same program runs in CI and on a GPU machine. Self-contained (mpi.h and
 * cuda.h only): the GPU machine compiles it with mpicc alone.
 *
 * Arguments (name=value):
 *   label=NAME        name of this run in the output (default "run")
 *   checks=a,b        any of enabled, driver, ipc, sweep, mix, noncontig, costs
 *                     (default all)
 *   sizes=LIST        message sizes: numbers with K/M/G suffixes and +N/-N,
 *                     e.g. 0,1,4K+1,1M,1G (default 0 B..1 GiB)
 *   dev=N|rank        device ordinal of each rank (rank: rank % devices)
 *   corrupt=N         self-test: rank 0 damages byte N of every message it
 *                     sends of more than N bytes; the checks must FAIL
 *   ipc=require|auto|none
 *                     require: CUDA IPC must carry the repeated messages
 *                     (FAIL otherwise); auto: SKIP when it does not; none:
 *                     the IPC checks are not run (other BTLs)
 *
 * Output (rank 0): "CHECK <label> <check> PASS|FAIL|SKIP: <detail>" per
 * check, "BW ..." bandwidth lines, "INFO ..." lines. Exit status 0 when no
 * check failed. Wrong data is a FAIL, never a SKIP.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SIZES 128
#define MiB (1024.0 * 1024.0)

static int rank, nranks;
static const char *label = "run";
static int failures;

/* --- the driver: real, or the emulation ---------------------------------- */

static struct {
    void *lib;
    int emulated;
    CUresult (*init)(unsigned int);
    CUresult (*device_get_count)(int *);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*device_get_name)(char *, int, CUdevice);
    CUresult (*primary_ctx_retain)(CUcontext *, CUdevice);
    CUresult (*ctx_set_current)(CUcontext);
    CUresult (*ctx_synchronize)(void);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*mem_free)(CUdeviceptr);
    CUresult (*htod)(CUdeviceptr, const void *, size_t);
    CUresult (*dtoh)(void *, CUdeviceptr, size_t);
    CUresult (*dtod)(CUdeviceptr, CUdeviceptr, size_t);
    /* the emulation's runtime-like calls (test/cuda/emu/cuemu.h) */
    void *(*emu_malloc)(size_t, int);
    void (*emu_free)(void *);
    int (*emu_memcpy)(void *, const void *, size_t);
    unsigned long (*emu_count)(const char *);
} cu;

static int device;
static char device_name[128] = "?";

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stdout, "CHECK %s setup FAIL: rank %d: ", label, rank);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fprintf(stdout, "\n");
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 3);
    exit(3);
}

static void cu_check(CUresult rc, const char *what)
{
    if (CUDA_SUCCESS != rc) {
        die("%s failed: CUDA error %d", what, (int) rc);
    }
}

static void *sym(const char *name, int needed)
{
    void *p = dlsym(cu.lib, name);

    if (NULL == p && needed) {
        fprintf(stdout, "CHECK %s setup FAIL: libcuda.so.1 has no %s\n", label, name);
        exit(3);
    }
    return p;
}

/* Before MPI_Init: loads the driver, picks the device, makes its primary
 * context current. Returns the number of devices. */
static int driver_open(const char *dev_arg, int local_rank)
{
    CUdevice d;
    CUcontext ctx;
    int n = 0;

    cu.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (NULL == cu.lib) {
        fprintf(stdout, "CHECK %s setup FAIL: dlopen libcuda.so.1: %s\n", label, dlerror());
        exit(3);
    }
    cu.emu_malloc = (void *(*) (size_t, int)) sym("cuemu_malloc", 0);
    cu.emulated = NULL != cu.emu_malloc;
    cu.init = (CUresult(*)(unsigned int)) sym("cuInit", 1);
    cu.device_get_count = (CUresult(*)(int *)) sym("cuDeviceGetCount", 1);
    cu.device_get = (CUresult(*)(CUdevice *, int)) sym("cuDeviceGet", 1);
    cu.primary_ctx_retain = (CUresult(*)(CUcontext *, CUdevice)) sym("cuDevicePrimaryCtxRetain", 1);
    cu.ctx_set_current = (CUresult(*)(CUcontext)) sym("cuCtxSetCurrent", 1);
    if (cu.emulated) {
        cu.emu_free = (void (*)(void *)) sym("cuemu_free", 1);
        cu.emu_memcpy = (int (*)(void *, const void *, size_t)) sym("cuemu_memcpy", 1);
        cu.emu_count = (unsigned long (*)(const char *)) sym("cuemu_count", 1);
    } else {
        cu.device_get_name = (CUresult(*)(char *, int, CUdevice)) sym("cuDeviceGetName", 0);
        cu.ctx_synchronize = (CUresult(*)(void)) sym("cuCtxSynchronize", 1);
        cu.mem_alloc = (CUresult(*)(CUdeviceptr *, size_t)) sym("cuMemAlloc_v2", 1);
        cu.mem_free = (CUresult(*)(CUdeviceptr)) sym("cuMemFree_v2", 1);
        cu.htod = (CUresult(*)(CUdeviceptr, const void *, size_t)) sym("cuMemcpyHtoD_v2", 1);
        cu.dtoh = (CUresult(*)(void *, CUdeviceptr, size_t)) sym("cuMemcpyDtoH_v2", 1);
        cu.dtod = (CUresult(*)(CUdeviceptr, CUdeviceptr, size_t)) sym("cuMemcpyDtoD_v2", 1);
    }
    cu_check(cu.init(0), "cuInit");
    cu_check(cu.device_get_count(&n), "cuDeviceGetCount");
    if (n < 1) {
        die("no CUDA device visible");
    }
    device = 0 == strcmp(dev_arg, "rank") ? local_rank % n : atoi(dev_arg);
    cu_check(cu.device_get(&d, device), "cuDeviceGet");
    cu_check(cu.primary_ctx_retain(&ctx, d), "cuDevicePrimaryCtxRetain");
    cu_check(cu.ctx_set_current(ctx), "cuCtxSetCurrent");
    if (cu.emulated) {
        snprintf(device_name, sizeof(device_name), "emulated device (test/cuda/emu)");
    } else if (NULL != cu.device_get_name) {
        cu.device_get_name(device_name, sizeof(device_name), d);
    }
    return n;
}

/* Device memory of at least one byte (a size 0 message still has an
 * address). */
static void *dev_alloc(size_t len)
{
    CUdeviceptr p = 0;

    len = len ? len : 1;
    if (cu.emulated) {
        void *q = cu.emu_malloc(len, device);
        if (NULL == q) {
            die("cuemu_malloc(%zu) failed (OB1X_CUEMU_ARENA_MB too small?)", len);
        }
        return q;
    }
    cu_check(cu.mem_alloc(&p, len), "cuMemAlloc");
    return (void *) (uintptr_t) p;
}

static void dev_free(void *p)
{
    if (cu.emulated) {
        cu.emu_free(p);
    } else {
        cu_check(cu.mem_free((CUdeviceptr) (uintptr_t) p), "cuMemFree");
    }
}

static void to_dev(void *dst, const void *src, size_t len)
{
    if (0 == len) {
        return;
    }
    if (cu.emulated) {
        cu.emu_memcpy(dst, src, len);
    } else {
        cu_check(cu.htod((CUdeviceptr) (uintptr_t) dst, src, len), "cuMemcpyHtoD");
    }
}

static void to_host(void *dst, const void *src, size_t len)
{
    if (0 == len) {
        return;
    }
    if (cu.emulated) {
        cu.emu_memcpy(dst, src, len);
    } else {
        cu_check(cu.dtoh(dst, (CUdeviceptr) (uintptr_t) src, len), "cuMemcpyDtoH");
    }
}

/* reps device-to-device copies, waited for; seconds. */
static double dtod_time(void *dst, const void *src, size_t len, int reps)
{
    double t = MPI_Wtime();

    for (int i = 0; i < reps; i++) {
        if (cu.emulated) {
            cu.emu_memcpy(dst, src, len);
        } else {
            cu_check(cu.dtod((CUdeviceptr) (uintptr_t) dst, (CUdeviceptr) (uintptr_t) src, len),
                     "cuMemcpyDtoD");
        }
    }
    if (!cu.emulated) {
        cu_check(cu.ctx_synchronize(), "cuCtxSynchronize");
    }
    return MPI_Wtime() - t;
}

/* --- data ------------------------------------------------------------------ */

/* Byte stream `seed`: cheap enough for 1 GiB, different for every seed and
 * position within 8 bytes. */
static void pattern(unsigned char *buf, size_t len, uint64_t seed)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    size_t i = 0;

    for (; i + 8 <= len; i += 8) {
        uint64_t w = x + (uint64_t) i * 0xD1B54A32D192ED03ull;
        w ^= w >> 29;
        memcpy(buf + i, &w, 8);
    }
    for (; i < len; i++) {
        buf[i] = (unsigned char) ((x >> (i % 8 * 8)) + i);
    }
}

static unsigned char *h_expect, *h_got; /* host scratch, max size each */

/* Index of the first difference between the device buffer and stream
 * seed, or -1. */
static long long dev_verify(const void *dbuf, size_t len, uint64_t seed)
{
    pattern(h_expect, len, seed);
    to_host(h_got, dbuf, len);
    if (0 == memcmp(h_expect, h_got, len)) {
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        if (h_expect[i] != h_got[i]) {
            return (long long) i;
        }
    }
    return -1;
}

static long long corrupt = -1; /* corrupt=N */

/* Device buffer := stream seed (rank 0's sends: damaged with corrupt=N). */
static void dev_fill(void *dbuf, size_t len, uint64_t seed)
{
    pattern(h_expect, len, seed);
    if (0 == rank && corrupt >= 0 && (size_t) corrupt < len) {
        h_expect[corrupt] ^= 0x5A;
    }
    to_dev(dbuf, h_expect, len);
}

/* --- MPI_T ------------------------------------------------------------------ */

static MPI_T_pvar_session session;

/* Reads an unbound performance variable; 1 when it exists and was read. */
/* ob1x's counters read what they counted since their handle was made, so
 * each variable gets one handle, made before any traffic (pvar_init) and
 * kept: a handle made at each read would read about 0. */
#define MAX_PVARS 16
static struct {
    const char *name;
    MPI_T_pvar_handle h;
    MPI_Datatype dt;
    int ok;
} pvars[MAX_PVARS];

static int pvar_find(const char *name)
{
    int i, n = 0;

    for (i = 0; i < MAX_PVARS && NULL != pvars[i].name; i++) {
        if (0 == strcmp(pvars[i].name, name)) {
            return i;
        }
    }
    if (MAX_PVARS == i) {
        return -1;
    }
    pvars[i].name = name;
    pvars[i].ok = 0;
    if (MPI_SUCCESS != MPI_T_pvar_get_num(&n)) {
        return i;
    }
    for (int k = 0; k < n; k++) {
        char nm[256], desc[256];
        int nlen = sizeof(nm), dlen = sizeof(desc), verb, cls, bind, ro, cont, atomic, count;
        MPI_T_enum en;

        if (MPI_SUCCESS != MPI_T_pvar_get_info(k, nm, &nlen, &verb, &cls, &pvars[i].dt, &en,
                                               desc, &dlen, &bind, &ro, &cont, &atomic) ||
            0 != strcmp(nm, name)) {
            continue;
        }
        if (MPI_SUCCESS == MPI_T_pvar_handle_alloc(session, k, NULL, &pvars[i].h, &count) &&
            count <= 8) {
            if (!cont) {
                MPI_T_pvar_start(session, pvars[i].h);
            }
            pvars[i].ok = 1;
        }
        break;
    }
    return i;
}

static int pvar_read(const char *name, unsigned long long *val)
{
    unsigned char buf[64] = {0};
    int i = pvar_find(name);
    MPI_Datatype dt;

    if (i < 0 || !pvars[i].ok || MPI_SUCCESS != MPI_T_pvar_read(session, pvars[i].h, buf)) {
        return 0;
    }
    dt = pvars[i].dt;
    if (MPI_UNSIGNED_LONG_LONG == dt || MPI_UNSIGNED_LONG == dt || MPI_LONG_LONG == dt ||
        MPI_LONG == dt || MPI_COUNT == dt) {
        *val = *(unsigned long long *) buf;
    } else if (MPI_UNSIGNED == dt || MPI_INT == dt) {
        *val = *(unsigned int *) buf;
    } else if (MPI_DOUBLE == dt) {
        *val = (unsigned long long) *(double *) buf;
    } else {
        return 0;
    }
    return 1;
}

/* Handles of every variable read later, before any traffic. */
static void pvar_init(void)
{
    static const char *const names[] = {
        "pml_ob1x_cuda_enabled",     "pml_ob1x_cuda_bytes_staged",  "btl_smcuda_ipc_setups_ok",
        "btl_smcuda_ipc_cache_hits", "btl_smcuda_ipc_cache_misses",
        "pml_ob1x_cuda_stage_pinned", "pml_ob1x_cuda_stage_reused", "btl_smcuda_ipc_bytes",
    };

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        (void) pvar_find(names[i]);
    }
}

static void pvar_fini(void)
{
    for (int i = 0; i < MAX_PVARS && NULL != pvars[i].name; i++) {
        if (pvars[i].ok) {
            MPI_T_pvar_handle_free(session, &pvars[i].h);
        }
    }
}

/* Integer control variable; 1 when read. */
static int cvar_read(const char *name, long long *val)
{
    int idx, count;
    MPI_T_cvar_handle h;
    unsigned char buf[64] = {0};
    int verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum en;
    char nm[256], desc[256];
    int nlen = sizeof(nm), dlen = sizeof(desc);

    if (MPI_SUCCESS != MPI_T_cvar_get_index(name, &idx) ||
        MPI_SUCCESS != MPI_T_cvar_get_info(idx, nm, &nlen, &verb, &dt, &en, desc, &dlen, &bind,
                                           &scope) ||
        MPI_SUCCESS != MPI_T_cvar_handle_alloc(idx, NULL, &h, &count)) {
        return 0;
    }
    int rc = count <= 8 ? MPI_T_cvar_read(h, buf) : MPI_ERR_OTHER;
    MPI_T_cvar_handle_free(&h);
    if (MPI_SUCCESS != rc) {
        return 0;
    }
    if (MPI_INT == dt || MPI_UNSIGNED == dt) {
        *val = *(int *) buf;
    } else if (MPI_UNSIGNED_LONG_LONG == dt || MPI_LONG_LONG == dt || MPI_UNSIGNED_LONG == dt ||
               MPI_LONG == dt) {
        *val = *(long long *) buf;
    } else {
        return 0;
    }
    return 1;
}

/* A counter summed over the ranks; 0 when some rank lacks it. */
static int counter_sum(const char *name, unsigned long long *sum)
{
    unsigned long long v = 0;
    int have = pvar_read(name, &v), all;

    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&v, sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

/* cuIpcOpenMemHandle calls of the emulation, summed (0 when real). */
static int emu_opens(unsigned long long *sum)
{
    unsigned long long v = 0;

    if (cu.emulated) {
        v = cu.emu_count("cuIpcOpenMemHandle");
    }
    MPI_Allreduce(&v, sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return cu.emulated;
}

/* --- reporting -------------------------------------------------------------- */

static void report(const char *check, const char *verdict, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void report(const char *check, const char *verdict, const char *fmt, ...)
{
    va_list ap;

    if (0 == strcmp(verdict, "FAIL")) {
        failures++;
    }
    if (0 != rank) {
        return;
    }
    printf("CHECK %s %s %s: ", label, check, verdict);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/* Every rank's bad flag ORed: a data error seen on one rank fails all. */
static int any(int bad)
{
    int r;

    MPI_Allreduce(&bad, &r, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return r;
}

static void size_text(size_t n, char *buf, size_t len)
{
    if (n >= (1u << 30) && 0 == n % (1u << 30)) {
        snprintf(buf, len, "%zu GiB", n >> 30);
    } else if (n >= (1u << 20) && 0 == n % (1u << 20)) {
        snprintf(buf, len, "%zu MiB", n >> 20);
    } else if (n >= 1024 && 0 == n % 1024) {
        snprintf(buf, len, "%zu KiB", n >> 10);
    } else {
        snprintf(buf, len, "%zu B", n);
    }
}

/* --- sizes ------------------------------------------------------------------- */

static size_t sizes[MAX_SIZES];
static int nsizes;
static size_t max_size;

static size_t parse_size(const char *s, char **end)
{
    double v = strtod(s, end);
    size_t mult = 1;

    switch (**end) {
    case 'k': case 'K': mult = 1024; (*end)++; break;
    case 'm': case 'M': mult = 1024 * 1024; (*end)++; break;
    case 'g': case 'G': mult = 1024 * 1024 * 1024; (*end)++; break;
    default: break;
    }
    return (size_t) (v * (double) mult);
}

static void parse_sizes(const char *list)
{
    const char *p = list;

    while (*p && nsizes < MAX_SIZES) {
        char *end;
        size_t n = parse_size(p, &end);
        while ('+' == *end || '-' == *end) {
            int neg = '-' == *end;
            size_t d = parse_size(end + 1, &end);
            n = neg ? n - d : n + d;
        }
        if (end == p || (',' != *end && '\0' != *end)) {
            die("bad size list '%s' at '%s'", list, p);
        }
        sizes[nsizes++] = n;
        max_size = n > max_size ? n : max_size;
        p = ',' == *end ? end + 1 : end;
    }
}

static void default_sizes(void)
{
    parse_sizes("0,1,3,7,1000,4097,65535,65537,1000000,3M+1,123456789");
    for (int e = 1; e <= 30; e++) {
        sizes[nsizes++] = (size_t) 1 << e;
    }
    max_size = (size_t) 1 << 30;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *) a, y = *(const size_t *) b;
    return x < y ? -1 : x > y;
}

/* --- the checks ------------------------------------------------------------- */

static void *d_send, *d_recv; /* device, max_size each */

/* One message rank 0 -> rank 1, a zero-byte answer; rank 0's seconds. */
static double one_way(void *sbuf, void *rbuf, size_t len)
{
    double t;

    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    if (0 == rank) {
        MPI_Send(sbuf, (int) len, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (1 == rank) {
        MPI_Recv(rbuf, (int) len, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    }
    return MPI_Wtime() - t;
}

/* Rank 1's receive buffer holds stream seed (checked on rank 1). */
static int received_bad(size_t len, uint64_t seed, long long *at)
{
    long long off = -1;

    if (1 == rank) {
        off = dev_verify(d_recv, len, seed);
    }
    MPI_Bcast(&off, 1, MPI_LONG_LONG, 1, MPI_COMM_WORLD);
    *at = off;
    return off >= 0;
}

/* ipc_setup, ipc_cache, realloc: the first large message to the peer, the
 * same buffer again and again, then a buffer reallocated. */
static void check_ipc(const char *mode)
{
    size_t len = max_size < ((size_t) 64 << 20) ? max_size : ((size_t) 64 << 20);
    unsigned long long miss0, miss1, hit0, hit1, open0, open1, setups = 0;
    int have, reps = 10, bad = 0;
    double first, again = 1e30;
    long long at;
    char stext[32];

    size_text(len, stext, sizeof(stext));
    if (len < 65536) {
        report("ipc_setup", "SKIP", "largest size %s is below a rendezvous message", stext);
        return;
    }
    dev_fill(d_send, len, 101);
    first = one_way(d_send, d_recv, len);
    bad |= received_bad(len, 101, &at);
    for (int i = 0; i < 3; i++) {
        double t = one_way(d_send, d_recv, len);
        again = t < again ? t : again;
    }
    bad |= received_bad(len, 101, &at);
    have = counter_sum("btl_smcuda_ipc_setups_ok", &setups);
    if (bad) {
        report("ipc_setup", "FAIL", "data of a %s device message wrong at offset %lld", stext, at);
    } else {
        report("ipc_setup", "PASS",
               "first %s device message %.3f ms, repeated %.3f ms: set-up cost about %.3f ms "
               "(btl_smcuda_ipc_setups_ok %s%llu)",
               stext, first * 1e3, again * 1e3, (first - again) * 1e3, have ? "" : "missing, ",
               setups);
    }

    /* the same buffer again: no cuIpcOpenMemHandle */
    have = counter_sum("btl_smcuda_ipc_cache_misses", &miss0) &&
           counter_sum("btl_smcuda_ipc_cache_hits", &hit0);
    emu_opens(&open0);
    for (int i = 0; i < reps; i++) {
        one_way(d_send, d_recv, len);
    }
    bad = received_bad(len, 101, &at);
    counter_sum("btl_smcuda_ipc_cache_misses", &miss1);
    counter_sum("btl_smcuda_ipc_cache_hits", &hit1);
    emu_opens(&open1);
    if (bad) {
        report("ipc_cache", "FAIL", "data wrong at offset %lld", at);
    } else if (cu.emulated && open1 != open0) {
        report("ipc_cache", "FAIL", "%d repeated messages of one buffer made %llu "
               "cuIpcOpenMemHandle calls (emulation's count)", reps, open1 - open0);
    } else if (!have) {
        report("ipc_cache", "SKIP", "no MPI_T counter btl_smcuda_ipc_cache_misses/_hits in this "
               "build (data verified)");
    } else if (hit1 - hit0 < (unsigned long long) reps) {
        report("ipc_cache", 0 == strcmp(mode, "require") ? "FAIL" : "SKIP",
               "CUDA IPC did not carry the repeated messages (cache hits +%llu of %d, misses "
               "+%llu; data verified)", hit1 - hit0, reps, miss1 - miss0);
    } else if (miss1 != miss0) {
        report("ipc_cache", "FAIL", "%d repeated messages of one buffer: "
               "btl_smcuda_ipc_cache_misses +%llu (cuIpcOpenMemHandle calls), expected +0",
               reps, miss1 - miss0);
    } else {
        report("ipc_cache", "PASS", "%d repeated %s messages of one buffer: "
               "cuIpcOpenMemHandle calls +0 (btl_smcuda_ipc_cache_misses), cache hits +%llu%s",
               reps, stext, hit1 - hit0, cu.emulated ? ", emulation's count +0" : "");
    }

    /* freed and allocated again (often at the same address): never a stale
     * mapping */
    void *old = d_send;
    dev_free(d_send);
    d_send = dev_alloc(max_size);
    dev_fill(d_send, len, 202);
    one_way(d_send, d_recv, len);
    bad = received_bad(len, 202, &at);
    one_way(d_send, d_recv, len);
    bad |= received_bad(len, 202, &at);
    if (bad) {
        report("realloc", "FAIL", "a buffer freed and allocated again (%s address): data wrong "
               "at offset %lld (a stale IPC mapping?)", old == d_send ? "same" : "new", at);
    } else {
        report("realloc", "PASS", "a buffer freed and allocated again (%s address): data right",
               old == d_send ? "same" : "new");
    }
}

/* driver: this program's own use of the driver, no MPI traffic: a device
 * buffer filled, copied on the device, read back, on every rank. */
static void check_driver(void)
{
    size_t len = max_size;
    long long at;
    char stext[32];
    double t;
    int bad;

    pattern(h_expect, len, 77);
    to_dev(d_send, h_expect, len);
    t = dtod_time(d_recv, d_send, len, 1);
    at = dev_verify(d_recv, len, 77);
    bad = any(at >= 0);
    size_text(len, stext, sizeof(stext));
    if (bad) {
        report("driver", "FAIL", "cuMemcpyHtoD, cuMemcpyDtoD, cuMemcpyDtoH of %s: wrong data "
               "on some rank (first wrong byte here %lld)", stext, at);
    } else {
        report("driver", "PASS", "cuMemcpyHtoD, cuMemcpyDtoD (%.3f ms), cuMemcpyDtoH of %s "
               "verified on every rank", t * 1e3, stext);
    }
}

/* sweep: every size device -> device, verified both ways, bandwidth beside
 * cuMemcpyDtoD, and how the timed bytes went: the share read by CUDA IPC,
 * and the bytes copied through host memory per byte moved (each end
 * counts: 200% when both stage), and the IPC handles opened per message
 * (cache misses: 0 for a buffer sent again). With ipc=require, a size of
 * 1 MiB or more not carried wholly by IPC fails the check. */
static void check_sweep(const char *ipc_mode)
{
    int bad_sizes = 0, not_ipc = 0;
    char stext[32], first_bad[160] = "", first_not_ipc[160] = "";
    int require = 0 == strcmp(ipc_mode, "require");
    void *d_ref = 0 == rank ? dev_alloc(max_size) : NULL;

    if (0 == rank) {
        printf("BW %s %12s %6s %12s %12s %7s %6s %7s %6s\n", label, "bytes", "reps", "MPI_GB/s",
               "DtoD_GB/s", "ratio", "ipc%", "staged%", "opens");
    }
    for (int s = 0; s < nsizes; s++) {
        size_t len = sizes[s];
        uint64_t seed = 1000 + (uint64_t) s;
        int reps = len <= ((size_t) 1 << 20) ? 50 : (int) (((size_t) 1 << 30) / len);
        long long at = -1;
        int bad = 0;
        MPI_Status st;
        int count = -1;

        reps = reps < 3 ? 3 : reps > 50 ? 50 : reps;
        /* correctness: 0 -> 1 and back */
        if (0 == rank) {
            dev_fill(d_send, len, seed);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (0 == rank) {
            MPI_Send(d_send, (int) len, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
            MPI_Recv(d_recv, (int) len, MPI_BYTE, 1, 4, MPI_COMM_WORLD, &st);
        } else if (1 == rank) {
            MPI_Recv(d_recv, (int) len, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            bad = count != (int) len;
            if (!bad) {
                at = dev_verify(d_recv, len, seed);
                bad = at >= 0;
            }
            MPI_Send(d_recv, (int) len, MPI_BYTE, 0, 4, MPI_COMM_WORLD);
        }
        if (0 == rank) {
            MPI_Get_count(&st, MPI_BYTE, &count);
            bad = count != (int) len;
            if (!bad) {
                at = dev_verify(d_recv, len, seed);
                bad = at >= 0;
            }
        }
        size_text(len, stext, sizeof(stext));
        if (any(bad)) {
            long long at1 = at;
            MPI_Allreduce(&at1, &at, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
            if (0 == bad_sizes++) {
                snprintf(first_bad, sizeof(first_bad), "%s (count %d, first wrong byte %lld)",
                         stext, count, at);
            }
            continue;
        }
        /* bandwidth: ping-pong, then the same bytes by cuMemcpyDtoD */
        unsigned long long ipc0 = 0, ipc1 = 0, st0 = 0, st1 = 0, miss0 = 0, miss1 = 0;
        int have_miss = counter_sum("btl_smcuda_ipc_cache_misses", &miss0);
        int have_ipc = counter_sum("btl_smcuda_ipc_bytes", &ipc0);
        int have_st = counter_sum("pml_ob1x_cuda_bytes_staged", &st0);
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        for (int i = 0; i < reps; i++) {
            if (0 == rank) {
                MPI_Send(d_send, (int) len, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
                MPI_Recv(d_recv, (int) len, MPI_BYTE, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (1 == rank) {
                MPI_Recv(d_recv, (int) len, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(d_recv, (int) len, MPI_BYTE, 0, 6, MPI_COMM_WORLD);
            }
        }
        t = MPI_Wtime() - t;
        MPI_Barrier(MPI_COMM_WORLD);
        have_ipc = have_ipc && counter_sum("btl_smcuda_ipc_bytes", &ipc1);
        have_st = have_st && counter_sum("pml_ob1x_cuda_bytes_staged", &st1);
        have_miss = have_miss && counter_sum("btl_smcuda_ipc_cache_misses", &miss1);
        double moved = 2.0 * (double) len * reps;
        double ipc_pc = have_ipc && len ? 100.0 * (double) (ipc1 - ipc0) / moved : 0;
        double st_pc = have_st && len ? 100.0 * (double) (st1 - st0) / moved : 0;
        if (require && len >= ((size_t) 1 << 20) && ipc_pc < 99.999) {
            if (0 == not_ipc++) {
                snprintf(first_not_ipc, sizeof(first_not_ipc), "%s (%.1f%% by IPC, %.1f%% staged)",
                         stext, ipc_pc, st_pc);
            }
        }
        if (0 == rank) {
            double tref = len ? dtod_time(d_ref, d_send, len, reps) : 0;
            double bw = moved / t / 1e9;
            double bref = tref > 0 ? (double) len * reps / tref / 1e9 : 0;
            printf("BW %s %12zu %6d %12.3f %12.3f %7.3f %6.1f %7.1f %6.2f\n", label, len, reps, bw,
                   bref, bref > 0 ? bw / bref : 0, ipc_pc, st_pc,
                   have_miss ? (double) (miss1 - miss0) / (2.0 * reps) : 0);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (d_ref) {
        dev_free(d_ref);
    }
    if (bad_sizes) {
        report("sweep", "FAIL", "%d of %d sizes wrong; first %s", bad_sizes, nsizes, first_bad);
    } else if (not_ipc) {
        report("sweep", "FAIL", "data right, but %d sizes of 1 MiB or more not wholly by CUDA IPC; "
               "first %s", not_ipc, first_not_ipc);
    } else {
        char a[32], b[32];
        size_text(sizes[0], a, sizeof(a));
        size_text(sizes[nsizes - 1], b, sizeof(b));
        report("sweep", "PASS", "%d sizes %s..%s device->device both ways, every byte verified",
               nsizes, a, b);
    }
}

/* mix: host -> device and device -> host (each rank its own kind). */
static void check_mix(void)
{
    unsigned char *h = malloc(max_size ? max_size : 1);
    int bad_n = 0, n = 0;
    char first_bad[160] = "";

    if (NULL == h) {
        die("malloc(%zu)", max_size);
    }
    for (int s = 0; s < nsizes; s++) {
        size_t len = sizes[s];
        if (len > ((size_t) 256 << 20)) {
            continue; /* the sweep covers the largest sizes */
        }
        for (int dir = 0; dir < 2; dir++) { /* 0: host 0 -> device 1; 1: device 0 -> host 1 */
            uint64_t seed = 5000 + (uint64_t) s * 2 + (uint64_t) dir;
            long long at = -1;
            int bad = 0;
            n++;
            if (0 == rank) {
                if (0 == dir) {
                    pattern(h, len, seed);
                    if (corrupt >= 0 && (size_t) corrupt < len) {
                        h[corrupt] ^= 0x5A;
                    }
                    MPI_Send(h, (int) len, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
                } else {
                    dev_fill(d_send, len, seed);
                    MPI_Send(d_send, (int) len, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
                }
            } else if (1 == rank) {
                if (0 == dir) {
                    MPI_Recv(d_recv, (int) len, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    at = dev_verify(d_recv, len, seed);
                } else {
                    memset(h, 0, len);
                    MPI_Recv(h, (int) len, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    pattern(h_expect, len, seed);
                    for (size_t i = 0; i < len && at < 0; i++) {
                        at = h[i] != h_expect[i] ? (long long) i : -1;
                    }
                }
                bad = at >= 0;
            }
            MPI_Bcast(&at, 1, MPI_LONG_LONG, 1, MPI_COMM_WORLD);
            if (any(bad) && 0 == bad_n++) {
                snprintf(first_bad, sizeof(first_bad), "%s %zu B, first wrong byte %lld",
                         dir ? "device->host" : "host->device", len, at);
            }
        }
    }
    free(h);
    if (bad_n) {
        report("mix", "FAIL", "%d of %d messages wrong; first %s", bad_n, n, first_bad);
    } else {
        report("mix", "PASS", "%d messages host->device and device->host, verified", n);
    }
}

/* noncontig: a vector datatype on device buffers (staged): sender only,
 * receiver only, both; gaps of the receive buffer must stay untouched. */
#define BLK 1000
#define STRIDE 1536
static void check_noncontig(void)
{
    static const int blocks[] = {1, 64, 1024, 16384};
    unsigned long long staged0 = 0, staged1 = 0;
    int have = counter_sum("pml_ob1x_cuda_bytes_staged", &staged0), bad_n = 0, n = 0;
    char first_bad[200] = "";

    for (size_t b = 0; b < sizeof(blocks) / sizeof(blocks[0]); b++) {
        int nb = blocks[b];
        size_t data = (size_t) nb * BLK, span = (size_t) (nb - 1) * STRIDE + BLK;
        MPI_Datatype vec;

        if (span > max_size) {
            break;
        }
        MPI_Type_vector(nb, BLK, STRIDE, MPI_BYTE, &vec);
        MPI_Type_commit(&vec);
        void *dv = dev_alloc(span);
        unsigned char *hv = malloc(span), *packed = malloc(data);
        if (NULL == hv || NULL == packed) {
            die("malloc(%zu)", span);
        }
        for (int mode = 0; mode < 3; mode++) { /* 0: vector->contig, 1: contig->vector, 2: both */
            uint64_t seed = 9000 + b * 3 + (uint64_t) mode;
            int svec = mode != 1, rvec = mode != 0, bad = 0;
            long long at = -1;
            n++;
            pattern(packed, data, seed);
            if (0 == rank && corrupt >= 0 && (size_t) corrupt < data) {
                packed[corrupt] ^= 0x5A; /* damaged on the sender only */
            }
            if (0 == rank) {
                if (svec) {
                    memset(hv, 0xEE, span);
                    for (int i = 0; i < nb; i++) {
                        memcpy(hv + (size_t) i * STRIDE, packed + (size_t) i * BLK, BLK);
                    }
                    to_dev(dv, hv, span);
                    MPI_Send(dv, 1, vec, 1, 8, MPI_COMM_WORLD);
                } else {
                    to_dev(d_send, packed, data);
                    MPI_Send(d_send, (int) data, MPI_BYTE, 1, 8, MPI_COMM_WORLD);
                }
            } else if (1 == rank) {
                if (rvec) {
                    memset(hv, 0x5A, span);
                    to_dev(dv, hv, span);
                    MPI_Recv(dv, 1, vec, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    to_host(hv, dv, span);
                    for (size_t i = 0; i < span && at < 0; i++) {
                        size_t blk = i / STRIDE, in = i % STRIDE;
                        unsigned char want = in < BLK ? packed[blk * BLK + in] : 0x5A;
                        at = hv[i] != want ? (long long) i : -1;
                    }
                } else {
                    MPI_Recv(d_recv, (int) data, MPI_BYTE, 0, 8, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
                    at = dev_verify(d_recv, data, seed);
                }
                bad = at >= 0;
            }
            MPI_Bcast(&at, 1, MPI_LONG_LONG, 1, MPI_COMM_WORLD);
            if (any(bad) && 0 == bad_n++) {
                snprintf(first_bad, sizeof(first_bad),
                         "%d blocks of %d bytes, %s, first wrong byte %lld", nb, BLK,
                         mode == 0 ? "vector->contiguous" : mode == 1 ? "contiguous->vector"
                                                                      : "vector->vector",
                         at);
            }
        }
        dev_free(dv);
        free(hv);
        free(packed);
        MPI_Type_free(&vec);
    }
    counter_sum("pml_ob1x_cuda_bytes_staged", &staged1);
    if (0 == n) {
        report("noncontig", "SKIP", "largest size %zu B is below one block (%d B)", max_size, BLK);
    } else if (bad_n) {
        report("noncontig", "FAIL", "%d of %d messages wrong; first %s", bad_n, n, first_bad);
    } else if (have) {
        unsigned long long pinned = 0, reused = 0;
        counter_sum("pml_ob1x_cuda_stage_pinned", &pinned);
        counter_sum("pml_ob1x_cuda_stage_reused", &reused);
        report("noncontig", "PASS", "%d vector-datatype device messages verified "
               "(pml_ob1x_cuda_bytes_staged +%llu; the job so far: %llu staging blocks pinned, "
               "%llu reused)", n, staged1 - staged0, pinned, reused);
    } else {
        report("noncontig", "PASS", "%d vector-datatype device messages verified "
               "(no pml_ob1x_cuda_bytes_staged counter)", n);
    }
}

/* --- main --------------------------------------------------------------------- */

/* costs: where a device message's fixed cost goes. Each rank times
 * device-to-device ping-pongs of 1 KiB (staged) and 64 KiB (CUDA IPC once
 * set up) and, with the emulation, counts the driver calls ob1x made per
 * message (one send and one receive on each rank); rank 0 then times, one
 * by one, the driver calls ob1x makes per message on this machine. The
 * product of the two tells which calls the fixed cost is made of. Prints
 * COST lines; the check itself fails only on wrong data. */
#define COST_REPS 200
static const char *const cost_calls[] = {
    "cuPointerGetAttributes", "cuMemGetAddressRange", "cuIpcGetMemHandle", "cuIpcOpenMemHandle",
    "cuMemcpyAsync",          "cuEventRecord",        "cuEventQuery",      "cuEventCreate",
    "cuStreamSynchronize",    "cuCtxGetCurrent",      "cuCtxSetCurrent",   "cuMemHostAlloc"};
#define N_COST_CALLS (sizeof(cost_calls) / sizeof(cost_calls[0]))

static void cost_counts(unsigned long *c)
{
    for (size_t i = 0; i < N_COST_CALLS; i++) {
        c[i] = cu.emulated ? cu.emu_count(cost_calls[i]) : 0;
    }
}

static double usec_since(const struct timespec *t0)
{
    struct timespec t1;

    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double) (t1.tv_sec - t0->tv_sec) * 1e6 + (double) (t1.tv_nsec - t0->tv_nsec) / 1e3;
}

/* Rank 0 alone: each call's time on this machine (a GPU only). */
static void cost_calls_timed(void)
{
    CUresult (*get_attrs)(unsigned int, CUpointer_attribute *, void **, CUdeviceptr) =
        (CUresult(*)(unsigned int, CUpointer_attribute *, void **, CUdeviceptr)) sym(
            "cuPointerGetAttributes", 0);
    CUresult (*get_handle)(CUipcMemHandle *, CUdeviceptr) =
        (CUresult(*)(CUipcMemHandle *, CUdeviceptr)) sym("cuIpcGetMemHandle", 0);
    CUresult (*range)(CUdeviceptr *, size_t *, CUdeviceptr) =
        (CUresult(*)(CUdeviceptr *, size_t *, CUdeviceptr)) sym("cuMemGetAddressRange_v2", 0);
    CUresult (*stream_create)(CUstream *, unsigned int) =
        (CUresult(*)(CUstream *, unsigned int)) sym("cuStreamCreate", 0);
    CUresult (*event_create)(CUevent *, unsigned int) =
        (CUresult(*)(CUevent *, unsigned int)) sym("cuEventCreate", 0);
    CUresult (*copy_async)(CUdeviceptr, CUdeviceptr, size_t, CUstream) =
        (CUresult(*)(CUdeviceptr, CUdeviceptr, size_t, CUstream)) sym("cuMemcpyAsync", 0);
    CUresult (*record)(CUevent, CUstream) = (CUresult(*)(CUevent, CUstream)) sym("cuEventRecord", 0);
    CUresult (*query)(CUevent) = (CUresult(*)(CUevent)) sym("cuEventQuery", 0);
    CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                   CU_POINTER_ATTRIBUTE_BUFFER_ID, CU_POINTER_ATTRIBUTE_CONTEXT,
                                   CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                   CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    unsigned int type, managed;
    int ordinal;
    unsigned long long id;
    CUcontext ctx;
    CUdeviceptr base, dptr = (CUdeviceptr) (uintptr_t) d_send;
    size_t size;
    void *data[] = {&type, &managed, &ordinal, &id, &ctx, &base, &size};
    CUipcMemHandle handle;
    CUstream stream;
    CUevent event;
    struct timespec t0;
    long polls = 0;

    if (NULL == get_attrs || NULL == get_handle || NULL == range || NULL == stream_create ||
        NULL == event_create || NULL == copy_async || NULL == record || NULL == query ||
        CUDA_SUCCESS != stream_create(&stream, CU_STREAM_NON_BLOCKING) ||
        CUDA_SUCCESS != event_create(&event, CU_EVENT_DISABLE_TIMING)) {
        printf("COST %s call: driver entry points missing, not timed\n", label);
        return;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < COST_REPS; i++) {
        (void) get_attrs(7, attrs, data, dptr);
    }
    printf("COST %s call cuPointerGetAttributes(7 attributes) %.2f us\n", label,
           usec_since(&t0) / COST_REPS);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < COST_REPS; i++) {
        (void) range(&base, &size, dptr);
    }
    printf("COST %s call cuMemGetAddressRange %.2f us\n", label, usec_since(&t0) / COST_REPS);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < COST_REPS; i++) {
        (void) get_handle(&handle, dptr);
    }
    printf("COST %s call cuIpcGetMemHandle %.2f us\n", label, usec_since(&t0) / COST_REPS);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < COST_REPS; i++) {
        (void) copy_async((CUdeviceptr) (uintptr_t) h_got, dptr, 1024, stream);
        (void) record(event, stream);
        while (CUDA_ERROR_NOT_READY == query(event)) {
            polls++;
        }
    }
    printf("COST %s call 1 KiB cuMemcpyAsync device-to-host + cuEventRecord + cuEventQuery until "
           "done %.2f us (%.1f NOT_READY answers each)\n",
           label, usec_since(&t0) / COST_REPS, (double) polls / COST_REPS);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < COST_REPS; i++) {
        (void) query(event);
    }
    printf("COST %s call cuEventQuery (complete) %.2f us\n", label, usec_since(&t0) / COST_REPS);
}

static void check_costs(void)
{
    static const size_t cost_sizes[] = {1024, 65536};
    unsigned long before[N_COST_CALLS], after[N_COST_CALLS];
    int bad = 0;

    for (size_t s = 0; s < sizeof(cost_sizes) / sizeof(cost_sizes[0]); s++) {
        size_t len = cost_sizes[s] <= max_size ? cost_sizes[s] : max_size;
        char line[1024];
        int at = 0;
        double t = 0;

        dev_fill(d_send, len, 500 + s);
        for (int i = 0; i < 20; i++) { /* warm: IPC set up, handles open */
            (void) one_way(d_send, d_recv, len);
        }
        cost_counts(before);
        for (int i = 0; i < COST_REPS; i++) {
            t += one_way(d_send, d_recv, len);
        }
        cost_counts(after);
        if (1 == rank) {
            bad |= dev_verify(d_recv, len, 500 + s) >= 0;
        }
        at = snprintf(line, sizeof(line), "COST %s rank %d %zu B one way %.1f us", label, rank, len,
                      t * 1e6 / COST_REPS);
        for (size_t i = 0; cu.emulated && i < N_COST_CALLS && at < (int) sizeof(line); i++) {
            if (after[i] != before[i]) {
                at += snprintf(line + at, sizeof(line) - (size_t) at, ", %s %.2f", cost_calls[i],
                               (double) (after[i] - before[i]) / COST_REPS);
            }
        }
        for (int r = 0; r < nranks; r++) {
            if (r == rank) {
                printf("%s%s\n", line, cu.emulated ? " (driver calls per message)" : "");
                fflush(stdout);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    if (0 == rank && !cu.emulated) {
        cost_calls_timed();
    }
    bad = any(bad);
    report("costs", bad ? "FAIL" : "PASS", "%s (COST lines)",
           bad ? "wrong data received" : "device messages timed and their driver calls listed");
}

static const char *arg(int argc, char **argv, const char *name, const char *dflt)
{
    size_t l = strlen(name);

    for (int i = 1; i < argc; i++) {
        if (0 == strncmp(argv[i], name, l) && '=' == argv[i][l]) {
            return argv[i] + l + 1;
        }
    }
    return dflt;
}

static int wants(const char *list, const char *check)
{
    size_t l = strlen(check);

    for (const char *p = list; NULL != (p = strstr(p, check)); p += l) {
        if ((p == list || ',' == p[-1]) && (',' == p[l] || '\0' == p[l])) {
            return 1;
        }
    }
    return 0;
}

/* Whether pml/ob1x says it handles device buffers in this run: 1, 0, or
 * -1 when the variable does not exist. */
static int cuda_enabled(void)
{
    unsigned long long v;
    long long c;

    if (pvar_read("pml_ob1x_cuda_enabled", &v)) {
        return v != 0;
    }
    if (cvar_read("pml_ob1x_cuda_enabled", &c)) {
        return c != 0;
    }
    return -1;
}

int main(int argc, char **argv)
{
    const char *env_rank = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    const char *checks = arg(argc, argv, "checks", "enabled,driver,ipc,sweep,mix,noncontig,costs");
    const char *ipc = arg(argc, argv, "ipc", "auto");
    int provided, ndev, enabled, all_enabled;

    /* line by line: a crash keeps what was printed, and a process the
     * driver forks does not print the buffer twice */
    setvbuf(stdout, NULL, _IOLBF, 0);
    label = arg(argc, argv, "label", "run");
    corrupt = atoll(arg(argc, argv, "corrupt", "-1"));
    ndev = driver_open(arg(argc, argv, "dev", "0"), env_rank ? atoi(env_rank) : 0);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_T_pvar_session_create(&session);
    pvar_init();
    if (2 != nranks) {
        die("needs 2 ranks, not %d", nranks);
    }
    if (NULL != arg(argc, argv, "sizes", NULL)) {
        parse_sizes(arg(argc, argv, "sizes", NULL));
    } else {
        default_sizes();
    }
    qsort(sizes, (size_t) nsizes, sizeof(sizes[0]), cmp_size);
    if (0 == nsizes) {
        die("empty size list");
    }

    for (int r = 0; r < nranks; r++) {
        if (r == rank) {
            printf("INFO %s rank %d: %s, device %d of %d, %s driver\n", label, rank, device_name,
                   device, ndev, cu.emulated ? "emulated" : "NVIDIA");
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    enabled = cuda_enabled();
    MPI_Allreduce(&enabled, &all_enabled, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (0 == all_enabled) {
        /* device pointers would reach host copies: a crash on a GPU */
        report("cuda_enabled", cu.emulated ? "SKIP" : "FAIL",
               "pml_ob1x_cuda_enabled is 0 on some rank: ob1x does not handle device buffers "
               "in this run%s", cu.emulated ? " (emulated memory is host memory: going on)" : "");
        if (!cu.emulated) {
            pvar_fini();
    MPI_T_pvar_session_free(&session);
            MPI_T_finalize();
            MPI_Finalize();
            return 1;
        }
    } else if (wants(checks, "enabled")) {
        report("cuda_enabled", all_enabled > 0 ? "PASS" : "SKIP", "%s",
               all_enabled > 0 ? "pml_ob1x_cuda_enabled is 1 on every rank"
                               : "no MPI_T variable pml_ob1x_cuda_enabled in this build");
    }

    h_expect = malloc(max_size ? max_size : 1);
    h_got = malloc(max_size ? max_size : 1);
    if (NULL == h_expect || NULL == h_got) {
        die("malloc(%zu) for host copies", max_size);
    }
    d_send = dev_alloc(max_size);
    d_recv = dev_alloc(max_size);

    if (wants(checks, "driver")) {
        check_driver();
    }
    if (wants(checks, "ipc") && 0 != strcmp(ipc, "none")) {
        check_ipc(ipc);
    }
    if (wants(checks, "sweep")) {
        check_sweep(ipc);
    }
    if (wants(checks, "mix")) {
        check_mix();
    }
    if (wants(checks, "noncontig")) {
        check_noncontig();
    }
    if (wants(checks, "costs")) {
        check_costs();
    }

    dev_free(d_send);
    dev_free(d_recv);
    free(h_expect);
    free(h_got);
    pvar_fini();
    MPI_T_pvar_session_free(&session);
    /* before MPI_Finalize: Open MPI 4.1 closes the BTLs twice (and
     * crashes in vader) when MPI_T_finalize comes last */
    MPI_T_finalize();
    MPI_Finalize();
    return failures ? 1 : 0;
}

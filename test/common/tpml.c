/*
 * tpml.c - helper library for the PML test programs; see tpml.h.
 */
#include "tpml.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

int t_rank = -1;
int t_size = 0;
const char *t_prog = "test";
int t_pvars = 0;
size_t t_typed_slack = 0;

static int t_mpit_ok = 0;
static MPI_T_pvar_session t_session = MPI_T_PVAR_SESSION_NULL;

const char *const t_pv_names[T_PV_COUNT] = {
    "pml_ob1x_eager_immediate_messages",
    "pml_ob1x_eager_immediate_bytes",
    "pml_ob1x_eager_prepared_messages",
    "pml_ob1x_eager_prepared_bytes",
    "pml_ob1x_eager_allocated_messages",
    "pml_ob1x_eager_allocated_bytes",
    "pml_ob1x_sendrecv_pipeline_messages",
    "pml_ob1x_sendrecv_pipeline_bytes",
    "pml_ob1x_buffered_pipeline_messages",
    "pml_ob1x_buffered_pipeline_bytes",
    "pml_ob1x_synchronous_messages",
    "pml_ob1x_unexpected_length",
    "pml_ob1x_unexpected_highwater",
    "pml_ob1x_flow_control_rndv",
    "pml_ob1x_out_of_order_frags",
    "pml_ob1x_resource_retries",
    "pml_ob1x_late_requests",
    "pml_ob1x_orphan_messages",
    "pml_ob1x_rget_messages",
    "pml_ob1x_rget_bytes",
    "pml_ob1x_rput_messages",
    "pml_ob1x_rput_bytes",
    "pml_ob1x_rdma_pipeline_messages",
    "pml_ob1x_rdma_pipeline_bytes",
};

/* One opened performance variable. */
typedef struct {
    int found;
    MPI_T_pvar_handle handle;
    MPI_Datatype dtype;
    int count;
} t_pvar_h;

static t_pvar_h t_pv_h[T_PV_COUNT];

/* ------------------------------------------------------------------ */
/* checks                                                              */
/* ------------------------------------------------------------------ */

void t_fail(const char *file, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stdout, "FAIL: %s [%s rank %d, %s:%d]\n", msg, t_prog, t_rank, file, line);
    fflush(stdout);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

void t_log(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stdout, "[%s %d] %s\n", t_prog, t_rank, msg);
    fflush(stdout);
}

const char *t_err_string(int rc)
{
    static char buf[MPI_MAX_ERROR_STRING + 64];
    char s[MPI_MAX_ERROR_STRING];
    int len = 0, cls = -1;
    /* Both leave their output alone for a code that is no MPI error. */
    if (MPI_SUCCESS != MPI_Error_class(rc, &cls))
        cls = -1;
    if (MPI_SUCCESS != MPI_Error_string(rc, s, &len))
        snprintf(s, sizeof(s), "(not an MPI error code)");
    snprintf(buf, sizeof(buf), "rc %d class %d: %s", rc, cls, s);
    return buf;
}

int t_err_class(int rc)
{
    int cls = rc;
    MPI_Error_class(rc, &cls);
    return cls;
}

void t_mpi_fail(const char *file, int line, const char *what, int rc)
{
    t_fail(file, line, "%s returned %s", what, t_err_string(rc));
}

void t_check_status(const MPI_Status *st, int source, int tag, long bytes, const char *ctx)
{
    int count = -1;
    if (MPI_ANY_SOURCE != source)
        T_CHECK(st->MPI_SOURCE == source, "%s: status MPI_SOURCE %d, expected %d", ctx,
                st->MPI_SOURCE, source);
    if (MPI_ANY_TAG != tag)
        T_CHECK(st->MPI_TAG == tag, "%s: status MPI_TAG %d, expected %d", ctx, st->MPI_TAG, tag);
    if (bytes >= 0) {
        T_MPI(MPI_Get_count(st, MPI_BYTE, &count));
        T_CHECK(count == bytes, "%s: MPI_Get_count %d bytes, expected %ld", ctx, count, bytes);
    }
}

/* ------------------------------------------------------------------ */
/* arguments                                                           */
/* ------------------------------------------------------------------ */

int t_has_arg(int argc, char **argv, const char *flag)
{
    for (int i = 1; i < argc; i++)
        if (0 == strcmp(argv[i], flag))
            return 1;
    return 0;
}

const char *t_arg_value(int argc, char **argv, const char *name)
{
    size_t n = strlen(name);
    for (int i = 1; i < argc; i++)
        if (0 == strncmp(argv[i], name, n) && '=' == argv[i][n])
            return argv[i] + n + 1;
    return NULL;
}

/* ------------------------------------------------------------------ */
/* data patterns                                                       */
/* ------------------------------------------------------------------ */

void t_fill(void *buf, size_t n, uint32_t seed)
{
    unsigned char *p = buf;
    for (size_t i = 0; i < n; i++)
        p[i] = t_pat(seed, i);
}

size_t t_verify(const void *buf, size_t n, uint32_t seed)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < n; i++)
        if (p[i] != t_pat(seed, i))
            return i;
    return (size_t) -1;
}

void t_check_data(const void *buf, size_t n, uint32_t seed, const char *ctx)
{
    size_t bad = t_verify(buf, n, seed);
    if ((size_t) -1 != bad)
        T_FAIL("%s: data mismatch at byte %zu of %zu (got 0x%02x, expected 0x%02x)", ctx, bad, n,
               ((const unsigned char *) buf)[bad], t_pat(seed, bad));
}

void t_pingpong(void *buf, size_t size, int iters, int peer, int tag)
{
    for (int i = 0; i < iters; ++i) {
        if ((i & 1) == t_rank) {
            t_fill(buf, size, (uint32_t) i);
            T_MPI(MPI_Send(buf, (int) size, MPI_BYTE, peer, tag, MPI_COMM_WORLD));
        } else {
            memset(buf, 0, size);
            T_MPI(
                MPI_Recv(buf, (int) size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            t_check_data(buf, size, (uint32_t) i, "ping-pong message");
        }
    }
}

void t_check_guard(const void *buf, size_t n, unsigned char guard, const char *ctx)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < n; i++)
        if (p[i] != guard)
            T_FAIL("%s: byte %zu past the data was overwritten (0x%02x, guard 0x%02x)", ctx, i,
                   p[i], guard);
}

uint32_t t_seed(uint32_t a, uint32_t b, uint32_t c)
{
    uint64_t x = ((uint64_t) a << 40) ^ ((uint64_t) b << 20) ^ c ^ 0x5bd1e995u;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (uint32_t) x | 1u;
}

void t_msg_fill(void *buf, size_t len, int src, int tag, uint32_t seq)
{
    uint32_t seed = t_seed((uint32_t) src, (uint32_t) tag, seq);
    unsigned char *p = buf;
    if (len >= T_MSG_HDR) {
        uint32_t h[4] = {(uint32_t) src, (uint32_t) tag, seq, (uint32_t) len};
        memcpy(p, h, sizeof(h));
        t_fill(p + T_MSG_HDR, len - T_MSG_HDR, seed);
    } else {
        t_fill(p, len, seed);
    }
}

uint32_t t_msg_check(const void *buf, const MPI_Status *st, uint32_t seq_if_short, const char *ctx)
{
    const unsigned char *p = buf;
    int count = -1;
    uint32_t h[4], seq = seq_if_short;
    T_MPI(MPI_Get_count(st, MPI_BYTE, &count));
    T_CHECK(count >= 0, "%s: MPI_Get_count returned %d", ctx, count);
    if ((size_t) count >= T_MSG_HDR) {
        memcpy(h, p, sizeof(h));
        T_CHECK(h[0] == (uint32_t) st->MPI_SOURCE && h[1] == (uint32_t) st->MPI_TAG &&
                    h[3] == (uint32_t) count,
                "%s: message header src %u tag %u len %u does not match status source %d tag "
                "%d count %d",
                ctx, h[0], h[1], h[3], st->MPI_SOURCE, st->MPI_TAG, count);
        seq = h[2];
        p += T_MSG_HDR;
        count -= T_MSG_HDR;
    }
    {
        uint32_t seed = t_seed((uint32_t) st->MPI_SOURCE, (uint32_t) st->MPI_TAG, seq);
        size_t bad = t_verify(p, (size_t) count, seed);
        if ((size_t) -1 != bad)
            T_FAIL("%s: data mismatch at byte %zu of message (src %d tag %d seq %u len %d)", ctx,
                   bad + (p - (const unsigned char *) buf), st->MPI_SOURCE, st->MPI_TAG, seq,
                   count);
    }
    return seq;
}

void t_rng_init(t_rng *r, uint64_t seed)
{
    r->s = seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
    if (0 == r->s)
        r->s = 1;
}

uint64_t t_rng_next(t_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ULL;
}

uint64_t t_rng_below(t_rng *r, uint64_t n)
{
    return n ? t_rng_next(r) % n : 0;
}

void *t_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    T_CHECK(NULL != p, "malloc(%zu) failed", n);
    /* The bytes of -ftrivial-auto-var-init=pattern (test/run-tests): a read
     * of something nothing wrote fails the same way on every machine. */
    memset(p, 0xFE, n);
    return p;
}

/* ------------------------------------------------------------------ */
/* typed buffers                                                       */
/* ------------------------------------------------------------------ */

const char *t_dt_name(t_dt_kind k)
{
    static const char *n[] = {"contig", "vector", "struct", "indexed"};
    return k < T_DT_COUNT ? n[k] : "?";
}

/* Appends a contiguous tail of `tail` bytes at displacement `disp` after
 * `body` (count 1). Frees body. */
static MPI_Datatype t_with_tail(MPI_Datatype body, size_t disp, size_t tail)
{
    MPI_Datatype types[2] = {body, MPI_BYTE}, out;
    int lens[2] = {1, (int) tail};
    MPI_Aint disps[2] = {0, (MPI_Aint) disp};
    T_MPI(MPI_Type_create_struct(2, lens, disps, types, &out));
    MPI_Type_free(&body);
    return out;
}

void t_typed_create(t_typed *t, t_dt_kind kind, size_t bytes)
{
    memset(t, 0, sizeof(*t));
    t->kind = kind;
    t->bytes = bytes;
    t->type = MPI_BYTE;
    t->count = (int) bytes;
    t->span = bytes;
    T_CHECK(bytes < (size_t) 1 << 30, "typed buffer of %zu bytes too large", bytes);

    if (0 == bytes || T_DT_CONTIG == kind) {
        /* zero bytes: every kind degenerates to MPI_BYTE x 0 */
    } else if (T_DT_VECTOR == kind) {
        /* blocks of B bytes every S bytes: gaps of S-B between blocks */
        size_t B = bytes / 2048 > 7 ? bytes / 2048 : 7;
        size_t S = B + 3 + B / 3;
        size_t nblk = bytes / B, tail = bytes % B;
        MPI_Datatype vec;
        if (0 == nblk) {
            T_MPI(MPI_Type_contiguous((int) tail, MPI_BYTE, &vec));
            t->span = tail;
        } else {
            T_MPI(MPI_Type_vector((int) nblk, (int) B, (int) S, MPI_BYTE, &vec));
            t->span = (nblk - 1) * S + B;
            if (tail) {
                vec = t_with_tail(vec, nblk * S, tail);
                t->span = nblk * S + tail;
            }
        }
        t->type = vec;
        t->count = 1;
    } else if (T_DT_STRUCT == kind) {
        /* element: 3 bytes @0, hole, 4 bytes @8, hole, 16 bytes @16, hole
         * up to the resized extent of 40: 23 data bytes per element */
        int lens[3] = {3, 4, 16};
        MPI_Aint disps[3] = {0, 8, 16};
        MPI_Datatype types[3] = {MPI_BYTE, MPI_BYTE, MPI_BYTE}, raw, elem, body;
        size_t nel = bytes / 23, tail = bytes % 23;
        T_MPI(MPI_Type_create_struct(3, lens, disps, types, &raw));
        T_MPI(MPI_Type_create_resized(raw, 0, 40, &elem));
        MPI_Type_free(&raw);
        if (0 == nel) {
            MPI_Type_free(&elem);
            T_MPI(MPI_Type_contiguous((int) tail, MPI_BYTE, &body));
            t->span = tail;
        } else {
            T_MPI(MPI_Type_contiguous((int) nel, elem, &body));
            MPI_Type_free(&elem);
            t->span = (nel - 1) * 40 + 32;
            if (tail) {
                body = t_with_tail(body, nel * 40, tail);
                t->span = nel * 40 + tail;
            }
        }
        t->type = body;
        t->count = 1;
    } else if (T_DT_INDEXED == kind) {
        /* blocks of lengths u*(1 + i%13), the last one trimmed; block i is
         * placed at the address slot nb-1-i (reverse order), with gaps of
         * 2 + i%5 bytes between slots */
        size_t u = bytes / (4096 * 7) + 1;
        size_t nb = 0, acc = 0;
        while (acc < bytes) {
            size_t len = u * (1 + nb % 13);
            acc += len;
            nb++;
        }
        int *lens = t_malloc(nb * sizeof(int));
        int *disps = t_malloc(nb * sizeof(int));
        acc = 0;
        for (size_t i = 0; i < nb; i++) {
            size_t len = u * (1 + i % 13);
            if (acc + len > bytes)
                len = bytes - acc;
            lens[i] = (int) len;
            acc += len;
        }
        size_t pos = 0;
        for (size_t j = 0; j < nb; j++) {
            size_t i = nb - 1 - j;
            disps[i] = (int) pos;
            pos += (size_t) lens[i] + 2 + i % 5;
        }
        t->span = pos;
        T_MPI(MPI_Type_indexed((int) nb, lens, disps, MPI_BYTE, &t->type));
        free(lens);
        free(disps);
        t->count = 1;
    }
    if (MPI_BYTE != t->type)
        T_MPI(MPI_Type_commit(&t->type));
    t->alloc = t->span + 1 + t_typed_slack;
    t->buf = t_malloc(t->alloc);
}

void t_typed_free(t_typed *t)
{
    if (MPI_BYTE != t->type)
        MPI_Type_free(&t->type);
    free(t->buf);
    t->buf = NULL;
}

/* Scatters `stream` (t->bytes long) into `dst` following the type map. */
static void t_typed_unpack(const t_typed *t, const unsigned char *stream, unsigned char *dst)
{
    int pos = 0;
    if (0 == t->bytes)
        return;
    if (T_DT_CONTIG == t->kind) {
        memcpy(dst, stream, t->bytes);
        return;
    }
    T_MPI(MPI_Unpack(stream, (int) t->bytes, &pos, dst, t->count, t->type, MPI_COMM_SELF));
    T_CHECK((size_t) pos == t->bytes, "MPI_Unpack consumed %d of %zu bytes", pos, t->bytes);
}

void t_typed_fill(t_typed *t, uint32_t seed, unsigned char gapfill)
{
    unsigned char *stream = t_malloc(t->bytes);
    t_fill(stream, t->bytes, seed);
    memset(t->buf, gapfill, t->alloc);
    t_typed_unpack(t, stream, t->buf);
    free(stream);
}

void t_typed_guard(t_typed *t, unsigned char guard)
{
    memset(t->buf, guard, t->alloc);
}

void t_typed_check(const t_typed *t, size_t nbytes, uint32_t seed, unsigned char guard,
                   const char *ctx)
{
    if (T_DT_CONTIG == t->kind) {
        t_check_data(t->buf, nbytes, seed, ctx);
        t_check_guard(t->buf + nbytes, t->alloc - nbytes, guard, ctx);
        return;
    }
    unsigned char *stream = t_malloc(t->bytes);
    unsigned char *ref = t_malloc(t->alloc);
    t_fill(stream, nbytes, seed);
    memset(stream + nbytes, guard, t->bytes - nbytes);
    memset(ref, guard, t->alloc);
    t_typed_unpack(t, stream, ref);
    if (0 != memcmp(ref, t->buf, t->alloc)) {
        size_t off = 0;
        while (ref[off] == t->buf[off])
            off++;
        /* find out whether the offset is a data byte or a gap */
        unsigned char *mask = t_malloc(t->alloc);
        memset(stream, 0xff, t->bytes);
        memset(mask, 0, t->alloc);
        t_typed_unpack(t, stream, mask);
        T_FAIL("%s: %s receive buffer differs at offset %zu of span %zu (%s byte, got 0x%02x, "
               "expected 0x%02x, %zu data bytes expected of %zu)",
               ctx, t_dt_name(t->kind), off, t->span, mask[off] ? "data" : "gap", t->buf[off],
               ref[off], nbytes, t->bytes);
    }
    free(stream);
    free(ref);
}

/* ------------------------------------------------------------------ */
/* MPI_T control variables                                             */
/* ------------------------------------------------------------------ */

/* Converts a value read by MPI_T into unsigned long long. */
static int t_mpit_value(MPI_Datatype dt, const void *buf, unsigned long long *val)
{
    if (MPI_INT == dt)
        *val = (unsigned long long) *(const int *) buf;
    else if (MPI_UNSIGNED == dt)
        *val = *(const unsigned *) buf;
    else if (MPI_UNSIGNED_LONG == dt)
        *val = *(const unsigned long *) buf;
    else if (MPI_UNSIGNED_LONG_LONG == dt)
        *val = *(const unsigned long long *) buf;
    else if (MPI_LONG == dt)
        *val = (unsigned long long) *(const long *) buf;
    else if (MPI_LONG_LONG == dt)
        *val = (unsigned long long) *(const long long *) buf;
    else if (MPI_COUNT == dt)
        *val = (unsigned long long) *(const MPI_Count *) buf;
    else if (MPI_DOUBLE == dt)
        *val = (unsigned long long) *(const double *) buf;
    else if (MPI_C_BOOL == dt) /* a bool parameter: its first byte, 0 or 1, either way */
        *val = 0 != *(const unsigned char *) buf;
    else
        return 0;
    return 1;
}

static int t_cvar_open(const char *name, MPI_T_cvar_handle *h, MPI_Datatype *dt, int *count)
{
    int idx, verb, bind, scope, nlen = 0, dlen = 0;
    MPI_T_enum en;
    if (!t_mpit_ok)
        return 0;
    if (MPI_SUCCESS != MPI_T_cvar_get_index(name, &idx))
        return 0;
    if (MPI_SUCCESS !=
        MPI_T_cvar_get_info(idx, NULL, &nlen, &verb, dt, &en, NULL, &dlen, &bind, &scope))
        return 0;
    if (MPI_T_BIND_NO_OBJECT != bind)
        return 0;
    if (MPI_SUCCESS != MPI_T_cvar_handle_alloc(idx, NULL, h, count))
        return 0;
    return 1;
}

int t_cvar_ull(const char *name, unsigned long long *val)
{
    MPI_T_cvar_handle h;
    MPI_Datatype dt;
    int count, ok = 0;
    union {
        unsigned long long u;
        char pad[256];
    } buf;
    if (!t_cvar_open(name, &h, &dt, &count))
        return 0;
    if (1 == count && MPI_SUCCESS == MPI_T_cvar_read(h, &buf))
        ok = t_mpit_value(dt, &buf, val);
    MPI_T_cvar_handle_free(&h);
    return ok;
}

int t_cvar_str(const char *name, char *out, size_t len)
{
    MPI_T_cvar_handle h;
    MPI_Datatype dt;
    int count, ok = 0;
    if (!t_cvar_open(name, &h, &dt, &count))
        return 0;
    if (MPI_CHAR == dt) {
        char *tmp = t_malloc((size_t) count + 1);
        memset(tmp, 0, (size_t) count + 1);
        if (MPI_SUCCESS == MPI_T_cvar_read(h, tmp)) {
            snprintf(out, len, "%s", tmp);
            ok = 1;
        }
        free(tmp);
    }
    MPI_T_cvar_handle_free(&h);
    return ok;
}

static int t_limits_add(t_limits *l, const char *name)
{
    char cv[128];
    unsigned long long e, r, m;
    if (0 == strcmp(name, "self") || 0 == name[0] || l->nbtl >= 4)
        return 0;
    snprintf(cv, sizeof(cv), "btl_%s_eager_limit", name);
    if (!t_cvar_ull(cv, &e))
        return 0;
    snprintf(cv, sizeof(cv), "btl_%s_rndv_eager_limit", name);
    if (!t_cvar_ull(cv, &r))
        r = e;
    snprintf(cv, sizeof(cv), "btl_%s_max_send_size", name);
    if (!t_cvar_ull(cv, &m))
        m = e;
    snprintf(l->names[l->nbtl], sizeof(l->names[0]), "%s", name);
    l->eager[l->nbtl] = e;
    l->rndv_eager[l->nbtl] = r;
    l->max_send[l->nbtl] = m;
    l->nbtl++;
    return 1;
}

static void t_limits_parse(t_limits *l, const char *list)
{
    char tmp[256], *save = NULL;
    if ('^' == list[0])
        return; /* an exclusion list names nothing we can use */
    snprintf(tmp, sizeof(tmp), "%s", list);
    for (char *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        t_limits_add(l, tok);
}

void t_limits_get(int argc, char **argv, t_limits *l)
{
    static const char *known[] = {"vader", "sm", "tcp", "smcuda", "ofi", "openib", "uct", NULL};
    const char *arg = t_arg_value(argc, argv, "--btl");
    char list[256] = "";
    memset(l, 0, sizeof(*l));
    if (arg)
        t_limits_parse(l, arg);
    else if (t_cvar_str("btl", list, sizeof(list)) && list[0])
        t_limits_parse(l, list);
    if (0 == l->nbtl)
        for (int i = 0; known[i]; i++)
            t_limits_add(l, known[i]);
    T_CHECK(l->nbtl > 0, "cannot determine the BTL limits (btl='%s'); pass --btl=<name>", list);

    if (!t_cvar_ull("pml_ob1x_sendi_max", &l->sendi_max))
        l->sendi_max = 256;
    if (!t_cvar_ull("pml_ob1x_rndv_eager_limit", &l->pml_rndv_eager))
        l->pml_rndv_eager = 0;
    l->eager_min = l->first_frag_min = l->max_send_min = ~0ULL;
    l->sendi_capable = l->sendi_copies = 1;
    for (int i = 0; i < l->nbtl; i++) {
        unsigned long long ff = l->eager[i] < l->rndv_eager[i] ? l->eager[i] : l->rndv_eager[i];
        if (l->pml_rndv_eager && l->pml_rndv_eager < ff)
            ff = l->pml_rndv_eager;
        if (l->eager[i] < l->eager_min)
            l->eager_min = l->eager[i];
        if (l->eager[i] > l->eager_max)
            l->eager_max = l->eager[i];
        if (ff < l->first_frag_min)
            l->first_frag_min = ff;
        if (l->max_send[i] < l->max_send_min)
            l->max_send_min = l->max_send[i];
        if (l->max_send[i] > l->max_send_max)
            l->max_send_max = l->max_send[i];
        if (strcmp(l->names[i], "vader") && strcmp(l->names[i], "sm") &&
            strcmp(l->names[i], "smcuda"))
            l->sendi_capable = 0;
        if (strcmp(l->names[i], "smcuda"))
            l->sendi_copies = 0;
    }
}

void t_limits_print(const t_limits *l)
{
    char buf[512];
    int n = 0;
    for (int i = 0; i < l->nbtl; i++)
        n += snprintf(buf + n, sizeof(buf) - (size_t) n, "%s(eager %llu rndv %llu max_send %llu) ",
                      l->names[i], l->eager[i], l->rndv_eager[i], l->max_send[i]);
    t_log("limits: %ssendi_max %llu pml_rndv_eager %llu sendi_capable %d pvars %d", buf,
          l->sendi_max, l->pml_rndv_eager, l->sendi_capable, t_pvars);
}

static int t_cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *) a, y = *(const size_t *) b;
    return x < y ? -1 : x > y;
}

int t_boundary_sizes(const t_limits *l, size_t *sizes, int max, size_t cap)
{
    size_t cand[128];
    int n = 0, out = 0;
#define T_ADD(v)                                                                                   \
    do {                                                                                           \
        if (n < 128)                                                                               \
            cand[n++] = (size_t) (v);                                                              \
    } while (0)
#define T_ADD3(v)                                                                                  \
    do {                                                                                           \
        T_ADD((v) -1);                                                                             \
        T_ADD(v);                                                                                  \
        T_ADD((v) + 1);                                                                            \
    } while (0)
    T_ADD(0);
    T_ADD(1);
    T_ADD(255);
    T_ADD(256);
    T_ADD(257);
    T_ADD3(l->sendi_max);
    T_ADD3(l->first_frag_min);
    for (int i = 0; i < l->nbtl; i++) {
        T_ADD(l->eager[i] - 64);
        T_ADD(l->eager[i] - T_MATCH_HDR);
        T_ADD(l->eager[i] - T_MATCH_HDR + 1);
        T_ADD3(l->eager[i]);
        T_ADD3(l->rndv_eager[i]);
        for (int k = 1; k <= 3; k++) {
            T_ADD3(k * l->max_send[i]);
            T_ADD3(l->first_frag_min + k * l->max_send[i]);
        }
    }
    T_ADD(16u << 20);
#undef T_ADD3
#undef T_ADD
    qsort(cand, (size_t) n, sizeof(size_t), t_cmp_size);
    for (int i = 0; i < n && out < max; i++) {
        if (cand[i] > cap)
            continue;
        if (out > 0 && sizes[out - 1] == cand[i])
            continue;
        sizes[out++] = cand[i];
    }
    return out;
}

/* ------------------------------------------------------------------ */
/* MPI_T performance variables                                         */
/* ------------------------------------------------------------------ */

static const int t_pv_classes[] = {
    MPI_T_PVAR_CLASS_COUNTER,       MPI_T_PVAR_CLASS_LEVEL,      MPI_T_PVAR_CLASS_SIZE,
    MPI_T_PVAR_CLASS_HIGHWATERMARK, MPI_T_PVAR_CLASS_STATE,      MPI_T_PVAR_CLASS_AGGREGATE,
    MPI_T_PVAR_CLASS_TIMER,         MPI_T_PVAR_CLASS_PERCENTAGE, MPI_T_PVAR_CLASS_LOWWATERMARK,
    MPI_T_PVAR_CLASS_GENERIC,
};

static int t_pvar_open(const char *name, t_pvar_h *p)
{
    int idx = -1, verb, cls, bind, ro, cont, atomic, nlen = 0, dlen = 0;
    MPI_T_enum en;
    memset(p, 0, sizeof(*p));
    if (!t_mpit_ok)
        return 0;
    for (size_t c = 0; c < sizeof(t_pv_classes) / sizeof(t_pv_classes[0]); c++)
        if (MPI_SUCCESS == MPI_T_pvar_get_index(name, t_pv_classes[c], &idx))
            break;
        else
            idx = -1;
    if (idx < 0)
        return 0;
    if (MPI_SUCCESS != MPI_T_pvar_get_info(idx, NULL, &nlen, &verb, &cls, &p->dtype, &en, NULL,
                                           &dlen, &bind, &ro, &cont, &atomic))
        return 0;
    if (MPI_T_BIND_NO_OBJECT != bind)
        return 0;
    if (MPI_SUCCESS != MPI_T_pvar_handle_alloc(t_session, idx, NULL, &p->handle, &p->count))
        return 0;
    if (!cont)
        MPI_T_pvar_start(t_session, p->handle);
    p->found = 1;
    return 1;
}

static unsigned long long t_pvar_get(t_pvar_h *p, const char *name)
{
    union {
        unsigned long long u;
        char pad[256];
    } buf;
    unsigned long long v = 0;
    int rc;
    T_CHECK(1 == p->count, "pvar %s has %d values, expected 1", name, p->count);
    rc = MPI_T_pvar_read(t_session, p->handle, &buf);
    T_CHECK(MPI_SUCCESS == rc, "MPI_T_pvar_read(%s) failed (%d)", name, rc);
    T_CHECK(t_mpit_value(p->dtype, &buf, &v), "pvar %s has an unsupported datatype", name);
    return v;
}

int t_pvar_exists(const char *name)
{
    int idx;
    if (!t_mpit_ok)
        return 0;
    for (size_t c = 0; c < sizeof(t_pv_classes) / sizeof(t_pv_classes[0]); c++)
        if (MPI_SUCCESS == MPI_T_pvar_get_index(name, t_pv_classes[c], &idx))
            return 1;
    return 0;
}

unsigned long long t_pv_read_name(const char *name)
{
    static struct {
        const char *name;
        t_pvar_h h;
    } opened[8];
    static int n_opened;
    int i;

    for (i = 0; i < n_opened && 0 != strcmp(opened[i].name, name); i++)
        ;
    if (i == n_opened) {
        T_CHECK(n_opened < 8, "too many pvars read by name");
        T_CHECK(t_pvar_open(name, &opened[i].h), "no pvar %s (unbound)", name);
        opened[i].name = name;
        n_opened++;
    }
    return t_pvar_get(&opened[i].h, name);
}

unsigned long long t_pv_read(t_pv which)
{
    if (!t_pvars || !t_pv_h[which].found)
        return 0;
    return t_pvar_get(&t_pv_h[which], t_pv_names[which]);
}

void t_snap_take(t_snap *s)
{
    for (int i = 0; i < T_PV_COUNT; i++)
        s->v[i] = t_pv_read((t_pv) i);
}

unsigned long long t_snap_delta(const t_snap *a, const t_snap *b, t_pv which)
{
    return b->v[which] - a->v[which];
}

const char *t_proto_names(int mask, char *buf, size_t len)
{
    static const char *n[] = {"immediate",         "prepared", "allocated", "sendrecv_pipeline",
                              "buffered_pipeline", "rget",     "rput",      "rdma_pipeline"};
    size_t off = 0;
    buf[0] = 0;
    for (int i = 0; i < 8; i++)
        if (mask & (1 << i))
            off += (size_t) snprintf(buf + off, len - off, "%s%s", off ? "|" : "", n[i]);
    return buf;
}

void t_expect_proto(const t_snap *before, const t_snap *after, int allowed, int nmsgs,
                    long long bytes, int nsync, const char *ctx)
{
    static const t_pv msg[8] = {T_PV_IMM_MSG,     T_PV_PREP_MSG, T_PV_ALLOC_MSG, T_PV_SRPIPE_MSG,
                                T_PV_BUFPIPE_MSG, T_PV_RGET_MSG, T_PV_RPUT_MSG,  T_PV_RDMAPIPE_MSG};
    unsigned long long in_msgs = 0, in_bytes = 0, sync;
    char want[160], moved[640];
    size_t off = 0;
    if (!t_pvars)
        return;
    moved[0] = 0;
    for (int i = 0; i < 8; i++) {
        unsigned long long dm = t_snap_delta(before, after, msg[i]);
        unsigned long long db = t_snap_delta(before, after, (t_pv) (msg[i] + 1));
        if (dm || db)
            off += (size_t) snprintf(moved + off, sizeof(moved) - off, " %s+%llu(%llu bytes)",
                                     t_pv_names[msg[i]] + 9, dm, db);
        if (allowed & (1 << i)) {
            in_msgs += dm;
            in_bytes += db;
        } else if (dm) {
            T_FAIL("%s: protocol counter %s moved by %llu, expected one of {%s} [moved:%s]", ctx,
                   t_pv_names[msg[i]], dm, t_proto_names(allowed, want, sizeof(want)), moved);
        }
    }
    T_CHECK(in_msgs == (unsigned long long) nmsgs,
            "%s: protocol counters {%s} moved by %llu messages, expected %d [moved:%s]", ctx,
            t_proto_names(allowed, want, sizeof(want)), in_msgs, nmsgs, moved);
    if (bytes >= 0)
        T_CHECK(in_bytes == (unsigned long long) bytes,
                "%s: byte counters {%s} moved by %llu, expected %lld [moved:%s]", ctx,
                t_proto_names(allowed, want, sizeof(want)), in_bytes, bytes, moved);
    sync = t_snap_delta(before, after, T_PV_SYNC_MSG);
    T_CHECK(sync == (unsigned long long) nsync,
            "%s: pml_ob1x_synchronous_messages moved by %llu, expected %d [moved:%s]", ctx, sync,
            nsync, moved);
}

/* ------------------------------------------------------------------ */
/* life cycle                                                          */
/* ------------------------------------------------------------------ */

void t_init(int *argc, char ***argv, int required)
{
    int provided = MPI_THREAD_SINGLE, tprov = 0, missing = 0;
    const char *slash;
    char pml[64] = "?";
    if (argc && *argc > 0 && (*argv)[0]) {
        slash = strrchr((*argv)[0], '/');
        t_prog = slash ? slash + 1 : (*argv)[0];
    }
    t_mpit_ok = (MPI_SUCCESS == MPI_T_init_thread(required, &tprov));
    if (MPI_SUCCESS != MPI_Init_thread(argc, argv, required, &provided)) {
        fprintf(stdout, "FAIL: MPI_Init_thread failed [%s]\n", t_prog);
        exit(1);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    T_CHECK(provided >= required, "MPI_Init_thread provided %d < required %d", provided, required);
    T_CHECK(t_mpit_ok, "MPI_T_init_thread failed");
    T_MPI(MPI_T_pvar_session_create(&t_session));

    t_pvars = 1;
    for (int i = 0; i < T_PV_COUNT; i++)
        if (!t_pvar_open(t_pv_names[i], &t_pv_h[i]))
            missing++;
    if (missing) {
        const char *env = getenv("OB1X_TEST_NO_PVARS");
        t_pvars = 0;
        t_cvar_str("pml", pml, sizeof(pml));
        if (!(env && 0 == strcmp(env, "1")))
            T_FAIL("%d pml_ob1x performance variables missing (e.g. %s; pml='%s'); set "
                   "OB1X_TEST_NO_PVARS=1 to run without protocol assertions",
                   missing, t_pv_names[0], pml);
    }
}

int t_finalize(void)
{
    if (t_mpit_ok) {
        for (int i = 0; i < T_PV_COUNT; i++)
            if (t_pv_h[i].found) {
                if (MPI_T_PVAR_SESSION_NULL != t_session)
                    MPI_T_pvar_handle_free(t_session, &t_pv_h[i].handle);
                t_pv_h[i].found = 0;
            }
        if (MPI_T_PVAR_SESSION_NULL != t_session)
            MPI_T_pvar_session_free(&t_session);
        /* before MPI_Finalize: Open MPI 4.1 tears the BTLs down twice
         * (and crashes in vader) when MPI_T_finalize comes last */
        MPI_T_finalize();
        t_mpit_ok = 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == t_rank) {
        printf("PASS: %s%s\n", t_prog, t_pvars ? "" : " (protocol counters not checked)");
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}

/* ------------------------------------------------------------------ */
/* misc                                                                */
/* ------------------------------------------------------------------ */

double t_now(void)
{
    return MPI_Wtime();
}

const char *t_mode_name(t_mode m)
{
    static const char *n[] = {"standard", "ready", "synchronous", "buffered"};
    return m < T_MODE_COUNT ? n[m] : "?";
}

int t_send_mode(t_mode m, const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                MPI_Comm comm)
{
    switch (m) {
        case T_MODE_READY:
            return MPI_Rsend(buf, count, dt, dest, tag, comm);
        case T_MODE_SYNC:
            return MPI_Ssend(buf, count, dt, dest, tag, comm);
        case T_MODE_BUF:
            return MPI_Bsend(buf, count, dt, dest, tag, comm);
        default:
            return MPI_Send(buf, count, dt, dest, tag, comm);
    }
}

int t_isend_mode(t_mode m, const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                 MPI_Comm comm, MPI_Request *req)
{
    switch (m) {
        case T_MODE_READY:
            return MPI_Irsend(buf, count, dt, dest, tag, comm, req);
        case T_MODE_SYNC:
            return MPI_Issend(buf, count, dt, dest, tag, comm, req);
        case T_MODE_BUF:
            return MPI_Ibsend(buf, count, dt, dest, tag, comm, req);
        default:
            return MPI_Isend(buf, count, dt, dest, tag, comm, req);
    }
}

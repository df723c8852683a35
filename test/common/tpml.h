/*
 * tpml.h - helper library shared by the PML test programs (test/pml/).
 *
 * Three parts:
 *   1. checks and failure reporting (t_fail / T_CHECK / T_MPI): on failure a
 *      program prints one line "FAIL: <what> ..." and calls MPI_Abort;
 *   2. deterministic data patterns and byte-for-byte verification, including
 *      derived datatypes built for an exact number of data bytes;
 *   3. MPI_T helpers: control variable reads (BTL limits, PML parameters) and
 *      protocol counter (pvar) snapshots with an expectation API.
 *
 * Environment:
 *   OB1X_TEST_NO_PVARS=1  the pml_ob1x_* performance variables may be absent
 *                         (running under the stock ob1 PML); protocol
 *                         assertions are then skipped, correctness checks stay.
 */
#ifndef TPML_H
#define TPML_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ */
/* process identity and life cycle                                     */
/* ------------------------------------------------------------------ */

extern int t_rank;         /* rank in MPI_COMM_WORLD */
extern int t_size;         /* size of MPI_COMM_WORLD */
extern const char *t_prog; /* short program name for messages */

/* MPI_T_init_thread + MPI_Init_thread; fails if `required` is not provided.
 * Sets MPI_ERRORS_RETURN on MPI_COMM_WORLD so T_MPI can report errors. */
void t_init(int *argc, char ***argv, int required);
/* Frees MPI_T resources, MPI_Finalize, prints "PASS: <prog>" on rank 0. */
int t_finalize(void);

/* Returns 1 when argv holds `flag` exactly ("--long"). */
int t_has_arg(int argc, char **argv, const char *flag);
/* Returns the text after "name=" for an argument "name=value", or NULL. */
const char *t_arg_value(int argc, char **argv, const char *name);

/* ------------------------------------------------------------------ */
/* checks                                                              */
/* ------------------------------------------------------------------ */

void t_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
void t_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define T_FAIL(...) t_fail(__FILE__, __LINE__, __VA_ARGS__)
#define T_CHECK(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond))                                                                               \
            T_FAIL(__VA_ARGS__);                                                                   \
    } while (0)
/* Calls an MPI function and fails with its error string when it does not
 * return MPI_SUCCESS. */
#define T_MPI(call)                                                                                \
    do {                                                                                           \
        int t_rc_ = (call);                                                                        \
        if (MPI_SUCCESS != t_rc_)                                                                  \
            t_mpi_fail(__FILE__, __LINE__, #call, t_rc_);                                          \
    } while (0)
void t_mpi_fail(const char *file, int line, const char *what, int rc) __attribute__((noreturn));
/* MPI error class name + string, for messages. */
const char *t_err_string(int rc);
/* The error class of an MPI return code (MPI_ERR_BUFFER, MPI_ERR_TRUNCATE...). */
int t_err_class(int rc);

/* Resets a status before a receive, so that a call that does not fill in
 * the source and tag is seen. MPI_ERROR is only ever written by the
 * multiple-completion calls (Waitall, Testsome...), and only when they
 * return MPI_ERR_IN_STATUS: a test reads it only then, or after setting it
 * itself (here, or to a sentinel) to check that a call left it alone. */
static inline void t_status_reset(MPI_Status *st)
{
    st->MPI_SOURCE = -77;
    st->MPI_TAG = -77;
    st->MPI_ERROR = MPI_SUCCESS;
}
/* Checks a receive status: source, tag (MPI_ANY_* = don't check),
 * MPI_Get_count(MPI_BYTE) == bytes (bytes < 0 = don't check). Not the
 * MPI_ERROR field (see t_status_reset): errors come in return codes. */
void t_check_status(const MPI_Status *st, int source, int tag, long bytes, const char *ctx);

/* ------------------------------------------------------------------ */
/* data patterns                                                       */
/* ------------------------------------------------------------------ */

/* Byte i of the pattern stream identified by `seed`. Any two different
 * seeds give different streams; consecutive bytes differ. */
static inline unsigned char t_pat(uint32_t seed, size_t i)
{
    uint32_t x = seed * 0x9E3779B1u + (uint32_t) i * 0x85EBCA77u + (uint32_t) (i >> 32);
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 12;
    return (unsigned char) (x ^ (x >> 8));
}
void t_fill(void *buf, size_t n, uint32_t seed);
/* Returns the index of the first mismatch, or (size_t)-1 if all match. */
size_t t_verify(const void *buf, size_t n, uint32_t seed);
/* t_verify + T_FAIL with context, size and offset on mismatch. */
void t_check_data(const void *buf, size_t n, uint32_t seed, const char *ctx);
/* Checks that n bytes hold `guard` (receive buffer left untouched). */
void t_check_guard(const void *buf, size_t n, unsigned char guard, const char *ctx);
/* A ping-pong of `iters` messages of `size` bytes with `peer` on
 * MPI_COMM_WORLD: even ones sent by rank 0, odd ones by rank 1; each
 * filled with t_fill's pattern of its index and verified on arrival. */
void t_pingpong(void *buf, size_t size, int iters, int peer, int tag);

/* Seed shared by sender and receiver for a message: mixes the fields. */
uint32_t t_seed(uint32_t a, uint32_t b, uint32_t c);

/* Self-describing messages: when len >= T_MSG_HDR the first 16 bytes hold
 * {src, tag, seq, len} (uint32 each) and the rest the pattern seeded from
 * them; shorter messages hold only the pattern (receiver must know seq). */
#define T_MSG_HDR 16
void t_msg_fill(void *buf, size_t len, int src, int tag, uint32_t seq);
/* Verifies a received message against its status (source, tag, length from
 * MPI_Get_count) and returns its sequence number. For len < T_MSG_HDR the
 * caller passes the expected seq in `seq_if_short`. */
uint32_t t_msg_check(const void *buf, const MPI_Status *st, uint32_t seq_if_short, const char *ctx);

/* Simple deterministic generator (xorshift64*). */
typedef struct {
    uint64_t s;
} t_rng;
void t_rng_init(t_rng *r, uint64_t seed);
uint64_t t_rng_next(t_rng *r);
/* uniform in [0, n) */
uint64_t t_rng_below(t_rng *r, uint64_t n);

/* Allocation that fails the test instead of returning NULL. */
void *t_malloc(size_t n);

/* ------------------------------------------------------------------ */
/* typed buffers: a datatype describing exactly `bytes` data bytes      */
/* ------------------------------------------------------------------ */

typedef enum {
    T_DT_CONTIG = 0, /* MPI_BYTE x bytes */
    T_DT_VECTOR,     /* byte blocks at a fixed stride (gaps between) + tail */
    T_DT_STRUCT,     /* struct of byte fields with holes, resized extent, + tail */
    T_DT_INDEXED,    /* blocks of varying length placed in reverse address order */
    T_DT_COUNT
} t_dt_kind;

typedef struct {
    t_dt_kind kind;
    size_t bytes;       /* data bytes described */
    MPI_Datatype type;  /* committed (MPI_BYTE for CONTIG) */
    int count;          /* count to pass with `type` */
    size_t span;        /* buffer bytes needed (extent covering all data) */
    size_t alloc;       /* bytes allocated: span + 1 + t_typed_slack */
    unsigned char *buf; /* buffer of `alloc` bytes (owned) */
} t_typed;

/* Extra guarded bytes allocated after each typed buffer (default 0; the
 * truncation test raises it to catch writes past the receive buffer). */
extern size_t t_typed_slack;

const char *t_dt_name(t_dt_kind k);
/* Builds the datatype and allocates the buffer (span + nothing else). */
void t_typed_create(t_typed *t, t_dt_kind kind, size_t bytes);
void t_typed_free(t_typed *t);
/* Fills the buffer: data bytes get the pattern stream `seed` in type-map
 * order, gap bytes get `gapfill`. */
void t_typed_fill(t_typed *t, uint32_t seed, unsigned char gapfill);
/* Fills the whole buffer (data and gaps) with `guard` before a receive. */
void t_typed_guard(t_typed *t, unsigned char guard);
/* Verifies a received buffer: the first `nbytes` data bytes (type-map
 * order) hold the pattern stream `seed`; every other byte of the buffer,
 * gaps and data bytes past nbytes, still holds `guard`. */
void t_typed_check(const t_typed *t, size_t nbytes, uint32_t seed, unsigned char guard,
                   const char *ctx);

/* ------------------------------------------------------------------ */
/* MPI_T control variables                                             */
/* ------------------------------------------------------------------ */

/* Reads an integer-valued cvar by name; returns 1 and sets *val when the
 * variable exists and could be read, else 0. */
int t_cvar_ull(const char *name, unsigned long long *val);
/* Reads a string cvar; returns 1 on success (value copied into buf). */
int t_cvar_str(const char *name, char *buf, size_t len);

/* Bytes of pml/ob1x's MATCH header (OB1X_HDR_MATCH_LEN in
 * ompi/mca/pml/ob1x/pml_ob1x_hdr.h): on a BTL, a message of up to
 * btl_eager_limit - T_MATCH_HDR bytes goes eagerly, one byte more by
 * rendezvous (docs/ob1x.md, "Protocol selection"). pml.sizes pins it. */
#define T_MATCH_HDR 14

/* Thresholds that decide protocols for a peer, from the BTLs in use. */
typedef struct {
    int nbtl; /* non-self BTLs found */
    char names[4][32];
    unsigned long long eager[4], rndv_eager[4], max_send[4];
    unsigned long long eager_min, eager_max; /* over the BTLs */
    unsigned long long first_frag_min;       /* min(eager, rndv_eager, pml limit) */
    unsigned long long max_send_min, max_send_max;
    unsigned long long sendi_max;      /* pml_ob1x_sendi_max or 256 */
    unsigned long long pml_rndv_eager; /* pml_ob1x_rndv_eager_limit, 0 if absent */
    int sendi_capable;                 /* every BTL in use is known to provide sendi */
    int sendi_copies;                  /* ... and copies eager data (no in-place send): ob1x tries
                                          sendi up to the eager limit, not only up to sendi_max */
} t_limits;

/* Determines the BTLs carrying traffic to peers: program argument
 * "--btl=a,b" if given, else the "btl" cvar (self removed), else every
 * BTL whose btl_<name>_eager_limit cvar exists. Fails if none found. */
void t_limits_get(int argc, char **argv, t_limits *l);
void t_limits_print(const t_limits *l);
/* Adds every boundary size (0,1,255..257, eager-64, eager-T_MATCH_HDR and
 * one more, eager+-1, rndv+-1, k*max_send+-1, 16 MiB) to `sizes` (sorted,
 * unique, <= cap). Returns the count. */
int t_boundary_sizes(const t_limits *l, size_t *sizes, int max, size_t cap);

/* ------------------------------------------------------------------ */
/* MPI_T performance variables of pml/ob1x                             */
/* ------------------------------------------------------------------ */

typedef enum {
    T_PV_IMM_MSG = 0,
    T_PV_IMM_BYTES,
    T_PV_PREP_MSG,
    T_PV_PREP_BYTES,
    T_PV_ALLOC_MSG,
    T_PV_ALLOC_BYTES,
    T_PV_SRPIPE_MSG,
    T_PV_SRPIPE_BYTES,
    T_PV_BUFPIPE_MSG,
    T_PV_BUFPIPE_BYTES,
    T_PV_SYNC_MSG,
    T_PV_UNEXP_LEN,
    T_PV_UNEXP_HIGH,
    T_PV_FLOW_RNDV,
    T_PV_OOO_FRAGS,
    T_PV_RES_RETRIES,
    T_PV_LATE_REQ,
    T_PV_ORPHAN,
    T_PV_RGET_MSG, /* the RDMA protocols, in the order of T_P_* below */
    T_PV_RGET_BYTES,
    T_PV_RPUT_MSG,
    T_PV_RPUT_BYTES,
    T_PV_RDMAPIPE_MSG,
    T_PV_RDMAPIPE_BYTES,
    T_PV_COUNT
} t_pv;

extern const char *const t_pv_names[T_PV_COUNT];

/* 1 when the pml_ob1x pvars are available. If they are missing and
 * OB1X_TEST_NO_PVARS=1 is not set, t_init fails the test. */
extern int t_pvars;

typedef struct {
    unsigned long long v[T_PV_COUNT];
} t_snap;

/* Reads one pvar by enum (0 when pvars are absent). */
unsigned long long t_pv_read(t_pv which);
/* Reads the unbound pvar `name` of any component (opened on first use and
 * kept; fails the test when it does not exist). A counter's handle counts
 * from its allocation: read once before the traffic, then take the
 * difference. */
unsigned long long t_pv_read_name(const char *name);
/* 1 if a pvar named `name` exists. */
int t_pvar_exists(const char *name);
void t_snap_take(t_snap *s);
unsigned long long t_snap_delta(const t_snap *a, const t_snap *b, t_pv which);

/* Protocol classes for expectations (bit mask). */
enum {
    T_P_IMM = 1,        /* eager immediate */
    T_P_PREP = 2,       /* eager prepared */
    T_P_ALLOC = 4,      /* eager allocated */
    T_P_SRPIPE = 8,     /* send/recv pipeline (rendezvous) */
    T_P_BUFPIPE = 16,   /* buffered pipeline */
    T_P_RGET = 32,      /* RDMA direct get */
    T_P_RPUT = 64,      /* RDMA direct put */
    T_P_RDMAPIPE = 128, /* RDMA pipeline */
    T_P_EAGER = T_P_IMM | T_P_PREP | T_P_ALLOC,
    T_P_RDMA = T_P_RGET | T_P_RPUT | T_P_RDMAPIPE,
    /* any unbuffered rendezvous: which one depends on the BTL's RDMA */
    T_P_RNDV = T_P_SRPIPE | T_P_RDMA,
    T_P_ANY = 255
};

/* Asserts, between two snapshots taken on one process around its sends:
 * the message counters of the protocols in `allowed` moved by `nmsgs` in
 * total and those outside `allowed` did not move; the matching _bytes
 * counters moved by `bytes` in total (bytes < 0: not checked); and
 * pml_ob1x_synchronous_messages moved by `nsync`. No-op without pvars. */
void t_expect_proto(const t_snap *before, const t_snap *after, int allowed, int nmsgs,
                    long long bytes, int nsync, const char *ctx);
const char *t_proto_names(int mask, char *buf, size_t len);

/* ------------------------------------------------------------------ */
/* misc                                                                */
/* ------------------------------------------------------------------ */

double t_now(void);
/* Modes of point-to-point send. */
typedef enum { T_MODE_STD = 0, T_MODE_READY, T_MODE_SYNC, T_MODE_BUF, T_MODE_COUNT } t_mode;
const char *t_mode_name(t_mode m);
/* Blocking send in the given mode (ready mode: caller guarantees the
 * receive is posted; buffered: caller has attached a buffer). */
int t_send_mode(t_mode m, const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                MPI_Comm comm);
int t_isend_mode(t_mode m, const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                 MPI_Comm comm, MPI_Request *req);

#endif /* TPML_H */

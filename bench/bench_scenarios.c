/*
 * ob1x-scenarios: whole-application patterns that once went wrong, timed the way a user sees
 * them; bench/compare --scenarios runs them for every configuration side by side.
 *
 *   burst    rank 0 posts N MPI_Isend of 3000 B (tags i % 1000), then an MPI_Send of 4 B with
 *            a tag of its own; rank 1 receives the 4-byte message first, then the N in order.
 *            Reported: burst_first, the time from a barrier until the 4-byte message arrived;
 *            burst_total, until all N had arrived.  The size column is N.  The cost must grow
 *            linearly with N.
 *   ibsend   the same with MPI_Ibsend into a 1 MiB attached buffer (ibsend_first, ibsend_total);
 *            run last, as a refused MPI_Ibsend ends the run (see burst_send).
 *   threads  MPI_THREAD_MULTIPLE, 2 ranks x 4 threads; each thread repeats: MPI_Isend or
 *            MPI_Issend (alternately, 16 B-200 KB) to the other rank, one MPI_ANY_SOURCE /
 *            MPI_ANY_TAG receive (Recv, Probe+Recv, Iprobe-poll+Recv, Mprobe+Mrecv,
 *            Improbe-poll+Imrecv in turn), a wait for its send.  Reported: the wall time; the
 *            size column is the number of sends per thread.
 *
 * Output has ob1x-bench's format (one "# test=" line per test, then "<size> <median> <min>
 * <max> <trials>"), in seconds.  Every message is checked (sequence, tag, length, a pattern);
 * a wrong one ends the run with MPI_Abort.
 *
 * usage: ob1x-scenarios [-t burst,ibsend,threads] [-s burst N list] [-i threads sends list]
 *                       [-r trials]
 */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BURST_LEN 3000
#define BURST_TAGS 1000
#define SMALL_TAG 4242
#define BSEND_BYTES (1 << 20)
#define NT 4
#define MAXLEN (200 * 1024)

static int rank, trials = 3;

static void fail(const char *what, long a, long b)
{
    fprintf(stderr, "ob1x-scenarios: rank %d: %s (%ld, %ld)\n", rank, what, a, b);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static unsigned char pattern(uint32_t seq, uint32_t who, size_t i)
{
    return (unsigned char) (seq * 31u + who * 7u + (uint32_t) i);
}

/* The first 8 bytes hold (who, seq); the rest a pattern of both. */
static void fill(unsigned char *b, size_t len, uint32_t who, uint32_t seq)
{
    memcpy(b, &who, 4);
    memcpy(b + 4, &seq, 4);
    for (size_t i = 8; i < len; i++) {
        b[i] = pattern(seq, who, i);
    }
}

/* Checks what fill wrote; returns seq. */
static uint32_t check(const unsigned char *b, size_t len, uint32_t who)
{
    uint32_t w, seq;
    memcpy(&w, b, 4);
    memcpy(&seq, b + 4, 4);
    if (w != who) {
        fail("message from the wrong sender", (long) w, (long) who);
    }
    for (size_t i = 8; i < len; i++) {
        if (b[i] != pattern(seq, who, i)) {
            fail("wrong byte in message", (long) seq, (long) i);
        }
    }
    return seq;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* One section: a row per size, from `trials` values each (v[k * trials + t]). */
static void report(const char *test, const char *what, const long *sizes, int nsizes, double *v)
{
    int n = trials;
    printf("# test=%s unit=s better=lower np=2 what=%s\n", test, what);
    for (int k = 0; k < nsizes; k++, v += n) {
        qsort(v, (size_t) n, sizeof(*v), cmp_double);
        printf("%ld %.6f %.6f %.6f %d\n", sizes[k],
               n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1], n);
    }
    fflush(stdout);
}

/* ---------------------------------------------------------------- burst */

/* A PML that packs every buffered send it cannot hand to the BTL at once
 * (stock ob1) refuses MPI_Ibsend once the 1 MiB buffer is full; stock ob1
 * 4.1.4 then also loses the refused send's sequence number, so the peer
 * would wait forever: the run ends there, with what it measured so far. */
static void burst_send(int n, int ibsend, unsigned char *buf, MPI_Request *r)
{
    int sent = 0;
    for (; sent < n; sent++) {
        unsigned char *b = buf + (size_t) sent * BURST_LEN;
        int tag = sent % BURST_TAGS;
        if (ibsend) {
            if (MPI_SUCCESS != MPI_Ibsend(b, BURST_LEN, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r[sent])) {
                printf("# MPI_Ibsend refused at message %d of %d (buffer full): no ibsend figures\n",
                       sent, n);
                fflush(stdout);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        } else {
            MPI_Isend(b, BURST_LEN, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r[sent]);
        }
    }
    MPI_Send(&sent, 1, MPI_INT, 1, SMALL_TAG, MPI_COMM_WORLD);
    MPI_Waitall(sent, r, MPI_STATUSES_IGNORE);
}

static void burst_recv(int n, unsigned char *b, double *first, double *total)
{
    double t0 = MPI_Wtime();
    int sent = 0, count;
    MPI_Status st;

    MPI_Recv(&sent, 1, MPI_INT, 0, SMALL_TAG, MPI_COMM_WORLD, &st);
    *first = MPI_Wtime() - t0;
    if (sent != n) {
        fail("wrong small message", sent, n);
    }
    for (int i = 0; i < sent; i++) {
        MPI_Recv(b, BURST_LEN, MPI_BYTE, 0, i % BURST_TAGS, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (BURST_LEN != count || (uint32_t) i != check(b, BURST_LEN, 0)) {
            fail("burst message out of order or cut", i, count);
        }
    }
    *total = MPI_Wtime() - t0;
}

static void run_burst(const char *name, int ibsend, const long *ns, int nn)
{
    long nmax = 0;
    for (int k = 0; k < nn; k++) {
        nmax = ns[k] > nmax ? ns[k] : nmax;
    }
    unsigned char *buf = malloc((size_t) nmax * BURST_LEN);
    MPI_Request *r = malloc(sizeof(MPI_Request) * (size_t) nmax);
    double *first = malloc(sizeof(double) * (size_t) (trials * nn));
    double *total = malloc(sizeof(double) * (size_t) (trials * nn));
    void *bbuf = malloc(BSEND_BYTES);
    char test[64];
    int bsize;

    if (NULL == buf || NULL == r || NULL == first || NULL == total || NULL == bbuf) {
        fail("out of memory", nmax, 0);
    }
    if (ibsend) {
        MPI_Buffer_attach(bbuf, BSEND_BYTES);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    }
    for (int i = 0; i < nmax; i++) {
        fill(buf + (size_t) i * BURST_LEN, BURST_LEN, 0, (uint32_t) i);
    }
    for (int k = 0; k < nn; k++) {
        for (int t = 0; t < trials; t++) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (0 == rank) {
                burst_send((int) ns[k], ibsend, buf, r);
            } else if (1 == rank) {
                burst_recv((int) ns[k], buf, &first[k * trials + t], &total[k * trials + t]);
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (1 == rank) {
        snprintf(test, sizeof(test), "%s_first", name);
        report(test, "until_the_small_message", ns, nn, first);
        snprintf(test, sizeof(test), "%s_total", name);
        report(test, "until_all", ns, nn, total);
    }
    if (ibsend) {
        MPI_Buffer_detach(&bbuf, &bsize);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
    free(bbuf);
    free(total);
    free(first);
    free(r);
    free(buf);
}

/* -------------------------------------------------------------- threads */

static int thread_iters;

static size_t thread_len(int who, int i)
{
    uint32_t h = (uint32_t) (who * 2654435761u) ^ (uint32_t) (i * 40503u);
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    switch (h % 10) {
        case 0: case 1: case 2: case 3: case 4:
            return 16 + (h >> 8) % 1009;
        case 5: case 6: case 7:
            return 1024 + (h >> 8) % (32 * 1024);
        default:
            return 32 * 1024 + (h >> 8) % (MAXLEN - 32 * 1024 + 1);
    }
}

static void thread_receive(int i, unsigned char *b, MPI_Status *st)
{
    int flag = 0;
    MPI_Message m;
    MPI_Request q;

    switch (i % 5) {
        case 0:
            MPI_Recv(b, MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st);
            break;
        case 1:
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st);
            MPI_Recv(b, MAXLEN, MPI_BYTE, st->MPI_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st);
            break;
        case 2:
            while (!flag) {
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, st);
            }
            MPI_Recv(b, MAXLEN, MPI_BYTE, st->MPI_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st);
            break;
        case 3:
            MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m, st);
            MPI_Mrecv(b, MAXLEN, MPI_BYTE, &m, st);
            break;
        default:
            while (!flag) {
                MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, st);
            }
            MPI_Imrecv(b, MAXLEN, MPI_BYTE, &m, &q);
            MPI_Wait(&q, st);
            break;
    }
}

static void *thread_worker(void *arg)
{
    int t = (int) (intptr_t) arg, peer = 1 - rank, count;
    unsigned char *sb = malloc(MAXLEN), *rb = malloc(MAXLEN);
    MPI_Request r;
    MPI_Status st;

    if (NULL == sb || NULL == rb) {
        fail("out of memory", t, 0);
    }
    for (int i = 0; i < thread_iters; i++) {
        size_t len = thread_len(rank * NT + t, i);
        uint32_t seq;
        fill(sb, len, (uint32_t) (rank * NT + t), (uint32_t) i);
        if (i % 2) {
            MPI_Issend(sb, (int) len, MPI_BYTE, peer, t, MPI_COMM_WORLD, &r);
        } else {
            MPI_Isend(sb, (int) len, MPI_BYTE, peer, t, MPI_COMM_WORLD, &r);
        }
        thread_receive(i, rb, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (st.MPI_SOURCE != peer || st.MPI_TAG < 0 || st.MPI_TAG >= NT) {
            fail("wrong envelope", st.MPI_SOURCE, st.MPI_TAG);
        }
        seq = check(rb, (size_t) count, (uint32_t) (peer * NT + st.MPI_TAG));
        if (thread_len(peer * NT + st.MPI_TAG, (int) seq) != (size_t) count) {
            fail("wrong length", (long) seq, count);
        }
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    free(sb);
    free(rb);
    return NULL;
}

static void run_threads(const long *iters, int ni)
{
    double *secs = malloc(sizeof(double) * (size_t) (trials * ni));
    pthread_t th[NT];

    for (int k = 0; k < ni; k++) {
        thread_iters = (int) iters[k];
        for (int t = 0; t < trials; t++) {
            double t0;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            for (int j = 0; j < NT; j++) {
                pthread_create(&th[j], NULL, thread_worker, (void *) (intptr_t) j);
            }
            for (int j = 0; j < NT; j++) {
                pthread_join(th[j], NULL);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            secs[k * trials + t] = MPI_Wtime() - t0;
        }
    }
    if (0 == rank) {
        report("threads", "wall_time", iters, ni, secs);
    }
    free(secs);
}

/* ------------------------------------------------------------------ main */

static int parse_list(const char *s, long *v, int max)
{
    int n = 0;
    char *copy = strdup(s), *save = NULL;
    for (char *p = strtok_r(copy, ",", &save); NULL != p && n < max;
         p = strtok_r(NULL, ",", &save)) {
        v[n++] = strtol(p, NULL, 10);
    }
    free(copy);
    return n;
}

int main(int argc, char **argv)
{
    const char *tests = "burst,ibsend,threads";
    long ns[16], iters[16];
    int nn = parse_list("10000,20000,30000", ns, 16), ni = parse_list("2000", iters, 16);
    int provided, c, size;

    while (-1 != (c = getopt(argc, argv, "t:s:i:r:h"))) {
        switch (c) {
            case 't':
                tests = optarg;
                break;
            case 's':
                nn = parse_list(optarg, ns, 16);
                break;
            case 'i':
                ni = parse_list(optarg, iters, 16);
                break;
            case 'r':
                trials = atoi(optarg);
                break;
            default:
                fprintf(stderr, "usage: %s [-t burst,ibsend,threads] [-s N,...] [-i sends,...] "
                                "[-r trials]\n", argv[0]);
                return 2;
        }
    }
    MPI_Init_thread(&argc, &argv, strstr(tests, "threads") ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
                    &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (2 != size || trials < 1) {
        fail("needs 2 ranks and -r >= 1", size, trials);
    }
    if (strstr(tests, "burst")) {
        run_burst("burst", 0, ns, nn);
    }
    if (strstr(tests, "threads")) {
        if (MPI_THREAD_MULTIPLE != provided) {
            fail("MPI_THREAD_MULTIPLE not provided", provided, 0);
        }
        run_threads(iters, ni);
    }
    if (strstr(tests, "ibsend")) { /* last: it may end the run (see burst_send) */
        run_burst("ibsend", 1, ns, nn);
    }
    MPI_Finalize();
    return 0;
}

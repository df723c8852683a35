/*
 * probe_threads.c - MPI_Probe / MPI_Mprobe blocked in several threads
 * (MPI_THREAD_MULTIPLE) sleep like blocked receives, and wake for their
 * message.
 *
 * 2 ranks. Rank 0 runs 4 threads; thread t blocks in MPI_Probe (t even,
 * from rank 1) or MPI_Mprobe (t odd, any source) for tag t on a duplicate
 * of MPI_COMM_WORLD, then receives and checks the message. Rank 1 waits
 * wait= seconds (default 2) and sends tags 3, 2, 1, 0 in that order (eager
 * and rendezvous sizes), so most probers are woken by another thread's
 * message first and must go back to waiting.
 *
 * Open MPI's wait lets one waiting thread progress while the others sleep;
 * a probe that spins on progress instead keeps every blocked thread busy.
 * So at most one of the four may have used more than 1% of a CPU over the
 * wait (each thread's CPU time is measured with CLOCK_THREAD_CPUTIME_ID).
 */
#include "tpml.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NT 4

static const size_t lens[NT] = {100, 100 * 1024, 0, 64 * 1024};
static double wait_s = 2;
static MPI_Comm comm;
static double cpu_used[NT];

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static void *prober(void *arg)
{
    int t = (int) (intptr_t) arg, count;
    unsigned char *b = t_malloc(lens[t] + 1);
    char ctx[64];
    MPI_Message m;
    MPI_Status st;
    double c0 = thread_cpu();

    snprintf(ctx, sizeof(ctx), "thread %d (%s)", t, t % 2 ? "Mprobe" : "Probe");
    t_status_reset(&st);
    if (t % 2) {
        T_MPI(MPI_Mprobe(MPI_ANY_SOURCE, t, comm, &m, &st));
    } else {
        T_MPI(MPI_Probe(1, t, comm, &st));
    }
    cpu_used[t] = thread_cpu() - c0;
    t_check_status(&st, 1, t, (long) lens[t], ctx);
    t_status_reset(&st);
    if (t % 2) {
        T_MPI(MPI_Mrecv(b, (int) lens[t] + 1, MPI_BYTE, &m, &st));
    } else {
        T_MPI(MPI_Recv(b, (int) lens[t] + 1, MPI_BYTE, 1, t, comm, &st));
    }
    t_check_status(&st, 1, t, (long) lens[t], ctx);
    T_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
    T_CHECK((size_t) count == lens[t], "%s: %d bytes", ctx, count);
    t_check_data(b, lens[t], t_seed(1, (uint32_t) t, 0), ctx);
    free(b);
    return NULL;
}

static void run_probers(void)
{
    pthread_t th[NT];
    int busy = 0;

    for (int t = 0; t < NT; t++) {
        pthread_create(&th[t], NULL, prober, (void *) (intptr_t) t);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* the sender's wait starts now */
    for (int t = 0; t < NT; t++) {
        pthread_join(th[t], NULL);
    }
    for (int t = 0; t < NT; t++) {
        t_log("thread %d: %.3f s CPU while blocked", t, cpu_used[t]);
        busy += cpu_used[t] > 0.01 * wait_s; /* a sleeping one: about 0.1% */
    }
    T_CHECK(busy <= 1, "%d of %d blocked probing threads used more than 1%% of a CPU", busy, NT);
}

static void send_late(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    usleep((useconds_t) (wait_s * 1e6));
    for (int t = NT - 1; t >= 0; t--) {
        unsigned char *b = t_malloc(lens[t] + 1);
        t_fill(b, lens[t], t_seed(1, (uint32_t) t, 0));
        T_MPI(MPI_Send(b, (int) lens[t], MPI_BYTE, 0, t, comm));
        free(b);
    }
}

int main(int argc, char **argv)
{
    const char *v;

    t_init(&argc, &argv, MPI_THREAD_MULTIPLE);
    T_CHECK(2 == t_size, "needs exactly 2 ranks");
    if (NULL != (v = t_arg_value(argc, argv, "wait"))) {
        wait_s = atof(v);
    }
    T_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    if (0 == t_rank) {
        run_probers();
    } else {
        send_late();
    }
    T_MPI(MPI_Comm_free(&comm));
    return t_finalize();
}

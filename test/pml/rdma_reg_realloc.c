/*
 * rdma_reg_realloc.c - a buffer freed and allocated again at the same
 * address is never served the old registration.
 *
 * Rank 0 (mpi_leave_pinned on) mallocs 16 MiB, sends it twice (the second
 * send reuses the cached registration: the cache works for this buffer),
 * frees it, mallocs 16 MiB again and must get the same address, fills it
 * with other data and sends it: a new registration must be made (the
 * memory hooks dropped the old one when free unmapped the memory). Rank 1
 * checks every byte of every message. The program fixes glibc's mmap
 * threshold (mallopt) so that both buffers are mmapped, not taken from the
 * heap: glibc otherwise raises the threshold when the first one is freed.
 * Expects one RDMA BTL to the peer (--mca btl self,smcuda).
 */
#include "treg.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MSG_BYTES (16u << 20)

static void send_one(const void *buf, t_reg_counters *c, t_reg_snap *d, const char *proto)
{
    t_reg_snap a, b;

    t_reg_read(c, &a);
    T_MPI(MPI_Send(buf, MSG_BYTES, MPI_BYTE, 1, 3, MPI_COMM_WORLD));
    t_reg_read(c, &b);
    d->made = b.made - a.made;
    d->reused = b.reused - a.reused;
    d->proto = b.proto - a.proto;
    T_CHECK(1 == d->proto, "the message did not go by %s", proto);
}

static void sender(t_reg_counters *c, const char *proto)
{
    unsigned char *a = t_malloc(MSG_BYTES), *b;
    uintptr_t old = (uintptr_t) a;
    t_reg_snap d;

    t_fill(a, MSG_BYTES, 1);
    send_one(a, c, &d, proto);
    t_log("first buffer %p: %llu made, %llu reused", (void *) a, d.made, d.reused);
    T_CHECK(1 == d.made && 0 == d.reused, "first send: %llu registrations made, %llu reused",
            d.made, d.reused);
    t_fill(a, MSG_BYTES, 2);
    send_one(a, c, &d, proto);
    T_CHECK(0 == d.made && 1 == d.reused,
            "same buffer again: %llu registrations made, %llu reused (expected 0 and 1)", d.made,
            d.reused);
    free(a);
    b = t_malloc(MSG_BYTES);
    T_CHECK((uintptr_t) b == old,
            "malloc gave %p after freeing %#lx: cannot reproduce the same address", (void *) b,
            (unsigned long) old);
    t_fill(b, MSG_BYTES, 3);
    send_one(b, c, &d, proto);
    t_log("new buffer %p: %llu made, %llu reused", (void *) b, d.made, d.reused);
    T_CHECK(1 == d.made && 0 == d.reused,
            "reallocated buffer: %llu registrations made, %llu reused (expected 1 and 0: a stale "
            "registration was served)",
            d.made, d.reused);
    free(b);
}

static void receiver(void)
{
    unsigned char *buf = t_malloc(MSG_BYTES);
    MPI_Status st;

    for (uint32_t seed = 1; seed <= 3; seed++) {
        char ctx[32];

        memset(buf, 0xee, MSG_BYTES);
        T_MPI(MPI_Recv(buf, MSG_BYTES, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &st));
        t_check_status(&st, 0, 3, MSG_BYTES, "receive");
        snprintf(ctx, sizeof(ctx), "message %u", seed);
        t_check_data(buf, MSG_BYTES, seed, ctx);
    }
    free(buf);
}

int main(int argc, char **argv)
{
    const char *proto = t_arg_value(argc, argv, "--proto");
    t_reg_counters c;

    /* Fixed (not dynamic) threshold: every 16 MiB block is mmapped and
     * free unmaps it. */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    T_CHECK(2 == t_size, "needs 2 processes");
    proto = proto ? proto : "rget";
    t_reg_open(&c, proto);
    if (0 == t_rank) {
        sender(&c, proto);
    } else {
        receiver();
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    t_reg_close(&c);
    return t_finalize();
}

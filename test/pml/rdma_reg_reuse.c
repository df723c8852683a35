/*
 * rdma_reg_reuse.c - the registration cache and mpi_leave_pinned.
 *
 * Rank 0 sends one 1 MiB buffer to rank 1 N times (default 1000), by the
 * protocol named with --proto= (default rget); before each send it stamps
 * the round into the buffer's first and last 8 bytes, so every message
 * differs, and rank 1 checks every byte. Rank 0's counters:
 *   --expect=cached   (mpi_leave_pinned on): 1 registration made, N-1 reused
 *   --expect=uncached (mpi_leave_pinned 0):  N made, none reused
 *   --expect=none     (a BTL that needs no registration: vader with CMA,
 *                     smcuda without mpi_leave_pinned 1):
 *                     none made or reused, on either rank
 * and pml_ob1x_<proto>_messages moved by N. Rank 1 registers its receive
 * buffer or not, as the protocol needs: if it does, at most once when
 * cached and never reused when not; --recv-regs=K: exactly K times (0: a
 * BTL whose local side of a get needs no registration, smcuda).
 * Expects one RDMA BTL to the peer (--mca btl self,smcuda or self,vader).
 */
#include "treg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MSG_BYTES (1u << 20)
#define STAMP 8

static void stamp(unsigned char *buf, uint32_t round)
{
    for (int i = 0; i < STAMP; i++) {
        buf[i] = (unsigned char) (round >> (i % 4 * 8)) ^ (unsigned char) i;
        buf[MSG_BYTES - STAMP + i] = buf[i] ^ 0x5a;
    }
}

static void sender(int n, unsigned char *buf)
{
    t_fill(buf, MSG_BYTES, 1234);
    for (int r = 0; r < n; r++) {
        stamp(buf, (uint32_t) r);
        T_MPI(MPI_Send(buf, MSG_BYTES, MPI_BYTE, 1, 7, MPI_COMM_WORLD));
    }
}

static void receiver(int n, unsigned char *buf)
{
    unsigned char *ref = t_malloc(MSG_BYTES);
    MPI_Status st;

    t_fill(ref, MSG_BYTES, 1234);
    for (int r = 0; r < n; r++) {
        memset(buf, 0xee, MSG_BYTES);
        T_MPI(MPI_Recv(buf, MSG_BYTES, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &st));
        t_check_status(&st, 0, 7, MSG_BYTES, "receive");
        stamp(ref, (uint32_t) r);
        if (0 != memcmp(buf, ref, MSG_BYTES)) {
            size_t i = 0;

            while (buf[i] == ref[i]) {
                i++;
            }
            T_FAIL("round %d: byte %zu is 0x%02x, expected 0x%02x", r, i, buf[i], ref[i]);
        }
    }
    free(ref);
}

static void check(const t_reg_snap *d, int n, const char *expect, const char *proto,
                  const char *recv_regs)
{
    if (1 == t_rank && NULL != recv_regs) {
        T_CHECK(d->made == strtoull(recv_regs, NULL, 10) && 0 == d->reused,
                "receiver: %llu registrations made, %llu reused (expected %s and 0)", d->made,
                d->reused, recv_regs);
        return;
    }
    int cached = 0 == strcmp(expect, "cached");

    if (0 == t_rank) {
        T_CHECK(d->proto == (unsigned long long) n, "%llu of %d messages went by %s", d->proto, n,
                proto);
    }
    if (0 == strcmp(expect, "none")) {
        T_CHECK(0 == d->made && 0 == d->reused,
                "a BTL without registration: %llu registrations made, %llu reused", d->made,
                d->reused);
    } else if (0 == t_rank) {
        if (cached) {
            T_CHECK(1 == d->made && d->reused == (unsigned long long) n - 1,
                    "leave pinned: %llu registrations made, %llu reused (expected 1 and %d)",
                    d->made, d->reused, n - 1);
        } else {
            T_CHECK(d->made == (unsigned long long) n && 0 == d->reused,
                    "no leave pinned: %llu registrations made, %llu reused (expected %d and 0)",
                    d->made, d->reused, n);
        }
    } else if (cached) {
        T_CHECK(d->made <= 1, "receiver, leave pinned: %llu registrations made", d->made);
    } else {
        T_CHECK(0 == d->reused, "receiver, no leave pinned: %llu registrations reused", d->reused);
    }
}

int main(int argc, char **argv)
{
    const char *expect = t_arg_value(argc, argv, "--expect");
    const char *proto = t_arg_value(argc, argv, "--proto");
    const char *nval = t_arg_value(argc, argv, "--n");
    const char *recv_regs = t_arg_value(argc, argv, "--recv-regs");
    int n = nval ? atoi(nval) : 1000;
    t_reg_counters c;
    t_reg_snap a, b, d;
    unsigned char *buf;

    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    T_CHECK(2 == t_size, "needs 2 processes");
    T_CHECK(NULL != expect && (0 == strcmp(expect, "cached") || 0 == strcmp(expect, "uncached") ||
                               0 == strcmp(expect, "none")),
            "needs --expect=cached, uncached or none");
    proto = proto ? proto : "rget";
    t_reg_open(&c, proto);
    buf = t_malloc(MSG_BYTES);
    t_reg_read(&c, &a);
    if (0 == t_rank) {
        sender(n, buf);
    } else {
        receiver(n, buf);
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    t_reg_read(&c, &b);
    d.made = b.made - a.made;
    d.reused = b.reused - a.reused;
    d.proto = b.proto - a.proto;
    t_log("rank %d: %llu %s messages, %llu registrations made, %llu reused", t_rank, d.proto, proto,
          d.made, d.reused);
    check(&d, n, expect, proto, recv_regs);
    free(buf);
    t_reg_close(&c);
    return t_finalize();
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * whereami.c - where each rank runs: its host name, its network namespace
 * (inode of /proc/self/ns/net) and its IPv4 addresses other than loopback,
 * printed by rank 0 one line per rank:
 *     whereami: rank R host H netns I addr A [A...]
 * Then every rank sends 1 MiB to the next one in a ring and checks what it
 * receives from the previous one (the hosts really talk to each other).
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LINE 256
#define RING_BYTES (1 << 20)

static void describe(int rank, char *line)
{
    char host[64] = "?", addrs[160] = "";
    struct ifaddrs *all = NULL, *a;
    struct stat st;
    unsigned long long ino = 0;

    gethostname(host, sizeof(host) - 1);
    if (0 == stat("/proc/self/ns/net", &st)) {
        ino = (unsigned long long) st.st_ino;
    }
    if (0 == getifaddrs(&all)) {
        for (a = all; a; a = a->ifa_next) {
            char ip[INET_ADDRSTRLEN];
            if (NULL == a->ifa_addr || AF_INET != a->ifa_addr->sa_family ||
                0 == strcmp(a->ifa_name, "lo")) {
                continue;
            }
            inet_ntop(AF_INET, &((struct sockaddr_in *) a->ifa_addr)->sin_addr, ip, sizeof(ip));
            if (strlen(addrs) + strlen(ip) + 2 < sizeof(addrs)) {
                strcat(addrs, " ");
                strcat(addrs, ip);
            }
        }
        freeifaddrs(all);
    }
    snprintf(line, LINE, "whereami: rank %d host %s netns %llu addr%s", rank, host, ino,
             addrs[0] ? addrs : " none");
}

static int ring(int rank, int size)
{
    unsigned char *out = malloc(RING_BYTES), *in = malloc(RING_BYTES);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, bad = 0;

    for (int i = 0; i < RING_BYTES; ++i) {
        out[i] = (unsigned char) (i * 7 + rank);
    }
    MPI_Sendrecv(out, RING_BYTES, MPI_BYTE, next, 1, in, RING_BYTES, MPI_BYTE, prev, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < RING_BYTES && !bad; ++i) {
        bad = in[i] != (unsigned char) (i * 7 + prev);
    }
    free(out);
    free(in);
    return bad;
}

int main(int argc, char **argv)
{
    int rank, size, bad, anybad;
    char line[LINE], *all = NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    describe(rank, line);
    if (0 == rank) {
        all = malloc((size_t) size * LINE);
    }
    MPI_Gather(line, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
    bad = ring(rank, size);
    MPI_Reduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        for (int r = 0; r < size; ++r) {
            printf("%s\n", all + (size_t) r * LINE);
        }
        printf(anybad ? "FAIL: ring data wrong\n" : "whereami: ring ok\n");
        free(all);
    }
    MPI_Finalize();
    return 0 == rank && anybad ? 1 : 0;
}

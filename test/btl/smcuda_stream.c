/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_stream.c - a one-way stream of large messages (windows of
 * MPI_Isend answered by one zero-byte reply), long enough for smcuda to
 * re-measure its two paths (btl_smcuda_single_copy_adapt), every message
 * verified. Afterwards the sender's counters of stream messages by path:
 *
 *   expect=adapt   (default) the stream was decided message by message and
 *                  the copy path measured (it is the way taken at start)
 *   expect=fixed   single_copy_adapt false: every stream message took the
 *                  copy path
 *   expect=pull    (an upper layer that sends large messages through
 *                  pipeline fragments, with btl_smcuda_pull_fragments 2)
 *                  the receiver read every fragment's data from the
 *                  sender's buffer: pulled bytes cover the stream
 *   expect=nopull  messages below cma_min_size to a receiver that is not
 *                  far: no fragment was pulled, whatever the receiver
 *                  measured of the stream
 *
 * Arguments: size=BYTES (default 131072), windows=N (default 300)
 */
#include "btl_util.h"

#define PROG "btl/smcuda_stream"
#define WINDOW 32

static MPI_T_pvar_session session;

/* A handle on a counter: reads give what was counted since it was opened. */
static MPI_T_pvar_handle open_counter(const char *name)
{
    MPI_T_pvar_handle handle;
    int idx, count;

    BU_CHECK(MPI_SUCCESS == MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx),
             "counter %s not found", name);
    BU_CHECK(MPI_SUCCESS == MPI_T_pvar_handle_alloc(session, idx, NULL, &handle, &count),
             "counter %s: no handle", name);
    return handle;
}

static unsigned long long read_counter(MPI_T_pvar_handle handle)
{
    unsigned long long value = 0;
    MPI_T_pvar_read(session, handle, &value);
    return value;
}

int main(int argc, char **argv)
{
    const char *a;
    const char *expect = "adapt";
    size_t size = 131072;
    int windows = 300, peer;
    unsigned char *buf;
    MPI_Request req[WINDOW];
    unsigned long long single, copy, sent;
    MPI_T_pvar_handle h_single, h_copy, h_pulled;
    unsigned long long pulled;

    bu_init(&argc, &argv);
    BU_CHECK(2 == bu_size, "needs 2 ranks");
    if ((a = bu_arg(argc, argv, "size")))
        size = (size_t) atol(a);
    if ((a = bu_arg(argc, argv, "windows")))
        windows = atoi(a);
    if ((a = bu_arg(argc, argv, "expect")))
        expect = a;
    peer = 1 - bu_rank;
    BU_CHECK(MPI_SUCCESS == MPI_T_pvar_session_create(&session), "no MPI_T session");
    h_single = open_counter("btl_smcuda_stream_single_messages");
    h_copy = open_counter("btl_smcuda_stream_copy_messages");
    h_pulled = open_counter("btl_smcuda_pull_bytes");
    buf = malloc(size * WINDOW);
    BU_CHECK(NULL != buf, "out of memory");

    for (int w = 0; w < windows; ++w) {
        for (int i = 0; i < WINDOW; ++i) {
            unsigned char *b = buf + size * (size_t) i;
            if (0 == bu_rank) {
                bu_fill(b, size, w * WINDOW + i);
                MPI_Isend(b, (int) size, MPI_BYTE, peer, i, MPI_COMM_WORLD, &req[i]);
            } else {
                MPI_Irecv(b, (int) size, MPI_BYTE, peer, i, MPI_COMM_WORLD, &req[i]);
            }
        }
        BU_CHECK(MPI_SUCCESS == MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE), "waitall failed");
        if (0 == bu_rank) {
            MPI_Recv(NULL, 0, MPI_BYTE, peer, WINDOW, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int i = 0; i < WINDOW; ++i) {
                long bad = bu_verify(buf + size * (size_t) i, size, w * WINDOW + i);
                BU_CHECK(bad < 0, "window %d message %d (%zu bytes): wrong byte at %ld", w, i, size,
                         bad);
            }
            MPI_Send(NULL, 0, MPI_BYTE, peer, WINDOW, MPI_COMM_WORLD);
        }
    }

    single = read_counter(h_single);
    copy = read_counter(h_copy);
    pulled = read_counter(h_pulled);
    MPI_T_pvar_handle_free(session, &h_single);
    MPI_T_pvar_handle_free(session, &h_copy);
    MPI_T_pvar_handle_free(session, &h_pulled);
    MPI_T_pvar_session_free(&session);
    sent = (unsigned long long) windows * WINDOW;
    if (0 == strcmp(expect, "nopull")) {
        if (1 == bu_rank) {
            printf("%s: %llu bytes pulled of %llu sent\n", PROG, pulled,
                   sent * (unsigned long long) size);
        }
        BU_CHECK(0 == pulled, "%llu bytes pulled below cma_min_size", pulled);
        free(buf);
        return bu_finalize(PROG);
    }
    if (0 == strcmp(expect, "pull")) {
        /* the first bytes of each message travel with the rendezvous */
        if (1 == bu_rank) {
            printf("%s: %llu bytes pulled of %llu sent\n", PROG, pulled,
                   sent * (unsigned long long) size);
            BU_CHECK(pulled >= sent * (unsigned long long) (size - 8192), "only %llu bytes pulled",
                     pulled);
        } else {
            BU_CHECK(0 == pulled, "the sending side pulled");
        }
        free(buf);
        return bu_finalize(PROG);
    }
    if (0 == bu_rank) {
        printf("%s: %llu messages, one-way stream decisions: single copy %llu, copy path %llu\n",
               PROG, sent, single, copy);
        BU_CHECK(single + copy <= sent, "more stream decisions than messages");
        BU_CHECK(single + copy >= sent / 2, "the stream was not recognised as one (%llu of %llu)",
                 single + copy, sent);
        BU_CHECK(copy > 0, "the copy path was never taken, so never measured");
        if (0 == strcmp(expect, "fixed")) {
            BU_CHECK(0 == single, "%llu stream messages by single copy with adapt off", single);
        }
    } else {
        BU_CHECK(0 == single + copy, "the receiving side decided stream paths");
    }
    free(buf);
    return bu_finalize(PROG);
}

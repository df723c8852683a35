/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * ipc.c - CUDA IPC between two processes through libmca_common_ob1x_cuda
 * and the driver emulation: rank 0 exports a device buffer, rank 1 maps
 * it, reads it and writes into it with asynchronous copies, rank 0 sees
 * the write. Arguments:
 *   same-device / other-device   what the two ranks' device UUIDs must be
 *   refused                      rank 1's open must fail (no peer access)
 * Run by ipc_run.sh.
 */
#include <string.h>

#include "common_ob1x_cuda.h"
#include "cuemu.h"
#include "tpml.h"

#define LEN (256 * 1024)
#define OFFSET 8192

typedef struct {
    ob1x_cuda_ipc_handle_t handle;
    uint64_t offset, size;
    unsigned char uuid[16];
} export_msg_t;

static void fill(char *buf, size_t len, int seed)
{
    for (size_t i = 0; i < len; i++) {
        buf[i] = (char) (i * 13 + (size_t) seed);
    }
}

static void copy_wait(void *dst, const void *src, size_t len)
{
    int ticket, rc;

    T_CHECK(0 == ob1x_cuda_copy_start(dst, src, len, &ticket), "copy_start");
    while (0 != (rc = ob1x_cuda_copy_test(ticket)) && -1 != rc) {
    }
    T_CHECK(0 == rc, "copy failed: %d", rc);
}

static void exporter(int argc, char **argv)
{
    static char host[LEN], back[LEN];
    char *dev = cuemu_malloc(OFFSET + LEN, 0);
    export_msg_t msg;
    uintptr_t base;
    size_t size;

    T_CHECK(NULL != dev, "cuemu_malloc");
    fill(host, LEN, 1);
    cuemu_memcpy(dev + OFFSET, host, LEN);
    T_CHECK(0 == ob1x_cuda_ipc_get(dev + OFFSET, &msg.handle, &base, &size), "ipc_get");
    T_CHECK((uintptr_t) dev == base && size >= OFFSET + LEN, "ipc_get: range %#lx+%zu",
            (unsigned long) base, size);
    msg.offset = (uintptr_t) dev + OFFSET - base;
    msg.size = size;
    T_CHECK(0 == ob1x_cuda_device_uuid(0, msg.uuid), "uuid");
    T_MPI(MPI_Send(&msg, sizeof(msg), MPI_BYTE, 1, 0, MPI_COMM_WORLD));
    /* rank 1 wrote pattern 2 into the buffer (unless refused) */
    T_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (!t_has_arg(argc, argv, "refused")) {
        fill(host, LEN, 2);
        cuemu_memcpy(back, dev + OFFSET, LEN);
        T_CHECK(0 == memcmp(back, host, LEN), "rank 1's write is not in the device buffer");
    }
    cuemu_free(dev);
}

/* Maps, reads, writes, unmaps. */
static void use_mapping(const export_msg_t *msg, void *mapped)
{
    static char host[LEN], want[LEN];
    ob1x_cuda_ptr_info_t info;
    char *p = (char *) mapped + msg->offset;

    T_CHECK(0 == ob1x_cuda_classify(p, LEN, &info) && OB1X_CUDA_MEM_DEVICE == info.type,
            "the mapping is not device memory (%d)", (int) info.type);
    copy_wait(host, p, LEN);
    fill(want, LEN, 1);
    T_CHECK(0 == memcmp(host, want, LEN), "rank 0's data is not visible through the mapping");
    fill(host, LEN, 2);
    copy_wait(p, host, LEN);
    T_CHECK(0 == ob1x_cuda_ipc_close(mapped), "ipc_close");
    T_CHECK(1 == cuemu_count("cuIpcOpenMemHandle"), "%lu cuIpcOpenMemHandle calls",
            cuemu_count("cuIpcOpenMemHandle"));
}

static void importer(int argc, char **argv)
{
    export_msg_t msg;
    unsigned char uuid[16];
    void *mapped = NULL;
    int rc;

    T_MPI(MPI_Recv(&msg, sizeof(msg), MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    T_CHECK(0 == ob1x_cuda_device_uuid(0, uuid), "uuid");
    if (t_has_arg(argc, argv, "same-device")) {
        T_CHECK(0 == memcmp(uuid, msg.uuid, 16), "ranks on one device see two UUIDs");
    } else {
        T_CHECK(0 != memcmp(uuid, msg.uuid, 16), "ranks on two devices see one UUID");
    }
    rc = ob1x_cuda_ipc_open(&msg.handle, &mapped);
    if (t_has_arg(argc, argv, "refused")) {
        T_CHECK(0 != rc, "the open of another device's memory without peer access worked");
    } else {
        T_CHECK(0 == rc && NULL != mapped, "ipc_open: %d", rc);
        use_mapping(&msg, mapped);
    }
    T_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    T_CHECK(2 == t_size, "needs 2 processes");
    if (0 == t_rank) {
        exporter(argc, argv);
    } else {
        importer(argc, argv);
    }
    T_MPI(MPI_Barrier(MPI_COMM_WORLD));
    ob1x_cuda_finalize();
    return t_finalize();
}

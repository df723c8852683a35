/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * classify.c - ob1x_cuda_classify against the driver emulation (2
 * devices): host memory of every kind, device memory, the buffer id of a
 * reallocation at the same address, the driver calls each costs (the
 * emulation counts them), and an asynchronous copy polled to completion.
 * Run by classify.sh.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common_ob1x_cuda.h"
#include "cuemu.h"
#include "tpml.h"

#define MiB (1024 * 1024)
#define REPEAT 1000

static unsigned long attr_calls(void)
{
    return cuemu_count("cuPointerGetAttributes");
}

static void expect_type(const void *p, size_t len, ob1x_cuda_mem_t type, const char *what)
{
    ob1x_cuda_ptr_info_t info;

    T_CHECK(0 == ob1x_cuda_classify(p, len, &info), "classify %s failed", what);
    T_CHECK(type == info.type, "%s classified %d, expected %d", what, (int) info.type, (int) type);
}

/* Heap and stack: host, with no driver call and without loading it. */
static void host_fast(void)
{
    char stack_buf[256];
    char *heap = malloc(4096);

    T_CHECK(NULL != heap, "malloc");
    for (int i = 0; i < REPEAT; i++) {
        expect_type(heap, 4096, OB1X_CUDA_MEM_HOST, "malloc(4096)");
        expect_type(stack_buf, sizeof(stack_buf), OB1X_CUDA_MEM_HOST, "stack buffer");
    }
    T_CHECK(0 == attr_calls(), "%lu cuPointerGetAttributes calls for heap/stack", attr_calls());
    T_CHECK(!ob1x_cuda_loaded(), "heap and stack buffers loaded the driver");
    free(heap);
}

static void device_buffers(void)
{
    ob1x_cuda_ptr_info_t a, b, c;
    char *d0 = cuemu_malloc(MiB, 0), *d1 = cuemu_malloc(MiB, 1), *again;

    T_CHECK(NULL != d0 && NULL != d1, "cuemu_malloc");
    T_CHECK(0 == ob1x_cuda_classify(d0 + 100, 1000, &a), "classify d0");
    T_CHECK(ob1x_cuda_loaded(), "a device buffer did not load the driver");
    T_CHECK(OB1X_CUDA_MEM_DEVICE == a.type && 0 == a.device && 0 != a.buffer_id &&
                (uintptr_t) d0 == a.base && MiB == a.size && NULL != a.context,
            "d0: type %d device %d id %llu base %#lx size %zu", (int) a.type, a.device,
            (unsigned long long) a.buffer_id, (unsigned long) a.base, a.size);
    T_CHECK(0 == ob1x_cuda_classify(d1, 1, &b), "classify d1");
    T_CHECK(OB1X_CUDA_MEM_DEVICE == b.type && 1 == b.device && b.buffer_id != a.buffer_id &&
                b.context != a.context,
            "d1: type %d device %d", (int) b.type, b.device);
    /* freed and reallocated at the same address: a new buffer id */
    cuemu_free(d0);
    again = cuemu_malloc(MiB, 0);
    T_CHECK(again == d0, "the emulation did not reuse the address (%p, %p)", again, d0);
    T_CHECK(0 == ob1x_cuda_classify(again, MiB, &c), "classify again");
    T_CHECK(OB1X_CUDA_MEM_DEVICE == c.type && c.buffer_id != a.buffer_id,
            "reallocation kept buffer id %llu", (unsigned long long) c.buffer_id);
    cuemu_free(again);
    cuemu_free(d1);
}

/* ob1x_cuda_classify_again: the last device answer of this thread, once,
 * for a range inside its allocation; a driver call otherwise. */
static void classify_again(void)
{
    ob1x_cuda_ptr_info_t a, b;
    char *d = cuemu_malloc(MiB, 0), *e = cuemu_malloc(MiB, 0), host[64];
    unsigned long n;

    T_CHECK(NULL != d && NULL != e, "cuemu_malloc");
    T_CHECK(0 == ob1x_cuda_classify(d + 64, 4096, &a), "classify d");
    n = attr_calls();
    T_CHECK(0 == ob1x_cuda_classify_again(d + 4096, 8192, &b) && n == attr_calls() &&
                b.buffer_id == a.buffer_id && OB1X_CUDA_MEM_DEVICE == b.type,
            "classify_again of a range in the allocation just classified asked the driver "
            "(%lu calls) or answered differently",
            attr_calls() - n);
    T_CHECK(0 == ob1x_cuda_classify_again(d + 64, 4096, &b) && n + 1 == attr_calls(),
            "a second classify_again was not asked to the driver");
    T_CHECK(0 == ob1x_cuda_classify(d, 1, &a) && 0 == ob1x_cuda_classify_again(e, 1, &b) &&
                n + 3 == attr_calls() && b.buffer_id != a.buffer_id,
            "classify_again of another allocation was served the last answer");
    T_CHECK(0 == ob1x_cuda_classify(d, 1, &a) && 0 == ob1x_cuda_classify(host, 1, &b) &&
                0 == ob1x_cuda_classify_again(d, 1, &b) && n + 5 == attr_calls(),
            "classify_again after a host classification was not asked to the driver");
    /* freed and reallocated at the same address between the two: only
     * within one MPI call is the answer kept, and a classification came
     * in between here */
    T_CHECK(0 == ob1x_cuda_classify(d, 1, &a), "classify d");
    cuemu_free(d);
    T_CHECK(d == cuemu_malloc(MiB, 0), "the emulation did not reuse the address");
    T_CHECK(0 == ob1x_cuda_classify(d, 1, &b) && 0 == ob1x_cuda_classify_again(d, 1, &b) &&
                b.buffer_id != a.buffer_id,
            "classify_again served the freed allocation's buffer id");
    cuemu_free(d);
    cuemu_free(e);
}

/* mmap'ed host memory is asked to the driver every time (no release
 * hooks to invalidate a cached answer, see common_ob1x_cuda.h). */
static void host_mapped(void)
{
    char *m = mmap(NULL, MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned long before = attr_calls();

    T_CHECK(MAP_FAILED != m, "mmap");
    expect_type(m, MiB, OB1X_CUDA_MEM_HOST, "mmap'ed buffer");
    expect_type(m, MiB, OB1X_CUDA_MEM_HOST, "mmap'ed buffer");
    T_CHECK(before + 2 == attr_calls(), "mmap'ed buffer: %lu driver calls, expected 2",
            attr_calls() - before);
    munmap(m, MiB);
}

static void copy_polled(void)
{
    char *dev = cuemu_malloc(4096, 0), host[4096], back[4096];
    int ticket, rc, busy = 0;

    for (int i = 0; i < 4096; i++) {
        host[i] = (char) (i * 7 + 1);
    }
    T_CHECK(0 == ob1x_cuda_copy_start(dev, host, sizeof(host), &ticket), "copy_start h2d");
    while (-1 != (rc = ob1x_cuda_copy_test(ticket)) && 0 != rc) {
        busy++; /* OPAL_ERR_RESOURCE_BUSY */
    }
    T_CHECK(0 == rc && busy > 0, "h2d copy: rc %d after %d busy polls", rc, busy);
    cuemu_memcpy(back, dev, sizeof(back));
    T_CHECK(0 == memcmp(back, host, sizeof(host)), "h2d copy: wrong data");
    cuemu_free(dev);
}

static void devices(void)
{
    unsigned char u0[16], u1[16];
    bool can;
    int n;

    T_CHECK(0 == ob1x_cuda_device_count(&n) && 2 == n, "device count");
    T_CHECK(0 == ob1x_cuda_device_uuid(0, u0) && 0 == ob1x_cuda_device_uuid(1, u1), "uuid");
    T_CHECK(0 != memcmp(u0, u1, 16), "devices 0 and 1 have one UUID");
    T_CHECK(0 == ob1x_cuda_can_access_peer(0, 1, &can) && can, "no peer access 0->1");
    T_CHECK(0 == ob1x_cuda_can_access_peer(0, 0, &can) && !can, "peer access 0->0");
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    host_fast();
    device_buffers();
    classify_again();
    host_mapped();
    copy_polled();
    devices();
    ob1x_cuda_finalize();
    return t_finalize();
}

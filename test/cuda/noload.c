/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * noload.c - a process that does not use CUDA never loads the driver, and
 * one that loads it after MPI_Init is seen. Not linked with the driver
 * emulation; it is first in LD_LIBRARY_PATH (found if looked for).
 * Arguments:
 *   quiet     host buffers of every kind: no driver in /proc/self/maps;
 *             then the program loads libcuda.so.1 itself, allocates device
 *             memory through it, and that buffer is classified as device
 *   required  ob1x_cuda_init(true) loads it (the maps check sees a load)
 *   missing   ob1x_cuda_init(true) with no driver anywhere fails (the
 *             help message is checked by noload_run.sh)
 * Run by noload_run.sh.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common_ob1x_cuda.h"
#include "tpml.h"

static char static_buf[4096];

static bool driver_mapped(void)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[1024];
    bool found = false;

    T_CHECK(NULL != maps, "/proc/self/maps");
    while (NULL != fgets(line, sizeof(line), maps)) {
        found = found || NULL != strstr(line, "libcuda");
    }
    fclose(maps);
    return found;
}

static void expect_host(const void *p, size_t len, const char *what)
{
    ob1x_cuda_ptr_info_t info;

    T_CHECK(0 == ob1x_cuda_classify(p, len, &info) && OB1X_CUDA_MEM_HOST == info.type,
            "%s not classified host", what);
}

/* The application starts using CUDA after MPI_Init. */
static void late_cuda(void)
{
    void *(*dev_malloc)(size_t, int);
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    ob1x_cuda_ptr_info_t info;
    void *d;

    T_CHECK(NULL != lib, "the test cannot load the emulation: %s", dlerror());
    dev_malloc = (void *(*) (size_t, int) ) dlsym(lib, "cuemu_malloc");
    T_CHECK(NULL != dev_malloc && NULL != (d = dev_malloc(4096, 0)), "cuemu_malloc");
    T_CHECK(0 == ob1x_cuda_classify(d, 4096, &info), "classify");
    T_CHECK(OB1X_CUDA_MEM_DEVICE == info.type,
            "a device buffer of a driver loaded after "
            "MPI_Init was classified %d",
            (int) info.type);
    T_CHECK(ob1x_cuda_loaded(), "not loaded");
}

static void quiet(void)
{
    char stack_buf[512];
    char *heap = malloc(1000), *big = malloc(64 << 20);
    char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    T_CHECK(NULL != heap && NULL != big && MAP_FAILED != m, "allocations");
    for (int i = 0; i < 100; i++) {
        expect_host(heap, 1000, "heap");
        expect_host(big, 64 << 20, "malloc(64 MiB)");
        expect_host(stack_buf, sizeof(stack_buf), "stack");
        expect_host(static_buf, sizeof(static_buf), "static");
        expect_host(m, 1 << 20, "mmap");
    }
    T_CHECK(!ob1x_cuda_loaded(), "host buffers loaded the driver");
    T_CHECK(!driver_mapped(), "libcuda is in /proc/self/maps");
    late_cuda();
    free(heap);
    free(big);
    munmap(m, 1 << 20);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, MPI_THREAD_SINGLE);
    if (t_has_arg(argc, argv, "quiet")) {
        quiet();
    } else if (t_has_arg(argc, argv, "required")) {
        T_CHECK(0 == ob1x_cuda_init(true), "init(required) failed");
        T_CHECK(driver_mapped(), "loaded, but libcuda is not in /proc/self/maps");
    } else {
        T_CHECK(0 != ob1x_cuda_init(true), "init(required) worked without a driver");
        T_CHECK(0 != ob1x_cuda_init(true), "second init(required) worked without a driver");
        T_CHECK(!ob1x_cuda_loaded() && !driver_mapped(), "loaded without a driver");
    }
    return t_finalize();
}

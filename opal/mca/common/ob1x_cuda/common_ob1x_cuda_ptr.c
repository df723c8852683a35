/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_cuda_ptr.c - what a buffer is: host, device or managed
 * (ob1x_cuda_classify, common_ob1x_cuda.h).
 *
 * The order of the checks is the order of their cost:
 *   1. address ranges where the driver never maps device memory (the brk
 *      heap, the main thread's stack): host, no lock, no call;
 *   2. the driver is not loaded and the process has not loaded it either
 *      (no device memory can exist): host, no driver call;
 *   3. cuPointerGetAttributes.
 */
#define _GNU_SOURCE /* dl_iterate_phdr, dlinfo, RTLD_NODELETE */
#include "opal_config.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "opal/constants.h"

#include "common_ob1x_cuda_internal.h"

/* Ranges read once from /proc/self/maps. The heap's end is read at each
 * call (sbrk(0) returns glibc's cached break, no system call): it grows
 * and shrinks, and only [heap_lo, current break) is mapped as heap. */
static uintptr_t heap_lo, stack_lo, stack_hi;
static pthread_once_t ranges_once = PTHREAD_ONCE_INIT;
/* ob1x_cuda_noted_device: the ordinal of the last device buffer classified */
static int noted_device = -1;

static void read_ranges(void)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    unsigned long lo, hi;

    if (NULL == maps) {
        return; /* no fast ranges: every host buffer asks the driver */
    }
    while (NULL != fgets(line, sizeof(line), maps)) {
        if (2 != sscanf(line, "%lx-%lx", &lo, &hi)) {
            continue;
        }
        if (NULL != strstr(line, "[heap]")) {
            heap_lo = lo;
        } else if (NULL != strstr(line, "[stack]")) {
            stack_lo = lo;
            stack_hi = hi;
        }
    }
    fclose(maps);
}

/* Case 1: inside the heap or the stack as mapped when first looked at
 * (the stack grows down: deeper buffers go to the next checks). */
static bool in_host_only_range(uintptr_t lo, uintptr_t hi)
{
    uintptr_t brk_now;

    pthread_once(&ranges_once, read_ranges);
    if (0 != heap_lo && lo >= heap_lo) {
        brk_now = (uintptr_t) sbrk(0);
        if (hi <= brk_now) {
            return true;
        }
    }
    return 0 != stack_hi && lo >= stack_lo && hi <= stack_hi;
}

static int adds_callback(struct dl_phdr_info *info, size_t size, void *adds)
{
    (void) size;
    *(unsigned long long *) adds = info->dlpi_adds;
    return 1; /* the counter is the same in every entry: stop at the first */
}

/* Case 2: whether the process has the driver loaded, asked to the dynamic
 * loader only when a library was loaded since the last answer "no". */
bool ob1x_cuda_driver_present(void)
{
    static unsigned long long adds_seen = ~0ULL;
    unsigned long long adds = 0;

    if (ob1x_cuda_loaded()) {
        return true;
    }
    (void) dl_iterate_phdr(adds_callback, &adds);
    if (adds == __atomic_load_n(&adds_seen, __ATOMIC_RELAXED)) {
        return false;
    }
    if (OPAL_SUCCESS == ob1x_cuda_init(false)) {
        return true;
    }
    __atomic_store_n(&adds_seen, adds, __ATOMIC_RELAXED);
    return false;
}

/* The name of the last object of the loader's list (dl_iterate_phdr walks
 * it in load order, under the loader's lock, so the name is copied while
 * the object cannot go away). */
static int last_name_callback(struct dl_phdr_info *info, size_t size, void *name)
{
    (void) size;
    snprintf((char *) name, PATH_MAX, "%s", NULL != info->dlpi_name ? info->dlpi_name : "");
    return 0;
}

struct link_map *volatile *ob1x_cuda_load_watch(void)
{
    char name[PATH_MAX];
    struct link_map *lm = NULL;
    void *handle;

    name[0] = '\0';
    (void) dl_iterate_phdr(last_name_callback, name);
    /* The loader appends each new object after the last one. Pinned
     * (RTLD_NODELETE), the last one stays in memory, so its l_next can be
     * read without a lock for as long as the process lives; it turns
     * non-NULL when anything is loaded after it. An object loaded between
     * the walk and the pin only makes the first look fire. */
    if ('\0' == name[0]) {
        return NULL; /* the main program last: a static executable */
    }
    handle = dlopen(name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    if (NULL == handle || 0 != dlinfo(handle, RTLD_DI_LINKMAP, &lm) || NULL == lm) {
        return NULL;
    }
    return &lm->l_next;
}

static void set_host(ob1x_cuda_ptr_info_t *info)
{
    memset(info, 0, sizeof(*info));
    info->type = OB1X_CUDA_MEM_HOST;
    info->device = -1;
}

/* Case 3. Host memory is answered with every attribute left at zero
 * (cuPointerGetAttributes does not fail on a pointer it does not know). */
static int ask_driver(const void *ptr, ob1x_cuda_ptr_info_t *info)
{
    CUpointer_attribute attrs[] = {
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE,    CU_POINTER_ATTRIBUTE_IS_MANAGED,
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_BUFFER_ID,
        CU_POINTER_ATTRIBUTE_CONTEXT,        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
        CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    unsigned int mem_type = 0, managed = 0;
    int ordinal = -1;
    unsigned long long buffer_id = 0;
    CUcontext ctx = NULL;
    CUdeviceptr base = 0;
    size_t size = 0;
    void *data[] = {&mem_type, &managed, &ordinal, &buffer_id, &ctx, &base, &size};
    CUresult rc;

    rc = ob1x_cuda_drv.cuPointerGetAttributes(sizeof(attrs) / sizeof(attrs[0]), attrs, data,
                                              (CUdeviceptr) (uintptr_t) ptr);
    if (CUDA_SUCCESS != rc) {
        return ob1x_cuda_failed("cuPointerGetAttributes", rc);
    }
    set_host(info);
    if (managed) {
        info->type = OB1X_CUDA_MEM_MANAGED;
    } else if (CU_MEMORYTYPE_DEVICE == mem_type) {
        info->type = OB1X_CUDA_MEM_DEVICE;
        ob1x_cuda_note_context(ctx);
        __atomic_store_n(&noted_device, ordinal, __ATOMIC_RELAXED);
    } else {
        return OPAL_SUCCESS;
    }
    info->device = ordinal;
    info->buffer_id = buffer_id;
    info->context = ctx;
    info->base = (uintptr_t) base;
    info->size = size;
    return OPAL_SUCCESS;
}

int ob1x_cuda_noted_device(void)
{
    return __atomic_load_n(&noted_device, __ATOMIC_RELAXED);
}

/* The last device buffer this thread classified, for one
 * ob1x_cuda_classify_again of a range inside it (then forgotten). */
static __thread struct {
    bool valid;
    ob1x_cuda_ptr_info_t info;
} last_device;

int ob1x_cuda_classify(const void *ptr, size_t len, ob1x_cuda_ptr_info_t *info)
{
    uintptr_t lo = (uintptr_t) ptr;
    int rc;

    last_device.valid = false;
    if (in_host_only_range(lo, lo + (len > 0 ? len : 1)) || !ob1x_cuda_driver_present()) {
        set_host(info);
        return OPAL_SUCCESS;
    }
    rc = ask_driver(ptr, info);
    if (OPAL_SUCCESS == rc && OB1X_CUDA_MEM_DEVICE == info->type) {
        last_device.info = *info;
        last_device.valid = true;
    }
    return rc;
}

int ob1x_cuda_classify_again(const void *ptr, size_t len, ob1x_cuda_ptr_info_t *info)
{
    uintptr_t lo = (uintptr_t) ptr;

    if (last_device.valid && lo >= last_device.info.base &&
        lo + len <= last_device.info.base + last_device.info.size) {
        *info = last_device.info;
        last_device.valid = false;
        return OPAL_SUCCESS;
    }
    return ob1x_cuda_classify(ptr, len, info);
}

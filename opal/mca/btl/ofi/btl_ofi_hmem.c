/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_ofi_hmem.c - GPU memory (FI_HMEM) when CUDA is present at run time.
 *
 * Whether CUDA is present is decided once, at component init, by loading
 * the driver library (libcuda.so.1) and asking it for devices: no build
 * dependency on CUDA, and a machine without a GPU never asks libfabric for
 * FI_HMEM (libfabric 1.17 then selects no provider at all, which is why
 * stock btl/ofi finds nothing here). With devices, FI_HMEM is asked for;
 * a provider that grants it gets device buffers registered with
 * FI_HMEM_CUDA and the buffer's device ordinal.
 *
 * Untested: no machine the tests run on has a GPU (docs/ofi.md).
 */
#include "btl_ofi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "opal/util/output.h"

/* The driver API's values (cuda.h, stable since CUDA 4): not included, so
 * the build does not need CUDA. */
enum {
    OFI_CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
    OFI_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
    OFI_CU_MEMORYTYPE_DEVICE = 2,
};

typedef int (*cu_init_fn)(unsigned int);
typedef int (*cu_device_get_count_fn)(int *);
typedef int (*cu_pointer_get_attribute_fn)(void *, int, uintptr_t);

static struct {
    bool probed;
    bool present;
    void *lib;
    cu_pointer_get_attribute_fn pointer_get_attribute;
} cuda;

/* Loads libcuda and counts devices; the reason it is absent in why. */
static bool probe_cuda(char *why, size_t len)
{
    cu_init_fn init;
    cu_device_get_count_fn count_fn;
    int count = 0;

    cuda.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (NULL == cuda.lib) {
        snprintf(why, len, "libcuda.so.1 not found");
        return false;
    }
    init = (cu_init_fn) dlsym(cuda.lib, "cuInit");
    count_fn = (cu_device_get_count_fn) dlsym(cuda.lib, "cuDeviceGetCount");
    cuda.pointer_get_attribute =
        (cu_pointer_get_attribute_fn) dlsym(cuda.lib, "cuPointerGetAttribute");
    if (NULL == init || NULL == count_fn || NULL == cuda.pointer_get_attribute) {
        snprintf(why, len, "libcuda.so.1 lacks the driver API");
    } else if (0 != init(0) || 0 != count_fn(&count) || count < 1) {
        snprintf(why, len, "no CUDA device");
    } else {
        return true;
    }
    (void) dlclose(cuda.lib);
    cuda.lib = NULL;
    return false;
}

bool mca_btl_ofi_cuda_present(void)
{
    char why[64] = "";

    if (!cuda.probed) {
        cuda.probed = true;
        cuda.present = probe_cuda(why, sizeof(why));
        if (cuda.present) {
            opal_output_verbose(1, mca_btl_ofi_component.output,
                                "btl/ofi: CUDA present at run time: FI_HMEM requested");
        } else {
            opal_output_verbose(1, mca_btl_ofi_component.output,
                                "btl/ofi: FI_HMEM not requested: CUDA not present at run time (%s)",
                                why);
        }
    }
    return cuda.present;
}

/* The CUDA device ordinal of addr when it is device memory, else -1. */
int mca_btl_ofi_cuda_device_of(const void *addr)
{
    unsigned int type = 0;
    int ordinal = -1;

    if (!cuda.present ||
        0 != cuda.pointer_get_attribute(&type, OFI_CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                        (uintptr_t) addr) ||
        OFI_CU_MEMORYTYPE_DEVICE != type ||
        0 != cuda.pointer_get_attribute(&ordinal, OFI_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                        (uintptr_t) addr)) {
        return -1;
    }
    return ordinal;
}

/* Registers device memory with FI_HMEM_CUDA (the module has FI_HMEM). */
int mca_btl_ofi_hmem_reg(mca_btl_ofi_module_t *m, void *base, size_t size, uint64_t access,
                         uint64_t key, int device, struct fid_mr **mr)
{
    struct iovec iov = {.iov_base = base, .iov_len = size};
    struct fi_mr_attr attr = {
        .mr_iov = &iov,
        .iov_count = 1,
        .access = access,
        .requested_key = key,
        .iface = FI_HMEM_CUDA,
        .device.cuda = device,
    };

    return fi_mr_regattr(m->domain, &attr, 0, mr);
}

void mca_btl_ofi_hmem_fini(void)
{
    if (NULL != cuda.lib) {
        (void) dlclose(cuda.lib);
    }
    memset(&cuda, 0, sizeof(cuda));
}

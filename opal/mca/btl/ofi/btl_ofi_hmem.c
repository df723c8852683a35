/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_ofi_hmem.c - GPU memory (FI_HMEM) when CUDA is in use at run time.
 *
 * The driver belongs to libmca_common_ob1x_cuda (one driver table per
 * process, shared with pml/ob1x and btl/smcuda). Whether CUDA is in use is
 * decided once, at component init: it is when the application loaded the
 * CUDA driver before MPI_Init (a GPU program does, by choosing its device)
 * and the driver sees a device. btl/ofi never loads the driver itself, so
 * a process that does not use CUDA never initialises it, and a machine
 * without a GPU never asks libfabric for FI_HMEM (libfabric 1.17 then
 * selects no provider at all, which is why stock btl/ofi finds nothing
 * here). With CUDA in use, FI_HMEM is asked for; a provider that grants it
 * gets device buffers registered with FI_HMEM_CUDA and the buffer's
 * device ordinal. Built without the CUDA headers, FI_HMEM is never asked.
 *
 * Tested with the driver emulation of test/cuda (a provider that grants
 * FI_HMEM is not: none here does, and no machine of the tests has a GPU).
 */
#include "btl_ofi.h"

#include <stdio.h>

#include "opal/util/output.h"
#if OB1X_BTL_OFI_CUDA
#include "common_ob1x_cuda.h"
#endif

static struct {
    bool probed;
    bool present;
} cuda;

/* Whether the application uses CUDA; the reason it does not in why. */
static bool probe_cuda(char *why, size_t len)
{
#if OB1X_BTL_OFI_CUDA
    int count = 0;

    if (OPAL_SUCCESS != ob1x_cuda_init(false)) {
        snprintf(why, len, "the application has not loaded libcuda.so.1");
    } else if (OPAL_SUCCESS != ob1x_cuda_device_count(&count) || count < 1) {
        snprintf(why, len, "no CUDA device");
    } else {
        return true;
    }
#else
    snprintf(why, len, "built without the CUDA headers");
#endif
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
#if OB1X_BTL_OFI_CUDA
    ob1x_cuda_ptr_info_t info;

    if (cuda.present && OPAL_SUCCESS == ob1x_cuda_classify(addr, 1, &info) &&
        OB1X_CUDA_MEM_DEVICE == info.type) {
        return info.device;
    }
#else
    (void) addr;
#endif
    return -1;
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
    cuda.probed = cuda.present = false;
}

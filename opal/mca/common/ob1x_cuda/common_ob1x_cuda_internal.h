/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_cuda_internal.h - the driver table, shared by the files of
 * libmca_common_ob1x_cuda. Not for the components.
 */
#ifndef COMMON_OB1X_CUDA_INTERNAL_H
#define COMMON_OB1X_CUDA_INTERNAL_H

#include <cuda.h>

#include "common_ob1x_cuda.h"

#include "common_ob1x_cuda_calls.h"

typedef struct {
#define OB1X_CUDA_FIELD(f) __typeof__(&f) f;
    OB1X_CUDA_CALLS(OB1X_CUDA_FIELD)
#undef OB1X_CUDA_FIELD
} ob1x_cuda_table_t;

/* Filled once by the load, read-only afterwards. */
extern ob1x_cuda_table_t ob1x_cuda_drv;

/* Shows one help message for the first failure of each call name (the
 * next failures of the same call are only returned): OPAL_ERROR. */
int ob1x_cuda_failed(const char *call, CUresult rc);

/* Lazy load for the callers that know CUDA is in use (a device pointer
 * is in their hands): OPAL_SUCCESS or OPAL_ERR_NOT_AVAILABLE. */
static inline int ob1x_cuda_need(void)
{
    return ob1x_cuda_loaded() ? 0 : ob1x_cuda_init(true);
}

/* Remembered by the classification: the context of the last device buffer
 * seen, for the copy stream when no context is current (copy code). */
void ob1x_cuda_note_context(CUcontext ctx);

#endif /* COMMON_OB1X_CUDA_INTERNAL_H */

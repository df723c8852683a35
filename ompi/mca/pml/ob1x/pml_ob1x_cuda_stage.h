/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Host memory for the copies of device buffers that ob1x stages
 * (pml_ob1x_cuda.c): pinned blocks kept in a pool. Only built with CUDA
 * support.
 */
#ifndef PML_OB1X_CUDA_STAGE_H
#define PML_OB1X_CUDA_STAGE_H

#include "ompi_config.h"

#include <stddef.h>

/* Registers pml_ob1x_cuda_stage_cache. */
void ob1x_cuda_stage_register_params(void);
/* A block of at least span bytes; aborts the job, after telling the user,
 * when the host has no memory left. */
void *ob1x_cuda_stage_get(size_t span);
/* Back to the pool (NULL: nothing). */
void ob1x_cuda_stage_put(void *block);
/* Every idle block released (the driver is still loaded: PML close). */
void ob1x_cuda_stage_drain(void);

#endif /* PML_OB1X_CUDA_STAGE_H */

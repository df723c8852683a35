/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pml_host.c - pml.c for host buffers only, not linked with the driver
 * emulation: ob1x must never load the CUDA driver (cuda.pml_host).
 */
#define T_HOST_ONLY 1
#include "pml.c"

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_param.h - checks on MCA parameter values shared by the ob1x
 * components.
 */
#ifndef COMMON_OB1X_PARAM_H
#define COMMON_OB1X_PARAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Open MPI reads "-1" for a size_t variable as 2^64 - 1: no byte count of
 * that size is meant, so such a value was written as a negative number. */
static inline bool ob1x_param_size_negative(size_t v)
{
    return v > (SIZE_MAX >> 1);
}

#endif /* COMMON_OB1X_PARAM_H */

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * unit_check.h - failure counting for the btl/smcuda unit tests, which run
 * without MPI (header only). UNIT_CHECK prints "FAIL: ...", counts the
 * failure and then runs `leave` (return, goto, ...), so each test decides
 * how far a failed check unwinds.
 */
#ifndef OB1X_TEST_UNIT_CHECK_H
#define OB1X_TEST_UNIT_CHECK_H

#include <stdio.h>

static int failures;

#define UNIT_CHECK(cond, leave, ...)                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL: " __VA_ARGS__);                                                          \
            printf("\n");                                                                          \
            ++failures;                                                                            \
            leave;                                                                                 \
        }                                                                                          \
    } while (0)

#endif

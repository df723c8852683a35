/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_child.h - for test drivers that start their own child mpirun: an
 * environment without the outer job's variables (header only).
 */
#ifndef OB1X_TEST_BTL_CHILD_H
#define OB1X_TEST_BTL_CHILD_H

#include <stdlib.h>
#include <string.h>

extern char **environ;

/* The child mpirun must not believe it runs inside our (outer) job; keep
 * only the root permission and the component path. */
static char **btl_child_env(void)
{
    int n = 0;
    char **env;
    for (char **e = environ; *e; ++e)
        ++n;
    env = calloc((size_t) n + 1, sizeof(*env));
    n = 0;
    for (char **e = environ; *e; ++e) {
        int ours = 0 == strncmp(*e, "OMPI_", 5) || 0 == strncmp(*e, "PMIX_", 5) ||
                   0 == strncmp(*e, "ORTE_", 5) || 0 == strncmp(*e, "OPAL_", 5);
        int keep = 0 == strncmp(*e, "OMPI_ALLOW_RUN_AS_ROOT", 22) ||
                   0 == strncmp(*e, "OMPI_MCA_mca_base_component_path=", 33);
        if (!ours || keep)
            env[n++] = *e;
    }
    return env;
}

#endif

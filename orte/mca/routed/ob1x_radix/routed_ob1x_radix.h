/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * routed/ob1x_radix: the out-of-band routing tree of the daemons (ORTE),
 * a K-ary tree over the daemons' vpids whose radix K follows the number of
 * daemons when the routing plan is made (docs/launch.md):
 *
 *     parent(v) = (v - 1) / K         (v > 0; vpid 0 is mpirun)
 *     children(p) = p*K + 1 .. p*K + K
 *
 * With plm/rsh's tree spawn the same tree is the launch tree: mpirun starts
 * its K children over ssh, each of them its own K children, and so on.
 */
#ifndef ROUTED_OB1X_RADIX_H
#define ROUTED_OB1X_RADIX_H

#include "orte_config.h"

#include "orte/mca/routed/routed.h"

BEGIN_C_DECLS

typedef struct {
    orte_routed_component_t super;
    /* radix asked for by the user; 0: chosen from the number of daemons */
    int radix;
    /* below this many daemons (inclusive) the radix is 32, then 64 up to
     * large_limit, 128 beyond */
    int medium_limit;
    int large_limit;
    int priority;
} orte_routed_ob1x_radix_component_t;

ORTE_MODULE_DECLSPEC extern orte_routed_ob1x_radix_component_t mca_routed_ob1x_radix_component;

extern orte_routed_module_t orte_routed_ob1x_radix_module;

/* The radix of a tree of n daemons, as the parameters choose it. */
int routed_ob1x_radix_for(orte_vpid_t n);

END_C_DECLS

#endif

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * routed/ob1x_radix: the module. The tree is arithmetic (routed_ob1x_radix.h):
 * a daemon keeps its children as a list, for the base's xcast, and finds
 * the next hop to any daemon by walking up from it, so no per-child map of
 * descendants is kept (stock radix keeps one bitmap of all daemons per
 * child).
 */
#include "orte_config.h"
#include "orte/constants.h"

#include "opal/class/opal_bitmap.h"
#include "opal/util/output.h"
#include "orte/mca/routed/base/base.h"
#include "orte/runtime/orte_globals.h"
#include "orte/util/name_fns.h"
#include "orte/util/proc_info.h"

#include "routed_ob1x_radix.h"

static int init(void);
static int finalize(void);
static int delete_route(orte_process_name_t *proc);
static int update_route(orte_process_name_t *target, orte_process_name_t *route);
static orte_process_name_t get_route(orte_process_name_t *target);
static int route_lost(const orte_process_name_t *route);
static bool route_is_defined(const orte_process_name_t *target);
static int set_lifeline(orte_process_name_t *proc);
static void update_routing_plan(void);
static void get_routing_list(opal_list_t *coll);
static size_t num_routes(void);

orte_routed_module_t orte_routed_ob1x_radix_module = {
    .initialize = init,
    .finalize = finalize,
    .delete_route = delete_route,
    .update_route = update_route,
    .get_route = get_route,
    .route_lost = route_lost,
    .route_is_defined = route_is_defined,
    .set_lifeline = set_lifeline,
    .update_routing_plan = update_routing_plan,
    .get_routing_list = get_routing_list,
    .num_routes = num_routes,
    .ft_event = NULL,
};

static struct {
    orte_process_name_t *lifeline;
    orte_process_name_t own_lifeline; /* a copy of what set_lifeline got */
    opal_list_t children;             /* orte_routed_tree_t, live ones */
    opal_bitmap_t lost;               /* children whose route was lost */
    bool lost_init;
    uint64_t radix;
    uint64_t ndaemons;
    bool hnp_direct; /* the HNP is reached directly, not via the parent */
} tree;

/* --- the tree's arithmetic ----------------------------------------------------------- */

static uint64_t parent_of(uint64_t v)
{
    return (v - 1) / tree.radix;
}

static uint64_t first_child_of(uint64_t p)
{
    return p * tree.radix + 1;
}

/* The child of `me` whose subtree holds daemon `d`, or ORTE_VPID_INVALID
 * when `d` is not below `me`. Ancestors have smaller vpids, so the walk up
 * from d stops as soon as it passes me. */
static orte_vpid_t child_towards(orte_vpid_t me, orte_vpid_t d)
{
    uint64_t x = d, below = d;

    while (x > me) {
        below = x;
        x = parent_of(x);
    }
    return x == me && below != me ? (orte_vpid_t) below : ORTE_VPID_INVALID;
}

static bool is_lost(orte_vpid_t v)
{
    return tree.lost_init && (int) v < opal_bitmap_size(&tree.lost) &&
           opal_bitmap_is_set_bit(&tree.lost, (int) v);
}

/* --- module -------------------------------------------------------------------------- */

static int init(void)
{
    tree.lifeline = NULL;
    tree.hnp_direct = true;
    tree.radix = 1;
    tree.ndaemons = 0;
    /* made first: finalize undoes them whatever init returned */
    OBJ_CONSTRUCT(&tree.children, opal_list_t);
    OBJ_CONSTRUCT(&tree.lost, opal_bitmap_t);
    tree.lost_init = false;
    if (ORTE_PROC_IS_DAEMON) {
        /* with static ports the daemons never meet the HNP directly: the
         * parent is all they have; otherwise losing the HNP ends them */
        tree.lifeline = orte_static_ports ? ORTE_PROC_MY_PARENT : ORTE_PROC_MY_HNP;
        ORTE_PROC_MY_PARENT->jobid = ORTE_PROC_MY_NAME->jobid;
    } else if (ORTE_PROC_IS_APP) {
        if (NULL == orte_process_info.my_daemon_uri) {
            /* a singleton without a daemon: another component does that */
            return ORTE_ERR_TAKE_NEXT_OPTION;
        }
        tree.lifeline = ORTE_PROC_MY_DAEMON;
        orte_routing_is_enabled = true;
    }
    return ORTE_SUCCESS;
}

static int finalize(void)
{
    OPAL_LIST_DESTRUCT(&tree.children);
    OBJ_DESTRUCT(&tree.lost);
    tree.lost_init = false;
    tree.lifeline = NULL;
    return ORTE_SUCCESS;
}

static int delete_route(orte_process_name_t *proc)
{
    /* routes follow from the tree, nothing is stored per target */
    if (ORTE_JOBID_INVALID == proc->jobid || ORTE_VPID_INVALID == proc->vpid) {
        return ORTE_ERR_BAD_PARAM;
    }
    return ORTE_SUCCESS;
}

static int update_route(orte_process_name_t *target, orte_process_name_t *route)
{
    if (ORTE_JOBID_INVALID == target->jobid || ORTE_VPID_INVALID == target->vpid) {
        return ORTE_ERR_BAD_PARAM;
    }
    /* only one fact is worth keeping: the HNP is reached through someone */
    if (!ORTE_PROC_IS_APP &&
        OPAL_EQUAL == orte_util_compare_name_fields(ORTE_NS_CMP_ALL, ORTE_PROC_MY_HNP, target) &&
        OPAL_EQUAL != orte_util_compare_name_fields(ORTE_NS_CMP_ALL, ORTE_PROC_MY_HNP, route)) {
        tree.hnp_direct = false;
    }
    return ORTE_SUCCESS;
}

/* Next daemon on the way to daemon d, from a daemon or the HNP. */
static orte_vpid_t next_daemon(orte_vpid_t d)
{
    orte_vpid_t me = ORTE_PROC_MY_NAME->vpid, c;

    if (d == me) {
        return d;
    }
    c = child_towards(me, d);
    if (ORTE_VPID_INVALID == c) {
        /* not below me: up the tree (the HNP has no parent; go direct) */
        return 0 == me ? d : ORTE_PROC_MY_PARENT->vpid;
    }
    /* a lost child's subtree is reached directly, not through the dead */
    return is_lost(c) ? d : c;
}

static orte_process_name_t route_of_daemon_or_hnp(orte_process_name_t *target)
{
    orte_process_name_t hop = {.jobid = ORTE_PROC_MY_NAME->jobid, .vpid = ORTE_VPID_INVALID};

    if (OPAL_EQUAL == orte_util_compare_name_fields(ORTE_NS_CMP_ALL, ORTE_PROC_MY_HNP, target)) {
        return (tree.hnp_direct && !orte_static_ports) ? *ORTE_PROC_MY_HNP : *ORTE_PROC_MY_PARENT;
    }
    if (ORTE_JOB_FAMILY(target->jobid) != ORTE_JOB_FAMILY(ORTE_PROC_MY_NAME->jobid)) {
        return *target; /* a tool, or another mpirun: direct */
    }
    hop.vpid = orte_get_proc_daemon_vpid(target);
    if (ORTE_VPID_INVALID == hop.vpid) {
        return *ORTE_NAME_INVALID;
    }
    if (hop.vpid == ORTE_PROC_MY_NAME->vpid) {
        return *target; /* one of my own processes */
    }
    hop.vpid = next_daemon(hop.vpid);
    return hop;
}

static orte_process_name_t get_route(orte_process_name_t *target)
{
    orte_process_name_t hop;

    if (!orte_routing_is_enabled ||
        OPAL_EQUAL == orte_util_compare_name_fields(ORTE_NS_CMP_ALL, ORTE_PROC_MY_NAME, target)) {
        hop = *target;
    } else if (ORTE_JOBID_INVALID == target->jobid || ORTE_VPID_INVALID == target->vpid) {
        hop = *ORTE_NAME_INVALID;
    } else if (ORTE_PROC_IS_APP) {
        hop = *ORTE_PROC_MY_DAEMON;
    } else if (ORTE_PROC_IS_TOOL) {
        hop = *target;
        if (ORTE_JOB_FAMILY(target->jobid) != ORTE_JOB_FAMILY(ORTE_PROC_MY_NAME->jobid)) {
            ORTE_HNP_NAME_FROM_JOB(&hop, target->jobid);
        }
    } else {
        hop = route_of_daemon_or_hnp(target);
    }
    OPAL_OUTPUT_VERBOSE((2, orte_routed_base_framework.framework_output,
                         "%s routed:ob1x_radix: to %s via %s", ORTE_NAME_PRINT(ORTE_PROC_MY_NAME),
                         ORTE_NAME_PRINT(target), ORTE_NAME_PRINT(&hop)));
    return hop;
}

static void mark_lost(orte_vpid_t v)
{
    if (!tree.lost_init) {
        if (OPAL_SUCCESS != opal_bitmap_init(&tree.lost, (int) tree.ndaemons + 1)) {
            return;
        }
        tree.lost_init = true;
    }
    (void) opal_bitmap_set_bit(&tree.lost, (int) v);
}

static int route_lost(const orte_process_name_t *route)
{
    orte_routed_tree_t *child;

    opal_output_verbose(2, orte_routed_base_framework.framework_output,
                        "%s routed:ob1x_radix: route to %s lost",
                        ORTE_NAME_PRINT(ORTE_PROC_MY_NAME), ORTE_NAME_PRINT(route));
    /* the lifeline gone (and we are not on our way out): fatal; the OOB
     * aborts us once it has released its lock */
    if (!orte_finalizing && NULL != tree.lifeline &&
        OPAL_EQUAL == orte_util_compare_name_fields(ORTE_NS_CMP_ALL, route, tree.lifeline)) {
        return ORTE_ERR_FATAL;
    }
    if (!(ORTE_PROC_IS_DAEMON || ORTE_PROC_IS_HNP) || route->jobid != ORTE_PROC_MY_NAME->jobid) {
        return ORTE_SUCCESS;
    }
    /* a child: no longer counted among the routes (the error managers wait
     * for that count to reach 0 at the end), and its subtree is reached
     * around it */
    OPAL_LIST_FOREACH(child, &tree.children, orte_routed_tree_t)
    {
        if (child->vpid == route->vpid) {
            opal_list_remove_item(&tree.children, &child->super);
            OBJ_RELEASE(child);
            mark_lost(route->vpid);
            break;
        }
    }
    return ORTE_SUCCESS;
}

static bool route_is_defined(const orte_process_name_t *target)
{
    return ORTE_VPID_INVALID != orte_get_proc_daemon_vpid((orte_process_name_t *) target);
}

static int set_lifeline(orte_process_name_t *proc)
{
    tree.own_lifeline = *proc;
    tree.lifeline = &tree.own_lifeline;
    return ORTE_SUCCESS;
}

/* Appends the children of p (vpids below ndaemons), the lost ones too
 * unless skip_lost, to list. */
static void add_children(opal_list_t *list, uint64_t p, bool skip_lost)
{
    uint64_t c, first = first_child_of(p);
    orte_routed_tree_t *child;

    for (c = first; c < first + tree.radix && c < tree.ndaemons; c++) {
        if (skip_lost && is_lost((orte_vpid_t) c)) {
            continue;
        }
        child = OBJ_NEW(orte_routed_tree_t);
        if (NULL == child) {
            return;
        }
        child->vpid = (orte_vpid_t) c;
        opal_list_append(list, &child->super);
    }
}

static void update_routing_plan(void)
{
    orte_vpid_t me = ORTE_PROC_MY_NAME->vpid;

    if (!ORTE_PROC_IS_DAEMON && !ORTE_PROC_IS_HNP) {
        return;
    }
    /* every daemon gets the same count in the same update, so all compute
     * the same radix and tree */
    tree.ndaemons = orte_process_info.num_procs;
    tree.radix = (uint64_t) routed_ob1x_radix_for(orte_process_info.num_procs);
    OPAL_LIST_DESTRUCT(&tree.children);
    OBJ_CONSTRUCT(&tree.children, opal_list_t);
    ORTE_PROC_MY_PARENT->vpid = 0 == me ? ORTE_VPID_INVALID : (orte_vpid_t) parent_of(me);
    /* vpids are never reused: a child lost before a new plan (a job that
     * grows) stays lost */
    add_children(&tree.children, me, true);

    if (0 == me) {
        opal_output_verbose(1, orte_routed_base_framework.framework_output,
                            "%s routed:ob1x_radix: vpid 0 parent none radix %d of %d children %d",
                            ORTE_NAME_PRINT(ORTE_PROC_MY_NAME), (int) tree.radix,
                            (int) tree.ndaemons, (int) opal_list_get_size(&tree.children));
    } else {
        opal_output_verbose(1, orte_routed_base_framework.framework_output,
                            "%s routed:ob1x_radix: vpid %d parent %d radix %d of %d children %d",
                            ORTE_NAME_PRINT(ORTE_PROC_MY_NAME), (int) me,
                            (int) ORTE_PROC_MY_PARENT->vpid, (int) tree.radix, (int) tree.ndaemons,
                            (int) opal_list_get_size(&tree.children));
    }
}

static void get_routing_list(opal_list_t *coll)
{
    opal_list_t around;
    orte_routed_tree_t *child;
    size_t i;

    if (!ORTE_PROC_IS_DAEMON && !ORTE_PROC_IS_HNP) {
        return;
    }
    orte_routed_base_xcast_routing(coll, &tree.children);
    /* (an HNP that aborts the job already sends to every daemon) */
    if (!tree.lost_init ||
        (ORTE_PROC_IS_HNP && (orte_abnormal_term_ordered || !orte_routing_is_enabled))) {
        return;
    }
    /* the children of a lost child get the message from us directly */
    OBJ_CONSTRUCT(&around, opal_list_t);
    for (i = 0; i < (size_t) opal_bitmap_size(&tree.lost); i++) {
        if (opal_bitmap_is_set_bit(&tree.lost, (int) i)) {
            add_children(&around, i, true);
        }
    }
    OPAL_LIST_FOREACH(child, &around, orte_routed_tree_t)
    {
        orte_namelist_t *nm = OBJ_NEW(orte_namelist_t);
        if (NULL == nm) {
            break;
        }
        nm->name.jobid = ORTE_PROC_MY_NAME->jobid;
        nm->name.vpid = child->vpid;
        opal_list_append(coll, &nm->super);
    }
    OPAL_LIST_DESTRUCT(&around);
}

static size_t num_routes(void)
{
    return opal_list_get_size(&tree.children);
}

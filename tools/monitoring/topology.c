/* Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE. */
/*
 * The topology a placement maps onto, as a tree of arities: loaded by hwloc
 * from the live machine, an lstopo XML file or a synthetic description.
 * hwloc does all the parsing; we only turn the friendly form
 * "2 packages x 8 cores" into hwloc's "package:2 core:8" word by word.
 */
#include <ctype.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mon_tool.h"
#include "mon_place.h"

/* "2 packages x 8 cores" -> "package:2 core:8": each "N word" pair becomes
 * "word:N" (a plural 's' dropped); "x", "X", "*" and "," separate pairs. */
static void synthetic_words(const char *in, char *out, size_t len)
{
    char buf[1024], *save = NULL;
    size_t used = 0;
    snprintf(buf, sizeof(buf), "%s", in);
    out[0] = '\0';
    const char *count = NULL;
    for (char *w = strtok_r(buf, " \t,*", &save); w; w = strtok_r(NULL, " \t,*", &save)) {
        if (0 == strcmp(w, "x") || 0 == strcmp(w, "X") || 0 == strcmp(w, "\xc3\x97")) {
            continue;
        }
        if (isdigit((unsigned char) w[0])) {
            count = w;
            continue;
        }
        size_t wl = strlen(w);
        if (wl > 2 && 's' == w[wl - 1]) {
            w[--wl] = '\0';
        }
        used += snprintf(out + used, used < len ? len - used : 0, "%s%s:%s", used ? " " : "", w,
                         count ? count : "1");
        count = NULL;
    }
}

/* hwloc wants the PU level last: add one PU per leaf when it is missing. */
static int set_synthetic(hwloc_topology_t t, const char *desc)
{
    char conv[1024], withpu[1100];
    if (NULL == strchr(desc, ':')) {
        synthetic_words(desc, conv, sizeof(conv));
        desc = conv;
    }
    if (0 == hwloc_topology_set_synthetic(t, desc)) {
        return 0;
    }
    snprintf(withpu, sizeof(withpu), "%s pu:1", desc);
    if (0 == hwloc_topology_set_synthetic(t, withpu)) {
        return 0;
    }
    return mon_error("hwloc does not accept the synthetic topology \"%s\"", desc);
}

/* SPEC: "live" (or NULL), "xml:FILE", FILE.xml, "synthetic:DESC" or DESC. */
static int load(const char *spec, hwloc_topology_t *t)
{
    if (0 != hwloc_topology_init(t)) {
        return mon_error("hwloc_topology_init failed");
    }
    int rc = 0;
    size_t len = spec ? strlen(spec) : 0;
    if (NULL == spec || 0 == strcmp(spec, "live")) {
        rc = 0;
    } else if (0 == strncmp(spec, "xml:", 4)) {
        rc = hwloc_topology_set_xml(*t, spec + 4) ? mon_error("cannot read %s", spec + 4) : 0;
    } else if (len > 4 && 0 == strcmp(spec + len - 4, ".xml")) {
        rc = hwloc_topology_set_xml(*t, spec) ? mon_error("cannot read %s", spec) : 0;
    } else if (0 == strncmp(spec, "synthetic:", 10)) {
        rc = set_synthetic(*t, spec + 10);
    } else {
        rc = set_synthetic(*t, spec);
    }
    if (0 == rc && 0 != hwloc_topology_load(*t)) {
        rc = mon_error("hwloc could not load the topology %s", spec ? spec : "of this machine");
    }
    if (0 != rc) {
        hwloc_topology_destroy(*t);
    }
    return rc;
}

/* Rankfile slot of a leaf: "P:C" (package, core within it) for cores when
 * the machine has packages, else the leaf's logical index. */
static void leaf_slot(hwloc_topology_t t, hwloc_obj_t leaf, char *buf, size_t len)
{
    hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, leaf);
    if (HWLOC_OBJ_CORE == leaf->type && pkg) {
        hwloc_obj_t first =
            hwloc_get_next_obj_inside_cpuset_by_type(t, pkg->cpuset, HWLOC_OBJ_CORE, NULL);
        snprintf(buf, len, "%u:%u", pkg->logical_index,
                 leaf->logical_index - (first ? first->logical_index : 0));
    } else {
        snprintf(buf, len, "%u", leaf->logical_index);
    }
}

/* Levels where the tree branches (arity > 1), root first. */
static int levels(hwloc_topology_t t, int leaf_depth, mon_tree_t *tree)
{
    unsigned prev = 1;
    for (int d = 1; d <= leaf_depth; d++) {
        unsigned c = hwloc_get_nbobjs_by_depth(t, d);
        if (c <= prev) {
            continue;
        }
        if (0 != c % prev || tree->depth == MON_MAX_LEVELS - 2) {
            return mon_error("the topology is not symmetric (%u objects below %u at depth %d): "
                             "TreeMatch needs the same arity at every node of a level",
                             c, prev, d);
        }
        tree->arity[tree->depth++] = (int) (c / prev);
        prev = c;
    }
    tree->leaves = (int) prev;
    return 0;
}

int mon_tree_load(const char *spec, int use_pu, const char *save_xml, mon_tree_t *tree)
{
    hwloc_topology_t t;
    memset(tree, 0, sizeof(*tree));
    if (0 != load(spec, &t)) {
        return 1;
    }
    if (save_xml && 0 != hwloc_topology_export_xml(t, save_xml, 0)) {
        hwloc_topology_destroy(t);
        return mon_error("cannot write the topology to %s", save_xml);
    }
    hwloc_obj_type_t type = use_pu ? HWLOC_OBJ_PU : HWLOC_OBJ_CORE;
    int depth = hwloc_get_type_depth(t, type);
    if (depth < 0) {
        type = HWLOC_OBJ_PU;
        depth = hwloc_get_type_depth(t, type);
    }
    tree->leaf_type = hwloc_obj_type_string(type);
    int rc = levels(t, depth, tree);
    if (0 == rc) {
        tree->slot = calloc((size_t) tree->leaves, sizeof(*tree->slot));
        rc = NULL == tree->slot ? mon_error("out of memory") : 0;
    }
    for (int k = 0; 0 == rc && k < tree->leaves; k++) {
        leaf_slot(t, hwloc_get_obj_by_depth(t, depth, k), tree->slot[k].text,
                  sizeof(tree->slot[k].text));
    }
    hwloc_topology_destroy(t);
    return rc;
}

void mon_tree_free(mon_tree_t *tree)
{
    free(tree->slot);
    tree->slot = NULL;
}

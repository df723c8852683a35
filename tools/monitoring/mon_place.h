/* Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE. */
/*
 * Placement: the topology as a tree of arities and the TreeMatch-style
 * mapping of a communication matrix onto its leaves.
 */
#ifndef OB1X_MON_PLACE_H
#define OB1X_MON_PLACE_H

#define MON_MAX_LEVELS 32

typedef struct mon_slot {
    char text[32]; /* what follows "slot=" in a rankfile */
} mon_slot_t;

/* One machine's topology; levels with arity 1 (a cache per core...) are
 * dropped: they change no distance. */
typedef struct mon_tree {
    int depth;                 /* branching levels */
    int arity[MON_MAX_LEVELS]; /* children per node, root first */
    int leaves;                /* product of the arities */
    const char *leaf_type;     /* "Core" or "PU" */
    mon_slot_t *slot;          /* per leaf, logical order */
} mon_tree_t;

/* Loads SPEC (see place --help); writes it as lstopo XML to save_xml when
 * that is not NULL. */
int mon_tree_load(const char *spec, int use_pu, const char *save_xml, mon_tree_t *tree);
void mon_tree_free(mon_tree_t *tree);

#endif

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * The ordering rules of matching, as pure functions: which sequence number
 * comes first, which tag a receive accepts, and which of two posted
 * receives takes a message. The queues themselves (pml_ob1x_match.c) need
 * Open MPI's lists and locks; these rules need nothing, so
 * test/pml/match_unit.c checks them without mpirun.
 */
#ifndef PML_OB1X_ORDER_H
#define PML_OB1X_ORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "mpi.h"

/* Sequence numbers wrap at 16 bits; "ahead" means within half the space. */
static inline bool ob1x_seq_ahead(uint16_t seq, uint16_t expected)
{
    return (uint16_t) (seq - expected) < 0x8000;
}

/* MPI_ANY_TAG matches user tags only; collectives use negative tags. */
static inline bool ob1x_tag_matches(int32_t wanted, int32_t tag)
{
    return wanted == tag || (MPI_ANY_TAG == wanted && tag >= 0);
}

/*
 * A message found an MPI_ANY_SOURCE receive (wild) and one naming its
 * sender (spec) that both accept it, each the first such in its queue:
 * does the wildcard one win? The one posted first does; posting numbers
 * (post_seq) wrap at 32 bits, and fewer than 2^31 receives are ever posted
 * at once.
 */
static inline bool ob1x_wildcard_wins(bool have_wild, uint32_t wild_post, bool have_spec,
                                      uint32_t spec_post)
{
    return have_wild && (!have_spec || (int32_t) (wild_post - spec_post) < 0);
}

#endif /* PML_OB1X_ORDER_H */

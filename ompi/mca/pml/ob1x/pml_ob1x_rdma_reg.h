/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Registration of user memory with the BTLs that move it by RDMA, through
 * Open MPI's rcache framework (grdma): with mpi_leave_pinned (read at
 * every call) a registration stays cached after its message and serves
 * the next one that covers the same range; without it, it is undone when
 * released. Memory the application frees (munmap, brk shrink) is dropped
 * from the cache by rcache's memory hooks, so a buffer allocated again at
 * the same address is never served the old registration.
 *
 * A BTL without btl_register_mem needs no registration: acquire succeeds
 * with a NULL handle and costs nothing.
 */
#ifndef PML_OB1X_RDMA_REG_H
#define PML_OB1X_RDMA_REG_H

#include "ompi_config.h"

#include "opal/mca/btl/btl.h"
#include "ompi/mca/bml/bml.h"

BEGIN_C_DECLS

typedef struct ob1x_reg ob1x_reg_t;

/* Set up at add_procs (first call) / torn down at component close. */
int ob1x_reg_init(void);
void ob1x_reg_fini(void);

/*
 * Registers [base, base + size) with bml_btl's BTL for `access`
 * (MCA_BTL_REG_FLAG_LOCAL_WRITE, _REMOTE_READ, _REMOTE_WRITE). On success
 * *handle is the BTL's handle (NULL when the BTL needs none) and *reg the
 * token to give back to ob1x_reg_release (NULL when nothing to give back).
 * OMPI_ERR_OUT_OF_RESOURCE when the BTL refused (the caller falls back).
 * Counts pml_ob1x_registrations_made / _reused.
 */
int ob1x_reg_acquire(mca_bml_base_btl_t *bml_btl, void *base, size_t size, uint32_t access,
                     ob1x_reg_t **reg, mca_btl_base_registration_handle_t **handle);
void ob1x_reg_release(ob1x_reg_t *reg);

/* The same for a caller that keeps the BTL with the handle: on a BTL
 * whose registration is free (OB1X_BTL_PROP_REG_FREE) the handle is made
 * without a token (*reg NULL, *bare true), and given back with
 * ob1x_reg_release_bare; otherwise as ob1x_reg_acquire (*bare false).
 * Spares a per-message record where registering is a few stores. */
int ob1x_reg_acquire_bare(mca_bml_base_btl_t *bml_btl, void *base, size_t size, uint32_t access,
                          ob1x_reg_t **reg, mca_btl_base_registration_handle_t **handle,
                          bool *bare);
void ob1x_reg_release_bare(mca_btl_base_module_t *btl, mca_btl_base_registration_handle_t *handle);

/* How a BTL module's memory is registered, for a caller that keeps it per
 * BTL (the RDMA view of a peer) and skips the lookups of ob1x_reg_acquire:
 * 0 (through its cache: ob1x_reg_acquire), or some of */
#define OB1X_REG_KIND_NONE 1u       /* no btl_register_mem: no handle ever */
#define OB1X_REG_KIND_DIRECT 2u     /* free registration: ob1x_reg_bare per message */
#define OB1X_REG_KIND_LOCAL_FREE 4u /* the local side of a put or get needs none */
unsigned ob1x_reg_kind(mca_btl_base_module_t *btl);

/* Whether a BTL of this kind needs no registration for `access`: none at
 * all, or the local side of a put or get (no remote access asked for) on a
 * BTL that reads and writes it in place. */
static inline bool ob1x_reg_kind_needs_none(unsigned kind, uint32_t access)
{
    const uint32_t remote = MCA_BTL_REG_FLAG_REMOTE_READ | MCA_BTL_REG_FLAG_REMOTE_WRITE |
                            MCA_BTL_REG_FLAG_REMOTE_ATOMIC;

    return 0 != (kind & OB1X_REG_KIND_NONE) ||
           (0 != (kind & OB1X_REG_KIND_LOCAL_FREE) && 0 == (access & remote));
}

/* A direct registration (OB1X_REG_KIND_DIRECT), given back with
 * ob1x_reg_release_bare. */
int ob1x_reg_bare(mca_bml_base_btl_t *bml_btl, void *base, size_t size, uint32_t access,
                  mca_btl_base_registration_handle_t **handle);

/*
 * Whether registrations are kept after their message now (per call):
 * mpi_leave_pinned (or _pipeline) on and the memory hooks in place. Its
 * value "auto" (-1) reads false until the first registration cache of the
 * process resolves it (ob1x_reg_init makes the caches of the BTLs that
 * register memory).
 */
bool ob1x_reg_leave_pinned(void);

END_C_DECLS

#endif /* PML_OB1X_RDMA_REG_H */

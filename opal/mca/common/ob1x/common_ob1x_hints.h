/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_hints.h - what a BTL publishes about moving data to one
 * peer, for an upper layer that chooses between the BTL's copy path
 * (send/recv fragments) and its single copy (btl_put/btl_get).
 *
 * Mechanism in the BTL, policy above it: the BTL measures and publishes
 * figures; it never declines a registration or reshapes a fragment to
 * steer the choice. A BTL that publishes nothing gets the standard rules.
 *
 * Plain C with no Open MPI header, so that the rule that reads it can be
 * unit-tested without mpirun.
 */
#ifndef COMMON_OB1X_HINTS_H
#define COMMON_OB1X_HINTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mca_btl_base_module_t;
struct mca_btl_base_endpoint_t;

typedef struct ob1x_btl_hints {
    /* Below this size a single copy's fixed cost (a rendezvous round trip,
     * system calls) exceeds the copies it saves, unless the peer is far. */
    size_t single_min;
    /* From this size single copy always wins (both cores copying the
     * pipeline no longer beat one core's single copy). */
    size_t busy_limit;
    /* Below busy_limit, compare the measured figures (else copy path). */
    bool adapt;
    /* The peer's core shares no cache with ours (measured, fresh): every
     * line crosses twice on the copy path, so single copy wins even small. */
    bool far;
    /* This process receives a stream over this BTL too: both cores are
     * busy anyway, and single copy leaves one of them free. Set when bulk
     * data arrived since the previous read of the hints. */
    bool two_way;
    /* Bulk data arrived within the BTL's last few hundred reads of its
     * hints: also a window of sends posted before the other direction's
     * data is in, where two_way reads false between the sends. */
    bool two_way_recent;
    /* The peer's measured time per byte (picoseconds) of the copy path and
     * of single copy; a figure that is not fresh is re-measured by sending
     * that way. */
    bool copy_fresh;
    bool single_fresh;
    uint32_t copy_ps;
    uint32_t single_ps;
} ob1x_btl_hints_t;

/* Fills *out for `size` bytes to `ep`; false when the BTL has nothing to
 * say about this peer (then the standard rules apply). `stream`: other
 * single-copy sends of the caller are live on this BTL. The rule below
 * compares the measured figures only then (and only for a near peer), so
 * a BTL may leave them "not fresh" otherwise and spare the clock read they
 * take (on the way of every lone message: 64 KiB ping-pong 1% slower). */
typedef bool (*ob1x_btl_hints_fn_t)(struct mca_btl_base_module_t *btl,
                                    struct mca_btl_base_endpoint_t *ep, size_t size, bool stream,
                                    ob1x_btl_hints_t *out);

/* The registry lives in the installed common library, one copy shared by
 * every component of the process. A BTL registers its modules when it
 * creates them and deregisters them before it frees them. Registering
 * returns 0, or -1 when the (small, fixed) table is full. */
int ob1x_btl_hints_register(struct mca_btl_base_module_t *btl, ob1x_btl_hints_fn_t fn);
void ob1x_btl_hints_deregister(struct mca_btl_base_module_t *btl);
/* NULL for a BTL that publishes nothing. */
ob1x_btl_hints_fn_t ob1x_btl_hints_find(const struct mca_btl_base_module_t *btl);

/* Properties of a registered module that do not depend on the peer or the
 * size, read when an upper layer sets up its state for the module. */
/* btl_register_mem pins nothing and costs a few stores (the handle only
 * names the address range): a registration cache can only add cost, and a
 * registration can never go stale. */
#define OB1X_BTL_PROP_REG_FREE 0x1u
/* The local buffer of a btl_put / btl_get needs no registration (the BTL
 * reads or writes it in place): local_handle may be NULL. */
#define OB1X_BTL_PROP_LOCAL_FREE 0x2u
/* The module's btl_get reads a peer's device (GPU) memory that the peer
 * registered with OB1X_BTL_REG_FLAG_DEVICE, into host or device memory
 * here (local_handle NULL). Completion comes from the BTL's progress. */
#define OB1X_BTL_PROP_DEVICE_GET 0x4u
/* btl_put / btl_get of host memory need no handle on either side: the BTL
 * reaches the peer's memory by its address (remote_handle may be NULL, and
 * a handle of host memory carries nothing they read). Its registrations
 * serve device memory and atomics. */
#define OB1X_BTL_PROP_HOST_FREE 0x8u
/* btl_get understands OB1X_BTL_GET_FLAG_SOLO (a BTL that may share a get
 * with the data owner's core). */
#define OB1X_BTL_PROP_GET_SOLO 0x10u
/* btl_get flag, passed only to a BTL with OB1X_BTL_PROP_GET_SOLO: single
 * copies of ours are being read by peers now (traffic both ways), so the
 * data owner's core is likely busy with its own gets: copy alone, do not
 * ask it to help. */
#define OB1X_BTL_GET_FLAG_SOLO 0x40000000
/* btl_register_mem flag: the range is device memory of this process. The
 * BTL returns NULL when it cannot export it to that endpoint now (for
 * smcuda: CUDA IPC with that peer not set up yet, or refused; asking
 * starts the set-up), and the PML then stages the data through host
 * memory. The value is the one Open MPI's CUDA builds give
 * MCA_BTL_REG_FLAG_CUDA_GPU_MEM, which Debian's headers do not define. */
#define OB1X_BTL_REG_FLAG_DEVICE 0x00010000
/* Sets the properties of a module already registered (-1 when it is not). */
int ob1x_btl_props_set(struct mca_btl_base_module_t *btl, unsigned props);
/* 0 for a module that published nothing. */
unsigned ob1x_btl_props(const struct mca_btl_base_module_t *btl);

/* The bytes of a handle registered with OB1X_BTL_REG_FLAG_DEVICE that the
 * peer needs, where that is more than btl_registration_handle_size: a
 * module may size its handles for host memory, what every upper layer
 * ships, and publish here the larger size of its device handles, which
 * only an upper layer that registers device memory ships (-1 when the
 * module is not registered). */
int ob1x_btl_device_handle_size_set(struct mca_btl_base_module_t *btl, size_t size);
/* 0 for a module that published none (its device handles, if any, are
 * btl_registration_handle_size bytes). */
size_t ob1x_btl_device_handle_size(const struct mca_btl_base_module_t *btl);

/*
 * The rule (used by pml/ob1x's protocol selector; docs/ob1x.md): does the
 * copy path beat single copy for a message of `size` bytes, given the
 * figures and whether other single-copy sends of ours are live on this
 * BTL (`rdma_live`)?
 *   far (the cores share no cache):
 *     a one-way stream below 2 * single_min,
 *     a two-way one (recently) below
 *     single_min / 4                         -> copy
 *     anything else                          -> single copy
 *   below single_min                         -> copy
 *   from busy_limit, an isolated message
 *   (nothing else live), or a two-way stream -> single copy
 *   a one-way stream below busy_limit        -> the faster measured figure;
 *                                               a stale one is re-measured
 *                                               by taking its path
 */
static inline bool ob1x_hints_prefer_copy(const ob1x_btl_hints_t *h, size_t size, bool rdma_live)
{
    /* A far peer: every line that crosses costs a hand-off, which single
     * copy moves once and the copy path twice, so a lone message goes by
     * single copy (8 KiB ping-pong 1.4 us against 2.5). In a stream the
     * copy path keeps both cores copying and wins for small messages:
     * windows of 4-56 KiB by it 1.1-1.6 times the bandwidth of single
     * copy one way (32-56 KiB: 1.21-1.37), level from 64-80 KiB; up to
     * 1.6 times at 4-8 KiB both ways, where single copy wins from about
     * 10 KiB (Intel Xeon VM of 2026-11-27, whose cores are far;
     * single_min 32 KiB). Above, single copy: a stream's figures, taken
     * as copy-path fragments and gets alternate, did not always see it
     * (256 KiB windows 12.5 GB/s by them, 14.3 by single copy). */
    if (h->far) {
        return rdma_live && size < (h->two_way_recent ? h->single_min / 4 : 2 * h->single_min);
    }
    if (size < h->single_min) {
        return true;
    }
    if (size >= h->busy_limit || !rdma_live || h->two_way || h->two_way_recent) {
        return false;
    }
    if (!h->adapt || !h->copy_fresh) {
        return true;
    }
    if (!h->single_fresh) {
        return false;
    }
    return !(h->single_ps < h->copy_ps);
}

#endif /* COMMON_OB1X_HINTS_H */

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_hints.c - btl/smcuda publishes its figures per peer through the
 * hints registry of the shared common library (common_ob1x_hints.h), and
 * that library is loaded once per process whichever components use it.
 *
 * The test finds smcuda's module and its endpoint for the peer through the
 * BML (Open MPI internals, read-only), and the registry's lookup in the
 * common library that the components loaded. Then:
 *   - exactly one copy of libmca_common_ob1x is mapped in the process;
 *   - the published parameters (single_min, busy_limit, adapt) are the
 *     MCA parameters' values (given as arguments);
 *   - a one-way stream of messages (windows of MPI_Isend answered by one
 *     zero-byte reply, every message verified) makes the receiver measure
 *     the way the PML took, and the sender sees that figure fresh;
 *   - the sender, which receives no bulk data, never reads two_way or
 *     two_way_recent; the receiver reads two_way once after the stream (each
 *     read consumes it) and two_way_recent for SMCUDA_TWO_WAY_READS reads,
 *     then no more;
 *   - far, for a message below single_min, as far_handoff_ns makes it.
 *
 * Arguments:
 *   figure=copy|single|any  the figure the sender must see fresh at least
 *                           once (copy: the PML used pipeline fragments;
 *                           single: it used gets); any: not checked
 *   figure=none             no single copy (mechanism none): the module
 *                           publishes nothing (its function says false)
 *   far=yes|no              far, as read for a 4 KiB message
 *   gets=all                every message of the stream was moved by a
 *                           single-copy get (the receiver's get counter):
 *                           stock ob1 takes RGET above the eager limit
 *                           now that smcuda declines no registration
 *   single_min=N busy_limit=N adapt=yes|no  (defaults: 32768 2097152 yes)
 *   size=BYTES (default 131072), windows=N (default 100)
 */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include "ompi_config.h"

#include <dlfcn.h>
#include <link.h>

#include "btl_util.h"

#include "ompi/communicator/communicator.h"
#include "ompi/mca/bml/bml.h"
#include "ompi/proc/proc.h"
#include "opal/mca/btl/btl.h"

#include "../../opal/mca/btl/smcuda/btl_smcuda.h" /* SMCUDA_TWO_WAY_READS */
#include "../../opal/mca/common/ob1x/common_ob1x_hints.h"

#define PROG "btl/smcuda_hints"
#define WINDOW 16
#define COMMON_LIB "libmca_common_ob1x.so"

static int count_common(struct dl_phdr_info *info, size_t size, void *data)
{
    (void) size;
    if (NULL != info->dlpi_name && NULL != strstr(info->dlpi_name, COMMON_LIB)) {
        ++*(int *) data;
    }
    return 0;
}

/* smcuda's module and endpoint for `peer` of MPI_COMM_WORLD, from the BML. */
static void find_smcuda(int peer, mca_btl_base_module_t **btl, struct mca_btl_base_endpoint_t **ep)
{
    ompi_proc_t *proc = ompi_mpi_comm_world.comm.c_remote_group->grp_proc_pointers[peer];
    mca_bml_base_endpoint_t *bml;

    *btl = NULL;
    *ep = NULL;
    BU_CHECK(!ompi_proc_is_sentinel(proc), "the peer's proc is not set up");
    bml = (mca_bml_base_endpoint_t *) proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_BML];
    BU_CHECK(NULL != bml, "no BML endpoint for the peer");
    for (size_t i = 0; i < bml->btl_eager.arr_size; ++i) {
        mca_bml_base_btl_t *b = &bml->btl_eager.bml_btls[i];
        if (0 == strcmp(b->btl->btl_component->btl_version.mca_component_name, "smcuda")) {
            *btl = b->btl;
            *ep = b->btl_endpoint;
        }
    }
    BU_CHECK(NULL != *btl, "smcuda does not reach the peer");
}

static size_t size_arg(int argc, char **argv, const char *name, size_t def)
{
    const char *a = bu_arg(argc, argv, name);
    return NULL != a ? (size_t) strtoull(a, NULL, 10) : def;
}

static bool yes_arg(int argc, char **argv, const char *name, bool def)
{
    const char *a = bu_arg(argc, argv, name);
    return NULL != a ? 0 == strcmp(a, "yes") : def;
}

/* One window of the stream; the sender returns after the receiver's reply. */
static void window(unsigned char *buf, size_t size, int w, int peer)
{
    MPI_Request req[WINDOW];

    for (int i = 0; i < WINDOW; ++i) {
        unsigned char *b = buf + size * (size_t) i;
        if (0 == bu_rank) {
            bu_fill(b, size, w * WINDOW + i);
            MPI_Isend(b, (int) size, MPI_BYTE, peer, i, MPI_COMM_WORLD, &req[i]);
        } else {
            MPI_Irecv(b, (int) size, MPI_BYTE, peer, i, MPI_COMM_WORLD, &req[i]);
        }
    }
    BU_CHECK(MPI_SUCCESS == MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE), "waitall failed");
    if (0 == bu_rank) {
        MPI_Recv(NULL, 0, MPI_BYTE, peer, WINDOW, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return;
    }
    for (int i = 0; i < WINDOW; ++i) {
        long bad = bu_verify(buf + size * (size_t) i, size, w * WINDOW + i);
        BU_CHECK(bad < 0, "window %d message %d (%zu bytes): wrong byte at %ld", w, i, size, bad);
    }
    MPI_Send(NULL, 0, MPI_BYTE, peer, WINDOW, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    const char *figure = bu_arg(argc, argv, "figure");
    const char *far = bu_arg(argc, argv, "far");
    size_t size = size_arg(argc, argv, "size", 131072);
    int windows = (int) size_arg(argc, argv, "windows", 100), peer, copies = 0;
    bool none, copy_seen = false, single_seen = false, two_way_seen = false;
    mca_btl_base_module_t *btl;
    struct mca_btl_base_endpoint_t *ep;
    ob1x_btl_hints_fn_t (*find)(const struct mca_btl_base_module_t *);
    ob1x_btl_hints_fn_t fn;
    ob1x_btl_hints_t h;
    unsigned char *buf;
    void *lib;

    bu_init(&argc, &argv);
    BU_CHECK(2 == bu_size, "needs 2 ranks");
    (void) bu_named_counter("btl_smcuda_get_messages"); /* counts from here */
    figure = NULL != figure ? figure : "any";
    none = 0 == strcmp(figure, "none");
    peer = 1 - bu_rank;

    dl_iterate_phdr(count_common, &copies);
    BU_CHECK(1 == copies, "%d copies of %s mapped (one shared by the components expected)", copies,
             COMMON_LIB);
    lib = dlopen(COMMON_LIB ".0", RTLD_LAZY | RTLD_NOLOAD);
    BU_CHECK(NULL != lib, "%s is not loaded: %s", COMMON_LIB, dlerror());
    *(void **) &find = dlsym(lib, "ob1x_btl_hints_find");
    BU_CHECK(NULL != find, "no ob1x_btl_hints_find in %s", COMMON_LIB);

    find_smcuda(peer, &btl, &ep);
    fn = find(btl);
    BU_CHECK(NULL != fn, "btl/smcuda registered no hints function");
    if (none) {
        BU_CHECK(!fn(btl, ep, size, false, &h), "hints published without single copy");
        dlclose(lib);
        return bu_finalize(PROG);
    }
    BU_CHECK(fn(btl, ep, size, false, &h), "no hints for the peer");
    BU_CHECK(h.single_min == size_arg(argc, argv, "single_min", 32768),
             "single_min %zu is not btl_smcuda_cma_min_size", h.single_min);
    BU_CHECK(h.busy_limit == size_arg(argc, argv, "busy_limit", 2097152),
             "busy_limit %zu is not btl_smcuda_single_copy_busy_limit", h.busy_limit);
    BU_CHECK(h.adapt == yes_arg(argc, argv, "adapt", true),
             "adapt is not btl_smcuda_single_copy_adapt");
    if (NULL != far) {
        BU_CHECK(fn(btl, ep, 4096, false, &h), "no hints for a small message");
        BU_CHECK(h.far == (0 == strcmp(far, "yes")), "far is %d, expected %s", h.far, far);
    }

    buf = malloc(size * WINDOW);
    BU_CHECK(NULL != buf, "out of memory");
    for (int w = 0; w < windows; ++w) {
        window(buf, size, w, peer);
        if (0 == bu_rank) {
            /* the receiver's figures: fresh for 100 ms, so read after
             * each window; as in a stream (not: they are not read) */
            BU_CHECK(fn(btl, ep, size, false, &h), "no hints for the peer");
            BU_CHECK(!h.copy_fresh && !h.single_fresh, "figures read outside a stream");
            BU_CHECK(fn(btl, ep, size, true, &h), "no hints for the peer");
            BU_CHECK(!h.far || (!h.copy_fresh && !h.single_fresh),
                     "figures read for a far peer (its rule compares none)");
            copy_seen |= h.copy_fresh && h.copy_ps > 0;
            single_seen |= h.single_fresh && h.single_ps > 0;
            two_way_seen |= h.two_way || h.two_way_recent;
        }
    }
    free(buf);

    if (0 == bu_rank) {
        printf("%s: sender saw fresh figures: copy %s, single copy %s\n", PROG,
               copy_seen ? "yes" : "no", single_seen ? "yes" : "no");
        BU_CHECK(!two_way_seen, "the sender, which receives no bulk data, read two_way");
        if (0 == strcmp(figure, "copy")) {
            BU_CHECK(copy_seen, "the receiver's copy-path figure was never fresh");
        } else if (0 == strcmp(figure, "single")) {
            BU_CHECK(single_seen, "the receiver's single-copy figure was never fresh");
        }
    } else {
        unsigned long long gets = bu_named_counter("btl_smcuda_get_messages");
        unsigned long long sent = (unsigned long long) windows * WINDOW;

        printf("%s: %llu of %llu messages received by single-copy gets\n", PROG, gets, sent);
        if (NULL != bu_arg(argc, argv, "gets")) {
            BU_CHECK(gets >= sent, "only %llu of %llu messages moved by gets", gets, sent);
        }
        BU_CHECK(fn(btl, ep, size, false, &h) && h.two_way && h.two_way_recent,
                 "the receiver of a stream did not read two_way");
        BU_CHECK(fn(btl, ep, size, false, &h) && !h.two_way && h.two_way_recent,
                 "two_way was not consumed by its read, or two_way_recent went with it");
        for (int i = 2; i < SMCUDA_TWO_WAY_READS; ++i) {
            BU_CHECK(fn(btl, ep, size, false, &h) && !h.two_way && h.two_way_recent,
                     "two_way_recent gone at read %d", i + 1);
        }
        BU_CHECK(fn(btl, ep, size, false, &h) && !h.two_way_recent,
                 "two_way_recent outlived %d reads with nothing received", SMCUDA_TWO_WAY_READS);
    }
    dlclose(lib);
    return bu_finalize(PROG);
}

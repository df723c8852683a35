/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_ofi_endpoint.c - one endpoint object per peer and module: the
 * peer's AV address, found by process name.
 */
#include "btl_ofi.h"

#include <string.h>

#include "opal/util/output.h"

static void endpoint_construct(mca_btl_ofi_endpoint_t *ep)
{
    ep->ep_proc = NULL;
    ep->module = NULL;
    ep->peer_addr = FI_ADDR_UNSPEC;
    ep->outstanding = 0;
    ep->peer_rx_contexts = 0;
}

OBJ_CLASS_INSTANCE(mca_btl_ofi_endpoint_t, opal_list_item_t, endpoint_construct, NULL);

static uint64_t name_key(opal_process_name_t name)
{
    uint64_t key;

    _Static_assert(sizeof(name) == sizeof(key), "a process name is 64 bits");
    memcpy(&key, &name, sizeof(key));
    return key;
}

mca_btl_ofi_endpoint_t *mca_btl_ofi_endpoint_lookup(mca_btl_ofi_module_t *m,
                                                    opal_process_name_t name)
{
    void *value = NULL;

    if (OPAL_SUCCESS !=
        opal_hash_table_get_value_uint64(&m->id_to_endpoint, name_key(name), &value)) {
        return NULL;
    }
    return (mca_btl_ofi_endpoint_t *) value;
}

mca_btl_ofi_endpoint_t *mca_btl_ofi_endpoint_create(mca_btl_ofi_module_t *m,
                                                    struct opal_proc_t *proc, const void *addr,
                                                    size_t len, int rx_contexts)
{
    mca_btl_ofi_endpoint_t *ep;
    fi_addr_t fi_addr = FI_ADDR_UNSPEC;
    int rc;

    (void) len;
    rc = fi_av_insert(m->av, addr, 1, &fi_addr, 0, NULL);
    if (1 != rc) {
        opal_output_verbose(1, mca_btl_ofi_component.output,
                            "btl/ofi: %s: fi_av_insert of a peer's address failed (%d): the peer "
                            "is not reached through this NIC",
                            m->nic_name, rc);
        return NULL;
    }
    ep = OBJ_NEW(mca_btl_ofi_endpoint_t);
    if (NULL == ep) {
        (void) fi_av_remove(m->av, &fi_addr, 1, 0);
        return NULL;
    }
    ep->ep_proc = proc;
    ep->module = m;
    ep->peer_addr = fi_addr;
    ep->peer_rx_contexts = rx_contexts;
    opal_list_append(&m->endpoints, &ep->super);
    (void) opal_hash_table_set_value_uint64(&m->id_to_endpoint, name_key(proc->proc_name), ep);
    return ep;
}

/* Only once nothing is in flight towards the peer (del_procs follows the
 * upper layers' own flush; finalize flushes first). */
void mca_btl_ofi_endpoint_destroy(mca_btl_ofi_module_t *m, mca_btl_ofi_endpoint_t *ep)
{
    (void) opal_hash_table_remove_value_uint64(&m->id_to_endpoint,
                                               name_key(ep->ep_proc->proc_name));
    opal_list_remove_item(&m->endpoints, &ep->super);
    if (NULL != m->av && FI_ADDR_UNSPEC != ep->peer_addr) {
        (void) fi_av_remove(m->av, &ep->peer_addr, 1, 0);
    }
    OBJ_RELEASE(ep);
}

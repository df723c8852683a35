/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_guest.c - local peers of other jobs (MPI_Comm_spawn,
 * MPI_Comm_connect/accept, MPI_Comm_join).
 *
 * Processes of one job find each other's segments by name, and the last one
 * to attach removes the name. A process of another job comes later, when
 * the name is gone: it opens the owner's own descriptor of the segment,
 * /proc/<pid>/fd/<fd> (both numbers are in the owner's modex). The kernel
 * lets a process of the same user do that where it may read the owner's
 * /proc entries, a weaker test than single copy's.
 *
 * Local ranks are per job, so a guest has no ring in the owner's segment
 * and no local rank there: it sends through the FIFO under the id
 * n_local + k, where k is an entry of the owner's guest table naming it.
 * The process that attaches first claims both entries of the pair, its own
 * in the peer's table and the peer's in its own, before it sends anything:
 * the peer may receive (and must be able to answer an atomic operation)
 * before its own add_procs has been told of us, as the upper layer may
 * start using a new communicator before its peer has finished setting it
 * up. The peer then finds both ids by pid, job and rank. When both attach
 * at once, a direction may get two entries; either id leads to the same
 * endpoint. One endpoint serves both directions: whichever of add_procs and
 * the first fragment comes first creates it, the other finds it.
 *
 * A master that spawns workers again and again meets more guests than its
 * table holds: when a new guest comes, those whose processes have exited
 * give their entries and their segment's memory back (reclaim()).
 */
#include "btl_smcuda.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "opal/mca/pmix/pmix.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"

#include "common_ob1x_help.h"

/* Processes are told apart by pid, job and rank together: a pid alone
 * could have been reused by a process of a later job. */
static bool same_process(const smcuda_guest_t *a, const smcuda_guest_t *b)
{
    return a->pid == b->pid && a->jobid == b->jobid && a->vpid == b->vpid;
}

static smcuda_guest_t myself(const mca_btl_smcuda_module_t *m)
{
    return (smcuda_guest_t){.pid = (int32_t) getpid(),
                            .fd = m->seg_fd,
                            .jobid = (uint32_t) OPAL_PROC_MY_NAME.jobid,
                            .vpid = (uint32_t) OPAL_PROC_MY_NAME.vpid,
                            .seg_size = m->seg_size};
}

static mca_btl_base_endpoint_t *find_guest(const mca_btl_smcuda_module_t *m,
                                           const smcuda_guest_t *who)
{
    for (int i = 0; i < m->n_guest_eps; ++i) {
        if (same_process(&m->guest_eps[i]->who, who)) {
            return m->guest_eps[i];
        }
    }
    return NULL;
}

/* The id under which the owner of `seg` knows `who`, or -1. */
static int find_entry(const unsigned char *seg, const smcuda_guest_t *who)
{
    const smcuda_seg_hdr_t *hdr = (const smcuda_seg_hdr_t *) seg;
    const smcuda_guest_t *table = (const smcuda_guest_t *) (seg + hdr->guests_off);

    for (uint32_t k = 0; k < hdr->guest_count; ++k) {
        /* acquire: pairs with the claimer's release; the entry is filled in */
        if (SMCUDA_GUEST_READY == __atomic_load_n(&table[k].state, __ATOMIC_ACQUIRE) &&
            same_process(&table[k], who)) {
            return (int) (hdr->n_local + k);
        }
    }
    return -1;
}

/* Takes an entry of the guest table in `seg` for the process described by
 * `g` (state aside); returns its id there, or -1 when the table is full. */
static int claim_entry(unsigned char *seg, const smcuda_guest_t *g)
{
    const smcuda_seg_hdr_t *hdr = (const smcuda_seg_hdr_t *) seg;
    smcuda_guest_t *table = (smcuda_guest_t *) (seg + hdr->guests_off);

    for (uint32_t k = 0; k < hdr->guest_count; ++k) {
        uint32_t expect = SMCUDA_GUEST_FREE;
        if (__atomic_compare_exchange_n(&table[k].state, &expect, SMCUDA_GUEST_CLAIMED, false,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            table[k].pid = g->pid;
            table[k].fd = g->fd;
            table[k].jobid = g->jobid;
            table[k].vpid = g->vpid;
            table[k].seg_size = g->seg_size;
            /* release: the entry is filled in before anyone reads it */
            __atomic_store_n(&table[k].state, SMCUDA_GUEST_READY, __ATOMIC_RELEASE);
            return (int) (hdr->n_local + k);
        }
    }
    return -1;
}

/* A FIFO that is always full: what a departed guest's endpoint points to,
 * so that a send to it (an error of the application) waits instead of
 * writing into memory that is gone. */
static struct {
    smcuda_fifo_t fifo;
    smcuda_fifo_slot_t slot; /* fifo.slots[0] */
} full_fifo = {.fifo = {.tail = 0}, .slot = {.seq = UINT64_MAX}};

/* Unmaps a guest's segment and keeps its endpoint, inert, until finalize:
 * the upper layer, or the reaper walking guest_eps, may still hold it. */
static void retire(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep)
{
    munmap(ep->seg, ep->seg_size);
    ep->seg = NULL;
    ep->fifo = &full_fifo.fifo;
    ep->fifo_mask = 0;
    ep->copy_ok = false;
    ep->lrank = ep->ref_id = -1;
    opal_list_append(&m->departed, &ep->super);
}

/* Whether our FIFO still holds a fragment from sender `id` (one that a
 * guest pushed just before it exited). Read while the owner may be
 * consuming: a fragment it takes meanwhile only makes the answer stale in
 * the safe direction. */
static bool fifo_holds(const mca_btl_smcuda_module_t *m, int id)
{
    uint64_t tail = __atomic_load_n(&m->fifo->tail, __ATOMIC_ACQUIRE);

    for (uint64_t t = __atomic_load_n(&m->fifo_head, __ATOMIC_RELAXED); t < tail; ++t) {
        const smcuda_fifo_slot_t *slot = &m->fifo->slots[t & m->fifo_mask];
        if (__atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) == t + 1 &&
            SMCUDA_FIFO_REF_LRANK(slot->value) == id) {
            return true;
        }
    }
    return false;
}

/* A guest whose process is gone, with nothing of ours left unread by it:
 * its entries in our table are given back, its segment is unmapped (the
 * memory behind it is freed once every process that mapped it has done
 * so), and the endpoint object stays, inert, until finalize, as the upper
 * layer may still hold it. Caller holds guest_lock. */
static bool reclaim(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep)
{
    if (!opal_list_is_empty(&ep->pending) || ep->on_pending_list || 0 == ep->who.pid ||
        0 == kill(ep->who.pid, 0) || ESRCH != errno) {
        return false;
    }
    /* fragments it read before it exited, not yet completed here (we may
     * not have progressed since): complete them now; one it never read
     * keeps the endpoint */
    (void) mca_btl_smcuda_reap_peer(m, ep);
    if (!opal_list_is_empty(&ep->inflight)) {
        return false;
    }
    /* its last fragments still to be read would name an entry that a new
     * guest might have taken by then: wait for them */
    for (uint32_t k = 0; k < m->hdr->guest_count; ++k) {
        if (SMCUDA_GUEST_READY == __atomic_load_n(&m->guests[k].state, __ATOMIC_ACQUIRE) &&
            same_process(&m->guests[k], &ep->who) && fifo_holds(m, m->n_local + (int) k)) {
            return false;
        }
    }
    for (uint32_t k = 0; k < m->hdr->guest_count; ++k) {
        if (SMCUDA_GUEST_READY == __atomic_load_n(&m->guests[k].state, __ATOMIC_ACQUIRE) &&
            same_process(&m->guests[k], &ep->who)) {
            m->eps[m->n_local + (int) k] = NULL;
            /* release: the slot's old contents are dead before a new guest
             * may claim it */
            __atomic_store_n(&m->guests[k].state, SMCUDA_GUEST_FREE, __ATOMIC_RELEASE);
        }
    }
    retire(m, ep);
    return true;
}

/* Before a new guest: reclaim the departed ones. The reaper walks
 * guest_eps without the lock; an endpoint moved down while it walks is
 * seen at its next pass, and none is freed before finalize. */
static void reclaim_departed(mca_btl_smcuda_module_t *m)
{
    int kept = 0;

    for (int i = 0; i < m->n_guest_eps; ++i) {
        mca_btl_base_endpoint_t *ep = m->guest_eps[i];
        if (!reclaim(m, ep)) {
            m->guest_eps[kept++] = ep;
        }
    }
    __atomic_store_n(&m->n_guest_eps, kept, __ATOMIC_RELEASE);
}

/* A full table or endpoint array may hold a guest that is exiting right
 * now, as the next one arrives (a master spawning workers one after the
 * other): retry for a while (2 s) before giving up. Caller holds
 * guest_lock. */
#define FULL_RETRY_US 2000000
#define FULL_STEP_US 1000

static bool make_room(mca_btl_smcuda_module_t *m)
{
    for (int waited = 0;; waited += FULL_STEP_US) {
        reclaim_departed(m);
        if (m->n_guest_eps < (int) mca_btl_smcuda_component.max_guests) {
            return true;
        }
        if (waited >= FULL_RETRY_US) {
            return false;
        }
        usleep(FULL_STEP_US);
    }
}

/* Maps the guest's segment and records the endpoint with whatever ids the
 * two tables already hold for the pair. Caller holds guest_lock. */
static mca_btl_base_endpoint_t *guest_new(mca_btl_smcuda_module_t *m, const smcuda_guest_t *who)
{
    smcuda_guest_t me = myself(m);
    mca_btl_base_endpoint_t *ep;
    pid_t pid = who->pid;
    unsigned char *seg;
    char path[64];

    if (!make_room(m)) {
        opal_output_verbose(1, mca_btl_smcuda_component.output,
                            "btl/smcuda: no room for another peer of another job (pid %d): "
                            "btl_smcuda_max_guests is %u",
                            (int) pid, mca_btl_smcuda_component.max_guests);
        return NULL;
    }
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) pid, who->fd);
    if (who->fd < 0 ||
        OPAL_SUCCESS != mca_btl_smcuda_endpoint_map(path, who->seg_size, pid, &seg)) {
        return NULL;
    }
    ep = mca_btl_smcuda_endpoint_new(m, NULL, pid, seg, who->seg_size);
    if (NULL == ep) {
        munmap(seg, who->seg_size);
        return NULL;
    }
    ep->who = *who;
    ep->ref_id = find_entry(seg, &me);
    ep->lrank = find_entry(m->seg, who);
    if (ep->lrank >= 0) {
        m->eps[ep->lrank] = ep;
    }
    m->guest_eps[m->n_guest_eps] = ep;
    /* release: the progress loop (btl_smcuda_send.c reaps) reads the count
     * without the lock */
    __atomic_store_n(&m->n_guest_eps, m->n_guest_eps + 1, __ATOMIC_RELEASE);
    smcuda_pv_add(SMCUDA_PV_GUEST_PEERS, 1);
    return ep;
}

/* Claims whichever of the pair's two entries is missing. */
/* Waits (up to a second) until no entry of the table in `seg` is half
 * claimed: a claimer that was descheduled between its claim and its
 * release (oversubscribed cores) may be filling in the entry we look for. */
static void wait_settled(const unsigned char *seg)
{
    const smcuda_seg_hdr_t *hdr = (const smcuda_seg_hdr_t *) seg;
    const smcuda_guest_t *table = (const smcuda_guest_t *) (seg + hdr->guests_off);

    for (int tries = 0; tries < 10000; ++tries) {
        bool busy = false;
        for (uint32_t k = 0; k < hdr->guest_count && !busy; ++k) {
            busy = SMCUDA_GUEST_CLAIMED == __atomic_load_n(&table[k].state, __ATOMIC_ACQUIRE);
        }
        if (!busy) {
            return;
        }
        usleep(100);
    }
}

/* The entry naming `who` in the table in `seg`: found, or claimed, or (the
 * table having filled meanwhile, perhaps with the very entry, as the peer
 * attaches at the same time) found after all. A full table may be waiting
 * for its owner to give back the entries of a guest that is exiting: in
 * our own table we do that, in the peer's the peer does it as it attaches
 * us at the same time. -1: none within FULL_RETRY_US. */
static int take_entry(mca_btl_smcuda_module_t *m, unsigned char *seg, const smcuda_guest_t *who)
{
    for (int waited = 0;; waited += FULL_STEP_US) {
        int id = find_entry(seg, who);
        if (id < 0) {
            id = claim_entry(seg, who);
        }
        if (id < 0) {
            wait_settled(seg);
            id = find_entry(seg, who);
        }
        if (id >= 0 || waited >= FULL_RETRY_US) {
            return id;
        }
        usleep(FULL_STEP_US);
        if (seg == m->seg) {
            reclaim_departed(m);
        }
    }
}

static bool claim_pair(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep)
{
    if (ep->ref_id < 0) {
        smcuda_guest_t me = myself(m);
        ep->ref_id = take_entry(m, ep->seg, &me);
    }
    if (ep->lrank < 0) {
        ep->lrank = take_entry(m, m->seg, &ep->who);
        if (ep->lrank >= 0) {
            m->eps[ep->lrank] = ep;
        }
    }
    return ep->ref_id >= 0 && ep->lrank >= 0;
}

int mca_btl_smcuda_guest_attach(mca_btl_smcuda_module_t *m, struct opal_proc_t *proc,
                                mca_btl_base_endpoint_t **ep_out)
{
    smcuda_modex_t *mx = NULL;
    size_t mx_size = 0;
    mca_btl_base_endpoint_t *ep;
    smcuda_guest_t who;
    int rc;

    if (0 == mca_btl_smcuda_component.max_guests) {
        return OPAL_ERR_UNREACH;
    }
    OPAL_MODEX_RECV(rc, &mca_btl_smcuda_component.super.btl_version, &proc->proc_name,
                    (void **) &mx, &mx_size);
    if (OPAL_SUCCESS != rc || NULL == mx) {
        return OPAL_ERR_UNREACH;
    }
    if (mx_size != sizeof(*mx) || SMCUDA_SHM_VERSION != mx->version || mx->pid == getpid()) {
        free(mx);
        return OPAL_ERR_UNREACH;
    }
    who = (smcuda_guest_t){.pid = mx->pid,
                           .fd = mx->fd,
                           .jobid = (uint32_t) proc->proc_name.jobid,
                           .vpid = (uint32_t) proc->proc_name.vpid,
                           .seg_size = mx->seg_size};
    OPAL_THREAD_LOCK(&m->guest_lock);
    ep = find_guest(m, &who); /* it may have sent to us first */
    if (NULL == ep) {
        ep = guest_new(m, &who);
    }
    if (NULL != ep && !claim_pair(m, ep)) {
        /* a full table: another BTL carries our sends. With an entry of
         * ours the peer may still send to us, so the endpoint stays;
         * without one it would only hold a place in guest_eps that a guest
         * with an entry may need (it was the last one added). */
        opal_output_verbose(1, mca_btl_smcuda_component.output,
                            "btl/smcuda: no guest entry left for the pair with local peer pid "
                            "%d of another job (btl_smcuda_max_guests here or there)",
                            (int) mx->pid);
        if (ep->lrank < 0 && m->guest_eps[m->n_guest_eps - 1] == ep) {
            __atomic_store_n(&m->n_guest_eps, m->n_guest_eps - 1, __ATOMIC_RELEASE);
            retire(m, ep);
        }
        ep = NULL;
    }
    if (NULL != ep) {
        ep->proc = proc;
        opal_output_verbose(10, mca_btl_smcuda_component.output,
                            "btl/smcuda: attached local peer pid %d of another job: ids %d "
                            "there, %d here; single copy %s",
                            (int) ep->pid, ep->ref_id, ep->lrank,
                            ep->copy_ok ? m->copy->name : "no");
    }
    OPAL_THREAD_UNLOCK(&m->guest_lock);
    free(mx);
    if (NULL == ep) {
        return OPAL_ERR_UNREACH;
    }
    *ep_out = ep;
    return OPAL_SUCCESS;
}

/* The first fragment from sender `id` (n_local or more) arrived. */
mca_btl_base_endpoint_t *mca_btl_smcuda_guest_arrived(mca_btl_smcuda_module_t *m, int id)
{
    smcuda_guest_t *g = &m->guests[id - m->n_local];
    mca_btl_base_endpoint_t *ep;

    /* acquire: pairs with the claimer's release; the entry is filled in */
    if (SMCUDA_GUEST_READY != __atomic_load_n(&g->state, __ATOMIC_ACQUIRE)) {
        return NULL;
    }
    OPAL_THREAD_LOCK(&m->guest_lock);
    ep = m->eps[id];
    if (NULL == ep) {
        ep = find_guest(m, g);
        if (NULL == ep) {
            ep = guest_new(m, g);
        }
        if (NULL != ep) {
            m->eps[id] = ep; /* a second id of the pair leads here too */
        }
    }
    OPAL_THREAD_UNLOCK(&m->guest_lock);
    if (NULL == ep) {
        static bool reported = false;
        if (!reported) {
            reported = true;
            opal_show_help("help-btl-smcuda.txt", "guest-map-failed", true, ob1x_host(),
                           (int) g->pid, g->jobid, g->vpid);
        }
    }
    return ep;
}

void mca_btl_smcuda_guest_fini(mca_btl_smcuda_module_t *m)
{
    opal_list_item_t *item;

    for (int i = 0; i < m->n_guest_eps; ++i) {
        mca_btl_smcuda_endpoint_detach(m->guest_eps[i]);
    }
    while (NULL != (item = opal_list_remove_first(&m->departed))) {
        mca_btl_smcuda_endpoint_detach((mca_btl_base_endpoint_t *) item); /* seg is NULL */
    }
    m->n_guest_eps = 0;
    for (int id = m->n_local; id < m->n_eps; ++id) {
        m->eps[id] = NULL;
    }
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * btl_smcuda_endpoint.c - attaching to a local peer's segment.
 */
#include "btl_smcuda.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include "opal/mca/pmix/pmix.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"

#include "common_ob1x_help.h"

static void endpoint_construct(mca_btl_base_endpoint_t *ep)
{
    ep->proc = NULL;
    ep->lrank = -1;
    ep->ref_id = -1;
    ep->seg = NULL;
    ep->accel = NULL;
    ep->on_pending_list = false;
    ep->copy_ok = false;
    ep->split_lead = 0;
    ep->answering = false;
    ep->self = false;
    /* no ring either way until setup_rings() finds one (guests never do) */
    ep->out_ctl = ep->in_ctl = NULL;
    ep->out_ring = ep->in_ring = NULL;
    ep->out_mask = ep->in_mask = 0;
    ep->out_max = ep->out_max_near = 0;
    ep->ring_left = 1;
    ep->out_rec = 0;
    ep->out_head = ep->out_tail = ep->in_pos = 0;
    ep->send_seq = ep->recv_seq = 0;
    ep->ho_tick = 0;
    ep->far_left = 0;
    ep->far = false;
    OBJ_CONSTRUCT(&ep->inflight, opal_list_t);
    OBJ_CONSTRUCT(&ep->pending, opal_list_t);
    OBJ_CONSTRUCT(&ep->lock, opal_mutex_t);
}

static void endpoint_destruct(mca_btl_base_endpoint_t *ep)
{
    OBJ_DESTRUCT(&ep->inflight);
    OBJ_DESTRUCT(&ep->pending);
    OBJ_DESTRUCT(&ep->lock);
}

OBJ_CLASS_INSTANCE(mca_btl_base_endpoint_t, opal_list_item_t, endpoint_construct,
                   endpoint_destruct);

/* Maps a peer's segment from `path` and checks its header. */
int mca_btl_smcuda_endpoint_map(const char *path, size_t seg_size, pid_t pid,
                                unsigned char **seg_out)
{
    const smcuda_seg_hdr_t *hdr;
    unsigned char *seg;
    int fd;

    fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        opal_output_verbose(1, mca_btl_smcuda_component.output,
                            "btl/smcuda: cannot open peer segment %s: %s", path, strerror(err));
        /* refused, as opposed to gone (a peer that died) */
        return EACCES == err || EPERM == err ? OPAL_ERR_PERM : OPAL_ERR_UNREACH;
    }
    seg = mmap(NULL, seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (MAP_FAILED == seg) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    hdr = (const smcuda_seg_hdr_t *) seg;
    /* acquire: pairs with the owner's release of the magic; the layout is
     * complete */
    if (SMCUDA_SHM_MAGIC != __atomic_load_n(&hdr->magic, __ATOMIC_ACQUIRE) ||
        SMCUDA_SHM_VERSION != hdr->version || hdr->seg_size != seg_size || hdr->owner_pid != pid) {
        munmap(seg, seg_size);
        return OPAL_ERR_BAD_PARAM; /* not the segment published */
    }
    *seg_out = seg;
    return OPAL_SUCCESS;
}

/* Counts us as attached; the last process to attach removes the file's
 * name, if it has one. */
static void note_attached(smcuda_seg_hdr_t *hdr, const char *path)
{
    /* acq_rel: every earlier attacher's open() happened before the one that
     * sees the final count unlinks the name */
    uint32_t n = __atomic_add_fetch(&hdr->attached, 1, __ATOMIC_ACQ_REL);
    if (n == hdr->n_local && '\0' != path[0]) {
        (void) unlink(path);
    }
}

/* Maps the segment a peer of our job published: by its name, or, nameless,
 * through the owner's descriptor. A refused /proc open is said once, with
 * the way out (named segments). */
static int map_published(const smcuda_modex_t *mx, unsigned char **seg)
{
    static bool said = false;
    char proc_path[64];
    int rc;

    if ('\0' != mx->path[0]) {
        /* The owner names its segment at its own add_procs
         * (mca_btl_smcuda_name_segment), which may come a little after
         * ours: wait for the name while the owner lives, up to 20 s. */
        for (int i = 0; i < 20000 && 0 != access(mx->path, F_OK) && ENOENT == errno &&
                        (0 == kill(mx->pid, 0) || EPERM == errno);
             ++i) {
            usleep(1000);
        }
        return mca_btl_smcuda_endpoint_map(mx->path, mx->seg_size, mx->pid, seg);
    }
    snprintf(proc_path, sizeof(proc_path), "/proc/%d/fd/%d", (int) mx->pid, (int) mx->fd);
    rc = mca_btl_smcuda_endpoint_map(proc_path, mx->seg_size, mx->pid, seg);
    if (OPAL_ERR_PERM == rc && !said) {
        said = true;
        ob1x_show_help_now("help-btl-smcuda.txt", "proc-fd-refused", opal_process_info.nodename,
                           proc_path, (int) mx->lrank);
    }
    return rc;
}

/* Binds the two rings of the pair: ours in the peer's segment (if the peer
 * reserved one for our local rank) and the peer's in our segment. */
static void setup_rings(mca_btl_smcuda_module_t *m, mca_btl_base_endpoint_t *ep,
                        smcuda_seg_hdr_t *hdr)
{
    unsigned char *seg = ep->seg;

    /* outgoing ring: the peer reserved one for us if our local rank is
     * below its fbox_count */
    ep->out_ring = NULL;
    ep->out_max = ep->out_max_near = 0;
    ep->out_head = ep->out_tail = 0;
    ep->send_seq = 0;
    if ((uint32_t) m->my_lrank < hdr->fbox_count) {
        ep->out_ctl =
            (smcuda_fbox_ctl_t *) (seg + hdr->fbox_off + (uint64_t) m->my_lrank * hdr->fbox_stride);
        ep->out_ring = (unsigned char *) (ep->out_ctl + 1);
        ep->out_mask = hdr->fbox_size - 1;
        /* a quarter of the peer's ring at most, whatever our own settings */
        ep->out_max = mca_btl_smcuda_component.fbox_max_size < hdr->fbox_size / 4
                          ? mca_btl_smcuda_component.fbox_max_size
                          : hdr->fbox_size / 4;
        ep->out_max_near = ep->out_max;
        ep->ring_left = 1; /* the far limit at the first send */
    }
    /* incoming ring, in our own segment */
    ep->in_ring = NULL;
    ep->in_pos = 0;
    ep->recv_seq = 0;
    if ((uint32_t) ep->lrank < m->hdr->fbox_count) {
        ep->in_ctl = (smcuda_fbox_ctl_t *) (m->seg + m->hdr->fbox_off +
                                            (uint64_t) ep->lrank * m->hdr->fbox_stride);
        ep->in_ring = (unsigned char *) (ep->in_ctl + 1);
        ep->in_mask = m->hdr->fbox_size - 1;
    }
    if (NULL != ep->out_ring) {
        /* start using our ring to the peer: flag it, then tell the owner */
        __atomic_store_n(&ep->out_ctl->active, 1, __ATOMIC_RELAXED);
        /* release: `active` is visible before the epoch change */
        __atomic_add_fetch(&hdr->ring_epoch, 1, __ATOMIC_RELEASE);
    }
}

/* An endpoint for the peer whose segment is mapped at `seg`: its FIFO and
 * whether single copy works with it. No ring, no ids yet. */
mca_btl_base_endpoint_t *mca_btl_smcuda_endpoint_new(mca_btl_smcuda_module_t *m,
                                                     struct opal_proc_t *proc, pid_t pid,
                                                     unsigned char *seg, size_t seg_size)
{
    const smcuda_seg_hdr_t *hdr = (const smcuda_seg_hdr_t *) seg;
    mca_btl_base_endpoint_t *ep = OBJ_NEW(mca_btl_base_endpoint_t);

    if (NULL == ep) {
        return NULL;
    }
    ep->proc = proc;
    ep->pid = pid;
    ep->seg = seg;
    ep->seg_size = seg_size;
    ep->fifo = (smcuda_fifo_t *) (seg + hdr->fifo_off);
    ep->fifo_mask = hdr->fifo_slots - 1;
    ep->copy_ok = NULL != m->copy && OPAL_SUCCESS == m->copy->check_peer(ep);
    if (NULL != m->copy && !ep->copy_ok) {
        static bool noticed = false;
        if (!noticed) {
            noticed = true;
            opal_show_help("help-btl-smcuda.txt", "cma-refused", true, m->copy->name, ob1x_host(),
                           (int) pid);
        }
    }
    return ep;
}

int mca_btl_smcuda_endpoint_attach(mca_btl_smcuda_module_t *m, struct opal_proc_t *proc,
                                   mca_btl_base_endpoint_t **ep_out)
{
    smcuda_modex_t *mx = NULL;
    size_t mx_size = 0;
    mca_btl_base_endpoint_t *ep;
    smcuda_seg_hdr_t *hdr;
    unsigned char *seg;
    int rc;

    OPAL_MODEX_RECV(rc, &mca_btl_smcuda_component.super.btl_version, &proc->proc_name,
                    (void **) &mx, &mx_size);
    if (OPAL_SUCCESS != rc || NULL == mx) {
        return OPAL_ERR_UNREACH;
    }
    if (mx_size != sizeof(*mx) || SMCUDA_SHM_VERSION != mx->version || mx->lrank < 0 ||
        mx->lrank >= m->n_local || mx->lrank == m->my_lrank) {
        free(mx);
        return OPAL_ERR_UNREACH;
    }
    if (NULL != m->eps[mx->lrank]) { /* added before */
        *ep_out = m->eps[mx->lrank];
        free(mx);
        return OPAL_SUCCESS;
    }
    mx->path[sizeof(mx->path) - 1] = '\0';
    rc = map_published(mx, &seg);
    if (OPAL_SUCCESS != rc) {
        free(mx);
        return rc;
    }
    note_attached((smcuda_seg_hdr_t *) seg, mx->path);

    ep = mca_btl_smcuda_endpoint_new(m, proc, mx->pid, seg, mx->seg_size);
    if (NULL == ep) {
        munmap(seg, mx->seg_size);
        free(mx);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    hdr = (smcuda_seg_hdr_t *) seg;
    ep->lrank = mx->lrank;
    ep->ref_id = m->my_lrank;
    setup_rings(m, ep, hdr);
    opal_output_verbose(10, mca_btl_smcuda_component.output,
                        "btl/smcuda: attached local peer %d (pid %d): ring %s, single copy %s",
                        ep->lrank, (int) ep->pid, ep->out_ring ? "yes" : "no",
                        ep->copy_ok ? m->copy->name : "no");

    m->eps[ep->lrank] = ep;
    if (NULL != ep->in_ring && __atomic_load_n(&ep->in_ctl->active, __ATOMIC_ACQUIRE)) {
        mca_btl_smcuda_poll_ring_add(m, ep); /* the peer attached before us */
    }
    free(mx);
    *ep_out = ep;
    return OPAL_SUCCESS;
}

void mca_btl_smcuda_endpoint_detach(mca_btl_base_endpoint_t *ep)
{
    if (NULL != ep->seg) {
        munmap(ep->seg, ep->seg_size);
        ep->seg = NULL;
    }
    OBJ_RELEASE(ep);
}

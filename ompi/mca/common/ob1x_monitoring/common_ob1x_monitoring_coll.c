/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_monitoring_coll.c - per-communicator counts of the collective
 * classes (one to all, all to one, all to all): the D/O2A/A2O/A2A lines of
 * the .prof files and the coll_monitoring_{o2a,a2o,a2a}_* pvars.
 *
 * A communicator's name and members (as MPI_COMM_WORLD ranks) are copied
 * when its data is created, so that a dump after MPI_Comm_free still says
 * which communicator the counts were for; released data is freed after
 * the next dump has reported it.
 */
#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "common_ob1x_monitoring_internal.h"

struct ob1x_mon_coll_data {
    ob1x_mon_coll_data_t *next;
    ompi_communicator_t *comm; /* NULL once released */
    char *name;
    char *procs; /* "0,1,2": members as MPI_COMM_WORLD ranks */
    int world_rank;
    uint64_t counts[OB1X_MON_COLL_CLASSES][2]; /* [class][0 messages, 1 bytes] */
};

static ob1x_mon_coll_data_t *coll_list = NULL;
static opal_mutex_t coll_lock = OPAL_MUTEX_STATIC_INIT;

/* Members of comm as a comma separated list of world ranks (other jobs'
 * processes left out, as stock does). */
static char *procs_list(ompi_communicator_t *comm)
{
    int size = ompi_comm_size(comm);
    size_t len = 0, cap = (size_t) size * 12 + 1;
    char *s = malloc(cap);

    if (NULL == s) {
        return NULL;
    }
    s[0] = '\0';
    for (int i = 0; i < size; ++i) {
        int wr = ob1x_mon_world_rank(comm->c_local_group, i);
        if (wr >= 0) {
            len += (size_t) snprintf(s + len, cap - len, "%s%d", 0 == len ? "" : ",", wr);
        }
    }
    return s;
}

ob1x_mon_coll_data_t *ob1x_mon_coll_new(ompi_communicator_t *comm)
{
    ob1x_mon_coll_data_t *d = calloc(1, sizeof(*d));

    if (NULL == d) {
        return NULL;
    }
    d->comm = comm;
    d->name = strdup(comm->c_name);
    d->procs = procs_list(comm);
    d->world_rank = ob1x_mon_my_world_rank();
    OPAL_THREAD_LOCK(&coll_lock);
    d->next = coll_list;
    coll_list = d;
    OPAL_THREAD_UNLOCK(&coll_lock);
    return d;
}

void ob1x_mon_coll_release(ob1x_mon_coll_data_t *data)
{
    if (NULL == data) {
        return;
    }
    /* the name may have been set (MPI_Comm_set_name) after creation */
    if (NULL != data->comm) {
        free(data->name);
        data->name = strdup(data->comm->c_name);
    }
    data->comm = NULL;
}

void ob1x_mon_coll_record(ob1x_mon_coll_data_t *data, ob1x_mon_coll_class_t cls, size_t bytes)
{
    if (ob1x_mon_is_on() && NULL != data && (unsigned) cls < OB1X_MON_COLL_CLASSES) {
        ob1x_mon_add_msg(data->counts[cls], bytes, NULL);
    }
}

static void coll_dump(FILE *f, const ob1x_mon_coll_data_t *d)
{
    static const char *cls_name[OB1X_MON_COLL_CLASSES] = {"O2A", "A2O", "A2A"};
    const char *name = NULL != d->comm ? d->comm->c_name : d->name;

    fprintf(f, "D\t%s\tprocs: %s\n", NULL != name && '\0' != name[0] ? name : "(no-name)",
            NULL != d->procs ? d->procs : "");
    for (int c = 0; c < OB1X_MON_COLL_CLASSES; ++c) {
        fprintf(f, "%s\t%d\t%" PRIu64 " bytes\t%" PRIu64 " msgs sent\n", cls_name[c], d->world_rank,
                d->counts[c][1], d->counts[c][0]);
    }
}

static void coll_free(ob1x_mon_coll_data_t *d)
{
    free(d->name);
    free(d->procs);
    free(d);
}

void ob1x_mon_coll_dump_all(FILE *f)
{
    ob1x_mon_coll_data_t **link = &coll_list, *d;

    OPAL_THREAD_LOCK(&coll_lock);
    while (NULL != (d = *link)) {
        coll_dump(f, d);
        if (NULL == d->comm) {
            *link = d->next;
            coll_free(d);
        } else {
            link = &d->next;
        }
    }
    OPAL_THREAD_UNLOCK(&coll_lock);
}

void ob1x_mon_coll_reset_all(void)
{
    for (ob1x_mon_coll_data_t *d = coll_list; NULL != d; d = d->next) {
        memset(d->counts, 0, sizeof(d->counts));
    }
}

void ob1x_mon_coll_free_all(void)
{
    ob1x_mon_coll_data_t *d;

    while (NULL != (d = coll_list)) {
        coll_list = d->next;
        coll_free(d);
    }
}

void ob1x_mon_coll_get(ompi_communicator_t *comm, ob1x_mon_coll_class_t cls, uint64_t out[2])
{
    out[0] = out[1] = 0;
    OPAL_THREAD_LOCK(&coll_lock);
    for (ob1x_mon_coll_data_t *d = coll_list; NULL != d; d = d->next) {
        if (d->comm == comm) {
            out[0] = d->counts[cls][0];
            out[1] = d->counts[cls][1];
            break;
        }
    }
    OPAL_THREAD_UNLOCK(&coll_lock);
}

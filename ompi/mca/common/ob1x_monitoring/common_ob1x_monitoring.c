/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_monitoring.c - the monitoring engine (common_ob1x_monitoring.h).
 * First version: the interface with empty bodies, so that components can
 * be written against it.
 */
#include "ompi_config.h"

#include "common_ob1x_monitoring.h"

int ob1x_mon_state = 0;

int ob1x_mon_init(void)
{
    return OMPI_SUCCESS;
}

void ob1x_mon_finalize(void)
{
}

int ob1x_mon_enabled(void)
{
    return 0;
}

int ob1x_mon_register(void)
{
    return OMPI_SUCCESS;
}

void ob1x_mon_record_pml_proc(const ompi_proc_t *proc, size_t bytes, int tag)
{
    (void) proc, (void) bytes, (void) tag;
}

void ob1x_mon_record_pml(ompi_group_t *group, int rank, size_t bytes, int tag)
{
    (void) group, (void) rank, (void) bytes, (void) tag;
}

void ob1x_mon_record_pml_recv_proc(const ompi_proc_t *proc, size_t bytes, int tag)
{
    (void) proc, (void) bytes, (void) tag;
}

void ob1x_mon_record_pml_recv(ompi_group_t *group, int rank, size_t bytes, int tag)
{
    (void) group, (void) rank, (void) bytes, (void) tag;
}

void ob1x_mon_record_osc(ompi_group_t *group, int rank, size_t bytes, ob1x_mon_osc_dir_t dir)
{
    (void) group, (void) rank, (void) bytes, (void) dir;
}

void ob1x_mon_record_osc_proc(const ompi_proc_t *proc, size_t bytes, ob1x_mon_osc_dir_t dir)
{
    (void) proc, (void) bytes, (void) dir;
}

void ob1x_mon_record_coll(ompi_group_t *group, int rank, size_t bytes)
{
    (void) group, (void) rank, (void) bytes;
}

void ob1x_mon_record_coll_proc(const ompi_proc_t *proc, size_t bytes)
{
    (void) proc, (void) bytes;
}

ob1x_mon_coll_data_t *ob1x_mon_coll_new(ompi_communicator_t *comm)
{
    (void) comm;
    return NULL;
}

void ob1x_mon_coll_release(ob1x_mon_coll_data_t *data)
{
    (void) data;
}

void ob1x_mon_coll_record(ob1x_mon_coll_data_t *data, ob1x_mon_coll_class_t cls, size_t bytes)
{
    (void) data, (void) cls, (void) bytes;
}

int ob1x_mon_world_rank_of_name(opal_process_name_t name)
{
    (void) name;
    return -1;
}

int ob1x_mon_world_rank(ompi_group_t *group, int rank)
{
    (void) group, (void) rank;
    return -1;
}

int ob1x_mon_my_world_rank(void)
{
    return 0;
}

int ob1x_mon_world_size(void)
{
    return 0;
}

int ob1x_mon_get_counts(int world_rank, ob1x_mon_counts_t *out)
{
    (void) world_rank, (void) out;
    return OMPI_ERR_NOT_IMPLEMENTED;
}

int ob1x_mon_flush(int where, const char *filename)
{
    (void) where, (void) filename;
    return OMPI_SUCCESS;
}

void ob1x_mon_dump(FILE *f)
{
    (void) f;
}

void ob1x_mon_reset(void)
{
}

void ob1x_mon_record_protocol(int protocol, size_t bytes)
{
    (void) protocol, (void) bytes;
}

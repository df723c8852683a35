/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pml_monitoring.c - the send entry points put in front of another PML's:
 * record, then call the real one. Sizes are counted as Open MPI 4.1's
 * pml/monitoring counts them: count times the datatype's size.
 */
#include "pml_monitoring.h"

#include "common_ob1x_monitoring.h"
#include "common_ob1x_help.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/pml/base/pml_base_request.h"

mca_pml_base_module_t mca_pml_monitoring_real;

static inline void record_send(size_t count, ompi_datatype_t *datatype, int dst, int tag,
                               ompi_communicator_t *comm)
{
    size_t type_size;

    /* Sends to MPI_PROC_NULL move nothing. */
    if (MPI_PROC_NULL == dst) {
        return;
    }
    ompi_datatype_type_size(datatype, &type_size);
    ob1x_mon_record_pml(comm->c_remote_group, dst, count * type_size, tag);
}

static int mon_isend(const void *buf, size_t count, ompi_datatype_t *datatype, int dst, int tag,
                     mca_pml_base_send_mode_t mode, ompi_communicator_t *comm,
                     ompi_request_t **request)
{
    if (ob1x_mon_is_on()) {
        record_send(count, datatype, dst, tag, comm);
    }
    return mca_pml_monitoring_real.pml_isend(buf, count, datatype, dst, tag, mode, comm, request);
}

static int mon_send(const void *buf, size_t count, ompi_datatype_t *datatype, int dst, int tag,
                    mca_pml_base_send_mode_t mode, ompi_communicator_t *comm)
{
    if (ob1x_mon_is_on()) {
        record_send(count, datatype, dst, tag, comm);
    }
    return mca_pml_monitoring_real.pml_send(buf, count, datatype, dst, tag, mode, comm);
}

/* A persistent send request started: counted at each start, with the tag
 * it was created with (stock counts every start under tag 1). */
static void record_start(ompi_request_t *request)
{
    mca_pml_base_request_t *pml_req = (mca_pml_base_request_t *) request;

    if (NULL == request || OMPI_REQUEST_PML != request->req_type
        || MCA_PML_REQUEST_SEND != pml_req->req_type) {
        return;
    }
    record_send(pml_req->req_count, pml_req->req_datatype, pml_req->req_peer, pml_req->req_tag,
                pml_req->req_comm);
}

static int mon_start(size_t count, ompi_request_t **requests)
{
    if (ob1x_mon_is_on()) {
        for (size_t i = 0; i < count; ++i) {
            record_start(requests[i]);
        }
    }
    return mca_pml_monitoring_real.pml_start(count, requests);
}

mca_pml_base_module_t mca_pml_monitoring_module_wrap(const mca_pml_base_module_t *real,
                                                     bool base_requests)
{
    mca_pml_base_module_t wrapped = *real;

    wrapped.pml_isend = mon_isend;
    wrapped.pml_send = mon_send;
    /* Only requests derived from mca_pml_base_request_t say their peer and
     * tag; other PMLs' persistent sends go through unrecorded. */
    if (base_requests) {
        wrapped.pml_start = mon_start;
    }
    return wrapped;
}

/* Selected on its own (e.g. "--mca pml monitoring"): there is nothing to
 * monitor. Said once, and MPI_Init fails instead of crashing. */
static int alone_add_procs(struct ompi_proc_t **procs, size_t nprocs)
{
    (void) procs;
    (void) nprocs;
    ob1x_show_help_now("help-mpi-pml-monitoring.txt", "alone", ob1x_host());
    return OMPI_ERR_NOT_SUPPORTED;
}

static int alone_enable(bool enable)
{
    (void) enable;
    return OMPI_SUCCESS;
}

static int alone_progress(void)
{
    return 0;
}

mca_pml_base_module_t mca_pml_monitoring_alone = {
    .pml_add_procs = alone_add_procs,
    .pml_enable = alone_enable,
    .pml_progress = alone_progress,
    .pml_max_contextid = 65535,
    .pml_max_tag = INT_MAX,
};

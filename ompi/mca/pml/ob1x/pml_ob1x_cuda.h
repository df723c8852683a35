/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Device (CUDA) buffers in ob1x (docs/cuda.md, "pml/ob1x"). Every entry
 * point checks one process-global flag, false until the CUDA driver is
 * loaded in this process (no device memory can exist before): a host
 * buffer then costs one predictable branch and no call. Once it is set,
 * the span [buf + true_lb, buf + true_ub) of each message is classified
 * (libmca_common_ob1x_cuda). A device buffer is either sent by a device
 * RGET (contiguous, rendezvous size, a BTL to the peer with
 * OB1X_BTL_PROP_DEVICE_GET that registers it) or staged: copied whole to
 * host memory first, and the message moves from that copy; a device
 * receive buffer receives into a host copy that is copied to the device
 * before the request completes. Built without the CUDA headers, the flag
 * is never set and every function below is a stub.
 */
#ifndef PML_OB1X_CUDA_H
#define PML_OB1X_CUDA_H

#include "ompi_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/pml/pml.h"

BEGIN_C_DECLS

struct ob1x_send_request;
struct ob1x_recv_request;

/* The CUDA driver is loaded in this process: buffers must be classified. */
extern bool ob1x_cuda_live;

/* While the flag is false: a word that turns non-NULL when the dynamic
 * loader loads a library after ob1x last looked for the driver
 * (ob1x_cuda_load_watch; a word that stays NULL when there is no watch). */
struct link_map;
extern struct link_map *volatile *ob1x_cuda_watch;
/* The watch fired: looks for the driver, sets the flag or a new watch;
 * returns the flag. */
bool ob1x_cuda_rewatch(void);

/* Whether buffers must be classified: read by every entry point. A
 * process without the driver pays the flag and one load, and still sees
 * a driver loaded just before the call (the application's dlopen, then a
 * device buffer with no MPI call in between). */
static inline bool ob1x_cuda_check(void)
{
    if (OPAL_LIKELY(!ob1x_cuda_live)) {
        if (OPAL_LIKELY(NULL == *__atomic_load_n(&ob1x_cuda_watch, __ATOMIC_RELAXED))) {
            return false;
        }
        return ob1x_cuda_rewatch();
    }
    return true;
}

/* Whether [buf + true_lb, buf + true_ub) of count elements is device
 * memory. Managed memory counts as host (host code may touch it). */
bool ob1x_cuda_is_device(const void *buf, size_t count, struct ompi_datatype_t *dtype);

/* MPI_Init (the flag, or the loader watch and the progress look) and
 * component close. */
int ob1x_cuda_open(void);
void ob1x_cuda_close(void);
/* Registers pml_ob1x_cuda_support (component registration). */
void ob1x_cuda_register_params(void);

/* Sends of a device buffer (pml_ob1x_isend.c hands them over). request
 * NULL: a blocking send. */
int ob1x_cuda_isend(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst, int tag,
                    mca_pml_base_send_mode_t mode, struct ompi_communicator_t *comm,
                    struct ompi_request_t **request);
int ob1x_cuda_isend_init(const void *buf, size_t count, struct ompi_datatype_t *dtype, int dst,
                         int tag, mca_pml_base_send_mode_t mode, struct ompi_communicator_t *comm,
                         struct ompi_request_t **request);
/* A persistent staged send is started: copy the device data again. */
int ob1x_cuda_send_restage(struct ob1x_send_request *req);
/* A device-RGET send must move by FRAGs after all (the receiver refused
 * or gave up a range): copy to host now and read from there. */
int ob1x_cuda_send_stage_late(struct ob1x_send_request *req);
/* A send staged piece by piece: whether [0, upto) of its host copy holds
 * the data yet (polls the copies; never waits). */
bool ob1x_cuda_send_staged(struct ob1x_send_request *req, size_t upto);
/* The PML is done with the send: release its device registration. */
void ob1x_cuda_send_fini(struct ob1x_send_request *req);
/* Back to the free list: free its host copy. */
void ob1x_cuda_send_release(struct ob1x_send_request *req);

/* A receive into device memory (called from ob1x_recv_request_init when
 * the flag is set): for a non-contiguous datatype *buf becomes the host
 * copy's; a contiguous one gets its copy at ob1x_cuda_recv_stage. */
void ob1x_cuda_recv_setup(struct ob1x_recv_request *req, void **buf, size_t count,
                          struct ompi_datatype_t *dtype, bool persistent);
/* The host copy of a device receive, taken now if not yet (before the
 * first payload that does not go to the device directly lands); the
 * request's convertor is moved onto it. */
void ob1x_cuda_recv_stage(struct ob1x_recv_request *req);
/* (Re)started: a non-contiguous buffer's host copy is refreshed from the
 * device (the gaps of the datatype must come back unchanged). */
void ob1x_cuda_recv_start(struct ob1x_recv_request *req);
/* Payload landed in the host copy at offset (recv_unpack, under the
 * request's lock): pieces it completes start for the device. */
void ob1x_cuda_recv_landed(struct ob1x_recv_request *req, size_t offset, const struct iovec *iov,
                           uint32_t iov_count);
/* Complete: the host copy goes to the device. */
void ob1x_cuda_recv_done(struct ob1x_recv_request *req);
void ob1x_cuda_recv_release(struct ob1x_recv_request *req);
/* A get of a direct device RGET failed: [offset, offset + length) comes by
 * FRAGs into the host copy and goes to the device at completion. */
void ob1x_cuda_recv_note_fallback(struct ob1x_recv_request *req, size_t offset, size_t length);

END_C_DECLS

#endif /* PML_OB1X_CUDA_H */

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * osc_monitoring_rma.c - count, then call the component's own entry point.
 *
 * What is counted, per call, with the peer as its rank in the window's
 * group (kept by the engine under its MPI_COMM_WORLD rank), is what Open
 * MPI 4.1's osc/monitoring counts, so that matrices compare:
 *
 *   put, rput                       sent: origin data
 *   get, rget                       sent: one empty message (the request),
 *                                   received: origin data
 *   accumulate, raccumulate         sent: origin data
 *   get_accumulate, rget_accumulate sent: origin data, received: result data
 *   fetch_and_op, compare_and_swap  sent and received: one element
 *
 * "data" is count x the type size of the datatype named (packed bytes).
 * Nothing is counted for a call that reaches a component without an entry
 * point; nothing either when recording is stopped (one branch).
 */
#include "osc_monitoring_rma.h"

#include "ompi/datatype/ompi_datatype.h"

#include "common_ob1x_monitoring.h"

static void record(ompi_win_t *win, int rank, int count, ompi_datatype_t *dt,
                   ob1x_mon_osc_dir_t dir)
{
    size_t type_size = 0;

    ompi_datatype_type_size(dt, &type_size);
    ob1x_mon_record_osc(win->w_group, rank, (size_t) count * type_size, dir);
}

static void record_get(ompi_win_t *win, int rank, int count, ompi_datatype_t *dt)
{
    ob1x_mon_record_osc(win->w_group, rank, 0, OB1X_MON_OSC_SENT);
    record(win, rank, count, dt, OB1X_MON_OSC_RECV);
}

static void record_fetch(ompi_win_t *win, int rank, ompi_datatype_t *dt)
{
    record(win, rank, 1, dt, OB1X_MON_OSC_SENT);
    record(win, rank, 1, dt, OB1X_MON_OSC_RECV);
}

static int mon_put(const void *origin, int origin_count, ompi_datatype_t *origin_dt, int target,
                   ptrdiff_t target_disp, int target_count, ompi_datatype_t *target_dt,
                   ompi_win_t *win)
{
    if (ob1x_mon_is_on()) {
        record(win, target, origin_count, origin_dt, OB1X_MON_OSC_SENT);
    }
    return osc_monitoring_real(win)->osc_put(origin, origin_count, origin_dt, target, target_disp,
                                             target_count, target_dt, win);
}

static int mon_rput(const void *origin, int origin_count, ompi_datatype_t *origin_dt, int target,
                    ptrdiff_t target_disp, int target_count, ompi_datatype_t *target_dt,
                    ompi_win_t *win, ompi_request_t **request)
{
    if (ob1x_mon_is_on()) {
        record(win, target, origin_count, origin_dt, OB1X_MON_OSC_SENT);
    }
    return osc_monitoring_real(win)->osc_rput(origin, origin_count, origin_dt, target, target_disp,
                                              target_count, target_dt, win, request);
}

static int mon_get(void *origin, int origin_count, ompi_datatype_t *origin_dt, int target,
                   ptrdiff_t target_disp, int target_count, ompi_datatype_t *target_dt,
                   ompi_win_t *win)
{
    if (ob1x_mon_is_on()) {
        record_get(win, target, origin_count, origin_dt);
    }
    return osc_monitoring_real(win)->osc_get(origin, origin_count, origin_dt, target, target_disp,
                                             target_count, target_dt, win);
}

static int mon_rget(void *origin, int origin_count, ompi_datatype_t *origin_dt, int target,
                    ptrdiff_t target_disp, int target_count, ompi_datatype_t *target_dt,
                    ompi_win_t *win, ompi_request_t **request)
{
    if (ob1x_mon_is_on()) {
        record_get(win, target, origin_count, origin_dt);
    }
    return osc_monitoring_real(win)->osc_rget(origin, origin_count, origin_dt, target, target_disp,
                                              target_count, target_dt, win, request);
}

static int mon_accumulate(const void *origin, int origin_count, ompi_datatype_t *origin_dt,
                          int target, ptrdiff_t target_disp, int target_count,
                          ompi_datatype_t *target_dt, struct ompi_op_t *op, ompi_win_t *win)
{
    if (ob1x_mon_is_on()) {
        record(win, target, origin_count, origin_dt, OB1X_MON_OSC_SENT);
    }
    return osc_monitoring_real(win)->osc_accumulate(origin, origin_count, origin_dt, target,
                                                    target_disp, target_count, target_dt, op, win);
}

static int mon_raccumulate(const void *origin, int origin_count, ompi_datatype_t *origin_dt,
                           int target, ptrdiff_t target_disp, int target_count,
                           ompi_datatype_t *target_dt, struct ompi_op_t *op, ompi_win_t *win,
                           ompi_request_t **request)
{
    if (ob1x_mon_is_on()) {
        record(win, target, origin_count, origin_dt, OB1X_MON_OSC_SENT);
    }
    return osc_monitoring_real(win)->osc_raccumulate(origin, origin_count, origin_dt, target,
                                                     target_disp, target_count, target_dt, op, win,
                                                     request);
}

static int mon_get_accumulate(const void *origin, int origin_count, ompi_datatype_t *origin_dt,
                              void *result, int result_count, ompi_datatype_t *result_dt,
                              int target, ptrdiff_t target_disp, int target_count,
                              ompi_datatype_t *target_dt, struct ompi_op_t *op, ompi_win_t *win)
{
    if (ob1x_mon_is_on()) {
        record(win, target, origin_count, origin_dt, OB1X_MON_OSC_SENT);
        record(win, target, result_count, result_dt, OB1X_MON_OSC_RECV);
    }
    return osc_monitoring_real(win)->osc_get_accumulate(
        origin, origin_count, origin_dt, result, result_count, result_dt, target, target_disp,
        target_count, target_dt, op, win);
}

static int mon_rget_accumulate(const void *origin, int origin_count, ompi_datatype_t *origin_dt,
                               void *result, int result_count, ompi_datatype_t *result_dt,
                               int target, ptrdiff_t target_disp, int target_count,
                               ompi_datatype_t *target_dt, struct ompi_op_t *op, ompi_win_t *win,
                               ompi_request_t **request)
{
    if (ob1x_mon_is_on()) {
        record(win, target, origin_count, origin_dt, OB1X_MON_OSC_SENT);
        record(win, target, result_count, result_dt, OB1X_MON_OSC_RECV);
    }
    return osc_monitoring_real(win)->osc_rget_accumulate(
        origin, origin_count, origin_dt, result, result_count, result_dt, target, target_disp,
        target_count, target_dt, op, win, request);
}

static int mon_fetch_and_op(const void *origin, void *result, ompi_datatype_t *dt, int target,
                            ptrdiff_t target_disp, struct ompi_op_t *op, ompi_win_t *win)
{
    if (ob1x_mon_is_on()) {
        record_fetch(win, target, dt);
    }
    return osc_monitoring_real(win)->osc_fetch_and_op(origin, result, dt, target, target_disp, op,
                                                      win);
}

static int mon_compare_and_swap(const void *origin, const void *compare, void *result,
                                ompi_datatype_t *dt, int target, ptrdiff_t target_disp,
                                ompi_win_t *win)
{
    if (ob1x_mon_is_on()) {
        record_fetch(win, target, dt);
    }
    return osc_monitoring_real(win)->osc_compare_and_swap(origin, compare, result, dt, target,
                                                          target_disp, win);
}

/* One slot: ours only where the component has one (a NULL entry point
 * stays NULL, as the MPI layer may test it). */
#define WRAP(m, slot, fn) ((m)->slot = (NULL != (m)->slot) ? (fn) : NULL)

void osc_monitoring_wrap(ompi_osc_base_module_t *m)
{
    WRAP(m, osc_put, mon_put);
    WRAP(m, osc_rput, mon_rput);
    WRAP(m, osc_get, mon_get);
    WRAP(m, osc_rget, mon_rget);
    WRAP(m, osc_accumulate, mon_accumulate);
    WRAP(m, osc_raccumulate, mon_raccumulate);
    WRAP(m, osc_get_accumulate, mon_get_accumulate);
    WRAP(m, osc_rget_accumulate, mon_rget_accumulate);
    WRAP(m, osc_fetch_and_op, mon_fetch_and_op);
    WRAP(m, osc_compare_and_swap, mon_compare_and_swap);
}

/* Only the slots that still hold ours: a component that changed one of
 * its entry points since keeps its change. */
#define UNWRAP(m, real, slot, fn)                                                                  \
    do {                                                                                           \
        if ((fn) == (m)->slot) {                                                                   \
            (m)->slot = (real)->slot;                                                              \
        }                                                                                          \
    } while (0)

void osc_monitoring_unwrap(ompi_osc_base_module_t *m, const ompi_osc_base_module_t *real)
{
    UNWRAP(m, real, osc_put, mon_put);
    UNWRAP(m, real, osc_rput, mon_rput);
    UNWRAP(m, real, osc_get, mon_get);
    UNWRAP(m, real, osc_rget, mon_rget);
    UNWRAP(m, real, osc_accumulate, mon_accumulate);
    UNWRAP(m, real, osc_raccumulate, mon_raccumulate);
    UNWRAP(m, real, osc_get_accumulate, mon_get_accumulate);
    UNWRAP(m, real, osc_rget_accumulate, mon_rget_accumulate);
    UNWRAP(m, real, osc_fetch_and_op, mon_fetch_and_op);
    UNWRAP(m, real, osc_compare_and_swap, mon_compare_and_swap);
}

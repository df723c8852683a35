/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * osc_monitoring_window.c - the per-window records: the component's
 * original entry points, kept from interposition to MPI_Win_free.
 *
 * Records are found from the module's address (the wrappers get only the
 * window). Windows are created and freed collectively while other threads
 * may be in RMA calls on other windows, so the table is under a lock
 * (taken only when Open MPI runs with threads).
 */
#include "osc_monitoring.h"

#include <stdlib.h>

#include "opal/class/opal_hash_table.h"
#include "opal/threads/mutex.h"

#include "osc_monitoring_rma.h"

size_t osc_monitoring_window_count = 0;

static opal_hash_table_t windows;
static opal_mutex_t windows_lock;
static bool windows_ready = false;

static uint64_t key_of(const ompi_osc_base_module_t *module)
{
    return (uint64_t) (uintptr_t) module;
}

int osc_monitoring_windows_init(void)
{
    OBJ_CONSTRUCT(&windows, opal_hash_table_t);
    OBJ_CONSTRUCT(&windows_lock, opal_mutex_t);
    if (OPAL_SUCCESS != opal_hash_table_init(&windows, 32)) {
        OBJ_DESTRUCT(&windows_lock);
        OBJ_DESTRUCT(&windows);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    windows_ready = true;
    return OMPI_SUCCESS;
}

/* Windows the application never freed: their records only (the windows
 * themselves are not ours to free). */
void osc_monitoring_windows_fini(void)
{
    uint64_t key;
    void *value, *node = NULL;

    if (!windows_ready) {
        return;
    }
    while (OPAL_SUCCESS == opal_hash_table_get_first_key_uint64(&windows, &key, &value, &node)) {
        opal_hash_table_remove_value_uint64(&windows, key);
        free(value);
        node = NULL;
    }
    OBJ_DESTRUCT(&windows);
    OBJ_DESTRUCT(&windows_lock);
    windows_ready = false;
    osc_monitoring_window_count = 0;
}

const ompi_osc_base_module_t *osc_monitoring_real(ompi_win_t *win)
{
    void *rec = NULL;

    OPAL_THREAD_LOCK(&windows_lock);
    opal_hash_table_get_value_uint64(&windows, key_of(win->w_osc_module), &rec);
    OPAL_THREAD_UNLOCK(&windows_lock);
    return NULL == rec ? NULL : &((osc_monitoring_window_t *) rec)->real;
}

/* Takes the record of module out of the table; the caller frees it. */
static osc_monitoring_window_t *take_record(ompi_osc_base_module_t *module)
{
    void *rec = NULL;

    OPAL_THREAD_LOCK(&windows_lock);
    if (OPAL_SUCCESS == opal_hash_table_get_value_uint64(&windows, key_of(module), &rec)) {
        opal_hash_table_remove_value_uint64(&windows, key_of(module));
        osc_monitoring_window_count--;
    }
    OPAL_THREAD_UNLOCK(&windows_lock);
    return rec;
}

/* MPI_Win_free: the module gets its own entry points back before its own
 * free runs (which may look at them, and frees the module). */
static int osc_monitoring_free(ompi_win_t *win)
{
    ompi_osc_base_module_t *module = win->w_osc_module;
    osc_monitoring_window_t *rec = take_record(module);

    if (NULL == rec) {
        return OMPI_ERR_NOT_FOUND; /* not reached: only interposed modules lead here */
    }
    osc_monitoring_unwrap(module, &rec->real);
    module->osc_free = rec->real.osc_free;
    free(rec);
    return module->osc_free(win);
}

int osc_monitoring_interpose(ompi_win_t *win)
{
    ompi_osc_base_module_t *module = win->w_osc_module;
    osc_monitoring_window_t *rec = malloc(sizeof(*rec));
    int rc;

    if (NULL == rec) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    rec->real = *module;
    OPAL_THREAD_LOCK(&windows_lock);
    rc = opal_hash_table_set_value_uint64(&windows, key_of(module), rec);
    if (OPAL_SUCCESS == rc) {
        osc_monitoring_window_count++;
    }
    OPAL_THREAD_UNLOCK(&windows_lock);
    if (OPAL_SUCCESS != rc) {
        free(rec);
        return rc;
    }
    /* Not visible to any other thread yet: the window is still being
     * created, so the table can change without a lock. */
    osc_monitoring_wrap(module);
    if (NULL != module->osc_free) {
        module->osc_free = osc_monitoring_free;
    }
    return OMPI_SUCCESS;
}

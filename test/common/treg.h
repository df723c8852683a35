/*
 * treg.h - reading pml/ob1x's registration counters in a test program
 * (pml_ob1x_registrations_made / _reused, and one protocol's message
 * counter). Each reader allocates its MPI_T handles in its own session
 * right after t_init, so they count from there.
 */
#ifndef TREG_H
#define TREG_H

#include "tpml.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    MPI_T_pvar_session session;
    MPI_T_pvar_handle made, reused, proto;
} t_reg_counters;

typedef struct {
    unsigned long long made, reused, proto;
} t_reg_snap;

static inline void t_reg_handle(t_reg_counters *c, const char *name, MPI_T_pvar_handle *h)
{
    int idx, count;

    T_CHECK(MPI_SUCCESS == MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx),
            "MPI_T counter %s not found", name);
    T_MPI(MPI_T_pvar_handle_alloc(c->session, idx, NULL, h, &count));
    T_CHECK(1 == count, "MPI_T counter %s has %d values", name, count);
}

/* `proto`: a protocol row's name ("rget", "sendrecv_pipeline"...). */
static inline void t_reg_open(t_reg_counters *c, const char *proto)
{
    char name[96];

    T_MPI(MPI_T_pvar_session_create(&c->session));
    t_reg_handle(c, "pml_ob1x_registrations_made", &c->made);
    t_reg_handle(c, "pml_ob1x_registrations_reused", &c->reused);
    snprintf(name, sizeof(name), "pml_ob1x_%s_messages", proto);
    t_reg_handle(c, name, &c->proto);
}

static inline unsigned long long t_reg_read1(t_reg_counters *c, MPI_T_pvar_handle h)
{
    unsigned long long v = 0;

    T_MPI(MPI_T_pvar_read(c->session, h, &v));
    return v;
}

static inline void t_reg_read(t_reg_counters *c, t_reg_snap *s)
{
    s->made = t_reg_read1(c, c->made);
    s->reused = t_reg_read1(c, c->reused);
    s->proto = t_reg_read1(c, c->proto);
}

static inline void t_reg_close(t_reg_counters *c)
{
    MPI_T_pvar_handle_free(c->session, &c->made);
    MPI_T_pvar_handle_free(c->session, &c->reused);
    MPI_T_pvar_handle_free(c->session, &c->proto);
    MPI_T_pvar_session_free(&c->session);
}

#endif /* TREG_H */

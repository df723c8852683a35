/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_monitoring_dump.c - the .prof text: the format of Open MPI
 * 4.1's common/monitoring line for line (tab separated; profile2mat.pl and
 * aggregate_profile.pl read it):
 *
 *   # POINT TO POINT
 *   E <me> <peer> <N> bytes <M> msgs sent <66 histogram bins, comma separated>
 *   I <me> <peer> <N> bytes <M> msgs sent      (enable >= 2: internal tags;
 *                                               the histogram here when no E line)
 *   # OSC
 *   S/R <me> <peer> <N> bytes <M> msgs sent
 *   # COLLECTIVES
 *   C <me> <peer> <N> bytes <M> msgs sent
 *   D <comm name> procs: <world ranks>  then O2A/A2O/A2A <me> <N> bytes <M> msgs sent
 *
 * Beyond stock, after those: receive-side counts and peers of other jobs,
 * on lines starting with '#' so that the stock scripts skip them.
 */
#include "ompi_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/show_help.h"

#include "common_ob1x_help.h"
#include "common_ob1x_monitoring_internal.h"

#define HELP_FILE "help-ob1x-monitoring.txt"

static void pair_line(FILE *f, const char *kind, int me, int peer, const uint64_t *pair,
                      const char *end)
{
    fprintf(f, "%s\t%d\t%d\t%" PRIu64 " bytes\t%" PRIu64 " msgs sent%s", kind, me, peer, pair[1],
            pair[0], end);
}

static void hist_line(FILE *f, const ob1x_mon_counts_t *c)
{
    for (int j = 0; j < OB1X_MON_HIST_BINS; ++j) {
        fprintf(f, "%" PRIu64 "%s", c->hist[j], j < OB1X_MON_HIST_BINS - 1 ? "," : "\n");
    }
}

static void p2p_dump(FILE *f, int me, int n)
{
    const ob1x_mon_counts_t *c;

    fprintf(f, "# POINT TO POINT\n");
    for (int i = 0; i < n; ++i) {
        if (NULL != (c = ob1x_mon_world_peer(i)) && c->pml_count > 0) {
            pair_line(f, "E", me, i, &c->pml_count, "\t");
            hist_line(f, c);
        }
    }
    if (!ob1x_mon_filters_internal()) {
        return;
    }
    for (int i = 0; i < n; ++i) {
        if (NULL != (c = ob1x_mon_world_peer(i)) && c->pml_int_count > 0) {
            /* the histogram goes here when no E line carried it */
            pair_line(f, "I", me, i, &c->pml_int_count, 0 == c->pml_count ? "\t" : "\n");
            if (0 == c->pml_count) {
                hist_line(f, c);
            }
        }
    }
}

static void osc_coll_dump(FILE *f, int me, int n)
{
    const ob1x_mon_counts_t *c;

    fprintf(f, "# OSC\n");
    for (int i = 0; i < n; ++i) {
        if (NULL == (c = ob1x_mon_world_peer(i))) {
            continue;
        }
        if (c->osc_sent_count > 0) {
            pair_line(f, "S", me, i, &c->osc_sent_count, "\n");
        }
        if (c->osc_recv_count > 0) {
            pair_line(f, "R", me, i, &c->osc_recv_count, "\n");
        }
    }
    fprintf(f, "# COLLECTIVES\n");
    for (int i = 0; i < n; ++i) {
        if (NULL != (c = ob1x_mon_world_peer(i)) && c->coll_count > 0) {
            pair_line(f, "C", me, i, &c->coll_count, "\n");
        }
    }
    ob1x_mon_coll_dump_all(f);
}

/* Received messages (beyond stock), as comment lines. */
static void recv_dump(FILE *f, int me, int n)
{
    const ob1x_mon_counts_t *c;

    for (int i = 0; i < n; ++i) {
        if (NULL == (c = ob1x_mon_world_peer(i))) {
            continue;
        }
        if (c->recv_count > 0) {
            fprintf(f, "#RE\t%d\t%d\t%" PRIu64 " bytes\t%" PRIu64 " msgs recv\n", me, i,
                    c->recv_bytes, c->recv_count);
        }
        if (c->recv_int_count > 0) {
            fprintf(f, "#RI\t%d\t%d\t%" PRIu64 " bytes\t%" PRIu64 " msgs recv\n", me, i,
                    c->recv_int_bytes, c->recv_int_count);
        }
    }
}

static void other_line(opal_process_name_t name, const ob1x_mon_counts_t *c, void *arg)
{
    FILE *f = arg;

    fprintf(f,
            "#X\t%d\t[%u,%u]\t%" PRIu64 " bytes\t%" PRIu64 " msgs sent\t%" PRIu64 " bytes\t%" PRIu64
            " msgs recv\n",
            ob1x_mon_my_world_rank(), (unsigned) name.jobid, (unsigned) name.vpid,
            c->pml_bytes + c->pml_int_bytes, c->pml_count + c->pml_int_count,
            c->recv_bytes + c->recv_int_bytes, c->recv_count + c->recv_int_count);
}

void ob1x_mon_dump(FILE *f)
{
    int me = ob1x_mon_my_world_rank(), n = ob1x_mon_world_size();

    ob1x_mon_settle();
    p2p_dump(f, me, n);
    osc_coll_dump(f, me, n);
    recv_dump(f, me, n);
    ob1x_mon_other_foreach(other_line, f);
}

static int dump_to_file(const char *filename)
{
    char *path = NULL;
    FILE *f;

    if (NULL == filename) {
        opal_show_help(HELP_FILE, "no filename", true, ob1x_mon_output, ob1x_host());
        return OMPI_ERR_BAD_PARAM;
    }
    if (0 > asprintf(&path, "%s.%d.prof", filename, ob1x_mon_my_world_rank())) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    f = fopen(path, "w");
    if (NULL == f) {
        opal_show_help(HELP_FILE, "flush failed", true, ob1x_mon_my_world_rank(), ob1x_host(), path,
                       strerror(errno));
        free(path);
        return OMPI_ERROR;
    }
    free(path);
    ob1x_mon_dump(f);
    return 0 == fclose(f) ? OMPI_SUCCESS : OMPI_ERROR;
}

/* The whole text in one write: the processes of a job share the stream,
 * and stderr is unbuffered (line by line, their lines would interleave). */
static void dump_to_stream(FILE *out)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);

    if (NULL == mem) {
        ob1x_mon_dump(out);
    } else {
        ob1x_mon_dump(mem);
        fclose(mem);
        fwrite(text, 1, len, out);
        free(text);
    }
    fflush(out);
}

int ob1x_mon_flush(int where, const char *filename)
{
    int rc = OMPI_SUCCESS;

    if (!ob1x_mon_is_on() || OB1X_MON_OUT_NONE == where) {
        return OMPI_SUCCESS;
    }
    if (OB1X_MON_OUT_STDOUT == where || OB1X_MON_OUT_STDERR == where) {
        dump_to_stream(OB1X_MON_OUT_STDOUT == where ? stdout : stderr);
    } else {
        rc = dump_to_file(filename);
    }
    if (OMPI_SUCCESS == rc) {
        ob1x_mon_reset();
    }
    return rc;
}

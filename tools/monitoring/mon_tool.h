/* Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE. */
/*
 * ob1x-monitoring: the tools that turn the .prof files written by the
 * monitoring components (ours or Open MPI's stock ones) into matrices,
 * pictures and a process placement. Shared declarations.
 */
#ifndef OB1X_MON_TOOL_H
#define OB1X_MON_TOOL_H

#include <stddef.h>

/* A square matrix, row-major, of doubles (the stock scripts compute in Perl
 * numbers, i.e. doubles: so do we, to print the same digits). */
typedef struct mon_matrix {
    int n;
    double *v;
} mon_matrix_t;

static inline double *mon_at(mon_matrix_t *m, int i, int j)
{
    return &m->v[(size_t) i * (size_t) m->n + (size_t) j];
}

int mon_matrix_alloc(mon_matrix_t *m, int n);
void mon_matrix_free(mon_matrix_t *m);
int mon_matrix_read(const char *path, mon_matrix_t *m);
int mon_matrix_write(const char *path, const mon_matrix_t *m);

/* What a picture shows; the units go next to the colour scale. */
typedef struct mon_picture_opts {
    const char *title;
    const char *units; /* "bytes", "messages", "bytes/message" */
    int log_scale;
} mon_picture_opts_t;

int mon_picture_svg(const char *path, const mon_matrix_t *m, const mon_picture_opts_t *o);
int mon_picture_png(const char *path, const mon_matrix_t *m, const mon_picture_opts_t *o);
/* Units guessed from a stock matrix file name (_size_, _msg_, _avg_). */
const char *mon_units_from_name(const char *path);

/* 5x7 bitmap font for the PNG pictures: row r (0 = top) of character c,
 * bit 4 = leftmost column. */
unsigned mon_font_row(int c, int r);

/* Calls fn on each PREFIX.<rank>.prof file (rank = digits only); *files
 * gets how many. Stops at the first non-zero return, returned. */
int mon_for_each_rank_file(const char *prefix, int (*fn)(const char *path, void *ctx), void *ctx,
                           int *files);

/* Subcommands. */
int mon_cmd_matrices(int argc, char **argv);
int mon_cmd_heatmap(int argc, char **argv);
int mon_cmd_place(int argc, char **argv);
int mon_cmd_histogram(int argc, char **argv);

/* Prints "ob1x-monitoring: " and the message on stderr; returns 1. */
int mon_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

/* Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE. */
/*
 * Matrices in memory and in the .mat text format of Open MPI's
 * profile2mat.pl: one row per line, each value printed "%.0f " (so a row
 * ends with a space), no header.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mon_tool.h"

int mon_matrix_alloc(mon_matrix_t *m, int n)
{
    m->n = n;
    m->v = calloc((size_t) n * (size_t) n + 1, sizeof(double));
    return NULL == m->v ? -1 : 0;
}

void mon_matrix_free(mon_matrix_t *m)
{
    free(m->v);
    m->v = NULL;
    m->n = 0;
}

int mon_matrix_write(const char *path, const mon_matrix_t *m)
{
    FILE *f = fopen(path, "w");
    if (NULL == f) {
        return mon_error("cannot write %s: %s", path, strerror(errno));
    }
    for (int i = 0; i < m->n; i++) {
        for (int j = 0; j < m->n; j++) {
            fprintf(f, "%.0f ", m->v[(size_t) i * m->n + j]);
        }
        fputc('\n', f);
    }
    if (0 != fclose(f)) {
        return mon_error("cannot write %s: %s", path, strerror(errno));
    }
    return 0;
}

/* Values of one line appended to *vals (grown as needed); returns how many
 * the line held, -1 on a word that is not a number. */
static int read_row(char *line, double **vals, size_t *len, size_t *cap)
{
    int count = 0;
    char *p = line;
    for (;;) {
        while (isspace((unsigned char) *p)) {
            p++;
        }
        if ('\0' == *p) {
            return count;
        }
        char *end;
        double d = strtod(p, &end);
        if (end == p || (*end && !isspace((unsigned char) *end))) {
            return -1;
        }
        if (*len == *cap) {
            *cap = *cap ? 2 * *cap : 1024;
            double *nv = realloc(*vals, *cap * sizeof(double));
            if (NULL == nv) {
                return -1;
            }
            *vals = nv;
        }
        (*vals)[(*len)++] = d;
        count++;
        p = end;
    }
}

int mon_matrix_read(const char *path, mon_matrix_t *m)
{
    FILE *f = fopen(path, "r");
    if (NULL == f) {
        return mon_error("cannot read %s: %s", path, strerror(errno));
    }
    char *line = NULL;
    size_t lcap = 0, len = 0, cap = 0;
    double *vals = NULL;
    int rows = 0, width = -1, bad = 0;
    while (!bad && getline(&line, &lcap, f) > 0) {
        int c = read_row(line, &vals, &len, &cap);
        if (0 == c) {
            continue; /* blank line */
        }
        bad = c < 0 || (width >= 0 && c != width);
        width = c;
        rows++;
    }
    free(line);
    fclose(f);
    if (bad || rows == 0 || rows != width) {
        free(vals);
        return mon_error("%s: not a square matrix of numbers (%d rows)", path, rows);
    }
    m->n = rows;
    m->v = vals;
    return 0;
}

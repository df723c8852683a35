/* Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE. */
/*
 * ob1x-monitoring histogram: the message-size histograms the .prof files
 * carry at the end of E lines (or of I lines for peers with no E line) —
 * one per (sender, receiver) pair, 66 bins: bin 0 counts empty messages,
 * bin k >= 1 sizes in [2^(k-1), 2^k) bytes (the last bin: everything
 * above). Summed over the pairs selected, printed one non-empty bin a line:
 *
 *   bin <TAB> smallest size <TAB> largest size <TAB> messages
 *
 * after a "#" header line, then "# total <TAB> N".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mon_tool.h"

#define MON_HIST_BINS 66

typedef struct hist {
    long from, to; /* -1: any */
    double bin[MON_HIST_BINS];
} hist_t;

/* "E\tP1\tP2\t...\tH0,H1,..." -> adds H* when the pair is selected. */
static void add_line(hist_t *h, const char *line)
{
    long p1, p2;
    char type;
    if (2 > sscanf(line, "%c\t%ld\t%ld", &type, &p1, &p2) || ('E' != type && 'I' != type)) {
        return;
    }
    const char *tail = strrchr(line, '\t');
    if (NULL == tail || NULL == strchr(tail, ',')) {
        return; /* an I line whose histogram is on the E line */
    }
    if ((h->from >= 0 && p1 != h->from) || (h->to >= 0 && p2 != h->to)) {
        return;
    }
    const char *p = tail + 1;
    for (int k = 0; k < MON_HIST_BINS && *p; k++) {
        char *end;
        h->bin[k] += strtod(p, &end);
        p = ',' == *end ? end + 1 : end;
    }
}

static int read_hist(const char *path, void *ctx)
{
    FILE *f = fopen(path, "r");
    if (NULL == f) {
        return mon_error("cannot read %s: %s", path, strerror(errno));
    }
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        add_line(ctx, line);
    }
    free(line);
    fclose(f);
    return 0;
}

static void print_hist(const hist_t *h)
{
    double total = 0;
    printf("# bin\tfrom_bytes\tto_bytes\tmessages\n");
    for (int k = 0; k < MON_HIST_BINS; k++) {
        if (0 == h->bin[k]) {
            continue;
        }
        unsigned long long lo = 0 == k ? 0 : 1ull << (k - 1);
        if (0 == k) {
            printf("0\t0\t0\t%.0f\n", h->bin[k]);
        } else if (MON_HIST_BINS - 1 == k) {
            printf("%d\t%llu\t-\t%.0f\n", k, lo, h->bin[k]);
        } else {
            printf("%d\t%llu\t%llu\t%.0f\n", k, lo, 2 * lo - 1, h->bin[k]);
        }
        total += h->bin[k];
    }
    printf("# total\t%.0f\n", total);
}

static void histogram_usage(FILE *f)
{
    fputs("Usage: ob1x-monitoring histogram [--from RANK] [--to RANK] PREFIX|FILE\n"
          "\n"
          "Sums the message-size histograms of PREFIX.<rank>.prof (or of one FILE) over\n"
          "the pairs selected (default all; --from: sender, --to: receiver) and prints\n"
          "each non-empty bin: bin, smallest and largest size in bytes, messages.\n",
          f);
}

int mon_cmd_histogram(int argc, char **argv)
{
    hist_t h = {.from = -1, .to = -1};
    const char *arg = NULL;
    for (int k = 1; k < argc; k++) {
        if ('-' != argv[k][0] && NULL == arg) {
            arg = argv[k];
        } else if (0 == strcmp(argv[k], "--from") && k + 1 < argc) {
            h.from = strtol(argv[++k], NULL, 10);
        } else if (0 == strcmp(argv[k], "--to") && k + 1 < argc) {
            h.to = strtol(argv[++k], NULL, 10);
        } else if (0 == strcmp(argv[k], "-h") || 0 == strcmp(argv[k], "--help")) {
            histogram_usage(stdout);
            return 0;
        } else {
            histogram_usage(stderr);
            return 2;
        }
    }
    if (NULL == arg) {
        histogram_usage(stderr);
        return 2;
    }
    struct stat st;
    int files = 1, rc;
    if (0 == stat(arg, &st) && S_ISREG(st.st_mode)) {
        rc = read_hist(arg, &h);
    } else {
        rc = mon_for_each_rank_file(arg, read_hist, &h, &files);
    }
    if (0 == rc && 0 == files) {
        rc = mon_error("no file %s.<rank>.prof", arg);
    }
    if (0 == rc) {
        print_hist(&h);
    }
    return rc;
}

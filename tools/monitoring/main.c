/* Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE. */
/*
 * ob1x-monitoring COMMAND ...: entry point, dispatches to the subcommands.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ob1x_version.h"
#include "mon_tool.h"

int mon_error(const char *fmt, ...)
{
    va_list ap;
    fputs("ob1x-monitoring: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

static void usage(FILE *f)
{
    fputs("Usage: ob1x-monitoring COMMAND [options] ARGS\n"
          "\n"
          "Commands (each takes --help):\n"
          "  matrices PREFIX|FILE.prof  communication matrices (.mat, as Open MPI's\n"
          "                             profile2mat.pl writes them) from the per-rank\n"
          "                             PREFIX.<rank>.prof files of a run or of its phases\n"
          "  heatmap FILE.mat ...       SVG and/or PNG pictures of matrices\n"
          "  place FILE.mat             TreeMatch-style placement on a topology: an Open\n"
          "                             MPI rankfile and its cost against packed and\n"
          "                             round-robin placements\n"
          "  histogram PREFIX|FILE      message-size histogram (log2 bins) of the E/I lines\n"
          "  version                    print the version\n",
          f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (0 == strcmp(cmd, "matrices")) {
        return mon_cmd_matrices(argc - 1, argv + 1);
    }
    if (0 == strcmp(cmd, "heatmap")) {
        return mon_cmd_heatmap(argc - 1, argv + 1);
    }
    if (0 == strcmp(cmd, "histogram")) {
        return mon_cmd_histogram(argc - 1, argv + 1);
    }
    if (0 == strcmp(cmd, "place")) {
        return mon_cmd_place(argc - 1, argv + 1);
    }
    if (0 == strcmp(cmd, "version") || 0 == strcmp(cmd, "--version")) {
        printf("ob1x-monitoring %s\n", OB1X_VERSION_STRING);
        return 0;
    }
    if (0 == strcmp(cmd, "help") || 0 == strcmp(cmd, "--help") || 0 == strcmp(cmd, "-h")) {
        usage(stdout);
        return 0;
    }
    mon_error("unknown command '%s'", cmd);
    usage(stderr);
    return 2;
}

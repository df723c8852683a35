/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_shm.c - shared-memory hygiene: once MPI_Init has returned on every
 * rank, each process maps one segment per local process (its own + one per
 * peer), shared mappings of files of the backing directory (/dev/shm)
 * that have no name there (any more), each created 0600 and owned by us.
 *
 * Arguments: expect=nameless (default: every segment was created without a
 * name, O_TMPFILE, shown as "/dev/shm/#<inode> (deleted)") or expect=named
 * (btl_smcuda_named_segment: the peers' segments "/dev/shm/ob1x_smcuda.*
 * (deleted)", removed once every local peer attached; our own was made
 * without a name where the file system can and named at add_procs, so
 * its mapping may show as "#<inode>": at most one such). nodump: the processes make themselves
 * not dumpable before MPI_Init (peers could not open their /proc/<pid>/fd
 * without privileges), so btl/smcuda must choose named segments itself.
 */
#include "btl_util.h"

#include <errno.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROG "btl/smcuda_shm"

int main(int argc, char **argv)
{
    const char *expect = bu_arg(argc, argv, "expect");
    int named = NULL != expect && 0 == strcmp(expect, "named");
    FILE *maps;
    char line[1024];
    int segments = 0, checked_mode = 0, token = 1, own_nameless = 0;

    for (int i = 1; i < argc; ++i)
        if (0 == strcmp(argv[i], "nodump"))
            BU_CHECK(0 == prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl failed");
    bu_init(&argc, &argv);
    /* everyone is past add_procs, and the segments carry traffic */
    MPI_Allreduce(MPI_IN_PLACE, &token, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);

    maps = fopen("/proc/self/maps", "r");
    BU_CHECK(NULL != maps, "cannot read /proc/self/maps");
    while (fgets(line, sizeof(line), maps)) {
        char range[64], perms[8], path[900], mapfile[128];
        struct stat st;
        /* path starts at the first '/' */
        char *p = strchr(line, '/');
        if (NULL == p || 0 != strncmp(p, "/dev/shm/", 9) ||
            2 != sscanf(line, "%63s %7s", range, perms) || 's' != perms[3])
            continue;
        snprintf(path, sizeof(path), "%s", p);
        path[strcspn(path, "\n")] = '\0';
        if (0 == strncmp(path, "/dev/shm/vader_segment.", 23))
            continue; /* another BTL's */
        ++segments;
        BU_CHECK(NULL != strstr(path, "(deleted)"), "segment still linked: %s", path);
        if (named && '#' == path[9])
            BU_CHECK(++own_nameless <= 1, "segment %s: more than our own without a name", path);
        else if (named)
            BU_CHECK(0 == strncmp(path, "/dev/shm/ob1x_smcuda.", 21), "segment %s, want named",
                     path);
        else
            BU_CHECK('#' == path[9], "segment %s, want nameless (O_TMPFILE)", path);
        {
            char bare[900];
            snprintf(bare, sizeof(bare), "%s", path);
            *strstr(bare, " (deleted)") = '\0';
            BU_CHECK(0 != access(bare, F_OK) && ENOENT == errno, "backing file %s still exists",
                     bare);
        }
        snprintf(mapfile, sizeof(mapfile), "/proc/self/map_files/%s", range);
        if (0 == stat(mapfile, &st)) {
            BU_CHECK((st.st_mode & 07777) == 0600, "segment %s has mode %o, want 600", path,
                     (unsigned) (st.st_mode & 07777));
            BU_CHECK(st.st_uid == geteuid(), "segment %s owned by uid %u", path,
                     (unsigned) st.st_uid);
            ++checked_mode;
        }
    }
    fclose(maps);
    BU_CHECK(segments == bu_size, "%d segments mapped, want %d (one per local process)", segments,
             bu_size);
    MPI_Allreduce(MPI_IN_PLACE, &checked_mode, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == bu_rank && 0 == checked_mode)
        printf("%s: note: /proc/self/map_files not readable, permissions not checked\n", PROG);
    return bu_finalize(PROG);
}

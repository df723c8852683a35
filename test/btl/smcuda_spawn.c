/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * smcuda_spawn.c - processes of different jobs on one node (MPI_Comm_spawn)
 * reach each other through btl/smcuda ("guests", docs/smcuda.md).
 *
 * The parents spawn `children` processes, `rounds` times one after the
 * other. Each time, parents and children merge into one communicator and:
 *   - every pair exchanges messages of every protocol's sizes (0 B..4 MiB),
 *     contents and counts verified;
 *   - each rank receives one message from every other with MPI_ANY_SOURCE
 *     and checks the status;
 *   - a ring of MPI_Ssend;
 *   - one-sided: MPI_Fetch_and_op on rank 0 and MPI_Put into the last rank
 *     from every rank under MPI_Win_lock_all, results checked;
 * then disconnect. At the end no backing file of a process that has exited
 * may be left in /dev/shm.
 *
 * Arguments:
 *   children=N rounds=R
 *   expect=shm    each process reached every peer of another job through
 *                 smcuda: btl_smcuda_guest_peers counts the children each
 *                 parent met, and a child that is alone in its job moved
 *                 FIFO traffic (to its parents, the only peers it has)
 *   expect=other  no peer of another job through smcuda (the parents'
 *                 guest_peers 0; a lone child moved nothing through smcuda)
 *   expect=any    contents only (some pairs may use another BTL)
 *   dead_maps=N   at the end each parent may still map the segments of at
 *                 most N exited children (the others were given back when
 *                 later children came)
 *   spawn_wait=S  seconds an MPI_Comm_spawn may take before it is judged
 *                 hung (default 60)
 *
 * A spawn that hangs: FAIL unless proven to be Open MPI's own hang.
 * Open MPI 4.1.4 over PMIx 4 (Debian 12) hangs in MPI_Comm_spawn now and
 * then with the stock BTLs too (about one spawn in 35 here; openpmix issue
 * 2735): a new child never returns from PMIx_Init. Our own code can hang
 * at the same place from the parents' point of view: a child's MPI_Init
 * attaches btl/smcuda to its parents' segments (the guest table) and the
 * parents only return once every child has left MPI_Init. So each child
 * writes its stages into a file of its own (stages=DIR, given by rank 0 of
 * the parents): "started" before MPI_Init, "initialised" after it. When
 * the spawn has not returned after spawn_wait seconds, rank 0 judges:
 *   SKIP (77) only if every child has started and is alive, and the
 *        children stuck in MPI_Init include one with none of this
 *        project's components (mca_btl_smcuda.so, mca_pml_ob1x.so) in
 *        /proc/<pid>/maps: Open MPI opens the BTLs and PMLs only after
 *        PMIx_Init has returned, so that child is proven stuck before any
 *        code of ours ran in it, and MPI_Init's fence, which its siblings
 *        (those that did load ours) then wait in, cannot complete without
 *        it;
 *   FAIL in every other case: a child stuck in MPI_Init with one of our
 *        components loaded (smcuda's attach, ob1x, or Open MPI after them),
 *        a child that died, children that never started, every child past
 *        MPI_Init (the parents' side hangs), a child whose maps cannot be
 *        read.
 * Either way the children's wait channels are printed, and before a
 * failure, where gdb is installed, the stuck children's stacks. The judge is tested itself by
 * selftest=yes: this process then runs no MPI itself but three cases as
 * child jobs and checks their verdicts and exit codes: a child that stops
 * before MPI_Init (hang=before) must be a skip, one that stops with smcuda
 * loaded (hang=ours) a failure, and two children of which one stops
 * before MPI_Init and the other with smcuda loaded (hang=mixed) a skip.
 */
#define _GNU_SOURCE
#include "btl_util.h"

#include "btl_child.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../opal/mca/btl/smcuda/btl_smcuda_shm.h"

#define PROG "btl/smcuda_spawn"

static const size_t sizes[] = {0,     1,     64,    2000,       4096,    4097,
                               16384, 32768, 65539, 256 * 1024, 1 << 20, 4 << 20};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static int seed_of(int src, int dst, size_t k)
{
    return (int) (src * 1009 + dst * 31 + (int) k);
}

static unsigned long long guest_peers(void)
{
    return bu_named_counter("btl_smcuda_guest_peers");
}

/* Every pair, every size, both directions at once. */
static void all_pairs(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (size_t k = 0; k < NSIZES; ++k) {
        size_t n = sizes[k];
        unsigned char **rb = calloc((size_t) size, sizeof(*rb));
        unsigned char *sb = malloc(n + 1);
        MPI_Request *req = malloc(2 * (size_t) size * sizeof(*req));
        int nreq = 0;
        for (int p = 0; p < size; ++p) {
            if (p == rank)
                continue;
            rb[p] = malloc(n + 1);
            MPI_Irecv(rb[p], (int) n, MPI_BYTE, p, (int) k, comm, &req[nreq++]);
        }
        /* the same bytes to every peer, seeded by the sender */
        bu_fill(sb, n, seed_of(rank, 0, k));
        for (int p = 0; p < size; ++p) {
            if (p != rank)
                MPI_Isend(sb, (int) n, MPI_BYTE, p, (int) k, comm, &req[nreq++]);
        }
        MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
        for (int p = 0; p < size; ++p) {
            long bad;
            if (p == rank)
                continue;
            bad = bu_verify(rb[p], n, seed_of(p, 0, k));
            BU_CHECK(bad < 0, "%zu bytes from merged rank %d: byte %ld wrong", n, p, bad);
            free(rb[p]);
        }
        free(rb);
        free(sb);
        free(req);
    }
}

static void any_source(MPI_Comm comm)
{
    int rank, size, seen = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int p = 0; p < size; ++p) {
        if (p != rank)
            MPI_Send(&rank, 1, MPI_INT, p, 77, comm);
    }
    for (int i = 0; i < size - 1; ++i) {
        MPI_Status st;
        int from = -1, count = -1;
        MPI_Recv(&from, 1, MPI_INT, MPI_ANY_SOURCE, 77, comm, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        BU_CHECK(count == 1 && st.MPI_SOURCE == from && st.MPI_TAG == 77 && from != rank &&
                     !(seen & (1 << from)),
                 "ANY_SOURCE receive: source %d, payload %d, count %d", st.MPI_SOURCE, from, count);
        seen |= 1 << from;
    }
}

static void ssend_ring(MPI_Comm comm)
{
    int rank, size, got = -1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (0 == rank) {
        MPI_Ssend(&rank, 1, MPI_INT, 1 % size, 5, comm);
        MPI_Recv(&got, 1, MPI_INT, size - 1, 5, comm, MPI_STATUS_IGNORE);
        BU_CHECK(got == size - 1, "Ssend ring came back with %d", got);
    } else {
        MPI_Recv(&got, 1, MPI_INT, rank - 1, 5, comm, MPI_STATUS_IGNORE);
        BU_CHECK(got == rank - 1, "Ssend ring: %d from %d", got, rank - 1);
        MPI_Ssend(&rank, 1, MPI_INT, (rank + 1) % size, 5, comm);
    }
}

static void one_sided(MPI_Comm comm)
{
    int rank, size;
    int64_t *mem, one = 1, old = -1;
    MPI_Win win;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Alloc_mem((MPI_Aint) (size + 1) * 8, MPI_INFO_NULL, &mem);
    for (int i = 0; i <= size; ++i)
        mem[i] = 0;
    MPI_Win_create(mem, (MPI_Aint) (size + 1) * 8, 8, MPI_INFO_NULL, comm, &win);
    MPI_Win_lock_all(0, win);
    MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, 0, MPI_SUM, win);
    MPI_Win_flush(0, win);
    BU_CHECK(old >= 0 && old < size, "fetch-and-op on merged rank 0 returned %lld",
             (long long) old);
    {
        int64_t mine = 1000 + rank;
        MPI_Put(&mine, 1, MPI_INT64_T, size - 1, 1 + rank, 1, MPI_INT64_T, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(comm);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win); /* our own memory, synchronized */
    if (0 == rank)
        BU_CHECK(mem[0] == size, "fetch-and-op total %lld, expected %d", (long long) mem[0], size);
    if (size - 1 == rank) {
        for (int r = 0; r < size; ++r)
            BU_CHECK(mem[1 + r] == 1000 + r, "put from merged rank %d: %lld", r,
                     (long long) mem[1 + r]);
    }
    MPI_Win_unlock(rank, win);
    MPI_Win_free(&win);
    MPI_Free_mem(mem);
}

/* Returns, in pids (parents only), the children's pids. */
static void together(MPI_Comm inter, int high, int *pids)
{
    MPI_Comm merged;
    int me = (int) getpid(), size, nparents;
    int *all;
    MPI_Intercomm_merge(inter, high, &merged);
    all_pairs(merged);
    any_source(merged);
    ssend_ring(merged);
    one_sided(merged);
    MPI_Comm_size(merged, &size);
    all = malloc((size_t) size * sizeof(int));
    MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, merged);
    if (!high) {
        MPI_Comm_size(MPI_COMM_WORLD, &nparents);
        memcpy(pids, all + nparents, (size_t) (size - nparents) * sizeof(int));
    }
    free(all);
    MPI_Comm_free(&merged);
}

/* Waits (up to 10 s each) until the children's processes are gone, so
 * that the next round can give their guest entries back. */
static void wait_exited(const int *pids, int n)
{
    for (int i = 0; i < n; ++i) {
        for (int t = 0; t < 1000 && 0 == kill(pids[i], 0); ++t)
            usleep(10000);
    }
}

/* ------------------------------------------------------------------ */
/* stages of the children and the judge of a hung spawn (see the top)   */
/* ------------------------------------------------------------------ */

/* Appends one line to this child's stage file. */
static void stage(const char *dir, const char *what)
{
    char path[PATH_MAX];
    int fd;
    snprintf(path, sizeof(path), "%s/%d", dir, (int) getpid());
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd < 0)
        return; /* the judge then sees a child that never started: FAIL */
    (void) write(fd, what, strlen(what));
    close(fd);
}

/* hang=before|ours|mixed (children of the self-test only): stop for good
 * before MPI_Init, without or with our BTL loaded as MPI_Init would load
 * it; mixed: the first child of the spawn (the one that creates the
 * marker file in the stages directory) without, the others with. */
static void simulate_hang(const char *how, const char *dir)
{
    if (0 == strcmp(how, "mixed")) {
        char path[PATH_MAX];
        int fd;
        snprintf(path, sizeof(path), "%s/first", dir);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
        how = fd >= 0 ? "before" : "ours";
        if (fd >= 0)
            close(fd);
    }
    if (0 == strcmp(how, "ours")) {
        const char *path = getenv("OMPI_MCA_mca_base_component_path");
        char dso[PATH_MAX];
        size_t n = NULL != path ? strcspn(path, ":") : 0;
        snprintf(dso, sizeof(dso), "%.*s/mca_btl_smcuda.so", (int) n, NULL != path ? path : "");
        if (NULL == dlopen(dso, RTLD_LAZY | RTLD_LOCAL))
            printf("%s: self-test child cannot load %s: %s\n", PROG, dso, dlerror());
    }
    fflush(stdout);
    for (;;)
        pause();
}

typedef struct {
    int pid;
    int initialised; /* wrote "initialised": left MPI_Init */
    int alive;
    int maps_read; /* its /proc/<pid>/maps could be read */
    char ours[64]; /* a component of ours it has loaded, "" if none */
} child_t;

/* Which of our components the process has mapped (into ours, "" = none);
 * returns 0 if its maps cannot be read. */
static int our_components(int pid, char *ours, size_t len)
{
    static const char *const names[] = {"/mca_btl_smcuda.so", "/mca_pml_ob1x.so"};
    char path[64], line[1024];
    FILE *f;
    snprintf(path, sizeof(path), "/proc/%d/maps", pid);
    ours[0] = '\0';
    if (NULL == (f = fopen(path, "r")))
        return 0;
    while (NULL != fgets(line, sizeof(line), f) && '\0' == ours[0]) {
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i)
            if (NULL != strstr(line, names[i]))
                snprintf(ours, len, "%s", names[i] + 1);
    }
    fclose(f);
    return 1;
}

/* Reads the stage files of DIR; returns the number of children found. */
static int read_stages(const char *dir, child_t *c, int max)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (NULL == d)
        return 0;
    while (NULL != (e = readdir(d)) && n < max) {
        char path[PATH_MAX], text[256] = "";
        FILE *f;
        int pid = atoi(e->d_name);
        if (pid <= 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (NULL != (f = fopen(path, "r"))) {
            size_t got = fread(text, 1, sizeof(text) - 1, f);
            text[got] = '\0';
            fclose(f);
        }
        c[n].pid = pid;
        c[n].initialised = NULL != strstr(text, "initialised");
        c[n].alive = 0 == kill(pid, 0);
        c[n].maps_read = our_components(pid, c[n].ours, sizeof(c[n].ours));
        ++n;
    }
    closedir(d);
    return n;
}

/* Where a child waits: its kernel wait channel (evidence for the reader;
 * the verdict does not use it). */
static void show_child(const child_t *c)
{
    char path[64], wchan[128] = "?";
    FILE *f;
    snprintf(path, sizeof(path), "/proc/%d/wchan", c->pid);
    if (NULL != (f = fopen(path, "r"))) {
        size_t got = fread(wchan, 1, sizeof(wchan) - 1, f);
        wchan[got] = '\0';
        fclose(f);
    }
    printf("%s: child %d: %s, %s, wait channel %s, components of ours loaded: %s\n", PROG, c->pid,
           c->initialised ? "left MPI_Init" : "inside MPI_Init or before it",
           c->alive ? "alive" : "gone", wchan,
           !c->maps_read        ? "(maps unreadable)"
           : '\0' != c->ours[0] ? c->ours
                                : "none");
    fflush(stdout);
}

/* The stacks of a stuck child, where gdb is installed: shown before a
 * failure only (a skip must not wait for gdb past the harness's limit). */
static void show_stacks(const child_t *c)
{
    char cmd[256];
    if (c->initialised || !c->alive || 0 != system("command -v gdb >/dev/null 2>&1"))
        return;
    snprintf(cmd, sizeof(cmd),
             "timeout 30 gdb -p %d -batch -ex 'thread apply all bt 12' 2>/dev/null | "
             "grep '^#' | head -n 40 | sed 's/^/    /'",
             c->pid);
    printf("%s: stacks of child %d:\n", PROG, c->pid);
    fflush(stdout);
    (void) system(cmd);
    fflush(stdout);
}

/* The verdict on a spawn of `children` that has not returned: 77 (skip)
 * only when the hang is proven to be before any code of ours ran in the
 * children, 1 (fail) otherwise; the reason is printed. */
static int judge(const char *dir, int children, int waited)
{
    child_t c[64];
    int n = read_stages(dir, c, 64), stuck = 0, before = 0;
    const char *why = NULL;
    printf("%s: MPI_Comm_spawn did not return in %d s; %d of %d children started\n", PROG, waited,
           n, children);
    for (int i = 0; i < n; ++i)
        show_child(&c[i]);
    if (n < children)
        why = "not every child started (no stage file)";
    for (int i = 0; i < n && NULL == why; ++i) {
        if (c[i].initialised)
            continue;
        ++stuck;
        if (!c[i].alive)
            why = "a child died before leaving MPI_Init";
        else if (!c[i].maps_read)
            why = "a stuck child's maps cannot be read: not proven to be before our code";
        else if ('\0' == c[i].ours[0])
            ++before; /* stuck before any code of ours: Open MPI's hang */
    }
    if (NULL == why && 0 == stuck)
        why = "every child left MPI_Init: the parents' side of the spawn hangs";
    if (NULL == why && 0 == before)
        why = "a child hangs in MPI_Init with a component of ours loaded (smcuda attach, "
              "ob1x, or Open MPI after them), and none is stuck before our code";
    if (NULL != why) {
        for (int i = 0; i < n && i < 4; ++i)
            show_stacks(&c[i]);
        printf("FAIL: %s: spawn hung: %s\n", PROG, why);
        fflush(stdout);
        return 1;
    }
    printf("%s: SKIP: the Open MPI 4.1/PMIx 4 spawn hang (openpmix issue 2735): %d of %d "
           "children stuck in MPI_Init before any component of ours was loaded\n",
           PROG, before, stuck);
    fflush(stdout);
    return 77;
}

static void remove_stages(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[PATH_MAX];
    if (NULL == d)
        return;
    while (NULL != (e = readdir(d))) {
        if ('.' == e->d_name[0])
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* Rank 0's watch over one MPI_Comm_spawn: a thread that judges and ends
 * the process if the spawn has not returned in time. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t thread;
    int returned;
    int wait_s;
    int children;
    char dir[PATH_MAX];
} watch_t;

static void *watchdog(void *arg)
{
    watch_t *w = arg;
    struct timespec deadline;
    int returned;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += w->wait_s;
    pthread_mutex_lock(&w->lock);
    while (!w->returned && ETIMEDOUT != pthread_cond_timedwait(&w->cond, &w->lock, &deadline))
        ;
    returned = w->returned;
    pthread_mutex_unlock(&w->lock);
    if (!returned) {
        int rc = judge(w->dir, w->children, w->wait_s);
        remove_stages(w->dir);
        _exit(rc);
    }
    return NULL;
}

static void watch_start(watch_t *w, int wait_s, int children)
{
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    w->returned = 0;
    w->wait_s = wait_s;
    w->children = children;
    BU_CHECK(0 == pthread_create(&w->thread, NULL, watchdog, w), "cannot start the watchdog");
}

static void watch_stop(watch_t *w)
{
    pthread_mutex_lock(&w->lock);
    w->returned = 1;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
}

/* ------------------------------------------------------------------ */
/* self-test of the judge: two child jobs with simulated hangs           */
/* ------------------------------------------------------------------ */

/* Runs this program as a one-process job whose `children` children stop
 * (hang=how); returns its exit status (-1 if it could not run), output in
 * out. */
static int run_hung_job(const char *how, int children, char *out, size_t len)
{
    const char *mpirun = getenv("MPIRUN") ? getenv("MPIRUN") : "mpirun";
    char self[PATH_MAX], hang[32], nchildren[32];
    char *argv[] = {(char *) mpirun,
                    "-np",
                    "1",
                    "--oversubscribe",
                    "--mca",
                    "btl_base_warn_component_unused",
                    "0",
                    "--mca",
                    "pml",
                    "ob1",
                    "--mca",
                    "btl",
                    "self,smcuda",
                    self,
                    nchildren,
                    "rounds=1",
                    "spawn_wait=6",
                    hang,
                    NULL};
    ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
    int pfd[2], status;
    size_t used = 0;
    pid_t pid;
    if (sl <= 0 || 0 != pipe(pfd))
        return -1;
    self[sl] = '\0';
    snprintf(hang, sizeof(hang), "hang=%s", how);
    snprintf(nchildren, sizeof(nchildren), "children=%d", children);
    pid = fork();
    if (0 == pid) {
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        close(pfd[0]);
        close(pfd[1]);
        execvpe(mpirun, argv, btl_child_env());
        _exit(127);
    }
    close(pfd[1]);
    for (ssize_t got; used + 1 < len && (got = read(pfd[0], out + used, len - 1 - used)) > 0;)
        used += (size_t) got;
    out[used] = '\0';
    close(pfd[0]);
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int selftest(void)
{
    static char out[1 << 16];
    int rc = run_hung_job("before", 1, out, sizeof(out));
    printf("%s: --- child stopped before MPI_Init (exit %d):\n%s", PROG, rc, out);
    if (77 != rc || NULL == strstr(out, "SKIP: the Open MPI 4.1/PMIx 4 spawn hang")) {
        printf("FAIL: %s: a hang before our code was not judged a skip\n", PROG);
        return 1;
    }
    rc = run_hung_job("ours", 1, out, sizeof(out));
    printf("%s: --- child stopped with smcuda loaded (exit %d):\n%s", PROG, rc, out);
    if (0 == rc || 77 == rc || NULL == strstr(out, "with a component of ours loaded")) {
        printf("FAIL: %s: a hang with smcuda loaded was not judged a failure\n", PROG);
        return 1;
    }
    /* Open MPI's hang in one child, its sibling waiting with ours loaded
     * (seen in a loaded CI run): the hang is Open MPI's */
    rc = run_hung_job("mixed", 2, out, sizeof(out));
    printf("%s: --- one child stopped before MPI_Init, one with smcuda loaded (exit %d):\n%s",
           PROG, rc, out);
    if (77 != rc || NULL == strstr(out, "SKIP: the Open MPI 4.1/PMIx 4 spawn hang")) {
        printf("FAIL: %s: a hang before our code in one of two children was not judged a skip\n",
               PROG);
        return 1;
    }
    printf("PASS: %s (judge self-test)\n", PROG);
    return 0;
}

/* A backing file of one of our children (pids) that has exited is a
 * leak. (Files of other jobs, such as one killed in MPI_Init earlier, are
 * not this test's business.) */
static void check_no_leak(const int *pids, int n)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    if (NULL == d)
        return;
    while (NULL != (e = readdir(d))) {
        unsigned job, vpid;
        int pid;
        if (3 != sscanf(e->d_name, "ob1x_smcuda.%u.%u.%d", &job, &vpid, &pid) ||
            (0 == kill(pid, 0) || ESRCH != errno))
            continue;
        for (int i = 0; i < n; ++i)
            BU_CHECK(pids[i] != pid, "/dev/shm/%s left behind by a child that has exited",
                     e->d_name);
    }
    closedir(d);
}

/* foreign: peers of other jobs met since the counters were opened (a
 * child meets its parents inside MPI_Init, before: it passes 0); alone:
 * no process of our own job, so all our smcuda traffic went to guests. */
/* Our mappings of segments whose owner has exited; *all: segments mapped
 * (our own among them). Segments have no name: they are the shared
 * mappings of removed files that start with a segment header, which names
 * the owner. */
static int dead_mappings(int *all)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    int n = 0;
    *all = 0;
    if (NULL == f)
        return 0;
    while (NULL != fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        char perms[8];
        const smcuda_seg_hdr_t *hdr;
        if (NULL == strstr(line, "(deleted)") ||
            3 != sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) || 'r' != perms[0] ||
            's' != perms[3] || hi - lo < sizeof(*hdr))
            continue;
        hdr = (const smcuda_seg_hdr_t *) lo;
        if (SMCUDA_SHM_MAGIC != hdr->magic)
            continue;
        ++*all;
        if (0 != kill(hdr->owner_pid, 0) && ESRCH == errno)
            ++n;
    }
    fclose(f);
    return n;
}

static void check_expect(const char *expect, int foreign, int alone)
{
    unsigned long long g = guest_peers();
    bu_counters_t c;

    bu_counters(&c);
    if (0 == strcmp(expect, "shm")) {
        BU_CHECK(g >= (unsigned long long) foreign,
                 "btl_smcuda_guest_peers is %llu; expected at least %d peers of other jobs", g,
                 foreign);
        BU_CHECK(!alone || c.messages[BU_FIFO] > 0,
                 "a process alone in its job moved nothing through the FIFO");
    } else if (0 == strcmp(expect, "other")) {
        BU_CHECK(0 == g, "btl_smcuda_guest_peers is %llu; expected 0", g);
        BU_CHECK(!alone || 0 == c.messages[BU_FIFO] + c.messages[BU_FBOX],
                 "a process alone in its job moved %llu FIFO messages through smcuda",
                 c.messages[BU_FIFO]);
    }
}

int main(int argc, char **argv)
{
    const char *a;
    int children = (a = bu_arg(argc, argv, "children")) ? atoi(a) : 2;
    int rounds = (a = bu_arg(argc, argv, "rounds")) ? atoi(a) : 1;
    const char *expect = (a = bu_arg(argc, argv, "expect")) ? a : "any";
    int dead_maps = (a = bu_arg(argc, argv, "dead_maps")) ? atoi(a) : -1;
    int spawn_wait = (a = bu_arg(argc, argv, "spawn_wait")) ? atoi(a) : 60;
    const char *stages = bu_arg(argc, argv, "stages"); /* only children have it */
    int *pids = calloc((size_t) (children * rounds) + 1, sizeof(int));
    MPI_Comm parent;

    if (NULL != bu_arg(argc, argv, "selftest"))
        return selftest();
    if (NULL != stages) {
        stage(stages, "started\n");
        if (NULL != (a = bu_arg(argc, argv, "hang")))
            simulate_hang(a, stages);
    }
    bu_init(&argc, &argv);
    if (NULL != stages)
        stage(stages, "initialised\n");
    (void) guest_peers(); /* opens the counter's handle */
    MPI_Comm_get_parent(&parent);
    if (MPI_COMM_NULL != parent) {
        together(parent, 1, NULL);
        check_expect(expect, 0, 1 == bu_size);
        MPI_Comm_disconnect(&parent);
        /* bu_finalize prints PASS only from rank 0 of the parents' job */
        MPI_T_finalize();
        MPI_Finalize();
        return 0;
    }
    for (int r = 0; r < rounds; ++r) {
        MPI_Comm inter;
        int *errs = malloc((size_t) children * sizeof(int));
        char **cargv = calloc((size_t) argc + 1, sizeof(char *));
        char stagearg[PATH_MAX + 8];
        watch_t w;
        /* the children get our own arguments and rank 0's stage directory
         * (only the root's arguments count) */
        for (int i = 1; i < argc; ++i)
            cargv[i - 1] = argv[i];
        if (0 == bu_rank) {
            snprintf(w.dir, sizeof(w.dir), "/tmp/ob1x_spawn_stages.XXXXXX");
            BU_CHECK(NULL != mkdtemp(w.dir), "cannot create a stage directory: %s",
                     strerror(errno));
            snprintf(stagearg, sizeof(stagearg), "stages=%s", w.dir);
            cargv[argc - 1] = stagearg;
            watch_start(&w, spawn_wait, children);
        }
        MPI_Comm_spawn(argv[0], cargv, children, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
        if (0 == bu_rank)
            watch_stop(&w);
        for (int i = 0; i < children; ++i)
            BU_CHECK(MPI_SUCCESS == errs[i], "spawn of child %d failed: %d", i, errs[i]);
        free(errs);
        free(cargv);
        together(inter, 0, pids + r * children);
        if (0 == bu_rank)
            remove_stages(w.dir); /* every child has left MPI_Init by now */
        MPI_Comm_disconnect(&inter);
        wait_exited(pids + r * children, children);
        if (0 == bu_rank)
            printf("%s: round %d: %d parents and %d children exchanged\n", PROG, r, bu_size,
                   children);
    }
    check_expect(expect, rounds * children, 0);
    if (dead_maps >= 0) {
        int all, n = dead_mappings(&all);
        BU_CHECK(all >= 1, "no segment found in /proc/self/maps, not even our own");
        BU_CHECK(n <= dead_maps, "%d segments of exited children still mapped (at most %d)", n,
                 dead_maps);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == bu_rank) {
        sleep(1); /* the last children finish their exit */
        check_no_leak(pids, rounds * children);
        printf("%s: guest peers of rank 0: %llu\n", PROG, guest_peers());
    }
    return bu_finalize(PROG);
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * ob1x-demo: a small job that shows the ob1x components at work.
 *
 * Rank 0 sends messages of growing size to rank 1 (standard and synchronous
 * mode), rank 1 checks every byte. Around each send, rank 0 reads the MPI_T
 * performance variables of pml/ob1x and prints which protocol carried the
 * message. Rank 0 prints the PML and BTL component files it loaded, so the
 * output also tells whether the installed components were used.
 *
 *   mpirun -np 2 --mca pml ob1x --mca btl self,smcuda ob1x-demo
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ob1x_version.h"

/* Sender-side counters of pml/ob1x, one per protocol (docs/mca-params.md). */
static const char *const protocols[] = {
    "eager_immediate",   "eager_prepared",    "eager_allocated", "sendrecv_pipeline",
    "buffered_pipeline", "rget",              "rput",            "rdma_pipeline",
};
#define NUM_PROTOCOLS (sizeof(protocols) / sizeof(protocols[0]))

struct counter {
    const char *label;
    int index; /* MPI_T index, -1 when the variable does not exist */
    MPI_T_pvar_handle handle;
};

static struct counter msg_counters[NUM_PROTOCOLS];
static struct counter sync_counter;
static MPI_T_pvar_session session;

static int find_pvar(const char *name)
{
    int num = 0;

    MPI_T_pvar_get_num(&num);
    for (int i = 0; i < num; i++) {
        char pname[256], desc[1024];
        int name_len = sizeof(pname), desc_len = sizeof(desc);
        int verbosity, var_class, bind, readonly, continuous, atomic;
        MPI_Datatype type;
        MPI_T_enum enumtype;

        if (MPI_SUCCESS != MPI_T_pvar_get_info(i, pname, &name_len, &verbosity, &var_class, &type,
                                               &enumtype, desc, &desc_len, &bind, &readonly,
                                               &continuous, &atomic)) {
            continue;
        }
        if (0 == strcmp(pname, name) && MPI_UNSIGNED_LONG_LONG == type) {
            return i;
        }
    }
    return -1;
}

static void open_counter(struct counter *c, const char *label, const char *name)
{
    int count;

    c->label = label;
    c->index = find_pvar(name);
    if (c->index < 0) {
        return;
    }
    if (MPI_SUCCESS != MPI_T_pvar_handle_alloc(session, c->index, NULL, &c->handle, &count) ||
        count != 1) {
        c->index = -1;
        return;
    }
    /* Continuous variables refuse start; that is fine, they always count. */
    (void) MPI_T_pvar_start(session, c->handle);
}

static unsigned long long read_counter(const struct counter *c)
{
    unsigned long long value = 0;

    if (c->index >= 0) {
        MPI_T_pvar_read(session, c->handle, &value);
    }
    return value;
}

static int have_counters(void)
{
    for (size_t p = 0; p < NUM_PROTOCOLS; p++) {
        if (msg_counters[p].index >= 0) {
            return 1;
        }
    }
    return 0;
}

/* The protocols whose message counter moved between before[] and now. */
static void describe_protocol(const unsigned long long *before, char *out, size_t len)
{
    out[0] = '\0';
    for (size_t p = 0; p < NUM_PROTOCOLS; p++) {
        if (read_counter(&msg_counters[p]) != before[p]) {
            size_t used = strlen(out);
            snprintf(out + used, len - used, "%s%s", used ? "+" : "", protocols[p]);
        }
    }
    if ('\0' == out[0]) {
        snprintf(out, len, "%s", have_counters() ? "(no counter moved)" : "(no ob1x counters)");
    }
}

/* Prints the PML and BTL component files mapped into this process. */
static void print_loaded_components(int rank)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096], last[4096] = "";

    if (NULL == maps) {
        return;
    }
    while (fgets(line, sizeof(line), maps)) {
        char *path = strchr(line, '/');
        if (NULL == path) {
            continue;
        }
        path[strcspn(path, "\n")] = '\0';
        const char *base = strrchr(path, '/') + 1;
        if ((0 == strncmp(base, "mca_pml_", 8) || 0 == strncmp(base, "mca_btl_", 8)) &&
            0 != strcmp(path, last)) {
            printf("rank %d loaded %s\n", rank, path);
            snprintf(last, sizeof(last), "%s", path);
        }
    }
    fclose(maps);
}

static void run_sends(int rank)
{
    static const size_t sizes[] = {0, 8, 1024, 4096, 32768, 262144, 4194304};
    const size_t max = sizes[sizeof(sizes) / sizeof(sizes[0]) - 1];
    unsigned char *buf = malloc(max);

    if (NULL == buf) {
        fprintf(stderr, "ob1x-demo: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (0 == rank) {
        printf("\n%-10s %-12s %s\n", "bytes", "mode", "protocol (pml_ob1x MPI_T counters)");
    }
    for (int sync = 0; sync <= 1; sync++) {
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            size_t n = sizes[s];
            if (0 == rank) {
                unsigned long long before[NUM_PROTOCOLS];
                char how[256];
                for (size_t i = 0; i < n; i++) {
                    buf[i] = (unsigned char) (i * 7 + s);
                }
                for (size_t p = 0; p < NUM_PROTOCOLS; p++) {
                    before[p] = read_counter(&msg_counters[p]);
                }
                if (sync) {
                    MPI_Ssend(buf, (int) n, MPI_BYTE, 1, (int) s, MPI_COMM_WORLD);
                } else {
                    MPI_Send(buf, (int) n, MPI_BYTE, 1, (int) s, MPI_COMM_WORLD);
                }
                describe_protocol(before, how, sizeof(how));
                printf("%-10zu %-12s %s\n", n, sync ? "synchronous" : "standard", how);
            } else if (1 == rank) {
                MPI_Status status;
                int got;
                memset(buf, 0xff, n);
                MPI_Recv(buf, (int) max, MPI_BYTE, 0, (int) s, MPI_COMM_WORLD, &status);
                MPI_Get_count(&status, MPI_BYTE, &got);
                if ((size_t) got != n) {
                    printf("FAIL: received %d bytes, expected %zu\n", got, n);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
                for (size_t i = 0; i < n; i++) {
                    if (buf[i] != (unsigned char) (i * 7 + s)) {
                        printf("FAIL: byte %zu of the %zu-byte message is wrong\n", i, n);
                        MPI_Abort(MPI_COMM_WORLD, 1);
                    }
                }
            }
            /* Keep the printed lines in order of the sends. */
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    free(buf);
}

int main(int argc, char **argv)
{
    int rank, size, provided;

    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (0 == rank) {
            fprintf(stderr, "ob1x-demo: run me with at least 2 processes (mpirun -np 2)\n");
        }
        MPI_Finalize();
        return 1;
    }

    MPI_T_pvar_session_create(&session);
    for (size_t p = 0; p < NUM_PROTOCOLS; p++) {
        char name[128];
        snprintf(name, sizeof(name), "pml_ob1x_%s_messages", protocols[p]);
        open_counter(&msg_counters[p], protocols[p], name);
    }
    open_counter(&sync_counter, "synchronous", "pml_ob1x_synchronous_messages");

    if (0 == rank) {
        printf("ob1x-demo %s (built against Open MPI %s), %d processes\n", OB1X_VERSION_STRING,
               OB1X_HOST_OMPI_VERSION_STRING, size);
    }
    if (0 == rank) {
        print_loaded_components(rank);
    }
    if (0 == rank && !have_counters()) {
        printf("note: no pml_ob1x MPI_T counters here: is pml ob1x selected (--mca pml ob1x)?\n");
    }

    run_sends(rank);

    if (0 == rank && have_counters()) {
        printf("\ntotals on rank 0:\n");
        for (size_t p = 0; p < NUM_PROTOCOLS; p++) {
            printf("  pml_ob1x_%s_messages = %llu\n", protocols[p], read_counter(&msg_counters[p]));
        }
        if (sync_counter.index >= 0) {
            printf("  pml_ob1x_synchronous_messages = %llu\n", read_counter(&sync_counter));
        }
    }
    if (0 == rank) {
        printf("\nall messages arrived intact\n");
    }

    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}

/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * common_ob1x_monitoring.h - the monitoring engine: who sent how many
 * messages and bytes to whom, through the PML, the collectives and
 * one-sided communication. One instance per process, in the installed
 * library libmca_common_ob1x_monitoring, shared by every component that
 * records (pml/ob1x built in; pml, coll and osc "monitoring" interposition
 * components). The library is linked -z nodelete: its counters and the
 * MPI_T performance variables it registers outlive any component that
 * loaded it and was closed.
 *
 * User interface (drop-in for Open MPI 4.1's common/monitoring):
 *   MCA variables pml_monitoring_enable, pml_monitoring_enable_output,
 *   pml_monitoring_filename; MPI_T pvars pml_monitoring_*, osc_monitoring_*,
 *   coll_monitoring_*; per-rank "<filename>.<world rank>.prof" files. See
 *   docs/monitoring.md.
 *
 * Use from a component:
 *
 *   component open/init:   ob1x_mon_init();        (refcounted)
 *   on each send:          if (ob1x_mon_is_on()) ob1x_mon_record_pml_proc(proc, bytes, tag);
 *   component close:       ob1x_mon_finalize();    (the last one dumps)
 *
 * Every ob1x_mon_record_* function may be called whether recording is on
 * or off (it checks), but callers on a hot path test ob1x_mon_is_on()
 * first: one load and one branch, predicted not taken, when off.
 *
 * Peers are kept under their MPI_COMM_WORLD rank. A process of another
 * job (MPI_Comm_spawn, MPI_Comm_connect) is kept under its own key (its
 * process name) and reported apart, never folded into a world rank.
 *
 * Thread safety: recording is exact under MPI_THREAD_MULTIPLE (atomic adds
 * when Open MPI uses threads, plain adds otherwise). init/finalize/flush
 * are called from MPI_Init/MPI_Finalize/MPI_T, which Open MPI serializes.
 */
#ifndef COMMON_OB1X_MONITORING_H
#define COMMON_OB1X_MONITORING_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ompi_config.h"
#include "ompi/communicator/communicator.h"
#include "ompi/group/group.h"
#include "ompi/proc/proc.h"
#include "opal/runtime/opal.h"
#include "opal/util/proc.h"

BEGIN_C_DECLS

/* Bins of the message size histogram: bin 0 counts empty messages, bin
 * k >= 1 messages of 2^(k-1) to 2^k - 1 bytes; the last bin takes all
 * larger ones (same bins as Open MPI's common/monitoring). */
#define OB1X_MON_HIST_BINS 66

/* Values of pml_monitoring_enable (and of the recording state). */
enum {
    OB1X_MON_OFF = 0,      /* nothing recorded */
    OB1X_MON_ALL_TAGS = 1, /* internal (negative) tags counted with the others */
    OB1X_MON_FILTERED = 2  /* >= 2: internal tags kept apart (I lines) */
};

/* Values of pml_monitoring_enable_output / the "where" of ob1x_mon_flush. */
enum {
    OB1X_MON_OUT_NONE = 0,
    OB1X_MON_OUT_STDOUT = 1,
    OB1X_MON_OUT_STDERR = 2,
    OB1X_MON_OUT_FILE = 3 /* >= 3: "<filename>.<world rank>.prof" */
};

/* Direction of a one-sided transfer, seen from the calling process. */
typedef enum { OB1X_MON_OSC_SENT = 0, OB1X_MON_OSC_RECV = 1 } ob1x_mon_osc_dir_t;

/* Classes of collective operations, counted per communicator. */
typedef enum {
    OB1X_MON_O2A = 0, /* one to all: bcast, scatter(v) at the root */
    OB1X_MON_A2O = 1, /* all to one: gather(v), reduce at the root */
    OB1X_MON_A2A = 2  /* all to all: allreduce, alltoall(v,w), barrier, scan... */
} ob1x_mon_coll_class_t;
#define OB1X_MON_COLL_CLASSES 3

/* Per-communicator collective data; opaque, owned by the engine (kept
 * after the communicator is freed until it has been dumped once). */
typedef struct ob1x_mon_coll_data ob1x_mon_coll_data_t;

/* --------------------------------------------------------------------------
 * State read on the hot path. Do not write these from outside the engine.
 * -------------------------------------------------------------------------- */

/* Current recording state: 0 = not recording; else the enable mode (1, 2)
 * in the bits of OB1X_MON_MODE, with OB1X_MON_THREADS set when Open MPI
 * runs threads (counts are then atomic). Recording is on after
 * ob1x_mon_init when pml_monitoring_enable is, and follows MPI_T
 * start/stop of the monitoring pvars. One word, so that a record tests
 * everything it needs with the load that found recording on. */
extern int ob1x_mon_state;
#define OB1X_MON_MODE 0xff
/* The sign bit, as an internal tag's: one test of (tag | state) >= 0 tells
 * a one-thread record of an external tag (pml/ob1x's staging). */
#define OB1X_MON_THREADS INT_MIN

/* Starts (when pml_monitoring_enable is not 0) or stops recording. */
void ob1x_mon_set_recording(bool on);

/* True when messages are being recorded now. One load and one branch. */
static inline bool ob1x_mon_is_on(void)
{
    return __builtin_expect(0 != ob1x_mon_state, 0);
}

/* True when internal tags (< 0) are counted apart (enable >= 2). */
static inline bool ob1x_mon_filters_internal(void)
{
    return (ob1x_mon_state & OB1X_MON_MODE) >= OB1X_MON_FILTERED;
}

/* --------------------------------------------------------------------------
 * Life cycle
 * -------------------------------------------------------------------------- */

/* Registers the MCA variables (once per process; they stay known for the
 * whole run, whichever PML is chosen) and reads them. Returns OMPI_SUCCESS
 * whether monitoring is enabled or not: callers then test
 * ob1x_mon_enabled(). Refcounted: every successful call is matched by one
 * ob1x_mon_finalize(). */
int ob1x_mon_init(void);

/* Drops one reference; the last one dumps the data as
 * pml_monitoring_enable_output asks (unless MPI_T drove the monitoring)
 * and frees the per-peer state. The MPI_T pvars stay registered and read
 * zero afterwards. */
void ob1x_mon_finalize(void);

/* The configured mode (pml_monitoring_enable), whatever MPI_T did since:
 * 0 when monitoring is off for this run. */
int ob1x_mon_enabled(void);

/* Registers the MCA variables and the MPI_T performance variables, if not
 * done yet (ob1x_mon_init does it too). For ob1x's pml/monitoring, from its
 * register function, so that they are known (ompi_info, MPI_T) whichever
 * PML runs. pml/ob1x does not call it at register time: when Open MPI's
 * own pml/monitoring is in the component path too (PML left to Open MPI's
 * choice), both would register the same names, which crashed
 * mca_base_var_finalize; ob1x registers them when it is selected. */
int ob1x_mon_register(void);

/* A PML that records into the engine by itself (pml/ob1x) says so when it
 * is enabled; a pml/monitoring interposition component then stands aside
 * (no double counting). */
void ob1x_mon_set_pml_records_itself(bool yes);
bool ob1x_mon_pml_records_itself(void);

/* A PML that keeps some counts of its own before handing them over
 * (pml/ob1x stages receive and send counts in its peer slots: an add or
 * two per message, no lookup) registers the function that adds them to
 * the engine's counters (ob1x_mon_count_recvs, ob1x_mon_count_sends). The
 * engine calls it before every read (MPI_T, ob1x_mon_get_counts), dump and
 * reset. NULL unregisters. */
typedef void (*ob1x_mon_settle_fn_t)(void);
void ob1x_mon_set_settle(ob1x_mon_settle_fn_t fn);

/* A word of the caller's that the engine keeps equal to ob1x_mon_state
 * from now on (one per process; NULL stops it): a component testing a
 * word of its own pays one load per test where ob1x_mon_state, in
 * another shared object, costs two (through the GOT). pml/ob1x's hot
 * paths test theirs. */
void ob1x_mon_set_state_mirror(int *word);

/* The same for a word that follows ob1x_mon_state only while receive-side
 * counts are wanted (pml_monitoring_count_receives; OB1X_MON_OFF
 * otherwise): what pml/ob1x's receive path tests, so that receives cost
 * nothing until something will show them. */
void ob1x_mon_set_recv_state_mirror(int *word);

/* pml_monitoring_count_receives: auto, no (0), yes (1). */
#define OB1X_MON_RECV_AUTO (-1)

/* Receive-side counts will be shown (a dump, a handle of a receive
 * variable or of the flush variable): count them from now on, unless
 * pml_monitoring_count_receives is no. */
void ob1x_mon_want_receives(void);

/* --------------------------------------------------------------------------
 * Recording. "bytes" is the message's packed size (what the PML sends).
 * -------------------------------------------------------------------------- */

/* A point-to-point message sent to proc with tag (tags < 0 are internal:
 * collectives over point-to-point, communicator management). Also counts
 * the size in the peer's histogram. */
void ob1x_mon_record_pml_proc(const ompi_proc_t *proc, size_t bytes, int tag);

/* Same, the peer given as its rank in group (e.g. comm->c_remote_group). */
void ob1x_mon_record_pml(ompi_group_t *group, int rank, size_t bytes, int tag);

/* A point-to-point message received from proc (receiver side, beyond
 * stock, which counts only at the sender). */
void ob1x_mon_record_pml_recv_proc(const ompi_proc_t *proc, size_t bytes, int tag);

/* Same, the peer as its rank in group. */
void ob1x_mon_record_pml_recv(ompi_group_t *group, int rank, size_t bytes, int tag);

/* A one-sided transfer with the peer, seen from the origin: SENT = data
 * leaving this process (put, accumulate), RECV = data arriving (get,
 * fetched results). Stock osc/monitoring records a get as a 0-byte SENT
 * (the request) plus a RECV of the data; do the same for identical counts. */
void ob1x_mon_record_osc(ompi_group_t *group, int rank, size_t bytes, ob1x_mon_osc_dir_t dir);
void ob1x_mon_record_osc_proc(const ompi_proc_t *proc, size_t bytes, ob1x_mon_osc_dir_t dir);

/* Data a collective sends to the peer (after its decomposition into
 * point-to-point, as a coll interposition component sees it). */
void ob1x_mon_record_coll(ompi_group_t *group, int rank, size_t bytes);
void ob1x_mon_record_coll_proc(const ompi_proc_t *proc, size_t bytes);

/* --------------------------------------------------------------------------
 * Cached counters: the fast path for a PML that records by itself
 * -------------------------------------------------------------------------- */

struct ob1x_mon_counts;

/* The counters of a peer (allocated on first use), for a caller that keeps
 * the address per peer and counts with ob1x_mon_count_send/recv: no lookup
 * per message. The address stays valid until the last ob1x_mon_finalize
 * (a reset or a flush does not move it). NULL only when out of memory. */
struct ob1x_mon_counts *ob1x_mon_peer_counters(opal_process_name_t name);

/* --------------------------------------------------------------------------
 * Per-communicator collective classes (D/O2A/A2O/A2A lines, coll pvars)
 * -------------------------------------------------------------------------- */

/* Creates the data of comm (call when a coll module is enabled on it).
 * Returns NULL only when out of memory; the record/release calls accept
 * NULL and do nothing. */
ob1x_mon_coll_data_t *ob1x_mon_coll_new(ompi_communicator_t *comm);

/* The communicator is going away: its name and member list are kept so
 * that the next dump still reports it; the data is freed after that. */
void ob1x_mon_coll_release(ob1x_mon_coll_data_t *data);

/* One collective of class cls moving bytes (total for the operation, at
 * this process). */
void ob1x_mon_coll_record(ob1x_mon_coll_data_t *data, ob1x_mon_coll_class_t cls, size_t bytes);

/* --------------------------------------------------------------------------
 * Peers
 * -------------------------------------------------------------------------- */

/* Key under which a peer is kept. For a process of this job (same jobid
 * as MPI_COMM_WORLD), its MPI_COMM_WORLD rank, returned as is (>= 0).
 * For another job's process, -1 is returned and *name is its process
 * name (jobid, vpid), under which it is counted. */
int ob1x_mon_world_rank_of_name(opal_process_name_t name);

/* The MPI_COMM_WORLD rank of rank in group, or -1 for a process of
 * another job. */
int ob1x_mon_world_rank(ompi_group_t *group, int rank);

/* This process's MPI_COMM_WORLD rank and the size of MPI_COMM_WORLD. */
int ob1x_mon_my_world_rank(void);
int ob1x_mon_world_size(void);

/* --------------------------------------------------------------------------
 * Reading, dumping, resetting
 * -------------------------------------------------------------------------- */

/* What the engine holds for one peer. */
typedef struct ob1x_mon_counts {
    uint64_t pml_count, pml_bytes;           /* sent, external tags (all tags at enable 1) */
    uint64_t pml_int_count, pml_int_bytes;   /* sent, internal tags (enable >= 2) */
    uint64_t recv_count, recv_bytes;         /* received, external tags (all at enable 1) */
    uint64_t recv_int_count, recv_int_bytes; /* received, internal tags (enable >= 2) */
    uint64_t osc_sent_count, osc_sent_bytes;
    uint64_t osc_recv_count, osc_recv_bytes;
    uint64_t coll_count, coll_bytes;
    uint64_t hist[OB1X_MON_HIST_BINS]; /* sizes of the messages sent, all tags */
} ob1x_mon_counts_t;

/* Histogram bin of a size. Bin 0: empty; bin k: 2^(k-1) <= bytes < 2^k.
 * The index of the highest bit of (2 * bytes + 1): one lea and one bsr, no
 * branch (sizes of 2^63 bytes and more, which no message has, would wrap). */
static inline int ob1x_mon_hist_bin(size_t bytes)
{
    return 63 ^ __builtin_clzll(((unsigned long long) bytes << 1) | 1);
}

/* Adds 1 to pair[0] and bytes to pair[1] (a count and its bytes), one
 * thread: two scalar adds (merged into one vector add, what the compiler
 * does unasked where nothing follows, they cost five more instructions). */
static inline void ob1x_mon_add_pair(uint64_t pair[2], size_t bytes)
{
    pair[0] += 1;
    __asm__ __volatile__("" ::: "memory");
    pair[1] += bytes;
}

/* Adds 1 to *count and bytes to count[1] (a count and its bytes are
 * neighbours in ob1x_mon_counts_t), and 1 to *bin when bin is not NULL;
 * atomic only when Open MPI runs threads (a locked add would cost as much
 * as the rest of a small send when one thread runs), one test of the
 * recording state for all of them. */
static inline void ob1x_mon_add_msg(uint64_t *count, size_t bytes, uint64_t *bin)
{
    if (OPAL_UNLIKELY(ob1x_mon_state & OB1X_MON_THREADS)) {
        (void) __atomic_add_fetch(count, 1, __ATOMIC_RELAXED);
        (void) __atomic_add_fetch(count + 1, bytes, __ATOMIC_RELAXED);
        if (NULL != bin) {
            (void) __atomic_add_fetch(bin, 1, __ATOMIC_RELAXED);
        }
        return;
    }
    ob1x_mon_add_pair(count, bytes);
    if (NULL != bin) {
        *bin += 1;
    }
}

/* One message sent to the peer whose counters are c (what
 * ob1x_mon_record_pml does after finding them). Call only while
 * ob1x_mon_is_on(). */
static inline void ob1x_mon_count_send(ob1x_mon_counts_t *c, size_t bytes, int tag)
{
    ob1x_mon_add_msg(tag < 0 && ob1x_mon_filters_internal() ? &c->pml_int_count : &c->pml_count,
                     bytes, &c->hist[ob1x_mon_hist_bin(bytes)]);
}

/* One message received from the peer whose counters are c. */
static inline void ob1x_mon_count_recv(ob1x_mon_counts_t *c, size_t bytes, int tag)
{
    ob1x_mon_add_msg(tag < 0 && ob1x_mon_filters_internal() ? &c->recv_int_count : &c->recv_count,
                     bytes, NULL);
}

/* n messages of `bytes` bytes in all received from the peer whose
 * counters are c, external tags (all tags at enable 1): for a settle
 * function. */
static inline void ob1x_mon_count_recvs(ob1x_mon_counts_t *c, uint64_t n, uint64_t bytes)
{
    c->recv_count += n;
    c->recv_bytes += bytes;
}

/* n messages of `bytes` bytes in all, all of histogram bin `bin`, sent to
 * the peer whose counters are c, external tags: for a settle function. */
static inline void ob1x_mon_count_sends(ob1x_mon_counts_t *c, uint64_t n, uint64_t bytes, int bin)
{
    c->pml_count += n;
    c->pml_bytes += bytes;
    c->hist[bin] += n;
}

/* Copies the counts of world rank peer into *out (zeros for a peer never
 * talked to). Returns OMPI_ERR_BAD_PARAM for a rank out of range. */
int ob1x_mon_get_counts(int world_rank, ob1x_mon_counts_t *out);

/* Writes everything recorded since the last reset, in Open MPI's .prof
 * format, to stdout (where = 1), stderr (2) or "<filename>.<world
 * rank>.prof" (>= 3), then resets. Does nothing when recording is stopped
 * or where = 0. Returns OMPI_SUCCESS or the error (file not writable,
 * shown to the user once). */
int ob1x_mon_flush(int where, const char *filename);

/* Writes the .prof text of the current counts to f (no reset). */
void ob1x_mon_dump(FILE *f);

/* Zeros every counter (per peer and per communicator). */
void ob1x_mon_reset(void);

END_C_DECLS

#endif /* COMMON_OB1X_MONITORING_H */

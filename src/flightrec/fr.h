/*
 * fr.h - PyTorch Flight Recorder (FR) dumps: one rank's ring buffer of
 * collectives and point-to-point ops read into a model (dump.c), the dumps
 * of a job matched across ranks per process group and the hang explained
 * (match.c), printed (fr_print.c), packed for MPI (fr_pack.c) and joined
 * with the Kineto traces of the same job (fr_join.c).
 *
 * Formats (docs/formats.md "Flight Recorder dumps"): c10d's pickle
 * (ProcessGroupNCCL's dump on timeout, _dump_nccl_trace(), _dump_fr_trace();
 * versions 2.x to 2.10), c10d's JSON (_dump_nccl_trace_json(),
 * _dump_fr_trace_json()) and TorchComms' FlightRecorderHook JSON ("2.10").
 * Both encodings are read into one value tree (fv.h) and the model is built
 * from it, so they give the same model.
 *
 * Ownership.  A struct fr_dump owns everything it points to (one arena and
 * one string table);
 * fr_dump_free releases it.  A struct fr_result owns its strings and
 * arrays (plain allocations: it is also filled by the analysis JSON
 * reader); fr_result_release frees them.  struct fr_run (the dumps of a job
 * and their result) is what struct analysis points to.
 */
#ifndef AORTA_FLIGHTREC_FR_H
#define AORTA_FLIGHTREC_FR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"
#include "base/strtab.h"

/* ---- one rank's dump --------------------------------------------------------- */

enum fr_state { FR_SCHEDULED, FR_STARTED, FR_COMPLETED };

struct fr_frame {
	const char *name, *file;
	int64_t line;
};

struct fr_entry {
	int64_t record_id, pg_id;       /* pg_id: the rank's own number of the group (pg_status key) */
	int64_t seq, p2p_seq, op_id;    /* collective_seq_id, p2p_seq_id, op_id */
	const char *pg_name, *pg_desc;  /* process_group: (group id, description) */
	const char *profiling_name;     /* "nccl:all_reduce", "nccl:send 0->3" */
	const char *op;                 /* the operation: "all_reduce", "send" */
	int32_t src, dst;               /* point to point: group ranks from the name, -1 unknown */
	uint8_t state;                  /* enum fr_state as the dump says */
	uint8_t retired, p2p;           /* p2p: is_p2p, or a send/recv by name */
	uint8_t done;                   /* completed, as the dump can tell (dump.c) */
	int64_t created_ns, started_ns, completed_ns; /* 0: none */
	double duration_ms;             /* NaN: none */
	int64_t timeout_ms;             /* -1: none */
	const char *in_sizes, *out_sizes;   /* "[[4096, 1, 5120]]" */
	const char *in_dtypes, *out_dtypes; /* "BFloat16", "Float, Float" */
	uint64_t in_numel, out_numel;
	const struct fr_frame *frames;
	uint32_t nframes;
	const char *thread_name;
	size_t off;                     /* byte offset of the entry in the file */
};

struct fr_pg {                          /* a pg_config item */
	const char *key, *name, *desc;
	int32_t *ranks;                 /* global ranks as listed, NULL when not a list */
	size_t nranks;
};

struct fr_pgstat {                      /* a pg_status item (the group's rank-local pg_id) */
	int64_t pg_id, enqueued, started, completed;
};

struct fr_dump {
	const char *path;
	int rank;                       /* -1 until known */
	const char *rank_from;          /* static: how the rank was found (docs/formats.md) */
	int name_rank;                  /* the number ending the file name, -1 none */
	const char *version, *comm_lib;
	int version_major, version_minor;
	struct fr_pg *pgs;
	size_t npgs;
	struct fr_pgstat *st;
	size_t nst;
	struct fr_entry *e;             /* in the dump's order (oldest first) */
	size_t ne;
	int tracks_state;               /* some entry is started or completed (timing events) */
	int filtered;                   /* record ids skip: only active entries were dumped */
	int wrapped;                    /* the oldest record id is not 0: the ring wrapped */
	int global_seq;                 /* collective_seq_id runs over all groups (TorchComms) */
	const char *format;             /* "fr-pickle", "fr-json" */
	size_t bytes;
	struct arena ar;
	struct strtab strs;             /* its strings, interned */
};

/* Reads a dump from buf[0..len) (pickle when it starts with PROTO, else
 * JSON); path names it in messages and in d->path.  On bad input
 * AORTA_EINPUT with e naming the file, the byte offset and what was
 * expected ("entries[3].collective_seq_id: expected an int, got str");
 * *out is then NULL.  Thread-safe. */
enum aorta_status fr_dump_mem(const char *path, const void *buf, size_t len, struct fr_dump **out,
			      struct aorta_error *e);
/* The same from a file (or "-", a FIFO; gzip and zstd decompressed). */
enum aorta_status fr_dump_read(const char *path, struct fr_dump **out, struct aorta_error *e);
void fr_dump_free(struct fr_dump *d);

/* Whether the first bytes of a file look like a dump: 1 pickle, 2 JSON. */
int fr_sniff(const char *buf, size_t len);

/* ---- the job's diagnosis ------------------------------------------------------ */

struct fr_last {                        /* a culprit rank's last completed op in a group */
	int rank;
	char *profiling_name;           /* NULL: not in its buffer */
	int64_t seq, p2p_seq;           /* -1: none */
	int64_t enqueued;               /* its pg_status for the group: the last number enqueued, -1 unknown */
	char *source;                   /* "entry", "pg_status", "none" */
	char *where;                    /* its first frame outside torch ("train.py:88"), or NULL */
	char **frames;                  /* "name (file:line)", innermost first */
	size_t nframes;
};

struct fr_div {                         /* a group's first divergent op */
	int64_t seq, p2p_seq;           /* -1: null */
	char *profiling_name;
	int32_t *missing;               /* members that never enqueued it (or left no dump) */
	size_t nmissing;
	const char *mismatch;           /* "missing", "size", "dtype", "op", "state"; NULL: none */
	int32_t *odd;                   /* size/dtype/op/state: the members that differ */
	size_t nodd;
	int32_t *behind;                /* enqueued it but completed less than the others */
	size_t nbehind;
	char *detail;                   /* what differs ("[[8]] vs [[4]]"), NULL */
	int64_t created_ns;             /* when the waiting members enqueued it (ordering) */
	int32_t src, dst;               /* point to point: global ranks, -1 */
	int completed;                  /* another op/size/dtype, yet every member completed it */
};

struct fr_group_res {
	char *pg_id, *pg_name;          /* pg_config key (or process_group id); its description */
	int32_t *ranks;
	size_t nranks;
	struct fr_div *div;             /* NULL: every member agrees */
	struct fr_last *last;           /* its culprit ranks' last completed ops */
	size_t nlast;
	uint64_t calls;                 /* collectives and p2p ops of the group in the buffers, all ranks */
	int stalled;                    /* every member called everything, some op did not complete */
};

struct fr_join {                        /* FR entries against the Kineto collectives of the same job */
	uint64_t ranks, compared, agree;
	uint64_t fr_only, trace_only;   /* in one account only, where the other covers that stretch */
	uint64_t disagree;
	char *first;                    /* the first disagreement, said; NULL */
};

struct fr_culprit {                     /* a rank the hang starts from */
	int rank;
	char *why;                      /* "left no dump", "idle: ...", "stuck: ..." */
};

struct fr_result {
	char *verdict;                  /* the one line */
	char *kind;                     /* "hang", "stall", "incomplete", "in flight", "healthy" */
	struct fr_culprit *culprits;    /* ranks that are not waiting on another rank, sorted */
	size_t nculprits;
	struct fr_group_res *groups;    /* divergent first (verdict's group first), then the rest */
	size_t ngroups;
	int32_t *no_dump;               /* ranks of the job that left no dump */
	size_t nno_dump;
	uint64_t dumps;
	char *versions;                 /* "2.9" or "2.9, 2.10" */
	int has_join;
	struct fr_join join;
};

struct fr_run {
	struct fr_dump **d;             /* sorted by rank */
	size_t n, cap;
	struct fr_result res;
	int done;                       /* res computed */
};

/* Adds a dump (ownership moves to r). */
void fr_run_add(struct fr_run *r, struct fr_dump *d);
/* Orders the dumps by rank, numbers those without one (the next free
 * numbers, in path order) and refuses two dumps of one rank
 * (AORTA_EINPUT naming both files).  Warnings (a file name disagreeing
 * with the dump's own rank) go to stderr. */
enum aorta_status fr_run_ranks(struct fr_run *r, struct aorta_error *e);
/* Matches the dumps across ranks per group and fills r->res (match.c). */
void fr_run_diagnose(struct fr_run *r);
void fr_run_free(struct fr_run *r);
void fr_result_release(struct fr_result *res);

/* The hang section of analyze's output: the verdict first, then each
 * divergent group, the culprits' last ops and the ranks without a dump. */
void fr_print(FILE *f, const struct fr_run *r);

/* ---- MPI: dumps as bytes (fr_pack.c) ----------------------------------------- */
struct bytes;
void fr_dump_pack(const struct fr_dump *d, struct bytes *b);
/* AORTA_EINTERNAL on a short or malformed pack. */
enum aorta_status fr_dump_unpack(const char *p, size_t n, size_t *off, struct fr_dump **out,
				 struct aorta_error *e);
/* Whether the pack at p[off..n) is a dump (else a rank, analysis_io.h). */
int fr_pack_is_dump(const char *p, size_t n, size_t off);

/* ---- the join with Kineto traces of the same job (fr_join.c) ------------------- */
struct analysis;
/* Fills r->res.join from the ranks of a that r has dumps of (has_join set
 * when at least one rank is in both). */
void fr_join_traces(struct fr_run *r, const struct analysis *a);

/* ---- formatting helpers shared by the printers ---------------------------------- */
/* "0-7", "0, 4, 8, 12" (written into buf, cap bytes; "..." when cut). */
const char *fr_ranks_str(const int32_t *v, size_t n, char *buf, size_t cap);

#endif

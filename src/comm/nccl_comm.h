/*
 * nccl_comm.h - the NCCL backend of comm.h: one GPU per rank, collectives
 * on device buffers, enqueued on the streams the trainer names.
 *
 * Design.  A rank owns three NCCL communicators, one per process group of
 * comm.h: world from ncclCommInitRankConfig over a shared unique id, node
 * and cross from ncclCommSplit of world (colour rank / node_size and
 * rank % node_size, key rank, so group ranks follow world ranks).  Each
 * group is its own communicator even when it has the same members as
 * world (one node): comm.h only promises the same order per group, and two
 * groups sharing one NCCL communicator would deadlock when ranks interleave
 * them differently.
 *
 * Communicators are non-blocking (ncclConfig_t.blocking = 0): every NCCL
 * call returns at once and the state is polled with ncclCommGetAsyncError
 * against the comm's timeout, so neither creation nor a collective whose
 * lazy connection setup waits for a missing peer can hang the host.  A
 * collective is enqueued on c->stream[coll] (comm_set_stream; the backend's
 * own non-blocking stream otherwise), then a completion event is recorded
 * after it; comm_req.impl holds that event (from a per-comm pool, so no
 * allocation per collective).  test = ncclCommGetAsyncError (an error names
 * the rank, the collective, the group and the phase) + cudaEventQuery;
 * wait_stream = cudaStreamWaitEvent (no host block).  A barrier is an
 * all-reduce of one float in a scratch buffer.  Buffers are device
 * pointers on the rank's device.  Reduce-scatter and all-reduce of
 * COMM_BF16 (comm.h's _ex calls) pass ncclBfloat16 (NCCL >= 2.10): NCCL
 * sums two bf16 values in fp32 and rounds once per reduction step.
 *
 * Abort.  comm_nccl_abort calls ncclCommAbort on the three communicators,
 * which makes NCCL kernels stuck waiting for a peer return; it never exits
 * (ops->abort is the same, and comm_abort then exits).  It is the one call
 * that may come from another thread (a launcher's watchdog while the owner
 * thread is blocked): every NCCL call of a comm runs under the comm's
 * mutex, released between polls, and later calls fail with "communicator
 * aborted".  opts->abort_check, when set, is polled by every wait (creation
 * included) so that a failure on another rank ends this rank's waits at
 * once: it returns -1, or the rank that failed.
 *
 * Settings (comm_nccl_opts_from_env): NCCL_MIN_CTAS / NCCL_MAX_CTAS (or
 * their older names NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS: one channel
 * runs in one CTA) and NCCL_CGA_CLUSTER_SIZE go into ncclConfig_t
 * minCTAs / maxCTAs / cgaClusterSize; NCCL also reads them itself.  The
 * algorithm and protocol are NCCL's own variables, NCCL_ALGO (Ring, Tree,
 * CollNet, ...) and NCCL_PROTO (Simple, LL, LL128), read by NCCL at
 * communicator creation; aorta does not wrap them.  NCCL_CTA_POLICY
 * (default | efficiency | zero, or NCCL's numbers 0 | 1 | 2) goes into
 * ncclConfig_t.CTAPolicy (NCCL >= 2.27; comm_nccl_env_defaults rewrites a
 * name as its number, the form NCCL reads itself).  With zero, comm_sym_alloc
 * gives ncclMemAlloc memory registered as a symmetric window
 * (ncclCommWindowRegister, NCCL_WIN_COLL_SYMMETRIC) on the group, and an
 * all-gather whose send and receive buffers both lie in such windows runs on
 * the copy engines without any CTA (NCCL >= 2.28, one node, NVLink peers);
 * other collectives and unregistered buffers keep NCCL's kernels.  The wait timeout is
 * AORTA_COMM_TIMEOUT_MS, else HANG_TIMEOUT (seconds, upstream's hang
 * watcher), else comm.h's 300 s.  comm_nccl_env_defaults sets
 * NCCL_NVLS_ENABLE=0 unless the user set it: NVLink SHARP (multicast
 * objects) stays off by default.
 *
 * RCCL keeps NCCL's names, so a HIP build includes rccl.h and nothing else
 * changes.  GPU builds only (libaorta-gpu.so and the GPU tests).
 */
#ifndef AORTA_COMM_NCCL_COMM_H
#define AORTA_COMM_NCCL_COMM_H

#include "gpu/ccl.h"

#include "comm/comm.h"

struct comm_nccl_opts {
	int min_ctas, max_ctas;     /* 0: NCCL's choice */
	int cga_cluster_size;       /* -1: NCCL's choice */
	int cta_policy;             /* -1: NCCL's choice; else NCCL_CTA_POLICY_*; -2: bad setting */
	long long timeout_ms;       /* 0: comm.h's default */
	/* Polled by every wait; returns -1, or the rank that failed (the
	 * wait then fails with "rank R failed").  Called from the thread that
	 * drives the comm.  NULL: none. */
	int (*abort_check)(void *arg);
	void *abort_arg;
};

/* Zeroes o and fills it from the environment (see the top of the file). */
void comm_nccl_opts_from_env(struct comm_nccl_opts *o);

/* Sets NCCL_NVLS_ENABLE=0 when unset and rewrites NCCL_CTA_POLICY=default |
 * efficiency | zero as 0 | 1 | 2.  Call before any thread starts
 * (setenv is not thread-safe) and before the first communicator. */
void comm_nccl_env_defaults(void);

/* A new unique id (one rank makes it; every rank of the job passes the
 * same bytes to comm_nccl_create_rank: shared in memory or broadcast). */
enum aorta_status comm_nccl_unique_id(ncclUniqueId *id, struct aorta_error *e);

/* Rank 0's *id to every rank of c's world over c (a broadcast through a
 * small device buffer, as floats with the bytes kept): for ranks that are
 * processes.  Threads of one process share the id in memory instead. */
enum aorta_status comm_nccl_share_id(struct comm *c, ncclUniqueId *id, struct aorta_error *e);

/* A plain blocking NCCL communicator of its own, apart from a struct
 * comm's non-blocking ones: for code that issues NCCL calls itself on
 * streams it owns (the hwq workloads, tune-tp's operators).  Rank `rank`
 * of `size` on the current device, from the id every rank shares.  o NULL:
 * NCCL's defaults (ncclCommInitRank); else ncclCommInitRankConfig with o's
 * CTA limits, CGA cluster size and CTA policy (an SM-limited communicator:
 * maxCTAs = the SMs a collective may use; timeout and abort_check unused).
 * comm_nccl_raw_close: abort 0 finalizes and destroys, 1 aborts (a peer
 * failed or work may never finish); NULL is fine.  The same close in two
 * halves, for owners that finalize every rank at once and then destroy one
 * rank after another: comm_nccl_raw_finalize (ncclCommFinalize, which the
 * communicator's ranks call together), then comm_nccl_raw_destroy. */
enum aorta_status comm_nccl_raw_open(ncclComm_t *nc, int size, const ncclUniqueId *id, int rank,
				     const struct comm_nccl_opts *o, struct aorta_error *e);
void comm_nccl_raw_close(ncclComm_t nc, int abort);
void comm_nccl_raw_finalize(ncclComm_t nc);
void comm_nccl_raw_destroy(ncclComm_t nc);

/* Rank `rank` of `size` on GPU `device` (made current for the calling
 * thread), node groups of node_size consecutive ranks (must divide size).
 * Collective over the job: every rank calls it with the same id, size and
 * node_size.  o may be NULL (defaults from nothing).  On failure nothing
 * is left allocated and e names the rank and the NCCL call. */
enum aorta_status comm_nccl_create_rank(int rank, int size, int node_size, const ncclUniqueId *id, int device,
					const struct comm_nccl_opts *o, struct comm **out, struct aorta_error *e);

/* ncclCommAbort on every group of c (idempotent, thread-safe, never
 * exits).  c must still be destroyed with comm_destroy. */
void comm_nccl_abort(struct comm *c);

/* 1 when c is an NCCL comm. */
int comm_is_nccl(const struct comm *c);

/* "nccl" (NCCL's choice), "default", "efficiency", "zero"; "bad" for a
 * setting creation rejects. */
const char *comm_nccl_cta_policy_name(int policy);

/* "nccl 2.28.9, rank 0 of 2 (node 2), device 0, min_ctas 0, max_ctas 0,
 * cga -1, cta_policy nccl, timeout 300000 ms" for logs. */
void comm_nccl_describe(const struct comm *c, char *buf, size_t len);

#endif

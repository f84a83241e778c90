/*
 * comm.h - communicators: the collectives that FSDP and DDP need, behind
 * one backend-neutral interface.
 *
 * Design.  A struct comm is one process's membership in a job of `size`
 * ranks, split into three process groups:
 *   world      all ranks;
 *   node       the ranks of this rank's node (ranks node_size*k ..
 *              node_size*(k+1)-1): FSDP hybrid_shard shards within it;
 *   cross      the ranks with the same position on every node (rank %
 *              node_size): hybrid_shard all-reduces the shards across it.
 * Which group a collective runs on is the caller's choice (dist.h's plan
 * says which group shards and which replicates).
 *
 * Collectives work on float32 buffers and are asynchronous: each call
 * starts the operation and fills a caller-owned struct comm_req, and
 * comm_wait completes it.  Passing req == NULL makes the call blocking.
 * Every rank of a group must start the same collectives on that group in
 * the same order (as MPI and NCCL require); several may be in flight.
 * Buffers must not be touched until the wait returns.
 *
 * Reduce-scatter and all-reduce also take bf16 (the _ex variants with
 * COMM_BF16: the mixed-precision reduce dtype of fsdp.reduce_dtype, as
 * PyTorch FSDP's MixedPrecision(reduce_dtype=torch.bfloat16) and DDP's
 * bf16_compress_hook): the buffers hold uint16 bf16 values, half the
 * bytes on the wire.  The communicator counts every collective's bytes at
 * its element size (comm.nbytes).
 *
 * bf16 semantics.  A bf16 value is the upper 16 bits of an IEEE float;
 * comm_f32_to_bf16 rounds to nearest, ties to even, as
 * __float2bfloat16_rn (a NaN stays a quiet NaN).  NCCL's bf16 sum (its
 * FuncSum on __nv_bfloat16: __hadd on sm_80+) gives the correctly rounded
 * sum of two bf16 values, which is their fp32 sum (exact, or too far from
 * a bf16 tie to matter) rounded once; its ring algorithm accumulates in
 * bf16, one such step per hop, so a sum over n ranks is rounded n-1
 * times, in the ring's order (a tree likewise, in the tree's order).  The CPU
 * backends do the same: each reduction step adds two bf16 operands in
 * fp32 and rounds once (comm_bf16_sum_into: the threads backend folds
 * ranks 0, 1, 2, ... in order; MPI applies the same function as a
 * user-defined op in its own order).  For 2 ranks that is bf16(a + b)
 * everywhere, so the results agree exactly with NCCL; for more ranks
 * the order of the roundings differs, within bf16 tolerance.
 *
 * A wait polls the backend (ops->test) against the communicator's timeout
 * (comm_set_timeout_ms, default 300 s), so a hung collective becomes an
 * error naming the rank, the phase and the collective instead of a hang:
 *   "rank 1: comm timeout after 300000 ms in all_gather (group node, 1024
 *    floats) at 'step 3 forward group 2'"
 * After a timeout or a backend error the job is in an unknown state: the
 * caller reports the error and calls comm_abort, which ends every rank
 * (MPI_Abort for MPI).  Library code never exits by itself.
 *
 * Backends: comm_local_create (one process, world 1, no dependency: lets
 * the distributed executor run in the plain build and its unit tests),
 * comm_threads_create (world N as N comms in one process, one thread
 * driving each: the executor at world 2 and 4 in the unit tests, no MPI),
 * comm_mpi_create (comm_mpi.c, Open MPI on the CPU; built only by `make
 * mpi-tests` with mpicc).  An NCCL backend fills the same struct comm_ops.
 *
 * Ownership: the create functions allocate the comm; comm_destroy frees it
 * (the backend does not finalize MPI: the program that initialized MPI
 * finalizes it).  A comm_req holds backend state from start to wait, so
 * every started request must be waited (there is no cancel).  Not
 * thread-safe: one thread drives a comm.
 */
#ifndef AORTA_COMM_COMM_H
#define AORTA_COMM_COMM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/error.h"

enum comm_coll { COMM_ALL_GATHER = 0, COMM_REDUCE_SCATTER, COMM_ALL_REDUCE, COMM_BROADCAST, COMM_BARRIER };
enum comm_pg { COMM_PG_WORLD = 0, COMM_PG_NODE, COMM_PG_CROSS, COMM_PG_COUNT };
/* Element types: all collectives take COMM_F32; reduce-scatter and
 * all-reduce also COMM_BF16 (uint16 buffers, see "bf16 semantics"). */
enum comm_dtype { COMM_F32 = 0, COMM_BF16 };

struct comm;

struct comm_group {
	int rank, size;           /* this process's rank in the group, group size */
	enum comm_pg id;
	struct comm *comm;        /* owner */
	void *impl;               /* backend's handle (MPI: a malloc'd MPI_Comm) */
};

/* One collective in flight.  Caller-owned; the backend keeps its state in
 * impl from start to wait. */
struct comm_req {
	int active;
	enum comm_coll coll;
	struct comm_group *group;
	size_t count;             /* elements per rank (all_gather, reduce_scatter) or total */
	enum comm_dtype dtype;
	char phase[64];           /* what the caller was doing, for messages */
	void *impl;
};

struct comm_ops {
	const char *name;
	/* Starts one collective on g (see the comm_* wrappers for the buffer
	 * contracts); the element type is r->dtype; fills r->impl.  Returns
	 * AORTA_OK or fills e. */
	enum aorta_status (*start)(struct comm_group *g, enum comm_coll c, const void *send, void *recv,
				   size_t count, int root, struct comm_req *r, struct aorta_error *e);
	/* *done = 1 when r has completed (then releases r->impl). */
	enum aorta_status (*test)(struct comm_req *r, int *done, struct aorta_error *e);
	void (*abort)(struct comm *c, int code);
	void (*destroy)(struct comm *c);      /* frees the groups' impl and c->impl */
	/* GPU backends (optional, NULL on the CPU): make the GPU stream
	 * `stream` wait for r without blocking the host (an event the
	 * collective's stream recorded); r stays active until comm_wait. */
	enum aorta_status (*wait_stream)(struct comm_req *r, void *stream, struct aorta_error *e);
	/* GPU backends (optional): symmetric device memory for group g (see
	 * comm_sym_alloc); *p = NULL when the backend does not want it. */
	enum aorta_status (*sym_alloc)(struct comm_group *g, size_t bytes, void **p, void **handle,
				       struct aorta_error *e);
	void (*sym_free)(struct comm_group *g, void *p, void *handle);
};

struct comm {
	const struct comm_ops *ops;
	int rank, size, node_size;
	struct comm_group groups[COMM_PG_COUNT];
	long long timeout_ms;
	long long nstarted[5];   /* collectives started, per enum comm_coll */
	/* bytes of the collectives started, per enum comm_coll: per call
	 * max(send, recv elements) x element size (comm_coll_bytes), the
	 * figure nccl-tests and aorta analyze call the message size */
	long long nbytes[5];
	/* GPU backends: the stream each kind of collective runs on (set by the
	 * caller with comm_set_stream: the trainer's allgather, reducescatter
	 * and allreduce streams), so the recorder brackets it on that stream */
	void *stream[5];
	void *impl;
};

const char *comm_coll_name(enum comm_coll c);
const char *comm_pg_name(enum comm_pg g);
const char *comm_dtype_name(enum comm_dtype t);      /* "fp32", "bf16" */
size_t comm_dtype_size(enum comm_dtype t);           /* 4, 2 */
/* Bytes of one collective of count elements per the wrappers' contract on
 * a group of group_size: all-gather and reduce-scatter move
 * group_size * count elements (recv, resp. send), all-reduce and
 * broadcast count, a barrier 0. */
size_t comm_coll_bytes(enum comm_coll c, enum comm_dtype t, size_t count, int group_size);

/* bf16 conversions (see "bf16 semantics"): round to nearest even. */
static inline uint16_t comm_f32_to_bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40u);  /* NaN: keep it a (quiet) NaN */
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

static inline float comm_bf16_to_f32(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

void comm_f32_to_bf16_n(uint16_t *dst, const float *src, size_t n);
void comm_bf16_to_f32_n(float *dst, const uint16_t *src, size_t n);
/* One reduction step: inout[i] = bf16(f32(inout[i]) + f32(in[i])). */
void comm_bf16_sum_into(uint16_t *inout, const uint16_t *in, size_t n);
static inline struct comm_group *comm_group(struct comm *c, enum comm_pg g)
{
	return &c->groups[g];
}

/* Fills the three groups of c from (rank, size, node_size), impl NULL.
 * For backends.  node_size must divide size (checked by the creators). */
void comm_init_groups(struct comm *c, int rank, int size, int node_size);

/* ---- backends ---- */
/* One process: world, node and cross all have size 1. */
enum aorta_status comm_local_create(struct comm **out, struct aorta_error *e);
/* MPI_COMM_WORLD split into node and cross groups (comm_mpi.c; the caller
 * has called MPI_Init).  node_size 0: the ranks sharing memory with rank 0
 * (MPI_COMM_TYPE_SHARED); otherwise it must divide the world size, which
 * lets one machine emulate several nodes in tests. */
enum aorta_status comm_mpi_create(int node_size, struct comm **out, struct aorta_error *e);
/* World `size` in one process: out[0..size) are the ranks' comms (node
 * groups of node_size consecutive ranks; node_size must divide size), each
 * to be driven by its own thread (a collective completes when every rank
 * of the group has started it; the last one to start computes every
 * rank's result).  Abort ends the process.  Each comm is destroyed on its
 * own (the shared state goes with the last). */
enum aorta_status comm_threads_create(int size, int node_size, struct comm **out, struct aorta_error *e);

void comm_destroy(struct comm *c);     /* NULL is a no-op */
void comm_set_timeout_ms(struct comm *c, long long ms);
/* Prints e (if any) with the rank and ends the job; does not return. */
void comm_abort(struct comm *c, const struct aorta_error *e, int code) __attribute__((noreturn));

/* ---- collectives (req NULL: blocking) ----
 * all_gather:     send[count] from every rank -> recv[size*count], rank k's
 *                 part at recv + k*count; send may be exactly that part
 *                 (in place).
 * reduce_scatter: send[size*count] summed over ranks; this rank's part k =
 *                 rank -> recv[count] (send and recv must not overlap).
 *                 Sum only: the caller scales (by 1/world for a mean).
 * all_reduce:     send[count] summed over ranks -> recv[count] (send ==
 *                 recv is in place).
 * broadcast:      buf[count] of root -> every rank.
 * barrier. */
enum aorta_status comm_all_gather(struct comm_group *g, const float *send, float *recv, size_t count,
				  struct comm_req *req, const char *phase, struct aorta_error *e);
enum aorta_status comm_reduce_scatter(struct comm_group *g, const float *send, float *recv, size_t count,
				      struct comm_req *req, const char *phase, struct aorta_error *e);
enum aorta_status comm_all_reduce(struct comm_group *g, const float *send, float *recv, size_t count,
				  struct comm_req *req, const char *phase, struct aorta_error *e);
/* The same with element type t: count elements of t (uint16 for bf16). */
enum aorta_status comm_reduce_scatter_ex(struct comm_group *g, const void *send, void *recv, size_t count,
					 enum comm_dtype t, struct comm_req *req, const char *phase,
					 struct aorta_error *e);
enum aorta_status comm_all_reduce_ex(struct comm_group *g, const void *send, void *recv, size_t count,
				     enum comm_dtype t, struct comm_req *req, const char *phase,
				     struct aorta_error *e);
enum aorta_status comm_broadcast(struct comm_group *g, float *buf, size_t count, int root,
				 struct comm_req *req, const char *phase, struct aorta_error *e);
enum aorta_status comm_barrier(struct comm_group *g, const char *phase, struct aorta_error *e);

/* GPU backends: the stream a kind of collective is enqueued on. */
void comm_set_stream(struct comm *c, enum comm_coll coll, void *stream);
/* Makes GPU stream `stream` wait for r (no host wait) when the backend can;
 * otherwise completes r on the host like comm_wait.  r must still be
 * completed with comm_wait later when the backend can (it is then quick). */
enum aorta_status comm_wait_stream(struct comm_req *r, void *stream, struct aorta_error *e);

/* Symmetric buffers (GPU backends).  Device memory that the backend
 * registers with group g so that collectives whose buffers all lie in such
 * memory, at the same offset on every rank, can take a cheaper path (NCCL
 * with NCCL_CTA_POLICY=zero: all-gathers by the copy engines, no SMs).
 * Collective over g: every rank calls it in the same order with the same
 * bytes.  *p = NULL (and AORTA_OK) when the backend has nothing better than
 * plain device memory: the caller then allocates as usual.  Free with
 * comm_sym_free(g, p, handle) before the comm is destroyed, in the same order
 * on every rank (also collective); NULL p is a no-op. */
enum aorta_status comm_sym_alloc(struct comm_group *g, size_t bytes, void **p, void **handle,
				 struct aorta_error *e);
void comm_sym_free(struct comm_group *g, void *p, void *handle);

/* Completes r (a no-op when r is not active).  On timeout r stays active
 * (it may be waited again, e.g. by a test) and AORTA_EGPU is returned. */
enum aorta_status comm_wait(struct comm_req *r, struct aorta_error *e);

#endif

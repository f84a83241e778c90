/*
 * tp_gpu.c - the GPU side of `aorta tune-tp` (interface in tp.h): a
 * session of tp worker threads, one per GPU 0..tp-1 of this process, and
 * the overlapped tensor-parallel operators they run, check and time.
 *
 * Session.  tp_gpu_open starts one persistent thread per rank.  Each owns
 * its device's streams (main; comm at the highest priority; send for peer
 * copies; up to three compute streams at the lowest), a cuBLASLt handle
 * with one 32 MiB workspace per stream that runs GEMMs, buffers grown on
 * demand (inputs, outputs, references), events, and its NCCL
 * communicators: a default one (ncclCommInitRank over one unique id) and,
 * created lazily and cached per (num_sm, cga_size) (16 at most, the
 * oldest destroyed first), communicators whose
 * ncclConfig_t.maxCTAs = num_sm, which is how bulk and pipeline limit the
 * collective to num_sm SMs with NCCL's own kernels (no hand-written
 * collective to trust).  Peer access is enabled between every pair, so
 * copy-engine copies and kernels reach the other GPUs' buffers.  The
 * opening thread dispatches jobs (mutex + condition variables); every
 * wait is bounded: the dispatcher waits AORTA_TP_TIMEOUT_S (120 s) and
 * then aborts the NCCL communicators, workers poll their GPU work with
 * gpuEventQuery, and the host-side waits for a peer's event record end
 * on abort or after the same timeout.  After any failure the session
 * is marked unusable (close it and open another).
 *
 * Iterations and ordering across ranks.  No kernel ever spins waiting
 * for another GPU.  Cross-rank order comes from CUDA events: a rank
 * records its n-th "cross event" on one of its streams (xpost), and a
 * peer's stream waits for it with gpuStreamWaitEvent (xwait; an event
 * recorded on another device is allowed).  Because gpuStreamWaitEvent
 * binds to the record made before the call, the waiting rank's thread
 * first waits (host side, bounded) until the peer's thread has recorded
 * event n; slots are reused only after every peer has issued its wait on
 * the previous occupant.  Every rank runs the same operator code, so the
 * event numbers agree.  Every iteration of every measured operator starts
 * with such a barrier on the main stream (post, then wait for every
 * peer's post), so starts are aligned, no host sync is needed inside or
 * between iterations, and a rank never overwrites a peer's buffer that
 * the peer still reads from the previous iteration.  (The earlier
 * design, tp_barrier/tp_wait_kernel spinning on flags in peer memory,
 * hung at TP 2 in ring-exchange reduce-scatter: a spinning kernel is
 * invisible to CUDA's scheduler, so any ordering the driver adds behind
 * it -- hardware-queue aliasing of streams, the driver's own channel for
 * peer copies, SM residency of a persistent GEMM -- closes a cycle the
 * flags cannot see; an event wait is a dependency the scheduler knows.)
 * Events on the main stream bracket each timed iteration; the time of an
 * iteration is the slowest rank's; median, min and max are over those.
 *
 * Operators (rows of A and Y are tokens; Y[m][n] = A[m][k] B[k][n] row-
 * major; cuBLASLt computes it as the column-major Y^T = B^T A^T; chunks of
 * rows are contiguous pointer offsets):
 *   none      collective then GEMM (AG) / GEMM then collective (RS), main
 *             stream, default communicator.
 *   bulk      (dgrad/wgrad: the collective is independent) the collective
 *             on the comm stream through the num_sm communicator while
 *             the unsplit GEMM runs on a compute stream, limited to
 *             sm_count - num_sm SMs when set_sm_margin
 *             (CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, present in cuBLAS 13).
 *   ring_exchange AG: rank r's shard lives in its slot of the gathered
 *             buffer; step i computes chunk (r - i) mod tp into the same
 *             output rows on compute stream i mod min(3, tp).  Chunks are
 *             pulled by the copy engine (gpuMemcpyPeerAsync on the send
 *             stream; use_ce 0: tp_ring_copy_kernel on num_sm CTAs)
 *             directly from their owner rather than relayed around the
 *             ring: on NVSwitch/NVLink all-pairs machines a step's traffic
 *             is the same permutation as the ring's, and no step waits on
 *             another rank's previous step.  All copies are issued at the
 *             start back to back; step i's GEMM waits on its copy's event.
 *             aggregate 1: pairs of chunks, tp/2 GEMMs of 2 chunks; the
 *             pair-mate's chunk is exposed before the first GEMM.
 *   ring_exchange RS: step i computes the partial of destination
 *             (r + i + 1) mod tp (its rows of A), the send stream pushes
 *             it into the owner's receive slot r (copy engine or kernel)
 *             and posts a cross event after the push; the
 *             last step computes the rank's own partial in place; the main
 *             stream waits for the peers' push events and tp_ring_reduce_kernel
 *             sums the tp partials in fp32 into the output.  At TP 2 with
 *             num_splits >= 4 (q = num_splits / 2 sub-chunks per
 *             destination) the reduction disappears: the own sub-chunks
 *             come last and each GEMM adds the peer's sub-chunk, which
 *             arrived meanwhile, in its epilogue (beta 1; body_ring_rs2).
 *   pipeline  RS: num_splits chunks; chunk s is, for every destination d,
 *             rows [d m/tp + s msub, + msub) (msub = m / tp / num_splits),
 *             computed by one strided-batched GEMM (batch tp, weight stride
 *             0) into a staging block laid out [tp][msub][n], so each
 *             chunk's reduce-scatter is one contiguous NCCL call on the
 *             comm stream (num_sm communicator) while the next chunk's GEMM
 *             runs (one compute stream, so chunks finish in order).  If
 *             cuBLASLt offers no batched algorithm, tp GEMMs per chunk.
 * Not measured here: the copy of the shard into its slot (TE's layer
 * writes it there) and FP8/atomic GEMMs (atomic_gemm must be 0).
 *
 * Check.  Seeded random inputs (never zero); outputs, and the peers'
 * slots of a gathered input, poisoned with 0xff bytes (NaN in every
 * dtype); one iteration of the configuration; then the reference: the
 * unsplit GEMM on NCCL's all-gather of the shards (AG), NCCL's reduce-
 * scatter of the unsplit GEMM's output (RS), or for bulk the all-SM GEMM
 * and the default-communicator collective.  The error is
 * max |out - ref| / max |ref| over every rank, and the bound (2 + tp) u
 * with u the unit roundoff (2^-8 bf16, 2^-11 fp16): each side rounds its
 * output once (2u relative to the largest value) and a reduce-scatter
 * adds up to one rounding per partial, summed in another order (tp u);
 * the fp32 accumulation-order differences of the k-long sums are far
 * below that.  For fp32 outputs u is taken as 2^-16, because there the
 * accumulation order, not the output rounding, dominates.
 *
 * Ownership: the session owns everything it allocates; tp_gpu_close
 * frees it.  Thread rules: tp_gpu_measure and tp_gpu_close only from the
 * opening thread.
 */
#include "tp/tp.h"
#include "tp/tp_gpu.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm/nccl_comm.h"
#include "gpu/blas.h"
#include "gpu/check.h"
#include "gpu/cupti.h"
#include "gpu/gpu.h"


#define MAXR TPK_MAXR
#define NCOMP 3
#define WS_BYTES ((size_t)32 << 20)
#define MAX_PLANS 48
#define MAX_CC 16
#define MAX_SPLITS 64
#define NJOIN (NCOMP + 2)
#define XSLOTS 256
#define NHEUR 8 /* cuBLASLt candidates timed per plan */

enum buf_id { B_A, B_B, B_Y, B_P, B_C, B_CO, B_R1, B_R2, NBUF };
enum kind { K_AG, K_RS, K_BULK_AG, K_BULK_RS };
enum job_id { J_SETUP, J_COMMINIT, J_COMMFREE, J_PREP, J_CHECK, J_RUN, J_TEARDOWN };
enum run_what { R_GEMM, R_COMM, R_SERIAL, R_CFG };

/* the problem in elements, derived once per measure */
struct dims {
	enum kind kind;
	int tp, dt;
	size_t esz;
	long long m, n, k, mloc;
	long long cfull, cloc; /* collective elements: full tensor, per rank */
	long long need[NBUF];  /* elements per buffer */
};

struct plan {
	long long rows, n, k;
	int dt, batch, smt;
	long long sa, sc;
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t lw, la, lc;
	cublasLtMatmulAlgo_t algo;
	int usable;
};

struct tp_session;

struct rank_ctx {
	struct tp_session *s;
	int rank;
	pthread_t th;
	int started;
	gpuStream_t main, comm, send, comp[NCOMP];
	cublasLtHandle_t lt;
	void *ws[NCOMP + 1];        /* 0: main, 1 + j: comp[j] */
	void *ws_tune;              /* workspace of the plan trials (stream tune) */
	gpuStream_t tune;          /* plan trials only: no dependency on anything */
	gpuEvent_t tt[2];
	void *buf[NBUF];
	size_t cap[NBUF];           /* bytes */
	unsigned *cmp;              /* 2 words per compare */
	ncclComm_t nccl;            /* default communicator (NULL at tp 1) */
	gpuEvent_t fork, done, sent, join[NJOIN], step[MAX_SPLITS];
	gpuEvent_t *tev;           /* 2 per timed iteration */
	int ntev;
	struct plan plans[MAX_PLANS];
	int nplans;
	/* cross-rank events (see "Ordering"): slot n % XSLOTS holds this
	 * rank's n-th posted event; posted = the highest n recorded, cons[q]
	 * = the highest n of this rank's that rank q has waited on */
	gpuEvent_t xev[XSLOTS];
	long long xseq, posted, cons[MAXR];
	float *times;               /* ms per timed iteration */
	double chk_err;             /* max |out - ref| / max |ref| on this rank */
	enum aorta_status st;
	struct aorta_error err;
};

struct comm_cache {
	int num_sm, cga;
	ncclComm_t c[MAXR];
};

struct job {
	enum job_id id;
	const struct dims *d;
	const struct tp_cfg *cfg;
	int cc;                     /* index into s->cc, -1: default communicator */
	enum run_what what;
	int n, timed;
	uint64_t seed;
	ncclUniqueId uid;
	int num_sm, cga;
};

struct tp_session {
	int tp, sm_count;
	long long max_elems;
	struct rank_ctx r[MAXR];
	pthread_mutex_t mu;
	pthread_cond_t work, finished;
	unsigned gen;
	int ndone, quit;
	struct job job;
	volatile int abort;
	int broken;
	struct comm_cache cc[MAX_CC];
	int ncc, next_evict;
	long long timeout_ns;
};

/* ------------------------------------------------------------ helpers */

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Errors: every GPU, cuBLASLt and NCCL call is checked with gpu/check.h's
 * macros into rc->err; the worker prefixes "rank R: " once when a job
 * fails (worker()). */

static cudaDataType_t cuda_dt(int dt)
{
	return dt == TP_BF16 ? CUDA_R_16BF : dt == TP_FP16 ? CUDA_R_16F : CUDA_R_32F;
}

static ncclDataType_t nccl_dt(int dt)
{
	return dt == TP_BF16 ? ncclBfloat16 : dt == TP_FP16 ? ncclFloat16 : ncclFloat32;
}

static char *bp(struct rank_ctx *rc, enum buf_id b, long long elems, const struct dims *d)
{
	return (char *)rc->buf[b] + (size_t)elems * d->esz;
}

static char *peer_bp(struct rank_ctx *rc, int peer, enum buf_id b, long long elems, const struct dims *d)
{
	return bp(&rc->s->r[peer], b, elems, d);
}

/* ------------------------------------------------- cross-rank events */

/* host-side wait until *w >= n (another rank's thread publishes it);
 * bounded by the session timeout and the abort flag, never a hang */
static enum aorta_status xhost_wait(struct rank_ctx *rc, const long long *w, long long n, const char *what)
{
	long long t0 = 0;

	for (int spin = 0; __atomic_load_n(w, __ATOMIC_ACQUIRE) < n; spin++) {
		if (rc->s->abort)
			return aorta_fail(&rc->err, AORTA_EGPU, "", 0, -1, "stopped (another rank failed)");
		if (spin < 64)
			continue;
		if (!t0)
			t0 = now_ns();
		else if (now_ns() - t0 > rc->s->timeout_ns)
			return aorta_fail(&rc->err, AORTA_EGPU, "", 0, -1,
					  "the peers did not reach %s event %lld in %lld s", what, n,
					  rc->s->timeout_ns / 1000000000LL);
		usleep(2);
	}
	return AORTA_OK;
}

/* records this rank's next cross-rank event on st; *seq receives its
 * number.  Before reusing a slot, every peer must have issued its wait
 * on the event the slot held (a re-record would move it) */
static enum aorta_status xpost(struct rank_ctx *rc, gpuStream_t st, long long *seq)
{
	long long n = rc->xseq;

	for (int q = 0; q < rc->s->tp; q++)
		if (q != rc->rank)
			AORTA_TRY(xhost_wait(rc, &rc->cons[q], n - XSLOTS, "a consumed"));
	GPU_CHECK(&rc->err, gpuEventRecord(rc->xev[n % XSLOTS], st));
	__atomic_store_n(&rc->posted, n, __ATOMIC_RELEASE);
	rc->xseq = n + 1;
	if (seq)
		*seq = n;
	return AORTA_OK;
}

/* stream st (this rank's device) waits, on the GPU, for peer's event n:
 * gpuStreamWaitEvent accepts an event recorded on another device */
static enum aorta_status xwait(struct rank_ctx *rc, int peer, long long n, gpuStream_t st)
{
	struct rank_ctx *pc = &rc->s->r[peer];

	AORTA_TRY(xhost_wait(rc, &pc->posted, n, "a posted"));
	GPU_CHECK(&rc->err, gpuStreamWaitEvent(st, pc->xev[n % XSLOTS], 0));
	__atomic_store_n(&pc->cons[rc->rank], n, __ATOMIC_RELEASE);
	return AORTA_OK;
}

/* ------------------------------------------------------------- GEMMs */

static void plan_free(struct plan *p)
{
	if (p->desc)
		cublasLtMatmulDescDestroy(p->desc);
	if (p->lw)
		cublasLtMatrixLayoutDestroy(p->lw);
	if (p->la)
		cublasLtMatrixLayoutDestroy(p->la);
	if (p->lc)
		cublasLtMatrixLayoutDestroy(p->lc);
	memset(p, 0, sizeof(*p));
}

static int set_batch(cublasLtMatrixLayout_t l, int batch, long long stride)
{
	int32_t b = batch;
	int64_t s = stride;

	return cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, sizeof(b)) ||
	       cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &s, sizeof(s));
}

/* Index of the fastest of cuBLASLt's nres candidates for plan p: each is
 * run once to warm up and once timed (events) on the rank's private tune
 * stream and workspace, on the session's buffers (A and B are only read;
 * the output goes to B_R1, which validate() sizes to at least m x n and
 * which no operator body uses), then synchronized: a few ms per plan,
 * once (plans are cached).  The first heuristic when only one is offered
 * or a trial fails. */
static int plan_pick(struct rank_ctx *rc, struct plan *p, const cublasLtMatmulHeuristicResult_t *res, int nres)
{
	float alpha = 1.0f, beta = 0.0f, best_ms = INFINITY;
	int best = 0;
	size_t esz = p->dt == TP_FP32 ? 4 : 2;
	size_t outb = ((size_t)p->sc * (size_t)(p->batch - 1) + (size_t)p->rows * (size_t)p->n) * esz;

	if (nres < 2 || !rc->tune || !rc->ws_tune || !rc->buf[B_R1] || outb > rc->cap[B_R1])
		return 0;
	for (int i = 0; i < nres; i++) {
		float ms = 0;
		int bad = 0;

		if (res[i].state != CUBLAS_STATUS_SUCCESS)
			continue;
		for (int rep = 0; rep < 2 && !bad; rep++) {
			if (rep == 1 && gpuEventRecord(rc->tt[0], rc->tune) != gpuSuccess)
				bad = 1;
			if (!bad && cublasLtMatmul(rc->lt, p->desc, &alpha, rc->buf[B_B], p->lw, rc->buf[B_A], p->la,
						   &beta, rc->buf[B_R1], p->lc, rc->buf[B_R1], p->lc, &res[i].algo,
						   rc->ws_tune, WS_BYTES, rc->tune) != CUBLAS_STATUS_SUCCESS)
				bad = 1;
		}
		if (bad || gpuEventRecord(rc->tt[1], rc->tune) != gpuSuccess ||
		    gpuEventSynchronize(rc->tt[1]) != gpuSuccess ||
		    gpuEventElapsedTime(&ms, rc->tt[0], rc->tt[1]) != gpuSuccess) {
			gpuGetLastError();
			gpuStreamSynchronize(rc->tune);
			continue;
		}
		if (ms < best_ms)
			best_ms = ms, best = i;
	}
	gpuGetLastError();
	return best;
}

/* The plan for Y[rows][n] = A[rows][k] B[k][n] (batch > 1: A and Y step
 * by sa, sc elements, B is shared).  *out = NULL when cuBLASLt has no
 * algorithm (the caller decides); an error only for a failing call. */
static enum aorta_status plan_get(struct rank_ctx *rc, const struct dims *d, long long rows, int batch, long long sa,
				  long long sc, int smt, struct plan **out)
{
	cudaDataType_t t = cuda_dt(d->dt);
	cublasLtMatmulPreference_t pref = NULL;
	cublasLtMatmulHeuristicResult_t res[NHEUR];
	int nres = 0;
	size_t wsb = WS_BYTES;
	struct plan *p;

	*out = NULL;
	for (int i = 0; i < rc->nplans; i++) {
		p = &rc->plans[i];
		if (p->rows == rows && p->n == d->n && p->k == d->k && p->dt == d->dt && p->batch == batch &&
		    p->sa == sa && p->sc == sc && p->smt == smt) {
			*out = p->usable ? p : NULL;
			return AORTA_OK;
		}
	}
	if (rc->nplans == MAX_PLANS) {
		for (int i = 0; i < MAX_PLANS; i++)
			plan_free(&rc->plans[i]);
		rc->nplans = 0;
	}
	p = &rc->plans[rc->nplans++];
	memset(p, 0, sizeof(*p));
	p->rows = rows, p->n = d->n, p->k = d->k, p->dt = d->dt, p->batch = batch;
	p->sa = sa, p->sc = sc, p->smt = smt;
	GPU_BLAS_CHECK(&rc->err, cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	if (smt > 0) {
		int32_t v = smt;
		GPU_BLAS_CHECK(&rc->err, cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &v, sizeof(v)));
	}
	/* column-major view: W = B^T is n x k (ld n), X = A^T is k x rows
	 * (ld k), Z = Y^T is n x rows (ld n); Z = W X */
	GPU_BLAS_CHECK(&rc->err, cublasLtMatrixLayoutCreate(&p->lw, t, (uint64_t)d->n, (uint64_t)d->k, d->n));
	GPU_BLAS_CHECK(&rc->err, cublasLtMatrixLayoutCreate(&p->la, t, (uint64_t)d->k, (uint64_t)rows, d->k));
	GPU_BLAS_CHECK(&rc->err, cublasLtMatrixLayoutCreate(&p->lc, t, (uint64_t)d->n, (uint64_t)rows, d->n));
	if (batch > 1 && (set_batch(p->lw, batch, 0) || set_batch(p->la, batch, sa) || set_batch(p->lc, batch, sc)))
		return AORTA_OK; /* unusable */
	GPU_BLAS_CHECK(&rc->err, cublasLtMatmulPreferenceCreate(&pref));
	cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof(wsb));
	/* chunk pointers are buffer + a multiple of these byte counts: tell
	 * cuBLASLt the alignment it can rely on (its default assumes 256) */
	uint32_t al = 256;
	long long unit[] = { d->mloc * d->k, rows * d->k, rows * d->n, d->mloc * d->n, sa, sc };
	for (size_t u = 0; u < sizeof(unit) / sizeof(unit[0]); u++)
		while (al > 16 && ((size_t)unit[u] * d->esz) % al)
			al /= 2;
	cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al, sizeof(al));
	cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al, sizeof(al));
	cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al, sizeof(al));
	cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al, sizeof(al));
	cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(rc->lt, p->desc, p->lw, p->la, p->lc, p->lc, pref, NHEUR,
							   res, &nres);
	cublasLtMatmulPreferenceDestroy(pref);
	if (hs != CUBLAS_STATUS_SUCCESS || nres < 1) {
		if (batch > 1)
			return AORTA_OK; /* the caller falls back to single GEMMs */
		return aorta_fail(&rc->err, AORTA_EGPU, "", 0, -1,
				  "cublasLt has no algorithm for %lld x %lld x %lld %s (sm target %d): %s",
				  rows, d->n, d->k, d->dt == TP_BF16 ? "bf16" : d->dt == TP_FP16 ? "fp16" : "fp32",
				  smt, cublasLtGetStatusString(hs));
	}
	p->algo = res[plan_pick(rc, p, res, nres)].algo;
	p->usable = 1;
	*out = p;
	return AORTA_OK;
}

static enum aorta_status gemm_run(struct rank_ctx *rc, struct plan *p, int widx, gpuStream_t st, const void *A,
				  const void *B, void *Y)
{
	float alpha = 1.0f, beta = 0.0f;

	GPU_BLAS_CHECK(&rc->err, cublasLtMatmul(rc->lt, p->desc, &alpha, B, p->lw, A, p->la, &beta, Y, p->lc, Y, p->lc, &p->algo,
				rc->ws[widx], WS_BYTES, st));
	return AORTA_OK;
}

/* Y[rows][n] = A[rows][k] B[k][n] on stream st (workspace widx) */
static enum aorta_status gemm(struct rank_ctx *rc, const struct dims *d, int widx, gpuStream_t st, const void *A,
			      const void *B, void *Y, long long rows, int smt)
{
	struct plan *p;

	AORTA_TRY(plan_get(rc, d, rows, 1, 0, 0, smt, &p));
	return gemm_run(rc, p, widx, st, A, B, Y);
}

/* ------------------------------------------------------- collectives */

/* all-gather of count elements per rank, in place when send is recv's slot */
static enum aorta_status coll_ag(struct rank_ctx *rc, const struct dims *d, ncclComm_t c, gpuStream_t st,
				 const void *send, void *recv, long long count)
{
	if (d->tp == 1) {
		if (send != recv)
			GPU_CHECK(&rc->err, gpuMemcpyAsync(recv, send, (size_t)count * d->esz, gpuMemcpyDeviceToDevice, st));
		return AORTA_OK;
	}
	GPU_NCCL_CHECK(&rc->err, NULL, ncclAllGather(send, recv, (size_t)count, nccl_dt(d->dt), c, st));
	return AORTA_OK;
}

/* reduce-scatter: recv gets count elements */
static enum aorta_status coll_rs(struct rank_ctx *rc, const struct dims *d, ncclComm_t c, gpuStream_t st,
				 const void *send, void *recv, long long count)
{
	if (d->tp == 1) {
		GPU_CHECK(&rc->err, gpuMemcpyAsync(recv, send, (size_t)count * d->esz, gpuMemcpyDeviceToDevice, st));
		return AORTA_OK;
	}
	GPU_NCCL_CHECK(&rc->err, NULL, ncclReduceScatter(send, recv, (size_t)count, nccl_dt(d->dt), ncclSum, c, st));
	return AORTA_OK;
}

/* the operator's collective, alone (comm_ms, none, bulk) */
static enum aorta_status coll_op(struct rank_ctx *rc, const struct dims *d, ncclComm_t c, gpuStream_t st)
{
	long long slot;

	switch (d->kind) {
	case K_AG:
		slot = d->mloc * d->k;
		return coll_ag(rc, d, c, st, bp(rc, B_A, rc->rank * slot, d), rc->buf[B_A], slot);
	case K_RS:
		return coll_rs(rc, d, c, st, rc->buf[B_P], rc->buf[B_CO], d->mloc * d->n);
	case K_BULK_AG:
		return coll_ag(rc, d, c, st, bp(rc, B_C, rc->rank * d->cloc, d), rc->buf[B_C], d->cloc);
	case K_BULK_RS:
		return coll_rs(rc, d, c, st, rc->buf[B_C], rc->buf[B_CO], d->cloc);
	}
	return AORTA_EINTERNAL;
}

/* the unsplit GEMM on all SMs (gemm_ms, none, the check's reference) */
static enum aorta_status gemm_op(struct rank_ctx *rc, const struct dims *d, gpuStream_t st, int widx, void *Y)
{
	return gemm(rc, d, widx, st, rc->buf[B_A], rc->buf[B_B], Y, d->m, 0);
}

/* ------------------------------------------------------------ methods */

static enum aorta_status fork_streams(struct rank_ctx *rc, gpuStream_t *ss, int n)
{
	GPU_CHECK(&rc->err, gpuEventRecord(rc->fork, rc->main));
	for (int i = 0; i < n; i++)
		GPU_CHECK(&rc->err, gpuStreamWaitEvent(ss[i], rc->fork, 0));
	return AORTA_OK;
}

static enum aorta_status join_streams(struct rank_ctx *rc, gpuStream_t *ss, int n)
{
	for (int i = 0; i < n; i++) {
		GPU_CHECK(&rc->err, gpuEventRecord(rc->join[i], ss[i]));
		GPU_CHECK(&rc->err, gpuStreamWaitEvent(rc->main, rc->join[i], 0));
	}
	return AORTA_OK;
}

static ncclComm_t comm_of(struct rank_ctx *rc, int cc)
{
	return cc < 0 ? rc->nccl : rc->s->cc[cc].c[rc->rank];
}

static int sm_target(const struct rank_ctx *rc, const struct tp_cfg *cfg)
{
	int t = rc->s->sm_count - cfg->num_sm;

	return cfg->set_sm_margin && cfg->num_sm > 0 && t > 0 ? t : 0;
}

/* one chunk copy on the send stream: peer -> local (pull) or local -> peer (push) */
static enum aorta_status chunk_copy(struct rank_ctx *rc, const struct tp_cfg *cfg, void *dst, int ddev,
				    const void *src, int sdev, size_t bytes)
{
	if (cfg->use_ce)
		GPU_CHECK(&rc->err, gpuMemcpyPeerAsync(dst, ddev, src, sdev, bytes, rc->send));
	else
		GPU_CHECK(&rc->err, (gpuError_t)tpk_copy(dst, src, bytes, cfg->num_sm > 0 ? cfg->num_sm : 1, rc->send));
	return AORTA_OK;
}

static enum aorta_status body_none(struct rank_ctx *rc, const struct dims *d)
{
	if (d->kind == K_RS) {
		AORTA_TRY(gemm_op(rc, d, rc->main, 0, rc->buf[B_P]));
		return coll_op(rc, d, rc->nccl, rc->main);
	}
	AORTA_TRY(coll_op(rc, d, rc->nccl, rc->main));
	return gemm_op(rc, d, rc->main, 0, rc->buf[B_Y]);
}

static enum aorta_status body_bulk(struct rank_ctx *rc, const struct dims *d, const struct tp_cfg *cfg, int cc)
{
	gpuStream_t ss[2] = { rc->comm, rc->comp[0] };

	AORTA_TRY(fork_streams(rc, ss, 2));
	AORTA_TRY(coll_op(rc, d, comm_of(rc, cc), rc->comm));
	AORTA_TRY(gemm(rc, d, 1, rc->comp[0], rc->buf[B_A], rc->buf[B_B], rc->buf[B_Y], d->m, sm_target(rc, cfg)));
	return join_streams(rc, ss, 2);
}

static enum aorta_status body_ring_ag(struct rank_ctx *rc, const struct dims *d, const struct tp_cfg *cfg)
{
	int T = d->tp, r = rc->rank, agg = cfg->aggregate && T % 2 == 0 && T > 1;
	int width = agg ? 2 : 1, steps = T / width, ncomp = steps < NCOMP ? steps : NCOMP;
	long long slot = d->mloc * d->k;
	size_t bytes = (size_t)slot * d->esz;
	int smt = sm_target(rc, cfg);
	gpuStream_t ss[NCOMP + 1];
	int chunk0[MAXR];

	for (int j = 0; j < ncomp; j++)
		ss[j] = rc->comp[j];
	ss[ncomp] = rc->send;
	AORTA_TRY(fork_streams(rc, ss, ncomp + 1));
	/* the copies, back to back on the send stream: step i's chunks
	 * come straight from their owners */
	for (int i = 0; i < steps; i++) {
		int first = agg ? ((r / 2 - i + steps) % steps) * 2 : (r - i + T) % T;
		chunk0[i] = first;
		for (int c = first; c < first + width; c++)
			if (c != r)
				AORTA_TRY(chunk_copy(rc, cfg, bp(rc, B_A, c * slot, d), r, peer_bp(rc, c, B_A, c * slot, d), c,
						 bytes));
		GPU_CHECK(&rc->err, gpuEventRecord(rc->step[i], rc->send));
	}
	for (int i = 0; i < steps; i++) {
		int j = i % ncomp, c = chunk0[i];
		gpuStream_t cs = rc->comp[j];

		if (i > 0 || agg)
			GPU_CHECK(&rc->err, gpuStreamWaitEvent(cs, rc->step[i], 0));
		AORTA_TRY(gemm(rc, d, 1 + j, cs, bp(rc, B_A, c * slot, d), rc->buf[B_B],
			   bp(rc, B_Y, c * d->mloc * d->n, d), d->mloc * width, smt));
	}
	return join_streams(rc, ss, ncomp + 1);
}

static enum aorta_status body_ring_rs(struct rank_ctx *rc, const struct dims *d, const struct tp_cfg *cfg)
{
	/* one compute stream: the partials must finish in order, so that
	 * each push overlaps the next partial's GEMM (concurrent GEMMs would
	 * all end together and expose every push) */
	int T = d->tp, r = rc->rank, ncomp = 1;
	long long part = d->mloc * d->n, base = rc->xseq;
	size_t bytes = (size_t)part * d->esz;
	int smt = sm_target(rc, cfg);
	gpuStream_t ss[NCOMP + 1];

	for (int j = 0; j < ncomp; j++)
		ss[j] = rc->comp[j];
	ss[ncomp] = rc->send;
	AORTA_TRY(fork_streams(rc, ss, ncomp + 1));
	/* steps 0 .. T-2 push to a peer and post event base + i (every rank
	 * posts the same numbers); step T-1 is the own partial */
	for (int i = 0; i < T; i++) {
		int j = i % ncomp, dst = (r + i + 1) % T;
		gpuStream_t cs = rc->comp[j];
		const void *A = bp(rc, B_A, dst * d->mloc * d->k, d);

		if (dst == r) { /* own partial, last, straight into its receive slot */
			AORTA_TRY(gemm(rc, d, 1 + j, cs, A, rc->buf[B_B], bp(rc, B_C, r * part, d), d->mloc, smt));
			continue;
		}
		AORTA_TRY(gemm(rc, d, 1 + j, cs, A, rc->buf[B_B], bp(rc, B_P, dst * part, d), d->mloc, smt));
		GPU_CHECK(&rc->err, gpuEventRecord(rc->step[i], cs));
		GPU_CHECK(&rc->err, gpuStreamWaitEvent(rc->send, rc->step[i], 0));
		AORTA_TRY(chunk_copy(rc, cfg, peer_bp(rc, dst, B_C, r * part, d), dst, bp(rc, B_P, dst * part, d), r, bytes));
		AORTA_TRY(xpost(rc, rc->send, NULL));
	}
	AORTA_TRY(join_streams(rc, ss, ncomp + 1));
	/* source s pushed to this rank at its step (r - s - 1) mod T */
	for (int sh = 1; sh < T; sh++) {
		int src = (r - sh + T) % T;
		AORTA_TRY(xwait(rc, src, base + (r - src - 1 + T) % T, rc->main));
	}
	GPU_CHECK(&rc->err, (gpuError_t)tpk_reduce(d->dt, rc->buf[B_CO], rc->buf[B_C], part, T, part, 0, rc->main));
	return AORTA_OK;
}

/* gemm_run with D = A B + C (beta 1): C and D share the plan's layout */
static enum aorta_status gemm_acc(struct rank_ctx *rc, struct plan *p, int widx, gpuStream_t st, const void *A,
				  const void *B, const void *C, void *D)
{
	float alpha = 1.0f, beta = 1.0f;

	GPU_BLAS_CHECK(&rc->err, cublasLtMatmul(rc->lt, p->desc, &alpha, B, p->lw, A, p->la, &beta, C, p->lc, D, p->lc, &p->algo,
				rc->ws[widx], WS_BYTES, st));
	return AORTA_OK;
}

/* Ring-exchange RS at TP 2 with q = num_splits / 2 >= 2 sub-chunks per
 * destination: the q partials of the peer's rows first, each pushed to
 * the peer as soon as it is done (copy engine or kernel, then a cross
 * event); then the q sub-chunks of the own rows, each GEMM waiting for the
 * peer's sub-chunk h (it arrived meanwhile) and adding it in its epilogue
 * (beta 1: D = A B + C, fp32 accumulation, one rounding; the wait is
 * an event wait on the peer's push, never a spinning kernel).  No reduction
 * kernel is left; what is exposed is the push of the last peer sub-chunk
 * (1/q of a partial), so larger q exposes less but runs smaller GEMMs. */
static enum aorta_status body_ring_rs2(struct rank_ctx *rc, const struct dims *d, const struct tp_cfg *cfg, int q)
{
	int r = rc->rank, peer = 1 - r, smt = sm_target(rc, cfg);
	long long msub = d->mloc / q, sub = msub * d->n, base = rc->xseq;
	size_t bytes = (size_t)sub * d->esz;
	gpuStream_t ss[2] = { rc->comp[0], rc->send };
	struct plan *p;

	AORTA_TRY(plan_get(rc, d, msub, 1, 0, 0, smt, &p));
	AORTA_TRY(fork_streams(rc, ss, 2));
	for (int h = 0; h < q; h++) {
		long long row = peer * d->mloc + h * msub;
		char *part = bp(rc, B_P, row * d->n, d);

		AORTA_TRY(gemm_run(rc, p, 1, rc->comp[0], bp(rc, B_A, row * d->k, d), rc->buf[B_B], part));
		GPU_CHECK(&rc->err, gpuEventRecord(rc->step[h], rc->comp[0]));
		GPU_CHECK(&rc->err, gpuStreamWaitEvent(rc->send, rc->step[h], 0));
		AORTA_TRY(chunk_copy(rc, cfg, peer_bp(rc, peer, B_C, (r * d->mloc + h * msub) * d->n, d), peer, part, r,
				 bytes));
		AORTA_TRY(xpost(rc, rc->send, NULL)); /* event base + h: push h landed */
	}
	/* the own sub-chunks: GEMM h waits, on the GPU, for the event the
	 * peer recorded after its push h (no spinning kernel anywhere) */
	for (int h = 0; h < q; h++) {
		long long row = r * d->mloc + h * msub;

		AORTA_TRY(xwait(rc, peer, base + h, rc->comp[0]));
		AORTA_TRY(gemm_acc(rc, p, 1, rc->comp[0], bp(rc, B_A, row * d->k, d), rc->buf[B_B],
			       bp(rc, B_C, (peer * d->mloc + h * msub) * d->n, d), bp(rc, B_CO, h * sub, d)));
	}
	return join_streams(rc, ss, 2);
}

static enum aorta_status body_pipeline(struct rank_ctx *rc, const struct dims *d, const struct tp_cfg *cfg, int cc)
{
	int T = d->tp, ns = cfg->num_splits, smt = sm_target(rc, cfg);
	long long msub = d->mloc / ns, blk = msub * d->n;
	gpuStream_t ss[2] = { rc->comp[0], rc->comm };
	ncclComm_t c = comm_of(rc, cc);
	struct plan *bat = NULL;

	if (T > 1)
		AORTA_TRY(plan_get(rc, d, msub, T, d->mloc * d->k, blk, smt, &bat));
	AORTA_TRY(fork_streams(rc, ss, 2));
	for (int s = 0; s < ns; s++) {
		char *stage = bp(rc, B_P, (long long)s * T * blk, d);
		const char *A = bp(rc, B_A, s * msub * d->k, d);

		if (bat) {
			float alpha = 1.0f, beta = 0.0f;
			cublasStatus_t bs = cublasLtMatmul(rc->lt, bat->desc, &alpha, rc->buf[B_B], bat->lw, A, bat->la,
							   &beta, stage, bat->lc, stage, bat->lc, &bat->algo,
							   rc->ws[1], WS_BYTES, rc->comp[0]);
			if (bs != CUBLAS_STATUS_SUCCESS) { /* refused at launch: single GEMMs from now on */
				bat->usable = 0;
				bat = NULL;
			}
		}
		if (!bat) {
			for (int dst = 0; dst < T; dst++)
				AORTA_TRY(gemm(rc, d, 1, rc->comp[0], A + (size_t)dst * d->mloc * d->k * d->esz,
					   rc->buf[B_B], stage + (size_t)dst * blk * d->esz, msub, smt));
		}
		GPU_CHECK(&rc->err, gpuEventRecord(rc->step[s], rc->comp[0]));
		GPU_CHECK(&rc->err, gpuStreamWaitEvent(rc->comm, rc->step[s], 0));
		AORTA_TRY(coll_rs(rc, d, c, rc->comm, stage, bp(rc, B_CO, s * blk, d), blk));
	}
	return join_streams(rc, ss, 2);
}

static enum aorta_status body(struct rank_ctx *rc, const struct dims *d, enum run_what w, const struct tp_cfg *cfg,
			      int cc)
{
	switch (w) {
	case R_GEMM:
		return gemm_op(rc, d, rc->main, 0, d->kind == K_RS ? rc->buf[B_P] : rc->buf[B_Y]);
	case R_COMM:
		return coll_op(rc, d, rc->nccl, rc->main);
	case R_SERIAL:
		return body_none(rc, d);
	case R_CFG:
		break;
	}
	switch (cfg->method) {
	case TP_NONE:
		return body_none(rc, d);
	case TP_BULK:
		return body_bulk(rc, d, cfg, cc);
	case TP_RING_EXCHANGE:
		if (d->kind == K_AG)
			return body_ring_ag(rc, d, cfg);
		if (d->tp == 2 && cfg->num_splits >= 4)
			return body_ring_rs2(rc, d, cfg, cfg->num_splits / 2);
		return body_ring_rs(rc, d, cfg);
	case TP_PIPELINE:
		return body_pipeline(rc, d, cfg, cc);
	default:
		return AORTA_EINTERNAL;
	}
}

/* ------------------------------------------------------------ workers */

static enum aorta_status wait_gpu(struct rank_ctx *rc)
{
	long long t0 = now_ns();

	GPU_CHECK(&rc->err, gpuEventRecord(rc->done, rc->main));
	for (;;) {
		gpuError_t q = gpuEventQuery(rc->done);

		if (q == gpuSuccess)
			break;
		if (q != gpuErrorNotReady)
			return GPU_RESULT(&rc->err, "gpuEventQuery (waiting for the GPU)", q);
		if (rc->s->abort)
			return aorta_fail(&rc->err, AORTA_EGPU, "", 0, -1, "stopped (another rank failed)");
		if (now_ns() - t0 > rc->s->timeout_ns)
			return aorta_fail(&rc->err, AORTA_EGPU, "", 0, -1, "GPU work did not finish in %lld s",
					  rc->s->timeout_ns / 1000000000LL);
		usleep(50);
	}
	return AORTA_OK;
}

static enum aorta_status grow(struct rank_ctx *rc, enum buf_id b, size_t bytes)
{
	if (bytes <= rc->cap[b])
		return AORTA_OK;
	GPU_CHECK(&rc->err, gpuDeviceSynchronize());
	if (rc->buf[b])
		gpuFree(rc->buf[b]);
	rc->buf[b] = NULL;
	rc->cap[b] = 0;
	GPU_CHECK(&rc->err, gpuMalloc(&rc->buf[b], bytes));
	rc->cap[b] = bytes;
	return AORTA_OK;
}

static enum aorta_status job_setup(struct rank_ctx *rc, const struct job *j)
{
	int lo, hi, T = rc->s->tp;

	GPU_CHECK(&rc->err, gpuSetDevice(rc->rank));
	for (int p = 0; p < T; p++) {
		if (p == rc->rank)
			continue;
		gpuError_t pe = gpuDeviceEnablePeerAccess(p, 0);
		if (pe == gpuErrorPeerAccessAlreadyEnabled)
			gpuGetLastError();
		else if (pe != gpuSuccess)
			return GPU_RESULT(&rc->err, "gpuDeviceEnablePeerAccess (peer access for the ring)", pe);
	}
	GPU_CHECK(&rc->err, gpuDeviceGetStreamPriorityRange(&lo, &hi));
	GPU_CHECK(&rc->err, gpuStreamCreateWithPriority(&rc->main, gpuStreamNonBlocking, lo));
	GPU_CHECK(&rc->err, gpuStreamCreateWithPriority(&rc->comm, gpuStreamNonBlocking, hi));
	GPU_CHECK(&rc->err, gpuStreamCreateWithPriority(&rc->send, gpuStreamNonBlocking, hi));
	for (int i = 0; i < NCOMP; i++)
		GPU_CHECK(&rc->err, gpuStreamCreateWithPriority(&rc->comp[i], gpuStreamNonBlocking, lo));
	GPU_BLAS_CHECK(&rc->err, cublasLtCreate(&rc->lt));
	for (int i = 0; i <= NCOMP; i++)
		GPU_CHECK(&rc->err, gpuMalloc(&rc->ws[i], WS_BYTES));
	GPU_CHECK(&rc->err, gpuMalloc(&rc->ws_tune, WS_BYTES));
	GPU_CHECK(&rc->err, gpuStreamCreateWithFlags(&rc->tune, gpuStreamNonBlocking));
	GPU_CHECK(&rc->err, gpuEventCreate(&rc->tt[0]));
	GPU_CHECK(&rc->err, gpuEventCreate(&rc->tt[1]));
	GPU_CHECK(&rc->err, gpuMalloc((void **)&rc->cmp, 8 * sizeof(unsigned)));
	GPU_CHECK(&rc->err, gpuEventCreateWithFlags(&rc->fork, gpuEventDisableTiming));
	GPU_CHECK(&rc->err, gpuEventCreateWithFlags(&rc->done, gpuEventDisableTiming));
	GPU_CHECK(&rc->err, gpuEventCreateWithFlags(&rc->sent, gpuEventDisableTiming));
	for (int i = 0; i < NJOIN; i++)
		GPU_CHECK(&rc->err, gpuEventCreateWithFlags(&rc->join[i], gpuEventDisableTiming));
	for (int i = 0; i < MAX_SPLITS; i++)
		GPU_CHECK(&rc->err, gpuEventCreateWithFlags(&rc->step[i], gpuEventDisableTiming));
	for (int i = 0; i < XSLOTS; i++)
		GPU_CHECK(&rc->err, gpuEventCreateWithFlags(&rc->xev[i], gpuEventDisableTiming));
	/* bf16 operands of the largest shape, grown later if needed */
	size_t b = (size_t)rc->s->max_elems * 2;
	AORTA_TRY(grow(rc, B_A, b));
	AORTA_TRY(grow(rc, B_B, b));
	AORTA_TRY(grow(rc, B_Y, b));
	(void)j;
	GPU_CHECK(&rc->err, gpuDeviceSynchronize());
	return AORTA_OK;
}

static enum aorta_status job_comminit(struct rank_ctx *rc, const struct job *j)
{
	/* the default communicator: NCCL's own settings */
	if (j->cc < 0)
		return comm_nccl_raw_open(&rc->nccl, rc->s->tp, &j->uid, rc->rank, NULL, &rc->err);
	/* SM-limited: at most num_sm CTAs per collective */
	struct comm_nccl_opts o = { .min_ctas = 1, .max_ctas = j->num_sm, .cga_cluster_size = j->cga > 0 ? j->cga : -1,
				    .cta_policy = -1 };
	return comm_nccl_raw_open(&rc->s->cc[j->cc].c[rc->rank], rc->s->tp, &j->uid, rc->rank, &o, &rc->err);
}

static uint64_t seed_of(uint64_t seed, int what, int rank)
{
	return seed * 0x100000001b3ull + (uint64_t)what * 0x9e3779b1u + (uint64_t)rank * 7919u + 1;
}

/* buffers for the shape and seeded inputs; an all-gather operator's input
 * is gathered once (NCCL) so that every phase computes on real numbers */
static enum aorta_status job_prep(struct rank_ctx *rc, const struct job *j)
{
	const struct dims *d = j->d;
	int r = rc->rank;

	for (int b = 0; b < NBUF; b++)
		if (d->need[b] > 0)
			AORTA_TRY(grow(rc, (enum buf_id)b, (size_t)d->need[b] * d->esz));
	GPU_CHECK(&rc->err, (gpuError_t)tpk_fill(d->dt, rc->buf[B_B], d->k * d->n, seed_of(j->seed, 2, r), rc->main));
	if (d->kind == K_AG) {
		long long slot = d->mloc * d->k;
		GPU_CHECK(&rc->err, (gpuError_t)tpk_fill(d->dt, bp(rc, B_A, r * slot, d), slot, seed_of(j->seed, 1, r), rc->main));
		AORTA_TRY(coll_ag(rc, d, rc->nccl, rc->main, bp(rc, B_A, r * slot, d), rc->buf[B_A], slot));
	} else {
		GPU_CHECK(&rc->err, (gpuError_t)tpk_fill(d->dt, rc->buf[B_A], d->m * d->k, seed_of(j->seed, 1, r), rc->main));
	}
	if (d->kind == K_BULK_AG)
		GPU_CHECK(&rc->err, (gpuError_t)tpk_fill(d->dt, bp(rc, B_C, r * d->cloc, d), d->cloc, seed_of(j->seed, 3, r), rc->main));
	else if (d->kind == K_BULK_RS)
		GPU_CHECK(&rc->err, (gpuError_t)tpk_fill(d->dt, rc->buf[B_C], d->cfull, seed_of(j->seed, 3, r), rc->main));
	return wait_gpu(rc);
}

/* 0xff bytes (NaN in bf16, fp16 and fp32) over n elements from off */
static enum aorta_status poison(struct rank_ctx *rc, const struct dims *d, enum buf_id b, long long off,
				long long n)
{
	if (n > 0)
		GPU_CHECK(&rc->err, gpuMemsetAsync(bp(rc, b, off, d), 0xff, (size_t)n * d->esz, rc->main));
	return AORTA_OK;
}

/* before the check: every output, and every part of a gathered buffer
 * that the operator must fill from the peers, is NaN, so a chunk the
 * operator skips cannot pass for a right one */
static enum aorta_status poison_outputs(struct rank_ctx *rc, const struct dims *d)
{
	int r = rc->rank;

	switch (d->kind) {
	case K_AG: {
		long long slot = d->mloc * d->k;
		AORTA_TRY(poison(rc, d, B_A, 0, r * slot));
		AORTA_TRY(poison(rc, d, B_A, (r + 1) * slot, (d->tp - r - 1) * slot));
		return poison(rc, d, B_Y, 0, d->need[B_Y]);
	}
	case K_RS:
		AORTA_TRY(poison(rc, d, B_P, 0, d->need[B_P]));
		AORTA_TRY(poison(rc, d, B_C, 0, d->need[B_C]));
		return poison(rc, d, B_CO, 0, d->need[B_CO]);
	case K_BULK_AG:
		AORTA_TRY(poison(rc, d, B_C, 0, r * d->cloc));
		AORTA_TRY(poison(rc, d, B_C, (r + 1) * d->cloc, (d->tp - r - 1) * d->cloc));
		return poison(rc, d, B_Y, 0, d->need[B_Y]);
	case K_BULK_RS:
		AORTA_TRY(poison(rc, d, B_CO, 0, d->need[B_CO]));
		return poison(rc, d, B_Y, 0, d->need[B_Y]);
	}
	return AORTA_EINTERNAL;
}

/* the iteration barrier: every rank posts an event on its main stream
 * and the main stream waits for every peer's; no kernel spins, so it
 * cannot stand on an SM or a hardware queue that other work needs */
static enum aorta_status barrier(struct rank_ctx *rc)
{
	long long n;

	if (rc->s->tp == 1)
		return AORTA_OK;
	AORTA_TRY(xpost(rc, rc->main, &n));
	for (int p = 0; p < rc->s->tp; p++)
		if (p != rc->rank)
			AORTA_TRY(xwait(rc, p, n, rc->main));
	return AORTA_OK;
}

static enum aorta_status compare(struct rank_ctx *rc, const struct dims *d, const void *a, const void *ref,
				 long long n, int slot)
{
	GPU_CHECK(&rc->err, (gpuError_t)tpk_compare(d->dt, a, ref, n, rc->cmp + 2 * slot, rc->main));
	return AORTA_OK;
}

static enum aorta_status job_check(struct rank_ctx *rc, const struct job *j)
{
	const struct dims *d = j->d;
	int r = rc->rank, ncmp = 1;
	unsigned h[8];
	struct plan *ref_plan;

	/* the reference GEMM's plan first: its trials (plan_pick) write
	 * B_R1, which the all-gather reference below fills */
	AORTA_TRY(plan_get(rc, d, d->m, 1, 0, 0, 0, &ref_plan));
	GPU_CHECK(&rc->err, gpuMemsetAsync(rc->cmp, 0, 8 * sizeof(unsigned), rc->main));
	AORTA_TRY(poison_outputs(rc, d));
	AORTA_TRY(barrier(rc));
	AORTA_TRY(body(rc, d, R_CFG, j->cfg, j->cc));
	switch (d->kind) {
	case K_AG: {
		long long slot = d->mloc * d->k;
		AORTA_TRY(coll_ag(rc, d, rc->nccl, rc->main, bp(rc, B_A, r * slot, d), rc->buf[B_R1], slot));
		AORTA_TRY(gemm(rc, d, 0, rc->main, rc->buf[B_R1], rc->buf[B_B], rc->buf[B_R2], d->m, 0));
		AORTA_TRY(compare(rc, d, rc->buf[B_Y], rc->buf[B_R2], d->m * d->n, 0));
		break;
	}
	case K_RS:
		AORTA_TRY(gemm_op(rc, d, rc->main, 0, rc->buf[B_R1]));
		AORTA_TRY(coll_rs(rc, d, rc->nccl, rc->main, rc->buf[B_R1], rc->buf[B_R2], d->mloc * d->n));
		AORTA_TRY(compare(rc, d, rc->buf[B_CO], rc->buf[B_R2], d->mloc * d->n, 0));
		break;
	case K_BULK_AG:
	case K_BULK_RS:
		AORTA_TRY(gemm_op(rc, d, rc->main, 0, rc->buf[B_R1]));
		AORTA_TRY(compare(rc, d, rc->buf[B_Y], rc->buf[B_R1], d->m * d->n, 0));
		if (d->kind == K_BULK_AG) {
			AORTA_TRY(coll_ag(rc, d, rc->nccl, rc->main, bp(rc, B_C, r * d->cloc, d), rc->buf[B_R2], d->cloc));
			AORTA_TRY(compare(rc, d, rc->buf[B_C], rc->buf[B_R2], d->cfull, 1));
		} else {
			AORTA_TRY(coll_rs(rc, d, rc->nccl, rc->main, rc->buf[B_C], rc->buf[B_R2], d->cloc));
			AORTA_TRY(compare(rc, d, rc->buf[B_CO], rc->buf[B_R2], d->cloc, 1));
		}
		ncmp = 2;
		break;
	}
	AORTA_TRY(wait_gpu(rc));
	GPU_CHECK(&rc->err, gpuMemcpy(h, rc->cmp, sizeof(h), gpuMemcpyDeviceToHost));
	rc->chk_err = 0;
	for (int i = 0; i < ncmp; i++) {
		float diff, ref;
		double e;

		memcpy(&diff, &h[2 * i], sizeof(diff));
		memcpy(&ref, &h[2 * i + 1], sizeof(ref));
		e = ref > 0 ? (double)diff / ref : (diff == 0 ? 0.0 : INFINITY);
		if (isnan(diff) || isnan(e))
			e = NAN;
		if (isnan(e) || e > rc->chk_err || isnan(rc->chk_err))
			rc->chk_err = e;
	}
	return AORTA_OK;
}

static enum aorta_status job_run(struct rank_ctx *rc, const struct job *j)
{
	if (j->timed && j->n * 2 > rc->ntev) {
		int want = j->n * 2;
		rc->tev = xrealloc(rc->tev, (size_t)want * sizeof(*rc->tev));
		for (int i = rc->ntev; i < want; i++) {
			if (GPU_CALL(&rc->err, gpuEventCreate(&rc->tev[i]))) {
				rc->ntev = i;
				return AORTA_EGPU;
			}
		}
		rc->ntev = want;
		rc->times = xrealloc(rc->times, (size_t)j->n * sizeof(*rc->times));
	}
	for (int it = 0; it < j->n; it++) {
		if (rc->s->abort)
			return aorta_fail(&rc->err, AORTA_EGPU, "", 0, -1, "stopped (another rank failed)");
		AORTA_TRY(barrier(rc));
		if (j->timed)
			GPU_CHECK(&rc->err, gpuEventRecord(rc->tev[2 * it], rc->main));
		AORTA_TRY(body(rc, j->d, j->what, j->cfg, j->cc));
		if (j->timed)
			GPU_CHECK(&rc->err, gpuEventRecord(rc->tev[2 * it + 1], rc->main));
	}
	AORTA_TRY(wait_gpu(rc));
	if (j->timed)
		for (int it = 0; it < j->n; it++)
			GPU_CHECK(&rc->err, gpuEventElapsedTime(&rc->times[it], rc->tev[2 * it], rc->tev[2 * it + 1]));
	return AORTA_OK;
}

static void job_teardown(struct rank_ctx *rc)
{
	gpuSetDevice(rc->rank);
	if (rc->main)
		gpuDeviceSynchronize();
	for (int i = 0; i < rc->s->ncc; i++) {
		comm_nccl_raw_close(rc->s->cc[i].c[rc->rank], rc->s->abort);
		rc->s->cc[i].c[rc->rank] = NULL;
	}
	comm_nccl_raw_close(rc->nccl, rc->s->abort);
	rc->nccl = NULL;
	for (int i = 0; i < rc->nplans; i++)
		plan_free(&rc->plans[i]);
	rc->nplans = 0;
	if (rc->lt)
		cublasLtDestroy(rc->lt);
	for (int i = 0; i <= NCOMP; i++)
		if (rc->ws[i])
			gpuFree(rc->ws[i]);
	if (rc->ws_tune)
		gpuFree(rc->ws_tune);
	for (int i = 0; i < 2; i++)
		if (rc->tt[i])
			gpuEventDestroy(rc->tt[i]);
	if (rc->tune)
		gpuStreamDestroy(rc->tune);
	for (int b = 0; b < NBUF; b++)
		if (rc->buf[b])
			gpuFree(rc->buf[b]);
	if (rc->cmp)
		gpuFree(rc->cmp);
	for (int i = 0; i < rc->ntev; i++)
		gpuEventDestroy(rc->tev[i]);
	free(rc->tev);
	free(rc->times);
	if (rc->fork)
		gpuEventDestroy(rc->fork);
	if (rc->done)
		gpuEventDestroy(rc->done);
	if (rc->sent)
		gpuEventDestroy(rc->sent);
	for (int i = 0; i < NJOIN; i++)
		if (rc->join[i])
			gpuEventDestroy(rc->join[i]);
	for (int i = 0; i < MAX_SPLITS; i++)
		if (rc->step[i])
			gpuEventDestroy(rc->step[i]);
	for (int i = 0; i < XSLOTS; i++)
		if (rc->xev[i])
			gpuEventDestroy(rc->xev[i]);
	if (rc->main)
		gpuStreamDestroy(rc->main);
	if (rc->comm)
		gpuStreamDestroy(rc->comm);
	if (rc->send)
		gpuStreamDestroy(rc->send);
	for (int i = 0; i < NCOMP; i++)
		if (rc->comp[i])
			gpuStreamDestroy(rc->comp[i]);
}

static void *worker(void *arg)
{
	struct rank_ctx *rc = arg;
	struct tp_session *s = rc->s;
	unsigned seen = 0;

	for (;;) {
		struct job j;
		enum aorta_status st = AORTA_OK;

		pthread_mutex_lock(&s->mu);
		while (s->gen == seen && !s->quit)
			pthread_cond_wait(&s->work, &s->mu);
		if (s->gen == seen && s->quit) {
			pthread_mutex_unlock(&s->mu);
			break;
		}
		seen = s->gen;
		j = s->job;
		pthread_mutex_unlock(&s->mu);

		memset(&rc->err, 0, sizeof(rc->err));
		if (j.id != J_SETUP && j.id != J_TEARDOWN)
			gpuSetDevice(rc->rank);
		switch (j.id) {
		case J_SETUP:
			st = job_setup(rc, &j);
			break;
		case J_COMMINIT:
			st = job_comminit(rc, &j);
			break;
		case J_COMMFREE:
			comm_nccl_raw_close(rc->s->cc[j.cc].c[rc->rank], 0);
			rc->s->cc[j.cc].c[rc->rank] = NULL;
			break;
		case J_PREP:
			st = job_prep(rc, &j);
			break;
		case J_CHECK:
			st = job_check(rc, &j);
			break;
		case J_RUN:
			st = job_run(rc, &j);
			break;
		case J_TEARDOWN:
			job_teardown(rc);
			break;
		}
		if (st != AORTA_OK) {
			gpu_error_rank(&rc->err, st, rc->rank);
			s->abort = 1; /* peers stop enqueuing and stop waiting for this rank */
		}
		pthread_mutex_lock(&s->mu);
		rc->st = st;
		s->ndone++;
		pthread_cond_broadcast(&s->finished);
		pthread_mutex_unlock(&s->mu);
		if (j.id == J_TEARDOWN)
			break;
	}
	return NULL;
}

/* --------------------------------------------------------- dispatcher */

static void abort_comms(struct tp_session *s)
{
	for (int r = 0; r < s->tp; r++) {
		comm_nccl_raw_close(s->r[r].nccl, 1);
		s->r[r].nccl = NULL;
		for (int i = 0; i < s->ncc; i++) {
			comm_nccl_raw_close(s->cc[i].c[r], 1);
			s->cc[i].c[r] = NULL;
		}
	}
}

/* runs j on every rank and waits (bounded); the first failing rank's error */
static enum aorta_status dispatch(struct tp_session *s, const struct job *j, struct aorta_error *e)
{
	struct timespec dl;
	int timed_out = 0;

	pthread_mutex_lock(&s->mu);
	s->job = *j;
	s->ndone = 0;
	s->gen++;
	pthread_cond_broadcast(&s->work);
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += (time_t)(s->timeout_ns / 1000000000LL) + 5;
	while (s->ndone < s->tp) {
		if (pthread_cond_timedwait(&s->finished, &s->mu, &dl) == ETIMEDOUT) {
			timed_out = 1;
			break;
		}
	}
	pthread_mutex_unlock(&s->mu);
	if (timed_out) {
		/* a worker is stuck inside NCCL or the driver: abort the
		 * communicators, give it a moment, and give the session up */
		s->abort = 1;
		abort_comms(s);
		pthread_mutex_lock(&s->mu);
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += 10;
		while (s->ndone < s->tp)
			if (pthread_cond_timedwait(&s->finished, &s->mu, &dl) == ETIMEDOUT)
				break;
		pthread_mutex_unlock(&s->mu);
		s->broken = 1;
		return aorta_fail(e, AORTA_EGPU, "", 0, -1, "tensor-parallel workers did not finish within %lld s",
				  s->timeout_ns / 1000000000LL);
	}
	for (int r = 0; r < s->tp; r++)
		if (s->r[r].st != AORTA_OK && !strstr(s->r[r].err.msg, "another rank failed")) {
			s->broken = 1;
			if (e)
				*e = s->r[r].err;
			return s->r[r].st;
		}
	for (int r = 0; r < s->tp; r++)
		if (s->r[r].st != AORTA_OK) {
			s->broken = 1;
			if (e)
				*e = s->r[r].err;
			return s->r[r].st;
		}
	return AORTA_OK;
}

int tp_gpu_count(void)
{
	int n = 0;

	if (gpuGetDeviceCount(&n) != gpuSuccess) {
		gpuGetLastError();
		return 0;
	}
	return n;
}

void tp_gpu_close(struct tp_session *s)
{
	struct job j;
	int started = 0, idle;

	if (!s)
		return;
	for (int r = 0; r < s->tp; r++)
		started += s->r[r].started;
	pthread_mutex_lock(&s->mu);
	idle = s->gen == 0 || s->ndone >= s->tp;
	pthread_mutex_unlock(&s->mu);
	if (started == s->tp && idle && s->gen > 0) {
		memset(&j, 0, sizeof(j));
		j.id = J_TEARDOWN;
		dispatch(s, &j, NULL);
		pthread_mutex_lock(&s->mu);
		idle = s->ndone >= s->tp;
		pthread_mutex_unlock(&s->mu);
	}
	pthread_mutex_lock(&s->mu);
	s->quit = 1;
	pthread_cond_broadcast(&s->work);
	pthread_mutex_unlock(&s->mu);
	if (!idle)
		return; /* a worker is stuck in the driver: leak rather than hang */
	for (int r = 0; r < s->tp; r++)
		if (s->r[r].started)
			pthread_join(s->r[r].th, NULL);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->work);
	pthread_cond_destroy(&s->finished);
	free(s);
}

enum aorta_status tp_gpu_open(int tp, long long max_elems, struct tp_session **out, int *sm_count,
			      struct aorta_error *e)
{
	struct tp_session *s;
	struct job j;
	int n = tp_gpu_count(), sms = 0;
	const char *to = getenv("AORTA_TP_TIMEOUT_S");
	enum aorta_status st;

	*out = NULL;
	if (tp < 1 || tp > MAXR)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "tensor-parallel size %d is outside 1..%d", tp, MAXR);
	if (max_elems < 1)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "max_elems must be positive (got %lld)", max_elems);
	if (n < tp)
		return aorta_fail(e, AORTA_EGPU, "", 0, -1, "tensor parallelism %d needs %d GPUs, %d visible", tp, tp, n);
	for (int a = 0; a < tp; a++)
		for (int b = 0; b < tp; b++) {
			int ok = 0;
			if (a != b && (gpuDeviceCanAccessPeer(&ok, a, b) != gpuSuccess || !ok))
				return aorta_fail(e, AORTA_EGPU, "", 0, -1,
						  "GPU %d cannot access GPU %d directly (peer access is required)", a, b);
		}
	GPU_CHECK(e, gpuDeviceGetAttribute(&sms, gpuDevAttrMultiProcessorCount, 0));
	comm_nccl_env_defaults();

	s = xcalloc(1, sizeof(*s));
	s->tp = tp;
	s->max_elems = max_elems;
	s->sm_count = sms;
	s->timeout_ns = (to && atoi(to) > 0 ? atoll(to) : 120) * 1000000000LL;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->work, NULL);
	pthread_cond_init(&s->finished, NULL);
	memset(&j, 0, sizeof(j));
	j.id = J_SETUP;
	if (tp > 1 && comm_nccl_unique_id(&j.uid, e)) {
		tp_gpu_close(s);
		return AORTA_EGPU;
	}
	for (int r = 0; r < tp; r++) {
		s->r[r].s = s;
		s->r[r].rank = r;
		s->r[r].posted = -1;
		for (int q = 0; q < MAXR; q++)
			s->r[r].cons[q] = -1;
		if (pthread_create(&s->r[r].th, NULL, worker, &s->r[r]) != 0) {
			tp_gpu_close(s);
			return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "cannot start worker thread %d", r);
		}
		s->r[r].started = 1;
	}
	st = dispatch(s, &j, e);
	if (st == AORTA_OK && tp > 1) {
		/* NCCL only once every rank is set up, so that a rank failing
		 * above cannot leave the others waiting inside ncclCommInitRank */
		j.id = J_COMMINIT;
		j.cc = -1;
		st = dispatch(s, &j, e);
	}
	if (st != AORTA_OK) {
		s->abort = 1; /* teardown aborts the communicators made so far */
		tp_gpu_close(s);
		return st;
	}
	*out = s;
	if (sm_count)
		*sm_count = sms;
	return AORTA_OK;
}

/* ---------------------------------------------------------- measuring */

static const char *method_str(enum tp_method m)
{
	static const char *const n[] = { "none", "bulk", "ring_exchange", "pipeline" };
	return (unsigned)m < TP__NMETHODS ? n[m] : "?";
}

/* rejects what cannot run before any GPU work; fills d */
static enum aorta_status validate(const struct tp_session *s, const struct tp_shape *sh, const struct tp_cfg *cfg,
				  struct dims *d, struct aorta_error *e)
{
	int T = s->tp;

	memset(d, 0, sizeof(*d));
	if (sh->tp != T)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "shape is for tensor parallelism %d, the session has %d",
				  sh->tp, T);
	if (sh->dtype != TP_BF16 && sh->dtype != TP_FP16 && sh->dtype != TP_FP32)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "unknown dtype %d", (int)sh->dtype);
	if (sh->m < 1 || sh->n < 1 || sh->k < 1 || sh->n % 8 || sh->k % 8)
		return aorta_fail(e, AORTA_EINPUT, "", 0, -1,
				  "GEMM %lld x %lld x %lld: dimensions must be positive, n and k multiples of 8",
				  sh->m, sh->n, sh->k);
	if ((unsigned)cfg->method >= TP__NMETHODS)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "unknown method %d", (int)cfg->method);
	if (cfg->atomic_gemm)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "atomic_gemm needs FP8, which is not measured");
	if (cfg->num_sm < 0 || cfg->num_sm > s->sm_count)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "num_sm %d is outside 0..%d", cfg->num_sm, s->sm_count);
	if (cfg->set_sm_margin && cfg->num_sm >= s->sm_count)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "set_sm_margin with num_sm %d leaves the GEMM no SM",
				  cfg->num_sm);
	if (cfg->cga_size < 0 || cfg->cga_size > 8)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "cga_size %d is outside 0..8", cfg->cga_size);
	d->tp = T;
	d->dt = sh->dtype;
	d->esz = sh->dtype == TP_FP32 ? 4 : 2;
	d->m = sh->m, d->n = sh->n, d->k = sh->k;
	if (sh->bulk_only) {
		d->kind = sh->coll == TP_AG ? K_BULK_AG : K_BULK_RS;
		if (cfg->method != TP_NONE && cfg->method != TP_BULK)
			return aorta_fail(e, AORTA_EUSAGE, "", 0, -1,
					  "%s: an independent (bulk) collective supports none and bulk only",
					  method_str(cfg->method));
		if (sh->coll_rows < 1 || sh->coll_cols < 1 || sh->coll_rows % T || (sh->coll_rows / T * sh->coll_cols) % 8)
			return aorta_fail(e, AORTA_EINPUT, "", 0, -1,
					  "collective tensor [%lld, %lld] must have rows divisible by %d and 8-element shards",
					  sh->coll_rows, sh->coll_cols, T);
		d->cfull = sh->coll_rows * sh->coll_cols;
		d->cloc = d->cfull / T;
	} else {
		d->kind = sh->coll == TP_AG ? K_AG : K_RS;
		if (cfg->method == TP_BULK)
			return aorta_fail(e, AORTA_EUSAGE, "", 0, -1,
					  "bulk needs an independent collective (qkv/fc1 dgrad or wgrad)");
		if (d->kind == K_AG && cfg->method == TP_PIPELINE)
			return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "all-gather operators reject pipeline (as TE does)");
		if (sh->m % T)
			return aorta_fail(e, AORTA_EINPUT, "", 0, -1, "m %lld is not divisible by tensor parallelism %d",
					  sh->m, T);
		if (sh->coll_rows != sh->m || sh->coll_cols != (d->kind == K_AG ? sh->k : sh->n))
			return aorta_fail(e, AORTA_EINPUT, "", 0, -1,
					  "collective tensor [%lld, %lld] does not match the GEMM's %s [%lld, %lld]",
					  sh->coll_rows, sh->coll_cols, d->kind == K_AG ? "input" : "output", sh->m,
					  d->kind == K_AG ? sh->k : sh->n);
		d->cfull = sh->coll_rows * sh->coll_cols;
		d->cloc = d->cfull / T;
	}
	d->mloc = d->m / T;
	if (cfg->method == TP_PIPELINE) {
		if (cfg->num_splits < 1 || cfg->num_splits > MAX_SPLITS || d->mloc % cfg->num_splits)
			return aorta_fail(e, AORTA_EUSAGE, "", 0, -1,
					  "num_splits %d must be in 1..%d and divide the %lld rows per rank",
					  cfg->num_splits, MAX_SPLITS, d->mloc);
	}
	if (cfg->method == TP_RING_EXCHANGE && d->kind == K_RS && T == 2 && cfg->num_splits >= 4 &&
	    (cfg->num_splits % 2 || cfg->num_splits > MAX_SPLITS || d->mloc % (cfg->num_splits / 2)))
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1,
				  "ring_exchange reduce-scatter with num_splits %d: at TP 2 it must be even, at most %d, "
				  "and num_splits / 2 must divide the %lld rows per rank",
				  cfg->num_splits, MAX_SPLITS, d->mloc);
	if (cfg->method == TP_RING_EXCHANGE && cfg->aggregate && T % 2 && T > 1)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "aggregate needs an even tensor parallelism (got %d)", T);
	d->need[B_A] = d->m * d->k;
	d->need[B_B] = d->k * d->n;
	switch (d->kind) {
	case K_AG:
		d->need[B_Y] = d->m * d->n;
		d->need[B_R1] = d->m * d->k;
		d->need[B_R2] = d->m * d->n;
		break;
	case K_RS:
		d->need[B_P] = d->m * d->n;
		d->need[B_C] = d->m * d->n;
		d->need[B_CO] = d->mloc * d->n;
		d->need[B_R1] = d->m * d->n;
		d->need[B_R2] = d->mloc * d->n;
		break;
	case K_BULK_AG:
	case K_BULK_RS:
		d->need[B_Y] = d->m * d->n;
		d->need[B_C] = d->cfull;
		d->need[B_CO] = d->cloc;
		d->need[B_R1] = d->m * d->n;
		d->need[B_R2] = d->cfull;
		break;
	}
	/* B_R1 also takes the plan trials' outputs (plan_pick): m x n at least */
	if (d->need[B_R1] < d->m * d->n)
		d->need[B_R1] = d->m * d->n;
	for (int b = 0; b < NBUF; b++)
		if (d->need[b] > s->max_elems)
			return aorta_fail(e, AORTA_EUSAGE, "", 0, -1,
					  "shape needs %lld elements in one operand, the session was opened for %lld",
					  d->need[b], s->max_elems);
	return AORTA_OK;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* per-iteration max over ranks, then median/min/max over iterations */
static void summarize(const struct tp_session *s, int n, double *med, double *mn, double *mx)
{
	double *v = xmalloc((size_t)n * sizeof(*v));

	for (int i = 0; i < n; i++) {
		v[i] = 0;
		for (int r = 0; r < s->tp; r++)
			if (s->r[r].times[i] > v[i])
				v[i] = s->r[r].times[i];
	}
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	*med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
	if (mn)
		*mn = v[0];
	if (mx)
		*mx = v[n - 1];
	free(v);
}

static enum aorta_status run_timed(struct tp_session *s, struct job *j, enum run_what w, int warmup, int iters,
				   double *med, double *mn, double *mx, struct aorta_error *e)
{
	j->id = J_RUN;
	j->what = w;
	if (warmup > 0) {
		j->n = warmup;
		j->timed = 0;
		AORTA_TRY(dispatch(s, j, e));
	}
	j->n = iters;
	j->timed = 1;
	AORTA_TRY(dispatch(s, j, e));
	summarize(s, iters, med, mn, mx);
	return AORTA_OK;
}

/* index of the (num_sm, cga) communicator, created on first use */
static enum aorta_status comm_for(struct tp_session *s, int num_sm, int cga, int *idx, struct aorta_error *e)
{
	struct job j;

	for (int i = 0; i < s->ncc; i++)
		if (s->cc[i].num_sm == num_sm && s->cc[i].cga == cga) {
			*idx = i;
			return AORTA_OK;
		}
	memset(&j, 0, sizeof(j));
	if (s->ncc == MAX_CC) {
		/* full: destroy the communicators made longest ago (round robin) */
		j.id = J_COMMFREE;
		j.cc = s->next_evict;
		s->next_evict = (s->next_evict + 1) % MAX_CC;
		AORTA_TRY(dispatch(s, &j, e));
	} else {
		j.cc = s->ncc++;
	}
	j.id = J_COMMINIT;
	j.num_sm = num_sm;
	j.cga = cga;
	AORTA_TRY(comm_nccl_unique_id(&j.uid, e));
	s->cc[j.cc].num_sm = num_sm;
	s->cc[j.cc].cga = cga;
	AORTA_TRY(dispatch(s, &j, e));
	*idx = j.cc;
	return AORTA_OK;
}

enum aorta_status tp_gpu_measure(struct tp_session *s, const struct tp_shape *sh, const struct tp_cfg *cfg,
				 const struct tp_measure_opts *o, struct tp_meas *out, struct aorta_error *e)
{
	struct dims d;
	struct job j;
	int warmup = o && o->warmup >= 0 ? o->warmup : 5, iters = o && o->iters > 0 ? o->iters : 20;
	double tol;

	memset(out, 0, sizeof(*out));
	out->overlap_ratio = NAN;
	out->max_rel_err = NAN;
	if (!s)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "no tensor-parallel session");
	AORTA_TRY(validate(s, sh, cfg, &d, e));
	if (s->broken || s->abort)
		return aorta_fail(e, AORTA_EGPU, "", 0, -1, "the tensor-parallel session failed earlier; open a new one");

	memset(&j, 0, sizeof(j));
	j.d = &d;
	j.cfg = cfg;
	j.cc = -1;
	j.seed = o ? o->seed : 1;
	if (s->tp > 1 && (cfg->method == TP_BULK || cfg->method == TP_PIPELINE) && cfg->num_sm > 0)
		AORTA_TRY(comm_for(s, cfg->num_sm, cfg->cga_size, &j.cc, e));
	j.id = J_PREP;
	AORTA_TRY(dispatch(s, &j, e));

	if (o && o->check) {
		j.id = J_CHECK;
		AORTA_TRY(dispatch(s, &j, e));
		out->max_rel_err = 0;
		for (int r = 0; r < s->tp; r++) {
			double x = s->r[r].chk_err;
			if (isnan(x) || x > out->max_rel_err)
				out->max_rel_err = x;
			if (isnan(x))
				break;
		}
		tol = (2 + s->tp) * (d.dt == TP_BF16 ? 1.0 / 256 : d.dt == TP_FP16 ? 1.0 / 2048 : 1.0 / 65536);
		out->check_ok = !isnan(out->max_rel_err) && out->max_rel_err <= tol;
		snprintf(out->check_msg, sizeof(out->check_msg),
			 "%s: max |out - ref| / max |ref| = %.3g over %d rank(s), bound %.3g ((2 + tp) u)",
			 out->check_ok ? "ok" : "mismatch", out->max_rel_err, s->tp, tol);
	} else {
		snprintf(out->check_msg, sizeof(out->check_msg), "not checked");
	}

	AORTA_TRY(run_timed(s, &j, R_GEMM, warmup, iters, &out->gemm_ms, NULL, NULL, e));
	AORTA_TRY(run_timed(s, &j, R_COMM, warmup, iters, &out->comm_ms, NULL, NULL, e));
	AORTA_TRY(run_timed(s, &j, R_SERIAL, warmup, iters, &out->serial_ms, NULL, NULL, e));

	/* the configuration: warm-up, then the timed iterations, traced */
	j.id = J_RUN;
	j.what = R_CFG;
	j.n = warmup;
	j.timed = 0;
	if (warmup > 0)
		AORTA_TRY(dispatch(s, &j, e));
	struct cupti_capture *cap = NULL;
	if (o && o->trace_dir && *o->trace_dir) {
		struct cupti_opts co;
		struct aorta_error ce;

		memset(&co, 0, sizeof(co));
		co.output_dir = o->trace_dir;
		co.rank = 0;
		co.world_size = s->tp;
		co.device = 0;
		co.sched.active = 1;
		co.sched.repeat = 1;
		if (cupti_open(&cap, &co, &ce) != AORTA_OK) {
			aorta_warn("no trace for %s: %s", method_str(cfg->method), ce.msg);
			cap = NULL;
		}
	}
	j.n = iters;
	j.timed = 1;
	enum aorta_status st = dispatch(s, &j, e);
	if (cap) {
		struct aorta_error ce;
		struct cupti_stats cs;

		if (st == AORTA_OK && cupti_step(cap, &ce) != AORTA_OK)
			aorta_warn("trace for %s: %s", method_str(cfg->method), ce.msg);
		cupti_get_stats(cap, &cs);
		cupti_close(cap, &ce);
		snprintf(out->trace_path, sizeof(out->trace_path), "%s", cs.last_path);
	}
	if (st != AORTA_OK)
		return st;
	summarize(s, iters, &out->e2e_ms, &out->e2e_min_ms, &out->e2e_max_ms);
	return AORTA_OK;
}

/*
 * tp_session_gpu.c - the GPU side of `aorta tune-tp` (interface in tp.h): a
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
#include "tp/tp_gpu_int.h"

#include "base/stats.h"

/* ------------------------------------------------------------ workers */

enum aorta_status tpg_wait_gpu(struct rank_ctx *rc)
{
	long long t0 = tpg_now_ns();

	GPU_CHECK(&rc->err, gpuEventRecord(rc->done, rc->main));
	for (;;) {
		gpuError_t q = gpuEventQuery(rc->done);

		if (q == gpuSuccess)
			break;
		if (q != gpuErrorNotReady)
			return GPU_RESULT(&rc->err, "gpuEventQuery (waiting for the GPU)", q);
		if (rc->s->abort)
			return aorta_fail(&rc->err, AORTA_EGPU, "", 0, -1, "stopped (another rank failed)");
		if (tpg_now_ns() - t0 > rc->s->timeout_ns)
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
	ncclComm_t nc = NULL;
	enum aorta_status st = comm_nccl_raw_open(&nc, rc->s->tp, &j->uid, rc->rank, &o, &rc->err);
	rc->s->cc.e[j->cc].c[rc->rank] = nc;
	return st;
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
		GPU_CHECK(&rc->err, (gpuError_t)tpk_fill(d->dt, tpg_bp(rc, B_A, r * slot, d), slot, seed_of(j->seed, 1, r), rc->main));
		AORTA_TRY(tpg_coll_ag(rc, d, rc->nccl, rc->main, tpg_bp(rc, B_A, r * slot, d), rc->buf[B_A], slot));
	} else {
		GPU_CHECK(&rc->err, (gpuError_t)tpk_fill(d->dt, rc->buf[B_A], d->m * d->k, seed_of(j->seed, 1, r), rc->main));
	}
	if (d->kind == K_BULK_AG)
		GPU_CHECK(&rc->err, (gpuError_t)tpk_fill(d->dt, tpg_bp(rc, B_C, r * d->cloc, d), d->cloc, seed_of(j->seed, 3, r), rc->main));
	else if (d->kind == K_BULK_RS)
		GPU_CHECK(&rc->err, (gpuError_t)tpk_fill(d->dt, rc->buf[B_C], d->cfull, seed_of(j->seed, 3, r), rc->main));
	return tpg_wait_gpu(rc);
}

/* the iteration barrier: every rank posts an event on its main stream
 * and the main stream waits for every peer's; no kernel spins, so it
 * cannot stand on an SM or a hardware queue that other work needs */
enum aorta_status tpg_barrier(struct rank_ctx *rc)
{
	long long n;

	if (rc->s->tp == 1)
		return AORTA_OK;
	AORTA_TRY(tpg_xpost(rc, rc->main, &n));
	for (int p = 0; p < rc->s->tp; p++)
		if (p != rc->rank)
			AORTA_TRY(tpg_xwait(rc, p, n, rc->main));
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
		AORTA_TRY(tpg_barrier(rc));
		if (j->timed)
			GPU_CHECK(&rc->err, gpuEventRecord(rc->tev[2 * it], rc->main));
		AORTA_TRY(tpg_body(rc, j->d, j->what, j->cfg, j->cc));
		if (j->timed)
			GPU_CHECK(&rc->err, gpuEventRecord(rc->tev[2 * it + 1], rc->main));
	}
	AORTA_TRY(tpg_wait_gpu(rc));
	if (j->timed)
		for (int it = 0; it < j->n; it++)
			GPU_CHECK(&rc->err, gpuEventElapsedTime(&rc->times[it], rc->tev[2 * it], rc->tev[2 * it + 1]));
	return AORTA_OK;
}

/* Closing a session: J_FINALIZE on every worker at once (ncclCommFinalize
 * is called by a communicator's ranks together), then J_TEARDOWN one rank
 * after the other (job.only), so that no worker destroys a communicator,
 * frees memory or destroys a stream while another does.  Why: with every
 * worker tearing down at once, about 1 run of test_tp in 20 on 2 x H100
 * (CUDA 13.0, NCCL 2.28) died inside ncclCommDestroy -> cuMemUnmap
 * (libcuda) -> free: glibc's "double free or corruption (out)", or a
 * segfault (test_tp prints the stack).  Serialising only the
 * ncclCommDestroy calls across the process did not stop it (1 of 17 runs;
 * 2 of 48 before), and a concurrent stress of 300 open/all-reduce/close
 * rounds of two communicators did not reproduce it.  In this order, 141
 * runs of test_tp on 2 x H200 all passed (the fault's rate was measured on
 * 2 x H100; on H200 it was seen, about 1 run in 25, not measured). */
static void job_finalize(struct rank_ctx *rc)
{
	if (rc->s->abort)
		return; /* a peer failed: teardown aborts the communicators instead */
	gpuSetDevice(rc->rank);
	if (rc->main)
		gpuDeviceSynchronize();
	for (int i = 0; i < rc->s->cc.n; i++)
		comm_nccl_raw_finalize(rc->s->cc.e[i].c[rc->rank]);
	comm_nccl_raw_finalize(rc->nccl);
	rc->finalized = 1;
}

/* closes nc: only destroys it where job_finalize ran */
static void close_comm(struct rank_ctx *rc, ncclComm_t nc)
{
	if (rc->finalized && !rc->s->abort)
		comm_nccl_raw_destroy(nc);
	else
		comm_nccl_raw_close(nc, rc->s->abort);
}

static void job_teardown(struct rank_ctx *rc)
{
	gpuSetDevice(rc->rank);
	if (rc->main)
		gpuDeviceSynchronize();
	for (int i = 0; i < rc->s->cc.n; i++) {
		close_comm(rc, rc->s->cc.e[i].c[rc->rank]);
		rc->s->cc.e[i].c[rc->rank] = NULL;
	}
	close_comm(rc, rc->nccl);
	rc->nccl = NULL;
	for (int i = 0; i < rc->nplans; i++)
		tpg_plan_free(&rc->plans[i]);
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
		if (j.id != J_SETUP && j.id != J_FINALIZE && j.id != J_TEARDOWN)
			gpuSetDevice(rc->rank);
		switch (j.id) {
		case J_SETUP:
			st = job_setup(rc, &j);
			break;
		case J_COMMINIT:
			st = job_comminit(rc, &j);
			break;
		case J_COMMFREE:
			comm_nccl_raw_close(rc->s->cc.e[j.cc].c[rc->rank], 0);
			rc->s->cc.e[j.cc].c[rc->rank] = NULL;
			break;
		case J_PREP:
			st = job_prep(rc, &j);
			break;
		case J_CHECK:
			st = tpg_job_check(rc, &j);
			break;
		case J_RUN:
			st = job_run(rc, &j);
			break;
		case J_FINALIZE:
			job_finalize(rc);
			break;
		case J_TEARDOWN:
			if (j.only == rc->rank)
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
	}
	return NULL;
}

/* --------------------------------------------------------- dispatcher */

static void abort_comms(struct tp_session *s)
{
	for (int r = 0; r < s->tp; r++) {
		comm_nccl_raw_close(s->r[r].nccl, 1);
		s->r[r].nccl = NULL;
		for (int i = 0; i < s->cc.n; i++) {
			comm_nccl_raw_close(s->cc.e[i].c[r], 1);
			s->cc.e[i].c[r] = NULL;
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
		j.id = J_FINALIZE;
		dispatch(s, &j, NULL);
		j.id = J_TEARDOWN;
		for (j.only = 0; j.only < s->tp; j.only++) {
			pthread_mutex_lock(&s->mu);
			idle = s->ndone >= s->tp;
			pthread_mutex_unlock(&s->mu);
			if (!idle)
				break; /* a worker is stuck (dispatch timed out) */
			dispatch(s, &j, NULL);
		}
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
	*med = median_mid_sorted(v, (size_t)n);
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

/* index of the (num_sm, cga) communicator, created on first use (the
 * cache's bookkeeping is comm/comm_cache.h; a slot whose communicators
 * could not be made is left with a key nothing matches) */
static enum aorta_status comm_for(struct tp_session *s, int num_sm, int cga, int *idx, struct aorta_error *e)
{
	struct job j;
	enum aorta_status st = AORTA_OK;
	int slot;

	enum comm_cache_how how = comm_cache_slot(&s->cc, num_sm, cga, &slot);
	if (how == COMM_CACHE_HIT) {
		*idx = slot;
		return AORTA_OK;
	}
	memset(&j, 0, sizeof(j));
	j.cc = slot;
	if (how == COMM_CACHE_EVICT) {
		/* full: destroy the communicators made longest ago first */
		j.id = J_COMMFREE;
		st = dispatch(s, &j, e);
	}
	j.id = J_COMMINIT;
	j.num_sm = num_sm;
	j.cga = cga;
	if (!st)
		st = comm_nccl_unique_id(&j.uid, e);
	if (!st)
		st = dispatch(s, &j, e);
	if (st) {
		s->cc.e[slot].max_ctas = -1;
		return st;
	}
	*idx = slot;
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
	AORTA_TRY(tpg_validate(s, sh, cfg, &d, e));
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
			aorta_warn("no trace for %s: %s", tpg_method_str(cfg->method), ce.msg);
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
			aorta_warn("trace for %s: %s", tpg_method_str(cfg->method), ce.msg);
		cupti_get_stats(cap, &cs);
		cupti_close(cap, &ce);
		snprintf(out->trace_path, sizeof(out->trace_path), "%s", cs.last_path);
	}
	if (st != AORTA_OK)
		return st;
	summarize(s, iters, &out->e2e_ms, &out->e2e_min_ms, &out->e2e_max_ms);
	return AORTA_OK;
}

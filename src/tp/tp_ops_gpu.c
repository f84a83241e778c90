/*
 * tp_ops_gpu.c - tune-tp's operators (see tp_session_gpu.c for the design):
 * cross-rank event ordering, the cuBLASLt plan cache and GEMMs, the NCCL
 * collectives, and the methods none, bulk, ring_exchange and pipeline as
 * the body of one iteration on one rank.  GPU builds only.
 */
#include "tp/tp_gpu_int.h"

/* ------------------------------------------------------------ helpers */

long long tpg_now_ns(void)
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

char *tpg_bp(struct rank_ctx *rc, enum buf_id b, long long elems, const struct dims *d)
{
	return (char *)rc->buf[b] + (size_t)elems * d->esz;
}

static char *peer_bp(struct rank_ctx *rc, int peer, enum buf_id b, long long elems, const struct dims *d)
{
	return tpg_bp(&rc->s->r[peer], b, elems, d);
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
			t0 = tpg_now_ns();
		else if (tpg_now_ns() - t0 > rc->s->timeout_ns)
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
enum aorta_status tpg_xpost(struct rank_ctx *rc, gpuStream_t st, long long *seq)
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
enum aorta_status tpg_xwait(struct rank_ctx *rc, int peer, long long n, gpuStream_t st)
{
	struct rank_ctx *pc = &rc->s->r[peer];

	AORTA_TRY(xhost_wait(rc, &pc->posted, n, "a posted"));
	GPU_CHECK(&rc->err, gpuStreamWaitEvent(st, pc->xev[n % XSLOTS], 0));
	__atomic_store_n(&pc->cons[rc->rank], n, __ATOMIC_RELEASE);
	return AORTA_OK;
}

/* ------------------------------------------------------------- GEMMs */

void tpg_plan_free(struct plan *p)
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
 * the output goes to B_R1, which tpg_validate() sizes to at least m x n and
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
enum aorta_status tpg_plan_get(struct rank_ctx *rc, const struct dims *d, long long rows, int batch, long long sa,
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
			tpg_plan_free(&rc->plans[i]);
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
enum aorta_status tpg_gemm(struct rank_ctx *rc, const struct dims *d, int widx, gpuStream_t st, const void *A,
			      const void *B, void *Y, long long rows, int smt)
{
	struct plan *p;

	AORTA_TRY(tpg_plan_get(rc, d, rows, 1, 0, 0, smt, &p));
	return gemm_run(rc, p, widx, st, A, B, Y);
}

/* ------------------------------------------------------- collectives */

/* all-gather of count elements per rank, in place when send is recv's slot */
enum aorta_status tpg_coll_ag(struct rank_ctx *rc, const struct dims *d, ncclComm_t c, gpuStream_t st,
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
enum aorta_status tpg_coll_rs(struct rank_ctx *rc, const struct dims *d, ncclComm_t c, gpuStream_t st,
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
		return tpg_coll_ag(rc, d, c, st, tpg_bp(rc, B_A, rc->rank * slot, d), rc->buf[B_A], slot);
	case K_RS:
		return tpg_coll_rs(rc, d, c, st, rc->buf[B_P], rc->buf[B_CO], d->mloc * d->n);
	case K_BULK_AG:
		return tpg_coll_ag(rc, d, c, st, tpg_bp(rc, B_C, rc->rank * d->cloc, d), rc->buf[B_C], d->cloc);
	case K_BULK_RS:
		return tpg_coll_rs(rc, d, c, st, rc->buf[B_C], rc->buf[B_CO], d->cloc);
	}
	return AORTA_EINTERNAL;
}

/* the unsplit GEMM on all SMs (gemm_ms, none, the check's reference) */
enum aorta_status tpg_gemm_op(struct rank_ctx *rc, const struct dims *d, gpuStream_t st, int widx, void *Y)
{
	return tpg_gemm(rc, d, widx, st, rc->buf[B_A], rc->buf[B_B], Y, d->m, 0);
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
	return cc < 0 ? rc->nccl : (ncclComm_t)rc->s->cc.e[cc].c[rc->rank];
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
		AORTA_TRY(tpg_gemm_op(rc, d, rc->main, 0, rc->buf[B_P]));
		return coll_op(rc, d, rc->nccl, rc->main);
	}
	AORTA_TRY(coll_op(rc, d, rc->nccl, rc->main));
	return tpg_gemm_op(rc, d, rc->main, 0, rc->buf[B_Y]);
}

static enum aorta_status body_bulk(struct rank_ctx *rc, const struct dims *d, const struct tp_cfg *cfg, int cc)
{
	gpuStream_t ss[2] = { rc->comm, rc->comp[0] };

	AORTA_TRY(fork_streams(rc, ss, 2));
	AORTA_TRY(coll_op(rc, d, comm_of(rc, cc), rc->comm));
	AORTA_TRY(tpg_gemm(rc, d, 1, rc->comp[0], rc->buf[B_A], rc->buf[B_B], rc->buf[B_Y], d->m, sm_target(rc, cfg)));
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
				AORTA_TRY(chunk_copy(rc, cfg, tpg_bp(rc, B_A, c * slot, d), r, peer_bp(rc, c, B_A, c * slot, d), c,
						 bytes));
		GPU_CHECK(&rc->err, gpuEventRecord(rc->step[i], rc->send));
	}
	for (int i = 0; i < steps; i++) {
		int j = i % ncomp, c = chunk0[i];
		gpuStream_t cs = rc->comp[j];

		if (i > 0 || agg)
			GPU_CHECK(&rc->err, gpuStreamWaitEvent(cs, rc->step[i], 0));
		AORTA_TRY(tpg_gemm(rc, d, 1 + j, cs, tpg_bp(rc, B_A, c * slot, d), rc->buf[B_B],
			   tpg_bp(rc, B_Y, c * d->mloc * d->n, d), d->mloc * width, smt));
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
		const void *A = tpg_bp(rc, B_A, dst * d->mloc * d->k, d);

		if (dst == r) { /* own partial, last, straight into its receive slot */
			AORTA_TRY(tpg_gemm(rc, d, 1 + j, cs, A, rc->buf[B_B], tpg_bp(rc, B_C, r * part, d), d->mloc, smt));
			continue;
		}
		AORTA_TRY(tpg_gemm(rc, d, 1 + j, cs, A, rc->buf[B_B], tpg_bp(rc, B_P, dst * part, d), d->mloc, smt));
		GPU_CHECK(&rc->err, gpuEventRecord(rc->step[i], cs));
		GPU_CHECK(&rc->err, gpuStreamWaitEvent(rc->send, rc->step[i], 0));
		AORTA_TRY(chunk_copy(rc, cfg, peer_bp(rc, dst, B_C, r * part, d), dst, tpg_bp(rc, B_P, dst * part, d), r, bytes));
		AORTA_TRY(tpg_xpost(rc, rc->send, NULL));
	}
	AORTA_TRY(join_streams(rc, ss, ncomp + 1));
	/* source s pushed to this rank at its step (r - s - 1) mod T */
	for (int sh = 1; sh < T; sh++) {
		int src = (r - sh + T) % T;
		AORTA_TRY(tpg_xwait(rc, src, base + (r - src - 1 + T) % T, rc->main));
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

	AORTA_TRY(tpg_plan_get(rc, d, msub, 1, 0, 0, smt, &p));
	AORTA_TRY(fork_streams(rc, ss, 2));
	for (int h = 0; h < q; h++) {
		long long row = peer * d->mloc + h * msub;
		char *part = tpg_bp(rc, B_P, row * d->n, d);

		AORTA_TRY(gemm_run(rc, p, 1, rc->comp[0], tpg_bp(rc, B_A, row * d->k, d), rc->buf[B_B], part));
		GPU_CHECK(&rc->err, gpuEventRecord(rc->step[h], rc->comp[0]));
		GPU_CHECK(&rc->err, gpuStreamWaitEvent(rc->send, rc->step[h], 0));
		AORTA_TRY(chunk_copy(rc, cfg, peer_bp(rc, peer, B_C, (r * d->mloc + h * msub) * d->n, d), peer, part, r,
				 bytes));
		AORTA_TRY(tpg_xpost(rc, rc->send, NULL)); /* event base + h: push h landed */
	}
	/* the own sub-chunks: GEMM h waits, on the GPU, for the event the
	 * peer recorded after its push h (no spinning kernel anywhere) */
	for (int h = 0; h < q; h++) {
		long long row = r * d->mloc + h * msub;

		AORTA_TRY(tpg_xwait(rc, peer, base + h, rc->comp[0]));
		AORTA_TRY(gemm_acc(rc, p, 1, rc->comp[0], tpg_bp(rc, B_A, row * d->k, d), rc->buf[B_B],
			       tpg_bp(rc, B_C, (peer * d->mloc + h * msub) * d->n, d), tpg_bp(rc, B_CO, h * sub, d)));
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
		AORTA_TRY(tpg_plan_get(rc, d, msub, T, d->mloc * d->k, blk, smt, &bat));
	AORTA_TRY(fork_streams(rc, ss, 2));
	for (int s = 0; s < ns; s++) {
		char *stage = tpg_bp(rc, B_P, (long long)s * T * blk, d);
		const char *A = tpg_bp(rc, B_A, s * msub * d->k, d);

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
				AORTA_TRY(tpg_gemm(rc, d, 1, rc->comp[0], A + (size_t)dst * d->mloc * d->k * d->esz,
					   rc->buf[B_B], stage + (size_t)dst * blk * d->esz, msub, smt));
		}
		GPU_CHECK(&rc->err, gpuEventRecord(rc->step[s], rc->comp[0]));
		GPU_CHECK(&rc->err, gpuStreamWaitEvent(rc->comm, rc->step[s], 0));
		AORTA_TRY(tpg_coll_rs(rc, d, c, rc->comm, stage, tpg_bp(rc, B_CO, s * blk, d), blk));
	}
	return join_streams(rc, ss, 2);
}

enum aorta_status tpg_body(struct rank_ctx *rc, const struct dims *d, enum run_what w, const struct tp_cfg *cfg,
			      int cc)
{
	switch (w) {
	case R_GEMM:
		return tpg_gemm_op(rc, d, rc->main, 0, d->kind == K_RS ? rc->buf[B_P] : rc->buf[B_Y]);
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

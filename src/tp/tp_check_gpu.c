/*
 * tp_check_gpu.c - tune-tp's checks (see tp_session_gpu.c, "Checks"):
 * outputs poisoned before a checked run, the comparison of every rank's
 * output with the unsplit GEMM + NCCL reference, and the validation of a
 * configuration against the shape before anything runs.  GPU builds only.
 */
#include "tp/tp_gpu_int.h"

/* 0xff bytes (NaN in bf16, fp16 and fp32) over n elements from off */
static enum aorta_status poison(struct rank_ctx *rc, const struct dims *d, enum buf_id b, long long off,
				long long n)
{
	if (n > 0)
		GPU_CHECK(&rc->err, gpuMemsetAsync(tpg_bp(rc, b, off, d), 0xff, (size_t)n * d->esz, rc->main));
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

static enum aorta_status compare(struct rank_ctx *rc, const struct dims *d, const void *a, const void *ref,
				 long long n, int slot)
{
	GPU_CHECK(&rc->err, (gpuError_t)tpk_compare(d->dt, a, ref, n, rc->cmp + 2 * slot, rc->main));
	return AORTA_OK;
}

enum aorta_status tpg_job_check(struct rank_ctx *rc, const struct job *j)
{
	const struct dims *d = j->d;
	int r = rc->rank, ncmp = 1;
	unsigned h[8];
	struct plan *ref_plan;

	/* the reference GEMM's plan first: its trials (plan_pick) write
	 * B_R1, which the all-gather reference below fills */
	AORTA_TRY(tpg_plan_get(rc, d, d->m, 1, 0, 0, 0, &ref_plan));
	GPU_CHECK(&rc->err, gpuMemsetAsync(rc->cmp, 0, 8 * sizeof(unsigned), rc->main));
	AORTA_TRY(poison_outputs(rc, d));
	AORTA_TRY(tpg_barrier(rc));
	AORTA_TRY(tpg_body(rc, d, R_CFG, j->cfg, j->cc));
	switch (d->kind) {
	case K_AG: {
		long long slot = d->mloc * d->k;
		AORTA_TRY(tpg_coll_ag(rc, d, rc->nccl, rc->main, tpg_bp(rc, B_A, r * slot, d), rc->buf[B_R1], slot));
		AORTA_TRY(tpg_gemm(rc, d, 0, rc->main, rc->buf[B_R1], rc->buf[B_B], rc->buf[B_R2], d->m, 0));
		AORTA_TRY(compare(rc, d, rc->buf[B_Y], rc->buf[B_R2], d->m * d->n, 0));
		break;
	}
	case K_RS:
		AORTA_TRY(tpg_gemm_op(rc, d, rc->main, 0, rc->buf[B_R1]));
		AORTA_TRY(tpg_coll_rs(rc, d, rc->nccl, rc->main, rc->buf[B_R1], rc->buf[B_R2], d->mloc * d->n));
		AORTA_TRY(compare(rc, d, rc->buf[B_CO], rc->buf[B_R2], d->mloc * d->n, 0));
		break;
	case K_BULK_AG:
	case K_BULK_RS:
		AORTA_TRY(tpg_gemm_op(rc, d, rc->main, 0, rc->buf[B_R1]));
		AORTA_TRY(compare(rc, d, rc->buf[B_Y], rc->buf[B_R1], d->m * d->n, 0));
		if (d->kind == K_BULK_AG) {
			AORTA_TRY(tpg_coll_ag(rc, d, rc->nccl, rc->main, tpg_bp(rc, B_C, r * d->cloc, d), rc->buf[B_R2], d->cloc));
			AORTA_TRY(compare(rc, d, rc->buf[B_C], rc->buf[B_R2], d->cfull, 1));
		} else {
			AORTA_TRY(tpg_coll_rs(rc, d, rc->nccl, rc->main, rc->buf[B_C], rc->buf[B_R2], d->cloc));
			AORTA_TRY(compare(rc, d, rc->buf[B_CO], rc->buf[B_R2], d->cloc, 1));
		}
		ncmp = 2;
		break;
	}
	AORTA_TRY(tpg_wait_gpu(rc));
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

/* ---------------------------------------------------------- measuring */

const char *tpg_method_str(enum tp_method m)
{
	static const char *const n[] = { "none", "bulk", "ring_exchange", "pipeline" };
	return (unsigned)m < TP__NMETHODS ? n[m] : "?";
}

/* rejects what cannot run before any GPU work; fills d */
enum aorta_status tpg_validate(const struct tp_session *s, const struct tp_shape *sh, const struct tp_cfg *cfg,
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
					  tpg_method_str(cfg->method));
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

/*
 * wl_continuous_batch_gpu.c - hwq workload "continuous_batch": 8 attention
 * blocks x + proj(MHA(LayerNorm(x))) (hidden 1024, 8 heads, upstream's
 * AttentionBlock: no feed-forward), run on a prefill batch of 2 x 512
 * tokens and, concurrently, a decode batch of 16 x 1 token; then a KV-cache
 * touch (cache[l][:, :, 0, :] = 0.99 cache + 0.01 for layers 0 and 1 of a
 * cache [8 layers][k, v][18][8 heads][2048][128], as upstream).  Unit:
 * tokens/s, 2 x 512 + 16 = 1040 tokens per iteration.
 *
 * Streams (N = 4..16), t = max(1, N/3): prefill [0, t), decode [t, 2t),
 * cache [2t, N).  The prefill stack's 1024 rows are split over the prefill
 * streams and the decode stack's 16 rows over the decode streams
 * (wl_stack_fwd: each stream owns a row range through all 8 layers; one
 * event join per layer between phase A (LN + QKV) and phase B (attention
 * over all keys of its rows' sequences, projection, residual)).  The cache
 * streams wait for every prefill and decode stream, then each updates its
 * share of the 2 layers x 18 sequences.
 *
 * Check: the last layer of each stack at sampled rows (prefill 0, 511,
 * 512, 1023; decode 0, 15), QKV rows and outputs against
 * wl_ref_block_row (double) from the layer's GPU input; the cache: every
 * touched entry equal to the first one, 0 < v < 1, and an untouched
 * position still 0.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hwq/hwq_gpu.h"
#include "hwq/hwq_mem.h"
#include "hwq/wl_kernels_p123_gpu.h"
#include "kernels/ops.h"

#define M 1024
#define NH 8
#define NL 8
#define PB 2
#define PT 512
#define DB 16
#define CB (PB + DB)
#define CS 2048
#define HD (M / NH)
#define FLAGS WL_BLOCK_PRE_LN

struct state {
	int t, ncache;
	gpu_ops_ctx *ops[WL_MAX_STREAMS];
	void *evp[WL_MAX_STREAMS], *evd[WL_MAX_STREAMS];
	struct wl_block w[NL], hw;
	float *hwp;
	float *xp, *xd, *cache;
	struct wl_block_scratch sp, sd;
	struct wl_stack_run rp, rd;
	int lcp, lcd;
	long long kern;
};

static size_t cache_floats(void)
{
	return (size_t)NL * 2 * CB * NH * CS * HD;
}

static enum aorta_status setup(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	enum aorta_status rc;
	uint64_t tot = 0;
	int N = c->nstreams;
	if (N < 4 || N > WL_MAX_STREAMS)
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "continuous_batch: %d streams", N);
	st->t = N / 3 > 1 ? N / 3 : 1;
	st->ncache = N - 2 * st->t;
	if ((rc = wl_ops_create(c, st->ops, N, e)) || (rc = wl_events_create(st->evp, N, e)) ||
	    (rc = wl_events_create(st->evd, N, e)))
		return rc;
	if ((rc = wl_layers_alloc(c, st->w, NL, M, 0, &st->hwp, &st->hw, NL - 1, 100, &tot, e)))
		return rc;
	if (!(st->xp = wl_alloc(c, (size_t)PB * PT * M, &tot, e)) ||
	    !(st->xd = wl_alloc(c, (size_t)DB * M, &tot, e)))
		return AORTA_EGPU;
	if ((rc = hwq_fill_random(c, st->xp, NULL, (size_t)PB * PT * M, -1.0f, 1.0f, 1, e)) ||
	    (rc = hwq_fill_random(c, st->xd, NULL, (size_t)DB * M, -1.0f, 1.0f, 2, e)))
		return rc;
	if ((rc = wl_stack_alloc(c, &st->rp, &st->sp, PB * PT, M, 0, &tot, e)) ||
	    (rc = wl_stack_alloc(c, &st->rd, &st->sd, DB, M, 0, &tot, e)))
		return rc;
	if (!(st->cache = wl_alloc(c, cache_floats(), &tot, e)))
		return AORTA_EGPU;
	st->rp.ns = st->t;
	st->rp.streams = (void **)c->streams;
	st->rp.ev = st->evp;
	st->rp.ops = st->ops;
	st->rp.layer_counter = &st->lcp;
	st->rd.ns = st->t;
	st->rd.streams = (void **)c->streams + st->t;
	st->rd.ev = st->evd;
	st->rd.ops = st->ops + st->t;
	st->rd.layer_counter = &st->lcd;
	/* launches: both stacks, then the cache units (as run() counts them) */
	st->kern = wl_stack_kernels(st->t, PB * PT, NL, FLAGS) + wl_stack_kernels(st->t, DB, NL, FLAGS);
	for (int j = 0; j < st->ncache; j++) {
		int lo, hi;
		wl_split(2 * CB, st->ncache, j, &lo, &hi);
		for (int l = 0; l < 2; l++) {
			int b0 = lo - l * CB < 0 ? 0 : lo - l * CB, b1 = hi - l * CB > CB ? CB : hi - l * CB;
			st->kern += b1 > b0;
		}
	}
	if (tot != hwq_mem_continuous_batch(N))
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1,
				  "continuous_batch: allocated %llu bytes, hwq_mem says %llu",
				  (unsigned long long)tot, (unsigned long long)hwq_mem_continuous_batch(N));
	return AORTA_OK;
}

static enum aorta_status run(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	void **s = (void **)c->streams;
	int t = st->t, N = c->nstreams;
	long long k = 0;
	st->lcp = st->lcd = 0;
	k += wl_stack_fwd(&st->rp, st->w, NL, st->xp, PB, PT, M, NH, 0, FLAGS, NULL);
	k += wl_stack_fwd(&st->rd, st->w, NL, st->xd, DB, 1, M, NH, 0, FLAGS, NULL);
	for (int i = 0; i < t; i++) {
		wl_record(st->evp[i], s[i]);
		wl_record(st->evd[i], s[t + i]);
	}
	/* cache: (layer 0..1, sequence 0..17) units split over the cache streams */
	for (int j = 0; j < st->ncache; j++) {
		int si = 2 * t + j, lo, hi;
		for (int i = 0; i < t; i++) {
			wl_wait(s[si], st->evp[i]);
			wl_wait(s[si], st->evd[i]);
		}
		wl_split(2 * CB, st->ncache, j, &lo, &hi);
		for (int l = 0; l < 2; l++) {
			int b0 = lo - l * CB, b1 = hi - l * CB;
			b0 = b0 < 0 ? 0 : b0;
			b1 = b1 > CB ? CB : b1;
			if (b1 > b0) {
				/* layer l's k cache: [CB][NH][CS][HD] at offset l * 2 * CB*NH*CS*HD */
				wlk_cache_decay(st->cache + (size_t)l * 2 * CB * NH * CS * HD, b0, b1, NH, CS, HD, 0,
						s[si]);
				k++;
			}
		}
	}
	(void)N;
	(void)k; /* equals st->kern, computed in setup */
	return wl_ops_status(st->ops, c->nstreams, e);
}

static int check(void *vst, struct hwq_ctx *c, char *msg, size_t cap, struct aorta_error *e)
{
	struct state *st = vst;
	struct wl_err eq = { 0 }, ey = { 0 };
	int prow[4] = { 0, PT - 1, PT, PB * PT - 1 }, drow[2] = { 0, DB - 1 };
	int g = (NL - 1) & 1; /* the last layer's qkv buffer and output; input in buf[!g] */
	(void)c;
	if (wl_block_check(&eq, &ey, &st->hw, st->rp.buf[!g], st->rp.qkv[g], st->rp.buf[g], PB, PT, M, NH, 0,
			   FLAGS, prow, 4, e) ||
	    wl_block_check(&eq, &ey, &st->hw, st->rd.buf[!g], st->rd.qkv[g], st->rd.buf[g], DB, 1, M, NH, 0,
			   FLAGS, drow, 2, e))
		return 0;
	/* cache: layers 0, 1, position 0 of every (sequence, head) */
	static float v[CB * NH * HD];
	float first = 0.0f, untouched = -1.0f;
	int bad = 0;
	for (int l = 0; l < 2; l++)
		for (int bh = 0; bh < CB * NH; bh++) {
			if (wl_fetch(v + (size_t)bh * HD, st->cache + (size_t)l * 2 * CB * NH * CS * HD +
								   (size_t)bh * CS * HD, HD * sizeof(float), e))
				return 0;
		}
	first = v[0];
	for (int i = 0; i < CB * NH * HD; i++)
		bad += v[i] != first;
	if (wl_fetch(&untouched, st->cache + HD, sizeof(float), e)) /* layer 0, position 1 */
		return 0;
	double rq = wl_err_rel(&eq), ry = wl_err_rel(&ey);
	snprintf(msg, cap,
		 "last block of the prefill (rows 0, 511, 512, 1023) and decode (rows 0, 15) stacks vs "
		 "CPU: qkv max rel error %.3g, output %.3g; KV cache: %d touched entries differ from %.6g, "
		 "untouched %.3g",
		 rq, ry, bad, first, untouched);
	return rq <= 1e-4 && ry <= 1e-4 && ey.scale > 0 && !bad && first > 0.0f && first < 1.0f &&
	       untouched == 0.0f;
}

static void teardown(void *vst, struct hwq_ctx *c)
{
	struct state *st = vst;
	wl_ops_destroy(st->ops, c->nstreams);
	wl_events_destroy(st->evp, c->nstreams);
	wl_events_destroy(st->evd, c->nstreams);
	free(st->hwp);
}

const struct hwq_workload_ops hwq_wl_continuous_batch = {
	.name = "continuous_batch", .state_size = sizeof(struct state),
	.setup = setup, .run = run, .check = check, .teardown = teardown,
	.samples_per_iter = PB * PT + DB,
	.kern_offset = offsetof(struct state, kern),
};

/*
 * wl_async_dataload_gpu.c - hwq workload "async_dataload": 2 batches of 32
 * images 3 x 224 x 224, each copied host -> device from pinned memory,
 * normalised (ImageNet mean/std) and horizontally flipped per image, then
 * a small CNN: conv3x3(3->64) ReLU maxpool2, conv3x3(64->128) ReLU
 * maxpool2, conv3x3(128->256) ReLU, global average pool, Linear(256 ->
 * 1000).  Unit: images/s, 64 images per iteration.
 *
 * Layout.  The raw images are NCHW as upstream's tensors; preprocessing
 * writes NHWC, so each conv is an im2col (one image at a time, pixels x
 * 9C) and one cuBLAS GEMM through gpu_linear_fwd with weights [Cout][9C]
 * ((ky*3+kx)*C + c).  The flip of each image is drawn once from the seed
 * (upstream draws torch.rand per iteration; a fixed draw keeps the work
 * identical and checkable).
 *
 * Streams (N = 4..12), t = max(1, N/3): transfer [0, t), preprocess
 * [t, 2t), compute [2t, N).  For each batch the 32 images are split into
 * contiguous ranges, one per stream of each role: a transfer stream copies
 * its range and records ev_tr[b][j]; a preprocess stream waits for every
 * transfer event of the batch and preprocesses its range (ev_pp[b][j]); a
 * compute stream waits for every preprocess event of the batch and runs
 * the CNN on its range, one image at a time in its own scratch buffers.
 *
 * Check (compute stream 0's last image of batch 1, whose intermediates stay
 * in that stream's scratch; and image 0 of batch 0): preprocessed pixels
 * against the CPU normalize/flip of the pinned source; each conv at 16
 * pixels (corners, edges, inside) against a CPU conv of the GPU's input to
 * that layer; both max-pools and the average pool exactly from the GPU's
 * inputs; the 1000 logits against a CPU Linear of the GPU's features.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hwq/hwq_gpu.h"
#include "hwq/hwq_mem.h"
#include "hwq/wl_kernels_p123_gpu.h"
#include "kernels/ops.h"

#define NB 2
#define BS 32
#define IMG 224
#define IMGF ((size_t)3 * IMG * IMG)
#define NCLS 1000
#define C1 64
#define C2 128
#define C3 256

static const float MEANS[3] = { 0.485f, 0.456f, 0.406f }, STDS[3] = { 0.229f, 0.224f, 0.225f };

struct scratch { /* per compute stream, one image */
	float *col, *a1, *p1, *a2, *p2, *a3;
};

struct state {
	int t, ncomp;
	gpu_ops_ctx *ops[WL_MAX_STREAMS];
	void *ev_tr[NB][WL_MAX_STREAMS], *ev_pp[NB][WL_MAX_STREAMS];
	float *host[NB], *raw[NB], *pre[NB];
	int32_t *flip;
	float *cw1, *cb1, *cw2, *cb2, *cw3, *cb3, *fw, *fb, *feat, *logits;
	struct scratch sc[WL_MAX_STREAMS];
	int32_t hflip[NB * BS];
	float *hcw1, *hcb1, *hcw2, *hcb2, *hcw3, *hcb3, *hfw, *hfb;
	long long kern;
};

#define COLMAX ((size_t)(IMG / 2) * (IMG / 2) * 9 * C1) /* conv2's im2col: the largest */

static enum aorta_status setup(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	enum aorta_status rc;
	uint64_t tot = 0;
	int N = c->nstreams;
	if (N < 4 || N > WL_MAX_STREAMS)
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "async_dataload: %d streams", N);
	st->t = N / 3 > 1 ? N / 3 : 1;
	st->ncomp = N - 2 * st->t;
	st->kern = (long long)NB * BS * 17 + (long long)NB * st->t;
	if ((rc = wl_ops_create(c, st->ops, N, e)))
		return rc;
	for (int b = 0; b < NB; b++)
		if ((rc = wl_events_create(st->ev_tr[b], N, e)) || (rc = wl_events_create(st->ev_pp[b], N, e)))
			return rc;
	for (int b = 0; b < NB; b++) {
		if (!(st->host[b] = hwq_alloc_host(c, BS * IMGF * sizeof(float), e)) ||
		    !(st->raw[b] = wl_alloc(c, BS * IMGF, &tot, e)) ||
		    !(st->pre[b] = wl_alloc(c, BS * IMGF, &tot, e)))
			return AORTA_EGPU;
		/* the pinned source gets the values (the device copy is overwritten each iteration) */
		if ((rc = hwq_fill_random(c, st->raw[b], st->host[b], BS * IMGF, 0.0f, 1.0f, 1 + (uint64_t)b, e)))
			return rc;
	}
	if (!(st->flip = (int32_t *)wl_alloc(c, NB * BS, &tot, e)))
		return AORTA_EGPU;
	for (int i = 0; i < NB * BS; i++)
		st->hflip[i] = wl_ref_uniform(c->seed, 7, (uint64_t)i) >= 0.5;
	GPU_CHECK(e, gpuMemcpy(st->flip, st->hflip, sizeof st->hflip, gpuMemcpyHostToDevice));
	struct {
		float **d, **h, **db, **hb;
		int in, out;
	} L[4] = {
		{ &st->cw1, &st->hcw1, &st->cb1, &st->hcb1, 9 * 3, C1 },
		{ &st->cw2, &st->hcw2, &st->cb2, &st->hcb2, 9 * C1, C2 },
		{ &st->cw3, &st->hcw3, &st->cb3, &st->hcb3, 9 * C2, C3 },
		{ &st->fw, &st->hfw, &st->fb, &st->hfb, C3, NCLS },
	};
	for (int l = 0; l < 4; l++) {
		size_t nw = (size_t)L[l].in * L[l].out;
		if (!(*L[l].d = wl_alloc(c, nw, &tot, e)) || !(*L[l].db = wl_alloc(c, L[l].out, &tot, e)))
			return AORTA_EGPU;
		*L[l].h = malloc(nw * sizeof(float));
		*L[l].hb = malloc(L[l].out * sizeof(float));
		if (!*L[l].h || !*L[l].hb)
			return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "out of memory");
		if ((rc = wl_init_linear(c, *L[l].d, *L[l].h, *L[l].db, *L[l].hb, L[l].in, L[l].out,
					 20 + 2 * (uint64_t)l, e)))
			return rc;
	}
	if (!(st->feat = wl_alloc(c, (size_t)NB * BS * C3, &tot, e)) ||
	    !(st->logits = wl_alloc(c, (size_t)NB * BS * NCLS, &tot, e)))
		return AORTA_EGPU;
	for (int j = 0; j < st->ncomp; j++) {
		struct scratch *s = &st->sc[j];
		if (!(s->col = wl_alloc(c, COLMAX, &tot, e)) ||
		    !(s->a1 = wl_alloc(c, (size_t)IMG * IMG * C1, &tot, e)) ||
		    !(s->p1 = wl_alloc(c, (size_t)(IMG / 2) * (IMG / 2) * C1, &tot, e)) ||
		    !(s->a2 = wl_alloc(c, (size_t)(IMG / 2) * (IMG / 2) * C2, &tot, e)) ||
		    !(s->p2 = wl_alloc(c, (size_t)(IMG / 4) * (IMG / 4) * C2, &tot, e)) ||
		    !(s->a3 = wl_alloc(c, (size_t)(IMG / 4) * (IMG / 4) * C3, &tot, e)))
			return AORTA_EGPU;
	}
	if (tot != hwq_mem_async_dataload(N))
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1,
				  "async_dataload: allocated %llu bytes, hwq_mem says %llu",
				  (unsigned long long)tot, (unsigned long long)hwq_mem_async_dataload(N));
	return AORTA_OK;
}

/* conv3x3 + bias + ReLU of one NHWC image: 4 launches */
static void conv(gpu_ops_ctx *o, void *s, float *col, float *y, const float *x, const float *w,
		 const float *b, int H, int C, int Cout)
{
	wlk_im2col3x3(col, x, H, H, C, s);
	gpu_linear_fwd(o, y, col, w, b, H * H, 9 * C, Cout);
	wlk_relu(y, y, (size_t)H * H * Cout, s);
}

static enum aorta_status run(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	void **s = (void **)c->streams;
	int t = st->t, c0 = 2 * t;
	for (int b = 0; b < NB; b++) {
		for (int j = 0; j < t; j++) {
			int lo, hi;
			wl_split(BS, t, j, &lo, &hi);
			wl_copy_async(st->raw[b] + lo * IMGF, st->host[b] + lo * IMGF,
				      (size_t)(hi - lo) * IMGF * sizeof(float), s[j]);
			wl_record(st->ev_tr[b][j], s[j]);
		}
		for (int j = 0; j < t; j++) {
			int lo, hi;
			wl_split(BS, t, j, &lo, &hi);
			for (int k = 0; k < t; k++)
				wl_wait(s[t + j], st->ev_tr[b][k]);
			wlk_normalize_flip(st->pre[b], st->raw[b], st->flip + b * BS, lo, hi, 3, IMG, IMG,
					   MEANS[0], MEANS[1], MEANS[2], STDS[0], STDS[1], STDS[2], s[t + j]);
			wl_record(st->ev_pp[b][j], s[t + j]);
		}
		for (int j = 0; j < st->ncomp; j++) {
			int lo, hi, si = c0 + j;
			gpu_ops_ctx *o = st->ops[si];
			struct scratch *sc = &st->sc[j];
			wl_split(BS, st->ncomp, j, &lo, &hi);
			for (int k = 0; k < t; k++)
				wl_wait(s[si], st->ev_pp[b][k]);
			for (int i = lo; i < hi; i++) {
				const float *x = st->pre[b] + (size_t)i * IMGF;
				float *f = st->feat + ((size_t)b * BS + i) * C3;
				conv(o, s[si], sc->col, sc->a1, x, st->cw1, st->cb1, IMG, 3, C1);
				wlk_maxpool2(sc->p1, sc->a1, IMG, IMG, C1, s[si]);
				conv(o, s[si], sc->col, sc->a2, sc->p1, st->cw2, st->cb2, IMG / 2, C1, C2);
				wlk_maxpool2(sc->p2, sc->a2, IMG / 2, IMG / 2, C2, s[si]);
				conv(o, s[si], sc->col, sc->a3, sc->p2, st->cw3, st->cb3, IMG / 4, C2, C3);
				wlk_mean_seq(f, sc->a3, 1, (IMG / 4) * (IMG / 4), C3, s[si]);
				gpu_linear_fwd(o, st->logits + ((size_t)b * BS + i) * NCLS, f, st->fw, st->fb, 1,
					       C3, NCLS);
			}
		}
	}
	return wl_ops_status(st->ops, c->nstreams, e);
}

/* conv at 16 pixels of an HxH image: GPU y (post-ReLU) vs CPU from GPU x */
static void conv_check(struct wl_err *er, const float *x, const float *y, const float *w, const float *b,
		       int H, int C, int Cout)
{
	static double out[C3];
	int pos[4] = { 0, 1, H / 2, H - 1 };
	for (int a = 0; a < 4; a++)
		for (int q = 0; q < 4; q++) {
			wl_ref_conv3x3_pixel(out, x, w, b, H, H, C, Cout, pos[a], pos[q]);
			for (int o = 0; o < Cout; o++)
				wl_err_add(er, y[((size_t)pos[a] * H + pos[q]) * Cout + o], out[o] > 0 ? out[o] : 0);
		}
}

static int check(void *vst, struct hwq_ctx *c, char *msg, size_t cap, struct aorta_error *e)
{
	struct state *st = vst;
	struct scratch *sc = &st->sc[0];
	int lo, hi, ok = 0;
	wl_split(BS, st->ncomp, 0, &lo, &hi);
	int img = hi - 1; /* compute stream 0's last image of batch 1 */
	size_t n1 = (size_t)IMG * IMG * C1, np1 = n1 / 4, n2 = (size_t)(IMG / 2) * (IMG / 2) * C2,
	       np2 = n2 / 4, n3 = (size_t)(IMG / 4) * (IMG / 4) * C3;
	float *pre = malloc(IMGF * sizeof(float)), *want = malloc(IMGF * sizeof(float));
	float *a1 = malloc(n1 * sizeof(float)), *p1 = malloc(np1 * sizeof(float));
	float *a2 = malloc(n2 * sizeof(float)), *p2 = malloc(np2 * sizeof(float));
	float *a3 = malloc(n3 * sizeof(float)), *pw = malloc(np1 * sizeof(float));
	float feat[C3], fwant[C3], lg[NCLS];
	double lw[NCLS];
	struct wl_err ep = { 0 }, ec = { 0 }, epool = { 0 }, el = { 0 };
	(void)c;
	if (!pre || !want || !a1 || !p1 || !a2 || !p2 || !a3 || !pw) {
		snprintf(msg, cap, "out of memory");
		goto out;
	}
	/* preprocessing: image 0 of batch 0 and the checked image of batch 1 */
	for (int k = 0; k < 2; k++) {
		int b = k, i = k ? img : 0;
		if (wl_fetch(pre, st->pre[b] + (size_t)i * IMGF, IMGF * sizeof(float), e))
			goto out;
		wl_ref_normalize_flip(want, st->host[b] + (size_t)i * IMGF, st->hflip + b * BS + i, 0, 1, 3,
				      IMG, IMG, MEANS, STDS);
		for (size_t q = 0; q < IMGF; q++)
			wl_err_add(&ep, pre[q], want[q]);
	}
	/* pre now holds batch 1's image: the CNN chain on the GPU's intermediates */
	if (wl_fetch(a1, sc->a1, n1 * sizeof(float), e) || wl_fetch(p1, sc->p1, np1 * sizeof(float), e) ||
	    wl_fetch(a2, sc->a2, n2 * sizeof(float), e) || wl_fetch(p2, sc->p2, np2 * sizeof(float), e) ||
	    wl_fetch(a3, sc->a3, n3 * sizeof(float), e) ||
	    wl_fetch(feat, st->feat + ((size_t)BS + img) * C3, sizeof feat, e) ||
	    wl_fetch(lg, st->logits + ((size_t)BS + img) * NCLS, sizeof lg, e))
		goto out;
	conv_check(&ec, pre, a1, st->hcw1, st->hcb1, IMG, 3, C1);
	conv_check(&ec, p1, a2, st->hcw2, st->hcb2, IMG / 2, C1, C2);
	conv_check(&ec, p2, a3, st->hcw3, st->hcb3, IMG / 4, C2, C3);
	wl_ref_maxpool2(pw, a1, IMG, IMG, C1);
	for (size_t q = 0; q < np1; q++)
		wl_err_add(&epool, p1[q], pw[q]);
	wl_ref_maxpool2(pw, a2, IMG / 2, IMG / 2, C2);
	for (size_t q = 0; q < np2; q++)
		wl_err_add(&epool, p2[q], pw[q]);
	wl_ref_mean_seq(fwant, a3, 1, (IMG / 4) * (IMG / 4), C3);
	for (int q = 0; q < C3; q++)
		wl_err_add(&epool, feat[q], fwant[q]);
	wl_ref_linear_row(lw, feat, st->hfw, st->hfb, C3, NCLS);
	for (int q = 0; q < NCLS; q++)
		wl_err_add(&el, lg[q], lw[q]);
	double rp = wl_err_rel(&ep), rc = wl_err_rel(&ec), rpo = wl_err_rel(&epool), rl = wl_err_rel(&el);
	snprintf(msg, cap,
		 "preprocess (2 images) max rel error %.3g; conv1-3 at 16 pixels each %.3g; pools %.3g; "
		 "logits of batch 1 image %d %.3g (vs CPU on the GPU's inputs of each stage)",
		 rp, rc, rpo, img, rl);
	ok = rp <= 1e-5 && rc <= 1e-4 && rpo <= 1e-5 && rl <= 1e-4 && ec.scale > 0 && el.scale > 0;
out:
	free(pre);
	free(want);
	free(a1);
	free(p1);
	free(a2);
	free(p2);
	free(a3);
	free(pw);
	return ok;
}

static void teardown(void *vst, struct hwq_ctx *c)
{
	struct state *st = vst;
	wl_ops_destroy(st->ops, c->nstreams);
	for (int b = 0; b < NB; b++) {
		wl_events_destroy(st->ev_tr[b], c->nstreams);
		wl_events_destroy(st->ev_pp[b], c->nstreams);
	}
	free(st->hcw1);
	free(st->hcb1);
	free(st->hcw2);
	free(st->hcb2);
	free(st->hcw3);
	free(st->hcb3);
	free(st->hfw);
	free(st->hfb);
}

const struct hwq_workload_ops hwq_wl_async_dataload = {
	.name = "async_dataload", .state_size = sizeof(struct state),
	.setup = setup, .run = run, .check = check, .teardown = teardown,
	.samples_per_iter = NB * BS,
	.kern_offset = offsetof(struct state, kern),
};

/*
 * model_gpu.c - one training step of the ranking transformer on one GPU
 * (see model_gpu.h for the contract, model.h for the model).
 *
 * Design.  All device memory is allocated once in gpu_model_create; a step
 * allocates nothing and never waits for the device, so the host runs ahead
 * and the GPU stays busy.  Activations are kept per layer for the backward
 * (about 40 MB per layer at the default dims and B = 8, no recomputation).
 * Cheap fusions come from ops_gpu.h: bias + GELU + dropout after the FFN and
 * head GEMMs, residual + dropout + LayerNorm after the attention and FFN
 * blocks, dropout + GELU' in the backward, and residual gradients summed by
 * the GEMM itself (beta = 1).  The pass is written group by group (input,
 * each layer, head; fwd_* and bwd_*), each reading its parameters and
 * writing its gradients through pointers relative to the group, so the
 * same code serves the model's own flat buffers (forward_backward) and the
 * gathered or sharded buffers of the distributed executor (dist_gpu.c);
 * the backward hands d(group input) to the previous group in gm->dx.
 *
 * Error handling: the ops context records the first failing CUDA / cuBLAS
 * call; each public function checks it once at the end (no sync) and
 * returns AORTA_EGPU with that message.
 */
#include "train/model_gpu.h"

#include "gpu/gpu.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/ops_gpu.h"

#define GPU_TRY(call, what)                                                                    \
	do {                                                                                   \
		gpuError_t e_ = (call);                                                        \
		if (e_ != gpuSuccess)                                                          \
			return aorta_fail(err, AORTA_EGPU, "", 0, -1, "%s: %s (%s:%d)", what,   \
					  gpuGetErrorString(e_), __FILE__, __LINE__);           \
	} while (0)

/* The functions on the model's own flat buffers refuse a model created
 * with GPU_MODEL_NO_STATE. */
#define NEED_STATE(gm, what)                                                                          \
	do {                                                                                          \
		if (!(gm)->params)                                                                    \
			return aorta_fail(err, AORTA_EINTERNAL, "", 0, -1,                            \
					  "gpu model: %s on a model created without parameters", what); \
	} while (0)

static enum aorta_status ops_status(struct gpu_model *gm, struct aorta_error *err, const char *what)
{
	char msg[256];
	if (gpu_ops_last_error(gm->ops, msg, sizeof msg))
		return aorta_fail(err, AORTA_EGPU, "", 0, -1, "%s: %s", what, msg);
	return AORTA_OK;
}

/* ------------------------------------------------------------------------ */
/* lifecycle                                                                */
/* ------------------------------------------------------------------------ */

static gpuError_t dalloc(float **p, size_t n)
{
	return gpuMalloc((void **)p, (n ? n : 1) * sizeof(float));
}

enum aorta_status gpu_model_create(struct gpu_model *gm, const struct model_dims *d,
				   const struct param_layout *lay, int B, enum gpu_precision prec,
				   void *stream, struct aorta_error *err)
{
	return gpu_model_create_ex(gm, d, lay, B, prec, stream, 0, err);
}

enum aorta_status gpu_model_create_ex(struct gpu_model *gm, const struct model_dims *d,
				      const struct param_layout *lay, int B, enum gpu_precision prec,
				      void *stream, unsigned flags, struct aorta_error *err)
{
	memset(gm, 0, sizeof *gm);
	if (B <= 0 || d->H <= 0 || d->M % d->H)
		return aorta_fail(err, AORTA_EINTERNAL, "", 0, -1, "gpu model: bad dims or batch %d", B);
	gm->d = *d;
	gm->lay = lay;
	gm->B = B;
	gm->nb = B;
	gm->prec = prec;
	gm->stream = stream;
	gm->beta1 = 0.9f;
	gm->beta2 = 0.98f;
	gm->eps = 1e-8f;
	gm->weight_decay = 0.01f;
	gm->grad_unscale = 1.0f;
	gm->next_fwd = gm->next_bwd = -2;
	gm->ops = gpu_ops_create(stream, prec);
	if (!gm->ops)
		return aorta_fail(err, AORTA_EGPU, "", 0, -1, "gpu model: cannot create cuBLAS context");

	size_t N = (size_t)B * d->T, M = (size_t)d->M, L = (size_t)d->L;
	size_t tot = lay->total;
	size_t big = (size_t)(d->FFN > d->MLP ? d->FFN : d->MLP);
	if (!(flags & GPU_MODEL_NO_STATE)) {
		GPU_TRY(dalloc(&gm->params, tot), "cudaMalloc params");
		GPU_TRY(dalloc(&gm->grads, tot), "cudaMalloc grads");
		GPU_TRY(dalloc(&gm->m, tot), "cudaMalloc adam m");
		GPU_TRY(dalloc(&gm->v, tot), "cudaMalloc adam v");
		GPU_TRY(gpuMemset(gm->params, 0, tot * sizeof(float)), "cudaMemset");
		GPU_TRY(gpuMemset(gm->grads, 0, tot * sizeof(float)), "cudaMemset");
		GPU_TRY(gpuMemset(gm->m, 0, tot * sizeof(float)), "cudaMemset");
		GPU_TRY(gpuMemset(gm->v, 0, tot * sizeof(float)), "cudaMemset");
	}
	GPU_TRY(dalloc(&gm->gscale, 1), "cudaMalloc");
	GPU_TRY(gpuMalloc((void **)&gm->sumsq, sizeof(double)), "cudaMalloc");
	GPU_TRY(gpuMemset(gm->sumsq, 0, sizeof(double)), "cudaMemset");
	GPU_TRY(dalloc(&gm->loss, 1), "cudaMalloc");
	float one = 1.0f;
	GPU_TRY(gpuMemcpy(gm->gscale, &one, sizeof one, gpuMemcpyHostToDevice), "cudaMemcpy");

	GPU_TRY(dalloc(&gm->dense, N * d->F * d->D), "cudaMalloc batch");
	GPU_TRY(dalloc(&gm->target, N), "cudaMalloc batch");
	GPU_TRY(dalloc(&gm->weight, N), "cudaMalloc batch");
	GPU_TRY(gpuMalloc((void **)&gm->cat, ((N * d->S) > 0 ? N * d->S : 1) * sizeof(int32_t)), "cudaMalloc batch");

	GPU_TRY(dalloc(&gm->e, N * d->E), "cudaMalloc act");
	gm->xs = calloc(L + 1, sizeof *gm->xs);
	gm->act = calloc(L ? L : 1, sizeof *gm->act);
	if (!gm->xs || !gm->act)
		return aorta_fail(err, AORTA_EINTERNAL, "", 0, -1, "gpu model: out of host memory");
	for (size_t l = 0; l <= L; l++)
		GPU_TRY(dalloc(&gm->xs[l], N * M), "cudaMalloc act");
	size_t nprob = (size_t)B * d->H * d->T * d->T;
	for (size_t l = 0; l < L; l++) {
		struct gpu_layer_act *a = &gm->act[l];
		GPU_TRY(dalloc(&a->qkv, N * 3 * M), "cudaMalloc act");
		GPU_TRY(dalloc(&a->probs, nprob), "cudaMalloc act");
		GPU_TRY(dalloc(&a->att, N * M), "cudaMalloc act");
		GPU_TRY(dalloc(&a->sa, N * M), "cudaMalloc act");
		GPU_TRY(dalloc(&a->r1, N * M), "cudaMalloc act");
		GPU_TRY(dalloc(&a->x1, N * M), "cudaMalloc act");
		GPU_TRY(dalloc(&a->mean1, N), "cudaMalloc act");
		GPU_TRY(dalloc(&a->rstd1, N), "cudaMalloc act");
		GPU_TRY(dalloc(&a->h1, N * d->FFN), "cudaMalloc act");
		GPU_TRY(dalloc(&a->g1, N * d->FFN), "cudaMalloc act");
		GPU_TRY(dalloc(&a->f, N * M), "cudaMalloc act");
		GPU_TRY(dalloc(&a->r2, N * M), "cudaMalloc act");
		GPU_TRY(dalloc(&a->mean2, N), "cudaMalloc act");
		GPU_TRY(dalloc(&a->rstd2, N), "cudaMalloc act");
	}
	GPU_TRY(dalloc(&gm->xf, N * M), "cudaMalloc act");
	GPU_TRY(dalloc(&gm->meanf, N), "cudaMalloc act");
	GPU_TRY(dalloc(&gm->rstdf, N), "cudaMalloc act");
	GPU_TRY(dalloc(&gm->hh, N * d->MLP), "cudaMalloc act");
	GPU_TRY(dalloc(&gm->hg, N * d->MLP), "cudaMalloc act");
	GPU_TRY(dalloc(&gm->logits, N), "cudaMalloc act");
	GPU_TRY(dalloc(&gm->dlogits, N), "cudaMalloc act");
	GPU_TRY(dalloc(&gm->dx, N * M), "cudaMalloc scratch");
	GPU_TRY(dalloc(&gm->dtmp, N * M), "cudaMalloc scratch");
	GPU_TRY(dalloc(&gm->df, N * M), "cudaMalloc scratch");
	GPU_TRY(dalloc(&gm->dbig, N * big), "cudaMalloc scratch");
	GPU_TRY(dalloc(&gm->dqkv, N * 3 * M), "cudaMalloc scratch");
	GPU_TRY(dalloc(&gm->de, N * d->E), "cudaMalloc scratch");
	return AORTA_OK;
}

void gpu_model_release(struct gpu_model *gm)
{
	if (!gm)
		return;
	float **bufs[] = { &gm->params, &gm->grads, &gm->m, &gm->v, &gm->gscale, &gm->loss,
			   &gm->dense, &gm->target, &gm->weight, &gm->dense2, &gm->target2, &gm->weight2, &gm->e, &gm->xf, &gm->meanf,
			   &gm->rstdf, &gm->hh, &gm->hg, &gm->logits, &gm->dlogits, &gm->dx,
			   &gm->dtmp, &gm->df, &gm->dbig, &gm->dqkv, &gm->de };
	for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
		if (*bufs[i])
			gpuFree(*bufs[i]);
	if (gm->sumsq)
		gpuFree(gm->sumsq);
	if (gm->cat)
		gpuFree(gm->cat);
	if (gm->cat2)
		gpuFree(gm->cat2);
	if (gm->xs)
		for (int l = 0; l <= gm->d.L; l++)
			if (gm->xs[l])
				gpuFree(gm->xs[l]);
	if (gm->act)
		for (int l = 0; l < gm->d.L; l++) {
			struct gpu_layer_act *a = &gm->act[l];
			float *p[] = { a->qkv, a->probs, a->att, a->sa, a->r1, a->x1, a->mean1,
				       a->rstd1, a->h1, a->g1, a->f, a->r2, a->mean2, a->rstd2 };
			for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
				if (p[i])
					gpuFree(p[i]);
		}
	free(gm->xs);
	free(gm->act);
	if (gm->ops)
		gpu_ops_destroy(gm->ops);
	memset(gm, 0, sizeof *gm);
}

/* ------------------------------------------------------------------------ */
/* transfers                                                                */
/* ------------------------------------------------------------------------ */

enum aorta_status gpu_model_upload_params(struct gpu_model *gm, const float *host, struct aorta_error *err)
{
	NEED_STATE(gm, "upload params");
	size_t bytes = gm->lay->total * sizeof(float);
	GPU_TRY(gpuStreamSynchronize((gpuStream_t)gm->stream), "upload params");
	GPU_TRY(gpuMemcpy(gm->params, host, bytes, gpuMemcpyHostToDevice), "upload params");
	GPU_TRY(gpuMemset(gm->m, 0, bytes), "upload params");
	GPU_TRY(gpuMemset(gm->v, 0, bytes), "upload params");
	return AORTA_OK;
}

enum aorta_status gpu_model_batch_copies(struct gpu_model *gm, const struct batch *b,
					 struct gpu_copy out[GPU_MODEL_BATCH_COPIES],
					 struct aorta_error *err)
{
	const struct model_dims *d = &gm->d;
	if (b->B > gm->B || b->B <= 0)
		return aorta_fail(err, AORTA_EINTERNAL, "", 0, -1,
				  "gpu model: batch of %d samples, capacity %d", b->B, gm->B);
	size_t N = (size_t)b->B * d->T;
	out[0] = (struct gpu_copy){ gm->dense, b->dense, N * d->F * d->D * sizeof(float) };
	out[1] = (struct gpu_copy){ gm->cat, b->cat, N * d->S * sizeof(int32_t) };
	out[2] = (struct gpu_copy){ gm->target, b->target, N * sizeof(float) };
	out[3] = (struct gpu_copy){ gm->weight, b->weight, N * sizeof(float) };
	gm->nb = b->B;
	return AORTA_OK;
}

enum aorta_status gpu_model_upload_batch(struct gpu_model *gm, const struct batch *b, void *stream,
					 struct aorta_error *err)
{
	struct gpu_copy cp[GPU_MODEL_BATCH_COPIES];
	enum aorta_status st = gpu_model_batch_copies(gm, b, cp, err);
	if (st)
		return st;
	gpuStream_t s = (gpuStream_t)(stream ? stream : gm->stream);
	for (int i = 0; i < GPU_MODEL_BATCH_COPIES; i++)
		if (cp[i].bytes)
			GPU_TRY(gpuMemcpyAsync(cp[i].dst, cp[i].src, cp[i].bytes, gpuMemcpyHostToDevice, s),
				"upload batch");
	return AORTA_OK;
}

enum aorta_status gpu_model_spare_batch(struct gpu_model *gm, struct aorta_error *err)
{
	if (gm->dense2)
		return AORTA_OK;
	const struct model_dims *d = &gm->d;
	size_t N = (size_t)gm->B * d->T;
	GPU_TRY(dalloc(&gm->dense2, N * d->F * d->D), "cudaMalloc spare batch");
	GPU_TRY(dalloc(&gm->target2, N), "cudaMalloc spare batch");
	GPU_TRY(dalloc(&gm->weight2, N), "cudaMalloc spare batch");
	GPU_TRY(gpuMalloc((void **)&gm->cat2, ((N * d->S) > 0 ? N * d->S : 1) * sizeof(int32_t)),
		"cudaMalloc spare batch");
	return AORTA_OK;
}

void gpu_model_swap_batch(struct gpu_model *gm)
{
	float *f;
	int32_t *c;
	int n;
	f = gm->dense, gm->dense = gm->dense2, gm->dense2 = f;
	f = gm->target, gm->target = gm->target2, gm->target2 = f;
	f = gm->weight, gm->weight = gm->weight2, gm->weight2 = f;
	c = gm->cat, gm->cat = gm->cat2, gm->cat2 = c;
	n = gm->nb, gm->nb = gm->nb2, gm->nb2 = n;
}

enum aorta_status gpu_model_upload_spare(struct gpu_model *gm, const struct batch *b, void *stream,
					 struct aorta_error *err)
{
	if (!gm->dense2)
		return aorta_fail(err, AORTA_EINTERNAL, "", 0, -1, "gpu model: no spare batch buffers");
	gpu_model_swap_batch(gm);
	enum aorta_status st = gpu_model_upload_batch(gm, b, stream, err);
	gpu_model_swap_batch(gm);
	return st;
}

enum aorta_status gpu_model_download(struct gpu_model *gm, float *host, const float *dev, size_t n,
				     struct aorta_error *err)
{
	GPU_TRY(gpuStreamSynchronize((gpuStream_t)gm->stream), "download");
	GPU_TRY(gpuMemcpy(host, dev, n * sizeof(float), gpuMemcpyDeviceToHost), "download");
	return ops_status(gm, err, "gpu model");
}

enum aorta_status gpu_model_download_params(struct gpu_model *gm, float *host, struct aorta_error *err)
{
	NEED_STATE(gm, "download params");
	return gpu_model_download(gm, host, gm->params, gm->lay->total, err);
}

enum aorta_status gpu_model_download_grads(struct gpu_model *gm, float *host, struct aorta_error *err)
{
	NEED_STATE(gm, "download grads");
	return gpu_model_download(gm, host, gm->grads, gm->lay->total, err);
}

enum aorta_status gpu_model_download_loss(struct gpu_model *gm, float *loss_out, double *norm_out,
					  struct aorta_error *err)
{
	GPU_TRY(gpuStreamSynchronize((gpuStream_t)gm->stream), "download loss");
	if (loss_out)
		GPU_TRY(gpuMemcpy(loss_out, gm->loss, sizeof(float), gpuMemcpyDeviceToHost), "download loss");
	if (norm_out) {
		double s = 0.0;
		GPU_TRY(gpuMemcpy(&s, gm->sumsq, sizeof s, gpuMemcpyDeviceToHost), "download norm");
		*norm_out = s > 0.0 ? sqrt(s) * gm->grad_unscale : 0.0;
	}
	return ops_status(gm, err, "gpu model");
}

/* ------------------------------------------------------------------------ */
/* the step                                                                 */
/* ------------------------------------------------------------------------ */

/* Parameter x (an offset in the flat layout) of the group whose slice
 * starts at gp and sits at goff in the flat layout (model.h). */
#define GP(x) (gp + ((x) - goff))
#define GG(x) (gg + ((x) - goff))

static void fwd_input(struct gpu_model *gm, const float *gp)
{
	const struct model_dims *d = &gm->d;
	const struct param_layout *lay = gm->lay;
	const size_t goff = lay->group_off[0];
	gpu_ops_ctx *c = gm->ops;
	int N = gm->nb * d->T, M = d->M, E = d->E, FD = d->F * d->D;

	gpu_embbag_mean_fwd(c, gm->e, GP(lay->emb), gm->cat, N, d->S, E);
	gpu_linear_fwd_ex(c, gm->xs[0], gm->e, GP(lay->emb_w), GP(lay->emb_b), N, E, M, 0.0f);
	gpu_linear_fwd_ex(c, gm->xs[0], gm->dense, GP(lay->dense_w), GP(lay->dense_b), N, FD, M, 1.0f);
}

static void fwd_layer(struct gpu_model *gm, int l, const float *gp)
{
	const struct model_dims *d = &gm->d;
	const struct param_layout *lay = gm->lay;
	const size_t goff = lay->group_off[l + 1];
	const struct layer_off *o = &lay->layer[l];
	struct gpu_layer_act *a = &gm->act[l];
	gpu_ops_ctx *c = gm->ops;
	int B = gm->nb, T = d->T, N = B * T, M = d->M, FFN = d->FFN, H = d->H;
	float p = gm->pass_p, eps = d->ln_eps;
	uint64_t seed = gm->pass_seed;

	gpu_linear_fwd(c, a->qkv, gm->xs[l], GP(o->qkv_w), GP(o->qkv_b), N, M, 3 * M);
	gpu_attention_fwd(c, a->att, a->probs, a->qkv, B, T, M, H, p, seed, dropout_site(l, SITE_ATT));
	gpu_linear_fwd(c, a->sa, a->att, GP(o->out_w), GP(o->out_b), N, M, M);
	gpu_residual_dropout_layernorm_fwd(c, a->x1, a->r1, a->mean1, a->rstd1, gm->xs[l], a->sa, GP(o->ln1_g),
					   GP(o->ln1_b), N, M, eps, p, seed, dropout_site(l, SITE_SA));
	gpu_linear_gelu_dropout_fwd(c, a->g1, a->h1, a->x1, GP(o->ff1_w), GP(o->ff1_b), N, M, FFN, p, seed,
				    dropout_site(l, SITE_FF1));
	gpu_linear_fwd(c, a->f, a->g1, GP(o->ff2_w), GP(o->ff2_b), N, FFN, M);
	gpu_residual_dropout_layernorm_fwd(c, gm->xs[l + 1], a->r2, a->mean2, a->rstd2, a->x1, a->f,
					   GP(o->ln2_g), GP(o->ln2_b), N, M, eps, p, seed,
					   dropout_site(l, SITE_FF2));
}

static void fwd_head(struct gpu_model *gm, const float *gp)
{
	const struct model_dims *d = &gm->d;
	const struct param_layout *lay = gm->lay;
	const size_t goff = lay->group_off[d->L + 1];
	gpu_ops_ctx *c = gm->ops;
	int N = gm->nb * d->T, M = d->M, MLP = d->MLP;
	float *xL = gm->xs[d->L];

	gpu_layernorm_fwd(c, gm->xf, gm->meanf, gm->rstdf, xL, GP(lay->lnf_g), GP(lay->lnf_b), N, M, d->ln_eps);
	gpu_linear_gelu_dropout_fwd(c, gm->hg, gm->hh, gm->xf, GP(lay->head1_w), GP(lay->head1_b), N, M, MLP,
				    gm->pass_p, gm->pass_seed, dropout_site(-1, SITE_HEAD));
	gpu_linear_fwd(c, gm->logits, gm->hg, GP(lay->head2_w), GP(lay->head2_b), N, MLP, 1);
	gpu_bce_fwd_bwd(c, gm->dlogits, gm->loss, gm->logits, gm->target, gm->weight, (size_t)N,
			gm->pass_loss_scale);
}

/* Backward of the head; leaves d(head input) = d xs[L] in gm->dx. */
static void bwd_head(struct gpu_model *gm, const float *gp, float *gg)
{
	const struct model_dims *d = &gm->d;
	const struct param_layout *lay = gm->lay;
	const size_t goff = lay->group_off[d->L + 1];
	gpu_ops_ctx *c = gm->ops;
	int N = gm->nb * d->T, M = d->M, MLP = d->MLP;

	gpu_linear_bwd(c, gm->dbig, GG(lay->head2_w), GG(lay->head2_b), gm->dlogits, gm->hg, GP(lay->head2_w),
		       N, MLP, 1);
	gpu_dropout_gelu_bwd(c, gm->dbig, gm->dbig, gm->hh, (size_t)N * MLP, gm->pass_p, gm->pass_seed,
			     dropout_site(-1, SITE_HEAD));
	gpu_linear_bwd(c, gm->dtmp, GG(lay->head1_w), GG(lay->head1_b), gm->dbig, gm->xf, GP(lay->head1_w), N,
		       M, MLP);
	gpu_layernorm_bwd(c, gm->dx, GG(lay->lnf_g), GG(lay->lnf_b), gm->dtmp, gm->xs[d->L], gm->meanf,
			  gm->rstdf, GP(lay->lnf_g), N, M);
}

/* Backward of layer l: gm->dx holds d xs[l+1] on entry and d xs[l] on return. */
static void bwd_layer(struct gpu_model *gm, int l, const float *gp, float *gg)
{
	const struct model_dims *d = &gm->d;
	const struct param_layout *lay = gm->lay;
	const size_t goff = lay->group_off[l + 1];
	const struct layer_off *o = &lay->layer[l];
	struct gpu_layer_act *a = &gm->act[l];
	gpu_ops_ctx *c = gm->ops;
	int B = gm->nb, T = d->T, N = B * T, M = d->M, FFN = d->FFN, H = d->H;
	float p = gm->pass_p;
	uint64_t seed = gm->pass_seed;
	size_t NM = (size_t)N * M;

	gpu_layernorm_bwd(c, gm->dtmp, GG(o->ln2_g), GG(o->ln2_b), gm->dx, a->r2, a->mean2, a->rstd2,
			  GP(o->ln2_g), N, M);
	/* dtmp = d r2 = d x1 (residual) ; df = d f */
	gpu_dropout_bwd(c, gm->df, gm->dtmp, NM, p, seed, dropout_site(l, SITE_FF2));
	gpu_linear_bwd(c, gm->dbig, GG(o->ff2_w), GG(o->ff2_b), gm->df, a->g1, GP(o->ff2_w), N, FFN, M);
	gpu_dropout_gelu_bwd(c, gm->dbig, gm->dbig, a->h1, (size_t)N * FFN, p, seed, dropout_site(l, SITE_FF1));
	gpu_linear_bwd_ex(c, gm->dtmp, GG(o->ff1_w), GG(o->ff1_b), gm->dbig, a->x1, GP(o->ff1_w), N, M, FFN, 1);
	/* dtmp = d x1 ; dx = d r1 = d xs[l] (residual) */
	gpu_layernorm_bwd(c, gm->dx, GG(o->ln1_g), GG(o->ln1_b), gm->dtmp, a->r1, a->mean1, a->rstd1,
			  GP(o->ln1_g), N, M);
	gpu_dropout_bwd(c, gm->df, gm->dx, NM, p, seed, dropout_site(l, SITE_SA));
	gpu_linear_bwd(c, gm->dtmp, GG(o->out_w), GG(o->out_b), gm->df, a->att, GP(o->out_w), N, M, M);
	gpu_attention_bwd(c, gm->dqkv, gm->dtmp, a->qkv, a->probs, B, T, M, H, p, seed, dropout_site(l, SITE_ATT));
	gpu_linear_bwd_ex(c, gm->dx, GG(o->qkv_w), GG(o->qkv_b), gm->dqkv, gm->xs[l], GP(o->qkv_w), N, M, 3 * M, 1);
}

/* Backward of the input group: gm->dx holds d xs[0]. */
static void bwd_input(struct gpu_model *gm, const float *gp, float *gg)
{
	const struct model_dims *d = &gm->d;
	const struct param_layout *lay = gm->lay;
	const size_t goff = lay->group_off[0];
	gpu_ops_ctx *c = gm->ops;
	int N = gm->nb * d->T, M = d->M, E = d->E, FD = d->F * d->D;

	gpu_linear_bwd(c, gm->de, GG(lay->emb_w), GG(lay->emb_b), gm->dx, gm->e, GP(lay->emb_w), N, E, M);
	gpu_embbag_mean_bwd(c, GG(lay->emb), gm->de, gm->cat, N, d->S, E);
	gpu_linear_bwd(c, NULL, GG(lay->dense_w), GG(lay->dense_b), gm->dx, gm->dense, GP(lay->dense_w), N, FD, M);
}

#undef GP
#undef GG

enum aorta_status gpu_model_begin(struct gpu_model *gm, uint64_t dropout_seed, int training, float loss_scale,
				  struct aorta_error *err)
{
	gm->pass_seed = dropout_seed;
	gm->pass_p = training ? gm->d.dropout : 0.0f;
	gm->pass_loss_scale = loss_scale;
	gm->next_fwd = 0;
	gm->next_bwd = -2;
	(void)err;
	return AORTA_OK;
}

enum aorta_status gpu_model_group_forward(struct gpu_model *gm, int g, const float *gp, struct aorta_error *err)
{
	const int L = gm->d.L;
	if (g != gm->next_fwd || g < 0 || !gp)
		return aorta_fail(err, AORTA_EINTERNAL, "", 0, -1,
				  "gpu model: forward of group %d out of order (expected %d%s)%s", g, gm->next_fwd,
				  gm->next_fwd < 0 ? ", no pass begun" : "", gp ? "" : " or without parameters");
	if (g == 0)
		fwd_input(gm, gp);
	else if (g <= L)
		fwd_layer(gm, g - 1, gp);
	else
		fwd_head(gm, gp);
	gm->next_fwd = g == L + 1 ? -1 : g + 1;
	if (g == L + 1)
		gm->next_bwd = L + 1;
	return ops_status(gm, err, "gpu forward");
}

enum aorta_status gpu_model_group_backward(struct gpu_model *gm, int g, const float *gp, float *gg,
					   struct aorta_error *err)
{
	const int L = gm->d.L;
	if (g != gm->next_bwd || g < 0 || !gp || !gg)
		return aorta_fail(err, AORTA_EINTERNAL, "", 0, -1,
				  "gpu model: backward of group %d out of order (expected %d; the forward must "
				  "finish first)%s", g, gm->next_bwd, gp && gg ? "" : " or without buffers");
	if (g == L + 1)
		bwd_head(gm, gp, gg);
	else if (g >= 1)
		bwd_layer(gm, g - 1, gp, gg);
	else
		bwd_input(gm, gp, gg);
	gm->next_bwd = g - 1;
	return ops_status(gm, err, "gpu backward");
}

/* The whole pass: the per-group calls in order on the model's own flat
 * buffers, the phase hook between forward and backward. */
enum aorta_status gpu_model_forward_backward(struct gpu_model *gm, uint64_t dropout_seed, int training,
					     float loss_scale, struct aorta_error *err)
{
	const struct param_layout *lay = gm->lay;
	enum aorta_status st;

	if (!gm->params || !gm->grads)
		return aorta_fail(err, AORTA_EINTERNAL, "", 0, -1,
				  "gpu model: forward_backward on a model created without parameters");
	if ((st = gpu_model_begin(gm, dropout_seed, training, loss_scale, err)))
		return st;
	for (int g = 0; g < lay->ngroups; g++)
		if ((st = gpu_model_group_forward(gm, g, gm->params + lay->group_off[g], err)))
			return st;
	if (gm->phase)
		gm->phase(gm->phase_ctx);
	for (int g = lay->ngroups - 1; g >= 0; g--)
		if ((st = gpu_model_group_backward(gm, g, gm->params + lay->group_off[g],
						   gm->grads + lay->group_off[g], err)))
			return st;
	return AORTA_OK;
}

enum aorta_status gpu_model_grad_norm_clip(struct gpu_model *gm, float max_norm, struct aorta_error *err)
{
	NEED_STATE(gm, "grad clip");
	GPU_TRY(gpuMemsetAsync(gm->sumsq, 0, sizeof(double), (gpuStream_t)gm->stream), "clip");
	gpu_sumsq(gm->ops, gm->sumsq, gm->grads, gm->lay->total);
	gpu_clip_scale(gm->ops, gm->gscale, gm->sumsq, max_norm, gm->grad_unscale);
	return ops_status(gm, err, "gpu grad clip");
}

enum aorta_status gpu_model_adamw(struct gpu_model *gm, float lr, int step, struct aorta_error *err)
{
	NEED_STATE(gm, "adamw");
	gpu_adamw(gm->ops, gm->params, gm->grads, gm->m, gm->v, gm->lay->total, lr, gm->beta1, gm->beta2,
		  gm->eps, gm->weight_decay, step, gm->gscale);
	return ops_status(gm, err, "gpu adamw");
}

enum aorta_status gpu_model_adamw_dev(struct gpu_model *gm, const struct gpu_adam_hp *hp_dev,
				      struct aorta_error *err)
{
	NEED_STATE(gm, "adamw");
	gpu_adamw_dev(gm->ops, gm->params, gm->grads, gm->m, gm->v, gm->lay->total, hp_dev, gm->gscale);
	return ops_status(gm, err, "gpu adamw");
}

enum aorta_status gpu_model_zero_grad(struct gpu_model *gm, struct aorta_error *err)
{
	NEED_STATE(gm, "zero grad");
	GPU_TRY(gpuMemsetAsync(gm->grads, 0, gm->lay->total * sizeof(float), (gpuStream_t)gm->stream),
		"zero grad");
	return AORTA_OK;
}

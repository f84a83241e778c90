/*
 * model_gpu.h - the ranking transformer of model.h on one GPU: device
 * parameters, gradients, AdamW moments and the activations of one
 * micro-batch, and a training step built from the gpu_* ops.
 *
 * The step mirrors cpu_model_forward_backward() operation by operation:
 * same parameter layout (one flat buffer, model.h), same dropout sites and
 * seed, same accumulation semantics (grads +=, times loss_scale), so the
 * test compares the two directly.  As on the CPU, the pass is also
 * available group by group (gpu_model_begin, gpu_model_group_forward,
 * gpu_model_group_backward: the unit the FSDP / DDP schedules of dist.h
 * run), with parameters and gradients at pointers the caller gives;
 * gpu_model_forward_backward is exactly those calls in order on the
 * model's own flat buffers.
 *
 * No function here synchronizes with the host except the ones named
 * upload_params and download_* (they say so): forward_backward, the norm /
 * clip, AdamW and zero_grad only enqueue work on gm->stream, so a whole step
 * can be captured in a CUDA graph.  The clip scale lives in device memory
 * (gm->gscale) and AdamW reads it there.
 *
 * Ownership: gpu_model_create allocates everything and gpu_model_release
 * frees it; the layout is copied by reference (the caller keeps it alive
 * for the model's lifetime).  The stream belongs to the caller.
 *
 * Not thread safe; one model per thread.
 */
#ifndef AORTA_TRAIN_MODEL_GPU_H
#define AORTA_TRAIN_MODEL_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "train/model.h"
#include "kernels/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gpu_layer_act {
	float *qkv;             /* [N][3M] */
	float *probs;           /* [B][H][T][T] */
	float *att;             /* [N][M] attention output */
	float *sa;              /* [N][M] out-projection output */
	float *r1, *x1;         /* [N][M] LN1 input and output */
	float *mean1, *rstd1;   /* [N] */
	float *h1, *g1;         /* [N][FFN] ff1 pre-activation, dropout(gelu(h1)) */
	float *f;               /* [N][M] ff2 output */
	float *r2;              /* [N][M] LN2 input (output is xs[l+1]) */
	float *mean2, *rstd2;   /* [N] */
};

struct gpu_model {
	struct model_dims d;
	const struct param_layout *lay; /* borrowed */
	int B;                          /* capacity in samples */
	int nb;                         /* samples in the current batch (<= B) */
	enum gpu_precision prec;
	void *stream;                   /* cudaStream_t, borrowed */
	gpu_ops_ctx *ops;

	/* AdamW hyper-parameters (defaults of config/default.yaml) */
	float beta1, beta2, eps, weight_decay;
	/* gradients are divided by this in clip (1 / loss_scale for fp16) */
	float grad_unscale;
	/* optional: called (host side, while enqueueing) between the forward
	 * and the backward of forward_backward, so a caller can close its
	 * "forward" range and open "backward" on the same stream */
	void (*phase)(void *ctx);
	void *phase_ctx;

	/* the pass in progress (gpu_model_begin): dropout seed and probability
	 * in force, loss scale, next group to run forward / backward (-1: none,
	 * -2: backward not open) */
	uint64_t pass_seed;
	float pass_p, pass_loss_scale;
	int next_fwd, next_bwd;

	float *params, *grads, *m, *v; /* device, lay->total floats each; NULL with GPU_MODEL_NO_STATE */
	float *gscale;                 /* device float: clip scale read by AdamW */
	double *sumsq;                 /* device double: squared gradient norm */
	float *loss;                   /* device float: loss of the last micro-batch */

	/* batch */
	float *dense, *target, *weight; /* [N][F*D], [N], [N] */
	int32_t *cat;                   /* [N][S] */
	/* the spare set (gpu_model_spare_batch; NULL until then): the next
	 * step's batch is uploaded there while this step runs, then swapped in */
	float *dense2, *target2, *weight2;
	int32_t *cat2;
	int nb2;

	/* activations */
	float *e;                    /* [N][E] */
	float **xs;                  /* L+1 buffers [N][M]: layer inputs, xs[L] final */
	struct gpu_layer_act *act;   /* L */
	float *xf, *meanf, *rstdf;   /* final LN */
	float *hh, *hg;              /* [N][MLP] head pre-activation, dropout(gelu) */
	float *logits, *dlogits;     /* [N] */

	/* backward scratch */
	float *dx, *dtmp, *df;       /* [N][M] */
	float *dbig;                 /* [N][max(FFN, MLP)] */
	float *dqkv;                 /* [N][3M] */
	float *de;                   /* [N][E] */
};

/* Allocates device memory for a model of dims d / layout lay and micro-
 * batches of up to B samples; params start as zeros, m and v as zeros,
 * gscale as 1.  stream may be NULL (the legacy default stream). */
enum aorta_status gpu_model_create(struct gpu_model *gm, const struct model_dims *d,
				   const struct param_layout *lay, int B, enum gpu_precision prec,
				   void *stream, struct aorta_error *err);
/* flags: GPU_MODEL_NO_STATE leaves params, grads, m and v unallocated
 * (NULL): for a caller that keeps its own (a rank's FSDP shard) and only
 * uses the per-group pass; forward_backward, grad_norm_clip, adamw,
 * zero_grad, upload_params and the param/grad downloads then fail or must
 * not be called. */
#define GPU_MODEL_NO_STATE 1u
enum aorta_status gpu_model_create_ex(struct gpu_model *gm, const struct model_dims *d,
				      const struct param_layout *lay, int B, enum gpu_precision prec,
				      void *stream, unsigned flags, struct aorta_error *err);
void gpu_model_release(struct gpu_model *gm);

/* Synchronous: copies lay->total floats from host and zeroes m and v. */
enum aorta_status gpu_model_upload_params(struct gpu_model *gm, const float *host,
					  struct aorta_error *err);
/* Asynchronous on `stream` (NULL: gm->stream); b->B <= gm->B.  Host memory
 * must stay untouched until the stream passes this point (pinned memory
 * makes the copy truly asynchronous). */
enum aorta_status gpu_model_upload_batch(struct gpu_model *gm, const struct batch *b, void *stream,
					 struct aorta_error *err);
/* A second set of batch buffers (idempotent), so that the next step's batch
 * can be uploaded while this step runs: gpu_model_upload_spare enqueues the
 * copies of b into the spare set on `stream`, gpu_model_swap_batch makes the
 * spare set the current batch (and the current one the spare) by swapping
 * pointers.  The caller orders the streams: the spare set may be written only
 * once every kernel that read it as the current batch is done. */
enum aorta_status gpu_model_spare_batch(struct gpu_model *gm, struct aorta_error *err);
enum aorta_status gpu_model_upload_spare(struct gpu_model *gm, const struct batch *b, void *stream,
					 struct aorta_error *err);
void gpu_model_swap_batch(struct gpu_model *gm);
/* The host-to-device copies upload_batch enqueues, in its order, without
 * enqueueing them (a graph's copy nodes are retargeted with these): fills
 * out[0..GPU_MODEL_BATCH_COPIES-1] and sets gm->nb as upload_batch does. */
struct gpu_copy { void *dst; const void *src; size_t bytes; };
#define GPU_MODEL_BATCH_COPIES 4
enum aorta_status gpu_model_batch_copies(struct gpu_model *gm, const struct batch *b,
					 struct gpu_copy out[GPU_MODEL_BATCH_COPIES],
					 struct aorta_error *err);

/* Forward and backward of the uploaded batch: grads += d(loss *
 * loss_scale)/d(params); the loss goes to gm->loss (device).  Same
 * arguments and meaning as cpu_model_forward_backward. */
enum aorta_status gpu_model_forward_backward(struct gpu_model *gm, uint64_t dropout_seed, int training,
					     float loss_scale, struct aorta_error *err);
/* ---- the same pass, group by group ----------------------------------------
 * As cpu_model_begin / _group_forward / _group_backward (model.h): begin,
 * then group_forward for g = 0 .. L+1 (the head, L+1, also computes the
 * loss into gm->loss and d loss / d logit times loss_scale), then
 * group_backward for g = L+1 .. 0; any other order fails with
 * AORTA_EINTERNAL.  The batch is the one last uploaded (upload_batch or
 * batch_copies set gm->nb), so the copy can run on another stream, and
 * begin itself enqueues nothing.  gp points to group g's parameters
 * (group_len[g] floats, the group's relative layout: parameter at flat
 * offset x is gp[x - group_off[g]]) and gg to its gradients in the same
 * layout, ACCUMULATED (+=); both are device pointers that must stay valid
 * until the stream has run the call (a gathered copy, a replica, or the
 * slice of a flat buffer).  Each call only enqueues on gm->stream (the ops
 * context's stream).  The calls in order are exactly the ops of
 * gpu_model_forward_backward, in the same order, so the results are the
 * same (up to the atomics' summation order in the embedding backward). */
enum aorta_status gpu_model_begin(struct gpu_model *gm, uint64_t dropout_seed, int training, float loss_scale,
				  struct aorta_error *err);
enum aorta_status gpu_model_group_forward(struct gpu_model *gm, int g, const float *gp, struct aorta_error *err);
enum aorta_status gpu_model_group_backward(struct gpu_model *gm, int g, const float *gp, float *gg,
					   struct aorta_error *err);

/* Global gradient norm on device into gm->sumsq, then gm->gscale =
 * grad_unscale * min(1, max_norm / (norm + 1e-6)); max_norm <= 0 only unscales. */
enum aorta_status gpu_model_grad_norm_clip(struct gpu_model *gm, float max_norm, struct aorta_error *err);
/* One AdamW step (t >= 1) over the whole flat buffer with gradient scale gm->gscale. */
enum aorta_status gpu_model_adamw(struct gpu_model *gm, float lr, int step, struct aorta_error *err);
/* The same step with lr and t read on device when it runs (ops_gpu.h;
 * for a captured graph whose lr and step change per replay). */
struct gpu_adam_hp;
enum aorta_status gpu_model_adamw_dev(struct gpu_model *gm, const struct gpu_adam_hp *hp_dev,
				      struct aorta_error *err);
enum aorta_status gpu_model_zero_grad(struct gpu_model *gm, struct aorta_error *err);

/* Synchronous downloads (wait for gm->stream first). */
enum aorta_status gpu_model_download(struct gpu_model *gm, float *host, const float *dev, size_t n,
				     struct aorta_error *err);
enum aorta_status gpu_model_download_params(struct gpu_model *gm, float *host, struct aorta_error *err);
enum aorta_status gpu_model_download_grads(struct gpu_model *gm, float *host, struct aorta_error *err);
/* loss of the last forward_backward; *norm_out (may be NULL) the gradient norm of the last clip */
enum aorta_status gpu_model_download_loss(struct gpu_model *gm, float *loss_out, double *norm_out,
					  struct aorta_error *err);

#ifdef __cplusplus
}
#endif
#endif

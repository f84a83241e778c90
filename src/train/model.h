/*
 * model.h - the synthetic ranking transformer: shapes, parameter layout,
 * synthetic data, and the CPU reference of a whole training step.
 *
 * Model (UPSTREAM.md section 6, same shapes as the upstream train.py):
 *   e   = embbag_mean(emb[V][E], cat[B*T][S])            [B*T][E]
 *   x   = linear(e; emb_w[M][E], emb_b) + linear(dense[B*T][F*D]; dense_w[M][F*D], dense_b)
 *   L post-LN encoder layers (PyTorch TransformerEncoderLayer, norm_first=False, gelu):
 *     qkv = linear(x; qkv_w[3M][M], qkv_b)                 (q | k | v)
 *     a   = attention(qkv; H heads, dropout p on the probabilities, site ATT)
 *     x   = LN1(x + dropout(linear(a; out_w[M][M], out_b), site SA))
 *     f   = linear(dropout(gelu(linear(x; ff1_w[FFN][M], ff1_b)), site FF1); ff2_w[M][FFN], ff2_b)
 *     x   = LN2(x + dropout(f, site FF2))
 *   x = LNf(x); h = dropout(gelu(linear(x; head1_w[MLP][M], head1_b)), site HEAD)
 *   logit = linear(h; head2_w[1][MLP], head2_b)            [B*T]
 *   loss  = mean(importance * BCEWithLogits(logit, target))
 *
 * Parameters live in ONE flat float buffer in groups: group 0 = input
 * (emb, emb_w, emb_b, dense_w, dense_b), groups 1..L = the layers (qkv_w,
 * qkv_b, out_w, out_b, ln1_g, ln1_b, ff1_w, ff1_b, ff2_w, ff2_b, ln2_g,
 * ln2_b, in that order), group L+1 = head (lnf_g, lnf_b, head1_w, head1_b,
 * head2_w, head2_b).  Each group is contiguous, so FSDP (train part 2)
 * shards a group as one flat buffer; gradients use the same layout.
 * Defaults (config/default.yaml) give 58.9 M parameters.
 *
 * Dropout sites: site = ((layer+1) << 8) | kind, kind in enum dropout_site,
 * layer = -1 for the head; the per-step seed is (seed, global_step, micro).
 */
#ifndef AORTA_TRAIN_MODEL_H
#define AORTA_TRAIN_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum dropout_site { SITE_ATT = 1, SITE_SA = 2, SITE_FF1 = 3, SITE_FF2 = 4, SITE_HEAD = 5 };
static inline uint64_t dropout_site(int layer, enum dropout_site k)
{
	return ((uint64_t)(layer + 1) << 8) | (uint64_t)k;
}

struct model_dims {
	int V, E, F, D, T, S, M, H, L, FFN, MLP;
	float dropout;
	float ln_eps;   /* 1e-5, as PyTorch */
};

struct layer_off {
	size_t qkv_w, qkv_b, out_w, out_b, ln1_g, ln1_b, ff1_w, ff1_b, ff2_w, ff2_b, ln2_g, ln2_b;
};

struct param_layout {
	size_t total;                 /* floats */
	int ngroups;                  /* L + 2 */
	size_t *group_off, *group_len;
	size_t emb, emb_w, emb_b, dense_w, dense_b;
	struct layer_off *layer;      /* L entries */
	size_t lnf_g, lnf_b, head1_w, head1_b, head2_w, head2_b;
};

/* Fills the layout; returns 0, or -1 if a dimension is invalid (e.g. M % H). */
int layout_init(struct param_layout *p, const struct model_dims *d);
void layout_release(struct param_layout *p);

/* Initial parameters, deterministic from seed (PyTorch's schemes: Linear
 * U(-1/sqrt(in), 1/sqrt(in)) for weight and bias, attention in-projection
 * xavier-uniform with zero bias, out-projection bias zero, embedding N(0, 1),
 * LayerNorm gamma 1, beta 0). */
void params_init(float *params, const struct param_layout *p, const struct model_dims *d, uint64_t seed);

/* A batch on the host.  Sample s is a pure function of (seed, s): dense
 * N(0,1) [T][F][D], cat uniform in [0, V) [T][S], importance in [0.5, 1.5),
 * target = sigmoid(teacher) in (0, 1), where the teacher is a fixed random
 * function of the token's dense features and ids (so the loss can fall). */
struct batch {
	int B;
	float *dense;      /* [B][T][F][D] */
	int32_t *cat;      /* [B][T][S] */
	float *target;     /* [B][T] */
	float *weight;     /* [B][T] */
};
void batch_alloc(struct batch *b, const struct model_dims *d, int B);
void batch_free(struct batch *b);
void batch_fill(struct batch *b, const struct model_dims *d, uint64_t seed, uint64_t first_sample);

/* CPU reference of forward + backward for one (micro-)batch: returns the
 * loss, ACCUMULATES d(loss * loss_scale)/d(params) into grads (same
 * layout), optionally writes logits [B*T].  dropout_seed selects the masks;
 * training == 0 disables dropout. */
float cpu_model_forward_backward(const struct model_dims *d, const struct param_layout *p,
				 const float *params, float *grads, const struct batch *b,
				 uint64_t dropout_seed, int training, float loss_scale, float *logits);
/* Forward only (evaluation), returns the loss. */
float cpu_model_forward(const struct model_dims *d, const struct param_layout *p,
			const float *params, const struct batch *b, float *logits);

/* ---- The same pass, group by group (the unit FSDP and DDP schedule) -------
 *
 * A state holds the activations of one pass over a batch of B samples.
 * A step is: cpu_model_begin, then cpu_model_group_forward for g = 0, 1,
 * ..., L+1 (g = L+1, the head, also computes the loss and d loss / d logit
 * scaled by loss_scale), then, for training, cpu_model_group_backward for
 * g = L+1, L, ..., 0.  Any other order fails with AORTA_EINTERNAL.
 *
 * gp points to group g's parameters: group_len[g] floats laid out as the
 * group's slice of the flat buffer (parameter at flat offset x is
 * gp[x - group_off[g]]); it may be that slice, a gathered copy, or a
 * replica, and must stay valid only for the call.  gg receives the group's
 * gradients in the same relative layout, ACCUMULATED (+=), scaled by
 * loss_scale.  The calls in this order are exactly the ops of
 * cpu_model_forward_backward, in the same order, so results agree bit for
 * bit.  A state is not thread-safe; separate states are independent. */
struct cpu_model_state;
/* NULL if B <= 0 or the layout does not match the dims.  p must outlive
 * the state.  Allocation failure exits (xcalloc). */
struct cpu_model_state *cpu_model_state_create(const struct model_dims *d, const struct param_layout *p, int B);
void cpu_model_state_free(struct cpu_model_state *s);   /* NULL is a no-op */
int cpu_model_state_batch(const struct cpu_model_state *s);
/* Starts a pass on b (b->B must equal the state's B; b must stay valid
 * until the pass's last call).  training == 0 disables dropout. */
enum aorta_status cpu_model_begin(struct cpu_model_state *s, const struct batch *b, uint64_t dropout_seed,
				  int training, float loss_scale, struct aorta_error *e);
enum aorta_status cpu_model_group_forward(struct cpu_model_state *s, int g, const float *gp,
					  struct aorta_error *e);
enum aorta_status cpu_model_group_backward(struct cpu_model_state *s, int g, const float *gp, float *gg,
					   struct aorta_error *e);
/* After the head's forward: the batch's loss (mean) and its logits [B*T]. */
float cpu_model_loss(const struct cpu_model_state *s);
const float *cpu_model_logits(const struct cpu_model_state *s);

/* Learning rate of upstream's schedule at step s (0-based): linear warm-up
 * (s+1)/warmup, then linear decay to 0 at total_steps. */
double lr_at(double base_lr, long s, long warmup, long total);

#ifdef __cplusplus
}
#endif
#endif

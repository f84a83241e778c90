/*
 * model.c - parameter layout, initialisation, synthetic data, learning-rate
 * schedule and the CPU reference of a whole forward + backward pass of the
 * ranking transformer described in model.h.
 *
 * Design.  The pass is written as the sequence of ops.h calls that the GPU
 * trainer makes, in the same order, so the two can be compared op by op.
 * It is split by parameter group (model.h): a struct cpu_model_state holds
 * every activation the backward needs, per group, in one arena sized for a
 * batch (about 180 MB for the default model at batch 8); forward runs group
 * by group (0 input, 1..L layers, L+1 head with the loss), backward group
 * by group in reverse, and each call reads its group's parameters from a
 * pointer the caller gives (a gathered full copy, a persistent replica, or
 * the group's slice of the flat buffer) and accumulates its gradients into
 * a buffer the caller gives.  That is the unit FSDP and DDP schedule
 * (src/train/dist.h).  cpu_model_forward_backward is the same calls in
 * order on one state allocated per call, so the two agree bit for bit; it
 * caches nothing between calls and is reentrant.  The backward walks the
 * forward in reverse; each step names the forward line it differentiates.
 * Parameter gradients are ACCUMULATED (the ops accumulate dW, db, dg,
 * dtable), so calling it for several micro-batches sums their gradients.

 * Randomness comes only from rng.h (a pure function of seed, site, index),
 * so parameters, batches and dropout masks are reproducible anywhere,
 * including on the GPU.
 *
 * Ownership: layout_init allocates the arrays of a param_layout,
 * layout_release frees them; batch_alloc/batch_free likewise for a batch;
 * cpu_model_state_create/cpu_model_state_free for a state, which keeps the
 * layout and the batch it was given by pointer (they must outlive it).
 * Allocation failure exits through xcalloc (base/error.h).
 */
#include "train/model.h"
#include "base/error.h"
#include "kernels/ops.h"
#include "kernels/rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===================================================================== */
/* Layout                                                                 */
/* ===================================================================== */

/* Takes n floats at *cur and returns their offset. */
static size_t take(size_t *cur, size_t n)
{
	size_t off = *cur;
	*cur += n;
	return off;
}

int layout_init(struct param_layout *p, const struct model_dims *d)
{
	memset(p, 0, sizeof(*p));
	if (d->V <= 0 || d->E <= 0 || d->F <= 0 || d->D <= 0 || d->T <= 0 || d->S <= 0 ||
	    d->M <= 0 || d->H <= 0 || d->L <= 0 || d->FFN <= 0 || d->MLP <= 0 || d->M % d->H != 0 ||
	    !(d->dropout >= 0.0f && d->dropout < 1.0f) || !(d->ln_eps > 0.0f))
		return -1;

	size_t V = (size_t)d->V, E = (size_t)d->E, FD = (size_t)d->F * (size_t)d->D;
	size_t M = (size_t)d->M, FFN = (size_t)d->FFN, MLP = (size_t)d->MLP;
	size_t cur = 0;

	p->ngroups = d->L + 2;
	p->group_off = xcalloc((size_t)p->ngroups, sizeof(size_t));
	p->group_len = xcalloc((size_t)p->ngroups, sizeof(size_t));
	p->layer = xcalloc((size_t)d->L, sizeof(struct layer_off));

	/* group 0: input */
	p->group_off[0] = cur;
	p->emb = take(&cur, V * E);
	p->emb_w = take(&cur, M * E);
	p->emb_b = take(&cur, M);
	p->dense_w = take(&cur, M * FD);
	p->dense_b = take(&cur, M);
	p->group_len[0] = cur - p->group_off[0];

	/* groups 1..L: encoder layers */
	for (int l = 0; l < d->L; l++) {
		struct layer_off *lo = &p->layer[l];
		p->group_off[l + 1] = cur;
		lo->qkv_w = take(&cur, 3 * M * M);
		lo->qkv_b = take(&cur, 3 * M);
		lo->out_w = take(&cur, M * M);
		lo->out_b = take(&cur, M);
		lo->ln1_g = take(&cur, M);
		lo->ln1_b = take(&cur, M);
		lo->ff1_w = take(&cur, FFN * M);
		lo->ff1_b = take(&cur, FFN);
		lo->ff2_w = take(&cur, M * FFN);
		lo->ff2_b = take(&cur, M);
		lo->ln2_g = take(&cur, M);
		lo->ln2_b = take(&cur, M);
		p->group_len[l + 1] = cur - p->group_off[l + 1];
	}

	/* group L+1: head */
	p->group_off[d->L + 1] = cur;
	p->lnf_g = take(&cur, M);
	p->lnf_b = take(&cur, M);
	p->head1_w = take(&cur, MLP * M);
	p->head1_b = take(&cur, MLP);
	p->head2_w = take(&cur, MLP);
	p->head2_b = take(&cur, 1);
	p->group_len[d->L + 1] = cur - p->group_off[d->L + 1];

	p->total = cur;
	return 0;
}

void layout_release(struct param_layout *p)
{
	free(p->group_off);
	free(p->group_len);
	free(p->layer);
	memset(p, 0, sizeof(*p));
}

/* ===================================================================== */
/* Initialisation                                                         */
/* ===================================================================== */

/*
 * Every element's draw is a pure function of (seed, its offset in the flat
 * buffer): uniforms use site INIT_U, normals Box-Muller on sites INIT_U and
 * INIT_V at the same offset.
 */
enum { INIT_U = 0x1a17, INIT_V = 0x1a18 };

/* N(0,1) by Box-Muller from two uniforms in [0,1); 1-u is in (0,1], so the
 * log never sees 0. */
static double box_muller(float u1, float u2)
{
	return sqrt(-2.0 * log(1.0 - (double)u1)) * cos(6.283185307179586 * (double)u2);
}

static void init_uniform(float *params, size_t off, size_t n, double bound, uint64_t seed)
{
	for (size_t i = off; i < off + n; i++)
		params[i] = (float)((2.0 * rng_uniform(seed, INIT_U, i) - 1.0) * bound);
}

static void init_normal(float *params, size_t off, size_t n, uint64_t seed)
{
	for (size_t i = off; i < off + n; i++)
		params[i] = (float)box_muller(rng_uniform(seed, INIT_U, i), rng_uniform(seed, INIT_V, i));
}

static void init_const(float *params, size_t off, size_t n, float v)
{
	for (size_t i = off; i < off + n; i++)
		params[i] = v;
}

/* nn.Linear(in, out): weight and bias U(-1/sqrt(in), 1/sqrt(in)) (what
 * kaiming_uniform(a=sqrt 5) and the bias rule reduce to). */
static void init_linear(float *params, size_t w, size_t b, size_t in, size_t out, uint64_t seed)
{
	double bound = 1.0 / sqrt((double)in);
	init_uniform(params, w, in * out, bound, seed);
	init_uniform(params, b, out, bound, seed);
}

void params_init(float *params, const struct param_layout *p, const struct model_dims *d, uint64_t seed)
{
	size_t V = (size_t)d->V, E = (size_t)d->E, FD = (size_t)d->F * (size_t)d->D;
	size_t M = (size_t)d->M, FFN = (size_t)d->FFN, MLP = (size_t)d->MLP;

	init_normal(params, p->emb, V * E, seed);               /* nn.Embedding: N(0, 1) */
	init_linear(params, p->emb_w, p->emb_b, E, M, seed);
	init_linear(params, p->dense_w, p->dense_b, FD, M, seed);
	for (int l = 0; l < d->L; l++) {
		const struct layer_off *lo = &p->layer[l];
		/* MHA in_proj: xavier_uniform on [3M][M]: bound sqrt(6 / (M + 3M)); bias 0 */
		init_uniform(params, lo->qkv_w, 3 * M * M, sqrt(6.0 / (double)(4 * M)), seed);
		init_const(params, lo->qkv_b, 3 * M, 0.0f);
		/* MHA out_proj: Linear weight init, bias set to 0 by MHA */
		init_uniform(params, lo->out_w, M * M, 1.0 / sqrt((double)M), seed);
		init_const(params, lo->out_b, M, 0.0f);
		init_const(params, lo->ln1_g, M, 1.0f);
		init_const(params, lo->ln1_b, M, 0.0f);
		init_linear(params, lo->ff1_w, lo->ff1_b, M, FFN, seed);
		init_linear(params, lo->ff2_w, lo->ff2_b, FFN, M, seed);
		init_const(params, lo->ln2_g, M, 1.0f);
		init_const(params, lo->ln2_b, M, 0.0f);
	}
	init_const(params, p->lnf_g, M, 1.0f);
	init_const(params, p->lnf_b, M, 0.0f);
	init_linear(params, p->head1_w, p->head1_b, M, MLP, seed);
	init_linear(params, p->head2_w, p->head2_b, MLP, 1, seed);
}

/* ===================================================================== */
/* Synthetic data                                                         */
/* ===================================================================== */

void batch_alloc(struct batch *b, const struct model_dims *d, int B)
{
	size_t BT = (size_t)B * (size_t)d->T;
	b->B = B;
	b->dense = xcalloc(BT * (size_t)d->F * (size_t)d->D, sizeof(float));
	b->cat = xcalloc(BT * (size_t)d->S, sizeof(int32_t));
	b->target = xcalloc(BT, sizeof(float));
	b->weight = xcalloc(BT, sizeof(float));
}

void batch_free(struct batch *b)
{
	free(b->dense);
	free(b->cat);
	free(b->target);
	free(b->weight);
	memset(b, 0, sizeof(*b));
}

/*
 * Sample s draws from sites (s << 4) | kind, so it is a pure function of
 * (seed, s):
 *   dense[t][f][k] = Box-Muller(u(DENSE_U, idx), u(DENSE_V, idx)), idx the
 *                    flat index within the sample's [T][F][D]
 *   cat[t][j]      = rng_u64(CAT, t*S + j) mod V
 *   weight[t]      = 0.5 + u(IMPORTANCE, t)                   in [0.5, 1.5)
 * The teacher is one fixed random function per seed (sites with the top bit
 * set, independent of s):
 *   a[j] ~ N(0, 1/(F*D)) for j < F*D       (so a . dense ~ N(0, 1))
 *   r(id) = sqrt(12) (u(TEACH_ID, id) - 0.5)   (mean 0, variance 1)
 *   z[t] = 0.85 * (a . dense[t]) + 0.85 * sqrt(S) * mean_j r(cat[t][j])
 *   target[t] = sigmoid(z[t])
 * Both terms have unit variance, so z has standard deviation 1.2 and about
 * 98% of targets fall in (0.05, 0.95).  z is a linear function of what the
 * model sees (the dense features and the mean of per-id values, which an
 * embedding can learn), so the loss can fall towards the targets' entropy.
 */
enum {
	DATA_DENSE_U = 1, DATA_DENSE_V = 2, DATA_CAT = 3, DATA_IMPORTANCE = 4,
};
#define TEACH_SITE(k) ((1ull << 63) | (uint64_t)(k))
enum { TEACH_A_U = 1, TEACH_A_V = 2, TEACH_ID = 3 };

static uint64_t data_site(uint64_t sample, int kind)
{
	return (sample << 4) | (uint64_t)kind;
}

void batch_fill(struct batch *b, const struct model_dims *d, uint64_t seed, uint64_t first_sample)
{
	size_t T = (size_t)d->T, S = (size_t)d->S, FD = (size_t)d->F * (size_t)d->D;
	double *a = xcalloc(FD, sizeof(double));
	double a_scale = 1.0 / sqrt((double)FD);
	for (size_t j = 0; j < FD; j++)
		a[j] = a_scale * box_muller(rng_uniform(seed, TEACH_SITE(TEACH_A_U), j),
					    rng_uniform(seed, TEACH_SITE(TEACH_A_V), j));

	for (int bi = 0; bi < b->B; bi++) {
		uint64_t s = first_sample + (uint64_t)bi;
		float *dense = b->dense + (size_t)bi * T * FD;
		int32_t *cat = b->cat + (size_t)bi * T * S;
		for (size_t i = 0; i < T * FD; i++)
			dense[i] = (float)box_muller(rng_uniform(seed, data_site(s, DATA_DENSE_U), i),
						     rng_uniform(seed, data_site(s, DATA_DENSE_V), i));
		for (size_t i = 0; i < T * S; i++)
			cat[i] = (int32_t)(rng_u64(seed, data_site(s, DATA_CAT), i) % (uint64_t)d->V);
		for (size_t t = 0; t < T; t++) {
			size_t row = (size_t)bi * T + t;
			b->weight[row] = 0.5f + rng_uniform(seed, data_site(s, DATA_IMPORTANCE), t);
			double dot = 0.0, idsum = 0.0;
			for (size_t j = 0; j < FD; j++)
				dot += a[j] * dense[t * FD + j];
			for (size_t j = 0; j < S; j++)
				idsum += 3.4641016151377544 *
					 (rng_uniform(seed, TEACH_SITE(TEACH_ID), (uint64_t)cat[t * S + j]) - 0.5);
			double z = 0.85 * dot + 0.85 * sqrt((double)S) * (idsum / (double)S);
			b->target[row] = (float)(1.0 / (1.0 + exp(-z)));
		}
	}
	free(a);
}

/* ===================================================================== */
/* Learning rate                                                          */
/* ===================================================================== */

/*
 * Upstream's LambdaLR factor at 0-based step s:
 *   s <  warmup:  (s + 1) / warmup
 *   s >= warmup:  max(0, (total - s) / max(1, total - warmup))
 * so the factor reaches 1 at s = warmup - 1 and s = warmup, and 0 at
 * s = total (and stays 0 after).  warmup <= 0 means no warm-up.
 */
double lr_at(double base_lr, long s, long warmup, long total)
{
	if (warmup > 0 && s < warmup)
		return base_lr * (double)(s + 1) / (double)warmup;
	long w = warmup > 0 ? warmup : 0;
	long span = total - w > 1 ? total - w : 1;
	double f = (double)(total - s) / (double)span;
	return base_lr * (f > 0.0 ? f : 0.0);
}

/* ===================================================================== */
/* Forward + backward, group by group                                     */
/* ===================================================================== */

/* What the backward needs from one encoder layer's forward. */
struct layer_acts {
	float *xin;            /* [N][M] layer input (previous layer's out) */
	float *qkv;            /* [N][3M] */
	float *probs;          /* [B][H][T][T] */
	float *att;            /* [N][M] attention output (out_proj input) */
	float *r1, *mean1, *rstd1, *x1;  /* r1 = xin + drop(sa), x1 = LN1(r1) */
	float *h1;             /* [N][FFN] ff1 output (GELU input) */
	float *g1d;            /* [N][FFN] drop(gelu(h1)) (ff2 input) */
	float *r2, *mean2, *rstd2, *out; /* r2 = x1 + drop(f), out = LN2(r2) */
};

/*
 * The state of one pass: every activation the backward needs, per group,
 * plus shared temporaries, carved from one arena sized for B samples.
 * Forward must run groups 0, 1, ..., L+1 in order and backward L+1, ..., 0
 * (next_fwd / next_bwd enforce it); the gradient with respect to the
 * output of the group whose backward ran last is in dX (tC), which is how
 * one group's backward hands over to the previous group's.
 */
struct cpu_model_state {
	struct model_dims d;
	const struct param_layout *p;
	int B;
	const struct batch *b;
	uint64_t seed;
	float pd;                 /* dropout probability in force (0 when not training) */
	float loss_scale, loss;
	int next_fwd, next_bwd;   /* next group to run; next_bwd == -2: backward not open */
	float *arena;
	/* group 0 */
	float *e, *x0;
	/* groups 1..L */
	struct layer_acts *la;
	/* group L+1 */
	float *xf, *meanf, *rstdf, *hh, *hd, *tmlp, *tmlp2, *logits, *dlogits;
	/* temporaries */
	float *tA, *tB, *tC, *tD, *tF1, *tF2, *tQKV, *tE;
};

static float *carve(float **cur, size_t n)
{
	float *p = *cur;
	*cur += n;
	return p;
}

struct cpu_model_state *cpu_model_state_create(const struct model_dims *d, const struct param_layout *p, int B)
{
	if (B <= 0 || p->ngroups != d->L + 2)
		return NULL;
	const int T = d->T, M = d->M, H = d->H, L = d->L, E = d->E;
	const int FFN = d->FFN, MLP = d->MLP, N = B * T;
	const size_t NM = (size_t)N * M, NF = (size_t)N * FFN, NP = (size_t)B * H * T * T;
	struct cpu_model_state *s = xcalloc(1, sizeof(*s));
	s->d = *d;
	s->p = p;
	s->B = B;
	s->next_bwd = -2;

	size_t per_layer = 3 * NM + NP + 5 * NM + 2 * NF + 4 * (size_t)N;
	size_t total = (size_t)N * E + NM                     /* e, x0 */
		       + (size_t)L * per_layer
		       + NM + 2 * (size_t)N + (size_t)N * MLP * 4 + 2 * (size_t)N  /* head */
		       + 4 * NM + 2 * NF + 3 * NM + (size_t)N * E;  /* temporaries */
	s->arena = xcalloc(total, sizeof(float));
	float *cur = s->arena;

	s->e = carve(&cur, (size_t)N * E);
	s->x0 = carve(&cur, NM);
	s->la = xcalloc((size_t)L, sizeof(*s->la));
	for (int l = 0; l < L; l++) {
		struct layer_acts *a = &s->la[l];
		a->qkv = carve(&cur, 3 * NM);
		a->probs = carve(&cur, NP);
		a->att = carve(&cur, NM);
		a->r1 = carve(&cur, NM);
		a->x1 = carve(&cur, NM);
		a->r2 = carve(&cur, NM);
		a->out = carve(&cur, NM);
		a->h1 = carve(&cur, NF);
		a->g1d = carve(&cur, NF);
		a->mean1 = carve(&cur, (size_t)N);
		a->rstd1 = carve(&cur, (size_t)N);
		a->mean2 = carve(&cur, (size_t)N);
		a->rstd2 = carve(&cur, (size_t)N);
		a->xin = l == 0 ? s->x0 : s->la[l - 1].out;
	}
	s->xf = carve(&cur, NM);
	s->meanf = carve(&cur, (size_t)N);
	s->rstdf = carve(&cur, (size_t)N);
	s->hh = carve(&cur, (size_t)N * MLP);    /* head1 output (GELU input) */
	s->hd = carve(&cur, (size_t)N * MLP);    /* drop(gelu(hh)) (head2 input) */
	s->tmlp = carve(&cur, (size_t)N * MLP);
	s->tmlp2 = carve(&cur, (size_t)N * MLP);
	s->logits = carve(&cur, (size_t)N);
	s->dlogits = carve(&cur, (size_t)N);
	s->tA = carve(&cur, NM);
	s->tB = carve(&cur, NM);
	s->tC = carve(&cur, NM);
	s->tD = carve(&cur, NM);
	s->tF1 = carve(&cur, NF);
	s->tF2 = carve(&cur, NF);
	s->tQKV = carve(&cur, 3 * NM);
	s->tE = carve(&cur, (size_t)N * E);
	return s;
}

void cpu_model_state_free(struct cpu_model_state *s)
{
	if (!s)
		return;
	free(s->la);
	free(s->arena);
	free(s);
}

int cpu_model_state_batch(const struct cpu_model_state *s)
{
	return s->B;
}

enum aorta_status cpu_model_begin(struct cpu_model_state *s, const struct batch *b, uint64_t dropout_seed,
				  int training, float loss_scale, struct aorta_error *e)
{
	if (b->B != s->B)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1,
				  "model state holds %d samples, batch has %d", s->B, b->B);
	s->b = b;
	s->seed = dropout_seed;
	s->pd = training ? s->d.dropout : 0.0f;
	s->loss_scale = loss_scale;
	s->loss = 0.0f;
	s->next_fwd = 0;
	s->next_bwd = -2;
	return AORTA_OK;
}

float cpu_model_loss(const struct cpu_model_state *s)
{
	return s->loss;
}

const float *cpu_model_logits(const struct cpu_model_state *s)
{
	return s->logits;
}

/* Parameter x (an offset in the flat layout) of the group whose slice
 * starts at gp and sits at goff in the flat layout. */
#define GP(x) (gp + ((x) - goff))
#define GG(x) (gg + ((x) - goff))

static void fwd_input(struct cpu_model_state *s, const float *gp)
{
	const struct param_layout *p = s->p;
	const struct batch *b = s->b;
	const size_t goff = p->group_off[0];
	const int N = s->B * s->d.T, M = s->d.M, E = s->d.E, FD = s->d.F * s->d.D;
	const size_t NM = (size_t)N * M;

	/* x0 = linear(embbag_mean(emb, cat)) + linear(dense) */
	cpu_embbag_mean_fwd(s->e, GP(p->emb), b->cat, N, s->d.S, E);
	cpu_linear_fwd(s->x0, s->e, GP(p->emb_w), GP(p->emb_b), N, E, M);
	cpu_linear_fwd(s->tA, b->dense, GP(p->dense_w), GP(p->dense_b), N, FD, M);
	cpu_add(s->x0, s->x0, s->tA, NM);
}

static void fwd_layer(struct cpu_model_state *s, int l, const float *gp)
{
	const struct param_layout *p = s->p;
	const struct model_dims *d = &s->d;
	const size_t goff = p->group_off[l + 1];
	const struct layer_off *o = &p->layer[l];
	struct layer_acts *a = &s->la[l];
	const int B = s->B, T = d->T, M = d->M, H = d->H, FFN = d->FFN, N = B * T;
	const size_t NM = (size_t)N * M, NF = (size_t)N * FFN;
	const float pd = s->pd;
	const uint64_t seed = s->seed;

	/* self-attention block: r1 = xin + drop(out_proj(attn(qkv(xin)))), x1 = LN1(r1) */
	cpu_linear_fwd(a->qkv, a->xin, GP(o->qkv_w), GP(o->qkv_b), N, M, 3 * M);
	cpu_attention_fwd(a->att, a->probs, a->qkv, B, T, M, H, pd, seed, dropout_site(l, SITE_ATT));
	cpu_linear_fwd(s->tA, a->att, GP(o->out_w), GP(o->out_b), N, M, M);
	cpu_dropout_fwd(s->tB, s->tA, NM, pd, seed, dropout_site(l, SITE_SA));
	cpu_add(a->r1, a->xin, s->tB, NM);
	cpu_layernorm_fwd(a->x1, a->mean1, a->rstd1, a->r1, GP(o->ln1_g), GP(o->ln1_b), N, M, d->ln_eps);
	/* feed-forward block: r2 = x1 + drop(ff2(drop(gelu(ff1(x1))))), out = LN2(r2) */
	cpu_linear_fwd(a->h1, a->x1, GP(o->ff1_w), GP(o->ff1_b), N, M, FFN);
	cpu_gelu_fwd(s->tF1, a->h1, NF);
	cpu_dropout_fwd(a->g1d, s->tF1, NF, pd, seed, dropout_site(l, SITE_FF1));
	cpu_linear_fwd(s->tA, a->g1d, GP(o->ff2_w), GP(o->ff2_b), N, FFN, M);
	cpu_dropout_fwd(s->tB, s->tA, NM, pd, seed, dropout_site(l, SITE_FF2));
	cpu_add(a->r2, a->x1, s->tB, NM);
	cpu_layernorm_fwd(a->out, a->mean2, a->rstd2, a->r2, GP(o->ln2_g), GP(o->ln2_b), N, M, d->ln_eps);
}

/* The head's input: the last layer's output (x0 when L == 0). */
static const float *head_input(const struct cpu_model_state *s)
{
	return s->d.L > 0 ? s->la[s->d.L - 1].out : s->x0;
}

static void fwd_head(struct cpu_model_state *s, const float *gp)
{
	const struct param_layout *p = s->p;
	const size_t goff = p->group_off[s->d.L + 1];
	const int N = s->B * s->d.T, M = s->d.M, MLP = s->d.MLP;

	/* head: logit = head2(drop(gelu(head1(LNf(xL))))) */
	cpu_layernorm_fwd(s->xf, s->meanf, s->rstdf, head_input(s), GP(p->lnf_g), GP(p->lnf_b), N, M, s->d.ln_eps);
	cpu_linear_fwd(s->hh, s->xf, GP(p->head1_w), GP(p->head1_b), N, M, MLP);
	cpu_gelu_fwd(s->tmlp, s->hh, (size_t)N * MLP);
	cpu_dropout_fwd(s->hd, s->tmlp, (size_t)N * MLP, s->pd, s->seed, dropout_site(-1, SITE_HEAD));
	cpu_linear_fwd(s->logits, s->hd, GP(p->head2_w), GP(p->head2_b), N, MLP, 1);
	/* dlogits = loss_scale * dloss/dlogit, ready for the backward */
	s->loss = cpu_bce_fwd_bwd(s->dlogits, s->logits, s->b->target, s->b->weight, (size_t)N, s->loss_scale);
}

/* Backward of the head; leaves d(head input) in dX = tC. */
static void bwd_head(struct cpu_model_state *s, const float *gp, float *gg)
{
	const struct param_layout *p = s->p;
	const size_t goff = p->group_off[s->d.L + 1];
	const int N = s->B * s->d.T, M = s->d.M, MLP = s->d.MLP;
	float *dX = s->tC; /* gradient w.r.t. the current group's output */

	cpu_linear_bwd(s->tmlp, GG(p->head2_w), GG(p->head2_b), s->dlogits, s->hd, GP(p->head2_w), N, MLP, 1);
	cpu_dropout_bwd(s->tmlp2, s->tmlp, (size_t)N * MLP, s->pd, s->seed, dropout_site(-1, SITE_HEAD));
	cpu_gelu_bwd(s->tmlp, s->tmlp2, s->hh, (size_t)N * MLP);
	cpu_linear_bwd(s->tA, GG(p->head1_w), GG(p->head1_b), s->tmlp, s->xf, GP(p->head1_w), N, M, MLP);
	cpu_layernorm_bwd(dX, GG(p->lnf_g), GG(p->lnf_b), s->tA, head_input(s), s->meanf, s->rstdf,
			  GP(p->lnf_g), N, M);
}

/* Backward of layer l: dX holds d(out) on entry and d(xin) on return. */
static void bwd_layer(struct cpu_model_state *s, int l, const float *gp, float *gg)
{
	const struct param_layout *p = s->p;
	const struct model_dims *d = &s->d;
	const size_t goff = p->group_off[l + 1];
	const struct layer_off *o = &p->layer[l];
	const struct layer_acts *a = &s->la[l];
	const int B = s->B, T = d->T, M = d->M, H = d->H, FFN = d->FFN, N = B * T;
	const size_t NM = (size_t)N * M, NF = (size_t)N * FFN;
	const float pd = s->pd;
	const uint64_t seed = s->seed;
	float *dX = s->tC, *tA = s->tA, *tB = s->tB, *tD = s->tD, *tF1 = s->tF1, *tF2 = s->tF2;

	/* out = LN2(r2) */
	cpu_layernorm_bwd(tA, GG(o->ln2_g), GG(o->ln2_b), dX, a->r2, a->mean2, a->rstd2, GP(o->ln2_g), N, M);
	/* r2 = x1 + drop(f): d f = drop_bwd(d r2); d x1 gets d r2 directly (below) */
	cpu_dropout_bwd(tB, tA, NM, pd, seed, dropout_site(l, SITE_FF2));
	/* f = ff2(g1d) */
	cpu_linear_bwd(tF1, GG(o->ff2_w), GG(o->ff2_b), tB, a->g1d, GP(o->ff2_w), N, FFN, M);
	/* g1d = drop(gelu(h1)) */
	cpu_dropout_bwd(tF2, tF1, NF, pd, seed, dropout_site(l, SITE_FF1));
	cpu_gelu_bwd(tF1, tF2, a->h1, NF);
	/* h1 = ff1(x1) */
	cpu_linear_bwd(tB, GG(o->ff1_w), GG(o->ff1_b), tF1, a->x1, GP(o->ff1_w), N, M, FFN);
	cpu_add(tA, tA, tB, NM);             /* d x1 = d r2 + d(ff1 path) */
	/* x1 = LN1(r1) */
	cpu_layernorm_bwd(dX, GG(o->ln1_g), GG(o->ln1_b), tA, a->r1, a->mean1, a->rstd1, GP(o->ln1_g), N, M);
	/* r1 = xin + drop(sa): d sa = drop_bwd(d r1); d xin gets d r1 directly (below) */
	cpu_dropout_bwd(tB, dX, NM, pd, seed, dropout_site(l, SITE_SA));
	/* sa = out_proj(att) */
	cpu_linear_bwd(tD, GG(o->out_w), GG(o->out_b), tB, a->att, GP(o->out_w), N, M, M);
	/* att = attention(qkv) */
	cpu_attention_bwd(s->tQKV, tD, a->qkv, a->probs, B, T, M, H, pd, seed, dropout_site(l, SITE_ATT));
	/* qkv = in_proj(xin) */
	cpu_linear_bwd(tB, GG(o->qkv_w), GG(o->qkv_b), s->tQKV, a->xin, GP(o->qkv_w), N, M, 3 * M);
	cpu_add(dX, dX, tB, NM);             /* d xin = d r1 + d(qkv path) */
}

/* Backward of the input group: dX holds d(x0). */
static void bwd_input(struct cpu_model_state *s, const float *gp, float *gg)
{
	const struct param_layout *p = s->p;
	const struct batch *b = s->b;
	const size_t goff = p->group_off[0];
	const int N = s->B * s->d.T, M = s->d.M, E = s->d.E, FD = s->d.F * s->d.D;
	const float *dX = s->tC;

	/* x0 = emb_proj(embbag(emb, cat)) + dense_proj(dense): both get d x0 */
	cpu_linear_bwd(s->tE, GG(p->emb_w), GG(p->emb_b), dX, s->e, GP(p->emb_w), N, E, M);
	cpu_embbag_mean_bwd(GG(p->emb), s->tE, b->cat, N, s->d.S, E);
	cpu_linear_bwd(NULL, GG(p->dense_w), GG(p->dense_b), dX, b->dense, GP(p->dense_w), N, FD, M);
}

#undef GP
#undef GG

enum aorta_status cpu_model_group_forward(struct cpu_model_state *s, int g, const float *gp,
					  struct aorta_error *e)
{
	const int L = s->d.L;
	if (!s->b || g != s->next_fwd)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1,
				  "model: forward of group %d out of order (expected %d%s)", g, s->next_fwd,
				  s->b ? "" : ", no batch begun");
	if (g == 0)
		fwd_input(s, gp);
	else if (g <= L)
		fwd_layer(s, g - 1, gp);
	else
		fwd_head(s, gp);
	s->next_fwd = g + 1;
	if (g == L + 1)
		s->next_bwd = L + 1;
	return AORTA_OK;
}

enum aorta_status cpu_model_group_backward(struct cpu_model_state *s, int g, const float *gp, float *gg,
					   struct aorta_error *e)
{
	const int L = s->d.L;
	if (g != s->next_bwd || g < 0)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1,
				  "model: backward of group %d out of order (expected %d; the forward must "
				  "finish first)", g, s->next_bwd);
	if (g == L + 1)
		bwd_head(s, gp, gg);
	else if (g >= 1)
		bwd_layer(s, g - 1, gp, gg);
	else
		bwd_input(s, gp, gg);
	s->next_bwd = g - 1;
	return AORTA_OK;
}

/* grads == NULL: forward only.  The whole pass is the per-group calls in
 * order, with one state allocated (zeroed) per call, as before the split. */
static float model_run(const struct model_dims *d, const struct param_layout *p,
		       const float *params, float *grads, const struct batch *b,
		       uint64_t seed, int training, float loss_scale, float *logits_out)
{
	struct cpu_model_state *s = cpu_model_state_create(d, p, b->B);
	if (!s) {
		fprintf(stderr, "aorta: model: invalid batch (%d samples) or layout\n", b->B);
		abort();
	}
	struct aorta_error e;
	enum aorta_status st = cpu_model_begin(s, b, seed, training, loss_scale, &e);
	for (int g = 0; !st && g < p->ngroups; g++)
		st = cpu_model_group_forward(s, g, params + p->group_off[g], &e);
	for (int g = p->ngroups - 1; !st && grads && g >= 0; g--)
		st = cpu_model_group_backward(s, g, params + p->group_off[g], grads + p->group_off[g], &e);
	if (st) { /* cannot happen: the order above is the required one */
		fprintf(stderr, "aorta: model: %s\n", e.msg);
		abort();
	}
	float loss = s->loss;
	if (logits_out)
		memcpy(logits_out, s->logits, (size_t)b->B * (size_t)d->T * sizeof(float));
	cpu_model_state_free(s);
	return loss;
}

float cpu_model_forward_backward(const struct model_dims *d, const struct param_layout *p,
				 const float *params, float *grads, const struct batch *b,
				 uint64_t dropout_seed, int training, float loss_scale, float *logits)
{
	return model_run(d, p, params, grads, b, dropout_seed, training, loss_scale, logits);
}

float cpu_model_forward(const struct model_dims *d, const struct param_layout *p,
			const float *params, const struct batch *b, float *logits)
{
	return model_run(d, p, params, NULL, b, 0, 0, 1.0f, logits);
}

/*
 * test_model_cpu.c - the model's CPU reference (src/train/model.c): the
 * parameter layout and its size, initialisation, synthetic batches, the LR
 * schedule, a finite-difference check of the whole forward + backward on a
 * tiny model, and a short training run whose loss must fall.
 *
 * The gradient check perturbs ~210 parameters spread over every named
 * tensor of every group (6 per tensor; embedding rows chosen among ids the
 * batch uses, so their gradient is not trivially 0), with dropout on and a
 * fixed dropout seed, so the masks are the same in every evaluation.
 * Central differences (eps 1e-3, the step actually taken in fp32) of the
 * loss recomputed in double from the returned logits carry the fp32 noise
 * of the forward, about 2e-6 here (the key bias, whose exact gradient is 0,
 * comes out at 1e-12 analytic and ~2e-6 numeric), hence the test
 * |a - n| <= 1e-2 max(|a|, |n|) + 1e-5; the reported maximum relative error
 * is over the pairs with max(|a|, |n|) > 1e-3.
 */
#include "testing.h"
#include "train/model.h"
#include "kernels/ops.h"
#include "kernels/rng.h"

#include <stdint.h>

static struct model_dims default_dims(void)
{
	struct model_dims d = { .V = 60000, .E = 192, .F = 16, .D = 128, .T = 64, .S = 32, .M = 768,
				.H = 12, .L = 8, .FFN = 2048, .MLP = 2048, .dropout = 0.1f, .ln_eps = 1e-5f };
	return d;
}

static struct model_dims tiny_dims(void)
{
	struct model_dims d = { .V = 50, .E = 8, .F = 2, .D = 4, .T = 4, .S = 3, .M = 8, .H = 2, .L = 2,
				.FFN = 16, .MLP = 16, .dropout = 0.1f, .ln_eps = 1e-5f };
	return d;
}

static float *falloc(size_t n)
{
	float *p = calloc(n ? n : 1, sizeof(float));
	if (!p)
		abort();
	return p;
}

/* ---- layout -------------------------------------------------------------- */

static void test_layout_default_has_58_9M_params(void)
{
	/*
	 * input:  V E + M E + M + M F D + M
	 *         = 11,520,000 + 147,456 + 768 + 1,572,864 + 768        = 13,241,856
	 * layer:  3M M + 3M + M M + M + 2M + FFN M + FFN + M FFN + M + 2M
	 *         = 1,769,472 + 2,304 + 589,824 + 768 + 1,536
	 *           + 1,572,864 + 2,048 + 1,572,864 + 768 + 1,536       =  5,513,984
	 *         x 8 layers                                            = 44,111,872
	 * head:   2M + MLP M + MLP + MLP + 1
	 *         = 1,536 + 1,572,864 + 2,048 + 2,048 + 1               =  1,578,497
	 * total                                                         = 58,932,225
	 */
	struct model_dims d = default_dims();
	struct param_layout p;
	CHECK_EQ_I(layout_init(&p, &d), 0);
	CHECK_EQ_I(p.total, 58932225);
	CHECK_EQ_I(p.ngroups, 10);
	CHECK_EQ_I(p.group_len[0], 13241856);
	CHECK_EQ_I(p.group_len[1], 5513984);
	CHECK_EQ_I(p.group_len[9], 1578497);
	/* groups contiguous, in order, covering [0, total) exactly */
	size_t cur = 0;
	for (int g = 0; g < p.ngroups; g++) {
		CHECK_EQ_I(p.group_off[g], cur);
		cur += p.group_len[g];
	}
	CHECK_EQ_I(cur, p.total);
	/* named tensors sit inside their group, in the documented order */
	CHECK_EQ_I(p.emb, 0);
	CHECK_EQ_I(p.emb_w, 11520000);
	CHECK_EQ_I(p.dense_b, p.group_len[0] - 768);
	for (int l = 0; l < d.L; l++) {
		CHECK_EQ_I(p.layer[l].qkv_w, p.group_off[l + 1]);
		CHECK_EQ_I(p.layer[l].ln2_b + 768, p.group_off[l + 2]);
		CHECK_EQ_I(p.layer[l].ff2_w, p.layer[l].ff1_b + 2048);
	}
	CHECK_EQ_I(p.lnf_g, p.group_off[9]);
	CHECK_EQ_I(p.head2_b, p.total - 1);
	layout_release(&p);
	CHECK(p.group_off == NULL && p.layer == NULL);
}

static void test_layout_rejects_invalid_dims(void)
{
	struct param_layout p;
	struct model_dims d = tiny_dims();
	d.H = 3; /* 8 % 3 != 0 */
	CHECK_EQ_I(layout_init(&p, &d), -1);
	d = tiny_dims();
	d.L = 0;
	CHECK_EQ_I(layout_init(&p, &d), -1);
	d = tiny_dims();
	d.V = -5;
	CHECK_EQ_I(layout_init(&p, &d), -1);
	d = tiny_dims();
	d.dropout = 1.0f;
	CHECK_EQ_I(layout_init(&p, &d), -1);
	d = tiny_dims();
	CHECK_EQ_I(layout_init(&p, &d), 0);
	layout_release(&p);
}

/* ---- init ---------------------------------------------------------------- */

static void test_params_init_deterministic_with_torch_schemes(void)
{
	struct model_dims d = tiny_dims();
	d.V = 2000; /* 16,000 embedding values for the N(0,1) moments */
	struct param_layout p;
	CHECK_EQ_I(layout_init(&p, &d), 0);
	float *a = falloc(p.total), *b = falloc(p.total), *c = falloc(p.total);
	params_init(a, &p, &d, 7);
	params_init(b, &p, &d, 7);
	params_init(c, &p, &d, 8);
	CHECK(memcmp(a, b, p.total * sizeof(float)) == 0);
	CHECK(memcmp(a, c, p.total * sizeof(float)) != 0);

	double s = 0, s2 = 0;
	size_t ne = (size_t)d.V * d.E;
	for (size_t i = 0; i < ne; i++)
		s += a[p.emb + i], s2 += (double)a[p.emb + i] * a[p.emb + i];
	CHECK_NEAR(s / ne, 0.0, 0.03);
	CHECK_NEAR(s2 / ne, 1.0, 0.05);

	/* Linear(in, out): |w|, |b| <= 1/sqrt(in), and not all tiny */
	double bound = 1.0 / sqrt((double)d.M), mx = 0;
	for (size_t i = 0; i < (size_t)d.FFN * d.M; i++)
		mx = fmax(mx, fabs(a[p.layer[1].ff1_w + i]));
	CHECK(mx <= bound && mx > 0.8 * bound);
	/* xavier on in_proj [3M][M]: bound sqrt(6 / 4M) */
	bound = sqrt(6.0 / (4.0 * d.M)), mx = 0;
	for (size_t i = 0; i < 3 * (size_t)d.M * d.M; i++)
		mx = fmax(mx, fabs(a[p.layer[0].qkv_w + i]));
	CHECK(mx <= bound && mx > 0.8 * bound);
	for (int l = 0; l < d.L; l++)
		for (int i = 0; i < d.M; i++) {
			CHECK_NEAR(a[p.layer[l].qkv_b + i], 0.0, 0);
			CHECK_NEAR(a[p.layer[l].out_b + i], 0.0, 0);
			CHECK_NEAR(a[p.layer[l].ln1_g + i], 1.0, 0);
			CHECK_NEAR(a[p.layer[l].ln2_b + i], 0.0, 0);
		}
	CHECK(fabs(a[p.head2_b]) <= 1.0 / sqrt((double)d.MLP));
	free(a), free(b), free(c);
	layout_release(&p);
}

/* ---- data ---------------------------------------------------------------- */

static void test_batch_fill_is_a_pure_function_of_seed_and_sample(void)
{
	struct model_dims d = tiny_dims();
	d.T = 16, d.S = 5;
	size_t FD = (size_t)d.F * d.D, T = (size_t)d.T, S = (size_t)d.S;
	struct batch a, b, c;
	batch_alloc(&a, &d, 3);
	batch_alloc(&b, &d, 3);
	batch_alloc(&c, &d, 2);
	batch_fill(&a, &d, 42, 10);
	batch_fill(&b, &d, 42, 10);
	CHECK(memcmp(a.dense, b.dense, 3 * T * FD * sizeof(float)) == 0);
	CHECK(memcmp(a.cat, b.cat, 3 * T * S * sizeof(int32_t)) == 0);
	CHECK(memcmp(a.target, b.target, 3 * T * sizeof(float)) == 0);
	CHECK(memcmp(a.weight, b.weight, 3 * T * sizeof(float)) == 0);
	/* samples 11, 12 do not depend on which batch they land in */
	batch_fill(&c, &d, 42, 11);
	CHECK(memcmp(a.dense + T * FD, c.dense, 2 * T * FD * sizeof(float)) == 0);
	CHECK(memcmp(a.cat + T * S, c.cat, 2 * T * S * sizeof(int32_t)) == 0);
	CHECK(memcmp(a.target + T, c.target, 2 * T * sizeof(float)) == 0);
	CHECK(memcmp(a.weight + T, c.weight, 2 * T * sizeof(float)) == 0);
	/* different sample or seed -> different data */
	batch_fill(&b, &d, 42, 11);
	CHECK(memcmp(a.dense, b.dense, T * FD * sizeof(float)) != 0);
	CHECK(memcmp(a.cat, b.cat, T * S * sizeof(int32_t)) != 0);
	CHECK(memcmp(a.target, b.target, T * sizeof(float)) != 0);
	batch_fill(&b, &d, 43, 10);
	CHECK(memcmp(a.dense, b.dense, T * FD * sizeof(float)) != 0);
	batch_free(&b);
	batch_free(&c);
	CHECK(b.dense == NULL && b.B == 0);

	/* value ranges and moments on a larger batch */
	struct batch big;
	batch_alloc(&big, &d, 64);
	batch_fill(&big, &d, 42, 0);
	size_t nt = 64 * T, nd = nt * FD, mid = 0;
	double s = 0, s2 = 0;
	int bad_cat = 0, bad_w = 0, bad_t = 0;
	for (size_t i = 0; i < nd; i++)
		s += big.dense[i], s2 += (double)big.dense[i] * big.dense[i];
	for (size_t i = 0; i < nt * S; i++)
		bad_cat += big.cat[i] < 0 || big.cat[i] >= d.V;
	for (size_t i = 0; i < nt; i++) {
		bad_w += !(big.weight[i] >= 0.5f && big.weight[i] < 1.5f);
		bad_t += !(big.target[i] > 0.0f && big.target[i] < 1.0f);
		mid += big.target[i] > 0.05f && big.target[i] < 0.95f;
	}
	CHECK_NEAR(s / nd, 0.0, 0.05);
	CHECK_NEAR(s2 / nd, 1.0, 0.08);
	CHECK_EQ_I(bad_cat, 0);
	CHECK_EQ_I(bad_w, 0);
	CHECK_EQ_I(bad_t, 0);
	CHECK(mid > nt * 9 / 10); /* targets spread inside (0.05, 0.95) */
	batch_free(&a);
	batch_free(&big);
}

/* ---- learning rate ------------------------------------------------------ */

static void test_lr_warmup_then_linear_decay(void)
{
	CHECK_NEAR(lr_at(3e-4, 0, 100, 2000), 3e-6, 1e-15);
	CHECK_NEAR(lr_at(1.0, 49, 100, 2000), 0.5, 1e-12);
	CHECK_NEAR(lr_at(1.0, 99, 100, 2000), 1.0, 1e-12);
	CHECK_NEAR(lr_at(1.0, 100, 100, 2000), 1.0, 1e-12);
	CHECK_NEAR(lr_at(1.0, 1050, 100, 2000), 0.5, 1e-12);
	CHECK_NEAR(lr_at(1.0, 1999, 100, 2000), 1.0 / 1900, 1e-12);
	CHECK_NEAR(lr_at(1.0, 2000, 100, 2000), 0.0, 0);
	CHECK_NEAR(lr_at(1.0, 5000, 100, 2000), 0.0, 0);
	CHECK_NEAR(lr_at(2.0, 0, 0, 10), 2.0, 1e-12); /* no warm-up */
}

/* ---- whole-model gradient check ---------------------------------------- */

struct tensor_ref {
	const char *name;
	size_t off, len;
};

/* Every named tensor of the layout, in layout order; returns the count. */
static int list_tensors(struct tensor_ref *t, const struct param_layout *p, const struct model_dims *d)
{
	size_t M = d->M, FFN = d->FFN, MLP = d->MLP;
	int n = 0;
#define T_(nm, o, l) (t[n++] = (struct tensor_ref){ nm, (o), (l) })
	T_("emb", p->emb, (size_t)d->V * d->E);
	T_("emb_w", p->emb_w, M * d->E);
	T_("emb_b", p->emb_b, M);
	T_("dense_w", p->dense_w, M * d->F * d->D);
	T_("dense_b", p->dense_b, M);
	for (int l = 0; l < d->L; l++) {
		const struct layer_off *o = &p->layer[l];
		T_("qkv_w", o->qkv_w, 3 * M * M);
		T_("qkv_b", o->qkv_b, 3 * M);
		T_("out_w", o->out_w, M * M);
		T_("out_b", o->out_b, M);
		T_("ln1_g", o->ln1_g, M);
		T_("ln1_b", o->ln1_b, M);
		T_("ff1_w", o->ff1_w, FFN * M);
		T_("ff1_b", o->ff1_b, FFN);
		T_("ff2_w", o->ff2_w, M * FFN);
		T_("ff2_b", o->ff2_b, M);
		T_("ln2_g", o->ln2_g, M);
		T_("ln2_b", o->ln2_b, M);
	}
	T_("lnf_g", p->lnf_g, M);
	T_("lnf_b", p->lnf_b, M);
	T_("head1_w", p->head1_w, MLP * M);
	T_("head1_b", p->head1_b, MLP);
	T_("head2_w", p->head2_w, MLP);
	T_("head2_b", p->head2_b, 1);
#undef T_
	return n;
}

/* The model's loss recomputed in double from its fp32 logits: the returned
 * fp32 loss would quantise (L+ - L-) to multiples of ulp(0.7) = 6e-8, i.e.
 * 3e-5 in the gradient, as large as many of the gradients checked. */
static double bce_double(const float *z, const struct batch *b, size_t n)
{
	double s = 0.0;
	for (size_t i = 0; i < n; i++) {
		double x = z[i], y = b->target[i];
		s += b->weight[i] * ((x > 0 ? x : 0) - x * y + log1p(exp(-fabs(x))));
	}
	return s / (double)n;
}

static void test_full_model_grad_matches_finite_differences(void)
{
	struct model_dims d = tiny_dims();
	struct param_layout p;
	CHECK_EQ_I(layout_init(&p, &d), 0);
	float *w = falloc(p.total), *g = falloc(p.total), *scratch = falloc(p.total);
	const size_t N = (size_t)2 * d.T;
	float logits[2 * 4];
	params_init(w, &p, &d, 3);
	/* LayerNorm affines and zero biases start at 1 / 0: move them off those
	 * values so the check also sees their interaction with the rest */
	for (size_t i = 0; i < p.total; i++)
		w[i] += 0.05f * (2.0f * rng_uniform(99, 1, i) - 1.0f);
	struct batch b;
	batch_alloc(&b, &d, 2);
	batch_fill(&b, &d, 5, 100);
	const uint64_t dseed = 12345;

	float loss = cpu_model_forward_backward(&d, &p, w, g, &b, dseed, 1, 1.0f, NULL);
	CHECK(isfinite(loss) && loss > 0.0f);

	struct tensor_ref t[5 + 12 * 2 + 6];
	int nt = list_tensors(t, &p, &d);
	CHECK_EQ_I(nt, 35);
	size_t covered = 0;
	for (int i = 0; i < nt; i++)
		covered += t[i].len;
	CHECK_EQ_I(covered, p.total); /* the list names every parameter */

	int checked = 0, bad = 0, nonzero = 0;
	int verbose = getenv("AORTA_GRADCHECK_VERBOSE") != NULL; /* print every pair */
	double maxrel = 0.0;
	const float eps = 1e-3f;
	for (int ti = 0; ti < nt; ti++) {
		for (int k = 0; k < 6; k++) {
			size_t idx;
			uint64_t r = rng_u64(777, (uint64_t)ti, (uint64_t)k);
			if (ti == 0) /* an embedding row the batch uses */
				idx = (size_t)b.cat[r % ((size_t)2 * d.T * d.S)] * d.E + (r >> 32) % d.E;
			else
				idx = r % t[ti].len;
			size_t at = t[ti].off + idx;
			float w0 = w[at];
			w[at] = w0 + eps;
			float hp = w[at] - w0;
			cpu_model_forward_backward(&d, &p, w, scratch, &b, dseed, 1, 1.0f, logits);
			double lp = bce_double(logits, &b, N);
			w[at] = w0 - eps;
			float hm = w0 - w[at];
			cpu_model_forward_backward(&d, &p, w, scratch, &b, dseed, 1, 1.0f, logits);
			double lm = bce_double(logits, &b, N);
			w[at] = w0;
			double num = (lp - lm) / ((double)hp + (double)hm), a = g[at];
			double diff = fabs(a - num), scale = fmax(fabs(a), fabs(num));
			if (scale > 1e-3) { /* where a relative error means something */
				maxrel = fmax(maxrel, diff / scale);
				nonzero++;
			}
			if (verbose)
				fprintf(stderr, "    %s[%zu]: analytic %.7g numeric %.7g\n", t[ti].name, idx, a, num);
			if (diff > 1e-2 * scale + 1e-5) {
				if (bad < 10)
					fprintf(stderr, "    %s[%zu]: analytic %.7g numeric %.7g\n", t[ti].name, idx, a,
						num);
				bad++;
			}
			checked++;
		}
	}
	printf("  grad check: %d parameters over %d tensors; %d with |grad| > 1e-3, max rel error %.3g\n",
	       checked, nt, nonzero, maxrel);
	CHECK_EQ_I(bad, 0);
	CHECK(nonzero > checked / 2); /* the check is not vacuous */

	/* gradients accumulate, scaled by loss_scale: a second call with scale
	 * 2 makes them 3x the first */
	float *g3 = falloc(p.total);
	memcpy(g3, g, p.total * sizeof(float));
	float loss2 = cpu_model_forward_backward(&d, &p, w, g3, &b, dseed, 1, 2.0f, NULL);
	CHECK_NEAR(loss2, loss, 0);
	int acc_bad = 0;
	for (size_t i = 0; i < p.total; i++)
		acc_bad += fabs(g3[i] - 3.0 * g[i]) > 1e-5 * (1.0 + fabs(3.0 * g[i]));
	CHECK_EQ_I(acc_bad, 0);
	free(g3);
	free(w), free(g), free(scratch);
	batch_free(&b);
	layout_release(&p);
}

static void test_forward_matches_forward_backward_without_dropout(void)
{
	struct model_dims d = tiny_dims();
	struct param_layout p;
	CHECK_EQ_I(layout_init(&p, &d), 0);
	float *w = falloc(p.total), *g = falloc(p.total);
	params_init(w, &p, &d, 1);
	struct batch b;
	batch_alloc(&b, &d, 3);
	batch_fill(&b, &d, 9, 0);
	size_t N = (size_t)3 * d.T;
	float *l1 = falloc(N), *l2 = falloc(N), *l3 = falloc(N);
	float e = cpu_model_forward(&d, &p, w, &b, l1);
	float f = cpu_model_forward_backward(&d, &p, w, g, &b, 77, 0, 1.0f, l2);
	float h = cpu_model_forward_backward(&d, &p, w, g, &b, 77, 1, 1.0f, l3);
	CHECK_NEAR(e, f, 0);
	CHECK(memcmp(l1, l2, N * sizeof(float)) == 0);
	CHECK(memcmp(l1, l3, N * sizeof(float)) != 0); /* training applies dropout */
	CHECK(h != e);
	/* the loss is the weighted BCE of the returned logits */
	float *dz = falloc(N);
	CHECK_NEAR(cpu_bce_fwd_bwd(dz, l1, b.target, b.weight, N, 1.0f), e, 1e-6);
	free(w), free(g), free(l1), free(l2), free(l3), free(dz);
	batch_free(&b);
	layout_release(&p);
}

/* ---- training ------------------------------------------------------------ */

static void test_loss_falls_with_adamw(void)
{
	struct model_dims d = tiny_dims();
	d.T = 8;
	const int B = 256, steps = 30; /* 2048 tokens a step: batch noise ~0.003 */
	struct param_layout p;
	CHECK_EQ_I(layout_init(&p, &d), 0);
	float *w = falloc(p.total), *g = falloc(p.total), *m = falloc(p.total), *v = falloc(p.total);
	params_init(w, &p, &d, 11);
	struct batch b;
	batch_alloc(&b, &d, B);
	double first = 0, last = 0;
	for (int s = 0; s < steps; s++) {
		batch_fill(&b, &d, 2024, (uint64_t)s * B); /* fresh samples every step */
		memset(g, 0, p.total * sizeof(float));
		float loss = cpu_model_forward_backward(&d, &p, w, g, &b, 500 + (uint64_t)s, 1, 1.0f, NULL);
		cpu_adamw(w, g, m, v, p.total, 1e-3f, 0.9f, 0.98f, 1e-8f, 0.01f, s + 1, 1.0f);
		if (s < 5)
			first += loss / 5;
		if (s >= steps - 5)
			last += loss / 5;
	}
	printf("  loss falls: mean of first 5 steps %.5f, last 5 %.5f\n", first, last);
	CHECK(last < first - 0.005); /* a real fall, not batch noise (typical: 0.690 -> 0.669) */
	free(w), free(g), free(m), free(v);
	batch_free(&b);
	layout_release(&p);
}

int main(void)
{
	TEST(test_layout_default_has_58_9M_params);
	TEST(test_layout_rejects_invalid_dims);
	TEST(test_params_init_deterministic_with_torch_schemes);
	TEST(test_batch_fill_is_a_pure_function_of_seed_and_sample);
	TEST(test_lr_warmup_then_linear_decay);
	TEST(test_full_model_grad_matches_finite_differences);
	TEST(test_forward_matches_forward_backward_without_dropout);
	TEST(test_loss_falls_with_adamw);
	return test_report();
}

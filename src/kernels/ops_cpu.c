/*
 * ops_cpu.c - the CPU reference of every operation in ops.h.
 *
 * Design.  This file is what the CUDA kernels (ops_gpu.cu) are tested
 * against and what people read to learn what each op computes, so clarity
 * comes first: one plain loop nest per op, fp32 storage, double accumulators
 * where a long sum decides the result (LayerNorm statistics, softmax
 * normaliser, bias gradients, the loss, sums of squares).  The semantics are
 * the ones documented in ops.h; nothing here adds to them.
 *
 * Cost.  The three matrix products of a Linear layer (y = x W^T, dx = dy W,
 * dW += dy^T x) dominate a training step.  They all go through gemm_rows(),
 * a small "i-k-j" kernel: each output row is updated as a sum of scaled
 * contiguous rows of the other operand, four output rows times four input
 * rows at a time, over panels of the other operand that stay in L2.  The innermost loop has
 * a fixed trip count of 8, which GCC vectorises even at -O2 (SSE2), so the
 * default model's step runs in seconds, not minutes, without threads,
 * intrinsics or -ffast-math.  The forward pass needs W^T for this loop
 * order, so cpu_linear_fwd transposes W into a temporary (in*out floats,
 * negligible next to the n*in*out product).
 *
 * Memory: no op keeps state; cpu_linear_fwd allocates and frees one
 * temporary per call and aborts if that allocation fails (a reference run
 * that cannot hold W twice cannot run at all).
 */
#include "kernels/ops.h"
#include "kernels/rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===================================================================== */
/* Matrix kernel                                                          */
/* ===================================================================== */

#define GEMM_NC 256 /* column tile */
#define GEMM_KC 256 /* k tile: a 256 x 256 panel of W (256 KiB) stays in L2 */

/* y[0:len] += a0*w0 + a1*w1 + a2*w2 + a3*w3, elementwise. */
static void axpy4(float *restrict y, const float *restrict w0, const float *restrict w1,
		  const float *restrict w2, const float *restrict w3, float a0, float a1, float a2,
		  float a3, int len)
{
	int j = 0;
	for (; j + 8 <= len; j += 8)
		for (int u = 0; u < 8; u++) /* fixed trip count: vectorised at -O2 */
			y[j + u] += a0 * w0[j + u] + a1 * w1[j + u] + a2 * w2[j + u] + a3 * w3[j + u];
	for (; j < len; j++)
		y[j] += a0 * w0[j] + a1 * w1[j] + a2 * w2[j] + a3 * w3[j];
}

/* y[0:len] += a * w, elementwise. */
static void axpy1(float *restrict y, const float *restrict w, float a, int len)
{
	int j = 0;
	for (; j + 8 <= len; j += 8)
		for (int u = 0; u < 8; u++)
			y[j + u] += a * w[j + u];
	for (; j < len; j++)
		y[j] += a * w[j];
}

/* The register block: four output rows yr += sum_k a[r][k] * wk, k < 4.
 * Each 8-wide slice of the four w rows is loaded once for all four y rows. */
static void kern4x4(float *restrict y0, float *restrict y1, float *restrict y2, float *restrict y3,
		    const float *restrict w0, const float *restrict w1, const float *restrict w2,
		    const float *restrict w3, const float a[4][4], int len)
{
	const float a00 = a[0][0], a01 = a[0][1], a02 = a[0][2], a03 = a[0][3];
	const float a10 = a[1][0], a11 = a[1][1], a12 = a[1][2], a13 = a[1][3];
	const float a20 = a[2][0], a21 = a[2][1], a22 = a[2][2], a23 = a[2][3];
	const float a30 = a[3][0], a31 = a[3][1], a32 = a[3][2], a33 = a[3][3];
	int j = 0;
	for (; j + 8 <= len; j += 8)
		for (int u = 0; u < 8; u++) {
			float v0 = w0[j + u], v1 = w1[j + u], v2 = w2[j + u], v3 = w3[j + u];
			y0[j + u] += a00 * v0 + a01 * v1 + a02 * v2 + a03 * v3;
			y1[j + u] += a10 * v0 + a11 * v1 + a12 * v2 + a13 * v3;
			y2[j + u] += a20 * v0 + a21 * v1 + a22 * v2 + a23 * v3;
			y3[j + u] += a30 * v0 + a31 * v1 + a32 * v2 + a33 * v3;
		}
	for (; j < len; j++) {
		float v0 = w0[j], v1 = w1[j], v2 = w2[j], v3 = w3[j];
		y0[j] += a00 * v0 + a01 * v1 + a02 * v2 + a03 * v3;
		y1[j] += a10 * v0 + a11 * v1 + a12 * v2 + a13 * v3;
		y2[j] += a20 * v0 + a21 * v1 + a22 * v2 + a23 * v3;
		y3[j] += a30 * v0 + a31 * v1 + a32 * v2 + a33 * v3;
	}
}

/*
 * The one matrix product of this file:
 *   Y[r][c] += sum_k A(r, k) * W[k][c]     r < R, k < K, c < len
 * with Y row r at Y + r*ldy, W row k at W + k*ldw, and A(r, k) at
 * A[r*a_rs + k*a_ks] (strides let the caller pass A or A^T without a copy).
 * Blocking: a GEMM_KC x GEMM_NC panel of W is reused by every row block of
 * four; within it, kern4x4 updates 4 rows of Y from 4 rows of W at a time.
 * The sum over k is taken in blocks of four, in increasing k.
 */
static void gemm_rows(float *Y, size_t ldy, int R, const float *A, size_t a_rs, size_t a_ks,
		      const float *W, size_t ldw, int K, int len)
{
	for (int c0 = 0; c0 < len; c0 += GEMM_NC) {
		int cn = len - c0 < GEMM_NC ? len - c0 : GEMM_NC;
		for (int k0 = 0; k0 < K; k0 += GEMM_KC) {
			int k1 = K - k0 < GEMM_KC ? K : k0 + GEMM_KC;
			int r0 = 0;
			for (; r0 + 4 <= R; r0 += 4) {
				float *y[4];
				for (int r = 0; r < 4; r++)
					y[r] = Y + (size_t)(r0 + r) * ldy + c0;
				int k = k0;
				for (; k + 4 <= k1; k += 4) {
					float a[4][4];
					for (int r = 0; r < 4; r++)
						for (int q = 0; q < 4; q++)
							a[r][q] = A[(size_t)(r0 + r) * a_rs + (size_t)(k + q) * a_ks];
					kern4x4(y[0], y[1], y[2], y[3], W + (size_t)k * ldw + c0,
						W + (size_t)(k + 1) * ldw + c0, W + (size_t)(k + 2) * ldw + c0,
						W + (size_t)(k + 3) * ldw + c0, (const float(*)[4])a, cn);
				}
				for (; k < k1; k++)
					for (int r = 0; r < 4; r++)
						axpy1(y[r], W + (size_t)k * ldw + c0,
						      A[(size_t)(r0 + r) * a_rs + (size_t)k * a_ks], cn);
			}
			for (; r0 < R; r0++) { /* leftover rows, one at a time */
				float *y = Y + (size_t)r0 * ldy + c0;
				const float *a = A + (size_t)r0 * a_rs;
				int k = k0;
				for (; k + 4 <= k1; k += 4)
					axpy4(y, W + (size_t)k * ldw + c0, W + (size_t)(k + 1) * ldw + c0,
					      W + (size_t)(k + 2) * ldw + c0, W + (size_t)(k + 3) * ldw + c0,
					      a[(size_t)k * a_ks], a[(size_t)(k + 1) * a_ks],
					      a[(size_t)(k + 2) * a_ks], a[(size_t)(k + 3) * a_ks], cn);
				for (; k < k1; k++)
					axpy1(y, W + (size_t)k * ldw + c0, a[(size_t)k * a_ks], cn);
			}
		}
	}
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fprintf(stderr, "aorta: ops_cpu: out of memory (%zu bytes)\n", n);
		abort();
	}
	return p;
}

/* ===================================================================== */
/* Linear                                                                 */
/* ===================================================================== */

/* y[n][o] = b[o] + sum_i x[n][i] W[o][i] */
void cpu_linear_fwd(float *y, const float *x, const float *W, const float *b, int n, int in, int out)
{
	float *Wt = xmalloc((size_t)in * out * sizeof(float)); /* Wt[i][o] = W[o][i] */
	for (int o = 0; o < out; o++)
		for (int i = 0; i < in; i++)
			Wt[(size_t)i * out + o] = W[(size_t)o * in + i];
	for (int r = 0; r < n; r++)
		for (int o = 0; o < out; o++)
			y[(size_t)r * out + o] = b ? b[o] : 0.0f;
	gemm_rows(y, (size_t)out, n, x, (size_t)in, 1, Wt, (size_t)out, in, out);
	free(Wt);
}

/*
 * From y = x W^T + b:
 *   dx[n][i]  = sum_o dy[n][o] W[o][i]        (dx = dy W, overwritten)
 *   dW[o][i] += sum_n dy[n][o] x[n][i]        (dW += dy^T x)
 *   db[o]    += sum_n dy[n][o]
 */
void cpu_linear_bwd(float *dx, float *dW, float *db, const float *dy, const float *x,
		    const float *W, int n, int in, int out)
{
	if (dx) {
		memset(dx, 0, (size_t)n * in * sizeof(float));
		gemm_rows(dx, (size_t)in, n, dy, (size_t)out, 1, W, (size_t)in, out, in);
	}
	/* rows of dW are indexed by o: A(o, k=row n) = dy[n][o] */
	gemm_rows(dW, (size_t)in, out, dy, 1, (size_t)out, x, (size_t)in, n, in);
	if (db) {
		for (int o = 0; o < out; o++) {
			double s = 0.0;
			for (int r = 0; r < n; r++)
				s += dy[(size_t)r * out + o];
			db[o] += (float)s;
		}
	}
}

/* ===================================================================== */
/* Embedding bag (mean)                                                   */
/* ===================================================================== */

void cpu_embbag_mean_fwd(float *out, const float *table, const int32_t *ids, int n, int S, int E)
{
	for (int r = 0; r < n; r++) {
		float *o = out + (size_t)r * E;
		for (int e = 0; e < E; e++)
			o[e] = 0.0f;
		for (int s = 0; s < S; s++) {
			const float *row = table + (size_t)ids[(size_t)r * S + s] * E;
			for (int e = 0; e < E; e++)
				o[e] += row[e];
		}
		for (int e = 0; e < E; e++)
			o[e] /= (float)S;
	}
}

/* out = (1/S) sum_s table[id_s]  =>  dtable[id_s] += dout / S for each s
 * (an id that appears twice in a bag receives the gradient twice). */
void cpu_embbag_mean_bwd(float *dtable, const float *dout, const int32_t *ids, int n, int S, int E)
{
	for (int r = 0; r < n; r++) {
		const float *d = dout + (size_t)r * E;
		for (int s = 0; s < S; s++) {
			float *row = dtable + (size_t)ids[(size_t)r * S + s] * E;
			for (int e = 0; e < E; e++)
				row[e] += d[e] / (float)S;
		}
	}
}

/* ===================================================================== */
/* LayerNorm                                                              */
/* ===================================================================== */

/* y = (x - mean) * rstd * g + b, mean and biased variance over the row. */
void cpu_layernorm_fwd(float *y, float *mean, float *rstd, const float *x, const float *g,
		       const float *b, int n, int c, float eps)
{
	for (int r = 0; r < n; r++) {
		const float *xr = x + (size_t)r * c;
		float *yr = y + (size_t)r * c;
		double s = 0.0;
		for (int i = 0; i < c; i++)
			s += xr[i];
		double mu = s / c;
		double v = 0.0;
		for (int i = 0; i < c; i++)
			v += (xr[i] - mu) * (xr[i] - mu);
		v /= c;
		float m = (float)mu;
		float rs = (float)(1.0 / sqrt(v + (double)eps));
		for (int i = 0; i < c; i++)
			yr[i] = (xr[i] - m) * rs * g[i] + b[i];
		mean[r] = m;
		rstd[r] = rs;
	}
}

/*
 * With xh = (x - mean) * rstd and y = g xh + b, let gh = dy * g (the
 * gradient w.r.t. xh).  Differentiating through mean and rstd:
 *   dx = rstd * (gh - mean_c(gh) - xh * mean_c(gh * xh))
 *   dg += dy * xh,   db += dy   (summed over rows)
 */
void cpu_layernorm_bwd(float *dx, float *dg, float *db, const float *dy, const float *x,
		       const float *mean, const float *rstd, const float *g, int n, int c)
{
	for (int r = 0; r < n; r++) {
		const float *xr = x + (size_t)r * c, *dyr = dy + (size_t)r * c;
		float *dxr = dx + (size_t)r * c;
		float m = mean[r], rs = rstd[r];
		double s1 = 0.0, s2 = 0.0;
		for (int i = 0; i < c; i++) {
			double xh = (double)((xr[i] - m) * rs);
			double gh = (double)dyr[i] * g[i];
			s1 += gh;
			s2 += gh * xh;
		}
		s1 /= c;
		s2 /= c;
		for (int i = 0; i < c; i++) {
			float xh = (xr[i] - m) * rs;
			double gh = (double)dyr[i] * g[i];
			dxr[i] = (float)(rs * (gh - s1 - xh * s2));
			dg[i] += dyr[i] * xh;
			db[i] += dyr[i];
		}
	}
}

/* ===================================================================== */
/* GELU (exact erf form), dropout, add                                    */
/* ===================================================================== */

#define INV_SQRT2 0.70710678118654752440
#define INV_SQRT_2PI 0.39894228040143267794

void cpu_gelu_fwd(float *y, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double v = x[i];
		y[i] = (float)(0.5 * v * (1.0 + erf(v * INV_SQRT2)));
	}
}

/* d/dx [x Phi(x)] = Phi(x) + x phi(x), Phi the normal CDF, phi its density. */
void cpu_gelu_bwd(float *dx, const float *dy, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double v = x[i];
		double cdf = 0.5 * (1.0 + erf(v * INV_SQRT2));
		double pdf = INV_SQRT_2PI * exp(-0.5 * v * v);
		dx[i] = (float)(dy[i] * (cdf + v * pdf));
	}
}

/* Keep element i iff rng_uniform(seed, site, i) >= p, scaling kept ones by
 * 1/(1-p).  The backward applies the same mask and scale (the op is linear).
 * Elementwise, so y may alias x. */
void cpu_dropout_fwd(float *y, const float *x, size_t n, float p, uint64_t seed, uint64_t site)
{
	if (p <= 0.0f) {
		if (y != x)
			memmove(y, x, n * sizeof(float));
		return;
	}
	float scale = 1.0f / (1.0f - p);
	for (size_t i = 0; i < n; i++)
		y[i] = rng_uniform(seed, site, i) >= p ? x[i] * scale : 0.0f;
}

void cpu_dropout_bwd(float *dx, const float *dy, size_t n, float p, uint64_t seed, uint64_t site)
{
	cpu_dropout_fwd(dx, dy, n, p, seed, site);
}

void cpu_add(float *y, const float *a, const float *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] = a[i] + b[i];
}

/* ===================================================================== */
/* Attention                                                              */
/* ===================================================================== */

/*
 * Per (batch b, head h), with q_t, k_u, v_u the hd-vectors of tokens t, u:
 *   s[t][u]  = q_t . k_u / sqrt(hd)
 *   P[t][u]  = softmax_u s[t][u]                      (saved in probs)
 *   A[t][u]  = P[t][u] * keep(b,h,t,u) / (1-p)         (dropout, flat index
 *              ((b*H + h)*T + t)*T + u into [B][H][T][T])
 *   out_t    = sum_u A[t][u] v_u                      (columns h*hd.. of out)
 */
void cpu_attention_fwd(float *out, float *probs, const float *qkv, int B, int T, int M, int H,
		       float p, uint64_t seed, uint64_t site)
{
	int hd = M / H;
	size_t ld = (size_t)3 * M;
	float scale = (float)(1.0 / sqrt((double)hd));
	float keep_scale = p > 0.0f ? 1.0f / (1.0f - p) : 1.0f;
	float *arow = xmalloc((size_t)T * sizeof(float));
	for (int b = 0; b < B; b++)
		for (int h = 0; h < H; h++)
			for (int t = 0; t < T; t++) {
				const float *q = qkv + (size_t)(b * T + t) * ld + (size_t)h * hd;
				size_t pidx = (((size_t)b * H + h) * T + t) * T;
				float *pr = probs + pidx;
				float mx = -INFINITY;
				for (int u = 0; u < T; u++) {
					const float *k = qkv + (size_t)(b * T + u) * ld + M + (size_t)h * hd;
					float s = 0.0f;
					for (int j = 0; j < hd; j++)
						s += q[j] * k[j];
					pr[u] = s * scale;
					if (pr[u] > mx)
						mx = pr[u];
				}
				double z = 0.0;
				for (int u = 0; u < T; u++) {
					pr[u] = expf(pr[u] - mx);
					z += pr[u];
				}
				for (int u = 0; u < T; u++) {
					pr[u] = (float)(pr[u] / z);
					arow[u] = pr[u];
					if (p > 0.0f)
						arow[u] = rng_uniform(seed, site, pidx + u) >= p ? pr[u] * keep_scale
												 : 0.0f;
				}
				float *o = out + (size_t)(b * T + t) * M + (size_t)h * hd;
				for (int j = 0; j < hd; j++)
					o[j] = 0.0f;
				for (int u = 0; u < T; u++) {
					const float *v =
						qkv + (size_t)(b * T + u) * ld + 2 * (size_t)M + (size_t)h * hd;
					for (int j = 0; j < hd; j++)
						o[j] += arow[u] * v[j];
				}
			}
	free(arow);
}

/*
 * Backward of the above, per (b, h), with dO_t the slice of dout:
 *   dv_u     = sum_t A[t][u] dO_t
 *   dA[t][u] = dO_t . v_u
 *   dP[t][u] = dA[t][u] * keep / (1-p)                 (same mask)
 *   ds[t][u] = P[t][u] (dP[t][u] - sum_u' P[t][u'] dP[t][u'])   (softmax)
 *   dq_t     = sum_u ds[t][u] k_u / sqrt(hd)
 *   dk_u     = sum_t ds[t][u] q_t / sqrt(hd)
 * dqkv is overwritten.
 */
void cpu_attention_bwd(float *dqkv, const float *dout, const float *qkv, const float *probs,
		       int B, int T, int M, int H, float p, uint64_t seed, uint64_t site)
{
	int hd = M / H;
	size_t ld = (size_t)3 * M;
	float scale = (float)(1.0 / sqrt((double)hd));
	float keep_scale = p > 0.0f ? 1.0f / (1.0f - p) : 1.0f;
	float *arow = xmalloc((size_t)T * sizeof(float));
	float *dp = xmalloc((size_t)T * sizeof(float));
	memset(dqkv, 0, (size_t)B * T * ld * sizeof(float));
	for (int b = 0; b < B; b++)
		for (int h = 0; h < H; h++)
			for (int t = 0; t < T; t++) {
				size_t pidx = (((size_t)b * H + h) * T + t) * T;
				const float *pr = probs + pidx;
				const float *dO = dout + (size_t)(b * T + t) * M + (size_t)h * hd;
				const float *q = qkv + (size_t)(b * T + t) * ld + (size_t)h * hd;
				float *dq = dqkv + (size_t)(b * T + t) * ld + (size_t)h * hd;
				for (int u = 0; u < T; u++) {
					int kept = p <= 0.0f || rng_uniform(seed, site, pidx + u) >= p;
					arow[u] = kept ? pr[u] * keep_scale : 0.0f;
					const float *v =
						qkv + (size_t)(b * T + u) * ld + 2 * (size_t)M + (size_t)h * hd;
					float *dv = dqkv + (size_t)(b * T + u) * ld + 2 * (size_t)M + (size_t)h * hd;
					float da = 0.0f;
					for (int j = 0; j < hd; j++) {
						dv[j] += arow[u] * dO[j];
						da += dO[j] * v[j];
					}
					dp[u] = kept ? da * keep_scale : 0.0f;
				}
				double dot = 0.0;
				for (int u = 0; u < T; u++)
					dot += (double)pr[u] * dp[u];
				for (int u = 0; u < T; u++) {
					float ds = pr[u] * (dp[u] - (float)dot) * scale;
					const float *k = qkv + (size_t)(b * T + u) * ld + M + (size_t)h * hd;
					float *dk = dqkv + (size_t)(b * T + u) * ld + M + (size_t)h * hd;
					for (int j = 0; j < hd; j++) {
						dq[j] += ds * k[j];
						dk[j] += ds * q[j];
					}
				}
			}
	free(dp);
	free(arow);
}

/* ===================================================================== */
/* Loss, optimizer, norms                                                 */
/* ===================================================================== */

/*
 * l_i = w_i (max(z,0) - z y + log(1 + exp(-|z|)))  (stable form of
 * -w (y log s(z) + (1-y) log(1-s(z))), s the sigmoid); loss = mean_i l_i.
 * d loss / d z_i = w_i (s(z_i) - y_i) / n.
 */
float cpu_bce_fwd_bwd(float *dlogits, const float *logits, const float *target,
		      const float *weight, size_t n, float scale)
{
	double sum = 0.0;
	for (size_t i = 0; i < n; i++) {
		double z = logits[i], y = target[i], w = weight[i];
		sum += w * ((z > 0.0 ? z : 0.0) - z * y + log1p(exp(-fabs(z))));
		double sg = z >= 0.0 ? 1.0 / (1.0 + exp(-z)) : exp(z) / (1.0 + exp(z));
		dlogits[i] = (float)(scale * w * (sg - y) / (double)n);
	}
	return n ? (float)(sum / (double)n) : 0.0f;
}

/*
 * torch.optim.AdamW, step t >= 1, after g *= gscale:
 *   p -= lr * wd * p                         (decoupled weight decay)
 *   m  = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
 *   p -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)
 */
void cpu_adamw(float *p, const float *g, float *m, float *v, size_t n, float lr, float beta1,
	       float beta2, float eps, float wd, int t, float gscale)
{
	double bc1 = 1.0 - pow((double)beta1, (double)t);
	double bc2 = 1.0 - pow((double)beta2, (double)t);
	float step = (float)(lr / bc1);
	float bc2_sqrt = (float)sqrt(bc2);
	for (size_t i = 0; i < n; i++) {
		float gi = g[i] * gscale;
		p[i] -= lr * wd * p[i];
		m[i] = beta1 * m[i] + (1.0f - beta1) * gi;
		v[i] = beta2 * v[i] + (1.0f - beta2) * gi * gi;
		p[i] -= step * m[i] / (sqrtf(v[i]) / bc2_sqrt + eps);
	}
}

double cpu_sumsq(const float *x, size_t n)
{
	double s = 0.0;
	for (size_t i = 0; i < n; i++)
		s += (double)x[i] * x[i];
	return s;
}

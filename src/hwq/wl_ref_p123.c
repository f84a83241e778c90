/*
 * wl_ref_p123.c - CPU twins of the P1-P3 hwq workloads' kernels (see
 * wl_ref_p123.h).  Plain C, host memory, no CUDA; the selections give
 * the GPU kernels' answers (tie order, stability) by algorithms of their
 * own (a full sort where the GPU makes k passes or sorts by insertion), so
 * a check compares indices exactly against an independent answer, and the
 * per-row references compute in double.
 */
#include "hwq/wl_ref_p123.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

void wl_ref_block_carve(struct wl_block *w, float *p, int M, int F)
{
	size_t m = (size_t)M, f = (size_t)F;
	w->ln1_g = p; p += m;
	w->ln1_b = p; p += m;
	w->wqkv = p; p += 3 * m * m;
	w->bqkv = p; p += 3 * m;
	w->wo = p; p += m * m;
	w->bo = p; p += m;
	w->ln2_g = p; p += m;
	w->ln2_b = p; p += m;
	w->w1 = p; p += f * m;
	w->b1 = p; p += f;
	w->w2 = p; p += m * f;
	w->b2 = p;
}

void wl_ref_relu(float *y, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void wl_ref_softmax_rows(float *y, const float *x, int rows, int cols)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * cols;
		float *yr = y + (size_t)r * cols;
		double m = -INFINITY, s = 0.0;
		for (int c = 0; c < cols; c++)
			m = xr[c] > m ? xr[c] : m;
		for (int c = 0; c < cols; c++)
			s += exp(xr[c] - m);
		for (int c = 0; c < cols; c++)
			yr[c] = (float)(exp(xr[c] - m) / s);
	}
}

/* A row's values with their columns, in the references' order: larger
 * first, a tie to the lower column, NaN last. */
struct ranked { float v; int32_t c; };

static int cmp_ranked(const void *x, const void *y)
{
	const struct ranked *p = x, *q = y;
	int pn = isnan(p->v), qn = isnan(q->v);
	if (pn != qn)
		return pn - qn;
	if (!pn && p->v != q->v)
		return p->v > q->v ? -1 : 1;
	return (p->c > q->c) - (p->c < q->c);
}

/* Row r of x sorted whole (qsort over (value, column)): an algorithm of
 * its own, not the GPU's k passes nor its insertion sort, so a check
 * compares two ways of getting the answer. */
static void rank_row(struct ranked *t, const float *x, int r, int cols)
{
	for (int c = 0; c < cols; c++)
		t[c] = (struct ranked){ x[(size_t)r * cols + c], c };
	qsort(t, (size_t)cols, sizeof(*t), cmp_ranked);
}

void wl_ref_topk_rows(float *val, int32_t *idx, const float *x, int rows, int cols, int k,
		      int normalize)
{
	struct ranked *t = xmalloc((cols > 0 ? (size_t)cols : 1) * sizeof(*t));
	for (int r = 0; r < rows; r++) {
		float *vr = val + (size_t)r * k;
		int32_t *ir = idx + (size_t)r * k;
		float sum = 0.0f;
		rank_row(t, x, r, cols);
		for (int j = 0; j < k; j++) {
			ir[j] = j < cols ? t[j].c : -1;
			vr[j] = j < cols ? t[j].v : -INFINITY;
			sum += vr[j];
		}
		if (normalize)
			for (int j = 0; j < k; j++)
				vr[j] /= sum;
	}
	free(t);
}

void wl_ref_sort_desc_rows(float *val, int32_t *idx, const float *x, int rows, int cols)
{
	struct ranked *t = xmalloc((cols > 0 ? (size_t)cols : 1) * sizeof(*t));
	for (int r = 0; r < rows; r++) {
		rank_row(t, x, r, cols);
		for (int c = 0; c < cols; c++) {
			val[(size_t)r * cols + c] = t[c].v;
			idx[(size_t)r * cols + c] = t[c].c;
		}
	}
	free(t);
}

void wl_ref_cumprod_rows(float *y, const float *x, int rows, int cols)
{
	for (int r = 0; r < rows; r++) {
		float p = 1.0f;
		for (int c = 0; c < cols; c++) {
			p *= x[(size_t)r * cols + c];
			y[(size_t)r * cols + c] = p;
		}
	}
}

void wl_ref_argmax_rows(int32_t *idx, const float *x, int rows, int cols)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * cols;
		int best = 0;
		for (int c = 1; c < cols; c++)
			if (xr[c] > xr[best])
				best = c;
		idx[r] = best;
	}
}

void wl_ref_copy_cols(float *dst, int ld_dst, int col0, const float *src, int rows, int cols)
{
	for (int r = 0; r < rows; r++)
		memcpy(dst + (size_t)r * ld_dst + col0, src + (size_t)r * cols, (size_t)cols * sizeof(float));
}

void wl_ref_gather_rows(float *dst, const float *src, const int32_t *idx, int n, int cols)
{
	for (int i = 0; i < n; i++)
		memcpy(dst + (size_t)i * cols, src + (size_t)idx[i] * cols, (size_t)cols * sizeof(float));
}

void wl_ref_mean_seq(float *y, const float *x, int B, int T, int C)
{
	for (int b = 0; b < B; b++)
		for (int c = 0; c < C; c++) {
			double s = 0.0;
			for (int t = 0; t < T; t++)
				s += x[((size_t)b * T + t) * C + c];
			y[(size_t)b * C + c] = (float)(s / T);
		}
}

void wl_ref_l2norm_rows(float *y, const float *x, int rows, int cols)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * cols;
		double s = 0.0;
		for (int c = 0; c < cols; c++)
			s += (double)xr[c] * xr[c];
		double d = sqrt(s);
		if (d < 1e-12)
			d = 1e-12;
		for (int c = 0; c < cols; c++)
			y[(size_t)r * cols + c] = (float)(xr[c] / d);
	}
}

void wl_ref_moe_weight(float *y, const float *x, const float *w, const int32_t *idx, int e, int k,
		       int t0, int t1, int cols)
{
	for (int t = t0; t < t1; t++) {
		float wt = 0.0f;
		for (int j = 0; j < k; j++)
			if (idx[(size_t)t * k + j] == e)
				wt = w[(size_t)t * k + j];
		for (int c = 0; c < cols; c++)
			y[(size_t)t * cols + c] = x[(size_t)t * cols + c] * wt;
	}
}

void wl_ref_accept_flags(float *flags, const int32_t *pred, const int32_t *draft, const int32_t *forced,
			 int n)
{
	for (int i = 0; i < n; i++)
		flags[i] = (pred[i] == draft[i] || forced[i]) ? 1.0f : 0.0f;
}

void wl_ref_mask_tokens(float *out, const int32_t *tok, const float *mask, int n)
{
	for (int i = 0; i < n; i++)
		out[i] = (float)tok[i] * mask[i];
}

void wl_ref_cache_decay(float *c, int b0, int b1, int H, int S, int hd, int pos)
{
	for (int b = b0; b < b1; b++)
		for (int h = 0; h < H; h++)
			for (int d = 0; d < hd; d++) {
				float *p = c + (((size_t)b * H + h) * S + pos) * hd + d;
				*p = *p * 0.99f + 0.01f;
			}
}

void wl_ref_im2col3x3(float *col, const float *x, int H, int W, int C)
{
	size_t K = (size_t)9 * C;
	for (int y = 0; y < H; y++)
		for (int xx = 0; xx < W; xx++)
			for (int tap = 0; tap < 9; tap++)
				for (int c = 0; c < C; c++) {
					int sy = y + tap / 3 - 1, sx = xx + tap % 3 - 1;
					col[((size_t)y * W + xx) * K + (size_t)tap * C + c] =
						(sy >= 0 && sy < H && sx >= 0 && sx < W) ?
							x[((size_t)sy * W + sx) * C + c] : 0.0f;
				}
}

void wl_ref_maxpool2(float *y, const float *x, int H, int W, int C)
{
	for (int oy = 0; oy < H / 2; oy++)
		for (int ox = 0; ox < W / 2; ox++)
			for (int c = 0; c < C; c++) {
				const float *b = x + ((size_t)(2 * oy) * W + 2 * ox) * C + c;
				float m = b[0];
				float o[3] = { b[C], b[(size_t)W * C], b[(size_t)W * C + C] };
				for (int i = 0; i < 3; i++)
					m = o[i] > m ? o[i] : m;
				y[((size_t)oy * (W / 2) + ox) * C + c] = m;
			}
}

void wl_ref_normalize_flip(float *out, const float *in, const int32_t *flip, int b0, int b1, int C,
			   int H, int W, const float mean[3], const float std[3])
{
	size_t per = (size_t)H * W * C;
	for (int b = b0; b < b1; b++)
		for (int y = 0; y < H; y++)
			for (int x = 0; x < W; x++)
				for (int c = 0; c < C; c++) {
					int xs = flip[b] ? W - 1 - x : x;
					float v = in[(((size_t)b * C + c) * H + y) * W + xs];
					out[b * per + ((size_t)y * W + x) * C + c] = (v - mean[c]) / std[c];
				}
}

void wl_ref_linear_row(double *y, const float *x, const float *W, const float *b, int in, int out)
{
	for (int o = 0; o < out; o++) {
		const float *wr = W + (size_t)o * in;
		double s = b ? b[o] : 0.0;
		for (int i = 0; i < in; i++)
			s += (double)x[i] * wr[i];
		y[o] = s;
	}
}

void wl_ref_layernorm_row(double *y, const double *x, const float *g, const float *b, int c)
{
	double m = 0.0, v = 0.0;
	for (int i = 0; i < c; i++)
		m += x[i];
	m /= c;
	for (int i = 0; i < c; i++)
		v += (x[i] - m) * (x[i] - m);
	v /= c;
	double rs = 1.0 / sqrt(v + WL_LN_EPS);
	for (int i = 0; i < c; i++)
		y[i] = (x[i] - m) * rs * g[i] + b[i];
}

void wl_ref_attention_row(double *out, const float *qkv, int r, int T, int M, int H)
{
	int hd = M / H, b = r / T;
	size_t ld = (size_t)3 * M;
	const float *base = qkv + (size_t)b * T * ld;
	double sc[4096];
	for (int h = 0; h < H; h++) {
		const float *q = qkv + (size_t)r * ld + (size_t)h * hd;
		double m = -INFINITY, sum = 0.0;
		for (int s = 0; s < T && s < 4096; s++) {
			const float *k = base + (size_t)s * ld + M + (size_t)h * hd;
			double a = 0.0;
			for (int d = 0; d < hd; d++)
				a += (double)q[d] * k[d];
			sc[s] = a / sqrt((double)hd);
			m = sc[s] > m ? sc[s] : m;
		}
		for (int s = 0; s < T; s++) {
			sc[s] = exp(sc[s] - m);
			sum += sc[s];
		}
		for (int d = 0; d < hd; d++) {
			double a = 0.0;
			for (int s = 0; s < T; s++)
				a += sc[s] * base[(size_t)s * ld + 2 * M + (size_t)h * hd + d];
			out[h * hd + d] = a / sum;
		}
	}
}

static double act(double v, int gelu)
{
	if (gelu)
		return 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
	return v > 0.0 ? v : 0.0;
}

/* y = W (float row of doubles) + b, via a float copy of nothing: direct double */
static void linear_d(double *y, const double *x, const float *W, const float *b, int in, int out)
{
	for (int o = 0; o < out; o++) {
		const float *wr = W + (size_t)o * in;
		double s = b ? b[o] : 0.0;
		for (int i = 0; i < in; i++)
			s += x[i] * wr[i];
		y[o] = s;
	}
}

void wl_ref_block_row(double *y, double *qkv_row, const struct wl_block *w, const float *x,
		      const float *qkv, int r, int T, int M, int H, int F, int flags)
{
	/* scratch on the heap would need error paths; M <= 2048, F <= 8192 */
	static _Thread_local double xin[2048], h[2048], att[2048], x1[2048], r2[2048], f[8192], q3[6144];
	const float *xr = x + (size_t)r * M;
	int pre = flags & WL_BLOCK_PRE_LN;
	if (M > 2048 || F > 8192)
		return;
	for (int i = 0; i < M; i++)
		xin[i] = xr[i];
	if (pre)
		wl_ref_layernorm_row(h, xin, w->ln1_g, w->ln1_b, M);
	else
		memcpy(h, xin, (size_t)M * sizeof(double));
	if (qkv_row) {
		linear_d(q3, h, w->wqkv, w->bqkv, M, 3 * M);
		memcpy(qkv_row, q3, (size_t)3 * M * sizeof(double));
	}
	wl_ref_attention_row(att, qkv, r, T, M, H);
	linear_d(x1, att, w->wo, w->bo, M, M);
	for (int i = 0; i < M; i++)
		x1[i] += xin[i];
	if (!pre) {
		memcpy(r2, x1, (size_t)M * sizeof(double));
		wl_ref_layernorm_row(x1, r2, w->ln1_g, w->ln1_b, M);
	}
	if (!(flags & WL_BLOCK_FF)) {
		memcpy(y, x1, (size_t)M * sizeof(double));
		return;
	}
	if (pre)
		wl_ref_layernorm_row(h, x1, w->ln2_g, w->ln2_b, M);
	else
		memcpy(h, x1, (size_t)M * sizeof(double));
	linear_d(f, h, w->w1, w->b1, M, F);
	for (int i = 0; i < F; i++)
		f[i] = act(f[i], flags & WL_BLOCK_GELU);
	linear_d(r2, f, w->w2, w->b2, F, M);
	for (int i = 0; i < M; i++)
		r2[i] += x1[i];
	if (pre)
		memcpy(y, r2, (size_t)M * sizeof(double));
	else
		wl_ref_layernorm_row(y, r2, w->ln2_g, w->ln2_b, M);
}

void wl_ref_conv3x3_pixel(double *out, const float *x, const float *w, const float *b, int H, int W,
			  int C, int Cout, int py, int px)
{
	for (int o = 0; o < Cout; o++) {
		double s = b[o];
		for (int tap = 0; tap < 9; tap++) {
			int sy = py + tap / 3 - 1, sx = px + tap % 3 - 1;
			if (sy < 0 || sy >= H || sx < 0 || sx >= W)
				continue;
			const float *xp = x + ((size_t)sy * W + sx) * C;
			const float *wp = w + (size_t)o * 9 * C + (size_t)tap * C;
			for (int c = 0; c < C; c++)
				s += (double)xp[c] * wp[c];
		}
		out[o] = s;
	}
}

void wl_err_add(struct wl_err *e, double got, double want)
{
	double d = fabs(got - want);
	if (!(d <= e->max_abs)) /* NaN counts as the worst */
		e->max_abs = isnan(d) ? INFINITY : d;
	if (fabs(want) > e->scale)
		e->scale = fabs(want);
	e->n++;
}

double wl_err_rel(const struct wl_err *e)
{
	return e->max_abs / (e->scale > 1e-30 ? e->scale : 1e-30);
}

double wl_ref_uniform(uint64_t seed, uint64_t site, uint64_t i)
{
	uint64_t z = seed ^ (site * 0x9e3779b97f4a7c15ull) ^ (i * 0xbf58476d1ce4e5b9ull);
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/*
 * wl_kernels_p123.cu - kernels of the P1-P3 hwq workloads (see
 * wl_kernels_p123_gpu.h) and the shared transformer block.
 *
 * Design.  One simple kernel per operation, written for clarity over peak
 * speed (these workloads measure what many streams do, not kernel tuning):
 * grid-stride elementwise kernels, one thread per row for the small
 * per-row selections (top-k over <= 100 columns, sort of 10, cumprod of 4),
 * one block per row for row reductions.  The attention kernel handles any
 * sequence length (ops_gpu.cu's keeps a whole (b, h) slice in shared
 * memory, which caps T near 64; upstream's sequences are 128-512): one block
 * per (query row, batch*head) holds that row's scores in shared memory.
 * Every function only enqueues on the given stream.
 *
 * The transformer block (wl_block_fwd_a/_b) is split at its only
 * cross-row dependency: phase A (LayerNorm if pre-LN, QKV projection) and
 * phase B (attention of the rows' queries over all keys, projection,
 * residual, feed-forward) both work on a row range, so a workload can give
 * every stream of a role a share of the rows and join the streams once per
 * layer (after phase A).  Its CPU twin is wl_ref_block_row.
 */
#include <math.h>

#include "gpu/gpu.h"

#include "hwq/wl_kernels_p123_gpu.h"
#include "hwq/wl_ref_p123.h"
#include "kernels/ops_gpu.h"
#include "kernels/warp.cuh"

#define TPB 256

static gpuStream_t S(void *s)
{
	return (gpuStream_t)s;
}

static unsigned grid1(size_t n)
{
	size_t b = (n + TPB - 1) / TPB;
	if (b > 65535u * 4u)
		b = 65535u * 4u;
	return b < 1 ? 1u : (unsigned)b;
}

#define GSTRIDE(i, n) for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
			   i += (size_t)gridDim.x * blockDim.x)

/* ---- block reductions (blockDim.x a multiple of 32, <= 1024) ---------- */

/* warp_sum, warp_max: kernels/warp.cuh */

/* red: 32 floats of shared scratch; every thread gets the result */
__device__ static float block_sum(float v, float *red)
{
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
	v = warp_sum(v);
	__syncthreads();
	if (lane == 0)
		red[w] = v;
	__syncthreads();
	float r = 0.0f;
	for (int i = 0; i < nw; i++)
		r += red[i];
	return r;
}

__device__ static float block_max(float v, float *red)
{
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
	v = warp_max(v);
	__syncthreads();
	if (lane == 0)
		red[w] = v;
	__syncthreads();
	float r = -INFINITY;
	for (int i = 0; i < nw; i++)
		r = fmaxf(r, red[i]);
	return r;
}

/* ---- elementwise ------------------------------------------------------ */

__global__ static void relu_k(float *y, const float *x, size_t n)
{
	GSTRIDE(i, n) y[i] = fmaxf(x[i], 0.0f);
}

extern "C" void wlk_relu(float *y, const float *x, size_t n, void *stream)
{
	relu_k<<<grid1(n), TPB, 0, S(stream)>>>(y, x, n);
}

__global__ static void relu_bwd_k(float *dx, const float *dy, const float *y, size_t n)
{
	GSTRIDE(i, n) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

extern "C" void wlk_relu_bwd(float *dx, const float *dy, const float *y, size_t n, void *stream)
{
	relu_bwd_k<<<grid1(n), TPB, 0, S(stream)>>>(dx, dy, y, n);
}

__global__ static void cache_decay_k(float *c, int b0, int b1, int H, int S, int hd, int pos)
{
	size_t n = (size_t)(b1 - b0) * H * hd;
	GSTRIDE(i, n) {
		size_t bh = i / hd, d = i % hd;
		size_t b = b0 + bh / H, h = bh % H;
		float *p = c + ((b * H + h) * S + pos) * hd + d;
		*p = *p * 0.99f + 0.01f;
	}
}

extern "C" void wlk_cache_decay(float *cache, int b0, int b1, int H, int Sn, int hd, int pos, void *stream)
{
	size_t n = (size_t)(b1 - b0) * H * hd;
	if (b1 > b0)
		cache_decay_k<<<grid1(n), TPB, 0, S(stream)>>>(cache, b0, b1, H, Sn, hd, pos);
}

__global__ static void accept_k(float *f, const int32_t *p, const int32_t *d, const int32_t *forced, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		f[i] = (p[i] == d[i] || forced[i]) ? 1.0f : 0.0f;
}

extern "C" void wlk_accept_flags(float *flags, const int32_t *pred, const int32_t *draft,
				 const int32_t *forced, int n, void *stream)
{
	if (n > 0)
		accept_k<<<(n + 127) / 128, 128, 0, S(stream)>>>(flags, pred, draft, forced, n);
}

__global__ static void mask_tok_k(float *o, const int32_t *t, const float *m, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		o[i] = (float)t[i] * m[i];
}

extern "C" void wlk_mask_tokens(float *out, const int32_t *tok, const float *mask, int n, void *stream)
{
	if (n > 0)
		mask_tok_k<<<(n + 127) / 128, 128, 0, S(stream)>>>(out, tok, mask, n);
}

__global__ static void scale_k(float *y, const float *x, float a, size_t n)
{
	GSTRIDE(i, n) y[i] = a * x[i];
}

extern "C" void wlk_scale(float *y, const float *x, float a, size_t n, void *stream)
{
	scale_k<<<grid1(n), TPB, 0, S(stream)>>>(y, x, a, n);
}

__global__ static void fill_k(float *y, float v, size_t n)
{
	GSTRIDE(i, n) y[i] = v;
}

extern "C" void wlk_fill(float *y, float v, size_t n, void *stream)
{
	fill_k<<<grid1(n), TPB, 0, S(stream)>>>(y, v, n);
}

/* ---- rows ------------------------------------------------------------- */

__global__ static void softmax_k(float *y, const float *x, int cols)
{
	__shared__ float red[32];
	const float *xr = x + (size_t)blockIdx.x * cols;
	float *yr = y + (size_t)blockIdx.x * cols;
	float m = -INFINITY;
	for (int c = threadIdx.x; c < cols; c += blockDim.x)
		m = fmaxf(m, xr[c]);
	m = block_max(m, red);
	float s = 0.0f;
	for (int c = threadIdx.x; c < cols; c += blockDim.x)
		s += expf(xr[c] - m);
	s = block_sum(s, red);
	float inv = 1.0f / s;
	for (int c = threadIdx.x; c < cols; c += blockDim.x)
		yr[c] = expf(xr[c] - m) * inv;
}

extern "C" void wlk_softmax_rows(float *y, const float *x, int rows, int cols, void *stream)
{
	if (rows > 0)
		softmax_k<<<rows, cols < 256 ? 32 : 256, 0, S(stream)>>>(y, x, cols);
}

/* one thread per row: k passes of "largest not yet taken" */
__global__ static void topk_k(float *val, int32_t *idx, const float *x, int rows, int cols, int k,
			      int normalize)
{
	int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= rows)
		return;
	const float *xr = x + (size_t)r * cols;
	float *vr = val + (size_t)r * k;
	int32_t *ir = idx + (size_t)r * k;
	float sum = 0.0f;
	for (int j = 0; j < k; j++) {
		int best = -1;
		float bv = -INFINITY;
		for (int c = 0; c < cols; c++) {
			int taken = 0;
			for (int q = 0; q < j; q++)
				taken |= ir[q] == c;
			if (!taken && (best < 0 || xr[c] > bv)) {
				best = c;
				bv = xr[c];
			}
		}
		ir[j] = best;
		vr[j] = bv;
		sum += bv;
	}
	if (normalize)
		for (int j = 0; j < k; j++)
			vr[j] /= sum;
}

extern "C" void wlk_topk_rows(float *val, int32_t *idx, const float *x, int rows, int cols, int k,
			      int normalize, void *stream)
{
	if (rows > 0)
		topk_k<<<(rows + 127) / 128, 128, 0, S(stream)>>>(val, idx, x, rows, cols, k, normalize);
}

/* one thread per row: stable insertion sort, descending */
__global__ static void sort_k(float *val, int32_t *idx, const float *x, int rows, int cols)
{
	int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= rows)
		return;
	const float *xr = x + (size_t)r * cols;
	float *vr = val + (size_t)r * cols;
	int32_t *ir = idx + (size_t)r * cols;
	for (int c = 0; c < cols; c++) {
		float v = xr[c];
		int j = c;
		while (j > 0 && vr[j - 1] < v) {
			vr[j] = vr[j - 1];
			ir[j] = ir[j - 1];
			j--;
		}
		vr[j] = v;
		ir[j] = c;
	}
}

extern "C" void wlk_sort_desc_rows(float *val, int32_t *idx, const float *x, int rows, int cols,
				   void *stream)
{
	if (rows > 0)
		sort_k<<<(rows + 127) / 128, 128, 0, S(stream)>>>(val, idx, x, rows, cols);
}

__global__ static void cumprod_k(float *y, const float *x, int rows, int cols)
{
	int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= rows)
		return;
	float p = 1.0f;
	for (int c = 0; c < cols; c++) {
		p *= x[(size_t)r * cols + c];
		y[(size_t)r * cols + c] = p;
	}
}

extern "C" void wlk_cumprod_rows(float *y, const float *x, int rows, int cols, void *stream)
{
	if (rows > 0)
		cumprod_k<<<(rows + 127) / 128, 128, 0, S(stream)>>>(y, x, rows, cols);
}

__global__ static void argmax_k(int32_t *idx, const float *x, int cols)
{
	__shared__ float bv[TPB];
	__shared__ int bi[TPB];
	const float *xr = x + (size_t)blockIdx.x * cols;
	float v = -INFINITY;
	int i = 0x7fffffff;
	for (int c = threadIdx.x; c < cols; c += blockDim.x)
		if (xr[c] > v) { /* strided: the first maximum of this thread's columns */
			v = xr[c];
			i = c;
		}
	bv[threadIdx.x] = v;
	bi[threadIdx.x] = i;
	__syncthreads();
	for (int o = blockDim.x / 2; o > 0; o >>= 1) {
		if ((int)threadIdx.x < o) {
			float v2 = bv[threadIdx.x + o];
			int i2 = bi[threadIdx.x + o];
			if (v2 > bv[threadIdx.x] || (v2 == bv[threadIdx.x] && i2 < bi[threadIdx.x])) {
				bv[threadIdx.x] = v2;
				bi[threadIdx.x] = i2;
			}
		}
		__syncthreads();
	}
	if (threadIdx.x == 0)
		idx[blockIdx.x] = bi[0];
}

extern "C" void wlk_argmax_rows(int32_t *idx, const float *x, int rows, int cols, void *stream)
{
	if (rows > 0)
		argmax_k<<<rows, TPB, 0, S(stream)>>>(idx, x, cols);
}

__global__ static void copy_cols_k(float *dst, int ld, int col0, const float *src, int rows, int cols)
{
	size_t n = (size_t)rows * cols;
	GSTRIDE(i, n) {
		size_t r = i / cols, c = i % cols;
		dst[r * ld + col0 + c] = src[i];
	}
}

extern "C" void wlk_copy_cols(float *dst, int ld_dst, int col0, const float *src, int rows, int cols,
			      void *stream)
{
	size_t n = (size_t)rows * cols;
	if (n)
		copy_cols_k<<<grid1(n), TPB, 0, S(stream)>>>(dst, ld_dst, col0, src, rows, cols);
}

__global__ static void gather_k(float *dst, const float *src, const int32_t *idx, int n, int cols)
{
	size_t tot = (size_t)n * cols;
	GSTRIDE(i, tot) {
		size_t r = i / cols, c = i % cols;
		dst[i] = src[(size_t)idx[r] * cols + c];
	}
}

extern "C" void wlk_gather_rows(float *dst, const float *src, const int32_t *idx, int n, int cols,
				void *stream)
{
	size_t tot = (size_t)n * cols;
	if (tot)
		gather_k<<<grid1(tot), TPB, 0, S(stream)>>>(dst, src, idx, n, cols);
}

extern "C" void wlk_embed(float *out, const float *table, const int32_t *ids, int n, int E, void *stream)
{
	wlk_gather_rows(out, table, ids, n, E, stream);
}

__global__ static void mean_seq_k(float *y, const float *x, int B, int T, int C)
{
	size_t n = (size_t)B * C;
	GSTRIDE(i, n) {
		size_t b = i / C, c = i % C;
		const float *xb = x + b * T * C + c;
		float s = 0.0f;
		for (int t = 0; t < T; t++)
			s += xb[(size_t)t * C];
		y[i] = s / (float)T;
	}
}

extern "C" void wlk_mean_seq(float *y, const float *x, int B, int T, int C, void *stream)
{
	size_t n = (size_t)B * C;
	if (n)
		mean_seq_k<<<grid1(n), TPB, 0, S(stream)>>>(y, x, B, T, C);
}

__global__ static void l2norm_k(float *y, const float *x, int cols)
{
	__shared__ float red[32];
	const float *xr = x + (size_t)blockIdx.x * cols;
	float *yr = y + (size_t)blockIdx.x * cols;
	float s = 0.0f;
	for (int c = threadIdx.x; c < cols; c += blockDim.x)
		s += xr[c] * xr[c];
	s = block_sum(s, red);
	float inv = 1.0f / fmaxf(sqrtf(s), 1e-12f);
	for (int c = threadIdx.x; c < cols; c += blockDim.x)
		yr[c] = xr[c] * inv;
}

extern "C" void wlk_l2norm_rows(float *y, const float *x, int rows, int cols, void *stream)
{
	if (rows > 0)
		l2norm_k<<<rows, TPB, 0, S(stream)>>>(y, x, cols);
}

__global__ static void moe_weight_k(float *y, const float *x, const float *w, const int32_t *idx, int e,
				    int k, int t0, int t1, int cols)
{
	size_t n = (size_t)(t1 - t0) * cols;
	GSTRIDE(i, n) {
		size_t t = t0 + i / cols, c = i % cols;
		float wt = 0.0f;
		for (int j = 0; j < k; j++)
			if (idx[t * k + j] == e)
				wt = w[t * k + j];
		y[t * cols + c] = x[t * cols + c] * wt;
	}
}

extern "C" void wlk_moe_weight(float *y, const float *x, const float *w, const int32_t *idx, int e,
			       int k, int t0, int t1, int cols, void *stream)
{
	size_t n = (size_t)(t1 - t0) * cols;
	if (t1 > t0)
		moe_weight_k<<<grid1(n), TPB, 0, S(stream)>>>(y, x, w, idx, e, k, t0, t1, cols);
}

/* ---- attention --------------------------------------------------------- */

/* grid (rows r1-r0, B*H... folded): blockIdx.x = query row offset, blockIdx.y = head.
 * Shared: scores [T], q [hd], red [32]. */
__global__ static void attention_k(float *out, float *probs, const float *qkv, int T, int M, int H, int r0)
{
	extern __shared__ float sm[];
	int hd = M / H;
	float *sc = sm, *q = sm + T, *red = q + hd;
	int r = r0 + blockIdx.x, h = blockIdx.y;
	int b = r / T;
	size_t ld = (size_t)3 * M;
	const float *base = qkv + (size_t)b * T * ld + (size_t)h * hd;
	for (int d = threadIdx.x; d < hd; d += blockDim.x)
		q[d] = qkv[(size_t)r * ld + (size_t)h * hd + d];
	__syncthreads();
	float scale = rsqrtf((float)hd);
	float m = -INFINITY;
	for (int s = threadIdx.x; s < T; s += blockDim.x) {
		const float *k = base + (size_t)s * ld + M;
		float acc = 0.0f;
		for (int d = 0; d < hd; d++)
			acc += q[d] * k[d];
		acc *= scale;
		sc[s] = acc;
		m = fmaxf(m, acc);
	}
	m = block_max(m, red);
	float sum = 0.0f;
	for (int s = threadIdx.x; s < T; s += blockDim.x) {
		float e = expf(sc[s] - m);
		sc[s] = e;
		sum += e;
	}
	sum = block_sum(sum, red); /* its __syncthreads also publishes sc */
	float inv = 1.0f / sum;
	if (probs) { /* [B][H][T][T]: row (b, h, t) */
		float *pr = probs + (((size_t)b * H + h) * T + (r - (size_t)b * T)) * T;
		for (int s = threadIdx.x; s < T; s += blockDim.x)
			pr[s] = sc[s] * inv;
	}
	for (int d = threadIdx.x; d < hd; d += blockDim.x) {
		float acc = 0.0f;
		for (int s = 0; s < T; s++)
			acc += sc[s] * base[(size_t)s * ld + 2 * M + d];
		out[(size_t)r * M + (size_t)h * hd + d] = acc * inv;
	}
}

static void attention_rows_p(float *out, float *probs, const float *qkv, int T, int M, int H, int r0,
			     int r1, void *stream)
{
	if (r1 <= r0)
		return;
	int hd = M / H;
	size_t smem = ((size_t)T + hd + 32) * sizeof(float);
	dim3 grid((unsigned)(r1 - r0), (unsigned)H);
	attention_k<<<grid, 128, smem, S(stream)>>>(out, probs, qkv, T, M, H, r0);
}

static void attention_rows(float *out, const float *qkv, int T, int M, int H, int r0, int r1,
			   void *stream)
{
	attention_rows_p(out, NULL, qkv, T, M, H, r0, r1, stream);
}

extern "C" void wlk_attention_rows(float *out, float *probs, const float *qkv, int T, int M, int H,
				   int r0, int r1, void *stream)
{
	attention_rows_p(out, probs, qkv, T, M, H, r0, r1, stream);
}

/* Backward, part A: one block per (query row r, head h): dP[s] = dO[r] . V[s],
 * D = sum_s P[r][s] dP[s], dS[r][s] = P (dP - D) (stored), dQ[r] = scale
 * sum_s dS[r][s] K[s].  Shared: dS row [T], dO row [hd], red [32]. */
__global__ static void attention_bwd_a_k(float *dqkv, float *dS, const float *dout, const float *qkv,
					 const float *probs, int T, int M, int H, int r0)
{
	extern __shared__ float sm[];
	int hd = M / H;
	float *ds = sm, *dor = sm + T, *red = dor + hd;
	int r = r0 + blockIdx.x, h = blockIdx.y, b = r / T, t = r - b * T;
	size_t ld = (size_t)3 * M;
	const float *base = qkv + (size_t)b * T * ld + (size_t)h * hd;
	const float *pr = probs + (((size_t)b * H + h) * T + t) * T;
	for (int d = threadIdx.x; d < hd; d += blockDim.x)
		dor[d] = dout[(size_t)r * M + (size_t)h * hd + d];
	__syncthreads();
	float acc = 0.0f;
	for (int s = threadIdx.x; s < T; s += blockDim.x) {
		const float *v = base + (size_t)s * ld + 2 * M;
		float dp = 0.0f;
		for (int d = 0; d < hd; d++)
			dp += dor[d] * v[d];
		ds[s] = dp;
		acc += pr[s] * dp;
	}
	float D = block_sum(acc, red);
	float *dsr = dS + (((size_t)b * H + h) * T + t) * T;
	for (int s = threadIdx.x; s < T; s += blockDim.x) {
		float v = pr[s] * (ds[s] - D);
		ds[s] = v;
		dsr[s] = v;
	}
	__syncthreads();
	float scale = rsqrtf((float)hd);
	for (int d = threadIdx.x; d < hd; d += blockDim.x) {
		float a = 0.0f;
		for (int s = 0; s < T; s++)
			a += ds[s] * base[(size_t)s * ld + M + d];
		dqkv[(size_t)r * ld + (size_t)h * hd + d] = a * scale;
	}
}

/* Backward, part B: one block per (key row r, head h): dK[r] = scale sum_t
 * dS[t][r] Q[t], dV[r] = sum_t P[t][r] dO[t] (needs part A of every row of
 * the sequence). */
__global__ static void attention_bwd_b_k(float *dqkv, const float *dS, const float *dout,
					 const float *qkv, const float *probs, int T, int M, int H, int r0)
{
	int hd = M / H;
	int r = r0 + blockIdx.x, h = blockIdx.y, b = r / T, s = r - b * T;
	size_t ld = (size_t)3 * M;
	const float *base = qkv + (size_t)b * T * ld + (size_t)h * hd;
	const float *dsb = dS + ((size_t)b * H + h) * T * T, *pb = probs + ((size_t)b * H + h) * T * T;
	float scale = rsqrtf((float)hd);
	for (int d = threadIdx.x; d < hd; d += blockDim.x) {
		float ak = 0.0f, av = 0.0f;
		for (int t = 0; t < T; t++) {
			ak += dsb[(size_t)t * T + s] * base[(size_t)t * ld + d];
			av += pb[(size_t)t * T + s] * dout[((size_t)b * T + t) * M + (size_t)h * hd + d];
		}
		dqkv[(size_t)r * ld + M + (size_t)h * hd + d] = ak * scale;
		dqkv[(size_t)r * ld + 2 * M + (size_t)h * hd + d] = av;
	}
}

extern "C" void wlk_attention_bwd_a(float *dqkv, float *dS, const float *dout, const float *qkv,
				    const float *probs, int T, int M, int H, int r0, int r1, void *stream)
{
	if (r1 <= r0)
		return;
	size_t smem = ((size_t)T + M / H + 32) * sizeof(float);
	dim3 grid((unsigned)(r1 - r0), (unsigned)H);
	attention_bwd_a_k<<<grid, 128, smem, S(stream)>>>(dqkv, dS, dout, qkv, probs, T, M, H, r0);
}

extern "C" void wlk_attention_bwd_b(float *dqkv, const float *dS, const float *dout, const float *qkv,
				    const float *probs, int T, int M, int H, int r0, int r1, void *stream)
{
	if (r1 <= r0)
		return;
	dim3 grid((unsigned)(r1 - r0), (unsigned)H);
	attention_bwd_b_k<<<grid, 128, 0, S(stream)>>>(dqkv, dS, dout, qkv, probs, T, M, H, r0);
}

/* ---- CNN --------------------------------------------------------------- */

__global__ static void im2col_k(float *col, const float *x, int H, int W, int C)
{
	size_t K = (size_t)9 * C, n = (size_t)H * W * K;
	GSTRIDE(i, n) {
		size_t p = i / K, q = i % K;
		int y = (int)(p / W), xx = (int)(p % W);
		int tap = (int)(q / C), c = (int)(q % C);
		int sy = y + tap / 3 - 1, sx = xx + tap % 3 - 1;
		col[i] = (sy >= 0 && sy < H && sx >= 0 && sx < W) ? x[((size_t)sy * W + sx) * C + c] : 0.0f;
	}
}

extern "C" void wlk_im2col3x3(float *col, const float *x, int H, int W, int C, void *stream)
{
	size_t n = (size_t)H * W * 9 * C;
	im2col_k<<<grid1(n), TPB, 0, S(stream)>>>(col, x, H, W, C);
}

__global__ static void maxpool2_k(float *y, const float *x, int H, int W, int C)
{
	int Ho = H / 2, Wo = W / 2;
	size_t n = (size_t)Ho * Wo * C;
	GSTRIDE(i, n) {
		size_t p = i / C;
		int c = (int)(i % C), oy = (int)(p / Wo), ox = (int)(p % Wo);
		const float *b = x + ((size_t)(2 * oy) * W + 2 * ox) * C + c;
		float m = fmaxf(fmaxf(b[0], b[C]), fmaxf(b[(size_t)W * C], b[(size_t)W * C + C]));
		y[i] = m;
	}
}

extern "C" void wlk_maxpool2(float *y, const float *x, int H, int W, int C, void *stream)
{
	size_t n = (size_t)(H / 2) * (W / 2) * C;
	maxpool2_k<<<grid1(n), TPB, 0, S(stream)>>>(y, x, H, W, C);
}

__global__ static void normflip_k(float *out, const float *in, const int32_t *flip, int b0, int b1,
				  int C, int H, int W, float m0, float m1, float m2, float s0, float s1,
				  float s2)
{
	size_t per = (size_t)H * W * C, n = (size_t)(b1 - b0) * per;
	GSTRIDE(i, n) {
		size_t b = b0 + i / per, r = i % per;
		int c = (int)(r % C);
		size_t p = r / C;
		int y = (int)(p / W), x = (int)(p % W);
		int xs = flip[b] ? W - 1 - x : x;
		float v = in[((b * C + c) * H + y) * W + xs];
		float m = c == 0 ? m0 : c == 1 ? m1 : m2, s = c == 0 ? s0 : c == 1 ? s1 : s2;
		out[b * per + r] = (v - m) / s;
	}
}

extern "C" void wlk_normalize_flip(float *out, const float *in, const int32_t *flip, int b0, int b1,
				   int C, int H, int W, float m0, float m1, float m2, float s0,
				   float s1, float s2, void *stream)
{
	size_t n = (size_t)(b1 - b0) * H * W * C;
	if (n)
		normflip_k<<<grid1(n), TPB, 0, S(stream)>>>(out, in, flip, b0, b1, C, H, W, m0, m1, m2,
							     s0, s1, s2);
}

/* ---- transformer block ------------------------------------------------- */

extern "C" size_t wl_block_scratch_floats(int n, int M, int F)
{
	return wl_ref_block_scratch_floats(n, M, F);
}

extern "C" void wl_block_scratch_carve(struct wl_block_scratch *s, float *base, int n, int M, int F)
{
	size_t nm = (size_t)n * M;
	s->h = base;
	s->att = s->h + nm;
	s->x1 = s->att + nm;
	s->r2 = s->x1 + nm;
	s->f = s->r2 + nm;
	s->mean = s->f + (size_t)n * F;
	s->rstd = s->mean + n;
}

extern "C" size_t wl_block_param_floats(int M, int F)
{
	return wl_ref_block_param_floats(M, F);
}

#define LN_EPS WL_LN_EPS

extern "C" int wl_block_fwd_a(gpu_ops_ctx *ops, const struct wl_block *w, struct wl_block_scratch *s,
			      float *qkv, const float *x, int M, int flags, int r0, int r1)
{
	int n = r1 - r0;
	if (n <= 0)
		return 0;
	size_t o = (size_t)r0 * M;
	const float *in = x + o;
	if (flags & WL_BLOCK_PRE_LN) {
		gpu_layernorm_fwd(ops, s->h + o, s->mean + r0, s->rstd + r0, in, w->ln1_g, w->ln1_b, n, M,
				  LN_EPS);
		in = s->h + o;
	}
	gpu_linear_fwd(ops, qkv + (size_t)r0 * 3 * M, in, w->wqkv, w->bqkv, n, M, 3 * M);
	return (flags & WL_BLOCK_PRE_LN) ? 3 : 2;
}

extern "C" int wl_block_fwd_b(gpu_ops_ctx *ops, void *stream, const struct wl_block *w,
			      struct wl_block_scratch *s, const float *qkv, float *y, const float *x,
			      int T, int M, int H, int F, int flags, int r0, int r1)
{
	int n = r1 - r0, k = 0;
	if (n <= 0)
		return 0;
	size_t o = (size_t)r0 * M, bytes = (size_t)n * M * sizeof(float);
	attention_rows(s->att, qkv, T, M, H, r0, r1, stream);
	k++;
	/* x1 = x + proj(att)  (pre-LN: the block's first residual; post-LN: before LN1) */
	float *x1 = (flags & WL_BLOCK_PRE_LN) ? ((flags & WL_BLOCK_FF) ? s->x1 : y) : s->r2;
	gpuMemcpyAsync(x1 + o, x + o, bytes, gpuMemcpyDeviceToDevice, S(stream));
	gpu_linear_fwd_ex(ops, x1 + o, s->att + o, w->wo, w->bo, n, M, M, 1.0f);
	k += 2;
	if (!(flags & WL_BLOCK_PRE_LN)) {
		/* post-LN: x1 = LN1(x + proj) */
		float *ln1 = (flags & WL_BLOCK_FF) ? s->x1 : y;
		gpu_layernorm_fwd(ops, ln1 + o, s->mean + r0, s->rstd + r0, s->r2 + o, w->ln1_g,
				  w->ln1_b, n, M, LN_EPS);
		k++;
		x1 = ln1;
	}
	if (!(flags & WL_BLOCK_FF))
		return k;
	const float *ffin = x1 + o;
	if (flags & WL_BLOCK_PRE_LN) {
		gpu_layernorm_fwd(ops, s->h + o, s->mean + r0, s->rstd + r0, x1 + o, w->ln2_g, w->ln2_b,
				  n, M, LN_EPS);
		ffin = s->h + o;
		k++;
	}
	float *f = s->f + (size_t)r0 * F;
	gpu_linear_fwd(ops, f, ffin, w->w1, w->b1, n, M, F);
	if (flags & WL_BLOCK_GELU)
		gpu_gelu_fwd(ops, f, f, (size_t)n * F);
	else
		wlk_relu(f, f, (size_t)n * F, stream);
	k += 3;
	/* pre-LN: y = x1 + W2 f; post-LN: y = LN2(x1 + W2 f) */
	float *r = (flags & WL_BLOCK_PRE_LN) ? y : s->r2;
	gpuMemcpyAsync(r + o, x1 + o, bytes, gpuMemcpyDeviceToDevice, S(stream));
	gpu_linear_fwd_ex(ops, r + o, f, w->w2, w->b2, n, F, M, 1.0f);
	k += 2;
	if (!(flags & WL_BLOCK_PRE_LN)) {
		gpu_layernorm_fwd(ops, y + o, s->mean + r0, s->rstd + r0, s->r2 + o, w->ln2_g, w->ln2_b,
				  n, M, LN_EPS);
		k++;
	}
	return k;
}

extern "C" int wl_stack_fwd(struct wl_stack_run *sr, const struct wl_block *layers, int nl,
			    const float *x, int B, int T, int M, int H, int F, int flags,
			    float **out)
{
	int n = B * T, k = 0;
	const float *in = x;
	float *y = NULL;
	for (int L = 0; L < nl; L++) {
		int g = (*sr->layer_counter)++;
		float *qkv = sr->qkv[g & 1];
		y = sr->buf[L & 1];
		for (int i = 0; i < sr->ns; i++) {
			int r0 = (int)((long long)n * i / sr->ns), r1 = (int)((long long)n * (i + 1) / sr->ns);
			k += wl_block_fwd_a(sr->ops[i], &layers[L], sr->s, qkv, in, M, flags, r0, r1);
			gpuEventRecord((gpuEvent_t)sr->ev[i], S(sr->streams[i]));
		}
		for (int i = 0; i < sr->ns; i++) {
			int r0 = (int)((long long)n * i / sr->ns), r1 = (int)((long long)n * (i + 1) / sr->ns);
			for (int j = 0; j < sr->ns; j++)
				if (j != i)
					gpuStreamWaitEvent(S(sr->streams[i]), (gpuEvent_t)sr->ev[j], 0);
			k += wl_block_fwd_b(sr->ops[i], sr->streams[i], &layers[L], sr->s, qkv, y, in, T, M,
					    H, F, flags, r0, r1);
		}
		in = y;
	}
	if (out)
		*out = y;
	return k;
}

extern "C" void wl_barrier(void **streams, void **ev, int ns)
{
	for (int i = 0; i < ns; i++)
		gpuEventRecord((gpuEvent_t)ev[i], S(streams[i]));
	for (int i = 0; i < ns; i++)
		for (int j = 0; j < ns; j++)
			if (j != i)
				gpuStreamWaitEvent(S(streams[i]), (gpuEvent_t)ev[j], 0);
}

/* ---- workload plumbing ------------------------------------------------- */

extern "C" enum aorta_status wl_ops_create(struct hwq_ctx *c, gpu_ops_ctx **ops, int n,
					   struct aorta_error *e)
{
	for (int i = 0; i < n; i++) {
		ops[i] = gpu_ops_create((void *)c->streams[i], PREC_FP32);
		if (!ops[i])
			return aorta_fail(e, AORTA_EGPU, "", 0, -1,
					  "cannot create the gpu ops context of stream %d", i);
	}
	return AORTA_OK;
}

extern "C" void wl_ops_destroy(gpu_ops_ctx **ops, int n)
{
	for (int i = 0; i < n; i++)
		if (ops[i]) {
			gpu_ops_destroy(ops[i]);
			ops[i] = NULL;
		}
}

extern "C" enum aorta_status wl_ops_status(gpu_ops_ctx **ops, int n, struct aorta_error *e)
{
	char msg[256];
	for (int i = 0; i < n; i++)
		if (ops[i] && gpu_ops_last_error(ops[i], msg, sizeof msg))
			return aorta_fail(e, AORTA_EGPU, "", 0, -1, "stream %d: %s", i, msg);
	return AORTA_OK;
}

extern "C" enum aorta_status wl_events_create(void **ev, int n, struct aorta_error *e)
{
	for (int i = 0; i < n; i++) {
		gpuEvent_t x;
		if (gpuEventCreateWithFlags(&x, gpuEventDisableTiming) != gpuSuccess)
			return aorta_fail(e, AORTA_EGPU, "", 0, -1, "cannot create event %d", i);
		ev[i] = (void *)x;
	}
	return AORTA_OK;
}

extern "C" void wl_events_destroy(void **ev, int n)
{
	for (int i = 0; i < n; i++)
		if (ev[i]) {
			gpuEventDestroy((gpuEvent_t)ev[i]);
			ev[i] = NULL;
		}
}

extern "C" void wl_record(void *ev, void *stream)
{
	gpuEventRecord((gpuEvent_t)ev, S(stream));
}

extern "C" void wl_wait(void *stream, void *ev)
{
	gpuStreamWaitEvent(S(stream), (gpuEvent_t)ev, 0);
}

extern "C" void wl_copy_async(void *dst, const void *src, size_t bytes, void *stream)
{
	gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDefault, S(stream));
}

extern "C" enum aorta_status wl_fetch(void *dst, const void *src, size_t bytes, struct aorta_error *e)
{
	gpuError_t r = gpuMemcpy(dst, src, bytes, gpuMemcpyDefault);
	if (r != gpuSuccess)
		return aorta_fail(e, AORTA_EGPU, "", 0, -1, "cannot copy %zu bytes back: %s", bytes,
				  gpuGetErrorString(r));
	return AORTA_OK;
}

extern "C" float *wl_alloc(struct hwq_ctx *c, size_t nfloats, uint64_t *total, struct aorta_error *e)
{
	float *p = (float *)hwq_alloc(c, nfloats * sizeof(float), e);
	if (p)
		*total += nfloats * sizeof(float);
	return p;
}

extern "C" enum aorta_status wl_init_linear(struct hwq_ctx *c, float *W, float *Wh, float *b, float *bh,
					    int in, int out, uint64_t site, struct aorta_error *e)
{
	float k = 1.0f / sqrtf((float)in);
	enum aorta_status st = hwq_fill_random(c, W, Wh, (size_t)in * out, -k, k, site, e);
	if (st == AORTA_OK && b)
		st = hwq_fill_random(c, b, bh, (size_t)out, -k, k, site + 1, e);
	return st;
}

extern "C" enum aorta_status wl_init_block(struct hwq_ctx *c, const struct wl_block *w,
					   const struct wl_block *wh, int M, int F, uint64_t site,
					   struct aorta_error *e)
{
	enum aorta_status st;
	size_t m = (size_t)M;
#define H_(f) (wh ? wh->f : NULL)
	if ((st = hwq_fill_random(c, w->ln1_g, H_(ln1_g), m, 0.8f, 1.2f, site, e)) ||
	    (st = hwq_fill_random(c, w->ln1_b, H_(ln1_b), m, -0.1f, 0.1f, site + 1, e)) ||
	    (st = hwq_fill_random(c, w->ln2_g, H_(ln2_g), m, 0.8f, 1.2f, site + 2, e)) ||
	    (st = hwq_fill_random(c, w->ln2_b, H_(ln2_b), m, -0.1f, 0.1f, site + 3, e)) ||
	    (st = wl_init_linear(c, w->wqkv, H_(wqkv), w->bqkv, H_(bqkv), M, 3 * M, site + 4, e)) ||
	    (st = wl_init_linear(c, w->wo, H_(wo), w->bo, H_(bo), M, M, site + 6, e)))
		return st;
	if (F > 0 && ((st = wl_init_linear(c, w->w1, H_(w1), w->b1, H_(b1), M, F, site + 8, e)) ||
		      (st = wl_init_linear(c, w->w2, H_(w2), w->b2, H_(b2), F, M, site + 10, e))))
		return st;
#undef H_
	return AORTA_OK;
}

extern "C" enum aorta_status wl_stack_alloc(struct hwq_ctx *c, struct wl_stack_run *sr,
					    struct wl_block_scratch *s, int n, int M, int F,
					    uint64_t *tot, struct aorta_error *e)
{
	float *base = wl_alloc(c, wl_block_scratch_floats(n, M, F), tot, e);
	if (!base)
		return AORTA_EGPU;
	wl_block_scratch_carve(s, base, n, M, F);
	sr->s = s;
	for (int k = 0; k < 2; k++)
		if (!(sr->qkv[k] = wl_alloc(c, (size_t)n * 3 * M, tot, e)) ||
		    !(sr->buf[k] = wl_alloc(c, (size_t)n * M, tot, e)))
			return AORTA_EGPU;
	return AORTA_OK;
}

extern "C" enum aorta_status wl_layers_alloc(struct hwq_ctx *c, struct wl_block *w, int nl, int M, int F,
					     float **host, struct wl_block *hw, int host_layer,
					     uint64_t site, uint64_t *tot, struct aorta_error *e)
{
	size_t pf = wl_block_param_floats(M, F);
	enum aorta_status rc;
	if (host) {
		*host = (float *)malloc(pf * sizeof(float));
		if (!*host)
			return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "out of memory");
		wl_ref_block_carve(hw, *host, M, F);
	}
	for (int l = 0; l < nl; l++) {
		float *p = wl_alloc(c, pf, tot, e);
		if (!p)
			return AORTA_EGPU;
		wl_ref_block_carve(&w[l], p, M, F);
		if ((rc = wl_init_block(c, &w[l], host && l == host_layer ? hw : NULL, M, F,
					site + 16 * (uint64_t)l, e)))
			return rc;
	}
	return AORTA_OK;
}

/* Compares the GPU's block rows with wl_ref_block_row: x = the layer's
 * input, qkv and y its GPU outputs (device); rows[] sampled. */
extern "C" enum aorta_status wl_block_check(struct wl_err *eq, struct wl_err *ey, const struct wl_block *hw,
					    const float *x_dev, const float *qkv_dev, const float *y_dev,
					    int B, int T, int M, int H, int F, int flags, const int *rows,
					    int nrows, struct aorta_error *e)
{
	size_t n = (size_t)B * T;
	float *x = (float *)malloc(n * M * sizeof(float)), *q = (float *)malloc(n * 3 * M * sizeof(float));
	float *y = (float *)malloc(n * M * sizeof(float));
	double *yr = (double *)malloc(M * sizeof(double)), *qr = (double *)malloc(3 * M * sizeof(double));
	enum aorta_status rc = AORTA_OK;
	if (!x || !q || !y || !yr || !qr) {
		rc = aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "out of memory");
		goto out;
	}
	if ((rc = wl_fetch(x, x_dev, n * M * sizeof(float), e)) ||
	    (rc = wl_fetch(q, qkv_dev, n * 3 * M * sizeof(float), e)) ||
	    (rc = wl_fetch(y, y_dev, n * M * sizeof(float), e)))
		goto out;
	for (int i = 0; i < nrows; i++) {
		int r = rows[i];
		wl_ref_block_row(yr, qr, hw, x, q, r, T, M, H, F, flags);
		for (int j = 0; j < 3 * M; j++)
			wl_err_add(eq, q[(size_t)r * 3 * M + j], qr[j]);
		for (int j = 0; j < M; j++)
			wl_err_add(ey, y[(size_t)r * M + j], yr[j]);
	}
out:
	free(x);
	free(q);
	free(y);
	free(yr);
	free(qr);
	return rc;
}

extern "C" long long wl_stack_kernels(int ns, int n, int nl, int flags)
{
	int pre = flags & WL_BLOCK_PRE_LN, ff = flags & WL_BLOCK_FF;
	long long per = (pre ? 3 : 2) + 3 + (pre ? 0 : 1);
	if (ff)
		per += (pre ? 1 : 0) + 5 + (pre ? 0 : 1);
	long long k = 0;
	for (int i = 0; i < ns; i++) {
		int r0, r1;
		wl_split(n, ns, i, &r0, &r1);
		if (r1 > r0)
			k += per * nl;
	}
	return k;
}

/*
 * sdma.c - host side of aorta sdma: option values, the memory fit check,
 * the figures derived from the measured series, and the CPU references
 * (copy pattern, bf16 GEMM check).  See sdma.h for the design.
 *
 * Every figure comes from the per-iteration series by sdma_summarise; the
 * cold iterations are excluded from both the sums and the divisor
 * (upstream's prototype summed them and divided by the measured count).
 * The overlapped time is |GEMM ∩ copy| from the interval algebra
 * (overlap/ivset.h), the one place aorta computes overlap.
 */
#include "sdma/sdma.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "overlap/ivset.h"
#include "kernels/rng.h"

/* rng sites: GEMM operands and the copy pattern draw from disjoint streams */
#define SITE_A 0x5d3a01
#define SITE_B 0x5d3a02
#define SITE_COPY 0x5d3a03
#define SITE_SAMPLE 0x5d3a04

static const char *const dir_names[SDMA_DIR__COUNT] = { "d2h", "h2d", "d2d", "p2p" };
static const char *const dir_descs[SDMA_DIR__COUNT] = {
	"device -> pinned host", "pinned host -> device", "device -> same device",
	"device -> peer device",
};
static const char *const engine_names[SDMA_ENG__COUNT] = { "copy", "kernel" };
static const char *const series_names[SDMA_T__COUNT] = {
	"gemm_alone",      "copy_alone",     "sequential",      "sequential_gemm",
	"sequential_copy", "overlapped",     "overlapped_gemm_start", "overlapped_gemm_end",
	"overlapped_copy_start", "overlapped_copy_end",
};

const char *sdma_dir_name(enum sdma_dir d)
{
	return (unsigned)d < SDMA_DIR__COUNT ? dir_names[d] : "?";
}

const char *sdma_dir_desc(enum sdma_dir d)
{
	return (unsigned)d < SDMA_DIR__COUNT ? dir_descs[d] : "?";
}

const char *sdma_engine_name(enum sdma_engine g)
{
	return (unsigned)g < SDMA_ENG__COUNT ? engine_names[g] : "?";
}

const char *sdma_series_name(enum sdma_series s)
{
	return (unsigned)s < SDMA_T__COUNT ? series_names[s] : "?";
}

int sdma_dir_parse(const char *s)
{
	for (int i = 0; i < SDMA_DIR__COUNT; i++)
		if (s && strcmp(s, dir_names[i]) == 0)
			return i;
	return -1;
}

int sdma_engine_parse(const char *s)
{
	for (int i = 0; i < SDMA_ENG__COUNT; i++)
		if (s && strcmp(s, engine_names[i]) == 0)
			return i;
	return -1;
}

/* ------------------------------------------------------------------ */
/* configuration                                                       */
/* ------------------------------------------------------------------ */

void sdma_config_defaults(struct sdma_config *c)
{
	memset(c, 0, sizeof(*c));
	c->device = 0;
	c->peer = -1;
	c->matrix_size = 4096;
	c->copy_mb = 64;
	c->iterations = 20;
	c->cold_iters = 3;
	c->dir = SDMA_D2H;
	c->engine = SDMA_ENG_COPY;
	c->seed = 1;
	c->gemm_samples = 256;
}

uint64_t sdma_copy_bytes(const struct sdma_config *c)
{
	return (uint64_t)c->copy_mb * SDMA_MIB;
}

enum aorta_status sdma_config_check(const struct sdma_config *c, struct aorta_error *e)
{
	if (c->device < 0)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "--device %d: expected a device ordinal >= 0",
				  c->device);
	if (c->matrix_size < 1 || c->matrix_size > SDMA_MAX_MATRIX)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "--matrix-size %d: expected 1..%d",
				  c->matrix_size, SDMA_MAX_MATRIX);
	if (c->copy_mb < 1 || c->copy_mb > SDMA_MAX_COPY_MB)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "--copy-mb %d: expected 1..%d (MiB)",
				  c->copy_mb, SDMA_MAX_COPY_MB);
	if (c->iterations < 1 || c->iterations > SDMA_MAX_ITERS)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "--iterations %d: expected 1..%d",
				  c->iterations, SDMA_MAX_ITERS);
	if (c->cold_iters < 0 || c->cold_iters > SDMA_MAX_ITERS)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "--cold-iters %d: expected 0..%d",
				  c->cold_iters, SDMA_MAX_ITERS);
	if (c->gemm_samples < 1 || c->gemm_samples > SDMA_MAX_SAMPLES)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "--gemm-samples %d: expected 1..%d",
				  c->gemm_samples, SDMA_MAX_SAMPLES);
	if ((unsigned)c->dir >= SDMA_DIR__COUNT || (unsigned)c->engine >= SDMA_ENG__COUNT)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "unknown direction or engine");
	if (c->dir == SDMA_P2P && c->peer != c->device + 1)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "p2p copies to device %d + 1", c->device);
	if (c->dir != SDMA_P2P && c->peer != -1)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "a peer device is only for p2p");
	return AORTA_OK;
}

void sdma_need(const struct sdma_config *c, struct sdma_need *n)
{
	uint64_t s = (uint64_t)c->matrix_size;
	uint64_t mat = s * s * 2; /* one bf16 matrix */
	uint64_t b = sdma_copy_bytes(c);

	memset(n, 0, sizeof(*n));
	n->device_bytes = 3 * mat + SDMA_CUBLAS_WS_BYTES;
	/* host: the expected pattern, and A, B, C for the GEMM check */
	n->host_bytes = b + 3 * mat;
	switch (c->dir) {
	case SDMA_D2H:
		n->device_bytes += b;
		n->pinned_bytes += b;
		break;
	case SDMA_H2D:
		n->pinned_bytes += b;
		n->device_bytes += b;
		n->host_bytes += b; /* readback of the destination */
		break;
	case SDMA_D2D:
		n->device_bytes += 2 * b;
		n->host_bytes += b;
		break;
	case SDMA_P2P:
	default:
		n->device_bytes += b;
		n->peer_bytes += b;
		n->host_bytes += b;
		break;
	}
}

static double gib(uint64_t b)
{
	return (double)b / (double)(UINT64_C(1) << 30);
}

uint64_t sdma_host_avail_bytes(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

enum aorta_status sdma_check_machine(const struct sdma_config *c, const struct sdma_gpu_info *g,
				     struct aorta_error *e)
{
	struct sdma_need n;

	if (g->count <= 0)
		return aorta_fail(e, AORTA_EGPU, "", 0, -1,
				  "no GPU visible to this process (aorta sdma needs one; check "
				  "CUDA_VISIBLE_DEVICES and the driver)");
	if (c->device >= g->count)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1,
				  "--device %d: no such device (%d visible: 0..%d)", c->device, g->count,
				  g->count - 1);
	if (c->dir == SDMA_P2P) {
		if (g->count < 2)
			return aorta_fail(e, AORTA_EUSAGE, "", 0, -1,
					  "--direction p2p needs two GPUs (device %d and %d), but only one "
					  "is visible",
					  c->device, c->device + 1);
		if (c->peer >= g->count || !g->peer_valid)
			return aorta_fail(e, AORTA_EUSAGE, "", 0, -1,
					  "--direction p2p copies from device %d to device %d, which does "
					  "not exist (%d visible); pick --device 0..%d",
					  c->device, c->peer, g->count, g->count - 2);
		if (!g->peer_access)
			return aorta_fail(e, AORTA_EUSAGE, "", 0, -1,
					  "--direction p2p: device %d cannot access device %d's memory "
					  "(no peer access between them)",
					  c->device, c->peer);
	}
	sdma_need(c, &n);
	if (n.device_bytes + SDMA_DEVICE_MARGIN_BYTES > g->dev.free_bytes)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1,
				  "--matrix-size %d and --copy-mb %d need %.2f GiB on device %d (plus "
				  "%.2f GiB headroom), which has %.2f GiB free of %.2f GiB",
				  c->matrix_size, c->copy_mb, gib(n.device_bytes),
				  c->device, gib(SDMA_DEVICE_MARGIN_BYTES), gib(g->dev.free_bytes),
				  gib(g->dev.total_bytes));
	if (c->dir == SDMA_P2P && n.peer_bytes + SDMA_DEVICE_MARGIN_BYTES > g->peer.free_bytes)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1,
				  "--copy-mb %d needs %.2f GiB on device %d (plus %.2f GiB headroom), "
				  "which has %.2f GiB free",
				  c->copy_mb, gib(n.peer_bytes), c->peer, gib(SDMA_DEVICE_MARGIN_BYTES),
				  gib(g->peer.free_bytes));
	if (g->host_avail_bytes &&
	    n.host_bytes + n.pinned_bytes + SDMA_HOST_MARGIN_BYTES > g->host_avail_bytes)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1,
				  "--matrix-size %d and --copy-mb %d need %.2f GiB of host memory (%.2f "
				  "GiB of it pinned), but %.2f GiB is available",
				  c->matrix_size, c->copy_mb, gib(n.host_bytes + n.pinned_bytes),
				  gib(n.pinned_bytes), gib(g->host_avail_bytes));
	return AORTA_OK;
}

/* ------------------------------------------------------------------ */
/* results and figures                                                 */
/* ------------------------------------------------------------------ */

void sdma_result_init(struct sdma_result *r, const struct sdma_config *c)
{
	memset(r, 0, sizeof(*r));
	r->n = c->cold_iters + c->iterations;
	for (int i = 0; i < SDMA_T__COUNT; i++)
		r->t[i] = xcalloc((size_t)r->n, sizeof(int64_t));
	r->copy_mismatch_offset = -1;
	r->copy_mismatch_phase = -1;
	r->gemm_worst_i = r->gemm_worst_j = -1;
}

void sdma_result_release(struct sdma_result *r)
{
	for (int i = 0; i < SDMA_T__COUNT; i++) {
		free(r->t[i]);
		r->t[i] = NULL;
	}
}

double sdma_mean_ns(const int64_t *v, int n, int cold)
{
	double sum = 0;

	if (cold < 0)
		cold = 0;
	if (n <= cold)
		return 0;
	for (int i = cold; i < n; i++)
		sum += (double)v[i];
	return sum / (double)(n - cold);
}

double sdma_savings_pct(double seq_ms, double ovl_ms)
{
	if (!(seq_ms > 0))
		return 0;
	double p = (seq_ms - ovl_ms) / seq_ms * 100.0;
	return p > 0 ? p : 0;
}

/* mean of v[i] - u[i] over the measured iterations, in ns */
static double mean_diff_ns(const int64_t *v, const int64_t *u, int n, int cold)
{
	double sum = 0;

	if (n <= cold)
		return 0;
	for (int i = cold; i < n; i++)
		sum += (double)(v[i] - u[i]);
	return sum / (double)(n - cold);
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

void sdma_summarise(const struct sdma_config *c, const struct sdma_result *r, struct sdma_summary *s)
{
	const int n = r->n, k = c->cold_iters;
	const double S = (double)c->matrix_size;

	memset(s, 0, sizeof(*s));
	s->seq_ms = sdma_mean_ns(r->t[SDMA_T_SEQ], n, k) * 1e-6;
	s->ovl_ms = sdma_mean_ns(r->t[SDMA_T_OVL], n, k) * 1e-6;
	s->savings_pct = sdma_savings_pct(s->seq_ms, s->ovl_ms);
	s->gemm_alone_ms = sdma_mean_ns(r->t[SDMA_T_GEMM_ALONE], n, k) * 1e-6;
	s->gemm_seq_ms = sdma_mean_ns(r->t[SDMA_T_SEQ_GEMM], n, k) * 1e-6;
	s->gemm_together_ms =
		mean_diff_ns(r->t[SDMA_T_OVL_GEMM_END], r->t[SDMA_T_OVL_GEMM_START], n, k) * 1e-6;
	s->copy_alone_ms = sdma_mean_ns(r->t[SDMA_T_COPY_ALONE], n, k) * 1e-6;
	s->copy_seq_ms = sdma_mean_ns(r->t[SDMA_T_SEQ_COPY], n, k) * 1e-6;
	s->copy_together_ms =
		mean_diff_ns(r->t[SDMA_T_OVL_COPY_END], r->t[SDMA_T_OVL_COPY_START], n, k) * 1e-6;
	s->gemm_flop = 2.0 * S * S * S;
	s->copy_bytes = sdma_copy_bytes(c);
	/* FLOP / (ms * 1e-3) / 1e12 = FLOP / ms * 1e-9 */
	s->gemm_alone_tflops = ratio(s->gemm_flop, s->gemm_alone_ms) * 1e-9;
	s->gemm_together_tflops = ratio(s->gemm_flop, s->gemm_together_ms) * 1e-9;
	/* bytes / (ms * 1e-3) / 1e9 = bytes / ms * 1e-6 */
	s->copy_alone_gbps = ratio((double)s->copy_bytes, s->copy_alone_ms) * 1e-6;
	s->copy_together_gbps = ratio((double)s->copy_bytes, s->copy_together_ms) * 1e-6;
	s->gemm_slowdown = ratio(s->gemm_together_ms, s->gemm_alone_ms);
	s->copy_slowdown = ratio(s->copy_together_ms, s->copy_alone_ms);
	s->ideal_ms = s->gemm_alone_ms > s->copy_alone_ms ? s->gemm_alone_ms : s->copy_alone_ms;
	s->seq_gap_ms = s->seq_ms - s->gemm_seq_ms - s->copy_seq_ms;

	/* |GEMM ∩ copy| over the measured overlapped iterations: iteration i
	 * is placed at its own origin on one axis (origins further apart than
	 * any iteration), so the sets never mix iterations. */
	struct ivset g, cp, both;
	int64_t span = 1;
	for (int i = k; i < n; i++)
		if (r->t[SDMA_T_OVL][i] + 1 > span)
			span = r->t[SDMA_T_OVL][i] + 1;
	for (int i = k; i < n; i++) {
		if (r->t[SDMA_T_OVL_GEMM_END][i] + 1 > span)
			span = r->t[SDMA_T_OVL_GEMM_END][i] + 1;
		if (r->t[SDMA_T_OVL_COPY_END][i] + 1 > span)
			span = r->t[SDMA_T_OVL_COPY_END][i] + 1;
	}
	ivset_init(&g);
	ivset_init(&cp);
	ivset_init(&both);
	for (int i = k; i < n; i++) {
		int64_t o = (int64_t)(i - k) * span;
		ivset_push(&g, o + r->t[SDMA_T_OVL_GEMM_START][i], o + r->t[SDMA_T_OVL_GEMM_END][i]);
	}
	ivset_seal(&g);
	for (int i = k; i < n; i++) {
		int64_t o = (int64_t)(i - k) * span;
		ivset_push(&cp, o + r->t[SDMA_T_OVL_COPY_START][i], o + r->t[SDMA_T_OVL_COPY_END][i]);
	}
	ivset_seal(&cp);
	ivset_inter(&both, &g, &cp);
	if (n > k)
		s->overlap_ms = (double)ivset_len(&both) / (double)(n - k) * 1e-6;
	s->copy_hidden_pct = ratio(s->overlap_ms, s->copy_together_ms) * 100.0;
	ivset_release(&g);
	ivset_release(&cp);
	ivset_release(&both);
}

int sdma_verified(const struct sdma_result *r)
{
	return r->copy_checked > 0 && r->copy_ok && r->gemm_checked && r->gemm_ok;
}

/* ------------------------------------------------------------------ */
/* CPU references                                                      */
/* ------------------------------------------------------------------ */

uint16_t sdma_bf16_from_float(float x)
{
	uint32_t u;

	memcpy(&u, &x, 4);
	if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu))
		return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

float sdma_bf16_to_float(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float x;

	memcpy(&x, &u, 4);
	return x;
}

void sdma_fill_bf16(uint16_t *v, uint64_t n, uint64_t seed, uint64_t site)
{
	for (uint64_t i = 0; i < n; i++)
		v[i] = sdma_bf16_from_float(2.0f * rng_uniform(seed, site, i) - 1.0f);
}

void sdma_fill_pattern(unsigned char *p, uint64_t n, uint64_t seed)
{
	uint64_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w = rng_u64(seed, SITE_COPY, i / 8);
		memcpy(p + i, &w, 8);
	}
	if (i < n) {
		uint64_t w = rng_u64(seed, SITE_COPY, i / 8);
		memcpy(p + i, &w, n - i);
	}
}

int64_t sdma_first_mismatch(const unsigned char *a, const unsigned char *b, uint64_t n)
{
	const uint64_t chunk = 1 << 16;

	for (uint64_t off = 0; off < n; off += chunk) {
		uint64_t m = n - off < chunk ? n - off : chunk;
		if (memcmp(a + off, b + off, m) == 0)
			continue;
		for (uint64_t i = 0; i < m; i++)
			if (a[off + i] != b[off + i])
				return (int64_t)(off + i);
	}
	return -1;
}

int sdma_gemm_check(const uint16_t *A, const uint16_t *B, const uint16_t *C, int S, int samples,
		    uint64_t seed, struct sdma_gemm_check *out)
{
	const uint64_t s = (uint64_t)S;

	memset(out, 0, sizeof(*out));
	out->worst_i = out->worst_j = -1;
	for (int t = 0; t < samples; t++) {
		uint64_t i, j;
		if (t == 0) {
			i = 0, j = 0;
		} else if (t == 1) {
			i = s - 1, j = s - 1;
		} else if (t == 2) {
			i = s - 1, j = 0;
		} else if (t == 3) {
			i = 0, j = s - 1;
		} else {
			i = rng_u64(seed, SITE_SAMPLE, 2 * (uint64_t)t) % s;
			j = rng_u64(seed, SITE_SAMPLE, 2 * (uint64_t)t + 1) % s;
		}
		double want = 0, ss = 0;
		for (uint64_t k = 0; k < s; k++) {
			double p = (double)sdma_bf16_to_float(A[i + k * s]) *
				   (double)sdma_bf16_to_float(B[k + j * s]);
			want += p;
			ss += p * p;
		}
		if (want < 0)
			want = 0;
		double got = (double)sdma_bf16_to_float(C[i + j * s]);
		double err = fabs(got - want);
		double tol = 1e-2 * (fabs(want) + sqrt(ss)) + 1e-6;
		double q = err / tol;
		out->samples++;
		if (!(q <= 1.0))
			out->failed++;
		if (err > out->max_abs_err || isnan(err))
			out->max_abs_err = err;
		if (q > out->max_err_ratio || isnan(q) || out->worst_i < 0) {
			out->max_err_ratio = q;
			out->worst_i = (long long)i;
			out->worst_j = (long long)j;
			out->worst_got = got;
			out->worst_want = want;
		}
		/* the corners repeat when S == 1; harmless */
	}
	return out->failed == 0;
}

void sdma_fill_gemm_inputs(uint16_t *A, uint16_t *B, int S, uint64_t seed)
{
	uint64_t n = (uint64_t)S * (uint64_t)S;

	sdma_fill_bf16(A, n, seed, SITE_A);
	sdma_fill_bf16(B, n, seed, SITE_B);
}

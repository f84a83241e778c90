/*
 * output.c - what aorta sdma prints and writes: upstream's lines first
 * (same labels and precision as its prototype, so scripts that read them
 * keep working), then the alone-versus-together table and the
 * verification; and the aorta.sdma/1 JSON document (docs/sdma.md).
 *
 * Both take the figures from struct sdma_summary; nothing is computed here
 * except unit conversions.
 */
#include "sdma/sdma.h"

#include "base/output.h"

static const char *cc_str(const struct sdma_dev_desc *d, char *buf, size_t cap)
{
	snprintf(buf, cap, "%d.%d", d->cc_major, d->cc_minor);
	return buf;
}

void sdma_print_text(FILE *f, const struct sdma_config *c, const struct sdma_gpu_info *g,
		     const struct sdma_result *r, const struct sdma_summary *s)
{
	fprintf(f, "SDMA overlap benchmark\n");
	fprintf(f, "Device: %d (%s)\n", c->device, g->dev.name);
	fprintf(f, "Matrix size: %d x %d\n", c->matrix_size, c->matrix_size);
	fprintf(f, "Copy volume: %d MB\n", c->copy_mb);
	fprintf(f, "Iterations: %d (warm-up %d)\n", c->iterations, c->cold_iters);
	fprintf(f, "Sequential avg time (ms): %.3f\n", s->seq_ms);
	fprintf(f, "Overlapped avg time (ms): %.3f\n", s->ovl_ms);
	fprintf(f, "Estimated savings (%%): %.2f\n", s->savings_pct);
	fprintf(f, "\n");
	if (c->dir == SDMA_P2P)
		fprintf(f, "Direction: p2p (device %d -> device %d, %s)\n", c->device, c->peer, g->peer.name);
	else
		fprintf(f, "Direction: %s (%s)\n", sdma_dir_name(c->dir), sdma_dir_desc(c->dir));
	if (c->engine == SDMA_ENG_KERNEL)
		fprintf(f, "Engine: kernel (SM copy kernel, %d blocks x %d threads, on the copy stream)\n",
			r->kernel_grid, r->kernel_block);
	else
		fprintf(f, "Engine: copy (cudaMemcpy%sAsync, the copy engines)\n",
			c->dir == SDMA_P2P ? "Peer" : "");
	fprintf(f, "Copy bytes: %llu per iteration (MB = MiB = 1048576 bytes)\n",
		(unsigned long long)s->copy_bytes);
	fprintf(f, "Stream priorities: compute %d, copy %d (lower is higher)\n", r->compute_priority,
		r->copy_priority);
	fprintf(f, "%-24s %12s %12s %12s %10s\n", "", "alone", "sequential", "overlapped", "slowdown");
	fprintf(f, "%-24s %12.3f %12.3f %12.3f %9.3fx\n", "GEMM+relu time (ms)", s->gemm_alone_ms,
		s->gemm_seq_ms, s->gemm_together_ms, s->gemm_slowdown);
	fprintf(f, "%-24s %12.1f %12s %12.1f\n", "GEMM (TFLOP/s)", s->gemm_alone_tflops, "",
		s->gemm_together_tflops);
	fprintf(f, "%-24s %12.3f %12.3f %12.3f %9.3fx\n", "Copy time (ms)", s->copy_alone_ms,
		s->copy_seq_ms, s->copy_together_ms, s->copy_slowdown);
	fprintf(f, "%-24s %12.2f %12s %12.2f\n", "Copy (GB/s)", s->copy_alone_gbps, "",
		s->copy_together_gbps);
	fprintf(f, "Ideal overlapped time (ms): %.3f (max of GEMM alone and copy alone)\n", s->ideal_ms);
	fprintf(f, "Copy hidden under GEMM: %.3f ms of %.3f ms (%.1f%%)\n", s->overlap_ms,
		s->copy_together_ms, s->copy_hidden_pct);
	fprintf(f, "Sequential host synchronisation gap (ms): %.3f\n", s->seq_gap_ms);
	if (!r->copy_checked)
		fprintf(f, "Copy check: not run\n");
	else if (r->copy_ok)
		fprintf(f, "Copy check: passed (%llu bytes identical in each of %d phases)\n",
			(unsigned long long)r->copy_bytes_compared, r->copy_checked);
	else
		fprintf(f, "Copy check: FAILED in the %s phase: byte %lld is 0x%02x, expected 0x%02x\n",
			sdma_series_name((enum sdma_series)r->copy_mismatch_phase),
			(long long)r->copy_mismatch_offset, r->copy_got, r->copy_want);
	if (!r->gemm_checked)
		fprintf(f, "GEMM check: not run\n");
	else
		fprintf(f,
			"GEMM check: %s (%d of %d sampled entries outside tolerance; max |error| %.4g, "
			"worst %.3f of tolerance at (%lld, %lld): %.6g, expected %.6g)\n",
			r->gemm_ok ? "passed" : "FAILED", r->gemm_failed, r->gemm_samples,
			r->gemm_max_abs_err, r->gemm_max_err_ratio, r->gemm_worst_i, r->gemm_worst_j,
			r->gemm_worst_got, r->gemm_worst_want);
}

static void dev_json(struct jw *w, const char *key, const struct sdma_dev_desc *d)
{
	char cc[16];

	jw_obj(w, key);
	jw_int(w, "index", d->index);
	jw_str(w, "name", d->name);
	jw_str(w, "pci_bus_id", d->pci_bus_id);
	jw_str(w, "compute_capability", cc_str(d, cc, sizeof(cc)));
	jw_int(w, "sm_count", d->sm_count);
	jw_uint(w, "total_mem_bytes", d->total_bytes);
	jw_uint(w, "free_mem_bytes", d->free_bytes);
	jw_obj_end(w);
}

void sdma_write_json(FILE *f, const struct sdma_config *c, const struct sdma_gpu_info *g,
		     const struct sdma_result *r, const struct sdma_summary *s)
{
	struct jw w;

	jw_init(&w, f, 1);
	jw_obj(&w, NULL);
	jw_str(&w, "schema", SDMA_SCHEMA);

	jw_obj(&w, "config");
	jw_int(&w, "device", c->device);
	if (c->dir == SDMA_P2P)
		jw_int(&w, "peer_device", c->peer);
	else
		jw_null(&w, "peer_device");
	jw_int(&w, "matrix_size", c->matrix_size);
	jw_int(&w, "copy_mb", c->copy_mb);
	jw_uint(&w, "copy_bytes", s->copy_bytes);
	jw_int(&w, "iterations", c->iterations);
	jw_int(&w, "cold_iters", c->cold_iters);
	jw_str(&w, "direction", sdma_dir_name(c->dir));
	jw_str(&w, "engine", sdma_engine_name(c->engine));
	jw_uint(&w, "seed", c->seed);
	jw_int(&w, "gemm_samples", c->gemm_samples);
	jw_obj_end(&w);

	jw_obj(&w, "device");
	jw_int(&w, "visible", g->count);
	jw_int(&w, "runtime_version", g->runtime_version);
	jw_int(&w, "driver_version", g->driver_version);
	dev_json(&w, "gpu", &g->dev);
	if (c->dir == SDMA_P2P && g->peer_valid)
		dev_json(&w, "peer", &g->peer);
	else
		jw_null(&w, "peer");
	jw_obj_end(&w);

	jw_obj(&w, "streams");
	jw_int(&w, "compute_priority", r->compute_priority);
	jw_int(&w, "copy_priority", r->copy_priority);
	jw_obj_end(&w);
	if (c->engine == SDMA_ENG_KERNEL) {
		jw_obj(&w, "copy_kernel");
		jw_int(&w, "grid", r->kernel_grid);
		jw_int(&w, "block", r->kernel_block);
		jw_obj_end(&w);
	} else {
		jw_null(&w, "copy_kernel");
	}

	jw_num(&w, "sequential_avg_ms", s->seq_ms, 6);
	jw_num(&w, "overlapped_avg_ms", s->ovl_ms, 6);
	jw_num(&w, "estimated_savings_pct", s->savings_pct, 4);
	jw_num(&w, "ideal_overlapped_ms", s->ideal_ms, 6);
	jw_num(&w, "overlap_ms", s->overlap_ms, 6);
	jw_num(&w, "copy_hidden_pct", s->copy_hidden_pct, 4);
	jw_num(&w, "sequential_gap_ms", s->seq_gap_ms, 6);

	jw_obj(&w, "gemm");
	jw_num(&w, "flop", s->gemm_flop, 0);
	jw_num(&w, "alone_ms", s->gemm_alone_ms, 6);
	jw_num(&w, "sequential_ms", s->gemm_seq_ms, 6);
	jw_num(&w, "together_ms", s->gemm_together_ms, 6);
	jw_num(&w, "alone_tflops", s->gemm_alone_tflops, 3);
	jw_num(&w, "together_tflops", s->gemm_together_tflops, 3);
	jw_num(&w, "slowdown", s->gemm_slowdown, 4);
	jw_obj_end(&w);

	jw_obj(&w, "copy");
	jw_uint(&w, "bytes", s->copy_bytes);
	jw_num(&w, "alone_ms", s->copy_alone_ms, 6);
	jw_num(&w, "sequential_ms", s->copy_seq_ms, 6);
	jw_num(&w, "together_ms", s->copy_together_ms, 6);
	jw_num(&w, "alone_gbps", s->copy_alone_gbps, 3);
	jw_num(&w, "together_gbps", s->copy_together_gbps, 3);
	jw_num(&w, "slowdown", s->copy_slowdown, 4);
	jw_obj_end(&w);

	/* every iteration, cold ones first (the first cold_iters entries) */
	jw_obj(&w, "iterations_ms");
	for (int k = 0; k < SDMA_T__COUNT; k++) {
		jw_arr(&w, sdma_series_name((enum sdma_series)k));
		for (int i = 0; i < r->n; i++)
			jw_ms(&w, NULL, r->t[k][i]);
		jw_arr_end(&w);
	}
	jw_obj_end(&w);

	jw_obj(&w, "verification");
	jw_bool(&w, "passed", sdma_verified(r));
	jw_obj(&w, "copy");
	jw_bool(&w, "passed", r->copy_checked > 0 && r->copy_ok);
	jw_int(&w, "phases_checked", r->copy_checked);
	jw_uint(&w, "bytes_compared", r->copy_bytes_compared);
	if (r->copy_mismatch_offset >= 0) {
		jw_int(&w, "first_mismatch_offset", r->copy_mismatch_offset);
		jw_str(&w, "mismatch_phase", sdma_series_name((enum sdma_series)r->copy_mismatch_phase));
		jw_int(&w, "got", r->copy_got);
		jw_int(&w, "expected", r->copy_want);
	} else {
		jw_null(&w, "first_mismatch_offset");
	}
	jw_obj_end(&w);
	jw_obj(&w, "gemm");
	jw_bool(&w, "passed", r->gemm_checked && r->gemm_ok);
	jw_int(&w, "samples", r->gemm_samples);
	jw_int(&w, "failed", r->gemm_failed);
	jw_num(&w, "max_abs_err", r->gemm_max_abs_err, 6);
	jw_num(&w, "max_err_over_tolerance", r->gemm_max_err_ratio, 6);
	jw_obj_end(&w);
	jw_obj_end(&w);

	jw_obj_end(&w);
}

/*
 * hwq_host.h - host side of aorta hwq below the command: derived figures
 * (metrics.c), result and sweep JSON and text (output.c), compare
 * (compare.c).  No CUDA; everything here is unit-tested on the CPU.
 *
 * Ownership: a struct hwq_result owns its raw figures (hwq_raw) and its
 * per-stream arrays; hwq_result_release frees them.  A struct hwq_sweep
 * owns its results.
 */
#ifndef AORTA_HWQ_HOST_H
#define AORTA_HWQ_HOST_H

#include <stdint.h>
#include <stdio.h>

#include "hwq/harness.h"
#include "hwq/workloads.h"

struct hwq_stats {
	double mean, p50, p95, p99, min, max, std; /* ms */
	int n;
};

struct hwq_switch {
	double inter_ms, intra_ms, overhead_ms; /* mean gaps; max(0, inter - intra) */
	long long inter_n, intra_n;
};

struct hwq_result {
	const struct hwq_workload_info *w;
	struct hwq_run_config cfg;
	struct hwq_raw raw;
	struct hwq_stats lat;
	double throughput;        /* unit per s over the sum of iteration times (upstream's formula) */
	double throughput_wall;   /* unit per s over the measured loop's wall time */
	double total_time_ms;     /* sum of iteration times */
	double kernels_per_s;     /* kernels_per_iter * iters / total_wall */
	double *per_stream_ms;    /* [streams] busy time per iteration (union of kernels, copies and
				   * fills), from the trace */
	long long *kernels_per_stream; /* [streams] kernels, copies and fills of the timing pass per stream */
	long long trace_kernels;  /* kernels of the timing pass on the workload's streams */
	int trace_by_markers;     /* 1: trace streams mapped by the timing pass's marker kernels */
	int trace_by_appearance;  /* 1: no kernel on a workload stream (graph replay): the trace's own
				   * streams were numbered in order of appearance */
	struct hwq_switch sw;
	char timestamp[64];
};

/* ---- metrics.c ---- */
/* Percentile by linear interpolation at index (n-1)p/100 of sorted v. */
double hwq_percentile(const double *sorted, int n, double p);
/* mean, percentiles, min, max, sample std (n-1) of v[0..n) (v unchanged). */
void hwq_stats_of(const double *v, int n, struct hwq_stats *s);
/* Switch latency from kernel spans (any order): sorted by end, each
 * consecutive pair with gap = next.start - prev.end > 0 is intra (same
 * stream) or inter; overhead = max(0, mean inter - mean intra). */
void hwq_switch_of(const int64_t *start_ns, const int64_t *end_ns, const int32_t *stream, size_t n,
		   struct hwq_switch *sw);
/* Reads the timing-pass Kineto trace at path and fills r's switch latency,
 * per-stream busy time (union of the kernels of each stream via ivset,
 * divided by timing_iters) and kernel counts; kernels on streams that are
 * not the workload's (raw.stream_ids) are left out. */
enum aorta_status hwq_trace_metrics(struct hwq_result *r, const char *path, struct aorta_error *e);
/* Fills lat, throughput, total_time_ms, kernels_per_s from r->raw. */
void hwq_result_derive(struct hwq_result *r);
void hwq_result_release(struct hwq_result *r);

struct hwq_sweep_analysis {
	int n;
	int *streams;
	double *tp, *eff;
	int peak;        /* index of the largest throughput, -1 if n == 0 */
	int inflection;  /* first i with eff[i] < 0.8 eff[i-1], -1 if none */
};
/* eff_i = tp_i / (tp_0 / sc_0 * sc_i). */
void hwq_sweep_analyze(const int *streams, const double *tp, int n, struct hwq_sweep_analysis *a);
void hwq_sweep_analysis_release(struct hwq_sweep_analysis *a);

/* ---- output.c ---- */
const char *hwq_sync_name(enum hwq_sync s);
int hwq_sync_parse(const char *s, enum hwq_sync *out);
void hwq_write_result_json(FILE *f, const struct hwq_result *r, int pretty);
enum aorta_status hwq_save_result(const struct hwq_result *r, const char *path, struct aorta_error *e);
enum aorta_status hwq_save_sweep(const struct hwq_result *rs, int n, const char *path, struct aorta_error *e);
void hwq_print_result(FILE *f, const struct hwq_result *r);
void hwq_print_sweep(FILE *f, const struct hwq_result *rs, int n);
void hwq_now_iso(char *buf, size_t cap);

/* ---- compare.c ---- */
struct hwq_cmp_opts {
	double threshold;  /* relative, 0.05 = 5% */
};
/* Compares two result or sweep files; prints the table on f; *regressions
 * receives the count.  AORTA_EINPUT naming the file on malformed input. */
enum aorta_status hwq_compare_files(const char *base, const char *test, const struct hwq_cmp_opts *o, FILE *f,
				    int *regressions, struct aorta_error *e);

#endif

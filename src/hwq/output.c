/*
 * output.c - aorta hwq's result and sweep JSON and its text sections.
 *
 * Result JSON: upstream's layout (throughput, throughput_unit,
 * latency_ms{mean,p50,p95,p99,min,max,std}, total_time_ms, stream_count,
 * per_stream_times_ms[], iteration_times_ms[], switch_latency{...},
 * memory{...}, metadata{config, device_info, rocm_info, workload_config},
 * workload_name, timestamp) plus "schema": "aorta.hwq.result/1" and a few
 * added fields (kernels, wall-time throughput, check).  Sweep JSON:
 * {schema "aorta.hwq.sweep/1", timestamp, workload, results[],
 * analysis{stream_counts, throughputs, efficiencies, inflection_point,
 * peak_stream_count}}.  Files are written atomically (out_open/out_commit).
 *
 * Text: WORKLOAD, TEST CONFIGURATION, RESULTS, QUEUE SWITCH ANALYSIS,
 * TIMING, INTERPRETATION, with upstream's flags (P99/P50 > 2: WARNING,
 * > 1.5: Note; switch overhead > 0.1 ms significant, > 0.01 ms moderate).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/output.h"
#include "hwq/hwq_host.h"

static const char *sync_names[] = { "per_iteration", "end_only", "none" };

const char *hwq_sync_name(enum hwq_sync s)
{
	return (unsigned)s < 3 ? sync_names[s] : "?";
}

int hwq_sync_parse(const char *s, enum hwq_sync *out)
{
	for (int i = 0; i < 3; i++)
		if (s && strcmp(s, sync_names[i]) == 0) {
			*out = (enum hwq_sync)i;
			return 0;
		}
	return -1;
}

void hwq_now_iso(char *buf, size_t cap)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	localtime_r(&ts.tv_sec, &tm);
	char b[40];
	strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, cap, "%s.%06ld", b, ts.tv_nsec / 1000);
}

#define GB(x) ((double)(x) / (1024.0 * 1024.0 * 1024.0))

/* The result's metadata: the run's configuration, the device, the CUDA
 * versions and the workload's configuration (upstream's keys). */
static void write_metadata(struct jw *w, const struct hwq_result *r)
{
	const struct hwq_raw *raw = &r->raw;
	const struct hwq_workload_info *wl = r->w;
	jw_obj(w, "metadata");
	jw_obj(w, "config");
	jw_int(w, "stream_count", r->cfg.streams);
	jw_int(w, "warmup_iterations", r->cfg.warmup);
	jw_int(w, "measurement_iterations", r->cfg.iters);
	jw_str(w, "sync_mode", hwq_sync_name(r->cfg.sync));
	char dev[32];
	snprintf(dev, sizeof(dev), "cuda:%d", r->cfg.device);
	jw_str(w, "device", dev);
	jw_bool(w, "collect_kernel_timings", r->cfg.timing_iters > 0);
	jw_bool(w, "warmup_gpu_before_run", 1);
	jw_bool(w, "reset_memory_stats_before_run", 1);
	jw_bool(w, "graph", r->cfg.graph);
	jw_int(w, "timing_iterations", r->cfg.timing_iters);
	jw_bool(w, "high_priority_stream0", r->cfg.high_priority);
	jw_uint(w, "seed", (unsigned long long)r->cfg.seed);
	jw_obj_end(w);
	jw_obj(w, "device_info");
	jw_str(w, "name", raw->dev.name);
	char cc[16];
	snprintf(cc, sizeof(cc), "%d.%d", raw->dev.cc_major, raw->dev.cc_minor);
	jw_str(w, "compute_capability", cc);
	jw_num(w, "total_memory_gb", GB(raw->dev.total_mem_bytes), 3);
	jw_int(w, "multi_processor_count", raw->dev.sm_count);
	jw_int(w, "max_threads_per_mp", raw->dev.max_threads_per_sm);
	jw_int(w, "warp_size", raw->dev.warp_size);
	jw_bool(w, "is_rocm", 0);
	jw_int(w, "device_index", raw->dev.index);
	jw_null(w, "gcn_arch");
	jw_int(w, "compute_units", raw->dev.sm_count);
	jw_obj_end(w);
	jw_obj(w, "rocm_info");
	jw_bool(w, "is_rocm", 0);
	jw_null(w, "hip_version");
	char v[32];
	snprintf(v, sizeof(v), "%d.%d", raw->dev.runtime_version / 1000, raw->dev.runtime_version % 1000 / 10);
	jw_str(w, "cuda_version", v);
	snprintf(v, sizeof(v), "%d.%d", raw->dev.driver_version / 1000, raw->dev.driver_version % 1000 / 10);
	jw_str(w, "driver_cuda_version", v);
	jw_null(w, "torch_version");
	jw_obj_end(w);
	jw_obj(w, "workload_config");
	jw_str(w, "name", wl->name);
	jw_str(w, "category", wl->category);
	jw_str(w, "priority", wl->priority);
	jw_str(w, "switch_sensitivity", wl->sensitivity);
	jw_int(w, "min_streams", wl->min_streams);
	jw_int(w, "max_streams", wl->max_streams);
	jw_int(w, "recommended_streams", wl->rec_streams);
	if (r->cfg.mode)
		jw_str(w, "mode", r->cfg.mode);
	jw_int(w, "world_size", raw->world);
	jw_int(w, "kernels_per_iteration", raw->kernels_per_iter);
	if (r->cfg.graph)
		jw_int(w, "graph_nodes", raw->graph_nodes);
	jw_obj_end(w);
	jw_obj_end(w); /* metadata */
}

static void write_result_body(struct jw *w, const struct hwq_result *r)
{
	const struct hwq_raw *raw = &r->raw;
	const struct hwq_workload_info *wl = r->w;
	jw_str(w, "schema", "aorta.hwq.result/1");
	jw_num(w, "throughput", r->throughput, 6);
	jw_str(w, "throughput_unit", wl->unit);
	jw_obj(w, "latency_ms");
	jw_num(w, "mean", r->lat.mean, 6);
	jw_num(w, "p50", r->lat.p50, 6);
	jw_num(w, "p95", r->lat.p95, 6);
	jw_num(w, "p99", r->lat.p99, 6);
	jw_num(w, "min", r->lat.min, 6);
	jw_num(w, "max", r->lat.max, 6);
	jw_num(w, "std", r->lat.std, 6);
	jw_obj_end(w);
	jw_num(w, "total_time_ms", r->total_time_ms, 6);
	jw_int(w, "stream_count", raw->streams);
	jw_arr(w, "per_stream_times_ms");
	for (int i = 0; i < raw->streams; i++)
		jw_num(w, NULL, r->per_stream_ms ? r->per_stream_ms[i] : 0.0, 6);
	jw_arr_end(w);
	jw_arr(w, "iteration_times_ms");
	for (int i = 0; i < raw->iters; i++)
		jw_num(w, NULL, raw->iter_ms[i], 6);
	jw_arr_end(w);
	jw_obj(w, "switch_latency");
	jw_num(w, "inter_stream_gap_ms", r->sw.inter_ms, 6);
	jw_num(w, "intra_stream_gap_ms", r->sw.intra_ms, 6);
	jw_num(w, "estimated_switch_overhead_ms", r->sw.overhead_ms, 6);
	jw_int(w, "inter_stream_samples", r->sw.inter_n);
	jw_int(w, "intra_stream_samples", r->sw.intra_n);
	jw_obj_end(w);
	jw_obj(w, "memory");
	jw_num(w, "peak_allocated_gb", GB(raw->peak_alloc_bytes), 6);
	jw_num(w, "peak_reserved_gb", GB(raw->peak_reserved_bytes), 6);
	jw_num(w, "final_allocated_gb", GB(raw->final_alloc_bytes), 6);
	jw_num(w, "final_reserved_gb", GB(raw->final_reserved_bytes), 6);
	jw_obj_end(w);
	write_metadata(w, r);
	jw_str(w, "workload_name", wl->name);
	jw_str(w, "timestamp", r->timestamp);
	/* added by aorta (schema aorta.hwq.result/1) */
	jw_str(w, "iteration_time_source", r->cfg.sync == HWQ_SYNC_PER_ITERATION
			? "gpu events around each iteration (fork/join over all streams)"
			: "host enqueue time of each iteration (no per-iteration sync)");
	jw_num(w, "throughput_wall", r->throughput_wall, 6);
	jw_num(w, "wall_time_ms", raw->total_wall_ms, 6);
	jw_int(w, "kernels_per_iteration", raw->kernels_per_iter);
	jw_num(w, "kernels_per_second", r->kernels_per_s, 1);
	jw_arr(w, "kernels_per_stream_timing_pass");
	for (int i = 0; i < raw->streams; i++)
		jw_int(w, NULL, r->kernels_per_stream ? r->kernels_per_stream[i] : 0);
	jw_arr_end(w);
	jw_obj(w, "check");
	jw_bool(w, "ok", raw->check_ok);
	jw_str(w, "detail", raw->check_msg);
	jw_obj_end(w);
	jw_obj(w, "timing_pass");
	jw_int(w, "iterations", raw->timing_iters);
	if (raw->trace_path[0])
		jw_str(w, "trace", raw->trace_path);
	else
		jw_null(w, "trace");
	jw_str(w, "note", raw->trace_note);
	jw_str(w, "stream_attribution", r->trace_by_appearance
			? "trace streams in order of appearance (graph replay runs kernels on the graph's own streams)"
			: r->trace_by_markers ? "workload streams by marker kernels" : "workload streams by stream id");
	jw_int(w, "kernels", r->trace_kernels);
	jw_obj_end(w);
}

void hwq_write_result_json(FILE *f, const struct hwq_result *r, int pretty)
{
	struct jw w;
	jw_init(&w, f, pretty);
	jw_obj(&w, NULL);
	write_result_body(&w, r);
	jw_obj_end(&w);
	fputc('\n', f);
}

enum aorta_status hwq_save_result(const struct hwq_result *r, const char *path, struct aorta_error *e)
{
	struct outfile o;
	enum aorta_status st = out_open(&o, path, e);
	if (st)
		return st;
	hwq_write_result_json(o.f, r, 1);
	return out_commit(&o, e);
}

enum aorta_status hwq_save_sweep(const struct hwq_result *rs, int n, const char *path, struct aorta_error *e)
{
	struct outfile o;
	enum aorta_status st = out_open(&o, path, e);
	if (st)
		return st;
	struct jw w;
	jw_init(&w, o.f, 1);
	jw_obj(&w, NULL);
	jw_str(&w, "schema", "aorta.hwq.sweep/1");
	char ts[64];
	hwq_now_iso(ts, sizeof(ts));
	jw_str(&w, "timestamp", ts);
	jw_str(&w, "workload", n ? rs[0].w->name : "");
	jw_arr(&w, "results");
	for (int i = 0; i < n; i++) {
		jw_obj(&w, NULL);
		write_result_body(&w, &rs[i]);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	int *sc = xmalloc((size_t)(n + 1) * sizeof(int));
	double *tp = xmalloc((size_t)(n + 1) * sizeof(double));
	for (int i = 0; i < n; i++) {
		sc[i] = rs[i].raw.streams;
		tp[i] = rs[i].throughput;
	}
	struct hwq_sweep_analysis a;
	hwq_sweep_analyze(sc, tp, n, &a);
	jw_obj(&w, "analysis");
	jw_arr(&w, "stream_counts");
	for (int i = 0; i < n; i++)
		jw_int(&w, NULL, sc[i]);
	jw_arr_end(&w);
	jw_arr(&w, "throughputs");
	for (int i = 0; i < n; i++)
		jw_num(&w, NULL, tp[i], 6);
	jw_arr_end(&w);
	jw_arr(&w, "efficiencies");
	for (int i = 0; i < n; i++)
		jw_num(&w, NULL, a.eff[i], 6);
	jw_arr_end(&w);
	if (a.inflection >= 0)
		jw_int(&w, "inflection_point", sc[a.inflection]);
	else
		jw_null(&w, "inflection_point");
	if (a.peak >= 0)
		jw_int(&w, "peak_stream_count", sc[a.peak]);
	else
		jw_null(&w, "peak_stream_count");
	jw_obj_end(&w);
	jw_obj_end(&w);
	fputc('\n', o.f);
	hwq_sweep_analysis_release(&a);
	free(sc);
	free(tp);
	return out_commit(&o, e);
}

static const char *purpose(const struct hwq_workload_info *w)
{
	if (!strcmp(w->sensitivity, "critical"))
		return "highly sensitive to queue switching: results expose scheduling and launch overhead";
	if (!strcmp(w->sensitivity, "high"))
		return "sensitive to queue switching between dependent stages";
	if (!strcmp(w->sensitivity, "medium"))
		return "moderately sensitive: overlap of copies and compute";
	return "insensitive to queue switching: a compute-bound baseline";
}

void hwq_print_result(FILE *f, const struct hwq_result *r)
{
	const struct hwq_raw *raw = &r->raw;
	const char *rule = "======================================================================";
	fprintf(f, "%s\nWORKLOAD: %s\n%s\n", rule, r->w->name, rule);
	fprintf(f, "  %s\n  category: %s   switch sensitivity: %s\n\n", r->w->description, r->w->category,
		r->w->sensitivity);
	fprintf(f, "PURPOSE\n  %s\n\n", purpose(r->w));
	fprintf(f, "TEST CONFIGURATION\n");
	fprintf(f, "  device:            cuda:%d (%s, %d SMs)\n", raw->dev.index, raw->dev.name, raw->dev.sm_count);
	fprintf(f, "  streams:           %d (range %d-%d, recommended %d)\n", raw->streams, r->w->min_streams,
		r->w->max_streams, r->w->rec_streams);
	fprintf(f, "  iterations:        %d measured, %d warm-up, %d timing pass\n", raw->iters, r->cfg.warmup,
		raw->timing_iters);
	fprintf(f, "  sync mode:         %s%s\n", hwq_sync_name(r->cfg.sync), r->cfg.graph ? ", CUDA graph replay" : "");
	if (r->cfg.mode)
		fprintf(f, "  mode:              %s\n", r->cfg.mode);
	if (r->w->distributed)
		fprintf(f, "  world:             %d GPU(s)%s\n", raw->world,
			raw->world == 1 ? " (one visible GPU: collectives run within one rank)" : "");
	fprintf(f, "  kernels/iteration: %lld\n\n", raw->kernels_per_iter);

	fprintf(f, "RESULTS\n");
	fprintf(f, "  throughput:        %.3f %s\n", r->throughput, r->w->unit);
	if (r->cfg.sync != HWQ_SYNC_PER_ITERATION) {
		fprintf(f, "  note: sync mode %s: iteration times are host enqueue times (as upstream), so\n"
			   "        throughput and latency above measure enqueueing; over the wall time\n"
			   "        (enqueue + final sync) throughput is %.3f %s\n",
			hwq_sync_name(r->cfg.sync), r->throughput_wall, r->w->unit);
	}
	fprintf(f, "  kernels/s:         %.0f\n", r->kernels_per_s);
	fprintf(f, "  latency (ms):      mean %.4f  P50 %.4f  P95 %.4f  P99 %.4f\n", r->lat.mean, r->lat.p50, r->lat.p95,
		r->lat.p99);
	fprintf(f, "                     min %.4f  max %.4f  std %.4f\n", r->lat.min, r->lat.max, r->lat.std);
	double tail = r->lat.p50 > 0 ? r->lat.p99 / r->lat.p50 : 0.0;
	if (tail > 2.0)
		fprintf(f, "  WARNING: P99/P50 = %.2f: high tail latency (> 2x median)\n", tail);
	else if (tail > 1.5)
		fprintf(f, "  Note: P99/P50 = %.2f: some tail latency (> 1.5x median)\n", tail);
	fprintf(f, "  memory:            peak allocated %.3f GB, peak reserved %.3f GB\n", GB(raw->peak_alloc_bytes),
		GB(raw->peak_reserved_bytes));
	fprintf(f, "  check:             %s: %s\n\n", raw->check_ok ? "passed" : "FAILED", raw->check_msg);

	fprintf(f, "QUEUE SWITCH ANALYSIS\n");
	if (!raw->trace_path[0] && r->trace_kernels == 0) {
		fprintf(f, "  no per-kernel times: %s\n\n", raw->trace_note[0] ? raw->trace_note : "timing pass off");
	} else {
		fprintf(f, "  kernels timed:     %lld over %d iterations (CUPTI timing pass)\n", r->trace_kernels,
			raw->timing_iters);
		if (r->trace_by_appearance)
			fprintf(f, "  note: graph replay ran its kernels on the graph's own streams; \"stream\" below\n"
				   "        is the trace's stream in order of appearance, not the capturing stream\n");
		fprintf(f, "  inter-stream gap:  %.4f ms mean (%lld samples)\n", r->sw.inter_ms, r->sw.inter_n);
		fprintf(f, "  intra-stream gap:  %.4f ms mean (%lld samples)\n", r->sw.intra_ms, r->sw.intra_n);
		fprintf(f, "  switch overhead:   %.4f ms", r->sw.overhead_ms);
		if (r->sw.overhead_ms > 0.1)
			fprintf(f, "  (significant)\n");
		else if (r->sw.overhead_ms > 0.01)
			fprintf(f, "  (moderate)\n");
		else
			fprintf(f, "  (negligible)\n");
		fprintf(f, "  per-stream busy (ms/iteration):");
		for (int i = 0; i < raw->streams; i++)
			fprintf(f, "%s%.3f", i % 8 ? " " : "\n    ", r->per_stream_ms ? r->per_stream_ms[i] : 0.0);
		fprintf(f, "\n\n");
	}
	fprintf(f, "TIMING\n");
	fprintf(f, "  sum of iterations: %.3f ms; wall time of the measured loop: %.3f ms\n", r->total_time_ms,
		raw->total_wall_ms);
	if (raw->trace_path[0])
		fprintf(f, "  trace:             %s\n", raw->trace_path);
	fprintf(f, "\nINTERPRETATION\n");
	if (r->sw.overhead_ms > 0.1)
		fprintf(f, "  Switching between streams costs %.3f ms more than back-to-back kernels on one\n"
			   "  stream: significant; fewer streams or coarser kernels will help.\n", r->sw.overhead_ms);
	else if (r->sw.overhead_ms > 0.01)
		fprintf(f, "  Switching between streams costs %.4f ms more than within a stream: moderate.\n",
			r->sw.overhead_ms);
	else
		fprintf(f, "  No measurable stream-switch overhead at %d streams.\n", raw->streams);
	if (tail > 2.0)
		fprintf(f, "  The latency tail is heavy (P99 %.2fx P50): look for contention or host stalls.\n", tail);
	else
		fprintf(f, "  Latency is stable (P99 %.2fx P50).\n", tail);
	fprintf(f, "\nNEXT STEPS\n  aorta hwq sweep %s -s 1,2,4,8,16,32   (scaling with the stream count)\n", r->w->name);
	fprintf(f, "  aorta hwq run %s -s %d -p              (keep the kernel trace; aorta analyze reads it)\n\n",
		r->w->name, raw->streams);
}

void hwq_print_sweep(FILE *f, const struct hwq_result *rs, int n)
{
	fprintf(f, "%-8s %-15s %-12s %-12s %-12s %-12s\n", "Streams", "Throughput", "P50 (ms)", "P95 (ms)", "P99 (ms)",
		"Total (ms)");
	fprintf(f, "---------------------------------------------------------------------------\n");
	int *sc = xmalloc((size_t)(n + 1) * sizeof(int));
	double *tp = xmalloc((size_t)(n + 1) * sizeof(double));
	for (int i = 0; i < n; i++) {
		sc[i] = rs[i].raw.streams;
		tp[i] = rs[i].throughput;
		fprintf(f, "%-8d %-15.3f %-12.4f %-12.4f %-12.4f %-12.3f\n", sc[i], tp[i], rs[i].lat.p50, rs[i].lat.p95,
			rs[i].lat.p99, rs[i].total_time_ms);
	}
	struct hwq_sweep_analysis a;
	hwq_sweep_analyze(sc, tp, n, &a);
	if (a.peak >= 0)
		fprintf(f, "\nPeak throughput at: %d streams (%.3f %s)\n", sc[a.peak], tp[a.peak], rs[0].w->unit);
	if (a.inflection >= 0)
		fprintf(f, "Inflection point: %d streams (efficiency %.2f after %.2f)\n", sc[a.inflection],
			a.eff[a.inflection], a.eff[a.inflection - 1]);
	else
		fprintf(f, "Inflection point: none (efficiency never fell below 80%% of the previous count)\n");
	hwq_sweep_analysis_release(&a);
	free(sc);
	free(tp);
}

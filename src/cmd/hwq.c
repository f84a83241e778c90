/*
 * hwq.c - aorta hwq: hardware-queue evaluation (upstream's hw_queue_eval).
 *
 *   aorta hwq list [-c CATEGORY] [-v]
 *   aorta hwq run WORKLOAD [-s N] [-i N] [-w N] [-o FILE] [-d N] [--sync-mode M] [-p] [--profile-dir DIR] ...
 *   aorta hwq sweep WORKLOAD -s 1,2,4,8,16,32 [-i N] [-w N] [-o FILE] [-d N]
 *   aorta hwq run-priority P0|P1|P2|P3|all [-s LIST] [-i N] [-o DIR]
 *   aorta hwq compare -b BASE -t TEST [--threshold 0.05]
 *   aorta hwq info
 *
 * Every argument is checked before any GPU work: the workload name, the
 * stream counts against the workload's range, iteration counts, the sync
 * mode, then the device ordinal and the memory the workload needs against
 * the device (hwq_info_gpu is a property query, not work).  The run itself
 * is the plug-in's hwq_run_gpu; every derived figure is computed here
 * (src/hwq/metrics.c).  Exit codes: 0 ok, 1 a check failed or compare
 * found a regression, 2 usage (bad workload, range, device), 3 bad input
 * file, 4 GPU error.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/options.h"
#include "base/plugin.h"
#include "base/verbs.h"
#include "cmd/cmds.h"
#include "hwq/hwq_host.h"

struct run_opts {
	int streams, iters, warmup, device, profile, graph, timing_iters, world, high_priority, quiet;
	const char *out, *sync, *profile_dir, *mode;
	long long seed;
};

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void rm_rf(const char *dir)
{
	nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static int mkdir_p(const char *dir)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", dir);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			if (mkdir(buf, 0777) && errno != EEXIST)
				return -1;
			*p = '/';
		}
	if (mkdir(buf, 0777) && errno != EEXIST)
		return -1;
	return 0;
}

/* "1,2,4" -> counts; -1 with a message on bad syntax */
static int parse_list(const char *s, int *v, int cap)
{
	int n = 0;
	const char *p = s;
	while (*p) {
		char *end;
		long x = strtol(p, &end, 10);
		if (end == p || x < 1 || x > 4096 || n >= cap) {
			fprintf(stderr, "aorta: error: bad stream list '%s' (expected counts like 1,2,4,8)\n", s);
			return -1;
		}
		v[n++] = (int)x;
		p = end;
		if (*p == ',')
			p++;
		else if (*p) {
			fprintf(stderr, "aorta: error: bad stream list '%s' (expected counts like 1,2,4,8)\n", s);
			return -1;
		}
	}
	if (!n)
		fprintf(stderr, "aorta: error: empty stream list\n");
	return n ? n : -1;
}

static const struct hwq_workload_info *find_or_complain(const char *name)
{
	const struct hwq_workload_info *w = hwq_workload_find(name);
	if (!w)
		fprintf(stderr, "aorta: error: unknown workload '%s' (aorta hwq list shows the %d workloads)\n", name,
			hwq_nworkloads);
	return w;
}

/* The one WORKLOAD argument of run and sweep; NULL after a message. */
static const struct hwq_workload_info *one_workload(int nargs, char **argv, const char *verb)
{
	if (nargs != 1) {
		fprintf(stderr, "aorta: error: %s needs one workload name\n", verb);
		return NULL;
	}
	return find_or_complain(argv[0]);
}

static int check_range(const struct hwq_workload_info *w, int n)
{
	if (n < w->min_streams || n > w->max_streams) {
		fprintf(stderr, "aorta: error: %s runs with %d to %d streams, not %d\n", w->name, w->min_streams,
			w->max_streams, n);
		return AORTA_EUSAGE;
	}
	return 0;
}

static int check_common(const struct run_opts *o, enum hwq_sync *sync)
{
	if (o->iters < 1 || o->warmup < 0 || o->timing_iters < 0 || o->world < 0) {
		fprintf(stderr, "aorta: error: --iterations must be >= 1; --warmup, --timing-iters, --world >= 0\n");
		return AORTA_EUSAGE;
	}
	if (hwq_sync_parse(o->sync, sync)) {
		fprintf(stderr, "aorta: error: unknown sync mode '%s' (per_iteration, end_only, none)\n", o->sync);
		return AORTA_EUSAGE;
	}
	if (o->mode && strcmp(o->mode, "compute_only") && strcmp(o->mode, "comms_only") &&
	    strcmp(o->mode, "comms_compute")) {
		fprintf(stderr, "aorta: error: unknown mode '%s' (compute_only, comms_only, comms_compute)\n", o->mode);
		return AORTA_EUSAGE;
	}
	if (o->device < 0) {
		fprintf(stderr, "aorta: error: device %d does not exist\n", o->device);
		return AORTA_EUSAGE;
	}
	return 0;
}

/* The device exists and each stream count's memory fits: before GPU work. */
static int check_device(const struct run_opts *o, const struct hwq_workload_info *w, const int *sc, int n,
			struct hwq_device *dev)
{
	char why[512];
	hwq_info_fn info = (hwq_info_fn)gpu_plugin_sym("hwq_info_gpu", why, sizeof(why));
	if (!info) {
		gpu_plugin_complain("hwq", why);
		return AORTA_EGPU;
	}
	struct aorta_error e = { 0 };
	enum aorta_status st = info(o->device, dev, &e);
	if (st) {
		aorta_error_print(&e);
		return st;
	}
	for (int i = 0; i < n; i++) {
		uint64_t need = w->mem_bytes ? w->mem_bytes(sc[i]) : 0;
		if (need > dev->total_mem_bytes / 100 * 95) {
			fprintf(stderr,
				"aorta: error: %s at %d streams needs %.2f GiB of device memory; cuda:%d (%s) has "
				"%.2f GiB\n",
				w->name, sc[i], need / 1073741824.0, o->device, dev->name,
				dev->total_mem_bytes / 1073741824.0);
			return AORTA_EUSAGE;
		}
	}
	return 0;
}

/* One run on the GPU and everything derived from it; r is filled (and
 * must be released) when the return is AORTA_OK or AORTA_ECHECK. */
static int run_one(const struct run_opts *o, const struct hwq_workload_info *w, int streams, enum hwq_sync sync,
		   struct hwq_result *r)
{
	char why[512];
	hwq_run_fn run = (hwq_run_fn)gpu_plugin_sym("hwq_run_gpu", why, sizeof(why));
	if (!run) {
		gpu_plugin_complain("hwq", why);
		return AORTA_EGPU;
	}
	char tmp[] = "/tmp/aorta-hwq-XXXXXX";
	const char *dir = NULL;
	if (o->timing_iters > 0) {
		if (o->profile) {
			if (mkdir_p(o->profile_dir)) {
				fprintf(stderr, "aorta: error: cannot create '%s': %s\n", o->profile_dir, strerror(errno));
				return AORTA_EINTERNAL;
			}
			dir = o->profile_dir;
		} else if (mkdtemp(tmp)) {
			dir = tmp;
		}
	}
	memset(r, 0, sizeof(*r));
	r->w = w;
	struct hwq_run_config *c = &r->cfg;
	c->workload = w->name;
	c->streams = streams;
	c->iters = o->iters;
	c->warmup = o->warmup;
	c->device = o->device;
	c->sync = sync;
	c->graph = o->graph;
	c->timing_iters = dir ? o->timing_iters : 0;
	c->trace_dir = dir;
	c->mode = !strcmp(w->name, "comms_compute_overlap") ? (o->mode ? o->mode : "comms_compute") : NULL;
	c->world = o->world;
	c->high_priority = o->high_priority;
	c->seed = (uint64_t)o->seed;
	c->quiet = o->quiet;
	if (!o->quiet)
		aorta_note("hwq: %s, %d streams, %d+%d iterations, %s%s", w->name, streams, o->warmup, o->iters,
			   hwq_sync_name(sync), o->graph ? ", graph" : "");
	struct aorta_error e = { 0 };
	enum aorta_status st = run(c, &r->raw, &e);
	if (st) {
		aorta_error_print(&e);
		hwq_raw_release(&r->raw);
		if (dir == tmp)
			rm_rf(tmp);
		return st;
	}
	hwq_result_derive(r);
	hwq_now_iso(r->timestamp, sizeof(r->timestamp));
	if (r->raw.trace_path[0]) {
		struct aorta_error te = { 0 };
		if (hwq_trace_metrics(r, r->raw.trace_path, &te)) {
			aorta_warn("timing-pass trace unreadable, no switch figures: %s", te.msg);
			snprintf(r->raw.trace_note, sizeof(r->raw.trace_note), "trace unreadable: %.200s", te.msg);
		}
	}
	if (dir == tmp) {
		rm_rf(tmp);
		r->raw.trace_path[0] = 0; /* gone */
		if (!r->raw.trace_note[0])
			snprintf(r->raw.trace_note, sizeof(r->raw.trace_note),
				 "timing-pass trace read and removed (-p keeps it)");
	}
	return r->raw.check_ok ? AORTA_OK : AORTA_ECHECK;
}

#define RUN_OPTS(o)                                                                                                  \
	OPT_INT('i', "iterations", &(o).r.iters, "N", "measured iterations (default 100)"),                         \
	OPT_INT('w', "warmup", &(o).r.warmup, "N", "warm-up iterations (default 10)"),                              \
	OPT_INT('d', "device", &(o).r.device, "N", "GPU ordinal (default 0)"),                                      \
	OPT_STRING(0, "sync-mode", &(o).r.sync, "M", "per_iteration (default) | end_only | none"),                  \
	OPT_BOOL(0, "graph", &(o).r.graph, "capture one iteration as a CUDA graph and replay it"),                  \
	OPT_INT(0, "timing-iters", &(o).r.timing_iters, "N",                                                        \
		"iterations of the CUPTI per-kernel timing pass after the measured ones (default 5; 0: none)"),   \
	OPT_STRING(0, "mode", &(o).r.mode, "M", "comms_compute_overlap: compute_only | comms_only | comms_compute"), \
	OPT_INT(0, "world", &(o).r.world, "N", "distributed workloads: 1 = only -d's GPU; 0 = every visible GPU"), \
	OPT_BOOL(0, "high-priority", &(o).r.high_priority, "stream 0 at the device's highest priority"),            \
	OPT_INT(0, "seed", &(o).seed_i, "N", "seed of the random inputs (default 1234)"),                         \
	OPT_BOOL('q', "quiet", &(o).r.quiet, "no progress on stderr")

struct run_opts_cli {
	struct run_opts r;
	int seed_i;
};

static void defaults(struct run_opts_cli *o)
{
	memset(o, 0, sizeof(*o));
	o->r.streams = 4;
	o->r.iters = 100;
	o->r.warmup = 10;
	o->r.sync = "per_iteration";
	o->r.profile_dir = "profiles";
	o->r.timing_iters = 5;
	o->seed_i = 1234;
}

static int verb_run(int argc, char **argv)
{
	struct run_opts_cli oc;
	defaults(&oc);
	oc.r.streams = -1;
	struct opt opts[] = {
		OPT_INT('s', "streams", &oc.r.streams, "N", "streams (default: the workload's recommended count)"),
		OPT_STRING('o', "output", &oc.r.out, "FILE", "write the result JSON (schema aorta.hwq.result/1)"),
		OPT_BOOL('p', "profile", &oc.r.profile, "keep the CUPTI Kineto trace of the timing pass (aorta analyze reads it)"),
		OPT_STRING(0, "profile-dir", &oc.r.profile_dir, "DIR", "where -p writes (default profiles)"),
		RUN_OPTS(oc),
		OPT_END(),
	};
	int nargs = 0;
	int rc = opt_parse(argc, argv, opts, "aorta hwq run WORKLOAD [options]",
			   "Runs one workload: warm-up, measured iterations (events around each, fork/join\n"
			   "over all streams), a check against a CPU reference, then a CUPTI timing pass\n"
			   "for per-kernel times (switch latency, per-stream busy time).",
			   &nargs);
	if (rc < 0)
		return AORTA_OK;
	if (rc)
		return rc;
	oc.r.seed = oc.seed_i;
	const struct hwq_workload_info *w = one_workload(nargs, argv, "run");
	if (!w)
		return AORTA_EUSAGE;
	if (oc.r.streams < 0)
		oc.r.streams = w->rec_streams;
	enum hwq_sync sync;
	if ((rc = check_range(w, oc.r.streams)) || (rc = check_common(&oc.r, &sync)))
		return rc;
	if (oc.r.graph && !w->graph_ok) {
		fprintf(stderr, "aorta: error: %s cannot be captured as a CUDA graph (it synchronises the host)\n",
			w->name);
		return AORTA_EUSAGE;
	}
	struct hwq_device dev;
	if ((rc = check_device(&oc.r, w, &oc.r.streams, 1, &dev)))
		return rc;
	aorta_quiet = oc.r.quiet;
	struct hwq_result r;
	rc = run_one(&oc.r, w, oc.r.streams, sync, &r);
	if (rc && rc != AORTA_ECHECK)
		return rc;
	struct aorta_error e = { 0 };
	if (oc.r.out && hwq_save_result(&r, oc.r.out, &e)) {
		aorta_error_print(&e);
		hwq_result_release(&r);
		return e.code;
	}
	hwq_print_result(stdout, &r);
	if (oc.r.profile && r.raw.trace_path[0])
		fprintf(stdout, "profile: %s (aorta analyze %s)\n", r.raw.trace_path, r.raw.trace_path);
	if (rc == AORTA_ECHECK)
		fprintf(stderr, "aorta: error: %s: check failed: %s\n", w->name, r.raw.check_msg);
	hwq_result_release(&r);
	return rc;
}

/* Runs w at the in-range counts of sc; results in *out (n of them). */
static int sweep_runs(const struct run_opts *o, const struct hwq_workload_info *w, const int *sc_in, int nin,
		      enum hwq_sync sync, struct hwq_result **out, int *nout, int check_dev)
{
	int sc[256], n = 0;
	for (int i = 0; i < nin; i++) {
		if (sc_in[i] < w->min_streams || sc_in[i] > w->max_streams) {
			aorta_note("%s: skipping %d streams (range %d-%d)", w->name, sc_in[i], w->min_streams,
				   w->max_streams);
			continue;
		}
		sc[n++] = sc_in[i];
	}
	*out = NULL;
	*nout = 0;
	if (!n) {
		fprintf(stderr, "aorta: error: no stream count in range %d-%d for %s\n", w->min_streams, w->max_streams,
			w->name);
		return AORTA_EUSAGE;
	}
	struct hwq_device dev;
	int rc;
	if (check_dev && (rc = check_device(o, w, sc, n, &dev)))
		return rc;
	struct hwq_result *rs = xcalloc((size_t)n, sizeof(*rs));
	int worst = 0, k = 0;
	for (int i = 0; i < n; i++) {
		rc = run_one(o, w, sc[i], sync, &rs[k]);
		if (rc && rc != AORTA_ECHECK) {
			for (int j = 0; j < k; j++)
				hwq_result_release(&rs[j]);
			free(rs);
			return rc;
		}
		if (rc)
			worst = rc;
		k++;
	}
	*out = rs;
	*nout = k;
	return worst;
}

static int verb_sweep(int argc, char **argv)
{
	struct run_opts_cli oc;
	defaults(&oc);
	const char *list = "1,2,4,8,16,32";
	struct opt opts[] = {
		OPT_STRING('s', "streams", &list, "LIST", "stream counts (default 1,2,4,8,16,32; out-of-range ones are skipped)"),
		OPT_STRING('o', "output", &oc.r.out, "FILE", "write the sweep JSON (schema aorta.hwq.sweep/1)"),
		RUN_OPTS(oc),
		OPT_END(),
	};
	int nargs = 0;
	int rc = opt_parse(argc, argv, opts, "aorta hwq sweep WORKLOAD [-s 1,2,4,8,16,32] [options]",
			   "Runs a workload at several stream counts; prints throughput and latency per count,\n"
			   "scaling efficiency, the peak and the inflection point.",
			   &nargs);
	if (rc < 0)
		return AORTA_OK;
	if (rc)
		return rc;
	oc.r.seed = oc.seed_i;
	const struct hwq_workload_info *w = one_workload(nargs, argv, "sweep");
	if (!w)
		return AORTA_EUSAGE;
	int sc[256];
	int n = parse_list(list, sc, 256);
	enum hwq_sync sync;
	if (n < 0)
		return AORTA_EUSAGE;
	if ((rc = check_common(&oc.r, &sync)))
		return rc;
	if (oc.r.graph && !w->graph_ok) {
		fprintf(stderr, "aorta: error: %s cannot be captured as a CUDA graph\n", w->name);
		return AORTA_EUSAGE;
	}
	aorta_quiet = oc.r.quiet;
	struct hwq_result *rs;
	int nr;
	rc = sweep_runs(&oc.r, w, sc, n, sync, &rs, &nr, 1);
	if (rc && rc != AORTA_ECHECK)
		return rc;
	hwq_print_sweep(stdout, rs, nr);
	struct aorta_error e = { 0 };
	if (oc.r.out && hwq_save_sweep(rs, nr, oc.r.out, &e)) {
		aorta_error_print(&e);
		rc = e.code;
	}
	for (int i = 0; i < nr; i++)
		hwq_result_release(&rs[i]);
	free(rs);
	return rc;
}

static int verb_priority(int argc, char **argv)
{
	struct run_opts_cli oc;
	defaults(&oc);
	oc.r.iters = 50;
	const char *list = "1,2,4,8,16", *dir = "results";
	struct opt opts[] = {
		OPT_STRING('s', "streams", &list, "LIST", "stream counts (default 1,2,4,8,16)"),
		OPT_INT('i', "iterations", &oc.r.iters, "N", "measured iterations (default 50; warm-up is 10)"),
		OPT_STRING('o', "output", &dir, "DIR", "folder for <workload>_results.json (default results)"),
		OPT_INT('d', "device", &oc.r.device, "N", "GPU ordinal (default 0)"),
		OPT_BOOL('q', "quiet", &oc.r.quiet, "no progress on stderr"),
		OPT_END(),
	};
	int nargs = 0;
	int rc = opt_parse(argc, argv, opts, "aorta hwq run-priority P0|P1|P2|P3|all [options]",
			   "Sweeps every workload of a priority group and writes one sweep JSON per workload.",
			   &nargs);
	if (rc < 0)
		return AORTA_OK;
	if (rc)
		return rc;
	if (nargs != 1) {
		fprintf(stderr, "aorta: error: run-priority needs a group: P0, P1, P2, P3 or all\n");
		return AORTA_EUSAGE;
	}
	const char *g = argv[0];
	int all = !strcmp(g, "all");
	if (!all && strcmp(g, "P0") && strcmp(g, "P1") && strcmp(g, "P2") && strcmp(g, "P3")) {
		fprintf(stderr, "aorta: error: unknown priority group '%s' (P0, P1, P2, P3, all)\n", g);
		return AORTA_EUSAGE;
	}
	oc.r.seed = oc.seed_i;
	int sc[256];
	int n = parse_list(list, sc, 256);
	enum hwq_sync sync;
	if (n < 0)
		return AORTA_EUSAGE;
	if ((rc = check_common(&oc.r, &sync)))
		return rc;
	struct hwq_device dev;
	char why[512];
	hwq_info_fn info = (hwq_info_fn)gpu_plugin_sym("hwq_info_gpu", why, sizeof(why));
	if (!info) {
		gpu_plugin_complain("hwq", why);
		return AORTA_EGPU;
	}
	struct aorta_error e = { 0 };
	if (info(oc.r.device, &dev, &e)) {
		aorta_error_print(&e);
		return e.code;
	}
	if (mkdir_p(dir)) {
		fprintf(stderr, "aorta: error: cannot create '%s': %s\n", dir, strerror(errno));
		return AORTA_EINTERNAL;
	}
	aorta_quiet = oc.r.quiet;
	int worst = 0;
	for (int i = 0; i < hwq_nworkloads; i++) {
		const struct hwq_workload_info *w = &hwq_workloads[i];
		if (!w->priority[0] || (!all && strcmp(w->priority, g)))
			continue;
		struct hwq_result *rs;
		int nr;
		printf("\n=== %s (%s) ===\n", w->name, w->priority);
		rc = sweep_runs(&oc.r, w, sc, n, sync, &rs, &nr, 1);
		if (rc && rc != AORTA_ECHECK) {
			fprintf(stderr, "aorta: error: %s failed; going on with the next workload\n", w->name);
			worst = worst ? worst : rc;
			continue;
		}
		if (rc)
			worst = worst ? worst : rc;
		hwq_print_sweep(stdout, rs, nr);
		char path[1024];
		snprintf(path, sizeof(path), "%s/%s_results.json", dir, w->name);
		if (hwq_save_sweep(rs, nr, path, &e)) {
			aorta_error_print(&e);
			worst = e.code;
		} else {
			printf("wrote %s\n", path);
		}
		for (int j = 0; j < nr; j++)
			hwq_result_release(&rs[j]);
		free(rs);
	}
	return worst;
}

static int verb_compare(int argc, char **argv)
{
	const char *base = NULL, *test = NULL;
	double thr = 0.05, thr_pct = -1;
	struct opt opts[] = {
		OPT_STRING('b', "baseline", &base, "FILE", "baseline result or sweep JSON"),
		OPT_STRING('t', "test", &test, "FILE", "test result or sweep JSON"),
		OPT_DOUBLE(0, "threshold", &thr, "F", "regression beyond this FRACTION, as upstream's flag (default 0.05 = 5%)"),
		OPT_DOUBLE(0, "threshold-pct", &thr_pct, "PCT", "the same in percent, as compare and report take it (5 = 5%)"),
		OPT_END(),
	};
	int nargs = 0;
	int rc = opt_parse(argc, argv, opts, "aorta hwq compare -b BASE -t TEST [--threshold 0.05]",
			   "Compares throughput and latency P50/P95/P99 of two results or sweeps pairwise;\n"
			   "exit 1 when any regressed beyond the threshold.",
			   &nargs);
	if (rc < 0)
		return AORTA_OK;
	if (rc)
		return rc;
	if (!base || !test || nargs) {
		fprintf(stderr, "aorta: error: compare needs -b BASE and -t TEST (and nothing else)\n");
		return AORTA_EUSAGE;
	}
	if (!(thr >= 0) || (thr_pct != -1 && !(thr_pct >= 0))) {
		fprintf(stderr, "aorta: error: --threshold and --threshold-pct must be numbers >= 0\n");
		return AORTA_EUSAGE;
	}
	if (thr > 1) { /* 5 meant as 5 % would silently accept a 400 % regression */
		fprintf(stderr, "aorta: error: --threshold %g is a fraction (0.05 = 5%%, as upstream's); "
				"for percent give --threshold-pct %g\n", thr, thr);
		return AORTA_EUSAGE;
	}
	if (thr_pct >= 0)
		thr = thr_pct / 100.0;
	struct hwq_cmp_opts o = { thr };
	struct aorta_error e = { 0 };
	int nreg = 0;
	if (hwq_compare_files(base, test, &o, stdout, &nreg, &e)) {
		aorta_error_print(&e);
		return e.code;
	}
	return nreg ? AORTA_ECHECK : AORTA_OK;
}

static int verb_list(int argc, char **argv)
{
	const char *cat = NULL;
	int verbose = 0;
	struct opt opts[] = {
		OPT_STRING('c', "category", &cat, "C", "distributed | inference | pipeline | latency_sensitive"),
		OPT_BOOL('v', "verbose", &verbose, "add stream range (recommended), switch sensitivity, unit, priority"),
		OPT_END(),
	};
	int nargs = 0;
	int rc = opt_parse(argc, argv, opts, "aorta hwq list [-c CATEGORY] [-v]", "Lists the workloads.", &nargs);
	if (rc < 0)
		return AORTA_OK;
	if (rc)
		return rc;
	if (cat && strcmp(cat, "distributed") && strcmp(cat, "inference") && strcmp(cat, "pipeline") &&
	    strcmp(cat, "latency_sensitive")) {
		fprintf(stderr, "aorta: error: unknown category '%s' (distributed, inference, pipeline, "
				"latency_sensitive)\n", cat);
		return AORTA_EUSAGE;
	}
	const struct hwq_workload_info *sorted[64];
	int n = 0;
	for (int i = 0; i < hwq_nworkloads; i++)
		if (!cat || !strcmp(hwq_workloads[i].category, cat))
			sorted[n++] = &hwq_workloads[i];
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && strcmp(sorted[j - 1]->name, sorted[j]->name) > 0; j--) {
			const struct hwq_workload_info *t = sorted[j];
			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	printf("Available workloads (%d):\n", n);
	for (int i = 0; i < n; i++) {
		printf("  %-25s [%s] %s\n", sorted[i]->name, sorted[i]->category, sorted[i]->description);
		if (verbose)
			printf("  %-25s streams: %d-%d (recommended: %d), switch sensitivity: %s, unit: %s, "
			       "priority: %s%s\n",
			       "", sorted[i]->min_streams, sorted[i]->max_streams, sorted[i]->rec_streams,
			       sorted[i]->sensitivity, sorted[i]->unit, sorted[i]->priority[0] ? sorted[i]->priority : "-",
			       sorted[i]->graph_ok ? ", graph" : "");
	}
	return AORTA_OK;
}

static int verb_info(int argc, char **argv)
{
	struct opt opts[] = { OPT_END() };
	int nargs = 0;
	int rc = opt_parse(argc, argv, opts, "aorta hwq info",
			   "Prints the CUDA runtime and driver versions, the environment variables that\n"
			   "change queue behaviour, and every visible GPU.",
			   &nargs);
	if (rc < 0)
		return AORTA_OK;
	if (rc)
		return rc;
	static const char *env[] = { "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_LAUNCH_BLOCKING",
				     "CUDA_MPS_PIPE_DIRECTORY", "NCCL_NVLS_ENABLE", "NCCL_MAX_CTAS", "NCCL_ALGO",
				     "NCCL_PROTO", "AORTA_GPU_LIB", "AORTA_CUPTI_LIB", NULL };
	printf("aorta hwq (CUDA)\nenvironment:\n");
	for (int i = 0; env[i]; i++) {
		const char *v = getenv(env[i]);
		printf("  %-28s %s\n", env[i], v ? v : "(unset)");
	}
	char why[512];
	hwq_info_fn info = (hwq_info_fn)gpu_plugin_sym("hwq_info_gpu", why, sizeof(why));
	if (!info) {
		gpu_plugin_complain("hwq", why);
		return AORTA_EGPU;
	}
	struct hwq_device d;
	struct aorta_error e = { 0 };
	if (info(0, &d, &e)) {
		printf("GPUs: none (%s)\n", e.msg);
		return AORTA_EGPU;
	}
	printf("CUDA runtime %d.%d, driver supports %d.%d\nGPUs (%d):\n", d.runtime_version / 1000,
	       d.runtime_version % 1000 / 10, d.driver_version / 1000, d.driver_version % 1000 / 10, d.device_count);
	int count = d.device_count;
	for (int i = 0; i < count; i++) {
		if (info(i, &d, &e)) {
			aorta_error_print(&e);
			return e.code;
		}
		printf("  cuda:%d  %s  cc %d.%d  %d SMs  %.1f GiB\n", i, d.name, d.cc_major, d.cc_minor, d.sm_count,
		       d.total_mem_bytes / 1073741824.0);
	}
	return AORTA_OK;
}

static const struct verb verbs[] = {
	{ "list", verb_list, "list the workloads" },
	{ "run", verb_run, "run one workload" },
	{ "sweep", verb_sweep, "run a workload at several stream counts" },
	{ "run-priority", verb_priority, "sweep every workload of a priority group" },
	{ "compare", verb_compare, "compare two results or sweeps (exit 1 on regression)" },
	{ "info", verb_info, "CUDA, environment and GPUs" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: aorta hwq VERB [options]\n\n"
		   "Hardware-queue evaluation: how the GPU schedules kernels from many streams,\n"
		   "what switching between queues costs, whether copies and collectives overlap GEMMs.\n\n"
		   "verbs:\n");
	verbs_print(f, verbs, NVERBS(verbs), 14);
	fprintf(f, "\n'aorta hwq VERB -h' describes a verb's options.\n");
}

int cmd_hwq(int argc, char **argv)
{
	return verbs_dispatch("hwq", verbs, NVERBS(verbs), usage, argc, argv);
}

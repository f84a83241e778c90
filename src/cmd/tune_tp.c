/*
 * tune_tp.c - aorta tune-tp: measure TransformerEngine-style tensor-parallel
 * comm+GEMM overlap configurations and recommend by measured time.
 *
 *   aorta tune-tp --model-name NAME | --model-config config.json [options]
 *
 * Order of work, so bad input costs no GPU time: options (exit 2) -> model
 * dims (exit 3: unknown name, bad config.json) -> shapes of every TP size up
 * to --max-tp-size (exit 3: not divisible) -> the GPU plug-in and the GPU
 * count (exit 4: no plug-in, no or too few GPUs) -> the tuning run
 * (src/tp/search.c) -> the outputs (src/tp/report.c).  The measurement
 * backend is the plug-in's tp_gpu_* entry points (tp.h), filled into a
 * struct tp_backend here; the unit tests fill it with a fake instead.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/options.h"
#include "base/plugin.h"
#include "cmd/cmds.h"
#include "tp/tp_host.h"

static int add_ops(const char *s, unsigned *ops)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *save = NULL, *p = strtok_r(buf, ", ", &save); p; p = strtok_r(NULL, ", ", &save)) {
		enum tp_op o;
		if (tp_op_parse(p, &o)) {
			fprintf(stderr, "aorta: error: unknown operator '%s' (expected qkv, proj, fc1 or fc2)\n", p);
			return -1;
		}
		*ops |= 1u << o;
	}
	return 0;
}

static void list_models(void)
{
	printf("%-32s %7s %7s %6s %6s %6s %6s\n", "model", "hidden", "ffn", "heads", "kv", "hdim", "gated");
	for (size_t i = 0; i < tp_model_builtin_count(); i++) {
		const struct tp_model *m = tp_model_builtin_at(i);
		printf("%-32s %7lld %7lld %6lld %6lld %6lld %6s\n", m->name, m->hidden, m->intermediate, m->heads,
		       m->kv_heads, m->head_dim, m->gated ? "yes" : "no");
	}
}

/* What tune-tp was asked, beside the tuning's options. */
struct tune_args {
	const char *model_name, *model_config, *out_dir;
	int no_trace, quiet, list;
};

/* The operators: repeated, comma-separated, or upstream's "--operators
 * fc1 fc2" (the words after it come back as positional arguments); 0, or
 * AORTA_EUSAGE (said). */
static int parse_ops(const struct opt_list *ops_list, char **argv, int nargs, unsigned *ops)
{
	if (ops_list->n) {
		*ops = 0;
		for (int i = 0; i < ops_list->n; i++)
			if (add_ops(ops_list->v[i], ops))
				return AORTA_EUSAGE;
		for (int i = 0; i < nargs; i++)
			if (add_ops(argv[i], ops))
				return AORTA_EUSAGE;
	} else if (nargs) {
		fprintf(stderr, "aorta: error: unexpected argument '%s'\n", argv[0]);
		return AORTA_EUSAGE;
	}
	if (!*ops) {
		fprintf(stderr, "aorta: error: --operators names no operator (expected qkv, proj, fc1 or fc2)\n");
		return AORTA_EUSAGE;
	}
	return 0;
}

/* The options into g and o, checked; 0, or the exit code (-1: help or
 * the model list printed). */
static int parse_args(int argc, char **argv, struct tune_args *g, struct tp_tune_opts *o)
{
	const char *dtype = "bf16";
	struct opt_list ops_list = { 0 };
	int max_tp = 0, min_sm = 1, max_sm = TP_UB_MAX_SM, iters = 20, warmup = 5, sm_points = 7, no_check = 0;
	int tokens = 8192;
	double thr = 0.5, tol = TP_TOLERANCE_DEFAULT;
	struct opt opts[] = {
		OPT_STRING(0, "model-name", &g->model_name, "NAME", "model: HF id from the local HF cache, or a built-in (--list-models)"),
		OPT_STRING(0, "model-config", &g->model_config, "FILE", "model dims from a Hugging Face config.json"),
		OPT_INT(0, "max-tp-size", &max_tp, "N", "largest TP size: 2, 4 or 8 (default 8, capped by the GPUs)"),
		OPT_INT(0, "max-token-len", &tokens, "S", "tokens per micro-batch (sequence length; default 8192)"),
		OPT_LIST(0, "operators", &ops_list, "OPS", "operators among qkv proj fc1 fc2 (default all; 'fc1 fc2' or fc1,fc2)"),
		OPT_INT(0, "min-num-sm", &min_sm, "N", "smallest num_sm searched for bulk/pipeline (default 1)"),
		OPT_INT(0, "max-num-sm", &max_sm, "N", "largest num_sm searched (default 32, TE's UB_MAX_SM)"),
		OPT_INT(0, "sm-points", &sm_points, "N", "measurements per adaptive num_sm search (default 7)"),
		OPT_DOUBLE(0, "overlap-threshold", &thr, "F", "hidden fraction that counts as effective overlap (default 0.5)"),
		OPT_DOUBLE(0, "tolerance", &tol, "F", "TP scaling tolerance: time(n) <= (1+F) time(1)/n (default 0.2)"),
		OPT_STRING(0, "output-dir", &g->out_dir, "DIR", "outputs (default aorta-tune-tp-YYYYmmdd-HHMMSS)"),
		OPT_STRING(0, "dtype", &dtype, "T", "bf16 (default), fp16 or fp32"),
		OPT_INT(0, "iters", &iters, "N", "timed iterations per configuration (default 20)"),
		OPT_INT(0, "warmup", &warmup, "N", "warm-up iterations (default 5)"),
		OPT_BOOL(0, "no-check", &no_check, "skip the output correctness checks"),
		OPT_BOOL(0, "no-trace", &g->no_trace, "no CUPTI traces (no overlap ratio)"),
		OPT_BOOL(0, "list-models", &g->list, "print the built-in model table and exit"),
		OPT_BOOL('q', "quiet", &g->quiet, "no progress on stderr"),
		OPT_END(),
	};
	int nargs = 0;
	int rc = opt_parse(argc, argv, opts, "aorta tune-tp --model-name NAME | --model-config FILE [options]",
			   "Measures TransformerEngine-style overlap of TP all-gathers and reduce-scatters\n"
			   "with their GEMMs (methods none, bulk, ring_exchange, pipeline) for qkv, proj,\n"
			   "fc1 and fc2 at TP 1, 2, 4, 8; ranks by measured end-to-end time; writes\n"
			   "tuning_report.json, summary.txt and optimal_tp_comm_overlap_cfg*.yaml for\n"
			   "Megatron-LM --tp-comm-overlap-cfg.",
			   &nargs);
	if (rc || g->list) {
		free(ops_list.v);
		if (!rc)
			list_models();
		return rc ? rc : -1;
	}
	tp_tune_opts_default(o);
	rc = parse_ops(&ops_list, argv, nargs, &o->ops);
	free(ops_list.v);
	if (rc)
		return rc;
	if (!g->model_name && !g->model_config) {
		fprintf(stderr, "aorta: error: tune-tp needs --model-name NAME or --model-config FILE\n");
		return AORTA_EUSAGE;
	}
	if (max_tp && max_tp != 2 && max_tp != 4 && max_tp != 8) {
		fprintf(stderr, "aorta: error: --max-tp-size %d: expected 2, 4 or 8\n", max_tp);
		return AORTA_EUSAGE;
	}
	if (min_sm < 1 || max_sm > TP_UB_MAX_SM || min_sm > max_sm) {
		fprintf(stderr, "aorta: error: --min-num-sm %d / --max-num-sm %d: expected 1 <= min <= max <= %d\n",
			min_sm, max_sm, TP_UB_MAX_SM);
		return AORTA_EUSAGE;
	}
	if (tokens <= 0 || iters < 1 || warmup < 0 || sm_points < 2 || !(thr >= 0 && thr <= 1) || !(tol >= 0)) {
		fprintf(stderr, "aorta: error: --max-token-len and --iters must be >= 1, --warmup >= 0, "
				"--sm-points >= 2, --overlap-threshold in [0, 1], --tolerance >= 0\n");
		return AORTA_EUSAGE;
	}
	if (tp_dtype_parse(dtype, &o->dtype)) {
		fprintf(stderr, "aorta: error: --dtype '%s': expected bf16, fp16 or fp32\n", dtype);
		return AORTA_EUSAGE;
	}
	o->max_tp = max_tp ? max_tp : 8;
	o->max_tp_given = max_tp != 0;
	o->tokens = tokens;
	o->min_sm = min_sm;
	o->max_sm = max_sm;
	o->sm_points = sm_points;
	o->overlap_threshold = thr;
	o->tolerance = tol;
	o->iters = iters;
	o->warmup = warmup;
	o->check = !no_check;
	o->progress = !g->quiet;
	aorta_quiet = g->quiet;
	return 0;
}

/* The model's dims and the TP sizes its shapes allow: host only, before
 * any GPU work. */
static enum aorta_status plan(const struct tune_args *g, struct tp_tune_opts *o, struct aorta_error *e)
{
	int sizes[4], nsz;
	enum aorta_status st = tp_model_resolve(g->model_name, g->model_config, &o->model, e);
	if (st)
		return st;
	o->progress = 0; /* the note on skipped sizes comes once, later */
	st = tp_plan_sizes(o, INT_MAX, sizes, &nsz, e);
	o->progress = !g->quiet;
	if (st)
		return st;
	aorta_note("tune-tp: %s (%s): hidden %lld, ffn %lld%s, heads %lld, kv heads %lld, head_dim %lld",
		   o->model.name, o->model.source, o->model.hidden, o->model.intermediate, o->model.gated ? " gated" : "",
		   o->model.heads, o->model.kv_heads, o->model.head_dim);
	return AORTA_OK;
}

/* The plug-in's measurement backend into b; AORTA_EGPU (said) without it. */
static enum aorta_status load_backend(struct tp_backend *b)
{
	char why[512];
	static const char *syms[] = { "tp_gpu_count", "tp_gpu_open", "tp_gpu_measure", "tp_gpu_close" };
	void *p[4];
	for (int i = 0; i < 4; i++)
		if (!(p[i] = gpu_plugin_sym(syms[i], why, sizeof(why)))) {
			gpu_plugin_complain("tune-tp", why);
			return AORTA_EGPU;
		}
	b->count = (tp_gpu_count_fn)p[0];
	b->open = (tp_gpu_open_fn)p[1];
	b->measure = (tp_gpu_measure_fn)p[2];
	b->close = (tp_gpu_close_fn)p[3];
	return AORTA_OK;
}

/* The tuning run and its outputs into out_dir (what was measured before
 * an error is still written). */
static enum aorta_status tune(const struct tp_backend *b, struct tp_tune_opts *o, const char *out_dir)
{
	struct aorta_error e = { 0 }, e2 = { 0 };
	struct tp_tune t;
	enum aorta_status st = tp_tune_run(b, o, &t, &e);
	if (st) {
		aorta_error_print(&e);
		if (!t.nmeas) {
			tp_tune_release(&t);
			return st;
		}
		aorta_warn("tune-tp: writing the %lld measurements made before the error", t.nmeas);
	}
	enum aorta_status st2 = tp_report_write(&t, o, out_dir, &e2);
	if (st2) {
		aorta_error_print(&e2);
		tp_tune_release(&t);
		return st ? st : st2;
	}
	printf("tune-tp: %s: %lld configurations measured (exhaustive: %lld); optimal TP %d\n", o->model.name,
	       t.nmeas, t.nexhaustive, t.optimal_tp);
	printf("  %s/tuning_report.json\n  %s/summary.txt\n  %s/optimal_tp_comm_overlap_cfg.yaml\n", out_dir,
	       out_dir, out_dir);
	tp_tune_release(&t);
	return st;
}

int cmd_tune_tp(int argc, char **argv)
{
	struct tune_args g = { 0 };
	struct tp_tune_opts o;
	int rc = parse_args(argc, argv, &g, &o);
	if (rc)
		return rc < 0 ? AORTA_OK : rc;
	struct aorta_error e = { 0 };
	struct tp_backend b;
	enum aorta_status st;
	if ((st = plan(&g, &o, &e))) {
		aorta_error_print(&e);
		return st;
	}
	if ((st = load_backend(&b)))
		return st;
	setenv("NCCL_NVLS_ENABLE", "0", 1); /* NVLink multicast stays off on these machines */
	int sizes[4], nsz;
	if ((st = tp_plan_sizes(&o, b.count(), sizes, &nsz, &e))) {
		aorta_error_print(&e);
		return st;
	}
	char dflt[64], tdir[1200];
	const char *out_dir = g.out_dir;
	if (!out_dir) {
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		strftime(dflt, sizeof(dflt), "aorta-tune-tp-%Y%m%d-%H%M%S", &tm);
		out_dir = dflt;
	}
	if (tp_mkdir_p(out_dir)) {
		fprintf(stderr, "aorta: error: cannot create '%s'\n", out_dir);
		return AORTA_EINTERNAL;
	}
	if (!g.no_trace) {
		snprintf(tdir, sizeof(tdir), "%s/traces", out_dir);
		o.trace_dir = tdir;
	}
	return tune(&b, &o, out_dir);
}

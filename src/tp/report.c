/*
 * report.c - the outputs of aorta tune-tp, in the public tuner's layout so
 * its users can switch (docs/tune-tp.md):
 *   tuning_report.json                 schema aorta.tune_tp/1: the upstream
 *                                      keys (tuner_config, analyses,
 *                                      recommendations, tp_scaling,
 *                                      operator_summaries) plus the measured
 *                                      times, the pruned configurations and
 *                                      the measurement counts
 *   summary.txt                        for people
 *   optimal_tp_comm_overlap_cfg_tp{N}.yaml  TE userbuffers config per TP size
 *   optimal_tp_comm_overlap_cfg.yaml   the same for the TP size the scaling
 *                                      verdict recommends
 * Every file is written atomically (out_open / out_commit): complete or
 * absent.  The YAML is written by hand: a mapping from TE layer names to
 * the keys TE reads (TP.md 2.2), booleans as true/false; a unit test parses
 * it back with libyaml.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/output.h"
#include "tp/tp_host.h"

/* TE's layer order (initialize_ub's lists) */
static const struct { enum tp_op op; enum tp_phase ph; enum tp_method def; } layers[] = {
	{ TP_QKV, TP_FPROP, TP_RING_EXCHANGE }, { TP_QKV, TP_DGRAD, TP_BULK }, { TP_QKV, TP_WGRAD, TP_BULK },
	{ TP_PROJ, TP_FPROP, TP_PIPELINE },     { TP_PROJ, TP_DGRAD, TP_RING_EXCHANGE },
	{ TP_FC1, TP_FPROP, TP_RING_EXCHANGE }, { TP_FC1, TP_DGRAD, TP_BULK }, { TP_FC1, TP_WGRAD, TP_BULK },
	{ TP_FC2, TP_FPROP, TP_PIPELINE },      { TP_FC2, TP_DGRAD, TP_RING_EXCHANGE },
};
#define NLAYERS (sizeof(layers) / sizeof(layers[0]))

static const struct tp_result *best_of(const struct tp_tune *t, int tp, int op, int ph)
{
	int li = tp_log2i(tp);
	if (li < 0)
		return NULL;
	int b = t->best[li][op][ph];
	return b >= 0 ? &t->r[b] : NULL;
}

/* the serial baseline (method none) of a group */
static const struct tp_result *none_of(const struct tp_tune *t, int tp, int op, int ph)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct tp_result *r = &t->r[i];
		if (r->measured && r->sh.tp == tp && (int)r->sh.op == op && (int)r->sh.phase == ph &&
		    r->cfg.method == TP_NONE)
			return r;
	}
	return NULL;
}

/* the fastest overlapped (method != none) ranked configuration of a group */
static const struct tp_result *best_overlap(const struct tp_tune *t, int tp, int op, int ph)
{
	const struct tp_result *b = NULL;
	for (size_t i = 0; i < t->n; i++) {
		const struct tp_result *r = &t->r[i];
		if (r->measured && r->rank > 0 && r->sh.tp == tp && (int)r->sh.op == op && (int)r->sh.phase == ph &&
		    r->cfg.method != TP_NONE && (!b || r->rank < b->rank))
			b = r;
	}
	return b;
}

static double us(double ms)
{
	return ms * 1e3;
}

static const char *disable_flag(enum tp_op op, enum tp_phase ph)
{
	if (ph == TP_WGRAD)
		return "--disable-tp-comm-bulk-wgrad";
	if (ph == TP_DGRAD && (op == TP_QKV || op == TP_FC1))
		return "--disable-tp-comm-bulk-dgrad";
	if (ph == TP_FPROP && (op == TP_PROJ || op == TP_FC2))
		return "--disable-tp-comm-overlap-rs";
	return "--disable-tp-comm-overlap-ag";
}

static void cfg_words(const struct tp_cfg *c, char *buf, size_t len)
{
	switch (c->method) {
	case TP_BULK:
		snprintf(buf, len, "bulk (num_sm=%d, set_sm_margin=%d)", c->num_sm, c->set_sm_margin);
		break;
	case TP_RING_EXCHANGE:
		snprintf(buf, len, "ring_exchange (aggregate=%d, use_ce=%d)", c->aggregate, c->use_ce);
		break;
	case TP_PIPELINE:
		snprintf(buf, len, "pipeline (num_sm=%d, num_splits=%d, set_sm_margin=%d)", c->num_sm, c->num_splits,
			 c->set_sm_margin);
		break;
	default:
		snprintf(buf, len, "none");
	}
}

/* a fraction as a percentage, "-" when unknown */
static void pct(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.0f%%", 100 * v);
}

/* ---- recommendations (also in summary.txt) ------------------------------- */
static size_t recommendations(const struct tp_tune *t, const struct tp_tune_opts *o, char (*out)[320],
			      size_t max)
{
	size_t n = 0;
#define ADD(...) do { if (n < max) snprintf(out[n++], 320, __VA_ARGS__); } while (0)
	ADD("=== TP SCALING ANALYSIS ===");
	ADD("Overall optimal TP size: %d (based on scaling efficiency: time(TP=n) <= (1 + %.2f) time(TP=1) / n)",
	    t->optimal_tp, o->tolerance);
	for (int op = 0; op < TP__NOPS; op++)
		if ((o->ops & (1u << op)) && t->scaling[op].optimal_tp)
			ADD("%s: optimal TP=%d - %s", tp_op_name((enum tp_op)op), t->scaling[op].optimal_tp,
			    t->scaling[op].reason);
	ADD("%s", "");
	ADD("=== OVERLAP ANALYSIS (ranked by measured end-to-end time) ===");
	for (int k = 1; k < t->ntp; k++) {
		int tp = t->tp_sizes[k];
		for (size_t l = 0; l < NLAYERS; l++) {
			int op = layers[l].op, ph = layers[l].ph;
			if (!(o->ops & (1u << op)))
				continue;
			const struct tp_result *b = best_of(t, tp, op, ph), *z = none_of(t, tp, op, ph);
			const struct tp_result *ov = best_overlap(t, tp, op, ph);
			char w[128];
			if (!b || !z)
				continue;
			if (b->cfg.method != TP_NONE) {
				char hf[16], ovr[16];
				cfg_words(&b->cfg, w, sizeof(w));
				pct(hf, sizeof(hf), b->hidden_fraction);
				pct(ovr, sizeof(ovr), b->m.overlap_ratio);
				ADD("TP=%d, %s %s: Use %s: %.1fus vs %.1fus serial (%.2fx), hidden %s, overlap ratio %s%s",
				    tp, tp_op_name(op), tp_phase_name(ph), w, us(b->m.e2e_ms), us(z->m.e2e_ms),
				    z->m.e2e_ms / b->m.e2e_ms, hf, ovr,
				    b->hidden_fraction >= o->overlap_threshold ? "" : " (below the overlap threshold)");
			} else if (ov) {
				cfg_words(&ov->cfg, w, sizeof(w));
				ADD("TP=%d, %s %s: no overlap method beat the serial baseline (best %s: %.1fus vs %.1fus "
				    "serial); Megatron-LM's switch is %s (global)", tp, tp_op_name(op), tp_phase_name(ph), w,
				    us(ov->m.e2e_ms), us(z->m.e2e_ms), disable_flag(op, ph));
			} else {
				ADD("TP=%d, %s %s: not worth overlapping (serial %.1fus, GEMM %.1fus, comm %.1fus)", tp,
				    tp_op_name(op), tp_phase_name(ph), us(z->m.e2e_ms), us(z->m.gemm_ms), us(z->m.comm_ms));
			}
		}
	}
#undef ADD
	return n;
}

/* ---- JSON ----------------------------------------------------------------- */
static void jw_cfg(struct jw *w, const char *key, const struct tp_cfg *c)
{
	jw_obj(w, key);
	jw_str(w, "method", tp_method_name(c->method));
	jw_int(w, "num_sm", c->num_sm);
	jw_int(w, "cga_size", c->cga_size);
	jw_bool(w, "set_sm_margin", c->set_sm_margin);
	jw_bool(w, "aggregate", c->aggregate);
	jw_int(w, "num_splits", c->num_splits);
	jw_bool(w, "use_ce", c->use_ce);
	jw_bool(w, "atomic_gemm", c->atomic_gemm);
	jw_obj_end(w);
}

static void jw_analysis(struct jw *w, const struct tp_tune *t, const struct tp_tune_opts *o,
			const struct tp_result *r)
{
	const struct tp_meas *m = &r->m;
	const struct tp_result *z = none_of(t, r->sh.tp, r->sh.op, r->sh.phase);
	int fw = r->sh.phase == TP_FPROP;
	/* the trace holds `iters` iterations on each of the tp devices: the
	 * intersection per iteration and rank */
	double inter_us = r->overlap_inter_ns >= 0 && o->iters > 0
				  ? r->overlap_inter_ns / 1e3 / ((double)o->iters * r->sh.tp) : NAN;
	char k[64];

	jw_obj(w, NULL);
	jw_str(w, "config_id", r->id);
	jw_str(w, "operator", tp_op_name(r->sh.op));
	jw_str(w, "phase", tp_phase_name(r->sh.phase));
	jw_int(w, "tp_size", r->sh.tp);
	jw_str(w, "overlap_method", tp_method_name(r->cfg.method));
	/* the upstream tuner's fields (times in microseconds) */
	static const char *sides[2] = { "forward", "backward" };
	for (int s = 0; s < 2; s++) {
		int on = (s == 0) == fw;
		snprintf(k, sizeof(k), "%s_gemm_time_us", sides[s]);
		jw_num(w, k, on ? us(m->gemm_ms) : 0, 3);
		snprintf(k, sizeof(k), "%s_comm_time_us", sides[s]);
		jw_num(w, k, on ? us(m->comm_ms) : 0, 3);
		snprintf(k, sizeof(k), "%s_overlap_time_us", sides[s]);
		jw_num(w, k, on ? inter_us : 0, 3);
		snprintf(k, sizeof(k), "%s_overlap_ratio", sides[s]);
		jw_num(w, k, on ? m->overlap_ratio : 0, 4);
		snprintf(k, sizeof(k), "%s_e2e_time_us", sides[s]);
		jw_num(w, k, on ? us(m->e2e_ms) : 0, 3);
	}
	jw_num(w, "total_time_us", us(m->e2e_ms), 3);
	jw_num(w, "total_gemm_time_us", us(m->gemm_ms), 3);
	jw_num(w, "total_comm_time_us", us(m->comm_ms), 3);
	jw_num(w, "total_overlap_ratio", m->overlap_ratio, 4);
	jw_num(w, "operator_e2e_time_us", us(m->e2e_ms), 3);
	/* aorta's fields */
	jw_str(w, "collective", r->sh.tp > 1 ? tp_coll_name(r->sh.coll) : "none");
	jw_bool(w, "bulk_only", r->sh.bulk_only);
	jw_int(w, "m", r->sh.m);
	jw_int(w, "n", r->sh.n);
	jw_int(w, "k", r->sh.k);
	jw_num(w, "coll_bytes", tp_shape_coll_bytes(&r->sh), 0);
	jw_str(w, "dtype", tp_dtype_name(r->sh.dtype));
	jw_cfg(w, "cfg", &r->cfg);
	jw_num(w, "e2e_ms", m->e2e_ms, 6);
	jw_num(w, "e2e_min_ms", m->e2e_min_ms, 6);
	jw_num(w, "e2e_max_ms", m->e2e_max_ms, 6);
	jw_num(w, "gemm_ms", m->gemm_ms, 6);
	jw_num(w, "comm_ms", m->comm_ms, 6);
	jw_num(w, "serial_ms", m->serial_ms, 6);
	jw_num(w, "exposed_comm_ms", r->exposed_ms, 6);
	jw_num(w, "hidden_fraction", r->hidden_fraction, 4);
	jw_num(w, "overlap_ratio", m->overlap_ratio, 4);
	jw_num(w, "trace_overlap_us", inter_us, 3);
	jw_num(w, "speedup_vs_serial", z && m->e2e_ms > 0 ? z->m.e2e_ms / m->e2e_ms : NAN, 4);
	jw_num(w, "gemm_tflops", m->gemm_ms > 0 ? tp_shape_flops(&r->sh) / (m->gemm_ms * 1e-3) / 1e12 : NAN, 1);
	jw_bool(w, "check_ok", m->check_ok);
	jw_num(w, "max_rel_err", m->max_rel_err, 6);
	jw_str(w, "check_msg", m->check_msg);
	jw_str(w, "trace", m->trace_path);
	jw_int(w, "rank", r->rank);
	jw_bool(w, "best", r->rank == 1);
	jw_obj_end(w);
}

/* tp_scaling: the optimal TP size, and per operator its scaling. */
static void json_scaling(struct jw *w, const struct tp_tune *t, const struct tp_tune_opts *o)
{
	char k[16];
	jw_obj(w, "tp_scaling");
	jw_int(w, "optimal_tp_size", t->optimal_tp);
	jw_num(w, "tolerance", o->tolerance, 3);
	jw_obj(w, "results");
	for (int op = 0; op < TP__NOPS; op++) {
		const struct tp_scaling *s = &t->scaling[op];
		if (!(o->ops & (1u << op)) || !s->optimal_tp)
			continue;
		jw_obj(w, tp_op_name((enum tp_op)op));
		jw_int(w, "optimal_tp_size", s->optimal_tp);
		static const char *maps[] = { "scaling_efficient", "scaling_ratios", "e2e_times", "e2e_times_ms" };
		for (int mp = 0; mp < 4; mp++) {
			jw_obj(w, maps[mp]);
			for (int li = 0; li < 4; li++) {
				if (!s->tested[li])
					continue;
				snprintf(k, sizeof(k), "%d", 1 << li);
				if (mp == 0)
					jw_bool(w, k, s->efficient[li]);
				else if (mp == 1)
					jw_num(w, k, s->ratio[li], 4);
				else if (mp == 2)
					jw_num(w, k, us(s->time_ms[li]), 3);
				else
					jw_num(w, k, s->time_ms[li], 6);
			}
			jw_obj_end(w);
		}
		jw_str(w, "reason", s->reason);
		jw_obj_end(w);
	}
	jw_obj_end(w);
	jw_obj_end(w);

}

/* operator_summaries: per operator and TP size, the best configuration
 * of each phase. */
static void json_summaries(struct jw *w, const struct tp_tune *t, const struct tp_tune_opts *o)
{
	char k[16];
	jw_obj(w, "operator_summaries");
	for (int op = 0; op < TP__NOPS; op++) {
		if (!(o->ops & (1u << op)))
			continue;
		jw_obj(w, tp_op_name((enum tp_op)op));
		for (int i = 0; i < t->ntp; i++) {
			int tp = t->tp_sizes[i], eff = 0, any = 0;
			double total = 0;
			snprintf(k, sizeof(k), "%d", tp);
			for (int ph = 0; ph < TP__NPHASES; ph++) {
				const struct tp_result *b = best_of(t, tp, op, ph);
				if (b) {
					any = 1;
					total += b->m.e2e_ms;
					if (b->cfg.method != TP_NONE && b->hidden_fraction >= o->overlap_threshold)
						eff = 1;
				}
			}
			if (!any)
				continue;
			jw_obj(w, k);
			jw_bool(w, "has_effective_overlap", eff);
			for (int ph = 0; ph < TP__NPHASES; ph++) {
				char key2[32];
				const struct tp_result *b = best_of(t, tp, op, ph);
				snprintf(key2, sizeof(key2), "best_%s", tp_phase_name((enum tp_phase)ph));
				if (b)
					jw_str(w, key2, b->id);
				else
					jw_null(w, key2);
				snprintf(key2, sizeof(key2), "best_%s_e2e_ms", tp_phase_name((enum tp_phase)ph));
				jw_num(w, key2, b ? b->m.e2e_ms : NAN, 6);
			}
			jw_num(w, "operator_e2e_ms", total, 6);
			jw_obj_end(w);
		}
		jw_obj_end(w);
	}
	jw_obj_end(w);
}

static void write_json(FILE *f, const struct tp_tune *t, const struct tp_tune_opts *o, char (*rec)[320],
		       size_t nrec)
{
	struct jw w;
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	jw_init(&w, f, 1);
	jw_obj(&w, NULL);
	jw_str(&w, "schema", TP_SCHEMA);
	jw_str(&w, "tool", "aorta tune-tp");
	jw_str(&w, "timestamp", ts);

	jw_obj(&w, "tuner_config");
	jw_str(&w, "model_name", o->model.name);
	jw_str(&w, "model_source", o->model.source);
	jw_int(&w, "hidden_size", o->model.hidden);
	jw_int(&w, "ffn_hidden_size", o->model.intermediate);
	jw_int(&w, "num_attention_heads", o->model.heads);
	jw_int(&w, "num_kv_heads", o->model.kv_heads);
	jw_int(&w, "head_dim", o->model.head_dim);
	jw_bool(&w, "gated_mlp", o->model.gated);
	jw_int(&w, "max_tp_size", o->max_tp);
	jw_int(&w, "max_token_len", o->tokens);
	jw_arr(&w, "operators");
	for (int op = 0; op < TP__NOPS; op++)
		if (o->ops & (1u << op))
			jw_str(&w, NULL, tp_op_name((enum tp_op)op));
	jw_arr_end(&w);
	jw_int(&w, "min_num_sm", o->min_sm);
	jw_int(&w, "max_num_sm", o->max_sm);
	jw_int(&w, "sm_points", o->sm_points);
	jw_num(&w, "overlap_threshold", o->overlap_threshold, 3);
	jw_str(&w, "dtype", tp_dtype_name(o->dtype));
	jw_int(&w, "warmup", o->warmup);
	jw_int(&w, "iters", o->iters);
	jw_arr(&w, "tp_sizes");
	for (int i = 0; i < t->ntp; i++)
		jw_int(&w, NULL, t->tp_sizes[i]);
	jw_arr_end(&w);
	jw_int(&w, "gpus", t->gpus);
	jw_int(&w, "sm_count", t->sm_count);
	jw_obj_end(&w);

	jw_obj(&w, "measurements");
	jw_int(&w, "made", t->nmeas);
	jw_int(&w, "exhaustive", t->nexhaustive);
	jw_obj_end(&w);

	jw_arr(&w, "analyses");
	for (size_t i = 0; i < t->n; i++)
		if (t->r[i].measured)
			jw_analysis(&w, t, o, &t->r[i]);
	jw_arr_end(&w);

	jw_arr(&w, "pruned");
	for (size_t i = 0; i < t->n; i++) {
		const struct tp_result *r = &t->r[i];
		if (r->measured)
			continue;
		jw_obj(&w, NULL);
		jw_str(&w, "config_id", r->id);
		jw_str(&w, "operator", tp_op_name(r->sh.op));
		jw_str(&w, "phase", tp_phase_name(r->sh.phase));
		jw_int(&w, "tp_size", r->sh.tp);
		jw_str(&w, "overlap_method", r->skip_scaling ? "any" : tp_method_name(r->cfg.method));
		jw_str(&w, "verdict", r->skip_scaling ? "tp_scaling_failed"
				      : r->verdict == TP_REJECTED ? "rejected_by_te" : "cannot_win");
		jw_str(&w, "reason", r->why);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);

	jw_arr(&w, "recommendations");
	for (size_t i = 0; i < nrec; i++)
		jw_str(&w, NULL, rec[i]);
	jw_arr_end(&w);

	json_scaling(&w, t, o);
	json_summaries(&w, t, o);
	jw_obj_end(&w);
	fputc('\n', f);
}

/* ---- YAML ----------------------------------------------------------------- */
static const char *yb(int v)
{
	return v ? "true" : "false";
}

void tp_yaml_print(FILE *f, const struct tp_tune *t, const struct tp_tune_opts *o, int tp)
{
	fprintf(f, "# TransformerEngine userbuffers overlap config for TP=%d (aorta tune-tp, %s)\n", tp, TP_SCHEMA);
	fprintf(f, "# model %s, max_token_len %lld, %s; load with Megatron-LM --tp-comm-overlap-cfg FILE\n",
		o->model.name, o->tokens, tp_dtype_name(o->dtype));
	fprintf(f, "# (with --tp-comm-overlap --sequence-parallel; export UB_SKIPMC=1 where NVLink multicast is off)\n");
	int written = 0;
	for (size_t l = 0; l < NLAYERS; l++) {
		int op = layers[l].op, ph = layers[l].ph;
		char name[32];
		if (!(o->ops & (1u << op)))
			continue;
		tp_layer_name(op, ph, name, sizeof(name));
		const struct tp_result *b = best_of(t, tp, op, ph), *ov = best_overlap(t, tp, op, ph);
		const struct tp_result *z = none_of(t, tp, op, ph);
		struct tp_cfg c;
		if (ov) {
			c = ov->cfg;
			fprintf(f, "# %s: measured %.1fus", name, us(ov->m.e2e_ms));
			if (z)
				fprintf(f, " vs %.1fus serial", us(z->m.e2e_ms));
			if (b && b->cfg.method == TP_NONE)
				fprintf(f, "; serial was faster: consider %s (global)", disable_flag(op, ph));
			fputc('\n', f);
		} else {
			tp_cfg_default(layers[l].def, tp, &c);
			fprintf(f, "# %s: not measured (nothing to gain or skipped): TE's default\n", name);
		}
		fprintf(f, "%s:\n  method: %s\n", name, tp_method_name(c.method));
		switch (c.method) {
		case TP_BULK:
			fprintf(f, "  num_sm: %d\n  cga_size: %d\n  set_sm_margin: %s\n", c.num_sm, c.cga_size,
				yb(c.set_sm_margin));
			break;
		case TP_RING_EXCHANGE:
			fprintf(f, "  num_sm: %d\n  cga_size: %d\n  set_sm_margin: %s\n  aggregate: %s\n  use_ce: %s\n",
				c.num_sm, c.cga_size, yb(c.set_sm_margin), yb(c.aggregate), yb(c.use_ce));
			break;
		case TP_PIPELINE:
			fprintf(f, "  num_sm: %d\n  cga_size: %d\n  num_splits: %d\n  set_sm_margin: %s\n", c.num_sm,
				c.cga_size, c.num_splits, yb(c.set_sm_margin));
			break;
		default:
			break;
		}
		written++;
	}
	if (!written)
		fprintf(f, "{}\n");
}

/* ---- summary.txt ---------------------------------------------------------- */
static void write_summary(FILE *f, const struct tp_tune *t, const struct tp_tune_opts *o, char (*rec)[320],
			  size_t nrec)
{
	const char *bar = "============================================================";
	const char *rule = "------------------------------------------------------------";
	fprintf(f, "%s\nTP OVERLAP TUNING REPORT (aorta tune-tp, %s)\n%s\n", bar, TP_SCHEMA, bar);
	fprintf(f, "Model: %s (%s)\n", o->model.name, o->model.source);
	fprintf(f, "Hidden Size: %lld\nFFN Hidden Size: %lld%s\nNum Attention Heads: %lld\nNum KV Heads: %lld\n"
		"Head Dim: %lld\n", o->model.hidden, o->model.intermediate, o->model.gated ? " (gated: fc1 x2)" : "",
		o->model.heads, o->model.kv_heads, o->model.head_dim);
	fprintf(f, "Tokens: %lld, dtype %s, %d GPUs visible, %d SMs each\n", o->tokens, tp_dtype_name(o->dtype),
		t->gpus, t->sm_count);
	fprintf(f, "Measurements: %lld made (an exhaustive sweep of the same space: %lld)\n\n", t->nmeas,
		t->nexhaustive);
	fprintf(f, "%s\nTP SCALING EFFICIENCY\n%s\n", rule, rule);
	fprintf(f, "Overall Optimal TP Size: %d\nRule: time(TP=n) <= (1 + %.0f%%) x time(TP=1) / n\n\n", t->optimal_tp,
		100 * o->tolerance);
	for (int op = 0; op < TP__NOPS; op++) {
		const struct tp_scaling *s = &t->scaling[op];
		if (!(o->ops & (1u << op)) || !s->optimal_tp)
			continue;
		fprintf(f, "  %-5s optimal TP %d:", tp_op_name((enum tp_op)op), s->optimal_tp);
		for (int li = 0; li < 4; li++)
			if (s->tested[li])
				fprintf(f, "  TP=%d %.3f ms (ratio %.2f%s)", 1 << li, s->time_ms[li], s->ratio[li],
					s->efficient[li] ? "" : ", NOT efficient");
		fputc('\n', f);
	}
	fprintf(f, "\n%s\nRECOMMENDATIONS\n%s\n", rule, rule);
	for (size_t i = 0; i < nrec; i++)
		fprintf(f, "  * %s\n", rec[i]);
	fprintf(f, "\n%s\nDETAILED RESULTS (best per layer; times per iteration)\n%s\n", rule, rule);
	fprintf(f, "%-4s %-11s %-54s %9s %9s %9s %9s %7s %7s\n", "TP", "layer", "best config", "e2e ms",
		"serial ms", "GEMM ms", "comm ms", "hidden", "ovl");
	for (int k = 0; k < t->ntp; k++) {
		int tp = t->tp_sizes[k];
		for (size_t l = 0; l < NLAYERS; l++) {
			int op = layers[l].op, ph = layers[l].ph;
			char name[32], w[96];
			const struct tp_result *b = best_of(t, tp, op, ph), *z = none_of(t, tp, op, ph);
			if (!(o->ops & (1u << op)) || !b)
				continue;
			tp_layer_name(op, ph, name, sizeof(name));
			cfg_words(&b->cfg, w, sizeof(w));
			char hf[16], ov[16];
			pct(hf, sizeof(hf), b->hidden_fraction);
			pct(ov, sizeof(ov), b->m.overlap_ratio);
			fprintf(f, "%-4d %-11s %-54s %9.3f %9.3f %9.3f %9.3f %7s %7s\n", tp, name, w, b->m.e2e_ms,
				z ? z->m.e2e_ms : NAN, b->m.gemm_ms, b->m.comm_ms, hf, ov);
		}
	}
	size_t np = 0;
	for (size_t i = 0; i < t->n; i++)
		np += !t->r[i].measured;
	fprintf(f, "\nPruned or skipped configurations: %zu (reasons in tuning_report.json \"pruned\")\n%s\n", np, bar);
}

static enum aorta_status commit_file(const char *dir, const char *name, int kind, const struct tp_tune *t,
				     const struct tp_tune_opts *o, int tp, char (*rec)[320], size_t nrec,
				     struct aorta_error *e)
{
	char path[1200];
	struct outfile of;
	enum aorta_status st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((st = out_open(&of, path, e)))
		return st;
	if (kind == 0)
		write_json(of.f, t, o, rec, nrec);
	else if (kind == 1)
		write_summary(of.f, t, o, rec, nrec);
	else {
		if (kind == 3)
			fprintf(of.f, "# Optimal TP size: %d, selected by the TP scaling verdict "
				      "(time(TP=n) <= (1 + %.2f) time(TP=1) / n, smallest over operators)%s\n#\n",
				t->optimal_tp, o->tolerance,
				t->optimal_tp == tp ? "" : "; no TP size scaled, so this is the smallest one's config");
		tp_yaml_print(of.f, t, o, tp);
	}
	return out_commit(&of, e);
}

enum aorta_status tp_report_write(const struct tp_tune *t, const struct tp_tune_opts *o, const char *dir,
				  struct aorta_error *e)
{
	static char rec[256][320];
	enum aorta_status st;
	char name[64];

	if (tp_mkdir_p(dir))
		return aorta_fail(e, AORTA_EINTERNAL, dir, 0, -1, "cannot create directory");
	size_t nrec = recommendations(t, o, rec, 256);
	if ((st = commit_file(dir, "tuning_report.json", 0, t, o, 0, rec, nrec, e)))
		return st;
	if ((st = commit_file(dir, "summary.txt", 1, t, o, 0, rec, nrec, e)))
		return st;
	for (int k = 1; k < t->ntp; k++) {
		snprintf(name, sizeof(name), "optimal_tp_comm_overlap_cfg_tp%d.yaml", t->tp_sizes[k]);
		if ((st = commit_file(dir, name, 2, t, o, t->tp_sizes[k], rec, nrec, e)))
			return st;
	}
	int opt = t->optimal_tp > 1 ? t->optimal_tp : (t->ntp > 1 ? t->tp_sizes[1] : 0);
	if (opt > 1 && (st = commit_file(dir, "optimal_tp_comm_overlap_cfg.yaml", 3, t, o, opt, rec, nrec, e)))
		return st;
	return AORTA_OK;
}

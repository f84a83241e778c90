/*
 * test_tp.c - the host side of aorta tune-tp on the CPU: the built-in model
 * table, config.json parsing and the HF cache lookup, the per-operator
 * shapes, TE's pruning rules, the adaptive search, ranking, early stop and
 * the TP scaling verdict, the output files (parsed back with yajl and
 * libyaml), and the trace overlap ratio of a hand-written Kineto trace.
 *
 * The measurement backend here is a FAKE that exists only in this test: it
 * models times with the ideal-time model of TP.md section 5 (GEMM at 800
 * TFLOP/s scaled by the SMs it gets, collectives at a bus bandwidth scaled
 * by num_sm / (num_sm + 6) plus a 45 us latency floor, overlapped time =
 * max of the two plus the exposed part of each method), so every figure is
 * deterministic and the expected optimum can be computed independently by
 * sweeping the same function.  The command never uses it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>
#include <yaml.h>

#include "base/output.h"
#include "tp/tp_host.h"
#include "testing.h"

#define FIX "tests/fixtures/tp"

/* ---- the fake backend ------------------------------------------------------ */
struct tp_session {
	int tp;
};
static struct tp_session fake_sess;
static int fake_gpus = 4;
static double fake_bw_gbps = 300;
static int fake_ratio_by_sm;   /* report overlap_ratio = num_sm / 32 for bulk (no trace) */
static int fake_write_trace;   /* write a Kineto trace of the overlapped spans */
static long long fake_calls;
static long long fake_unchecked; /* measure calls without o->check */
static int fake_fail_at = -1;  /* measure call number that fails */

static double fake_gemm_ms(const struct tp_shape *sh, int sms)
{
	return tp_shape_flops(sh) / (800e12 * sms / 132.0) * 1e3;
}

static double fake_comm_ms(const struct tp_shape *sh, int comm_sms)
{
	if (sh->tp == 1)
		return 0;
	double bytes = tp_shape_coll_bytes(sh) * (sh->tp - 1) / sh->tp;
	double bw = fake_bw_gbps * 1e9;
	if (comm_sms > 0)
		bw *= comm_sms / (comm_sms + 6.0);
	return 0.045 + bytes / bw * 1e3;
}

/* the overlapped GEMM and collective times of a configuration */
static void fake_parts(const struct tp_shape *sh, const struct tp_cfg *c, double *g, double *cm, double *extra)
{
	double G = fake_gemm_ms(sh, 132), C = fake_comm_ms(sh, 0);
	*extra = 0;
	switch (c->method) {
	case TP_BULK:
		*g = c->set_sm_margin ? fake_gemm_ms(sh, 132 - c->num_sm) : G * (1 + 0.8 * c->num_sm / 132.0);
		*cm = fake_comm_ms(sh, c->num_sm);
		*extra = 0.005;
		break;
	case TP_RING_EXCHANGE:
		*g = G * 1.03;
		*cm = C * (c->use_ce ? 1.0 : 1.3);
		*extra = c->aggregate ? *cm / (sh->tp / 2) : fmin(*g, *cm) / sh->tp;
		break;
	case TP_PIPELINE:
		*g = (c->set_sm_margin ? fake_gemm_ms(sh, 132 - c->num_sm) : G * (1 + 0.8 * c->num_sm / 132.0)) *
		     (1 + 0.01 * c->num_splits);
		*cm = fake_comm_ms(sh, c->num_sm);
		*extra = *cm / c->num_splits;
		break;
	default:
		*g = G;
		*cm = C;
	}
}

static double fake_e2e(const struct tp_shape *sh, const struct tp_cfg *c)
{
	double g, cm, x;
	fake_parts(sh, c, &g, &cm, &x);
	if (c->method == TP_NONE)
		return g + cm;
	return fmax(g, cm) + x;
}

static int fake_count(void)
{
	return fake_gpus;
}

static enum aorta_status fake_open(int tp, long long max_elems, struct tp_session **out, int *sm_count,
				   struct aorta_error *e)
{
	(void)e;
	if (max_elems <= 0)
		return AORTA_EINTERNAL;
	fake_sess.tp = tp;
	*out = &fake_sess;
	*sm_count = 132;
	return AORTA_OK;
}

static enum aorta_status fake_measure(struct tp_session *s, const struct tp_shape *sh, const struct tp_cfg *c,
				      const struct tp_measure_opts *o, struct tp_meas *m, struct aorta_error *e)
{
	if (fake_calls++ == fake_fail_at)
		return aorta_fail(e, AORTA_EGPU, "", 0, -1, "fake failure");
	if (s->tp != sh->tp)
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "session tp %d, shape tp %d", s->tp, sh->tp);
	m->e2e_ms = m->e2e_min_ms = m->e2e_max_ms = fake_e2e(sh, c);
	m->gemm_ms = fake_gemm_ms(sh, 132);
	m->comm_ms = fake_comm_ms(sh, 0);
	m->serial_ms = m->gemm_ms + m->comm_ms;
	/* like the GPU backend: a result is only ok when the check ran */
	m->check_ok = o && o->check;
	if (!m->check_ok)
		fake_unchecked++;
	snprintf(m->check_msg, sizeof(m->check_msg), "%s", m->check_ok ? "ok (fake)" : "not checked");
	m->overlap_ratio = NAN;
	if (fake_ratio_by_sm && c->method == TP_BULK)
		m->overlap_ratio = c->num_sm / 32.0;
	if (fake_write_trace && o->trace_dir && c->method != TP_NONE) {
		double g, cm, x;
		fake_parts(sh, c, &g, &cm, &x);
		snprintf(m->trace_path, sizeof(m->trace_path), "%s/rank0.json", o->trace_dir);
		FILE *f = fopen(m->trace_path, "w");
		if (!f)
			return aorta_fail(e, AORTA_EINTERNAL, m->trace_path, 0, -1, "cannot create");
		/* iters iterations on each of the tp devices (same stream ids on
		 * every device, as CUPTI writes them), 10 us apart */
		fprintf(f, "{\"schemaVersion\":1,\"traceEvents\":[");
		double step = fmax(g, cm) * 1e3 + 10;
		for (int dv = 0; dv < sh->tp; dv++)
			for (int it = 0; it < o->iters; it++)
				fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"nvjet_sm90_tst_fake\",\"pid\":%d,"
					   "\"tid\":7,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"device\":%d,\"stream\":7}},"
					   "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllGather_RING_LL\","
					   "\"pid\":%d,\"tid\":19,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"device\":%d,\"stream\":19}}",
					dv || it ? "," : "", dv, 1000 + it * step, g * 1e3, dv, dv, 1000 + it * step, cm * 1e3, dv);
		fprintf(f, "]}\n");
		fclose(f);
	}
	return AORTA_OK;
}

static void fake_close(struct tp_session *s)
{
	(void)s;
}

static const struct tp_backend fake = { fake_count, fake_open, fake_measure, fake_close };

static void fake_reset(void)
{
	fake_gpus = 4;
	fake_bw_gbps = 300;
	fake_ratio_by_sm = 0;
	fake_write_trace = 0;
	fake_calls = 0;
	fake_unchecked = 0;
	fake_fail_at = -1;
}

static void opts_llama3(struct tp_tune_opts *o, unsigned ops, int max_tp)
{
	tp_tune_opts_default(o);
	o->model = *tp_model_builtin_find("llama-3-8b");
	o->ops = ops;
	o->max_tp = max_tp;
	o->max_tp_given = 1;
	o->progress = 0;
}

static char tmpdir[256];

static const char *mktmp(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/aorta-test-tp-XXXXXX");
	return mkdtemp(tmpdir);
}

static void rm_rf(const char *d)
{
	char cmd[512];
	if (getenv("AORTA_TEST_KEEP")) { /* look at the outputs */
		fprintf(stderr, "  kept %s\n", d);
		return;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	if (system(cmd) != 0)
		fprintf(stderr, "  (could not remove %s)\n", d);
}

/* ---- models ---------------------------------------------------------------- */
static void test_builtin_table_has_published_dims(void)
{
	const struct tp_model *m = tp_model_builtin_find("meta-llama/Meta-Llama-3-8B");
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK_EQ_I(m->hidden, 4096);
	CHECK_EQ_I(m->intermediate, 14336);
	CHECK_EQ_I(m->heads, 32);
	CHECK_EQ_I(m->kv_heads, 8);
	CHECK_EQ_I(m->head_dim, 128);
	CHECK(m->gated);
	CHECK(tp_model_builtin_find("Llama-3-8B") == m);
	CHECK(tp_model_builtin_find("Meta-Llama-3-8B") == m);
	const struct tp_model *q = tp_model_builtin_find("Qwen/Qwen3-0.6B");
	CHECK(q && q->head_dim == 128 && q->hidden == 1024 && q->kv_heads == 8);
	const struct tp_model *g = tp_model_builtin_find("gpt3-175b");
	CHECK(g && g->hidden == 12288 && g->intermediate == 49152 && g->heads == 96 && !g->gated);
	const struct tp_model *l70 = tp_model_builtin_find("meta-llama/Llama-2-70b-hf");
	CHECK(l70 && l70->kv_heads == 8 && l70->intermediate == 28672);
	CHECK(tp_model_builtin_find("no-such-model-7b") == NULL);
	CHECK(tp_model_builtin_find("") == NULL);
	CHECK(tp_model_builtin_count() >= 20);
	for (size_t i = 0; i < tp_model_builtin_count(); i++) {
		const struct tp_model *x = tp_model_builtin_at(i);
		CHECK(x->hidden > 0 && x->intermediate > 0 && x->head_dim > 0);
		CHECK(x->kv_heads > 0 && x->heads % x->kv_heads == 0);
		CHECK(strncmp(x->source, "built-in", 8) == 0);
		CHECK(tp_model_builtin_find(x->name) == x);
	}
}

static void test_config_json_llama3_8b(void)
{
	struct tp_model m;
	struct aorta_error e = { 0 };
	CHECK_EQ_I(tp_model_from_config(FIX "/llama3-8b.config.json", "llama3", &m, &e), AORTA_OK);
	CHECK_EQ_I(m.hidden, 4096);
	CHECK_EQ_I(m.intermediate, 14336);
	CHECK_EQ_I(m.heads, 32);
	CHECK_EQ_I(m.kv_heads, 8);
	CHECK_EQ_I(m.head_dim, 128);
	CHECK_EQ_I(m.gated, 1);
	CHECK_STR(m.name, "llama3");
	CHECK_STR(m.source, FIX "/llama3-8b.config.json");
}

static void test_config_json_gqa_explicit_head_dim(void)
{
	struct tp_model m;
	struct aorta_error e = { 0 };
	CHECK_EQ_I(tp_model_from_config(FIX "/qwen3-0.6b.config.json", NULL, &m, &e), AORTA_OK);
	CHECK_EQ_I(m.hidden, 1024);
	CHECK_EQ_I(m.head_dim, 128); /* not hidden / heads = 64 */
	CHECK_EQ_I(m.kv_heads, 8);
	CHECK_EQ_I(m.gated, 1);
	struct tp_shape sh;
	CHECK_EQ_I(tp_shape_make(&m, TP_QKV, TP_FPROP, 2, 4096, TP_BF16, &sh, &e), AORTA_OK);
	CHECK_EQ_I(sh.n, (16 + 2 * 8) * 128 / 2);
	CHECK_EQ_I(tp_shape_make(&m, TP_PROJ, TP_FPROP, 2, 4096, TP_BF16, &sh, &e), AORTA_OK);
	CHECK_EQ_I(sh.k, 16 * 128 / 2);
	CHECK_EQ_I(sh.n, 1024);
}

static void test_config_json_gpt2_style_not_gated(void)
{
	struct tp_model m;
	struct aorta_error e = { 0 };
	CHECK_EQ_I(tp_model_from_config(FIX "/gpt2-style.config.json", NULL, &m, &e), AORTA_OK);
	CHECK_EQ_I(m.hidden, 1600);
	CHECK_EQ_I(m.intermediate, 6400);
	CHECK_EQ_I(m.heads, 25);
	CHECK_EQ_I(m.kv_heads, 25);
	CHECK_EQ_I(m.head_dim, 64);
	CHECK_EQ_I(m.gated, 0);
}

static void test_config_json_bad_input_names_the_field(void)
{
	struct tp_model m;
	struct aorta_error e = { 0 };
	CHECK_EQ_I(tp_model_from_config(FIX "/missing-hidden.config.json", NULL, &m, &e), AORTA_EINPUT);
	CHECK(strstr(e.msg, "hidden_size") != NULL);
	CHECK_STR(e.path, FIX "/missing-hidden.config.json");
	memset(&e, 0, sizeof(e));
	CHECK_EQ_I(tp_model_from_config(FIX "/bad-heads.config.json", NULL, &m, &e), AORTA_EINPUT);
	CHECK(strstr(e.msg, "num_attention_heads") != NULL);
	memset(&e, 0, sizeof(e));
	CHECK_EQ_I(tp_model_from_config(FIX "/truncated.config.json", NULL, &m, &e), AORTA_EINPUT);
	CHECK(strstr(e.msg, "invalid JSON") != NULL);
	memset(&e, 0, sizeof(e));
	CHECK_EQ_I(tp_model_from_config(FIX "/nope.json", NULL, &m, &e), AORTA_EINPUT);
	CHECK(strstr(e.msg, "cannot open") != NULL);
}

static void test_hf_cache_lookup_and_unknown_model(void)
{
	const char *d = mktmp();
	char dir[512], cmd[1024];
	struct tp_model m;
	struct aorta_error e = { 0 };

	CHECK(d != NULL);
	if (!d)
		return;
	snprintf(dir, sizeof(dir), "%s/hub/models--acme--Tiny-GQA/snapshots/0123abcd", d);
	CHECK_EQ_I(tp_mkdir_p(dir), 0);
	snprintf(cmd, sizeof(cmd), "cp " FIX "/qwen3-0.6b.config.json '%s/config.json'", dir);
	CHECK_EQ_I(system(cmd), 0);
	char *old_home = getenv("HF_HOME") ? strdup(getenv("HF_HOME")) : NULL;
	char *old_cache = getenv("HF_HUB_CACHE") ? strdup(getenv("HF_HUB_CACHE")) : NULL;
	setenv("HF_HOME", d, 1);
	unsetenv("HF_HUB_CACHE");
	CHECK_EQ_I(tp_model_resolve("acme/Tiny-GQA", NULL, &m, &e), AORTA_OK);
	CHECK(strstr(m.source, "models--acme--Tiny-GQA/snapshots/0123abcd/config.json") != NULL);
	CHECK_EQ_I(m.head_dim, 128);
	CHECK_STR(m.name, "acme/Tiny-GQA");
	/* a built-in name resolves without the cache; an unknown one is an error */
	CHECK_EQ_I(tp_model_resolve("Qwen/Qwen2.5-7B", NULL, &m, &e), AORTA_OK);
	CHECK_EQ_I(m.hidden, 3584);
	memset(&e, 0, sizeof(e));
	CHECK_EQ_I(tp_model_resolve("acme/Unknown-13B", NULL, &m, &e), AORTA_EINPUT);
	CHECK(strstr(e.msg, "unknown model 'acme/Unknown-13B'") != NULL);
	if (old_home)
		setenv("HF_HOME", old_home, 1);
	else
		unsetenv("HF_HOME");
	if (old_cache)
		setenv("HF_HUB_CACHE", old_cache, 1);
	free(old_home);
	free(old_cache);
	rm_rf(d);
}

/* ---- shapes ---------------------------------------------------------------- */
static void test_shapes_llama3_8b_tp2_tp4(void)
{
	const struct tp_model *m = tp_model_builtin_find("llama-3-8b");
	struct tp_shape s;
	struct aorta_error e = { 0 };

	CHECK_EQ_I(tp_shape_make(m, TP_FC1, TP_FPROP, 2, 8192, TP_BF16, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.m, 8192);
	CHECK_EQ_I(s.k, 4096);
	CHECK_EQ_I(s.n, 2 * 14336 / 2);
	CHECK_EQ_I(s.coll, TP_AG);
	CHECK_EQ_I(s.bulk_only, 0);
	CHECK_EQ_I(s.coll_rows * s.coll_cols, 8192LL * 4096);
	CHECK_EQ_I(tp_shape_make(m, TP_FC1, TP_FPROP, 4, 8192, TP_BF16, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 2 * 14336 / 4);
	CHECK_NEAR(tp_shape_flops(&s), 2.0 * 8192 * 4096 * 7168, 1);
	CHECK_NEAR(tp_shape_coll_bytes(&s), 64.0 * 1024 * 1024, 0);
	CHECK_EQ_I(tp_shape_make(m, TP_QKV, TP_FPROP, 2, 8192, TP_BF16, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, (32 + 2 * 8) * 128 / 2);
	CHECK_EQ_I(tp_shape_make(m, TP_PROJ, TP_FPROP, 4, 8192, TP_BF16, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.coll, TP_RS);
	CHECK_EQ_I(s.k, 32 * 128 / 4);
	CHECK_EQ_I(s.n, 4096);
	CHECK_EQ_I(tp_shape_make(m, TP_FC2, TP_DGRAD, 2, 8192, TP_BF16, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.coll, TP_AG);
	CHECK(s.m == 8192 && s.k == 4096 && s.n == 14336 / 2);
	CHECK_EQ_I(tp_shape_make(m, TP_FC1, TP_DGRAD, 2, 8192, TP_BF16, &s, &e), AORTA_OK);
	CHECK(s.bulk_only && s.coll == TP_AG && s.m == 8192 && s.k == 14336 && s.n == 4096);
	CHECK_EQ_I(tp_shape_make(m, TP_FC1, TP_WGRAD, 2, 8192, TP_BF16, &s, &e), AORTA_OK);
	CHECK(s.bulk_only && s.coll == TP_RS && s.m == 4096 && s.k == 8192 && s.n == 14336);
	/* not tuned, not divisible */
	CHECK(tp_shape_make(m, TP_FC2, TP_WGRAD, 2, 8192, TP_BF16, &s, &e) != AORTA_OK);
	memset(&e, 0, sizeof(e));
	CHECK_EQ_I(tp_shape_make(m, TP_FC1, TP_FPROP, 2, 8191, TP_BF16, &s, &e), AORTA_EINPUT);
	CHECK(strstr(e.msg, "8191") != NULL);
	const struct tp_model *q = tp_model_builtin_find("Qwen/Qwen2.5-7B");
	memset(&e, 0, sizeof(e));
	CHECK_EQ_I(tp_shape_make(q, TP_QKV, TP_FPROP, 8, 8192, TP_BF16, &s, &e), AORTA_EINPUT);
	CHECK(strstr(e.msg, "num_attention_heads 28") != NULL);
}

static void test_plan_sizes_against_gpus_and_divisibility(void)
{
	struct tp_tune_opts o;
	struct aorta_error e = { 0 };
	int s[4], n;

	opts_llama3(&o, 1u << TP_FC1, 4);
	CHECK_EQ_I(tp_plan_sizes(&o, 8, s, &n, &e), AORTA_OK);
	CHECK(n == 3 && s[0] == 1 && s[1] == 2 && s[2] == 4);
	CHECK_EQ_I(tp_plan_sizes(&o, 2, s, &n, &e), AORTA_EGPU); /* asked for 4, 2 visible */
	CHECK(strstr(e.msg, "--max-tp-size 4 needs 4 GPUs") != NULL);
	o.max_tp_given = 0;
	o.max_tp = 8;
	CHECK_EQ_I(tp_plan_sizes(&o, 2, s, &n, &e), AORTA_OK);
	CHECK(n == 2 && s[1] == 2);
	CHECK_EQ_I(tp_plan_sizes(&o, 0, s, &n, &e), AORTA_EGPU);
	o.model = *tp_model_builtin_find("qwen2.5-7b"); /* 28 heads: TP 8 impossible */
	CHECK_EQ_I(tp_plan_sizes(&o, 8, s, &n, &e), AORTA_OK);
	CHECK(n == 3 && s[2] == 4);
	o.max_tp_given = 1;
	memset(&e, 0, sizeof(e));
	CHECK_EQ_I(tp_plan_sizes(&o, 8, s, &n, &e), AORTA_EINPUT);
	CHECK(strstr(e.msg, "use --max-tp-size 4") != NULL);
}

/* ---- pruning ---------------------------------------------------------------- */
static void test_pruning_follows_te_rules(void)
{
	const struct tp_model *m = tp_model_builtin_find("llama-3-8b");
	struct tp_shape ag, rs, dg, wg, ag2;
	struct tp_cfg c;
	char why[192];

	tp_shape_make(m, TP_FC1, TP_FPROP, 4, 8192, TP_BF16, &ag, NULL);
	tp_shape_make(m, TP_FC1, TP_FPROP, 2, 8192, TP_BF16, &ag2, NULL);
	tp_shape_make(m, TP_FC2, TP_FPROP, 4, 8192, TP_BF16, &rs, NULL);
	tp_shape_make(m, TP_FC1, TP_DGRAD, 4, 8192, TP_BF16, &dg, NULL);
	tp_shape_make(m, TP_FC1, TP_WGRAD, 4, 8192, TP_BF16, &wg, NULL);

	tp_cfg_default(TP_PIPELINE, 4, &c);
	CHECK_EQ_I(tp_cfg_check(&ag, &c, 132, why, sizeof(why)), TP_REJECTED);
	CHECK(strstr(why, "pipeline") != NULL);
	CHECK_EQ_I(tp_cfg_check(&rs, &c, 132, why, sizeof(why)), TP_VALID);
	c.atomic_gemm = 1;
	CHECK_EQ_I(tp_cfg_check(&rs, &c, 132, why, sizeof(why)), TP_REJECTED);
	CHECK(strstr(why, "FP8") != NULL);
	tp_cfg_default(TP_PIPELINE, 4, &c);
	c.num_splits = 1;
	CHECK_EQ_I(tp_cfg_check(&rs, &c, 132, why, sizeof(why)), TP_REJECTED);
	c.num_splits = 3; /* 8192 % (4 x 3) != 0 */
	CHECK_EQ_I(tp_cfg_check(&rs, &c, 132, why, sizeof(why)), TP_REJECTED);
	CHECK(strstr(why, "divisible") != NULL);

	tp_cfg_default(TP_BULK, 4, &c);
	CHECK_EQ_I(tp_cfg_check(&dg, &c, 132, why, sizeof(why)), TP_VALID);
	CHECK_EQ_I(tp_cfg_check(&wg, &c, 132, why, sizeof(why)), TP_VALID);
	CHECK_EQ_I(tp_cfg_check(&ag, &c, 132, why, sizeof(why)), TP_REJECTED);
	c.num_sm = 33;
	CHECK_EQ_I(tp_cfg_check(&dg, &c, 132, why, sizeof(why)), TP_REJECTED);
	c.num_sm = 3; /* cga_size 2 */
	CHECK_EQ_I(tp_cfg_check(&dg, &c, 132, why, sizeof(why)), TP_REJECTED);
	CHECK(strstr(why, "cga_size") != NULL);
	c.num_sm = 24;
	CHECK_EQ_I(tp_cfg_check(&dg, &c, 20, why, sizeof(why)), TP_REJECTED); /* a 20-SM GPU */
	c.num_sm = 0;
	CHECK_EQ_I(tp_cfg_check(&dg, &c, 132, why, sizeof(why)), TP_REJECTED);

	tp_cfg_default(TP_RING_EXCHANGE, 4, &c);
	CHECK_EQ_I(tp_cfg_check(&ag, &c, 132, why, sizeof(why)), TP_VALID);
	CHECK_EQ_I(tp_cfg_check(&rs, &c, 132, why, sizeof(why)), TP_VALID);
	CHECK_EQ_I(tp_cfg_check(&dg, &c, 132, why, sizeof(why)), TP_REJECTED); /* RS-dgrad mode */
	CHECK(strstr(why, "RS-dgrad") != NULL);
	CHECK_EQ_I(tp_cfg_check(&wg, &c, 132, why, sizeof(why)), TP_REJECTED);
	c.aggregate = 1;
	CHECK_EQ_I(tp_cfg_check(&ag, &c, 132, why, sizeof(why)), TP_VALID);
	CHECK_EQ_I(tp_cfg_check(&ag2, &c, 132, why, sizeof(why)), TP_CANNOT_WIN);

	tp_cfg_default(TP_NONE, 4, &c);
	CHECK_EQ_I(tp_cfg_check(&dg, &c, 132, why, sizeof(why)), TP_VALID);
	struct tp_shape one;
	tp_shape_make(m, TP_FC1, TP_FPROP, 1, 8192, TP_BF16, &one, NULL);
	tp_cfg_default(TP_RING_EXCHANGE, 1, &c);
	CHECK_EQ_I(tp_cfg_check(&one, &c, 132, why, sizeof(why)), TP_REJECTED);
}

static void test_config_ids_follow_upstream(void)
{
	const struct tp_model *m = tp_model_builtin_find("llama-3-8b");
	struct tp_shape s;
	struct tp_cfg c;
	char id[96];

	tp_shape_make(m, TP_FC1, TP_FPROP, 2, 8192, TP_BF16, &s, NULL);
	tp_cfg_default(TP_RING_EXCHANGE, 2, &c);
	tp_cfg_id(&s, &c, id, sizeof(id));
	CHECK_STR(id, "tp2_fc1_fprop_ring_agg0");
	tp_shape_make(m, TP_FC1, TP_DGRAD, 2, 8192, TP_BF16, &s, NULL);
	tp_cfg_default(TP_BULK, 2, &c);
	c.num_sm = 2;
	tp_cfg_id(&s, &c, id, sizeof(id));
	CHECK_STR(id, "tp2_fc1_dgrad_bulk_sm2");
}

/* ---- the search --------------------------------------------------------------- */
static const struct tp_result *group_best(const struct tp_tune *t, int tp, enum tp_op op, enum tp_phase ph)
{
	int b = t->best[tp_log2i(tp)][op][ph];
	return b >= 0 ? &t->r[b] : NULL;
}

static void test_search_finds_the_fakes_optimum_with_fewer_measurements(void)
{
	struct tp_tune_opts o;
	struct tp_tune t;
	struct aorta_error e = { 0 };

	fake_reset();
	fake_bw_gbps = 30; /* slow enough that the SM trade-off has an interior optimum */
	opts_llama3(&o, 1u << TP_FC1, 2);
	o.sm_points = 12;
	CHECK_EQ_I(tp_tune_run(&fake, &o, &t, &e), AORTA_OK);

	/* the independent sweep of the same function */
	struct tp_shape sh;
	tp_shape_make(&o.model, TP_FC1, TP_DGRAD, 2, o.tokens, o.dtype, &sh, NULL);
	struct tp_cfg c;
	tp_cfg_default(TP_BULK, 2, &c);
	int best_sm = -1, domain = 0;
	double best = INFINITY;
	for (int s = o.min_sm; s <= o.max_sm; s++) {
		if (s % 2)
			continue;
		domain++;
		c.num_sm = s;
		double v = fake_e2e(&sh, &c);
		if (v < best)
			best = v, best_sm = s;
	}
	int nbulk = 0, odd_power = 0;
	for (size_t i = 0; i < t.n; i++) {
		const struct tp_result *r = &t.r[i];
		if (r->measured && r->sh.tp == 2 && r->sh.phase == TP_DGRAD && r->cfg.method == TP_BULK &&
		    r->cfg.set_sm_margin) {
			nbulk++;
			int v = r->cfg.num_sm;
			if (v & (v - 1))
				odd_power = 1;
		}
	}
	CHECK(best_sm > 2 && best_sm < 32);   /* interior: the test means something */
	CHECK(nbulk < domain);                 /* fewer than exhaustive */
	CHECK(odd_power);                      /* not only powers of two */
	const struct tp_result *b = group_best(&t, 2, TP_FC1, TP_DGRAD);
	CHECK(b != NULL);
	if (b && b->cfg.method == TP_BULK && b->cfg.set_sm_margin)
		CHECK_EQ_I(b->cfg.num_sm, best_sm);
	if (b)
		CHECK(b->m.e2e_ms <= best + 1e-12);
	CHECK(t.nmeas < t.nexhaustive);
	tp_tune_release(&t);

	/* the default budget of 7 lands within 2% of the optimum */
	fake_reset();
	fake_bw_gbps = 30;
	opts_llama3(&o, 1u << TP_FC1, 2);
	CHECK_EQ_I(tp_tune_run(&fake, &o, &t, &e), AORTA_OK);
	nbulk = 0;
	for (size_t i = 0; i < t.n; i++)
		nbulk += t.r[i].measured && t.r[i].sh.tp == 2 && t.r[i].sh.phase == TP_DGRAD &&
			 t.r[i].cfg.method == TP_BULK && t.r[i].cfg.set_sm_margin;
	CHECK(nbulk <= 7);
	b = group_best(&t, 2, TP_FC1, TP_DGRAD);
	CHECK(b && b->m.e2e_ms <= best * 1.02);
	tp_tune_release(&t);
}

/* Every measured configuration is checked (an unchecked one is not
 * ranked, so checking only the first of a method starved the SM search:
 * on H200 it "chose" bulk num_sm 2 at 2.2x the serial time), and when
 * few SMs lose, the search climbs to the largest ones. */
static void test_every_configuration_is_checked_and_the_sm_search_climbs(void)
{
	struct tp_tune_opts o;
	struct tp_tune t;
	struct aorta_error e = { 0 };

	fake_reset();
	fake_bw_gbps = 2; /* communication-bound: more SMs always help */
	opts_llama3(&o, 1u << TP_QKV, 2);
	CHECK_EQ_I(tp_tune_run(&fake, &o, &t, &e), AORTA_OK);
	CHECK_EQ_I((int)fake_unchecked, 0);
	int measured = 0, unchecked = 0, top = 0;
	for (size_t i = 0; i < t.n; i++) {
		const struct tp_result *r = &t.r[i];
		if (!r->measured)
			continue;
		measured++;
		unchecked += !r->m.check_ok;
		if (r->sh.tp == 2 && r->sh.phase == TP_DGRAD && r->cfg.method == TP_BULK && r->cfg.num_sm > top)
			top = r->cfg.num_sm;
	}
	CHECK(measured > 5);
	CHECK_EQ_I(unchecked, 0);
	CHECK_EQ_I(top, o.max_sm); /* the search reached the top of the domain */

	/* the independent sweep: the best bulk point is the largest num_sm */
	struct tp_shape sh;
	struct tp_cfg c;
	tp_shape_make(&o.model, TP_QKV, TP_DGRAD, 2, o.tokens, o.dtype, &sh, NULL);
	tp_cfg_default(TP_BULK, 2, &c);
	int best_sm = -1;
	double best = INFINITY;
	for (int v = 2; v <= o.max_sm; v += 2) {
		c.num_sm = v;
		if (fake_e2e(&sh, &c) < best)
			best = fake_e2e(&sh, &c), best_sm = v;
	}
	CHECK_EQ_I(best_sm, o.max_sm);
	const struct tp_result *b = group_best(&t, 2, TP_QKV, TP_DGRAD);
	CHECK(b != NULL);
	if (b && b->cfg.method == TP_BULK)
		CHECK_EQ_I(b->cfg.num_sm, best_sm);
	if (b)
		CHECK(b->m.e2e_ms <= best + 1e-12);
	tp_tune_release(&t);

	/* --no-check: the backend is never asked to check; ranking by time
	 * alone finds the same best point */
	fake_reset();
	fake_bw_gbps = 2;
	opts_llama3(&o, 1u << TP_QKV, 2);
	o.check = 0;
	CHECK_EQ_I(tp_tune_run(&fake, &o, &t, &e), AORTA_OK);
	CHECK_EQ_I((int)fake_unchecked, (int)fake_calls);
	b = group_best(&t, 2, TP_QKV, TP_DGRAD);
	CHECK(b != NULL);
	if (b)
		CHECK(b->m.e2e_ms <= best + 1e-12);
	tp_tune_release(&t);
}

static void test_ranking_is_by_time_not_overlap_ratio(void)
{
	struct tp_tune_opts o;
	struct tp_tune t;
	struct aorta_error e = { 0 };

	fake_reset();
	fake_bw_gbps = 30;
	fake_ratio_by_sm = 1; /* the ratio grows with num_sm; the time does not */
	opts_llama3(&o, 1u << TP_FC1, 2);
	CHECK_EQ_I(tp_tune_run(&fake, &o, &t, &e), AORTA_OK);
	for (int ph = 0; ph < TP__NPHASES; ph++) {
		const struct tp_result *b = group_best(&t, 2, TP_FC1, (enum tp_phase)ph);
		CHECK(b != NULL);
		if (!b)
			continue;
		CHECK_EQ_I(b->rank, 1);
		double max_ratio = -1;
		for (size_t i = 0; i < t.n; i++) {
			const struct tp_result *r = &t.r[i];
			if (!r->measured || r->sh.tp != 2 || r->sh.phase != (enum tp_phase)ph)
				continue;
			CHECK(r->m.e2e_ms >= b->m.e2e_ms);
			CHECK(r->rank >= 1);
			if (!isnan(r->m.overlap_ratio) && r->m.overlap_ratio > max_ratio)
				max_ratio = r->m.overlap_ratio;
		}
		if (b->cfg.method == TP_BULK)
			CHECK(b->m.overlap_ratio < max_ratio); /* a higher ratio lost on time */
	}
	tp_tune_release(&t);
}

static void test_nothing_to_gain_skips_overlap_and_empty_sm_range_is_explained(void)
{
	struct tp_tune_opts o;
	struct tp_tune t;
	struct aorta_error e = { 0 };

	fake_reset();
	fake_bw_gbps = 1e6; /* only the 45 us latency floor left: < 5% of fc1's GEMM */
	opts_llama3(&o, 1u << TP_FC1, 2);
	o.min_gain = 0.05;
	CHECK_EQ_I(tp_tune_run(&fake, &o, &t, &e), AORTA_OK);
	int skipped = 0, overlapped = 0;
	for (size_t i = 0; i < t.n; i++) {
		const struct tp_result *r = &t.r[i];
		if (r->sh.tp != 2)
			continue;
		if (!r->measured && r->verdict == TP_CANNOT_WIN && strstr(r->why, "to gain"))
			skipped++;
		overlapped += r->measured && r->cfg.method != TP_NONE;
	}
	CHECK_EQ_I(skipped, 3);
	CHECK_EQ_I(overlapped, 0);
	tp_tune_release(&t);

	/* an odd-only SM range with cga_size 2: nothing measured, the rule recorded */
	fake_reset();
	opts_llama3(&o, 1u << TP_FC1, 2);
	o.min_sm = o.max_sm = 3;
	CHECK_EQ_I(tp_tune_run(&fake, &o, &t, &e), AORTA_OK);
	int why = 0, bulk = 0;
	for (size_t i = 0; i < t.n; i++) {
		const struct tp_result *r = &t.r[i];
		bulk += r->measured && r->cfg.method == TP_BULK;
		why += !r->measured && r->verdict == TP_REJECTED && strstr(r->why, "cga_size") != NULL;
	}
	CHECK_EQ_I(bulk, 0);
	CHECK(why >= 2); /* fc1 dgrad and wgrad */
	tp_tune_release(&t);
}

/* ---- TP scaling ---------------------------------------------------------------- */
static void put(struct tp_tune *t, int tp, enum tp_op op, enum tp_phase ph, double ms)
{
	GROW(t->r, t->cap, t->n + 1);
	struct tp_result *r = &t->r[t->n];
	memset(r, 0, sizeof(*r));
	r->measured = 1;
	r->m.check_ok = 1;
	r->m.e2e_ms = ms;
	r->sh.tp = tp, r->sh.op = op, r->sh.phase = ph;
	t->best[tp_log2i(tp)][op][ph] = (int)t->n++;
}

static void scaling_case(const double *fprop, const double *dgrad, int *optimal, struct tp_tune *t)
{
	struct tp_tune_opts o;
	tp_tune_opts_default(&o);
	o.ops = 1u << TP_FC2;
	memset(t, 0, sizeof(*t));
	memset(t->best, 0xff, sizeof(t->best));
	for (int li = 0; li < 4; li++) {
		put(t, 1 << li, TP_FC2, TP_FPROP, fprop[li]);
		put(t, 1 << li, TP_FC2, TP_DGRAD, dgrad[li]);
	}
	tp_tune_scaling(t, &o);
	*optimal = t->optimal_tp;
}

static void test_tp_scaling_verdict(void)
{
	struct tp_tune t;
	int opt;
	/* sums: 1.0, 0.55 (ratio 1.1), 0.296875 (1.1875), 0.1875 (1.5) */
	const double f1[4] = { 0.5, 0.25, 0.25, 0.125 }, d1[4] = { 0.5, 0.3, 0.046875, 0.0625 };
	scaling_case(f1, d1, &opt, &t);
	CHECK_EQ_I(opt, 4);
	const struct tp_scaling *s = &t.scaling[TP_FC2];
	CHECK_NEAR(s->ratio[1], 1.1, 1e-12);
	CHECK_NEAR(s->ratio[2], 1.1875, 1e-12);
	CHECK_NEAR(s->ratio[3], 1.5, 1e-12);
	CHECK(s->efficient[1] && s->efficient[2] && !s->efficient[3]);
	CHECK(strstr(s->reason, "TP=8") && strstr(s->reason, "NOT efficient"));
	tp_tune_release(&t);
	/* TP 2 fails (1.5): TP 4 does not rescue it (upstream stops at the first failure) */
	const double f2[4] = { 0.5, 0.5, 0.125, 0.0625 }, d2[4] = { 0.5, 0.25, 0.125, 0.0625 };
	scaling_case(f2, d2, &opt, &t);
	CHECK_EQ_I(opt, 1);
	CHECK(!t.scaling[TP_FC2].efficient[1] && t.scaling[TP_FC2].efficient[2]);
	tp_tune_release(&t);
}

static void test_early_stop_when_tp_scaling_fails(void)
{
	struct tp_tune_opts o;
	struct tp_tune t;
	struct aorta_error e = { 0 };

	fake_reset();
	fake_bw_gbps = 5; /* communication swamps TP 2 */
	opts_llama3(&o, 1u << TP_FC1, 4);
	CHECK_EQ_I(tp_tune_run(&fake, &o, &t, &e), AORTA_OK);
	CHECK(t.scaling[TP_FC1].tested[1] && !t.scaling[TP_FC1].efficient[1]);
	CHECK_EQ_I(t.scaling[TP_FC1].optimal_tp, 1);
	int at4 = 0, skipped4 = 0;
	for (size_t i = 0; i < t.n; i++) {
		at4 += t.r[i].measured && t.r[i].sh.tp == 4;
		skipped4 += !t.r[i].measured && t.r[i].sh.tp == 4 && t.r[i].skip_scaling;
	}
	CHECK_EQ_I(at4, 0);
	CHECK_EQ_I(skipped4, 3); /* fc1 fprop, dgrad, wgrad */
	CHECK_EQ_I(fake_calls, t.nmeas);
	tp_tune_release(&t);

	/* a backend failure stops the run with its error */
	fake_reset();
	fake_fail_at = 5;
	opts_llama3(&o, 1u << TP_FC1, 2);
	memset(&e, 0, sizeof(e));
	CHECK_EQ_I(tp_tune_run(&fake, &o, &t, &e), AORTA_EGPU);
	CHECK(strstr(e.msg, "fake failure") != NULL);
	tp_tune_release(&t);
}

/* ---- outputs ---------------------------------------------------------------- */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	size_t got = fread(b, 1, (size_t)n, f);
	b[got] = 0;
	fclose(f);
	return b;
}

static yajl_val jget(yajl_val v, const char *a, const char *b, const char *c)
{
	const char *p[4] = { a, b, c, NULL };
	return yajl_tree_get(v, p, yajl_t_any);
}

static const char *jstr(yajl_val v)
{
	const char *s = v && YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
	return s ? s : "";
}

static int te_layer(const char *s)
{
	static const char *names[] = { "qkv_fprop", "qkv_dgrad", "qkv_wgrad", "proj_fprop", "proj_dgrad",
				       "fc1_fprop", "fc1_dgrad", "fc1_wgrad", "fc2_fprop", "fc2_dgrad", NULL };
	for (int i = 0; names[i]; i++)
		if (!strcmp(s, names[i]))
			return 1;
	return 0;
}

static int te_key(const char *s)
{
	static const char *keys[] = { "method", "num_sm", "cga_size", "set_sm_margin", "aggregate", "use_ce",
				      "num_splits", NULL };
	for (int i = 0; keys[i]; i++)
		if (!strcmp(s, keys[i]))
			return 1;
	return 0;
}

/* Parses a TE overlap YAML with libyaml: a mapping of layer -> mapping of
 * key -> scalar.  Returns the layer count, -1 if the structure is wrong;
 * *fc1_dgrad_sm receives fc1_dgrad's num_sm (or -1). */
static int parse_te_yaml(const char *path, int *fc1_dgrad_sm, int *bad_key)
{
	FILE *f = fopen(path, "rb");
	yaml_parser_t p;
	yaml_event_t ev;
	int depth = 0, layers = 0, ok = 1, expect_key = 1;
	char layer[64] = "", key[64] = "";

	*fc1_dgrad_sm = -1;
	*bad_key = 0;
	if (!f)
		return -1;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_file(&p, f);
	for (;;) {
		if (!yaml_parser_parse(&p, &ev)) {
			ok = 0;
			break;
		}
		yaml_event_type_t ty = ev.type;
		if (ty == YAML_MAPPING_START_EVENT) {
			depth++;
			expect_key = 1;
			if (depth == 2)
				layers++;
			if (depth > 2)
				ok = 0;
		} else if (ty == YAML_MAPPING_END_EVENT) {
			depth--;
			expect_key = 1;
		} else if (ty == YAML_SCALAR_EVENT) {
			const char *v = (const char *)ev.data.scalar.value;
			if (depth == 1) {
				snprintf(layer, sizeof(layer), "%s", v);
				if (!te_layer(v))
					ok = 0;
			} else if (depth == 2 && expect_key) {
				snprintf(key, sizeof(key), "%s", v);
				if (!te_key(v))
					*bad_key = 1;
				expect_key = 0;
			} else if (depth == 2) {
				if (!strcmp(key, "method") && strcmp(v, "bulk") && strcmp(v, "ring_exchange") &&
				    strcmp(v, "pipeline"))
					ok = 0;
				if ((!strcmp(key, "set_sm_margin") || !strcmp(key, "aggregate") || !strcmp(key, "use_ce")) &&
				    strcmp(v, "true") && strcmp(v, "false"))
					ok = 0;
				if (!strcmp(layer, "fc1_dgrad") && !strcmp(key, "num_sm"))
					*fc1_dgrad_sm = atoi(v);
				expect_key = 1;
			} else {
				ok = 0;
			}
		}
		yaml_event_delete(&ev);
		if (ty == YAML_STREAM_END_EVENT)
			break;
	}
	yaml_parser_delete(&p);
	fclose(f);
	return ok ? layers : -1;
}

static void test_outputs_parse_back(void)
{
	struct tp_tune_opts o;
	struct tp_tune t;
	struct aorta_error e = { 0 };
	const char *d = mktmp();
	char path[800], traces[600];

	CHECK(d != NULL);
	if (!d)
		return;
	fake_reset();
	fake_write_trace = 1;
	opts_llama3(&o, (1u << TP__NOPS) - 1, 4);
	snprintf(traces, sizeof(traces), "%s/traces", d);
	o.trace_dir = traces;
	CHECK_EQ_I(tp_tune_run(&fake, &o, &t, &e), AORTA_OK);
	CHECK_EQ_I(tp_report_write(&t, &o, d, &e), AORTA_OK);

	/* the overlap ratio came from the fake's traces through the reader */
	int ratios = 0;
	for (size_t i = 0; i < t.n; i++) {
		const struct tp_result *r = &t.r[i];
		if (!r->measured || r->cfg.method == TP_NONE || r->sh.tp == 1)
			continue;
		double g, cm, x;
		fake_parts(&r->sh, &r->cfg, &g, &cm, &x);
		CHECK_NEAR(r->m.overlap_ratio, fmin(g, cm) / cm, 1e-4);
		CHECK_NEAR(r->overlap_inter_ns / 1e6 / (o.iters * r->sh.tp), fmin(g, cm), 1e-5);
		ratios++;
	}
	CHECK(ratios > 10);

	snprintf(path, sizeof(path), "%s/tuning_report.json", d);
	char *js = slurp(path);
	CHECK(js != NULL);
	char err[256];
	yajl_val root = js ? yajl_tree_parse(js, err, sizeof(err)) : NULL;
	CHECK(root != NULL);
	if (root) {
		yajl_val v = jget(root, "schema", NULL, NULL);
		CHECK_STR(jstr(v), "aorta.tune_tp/1");
		v = jget(root, "analyses", NULL, NULL);
		CHECK(v && YAJL_IS_ARRAY(v) && (long long)YAJL_GET_ARRAY(v)->len == t.nmeas);
		v = jget(root, "recommendations", NULL, NULL);
		CHECK(v && YAJL_IS_ARRAY(v) && YAJL_GET_ARRAY(v)->len > 3);
		v = jget(root, "tp_scaling", "optimal_tp_size", NULL);
		CHECK(v && YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) == t.optimal_tp);
		v = jget(root, "tp_scaling", "tolerance", NULL);
		CHECK(v && YAJL_IS_NUMBER(v) && fabs(YAJL_GET_DOUBLE(v) - 0.2) < 1e-9);
		v = jget(root, "operator_summaries", "fc1", "2");
		CHECK(v && YAJL_IS_OBJECT(v));
		yajl_val bd = v ? jget(v, "best_dgrad", NULL, NULL) : NULL;
		const struct tp_result *b = group_best(&t, 2, TP_FC1, TP_DGRAD);
		CHECK(b && !strcmp(jstr(bd), b->id));
		v = jget(root, "measurements", "made", NULL);
		CHECK(v && YAJL_GET_INTEGER(v) == t.nmeas);
		v = jget(root, "tuner_config", "ffn_hidden_size", NULL);
		CHECK(v && YAJL_GET_INTEGER(v) == 14336);
		yajl_tree_free(root);
	}
	free(js);

	for (int tp = 2; tp <= 4; tp *= 2) {
		int sm, bad;
		snprintf(path, sizeof(path), "%s/optimal_tp_comm_overlap_cfg_tp%d.yaml", d, tp);
		CHECK_EQ_I(parse_te_yaml(path, &sm, &bad), 10);
		CHECK_EQ_I(bad, 0);
		const struct tp_result *b = group_best(&t, tp, TP_FC1, TP_DGRAD);
		if (b && b->cfg.method == TP_BULK)
			CHECK_EQ_I(sm, b->cfg.num_sm);
	}
	int sm, bad;
	snprintf(path, sizeof(path), "%s/optimal_tp_comm_overlap_cfg.yaml", d);
	CHECK_EQ_I(parse_te_yaml(path, &sm, &bad), 10);
	snprintf(path, sizeof(path), "%s/summary.txt", d);
	char *sum = slurp(path);
	CHECK(sum && strstr(sum, "TP SCALING EFFICIENCY") && strstr(sum, "fc1_dgrad"));
	free(sum);

	/* a write that fails leaves no half file */
	char d2[640];
	snprintf(d2, sizeof(d2), "%s/failing", d);
	out_fail_after_bytes = 200;
	CHECK(tp_report_write(&t, &o, d2, &e) != AORTA_OK);
	out_fail_after_bytes = -1;
	snprintf(path, sizeof(path), "%s/tuning_report.json", d2);
	CHECK(access(path, F_OK) != 0);
	tp_tune_release(&t);
	rm_rf(d);
}

/* ---- overlap from a trace ---------------------------------------------------- */
static void test_overlap_ratio_of_a_hand_written_trace(void)
{
	double r;
	int64_t inter, comm;
	struct aorta_error e = { 0 };

	/* rank 0: GEMM [100,450) u [500,700) (two streams); comm nccl [300,600),
	 * PtoP [650,800), tp_comm_ring_push [850,900) = 500 us; reduce_bf16_cuda
	 * in neither; intersection [300,450) + [500,600) + [650,700) = 300 us */
	CHECK_EQ_I(tp_trace_overlap(FIX "/overlap/rank0.json", &r, &inter, &comm, &e), AORTA_OK);
	CHECK_EQ_I(inter, 300000);
	CHECK_EQ_I(comm, 500000);
	CHECK_NEAR(r, 0.6, 1e-12);
	/* both ranks pooled: rank 1 adds 200 of 400 us -> 500 / 900 */
	CHECK_EQ_I(tp_trace_overlap(FIX "/overlap", &r, &inter, &comm, &e), AORTA_OK);
	CHECK_EQ_I(inter, 500000);
	CHECK_EQ_I(comm, 900000);
	CHECK_NEAR(r, 500.0 / 900.0, 1e-12);
	/* one process, two devices, the same stream id: a GEMM on device 0 does
	 * not hide a collective on device 1; device 1's GEMM [1200,1300) hides
	 * half of its SM ring copy [1250,1350); the wait kernel is neither */
	CHECK_EQ_I(tp_trace_overlap(FIX "/two-devices.trace.json", &r, &inter, &comm, &e), AORTA_OK);
	CHECK_EQ_I(inter, 50000);
	CHECK_EQ_I(comm, 200000);
	CHECK_NEAR(r, 0.25, 1e-12);
	CHECK_EQ_I(tp_trace_overlap(FIX "/llama3-8b.config.json", &r, NULL, NULL, &e), AORTA_EINPUT);
	CHECK(strstr(e.msg, "traceEvents") != NULL);
	CHECK_EQ_I(tp_trace_overlap(FIX "/nope.json", &r, NULL, NULL, &e), AORTA_EINPUT);
	CHECK(isnan(r));
	CHECK_NEAR(tp_hidden_fraction(1.0, 0.5, 1.1), 0.8, 1e-12);
	CHECK(isnan(tp_hidden_fraction(1.0, 0.0, 1.0)));
}

int main(void)
{
	TEST(test_builtin_table_has_published_dims);
	TEST(test_config_json_llama3_8b);
	TEST(test_config_json_gqa_explicit_head_dim);
	TEST(test_config_json_gpt2_style_not_gated);
	TEST(test_config_json_bad_input_names_the_field);
	TEST(test_hf_cache_lookup_and_unknown_model);
	TEST(test_shapes_llama3_8b_tp2_tp4);
	TEST(test_plan_sizes_against_gpus_and_divisibility);
	TEST(test_pruning_follows_te_rules);
	TEST(test_config_ids_follow_upstream);
	TEST(test_search_finds_the_fakes_optimum_with_fewer_measurements);
	TEST(test_every_configuration_is_checked_and_the_sm_search_climbs);
	TEST(test_ranking_is_by_time_not_overlap_ratio);
	TEST(test_nothing_to_gain_skips_overlap_and_empty_sm_range_is_explained);
	TEST(test_tp_scaling_verdict);
	TEST(test_early_stop_when_tp_scaling_fails);
	TEST(test_outputs_parse_back);
	TEST(test_overlap_ratio_of_a_hand_written_trace);
	return test_report();
}

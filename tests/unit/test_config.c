/*
 * test_config.c - the generic YAML/JSON config (base/config.c) and the train
 * command's typed config (train/train_config.c).
 *
 * Fixtures are small files under tests/data/config/ (run from the repository
 * root); config/default.yaml is the shipped default.  Each test proves one
 * promise of config.h or train_config.h and fails if it is broken.
 */
#include "base/config.h"
#include "train/train_config.h"
#include "testing.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define FIX "tests/data/config/"

static int contains(const char *hay, const char *needle)
{
	return hay && strstr(hay, needle) != NULL;
}

static struct config *parse_text(const char *text, struct aorta_error *e)
{
	struct config *c = NULL;

	config_parse("inline.yaml", text, (size_t)-1, &c, e);
	return c;
}

/* ---- train config: defaults ------------------------------------------- */

static void test_default_yaml_equals_documented_defaults(void)
{
	struct train_config t;
	struct aorta_error e = { 0 };

	if (train_config_load("config/default.yaml", NULL, 0, &t, &e) != AORTA_OK) {
		aorta_error_print(&e);
		CHECK(0);
		return;
	}
	CHECK_EQ_I(t.nwarnings, 0);
	CHECK_EQ_I(t.log_level, TC_LOG_INFO);
	CHECK_EQ_I(t.training.epochs, 1);
	CHECK_EQ_I(t.training.batch_size, 8);
	CHECK_EQ_I(t.training.gradient_accumulation, 1);
	CHECK_EQ_I(t.training.mixed_precision, MP_BF16);
	CHECK_NEAR(t.training.grad_clip_norm, 1.0, 0);
	CHECK_EQ_I(t.training.log_interval, 5);
	CHECK_EQ_I(t.training.max_steps, 200);
	CHECK_STR(t.training.output_dir, "artifacts");
	CHECK_EQ_I(t.training.inject_allreduce_copies, 0);
	CHECK_EQ_I(t.training.allreduce_stress_level, 1);
	CHECK_STR(t.optimizer.name, "adamw");
	CHECK_NEAR(t.optimizer.lr, 3e-4, 1e-18);
	CHECK_NEAR(t.optimizer.weight_decay, 0.01, 1e-18);
	CHECK_NEAR(t.optimizer.betas[0], 0.9, 1e-15);
	CHECK_NEAR(t.optimizer.betas[1], 0.98, 1e-15);
	CHECK_NEAR(t.optimizer.eps, 1e-8, 1e-22);
	CHECK_EQ_I(t.scheduler.warmup_steps, 100);
	CHECK_EQ_I(t.scheduler.total_steps, 2000);
	CHECK_EQ_I(t.dataset.num_samples, 10000);
	CHECK_EQ_I(t.dataset.sequence_length, 64);
	CHECK_EQ_I(t.dataset.dense_dim, 128);
	CHECK_EQ_I(t.dataset.sparse_features, 32);
	CHECK_EQ_I(t.dataset.vocab_size, 60000);
	CHECK_EQ_I(t.dataset.num_dense_features, 16);
	CHECK_EQ_I(t.dataset.seed, 42);
	CHECK_EQ_I(t.model.vocab_size, 60000);
	CHECK_EQ_I(t.model.embedding_dim, 192);
	CHECK_EQ_I(t.model.num_dense_features, 16);
	CHECK_EQ_I(t.model.dense_dim, 128);
	CHECK_EQ_I(t.model.model_dim, 768);
	CHECK_EQ_I(t.model.num_heads, 12);
	CHECK_EQ_I(t.model.num_layers, 8);
	CHECK_NEAR(t.model.dropout, 0.1, 1e-15);
	CHECK_EQ_I(t.model.mlp_hidden_dim, 2048);
	CHECK_EQ_I(t.fsdp.sharding_strategy, SHARD_FULL);
	CHECK_EQ_I(t.fsdp.backward_prefetch, PREFETCH_BACKWARD_PRE);
	CHECK(t.fsdp.use_orig_params && t.fsdp.limit_all_gathers && t.fsdp.forward_prefetch &&
	      t.fsdp.sync_module_states);
	CHECK_STR(t.fsdp.param_init_device, "cpu");
	CHECK_EQ_I(t.distributed.mode, DIST_FSDP);
	CHECK_EQ_I(t.distributed.gradient_as_bucket_view, 1);
	CHECK_EQ_I(t.distributed.static_graph, 0);
	CHECK_NEAR(t.distributed.bucket_cap_mb, 25, 0);
	CHECK_EQ_I(t.distributed.find_unused_parameters, 0);
	CHECK_EQ_I(t.compile.enabled, 0);
	CHECK_STR(t.compile.backend, "inductor");
	CHECK_STR(t.compile.mode, "max-autotune");
	CHECK_EQ_I(t.compile.noptions, 0);
	CHECK_EQ_I(t.dataloader.num_workers, 4);
	CHECK_EQ_I(t.dataloader.pin_memory, 1);
	CHECK_EQ_I(t.profiling.enabled, 0);
	CHECK_EQ_I(t.profiling.wait, 1);
	CHECK_EQ_I(t.profiling.warmup, 1);
	CHECK_EQ_I(t.profiling.active, 2);
	CHECK_EQ_I(t.profiling.repeat, 1);
	CHECK(t.profiling.record_shapes && t.profiling.profile_memory);
	CHECK(!t.profiling.with_stack && !t.profiling.with_flops);
	CHECK_EQ_I(t.profiling.tensorboard, 1);
	CHECK_EQ_I(t.profiling.chrome_trace, 0);
	CHECK_STR(t.profiling.trace_filename, "trace.json");
	CHECK_EQ_I(t.streams.num_streams, 0);
	CHECK_EQ_I(t.streams.high_priority_mask, 0);
	/* UPSTREAM.md section 6: the default model has about 58.9 M parameters */
	CHECK_EQ_I(train_config_param_count(&t), 58932225);
	train_config_release(&t);
}

static void test_missing_keys_take_upstream_code_defaults(void)
{
	struct train_config t;

	train_config_defaults(&t);
	CHECK_EQ_I(t.training.log_interval, 10);
	CHECK_EQ_I(t.training.max_steps, -1);
	CHECK_EQ_I(t.scheduler.warmup_steps, 200);
	CHECK_EQ_I(t.profiling.enabled, 1);
	CHECK_EQ_I(t.profiling.tensorboard, 0);
	CHECK_EQ_I(t.profiling.chrome_trace, 1);
	CHECK_EQ_I(t.model.model_dim, 768);
	CHECK_NEAR(t.optimizer.betas[1], 0.98, 1e-15);
	struct aorta_error e = { 0 };
	CHECK_EQ_I(train_config_check(&t, &e), AORTA_OK);
	/* max_steps null: ceil(10000 / W) / 8 batches per epoch */
	CHECK_EQ_I(train_config_total_steps(&t, 1), 1250);
	CHECK_EQ_I(train_config_total_steps(&t, 3), 3334 / 8);
	t.training.gradient_accumulation = 4;
	CHECK_EQ_I(train_config_total_steps(&t, 1), 312);
	train_config_release(&t);
}

/* ---- overrides ---------------------------------------------------------- */

static void test_override_coerces_like_upstream(void)
{
	struct config *c = config_new();
	struct aorta_error e = { 0 };
	const struct config_node *n;
	long long iv = 0;
	double dv = 0;
	int bv = -1;
	const char *sv = NULL;

	CHECK_EQ_I(config_override(c, "a.b.c=TRUE", &e), AORTA_OK);
	CHECK_EQ_I(config_override(c, "a.b.d=False", &e), AORTA_OK);
	CHECK_EQ_I(config_override(c, "x.int= 42 ", &e), AORTA_OK);
	CHECK_EQ_I(config_override(c, "x.float=1e-4", &e), AORTA_OK);
	CHECK_EQ_I(config_override(c, "x.list=[a, 2 ,0.5]", &e), AORTA_OK);
	CHECK_EQ_I(config_override(c, "x.empty=[]", &e), AORTA_OK);
	CHECK_EQ_I(config_override(c, "x.str=hello=world", &e), AORTA_OK);
	CHECK_EQ_I(config_override(c, "x.null=null", &e), AORTA_OK);
	CHECK_EQ_I(config_override(c, "x.under=1_000", &e), AORTA_OK);

	/* intermediate mappings were created */
	n = config_find(c, "a.b");
	CHECK(n && n->kind == CONFIG_MAP && n->n == 2);
	n = config_find(c, "a.b.c");
	CHECK(n && n->stype == CONFIG_SBOOL);
	CHECK_EQ_I(config_get_bool(c, "a.b.c", &bv, &e), AORTA_OK);
	CHECK_EQ_I(bv, 1);
	CHECK_EQ_I(config_get_bool(c, "a.b.d", &bv, &e), AORTA_OK);
	CHECK_EQ_I(bv, 0);
	n = config_find(c, "x.int");
	CHECK(n && n->stype == CONFIG_SINT);
	CHECK_EQ_I(config_get_int(c, "x.int", &iv, &e), AORTA_OK);
	CHECK_EQ_I(iv, 42);
	n = config_find(c, "x.float");
	CHECK(n && n->stype == CONFIG_SFLOAT);
	CHECK_EQ_I(config_get_double(c, "x.float", &dv, &e), AORTA_OK);
	CHECK_NEAR(dv, 1e-4, 1e-19);
	/* "[a,b]" is a list of strings, as upstream */
	n = config_find(c, "x.list");
	CHECK(n && n->kind == CONFIG_SEQ && n->n == 3);
	if (n && n->n == 3) {
		CHECK_STR(n->kids[0]->str, "a");
		CHECK_STR(n->kids[1]->str, "2");
		CHECK(n->kids[1]->stype == CONFIG_SSTR);
		CHECK_STR(n->kids[2]->str, "0.5");
	}
	n = config_find(c, "x.empty");
	CHECK(n && n->kind == CONFIG_SEQ && n->n == 0);
	/* everything else is the raw string (split on the first '=') */
	CHECK_EQ_I(config_get_string(c, "x.str", &sv, &e), AORTA_OK);
	CHECK_STR(sv, "hello=world");
	n = config_find(c, "x.null");
	CHECK(n && n->stype == CONFIG_SSTR);
	CHECK_EQ_I(config_get_int(c, "x.under", &iv, &e), AORTA_OK);
	CHECK_EQ_I(iv, 1000);

	/* typed getter errors name the override */
	CHECK_EQ_I(config_get_int(c, "x.str", &iv, &e), AORTA_EUSAGE);
	CHECK_STR(e.msg, "--override x.str=hello=world: expected an integer");
	CHECK_EQ_I(e.line, 0);

	/* malformed overrides */
	CHECK_EQ_I(config_override(c, "noequals", &e), AORTA_EUSAGE);
	CHECK(contains(e.msg, "expected key=value"));
	CHECK_EQ_I(config_override(c, "a..b=1", &e), AORTA_EUSAGE);
	CHECK(contains(e.msg, "empty key segment"));
	CHECK_EQ_I(config_override(c, "x.int.deeper=1", &e), AORTA_EUSAGE);
	CHECK(contains(e.msg, "'x.int' is not a mapping"));
	/* a later override replaces an earlier one */
	CHECK_EQ_I(config_override(c, "x.int=7", &e), AORTA_OK);
	CHECK_EQ_I(config_get_int(c, "x.int", &iv, &e), AORTA_OK);
	CHECK_EQ_I(iv, 7);
	config_free(c);
}

static void test_train_overrides_apply_and_report(void)
{
	struct train_config t;
	struct aorta_error e = { 0 };
	const char *ov[] = { "training.batch_size=16", "optimizer.betas=[0.8, 0.99]", "model.dropout=0",
			     "training.max_steps=50", "fsdp.sharding_strategy=HYBRID_SHARD",
			     "streams.high_priority=true" };

	CHECK_EQ_I(train_config_load("config/default.yaml", ov, 6, &t, &e), AORTA_OK);
	CHECK_EQ_I(t.training.batch_size, 16);
	CHECK_NEAR(t.optimizer.betas[0], 0.8, 1e-15);
	CHECK_NEAR(t.optimizer.betas[1], 0.99, 1e-15);
	CHECK_NEAR(t.model.dropout, 0, 0);
	CHECK_EQ_I(t.training.max_steps, 50);
	CHECK_EQ_I(t.fsdp.sharding_strategy, SHARD_HYBRID);
	CHECK_EQ_I(t.streams.high_priority_mask, (1u << ROLE_ALLREDUCE) | (1u << ROLE_REDUCESCATTER));
	train_config_release(&t);

	const char *bad[] = { "training.batch_size=abc" };
	CHECK_EQ_I(train_config_load("config/default.yaml", bad, 1, &t, &e), AORTA_EUSAGE);
	CHECK_STR(e.msg, "--override training.batch_size=abc: expected an integer");
	CHECK_EQ_I(t.nwarnings, 0);

	const char *typo[] = { "training.lr=0.1" };
	CHECK_EQ_I(train_config_load("config/default.yaml", typo, 1, &t, &e), AORTA_EUSAGE);
	CHECK(contains(e.msg, "--override training.lr=0.1: unknown key 'training.lr'"));
	CHECK(contains(e.msg, "did you mean 'optimizer.lr'"));

	const char *betas[] = { "optimizer.betas=[0.9,x]" };
	CHECK_EQ_I(train_config_load("config/default.yaml", betas, 1, &t, &e), AORTA_EUSAGE);
	CHECK(contains(e.msg, "optimizer.betas[1]: expected a number, got 'x'"));

	const char *three[] = { "optimizer.betas=[0.9,0.9,0.9]" };
	CHECK_EQ_I(train_config_load("config/default.yaml", three, 1, &t, &e), AORTA_EUSAGE);
	CHECK(contains(e.msg, "expected a list of 2 numbers, got 3 items"));

	/* a conflict is blamed on the key the user changed, naming the other */
	const char *vocab[] = { "dataset.vocab_size=100" };
	CHECK_EQ_I(train_config_load("config/default.yaml", vocab, 1, &t, &e), AORTA_EUSAGE);
	CHECK(contains(e.msg, "--override dataset.vocab_size=100: 100 disagrees with model.vocab_size 60000"));
	CHECK(contains(e.msg, "model.vocab_size at line 47"));
}

/* ---- errors with lines -------------------------------------------------- */

static void test_unknown_key_has_line_and_suggestion(void)
{
	struct train_config t;
	struct aorta_error e = { 0 };

	CHECK_EQ_I(train_config_load(FIX "unknown_key.yaml", NULL, 0, &t, &e), AORTA_EINPUT);
	CHECK_STR(e.path, FIX "unknown_key.yaml");
	CHECK_EQ_I(e.line, 5);
	CHECK_STR(e.msg, "training.batch_sze: unknown key 'training.batch_sze' "
			 "(did you mean 'training.batch_size'?)");

	/* a misspelt section is caught too */
	struct config *c = parse_text("modle:\n  num_heads: 4\n", &e);
	CHECK(c != NULL);
	static const struct config_schema s[] = { { "model.num_heads", CONFIG_T_INT, "12", NULL } };
	CHECK_EQ_I(config_validate(c, s, 1, &e), AORTA_EINPUT);
	CHECK_EQ_I(e.line, 1);
	CHECK(contains(e.msg, "did you mean 'model'"));
	config_free(c);
}

static void test_wrong_type_has_line(void)
{
	struct train_config t;
	struct aorta_error e = { 0 };

	CHECK_EQ_I(train_config_load(FIX "wrong_type.yaml", NULL, 0, &t, &e), AORTA_EINPUT);
	CHECK_EQ_I(e.line, 4);
	CHECK_STR(e.msg, "training.batch_size: expected an integer, got 'abc'");

	/* the generic getters say the same; a float is not an integer */
	struct config *c = parse_text("a:\n  b: 1.5\n  c: [1, 2]\n  d:\n", &e);
	long long v;
	double d;
	CHECK_EQ_I(config_get_int(c, "a.b", &v, &e), AORTA_EINPUT);
	CHECK_EQ_I(e.line, 2);
	CHECK_STR(e.msg, "a.b: expected an integer, got '1.5'");
	CHECK_EQ_I(config_get_double(c, "a.c", &d, &e), AORTA_EINPUT);
	CHECK_STR(e.msg, "a.c: expected a number, got a list");
	CHECK_EQ_I(config_get_double(c, "a.d", &d, &e), AORTA_EINPUT);
	CHECK_STR(e.msg, "a.d: expected a number, got null");
	/* absent keys leave the default alone */
	v = 77;
	CHECK_EQ_I(config_get_int(c, "a.zzz", &v, &e), AORTA_OK);
	CHECK_EQ_I(v, 77);
	config_free(c);
}

static void test_bad_yaml_reports_line_and_column(void)
{
	struct config *c = NULL;
	struct aorta_error e = { 0 };

	CHECK_EQ_I(config_load(FIX "bad_syntax.yaml", &c, &e), AORTA_EINPUT);
	CHECK(c == NULL);
	CHECK_EQ_I(e.line, 3);
	CHECK(contains(e.msg, "column 2: "));
	CHECK(contains(e.msg, "did not find expected key"));

	/* an unclosed flow list */
	c = parse_text("a: [1, 2\nb: 3\n", &e);
	CHECK(c == NULL);
	CHECK(e.line >= 2);
	CHECK(contains(e.msg, "column "));

	/* duplicate keys are an error, not "last one wins" */
	c = parse_text("a: 1\nb: 2\na: 3\n", &e);
	CHECK(c == NULL);
	CHECK_EQ_I(e.line, 3);
	CHECK(contains(e.msg, "duplicate key 'a' (first at line 1)"));

	/* a top level that is not a mapping */
	c = parse_text("- 1\n- 2\n", &e);
	CHECK(c == NULL);
	CHECK(contains(e.msg, "expected a mapping at the top level"));

	/* a missing file */
	CHECK_EQ_I(config_load(FIX "does_not_exist.yaml", &c, &e), AORTA_EINPUT);
}

static void test_txt_extension_is_rejected(void)
{
	struct config *c = NULL;
	struct aorta_error e = { 0 };
	struct train_config t;

	CHECK_EQ_I(config_load(FIX "not_yaml.txt", &c, &e), AORTA_EINPUT);
	CHECK(c == NULL);
	CHECK_STR(e.msg, "unsupported config file extension '.txt' (expected .yaml, .yml or .json)");
	CHECK_EQ_I(train_config_load(FIX "not_yaml.txt", NULL, 0, &t, &e), AORTA_EINPUT);
}

static void test_heads_not_dividing_model_dim_is_rejected(void)
{
	struct train_config t;
	struct aorta_error e = { 0 };

	CHECK_EQ_I(train_config_load(FIX "heads.yaml", NULL, 0, &t, &e), AORTA_EINPUT);
	CHECK_EQ_I(e.line, 3);
	CHECK_STR(e.msg, "model.num_heads: 12 does not divide model.model_dim 100 "
			 "(model.model_dim at line 2)");
	/* changed on the command line, the model_dim is the one named */
	const char *md[] = { "model.model_dim=100" };
	CHECK_EQ_I(train_config_load("config/default.yaml", md, 1, &t, &e), AORTA_EUSAGE);
	CHECK_STR(e.msg, "--override model.model_dim=100: 100 is not divisible by model.num_heads 12 "
			 "(model.num_heads at line 52)");

	/* the same check on a config built in code, and other value checks */
	train_config_defaults(&t);
	t.model.num_heads = 7;
	CHECK_EQ_I(train_config_check(&t, &e), AORTA_EINPUT);
	CHECK(contains(e.msg, "does not divide"));
	t.model.num_heads = 12;
	t.model.dropout = 1.0;
	CHECK_EQ_I(train_config_check(&t, &e), AORTA_EINPUT);
	CHECK_STR(e.msg, "model.dropout: must be in [0, 1), got 1");
	t.model.dropout = 0.1;
	t.model.dense_dim = 64;
	CHECK_EQ_I(train_config_check(&t, &e), AORTA_EINPUT);
	CHECK(contains(e.msg, "disagrees with"));
	t.model.dense_dim = 128;
	t.training.batch_size = 0;
	CHECK_EQ_I(train_config_check(&t, &e), AORTA_EINPUT);
	CHECK(contains(e.msg, "training.batch_size: must be between 1 and"));
	t.training.batch_size = 1 << 20;
	t.dataset.num_samples = 1LL << 30;
	CHECK_EQ_I(train_config_check(&t, &e), AORTA_EINPUT);
	CHECK(contains(e.msg, "exceeds"));
	train_config_release(&t);
}

static void test_shampoo_is_not_supported(void)
{
	struct train_config t;
	struct aorta_error e = { 0 };

	CHECK_EQ_I(train_config_load(FIX "shampoo.yaml", NULL, 0, &t, &e), AORTA_EINPUT);
	CHECK_EQ_I(e.line, 2);
	CHECK(contains(e.msg, "optimizer.name: optimizer 'shampoo' is not supported"));
}

/* ---- memory estimate ---------------------------------------------------- */

static void test_memory_estimate_of_defaults_is_sane(void)
{
	struct train_config t;

	train_config_defaults(&t);
	uint64_t one = train_config_memory_bytes(&t, 1);
	/* 16 B x 58.9 M params = 0.94 GB of state, + bf16 copy, activations at
	 * B=8, T=64, workspace: about 1.54 GB */
	printf("  memory estimate of the defaults: %.3f GB (1 rank), %.3f GB (8 ranks)\n",
	       one / 1e9, train_config_memory_bytes(&t, 8) / 1e9);
	CHECK(one > 1.40e9 && one < 1.70e9);
	/* sharding over 8 ranks must need less; DDP only the spare batch
	 * buffer of the next step's upload (4 B x B*T x (F*D + 2 + S)) */
	CHECK(train_config_memory_bytes(&t, 8) < one);
	t.distributed.mode = DIST_DDP;
	double spare = 4.0 * t.training.batch_size * t.dataset.sequence_length *
		       (t.model.num_dense_features * t.model.dense_dim + 2 + t.dataset.sparse_features);
	CHECK(train_config_memory_bytes(&t, 8) > one);
	CHECK_NEAR((double)(train_config_memory_bytes(&t, 8) - one), 1.1 * spare, 2.0);
	t.distributed.mode = DIST_FSDP;
	/* twice the batch, more activations */
	t.training.batch_size = 16;
	CHECK(train_config_memory_bytes(&t, 1) > one);
	train_config_release(&t);
}

/* ---- JSON, upstream extras, anchors ------------------------------------- */

static void test_json_config_is_accepted(void)
{
	struct train_config t;
	struct aorta_error e = { 0 };

	if (train_config_load(FIX "small.json", NULL, 0, &t, &e) != AORTA_OK) {
		aorta_error_print(&e);
		CHECK(0);
		return;
	}
	CHECK_EQ_I(t.training.batch_size, 4);
	CHECK_EQ_I(t.training.max_steps, -1);
	CHECK_EQ_I(t.training.mixed_precision, MP_FP32);
	CHECK_NEAR(t.optimizer.lr, 1e-3, 1e-18);
	CHECK_NEAR(t.optimizer.betas[0], 0.8, 1e-15);
	CHECK_EQ_I(t.model.num_layers, 2);
	CHECK_STR(t.profiling.trace_filename, "t\"q.json");
	CHECK_EQ_I(t.model.model_dim, 768); /* code default */

	/* the dump is JSON that reads back to the same values */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK_EQ_I(train_config_dump_json(f, &t), 0);
	fclose(f);
	struct config *c = NULL;
	CHECK_EQ_I(config_parse("dump.json", buf, len, &c, &e), AORTA_OK);
	if (c) {
		const char *s = NULL;
		long long v = 0;
		double d = 0;
		CHECK_EQ_I(config_get_string(c, "schema", &s, &e), AORTA_OK);
		CHECK_STR(s, "aorta.train_config/1");
		CHECK_EQ_I(config_get_int(c, "training.batch_size", &v, &e), AORTA_OK);
		CHECK_EQ_I(v, 4);
		CHECK(config_is_null(c, "training.max_steps"));
		CHECK_EQ_I(config_get_double(c, "optimizer.lr", &d, &e), AORTA_OK);
		CHECK(d == 1e-3);
		CHECK_EQ_I(config_get_string(c, "profiling.trace_filename", &s, &e), AORTA_OK);
		CHECK_STR(s, "t\"q.json");
		config_free(c);
	}
	free(buf);
	train_config_release(&t);
}

static void test_upstream_ignored_keys_warn_not_fail(void)
{
	struct train_config t;
	struct aorta_error e = { 0 };

	if (train_config_load(FIX "upstream_extras.yaml", NULL, 0, &t, &e) != AORTA_OK) {
		aorta_error_print(&e);
		CHECK(0);
		return;
	}
	int ignored = 0;
	for (int i = 0; i < t.nwarnings; i++)
		ignored += contains(t.warnings[i], "ignored (as upstream)");
	/* additional_compute_streams, lightweight_op_waves, distributed.backend,
	 * distributed.timeout, profiling.profile_freq, tracelens, torch_titan */
	CHECK_EQ_I(ignored, 7);
	CHECK(t.nwarnings >= 1 && contains(t.warnings[0], "line 4: training.additional_compute_streams"));
	/* the stress level was clamped, with a warning */
	CHECK_EQ_I(t.training.allreduce_stress_level, 10);
	CHECK_EQ_I(t.nwarnings, 8);
	/* quoted betas are numeric strings */
	CHECK_NEAR(t.optimizer.betas[1], 0.985, 1e-15);
	CHECK_EQ_I(t.distributed.mode, DIST_DDP);
	CHECK_NEAR(t.distributed.bucket_cap_mb, 128, 0);
	CHECK_EQ_I(t.compile.noptions, 1);
	CHECK_STR(t.compile.option_key[0], "max_autotune");
	CHECK_EQ_I(t.streams.num_streams, 4);
	CHECK_EQ_I(t.streams.high_priority_mask, (1u << ROLE_ALLREDUCE) | (1u << ROLE_REDUCESCATTER));
	CHECK_EQ_I(t.streams.assigned[ROLE_COMPUTE], 2);
	CHECK_EQ_I(t.streams.assigned[ROLE_ALLREDUCE], 1);
	CHECK_EQ_I(t.streams.assigned[ROLE_AUX], 1);
	train_config_release(&t);
}

static void test_anchors_aliases_and_merge_keys(void)
{
	struct config *c = NULL;
	struct aorta_error e = { 0 };
	long long v = 0;

	CHECK_EQ_I(config_load(FIX "anchors.yaml", &c, &e), AORTA_OK);
	if (!c)
		return;
	CHECK_EQ_I(config_get_int(c, "dataset.dense_dim", &v, &e), AORTA_OK);
	CHECK_EQ_I(v, 64);
	CHECK_EQ_I(config_get_int(c, "dataset.num_dense_features", &v, &e), AORTA_OK);
	CHECK_EQ_I(v, 8);
	CHECK_EQ_I(config_get_int(c, "model.vocab_size", &v, &e), AORTA_OK);
	CHECK_EQ_I(v, 1000);
	CHECK(config_find(c, "dataset.<<") == NULL);
	config_free(c);

	/* a plain alias shares the node */
	c = parse_text("a: &x [1, 2]\nb: *x\n", &e);
	CHECK(c && config_find(c, "a") == config_find(c, "b"));
	config_free(c);
	/* unknown and recursive aliases are errors with a line */
	c = parse_text("a: 1\nb: *nope\n", &e);
	CHECK(c == NULL);
	CHECK_EQ_I(e.line, 2);
	CHECK(contains(e.msg, "unknown or recursive alias '*nope'"));
	c = parse_text("a: &r\n  b: *r\n", &e);
	CHECK(c == NULL);
	/* a billion laughs is bounded */
	c = parse_text("a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
		       "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
		       "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n", &e);
	CHECK(c == NULL);
	CHECK(contains(e.msg, "too large after alias expansion"));
}

/* ---- generic pieces ------------------------------------------------------ */

static void test_plain_scalars_are_typed_like_yaml(void)
{
	struct aorta_error e = { 0 };
	struct config *c = parse_text("f: 1e-8\ng: .5\ns: '5'\nb: yes\nB: Off\nx: 0x10\no: 0o17\n"
				      "n: ~\nu: 1_000\nneg: -3\nstr: 12abc\ninf: -.inf\n", &e);
	long long v = 0;
	double d = 0;
	int b = -1;

	CHECK(c != NULL);
	if (!c)
		return;
	CHECK(config_find(c, "f")->stype == CONFIG_SFLOAT);
	CHECK_EQ_I(config_get_double(c, "f", &d, &e), AORTA_OK);
	CHECK_NEAR(d, 1e-8, 1e-22);
	CHECK_EQ_I(config_get_double(c, "g", &d, &e), AORTA_OK);
	CHECK_NEAR(d, 0.5, 0);
	CHECK(config_find(c, "s")->stype == CONFIG_SSTR);
	CHECK_EQ_I(config_get_int(c, "s", &v, &e), AORTA_OK); /* numeric string, as int() */
	CHECK_EQ_I(v, 5);
	CHECK_EQ_I(config_get_bool(c, "b", &b, &e), AORTA_OK);
	CHECK_EQ_I(b, 1);
	CHECK_EQ_I(config_get_bool(c, "B", &b, &e), AORTA_OK);
	CHECK_EQ_I(b, 0);
	CHECK_EQ_I(config_get_int(c, "x", &v, &e), AORTA_OK);
	CHECK_EQ_I(v, 16);
	CHECK_EQ_I(config_get_int(c, "o", &v, &e), AORTA_OK);
	CHECK_EQ_I(v, 15);
	CHECK(config_is_null(c, "n"));
	CHECK_EQ_I(config_get_int(c, "u", &v, &e), AORTA_OK);
	CHECK_EQ_I(v, 1000);
	CHECK_EQ_I(config_get_int(c, "neg", &v, &e), AORTA_OK);
	CHECK_EQ_I(v, -3);
	CHECK(config_find(c, "str")->stype == CONFIG_SSTR);
	CHECK_EQ_I(config_get_double(c, "inf", &d, &e), AORTA_OK);
	CHECK(isinf(d) && d < 0);
	/* strings: any non-null scalar as written */
	const char *s = NULL;
	CHECK_EQ_I(config_get_string(c, "x", &s, &e), AORTA_OK);
	CHECK_STR(s, "0x10");
	CHECK_EQ_I(config_get_string(c, "n", &s, &e), AORTA_EINPUT);
	config_free(c);

	c = parse_text("big: 99999999999999999999\n", &e);
	CHECK_EQ_I(config_get_int(c, "big", &v, &e), AORTA_EINPUT);
	CHECK(contains(e.msg, "out of range"));
	config_free(c);
}

static void test_schema_wildcards_nullable_and_defaults(void)
{
	static const struct config_schema s[] = {
		{ "a.n", CONFIG_T_INT | CONFIG_NULLABLE, "null", NULL },
		{ "a.k", CONFIG_T_INT, "3", NULL },
		{ "a.l", CONFIG_T_LIST, "[1, 2]", NULL },
		{ "a.m", CONFIG_T_MAP, "{}", NULL },
		{ "a.x_*", CONFIG_T_IGNORED, NULL, NULL },
		{ "z", CONFIG_T_IGNORED, NULL, NULL },
	};
	struct aorta_error e = { 0 };
	struct config *c = parse_text("a:\n  n: null\n  x_one: 1\n  x_two: [2]\n  m: {p: 1}\nz: {deep: {er: 1}}\n", &e);
	long long v = 0;

	CHECK_EQ_I(config_validate(c, s, 6, &e), AORTA_OK);
	CHECK_EQ_I(c->nwarnings, 3);
	CHECK(c->nwarnings == 3 && contains(c->warnings[0], "line 3: a.x_one: ignored (as upstream)"));
	config_apply_defaults(c, s, 6);
	CHECK_EQ_I(config_get_int(c, "a.k", &v, &e), AORTA_OK);
	CHECK_EQ_I(v, 3);
	CHECK(config_find(c, "a.k")->is_default);
	CHECK(config_is_null(c, "a.n"));
	struct config_list l = { 0, NULL };
	CHECK_EQ_I(config_get_list(c, "a.l", &l, &e), AORTA_OK);
	CHECK_EQ_I(l.n, 2);
	config_free(c);

	c = parse_text("a:\n  k: null\n", &e);
	CHECK_EQ_I(config_validate(c, s, 6, &e), AORTA_EINPUT);
	CHECK_STR(e.msg, "a.k: expected an integer, got null");
	config_free(c);
	c = parse_text("a:\n  l: 5\n", &e);
	CHECK_EQ_I(config_validate(c, s, 6, &e), AORTA_EINPUT);
	CHECK_STR(e.msg, "a.l: expected a list, got '5'");
	config_free(c);
	c = parse_text("a: 5\n", &e);
	CHECK_EQ_I(config_validate(c, s, 6, &e), AORTA_EINPUT);
	CHECK_STR(e.msg, "a: expected a mapping, got '5'");
	config_free(c);
	c = parse_text("", &e);
	CHECK(c && c->root->kind == CONFIG_MAP && c->root->n == 0);
	config_free(c);
}

static void test_edit_distance(void)
{
	CHECK_EQ_I(config_edit_distance("", ""), 0);
	CHECK_EQ_I(config_edit_distance("abc", ""), 3);
	CHECK_EQ_I(config_edit_distance("batch_sze", "batch_size"), 1);
	CHECK_EQ_I(config_edit_distance("kitten", "sitting"), 3);
	CHECK_EQ_I(config_edit_distance("modle", "model"), 1);
}

/* upstream's override coercion leaves "null" a string: it must still turn
 * backward prefetch off, as null in the YAML file does */
static void test_backward_prefetch_null_override(void)
{
	struct train_config t;
	struct aorta_error e = { 0 };
	const char *ov[] = { "fsdp.backward_prefetch=null" };
	CHECK_EQ_I(train_config_load("config/default.yaml", ov, 1, &t, &e), AORTA_OK);
	CHECK_EQ_I(t.fsdp.backward_prefetch, PREFETCH_NONE);
	train_config_release(&t);
	const char *ov2[] = { "fsdp.backward_prefetch=sideways" };
	CHECK_EQ_I(train_config_load("config/default.yaml", ov2, 1, &t, &e), AORTA_EUSAGE);
	CHECK(strstr(e.msg, "sideways") != NULL);
}

/* fsdp.reduce_dtype: fp32 by default, bf16 (or PyTorch's name) on request,
 * anything else rejected naming the file line or the override; bf16 adds
 * its scratch to the memory estimate and shows in the dump */
static void test_reduce_dtype_key(void)
{
	struct train_config t;
	struct aorta_error e = { 0 };

	CHECK_EQ_I(train_config_load("config/default.yaml", NULL, 0, &t, &e), AORTA_OK);
	CHECK_EQ_I(t.fsdp.reduce_dtype, REDUCE_FP32);
	uint64_t m32 = train_config_memory_bytes(&t, 1), m32w = train_config_memory_bytes(&t, 8);
	train_config_release(&t);

	const char *ov[] = { "fsdp.reduce_dtype=bf16" };
	CHECK_EQ_I(train_config_load("config/default.yaml", ov, 1, &t, &e), AORTA_OK);
	CHECK_EQ_I(t.fsdp.reduce_dtype, REDUCE_BF16);
	CHECK_STR(reduce_dtype_name(t.fsdp.reduce_dtype), "bf16");
	/* world 1 / ddp: a bf16 copy of the largest bucket at most, bounded by
	 * 2 bytes a parameter; sharded: the two largest units' copies */
	uint64_t m16 = train_config_memory_bytes(&t, 1), m16w = train_config_memory_bytes(&t, 8);
	uint64_t P = train_config_param_count(&t);
	CHECK(m16 > m32 && m16 - m32 <= (uint64_t)(1.1 * 2.0 * (double)P) + 1);
	CHECK(m16w > m32w && m16w - m32w < m16 - m32);
	char buf[8192] = { 0 };
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
	CHECK(f && train_config_dump_json(f, &t) == 0);
	if (f)
		fclose(f);
	CHECK(contains(buf, "\"reduce_dtype\": \"bf16\""));
	train_config_release(&t);

	const char *ov2[] = { "distributed.mode=ddp", "fsdp.reduce_dtype=BFloat16" };
	CHECK_EQ_I(train_config_load("config/default.yaml", ov2, 2, &t, &e), AORTA_OK);
	CHECK_EQ_I(t.fsdp.reduce_dtype, REDUCE_BF16);
	CHECK_EQ_I(t.distributed.mode, DIST_DDP);
	train_config_release(&t);

	const char *ov3[] = { "fsdp.reduce_dtype=fp16" };
	CHECK_EQ_I(train_config_load("config/default.yaml", ov3, 1, &t, &e), AORTA_EUSAGE);
	CHECK(contains(e.msg, "unknown reduce dtype 'fp16' (expected fp32 or bf16)"));

	char path[] = "/tmp/aorta_test_reduce_XXXXXX.yaml";
	int fd = mkstemps(path, 5);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	FILE *y = fdopen(fd, "w");
	fputs("fsdp:\n  sharding_strategy: full_shard\n  reduce_dtype: int8\n", y);
	fclose(y);
	CHECK_EQ_I(train_config_load(path, NULL, 0, &t, &e), AORTA_EINPUT);
	CHECK_EQ_I(e.line, 3);
	CHECK(contains(e.msg, "fsdp.reduce_dtype") && contains(e.msg, "'int8'"));
	unlink(path);
}

/* distributed.cta_policy: auto by default, resolved to zero for sharded
 * FSDP at a batch >= TRAIN_CTA_ZERO_MIN_BATCH and to NCCL's choice for
 * ddp, no_shard or smaller batches; the environment's NCCL_CTA_POLICY wins
 * over auto, an explicit key over the environment; bad values rejected */
static void test_cta_policy_key(void)
{
	struct train_config t;
	struct aorta_error e = { 0 };
	char why[128];
	const char *env = getenv("NCCL_CTA_POLICY");
	char *saved = env ? strdup(env) : NULL;
	unsetenv("NCCL_CTA_POLICY");

	CHECK_EQ_I(train_config_load("config/default.yaml", NULL, 0, &t, &e), AORTA_OK);
	CHECK_EQ_I(t.distributed.cta_policy, TRAIN_CTA_AUTO);
	/* the default batch 8: NCCL's choice */
	CHECK_EQ_I(train_config_cta_policy(&t, why, sizeof(why)), TRAIN_CTA_NCCL);
	CHECK(contains(why, "batch 8 < 64"));
	train_config_release(&t);

	const char *big[] = { "training.batch_size=64" };
	CHECK_EQ_I(train_config_load("config/default.yaml", big, 1, &t, &e), AORTA_OK);
	CHECK_EQ_I(train_config_cta_policy(&t, why, sizeof(why)), 2);
	CHECK(contains(why, "zero"));
	setenv("NCCL_CTA_POLICY", "efficiency", 1);
	CHECK_EQ_I(train_config_cta_policy(&t, why, sizeof(why)), TRAIN_CTA_NCCL);
	CHECK(contains(why, "NCCL_CTA_POLICY=efficiency"));
	unsetenv("NCCL_CTA_POLICY");
	char buf[8192] = { 0 };
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
	CHECK(f && train_config_dump_json(f, &t) == 0);
	if (f)
		fclose(f);
	CHECK(contains(buf, "\"cta_policy\": \"auto\""));
	train_config_release(&t);

	const char *ddp[] = { "training.batch_size=64", "distributed.mode=ddp" };
	CHECK_EQ_I(train_config_load("config/default.yaml", ddp, 2, &t, &e), AORTA_OK);
	CHECK_EQ_I(train_config_cta_policy(&t, NULL, 0), TRAIN_CTA_NCCL);
	train_config_release(&t);
	const char *ns[] = { "training.batch_size=64", "fsdp.sharding_strategy=NO_SHARD" };
	CHECK_EQ_I(train_config_load("config/default.yaml", ns, 2, &t, &e), AORTA_OK);
	CHECK_EQ_I(train_config_cta_policy(&t, NULL, 0), TRAIN_CTA_NCCL);
	train_config_release(&t);

	const char *ex[] = { "distributed.cta_policy=efficiency" };
	setenv("NCCL_CTA_POLICY", "zero", 1);
	CHECK_EQ_I(train_config_load("config/default.yaml", ex, 1, &t, &e), AORTA_OK);
	CHECK_EQ_I(train_config_cta_policy(&t, why, sizeof(why)), 1);
	CHECK(contains(why, "distributed.cta_policy efficiency"));
	train_config_release(&t);
	unsetenv("NCCL_CTA_POLICY");

	const char *bad[] = { "distributed.cta_policy=fast" };
	CHECK_EQ_I(train_config_load("config/default.yaml", bad, 1, &t, &e), AORTA_EUSAGE);
	CHECK(contains(e.msg, "unknown policy 'fast'"));
	if (saved)
		setenv("NCCL_CTA_POLICY", saved, 1);
	free(saved);
}

static int has_warning(const struct train_config *t, const char *needle)
{
	for (int i = 0; i < t->nwarnings; i++)
		if (contains(t->warnings[i], needle))
			return 1;
	return 0;
}

static void test_debug_keys_and_their_deprecated_variables(void)
{
	struct train_config t;
	struct aorta_error e = { 0 };
	const char *vars[] = { "AORTA_TRAIN_DIST", "AORTA_TRAIN_PREFETCH_NEXT", "AORTA_TRAIN_PREGATHER",
			       "AORTA_TRAIN_ISOLATE", "AORTA_TRAIN_UNINSTRUMENTED", "AORTA_TRAIN_GRAPH_FAIL" };
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);

	/* the defaults are the old behaviour with no variable set */
	CHECK_EQ_I(train_config_load("config/default.yaml", NULL, 0, &t, &e), AORTA_OK);
	CHECK_EQ_I(t.debug.distributed_executor, 0);
	CHECK_EQ_I(t.debug.prefetch_next, 1);
	CHECK_EQ_I(t.debug.pregather, 1);
	CHECK_EQ_I(t.debug.isolate, ISOLATE_NONE);
	CHECK_EQ_I(t.debug.instrumented, 1);
	CHECK_EQ_I(t.debug.graph_fail, 0);
	CHECK(!has_warning(&t, "deprecated"));
	train_config_release(&t);

	const char *ov[] = { "debug.isolate=comm", "debug.pregather=false", "debug.distributed_executor=true",
			     "debug.instrumented=false", "debug.graph_fail=true", "debug.prefetch_next=false" };
	CHECK_EQ_I(train_config_load("config/default.yaml", ov, 6, &t, &e), AORTA_OK);
	CHECK_EQ_I(t.debug.isolate, ISOLATE_COMM);
	CHECK_EQ_I(t.debug.pregather, 0);
	CHECK_EQ_I(t.debug.prefetch_next, 0);
	CHECK_EQ_I(t.debug.distributed_executor, 1);
	CHECK_EQ_I(t.debug.instrumented, 0);
	CHECK_EQ_I(t.debug.graph_fail, 1);
	train_config_release(&t);

	const char *bad[] = { "debug.isolate=both" };
	CHECK_EQ_I(train_config_load("config/default.yaml", bad, 1, &t, &e), AORTA_EUSAGE);
	CHECK(contains(e.msg, "debug.isolate") && contains(e.msg, "'both'"));

	/* the planted host delay: off by default, on one rank, in alternate blocks */
	CHECK_EQ_I(train_config_load("config/default.yaml", NULL, 0, &t, &e), AORTA_OK);
	CHECK(t.debug.host_delay_ms == 0);
	CHECK_EQ_I(t.debug.host_delay_rank, -1);
	CHECK_EQ_I(t.debug.host_delay_period, 0);
	train_config_release(&t);
	const char *hd[] = { "debug.host_delay_ms=2.5", "debug.host_delay_rank=1", "debug.host_delay_period=7" };
	CHECK_EQ_I(train_config_load("config/default.yaml", hd, 3, &t, &e), AORTA_OK);
	CHECK(t.debug.host_delay_ms == 2.5);
	CHECK_EQ_I(t.debug.host_delay_rank, 1);
	CHECK_EQ_I(t.debug.host_delay_period, 7);
	train_config_release(&t);
	const char *hbad[][1] = { { "debug.host_delay_ms=-1" }, { "debug.host_delay_ms=1e9" },
				  { "debug.host_delay_rank=-2" }, { "debug.host_delay_period=-1" } };
	const char *hkey[] = { "debug.host_delay_ms", "debug.host_delay_ms", "debug.host_delay_rank",
			       "debug.host_delay_period" };
	for (int i = 0; i < 4; i++) {
		CHECK_EQ_I(train_config_load("config/default.yaml", hbad[i], 1, &t, &e), AORTA_EUSAGE);
		CHECK(contains(e.msg, hkey[i]));
	}

	/* a variable applies where the key is not written, with a warning */
	setenv("AORTA_TRAIN_ISOLATE", "compute", 1);
	setenv("AORTA_TRAIN_UNINSTRUMENTED", "1", 1);
	setenv("AORTA_TRAIN_PREGATHER", "0", 1);
	setenv("AORTA_TRAIN_DIST", "1", 1);
	CHECK_EQ_I(train_config_load("config/default.yaml", NULL, 0, &t, &e), AORTA_OK);
	CHECK_EQ_I(t.debug.isolate, ISOLATE_COMPUTE);
	CHECK_EQ_I(t.debug.instrumented, 0);
	CHECK_EQ_I(t.debug.pregather, 0);
	CHECK_EQ_I(t.debug.distributed_executor, 1);
	CHECK(has_warning(&t, "AORTA_TRAIN_ISOLATE=compute, which is deprecated"));
	CHECK(has_warning(&t, "--override debug.isolate="));
	train_config_release(&t);
	/* a written key wins over the variable */
	const char *ov2[] = { "debug.isolate=none", "debug.instrumented=true" };
	CHECK_EQ_I(train_config_load("config/default.yaml", ov2, 2, &t, &e), AORTA_OK);
	CHECK_EQ_I(t.debug.isolate, ISOLATE_NONE);
	CHECK_EQ_I(t.debug.instrumented, 1);
	CHECK_EQ_I(t.debug.pregather, 0);
	train_config_release(&t);
	setenv("AORTA_TRAIN_ISOLATE", "everything", 1);
	CHECK_EQ_I(train_config_load("config/default.yaml", NULL, 0, &t, &e), AORTA_EINPUT);
	CHECK(contains(e.msg, "'everything'"));
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

static void test_model_dims_mapping(void)
{
	struct train_config t;
	struct model_dims d;

	train_config_defaults(&t);
	t.dataset.sequence_length = 33;
	train_config_model_dims(&t, &d);
	CHECK_EQ_I(d.V, 60000);
	CHECK_EQ_I(d.E, 192);
	CHECK_EQ_I(d.F, 16);
	CHECK_EQ_I(d.D, 128);
	CHECK_EQ_I(d.T, 33);
	CHECK_EQ_I(d.S, 32);
	CHECK_EQ_I(d.M, 768);
	CHECK_EQ_I(d.H, 12);
	CHECK_EQ_I(d.L, 8);
	CHECK_EQ_I(d.FFN, 2048);
	CHECK_EQ_I(d.MLP, 2048);
	CHECK_NEAR(d.dropout, 0.1, 1e-7);
	CHECK_NEAR(d.ln_eps, 1e-5, 1e-12);
	train_config_release(&t);
}

int main(void)
{
	TEST(test_default_yaml_equals_documented_defaults);
	TEST(test_missing_keys_take_upstream_code_defaults);
	TEST(test_override_coerces_like_upstream);
	TEST(test_train_overrides_apply_and_report);
	TEST(test_unknown_key_has_line_and_suggestion);
	TEST(test_wrong_type_has_line);
	TEST(test_bad_yaml_reports_line_and_column);
	TEST(test_txt_extension_is_rejected);
	TEST(test_heads_not_dividing_model_dim_is_rejected);
	TEST(test_shampoo_is_not_supported);
	TEST(test_memory_estimate_of_defaults_is_sane);
	TEST(test_json_config_is_accepted);
	TEST(test_upstream_ignored_keys_warn_not_fail);
	TEST(test_anchors_aliases_and_merge_keys);
	TEST(test_plain_scalars_are_typed_like_yaml);
	TEST(test_schema_wildcards_nullable_and_defaults);
	TEST(test_edit_distance);
	TEST(test_model_dims_mapping);
	TEST(test_backward_prefetch_null_override);
	TEST(test_reduce_dtype_key);
	TEST(test_cta_policy_key);
	TEST(test_debug_keys_and_their_deprecated_variables);
	return test_report();
}

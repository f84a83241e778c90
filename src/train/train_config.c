/*
 * train_config.c - the train command's schema, loader, checks, memory
 * estimate and JSON dump (contract in train_config.h).
 *
 * Design: one table (schema[] below) lists every key with its type and
 * upstream's CODE default; it drives the unknown-key and type checks
 * (config_validate) and fills absent keys (config_apply_defaults), and
 * train_config_defaults is simply "load an empty config", so defaults live
 * in one place.  Reading is then a flat list of getters that cannot miss.
 * Value checks run on the typed struct, so train_config_check serves
 * configs built in code too; when a config tree is at hand they look up the
 * key's node to name the line or the --override.
 *
 * Sections: schema, reading, value checks, public API, memory estimate,
 * JSON dump.
 */
#include "train/train_config.h"
#include "base/config.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- schema ------------------------------------------------------------ */

#define I CONFIG_T_INT
#define F CONFIG_T_FLOAT
#define B CONFIG_T_BOOL
#define S CONFIG_T_STRING
#define N CONFIG_NULLABLE
#define IGN CONFIG_T_IGNORED

static const struct config_schema schema[] = {
	{ "logging.level", S, "INFO", "DEBUG|INFO|WARNING|ERROR|CRITICAL" },

	{ "training.epochs", I, "1", NULL },
	{ "training.batch_size", I, "8", "micro-batch per rank" },
	{ "training.gradient_accumulation", I, "1", "micro-batches per optimizer step" },
	{ "training.mixed_precision", S, "bf16", "fp32|bf16|fp16 (anything else: fp32)" },
	{ "training.grad_clip_norm", F, "1.0", "0 disables" },
	{ "training.log_interval", I, "10", NULL },
	{ "training.max_steps", I | N, "null", "null: derived from the data" },
	{ "training.output_dir", S, "artifacts", NULL },
	{ "training.inject_allreduce_copies", B, "false", NULL },
	{ "training.allreduce_stress_level", I, "1", "clamped to 1..10" },
	{ "training.additional_compute_streams", IGN, NULL, NULL },
	{ "training.lightweight_op_*", IGN, NULL, NULL },

	{ "optimizer.name", S, "adamw", "adamw (shampoo is not supported)" },
	{ "optimizer.lr", F, "0.0003", NULL },
	{ "optimizer.weight_decay", F, "0.01", NULL },
	{ "optimizer.betas", CONFIG_T_LIST, "[0.9, 0.98]", NULL },
	{ "optimizer.eps", F, "1.0e-8", NULL },

	{ "scheduler.warmup_steps", I, "200", NULL },
	{ "scheduler.total_steps", I, "2000", NULL },

	{ "dataset.num_samples", I, "10000", NULL },
	{ "dataset.sequence_length", I, "64", NULL },
	{ "dataset.dense_dim", I, "128", NULL },
	{ "dataset.sparse_features", I, "32", NULL },
	{ "dataset.vocab_size", I, "60000", NULL },
	{ "dataset.num_dense_features", I, "16", NULL },
	{ "dataset.seed", I, "42", NULL },

	{ "model.vocab_size", I, "60000", NULL },
	{ "model.embedding_dim", I, "192", NULL },
	{ "model.num_dense_features", I, "16", NULL },
	{ "model.dense_dim", I, "128", NULL },
	{ "model.model_dim", I, "768", NULL },
	{ "model.num_heads", I, "12", NULL },
	{ "model.num_layers", I, "8", NULL },
	{ "model.dropout", F, "0.1", NULL },
	{ "model.mlp_hidden_dim", I, "2048", NULL },

	{ "fsdp.sharding_strategy", S, "full_shard", "full_shard|shard_grad_op|no_shard|hybrid_shard" },
	{ "fsdp.backward_prefetch", S | N, "BACKWARD_PRE", "BACKWARD_PRE|BACKWARD_POST|null" },
	{ "fsdp.use_orig_params", B, "true", NULL },
	{ "fsdp.limit_all_gathers", B, "true", NULL },
	{ "fsdp.forward_prefetch", B, "true", NULL },
	{ "fsdp.sync_module_states", B, "true", NULL },
	{ "fsdp.param_init_device", S, "cpu", "unused, as upstream" },
	{ "fsdp.reduce_dtype", S, "fp32", "fp32|bf16: gradient reduce-scatter/all-reduce (ddp too)" },

	{ "distributed.mode", S, "fsdp", "fsdp|ddp" },
	{ "distributed.gradient_as_bucket_view", B, "true", NULL },
	{ "distributed.static_graph", B, "false", NULL },
	{ "distributed.bucket_cap_mb", F, "25", NULL },
	{ "distributed.find_unused_parameters", B, "false", NULL },
	{ "distributed.cta_policy", S, "auto", "auto|nccl|default|efficiency|zero: NCCL's CTA policy" },
	{ "distributed.*", IGN, NULL, NULL },

	{ "compile.enabled", B, "false", "capture the training step as a CUDA graph and replay it" },
	{ "compile.backend", S, "inductor", NULL },
	{ "compile.mode", S, "max-autotune", NULL },
	{ "compile.fullgraph", B, "false", NULL },
	{ "compile.dynamic", B, "false", NULL },
	{ "compile.options", CONFIG_T_MAP | N, "{}", NULL },

	{ "dataloader.num_workers", I, "4", NULL },
	{ "dataloader.pin_memory", B, "true", NULL },

	{ "profiling.enabled", B, "true", NULL },
	{ "profiling.wait", I, "1", NULL },
	{ "profiling.warmup", I, "1", NULL },
	{ "profiling.active", I, "2", NULL },
	{ "profiling.repeat", I, "1", NULL },
	{ "profiling.record_shapes", B, "true", NULL },
	{ "profiling.profile_memory", B, "true", NULL },
	{ "profiling.with_stack", B, "false", NULL },
	{ "profiling.with_flops", B, "false", NULL },
	{ "profiling.tensorboard", B, "false", NULL },
	{ "profiling.chrome_trace", B, "true", NULL },
	{ "profiling.trace_filename", S, "trace.json", NULL },
	{ "profiling.profile_freq", IGN, NULL, NULL },

	{ "streams.num_streams", I | N, NULL, NULL },
	{ "streams.high_priority", CONFIG_T_ANY, NULL, "true, false, or a list of stream roles" },
	{ "streams.stream_assignments", CONFIG_T_MAP | N, NULL, "role -> list of stream names" },

	{ "debug.distributed_executor", B, "false", "the distributed executor at world 1 too" },
	{ "debug.prefetch_next", B, "true", "upload the next step's batch during the step" },
	{ "debug.pregather", B, "true", "the next step's first all-gather at the end of the step" },
	{ "debug.norm_early", B, "true", "sum the gradient norm as each reduction lands" },
	{ "debug.isolate", S, "none", "none|compute|comm: one side of every distributed step alone" },
	{ "debug.instrumented", B, "true", "events, recorder and JSONL (false: host clock only)" },
	{ "debug.graph_fail", B, "false", "make the CUDA-graph capture fail (tests the fallback)" },
	{ "debug.host_delay_ms", F, "0", "a planted host delay: the host spins this long before each step's forward" },
	{ "debug.host_delay_rank", I, "-1", "the rank that plants debug.host_delay_ms (-1: every rank)" },
	{ "debug.host_delay_period", I, "0", "0: the delay in every step; N: only in steps s with s / N odd" },

	{ "tracelens", IGN, NULL, NULL },
	{ "torch_titan", IGN, NULL, NULL },
	{ "overlap_ms", IGN, NULL, NULL },
};
#define NSCHEMA (sizeof(schema) / sizeof(*schema))

#undef I
#undef F
#undef B
#undef S
#undef N
#undef IGN

/* ---- context and messages ---------------------------------------------- */

struct ctx {
	const struct config *c;       /* NULL for configs built in code */
	struct train_config *cfg;     /* warnings go here; NULL: dropped */
	struct aorta_error *e;
};

static const struct config_node *node_of(const struct ctx *x, const char *path)
{
	return x->c ? config_find(x->c, path) : NULL;
}

static enum aorta_status bad(const struct ctx *x, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum aorta_status bad(const struct ctx *x, const char *path, const char *fmt, ...)
{
	char msg[700];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!x->c)
		return aorta_fail(x->e, AORTA_EINPUT, "", 0, -1, "%s: %s", path, msg);
	return config_error_at(x->c, node_of(x, path), AORTA_EINPUT, x->e, path, "%s", msg);
}

/* Of two keys whose values conflict, the one the user wrote (an override
 * first, then the file) is the one to name. */
static const char *blame(const struct ctx *x, const char *a, const char *b)
{
	const struct config_node *na = node_of(x, a), *nb = node_of(x, b);

	if (!na || !nb)
		return a;
	if (nb->origin && !na->origin)
		return b;
	if (na->is_default && !nb->is_default)
		return b;
	return a;
}

/* "line 12" / "--override k=v" / "default" for the other key of a pair. */
static const char *where(const struct ctx *x, const char *path, char *buf, size_t cap)
{
	const struct config_node *n = node_of(x, path);

	if (!n)
		snprintf(buf, cap, "%s", path);
	else if (n->origin)
		snprintf(buf, cap, "%s from --override %s", path, n->origin);
	else if (n->is_default)
		snprintf(buf, cap, "%s (default)", path);
	else
		snprintf(buf, cap, "%s at line %d", path, n->line);
	return buf;
}

static void add_warning_text(struct train_config *cfg, const char *text)
{
	cfg->warnings = xrealloc(cfg->warnings, (size_t)(cfg->nwarnings + 1) * sizeof(*cfg->warnings));
	cfg->warnings[cfg->nwarnings++] = xstrdup(text);
}

static void warn(const struct ctx *x, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void warn(const struct ctx *x, const char *path, const char *fmt, ...)
{
	char msg[600], buf[1200];
	const struct config_node *n = node_of(x, path);
	va_list ap;

	if (!x->cfg)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n && n->origin)
		snprintf(buf, sizeof(buf), "--override %s: %s", n->origin, msg);
	else if (n && n->line > 0)
		snprintf(buf, sizeof(buf), "'%s': line %d: %s: %s", x->c->path, n->line, path, msg);
	else
		snprintf(buf, sizeof(buf), "%s: %s", path, msg);
	add_warning_text(x->cfg, buf);
}

/* ---- reading ----------------------------------------------------------- */

static enum aorta_status get_str(const struct ctx *x, const char *path, char *dst, size_t cap)
{
	const char *s = NULL;
	enum aorta_status st = config_get_string(x->c, path, &s, x->e);

	if (st != AORTA_OK)
		return st;
	if (!s) {
		dst[0] = '\0';
		return AORTA_OK;
	}
	if (strlen(s) >= cap)
		return bad(x, path, "longer than %zu characters", cap - 1);
	memcpy(dst, s, strlen(s) + 1);
	return AORTA_OK;
}

static enum aorta_status get_bool(const struct ctx *x, const char *path, int *out)
{
	return config_get_bool(x->c, path, out, x->e);
}

static enum aorta_status get_int(const struct ctx *x, const char *path, long long *out)
{
	return config_get_int(x->c, path, out, x->e);
}

static enum aorta_status get_dbl(const struct ctx *x, const char *path, double *out)
{
	return config_get_double(x->c, path, out, x->e);
}

static int role_of(const char *s)
{
	if (!strcasecmp(s, "compute"))
		return ROLE_COMPUTE;
	if (!strcasecmp(s, "allreduce") || !strcasecmp(s, "communication") || !strcasecmp(s, "comm"))
		return ROLE_ALLREDUCE;
	if (!strcasecmp(s, "reducescatter"))
		return ROLE_REDUCESCATTER;
	if (!strcasecmp(s, "aux"))
		return ROLE_AUX;
	return -1;
}

/* The FSDP names: the sharding strategy and the backward prefetch. */
static enum aorta_status read_fsdp_enums(const struct ctx *x, struct train_config *t)
{
	char s[TC_STR];
	enum aorta_status st;
	/* fsdp.sharding_strategy (upstream upper-cases it into the enum) */
	static const char *const shard[] = { "full_shard", "shard_grad_op", "no_shard", "hybrid_shard" };
	if ((st = get_str(x, "fsdp.sharding_strategy", s, sizeof(s))) != AORTA_OK)
		return st;
	int found = -1;
	for (int i = 0; i < 4; i++)
		if (!strcasecmp(s, shard[i]))
			found = i;
	if (found < 0)
		return bad(x, "fsdp.sharding_strategy",
			   "unknown strategy '%s' (expected full_shard, shard_grad_op, no_shard or hybrid_shard)", s);
	t->fsdp.sharding_strategy = (enum sharding_strategy)found;

	/* fsdp.backward_prefetch: null or "none" turns it off */
	if (config_is_null(x->c, "fsdp.backward_prefetch")) {
		t->fsdp.backward_prefetch = PREFETCH_NONE;
	} else {
		if ((st = get_str(x, "fsdp.backward_prefetch", s, sizeof(s))) != AORTA_OK)
			return st;
		if (!strcasecmp(s, "backward_pre"))
			t->fsdp.backward_prefetch = PREFETCH_BACKWARD_PRE;
		else if (!strcasecmp(s, "backward_post"))
			t->fsdp.backward_prefetch = PREFETCH_BACKWARD_POST;
		else if (!strcasecmp(s, "none") || !strcasecmp(s, "null"))
			/* "null" is what --override fsdp.backward_prefetch=null gives
			 * (upstream's coercion leaves it a string) */
			t->fsdp.backward_prefetch = PREFETCH_NONE;
		else
			return bad(x, "fsdp.backward_prefetch",
				   "unknown value '%s' (expected BACKWARD_PRE, BACKWARD_POST, none or null)", s);
	}

	/* fsdp.reduce_dtype (PyTorch's dtype names accepted too) */
	if ((st = get_str(x, "fsdp.reduce_dtype", s, sizeof(s))) != AORTA_OK)
		return st;
	if (!strcasecmp(s, "fp32") || !strcasecmp(s, "float32"))
		t->fsdp.reduce_dtype = REDUCE_FP32;
	else if (!strcasecmp(s, "bf16") || !strcasecmp(s, "bfloat16"))
		t->fsdp.reduce_dtype = REDUCE_BF16;
	else
		return bad(x, "fsdp.reduce_dtype", "unknown reduce dtype '%s' (expected fp32 or bf16)", s);
	return AORTA_OK;
}

static enum aorta_status read_enums(const struct ctx *x, struct train_config *t)
{
	char s[TC_STR];
	enum aorta_status st;
	long long lv;

	/* logging.level: a name (any case) or Python's numeric levels */
	const struct config_node *ln = node_of(x, "logging.level");
	if (ln && ln->kind == CONFIG_SCALAR && ln->stype == CONFIG_SINT &&
	    config_node_int(x->c, ln, "logging.level", &lv, NULL) == AORTA_OK) {
		t->log_level = lv <= 10 ? TC_LOG_DEBUG : lv <= 20 ? TC_LOG_INFO : lv <= 30 ? TC_LOG_WARNING :
			       lv <= 40 ? TC_LOG_ERROR : TC_LOG_CRITICAL;
	} else {
		static const char *const names[] = { "debug", "info", "warning", "error", "critical" };
		if ((st = get_str(x, "logging.level", s, sizeof(s))) != AORTA_OK)
			return st;
		int found = -1;
		for (int i = 0; i < 5; i++)
			if (!strcasecmp(s, names[i]))
				found = i;
		if (!strcasecmp(s, "warn"))
			found = TC_LOG_WARNING;
		if (!strcasecmp(s, "fatal"))
			found = TC_LOG_CRITICAL;
		if (found < 0)
			return bad(x, "logging.level",
				   "unknown level '%s' (expected DEBUG, INFO, WARNING, ERROR or CRITICAL)", s);
		t->log_level = (enum log_level)found;
	}

	/* training.mixed_precision: upstream's tolerance, with a warning */
	if ((st = get_str(x, "training.mixed_precision", t->training.mixed_precision_name,
			  sizeof(t->training.mixed_precision_name))) != AORTA_OK)
		return st;
	const char *mp = t->training.mixed_precision_name;
	if (!strcasecmp(mp, "bf16"))
		t->training.mixed_precision = MP_BF16;
	else if (!strcasecmp(mp, "fp16"))
		t->training.mixed_precision = MP_FP16;
	else {
		t->training.mixed_precision = MP_FP32;
		if (strcasecmp(mp, "fp32") != 0 && strcasecmp(mp, "tf32") != 0)
			warn(x, "training.mixed_precision",
			     "unknown value '%s', running fp32 (as upstream; expected fp32, bf16 or fp16)", mp);
	}

	/* optimizer.name */
	if ((st = get_str(x, "optimizer.name", t->optimizer.name, sizeof(t->optimizer.name))) != AORTA_OK)
		return st;
	if (!strcasecmp(t->optimizer.name, "shampoo"))
		return bad(x, "optimizer.name",
			   "optimizer 'shampoo' is not supported (only 'adamw'; upstream's shampoo runs produce NaNs)");
	if (strcasecmp(t->optimizer.name, "adamw") != 0)
		return bad(x, "optimizer.name", "unknown optimizer '%s' (expected 'adamw')", t->optimizer.name);
	strcpy(t->optimizer.name, "adamw");

	/* distributed.mode */
	if ((st = get_str(x, "distributed.mode", s, sizeof(s))) != AORTA_OK)
		return st;
	if (!strcasecmp(s, "fsdp"))
		t->distributed.mode = DIST_FSDP;
	else if (!strcasecmp(s, "ddp"))
		t->distributed.mode = DIST_DDP;
	else
		return bad(x, "distributed.mode", "unknown mode '%s' (expected fsdp or ddp)", s);

	/* distributed.cta_policy */
	if ((st = get_str(x, "distributed.cta_policy", s, sizeof(s))) != AORTA_OK)
		return st;
	if (!strcasecmp(s, "auto"))
		t->distributed.cta_policy = TRAIN_CTA_AUTO;
	else if (!strcasecmp(s, "nccl"))
		t->distributed.cta_policy = TRAIN_CTA_NCCL;
	else if (!strcasecmp(s, "default"))
		t->distributed.cta_policy = 0;
	else if (!strcasecmp(s, "efficiency"))
		t->distributed.cta_policy = 1;
	else if (!strcasecmp(s, "zero"))
		t->distributed.cta_policy = 2;
	else
		return bad(x, "distributed.cta_policy",
			   "unknown policy '%s' (expected auto, nccl, default, efficiency or zero)", s);

	return read_fsdp_enums(x, t);
}

static enum aorta_status read_streams(const struct ctx *x, struct train_config *t)
{
	enum aorta_status st;
	const struct config_node *n;
	char what[128];

	if (!config_is_null(x->c, "streams.num_streams") &&
	    (st = get_int(x, "streams.num_streams", &t->streams.num_streams)) != AORTA_OK)
		return st;

	n = node_of(x, "streams.high_priority");
	if (n && n->kind == CONFIG_SEQ) {
		for (size_t i = 0; i < n->n; i++) {
			const char *s;
			snprintf(what, sizeof(what), "streams.high_priority[%zu]", i);
			if ((st = config_node_string(x->c, n->kids[i], what, &s, x->e)) != AORTA_OK)
				return st;
			int r = role_of(s);
			if (r < 0)
				return config_error_at(x->c, n->kids[i], AORTA_EINPUT, x->e, what,
						       "unknown stream role '%s' (expected compute, allreduce, reducescatter or aux)", s);
			t->streams.high_priority_mask |= 1u << r;
		}
	} else if (n && !(n->kind == CONFIG_SCALAR && n->stype == CONFIG_SNULL)) {
		int on = 0;
		if (n->kind != CONFIG_SCALAR)
			return config_error_at(x->c, n, AORTA_EINPUT, x->e, "streams.high_priority",
					       "expected true, false or a list of stream roles, got a mapping");
		if ((st = config_node_bool(x->c, n, "streams.high_priority", &on, x->e)) != AORTA_OK)
			return st;
		/* true: the communication streams get the highest priority */
		t->streams.high_priority_mask = on ? (1u << ROLE_ALLREDUCE) | (1u << ROLE_REDUCESCATTER) : 0;
	}

	n = node_of(x, "streams.stream_assignments");
	if (n && n->kind == CONFIG_MAP) {
		for (size_t i = 0; i < n->n; i++) {
			const struct config_node *v = n->kids[i];
			int r = role_of(n->keys[i]);
			snprintf(what, sizeof(what), "streams.stream_assignments.%s", n->keys[i]);
			if (r < 0) {
				warn(x, "streams.stream_assignments", "unknown stream role '%s', ignored",
				     n->keys[i]);
				continue;
			}
			if (v->kind == CONFIG_SEQ)
				t->streams.assigned[r] += (int)v->n;
			else if (v->kind == CONFIG_SCALAR && v->stype != CONFIG_SNULL)
				t->streams.assigned[r] += 1;
			else if (v->kind == CONFIG_MAP)
				return config_error_at(x->c, v, AORTA_EINPUT, x->e, what,
						       "expected a list of stream names, got a mapping");
		}
	}
	return AORTA_OK;
}

/* A debug.* key not written (file or --override) takes its deprecated
 * AORTA_TRAIN_* environment variable when that is set and not empty;
 * returns the value or NULL, and records a warning naming the key. */
static const char *debug_env(const struct ctx *x, const char *key, const char *var)
{
	const struct config_node *n = node_of(x, key);
	const char *v = getenv(var);

	if ((n && !n->is_default) || !v || !*v)
		return NULL;
	warn(x, key, "taken from the environment variable %s=%s, which is deprecated: "
	     "use --override %s=...", var, v, key);
	return v;
}

static enum aorta_status read_debug(const struct ctx *x, struct train_config *t)
{
	enum aorta_status st;
	char s[32];
	const char *v;

	if ((st = get_bool(x, "debug.distributed_executor", &t->debug.distributed_executor)) ||
	    (st = get_bool(x, "debug.prefetch_next", &t->debug.prefetch_next)) ||
	    (st = get_bool(x, "debug.pregather", &t->debug.pregather)) ||
	    (st = get_bool(x, "debug.norm_early", &t->debug.norm_early)) ||
	    (st = get_bool(x, "debug.instrumented", &t->debug.instrumented)) ||
	    (st = get_bool(x, "debug.graph_fail", &t->debug.graph_fail)) ||
	    (st = get_dbl(x, "debug.host_delay_ms", &t->debug.host_delay_ms)) ||
	    (st = get_int(x, "debug.host_delay_rank", &t->debug.host_delay_rank)) ||
	    (st = get_int(x, "debug.host_delay_period", &t->debug.host_delay_period)) ||
	    (st = get_str(x, "debug.isolate", s, sizeof(s))))
		return st;
	if (!(t->debug.host_delay_ms >= 0 && t->debug.host_delay_ms <= 60000))
		return bad(x, "debug.host_delay_ms", "%g: expected 0 to 60000 (ms)", t->debug.host_delay_ms);
	if (t->debug.host_delay_period < 0)
		return bad(x, "debug.host_delay_period", "%lld: expected 0 (every step) or a number of steps",
			   t->debug.host_delay_period);
	if (t->debug.host_delay_rank < -1)
		return bad(x, "debug.host_delay_rank", "%lld: expected a rank, or -1 for every rank",
			   t->debug.host_delay_rank);
	/* the variables' own meanings: "0" off, anything else on */
	if ((v = debug_env(x, "debug.distributed_executor", "AORTA_TRAIN_DIST")))
		t->debug.distributed_executor = strcmp(v, "0") != 0;
	if ((v = debug_env(x, "debug.prefetch_next", "AORTA_TRAIN_PREFETCH_NEXT")))
		t->debug.prefetch_next = strcmp(v, "0") != 0;
	if ((v = debug_env(x, "debug.pregather", "AORTA_TRAIN_PREGATHER")))
		t->debug.pregather = strcmp(v, "0") != 0;
	if ((v = debug_env(x, "debug.instrumented", "AORTA_TRAIN_UNINSTRUMENTED")))
		t->debug.instrumented = strcmp(v, "0") == 0;
	if ((v = debug_env(x, "debug.graph_fail", "AORTA_TRAIN_GRAPH_FAIL")))
		t->debug.graph_fail = strcmp(v, "0") != 0;
	if ((v = debug_env(x, "debug.isolate", "AORTA_TRAIN_ISOLATE"))) {
		if (!strcmp(v, "0"))
			v = "none";
		if (strlen(v) >= sizeof(s))
			return bad(x, "debug.isolate", "AORTA_TRAIN_ISOLATE=%.40s: expected compute or comm", v);
		snprintf(s, sizeof(s), "%s", v);
	}
	if (!strcmp(s, "none") || !*s)
		t->debug.isolate = ISOLATE_NONE;
	else if (!strcmp(s, "compute"))
		t->debug.isolate = ISOLATE_COMPUTE;
	else if (!strcmp(s, "comm"))
		t->debug.isolate = ISOLATE_COMM;
	else
		return bad(x, "debug.isolate", "unknown value '%s' (expected none, compute or comm)", s);
	return AORTA_OK;
}

/* compile.*: its options kept as text (they are torch.compile settings,
 * said to be ignored). */
static enum aorta_status read_compile(const struct ctx *x, struct train_config *t)
{
	enum aorta_status st;
#define TRY(call) do { if ((st = (call)) != AORTA_OK) return st; } while (0)
	TRY(get_bool(x, "compile.enabled", &t->compile.enabled));
	TRY(get_str(x, "compile.backend", t->compile.backend, sizeof(t->compile.backend)));
	TRY(get_str(x, "compile.mode", t->compile.mode, sizeof(t->compile.mode)));
	TRY(get_bool(x, "compile.fullgraph", &t->compile.fullgraph));
	TRY(get_bool(x, "compile.dynamic", &t->compile.dynamic));
	const struct config_node *opts = node_of(x, "compile.options");
	if (opts && opts->kind == CONFIG_MAP) {
		for (size_t i = 0; i < opts->n; i++) {
			const struct config_node *v = opts->kids[i];
			char what[128];
			snprintf(what, sizeof(what), "compile.options.%s", opts->keys[i]);
			if (v->kind != CONFIG_SCALAR)
				return config_error_at(x->c, v, AORTA_EINPUT, x->e, what,
						       "expected a scalar value");
			if (t->compile.noptions >= TC_MAX_COMPILE_OPTIONS)
				return bad(x, "compile.options", "more than %d options",
					   TC_MAX_COMPILE_OPTIONS);
			int k = t->compile.noptions++;
			snprintf(t->compile.option_key[k], sizeof(t->compile.option_key[k]), "%s",
				 opts->keys[i]);
			snprintf(t->compile.option_val[k], sizeof(t->compile.option_val[k]), "%s", v->str);
		}
	}
	if (t->compile.enabled && (strcmp(t->compile.backend, "inductor") || t->compile.noptions))
		warn(x, "compile.backend", "compile.enabled captures the step as a CUDA graph; backend, mode "
		     "and options are torch.compile settings and are ignored");

#undef TRY
	return AORTA_OK;
}

static enum aorta_status read_all(const struct ctx *x, struct train_config *t)
{
	enum aorta_status st = AORTA_OK;
	long long lv = 0;
	struct config_list betas = { 0, NULL };

#define TRY(call) do { if ((st = (call)) != AORTA_OK) return st; } while (0)
	TRY(read_enums(x, t));

	TRY(get_int(x, "training.epochs", &t->training.epochs));
	TRY(get_int(x, "training.batch_size", &t->training.batch_size));
	TRY(get_int(x, "training.gradient_accumulation", &t->training.gradient_accumulation));
	TRY(get_dbl(x, "training.grad_clip_norm", &t->training.grad_clip_norm));
	TRY(get_int(x, "training.log_interval", &t->training.log_interval));
	t->training.max_steps = -1;
	if (!config_is_null(x->c, "training.max_steps"))
		TRY(get_int(x, "training.max_steps", &t->training.max_steps));
	TRY(get_str(x, "training.output_dir", t->training.output_dir, sizeof(t->training.output_dir)));
	TRY(get_bool(x, "training.inject_allreduce_copies", &t->training.inject_allreduce_copies));
	TRY(get_int(x, "training.allreduce_stress_level", &lv));
	if (lv < 1 || lv > 10) {
		warn(x, "training.allreduce_stress_level", "%lld clamped to %d (as upstream)", lv,
		     lv < 1 ? 1 : 10);
		lv = lv < 1 ? 1 : 10;
	}
	t->training.allreduce_stress_level = (int)lv;

	TRY(get_dbl(x, "optimizer.lr", &t->optimizer.lr));
	TRY(get_dbl(x, "optimizer.weight_decay", &t->optimizer.weight_decay));
	TRY(get_dbl(x, "optimizer.eps", &t->optimizer.eps));
	TRY(config_get_list(x->c, "optimizer.betas", &betas, x->e));
	if (betas.n != 2)
		return bad(x, "optimizer.betas", "expected a list of 2 numbers, got %zu item%s", betas.n,
			   betas.n == 1 ? "" : "s");
	for (int i = 0; i < 2; i++) {
		char what[32];
		snprintf(what, sizeof(what), "optimizer.betas[%d]", i);
		/* numeric strings pass: upstream's override makes "[0.9,0.99]" strings */
		TRY(config_node_double(x->c, betas.items[i], what, &t->optimizer.betas[i], x->e));
	}

	TRY(get_int(x, "scheduler.warmup_steps", &t->scheduler.warmup_steps));
	TRY(get_int(x, "scheduler.total_steps", &t->scheduler.total_steps));

	TRY(get_int(x, "dataset.num_samples", &t->dataset.num_samples));
	TRY(get_int(x, "dataset.sequence_length", &t->dataset.sequence_length));
	TRY(get_int(x, "dataset.dense_dim", &t->dataset.dense_dim));
	TRY(get_int(x, "dataset.sparse_features", &t->dataset.sparse_features));
	TRY(get_int(x, "dataset.vocab_size", &t->dataset.vocab_size));
	TRY(get_int(x, "dataset.num_dense_features", &t->dataset.num_dense_features));
	TRY(get_int(x, "dataset.seed", &t->dataset.seed));

	TRY(get_int(x, "model.vocab_size", &t->model.vocab_size));
	TRY(get_int(x, "model.embedding_dim", &t->model.embedding_dim));
	TRY(get_int(x, "model.num_dense_features", &t->model.num_dense_features));
	TRY(get_int(x, "model.dense_dim", &t->model.dense_dim));
	TRY(get_int(x, "model.model_dim", &t->model.model_dim));
	TRY(get_int(x, "model.num_heads", &t->model.num_heads));
	TRY(get_int(x, "model.num_layers", &t->model.num_layers));
	TRY(get_dbl(x, "model.dropout", &t->model.dropout));
	TRY(get_int(x, "model.mlp_hidden_dim", &t->model.mlp_hidden_dim));

	TRY(get_bool(x, "fsdp.use_orig_params", &t->fsdp.use_orig_params));
	TRY(get_bool(x, "fsdp.limit_all_gathers", &t->fsdp.limit_all_gathers));
	TRY(get_bool(x, "fsdp.forward_prefetch", &t->fsdp.forward_prefetch));
	TRY(get_bool(x, "fsdp.sync_module_states", &t->fsdp.sync_module_states));
	TRY(get_str(x, "fsdp.param_init_device", t->fsdp.param_init_device,
		    sizeof(t->fsdp.param_init_device)));

	TRY(get_bool(x, "distributed.gradient_as_bucket_view", &t->distributed.gradient_as_bucket_view));
	TRY(get_bool(x, "distributed.static_graph", &t->distributed.static_graph));
	TRY(get_dbl(x, "distributed.bucket_cap_mb", &t->distributed.bucket_cap_mb));
	TRY(get_bool(x, "distributed.find_unused_parameters", &t->distributed.find_unused_parameters));

	TRY(read_compile(x, t));

	TRY(get_int(x, "dataloader.num_workers", &t->dataloader.num_workers));
	TRY(get_bool(x, "dataloader.pin_memory", &t->dataloader.pin_memory));

	TRY(get_bool(x, "profiling.enabled", &t->profiling.enabled));
	TRY(get_int(x, "profiling.wait", &t->profiling.wait));
	TRY(get_int(x, "profiling.warmup", &t->profiling.warmup));
	TRY(get_int(x, "profiling.active", &t->profiling.active));
	TRY(get_int(x, "profiling.repeat", &t->profiling.repeat));
	TRY(get_bool(x, "profiling.record_shapes", &t->profiling.record_shapes));
	TRY(get_bool(x, "profiling.profile_memory", &t->profiling.profile_memory));
	TRY(get_bool(x, "profiling.with_stack", &t->profiling.with_stack));
	TRY(get_bool(x, "profiling.with_flops", &t->profiling.with_flops));
	TRY(get_bool(x, "profiling.tensorboard", &t->profiling.tensorboard));
	TRY(get_bool(x, "profiling.chrome_trace", &t->profiling.chrome_trace));
	TRY(get_str(x, "profiling.trace_filename", t->profiling.trace_filename,
		    sizeof(t->profiling.trace_filename)));

	TRY(read_streams(x, t));
	TRY(read_debug(x, t));
#undef TRY
	return AORTA_OK;
}

/* ---- value checks ------------------------------------------------------ */

static enum aorta_status range_i(const struct ctx *x, const char *path, long long v, long long lo,
				 long long hi)
{
	if (v < lo || v > hi) {
		if (hi == LLONG_MAX)
			return bad(x, path, "must be at least %lld, got %lld", lo, v);
		return bad(x, path, "must be between %lld and %lld, got %lld", lo, hi, v);
	}
	return AORTA_OK;
}

/* lo_open: v > lo required, else v >= lo; v < hi (hi_open) or v <= hi */
static enum aorta_status range_d(const struct ctx *x, const char *path, double v, double lo,
				 int lo_open, double hi, int hi_open)
{
	if (!isfinite(v) || (lo_open ? v <= lo : v < lo) || (hi_open ? v >= hi : v > hi))
		return bad(x, path, "must be in %c%g, %g%c, got %g", lo_open ? '(' : '[', lo, hi,
			   hi_open ? ')' : ']', v);
	return AORTA_OK;
}

/* Sane limits: the largest sizes a kernel indexes with a 32-bit int. */
#define LIM_DIM 65536LL
#define LIM_WIDE (1LL << 20)
#define LIM_TENSOR ((long long)INT_MAX)

static enum aorta_status check_values(const struct ctx *x, const struct train_config *t)
{
	enum aorta_status st;
	char other[600];

#define TRY(call) do { if ((st = (call)) != AORTA_OK) return st; } while (0)
	TRY(range_i(x, "training.epochs", t->training.epochs, 1, 1000000));
	TRY(range_i(x, "training.batch_size", t->training.batch_size, 1, LIM_WIDE));
	TRY(range_i(x, "training.gradient_accumulation", t->training.gradient_accumulation, 1, 65536));
	TRY(range_d(x, "training.grad_clip_norm", t->training.grad_clip_norm, 0, 0, 1e30, 0));
	TRY(range_i(x, "training.log_interval", t->training.log_interval, 1, LLONG_MAX));
	if (t->training.max_steps != -1)
		TRY(range_i(x, "training.max_steps", t->training.max_steps, 1, LLONG_MAX));
	if (!t->training.output_dir[0])
		return bad(x, "training.output_dir", "must not be empty");

	TRY(range_d(x, "optimizer.lr", t->optimizer.lr, 0, 1, 1e3, 0));
	TRY(range_d(x, "optimizer.weight_decay", t->optimizer.weight_decay, 0, 0, 1e3, 0));
	TRY(range_d(x, "optimizer.eps", t->optimizer.eps, 0, 1, 1, 0));
	TRY(range_d(x, "optimizer.betas", t->optimizer.betas[0], 0, 0, 1, 1));
	TRY(range_d(x, "optimizer.betas", t->optimizer.betas[1], 0, 0, 1, 1));

	TRY(range_i(x, "scheduler.warmup_steps", t->scheduler.warmup_steps, 0, LLONG_MAX));
	TRY(range_i(x, "scheduler.total_steps", t->scheduler.total_steps, 1, LLONG_MAX));
	if (t->scheduler.warmup_steps > t->scheduler.total_steps)
		warn(x, "scheduler.warmup_steps", "%lld exceeds scheduler.total_steps %lld",
		     t->scheduler.warmup_steps, t->scheduler.total_steps);

	TRY(range_i(x, "dataset.num_samples", t->dataset.num_samples, 1, 1LL << 40));
	TRY(range_i(x, "dataset.sequence_length", t->dataset.sequence_length, 1, LIM_DIM));
	TRY(range_i(x, "dataset.dense_dim", t->dataset.dense_dim, 1, LIM_DIM));
	TRY(range_i(x, "dataset.sparse_features", t->dataset.sparse_features, 1, 4096));
	TRY(range_i(x, "dataset.vocab_size", t->dataset.vocab_size, 1, INT_MAX)); /* int32 ids */
	TRY(range_i(x, "dataset.num_dense_features", t->dataset.num_dense_features, 1, 4096));
	TRY(range_i(x, "dataset.seed", t->dataset.seed, 0, LLONG_MAX));

	TRY(range_i(x, "model.vocab_size", t->model.vocab_size, 1, INT_MAX));
	TRY(range_i(x, "model.embedding_dim", t->model.embedding_dim, 1, LIM_DIM));
	TRY(range_i(x, "model.num_dense_features", t->model.num_dense_features, 1, 4096));
	TRY(range_i(x, "model.dense_dim", t->model.dense_dim, 1, LIM_DIM));
	TRY(range_i(x, "model.model_dim", t->model.model_dim, 1, LIM_DIM));
	TRY(range_i(x, "model.num_heads", t->model.num_heads, 1, LIM_DIM));
	TRY(range_i(x, "model.num_layers", t->model.num_layers, 1, 1024));
	TRY(range_i(x, "model.mlp_hidden_dim", t->model.mlp_hidden_dim, 1, LIM_WIDE));
	TRY(range_d(x, "model.dropout", t->model.dropout, 0, 0, 1, 1));

	if (t->model.model_dim % t->model.num_heads != 0) {
		const char *k = blame(x, "model.num_heads", "model.model_dim");
		const char *o = strcmp(k, "model.num_heads") ? "model.num_heads" : "model.model_dim";
		if (k[6] == 'n') /* model.num_heads */
			return bad(x, k, "%lld does not divide model.model_dim %lld (%s)", t->model.num_heads,
				   t->model.model_dim, where(x, o, other, sizeof(other)));
		return bad(x, k, "%lld is not divisible by model.num_heads %lld (%s)", t->model.model_dim,
			   t->model.num_heads, where(x, o, other, sizeof(other)));
	}
	static const struct { const char *d, *m; size_t od, om; } pairs[] = {
		{ "dataset.vocab_size", "model.vocab_size",
		  offsetof(struct train_config, dataset.vocab_size),
		  offsetof(struct train_config, model.vocab_size) },
		{ "dataset.num_dense_features", "model.num_dense_features",
		  offsetof(struct train_config, dataset.num_dense_features),
		  offsetof(struct train_config, model.num_dense_features) },
		{ "dataset.dense_dim", "model.dense_dim",
		  offsetof(struct train_config, dataset.dense_dim),
		  offsetof(struct train_config, model.dense_dim) },
	};
	for (size_t i = 0; i < sizeof(pairs) / sizeof(*pairs); i++) {
		long long dv = *(const long long *)((const char *)t + pairs[i].od);
		long long mv = *(const long long *)((const char *)t + pairs[i].om);
		if (dv == mv)
			continue;
		const char *k = blame(x, pairs[i].m, pairs[i].d);
		const char *o = k == pairs[i].m ? pairs[i].d : pairs[i].m;
		return bad(x, k, "%lld disagrees with %s %lld (%s); they must be equal", k == pairs[i].m ? mv : dv,
			   o, k == pairs[i].m ? dv : mv, where(x, o, other, sizeof(other)));
	}

	/* the largest activation tensors must be indexable with an int */
	long long tok = t->training.batch_size * t->dataset.sequence_length;
	long long wide = 3 * t->model.model_dim;
	if (t->model.mlp_hidden_dim > wide)
		wide = t->model.mlp_hidden_dim;
	if (t->model.num_dense_features * t->model.dense_dim > wide)
		wide = t->model.num_dense_features * t->model.dense_dim;
	if (t->dataset.sparse_features > wide)
		wide = t->dataset.sparse_features;
	if (tok > LIM_TENSOR / wide)
		return bad(x, "training.batch_size",
			   "batch_size x sequence_length x width %lld x %lld x %lld exceeds %lld elements per tensor",
			   t->training.batch_size, t->dataset.sequence_length, wide, LIM_TENSOR);
	if (tok * t->model.num_heads > LIM_TENSOR / t->dataset.sequence_length)
		return bad(x, "training.batch_size",
			   "attention probabilities (batch x heads x T x T) exceed %lld elements", LIM_TENSOR);
	if ((long long)t->model.vocab_size * t->model.embedding_dim > (1LL << 36))
		return bad(x, "model.vocab_size", "embedding table %lld x %lld exceeds 2^36 elements",
			   t->model.vocab_size, t->model.embedding_dim);
	if (t->dataset.num_samples < t->training.batch_size)
		return bad(x, blame(x, "dataset.num_samples", "training.batch_size"),
			   "dataset.num_samples %lld is smaller than training.batch_size %lld (drop_last leaves no batch)",
			   t->dataset.num_samples, t->training.batch_size);

	TRY(range_d(x, "distributed.bucket_cap_mb", t->distributed.bucket_cap_mb, 0, 1, 1e6, 0));
	TRY(range_i(x, "dataloader.num_workers", t->dataloader.num_workers, 0, 1024));
	TRY(range_i(x, "profiling.wait", t->profiling.wait, 0, LLONG_MAX));
	TRY(range_i(x, "profiling.warmup", t->profiling.warmup, 0, LLONG_MAX));
	TRY(range_i(x, "profiling.active", t->profiling.active, 1, LLONG_MAX));
	TRY(range_i(x, "profiling.repeat", t->profiling.repeat, 0, LLONG_MAX));
	if (!t->profiling.trace_filename[0])
		return bad(x, "profiling.trace_filename", "must not be empty");
	if (t->streams.num_streams != 0)
		TRY(range_i(x, "streams.num_streams", t->streams.num_streams, 1, 64));
#undef TRY
	return AORTA_OK;
}

/* ---- public API -------------------------------------------------------- */

static void read_defaults(struct train_config *cfg)
{
	struct config *c = config_new();
	struct ctx x = { c, NULL, NULL };

	memset(cfg, 0, sizeof(*cfg));
	config_apply_defaults(c, schema, NSCHEMA);
	read_all(&x, cfg); /* cannot fail on the schema's own defaults */
	config_free(c);
}

void train_config_defaults(struct train_config *cfg)
{
	read_defaults(cfg);
}

void train_config_release(struct train_config *cfg)
{
	for (int i = 0; i < cfg->nwarnings; i++)
		free(cfg->warnings[i]);
	free(cfg->warnings);
	cfg->warnings = NULL;
	cfg->nwarnings = 0;
}

enum aorta_status train_config_load(const char *path, const char *const *overrides, int n,
				    struct train_config *cfg, struct aorta_error *e)
{
	struct config *c = NULL;
	enum aorta_status st;

	memset(cfg, 0, sizeof(*cfg));
	st = config_load(path, &c, e);
	if (st != AORTA_OK)
		return st;
	for (int i = 0; i < n && st == AORTA_OK; i++)
		st = config_override(c, overrides[i], e);
	if (st == AORTA_OK)
		st = config_validate(c, schema, NSCHEMA, e);
	if (st == AORTA_OK) {
		struct ctx x = { c, cfg, e };
		for (size_t i = 0; i < c->nwarnings; i++)
			add_warning_text(cfg, c->warnings[i]);
		config_apply_defaults(c, schema, NSCHEMA);
		snprintf(cfg->source, sizeof(cfg->source), "%s", path);
		st = read_all(&x, cfg);
		if (st == AORTA_OK)
			st = check_values(&x, cfg);
	}
	config_free(c);
	if (st != AORTA_OK)
		train_config_release(cfg);
	return st;
}

enum aorta_status train_config_check(const struct train_config *cfg, struct aorta_error *e)
{
	struct ctx x = { NULL, NULL, e };

	return check_values(&x, cfg);
}

void train_config_model_dims(const struct train_config *cfg, struct model_dims *d)
{
	memset(d, 0, sizeof(*d));
	d->V = (int)cfg->model.vocab_size;
	d->E = (int)cfg->model.embedding_dim;
	d->F = (int)cfg->model.num_dense_features;
	d->D = (int)cfg->model.dense_dim;
	d->T = (int)cfg->dataset.sequence_length;
	d->S = (int)cfg->dataset.sparse_features;
	d->M = (int)cfg->model.model_dim;
	d->H = (int)cfg->model.num_heads;
	d->L = (int)cfg->model.num_layers;
	d->FFN = (int)cfg->model.mlp_hidden_dim;
	d->MLP = (int)cfg->model.mlp_hidden_dim;
	d->dropout = (float)cfg->model.dropout;
	d->ln_eps = 1e-5f;
}

long long train_config_total_steps(const struct train_config *cfg, int world_size)
{
	long long w = world_size > 0 ? world_size : 1;
	long long per_rank, batches;

	if (cfg->training.max_steps > 0)
		return cfg->training.max_steps;
	per_rank = (cfg->dataset.num_samples + w - 1) / w;
	batches = per_rank / cfg->training.batch_size * cfg->training.epochs;
	return batches / cfg->training.gradient_accumulation;
}

/* ---- memory estimate --------------------------------------------------- */

/* Parameter groups as model.h lays them out. */
static void group_sizes(const struct train_config *cfg, uint64_t *input, uint64_t *layer,
			uint64_t *head)
{
	uint64_t V = (uint64_t)cfg->model.vocab_size, E = (uint64_t)cfg->model.embedding_dim;
	uint64_t FD = (uint64_t)cfg->model.num_dense_features * (uint64_t)cfg->model.dense_dim;
	uint64_t M = (uint64_t)cfg->model.model_dim, FF = (uint64_t)cfg->model.mlp_hidden_dim;

	*input = V * E + M * E + M + M * FD + M;
	*layer = 3 * M * M + 3 * M + M * M + M + 2 * M + FF * M + FF + M * FF + M + 2 * M;
	*head = 2 * M + FF * M + FF + FF + 1;
}

uint64_t train_config_param_count(const struct train_config *cfg)
{
	uint64_t in, layer, head;

	group_sizes(cfg, &in, &layer, &head);
	return in + (uint64_t)cfg->model.num_layers * layer + head;
}

/*
 * Peak bytes on one rank, fp32 storage throughout (an upper bound under
 * autocast, where some saved activations are half precision):
 *
 *   P        = parameter count; G = the largest FSDP unit (input group with
 *              the embedding, one layer, or the head)
 *   states   = 16 bytes per resident parameter: fp32 weights 4, gradients
 *              4, AdamW exp_avg 4 and exp_avg_sq 4
 *   resident = DDP, no_shard: P for all four
 *              full_shard, hybrid_shard: P/W for all four, plus two gathered
 *                units (the current and the prefetched one) of weights and
 *                gradients: 2 * G * 8 bytes.  hybrid_shard shards within
 *                a node, taken as min(W, 8) ranks
 *              shard_grad_op: weights P; gradients and AdamW state P/W;
 *                plus 2 * G * 4 bytes of gathered gradients
 *   half     = bf16/fp16: a 2-byte copy of the resident weights
 *   reduce   = fsdp.reduce_dtype bf16: the bf16 scratch of the gradient
 *              collectives (dist_gpu.h: one buffer per collective stream,
 *              reused in stream order): DDP, the largest bucket,
 *              2 * min(P, max(G, bucket_cap_mb * 2^20 / 4)); FSDP, the
 *              largest unit's gradient and its shard, 2 * (G + G/S) with S
 *              the shard group (W, hybrid min(W, 8); no_shard 1), plus
 *              for hybrid_shard the shard's cross-node all-reduce, 2 * G/S
 *   acts     = 4 bytes x B*T tokens x (F*D + E + 2M            input
 *              + L * (9M + 2 FFN + 2 H T)                       per layer: x,
 *                qkv (3M), attention out, out-proj, LN1 out, LN2 in/out
 *                (~9M), FFN pre/post GELU (2 FFN), softmax probabilities
 *                and their dropout (2 H T per token)
 *              + 2 MLP + 4)                                     head, logits,
 *                                                              target, weight
 *              + 4 bytes x B*T*S categorical ids
 *   spare    = world > 1 (the distributed executor): a second batch
 *              buffer for the next step's upload, 4 x B*T x (F*D + 2)
 *              + 4 x B*T*S bytes
 *   backward = gradients of two layers' activations alive at once:
 *              2 * 4 * B*T * (9M + 2 FFN + 2 H T)
 *   work     = 64 MiB (cuBLAS workspace, allocator rounding)
 *   total    = 1.1 * (states + half + reduce + acts + spare + backward + work)
 *
 * The defaults (P = 58,932,225, B = 8, T = 64, W = 1, bf16) give about
 * 1.54 GB, of which 0.94 GB is parameter state.
 */
uint64_t train_config_memory_bytes(const struct train_config *cfg, int world_size)
{
	uint64_t in, layer, head, P, G;
	double W = world_size > 1 ? world_size : 1;
	double w_states, w_weights, gathered;

	group_sizes(cfg, &in, &layer, &head);
	P = in + (uint64_t)cfg->model.num_layers * layer + head;
	G = in > layer ? in : layer;
	if (head > G)
		G = head;

	if (cfg->distributed.mode == DIST_DDP || cfg->fsdp.sharding_strategy == SHARD_NONE || W == 1) {
		w_weights = (double)P;
		w_states = 16.0 * (double)P;
	} else if (cfg->fsdp.sharding_strategy == SHARD_GRAD_OP) {
		w_weights = (double)P;
		gathered = 2.0 * (double)G * 4;
		w_states = 4.0 * (double)P + 12.0 * (double)P / W + gathered;
	} else {
		double shards = cfg->fsdp.sharding_strategy == SHARD_HYBRID && W > 8 ? 8 : W;
		w_weights = (double)P / shards + 2.0 * (double)G;
		gathered = 2.0 * (double)G * 8;
		w_states = 16.0 * (double)P / shards + gathered;
	}
	double half = cfg->training.mixed_precision == MP_FP32 ? 0 : 2.0 * w_weights;
	double reduce = 0;
	if (cfg->fsdp.reduce_dtype == REDUCE_BF16) {
		if (cfg->distributed.mode == DIST_DDP) {
			double cap = cfg->distributed.bucket_cap_mb * 1048576.0 / 4.0;
			double big = (double)G > cap ? (double)G : cap;
			reduce = 2.0 * ((double)P < big ? (double)P : big);
		} else {
			double S = cfg->fsdp.sharding_strategy == SHARD_NONE ? 1 :
				   cfg->fsdp.sharding_strategy == SHARD_HYBRID && W > 8 ? 8 : W;
			reduce = 2.0 * ((double)G + (double)G / S);
			if (cfg->fsdp.sharding_strategy == SHARD_HYBRID)
				reduce += 2.0 * (double)G / S;
		}
	}

	double Bt = (double)cfg->training.batch_size * (double)cfg->dataset.sequence_length;
	double M = (double)cfg->model.model_dim, FF = (double)cfg->model.mlp_hidden_dim;
	double H = (double)cfg->model.num_heads, T = (double)cfg->dataset.sequence_length;
	double per_layer = 9 * M + 2 * FF + 2 * H * T;
	double per_tok = (double)cfg->model.num_dense_features * (double)cfg->model.dense_dim +
			 (double)cfg->model.embedding_dim + 2 * M +
			 (double)cfg->model.num_layers * per_layer + 2 * FF + 4;
	double acts = 4.0 * Bt * per_tok + 4.0 * Bt * (double)cfg->dataset.sparse_features;
	double spare = W > 1 ? 4.0 * Bt * ((double)cfg->model.num_dense_features * (double)cfg->model.dense_dim + 2) +
				       4.0 * Bt * (double)cfg->dataset.sparse_features :
			       0;
	double backward = 2.0 * 4.0 * Bt * per_layer;
	double work = 64.0 * 1024 * 1024;

	return (uint64_t)(1.1 * (w_states + half + reduce + acts + spare + backward + work));
}

/* ---- JSON dump --------------------------------------------------------- */

static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* Shortest of %.15g / %.17g that reads back exactly; always a JSON number. */
static void jnum(FILE *f, double v)
{
	char buf[40];

	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fputs(buf, f);
}

static const char *jbool(int b)
{
	return b ? "true" : "false";
}

const char *mixed_precision_name(enum mixed_precision m)
{
	return m == MP_BF16 ? "bf16" : m == MP_FP16 ? "fp16" : "fp32";
}

const char *reduce_dtype_name(enum reduce_dtype r)
{
	return r == REDUCE_BF16 ? "bf16" : "fp32";
}

const char *sharding_strategy_name(enum sharding_strategy s)
{
	static const char *const n[] = { "full_shard", "shard_grad_op", "no_shard", "hybrid_shard" };
	return (unsigned)s < 4 ? n[s] : "?";
}

const char *stream_role_name(enum stream_role r)
{
	static const char *const n[] = { "compute", "allreduce", "reducescatter", "aux" };
	return (unsigned)r < ROLE_COUNT ? n[r] : "?";
}

int train_config_dump_json(FILE *f, const struct train_config *t)
{
	static const char *const levels[] = { "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL" };
	static const char *const prefetch[] = { "null", "\"BACKWARD_PRE\"", "\"BACKWARD_POST\"" };

	fputs("{\"schema\": \"aorta.train_config/1\", \"source\": ", f);
	jstr(f, t->source);
	fprintf(f, ",\n \"logging\": {\"level\": \"%s\"},\n", levels[t->log_level]);

	fprintf(f, " \"training\": {\"epochs\": %lld, \"batch_size\": %lld, \"gradient_accumulation\": %lld, "
		"\"mixed_precision\": \"%s\", \"mixed_precision_name\": ", t->training.epochs,
		t->training.batch_size, t->training.gradient_accumulation,
		mixed_precision_name(t->training.mixed_precision));
	jstr(f, t->training.mixed_precision_name);
	fputs(", \"grad_clip_norm\": ", f);
	jnum(f, t->training.grad_clip_norm);
	fprintf(f, ", \"log_interval\": %lld, \"max_steps\": ", t->training.log_interval);
	if (t->training.max_steps < 0)
		fputs("null", f);
	else
		fprintf(f, "%lld", t->training.max_steps);
	fputs(", \"output_dir\": ", f);
	jstr(f, t->training.output_dir);
	fprintf(f, ", \"inject_allreduce_copies\": %s, \"allreduce_stress_level\": %d},\n",
		jbool(t->training.inject_allreduce_copies), t->training.allreduce_stress_level);

	fprintf(f, " \"optimizer\": {\"name\": \"%s\", \"lr\": ", t->optimizer.name);
	jnum(f, t->optimizer.lr);
	fputs(", \"weight_decay\": ", f);
	jnum(f, t->optimizer.weight_decay);
	fputs(", \"betas\": [", f);
	jnum(f, t->optimizer.betas[0]);
	fputs(", ", f);
	jnum(f, t->optimizer.betas[1]);
	fputs("], \"eps\": ", f);
	jnum(f, t->optimizer.eps);
	fputs("},\n", f);

	fprintf(f, " \"scheduler\": {\"warmup_steps\": %lld, \"total_steps\": %lld},\n",
		t->scheduler.warmup_steps, t->scheduler.total_steps);
	fprintf(f, " \"dataset\": {\"num_samples\": %lld, \"sequence_length\": %lld, \"dense_dim\": %lld, "
		"\"sparse_features\": %lld, \"vocab_size\": %lld, \"num_dense_features\": %lld, \"seed\": %lld},\n",
		t->dataset.num_samples, t->dataset.sequence_length, t->dataset.dense_dim,
		t->dataset.sparse_features, t->dataset.vocab_size, t->dataset.num_dense_features,
		t->dataset.seed);
	fprintf(f, " \"model\": {\"vocab_size\": %lld, \"embedding_dim\": %lld, \"num_dense_features\": %lld, "
		"\"dense_dim\": %lld, \"model_dim\": %lld, \"num_heads\": %lld, \"num_layers\": %lld, \"dropout\": ",
		t->model.vocab_size, t->model.embedding_dim, t->model.num_dense_features, t->model.dense_dim,
		t->model.model_dim, t->model.num_heads, t->model.num_layers);
	jnum(f, t->model.dropout);
	fprintf(f, ", \"mlp_hidden_dim\": %lld},\n", t->model.mlp_hidden_dim);

	fprintf(f, " \"fsdp\": {\"sharding_strategy\": \"%s\", \"backward_prefetch\": %s, "
		"\"use_orig_params\": %s, \"limit_all_gathers\": %s, \"forward_prefetch\": %s, "
		"\"sync_module_states\": %s, \"reduce_dtype\": \"%s\", \"param_init_device\": ",
		sharding_strategy_name(t->fsdp.sharding_strategy), prefetch[t->fsdp.backward_prefetch],
		jbool(t->fsdp.use_orig_params), jbool(t->fsdp.limit_all_gathers),
		jbool(t->fsdp.forward_prefetch), jbool(t->fsdp.sync_module_states),
		reduce_dtype_name(t->fsdp.reduce_dtype));
	jstr(f, t->fsdp.param_init_device);
	fputs("},\n", f);

	fprintf(f, " \"distributed\": {\"mode\": \"%s\", \"gradient_as_bucket_view\": %s, "
		"\"static_graph\": %s, \"bucket_cap_mb\": ", t->distributed.mode == DIST_DDP ? "ddp" : "fsdp",
		jbool(t->distributed.gradient_as_bucket_view), jbool(t->distributed.static_graph));
	jnum(f, t->distributed.bucket_cap_mb);
	fprintf(f, ", \"find_unused_parameters\": %s, \"cta_policy\": \"%s\"},\n",
		jbool(t->distributed.find_unused_parameters),
		t->distributed.cta_policy == TRAIN_CTA_AUTO ? "auto" :
		t->distributed.cta_policy == 0 ? "default" :
		t->distributed.cta_policy == 1 ? "efficiency" :
		t->distributed.cta_policy == 2 ? "zero" : "nccl");

	fprintf(f, " \"compile\": {\"enabled\": %s, \"backend\": ", jbool(t->compile.enabled));
	jstr(f, t->compile.backend);
	fputs(", \"mode\": ", f);
	jstr(f, t->compile.mode);
	fprintf(f, ", \"fullgraph\": %s, \"dynamic\": %s, \"options\": {", jbool(t->compile.fullgraph),
		jbool(t->compile.dynamic));
	for (int i = 0; i < t->compile.noptions; i++) {
		if (i)
			fputs(", ", f);
		jstr(f, t->compile.option_key[i]);
		fputs(": ", f);
		jstr(f, t->compile.option_val[i]);
	}
	fputs("}},\n", f);

	fprintf(f, " \"dataloader\": {\"num_workers\": %lld, \"pin_memory\": %s},\n",
		t->dataloader.num_workers, jbool(t->dataloader.pin_memory));
	fprintf(f, " \"profiling\": {\"enabled\": %s, \"wait\": %lld, \"warmup\": %lld, \"active\": %lld, "
		"\"repeat\": %lld, \"record_shapes\": %s, \"profile_memory\": %s, \"with_stack\": %s, "
		"\"with_flops\": %s, \"tensorboard\": %s, \"chrome_trace\": %s, \"trace_filename\": ",
		jbool(t->profiling.enabled), t->profiling.wait, t->profiling.warmup, t->profiling.active,
		t->profiling.repeat, jbool(t->profiling.record_shapes), jbool(t->profiling.profile_memory),
		jbool(t->profiling.with_stack), jbool(t->profiling.with_flops), jbool(t->profiling.tensorboard),
		jbool(t->profiling.chrome_trace));
	jstr(f, t->profiling.trace_filename);
	fputs("},\n", f);

	fputs(" \"streams\": {\"num_streams\": ", f);
	if (t->streams.num_streams)
		fprintf(f, "%lld", t->streams.num_streams);
	else
		fputs("null", f);
	fputs(", \"high_priority\": [", f);
	for (int r = 0, k = 0; r < ROLE_COUNT; r++)
		if (t->streams.high_priority_mask & (1u << r))
			fprintf(f, "%s\"%s\"", k++ ? ", " : "", stream_role_name((enum stream_role)r));
	fputs("], \"assigned\": {", f);
	for (int r = 0; r < ROLE_COUNT; r++)
		fprintf(f, "%s\"%s\": %d", r ? ", " : "", stream_role_name((enum stream_role)r),
			t->streams.assigned[r]);
	fputs("}}}\n", f);
	return ferror(f) ? -1 : 0;
}

int train_config_cta_policy(const struct train_config *cfg, char *why, size_t n)
{
	static const char *names[] = { "default", "efficiency", "zero" };
	char tmp[8];
	if (!why) {
		why = tmp;
		n = sizeof(tmp);
	}
	int p = cfg->distributed.cta_policy;
	if (p != TRAIN_CTA_AUTO) {
		snprintf(why, n, "distributed.cta_policy %s", p >= 0 && p < 3 ? names[p] : "nccl");
		return p;
	}
	const char *env = getenv("NCCL_CTA_POLICY");
	if (env && *env) {
		snprintf(why, n, "the environment's NCCL_CTA_POLICY=%.20s", env);
		return TRAIN_CTA_NCCL;
	}
	const int gathers = cfg->distributed.mode == DIST_FSDP && cfg->fsdp.sharding_strategy != SHARD_NONE;
	if (gathers && cfg->training.batch_size >= TRAIN_CTA_ZERO_MIN_BATCH) {
		snprintf(why, n, "auto: zero (sharded, batch %lld >= %d)", (long long)cfg->training.batch_size,
			 TRAIN_CTA_ZERO_MIN_BATCH);
		return 2;
	}
	if (gathers)
		snprintf(why, n, "auto: NCCL's choice (batch %lld < %d)", (long long)cfg->training.batch_size,
			 TRAIN_CTA_ZERO_MIN_BATCH);
	else
		snprintf(why, n, "auto: NCCL's choice (no all-gathers)");
	return TRAIN_CTA_NCCL;
}

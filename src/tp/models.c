/*
 * models.c - the built-in table of common models for aorta tune-tp.
 *
 * Only the dims the TP operators need: hidden_size, intermediate_size (the
 * MLP's per-projection width; per expert for Mixtral), num_attention_heads,
 * num_key_value_heads, head_dim and whether fc1 is gated (SwiGLU: gate and
 * up projections, so fc1 is 2 x intermediate wide).  Each row cites where
 * its numbers come from: the model's published config.json on the Hugging
 * Face Hub (fields hidden_size, intermediate_size, num_attention_heads,
 * num_key_value_heads, head_dim when present), or the paper.  A name that
 * is neither here nor in a local config.json is an error (tp_model_resolve),
 * never a guess.
 *
 * The table is static; tp_model_builtin_at fills struct tp_model copies once
 * (not thread safe: called from the command's main thread).
 */
#include <string.h>
#include <strings.h>
#include <stdio.h>

#include "tp/tp_host.h"

struct mrow {
	const char *name;     /* Hugging Face id */
	const char *aliases;  /* '|'-separated extra names */
	long long h, inter, heads, kv, head_dim;
	int gated;
	const char *cite;
};

static const struct mrow rows[] = {
	/* huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json */
	{ "meta-llama/Llama-2-7b-hf", "llama-2-7b|llama2-7b", 4096, 11008, 32, 32, 128, 1,
	  "meta-llama/Llama-2-7b-hf config.json" },
	/* huggingface.co/meta-llama/Llama-2-13b-hf/blob/main/config.json */
	{ "meta-llama/Llama-2-13b-hf", "llama-2-13b|llama2-13b", 5120, 13824, 40, 40, 128, 1,
	  "meta-llama/Llama-2-13b-hf config.json" },
	/* huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json (GQA, 8 kv heads) */
	{ "meta-llama/Llama-2-70b-hf", "llama-2-70b|llama2-70b", 8192, 28672, 64, 8, 128, 1,
	  "meta-llama/Llama-2-70b-hf config.json" },
	/* huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json (3.1-8B has the same dims) */
	{ "meta-llama/Meta-Llama-3-8B", "llama-3-8b|llama3-8b|meta-llama/Llama-3.1-8B|llama-3.1-8b",
	  4096, 14336, 32, 8, 128, 1, "meta-llama/Meta-Llama-3-8B config.json" },
	/* huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/config.json (3.1/3.3-70B the same) */
	{ "meta-llama/Meta-Llama-3-70B", "llama-3-70b|llama3-70b|meta-llama/Llama-3.1-70B|llama-3.1-70b",
	  8192, 28672, 64, 8, 128, 1, "meta-llama/Meta-Llama-3-70B config.json" },
	/* huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json */
	{ "Qwen/Qwen2.5-0.5B", "qwen2.5-0.5b", 896, 4864, 14, 2, 64, 1, "Qwen/Qwen2.5-0.5B config.json" },
	/* huggingface.co/Qwen/Qwen2.5-1.5B/blob/main/config.json */
	{ "Qwen/Qwen2.5-1.5B", "qwen2.5-1.5b", 1536, 8960, 12, 2, 128, 1, "Qwen/Qwen2.5-1.5B config.json" },
	/* huggingface.co/Qwen/Qwen2.5-3B/blob/main/config.json */
	{ "Qwen/Qwen2.5-3B", "qwen2.5-3b", 2048, 11008, 16, 2, 128, 1, "Qwen/Qwen2.5-3B config.json" },
	/* huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json */
	{ "Qwen/Qwen2.5-7B", "qwen2.5-7b", 3584, 18944, 28, 4, 128, 1, "Qwen/Qwen2.5-7B config.json" },
	/* huggingface.co/Qwen/Qwen2.5-14B/blob/main/config.json */
	{ "Qwen/Qwen2.5-14B", "qwen2.5-14b", 5120, 13824, 40, 8, 128, 1, "Qwen/Qwen2.5-14B config.json" },
	/* huggingface.co/Qwen/Qwen2.5-32B/blob/main/config.json */
	{ "Qwen/Qwen2.5-32B", "qwen2.5-32b", 5120, 27648, 40, 8, 128, 1, "Qwen/Qwen2.5-32B config.json" },
	/* huggingface.co/Qwen/Qwen2.5-72B/blob/main/config.json */
	{ "Qwen/Qwen2.5-72B", "qwen2.5-72b", 8192, 29568, 64, 8, 128, 1, "Qwen/Qwen2.5-72B config.json" },
	/* huggingface.co/Qwen/Qwen3-0.6B/blob/main/config.json (head_dim 128 given explicitly:
	 * heads x head_dim = 2048 != hidden 1024) */
	{ "Qwen/Qwen3-0.6B", "qwen3-0.6b", 1024, 3072, 16, 8, 128, 1, "Qwen/Qwen3-0.6B config.json" },
	/* huggingface.co/Qwen/Qwen3-1.7B/blob/main/config.json */
	{ "Qwen/Qwen3-1.7B", "qwen3-1.7b", 2048, 6144, 16, 8, 128, 1, "Qwen/Qwen3-1.7B config.json" },
	/* huggingface.co/Qwen/Qwen3-4B/blob/main/config.json */
	{ "Qwen/Qwen3-4B", "qwen3-4b", 2560, 9728, 32, 8, 128, 1, "Qwen/Qwen3-4B config.json" },
	/* huggingface.co/Qwen/Qwen3-8B/blob/main/config.json */
	{ "Qwen/Qwen3-8B", "qwen3-8b", 4096, 12288, 32, 8, 128, 1, "Qwen/Qwen3-8B config.json" },
	/* huggingface.co/Qwen/Qwen3-14B/blob/main/config.json */
	{ "Qwen/Qwen3-14B", "qwen3-14b", 5120, 17408, 40, 8, 128, 1, "Qwen/Qwen3-14B config.json" },
	/* huggingface.co/Qwen/Qwen3-32B/blob/main/config.json (64 heads x 128 = 8192 != hidden 5120) */
	{ "Qwen/Qwen3-32B", "qwen3-32b", 5120, 25600, 64, 8, 128, 1, "Qwen/Qwen3-32B config.json" },
	/* huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json */
	{ "mistralai/Mistral-7B-v0.1", "mistral-7b|mistral-7b-v0.1", 4096, 14336, 32, 8, 128, 1,
	  "mistralai/Mistral-7B-v0.1 config.json" },
	/* huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json; intermediate is per
	 * expert: the tuned fc1/fc2 are one expert's MLP on all tokens (dense view) */
	{ "mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b", 4096, 14336, 32, 8, 128, 1,
	  "mistralai/Mixtral-8x7B-v0.1 config.json (one expert)" },
	/* Brown et al. 2020, "Language Models are Few-Shot Learners", Table 2.1: d_model 12288,
	 * 96 heads of d_head 128, d_ff = 4 d_model; GELU MLP (not gated), MHA */
	{ "gpt3-175b", "gpt-3-175b|gpt3|gpt-3", 12288, 49152, 96, 96, 128, 0,
	  "Brown et al. 2020 (arXiv 2005.14165) Table 2.1" },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

static struct tp_model built[NROWS];
static int built_ok;

static void build(void)
{
	if (built_ok)
		return;
	for (size_t i = 0; i < NROWS; i++) {
		struct tp_model *m = &built[i];
		memset(m, 0, sizeof(*m));
		snprintf(m->name, sizeof(m->name), "%s", rows[i].name);
		m->hidden = rows[i].h;
		m->intermediate = rows[i].inter;
		m->heads = rows[i].heads;
		m->kv_heads = rows[i].kv;
		m->head_dim = rows[i].head_dim;
		m->gated = rows[i].gated;
		snprintf(m->source, sizeof(m->source), "built-in (%s)", rows[i].cite);
	}
	built_ok = 1;
}

size_t tp_model_builtin_count(void)
{
	return NROWS;
}

const struct tp_model *tp_model_builtin_at(size_t i)
{
	build();
	return i < NROWS ? &built[i] : NULL;
}

/* "org/Name" -> "Name" */
static const char *base_name(const char *s)
{
	const char *p = strrchr(s, '/');
	return p ? p + 1 : s;
}

static int alias_match(const char *aliases, const char *name)
{
	size_t nl = strlen(name);
	const char *p = aliases;

	while (*p) {
		const char *q = strchr(p, '|');
		size_t l = q ? (size_t)(q - p) : strlen(p);
		if (l == nl && strncasecmp(p, name, l) == 0)
			return 1;
		/* "org/alias" given, alias without org */
		const char *b = base_name(name);
		if (b != name && l == strlen(b) && strncasecmp(p, b, l) == 0)
			return 1;
		if (!q)
			break;
		p = q + 1;
	}
	return 0;
}

const struct tp_model *tp_model_builtin_find(const char *name)
{
	if (!name || !*name)
		return NULL;
	build();
	for (size_t i = 0; i < NROWS; i++) {
		if (strcasecmp(rows[i].name, name) == 0 || strcasecmp(base_name(rows[i].name), name) == 0 ||
		    strcasecmp(base_name(rows[i].name), base_name(name)) == 0 || alias_match(rows[i].aliases, name))
			return &built[i];
	}
	return NULL;
}

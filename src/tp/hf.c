/*
 * hf.c - model dims from a Hugging Face config.json, the local HF cache
 * lookup, and the resolution order of aorta tune-tp:
 *   --model-config PATH  >  HF cache (HF_HUB_CACHE, HF_HOME/hub,
 *   ~/.cache/huggingface/hub: models--ORG--NAME/snapshots/SNAPSHOT/config.json)
 *   >  the built-in table (models.c)  >  error "unknown model".
 *
 * config.json is parsed with yajl's tree API (linked statically).  Fields:
 * hidden_size | n_embd, intermediate_size | n_inner (null: 4 hidden),
 * num_attention_heads | n_head, num_key_value_heads (absent: = heads),
 * head_dim (absent or null: hidden / heads).  Gated MLP: hidden_act silu /
 * swish / swiglu, or a model_type known to use GLU MLPs (llama, mistral,
 * mixtral, qwen2*, qwen3*, gemma*, phi3, olmo*, deepseek*); otherwise not
 * gated.  Multimodal configs with a "text_config" object are read from it.
 * A missing or malformed field is EINPUT naming the file and the field.
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <yajl/yajl_tree.h>

#include "tp/tp_host.h"

#define CONFIG_MAX_BYTES (16 << 20)

static yajl_val field(yajl_val o, const char *k)
{
	const char *p[] = { k, NULL };
	return yajl_tree_get(o, p, yajl_t_any);
}

/* 1: integer found; 0: absent or null; -1: present but not a positive integer */
static int get_int(yajl_val o, const char *k, long long *v)
{
	yajl_val x = field(o, k);
	if (!x || YAJL_IS_NULL(x))
		return 0;
	if (!YAJL_IS_INTEGER(x) || YAJL_GET_INTEGER(x) <= 0)
		return -1;
	*v = YAJL_GET_INTEGER(x);
	return 1;
}

static int want_int(yajl_val o, const char *k, const char *alt, long long *v, const char *path,
		    struct aorta_error *e, enum aorta_status *st)
{
	int r = get_int(o, k, v);
	const char *bad = r < 0 ? k : NULL;

	if (r == 0 && alt) {
		r = get_int(o, alt, v);
		if (r < 0)
			bad = alt;
	}
	if (r > 0)
		return 1;
	if (bad)
		*st = aorta_fail(e, AORTA_EINPUT, path, 0, -1, "field '%s' is not a positive integer", bad);
	else
		*st = aorta_fail(e, AORTA_EINPUT, path, 0, -1, "missing field '%s' (an integer%s%s)", k,
				 alt ? "; or " : "", alt ? alt : "");
	return 0;
}

static int is_gated(yajl_val o)
{
	static const char *glu_types[] = { "llama", "mistral", "mixtral", "qwen2", "qwen3", "gemma",
					   "phi3", "olmo", "deepseek", NULL };
	yajl_val act = field(o, "hidden_act");
	if (act && YAJL_IS_STRING(act)) {
		const char *a = YAJL_GET_STRING(act);
		if (!strcasecmp(a, "silu") || !strcasecmp(a, "swish") || !strcasecmp(a, "swiglu"))
			return 1;
	}
	yajl_val mt = field(o, "model_type");
	if (mt && YAJL_IS_STRING(mt)) {
		const char *t = YAJL_GET_STRING(mt);
		for (int i = 0; glu_types[i]; i++)
			if (!strncasecmp(t, glu_types[i], strlen(glu_types[i])))
				return 1;
	}
	return 0;
}

enum aorta_status tp_model_from_config(const char *path, const char *name, struct tp_model *m,
				       struct aorta_error *e)
{
	enum aorta_status st = AORTA_OK;
	char err[256] = "";
	char *buf = NULL;
	yajl_val root = NULL;
	FILE *f = fopen(path, "rb");

	memset(m, 0, sizeof(*m));
	if (!f)
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "cannot open: %s", strerror(errno));
	struct stat sb;
	if (fstat(fileno(f), &sb) || !S_ISREG(sb.st_mode) || sb.st_size > CONFIG_MAX_BYTES) {
		fclose(f);
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "not a regular file of at most 16 MiB");
	}
	buf = xmalloc((size_t)sb.st_size + 1);
	size_t got = fread(buf, 1, (size_t)sb.st_size, f);
	fclose(f);
	buf[got] = 0;
	root = yajl_tree_parse(buf, err, sizeof(err));
	if (!root) {
		char *nl = strchr(err, '\n');
		if (nl)
			*nl = 0;
		st = aorta_fail(e, AORTA_EINPUT, path, 0, -1, "invalid JSON: %s", err[0] ? err : "parse error");
		goto out;
	}
	if (!YAJL_IS_OBJECT(root)) {
		st = aorta_fail(e, AORTA_EINPUT, path, 0, -1, "expected a JSON object");
		goto out;
	}
	yajl_val o = root;
	yajl_val tc = field(root, "text_config");
	if (tc && YAJL_IS_OBJECT(tc) && !field(root, "hidden_size"))
		o = tc;

	if (!want_int(o, "hidden_size", "n_embd", &m->hidden, path, e, &st))
		goto out;
	if (!want_int(o, "num_attention_heads", "n_head", &m->heads, path, e, &st))
		goto out;
	int r = get_int(o, "intermediate_size", &m->intermediate);
	if (r == 0) {
		r = get_int(o, "n_inner", &m->intermediate);
		if (r == 0 && field(o, "n_embd")) { /* GPT-2: n_inner null means 4 n_embd */
			m->intermediate = 4 * m->hidden;
			r = 1;
		}
	}
	if (r <= 0) {
		st = aorta_fail(e, AORTA_EINPUT, path, 0, -1,
				r < 0 ? "field 'intermediate_size' is not a positive integer"
				      : "missing field 'intermediate_size' (an integer; or n_inner)");
		goto out;
	}
	r = get_int(o, "num_key_value_heads", &m->kv_heads);
	if (r < 0) {
		st = aorta_fail(e, AORTA_EINPUT, path, 0, -1, "field 'num_key_value_heads' is not a positive integer");
		goto out;
	}
	if (r == 0)
		m->kv_heads = m->heads;
	r = get_int(o, "head_dim", &m->head_dim);
	if (r < 0) {
		st = aorta_fail(e, AORTA_EINPUT, path, 0, -1, "field 'head_dim' is not a positive integer");
		goto out;
	}
	if (r == 0) {
		if (m->hidden % m->heads) {
			st = aorta_fail(e, AORTA_EINPUT, path, 0, -1,
					"hidden_size %lld is not divisible by num_attention_heads %lld and no head_dim is given",
					m->hidden, m->heads);
			goto out;
		}
		m->head_dim = m->hidden / m->heads;
	}
	if (m->heads % m->kv_heads) {
		st = aorta_fail(e, AORTA_EINPUT, path, 0, -1,
				"num_attention_heads %lld is not a multiple of num_key_value_heads %lld", m->heads,
				m->kv_heads);
		goto out;
	}
	m->gated = is_gated(o);
	snprintf(m->name, sizeof(m->name), "%s", name && *name ? name : path);
	snprintf(m->source, sizeof(m->source), "%s", path);
out:
	if (root)
		yajl_tree_free(root);
	free(buf);
	return st;
}

/* models--ORG--NAME/snapshots/ * /config.json under hub; newest mtime wins */
static int find_in_hub(const char *hub, const char *name, char *path, size_t len)
{
	char pat[2048], repo[512];
	size_t j = 0;

	for (const char *p = name; *p && j + 3 < sizeof(repo); p++) {
		if (*p == '/') {
			repo[j++] = '-';
			repo[j++] = '-';
		} else {
			repo[j++] = *p;
		}
	}
	repo[j] = 0;
	snprintf(pat, sizeof(pat), "%s/models--%s/snapshots/*/config.json", hub, repo);
	glob_t g;
	int found = 0;
	if (glob(pat, 0, NULL, &g) == 0) {
		time_t best = 0;
		for (size_t i = 0; i < g.gl_pathc; i++) {
			struct stat sb;
			if (stat(g.gl_pathv[i], &sb) == 0 && (!found || sb.st_mtime > best)) {
				best = sb.st_mtime;
				snprintf(path, len, "%s", g.gl_pathv[i]);
				found = 1;
			}
		}
		globfree(&g);
	}
	return found;
}

int tp_hf_cache_find(const char *name, char *path, size_t len)
{
	char hub[1024];
	const char *v;

	if (!name || !strchr(name, '/'))
		return 0; /* hub repos are ORG/NAME */
	if ((v = getenv("HF_HUB_CACHE")) && *v && find_in_hub(v, name, path, len))
		return 1;
	if ((v = getenv("HF_HOME")) && *v) {
		snprintf(hub, sizeof(hub), "%s/hub", v);
		if (find_in_hub(hub, name, path, len))
			return 1;
	}
	if ((v = getenv("HOME")) && *v) {
		snprintf(hub, sizeof(hub), "%s/.cache/huggingface/hub", v);
		if (find_in_hub(hub, name, path, len))
			return 1;
	}
	return 0;
}

enum aorta_status tp_model_resolve(const char *name, const char *config_path, struct tp_model *m,
				   struct aorta_error *e)
{
	char path[2048];
	enum aorta_status st;

	if (config_path) {
		if ((st = tp_model_from_config(config_path, name, m, e)))
			return st;
	} else if (name && tp_hf_cache_find(name, path, sizeof(path))) {
		if ((st = tp_model_from_config(path, name, m, e)))
			return st;
	} else {
		const struct tp_model *b = tp_model_builtin_find(name);
		if (!b)
			return aorta_fail(e, AORTA_EINPUT, "", 0, -1,
					  "unknown model '%s': no config.json for it in the Hugging Face cache "
					  "(HF_HUB_CACHE, HF_HOME/hub, ~/.cache/huggingface/hub) and not in the "
					  "built-in table (see --list-models); give --model-config config.json",
					  name ? name : "");
		*m = *b;
	}
	if (m->hidden <= 0 || m->intermediate <= 0 || m->heads <= 0 || m->kv_heads <= 0 || m->head_dim <= 0)
		return aorta_fail(e, AORTA_EINPUT, m->source, 0, -1, "model dims must be positive");
	return AORTA_OK;
}

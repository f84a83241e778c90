/*
 * recipe.c - a sweep recipe (YAML, docs/sweep.md) read, checked and
 * expanded into cells before any work.
 *
 * Design.  The file is read by base/config (libyaml, every node with its
 * line); this module walks the tree once into struct recipe, then expands
 * the cells: the cross product of the axes (the environment axis outermost,
 * the last axis fastest) or the explicit `cells:` list.  All checks happen
 * here, so `--dry-run` and a real run refuse the same recipes: unknown
 * top-level keys and axes (with a suggestion), values that are not scalars
 * or are out of range for the variables we know (NCCL_NTHREADS, channel and
 * CTA counts, CUDA_DEVICE_MAX_CONNECTIONS), an empty matrix, duplicate
 * values and duplicate cells, two axes setting one variable, placeholders
 * that name nothing, and (check_train) aorta train overrides that `aorta
 * train --check-config` would refuse.  Each error names the recipe line of
 * the node at fault.  Environment values expand ${VAR} (empty when unset)
 * and ${VAR:?} (an error when unset) from the caller's environment.
 *
 * Cost: cells x axes strings; nothing is kept from the config tree (every
 * string is copied), so the tree is freed before returning.
 */
#include "sweep/recipe.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/plugin.h"
#include "train/train_config.h"


static void push_str(char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(char *));
	(*v)[(*n)++] = xstrdup(s);
}

static void free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void recipe_free(struct recipe *r)
{
	if (!r)
		return;
	free(r->name);
	for (size_t i = 0; i < r->naxes; i++) {
		struct sweep_axis *a = &r->axes[i];
		free(a->name);
		free_strs(a->targets, a->ntargets);
		free_strs(a->values, a->nvalues);
		free(a->value_lines);
	}
	free(r->axes);
	for (size_t i = 0; i < r->nenvs; i++) {
		free(r->envs[i].name);
		free_strs(r->envs[i].keys, r->envs[i].n);
		free_strs(r->envs[i].vals, r->envs[i].n);
	}
	free(r->envs);
	free_strs(r->env_k, r->nenv);
	free_strs(r->env_v, r->nenv);
	free_strs(r->overrides, r->noverrides);
	free(r->train_config);
	free_strs(r->train_args, r->ntrain_args);
	free_strs(r->command, r->ncommand);
	free(r->traces);
	free(r->report_rows);
	free(r->report_cols);
	for (size_t i = 0; i < r->ncells; i++) {
		free(r->cells[i].key);
		free(r->cells[i].label);
		free(r->cells[i].vi);
	}
	free(r->cells);
	memset(r, 0, sizeof(*r));
}

/* ---- helpers -------------------------------------------------------------------- */

struct rctx {
	struct recipe *r;
	struct config *c;
	struct aorta_error *e;
};

static enum aorta_status fail_at(struct rctx *x, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static enum aorta_status fail_at(struct rctx *x, int line, const char *fmt, ...)
{
	char msg[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return aorta_fail(x->e, AORTA_EINPUT, x->r->path, line, -1, "%s", msg);
}

static int is_env_name(const char *s)
{
	if (!*s || !(isupper((unsigned char)*s) || *s == '_'))
		return 0;
	for (; *s; s++)
		if (!(isupper((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '_'))
			return 0;
	return 1;
}

static int is_override_key(const char *s)
{
	if (!islower((unsigned char)*s) || !strchr(s, '.'))
		return 0;
	for (; *s; s++)
		if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '_' || *s == '.'))
			return 0;
	return s[-1] != '.';
}

static const char *suggest(const char *s, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t bd = (size_t)-1;
	for (size_t i = 0; i < n; i++) {
		size_t d = config_edit_distance(s, names[i]);
		if (d < bd)
			bd = d, best = names[i];
	}
	size_t len = strlen(s);
	return best && bd <= (len > 6 ? 3 : 2) ? best : NULL;
}

/* A scalar's text; lists and mappings and null are refused. */
static enum aorta_status scalar(struct rctx *x, const struct config_node *n, const char *what, const char **out)
{
	if (n->kind != CONFIG_SCALAR)
		return fail_at(x, n->line, "%s: expected a value, got %s", what,
			       n->kind == CONFIG_MAP ? "a mapping" : "a list");
	if (n->stype == CONFIG_SNULL)
		return fail_at(x, n->line, "%s: expected a value, got null", what);
	*out = n->str;
	return AORTA_OK;
}

static enum aorta_status get_num(struct rctx *x, const struct config_node *n, const char *what, double lo,
				 double hi, double *out)
{
	const char *s = NULL;
	if (scalar(x, n, what, &s))
		return x->e->code;
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !(v >= lo && v <= hi))
		return fail_at(x, n->line, "%s: expected a number from %g to %g, got '%s'", what, lo, hi, s);
	*out = v;
	return AORTA_OK;
}

/* Values we know the range of (NCCL's documented ones); others are free. */
static enum aorta_status check_env_value(struct rctx *x, const char *var, const char *val, int line)
{
	static const struct { const char *name; long lo, hi; int pow2; } known[] = {
		{ "NCCL_NTHREADS", 64, 512, 1 },
		{ "NCCL_MIN_NCHANNELS", 1, 64, 0 },
		{ "NCCL_MAX_NCHANNELS", 1, 64, 0 },
		{ "NCCL_MIN_CTAS", 1, 64, 0 },
		{ "NCCL_MAX_CTAS", 1, 64, 0 },
		{ "NCCL_NCHANNELS_PER_NET_PEER", 1, 64, 0 },
		{ "CUDA_DEVICE_MAX_CONNECTIONS", 1, 32, 0 },
		{ "NCCL_BUFFSIZE", 1, 1L << 40, 0 },
		{ "OMP_NUM_THREADS", 1, 4096, 0 },
	};
	if (strchr(val, '\n'))
		return fail_at(x, line, "bad value for %s: a line break", var);
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (strcmp(var, known[i].name))
			continue;
		char *end;
		long v = strtol(val, &end, 10);
		if (end == val || *end || v < known[i].lo || v > known[i].hi ||
		    (known[i].pow2 && (v & (v - 1))))
			return fail_at(x, line, "bad value '%s' for %s: expected %s from %ld to %ld", val, var,
				       known[i].pow2 ? "a power of two" : "an integer", known[i].lo, known[i].hi);
	}
	return AORTA_OK;
}

/* ${VAR} -> value or ""; ${VAR:?} -> value or an error. */
static enum aorta_status expand_vars(struct rctx *x, const char *s, int line, char **out)
{
	size_t cap = strlen(s) + 64, n = 0;
	char *o = xmalloc(cap);
	for (const char *p = s; *p;) {
		if (p[0] == '$' && p[1] == '{') {
			const char *end = strchr(p, '}');
			if (!end) {
				free(o);
				return fail_at(x, line, "unterminated '${' in '%s'", s);
			}
			char name[256];
			size_t len = (size_t)(end - p - 2);
			int required = 0;
			if (len >= 2 && p[2 + len - 2] == ':' && p[2 + len - 1] == '?')
				required = 1, len -= 2;
			if (len == 0 || len >= sizeof(name)) {
				free(o);
				return fail_at(x, line, "bad variable reference in '%s'", s);
			}
			memcpy(name, p + 2, len);
			name[len] = '\0';
			const char *v = getenv(name);
			if ((!v || !*v) && required) { /* as the shell: empty counts as unset */
				free(o);
				return fail_at(x, line, "'%s' needs the environment variable %s, which is not set or empty", s,
					       name);
			}
			v = v ? v : "";
			size_t vl = strlen(v);
			if (n + vl + 1 > cap)
				cap = (n + vl + 1) * 2, o = xrealloc(o, cap);
			memcpy(o + n, v, vl);
			n += vl;
			p = end + 1;
			continue;
		}
		if (n + 2 > cap)
			cap *= 2, o = xrealloc(o, cap);
		o[n++] = *p++;
	}
	o[n] = '\0';
	*out = o;
	return AORTA_OK;
}

/* A mapping of variable -> value (env:, environments.X:). */
static enum aorta_status read_env_map(struct rctx *x, const struct config_node *m, const char *what, char ***k,
				      char ***v, size_t *n)
{
	if (m->kind != CONFIG_MAP)
		return fail_at(x, m->line, "%s: expected a mapping of environment variables", what);
	for (size_t i = 0; i < m->n; i++) {
		const char *s = NULL;
		char w[300];
		snprintf(w, sizeof(w), "%s.%s", what, m->keys[i]);
		if (!is_env_name(m->keys[i]))
			return fail_at(x, m->key_lines[i], "%s: '%s' is not an environment variable name", what,
				       m->keys[i]);
		if (scalar(x, m->kids[i], w, &s))
			return x->e->code;
		char *ex = NULL;
		if (expand_vars(x, s, m->kids[i]->line, &ex))
			return x->e->code;
		if (check_env_value(x, m->keys[i], ex, m->kids[i]->line)) {
			free(ex);
			return x->e->code;
		}
		push_str(k, n, m->keys[i]);
		(*n)--;
		push_str(v, n, ex);
		free(ex);
	}
	return AORTA_OK;
}

static enum aorta_status read_str_list(struct rctx *x, const struct config_node *n, const char *what, char ***v,
				       size_t *cnt)
{
	if (n->kind == CONFIG_SCALAR) {
		const char *s = NULL;
		if (scalar(x, n, what, &s))
			return x->e->code;
		push_str(v, cnt, s);
		return AORTA_OK;
	}
	if (n->kind != CONFIG_SEQ)
		return fail_at(x, n->line, "%s: expected a list", what);
	for (size_t i = 0; i < n->n; i++) {
		const char *s = NULL;
		if (scalar(x, n->kids[i], what, &s))
			return x->e->code;
		push_str(v, cnt, s);
	}
	return AORTA_OK;
}

/* ---- axes ------------------------------------------------------------------------ */

static struct sweep_axis *new_axis(struct recipe *r, const char *name, int line, enum axis_kind k)
{
	r->axes = xrealloc(r->axes, (r->naxes + 1) * sizeof(*r->axes));
	struct sweep_axis *a = &r->axes[r->naxes++];
	memset(a, 0, sizeof(*a));
	a->name = xstrdup(name);
	a->line = line;
	a->kind = k;
	return a;
}

static enum aorta_status axis_add_value(struct rctx *x, struct sweep_axis *a, const char *v, int line)
{
	for (size_t i = 0; i < a->nvalues; i++)
		if (!strcmp(a->values[i], v))
			return fail_at(x, line, "duplicate cells: axis '%s' lists '%s' twice (lines %d and %d)",
				       a->name, v, a->value_lines[i], line);
	if (a->kind == AX_ENV)
		for (size_t t = 0; t < a->ntargets; t++)
			if (check_env_value(x, a->targets[t], v, line))
				return x->e->code;
	a->value_lines = xrealloc(a->value_lines, (a->nvalues + 1) * sizeof(int));
	a->value_lines[a->nvalues] = line;
	push_str(&a->values, &a->nvalues, v);
	return AORTA_OK;
}

static enum aorta_status axis_values(struct rctx *x, struct sweep_axis *a, const struct config_node *n)
{
	char what[300];
	snprintf(what, sizeof(what), "axis '%s'", a->name);
	if (n->kind != CONFIG_SEQ)
		return fail_at(x, n->line, "%s: expected a list of values", what);
	if (n->n == 0)
		return fail_at(x, n->line, "empty matrix: axis '%s' has no values", a->name);
	for (size_t i = 0; i < n->n; i++) {
		const char *s = NULL;
		if (n->kids[i]->kind != CONFIG_SCALAR || n->kids[i]->stype == CONFIG_SNULL)
			return fail_at(x, n->kids[i]->line ? n->kids[i]->line : n->line,
				       "bad value in axis '%s': expected a number or a word, got %s", a->name,
				       n->kids[i]->kind == CONFIG_SCALAR ? "null"
				       : n->kids[i]->kind == CONFIG_MAP ? "a mapping" : "a list");
		if (scalar(x, n->kids[i], what, &s) || axis_add_value(x, a, s, n->kids[i]->line))
			return x->e->code;
	}
	return AORTA_OK;
}

static const char AXIS_HELP[] =
	"an axis is an environment variable in capitals (NCCL_NTHREADS: [256, 512]), an aorta train key "
	"(fsdp.forward_prefetch: [true, false]) or a mapping {env: [VARS] | override: [KEYS], values: [...]}";

static enum aorta_status read_axis(struct rctx *x, const char *name, int line, const struct config_node *n)
{
	struct recipe *r = x->r;
	if (!strcmp(name, "environment"))
		return fail_at(x, line, "axis 'environment' is reserved: name environments under 'environments:'");
	for (size_t i = 0; i < r->naxes; i++)
		if (!strcmp(r->axes[i].name, name))
			return fail_at(x, line, "axis '%s' is given twice", name);
	if (n->kind == CONFIG_SEQ) {
		enum axis_kind k;
		if (is_env_name(name))
			k = AX_ENV;
		else if (is_override_key(name))
			k = AX_OVERRIDE;
		else {
			char up[256];
			size_t i;
			for (i = 0; name[i] && i + 1 < sizeof(up); i++)
				up[i] = (char)toupper((unsigned char)name[i]);
			up[i] = '\0';
			if (is_env_name(up))
				return fail_at(x, line, "unknown axis '%s': did you mean '%s'? (%s)", name, up,
					       AXIS_HELP);
			return fail_at(x, line, "unknown axis '%s': %s", name, AXIS_HELP);
		}
		struct sweep_axis *a = new_axis(r, name, line, k);
		push_str(&a->targets, &a->ntargets, name);
		return axis_values(x, a, n);
	}
	if (n->kind != CONFIG_MAP)
		return fail_at(x, line, "unknown axis '%s': %s", name, AXIS_HELP);
	const struct config_node *tg = NULL, *vals = NULL;
	enum axis_kind k = AX_ENV;
	int tline = line;
	for (size_t i = 0; i < n->n; i++) {
		if (!strcmp(n->keys[i], "env") || !strcmp(n->keys[i], "override")) {
			if (tg)
				return fail_at(x, n->key_lines[i], "axis '%s': give either env: or override:", name);
			tg = n->kids[i];
			tline = n->key_lines[i];
			k = n->keys[i][0] == 'e' ? AX_ENV : AX_OVERRIDE;
		} else if (!strcmp(n->keys[i], "values")) {
			vals = n->kids[i];
		} else {
			return fail_at(x, n->key_lines[i], "axis '%s': unknown key '%s' (env, override, values)",
				       name, n->keys[i]);
		}
	}
	if (!tg || !vals)
		return fail_at(x, line, "axis '%s': a mapping axis needs env: (or override:) and values:", name);
	if (!is_env_name(name) && !is_override_key(name) &&
	    !(isalpha((unsigned char)name[0]) && strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
						  strlen(name)))
		return fail_at(x, line, "axis '%s': a name of letters, digits and '_'", name);
	struct sweep_axis *a = new_axis(r, name, line, k);
	if (read_str_list(x, tg, name, &a->targets, &a->ntargets))
		return x->e->code;
	if (a->ntargets == 0)
		return fail_at(x, tline, "axis '%s': names no variable", name);
	for (size_t t = 0; t < a->ntargets; t++)
		if (k == AX_ENV ? !is_env_name(a->targets[t]) : !is_override_key(a->targets[t]))
			return fail_at(x, tline, "axis '%s': '%s' is not %s", name, a->targets[t],
				       k == AX_ENV ? "an environment variable name" : "an aorta train key (a.b)");
	return axis_values(x, a, vals);
}

/* ---- cells ----------------------------------------------------------------------- */

static void cell_strings(struct recipe *r, struct sweep_cell *c)
{
	size_t cap = 64, n = 0, lcap = 64, ln = 0;
	char *k = xmalloc(cap), *l = xmalloc(lcap);
	k[0] = l[0] = '\0';
	for (size_t i = 0; i < r->naxes; i++) {
		const struct sweep_axis *a = &r->axes[i];
		char *p = xasprintf("%s%s=%s", n ? " " : "", a->name, a->values[c->vi[i]]);
		size_t pl = strlen(p);
		if (n + pl + 1 > cap)
			cap = (n + pl + 1) * 2, k = xrealloc(k, cap);
		memcpy(k + n, p, pl + 1);
		n += pl;
		free(p);
		if (a->nvalues > 1 || r->explicit_cells) {
			p = a->kind == AX_ENVIRONMENT ? xasprintf("%s%s", ln ? " " : "", a->values[c->vi[i]])
						      : xasprintf("%s%s=%s", ln ? " " : "", a->name, a->values[c->vi[i]]);
			pl = strlen(p);
			if (ln + pl + 1 > lcap)
				lcap = (ln + pl + 1) * 2, l = xrealloc(l, lcap);
			memcpy(l + ln, p, pl + 1);
			ln += pl;
			free(p);
		}
	}
	c->key = k;
	c->label = ln ? l : (free(l), xstrdup("(the one cell)"));
}

static struct sweep_cell *new_cell(struct recipe *r, int line)
{
	r->cells = xrealloc(r->cells, (r->ncells + 1) * sizeof(*r->cells));
	struct sweep_cell *c = &r->cells[r->ncells];
	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "c%02zu", r->ncells + 1);
	c->line = line;
	c->vi = xcalloc(r->naxes ? r->naxes : 1, sizeof(size_t));
	r->ncells++;
	return c;
}

static struct sweep_axis *find_axis(struct recipe *r, const char *name)
{
	for (size_t i = 0; i < r->naxes; i++)
		if (!strcmp(r->axes[i].name, name))
			return &r->axes[i];
	return NULL;
}

static enum aorta_status unknown_axis(struct rctx *x, const char *name, int line)
{
	struct recipe *r = x->r;
	const char **names = xcalloc(r->naxes + 1, sizeof(char *));
	char list[600] = "";
	size_t o = 0;
	for (size_t i = 0; i < r->naxes; i++) {
		names[i] = r->axes[i].name;
		o += (size_t)snprintf(list + o, o < sizeof(list) ? sizeof(list) - o : 0, "%s%s", i ? ", " : "",
				      r->axes[i].name);
		if (o >= sizeof(list))
			o = sizeof(list) - 1;
	}
	const char *s = suggest(name, names, r->naxes);
	free(names);
	if (s)
		return fail_at(x, line, "unknown axis '%s' in a cell: did you mean '%s'? (axes: %s)", name, s, list);
	return fail_at(x, line, "unknown axis '%s' in a cell (axes: %s)", name, r->naxes ? list : "none");
}

/* One explicit cell: a mapping axis -> value (a value not listed under the
 * axis is added to it, and checked as the axis' values are). */
static enum aorta_status read_cell(struct rctx *x, const struct config_node *m)
{
	struct recipe *r = x->r;
	if (m->kind != CONFIG_MAP)
		return fail_at(x, m->line, "a cell is a mapping of axis: value");
	struct sweep_cell *c = new_cell(r, m->line);
	int *set = xcalloc(r->naxes + 1, sizeof(int));
	for (size_t i = 0; i < m->n; i++) {
		struct sweep_axis *a = find_axis(r, m->keys[i]);
		if (!a) {
			free(set);
			return unknown_axis(x, m->keys[i], m->key_lines[i]);
		}
		const char *v = NULL;
		char what[300];
		snprintf(what, sizeof(what), "cell value of '%s'", a->name);
		if (scalar(x, m->kids[i], what, &v)) {
			free(set);
			return x->e->code;
		}
		size_t ai = (size_t)(a - r->axes), k;
		for (k = 0; k < a->nvalues && strcmp(a->values[k], v); k++)
			;
		if (k == a->nvalues) {
			if (a->kind == AX_ENVIRONMENT) {
				free(set);
				return fail_at(x, m->kids[i]->line, "unknown environment '%s' (environments: see line %d)",
					       v, a->line);
			}
			if (axis_add_value(x, a, v, m->kids[i]->line)) {
				free(set);
				return x->e->code;
			}
		}
		c->vi[ai] = k;
		set[ai] = 1;
	}
	for (size_t i = 0; i < r->naxes; i++)
		if (!set[i]) {
			int line = m->line;
			free(set);
			return fail_at(x, line, "cell does not set axis '%s' (every cell sets every axis)",
				       r->axes[i].name);
		}
	free(set);
	return AORTA_OK;
}

static void cross_product(struct recipe *r)
{
	size_t total = 1;
	for (size_t i = 0; i < r->naxes; i++)
		total *= r->axes[i].nvalues;
	for (size_t k = 0; k < total; k++) {
		struct sweep_cell *c = new_cell(r, 0);
		size_t rem = k;
		for (size_t i = r->naxes; i-- > 0;) {
			c->vi[i] = rem % r->axes[i].nvalues;
			rem /= r->axes[i].nvalues;
		}
	}
}

/* ---- placeholders ------------------------------------------------------------------ */

/* Appends v to o[*n] (growing it), for sh in quoting state q (0 outside
 * quotes, '\'' inside single, '"' inside double quotes) when sh: outside,
 * 'v' (a ' as '\''); inside '...', the quote closed, 'v', reopened;
 * inside "...", $ ` " \ escaped.  So the value is one word of data. */
static void put_value(char **o, size_t *n, size_t *cap, const char *v, int sh, char q)
{
	size_t vl = strlen(v);
	if (*n + 4 * vl + 5 > *cap) {
		*cap = (*n + 4 * vl + 5) * 2;
		*o = xrealloc(*o, *cap);
	}
	char *b = *o;
	if (!sh) {
		memcpy(b + *n, v, vl);
		*n += vl;
		return;
	}
	if (q == '"') {
		for (const char *c = v; *c; c++) {
			if (*c == '$' || *c == '`' || *c == '"' || *c == '\\')
				b[(*n)++] = '\\';
			b[(*n)++] = *c;
		}
		return;
	}
	if (q == '\'')
		b[(*n)++] = '\'';
	b[(*n)++] = '\'';
	for (const char *c = v; *c; c++) {
		if (*c == '\'') {
			memcpy(b + *n, "'\\''", 4);
			*n += 4;
		} else {
			b[(*n)++] = *c;
		}
	}
	b[(*n)++] = '\'';
	if (q == '\'')
		b[(*n)++] = '\'';
}

static char *subst(const struct recipe *r, const struct sweep_cell *c, const char *s, const char *out,
		   const char *trial, int sh)
{
	size_t cap = strlen(s) + 256, n = 0;
	char *o = xmalloc(cap);
	char q = 0; /* sh quoting state of the literal text copied so far */
	for (const char *p = s; *p;) {
		const char *v = NULL;
		const char *end = *p == '{' ? strchr(p, '}') : NULL;
		if (end) {
			size_t len = (size_t)(end - p - 1);
			if (len == 3 && !strncmp(p + 1, "out", 3))
				v = out;
			else if (len == 4 && !strncmp(p + 1, "cell", 4))
				v = c ? c->id : "";
			else if (len == 5 && !strncmp(p + 1, "trial", 5))
				v = trial;
			else
				for (size_t i = 0; i < r->naxes; i++)
					if (strlen(r->axes[i].name) == len && !strncmp(p + 1, r->axes[i].name, len))
						v = c ? r->axes[i].values[c->vi[i]] : "";
		}
		if (v) {
			put_value(&o, &n, &cap, v, sh, q);
			p = end + 1;
			continue;
		}
		if (n + 3 > cap)
			cap *= 2, o = xrealloc(o, cap);
		if (sh) {
			if (q == 0 && (*p == '\'' || *p == '"'))
				q = *p;
			else if (q && *p == q)
				q = 0;
			else if (q != '\'' && *p == '\\' && p[1]) /* an escaped character: copied as is */
				o[n++] = *p++;
		}
		o[n++] = *p++;
	}
	o[n] = '\0';
	return o;
}

char *recipe_subst(const struct recipe *r, const struct sweep_cell *c, const char *s, const char *out,
		   const char *trial)
{
	return subst(r, c, s, out, trial, 0);
}

char *recipe_subst_sh(const struct recipe *r, const struct sweep_cell *c, const char *s, const char *out,
		      const char *trial)
{
	return subst(r, c, s, out, trial, 1);
}

/* A {name} that is none of out, cell, trial or an axis. */
static const char *bad_placeholder(const struct recipe *r, const char *s, char *buf, size_t len)
{
	for (const char *p = strchr(s, '{'); p; p = strchr(p + 1, '{')) {
		const char *end = strchr(p, '}');
		if (!end)
			return NULL;
		size_t l = (size_t)(end - p - 1);
		int ok = 0;
		if (l == 0 || strspn(p + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") < l)
			continue; /* not a placeholder (shell braces, JSON) */
		if ((l == 3 && !strncmp(p + 1, "out", 3)) || (l == 4 && !strncmp(p + 1, "cell", 4)) ||
		    (l == 5 && !strncmp(p + 1, "trial", 5)))
			ok = 1;
		for (size_t i = 0; !ok && i < r->naxes; i++)
			ok = strlen(r->axes[i].name) == l && !strncmp(p + 1, r->axes[i].name, l);
		if (!ok) {
			snprintf(buf, len, "%.*s", (int)(l + 2), p);
			return buf;
		}
	}
	return NULL;
}

static int uses_placeholder(const struct recipe *r, const char *name)
{
	char pat[300];
	snprintf(pat, sizeof(pat), "{%s}", name);
	for (size_t i = 0; i < r->ncommand; i++)
		if (strstr(r->command[i], pat))
			return 1;
	return r->traces && strstr(r->traces, pat);
}

/* ---- the top level ------------------------------------------------------------------ */

static const char *const TOP_KEYS[] = { "name", "trials", "timeout_s", "skip_steps", "threshold_pct",
					"noisy_pct", "confound", "baseline", "env", "overrides",
					"environments", "axes", "cells", "workload", "report" };
#define NTOP (sizeof(TOP_KEYS) / sizeof(TOP_KEYS[0]))

static enum aorta_status read_workload(struct rctx *x, const struct config_node *w, int *cmd_line)
{
	struct recipe *r = x->r;
	if (w->kind != CONFIG_MAP)
		return fail_at(x, w->line, "workload: expected a mapping (config, args, command, traces)");
	for (size_t i = 0; i < w->n; i++) {
		const char *k = w->keys[i], *s;
		const struct config_node *n = w->kids[i];
		if (!strcmp(k, "config")) {
			if (scalar(x, n, "workload.config", &s))
				return x->e->code;
			r->train_config = xstrdup(s);
		} else if (!strcmp(k, "args")) {
			if (read_str_list(x, n, "workload.args", &r->train_args, &r->ntrain_args))
				return x->e->code;
		} else if (!strcmp(k, "command")) {
			*cmd_line = n->line;
			if (n->kind == CONFIG_SCALAR) {
				if (scalar(x, n, "workload.command", &s))
					return x->e->code;
				push_str(&r->command, &r->ncommand, "/bin/sh");
				push_str(&r->command, &r->ncommand, "-c");
				push_str(&r->command, &r->ncommand, s);
			} else if (read_str_list(x, n, "workload.command", &r->command, &r->ncommand)) {
				return x->e->code;
			}
			if (!r->ncommand)
				return fail_at(x, n->line, "workload.command is empty");
		} else if (!strcmp(k, "traces")) {
			if (scalar(x, n, "workload.traces", &s))
				return x->e->code;
			r->traces = xstrdup(s);
		} else {
			return fail_at(x, w->key_lines[i], "workload: unknown key '%s' (config, args, command, traces)",
				       k);
		}
	}
	return AORTA_OK;
}

static enum aorta_status read_overrides(struct rctx *x, const struct config_node *n)
{
	struct recipe *r = x->r;
	if (n->kind == CONFIG_MAP) {
		for (size_t i = 0; i < n->n; i++) {
			const char *s = NULL;
			if (!is_override_key(n->keys[i]))
				return fail_at(x, n->key_lines[i], "overrides: '%s' is not an aorta train key (a.b)",
					       n->keys[i]);
			if (scalar(x, n->kids[i], n->keys[i], &s))
				return x->e->code;
			char *kv = xasprintf("%s=%s", n->keys[i], s);
			push_str(&r->overrides, &r->noverrides, kv);
			free(kv);
		}
		return AORTA_OK;
	}
	size_t before = r->noverrides;
	if (read_str_list(x, n, "overrides", &r->overrides, &r->noverrides))
		return x->e->code;
	for (size_t i = before; i < r->noverrides; i++)
		if (!strchr(r->overrides[i], '='))
			return fail_at(x, n->line, "overrides: '%s' is not key=value", r->overrides[i]);
	return AORTA_OK;
}

/* The train overrides of a cell, fixed ones first (caller frees the array). */
static const char **cell_overrides(const struct recipe *r, const struct sweep_cell *c, size_t *n,
				   char ***owned, size_t *nowned)
{
	const char **v = xcalloc(r->noverrides + r->naxes * 8 + 1, sizeof(char *));
	size_t k = 0;
	for (size_t i = 0; i < r->noverrides; i++)
		v[k++] = r->overrides[i];
	for (size_t i = 0; i < r->naxes; i++) {
		const struct sweep_axis *a = &r->axes[i];
		if (a->kind != AX_OVERRIDE)
			continue;
		for (size_t t = 0; t < a->ntargets && t < 8; t++) {
			char *kv = xasprintf("%s=%s", a->targets[t], a->values[c->vi[i]]);
			push_str(owned, nowned, kv);
			free(kv);
			v[k++] = (*owned)[*nowned - 1];
		}
	}
	*n = k;
	return v;
}

static enum aorta_status check_train(struct rctx *x)
{
	struct recipe *r = x->r;
	for (size_t ci = 0; ci < r->ncells; ci++) {
		const struct sweep_cell *c = &r->cells[ci];
		char **owned = NULL;
		size_t nowned = 0, n;
		const char **ov = cell_overrides(r, c, &n, &owned, &nowned);
		struct train_config tc;
		struct aorta_error te = { 0 };
		char found[4096];
		const char *cfg = r->train_config ? r->train_config :
				  aorta_data_file("config/default.yaml", found, sizeof(found));
		enum aorta_status st = train_config_load(cfg, ov, (int)n, &tc, &te);
		free(ov);
		free_strs(owned, nowned);
		if (st == AORTA_OK) {
			train_config_release(&tc);
			continue;
		}
		/* the line: the axis value or the overrides block that holds the key */
		int line = c->line;
		for (size_t i = 0; i < r->naxes; i++)
			if (r->axes[i].kind == AX_OVERRIDE && strstr(te.msg, r->axes[i].targets[0]))
				line = r->axes[i].value_lines[c->vi[i]];
		if (te.path[0] && strcmp(te.path, r->path) && te.line)
			return fail_at(x, line, "cell %s (%s): aorta train refuses its configuration: '%s': line %lld: %s",
				       c->id, c->label, te.path, te.line, te.msg);
		return fail_at(x, line, "cell %s (%s): aorta train refuses its configuration: %s", c->id, c->label,
			       te.msg);
	}
	return AORTA_OK;
}

/* The recipe's top-level keys: scalars read into x->r, the sections
 * that need the others (axes, cells, ...) kept in t for later. */
struct recipe_top {
	const struct config_node *axes, *cells, *envs, *base, *rep;
	int axes_line, cmd_line;
};

static enum aorta_status read_top(struct rctx *x, struct recipe_top *t)
{
	struct recipe *r = x->r;
	const struct config_node *root = x->c->root;
	for (size_t i = 0; i < root->n; i++) {
		const char *k = root->keys[i];
		const struct config_node *n = root->kids[i];
		double d;
		const char *s = NULL;
		if (!strcmp(k, "name")) {
			if (scalar(x, n, "name", &s))
				return x->e->code;
			r->name = xstrdup(s);
		} else if (!strcmp(k, "trials")) {
			if (get_num(x, n, "trials", 1, 1000, &d))
				return x->e->code;
			if (d != (int)d)
				return fail_at(x, n->line, "trials: expected a whole number, got '%s'", n->str);
			r->trials = (int)d;
		} else if (!strcmp(k, "timeout_s")) {
			if (get_num(x, n, "timeout_s", 0.001, 1e7, &r->timeout_s))
				return x->e->code;
		} else if (!strcmp(k, "skip_steps")) {
			if (get_num(x, n, "skip_steps", 0, 1e9, &d))
				return x->e->code;
			r->skip_steps = (int)d;
		} else if (!strcmp(k, "threshold_pct")) {
			if (get_num(x, n, "threshold_pct", 0, 100, &r->threshold_pct))
				return x->e->code;
		} else if (!strcmp(k, "noisy_pct")) {
			if (get_num(x, n, "noisy_pct", 0, 1000, &r->noisy_pct))
				return x->e->code;
		} else if (!strcmp(k, "confound")) {
			if (scalar(x, n, "confound", &s))
				return x->e->code;
			if (n->stype != CONFIG_SBOOL)
				return fail_at(x, n->line, "confound: expected true or false, got '%s'", s);
			r->confound = !strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcasecmp(s, "on");
		} else if (!strcmp(k, "baseline")) {
			t->base = n;
		} else if (!strcmp(k, "env")) {
			if (read_env_map(x, n, "env", &r->env_k, &r->env_v, &r->nenv))
				return x->e->code;
		} else if (!strcmp(k, "overrides")) {
			if (read_overrides(x, n))
				return x->e->code;
		} else if (!strcmp(k, "environments")) {
			t->envs = n;
		} else if (!strcmp(k, "axes")) {
			t->axes = n;
			t->axes_line = root->key_lines[i];
		} else if (!strcmp(k, "cells")) {
			t->cells = n;
		} else if (!strcmp(k, "workload")) {
			if (read_workload(x, n, &t->cmd_line))
				return x->e->code;
		} else if (!strcmp(k, "report")) {
			t->rep = n;
		} else {
			const char *s2 = suggest(k, TOP_KEYS, NTOP);
			if (s2)
				return fail_at(x, root->key_lines[i], "unknown key '%s': did you mean '%s'?", k, s2);
			return fail_at(x, root->key_lines[i],
				       "unknown key '%s' (name, trials, timeout_s, skip_steps, threshold_pct, "
				       "noisy_pct, confound, baseline, env, overrides, environments, axes, cells, "
				       "workload, report)", k);
		}
	}
	return AORTA_OK;
}

/* environments: the first axis, a value per named set of variables. */
static enum aorta_status read_environments(struct rctx *x, const struct config_node *envs)
{
	struct recipe *r = x->r;
	if (envs->kind != CONFIG_MAP)
		return fail_at(x, envs->line, "environments: expected a mapping name -> variables");
	if (envs->n == 0)
		return fail_at(x, envs->line, "empty matrix: 'environments' names none");
	struct sweep_axis *a = new_axis(r, "environment", envs->line, AX_ENVIRONMENT);
	for (size_t i = 0; i < envs->n; i++) {
		r->envs = xrealloc(r->envs, (r->nenvs + 1) * sizeof(*r->envs));
		struct sweep_environment *en = &r->envs[r->nenvs++];
		memset(en, 0, sizeof(*en));
		en->name = xstrdup(envs->keys[i]);
		en->line = envs->key_lines[i];
		if (strspn(en->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
			    strlen(en->name) || !*en->name)
			return fail_at(x, en->line, "environment '%s': a name of letters, digits, '.', '-', '_'",
				       en->name);
		char what[300];
		snprintf(what, sizeof(what), "environments.%s", en->name);
		if (envs->kids[i]->kind == CONFIG_SCALAR && envs->kids[i]->stype == CONFIG_SNULL)
			; /* no variables: the caller's environment as it is */
		else if (read_env_map(x, envs->kids[i], what, &en->keys, &en->vals, &en->n))
			return x->e->code;
		a = &r->axes[0];
		a->value_lines = xrealloc(a->value_lines, (a->nvalues + 1) * sizeof(int));
		a->value_lines[a->nvalues] = en->line;
		push_str(&a->values, &a->nvalues, en->name);
	}
	return AORTA_OK;
}

/* One variable or key set by two axes, or by an axis and env:, refused. */
static enum aorta_status check_targets(struct rctx *x)
{
	struct recipe *r = x->r;
	for (size_t i = 0; i < r->naxes; i++)
		for (size_t t = 0; t < r->axes[i].ntargets; t++) {
			const char *v = r->axes[i].targets[t];
			for (size_t j = i; j < r->naxes; j++)
				for (size_t u = (j == i ? t + 1 : 0); u < r->axes[j].ntargets; u++)
					if (r->axes[i].kind == r->axes[j].kind && !strcmp(v, r->axes[j].targets[u]))
						return fail_at(x, r->axes[j].line, "'%s' is set by axis '%s' (line %d) and axis '%s'",
							       v, r->axes[i].name, r->axes[i].line, r->axes[j].name);
			if (r->axes[i].kind == AX_ENV)
				for (size_t k = 0; k < r->nenv; k++)
					if (!strcmp(v, r->env_k[k]))
						return fail_at(x, r->axes[i].line, "'%s' is set by axis '%s' and by env:", v,
							       r->axes[i].name);
		}
	return AORTA_OK;
}

/* The cells (listed, else the axes' cross product), each once. */
static enum aorta_status read_cells(struct rctx *x, const struct config_node *cells, int axes_line)
{
	struct recipe *r = x->r;
	if (cells) {
		r->explicit_cells = 1;
		if (cells->kind != CONFIG_SEQ)
			return fail_at(x, cells->line, "cells: expected a list of mappings axis: value");
		if (cells->n == 0)
			return fail_at(x, cells->line, "empty matrix: 'cells' is an empty list");
		for (size_t i = 0; i < cells->n; i++)
			if (read_cell(x, cells->kids[i]))
				return x->e->code;
	} else {
		double total = 1;
		for (size_t i = 0; i < r->naxes; i++)
			total *= (double)r->axes[i].nvalues;
		if (total > 100000)
			return fail_at(x, axes_line, "the cross product of the axes has %.0f cells (at most 100000)", total);
		cross_product(r);
	}
	if (r->ncells == 0)
		return fail_at(x, axes_line, "empty matrix: no cells");
	for (size_t i = 0; i < r->ncells; i++)
		cell_strings(r, &r->cells[i]);
	for (size_t i = 0; i < r->ncells; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(r->cells[i].key, r->cells[j].key))
				return fail_at(x, r->cells[i].line, "duplicate cells: lines %d and %d are the same cell (%s)",
					       r->cells[j].line, r->cells[i].line, r->cells[i].key);
	return AORTA_OK;
}

/* baseline: a mapping axis -> value naming one cell; default the first. */
static enum aorta_status read_baseline(struct rctx *x, const struct config_node *base)
{
	struct recipe *r = x->r;
	if (base->kind != CONFIG_MAP)
		return fail_at(x, base->line, "baseline: expected a mapping axis: value naming one cell");
	size_t found = (size_t)-1, nmatch = 0;
	for (size_t i = 0; i < base->n; i++) {
		if (!find_axis(r, base->keys[i]))
			return unknown_axis(x, base->keys[i], base->key_lines[i]);
	}
	for (size_t ci = 0; ci < r->ncells; ci++) {
		int ok = 1;
		for (size_t i = 0; i < base->n && ok; i++) {
			struct sweep_axis *a = find_axis(r, base->keys[i]);
			ok = base->kids[i]->kind == CONFIG_SCALAR &&
			     !strcmp(a->values[r->cells[ci].vi[a - r->axes]], base->kids[i]->str);
		}
		if (ok) {
			if (!nmatch)
				found = ci;
			nmatch++;
		}
	}
	if (!nmatch)
		return fail_at(x, base->line, "baseline: no cell has these values");
	if (nmatch > 1)
		return fail_at(x, base->line, "baseline: %zu cells have these values; name every axis", nmatch);
	r->baseline = found;
	return AORTA_OK;
}

/* report: the axes of the matrix's rows and columns. */
static enum aorta_status read_report(struct rctx *x, const struct config_node *rep)
{
	struct recipe *r = x->r;
	if (rep) {
		if (rep->kind != CONFIG_MAP)
			return fail_at(x, rep->line, "report: expected a mapping (rows, cols)");
		for (size_t i = 0; i < rep->n; i++) {
			const char *s = NULL;
			if (strcmp(rep->keys[i], "rows") && strcmp(rep->keys[i], "cols"))
				return fail_at(x, rep->key_lines[i], "report: unknown key '%s' (rows, cols)", rep->keys[i]);
			if (scalar(x, rep->kids[i], rep->keys[i], &s))
				return x->e->code;
			if (!find_axis(r, s))
				return unknown_axis(x, s, rep->kids[i]->line);
			if (rep->keys[i][0] == 'r')
				r->report_rows = xstrdup(s);
			else
				r->report_cols = xstrdup(s);
		}
	}
	if (r->report_rows && r->report_cols && !strcmp(r->report_rows, r->report_cols))
		return fail_at(x, rep->line, "report: rows and cols name the same axis '%s'", r->report_rows);
	return AORTA_OK;
}

/* The workload: placeholders known, train axes only with a command that
 * uses them (cmd_line: where the command was given, 0 on the command line). */
static enum aorta_status check_workload(struct rctx *x, int cmd_line, int do_check_train)
{
	struct recipe *r = x->r;
	char buf[300];
	for (size_t i = 0; i < r->ncommand; i++)
		if (bad_placeholder(r, r->command[i], buf, sizeof(buf)))
			return aorta_fail(x->e, cmd_line ? AORTA_EINPUT : AORTA_EUSAGE, cmd_line ? r->path : "",
					  cmd_line, -1, "workload command: unknown placeholder '%s' (known: {out}, "
					  "{cell}, {trial} and the axes' names)", buf);
	if (bad_placeholder(r, r->traces, buf, sizeof(buf)))
		return fail_at(x, 0, "workload.traces: unknown placeholder '%s'", buf);
	if (r->ncommand) {
		for (size_t i = 0; i < r->naxes; i++)
			if (r->axes[i].kind == AX_OVERRIDE && !uses_placeholder(r, r->axes[i].name))
				return fail_at(x, r->axes[i].line,
					       "axis '%s' sets an aorta train key, but the workload is a command that does "
					       "not use {%s}", r->axes[i].name, r->axes[i].name);
		if (r->noverrides)
			return fail_at(x, 0, "overrides: only the aorta train workload takes them (the workload is a "
				       "command)");
	} else if (do_check_train && check_train(x)) {
		return x->e->code;
	}
	return AORTA_OK;
}

static enum aorta_status build(struct rctx *x, char *const *cli, size_t ncli, int trials, int do_check_train)
{
	struct recipe *r = x->r;
	struct recipe_top t = { .axes_line = 1 };
	r->trials = 3;
	r->timeout_s = 600;
	r->skip_steps = 0; /* one warm-up default for every command (docs/cli.md) */
	r->threshold_pct = 1.0;
	r->noisy_pct = 5.0;
	r->confound = 1;
	if (read_top(x, &t))
		return x->e->code;
	if (trials > 0)
		r->trials = trials;
	if (ncli) {
		free_strs(r->command, r->ncommand);
		r->command = NULL;
		r->ncommand = 0;
		for (size_t i = 0; i < ncli; i++)
			push_str(&r->command, &r->ncommand, cli[i]);
		t.cmd_line = 0;
	}
	if (!r->traces)
		r->traces = xstrdup("{out}");
	if (!r->name) {
		const char *b = strrchr(r->path, '/');
		r->name = xstrdup(b ? b + 1 : r->path);
	}
	if (t.envs && read_environments(x, t.envs))
		return x->e->code;
	if (t.axes) {
		if (t.axes->kind != CONFIG_MAP)
			return fail_at(x, t.axes->line ? t.axes->line : t.axes_line, "axes: expected a mapping name -> values");
		for (size_t i = 0; i < t.axes->n; i++)
			if (read_axis(x, t.axes->keys[i], t.axes->key_lines[i], t.axes->kids[i]))
				return x->e->code;
	}
	if (check_targets(x) || read_cells(x, t.cells, t.axes_line) || (t.base && read_baseline(x, t.base)) ||
	    read_report(x, t.rep) || check_workload(x, t.cmd_line, do_check_train))
		return x->e->code;
	return AORTA_OK;
}

static enum aorta_status finish(struct config *c, struct recipe *r, char *const *cli, size_t ncli, int trials,
				int ct, struct aorta_error *e)
{
	struct rctx x = { r, c, e };
	enum aorta_status st = build(&x, cli, ncli, trials, ct);
	config_free(c);
	if (st != AORTA_OK) {
		char path[512];
		memcpy(path, r->path, sizeof(path));
		recipe_free(r);
		memcpy(r->path, path, sizeof(path));
	}
	return st;
}

enum aorta_status recipe_load(const char *path, char *const *cli_command, size_t ncli, int trials,
			      int check_train_cfg, struct recipe *r, struct aorta_error *e)
{
	struct config *c = NULL;
	memset(r, 0, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "%s", path);
	enum aorta_status st = config_load(path, &c, e);
	if (st != AORTA_OK)
		return st == AORTA_EUSAGE ? AORTA_EINPUT : st;
	return finish(c, r, cli_command, ncli, trials, check_train_cfg, e);
}

enum aorta_status recipe_parse_text(const char *name, const char *text, struct recipe *r, struct aorta_error *e)
{
	struct config *c = NULL;
	memset(r, 0, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "%s", name);
	enum aorta_status st = config_parse(name, text, (size_t)-1, &c, e);
	if (st != AORTA_OK)
		return st;
	return finish(c, r, NULL, 0, 0, 0, e);
}

const char *recipe_cell_environment(const struct recipe *r, const struct sweep_cell *c)
{
	for (size_t i = 0; i < r->naxes; i++)
		if (r->axes[i].kind == AX_ENVIRONMENT)
			return r->axes[i].values[c->vi[i]];
	return NULL;
}

/* ---- recipe.resolved.yaml ------------------------------------------------------------- */

static void yq(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (*s == '\t')
			fputs("\\t", f);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

int recipe_write_resolved(FILE *f, const struct recipe *r)
{
	fprintf(f, "# the expanded recipe of this sweep: aorta sweep run --recipe THIS_FILE replays it\n"
		   "# (environment values are expanded; cells are listed explicitly)\n");
	fputs("name: ", f);
	yq(f, r->name);
	fprintf(f, "\ntrials: %d\ntimeout_s: %.17g\nskip_steps: %d\nthreshold_pct: %.17g\nnoisy_pct: %.17g\n"
		   "confound: %s\n", r->trials, r->timeout_s, r->skip_steps, r->threshold_pct, r->noisy_pct,
		r->confound ? "true" : "false");
	if (r->nenv) {
		fputs("env:\n", f);
		for (size_t i = 0; i < r->nenv; i++) {
			fprintf(f, "  %s: ", r->env_k[i]);
			yq(f, r->env_v[i]);
			fputc('\n', f);
		}
	}
	if (r->noverrides) {
		fputs("overrides:\n", f);
		for (size_t i = 0; i < r->noverrides; i++) {
			fputs("  - ", f);
			yq(f, r->overrides[i]);
			fputc('\n', f);
		}
	}
	fputs("workload:\n", f);
	if (r->train_config) {
		fputs("  config: ", f);
		yq(f, r->train_config);
		fputc('\n', f);
	}
	if (r->ntrain_args) {
		fputs("  args: [", f);
		for (size_t i = 0; i < r->ntrain_args; i++) {
			fputs(i ? ", " : "", f);
			yq(f, r->train_args[i]);
		}
		fputs("]\n", f);
	}
	if (r->ncommand) {
		fputs("  command: [", f);
		for (size_t i = 0; i < r->ncommand; i++) {
			fputs(i ? ", " : "", f);
			yq(f, r->command[i]);
		}
		fputs("]\n", f);
	}
	fputs("  traces: ", f);
	yq(f, r->traces);
	fputc('\n', f);
	if (r->nenvs) {
		fputs("environments:\n", f);
		for (size_t i = 0; i < r->nenvs; i++) {
			fprintf(f, "  %s:%s\n", r->envs[i].name, r->envs[i].n ? "" : " null");
			for (size_t k = 0; k < r->envs[i].n; k++) {
				fprintf(f, "    %s: ", r->envs[i].keys[k]);
				yq(f, r->envs[i].vals[k]);
				fputc('\n', f);
			}
		}
	}
	int any = 0;
	for (size_t i = 0; i < r->naxes; i++) {
		const struct sweep_axis *a = &r->axes[i];
		if (a->kind == AX_ENVIRONMENT)
			continue;
		if (!any++)
			fputs("axes:\n", f);
		fprintf(f, "  %s:\n    %s: [", a->name, a->kind == AX_ENV ? "env" : "override");
		for (size_t t = 0; t < a->ntargets; t++)
			fprintf(f, "%s%s", t ? ", " : "", a->targets[t]);
		fputs("]\n    values: [", f);
		for (size_t v = 0; v < a->nvalues; v++) {
			fputs(v ? ", " : "", f);
			yq(f, a->values[v]);
		}
		fputs("]\n", f);
	}
	if (r->report_rows || r->report_cols) {
		fputs("report:\n", f);
		if (r->report_rows)
			fprintf(f, "  rows: %s\n", r->report_rows);
		if (r->report_cols)
			fprintf(f, "  cols: %s\n", r->report_cols);
	}
	fputs("baseline: {", f);
	for (size_t i = 0; i < r->naxes; i++) {
		fprintf(f, "%s%s: ", i ? ", " : "", r->axes[i].name);
		yq(f, r->axes[i].values[r->cells[r->baseline].vi[i]]);
	}
	fputs("}\ncells:\n", f);
	for (size_t c = 0; c < r->ncells; c++) {
		fputs("  - {", f);
		for (size_t i = 0; i < r->naxes; i++) {
			fprintf(f, "%s%s: ", i ? ", " : "", r->axes[i].name);
			yq(f, r->axes[i].values[r->cells[c].vi[i]]);
		}
		fprintf(f, "}  # %s\n", r->cells[c].id);
	}
	return ferror(f) ? -1 : 0;
}

const char **recipe_cell_overrides(const struct recipe *r, const struct sweep_cell *c, size_t *n, char ***owned,
				   size_t *nowned)
{
	return cell_overrides(r, c, n, owned, nowned);
}

/*
 * config.c - YAML/JSON configuration trees (see config.h for the contract).
 *
 * Design: the file is read whole (zread_all, 16 MiB bound) and fed to
 * libyaml's event parser; a stack of open collections turns events into
 * arena nodes.  A mapping holds parallel arrays keys[], key_lines[], kids[]
 * in file order; lookups are linear, which is the right cost for configs of
 * a few hundred keys.  Arrays live in the arena and are regrown by copying
 * (the old copy is dropped, at most doubling the arena).  Anchors are kept
 * in a small list while parsing; an alias adds the anchored node itself to
 * its new parent, so the tree is a DAG and "weight" (the node count after
 * expansion) bounds the work of walking it.
 *
 * Sections: parsing, paths and overrides, typed getters, schema check.
 */
#include "base/config.h"
#include "base/zread.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#define CONFIG_MAX_BYTES (16u << 20)
#define CONFIG_MAX_DEPTH 128
#define CONFIG_MAX_WEIGHT 1e6

/* ---- nodes ------------------------------------------------------------- */

static struct config_node *node_new(struct config *c, enum config_kind kind, int line, int col)
{
	struct config_node *n = arena_alloc(&c->arena, sizeof(*n));

	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->stype = CONFIG_SNULL;
	n->line = line;
	n->col = col;
	n->str = "";
	n->weight = 1;
	return n;
}

static void node_reserve(struct config *c, struct config_node *n, size_t need)
{
	size_t cap = n->cap ? n->cap : 4;

	if (need <= n->cap)
		return;
	while (cap < need)
		cap *= 2;
	struct config_node **kids = arena_alloc(&c->arena, cap * sizeof(*kids));
	if (n->n)
		memcpy(kids, n->kids, n->n * sizeof(*kids));
	n->kids = kids;
	if (n->kind == CONFIG_MAP) {
		const char **keys = arena_alloc(&c->arena, cap * sizeof(*keys));
		int *lines = arena_alloc(&c->arena, cap * sizeof(*lines));
		if (n->n) {
			memcpy(keys, n->keys, n->n * sizeof(*keys));
			memcpy(lines, n->key_lines, n->n * sizeof(*lines));
		}
		n->keys = keys;
		n->key_lines = lines;
	}
	n->cap = cap;
}

static void add_weight(struct config_node *parent, const struct config_node *kid)
{
	parent->weight += kid->weight;
	if (parent->weight > 2 * CONFIG_MAX_WEIGHT)
		parent->weight = 2 * CONFIG_MAX_WEIGHT; /* saturate; checked by callers */
}

static void seq_append(struct config *c, struct config_node *seq, struct config_node *kid)
{
	node_reserve(c, seq, seq->n + 1);
	seq->kids[seq->n++] = kid;
	add_weight(seq, kid);
}

static long map_index(const struct config_node *m, const char *key)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->keys[i], key) == 0)
			return (long)i;
	return -1;
}

static void map_put(struct config *c, struct config_node *m, const char *key, int key_line,
		    struct config_node *val)
{
	long i = map_index(m, key);

	if (i >= 0) {
		m->kids[i] = val;
		m->key_lines[i] = key_line;
		return;
	}
	node_reserve(c, m, m->n + 1);
	m->keys[m->n] = arena_strndup(&c->arena, key, strlen(key));
	m->key_lines[m->n] = key_line;
	m->kids[m->n] = val;
	m->n++;
	add_weight(m, val);
}

static struct config_node *scalar_new(struct config *c, const char *s, size_t len,
				      enum config_stype t, int line, int col)
{
	struct config_node *n = node_new(c, CONFIG_SCALAR, line, col);

	n->str = arena_strndup(&c->arena, s, len);
	n->len = len;
	n->stype = t;
	return n;
}

struct config *config_new(void)
{
	struct config *c = xcalloc(1, sizeof(*c));

	arena_init(&c->arena);
	c->root = node_new(c, CONFIG_MAP, 0, 0);
	return c;
}

void config_free(struct config *c)
{
	if (!c)
		return;
	arena_release(&c->arena);
	free(c->warnings);
	free(c);
}

/* ---- scalar typing ----------------------------------------------------- */

/* Digits of the given base with '_' allowed after the first digit (YAML 1.1
 * style): returns the number of chars consumed, 0 if no digit first. */
static size_t scan_digits_yaml(const char *s, size_t n, int base)
{
	size_t i = 0;

	while (i < n) {
		int ch = (unsigned char)s[i];
		int ok = base == 16 ? isxdigit(ch) : base == 8 ? (ch >= '0' && ch <= '7') : isdigit(ch);
		if (ok || (ch == '_' && i > 0))
			i++;
		else
			break;
	}
	return i;
}

static int is_yaml_int(const char *s, size_t n)
{
	size_t i = 0;

	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	if (i + 2 <= n && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'o')) {
		int base = s[i + 1] == 'x' ? 16 : 8;
		size_t k = scan_digits_yaml(s + i + 2, n - i - 2, base);
		return k > 0 && i + 2 + k == n;
	}
	size_t k = scan_digits_yaml(s + i, n - i, 10);
	return k > 0 && i + k == n;
}

static int is_yaml_float(const char *s, size_t n)
{
	size_t i = 0, mant = 0;

	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	if (n - i == 4 && s[i] == '.' &&
	    (!strncmp(s + i, ".inf", 4) || !strncmp(s + i, ".Inf", 4) || !strncmp(s + i, ".INF", 4)))
		return 1;
	if (n == 4 && (!strncmp(s, ".nan", 4) || !strncmp(s, ".NaN", 4) || !strncmp(s, ".NAN", 4)))
		return 1;
	size_t k = scan_digits_yaml(s + i, n - i, 10);
	mant += k;
	i += k;
	if (i < n && s[i] == '.') {
		i++;
		while (i < n && (isdigit((unsigned char)s[i]) || (s[i] == '_' && mant > 0))) {
			if (s[i] != '_')
				mant++;
			i++;
		}
	}
	if (!mant)
		return 0;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		size_t d = 0;
		while (i < n && isdigit((unsigned char)s[i]))
			i++, d++;
		if (!d)
			return 0;
	}
	return i == n;
}

static enum config_stype resolve_plain(const char *s, size_t n)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };
	static const char *const trues[] = { "true", "True", "TRUE", "yes", "Yes", "YES",
					     "on", "On", "ON" };
	static const char *const falses[] = { "false", "False", "FALSE", "no", "No", "NO",
					      "off", "Off", "OFF" };

	for (size_t i = 0; i < sizeof(nulls) / sizeof(*nulls); i++)
		if (strlen(nulls[i]) == n && !memcmp(s, nulls[i], n))
			return CONFIG_SNULL;
	for (size_t i = 0; i < sizeof(trues) / sizeof(*trues); i++)
		if ((strlen(trues[i]) == n && !memcmp(s, trues[i], n)) ||
		    (strlen(falses[i]) == n && !memcmp(s, falses[i], n)))
			return CONFIG_SBOOL;
	if (is_yaml_int(s, n))
		return CONFIG_SINT;
	if (is_yaml_float(s, n))
		return CONFIG_SFLOAT;
	return CONFIG_SSTR;
}

/* Copies s without '_' into buf (size cap); 0 if it does not fit. */
static int strip_underscores(const char *s, char *buf, size_t cap)
{
	size_t j = 0;

	for (; *s; s++) {
		if (*s == '_')
			continue;
		if (j + 1 >= cap)
			return 0;
		buf[j++] = *s;
	}
	buf[j] = '\0';
	return 1;
}

/* Value of a YAML int; 0 ok, -1 out of range. */
static int yaml_int_value(const char *s, long long *out)
{
	char buf[128], *end;
	int neg = 0, base = 10;
	const char *p;

	if (!strip_underscores(s, buf, sizeof(buf)))
		return -1;
	p = buf;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'o')) {
		base = p[1] == 'x' ? 16 : 8;
		p += 2;
	}
	errno = 0;
	unsigned long long v = strtoull(p, &end, base);
	if (errno || *end)
		return -1;
	if (neg) {
		if (v > (unsigned long long)LLONG_MAX + 1)
			return -1;
		*out = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
	} else {
		if (v > (unsigned long long)LLONG_MAX)
			return -1;
		*out = (long long)v;
	}
	return 0;
}

static double yaml_float_value(const char *s)
{
	char buf[128];
	const char *p = s;
	int neg = 0;

	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (*p == '.' && (p[1] == 'i' || p[1] == 'I'))
		return neg ? -INFINITY : INFINITY;
	if (*p == '.' && (p[1] == 'n' || p[1] == 'N'))
		return NAN;
	if (!strip_underscores(s, buf, sizeof(buf)))
		return NAN;
	return strtod(buf, NULL);
}

/* Python's int(str), base 10: optional whitespace and sign, digits with
 * single underscores between them.  0 ok, -1 not an int, -2 out of range. */
static int py_int(const char *s, long long *out)
{
	char buf[128];
	size_t j = 0;
	const char *p = s, *q;

	while (isspace((unsigned char)*p))
		p++;
	q = p + strlen(p);
	while (q > p && isspace((unsigned char)q[-1]))
		q--;
	if (p < q && (*p == '+' || *p == '-'))
		buf[j++] = *p++;
	if (p == q || !isdigit((unsigned char)*p))
		return -1;
	for (; p < q; p++) {
		if (*p == '_' && p + 1 < q && isdigit((unsigned char)p[-1]) &&
		    isdigit((unsigned char)p[1]))
			continue;
		if (!isdigit((unsigned char)*p))
			return -1;
		if (j + 1 >= sizeof(buf))
			return -2;
		buf[j++] = *p;
	}
	buf[j] = '\0';
	errno = 0;
	long long v = strtoll(buf, NULL, 10);
	if (errno == ERANGE)
		return -2;
	*out = v;
	return 0;
}

/* Python's float(str): whitespace, sign, inf/infinity/nan in any case,
 * decimal with '_' between digits, exponent.  0 ok, -1 not a float. */
static int py_float(const char *s, double *out)
{
	char buf[128];
	size_t j = 0;
	const char *p = s, *q;
	int digits = 0;

	while (isspace((unsigned char)*p))
		p++;
	q = p + strlen(p);
	while (q > p && isspace((unsigned char)q[-1]))
		q--;
	if (p < q && (*p == '+' || *p == '-'))
		buf[j++] = *p++;
	size_t rest = (size_t)(q - p);
	if ((rest == 3 && !strncasecmp(p, "inf", 3)) || (rest == 8 && !strncasecmp(p, "infinity", 8))) {
		*out = buf[0] == '-' ? -INFINITY : INFINITY;
		return 0;
	}
	if (rest == 3 && !strncasecmp(p, "nan", 3)) {
		*out = NAN;
		return 0;
	}
	int seen_dot = 0, seen_exp = 0;
	for (; p < q; p++) {
		char ch = *p;
		if (j + 2 >= sizeof(buf))
			return -1;
		if (isdigit((unsigned char)ch)) {
			digits++;
			buf[j++] = ch;
		} else if (ch == '_' && p + 1 < q && isdigit((unsigned char)p[-1]) &&
			   isdigit((unsigned char)p[1])) {
			continue;
		} else if (ch == '.' && !seen_dot && !seen_exp) {
			seen_dot = 1;
			buf[j++] = ch;
		} else if ((ch == 'e' || ch == 'E') && digits && !seen_exp) {
			seen_exp = 1;
			buf[j++] = ch;
			if (p + 1 < q && (p[1] == '+' || p[1] == '-'))
				buf[j++] = *++p;
			if (p + 1 >= q || !isdigit((unsigned char)p[1]))
				return -1;
		} else {
			return -1;
		}
	}
	if (!digits)
		return -1;
	buf[j] = '\0';
	*out = strtod(buf, NULL);
	return 0;
}

/* ---- parsing ----------------------------------------------------------- */

struct anchor {
	const char *name;
	struct config_node *node;
};

struct frame {
	struct config_node *node;
	const char *anchor;      /* registered when the collection ends */
	const char *key;         /* mappings: pending key, NULL if expecting one */
	int key_line, key_col, key_plain;
	struct config_node **merges; /* values of "<<" keys */
	size_t nmerges, capmerges;
};

struct builder {
	struct config *c;
	const char *name;
	struct frame stack[CONFIG_MAX_DEPTH];
	int depth;
	struct anchor *anchors;
	size_t nanchors, capanchors;
	struct config_node *doc;
	int ndocs;
	struct aorta_error *e;
};

static enum aorta_status perr(struct builder *b, yaml_mark_t m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum aorta_status perr(struct builder *b, yaml_mark_t m, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return aorta_fail(b->e, AORTA_EINPUT, b->name, (long long)m.line + 1, -1, "column %d: %s",
			  (int)m.column + 1, msg);
}

static void anchor_add(struct builder *b, const char *name, struct config_node *n)
{
	if (!name)
		return;
	/* a redefined anchor shadows the old one from here on (YAML rule) */
	GROW(b->anchors, b->capanchors, b->nanchors + 1);
	b->anchors[b->nanchors].name = name;
	b->anchors[b->nanchors].node = n;
	b->nanchors++;
}

static struct config_node *anchor_find(const struct builder *b, const char *name)
{
	for (size_t i = b->nanchors; i-- > 0;)
		if (strcmp(b->anchors[i].name, name) == 0)
			return b->anchors[i].node;
	return NULL;
}

static enum aorta_status merge_into(struct builder *b, struct config_node *m,
				    const struct config_node *src, yaml_mark_t mark)
{
	if (src->kind != CONFIG_MAP)
		return perr(b, mark, "merge key '<<' expects a mapping or a list of mappings");
	for (size_t i = 0; i < src->n; i++)
		if (map_index(m, src->keys[i]) < 0)
			map_put(b->c, m, src->keys[i], src->key_lines[i], src->kids[i]);
	return AORTA_OK;
}

/* Hands a finished node (scalar, alias or collection) to the open parent. */
static enum aorta_status attach(struct builder *b, struct config_node *n, int plain, yaml_mark_t m)
{
	if (n->weight > CONFIG_MAX_WEIGHT)
		return perr(b, m, "document too large after alias expansion (over %.0f nodes)",
			    CONFIG_MAX_WEIGHT);
	if (b->depth == 0) {
		b->doc = n;
		return AORTA_OK;
	}
	struct frame *f = &b->stack[b->depth - 1];
	if (f->node->kind == CONFIG_SEQ) {
		seq_append(b->c, f->node, n);
		return AORTA_OK;
	}
	if (!f->key) {
		if (n->kind != CONFIG_SCALAR)
			return perr(b, m, "a mapping key must be a scalar");
		f->key = n->str;
		f->key_line = (int)m.line + 1;
		f->key_col = (int)m.column + 1;
		f->key_plain = plain;
		return AORTA_OK;
	}
	if (f->key_plain && strcmp(f->key, "<<") == 0) {
		GROW(f->merges, f->capmerges, f->nmerges + 1);
		f->merges[f->nmerges++] = n;
	} else {
		long i = map_index(f->node, f->key);
		if (i >= 0) {
			yaml_mark_t km = m;
			km.line = (size_t)(f->key_line - 1);
			km.column = (size_t)(f->key_col - 1);
			return perr(b, km, "duplicate key '%s' (first at line %d)", f->key,
				    f->node->key_lines[i]);
		}
		map_put(b->c, f->node, f->key, f->key_line, n);
	}
	f->key = NULL;
	return AORTA_OK;
}

static enum aorta_status open_collection(struct builder *b, enum config_kind kind,
					 const yaml_char_t *anchor, yaml_mark_t m)
{
	if (b->depth >= CONFIG_MAX_DEPTH)
		return perr(b, m, "nesting deeper than %d levels", CONFIG_MAX_DEPTH);
	struct frame *f = &b->stack[b->depth++];
	memset(f, 0, sizeof(*f));
	f->node = node_new(b->c, kind, (int)m.line + 1, (int)m.column + 1);
	if (anchor)
		f->anchor = arena_strndup(&b->c->arena, (const char *)anchor, strlen((const char *)anchor));
	return AORTA_OK;
}

static enum aorta_status close_collection(struct builder *b, yaml_mark_t m)
{
	struct frame *f = &b->stack[b->depth - 1];
	struct config_node *n = f->node;
	enum aorta_status st = AORTA_OK;

	/* merges: a single mapping, or a list of mappings where earlier wins */
	for (size_t i = 0; i < f->nmerges && st == AORTA_OK; i++) {
		const struct config_node *src = f->merges[i];
		if (src->kind == CONFIG_SEQ) {
			for (size_t k = 0; k < src->n && st == AORTA_OK; k++)
				st = merge_into(b, n, src->kids[k], m);
		} else {
			st = merge_into(b, n, src, m);
		}
	}
	free(f->merges);
	f->merges = NULL;
	if (st != AORTA_OK)
		return st;
	const char *anchor = f->anchor;
	b->depth--;
	anchor_add(b, anchor, n);
	return attach(b, n, 0, m);
}

static enum aorta_status on_scalar(struct builder *b, const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	const char *tag = (const char *)ev->data.scalar.tag;
	int plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	enum config_stype t;

	if (tag && strcmp(tag, "!") != 0) {
		if (strcmp(tag, YAML_STR_TAG) != 0)
			return perr(b, ev->start_mark, "unsupported tag '%s' (only !!str)", tag);
		t = CONFIG_SSTR;
	} else if (plain && !tag) {
		t = resolve_plain(s, len);
	} else {
		t = CONFIG_SSTR;
	}
	if (memchr(s, '\0', len))
		return perr(b, ev->start_mark, "a scalar contains a NUL character");
	struct config_node *n = scalar_new(b->c, s, len, t, (int)ev->start_mark.line + 1,
					   (int)ev->start_mark.column + 1);
	if (ev->data.scalar.anchor)
		anchor_add(b, arena_strndup(&b->c->arena, (const char *)ev->data.scalar.anchor,
					    strlen((const char *)ev->data.scalar.anchor)), n);
	return attach(b, n, plain, ev->start_mark);
}

static enum aorta_status parser_error(struct builder *b, const yaml_parser_t *p)
{
	const char *problem = p->problem ? p->problem : "invalid yaml";

	if (p->error == YAML_READER_ERROR)
		return aorta_fail(b->e, AORTA_EINPUT, b->name, 0, (long long)p->problem_offset,
				  "%s", problem);
	if (p->context)
		return aorta_fail(b->e, AORTA_EINPUT, b->name, (long long)p->problem_mark.line + 1, -1,
				  "column %d: %s (%s at line %d)", (int)p->problem_mark.column + 1,
				  problem, p->context, (int)p->context_mark.line + 1);
	return aorta_fail(b->e, AORTA_EINPUT, b->name, (long long)p->problem_mark.line + 1, -1,
			  "column %d: %s", (int)p->problem_mark.column + 1, problem);
}

/* Parses text into a node of c's arena (*out may be any kind; an empty
 * stream gives a null scalar). */
static enum aorta_status parse_node(struct config *c, const char *name, const char *text,
				    size_t len, struct config_node **out, struct aorta_error *e)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct builder b;
	enum aorta_status st = AORTA_OK;
	int done = 0;

	memset(&b, 0, sizeof(b));
	b.c = c;
	b.name = name;
	b.e = e;
	*out = NULL;
	if (!yaml_parser_initialize(&p))
		return aorta_fail(e, AORTA_EINTERNAL, name, 0, -1, "cannot initialise the yaml parser");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!done && st == AORTA_OK) {
		if (!yaml_parser_parse(&p, &ev)) {
			st = parser_error(&b, &p);
			break;
		}
		switch (ev.type) {
		case YAML_DOCUMENT_START_EVENT:
			if (++b.ndocs > 1)
				st = perr(&b, ev.start_mark, "more than one yaml document");
			break;
		case YAML_SCALAR_EVENT:
			st = on_scalar(&b, &ev);
			break;
		case YAML_SEQUENCE_START_EVENT:
			st = open_collection(&b, CONFIG_SEQ, ev.data.sequence_start.anchor, ev.start_mark);
			break;
		case YAML_MAPPING_START_EVENT:
			st = open_collection(&b, CONFIG_MAP, ev.data.mapping_start.anchor, ev.start_mark);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			st = close_collection(&b, ev.start_mark);
			break;
		case YAML_ALIAS_EVENT: {
			const char *a = (const char *)ev.data.alias.anchor;
			struct config_node *n = anchor_find(&b, a);
			if (!n)
				st = perr(&b, ev.start_mark, "unknown or recursive alias '*%s'", a);
			else
				st = attach(&b, n, 0, ev.start_mark);
			break;
		}
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	for (int i = 0; i < b.depth; i++)
		free(b.stack[i].merges);
	free(b.anchors);
	yaml_parser_delete(&p);
	if (st != AORTA_OK)
		return st;
	*out = b.doc ? b.doc : scalar_new(c, "", 0, CONFIG_SNULL, 1, 1);
	return AORTA_OK;
}

enum aorta_status config_parse(const char *name, const char *text, size_t len,
			       struct config **out, struct aorta_error *e)
{
	struct config *c = config_new();
	struct config_node *root;
	enum aorta_status st;

	*out = NULL;
	if (len == (size_t)-1)
		len = strlen(text);
	snprintf(c->path, sizeof(c->path), "%s", name ? name : "");
	st = parse_node(c, c->path, text, len, &root, e);
	if (st != AORTA_OK) {
		config_free(c);
		return st;
	}
	if (root->kind == CONFIG_MAP) {
		c->root = root;
	} else if (!(root->kind == CONFIG_SCALAR && root->stype == CONFIG_SNULL)) {
		st = aorta_fail(e, AORTA_EINPUT, c->path, root->line, -1,
				"expected a mapping at the top level, got %s",
				root->kind == CONFIG_SEQ ? "a list" : "a scalar");
		config_free(c);
		return st;
	}
	*out = c;
	return AORTA_OK;
}

static const char *path_ext(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *dot = strrchr(path, '.');

	return dot && (!slash || dot > slash) && dot != (slash ? slash + 1 : path) ? dot : "";
}

enum aorta_status config_load(const char *path, struct config **out, struct aorta_error *e)
{
	const char *ext = path_ext(path);
	int json = !strcasecmp(ext, ".json");
	char *buf;
	size_t len;
	enum aorta_status st;

	*out = NULL;
	if (!json && strcasecmp(ext, ".yaml") != 0 && strcasecmp(ext, ".yml") != 0)
		return *ext ? aorta_fail(e, AORTA_EINPUT, path, 0, -1,
					 "unsupported config file extension '%s' (expected .yaml, .yml or .json)",
					 ext)
			    : aorta_fail(e, AORTA_EINPUT, path, 0, -1,
					 "config file has no extension (expected .yaml, .yml or .json)");
	st = zread_all(path, CONFIG_MAX_BYTES + 1, &buf, &len, e);
	if (st != AORTA_OK)
		return st;
	if (len > CONFIG_MAX_BYTES) {
		free(buf);
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "config file larger than %u bytes",
				  CONFIG_MAX_BYTES);
	}
	/* JSON allows tabs as whitespace, YAML indentation does not; a raw tab
	 * is invalid inside a JSON string, so all of them are whitespace */
	if (json)
		for (size_t i = 0; i < len; i++)
			if (buf[i] == '\t')
				buf[i] = ' ';
	st = config_parse(path, buf, len, out, e);
	free(buf);
	return st;
}

/* ---- paths and overrides ----------------------------------------------- */

const struct config_node *config_find(const struct config *c, const char *path)
{
	const struct config_node *n = c->root;
	const char *p = path;

	if (!*p)
		return n;
	for (;;) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);
		const struct config_node *next = NULL;

		if (n->kind != CONFIG_MAP)
			return NULL;
		for (size_t i = 0; i < n->n; i++)
			if (strlen(n->keys[i]) == len && !memcmp(n->keys[i], p, len)) {
				next = n->kids[i];
				break;
			}
		if (!next)
			return NULL;
		n = next;
		if (!dot)
			return n;
		p = dot + 1;
	}
}

int config_is_null(const struct config *c, const char *path)
{
	const struct config_node *n = config_find(c, path);

	return n && n->kind == CONFIG_SCALAR && n->stype == CONFIG_SNULL;
}

/* Sets the value at path, creating intermediate mappings (a null
 * intermediate becomes a mapping).  origin is for messages. */
static enum aorta_status set_path(struct config *c, const char *path, struct config_node *val,
				  const char *origin, struct aorta_error *e)
{
	struct config_node *n = c->root;
	const char *p = path;
	char key[256];

	for (;;) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);

		if (len == 0 || len >= sizeof(key))
			return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "--override %s: %s key segment in '%s'",
					  origin, len ? "too long a" : "empty", path);
		memcpy(key, p, len);
		key[len] = '\0';
		if (!dot) {
			map_put(c, n, key, 0, val);
			return AORTA_OK;
		}
		long i = map_index(n, key);
		if (i < 0) {
			struct config_node *m = node_new(c, CONFIG_MAP, 0, 0);
			m->origin = val->origin;
			m->is_default = val->is_default;
			map_put(c, n, key, 0, m);
			n = m;
		} else if (n->kids[i]->kind == CONFIG_MAP) {
			n = n->kids[i];
		} else if (n->kids[i]->kind == CONFIG_SCALAR && n->kids[i]->stype == CONFIG_SNULL) {
			struct config_node *m = node_new(c, CONFIG_MAP, n->kids[i]->line, 0);
			m->origin = val->origin;
			n->kids[i] = m;
			n = m;
		} else {
			return aorta_fail(e, AORTA_EUSAGE, "", 0, -1,
					  "--override %s: '%.*s' is not a mapping", origin,
					  (int)(dot - path), path);
		}
		p = dot + 1;
	}
}

static void mark_origin(struct config_node *n, const char *origin, int is_default)
{
	n->origin = origin;
	n->is_default = is_default;
	n->line = 0;
	n->col = 0;
	for (size_t i = 0; i < n->n && n->kind != CONFIG_SCALAR; i++)
		mark_origin(n->kids[i], origin, is_default);
}

enum aorta_status config_override(struct config *c, const char *kv, struct aorta_error *e)
{
	const char *eq = strchr(kv, '=');
	struct config_node *val;
	const char *origin;

	if (!eq || eq == kv)
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "--override '%s': expected key=value", kv);
	origin = arena_strndup(&c->arena, kv, strlen(kv));
	const char *v = eq + 1;
	size_t vlen = strlen(v);
	long long iv;
	double dv;

	if (!strcasecmp(v, "true") || !strcasecmp(v, "false")) {
		val = scalar_new(c, v, vlen, CONFIG_SBOOL, 0, 0);
	} else if (py_int(v, &iv) == 0) {
		char buf[32];
		int k = snprintf(buf, sizeof(buf), "%lld", iv);
		val = scalar_new(c, buf, (size_t)k, CONFIG_SINT, 0, 0);
	} else if (py_int(v, &iv) == -2 || py_float(v, &dv) == 0) {
		/* Python ints are unbounded; a huge one stays a (range-checked) int */
		if (py_int(v, &iv) == -2)
			val = scalar_new(c, v, vlen, CONFIG_SINT, 0, 0);
		else
			val = scalar_new(c, v, vlen, CONFIG_SFLOAT, 0, 0);
	} else if (vlen >= 2 && v[0] == '[' && v[vlen - 1] == ']') {
		val = node_new(c, CONFIG_SEQ, 0, 0);
		const char *p = v + 1, *end = v + vlen - 1;
		const char *q = p;
		while (q < end && isspace((unsigned char)*q))
			q++;
		if (q < end) {
			for (;;) {
				const char *comma = memchr(p, ',', (size_t)(end - p));
				const char *ie = comma ? comma : end;
				const char *is = p;
				while (is < ie && isspace((unsigned char)*is))
					is++;
				while (ie > is && isspace((unsigned char)ie[-1]))
					ie--;
				seq_append(c, val, scalar_new(c, is, (size_t)(ie - is), CONFIG_SSTR, 0, 0));
				if (!comma)
					break;
				p = comma + 1;
			}
		}
	} else {
		val = scalar_new(c, v, vlen, CONFIG_SSTR, 0, 0);
	}
	mark_origin(val, origin, 0);
	char *path = arena_strndup(&c->arena, kv, (size_t)(eq - kv));
	return set_path(c, path, val, origin, e);
}

/* ---- typed getters ----------------------------------------------------- */

static enum aorta_status verror(const struct config *c, const struct config_node *n,
				enum aorta_status code, struct aorta_error *e, const char *what,
				const char *fmt, va_list ap)
{
	char msg[700];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n && n->origin) {
		/* "--override k=v: msg" when what is the override's own key */
		size_t klen = strcspn(n->origin, "=");
		if (strlen(what) == klen && !strncmp(what, n->origin, klen))
			return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "--override %s: %s", n->origin, msg);
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "--override %s: %s: %s", n->origin, what, msg);
	}
	if (n && n->is_default)
		return aorta_fail(e, code, c->path, 0, -1, "%s: default value: %s", what, msg);
	return aorta_fail(e, code, c->path, n ? n->line : 0, -1, "%s: %s", what, msg);
}

enum aorta_status config_error_at(const struct config *c, const struct config_node *n,
				  enum aorta_status code, struct aorta_error *e, const char *what,
				  const char *fmt, ...)
{
	va_list ap;
	enum aorta_status st;

	va_start(ap, fmt);
	st = verror(c, n, code, e, what, fmt, ap);
	va_end(ap);
	return st;
}

static const char *describe(const struct config_node *n, char *buf, size_t cap)
{
	if (n->kind == CONFIG_MAP)
		return "a mapping";
	if (n->kind == CONFIG_SEQ)
		return "a list";
	if (n->stype == CONFIG_SNULL)
		return "null";
	if (n->len > 60)
		snprintf(buf, cap, "'%.57s...'", n->str);
	else
		snprintf(buf, cap, "'%s'", n->str);
	return buf;
}

static enum aorta_status type_error(const struct config *c, const struct config_node *n,
				    struct aorta_error *e, const char *what, const char *expected)
{
	char buf[80];

	if (n->origin) {
		size_t klen = strcspn(n->origin, "=");
		if (strlen(what) == klen && !strncmp(what, n->origin, klen))
			return config_error_at(c, n, AORTA_EINPUT, e, what, "expected %s", expected);
	}
	return config_error_at(c, n, AORTA_EINPUT, e, what, "expected %s, got %s", expected,
			       describe(n, buf, sizeof(buf)));
}

enum aorta_status config_node_int(const struct config *c, const struct config_node *n,
				  const char *what, long long *out, struct aorta_error *e)
{
	long long v;

	if (n->kind == CONFIG_SCALAR && n->stype == CONFIG_SINT) {
		if (yaml_int_value(n->str, &v) != 0 && py_int(n->str, &v) != 0)
			return config_error_at(c, n, AORTA_EINPUT, e, what,
					       "integer '%s' out of range", n->str);
		*out = v;
		return AORTA_OK;
	}
	if (n->kind == CONFIG_SCALAR && n->stype == CONFIG_SSTR) {
		int r = py_int(n->str, &v);
		if (r == 0) {
			*out = v;
			return AORTA_OK;
		}
		if (r == -2)
			return config_error_at(c, n, AORTA_EINPUT, e, what,
					       "integer '%s' out of range", n->str);
	}
	return type_error(c, n, e, what, "an integer");
}

enum aorta_status config_node_double(const struct config *c, const struct config_node *n,
				     const char *what, double *out, struct aorta_error *e)
{
	long long iv;
	double dv;

	if (n->kind == CONFIG_SCALAR) {
		switch (n->stype) {
		case CONFIG_SINT:
			if (yaml_int_value(n->str, &iv) == 0 || py_int(n->str, &iv) == 0)
				*out = (double)iv;
			else
				*out = strtod(n->str, NULL); /* huge: lose precision, keep magnitude */
			return AORTA_OK;
		case CONFIG_SFLOAT:
			if (n->origin && py_float(n->str, &dv) == 0)
				*out = dv;
			else
				*out = yaml_float_value(n->str);
			return AORTA_OK;
		case CONFIG_SSTR:
			if (py_float(n->str, &dv) == 0) {
				*out = dv;
				return AORTA_OK;
			}
			break;
		default:
			break;
		}
	}
	return type_error(c, n, e, what, "a number");
}

enum aorta_status config_node_bool(const struct config *c, const struct config_node *n,
				   const char *what, int *out, struct aorta_error *e)
{
	if (n->kind == CONFIG_SCALAR && (n->stype == CONFIG_SBOOL || n->stype == CONFIG_SSTR)) {
		const char *s = n->str;
		if (!strcasecmp(s, "true") || (n->stype == CONFIG_SBOOL && (!strcasecmp(s, "yes") ||
									   !strcasecmp(s, "on")))) {
			*out = 1;
			return AORTA_OK;
		}
		if (!strcasecmp(s, "false") || (n->stype == CONFIG_SBOOL && (!strcasecmp(s, "no") ||
									    !strcasecmp(s, "off")))) {
			*out = 0;
			return AORTA_OK;
		}
	}
	return type_error(c, n, e, what, "a boolean");
}

enum aorta_status config_node_string(const struct config *c, const struct config_node *n,
				     const char *what, const char **out, struct aorta_error *e)
{
	if (n->kind == CONFIG_SCALAR && n->stype != CONFIG_SNULL) {
		*out = n->str;
		return AORTA_OK;
	}
	return type_error(c, n, e, what, "a string");
}

enum aorta_status config_get_int(const struct config *c, const char *path, long long *out,
				 struct aorta_error *e)
{
	const struct config_node *n = config_find(c, path);

	return n ? config_node_int(c, n, path, out, e) : AORTA_OK;
}

enum aorta_status config_get_double(const struct config *c, const char *path, double *out,
				    struct aorta_error *e)
{
	const struct config_node *n = config_find(c, path);

	return n ? config_node_double(c, n, path, out, e) : AORTA_OK;
}

enum aorta_status config_get_bool(const struct config *c, const char *path, int *out,
				  struct aorta_error *e)
{
	const struct config_node *n = config_find(c, path);

	return n ? config_node_bool(c, n, path, out, e) : AORTA_OK;
}

enum aorta_status config_get_string(const struct config *c, const char *path, const char **out,
				    struct aorta_error *e)
{
	const struct config_node *n = config_find(c, path);

	return n ? config_node_string(c, n, path, out, e) : AORTA_OK;
}

enum aorta_status config_get_list(const struct config *c, const char *path,
				  struct config_list *out, struct aorta_error *e)
{
	const struct config_node *n = config_find(c, path);

	if (!n)
		return AORTA_OK;
	if (n->kind != CONFIG_SEQ)
		return type_error(c, n, e, path, "a list");
	out->n = n->n;
	out->items = n->kids;
	return AORTA_OK;
}

/* ---- schema ------------------------------------------------------------ */

size_t config_edit_distance(const char *a, const char *b)
{
	/* optimal string alignment: insert, delete, substitute, and swap of two
	 * adjacent characters, each 1 ("modle" -> "model" is 1) */
	size_t la = strlen(a), lb = strlen(b), w = lb + 1;
	size_t *d = xmalloc((la + 1) * w * sizeof(*d));

	for (size_t i = 0; i <= la; i++)
		d[i * w] = i;
	for (size_t j = 0; j <= lb; j++)
		d[j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			size_t best = d[(i - 1) * w + j - 1] + (a[i - 1] != b[j - 1]);
			if (d[(i - 1) * w + j] + 1 < best)
				best = d[(i - 1) * w + j] + 1;
			if (d[i * w + j - 1] + 1 < best)
				best = d[i * w + j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[(i - 2) * w + j - 2] + 1 < best)
				best = d[(i - 2) * w + j - 2] + 1;
			d[i * w + j] = best;
		}
	}
	size_t r = d[la * w + lb];
	free(d);
	return r;
}

static int is_wildcard(const char *p)
{
	size_t n = strlen(p);

	return n && p[n - 1] == '*';
}

/* The schema entry for full (exact first, then a wildcard in the same
 * mapping), or NULL. */
static const struct config_schema *schema_lookup(const struct config_schema *s, size_t n,
						 const char *full)
{
	const char *last = strrchr(full, '.');
	size_t plen = last ? (size_t)(last - full) + 1 : 0; /* parent prefix incl. '.' */

	for (size_t i = 0; i < n; i++)
		if (!is_wildcard(s[i].path) && strcmp(s[i].path, full) == 0)
			return &s[i];
	for (size_t i = 0; i < n; i++) {
		const char *w = s[i].path;
		size_t wl = strlen(w);
		const char *wlast = strrchr(w, '.');
		size_t wplen = wlast ? (size_t)(wlast - w) + 1 : 0;
		if (!is_wildcard(w) || wplen != plen || strncmp(w, full, plen) != 0)
			continue;
		/* prefix of the last segment, without the '*' */
		if (strncmp(w + wplen, full + plen, wl - 1 - wplen) == 0)
			return &s[i];
	}
	return NULL;
}

static int is_section(const struct config_schema *s, size_t n, const char *full)
{
	size_t fl = strlen(full);

	for (size_t i = 0; i < n; i++)
		if (strncmp(s[i].path, full, fl) == 0 && s[i].path[fl] == '.')
			return 1;
	return 0;
}

/* "did you mean": the same last segment elsewhere, else the closest known
 * path (or section) by edit distance within a small budget. */
static const char *suggest(const struct config_schema *s, size_t n, const char *full,
			   char *buf, size_t cap)
{
	const char *last = strrchr(full, '.');
	const char *seg = last ? last + 1 : full;
	size_t best = (size_t)-1;

	for (size_t i = 0; i < n; i++) {
		const char *p = s[i].path, *pl = strrchr(p, '.');
		if (!is_wildcard(p) && strcmp(pl ? pl + 1 : p, seg) == 0 && strcmp(p, full) != 0) {
			snprintf(buf, cap, "%s", p);
			return buf;
		}
	}
	size_t budget = strlen(seg) / 3;
	if (budget < 1)
		budget = 1;
	if (budget > 3)
		budget = 3;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const char *p = s[i].path;
		if (is_wildcard(p))
			continue;
		/* the path and each of its section prefixes */
		char cand[256];
		snprintf(cand, sizeof(cand), "%s", p);
		for (;;) {
			size_t d = config_edit_distance(cand, full);
			if (d < best && d <= budget) {
				best = d;
				snprintf(buf, cap, "%s", cand);
			}
			char *dot = strrchr(cand, '.');
			if (!dot)
				break;
			*dot = '\0';
		}
	}
	return buf[0] ? buf : NULL;
}

static void add_warning(struct config *c, const struct config_node *n, int key_line,
			const char *full, const char *msg)
{
	char buf[1400];

	if (n->origin)
		snprintf(buf, sizeof(buf), "--override %s: %s", n->origin, msg);
	else if (key_line > 0)
		snprintf(buf, sizeof(buf), "'%s': line %d: %s: %s", c->path, key_line, full, msg);
	else
		snprintf(buf, sizeof(buf), "'%s': %s: %s", c->path, full, msg);
	GROW(c->warnings, c->capwarnings, c->nwarnings + 1);
	c->warnings[c->nwarnings++] = arena_strndup(&c->arena, buf, strlen(buf));
}

static enum aorta_status check_value(struct config *c, const struct config_schema *ent,
				     const struct config_node *v, const char *full,
				     struct aorta_error *e)
{
	int type = ent->type & 0xff;
	long long iv;
	double dv;
	int bv;
	const char *sv;

	if ((ent->type & CONFIG_NULLABLE) && v->kind == CONFIG_SCALAR && v->stype == CONFIG_SNULL)
		return AORTA_OK;
	switch (type) {
	case CONFIG_T_INT:
		return config_node_int(c, v, full, &iv, e);
	case CONFIG_T_FLOAT:
		return config_node_double(c, v, full, &dv, e);
	case CONFIG_T_BOOL:
		return config_node_bool(c, v, full, &bv, e);
	case CONFIG_T_STRING:
		return config_node_string(c, v, full, &sv, e);
	case CONFIG_T_LIST:
		if (v->kind != CONFIG_SEQ)
			return type_error(c, v, e, full, "a list");
		for (size_t i = 0; i < v->n; i++)
			if (v->kids[i]->kind != CONFIG_SCALAR) {
				char what[560];
				snprintf(what, sizeof(what), "%s[%zu]", full, i);
				return type_error(c, v->kids[i], e, what, "a scalar");
			}
		return AORTA_OK;
	case CONFIG_T_MAP:
		if (v->kind != CONFIG_MAP)
			return type_error(c, v, e, full, "a mapping");
		return AORTA_OK;
	default:
		return AORTA_OK;
	}
}

static enum aorta_status walk(struct config *c, const struct config_node *m, const char *prefix,
			      const struct config_schema *s, size_t n, struct aorta_error *e)
{
	char full[512];

	for (size_t i = 0; i < m->n; i++) {
		const struct config_node *v = m->kids[i];
		const struct config_schema *ent;
		enum aorta_status st;

		if (*prefix)
			snprintf(full, sizeof(full), "%s.%s", prefix, m->keys[i]);
		else
			snprintf(full, sizeof(full), "%s", m->keys[i]);
		ent = schema_lookup(s, n, full);
		if (ent && (ent->type & 0xff) == CONFIG_T_IGNORED) {
			add_warning(c, v, m->key_lines[i], full, "ignored (as upstream)");
			continue;
		}
		if (ent) {
			st = check_value(c, ent, v, full, e);
			if (st != AORTA_OK)
				return st;
			continue;
		}
		if (is_section(s, n, full)) {
			if (v->kind != CONFIG_MAP)
				return type_error(c, v, e, full, "a mapping");
			st = walk(c, v, full, s, n, e);
			if (st != AORTA_OK)
				return st;
			continue;
		}
		char sug[256];
		const char *g = suggest(s, n, full, sug, sizeof(sug));
		const struct config_node keyloc = { .kind = CONFIG_SCALAR, .line = m->key_lines[i],
						    .origin = v->origin, .is_default = v->is_default };
		if (g)
			return config_error_at(c, &keyloc, AORTA_EINPUT, e, full,
					       "unknown key '%s' (did you mean '%s'?)", full, g);
		return config_error_at(c, &keyloc, AORTA_EINPUT, e, full, "unknown key '%s'", full);
	}
	return AORTA_OK;
}

enum aorta_status config_validate(struct config *c, const struct config_schema *schema, size_t n,
				  struct aorta_error *e)
{
	return walk(c, c->root, "", schema, n, e);
}

void config_apply_defaults(struct config *c, const struct config_schema *schema, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct config_schema *s = &schema[i];
		struct config_node *val;
		struct aorta_error e;

		if (!s->def || is_wildcard(s->path) || (s->type & 0xff) == CONFIG_T_IGNORED ||
		    config_find(c, s->path))
			continue;
		/* a default that does not parse is a bug in the schema; skip it */
		if (parse_node(c, "(default)", s->def, strlen(s->def), &val, &e) != AORTA_OK)
			continue;
		mark_origin(val, NULL, 1);
		val->is_default = 1;
		set_path(c, s->path, val, "(default)", &e);
	}
}

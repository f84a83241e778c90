/*
 * config.h - YAML/JSON configuration trees, dotted overrides, typed getters
 * and a schema check.
 *
 * A struct config is a tree of mappings, sequences and scalars read from a
 * .yaml, .yml or .json file with libyaml's event API (JSON is read by the
 * same parser: flow JSON is YAML; in a .json file tabs count as spaces,
 * which YAML indentation would refuse).  Any other extension is refused, as
 * upstream does.  Every node keeps where it came from: its 1-based line in
 * the file, or the --override string that set it, or "default" for values
 * inserted from a schema; every error names that place and the dotted key.
 *
 * Ownership: one arena per config owns every node and string; config_free
 * releases it all at once.  Pointers returned by getters (strings, nodes,
 * lists) stay valid until config_free.  Not thread-safe while being modified
 * (overrides, defaults); concurrent reads of a finished config are fine.
 *
 * Scalars are typed when read, the way PyYAML types them, with two fixes:
 *  - plain (unquoted) scalars: "", ~, null -> null; true/false/yes/no/on/off
 *    in any of PyYAML's three casings -> bool; decimal, 0x, 0o integers
 *    (underscores allowed) -> int; decimals with an optional exponent
 *    ("1e-8" too, which PyYAML leaves a string), .inf, .nan -> float;
 *    anything else -> string.  Quoted scalars are always strings.
 *  - duplicate keys in one mapping are an error (PyYAML keeps the last).
 * Anchors and aliases are supported (an alias shares the anchored node, as
 * in PyYAML), and so are merge keys ("<<: *base", keys written in the
 * mapping win).  An alias to an anchor that is not yet complete (a cycle) is
 * an error, and so is a document whose alias expansion exceeds 1e6 nodes.
 *
 * Overrides follow upstream (UPSTREAM.md section 1): "a.b.c=value" creates
 * missing intermediate mappings, and the value is coerced in this order:
 * true/false (any case) -> bool; Python int() -> int; Python float() ->
 * float; "[a,b]" -> a sequence of STRINGS (items stripped, "[]" empty) ->
 * raw string.  Because of that, number getters also accept a string that is
 * entirely a number (as upstream's int()/float() casts would).
 *
 * Getters take a dotted path.  A missing key is not an error: the getter
 * returns AORTA_OK and leaves *out untouched, so callers pre-fill defaults
 * (config_find tells absent from present).  A present value of the wrong
 * type is AORTA_EINPUT with a message such as
 *   'config/x.yaml': line 12: training.batch_size: expected an integer, got 'abc'
 * or, when an --override set the value, AORTA_EUSAGE (the command line is
 * at fault) with
 *   --override training.batch_size=abc: expected an integer
 */
#ifndef AORTA_CONFIG_H
#define AORTA_CONFIG_H

#include <stddef.h>

#include "base/error.h"
#include "base/strtab.h"

enum config_kind { CONFIG_SCALAR, CONFIG_MAP, CONFIG_SEQ };

/* The resolved type of a scalar. */
enum config_stype { CONFIG_SNULL, CONFIG_SBOOL, CONFIG_SINT, CONFIG_SFLOAT, CONFIG_SSTR };

struct config_node {
	enum config_kind kind;
	enum config_stype stype;     /* scalars only */
	int line, col;               /* 1-based in the file; 0 if not from the file */
	const char *origin;          /* the "--override k=v" text that set it, or NULL */
	int is_default;              /* inserted by config_apply_defaults */
	const char *str;             /* scalar text (NUL-terminated), "" otherwise */
	size_t len;
	/* mappings: n keys with their lines; sequences: n items */
	size_t n, cap;
	const char **keys;
	int *key_lines;
	struct config_node **kids;
	double weight;               /* nodes after alias expansion (bounded) */
};

struct config {
	struct arena arena;
	char path[512];              /* the file, "" if built from a string */
	struct config_node *root;    /* always a mapping */
	const char **warnings;       /* messages collected by config_validate */
	size_t nwarnings, capwarnings;
};

/* A sequence as returned by config_get_list: items point into the tree. */
struct config_list {
	size_t n;
	struct config_node *const *items;
};

/* ---- loading ----------------------------------------------------------- */

/* Reads path (.yaml, .yml or .json, any case) into *out.  An empty file is an
 * empty mapping; a top level that is not a mapping is an error.  On error
 * *out is NULL and e says where (syntax errors: line, and the column in the
 * message).  The caller frees *out with config_free. */
enum aorta_status config_load(const char *path, struct config **out, struct aorta_error *e);

/* The same from a buffer; name is used in messages and for no other purpose
 * (no extension check).  len may be (size_t)-1 for a NUL-terminated text. */
enum aorta_status config_parse(const char *name, const char *text, size_t len,
			       struct config **out, struct aorta_error *e);

/* An empty configuration (root = empty mapping). */
struct config *config_new(void);
void config_free(struct config *c);       /* NULL is fine */

/* Applies one "--override" string "a.b.c=value" (upstream semantics, see
 * the top).  Errors: no '=', an empty key segment, or an intermediate key
 * that exists and is not a mapping (AORTA_EUSAGE). */
enum aorta_status config_override(struct config *c, const char *kv, struct aorta_error *e);

/* ---- lookup and typed getters ----------------------------------------- */

/* The node at a dotted path, or NULL if any segment is absent or a
 * non-mapping is in the way. */
const struct config_node *config_find(const struct config *c, const char *path);
int config_is_null(const struct config *c, const char *path); /* present and null */

enum aorta_status config_get_int(const struct config *c, const char *path, long long *out,
				 struct aorta_error *e);
enum aorta_status config_get_double(const struct config *c, const char *path, double *out,
				    struct aorta_error *e);
/* Booleans: YAML bools, and the strings "true"/"false" in any case. */
enum aorta_status config_get_bool(const struct config *c, const char *path, int *out,
				  struct aorta_error *e);
/* Any non-null scalar, as its text (so "8" and 8 both give "8"). */
enum aorta_status config_get_string(const struct config *c, const char *path, const char **out,
				    struct aorta_error *e);
/* A sequence (its items are nodes of any kind; see config_node_*). */
enum aorta_status config_get_list(const struct config *c, const char *path,
				  struct config_list *out, struct aorta_error *e);

/* The same checks on a node already found; what is the dotted name used in
 * messages ("optimizer.betas[1]"). */
enum aorta_status config_node_int(const struct config *c, const struct config_node *n,
				  const char *what, long long *out, struct aorta_error *e);
enum aorta_status config_node_double(const struct config *c, const struct config_node *n,
				     const char *what, double *out, struct aorta_error *e);
enum aorta_status config_node_bool(const struct config *c, const struct config_node *n,
				   const char *what, int *out, struct aorta_error *e);
enum aorta_status config_node_string(const struct config *c, const struct config_node *n,
				     const char *what, const char **out, struct aorta_error *e);

/* Fills e with "where: what: message" for node n (n may be NULL: no line)
 * and returns code; for callers' own semantic checks. */
enum aorta_status config_error_at(const struct config *c, const struct config_node *n,
				  enum aorta_status code, struct aorta_error *e, const char *what,
				  const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* ---- schema ------------------------------------------------------------ */

enum config_type {
	CONFIG_T_INT,      /* integer */
	CONFIG_T_FLOAT,    /* any number */
	CONFIG_T_BOOL,
	CONFIG_T_STRING,   /* any non-null scalar */
	CONFIG_T_LIST,     /* sequence of scalars */
	CONFIG_T_MAP,      /* mapping, contents not checked */
	CONFIG_T_ANY,      /* anything, not checked */
	CONFIG_T_IGNORED,  /* accepted with a warning "ignored (as upstream)" */
};
#define CONFIG_NULLABLE 0x100  /* or'ed into type: null is also accepted */

/* One known key.  path is dotted; a last segment ending in '*' matches every
 * key with that prefix in that mapping ("distributed.*",
 * "training.lightweight_op_*") when no exact entry does.  def is the default
 * as YAML text ("8", "[0.9, 0.98]", "{}", "null"), or NULL for none.
 * Parents ("training") are implied by their children. */
struct config_schema {
	const char *path;
	int type;          /* enum config_type, maybe | CONFIG_NULLABLE */
	const char *def;
	const char *help;
};

/* Checks every key of c against the schema: an unknown key is an error with
 * its line and, when one is close by edit distance, "did you mean 'x'"; a
 * wrong type is an error with the line.  IGNORED keys add a warning to
 * c->warnings.  Returns the first error. */
enum aorta_status config_validate(struct config *c, const struct config_schema *schema, size_t n,
				  struct aorta_error *e);

/* Inserts each schema default whose key is absent (node->is_default = 1). */
void config_apply_defaults(struct config *c, const struct config_schema *schema, size_t n);

/* Edit distance (Levenshtein plus adjacent swaps) of two strings (for suggestions; exposed for tests). */
size_t config_edit_distance(const char *a, const char *b);

#endif

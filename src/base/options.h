/*
 * options.h - option tables that parse argv and generate -h.
 *
 * A command declares a NULL-terminated array of struct opt (OPT_BOOL,
 * OPT_INT, ...) pointing at its own variables; opt_parse fills them and
 * returns the positional arguments.  -h/--help prints the usage built from
 * the same table, so help cannot go stale.  "--name=value" and
 * "--name value" both work; "--" ends options.
 */
#ifndef AORTA_OPTIONS_H
#define AORTA_OPTIONS_H

#include <stdio.h>

#include "base/error.h"

enum opt_type { OPTT_END = 0, OPTT_BOOL, OPTT_INT, OPTT_DOUBLE, OPTT_STRING, OPTT_LIST };

struct opt {
	enum opt_type type;
	char short_name;        /* 0 if none */
	const char *long_name;
	void *value;            /* int*, double*, const char**, struct opt_list* */
	const char *argh;       /* argument name in help, e.g. "FILE" */
	const char *help;
};

struct opt_list { const char **v; int n, cap; }; /* repeatable option */

#define OPT_BOOL(s, l, v, h) { OPTT_BOOL, (s), (l), (v), NULL, (h) }
#define OPT_INT(s, l, v, a, h) { OPTT_INT, (s), (l), (v), (a), (h) }
#define OPT_DOUBLE(s, l, v, a, h) { OPTT_DOUBLE, (s), (l), (v), (a), (h) }
#define OPT_STRING(s, l, v, a, h) { OPTT_STRING, (s), (l), (v), (a), (h) }
#define OPT_LIST(s, l, v, a, h) { OPTT_LIST, (s), (l), (v), (a), (h) }
#define OPT_END() { OPTT_END, 0, NULL, NULL, NULL, NULL }

/* Returns AORTA_OK, AORTA_EUSAGE (message printed) or -1 when help was
 * printed (the command exits 0).  Positional arguments are left in
 * argv[0..*nargs) (argv is permuted). */
/* What -h prints: the help text (the default), or, for the hidden
 * `aorta help --man CMD` and `aorta help --options CMD` that generate the
 * man pages and the shell completion at build time, the same table as a man
 * page section or as the option names, one per line. */
enum opt_help_format { OPT_HELP_TEXT, OPT_HELP_MAN, OPT_HELP_WORDS };
extern enum opt_help_format opt_help_format;

int opt_parse(int argc, char **argv, const struct opt *opts, const char *usage,
	      const char *description, int *nargs);
void opt_usage(FILE *f, const struct opt *opts, const char *usage, const char *description);

#endif

/*
 * options.c - table-driven option parsing and help.
 *
 * The one numeric parser of every command: integers must be whole and in
 * int range, numbers finite (nan and inf are usage errors, so no range
 * check downstream can be passed by a NaN).
 */
#include "base/options.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum opt_help_format opt_help_format = OPT_HELP_TEXT;

/* roff text: backslashes escaped, a line that starts with . or ' kept as
 * text, - as a minus sign where it is part of an option name */
static void roff_text(FILE *f, const char *s, int dashes)
{
	int bol = 1;
	for (; *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", f);
		bol = *s == '\n';
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-' && dashes)
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

/* The same table as a man page section (OPT_HELP_MAN): the usage as the
 * synopsis, the description, one .TP entry per option; or the option names
 * one per line (OPT_HELP_WORDS) for shell completion. */
static void opt_usage_generated(FILE *f, const struct opt *opts, const char *usage, const char *description)
{
	if (opt_help_format == OPT_HELP_WORDS) {
		for (const struct opt *o = opts; o->type; o++) {
			if (o->short_name)
				fprintf(f, "-%c\n", o->short_name);
			fprintf(f, "--%s\n", o->long_name);
		}
		fputs("-h\n--help\n", f);
		return;
	}
	fputs(".SH SYNOPSIS\n.nf\n", f);
	roff_text(f, usage, 0);
	fputs("\n.fi\n", f);
	if (description) {
		fputs(".SH DESCRIPTION\n", f);
		/* as -h shows it: line breaks kept (no fill) */
		fputs(".nf\n", f);
		roff_text(f, description, 0);
		fputs("\n.fi\n", f);
	}
	fputs(".SH OPTIONS\n", f);
	for (const struct opt *o = opts; o->type; o++) {
		fputs(".TP\n", f);
		if (o->short_name)
			fprintf(f, "\\fB\\-%c\\fR, ", o->short_name);
		fputs("\\fB\\-\\-", f);
		roff_text(f, o->long_name, 1);
		fputs("\\fR", f);
		if (o->argh) {
			fputs(" \\fI", f);
			roff_text(f, o->argh, 0);
			fputs("\\fR", f);
		}
		fputc('\n', f);
		roff_text(f, o->help, 0);
		fputc('\n', f);
	}
	fputs(".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nshow this help\n", f);
}

void opt_usage(FILE *f, const struct opt *opts, const char *usage, const char *description)
{
	if (opt_help_format != OPT_HELP_TEXT && f != stderr) { /* usage errors stay text */
		opt_usage_generated(f, opts, usage, description);
		return;
	}
	fprintf(f, "usage: %s\n", usage);
	if (description)
		fprintf(f, "\n%s\n", description);
	fputc('\n', f);
	for (const struct opt *o = opts; o->type; o++) {
		char left[64];
		int n = 0;
		if (o->short_name)
			n = snprintf(left, sizeof(left), "-%c, ", o->short_name);
		else
			n = snprintf(left, sizeof(left), "    ");
		snprintf(left + n, sizeof(left) - (size_t)n, "--%s%s%s", o->long_name,
			 o->argh ? " " : "", o->argh ? o->argh : "");
		fprintf(f, "    %-30s %s\n", left, o->help);
	}
	fprintf(f, "    %-30s %s\n", "-h, --help", "show this help");
}

static const struct opt *find_long(const struct opt *opts, const char *name, size_t len)
{
	for (const struct opt *o = opts; o->type; o++)
		if (strlen(o->long_name) == len && !strncmp(o->long_name, name, len))
			return o;
	return NULL;
}

static const struct opt *find_short(const struct opt *opts, char c)
{
	for (const struct opt *o = opts; o->type; o++)
		if (o->short_name == c)
			return o;
	return NULL;
}

static int set_value(const struct opt *o, const char *arg)
{
	char *end;

	switch (o->type) {
	case OPTT_BOOL:
		*(int *)o->value = 1;
		return 0;
	case OPTT_INT: {
		errno = 0;
		long v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < -2147483647L || v > 2147483647L) {
			fprintf(stderr, "aorta: error: option '--%s' expects an integer, got '%s'\n",
				o->long_name, arg);
			return -1;
		}
		*(int *)o->value = (int)v;
		return 0;
	}
	case OPTT_DOUBLE: {
		errno = 0;
		double v = strtod(arg, &end);
		if (errno || end == arg || *end || !isfinite(v)) {
			fprintf(stderr, "aorta: error: option '--%s' expects a finite number, got '%s'\n",
				o->long_name, arg);
			return -1;
		}
		*(double *)o->value = v;
		return 0;
	}
	case OPTT_STRING:
		*(const char **)o->value = arg;
		return 0;
	default:
		return -1;
	}
}

int opt_parse(int argc, char **argv, const struct opt *opts, const char *usage,
	      const char *description, int *nargs)
{
	int npos = 0, only_pos = 0;

	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		const struct opt *o = NULL;
		const char *val = NULL;

		if (only_pos || a[0] != '-' || !a[1]) {
			argv[npos++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = 1;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			opt_usage(stdout, opts, usage, description);
			return -1;
		}
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
			o = find_long(opts, a + 2, len);
			if (eq)
				val = eq + 1;
		} else {
			o = find_short(opts, a[1]);
			if (o && a[2]) { /* -j4: the value attached */
				if (o->type == OPTT_BOOL)
					o = NULL;
				else
					val = a + 2;
			}
		}
		if (!o) {
			fprintf(stderr, "aorta: error: unknown option '%s'\n", a);
			opt_usage(stderr, opts, usage, NULL);
			return AORTA_EUSAGE;
		}
		if (o->type == OPTT_BOOL) {
			if (val) {
				fprintf(stderr, "aorta: error: option '--%s' takes no value\n", o->long_name);
				return AORTA_EUSAGE;
			}
		} else if (!val) {
			if (i + 1 >= argc) {
				fprintf(stderr, "aorta: error: option '--%s' needs %s\n", o->long_name,
					o->argh ? o->argh : "a value");
				return AORTA_EUSAGE;
			}
			val = argv[++i];
		}
		if (o->type == OPTT_LIST) {
			struct opt_list *l = o->value;
			if (l->n == l->cap) {
				l->cap = l->cap ? l->cap * 2 : 4;
				l->v = xrealloc(l->v, (size_t)l->cap * sizeof(*l->v));
			}
			l->v[l->n++] = val;
			continue;
		}
		if (set_value(o, val) < 0)
			return AORTA_EUSAGE;
	}
	*nargs = npos;
	return AORTA_OK;
}

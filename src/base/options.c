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

void opt_usage(FILE *f, const struct opt *opts, const char *usage, const char *description)
{
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

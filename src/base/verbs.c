/*
 * verbs.c - the verb table (verbs.h).
 */
#include "base/verbs.h"

#include <string.h>

#include "base/error.h"

const struct verb *verb_find(const struct verb *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, v[i].name))
			return &v[i];
	return NULL;
}

void verbs_print(FILE *f, const struct verb *v, size_t n, int width)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "    %-*s %s\n", width, v[i].name, v[i].help);
}

int verbs_dispatch(const char *cmd, const struct verb *v, size_t n, void (*usage)(FILE *f), int argc,
		   char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return AORTA_EUSAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help")) {
		usage(stdout);
		return AORTA_OK;
	}
	if (name[0] == '-') {
		fprintf(stderr, "aorta: error: unknown option '%s' (aorta %s VERB [options]; -h lists the verbs)\n",
			name, cmd);
		return AORTA_EUSAGE;
	}
	const struct verb *x = verb_find(v, n, name);
	if (x)
		return x->fn(argc - 1, argv + 1);
	fprintf(stderr, "aorta: error: unknown %s verb '%s' (", cmd, name);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s%s", i ? ", " : "", v[i].name);
	fprintf(stderr, ")\n");
	return AORTA_EUSAGE;
}

/*
 * verbs.h - the one verb table: aorta's commands (main.c) and the verbs of
 * a command that has them (aorta hwq VERB, aorta sweep VERB) are each a
 * table of struct verb, looked up, listed and dispatched here.
 */
#ifndef AORTA_VERBS_H
#define AORTA_VERBS_H

#include <stddef.h>
#include <stdio.h>

struct verb {
	const char *name;
	int (*fn)(int argc, char **argv); /* argv[0] is the verb; returns the exit code */
	const char *help;                 /* one line for the list */
};

#define NVERBS(t) (sizeof(t) / sizeof((t)[0]))

/* The verb named name, NULL when none. */
const struct verb *verb_find(const struct verb *v, size_t n, const char *name);
/* "    NAME HELP" a line each, the names padded to width. */
void verbs_print(FILE *f, const struct verb *v, size_t n, int width);
/* aorta CMD VERB [args]: runs argv[1]'s verb with argc - 1, argv + 1.
 * No verb: usage on stderr, exit 2; -h, --help, help: usage on stdout,
 * exit 0; an option or an unknown verb: an error naming the verbs, exit 2. */
int verbs_dispatch(const char *cmd, const struct verb *v, size_t n, void (*usage)(FILE *f), int argc,
		   char **argv);

#endif

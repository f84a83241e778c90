/*
 * trace_util.h - small queries on a struct trace that reader tests share.
 */
#ifndef AORTA_TEST_TRACE_UTIL_H
#define AORTA_TEST_TRACE_UTIL_H

#include <string.h>

#include "timeline/timeline.h"

/* Sum of span durations in ns. */
static inline long long span_sum(const struct trace *t)
{
	long long s = 0;

	for (size_t i = 0; i < t->n; i++)
		s += t->end_ns[i] - t->start_ns[i];
	return s;
}

/* Spans whose name is exactly `name`. */
static inline size_t count_name(const struct trace *t, const char *name)
{
	size_t c = 0;

	for (size_t i = 0; i < t->n; i++)
		c += strcmp(strtab_get(&t->names, t->name[i]), name) == 0;
	return c;
}

#endif

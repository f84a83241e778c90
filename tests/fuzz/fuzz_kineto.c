/*
 * fuzz_kineto.c - libFuzzer target for the Kineto JSON reader.
 *
 * Feeds the input to ingest_kineto_mem.  Inputs of odd length run with a
 * 32-byte window (AORTA_KINETO_WINDOW) so the refill/retry/grow path is
 * fuzzed at every boundary; even lengths use the default 8 MiB window.
 * The contract checked: no crash, no sanitizer report, and either AORTA_OK
 * with one trace per device seen appended (at least one) or AORTA_EINPUT
 * with nothing appended.
 * Differential: every input is read a second time with the layout fast
 * path off (AORTA_KINETO_NOFAST); status, error offset and every span must
 * be the same.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"

static int same_trace(const struct trace *a, const struct trace *b)
{
	if (a->n != b->n || a->nsteps != b->nsteps || a->rank != b->rank || a->device != b->device)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->start_ns[i] != b->start_ns[i] || a->end_ns[i] != b->end_ns[i] ||
		    a->stream[i] != b->stream[i] || a->hint[i] != b->hint[i] || a->bytes[i] != b->bytes[i] ||
		    strcmp(strtab_get(&a->names, a->name[i]), strtab_get(&b->names, b->name[i])))
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace_set ts = { 0 };
	struct aorta_error e;
	struct ingest_opts o = { .rules = NULL, .rank_hint = -1 };
	enum aorta_status st;

	if (size & 1)
		setenv("AORTA_KINETO_WINDOW", "32", 1);
	else
		unsetenv("AORTA_KINETO_WINDOW");
	st = ingest_kineto_mem("fuzz", data, size, &o, &ts, &e);
	/* a trace per device seen (at least one), or an input error and none */
	if (st == AORTA_OK ? ts.n < 1 : st != AORTA_EINPUT || ts.n != 0)
		abort();

	struct trace_set ts2 = { 0 };
	struct aorta_error e2;
	setenv("AORTA_KINETO_NOFAST", "1", 1);
	enum aorta_status st2 = ingest_kineto_mem("fuzz", data, size, &o, &ts2, &e2);
	unsetenv("AORTA_KINETO_NOFAST");
	if (st2 != st || ts2.n != ts.n)
		abort();
	if (st != AORTA_OK && e2.offset != e.offset)
		abort();
	for (size_t k = 0; st == AORTA_OK && k < ts.n; k++)
		if (!same_trace(ts.t[k], ts2.t[k]))
			abort();
	trace_set_release(&ts2);
	trace_set_release(&ts);
	return 0;
}

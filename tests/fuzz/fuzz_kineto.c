/*
 * fuzz_kineto.c - libFuzzer target for the Kineto JSON reader.
 *
 * Feeds the input to ingest_kineto_mem.  Inputs of odd length run with a
 * 32-byte window (AORTA_KINETO_WINDOW) so the refill/retry/grow path is
 * fuzzed at every boundary; even lengths use the default 8 MiB window.
 * The contract checked: no crash, no sanitizer report, and either AORTA_OK
 * with exactly one trace appended or AORTA_EINPUT with nothing appended.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ingest/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace_set ts = { 0 };
	struct aorta_error e;
	struct ingest_opts o = { NULL, -1 };
	enum aorta_status st;

	if (size & 1)
		setenv("AORTA_KINETO_WINDOW", "32", 1);
	else
		unsetenv("AORTA_KINETO_WINDOW");
	st = ingest_kineto_mem("fuzz", data, size, &o, &ts, &e);
	if (st == AORTA_OK ? ts.n != 1 : st != AORTA_EINPUT || ts.n != 0)
		abort();
	trace_set_release(&ts);
	return 0;
}

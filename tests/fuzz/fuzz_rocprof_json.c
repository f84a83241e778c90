/*
 * fuzz_rocprof_json.c - libFuzzer target for ingest_rocprof_json_mem: any input must give
 * either AORTA_OK with traces or an error record, never a crash or a leak.
 * Seeds: tests/fuzz/corpus_rocprof_json/ (hand-written, small).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ingest/ingest.h"
#include "ingest/ingest_mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace_set s;
	struct aorta_error e;
	struct ingest_opts o = { NULL, -1 };
	enum aorta_status st;

	memset(&s, 0, sizeof(s));
	st = ingest_rocprof_json_mem("fuzz", data, size, &o, &s, &e);
	if (st != AORTA_OK && s.n != 0)
		__builtin_trap(); /* a failing reader must append nothing */
	trace_set_release(&s);
	return 0;
}

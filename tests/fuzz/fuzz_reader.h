/*
 * fuzz_reader.h - the body every in-memory reader's libFuzzer target shares:
 * any input must give AORTA_OK with traces or an error record (and then no
 * traces), never a crash, a hang or a leak.  A target file defines
 * FUZZ_READER as the reader's _mem entry point and includes this header.
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
	struct ingest_opts o = { .rules = NULL, .rank_hint = -1 };
	enum aorta_status st;

	memset(&s, 0, sizeof(s));
	st = FUZZ_READER("fuzz", data, size, &o, &s, &e);
	if (st != AORTA_OK && s.n != 0)
		__builtin_trap(); /* a failing reader must append nothing */
	trace_set_release(&s);
	return 0;
}

/*
 * fuzz_flightrec.c - libFuzzer target for the Flight Recorder reader
 * (fr_dump_mem: the restricted pickle reader and the JSON reader, then the
 * dump model): any input gives a dump or an error with its byte offset,
 * never a crash, a hang or a leak; a dump read is also matched (one rank:
 * the diagnosis runs) and packed and unpacked for MPI.  Seeds:
 * tests/fuzz/corpus_flightrec/ (a gloo dump of tests/data/flightrec in
 * both encodings and hostile pickles).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_io/analysis_io.h"
#include "flightrec/fr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fr_dump *d = NULL;
	struct aorta_error e;

	if (fr_dump_mem("fuzz_3", data, size, &d, &e) != AORTA_OK) {
		if (d)
			__builtin_trap(); /* a failing reader leaves nothing */
		return 0;
	}
	struct bytes b = { 0 };
	fr_dump_pack(d, &b);
	size_t off = 0;
	struct fr_dump *u = NULL;
	if (fr_dump_unpack(b.p, b.n, &off, &u, &e) != AORTA_OK || off != b.n)
		__builtin_trap(); /* what was packed unpacks */
	free(b.p);
	struct fr_run *r = calloc(1, sizeof(*r));
	if (!r)
		return 0;
	fr_run_add(r, d);
	if (fr_run_ranks(r, &e) == AORTA_OK)
		fr_run_diagnose(r);
	fr_run_free(r);
	fr_dump_free(u);
	return 0;
}

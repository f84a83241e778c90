/*
 * fuzz_analysis_json.c - libFuzzer target for analysis_json_parse, the
 * reader of saved analyses (aorta.analysis/1, /2): any input gives
 * AORTA_OK with ranks, or an error naming a field, never a crash, a hang
 * or a leak.  Seeds: tests/fuzz/corpus_analysis_json/ (a small analysis of
 * tests/data/tiny and damaged copies).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_io/analysis_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct analysis a;
	struct aorta_error e;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (analysis_json_parse("fuzz", text, &a, &e) == AORTA_OK) {
		if (!a.n && !a.fr)
			__builtin_trap(); /* a valid analysis holds ranks, or a Flight Recorder diagnosis */
		analysis_free(&a);
	} else if (a.n || a.r) {
		__builtin_trap(); /* a failing reader leaves nothing */
	}
	free(text);
	return 0;
}

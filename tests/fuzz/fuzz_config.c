/*
 * fuzz_config.c - libFuzzer target for the YAML/JSON configuration reader
 * (config_parse) and what commands do next with a tree: dotted overrides and
 * typed getters.
 *
 * Any input must give a tree or an error record naming a place, never a
 * crash, a hang (alias expansion is capped at 1e6 nodes) or a leak.  The
 * first line of the input, when it has the form "a.b=c", is also applied as
 * an override, and a few well-known keys are read with every getter.
 *
 * Seeds: tests/fuzz/corpus_config/ (train configurations, anchors and merge
 * keys, an alias bomb, duplicate keys, tabs, a BOM, nan/inf scalars).
 * Run: make fuzz && build-fuzz/fuzz_config -max_total_time=60 WORK tests/fuzz/corpus_config
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/error.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	aorta_quiet = 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config *c = NULL;
	struct aorta_error e = { 0 };
	static const char *const keys[] = { "training.batch_size", "training.lr", "model.dim",
					    "optimizer.betas", "a.b", "a", "x" };

	if (config_parse("fuzz.yaml", (const char *)data, size, &c, &e) != AORTA_OK) {
		if (c || !e.msg[0])
			__builtin_trap(); /* an error gives no tree and says why */
		return 0;
	}
	const char *nl = memchr(data, '\n', size);
	size_t l = nl ? (size_t)(nl - (const char *)data) : size;
	if (l < 256 && memchr(data, '=', l)) {
		char kv[256];
		memcpy(kv, data, l);
		kv[l] = '\0';
		if (!memchr(kv, '\0', l))
			(void)config_override(c, kv, &e);
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		long long iv;
		double dv;
		int bv;
		const char *sv;
		struct config_list lv;
		(void)config_get_int(c, keys[i], &iv, &e);
		(void)config_get_double(c, keys[i], &dv, &e);
		(void)config_get_bool(c, keys[i], &bv, &e);
		(void)config_get_string(c, keys[i], &sv, &e);
		(void)config_get_list(c, keys[i], &lv, &e);
		(void)config_is_null(c, keys[i]);
	}
	config_free(c);
	return 0;
}

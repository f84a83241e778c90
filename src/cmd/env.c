/*
 * env.c - `aorta env`: the environment snapshot (src/sweep/envsnap.c).
 *
 *   aorta env [--json FILE] [--field KEY]
 *
 * Prints "key: value" lines (unset or not found: "not found"); --json
 * writes aorta.env/1; --field prints one value and exits 0, or exits 1 when
 * that value was not found (2 when no snapshot has the key).
 */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/options.h"
#include "cmd/cmds.h"
#include "sweep/envsnap.h"

int cmd_env(int argc, char **argv)
{
	const char *json = NULL, *field = NULL;
	int nargs = 0;
	struct opt opts[] = {
		OPT_STRING(0, "json", &json, "FILE", "write the snapshot as JSON (schema aorta.env/1)"),
		OPT_STRING(0, "field", &field, "KEY", "print one value (e.g. nccl.version, env.NCCL_DEBUG)"),
		OPT_END(),
	};
	int st = opt_parse(argc, argv, opts, "aorta env [--json FILE] [--field KEY]",
			   "The environment a run sees: driver, CUDA runtime, NCCL and cuBLAS versions (asked from the "
			   "libraries this environment would load; nothing is linked), GPUs, host, and the variables that "
			   "change communication (NCCL_*, CUDA_*, TORCH_*, OMP_NUM_THREADS, LD_LIBRARY_PATH, ...).",
			   &nargs);
	if (st < 0)
		return AORTA_OK;
	if (st)
		return st;
	if (nargs) {
		fprintf(stderr, "aorta: error: unexpected argument '%s'\n", argv[0]);
		return AORTA_EUSAGE;
	}
	struct env_snapshot s;
	env_snapshot_take(&s);
	int rc = AORTA_OK;
	if (field) {
		const struct env_field *f = env_snapshot_find(&s, field);
		if (!f && !strncmp(field, "env.", 4)) {
			rc = AORTA_ECHECK; /* a variable that is not set */
		} else if (!f) {
			fprintf(stderr, "aorta: error: unknown field '%s' ('aorta env' lists them)\n", field);
			rc = AORTA_EUSAGE;
		} else if (!f->val) {
			rc = AORTA_ECHECK;
		} else {
			printf("%s\n", f->val);
		}
	} else if (!json) {
		for (size_t i = 0; i < s.n; i++)
			printf("%-36s %s\n", s.f[i].key, s.f[i].val ? s.f[i].val : "not found");
	}
	if (json) {
		struct aorta_error e = { 0 };
		if (env_snapshot_write_json(&s, json, &e)) {
			aorta_error_print(&e);
			rc = e.code;
		}
	}
	env_snapshot_release(&s);
	return rc;
}

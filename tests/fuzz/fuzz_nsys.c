/*
 * fuzz_nsys.c - libFuzzer target for the two SQLite readers (ingest_nsys,
 * ingest_rocpd).
 *
 * The readers take a path, so each input is written to a fresh mkstemp file
 * under $TMPDIR (default /tmp) and both readers run on it.  SQLite itself is
 * hardened against corrupt files; what this target exercises is our side:
 * schema probing, optional columns, NULL and wrongly typed values, names,
 * rank buckets, error paths and cleanup.  A crafted file can also hold a
 * view that never ends (e.g. a recursive CTE named rocpd_kernel_dispatch),
 * so the target caps SQLite's work per reader with sqlu_set_op_limit; such
 * inputs then fail cleanly with "took more than the query budget".
 *
 * Build and run (60 s, seeds in tests/fuzz/corpus_sqlite/):
 *   clang -std=c11 -D_GNU_SOURCE -O1 -g -Isrc -pthread \
 *     -fsanitize=fuzzer,address,undefined -o build-fuzz/fuzz_nsys \
 *     tests/fuzz/fuzz_nsys.c src/base/(*).c src/timeline/(*).c \
 *     src/ingest/nsys.c src/ingest/rocpd.c src/ingest/sqlite_util.c -lsqlite3 -lz -lm
 *   build-fuzz/fuzz_nsys -max_total_time=60 -max_len=65536 WORKDIR tests/fuzz/corpus_sqlite
 * Seeds: nsys_tiny.sqlite (a small export-shaped database: kernels, copies,
 * memsets, runtime, NVTX steps) and rocpd_small.db (make_fixture.py output).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/error.h"
#include "ingest/ingest.h"
#include "ingest/sqlite_util.h"
#include "timeline/timeline.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	aorta_quiet = 1;
	sqlu_set_op_limit(5000000);
	return 0;
}

static void run(enum aorta_status (*reader)(const char *, const struct ingest_opts *,
					    struct trace_set *, struct aorta_error *),
		const char *path)
{
	struct ingest_opts o = { .rules = NULL, .rank_hint = -1 };
	struct trace_set s = { 0 };
	struct aorta_error e = { 0 };
	enum aorta_status st = reader(path, &o, &s, &e);

	/* the contract: an error appends nothing and names the file */
	if (st != AORTA_OK && (s.n != 0 || e.path[0] == 0))
		abort();
	for (size_t i = 0; i < s.n; i++) {
		const struct trace *t = s.t[i];

		for (size_t j = 0; j < t->n; j++)
			if (t->end_ns[j] < t->start_ns[j])
				abort();
	}
	trace_set_release(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *dir = getenv("TMPDIR");
	char path[512];
	int fd;
	FILE *f;

	snprintf(path, sizeof(path), "%s/aorta_fuzz_sqlite_XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return 0;
	f = fdopen(fd, "wb");
	if (!f) {
		close(fd);
		unlink(path);
		return 0;
	}
	if (size && fwrite(data, 1, size, f) != size) {
		fclose(f);
		unlink(path);
		return 0;
	}
	fclose(f);
	run(ingest_nsys, path);
	run(ingest_rocpd, path);
	unlink(path);
	return 0;
}

/*
 * fuzz_rocpd.c - libFuzzer target for the rocprofv3 rocpd SQLite reader
 * (ingest_rocpd) alone, seeded with rocpd databases and their hostile
 * variants (text and blob times, NULL agents, dangling string ids, a
 * truncated file): tests/fuzz/corpus_rocpd/.  fuzz_nsys runs both SQLite
 * readers on nsys-shaped seeds; this one starts from rocpd's schema, so the
 * mutations explore its views and joins.  Each input is written to a fresh
 * mkstemp file (SQLite reads files) and SQLite's work is capped with
 * sqlu_set_op_limit, so a crafted endless view fails cleanly.
 * Run: make fuzz && build-fuzz/fuzz_rocpd -max_total_time=60 WORK tests/fuzz/corpus_rocpd
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *dir = getenv("TMPDIR");
	char path[512];
	int fd;
	FILE *f;

	snprintf(path, sizeof(path), "%s/aorta_fuzz_rocpd_XXXXXX", dir && *dir ? dir : "/tmp");
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

	struct ingest_opts o = { .rules = NULL, .rank_hint = -1 };
	struct trace_set s = { 0 };
	struct aorta_error e = { 0 };
	enum aorta_status st = ingest_rocpd(path, &o, &s, &e);
	/* the contract: an error appends nothing and names the file */
	if (st != AORTA_OK && (s.n != 0 || e.path[0] == 0))
		abort();
	for (size_t i = 0; i < s.n; i++)
		for (size_t j = 0; j < s.t[i]->n; j++)
			if (s.t[i]->end_ns[j] < s.t[i]->start_ns[j])
				abort();
	trace_set_release(&s);
	unlink(path);
	return 0;
}

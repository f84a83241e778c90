/*
 * fuzz_report_jsonl.c - libFuzzer target for report_read_jsonl, aorta
 * report's event-driven JSONL reader: any bytes give AORTA_OK with steps
 * or an error, never a crash, a hang or a leak; the ranges kept must stay
 * within the step offsets.  The input goes through a memfd, since the
 * reader takes a path (it reads gzip too).
 * Seeds: tests/fuzz/corpus_report_jsonl/ (lines of tests/data/report).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", 0);
	char path[64];
	struct rep_rank r;
	struct aorta_error e;

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (report_read_jsonl(path, 1, &r, &e) == AORTA_OK && r.step_range0) {
		for (size_t i = 0; i < r.nsteps; i++)
			if (r.step_range0[i] > r.step_range0[i + 1] || r.step_range0[i + 1] > r.nranges)
				__builtin_trap();
	}
	free(r.path);
	free(r.steps);
	free(r.ranges);
	free(r.step_range0);
	for (int k = 0; k < r.nstream_names; k++)
		free(r.stream_names[k]);
	close(fd);
	return 0;
}

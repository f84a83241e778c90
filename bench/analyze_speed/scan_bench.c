/*
 * scan_bench.c - read throughput of the Kineto reader alone, per core.
 *
 * Loads each file into memory once, then reads it REPS times with
 * ingest_kineto_mem (the same scanner `aorta analyze` runs on a file, with
 * the same 4 MiB window: AORTA_KINETO_WINDOW is set unless already set) and
 * prints the best and median MB/s (10^6 bytes per second) by this thread's
 * CPU time (CLOCK_THREAD_CPUTIME_ID), which a shared, busy machine disturbs
 * far less than wall time; wall MB/s of the best run is printed too.
 * Build and run: bench/analyze_speed/scan_bench.sh (links the objects of a
 * build folder, like the unit tests).
 *
 * Usage: scan_bench [-r REPS] FILE...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ingest/ingest.h"

static double now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int reps = 7, i0 = 1;

	if (argc > 2 && strcmp(argv[1], "-r") == 0) {
		reps = atoi(argv[2]);
		i0 = 3;
	}
	if (i0 >= argc || reps < 1 || reps > 1000) {
		fprintf(stderr, "usage: scan_bench [-r REPS] FILE...\n");
		return 2;
	}
	setenv("AORTA_KINETO_WINDOW", "4194304", 0);
	for (int f = i0; f < argc; f++) {
		FILE *fp = fopen(argv[f], "rb");
		char *buf;
		long n;
		double *cpu = calloc((size_t)reps, sizeof(double)), best_wall = 1e30;
		size_t spans = 0;

		if (!fp || fseek(fp, 0, SEEK_END) || (n = ftell(fp)) <= 0) {
			fprintf(stderr, "scan_bench: cannot read '%s'\n", argv[f]);
			return 3;
		}
		rewind(fp);
		buf = malloc((size_t)n);
		if (!buf || fread(buf, 1, (size_t)n, fp) != (size_t)n) {
			fprintf(stderr, "scan_bench: cannot read '%s'\n", argv[f]);
			return 3;
		}
		fclose(fp);
		for (int r = 0; r < reps; r++) {
			struct trace_set ts;
			struct aorta_error e;
			struct ingest_opts o = { NULL, -1 };
			double c0 = now(CLOCK_THREAD_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);

			memset(&ts, 0, sizeof(ts));
			if (ingest_kineto_mem(argv[f], buf, (size_t)n, &o, &ts, &e) != AORTA_OK) {
				fprintf(stderr, "scan_bench: %s: %s (byte %lld)\n", argv[f], e.msg, e.offset);
				return 3;
			}
			cpu[r] = now(CLOCK_THREAD_CPUTIME_ID) - c0;
			w0 = now(CLOCK_MONOTONIC) - w0;
			if (w0 < best_wall)
				best_wall = w0;
			spans = ts.t[0]->n;
			trace_set_release(&ts);
		}
		qsort(cpu, (size_t)reps, sizeof(double), cmp_d);
		printf("%s: %.1f MB, %zu spans: best %.1f MB/s, median %.1f MB/s per CPU-second "
		       "(%d reps); best wall %.1f MB/s\n",
		       argv[f], n / 1e6, spans,
		       n / 1e6 / cpu[0], n / 1e6 / cpu[reps / 2], reps, n / 1e6 / best_wall);
		free(cpu);
		free(buf);
	}
	return 0;
}

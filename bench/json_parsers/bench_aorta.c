/*
 * bench_aorta.c - throughput of aorta's Kineto reader (ingest_kineto: zread
 * + streaming scanner + trace_finish) on one file, page cache warm.
 *
 * Usage: bench_aorta FILE [RUNS]   (environment: AORTA_ZREAD_THREAD=0,
 * AORTA_ZREAD_INFLATER=zlib select the gzip path, see src/base/zread.c).
 * Prints the decompressed size, best and median MB/s over RUNS runs
 * (MB = 1e6 bytes of JSON text, gzip files counted by their JSON size so
 * plain and gz rows compare), user+system CPU seconds per run, and the peak
 * RSS of the process over all runs (one trace alive at a time).
 * Verification: every run must give the same span count and kernel time sum.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "base/zread.h"
#include "ingest/ingest.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* CPU time of the whole process (all threads): on a shared machine wall
 * time includes waiting for a core, CPU time does not. */
static double cpu(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	double t[64], ct[64];
	size_t json_bytes = 0, n0 = 0;
	long long sum0 = 0;
	struct aorta_error e;
	const char *infl = "none";

	if (argc < 2 || runs < 1 || runs > 64) {
		fprintf(stderr, "usage: bench_aorta FILE [RUNS<=64]\n");
		return 2;
	}
	{	/* decompressed size, and the inflater that will be used */
		struct zread *z;
		static char buf[1 << 20];
		ssize_t r;
		if (zread_open(argv[1], &z, &e) != AORTA_OK) {
			aorta_error_print(&e);
			return 3;
		}
		infl = zread_inflater(z);
		while ((r = zread_read(z, buf, sizeof(buf), &e)) > 0)
			json_bytes += (size_t)r;
		zread_close(z);
	}
	for (int i = 0; i < runs; i++) {
		struct trace_set ts = { 0 };
		struct ingest_opts o = { NULL, -1 };
		double a = now(), ca = cpu();
		if (ingest_kineto(argv[1], &o, &ts, &e) != AORTA_OK) {
			aorta_error_print(&e);
			return 3;
		}
		t[i] = now() - a;
		ct[i] = cpu() - ca;
		long long s = 0;
		for (size_t k = 0; k < ts.t[0]->n; k++)
			s += ts.t[0]->end_ns[k] - ts.t[0]->start_ns[k];
		if (i == 0) {
			n0 = ts.t[0]->n;
			sum0 = s;
		} else if (n0 != ts.t[0]->n || s != sum0) {
			fprintf(stderr, "bench_aorta: run %d gave a different result\n", i);
			return 1;
		}
		trace_set_release(&ts);
	}
	qsort(t, (size_t)runs, sizeof(t[0]), cmpd);
	qsort(ct, (size_t)runs, sizeof(ct[0]), cmpd);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double mb = (double)json_bytes / 1e6;
	printf("aorta-scanner inflater=%s json_MB=%.1f spans=%zu wall_MBps_best=%.0f wall_MBps_median=%.0f "
	       "cpu_MBps_best=%.0f cpu_MBps_median=%.0f peak_rss_MB=%.1f\n",
	       infl, mb, n0, mb / t[0], mb / t[runs / 2], mb / ct[0], mb / ct[runs / 2],
	       (double)ru.ru_maxrss / 1024.0);
	return 0;
}

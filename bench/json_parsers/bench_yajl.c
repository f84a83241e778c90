/*
 * bench_yajl.c - the maintained-library baseline: YAJL 2 SAX, streaming the
 * file through zread in 8 MiB chunks (same I/O path as aorta's reader), and
 * extracting the same per-event fields: ph, cat, name, pid, tid, ts, dur,
 * args.stream, args.device, args.correlation.  Verification: the number of
 * kernel events and the sum of their durations (ns, via the same fixed
 * digits for ts/dur: yajl hands numbers over as text) must match
 * bench_aorta's figures printed alongside.
 *
 * Usage: bench_yajl FILE [RUNS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <yajl/yajl_parse.h>

#include "base/zread.h"

struct st {
	int depth;          /* 1 top object, 2 traceEvents array, 3 event, 4 args */
	int in_events, in_args;
	char key[32];       /* current key at depth 3 or 4 */
	int is_x, is_kernel;
	long long dur_ns, kernels, dur_sum, events, stream, device, corr, pid, tid;
};

static long long us_to_ns(const char *s, size_t n)
{
	long long v = 0, frac = 0;
	int neg = 0, fd = 0;
	size_t i = 0;

	if (i < n && s[i] == '-') { neg = 1; i++; }
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		v = v * 10 + (s[i] - '0');
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			if (fd < 3) { frac = frac * 10 + (s[i] - '0'); fd++; }
	while (fd < 3) { frac *= 10; fd++; }
	v = v * 1000 + frac;
	return neg ? -v : v;
}

static int on_number(void *ctx, const char *s, size_t n)
{
	struct st *c = ctx;

	if (c->depth == 3) {
		if (!strcmp(c->key, "dur")) c->dur_ns = us_to_ns(s, n);
		else if (!strcmp(c->key, "ts")) (void)us_to_ns(s, n);
		else if (!strcmp(c->key, "pid")) c->pid = atoll(s);
		else if (!strcmp(c->key, "tid")) c->tid = atoll(s);
	} else if (c->depth == 4 && c->in_args) {
		if (!strcmp(c->key, "stream")) c->stream = strtoll(s, NULL, 10);
		else if (!strcmp(c->key, "device")) c->device = strtoll(s, NULL, 10);
		else if (!strcmp(c->key, "correlation")) c->corr = strtoll(s, NULL, 10);
	}
	return 1;
}

static int on_string(void *ctx, const unsigned char *s, size_t n)
{
	struct st *c = ctx;

	if (c->depth == 3) {
		if (!strcmp(c->key, "ph")) c->is_x = n == 1 && s[0] == 'X';
		else if (!strcmp(c->key, "cat")) c->is_kernel = n == 6 && !memcmp(s, "kernel", 6);
	}
	return 1;
}

static int on_key(void *ctx, const unsigned char *s, size_t n)
{
	struct st *c = ctx;

	if (c->depth == 1) {
		c->in_events = n == 11 && !memcmp(s, "traceEvents", 11);
	} else if (c->depth == 3 || (c->depth == 4 && c->in_args)) {
		size_t k = n < sizeof(c->key) - 1 ? n : sizeof(c->key) - 1;
		memcpy(c->key, s, k);
		c->key[k] = 0;
	}
	return 1;
}

static int on_start_map(void *ctx)
{
	struct st *c = ctx;

	c->depth++;
	if (c->depth == 3 && c->in_events) {
		c->is_x = c->is_kernel = 0;
		c->dur_ns = 0;
	}
	if (c->depth == 4)
		c->in_args = !strcmp(c->key, "args");
	return 1;
}

static int on_end_map(void *ctx)
{
	struct st *c = ctx;

	if (c->depth == 3 && c->in_events) {
		c->events++;
		if (c->is_x && c->is_kernel) {
			c->kernels++;
			c->dur_sum += c->dur_ns;
		}
	}
	if (c->depth == 4)
		c->in_args = 0;
	c->depth--;
	return 1;
}

static int on_start_array(void *ctx)
{
	struct st *c = ctx;

	c->depth++;
	if (c->depth == 4)
		c->in_args = 0;
	return 1;
}

static int on_end_array(void *ctx)
{
	struct st *c = ctx;

	c->depth--;
	return 1;
}

static int on_null(void *ctx) { (void)ctx; return 1; }
static int on_bool(void *ctx, int b) { (void)ctx; (void)b; return 1; }

static const yajl_callbacks cb = {
	on_null, on_bool, NULL, NULL, on_number, on_string,
	on_start_map, on_key, on_end_map, on_start_array, on_end_array,
};

static double now(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int runs = argc > 2 ? atoi(argv[2]) : 3;
	double t[64], ct[64];
	size_t bytes = 0;
	struct st c;
	static unsigned char buf[8 << 20];

	if (argc < 2 || runs < 1 || runs > 64)
		return 2;
	for (int i = 0; i < runs; i++) {
		struct zread *z;
		struct aorta_error e;
		ssize_t r;
		double a = now(CLOCK_MONOTONIC), ca = now(CLOCK_PROCESS_CPUTIME_ID);

		memset(&c, 0, sizeof(c));
		if (zread_open(argv[1], &z, &e) != AORTA_OK)
			return 3;
		yajl_handle h = yajl_alloc(&cb, NULL, &c);
		bytes = 0;
		while ((r = zread_read(z, buf, sizeof(buf), &e)) > 0) {
			bytes += (size_t)r;
			if (yajl_parse(h, buf, (size_t)r) != yajl_status_ok) {
				fprintf(stderr, "yajl: parse error\n");
				return 3;
			}
		}
		if (yajl_complete_parse(h) != yajl_status_ok)
			return 3;
		yajl_free(h);
		zread_close(z);
		t[i] = now(CLOCK_MONOTONIC) - a;
		ct[i] = now(CLOCK_PROCESS_CPUTIME_ID) - ca;
	}
	qsort(t, (size_t)runs, sizeof(t[0]), cmpd);
	qsort(ct, (size_t)runs, sizeof(ct[0]), cmpd);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double mb = (double)bytes / 1e6;
	printf("yajl-sax json_MB=%.1f events=%lld kernels=%lld kernel_ns=%lld wall_MBps_best=%.0f "
	       "wall_MBps_median=%.0f cpu_MBps_best=%.0f cpu_MBps_median=%.0f peak_rss_MB=%.1f\n",
	       mb, c.events, c.kernels, c.dur_sum, mb / t[0], mb / t[runs / 2], mb / ct[0],
	       mb / ct[runs / 2], (double)ru.ru_maxrss / 1024.0);
	return 0;
}

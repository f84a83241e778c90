/*
 * compare.c - aorta hwq compare: a baseline and a test result (or sweep)
 * side by side, pairwise.
 *
 * Each file is a result (a "throughput" at the top) or a sweep (a
 * "results" array); entries are zipped pairwise (a sweep against a sweep
 * compares equal positions; extra entries are reported and skipped).
 * Compared: throughput (higher is better; a drop beyond the threshold is
 * a regression) and latency P50, P95, P99 (lower is better; a rise beyond
 * the threshold is a regression).  Latency is read from latency_ms.p50
 * (what results hold, upstream's and ours) or latency.p50_ms (what
 * upstream's compare looked for), so both spellings work; upstream's
 * mismatch meant only throughput was ever compared.
 *
 * Files are parsed with yajl's tree API (whole file in memory, bounded by
 * HWQ_RESULT_MAX_BYTES: results are small).  Malformed input is AORTA_EINPUT
 * naming the file.  A zero baseline has no relative change: "no baseline".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "base/zread.h"
#include "hwq/hwq_host.h"

/* Results are a few KiB; a sweep of thousands of points stays under a MiB.
 * The cap keeps `-t /dev/zero` from reading without end. */
#define HWQ_RESULT_MAX_BYTES (64u << 20)

struct cmp_doc {
	yajl_val root;
	yajl_val *entry;
	int n;
};

static enum aorta_status load(const char *path, struct cmp_doc *d, struct aorta_error *e)
{
	memset(d, 0, sizeof(*d));
	char *buf;
	size_t len;
	enum aorta_status st = zread_whole(path, HWQ_RESULT_MAX_BYTES, "an hwq result (HWQ_RESULT_MAX_BYTES)",
					   &buf, &len, e);
	if (st)
		return st;
	if (memchr(buf, '\0', len)) {
		free(buf);
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1,
				  "binary data, not JSON (expected an aorta hwq result or sweep)");
	}
	char err[256] = "";
	d->root = yajl_tree_parse(buf, err, sizeof(err));
	free(buf);
	if (!d->root) {
		for (char *p = err; *p; p++)
			if (*p == '\n')
				*p = ' ';
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "invalid JSON: %s", err[0] ? err : "parse error");
	}
	if (!YAJL_IS_OBJECT(d->root)) {
		yajl_tree_free(d->root);
		d->root = NULL;
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "expected a JSON object (an aorta hwq result or sweep)");
	}
	const char *rp[] = { "results", NULL };
	yajl_val res = yajl_tree_get(d->root, rp, yajl_t_array);
	if (res) {
		d->n = (int)res->u.array.len;
		d->entry = xmalloc((size_t)(d->n + 1) * sizeof(yajl_val));
		for (int i = 0; i < d->n; i++)
			d->entry[i] = res->u.array.values[i];
	} else {
		d->n = 1;
		d->entry = xmalloc(sizeof(yajl_val));
		d->entry[0] = d->root;
	}
	for (int i = 0; i < d->n; i++) {
		const char *tp[] = { "throughput", NULL };
		if (!YAJL_IS_OBJECT(d->entry[i]) || !yajl_tree_get(d->entry[i], tp, yajl_t_number)) {
			free(d->entry);
			yajl_tree_free(d->root);
			d->root = NULL;
			return aorta_fail(e, AORTA_EINPUT, path, 0, -1,
					  "result %d has no numeric 'throughput' (expected an aorta hwq result or sweep)", i);
		}
	}
	return AORTA_OK;
}

static double num_at(yajl_val v, const char *a, const char *b)
{
	const char *p[] = { a, b, NULL };
	yajl_val x = yajl_tree_get(v, p, yajl_t_number);
	return x ? YAJL_GET_DOUBLE(x) : NAN;
}

/* latency_ms.pXX, else latency.pXX_ms */
static double latency(yajl_val v, const char *p)
{
	double x = num_at(v, "latency_ms", p);
	if (!isnan(x))
		return x;
	char k[16];
	snprintf(k, sizeof(k), "%s_ms", p);
	return num_at(v, "latency", k);
}

static int row(FILE *f, const char *what, double b, double t, int higher_better, double thr)
{
	if (isnan(b) || isnan(t)) {
		fprintf(f, "  %-12s %14s %14s %9s  %s\n", what, "-", "-", "-", "missing, not compared");
		return 0;
	}
	if (b == 0) { /* no relative change from zero: say so, never "+0.00 % ok" */
		fprintf(f, "  %-12s %14.4f %14.4f %9s  %s\n", what, b, t, "n/a",
			t == 0 ? "ok (both zero)" : "no baseline (baseline is 0), not compared");
		return 0;
	}
	if (isinf(b) || isinf(t)) {
		fprintf(f, "  %-12s %14.4f %14.4f %9s  %s\n", what, b, t, "n/a", "not finite, not compared");
		return 0;
	}
	double ch = (t - b) / fabs(b);
	int reg = higher_better ? ch < -thr : ch > thr;
	int imp = higher_better ? ch > thr : ch < -thr;
	fprintf(f, "  %-12s %14.4f %14.4f %+8.2f%%  %s\n", what, b, t, ch * 100.0,
		reg ? "REGRESSION" : imp ? "improved" : "ok");
	return reg;
}

enum aorta_status hwq_compare_files(const char *base, const char *test, const struct hwq_cmp_opts *o, FILE *f,
				    int *regressions, struct aorta_error *e)
{
	struct cmp_doc b, t;
	*regressions = 0;
	enum aorta_status st = load(base, &b, e);
	if (st)
		return st;
	if ((st = load(test, &t, e))) {
		free(b.entry);
		yajl_tree_free(b.root);
		return st;
	}
	int n = b.n < t.n ? b.n : t.n;
	fprintf(f, "baseline: %s\ntest:     %s\nthreshold: %.1f%%\n", base, test, o->threshold * 100.0);
	if (b.n != t.n)
		fprintf(f, "note: %d baseline and %d test results; comparing the first %d pairwise\n", b.n, t.n, n);
	for (int i = 0; i < n; i++) {
		double sb = num_at(b.entry[i], "stream_count", NULL), stc = num_at(t.entry[i], "stream_count", NULL);
		fprintf(f, "\n[%d] streams %s%.0f vs %.0f\n", i, (!isnan(sb) && sb != stc) ? "DIFFER: " : "", sb, stc);
		fprintf(f, "  %-12s %14s %14s %9s  %s\n", "metric", "baseline", "test", "change", "verdict");
		*regressions += row(f, "throughput", num_at(b.entry[i], "throughput", NULL),
				    num_at(t.entry[i], "throughput", NULL), 1, o->threshold);
		*regressions += row(f, "p50_ms", latency(b.entry[i], "p50"), latency(t.entry[i], "p50"), 0, o->threshold);
		*regressions += row(f, "p95_ms", latency(b.entry[i], "p95"), latency(t.entry[i], "p95"), 0, o->threshold);
		*regressions += row(f, "p99_ms", latency(b.entry[i], "p99"), latency(t.entry[i], "p99"), 0, o->threshold);
	}
	fprintf(f, "\n%s\n", *regressions ? "RESULT: REGRESSIONS DETECTED" : "RESULT: NO REGRESSIONS");
	free(b.entry);
	free(t.entry);
	yajl_tree_free(b.root);
	yajl_tree_free(t.root);
	return AORTA_OK;
}

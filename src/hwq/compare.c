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
 * Files are parsed with yajl's tree API (whole file in memory: results
 * are small).  Malformed input is AORTA_EINPUT naming the file.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "hwq/hwq_host.h"

struct cmp_doc {
	yajl_val root;
	yajl_val *entry;
	int n;
};

static enum aorta_status load(const char *path, struct cmp_doc *d, struct aorta_error *e)
{
	memset(d, 0, sizeof(*d));
	FILE *f = fopen(path, "rb");
	if (!f)
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "cannot open: no such file or unreadable");
	size_t cap = 1 << 16, len = 0;
	char *buf = xmalloc(cap);
	size_t got;
	while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += got;
		if (len + 1 >= cap) {
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
	}
	fclose(f);
	buf[len] = 0;
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
	double ch = b != 0 ? (t - b) / fabs(b) : 0.0;
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

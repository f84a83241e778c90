/*
 * metrics.c - one JSONL record per step, overlap from the interval engine.
 *
 * Streams are the sets: per stream the union of its ranges (ivset), the
 * compute stream against the union of the communication streams (allreduce,
 * reducescatter, allgather).  active_segments are the elementary intervals
 * between all range boundaries within [min(0, first start), total], each
 * with the sorted names of the streams active in it.
 */
#include "train/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/output.h"
#include "overlap/ivset.h"

struct sset {
	const char *name;
	struct ivset set;
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct sset *)a)->name, ((const struct sset *)b)->name);
}

/* One ivset per stream name, sorted by name; caller releases. */
static struct sset *stream_sets(const struct step_record *r, size_t *n)
{
	struct sset *s = xcalloc(r->nranges ? r->nranges : 1, sizeof(*s));
	size_t m = 0;
	for (size_t i = 0; i < r->nranges; i++) {
		size_t k;
		for (k = 0; k < m; k++)
			if (!strcmp(s[k].name, r->ranges[i].stream))
				break;
		if (k == m)
			s[m++].name = r->ranges[i].stream;
	}
	qsort(s, m, sizeof(*s), cmp_name);
	int64_t *st = xmalloc((r->nranges ? r->nranges : 1) * sizeof(*st));
	int64_t *en = xmalloc((r->nranges ? r->nranges : 1) * sizeof(*en));
	for (size_t k = 0; k < m; k++) {
		size_t c = 0;
		for (size_t i = 0; i < r->nranges; i++)
			if (!strcmp(s[k].name, r->ranges[i].stream)) {
				st[c] = r->ranges[i].start_ns;
				en[c++] = r->ranges[i].end_ns;
			}
		ivset_init(&s[k].set);
		ivset_build(&s[k].set, st, en, NULL, c);
	}
	free(st);
	free(en);
	*n = m;
	return s;
}

static const struct ivset *find(const struct sset *s, size_t n, const char *name)
{
	for (size_t k = 0; k < n; k++)
		if (!strcmp(s[k].name, name))
			return &s[k].set;
	return NULL;
}

static int64_t inter_len(const struct ivset *a, const struct ivset *b)
{
	struct ivset x;
	if (!a || !b)
		return 0;
	ivset_init(&x);
	ivset_inter(&x, a, b);
	int64_t l = ivset_len(&x);
	ivset_release(&x);
	return l;
}

static void overlap_from(const struct step_record *r, struct sset *s, size_t n, struct step_overlap *o)
{
	static const char *const comm[] = { "allreduce", "reducescatter", "allgather" };
	struct ivset all, cm, tmp;

	memset(o, 0, sizeof(*o));
	ivset_init(&all);
	ivset_init(&cm);
	ivset_init(&tmp);
	for (size_t k = 0; k < n; k++) {
		ivset_union(&tmp, &all, &s[k].set);
		struct ivset t = all;
		all = tmp;
		tmp = t;
	}
	for (size_t c = 0; c < 3; c++) {
		const struct ivset *x = find(s, n, comm[c]);
		if (!x)
			continue;
		ivset_union(&tmp, &cm, x);
		struct ivset t = cm;
		cm = tmp;
		tmp = t;
	}
	const struct ivset *compute = find(s, n, "compute");
	o->union_ns = ivset_len(&all);
	o->idle_ns = r->total_ns > o->union_ns ? r->total_ns - o->union_ns : 0;
	o->compute_ns = compute ? ivset_len(compute) : 0;
	o->comm_ns = ivset_len(&cm);
	o->compute_comm_ns = inter_len(compute, &cm);
	o->compute_allreduce_ns = inter_len(compute, find(s, n, "allreduce"));
	o->compute_reducescatter_ns = inter_len(compute, find(s, n, "reducescatter"));
	o->compute_allgather_ns = inter_len(compute, find(s, n, "allgather"));
	ivset_release(&all);
	ivset_release(&cm);
	ivset_release(&tmp);
}

void metrics_overlap(const struct step_record *r, struct step_overlap *o)
{
	size_t n;
	struct sset *s = stream_sets(r, &n);
	overlap_from(r, s, n, o);
	for (size_t k = 0; k < n; k++)
		ivset_release(&s[k].set);
	free(s);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void raw_or_empty(FILE *f, const char *json)
{
	fputs(json && *json ? json : "{}", f);
}

int metrics_write(FILE *f, const struct step_record *r)
{
	size_t n;
	struct sset *s = stream_sets(r, &n);
	struct step_overlap o;
	struct jw w;

	overlap_from(r, s, n, &o);
	jw_init(&w, f, 0);
	jw_obj(&w, NULL);
	jw_str(&w, "schema", METRICS_SCHEMA);
	jw_int(&w, "rank", r->rank);
	jw_int(&w, "world_size", r->world_size);
	jw_int(&w, "epoch", r->epoch);
	jw_int(&w, "step", r->step);
	jw_int(&w, "global_step", r->global_step);
	jw_num(&w, "loss", r->loss, 8);
	jw_num(&w, "grad_norm", r->grad_norm, 8);
	jw_num(&w, "lr", r->lr, 10);
	jw_obj(&w, "profile");
	jw_int(&w, "index", r->global_step);
	jw_ms(&w, "total_ms", r->total_ns);
	jw_arr(&w, "ranges");
	for (size_t i = 0; i < r->nranges; i++) {
		const struct prof_range *x = &r->ranges[i];
		jw_obj(&w, NULL);
		jw_str(&w, "stream", x->stream);
		jw_str(&w, "tag", x->tag);
		jw_ms(&w, "start_ms", x->start_ns);
		jw_ms(&w, "end_ms", x->end_ns);
		jw_ms(&w, "duration_ms", x->end_ns > x->start_ns ? x->end_ns - x->start_ns : 0);
		fputs(",\"metadata\":", f);
		raw_or_empty(f, x->metadata);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_arr(&w, "markers");
	for (size_t i = 0; i < r->nmarkers; i++) {
		const struct prof_marker *x = &r->markers[i];
		jw_obj(&w, NULL);
		jw_str(&w, "stream", x->stream);
		jw_str(&w, "tag", x->tag);
		jw_ms(&w, "time_ms", x->t_ns);
		fputs(",\"metadata\":", f);
		raw_or_empty(f, x->metadata);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj(&w, "overlap");
	jw_obj(&w, "per_stream_ms");
	for (size_t k = 0; k < n; k++)
		jw_ms(&w, s[k].name, ivset_len(&s[k].set));
	jw_obj_end(&w);
	jw_obj(&w, "overlap_ms");
	jw_ms(&w, "compute_comm", o.compute_comm_ns);
	jw_ms(&w, "compute_allreduce", o.compute_allreduce_ns);
	jw_ms(&w, "compute_reducescatter", o.compute_reducescatter_ns);
	jw_ms(&w, "compute_allgather", o.compute_allgather_ns);
	jw_ms(&w, "idle", o.idle_ns);
	jw_obj_end(&w);
	/* elementary segments between every boundary */
	int64_t *b = xmalloc((2 * r->nranges + 2) * sizeof(*b));
	size_t nb = 0;
	b[nb++] = 0;
	b[nb++] = r->total_ns;
	for (size_t i = 0; i < r->nranges; i++) {
		b[nb++] = r->ranges[i].start_ns;
		b[nb++] = r->ranges[i].end_ns;
	}
	qsort(b, nb, sizeof(*b), cmp_i64);
	jw_arr(&w, "active_segments");
	for (size_t i = 1; i < nb; i++) {
		if (b[i] == b[i - 1])
			continue;
		jw_obj(&w, NULL);
		jw_ms(&w, "start_ms", b[i - 1]);
		jw_ms(&w, "end_ms", b[i]);
		jw_arr(&w, "active_streams");
		for (size_t k = 0; k < n; k++)
			if (ivset_len_in(&s[k].set, b[i - 1], b[i]) > 0)
				jw_str(&w, NULL, s[k].name);
		jw_arr_end(&w);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	free(b);
	jw_obj(&w, "utilization");
	static const char *const up[] = { "compute", "allreduce", "reducescatter", "aux" };
	for (size_t k = 0; k < 4; k++) {
		const struct ivset *x = find(s, n, up[k]);
		jw_num(&w, up[k], r->total_ns && x ? (double)ivset_len(x) / (double)r->total_ns : 0.0, 6);
	}
	for (size_t k = 0; k < n; k++) {
		int known = 0;
		for (size_t j = 0; j < 4; j++)
			known |= !strcmp(s[k].name, up[j]);
		if (!known)
			jw_num(&w, s[k].name, r->total_ns ? (double)ivset_len(&s[k].set) / (double)r->total_ns : 0.0, 6);
	}
	jw_obj_end(&w);
	jw_obj_end(&w); /* overlap */
	jw_obj_end(&w); /* profile */
	if (r->telemetry) {
		const struct telemetry_sample *t = r->telemetry;
		jw_obj(&w, "telemetry");
		jw_bool(&w, "available", t->valid);
		if (t->valid) {
			jw_num(&w, "sm_clock_mhz", t->sm_clock_mhz, 0);
			jw_num(&w, "mem_clock_mhz", t->mem_clock_mhz, 0);
			jw_num(&w, "power_w", t->power_w, 3);
			jw_num(&w, "temperature_c", t->temperature_c, 1);
			jw_num(&w, "gpu_util_pct", t->gpu_util_pct, 1);
			jw_num(&w, "mem_util_pct", t->mem_util_pct, 1);
		}
		jw_obj_end(&w);
	}
	jw_obj_end(&w);
	fputc('\n', f);
	for (size_t k = 0; k < n; k++)
		ivset_release(&s[k].set);
	free(s);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

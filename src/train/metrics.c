/*
 * metrics.c - one JSONL record per step, overlap from the interval engine.
 *
 * The overlap block is the overlap engine's (overlap/engine.h), on a
 * by-stream classification: each range is a span on its stream, of the
 * stream's role (timeline/vocab.h stream_role: compute; allreduce,
 * reducescatter, allgather as communication of that type; any other
 * stream busy but neither), so the trainer's figures and analyze's are one
 * implementation.  per_stream_ms is each stream's union, compute_comm the
 * compute stream against the union of the communication streams, idle the
 * step's total minus the union of every range.  Each communication range
 * also carries "collective" (its type), so readers need not guess it from
 * names.  active_segments are the elementary intervals
 * between all range boundaries within [min(0, first start), total], each
 * with the sorted names of the streams active in it.
 */
#include "train/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/output.h"
#include "overlap/engine.h"
#include "overlap/ivset.h"
#include "timeline/timeline.h"

/* One step as a timeline of its ranges, on one stream id per stream name
 * (ids in name order, so the engine's per-stream sets come out sorted by
 * name), with each range's class from its stream's role; and the engine's
 * sets over it. */
struct step_sets {
	struct trace *t;
	uint8_t *cls;
	const char **names;       /* by stream id */
	size_t n;
	struct ov_sets s;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void step_sets_build(const struct step_record *r, struct step_sets *x)
{
	memset(x, 0, sizeof(*x));
	x->names = xcalloc(r->nranges ? r->nranges : 1, sizeof(*x->names));
	for (size_t i = 0; i < r->nranges; i++) {
		size_t k;
		for (k = 0; k < x->n; k++)
			if (!strcmp(x->names[k], r->ranges[i].stream))
				break;
		if (k == x->n)
			x->names[x->n++] = r->ranges[i].stream;
	}
	qsort(x->names, x->n, sizeof(*x->names), cmp_str);
	x->t = trace_new("step", "aorta-metrics");
	x->cls = xmalloc(r->nranges ? r->nranges : 1);
	for (size_t i = 0; i < r->nranges; i++) {
		const struct prof_range *g = &r->ranges[i];
		size_t k = 0;
		while (strcmp(x->names[k], g->stream))
			k++;
		enum coll_type ct;
		enum span_class c = stream_role(g->stream, &ct);
		size_t j = trace_add_device(x->t, g->start_ns, g->end_ns, g->stream, strlen(g->stream), R_KERNEL,
					    (int32_t)k, -1, 0);
		x->t->kind[j] = (uint8_t)(c == C_COMM ? K_COMM : K_COMPUTE_OTHER);
		x->t->coll_type[j] = (uint8_t)ct;
		x->cls[j] = (uint8_t)c;
	}
	ov_sets_build(&x->s, x->t, x->cls, NULL, 0);
}

static void step_sets_release(struct step_sets *x)
{
	ov_sets_release(&x->s);
	trace_free(x->t);
	free(x->cls);
	free(x->names);
}

/* Busy set of the stream named name, or NULL. */
static const struct ivset *stream_set(const struct step_sets *x, const char *name)
{
	for (size_t k = 0; k < x->s.nstreams; k++)
		if (!strcmp(x->names[x->s.stream_id[k]], name))
			return &x->s.stream[k];
	return NULL;
}

static void overlap_from(const struct step_record *r, const struct step_sets *x, struct step_overlap *o)
{
	struct ov_figures f;
	memset(o, 0, sizeof(*o));
	ov_figures_in(&x->s, x->s.first_ns, x->s.last_ns, &f); /* every range, whole */
	o->union_ns = f.busy_ns;
	o->idle_ns = r->total_ns > o->union_ns ? r->total_ns - o->union_ns : 0;
	o->compute_ns = f.compute_ns;
	o->comm_ns = f.comm_ns;
	o->compute_comm_ns = f.overlap_ns;
	o->compute_allreduce_ns = f.coll_ns[COLL_ALL_REDUCE] - f.coll_exposed_ns[COLL_ALL_REDUCE];
	o->compute_reducescatter_ns = f.coll_ns[COLL_REDUCE_SCATTER] - f.coll_exposed_ns[COLL_REDUCE_SCATTER];
	o->compute_allgather_ns = f.coll_ns[COLL_ALL_GATHER] - f.coll_exposed_ns[COLL_ALL_GATHER];
}

void metrics_overlap(const struct step_record *r, struct step_overlap *o)
{
	struct step_sets x;
	step_sets_build(r, &x);
	overlap_from(r, &x, o);
	step_sets_release(&x);
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

/* The elementary segments between every boundary of the step's ranges,
 * each with the streams active in it. */
static void put_segments(struct jw *w, const struct step_record *r, const struct step_sets *ss)
{
	int64_t *b = xmalloc((2 * r->nranges + 2) * sizeof(*b));
	size_t nb = 0;
	b[nb++] = 0;
	b[nb++] = r->total_ns;
	for (size_t i = 0; i < r->nranges; i++) {
		b[nb++] = r->ranges[i].start_ns;
		b[nb++] = r->ranges[i].end_ns;
	}
	qsort(b, nb, sizeof(*b), cmp_i64);
	jw_arr(w, "active_segments");
	for (size_t i = 1; i < nb; i++) {
		if (b[i] == b[i - 1])
			continue;
		jw_obj(w, NULL);
		jw_ms(w, "start_ms", b[i - 1]);
		jw_ms(w, "end_ms", b[i]);
		jw_arr(w, "active_streams");
		for (size_t k = 0; k < ss->s.nstreams; k++)
			if (ivset_len_in(&ss->s.stream[k], b[i - 1], b[i]) > 0)
				jw_str(w, NULL, ss->names[ss->s.stream_id[k]]);
		jw_arr_end(w);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	free(b);
}

/* Each stream's busy share of the step (the upstream four first). */
static void put_utilization(struct jw *w, const struct step_record *r, const struct step_sets *ss)
{
	jw_obj(w, "utilization");
	static const char *const up[] = { "compute", "allreduce", "reducescatter", "aux" };
	for (size_t k = 0; k < 4; k++) {
		const struct ivset *u = stream_set(ss, up[k]);
		jw_num(w, up[k], r->total_ns && u ? (double)ivset_len(u) / (double)r->total_ns : 0.0, 6);
	}
	for (size_t k = 0; k < ss->s.nstreams; k++) {
		const char *nm = ss->names[ss->s.stream_id[k]];
		int known = 0;
		for (size_t j = 0; j < 4; j++)
			known |= !strcmp(nm, up[j]);
		if (!known)
			jw_num(w, nm, r->total_ns ? (double)ivset_len(&ss->s.stream[k]) / (double)r->total_ns : 0.0, 6);
	}
	jw_obj_end(w);
}

int metrics_write(FILE *f, const struct step_record *r)
{
	struct step_sets ss;
	struct step_overlap o;
	struct jw w;

	step_sets_build(r, &ss);
	overlap_from(r, &ss, &o);
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
		enum coll_type ct;
		if (stream_role(x->stream, &ct) == C_COMM) /* what it is, for readers */
			jw_str(&w, "collective", coll_type_name(ct));
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
	for (size_t k = 0; k < ss.s.nstreams; k++)
		jw_ms(&w, ss.names[ss.s.stream_id[k]], ivset_len(&ss.s.stream[k]));
	jw_obj_end(&w);
	jw_obj(&w, "overlap_ms");
	jw_ms(&w, "compute_comm", o.compute_comm_ns);
	jw_ms(&w, "compute_allreduce", o.compute_allreduce_ns);
	jw_ms(&w, "compute_reducescatter", o.compute_reducescatter_ns);
	jw_ms(&w, "compute_allgather", o.compute_allgather_ns);
	jw_ms(&w, "idle", o.idle_ns);
	jw_obj_end(&w);
	put_segments(&w, r, &ss);
	put_utilization(&w, r, &ss);
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
	step_sets_release(&ss);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

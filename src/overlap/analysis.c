/*
 * analysis.c - from timelines to a finished struct analysis.
 *
 * Sections: the per-rank pass (engine sets, step windows, named figures of
 * the peers, collectives, kernels, streams).  Reading inputs and the worker
 * pool are pipeline/pipeline.c's, above both ingest and this engine; the
 * cross-rank join (matching, clock alignment, waiting) is join.c's.
 *
 * Step windows.  A step's GPU window runs from the first start of a device
 * span the step launched to the first start of the next non-empty step (the
 * last one ends at its last span's end); a span that starts before its
 * step's own range (an op table's prefetch row of the next step) does not
 * count for the start while another does.  So windows tile the GPU timeline
 * and per-step figures add up to the step total.  Figures in a window are
 * over every span clipped to it, whatever step launched the span.
 */
#include "base/stats.h"
#include "flightrec/fr.h"
#include "overlap/analysis.h"
#include "timeline/peer_rules.h"

#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- one rank ----------------------------------------------------------- */

static int64_t span_dur(const struct trace *t, size_t i)
{
	return t->end_ns[i] - t->start_ns[i];
}

static void hta_figures(const struct trace *t, struct hta_figures *h)
{
	uint8_t *cls = classes_hta(t);
	uint32_t *sub = NULL;
	size_t m = t->n;

	memset(h, 0, sizeof(*h));
	if (t->nsteps >= 2) { /* HTA drops GPU work launched at or after the last step's start */
		int64_t cut = t->steps[t->nsteps - 1].start_ns;
		/* HTA 0.6.1 takes the latest start of every row named ProfilerStep#N that
		 * it treats as a CPU row (Trace._filter_irrelevant_gpu_kernels); PyTorch
		 * 2.x's gpu_user_annotation ProfilerStep rows carry no stream or
		 * correlation, so they count too and move the cut to where the GPU
		 * reached the last step (bench/RESULTS.md, HTA cross-check) */
		if (t->gstep_last_start_ns > cut)
			cut = t->gstep_last_start_ns;
		sub = xmalloc((t->n ? t->n : 1) * sizeof(*sub));
		m = 0;
		for (size_t i = 0; i < t->n; i++)
			if (t->launch_ns[i] != INT64_MIN && t->launch_ns[i] < cut)
				sub[m++] = (uint32_t)i;
		h->last_step_excluded = 1;
	}
	struct ov_sets o;
	struct ov_figures f;
	ov_sets_build(&o, t, cls, sub, m);
	ov_figures_in(&o, o.first_ns, o.last_ns, &f);
	h->has_comm = f.comm_ns > 0;
	h->comm_ns = f.comm_ns;
	h->overlap_ns = f.overlap_ns;
	h->comm_comp_overlap_pct = f.comm_ns ? 100.0 * (double)f.overlap_ns / (double)f.comm_ns : 0;
	h->kernel_time_ns = f.window_ns;
	h->idle_ns = f.idle_ns;
	h->compute_ns = f.compute_ns;
	h->non_compute_ns = f.window_ns - f.compute_ns - f.idle_ns;
	ov_sets_release(&o);
	free(sub);
	free(cls);
}

static int cmp_kernel(const void *a, const void *b)
{
	const struct kernel_row *x = a, *y = b;
	if (x->total_ns != y->total_ns)
		return (x->total_ns < y->total_ns) - (x->total_ns > y->total_ns);
	return strcmp(x->name, y->name);
}

static void kernel_table(const struct trace *t, const uint8_t *cls, int top, struct rank_result *r)
{
	struct kernel_row *k = xcalloc(t->names.n ? t->names.n : 1, sizeof(*k));
	for (size_t i = 0; i < t->n; i++) {
		if (cls[i] == C_NONE)
			continue;
		struct kernel_row *x = &k[t->name[i]];
		int64_t d = span_dur(t, i);
		if (!x->count) {
			x->kind = t->kind[i];
			x->min_ns = d;
			x->max_ns = d;
		}
		x->count++;
		x->total_ns = ns_sum(x->total_ns, d);
		if (d < x->min_ns)
			x->min_ns = d;
		if (d > x->max_ns)
			x->max_ns = d;
	}
	size_t m = 0;
	for (size_t id = 0; id < t->names.n; id++)
		if (k[id].count) {
			k[m] = k[id];
			k[m].name = (char *)strtab_get(&t->names, (uint32_t)id);
			m++;
		}
	qsort(k, m, sizeof(*k), cmp_kernel);
	if ((size_t)top < m)
		m = (size_t)top;
	for (size_t i = 0; i < m; i++)
		k[i].name = xstrdup(k[i].name);
	r->kernels = k;
	r->nkernels = m;
}

struct pg_count { int32_t step; uint32_t pg; uint32_t n; size_t next; /* same step, 0: none, else index + 1 */ };

/* Start of the GPU window of the step a span belongs to, INT64_MIN if none. */
static int64_t step_window_start(const struct trace *t, const struct rank_result *r, size_t i)
{
	if (t->step[i] < 0)
		return INT64_MIN;
	int64_t num = t->steps[t->step[i]].number;
	for (size_t k = 0; k < r->nsteps; k++)
		if (r->steps[k].number == num)
			return r->steps[k].start_ns;
	return INT64_MIN;
}

struct pg_end { uint32_t pg; int64_t end_ns; };

/* The rank's collective rows and, when calls, its calls (for the join). */
static void coll_table(const struct trace *t, const struct ov_sets *sets, struct rank_result *r, int calls)
{
	const struct ivset *compute = &sets->set[S_COMPUTE];
	size_t at = 0; /* the calls come in start order: compute is walked forward (ivset_len_in_from) */
	struct pg_count *pc = NULL;
	struct pg_end *pe = NULL;
	size_t npc = 0, pccap = 0, rcap = 0, icap = 0, npe = 0, pecap = 0;
	/* per step (index + 1; 0: outside every step), its first counter
	 * (index + 1): a call's counter is looked up among its step's few
	 * process groups, not among every counter so far */
	size_t *head = xcalloc(t->nsteps + 1, sizeof(*head));

	for (size_t i = 0; i < t->n; i++) {
		if (kind_class((enum span_kind)t->kind[i]) != C_COMM)
			continue;
		const struct coll_meta *m = t->meta[i] != UINT32_MAX ? &t->coll[t->meta[i]] : NULL;
		uint32_t pg = m ? m->pg_name : 0;
		const char *pgs = strtab_get(&t->names, pg);
		int gs = m && m->group_size > 0 ? m->group_size : t->world_size;
		size_t row;
		for (row = 0; row < r->ncolls; row++) {
			struct coll_row *c = &r->colls[row];
			if (c->type == t->coll_type[i] && c->bytes == t->bytes[i] && strcmp(c->pg, pgs) == 0)
				break;
		}
		if (row == r->ncolls) {
			GROW(r->colls, rcap, r->ncolls + 1);
			struct coll_row *c = &r->colls[r->ncolls++];
			memset(c, 0, sizeof(*c));
			c->type = t->coll_type[i];
			c->pg = xstrdup(pgs);
			c->pg_desc = xstrdup(strtab_get(&t->names, m ? m->pg_desc : 0));
			c->pg_ranks = xstrdup(strtab_get(&t->names, m ? m->pg_ranks : 0));
			c->bytes = t->bytes[i];
			c->group_size = gs;
			c->group_size_known = m && m->group_size > 0;
			c->min_ns = INT64_MAX;
		}
		struct coll_row *c = &r->colls[row];
		int64_t d = span_dur(t, i);
		c->count++;
		c->total_ns = ns_sum(c->total_ns, d);
		c->exposed_ns = ns_sum(c->exposed_ns, d - ivset_len_in_from(compute, &at, t->start_ns[i], t->end_ns[i])); /* ov_exposed */
		if (d < c->min_ns)
			c->min_ns = d;
		if (d > c->max_ns)
			c->max_ns = d;
		if (!calls)
			continue;

		/* the call's ordinal within (step, process group) */
		size_t slot = t->step[i] >= 0 && (size_t)t->step[i] < t->nsteps ? (size_t)t->step[i] + 1 : 0;
		size_t k = (size_t)-1;
		for (size_t h = head[slot]; h; h = pc[h - 1].next)
			if (pc[h - 1].step == t->step[i] && pc[h - 1].pg == pg) {
				k = h - 1;
				break;
			}
		if (k == (size_t)-1) {
			GROW(pc, pccap, npc + 1);
			pc[npc] = (struct pg_count){ t->step[i], pg, 0, head[slot] };
			head[slot] = npc + 1;
			k = npc++;
		}
		GROW(r->inst, icap, r->ninst + 1);
		struct comm_inst *ci;
		ci = &r->inst[r->ninst++];
		ci->step = t->step[i] >= 0 ? t->steps[t->step[i]].number : INT64_MIN;
		ci->pg = NULL; /* set after the rows stop moving */
		ci->seq = m && m->seq >= 0 ? m->seq : -1;
		/* the stretch since this rank's previous call in the group ended */
		size_t q;
		for (q = 0; q < npe && pe[q].pg != pg; q++)
			;
		if (q == npe) {
			GROW(pe, pecap, npe + 1);
			pe[npe++] = (struct pg_end){ pg, INT64_MIN };
		}
		int64_t lo = pe[q].end_ns;
		if (lo == INT64_MIN)
			lo = step_window_start(t, r, i);
		if (lo == INT64_MIN || lo > t->start_ns[i])
			lo = t->start_ns[i];
		if (t->end_ns[i] > pe[q].end_ns)
			pe[q].end_ns = t->end_ns[i];
		ci->prep_ns = t->start_ns[i] - lo;
		ci->prep_host_wait_ns = ivset_len_in(&sets->set[S_HOST_WAIT], lo, t->start_ns[i]);
		ci->prep_busy_ns = ivset_len_in(&sets->set[S_BUSY], lo, t->start_ns[i]);
		ci->caused_ns = 0;
		ci->ordinal = pc[k].n++;
		ci->type = t->coll_type[i];
		ci->bytes = t->bytes[i];
		ci->start_ns = t->start_ns[i];
		ci->end_ns = t->end_ns[i];
		ci->row = (uint32_t)row;
		ci->wait_ns = -1;
		ci->last = 0;
		ci->peer = m && m->p2p != P2P_NONE ? m->peer : -1;
		ci->p2p = m && m->peer >= 0 ? m->p2p : P2P_NONE;
		ci->op = -1;
		ci->grp = -1;
		ci->stream = t->stream[i];
	}
	for (size_t j = 0; j < r->ninst; j++)
		r->inst[j].pg = r->colls[r->inst[j].row].pg;
	free(pc);
	free(pe);
	free(head);
}

/* The steps' figures into rows[0..nsteps) (rec already there), then into
 * the rank's step store (overlap/steps.h). */
static void step_figures(const struct ov_sets *s, const struct analysis_opts *o, struct rank_result *r,
			 struct step_row *rows)
{
	struct ov_walk wk = { 0 };
	for (size_t k = 0; k < r->nsteps; k++) {
		struct step_row *st = &rows[k];
		struct ov_figures f;
		ov_figures_next(s, &wk, r->steps[k].start_ns, r->steps[k].end_ns, &f);
		memcpy(&st->f, &f, sizeof(st->f));
		st->host_bound = f.window_ns > 0 &&
				 100.0 * (double)f.host_wait_ns >= o->host_bound_pct * (double)f.window_ns;
		memcpy(st->coll, f.coll_ns, sizeof(f.coll_ns));
		memcpy(st->coll + COLL__COUNT, f.coll_exposed_ns, sizeof(f.coll_exposed_ns));
	}
	steps_store_build(&r->sv, rows, r->nsteps);
}

/* The rank's step windows from its spans' steps: a step's first span to
 * the next step's (the last: its last end); a step that launched no
 * device work has none. */
static void step_windows(const struct trace *t, const uint8_t *cls, struct rank_result *r)
{
	size_t ns = t->nsteps;
	int64_t *first = xmalloc((ns ? ns : 1) * sizeof(*first));
	int64_t *last = xmalloc((ns ? ns : 1) * sizeof(*last));
	for (size_t k = 0; k < ns; k++) {
		first[k] = INT64_MAX;
		last[k] = INT64_MIN;
	}
	/* a span of the step that starts before the step does (an op table's
	 * prefetch row, tagged with the step it serves) does not move the
	 * window's start: first[] counts the spans from the step's own start,
	 * first_any[] all of them (used only where none starts inside) */
	int64_t *first_any = xmalloc((ns ? ns : 1) * sizeof(*first_any));
	for (size_t k = 0; k < ns; k++)
		first_any[k] = INT64_MAX;
	for (size_t i = 0; i < t->n; i++) {
		int32_t k = t->step[i];
		if (k < 0 || cls[i] == C_NONE)
			continue;
		if (t->start_ns[i] < first_any[k])
			first_any[k] = t->start_ns[i];
		if (t->start_ns[i] >= t->steps[k].start_ns && t->start_ns[i] < first[k])
			first[k] = t->start_ns[i];
		if (t->end_ns[i] > last[k])
			last[k] = t->end_ns[i];
	}
	for (size_t k = 0; k < ns; k++)
		if (first[k] == INT64_MAX)
			first[k] = first_any[k];
	free(first_any);
	r->steps = xcalloc(ns ? ns : 1, sizeof(*r->steps));
	size_t m = 0;
	for (size_t k = 0; k < ns; k++) {
		if (first[k] == INT64_MAX)
			continue; /* a step that launched no device work has no GPU window */
		struct step_result *st = &r->steps[m++];
		st->number = t->steps[k].number;
		st->start_ns = first[k];
		/* windows in time order, never overlapping: a step whose first span
		 * starts before the one before it (streams run apart) starts where
		 * that one ended */
		if (m > 1 && st->start_ns < r->steps[m - 2].end_ns)
			st->start_ns = r->steps[m - 2].end_ns;
		size_t nx;
		for (nx = k + 1; nx < ns && first[nx] == INT64_MAX; nx++)
			;
		st->end_ns = nx < ns ? first[nx] : last[k];
		if (st->end_ns < st->start_ns)
			st->end_ns = st->start_ns;
	}
	r->nsteps = m;
	free(first);
	free(last);
}

/* The figures the input recorded per step (JSONL), matched by step
 * number, into rows[0..r->nsteps). */
static void recorded_steps(const struct trace *t, struct rank_result *r, struct step_row *rows)
{
	r->has_rec = t->nrec > 0;
	for (size_t k = 0, c = 0; k < r->nsteps; k++) {
		struct step_row *st = &rows[k];
		for (int q = 0; q < SR__COUNT; q++)
			st->rec[q] = NAN;
		if (!t->nrec)
			continue;
		size_t c0 = c;
		while (t->rec[c].number != r->steps[k].number) {
			c = (c + 1) % t->nrec;
			if (c == c0)
				break;
		}
		if (t->rec[c].number == r->steps[k].number)
			memcpy(st->rec, t->rec[c].v, sizeof(st->rec));
	}
}

/* The tables of the rank: streams, collectives (and the what-if's op
 * table), kernels; HTA's and TraceLens's figures unless o says none. */
static void rank_tables(struct trace *t, const struct analysis_opts *o, const uint8_t *cls, const struct ov_sets *s,
			struct rank_result *r)
{
	r->nstreams = s->nstreams;
	r->streams = xcalloc(s->nstreams ? s->nstreams : 1, sizeof(*r->streams));
	for (size_t k = 0; k < s->nstreams; k++) {
		r->streams[k].stream = s->stream_id[k];
		r->streams[k].busy_ns = ivset_len(&s->stream[k]);
		r->streams[k].spans = s->stream_spans[k];
	}
	/* a rank on a clock of its own is matched with no other (join.c), so
	 * the join and the what-if never read its calls nor its op table:
	 * neither is kept (about 600 bytes a step of aorta JSONL) */
	int own_clock = analysis_own_clock(t->format);
	coll_table(t, s, r, !own_clock);
	if (!own_clock && o->what_if != WHATIF_SKIP)
		whatif_ops(t, cls, r);
	kernel_table(t, cls, o->top_kernels, r);
	if (!o->no_peer_tools) { /* two more interval-set builds of the whole trace */
		hta_figures(t, &r->hta);
		uint8_t *tl = classes_tracelens(t);
		struct ov_sets ts;
		ov_sets_build(&ts, t, tl, NULL, 0);
		ov_figures_in(&ts, ts.first_ns, ts.last_ns, &r->tracelens);
		ov_sets_release(&ts);
		free(tl);
	}
}

void analysis_rank(struct trace *t, const struct analysis_opts *o, struct rank_result *r)
{
	memset(r, 0, sizeof(*r));
	r->path = xstrdup(t->path);
	r->format = t->format;
	r->rank = t->rank;
	r->world_size = t->world_size;
	r->device = t->device;
	r->events = t->n;
	r->skipped = t->skipped;
	r->other_device_spans = t->other_device_spans;
	r->other_device = t->other_device;
	r->host_events = t->host_events;
	r->skipped_first = xstrdup(t->skipped_first);
	memcpy(r->host, t->host, sizeof(r->host));
	ivset_init(&r->wait_set);
	ivset_init(&r->exposed_set);

	uint8_t *cls = classes_aorta(t);
	struct ov_sets s;
	ov_sets_build(&s, t, cls, NULL, 0);
	ov_figures_in(&s, s.first_ns, s.last_ns, &r->total);
	r->first_ns = s.first_ns;
	r->last_ns = s.last_ns;

	step_windows(t, cls, r);
	size_t m = r->nsteps;
	struct step_row *rows = xmalloc((m ? m : 1) * sizeof(*rows));
	recorded_steps(t, r, rows);
	step_figures(&s, o, r, rows);
	free(rows);
	size_t skip = (size_t)(o->skip_steps > 0 ? o->skip_steps : 0);
	if (skip < m)
		ov_figures_in(&s, r->steps[skip].start_ns, r->steps[m - 1].end_ns, &r->steps_sum);

	rank_tables(t, o, cls, &s, r);
	if (o->keep_traces == 1) {
		r->exposed_set = s.set[S_EXPOSED_COMM];
		memset(&s.set[S_EXPOSED_COMM], 0, sizeof(s.set[S_EXPOSED_COMM]));
	}
	ov_sets_release(&s);
	free(cls);
}

size_t analysis_kept_steps(const struct rank_result *r, int skip)
{
	size_t k = (size_t)(skip > 0 ? skip : 0);
	return k < r->nsteps ? r->nsteps - k : 0;
}

void analysis_set_skip(struct analysis *a, int skip)
{
	a->opts.skip_steps = skip;
	for (size_t i = 0; i < a->n; i++) {
		struct rank_result *r = &a->r[i];
		struct ov_figures *f = &r->steps_sum;
		memset(f, 0, sizeof(*f));
		for (size_t k = r->nsteps - analysis_kept_steps(r, skip); k < r->nsteps; k++) {
			int64_t *d = (int64_t *)f;
			for (int q = 0; q < SC_NFIG; q++)
				d[q] += steps_int(&r->sv, k, q);
			for (int c = 0; c < COLL__COUNT; c++) {
				f->coll_ns[c] += step_coll_ns(r, k, c, 0);
				f->coll_exposed_ns[c] += step_coll_ns(r, k, c, 1);
			}
		}
	}
}

int analysis_adapt_skip(struct analysis *a, char *why, size_t n)
{
	int skip = a->opts.skip_steps;
	size_t fewest = SIZE_MAX;
	int who = -1;
	if (skip <= 0)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i].nsteps && a->r[i].nsteps < fewest) {
			fewest = a->r[i].nsteps;
			who = a->r[i].rank;
		}
	if (fewest == SIZE_MAX || (size_t)skip < fewest)
		return 0;
	snprintf(why, n, "--skip-steps %d would leave none of the %zu step%s of rank %d: no warm-up is "
		 "skipped, every step is used", skip, fewest, fewest == 1 ? "" : "s", who);
	analysis_set_skip(a, 0);
	return 1;
}

static int cmp_rank(const void *a, const void *b)
{
	const struct rank_result *x = a, *y = b;
	if (x->rank != y->rank)
		return (x->rank > y->rank) - (x->rank < y->rank);
	int c = strcmp(x->path, y->path);
	if (c)
		return c;
	return (x->device > y->device) - (x->device < y->device);
}

int cmp_path_device(const void *a, const void *b)
{
	const struct rank_result *x = a, *y = b;
	int c = strcmp(x->path, y->path);
	if (c)
		return c;
	return (x->device > y->device) - (x->device < y->device);
}

/* Whether x and y, two readings of one rank, come from two runs: their
 * hosts differ (both named), or their GPU activity does not overlap in
 * time (each on its own clock: a run's ranks overlap, a later run does
 * not).  Then a->mixed_runs says so (the first pair only). */
static int two_runs(struct analysis *a, const struct rank_result *x, const struct rank_result *y)
{
	char why[320];
	if (x->host[0] && y->host[0] && strcmp(x->host, y->host) != 0) {
		snprintf(why, sizeof(why), "on hosts '%s' and '%s'", x->host, y->host);
	} else if (x->last_ns > x->first_ns && y->last_ns > y->first_ns &&
		   (x->last_ns < y->first_ns || y->last_ns < x->first_ns)) {
		int64_t gap = x->last_ns < y->first_ns ? y->first_ns - x->last_ns : x->first_ns - y->last_ns;
		snprintf(why, sizeof(why), "traced at different times: their GPU activity is %.3f s apart",
			 (double)gap / 1e9);
	} else {
		return 0;
	}
	snprintf(a->mixed_runs, sizeof(a->mixed_runs),
		 "rank %d is read twice, from '%s' and '%s', %s: one call analyses one run; put two runs side by "
		 "side with 'aorta compare RUN_A RUN_B' (a folder, glob or @LIST each)", x->rank, x->path, y->path,
		 why);
	return 1;
}

void analysis_finish(struct analysis *a)
{
	/* ranks unknown from the trace and the file name get the next free number */
	int next = 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i].rank >= next)
			next = a->r[i].rank + 1;
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i].rank < 0)
			a->r[i].rank = next++;
	if (a->n)
		qsort(a->r, a->n, sizeof(*a->r), cmp_rank);
	for (size_t i = 1; i < a->n && !a->mixed_runs[0]; i++)
		if (a->r[i].rank == a->r[i - 1].rank && !two_runs(a, &a->r[i - 1], &a->r[i]))
			aorta_warn("rank %d appears twice ('%s' and '%s'): are two runs mixed?",
				   a->r[i].rank, a->r[i - 1].path, a->r[i].path);
	if (a->mixed_runs[0]) { /* refused (analysis_check_gaps): nothing to join */
		a->late_rank = a->top_rank = -1;
		a->late_share = NAN;
		a->clocks_aligned = 0;
		a->no_cross_rank_why = "two runs in one call";
		return;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	analysis_join(a);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (getenv("AORTA_TIMING")) { /* bench/analyze_scale: the join's cost against ranks */
		size_t calls = 0;
		for (size_t i = 0; i < a->n; i++)
			calls += a->r[i].ninst;
		fprintf(stderr, "aorta: timing: join of %zu ranks, %zu collective calls: %.3f ms\n", a->n, calls,
			(double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	}
}

void analysis_from_set(struct trace_set *s, const struct analysis_opts *o, struct analysis *a)
{
	memset(a, 0, sizeof(*a));
	a->opts = *o;
	a->late_rank = -1;
	a->r = xcalloc(s->n ? s->n : 1, sizeof(*a->r));
	for (size_t k = 0; k < s->n; k++) {
		analysis_rank(s->t[k], o, &a->r[k]);
		if (o->keep_traces) {
			a->r[k].t = s->t[k];
			s->t[k] = NULL;
		}
	}
	a->n = s->n;
	trace_set_release(s);
	analysis_finish(a);
	whatif_run(a);
}

/* ---- statistics and teardown --------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

struct stat4 steps_stat(const struct rank_result *r, int skip, size_t fig_off)
{
	struct stat4 s = { 0 };
	size_t k0 = skip > 0 ? (size_t)skip : 0;

	if (k0 >= r->nsteps)
		return s;
	size_t n = r->nsteps - k0;
	int64_t *v = xmalloc(n * sizeof(*v));
	double sum = 0;
	for (size_t k = 0; k < n; k++) {
		v[k] = step_fig(r, k0 + k, fig_off);
		sum += (double)v[k];
	}
	qsort(v, n, sizeof(*v), cmp_i64);
	s.n = n;
	s.mean = sum / (double)n;
	s.p50 = pctl_sorted_i64(v, n, 0.5);
	s.min = (double)v[0];
	s.max = (double)v[n - 1];
	free(v);
	return s;
}

struct job_step analysis_job_step(const struct analysis *a)
{
	struct job_step j = { NAN, NAN, NAN, 0, 0, 0, INT64_MIN, INT64_MIN };
	double sum = 0;
	for (size_t i = 0; i < a->n; i++) {
		const struct rank_result *r = &a->r[i];
		struct stat4 w = steps_stat(r, a->opts.skip_steps, offsetof(struct ov_figures, window_ns));
		if (!w.n)
			continue;
		sum += w.mean;
		j.min_ms = j.ranks && j.min_ms <= w.min / 1e6 ? j.min_ms : w.min / 1e6;
		j.max_ms = j.ranks && j.max_ms >= w.max / 1e6 ? j.max_ms : w.max / 1e6;
		j.steps = !j.ranks || w.n < j.steps ? w.n : j.steps;
		j.rank_steps += w.n;
		int64_t f = r->steps[r->nsteps - w.n].number, l = r->steps[r->nsteps - 1].number;
		j.first = j.first == INT64_MIN || f < j.first ? f : j.first;
		j.last = l > j.last ? l : j.last;
		j.ranks++;
	}
	if (j.ranks) {
		j.mean_ms = sum / (double)j.ranks / 1e6;
		return j;
	}
	for (size_t i = 0; i < a->n; i++) { /* no step: the whole traces */
		double w = (double)a->r[i].total.window_ns / 1e6;
		sum += w;
		j.min_ms = i && j.min_ms <= w ? j.min_ms : w;
		j.max_ms = i && j.max_ms >= w ? j.max_ms : w;
	}
	j.ranks = a->n;
	j.mean_ms = a->n ? sum / (double)a->n : NAN;
	return j;
}

size_t analysis_warmup_left(const struct analysis *a, int *rank, double *ms, double *median_ms)
{
	size_t most = 0;
	double worst = 0;
	*rank = -1;
	*ms = *median_ms = NAN;
	for (size_t i = 0; i < a->n; i++) {
		const struct rank_result *r = &a->r[i];
		struct stat4 w = steps_stat(r, a->opts.skip_steps, offsetof(struct ov_figures, window_ns));
		if (w.n < 3)
			continue; /* too few steps to call one of them an outlier */
		size_t k0 = r->nsteps - w.n, n = 0;
		while (n < w.n / 2 && (double)step_fig(r, k0 + n, offsetof(struct ov_figures, window_ns)) >
					      WARMUP_FACTOR * w.p50)
			n++;
		if (n > most)
			most = n;
		for (size_t k = 0; k < n; k++) {
			double v = (double)step_fig(r, k0 + k, offsetof(struct ov_figures, window_ns));
			if (v / w.p50 > worst) {
				worst = v / w.p50;
				*rank = r->rank;
				*ms = v / 1e6;
				*median_ms = w.p50 / 1e6;
			}
		}
	}
	return most;
}

double analysis_caused_time_share(const struct analysis *a)
{
	int64_t t = 0;
	for (size_t i = 0; i < a->n; i++)
		t += a->r[i].total.window_ns;
	return t > 0 ? (double)a->caused_ns / (double)t : NAN;
}

int analysis_waiting_material(const struct analysis *a)
{
	double share = analysis_caused_time_share(a);
	return a->caused_ns > 0 && share >= LATE_MIN_TIME_SHARE &&
	       !analysis_uncertain(a, a->caused_ns, a->matched_groups);
}

void analysis_free(struct analysis *a)
{
	for (size_t i = 0; i < a->n; i++) {
		struct rank_result *r = &a->r[i];
		trace_free(r->t);
		free(r->path);
		free(r->skipped_first);
		free(r->steps);
		steps_store_release(&r->sv);
		free(r->streams);
		for (size_t k = 0; k < r->ncolls; k++) {
			free(r->colls[k].pg);
			free(r->colls[k].pg_desc);
			free(r->colls[k].pg_ranks);
		}
		free(r->colls);
		for (size_t k = 0; k < r->nkernels; k++)
			free(r->kernels[k].name);
		free(r->kernels);
		free(r->inst);
		free(r->ops);
		free(r->peers);
		ivset_release(&r->wait_set);
		ivset_release(&r->exposed_set);
	}
	for (size_t k = 0; k < a->nxsteps; k++)
		free(a->xsteps[k].by_rank);
	free(a->xsteps);
	whatif_free(a->whatif);
	fr_run_free(a->fr);
	free(a->owned_why);
	free(a->r);
	for (size_t i = 0; i < a->ninputs; i++)
		free(a->inputs[i]);
	free(a->inputs);
	memset(a, 0, sizeof(*a));
}

/*
 * pipeline.c - inputs to a finished struct analysis: the worker pool.
 *
 * Design.  inputs_expand gives the sorted file list (with the format of
 * directory members already sniffed); the threads of base/pool.c take
 * files by an atomic index, read each with ingest_file_as (one open, one sniff), run the
 * per-rank engine (analysis_rank) and keep only the results, so a worker
 * holds one timeline at a time.  Errors: the first failing file in input
 * order wins, whatever thread saw it first.  Progress lines are one call
 * each (base/error.c), so parallel readers never interleave them.
 */
#include "pipeline/pipeline.h"
#include "flightrec/fr.h"
#include "ingest/ingest.h"
#include "ingest/upstream_sums.h"
#include "base/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct reading {
	const struct input_list *in;
	const struct analysis_opts *o;
	atomic_size_t done;
	pthread_mutex_t lock;
	struct rank_result *res;
	size_t nres, cap;
	struct fr_run *fr;     /* Flight Recorder dumps read (NULL: none yet) */
	struct aorta_error err;
	size_t err_file;     /* index of the first failing file, SIZE_MAX if none */
	/* overlap_report.py's records (analysis_run_upstream): each file's,
	 * folded into up in file order as soon as the files before it are */
	struct up_sums *up;
	struct up_file **slot; /* per file, once read (NULL: nothing to fold) */
	unsigned char *ready;
	size_t next_fold;
};

/* File i is read (uf: its records, or NULL): folds every file that is
 * ready, in order.  Called under p->lock. */
static void fold_ready(struct reading *p, size_t i, struct up_file *uf)
{
	p->slot[i] = uf;
	p->ready[i] = 1;
	for (; p->next_fold < p->in->n && p->ready[p->next_fold]; p->next_fold++) {
		struct up_file *f = p->slot[p->next_fold];
		if (!f)
			continue;
		up_fold(p->up, p->in->v[p->next_fold].path, f);
		up_file_release(f);
		free(f);
		p->slot[p->next_fold] = NULL;
	}
}

/* The one rule for every reader: a rank with no usable device event is bad
 * input (exit 3) with the reason; one with some events dropped is a warning
 * with the count and the first example (printed once, after the read). */
static enum aorta_status check_usable(const char *path, const struct trace *t, size_t nset,
				      struct aorta_error *e)
{
	char which[48] = "";

	if (t->n > 0)
		return AORTA_OK;
	if (nset > 1)
		snprintf(which, sizeof(which), "device %d: ", t->device);
	if (t->skipped)
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1,
				  "%snothing usable: all %llu device events were malformed and skipped "
				  "(first: %s)", which, (unsigned long long)t->skipped, t->skipped_first);
	if (t->other_device_spans)
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1,
				  "%snothing usable: the %llu device events are on another device (%d)",
				  which, (unsigned long long)t->other_device_spans, t->other_device);
	if (t->host_events)
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1,
				  "%snothing usable: a host-only trace (%llu host events, no GPU kernel, "
				  "memory copy or memset; was the profiler run with GPU activities on?)",
				  which, (unsigned long long)t->host_events);
	return aorta_fail(e, AORTA_EINPUT, path, 0, -1,
			  "%snothing usable: no GPU kernel, memory copy or memset in the trace", which);
}

/* File i of the list: read, checked, each of its ranks analysed (files
 * in parallel, pool_for). */
static void read_one(void *arg, size_t worker, size_t i)
{
	struct reading *p = arg;
	size_t nfiles = p->in->n;
	(void)worker;
	const struct input *f = &p->in->v[i];
	struct trace_set s = { 0 };
	struct aorta_error e = { 0 };
	struct fr_dump *frd = NULL;
	struct ingest_opts io = { .rules = p->o->rules, .rank_hint = rank_from_name(f->path), .fr = &frd };
	struct up_file *uf = NULL;
	if (p->up && up_is_metrics_name(f->path)) { /* gathered by the JSONL reader */
		uf = xmalloc(sizeof(*uf));
		up_file_init(uf);
		io.up = uf;
	}
	enum aorta_status st = f->z ? ingest_stream(f->path, f->z, f->format, &io, &s, &e)
				    : ingest_file_as(f->path, f->format, &io, &s, &e);
	if (p->up) {
		pthread_mutex_lock(&p->lock);
		fold_ready(p, i, uf);
		pthread_mutex_unlock(&p->lock);
	}
	for (size_t k = 0; !st && k < s.n; k++)
		st = check_usable(f->path, s.t[k], s.n, &e);
	if (st) {
		pthread_mutex_lock(&p->lock);
		if (p->err_file == SIZE_MAX || i < p->err_file) {
			p->err = e;
			p->err.code = st;
			p->err_file = i;
		}
		pthread_mutex_unlock(&p->lock);
		trace_set_release(&s);
		return;
	}
	if (frd) { /* a Flight Recorder dump: no timeline, kept whole for the diagnosis */
		pthread_mutex_lock(&p->lock);
		if (!p->fr)
			p->fr = xcalloc(1, sizeof(*p->fr));
		fr_run_add(p->fr, frd);
		pthread_mutex_unlock(&p->lock);
	}
	const char *fmt = s.n ? s.t[0]->format : frd ? frd->format : "no rank";
	for (size_t k = 0; k < s.n; k++) {
		struct trace *t = s.t[k];
		struct rank_result r;
		if (t->rank < 0 && s.n == 1)
			t->rank = io.rank_hint;
		analysis_rank(t, p->o, &r);
		r.rank = t->rank;
		if (p->o->keep_traces == 1 || p->o->keep_traces == 3 || (p->o->keep_traces == 2 && i == 0)) {
			r.t = t; /* 2: the first file's timeline only (report's Gantt chart) */
			s.t[k] = NULL;
		}
		pthread_mutex_lock(&p->lock);
		GROW(p->res, p->cap, p->nres + 1);
		p->res[p->nres++] = r;
		pthread_mutex_unlock(&p->lock);
	}
	for (size_t k = 0; k < s.n; k++)
		trace_free(s.t[k]);
	free(s.t);
	size_t d = atomic_fetch_add(&p->done, 1) + 1;
	if (nfiles > 1)
		aorta_note("read %zu/%zu: %s (%s)", d, nfiles, f->path, fmt);
}

size_t analysis_missing_ranks(const struct analysis *a, char *buf, size_t cap, int *world_size)
{
	int ws = 0;
	size_t missing = 0, o = 0;

	if (cap)
		buf[0] = '\0';
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i].world_size > ws)
			ws = a->r[i].world_size;
	if (world_size)
		*world_size = ws;
	if (ws <= 0 || ws > (1 << 24))
		return 0;
	uint8_t *have = xcalloc((size_t)ws, 1);
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i].rank >= 0 && a->r[i].rank < ws)
			have[a->r[i].rank] = 1;
	for (int r = 0; r < ws;) {
		if (have[r]) {
			r++;
			continue;
		}
		int q = r;
		while (q + 1 < ws && !have[q + 1])
			q++;
		missing += (size_t)(q - r + 1);
		if (o < cap)
			o += (size_t)snprintf(buf + o, cap - o, q > r ? "%s%d-%d" : "%s%d", o ? ", " : "",
					      r, q);
		r = q + 1;
	}
	if (o >= cap && cap > 4)
		memcpy(buf + cap - 4, "...", 4);
	free(have);
	return missing;
}

/* The per-rank pass over an expanded list, in parallel; results sorted by
 * (path, device) whatever order the workers finished in. */
static enum aorta_status read_inputs(const struct input_list *in, const struct analysis_opts *o,
				     struct up_sums *up, struct rank_result **res, size_t *nres,
				     struct fr_run **fr, struct aorta_error *e)
{
	struct reading p = { 0 };
	p.in = in;
	p.o = o;
	p.up = up;
	if (up) {
		p.slot = xcalloc(in->n ? in->n : 1, sizeof(*p.slot));
		p.ready = xcalloc(in->n ? in->n : 1, 1);
	}
	p.err_file = SIZE_MAX;
	atomic_init(&p.done, 0);
	pthread_mutex_init(&p.lock, NULL);
	pool_for(pool_threads(o->threads), in->n, read_one, &p);
	pthread_mutex_destroy(&p.lock);
	for (size_t i = 0; up && i < in->n; i++) /* after an error: what was not folded */
		if (p.slot[i]) {
			up_file_release(p.slot[i]);
			free(p.slot[i]);
		}
	free(p.slot);
	free(p.ready);
	/* the order the workers finished in is not the order of the files:
	 * sort, so unnumbered ranks get the same numbers in every run (and
	 * under mpirun, where process 0 sorts what it gathers the same way) */
	if (p.nres)
		qsort(p.res, p.nres, sizeof(*p.res), cmp_path_device);
	*res = p.res;
	*nres = p.nres;
	*fr = p.fr;
	if (p.err_file != SIZE_MAX) {
		if (e)
			*e = p.err;
		return p.err.code ? p.err.code : AORTA_EINPUT;
	}
	return AORTA_OK;
}

enum aorta_status analysis_expand(char *const *inputs, size_t n, char ***files, size_t *nfiles,
				  struct aorta_error *e)
{
	struct input_list in;
	enum aorta_status st = inputs_expand(inputs, n, aorta_strict, &in, e);

	*files = NULL;
	*nfiles = 0;
	if (st)
		return st;
	*files = xcalloc(in.n ? in.n : 1, sizeof(**files));
	for (size_t i = 0; i < in.n; i++)
		(*files)[i] = in.v[i].path; /* ownership moves to *files */
	*nfiles = in.n;
	free(in.v);
	return AORTA_OK;
}

enum aorta_status analysis_read_files(char **files, size_t nfiles, const struct analysis_opts *o,
				     struct rank_result **res, size_t *nres, struct fr_run **fr,
				     struct aorta_error *e)
{
	struct input_list in = { 0 };
	in.v = xcalloc(nfiles ? nfiles : 1, sizeof(*in.v));
	for (size_t i = 0; i < nfiles; i++)
		in.v[i] = (struct input){ .path = files[i], .format = FMT_UNKNOWN }; /* borrowed */
	in.n = nfiles;
	enum aorta_status st = read_inputs(&in, o, NULL, res, nres, fr, e);
	free(in.v);
	return st;
}

/* One collective call for the count below: its group, type, step, rank. */
struct call_key { const char *pg; int64_t step; int ri; uint8_t type; };

static int cmp_call_key(const void *x, const void *y)
{
	const struct call_key *a = x, *b = y;
	int c = strcmp(a->pg, b->pg);
	if (c)
		return c;
	if (a->type != b->type)
		return a->type - b->type;
	if (a->step != b->step)
		return (a->step > b->step) - (a->step < b->step);
	return a->ri - b->ri;
}

/* Where calls are matched by order within their step (a group without
 * sequence numbers, as op tables without a seq column), a rank that made
 * another number of calls than its peers in one step (a timer row missing
 * or written twice, a table that starts a step later) leaves the calls
 * without a partner unmatched in that step only: said once, with the
 * first such step, the group and each rank's count. */
static void warn_call_counts(const struct analysis *a)
{
	size_t n = 0;
	for (size_t i = 0; i < a->n; i++)
		n += a->r[i].ninst;
	if (!n || a->n < 2)
		return;
	struct call_key *v = xmalloc(n * sizeof(*v));
	size_t m = 0;
	for (size_t i = 0; i < a->n; i++)
		for (size_t j = 0; j < a->r[i].ninst; j++) {
			const struct comm_inst *c = &a->r[i].inst[j];
			if (c->p2p != P2P_NONE && c->peer >= 0)
				continue; /* a send or recv is matched with its peer's, not by group */
			v[m++] = (struct call_key){ c->pg ? c->pg : "", c->seq >= 0 ? INT64_MAX : c->step, (int)i,
						    c->type };
		}
	qsort(v, m, sizeof(*v), cmp_call_key);
	/* calls outside every step count only where no rank has steps (a
	 * table of one window): beside steps they are a profiler window's
	 * ragged edges, which "matched on part of their group" says */
	int stepless = 1;
	for (size_t i = 0; i < a->n; i++)
		stepless &= a->r[i].nsteps == 0;
	size_t steps = 0;
	char first[320] = "";
	int *cnt = xcalloc(a->n, sizeof(*cnt));
	unsigned char *calls = xcalloc(a->n, 1);
	for (size_t g = 0; g < m;) { /* one (group, type) */
		size_t h = g;
		int seq_all = 1;
		memset(calls, 0, a->n);
		while (h < m && !strcmp(v[h].pg, v[g].pg) && v[h].type == v[g].type) {
			calls[v[h].ri] = 1;
			seq_all &= v[h].step == INT64_MAX;
			h++;
		}
		for (size_t s = g; !seq_all && s < h;) { /* one step of it */
			size_t u = s;
			memset(cnt, 0, a->n * sizeof(*cnt));
			while (u < h && v[u].step == v[s].step)
				cnt[v[u++].ri]++;
			int lo = INT32_MAX, hi = -1;
			size_t rlo = 0, rhi = 0;
			for (size_t i = 0; i < a->n; i++)
				if (calls[i]) {
					if (cnt[i] < lo)
						lo = cnt[i], rlo = i;
					if (cnt[i] > hi)
						hi = cnt[i], rhi = i;
				}
			if (lo != hi && v[s].step != INT64_MAX && (v[s].step != INT64_MIN || stepless) && !steps++) {
				char st[32] = "outside every step";
				if (v[s].step != INT64_MIN)
					snprintf(st, sizeof(st), "step %lld", (long long)v[s].step);
				snprintf(first, sizeof(first), "%s, %s in group '%.80s': rank %d made %d call%s, rank %d %d",
					 st, coll_type_name((enum coll_type)v[s].type), v[s].pg, a->r[rhi].rank, hi,
					 hi == 1 ? "" : "s", a->r[rlo].rank, lo);
			}
			s = u;
		}
		g = h;
	}
	if (steps)
		aorta_warn("%zu step%s where ranks made different numbers of calls of one collective (first: %s): calls "
			   "are matched by order within their step, so the difference stays in that step and the calls "
			   "without a partner are left unmatched", steps, steps == 1 ? "" : "s", first);
	free(cnt);
	free(calls);
	free(v);
}

enum aorta_status analysis_check_gaps(const struct analysis *a, struct aorta_error *e)
{
	if (a->mixed_runs[0]) /* two runs in one call (analysis_finish) */
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1, "%s", a->mixed_runs);
	warn_call_counts(a);
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i].skipped)
			aorta_warn("'%s': %llu malformed event%s skipped (first: %s)", a->r[i].path,
				   (unsigned long long)a->r[i].skipped, a->r[i].skipped == 1 ? "" : "s",
				   a->r[i].skipped_first);

	if (a->incomplete_groups)
		aorta_warn("%llu collective%s matched on part of %s group: no waiting is charged from "
			   "them (first: %s)", (unsigned long long)a->incomplete_groups,
			   a->incomplete_groups == 1 ? "" : "s", a->incomplete_groups == 1 ? "its" : "their",
			   a->incomplete_first);

	if (a->p2p_bad_peers)
		aorta_warn("%llu send/recv call%s name%s a peer that cannot be %s (first: %s): refused, taken as "
			   "of unknown peer (never paired with %s, never a pipeline neighbour)",
			   (unsigned long long)a->p2p_bad_peers, a->p2p_bad_peers == 1 ? "" : "s",
			   a->p2p_bad_peers == 1 ? "s" : "", a->p2p_bad_peers == 1 ? "its" : "theirs", a->p2p_bad_first,
			   a->p2p_bad_peers == 1 ? "itself" : "themselves");
	if (a->unknown_type_calls) {
		char m[160] = "";
		if (a->n >= 2)
			snprintf(m, sizeof(m), "; %llu matched across ranks by order within stream and group (only "
				 "where every rank has as many)", (unsigned long long)a->unknown_type_matched);
		aorta_warn("%llu communication call%s of unknown collective type (no kernel name, trace metadata "
			   "or launching host op names %s): counted as communication%s",
			   (unsigned long long)a->unknown_type_calls, a->unknown_type_calls == 1 ? "" : "s",
			   a->unknown_type_calls == 1 ? "it" : "them", m);
	}
	if (a->size_mismatch)
		aorta_warn("%llu call%s disagree%s with %s collective's other ranks on its size or type "
			   "(first: %s): the bandwidth of such rows is not comparable",
			   (unsigned long long)a->size_mismatch, a->size_mismatch == 1 ? "" : "s",
			   a->size_mismatch == 1 ? "s" : "", a->size_mismatch == 1 ? "its" : "their",
			   a->size_mismatch_first);
	if (a->implausible_bw)
		aorta_warn("%llu collective row%s with a bus bandwidth above any interconnect: left out "
			   "as n/a (first: %s; a wrong size or time in the trace)",
			   (unsigned long long)a->implausible_bw, a->implausible_bw == 1 ? "" : "s",
			   a->implausible_bw_first);
	char miss[256];
	int ws = 0;
	size_t nm = analysis_missing_ranks(a, miss, sizeof(miss), &ws);
	for (size_t i = 0; ws > 0 && i < a->n; i++)
		if (a->r[i].rank >= ws) /* a trace of another run, or a wrong world size */
			aorta_warn("'%s': rank %d is outside the world of %d ranks the traces report",
				   a->r[i].path, a->r[i].rank, ws);
	if (nm && a->n < 2) { /* one rank named on purpose: said, not an error */
		aorta_note("the trace reports a world of %d ranks; rank%s %s not given", ws,
			   nm == 1 ? "" : "s", miss);
	} else if (nm) {
		if (aorta_strict)
			return aorta_fail(e, AORTA_EINPUT, NULL, 0, -1,
					  "the traces report a world of %d ranks but rank%s %s %s missing "
					  "(--strict)", ws, nm == 1 ? "" : "s", miss, nm == 1 ? "is" : "are");
		aorta_warn("the traces report a world of %d ranks but rank%s %s %s missing: cross-rank "
			   "figures cover only the ranks read", ws, nm == 1 ? "" : "s", miss,
			   nm == 1 ? "is" : "are");
	}
	return AORTA_OK;
}

/* The runs of inputs[0..n), or of the one input the caller opened (op). */
static enum aorta_status run(char *const *inputs, size_t n, const struct opened_input *op,
			     const struct analysis_opts *o, struct up_sums *up, struct analysis *a,
			     struct aorta_error *e)
{
	struct input_list in;
	enum aorta_status st;
	char *one = op ? (char *)op->path : NULL;

	memset(a, 0, sizeof(*a));
	a->opts = *o;
	a->late_rank = -1;
	st = op ? inputs_expand(&one, 1, aorta_strict, &in, e) : inputs_expand(inputs, n, aorta_strict, &in, e);
	if (st)
		return st;
	if (op && in.n == 1 && !strcmp(in.v[0].path, op->path)) { /* read from the caller's stream */
		in.v[0].z = op->z;
		in.v[0].format = op->format;
	}
	a->inputs = xcalloc(in.n ? in.n : 1, sizeof(*a->inputs));
	a->ninputs = in.n;
	for (size_t i = 0; i < in.n; i++)
		a->inputs[i] = xstrdup(in.v[i].path);
	st = read_inputs(&in, o, up, &a->r, &a->n, &a->fr, e);
	inputs_release(&in);
	if (st)
		return st;
	analysis_finish(a);
	if ((st = analysis_finish_fr(a, e)))
		return st;
	whatif_run(a);
	return analysis_check_gaps(a, e);
}

enum aorta_status analysis_run(char *const *inputs, size_t n, const struct analysis_opts *o,
			       struct analysis *a, struct aorta_error *e)
{
	return run(inputs, n, NULL, o, NULL, a, e);
}

enum aorta_status analysis_run_upstream(char *const *inputs, size_t n, const struct analysis_opts *o,
					struct up_sums *up, struct analysis *a, struct aorta_error *e)
{
	return run(inputs, n, NULL, o, up, a, e);
}

enum aorta_status analysis_run_opened(const struct opened_input *op, const struct analysis_opts *o,
				      struct up_sums *up, struct analysis *a, struct aorta_error *e)
{
	return run(NULL, 0, op, o, up, a, e);
}

enum aorta_status analysis_finish_fr(struct analysis *a, struct aorta_error *e)
{
	enum aorta_status st;
	if (!a->fr)
		return AORTA_OK;
	if ((st = fr_run_ranks(a->fr, e)))
		return st;
	fr_run_diagnose(a->fr);
	if (a->n)
		fr_join_traces(a->fr, a);
	return AORTA_OK;
}

/*
 * timeline.c - building a rank's timeline and resolving it.
 *
 * Readers append spans in file order; trace_finish then, in one pass each:
 *  1. classifies every distinct name once (rules.c) and copies kind and
 *     collective type to the spans;
 *  2. joins each device span to its host launch by correlation id (a sorted
 *     array of launches and a binary search: O(n log n), no hash table to
 *     size) and gives it that launch's step: the host step range that
 *     contains the launch start;
 *  3. spans with no launch (or no host steps) take the GPU-side step
 *     annotation that contains their start;
 *  4. sorts spans by (start, end) with one permutation applied to every
 *     array, and drops the launch records.
 * Costs: about 48 bytes per device span kept; launches are freed here.
 */
#include "timeline/timeline.h"
#include "timeline/rules.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct trace *trace_new(const char *path, const char *format)
{
	struct trace *t = xcalloc(1, sizeof(*t));

	strtab_init(&t->names);
	t->path = xstrdup(path ? path : "");
	t->format = format;
	t->rank = -1;
	t->world_size = -1;
	t->device = -1;
	t->other_device = -1;
	t->pid = -1;
	t->gstep_last_start_ns = INT64_MIN;
	t->tick_ns = 1;
	return t;
}

void trace_free(struct trace *t)
{
	if (!t)
		return;
	strtab_release(&t->names);
	free(t->path);
	free(t->start_ns);
	free(t->end_ns);
	free(t->launch_ns);
	free(t->corr);
	free(t->bytes);
	free(t->name);
	free(t->stream);
	free(t->step);
	free(t->meta);
	free(t->kind);
	free(t->coll_type);
	free(t->hint);
	free(t->coll);
	free(t->steps);
	free(t->gsteps);
	free(t->rec);
	free(t->launch);
	free(t->hcoll);
	free(t->hsync);
	free(t->deps);
	free(t);
}

static void resize_spans(struct trace *t, size_t c)
{
	t->start_ns = xrealloc(t->start_ns, c * sizeof(*t->start_ns));
	t->end_ns = xrealloc(t->end_ns, c * sizeof(*t->end_ns));
	t->launch_ns = xrealloc(t->launch_ns, c * sizeof(*t->launch_ns));
	t->corr = xrealloc(t->corr, c * sizeof(*t->corr));
	t->bytes = xrealloc(t->bytes, c * sizeof(*t->bytes));
	t->name = xrealloc(t->name, c * sizeof(*t->name));
	t->stream = xrealloc(t->stream, c * sizeof(*t->stream));
	t->step = xrealloc(t->step, c * sizeof(*t->step));
	t->meta = xrealloc(t->meta, c * sizeof(*t->meta));
	t->kind = xrealloc(t->kind, c * sizeof(*t->kind));
	t->coll_type = xrealloc(t->coll_type, c * sizeof(*t->coll_type));
	t->hint = xrealloc(t->hint, c * sizeof(*t->hint));
	t->cap = c;
}

static void grow_spans(struct trace *t, size_t need)
{
	if (need <= t->cap)
		return;
	size_t c = t->cap < 1024 ? 1024 : t->cap;
	while (c < need)
		c += c / 2;
	resize_spans(t, c);
}

size_t trace_add_device(struct trace *t, int64_t start_ns, int64_t end_ns,
			const char *name, size_t name_len, enum record_hint hint,
			int32_t stream, int64_t corr, uint64_t bytes)
{
	size_t i = t->n;

	grow_spans(t, i + 1);
	t->start_ns[i] = start_ns;
	t->end_ns[i] = end_ns;
	t->launch_ns[i] = INT64_MIN;
	t->corr[i] = corr;
	t->bytes[i] = bytes;
	t->name[i] = strtab_intern(&t->names, name, name_len);
	t->stream[i] = stream;
	t->step[i] = -1;
	t->meta[i] = UINT32_MAX;
	t->kind[i] = K_UNKNOWN;
	t->coll_type[i] = COLL_NONE;
	t->hint[i] = (uint8_t)hint;
	/* unsigned: a span beyond the limits is dropped at trace_finish, and
	 * must not overflow here first */
	if ((uint64_t)end_ns - (uint64_t)start_ns < 1000 && end_ns >= start_ns && hint != R_SYNC)
		t->has_hta_rounding_hazard = 1;
	t->n++;
	return i;
}

void trace_add_launch(struct trace *t, int64_t corr, int64_t start_ns, int64_t end_ns)
{
	trace_add_launch_tid(t, corr, start_ns, end_ns, -1);
}

void trace_add_launch_tid(struct trace *t, int64_t corr, int64_t start_ns, int64_t end_ns, int64_t tid)
{
	GROW(t->launch, t->lcap, t->nlaunch + 1);
	t->launch[t->nlaunch++] = (struct launch_rec){ corr, start_ns, end_ns, tid };
}

void trace_add_host_coll(struct trace *t, int64_t tid, int64_t start_ns, int64_t end_ns,
			 const char *name, size_t name_len, const struct coll_meta *m)
{
	GROW(t->hcoll, t->hccap, t->nhcoll + 1);
	struct host_coll *h = &t->hcoll[t->nhcoll++];
	h->tid = tid;
	h->start_ns = start_ns;
	h->end_ns = end_ns;
	h->name = strtab_intern(&t->names, name, name_len);
	if (m)
		h->m = *m;
	else
		coll_meta_init(&h->m);
}

void trace_set_kind(struct trace *t, size_t idx, enum span_kind k, enum coll_type coll)
{
	if (idx >= t->n)
		return;
	t->kind[idx] = (uint8_t)k;
	t->coll_type[idx] = (uint8_t)(k == K_COMM ? coll : COLL_NONE);
}

void trace_set_launch(struct trace *t, size_t idx, int64_t launch_ns)
{
	if (idx < t->n)
		t->launch_ns[idx] = launch_ns;
}

void trace_add_dep(struct trace *t, size_t op, size_t to, uint8_t how)
{
	GROW(t->deps, t->dcap, t->ndeps + 1);
	t->deps[t->ndeps++] = (struct span_dep){ (int32_t)op, (int32_t)to, how, { 0 } };
}

void trace_add_host_sync(struct trace *t, int64_t start_ns, int64_t end_ns)
{
	GROW(t->hsync, t->hscap, t->nhsync + 1);
	t->hsync[t->nhsync++] = (struct host_sync){ start_ns, end_ns };
}

void trace_add_step(struct trace *t, int64_t number, int64_t start_ns, int64_t end_ns)
{
	GROW(t->steps, t->scap, t->nsteps + 1);
	t->steps[t->nsteps++] = (struct step_range){ number, start_ns, end_ns };
}

void trace_add_gpu_step(struct trace *t, int64_t number, int64_t start_ns, int64_t end_ns)
{
	if (start_ns > t->gstep_last_start_ns)
		t->gstep_last_start_ns = start_ns;
	GROW(t->gsteps, t->gscap, t->ngsteps + 1);
	t->gsteps[t->ngsteps++] = (struct step_range){ number, start_ns, end_ns };
}

void trace_reserve(struct trace *t, size_t spans, size_t steps, size_t recs)
{
	if (spans > t->cap)
		resize_spans(t, spans);
	if (steps > t->scap) {
		t->steps = xrealloc(t->steps, steps * sizeof(*t->steps));
		t->scap = steps;
	}
	if (steps > t->gscap) {
		t->gsteps = xrealloc(t->gsteps, steps * sizeof(*t->gsteps));
		t->gscap = steps;
	}
	if (recs > t->rcap) {
		t->rec = xrealloc(t->rec, recs * sizeof(*t->rec));
		t->rcap = recs;
	}
}

void trace_add_record(struct trace *t, int64_t number, const double v[SR__COUNT])
{
	GROW(t->rec, t->rcap, t->nrec + 1);
	t->rec[t->nrec].number = number;
	memcpy(t->rec[t->nrec].v, v, sizeof(t->rec[t->nrec].v));
	t->nrec++;
}

void trace_set_coll(struct trace *t, size_t idx, const struct coll_meta *m)
{
	if (idx >= t->n)
		return;
	GROW(t->coll, t->ccap, t->ncoll + 1);
	t->coll[t->ncoll] = *m;
	t->meta[idx] = (uint32_t)t->ncoll++;
}

void trace_skip(struct trace *t, const char *fmt, ...)
{
	if (t->skipped++ == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(t->skipped_first, sizeof(t->skipped_first), fmt, ap);
		va_end(ap);
	}
}

/* ---- resolution --------------------------------------------------------- */

static int cmp_launch(const void *a, const void *b)
{
	const struct launch_rec *x = a, *y = b;
	return (x->corr > y->corr) - (x->corr < y->corr);
}

static int cmp_step(const void *a, const void *b)
{
	const struct step_range *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
	return (x->number > y->number) - (x->number < y->number);
}

/* Index of the range in r[0..n) (sorted by start, non-nested in practice)
 * that contains t, or -1.  With nested ranges the innermost-starting wins. */
static long find_range(const struct step_range *r, size_t n, int64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) { /* first range with start > t */
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid].start_ns <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = lo; k-- > 0;) {
		if (t < r[k].end_ns)
			return (long)k;
		if (lo - k > 4) /* steps do not nest deeply; stop looking back */
			break;
	}
	return -1;
}

static int cmp_step_number(const void *a, const void *b)
{
	const struct step_range *x = a, *y = b;
	return (x->number > y->number) - (x->number < y->number);
}

/* qsort of step ranges, skipped when they are in order already (a JSONL
 * rank's 10,000 steps come in order; ties are equal ranges or merged). */
static void sort_ranges(struct step_range *r, size_t n, int (*cmp)(const void *, const void *))
{
	for (size_t i = 1; i < n; i++)
		if (cmp(&r[i - 1], &r[i]) > 0) {
			qsort(r, n, sizeof(*r), cmp);
			return;
		}
}

/* Merge duplicates: the same step number seen twice keeps the widest range.
 * Sorted by number first, so O(n log n) (a run of 10,000 steps per rank is
 * common in JSONL); the caller sorts the result by start again. */
static size_t dedupe_steps(struct step_range *r, size_t n)
{
	size_t m = 0;

	sort_ranges(r, n, cmp_step_number);
	for (size_t i = 0; i < n; i++) {
		if (m && r[m - 1].number == r[i].number) {
			if (r[i].start_ns < r[m - 1].start_ns)
				r[m - 1].start_ns = r[i].start_ns;
			if (r[i].end_ns > r[m - 1].end_ns)
				r[m - 1].end_ns = r[i].end_ns;
		} else {
			r[m++] = r[i];
		}
	}
	return m;
}

/* For each GPU step, the index of the host step with its number (-1 if
 * none): one sorted pass instead of a search per span. */
static long *gpu_to_host_steps(const struct trace *t)
{
	long *g2s = xmalloc((t->ngsteps ? t->ngsteps : 1) * sizeof(*g2s));
	struct step_range *byn = xmalloc((t->nsteps ? t->nsteps : 1) * sizeof(*byn));
	for (size_t k = 0; k < t->nsteps; k++) {
		byn[k] = t->steps[k];
		byn[k].end_ns = (int64_t)k; /* carry the index */
	}
	sort_ranges(byn, t->nsteps, cmp_step_number);
	for (size_t g = 0; g < t->ngsteps; g++) {
		size_t lo = 0, hi = t->nsteps;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (byn[mid].number < t->gsteps[g].number)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* step numbers are unique after dedupe_steps */
		g2s[g] = lo < t->nsteps && byn[lo].number == t->gsteps[g].number ? (long)byn[lo].end_ns : -1;
	}
	free(byn);
	return g2s;
}

static struct trace *sort_ctx;

static int cmp_span(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct trace *t = sort_ctx;

	if (t->start_ns[i] != t->start_ns[j])
		return (t->start_ns[i] > t->start_ns[j]) - (t->start_ns[i] < t->start_ns[j]);
	if (t->end_ns[i] != t->end_ns[j])
		return (t->end_ns[i] > t->end_ns[j]) - (t->end_ns[i] < t->end_ns[j]);
	return (i > j) - (i < j);
}

#define PERMUTE(arr, type) do { type *tmp_ = xmalloc(t->n * sizeof(type)); \
	for (size_t k_ = 0; k_ < t->n; k_++) tmp_[k_] = (arr)[perm[k_]]; \
	free(arr); (arr) = tmp_; } while (0)

/* Sorting is done with a permutation; qsort_r is not C11, so a file-scope
 * context guarded by a mutex keeps trace_finish thread-safe. */
#include <pthread.h>
static pthread_mutex_t sort_lock = PTHREAD_MUTEX_INITIALIZER;

static int is_sorted(const struct trace *t)
{
	for (size_t i = 1; i < t->n; i++)
		if (t->start_ns[i] < t->start_ns[i - 1] ||
		    (t->start_ns[i] == t->start_ns[i - 1] && t->end_ns[i] < t->end_ns[i - 1]))
			return 0;
	return 1;
}

static void sort_spans(struct trace *t)
{
	if (is_sorted(t))
		return;
	uint32_t *perm = xmalloc(t->n * sizeof(*perm));
	for (size_t i = 0; i < t->n; i++)
		perm[i] = (uint32_t)i;
	pthread_mutex_lock(&sort_lock);
	sort_ctx = t;
	qsort(perm, t->n, sizeof(*perm), cmp_span);
	sort_ctx = NULL;
	pthread_mutex_unlock(&sort_lock);
	PERMUTE(t->start_ns, int64_t);
	PERMUTE(t->end_ns, int64_t);
	PERMUTE(t->launch_ns, int64_t);
	PERMUTE(t->corr, int64_t);
	PERMUTE(t->bytes, uint64_t);
	PERMUTE(t->name, uint32_t);
	PERMUTE(t->stream, int32_t);
	PERMUTE(t->step, int32_t);
	PERMUTE(t->meta, uint32_t);
	PERMUTE(t->kind, uint8_t);
	PERMUTE(t->coll_type, uint8_t);
	PERMUTE(t->hint, uint8_t);
	free(perm);
}

/* ---- collective identity (docs/metrics.md "Collective identity") --------- */

static int cmp_hcoll(const void *a, const void *b)
{
	const struct host_coll *x = a, *y = b;
	if (x->tid != y->tid)
		return (x->tid > y->tid) - (x->tid < y->tid);
	if (x->start_ns != y->start_ns)
		return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
	return (x->end_ns < y->end_ns) - (x->end_ns > y->end_ns); /* outer first */
}

#define HCOLL_LOOKBACK 64 /* host collective calls looked back on a thread for the ones around a launch */
#define HCOLL_DEPTH 4     /* nested ones merged (c10d::alltoall_base_ > record_param_comms > nccl:all_to_all) */

/* Whether name says a collective (vocab.c's table). */
static enum coll_type named(const struct trace *t, uint32_t id)
{
	return id ? coll_type_from_name(strtab_get(&t->names, id)) : COLL_NONE;
}

static int named_coll(const struct trace *t, const struct coll_meta *m)
{
	return named(t, m->coll_name) != COLL_NONE;
}

/* Fills what m does not know from the host collective calls around a
 * launch at time ts on thread tid (t->hcoll sorted by cmp_hcoll),
 * innermost first: the innermost call whose name says a collective is
 * m->host_op, its "Collective name" (record_param_comms) m->coll_name when
 * m has none, and sizes, group and peer where m lacks them.  Returns
 * whether any call was found. */
static int merge_host_colls(const struct trace *t, int64_t tid, int64_t ts, struct coll_meta *m)
{
	size_t lo = 0, hi = t->nhcoll;
	while (lo < hi) { /* first call after (tid, ts) */
		size_t mid = lo + (hi - lo) / 2;
		const struct host_coll *h = &t->hcoll[mid];
		if (h->tid < tid || (h->tid == tid && h->start_ns <= ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	int depth = 0;
	for (size_t k = lo, seen = 0; k-- > 0 && seen < HCOLL_LOOKBACK && depth < HCOLL_DEPTH; seen++) {
		const struct host_coll *h = &t->hcoll[k];
		if (h->tid != tid)
			break;
		if (h->end_ns < ts)
			continue; /* a sibling that ended before the launch */
		const struct coll_meta *x = &h->m;
		depth++;
		if (!m->host_op && named(t, h->name) != COLL_NONE)
			m->host_op = h->name;
		if (!named_coll(t, m) && named(t, x->coll_name) != COLL_NONE)
			m->coll_name = x->coll_name;
#define FILL(f, unk) do { if (m->f == (unk)) m->f = x->f; } while (0)
		FILL(pg_name, 0);
		FILL(pg_desc, 0);
		FILL(pg_ranks, 0);
		FILL(dtype, 0);
		FILL(dtype_bytes, 0);
		FILL(seq, -1);
		FILL(group_size, -1);
		if (m->in_nelems < 0 && m->out_nelems < 0) {
			m->in_nelems = x->in_nelems;
			m->out_nelems = x->out_nelems;
		}
		if (m->p2p == P2P_NONE && x->p2p != P2P_NONE) {
			m->p2p = x->p2p;
			m->peer = x->peer;
		}
#undef FILL
	}
	return depth > 0;
}

/* Span i (communication, or a peer copy) launched on thread tid: its
 * collective metadata completed from the host calls around its launch. */
static void link_host_colls(struct trace *t, size_t i, int64_t tid)
{
	struct coll_meta m;
	if (t->meta[i] != UINT32_MAX)
		m = t->coll[t->meta[i]];
	else
		coll_meta_init(&m);
	if (!merge_host_colls(t, tid, t->launch_ns[i], &m))
		return;
	if (t->meta[i] != UINT32_MAX)
		t->coll[t->meta[i]] = m;
	else
		trace_set_coll(t, i, &m);
}

/* Span i's collective type and size from everything the trace says, in
 * this order (docs/metrics.md "Collective identity"): the kernel's own
 * "Collective name"; its kernel name where that names a collective other
 * than send/recv (or a user rule fixes the type); the launching host op's
 * "Collective name", then the host op's own name (nccl:all_to_all over a
 * SendRecv kernel); the kernel name's send/recv.  Nothing: COLL_OTHER,
 * communication of unknown type (the join matches such calls by order and
 * says how many there were).  A peer copy
 * (Memcpy PtoP) launched inside a collective call is that collective's
 * (NCCL's copy-engine collectives); any other copy stays a copy.  The size,
 * when the span has none, is max(In, Out msg nelems) x the dtype's size. */
static void resolve_coll(struct trace *t, size_t i)
{
	const struct coll_meta *m = t->meta[i] != UINT32_MAX ? &t->coll[t->meta[i]] : NULL;
	enum coll_type by_name = t->kind[i] == K_COMM ? (enum coll_type)t->coll_type[i] : COLL_NONE;
	enum coll_type c = COLL_NONE, own = m ? named(t, m->coll_name) : COLL_NONE;
	if (own != COLL_NONE)
		c = own;
	else if (by_name != COLL_NONE && by_name != COLL_OTHER && by_name != COLL_SEND_RECV)
		c = by_name;
	else if (m && named(t, m->host_op) != COLL_NONE)
		c = named(t, m->host_op);
	else if (by_name == COLL_SEND_RECV)
		c = by_name;
	if (t->kind[i] == K_MEMCPY_P2P) {
		if (c == COLL_NONE)
			return; /* a copy no collective call launched */
		t->kind[i] = K_COMM;
	}
	if (c == COLL_NONE)
		c = COLL_OTHER;
	t->coll_type[i] = (uint8_t)c;
	if (m && !t->bytes[i]) {
		int64_t ne = m->in_nelems > m->out_nelems ? m->in_nelems : m->out_nelems;
		uint64_t b;
		/* checked: a hostile nelems must not wrap into a small size;
		 * an overflow leaves the size unknown (0) */
		if (ne > 0 && m->dtype_bytes > 0 && !__builtin_mul_overflow((uint64_t)ne, (uint64_t)m->dtype_bytes, &b))
			t->bytes[i] = b;
	}
}

void trace_finish(struct trace *t, const struct rules *rules)
{
	if (!rules)
		rules = rules_builtin();

	/* 1. classify each distinct (name, hint) once; a kind the reader gave
	 * (trace_set_kind) stays */
	size_t nn = t->names.n;
	uint8_t *kcache = xcalloc(nn * 4, 1), *ccache = xcalloc(nn * 4, 1);
	for (size_t i = 0; i < t->n; i++) {
		size_t key = (size_t)t->name[i] * 4 + t->hint[i];
		if (t->kind[i] == K_UNKNOWN) {
			if (!kcache[key]) {
				enum coll_type ct = COLL_NONE;
				enum span_kind k = rules_classify(rules, strtab_get(&t->names, t->name[i]),
								  (enum record_hint)t->hint[i], &ct);
				kcache[key] = (uint8_t)(k == K_UNKNOWN ? K_COMPUTE_OTHER : k);
				ccache[key] = (uint8_t)ct;
			}
			t->kind[i] = kcache[key];
			t->coll_type[i] = t->kind[i] == K_COMM ? ccache[key] : COLL_NONE;
		}
	}
	free(kcache);
	free(ccache);
	trace_plausible_spans(t);

	/* 2. steps, sorted, duplicates merged (a disjoint repeat left out) */
	trace_plausible_steps(t);
	if (t->nsteps) {
		t->nsteps = dedupe_steps(t->steps, t->nsteps);
		sort_ranges(t->steps, t->nsteps, cmp_step);
	}
	if (t->ngsteps) {
		t->ngsteps = dedupe_steps(t->gsteps, t->ngsteps);
		sort_ranges(t->gsteps, t->ngsteps, cmp_step);
	}

	/* 3. launches by correlation, and the host collective calls around
	 * each communication kernel's launch (collective identity) */
	if (t->nlaunch)
		qsort(t->launch, t->nlaunch, sizeof(*t->launch), cmp_launch);
	if (t->nhcoll)
		qsort(t->hcoll, t->nhcoll, sizeof(*t->hcoll), cmp_hcoll);
	long *g2s = NULL; /* GPU step index -> host step of the same number, -1 none */
	for (size_t i = 0; i < t->n; i++) {
		if (t->corr[i] >= 0 && t->nlaunch) {
			size_t lo = 0, hi = t->nlaunch;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (t->launch[mid].corr < t->corr[i])
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < t->nlaunch && t->launch[lo].corr == t->corr[i]) {
				t->launch_ns[i] = t->launch[lo].start_ns;
				long s = find_range(t->steps, t->nsteps, t->launch_ns[i]);
				t->step[i] = (int32_t)s;
				if (t->nhcoll && t->launch[lo].tid >= 0 &&
				    (t->kind[i] == K_COMM || t->kind[i] == K_MEMCPY_P2P))
					link_host_colls(t, i, t->launch[lo].tid);
			}
		}
		if (t->step[i] < 0 && t->launch_ns[i] == INT64_MIN && t->ngsteps) {
			long g = find_range(t->gsteps, t->ngsteps, t->start_ns[i]);
			if (g >= 0) { /* map the GPU annotation to the host step of that number */
				if (!g2s)
					g2s = gpu_to_host_steps(t);
				long s = g2s[g];
				if (s < 0 && !t->nsteps)
					s = -2 - g; /* resolved below when only GPU steps exist */
				t->step[i] = (int32_t)s;
			}
		}
	}
	free(g2s);
	/* a trace with GPU-side steps only: they become the steps */
	if (!t->nsteps && t->ngsteps) {
		t->steps = xmalloc(t->ngsteps * sizeof(*t->steps));
		memcpy(t->steps, t->gsteps, t->ngsteps * sizeof(*t->steps));
		t->nsteps = t->scap = t->ngsteps;
		for (size_t i = 0; i < t->n; i++)
			if (t->step[i] <= -2)
				t->step[i] = -2 - t->step[i];
	}
	trace_plausible_launches(t);
	free(t->launch);
	t->launch = NULL;
	t->nlaunch = t->lcap = 0;
	free(t->hcoll);
	t->hcoll = NULL;
	t->nhcoll = t->hccap = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->kind[i] == K_COMM || (t->kind[i] == K_MEMCPY_P2P && t->meta[i] != UINT32_MAX))
			resolve_coll(t, i);

	/* 4. order by time */
	sort_spans(t);
}

void trace_set_add(struct trace_set *s, struct trace *t)
{
	GROW(s->t, s->cap, s->n + 1);
	s->t[s->n++] = t;
}

void trace_set_release(struct trace_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		trace_free(s->t[i]);
	free(s->t);
	memset(s, 0, sizeof(*s));
}

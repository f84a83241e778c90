/*
 * optable.c - the what-if's op table of one rank, from its timeline
 * (analysis_rank calls whatif_ops while the timeline exists): every device
 * op in start order with its stream, launch, step and collective call, and
 * what the trace does not record but the replay needs: the cross-stream
 * dependencies, the step barriers and the host synchronisations, inferred
 * from the times.
 */
#include "overlap/whatif/private.h"

#include <stdlib.h>
#include <string.h>

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

struct launch_key { int64_t t; int32_t j; };

static int cmp_lkey(const void *a, const void *b)
{
	const struct launch_key *x = a, *y = b;
	if (x->t != y->t)
		return (x->t > y->t) - (x->t < y->t);
	return (x->j > y->j) - (x->j < y->j);
}

/* Ops with a known launch, in launch order (ties by start order). */
int32_t *wi_launch_order(const struct whatif_op *op, size_t n, size_t *nh)
{
	struct launch_key *k = xmalloc((n ? n : 1) * sizeof(*k));
	size_t m = 0;
	for (size_t j = 0; j < n; j++)
		if (op[j].launch_ns != INT64_MIN)
			k[m++] = (struct launch_key){ op[j].launch_ns, (int32_t)j };
	/* launches mostly come in start order: insertion sort while it moves
	 * little, else qsort (the keys are distinct: the same order either way) */
	size_t moves = 0;
	for (size_t a = 1; a < m; a++) {
		struct launch_key x = k[a];
		size_t b = a;
		for (; b > 0 && cmp_lkey(&k[b - 1], &x) > 0; b--) {
			if (++moves > 8 * m)
				break;
			k[b] = k[b - 1];
		}
		k[b] = x;
		if (moves > 8 * m) {
			qsort(k, m, sizeof(*k), cmp_lkey);
			break;
		}
	}
	int32_t *h = xmalloc((m ? m : 1) * sizeof(*h));
	for (size_t q = 0; q < m; q++)
		h[q] = k[q].j;
	free(k);
	*nh = m;
	return h;
}

/* Per step index, the latest end of its ops (INT64_MIN: none); *ns the
 * number of step indices. */
static int64_t *step_ends(const struct whatif_op *op, size_t n, size_t *ns)
{
	size_t m = 0;
	for (size_t j = 0; j < n; j++)
		if (op[j].step >= 0 && (size_t)op[j].step + 1 > m)
			m = (size_t)op[j].step + 1;
	int64_t *be = xmalloc((m ? m : 1) * sizeof(*be));
	for (size_t q = 0; q < m; q++)
		be[q] = INT64_MIN;
	for (size_t j = 0; j < n; j++)
		if (op[j].step >= 0 && op[j].end_ns > be[op[j].step])
			be[op[j].step] = op[j].end_ns;
	*ns = m;
	return be;
}

/* The step barrier: op j waited for the end of its rank's previous step
 * when that end is later than its stream and launch allow and not later
 * than its start (+ ROUND_NS).  Returns that end, else UNSET. */
static int64_t step_bar(const struct whatif_op *o, const int64_t *be, size_t nbe, int64_t ready)
{
	if (o->step < 1 || (size_t)o->step > nbe)
		return UNSET;
	int64_t b = be[o->step - 1];
	return b != INT64_MIN && b > ready && b <= o->start_ns + ROUND_NS ? b : UNSET;
}

/* Cross-stream dependencies: an op that starts later than its stream, its
 * launch and its step barrier allow, within DEP_LAG_NS after another
 * stream's op ended, waited for that op (an event wait the trace does not
 * record).  Where the trace has no launch for the op (an op table without
 * launch times), any such gap is taken as a wait for the latest-ending op
 * of another stream that ended within it, however long ago. */
static void infer_deps(struct whatif_op *op, size_t n)
{
	int32_t sid[64], last[64][2];
	int ns = 0;
	size_t nbe;
	int64_t *be = step_ends(op, n, &nbe);
	for (size_t j = 0; j < n; j++) {
		int k;
		for (k = 0; k < ns && sid[k] != op[j].stream; k++)
			;
		if (k == ns) {
			if (ns == 64)
				continue; /* more streams than any trace has: no inference for the rest */
			sid[ns] = op[j].stream;
			last[ns][0] = last[ns][1] = -1;
			ns++;
		}
		int64_t ready = last[k][0] >= 0 ? op[last[k][0]].end_ns : INT64_MIN;
		if (op[j].launch_ns > ready)
			ready = op[j].launch_ns;
		int64_t b = step_bar(&op[j], be, nbe, ready == INT64_MIN ? UNSET : ready);
		op[j].bar = b != UNSET;
		if (b != UNSET)
			ready = b;
		int nolaunch = op[j].launch_ns == INT64_MIN;
		if (ready == INT64_MIN ? nolaunch : op[j].start_ns - ready > LAT_MAX_NS) {
			int64_t best = INT64_MIN;
			for (int q = 0; q < ns; q++)
				for (int b2 = 0; q != k && b2 < 2; b2++) {
					int32_t c = last[q][b2];
					if (c < 0)
						continue;
					int64_t e = op[c].end_ns;
					if (e <= op[j].start_ns + (nolaunch ? ROUND_NS : DEP_SLACK_NS) && e > ready &&
					    (nolaunch || op[j].start_ns - e <= DEP_LAG_NS) && e > best) {
						best = e;
						op[j].dep = c;
					}
				}
		}
		last[k][1] = last[k][0];
		last[k][0] = (int32_t)j;
	}
	free(be);
}

int wi_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Host synchronisations: where a sync record (ends[]) ended between two
 * launches, the later launch waited for the op it synchronised on: of the
 * last op launched on each stream before it, the latest-ending one that
 * ended by the sync's end (+ SYNC_LAG_NS). */
static void infer_syncs(struct whatif_op *op, size_t n, int64_t *ends, size_t nends)
{
	if (!nends)
		return;
	qsort(ends, nends, sizeof(*ends), wi_cmp_i64);
	size_t nh;
	int32_t *h = wi_launch_order(op, n, &nh);
	int32_t sid[64], last[64]; /* per stream, the op launched last so far */
	int ns = 0;
	for (size_t p = 0; p < nh; p++) {
		if (p) {
			int64_t lo = op[h[p - 1]].launch_ns, hi = op[h[p]].launch_ns;
			size_t a = 0, b = nends; /* the last sync end <= hi */
			while (a < b) {
				size_t m = (a + b) / 2;
				if (ends[m] <= hi)
					a = m + 1;
				else
					b = m;
			}
			if (a && ends[a - 1] > lo) {
				int64_t se = ends[a - 1], best = INT64_MIN;
				for (int q = 0; q < ns; q++) {
					int64_t e = op[last[q]].end_ns;
					if (e <= se + SYNC_LAG_NS && e > best) {
						best = e;
						op[h[p]].hdep = last[q];
					}
				}
			}
		}
		int q;
		for (q = 0; q < ns && sid[q] != op[h[p]].stream; q++)
			;
		if (q == ns && ns < 64)
			sid[ns++] = op[h[p]].stream;
		if (q < ns)
			last[q] = h[p];
	}
	free(h);
}

void whatif_ops(const struct trace *t, const uint8_t *cls, struct rank_result *r)
{
	int32_t *smap = xmalloc((t->nsteps ? t->nsteps : 1) * sizeof(*smap));
	for (size_t k = 0, q = 0; k < t->nsteps; k++)
		smap[k] = q < r->nsteps && r->steps[q].number == t->steps[k].number ? (int32_t)q++ : -1;
	size_t n = 0, nsync = 0;
	for (size_t i = 0; i < t->n; i++) {
		n += cls[i] != C_NONE;
		nsync += t->kind[i] == K_SYNC;
	}
	nsync += t->nhsync;
	struct whatif_op *op = xcalloc(n ? n : 1, sizeof(*op));
	uint32_t *hn = xmalloc((t->names.n ? t->names.n : 1) * sizeof(*hn)); /* per name, once */
	for (size_t k = 0; k < t->names.n; k++)
		hn[k] = fnv1a(strtab_get(&t->names, (uint32_t)k));
	int64_t *sync = xmalloc((nsync ? nsync : 1) * sizeof(*sync));
	size_t j = 0, q = 0;
	nsync = 0;
	for (size_t k = 0; k < t->nhsync; k++)
		sync[nsync++] = t->hsync[k].end_ns;
	for (size_t i = 0; i < t->n; i++) {
		int comm = kind_class((enum span_kind)t->kind[i]) == C_COMM;
		size_t qi = comm ? q++ : 0;
		if (t->kind[i] == K_SYNC)
			sync[nsync++] = t->end_ns[i];
		if (cls[i] == C_NONE)
			continue;
		struct whatif_op *o = &op[j];
		o->start_ns = t->start_ns[i];
		o->end_ns = t->end_ns[i];
		o->launch_ns = t->launch_ns[i];
		o->stream = t->stream[i];
		o->step = t->step[i] >= 0 && (size_t)t->step[i] < t->nsteps ? smap[t->step[i]] : -1;
		o->dep = o->hdep = o->inst = -1;
		o->hash = t->name[i] < t->names.n ? hn[t->name[i]] : 0;
		o->kind = t->kind[i];
		if (comm && qi < r->ninst) {
			o->inst = (int32_t)qi;
			r->inst[qi].op = (int32_t)j;
		}
		j++;
	}
	infer_deps(op, n);
	infer_syncs(op, n, sync, nsync);
	free(hn);
	free(sync);
	free(smap);
	r->ops = op;
	r->nops = n;
}

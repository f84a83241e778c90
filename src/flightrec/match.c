/*
 * match.c - the dumps of a job matched across ranks, per process group, and
 * each group's first collective divergence (docs/metrics.md "Flight
 * Recorder: why it hung"); diagnose.c explains the hang from them.
 *
 * Groups.  A group is its id (the pg_config key, which every member's
 * entries carry as process_group[0]) and its members: the global ranks its
 * pg_config lists (two groups of one id with other members, as
 * split_group makes, are two groups).  gloo lists no subgroups in pg_config
 * (torch 2.11-2.15 write one item with an empty name holding the default
 * group's ranks): a group it does not list has as members the ranks whose
 * dumps hold it.
 *
 * One rank's view of a group.  Its entries of the group (in its buffer),
 * and its pg_status for the group (keyed by the rank-local pg_id that its
 * entries carry; where it has no entry of the group, by creation order:
 * the pg_config ids sorted as numbers against the pg_status ids, used only
 * when the counts agree and every link the entries give agrees).  For a
 * collective sequence number s the view says: enqueued (with its state) or
 * completed, never enqueued, or unknown:
 *  - an entry with collective_seq_id s: its state (completed; for gloo,
 *    which discovers no states, retired);
 *  - pg_status (in sequence units: its last_enqueued_collective is the
 *    group's last entry's number): s <= last completed is completed, s <=
 *    last enqueued is enqueued, beyond is never enqueued;
 *  - otherwise from the buffer: s beyond its newest entry of the group was
 *    never enqueued; s before its oldest is completed in an active-only
 *    dump (completed entries are left out: the record ids skip), unknown in
 *    a wrapped ring, never enqueued in a buffer holding the whole run;
 *  - no entry of the group: never enqueued when the buffer holds the whole
 *    run or only active entries (it would be there, not completed, if the
 *    rank had called it), unknown in a wrapped ring.
 * A member that left no dump counts as never having enqueued an op that
 * some member still waits on.
 *
 * The first divergent collective of a group: the lowest s that some member
 * enqueued and some never did (those are its missing ranks); where every
 * member enqueued the same numbers, the lowest s called with another op,
 * size or dtype, else the lowest s completed on some members but not on
 * others (state).  Members that enqueued it but completed fewer of the
 * group's collectives than the most advanced member are behind.  Point to
 * point: p2p_seq_id counts each rank's own sends and receives, so sends
 * from a to b are paired with b's receives from a in order, over the ops
 * not yet completed; a send whose receive was never posted (or the other
 * way round) has the peer as its missing rank, a pair of other sizes is a
 * size mismatch.  The group's first divergent op is the earlier (by
 * enqueue time) of its collective and point-to-point divergences.
 *
 * The verdict names the group whose divergence is most telling: missing
 * ranks or another op, size or dtype before a state difference, then the
 * one enqueued first (the first op some member was left waiting on).
 */
#include "flightrec/fr.h"
#include "flightrec/match_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- small sets of ranks ----------------------------------------------------------- */


void fm_rs_add(struct rset *s, int32_t r)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == r)
			return;
	GROW(s->v, s->cap, s->n + 1);
	s->v[s->n++] = r;
}

static int cmp_i32(const void *x, const void *y)
{
	int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
	return (a > b) - (a < b);
}

void fm_rs_sort(struct rset *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_i32);
}

/* Sorts s and drops repeats. */
void fm_rs_unique(struct rset *s)
{
	fm_rs_sort(s);
	size_t m = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!m || s->v[m - 1] != s->v[i])
			s->v[m++] = s->v[i];
	s->n = m;
}

int fm_rs_has_sorted(const struct rset *s, int32_t r)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->v[mid] < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && s->v[lo] == r;
}

int fm_rs_has(const struct rset *s, int32_t r)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == r)
			return 1;
	return 0;
}

const char *fr_ranks_str(const int32_t *v, size_t n, char *buf, size_t cap)
{
	size_t o = 0;
	if (cap)
		buf[0] = '\0';
	if (!n)
		return buf;
	/* "0-7"; every 8th: "5, 13, ..., 509 (64 ranks)"; long lists cut the same way */
	int32_t step = n >= 3 ? v[1] - v[0] : 0;
	int regular = n >= 3 && step > 0;
	for (size_t i = 2; i < n && regular; i++)
		regular = v[i] - v[i - 1] == step;
	if (regular && step == 1) {
		snprintf(buf, cap, "%d-%d", v[0], v[n - 1]);
		return buf;
	}
	if ((regular && n > 4) || n > 12) {
		snprintf(buf, cap, "%d, %d, ..., %d (%zu ranks)", v[0], v[1], v[n - 1], n);
		return buf;
	}
	for (size_t i = 0; i < n && o < cap; i++)
		o += (size_t)snprintf(buf + o, cap - o, "%s%d", i ? ", " : "", v[i]);
	if (o >= cap && cap > 4)
		memcpy(buf + cap - 4, "...", 4);
	return buf;
}

/* "rank 5", "ranks 5 and 6", "ranks 1, 2 and 7", "ranks 1, 2, 3, ... (40 ranks)" */
void fm_ranks_words(const int32_t *v, size_t n, char *buf, size_t cap)
{
	size_t o = (size_t)snprintf(buf, cap, "rank%s ", n == 1 ? "" : "s");
	if (n > 8) {
		snprintf(buf + o, cap > o ? cap - o : 0, "%d, %d, %d, ... (%zu ranks)", v[0], v[1], v[2], n);
		return;
	}
	for (size_t i = 0; i < n && o < cap; i++)
		o += (size_t)snprintf(buf + o, cap - o, "%s%d", i == 0 ? "" : i + 1 == n ? " and " : ", ", v[i]);
	if (o >= cap && cap > 4)
		memcpy(buf + cap - 4, "...", 4);
}

int32_t *fm_rs_copy(const struct rset *s, size_t *n)
{
	*n = s->n;
	if (!s->n)
		return NULL;
	int32_t *v = xmalloc(s->n * sizeof(*v));
	memcpy(v, s->v, s->n * sizeof(*v));
	return v;
}

/* ---- the run: dumps and ranks --------------------------------------------------------- */

void fr_run_add(struct fr_run *r, struct fr_dump *d)
{
	GROW(r->d, r->cap, r->n + 1);
	r->d[r->n++] = d;
}

static int cmp_dump(const void *x, const void *y)
{
	const struct fr_dump *a = *(const struct fr_dump *const *)x, *b = *(const struct fr_dump *const *)y;
	if (a->rank != b->rank)
		return (a->rank > b->rank) - (a->rank < b->rank);
	return strcmp(a->path, b->path);
}

static int cmp_path(const void *x, const void *y)
{
	const struct fr_dump *a = *(const struct fr_dump *const *)x, *b = *(const struct fr_dump *const *)y;
	return strcmp(a->path, b->path);
}

enum aorta_status fr_run_ranks(struct fr_run *r, struct aorta_error *e)
{
	qsort(r->d, r->n, sizeof(*r->d), cmp_path);
	for (size_t i = 0; i < r->n; i++) {
		struct fr_dump *d = r->d[i];
		if (d->rank >= 0 && d->name_rank >= 0 && d->name_rank != d->rank)
			aorta_warn("'%s': the dump is rank %d by %s; the %d ending its file name is not its rank",
				   d->path, d->rank, d->rank_from, d->name_rank);
	}
	for (size_t i = 0; i < r->n; i++) { /* the next free numbers, in path order */
		struct fr_dump *d = r->d[i];
		if (d->rank >= 0)
			continue;
		int k = 0;
		for (int taken = 1; taken; k += taken) {
			taken = 0;
			for (size_t j = 0; j < r->n && !taken; j++)
				taken = r->d[j]->rank == k;
		}
		d->rank = k;
		aorta_warn("'%s': no rank in the dump or its file name: numbered %d", d->path, k);
	}
	qsort(r->d, r->n, sizeof(*r->d), cmp_dump);
	for (size_t i = 1; i < r->n; i++)
		if (r->d[i]->rank == r->d[i - 1]->rank)
			return aorta_fail(e, AORTA_EINPUT, r->d[i]->path, 0, -1,
					  "a second Flight Recorder dump of rank %d (the first is '%s', by %s; this one by %s)",
					  r->d[i]->rank, r->d[i - 1]->path, r->d[i - 1]->rank_from, r->d[i]->rank_from);
	return AORTA_OK;
}

void fr_result_release(struct fr_result *res)
{
	for (size_t g = 0; g < res->ngroups; g++) {
		struct fr_group_res *G = &res->groups[g];
		free(G->pg_id);
		free(G->pg_name);
		free(G->ranks);
		if (G->div) {
			free(G->div->profiling_name);
			free(G->div->missing);
			free(G->div->odd);
			free(G->div->behind);
			free(G->div->detail);
			free(G->div);
		}
		for (size_t k = 0; k < G->nlast; k++) {
			struct fr_last *L = &G->last[k];
			free(L->profiling_name);
			free(L->source);
			free(L->where);
			for (size_t f = 0; f < L->nframes; f++)
				free(L->frames[f]);
			free(L->frames);
		}
		free(G->last);
	}
	free(res->groups);
	free(res->verdict);
	free(res->kind);
	free(res->no_dump);
	for (size_t i = 0; i < res->nculprits; i++)
		free(res->culprits[i].why);
	free(res->culprits);
	free(res->versions);
	free(res->join.first);
	memset(res, 0, sizeof(*res));
}

void fr_run_free(struct fr_run *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		fr_dump_free(r->d[i]);
	free(r->d);
	fr_result_release(&r->res);
	free(r);
}

/* ---- groups and views --------------------------------------------------------------- */





const struct fr_dump *fm_dump_of(const struct job *j, int32_t rank)
{
	size_t lo = 0, hi = j->run->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (j->run->d[mid]->rank < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < j->run->n && j->run->d[lo]->rank == rank ? j->run->d[lo] : NULL;
}

/* A dump's members of group `name` as its pg_config lists them (sorted
 * into s); 0 when it lists none.  An item with an empty name (gloo, torch
 * 2.11-2.15, writes one whose ranks are those of whichever group it
 * created last) names no group. */
static int listed_members(const struct fr_dump *d, const char *name, struct rset *s)
{
	const struct fr_pg *hit = NULL;
	for (size_t i = 0; name[0] && i < d->npgs && !hit; i++)
		if (!strcmp(d->pgs[i].key, name))
			hit = &d->pgs[i];
	if (!hit || !hit->nranks)
		return 0;
	s->v = xmalloc(hit->nranks * sizeof(*s->v));
	s->cap = s->n = hit->nranks;
	memcpy(s->v, hit->ranks, hit->nranks * sizeof(*s->v));
	fm_rs_unique(s);
	return 1;
}

static int same_set(const struct rset *a, const struct rset *b)
{
	return a->n == b->n && (!a->n || !memcmp(a->v, b->v, a->n * sizeof(*a->v)));
}

static uint64_t hash_str(const char *p)
{
	uint64_t h = 1469598103934665603ull;
	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h;
}

/* The slot of id `name` in the hash of group ids (empty or holding it). */
size_t *fm_slot_of(struct job *j, const char *name)
{
	size_t i = (size_t)(hash_str(name) & (j->nslot - 1));
	while (j->slot[i] && strcmp(j->g[j->slot[i] - 1].name, name))
		i = (i + 1) & (j->nslot - 1);
	return &j->slot[i];
}

static void rehash(struct job *j)
{
	free(j->slot);
	j->nslot = j->nslot ? 2 * j->nslot : 64;
	j->slot = xcalloc(j->nslot, sizeof(*j->slot));
	for (size_t g = 0; g < j->ng; g++) {
		size_t *sl = fm_slot_of(j, j->g[g].name);
		if (!*sl)
			*sl = g + 1;
	}
}

/* The group of id `name` with members listed (sorted; known when a pg_config
 * lists them), created when new; its index. */
static size_t group_for(struct job *j, const char *name, const char *desc, const struct rset *listed, int known)
{
	if (!j->nslot)
		rehash(j);
	size_t *sl = fm_slot_of(j, name), last = SIZE_MAX;
	for (size_t gi = *sl ? *sl - 1 : SIZE_MAX; gi != SIZE_MAX; gi = j->g[gi].next) {
		struct grp *g = &j->g[gi];
		last = gi;
		if (known && g->members_known && !same_set(&g->members, listed))
			continue; /* split_group: one id, other members */
		if (known && !g->members_known) {
			g->members_known = 1;
			for (size_t k = 0; k < listed->n; k++) {
				GROW(g->members.v, g->members.cap, g->members.n + 1);
				g->members.v[g->members.n++] = listed->v[k];
			}
		}
		if ((!g->desc || !g->desc[0]) && desc)
			g->desc = desc;
		return gi;
	}
	GROW(j->g, j->capg, j->ng + 1);
	size_t gi = j->ng++;
	struct grp *g = &j->g[gi];
	memset(g, 0, sizeof(*g));
	g->name = name;
	g->desc = desc ? desc : "";
	g->members_known = known;
	g->next = SIZE_MAX;
	for (size_t k = 0; known && k < listed->n; k++) {
		GROW(g->members.v, g->members.cap, g->members.n + 1);
		g->members.v[g->members.n++] = listed->v[k];
	}
	if (last != SIZE_MAX)
		j->g[last].next = gi;
	else
		*sl = gi + 1;
	if (2 * j->ng > j->nslot)
		rehash(j);
	return gi;
}


/* The view of a member (the views are sorted by rank). */
struct view *fm_view_of(struct grp *g, int32_t rank)
{
	size_t lo = 0, hi = g->nv;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (g->v[mid].rank < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->nv && g->v[lo].rank == rank ? &g->v[lo] : NULL;
}

/* pg_id of group `name` on dump d by creation order (see the top), -1. */
static int64_t pg_id_by_order(const struct fr_dump *d, const char *name)
{
	if (!d->nst || d->nst != d->npgs)
		return -1;
	int64_t *keys = xmalloc(d->npgs * sizeof(*keys)), *ids = xmalloc(d->nst * sizeof(*ids));
	int64_t found = -1;
	size_t at = SIZE_MAX;
	for (size_t i = 0; i < d->npgs; i++) {
		char *end;
		long long k = strtoll(d->pgs[i].key, &end, 10);
		if (!d->pgs[i].key[0] || *end)
			goto out;
		keys[i] = k;
	}
	for (size_t i = 0; i < d->nst; i++)
		ids[i] = d->st[i].pg_id;
	/* both sorted ascending (small: insertion sort) */
	for (size_t i = 1; i < d->npgs; i++)
		for (size_t k = i; k > 0 && keys[k - 1] > keys[k]; k--) {
			int64_t t = keys[k];
			keys[k] = keys[k - 1];
			keys[k - 1] = t;
		}
	for (size_t i = 1; i < d->nst; i++)
		for (size_t k = i; k > 0 && ids[k - 1] > ids[k]; k--) {
			int64_t t = ids[k];
			ids[k] = ids[k - 1];
			ids[k - 1] = t;
		}
	/* every link the entries give must agree with the order */
	for (size_t i = 0; i < d->ne; i++) {
		char *end;
		long long k = strtoll(d->e[i].pg_name, &end, 10);
		if (*end || d->e[i].pg_id < 0)
			goto out;
		size_t p = 0;
		while (p < d->npgs && keys[p] != k)
			p++;
		if (p == d->npgs || ids[p] != d->e[i].pg_id)
			goto out;
	}
	{
		char *end;
		long long k = strtoll(name, &end, 10);
		if (!name[0] || *end)
			goto out;
		for (size_t p = 0; p < d->npgs; p++)
			if (keys[p] == k)
				at = p;
		if (at != SIZE_MAX)
			found = ids[at];
	}
out:
	free(keys);
	free(ids);
	return found;
}

static const struct fr_pgstat *stat_of(const struct fr_dump *d, int64_t pg_id)
{
	for (size_t i = 0; pg_id >= 0 && i < d->nst; i++)
		if (d->st[i].pg_id == pg_id)
			return &d->st[i];
	return NULL;
}

static int dump_nccl_like(const struct fr_dump *d)
{
	for (size_t i = 0; i < d->ne; i++)
		if (!strncmp(d->e[i].profiling_name, "nccl", 4) || !strncmp(d->e[i].profiling_name, "rccl", 4))
			return 1;
	return d->ne == 0; /* no entry: assume NCCL's numbering (gloo dumps hold every op) */
}

struct seq_ix {
	int64_t seq;
	size_t ix;
};

static int cmp_seq_ix(const void *x, const void *y)
{
	const struct seq_ix *a = x, *b = y;
	if (a->seq != b->seq)
		return (a->seq > b->seq) - (a->seq < b->seq);
	return (a->ix > b->ix) - (a->ix < b->ix);
}

static void fill_view(struct grp *g, struct view *v, int group_p2p_only)
{
	const struct fr_dump *d = v->d;
	v->cmin = v->cmax = v->last_done = -1;
	if (!d)
		return;
	int64_t pg_id = -1;
	int has_p2p = 0, has_coll = 0;
	v->cix = xmalloc((v->n ? v->n : 1) * sizeof(*v->cix));
	for (size_t k = 0; k < v->n; k++) {
		const struct fr_entry *en = &d->e[v->ix[k]];
		if (pg_id < 0)
			pg_id = en->pg_id;
		if (en->p2p) {
			has_p2p = 1;
			continue;
		}
		has_coll = 1;
		v->cix[v->nc++] = v->ix[k];
		if (v->cmin < 0 || en->seq < v->cmin)
			v->cmin = en->seq;
		if (en->seq > v->cmax)
			v->cmax = en->seq;
		if (en->done && en->seq > v->last_done)
			v->last_done = en->seq;
	}
	/* the collectives by number, buffer order kept among equal numbers
	 * (the entries of a coalesced call share one) */
	struct seq_ix *si = xmalloc((v->nc ? v->nc : 1) * sizeof(*si));
	for (size_t a = 0; a < v->nc; a++)
		si[a] = (struct seq_ix){ d->e[v->cix[a]].seq, v->cix[a] };
	if (v->nc)
		qsort(si, v->nc, sizeof(*si), cmp_seq_ix);
	for (size_t a = 0; a < v->nc; a++)
		v->cix[a] = si[a].ix;
	free(si);
	if (pg_id < 0)
		pg_id = pg_id_by_order(d, g->name);
	v->st = stat_of(d, pg_id);
	if (!v->st || d->global_seq)
		return;
	/* what the numbers count: the group's newest entry says */
	if (v->n) {
		const struct fr_entry *last = &d->e[v->ix[v->n - 1]];
		if (last->p2p && last->p2p_seq == v->st->enqueued)
			v->units = U_P2P;
		else if (!last->p2p && last->seq == v->st->enqueued)
			v->units = U_SEQ;
		else if (last->op_id == v->st->enqueued)
			v->units = U_OP;
		else if (dump_nccl_like(d) && !has_p2p)
			v->units = U_SEQ;
		else if (dump_nccl_like(d) && !has_coll)
			v->units = U_P2P;
	} else if (dump_nccl_like(d)) {
		v->units = group_p2p_only ? U_P2P : U_SEQ;
	}
	if (v->units == U_SEQ && v->st->completed > v->last_done)
		v->last_done = v->st->completed;
}

static int dump_filtered(const struct job *j, const struct fr_dump *d)
{
	return d->filtered || (!d->ne && j->filtered);
}

/* The member's state of collective s (see the top); *en its entry, if any. */
int fm_coll_state(const struct job *j, const struct view *v, int64_t s, const struct fr_entry **en)
{
	const struct fr_dump *d = v->d;
	*en = NULL;
	if (!d)
		return S_UNKNOWN;
	size_t lo = 0, hi = v->nc;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (d->e[v->cix[mid]].seq < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < v->nc && d->e[v->cix[lo]].seq == s) {
		const struct fr_entry *x = &d->e[v->cix[lo]];
		*en = x;
		if (x->done || (v->units == U_SEQ && s <= v->st->completed))
			return S_DONE;
		return S_ENQ;
	}
	if (v->units == U_SEQ)
		return s <= v->st->completed ? S_DONE : s <= v->st->enqueued ? S_ENQ : S_NOT;
	if (v->cmax >= 0) {
		if (s > v->cmax)
			return S_NOT;
		if (s < v->cmin)
			return dump_filtered(j, d) ? S_DONE : d->wrapped ? S_UNKNOWN : S_NOT;
		return dump_filtered(j, d) ? S_DONE : S_NOT; /* a gap */
	}
	return d->wrapped ? S_UNKNOWN : S_NOT;
}

/* ---- building the groups ---------------------------------------------------------------- */

struct loc {                            /* a dump's groups: id -> group index */
	const char *name;
	size_t gi;
};

void fm_build_groups(struct job *j)
{
	struct fr_run *r = j->run;
	struct loc *loc = NULL;
	size_t nloc = 0, caploc = 0;
	/* the dumps are sorted by rank, so each group's views come in rank order */
	for (size_t i = 0; i < r->n; i++) {
		struct fr_dump *d = r->d[i];
		j->filtered |= d->filtered;
		nloc = 0;
		/* the groups its entries use, then those only its pg_config lists */
		for (size_t k = 0; k < d->ne; k++) {
			const struct fr_entry *en = &d->e[k];
			size_t l = 0;
			while (l < nloc && strcmp(loc[l].name, en->pg_name))
				l++;
			if (l == nloc) {
				struct rset ls = { 0 };
				int known = listed_members(d, en->pg_name, &ls);
				size_t gi = group_for(j, en->pg_name, en->pg_desc, &ls, known);
				free(ls.v);
				struct grp *g = &j->g[gi];
				if (!g->members_known || !fm_rs_has_sorted(&g->members, d->rank)) {
					GROW(g->members.v, g->members.cap, g->members.n + 1);
					g->members.v[g->members.n++] = d->rank;
					if (g->members_known)
						fm_rs_unique(&g->members);
				}
				GROW(g->v, g->capv, g->nv + 1);
				memset(&g->v[g->nv], 0, sizeof(g->v[g->nv]));
				g->v[g->nv].d = d;
				g->v[g->nv].rank = d->rank;
				g->nv++;
				GROW(loc, caploc, nloc + 1);
				loc[nloc++] = (struct loc){ en->pg_name, gi };
			}
			struct grp *g = &j->g[loc[l].gi];
			struct view *v = &g->v[g->nv - 1]; /* this dump's, the last added */
			GROW(v->ix, v->cap, v->n + 1);
			v->ix[v->n++] = k;
			g->calls++;
		}
		for (size_t k = 0; k < d->npgs; k++) {
			const struct fr_pg *p = &d->pgs[k];
			if (!p->key[0] || !p->nranks)
				continue; /* gloo's nameless item names no group */
			struct rset ls = { 0 };
			listed_members(d, p->key, &ls);
			group_for(j, p->key, p->desc, &ls, 1);
			free(ls.v);
		}
	}
	free(loc);
	for (size_t i = 0; i < j->ng; i++) {
		struct grp *g = &j->g[i];
		fm_rs_unique(&g->members);
		/* a view per member, in member order (both sorted by rank) */
		struct view *nv = xcalloc(g->members.n ? g->members.n : 1, sizeof(*nv));
		size_t o = 0;
		for (size_t m = 0; m < g->members.n; m++) {
			while (o < g->nv && g->v[o].rank < g->members.v[m])
				o++;
			if (o < g->nv && g->v[o].rank == g->members.v[m]) {
				nv[m] = g->v[o];
			} else {
				nv[m].rank = g->members.v[m];
				nv[m].d = fm_dump_of(j, g->members.v[m]);
			}
		}
		free(g->v);
		g->v = nv;
		g->nv = g->capv = g->members.n;
		int coll = 0, p2p = 0;
		for (size_t m = 0; m < g->nv; m++)
			for (size_t k = 0; g->v[m].d && k < g->v[m].n; k++) {
				coll |= !g->v[m].d->e[g->v[m].ix[k]].p2p;
				p2p |= g->v[m].d->e[g->v[m].ix[k]].p2p;
			}
		for (size_t m = 0; m < g->nv; m++)
			fill_view(g, &g->v[m], p2p && !coll);
	}
}

/* ---- one group's divergence ----------------------------------------------------------------- */


static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
}

void fm_set_name(struct div_work *w, const char *pn)
{
	free(w->div.profiling_name);
	w->div.profiling_name = xstrdup(pn ? pn : "");
}

/* The divergence found: collective number seq, its kind and class. */
static void settle(struct div_work *w, int64_t seq, const char *mismatch, const char *name, int64_t created, int cls)
{
	w->div.seq = seq;
	w->div.mismatch = mismatch;
	fm_set_name(w, name);
	w->div.created_ns = created;
	w->found = 1;
	w->cls = cls;
}

/* Moves the ranks of *from (sorted) into *to. */
static void take(struct rset *to, struct rset *from)
{
	fm_rs_sort(from);
	free(to->v);
	*to = *from;
	memset(from, 0, sizeof(*from));
}

/* Whether two calls of one collective differ in op, size or dtype; *what
 * and the detail say which. */
static const char *call_diff(const struct fr_entry *a, const struct fr_entry *b, char *detail, size_t cap)
{
	if (strcmp(a->op, b->op)) {
		snprintf(detail, cap, "%s instead of %s", b->op, a->op);
		return "op";
	}
	/* all_to_all splits legitimately differ by rank; gather and scatter
	 * buffers differ on the root */
	int uneven = strstr(a->op, "all_to_all") || strstr(a->op, "_v") || !strcmp(a->op, "gather") ||
		     !strcmp(a->op, "scatter");
	if (!uneven && (strcmp(a->in_sizes, b->in_sizes) || strcmp(a->out_sizes, b->out_sizes))) {
		if (strcmp(a->in_sizes, b->in_sizes))
			snprintf(detail, cap, "input sizes %.200s instead of %.200s", b->in_sizes, a->in_sizes);
		else
			snprintf(detail, cap, "output sizes %.200s instead of %.200s", b->out_sizes, a->out_sizes);
		return "size";
	}
	if (strcmp(a->in_dtypes, b->in_dtypes) || strcmp(a->out_dtypes, b->out_dtypes)) {
		if (strcmp(a->in_dtypes, b->in_dtypes))
			snprintf(detail, cap, "%.100s instead of %.100s", b->in_dtypes, a->in_dtypes);
		else
			snprintf(detail, cap, "output %.100s instead of %.100s", b->out_dtypes, a->out_dtypes);
		return "dtype";
	}
	return NULL;
}

/* Every collective number in the members' buffers, ascending, once
 * (*n of them; NULL when none). */
static int64_t *coll_seqs(const struct grp *g, size_t *n)
{
	int64_t *seqs = NULL;
	size_t ns = 0, cap = 0;
	for (size_t m = 0; m < g->nv; m++)
		for (size_t k = 0; g->v[m].d && k < g->v[m].n; k++) {
			const struct fr_entry *en = &g->v[m].d->e[g->v[m].ix[k]];
			if (en->p2p)
				continue;
			GROW(seqs, cap, ns + 1);
			seqs[ns++] = en->seq;
		}
	if (ns)
		qsort(seqs, ns, sizeof(*seqs), cmp_i64);
	size_t u = 0;
	for (size_t i = 0; i < ns; i++)
		if (!u || seqs[u - 1] != seqs[i])
			seqs[u++] = seqs[i];
	*n = u;
	return seqs;
}

/* A candidate divergence: its collective number (-1: none yet), name,
 * enqueue time and ranks. */
struct coll_find { int64_t seq; const char *name; int64_t created; struct rset r; };

/* The search of a group's collective divergence, number by number: the
 * first missing ranks, calls that differ, state difference, and the first
 * number every member with a dump waits on. */
struct coll_search {
	struct coll_find mis, odd, state, all_wait;
	const char *odd_what;
	int odd_done;
	char odd_detail[512];
};

/* Where collective s's calls differ, against the call most members made
 * (ref: a member's call; enq: the members that enqueued it): the first
 * such s and its members with another call.  Returns the call compared
 * against (the majority's, else ref). */
static const struct fr_entry *odd_calls(const struct grp *g, const struct fr_entry **ent, const int *stv, int enq,
		      const struct fr_entry *ref, int64_t s, int64_t created, struct coll_search *cs)
{
	for (size_t m = 0; m < g->nv; m++) {
		if (!ent[m])
			continue;
		size_t agree = 0;
		for (size_t k = 0; k < g->nv; k++)
			agree += ent[k] && !call_diff(ent[m], ent[k], cs->odd_detail, sizeof(cs->odd_detail));
		if (2 * agree > (size_t)enq || agree == (size_t)enq) {
			ref = ent[m];
			break;
		}
	}
	for (size_t m = 0; m < g->nv; m++) {
		const char *wh;
		if (ent[m] && (wh = call_diff(ref, ent[m], cs->odd_detail, sizeof(cs->odd_detail)))) {
			if (cs->odd.seq < 0) {
				cs->odd = (struct coll_find){ s, ref->profiling_name, created, cs->odd.r };
				cs->odd_what = wh;
				cs->odd_done = 1;
				for (size_t k = 0; k < g->nv; k++)
					cs->odd_done &= stv[k] == S_DONE;
			}
			if (cs->odd.seq == s && !strcmp(cs->odd_what, wh))
				fm_rs_add(&cs->odd.r, g->v[m].rank);
		}
	}
	if (cs->odd.seq == s) { /* the detail of the first odd member */
		for (size_t m = 0; m < g->nv; m++)
			if (ent[m] && fm_rs_has(&cs->odd.r, g->v[m].rank)) {
				call_diff(ref, ent[m], cs->odd_detail, sizeof(cs->odd_detail));
				break;
			}
	}
	return ref;
}

/* Collective s in every member's view (ent, stv: per member); 1 when
 * some member never enqueued what another did (the search ends there). */
static int coll_step(const struct job *j, const struct grp *g, int64_t s, const struct fr_entry **ent, int *stv,
		     struct coll_search *cs)
{
	int enq = 0, waiting = 0, with_dump = 0;
	const struct fr_entry *ref = NULL;
	int64_t created = 0;
	for (size_t m = 0; m < g->nv; m++) {
		stv[m] = fm_coll_state(j, &g->v[m], s, &ent[m]);
		enq += stv[m] == S_ENQ || stv[m] == S_DONE;
		waiting += stv[m] == S_ENQ;
		with_dump += g->v[m].d != NULL;
		if (ent[m] && !ref)
			ref = ent[m];
		if (ent[m] && ent[m]->created_ns && (!created || ent[m]->created_ns < created))
			created = ent[m]->created_ns;
	}
	if (cs->all_wait.seq < 0 && waiting && waiting == with_dump)
		cs->all_wait = (struct coll_find){ s, ref ? ref->profiling_name : NULL, created, { 0 } };
	struct rset here = { 0 };
	for (size_t m = 0; m < g->nv; m++)
		if (stv[m] == S_NOT || (!g->v[m].d && waiting))
			fm_rs_add(&here, g->v[m].rank);
	if (enq && here.n) {
		cs->mis = (struct coll_find){ s, ref ? ref->profiling_name : NULL, created, here };
		return 1;
	}
	free(here.v);
	if (cs->odd.seq < 0 && ref) /* calls that differ */
		ref = odd_calls(g, ent, stv, enq, ref, s, created, cs);
	if (cs->state.seq < 0) {
		int done = 0, notdone = 0;
		for (size_t m = 0; m < g->nv; m++) {
			done += stv[m] == S_DONE;
			notdone += stv[m] == S_ENQ;
		}
		if (done && notdone) {
			cs->state = (struct coll_find){ s, ref ? ref->profiling_name : NULL, created, cs->state.r };
			for (size_t m = 0; m < g->nv; m++)
				if (stv[m] == S_ENQ)
					fm_rs_add(&cs->state.r, g->v[m].rank);
		}
	}
	return 0;
}

void fm_coll_divergence(const struct job *j, const struct grp *g, struct div_work *w)
{
	size_t ns;
	int64_t *seqs = coll_seqs(g, &ns);
	if (!ns) {
		free(seqs);
		return;
	}
	const struct fr_entry **ent = xcalloc(g->nv ? g->nv : 1, sizeof(*ent));
	int *stv = xcalloc(g->nv ? g->nv : 1, sizeof(*stv));
	struct coll_search cs = { .mis = { .seq = -1 }, .odd = { .seq = -1 }, .state = { .seq = -1 },
				  .all_wait = { .seq = -1 } };
	for (size_t i = 0; i < ns && !coll_step(j, g, seqs[i], ent, stv, &cs); i++)
		;
	if (cs.mis.seq >= 0) {
		settle(w, cs.mis.seq, "missing", cs.mis.name, cs.mis.created, 2);
		take(&w->missing, &cs.mis.r);
	} else if (!g->members_known && j->dead.n && cs.all_wait.seq >= 0) {
		/* gloo lists no members: every known member waits on someone the
		 * dumps do not show, the ranks that left none */
		settle(w, cs.all_wait.seq, "missing", cs.all_wait.name, cs.all_wait.created, 2);
		w->div.detail = xstrdup("the group's members are not listed in the dumps: every member with a dump "
					"waits, so the missing ones are among the ranks without a dump");
		for (size_t i = 0; i < j->dead.n; i++)
			fm_rs_add(&w->missing, j->dead.v[i]);
	} else if (cs.odd.seq >= 0) {
		settle(w, cs.odd.seq, cs.odd_what, cs.odd.name, cs.odd.created, 2);
		w->div.detail = xstrdup(cs.odd_detail);
		w->div.completed = cs.odd_done;
		take(&w->odd, &cs.odd.r);
	} else if (cs.state.seq >= 0) {
		settle(w, cs.state.seq, "state", cs.state.name, cs.state.created, 1);
		take(&w->odd, &cs.state.r);
	}
	free(cs.mis.r.v);
	free(cs.odd.r.v);
	free(cs.state.r.v);
	free(ent);
	free(stv);
	free(seqs);
}

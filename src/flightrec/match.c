/*
 * match.c - the dumps of a job matched across ranks, per process group, and
 * the hang explained (docs/metrics.md "Flight Recorder: why it hung").
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

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- small sets of ranks ----------------------------------------------------------- */

struct rset {
	int32_t *v;
	size_t n, cap;
};

static void rs_add(struct rset *s, int32_t r)
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

static void rs_sort(struct rset *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_i32);
}

/* Sorts s and drops repeats. */
static void rs_unique(struct rset *s)
{
	rs_sort(s);
	size_t m = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!m || s->v[m - 1] != s->v[i])
			s->v[m++] = s->v[i];
	s->n = m;
}

static int rs_has_sorted(const struct rset *s, int32_t r)
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

static int rs_has(const struct rset *s, int32_t r)
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
static void ranks_words(const int32_t *v, size_t n, char *buf, size_t cap)
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

static int32_t *rs_copy(const struct rset *s, size_t *n)
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

enum { U_NONE, U_SEQ, U_P2P, U_OP };
enum { S_UNKNOWN, S_NOT, S_ENQ, S_DONE };

struct view {
	const struct fr_dump *d;        /* NULL: the member left no dump */
	int32_t rank;
	size_t *ix;                     /* its entries of the group, in buffer order */
	size_t n, cap;
	const struct fr_pgstat *st;     /* its pg_status for the group, or NULL */
	int units;                      /* what st's numbers count */
	int64_t cmin, cmax;             /* collective numbers in the buffer, -1 none */
	int64_t last_done;              /* highest collective number known completed, -1 */
	size_t *cix;                    /* its collective entries sorted by number (stable) */
	size_t nc;
};

struct grp {
	const char *name, *desc;
	struct rset members;            /* global ranks, sorted */
	int members_known;              /* from a pg_config */
	struct view *v;                 /* one per member (same order) */
	size_t nv, capv;
	uint64_t calls;
	size_t next;                    /* the next group of the same id (split_group), SIZE_MAX */
};

struct job {
	struct fr_run *run;
	struct grp *g;
	size_t ng, capg;
	size_t *slot;                   /* hash of group ids: first group index + 1, 0 empty */
	size_t nslot;
	int filtered;                   /* some dump holds only active entries */
	struct rset dead;               /* ranks of the job without a dump */
};

static const struct fr_dump *dump_of(const struct job *j, int32_t rank)
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
	rs_unique(s);
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
static size_t *slot_of(struct job *j, const char *name)
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
		size_t *sl = slot_of(j, j->g[g].name);
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
	size_t *sl = slot_of(j, name), last = SIZE_MAX;
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
static struct view *view_of(struct grp *g, int32_t rank)
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
static int coll_state(const struct job *j, const struct view *v, int64_t s, const struct fr_entry **en)
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

static void build_groups(struct job *j)
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
				if (!g->members_known || !rs_has_sorted(&g->members, d->rank)) {
					GROW(g->members.v, g->members.cap, g->members.n + 1);
					g->members.v[g->members.n++] = d->rank;
					if (g->members_known)
						rs_unique(&g->members);
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
		rs_unique(&g->members);
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
				nv[m].d = dump_of(j, g->members.v[m]);
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

struct div_work {
	struct fr_div div;
	struct rset missing, odd, behind;
	int found;
	int cls;                /* 2: missing/op/size/dtype, 1: state */
};

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
}

static void set_name(struct div_work *w, const char *pn)
{
	free(w->div.profiling_name);
	w->div.profiling_name = xstrdup(pn ? pn : "");
}

/* The divergence found: collective number seq, its kind and class. */
static void settle(struct div_work *w, int64_t seq, const char *mismatch, const char *name, int64_t created, int cls)
{
	w->div.seq = seq;
	w->div.mismatch = mismatch;
	set_name(w, name);
	w->div.created_ns = created;
	w->found = 1;
	w->cls = cls;
}

/* Moves the ranks of *from (sorted) into *to. */
static void take(struct rset *to, struct rset *from)
{
	rs_sort(from);
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

static void coll_divergence(const struct job *j, const struct grp *g, struct div_work *w)
{
	/* every collective number in the members' buffers, ascending */
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
	if (!ns)
		return;
	qsort(seqs, ns, sizeof(*seqs), cmp_i64);
	size_t u = 0;
	for (size_t i = 0; i < ns; i++)
		if (!u || seqs[u - 1] != seqs[i])
			seqs[u++] = seqs[i];
	ns = u;
	const struct fr_entry **ent = xcalloc(g->nv ? g->nv : 1, sizeof(*ent));
	int *stv = xcalloc(g->nv ? g->nv : 1, sizeof(*stv));
	int64_t mis_seq = -1, odd_seq = -1, state_seq = -1;
	struct rset mis = { 0 }, odd = { 0 }, late = { 0 };
	const char *odd_what = NULL;
	int odd_done = 0;
	char odd_detail[512] = "";
	const char *mis_name = NULL, *odd_name = NULL, *state_name = NULL;
	int64_t mis_created = 0, odd_created = 0, state_created = 0;
	int64_t all_wait_seq = -1, all_wait_created = 0;
	const char *all_wait_name = NULL;
	for (size_t i = 0; i < ns && mis_seq < 0; i++) {
		int64_t s = seqs[i];
		int enq = 0, waiting = 0;
		const struct fr_entry *ref = NULL;
		int64_t created = 0;
		for (size_t m = 0; m < g->nv; m++) {
			stv[m] = coll_state(j, &g->v[m], s, &ent[m]);
			enq += stv[m] == S_ENQ || stv[m] == S_DONE;
			waiting += stv[m] == S_ENQ;
			if (ent[m] && !ref)
				ref = ent[m];
			if (ent[m] && ent[m]->created_ns && (!created || ent[m]->created_ns < created))
				created = ent[m]->created_ns;
		}
		int with_dump = 0;
		for (size_t m = 0; m < g->nv; m++)
			with_dump += g->v[m].d != NULL;
		if (all_wait_seq < 0 && waiting && waiting == with_dump) {
			all_wait_seq = s;
			all_wait_created = created;
			all_wait_name = ref ? ref->profiling_name : NULL;
		}
		struct rset here = { 0 };
		for (size_t m = 0; m < g->nv; m++)
			if (stv[m] == S_NOT || (!g->v[m].d && waiting))
				rs_add(&here, g->v[m].rank);
		if (enq && here.n) {
			mis_seq = s;
			mis = here;
			mis_name = ref ? ref->profiling_name : NULL;
			mis_created = created;
			break;
		}
		free(here.v);
		/* calls that differ: against the call most members made */
		if (odd_seq < 0 && ref) {
			for (size_t m = 0; m < g->nv; m++) {
				if (!ent[m])
					continue;
				size_t agree = 0;
				for (size_t k = 0; k < g->nv; k++)
					agree += ent[k] && !call_diff(ent[m], ent[k], odd_detail, sizeof(odd_detail));
				if (2 * agree > (size_t)enq || agree == (size_t)enq) {
					ref = ent[m];
					break;
				}
			}
			for (size_t m = 0; m < g->nv; m++) {
				const char *wh;
				if (ent[m] && (wh = call_diff(ref, ent[m], odd_detail, sizeof(odd_detail)))) {
					if (odd_seq < 0) {
						odd_seq = s;
						odd_what = wh;
						odd_name = ref->profiling_name;
						odd_created = created;
						odd_done = 1;
						for (size_t k = 0; k < g->nv; k++)
							odd_done &= stv[k] == S_DONE;
					}
					if (odd_seq == s && !strcmp(odd_what, wh))
						rs_add(&odd, g->v[m].rank);
				}
			}
			if (odd_seq == s) { /* the detail of the first odd member */
				for (size_t m = 0; m < g->nv; m++)
					if (ent[m] && rs_has(&odd, g->v[m].rank)) {
						call_diff(ref, ent[m], odd_detail, sizeof(odd_detail));
						break;
					}
			}
		}
		if (state_seq < 0) {
			int done = 0, notdone = 0;
			for (size_t m = 0; m < g->nv; m++) {
				done += stv[m] == S_DONE;
				notdone += stv[m] == S_ENQ;
			}
			if (done && notdone) {
				state_seq = s;
				state_name = ref ? ref->profiling_name : NULL;
				state_created = created;
				for (size_t m = 0; m < g->nv; m++)
					if (stv[m] == S_ENQ)
						rs_add(&late, g->v[m].rank);
			}
		}
	}
	if (mis_seq >= 0) {
		settle(w, mis_seq, "missing", mis_name, mis_created, 2);
		take(&w->missing, &mis);
	} else if (!g->members_known && j->dead.n && all_wait_seq >= 0) {
		/* gloo lists no members: every known member waits on someone the
		 * dumps do not show, the ranks that left none */
		settle(w, all_wait_seq, "missing", all_wait_name, all_wait_created, 2);
		w->div.detail = xstrdup("the group's members are not listed in the dumps: every member with a dump "
					"waits, so the missing ones are among the ranks without a dump");
		for (size_t i = 0; i < j->dead.n; i++)
			rs_add(&w->missing, j->dead.v[i]);
	} else if (odd_seq >= 0) {
		settle(w, odd_seq, odd_what, odd_name, odd_created, 2);
		w->div.detail = xstrdup(odd_detail);
		w->div.completed = odd_done;
		take(&w->odd, &odd);
	} else if (state_seq >= 0) {
		settle(w, state_seq, "state", state_name, state_created, 1);
		take(&w->odd, &late);
	}
	free(mis.v);
	free(odd.v);
	free(late.v);
	free(ent);
	free(stv);
	free(seqs);
}

/* ---- point to point ------------------------------------------------------------------------ */

struct p2p_op {
	const struct fr_entry *en;
	int32_t rank, peer;      /* global */
	int send;
};

static int cmp_p2p(const void *x, const void *y)
{
	const struct p2p_op *a = x, *b = y;
	if (a->rank != b->rank)
		return (a->rank > b->rank) - (a->rank < b->rank);
	if (a->peer != b->peer)
		return (a->peer > b->peer) - (a->peer < b->peer);
	if (a->send != b->send)
		return a->send - b->send;
	return (a->en->record_id > b->en->record_id) - (a->en->record_id < b->en->record_id);
}

/* A rank that waits on nobody: no dump, or nothing outstanding in it. */
static int waits_on_nobody(const struct job *j, int32_t rank)
{
	const struct fr_dump *d = dump_of(j, rank);
	for (size_t i = 0; d && i < d->ne; i++)
		if (!d->e[i].done)
			return 0;
	return 1;
}

static void p2p_divergence(const struct job *j, const struct grp *g, struct div_work *w)
{
	if (!g->members_known)
		return;
	struct p2p_op *ops = NULL;
	size_t n = 0, cap = 0;
	for (size_t m = 0; m < g->nv; m++) {
		const struct view *v = &g->v[m];
		for (size_t k = 0; v->d && k < v->n; k++) {
			const struct fr_entry *en = &v->d->e[v->ix[k]];
			if (!en->p2p || en->done)
				continue;
			int send = !strcmp(en->op, "send");
			int32_t peer_local = send ? en->dst : en->src;
			if (peer_local < 0 || (size_t)peer_local >= g->members.n)
				continue; /* no peer in the name (TorchComms, any-source recv) */
			GROW(ops, cap, n + 1);
			ops[n++] = (struct p2p_op){ en, v->rank, g->members.v[peer_local], send };
		}
	}
	if (!n) {
		free(ops);
		return;
	}
	qsort(ops, n, sizeof(*ops), cmp_p2p);
	const struct p2p_op *best = NULL;
	const char *best_what = NULL;
	int best_free = 0;
	char detail[512] = "";
	for (size_t i = 0; i < n;) {
		/* the run of ops of one (rank, peer, direction) */
		size_t e = i;
		while (e < n && ops[e].rank == ops[i].rank && ops[e].peer == ops[i].peer && ops[e].send == ops[i].send)
			e++;
		/* the matching ops on the peer: (peer, rank, !direction) */
		/* ops are sorted by (rank, peer, send, record): the first of
		 * (peer, rank, !send) by binary search */
		struct p2p_op key = { NULL, ops[i].peer, ops[i].rank, !ops[i].send };
		size_t a = 0, hi = n;
		while (a < hi) {
			size_t mid = (a + hi) / 2;
			const struct p2p_op *m = &ops[mid];
			int c = m->rank != key.rank ? (m->rank < key.rank ? -1 : 1)
				: m->peer != key.peer ? (m->peer < key.peer ? -1 : 1)
				: m->send != key.send ? (m->send < key.send ? -1 : 1) : 0;
			if (c < 0)
				a = mid + 1;
			else
				hi = mid;
		}
		size_t b = a;
		while (b < n && ops[b].rank == ops[i].peer && ops[b].peer == ops[i].rank && ops[b].send != ops[i].send)
			b++;
		for (size_t k = i; k < e; k++) {
			const struct p2p_op *o = &ops[k], *peer = a + (k - i) < b ? &ops[a + (k - i)] : NULL;
			const char *what = NULL;
			if (!peer) {
				what = "missing";
			} else if (o->send && strcmp(o->en->in_sizes, peer->en->out_sizes)) {
				what = "size";
				snprintf(detail, sizeof(detail), "sends %.200s, the recv takes %.200s", o->en->in_sizes,
					 peer->en->out_sizes);
			}
			/* the op whose missing peer waits on nobody first (that peer is
			 * where it starts), then the one enqueued first */
			int free_peer = what && !strcmp(what, "missing") && waits_on_nobody(j, o->peer);
			if (what && (!best || free_peer > best_free ||
				     (free_peer == best_free && o->en->created_ns && o->en->created_ns < best->en->created_ns))) {
				best = o;
				best_what = what;
				best_free = free_peer;
			}
		}
		i = e;
	}
	if (best) {
		w->div.seq = -1;
		w->div.p2p_seq = best->en->p2p_seq;
		set_name(w, best->en->profiling_name);
		w->div.mismatch = best_what;
		w->div.created_ns = best->en->created_ns;
		w->div.src = best->send ? best->rank : best->peer;
		w->div.dst = best->send ? best->peer : best->rank;
		if (!strcmp(best_what, "missing")) {
			rs_add(&w->missing, best->peer);
		} else {
			rs_add(&w->odd, best->rank);
			rs_add(&w->odd, best->peer);
			rs_sort(&w->odd);
			w->div.detail = xstrdup(detail);
		}
		w->found = 1;
		w->cls = 2;
	}
	free(ops);
}

/* ---- culprits' last completed ops ------------------------------------------------------------- */

static int torch_frame(const char *file)
{
	return strstr(file, "/torch/") || strstr(file, "site-packages/") || strstr(file, "dist-packages/") ||
	       strstr(file, "/multiprocessing/") || file[0] == '<' || strstr(file, "/threading.py");
}

static char *user_frame(const struct fr_entry *en)
{
	for (uint32_t f = 0; f < en->nframes; f++) {
		const struct fr_frame *fr = &en->frames[f];
		if (torch_frame(fr->file))
			continue;
		const char *base = strrchr(fr->file, '/');
		return xasprintf("%s:%lld", base ? base + 1 : fr->file, (long long)fr->line);
	}
	return NULL;
}

static void last_of(const struct view *v, struct fr_last *L)
{
	memset(L, 0, sizeof(*L));
	L->rank = v->rank;
	L->seq = L->p2p_seq = -1;
	L->enqueued = v->st && (v->units == U_SEQ || v->units == U_P2P) ? v->st->enqueued : -1;
	const struct fr_entry *best = NULL;
	for (size_t k = 0; v->d && k < v->n; k++) {
		const struct fr_entry *en = &v->d->e[v->ix[k]];
		if (en->done && (!best || en->record_id > best->record_id))
			best = en;
	}
	if (best) {
		L->profiling_name = xstrdup(best->profiling_name);
		L->seq = best->p2p ? -1 : best->seq;
		L->p2p_seq = best->p2p ? best->p2p_seq : -1;
		L->source = xstrdup("entry");
		L->where = user_frame(best);
		L->nframes = best->nframes < 16 ? best->nframes : 16;
		L->frames = L->nframes ? xcalloc(L->nframes, sizeof(*L->frames)) : NULL;
		for (size_t f = 0; f < L->nframes; f++)
			L->frames[f] = xasprintf("%s (%s:%lld)", best->frames[f].name, best->frames[f].file,
						 (long long)best->frames[f].line);
		return;
	}
	if (v->st && (v->units == U_SEQ || v->units == U_P2P) && v->st->completed >= 0) {
		if (v->units == U_SEQ)
			L->seq = v->st->completed;
		else
			L->p2p_seq = v->st->completed;
		L->source = xstrdup("pg_status");
		return;
	}
	L->source = xstrdup(v->d ? "none" : "no dump");
}

/* ---- the verdict ------------------------------------------------------------------------- */

static char *group_label(const struct fr_group_res *G)
{
	char rk[160];
	fr_ranks_str(G->ranks, G->nranks, rk, sizeof(rk));
	if (G->pg_name && G->pg_name[0])
		return xasprintf("group %s (%s, ranks %s)", G->pg_id, G->pg_name, rk);
	return xasprintf("group %s (ranks %s)", G->pg_id, rk);
}

/* "all_reduce #812", "send #11985 (rank 0 -> 12)" */
static char *op_label(const struct fr_div *D)
{
	const char *pn = D->profiling_name ? D->profiling_name : "?";
	const char *c = strrchr(pn, ':');
	const char *op = c ? c + 1 : pn;
	size_t ol = strcspn(op, " ");
	if (D->seq >= 0)
		return xasprintf("%.*s #%lld", (int)ol, op, (long long)D->seq);
	if (D->src >= 0 && D->dst >= 0)
		return xasprintf("%.*s #%lld (rank %d -> %d)", (int)ol, op, (long long)D->p2p_seq, D->src, D->dst);
	return xasprintf("%.*s #%lld", (int)ol, op, (long long)D->p2p_seq);
}

static char *last_label(const struct fr_last *L)
{
	if (L->profiling_name) {
		const char *c = strrchr(L->profiling_name, ':');
		const char *op = c ? c + 1 : L->profiling_name;
		size_t ol = strcspn(op, " ");
		long long n = L->seq >= 0 ? L->seq : L->p2p_seq;
		if (L->where)
			return xasprintf("%.*s #%lld (%s)", (int)ol, op, n, L->where);
		return xasprintf("%.*s #%lld", (int)ol, op, n);
	}
	if (!strcmp(L->source, "pg_status"))
		return xasprintf("#%lld (pg_status)", (long long)(L->seq >= 0 ? L->seq : L->p2p_seq));
	return NULL;
}

static int is_dead(const struct fr_result *res, int32_t r)
{
	for (size_t i = 0; i < res->nno_dump; i++)
		if (res->no_dump[i] == r)
			return 1;
	return 0;
}

static char *verdict_for(const struct fr_result *res, const struct fr_group_res *G)
{
	const struct fr_div *D = G->div;
	char *gl = group_label(G), *ol = op_label(D), *out;
	char who[256], tail[768] = "";
	if (!strcmp(D->mismatch, "missing")) {
		struct rset alive = { 0 }, dead = { 0 };
		for (size_t i = 0; i < D->nmissing; i++)
			rs_add(is_dead(res, D->missing[i]) ? &dead : &alive, D->missing[i]);
		size_t o = 0;
		if (alive.n) {
			ranks_words(alive.v, alive.n, who, sizeof(who));
			o += (size_t)snprintf(tail + o, sizeof(tail) - o, "%s never %s", who,
					      D->seq < 0 ? (D->src >= 0 && alive.v[0] == D->dst ? "posted the recv"
												 : "sent")
							 : "called it");
		}
		if (dead.n && o < sizeof(tail)) {
			ranks_words(dead.v, dead.n, who, sizeof(who));
			o += (size_t)snprintf(tail + o, sizeof(tail) - o, "%s%s left no dump (killed or crashed?)",
					      o ? "; " : "", who);
		}
		/* the culprits' last completed ops, when they agree */
		char *lastl = NULL;
		int same = 1;
		for (size_t k = 0; k < G->nlast; k++) {
			if (!rs_has(&alive, G->last[k].rank))
				continue;
			char *l = last_label(&G->last[k]);
			if (!l) {
				same = 0;
				continue;
			}
			if (!lastl)
				lastl = l;
			else {
				same &= !strcmp(lastl, l);
				free(l);
			}
		}
		if (lastl && same && o < sizeof(tail))
			o += (size_t)snprintf(tail + o, sizeof(tail) - o, "; %s last completed: %s",
					      alive.n == 1 ? "its" : "their", lastl);
		free(lastl);
		for (size_t i = 0; i < D->nbehind && o < sizeof(tail); i++) {
			int culprit = 0;
			for (size_t c = 0; c < res->nculprits; c++)
				culprit |= res->culprits[c].rank == D->behind[i];
			if (culprit)
				o += (size_t)snprintf(tail + o, sizeof(tail) - o, "; rank %d called it but is behind", D->behind[i]);
		}
		free(alive.v);
		free(dead.v);
	} else if (!strcmp(D->mismatch, "state")) {
		ranks_words(D->odd, D->nodd, who, sizeof(who));
		snprintf(tail, sizeof(tail), "every member called it; %s did not complete it, the others did", who);
	} else {
		ranks_words(D->odd, D->nodd, who, sizeof(who));
		if (!strcmp(D->mismatch, "op"))
			snprintf(tail, sizeof(tail), "%s called another op (%s)", who, D->detail ? D->detail : "");
		else
			snprintf(tail, sizeof(tail), "%s called it with another %s (%s)", who, D->mismatch,
				 D->detail ? D->detail : "");
	}
	out = xasprintf("%s in %s: %s - %s", !strcmp(D->mismatch, "state") ? "stalled" : D->completed ? "no hang, but a mismatch"
											       : "hang",
			gl, ol, tail);
	free(gl);
	free(ol);
	return out;
}

static int64_t num_id(const char *s)
{
	char *end;
	long long v = strtoll(s, &end, 10);
	return *s && !*end ? v : INT64_MAX;
}

struct gorder {
	size_t idx;
	int cls, root, nroot;
	int64_t created;
	int64_t id;
};

static int cmp_gorder(const void *x, const void *y)
{
	const struct gorder *a = x, *b = y;
	if (a->cls != b->cls)
		return b->cls - a->cls;
	if (a->root != b->root)
		return b->root - a->root;
	if (a->nroot != b->nroot)
		return b->nroot - a->nroot;
	if (a->cls) {
		int64_t ca = a->created ? a->created : INT64_MAX, cb = b->created ? b->created : INT64_MAX;
		if (ca != cb)
			return (ca > cb) - (ca < cb);
	}
	if (a->id != b->id)
		return (a->id > b->id) - (a->id < b->id);
	return (a->idx > b->idx) - (a->idx < b->idx);
}

/* A group's first divergent op (collective or point to point), NULL. */
static struct div_work *group_divergence(const struct job *j, const struct grp *gr, struct div_work *cw,
					 struct div_work *pw)
{
	memset(cw, 0, sizeof(*cw));
	memset(pw, 0, sizeof(*pw));
	cw->div.seq = cw->div.p2p_seq = pw->div.seq = pw->div.p2p_seq = -1;
	cw->div.src = cw->div.dst = pw->div.src = pw->div.dst = -1;
	coll_divergence(j, gr, cw);
	p2p_divergence(j, gr, pw);
	if (cw->found && pw->found)
		return pw->cls > cw->cls || (pw->cls == cw->cls && pw->div.created_ns && cw->div.created_ns &&
					     pw->div.created_ns < cw->div.created_ns) ? pw : cw;
	return cw->found ? cw : pw->found ? pw : NULL;
}

static void work_release(struct div_work *w)
{
	free(w->div.profiling_name);
	free(w->div.detail);
	free(w->missing.v);
	free(w->odd.v);
	free(w->behind.v);
}

/* The key program order compares groups by: their description where it
 * names a kind of group (every DATA_PARALLEL pair runs the same program),
 * else the group's id. */
static const char *kind_key(const char *name, const char *desc)
{
	return desc && desc[0] && strcmp(desc, "undefined") ? desc : name;
}

/* Program order, from the ranks that called both: +1 when collective (G, s)
 * comes before (H, t) on them, -1 after, 0 when no rank tells. */
static int order_vote(const struct job *j, const struct fr_entry *x, const struct fr_entry *y)
{
	const char *kx = kind_key(x->pg_name, x->pg_desc), *ky = kind_key(y->pg_name, y->pg_desc);
	int before = 0, after = 0;
	for (size_t i = 0; i < j->run->n && before + after < 16; i++) { /* 16 ranks that tell are enough */
		const struct fr_dump *d = j->run->d[i];
		int64_t rx = -1, ry = -1;
		for (size_t k = 0; k < d->ne; k++) {
			const struct fr_entry *en = &d->e[k];
			if (en->p2p)
				continue;
			const char *ke = kind_key(en->pg_name, en->pg_desc);
			if (rx < 0 && en->seq == x->seq && !strcmp(ke, kx))
				rx = en->record_id >= 0 ? en->record_id : (int64_t)k;
			if (ry < 0 && en->seq == y->seq && !strcmp(ke, ky))
				ry = en->record_id >= 0 ? en->record_id : (int64_t)k;
		}
		if (rx >= 0 && ry >= 0 && rx != ry)
			rx < ry ? before++ : after++;
	}
	return before > after ? 1 : after > before ? -1 : 0;
}

/* A missing rank that waits on nobody because it went past the op: its
 * oldest outstanding collective comes after the divergent op (x, an entry
 * of a member that called it) in the program the other ranks ran. */
static char *moved_past(const struct job *j, int32_t rank, const struct fr_entry *x)
{
	const struct fr_dump *d = dump_of(j, rank);
	const struct fr_entry *y = NULL;
	for (size_t i = 0; d && i < d->ne && !y; i++)
		if (!d->e[i].done && !d->e[i].p2p)
			y = &d->e[i];
	if (!y || !x || order_vote(j, x, y) <= 0)
		return NULL;
	const char *cx = strrchr(x->profiling_name, ':'), *cy = strrchr(y->profiling_name, ':');
	return xasprintf("skipped %s #%lld of group %s: it called %s #%lld of group %s, which comes after it on "
			 "the ranks that called both", cx ? cx + 1 : x->profiling_name, (long long)x->seq, x->pg_name,
			 cy ? cy + 1 : y->profiling_name, (long long)y->seq, y->pg_name);
}

/* Why a rank is where the hang starts, NULL when it waits on another rank
 * (its oldest outstanding collective is outstanding on its peers too):
 * it left no dump, it has nothing outstanding (it is not in any op: stuck
 * in Python, a lock, I/O or compute), or its peers completed its oldest
 * outstanding collective and it did not (its GPU or watchdog stopped). */
static char *root_why(const struct job *j, int32_t rank)
{
	const struct fr_dump *d = dump_of(j, rank);
	if (!d)
		return xstrdup("left no dump (killed or crashed?)");
	const struct fr_entry *old = NULL;
	int outstanding = 0;
	for (size_t i = 0; i < d->ne; i++) {
		if (d->e[i].done)
			continue;
		outstanding = 1;
		if (!d->e[i].p2p) {
			old = &d->e[i];
			break;
		}
	}
	if (!outstanding)
		return xstrdup("idle: nothing outstanding in its buffer (not in any collective: Python, a lock, "
			       "I/O or compute)");
	/* only a collective every member completes together tells (a rooted one
	 * completes on some members before others: gloo's broadcast) */
	if (!old || !(strstr(old->op, "all_reduce") || strstr(old->op, "all_gather") || strstr(old->op, "allgather") ||
		      strstr(old->op, "reduce_scatter") || strstr(old->op, "all_to_all") || strstr(old->op, "alltoall") ||
		      strstr(old->op, "barrier") || strstr(old->op, "allreduce")))
		return NULL;
	const size_t *sl = slot_of((struct job *)j, old->pg_name);
	for (size_t g = *sl ? *sl - 1 : SIZE_MAX; g != SIZE_MAX; g = j->g[g].next) {
		const struct grp *gr = &j->g[g];
		if (!rs_has_sorted(&gr->members, rank))
			continue;
		for (size_t m = 0; m < gr->nv; m++) {
			const struct fr_entry *en;
			if (gr->v[m].rank != rank && gr->v[m].d && coll_state(j, &gr->v[m], old->seq, &en) == S_DONE) {
				const char *c = strrchr(old->profiling_name, ':');
				return xasprintf("stuck: rank %d completed %s #%lld of group %s, this rank did not "
						 "(its GPU or watchdog stopped?)", gr->v[m].rank,
						 c ? c + 1 : old->profiling_name, (long long)old->seq, gr->name);
			}
		}
	}
	return NULL;
}

static int in_list(const int32_t *v, size_t n, int32_t r)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == r)
			return 1;
	return 0;
}

/* The verdict's tail for root ranks the chosen group does not name. */
static void also_clause(const struct fr_result *res, char **verdict)
{
	const struct fr_group_res *G0 = &res->groups[0];
	size_t said = 0, more = 0;
	for (size_t c = 0; c < res->nculprits; c++) {
		int32_t r = res->culprits[c].rank;
		if (in_list(G0->div->missing, G0->div->nmissing, r) || in_list(G0->div->odd, G0->div->nodd, r) ||
		    in_list(G0->div->behind, G0->div->nbehind, r))
			continue;
		const struct fr_group_res *G = NULL; /* a collective first, then point to point */
		for (int pass = 0; pass < 2 && !G; pass++)
			for (size_t g = 1; g < res->ngroups && !G; g++)
				if (res->groups[g].div && (res->groups[g].div->seq >= 0) == !pass &&
				    (in_list(res->groups[g].div->missing, res->groups[g].div->nmissing, r) ||
				     in_list(res->groups[g].div->odd, res->groups[g].div->nodd, r)))
					G = &res->groups[g];
		if (said == 2) {
			more++;
			continue;
		}
		char *ol = G ? op_label(G->div) : NULL, *nv;
		if (G && !strcmp(G->div->mismatch, "missing"))
			nv = xasprintf("%s; rank %d never called %s of group %s either", *verdict, r, ol, G->pg_id);
		else if (G && !strcmp(G->div->mismatch, "state"))
			nv = xasprintf("%s; rank %d did not complete %s of group %s, which its peers did", *verdict, r, ol,
				       G->pg_id);
		else if (G)
			nv = xasprintf("%s; rank %d called %s of group %s differently too", *verdict, r, ol, G->pg_id);
		else
			nv = xasprintf("%s; rank %d is %s", *verdict, r, res->culprits[c].why);
		free(ol);
		free(*verdict);
		*verdict = nv;
		said++;
	}
	if (more) {
		char *nv = xasprintf("%s; and %zu more rank%s (below)", *verdict, more, more == 1 ? "" : "s");
		free(*verdict);
		*verdict = nv;
	}
}

void fr_run_diagnose(struct fr_run *run)
{
	struct job j = { 0 };
	struct fr_result *res = &run->res;
	fr_result_release(res);
	j.run = run;
	/* onlyActive is one setting of the dump call: where some dump of the
	 * job skips record ids, a dump with no completed entry (whose active
	 * entries happen to be consecutive, or none) was taken the same way */
	int any_filtered = 0;
	for (size_t i = 0; i < run->n; i++)
		any_filtered |= run->d[i]->filtered;
	for (size_t i = 0; any_filtered && i < run->n; i++) {
		struct fr_dump *d = run->d[i];
		int done = 0;
		for (size_t k = 0; k < d->ne && !done; k++)
			done = d->e[k].done;
		if (!done) {
			d->filtered = 1;
			d->wrapped = 0;
		}
	}
	build_groups(&j);
	res->dumps = run->n;

	/* versions, and the job's ranks that left no dump */
	char ver[128] = "";
	struct rset world = { 0 };
	for (size_t i = 0; i < run->n; i++) {
		const struct fr_dump *d = run->d[i];
		if (!strstr(ver, d->version) && strlen(ver) + strlen(d->version) + 3 < sizeof(ver))
			snprintf(ver + strlen(ver), sizeof(ver) - strlen(ver), "%s%s", ver[0] ? ", " : "", d->version);
		GROW(world.v, world.cap, world.n + 1);
		world.v[world.n++] = d->rank;
	}
	res->versions = xstrdup(ver);
	for (size_t g = 0; g < j.ng; g++)
		for (size_t m = 0; j.g[g].members_known && m < j.g[g].members.n; m++) {
			GROW(world.v, world.cap, world.n + 1);
			world.v[world.n++] = j.g[g].members.v[m];
		}
	rs_unique(&world);
	/* a job's ranks are 0 to N-1: those below the highest are ranks of it
	 * (unless the numbers are far sparser than that: then they are not) */
	int32_t top = world.n ? world.v[world.n - 1] : -1;
	if (top >= 0 && top < (1 << 22) && (size_t)top < 16 * world.n + 64) {
		world.n = 0;
		for (int32_t r = 0; r <= top; r++) {
			GROW(world.v, world.cap, world.n + 1);
			world.v[world.n++] = r;
		}
	}
	for (size_t i = 0; i < world.n; i++)
		if (!dump_of(&j, world.v[i])) {
			GROW(j.dead.v, j.dead.cap, j.dead.n + 1);
			j.dead.v[j.dead.n++] = world.v[i];
		}
	res->no_dump = rs_copy(&j.dead, &res->nno_dump);

	/* each group's divergence */
	struct div_work *cw = xcalloc(j.ng ? j.ng : 1, sizeof(*cw)), *pw = xcalloc(j.ng ? j.ng : 1, sizeof(*pw));
	struct div_work **w = xcalloc(j.ng ? j.ng : 1, sizeof(*w));
	int any_outstanding = 0;
	for (size_t g = 0; g < j.ng; g++) {
		struct grp *gr = &j.g[g];
		for (size_t m = 0; m < gr->nv; m++)
			for (size_t k = 0; gr->v[m].d && k < gr->v[m].n; k++)
				any_outstanding |= !gr->v[m].d->e[gr->v[m].ix[k]].done;
		w[g] = group_divergence(&j, gr, &cw[g], &pw[g]);
	}

	/* the ranks the hang starts from: dead ones, and missing, odd or late
	 * ones that wait on nobody */
	struct rset named = { 0 };
	for (size_t g = 0; g < j.ng; g++) {
		if (!w[g])
			continue;
		for (size_t i = 0; i < w[g]->missing.n; i++)
			rs_add(&named, w[g]->missing.v[i]);
		for (size_t i = 0; i < w[g]->odd.n; i++)
			rs_add(&named, w[g]->odd.v[i]);
	}
	for (size_t i = 0; i < run->n; i++) { /* stuck ranks are culprits wherever they are named */
		char *why = root_why(&j, run->d[i]->rank);
		if (why && !strncmp(why, "stuck", 5))
			rs_add(&named, run->d[i]->rank);
		free(why);
	}
	rs_sort(&named);
	res->culprits = xcalloc(named.n ? named.n : 1, sizeof(*res->culprits));
	for (size_t i = 0; i < named.n; i++) {
		char *why = root_why(&j, named.v[i]);
		/* or it went past a collective it is missing from */
		for (size_t g = 0; !why && g < j.ng; g++) {
			if (!w[g] || w[g]->div.seq < 0 || !rs_has(&w[g]->missing, named.v[i]))
				continue;
			const struct fr_entry *x = NULL;
			for (size_t m = 0; m < j.g[g].nv && !x; m++)
				for (size_t k = 0; j.g[g].v[m].d && k < j.g[g].v[m].n && !x; k++) {
					const struct fr_entry *en = &j.g[g].v[m].d->e[j.g[g].v[m].ix[k]];
					if (!en->p2p && en->seq == w[g]->div.seq)
						x = en;
				}
			why = moved_past(&j, named.v[i], x);
		}
		if (why)
			res->culprits[res->nculprits++] = (struct fr_culprit){ named.v[i], why };
	}

	/* the groups in verdict order */
	struct gorder *ord = xcalloc(j.ng ? j.ng : 1, sizeof(*ord));
	for (size_t g = 0; g < j.ng; g++) {
		int root = 0, nroot = 0;
		if (w[g] && (strcmp(w[g]->div.mismatch, "missing") && strcmp(w[g]->div.mismatch, "state")))
			root = 1; /* another op, size or dtype: the call itself is the cause */
		for (size_t c = 0; w[g] && c < res->nculprits; c++)
			nroot += rs_has(&w[g]->missing, res->culprits[c].rank) || rs_has(&w[g]->odd, res->culprits[c].rank);
		root |= nroot > 0;
		ord[g] = (struct gorder){ g, w[g] ? w[g]->cls : 0, root, nroot, w[g] ? w[g]->div.created_ns : 0,
					  num_id(j.g[g].name) };
	}
	qsort(ord, j.ng, sizeof(*ord), cmp_gorder);
	res->groups = xcalloc(j.ng ? j.ng : 1, sizeof(*res->groups));
	res->ngroups = j.ng;
	for (size_t k = 0; k < j.ng; k++) {
		size_t g = ord[k].idx;
		struct grp *gr = &j.g[g];
		struct fr_group_res *G = &res->groups[k];
		struct div_work *x = w[g];
		G->pg_id = xstrdup(gr->name);
		G->pg_name = xstrdup(gr->desc);
		G->calls = gr->calls;
		if (x && !gr->members_known) /* members unlisted (gloo): the ones found missing belong too */
			for (size_t i = 0; i < x->missing.n; i++)
				rs_add(&gr->members, x->missing.v[i]);
		rs_sort(&gr->members);
		G->ranks = rs_copy(&gr->members, &G->nranks);
		if (!x)
			continue;
		if (!strcmp(x->div.mismatch, "state")) {
			for (size_t i = 0; i < x->odd.n; i++) /* behind is what a state difference is */
				rs_add(&x->behind, x->odd.v[i]);
		} else if (x->div.seq >= 0) {
			/* behind: not missing, but completed fewer of the group's
			 * collectives than the most advanced member */
			int64_t best = -1;
			for (size_t m = 0; m < gr->nv; m++)
				if (gr->v[m].last_done > best)
					best = gr->v[m].last_done;
			for (size_t m = 0; m < gr->nv; m++)
				if (gr->v[m].d && gr->v[m].last_done < best && !rs_has(&x->missing, gr->v[m].rank))
					rs_add(&x->behind, gr->v[m].rank);
		}
		rs_sort(&x->behind);
		G->div = xmalloc(sizeof(*G->div));
		*G->div = x->div;
		x->div.profiling_name = x->div.detail = NULL;
		G->div->missing = rs_copy(&x->missing, &G->div->nmissing);
		G->div->odd = rs_copy(&x->odd, &G->div->nodd);
		G->div->behind = rs_copy(&x->behind, &G->div->nbehind);
		struct rset cul = { 0 };
		for (size_t i = 0; i < x->missing.n; i++)
			rs_add(&cul, x->missing.v[i]);
		for (size_t i = 0; i < x->odd.n; i++)
			rs_add(&cul, x->odd.v[i]);
		for (size_t i = 0; i < x->behind.n; i++)
			rs_add(&cul, x->behind.v[i]);
		rs_sort(&cul);
		G->last = xcalloc(cul.n ? cul.n : 1, sizeof(*G->last));
		for (size_t i = 0; i < cul.n; i++) {
			const struct view *v = view_of(gr, cul.v[i]);
			if (v && v->d)
				last_of(v, &G->last[G->nlast++]);
		}
		free(cul.v);
	}
	char rk[128];
	if (j.ng && ord[0].cls) {
		res->verdict = verdict_for(res, &res->groups[0]);
		also_clause(res, &res->verdict);
		res->kind = xstrdup(ord[0].cls == 1 ? "stall" : res->groups[0].div->completed ? "mismatch" : "hang");
	} else if (res->nno_dump) {
		ranks_words(res->no_dump, res->nno_dump, rk, sizeof(rk));
		res->verdict = xasprintf("no divergence in the %zu dumps, but %s of the job left no dump", run->n, rk);
		res->kind = xstrdup("incomplete");
	} else if (any_outstanding) {
		res->verdict = xasprintf("no divergence: every member of each of the %zu groups called the same ops; "
					 "some were not completed when the dumps were taken", j.ng);
		res->kind = xstrdup("in flight");
	} else {
		res->verdict = xasprintf("no hang: every op of the %zu groups in the %zu dumps was called by all "
					 "its members and completed", j.ng, run->n);
		res->kind = xstrdup("healthy");
	}
	for (size_t g = 0; g < j.ng; g++) {
		work_release(&cw[g]);
		work_release(&pw[g]);
	}
	free(cw);
	free(pw);
	free(w);
	free(ord);
	free(world.v);
	free(j.dead.v);
	free(named.v);
	for (size_t g = 0; g < j.ng; g++) {
		for (size_t m = 0; m < j.g[g].nv; m++) {
			free(j.g[g].v[m].ix);
			free(j.g[g].v[m].cix);
		}
		free(j.g[g].v);
		free(j.g[g].members.v);
	}
	free(j.g);
	free(j.slot);
	run->done = 1;
}

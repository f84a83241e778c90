/*
 * diagnose.c - the hang explained from the groups match.c built (the
 * rules: match.c's opening comment): each group's point-to-point
 * divergence, the culprits' last completed ops and the verdict
 * (fr_run_diagnose).
 */
#include "flightrec/fr.h"
#include "flightrec/match_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
	const struct fr_dump *d = fm_dump_of(j, rank);
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
		fm_set_name(w, best->en->profiling_name);
		w->div.mismatch = best_what;
		w->div.created_ns = best->en->created_ns;
		w->div.src = best->send ? best->rank : best->peer;
		w->div.dst = best->send ? best->peer : best->rank;
		if (!strcmp(best_what, "missing")) {
			fm_rs_add(&w->missing, best->peer);
		} else {
			fm_rs_add(&w->odd, best->rank);
			fm_rs_add(&w->odd, best->peer);
			fm_rs_sort(&w->odd);
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
			fm_rs_add(is_dead(res, D->missing[i]) ? &dead : &alive, D->missing[i]);
		size_t o = 0;
		if (alive.n) {
			fm_ranks_words(alive.v, alive.n, who, sizeof(who));
			o += (size_t)snprintf(tail + o, sizeof(tail) - o, "%s never %s", who,
					      D->seq < 0 ? (D->src >= 0 && alive.v[0] == D->dst ? "posted the recv"
												 : "sent")
							 : "called it");
		}
		if (dead.n && o < sizeof(tail)) {
			fm_ranks_words(dead.v, dead.n, who, sizeof(who));
			o += (size_t)snprintf(tail + o, sizeof(tail) - o, "%s%s left no dump (killed or crashed?)",
					      o ? "; " : "", who);
		}
		/* the culprits' last completed ops, when they agree */
		char *lastl = NULL;
		int same = 1;
		for (size_t k = 0; k < G->nlast; k++) {
			if (!fm_rs_has(&alive, G->last[k].rank))
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
		fm_ranks_words(D->odd, D->nodd, who, sizeof(who));
		snprintf(tail, sizeof(tail), "every member called it; %s did not complete it, the others did", who);
	} else {
		fm_ranks_words(D->odd, D->nodd, who, sizeof(who));
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
	fm_coll_divergence(j, gr, cw);
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

/* Program order of collective (kind kx, seq sx) and (ky, sy), from the
 * ranks that called both: +1 when the first comes before the second on
 * them, -1 after, 0 when no rank tells. */
static int order_vote_at(const struct job *j, const char *kx, int64_t sx, const char *ky, int64_t sy)
{
	int before = 0, after = 0;
	for (size_t i = 0; i < j->run->n && before + after < 16; i++) { /* 16 ranks that tell are enough */
		const struct fr_dump *d = j->run->d[i];
		int64_t rx = -1, ry = -1;
		for (size_t k = 0; k < d->ne; k++) {
			const struct fr_entry *en = &d->e[k];
			if (en->p2p)
				continue;
			const char *ke = kind_key(en->pg_name, en->pg_desc);
			if (rx < 0 && en->seq == sx && !strcmp(ke, kx))
				rx = en->record_id >= 0 ? en->record_id : (int64_t)k;
			if (ry < 0 && en->seq == sy && !strcmp(ke, ky))
				ry = en->record_id >= 0 ? en->record_id : (int64_t)k;
		}
		if (rx >= 0 && ry >= 0 && rx != ry)
			rx < ry ? before++ : after++;
	}
	return before > after ? 1 : after > before ? -1 : 0;
}

#define ORDER_BACK 4 /* earlier iterations looked at when no rank called both */

/* Program order of collectives x and y: from the ranks that called both,
 * else (every rank that called one is stuck before the other: a world of
 * two, a pair) from the same two kinds of group ORDER_BACK or fewer
 * iterations earlier (x's seq - q against y's seq - q), as a training
 * loop repeats its program; *back: the q that told (0: the ranks that
 * called both). */
static int order_vote(const struct job *j, const struct fr_entry *x, const struct fr_entry *y, int *back)
{
	const char *kx = kind_key(x->pg_name, x->pg_desc), *ky = kind_key(y->pg_name, y->pg_desc);
	for (int q = 0; q <= ORDER_BACK && x->seq - q >= 1 && y->seq - q >= 1; q++) {
		int v = order_vote_at(j, kx, x->seq - q, ky, y->seq - q);
		if (v) {
			*back = q;
			return v;
		}
	}
	return 0;
}

/* A missing rank that waits on nobody because it went past the op: its
 * oldest outstanding collective comes after the divergent op (x, an entry
 * of a member that called it) in the program the other ranks ran. */
static char *moved_past(const struct job *j, int32_t rank, const struct fr_entry *x)
{
	const struct fr_dump *d = fm_dump_of(j, rank);
	const struct fr_entry *y = NULL;
	int back = 0;
	for (size_t i = 0; d && i < d->ne && !y; i++)
		if (!d->e[i].done && !d->e[i].p2p)
			y = &d->e[i];
	if (!y || !x || order_vote(j, x, y, &back) <= 0)
		return NULL;
	const char *cx = strrchr(x->profiling_name, ':'), *cy = strrchr(y->profiling_name, ':');
	cx = cx ? cx + 1 : x->profiling_name;
	cy = cy ? cy + 1 : y->profiling_name;
	if (back)
		return xasprintf("skipped %s #%lld of group %s: it called %s #%lld of group %s, which comes after it "
				 "in the program the ranks ran (%s #%lld came before %s #%lld)", cx, (long long)x->seq,
				 x->pg_name, cy, (long long)y->seq, y->pg_name, cx, (long long)(x->seq - back), cy,
				 (long long)(y->seq - back));
	return xasprintf("skipped %s #%lld of group %s: it called %s #%lld of group %s, which comes after it on "
			 "the ranks that called both", cx, (long long)x->seq, x->pg_name, cy, (long long)y->seq,
			 y->pg_name);
}

/* Why a rank is where the hang starts, NULL when it waits on another rank
 * (its oldest outstanding collective is outstanding on its peers too):
 * it left no dump, it has nothing outstanding (it is not in any op: stuck
 * in Python, a lock, I/O or compute), or its peers completed its oldest
 * outstanding collective and it did not (its GPU or watchdog stopped). */
static char *root_why(const struct job *j, int32_t rank)
{
	const struct fr_dump *d = fm_dump_of(j, rank);
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
	const size_t *sl = fm_slot_of((struct job *)j, old->pg_name);
	for (size_t g = *sl ? *sl - 1 : SIZE_MAX; g != SIZE_MAX; g = j->g[g].next) {
		const struct grp *gr = &j->g[g];
		if (!fm_rs_has_sorted(&gr->members, rank))
			continue;
		for (size_t m = 0; m < gr->nv; m++) {
			const struct fr_entry *en;
			if (gr->v[m].rank != rank && gr->v[m].d && fm_coll_state(j, &gr->v[m], old->seq, &en) == S_DONE) {
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

/* onlyActive is one setting of the dump call: where some dump of the job
 * skips record ids, a dump with no completed entry (whose active entries
 * happen to be consecutive, or none) was taken the same way. */
static void same_filter(struct fr_run *run)
{
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
}

/* The dumps' versions, and the job's ranks that left no dump (j->dead,
 * res->no_dump). */
static void versions_and_dead(struct job *j, struct fr_result *res)
{
	struct fr_run *run = j->run;
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
	for (size_t g = 0; g < j->ng; g++)
		for (size_t m = 0; j->g[g].members_known && m < j->g[g].members.n; m++) {
			GROW(world.v, world.cap, world.n + 1);
			world.v[world.n++] = j->g[g].members.v[m];
		}
	fm_rs_unique(&world);
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
		if (!fm_dump_of(j, world.v[i])) {
			GROW(j->dead.v, j->dead.cap, j->dead.n + 1);
			j->dead.v[j->dead.n++] = world.v[i];
		}
	res->no_dump = fm_rs_copy(&j->dead, &res->nno_dump);
	free(world.v);
}

/* The ranks the hang starts from (res->culprits): dead ones, and missing,
 * odd or late ones that wait on nobody, with why (w: each group's
 * divergence or NULL). */
static void find_culprits(const struct job *j, struct div_work **w, struct fr_result *res)
{
	struct fr_run *run = j->run;
	struct rset named = { 0 };
	for (size_t g = 0; g < j->ng; g++) {
		if (!w[g])
			continue;
		for (size_t i = 0; i < w[g]->missing.n; i++)
			fm_rs_add(&named, w[g]->missing.v[i]);
		for (size_t i = 0; i < w[g]->odd.n; i++)
			fm_rs_add(&named, w[g]->odd.v[i]);
	}
	for (size_t i = 0; i < run->n; i++) { /* stuck ranks are culprits wherever they are named */
		char *why = root_why(j, run->d[i]->rank);
		if (why && !strncmp(why, "stuck", 5))
			fm_rs_add(&named, run->d[i]->rank);
		free(why);
	}
	fm_rs_sort(&named);
	res->culprits = xcalloc(named.n ? named.n : 1, sizeof(*res->culprits));
	for (size_t i = 0; i < named.n; i++) {
		char *why = root_why(j, named.v[i]);
		/* or it went past a collective it is missing from */
		for (size_t g = 0; !why && g < j->ng; g++) {
			if (!w[g] || w[g]->div.seq < 0 || !fm_rs_has(&w[g]->missing, named.v[i]))
				continue;
			const struct fr_entry *x = NULL;
			for (size_t m = 0; m < j->g[g].nv && !x; m++)
				for (size_t k = 0; j->g[g].v[m].d && k < j->g[g].v[m].n && !x; k++) {
					const struct fr_entry *en = &j->g[g].v[m].d->e[j->g[g].v[m].ix[k]];
					if (!en->p2p && en->seq == w[g]->div.seq)
						x = en;
				}
			why = moved_past(j, named.v[i], x);
		}
		/* or it called the divergent collective unlike the others (another
		 * size, dtype or op: its peers wait for a call that matches) */
		for (size_t g = 0; !why && g < j->ng; g++)
			if (w[g] && w[g]->div.seq >= 0 && w[g]->div.mismatch && strcmp(w[g]->div.mismatch, "state") &&
			    fm_rs_has(&w[g]->odd, named.v[i])) {
				char *ol = op_label(&w[g]->div);
				why = xasprintf("called %s of group %s with another %s%s%s%s", ol, j->g[g].name,
						w[g]->div.mismatch, w[g]->div.detail ? " (" : "",
						w[g]->div.detail ? w[g]->div.detail : "", w[g]->div.detail ? ")" : "");
				free(ol);
			}
		if (why)
			res->culprits[res->nculprits++] = (struct fr_culprit){ named.v[i], why };
	}
	free(named.v);
}

/* Group gr's result G from its divergence x (NULL: none): its members,
 * the ranks behind, and the culprits' last completed ops. */
static void group_result(struct grp *gr, struct div_work *x, struct fr_group_res *G)
{
	G->pg_id = xstrdup(gr->name);
	G->pg_name = xstrdup(gr->desc);
	G->calls = gr->calls;
	if (x && !gr->members_known) /* members unlisted (gloo): the ones found missing belong too */
		for (size_t i = 0; i < x->missing.n; i++)
			fm_rs_add(&gr->members, x->missing.v[i]);
	fm_rs_sort(&gr->members);
	G->ranks = fm_rs_copy(&gr->members, &G->nranks);
	if (!x)
		return;
	if (!strcmp(x->div.mismatch, "state")) {
		for (size_t i = 0; i < x->odd.n; i++) /* behind is what a state difference is */
			fm_rs_add(&x->behind, x->odd.v[i]);
	} else if (x->div.seq >= 0) {
		/* behind: not missing, but completed fewer of the group's
		 * collectives than the most advanced member */
		int64_t best = -1;
		for (size_t m = 0; m < gr->nv; m++)
			if (gr->v[m].last_done > best)
				best = gr->v[m].last_done;
		for (size_t m = 0; m < gr->nv; m++)
			if (gr->v[m].d && gr->v[m].last_done < best && !fm_rs_has(&x->missing, gr->v[m].rank))
				fm_rs_add(&x->behind, gr->v[m].rank);
	}
	fm_rs_sort(&x->behind);
	G->div = xmalloc(sizeof(*G->div));
	*G->div = x->div;
	x->div.profiling_name = x->div.detail = NULL;
	G->div->missing = fm_rs_copy(&x->missing, &G->div->nmissing);
	G->div->odd = fm_rs_copy(&x->odd, &G->div->nodd);
	G->div->behind = fm_rs_copy(&x->behind, &G->div->nbehind);
	struct rset cul = { 0 };
	for (size_t i = 0; i < x->missing.n; i++)
		fm_rs_add(&cul, x->missing.v[i]);
	for (size_t i = 0; i < x->odd.n; i++)
		fm_rs_add(&cul, x->odd.v[i]);
	for (size_t i = 0; i < x->behind.n; i++)
		fm_rs_add(&cul, x->behind.v[i]);
	fm_rs_sort(&cul);
	G->last = xcalloc(cul.n ? cul.n : 1, sizeof(*G->last));
	for (size_t i = 0; i < cul.n; i++) {
		const struct view *v = fm_view_of(gr, cul.v[i]);
		if (v && v->d)
			last_of(v, &G->last[G->nlast++]);
	}
	free(cul.v);
}

/* The job's groups and views, freed. */
static void job_release(struct job *j)
{
	for (size_t g = 0; g < j->ng; g++) {
		for (size_t m = 0; m < j->g[g].nv; m++) {
			free(j->g[g].v[m].ix);
			free(j->g[g].v[m].cix);
		}
		free(j->g[g].v);
		free(j->g[g].members.v);
	}
	free(j->g);
	free(j->slot);
	free(j->dead.v);
}

void fr_run_diagnose(struct fr_run *run)
{
	struct job j = { 0 };
	struct fr_result *res = &run->res;
	fr_result_release(res);
	j.run = run;
	same_filter(run);
	fm_build_groups(&j);
	res->dumps = run->n;

	versions_and_dead(&j, res);

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

	find_culprits(&j, w, res);

	/* the groups in verdict order */
	struct gorder *ord = xcalloc(j.ng ? j.ng : 1, sizeof(*ord));
	for (size_t g = 0; g < j.ng; g++) {
		int root = 0, nroot = 0;
		if (w[g] && (strcmp(w[g]->div.mismatch, "missing") && strcmp(w[g]->div.mismatch, "state")))
			root = 1; /* another op, size or dtype: the call itself is the cause */
		for (size_t c = 0; w[g] && c < res->nculprits; c++)
			nroot += fm_rs_has(&w[g]->missing, res->culprits[c].rank) || fm_rs_has(&w[g]->odd, res->culprits[c].rank);
		root |= nroot > 0;
		ord[g] = (struct gorder){ g, w[g] ? w[g]->cls : 0, root, nroot, w[g] ? w[g]->div.created_ns : 0,
					  num_id(j.g[g].name) };
	}
	qsort(ord, j.ng, sizeof(*ord), cmp_gorder);
	res->groups = xcalloc(j.ng ? j.ng : 1, sizeof(*res->groups));
	res->ngroups = j.ng;
	for (size_t k = 0; k < j.ng; k++)
		group_result(&j.g[ord[k].idx], w[ord[k].idx], &res->groups[k]);
	char rk[128];
	if (j.ng && ord[0].cls) {
		res->verdict = verdict_for(res, &res->groups[0]);
		also_clause(res, &res->verdict);
		res->kind = xstrdup(ord[0].cls == 1 ? "stall" : res->groups[0].div->completed ? "mismatch" : "hang");
	} else if (res->nno_dump) {
		fm_ranks_words(res->no_dump, res->nno_dump, rk, sizeof(rk));
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
	job_release(&j);
	run->done = 1;
}

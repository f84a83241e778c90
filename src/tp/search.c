/*
 * search.c - the tuning run of aorta tune-tp: which configurations to
 * measure, in what order, and when to stop.
 *
 * For each TP size (1 first: the no-communication baseline, then 2, 4, 8)
 * one backend session is opened, and for each operator phase:
 *  1. method none is measured (serial collective + GEMM, the GEMM alone and
 *     the collective alone, all in one call);
 *  2. if serial - max(T_gemm, T_comm) < min_gain x serial, no overlap can
 *     pay (at most that much to gain): the overlapped methods are skipped;
 *  3. otherwise the methods TE accepts for the phase (space.c) are measured:
 *     ring_exchange variants as single points; bulk and pipeline through an
 *     adaptive search of num_sm over the multiples of cga_size in
 *     [--min-num-sm, --max-num-sm] (below): ~sm_points measurements instead
 *     of one per SM count; then the best num_sm is tried without
 *     set_sm_margin (bulk) or with the other num_splits (pipeline).
 * Every configuration goes through tp_cfg_check first: rejected and
 * cannot-win ones are recorded with their rule, never measured.
 * After each TP size the scaling verdict is taken; an operator whose TP n
 * already missed time(1)/n by more than the tolerance is not measured at
 * larger sizes (recorded as skipped), and the run ends when none is left.
 *
 * The SM search: 4 coarse points spaced geometrically over the domain, then
 * repeatedly the midpoint of the wider unmeasured gap next to the best point
 * so far (a bracketing search in the spirit of golden-section search; exact
 * on unimodal times when the budget allows, close to it otherwise); stops
 * when both neighbours of the best are measured or the budget is spent.
 *
 * Every measured configuration runs the output check (--no-check turns
 * it off and ranks by time alone).  Ranking is by measured end-to-end
 * time of configurations whose output check passed; the trace overlap ratio is computed and reported, never used
 * to choose.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tp/tp_host.h"

void tp_tune_opts_default(struct tp_tune_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->ops = (1u << TP__NOPS) - 1;
	o->max_tp = 8;
	o->tokens = 8192;
	o->min_sm = 1;
	o->max_sm = 32;
	o->sm_points = 7;
	o->overlap_threshold = 0.5;
	o->tolerance = TP_TOLERANCE_DEFAULT;
	o->min_gain = 0.01;
	o->dtype = TP_BF16;
	o->warmup = 5;
	o->iters = 20;
	o->check = 1;
	o->seed = 1;
	o->progress = 1;
}

int tp_log2i(int tp)
{
	switch (tp) {
	case 1: return 0;
	case 2: return 1;
	case 4: return 2;
	case 8: return 3;
	}
	return -1;
}

/* checks every selected shape at tp; AORTA_OK or the first error */
static enum aorta_status shapes_ok(const struct tp_tune_opts *o, int tp, struct aorta_error *e)
{
	struct tp_shape sh;
	for (int op = 0; op < TP__NOPS; op++) {
		if (!(o->ops & (1u << op)))
			continue;
		for (int ph = 0; ph < TP__NPHASES; ph++) {
			if (!tp_phase_tuned((enum tp_op)op, (enum tp_phase)ph))
				continue;
			enum aorta_status st = tp_shape_make(&o->model, (enum tp_op)op, (enum tp_phase)ph, tp, o->tokens,
							     o->dtype, &sh, e);
			if (st)
				return st;
		}
	}
	return AORTA_OK;
}

enum aorta_status tp_plan_sizes(const struct tp_tune_opts *o, int gpus, int *sizes, int *n,
				struct aorta_error *e)
{
	enum aorta_status st;

	*n = 0;
	if ((st = shapes_ok(o, 1, e)))
		return st;
	sizes[(*n)++] = 1;
	for (int tp = 2; tp <= 8 && tp <= o->max_tp; tp *= 2) {
		if (tp > gpus) {
			if (o->max_tp_given)
				return aorta_fail(e, AORTA_EGPU, "", 0, -1,
						  "--max-tp-size %d needs %d GPUs but %d %s visible", o->max_tp,
						  o->max_tp, gpus, gpus == 1 ? "is" : "are");
			break;
		}
		struct aorta_error e2 = { 0 };
		if ((st = shapes_ok(o, tp, &e2))) {
			if (o->max_tp_given || tp == 2) {
				if (e)
					*e = e2;
				if (o->max_tp_given && tp > 2 && e)
					snprintf(e->msg + strlen(e->msg), sizeof(e->msg) - strlen(e->msg),
						 "; use --max-tp-size %d", tp / 2);
				return st;
			}
			if (o->progress)
				aorta_note("tune-tp: TP %d and above skipped: %s", tp, e2.msg);
			break;
		}
		sizes[(*n)++] = tp;
	}
	if (*n < 2) {
		if (gpus < 2)
			return aorta_fail(e, AORTA_EGPU, "", 0, -1,
					  "tune-tp needs at least 2 GPUs for TP 2 (%d visible)", gpus);
		return aorta_fail(e, AORTA_EUSAGE, "", 0, -1, "--max-tp-size %d leaves no TP size >= 2", o->max_tp);
	}
	return AORTA_OK;
}

/* ---- the run's state ----------------------------------------------------- */
struct ctx {
	const struct tp_backend *b;
	const struct tp_tune_opts *o;
	struct tp_tune *t;
	struct tp_session *s;
	struct aorta_error *e;
	int shape_no, nshapes;
};

static struct tp_result *add_result(struct tp_tune *t)
{
	GROW(t->r, t->cap, t->n + 1);
	struct tp_result *r = &t->r[t->n++];
	memset(r, 0, sizeof(*r));
	r->hidden_fraction = NAN;
	r->exposed_ms = NAN;
	r->overlap_inter_ns = r->overlap_comm_ns = -1;
	r->m.overlap_ratio = NAN;
	return r;
}

static double key(const struct tp_result *r)
{
	/* a failed check is never ranked; under --no-check (nothing checked)
	 * the user chose to rank by time alone */
	return r->measured && (r->m.check_ok || !r->checked) && r->m.e2e_ms > 0 ? r->m.e2e_ms : INFINITY;
}

static int find_id(const struct tp_tune *t, const char *id)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->r[i].id, id))
			return (int)i;
	return -1;
}

int tp_mkdir_p(const char *path)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0777) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0777) && errno != EEXIST ? -1 : 0;
}

static void describe(const struct tp_cfg *c, char *buf, size_t len)
{
	switch (c->method) {
	case TP_BULK:
		snprintf(buf, len, "bulk num_sm %d%s", c->num_sm, c->set_sm_margin ? "" : " no margin");
		break;
	case TP_RING_EXCHANGE:
		snprintf(buf, len, "ring_exchange aggregate %d %s", c->aggregate, c->use_ce ? "ce" : "sm");
		break;
	case TP_PIPELINE:
		snprintf(buf, len, "pipeline num_sm %d splits %d%s", c->num_sm, c->num_splits,
			 c->set_sm_margin ? "" : " no margin");
		break;
	default:
		snprintf(buf, len, "none (serial)");
	}
}

/* Measures (or prunes) one configuration.  Returns its index in t->r, -1 if
 * pruned, -2 on a backend error (c->e filled). */
static int measure(struct ctx *c, const struct tp_shape *sh, const struct tp_cfg *cfg)
{
	struct tp_tune *t = c->t;
	const struct tp_tune_opts *o = c->o;
	char id[96], why[192];

	tp_cfg_id(sh, cfg, id, sizeof(id));
	int i = find_id(t, id);
	if (i >= 0)
		return t->r[i].measured ? i : -1;
	enum tp_verdict v = tp_cfg_check(sh, cfg, t->sm_count, why, sizeof(why));
	if (v != TP_VALID) {
		struct tp_result *r = add_result(t);
		r->sh = *sh;
		r->cfg = *cfg;
		snprintf(r->id, sizeof(r->id), "%s", id);
		r->verdict = v;
		snprintf(r->why, sizeof(r->why), "%s", why);
		return -1;
	}

	char dir[1024];
	/* every configuration is checked: ce and SM copies, aggregate,
	 * num_splits and num_sm are distinct code paths, and an unchecked
	 * result is never ranked (key()) */
	struct tp_measure_opts mo = { o->warmup, o->iters, o->check, NULL, o->seed };
	if (o->trace_dir) {
		snprintf(dir, sizeof(dir), "%s/%s", o->trace_dir, id);
		if (tp_mkdir_p(dir)) {
			aorta_fail(c->e, AORTA_EINTERNAL, dir, 0, -1, "cannot create directory: %s", strerror(errno));
			return -2;
		}
		mo.trace_dir = dir;
	}
	struct tp_meas m;
	memset(&m, 0, sizeof(m));
	m.overlap_ratio = NAN;
	enum aorta_status st = c->b->measure(c->s, sh, cfg, &mo, &m, c->e);
	if (st) {
		if (c->e && !c->e->code)
			c->e->code = st;
		return -2;
	}
	t->nmeas++;

	struct tp_result *r = add_result(t);
	r->sh = *sh;
	r->cfg = *cfg;
	r->m = m;
	r->measured = 1;
	r->checked = mo.check;
	snprintf(r->id, sizeof(r->id), "%s", id);
	if (isnan(r->m.overlap_ratio) && r->m.trace_path[0] && cfg->method != TP_NONE) {
		struct aorta_error te = { 0 };
		double ratio;
		if (tp_trace_overlap(r->m.trace_path, &ratio, &r->overlap_inter_ns, &r->overlap_comm_ns, &te))
			aorta_warn("tune-tp: %s: overlap ratio not computed: %s", id, te.msg);
		else
			r->m.overlap_ratio = ratio;
	}
	if (sh->tp > 1) {
		r->hidden_fraction = tp_hidden_fraction(m.gemm_ms, m.comm_ms, m.e2e_ms);
		r->exposed_ms = m.e2e_ms - m.gemm_ms;
	}
	if (mo.check && !m.check_ok)
		aorta_warn("tune-tp: %s: output check failed (%s): not ranked", id,
			   m.check_msg[0] ? m.check_msg : "no detail");
	if (o->progress) {
		char d[96];
		describe(cfg, d, sizeof(d));
		aorta_note("tune-tp: TP %d %s %s [%d/%d] %s: %.3f ms (GEMM %.3f ms, comm %.3f ms)", sh->tp,
			   tp_op_name(sh->op), tp_phase_name(sh->phase), c->shape_no, c->nshapes, d, m.e2e_ms,
			   m.gemm_ms, m.comm_ms);
	}
	return (int)(r - t->r);
}

/* SM search over the multiples of cga in [min_sm, max_sm]; base gives the
 * other keys.  Returns the best index or -1 (none valid), -2 on error. */
static int search_sm(struct ctx *c, const struct tp_shape *sh, const struct tp_cfg *base)
{
	const struct tp_tune_opts *o = c->o;
	int dom[TP_UB_MAX_SM + 1], nd = 0;
	int idx[TP_UB_MAX_SM + 1];  /* result index per domain point, -3 = not measured, -1 pruned */
	int cga = base->cga_size > 0 ? base->cga_size : 1;
	int budget = o->sm_points > 0 ? o->sm_points : 7;

	for (int v = o->min_sm; v <= o->max_sm && v <= TP_UB_MAX_SM; v++)
		if (v >= 1 && v % cga == 0 && (c->t->sm_count <= 0 || v < c->t->sm_count))
			dom[nd++] = v;
	if (!nd) { /* record why nothing in the range is valid */
		struct tp_cfg cf = *base;
		cf.num_sm = o->min_sm;
		return measure(c, sh, &cf);
	}
	for (int i = 0; i < nd; i++)
		idx[i] = -3;

	int used = 0;
#define RUN(j) do { struct tp_cfg cf = *base; cf.num_sm = dom[j]; \
		int r_ = measure(c, sh, &cf); if (r_ == -2) return -2; idx[j] = r_; used++; } while (0)

	if (nd <= budget) {
		for (int j = 0; j < nd; j++)
			RUN(j);
	} else {
		/* coarse: 4 points geometric in value between dom[0] and dom[nd-1] */
		double lo = dom[0], hi = dom[nd - 1];
		for (int q = 0; q < 4; q++) {
			double target = lo * pow(hi / lo, q / 3.0);
			int bj = 0;
			for (int j = 1; j < nd; j++)
				if (fabs(dom[j] - target) < fabs(dom[bj] - target))
					bj = j;
			if (idx[bj] == -3)
				RUN(bj);
		}
		while (used < budget) {
			int b = -1;
			for (int j = 0; j < nd; j++)
				if (idx[j] >= 0 && (b < 0 || key(&c->t->r[idx[j]]) < key(&c->t->r[idx[b]])))
					b = j;
			if (b < 0)
				break;
			int l = b - 1, r = b + 1;
			while (l >= 0 && idx[l] == -3)
				l--;
			while (r < nd && idx[r] == -3)
				r++;
			/* unmeasured gaps: (l, b) and (b, r); l = -1 / r = nd count as walls */
			int gl = b - l - 1, gr = r - b - 1;
			if (l < 0)
				gl = b; /* points 0..b-1 unmeasured */
			if (r >= nd)
				gr = nd - 1 - b;
			if (gl <= 0 && gr <= 0)
				break;
			int j;
			if (gr >= gl)
				j = r >= nd ? b + (gr + 1) / 2 : b + (r - b) / 2;
			else
				j = l < 0 ? b - (gl + 1) / 2 : l + (b - l + 1) / 2;
			if (j <= l)
				j = l + 1;
			if (j >= r)
				j = r - 1;
			if (j == b || idx[j] != -3)
				break;
			RUN(j);
		}
	}
#undef RUN
	int best = -1;
	for (int j = 0; j < nd; j++)
		if (idx[j] >= 0 && (best < 0 || key(&c->t->r[idx[j]]) < key(&c->t->r[best])))
			best = idx[j];
	return best;
}

static long long sm_domain_size(const struct tp_tune_opts *o, int cga, int sm_count)
{
	long long n = 0;
	for (int v = o->min_sm; v <= o->max_sm && v <= TP_UB_MAX_SM; v++)
		if (v >= 1 && v % cga == 0 && (sm_count <= 0 || v < sm_count))
			n++;
	return n;
}

/* exhaustive count of the same space for one shape (the "fewer than
 * exhaustive" figure of the report) */
static long long exhaustive(const struct tp_tune_opts *o, const struct tp_shape *sh, int sm_count)
{
	struct tp_cfg cf;
	long long n = 1;
	long long d = sm_domain_size(o, 2, sm_count);

	if (sh->tp == 1)
		return 1;
	if (sh->bulk_only)
		return n + 2 * d; /* with and without margin */
	for (int agg = 0; agg <= 1; agg++)
		for (int ce = 0; ce <= 1; ce++) {
			tp_cfg_default(TP_RING_EXCHANGE, sh->tp, &cf);
			cf.aggregate = agg, cf.use_ce = ce;
			n += tp_cfg_check(sh, &cf, sm_count, NULL, 0) == TP_VALID;
		}
	if (sh->coll == TP_RS) {
		static const int splits[] = { 2, 4, 8 };
		for (int s = 0; s < 3; s++) {
			tp_cfg_default(TP_PIPELINE, sh->tp, &cf);
			cf.num_splits = splits[s];
			cf.num_sm = 2;
			if (tp_cfg_check(sh, &cf, sm_count, NULL, 0) == TP_VALID)
				n += 2 * d;
		}
	}
	return n;
}

static int tune_shape(struct ctx *c, const struct tp_shape *sh)
{
	const struct tp_tune_opts *o = c->o;
	struct tp_cfg cf;
	int i;

	c->t->nexhaustive += exhaustive(o, sh, c->t->sm_count);
	tp_cfg_default(TP_NONE, sh->tp, &cf);
	if ((i = measure(c, sh, &cf)) == -2)
		return -1;
	if (sh->tp == 1)
		return 0;
	if (i >= 0) {
		const struct tp_meas *m = &c->t->r[i].m;
		double serial = m->serial_ms > 0 ? m->serial_ms : m->e2e_ms;
		double floor = m->gemm_ms > m->comm_ms ? m->gemm_ms : m->comm_ms;
		if (serial - floor < o->min_gain * serial) {
			struct tp_result *r = add_result(c->t);
			r->sh = *sh;
			tp_cfg_default(sh->bulk_only ? TP_BULK : TP_RING_EXCHANGE, sh->tp, &r->cfg);
			char head[64];
			tp_cfg_id(sh, &cf, head, sizeof(head));
			snprintf(r->id, sizeof(r->id), "%.*s_overlap", (int)(strlen(head) - 5), head);
			r->verdict = TP_CANNOT_WIN;
			snprintf(r->why, sizeof(r->why),
				 "at most %.3f ms (%.1f%%) to gain: serial %.3f ms vs max(GEMM %.3f, comm %.3f) ms",
				 serial - floor, 100.0 * (serial - floor) / serial, serial, m->gemm_ms, m->comm_ms);
			return 0;
		}
	}
	if (sh->bulk_only) {
		tp_cfg_default(TP_BULK, sh->tp, &cf);
		int b = search_sm(c, sh, &cf);
		if (b == -2)
			return -1;
		if (b >= 0) {
			struct tp_cfg nm = c->t->r[b].cfg;
			nm.set_sm_margin = 0;
			if (measure(c, sh, &nm) == -2)
				return -1;
		}
		return 0;
	}
	/* ring_exchange: copy engine, aggregate 0 and 1; SM kernels */
	for (int v = 0; v < 3; v++) {
		tp_cfg_default(TP_RING_EXCHANGE, sh->tp, &cf);
		cf.aggregate = v == 1;
		cf.use_ce = v != 2;
		if (measure(c, sh, &cf) == -2)
			return -1;
	}
	if (sh->coll == TP_RS) {
		static const int splits[] = { 4, 2, 8 };
		int first = -1;
		for (int s = 0; s < 3 && first < 0; s++) {
			tp_cfg_default(TP_PIPELINE, sh->tp, &cf);
			cf.num_splits = splits[s];
			cf.num_sm = 2;
			if (tp_cfg_check(sh, &cf, c->t->sm_count, NULL, 0) == TP_VALID)
				first = s;
		}
		if (first < 0) { /* record why pipeline is out */
			tp_cfg_default(TP_PIPELINE, sh->tp, &cf);
			measure(c, sh, &cf);
			return 0;
		}
		tp_cfg_default(TP_PIPELINE, sh->tp, &cf);
		cf.num_splits = splits[first];
		int b = search_sm(c, sh, &cf);
		if (b == -2)
			return -1;
		if (b >= 0) {
			struct tp_cfg best = c->t->r[b].cfg;
			for (int s = 0; s < 3; s++) {
				if (s == first)
					continue;
				struct tp_cfg sp = best;
				sp.num_splits = splits[s];
				if (measure(c, sh, &sp) == -2)
					return -1;
			}
		}
	}
	return 0;
}

/* best and ranks for (li, op, phase) */
static void rank_group(struct tp_tune *t, int li, int op, int ph)
{
	int order[512], n = 0;
	for (size_t i = 0; i < t->n && n < 512; i++) {
		const struct tp_result *r = &t->r[i];
		if (r->measured && tp_log2i(r->sh.tp) == li && (int)r->sh.op == op && (int)r->sh.phase == ph)
			order[n++] = (int)i;
	}
	/* insertion sort by key, ties: fewer SMs, then first measured */
	for (int a = 1; a < n; a++) {
		int x = order[a], b = a - 1;
		while (b >= 0) {
			const struct tp_result *p = &t->r[order[b]], *q = &t->r[x];
			double kp = key(p), kq = key(q);
			if (kp < kq || (kp == kq && p->cfg.num_sm <= q->cfg.num_sm))
				break;
			order[b + 1] = order[b];
			b--;
		}
		order[b + 1] = x;
	}
	t->best[li][op][ph] = -1;
	for (int a = 0; a < n; a++) {
		struct tp_result *r = &t->r[order[a]];
		r->rank = isinf(key(r)) ? 0 : a + 1;
		if (a == 0 && !isinf(key(r)))
			t->best[li][op][ph] = order[a];
	}
}

void tp_tune_scaling(struct tp_tune *t, const struct tp_tune_opts *o)
{
	t->optimal_tp = 0;
	for (int op = 0; op < TP__NOPS; op++) {
		struct tp_scaling *s = &t->scaling[op];
		memset(s, 0, sizeof(*s));
		if (!(o->ops & (1u << op)))
			continue;
		for (int li = 0; li < 4; li++) {
			double sum = 0;
			int ok = 1, any = 0;
			for (int ph = 0; ph < TP__NPHASES; ph++) {
				if (!tp_phase_tuned((enum tp_op)op, (enum tp_phase)ph))
					continue;
				int b = t->best[li][op][ph];
				if (b < 0) {
					ok = 0;
					break;
				}
				sum += t->r[b].m.e2e_ms;
				any = 1;
			}
			if (ok && any) {
				s->tested[li] = 1;
				s->time_ms[li] = sum;
			}
		}
		int base = -1;
		for (int li = 0; li < 4 && base < 0; li++)
			if (s->tested[li])
				base = li;
		if (base < 0)
			continue;
		s->optimal_tp = 1 << base;
		s->ratio[base] = 1.0;
		s->efficient[base] = 1;
		int n = snprintf(s->reason, sizeof(s->reason), "%s: TP=%d %.1fus",
				 base == 0 ? "Baseline" : "Base", 1 << base, s->time_ms[base] * 1e3);
		int failed = 0;
		for (int li = base + 1; li < 4; li++) {
			if (!s->tested[li])
				continue;
			double expected = s->time_ms[base] * (double)(1 << base) / (double)(1 << li);
			s->ratio[li] = expected > 0 ? s->time_ms[li] / expected : INFINITY;
			s->efficient[li] = s->ratio[li] <= 1.0 + o->tolerance;
			if (s->efficient[li] && !failed)
				s->optimal_tp = 1 << li;
			if (!s->efficient[li])
				failed = 1;
			if (n < (int)sizeof(s->reason))
				n += snprintf(s->reason + n, sizeof(s->reason) - (size_t)n,
					      "; TP=%d: %.1fus vs expected %.1fus (ratio %.2f, %s)", 1 << li,
					      s->time_ms[li] * 1e3, expected * 1e3, s->ratio[li],
					      s->efficient[li] ? "EFFICIENT" : "NOT efficient");
		}
		if (!t->optimal_tp || s->optimal_tp < t->optimal_tp)
			t->optimal_tp = s->optimal_tp;
	}
}

static void note_skipped(struct tp_tune *t, const struct tp_tune_opts *o, int tp, int op, int failed_tp)
{
	for (int ph = 0; ph < TP__NPHASES; ph++) {
		struct tp_shape sh;
		if (!tp_phase_tuned((enum tp_op)op, (enum tp_phase)ph) ||
		    tp_shape_make(&o->model, (enum tp_op)op, (enum tp_phase)ph, tp, o->tokens, o->dtype, &sh, NULL))
			continue;
		struct tp_result *r = add_result(t);
		r->sh = sh;
		snprintf(r->id, sizeof(r->id), "tp%d_%s_%s", tp, tp_op_name(sh.op), tp_phase_name(sh.phase));
		r->verdict = TP_CANNOT_WIN;
		r->skip_scaling = 1;
		snprintf(r->why, sizeof(r->why), "TP scaling already failed at TP %d (tolerance %.0f%%)", failed_tp,
			 100 * o->tolerance);
	}
}

enum aorta_status tp_tune_run(const struct tp_backend *b, const struct tp_tune_opts *o,
			      struct tp_tune *t, struct aorta_error *e)
{
	enum aorta_status st;
	struct ctx c;
	int stopped[TP__NOPS] = { 0 };

	memset(t, 0, sizeof(*t));
	memset(&c, 0, sizeof(c));
	for (int li = 0; li < 4; li++)
		for (int op = 0; op < TP__NOPS; op++)
			for (int ph = 0; ph < TP__NPHASES; ph++)
				t->best[li][op][ph] = -1;
	t->gpus = b->count ? b->count() : 0;
	if ((st = tp_plan_sizes(o, t->gpus, t->tp_sizes, &t->ntp, e)))
		return st;
	c.b = b, c.o = o, c.t = t, c.e = e;

	for (int k = 0; k < t->ntp; k++) {
		int tp = t->tp_sizes[k], li = tp_log2i(tp);
		struct tp_shape shapes[TP__NOPS * TP__NPHASES];
		int ns = 0, active = 0;
		long long max_elems = 0;
		for (int op = 0; op < TP__NOPS; op++) {
			if (!(o->ops & (1u << op)))
				continue;
			if (stopped[op]) {
				note_skipped(t, o, tp, op, stopped[op]);
				continue;
			}
			active++;
			for (int ph = 0; ph < TP__NPHASES; ph++) {
				if (!tp_phase_tuned((enum tp_op)op, (enum tp_phase)ph))
					continue;
				if ((st = tp_shape_make(&o->model, (enum tp_op)op, (enum tp_phase)ph, tp, o->tokens,
							o->dtype, &shapes[ns], e)))
					return st;
				long long me = tp_shape_max_elems(&shapes[ns]);
				if (me > max_elems)
					max_elems = me;
				ns++;
			}
		}
		if (!active)
			continue; /* the skipped notes of every larger size, no session */
		int sm = 0;
		c.s = NULL;
		if ((st = b->open(tp, max_elems, &c.s, &sm, e)))
			return st;
		if (sm > 0)
			t->sm_count = sm;
		if (o->progress)
			aorta_note("tune-tp: TP %d: %d operator phases on %d GPU%s (%d SMs each)", tp, ns, tp,
				   tp == 1 ? "" : "s", sm);
		c.nshapes = ns;
		for (int i = 0; i < ns; i++) {
			c.shape_no = i + 1;
			if (tune_shape(&c, &shapes[i])) {
				b->close(c.s);
				return e && e->code ? e->code : AORTA_EGPU;
			}
			rank_group(t, li, shapes[i].op, shapes[i].phase);
		}
		b->close(c.s);
		c.s = NULL;
		tp_tune_scaling(t, o);
		if (tp > 1)
			for (int op = 0; op < TP__NOPS; op++)
				if ((o->ops & (1u << op)) && !stopped[op] && t->scaling[op].tested[li] &&
				    !t->scaling[op].efficient[li]) {
					stopped[op] = tp;
					if (o->progress)
						aorta_note("tune-tp: %s: TP %d misses time(1)/%d by more than %.0f%%: "
							   "larger TP sizes skipped", tp_op_name((enum tp_op)op), tp, tp,
							   100 * o->tolerance);
				}
	}
	tp_tune_scaling(t, o);
	return AORTA_OK;
}

void tp_tune_release(struct tp_tune *t)
{
	free(t->r);
	memset(t, 0, sizeof(*t));
}

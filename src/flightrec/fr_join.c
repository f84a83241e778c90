/*
 * fr_join.c - Flight Recorder entries against the Kineto collectives of the
 * same job given in the same call: two accounts of one run, joined by rank,
 * process group and sequence number, which must agree.
 *
 * Kineto's record_param_comms carries "Process Group Name" (the group id
 * FR's process_group[0] holds) and "Seq" (the group's collective counter,
 * FR's collective_seq_id; the point-to-point counter for send/recv, FR's
 * p2p_seq_id), which the readers keep per call (struct comm_inst).  For a
 * rank read both ways and each group, over the numbers both accounts cover
 * (the overlap of the two ranges; a trace usually covers a few steps, the
 * ring the last ops before the dump):
 *  - a number in both is compared: the same collective type (the trace's
 *    kernel class against FR's op name);
 *  - a number in one account only is counted (FR's active-only dumps leave
 *    completed ops out, so a trace call missing there is not counted).
 * The first disagreement is said; the join never changes the verdict.
 */
#include "flightrec/fr.h"

#include <stdlib.h>
#include <string.h>

#include "overlap/analysis.h"
#include "timeline/vocab.h"

static const struct fr_dump *dump_of_rank(const struct fr_run *r, int rank)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->d[i]->rank == rank)
			return r->d[i];
	return NULL;
}

static int64_t key_of(const struct fr_entry *en)
{
	return en->p2p ? en->p2p_seq : en->seq;
}

static void say_first(struct fr_join *J, char *msg)
{
	if (!J->first)
		J->first = msg;
	else
		free(msg);
}

void fr_join_traces(struct fr_run *run, const struct analysis *a)
{
	struct fr_join *J = &run->res.join;
	memset(J, 0, sizeof(*J));
	for (size_t i = 0; i < a->n; i++) {
		const struct rank_result *rr = &a->r[i];
		const struct fr_dump *d = dump_of_rank(run, rr->rank);
		if (!d || !rr->ninst)
			continue;
		J->ranks++;
		/* per (group, p2p-ness) present in the trace: its range, then the
		 * two accounts over the overlap */
		for (size_t k = 0; k < rr->ninst; k++) {
			const struct comm_inst *ci = &rr->inst[k];
			if (!ci->pg || !ci->pg[0] || ci->seq < 0)
				continue;
			int p2p = ci->p2p != 0;
			/* the first call of this (group, kind) does the whole group */
			int first = 1;
			for (size_t q = 0; q < k && first; q++)
				first = !(rr->inst[q].pg && !strcmp(rr->inst[q].pg, ci->pg) && (rr->inst[q].p2p != 0) == p2p &&
					  rr->inst[q].seq >= 0);
			if (!first)
				continue;
			int64_t tmin = INT64_MAX, tmax = -1, fmin = INT64_MAX, fmax = -1;
			for (size_t q = k; q < rr->ninst; q++) {
				const struct comm_inst *c = &rr->inst[q];
				if (c->pg && !strcmp(c->pg, ci->pg) && (c->p2p != 0) == p2p && c->seq >= 0) {
					tmin = c->seq < tmin ? c->seq : tmin;
					tmax = c->seq > tmax ? c->seq : tmax;
				}
			}
			for (size_t q = 0; q < d->ne; q++) {
				const struct fr_entry *en = &d->e[q];
				if (strcmp(en->pg_name, ci->pg) || en->p2p != p2p)
					continue;
				fmin = key_of(en) < fmin ? key_of(en) : fmin;
				fmax = key_of(en) > fmax ? key_of(en) : fmax;
			}
			int64_t lo = tmin > fmin ? tmin : fmin, hi = tmax < fmax ? tmax : fmax;
			if (fmax < 0 || lo > hi)
				continue; /* the accounts cover different stretches */
			/* trace calls in the overlap: in FR? the same type? */
			for (size_t q = k; q < rr->ninst; q++) {
				const struct comm_inst *c = &rr->inst[q];
				if (!c->pg || strcmp(c->pg, ci->pg) || (c->p2p != 0) != p2p || c->seq < lo || c->seq > hi)
					continue;
				const struct fr_entry *hit = NULL;
				for (size_t e = 0; e < d->ne && !hit; e++)
					if (!strcmp(d->e[e].pg_name, ci->pg) && d->e[e].p2p == p2p && key_of(&d->e[e]) == c->seq)
						hit = &d->e[e];
				if (!hit) {
					if (!d->filtered) {
						J->trace_only++;
						say_first(J, xasprintf("rank %d, group %s: the trace's %s #%lld is not in the "
								       "dump", rr->rank, ci->pg,
								       coll_type_name((enum coll_type)c->type),
								       (long long)c->seq));
					}
					continue;
				}
				J->compared++;
				enum coll_type ft = coll_type_from_name(hit->op);
				if (c->type == COLL_OTHER || c->type == COLL_NONE || ft == COLL_OTHER || ft == c->type) {
					J->agree++;
				} else {
					J->disagree++;
					say_first(J, xasprintf("rank %d, group %s, #%lld: the trace says %s, the dump %s",
							       rr->rank, ci->pg, (long long)c->seq,
							       coll_type_name((enum coll_type)c->type), hit->profiling_name));
				}
			}
			/* FR entries in the overlap the trace lacks */
			for (size_t e = 0; e < d->ne; e++) {
				const struct fr_entry *en = &d->e[e];
				if (strcmp(en->pg_name, ci->pg) || en->p2p != p2p || key_of(en) < lo || key_of(en) > hi)
					continue;
				int found = 0;
				for (size_t q = k; q < rr->ninst && !found; q++)
					found = rr->inst[q].pg && !strcmp(rr->inst[q].pg, ci->pg) &&
						(rr->inst[q].p2p != 0) == p2p && rr->inst[q].seq == key_of(en);
				if (!found) {
					J->fr_only++;
					say_first(J, xasprintf("rank %d, group %s: the dump's %s #%lld is not in the trace",
							       rr->rank, ci->pg, en->profiling_name, (long long)key_of(en)));
				}
			}
		}
	}
	run->res.has_join = J->ranks > 0;
}

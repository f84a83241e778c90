/*
 * fr_print.c - the Flight Recorder section of `aorta analyze`'s output: the
 * verdict line first (what someone paged at 3 a.m. reads), then each
 * divergent group with its first divergent op, missing, odd and late
 * ranks and the culprits' last completed ops with their frames, then the
 * groups that agree, the ranks without a dump and the join with traces.
 */
#include "flightrec/fr.h"

#include <string.h>

static void print_ranks(FILE *f, const char *label, const int32_t *v, size_t n)
{
	char buf[512];
	if (n)
		fprintf(f, "%s%s", label, fr_ranks_str(v, n, buf, sizeof(buf)));
}

void fr_print(FILE *f, const struct fr_run *r)
{
	const struct fr_result *res = &r->res;
	char buf[512];
	size_t filtered = 0, wrapped = 0;
	for (size_t i = 0; i < r->n; i++) {
		filtered += r->d[i]->filtered;
		wrapped += r->d[i]->wrapped;
	}
	fprintf(f, "aorta analyze: Flight Recorder, %llu dump%s (format %s)", (unsigned long long)res->dumps,
		res->dumps == 1 ? "" : "s", res->versions ? res->versions : "?");
	if (filtered)
		fprintf(f, "; %zu hold only active entries", filtered);
	if (wrapped)
		fprintf(f, "; %zu ring%s wrapped", wrapped, wrapped == 1 ? "" : "s");
	fputc('\n', f);
	fprintf(f, "verdict: %s\n", res->verdict ? res->verdict : "n/a");
	for (size_t c = 0; c < res->nculprits; c++)
		fprintf(f, "%s rank %d: %s\n", c ? "        " : "where it starts:", res->culprits[c].rank,
			res->culprits[c].why);
	size_t agree = 0;
	for (size_t g = 0; g < res->ngroups; g++) {
		const struct fr_group_res *G = &res->groups[g];
		if (!G->div) {
			agree++;
			continue;
		}
		const struct fr_div *D = G->div;
		fprintf(f, "\n== group %s", G->pg_id);
		if (G->pg_name && G->pg_name[0])
			fprintf(f, " (%s)", G->pg_name);
		fprintf(f, ", ranks %s: ", fr_ranks_str(G->ranks, G->nranks, buf, sizeof(buf)));
		if (D->seq >= 0)
			fprintf(f, "%s #%lld", D->profiling_name, (long long)D->seq);
		else
			fprintf(f, "%s p2p #%lld", D->profiling_name, (long long)D->p2p_seq);
		fprintf(f, ", %s\n", !strcmp(D->mismatch, "missing") ? "not called by every member"
								       : !strcmp(D->mismatch, "state")
									       ? "completed on some members only"
									       : "called differently");
		print_ranks(f, "   missing: ", D->missing, D->nmissing);
		if (D->nmissing)
			fputc('\n', f);
		if (D->nodd && strcmp(D->mismatch, "state")) {
			fprintf(f, "   another %s: ranks %s", D->mismatch, fr_ranks_str(D->odd, D->nodd, buf, sizeof(buf)));
			if (D->detail)
				fprintf(f, " (%s)", D->detail);
			fputc('\n', f);
		}
		print_ranks(f, "   behind (completed fewer of the group's ops): ", D->behind, D->nbehind);
		if (D->nbehind)
			fputc('\n', f);
		for (size_t k = 0; k < G->nlast; k++) {
			const struct fr_last *L = &G->last[k];
			fprintf(f, "   rank %d last completed: ", L->rank);
			if (L->profiling_name)
				fprintf(f, "%s #%lld", L->profiling_name, (long long)(L->seq >= 0 ? L->seq : L->p2p_seq));
			else if (!strcmp(L->source, "pg_status"))
				fprintf(f, "#%lld (pg_status; no completed entry in its buffer)",
					(long long)(L->seq >= 0 ? L->seq : L->p2p_seq));
			else
				fprintf(f, "nothing in its buffer");
			if (L->enqueued >= 0)
				fprintf(f, "; enqueued up to #%lld (pg_status)", (long long)L->enqueued);
			fputc('\n', f);
			for (size_t fr = 0; fr < L->nframes && fr < 6; fr++)
				fprintf(f, "      %s\n", L->frames[fr]);
			if (L->nframes > 6)
				fprintf(f, "      ... %zu more frames (--json)\n", L->nframes - 6);
		}
	}
	if (agree)
		fprintf(f, "\n%zu group%s agree%s: every member called the same ops\n", agree, agree == 1 ? "" : "s",
			agree == 1 ? "s" : "");
	if (res->nno_dump)
		fprintf(f, "ranks of the job without a dump: %s\n", fr_ranks_str(res->no_dump, res->nno_dump, buf, sizeof(buf)));
	if (res->has_join) {
		const struct fr_join *J = &res->join;
		fprintf(f, "traces of the same job: %llu rank%s joined by group and sequence number: %llu op%s in both "
			   "accounts, %llu agree", (unsigned long long)J->ranks, J->ranks == 1 ? "" : "s",
			(unsigned long long)J->compared, J->compared == 1 ? "" : "s", (unsigned long long)J->agree);
		if (J->disagree || J->fr_only || J->trace_only)
			fprintf(f, "; %llu disagree, %llu in the dumps only, %llu in the traces only",
				(unsigned long long)J->disagree, (unsigned long long)J->fr_only,
				(unsigned long long)J->trace_only);
		fputc('\n', f);
		if (J->first)
			fprintf(f, "   first disagreement: %s\n", J->first);
	}
}

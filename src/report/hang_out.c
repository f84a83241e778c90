/*
 * hang_out.c - the hang of a run with Flight Recorder dumps in `aorta
 * report`: the "Why it hung" section of index.html (the verdict, where it
 * starts, each divergent group's first divergent op and the ranks it
 * names, the ranks without a dump, the join with the traces) and the
 * dataset's "hang" object in summary.json.  Both read the diagnosis analyze
 * computes (flightrec/fr.h, a->fr->res); nothing is computed here.
 */
#include "report/hang_out.h"

#include <string.h>

#include "flightrec/fr.h"
#include "report/html.h"

static void ranks_cell(FILE *f, const int32_t *v, size_t n)
{
	char buf[512];
	fputs("<td class=l>", f);
	html_escape(f, n ? fr_ranks_str(v, n, buf, sizeof(buf)) : "-");
	fputs("</td>", f);
}

void report_hang_html(FILE *f, const struct report *r)
{
	int any = 0;
	for (size_t i = 0; i < r->nds; i++)
		any |= r->ds[i].a && r->ds[i].a->fr && r->ds[i].a->fr->done;
	if (!any)
		return;
	fputs("<h2>Why it hung (Flight Recorder)</h2>\n", f);
	for (size_t i = 0; i < r->nds; i++) {
		const struct analysis *a = r->ds[i].a;
		if (!a || !a->fr || !a->fr->done)
			continue;
		const struct fr_result *res = &a->fr->res;
		if (r->nds > 1) {
			fputs("<h3>", f);
			html_escape(f, r->ds[i].label);
			fputs("</h3>\n", f);
		}
		fputs("<div class=verdict><p>", f);
		html_escape(f, res->verdict);
		fputs("</p></div>\n", f);
		if (res->nculprits) {
			fputs("<p>Where it starts:</p><ul>\n", f);
			for (size_t c = 0; c < res->nculprits; c++) {
				fprintf(f, "<li>rank %d: ", res->culprits[c].rank);
				html_escape(f, res->culprits[c].why);
				fputs("</li>\n", f);
			}
			fputs("</ul>\n", f);
		}
		size_t ndiv = 0, agree = 0;
		for (size_t g = 0; g < res->ngroups; g++)
			res->groups[g].div ? ndiv++ : agree++;
		if (ndiv) {
			fputs("<table><tr><th class=l>group</th><th class=l>ranks</th><th class=l>first divergent op</th>"
			      "<th class=l>mismatch</th><th class=l>missing</th><th class=l>called differently</th>"
			      "<th class=l>behind</th><th class=l>last completed by the culprits</th></tr>\n", f);
			for (size_t g = 0; g < res->ngroups; g++) {
				const struct fr_group_res *G = &res->groups[g];
				const struct fr_div *D = G->div;
				if (!D)
					continue;
				char num[64];
				fputs("<tr><td class=l>", f);
				html_escape(f, G->pg_id);
				if (G->pg_name && G->pg_name[0]) {
					fputs(" (", f);
					html_escape(f, G->pg_name);
					fputs(")", f);
				}
				fputs("</td>", f);
				ranks_cell(f, G->ranks, G->nranks);
				fputs("<td class=l>", f);
				html_escape(f, D->profiling_name);
				snprintf(num, sizeof(num), D->seq >= 0 ? " #%lld" : " p2p #%lld",
					 (long long)(D->seq >= 0 ? D->seq : D->p2p_seq));
				html_escape(f, num);
				fputs("</td><td class=l>", f);
				html_escape(f, D->mismatch);
				if (D->detail) {
					fputs(": ", f);
					html_escape(f, D->detail);
				}
				fputs("</td>", f);
				ranks_cell(f, D->missing, D->nmissing);
				ranks_cell(f, strcmp(D->mismatch, "state") ? D->odd : NULL, strcmp(D->mismatch, "state") ? D->nodd : 0);
				ranks_cell(f, D->behind, D->nbehind);
				fputs("<td class=l>", f);
				for (size_t k = 0; k < G->nlast; k++) {
					const struct fr_last *L = &G->last[k];
					fprintf(f, "%srank %d: ", k ? "<br>" : "", L->rank);
					if (L->profiling_name) {
						html_escape(f, L->profiling_name);
						snprintf(num, sizeof(num), " #%lld", (long long)(L->seq >= 0 ? L->seq : L->p2p_seq));
						html_escape(f, num);
						if (L->where) {
							fputs(" (", f);
							html_escape(f, L->where);
							fputs(")", f);
						}
					} else if (L->seq >= 0 || L->p2p_seq >= 0) {
						snprintf(num, sizeof(num), "#%lld (pg_status)",
							 (long long)(L->seq >= 0 ? L->seq : L->p2p_seq));
						html_escape(f, num);
					} else {
						html_escape(f, L->source);
					}
				}
				fputs("</td></tr>\n", f);
			}
			fputs("</table>\n", f);
		}
		fprintf(f, "<p>%llu dump%s (Flight Recorder format ", (unsigned long long)res->dumps,
			res->dumps == 1 ? "" : "s");
		html_escape(f, res->versions);
		fprintf(f, "); %zu group%s agree%s", agree, agree == 1 ? "" : "s", agree == 1 ? "s" : "");
		if (res->nno_dump) {
			char buf[512];
			fputs("; ranks without a dump: ", f);
			html_escape(f, fr_ranks_str(res->no_dump, res->nno_dump, buf, sizeof(buf)));
		}
		if (res->has_join)
			fprintf(f, "; the traces of the same job agree on %llu of %llu ops they share with the dumps",
				(unsigned long long)res->join.agree, (unsigned long long)res->join.compared);
		fputs(".</p>\n", f);
	}
}

void report_hang_json(struct jw *w, const struct rep_dataset *d)
{
	if (!d->a || !d->a->fr || !d->a->fr->done)
		return;
	const struct fr_result *res = &d->a->fr->res;
	jw_obj(w, "hang");
	jw_str(w, "verdict", res->verdict);
	jw_str(w, "kind", res->kind);
	jw_arr(w, "culprits");
	for (size_t c = 0; c < res->nculprits; c++)
		jw_int(w, NULL, res->culprits[c].rank);
	jw_arr_end(w);
	jw_arr(w, "ranks_without_dump");
	for (size_t i = 0; i < res->nno_dump; i++)
		jw_int(w, NULL, res->no_dump[i]);
	jw_arr_end(w);
	jw_obj_end(w);
}

/*
 * answer.h - the summary every front end leads with (docs/cli.md "The
 * summary"): the step and the noise floor a gain must clear, the verdict,
 * the top fixes with their worth (ms and %), what "fixed" means and which
 * ranks set the ideal, the fixes worth nothing, the late rank and why,
 * per rank its host launch time a step, the waiting it caused and what
 * fixing it gains, and what to look at next for the cause found.
 *
 * Built once from a finished analysis: its diagnosis (overlap/diagnosis.h)
 * and what-if (overlap/whatif.h).  No figure is computed here: the lines
 * choose among the engine's figures and word them.  `aorta analyze` and
 * `aorta compare` print it first (answer_print), `aorta report` puts it at
 * the top of index.html (answer_html) and the per-rank rows under the
 * what-if chart.  At most ANSWER_MAX_LINES lines for any number of ranks
 * (ANSWER_ROWS rank rows, the others counted in `more`).
 *
 * Ownership: struct answer owns its strings; answer_free releases them.
 * Thread-compatible.
 */
#ifndef AORTA_ANSWER_H
#define AORTA_ANSWER_H

#include <stddef.h>
#include <stdio.h>

#include "report/compare.h"

struct analysis;

#define ANSWER_ROWS 4
#define ANSWER_MAX_LINES 18

/* One line: a short tag ("step", "verdict", "fix 1", ...) and its text. */
struct answer_line {
	const char *tag;
	char *text;
};

/* One rank's row (figures NaN where the run has none). */
struct answer_row {
	int rank;
	double host_launch_ms, host_min_ms, host_max_ms, ideal_host_ms; /* the what-if's whatif_rank */
	double caused_ms, caused_share;  /* the join's waiting caused (NaN: no cross-rank figures) */
	double gain_ms, gain_pct;        /* its by_rank fix (NaN: not replayed) */
	int nothing;                     /* the gain is within the noise floor (or not replayed: its excess is) */
	int unknown;                     /* its ideal is unknown (its trace lacks its peers' ops) */
	char note[160];                   /* "late rank", "sets 46 % of the ideal launch gaps", ... */
};

struct answer {
	char title[256];
	struct answer_line *l;
	size_t nl, cap;
	struct answer_row *row;          /* the rows shown, at most ANSWER_ROWS */
	size_t nrow, more;               /* more: ranks not shown */
	int has_host, has_caused, has_gain;
};

/* The summary of one run.  */
void answer_build(const struct analysis *a, struct answer *s);
/* The summary of a comparison: x against the baseline base (c: compare_runs'). */
void answer_build_compare(const struct analysis *base, const struct analysis *x, const char *base_name,
			  const char *x_name, const struct cmp_result *c, struct answer *s);
void answer_free(struct answer *s);

/* Terminal: "== summary ..." then one line per entry, the rank rows as a table. */
void answer_print(FILE *f, const struct answer *s);
/* The lines as an HTML table (id=summary), escaped; the rank rows are
 * answer_html_ranks'. */
void answer_html(FILE *f, const struct answer *s);
/* The rank rows as an HTML table (id=ranks); nothing when there are none. */
void answer_html_ranks(FILE *f, const struct answer *s);

#endif

/*
 * test_realtrace.c - whole-trace figures on the real traces in
 * ../shared/data checked against an independent computation.
 *
 * The oracle is ../shared/data/reference/union_overlap_independent.txt: a
 * separate Python interval-union computation over raw float microseconds
 * (comm = kernels whose name matches /nccl|rccl/i, compute = every other
 * kernel, memcpy/memset only in busy).  This test parses that file at run
 * time, finds each trace by its "<dir>/<file>" label, analyses it with
 * aorta, and requires agreement to 1 us on times and 0.01 points on
 * percentages (the oracle sums floats; aorta is exact in ns).
 */
#include "testing.h"

#include <dirent.h>
#include <sys/stat.h>

#include "ingest/ingest.h"
#include "pipeline/pipeline.h"

/* Collects files under dir whose "<parent>/<name>" starts with label (a
 * label can be ambiguous: trace_diff/test/test.json.gz and
 * trace_compare/test/test.json.gz; the step count then decides). */
static int find_file(const char *dir, const char *label, char (*out)[4096], int *nout, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int found = 0;

	if (!d || depth > 6) {
		if (d)
			closedir(d);
		return 0;
	}
	const char *parent = strrchr(dir, '/');
	parent = parent ? parent + 1 : dir;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char p[4096], rel[1024];
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		struct stat st;
		if (stat(p, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			found += find_file(p, label, out, nout, depth + 1);
			continue;
		}
		snprintf(rel, sizeof(rel), "%s/%s", parent, de->d_name);
		if (!strncmp(rel, label, strlen(label)) && *nout < 4) {
			snprintf(out[(*nout)++], 4096, "%s", p);
			found++;
		}
	}
	closedir(d);
	return found;
}

static void test_whole_trace_figures_match_the_independent_union(void)
{
	char ref[1024], root[1024];
	snprintf(ref, sizeof(ref), "%s/reference/union_overlap_independent.txt", shared_data());
	snprintf(root, sizeof(root), "%s/kineto", shared_data());
	FILE *f = fopen(ref, "r");
	if (!f)
		SKIP("../shared/data is not present (set AORTA_SHARED_DATA)");
	char line[1024];
	int checked = 0;
	while (fgets(line, sizeof(line), f)) {
		char label[256], scope[32];
		int steps;
		double comm, ovl, exp, comp, busy, span, idle;
		if (line[0] == '#')
			continue;
		if (sscanf(line, "%255s %31s steps=%d comm_us= %lf overlap%%= %lf exposed_comm_us= %lf "
				 "compute_us= %lf busy_us= %lf span_us= %lf idle%%= %lf",
			   label, scope, &steps, &comm, &ovl, &exp, &comp, &busy, &span, &idle) != 10)
			continue;
		if (strcmp(scope, "all") != 0)
			continue;
		char cand[4][4096];
		int ncand = 0;
		if (!find_file(root, label, cand, &ncand, 0))
			continue; /* listed in the reference but not shipped (e.g. b200) */
		struct trace_set s = { 0 };
		struct aorta_error e = { 0 };
		struct ingest_opts io = { .rules = NULL, .rank_hint = -1 };
		int ok = 0;
		for (int c = 0; c < ncand && !ok; c++) {
			if (ingest_file(cand[c], &io, &s, &e) != AORTA_OK) {
				fprintf(stderr, "    cannot read %s: %s\n", cand[c], e.msg);
				CHECK(0);
				break;
			}
			ok = ncand == 1 || (s.n == 1 && (int)s.t[0]->nsteps == steps);
			if (!ok)
				trace_set_release(&s);
		}
		if (!ok)
			continue;
		struct analysis a;
		struct analysis_opts o = ANALYSIS_OPTS_INIT;
		o.threads = 1;
		analysis_from_set(&s, &o, &a);
		CHECK_EQ_I(a.n, 1);
		const struct ov_figures *t = &a.r[0].total;
		double ov = t->comm_ns ? 100.0 * (double)t->overlap_ns / (double)t->comm_ns : 0;
		double id = t->window_ns ? 100.0 * (double)t->idle_ns / (double)t->window_ns : 0;
		fprintf(stderr, "    %-45.45s comm %.1f/%.1f us overlap %.2f/%.2f%% busy %.1f/%.1f us\n",
			label, (double)t->comm_ns / 1e3, comm, ov, ovl, (double)t->busy_ns / 1e3, busy);
		CHECK_NEAR((double)t->comm_ns / 1e3, comm, 1.0);
		CHECK_NEAR(ov, ovl, 0.01);
		CHECK_NEAR((double)t->exposed_comm_ns / 1e3, exp, 1.0);
		CHECK_NEAR((double)t->compute_ns / 1e3, comp, 1.0);
		CHECK_NEAR((double)t->busy_ns / 1e3, busy, 1.0);
		CHECK_NEAR((double)t->window_ns / 1e3, span, 1.0);
		CHECK_NEAR(id, idle, 0.01);
		analysis_free(&a);
		checked++;
	}
	fclose(f);
	/* 14 traces of the reference are shipped in ../shared/data */
	CHECK(checked >= 14);
	fprintf(stderr, "    %d traces checked\n", checked);
}

/* The 4-rank DDP run: rank 0 is host-bound and the others wait for it. */
static void test_ddp_late_rank_is_the_host_bound_one(void)
{
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s/kineto/h200_torch2.11/ddp_4rank_12steps", shared_data());
	struct stat st;
	if (stat(dir, &st) != 0)
		SKIP("../shared/data is not present");
	struct analysis a;
	struct aorta_error e = { 0 };
	struct analysis_opts o = ANALYSIS_OPTS_INIT;
	char *in[] = { dir };
	CHECK_EQ_I(analysis_run(in, 1, &o, &a, &e), AORTA_OK);
	CHECK_EQ_I(a.n, 4);
	CHECK_EQ_I(a.late_rank, 0);
	CHECK(a.clocks_aligned);
	CHECK(a.matched_groups >= 150);
	size_t hb0 = 0;
	for (size_t j = 0; j < a.r[0].nsteps; j++)
		hb0 += (size_t)step_host_bound(&a.r[0], j);
	CHECK_EQ_I(a.r[0].nsteps, 12);
	CHECK(hb0 >= 10);
	for (size_t i = 1; i < 4; i++) {
		/* peers spend most of their NCCL time waiting for rank 0 */
		CHECK(a.r[i].wait_ns > 10 * a.r[i].transfer_ns);
		CHECK_EQ_I(a.r[i].rank, (long long)i);
	}
	/* per-step windows tile the step range: their sum is steps_total */
	int64_t sum = 0;
	for (size_t j = 0; j < a.r[1].nsteps; j++)
		sum += step_fig(&a.r[1], j, offsetof(struct ov_figures, window_ns));
	CHECK_EQ_I(sum, a.r[1].steps_sum.window_ns);
	analysis_free(&a);
}

int main(void)
{
	TEST(test_whole_trace_figures_match_the_independent_union);
	TEST(test_ddp_late_rank_is_the_host_bound_one);
	return test_report();
}

/*
 * test_rank_io.c - a rank's results packed and unpacked give the same
 * analysis, byte for byte (what `mpirun aorta analyze` relies on), and
 * damaged bytes are refused, never read past; an analysis whose figures
 * break the rules of the analysis model is not written (analysis_check).
 */
#include "testing.h"

#include <stdio.h>

#include "pipeline/pipeline.h"
#include "analysis_io/analysis_io.h"
#include "report/analysis_out.h"
#include "overlap/whatif.h"

static char *json_of(const struct analysis *a)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	analysis_write_json(f, a);
	fclose(f);
	return buf;
}

static void test_packed_ranks_rejoin_to_the_same_analysis(void)
{
	char *in[] = { (char *)"data/h200x4/fsdp2_bs8", (char *)"tests/data/straggler/ddp_intermittent_r1" };
	for (size_t s = 0; s < 2; s++) {
		struct analysis_opts o = { NULL, 2, 0, 10, 30.0, 0, 0, NULL, 0, 0, 0 };
		struct analysis a, b;
		struct aorta_error e = { 0 };
		char **files = NULL;
		size_t nfiles = 0;
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		a.opts = b.opts = o;
		a.late_rank = b.late_rank = -1;
		/* the per-rank pass, packed before the join as mpirun does */
		if (analysis_expand(&in[s], 1, &files, &nfiles, &e) ||
		    analysis_read_files(files, nfiles, &o, &a.r, &a.n, &a.fr, &e)) {
			CHECK(!"reading failed");
			fprintf(stderr, "    %s\n", e.msg);
			return;
		}
		a.inputs = files;
		a.ninputs = nfiles;
		struct bytes by = { 0 };
		for (size_t i = 0; i < a.n; i++)
			rank_pack(&a.r[i], &by);
		b.r = xcalloc(a.n, sizeof(*b.r));
		size_t off = 0;
		while (off < by.n && b.n < a.n) {
			CHECK_EQ_I(rank_unpack(by.p, by.n, &off, &b.r[b.n], &e), AORTA_OK);
			b.n++;
		}
		CHECK_EQ_I(off, by.n);
		CHECK_EQ_I(b.n, a.n);
		qsort(b.r, b.n, sizeof(*b.r), cmp_path_device);
		b.inputs = a.inputs;
		b.ninputs = a.ninputs;
		analysis_finish(&a);
		analysis_finish(&b);
		char *ja = json_of(&a), *jb = json_of(&b);
		CHECK(strlen(ja) > 1000);
		CHECK(strcmp(ja, jb) == 0);
		free(ja);
		free(jb);
		b.inputs = NULL;
		b.ninputs = 0;
		analysis_free(&b);
		analysis_free(&a);
		free(by.p);
	}
}

static void test_damaged_bytes_are_refused(void)
{
	char *in[] = { (char *)"data/h200x4/fsdp2_bs8/fsdp2_rank0.json.gz" };
	struct analysis_opts o = { NULL, 1, 0, 10, 30.0, 0, 0, NULL, 0, 0, 0 };
	struct analysis a;
	struct aorta_error e = { 0 };
	if (analysis_run(in, 1, &o, &a, &e)) {
		CHECK(!"analysis_run failed");
		return;
	}
	struct bytes by = { 0 };
	rank_pack(&a.r[0], &by);
	/* every cut, a flipped magic and a length past the end are errors */
	for (size_t cut = 0; cut < by.n; cut += 1 + cut / 7) {
		struct analysis t = { 0 };
		t.r = xcalloc(1, sizeof(*t.r));
		t.n = 1;
		size_t off = 0;
		CHECK(rank_unpack(by.p, cut, &off, t.r, &e) != AORTA_OK);
		CHECK_EQ_I(off, 0);
		analysis_free(&t); /* whatever was unpacked before the cut */
	}
	by.p[0] ^= 1;
	size_t off = 0;
	struct rank_result r;
	CHECK(rank_unpack(by.p, by.n, &off, &r, &e) != AORTA_OK);
	free(by.p);
	analysis_free(&a);
}


/* The writer checks what the reader checks: an analysis whose figures
 * break the rules (a wrapped step time, a what-if gain above its step) is
 * refused before a byte is written, naming the field; a sound one passes,
 * and what it writes reads back. */
static void test_writer_refuses_what_its_reader_refuses(void)
{
	char *in[] = { (char *)"tests/data/straggler/ddp_const_r1" };
	struct analysis_opts o = { NULL, 2, 0, 10, 30.0, 0, 0, NULL, 0, 0, 0 };
	struct analysis a, b;
	struct aorta_error e = { 0 };
	if (analysis_run(in, 1, &o, &a, &e)) {
		CHECK(!"analysis failed");
		return;
	}
	whatif_wait(&a);
	CHECK_EQ_I(analysis_check(&a, "a.json", &e), AORTA_OK);
	char *txt = json_of(&a);
	CHECK_EQ_I(analysis_json_parse("a.json", txt, &b, &e), AORTA_OK);
	analysis_free(&b);
	free(txt);
	/* a step's window wrapped past int64 (what an op table at 2^62 ns did) */
	int64_t keep = a.r[0].total.window_ns;
	a.r[0].total.window_ns = INT64_MIN + 5;
	CHECK_EQ_I(analysis_check(&a, "a.json", &e), AORTA_EINTERNAL);
	CHECK(strstr(e.msg, "not written: ranks[0].total.step_ms") != NULL);
	a.r[0].total.window_ns = keep;
	/* a gain larger than the step */
	CHECK(a.whatif && a.whatif->ok && a.whatif->nby_rank);
	if (a.whatif && a.whatif->nby_rank) {
		double g = a.whatif->by_rank[0].gain_pct;
		a.whatif->by_rank[0].gain_pct = 150;
		CHECK_EQ_I(analysis_check(&a, "a.json", &e), AORTA_EINTERNAL);
		CHECK(strstr(e.msg, "across_ranks.what_if.by_rank[0].gain_pct: expected at most 100") != NULL);
		a.whatif->by_rank[0].gain_pct = g;
		a.whatif->ideal_step_ms = a.whatif->replay_step_ms * 2;
		CHECK_EQ_I(analysis_check(&a, "a.json", &e), AORTA_EINTERNAL);
		CHECK(strstr(e.msg, "ideal_step_ms: the ideal step") != NULL);
	}
	analysis_free(&a);
}

int main(void)
{
	TEST(test_packed_ranks_rejoin_to_the_same_analysis);
	TEST(test_damaged_bytes_are_refused);
	TEST(test_writer_refuses_what_its_reader_refuses);
	return test_report();
}

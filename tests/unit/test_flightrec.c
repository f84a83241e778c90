/*
 * test_flightrec.c - Flight Recorder dumps (src/flightrec/): the restricted
 * pickle reader on hand-assembled pickles (every data opcode of the subset,
 * the memo, each refused opcode with its byte offset, truncation at every
 * length, memo indices, nesting, wide integers), the JSON reader, the dump
 * model from PyTorch's own dumps (tests/data/flightrec: pickle and JSON give
 * the same model), the rank from the dump's own fields, the diagnosis on
 * dumps written here whose answer is known (point to point, which gloo does
 * not record; a state stall; a healthy run; NCCL's completion states), and
 * the MPI pack round trip.
 */
#include "testing.h"

#include <stdint.h>

#include "analysis_io/analysis_io.h"
#include "flightrec/fr.h"
#include "flightrec/fv.h"

/* ---- a pickle assembler ------------------------------------------------------------ */

struct pb {
	unsigned char b[1 << 16];
	size_t n;
};

static void op(struct pb *p, unsigned char c)
{
	p->b[p->n++] = c;
}

static void u32(struct pb *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		op(p, (unsigned char)(v >> (8 * i)));
}

static void str(struct pb *p, const char *s) /* SHORT_BINUNICODE */
{
	op(p, 0x8c);
	op(p, (unsigned char)strlen(s));
	memcpy(p->b + p->n, s, strlen(s));
	p->n += strlen(s);
}

static int parse(const struct pb *p, struct fv_doc *d, char *err, size_t *off)
{
	return fv_pickle(d, p->b, p->n, err, 256, off);
}

static void test_pickle_subset(void)
{
	struct pb p = { .n = 0 };
	struct fv_doc d;
	char err[256];
	size_t off;
	/* {"a": 1, "neg": -2, "big": 2**40, "f": 1.5, "t": True, "n": None,
	 *  "l": [b"xy", ("p", "p")], "s": "s"} with the tuple's second item a
	 *  memo GET of the first */
	op(&p, 0x80), op(&p, 2);
	op(&p, '}'), op(&p, 'q'), op(&p, 0);
	op(&p, '(');
	str(&p, "a"), op(&p, 'K'), op(&p, 1);
	str(&p, "neg"), op(&p, 'J'), u32(&p, (uint32_t)-2);
	str(&p, "big"), op(&p, 0x8a), op(&p, 6), op(&p, 0), op(&p, 0), op(&p, 0), op(&p, 0), op(&p, 0), op(&p, 1);
	str(&p, "f"), op(&p, 'G');
	const unsigned char f15[8] = { 0x3f, 0xf8, 0, 0, 0, 0, 0, 0 };
	memcpy(p.b + p.n, f15, 8), p.n += 8;
	str(&p, "t"), op(&p, 0x88);
	str(&p, "n"), op(&p, 'N');
	str(&p, "l"), op(&p, ']'), op(&p, '(');
	op(&p, 'C'), op(&p, 2), op(&p, 'x'), op(&p, 'y');
	str(&p, "p"), op(&p, 'q'), op(&p, 1), op(&p, 'h'), op(&p, 1), op(&p, 0x86);
	op(&p, 'e');
	str(&p, "neg1"), op(&p, 0x8a), op(&p, 1), op(&p, 0xff);
	op(&p, 'u');
	op(&p, '.');
	CHECK_EQ_I(parse(&p, &d, err, &off), 0);
	const struct fv *r = d.root;
	CHECK(r && r->t == FV_DICT);
	CHECK_EQ_I(fv_get(r, "a")->u.i, 1);
	CHECK_EQ_I(fv_get(r, "neg")->u.i, -2);
	CHECK_EQ_I(fv_get(r, "big")->u.i, 1099511627776LL);
	CHECK_EQ_I(fv_get(r, "neg1")->u.i, -1);
	CHECK_NEAR(fv_get(r, "f")->u.d, 1.5, 0);
	CHECK_EQ_I(fv_get(r, "t")->t, FV_BOOL);
	CHECK_EQ_I(fv_get(r, "n")->t, FV_NONE);
	const struct fv *l = fv_get(r, "l");
	CHECK(l && l->t == FV_LIST && l->u.a.n == 2);
	CHECK(l->u.a.v[0]->t == FV_BYTES && l->u.a.v[0]->u.s.n == 2);
	CHECK(l->u.a.v[1]->t == FV_TUPLE && l->u.a.v[1]->u.a.n == 2);
	CHECK(l->u.a.v[1]->u.a.v[0] == l->u.a.v[1]->u.a.v[1]); /* the memo shares one value */
	CHECK(fv_get(r, "missing") == NULL);
	fv_doc_release(&d);
}

/* Every opcode outside the subset is refused at its own byte offset, naming it. */
static void test_pickle_refused_opcodes(void)
{
	static const struct { unsigned char c; const char *name; } bad[] = {
		{ 'c', "GLOBAL" }, { 0x93, "STACK_GLOBAL" }, { 'R', "REDUCE" }, { 'b', "BUILD" }, { 'i', "INST" },
		{ 'o', "OBJ" }, { 0x81, "NEWOBJ" }, { 0x92, "NEWOBJ_EX" }, { 'P', "PERSID" }, { 'Q', "BINPERSID" },
		{ 0x82, "EXT1" }, { 0x8f, "EMPTY_SET" }, { 0x91, "FROZENSET" }, { 0x97, "NEXT_BUFFER" }, { 'I', "INT" },
		{ 'S', "STRING" }, { 'V', "UNICODE" }, { 'F', "FLOAT" }, { 'L', "LONG" },
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		struct pb p = { .n = 0 };
		struct fv_doc d;
		char err[256];
		size_t off = 0;
		op(&p, 0x80), op(&p, 2), op(&p, ']'), op(&p, '(');
		str(&p, "os"), str(&p, "system");
		size_t at = p.n;
		op(&p, bad[k].c);
		str(&p, "x"), op(&p, '.');
		CHECK_EQ_I(parse(&p, &d, err, &off), -1);
		CHECK_EQ_I(off, at);
		CHECK(strstr(err, bad[k].name) != NULL);
		CHECK(strstr(err, "refused") != NULL);
		fv_doc_release(&d);
	}
	/* not an opcode at all */
	struct pb p = { .n = 0 };
	struct fv_doc d;
	char err[256];
	size_t off;
	op(&p, 0x80), op(&p, 2), op(&p, 0xff);
	CHECK_EQ_I(parse(&p, &d, err, &off), -1);
	CHECK_EQ_I(off, 2);
	CHECK(strstr(err, "not a pickle opcode") != NULL);
	fv_doc_release(&d);
}

/* A valid pickle cut at every length is an error at an offset within it. */
static void test_pickle_truncated(void)
{
	FILE *f = fopen("tests/data/flightrec/skip/pickle/fr_trace_rank_1", "rb");
	if (!f)
		SKIP("tests/data/flightrec not found (run from the repository root)");
	static unsigned char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	CHECK(n > 100);
	for (size_t cut = 0; cut < n; cut += cut < 256 ? 1 : 97) {
		struct fv_doc d;
		char err[256];
		size_t off = 0;
		int rc = fv_pickle(&d, buf, cut, err, sizeof(err), &off);
		CHECK_EQ_I(rc, -1);
		CHECK(off <= cut);
		fv_doc_release(&d);
	}
	struct fv_doc d;
	char err[256];
	size_t off;
	CHECK_EQ_I(fv_pickle(&d, buf, n, err, sizeof(err), &off), 0);
	fv_doc_release(&d);
	/* and a byte after STOP */
	buf[n] = '.';
	CHECK_EQ_I(fv_pickle(&d, buf, n + 1, err, sizeof(err), &off), -1);
	CHECK_EQ_I(off, n);
	CHECK(strstr(err, "after the pickle's STOP") != NULL);
	fv_doc_release(&d);
}

static void test_pickle_bounds(void)
{
	struct fv_doc d;
	char err[256];
	size_t off;
	/* a memo index far beyond the values memoised: refused, nothing allocated for it */
	struct pb p = { .n = 0 };
	op(&p, 0x80), op(&p, 2), op(&p, ']'), op(&p, 'r'), u32(&p, 0xffffffffu), op(&p, '.');
	CHECK_EQ_I(parse(&p, &d, err, &off), -1);
	CHECK_EQ_I(off, 3);
	CHECK(strstr(err, "memo index 4294967295 out of range") != NULL);
	fv_doc_release(&d);
	/* a GET of an index never stored */
	p.n = 0;
	op(&p, 0x80), op(&p, 2), op(&p, 'h'), op(&p, 5), op(&p, '.');
	CHECK_EQ_I(parse(&p, &d, err, &off), -1);
	CHECK_EQ_I(off, 2);
	CHECK(strstr(err, "never stored") != NULL);
	fv_doc_release(&d);
	/* lists nested 100 deep, as Python pickles them (outermost first, appended innermost first) */
	p.n = 0;
	op(&p, 0x80), op(&p, 2);
	for (int i = 0; i < 100; i++)
		op(&p, ']');
	size_t first_append = p.n;
	for (int i = 0; i < 99; i++)
		op(&p, 'a');
	op(&p, '.');
	CHECK_EQ_I(parse(&p, &d, err, &off), -1);
	CHECK(strstr(err, "nested deeper than 64") != NULL);
	CHECK_EQ_I(off, first_append + 64); /* the append that put 65 levels below a list */
	fv_doc_release(&d);
	/* a list appended into itself, again and again: the same bound */
	p.n = 0;
	op(&p, 0x80), op(&p, 2), op(&p, ']'), op(&p, 'q'), op(&p, 0);
	for (int i = 0; i < 80; i++)
		op(&p, 'h'), op(&p, 0), op(&p, 'a');
	op(&p, '.');
	CHECK_EQ_I(parse(&p, &d, err, &off), -1);
	CHECK(strstr(err, "nested deeper") != NULL);
	fv_doc_release(&d);
	/* MARKs beyond the bound */
	p.n = 0;
	op(&p, 0x80), op(&p, 2);
	for (int i = 0; i < FV_MAX_MARKS + 2; i++)
		op(&p, '(');
	op(&p, '.');
	CHECK_EQ_I(parse(&p, &d, err, &off), -1);
	CHECK(strstr(err, "MARKs nested deeper") != NULL);
	fv_doc_release(&d);
	/* an integer wider than 64 bits */
	p.n = 0;
	op(&p, 0x80), op(&p, 2), op(&p, 0x8a), op(&p, 9);
	for (int i = 0; i < 9; i++)
		op(&p, 1);
	op(&p, '.');
	CHECK_EQ_I(parse(&p, &d, err, &off), -1);
	CHECK(strstr(err, "wider than 64 bits") != NULL);
	fv_doc_release(&d);
	/* a string longer than the bytes left */
	p.n = 0;
	op(&p, 0x80), op(&p, 2), op(&p, 'X'), u32(&p, 1000000), op(&p, 'a'), op(&p, '.');
	CHECK_EQ_I(parse(&p, &d, err, &off), -1);
	CHECK_EQ_I(off, 2);
	CHECK(strstr(err, "truncated") != NULL);
	fv_doc_release(&d);
	/* protocols outside 2-5, and a protocol 0 pickle */
	p.n = 0;
	op(&p, 0x80), op(&p, 6), op(&p, 'N'), op(&p, '.');
	CHECK_EQ_I(parse(&p, &d, err, &off), -1);
	CHECK(strstr(err, "protocol 6") != NULL);
	fv_doc_release(&d);
	CHECK_EQ_I(fv_pickle(&d, "N.", 2, err, sizeof(err), &off), -1);
	CHECK(strstr(err, "PROTO") != NULL);
	fv_doc_release(&d);
	/* SETITEMS into a list, APPENDS into a dict */
	p.n = 0;
	op(&p, 0x80), op(&p, 2), op(&p, ']'), op(&p, '('), str(&p, "k"), str(&p, "v"), op(&p, 'u'), op(&p, '.');
	CHECK_EQ_I(parse(&p, &d, err, &off), -1);
	CHECK(strstr(err, "expected a dict") != NULL);
	fv_doc_release(&d);
}

/* ---- dumps -------------------------------------------------------------------------- */

static struct fr_dump *read_dump(const char *path)
{
	struct fr_dump *d = NULL;
	struct aorta_error e = { 0 };
	if (fr_dump_read(path, &d, &e))
		fprintf(stderr, "  %s: %s\n", path, e.msg);
	return d;
}

/* PyTorch's pickle and JSON dumps of one rank give one model. */
static void test_dump_pickle_equals_json(void)
{
	struct fr_dump *p = read_dump("tests/data/flightrec/skip/pickle/fr_trace_rank_1");
	struct fr_dump *j = read_dump("tests/data/flightrec/skip/json/fr_trace_rank_1.json");
	if (!p || !j) {
		fr_dump_free(p);
		fr_dump_free(j);
		SKIP("tests/data/flightrec not found (run from the repository root)");
	}
	CHECK_EQ_I(p->rank, 1);
	CHECK_EQ_I(j->rank, 1);
	CHECK_STR(p->rank_from, "its file name");
	CHECK_STR(p->version, "2.10");
	CHECK_STR(p->format, "fr-pickle");
	CHECK_STR(j->format, "fr-json");
	CHECK_EQ_I(p->ne, j->ne);
	CHECK_EQ_I(p->tracks_state, 0); /* gloo: every entry "scheduled" */
	CHECK_EQ_I(p->filtered, 0);
	CHECK_EQ_I(p->wrapped, 0);
	CHECK_EQ_I(p->nst, j->nst);
	for (size_t i = 0; i < p->ne && i < j->ne; i++) {
		const struct fr_entry *a = &p->e[i], *b = &j->e[i];
		CHECK_EQ_I(a->record_id, b->record_id);
		CHECK_EQ_I(a->seq, b->seq);
		CHECK_EQ_I(a->pg_id, b->pg_id);
		CHECK_STR(a->pg_name, b->pg_name);
		CHECK_STR(a->pg_desc, b->pg_desc);
		CHECK_STR(a->profiling_name, b->profiling_name);
		CHECK_STR(a->in_sizes, b->in_sizes);
		CHECK_STR(a->out_sizes, b->out_sizes);
		CHECK_STR(a->in_dtypes, b->in_dtypes);
		CHECK_EQ_I(a->done, b->done);
		CHECK_EQ_I(a->created_ns, b->created_ns);
		CHECK(a->nframes > 0);    /* the pickle holds the stacks */
		CHECK_EQ_I(b->nframes, 0); /* JSON does not */
	}
	/* the last all_gather of DATA_PARALLEL is the one rank 1 waits on */
	const struct fr_entry *last = &p->e[p->ne - 1];
	CHECK_STR(last->op, "all_gather");
	CHECK_STR(last->pg_desc, "DATA_PARALLEL");
	CHECK_EQ_I(last->seq, 4);
	CHECK_EQ_I(last->done, 0);
	CHECK_STR(last->in_sizes, "[[4]]");
	CHECK_EQ_I(last->in_numel, 4);
	fr_dump_free(p);
	fr_dump_free(j);
}

/* NCCL dumps name no rank: the one rank all its groups hold is its rank,
 * whatever the file is called. */
static void test_dump_rank_from_groups(void)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/flight-recorder/nvrx/lock_gil_1st/_dump_9", shared_data());
	struct fr_dump *d = NULL;
	struct aorta_error e = { 0 };
	FILE *f = fopen(path, "rb");
	if (!f)
		SKIP("../shared/data/flight-recorder is not present (set AORTA_SHARED_DATA)");
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	/* read under a name that ends in another number */
	CHECK_EQ_I(fr_dump_mem("node42/trace_3", buf, n, &d, &e), AORTA_OK);
	if (!d)
		return;
	CHECK_EQ_I(d->rank, 9);
	CHECK(strstr(d->rank_from, "groups") != NULL);
	CHECK_EQ_I(d->name_rank, 3);
	CHECK_STR(d->version, "2.9");
	CHECK_STR(d->comm_lib, "2.27.3");
	CHECK_EQ_I(d->ne, 0); /* rank 9 held the GIL: nothing outstanding */
	CHECK(d->nst > 0);
	fr_dump_free(d);
	/* rank 0 of gpu_error_1st: its point-to-point names agree ("send 0->3" in [0, 4, 8, 12]) */
	snprintf(path, sizeof(path), "%s/flight-recorder/nvrx/gpu_error_1st/_dump_4", shared_data());
	d = read_dump(path);
	CHECK(d != NULL);
	if (d) {
		CHECK_EQ_I(d->rank, 4);
		CHECK_EQ_I(d->filtered, 1); /* only active entries: the record ids skip */
		int p2p = 0;
		for (size_t i = 0; i < d->ne; i++)
			p2p += d->e[i].p2p && d->e[i].src >= 0 && d->e[i].dst >= 0;
		CHECK(p2p >= 2);
	}
	fr_dump_free(d);
}

static const char *json_dump_head =
	"{\"version\": \"2.10\", \"comm_lib_version\": \"2.27.5\", "
	"\"pg_config\": {\"0\": {\"name\": \"0\", \"desc\": \"default_pg\", \"ranks\": \"[0, 1, 2]\"}}, "
	"\"pg_status\": {\"0\": {\"last_enqueued_collective\": \"%d\", \"last_started_collective\": \"-1\", "
	"\"last_completed_collective\": \"%d\"}}, \"entries\": [%s]}";

/* One entry of group 0 ("default_pg", ranks 0-2). */
static char *entry(int rec, int seq, int p2p_seq, const char *name, const char *state, const char *sizes)
{
	return xasprintf("{\"record_id\": %d, \"pg_id\": 0, \"process_group\": [\"0\", \"default_pg\"], "
			 "\"collective_seq_id\": %d, \"p2p_seq_id\": %d, \"op_id\": %d, \"profiling_name\": \"%s\", "
			 "\"time_created_ns\": %d, \"input_sizes\": %s, \"input_dtypes\": [\"Float\"], "
			 "\"output_sizes\": %s, \"output_dtypes\": [\"Float\"], \"state\": \"%s\", "
			 "\"time_discovered_started_ns\": 0, \"time_discovered_completed_ns\": 0, \"retired\": false, "
			 "\"timeout_ms\": 600000, \"is_p2p\": %s}",
			 rec, seq, p2p_seq, rec, name, 1000 + rec, sizes, sizes, state, p2p_seq ? "true" : "false");
}

static struct fr_dump *dump_of(const char *name, int enq, int done, const char *entries)
{
	char *text = xasprintf(json_dump_head, enq, done, entries);
	struct fr_dump *d = NULL;
	struct aorta_error e = { 0 };
	if (fr_dump_mem(name, text, strlen(text), &d, &e))
		fprintf(stderr, "  %s: %s\n", name, e.msg);
	free(text);
	return d;
}

static struct fr_run *run_of(struct fr_dump **d, size_t n)
{
	struct fr_run *r = xcalloc(1, sizeof(*r));
	for (size_t i = 0; i < n; i++)
		if (d[i])
			fr_run_add(r, d[i]);
	struct aorta_error e = { 0 };
	CHECK_EQ_I(fr_run_ranks(r, &e), AORTA_OK);
	fr_run_diagnose(r);
	return r;
}

/* NCCL's states: all three members completed all_reduce #1; #2 was
 * completed by ranks 0 and 2 but only started on rank 1: a state
 * difference, rank 1 behind; every member called it. */
static void test_diagnose_state(void)
{
	struct fr_dump *d[3];
	for (int r = 0; r < 3; r++) {
		char *a = entry(0, 1, 0, "nccl:all_reduce", "completed", "[[4]]");
		char *b = entry(1, 2, 0, "nccl:all_reduce", r == 1 ? "started" : "completed", "[[4]]");
		char *es = xasprintf("%s, %s", a, b), name[32];
		snprintf(name, sizeof(name), "d/r_%d", r);
		d[r] = dump_of(name, 2, r == 1 ? 1 : 2, es);
		free(a), free(b), free(es);
	}
	struct fr_run *run = run_of(d, 3);
	const struct fr_result *res = &run->res;
	CHECK_STR(res->kind, "stall");
	CHECK(res->ngroups == 1 && res->groups[0].div);
	if (res->ngroups && res->groups[0].div) {
		const struct fr_div *D = res->groups[0].div;
		CHECK_EQ_I(D->seq, 2);
		CHECK_STR(D->mismatch, "state");
		CHECK_EQ_I(D->nbehind, 1);
		CHECK_EQ_I(D->behind[0], 1);
		CHECK_EQ_I(D->nmissing, 0);
	}
	CHECK(strncmp(res->verdict, "stalled in group 0 (default_pg, ranks 0-2): all_reduce #2", 57) == 0);
	/* a culprit: its peers completed its oldest outstanding op */
	CHECK_EQ_I(res->nculprits, 1);
	if (res->nculprits)
		CHECK_EQ_I(res->culprits[0].rank, 1);
	fr_run_free(run);
}

/* Point to point (NCCL; gloo records none): rank 0 sends to 1 (group rank
 * names "send 0->1"), rank 1 posted a receive from 2, rank 2 sent nothing:
 * the send's receive was never posted (rank 1 missing it), and rank 1's
 * receive has no send (rank 2 missing it); rank 2 is idle. */
static void test_diagnose_p2p(void)
{
	char *c = entry(0, 1, 0, "nccl:all_reduce", "completed", "[[4]]");
	char *s0 = entry(1, 1, 1, "nccl:send 0->1", "scheduled", "[[4]]");
	char *r1 = entry(1, 1, 1, "nccl:recv 1<-2", "scheduled", "[[4]]");
	char *e0 = xasprintf("%s, %s", c, s0), *e1 = xasprintf("%s, %s", c, r1);
	struct fr_dump *d[3] = { dump_of("p/r_0", 1, 0, e0), dump_of("p/r_1", 1, 0, e1), dump_of("p/r_2", 1, 1, c) };
	free(c), free(s0), free(r1), free(e0), free(e1);
	struct fr_run *run = run_of(d, 3);
	const struct fr_result *res = &run->res;
	CHECK_STR(res->kind, "hang");
	const struct fr_div *D = res->ngroups ? res->groups[0].div : NULL;
	CHECK(D != NULL);
	if (D) {
		CHECK_EQ_I(D->seq, -1);
		CHECK_EQ_I(D->p2p_seq, 1);
		CHECK_STR(D->mismatch, "missing");
		CHECK_EQ_I(D->nmissing, 1);
		/* the idle rank 2, which never sent, is where it starts */
		CHECK_EQ_I(D->missing[0], 2);
		CHECK_EQ_I(D->src, 2);
		CHECK_EQ_I(D->dst, 1);
	}
	CHECK(strstr(res->verdict, "recv #1 (rank 2 -> 1) - rank 2 never sent") != NULL);
	CHECK_EQ_I(res->nculprits, 1);
	if (res->nculprits) {
		CHECK_EQ_I(res->culprits[0].rank, 2);
		CHECK(strncmp(res->culprits[0].why, "idle", 4) == 0);
	}
	fr_run_free(run);
}

/* A size mismatch that every member completed is a mismatch, not a hang;
 * a healthy run says so. */
static void test_diagnose_mismatch_and_healthy(void)
{
	struct fr_dump *d[3];
	for (int r = 0; r < 3; r++) {
		char *a = entry(0, 1, 0, "nccl:all_reduce", "completed", r == 2 ? "[[8]]" : "[[4]]");
		char name[32];
		snprintf(name, sizeof(name), "m/r_%d", r);
		d[r] = dump_of(name, 1, 1, a);
		free(a);
	}
	struct fr_run *run = run_of(d, 3);
	CHECK_STR(run->res.kind, "mismatch");
	const struct fr_div *D = run->res.ngroups ? run->res.groups[0].div : NULL;
	CHECK(D && !strcmp(D->mismatch, "size") && D->nodd == 1 && D->odd[0] == 2);
	CHECK(strstr(run->res.verdict, "rank 2 called it with another size (input sizes [[8]] instead of [[4]])") != NULL);
	fr_run_free(run);
	for (int r = 0; r < 3; r++) {
		char *a = entry(0, 1, 0, "nccl:all_reduce", "completed", "[[4]]");
		char name[32];
		snprintf(name, sizeof(name), "h/r_%d", r);
		d[r] = dump_of(name, 1, 1, a);
		free(a);
	}
	run = run_of(d, 3);
	CHECK_STR(run->res.kind, "healthy");
	CHECK_EQ_I(run->res.nculprits, 0);
	fr_run_free(run);
}

/* Two dumps of one rank are refused, naming both files. */
static void test_duplicate_rank(void)
{
	char *a = entry(0, 1, 0, "nccl:all_reduce", "completed", "[[4]]");
	struct fr_dump *d0 = dump_of("x/a_1", 1, 1, a), *d1 = dump_of("y/b_1", 1, 1, a);
	free(a);
	struct fr_run *r = xcalloc(1, sizeof(*r));
	fr_run_add(r, d0);
	fr_run_add(r, d1);
	struct aorta_error e = { 0 };
	CHECK_EQ_I(fr_run_ranks(r, &e), AORTA_EINPUT);
	CHECK(strstr(e.msg, "a second Flight Recorder dump of rank 1") != NULL);
	CHECK(strstr(e.msg, "x/a_1") != NULL);
	fr_run_free(r);
}

/* JSON errors name the byte offset and the path of the bad value. */
static void test_json_errors(void)
{
	struct fr_dump *d = NULL;
	struct aorta_error e = { 0 };
	const char *bad = "{\"version\": \"2.10\", \"entries\": [{\"process_group\": [\"0\", \"x\"], "
			  "\"profiling_name\": \"nccl:all_reduce\", \"collective_seq_id\": \"seven\"}]}";
	CHECK_EQ_I(fr_dump_mem("b.json", bad, strlen(bad), &d, &e), AORTA_EINPUT);
	CHECK(d == NULL);
	CHECK(strstr(e.msg, "entries[0].collective_seq_id: expected an int, got str") != NULL);
	CHECK_EQ_I(e.offset, (long long)(strstr(bad, "\"seven\"") - bad) + 7);
	const char *nover = "{\"entries\": []}";
	CHECK_EQ_I(fr_dump_mem("n.json", nover, strlen(nover), &d, &e), AORTA_EINPUT);
	CHECK(strstr(e.msg, "no 'version'") != NULL);
	const char *trunc = "{\"version\": \"2.10\", \"entries\": [{\"process";
	CHECK_EQ_I(fr_dump_mem("t.json", trunc, strlen(trunc), &d, &e), AORTA_EINPUT);
	CHECK(e.offset > 0);
	const char *state = "{\"version\": \"2.10\", \"entries\": [{\"process_group\": [\"0\", \"x\"], "
			    "\"profiling_name\": \"nccl:all_reduce\", \"collective_seq_id\": 1, \"state\": \"lost\"}]}";
	CHECK_EQ_I(fr_dump_mem("s.json", state, strlen(state), &d, &e), AORTA_EINPUT);
	CHECK(strstr(e.msg, "entries[0].state: 'lost'") != NULL);
	/* a TorchComms dump: collective_seq_id runs over every group, the
	 * description is the backend, no point-to-point numbers */
	const char *tc = "{\"version\": \"2.10\", \"comm_lib_version\": \"\", \"pg_config\": {}, \"pg_status\": {}, "
			 "\"entries\": [{\"record_id\": 0, \"pg_id\": 0, \"process_group\": [\"world\", \"ncclx\"], "
			 "\"collective_seq_id\": 0, \"p2p_seq_id\": 0, \"profiling_name\": \"ncclx:all_reduce\", "
			 "\"state\": \"completed\", \"retired\": true, \"is_p2p\": false}, {\"record_id\": 1, "
			 "\"pg_id\": 1, \"process_group\": [\"tp\", \"ncclx\"], \"collective_seq_id\": 1, "
			 "\"p2p_seq_id\": 0, \"profiling_name\": \"ncclx:send\", \"state\": \"scheduled\", "
			 "\"retired\": false, \"is_p2p\": false}]}";
	CHECK_EQ_I(fr_dump_mem("comm_lib_trace_rank_5", tc, strlen(tc), &d, &e), AORTA_OK);
	if (d) {
		CHECK_EQ_I(d->global_seq, 1);
		CHECK_EQ_I(d->rank, 5);
		CHECK_EQ_I(d->e[1].p2p, 1); /* a send by its name */
		CHECK_EQ_I(d->e[1].src, -1); /* no peer in the name */
		CHECK_EQ_I(d->e[0].done, 1);
	}
	fr_dump_free(d);
}

/* A dump packed for MPI comes back whole. */
static void test_pack_round_trip(void)
{
	struct fr_dump *d = read_dump("tests/data/flightrec/wrap/pickle/fr_trace_rank_0");
	if (!d)
		SKIP("tests/data/flightrec not found (run from the repository root)");
	struct bytes b = { 0 };
	fr_dump_pack(d, &b);
	fr_dump_pack(d, &b);
	size_t off = 0;
	struct fr_dump *u = NULL;
	struct aorta_error e = { 0 };
	CHECK(fr_pack_is_dump(b.p, b.n, off));
	CHECK_EQ_I(fr_dump_unpack(b.p, b.n, &off, &u, &e), AORTA_OK);
	if (u) {
		CHECK_STR(u->path, d->path);
		CHECK_EQ_I(u->rank, d->rank);
		CHECK_EQ_I(u->wrapped, 1);
		CHECK_EQ_I(u->ne, d->ne);
		CHECK_EQ_I(u->npgs, d->npgs);
		CHECK_EQ_I(u->nst, d->nst);
		for (size_t i = 0; i < u->ne && i < d->ne; i++) {
			CHECK_STR(u->e[i].profiling_name, d->e[i].profiling_name);
			CHECK_EQ_I(u->e[i].seq, d->e[i].seq);
			CHECK_EQ_I(u->e[i].nframes, d->e[i].nframes);
			if (u->e[i].nframes)
				CHECK_STR(u->e[i].frames[0].file, d->e[i].frames[0].file);
		}
	}
	fr_dump_free(u);
	CHECK(off < b.n);
	u = NULL;
	CHECK_EQ_I(fr_dump_unpack(b.p, b.n, &off, &u, &e), AORTA_OK);
	CHECK_EQ_I(off, b.n);
	fr_dump_free(u);
	/* a cut pack is an internal error, never a crash */
	for (size_t cut = 0; cut < b.n / 2; cut += 7) {
		size_t o = 0;
		u = NULL;
		CHECK(fr_dump_unpack(b.p, cut, &o, &u, &e) == AORTA_EINTERNAL || cut >= b.n / 2);
		CHECK(u == NULL);
	}
	free(b.p);
	fr_dump_free(d);
}

int main(void)
{
	TEST(test_pickle_subset);
	TEST(test_pickle_refused_opcodes);
	TEST(test_pickle_truncated);
	TEST(test_pickle_bounds);
	TEST(test_dump_pickle_equals_json);
	TEST(test_dump_rank_from_groups);
	TEST(test_diagnose_state);
	TEST(test_diagnose_p2p);
	TEST(test_diagnose_mismatch_and_healthy);
	TEST(test_duplicate_rank);
	TEST(test_json_errors);
	TEST(test_pack_round_trip);
	return test_report();
}

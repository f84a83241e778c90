/*
 * test_kineto_fast.c - the Kineto reader's layout fast path against its full
 * validating path.
 *
 * Events below are written byte for byte in the layout of PyTorch 2.11's
 * profiler (copied from ../shared/data/kineto/h200_torch2.11 traces, names
 * shortened), one per category.  Each input is read twice, once normally
 * and once with AORTA_KINETO_NOFAST (full path only); the two readings must
 * agree on everything the reader produces (status, error offset and message,
 * every span, step, collective, counter), and kineto_fast_events() says
 * which path took the events.  In the event texts a backquote toggles
 * between literal layout bytes (outside) and value bytes (inside); the
 * backquotes are removed before parsing.
 */
#include "ingest/ingest.h"
#include "ingest/kineto_fast.h"
#include "testing.h"

#include <stdint.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ */
/* events in the profiler's layout                                      */
/* ------------------------------------------------------------------ */

static const char *const events[] = {
	/* 0 cpu_op */
	"{\n    \"ph\": \"`X`\", \"cat\": \"`cpu_op`\", \"name\": \"`aten::mm`\", \"pid\": `1671`, \"tid\": `1971`,\n"
	"    \"ts\": `4442465120796.321`, \"dur\": `151.630`,\n    \"args\": `{\n      \"External id\": 1537,"
	"\"Record function id\": 0, \"Sequence number\": 1847, \"Fwd thread id\": 1, \"Ev Idx\": 0\n    }`\n  }",
	/* 1 user_annotation, a host step */
	"{\n    \"ph\": \"`X`\", \"cat\": \"`user_annotation`\", \"name\": \"`ProfilerStep#3`\", \"pid\": `1671`,"
	" \"tid\": `1971`,\n    \"ts\": `4442465100000`, \"dur\": `9000.5`,\n    \"args\": `{\n      \"External id\":"
	" 1754,\"Record function id\": 0, \"Concrete Inputs\": [\"\"], \"Input type\": [\"float\"], \"Input Dims\":"
	" [[9441280]], \"Ev Idx\": 217\n    }`\n  }",
	/* 2 cuda_runtime, launches the kernel (correlation 31328) */
	"{\n    \"ph\": \"`X`\", \"cat\": \"`cuda_runtime`\", \"name\": \"`cudaLaunchKernel`\", \"pid\": `1671`,"
	" \"tid\": `1671`,\n    \"ts\": `4442465100100.25`, \"dur\": `18.534`,\n    \"args\": `{\n"
	"            \"cbid\": 211, \"correlation\": 31328\n    }`\n  }",
	/* 3 cuda_driver, launches the memcpy (correlation 31455) */
	"{\n    \"ph\": \"`X`\", \"cat\": \"`cuda_driver`\", \"name\": \"`cuLaunchKernelEx`\", \"pid\": `1671`,"
	" \"tid\": `1671`,\n    \"ts\": `4442465100200.5`, \"dur\": `10.504`,\n    \"args\": `{\n"
	"      \"External id\": 29,      \"cbid\": 652, \"correlation\": 31455\n    }`\n  }",
	/* 4 kernel, an NCCL collective */
	"{\n    \"ph\": \"`X`\", \"cat\": \"`kernel`\", \"name\": \"`ncclDevKernel_AllReduce_Sum_f32_RING_LL("
	"ncclDevKernelArgsStorage<4096ul>)`\", \"pid\": `2`, \"tid\": `7`,\n    \"ts\": `4442465100300.348`,"
	" \"dur\": `43.008`,\n    \"args\": `{\n            \"queued\": 0, \"device\": 2, \"context\": 1,"
	"      \"stream\": 7, \"correlation\": 31328,      \"registers per thread\": 27,      \"blocks per SM\":"
	" 2.424242,      \"grid\": [132, 1, 1], \"Collective name\": \"allreduce\", \"In msg nelems\": 1024,"
	" \"Out msg nelems\": 1024, \"Group size\": 4, \"dtype\": \"Float\", \"Process Group Name\": \"0\","
	" \"Process Group Description\": \"default_pg\", \"Seq\": 5\n    }`\n  }",
	/* 5 gpu_memcpy */
	"{\n    \"ph\": \"`X`\", \"cat\": \"`gpu_memcpy`\", \"name\": \"`Memcpy DtoD (Device -> Device)`\","
	" \"pid\": `2`, \"tid\": `7`,\n    \"ts\": `4442465100400.346`, \"dur\": `5.280`,\n    \"args\": `{\n"
	"      \"External id\": 175636,      \"device\": 2, \"context\": 1,      \"stream\": 7, \"correlation\":"
	" 31455,      \"bytes\": 8388608, \"memory bandwidth (GB/s)\": 1588.7515151515152\n    }`\n  }",
	/* 6 gpu_memset */
	"{\n    \"ph\": \"`X`\", \"cat\": \"`gpu_memset`\", \"name\": \"`Memset (Device)`\", \"pid\": `2`,"
	" \"tid\": `7`,\n    \"ts\": `4442465100500.487`, \"dur\": `0.960`,\n    \"args\": `{\n"
	"      \"External id\": 29,      \"device\": 2, \"context\": 1,      \"stream\": 7, \"correlation\":"
	" 31454,      \"bytes\": 4, \"memory bandwidth (GB/s)\": 0.004166666666666667\n    }`\n  }",
	/* 7 cuda_sync on a stream */
	"{\n    \"ph\": \"`X`\", \"cat\": \"`cuda_sync`\", \"name\": \"`Stream Sync`\", \"pid\": `2`, \"tid\": `7`,\n"
	"    \"ts\": `4442465100600`, \"dur\": `9`,\n    \"args\": `{\n      \"External id\": 15,"
	"      \"stream\": 7, \"correlation\": 24,      \"device\": 2, \"context\": 1\n    }`\n  }",
	/* 8 gpu_user_annotation, a GPU step */
	"{\n    \"ph\": \"`X`\", \"cat\": \"`gpu_user_annotation`\", \"name\": \"`ProfilerStep#3`\", \"pid\": `2`,"
	" \"tid\": `7`,\n    \"ts\": `4442465100290.12`, \"dur\": `4542.158`,\n    \"args\": `{\n"
	"      \"External id\": 309533\n    }`\n  }",
	/* 9 overhead, no args */
	"{\n    \"ph\": \"`X`\", \"cat\": \"`overhead`\", \"name\": \"`Command Buffer Full`\", \"pid\": `-1`,"
	" \"tid\": `0`,\n    \"ts\": `4442466140551.989`, \"dur\": `2147.333`\n  }",
	/* 10 python_function */
	"{\n    \"ph\": \"`X`\", \"cat\": \"`python_function`\", \"name\": \"`train_ddp.py(184): <module>`\","
	" \"pid\": `542`, \"tid\": `542`,\n    \"ts\": `3743411222578.748`, \"dur\": `86900.793`,\n"
	"    \"args\": `{\n      \"Python parent id\": null, \"Python id\": 1, \"Ev Idx\": 8028\n    }`\n  }",
	/* 11 flow start, ac2g */
	"{\n    \"ph\": \"`s`\", \"id\": `31391`, \"pid\": `1671`, \"tid\": `1671`, \"ts\": `4442465106686.910`,\n"
	"    \"cat\": \"`ac2g`\", \"name\": \"`ac2g`\"\n  }",
	/* 12 flow end, ac2g */
	"{\n    \"ph\": \"`f`\", \"id\": `30427`, \"pid\": `2`, \"tid\": `7`, \"ts\": `4442465106225.348`,\n"
	"    \"cat\": \"`ac2g`\", \"name\": \"`ac2g`\", \"bp\": \"`e`\"\n  }",
	/* 13 flow end, fwdbwd */
	"{\n    \"ph\": \"`f`\", \"id\": `1`, \"pid\": `1671`, \"tid\": `1971`, \"ts\": `4442465120814.118`,\n"
	"    \"cat\": \"`fwdbwd`\", \"name\": \"`fwdbwd`\", \"bp\": \"`e`\"\n  }",
	/* 14 metadata: another key order, always the full path */
	"`{\n    \"name\": \"process_name\", \"ph\": \"M\", \"ts\": 4442465099658.765, \"pid\": 1671, \"tid\": 0,\n"
	"    \"args\": {\n      \"name\": \"python3\"\n    }\n  }`",
};
#define NEV (sizeof(events) / sizeof(events[0]))
#define NFAST 14 /* events[0..13] are in the fast layout */

/* The text of events[i] without backquotes; lit (if not NULL, room for the
 * length) marks its literal layout bytes. */
static char *event_text(size_t i, char *lit)
{
	const char *s = events[i];
	char *out = xmalloc(strlen(s) + 1);
	size_t n = 0;
	int in_val = 0;

	for (; *s; s++) {
		if (*s == '`') {
			in_val = !in_val;
			continue;
		}
		if (lit)
			lit[n] = (char)!in_val;
		out[n++] = *s;
	}
	out[n] = '\0';
	return out;
}

static const char head[] = "{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {\"backend\": \"nccl\","
			   " \"rank\": 2, \"world_size\": 4},\n  \"traceEvents\": [\n  ";
static const char tail[] = "\n  ]\n}\n";

/* A trace file around the given event texts. */
static char *wrap(const char *const *ev, size_t n)
{
	size_t len = sizeof(head) + sizeof(tail);
	char *out, *w;

	for (size_t i = 0; i < n; i++)
		len += strlen(ev[i]) + 4;
	out = w = xmalloc(len);
	w += sprintf(w, "%s", head);
	for (size_t i = 0; i < n; i++)
		w += sprintf(w, "%s%s", i ? ",\n  " : "", ev[i]);
	sprintf(w, "%s", tail);
	return out;
}

/* ------------------------------------------------------------------ */
/* reading and fingerprinting                                           */
/* ------------------------------------------------------------------ */

static void set_env(const char *k, long v)
{
	char b[32];

	if (v < 0) {
		unsetenv(k);
		return;
	}
	snprintf(b, sizeof(b), "%ld", v);
	setenv(k, b, 1);
}

static const char *nm(const struct trace *t, uint32_t id)
{
	return id ? strtab_get(&t->names, id) : "";
}

/* Everything the reader produced from json[0..len), as text: status, error
 * offset and message, or the trace's fields, spans, steps and collectives.
 * window < 0: the default; nofast: full path only.  *nfast: events taken by
 * the fast path. */
static char *read_fp(const char *json, size_t len, long window, int nofast, uint64_t *nfast)
{
	struct ingest_opts o = { .rules = NULL, .rank_hint = -1 };
	struct trace_set ts;
	struct aorta_error e;
	enum aorta_status st;
	uint64_t before = kineto_fast_events();
	char *buf = NULL;
	size_t blen = 0;
	FILE *f;

	memset(&ts, 0, sizeof(ts));
	memset(&e, 0, sizeof(e));
	set_env("AORTA_KINETO_WINDOW", window);
	set_env("AORTA_KINETO_NOFAST", nofast ? 1 : -1);
	st = ingest_kineto_mem("fast", json, len, &o, &ts, &e);
	set_env("AORTA_KINETO_WINDOW", -1);
	set_env("AORTA_KINETO_NOFAST", -1);
	if (nfast)
		*nfast = kineto_fast_events() - before;
	f = open_memstream(&buf, &blen);
	if (!f)
		abort();
	fprintf(f, "status %d\n", (int)st);
	if (st != AORTA_OK) {
		fprintf(f, "error at %lld: %s\n", e.offset, e.msg);
		fclose(f);
		return buf;
	}
	for (size_t k = 0; k < ts.n; k++) {
		const struct trace *t = ts.t[k];
		fprintf(f, "rank %d world %d device %d pid %lld n %zu skipped %llu '%s' host %llu hazard %d\n",
			t->rank, t->world_size, t->device, (long long)t->pid, t->n,
			(unsigned long long)t->skipped, t->skipped_first, (unsigned long long)t->host_events,
			t->has_hta_rounding_hazard);
		for (size_t i = 0; i < t->n; i++) {
			fprintf(f, "span %lld %lld launch %lld bytes %llu '%s' stream %d step %d kind %d coll %d hint %d",
				(long long)t->start_ns[i], (long long)t->end_ns[i], (long long)t->launch_ns[i],
				(unsigned long long)t->bytes[i], nm(t, t->name[i]), t->stream[i], t->step[i],
				t->kind[i], t->coll_type[i], t->hint[i]);
			if (t->meta[i] != UINT32_MAX) {
				const struct coll_meta *m = &t->coll[t->meta[i]];
				fprintf(f, " meta '%s' '%s' '%s' '%s' %lld %lld %lld %d %d", nm(t, m->pg_name),
					nm(t, m->pg_desc), nm(t, m->coll_name), nm(t, m->dtype),
					(long long)m->in_nelems, (long long)m->out_nelems, (long long)m->seq,
					m->group_size, m->dtype_bytes);
			}
			fputc('\n', f);
		}
		for (size_t i = 0; i < t->nsteps; i++)
			fprintf(f, "step %lld %lld %lld\n", (long long)t->steps[i].number,
				(long long)t->steps[i].start_ns, (long long)t->steps[i].end_ns);
		for (size_t i = 0; i < t->ngsteps; i++)
			fprintf(f, "gstep %lld %lld %lld\n", (long long)t->gsteps[i].number,
				(long long)t->gsteps[i].start_ns, (long long)t->gsteps[i].end_ns);
	}
	fclose(f);
	trace_set_release(&ts);
	return buf;
}

/* Reads json with and without the fast path: the two must agree.  Returns
 * the events the fast path took. */
static uint64_t same_both_ways(const char *json, size_t len, long window)
{
	uint64_t nf = 0, nf0 = 0;
	char *a = read_fp(json, len, window, 0, &nf);
	char *b = read_fp(json, len, window, 1, &nf0);

	CHECK_EQ_I(nf0, 0);
	if (strcmp(a, b) != 0) {
		fprintf(stderr, "  fast path:\n%s  full path:\n%s  input:\n%.*s\n", a, b, (int)len, json);
		CHECK(0);
	}
	free(a);
	free(b);
	return nf;
}

/* ------------------------------------------------------------------ */
/* tests                                                                */
/* ------------------------------------------------------------------ */

static void test_every_category_layout_is_taken_and_agrees(void)
{
	const char *txt[NEV];
	struct ingest_opts o = { .rules = NULL, .rank_hint = -1 };
	struct trace_set ts;
	struct aorta_error e;
	uint64_t before;
	char *j;

	for (size_t i = 0; i < NEV; i++)
		txt[i] = event_text(i, NULL);
	j = wrap(txt, NEV);
	CHECK_EQ_I(same_both_ways(j, strlen(j), -1), NFAST);

	/* and what it read is right (independent of the full path) */
	memset(&ts, 0, sizeof(ts));
	before = kineto_fast_events();
	CHECK_EQ_I(ingest_kineto_mem("fast", j, strlen(j), &o, &ts, &e), AORTA_OK);
	CHECK_EQ_I(kineto_fast_events() - before, NFAST);
	if (ts.n == 1) {
		const struct trace *t = ts.t[0];
		int kern = 0, cpy = 0, set = 0, sync = 0;
		CHECK_EQ_I(t->rank, 2);
		CHECK_EQ_I(t->world_size, 4);
		CHECK_EQ_I(t->device, 2);
		CHECK_EQ_I(t->pid, 1671);
		CHECK_EQ_I(t->host_events, 6); /* cpu_op, annotation, runtime, driver, overhead, python */
		CHECK_EQ_I(t->skipped, 0);
		CHECK_EQ_I(t->n, 4);
		for (size_t i = 0; i < t->n; i++) {
			CHECK_EQ_I(t->stream[i], 7);
			switch (t->hint[i]) {
			case R_KERNEL:
				kern++;
				CHECK_EQ_I(t->start_ns[i], INT64_C(4442465100300348));
				CHECK_EQ_I(t->end_ns[i], INT64_C(4442465100343356));
				CHECK_EQ_I(t->launch_ns[i], INT64_C(4442465100100250));
				CHECK(t->meta[i] != UINT32_MAX);
				if (t->meta[i] != UINT32_MAX) {
					const struct coll_meta *m = &t->coll[t->meta[i]];
					CHECK_STR(nm(t, m->coll_name), "allreduce");
					CHECK_STR(nm(t, m->pg_desc), "default_pg");
					CHECK_EQ_I(m->group_size, 4);
					CHECK_EQ_I(m->in_nelems, 1024);
					CHECK_EQ_I(m->seq, 5);
				}
				break;
			case R_MEMCPY:
				cpy++;
				CHECK_EQ_I(t->bytes[i], 8388608);
				CHECK_EQ_I(t->launch_ns[i], INT64_C(4442465100200500));
				CHECK_EQ_I(t->end_ns[i] - t->start_ns[i], 5280);
				break;
			case R_MEMSET:
				set++;
				CHECK_EQ_I(t->bytes[i], 4);
				CHECK_EQ_I(t->end_ns[i] - t->start_ns[i], 960);
				break;
			default:
				sync++;
				CHECK_EQ_I(t->start_ns[i], INT64_C(4442465100600000));
				CHECK_EQ_I(t->end_ns[i], INT64_C(4442465100609000));
				break;
			}
		}
		CHECK(kern == 1 && cpy == 1 && set == 1 && sync == 1);
		CHECK_EQ_I(t->nsteps, 1);
		if (t->nsteps == 1) {
			CHECK_EQ_I(t->steps[0].number, 3);
			CHECK_EQ_I(t->steps[0].start_ns, INT64_C(4442465100000000));
			CHECK_EQ_I(t->steps[0].end_ns, INT64_C(4442465109000500));
		}
		CHECK_EQ_I(t->ngsteps, 1);
		if (t->ngsteps == 1)
			CHECK_EQ_I(t->gsteps[0].end_ns - t->gsteps[0].start_ns, 4542158);
		trace_set_release(&ts);
	}
	for (size_t i = 0; i < NEV; i++)
		free((void *)txt[i]);
	free(j);
}

/* One event in a file, with byte k of the event replaced by c (c < 0:
 * deleted; c >= 256: c - 256 inserted before it). */
static char *mutate(const char *ev, size_t k, int c)
{
	size_t n = strlen(ev);
	char *m = xmalloc(n + 2);
	char *j;
	const char *one[1];

	memcpy(m, ev, k);
	if (c < 0) {
		memcpy(m + k, ev + k + 1, n - k);
	} else if (c >= 256) {
		m[k] = (char)(c - 256);
		memcpy(m + k + 1, ev + k, n - k + 1);
	} else {
		m[k] = (char)c;
		memcpy(m + k + 1, ev + k + 1, n - k);
	}
	one[0] = m;
	j = wrap(one, 1);
	free(m);
	return j;
}

static void test_each_literal_byte_perturbed_falls_back_and_agrees(void)
{
	/* replacements: whitespace that keeps the JSON valid, structural
	 * bytes that break it; then deletion and an inserted space */
	static const int subst[] = { ' ', '\t', '\r', '#', '"', ',', ':', '}', -1, 256 + ' ' };
	size_t taken = 0, valid = 0, cases = 0;

	for (size_t i = 0; i < NFAST; i++) {
		size_t n = strlen(events[i]);
		char *lit = xmalloc(n);
		char *ev = event_text(i, lit);
		size_t len = strlen(ev);

		for (size_t k = 0; k < len; k++) {
			if (!lit[k])
				continue;
			for (size_t r = 0; r < sizeof(subst) / sizeof(subst[0]); r++) {
				if (subst[r] == (unsigned char)ev[k])
					continue;
				/* an insertion before a literal's first byte
				 * extends the value before it instead */
				if (subst[r] >= 256 && (k == 0 || !lit[k - 1]))
					continue;
				char *j = mutate(ev, k, subst[r]);
				uint64_t nf = same_both_ways(j, strlen(j), -1);
				char *fp = read_fp(j, strlen(j), -1, 1, NULL);
				valid += strncmp(fp, "status 0", 8) == 0;
				free(fp);
				cases++;
				if (nf != 0) {
					fprintf(stderr, "  event %zu byte %zu -> %d: fast path taken\n", i, k, subst[r]);
					taken++;
				}
				free(j);
			}
		}
		free(ev);
		free(lit);
	}
	CHECK_EQ_I(taken, 0);
	/* both kinds occurred: whitespace edits stay valid, others break it */
	CHECK(valid > 0 && valid < cases);
}

static void test_value_bytes_perturbed_agree(void)
{
	static const int subst[] = { '\\', 1, 0x1f, '"', '.', '5', '-', 'e', 'x', -1, 256 + '0' };

	for (size_t i = 0; i < NFAST; i++) {
		size_t n = strlen(events[i]);
		char *lit = xmalloc(n);
		char *ev = event_text(i, lit);
		size_t len = strlen(ev);

		for (size_t k = 0; k < len; k++) {
			if (lit[k])
				continue;
			for (size_t r = 0; r < sizeof(subst) / sizeof(subst[0]); r++) {
				if (subst[r] == (unsigned char)ev[k])
					continue;
				char *j = mutate(ev, k, subst[r]);
				same_both_ways(j, strlen(j), -1);
				free(j);
			}
		}
		free(ev);
		free(lit);
	}
}

/* events[0] with its name value replaced. */
static char *with_name(const char *name)
{
	char *ev = event_text(0, NULL);
	char *at = strstr(ev, "aten::mm");
	char *out = xmalloc(strlen(ev) + strlen(name) + 1);
	const char *one[1];
	char *j;

	sprintf(out, "%.*s%s%s", (int)(at - ev), ev, name, at + strlen("aten::mm"));
	one[0] = out;
	j = wrap(one, 1);
	free(ev);
	free(out);
	return j;
}

static void test_escapes_and_control_chars_in_strings_fall_back(void)
{
	static const char *const names[] = {
		"ProfilerStep\\u00233", "Profiler\\nStep#3", "a\\\"b", "a\\\\b", "\\/", "bad\\x", "ctl\001",
		"ctl\037", "tab\there", "del\177ok", "utf8 \xc3\xa9 ok",
	};
	static const int fast[] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1 };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *j = with_name(names[i]);
		CHECK_EQ_I(same_both_ways(j, strlen(j), -1), fast[i]);
		free(j);
	}
	/* an escaped name is decoded: "ProfilerStep\u00233" is a step */
	{
		char *a = with_name("ProfilerStep\\u00233"), *b = with_name("ProfilerStep#3");
		struct ingest_opts o = { .rules = NULL, .rank_hint = -1 };
		struct trace_set ts;
		struct aorta_error e;
		int64_t ka = -1, kb = -2;

		/* events[0] is cpu_op: a ProfilerStep#N name there is a host step */
		memset(&ts, 0, sizeof(ts));
		if (ingest_kineto_mem("a", a, strlen(a), &o, &ts, &e) == AORTA_OK) {
			if (ts.t[0]->nsteps == 1)
				ka = ts.t[0]->steps[0].number;
			trace_set_release(&ts);
		}
		memset(&ts, 0, sizeof(ts));
		if (ingest_kineto_mem("b", b, strlen(b), &o, &ts, &e) == AORTA_OK) {
			if (ts.t[0]->nsteps == 1)
				kb = ts.t[0]->steps[0].number;
			trace_set_release(&ts);
		}
		CHECK_EQ_I(ka, 3);
		CHECK_EQ_I(kb, 3);
		free(a);
		free(b);
	}
	/* an escape in ph, cat or a flow's bp falls back too */
	{
		static const char *const from[] = { "\"X\"", "\"cpu_op\"" };
		static const char *const to[] = { "\"\\u0058\"", "\"cpu\\u005fop\"" };
		for (size_t i = 0; i < 2; i++) {
			char *ev = event_text(0, NULL);
			char *at = strstr(ev, from[i]);
			char *out = xmalloc(strlen(ev) + 16);
			const char *one[1];
			sprintf(out, "%.*s%s%s", (int)(at - ev), ev, to[i], at + strlen(from[i]));
			one[0] = out;
			char *j = wrap(one, 1);
			CHECK_EQ_I(same_both_ways(j, strlen(j), -1), 0);
			free(j);
			free(out);
			free(ev);
		}
	}
}

/* ts, dur, pid and tid values: the fast converters or a fallback, never a
 * different result. */
static void test_numbers_agree_with_the_full_path(void)
{
	static const struct { const char *v; int fast; } ts[] = {
		{ "0", 1 }, { "0.5", 1 }, { "7.25", 1 }, { "4442465120796.321", 1 },
		{ "999999999999999.999", 1 }, { "1669783687464181", 1 }, { "9223372036854775.807", 1 },
		{ "9223372036854775.808", 0 }, { "9999999999999999.999", 0 }, { "10000000000000000", 0 },
		{ "1.0000", 0 },
		{ "1.0005", 0 }, { "1.5e3", 0 }, { "1E3", 0 }, { "-5", 0 }, { "01", 0 }, { "00.5", 0 },
		{ "12.", 0 }, { ".5", 0 }, { "1.2.3", 0 }, { "\"12\"", 0 }, { "null", 0 }, { "1x", 0 },
	};
	static const struct { const char *v; int fast; } id[] = {
		{ "0", 1 }, { "-1", 1 }, { "-0", 1 }, { "123456789012345678", 1 },
		{ "1234567890123456789", 0 }, { "99999999999999999999", 0 }, { "1.0", 0 }, { "1e2", 0 },
		{ "01", 0 }, { "-", 0 }, { "--1", 0 }, { "\"Spans\"", 0 }, { "\"7\"", 0 }, { "true", 0 },
	};
	static const char *const ts_key[] = { "4442465120796.321", "151.630" };
	static const char *const id_key[] = { "\"pid\": 1671", "\"tid\": 1971" };

	for (int which = 0; which < 2; which++) {
		for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
			char *ev = event_text(0, NULL);
			char *at = strstr(ev, ts_key[which]);
			char *out = xmalloc(strlen(ev) + 64);
			const char *one[1];
			sprintf(out, "%.*s%s%s", (int)(at - ev), ev, ts[i].v, at + strlen(ts_key[which]));
			one[0] = out;
			char *j = wrap(one, 1);
			CHECK_EQ_I(same_both_ways(j, strlen(j), -1), ts[i].fast);
			free(j);
			free(out);
			free(ev);
		}
		for (size_t i = 0; i < sizeof(id) / sizeof(id[0]); i++) {
			char *ev = event_text(0, NULL);
			char *at = strstr(ev, id_key[which]) + 7;
			char *out = xmalloc(strlen(ev) + 64);
			const char *one[1];
			sprintf(out, "%.*s%s%s", (int)(at - ev), ev, id[i].v, at + 4);
			one[0] = out;
			char *j = wrap(one, 1);
			CHECK_EQ_I(same_both_ways(j, strlen(j), -1), id[i].fast);
			free(j);
			free(out);
			free(ev);
		}
	}
}

/* A later duplicate key after args, or a member the layout does not have,
 * must not be missed: the event ends right after args or falls back. */
static void test_members_after_the_layout_fall_back(void)
{
	static const char *const extra[] = {
		", \"cat\": \"kernel\"", ", \"args\": {\"stream\": 3}", ", \"ph\": \"i\"", ", \"x\": 1",
	};

	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		char *ev = event_text(0, NULL);
		size_t n = strlen(ev);
		char *out = xmalloc(n + 64);
		const char *one[1];
		/* insert before the final "\n  }" */
		sprintf(out, "%.*s%s%s", (int)(n - 4), ev, extra[i], ev + n - 4);
		one[0] = out;
		char *j = wrap(one, 1);
		CHECK_EQ_I(same_both_ways(j, strlen(j), -1), 0);
		free(j);
		free(out);
		free(ev);
	}
	/* the duplicate cat makes the cpu_op a kernel, with stream 7 from tid */
	{
		char *ev = event_text(0, NULL);
		size_t n = strlen(ev);
		char *out = xmalloc(n + 64);
		const char *one[1];
		struct ingest_opts o = { .rules = NULL, .rank_hint = -1 };
		struct trace_set ts;
		struct aorta_error e;
		sprintf(out, "%.*s, \"cat\": \"kernel\"%s", (int)(n - 4), ev, ev + n - 4);
		one[0] = out;
		char *j = wrap(one, 1);
		memset(&ts, 0, sizeof(ts));
		CHECK_EQ_I(ingest_kineto_mem("dup", j, strlen(j), &o, &ts, &e), AORTA_OK);
		if (ts.n == 1) {
			CHECK_EQ_I(ts.t[0]->n, 1);
			trace_set_release(&ts);
		}
		free(j);
		free(out);
		free(ev);
	}
}

/* Every window size from 16 bytes to past the whole input: the window edge
 * (and the refill that moves an event to the front) falls at every offset
 * of every event. */
static void test_window_edge_at_every_offset(void)
{
	const char *txt[NEV];
	char *j, *ref;
	size_t len;
	uint64_t nf;

	for (size_t i = 0; i < NEV; i++)
		txt[i] = event_text(i, NULL);
	j = wrap(txt, NEV);
	len = strlen(j);
	ref = read_fp(j, len, -1, 1, NULL);
	CHECK(strncmp(ref, "status 0", 8) == 0);
	for (long w = 16; w <= (long)len + 64; w++) {
		char *a = read_fp(j, len, w, 0, &nf);
		if (strcmp(a, ref) != 0) {
			fprintf(stderr, "  window %ld differs:\n%s\n", w, a);
			CHECK(0);
			free(a);
			break;
		}
		free(a);
		/* once the window holds everything, every event goes fast */
		if (w > (long)len)
			CHECK_EQ_I(nf, NFAST);
	}
	/* truncated at every offset: the same error both ways */
	for (size_t k = 1; k < len; k += 7)
		same_both_ways(j, k, 64);
	free(ref);
	for (size_t i = 0; i < NEV; i++)
		free((void *)txt[i]);
	free(j);
}

int main(void)
{
	TEST(test_every_category_layout_is_taken_and_agrees);
	TEST(test_each_literal_byte_perturbed_falls_back_and_agrees);
	TEST(test_value_bytes_perturbed_agree);
	TEST(test_escapes_and_control_chars_in_strings_fall_back);
	TEST(test_numbers_agree_with_the_full_path);
	TEST(test_members_after_the_layout_fall_back);
	TEST(test_window_edge_at_every_offset);
	return test_report();
}

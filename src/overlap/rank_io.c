/*
 * rank_io.c - a rank's results as bytes and back (rank_io.h).
 *
 * Layout of one rank: the magic "AORTARK1", the payload length (uint64),
 * then the payload: the fixed part of struct rank_result (copied whole,
 * pointers cleared on the way in), then strings (uint32 length + bytes)
 * and arrays (uint64 count + elements copied whole; the pointers inside
 * collective and kernel rows are sent as strings after their array and
 * re-pointed on the way out; a collective call's process group is its
 * row's).  Same binary on both ends, so sizes and padding agree.
 */
#include "overlap/rank_io.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char MAGIC[8] = { 'A', 'O', 'R', 'T', 'A', 'R', 'K', '1' };

static void put(struct bytes *b, const void *p, size_t n)
{
	GROW(b->p, b->cap, b->n + n + 1);
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void put_u64(struct bytes *b, uint64_t v)
{
	put(b, &v, sizeof(v));
}

static void put_str(struct bytes *b, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) : UINT32_MAX;
	put(b, &n, sizeof(n));
	if (s)
		put(b, s, n);
}

/* Formats are static strings of the readers; the receiver maps the name
 * back to one of its own (the same binary has the same set). */
static const char *const FORMATS[] = {
	"kineto", "nsys", "rocpd", "rocprof-csv", "rocprof-json", "aorta-jsonl", "aorta-analysis", "unknown",
};

static const char *format_static(const char *s)
{
	if (!s)
		return NULL;
	for (size_t i = 0; i < sizeof(FORMATS) / sizeof(FORMATS[0]); i++)
		if (!strcmp(s, FORMATS[i]))
			return FORMATS[i];
	return "unknown";
}

void rank_pack(const struct rank_result *r, struct bytes *b)
{
	put(b, MAGIC, sizeof(MAGIC));
	size_t len_at = b->n;
	put_u64(b, 0);
	size_t start = b->n;

	struct rank_result fix = *r;
	fix.t = NULL;
	fix.path = fix.skipped_first = NULL;
	fix.format = NULL;
	fix.steps = NULL;
	fix.streams = NULL;
	fix.colls = NULL;
	fix.kernels = NULL;
	fix.inst = NULL;
	fix.ops = NULL;
	fix.peers = NULL;
	fix.npeers = 0;
	memset(&fix.wait_set, 0, sizeof(fix.wait_set));
	memset(&fix.exposed_set, 0, sizeof(fix.exposed_set));
	put(b, &fix, sizeof(fix));
	put_str(b, r->path);
	put_str(b, r->skipped_first);
	put_str(b, r->format);

	put_u64(b, r->nsteps);
	put(b, r->steps, r->nsteps * sizeof(*r->steps));
	put_u64(b, r->nstreams);
	put(b, r->streams, r->nstreams * sizeof(*r->streams));
	put_u64(b, r->ncolls);
	put(b, r->colls, r->ncolls * sizeof(*r->colls));
	for (size_t k = 0; k < r->ncolls; k++)
		put_str(b, r->colls[k].pg);
	put_u64(b, r->nkernels);
	put(b, r->kernels, r->nkernels * sizeof(*r->kernels));
	for (size_t k = 0; k < r->nkernels; k++)
		put_str(b, r->kernels[k].name);
	put_u64(b, r->ninst);
	put(b, r->inst, r->ninst * sizeof(*r->inst));
	put_u64(b, r->nops);
	put(b, r->ops, r->nops * sizeof(*r->ops));

	uint64_t len = b->n - start;
	memcpy(b->p + len_at, &len, sizeof(len));
}

/* ---- reading -------------------------------------------------------------- */

struct rd {
	const char *p;
	size_t n, off;
	int bad;
};

static int get(struct rd *d, void *out, size_t n)
{
	if (d->bad || n > d->n - d->off) {
		d->bad = 1;
		if (out && n)
			memset(out, 0, n);
		return -1;
	}
	if (n)
		memcpy(out, d->p + d->off, n);
	d->off += n;
	return 0;
}

static char *get_str(struct rd *d)
{
	uint32_t n = 0;
	if (get(d, &n, sizeof(n)) || n == UINT32_MAX)
		return NULL;
	if (n > d->n - d->off) {
		d->bad = 1;
		return NULL;
	}
	char *s = xmalloc((size_t)n + 1);
	get(d, s, n);
	s[n] = '\0';
	return s;
}

/* An array of count elements of size sz (count bounded by the bytes left). */
static void *get_arr(struct rd *d, size_t sz, size_t *count)
{
	uint64_t c = 0;
	*count = 0;
	if (get(d, &c, sizeof(c)))
		return NULL;
	if (c > (d->n - d->off) / sz) {
		d->bad = 1;
		return NULL;
	}
	void *a = xcalloc(c ? (size_t)c : 1, sz);
	get(d, a, (size_t)c * sz);
	*count = (size_t)c;
	return a;
}

enum aorta_status rank_unpack(const char *p, size_t n, size_t *off, struct rank_result *r,
			      struct aorta_error *e)
{
	char magic[8];
	uint64_t len = 0;
	struct rd d = { p, n, *off, 0 };

	memset(r, 0, sizeof(*r));
	if (get(&d, magic, sizeof(magic)) || memcmp(magic, MAGIC, sizeof(MAGIC)) || get(&d, &len, sizeof(len)) ||
	    len > n - d.off)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, (long long)*off,
				  "not a packed rank (expected the 'AORTARK1' header and its length)");
	d.n = d.off + (size_t)len;
	get(&d, r, sizeof(*r));
	r->t = NULL;
	r->path = get_str(&d);
	r->skipped_first = get_str(&d);
	char *fmt = get_str(&d);
	r->format = format_static(fmt);
	free(fmt);
	r->steps = get_arr(&d, sizeof(*r->steps), &r->nsteps);
	r->streams = get_arr(&d, sizeof(*r->streams), &r->nstreams);
	r->colls = get_arr(&d, sizeof(*r->colls), &r->ncolls);
	for (size_t k = 0; k < r->ncolls; k++)
		r->colls[k].pg = NULL;
	for (size_t k = 0; k < r->ncolls; k++) {
		r->colls[k].pg = get_str(&d);
		if (!r->colls[k].pg)
			r->colls[k].pg = xstrdup("");
	}
	r->kernels = get_arr(&d, sizeof(*r->kernels), &r->nkernels);
	for (size_t k = 0; k < r->nkernels; k++)
		r->kernels[k].name = NULL;
	for (size_t k = 0; k < r->nkernels; k++) {
		r->kernels[k].name = get_str(&d);
		if (!r->kernels[k].name)
			r->kernels[k].name = xstrdup("");
	}
	r->inst = get_arr(&d, sizeof(*r->inst), &r->ninst);
	for (size_t k = 0; k < r->ninst; k++) {
		if (r->inst[k].row >= r->ncolls) {
			d.bad = 1;
			r->inst[k].row = 0;
			r->inst[k].pg = "";
			continue;
		}
		r->inst[k].pg = r->colls[r->inst[k].row].pg;
	}
	r->ops = get_arr(&d, sizeof(*r->ops), &r->nops);
	for (size_t k = 0; k < r->nops; k++) /* links out of range are dropped, not followed */
		if (r->ops[k].inst >= (int32_t)r->ninst || r->ops[k].dep >= (int32_t)r->nops ||
		    r->ops[k].hdep >= (int32_t)r->nops || r->ops[k].step >= (int32_t)r->nsteps) {
			d.bad = 1;
			r->ops[k].inst = r->ops[k].dep = r->ops[k].hdep = r->ops[k].step = -1;
		}
	for (size_t k = 0; k < r->ninst; k++)
		if (r->inst[k].op >= (int32_t)r->nops) {
			d.bad = 1;
			r->inst[k].op = -1;
		}
	ivset_init(&r->wait_set);
	ivset_init(&r->exposed_set);
	if (!r->path)
		r->path = xstrdup("");
	if (!r->skipped_first)
		r->skipped_first = xstrdup("");
	if (d.bad || d.off != d.n)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, (long long)d.off,
				  "a packed rank ends short or carries %zu extra bytes", d.off < d.n ? d.n - d.off : 0);
	*off = d.off;
	return AORTA_OK;
}

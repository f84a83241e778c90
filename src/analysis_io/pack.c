/*
 * pack.c - a rank's results as bytes and back (analysis_io.h), walking the
 * rank's record table (fields.c).
 *
 * Layout of one rank: the magic "AORTARK2", the payload length (uint64),
 * then the payload: the fixed part of struct rank_result (copied whole,
 * its pointer members cleared), then, in table order, each pointer member:
 * a string as uint32 length + bytes (UINT32_MAX for NULL), an array as
 * uint64 count + its elements (pointers cleared) followed by the pointer
 * members of each element.  Members the JSON does not carry are FT_PACK
 * lines: an array sent whole (the join's calls, their process group
 * re-pointed to their row's here; the steps and the bytes of their store,
 * whose columns are checked against them) or bytes cleared (the timeline,
 * the interval sets).  Same binary on both ends, so sizes and padding agree.
 */
#include "analysis_io/analysis_io.h"
#include "analysis_io/fields.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char MAGIC[8] = { 'A', 'O', 'R', 'T', 'A', 'R', 'K', '2' };

void bytes_put(struct bytes *b, const void *p, size_t n)
{
	GROW(b->p, b->cap, b->n + n + 1);
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void put(struct bytes *b, const void *p, size_t n)
{
	bytes_put(b, p, n);
}

static void put_u64(struct bytes *b, uint64_t v)
{
	put(b, &v, sizeof(v));
}

void bytes_put_str(struct bytes *b, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) : UINT32_MAX;
	put(b, &n, sizeof(n));
	if (s)
		put(b, s, n);
}

static void put_str(struct bytes *b, const char *s)
{
	bytes_put_str(b, s);
}

static int is_ptr(const struct field *f)
{
	return f->type == FT_STR || f->type == FT_SSTR || f->type == FT_ARR || f->type == FT_PACK;
}

/* Clears the pointer members of rec (a copy about to be sent). */
static void clear_ptrs(const struct record *rc, char *rec)
{
	for (size_t k = 0; k < rc->n; k++) {
		const struct field *f = &rc->f[k];
		if (f->type == FT_OBJ)
			clear_ptrs(f->sub, rec + f->off);
		else if (f->type == FT_PACK && !f->cnt)
			memset(rec + f->off, 0, f->size);
		else if (is_ptr(f))
			*(void **)(rec + f->off) = NULL;
	}
}

/* Elements copied with their pointers cleared. */
static void put_elems(struct bytes *b, const char *el, size_t n, size_t size, const struct record *rc)
{
	put_u64(b, n);
	if (!rc) { /* no pointers in them: the bytes as they are */
		put(b, el, n * size);
		return;
	}
	char *tmp = xmalloc(size);
	for (size_t i = 0; i < n; i++) {
		memcpy(tmp, el + i * size, size);
		if (rc)
			clear_ptrs(rc, tmp);
		put(b, tmp, size);
	}
	free(tmp);
}

static void pack_ptrs(struct bytes *b, const struct record *rc, const char *rec)
{
	for (size_t k = 0; k < rc->n; k++) {
		const struct field *f = &rc->f[k];
		const char *p = rec + f->off;
		if (f->type == FT_OBJ) {
			pack_ptrs(b, f->sub, p);
		} else if (f->type == FT_STR || f->type == FT_SSTR) {
			put_str(b, *(const char *const *)p);
		} else if (f->type == FT_ARR) {
			const char *el = *(const char *const *)p;
			size_t n = *(const size_t *)(rec + f->cnt);
			put_elems(b, el, n, f->sub->size, f->sub);
			for (size_t i = 0; i < n; i++)
				pack_ptrs(b, f->sub, el + i * f->sub->size);
		} else if (f->type == FT_PACK && f->cnt) {
			put_elems(b, *(const char *const *)p, *(const size_t *)(rec + f->cnt), f->size, NULL);
		}
	}
}

void rank_pack(const struct rank_result *r, struct bytes *b)
{
	put(b, MAGIC, sizeof(MAGIC));
	size_t len_at = b->n;
	put_u64(b, 0);
	size_t start = b->n;
	struct rank_result fix = *r;
	clear_ptrs(&REC_RANK, (char *)&fix);
	put(b, &fix, sizeof(fix));
	pack_ptrs(b, &REC_RANK, (const char *)r);
	uint64_t len = b->n - start;
	memcpy(b->p + len_at, &len, sizeof(len));
}

/* ---- reading -------------------------------------------------------------- */

struct pr {
	const char *p;
	size_t n, off;
	int bad;
};

static int get(struct pr *d, void *out, size_t n)
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

static char *get_str(struct pr *d)
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
static void *get_arr(struct pr *d, size_t sz, size_t *count)
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

static void unpack_ptrs(struct pr *d, const struct record *rc, char *rec)
{
	for (size_t k = 0; k < rc->n; k++) {
		const struct field *f = &rc->f[k];
		char *p = rec + f->off;
		if (f->type == FT_OBJ) {
			unpack_ptrs(d, f->sub, p);
		} else if (f->type == FT_STR) {
			char *s = get_str(d);
			*(char **)p = s ? s : xstrdup("");
		} else if (f->type == FT_SSTR) {
			char *s = get_str(d);
			const char *const *nm = f->names;
			while (s && *nm && strcmp(*nm, s))
				nm++;
			*(const char **)p = s && *nm ? *nm : f->names[0];
			free(s);
		} else if (f->type == FT_ARR) {
			size_t *cnt = (size_t *)(rec + f->cnt);
			*(char **)p = get_arr(d, f->sub->size, cnt);
			for (size_t i = 0; i < *cnt; i++) /* safe to free before they are read */
				clear_ptrs(f->sub, *(char **)p + i * f->sub->size);
			for (size_t i = 0; i < *cnt; i++)
				unpack_ptrs(d, f->sub, *(char **)p + i * f->sub->size);
		} else if (f->type == FT_PACK && f->cnt) {
			*(void **)p = get_arr(d, f->size, (size_t *)(rec + f->cnt));
		}
	}
}

enum aorta_status rank_unpack(const char *p, size_t n, size_t *off, struct rank_result *r,
			      struct aorta_error *e)
{
	char magic[8];
	uint64_t len = 0;
	struct pr d = { p, n, *off, 0 };

	memset(r, 0, sizeof(*r));
	if (get(&d, magic, sizeof(magic)) || memcmp(magic, MAGIC, sizeof(MAGIC)) || get(&d, &len, sizeof(len)) ||
	    len > n - d.off)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, (long long)*off,
				  "not a packed rank (expected the 'AORTARK2' header and its length)");
	d.n = d.off + (size_t)len;
	get(&d, r, sizeof(*r));
	clear_ptrs(&REC_RANK, (char *)r);
	unpack_ptrs(&d, &REC_RANK, (char *)r);
	for (size_t k = 0; k < r->ninst; k++) { /* a call's process group is its row's */
		if (r->inst[k].row >= r->ncolls) {
			d.bad = 1;
			r->inst[k].row = 0;
			r->inst[k].pg = "";
			continue;
		}
		r->inst[k].pg = r->colls[r->inst[k].row].pg;
	}
	for (size_t k = 0; k < r->nops; k++) /* the what-if's links out of range are dropped, not followed */
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
	if (!steps_store_valid(&r->sv, r->nsteps)) { /* its columns must lie in its bytes */
		d.bad = 1;
		free(r->sv.data);
		memset(&r->sv, 0, sizeof(r->sv));
	}
	ivset_init(&r->wait_set);
	ivset_init(&r->exposed_set);
	if (d.bad || d.off != d.n)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, (long long)d.off,
				  "a packed rank ends short or carries %zu extra bytes", d.off < d.n ? d.n - d.off : 0);
	*off = d.off;
	return AORTA_OK;
}

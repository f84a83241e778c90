/*
 * fr_pack.c - a Flight Recorder dump as bytes and back, for analyze under
 * MPI (src/mpi/analyze_mpi.c): each process reads its share of the dumps
 * and sends them, parsed, to process 0, which matches them across ranks.
 *
 * Layout: the magic "AORTAFR1", the payload length (uint64), then the
 * dump's scalars, its strings (uint32 length + bytes, UINT32_MAX for NULL),
 * its pg_config items, pg_status items and entries with their frames.
 * Same binary on both ends.  Every read is bounds-checked: a short or
 * malformed pack is AORTA_EINTERNAL, never a crash.
 */
#include "flightrec/fr.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_io/analysis_io.h"

static const char MAGIC[8] = { 'A', 'O', 'R', 'T', 'A', 'F', 'R', '1' };

static void put(struct bytes *b, const void *p, size_t n)
{
	bytes_put(b, p, n);
}

static void put_i64(struct bytes *b, int64_t v)
{
	put(b, &v, sizeof(v));
}

void fr_dump_pack(const struct fr_dump *d, struct bytes *b)
{
	put(b, MAGIC, sizeof(MAGIC));
	size_t at = b->n;
	put_i64(b, 0); /* the payload length, set below */
	bytes_put_str(b, d->path);
	bytes_put_str(b, d->rank_from);
	bytes_put_str(b, d->version);
	bytes_put_str(b, d->comm_lib);
	bytes_put_str(b, d->format);
	int64_t sc[] = { d->rank, d->name_rank, d->version_major, d->version_minor, d->tracks_state, d->filtered,
			 d->wrapped, d->global_seq, (int64_t)d->bytes, (int64_t)d->npgs, (int64_t)d->nst, (int64_t)d->ne };
	put(b, sc, sizeof(sc));
	for (size_t i = 0; i < d->npgs; i++) {
		const struct fr_pg *g = &d->pgs[i];
		bytes_put_str(b, g->key);
		bytes_put_str(b, g->name);
		bytes_put_str(b, g->desc);
		put_i64(b, g->ranks ? (int64_t)g->nranks : -1);
		if (g->ranks)
			put(b, g->ranks, g->nranks * sizeof(*g->ranks));
	}
	if (d->nst)
		put(b, d->st, d->nst * sizeof(*d->st));
	for (size_t i = 0; i < d->ne; i++) {
		const struct fr_entry *en = &d->e[i];
		int64_t v[] = { en->record_id, en->pg_id, en->seq, en->p2p_seq, en->op_id, en->src, en->dst, en->state,
				en->retired, en->p2p, en->done, en->created_ns, en->started_ns, en->completed_ns,
				en->timeout_ms, (int64_t)en->in_numel, (int64_t)en->out_numel, (int64_t)en->off,
				(int64_t)en->nframes };
		put(b, v, sizeof(v));
		put(b, &en->duration_ms, sizeof(en->duration_ms));
		const char *s[] = { en->pg_name, en->pg_desc, en->profiling_name, en->op, en->in_sizes, en->out_sizes,
				    en->in_dtypes, en->out_dtypes, en->thread_name };
		for (size_t k = 0; k < sizeof(s) / sizeof(s[0]); k++)
			bytes_put_str(b, s[k]);
		for (uint32_t f = 0; f < en->nframes; f++) {
			bytes_put_str(b, en->frames[f].name);
			bytes_put_str(b, en->frames[f].file);
			put_i64(b, en->frames[f].line);
		}
	}
	int64_t len = (int64_t)(b->n - at - sizeof(int64_t));
	memcpy(b->p + at, &len, sizeof(len));
}

struct rdr {
	const char *p;
	size_t n, off;
	int bad;
	struct strtab *st;
};

static void get(struct rdr *r, void *out, size_t n)
{
	if (r->bad || r->n - r->off < n) {
		r->bad = 1;
		memset(out, 0, n);
		return;
	}
	memcpy(out, r->p + r->off, n);
	r->off += n;
}

static int64_t get_i64(struct rdr *r)
{
	int64_t v;
	get(r, &v, sizeof(v));
	return v;
}

static const char *get_str(struct rdr *r)
{
	uint32_t n;
	get(r, &n, sizeof(n));
	if (r->bad || n == UINT32_MAX)
		return NULL;
	if (r->n - r->off < n) {
		r->bad = 1;
		return NULL;
	}
	const char *s = strtab_get(r->st, strtab_intern(r->st, r->p + r->off, n));
	r->off += n;
	return s;
}

enum aorta_status fr_dump_unpack(const char *p, size_t n, size_t *off, struct fr_dump **out,
				 struct aorta_error *e)
{
	*out = NULL;
	if (n - *off < sizeof(MAGIC) + 8 || memcmp(p + *off, MAGIC, sizeof(MAGIC)))
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, (long long)*off, "MPI: not a packed Flight Recorder dump");
	int64_t len;
	memcpy(&len, p + *off + sizeof(MAGIC), sizeof(len));
	size_t start = *off + sizeof(MAGIC) + sizeof(len);
	if (len < 0 || (uint64_t)len > n - start)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, (long long)*off, "MPI: a short Flight Recorder pack");
	struct fr_dump *d = xcalloc(1, sizeof(*d));
	arena_init(&d->ar);
	strtab_init(&d->strs);
	struct rdr r = { p + start, (size_t)len, 0, 0, &d->strs };
	d->path = get_str(&r);
	d->rank_from = get_str(&r);
	d->version = get_str(&r);
	d->comm_lib = get_str(&r);
	d->format = get_str(&r);
	int64_t sc[12];
	get(&r, sc, sizeof(sc));
	d->rank = (int)sc[0];
	d->name_rank = (int)sc[1];
	d->version_major = (int)sc[2];
	d->version_minor = (int)sc[3];
	d->tracks_state = (int)sc[4];
	d->filtered = (int)sc[5];
	d->wrapped = (int)sc[6];
	d->global_seq = (int)sc[7];
	d->bytes = (size_t)sc[8];
	if (sc[9] < 0 || sc[10] < 0 || sc[11] < 0 || (uint64_t)sc[9] > r.n || (uint64_t)sc[10] > r.n ||
	    (uint64_t)sc[11] > r.n)
		r.bad = 1;
	if (!r.bad) {
		d->npgs = (size_t)sc[9];
		d->pgs = arena_alloc(&d->ar, (d->npgs ? d->npgs : 1) * sizeof(*d->pgs));
		for (size_t i = 0; i < d->npgs && !r.bad; i++) {
			struct fr_pg *g = &d->pgs[i];
			g->key = get_str(&r);
			g->name = get_str(&r);
			g->desc = get_str(&r);
			int64_t nr = get_i64(&r);
			g->ranks = NULL;
			g->nranks = 0;
			if (nr >= 0) {
				if ((uint64_t)nr > (r.n - r.off) / sizeof(int32_t)) {
					r.bad = 1;
					break;
				}
				g->nranks = (size_t)nr;
				g->ranks = arena_alloc(&d->ar, (g->nranks ? g->nranks : 1) * sizeof(int32_t));
				get(&r, g->ranks, g->nranks * sizeof(int32_t));
			}
			if (!g->key || !g->name || !g->desc)
				r.bad = 1;
		}
	}
	if (!r.bad) {
		d->nst = (size_t)sc[10];
		if (d->nst > (r.n - r.off) / sizeof(*d->st))
			r.bad = 1;
		else {
			d->st = arena_alloc(&d->ar, (d->nst ? d->nst : 1) * sizeof(*d->st));
			get(&r, d->st, d->nst * sizeof(*d->st));
		}
	}
	if (!r.bad) {
		d->ne = (size_t)sc[11];
		d->e = arena_alloc(&d->ar, (d->ne ? d->ne : 1) * sizeof(*d->e));
		for (size_t i = 0; i < d->ne && !r.bad; i++) {
			struct fr_entry *en = &d->e[i];
			int64_t v[19];
			get(&r, v, sizeof(v));
			en->record_id = v[0];
			en->pg_id = v[1];
			en->seq = v[2];
			en->p2p_seq = v[3];
			en->op_id = v[4];
			en->src = (int32_t)v[5];
			en->dst = (int32_t)v[6];
			en->state = (uint8_t)v[7];
			en->retired = (uint8_t)v[8];
			en->p2p = (uint8_t)v[9];
			en->done = (uint8_t)v[10];
			en->created_ns = v[11];
			en->started_ns = v[12];
			en->completed_ns = v[13];
			en->timeout_ms = v[14];
			en->in_numel = (uint64_t)v[15];
			en->out_numel = (uint64_t)v[16];
			en->off = (size_t)v[17];
			get(&r, &en->duration_ms, sizeof(en->duration_ms));
			const char **s[] = { &en->pg_name, &en->pg_desc, &en->profiling_name, &en->op, &en->in_sizes,
					     &en->out_sizes, &en->in_dtypes, &en->out_dtypes, &en->thread_name };
			for (size_t k = 0; k < sizeof(s) / sizeof(s[0]); k++)
				*s[k] = get_str(&r);
			if (!en->pg_name || !en->pg_desc || !en->profiling_name || !en->op || !en->in_sizes ||
			    !en->out_sizes || !en->in_dtypes || !en->out_dtypes)
				r.bad = 1;
			if (v[18] < 0 || (uint64_t)v[18] > (r.n - r.off) / 16) {
				r.bad = 1;
				break;
			}
			struct fr_frame *fr = arena_alloc(&d->ar, ((size_t)v[18] ? (size_t)v[18] : 1) * sizeof(*fr));
			for (int64_t f = 0; f < v[18] && !r.bad; f++) {
				fr[f].name = get_str(&r);
				fr[f].file = get_str(&r);
				fr[f].line = get_i64(&r);
				if (!fr[f].name || !fr[f].file)
					r.bad = 1;
			}
			en->frames = fr;
			en->nframes = (uint32_t)v[18];
		}
	}
	if (r.bad || r.off != r.n || !d->path || !d->version || !d->format || !d->rank_from) {
		fr_dump_free(d);
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, (long long)*off, "MPI: a malformed Flight Recorder pack");
	}
	*off = start + (size_t)len;
	*out = d;
	return AORTA_OK;
}

int fr_pack_is_dump(const char *p, size_t n, size_t off)
{
	return n - off >= sizeof(MAGIC) && !memcmp(p + off, MAGIC, sizeof(MAGIC));
}

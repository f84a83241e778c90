/*
 * kineto_write.c - Kineto Chrome-trace writer (see kineto_write.h).
 *
 * Design.  One pass over the caller's events, printed with fprintf: the
 * generic JSON writer (base/output.h) has no fixed-point number, and ts/dur
 * must be exact microseconds with three decimals from integer ns, so this
 * file prints numbers itself and every string through json_escape.  One
 * event per line, as Kineto does, so the file diffs and greps well.
 *
 * Extra memory: two sorted arrays of 16-byte keys (GPU correlations for the
 * flow arrows, and (pid, tid) pairs for the row names), so O(n) beside the
 * caller's arrays; the JSON itself streams to the file.
 *
 * gzip: a fopencookie stream whose write callback deflates (zlib, gzip
 * wrapper) into the real output FILE, so the atomic out_open/out_commit
 * machinery, its error checks and its fault injection see every byte.
 */
#include "timeline/kineto_write.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/output.h"

static const char *const cat_names[KW__COUNT] = {
	"kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver",
	"user_annotation", "gpu_user_annotation", "cpu_op",
};

const char *kw_cat_name(enum kw_cat c)
{
	return (unsigned)c < KW__COUNT ? cat_names[c] : "unknown";
}

static int is_gpu(enum kw_cat c)
{
	return c == KW_KERNEL || c == KW_MEMCPY || c == KW_MEMSET || c == KW_GPU_USER_ANNOTATION;
}

void kw_print_us(FILE *f, int64_t ns)
{
	int neg = ns < 0;
	uint64_t a = neg ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	fprintf(f, "%s%llu.%03u", neg ? "-" : "", (unsigned long long)(a / 1000), (unsigned)(a % 1000));
}

/* ------------------------------------------------------------------ */
/* sorted keys                                                         */
/* ------------------------------------------------------------------ */

struct key2 { int64_t a, b; };

static int key2_cmp(const void *x, const void *y)
{
	const struct key2 *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return 0;
}

/* Sorts and removes duplicates; returns the new count. */
static size_t key2_unique(struct key2 *k, size_t n)
{
	size_t m = 0;

	if (n == 0)
		return 0;
	qsort(k, n, sizeof(*k), key2_cmp);
	for (size_t i = 1; i < n; i++)
		if (key2_cmp(&k[i], &k[m]) != 0)
			k[++m] = k[i];
	return m + 1;
}

static int key2_has(const struct key2 *k, size_t n, int64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k[mid].a < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && k[lo].a == a;
}

/* ------------------------------------------------------------------ */
/* the JSON                                                            */
/* ------------------------------------------------------------------ */

static void put_meta(FILE *f, const char *what, int64_t pid, int64_t tid, const char *key,
		     const char *val, long long num)
{
	fprintf(f, ",\n  {\"name\": \"%s\", \"ph\": \"M\", \"ts\": 0, \"pid\": %lld, \"tid\": %lld, "
		   "\"args\": {\"%s\": ", what, (long long)pid, (long long)tid, key);
	if (val)
		json_escape(f, val);
	else
		fprintf(f, "%lld", num);
	fputs("}}", f);
}

static void put_devices(FILE *f, const struct kw_trace *t)
{
	fputs("  \"deviceProperties\": [", f);
	for (size_t i = 0; i < t->ndevices; i++) {
		const struct kw_device *d = &t->devices[i];
		fprintf(f, "%s\n    {\"id\": %d, \"name\": ", i ? "," : "", d->id);
		json_escape(f, d->name ? d->name : "");
		fprintf(f, ", \"totalGlobalMem\": %llu, \"computeMajor\": %d, \"computeMinor\": %d, "
			   "\"maxThreadsPerBlock\": %d, \"maxThreadsPerMultiprocessor\": %d, "
			   "\"regsPerBlock\": %d, \"warpSize\": %d, \"sharedMemPerBlock\": %llu, "
			   "\"numSms\": %d, \"sharedMemPerBlockOptin\": %llu, "
			   "\"sharedMemPerMultiprocessor\": %llu}",
			(unsigned long long)d->total_global_mem, d->compute_major, d->compute_minor,
			d->max_threads_per_block, d->max_threads_per_sm, d->regs_per_block,
			d->warp_size, (unsigned long long)d->shared_mem_per_block, d->num_sms,
			(unsigned long long)d->shared_mem_per_block_optin,
			(unsigned long long)d->shared_mem_per_sm);
	}
	fputs(t->ndevices ? "\n  ],\n" : "],\n", f);
}

static void put_event(FILE *f, const struct kw_trace *t, const struct kw_event *v, int first)
{
	int64_t dur = v->end_ns > v->start_ns ? v->end_ns - v->start_ns : 0;
	int gpu = is_gpu(v->cat);

	fputs(first ? "\n  {" : ",\n  {", f);
	fprintf(f, "\"ph\": \"X\", \"cat\": \"%s\", \"name\": ", kw_cat_name(v->cat));
	json_escape(f, v->name ? v->name : "");
	fprintf(f, ", \"pid\": %lld, \"tid\": %lld, \"ts\": ", (long long)v->pid, (long long)v->tid);
	kw_print_us(f, v->start_ns - t->base_ns);
	fputs(", \"dur\": ", f);
	kw_print_us(f, dur);
	fputs(", \"args\": {", f);
	if (gpu) {
		fprintf(f, "\"device\": %lld, \"stream\": %lld", (long long)v->pid, (long long)v->tid);
		if (v->correlation >= 0)
			fprintf(f, ", \"correlation\": %lld", (long long)v->correlation);
	} else {
		int any = 0;
		if (v->cbid >= 0) {
			fprintf(f, "\"cbid\": %d", v->cbid);
			any = 1;
		}
		if (v->correlation >= 0)
			fprintf(f, "%s\"correlation\": %lld", any ? ", " : "", (long long)v->correlation);
	}
	if (v->cat == KW_KERNEL) {
		if (v->regs_per_thread >= 0)
			fprintf(f, ", \"registers per thread\": %d", v->regs_per_thread);
		if (v->shared_mem_bytes >= 0)
			fprintf(f, ", \"shared memory\": %d", v->shared_mem_bytes);
		if (v->grid[0] > 0)
			fprintf(f, ", \"grid\": [%d, %d, %d], \"block\": [%d, %d, %d]", v->grid[0],
				v->grid[1], v->grid[2], v->block[0], v->block[1], v->block[2]);
	}
	if ((v->cat == KW_MEMCPY || v->cat == KW_MEMSET) && v->bytes > 0) {
		/* GB/s = bytes / ns: printed with 6 decimals, as Kineto's float */
		fprintf(f, ", \"bytes\": %llu", (unsigned long long)v->bytes);
		if (dur > 0)
			fprintf(f, ", \"memory bandwidth (GB/s)\": %.6f", (double)v->bytes / (double)dur);
	}
	fputs("}}", f);
}

enum aorta_status kineto_write_stream(FILE *f, const struct kw_trace *t, struct aorta_error *e)
{
	struct key2 *gcorr = NULL, *rows = NULL;
	size_t ng = 0, nr = 0;
	int64_t host_pid = t->host_pid;

	/* keys: correlations of GPU events; (pid, tid) rows, GPU rows flagged by b's sign bit */
	gcorr = xmalloc((t->nev + 1) * sizeof(*gcorr));
	rows = xmalloc((t->nev + 1) * sizeof(*rows));
	for (size_t i = 0; i < t->nev; i++) {
		const struct kw_event *v = &t->ev[i];
		if (is_gpu(v->cat) && v->correlation >= 0 && v->cat != KW_GPU_USER_ANNOTATION)
			gcorr[ng++] = (struct key2){ v->correlation, 0 };
		if (!is_gpu(v->cat) && host_pid < 0)
			host_pid = v->pid;
		rows[nr++] = (struct key2){ is_gpu(v->cat) ? v->pid : -1 - v->pid, v->tid };
	}
	ng = key2_unique(gcorr, ng);
	nr = key2_unique(rows, nr);

	fputs("{\n  \"schemaVersion\": 1,\n", f);
	put_devices(f, t);
	fputs("  \"distributedInfo\": {\"backend\": ", f);
	json_escape(f, t->backend ? t->backend : "nccl");
	fprintf(f, ", \"rank\": %d, \"world_size\": %d},\n", t->rank, t->world_size);
	if (t->cupti_version >= 0)
		fprintf(f, "  \"cupti_version\": %d,\n", t->cupti_version);
	if (t->cuda_runtime_version >= 0)
		fprintf(f, "  \"cuda_runtime_version\": %d,\n", t->cuda_runtime_version);
	if (t->cuda_driver_version >= 0)
		fprintf(f, "  \"cuda_driver_version\": %d,\n", t->cuda_driver_version);
	fprintf(f, "  \"trace_id\": \"aorta-%lld-%lld\",\n", (long long)host_pid, (long long)t->base_ns);
	fputs("  \"displayTimeUnit\": \"ms\",\n", f);
	fprintf(f, "  \"baseTimeNanoseconds\": %lld,\n", (long long)t->base_ns);
	fputs("  \"traceEvents\": [", f);

	for (size_t i = 0; i < t->nev; i++)
		put_event(f, t, &t->ev[i], i == 0);

	/* launch arrows: runtime/driver call -> the GPU work it launched */
	for (size_t i = 0; i < t->nev; i++) {
		const struct kw_event *v = &t->ev[i];
		if ((v->cat != KW_RUNTIME && v->cat != KW_DRIVER) || v->correlation < 0 ||
		    !key2_has(gcorr, ng, v->correlation))
			continue;
		fprintf(f, "%s\n  {\"ph\": \"s\", \"id\": %lld, \"pid\": %lld, \"tid\": %lld, \"ts\": ",
			t->nev ? "," : "", (long long)v->correlation, (long long)v->pid, (long long)v->tid);
		kw_print_us(f, v->start_ns - t->base_ns);
		fputs(", \"cat\": \"ac2g\", \"name\": \"ac2g\"}", f);
	}
	for (size_t i = 0; i < t->nev; i++) {
		const struct kw_event *v = &t->ev[i];
		if (!is_gpu(v->cat) || v->cat == KW_GPU_USER_ANNOTATION || v->correlation < 0)
			continue;
		fprintf(f, ",\n  {\"ph\": \"f\", \"id\": %lld, \"pid\": %lld, \"tid\": %lld, \"ts\": ",
			(long long)v->correlation, (long long)v->pid, (long long)v->tid);
		kw_print_us(f, v->start_ns - t->base_ns);
		fputs(", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}", f);
	}

	/* row names; metadata last so an empty event list still gives valid JSON */
	int first = t->nev == 0;
	int64_t last_pid = INT64_MIN;
	for (size_t i = 0; i < nr; i++) {
		int gpu = rows[i].a >= 0;
		int64_t pid = gpu ? rows[i].a : -1 - rows[i].a;
		char label[64];
		if (first) {
			/* put_meta writes a leading comma: start the list with a harmless event */
			fputs("\n  {\"name\": \"process_sort_index\", \"ph\": \"M\", \"ts\": 0, \"pid\": 0, "
			      "\"tid\": 0, \"args\": {\"sort_index\": 0}}", f);
			first = 0;
		}
		if (pid != last_pid || (i > 0 && (rows[i - 1].a >= 0) != gpu)) {
			if (gpu) {
				snprintf(label, sizeof(label), "GPU %lld", (long long)pid);
				put_meta(f, "process_name", pid, 0, "name", label, 0);
				put_meta(f, "process_labels", pid, 0, "labels", label, 0);
				put_meta(f, "process_sort_index", pid, 0, "sort_index", NULL,
					 (long long)(pid + 0x1000000));
			} else {
				put_meta(f, "process_name", pid, 0, "name",
					 t->host_name ? t->host_name : "aorta", 0);
				put_meta(f, "process_labels", pid, 0, "labels", "CPU", 0);
			}
			last_pid = pid;
		}
		if (gpu)
			snprintf(label, sizeof(label), "stream %lld", (long long)rows[i].b);
		else
			snprintf(label, sizeof(label), "thread %lld", (long long)rows[i].b);
		put_meta(f, "thread_name", pid, rows[i].b, "name", label, 0);
	}
	fputs("\n  ]\n}\n", f);
	free(gcorr);
	free(rows);
	if (ferror(f))
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "cannot write the trace: %s",
				  strerror(errno ? errno : EIO));
	return AORTA_OK;
}

/* ------------------------------------------------------------------ */
/* gzip through a cookie stream                                        */
/* ------------------------------------------------------------------ */

struct gzc {
	z_stream z;
	FILE *out;
	int failed;
	unsigned char buf[1 << 16];
};

static int gzc_pump(struct gzc *g, int flush)
{
	int r;

	do {
		g->z.next_out = g->buf;
		g->z.avail_out = sizeof(g->buf);
		r = deflate(&g->z, flush);
		if (r == Z_STREAM_ERROR)
			return -1;
		size_t have = sizeof(g->buf) - g->z.avail_out;
		if (have && fwrite(g->buf, 1, have, g->out) != have)
			return -1;
	} while (g->z.avail_out == 0 || (flush == Z_FINISH && r != Z_STREAM_END));
	return 0;
}

static ssize_t gzc_write(void *cookie, const char *p, size_t n)
{
	struct gzc *g = cookie;
	size_t total = n;

	if (g->failed)
		return -1;
	while (n > 0) {
		uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
		g->z.next_in = (Bytef *)(uintptr_t)p;
		g->z.avail_in = chunk;
		if (gzc_pump(g, Z_NO_FLUSH) != 0) {
			g->failed = 1;
			return -1;
		}
		p += chunk;
		n -= chunk;
	}
	return (ssize_t)total;
}

/* Finishes the gzip member; the cookie is freed by the caller. */
static int gzc_close(void *cookie)
{
	struct gzc *g = cookie;

	if (!g->failed && gzc_pump(g, Z_FINISH) != 0)
		g->failed = 1;
	deflateEnd(&g->z);
	return g->failed ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* files                                                               */
/* ------------------------------------------------------------------ */

enum aorta_status kw_make_parent_dirs(const char *path, struct aorta_error *e)
{
	char *d = xstrdup(path);
	char *slash = strrchr(d, '/');
	enum aorta_status st = AORTA_OK;

	if (!slash || slash == d) {
		free(d);
		return AORTA_OK;
	}
	*slash = '\0';
	for (char *p = d + 1; ; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;
			*p = '\0';
			if (mkdir(d, 0777) != 0 && errno != EEXIST) {
				st = aorta_fail(e, AORTA_EINTERNAL, d, 0, -1, "cannot create the folder: %s",
						strerror(errno));
				break;
			}
			*p = c;
			if (c == '\0')
				break;
		}
	}
	free(d);
	return st;
}

int kineto_trace_path(char *buf, size_t cap, const char *output_dir, int rank, long long pid,
		      long long step, int gzip)
{
	char host[256];

	if (gethostname(host, sizeof(host)) != 0)
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = '\0';
	for (char *h = host; *h; h++)
		if (*h == '/')
			*h = '_';
	if (pid < 0)
		pid = (long long)getpid();
	int n = snprintf(buf, cap, "%s/torch_profiler/rank%d/%s_%lld.%lld.pt.trace.json%s",
			 output_dir && *output_dir ? output_dir : ".", rank, host, pid, step,
			 gzip ? ".gz" : "");
	return n < 0 || (size_t)n >= cap ? -1 : n;
}

enum aorta_status kineto_write(const char *path, const struct kw_trace *t, int gzip,
			       struct aorta_error *e)
{
	struct outfile o;
	enum aorta_status st;

	st = kw_make_parent_dirs(path, e);
	if (st != AORTA_OK)
		return st;
	st = out_open(&o, path, e);
	if (st != AORTA_OK)
		return st;
	if (!gzip) {
		st = kineto_write_stream(o.f, t, e);
	} else {
		struct gzc *g = xcalloc(1, sizeof(*g));
		cookie_io_functions_t io = { NULL, gzc_write, NULL, gzc_close };
		FILE *zf = NULL;
		g->out = o.f;
		if (deflateInit2(&g->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			free(g);
			out_abort(&o);
			return aorta_fail(e, AORTA_EINTERNAL, path, 0, -1, "cannot start zlib");
		}
		zf = fopencookie(g, "w", io);
		if (!zf) {
			deflateEnd(&g->z);
			free(g);
			out_abort(&o);
			return aorta_fail(e, AORTA_EINTERNAL, path, 0, -1, "cannot open a gzip stream");
		}
		setvbuf(zf, NULL, _IOFBF, 1 << 16);
		st = kineto_write_stream(zf, t, e);
		if (fclose(zf) != 0 && st == AORTA_OK)
			st = aorta_fail(e, AORTA_EINTERNAL, path, 0, -1, "cannot compress the trace");
		free(g);
	}
	if (st != AORTA_OK) {
		if (e && !e->path[0])
			snprintf(e->path, sizeof(e->path), "%s", path);
		out_abort(&o);
		return st;
	}
	return out_commit(&o, e);
}

/*
 * inputs.c - input expansion: files, directories, globs and @lists to the
 * sorted list of files to read, each with its format when already known.
 *
 * Design.  Named inputs are taken as given, unopened: the reader opens them
 * once and sniffs the bytes it reads (ingest_file), which is what lets a
 * FIFO or a pipe through.  Directory members must be sniffed here, to know
 * what to read; each is opened once, its first INGEST_SNIFF_BYTES peeked,
 * and the format carried in struct input, so the reader does not sniff
 * again.  Only regular files of a directory are read (a FIFO left in a trace
 * folder would block the walk).  Skips are said, never silent (inputs.h).
 */
#include "ingest/inputs.h"
#include "ingest/upstream_sums.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "base/output.h"
#include "base/zread.h"

#define MAX_DEPTH 8
/* entries one expansion looks at, at most (every directory entry, hidden
 * or not, every glob match and every line of a list): a link to / or to a
 * huge tree is an error, not an hour of walking (sweep's own analysis
 * included).  The walk lists first and sniffs after, so the cap fires
 * after 200,000 directory reads, not 200,000 file reads. */
#define MAX_ENTRIES 200000

/* st: the file's stat when it is a regular file (its identity), else NULL */
static void add(struct input_list *l, const char *path, enum trace_format f, const struct stat *st)
{
	GROW(l->v, l->cap, l->n + 1);
	struct input *in = &l->v[l->n++];
	memset(in, 0, sizeof(*in));
	in->path = xstrdup(path);
	in->format = f;
	if (st && S_ISREG(st->st_mode)) {
		struct stat ls;
		in->dev = st->st_dev;
		in->ino = st->st_ino;
		in->have_id = 1;
		in->is_link = lstat(path, &ls) == 0 && S_ISLNK(ls.st_mode);
	}
}

static int cmp_input(const void *a, const void *b)
{
	return strcmp(((const struct input *)a)->path, ((const struct input *)b)->path);
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcasecmp(s + n - m, suf);
}

/* A file a user would expect to be read as a rank (a trace's extension):
 * its skip is a warning.  Logs, notes, pictures and the side tables of
 * rocprofv3 (agent_info.csv, hip_api_trace.csv, ..., read with their
 * kernel_trace.csv or not at all) are notes. */
static int looks_like_trace(const char *name)
{
	static const char *const ext[] = { ".json", ".json.gz", ".jsonl", ".jsonl.gz", ".sqlite",
					   ".nsys-rep", ".db", ".bz2", ".xz", ".zst" };
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
		if (ends_with(name, ext[i]))
			return 1;
	return ends_with(name, "kernel_trace.csv") || ends_with(name, "memory_copy_trace.csv");
}

const char *inputs_own_output(const char *buf, size_t len)
{
	static const char *const csv[] = {
		"rank,world_size,device,format,path", "rank,step,start_ns,end_ns",
		"rank,stream,busy_ms,", "rank,type,process_group,bytes,", "rank,name,kind,count,total_ms",
	};
	if (!len)
		return NULL;
	if (strstr(buf, "\"schema\":\"aorta.analysis/") || strstr(buf, "\"schema\": \"aorta.analysis/"))
		return "an aorta analysis (analyze --json)";
	if (strstr(buf, "\"schema\":\"aorta.trace/") || strstr(buf, "\"schema\": \"aorta.trace/"))
		return "an aorta overlap trace (analyze --trace-out)";
	if (strstr(buf, "\"schema\":\"aorta.report/") || strstr(buf, "\"schema\": \"aorta.report/"))
		return "an aorta report summary (report)";
	for (size_t i = 0; i < sizeof(csv) / sizeof(csv[0]); i++)
		if (!strncmp(buf, csv[i], strlen(csv[i])))
			return "an aorta CSV table (analyze --csv)";
	if (strstr(buf, "<h1>aorta report"))
		return "an aorta report page (report)";
	return NULL;
}

struct dir_id {
	dev_t dev;
	ino_t ino;
	char *path;
};

/* A regular file the walk found, sniffed once the walk is done. */
struct found {
	char *path;
	size_t name;           /* offset of its name in path */
	struct stat st;
};

struct walk {
	struct input_list *l;
	int strict;
	size_t notes;          /* skips said as notes */
	struct aorta_error *e;
	struct dir_id *dirs;   /* folders entered: each once */
	size_t ndirs, capdirs;
	int fatal;             /* a runtime error (EMFILE...): stop, e is filled */
	size_t entries;        /* entries looked at (MAX_ENTRIES) */
	struct found *found;   /* regular files of the folder being walked, to sniff */
	size_t nfound, capfound;
};

/* Counts one entry toward MAX_ENTRIES; 0, or -1 (w->e filled, fatal) past it. */
static int count_entry(struct walk *w, const char *where)
{
	if (++w->entries <= MAX_ENTRIES)
		return 0;
	if (!w->fatal)
		aorta_fail(w->e, AORTA_EINPUT, where, 0, -1, "more than %d entries in the folders walked, the "
			   "lists and the patterns (a link to a large tree?); name the rank files or a smaller "
			   "folder", MAX_ENTRIES);
	w->fatal = 1;
	return -1;
}

/* Whether path is under /proc, /sys or (dev) /dev, through any hop of a
 * chain of links or where it ends (by_path), or on a kernel's pseudo file
 * system (proc, sysfs, debugfs, ...): their "files" are not traces, and
 * reading one can block for ever (/proc/kmsg).  The walk never goes there;
 * a file there is read only when named, and a folder named under /proc or
 * /sys is refused (one under /dev, /dev/shm, is walked as named). */
/* Which of /proc, /sys, /dev (the first n of them) path lies under. */
static const char *under_root(const char *path, size_t n)
{
	static const char *const roots[] = { "/proc", "/sys", "/dev" };
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(roots[i]);
		if (!strncmp(path, roots[i], l) && (path[l] == '\0' || path[l] == '/'))
			return roots[i];
	}
	return NULL;
}

static const char *pseudo_fs(const char *path, int by_path, int dev)
{
	static const long magic[] = { 0x9fa0 /* proc */, 0x62656572 /* sysfs */, 0x1cd1 /* devpts */,
				      0x64626720 /* debugfs */, 0x74726163 /* tracefs */, 0x73636673 /* securityfs */,
				      0x27e0eb /* cgroup */, 0x63677270 /* cgroup2 */, 0xcafe4a11 /* bpf */,
				      0x62656570 /* configfs */, 0x6165676c /* pstore */, 0xde5e81e4 /* efivarfs */,
				      0x19800202 /* mqueue */, 0x42494e4d /* binfmt_misc */, 0x65735543 /* fusectl */ };
	size_t nroots = dev ? 3 : 2;
	const char *why = NULL;
	if (by_path) {
		/* every hop of a chain of links (/proc/self/root is a link into
		 * /proc that ends at /), then where it ends */
		char cur[4096], tgt[4096];
		if (path[0] == '/' || !getcwd(cur, sizeof(cur)) || strlen(cur) + strlen(path) + 2 > sizeof(cur))
			snprintf(cur, sizeof(cur), "%s", path);
		else
			strcat(strcat(cur, "/"), path);
		for (int hop = 0; hop < 40 && !(why = under_root(cur, nroots)); hop++) {
			ssize_t k = readlink(cur, tgt, sizeof(tgt) - 1);
			if (k <= 0)
				break; /* not a link: the chain ends */
			tgt[k] = '\0';
			char *sl = strrchr(cur, '/');
			size_t dl = tgt[0] == '/' || !sl ? 0 : (size_t)(sl - cur) + 1; /* relative: from the link's folder */
			if (dl + (size_t)k + 1 > sizeof(cur))
				break;
			memmove(cur + dl, tgt, (size_t)k + 1);
		}
		char *r = why ? NULL : realpath(path, NULL);
		if (r)
			why = under_root(r, nroots);
		free(r);
	}
	struct statfs fs;
	if (!why && statfs(path, &fs) == 0)
		for (size_t i = 0; i < sizeof(magic) / sizeof(magic[0]); i++)
			if ((long)fs.f_type == magic[i])
				why = "a kernel's pseudo file system";
	return why;
}

/* Marks a folder entered; the path of the earlier visit when it was.
 * (Linear: folders are few next to their files; the entry cap bounds it.) */
static const char *dir_seen(struct walk *w, const char *path, const struct stat *st)
{
	for (size_t i = 0; i < w->ndirs; i++)
		if (w->dirs[i].dev == st->st_dev && w->dirs[i].ino == st->st_ino)
			return w->dirs[i].path;
	GROW(w->dirs, w->capdirs, w->ndirs + 1);
	w->dirs[w->ndirs++] = (struct dir_id){ st->st_dev, st->st_ino, xstrdup(path) };
	return NULL;
}

static void skip_file(struct walk *w, const char *path, int loud, const char *why)
{
	if (loud) {
		aorta_warn("'%s': skipped, %s", path, why);
		w->l->skipped++;
	} else {
		aorta_note("'%s': skipped, %s", path, why);
		w->notes++;
	}
}

/* Sniffs one regular file of a directory; adds it or says why not. */
static void visit_file(struct walk *w, const char *path, const char *name, const struct stat *st)
{
	struct aorta_error e = { 0 };
	struct zread *z = NULL;
	const char *buf;
	size_t len;

	if (output_is_temp_name(name)) {
		skip_file(w, path, 0, "a temporary file of an interrupted aorta run (delete it)");
		return;
	}
	if (zread_open(path, &z, &e) || zread_peek(z, INGEST_SNIFF_BYTES, &buf, &len, &e)) {
		zread_close(z);
		if (e.code == AORTA_EINTERNAL) { /* out of descriptors or memory: not a skip */
			if (w->e)
				*w->e = e;
			w->fatal = 1;
			return;
		}
		skip_file(w, path, looks_like_trace(name), e.msg);
		return;
	}
	const char *own = inputs_own_output(buf, len);
	enum trace_format f = own ? FMT_UNKNOWN : ingest_sniff_buf(path, buf, len, &e);
	zread_close(z);
	if (own) {
		skip_file(w, path, 0, own);
		return;
	}
	if (f == FMT_UNKNOWN) {
		skip_file(w, path, looks_like_trace(name), e.msg);
		return;
	}
	add(w->l, path, f, st);
}

/* Lists dir (and its folders, depth first): regular files into w->found,
 * every entry counted; nothing is opened but folders. */
static void walk_dir(struct walk *w, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d) {
		int err = errno;
		if (errno_is_resource(err)) {
			aorta_fail(w->e, AORTA_EINTERNAL, dir, 0, -1, "cannot open the directory: %s "
				   "(a runtime limit: raise it, e.g. ulimit -n)", strerror(err));
			w->fatal = 1;
			return;
		}
		aorta_warn("'%s': cannot read the directory (%s), skipped", dir, strerror(err));
		w->l->skipped++;
		return;
	}
	if (depth > MAX_DEPTH) {
		aorta_warn("'%s': deeper than %d directories below the input, not read", dir, MAX_DEPTH);
		closedir(d);
		return;
	}
	while (!w->fatal && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (count_entry(w, dir))
			break;
		if (de->d_name[0] == '.') { /* hidden, and aorta's temporary files */
			if (output_is_temp_name(de->d_name))
				aorta_note("'%s/%s': skipped, a temporary file of an interrupted aorta run",
					   dir, de->d_name);
			continue;
		}
		size_t n = strlen(dir) + strlen(de->d_name) + 2;
		char *p = xmalloc(n);
		snprintf(p, n, "%s/%s", dir, de->d_name);
		struct stat st, lst;
		int link = lstat(p, &lst) == 0 && S_ISLNK(lst.st_mode);
		const char *pseudo;
		if (stat(p, &st) != 0) {
			skip_file(w, p, looks_like_trace(de->d_name), "cannot stat it (a dangling link?)");
		} else if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
			skip_file(w, p, looks_like_trace(de->d_name),
				  "not a regular file (a FIFO or device in a directory is not read; "
				  "name it to read it)");
		} else if ((pseudo = pseudo_fs(p, link || S_ISDIR(st.st_mode), 1))) {
			aorta_warn("'%s': skipped, %s%s (a folder walk does not go there; name a file there to "
				   "read it)", p, pseudo[0] == '/' ? "a link into " : "", pseudo);
			w->l->skipped++;
		} else if (S_ISDIR(st.st_mode)) {
			const char *was = dir_seen(w, p, &st);
			if (was)
				aorta_note("'%s': skipped, the folder '%s' again (a link), read once", p, was);
			else
				walk_dir(w, p, depth + 1);
		} else {
			GROW(w->found, w->capfound, w->nfound + 1);
			w->found[w->nfound++] = (struct found){ p, strlen(dir) + 1, st };
			p = NULL;
		}
		free(p);
	}
	closedir(d);
}

/* Sniffs what walk_dir listed, in its order. */
static void visit_found(struct walk *w)
{
	for (size_t i = 0; i < w->nfound; i++) {
		if (!w->fatal)
			visit_file(w, w->found[i].path, w->found[i].path + w->found[i].name, &w->found[i].st);
		free(w->found[i].path);
	}
	w->nfound = 0;
}

/* A run directory often holds one run in two forms (upstream AORTA writes
 * rank_NN_metrics.jsonl beside torch_profiler/rankN traces): the device
 * traces are read, the JSONL left, and the choice printed.  A rocprofv3
 * memory_copy_trace.csv beside its kernel_trace.csv is read with it. */
int inputs_upstream_jsonl_read;

/* A rank_*_metrics.jsonl directly in dir: what overlap_report.py globs. */
static int upstream_member(const char *dir, const char *path)
{
	size_t dl = strlen(dir);
	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	if (strncmp(path, dir, dl) || path[dl] != '/')
		return 0;
	while (path[dl] == '/')
		dl++;
	return !strchr(path + dl, '/') && up_is_metrics_name(path);
}

static void choose(const char *dir, struct input_list *l, size_t from)
{
	size_t counts[FMT_AORTA_ANALYSIS + 1] = { 0 };
	int traces = 0;

	for (size_t i = from; i < l->n; i++) {
		counts[l->v[i].format]++;
		traces |= l->v[i].format != FMT_AORTA_JSONL;
	}
	size_t m = from, dropped = 0;
	for (size_t i = from; i < l->n; i++) {
		struct input *in = &l->v[i];
		int drop = traces && in->format == FMT_AORTA_JSONL;
		if (!drop && in->format == FMT_ROCPROF_CSV && ends_with(in->path, "memory_copy_trace.csv")) {
			size_t pl = strlen(in->path) - strlen("memory_copy_trace.csv");
			for (size_t k = from; k < l->n && !drop; k++)
				drop = k != i && l->v[k].path && ends_with(l->v[k].path, "kernel_trace.csv") &&
				       strlen(l->v[k].path) == pl + strlen("kernel_trace.csv") &&
				       !strncmp(l->v[k].path, in->path, pl);
			if (drop)
				aorta_note("'%s': read with its kernel_trace.csv", in->path);
		} else if (drop && !(inputs_upstream_jsonl_read && upstream_member(dir, in->path))) {
			dropped++; /* left out indeed (report reads the others for upstream's keys) */
		}
		if (drop) {
			free(in->path);
			in->path = NULL;
		} else {
			l->v[m++] = *in;
		}
	}
	l->n = m;
	if (dropped)
		aorta_warn("'%s': %zu device trace%s read; %zu aorta metrics JSONL file%s beside them "
			   "left out (name them explicitly to analyse them)", dir, m - from,
			   m - from == 1 ? "" : "s", dropped, dropped == 1 ? "" : "s");
	int kinds = 0;
	for (int f = 1; f <= FMT_AORTA_ANALYSIS; f++)
		kinds += counts[f] > 0 && (f != FMT_AORTA_JSONL || !traces);
	if (kinds > 1) {
		char what[256] = "";
		size_t o = 0;
		for (int f = 1; f <= FMT_AORTA_ANALYSIS; f++)
			if (counts[f] && (f != FMT_AORTA_JSONL || !traces))
				o += (size_t)snprintf(what + o, o < sizeof(what) ? sizeof(what) - o : 0,
						      "%s%zu %s", o ? ", " : "", counts[f],
						      format_name((enum trace_format)f));
		aorta_note("'%s': formats mixed, reading %s", dir, what);
	}
}

static int add_named(struct walk *w, const char *in);

static int add_path(struct walk *w, const char *in)
{
	struct stat st;

	if (!strcmp(in, "-")) {
		for (size_t i = 0; i < w->l->n; i++)
			if (!strcmp(w->l->v[i].path, "-")) {
				aorta_fail(w->e, AORTA_EUSAGE, NULL, 0, -1, "'-' (standard input) named twice: "
					   "standard input can be read once");
				return -1;
			}
		add(w->l, in, FMT_UNKNOWN, NULL);
		return 0;
	}
	if (stat(in, &st) == 0) {
		const char *pseudo;
		if (S_ISDIR(st.st_mode) && (pseudo = pseudo_fs(in, 1, 0))) {
			aorta_fail(w->e, AORTA_EINPUT, in, 0, -1, "a folder %s%s is not walked (its files are not "
				   "traces, and reading some blocks); name the file to read", pseudo[0] == '/' ? "under " : "on ",
				   pseudo);
			return -1;
		}
		if (S_ISDIR(st.st_mode)) {
			size_t before = w->l->n, skipped = w->l->skipped;
			const char *was = dir_seen(w, in, &st);
			if (was) {
				aorta_warn("'%s': the folder '%s' again, read once", in, was);
				return 0;
			}
			walk_dir(w, in, 0);
			visit_found(w);
			if (w->fatal)
				return -1;
			choose(in, w->l, before);
			if (w->l->n == before) {
				aorta_fail(w->e, AORTA_EINPUT, in, 0, -1,
					   "no trace files found in the directory%s (expected Kineto JSON, "
					   "nsys SQLite, rocprofv3 or aorta JSONL files)",
					   w->l->skipped > skipped || w->notes ? "; skipped files are listed above" : "");
				return -1;
			}
		} else {
			add(w->l, in, FMT_UNKNOWN, &st); /* a file, FIFO or device: as named */
		}
		return 0;
	}
	int serr = errno;
	if (strpbrk(in, "*?[")) {
		glob_t g;
		int r = glob(in, 0, NULL, &g);
		if (r == 0) {
			for (size_t k = 0; k < g.gl_pathc; k++)
				if (count_entry(w, in) || add_named(w, g.gl_pathv[k]) < 0) {
					globfree(&g);
					return -1;
				}
			globfree(&g);
			return 0;
		}
		if (r == GLOB_NOMATCH) {
			aorta_fail(w->e, AORTA_EINPUT, in, 0, -1, "the pattern matches no file");
			return -1;
		}
	}
	if (errno_is_resource(serr)) {
		aorta_fail(w->e, AORTA_EINTERNAL, in, 0, -1, "cannot stat it: %s", strerror(serr));
		return -1;
	}
	aorta_fail(w->e, AORTA_EINPUT, in, 0, -1, "%s", serr == ENOENT ? "no such file or directory" : strerror(serr));
	return -1;
}

static int add_named(struct walk *w, const char *in)
{
	if (in[0] != '@')
		return add_path(w, in);
	/* a list file: one path per line */
	char *buf;
	size_t len;
	if (zread_whole(in + 1, 1u << 24, "a list of inputs (@FILE)", &buf, &len, w->e))
		return -1;
	char *save = NULL;
	int rc = 0;
	for (char *ln = strtok_r(buf, "\r\n", &save); ln && !rc; ln = strtok_r(NULL, "\r\n", &save)) {
		while (isspace((unsigned char)*ln))
			ln++;
		size_t k = strlen(ln);
		while (k && isspace((unsigned char)ln[k - 1]))
			ln[--k] = '\0';
		if (*ln == '@') {
			aorta_fail(w->e, AORTA_EUSAGE, in + 1, 0, -1, "a list of inputs names another list "
				   "('%s'): lists do not nest; name it on the command line", ln);
			rc = -1;
		} else if (*ln && *ln != '#') {
			rc = count_entry(w, in + 1) ? -1 : add_path(w, ln);
		}
	}
	free(buf);
	return rc;
}

/* One file under two names (a link, a folder and its member both named):
 * read once, under a name that is not a link where there is one.  The list
 * is sorted by path, so the choice does not depend on the walk's order. */
static void dedupe(struct input_list *l)
{
	size_t m = 0;

	for (size_t i = 0; i < l->n; i++) {
		struct input *in = &l->v[i];
		size_t k = 0;
		for (; in->have_id && k < m; k++)
			if (l->v[k].have_id && l->v[k].dev == in->dev && l->v[k].ino == in->ino)
				break;
		if (!in->have_id || k == m) {
			l->v[m++] = *in;
			continue;
		}
		struct input *kept = &l->v[k];
		if (kept->is_link && !in->is_link) { /* keep the real name */
			struct input t = *kept;
			*kept = *in;
			*in = t;
		}
		if (!strcmp(in->path, kept->path))
			aorta_warn("'%s': named twice (a folder and its member?), read once", in->path);
		else
			aorta_warn("'%s': the same file as '%s' (a link, or named twice), read once",
				   in->path, kept->path);
		free(in->path);
	}
	l->n = m;
}

static void walk_release(struct walk *w)
{
	for (size_t i = 0; i < w->ndirs; i++)
		free(w->dirs[i].path);
	free(w->dirs);
	for (size_t i = 0; i < w->nfound; i++)
		free(w->found[i].path);
	free(w->found);
}

enum aorta_status inputs_expand(char *const *args, size_t n, int strict,
				struct input_list *out, struct aorta_error *e)
{
	struct walk w = { .l = out, .strict = strict, .e = e };

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++)
		if (add_named(&w, args[i]) < 0)
			goto fail;
	if (strict && out->skipped) {
		aorta_fail(e, AORTA_EINPUT, NULL, 0, -1,
			   "%zu file%s skipped (listed above) and --strict given", out->skipped,
			   out->skipped == 1 ? "" : "s");
		goto fail;
	}
	if (!out->n) { /* an empty @LIST */
		aorta_fail(e, AORTA_EINPUT, n == 1 ? args[0] : NULL, 0, -1, "no input files to read");
		goto fail;
	}
	qsort(out->v, out->n, sizeof(*out->v), cmp_input);
	dedupe(out);
	qsort(out->v, out->n, sizeof(*out->v), cmp_input);
	for (size_t i = 0; i < out->n; i++)
		if (out_guard_input(out->v[i].path, e))
			goto fail;
	walk_release(&w);
	return AORTA_OK;
fail:
	walk_release(&w);
	inputs_release(out);
	return e && e->code ? e->code : AORTA_EINPUT;
}

void inputs_release(struct input_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int to_rank(const char *q)
{
	long v = strtol(q, NULL, 10);
	return v >= 0 && v < (1L << 24) ? (int)v : -1;
}

int rank_from_name(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (const char *p = base; (p = strcasestr(p, "rank")); p += 4) {
		const char *q = p + 4;
		while (*q == '_' || *q == '-' || *q == '.')
			q++;
		if (isdigit((unsigned char)*q))
			return to_rank(q);
	}
	/* a parent directory named rankN (torch_profiler/rank3/trace.json) */
	for (const char *p = path; p < base && (p = strcasestr(p, "rank")); p += 4) {
		const char *q = p + 4;
		if (q < base && isdigit((unsigned char)*q))
			return to_rank(q);
	}
	return -1;
}

/*
 * analyze_mpi.c - `aorta analyze` under mpirun / srun: the MPI plug-in
 * (build/libaorta-mpi.so), loaded by the command only when an MPI launcher
 * started it, so build/aorta links no MPI.
 *
 * Design.  Reading traces and the per-rank engine are independent per rank;
 * only the join (matching collectives across ranks, clocks, waiting, the
 * verdict) needs every rank, and it needs only each rank's summary and its
 * per-call collective table.  So:
 *  1. every process expands the inputs (the same rule as one process);
 *  2. the files are shared out: when every process sees the same list (a
 *     shared file system) by size, largest first onto the least loaded
 *     process; when the lists differ (each node's local disk) each node's
 *     processes share that node's files;
 *  3. each process runs the per-rank pass on its share
 *     (analysis_read_files, its own threads) and packs its ranks
 *     (analysis_io/analysis_io.h: summaries and collective tables, no timelines);
 *  4. process 0 gathers the bytes, unpacks them, orders the ranks as one
 *     process does, runs the join (analysis_finish) and writes every output.
 * The result is the same analysis, byte for byte, as one process reading
 * the same files (tests/cli/mpi_analyze.sh).  Memory per process follows its
 * own share of the files; the join's follows ranks x collectives.
 * A read error on any process ends the job on every process with the error
 * of the lowest process that had one, which process 0 prints itself before
 * MPI_Finalize (*is_root is then 0 everywhere: nothing is left to report;
 * otherwise *is_root is 1 on process 0 alone).  --trace-out needs every rank's
 * timeline in one process and is refused under MPI.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpi.h>

#include "base/plugin.h"
#include "base/error.h"
#include "analysis_io/analysis_io.h"
#include "flightrec/fr.h"
#include "pipeline/pipeline.h"

AORTA_PLUGIN_ID(mpi); /* the handshake (base/plugin.h) */

enum aorta_status aorta_mpi_analysis_run(char *const *inputs, size_t n, const struct analysis_opts *o,
					 struct analysis *a, int *is_root, struct aorta_error *e);

/* libaorta-mpi.so and with it libmpi were loaded RTLD_LOCAL: make libmpi's
 * symbols global so Open MPI's own plug-ins resolve them. */
static void promote_global(void)
{
	union {
		int (*f)(int *, char ***);
		void *p;
	} u = { MPI_Init };
	Dl_info di;
	if (dladdr(u.p, &di) && di.dli_fname)
		(void)dlopen(di.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
}

static uint64_t hash_list(char **f, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		for (const char *p = f[i]; ; p++) {
			h = (h ^ (unsigned char)*p) * 1099511628211ull;
			if (!*p)
				break;
		}
	return h ^ n;
}

struct item { long long size; size_t idx; };

static int cmp_item(const void *x, const void *y)
{
	const struct item *a = x, *b = y;
	if (a->size != b->size)
		return a->size < b->size ? 1 : -1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

/* This process's share of files[0..n): by size, largest first onto the
 * least-loaded of np processes (ties to the lowest); who = my index. */
static char **share(char **files, size_t n, int who, int np, size_t *nmine)
{
	struct item *it = xcalloc(n ? n : 1, sizeof(*it));
	long long *load = xcalloc((size_t)np, sizeof(*load));
	int *owner = xcalloc(n ? n : 1, sizeof(*owner));
	for (size_t i = 0; i < n; i++) {
		struct stat sb;
		it[i].size = stat(files[i], &sb) == 0 ? (long long)sb.st_size : 0;
		it[i].idx = i;
	}
	qsort(it, n, sizeof(*it), cmp_item);
	for (size_t k = 0; k < n; k++) {
		int best = 0;
		for (int p = 1; p < np; p++)
			if (load[p] < load[best])
				best = p;
		load[best] += it[k].size + 1;
		owner[it[k].idx] = best;
	}
	char **mine = xcalloc(n ? n : 1, sizeof(*mine));
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (owner[i] == who)
			mine[m++] = files[i];
	free(it);
	free(load);
	free(owner);
	*nmine = m;
	return mine;
}

static enum aorta_status mpi_err(struct aorta_error *e, int rc, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;
	if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
		snprintf(msg, sizeof(msg), "error %d", rc);
	return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "MPI: %s: %s", what, msg);
}

enum aorta_status aorta_mpi_analysis_run(char *const *inputs, size_t n, const struct analysis_opts *o,
					 struct analysis *a, int *is_root, struct aorta_error *e)
{
	int inited = 0, own = 0, me = 0, np = 1, rc, prov;
	enum aorta_status st = AORTA_OK;
	char **files = NULL, **mine = NULL;
	size_t nfiles = 0, nmine = 0;
	struct rank_result *res = NULL;
	size_t nres = 0;
	struct fr_run *fr = NULL;
	struct bytes b = { 0 };
	struct aorta_error mye = { 0 };

	memset(a, 0, sizeof(*a));
	a->opts = *o;
	a->late_rank = -1;
	*is_root = 1;
	if (o->keep_traces)
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1,
				  "--trace-out needs every rank's timeline in one process: run it without mpirun/srun");
	promote_global();
	MPI_Initialized(&inited);
	if (!inited) {
		if ((rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &prov)) != MPI_SUCCESS)
			return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "MPI_Init_thread failed (error %d)", rc);
		own = 1;
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	*is_root = me == 0;
	if (me != 0)
		aorta_quiet = 1; /* one process prints progress and notes */

	/* 1-2: inputs and this process's share */
	st = analysis_expand(inputs, n, &files, &nfiles, &mye);
	int bad = st != AORTA_OK, anybad = 0;
	MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (!anybad) {
		uint64_t h = hash_list(files, nfiles), hmin = 0, hmax = 0;
		MPI_Allreduce(&h, &hmin, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
		MPI_Allreduce(&h, &hmax, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
		if (hmin == hmax) {
			mine = share(files, nfiles, me, np, &nmine);
		} else { /* per-node files: the node's processes share them */
			MPI_Comm node;
			int lme = 0, lnp = 1;
			if ((rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node))) {
				st = mpi_err(&mye, rc, "MPI_Comm_split_type");
			} else {
				MPI_Comm_rank(node, &lme);
				MPI_Comm_size(node, &lnp);
				MPI_Comm_free(&node);
				mine = share(files, nfiles, lme, lnp, &nmine);
				if (me == 0)
					aorta_note("the processes see different input files: each node reads its own");
			}
		}
		/* 3: the per-rank pass on this share */
		if (!st && nmine)
			st = analysis_read_files(mine, nmine, o, &res, &nres, &fr, &mye);
	}

	/* the first failing process's error ends the job everywhere */
	int mark = st || bad ? me : INT_MAX, lowest = INT_MAX;
	MPI_Allreduce(&mark, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (lowest != INT_MAX) {
		if (lowest != 0) { /* bring that process's error to process 0 */
			if (me == lowest)
				MPI_Send(&mye, (int)sizeof(mye), MPI_BYTE, 0, 77, MPI_COMM_WORLD);
			else if (me == 0)
				MPI_Recv(&mye, (int)sizeof(mye), MPI_BYTE, lowest, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		if (e)
			*e = mye;
		st = mye.code ? mye.code : AORTA_EINPUT;
		/* process 0 says it now, before MPI_Finalize: the other processes'
		 * non-zero exits make mpirun end the job at once, which cut process
		 * 0 off before its caller printed (1 run in 5 lost the message);
		 * then no process has anything left to report */
		if (me == 0)
			aorta_error_print(&mye);
		*is_root = 0;
		goto out;
	}

	/* 4: gather the packed ranks on process 0 */
	for (size_t i = 0; i < nres; i++)
		rank_pack(&res[i], &b);
	for (size_t i = 0; fr && i < fr->n; i++) /* Flight Recorder dumps travel parsed */
		fr_dump_pack(fr->d[i], &b);
	long long mylen = (long long)b.n;
	long long *lens = me == 0 ? xcalloc((size_t)np, sizeof(*lens)) : NULL;
	if ((rc = MPI_Gather(&mylen, 1, MPI_LONG_LONG, lens, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD))) {
		st = mpi_err(e, rc, "MPI_Gather (sizes)");
		free(lens);
		goto out;
	}
	int *cnt = NULL, *disp = NULL;
	char *all = NULL;
	long long total = 0;
	int too_big = 0;
	if (me == 0) {
		cnt = xcalloc((size_t)np, sizeof(*cnt));
		disp = xcalloc((size_t)np, sizeof(*disp));
		for (int p = 0; p < np; p++) {
			if (lens[p] > INT_MAX || total > INT_MAX - lens[p])
				too_big = 1;
			cnt[p] = (int)lens[p];
			disp[p] = (int)total;
			total += lens[p];
		}
		all = xmalloc(total && !too_big ? (size_t)total : 1);
	}
	MPI_Bcast(&too_big, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (too_big) {
		st = aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1,
				"the ranks' summaries exceed 2 GiB in one gather; run with more processes per file set");
	} else if ((rc = MPI_Gatherv(b.p, (int)b.n, MPI_BYTE, all, cnt, disp, MPI_BYTE, 0, MPI_COMM_WORLD))) {
		st = mpi_err(e, rc, "MPI_Gatherv (ranks)");
	} else if (me == 0) {
		size_t cap = 0, off = 0;
		while (off < (size_t)total) {
			if (fr_pack_is_dump(all, (size_t)total, off)) {
				struct fr_dump *d;
				if ((st = fr_dump_unpack(all, (size_t)total, &off, &d, e)))
					break;
				if (!a->fr)
					a->fr = xcalloc(1, sizeof(*a->fr));
				fr_run_add(a->fr, d);
				continue;
			}
			GROW(a->r, cap, a->n + 1);
			if ((st = rank_unpack(all, (size_t)total, &off, &a->r[a->n], e))) {
				a->n++;
				break;
			}
			a->n++;
		}
		if (!st) {
			qsort(a->r, a->n, sizeof(*a->r), cmp_path_device);
			a->inputs = files;
			a->ninputs = nfiles;
			files = NULL;
			analysis_finish(a);
			st = analysis_finish_fr(a, e);
			if (!st)
				st = analysis_check_gaps(a, e);
		}
	}
	free(lens);
	free(cnt);
	free(disp);
	free(all);
out:
	{
		struct analysis tmp = { 0 };
		tmp.r = res;
		tmp.n = nres;
		tmp.fr = fr;
		analysis_free(&tmp); /* frees res and its arrays, and the dumps sent */
	}
	if (files) {
		for (size_t i = 0; i < nfiles; i++)
			free(files[i]);
		free(files);
	}
	free(mine);
	free(b.p);
	if (own)
		MPI_Finalize();
	return st;
}

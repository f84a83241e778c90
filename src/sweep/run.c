/*
 * run.c - running a sweep: every trial of every cell as a child process,
 * analysed by the one engine, recorded whatever happens.
 *
 * Order.  Trials go round-robin (trial 1 of every cell, then trial 2, ...)
 * so a slow drift of the machine spreads over all cells instead of landing
 * on the last ones; the baseline is re-run once at the end (the confound
 * check, rank.c).
 *
 * A trial.  The child gets its own process group, the caller's environment
 * plus the recipe's env:, its environment's variables, the cell's axis
 * variables and AORTA_SWEEP_OUT/CELL/TRIAL/DIR; stdin is /dev/null and
 * stdout+stderr go to the trial's log.txt.  The workload is `aorta train`
 * (this binary) with the cell's overrides and training.output_dir = the
 * trial's out/ folder, or the recipe's command with {out}, {cell},
 * {trial} and {AXIS} substituted.  The parent polls waitpid; past the
 * timeout it sends SIGTERM to the whole group, then SIGKILL 5 s later, and
 * records a timeout.  An exit status other than 0 is a failure; death by a
 * signal (or a shell's exit status 128+SIGSEGV/SIGABRT/SIGBUS/SIGFPE/
 * SIGILL) is a crash; an exit 0 whose output the engine cannot read is
 * no_data.  Then the output folder is analysed (analysis_run) and the
 * trial's figures written to result.json (temp-then-rename).
 *
 * Ctrl-C (SIGINT) or SIGTERM: the running trial's group is stopped and the
 * trial left unrecorded, matrix.json/.md are written from what finished,
 * and the command exits 130; --resume runs only the trials without a
 * result.json.  Overhead per trial = (analysis + writing result.json +
 * starting the child) / the child's run time, in matrix.json.
 */
#include "sweep/envsnap.h"
#include "sweep/results.h"
#include "sweep/run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/output.h"
#include "pipeline/pipeline.h"
#include "overlap/diagnosis.h"
#include "overlap/figures.h"
#include "timeline/timeline.h"

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	g_stop = sig;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int mkdir_p(const char *path)
{
	char buf[4200];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0777) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

static int rm_rf(const char *path)
{
	pid_t pid = fork();
	if (pid == 0) {
		execlp("rm", "rm", "-rf", "--", path, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	pid_t w;
	if (pid < 0)
		return -1;
	while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	if (w < 0)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* ---- what a trial runs ---------------------------------------------------------------- */

struct kv {
	char **k, **v;
	size_t n;
};

static void kv_set(struct kv *e, const char *k, const char *v)
{
	for (size_t i = 0; i < e->n; i++)
		if (!strcmp(e->k[i], k)) {
			free(e->v[i]);
			e->v[i] = xstrdup(v);
			return;
		}
	e->k = xrealloc(e->k, (e->n + 1) * sizeof(char *));
	e->v = xrealloc(e->v, (e->n + 1) * sizeof(char *));
	e->k[e->n] = xstrdup(k);
	e->v[e->n++] = xstrdup(v);
}

static void kv_free(struct kv *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->k[i]);
		free(e->v[i]);
	}
	free(e->k);
	free(e->v);
	memset(e, 0, sizeof(*e));
}

/* The variables of a cell (or, with c NULL, of environment en only). */
static void cell_env(const struct recipe *r, const struct sweep_cell *c, const char *en, struct kv *e)
{
	for (size_t i = 0; i < r->nenv; i++)
		kv_set(e, r->env_k[i], r->env_v[i]);
	if (c)
		en = recipe_cell_environment(r, c);
	for (size_t i = 0; en && i < r->nenvs; i++)
		if (!strcmp(r->envs[i].name, en))
			for (size_t k = 0; k < r->envs[i].n; k++)
				kv_set(e, r->envs[i].keys[k], r->envs[i].vals[k]);
	for (size_t i = 0; c && i < r->naxes; i++)
		if (r->axes[i].kind == AX_ENV)
			for (size_t t = 0; t < r->axes[i].ntargets; t++)
				kv_set(e, r->axes[i].targets[t], r->axes[i].values[c->vi[i]]);
}

static const char *self_exe(void)
{
	static char exe[PATH_MAX + 1];
	if (!exe[0]) {
		ssize_t n = readlink("/proc/self/exe", exe, PATH_MAX);
		if (n <= 0)
			snprintf(exe, sizeof(exe), "aorta");
		else
			exe[n] = '\0';
	}
	return exe;
}

struct argvec {
	char **v;
	size_t n;
};

static void av_push(struct argvec *a, char *owned)
{
	a->v = xrealloc(a->v, (a->n + 2) * sizeof(char *));
	a->v[a->n++] = owned;
	a->v[a->n] = NULL;
}

static void av_free(struct argvec *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

static void cell_argv(const struct recipe *r, const struct sweep_cell *c, const char *out, const char *trial,
		      struct argvec *a)
{
	if (r->ncommand) {
		/* `sh -c SCRIPT`: the values go into shell code, quoted */
		const char *b = strrchr(r->command[0], '/');
		b = b ? b + 1 : r->command[0];
		int shell = r->ncommand >= 3 && !strcmp(r->command[1], "-c") &&
			    (!strcmp(b, "sh") || !strcmp(b, "bash") || !strcmp(b, "dash") || !strcmp(b, "zsh") ||
			     !strcmp(b, "ksh"));
		for (size_t i = 0; i < r->ncommand; i++)
			av_push(a, shell && i == 2 ? recipe_subst_sh(r, c, r->command[i], out, trial)
						   : recipe_subst(r, c, r->command[i], out, trial));
		return;
	}
	av_push(a, xstrdup(self_exe()));
	av_push(a, xstrdup("train"));
	av_push(a, xstrdup("-q"));
	if (r->train_config) {
		av_push(a, xstrdup("--config"));
		av_push(a, xstrdup(r->train_config));
	}
	for (size_t i = 0; i < r->ntrain_args; i++)
		av_push(a, recipe_subst(r, c, r->train_args[i], out, trial));
	char **owned = NULL;
	size_t nowned = 0, n;
	const char **ov = recipe_cell_overrides(r, c, &n, &owned, &nowned);
	for (size_t i = 0; i < n; i++) {
		av_push(a, xstrdup("--override"));
		av_push(a, xstrdup(ov[i]));
	}
	free(ov);
	for (size_t i = 0; i < nowned; i++)
		free(owned[i]);
	free(owned);
	size_t len = strlen(out) + 32;
	char *kv = xmalloc(len);
	snprintf(kv, len, "training.output_dir=%s", out);
	av_push(a, xstrdup("--override"));
	av_push(a, kv);
}

/* ---- a child under a timeout ---------------------------------------------------------------- */

struct outcome {
	enum trial_status status;
	int exit_code, signal, interrupted;
	double start, end;
	char error[512];
};

static int is_crash_signal(int s)
{
	return s == SIGSEGV || s == SIGABRT || s == SIGBUS || s == SIGFPE || s == SIGILL;
}

static void stop_group(pid_t pid, int *st)
{
	kill(-pid, SIGTERM);
	double t = now_s();
	while (now_s() - t < 5.0) {
		if (waitpid(pid, st, WNOHANG) == pid)
			goto reaped;
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	kill(-pid, SIGKILL);
	while (waitpid(pid, st, 0) < 0 && errno == EINTR)
		;
reaped:
	kill(-pid, SIGKILL); /* anything the workload left behind in its group */
}

static void spawn(char *const *argv, const struct kv *env, const char *log, double timeout_s, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	o->start = now_s();
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		o->end = now_s();
		o->status = TR_FAILED;
		snprintf(o->error, sizeof(o->error), "cannot start a process: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGXFSZ, SIG_DFL); /* aorta's own choice (output.h), not the workload's */
		for (size_t i = 0; i < env->n; i++)
			setenv(env->k[i], env->v[i], 1);
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		int in = open("/dev/null", O_RDONLY);
		if (fd < 0 || in < 0)
			_exit(126);
		dup2(in, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
		close(in);
		execvp(argv[0], argv);
		fprintf(stderr, "aorta sweep: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	int st = 0, polls = 0;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			snprintf(o->error, sizeof(o->error), "lost the child process: %s", strerror(errno));
			o->status = TR_FAILED;
			o->end = now_s();
			return;
		}
		if (g_stop) {
			stop_group(pid, &st);
			o->interrupted = 1;
			o->end = now_s();
			return;
		}
		if (now_s() - o->start > timeout_s) {
			stop_group(pid, &st);
			o->end = now_s();
			o->status = TR_TIMEOUT;
			snprintf(o->error, sizeof(o->error), "still running after %.1f s: its process group was killed",
				 timeout_s);
			return;
		}
		struct timespec ts = { 0, (polls++ < 200 ? 1 : 10) * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	o->end = now_s();
	kill(-pid, SIGKILL);
	if (WIFSIGNALED(st)) {
		o->signal = WTERMSIG(st);
		o->status = TR_CRASHED;
		snprintf(o->error, sizeof(o->error), "killed by signal %d (%s)", o->signal, strsignal(o->signal));
	} else if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
		o->exit_code = WEXITSTATUS(st);
		if (o->exit_code > 128 && is_crash_signal(o->exit_code - 128)) {
			o->status = TR_CRASHED;
			o->signal = o->exit_code - 128;
			snprintf(o->error, sizeof(o->error), "exit status %d: a process died of signal %d (%s)",
				 o->exit_code, o->signal, strsignal(o->signal));
		} else {
			o->status = TR_FAILED;
			snprintf(o->error, sizeof(o->error), "exit status %d%s", o->exit_code,
				 o->exit_code == 127 ? " (command not found?)" : "");
		}
	} else {
		o->status = TR_OK;
	}
}

/* ---- the engine's figures of one trial -------------------------------------------------------- */

static int cmp_coll(const void *a, const void *b)
{
	const struct trial_coll *x = a, *y = b;
	int c = strcmp(x->type, y->type);
	return c ? c : x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

static void figures(const struct analysis *a, int skip, struct trial *t)
{
	double comm = 0, exposed = 0, gemm = 0, idle = 0;
	int64_t ov_ns = 0, comm_ns = 0;
	size_t nr = 0, minsteps = SIZE_MAX;
	for (size_t i = 0; i < a->n; i++) {
		const struct rank_result *r = &a->r[i];
		struct stat4 w = steps_stat(r, skip, offsetof(struct ov_figures, window_ns));
		if (!w.n)
			continue;
		nr++;
		minsteps = w.n < minsteps ? w.n : minsteps;
		comm += steps_stat(r, skip, offsetof(struct ov_figures, comm_ns)).p50;
		exposed += steps_stat(r, skip, offsetof(struct ov_figures, exposed_comm_ns)).p50;
		gemm += steps_stat(r, skip, offsetof(struct ov_figures, gemm_ns)).p50;
		idle += steps_stat(r, skip, offsetof(struct ov_figures, idle_ns)).p50;
		ov_ns += r->steps_sum.overlap_ns;
		comm_ns += r->steps_sum.comm_ns;
	}
	if (!nr) { /* no step in any rank: the whole trace is one step */
		for (size_t i = 0; i < a->n; i++) {
			const struct ov_figures *f = &a->r[i].total;
			nr++;
			comm += (double)f->comm_ns;
			exposed += (double)f->exposed_comm_ns;
			gemm += (double)f->gemm_ns;
			idle += (double)f->idle_ns;
			ov_ns += f->overlap_ns;
			comm_ns += f->comm_ns;
		}
		minsteps = 0;
	}
	t->ranks = (int)a->n;
	t->steps = minsteps == SIZE_MAX ? 0 : (int)minsteps;
	double k = nr ? 1e-6 / (double)nr : NAN;
	/* the step as every command states it (analysis_job_step): the mean over
	 * ranks of each rank's mean kept step, what analyze's summary prints */
	t->step_ms = analysis_job_step(a).mean_ms;
	t->comm_ms = comm * k;
	t->exposed_ms = exposed * k;
	t->gemm_ms = gemm * k;
	t->idle_ms = idle * k;
	t->overlap_pct = comm_ns > 0 ? 100.0 * (double)ov_ns / (double)comm_ns : NAN;
	struct diagnosis d;
	analysis_diagnose(a, &d);
	snprintf(t->diag, sizeof(t->diag), "%s", diag_kind_name(d.kind));
	snprintf(t->headline, sizeof(t->headline), "%s", d.headline);
	t->late_rank = d.has_cross_rank && d.wait_ns > 0 ? d.late_rank : -1; /* no waiting: nobody is late */
	double per = d.steps ? 1e-6 / (double)d.steps : NAN;
	t->wait_ms = d.has_cross_rank ? (double)d.wait_ns * per : NAN;
	t->transfer_ms = d.has_cross_rank ? (double)d.transfer_ns * per : NAN;
	/* bandwidth per (collective, size), as the join defines it: from the
	 * transfer time of the matched calls (busbw_gbps) and over the kernel
	 * time (busbw_kernel_gbps), each under its own name (overlap/figures.h) */
	struct trial_coll *v = NULL;
	struct coll_bw *bw = NULL;
	size_t n = 0;
	for (size_t i = 0; i < a->n; i++)
		for (size_t q = 0; q < a->r[i].ncolls; q++) {
			const struct coll_row *c = &a->r[i].colls[q];
			if (!c->bytes || !c->count)
				continue;
			const char *ty = coll_type_name((enum coll_type)c->type);
			size_t j;
			for (j = 0; j < n; j++)
				if (!strcmp(v[j].type, ty) && v[j].bytes == c->bytes)
					break;
			if (j == n) {
				v = xrealloc(v, (n + 1) * sizeof(*v));
				bw = xrealloc(bw, (n + 1) * sizeof(*bw));
				memset(&v[n], 0, sizeof(v[n]));
				memset(&bw[n], 0, sizeof(bw[n]));
				snprintf(v[n].type, sizeof(v[n].type), "%s", ty);
				v[n].bytes = c->bytes;
				n++;
			}
			v[j].count += c->count;
			v[j].total_ms += (double)c->total_ns * 1e-6;
			coll_bw_add(&bw[j], c);
		}
	for (size_t j = 0; j < n; j++) {
		v[j].busbw_gbps = coll_bw_busbw_gbps(&bw[j]);
		v[j].busbw_kernel_gbps = coll_bw_busbw_kernel_gbps(&bw[j]);
	}
	free(bw);
	qsort(v, n, sizeof(*v), cmp_coll);
	t->colls = v;
	t->ncolls = n;
}

/* ---- the sweep ------------------------------------------------------------------------------ */

static void print_plan(const struct sweep *s, FILE *f)
{
	const struct recipe *r = &s->r;
	fprintf(f, "sweep '%s': %zu cells x %d trials = %zu runs%s, timeout %.0f s each\n", r->name, r->ncells,
		r->trials, r->ncells * (size_t)r->trials, r->confound ? " + 1 confound re-run of the baseline" : "",
		r->timeout_s);
	fprintf(f, "workload: %s; analysed: %s (warm-up steps left out: %d)\n",
		r->ncommand ? "a command" : "aorta train", r->traces, r->skip_steps);
	for (size_t c = 0; c < r->ncells; c++) {
		const struct sweep_cell *cl = &r->cells[c];
		fprintf(f, "%s  %s%s\n", cl->id, cl->key, c == r->baseline ? "   [baseline]" : "");
		struct kv e = { 0 };
		cell_env(r, cl, NULL, &e);
		if (e.n) {
			fputs("     env:", f);
			for (size_t i = 0; i < e.n; i++)
				fprintf(f, " %s=%s", e.k[i], e.v[i]);
			fputc('\n', f);
		}
		kv_free(&e);
		struct argvec a = { 0 };
		char out[4300];
		snprintf(out, sizeof(out), "%s/cells/%s/t1/out", s->dir, cl->id);
		cell_argv(r, cl, out, "1", &a);
		fputs("     run:", f);
		for (size_t i = 0; i < a.n; i++)
			fprintf(f, " %s", a.v[i]);
		fputc('\n', f);
		av_free(&a);
	}
}

/* Runs one trial (k: 1..trials, 0: the confound) and fills t. */
static int run_trial(struct sweep *s, size_t c, int k, struct trial *t, struct aorta_error *e)
{
	const struct recipe *r = &s->r;
	const struct sweep_cell *cl = &r->cells[c];
	double t0 = now_s();
	char tdir[4300], out[4400], log[4400], res[4400], trial[16];
	if (k)
		snprintf(tdir, sizeof(tdir), "%s/cells/%s/t%d", s->dir, cl->id, k);
	else
		snprintf(tdir, sizeof(tdir), "%s/cells/%s/confound", s->dir, cl->id);
	snprintf(trial, sizeof(trial), k ? "%d" : "confound", k);
	snprintf(out, sizeof(out), "%s/out", tdir);
	snprintf(log, sizeof(log), "%s/log.txt", tdir);
	snprintf(res, sizeof(res), "%s/result.json", tdir);
	if (rm_rf(tdir) != 0 || mkdir_p(out) != 0)
		return aorta_fail(e, AORTA_EINTERNAL, tdir, 0, -1, "cannot make the trial folder: %s", strerror(errno));
	struct kv env = { 0 };
	cell_env(r, cl, NULL, &env);
	kv_set(&env, "AORTA_SWEEP_OUT", out);
	kv_set(&env, "AORTA_SWEEP_DIR", tdir);
	kv_set(&env, "AORTA_SWEEP_CELL", cl->id);
	kv_set(&env, "AORTA_SWEEP_TRIAL", trial);
	struct argvec a = { 0 };
	cell_argv(r, cl, out, trial, &a);
	struct outcome o;
	spawn(a.v, &env, log, r->timeout_s, &o);
	av_free(&a);
	kv_free(&env);
	if (o.interrupted)
		return 130;
	memset(t, 0, sizeof(*t));
	t->trial = k;
	t->status = o.status;
	t->exit_code = o.exit_code;
	t->signal = o.signal;
	t->late_rank = -1;
	snprintf(t->error, sizeof(t->error), "%s", o.error);
	t->run_s = o.end - o.start;
	double a0 = now_s();
	t->step_ms = t->comm_ms = t->exposed_ms = t->overlap_pct = t->wait_ms = t->transfer_ms =
		t->gemm_ms = t->idle_ms = NAN;
	if (t->status == TR_OK) {
		char *tp = recipe_subst(r, cl, r->traces, out, trial);
		struct analysis an;
		struct aorta_error ae = { 0 };
		struct analysis_opts ao = ANALYSIS_OPTS_INIT;
		ao.skip_steps = r->skip_steps;
		memset(&an, 0, sizeof(an));
		int q = aorta_quiet;
		aorta_quiet = 1; /* the engine's per-file progress lines */
		enum aorta_status ast = analysis_run(&tp, 1, &ao, &an, &ae);
		aorta_quiet = q;
		if (ast != AORTA_OK) {
			t->status = TR_NODATA;
			snprintf(t->error, sizeof(t->error), "the workload exited 0 but its output cannot be analysed: %.200s%s%.240s",
				 ae.path[0] ? ae.path : "", ae.path[0] ? ": " : "", ae.msg);
		} else {
			char why[256]; /* a skip that leaves some rank no step skips nothing, as in every command */
			if (analysis_adapt_skip(&an, why, sizeof(why)))
				aorta_warn("cell %s trial %s: %s", cl->id, trial, why);
			figures(&an, an.opts.skip_steps, t);
			analysis_free(&an);
			if (!isfinite(t->step_ms) || t->step_ms <= 0) {
				t->status = TR_NODATA;
				snprintf(t->error, sizeof(t->error), "no GPU activity in '%s'", tp);
			}
		}
		free(tp);
	}
	double a1 = now_s();
	t->analysis_s = a1 - a0;
	t->bookkeeping_s = (o.start - t0) + (a0 - o.end);
	t->overhead_pct = t->run_s > 0 ? 100.0 * (t->analysis_s + t->bookkeeping_s) / t->run_s : NAN;
	if (trial_write(res, t, e))
		return e->code;
	/* the write itself is bookkeeping too: measured, and kept in the file */
	double a2 = now_s();
	t->bookkeeping_s += a2 - a1;
	t->overhead_pct = t->run_s > 0 ? 100.0 * (t->analysis_s + t->bookkeeping_s) / t->run_s : NAN;
	if (trial_write(res, t, e))
		return e->code;
	return 0;
}

static int same_cells(const struct recipe *a, const struct recipe *b)
{
	if (a->ncells != b->ncells)
		return 0;
	for (size_t i = 0; i < a->ncells; i++)
		if (strcmp(a->cells[i].key, b->cells[i].key))
			return 0;
	return 1;
}

static void snapshot_envs(struct sweep *s)
{
	const struct recipe *r = &s->r;
	size_t n = r->nenvs ? r->nenvs : 1;
	for (size_t i = 0; i < n; i++) {
		const char *name = r->nenvs ? r->envs[i].name : "default";
		char path[4400], log[4400];
		snprintf(path, sizeof(path), "%s/env/%s.json", s->dir, name);
		snprintf(log, sizeof(log), "%s/env/%s.log", s->dir, name);
		if (access(path, F_OK) == 0)
			continue;
		struct kv env = { 0 };
		cell_env(r, NULL, r->nenvs ? name : NULL, &env);
		char *argv[] = { (char *)self_exe(), (char *)"env", (char *)"--json", path, NULL };
		struct outcome o;
		spawn(argv, &env, log, 60, &o);
		kv_free(&env);
		if (o.interrupted)
			return;
		if (o.status != TR_OK)
			aorta_warn("environment snapshot of '%s' failed (%s); see '%s'", name, o.error, log);
	}
}

/* The sweep's folder: a new or empty one, or with --resume the folder of
 * this recipe's cells; its subfolders and the resolved recipe written. */
static enum aorta_status prepare_dir(struct sweep *s, const struct sweep_run_opts *opt, struct aorta_error *e)
{
	struct recipe *r = &s->r;
	char path[4400];
	struct stat sb;
	snprintf(path, sizeof(path), "%s/recipe.resolved.yaml", s->dir);
	int exists = stat(path, &sb) == 0;
	if (exists && !opt->resume)
		return aorta_fail(e, AORTA_EUSAGE, s->dir, 0, -1,
				  "already holds a sweep: --resume continues it, or choose another -o");
	if (exists) {
		struct recipe old;
		if (recipe_load(path, NULL, 0, 0, 0, &old, e))
			return e->code;
		int same = same_cells(&old, r);
		recipe_free(&old);
		out_guard_forget(path); /* the sweep's own state, checked: written again below */
		if (!same)
			return aorta_fail(e, AORTA_EUSAGE, s->dir, 0, -1,
					  "--resume: the recipe's cells differ from the sweep in this folder");
	} else if (stat(s->dir, &sb) == 0) {
		/* a folder that exists must be empty */
		DIR *d = opendir(s->dir);
		struct dirent *de;
		int empty = 1;
		while (d && (de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				empty = 0;
		if (d)
			closedir(d);
		if (!d || !empty)
			return aorta_fail(e, AORTA_EUSAGE, s->dir, 0, -1, "exists, is not empty and is not a sweep folder");
	}
	snprintf(path, sizeof(path), "%s/cells", s->dir);
	if (mkdir_p(path) != 0)
		return aorta_fail(e, AORTA_EINTERNAL, path, 0, -1, "cannot make the folder: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/env", s->dir);
	if (mkdir_p(path) != 0)
		return aorta_fail(e, AORTA_EINTERNAL, path, 0, -1, "cannot make the folder: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/recipe.resolved.yaml", s->dir);
	struct outfile of;
	if (out_open(&of, path, e))
		return e->code;
	if (recipe_write_resolved(of.f, r) != 0) {
		out_abort(&of);
		return aorta_fail(e, AORTA_EINTERNAL, path, 0, -1, "cannot write");
	}
	if (out_commit(&of, e))
		return e->code;
	return AORTA_OK;
}

/* The trials a resumed sweep finished (their result.json read back);
 * returns how many, *total the runs in all. */
static size_t finished_trials(struct sweep *s, size_t *total, struct aorta_error *e)
{
	struct recipe *r = &s->r;
	char path[4400];
	s->t = xcalloc(r->ncells, sizeof(struct trial *));
	size_t done = 0;
	*total = r->ncells * (size_t)r->trials + (r->confound ? 1 : 0);
	for (size_t c = 0; c < r->ncells; c++) {
		s->t[c] = xcalloc((size_t)r->trials, sizeof(struct trial));
		for (int k = 0; k < r->trials; k++) {
			snprintf(path, sizeof(path), "%s/cells/%s/t%d/result.json", s->dir, r->cells[c].id, k + 1);
			if (access(path, F_OK) == 0 && trial_read(path, &s->t[c][k], e) == AORTA_OK)
				done++;
		}
	}
	snprintf(path, sizeof(path), "%s/cells/%s/confound/result.json", s->dir, r->cells[r->baseline].id);
	if (r->confound && access(path, F_OK) == 0 && trial_read(path, &s->confound, e) == AORTA_OK)
		done++;
	return done;
}

int sweep_run(struct sweep *s, const struct sweep_run_opts *opt, struct aorta_error *e)
{
	struct recipe *r = &s->r;
	if (opt->timeout_s > 0)
		r->timeout_s = opt->timeout_s;
	if (opt->dry_run) {
		print_plan(s, stdout);
		printf("dry run: the recipe is valid; nothing was run\n");
		return 0;
	}
	enum aorta_status st = prepare_dir(s, opt, e);
	if (st)
		return st;
	size_t total, done = finished_trials(s, &total, e);
	if (opt->resume && done)
		aorta_note("resuming: %zu of %zu runs already done", done, total);
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	g_stop = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	int rc = 0;
	snapshot_envs(s);
	size_t n = done;
	for (int k = 0; !rc && k < r->trials && !g_stop; k++)
		for (size_t c = 0; !rc && c < r->ncells && !g_stop; c++) {
			if (s->t[c][k].status != TR_NONE)
				continue;
			struct trial t;
			rc = run_trial(s, c, k + 1, &t, e);
			if (rc)
				break;
			trial_release(&s->t[c][k]);
			s->t[c][k] = t;
			n++;
			if (t.status == TR_OK)
				aorta_note("[%zu/%zu] %s t%d (%s): ok, %.2f s, step %.3f ms, overhead %.2f %%", n, total,
					   r->cells[c].id, k + 1, r->cells[c].label, t.run_s, t.step_ms, t.overhead_pct);
			else
				aorta_note("[%zu/%zu] %s t%d (%s): %s: %s (log: %s/cells/%s/t%d/log.txt)", n, total,
					   r->cells[c].id, k + 1, r->cells[c].label, trial_status_name(t.status), t.error,
					   s->dir, r->cells[c].id, k + 1);
		}
	if (!rc && !g_stop && r->confound && s->confound.status == TR_NONE) {
		struct trial t;
		rc = run_trial(s, r->baseline, 0, &t, e);
		if (!rc) {
			s->confound = t;
			n++;
			aorta_note("[%zu/%zu] %s confound re-run of the baseline: %s%s", n, total, r->cells[r->baseline].id,
				   trial_status_name(t.status), t.status == TR_OK ? "" : t.error);
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (rc == 130)
		rc = 0, g_stop = g_stop ? g_stop : SIGINT;
	if (rc)
		return rc;
	sweep_stats(s);
	if (sweep_write_matrix(s, e))
		return e->code;
	if (g_stop) {
		aorta_warn("interrupted: %zu of %zu runs done and kept in '%s'; add --resume to continue", n, total, s->dir);
		return 130;
	}
	return 0;
}

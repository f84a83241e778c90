/*
 * output.c - atomic output files and the streaming JSON writer.
 *
 * An output path is resolved through symlinks first: the temporary file is
 * created beside the resolved target and renamed over it, so the link
 * stays a link.  A path that exists and is a character device or a FIFO
 * (/dev/null, /dev/stdout, a pipe to another program) is written in place,
 * never replaced (a FIFO nobody reads within 10 s is exit 3, not a hang); a
 * directory, socket or block device is refused (exit 3).
 * /dev/stdout, /dev/stderr and /dev/fd/N are written through the process's
 * own descriptor (a pipe to jq works, a redirect is not replaced).
 * Temporary files are named .NAME.aorta-tmp-XXXXXX (hidden, and recognised
 * by output_is_temp_name so a directory walk skips a leftover; the name cut
 * so it fits NAME_MAX) and removed by the handler of every terminating
 * signal and at exit while they are live; SIGXFSZ is ignored
 * (out_init_signals) so a write past the size limit fails with EFBIG and
 * the file is removed.  A command's outputs are one unit (output.h): their
 * renames wait for out_unit_commit.
 *
 * Inputs are never outputs: a registry of every file the command reads and
 * will write (out_guard_input / out_guard_output), compared by device and
 * inode and by resolved path, refuses an alias before anything is written;
 * out_open checks the inputs again, for outputs no command declared.
 */
#include "base/output.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

long long out_fail_after_bytes = -1;

/* ---- what a signal or an exit removes: temporary files and folders ------- */

#define TMP_TAG ".aorta-tmp-"

/* What is on disk only until the command commits it: temporary files, a
 * report's temporary folder and the files in it, a folder made for
 * outputs.  A list the handler walks (newest first: files before the
 * folders that hold them), nodes published with an atomic store and never
 * freed (a removed one is marked dead), so the handler never reads freed
 * memory; unlink and rmdir are async-signal-safe. */
enum { LIVE_DEAD, LIVE_FILE, LIVE_DIR };
struct live {
	char *path;
	_Atomic int kind;
	struct live *next;
};
static struct live *_Atomic live_head;
static atomic_flag handlers_set = ATOMIC_FLAG_INIT;

static pid_t live_owner; /* the process whose files these are (a forked child's are not) */

static void live_remove_all(void)
{
	if (getpid() != live_owner)
		return;
	for (struct live *n = atomic_load(&live_head); n; n = n->next)
		if (atomic_load(&n->kind) == LIVE_FILE)
			unlink(n->path);
	for (struct live *n = atomic_load(&live_head); n; n = n->next)
		if (atomic_load(&n->kind) == LIVE_DIR)
			rmdir(n->path);
}

static void on_signal(int sig)
{
	live_remove_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_exit_cleanup(void)
{
	live_remove_all(); /* an exit that committed nothing (out of memory: exit 5) leaves nothing */
}

/* Every signal whose default action ends the process (SIGKILL and SIGSTOP
 * cannot be caught; SIGXFSZ is ignored, out_init_signals), the real-time
 * ones included. */
static int terminating(int sig)
{
	switch (sig) {
	case SIGKILL: case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU: case SIGCONT:
	case SIGCHLD: case SIGURG: case SIGWINCH: case SIGXFSZ:
		return 0;
	default:
		return 1;
	}
}

static void install_handlers(void)
{
	if (atomic_flag_test_and_set(&handlers_set))
		return;
	live_owner = getpid();
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa, old;
		if (!terminating(sig) || sigaction(sig, NULL, &old) != 0)
			continue;
		/* leave a signal the caller ignores (nohup, SIGPIPE) ignored, and
		 * one a library handles (ASan's SIGSEGV) to it */
		if (old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigfillset(&sa.sa_mask); /* one handler at a time */
		sigaction(sig, &sa, NULL);
	}
	atexit(on_exit_cleanup);
}

static struct live *track_kind(const char *path, int kind)
{
	install_handlers();
	struct live *n = xcalloc(1, sizeof(*n));
	n->path = xstrdup(path);
	atomic_store(&n->kind, kind);
	n->next = atomic_load(&live_head);
	while (!atomic_compare_exchange_weak(&live_head, &n->next, n))
		;
	return n;
}

static void track(char *tmp)
{
	track_kind(tmp, LIVE_FILE);
}

/* Marks the live entry of path (a file or folder) removed; 0 if none. */
static int untrack_path(const char *path)
{
	for (struct live *n = atomic_load(&live_head); n; n = n->next)
		if (atomic_load(&n->kind) != LIVE_DEAD && !strcmp(n->path, path)) {
			atomic_store(&n->kind, LIVE_DEAD);
			return 1;
		}
	return 0;
}

static void untrack(char *tmp)
{
	untrack_path(tmp);
}

/* Whether path lies directly in a live folder (a report's temporary one):
 * a file committed there is removed with it. */
static int in_live_dir(const char *path)
{
	const char *sl = strrchr(path, '/');
	if (!sl)
		return 0;
	size_t dl = (size_t)(sl - path);
	for (struct live *n = atomic_load(&live_head); n; n = n->next)
		if (atomic_load(&n->kind) == LIVE_DIR && strlen(n->path) == dl && !strncmp(n->path, path, dl))
			return 1;
	return 0;
}

/* All terminating signals blocked (old gets the mask to restore): a commit
 * is not cut in the middle; a signal that comes is delivered after it. */
static void block_signals(sigset_t *old)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
}

static void restore_signals(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

void out_track_file(const char *path)
{
	track_kind(path, LIVE_FILE);
}

enum aorta_status out_mkdir(const char *dir, int temporary, struct aorta_error *e)
{
	struct stat st;
	if (!temporary && stat(dir, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return AORTA_OK;
		return aorta_fail(e, AORTA_EINPUT, dir, 0, -1, "exists and is not a directory; give a folder");
	}
	sigset_t old;
	block_signals(&old); /* made and tracked at once: never made and left */
	int rc = mkdir(dir, 0777), err = errno;
	if (rc == 0)
		track_kind(dir, LIVE_DIR);
	restore_signals(&old);
	if (rc != 0 && !(err == EEXIST && !temporary && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)))
		return aorta_fail(e, status_of_errno(err, AORTA_EINTERNAL), dir, 0, -1, "cannot create the folder: %s",
				  strerror(err));
	return AORTA_OK;
}

void out_forget_dir(const char *dir)
{
	size_t dl = strlen(dir);
	for (struct live *n = atomic_load(&live_head); n; n = n->next)
		if (!strncmp(n->path, dir, dl) && (n->path[dl] == '\0' || (n->path[dl] == '/' && !strchr(n->path + dl + 1, '/'))))
			atomic_store(&n->kind, LIVE_DEAD);
}

void out_critical_begin(sigset_t *old)
{
	block_signals(old);
}

void out_critical_end(const sigset_t *old)
{
	restore_signals(old);
}

/* ---- one command's outputs as one unit ------------------------------------ */

/* Between out_unit_begin and out_unit_commit, out_commit checks and closes
 * each file but leaves it under its temporary name; the commit renames
 * them all with signals blocked, each target's previous file kept under a
 * hard link until every rename has succeeded, so a failed rename puts the
 * earlier ones back: the outputs of the command are all new or all as
 * they were.  Not thread-safe (the command's main thread). */
struct pending { char *tmp, *path; };
static struct pending *pend;
static size_t npend, cappend;
static int unit_on;

void out_unit_begin(void)
{
	unit_on = 1;
}

static void unit_forget(void)
{
	for (size_t i = 0; i < npend; i++) {
		free(pend[i].tmp);
		free(pend[i].path);
	}
	free(pend);
	pend = NULL;
	npend = cappend = 0;
	unit_on = 0;
}

/* The folders out_mkdir made that are still empty: removed. */
static void remove_made_dirs(void)
{
	for (struct live *n = atomic_load(&live_head); n; n = n->next)
		if (atomic_load(&n->kind) == LIVE_DIR && rmdir(n->path) == 0)
			atomic_store(&n->kind, LIVE_DEAD);
}

void out_unit_abort(void)
{
	for (size_t i = 0; i < npend; i++) {
		unlink(pend[i].tmp);
		untrack(pend[i].tmp);
	}
	unit_forget();
	remove_made_dirs();
}

enum aorta_status out_unit_commit(struct aorta_error *e)
{
	enum aorta_status st = AORTA_OK;
	sigset_t old;
	char **bak = xcalloc(npend ? npend : 1, sizeof(*bak));
	size_t done = 0;

	block_signals(&old);
	for (; done < npend; done++) {
		struct pending *p = &pend[done];
		/* the previous file stays reachable until every rename is done */
		bak[done] = xasprintf("%s.old", p->tmp);
		if (link(p->path, bak[done]) != 0) {
			free(bak[done]);
			bak[done] = NULL;
		}
		if (rename(p->tmp, p->path) != 0) {
			int err = errno;
			st = aorta_fail(e, status_of_errno(err, AORTA_EINTERNAL), p->path, 0, -1,
					"cannot rename into place: %s; no output of this run was kept", strerror(err));
			if (bak[done])
				unlink(bak[done]);
			break;
		}
	}
	if (st) { /* put the earlier ones back */
		for (size_t k = done; k-- > 0;) {
			if (bak[k])
				rename(bak[k], pend[k].path);
			else
				unlink(pend[k].path);
		}
		for (size_t k = done; k < npend; k++)
			unlink(pend[k].tmp);
	} else {
		for (size_t k = 0; k < npend; k++) {
			if (bak[k])
				unlink(bak[k]);
			untrack(pend[k].tmp);
		}
		/* the folders made for outputs are kept now */
		for (struct live *n = atomic_load(&live_head); n; n = n->next)
			if (atomic_load(&n->kind) == LIVE_DIR)
				atomic_store(&n->kind, LIVE_DEAD);
	}
	for (size_t k = 0; k < npend; k++) {
		free(bak[k]);
		if (st)
			untrack(pend[k].tmp);
	}
	free(bak);
	unit_forget();
	if (st)
		remove_made_dirs();
	restore_signals(&old);
	return st;
}

void out_init_signals(void)
{
	struct sigaction old;
	/* past RLIMIT_FSIZE a write fails with EFBIG (an error naming the file,
	 * exit 5, the temporary file removed) instead of a silent kill */
	if (sigaction(SIGXFSZ, NULL, &old) == 0 && old.sa_handler == SIG_DFL)
		signal(SIGXFSZ, SIG_IGN);
}

int output_is_temp_name(const char *name)
{
	const char *b = strrchr(name, '/');
	b = b ? b + 1 : name;
	if (strstr(b, TMP_TAG))
		return 1;
	/* the form of aorta 0.x: NAME.tmpXXXXXX */
	const char *t = strstr(b, ".tmp");
	return t && strlen(t) == 10;
}

/* The file a path names, through symlinks (a dangling one included, whose
 * target is created); NULL with errno set on a loop or a bad component. */
static char *resolve(const char *path);
char *out_resolve(const char *path)
{
	return resolve(path);
}

static char *resolve(const char *path)
{
	char *cur = xstrdup(path);

	for (int hops = 0; hops < 40; hops++) {
		struct stat st;
		if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
			return cur;
		char tgt[4096];
		ssize_t n = readlink(cur, tgt, sizeof(tgt) - 1);
		if (n < 0) {
			free(cur);
			return NULL;
		}
		tgt[n] = '\0';
		if (tgt[0] == '/') {
			free(cur);
			cur = xstrdup(tgt);
		} else { /* relative to the link's directory */
			const char *sl = strrchr(cur, '/');
			size_t dl = sl ? (size_t)(sl - cur) + 1 : 0;
			char *nx = xmalloc(dl + (size_t)n + 1);
			memcpy(nx, cur, dl);
			memcpy(nx + dl, tgt, (size_t)n + 1);
			free(cur);
			cur = nx;
		}
	}
	free(cur);
	errno = ELOOP;
	return NULL;
}

/* ---- inputs are never outputs ------------------------------------------------ */

/* Every file read (out_guard_input) and every file to be written
 * (out_guard_output) of this process, by identity: the device and inode when
 * the file exists, and the resolved path (symlinks followed, the folder made
 * absolute) always, so two names of one file not yet written still meet.
 * Character devices, FIFOs and the process's own descriptors are left out:
 * /dev/null may be every output at once. */
struct guarded {
	char *canon;     /* resolved, absolute where the folder exists */
	char *given;     /* as the user wrote it, for the message */
	const char *what;/* "input" or the output's option */
	dev_t dev;
	ino_t ino;
	int have_id;
	int output;
};

static struct guarded *guards;
static size_t nguards, capguards;
/* readers declare what they read from their threads (out_guard_read) */
static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;

static char *resolve(const char *path);
static int own_fd(const char *path);

/* The canonical name of a path and, when it exists, its identity; 0 when
 * the path is not a regular file or a new one (a device, a FIFO, a folder:
 * not guarded). */
static int identify(const char *path, struct guarded *g)
{
	struct stat st;

	memset(g, 0, sizeof(*g));
	if (!strcmp(path, "-") || own_fd(path) >= 0)
		return 0;
	char *t = resolve(path);
	if (!t)
		return 0;
	if (stat(t, &st) == 0) {
		if (!S_ISREG(st.st_mode)) {
			free(t);
			return 0;
		}
		g->dev = st.st_dev;
		g->ino = st.st_ino;
		g->have_id = 1;
	}
	/* the folder through realpath, the last component as is */
	const char *sl = strrchr(t, '/');
	char *dir = sl ? xasprintf("%.*s", sl == t ? 1 : (int)(sl - t), t) : xstrdup(".");
	char *rd = realpath(dir, NULL);
	if (rd) {
		g->canon = xasprintf("%s/%s", strcmp(rd, "/") ? rd : "", sl ? sl + 1 : t);
		free(rd);
		free(t);
	} else {
		g->canon = t;
	}
	free(dir);
	return 1;
}

static const struct guarded *find_guard(const struct guarded *g, int outputs, int inputs)
{
	for (size_t i = 0; i < nguards; i++) {
		const struct guarded *o = &guards[i];
		if (!(o->output ? outputs : inputs))
			continue;
		if ((g->have_id && o->have_id && g->dev == o->dev && g->ino == o->ino) ||
		    !strcmp(g->canon, o->canon))
			return o;
	}
	return NULL;
}

static enum aorta_status guard_add_locked(const char *path, const char *what, int output,
					  struct aorta_error *e)
{
	struct guarded g;

	if (!identify(path, &g))
		return AORTA_OK;
	const struct guarded *o = find_guard(&g, 1, output);
	if (!o && !output)
		o = find_guard(&g, 0, 1);
	if (o && !output && !o->output) { /* read again (the reader after the walk): known */
		free(g.canon);
		return AORTA_OK;
	}
	if (o) {
		enum aorta_status s;
		if (!output)
			s = aorta_fail(e, AORTA_EUSAGE, path, 0, -1,
				       "this input is also the output of %s ('%s'): writing it would destroy "
				       "the input; give the output another name", o->what, o->given);
		else if (!o->output)
			s = aorta_fail(e, AORTA_EUSAGE, path, 0, -1,
				       "the output of %s is also an input ('%s'): writing it would destroy "
				       "the input; give the output another name", what, o->given);
		else
			s = aorta_fail(e, AORTA_EUSAGE, path, 0, -1,
				       "the output of %s is also the output of %s ('%s'): one would replace "
				       "the other; give each its own name", what, o->what, o->given);
		free(g.canon);
		return s;
	}
	g.given = xstrdup(path);
	g.what = what;
	g.output = output;
	GROW(guards, capguards, nguards + 1);
	guards[nguards++] = g;
	return AORTA_OK;
}

static enum aorta_status guard_add(const char *path, const char *what, int output, struct aorta_error *e)
{
	pthread_mutex_lock(&guard_lock);
	enum aorta_status s = guard_add_locked(path, what, output, e);
	pthread_mutex_unlock(&guard_lock);
	return s;
}

enum aorta_status out_guard_input(const char *path, struct aorta_error *e)
{
	return guard_add(path, "input", 0, e);
}

enum aorta_status out_guard_read(const char *path, struct aorta_error *e)
{
	return guard_add(path, "input", 0, e);
}

enum aorta_status out_guard_output(const char *path, const char *what, struct aorta_error *e)
{
	return guard_add(path, what, 1, e);
}

void out_guard_forget(const char *path)
{
	struct guarded g;
	if (!identify(path, &g))
		return;
	pthread_mutex_lock(&guard_lock);
	for (size_t i = 0; i < nguards;) {
		struct guarded *o = &guards[i];
		if (!o->output && ((g.have_id && o->have_id && g.dev == o->dev && g.ino == o->ino) ||
				   !strcmp(g.canon, o->canon))) {
			free(o->canon);
			free(o->given);
			guards[i] = guards[--nguards];
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&guard_lock);
	free(g.canon);
}

void out_guard_reset(void)
{
	pthread_mutex_lock(&guard_lock);
	for (size_t i = 0; i < nguards; i++) {
		free(guards[i].canon);
		free(guards[i].given);
	}
	free(guards);
	guards = NULL;
	nguards = capguards = 0;
	pthread_mutex_unlock(&guard_lock);
}

/* out_open's own check: an output never replaces a file this process read,
 * whether or not its command declared the output first. */
static enum aorta_status guard_open(const char *path, struct aorta_error *e)
{
	struct guarded g;

	if (!nguards || !identify(path, &g))
		return AORTA_OK;
	pthread_mutex_lock(&guard_lock);
	const struct guarded *o = find_guard(&g, 0, 1);
	char *given = o ? xstrdup(o->given) : NULL;
	pthread_mutex_unlock(&guard_lock);
	free(g.canon);
	if (given) {
		enum aorta_status s = aorta_fail(e, AORTA_EUSAGE, path, 0, -1,
						 "the output is also an input ('%s'): writing it would destroy the "
						 "input; give the output another name", given);
		free(given);
		return s;
	}
	return AORTA_OK;
}

/* A FIFO output waits for its reader at most FIFO_WAIT_MS instead of
 * blocking for ever in open(2); -1 with errno ENXIO when none came. */
#define FIFO_WAIT_MS 10000

static int open_fifo(const char *path)
{
	for (int waited = 0;; waited += 20) {
		int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0) {
			int fl = fcntl(fd, F_GETFL);
			if (fl >= 0)
				fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
			return fd;
		}
		if (errno != ENXIO || waited >= FIFO_WAIT_MS)
			return -1;
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

/* The descriptor a path names when it is one of the process's own:
 * /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N; else -1.  Such an
 * output is written through a dup of the descriptor: resolving it would
 * give a pipe ("pipe:[123]") or the file the shell opened, which a rename
 * would replace under the shell's feet. */
static int own_fd(const char *path)
{
	const char *p = NULL;

	if (!strcmp(path, "/dev/stdout"))
		return 1;
	if (!strcmp(path, "/dev/stderr"))
		return 2;
	if (!strncmp(path, "/dev/fd/", 8))
		p = path + 8;
	else if (!strncmp(path, "/proc/self/fd/", 14))
		p = path + 14;
	if (!p || *p < '0' || *p > '9')
		return -1;
	char *end;
	long v = strtol(p, &end, 10);
	return *end == '\0' && v >= 0 && v < 1 << 20 ? (int)v : -1;
}

enum aorta_status out_open(struct outfile *o, const char *path, struct aorta_error *e)
{
	struct stat st;

	memset(o, 0, sizeof(*o));
	enum aorta_status gs = guard_open(path, e);
	if (gs)
		return gs;
	int sfd = own_fd(path);
	if (sfd >= 0) {
		int fd = fcntl(sfd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
			int err = errno;
			if (fd >= 0)
				close(fd);
			return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "cannot write to it: %s",
					  strerror(err));
		}
		o->path = xstrdup(path);
		o->in_place = 1;
		return AORTA_OK;
	}
	char *target = resolve(path);
	if (!target)
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "cannot resolve the output path: %s",
				  strerror(errno));
	if (stat(target, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISBLK(st.st_mode)) {
			enum aorta_status s = aorta_fail(e, AORTA_EINPUT, path, 0, -1,
							 "the output exists and is %s, not a regular file; "
							 "give a file name",
							 S_ISDIR(st.st_mode) ? "a directory" :
							 S_ISSOCK(st.st_mode) ? "a socket" : "a block device");
			free(target);
			return s;
		}
		/* a character device (/dev/null, /dev/stdout) or a FIFO: written in
		 * place, never replaced */
		int fd = S_ISFIFO(st.st_mode) ? open_fifo(target)
					      : open(target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (fd < 0 && errno == ENXIO) {
			free(target);
			return aorta_fail(e, AORTA_EINPUT, path, 0, -1,
					  "a FIFO that no process reads (waited %d s)", FIFO_WAIT_MS / 1000);
		}
		if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
			int err = errno;
			if (fd >= 0)
				close(fd);
			free(target);
			return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "cannot open for writing: %s",
					  strerror(err));
		}
		o->path = target;
		o->in_place = 1;
		return AORTA_OK;
	}
	/* the temporary file beside the file it becomes: hidden, tagged, so a
	 * directory walk skips a leftover by name */
	const char *sl = strrchr(target, '/');
	size_t dl = sl ? (size_t)(sl - target) + 1 : 0;
	size_t n = strlen(target) + sizeof(TMP_TAG) + 8;
	/* ".NAME" TMP_TAG "XXXXXX" must fit NAME_MAX: a long NAME is cut in the
	 * temporary name only (the tag still marks it) */
	size_t keep = strlen(target + dl), room = NAME_MAX - 1 - strlen(TMP_TAG) - 6;
	if (keep > room)
		keep = room;
	o->path = target;
	o->tmp = xmalloc(n);
	snprintf(o->tmp, n, "%.*s.%.*s" TMP_TAG "XXXXXX", (int)dl, target, (int)keep, target + dl);
	sigset_t old;
	block_signals(&old); /* made and tracked at once: a signal between would leave it */
	int fd = mkstemp(o->tmp);
	if (fd >= 0)
		track(o->tmp);
	restore_signals(&old);
	if (fd < 0) {
		enum aorta_status s = aorta_fail(e, AORTA_EINTERNAL, path, 0, -1,
						 "cannot create a temporary file beside it: %s",
						 strerror(errno));
		free(o->path);
		free(o->tmp);
		memset(o, 0, sizeof(*o));
		return s;
	}
	/* mkstemp creates 0600; give the file the mode a plain fopen would, or
	 * the mode of the file it replaces */
	mode_t um = umask(0);
	umask(um);
	fchmod(fd, stat(target, &st) == 0 ? (st.st_mode & 07777) : (0666 & ~um));
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		unlink(o->tmp);
		untrack(o->tmp);
		free(o->path);
		free(o->tmp);
		memset(o, 0, sizeof(*o));
		return aorta_fail(e, AORTA_EINTERNAL, path, 0, -1, "cannot open: %s", strerror(errno));
	}
	return AORTA_OK;
}

void out_abort(struct outfile *o)
{
	if (o->f)
		fclose(o->f);
	if (o->tmp) {
		unlink(o->tmp);
		untrack(o->tmp);
	}
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
}

enum aorta_status out_commit(struct outfile *o, struct aorta_error *e)
{
	int bad = fflush(o->f) != 0 || ferror(o->f);
	long long written = ftell(o->f);

	if (out_fail_after_bytes >= 0 && written > out_fail_after_bytes) {
		bad = 1;
		errno = ENOSPC;
	}
	if (bad) {
		int err = errno;
		char path[512];
		snprintf(path, sizeof(path), "%s", o->path);
		out_abort(o);
		return aorta_fail(e, AORTA_EINTERNAL, path, 0, -1, "write failed: %s", strerror(err));
	}
	if (fclose(o->f) != 0) {
		o->f = NULL;
		char path[512];
		int err = errno;
		snprintf(path, sizeof(path), "%s", o->path);
		out_abort(o);
		return aorta_fail(e, AORTA_EINTERNAL, path, 0, -1, "write failed: %s", strerror(err));
	}
	o->f = NULL;
	if (o->in_place) {
		free(o->path);
		memset(o, 0, sizeof(*o));
		return AORTA_OK;
	}
	if (unit_on) { /* renamed with the command's other outputs (out_unit_commit) */
		GROW(pend, cappend, npend + 1);
		pend[npend++] = (struct pending){ o->tmp, o->path };
		memset(o, 0, sizeof(*o));
		return AORTA_OK;
	}
	sigset_t old;
	block_signals(&old);
	if (rename(o->tmp, o->path) != 0) {
		int err = errno;
		restore_signals(&old);
		char path[512];
		snprintf(path, sizeof(path), "%s", o->path);
		out_abort(o);
		return aorta_fail(e, AORTA_EINTERNAL, path, 0, -1, "cannot rename into place: %s",
				  strerror(err));
	}
	untrack(o->tmp);
	if (in_live_dir(o->path)) /* a report's temporary folder: removed with it */
		track_kind(o->path, LIVE_FILE);
	restore_signals(&old);
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
	return AORTA_OK;
}

/* ---- JSON writer ---------------------------------------------------------- */

void jw_init(struct jw *w, FILE *f, int pretty)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->pretty = pretty;
	w->first[0] = 1;
}

void json_escape(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		unsigned char c = *p;
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			p++;
		} else if (c < 0x20) {
			fprintf(f, "\\u%04x", c);
			p++;
		} else if (c < 0x80) {
			fputc(c, f);
			p++;
		} else { /* copy valid UTF-8 sequences, escape stray bytes */
			int n = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
			int ok = n > 0;
			for (int k = 1; ok && k < n; k++)
				ok = (p[k] & 0xc0) == 0x80;
			if (ok) {
				fwrite(p, 1, (size_t)n, f);
				p += n;
			} else {
				fprintf(f, "\\u%04x", c);
				p++;
			}
		}
	}
	fputc('"', f);
}

static void key(struct jw *w, const char *k)
{
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = 0;
	if (w->pretty && w->depth > 0) {
		fputc('\n', w->f);
		for (int i = 0; i < w->depth; i++)
			fputs("  ", w->f);
	}
	if (k) {
		json_escape(w->f, k);
		fputs(w->pretty ? ": " : ":", w->f);
	}
}

static void open_(struct jw *w, const char *k, char c)
{
	key(w, k);
	fputc(c, w->f);
	if (w->depth < 63)
		w->depth++;
	w->first[w->depth] = 1;
}

static void close_(struct jw *w, char c)
{
	int empty = w->first[w->depth];
	if (w->depth > 0)
		w->depth--;
	if (w->pretty && !empty) {
		fputc('\n', w->f);
		for (int i = 0; i < w->depth; i++)
			fputs("  ", w->f);
	}
	fputc(c, w->f);
	if (w->depth == 0 && w->pretty)
		fputc('\n', w->f);
}

void jw_obj(struct jw *w, const char *k) { open_(w, k, '{'); }
void jw_obj_end(struct jw *w) { close_(w, '}'); }
void jw_arr(struct jw *w, const char *k) { open_(w, k, '['); }
void jw_arr_end(struct jw *w) { close_(w, ']'); }

void jw_str(struct jw *w, const char *k, const char *v)
{
	key(w, k);
	json_escape(w->f, v ? v : "");
}

void jw_int(struct jw *w, const char *k, long long v)
{
	key(w, k);
	fprintf(w->f, "%lld", v);
}

void jw_uint(struct jw *w, const char *k, unsigned long long v)
{
	key(w, k);
	fprintf(w->f, "%llu", v);
}

void jw_num(struct jw *w, const char *k, double v, int decimals)
{
	key(w, k);
	if (isnan(v) || isinf(v))
		fputs("null", w->f);
	else
		fprintf(w->f, "%.*f", decimals, v);
}

void fprint_ms(FILE *f, int64_t ns)
{
	int neg = ns < 0;
	uint64_t a = neg ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	fprintf(f, "%s%llu.%06llu", neg ? "-" : "", (unsigned long long)(a / 1000000),
		(unsigned long long)(a % 1000000));
}

void jw_ms(struct jw *w, const char *k, int64_t ns)
{
	key(w, k);
	fprint_ms(w->f, ns);
}

void jw_num_exact(struct jw *w, const char *k, double v)
{
	char b[40];
	key(w, k);
	if (!isfinite(v)) {
		fputs("null", w->f);
		return;
	}
	for (int p = 15; p <= 17; p++) {
		snprintf(b, sizeof(b), "%.*g", p, v);
		if (strtod(b, NULL) == v)
			break;
	}
	if (!strpbrk(b, ".eEn")) /* an integral double keeps a decimal point, as JSON writers do */
		strcat(b, ".0");
	fputs(b, w->f);
}

void jw_bool(struct jw *w, const char *k, int v)
{
	key(w, k);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jw *w, const char *k)
{
	key(w, k);
	fputs("null", w->f);
}

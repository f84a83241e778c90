/*
 * test_output.c - outputs are complete or absent (fault injection), JSON
 * escaping, exact millisecond printing, and option tables.
 */
#include "testing.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/options.h"
#include "base/output.h"
#include "base/visible.h"

static int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

static void test_commit_renames_into_place_and_leaves_no_temp(void)
{
	char dir[] = "/tmp/aorta_out_XXXXXX", path[256];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/a.json", dir);
	struct outfile o;
	struct aorta_error e = { 0 };
	CHECK_EQ_I(out_open(&o, path, &e), AORTA_OK);
	fputs("{\"x\":1}\n", o.f);
	CHECK(!exists(path)); /* not visible before commit */
	CHECK_EQ_I(out_commit(&o, &e), AORTA_OK);
	CHECK(exists(path));
	unlink(path);
	rmdir(dir); /* fails if a temporary file was left behind */
	CHECK(!exists(dir));
}

static void test_failed_write_leaves_no_file(void)
{
	char dir[] = "/tmp/aorta_out_XXXXXX", path[256];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/b.json", dir);
	struct outfile o;
	struct aorta_error e = { 0 };
	out_fail_after_bytes = 10; /* inject: the disk fills after 10 bytes */
	CHECK_EQ_I(out_open(&o, path, &e), AORTA_OK);
	for (int i = 0; i < 100; i++)
		fputs("0123456789", o.f);
	CHECK_EQ_I(out_commit(&o, &e), AORTA_EINTERNAL);
	out_fail_after_bytes = -1;
	CHECK(strstr(e.msg, "write failed") != NULL);
	CHECK_STR(e.path, path);
	CHECK(!exists(path));
	CHECK(rmdir(dir) == 0); /* the temporary file is gone too */
	/* an output in a directory that does not exist is an error, not a crash */
	CHECK_EQ_I(out_open(&o, "/nonexistent-dir/x.json", &e), AORTA_EINTERNAL);
}

static void test_json_escape_and_exact_ms(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_escape(f, "a\"b\\c\n\x01\xff\xc3\xa9");
	fputc(' ', f);
	fprint_ms(f, 1234567891);
	fputc(' ', f);
	fprint_ms(f, -1500);
	fputc(' ', f);
	fprint_ms(f, 0);
	fclose(f);
	CHECK_STR(buf, "\"a\\\"b\\\\c\\u000a\\u0001\\u00ff\xc3\xa9\" 1234.567891 -0.001500 0.000000");
	free(buf);
}

static void test_json_writer_nesting_and_commas(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct jw w;
	jw_init(&w, f, 0);
	jw_obj(&w, NULL);
	jw_int(&w, "a", 1);
	jw_arr(&w, "b");
	jw_num(&w, NULL, 0.5, 2);
	jw_num(&w, NULL, 0.0 / 0.0, 2);
	jw_obj(&w, NULL);
	jw_obj_end(&w);
	jw_arr_end(&w);
	jw_ms(&w, "t", 5);
	jw_obj_end(&w);
	fclose(f);
	CHECK_STR(buf, "{\"a\":1,\"b\":[0.50,null,{}],\"t\":0.000005}");
	free(buf);
}

static void test_option_table_parses_and_rejects(void)
{
	const char *s = NULL;
	int n = 0, b = 0, nargs = 0;
	double d = 0;
	struct opt opts[] = {
		OPT_STRING(0, "json", &s, "FILE", "x"),
		OPT_INT('j', "threads", &n, "N", "x"),
		OPT_DOUBLE(0, "pct", &d, "P", "x"),
		OPT_BOOL('q', "quiet", &b, "x"),
		OPT_END(),
	};
	char *argv[] = { "cmd", "a", "--json=out.json", "-j", "3", "--pct", "2.5", "-q", "b", "--", "-c", NULL };
	CHECK_EQ_I(opt_parse(11, argv, opts, "u", NULL, &nargs), AORTA_OK);
	CHECK_STR(s, "out.json");
	CHECK_EQ_I(n, 3);
	CHECK_NEAR(d, 2.5, 0);
	CHECK_EQ_I(b, 1);
	CHECK_EQ_I(nargs, 3);
	CHECK_STR(argv[0], "a");
	CHECK_STR(argv[1], "b");
	CHECK_STR(argv[2], "-c");
	char *bad1[] = { "cmd", "--threads", "x3", NULL };
	CHECK_EQ_I(opt_parse(3, bad1, opts, "u", NULL, &nargs), AORTA_EUSAGE);
	char *bad2[] = { "cmd", "--nope", NULL };
	CHECK_EQ_I(opt_parse(2, bad2, opts, "u", NULL, &nargs), AORTA_EUSAGE);
	char *bad3[] = { "cmd", "--json", NULL };
	CHECK_EQ_I(opt_parse(2, bad3, opts, "u", NULL, &nargs), AORTA_EUSAGE);
	/* nan and inf would pass any range check written as `v < lo || v > hi` */
	const char *nonfinite[] = { "nan", "NaN", "inf", "-inf", "infinity", "1e999" };
	for (size_t i = 0; i < sizeof(nonfinite) / sizeof(nonfinite[0]); i++) {
		char *bad[] = { "cmd", "--pct", (char *)nonfinite[i], NULL };
		d = 7;
		CHECK_EQ_I(opt_parse(3, bad, opts, "u", NULL, &nargs), AORTA_EUSAGE);
		CHECK_NEAR(d, 7, 0);
	}
}

/* A run killed by SIGTERM or SIGINT while an output is open leaves no
 * temporary file behind (the handler unlinks it, then dies of the signal).
 * The run is a fresh process (this program exec'ed again, so out_open
 * decides its handlers as aorta does at start) with SIGINT and SIGTERM at
 * their defaults and no signal blocked: a test run from a script's
 * background job (`make test &`) inherits SIGINT ignored, and aorta rightly
 * keeps an ignored signal ignored.  Whatever the checks find, the folder and
 * anything left in it are removed. */
static int signal_child(const char *sig, const char *path, const char *fd)
{
	struct outfile o;
	struct aorta_error e = { 0 };
	sigset_t none;
	int s = atoi(sig), w = atoi(fd);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (out_open(&o, path, &e) != AORTA_OK)
		return 9;
	fputs("{\"partial\":", o.f);
	fflush(o.f);
	if (write(w, o.tmp, strlen(o.tmp) + 1) < 0)
		return 8;
	raise(s);
	return 7; /* not reached */
}

static void test_signal_removes_temporary_files(void)
{
	static const int sigs[] = { SIGTERM, SIGINT };
	for (size_t k = 0; k < 2; k++) {
		char dir[] = "/tmp/aorta_out_XXXXXX", path[256], tmp[512] = "";
		CHECK(mkdtemp(dir) != NULL);
		snprintf(path, sizeof(path), "%s/c.json", dir);
		int fds[2];
		CHECK(pipe(fds) == 0);
		pid_t pid = fork();
		if (pid == 0) {
			char sig[16], fd[16];
			close(fds[0]);
			snprintf(sig, sizeof(sig), "%d", sigs[k]);
			snprintf(fd, sizeof(fd), "%d", fds[1]);
			execl("/proc/self/exe", "test_output", "--signal-child", sig, path, fd, (char *)NULL);
			_exit(6);
		}
		close(fds[1]);
		ssize_t n = read(fds[0], tmp, sizeof(tmp) - 1);
		close(fds[0]);
		int status = 0;
		waitpid(pid, &status, 0);
		CHECK(n > 0);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == sigs[k]);
		CHECK(tmp[0] && !exists(tmp));
		CHECK(!exists(path));
		if (tmp[0] && strncmp(tmp, dir, strlen(dir)) == 0)
			unlink(tmp);
		unlink(path);
		CHECK(rmdir(dir) == 0);
	}
}

/* Outputs through a symlink keep the link and write its target; a FIFO or
 * character device is written in place, never replaced; a directory is
 * refused with exit 3. */
static void test_output_through_links_devices_and_dirs(void)
{
	char dir[] = "/tmp/aorta_out_XXXXXX", link[256], target[256], sub[256];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(link, sizeof(link), "%s/link.json", dir);
	snprintf(target, sizeof(target), "%s/target.json", dir);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	CHECK(symlink("target.json", link) == 0); /* dangling until written */
	struct outfile o;
	struct aorta_error e = { 0 };
	CHECK_EQ_I(out_open(&o, link, &e), AORTA_OK);
	fputs("1\n", o.f);
	CHECK_EQ_I(out_commit(&o, &e), AORTA_OK);
	struct stat st;
	CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(stat(target, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 2);
	CHECK_EQ_I(out_open(&o, "/dev/null", &e), AORTA_OK);
	CHECK_EQ_I(o.in_place, 1);
	fputs("x", o.f);
	CHECK_EQ_I(out_commit(&o, &e), AORTA_OK);
	CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
	CHECK(mkdir(sub, 0700) == 0);
	CHECK_EQ_I(out_open(&o, sub, &e), AORTA_EINPUT);
	CHECK(strstr(e.msg, "directory") != NULL);
	CHECK(rmdir(sub) == 0);
	unlink(link);
	unlink(target);
	CHECK(rmdir(dir) == 0); /* no temporary file left */
}


static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static int holds(const char *path, const char *text)
{
	char b[256] = "";
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(b, 1, sizeof(b) - 1, f);
	fclose(f);
	b[n] = '\0';
	return !strcmp(b, text);
}

/* What is left in dir but the named files: 0 when nothing (no temporary
 * file, no backup). */
static int extra_files(const char *dir, int expected)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | wc -l) = %d", dir, expected);
	return system(cmd) != 0;
}

/* One command's outputs are one unit: nothing is renamed before
 * out_unit_commit, then all are; out_unit_abort leaves the old files; a
 * rename that fails puts back the ones done before it. */
static void test_outputs_of_a_command_are_one_unit(void)
{
	char dir[] = "/tmp/aorta_out_XXXXXX", p[3][256], made[256];
	CHECK(mkdtemp(dir) != NULL);
	for (int i = 0; i < 3; i++) {
		snprintf(p[i], sizeof(p[i]), "%s/f%d", dir, i);
		put(p[i], "old");
	}
	struct aorta_error e = { 0 };
	struct outfile o;
	/* commit: all new at once */
	out_unit_begin();
	for (int i = 0; i < 3; i++) {
		CHECK_EQ_I(out_open(&o, p[i], &e), AORTA_OK);
		fputs("new", o.f);
		CHECK_EQ_I(out_commit(&o, &e), AORTA_OK);
		CHECK(holds(p[i], "old")); /* not yet */
	}
	CHECK_EQ_I(out_unit_commit(&e), AORTA_OK);
	for (int i = 0; i < 3; i++)
		CHECK(holds(p[i], "new"));
	CHECK(!extra_files(dir, 3));
	/* abort: all old, the folder made for them gone */
	snprintf(made, sizeof(made), "%s/made", dir);
	out_unit_begin();
	CHECK_EQ_I(out_mkdir(made, 0, &e), AORTA_OK);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ_I(out_open(&o, p[i], &e), AORTA_OK);
		fputs("newer", o.f);
		CHECK_EQ_I(out_commit(&o, &e), AORTA_OK);
	}
	out_unit_abort();
	for (int i = 0; i < 3; i++)
		CHECK(holds(p[i], "new"));
	CHECK(!exists(made));
	CHECK(!extra_files(dir, 3));
	/* the second rename fails (its target became a folder): the first is put back */
	out_unit_begin();
	for (int i = 0; i < 3; i++) {
		CHECK_EQ_I(out_open(&o, p[i], &e), AORTA_OK);
		fputs("newest", o.f);
		CHECK_EQ_I(out_commit(&o, &e), AORTA_OK);
	}
	char sub[300];
	unlink(p[1]);
	CHECK(mkdir(p[1], 0700) == 0);
	snprintf(sub, sizeof(sub), "%s/x", p[1]);
	put(sub, "x"); /* a folder that is not empty: rename(2) cannot replace it */
	CHECK_EQ_I(out_unit_commit(&e), AORTA_EINTERNAL);
	CHECK(strstr(e.msg, "no output of this run was kept") != NULL);
	CHECK(holds(p[0], "new"));
	CHECK(holds(p[2], "new"));
	CHECK(!extra_files(dir, 3));
	unlink(sub);
	rmdir(p[1]);
	unlink(p[0]);
	unlink(p[2]);
	CHECK(rmdir(dir) == 0);
}

/* A signal while a unit is pending: its temporary files, the folder made
 * for it and a file tracked in a temporary folder are removed, the old
 * outputs stay (the child: --unit-child SIG DIR). */
static int unit_child(const char *sig, const char *dir)
{
	char p[256], made[256], tmpdir[256], chart[300];
	struct aorta_error e = { 0 };
	struct outfile o;
	snprintf(p, sizeof(p), "%s/out", dir);
	snprintf(made, sizeof(made), "%s/csv", dir);
	snprintf(tmpdir, sizeof(tmpdir), "%s/rep.tmp-1", dir);
	snprintf(chart, sizeof(chart), "%s/a.png", tmpdir);
	out_unit_begin();
	if (out_open(&o, p, &e) || (fputs("new", o.f), out_commit(&o, &e)) || out_mkdir(made, 0, &e) ||
	    out_mkdir(tmpdir, 1, &e))
		return 5;
	out_track_file(chart);
	put(chart, "png");
	raise(atoi(sig));
	return 7; /* not reached */
}

static void test_signal_removes_a_pending_unit(void)
{
	static const int sigs[] = { SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2, SIGHUP };
	for (size_t k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++) {
		char dir[] = "/tmp/aorta_out_XXXXXX", p[256], sig[16];
		CHECK(mkdtemp(dir) != NULL);
		snprintf(p, sizeof(p), "%s/out", dir);
		put(p, "old");
		snprintf(sig, sizeof(sig), "%d", sigs[k]);
		pid_t pid = fork();
		if (pid == 0) {
			execl("/proc/self/exe", "test_output", "--unit-child", sig, dir, (char *)NULL);
			_exit(6);
		}
		int status = 0;
		waitpid(pid, &status, 0);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == sigs[k]);
		CHECK(holds(p, "old"));
		CHECK(!extra_files(dir, 1)); /* no temporary file, no csv/, no rep.tmp-1/ */
		unlink(p);
		char core[300];
		snprintf(core, sizeof(core), "%s/core", dir);
		unlink(core);
		CHECK(rmdir(dir) == 0);
	}
}

/* Text made visible: controls but tab and newline, DEL and stray bytes as
 * \xNN, C1 and direction overrides as \uNNNN, UTF-8 kept; a character cut
 * at the end of a piece is left for the next. */
static void test_visible_text(void)
{
	char b[256];
	CHECK_STR(vis_str(b, sizeof(b), "a\tb\n\x1b]0;t\x07\x1b[2J\x7f"), "a\tb\n\\x1b]0;t\\x07\\x1b[2J\\x7f");
	CHECK_STR(vis_str(b, sizeof(b), "caf\xc3\xa9 \xe2\x80\xae x \xc2\x9b y \xff \xc0\xaf"),
		  "caf\xc3\xa9 \\u202e x \\u009b y \\xff \\xc0\\xaf");
	CHECK_STR(vis_str(b, sizeof(b), "\xe2\x81\xa6\xe2\x81\xa9"), "\\u2066\\u2069");
	CHECK_STR(vis_str(b, 8, "abc\x1b\x1b"), "abc\\x1b"); /* cut at a whole escape */
	struct vis_buf v = { b, sizeof(b), 0, 0 };
	b[0] = '\0';
	const unsigned char cut[] = { 'x', 0xe2, 0x80 };
	CHECK_EQ_I(vis_run(cut, sizeof(cut), 0, vis_buf_emit, &v), 1); /* the cut character waits */
	CHECK_STR(b, "x");
	CHECK_EQ_I(vis_run(cut + 1, 2, 1, vis_buf_emit, &v), 2); /* at the end: shown as bytes */
	CHECK_STR(b, "x\\xe2\\x80");
}

/* The man page and completion forms of an option table (aorta help --man /
 * --options): roff escapes (a backslash, a line starting with '.', '-' in
 * option names), one .TP per option plus -h; the names one per line. */
static void test_option_table_as_man_page_and_words(void)
{
	int b = 0;
	const char *s = NULL;
	struct opt opts[] = {
		OPT_BOOL('q', "dry-run", &b, "a \\ backslash"),
		OPT_STRING(0, "out", &s, "FILE", "first line\n.second starts with a dot"),
		OPT_END(),
	};
	char buf[4096];
	FILE *f = tmpfile();
	CHECK(f != NULL);
	if (!f)
		return;
	opt_help_format = OPT_HELP_MAN;
	opt_usage(f, opts, "aorta x [options]", "Does x.");
	opt_help_format = OPT_HELP_WORDS;
	fputs("--\n", f);
	opt_usage(f, opts, "aorta x", NULL);
	opt_help_format = OPT_HELP_TEXT;
	rewind(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	CHECK_STR(buf, ".SH SYNOPSIS\n.nf\naorta x [options]\n.fi\n"
		       ".SH DESCRIPTION\n.nf\nDoes x.\n.fi\n"
		       ".SH OPTIONS\n"
		       ".TP\n\\fB\\-q\\fR, \\fB\\-\\-dry\\-run\\fR\na \\e backslash\n"
		       ".TP\n\\fB\\-\\-out\\fR \\fIFILE\\fR\nfirst line\n\\&.second starts with a dot\n"
		       ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nshow this help\n"
		       "--\n-q\n--dry-run\n--out\n-h\n--help\n");
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "--signal-child") == 0)
		return signal_child(argv[2], argv[3], argv[4]);
	if (argc == 4 && strcmp(argv[1], "--unit-child") == 0)
		return unit_child(argv[2], argv[3]);
	TEST(test_commit_renames_into_place_and_leaves_no_temp);
	TEST(test_failed_write_leaves_no_file);
	TEST(test_json_escape_and_exact_ms);
	TEST(test_json_writer_nesting_and_commas);
	TEST(test_option_table_parses_and_rejects);
	TEST(test_signal_removes_temporary_files);
	TEST(test_option_table_as_man_page_and_words);
	TEST(test_output_through_links_devices_and_dirs);
	TEST(test_outputs_of_a_command_are_one_unit);
	TEST(test_signal_removes_a_pending_unit);
	TEST(test_visible_text);
	return test_report();
}

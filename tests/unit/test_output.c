/*
 * test_output.c - outputs are complete or absent (fault injection), JSON
 * escaping, exact millisecond printing, and option tables.
 */
#include "testing.h"

#include <sys/stat.h>
#include <unistd.h>

#include "base/options.h"
#include "base/output.h"

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
}

int main(void)
{
	TEST(test_commit_renames_into_place_and_leaves_no_temp);
	TEST(test_failed_write_leaves_no_file);
	TEST(test_json_escape_and_exact_ms);
	TEST(test_json_writer_nesting_and_commas);
	TEST(test_option_table_parses_and_rejects);
	return test_report();
}

/*
 * test_zread.c - the byte-stream reader: plain and gzip files, both
 * inflaters (ISA-L when present, zlib), inline and pipelined inflation,
 * multi-member files, padding, and the errors for corrupt, truncated and
 * trailing-garbage input.
 *
 * The real-trace figures (decompressed length and byte sum of rank0 of
 * ddp_4rank_12steps) come from Python: data = gzip.open(f).read();
 * len(data), sum(data).
 */
#include "base/zread.h"
#include "testing.h"

#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

static char dir[64];

static const char *tmp(const char *name)
{
	static char p[4][256];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

static void write_file(const char *path, const void *b, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return;
	fwrite(b, 1, n, f);
	fclose(f);
}

/* gzip member of b appended to path (mode "ab") or a new file ("wb") */
static void write_gz(const char *path, const char *mode, const void *b, size_t n)
{
	gzFile g = gzopen(path, mode);

	if (!g)
		return;
	gzwrite(g, b, (unsigned)n);
	gzclose(g);
}

/* Reads the whole file through zread in chunks of chunk bytes. */
static enum aorta_status read_all(const char *path, size_t chunk, char **out, size_t *len,
				  struct aorta_error *e, const char **infl)
{
	struct zread *z;
	size_t cap = 1 << 16, n = 0;
	char *b;
	ssize_t r;
	enum aorta_status st = zread_open(path, &z, e);

	*out = NULL;
	*len = 0;
	if (st != AORTA_OK)
		return st;
	if (infl)
		*infl = zread_inflater(z);
	b = malloc(cap);
	for (;;) {
		if (n + chunk > cap) {
			cap = (n + chunk) * 2;
			b = realloc(b, cap);
		}
		r = zread_read(z, b + n, chunk, e);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	zread_close(z);
	if (r < 0) {
		free(b);
		return e->code;
	}
	*out = b;
	*len = n;
	return AORTA_OK;
}

/* Every combination of inflater and pipelining. */
static const char *modes[][2] = {
	{ NULL, NULL }, { "zlib", NULL }, { NULL, "0" }, { "zlib", "0" },
};

static void set_mode(size_t m)
{
	if (modes[m][0])
		setenv("AORTA_ZREAD_INFLATER", modes[m][0], 1);
	else
		unsetenv("AORTA_ZREAD_INFLATER");
	if (modes[m][1])
		setenv("AORTA_ZREAD_THREAD", modes[m][1], 1);
	else
		unsetenv("AORTA_ZREAD_THREAD");
}

/* ~3 MiB of compressible text (above the pipelining threshold) */
static char *make_text(size_t *n)
{
	size_t cap = 3u << 20, k = 0;
	char *b = malloc(cap);
	uint32_t x = 12345;

	while (k + 64 < cap) {
		x = x * 1664525u + 1013904223u;
		k += (size_t)snprintf(b + k, cap - k, "{\"ts\": %u.%03u, \"name\": \"k%u\"},\n",
				      x >> 8, x & 511, x % 97);
	}
	*n = k;
	return b;
}

static void test_plain_and_gzip_round_trip_all_modes(void)
{
	size_t n, got;
	char *text = make_text(&n), *back;
	struct aorta_error e;
	const char *infl;

	write_file(tmp("plain.json"), text, n);
	write_gz(tmp("big.json.gz"), "wb", text, n);
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		static const size_t chunks[] = { 1, 4093, 1 << 20, 16 << 20 };
		set_mode(m);
		for (size_t c = 0; c < 4; c++) {
			if (chunks[c] == 1 && m != 0)
				continue; /* slow; once is enough */
			CHECK_EQ_I(read_all(tmp("big.json.gz"), chunks[c], &back, &got, &e, &infl), AORTA_OK);
			CHECK_EQ_I(got, n);
			CHECK(back && memcmp(back, text, n) == 0);
			if (modes[m][0])
				CHECK_STR(infl, "zlib");
			free(back);
		}
		CHECK_EQ_I(read_all(tmp("plain.json"), 4093, &back, &got, &e, &infl), AORTA_OK);
		CHECK_EQ_I(got, n);
		CHECK(back && memcmp(back, text, n) == 0);
		CHECK_STR(infl, "none");
		free(back);
	}
	set_mode(0);
	free(text);
}

static void test_multi_member_and_zero_padding(void)
{
	char *b;
	size_t n;
	struct aorta_error e;
	static const char zeros[5];

	write_gz(tmp("mm.gz"), "wb", "hello ", 6);
	write_gz(tmp("mm.gz"), "ab", "", 0);
	write_gz(tmp("mm.gz"), "ab", "world", 5);
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		set_mode(m);
		CHECK_EQ_I(read_all(tmp("mm.gz"), 3, &b, &n, &e, NULL), AORTA_OK);
		CHECK_EQ_I(n, 11);
		CHECK(b && memcmp(b, "hello world", 11) == 0);
		free(b);
	}
	set_mode(0);
	FILE *f = fopen(tmp("mm.gz"), "ab");
	if (f) {
		fwrite(zeros, 1, sizeof(zeros), f);
		fclose(f);
	}
	CHECK_EQ_I(read_all(tmp("mm.gz"), 64, &b, &n, &e, NULL), AORTA_OK);
	CHECK_EQ_I(n, 11);
	free(b);
	f = fopen(tmp("mm.gz"), "ab");
	if (f) {
		fputs("junk", f);
		fclose(f);
	}
	CHECK_EQ_I(read_all(tmp("mm.gz"), 64, &b, &n, &e, NULL), AORTA_EINPUT);
	CHECK(strstr(e.msg, "trailing bytes") != NULL);
}

static void test_corrupt_and_truncated_gzip_name_compressed_offset(void)
{
	size_t n, got;
	char *text = make_text(&n), *back;
	struct aorta_error e;
	char want[64];
	FILE *f;

	write_gz(tmp("c.gz"), "wb", text, n);
	free(text);
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		set_mode(m);
		/* truncated at 200000 compressed bytes */
		CHECK_EQ_I(truncate(tmp("c.gz"), 200000), 0);
		CHECK_EQ_I(read_all(tmp("c.gz"), 1 << 20, &back, &got, &e, NULL), AORTA_EINPUT);
		CHECK(strstr(e.msg, "compressed byte 200000") != NULL);
		CHECK(strstr(e.msg, "truncated") != NULL);
		CHECK_STR(e.path, tmp("c.gz"));
	}
	/* a flipped byte inside the deflate data: reported at or after it */
	f = fopen(tmp("c.gz"), "r+b");
	if (f) {
		fseek(f, 1000, SEEK_SET);
		fputc(0xff, f);
		fseek(f, 1001, SEEK_SET);
		fputc(0x00, f);
		fclose(f);
	}
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		set_mode(m);
		CHECK_EQ_I(read_all(tmp("c.gz"), 1 << 20, &back, &got, &e, NULL), AORTA_EINPUT);
		CHECK(strstr(e.msg, "corrupt gzip data at compressed byte") != NULL);
		long long off = atoll(strstr(e.msg, "byte ") + 5);
		CHECK(off >= 1000 && off <= 200000);
	}
	set_mode(0);
	/* a bad header after the magic */
	write_file(tmp("h.gz"), "\x1f\x8b\x07\x00\x00\x00\x00\x00\x00\x03xxxx", 14);
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		set_mode(m);
		CHECK_EQ_I(read_all(tmp("h.gz"), 64, &back, &got, &e, NULL), AORTA_EINPUT);
	}
	set_mode(0);
	snprintf(want, sizeof(want), "compressed byte");
	CHECK(strstr(e.msg, want) != NULL);
}

static void test_empty_missing_and_zread_all(void)
{
	char *b;
	size_t n;
	struct aorta_error e;

	write_file(tmp("empty"), "", 0);
	CHECK_EQ_I(zread_all(tmp("empty"), 0, &b, &n, &e), AORTA_OK);
	CHECK_EQ_I(n, 0);
	CHECK(b && b[0] == '\0');
	free(b);
	write_file(tmp("one"), "\x1f", 1); /* half a magic: plain */
	CHECK_EQ_I(zread_all(tmp("one"), 0, &b, &n, &e), AORTA_OK);
	CHECK_EQ_I(n, 1);
	free(b);
	write_gz(tmp("s.gz"), "wb", "0123456789", 10);
	CHECK_EQ_I(zread_all(tmp("s.gz"), 4, &b, &n, &e), AORTA_OK);
	CHECK_EQ_I(n, 4);
	CHECK_STR(b, "0123");
	free(b);
	CHECK_EQ_I(zread_all(tmp("does-not-exist"), 0, &b, &n, &e), AORTA_EINPUT);
	CHECK(strstr(e.msg, "cannot open") != NULL);
	CHECK(b == NULL);
}

/* A FIFO is opened once: the peeked bytes are handed out again, then the
 * rest of the stream (gzip inflated), so a format sniff costs no reopen. */
static void test_peek_replays_on_a_fifo(void)
{
	char payload[200000];
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (char)('a' + (i * 7) % 26);
	write_gz(tmp("p.gz"), "wb", payload, sizeof(payload));
	const char *fifo = tmp("fifo");
	unlink(fifo);
	CHECK(mkfifo(fifo, 0600) == 0);
	pid_t pid = fork();
	if (pid == 0) { /* the writer: the gzip file into the FIFO */
		FILE *in = fopen(tmp("p.gz"), "rb"), *out = fopen(fifo, "wb");
		char b[4096];
		size_t n;
		while (in && out && (n = fread(b, 1, sizeof(b), in)) > 0)
			fwrite(b, 1, n, out);
		if (out)
			fclose(out); /* _exit does not flush stdio */
		_exit(0);
	}
	struct zread *z;
	struct aorta_error e = { 0 };
	const char *peek;
	size_t plen;
	CHECK_EQ_I(zread_open(fifo, &z, &e), AORTA_OK);
	CHECK_EQ_I(zread_peek(z, 65536, &peek, &plen, &e), AORTA_OK);
	CHECK_EQ_I(plen, 65536);
	CHECK(memcmp(peek, payload, plen) == 0);
	char *got = malloc(sizeof(payload) + 16);
	size_t n = 0;
	ssize_t r;
	while ((r = zread_read(z, got + n, 7777, &e)) > 0)
		n += (size_t)r;
	CHECK_EQ_I(r, 0);
	CHECK_EQ_I(n, sizeof(payload));
	CHECK(memcmp(got, payload, sizeof(payload)) == 0);
	zread_close(z);
	free(got);
	waitpid(pid, NULL, 0);
	unlink(fifo);
}

/* A size limit names itself; other compressions are named, not called
 * "unknown format". */
static void test_limit_and_other_compressions(void)
{
	char b[100000];
	memset(b, ' ', sizeof(b));
	write_gz(tmp("ws.gz"), "wb", b, sizeof(b));
	struct zread *z;
	struct aorta_error e = { 0 };
	CHECK_EQ_I(zread_open(tmp("ws.gz"), &z, &e), AORTA_OK);
	zread_set_limit(z, 50000, "a test input (TEST_LIMIT)");
	ssize_t r;
	size_t n = 0;
	while ((r = zread_read(z, b, 4096, &e)) > 0)
		n += (size_t)r;
	CHECK_EQ_I(r, -1);
	CHECK(n <= 50000);
	CHECK(strstr(e.msg, "TEST_LIMIT") != NULL);
	zread_close(z);
	static const struct { const char *name, *magic; size_t len; const char *says; } c[] = {
		{ "x.bz2", "BZh91AY&SY\x00\x00", 12, "bzip2 is not supported, decompress first" },
		{ "x.xz", "\xfd" "7zXZ\x00\x00\x04", 8, "xz is not supported" },
		{ "x.zst", "\x28\xb5\x2f\xfd\x00", 5, "zstd is not supported" },
	};
	for (size_t i = 0; i < 3; i++) {
		write_file(tmp(c[i].name), c[i].magic, c[i].len);
		CHECK_EQ_I(zread_open(tmp(c[i].name), &z, &e), AORTA_EINPUT);
		CHECK(strstr(e.msg, c[i].says) != NULL);
	}
	char *w;
	size_t wl;
	CHECK_EQ_I(zread_whole(tmp("ws.gz"), 1000, "a small thing (CAP)", &w, &wl, &e), AORTA_EINPUT);
	CHECK(strstr(e.msg, "CAP") != NULL);
	CHECK(w == NULL);
}

static void test_early_close_with_pipeline_running(void)
{
	size_t n;
	char *text = make_text(&n), buf[100];
	struct zread *z;
	struct aorta_error e;

	write_gz(tmp("early.gz"), "wb", text, n);
	free(text);
	for (int i = 0; i < 20; i++) {
		CHECK_EQ_I(zread_open(tmp("early.gz"), &z, &e), AORTA_OK);
		CHECK(zread_is_gzip(z));
		CHECK_EQ_I(zread_read(z, buf, sizeof(buf), &e), (long long)sizeof(buf));
		zread_close(z); /* producer still has work: must stop and join */
	}
}

static void test_real_trace_length_and_byte_sum(void)
{
	char cmd[1024], path[1024];
	FILE *f;
	struct zread *z;
	struct aorta_error e;
	static unsigned char buf[1 << 20];
	uint64_t sum = 0, len = 0;
	ssize_t r;

	snprintf(cmd, sizeof(cmd), "ls %s/kineto/h200_torch2.11/ddp_4rank_12steps/rank0.* 2>/dev/null",
		 shared_data());
	f = popen(cmd, "r");
	if (!f || !fgets(path, sizeof(path), f)) {
		if (f)
			pclose(f);
		SKIP("shared data not found");
	}
	pclose(f);
	path[strcspn(path, "\n")] = '\0';
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		set_mode(m);
		sum = len = 0;
		CHECK_EQ_I(zread_open(path, &z, &e), AORTA_OK);
		while ((r = zread_read(z, buf, sizeof(buf), &e)) > 0) {
			len += (uint64_t)r;
			for (ssize_t i = 0; i < r; i++)
				sum += buf[i];
		}
		CHECK_EQ_I(r, 0);
		zread_close(z);
		/* python: len(data) == 43436724, sum(data) == 2894905154 */
		CHECK_EQ_I(len, 43436724);
		CHECK_EQ_I(sum, 2894905154LL);
	}
	set_mode(0);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/aorta_tz_XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	TEST(test_plain_and_gzip_round_trip_all_modes);
	TEST(test_multi_member_and_zero_padding);
	TEST(test_corrupt_and_truncated_gzip_name_compressed_offset);
	TEST(test_empty_missing_and_zread_all);
	TEST(test_peek_replays_on_a_fifo);
	TEST(test_limit_and_other_compressions);
	TEST(test_early_close_with_pipeline_running);
	TEST(test_real_trace_length_and_byte_sum);
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return test_report();
}

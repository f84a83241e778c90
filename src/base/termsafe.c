/*
 * termsafe.c - standard output and error through the escaper of
 * base/visible.h (termsafe.h).
 *
 * Design.  A stream of fopencookie(3) per descriptor: the C library's
 * buffering and locking stay as they are (one fprintf is one write call of
 * the cookie, under the stream's lock), the cookie escapes what it is
 * given and writes it whole.  A UTF-8 character cut between two writes is
 * kept for the next (at most 3 bytes).  A write error is the stream's error
 * (errno kept), so main's check of standard output at exit still sees a
 * full disk.  Cost: one pass over the bytes printed.
 */
#include "base/termsafe.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/visible.h"

struct term {
	int fd;
	unsigned char keep[4]; /* a UTF-8 character cut at the end of the last write */
	size_t nkeep;
	int failed;            /* errno of a failed write(2), 0 */
	char out[4096];        /* escaped bytes not yet written */
	size_t nout;
};

static void flush_out(struct term *t)
{
	size_t at = 0;
	while (at < t->nout && !t->failed) {
		ssize_t w = write(t->fd, t->out + at, t->nout - at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			t->failed = w < 0 ? errno : EIO;
			break;
		}
		at += (size_t)w;
	}
	t->nout = 0;
}

static void emit(void *ctx, const char *s, size_t n)
{
	struct term *t = ctx;
	while (n) {
		if (t->nout == sizeof(t->out))
			flush_out(t);
		size_t k = sizeof(t->out) - t->nout < n ? sizeof(t->out) - t->nout : n;
		memcpy(t->out + t->nout, s, k);
		t->nout += k;
		s += k;
		n -= k;
	}
}

static ssize_t term_write(void *c, const char *buf, size_t n)
{
	struct term *t = c;
	const unsigned char *b = (const unsigned char *)buf;
	size_t used = 0;
	if (t->nkeep) { /* complete the character kept from the last write */
		unsigned char tmp[8];
		size_t m = 0;
		memcpy(tmp, t->keep, t->nkeep);
		m = t->nkeep;
		while (m < sizeof(tmp) && used < n)
			tmp[m++] = b[used++];
		size_t done = vis_run(tmp, m, 0, emit, t);
		if (done < t->nkeep) { /* still cut: keep what there is */
			memcpy(t->keep, tmp, m);
			t->nkeep = m;
			flush_out(t);
			return t->failed ? (errno = t->failed, -1) : (ssize_t)n;
		}
		used = done - t->nkeep; /* bytes of b the kept character and what followed took */
		t->nkeep = 0;
	}
	size_t done = vis_run(b + used, n - used, 0, emit, t);
	t->nkeep = n - used - done;
	memcpy(t->keep, b + used + done, t->nkeep);
	flush_out(t);
	if (t->failed) {
		errno = t->failed;
		t->failed = 0;
		return -1;
	}
	return (ssize_t)n;
}

static int term_close(void *c)
{
	struct term *t = c;
	if (t->nkeep) /* a character cut for good: shown as the bytes it was */
		vis_run(t->keep, t->nkeep, 1, emit, t);
	t->nkeep = 0;
	flush_out(t);
	return t->failed ? -1 : 0;
}

static struct term term_out = { .fd = 1 }, term_err = { .fd = 2 };

void termsafe_streams(void)
{
	cookie_io_functions_t io = { .read = NULL, .write = term_write, .seek = NULL, .close = term_close };
	FILE *o = fopencookie(&term_out, "w", io), *e = fopencookie(&term_err, "w", io);
	if (!o || !e) { /* keep the plain streams rather than none */
		if (o)
			fclose(o);
		if (e)
			fclose(e);
		return;
	}
	fflush(stdout);
	fflush(stderr);
	setvbuf(o, NULL, isatty(1) ? _IOLBF : _IOFBF, BUFSIZ);
	setvbuf(e, NULL, _IONBF, 0);
	stdout = o;
	stderr = e;
}

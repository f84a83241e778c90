/*
 * zread.c - a file as a byte stream, gzip inflated on the fly.
 *
 * Design.  zread_open reads the first chunk (4 MiB) of the file and looks at
 * the two magic bytes 1f 8b.  A plain file is then handed out with read(2)
 * straight into the caller's buffer (the first chunk first); nothing is
 * copied twice.  A gzip file goes through an inflater:
 *  - ISA-L igzip, when dlopen("libisal.so.2") succeeds (once per process,
 *    pthread_once); only struct layouts and prototypes come from
 *    <isa-l/igzip_lib.h>, the calls go through dlsym'd pointers, so the
 *    binary runs where ISA-L is absent;
 *  - zlib otherwise (linked).
 * Members of a multi-member file are read one after another (inflate reset at
 * each member end); trailing zero padding after the last member is accepted,
 * any other trailing bytes are an error.  A corrupt stream, or one that ends
 * before its member does, is AORTA_EINPUT naming the compressed byte offset.
 *
 * Pipelining.  Inflate runs at 0.5-1.2 GB/s of output, about the speed of
 * the Kineto scanner, so for gzip files larger than PIPE_MIN_BYTES a second
 * thread inflates into a ring of NSLOT buffers of SLOT_BYTES while the
 * caller consumes the previous ones: the two stages overlap and gzip input
 * costs little more wall time than plain JSON (bench/json_parsers).  The
 * price is one memcpy of the output (about 10 GB/s) and NSLOT * SLOT_BYTES
 * of memory.  Environment overrides, for benchmarks and tests:
 * AORTA_ZREAD_THREAD=0 inflates in the caller's thread, AORTA_ZREAD_INFLATER=
 * zlib|isa-l picks the inflater (isa-l falls back to zlib if absent).
 *
 * Ownership: struct zread owns its descriptor, buffers and thread;
 * zread_close joins the thread and frees everything.  One struct zread per
 * thread (the inflater thread is private to it).
 */
#include "base/zread.h"
#include "base/output.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <isa-l/igzip_lib.h>

#define IN_BYTES (1u << 20)      /* compressed input chunk */
#define SLOT_BYTES (1u << 20)    /* one inflated buffer of the ring (1 MiB: as fast as 4, a quarter of the memory) */
#define NSLOT 4
#define PIPE_MIN_BYTES (256u << 10)

/* ------------------------------------------------------------------ */
/* ISA-L, loaded at run time                                           */
/* ------------------------------------------------------------------ */

static struct {
	void (*init)(struct inflate_state *);
	void (*reset)(struct inflate_state *);
	int (*inflate)(struct inflate_state *);
	int ok;
} isal;
static pthread_once_t isal_once = PTHREAD_ONCE_INIT;

static void isal_load(void)
{
	void *h = dlopen("libisal.so.2", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	/* POSIX allows the object-pointer to function-pointer conversion
	 * that dlsym needs; the memcpy keeps -Wpedantic quiet about it. */
	void *a = dlsym(h, "isal_inflate_init");
	void *b = dlsym(h, "isal_inflate_reset");
	void *c = dlsym(h, "isal_inflate");
	if (!a || !b || !c) {
		dlclose(h);
		return;
	}
	memcpy(&isal.init, &a, sizeof(a));
	memcpy(&isal.reset, &b, sizeof(b));
	memcpy(&isal.inflate, &c, sizeof(c));
	isal.ok = 1; /* the handle stays open for the life of the process */
}

/* ------------------------------------------------------------------ */
/* The reader                                                          */
/* ------------------------------------------------------------------ */

enum infl_kind { INFL_NONE = 0, INFL_ZLIB, INFL_ISAL };

struct zread {
	int fd;
	char *path;
	enum infl_kind kind;

	/* plain files: the first chunk, handed out before read(2) */
	/* gzip: compressed input buffer */
	unsigned char *in;
	size_t in_len, in_pos;  /* valid bytes, consumed bytes */
	long long in_base;      /* file offset of in[0] */
	int in_eof;             /* read(2) returned 0 */

	/* inflater state */
	z_stream zs;
	int zs_live;
	struct inflate_state *is;
	int member_open;        /* inside a gzip member */
	int done;               /* all output produced */
	struct aorta_error err; /* sticky error */
	int failed;

	/* pipeline */
	int threaded;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv_full, cv_free;
	unsigned char *slot[NSLOT];
	size_t slot_len[NSLOT];
	int slot_last[NSLOT];   /* last slot of the stream (or error) */
	unsigned nfull;         /* slots filled and not yet consumed */
	unsigned head, tail;    /* consumer reads head, producer fills tail */
	size_t head_pos;        /* consumed bytes of slot[head] */
	int stop;               /* consumer closing: producer quits */

	/* replay: bytes handed out by zread_peek, read again first */
	char *rp;
	size_t rp_len, rp_pos;
	int peeked;

	/* bound on the decompressed bytes (0: none) and what it is called */
	unsigned long long limit, total;
	const char *limit_what;
	int guarded;            /* declared an input (base/output.h) at the first read */
};

static enum aorta_status sys_fail(struct aorta_error *e, const char *path, const char *what)
{
	int err = errno;
	return aorta_fail(e, status_of_errno(err, AORTA_EINPUT), path, 0, -1, "cannot %s: %s", what,
			  strerror(err));
}

/* Fills z->in with more compressed input (keeping the unconsumed tail).
 * Returns 0, or -1 on a read error. */
static int refill_in(struct zread *z)
{
	if (z->in_pos > 0) {
		memmove(z->in, z->in + z->in_pos, z->in_len - z->in_pos);
		z->in_base += (long long)z->in_pos;
		z->in_len -= z->in_pos;
		z->in_pos = 0;
	}
	while (!z->in_eof && z->in_len < IN_BYTES) {
		ssize_t r = read(z->fd, z->in + z->in_len, IN_BYTES - z->in_len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			sys_fail(&z->err, z->path, "read");
			return -1;
		}
		if (r == 0)
			z->in_eof = 1;
		z->in_len += (size_t)r;
		break; /* one read per refill keeps latency low */
	}
	return 0;
}

static int infl_fail(struct zread *z, long long off, const char *what)
{
	aorta_fail(&z->err, AORTA_EINPUT, z->path, 0, -1, "corrupt gzip data at compressed byte %lld: %s",
		   off, what);
	z->failed = 1;
	return -1;
}

/* Starts the next member at in[in_pos] if there is one.  Returns 1 if a
 * member starts, 0 at the clean end of the file, -1 on error. */
static int next_member(struct zread *z)
{
	for (;;) {
		if (z->in_len - z->in_pos < 2 && !z->in_eof) {
			if (refill_in(z) < 0)
				return -1;
			continue;
		}
		/* skip zero padding after a member */
		while (z->in_pos < z->in_len && z->in[z->in_pos] == 0)
			z->in_pos++;
		if (z->in_pos < z->in_len && z->in_len - z->in_pos < 2 && !z->in_eof)
			continue;
		if (z->in_pos == z->in_len) {
			if (z->in_eof)
				return 0;
			if (refill_in(z) < 0)
				return -1;
			continue;
		}
		if (z->in_len - z->in_pos < 2 || z->in[z->in_pos] != 0x1f || z->in[z->in_pos + 1] != 0x8b)
			return infl_fail(z, z->in_base + (long long)z->in_pos,
					 "trailing bytes after the last gzip member");
		break;
	}
	if (z->kind == INFL_ISAL) {
		isal.reset(z->is);
		z->is->crc_flag = ISAL_GZIP;
	} else {
		if (inflateReset(&z->zs) != Z_OK)
			return infl_fail(z, z->in_base + (long long)z->in_pos, "inflate reset failed");
	}
	z->member_open = 1;
	return 1;
}

/* Inflates up to n bytes into out.  Returns the count (0: end of stream)
 * or -1 with z->err filled. */
static ssize_t inflate_some(struct zread *z, unsigned char *out, size_t n)
{
	size_t got = 0;

	if (z->failed)
		return -1;
	if (n > UINT32_MAX)
		n = UINT32_MAX;
	while (got < n && !z->done) {
		if (!z->member_open) {
			int r = next_member(z);
			if (r < 0)
				return -1;
			if (r == 0) {
				z->done = 1;
				break;
			}
		}
		if (z->in_pos == z->in_len && !z->in_eof) {
			if (refill_in(z) < 0) {
				z->failed = 1;
				return -1;
			}
			continue;
		}
		size_t avail_in = z->in_len - z->in_pos;
		if (z->kind == INFL_ISAL) {
			struct inflate_state *s = z->is;
			s->next_in = z->in + z->in_pos;
			s->avail_in = (uint32_t)avail_in;
			s->next_out = out + got;
			s->avail_out = (uint32_t)(n - got);
			int r = isal.inflate(s);
			size_t used = avail_in - s->avail_in;
			size_t made = (size_t)(s->next_out - (out + got));
			z->in_pos += used;
			got += made;
			if (r < 0)
				return infl_fail(z, z->in_base + (long long)z->in_pos,
						 r == ISAL_INCORRECT_CHECKSUM ? "crc mismatch" :
						 r == ISAL_INVALID_WRAPPER ? "bad gzip header" :
						 "invalid deflate data");
			if (s->block_state == ISAL_BLOCK_FINISH)
				z->member_open = 0;
			else if (!used && !made && z->in_eof && z->in_pos == z->in_len)
				return infl_fail(z, z->in_base + (long long)z->in_len,
						 "unexpected end of file (truncated gzip member)");
		} else {
			z_stream *s = &z->zs;
			s->next_in = z->in + z->in_pos;
			s->avail_in = (uInt)avail_in;
			s->next_out = out + got;
			s->avail_out = (uInt)(n - got);
			int r = inflate(s, Z_NO_FLUSH);
			size_t used = avail_in - s->avail_in;
			size_t made = (size_t)(s->next_out - (out + got));
			z->in_pos += used;
			got += made;
			if (r == Z_STREAM_END)
				z->member_open = 0;
			else if (r == Z_DATA_ERROR || r == Z_NEED_DICT || r == Z_STREAM_ERROR)
				return infl_fail(z, z->in_base + (long long)z->in_pos,
						 s->msg ? s->msg : "invalid deflate data");
			else if (r == Z_MEM_ERROR)
				return infl_fail(z, z->in_base + (long long)z->in_pos, "out of memory");
			else if (r == Z_BUF_ERROR && !used && !made && z->in_eof && z->in_pos == z->in_len)
				return infl_fail(z, z->in_base + (long long)z->in_len,
						 "unexpected end of file (truncated gzip member)");
		}
	}
	return (ssize_t)got;
}

/* ------------------------------------------------------------------ */
/* Pipeline: one producer thread inflating into the ring               */
/* ------------------------------------------------------------------ */

static void *producer(void *arg)
{
	struct zread *z = arg;

	for (;;) {
		pthread_mutex_lock(&z->mu);
		while (z->nfull == NSLOT && !z->stop)
			pthread_cond_wait(&z->cv_free, &z->mu);
		int stop = z->stop;
		unsigned idx = z->tail;
		pthread_mutex_unlock(&z->mu);
		if (stop)
			break;

		/* fill the slot completely unless the stream ends */
		size_t len = 0;
		int last = 0;
		while (len < SLOT_BYTES) {
			ssize_t r = inflate_some(z, z->slot[idx] + len, SLOT_BYTES - len);
			if (r < 0) {
				last = 1;
				break;
			}
			if (r == 0) {
				last = 1;
				break;
			}
			len += (size_t)r;
		}
		pthread_mutex_lock(&z->mu);
		z->slot_len[idx] = len;
		z->slot_last[idx] = last;
		z->tail = (idx + 1) % NSLOT;
		z->nfull++;
		pthread_cond_signal(&z->cv_full);
		pthread_mutex_unlock(&z->mu);
		if (last)
			break;
	}
	return NULL;
}

static ssize_t pipe_read(struct zread *z, unsigned char *buf, size_t n, struct aorta_error *e)
{
	size_t got = 0;

	while (got < n) {
		pthread_mutex_lock(&z->mu);
		while (z->nfull == 0)
			pthread_cond_wait(&z->cv_full, &z->mu);
		unsigned h = z->head;
		pthread_mutex_unlock(&z->mu);

		size_t avail = z->slot_len[h] - z->head_pos;
		size_t take = avail < n - got ? avail : n - got;
		memcpy(buf + got, z->slot[h] + z->head_pos, take);
		z->head_pos += take;
		got += take;
		if (z->head_pos < z->slot_len[h])
			break;
		if (z->slot_last[h]) {
			/* keep the last slot (length exhausted) so later calls
			 * see the end or the error again */
			if (z->failed && got == 0) {
				if (e)
					*e = z->err;
				return -1;
			}
			break;
		}
		pthread_mutex_lock(&z->mu);
		z->head = (h + 1) % NSLOT;
		z->head_pos = 0;
		z->nfull--;
		pthread_cond_signal(&z->cv_free);
		pthread_mutex_unlock(&z->mu);
	}
	return (ssize_t)got;
}

/* ------------------------------------------------------------------ */
/* Public API                                                          */
/* ------------------------------------------------------------------ */

/* Compressions other than gzip, by their magic bytes: named so the user
 * knows what to do, instead of "unknown format" or a JSON error at byte 0. */
static const char *compressed_kind(const unsigned char *b, size_t n)
{
	static const unsigned char bz_block[6] = { 0x31, 0x41, 0x59, 0x26, 0x53, 0x59 };
	static const unsigned char xz[6] = { 0xfd, '7', 'z', 'X', 'Z', 0x00 };
	static const unsigned char zstd[4] = { 0x28, 0xb5, 0x2f, 0xfd };

	if (n >= 10 && b[0] == 'B' && b[1] == 'Z' && b[2] == 'h' && b[3] >= '1' && b[3] <= '9' &&
	    (!memcmp(b + 4, bz_block, 6) || (b[4] == 0x17 && b[5] == 0x72)))
		return "bzip2";
	if (n >= 6 && !memcmp(b, xz, 6))
		return "xz";
	if (n >= 4 && !memcmp(b, zstd, 4))
		return "zstd";
	if (n >= 2 && b[0] == 0x1f && b[1] == 0x9d)
		return "compress (.Z)";
	return NULL;
}

static enum infl_kind pick_inflater(void)
{
	const char *want = getenv("AORTA_ZREAD_INFLATER");

	pthread_once(&isal_once, isal_load);
	if (want && strcmp(want, "zlib") == 0)
		return INFL_ZLIB;
	return isal.ok ? INFL_ISAL : INFL_ZLIB;
}

enum aorta_status zread_open(const char *path, struct zread **out, struct aorta_error *e)
{
	struct zread *z;
	int fd;

	*out = NULL;
	if (strcmp(path, "-") == 0) {
		fd = dup(0); /* standard input; closing ours leaves fd 0 alone */
		if (fd < 0)
			return sys_fail(e, "<stdin>", "read standard input");
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			return sys_fail(e, path, "open");
	}
	z = xcalloc(1, sizeof(*z));
	z->fd = fd;
	z->path = xstrdup(path);
	z->in = xmalloc(IN_BYTES);
	if (refill_in(z) < 0) {
		enum aorta_status code = z->err.code ? z->err.code : AORTA_EINPUT;
		if (e)
			*e = z->err;
		zread_close(z);
		return code;
	}
	const char *other = compressed_kind(z->in, z->in_len);
	if (other) {
		zread_close(z);
		return aorta_fail(e, AORTA_EINPUT, path, 0, 0,
				  "%s is not supported, decompress first (gzip is read directly)", other);
	}
	if (z->in_len >= 2 && z->in[0] == 0x1f && z->in[1] == 0x8b) {
		z->kind = pick_inflater();
		if (z->kind == INFL_ISAL) {
			z->is = xmalloc(sizeof(*z->is));
			isal.init(z->is);
			z->is->crc_flag = ISAL_GZIP;
		} else {
			if (inflateInit2(&z->zs, 16 + MAX_WBITS) != Z_OK) {
				zread_close(z);
				return aorta_fail(e, AORTA_EINTERNAL, path, 0, -1, "cannot initialise zlib");
			}
			z->zs_live = 1;
		}
		z->member_open = 1;

		const char *th = getenv("AORTA_ZREAD_THREAD");
		off_t size = lseek(fd, 0, SEEK_END);
		if (size >= 0 && lseek(fd, (off_t)z->in_len, SEEK_SET) < 0)
			size = -1;
		if ((th == NULL || strcmp(th, "0") != 0) && size >= (off_t)PIPE_MIN_BYTES) {
			for (int i = 0; i < NSLOT; i++)
				z->slot[i] = xmalloc(SLOT_BYTES);
			pthread_mutex_init(&z->mu, NULL);
			pthread_cond_init(&z->cv_full, NULL);
			pthread_cond_init(&z->cv_free, NULL);
			if (pthread_create(&z->th, NULL, producer, z) == 0) {
				z->threaded = 1;
			} else {
				pthread_mutex_destroy(&z->mu);
				pthread_cond_destroy(&z->cv_full);
				pthread_cond_destroy(&z->cv_free);
				for (int i = 0; i < NSLOT; i++) {
					free(z->slot[i]);
					z->slot[i] = NULL;
				}
			}
		}
	}
	*out = z;
	return AORTA_OK;
}

static ssize_t read_raw(struct zread *z, void *buf, size_t n, struct aorta_error *e)
{
	if (n == 0)
		return 0;
	if (z->kind == INFL_NONE) {
		/* the first chunk, then read(2) */
		if (z->in_pos < z->in_len) {
			size_t take = z->in_len - z->in_pos;
			if (take > n)
				take = n;
			memcpy(buf, z->in + z->in_pos, take);
			z->in_pos += take;
			return (ssize_t)take;
		}
		if (z->in_eof)
			return 0;
		for (;;) {
			ssize_t r = read(z->fd, buf, n);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				sys_fail(e, z->path, "read");
				return -1;
			}
			return r;
		}
	}
	if (z->threaded)
		return pipe_read(z, buf, n, e);
	ssize_t r = inflate_some(z, buf, n);
	if (r < 0 && e)
		*e = z->err;
	return r;
}

ssize_t zread_read(struct zread *z, void *buf, size_t n, struct aorta_error *e)
{
	if (n == 0)
		return 0;
	if (!z->guarded) { /* every file read is an input: never an output of the command too */
		z->guarded = 1;
		if (strcmp(z->path, "-") != 0 && out_guard_read(z->path, e))
			return -1;
	}
	if (z->rp_pos < z->rp_len) { /* the peeked bytes first */
		size_t take = z->rp_len - z->rp_pos;
		if (take > n)
			take = n;
		memcpy(buf, z->rp + z->rp_pos, take);
		z->rp_pos += take;
		return (ssize_t)take;
	}
	if (z->limit && z->total <= z->limit && n > z->limit - z->total + 1)
		n = (size_t)(z->limit - z->total + 1); /* one byte past the limit tells it */
	ssize_t r = read_raw(z, buf, n, e);
	if (r > 0 && z->limit) {
		z->total += (unsigned long long)r;
		if (z->total > z->limit) {
			aorta_fail(e, AORTA_EINPUT, z->path, 0, (long long)z->limit,
				   "larger than the %llu MiB limit for %s (%s)", z->limit >> 20,
				   z->limit_what ? z->limit_what : "this input",
				   "is it the right file?");
			return -1;
		}
	}
	return r;
}

enum aorta_status zread_peek(struct zread *z, size_t n, const char **buf, size_t *len,
			     struct aorta_error *e)
{
	if (!z->peeked) {
		z->peeked = 1;
		z->rp = xmalloc(n + 1);
		while (z->rp_len < n) {
			ssize_t r = read_raw(z, z->rp + z->rp_len, n - z->rp_len, e);
			if (r < 0)
				return e ? e->code : AORTA_EINPUT;
			if (r == 0)
				break;
			z->rp_len += (size_t)r;
		}
		z->rp[z->rp_len] = '\0';
		z->total = z->rp_len;
	}
	*buf = z->rp;
	*len = z->rp_len;
	return AORTA_OK;
}

void zread_set_limit(struct zread *z, unsigned long long max_bytes, const char *what)
{
	z->limit = max_bytes;
	z->limit_what = what;
}

enum aorta_status zread_limit(struct zread *z, unsigned long long max_bytes, const char *what,
			      struct aorta_error *e)
{
	struct stat sb;
	zread_set_limit(z, max_bytes, what);
	if (z->kind == INFL_NONE && fstat(z->fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    (unsigned long long)sb.st_size > max_bytes)
		return aorta_fail(e, AORTA_EINPUT, z->path, 0, (long long)max_bytes,
				  "%llu MiB, larger than the %llu MiB limit for %s (is it the right file?)",
				  (unsigned long long)sb.st_size >> 20, max_bytes >> 20, what ? what : "this input");
	return AORTA_OK;
}

const char *zread_path(const struct zread *z)
{
	return z->path;
}

int zread_is_gzip(const struct zread *z)
{
	return z->kind != INFL_NONE;
}

const char *zread_inflater(const struct zread *z)
{
	switch (z->kind) {
	case INFL_ZLIB: return "zlib";
	case INFL_ISAL: return "isa-l";
	default: return "none";
	}
}

void zread_close(struct zread *z)
{
	if (!z)
		return;
	if (z->threaded) {
		pthread_mutex_lock(&z->mu);
		z->stop = 1;
		pthread_cond_signal(&z->cv_free);
		pthread_mutex_unlock(&z->mu);
		pthread_join(z->th, NULL);
		pthread_mutex_destroy(&z->mu);
		pthread_cond_destroy(&z->cv_full);
		pthread_cond_destroy(&z->cv_free);
	}
	for (int i = 0; i < NSLOT; i++)
		free(z->slot[i]);
	if (z->zs_live)
		inflateEnd(&z->zs);
	free(z->is);
	free(z->rp);
	free(z->in);
	free(z->path);
	if (z->fd >= 0)
		close(z->fd);
	free(z);
}

enum aorta_status zread_rest(struct zread *z, char **buf, size_t *len, struct aorta_error *e)
{
	size_t cap = 1 << 16, n = 0;
	char *b = xmalloc(cap + 1);
	*buf = NULL;
	*len = 0;
	for (;;) {
		if (n == cap) {
			cap *= 2;
			b = xrealloc(b, cap + 1);
		}
		ssize_t r = zread_read(z, b + n, cap - n, e);
		if (r < 0) {
			free(b);
			return e && e->code ? e->code : AORTA_EINPUT;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return AORTA_OK;
}

enum aorta_status zread_all(const char *path, size_t max_bytes, char **buf, size_t *len,
			    struct aorta_error *e)
{
	struct zread *z;
	enum aorta_status st;
	size_t cap = 1 << 16, n = 0;
	char *b;

	*buf = NULL;
	*len = 0;
	st = zread_open(path, &z, e);
	if (st != AORTA_OK)
		return st;
	b = xmalloc(cap + 1);
	for (;;) {
		if (max_bytes && n >= max_bytes)
			break;
		if (n == cap) {
			cap *= 2;
			b = xrealloc(b, cap + 1);
		}
		size_t want = cap - n;
		if (max_bytes && want > max_bytes - n)
			want = max_bytes - n;
		ssize_t r = zread_read(z, b + n, want, e);
		if (r < 0) {
			free(b);
			zread_close(z);
			return e ? e->code : AORTA_EINPUT;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	zread_close(z);
	b[n] = '\0';
	*buf = b;
	*len = n;
	return AORTA_OK;
}

enum aorta_status zread_whole(const char *path, size_t cap, const char *what, char **buf,
			      size_t *len, struct aorta_error *e)
{
	enum aorta_status st = zread_all(path, cap + 1, buf, len, e);

	if (st == AORTA_OK && *len > cap) {
		free(*buf);
		*buf = NULL;
		*len = 0;
		return aorta_fail(e, AORTA_EINPUT, path, 0, (long long)cap,
				  "larger than the %zu MiB limit for %s: is it the right file?",
				  cap >> 20, what);
	}
	return st;
}

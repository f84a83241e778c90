/*
 * clock_offsets.c - the --clock-offsets file of analyze, read by the
 * command and handed to the engine as struct clock_given (the engine reads
 * no file): one 'KEY OFFSET_NS' per line, KEY a rank number or a host
 * name, '#' comments.  Errors name the file and line.
 */
#include "cmd/cmds.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/zread.h"

/* bounded so that times and differences of offsets stay in 64 bits */
#define CLOCK_OFFSET_MAX_NS (1LL << 61)

enum aorta_status clock_offsets_load(const char *path, struct clock_given **out, size_t *n,
				     struct aorta_error *e)
{
	char *buf;
	size_t len, cap = 0;
	enum aorta_status s = zread_all(path, 1u << 20, &buf, &len, e);
	struct clock_given *v = NULL;

	*out = NULL;
	*n = 0;
	if (s)
		return s;
	long long line = 0;
	char *save = NULL;
	for (char *ln = strtok_r(buf, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
		line++; /* blank lines are skipped by strtok_r: line numbers count non-empty lines */
		char *h = strchr(ln, '#');
		if (h)
			*h = 0;
		char key[128], num[64], rest[64];
		int got = sscanf(ln, "%127s %63s %63s", key, num, rest);
		if (got <= 0)
			continue;
		char *nend;
		errno = 0;
		long long off = got == 2 ? strtoll(num, &nend, 10) : 0;
		if (got != 2 || *nend || nend == num) {
			free(buf);
			free(v);
			return aorta_fail(e, AORTA_EINPUT, path, line, -1,
					  "expected 'RANK OFFSET_NS' or 'HOST OFFSET_NS' (an integer in ns)");
		}
		/* bounded so that times and differences of offsets stay in 64 bits:
		 * 2^61 ns is 73 years, more than any two clocks of one run differ */
		if (errno == ERANGE || off > CLOCK_OFFSET_MAX_NS || off < -CLOCK_OFFSET_MAX_NS) {
			free(buf);
			free(v);
			return aorta_fail(e, AORTA_EINPUT, path, line, -1,
					  "offset '%s' ns is out of range (at most 2^61 ns, 73 years, either way)", num);
		}
		for (size_t k = 0; k < *n; k++) {
			int r2 = -1;
			char *kend;
			long kr = strtol(key, &kend, 10);
			if (*kend == 0 && kr >= 0 && kr < 1 << 30)
				r2 = (int)kr;
			if (r2 >= 0 ? v[k].rank == r2 : (v[k].rank < 0 && !strcmp(v[k].host, key))) {
				free(buf);
				free(v);
				return aorta_fail(e, AORTA_EINPUT, path, line, -1,
						  "%s '%s' is given a second time (one offset each)",
						  r2 >= 0 ? "rank" : "host", key);
			}
		}
		GROW(v, cap, *n + 1);
		struct clock_given *g = &v[(*n)++];
		memset(g, 0, sizeof(*g));
		char *end;
		long r = strtol(key, &end, 10);
		if (*end == 0 && r >= 0 && r < 1 << 30) {
			g->rank = (int)r;
		} else {
			g->rank = -1;
			snprintf(g->host, sizeof(g->host), "%s", key);
		}
		g->offset_ns = off;
	}
	free(buf);
	if (!*n)
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "no clock offsets in the file "
				  "(expected 'RANK OFFSET_NS' lines)");
	*out = v;
	return AORTA_OK;
}

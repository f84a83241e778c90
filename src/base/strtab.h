/*
 * strtab.h - an arena and a string-interning table.
 *
 * Invariants: a struct arena owns every block it handed out; arena_release
 * frees them all at once (no per-object free).  A struct strtab maps byte
 * strings to dense ids 0..n-1; id 0 is always "" so 0 can mean "no name".
 * Strings live in the table's own arena and stay valid until strtab_release.
 * Interning costs one hash lookup (FNV-1a, open addressing); readers call it
 * once per event name, so kernel names repeated a million times are stored
 * once.  Not thread-safe: each trace owns its own table.
 */
#ifndef AORTA_STRTAB_H
#define AORTA_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct arena {
	struct arena_block *head;
	size_t used_bytes; /* total handed out, for memory accounting */
};

void arena_init(struct arena *a);
void *arena_alloc(struct arena *a, size_t n); /* 16-byte aligned, never NULL */
char *arena_strndup(struct arena *a, const char *s, size_t n);
void arena_release(struct arena *a);

struct strtab {
	struct arena arena;
	const char **str;   /* id -> NUL-terminated string */
	uint32_t *len;      /* id -> length */
	size_t n, cap;
	uint32_t *slots;    /* hash slots: id+1, 0 = empty */
	size_t nslots;
};

void strtab_init(struct strtab *t);
uint32_t strtab_intern(struct strtab *t, const char *s, size_t n);
static inline const char *strtab_get(const struct strtab *t, uint32_t id)
{
	return id < t->n ? t->str[id] : "";
}
void strtab_release(struct strtab *t);

#endif

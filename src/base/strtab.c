/*
 * strtab.c - arena blocks and an open-addressing intern table.
 */
#include "base/strtab.h"
#include "base/error.h"

#include <stdlib.h>
#include <string.h>

struct arena_block {
	struct arena_block *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};

void arena_init(struct arena *a)
{
	a->head = NULL;
	a->used_bytes = 0;
}

void *arena_alloc(struct arena *a, size_t n)
{
	struct arena_block *b = a->head;

	n = (n + 15) & ~(size_t)15;
	if (!b || b->size - b->used < n) {
		size_t sz = n > (1u << 16) ? n : (1u << 16);

		b = xmalloc(sizeof(*b) + sz);
		b->size = sz;
		b->used = 0;
		b->next = a->head;
		a->head = b;
	}
	void *p = b->data + b->used;
	b->used += n;
	a->used_bytes += n;
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *d = arena_alloc(a, n + 1);

	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

void arena_release(struct arena *a)
{
	struct arena_block *b = a->head;

	while (b) {
		struct arena_block *next = b->next;
		free(b);
		b = next;
	}
	a->head = NULL;
	a->used_bytes = 0;
}

/* Hash of a byte string, 8 bytes per round (names are long: kernel
 * signatures run to hundreds of bytes and one byte per round showed up at
 * 5% of a trace read).  Multiply-xorshift mixing; not for adversaries. */
static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0xff51afd7ed558ccdull);
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 29;
	}
	uint64_t t = 0;
	memcpy(&t, s + i, n - i);
	h = (h ^ t) * 0x94d049bb133111ebull;
	h ^= h >> 32;
	return h;
}

static void rehash(struct strtab *t)
{
	size_t ns = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *slots = xcalloc(ns, sizeof(*slots));

	for (size_t id = 0; id < t->n; id++) {
		size_t i = hash_bytes(t->str[id], t->len[id]) & (ns - 1);
		while (slots[i])
			i = (i + 1) & (ns - 1);
		slots[i] = (uint32_t)id + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = ns;
}

void strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	arena_init(&t->arena);
	strtab_intern(t, "", 0);
}

uint32_t strtab_intern(struct strtab *t, const char *s, size_t n)
{
	if ((t->n + 1) * 2 > t->nslots)
		rehash(t);
	size_t i = hash_bytes(s, n) & (t->nslots - 1);
	while (t->slots[i]) {
		uint32_t id = t->slots[i] - 1;
		if (t->len[id] == n && memcmp(t->str[id], s, n) == 0)
			return id;
		i = (i + 1) & (t->nslots - 1);
	}
	size_t cap = t->cap;
	GROW(t->str, cap, t->n + 1);
	GROW(t->len, t->cap, t->n + 1);
	t->str[t->n] = arena_strndup(&t->arena, s, n);
	t->len[t->n] = (uint32_t)n;
	t->slots[i] = (uint32_t)t->n + 1;
	return (uint32_t)t->n++;
}

void strtab_release(struct strtab *t)
{
	arena_release(&t->arena);
	free(t->str);
	free(t->len);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

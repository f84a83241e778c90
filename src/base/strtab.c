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

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
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

uint32_t strtab_find(const struct strtab *t, const char *s, size_t n)
{
	if (!t->nslots)
		return UINT32_MAX;
	size_t i = hash_bytes(s, n) & (t->nslots - 1);
	while (t->slots[i]) {
		uint32_t id = t->slots[i] - 1;
		if (t->len[id] == n && memcmp(t->str[id], s, n) == 0)
			return id;
		i = (i + 1) & (t->nslots - 1);
	}
	return UINT32_MAX;
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

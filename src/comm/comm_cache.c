/*
 * comm_cache.c - which slot of the SM-limited communicator cache a key
 * takes (see comm_cache.h).
 */
#include "comm/comm_cache.h"

enum comm_cache_how comm_cache_slot(struct comm_cache *c, int max_ctas, int cga, int *slot)
{
	enum comm_cache_how how;

	for (int i = 0; i < c->n; i++)
		if (c->e[i].max_ctas == max_ctas && c->e[i].cga == cga) {
			*slot = i;
			return COMM_CACHE_HIT;
		}
	if (c->n == COMM_CACHE_MAX) {
		*slot = c->next_evict;
		c->next_evict = (c->next_evict + 1) % COMM_CACHE_MAX;
		how = COMM_CACHE_EVICT;
	} else {
		*slot = c->n++;
		how = COMM_CACHE_NEW;
	}
	c->e[*slot].max_ctas = max_ctas;
	c->e[*slot].cga = cga;
	return how;
}

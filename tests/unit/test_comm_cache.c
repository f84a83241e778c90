/*
 * test_comm_cache.c - the SM-limited communicator cache's slots
 * (src/comm/comm_cache.c): hits, free slots, round-robin eviction.
 */
#include <string.h>

#include "comm/comm_cache.h"
#include "testing.h"

static void test_hits_and_new_slots(void)
{
	struct comm_cache c;
	int slot = -1;
	memset(&c, 0, sizeof(c));
	CHECK_EQ_I(comm_cache_slot(&c, 8, -1, &slot), COMM_CACHE_NEW);
	CHECK_EQ_I(slot, 0);
	CHECK_EQ_I(comm_cache_slot(&c, 16, -1, &slot), COMM_CACHE_NEW);
	CHECK_EQ_I(slot, 1);
	CHECK_EQ_I(comm_cache_slot(&c, 8, 2, &slot), COMM_CACHE_NEW); /* another CGA size is another key */
	CHECK_EQ_I(slot, 2);
	CHECK_EQ_I(comm_cache_slot(&c, 16, -1, &slot), COMM_CACHE_HIT);
	CHECK_EQ_I(slot, 1);
	CHECK_EQ_I(comm_cache_slot(&c, 8, -1, &slot), COMM_CACHE_HIT);
	CHECK_EQ_I(slot, 0);
	CHECK_EQ_I(c.n, 3);
}

static void test_full_cache_evicts_round_robin(void)
{
	struct comm_cache c;
	int slot = -1;
	memset(&c, 0, sizeof(c));
	for (int i = 0; i < COMM_CACHE_MAX; i++) {
		CHECK_EQ_I(comm_cache_slot(&c, i + 1, -1, &slot), COMM_CACHE_NEW);
		CHECK_EQ_I(slot, i);
	}
	CHECK_EQ_I(comm_cache_slot(&c, 100, -1, &slot), COMM_CACHE_EVICT);
	CHECK_EQ_I(slot, 0);
	CHECK_EQ_I(comm_cache_slot(&c, 101, -1, &slot), COMM_CACHE_EVICT);
	CHECK_EQ_I(slot, 1);
	/* the replaced keys are gone, the new ones found */
	CHECK_EQ_I(comm_cache_slot(&c, 100, -1, &slot), COMM_CACHE_HIT);
	CHECK_EQ_I(slot, 0);
	CHECK_EQ_I(comm_cache_slot(&c, 1, -1, &slot), COMM_CACHE_EVICT);
	CHECK_EQ_I(slot, 2);
	CHECK_EQ_I(c.e[2].max_ctas, 1);
	CHECK_EQ_I(c.n, COMM_CACHE_MAX);
	/* the turn wraps around */
	for (int i = 3; i < COMM_CACHE_MAX; i++)
		CHECK_EQ_I(comm_cache_slot(&c, 200 + i, -1, &slot), COMM_CACHE_EVICT);
	CHECK_EQ_I(comm_cache_slot(&c, 300, -1, &slot), COMM_CACHE_EVICT);
	CHECK_EQ_I(slot, 0);
}

int main(void)
{
	TEST(test_hits_and_new_slots);
	TEST(test_full_cache_evicts_round_robin);
	return test_report();
}

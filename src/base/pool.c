/*
 * pool.c - threads for independent work items (pool.h).
 */
#include "base/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/error.h"

struct pool_run {
	pool_fn fn;
	void *arg;
	size_t n;
	atomic_size_t next;
};

struct pool_thread {
	struct pool_run *run;
	size_t worker;
};

static void *pool_main(void *x)
{
	struct pool_thread *t = x;
	for (size_t i; (i = atomic_fetch_add(&t->run->next, 1)) < t->run->n;)
		t->run->fn(t->run->arg, t->worker, i);
	return NULL;
}

void pool_for(size_t nt, size_t n, pool_fn fn, void *arg)
{
	struct pool_run run = { .fn = fn, .arg = arg, .n = n };
	atomic_init(&run.next, 0);
	if (nt > n)
		nt = n;
	if (!nt)
		nt = 1;
	struct pool_thread *t = xmalloc(nt * sizeof(*t));
	pthread_t *th = xmalloc(nt * sizeof(*th));
	size_t started = 1; /* threads 1 .. started - 1 run; one that cannot start is done without */
	for (; started < nt; started++) {
		t[started] = (struct pool_thread){ &run, started };
		if (pthread_create(&th[started], NULL, pool_main, &t[started]) != 0)
			break;
	}
	t[0] = (struct pool_thread){ &run, 0 };
	pool_main(&t[0]);
	for (size_t q = 1; q < started; q++)
		pthread_join(th[q], NULL);
	free(th);
	free(t);
}

size_t pool_threads(int requested)
{
	if (requested > 0)
		return (size_t)requested;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	return cores > 0 ? (size_t)cores : 1;
}

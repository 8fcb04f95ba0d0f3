/* SPDX-License-Identifier: MIT */
/* util/parallel.c - see parallel.h. */
#include <pthread.h>

#include "util/parallel.h"

typedef struct job {
	fpl_range_fn fn;
	void *ctx;
	size_t lo, hi;
	int t;
} job;

static void *run(void *arg)
{
	job *j = arg;
	j->fn(j->ctx, j->lo, j->hi, j->t);
	return NULL;
}

void fpl__spawn(void *(*fn)(void *), void *jobs, size_t size, int threads)
{
	pthread_t tid[FPL_MAX_THREADS];
	int started[FPL_MAX_THREADS] = { 0 }, t;
	char *j = jobs;

	if (threads > FPL_MAX_THREADS)
		threads = FPL_MAX_THREADS;
	for (t = 1; t < threads; t++)
		started[t] = pthread_create(&tid[t], NULL, fn, j + (size_t)t * size) == 0;
	fn(j);
	for (t = 1; t < threads; t++) {
		if (started[t])
			pthread_join(tid[t], NULL);
		else
			fn(j + (size_t)t * size);
	}
}

int fpl__parallel(size_t n, int threads, fpl_range_fn fn, void *ctx)
{
	pthread_t tid[FPL_MAX_THREADS];
	job jobs[FPL_MAX_THREADS];
	int started[FPL_MAX_THREADS] = { 0 };
	size_t per;
	int t;

	if (threads > FPL_MAX_THREADS)
		threads = FPL_MAX_THREADS;
	if (threads <= 1 || n < 65536) {
		fn(ctx, 0, n, 0);
		return 0;
	}
	/* a multiple of 4096 covering n: ceil(n / threads), not the floor,
	 * which lost the last n % threads elements when the floor was a
	 * multiple of 4096 (n = 2^19 + 1 on two threads) */
	per = ((n + (size_t)threads - 1) / (size_t)threads + 4095) & ~(size_t)4095;
	for (t = 0; t < threads; t++) {
		size_t lo = per * (size_t)t, hi = lo + per;
		jobs[t] = (job){ fn, ctx, lo < n ? lo : n, hi < n ? hi : n, t };
	}
	for (t = 1; t < threads; t++) {
		started[t] = pthread_create(&tid[t], NULL, run, &jobs[t]) == 0;
	}
	run(&jobs[0]);
	for (t = 1; t < threads; t++) {
		if (started[t])
			pthread_join(tid[t], NULL);
		else
			run(&jobs[t]);
	}
	return 0;
}

int fpl__spawn_threads(int threads, size_t units, double work, double min_work)
{
	if (threads > FPL_MAX_THREADS)
		threads = FPL_MAX_THREADS;
	if (threads < 1 || work < min_work)
		threads = 1;
	if ((size_t)threads > units)
		threads = units ? (int)units : 1;
	return threads;
}

void fpl__spawn_share(size_t units, int threads, int t, size_t *lo, size_t *hi)
{
	const size_t per = (units + (size_t)threads - 1) / (size_t)threads;
	const size_t l = per * (size_t)t, h = l + per;

	*lo = l < units ? l : units;
	*hi = h < units ? h : units;
}

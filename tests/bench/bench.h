/* SPDX-License-Identifier: MIT */
/*
 * tests/bench/bench.h - shared helpers for the benchmarks: a monotonic
 * clock (or the thread's CPU time), best-of-k timing (these machines are noisy: the minimum is the
 * least disturbed run) and reproducible inputs.
 */
#ifndef FPLAB_BENCH_H
#define FPLAB_BENCH_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fplab/kernels.h>

/* FPLAB_BENCH_CLOCK=thread: the calling thread's CPU time instead of the
 * wall clock, for one-thread figures on a machine shared with other
 * loads (time slices given to them are not counted; memory stalls are);
 * meaningless for work done on other threads. */
static inline int bench_thread_clock(void)
{
	const char *e = getenv("FPLAB_BENCH_CLOCK");
	return e && e[0] == 't';
}

static inline double bench_now(void)
{
	static int clk = -1;
	struct timespec t;
	if (clk < 0)
		clk = bench_thread_clock();
	clock_gettime(clk ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Best of `reps` runs of fn(ctx), in seconds. */
static inline double bench_best(void (*fn)(void *), void *ctx, int reps)
{
	double best = 1e30;
	int i;

	for (i = 0; i < reps; i++) {
		double t0 = bench_now(), t;
		fn(ctx);
		t = bench_now() - t0;
		if (t < best)
			best = t;
	}
	return best;
}

/* Normally distributed values (Box-Muller on xorshift), scale sigma. */
static inline void bench_gauss(double *x, size_t n, double sigma, uint64_t seed)
{
	uint64_t s = seed | 1;
	size_t i;

	for (i = 0; i < n; i++) {
		double u1, u2;
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		u1 = ((double)(s >> 11) + 0.5) * 0x1p-53;
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		u2 = (double)(s >> 11) * 0x1p-53;
		x[i] = sigma * __builtin_sqrt(-2 * __builtin_log(u1)) * __builtin_cos(6.283185307179586 * u2);
	}
}

/* Whether a bench measures its floors under the avx2 set too (for
 * AVX2-only CPUs): the selected set is avx512 and FPLAB_BENCH_AVX2 is
 * not 0. */
static inline int bench_want_avx2(void)
{
	const char *e = getenv("FPLAB_BENCH_AVX2");

	return !(e && e[0] == '0') && strcmp(fpl_kernels_selected(), "avx512") == 0;
}

static inline int bench_reps(void)
{
	const char *e = getenv("FPLAB_BENCH_REPS");
	int r = e ? atoi(e) : 5;
	return r > 0 ? r : 5;
}

#endif

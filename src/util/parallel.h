/* SPDX-License-Identifier: MIT */
/*
 * util/parallel.h - a minimal parallel-for over index ranges.
 *
 * fpl__parallel(n, threads, fn, ctx) splits [0, n) into `threads`
 * contiguous ranges (boundaries multiples of 4096) and calls
 * fn(ctx, lo, hi, t) once per range, range t in thread t (t = 0 in the
 * caller).  Small n or threads <= 1 runs everything in the caller.
 * Returns 0.  A thread that cannot be started has its range run in the
 * caller instead: the results are the same, only slower.
 */
#ifndef FPLAB_UTIL_PARALLEL_H
#define FPLAB_UTIL_PARALLEL_H

#include <stddef.h>

#define FPL_MAX_THREADS 64

typedef void (*fpl_range_fn)(void *ctx, size_t lo, size_t hi, int t);

int fpl__parallel(size_t n, int threads, fpl_range_fn fn, void *ctx);

/*
 * fn(job 0), ..., fn(job threads-1), job t at (char *)jobs + t * size:
 * job 0 in the caller, the others in threads (1 <= threads <=
 * FPL_MAX_THREADS), all finished on return.  A thread that cannot be
 * started has its job run in the caller instead.  fn's return value is
 * ignored.
 */
void fpl__spawn(void *(*fn)(void *), void *jobs, size_t size, int threads);

/*
 * How many of `threads` to give fpl__spawn for `units` pieces of work
 * (row blocks, tiles) that total `work` operations: at most
 * FPL_MAX_THREADS and units (and at least 1), and 1 when work < min_work,
 * too little to pay for starting threads.
 */
int fpl__spawn_threads(int threads, size_t units, double work, double min_work);

/* Job t's pieces [*lo, *hi) when units are dealt to `threads` jobs in runs
 * of ceil(units / threads) (the last runs short or empty). */
void fpl__spawn_share(size_t units, int threads, int t, size_t *lo, size_t *hi);

#endif

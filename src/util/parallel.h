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

#endif

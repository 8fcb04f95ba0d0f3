/* SPDX-License-Identifier: MIT */
/*
 * accum/exact_internal.h - the exact accumulator's private interface, for
 * the simulators (dot products, GEMM, reductions) built on it.
 *
 * The invariant a reader must know: an fpl_exact's value is the integer
 * limb[] (two's complement, 72 x 64 bits) times 2^FPL_EXACT_LSB, plus the
 * special counts; every function here keeps it exact (exact.c argues the
 * range).  Like the engine's _ix functions, fpl__exact_round_ix takes the
 * draw index explicitly and returns its flags through *fl, reading st
 * only, so that threads can share one state.
 */
#ifndef FPLAB_ACCUM_EXACT_INTERNAL_H
#define FPLAB_ACCUM_EXACT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/exact.h>

/* fpl_exact_round with draw `idx`: flags are OR-ed into *fl (not counted),
 * st is not written. */
double fpl__exact_round_ix(const fpl_exact *e, const fpl_format *f, fpl_rnd rnd,
			   const fpl_state *st, uint64_t idx, unsigned *fl);

/* e += sum of a[i] * b[i*stride] for i = 0..n-1, exactly (a row of A times
 * a column of a row-major B: stride = B's row length). */
void fpl__exact_add_dot(fpl_exact *e, const double *a, const double *b, size_t n,
			size_t stride);

/* The same for binary32 operands (every binary32 product is exact in the
 * accumulator too: it is a product of binary64 values). */
void fpl__exact_add_dot_f32(fpl_exact *e, const float *a, const float *b, size_t n,
			    size_t stride);

/* 1 when the value is a finite zero (no special terms, every limb 0). */
int fpl__exact_is_zero(const fpl_exact *e);

/*
 * The finite value's magnitude as fpl_round_parts wants it: 0 for zero
 * (*hi = *lo = 0, *exp = FPL_EXACT_LSB, *sticky = 0); otherwise 1, with
 * |value| = (hi*2^64 + lo + t) * 2^exp, bit 63 of hi set (the window
 * starts at the leading bit), t = 0 when *sticky is 0 and 0 < t < 1
 * otherwise.  *negative is the sign.  Special counts are ignored.
 */
int fpl__exact_window(const fpl_exact *e, int *negative, int64_t *exp, uint64_t *hi,
		      uint64_t *lo, int *sticky);

#endif

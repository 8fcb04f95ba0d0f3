/* SPDX-License-Identifier: MIT */
/*
 * fplab/exact.h - an exact accumulator for sums and dot products of
 * binary64 values: the reference every simulated accumulation is
 * measured against, computed by the library itself (no MPFR at run time).
 *
 * An fpl_exact holds a real number exactly: any finite sum of binary64
 * values and of exact products of two binary64 values (up to 2^60 terms),
 * as a fixed-point integer wide enough for every such term (products
 * range from 2^-2148 to below 2^2048).  Infinities and NaNs are counted
 * apart, so that the value is NaN when a NaN was added or +inf and -inf
 * both were, +-inf when only one kind of infinity was, the finite sum
 * otherwise.  The struct is plain data: copy it freely, no allocation,
 * no clean-up.
 */
#ifndef FPLAB_EXACT_H
#define FPLAB_EXACT_H

#include <stdint.h>

#include <fplab/export.h>
#include <fplab/format.h>
#include <fplab/state.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Limbs of 64 bits: bit 0 of limb 0 weighs 2^FPL_EXACT_LSB. */
#define FPL_EXACT_LSB (-2176)
#define FPL_EXACT_LIMBS 72

typedef struct fpl_exact {
	uint64_t limb[FPL_EXACT_LIMBS];	/* two's complement, little-endian limbs */
	uint64_t nan, pinf, ninf;	/* NaN, +inf and -inf terms added */
} fpl_exact;

/* Zero, no special terms. */
FPL_API void fpl_exact_init(fpl_exact *e);
/* e += x, exactly (an infinity or NaN is counted). */
FPL_API void fpl_exact_add(fpl_exact *e, double x);
/* e += a*b, exactly (inf*0 counts as a NaN, as IEEE's invalid). */
FPL_API void fpl_exact_add_product(fpl_exact *e, double a, double b);
/* e += x (another accumulator: partial sums of threads). */
FPL_API void fpl_exact_add_exact(fpl_exact *e, const fpl_exact *x);
/* e = -e (+inf and -inf counts swap). */
FPL_API void fpl_exact_neg(fpl_exact *e);
/* -1, 0 or 1 by the sign of the value; 2 when it is NaN.  +-inf: +-1. */
FPL_API int fpl_exact_sign(const fpl_exact *e);
/* The value correctly rounded to binary64, nearest-even (overflow gives
 * +-inf; an exact zero is +0). */
FPL_API double fpl_exact_value(const fpl_exact *e);
/* The value rounded once into f in mode rnd, through fpl_round_parts:
 * the same result, flags, counters and draw as rounding the real number
 * itself (an exact zero rounds as +0; specials as fpl_round rounds them). */
FPL_API double fpl_exact_round(const fpl_exact *e, const fpl_format *f, fpl_rnd rnd,
			       fpl_state *st);
/* |y - e| rounded to binary64 (nearest-even), exactly computed before that
 * one rounding; NaN when e or y is NaN; +inf when one is infinite and
 * they differ, 0 when both are the same infinity. */
FPL_API double fpl_exact_abserr(const fpl_exact *e, double y);
/* |y - e| / |e| in binary64, faithfully rounded: one of the two binary64
 * values around the true ratio r, with an error below 0.5 ulp + 2^-63 r
 * (so below one ulp; it is the nearest value unless r lies within 2^-63 r
 * of a midpoint): the quotient of the leading 128 bits of |y - e| by the
 * leading 64 bits of |e|, rounded once.  0 when y equals e (both zero included),
 * +inf when e is zero and y is not, NaN when e or y is NaN; infinities as
 * fpl_exact_abserr. */
FPL_API double fpl_exact_relerr(const fpl_exact *e, double y);

#ifdef __cplusplus
}
#endif
#endif

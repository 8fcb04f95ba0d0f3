/* SPDX-License-Identifier: MIT */
/*
 * fplab/ops.h - scalar operations in an emulated format.
 *
 * Contract shared by every function here:
 *  - Operands are binary64 values, normally values of `f`; they are used
 *    exactly as given (after DAZ when f->daz: an operand with
 *    0 < |x| < 2^emin is read as +-0).  The exact result is rounded ONCE
 *    into `f` in mode `rnd`: no double rounding, in any mode.
 *  - Flags are OR-ed into st->flags and counted in st->count; `st` must
 *    not be NULL.  Stochastic modes and flips use draw st->counter, then
 *    st->counter is incremented (once per call, whatever the mode).
 *  - Special values (fplab(3), section Semantics): NaN operands propagate
 *    (x86 rule: first NaN, quieted; or the canonical NaN), invalid
 *    operations give the default NaN and raise invalid, signaling NaN
 *    operands raise invalid.  Exact zero sums are +0 except in tn (-0).
 *  - Overflow: ne/na/nz give inf, tz/od give max, tp/tn by sign,
 *    stochastic modes give inf when the draw (or the magnitude) rounds
 *    away, max otherwise.  In formats without inf the inf becomes NaN, or
 *    max with FPL_FLAG_SATURATED when f->overflow is FPL_OVF_SATURATE or
 *    f->specials is FPL_SPEC_NONE.
 *  - Underflow is raised when the result is tiny (f->tininess) and inexact.
 */
#ifndef FPLAB_OPS_H
#define FPLAB_OPS_H

#include <stdint.h>

#include <fplab/export.h>
#include <fplab/format.h>
#include <fplab/state.h>

#ifdef __cplusplus
extern "C" {
#endif

/* x rounded into f.  DAZ does not apply: x is a binary64 value, not a
 * value of f.  An infinite x stays infinite in ieee formats; elsewhere it
 * becomes NaN (invalid) or +-max when saturating (saturated). */
FPL_API double fpl_round(const fpl_format *f, double x, fpl_rnd rnd, fpl_state *st);

/*
 * A finite value given exactly, wider than binary64, rounded once into f:
 *
 *     x = (-1)^negative * (hi * 2^64 + lo + t) * 2^exp
 *
 * where t = 0 when sticky is 0, and 0 < t < 2^(L-128) when sticky is
 * nonzero, L being the bit length of hi * 2^64 + lo: "a little more" in
 * magnitude, below a 128-bit window that starts at the leading bit.
 * Every such t gives the same result, flags and stochastic decision (the
 * rounding looks at most 53 + 32 bits below the leading bit), so a
 * caller that truncates a real number to 128 significant bits and sets
 * sticky when bits were lost (MPFR's round-toward-zero and a nonzero
 * ternary value) gets the correct rounding of that number, stochastic
 * modes included.  hi = lo = 0 with sticky 0 is a zero of that sign,
 * rounded as fpl_round rounds +-0; with sticky nonzero it is a nonzero
 * value below every format's resolution (a deep underflow).  exp may lie
 * far outside binary64's range: overflow and underflow are those of the
 * exact value.  Otherwise the contract above and fpl_round's hold: the
 * same flags and counters, draw st->counter and one increment, flips,
 * and no DAZ (x is not a value of f).  For an x that binary64 holds, the
 * result is fpl_round(f, x, rnd, st), bit for bit and flag for flag.
 */
FPL_API double fpl_round_parts(const fpl_format *f, int negative, int64_t exp, uint64_t hi,
			       uint64_t lo, int sticky, fpl_rnd rnd, fpl_state *st);

/* x, a value of `from` (whose DAZ applies), rounded into `to`. */
FPL_API double fpl_convert(const fpl_format *to, const fpl_format *from, double x,
			   fpl_rnd rnd, fpl_state *st);

FPL_API double fpl_add(const fpl_format *f, double a, double b, fpl_rnd rnd, fpl_state *st);
FPL_API double fpl_sub(const fpl_format *f, double a, double b, fpl_rnd rnd, fpl_state *st);
FPL_API double fpl_mul(const fpl_format *f, double a, double b, fpl_rnd rnd, fpl_state *st);
/* a/b; x/0 for finite nonzero x gives +-inf (+-max or NaN as overflow does
 * where there is no inf) and raises divide-by-zero. */
FPL_API double fpl_div(const fpl_format *f, double a, double b, fpl_rnd rnd, fpl_state *st);
/* sqrt(-0) = -0; sqrt of a negative number is invalid. */
FPL_API double fpl_sqrt(const fpl_format *f, double a, fpl_rnd rnd, fpl_state *st);
/* a*b + c with a single rounding.  An exact zero result takes the sign
 * rule of the sum (a*b has the sign of the product). */
FPL_API double fpl_fma(const fpl_format *f, double a, double b, double c, fpl_rnd rnd,
		       fpl_state *st);

/* IEEE 754-2019 minimum and maximum: a NaN operand gives NaN, -0 < +0.
 * The result is rounded into f (a no-op for values of f). */
FPL_API double fpl_min(const fpl_format *f, double a, double b, fpl_rnd rnd, fpl_state *st);
FPL_API double fpl_max(const fpl_format *f, double a, double b, fpl_rnd rnd, fpl_state *st);

/* Quiet comparison of values of f (DAZ applies): -1, 0 or 1, or 2 when
 * unordered.  A signaling NaN raises invalid. */
FPL_API int fpl_compare(const fpl_format *f, double a, double b, fpl_state *st);

#ifdef __cplusplus
}
#endif
#endif

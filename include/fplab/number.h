/* SPDX-License-Identifier: MIT */
/*
 * fplab/number.h - numbers as people write them, read exactly.
 *
 * A decimal such as 0.1, 1e-400 or 65519.99999999999999999 is not a
 * binary64 value.  Reading it with strtod and rounding the result into a
 * format rounds twice, and the two roundings can disagree with one (a
 * decimal just above a tie of the format, a decimal beyond binary64's
 * range).  Every fplab reader of text (the CLI's `round` and `calc`, the
 * tensor reader behind `hist` and the simulators) goes through
 * fpl_parse_number() and rounds the number itself once.
 *
 * Grammar: strtod's (decimal or C99 hex float, optional sign, "inf",
 * "infinity", "nan" in any case), the whole string, no blanks; and NaNs
 * with their bits: "nan(0xP)" (quiet) and "snan(0xP)" or "snan"
 * (signalling, payload 1), optionally signed, P the binary64 payload (the
 * 51 fraction bits below the quiet bit, decimal or 0x hex; nonzero for
 * snan), so every binary64 NaN can be written and read back.
 */
#ifndef FPLAB_NUMBER_H
#define FPLAB_NUMBER_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/export.h>
#include <fplab/format.h>
#include <fplab/state.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A finite nonzero number binary64 cannot hold, as read: its magnitude
 * truncated toward zero to 128 significant bits, (hi*2^64 + lo) 2^exp, and
 * sticky when nonzero bits were lost; these are the arguments of
 * fpl_round_parts(), so rounding it into a format is the one correct
 * rounding of the number.  A number below MPFR's widest exponent range
 * (about 2^-(2^62): 1e-99999999999999999999) has hi = lo = 0 and sticky
 * set; one above it is MPFR's largest number with sticky set: both round
 * like the number itself in every format.
 */
typedef struct fpl_wide {
	int negative;
	int64_t exp;
	uint64_t hi, lo;
	int sticky;
} fpl_wide;

/*
 * Parse s.  Returns 0 when *out is the number itself (inf, nan, and every
 * numeral binary64 holds exactly), 1 when binary64 cannot hold it (*w is
 * filled and *out is its nearest binary64, rounded to nearest-even once
 * from the number: possibly +-0 or +-inf), FPL_EPARSE when s is not a
 * number.  Thread-safe; MPFR's exponent range of the calling thread is
 * widened during the call and restored.
 */
FPL_API int fpl_parse_number(const char *s, double *out, fpl_wide *w);

/* The number of *w rounded once into f (fpl_round_parts). */
FPL_API double fpl_round_wide(const fpl_format *f, const fpl_wide *w, fpl_rnd rnd,
			      fpl_state *st);

/* |y - v| / |v| for the number v of *w, rounded to nearest binary64 from
 * the 128-bit truncation of v (the bits below it, in sticky, change the
 * result by less than 2^-126 relative); 1 when v is below MPFR's range
 * and y is 0. */
FPL_API double fpl_wide_relerr(const fpl_wide *w, double y);

/* floor(log2 |v|) of the number v of *w, exactly (INT64_MIN when v is
 * below MPFR's range). */
FPL_API int64_t fpl_wide_ilogb(const fpl_wide *w);

/* *w multiplied by the finite positive binary64 s: the product truncated
 * to 128 bits again, the lost bits in sticky, so rounding the result is
 * rounding the exact product x*s once. */
FPL_API void fpl_wide_scale(fpl_wide *w, double s);

/*
 * The binary64 to hold for the number v of *w when what reads it later
 * rounds it into f in mode rnd (sr_bits: R of sp, 1..32), possibly after
 * scaling it by a power of two: *out is v rounded to odd into binary64
 * when f has at most 53 - K significant bits and its least quantum is at
 * least 2^(K-1074), K = 2 (R + 1 for sp) -- then rounding *out into f
 * is rounding v itself (value and flags, overflow and underflow
 * included) -- and otherwise v rounded into binary64 in rnd, which is v
 * rounded once when f is binary64 itself (its flags are then the read's,
 * not counted by the later rounding).  Returns 1 when the later rounding
 * of *out into f (unscaled, or scaled by 2^k while v 2^k and v stay in
 * binary64's normal range) equals that of v, 0 when it may not (sp with
 * p + R > 52, se or sp into a 52- or 53-bit format, a 52-bit format, a
 * number beyond binary64's range into a format whose top binade is
 * binary64's in a mode other than ne, na, nz).  Section
 * "Reading a number once" of number.c proves it.
 */
FPL_API int fpl_wide_hold(const fpl_wide *w, const fpl_format *f, fpl_rnd rnd, int sr_bits,
			  double *out);

/* A number of a read that binary64 cannot hold, and where it stands
 * among the values of that read. */
typedef struct fpl_inexact {
	size_t pos;
	fpl_wide w;
} fpl_inexact;

#ifdef __cplusplus
}
#endif
#endif

/* SPDX-License-Identifier: MIT */
/*
 * codec.c - encodings.  A value of f is (-1)^s 2^(E-bias) (1 + F/2^m) for
 * a biased exponent E > 0, and (-1)^s 2^emin F/2^m for E = 0; both are
 * exact binary64 values, built with ldexp.  Specials follow the format's
 * rule: ieee top exponent (F = 0 inf, else NaN), fn all-ones code NaN,
 * fnuz 1000..0 NaN, e8m0 unsigned with 0xff NaN, none: every code finite.
 */
#include <math.h>

#include "engine/internal.h"

static uint64_t mask(int bits)
{
	return bits >= 64 ? ~0ull : (1ull << bits) - 1;
}

double fpl_decode(const fpl_format *f, uint64_t c)
{
	const int m = f->m, nb = f->nbits;
	uint64_t E, F, top = mask(f->e);
	int sign;
	double v;

	c &= mask(nb);
	if (f->specials == FPL_SPEC_E8M0)
		return c == 0xff ? fpl__nan_canonical(f) : ldexp(1.0, (int)c - f->bias);
	if (f->specials == FPL_SPEC_FNUZ && c == 1ull << (nb - 1))
		return fpl__nan_canonical(f);
	sign = (int)(c >> (nb - 1));
	E = (c >> m) & top;
	F = c & mask(m);
	if (E == top && (f->specials == FPL_SPEC_IEEE || (f->specials == FPL_SPEC_FN && F == mask(m)))) {
		if (F == 0)
			return sign ? -INFINITY : INFINITY;
		return fpl__from_bits((sign ? FPL__SIGN_BIT : 0) | FPL__EXP_MASK | (F << (52 - m)));
	}
	if (E == 0)
		v = ldexp((double)F, 1 - f->bias - m);
	else
		v = ldexp((double)(F | (1ull << m)), (int)E - f->bias - m);
	return sign ? -v : v;
}

/* The code of x, or FPL_CODE_NONE for a value without one (the callers
 * below tell the two apart: only a 64-bit format can produce UINT64_MAX
 * as a code, and only a NaN there). */
static uint64_t encode(const fpl_format *f, double x)
{
	const int m = f->m, nb = f->nbits;
	uint64_t sign, F;
	int ex;

	if (f->specials == FPL_SPEC_E8M0 && !fpl__isnan(x) && !(x > 0))
		return FPL_CODE_NONE;	/* zero or negative: no code */
	if (!fpl__isnan(x)) {
		/* Values of f come back unchanged; anything else is rounded. */
		fpl_state st;
		unsigned fl = 0;
		fpl_state_init(&st, 0);
		x = fpl__round_ix(f, x, FPL_RND_NE, &st, 0, &fl);
	}
	sign = (uint64_t)fpl__signbit(x) << (nb - 1);
	if (fpl__isnan(x)) {
		switch (f->specials) {
		case FPL_SPEC_E8M0:
			return 0xff;
		case FPL_SPEC_FNUZ:
			return 1ull << (nb - 1);
		case FPL_SPEC_FN:
			return sign | mask(nb - 1);
		case FPL_SPEC_NONE:
			return FPL_CODE_NONE;
		default:
			if (m == 0)
				return FPL_CODE_NONE;
			F = (fpl__bits(x) & FPL__FRAC_MASK) >> (52 - m);
			if (F == 0)	/* payload entirely below the format's bits */
				F = 1ull << (m - 1);
			return sign | (mask(f->e) << m) | F;
		}
	}
	if (fpl__isinf(x))
		return sign | (mask(f->e) << m);
	if (f->specials == FPL_SPEC_E8M0) {
		if (x <= 0)
			return FPL_CODE_NONE;
		frexp(x, &ex);
		return (uint64_t)(ex - 1 + f->bias);
	}
	if (x == 0)
		return f->specials == FPL_SPEC_FNUZ ? 0 : sign;
	x = fabs(x);
	frexp(x, &ex);
	ex--;				/* x in [2^ex, 2^(ex+1)) */
	if (ex < 1 - f->bias)		/* subnormal: F = x / 2^(emin-m) */
		return sign | (uint64_t)ldexp(x, f->bias - 1 + m);
	F = (uint64_t)ldexp(x, m - ex) - (1ull << m);
	return sign | ((uint64_t)(ex + f->bias) << m) | F;
}

int fpl_encode_checked(const fpl_format *f, double x, uint64_t *code)
{
	uint64_t c = encode(f, x);

	/* UINT64_MAX is a real code only of a 64-bit format's NaN with every
	 * bit set (fp64's -NaN with a full payload, or a 64-bit fn format's
	 * -NaN); everywhere else it means "no code" */
	int nan_code = (f->specials == FPL_SPEC_IEEE && f->m > 0) || f->specials == FPL_SPEC_FN;

	if (c == FPL_CODE_NONE && !(f->nbits == 64 && fpl__isnan(x) && nan_code)) {
		*code = 0;
		return FPL_ERANGE;
	}
	*code = c;
	return 0;
}

uint64_t fpl_encode(const fpl_format *f, double x)
{
	return encode(f, x);
}

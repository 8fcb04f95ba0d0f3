/* SPDX-License-Identifier: MIT */
/*
 * nan.c - which NaN an operation returns (SEMANTICS.md, "Specials").
 *
 * NaNs travel as binary64 NaNs whose fraction holds the format's payload in
 * its top m bits, so encoding is a shift.  The x86 rule keeps the first NaN
 * operand, quieted; the canonical rule always returns the format's
 * canonical NaN; the ones rule +NaN with every fraction bit set (an ieee
 * format; canonical elsewhere).
 */
#include "engine/internal.h"

/* Clear the binary64 fraction bits below the format's m fraction bits. */
static uint64_t keep_top_fraction(uint64_t u, int m)
{
	uint64_t low = m >= 52 ? 0 : (FPL__FRAC_MASK >> m);
	return u & ~low;
}

/* The rule's fixed NaN, or 0 (not a NaN) when the rule keeps operands. */
static int fixed_nan(const fpl_format *f, double *out)
{
	if (f->nan_rule == FPL_NAN_ONES && f->specials == FPL_SPEC_IEEE && f->m > 0) {
		*out = fpl__from_bits(FPL__EXP_MASK | (FPL__FRAC_MASK & ~(FPL__FRAC_MASK >> f->m)));
		return 1;
	}
	if (f->nan_rule != FPL_NAN_X86) {
		*out = fpl__nan_canonical(f);
		return 1;
	}
	return 0;
}

double fpl__nan_narrow(const fpl_format *f, double nan)
{
	uint64_t u = fpl__bits(nan) | FPL__QUIET_BIT;
	double r;

	if (fixed_nan(f, &r))
		return r;
	if (f->nan_rule == FPL_NAN_CANONICAL)
		return fpl__nan_canonical(f);
	switch (f->specials) {
	case FPL_SPEC_IEEE:
		/* m = 0 leaves only the quiet bit: there is no NaN code anyway */
		return fpl__from_bits(keep_top_fraction(u, f->m) | FPL__QUIET_BIT);
	case FPL_SPEC_FN:
		return fpl__from_bits((u & FPL__SIGN_BIT) | FPL__EXP_MASK
				      | (FPL__FRAC_MASK & ~(FPL__FRAC_MASK >> f->m)));
	case FPL_SPEC_NONE:
		return fpl__from_bits((u & FPL__SIGN_BIT) | FPL__EXP_MASK | FPL__QUIET_BIT);
	default:	/* fnuz, e8m0: one NaN */
		return fpl__from_bits(FPL__EXP_MASK | FPL__QUIET_BIT);
	}
}

double fpl__nan_canonical(const fpl_format *f)
{
	if (f->specials == FPL_SPEC_FN)
		return fpl__from_bits(FPL__EXP_MASK | (FPL__FRAC_MASK & ~(FPL__FRAC_MASK >> f->m)));
	return fpl__from_bits(FPL__EXP_MASK | FPL__QUIET_BIT);
}

double fpl__nan_default(const fpl_format *f)
{
	double r;

	if (fixed_nan(f, &r))
		return r;
	if (f->nan_rule == FPL_NAN_CANONICAL)
		return fpl__nan_canonical(f);
	switch (f->specials) {
	case FPL_SPEC_FN:
		return fpl__from_bits(FPL__SIGN_BIT | FPL__EXP_MASK
				      | (FPL__FRAC_MASK & ~(FPL__FRAC_MASK >> f->m)));
	case FPL_SPEC_IEEE:
	case FPL_SPEC_NONE:
		return fpl__from_bits(FPL__SIGN_BIT | FPL__EXP_MASK | FPL__QUIET_BIT);
	default:
		return fpl__from_bits(FPL__EXP_MASK | FPL__QUIET_BIT);
	}
}

double fpl__nan_signed(const fpl_format *f, int sign)
{
	double r;

	if (fixed_nan(f, &r))
		return r;
	if (f->specials != FPL_SPEC_FN || f->nan_rule == FPL_NAN_CANONICAL)
		return fpl__nan_canonical(f);
	return fpl__from_bits((sign ? FPL__SIGN_BIT : 0) | FPL__EXP_MASK
			      | (FPL__FRAC_MASK & ~(FPL__FRAC_MASK >> f->m)));
}

double fpl__nan_invalid(const fpl_format *f, unsigned *fl)
{
	*fl |= FPL_FLAG_INVALID;
	return fpl__nan_default(f);
}

double fpl__nan_pick(const fpl_format *f, const double *ops, int n, unsigned *fl)
{
	int i, first = -1;

	for (i = 0; i < n; i++) {
		if (fpl__issnan(ops[i]))
			*fl |= FPL_FLAG_INVALID;
		if (first < 0 && fpl__isnan(ops[i]))
			first = i;
	}
	return fpl__nan_narrow(f, ops[first < 0 ? 0 : first]);
}

const char *fpl_nan_rule_name(fpl_nan_rule r)
{
	return r == FPL_NAN_CANONICAL ? "canonical" : r == FPL_NAN_ONES ? "ones" : "x86";
}

double fpl_default_nan(const fpl_format *f)
{
	return fpl__nan_canonical(f);
}

/* SPDX-License-Identifier: MIT */
/*
 * format.c - validating a format descriptor and deriving its constants.
 *
 * emin = 1 - bias (e8m0: -bias, its code 0 is 2^-127).  The largest
 * binade is emax = 2^e - 2 - bias when the top exponent code is reserved
 * (ieee), 2^e - 1 - bias otherwise; fn reserves only the all-ones fraction
 * there, so its max is (2 - 2^(1-m)) 2^emax instead of (2 - 2^-m) 2^emax
 * -- unless emax_limit stops the finite values below that binade.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/internal.h"

static double finite_max(const fpl_format *f, int top_emax)
{
	switch (f->specials) {
	case FPL_SPEC_FN:
		/* the all-ones fraction is NaN only in the top binade of the
		 * encoding; with explim = 0 the range is binary64's, which no
		 * code of the encoding reaches */
		if (f->emax < top_emax || !f->explim)
			return ldexp(2.0 - ldexp(1.0, -f->m), f->emax);
		return ldexp(2.0 - ldexp(1.0, 1 - f->m), f->emax);
	case FPL_SPEC_E8M0:
		return ldexp(1.0, f->emax);
	default:
		if (f->emax < f->emin)	/* e = 1: subnormals only */
			return ldexp((double)((1ull << f->m) - 1), f->emin - f->m);
		return ldexp(2.0 - ldexp(1.0, -f->m), f->emax);
	}
}

int fpl_format_finish(fpl_format *f)
{
	int top, top_emax;

	if (f->e < 1 || f->e > 11 || f->m < 0 || f->m > 52)
		return FPL_EFORMAT;
	if ((unsigned)f->subnormal > FPL_SUB_FTZ || (unsigned)f->specials > FPL_SPEC_E8M0
	    || (unsigned)f->overflow > FPL_OVF_INF_ALWAYS
	    || (unsigned)f->tininess > FPL_TINY_BEFORE
	    || (unsigned)f->nan_rule > FPL_NAN_ONES)
		return FPL_EFORMAT;
	if (f->specials == FPL_SPEC_E8M0 && (f->m != 0 || f->e != 8))
		return FPL_EFORMAT;
	if (f->specials == FPL_SPEC_FN && f->m == 0)
		return FPL_EFORMAT;

	top = (1 << f->e) - 1;
	f->nbits = f->specials == FPL_SPEC_E8M0 ? 8 : 1 + f->e + f->m;
	if (f->specials == FPL_SPEC_E8M0) {
		f->emin = -f->bias;
		f->emax = top - 1 - f->bias;
		f->subnormal = FPL_SUB_NO_ROUND;
	} else {
		f->emin = 1 - f->bias;
		f->emax = (f->specials == FPL_SPEC_IEEE ? top - 1 : top) - f->bias;
	}
	top_emax = f->emax;
	if (f->emax_limit_set) {
		if (f->emax_limit > f->emax || f->emax_limit < f->emin)
			return FPL_EFORMAT;
		f->emax = f->emax_limit;
	}
	if (!f->explim) {
		f->emin = -1022;
		f->emax = 1023;
	}
	if (f->emin < -1022 || f->emax > 1023 || (f->emax < f->emin && f->e != 1))
		return FPL_EFORMAT;

	f->max = finite_max(f, top_emax);
	f->min_normal = ldexp(1.0, f->emin);
	f->min_subnormal = f->subnormal == FPL_SUB_YES ? ldexp(1.0, f->emin - f->m) : f->min_normal;
	f->epsilon = ldexp(1.0, -f->m);
	if (!f->name[0])
		snprintf(f->name, sizeof f->name, "e%dm%d", f->e, f->m);
	return 0;
}

static void defaults(fpl_format *f, int e, int m)
{
	memset(f, 0, sizeof *f);
	f->e = e;
	f->m = m;
	f->bias = e >= 1 && e <= 11 ? (1 << (e - 1)) - 1 : 0;
	f->explim = 1;
}

int fpl_format_ieee(fpl_format *f, int e, int m)
{
	defaults(f, e, m);
	return fpl_format_finish(f);
}

int fpl_format_params(fpl_format *f, int p, int emin, int emax)
{
	int e;

	if (p < 1 || p > 53 || emin > emax || emin < -1022 || emax > 1023)
		return FPL_EFORMAT;
	for (e = 1; e <= 11 && (1 << e) < emax - emin + 3; e++)
		;
	if (e > 11)
		return FPL_EFORMAT;
	defaults(f, e, p - 1);
	f->bias = 1 - emin;
	if ((1 << e) - 2 - f->bias > emax) {
		f->emax_limit_set = 1;
		f->emax_limit = emax;
	}
	snprintf(f->name, sizeof f->name, "p%d,emin%d,emax%d", (short)p, (short)emin, (short)emax);
	return fpl_format_finish(f);
}

const char *fpl_subnormal_name(fpl_subnormal s)
{
	static const char *const names[] = { "yes", "no-round", "ftz" };
	return (unsigned)s <= FPL_SUB_FTZ ? names[s] : "?";
}

const char *fpl_specials_name(fpl_specials s)
{
	static const char *const names[] = { "ieee", "fn", "fnuz", "none", "e8m0" };
	return (unsigned)s <= FPL_SPEC_E8M0 ? names[s] : "?";
}

/* SPDX-License-Identifier: MIT */
/*
 * minmax.c - IEEE 754-2019 minimum and maximum, and quiet comparison.
 * Neither rounds anything but the chosen operand (a no-op for values of f).
 */
#include "engine/internal.h"

/* -1, 0, 1 for ordered a, b (DAZ applied by the caller), with -0 < +0
 * when `signed_zero`. */
static int order(double a, double b, int signed_zero)
{
	if (a < b)
		return -1;
	if (a > b)
		return 1;
	if (signed_zero && a == 0)
		return fpl__signbit(b) - fpl__signbit(a);
	return 0;
}

double fpl__minmax_ix(const fpl_format *f, double a, double b, int want, fpl_rnd rnd,
		      const fpl_state *st, uint64_t idx, unsigned *fl)
{
	a = fpl__daz(f, a);
	b = fpl__daz(f, b);
	if (fpl__isnan(a) || fpl__isnan(b)) {
		double ops[2] = { a, b };
		return fpl__finish(f, fpl__nan_pick(f, ops, 2, fl), st, idx);
	}
	return fpl__round_ix(f, order(a, b, 1) == want ? a : b, rnd, st, idx, fl);
}

static double pick(const fpl_format *f, double a, double b, int want, fpl_rnd rnd,
		   fpl_state *st)
{
	unsigned fl = 0;
	uint64_t idx = st->counter++;
	double r = fpl__minmax_ix(f, a, b, want, rnd, st, idx, &fl);

	fpl__commit(st, fl);
	return r;
}

double fpl_min(const fpl_format *f, double a, double b, fpl_rnd rnd, fpl_state *st)
{
	return pick(f, a, b, -1, rnd, st);
}

double fpl_max(const fpl_format *f, double a, double b, fpl_rnd rnd, fpl_state *st)
{
	return pick(f, a, b, 1, rnd, st);
}

int fpl_compare(const fpl_format *f, double a, double b, fpl_state *st)
{
	unsigned fl = 0;
	int r;

	a = fpl__daz(f, a);
	b = fpl__daz(f, b);
	if (fpl__isnan(a) || fpl__isnan(b)) {
		if (fpl__issnan(a) || fpl__issnan(b))
			fl |= FPL_FLAG_INVALID;
		r = 2;
	} else {
		r = order(a, b, 0);
	}
	fpl__commit(st, fl);
	return r;
}

/* SPDX-License-Identifier: MIT */
/*
 * round.c - a binary64 value rounded into a format, and conversion
 * between formats.  The finite case is the unpacked binary64 handed to
 * fpl__round_unp(); the special cases come first, NaN then inf then zero.
 */
#include "engine/internal.h"

double fpl__round_ix(const fpl_format *f, double x, fpl_rnd rnd, const fpl_state *st,
		     uint64_t idx, unsigned *fl)
{
	fpl_unp u;

	if (fpl__isnan(x))
		return fpl__finish(f, fpl__nan_pick(f, &x, 1, fl), st, idx);
	if (fpl__isinf(x))
		return fpl__finish(f, fpl__inf(f, fpl__signbit(x), fl), st, idx);
	if (x == 0)
		return fpl__finish(f, fpl__zero(f, fpl__signbit(x), fl), st, idx);
	fpl__unpack(x, &u);
	return fpl__finish(f, fpl__round_unp(f, &u, rnd, st, idx, fl), st, idx);
}

double fpl_round(const fpl_format *f, double x, fpl_rnd rnd, fpl_state *st)
{
	unsigned fl = 0;
	double r = fpl__round_ix(f, x, rnd, st, st->counter++, &fl);

	fpl__commit(st, fl);
	return r;
}

double fpl_convert(const fpl_format *to, const fpl_format *from, double x, fpl_rnd rnd,
		   fpl_state *st)
{
	return fpl_round(to, fpl__daz(from, x), rnd, st);
}

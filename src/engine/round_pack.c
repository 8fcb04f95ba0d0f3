/* SPDX-License-Identifier: MIT */
/*
 * round_pack.c - round an exact value once into a format.
 *
 * This is the only place where fplab rounds.  Every operation first builds
 * its exact result as an unpacked value (sign, leading exponent E, 128-bit
 * significand and a sticky bit; see internal.h), so there is exactly one
 * rounding and no double-rounding question at all.
 *
 * The fixed-point idiom (as in SoftFloat): the quantum q = 2^Q of the
 * result is 2^(max(E, emin) - m) (or 2^emin for values below the normal
 * range when subnormals are not rounded to); sh = Q - (E - 127) is the
 * number of significand bits below the quantum.  Because Q >= E - m and
 * m <= 52, sh >= 75, so the kept part `kept = sig >> sh` has at most 53
 * bits and fits a uint64_t, and all of the R <= 32 stochastic bits lie in
 * sig (sh - R >= 43).  The mode chooses an increment from the round bit,
 * the sticky bits, the kept lsb and, for sp/se, a random draw.
 *
 * A carry out of the top (kept = 2^(m+1)) needs no renormalisation: the
 * value kept * 2^Q is formed directly, and it is exact in binary64 since
 * kept <= 2^53 and Q >= -1074 for every valid format.
 */
#include <math.h>

#include "engine/internal.h"

typedef struct rounded {
	uint64_t kept;		/* |result| / 2^Q after the increment */
	uint64_t trunc;		/* |x| / 2^Q rounded toward zero */
	int inexact;
	int away;		/* the increment was taken */
} rounded;

/* Round the unpacked |x| at quantum 2^Q in mode rnd; `draw` is the random
 * word for sp and se, sr_bits is R in 1..32 (sr_bits_of()). */
static rounded round_at(const fpl_unp *u, int Q, fpl_rnd rnd, uint64_t draw, int sr_bits)
{
	rounded r = { 0, 0, 0, 0 };
	long sh = (long)Q - (long)u->exp + 127;
	int rb, rest;

	if (sh > 128) {
		r.kept = 0;
		rb = 0;
		rest = 1;
	} else if (sh == 128) {
		r.kept = 0;
		rb = 1;
		rest = (u->sig << 1) != 0 || u->sticky;
	} else {
		fpl_u128 below = u->sig & (((fpl_u128)1 << (sh - 1)) - 1);
		r.kept = (uint64_t)(u->sig >> sh);
		rb = (int)((u->sig >> (sh - 1)) & 1);
		rest = below != 0 || u->sticky;
	}
	r.trunc = r.kept;
	r.inexact = rb || rest;
	if (!r.inexact)
		return r;

	switch (rnd) {
	case FPL_RND_NE:
		r.away = rb && (rest || (r.kept & 1));
		break;
	case FPL_RND_NA:
		r.away = rb;
		break;
	case FPL_RND_NZ:
		r.away = rb && rest;
		break;
	case FPL_RND_TP:
		r.away = !u->sign;
		break;
	case FPL_RND_TN:
		r.away = u->sign;
		break;
	case FPL_RND_TZ:
		r.away = 0;
		break;
	case FPL_RND_OD:
		/* Round to odd: the neighbour whose last kept bit is 1. */
		r.away = !(r.kept & 1);
		break;
	case FPL_RND_SP: {
		/* T = the R bits of |x| just below the quantum; away iff
		 * T + r >= 2^R with r the top R bits of the draw. */
		long lo = sh - sr_bits;
		uint64_t T = lo >= 128 ? 0
			: (uint64_t)(u->sig >> lo) & ((1ull << sr_bits) - 1);
		uint64_t rr = draw >> (64 - sr_bits);
		r.away = T + rr >= (1ull << sr_bits);
		break;
	}
	case FPL_RND_SE:
		r.away = (int)(draw >> 63);
		break;
	default:
		break;
	}
	r.kept += (uint64_t)r.away;
	return r;
}

double fpl__zero(const fpl_format *f, int sign, unsigned *fl)
{
	if (f->specials == FPL_SPEC_E8M0)
		return fpl__nan_invalid(f, fl);
	if (f->specials == FPL_SPEC_FNUZ)
		sign = 0;
	return fpl__signed_zero(sign);
}

double fpl__inf(const fpl_format *f, int sign, unsigned *fl)
{
	if (f->specials == FPL_SPEC_E8M0 && sign)	/* unsigned: no negative values */
		return fpl__nan_invalid(f, fl);
	if (fpl__saturates_inf(f)) {	/* OCP OFP8 saturation: inf -> max */
		*fl |= FPL_FLAG_SATURATED;
		return sign ? -f->max : f->max;
	}
	if (fpl__has_inf(f))
		return sign ? -INFINITY : INFINITY;
	*fl |= FPL_FLAG_INVALID;
	return fpl__nan_signed(f, sign);
}

/* The result of an overflow: the mode picks inf or max (SEMANTICS.md,
 * step 4), then formats without inf map inf to NaN or, saturating, to
 * max. */
static double overflow(const fpl_format *f, int sign, fpl_rnd rnd, const rounded *r,
		       int trunc_over, unsigned *fl)
{
	int to_inf;

	*fl |= FPL_FLAG_OVERFLOW | FPL_FLAG_INEXACT;
	switch (rnd) {
	case FPL_RND_TZ:
	case FPL_RND_OD:
		to_inf = 0;
		break;
	case FPL_RND_TP:
		to_inf = !sign;
		break;
	case FPL_RND_TN:
		to_inf = sign;
		break;
	case FPL_RND_SP:
	case FPL_RND_SE:
		to_inf = r->away || trunc_over;
		break;
	default:
		to_inf = 1;
		break;
	}
	if (f->overflow == FPL_OVF_INF_ALWAYS)
		to_inf = 1;
	if (!to_inf)
		return sign ? -f->max : f->max;
	if (fpl__saturates(f)) {	/* saturation wins over an ieee inf */
		*fl |= FPL_FLAG_SATURATED;
		return sign ? -f->max : f->max;
	}
	if (fpl__has_inf(f))
		return sign ? -INFINITY : INFINITY;
	return fpl__nan_signed(f, sign);
}

/* R for sp, clamped to 1..32 so that round_at never shifts by 64 or by a
 * negative count.  The array path rejects an out-of-range sr_bits with
 * FPL_EINVAL before rounding anything; the scalar operations have no
 * status to return, so they clamp (state.h documents both). */
static int sr_bits_of(const fpl_state *st)
{
	return st->sr_bits < 1 ? 1 : st->sr_bits > 32 ? 32 : st->sr_bits;
}

double fpl__round_unp(const fpl_format *f, const fpl_unp *u, fpl_rnd rnd,
		      const fpl_state *st, uint64_t idx, unsigned *fl)
{
	const int m = f->m, emin = f->emin;
	const int e8m0 = f->specials == FPL_SPEC_E8M0;
	uint64_t draw = 0;
	const int R = sr_bits_of(st);
	int Q, tiny;
	rounded r;
	double mag;

	if (e8m0 && u->sign)
		return fpl__nan_invalid(f, fl);
	if (e8m0 && u->exp < emin) {	/* no zero: the smallest scale, always an underflow */
		*fl |= FPL_FLAG_UNDERFLOW | FPL_FLAG_INEXACT;
		return f->min_normal;
	}
	if (rnd == FPL_RND_SP || rnd == FPL_RND_SE)
		draw = fpl_random_draw(st->seed, st->stream, idx);

	if (u->exp >= emin)
		Q = u->exp - m;
	else if (f->subnormal == FPL_SUB_NO_ROUND)
		Q = emin;
	else
		Q = emin - m;
	r = round_at(u, Q, rnd, draw, R);

	/* Tininess.  After rounding: would the value, rounded to precision p
	 * with an unbounded exponent (same mode, same draw), be below 2^emin?
	 * Only E = emin-1 can round up into the normal range. */
	if (u->exp >= emin)
		tiny = 0;
	else if (f->tininess == FPL_TINY_BEFORE || u->exp < emin - 1)
		tiny = 1;
	else
		tiny = round_at(u, u->exp - m, rnd, draw, R).kept < (2ull << m);

	if (r.inexact)
		*fl |= FPL_FLAG_INEXACT;
	if (tiny && r.inexact)
		*fl |= FPL_FLAG_UNDERFLOW;

	/* Overflow before flushing: only in e = 1 formats, where 2^emin lies
	 * above max, can a result be tiny and overflow at once; it is an
	 * overflow (SEMANTICS.md, step order). */
	mag = ldexp((double)r.kept, Q);
	if (r.kept != 0 && mag > f->max) {
		int trunc_over = ldexp((double)r.trunc, Q) > f->max;
		return overflow(f, u->sign, rnd, &r, trunc_over, fl);
	}
	if (tiny && f->subnormal == FPL_SUB_FTZ) {
		*fl |= FPL_FLAG_UNDERFLOW | FPL_FLAG_INEXACT | FPL_FLAG_FLUSHED;
		return fpl__zero(f, u->sign, fl);
	}
	if (r.kept == 0)
		return fpl__zero(f, u->sign, fl);
	return u->sign ? -mag : mag;
}

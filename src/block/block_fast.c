/* SPDX-License-Identifier: MIT */
/*
 * block_fast.c - the fast path of fpl_block_round for the common case:
 * power-of-two scales (floor, ceil, even, rceil), no tensor scale, exact
 * quotients, 1-D blocks of consecutive elements (along the last axis), no
 * soft errors, no DAZ on the element format.
 *
 * Why it gives the reference's bits, flags and counts.  The reference
 * rounds element j as fpl__div_ix(elem, x_j, 2^k, rnd, draw c0 + j): the
 * exact quotient x_j 2^-k rounded once.  Here q_j = x_j * 2^-k is that
 * quotient exactly (a product by a power of two is exact unless it
 * overflows or leaves the normal range; pass A checks both per block and
 * gives up, before writing anything, when a block could), and
 * fpl_round_array rounds q_j with draw c0 + j: the same exact value, the
 * same draw, hence the same result and flags (fpl_round and the
 * operations share one rounding, fplab/ops.h).  Elements of a NaN block
 * are rounded as +0 (no flag, no draw effect on others) and then
 * replaced by NaN, as the reference leaves them unrounded.  Dequantizing
 * r_j 2^k is exact (an element of the format times a power of two within
 * binary64's range).  The events that need per-element flags are
 * recovered without them: saturated is the growth of the saturated count
 * (only elements raise it); a block's largest element saturated iff its
 * rounding raised `saturated`, which only an element rounded to +-max_e
 * can have: those few are rounded again one by one (same draw, same
 * result) to read their flags.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/array.h>

#include "block/block_internal.h"
#include "engine/internal.h"
#include "util/scratch.h"

uint64_t fpl__blk_fast_runs;

enum { KIND_SCALED = 0, KIND_ZERO, KIND_NAN };

typedef struct bk {
	int k;		/* scale 2^k */
	int kind;
	double amax;
} bk;

static int applicable(const fpl_block_format *b, const fpl__blk_view *v, const fpl_state *st)
{
	return b->rule != FPL_BRULE_AMAX && !b->tensor_scale && b->quot == FPL_BQUOT_EXACT
	       && v->tc == 1 && v->C == 1 && !b->elem.daz && v->n > 0
	       && (st->flip == FPL_FLIP_NONE || !(st->flip_prob > 0));
}

/* Pass A: the scales, and the exact quotients into q.  0, or 1 when a
 * quotient might not be exact (nothing of the caller's written). */
static int pass_a(const fpl_block_format *b, const fpl__blk_view *v, const double *x, double *q,
		  bk *bl, fpl_block_stats *s)
{
	fpl_format wide;
	size_t id;

	if (fpl_format_ieee(&wide, 11, b->elem.m))
		return 1;
	for (id = 0; id < v->nblocks; id++) {
		size_t bt = id / v->nbr, br = id % v->nbr, lo = bt * v->R + br * v->tr;
		size_t hi = lo + (v->R - br * v->tr < v->tr ? v->R - br * v->tr : v->tr), j;
		/* |x| as integers: their order is the values' (NaN, inf on top);
		 * u - 1 wraps a zero to the top, so umin is the smallest nonzero */
		uint64_t umax = 0, umin = UINT64_MAX;
		double amax, f;
		int special, clamped = 0, k, emin_b, emax_b;

		for (j = lo; j < hi; j++) {
			uint64_t u = fpl__bits(x[j]) & ~FPL__SIGN_BIT;

			umax = u > umax ? u : umax;
			umin = u - 1 < umin ? u - 1 : umin;
		}
		special = umax >= FPL__EXP_MASK;
		amax = fpl__from_bits(umax);
		s->blocks++;
		s->elements += hi - lo;
		bl[id].amax = amax;
		if (special || amax == 0) {
			bl[id].kind = special ? KIND_NAN : KIND_ZERO;
			bl[id].k = 0;
			s->nan_blocks += (uint64_t)special;
			s->zero_blocks += (uint64_t)!special;
			for (j = lo; j < hi; j++)
				q[j] = special ? 0.0 : x[j];
			continue;
		}
		bl[id].kind = KIND_SCALED;
		k = bl[id].k = fpl__blk_pow2_exp(b, &wide, amax, &clamped);
		s->scale_range += (uint64_t)clamped;
		/* x * 2^-k exact: 2^k and 2^-k normal binary64 numbers, the
		 * largest product below the overflow, the smallest nonzero one
		 * normal (biased exponents: subnormals 0) */
		emax_b = (int)(umax >> 52);
		emin_b = (int)((umin + 1) >> 52);
		if (k < -1022 || k > 1022 || emax_b - k > 2045 || emin_b - k < 1)
			return 1;
		f = fpl__from_bits((uint64_t)(1023 - k) << 52);
		for (j = lo; j < hi; j++)
			q[j] = x[j] * f;
	}
	return 0;
}

int fpl__blk_round_fast(const fpl_block_format *b, double *y, const double *x,
			const fpl__blk_view *v, fpl_rnd rnd, fpl_state *st,
			fpl_block_stats *stats)
{
	fpl_block_stats s;
	const int si = __builtin_ctz(FPL_FLAG_SATURATED);
	const uint64_t c0 = st->counter, sat0 = st->count[si];
	double *q;
	bk *bl;
	size_t id;
	int rc;

	if (!applicable(b, v, st))
		return 1;
	/* reused between calls: a fresh buffer costs a page fault per 4 KiB */
	q = fpl__scratch_alloc(v->n * sizeof *q);
	bl = fpl__scratch_alloc(v->nblocks * sizeof *bl);
	if (!q || !bl) {
		fpl__scratch_free(q);
		fpl__scratch_free(bl);
		return FPL_ENOMEM;
	}
	fpl_block_stats_init(&s);
	rc = pass_a(b, v, x, q, bl, &s);
	if (!rc)
		rc = fpl_round_array(&b->elem, q, q, v->n, rnd, st);
	if (!rc) {
		s.saturated = st->count[si] - sat0;
		for (id = 0; id < v->nblocks; id++) {
			size_t bt = id / v->nbr, br = id % v->nbr, lo = bt * v->R + br * v->tr;
			size_t hi = lo + (v->R - br * v->tr < v->tr ? v->R - br * v->tr : v->tr), j;
			double g = fpl__from_bits((uint64_t)(1023 + bl[id].k) << 52);
			int amax_sat = 0;

			for (j = lo; j < hi; j++) {
				if (bl[id].kind == KIND_NAN) {
					y[j] = NAN;
					continue;
				}
				s.flushed += x[j] != 0 && q[j] == 0;
				if (fabs(q[j]) == b->elem.max && fabs(x[j]) == bl[id].amax) {
					unsigned fl = 0;

					fpl__round_ix(&b->elem, ldexp(x[j], -bl[id].k), rnd, st, c0 + j, &fl);
					amax_sat |= (fl & FPL_FLAG_SATURATED) != 0;
				}
				y[j] = q[j] * g;
			}
			s.amax_saturated += (uint64_t)amax_sat;
		}
		stats->blocks += s.blocks;
		stats->elements += s.elements;
		stats->saturated += s.saturated;
		stats->flushed += s.flushed;
		stats->amax_saturated += s.amax_saturated;
		stats->scale_range += s.scale_range;
		stats->nan_blocks += s.nan_blocks;
		stats->zero_blocks += s.zero_blocks;
		__atomic_fetch_add(&fpl__blk_fast_runs, 1, __ATOMIC_RELAXED);
	}
	fpl__scratch_free(q);
	fpl__scratch_free(bl);
	return rc;
}

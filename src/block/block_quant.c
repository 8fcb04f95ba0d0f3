/* SPDX-License-Identifier: MIT */
/*
 * block_quant.c - quantizing a tensor into a block format (fplab/block.h):
 * per block an amax, a scale X by the rule, the elements rounded by the
 * scalar engine, and the block events.
 *
 * Exactness.  Element j is fpl__div_ix(elem, x_j, D, ...): the exact
 * quotient x_j / D rounded once into the (saturating) element format, so
 * no double rounding whatever D is.  D = X * s is exact: X has at most 29
 * significant bits when there is a tensor scale s (checked when parsing)
 * and s is binary32 (24 bits).  The dequantized value r * D is exact when
 * the element's and D's precisions add up to at most 53 bits (every named
 * format: e2m1 x e4m3fn x fp32 is 2 + 4 + 24 bits).  Power-of-two scales
 * are exact by construction (ldexp of an integer exponent within the
 * scale format's range); ceil and even round amax with the engine into a
 * format of the element's precision and binary64's range, so the
 * exponent they give is that of the correctly rounded amax.  rceil is
 * exact: with amax = ma 2^ea and max_e = mm 2^em (frexp, ma and mm in
 * [1/2, 1)), log2(amax / max_e) = ea - em + log2(ma / mm) with the last
 * term in (-1, 1), so its ceiling is ea - em + (ma > mm).
 *
 * q32 reproduces GPU kernels: x_j and D are rounded to binary32 and the
 * quotient is a binary32 division (C float division: IEEE, correctly
 * rounded to nearest-even with subnormals in the default environment),
 * then rounded into the element format: two roundings, on purpose.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/codec.h>

#include "block/block_internal.h"
#include "engine/internal.h"
#include "util/parallel.h"

typedef struct acc {
	unsigned flags;
	uint64_t count[FPL_NFLAGS];
	fpl_block_stats s;
} acc;

typedef struct ctx {
	const fpl_block_format *b;
	fpl_format scale_sat;	/* b->scale, saturating (amax rule) */
	fpl_format fp32;	/* binary32, saturating (tensor scale, q32 scale) */
	fpl_format wide;	/* the element's precision, binary64's range */
	fpl_state zst;		/* for roundings that take no draw */
	fpl__blk_view v;
	const double *x;
	uint64_t *codes, *scodes;
	double *y, *svals;
	double s;		/* tensor scale, 1 without ts */
	fpl_rnd rnd;
	const fpl_state *st;
	uint64_t c0;
	uint64_t elem_nan, scale_nan;
} ctx;

typedef struct job {
	const ctx *c;
	int t, threads;
	acc a;
} job;

/* The input value as the quotient sees it. */
static inline double in_val(const ctx *c, double x)
{
	return c->b->quot == FPL_BQUOT_FP32 ? (double)(float)x : x;
}

int fpl__blk_pow2_exp(const fpl_block_format *b, const fpl_format *wide, double amax,
		      int *clamped)
{
	const int kmin = ilogb(b->scale.min_subnormal), kmax = b->scale.emax;
	int k;

	if (b->rule == FPL_BRULE_RCEIL) {
		int ea, em;
		double ma = frexp(amax, &ea), mm = frexp(b->elem.max, &em);

		k = ea - em + (ma > mm);
	} else {
		double a = amax;
		unsigned fl = 0;
		fpl_state z;

		if (b->rule != FPL_BRULE_FLOOR) {
			fpl_state_init(&z, 0);
			a = fpl__round_ix(wide, amax, b->rule == FPL_BRULE_CEIL ? FPL_RND_TP : FPL_RND_NE,
					  &z, 0, &fl);
		}
		k = (fpl__isinf(a) ? 1024 : ilogb(a)) - b->elem.emax;
	}
	if (k < kmin || k > kmax) {
		*clamped = 1;
		k = k < kmin ? kmin : kmax;
	}
	return k;
}

/* A power-of-two scale 2^k, k by the rule, clamped to the scale range. */
static double pow2_scale(const ctx *c, double amax, int *clamped)
{
	return ldexp(1.0, fpl__blk_pow2_exp(c->b, &c->wide, amax, clamped));
}

/* The amax rule: amax / (max_e * s) rounded to nearest into the scale
 * format (saturating), at least its smallest positive value. */
static double amax_scale(const ctx *c, double amax, int *clamped)
{
	const fpl_block_format *b = c->b;
	double dv = b->elem.max * c->s, X;
	unsigned fl = 0;

	if (b->quot == FPL_BQUOT_FP32) {
		double q = (double)((float)amax / (float)dv);

		X = fpl__round_ix(&c->scale_sat, q, FPL_RND_NE, &c->zst, 0, &fl);
	} else {
		X = fpl__div_ix(&c->scale_sat, amax, dv, FPL_RND_NE, &c->zst, 0, &fl);
	}
	if (fl & FPL_FLAG_SATURATED)
		*clamped = 1;
	if (!(X >= b->scale.min_subnormal)) {	/* 0, or e8m0's NaN for zero */
		X = b->scale.min_subnormal;
		*clamped = 1;
	}
	return X;
}

/* Block id's element range. */
#define BLOCK_LOOP(c, id, flat)                                                            \
	size_t bt_ = (id) / ((c)->v.nbr * (c)->v.nbc), rm_ = (id) % ((c)->v.nbr * (c)->v.nbc); \
	size_t r0_ = rm_ / (c)->v.nbc * (c)->v.tr, q0_ = rm_ % (c)->v.nbc * (c)->v.tc;        \
	size_t r1_ = r0_ + (c)->v.tr < (c)->v.R ? r0_ + (c)->v.tr : (c)->v.R;                \
	size_t q1_ = q0_ + (c)->v.tc < (c)->v.C ? q0_ + (c)->v.tc : (c)->v.C, row_, col_;    \
	for (row_ = r0_; row_ < r1_; row_++)                                                  \
		for (col_ = q0_, flat = (bt_ * (c)->v.R + row_) * (c)->v.C + q0_; col_ < q1_;  \
		     col_++, flat++)

static void nan_block(const ctx *c, size_t id, acc *a)
{
	size_t j;

	a->s.nan_blocks++;
	if (c->scodes)
		c->scodes[id] = c->scale_nan;
	if (c->svals)
		c->svals[id] = NAN;
	if (!c->codes && !c->y)
		return;
	{
		BLOCK_LOOP(c, id, j)
		{
			if (c->codes)
				c->codes[j] = c->elem_nan;
			if (c->y)
				c->y[j] = NAN;
		}
	}
}

static uint64_t elem_code(const fpl_block_format *b, double r)
{
	if (b->elem_int)
		return (uint64_t)(uint8_t)(int8_t)(int)(r * 64.0);
	return fpl_encode(&b->elem, r);
}

/* Round block id's elements (scale X, divisor D). */
static void round_block(const ctx *c, size_t id, double amax, double D, acc *a)
{
	const fpl_block_format *b = c->b;
	int amax_sat = 0;
	size_t j;

	BLOCK_LOOP(c, id, j)
	{
		double xv = in_val(c, c->x[j]), r;
		unsigned fl = 0;

		if (b->quot == FPL_BQUOT_FP32) {
			double q = (double)((float)xv / (float)D);

			r = fpl__round_ix(&b->elem, q, c->rnd, c->st, c->c0 + j, &fl);
		} else {
			r = fpl__div_ix(&b->elem, xv, D, c->rnd, c->st, c->c0 + j, &fl);
		}
		if (fl & FPL_FLAG_SATURATED) {
			a->s.saturated++;
			amax_sat |= fabs(xv) == amax;
		}
		a->s.flushed += xv != 0 && r == 0;
		a->flags |= fl;
		while (fl) {
			a->count[__builtin_ctz(fl)]++;
			fl &= fl - 1;
		}
		if (c->codes)
			c->codes[j] = elem_code(b, r);
		if (c->y)
			c->y[j] = r * D;
	}
	a->s.amax_saturated += (uint64_t)amax_sat;
}

static void do_block(const ctx *c, size_t id, acc *a)
{
	const fpl_block_format *b = c->b;
	double amax = 0, X;
	int special = 0, clamped = 0;
	size_t j;

	{
		BLOCK_LOOP(c, id, j)
		{
			double ax = fabs(in_val(c, c->x[j]));

			special |= !(ax <= DBL_MAX);
			amax = ax > amax ? ax : amax;
			a->s.elements++;
		}
	}
	a->s.blocks++;
	if (special) {
		nan_block(c, id, a);
		return;
	}
	if (amax == 0) {
		X = 1;
		a->s.zero_blocks++;
	} else if (b->rule == FPL_BRULE_AMAX) {
		X = amax_scale(c, amax, &clamped);
	} else {
		X = pow2_scale(c, amax, &clamped);
	}
	a->s.scale_range += (uint64_t)clamped;
	if (c->scodes)
		c->scodes[id] = fpl_encode(&b->scale, X);
	if (c->svals)
		c->svals[id] = X;
	if (c->codes || c->y)
		round_block(c, id, amax, X * c->s, a);
}

static void *run(void *arg)
{
	job *jb = arg;
	size_t lo, hi, id;

	fpl__spawn_share(jb->c->v.nblocks, jb->threads, jb->t, &lo, &hi);
	for (id = lo; id < hi; id++)
		do_block(jb->c, id, &jb->a);
	return NULL;
}

/* The tensor scale s (ts): amax over the finite values / (max_scale * max_e). */
static double tensor_scale(const ctx *c, fpl_block_stats *s)
{
	const fpl_block_format *b = c->b;
	double amax = 0, t;
	unsigned fl = 0;
	size_t j;

	for (j = 0; j < c->v.n; j++) {
		double ax = fabs(in_val(c, c->x[j]));

		if (ax <= DBL_MAX && ax > amax)
			amax = ax;
	}
	if (amax == 0)
		return 1;
	t = fpl__div_ix(&c->fp32, amax, b->scale.max * b->elem.max, FPL_RND_NE, &c->zst, 0, &fl);
	if ((fl & FPL_FLAG_SATURATED) || !(t >= c->fp32.min_subnormal)) {
		s->scale_range++;
		t = t > 1 ? c->fp32.max : c->fp32.min_subnormal;
	}
	return t;
}

static int setup(ctx *c, const fpl_block_format *b, const double *x, const size_t *dims,
		 int ndims, fpl_rnd rnd, const fpl_state *st)
{
	uint64_t code;

	memset(c, 0, sizeof *c);
	if (!b || fpl__blk_view_of(b, dims, ndims, &c->v, NULL, NULL))
		return FPL_EINVAL;
	if (c->v.n && !x)
		return FPL_EINVAL;
	if ((unsigned)rnd >= FPL_RND_COUNT || !st
	    || (rnd == FPL_RND_SP && (st->sr_bits < 1 || st->sr_bits > 32)))
		return FPL_EINVAL;
	c->b = b;
	c->x = x;
	c->rnd = rnd;
	c->st = st;
	c->c0 = st->counter;
	c->s = 1;
	fpl_state_init(&c->zst, 0);
	c->scale_sat = b->scale;
	c->scale_sat.overflow = FPL_OVF_SATURATE;
	if (fpl_format_finish(&c->scale_sat) || fpl_format_lookup(&c->fp32, "fp32")
	    || fpl_format_ieee(&c->wide, 11, b->elem.m))
		return FPL_EINVAL;
	c->fp32.overflow = FPL_OVF_SATURATE;
	fpl_format_finish(&c->fp32);
	c->scale_nan = fpl_encode(&b->scale, fpl_default_nan(&b->scale));
	c->elem_nan = fpl_encode_checked(&b->elem, fpl_default_nan(&b->elem), &code) ? 0 : code;
	return 0;
}

static int drive(ctx *c, fpl_state *st, fpl_block_stats *stats, double *tscale)
{
	job jobs[FPL_MAX_THREADS];
	fpl_block_stats local;
	int threads, t, i;

	if (!stats) {
		fpl_block_stats_init(&local);
		stats = &local;
	}
	if (c->b->tensor_scale)
		c->s = tensor_scale(c, stats);
	if (tscale)
		*tscale = c->s;
	threads = fpl__spawn_threads(st ? st->threads : 1, c->v.nblocks, (double)c->v.n, 65536.0);
	memset(jobs, 0, sizeof jobs);
	for (t = 0; t < threads; t++) {
		jobs[t].c = c;
		jobs[t].t = t;
		jobs[t].threads = threads;
	}
	fpl__spawn(run, jobs, sizeof jobs[0], threads);
	for (t = 0; t < threads; t++) {
		const acc *a = &jobs[t].a;

		fpl_block_stats_add(stats, &a->s);
		if (st && (c->codes || c->y)) {
			st->flags |= a->flags;
			for (i = 0; i < FPL_NFLAGS; i++)
				st->count[i] += a->count[i];
		}
	}
	if (st && (c->codes || c->y))
		st->counter += c->v.n;
	return 0;
}

int fpl_block_quantize(const fpl_block_format *b, uint64_t *codes, uint64_t *scales,
		       double *tscale, const double *x, const size_t *dims, int ndims, fpl_rnd rnd,
		       fpl_state *st, fpl_block_stats *stats)
{
	ctx c;
	int rc = setup(&c, b, x, dims, ndims, rnd, st);

	if (rc)
		return rc;
	if ((c.v.n && !codes) || (c.v.nblocks && !scales) || (b->tensor_scale && !tscale))
		return FPL_EINVAL;
	c.codes = codes;
	c.scodes = scales;
	return drive(&c, st, stats, tscale);
}

int fpl__block_round_ref(const fpl_block_format *b, double *y, const double *x,
			 const size_t *dims, int ndims, fpl_rnd rnd, fpl_state *st,
			 fpl_block_stats *stats)
{
	ctx c;
	int rc = setup(&c, b, x, dims, ndims, rnd, st);

	if (rc)
		return rc;
	if (c.v.n && !y)
		return FPL_EINVAL;
	/* blocks read all their elements before writing any, and a block's
	 * elements belong to it alone, so y == x needs no copy */
	c.y = y;
	return drive(&c, st, stats, NULL);
}

int fpl_block_round(const fpl_block_format *b, double *y, const double *x, const size_t *dims,
		    int ndims, fpl_rnd rnd, fpl_state *st, fpl_block_stats *stats)
{
	fpl_block_stats local;
	ctx c;
	int rc = setup(&c, b, x, dims, ndims, rnd, st);

	if (rc)
		return rc;
	if (c.v.n && !y)
		return FPL_EINVAL;
	if (!stats) {
		fpl_block_stats_init(&local);
		stats = &local;
	}
	rc = fpl__blk_round_fast(b, y, x, &c.v, rnd, st, stats);
	if (rc != 1)
		return rc;
	return fpl__block_round_ref(b, y, x, dims, ndims, rnd, st, stats);
}

int fpl_block_scales(const fpl_block_format *b, double *scales, double *tscale, const double *x,
		     const size_t *dims, int ndims, fpl_block_stats *stats)
{
	ctx c;
	fpl_state st;
	int rc;

	fpl_state_init(&st, 0);
	rc = setup(&c, b, x, dims, ndims, FPL_RND_NE, &st);
	if (rc)
		return rc;
	if (c.v.nblocks && !scales)
		return FPL_EINVAL;
	c.svals = scales;
	return drive(&c, &st, stats, tscale);
}

int fpl_block_dequantize(const fpl_block_format *b, double *y, const uint64_t *codes,
			 const uint64_t *scales, double tscale, const size_t *dims, int ndims)
{
	fpl__blk_view v;
	ctx c;
	size_t id, j;
	const int ebits = b ? b->elem.nbits : 0, sbits = b ? b->scale.nbits : 0;

	if (!b || fpl__blk_view_of(b, dims, ndims, &v, NULL, NULL))
		return FPL_EINVAL;
	if (v.n && (!y || !codes || !scales))
		return FPL_EINVAL;
	memset(&c, 0, sizeof c);
	c.v = v;
	for (id = 0; id < v.nblocks; id++) {
		double X, D;

		if (sbits < 64 && scales[id] >> sbits)
			return FPL_ERANGE;
		X = fpl_decode(&b->scale, scales[id]);
		D = X * (b->tensor_scale ? tscale : 1.0);
		BLOCK_LOOP(&c, id, j)
		{
			double e;

			if (ebits < 64 && codes[j] >> ebits)
				return FPL_ERANGE;
			e = b->elem_int ? (double)(int8_t)(uint8_t)codes[j] / 64.0
					: fpl_decode(&b->elem, codes[j]);
			y[j] = fpl__isnan(X) ? NAN : e * D;
		}
	}
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * block_view.c - `hist` under a block-scaled format (fplab/hist_block.h):
 * the tensor is quantized once by fpl_block_quantize, then each element
 * is classified from its element code and its block's scale, and each
 * block's losses are counted.
 *
 * Invariant: every number comes from the codes and scales the library
 * wrote, except one bit per element: whether an element of magnitude
 * max_e got there by overflowing (the engine's overflow and saturated
 * flags, which fpl_block_quantize counts only in total).  That bit is
 * recomputed for those elements alone by the same engine call the
 * quantizer makes (fpl__div_ix, or fpl__round_ix of the binary32
 * quotient under q32) with the same draw index, so it is the
 * quantizer's own; the per-block saturated counts add up to the
 * library's `saturated` total (tests/cli/hist_block.sh checks it).
 *
 * Why the bins are exact: floor(log2 |x / D|) = ilogb(x) - ilogb(D) when
 * x's significand (in [1, 2)) is at least D's, one less otherwise; both
 * significands are exact binary64 values, so no quotient is rounded.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/codec.h>
#include <fplab/error.h>
#include <fplab/hist_block.h>

#include "block/block_internal.h"
#include "engine/internal.h"
#include "hist/hist_internal.h"

FPL_API void fpl_hist_block_init(fpl_hist_block *bv)
{
	memset(bv, 0, sizeof *bv);
	fpl_block_stats_init(&bv->s);
	bv->scale_lo = 1;
	bv->scale_hi = 0;
	bv->tscale = 1;
}

FPL_API int fpl_hist_block_bucket(uint64_t k)
{
	int i = 1;

	if (k == 0)
		return 0;
	while (i < FPL_HB_NBUCKETS - 1 && fpl_hist_block_bucket_max(i) < k)
		i++;
	return i;
}

FPL_API uint64_t fpl_hist_block_bucket_max(int i)
{
	return i <= 0 ? 0 : (uint64_t)1 << (i - 1);
}

/* floor(log2 |x / d|), x finite nonzero, d > 0 finite, clamped to the bins. */
static int quot_bin(double x, double d)
{
	int ex = ilogb(x), ed = ilogb(d);
	double fx = ldexp(fabs(x), -ex), fd = ldexp(d, -ed);	/* exact, in [1, 2) */
	long e = (long)ex - ed - (fx < fd);

	return e < FPL_HIST_EMIN ? FPL_HIST_EMIN : e > FPL_HIST_EMAX ? FPL_HIST_EMAX : (int)e;
}

/* The element value of a code. */
static double elem_value(const fpl_block_format *b, uint64_t code)
{
	if (b->elem_int)
		return (double)(int8_t)(uint8_t)code / 64.0;
	return fpl_decode(&b->elem, code);
}

/* The flags of element j's rounding (the quantizer's call, its draw). */
static unsigned elem_flags(const fpl_block_format *b, double x, double d, fpl_rnd rnd,
			   const fpl_state *st, uint64_t idx)
{
	unsigned fl = 0;

	if (b->quot == FPL_BQUOT_FP32) {
		double xv = (double)(float)x, q = (double)((float)xv / (float)d);

		fpl__round_ix(&b->elem, q, rnd, st, idx, &fl);
	} else {
		fpl__div_ix(&b->elem, x, d, rnd, st, idx, &fl);
	}
	return fl;
}

struct blk {
	uint64_t flushed, saturated;
	int live;	/* holds a finite nonzero value */
};

/* One element: classes, bins and errors into h, losses into k. */
static void classify_one(fpl_hist *h, const fpl_block_format *b, double x, double X, double d,
			 uint64_t code, uint64_t idx, uint64_t c0, struct blk *k, uint64_t *ovf)
{
	double ax = fabs(x), r, y, err;

	h->count++;
	if (!isfinite(ax)) {
		h->nan_inf++;
		return;
	}
	if (ax == 0) {
		h->zeros++;
		if (isnan(X))
			return;	/* its result is NaN: no error */
		h->abs_n++;	/* y = +-0 */
		return;
	}
	h->amax = ax > h->amax ? ax : h->amax;
	h->amin = ax < h->amin ? ax : h->amin;
	h->hist_in[ilogb(ax) - FPL_HIST_EMIN]++;
	k->live = 1;
	if (isnan(X)) {
		h->ovf_direct++;	/* finite x, NaN result: error +inf (hist_errstats) */
		return;
	}
	h->hist[quot_bin(x, d) - FPL_HIST_EMIN]++;
	r = elem_value(b, code);
	y = r * d;
	if (r == 0) {
		h->became_zero++;
		k->flushed++;
	} else if (fabs(r) == b->elem.max) {
		unsigned fl = elem_flags(b, x, d, h->cfg.rnd, &h->cfg.st, c0 + idx);

		if (fl & FPL_FLAG_OVERFLOW)
			(*ovf)++;
		else
			h->normal++;
		k->saturated += (fl & FPL_FLAG_SATURATED) != 0;
	} else if (fabs(r) < b->elem.min_normal) {
		h->subnormal++;
	} else {
		h->normal++;
	}
	err = fabs(y - x);
	h->abs_n++;
	h->abs_sum += err;
	h->abs_sumsq += err * err;
	h->abs_max = err > h->abs_max ? err : h->abs_max;
	err /= ax;
	h->err_n++;
	h->err_sum += err;
	h->err_sumsq += err * err;
	h->err_max = err > h->err_max ? err : h->err_max;
}

/* Block id's losses and scale into bv. */
static void block_done(fpl_hist_block *bv, const struct blk *k, double X)
{
	if (isnan(X))
		return;
	bv->flushed_by[fpl_hist_block_bucket(k->flushed)]++;
	bv->saturated_by[fpl_hist_block_bucket(k->saturated)]++;
	bv->blocks_flushed += k->flushed > 0;
	bv->blocks_saturated += k->saturated > 0;
	if (!k->live)
		return;
	int e = ilogb(X);
	e = e < FPL_HIST_EMIN ? FPL_HIST_EMIN : e > FPL_HIST_EMAX ? FPL_HIST_EMAX : e;
	bv->scale_hist[e - FPL_HIST_EMIN]++;
	if (bv->scale_lo > bv->scale_hi) {
		bv->scale_lo = bv->scale_hi = e;
		bv->min_scale = bv->max_scale = X;
	} else {
		bv->scale_lo = e < bv->scale_lo ? e : bv->scale_lo;
		bv->scale_hi = e > bv->scale_hi ? e : bv->scale_hi;
		bv->min_scale = X < bv->min_scale ? X : bv->min_scale;
		bv->max_scale = X > bv->max_scale ? X : bv->max_scale;
	}
}

/* Classify every element in storage order; per block counts in k[]. */
static void classify_all(fpl_hist *h, fpl_hist_block *bv, const fpl_block_format *b,
			 const fpl__blk_view *v, const double *x, const uint64_t *codes,
			 const double *sv, double ts, uint64_t c0, struct blk *k)
{
	uint64_t ovf = 0;
	size_t bt, row, col, j = 0, id;

	for (bt = 0; bt < v->batch; bt++)
		for (row = 0; row < v->R; row++) {
			size_t brow = (bt * v->nbr + row / v->tr) * v->nbc;

			for (col = 0; col < v->C; col++, j++) {
				id = brow + col / v->tc;
				classify_one(h, b, x[j], sv[id], sv[id] * ts, codes[j], j, c0, &k[id],
					     &ovf);
			}
		}
	for (id = 0; id < v->nblocks; id++)
		block_done(bv, &k[id], sv[id]);
	memcpy(h->events, h->cfg.st.count, sizeof h->events);
	h->overflow = h->ovf_direct + ovf;
}

FPL_API int fpl_hist_add_block(fpl_hist *h, fpl_hist_block *bv, const fpl_block_format *b,
			       const double *x, const size_t *dims, int ndims)
{
	fpl__blk_view v;
	uint64_t *codes = NULL, *sc = NULL, c0;
	double *sv = NULL, ts = 1;
	struct blk *k = NULL;
	size_t id;
	int rc;

	if (!h || !bv || !b || h->finished || h->count || fpl__blk_view_of(b, dims, ndims, &v, NULL, NULL)
	    || (v.n && !x))
		return FPL_EINVAL;
	codes = malloc((v.n ? v.n : 1) * sizeof *codes);
	sc = malloc((v.nblocks ? v.nblocks : 1) * sizeof *sc);
	sv = malloc((v.nblocks ? v.nblocks : 1) * sizeof *sv);
	k = calloc(v.nblocks ? v.nblocks : 1, sizeof *k);
	rc = codes && sc && sv && k ? 0 : FPL_ENOMEM;
	c0 = h->cfg.st.counter;
	if (!rc)
		rc = fpl_block_quantize(b, codes, sc, &ts, x, dims, ndims, h->cfg.rnd, &h->cfg.st,
					&bv->s);
	if (!rc) {
		for (id = 0; id < v.nblocks; id++)
			sv[id] = fpl_decode(&b->scale, sc[id]);
		classify_all(h, bv, b, &v, x, codes, sv, ts, c0, k);
		if (bv->tensors && ts != bv->tscale)
			bv->tscale_varies = 1;
		bv->tscale = ts;
		bv->tensors++;
		bv->bits_sum += fpl_block_bits(b, dims, ndims) * (double)v.n;
		h->scale_varies = 1;
		h->mx_blocks = v.nblocks;
		hist_suggest(h);
		h->finished = 1;
	}
	free(codes);
	free(sc);
	free(sv);
	free(k);
	return rc;
}

FPL_API void fpl_hist_block_merge(fpl_hist_block *t, const fpl_hist_block *p)
{
	int i;

	t->s.blocks += p->s.blocks;
	t->s.elements += p->s.elements;
	t->s.saturated += p->s.saturated;
	t->s.flushed += p->s.flushed;
	t->s.amax_saturated += p->s.amax_saturated;
	t->s.scale_range += p->s.scale_range;
	t->s.nan_blocks += p->s.nan_blocks;
	t->s.zero_blocks += p->s.zero_blocks;
	if (p->tensors && (p->tscale_varies || (t->tensors && p->tscale != t->tscale)))
		t->tscale_varies = 1;
	if (p->tensors)
		t->tscale = p->tscale;
	t->tensors += p->tensors;
	t->blocks_flushed += p->blocks_flushed;
	t->blocks_saturated += p->blocks_saturated;
	t->bits_sum += p->bits_sum;
	for (i = 0; i < FPL_HB_NBUCKETS; i++) {
		t->flushed_by[i] += p->flushed_by[i];
		t->saturated_by[i] += p->saturated_by[i];
	}
	for (i = 0; i < FPL_HIST_NBINS; i++)
		t->scale_hist[i] += p->scale_hist[i];
	if (p->scale_lo <= p->scale_hi) {
		if (t->scale_lo > t->scale_hi) {
			t->scale_lo = p->scale_lo;
			t->scale_hi = p->scale_hi;
			t->min_scale = p->min_scale;
			t->max_scale = p->max_scale;
		} else {
			t->scale_lo = p->scale_lo < t->scale_lo ? p->scale_lo : t->scale_lo;
			t->scale_hi = p->scale_hi > t->scale_hi ? p->scale_hi : t->scale_hi;
			t->min_scale = p->min_scale < t->min_scale ? p->min_scale : t->min_scale;
			t->max_scale = p->max_scale > t->max_scale ? p->max_scale : t->max_scale;
		}
	}
}

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
 * Two ways to the elements, same numbers: where every dequantized value
 * e * X * s is a binary64 (exact_products: the precisions of element,
 * scale and tensor scale add up to at most 53 bits and their exponents
 * stay inside binary64's range; every named format), fpl_block_round
 * (which has a fast path) gives y = e * D exactly, so e = y / D exactly
 * (a quotient whose exact value is a binary64 is not rounded), and
 * fpl_block_scales the scales; else fpl_block_quantize's codes are
 * decoded.  Both calls round elements and count flags, draws and block
 * events identically (fplab/block.h).
 *
 * Why the bins are exact: floor(log2 |x / D|) = ilogb(x) - ilogb(D) when
 * x's significand (in [1, 2)) is at least D's, one less otherwise; both
 * significands are exact binary64 values, so no quotient is rounded.  For
 * a power-of-two D the significand test always holds.
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

/* floor(log2 |x|) of a finite nonzero binary64. */
static int ilogb_bits(double x)
{
	uint64_t u;
	memcpy(&u, &x, 8);
	return hist_ilogb64(u & ~(1ull << 63));
}

/* floor(log2 |x / d|), x finite nonzero, d > 0 finite (d2 = 1: a power of
 * two 2^ed), clamped to the bins. */
static int quot_bin(double x, double d, int ed, int d2)
{
	int ex = ilogb_bits(x);
	long e = (long)ex - ed;

	if (!d2) {
		double fx = ldexp(fabs(x), -ex), fd = ldexp(d, -ed);	/* exact, in [1, 2) */
		e -= fx < fd;
	}
	return e < FPL_HIST_EMIN ? FPL_HIST_EMIN : e > FPL_HIST_EMAX ? FPL_HIST_EMAX : (int)e;
}

/* Is every e * X * s a binary64 (see the top)? */
static int exact_products(const fpl_block_format *b)
{
	const fpl_format *e = &b->elem, *c = &b->scale;
	int ts = b->tensor_scale != 0;
	int prec = (b->elem_int ? 7 : e->m + 1) + c->m + 1 + (ts ? 24 : 0);
	long lo = (long)ilogb(e->min_subnormal) + ilogb(c->min_subnormal) + (ts ? -149 : 0);
	long hi = (long)e->emax + 1 + c->emax + 1 + (ts ? 128 : 0);

	return prec <= 53 && lo >= -1074 && hi <= 1023;
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

/* A block's divisor D = X * s, with ed = floor(log2 D), d2 = 1 when D is
 * a power of two. */
struct div {
	double X, d;
	int ed, d2;
};

/* One element (r its element, y = r * D its value; ignored in a NaN
 * block): classes, bins and errors into h, losses into k. */
static void classify_one(fpl_hist *h, const fpl_block_format *b, double x, const struct div *dv,
			 double r, double y, uint64_t idx, uint64_t c0, struct blk *k, uint64_t *ovf)
{
	double ax = fabs(x), X = dv->X, d = dv->d, err;

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
	h->hist_in[ilogb_bits(ax) - FPL_HIST_EMIN]++;
	k->live = 1;
	if (isnan(X)) {
		h->ovf_direct++;	/* finite x, NaN result: error +inf (hist_errstats) */
		(*ovf)++;
		return;
	}
	h->hist[quot_bin(x, d, dv->ed, dv->d2) - FPL_HIST_EMIN]++;
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
	int e = ilogb_bits(X);
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

/* Classify every element in storage order; per block counts in k[].
 * y: the dequantized values (then codes is NULL), or codes. */
static void classify_all(fpl_hist *h, fpl_hist_block *bv, const fpl_block_format *b,
			 const fpl__blk_view *v, const double *x, const double *y,
			 const uint64_t *codes, const double *sv, double ts, uint64_t c0,
			 struct blk *k)
{
	uint64_t ovf = 0;
	size_t bt, row, col, j = 0, id, last = (size_t)-1;
	struct div dv = { 0, 0, 0, 0 };

	for (bt = 0; bt < v->batch; bt++)
		for (row = 0; row < v->R; row++) {
			size_t brow = (bt * v->nbr + row / v->tr) * v->nbc;

			for (col = 0; col < v->C; col++, j++) {
				double r, yj;

				id = brow + col / v->tc;
				if (id != last) {
					last = id;
					dv.X = sv[id];
					dv.d = sv[id] * ts;	/* exact: see exact_products */
					if (isfinite(dv.d) && dv.d > 0) {
						dv.ed = ilogb_bits(dv.d);
						dv.d2 = ldexp(dv.d, -dv.ed) == 1.0;
					}
				}
				if (codes) {
					r = elem_value(b, codes[j]);
					yj = r * dv.d;
				} else {
					yj = y[j];
					r = yj / dv.d;	/* exact: yj = r * D exactly */
				}
				classify_one(h, b, x[j], &dv, r, yj, j, c0, &k[id], &ovf);
			}
		}
	for (id = 0; id < v->nblocks; id++)
		block_done(bv, &k[id], sv[id]);
	memcpy(h->events, h->cfg.st.count, sizeof h->events);
	h->overflow += ovf;
}

/* Quantize and classify one part (whole blocks); *ts its tensor scale. */
static int add_part(fpl_hist *h, fpl_hist_block *bv, const fpl_block_format *b, const double *x,
		    const size_t *dims, int ndims, double *ts)
{
	fpl__blk_view v;
	uint64_t *codes = NULL, *sc = NULL, c0;
	double *sv = NULL, *y = NULL;
	struct blk *k = NULL;
	size_t id, n1, nb1;
	int rc, viay;

	*ts = 1;
	if (!h || !bv || !b || h->finished || fpl__blk_view_of(b, dims, ndims, &v, NULL, NULL)
	    || (v.n && !x))
		return FPL_EINVAL;
	viay = exact_products(b);
	n1 = v.n ? v.n : 1;
	nb1 = v.nblocks ? v.nblocks : 1;
	if (viay)
		y = malloc(n1 * sizeof *y);
	else {
		codes = malloc(n1 * sizeof *codes);
		sc = malloc(nb1 * sizeof *sc);
	}
	sv = malloc(nb1 * sizeof *sv);
	k = calloc(nb1, sizeof *k);
	rc = (viay ? y != NULL : codes && sc) && sv && k ? 0 : FPL_ENOMEM;
	c0 = h->cfg.st.counter;
	if (!rc && viay) {
		rc = fpl_block_round(b, y, x, dims, ndims, h->cfg.rnd, &h->cfg.st, &bv->s);
		if (!rc)
			rc = fpl_block_scales(b, sv, ts, x, dims, ndims, NULL);
	} else if (!rc) {
		rc = fpl_block_quantize(b, codes, sc, ts, x, dims, ndims, h->cfg.rnd, &h->cfg.st,
					&bv->s);
		for (id = 0; !rc && id < v.nblocks; id++)
			sv[id] = fpl_decode(&b->scale, sc[id]);
	}
	if (!rc) {
		/* element j of this part took draw c0 + j: the part's draws follow the
		 * parts before it (the counter grew by their lengths) */
		classify_all(h, bv, b, &v, x, y, codes, sv, *ts, c0, k);
		h->mx_blocks += v.nblocks;
	}
	free(codes);
	free(y);
	free(sc);
	free(sv);
	free(k);
	return rc;
}

/* Settle the tensor (its whole dims) in h and bv. */
static void finish_tensor(fpl_hist *h, fpl_hist_block *bv, const fpl_block_format *b, double ts,
			  const size_t *dims, int ndims)
{
	size_t n = 1;

	for (int i = 0; i < ndims; i++)
		n *= dims[i];
	if (bv->tensors && ts != bv->tscale)
		bv->tscale_varies = 1;
	bv->tscale = ts;
	bv->tensors++;
	bv->bits_sum += fpl_block_bits(b, dims, ndims) * (double)n;
	h->scale_varies = 1;
	hist_suggest(h);
	h->finished = 1;
}

FPL_API int fpl_hist_add_block(fpl_hist *h, fpl_hist_block *bv, const fpl_block_format *b,
			       const double *x, const size_t *dims, int ndims)
{
	double ts;
	int rc;

	if (h && h->count)
		return FPL_EINVAL;
	rc = add_part(h, bv, b, x, dims, ndims, &ts);
	if (!rc)
		finish_tensor(h, bv, b, ts, dims, ndims);
	return rc;
}

FPL_API int fpl_hist_add_block_part(fpl_hist *h, fpl_hist_block *bv, const fpl_block_format *b,
				    const double *x, const size_t *dims, int ndims)
{
	double ts;

	if (!b || b->tensor_scale)
		return FPL_EINVAL;
	return add_part(h, bv, b, x, dims, ndims, &ts);
}

FPL_API int fpl_hist_block_finish(fpl_hist *h, fpl_hist_block *bv, const fpl_block_format *b,
				  const size_t *dims, int ndims)
{
	if (!h || !bv || !b || b->tensor_scale || h->finished || !dims || ndims < 1)
		return FPL_EINVAL;
	finish_tensor(h, bv, b, 1.0, dims, ndims);
	return 0;
}

FPL_API void fpl_hist_block_merge(fpl_hist_block *t, const fpl_hist_block *p)
{
	int i;

	fpl_block_stats_add(&t->s, &p->s);
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

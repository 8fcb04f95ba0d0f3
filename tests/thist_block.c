/* SPDX-License-Identifier: MIT */
/*
 * tests/thist_block.c - fpl_hist_add_block (fplab/hist_block.h) against
 * references built from the public block API, on random tensors (wide
 * exponents, zeros, short last blocks, NaN and infinity in some) for
 * several block formats and every deterministic mode and sp:
 *  - the classes add up to n; became_zero equals the library's flushed;
 *    the overflow class less the NaN-block values equals the engine's
 *    overflow count (the one bit block_view.c recomputes per element);
 *  - for 1-D blocks along the last axis without a tensor scale, each
 *    block quantized on its own (fpl_block_round of that block alone,
 *    its draws at the same counter) gives the block's flushed and
 *    saturated counts: the buckets, blocks_flushed and blocks_saturated
 *    must equal those;
 *  - the largest absolute and relative errors equal those of
 *    fpl_block_round's dequantized values against x; min/max scale equal
 *    those of fpl_block_scales over the blocks holding a finite nonzero
 *    value and no NaN or infinity.
 * The expected counts hand-worked for small tensors are in
 * tests/cli/hist_block.sh.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/fplab.h>

#include "harness.h"

#define ROWS 3
#define COLS 70	/* 32 + 32 + 6: a short last block */
#define N (ROWS * COLS)

static void fill(h_rng *r, double *x, int specials)
{
	for (int i = 0; i < N; i++) {
		uint64_t k = h_rng_below(r, 20);
		if (k == 0)
			x[i] = 0;
		else
			x[i] = h_rng_value(r, -40, k == 1 ? 160 : 12, 53, 0);
	}
	if (specials) {
		x[h_rng_below(r, N)] = NAN;
		x[h_rng_below(r, N)] = -INFINITY;
	}
	for (int i = 0; i < COLS; i++)	/* a row of zeros but one tiny value */
		x[COLS + i] = i == 5 ? 0x1p-30 : 0.0;
}

/* Reference losses of 1-D last-axis blocks: each block on its own. */
static void ref_blocks(const fpl_block_format *b, const double *x, fpl_rnd rnd, uint64_t seed,
		       uint64_t *fl_by, uint64_t *sat_by, uint64_t *nfl, uint64_t *nsat)
{
	int B = b->size;
	double y[COLS];

	for (int row = 0; row < ROWS; row++)
		for (int c0 = 0; c0 < COLS; c0 += B) {
			size_t len = (size_t)(c0 + B < COLS ? B : COLS - c0);
			int has_nan = 0;
			fpl_block_stats s;
			fpl_state st;

			for (size_t j = 0; j < len; j++)
				has_nan |= !isfinite(x[row * COLS + c0 + (int)j]);
			fpl_state_init(&st, seed);
			st.counter = (uint64_t)(row * COLS + c0);
			fpl_block_stats_init(&s);
			fpl_block_round(b, y, x + row * COLS + c0, &len, 1, rnd, &st, &s);
			if (has_nan)
				continue;
			fl_by[fpl_hist_block_bucket(s.flushed)]++;
			sat_by[fpl_hist_block_bucket(s.saturated)]++;
			*nfl += s.flushed > 0;
			*nsat += s.saturated > 0;
		}
}

static void one(const char *spec, fpl_rnd rnd, int specials, h_rng *r)
{
	static double x[N], y[N], sv[N];
	fpl_block_format b;
	fpl_hist_config cfg;
	fpl_hist h;
	fpl_hist_block bv;
	fpl_block_stats rs;
	fpl_state st;
	char err[200], what[160];
	size_t dims[2] = { ROWS, COLS }, nb;
	uint64_t seed = h_rng_next(r);
	double ts;

	snprintf(what, sizeof what, "%s %s%s", spec, fpl_rnd_name(rnd), specials ? " nan" : "");
	if (!h_check(fpl_block_parse(&b, spec, err, sizeof err) == 0)) {
		h_fail("%s: %s", spec, err);
		return;
	}
	fill(r, x, specials);
	fpl_hist_config_init(&cfg, &b.elem);
	cfg.rnd = rnd;
	fpl_state_init(&cfg.st, seed);
	if (!h_check(fpl_hist_init(&h, &cfg) == 0)) {
		h_fail("%s: init", what);
		return;
	}
	fpl_hist_block_init(&bv);
	if (!h_check(fpl_hist_add_block(&h, &bv, &b, x, dims, 2) == 0 && fpl_hist_finish(&h) == 0))
		h_fail("%s: add", what);
	fpl_hist_release(&h);

	uint64_t sum = h.zeros + h.nan_inf + h.became_zero + h.subnormal + h.normal + h.overflow;
	if (!h_check(h.count == N && sum == N))
		h_fail("%s: classes add up to %llu of %llu", what, (unsigned long long)sum,
		       (unsigned long long)h.count);
	if (!h_check(h.became_zero == bv.s.flushed))
		h_fail("%s: became_zero %llu, flushed %llu", what, (unsigned long long)h.became_zero,
		       (unsigned long long)bv.s.flushed);
	uint64_t ovf_ev = h.events[__builtin_ctz(FPL_FLAG_OVERFLOW)];
	if (!h_check(h.overflow - h.ovf_direct == ovf_ev))
		h_fail("%s: overflow class %llu - %llu NaN-block values, engine overflow %llu", what,
		       (unsigned long long)h.overflow, (unsigned long long)h.ovf_direct,
		       (unsigned long long)ovf_ev);
	if (!h_check(h.events[__builtin_ctz(FPL_FLAG_SATURATED)] == bv.s.saturated))
		h_fail("%s: saturated events", what);

	/* errors against fpl_block_round's values, computed here */
	fpl_state_init(&st, seed);
	fpl_block_stats_init(&rs);
	fpl_block_round(&b, y, x, dims, 2, rnd, &st, &rs);
	double amx = 0, rmx = 0;
	for (int i = 0; i < N; i++) {
		if (!isfinite(x[i]) || !isfinite(y[i]))
			continue;
		double d = fabs(y[i] - x[i]);
		amx = d > amx ? d : amx;
		if (x[i] != 0)
			rmx = d / fabs(x[i]) > rmx ? d / fabs(x[i]) : rmx;
	}
	if (!h_check(h.abs_max == amx && h.err_max == rmx))
		h_fail("%s: max errors %a %a, want %a %a", what, h.abs_max, h.err_max, amx, rmx);

	/* scales over the live blocks (1-D last axis: from x here) */
	fpl_block_scales(&b, sv, &ts, x, dims, 2, NULL);
	fpl_block_layout(&b, dims, 2, &nb, NULL, NULL);
	if (b.shape == FPL_BLOCK_1D && b.axis == -1 && b.size > 0) {
		double mn = INFINITY, mxs = 0;
		for (size_t id = 0; id < nb; id++) {
			size_t per = (COLS + (size_t)b.size - 1) / (size_t)b.size;
			size_t row = id / per, c0 = id % per * (size_t)b.size;
			int live = 0, bad = 0;
			for (size_t c = c0; c < c0 + (size_t)b.size && c < COLS; c++) {
				double v = x[row * COLS + c];
				bad |= !isfinite(v);
				live |= v != 0 && isfinite(v);
			}
			if (live && !bad) {
				mn = sv[id] < mn ? sv[id] : mn;
				mxs = sv[id] > mxs ? sv[id] : mxs;
			}
		}
		if (!h_check(bv.min_scale == mn && bv.max_scale == mxs))
			h_fail("%s: scales %a..%a, want %a..%a", what, bv.min_scale, bv.max_scale, mn,
			       mxs);
	}
	if (b.shape == FPL_BLOCK_1D && b.axis == -1 && b.size > 0 && !b.tensor_scale) {
		uint64_t fl_by[FPL_HB_NBUCKETS] = { 0 }, sat_by[FPL_HB_NBUCKETS] = { 0 }, nfl = 0,
			 nsat = 0;
		ref_blocks(&b, x, rnd, seed, fl_by, sat_by, &nfl, &nsat);
		if (!h_check(!memcmp(fl_by, bv.flushed_by, sizeof fl_by)
			     && !memcmp(sat_by, bv.saturated_by, sizeof sat_by)
			     && nfl == bv.blocks_flushed && nsat == bv.blocks_saturated))
			h_fail("%s: losses per block: flushed blocks %llu (want %llu), saturated %llu "
			       "(want %llu)", what, (unsigned long long)bv.blocks_flushed,
			       (unsigned long long)nfl, (unsigned long long)bv.blocks_saturated,
			       (unsigned long long)nsat);
	}
}

/* Does h equal w in every count, event, error, extreme and bin? */
static int same_hist(const fpl_hist *h, const fpl_hist *w)
{
	return h->count == w->count && h->zeros == w->zeros && h->nan_inf == w->nan_inf
	       && h->became_zero == w->became_zero && h->subnormal == w->subnormal
	       && h->normal == w->normal && h->overflow == w->overflow
	       && !memcmp(h->events, w->events, sizeof h->events) && h->err_n == w->err_n
	       && h->abs_n == w->abs_n && h_same(h->err_sum, w->err_sum)
	       && h_same(h->err_sumsq, w->err_sumsq) && h_same(h->err_max, w->err_max)
	       && h_same(h->abs_sum, w->abs_sum) && h_same(h->abs_sumsq, w->abs_sumsq)
	       && h_same(h->abs_max, w->abs_max) && h_same(h->amax, w->amax)
	       && h_same(h->amin, w->amin) && h->mx_blocks == w->mx_blocks
	       && !memcmp(h->hist, w->hist, sizeof h->hist)
	       && !memcmp(h->hist_in, w->hist_in, sizeof h->hist_in) && h->best_k == w->best_k;
}

/*
 * In parts (fpl_hist_add_block_part): a [ROWS, COLS] tensor a row at a
 * time, and a 1-D one of N values in parts of 2 blocks, give the whole
 * tensor's numbers, bit for bit, for a format without a tensor scale.
 */
static void test_parts(const char *spec, fpl_rnd rnd, h_rng *r)
{
	static double x[N];
	fpl_block_format b, pb;
	fpl_hist_config cfg;
	fpl_hist hw, hp;
	fpl_hist_block bw, bp;
	char err[200];
	size_t dims[2] = { ROWS, COLS }, n1 = N;

	if (fpl_block_parse(&b, spec, err, sizeof err))
		return (void)h_fail("%s: %s", spec, err);
	fill(r, x, h_rng_below(r, 2) != 0);
	fpl_hist_config_init(&cfg, &b.elem);
	cfg.rnd = rnd;
	fpl_state_init(&cfg.st, h_rng_next(r));
	for (int oned = 0; oned < 2; oned++) {
		fpl_hist_init(&hw, &cfg);
		fpl_hist_init(&hp, &cfg);
		fpl_hist_block_init(&bw);
		fpl_hist_block_init(&bp);
		int rc = fpl_hist_add_block(&hw, &bw, &b, x, oned ? &n1 : dims, oned ? 1 : 2);
		pb = b;
		pb.axis = -1;
		size_t step = oned ? 2 * (size_t)b.size : COLS;
		for (size_t at = 0; !rc && at < N; at += step) {
			size_t len = N - at < step ? N - at : step, pd[2] = { 1, COLS };
			rc = fpl_hist_add_block_part(&hp, &bp, &pb, x + at, oned ? &len : pd, oned ? 1 : 2);
		}
		if (!rc)
			rc = fpl_hist_block_finish(&hp, &bp, &b, oned ? &n1 : dims, oned ? 1 : 2);
		fpl_hist_release(&hw);
		fpl_hist_release(&hp);
		if (!h_check(rc == 0 && same_hist(&hp, &hw) && !memcmp(&bp, &bw, sizeof bp)))
			h_fail("%s %s%s: parts differ from the whole (rc %d)", spec, fpl_rnd_name(rnd),
			       oned ? " 1-D" : "", rc);
	}
}

/* The buckets: 0 | 1 | 2 | 3-4 | 5-8 ... */
static void test_buckets(void)
{
	static const uint64_t k[] = { 0, 1, 2, 3, 4, 5, 8, 9, 16, 17, 32, 33 };
	static const int want[] = { 0, 1, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7 };
	for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
		if (!h_check(fpl_hist_block_bucket(k[i]) == want[i]))
			h_fail("bucket(%llu) = %d, want %d", (unsigned long long)k[i],
			       fpl_hist_block_bucket(k[i]), want[i]);
}

int main(void)
{
	static const char *const specs[] = { "mxfp4", "mxfp8", "mxfp8-e5m2:rceil", "mxfp6-e2m3:even",
					     "mxint8:16", "mxfp4:ceil:8", "nvfp4", "nvfp4:q32",
					     "block:e4m3fn:e4m3fn:16x16:amax", "mxfp4:4@0",
					     "block:e2m1:fp32:tensor:amax",
					     /* products beyond 53 bits: the codes path */
					     "block:fp64:e8m0:32", "block:bf16:fp32:16:amax:ts" };
	static const fpl_rnd modes[] = { FPL_RND_NE, FPL_RND_NA, FPL_RND_TZ, FPL_RND_TP,
					 FPL_RND_TN, FPL_RND_OD, FPL_RND_SP };
	h_rng r;

	h_init("thist_block");
	h_rng_init(&r, 25);
	test_buckets();
	for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
		for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
			for (int sp = 0; sp < 2; sp++)
				one(specs[s], modes[m], sp, &r);
	for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
		test_parts("mxfp4", modes[m], &r);
		test_parts("mxfp8:16", modes[m], &r);
		test_parts("mxint8:rceil", modes[m], &r);
		test_parts("block:fp64:e8m0:8", modes[m], &r);
	}
	{	/* a tensor scale cannot come in parts */
		fpl_block_format b;
		fpl_hist h;
		fpl_hist_block bv;
		fpl_hist_config cfg;
		double x[16] = { 1 };
		size_t n = 16;
		fpl_block_parse(&b, "nvfp4", NULL, 0);
		fpl_hist_config_init(&cfg, &b.elem);
		fpl_hist_init(&h, &cfg);
		fpl_hist_block_init(&bv);
		if (!h_check(fpl_hist_add_block_part(&h, &bv, &b, x, &n, 1) == FPL_EINVAL
			     && fpl_hist_block_finish(&h, &bv, &b, &n, 1) == FPL_EINVAL))
			h_fail("nvfp4 in parts is not refused");
		fpl_hist_release(&h);
	}
	return h_done();
}

/* SPDX-License-Identifier: MIT */
/*
 * tests/tblockfast.c - fpl_block_round_f32 (the binary32 entry and its
 * vector kernels) against the reference: each binary32 input widened,
 * quantized by block_quant.c's reference path alone
 * (fpl__block_round_ref), the dequantized values narrowed once.  Same
 * bits of every value, the same flags, counts and draw counter, the same
 * per-block events, for every named block format and each scale rule, in
 * nearest-even and sp (two R), on more than 10^6 elements per format:
 * blocks of N(0, 1) values at random binades, zero blocks, blocks with a
 * NaN or an infinity, subnormal elements, amax at the binade edges where
 * floor, ceil, even and rceil differ (significands of all ones, max_e
 * times a power of two and its neighbours, midpoints), lone outliers,
 * rows whose length is not a multiple of the block; for the amax rule
 * also values within 2^+-12 (a tensor scale of ordinary size, so that
 * its vector paths run: e2m1 thresholds in nearest-even and sp, exact
 * and q32 quotients, groups of sixteen blocks and single blocks).  sp
 * results do not depend on the thread count.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/fplab.h>

#include "harness.h"

extern uint64_t fpl__bq_fast_runs;
extern int fpl__bq_force_redo;
int fpl__block_round_ref(const fpl_block_format *b, double *y, const double *x,
			 const size_t *dims, int ndims, fpl_rnd rnd, fpl_state *st,
			 fpl_block_stats *stats);

static uint64_t rs = 0x1234567;

/* 1: fill_block keeps every value within 2^+-12 (a tensor scale of
 * ordinary size, scales inside e4m3's range, the amax rule's vector
 * paths) */
static int mild;

static uint64_t rnd64(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static double gauss(void)
{
	double u1 = ((double)(rnd64() >> 11) + 0.5) * 0x1p-53, u2 = (double)(rnd64() >> 11) * 0x1p-53;

	return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

/* One block of len values of a random kind; maxe = the element's max. */
static void fill_block(float *x, size_t len, double maxe)
{
	int kind = (int)(rnd64() % 12), e = mild ? (int)(rnd64() % 17) - 8 : (int)(rnd64() % 260) - 140;
	size_t i;

	if (mild && (kind == 6 || kind == 7))
		kind = 10 + kind % 2;	/* no huge outliers */

	for (i = 0; i < len; i++)
		x[i] = (float)ldexp(gauss(), e);
	switch (kind) {
	case 0:	/* zeros, both signs */
		for (i = 0; i < len; i++)
			x[i] = rnd64() & 1 ? 0.0f : -0.0f;
		break;
	case 1:	/* a NaN or an infinity */
		x[rnd64() % len] = rnd64() & 1 ? NAN : (rnd64() & 1 ? INFINITY : -INFINITY);
		break;
	case 2:	/* subnormal elements, alone or among normals */
		for (i = 0; i < len; i++)
			if (rnd64() & 1) {
				uint32_t u = (uint32_t)(rnd64() & 0x807fffffu);

				/* mild: also the tiniest, k 2^-149 (k < 8), whose
				 * q32 quotients by a scale above 8 are 0 */
				if (mild && (rnd64() & 1))
					u &= 0x80000007u;
				memcpy(x + i, &u, 4);
			}
		break;
	case 3: {	/* amax with a significand of all ones in its top bits */
		uint32_t u = (uint32_t)((mild ? (uint64_t)(127 + e) : rnd64() % 250 + 2) << 23) | (0x7fffffu ^ (uint32_t)(rnd64() % 8
											      << (rnd64() % 22)));
		memcpy(x + rnd64() % len, &u, 4);
		break;
	}
	case 4: {	/* amax = max_e 2^j and its neighbours */
		float v = (float)ldexp(maxe, mild ? e : (int)(rnd64() % 200) - 100);
		int d = (int)(rnd64() % 3) - 1;
		uint32_t u;

		memcpy(&u, &v, 4);
		u += (uint32_t)d;
		memcpy(x + rnd64() % len, &u, 4);
		break;
	}
	case 5:	/* midpoints and exact element values times a power of two */
		for (i = 0; i < len; i++)
			x[i] = (float)ldexp((double)(rnd64() % 64) * 0.125 * (rnd64() & 1 ? 1 : -1), e / 4);
		break;
	case 6:	/* a lone outlier */
		x[rnd64() % len] = (float)ldexp(1.0 + (double)(rnd64() % 1024) / 1024, e / 2 + 60);
		break;
	case 7:	/* near FLT_MAX and near the smallest subnormal */
		x[rnd64() % len] = rnd64() & 1 ? FLT_MAX : -FLT_MAX * 0.9999f;
		break;
	case 8:
		for (i = 0; i < len; i++)
			x[i] = (float)ldexp(gauss(), -130);
		break;
	case 9:	/* amax = max_e 2^j, elements on the quarters of 2^j: with a
		 * power-of-two block scale, e2m1's midpoints and its overflow
		 * threshold 7 exactly (ties) */
		for (i = 0; i < len; i++)
			x[i] = (float)ldexp((double)(rnd64() % 33) * 0.25 * (rnd64() & 1 ? 1 : -1), e / 4);
		x[rnd64() % len] = (float)ldexp(maxe, e / 4);
		break;
	default:
		break;
	}
}

static int same32(float a, float b)
{
	return h_bits32(a) == h_bits32(b);
}

static void ref_f32(const fpl_block_format *b, float *y, const float *x, double *w,
		    const size_t *dims, size_t n, fpl_rnd rnd, fpl_state *st, fpl_block_stats *s)
{
	size_t j;

	for (j = 0; j < n; j++)
		w[j] = x[j];
	if (fpl__block_round_ref(b, w, w, dims, 2, rnd, st, s))
		h_fail("reference failed");
	for (j = 0; j < n; j++)
		y[j] = (float)w[j];
}

static void one_format(const char *spec, size_t cols, size_t rows)
{
	static const fpl_rnd modes[] = { FPL_RND_NE, FPL_RND_SP };
	static const int rbits[] = { 32, 5 };
	fpl_block_format b;
	char err[200];
	size_t dims[2] = { rows, cols }, n = rows * cols, j, bl;
	float *x = malloc(n * sizeof *x), *y1 = malloc(n * sizeof *y1), *y2 = malloc(n * sizeof *y2);
	double *w = malloc(n * sizeof *w);
	int m, bad = 0;

	if (fpl_block_parse(&b, spec, err, sizeof err)) {
		h_fail("%s: %s", spec, err);
		return;
	}
	bl = b.size > 0 ? (size_t)b.size : 32;
	for (j = 0; j < n; j += bl)
		fill_block(x + j, n - j < bl ? n - j : bl, b.elem.max);
	for (m = 0; m < 3; m++) {
		fpl_rnd rnd = modes[m > 0];
		fpl_state a, c;
		fpl_block_stats s1, s2;
		uint64_t runs0 = fpl__bq_fast_runs;

		fpl_state_init(&a, 77 + (uint64_t)m);
		a.counter = 12345;
		a.sr_bits = rbits[m == 2];
		c = a;
		fpl_block_stats_init(&s1);
		fpl_block_stats_init(&s2);
		if (!h_check(fpl_block_round_f32(&b, y1, x, dims, 2, rnd, &a, &s1) == 0))
			h_fail("%s: fpl_block_round_f32 failed", spec);
		ref_f32(&b, y2, x, w, dims, n, rnd, &c, &s2);
		if ((!strcmp(fpl_kernels_selected(), "avx512") || !strcmp(fpl_kernels_selected(), "avx2"))
		    && !h_check(fpl__bq_fast_runs == runs0 + 1))
			h_fail("%s: the %s kernel did not run", spec, fpl_kernels_selected());
		for (j = 0; j < n; j++)
			if (!h_check(same32(y1[j], y2[j])) && bad++ < 4)
				h_fail("%s %s R=%d x[%zu] = %a: %a, reference %a", spec, fpl_rnd_name(rnd),
				       a.sr_bits, j, (double)x[j], (double)y1[j], (double)y2[j]);
		if (!h_check(h_same_state(&a, &c) && !memcmp(&s1, &s2, sizeof s1)) && bad++ < 8)
			h_fail("%s %s R=%d: flags %x %x, inexact %llu %llu, underflow %llu %llu, "
			       "saturated %llu %llu, flushed %llu %llu, amax_sat %llu %llu, "
			       "scale_range %llu %llu, nan %llu %llu, zero %llu %llu",
			       spec, fpl_rnd_name(rnd), a.sr_bits, a.flags, c.flags,
			       (unsigned long long)a.count[0], (unsigned long long)c.count[0],
			       (unsigned long long)a.count[1], (unsigned long long)c.count[1],
			       (unsigned long long)s1.saturated, (unsigned long long)s2.saturated,
			       (unsigned long long)s1.flushed, (unsigned long long)s2.flushed,
			       (unsigned long long)s1.amax_saturated, (unsigned long long)s2.amax_saturated,
			       (unsigned long long)s1.scale_range, (unsigned long long)s2.scale_range,
			       (unsigned long long)s1.nan_blocks, (unsigned long long)s2.nan_blocks,
			       (unsigned long long)s1.zero_blocks, (unsigned long long)s2.zero_blocks);
		if (rnd == FPL_RND_SP) {	/* thread-count independence */
			fpl_state t3;
			size_t diff = 0;

			fpl_state_init(&t3, 77 + (uint64_t)m);
			t3.counter = 12345;
			t3.sr_bits = rbits[m == 2];
			t3.threads = 3;
			fpl_block_round_f32(&b, y2, x, dims, 2, rnd, &t3, NULL);
			for (j = 0; j < n; j++)
				diff += !same32(y1[j], y2[j]);
			if (!h_check(diff == 0 && h_same_state(&a, &t3)))
				h_fail("%s sp: 3 threads differ from 1 in %zu values", spec, diff);
		}
	}
	free(x);
	free(y1);
	free(y2);
	free(w);
}

int main(void)
{
	static const char *const specs[] = {
		"mxfp8", "mxfp8-e5m2", "mxfp6-e3m2", "mxfp6-e2m3", "mxfp4", "mxint8",
		"mxfp8:ceil", "mxfp8:even", "mxfp8:rceil", "mxfp8-e5m2:rceil", "mxfp6-e3m2:even",
		"mxfp6-e2m3:ceil", "mxfp4:ceil", "mxfp4:even", "mxfp4:rceil", "mxint8:rceil",
		"mxint8:ceil", "nvfp4", "nvfp4:q32", "block:e2m1:e4m3fn:16:amax",
		"mxfp8:row",
	};
	static const char *const sets[] = { "avx512", "avx2" };
	size_t i, s, rows = h_sanitized() ? 40 : 1000;
	char orig[32];

	h_init("tblockfast");
	rs = (rs ^ h_seed()) | 1;
	snprintf(orig, sizeof orig, "%s", fpl_kernels_selected());
	/* each kernel set this CPU runs (the selected one at least) */
	for (s = 0; s < 2; s++) {
		if (fpl_kernels_select(sets[s]))
			continue;
		h_note("kernels %s", sets[s]);
		for (i = 0; i < sizeof specs / sizeof *specs; i++) {
			/* 1000 x 1024 elements (10^6), then rows of 1000: a short block per row */
			one_format(specs[i], 1024, rows);
			one_format(specs[i], 1000, rows / 10);
		}
		/* the amax rule with values of ordinary size (its vector
		 * paths: e2m1 thresholds, exact and q32 quotients), 10^6
		 * elements each, rows of 1024 and of 1008 (groups of sixteen
		 * blocks, then single blocks at a row's end) */
		mild = 1;
		for (i = 0; i < sizeof specs / sizeof *specs; i++)
			if (!strncmp(specs[i], "nvfp4", 5) || !strncmp(specs[i], "block:", 6)) {
				one_format(specs[i], 1024, rows);
				one_format(specs[i], 1008, rows / 10);
			}
		mild = 0;
		/* the AVX-512 sp kernel's redo of a group by its float steps
		 * (taken by chance about 2^-(23-m) per tiny lane): forced */
		if (!strcmp(sets[s], "avx512")) {
			fpl__bq_force_redo = 1;
			for (i = 0; i < 6; i++)
				one_format(specs[i], 1024, rows / 4);
			fpl__bq_force_redo = 0;
		}
	}
	if (fpl_kernels_select(orig) == 0 && strcmp(orig, "avx512") && strcmp(orig, "avx2"))
		for (i = 0; i < sizeof specs / sizeof *specs; i++)
			one_format(specs[i], 1000, rows / 10);
	return h_done();
}

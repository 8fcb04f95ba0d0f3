/* SPDX-License-Identifier: MIT */
/*
 * tests/tblock.c - block-scaled formats (fplab/block.h) against
 * references written here from the specifications:
 *  - one MX block, exhaustively over the element codes of e2m1, e2m3,
 *    e3m2, e4m3fn, e5m2 and MXINT8's int8, times every e8m0 scale
 *    exponent the floor rule can give (-127..127), at each code, the
 *    midpoints and quarter points between codes and beyond the largest:
 *    expected elements by a hand nearest-even over the decoded code list
 *    (oracle_decode), codes and e8m0 scale codes by the OCP layout;
 *  - the scale rules floor, ceil, even, rceil at the binade edges where
 *    they differ (amax = 2^e (2 - 2^-j) and the element maximum), from
 *    the formulas of OCP MX v1.0 and microxcaling, written with frexp;
 *  - blocks of zeros, with NaN, with infinity, with subnormal and
 *    underflowing elements; a short last block; 2-D tiles and an axis;
 *  - NVFP4's two levels, exact (MPFR via the oracle rounds each quotient
 *    once) and with binary32 quotients (C float arithmetic, then a hand
 *    rounding);
 *  - stochastic rounding of elements: element j takes draw counter + j
 *    (checked against fpl_round at that counter) and the result, flags and
 *    stats do not depend on the thread count;
 *  - the fast path (power-of-two scales, 1-D blocks) equals the reference
 *    path bit for bit, flag for flag, in counts and block events;
 *  - packed storage against hand-made bytes (fp4 low nibble first);
 *  - bad specs: block size 0 or negative, a scale format that cannot hold
 *    a scale, unknown parts, repeated fields; plain names are not blocks.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oracle.h"

/* The non-negative finite values of an element format, in code order
 * (codes 0..n-1), decoded by the oracle's hand decoder. */
static int elem_values(const char *name, double *v, int max)
{
	fpl_format f;
	oracle_fmt o;
	int n = 0, ok;

	if (!strcmp(name, "int8")) {	/* MXINT8: k * 2^-6, k = 0..127 */
		for (n = 0; n < 128; n++)
			v[n] = n / 64.0;
		return n;
	}
	f = h_format(name);
	oracle_fmt_init(&o, &f);
	while (n < max && n >> (oracle_nbits(&o) - 1) == 0) {	/* sign bit clear */
		double d = oracle_decode(&o, (uint64_t)n, &ok);

		if (!(d <= DBL_MAX))
			break;
		v[n++] = d;
	}
	return n;
}

/* Nearest-even in a sorted list v[0..n-1] of q >= 0, clamped to v[n-1]:
 * index of the result.  2q and v[i] + v[i+1] are exact (few bits). */
static int ref_nearest(const double *v, int n, double q)
{
	int i = 0;

	if (q >= v[n - 1])
		return n - 1;
	while (i + 1 < n && v[i + 1] <= q)
		i++;
	if (v[i] == q)
		return i;
	if (2 * q < v[i] + v[i + 1])
		return i;
	if (2 * q > v[i] + v[i + 1])
		return i + 1;
	return i % 2 ? i + 1 : i;	/* tie: the even code */
}

/* floor(log2 a) for a > 0, from frexp (a = m 2^e, m in [1/2, 1)). */
static int flog2(double a)
{
	int e;

	frexp(a, &e);
	return e - 1;
}

/* Does q > 0, rounded to nearest-even at precision m + 1 with an
 * unbounded exponent, exceed max?  (The IEEE overflow test.) */
static int ref_overflows(double q, int m, double max)
{
	int e = flog2(q);

	return ldexp(rint(ldexp(q, m - e)), e - m) > max;
}

static fpl_block_format parse_ok(const char *spec)
{
	fpl_block_format b;
	char err[256];
	int rc = fpl_block_parse(&b, spec, err, sizeof err);

	if (!h_check(rc == 0))
		h_fail("parse '%s': %d %s", spec, rc, err);
	return b;
}

/* ---------------------------------------------- one block, exhaustive */
static void exhaustive(const char *name, const char *elem)
{
	static double v[256];
	fpl_block_format b = parse_ok(name);
	int n = elem_values(elem, v, 256), emax = flog2(v[n - 1]), sbit = b.elem.nbits - 1;
	double x[32], y[32];
	uint64_t codes[32], sc[1];
	size_t dims[1] = { 32 };
	fpl_state st;
	int k, i, p, bad = 0;

	fpl_state_init(&st, 1);
	memset(x, 0, sizeof x);
	for (k = -127; k <= 127; k++) {
		for (i = 0; i < n; i++) {
			for (p = 0; p < 5; p++) {
				/* the point under test, in units of the scale 2^k */
				double t = p == 0 ? v[i]
					   : i + 1 < n ? v[i] + p * (v[i + 1] - v[i]) / 4
					   : v[n - 1] + p * (ldexp(2.0, emax) - v[n - 1]) / 5;
				int want = ref_nearest(v, n, t), neg = (i + p) % 2;
				uint64_t wcode;

				x[0] = ldexp(neg ? -t : t, k);
				x[1] = ldexp(v[n - 1], k);	/* amax: X = 2^k by floor */
				x[2] = -x[1] / 3;
				if (fpl_block_quantize(&b, codes, sc, NULL, x, dims, 1, FPL_RND_NE,
						       &st, NULL)
				    || fpl_block_round(&b, y, x, dims, 1, FPL_RND_NE, &st, NULL)) {
					h_check(0);
					h_fail("%s: quantize failed", name);
					return;
				}
				wcode = !strcmp(elem, "int8")
					? (uint64_t)(uint8_t)(int8_t)(neg ? -want : want)
					: (uint64_t)want | (uint64_t)neg << sbit;
				if (!strcmp(elem, "int8") && neg && want == 0)
					wcode = 0;
				if (!h_check(h_same(y[0], ldexp(neg ? -v[want] : v[want], k))
					     && codes[0] == wcode && sc[0] == (uint64_t)(k + 127)
					     && h_same(y[1], x[1])) && bad++ < 3)
					h_fail("%s: k %d x %a: got %a code %#llx scale %#llx, want %a "
					       "code %#llx scale %#x", name, k, x[0], y[0],
					       (unsigned long long)codes[0], (unsigned long long)sc[0],
					       ldexp(neg ? -v[want] : v[want], k),
					       (unsigned long long)wcode, k + 127);
			}
		}
	}
	h_note("%s: %d codes x 255 scales x 5 points", name, n);
}

/* -------------------------------------------- scale rules, binade edges */
/* The expected scale exponent by rule (elements of m bits, emax, max). */
static int ref_rule(const char *rule, double amax, int m, int emax, double max)
{
	int e = flog2(amax);
	double M = ldexp(amax, m - e);	/* amax / 2^e * 2^m, in [2^m, 2^(m+1)) */

	if (!strcmp(rule, "floor"))
		return e - emax;
	if (!strcmp(rule, "ceil"))
		return e + (ceil(M) == ldexp(1.0, m + 1)) - emax;
	if (!strcmp(rule, "even"))
		return e + (rint(M) == ldexp(1.0, m + 1)) - emax;
	/* rceil: the smallest k with max 2^k >= amax */
	for (e = flog2(amax) - flog2(max) - 1;; e++)
		if (ldexp(max, e) >= amax)
			return e;
}

static void rules(void)
{
	static const char *const fmts[] = { "mxfp4", "mxfp6-e2m3", "mxfp6-e3m2", "mxfp8",
					    "mxfp8-e5m2" };
	static const char *const rl[] = { "floor", "ceil", "even", "rceil" };
	h_rng r;
	size_t f, q, dims[1] = { 32 };
	int differ = 0;

	h_rng_init(&r, 11);
	for (f = 0; f < 5; f++) {
		for (q = 0; q < 4; q++) {
			char spec[64];
			fpl_block_format b;
			int t;

			snprintf(spec, sizeof spec, "%s:%s", fmts[f], rl[q]);
			b = parse_ok(spec);
			for (t = 0; t < 2000; t++) {
				double x[32], y[32], amax;
				uint64_t codes[32], sc[1];
				int e = (int)h_rng_below(&r, 60) - 30, j = 1 + (int)h_rng_below(&r, 12), i, want;
				fpl_state st;
				fpl_block_stats s;

				switch (t % 4) {
				case 0: amax = ldexp(2 - ldexp(1, -j), e); break;	/* below 2^(e+1) */
				case 1: amax = ldexp(b.elem.max, e); break;		/* the element max */
				case 2: amax = ldexp(b.elem.max, e) * (1 + ldexp(1, -j)); break;
				default: amax = ldexp(1 + (double)h_rng_below(&r, 1u << 20) / (1 << 20), e);
				}
				for (i = 0; i < 32; i++)
					x[i] = amax * (double)h_rng_below(&r, 1000) / 1000.0
					       * (h_rng_below(&r, 2) ? -1 : 1);
				x[h_rng_below(&r, 32)] = (t & 1) ? -amax : amax;
				fpl_state_init(&st, 0);
				fpl_block_stats_init(&s);
				fpl_block_quantize(&b, codes, sc, NULL, x, dims, 1, FPL_RND_NE, &st, &s);
				want = ref_rule(rl[q], amax, b.elem.m, b.elem.emax, b.elem.max);
				differ += want != ref_rule("floor", amax, b.elem.m, b.elem.emax, b.elem.max);
				if (!h_check(sc[0] == (uint64_t)(want + 127)))
					h_fail("%s: amax %a: scale code %llu, want 2^%d", spec, amax,
					       (unsigned long long)sc[0], want);
				/* the amax element saturates iff amax / 2^want overflows */
				if (!h_check((s.amax_saturated != 0)
					     == ref_overflows(ldexp(amax, -want), b.elem.m, b.elem.max)))
					h_fail("%s: amax %a: amax_saturated %llu", spec, amax,
					       (unsigned long long)s.amax_saturated);
				if (!strcmp(rl[q], "rceil") && !h_check(s.saturated == 0))
					h_fail("%s: rceil saturated %llu elements", spec,
					       (unsigned long long)s.saturated);
				fpl_block_round(&b, y, x, dims, 1, FPL_RND_NE, &st, NULL);
			}
		}
	}
	/* the edges must separate the rules, or this test checks nothing */
	if (!h_check(differ > 1000))
		h_fail("rules: only %d amax values where a rule differs from floor", differ);
}

/* ------------------------------------------------- specials, shapes */
static void specials(void)
{
	fpl_block_format b = parse_ok("mxfp4");
	double x[40], y[40];
	uint64_t codes[40], sc[2];
	size_t dims[1] = { 40 }, nb;
	fpl_block_stats s;
	fpl_state st;
	int i;

	fpl_state_init(&st, 0);
	/* block 0 zeros (signed), block 1 (8 elements) holds a NaN */
	for (i = 0; i < 40; i++)
		x[i] = i % 2 ? -0.0 : 0.0;
	for (i = 32; i < 40; i++)
		x[i] = i;
	x[35] = NAN;
	fpl_block_stats_init(&s);
	fpl_block_quantize(&b, codes, sc, NULL, x, dims, 1, FPL_RND_NE, &st, &s);
	fpl_block_round(&b, y, x, dims, 1, FPL_RND_NE, &st, NULL);
	h_check(sc[0] == 127 && sc[1] == 0xFF && s.zero_blocks == 1 && s.nan_blocks == 1
		&& s.blocks == 2 && s.elements == 40);
	for (i = 0; i < 32; i++)
		if (!h_check(h_same(y[i], x[i]) && codes[i] == (i % 2 ? 8u : 0u)))
			h_fail("zero block: element %d %a code %llu", i, y[i], (unsigned long long)codes[i]);
	for (i = 32; i < 40; i++)
		if (!h_check(isnan(y[i])))
			h_fail("NaN block: element %d is %a", i, y[i]);
	/* infinity: NaN scale too; the other block is untouched */
	x[35] = -INFINITY;
	for (i = 0; i < 32; i++)
		x[i] = 1.5;
	fpl_block_round(&b, y, x, dims, 1, FPL_RND_NE, &st, NULL);
	h_check(y[0] == 1.5 && isnan(y[32]) && isnan(y[39]));
	/* a short last block scaled by its own amax: amax 47, X = 2^(5-2) =
	 * 8; 33/8 = 4.125 -> 4 -> 32 */
	for (i = 32; i < 40; i++)
		x[i] = i;
	x[38] = 20;	/* 2.5: a tie, to 2 (even code) */
	x[39] = 47;	/* 5.875 -> 6 */
	fpl_block_round(&b, y, x, dims, 1, FPL_RND_NE, &st, NULL);
	h_check(y[33] == 32 && y[39] == 48 && y[37] == 32 && y[38] == 16);
	fpl_block_layout(&b, dims, 1, &nb, NULL, NULL);
	h_check(nb == 2);
	/* subnormal and underflowing elements: amax 6 (X = 1); 0.5 is e2m1's
	 * subnormal, 0.25 a tie to 0 (even), 0.2 rounds to 0: flushed */
	for (i = 0; i < 32; i++)
		x[i] = 0;
	x[0] = 6;
	x[1] = 0.5;
	x[2] = 0.25;
	x[3] = -0.2;
	x[4] = 0.26;
	fpl_state_init(&st, 0);
	fpl_block_stats_init(&s);
	fpl_block_round(&b, y, x, dims, 1, FPL_RND_NE, &st, &s);
	h_check(y[1] == 0.5 && h_same(y[2], 0.0) && h_same(y[3], -0.0) && y[4] == 0.5);
	h_check(s.flushed == 2 && (st.flags & FPL_FLAG_UNDERFLOW) && s.saturated == 0);
}

static void shapes(void)
{
	/* 2-D: a 3x5 tensor in 2x2 tiles: scales 2x3; element (r, c) is in
	 * tile (r/2, c/2).  One large element per tile shows the grouping. */
	fpl_block_format b = parse_ok("block:e2m1:e8m0:2x2:floor");
	double x[15], y[15];
	uint64_t codes[15], sc[9];
	size_t dims[2] = { 3, 5 }, sd[8], nb;
	int snd, r, c;

	fpl_block_layout(&b, dims, 2, &nb, sd, &snd);
	h_check(nb == 6 && snd == 2 && sd[0] == 2 && sd[1] == 3);
	for (r = 0; r < 3; r++)
		for (c = 0; c < 5; c++)
			x[r * 5 + c] = ldexp(1.0, (r / 2) * 3 + c / 2);	/* 2^(tile) */
	{
		fpl_state st;

		fpl_state_init(&st, 0);
		fpl_block_quantize(&b, codes, sc, NULL, x, dims, 2, FPL_RND_NE, &st, NULL);
		fpl_block_round(&b, y, x, dims, 2, FPL_RND_NE, &st, NULL);
	}
	for (r = 0; r < 2; r++)
		for (c = 0; c < 3; c++)	/* amax 2^t: X = 2^(t - 2) */
			if (!h_check(sc[r * 3 + c] == (uint64_t)(r * 3 + c - 2 + 127)))
				h_fail("tile (%d,%d): scale code %llu", r, c,
				       (unsigned long long)sc[r * 3 + c]);
	{	/* the same scales as values, without rounding */
		double sv[6], ts = 0;
		fpl_block_stats s;

		fpl_block_stats_init(&s);
		h_check(fpl_block_scales(&b, sv, &ts, x, dims, 2, &s) == 0 && ts == 1
			&& s.blocks == 6 && s.elements == 15);
		for (r = 0; r < 6; r++)
			h_check(sv[r] == ldexp(1.0, r - 2));
	}
	{	/* a product of dims beyond memory is refused, not wrapped */
		size_t huge[2] = { (size_t)1 << 40, (size_t)1 << 40 };

		h_check(fpl_block_layout(&b, huge, 2, &nb, NULL, NULL) == FPL_EINVAL);
	}
	/* blocks of 2 along axis 0 of a 5x3 tensor: scales 3x3 */
	b = parse_ok("mxfp4:2@0");
	dims[0] = 5;
	dims[1] = 3;
	fpl_block_layout(&b, dims, 2, &nb, sd, &snd);
	h_check(nb == 9 && sd[0] == 3 && sd[1] == 3);
	b = parse_ok("mxfp4:col");
	fpl_block_layout(&b, dims, 2, &nb, sd, &snd);
	h_check(nb == 3 && sd[0] == 1 && sd[1] == 3);
	b = parse_ok("mxfp4:tensor");
	fpl_block_layout(&b, dims, 2, &nb, sd, &snd);
	h_check(nb == 1 && snd == 1);
	h_check(fpl_block_layout(&b, dims, 0, &nb, NULL, NULL) == FPL_EINVAL);
	b = parse_ok("mxfp4:4@3");
	h_check(fpl_block_layout(&b, dims, 2, &nb, NULL, NULL) == FPL_EINVAL);
}

/* ---------------------------------------------------------------- NVFP4 */
/* Hand nearest-even into a list (values in code order) of a value held
 * exactly by a double, saturating. */
static double hand_round(const double *v, int n, double q)
{
	int i = ref_nearest(v, n, fabs(q));

	return q < 0 ? -v[i] : v[i];
}

static void nvfp4(void)
{
	static double e4[128], e21[8];
	int n4 = elem_values("e4m3fn", e4, 128), n21 = elem_values("e2m1", e21, 8), t, differ = 0;
	fpl_format f4 = h_format("e4m3fn"), f21 = h_format("e2m1");
	oracle_fmt o4, o21;
	fpl_block_format bx = parse_ok("nvfp4"), bq = parse_ok("nvfp4:q32");
	h_rng r;

	h_check(n4 == 127 && n21 == 8);
	f4.overflow = FPL_OVF_SATURATE;
	oracle_fmt_init(&o4, &f4);
	oracle_fmt_init(&o21, &f21);
	h_rng_init(&r, 4);
	for (t = 0; t < 300; t++) {
		float xf[64];
		double x[64], yx[64], yq[64], tsx, tsq;
		uint64_t cx[64], cq[64], sx[4], sq[4];
		size_t dims[1] = { 64 };
		fpl_state st;
		float amax_t = 0, s;
		unsigned ofl = 0;
		int i, blk;

		for (i = 0; i < 64; i++) {
			xf[i] = (float)((double)(int64_t)(h_rng_next(&r) >> 11) * 0x1p-53
					* ldexp(1.0, (int)h_rng_below(&r, 6) + 4 * (i / 16) - 10));
			xf[i] = h_rng_below(&r, 2) ? -xf[i] : xf[i];
			x[i] = xf[i];
			amax_t = fabsf(xf[i]) > amax_t ? fabsf(xf[i]) : amax_t;
		}
		s = amax_t / 2688.0f;	/* binary32 division: correctly rounded */
		/* next to 3.5 D and 2.5 D (ties of e2m1 at 3.5 -> 4, 2.5 -> 2), where a
		 * binary32 quotient may land on the tie and the exact one does not */
		for (blk = 0; blk < 4; blk++) {
			float ab = 0, Dq, a, c;

			for (i = 16 * blk; i < 16 * blk + 16; i++)
				ab = fabsf(xf[i]) > ab ? fabsf(xf[i]) : ab;
			Dq = (float)(hand_round(e4, n4, (double)(ab / (6.0f * s))) * s);
			a = (float)(3.5 * Dq);
			while ((double)a >= 3.5 * Dq)
				a = nextafterf(a, 0);
			c = (float)(2.5 * Dq);
			while ((double)c <= 2.5 * Dq)
				c = nextafterf(c, INFINITY);
			/* (the block's and the tensor's amax stay where they are) */
			if (a < ab && c < ab && fabsf(xf[16 * blk + 3]) < ab
			    && fabsf(xf[16 * blk + 5]) < ab) {
				xf[16 * blk + 3] = a;
				xf[16 * blk + 5] = -c;
				x[16 * blk + 3] = a;
				x[16 * blk + 5] = -c;
			}
		}
		fpl_state_init(&st, 0);
		fpl_block_quantize(&bx, cx, sx, &tsx, x, dims, 1, FPL_RND_NE, &st, NULL);
		fpl_block_round(&bx, yx, x, dims, 1, FPL_RND_NE, &st, NULL);
		fpl_block_quantize(&bq, cq, sq, &tsq, x, dims, 1, FPL_RND_NE, &st, NULL);
		fpl_block_round(&bq, yq, x, dims, 1, FPL_RND_NE, &st, NULL);
		h_check(tsx == s && tsq == s);
		for (blk = 0; blk < 4; blk++) {
			double ab = 0, X, Xq, D, Dq;

			for (i = 16 * blk; i < 16 * blk + 16; i++)
				ab = fabs(x[i]) > ab ? fabs(x[i]) : ab;
			/* exact: amax_b / (6 s) rounded once (MPFR) */
			X = oracle_op2(&o4, OR_DIV, ab, 6.0 * s, FPL_RND_NE, &ofl);
			/* q32: a binary32 quotient, then rounded to e4m3fn */
			Xq = hand_round(e4, n4, (double)((float)ab / (6.0f * s)));
			/* below e4m3fn's smallest positive value: that value */
			X = X < 0x1p-9 ? 0x1p-9 : X;
			Xq = Xq < 0x1p-9 ? 0x1p-9 : Xq;
			if (!h_check(fpl_decode(&bx.scale, sx[blk]) == X
				     && fpl_decode(&bq.scale, sq[blk]) == Xq))
				h_fail("nvfp4 block %d scale: %a %a want %a %a", blk,
				       fpl_decode(&bx.scale, sx[blk]), fpl_decode(&bq.scale, sq[blk]),
				       X, Xq);
			D = X * s;
			Dq = Xq * s;
			for (i = 16 * blk; i < 16 * blk + 16; i++) {
				double ex = oracle_op2(&o21, OR_DIV, x[i], D, FPL_RND_NE, &ofl) * D;
				double eq = hand_round(e21, n21, (double)(xf[i] / (float)Dq)) * Dq;

				differ += !h_same(ex / D, eq / Dq);
				if (!h_check(h_same(yx[i], ex) && h_same(yq[i], eq)))
					h_fail("nvfp4 x %a: exact %a q32 %a, want %a %a", x[i], yx[i],
					       yq[i], ex, eq);
			}
		}
		{
			double z[64];

			fpl_block_dequantize(&bx, z, cx, sx, tsx, dims, 1);
			for (i = 0; i < 64; i++)
				h_check(h_same(z[i], yx[i]));
		}
	}
	h_note("nvfp4: %d elements where the binary32 quotient changes the element", differ);
	if (!h_check(differ > 10))
		h_fail("nvfp4: exact and binary32 quotients never differ: the test checks nothing");
}

/* ------------------------------------------------------- stochastic */
static void stochastic(void)
{
	fpl_block_format b = parse_ok("mxfp4");
	size_t n = 3 << 16, dims[2] = { 3 << 10, 64 }, i;
	double *x = malloc(n * sizeof *x), *y1 = malloc(n * sizeof *x), *y2 = malloc(n * sizeof *x);
	fpl_block_stats s1, s2;
	fpl_state a, c;
	h_rng r;
	int bad = 0;

	h_rng_init(&r, 5);
	for (i = 0; i < n; i++)
		x[i] = h_rng_value(&r, -8, 8, 24, 0);
	fpl_state_init(&a, 77);
	a.counter = 1000;
	c = a;
	c.threads = 3;
	fpl_block_stats_init(&s1);
	fpl_block_stats_init(&s2);
	fpl_block_round(&b, y1, x, dims, 2, FPL_RND_SP, &a, &s1);
	fpl_block_round(&b, y2, x, dims, 2, FPL_RND_SP, &c, &s2);
	h_check(a.counter == 1000 + n && c.counter == a.counter && a.flags == c.flags
		&& !memcmp(a.count, c.count, sizeof a.count) && !memcmp(&s1, &s2, sizeof s1));
	for (i = 0; i < n; i++)
		if (!h_check(h_same(y1[i], y2[i])) && bad++ < 3)
			h_fail("sp: element %zu differs between 1 and 3 threads", i);
	/* element i takes draw 1000 + i: compare with fpl_round at that
	 * counter (power-of-two scale: x / X is exact) */
	{
		fpl_format e = b.elem;
		double X = 0;
		size_t blk;

		for (blk = 0; blk < n / 32; blk++) {
			double amax = 0;

			for (i = blk * 32; i < blk * 32 + 32; i++)
				amax = fabs(x[i]) > amax ? fabs(x[i]) : amax;
			X = ldexp(1.0, flog2(amax) - 2);
			for (i = blk * 32; i < blk * 32 + 32; i++) {
				fpl_state d;

				fpl_state_init(&d, 77);
				d.counter = 1000 + i;
				if (!h_check(h_same(y1[i], fpl_round(&e, x[i] / X, FPL_RND_SP, &d) * X))
				    && bad++ < 6)
					h_fail("sp: element %zu is not draw %zu's rounding", i, 1000 + i);
			}
		}
	}
	free(x);
	free(y1);
	free(y2);
}

/* ------------------------------------------- fast path == reference */
extern uint64_t fpl__blk_fast_runs;
int fpl__block_round_ref(const fpl_block_format *b, double *y, const double *x,
			 const size_t *dims, int ndims, fpl_rnd rnd, fpl_state *st,
			 fpl_block_stats *stats);

static void fast_vs_ref(void)
{
	static const char *const specs[] = { "mxfp4", "mxfp8", "mxfp8-e5m2", "mxfp6-e3m2",
					     "mxint8", "mxfp4:ceil", "mxfp8:even", "mxfp4:rceil",
					     "mxfp6-e2m3:16", "block:e2m1:e4m3fn:32:floor" };
	static const fpl_rnd modes[] = { FPL_RND_NE, FPL_RND_NA, FPL_RND_TZ, FPL_RND_TP,
					 FPL_RND_OD, FPL_RND_SP, FPL_RND_SE };
	size_t n = 3 * 100, dims[2] = { 3, 100 }, i, sp, m;
	double x[300], y1[300], y2[300];
	uint64_t runs0 = fpl__blk_fast_runs, t;
	h_rng r;
	int bad = 0;

	h_rng_init(&r, 8);
	for (t = 0; t < 400; t++) {
		int kind = (int)(t % 5);

		for (i = 0; i < n; i++)	/* wide exponents; zero runs; specials */
			x[i] = h_rng_value(&r, kind == 1 ? -1074 : -30, kind == 2 ? 1023 : 30,
					   (int)h_rng_below(&r, 53) + 1, kind == 3);
		if (kind == 4)
			for (i = 0; i < 40; i++)
				x[i] = h_rng_below(&r, 2) ? 0.0 : -0.0;
		for (sp = 0; sp < sizeof specs / sizeof *specs; sp++) {
			fpl_block_format b = parse_ok(specs[sp]);

			for (m = 0; m < sizeof modes / sizeof *modes; m++) {
				fpl_state a, c;
				fpl_block_stats s1, s2;

				fpl_state_init(&a, t);
				a.counter = 17;
				c = a;
				fpl_block_stats_init(&s1);
				fpl_block_stats_init(&s2);
				fpl_block_round(&b, y1, x, dims, 2, modes[m], &a, &s1);
				fpl__block_round_ref(&b, y2, x, dims, 2, modes[m], &c, &s2);
				for (i = 0; i < n; i++)
					if (!h_check(h_same(y1[i], y2[i])) && bad++ < 3)
						h_fail("fast %s %s x %a: %a, reference %a", specs[sp],
						       fpl_rnd_name(modes[m]), x[i], y1[i], y2[i]);
				if (!h_check(a.flags == c.flags && a.counter == c.counter
					     && !memcmp(a.count, c.count, sizeof a.count)
					     && !memcmp(&s1, &s2, sizeof s1)) && bad++ < 6)
					h_fail("fast %s %s: flags, counts or stats differ (saturated %llu "
					       "%llu, flushed %llu %llu, amax_sat %llu %llu)", specs[sp],
					       fpl_rnd_name(modes[m]), (unsigned long long)s1.saturated,
					       (unsigned long long)s2.saturated,
					       (unsigned long long)s1.flushed, (unsigned long long)s2.flushed,
					       (unsigned long long)s1.amax_saturated,
					       (unsigned long long)s2.amax_saturated);
			}
		}
	}
	/* the fast path ran (and the deep-underflow tensors fell back) */
	if (!h_check(fpl__blk_fast_runs - runs0 > 400 * 7 * 5
		     && fpl__blk_fast_runs - runs0 < 400 * 7 * 10))
		h_fail("fast path taken %llu times", (unsigned long long)(fpl__blk_fast_runs - runs0));
}

/* ------------------------------------------------------------ packing */
/* Hand-made bytes: fp4 two per byte, the first code in the low nibble,
 * each row starting on a byte; wider codes little-endian. */
static void packing(void)
{
	static const uint64_t c4[6] = { 0x1, 0x2, 0x3, 0xF, 0x8, 0x0 };
	static const unsigned char p4[4] = { 0x21, 0x03, 0x8F, 0x00 };	/* rows of 3 */
	static const uint64_t c9[2] = { 0x1A5, 0x003 };
	static const unsigned char p9[4] = { 0xA5, 0x01, 0x03, 0x00 };
	size_t d4[2] = { 2, 3 }, d9[1] = { 2 };
	unsigned char buf[16];
	uint64_t back[6];
	int per;

	h_check(fpl_block_code_bytes(4, &per) == 1 && per == 2);
	h_check(fpl_block_code_bytes(8, &per) == 1 && per == 1 && fpl_block_code_bytes(9, NULL) == 2
		&& fpl_block_code_bytes(32, NULL) == 4 && fpl_block_code_bytes(33, NULL) == 8);
	memset(buf, 0xEE, sizeof buf);
	h_check(fpl_block_pack(buf, c4, 4, d4, 2) == 4 && !memcmp(buf, p4, 4));
	h_check(fpl_block_unpack(back, p4, 4, 4, d4, 2) == 0 && !memcmp(back, c4, sizeof c4));
	h_check(fpl_block_unpack(back, p4, 3, 4, d4, 2) == FPL_EPARSE);
	h_check(fpl_block_pack(buf, c9, 9, d9, 1) == 4 && !memcmp(buf, p9, 4));
	h_check(fpl_block_unpack(back, p9, 4, 9, d9, 1) == 0 && back[0] == 0x1A5 && back[1] == 3);
	h_check(fpl_block_pack(buf, c9, 8, d9, 1) == 0);	/* 0x1A5 is wider than 8 bits */
}

/* ------------------------------------------------------------ parsing */
static void bad_spec(const char *spec, const char *needle)
{
	fpl_block_format b;
	char err[256];
	int rc = fpl_block_parse(&b, spec, err, sizeof err);

	if (!h_check(rc == FPL_EFORMAT && strstr(err, needle)))
		h_fail("parse '%s': rc %d err '%s', want FPL_EFORMAT naming '%s'", spec, rc, err,
		       needle);
}

static void parsing(void)
{
	fpl_block_format b;
	char err[64] = "x";
	static const struct { const char *spec; double bits; } named[] = {
		{ "mxfp8", 8.25 }, { "MXFP8-E4M3", 8.25 }, { "mxfp8-e5m2", 8.25 },
		{ "mxfp6-e3m2", 6.25 }, { "mxfp6-e2m3", 6.25 }, { "mxfp4", 4.25 },
		{ "mxint8", 8.25 }, { "nvfp4", 4.5 }, { "block:e4m3fn:fp32:128x128:amax", 8 + 32.0 / 16384 },
	};
	size_t i, dims[2] = { 4, 16 };

	for (i = 0; i < sizeof named / sizeof named[0]; i++) {
		b = parse_ok(named[i].spec);
		if (!h_check(fpl_block_bits(&b, NULL, 0) == named[i].bits))
			h_fail("%s: %g bits per value", named[i].spec, fpl_block_bits(&b, NULL, 0));
	}
	b = parse_ok("nvfp4");	/* 64 values: 4 e4m3 scales and one fp32 */
	h_check(fpl_block_bits(&b, dims, 2) == 4 + (4 * 8 + 32) / 64.0);
	h_check(fpl_block_parse(&b, "fp16", err, sizeof err) == FPL_ENOTFOUND && !err[0]);
	h_check(fpl_block_parse(&b, "e2m1", err, sizeof err) == FPL_ENOTFOUND);
	h_check(fpl_block_is_spec("mxfp4:16") && fpl_block_is_spec("block:x") && !fpl_block_is_spec("bf16")
		&& !fpl_block_is_spec("blockx"));
	b = parse_ok("mxfp8:rceil:16@0:q32");
	h_check(b.rule == FPL_BRULE_RCEIL && b.size == 16 && b.axis == 0 && b.quot == FPL_BQUOT_FP32);
	bad_spec("mxfp4:0", "block size '0'");
	bad_spec("block:e2m1:e8m0:-4", "block size '-4'");
	bad_spec("block:e2m1:e8m0:0x4", "tile '0x4'");
	bad_spec("block:e2m1:e3m2", "scale format 'e3m2' cannot hold a scale");
	bad_spec("block:e2m1:e2m3:16", "cannot hold a scale");
	bad_spec("block:e2m1", "block:ELEM:SCALE");
	bad_spec("block:e2m1:zz", "scale format 'zz'");
	bad_spec("block:qq:e8m0", "element format 'qq'");
	bad_spec("mxfp4:flor", "'flor' is not a block shape");
	bad_spec("mxfp4:floor:even", "second time");
	bad_spec("mxfp4:16:32", "second time");
	bad_spec("mxfp4:ts", "needs the amax rule");
	bad_spec("mxfp4:4@9", "axis '9'");
	bad_spec("mxfp4::floor", "empty field");
	bad_spec("block:e8m0:e8m0", "cannot be an element format");
	{	/* a .fmt file: "block = SPEC", with a name; a plain one is not a block */
		char path[] = "/tmp/tblock-XXXXXX.fmt", err2[256];
		int fd = mkstemps(path, 4);
		FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;

		if (h_check(fp != NULL)) {
			fputs("# a block format\nname = my4\nblock = mxfp4:rceil:16\n", fp);
			fclose(fp);
			h_check(fpl_block_is_spec(path) && fpl_block_parse(&b, path, err2, sizeof err2) == 0
				&& !strcmp(b.name, "my4") && b.rule == FPL_BRULE_RCEIL && b.size == 16);
			fp = fopen(path, "w");
			if (fp) {
				fputs("e = 4\nm = 3\n", fp);
				fclose(fp);
			}
			h_check(!fpl_block_is_spec(path)
				&& fpl_block_parse(&b, path, err2, sizeof err2) == FPL_ENOTFOUND);
			fp = fopen(path, "w");
			if (fp) {
				fputs("block = mxfp4:0\n", fp);
				fclose(fp);
			}
			h_check(fpl_block_parse(&b, path, err2, sizeof err2) == FPL_EFORMAT
				&& strstr(err2, "block size '0'"));
			remove(path);
		}
	}
	h_check(!strcmp(parse_ok("mxfp8").name, "mxfp8"));
	h_check(!strcmp(parse_ok("mxfp8:rceil").name, "block:e4m3fn:e8m0:32:rceil"));
}

int main(void)
{
	h_init("tblock");
	parsing();
	packing();
	exhaustive("mxfp4", "e2m1");
	exhaustive("mxfp6-e2m3", "e2m3");
	exhaustive("mxfp6-e3m2", "e3m2");
	exhaustive("mxfp8", "e4m3fn");
	exhaustive("mxfp8-e5m2", "e5m2");
	exhaustive("mxint8", "int8");
	rules();
	specials();
	shapes();
	nvfp4();
	stochastic();
	fast_vs_ref();
	oracle_thread_done();
	return h_done();
}

/* SPDX-License-Identifier: MIT */
/*
 * tests/tarray.c - array functions (fplab/array.h) against the scalar ones:
 * bit for bit, flag for flag and count for count, with the counter
 * advanced by n; every operation, all nine modes, several formats, sizes
 * (0, 1, odd, large), thread counts 1..4, aliasing (y == x, z == a,
 * z == b), binary32 arrays (fpl_round_array_f32, and FPL_EFORMAT for a
 * format that does not fit), min/max, conversion from a format with and
 * without DAZ, comparison (no draw), encode/decode arrays, bad arguments.
 *
 * Run without FPLAB_KERNELS, the program also re-runs itself with
 * FPLAB_KERNELS=ref, avx2 and avx512 (the latter two may skip with 77
 * when the CPU lacks AVX-512), so each kernel set is forced once.
 * The reference here is the scalar engine (tested against MPFR by the
 * other programs); an array kernel must reproduce it exactly.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

enum { A_ROUND, A_ADD, A_SUB, A_MUL, A_DIV, A_SQRT, A_FMA, A_MIN, A_MAX, A_CONVERT, A_NOPS };
static const char *opn[] = { "round", "add", "sub", "mul", "div", "sqrt", "fma", "min", "max",
			     "convert" };

/* A_CONVERT's source formats: fp16 with DAZ (the arrays' own DAZ path)
 * and e5m2 without (a plain rounding). */
static fpl_format g_from[2];
static int g_fromi;

static double scalar(const fpl_format *f, int op, double a, double b, double c, fpl_rnd r,
		     fpl_state *st)
{
	switch (op) {
	case A_ROUND: return fpl_round(f, a, r, st);
	case A_ADD: return fpl_add(f, a, b, r, st);
	case A_SUB: return fpl_sub(f, a, b, r, st);
	case A_MUL: return fpl_mul(f, a, b, r, st);
	case A_DIV: return fpl_div(f, a, b, r, st);
	case A_SQRT: return fpl_sqrt(f, a, r, st);
	case A_MIN: return fpl_min(f, a, b, r, st);
	case A_MAX: return fpl_max(f, a, b, r, st);
	case A_CONVERT: return fpl_convert(f, &g_from[g_fromi], a, r, st);
	default: return fpl_fma(f, a, b, c, r, st);
	}
}

static int array(const fpl_format *f, int op, double *z, const double *a, const double *b,
		 const double *c, size_t n, fpl_rnd r, fpl_state *st)
{
	switch (op) {
	case A_ROUND: return fpl_round_array(f, z, a, n, r, st);
	case A_ADD: return fpl_add_array(f, z, a, b, n, r, st);
	case A_SUB: return fpl_sub_array(f, z, a, b, n, r, st);
	case A_MUL: return fpl_mul_array(f, z, a, b, n, r, st);
	case A_DIV: return fpl_div_array(f, z, a, b, n, r, st);
	case A_SQRT: return fpl_sqrt_array(f, z, a, n, r, st);
	case A_MIN: return fpl_min_array(f, z, a, b, n, r, st);
	case A_MAX: return fpl_max_array(f, z, a, b, n, r, st);
	case A_CONVERT: return fpl_convert_array(f, &g_from[g_fromi], z, a, n, r, st);
	default: return fpl_fma_array(f, z, a, b, c, n, r, st);
	}
}

static int g_sr_bits;	/* 0: the state's default */

/* Does every value of f fit binary32 (so fpl_round_array_f32 takes it)? */
static int fits_f32(const fpl_format *f)
{
	return f->explim && f->m <= 23 && f->emax <= 127 && f->emin >= -126
	       && f->emin - f->m >= -149;
}

/* alias: 0 none, 1 z == a, 2 z == b.  Without aliasing z starts n % 8
 * doubles into its buffer, so the output's alignment varies with n. */
static void one(const fpl_format *f, int op, fpl_rnd r, size_t n, int threads, int alias,
		const double *a, const double *b, const double *c)
{
	double *want = malloc((n + 1) * sizeof *want), *zbuf = malloc((n + 8) * sizeof *zbuf);
	double *a2 = malloc((n + 1) * sizeof *a2), *b2 = malloc((n + 1) * sizeof *b2);
	double *z = zbuf + n % 8;
	fpl_state ss, sa;
	size_t j;
	int rc;

	fpl_state_init(&ss, h_seed());
	ss.counter = 12345;
	ss.stream = 3;
	if (g_sr_bits)
		ss.sr_bits = g_sr_bits;
	sa = ss;
	sa.threads = threads;
	for (j = 0; j < n; j++)
		want[j] = scalar(f, op, a[j], b[j], c[j], r, &ss);
	memcpy(a2, a, n * sizeof *a);
	memcpy(b2, b, n * sizeof *b);
	if (alias == 1)
		rc = array(f, op, a2, a2, b2, c, n, r, &sa);
	else if (alias == 2)
		rc = array(f, op, b2, a2, b2, c, n, r, &sa);
	else
		rc = array(f, op, n ? z : NULL, n ? a2 : NULL, n ? b2 : NULL, n ? c : NULL, n, r, &sa);
	if (!h_check(rc == 0)) {
		h_fail("%s_array %s %s n=%zu threads=%d: status %d", opn[op], f->name,
		       fpl_rnd_name(r), n, threads, rc);
		goto out;
	}
	{
		const double *got = alias == 1 ? a2 : alias == 2 ? b2 : z;
		for (j = 0; j < n; j++)
			if (!h_check(h_same(got[j], want[j]))) {
				h_fail("%s_array %s %s n=%zu threads=%d alias=%d: element %zu (%a, %a, %a): %a, scalar %a",
				       opn[op], f->name, fpl_rnd_name(r), n, threads, alias, j, a[j],
				       b[j], c[j], got[j], want[j]);
				break;
			}
	}
	if (!h_check(h_same_state(&ss, &sa)))
		h_fail("%s_array %s %s n=%zu threads=%d: state differs (flags %#x/%#x counter %llu/%llu)",
		       opn[op], f->name, fpl_rnd_name(r), n, threads, sa.flags, ss.flags,
		       (unsigned long long)sa.counter, (unsigned long long)ss.counter);
out:
	free(want);
	free(zbuf);
	free(a2);
	free(b2);
}

/*
 * Rounding arrays whose values lie where the format lives: the normal
 * range with ties and near-ties (bits = m + 2 puts half the values on a
 * tie or a representable value), the subnormal range and below it (deep
 * underflow, binary64 subnormals), the edge of overflow, and a few
 * specials.  The first tests mostly draw values far outside small
 * formats; these exercise the kernels' common case and every branch of
 * their underflow handling, for each subnormal flavour, tininess rule and
 * special-value scheme, several sr_bits, and the streaming stores of
 * arrays of 2^20 elements and more.
 */
static void fill_in_range(const fpl_format *f, double *x, size_t n, h_rng *rng)
{
	int elo = f->emin - f->m - 3, ehi = f->emax + 1;
	size_t j;

	for (j = 0; j < n; j++) {
		uint64_t k = h_rng_below(rng, 16);
		int bits = k < 6 ? f->m + 2 : k < 8 ? f->m + 3 : 53;
		if (bits > 53)
			bits = 53;
		if (k == 15)		/* the subnormal range and below */
			x[j] = h_rng_value(rng, elo < -1074 ? -1074 : elo, f->emin, bits, 0);
		else if (k == 14)	/* binary64 subnormals and tiny values */
			x[j] = h_rng_value(rng, -1074, -1000, 53, 0);
		else if (k == 13)
			x[j] = h_rng_value(rng, -1100, 1100, 53, 1);
		else
			x[j] = h_rng_value(rng, f->emin - 2, ehi, bits, 0);
	}
}

static size_t g_f32_off;	/* one_f32: the input starts this many floats into its buffer */

/* fpl_round_array_f32 against fpl_round on the same values as binary32,
 * optionally in place (y == x), the output n % 8 floats into its buffer. */
static void one_f32(const fpl_format *f, fpl_rnd r, size_t n, int threads, int alias,
		    const double *x)
{
	float *xbuf = malloc((n + 8) * sizeof *xbuf), *buf = malloc((n + 8) * sizeof *buf);
	float *xf = xbuf + g_f32_off % 8, *y = alias ? xf : buf + n % 8;
	double *want = malloc((n + 1) * sizeof *want);
	fpl_state ss, sa;
	size_t j;
	int rc;

	fpl_state_init(&ss, h_seed());
	ss.counter = 777;
	if (g_sr_bits)
		ss.sr_bits = g_sr_bits;
	sa = ss;
	sa.threads = threads;
	for (j = 0; j < n; j++) {
		xf[j] = (float)x[j];
		want[j] = fpl_round(f, (double)xf[j], r, &ss);
	}
	rc = fpl_round_array_f32(f, y, xf, n, r, &sa);
	if (!h_check(rc == 0))
		h_fail("round_array_f32 %s %s n=%zu: status %d", f->name, fpl_rnd_name(r), n, rc);
	for (j = 0; rc == 0 && j < n; j++) {
		float wf = (float)want[j];
		if (!h_check(memcmp(&wf, &y[j], sizeof wf) == 0)) {
			h_fail("round_array_f32 %s %s n=%zu threads=%d alias=%d: element %zu (%a): %a, scalar %a",
			       f->name, fpl_rnd_name(r), n, threads, alias, j, x[j], (double)y[j],
			       want[j]);
			break;
		}
	}
	if (!h_check(h_same_state(&ss, &sa)))
		h_fail("round_array_f32 %s %s n=%zu threads=%d: state differs (flags %#x/%#x)",
		       f->name, fpl_rnd_name(r), n, threads, sa.flags, ss.flags);
	free(xbuf);
	free(buf);
	free(want);
}

static void in_range(h_rng *rng)
{
	static const struct cfg {
		const char *name;
		int sub, tiny, daz, ovf;	/* -1: the format's default */
		int wide;			/* 1: explim = 0, binary64's exponent range */
	} cfgs[] = {
		{ "bf16", -1, -1, -1, -1, 0 }, { "fp16", -1, -1, -1, -1, 0 }, { "e4m3fn", -1, -1, -1, -1, 0 },
		{ "e5m2", -1, -1, -1, -1, 0 }, { "e4m3fnuz", -1, -1, -1, -1, 0 }, { "e5m2fnuz", -1, -1, -1, -1, 0 },
		{ "e2m1", -1, -1, -1, -1, 0 }, { "e3m2", -1, -1, -1, -1, 0 }, { "e2m3", -1, -1, -1, -1, 0 },
		{ "tf32", -1, -1, -1, -1, 0 }, { "fp32", -1, -1, -1, -1, 0 }, { "e5m0", -1, -1, -1, -1, 0 },
		{ "e11m51", -1, -1, -1, -1, 0 }, { "e11m20", -1, -1, -1, -1, 0 }, { "e1m3", -1, -1, -1, -1, 0 },
		{ "e8m51", -1, -1, -1, -1, 0 }, { "e8m50", -1, -1, -1, -1, 0 },
		{ "fp16", FPL_SUB_NO_ROUND, -1, -1, -1, 0 }, { "fp16", FPL_SUB_FTZ, -1, -1, -1, 0 },
		{ "fp16", -1, FPL_TINY_BEFORE, -1, -1, 0 }, { "e4m3fn", -1, FPL_TINY_BEFORE, -1, -1, 0 },
		{ "bf16", -1, -1, 1, -1, 0 }, { "e5m2", -1, -1, -1, FPL_OVF_SATURATE, 0 },
		{ "e4m3fn", FPL_SUB_FTZ, FPL_TINY_BEFORE, 1, FPL_OVF_SATURATE, 0 },
		{ "bf16", -1, -1, -1, -1, 1 }, { "e4m3fn", -1, -1, -1, -1, 1 },
	};
	static const int srb[] = { 1, 7, 13, 32 };
	size_t n = 4099, big = (1u << 20) + 13, ci;
	double *x = malloc(big * sizeof *x);

	for (ci = 0; ci < sizeof cfgs / sizeof *cfgs; ci++) {
		const struct cfg *c = &cfgs[ci];
		fpl_format f;
		int r, k, f32;
		if (!h_check(fpl_format_lookup(&f, c->name) == 0)) {
			h_fail("in_range: no format %s", c->name);
			continue;
		}
		if (c->sub >= 0)
			f.subnormal = (fpl_subnormal)c->sub;
		if (c->tiny >= 0)
			f.tininess = (fpl_tininess)c->tiny;
		if (c->daz >= 0)
			f.daz = c->daz;
		if (c->ovf >= 0)
			f.overflow = (fpl_overflow)c->ovf;
		if (c->wide)
			f.explim = 0;
		if (!h_check(fpl_format_finish(&f) == 0))
			continue;
		fill_in_range(&f, x, n, rng);
		f32 = fits_f32(&f);
		for (r = 0; r < FPL_RND_COUNT; r++) {
			one(&f, A_ROUND, (fpl_rnd)r, n, 1 + (int)(ci % 2), 0, x, x, x);
			one(&f, A_ROUND, (fpl_rnd)r, n - (size_t)r, 1, 1, x, x, x);
			if (f32) {
				one_f32(&f, (fpl_rnd)r, n, 1 + (int)(ci % 2), 0, x);
				one_f32(&f, (fpl_rnd)r, n - (size_t)r, 1, 1, x);
			}
		}
		for (k = 0; k < 4; k++) {
			g_sr_bits = srb[k];
			one(&f, A_ROUND, FPL_RND_SP, n, 1, 0, x, x, x);
			if (f32)
				one_f32(&f, FPL_RND_SP, n, 1, 0, x);
			g_sr_bits = 0;
		}
		if (ci % 4 == 0) {	/* streaming stores */
			fill_in_range(&f, x, big, rng);
			one(&f, A_ROUND, ci % 8 ? FPL_RND_SP : FPL_RND_NE, big, 2, 0, x, x, x);
			one(&f, A_ROUND, FPL_RND_TP, big - 3, 1, 1, x, x, x);
			if (f32) {
				one_f32(&f, FPL_RND_NA, big - 1, 2, 0, x);
				one_f32(&f, FPL_RND_SE, big - 2, 1, 1, x);
			}
		}
	}
	free(x);
	h_note("in-range arrays done");
}

/*
 * The direct kernels' common case and its edges (x86/round_direct*.c):
 * arrays of values in the normal range (ties and near-ties), where whole
 * vectors take the fast path, with a rare lane from a table of edge
 * values (zeros, the smallest normal and just below it, subnormals of the
 * format and of binary32/binary64, max, the midpoint above it and the
 * next value, inf, NaN) scattered at random, so that a rare lane lands in
 * every position of a vector and next to fast vectors; every mode,
 * several sr_bits (32 is the binary32 kernels' special case), lengths
 * 0..40 and a few larger ones, inputs starting 0..7 elements into their
 * buffer (binary32 too), one and two threads (a split in mid-vector).
 * Expected values come from the scalar engine.
 */
static void fill_hot(const fpl_format *f, double *x, size_t n, h_rng *rng, unsigned rare)
{
	const double ulp_max = ldexp(1.0, f->emax - f->m);
	const double edge[] = {
		0.0, -0.0, f->min_normal, -f->min_normal, f->min_normal * (1 - 0x1p-24),
		f->min_normal / 2 * 3, ldexp(1.0, f->emin - f->m), ldexp(1.0, f->emin - f->m - 1),
		ldexp(3.0, f->emin - f->m - 2), 0x1p-149, -0x1p-140, 0x1p-1074, -0x1p-1060,
		f->max, -f->max, f->max + ulp_max / 2, -(f->max + ulp_max / 2),
		f->max + ulp_max / 4, f->max + ulp_max, h_from_bits(0x7ff0000000000000ull),
		h_from_bits(0xfff0000000000000ull), h_from_bits(0x7ff8000000000000ull),
		0x1p100, -0x1p-100,
	};
	size_t j, ne = sizeof edge / sizeof *edge;

	for (j = 0; j < n; j++) {
		if (h_rng_below(rng, rare) == 0) {
			x[j] = edge[h_rng_below(rng, ne)];
		} else if (h_rng_below(rng, rare) == 0) {
			/* below the smallest quantum Q by up to 2^-40: sp's deep
			 * lanes, whose T lies in the lost bits */
			int e = f->emin - f->m - 1 - (int)h_rng_below(rng, 40);
			x[j] = h_rng_value(rng, e, e, 24, 0);
		} else {
			uint64_t k = h_rng_below(rng, 4);
			int bits = k < 2 ? f->m + 2 : k < 3 ? f->m + 3 : 24;
			x[j] = h_rng_value(rng, f->emin, f->emax, bits > 53 ? 53 : bits, 0);
		}
	}
}

static void direct_paths(h_rng *rng)
{
	static const char *const names[] = { "bf16", "fp16", "e4m3fn", "e5m2", "e4m3fnuz",
					     "e5m2fnuz", "e3m2", "e2m3", "e2m1", "e3m4", "e5m0",
					     "tf32", "fp32" };
	static const int srb[] = { 32, 5, 17 };
	size_t n = 4133, ni, len, big = (1u << 20) + 21;
	double *x = malloc(big * sizeof *x);
	unsigned ni2;

	for (ni = 0; ni < sizeof names / sizeof *names; ni++) {
		fpl_format f;
		int r, f32, k;
		if (!h_check(fpl_format_lookup(&f, names[ni]) == 0)) {
			h_fail("direct_paths: no format %s", names[ni]);
			continue;
		}
		f32 = fits_f32(&f);
		for (ni2 = 0; ni2 < 2; ni2++) {
			fill_hot(&f, x, n + 8, rng, ni2 ? 7 : 300);
			for (r = 0; r < FPL_RND_COUNT; r++) {
				for (k = 0; k < (r == FPL_RND_SP ? 3 : 1); k++) {
					g_sr_bits = srb[k];
					g_f32_off = (size_t)(r + k) % 8;
					one(&f, A_ROUND, (fpl_rnd)r, n, 1 + r % 2, 0, x + (r + k) % 4, x, x);
					one(&f, A_ROUND, (fpl_rnd)r, n - 1, 1, 1, x, x, x);
					if (f32) {
						one_f32(&f, (fpl_rnd)r, n, 1 + r % 2, 0, x + k);
						one_f32(&f, (fpl_rnd)r, n - 3, 1, 1, x);
					}
				}
				g_sr_bits = 0;
				for (len = 0; len <= 40; len++) {
					g_f32_off = len % 8;
					one(&f, A_ROUND, (fpl_rnd)r, len, 1 + (int)(len % 2), 0, x + len % 3,
					    x, x);
					if (f32)
						one_f32(&f, (fpl_rnd)r, len, 1 + (int)(len % 2), (int)(len % 3 == 0),
							x + len % 5);
				}
			}
		}
		g_f32_off = 0;
		/* sp on lanes just below 2^-8 Q: T' is M shifted right (its
		 * lost bits included), and each lane rounds up with a
		 * probability about 2^-8.5, so 20000 of them see T' exactly */
		if (f.subnormal == FPL_SUB_YES) {
			size_t q, nd = 20000;
			for (q = 0; q < nd; q++)
				x[q] = h_rng_value(rng, f.emin - f.m - 9, f.emin - f.m - 9, 24, 0);
			for (k = 0; k < 2; k++) {
				g_sr_bits = srb[k];
				one(&f, A_ROUND, FPL_RND_SP, nd, 1, 0, x, x, x);
				if (f32)
					one_f32(&f, FPL_RND_SP, nd, 1, 0, x);
			}
			g_sr_bits = 0;
		}
		if (ni % 3 == 0) {	/* streaming stores, misaligned output */
			fill_hot(&f, x, big, rng, 1000);
			one(&f, A_ROUND, ni % 2 ? FPL_RND_SP : FPL_RND_NE, big, 2, 0, x, x, x);
			if (f32) {
				one_f32(&f, FPL_RND_SP, big, 1, 0, x);
				one_f32(&f, FPL_RND_NE, big - 1, 2, 0, x);
			}
		}
	}
	free(x);
	h_note("direct-path arrays done");
}

/*
 * Subnormal-heavy data, the case the direct kernels are designed for:
 * normally distributed values (N(0, 1) puts a third of them below 2^0,
 * e2m1's smallest normal) in segments whose scale alternates between 1,
 * 2^emin and 2^(emin+3), so that runs of vectors that are mostly tiny
 * follow runs with almost none (the kernels switch between a branch per
 * vector and branch-free spans there), with a special value (NaN, inf,
 * a value above max, a binary64 subnormal) now and then.  Every mode,
 * three sr_bits for sp, binary64 (one and two threads, misaligned) and
 * binary32 arrays; expected values from the scalar engine.
 */
static void gauss_fill(const fpl_format *f, double *x, size_t n, h_rng *rng)
{
	const double sp[] = { NAN, -INFINITY, 0x1p-1070, -0.0 };
	size_t j;

	for (j = 0; j < n; j++) {
		size_t seg = j / 2500;
		int e = seg % 3 == 0 ? 0 : seg % 3 == 1 ? f->emin : f->emin + 3;
		double u1 = ((double)(h_rng_next(rng) >> 11) + 0.5) * 0x1p-53;
		double u2 = (double)(h_rng_next(rng) >> 11) * 0x1p-53;
		x[j] = ldexp(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2), e);
		if (h_rng_below(rng, 3000) == 0)
			x[j] = h_rng_below(rng, 5) ? sp[h_rng_below(rng, 4)] : -2 * f->max;
	}
}

static void gauss_arrays(h_rng *rng)
{
	static const char *const names[] = { "bf16", "fp16", "e4m3fn", "e5m2", "e4m3fnuz",
					     "e5m2fnuz", "e3m2", "e2m3", "e2m1", "e3m4", "e5m0",
					     "tf32" };
	static const int srb[] = { 32, 5, 17 };
	const size_t n = 15013;
	double *x = malloc((n + 8) * sizeof *x);
	size_t ni;

	for (ni = 0; ni < sizeof names / sizeof *names; ni++) {
		fpl_format f;
		int r, k;
		if (!h_check(fpl_format_lookup(&f, names[ni]) == 0)) {
			h_fail("gauss_arrays: no format %s", names[ni]);
			continue;
		}
		gauss_fill(&f, x, n + 8, rng);
		for (r = 0; r < FPL_RND_COUNT; r++)
			for (k = 0; k < (r == FPL_RND_SP ? 3 : 1); k++) {
				g_sr_bits = srb[k];
				one(&f, A_ROUND, (fpl_rnd)r, n, 1, 0, x, x, x);
				one(&f, A_ROUND, (fpl_rnd)r, n - 5, 2, 0, x + 3, x, x);
				if (fits_f32(&f)) {
					g_f32_off = (size_t)(r + k) % 8;
					one_f32(&f, (fpl_rnd)r, n, 1, 0, x);
					one_f32(&f, (fpl_rnd)r, n - 7, 2, 1, x + 1);
				}
			}
		g_sr_bits = 0;
		g_f32_off = 0;
	}
	free(x);
	h_note("subnormal-heavy arrays done");
}

/*
 * A million elements per mode and array type through the avx2 set's
 * one-formula loops (x86/round_direct_avx2.c's kf_uni and kd_uni64: na,
 * nz, od and se by one addition of C = 2^23 q or 2^52 q in the mode's
 * MXCSR direction; tp, tn, tz) and its ne loops: e4m3fnuz, e3m2 and an
 * fnuz variant of e2m1, whose zero results binary32 arrays make +0 in
 * place and binary64 ones leave to the scalar engine.  The data interleaves runs of N(0, 1)
 * values (many results zero, tiny or on a binade edge) with values where
 * the format lives (ties, near-ties, subnormals of the format, of
 * binary32 and binary64, overflow, NaN, inf, signed zeros: fill_in_range
 * and fill_hot), so that odd vectors sit among fast ones.  Every mode,
 * binary64 and binary32 arrays, one and two threads, each against the
 * scalar engine.  Run in the avx2 child only (it is that set's test; the
 * others take the same inputs elsewhere at smaller sizes).
 */
static void uni_million(h_rng *rng)
{
	static const char *const names[] = { "e4m3fnuz", "e3m2", "e2m1" };
	const size_t n = (1u << 19) + 3;
	double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
	size_t ni, j;

	for (ni = 0; ni < sizeof names / sizeof *names; ni++) {
		fpl_format f;
		int r, t;
		if (!h_check(fpl_format_lookup(&f, names[ni]) == 0)) {
			h_fail("uni_million: no format %s", names[ni]);
			continue;
		}
		if (ni == 2) {	/* e2m1 with fnuz zeros: kd_uni64's in-place zeros */
			f.specials = FPL_SPEC_FNUZ;
			if (!h_check(fpl_format_finish(&f) == 0)) {
				h_fail("uni_million: e2m1 with fnuz specials refused");
				continue;
			}
		}
		gauss_fill(&f, x, n, rng);
		for (j = 0; j < n; j += 4096) {	/* every other run of 2048: the format's values */
			size_t k = n - j < 2048 ? n - j : 2048;
			if (j % 8192 == 0)
				fill_in_range(&f, y, k, rng);
			else
				fill_hot(&f, y, k, rng, 11);
			memcpy(x + j, y, k * sizeof *y);
		}
		for (r = 0; r < FPL_RND_COUNT; r++)
			for (t = 1; t <= 2; t++) {
				one(&f, A_ROUND, (fpl_rnd)r, n - (size_t)t, t, 0, x + t, x, x);
				one_f32(&f, (fpl_rnd)r, n - (size_t)t, t, t == 2, x + t);
			}
	}
	free(x);
	free(y);
	h_note("uni-loop arrays done (2^20 elements per mode and type)");
}

/*
 * Tiny lanes far below the subnormal quantum Q in the branch-free spans
 * (x86/round_direct_avx2.c's kd_gen64 and kf_gen): arrays that are almost
 * all tiny, so that the kernels stay branch-free, with lanes whose
 * significand lies wholly below Q's position by more than a lane's width
 * (2^-70 Q and less for binary64 lanes, 2^-40 Q and less for binary32
 * ones: there the discarded bits are a sticky 1), lanes just below and
 * above those depths, lanes at Q/2 and its neighbours, both signs, in
 * every mode (sp and se read draws), binary64 and binary32 arrays.
 * Expected values from the scalar engine.
 */
static void deep_tiny_arrays(h_rng *rng)
{
	static const char *const names[] = { "e4m3fn", "e5m2", "e3m2", "e2m3", "e2m1", "fp16",
					     "bf16" };
	const size_t n = 4099;
	double *x = malloc((n + 8) * sizeof *x);
	size_t ni, j;

	for (ni = 0; ni < sizeof names / sizeof *names; ni++) {
		fpl_format f;
		int r;
		if (!h_check(fpl_format_lookup(&f, names[ni]) == 0)) {
			h_fail("deep_tiny_arrays: no format %s", names[ni]);
			continue;
		}
		for (j = 0; j < n + 8; j++) {
			double q = ldexp(1.0, f.emin - f.m), u = (double)(h_rng_next(rng) >> 11) * 0x1p-53;
			double v;
			switch (h_rng_below(rng, 6)) {
			case 0:	/* t > 64 for binary64 lanes, > 32 for binary32 */
				v = ldexp(1.0 + u, -(int)h_rng_below(rng, 60) - 40) * q;
				break;
			case 1:	/* around t = 32 and 64 */
				v = ldexp(1.0 + u, -(int)h_rng_below(rng, 8) - (h_rng_below(rng, 2) ? 8 : 11)) * q;
				break;
			case 2:	/* Q/2 and its neighbours */
				v = q / 2 * (1.0 + ((double)h_rng_below(rng, 3) - 1.0) * 0x1p-20);
				break;
			default:	/* ordinary tiny values */
				v = u * ldexp(1.0, f.emin);
				break;
			}
			x[j] = h_rng_below(rng, 2) ? -v : v;
		}
		for (r = 0; r < FPL_RND_COUNT; r++) {
			one(&f, A_ROUND, (fpl_rnd)r, n, 1, 0, x, x, x);
			if (fits_f32(&f))
				one_f32(&f, (fpl_rnd)r, n, 1, 0, x);
		}
	}
	free(x);
	h_note("deep tiny arrays done");
}

/*
 * sp exactly at its carry boundary, with expected values computed here
 * from the draws (fpl_random_draw), not by the engine: element j with
 * draw r (the top R bits of draw counter + j) is x = (K 2^R + T) u 2^-R,
 * u the quantum of x's binade (Q = 2^(emin-m) for a tiny x, K < 2^m),
 * and T = 2^R - r (rounds up: T + r = 2^R) or 2^R - r - 1 (rounds down),
 * so the result is (K + 1) u or K u.  Random inputs almost never land on
 * the boundary (probability about 2^-R per element), so the lowest bit
 * of T and an off-by-one comparison are seen only here.  Binary32 arrays
 * get the elements whose x is a binary32 value (with R = 32 a tiny x
 * rarely is; x = 0 stands in for the others).
 */
static void sp_boundaries(h_rng *rng)
{
	static const char *const names[] = { "bf16", "fp16", "e4m3fn", "e5m2", "e4m3fnuz",
					     "e3m2", "e2m1" };
	static const int srb[] = { 32, 17, 5 };
	const size_t n = 20011;
	double *x = malloc(n * sizeof *x), *want = malloc(n * sizeof *want);
	double *y = malloc(n * sizeof *y);
	float *xf = malloc(n * sizeof *xf), *yf = malloc(n * sizeof *yf);
	size_t ni, ki, j, tested32 = 0;

	for (ni = 0; ni < sizeof names / sizeof *names; ni++) {
		fpl_format f;
		if (!h_check(fpl_format_lookup(&f, names[ni]) == 0))
			continue;
		for (ki = 0; ki < sizeof srb / sizeof *srb; ki++) {
			const int R = srb[ki];
			fpl_state st, s32;
			fpl_state_init(&st, h_seed() + ki);
			st.counter = 5 + ki;
			st.sr_bits = R;
			for (j = 0; j < n; j++) {
				uint64_t r = fpl_random_draw(st.seed, st.stream, st.counter + j) >> (64 - R);
				uint64_t T, K, one = 1;
				int up = (int)(h_rng_next(rng) & 1), e, tiny = (int)(h_rng_next(rng) % 3 == 0);
				if (up && r == 0)
					up = 0;
				T = up ? (one << R) - r : (one << R) - r - 1;
				if (tiny) {
					K = h_rng_below(rng, one << f.m);
					e = f.emin - f.m;	/* the quantum Q */
				} else {
					K = (one << f.m) + h_rng_below(rng, one << f.m);
					e = f.emin + (int)h_rng_below(rng, (uint64_t)(f.emax - f.emin)) - f.m;
				}
				if (K == 0 && T == 0)	/* down with r = 2^R - 1: x = Q instead */
					K = 1;
				x[j] = ldexp((double)(K << R) + (double)T, e - R);
				want[j] = ldexp((double)(K + (uint64_t)up), e);
				if (h_rng_next(rng) & 1)	/* fnuz: zero has no sign */
					x[j] = -x[j], want[j] = f.specials == FPL_SPEC_FNUZ && want[j] == 0
								? 0 : -want[j];
			}
			s32 = st;
			if (!h_check(fpl_round_array(&f, y, x, n, FPL_RND_SP, &st) == 0))
				continue;
			for (j = 0; j < n; j++)
				if (!h_check(memcmp(&y[j], &want[j], sizeof y[j]) == 0)) {
					h_fail("sp boundary %s R=%d element %zu (%a): %a, want %a", f.name, R,
					       j, x[j], y[j], want[j]);
					break;
				}
			if (!fits_f32(&f))
				continue;
			for (j = 0; j < n; j++) {
				xf[j] = (float)x[j];
				if ((double)xf[j] != x[j])
					xf[j] = 0, want[j] = 0;
				else
					tested32++;
			}
			if (!h_check(fpl_round_array_f32(&f, yf, xf, n, FPL_RND_SP, &s32) == 0))
				continue;
			for (j = 0; j < n; j++) {
				float wf = (float)want[j];
				if (!h_check(memcmp(&yf[j], &wf, sizeof wf) == 0)) {
					h_fail("sp boundary f32 %s R=%d element %zu (%a): %a, want %a", f.name,
					       R, j, (double)xf[j], (double)yf[j], want[j]);
					break;
				}
			}
		}
	}
	h_note("sp boundaries done (%zu binary32 elements on the boundary)", tested32);
	free(x);
	free(want);
	free(y);
	free(xf);
	free(yf);
}

static void f32_arrays(const char *name, int fits, h_rng *rng)
{
	size_t n = 20011, j;
	float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
	fpl_format f;
	int r, rc, t;

	fpl_format_lookup(&f, name);
	for (j = 0; j < n; j++)
		x[j] = (float)h_rng_value(rng, -150, 128, 24, 1);
	for (r = 0; r < FPL_RND_COUNT; r++)
		for (t = 1; t <= 2; t++) {
			fpl_state ss, sa;
			fpl_state_init(&ss, h_seed());
			sa = ss;
			sa.threads = t;
			rc = fpl_round_array_f32(&f, y, x, n, (fpl_rnd)r, &sa);
			if (!fits) {
				if (!h_check(rc == FPL_EFORMAT))
					h_fail("fpl_round_array_f32 on %s: status %d, want FPL_EFORMAT", name, rc);
				goto out;
			}
			if (!h_check(rc == 0)) {
				h_fail("fpl_round_array_f32 %s: status %d", name, rc);
				continue;
			}
			for (j = 0; j < n; j++) {
				double w = fpl_round(&f, (double)x[j], (fpl_rnd)r, &ss);
				float wf = (float)w;
				if (!h_check(memcmp(&wf, &y[j], sizeof wf) == 0)) {
					h_fail("fpl_round_array_f32 %s %s threads=%d element %zu (%a): %a, scalar %a",
					       name, fpl_rnd_name((fpl_rnd)r), t, j, (double)x[j],
					       (double)y[j], w);
					break;
				}
			}
			if (!h_check(h_same_state(&ss, &sa)))
				h_fail("fpl_round_array_f32 %s %s: state differs", name,
				       fpl_rnd_name((fpl_rnd)r));
		}
	/* binary32 signaling NaNs: (double) conversion would quiet them, so the
	 * scalar reference gets the same NaN widened bit by bit */
	{
		static const uint32_t sn[] = { 0x7fa00000u, 0xff800001u, 0x7fbfffffu, 0x7f900000u };
		size_t q;
		for (q = 0; q < 4; q++) {
			fpl_state ss, sa;
			float xs, ys, wf;
			uint64_t db = (uint64_t)(sn[q] >> 31) << 63 | 0x7ff0000000000000ull |
				      (uint64_t)(sn[q] & 0x7fffffu) << 29;
			double w;
			memcpy(&xs, &sn[q], sizeof xs);
			fpl_state_init(&ss, 1);
			sa = ss;
			w = fpl_round(&f, h_from_bits(db), FPL_RND_NE, &ss);
			wf = (float)w;
			rc = fpl_round_array_f32(&f, &ys, &xs, 1, FPL_RND_NE, &sa);
			if (!h_check(rc == 0 && memcmp(&ys, &wf, sizeof wf) == 0 && sa.flags == ss.flags))
				h_fail("fpl_round_array_f32 %s on the sNaN %#x: %a flags %#x, scalar %a flags %#x",
				       name, sn[q], (double)ys, sa.flags, (double)wf, ss.flags);
		}
	}
	/* aliasing */
	{
		fpl_state ss, sa;
		float *x2 = malloc(n * sizeof *x2);
		memcpy(x2, x, n * sizeof *x);
		fpl_state_init(&ss, 1);
		sa = ss;
		fpl_round_array_f32(&f, y, x, n, FPL_RND_SP, &ss);
		fpl_round_array_f32(&f, x2, x2, n, FPL_RND_SP, &sa);
		if (!h_check(memcmp(x2, y, n * sizeof *y) == 0))
			h_fail("fpl_round_array_f32 %s: y == x gives other results", name);
		free(x2);
	}
out:
	free(x);
	free(y);
}

static void codec_arrays(const char *name)
{
	fpl_format f;
	size_t n, j;
	uint64_t *codes, *back;
	double *x;
	int rc;

	fpl_format_lookup(&f, name);
	n = f.nbits <= 16 ? (size_t)1 << f.nbits : 65536;
	codes = malloc(n * sizeof *codes);
	back = malloc(n * sizeof *back);
	x = malloc(n * sizeof *x);
	for (j = 0; j < n; j++)
		codes[j] = j * (f.nbits <= 16 ? 1 : 0x9e3779b97f4a7c15ull) & ((f.nbits >= 64 ? 0 : 1ull << f.nbits) - 1);
	rc = fpl_decode_array(&f, x, codes, n);
	if (!h_check(rc == 0))
		h_fail("fpl_decode_array %s: %d", name, rc);
	for (j = 0; j < n; j++)
		if (!h_check(h_same(x[j], fpl_decode(&f, codes[j]))))
			h_fail("fpl_decode_array %s code %#llx: %a, scalar %a", name,
			       (unsigned long long)codes[j], x[j], fpl_decode(&f, codes[j]));
	rc = fpl_encode_array(&f, back, x, n);
	if (!h_check(rc == 0))
		h_fail("fpl_encode_array %s: %d", name, rc);
	for (j = 0; j < n; j++)
		if (!h_check(back[j] == fpl_encode(&f, x[j])))
			h_fail("fpl_encode_array %s value %a: %#llx, scalar %#llx", name, x[j],
			       (unsigned long long)back[j], (unsigned long long)fpl_encode(&f, x[j]));
	if (f.nbits < 64) {
		uint64_t bad = 1ull << f.nbits;
		if (!h_check(fpl_decode_array(&f, x, &bad, 1) == FPL_ERANGE))
			h_fail("fpl_decode_array %s: a code above nbits must be FPL_ERANGE", name);
	}
	free(codes);
	free(back);
	free(x);
}

/* fpl_compare_array against fpl_compare, element by element; the operands
 * include equal pairs, +-0, NaNs (quiet and signaling: invalid) and
 * subnormals of a DAZ format; the counter must not move. */
static void compare_arrays(const double *a0, const double *b0)
{
	static const char *fmts[] = { "bf16", "e4m3fn", "fp16" };
	enum { N = 4099 };
	double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
	signed char *r = malloc(N);
	size_t j, fi;

	for (j = 0; j < N; j++) {
		a[j] = a0[j];
		b[j] = j % 5 == 0 ? a0[j] : b0[j];
	}
	a[1] = 0.0;
	b[1] = -0.0;
	a[2] = h_from_bits(0x7ff8000000000000ull);	/* quiet NaN */
	b[3] = h_from_bits(0x7ff4000000000000ull);	/* signaling NaN */
	a[4] = 0x1p-20;	/* fp16 subnormals: equal under DAZ */
	b[4] = -0x1p-21;
	for (fi = 0; fi < 2 * (sizeof fmts / sizeof *fmts); fi++) {
		fpl_format f;
		fpl_state ss, sa;
		fpl_format_lookup(&f, fmts[fi / 2]);
		f.daz = (int)(fi % 2);
		fpl_format_finish(&f);
		fpl_state_init(&ss, 1);
		sa = ss;
		if (!h_check(fpl_compare_array(&f, r, a, b, N, &sa) == 0)) {
			h_fail("compare_array %s: bad status", f.name);
			continue;
		}
		for (j = 0; j < N; j++)
			if (!h_check(r[j] == fpl_compare(&f, a[j], b[j], &ss))) {
				h_fail("compare_array %s daz=%d: element %zu (%a, %a): %d", f.name,
				       f.daz, j, a[j], b[j], r[j]);
				break;
			}
		if (!h_check(h_same_state(&ss, &sa) && sa.counter == 0))
			h_fail("compare_array %s daz=%d: state differs or counter moved", f.name, f.daz);
	}
	if (!h_check(fpl_compare_array(NULL, r, a, b, 1, NULL) == FPL_EINVAL))
		h_fail("compare_array with NULL must be FPL_EINVAL");
	free(a);
	free(b);
	free(r);
}

static void bad_args(void)
{
	fpl_format f;
	fpl_state st;
	double y;

	fpl_format_lookup(&f, "bf16");
	fpl_state_init(&st, 1);
	if (!h_check(fpl_round_array(&f, NULL, NULL, 3, FPL_RND_NE, &st) == FPL_EINVAL))
		h_fail("NULL arrays with n > 0 must be FPL_EINVAL");
	if (!h_check(fpl_round_array(&f, NULL, NULL, 0, FPL_RND_NE, &st) == 0 && st.counter == 0))
		h_fail("n = 0 must succeed and leave the counter");
	if (!h_check(fpl_round_array(&f, &y, &y, 1, (fpl_rnd)99, &st) == FPL_EINVAL))
		h_fail("a mode out of range must be FPL_EINVAL");
}

static int child(const char *set)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		char self[4096];
		ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
		if (k < 0)
			_exit(1);
		self[k] = 0;
		setenv("FPLAB_KERNELS", set, 1);
		execl(self, self, (char *)NULL);
		_exit(1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

static void f32_draw_arrays(h_rng *rng);

int main(void)
{
	static const char *fmts[] = { "bf16", "fp16", "e4m3fn", "e5m2", "e2m1", "e4m3fnuz",
				      "e8m0", "fp32", "tf32", "fp64" };
	static const size_t sizes[] = { 0, 1, 2, 7, 33, 1001 };
	const char *forced = getenv("FPLAB_KERNELS");
	size_t nmax = 100003, j, fi, si;
	double *a, *b, *c;
	h_rng rng;
	int op, r, t;

	static char name[64];

	snprintf(name, sizeof name, forced ? "tarray[%.40s]" : "tarray", forced);
	h_init(name);
	if (forced) {
		int st = fpl_kernels_status();
		if (st == FPL_EUNSUPPORTED)
			h_skip("kernel set not supported by this CPU");
		if (st == FPL_ENOTFOUND) {	/* unknown set: arrays must refuse to run */
			fpl_format f;
			fpl_state s0;
			double x = 1, y;
			fpl_format_lookup(&f, "bf16");
			fpl_state_init(&s0, 1);
			printf("%s: unknown set rejected as expected\n", name);
			return fpl_round_array(&f, &y, &x, 1, FPL_RND_NE, &s0) == FPL_ENOTFOUND ? 3 : 1;
		}
		if (!h_check(st == 0 && strcmp(fpl_kernels_selected(), forced) == 0)) {
			h_fail("FPLAB_KERNELS=%s: status %d, selected %s", forced, st,
			       fpl_kernels_selected());
			return h_done();
		}
	} else {
		int rc = child("ref");
		if (!h_check(rc == 0))
			h_fail("the run with FPLAB_KERNELS=ref failed (%d)", rc);
		rc = child("avx2");
		if (rc == H_SKIP)
			h_note("FPLAB_KERNELS=avx2: skipped (no AVX2+FMA here)");
		else if (!h_check(rc == 0))
			h_fail("the run with FPLAB_KERNELS=avx2 failed (%d)", rc);
		rc = child("avx512");
		if (rc == H_SKIP)
			h_note("FPLAB_KERNELS=avx512: skipped (no AVX-512 here)");
		else if (!h_check(rc == 0))
			h_fail("the run with FPLAB_KERNELS=avx512 failed (%d)", rc);
		rc = child("nosuchset");
		if (!h_check(rc == 3))
			h_fail("FPLAB_KERNELS=nosuchset: status must be FPL_ENOTFOUND and array "
			       "operations must fail with it (child exit %d)", rc);
	}
	h_note("kernels: compiled \"%s\", selected \"%s\" (%s)", fpl_kernels_compiled(),
	       fpl_kernels_selected(), fpl_kernels_reason());
	fpl_format_lookup(&g_from[0], "fp16");
	g_from[0].daz = 1;
	fpl_format_lookup(&g_from[1], "e5m2");
	if (!h_check(fpl_format_finish(&g_from[0]) == 0 && fpl_format_finish(&g_from[1]) == 0))
		h_fail("cannot set up the source formats of convert");
	h_rng_init(&rng, 11);
	a = malloc(nmax * sizeof *a);
	b = malloc(nmax * sizeof *b);
	c = malloc(nmax * sizeof *c);
	for (j = 0; j < nmax; j++) {
		a[j] = h_rng_value(&rng, -140, 130, 53, 1);
		b[j] = j % 3 ? h_rng_value(&rng, -140, 130, 53, 1) : -a[j] * (1 + 0x1p-9 * (double)(j % 7));
		c[j] = h_rng_value(&rng, -140, 130, 24, 1);
	}
	for (fi = 0; fi < sizeof fmts / sizeof *fmts; fi++) {
		fpl_format f;
		if (!h_check(fpl_format_lookup(&f, fmts[fi]) == 0))
			continue;
		for (op = 0; op < A_NOPS; op++)
			for (r = 0; r < FPL_RND_COUNT; r++) {
				g_fromi = r % 2;
				for (si = 0; si < sizeof sizes / sizeof *sizes; si++)
					one(&f, op, (fpl_rnd)r, sizes[si], 1 + (int)(si % 4), 0, a, b, c);
				one(&f, op, (fpl_rnd)r, 5003, 2, 1, a, b, c);
				if (op != A_ROUND && op != A_SQRT && op != A_CONVERT)
					one(&f, op, (fpl_rnd)r, 5003, 3, 2, a, b, c);
			}
		g_fromi = 0;
		for (t = 1; t <= 4; t++)
			for (op = 0; op < A_NOPS; op += 3) {
				one(&f, op, FPL_RND_NE, nmax, t, 0, a, b, c);
				one(&f, op, FPL_RND_SP, nmax, t, 0, a, b, c);
			}
	}
	h_note("double arrays done");
	in_range(&rng);
	direct_paths(&rng);
	gauss_arrays(&rng);
	deep_tiny_arrays(&rng);
	sp_boundaries(&rng);
	f32_draw_arrays(&rng);
	if (strcmp(fpl_kernels_selected(), "avx2") == 0)
		uni_million(&rng);
	f32_arrays("bf16", 1, &rng);
	f32_arrays("fp16", 1, &rng);
	f32_arrays("e4m3fn", 1, &rng);
	f32_arrays("e5m2", 1, &rng);
	f32_arrays("tf32", 1, &rng);
	f32_arrays("fp32", 1, &rng);
	f32_arrays("fp64", 0, &rng);
	for (fi = 0; fi < sizeof fmts / sizeof *fmts; fi++)
		codec_arrays(fmts[fi]);
	compare_arrays(a, b);
	bad_args();
	free(a);
	free(b);
	free(c);
	return h_done();
}

/*
 * The draws of binary32 arrays in sp and se (the AVX-512 binary32 loop
 * computes a vector's draws one vector ahead, x86/round_direct.c's
 * kf_span): for each format that fits binary32 and every sr_bits R = 1..32
 * (and se), an array of 4099 elements (a tail) mixing N(0, 1) values at
 * scales 1, 2^emin and 2^(emin+3) in runs (so that spans branch per
 * vector and go branch-free), then a run of fill_hot's values (zeros,
 * subnormals of the format and of binary32, ties, values past max, inf,
 * NaN), the input misaligned by up to 7 floats, one and two threads.
 * 9 formats x 33 x 4099 elements: 1.2 million outputs against the scalar
 * engine, bit for bit and flag for flag.
 */
static void f32_draw_arrays(h_rng *rng)
{
	static const char *const names[] = { "bf16", "fp16", "e4m3fn", "e5m2", "e4m3fnuz",
					     "e5m2fnuz", "e3m2", "e2m3", "e2m1" };
	const size_t n = 4099;
	double *x = malloc((n + 8) * sizeof *x);
	size_t ni, outs = 0;
	int R;

	for (ni = 0; ni < sizeof names / sizeof *names; ni++) {
		fpl_format f;
		if (!h_check(fpl_format_lookup(&f, names[ni]) == 0)) {
			h_fail("f32_draw_arrays: no format %s", names[ni]);
			continue;
		}
		for (R = 0; R <= 32; R++) {
			/* R = 0: se (sr_bits left at the state's default) */
			gauss_fill(&f, x, n + 8, rng);
			fill_hot(&f, x + 3000, 900, rng, 5);
			g_sr_bits = R;
			g_f32_off = (size_t)R % 8;
			one_f32(&f, R ? FPL_RND_SP : FPL_RND_SE, n, 1 + R % 2, 0, x + R % 5);
			outs += n;
		}
	}
	g_sr_bits = 0;
	g_f32_off = 0;
	free(x);
	h_note("binary32 sp and se arrays, R = 1..32: %zu outputs", outs);
}

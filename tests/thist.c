/* SPDX-License-Identifier: MIT */
/*
 * tests/thist.c - the histogram library (fplab/hist.h) on hand-chosen
 * values whose class in fp16, bf16, e5m2 and e4m3fn is derived by hand
 * below (never from the code under test); the same tensor through .npy,
 * .npz (stored, deflated) and .safetensors gives identical results; APS
 * and MX scaling on hand-derived cases; the suggestions; the AVX2 and
 * AVX-512 binary32 classification against the portable loop, and
 * fpl_hist_add_f32 under each kernel set (the casts done in the lanes
 * included) against FPLAB_KERNELS=ref.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/fplab.h>

#include "harness.h"
#include "hist/hist_internal.h"
#include "tfiles.h"

/* Count a check; on failure print the message (the harness counts it). */
#define CHECK(cond, ...)                                 \
	do {                                             \
		if (!h_check(cond))                       \
			h_note("FAIL: " __VA_ARGS__);   \
	} while (0)

/*
 * The known values, as binary32 bit patterns, with their class in each
 * format (ne, subnormals, no saturation).  Formats: fp16 (min sub 2^-24,
 * min normal 2^-14, max 65504, overflow from 65520), bf16 (2^-133, 2^-126,
 * (2-2^-7)2^127; FLT_MAX lies above the midpoint (2-2^-8)2^127), e5m2
 * (2^-16, 2^-14, 57344, overflow from 61440), e4m3fn (2^-9, 2^-6, 448;
 * 464 is the tie 448|480 -> 448, anything above overflows to NaN).
 * Classes: z zero, n nan/inf, u became zero, s subnormal, N normal, o overflow.
 */
static const struct known {
	uint32_t bits;
	const char *what;
	char fp16, bf16, e5m2, e4m3;
} K[] = {
	{ 0x00000000u, "+0", 'z', 'z', 'z', 'z' },
	{ 0x80000000u, "-0", 'z', 'z', 'z', 'z' },
	{ 0x7fc00000u, "nan", 'n', 'n', 'n', 'n' },
	{ 0x7f800000u, "+inf", 'n', 'n', 'n', 'n' },
	{ 0xff800000u, "-inf", 'n', 'n', 'n', 'n' },
	{ 0x3f800000u, "1", 'N', 'N', 'N', 'N' },
	{ 0xbfc00000u, "-1.5", 'N', 'N', 'N', 'N' },
	{ 0x3b800000u, "2^-8", 'N', 'N', 'N', 's' },
	{ 0x37800000u, "2^-16", 's', 'N', 's', 'u' },
	{ 0xb5800000u, "-2^-20", 's', 'N', 'u', 'u' },
	{ 0x30800000u, "2^-30", 'u', 'N', 'u', 'u' },
	{ 0x00100000u, "2^-130", 'u', 's', 'u', 'u' },
	{ 0x00000200u, "2^-140", 'u', 'u', 'u', 'u' },
	{ 0x447a0000u, "1000", 'N', 'N', 'N', 'o' },
	{ 0xc8000000u, "-2^17", 'o', 'N', 'o', 'o' },
	{ 0x71800000u, "2^100", 'o', 'N', 'o', 'o' },
	{ 0x7f7fffffu, "FLT_MAX", 'o', 'o', 'o', 'o' },
	{ 0x33800000u, "2^-24", 's', 'N', 'u', 'u' },
	{ 0x33400000u, "0.75*2^-24", 's', 'N', 'u', 'u' },
	{ 0x33000000u, "2^-25 (fp16 tie -> 0)", 'u', 'N', 'u', 'u' },
	{ 0x477fe000u, "65504", 'N', 'N', 'o', 'o' },
	{ 0x43e00000u, "448", 'N', 'N', 'N', 'N' },
	{ 0x43e80000u, "464", 'N', 'N', 'N', 'N' },
	{ 0x43e88000u, "465", 'N', 'N', 'N', 'o' },
	{ 0x3c800000u, "2^-6", 'N', 'N', 'N', 'N' },
	{ 0x3c000000u, "2^-7", 'N', 'N', 'N', 's' },
};
#define NK (sizeof K / sizeof K[0])

/* Expected counts, tallied by hand from the table (and cross-checked
 * against the columns above by count_col()):
 *            zeros nan_inf became_zero subnormal normal overflow */
static const struct expect {
	const char *fmt;
	uint64_t c[6];
} E[] = {
	{ "fp16", { 2, 3, 4, 4, 10, 3 } },
	{ "bf16", { 2, 3, 1, 1, 18, 1 } },
	{ "e5m2", { 2, 3, 7, 1, 9, 4 } },
	{ "e4m3fn", { 2, 3, 8, 2, 5, 6 } },
};

static float kval(size_t i)
{
	float f;
	memcpy(&f, &K[i].bits, 4);
	return f;
}

static void count_col(int col, uint64_t c[6])
{
	static const char cls[] = "znusNo";
	memset(c, 0, 6 * sizeof *c);
	for (size_t i = 0; i < NK; i++) {
		char k = col == 0 ? K[i].fp16 : col == 1 ? K[i].bf16 : col == 2 ? K[i].e5m2 : K[i].e4m3;
		c[strchr(cls, k) - cls]++;
	}
}

static void got_counts(const fpl_hist *h, uint64_t g[6])
{
	g[0] = h->zeros;
	g[1] = h->nan_inf;
	g[2] = h->became_zero;
	g[3] = h->subnormal;
	g[4] = h->normal;
	g[5] = h->overflow;
}

static void expect_counts(const char *what, const char *fmt, const fpl_hist *h, const uint64_t *e)
{
	uint64_t g[6];
	got_counts(h, g);
	static const char *names[6] = { "zeros", "nan_inf", "became_zero", "subnormal", "normal",
					"overflow" };
	for (int i = 0; i < 6; i++)
		if (!h_check(g[i] == e[i]))
			h_fail("%s %s: %s = %llu, expected %llu", what, fmt, names[i],
			       (unsigned long long)g[i], (unsigned long long)e[i]);
	CHECK(h->count == NK, "%s %s: count %llu", what, fmt,
					  (unsigned long long)h->count);
}

static void cfg_for(fpl_hist_config *c, const char *fmt)
{
	fpl_format f;
	if (fpl_format_lookup(&f, fmt) != 0) {
		h_fail("format %s not found", fmt);
		return;
	}
	fpl_hist_config_init(c, &f);
}

/* The events of h (finished, scale 1) are those of the scalar engine
 * casting x one by one, and the overflow class is the overflow count. */
static void expect_events(const char *what, const fpl_hist_config *cfg, const double *x,
			  size_t n, const fpl_hist *h)
{
	fpl_state st;
	fpl_state_init(&st, 0);
	for (size_t i = 0; i < n; i++)
		(void)fpl_round(&cfg->fmt, x[i], cfg->rnd, &st);
	for (int i = 0; i < FPL_NFLAGS; i++)
		CHECK(h->events[i] == st.count[i], "%s %s: events[%s] = %llu, the engine's %llu", what,
		      cfg->fmt.name, fpl_flag_name(i), (unsigned long long)h->events[i],
		      (unsigned long long)st.count[i]);
	CHECK(h->overflow == h->events[2], "%s %s: overflow class %llu, flag %llu", what,
	      cfg->fmt.name, (unsigned long long)h->overflow, (unsigned long long)h->events[2]);
}

/* Table consistency, then counts through the f32 and f64 entry points. */
static void test_known(void)
{
	for (int col = 0; col < 4; col++) {
		uint64_t c[6];
		count_col(col, c);
		for (int i = 0; i < 6; i++)
			CHECK(c[i] == E[col].c[i], "table: column %s, class %d: %llu vs %llu", E[col].fmt, i,
				       (unsigned long long)c[i], (unsigned long long)E[col].c[i]);
	}
	float xf[NK];
	double xd[NK];
	for (size_t i = 0; i < NK; i++)
		xd[i] = xf[i] = kval(i);
	for (int col = 0; col < 4; col++) {
		for (int path = 0; path < 2; path++) {
			fpl_hist_config cfg;
			fpl_hist h;
			cfg_for(&cfg, E[col].fmt);
			if (!h_check(fpl_hist_init(&h, &cfg) == 0))
				continue;
			int rc = path ? fpl_hist_add(&h, xd, NK) : fpl_hist_add_f32(&h, xf, NK);
			CHECK(rc == 0, "add rc %d", rc);
			fpl_hist_finish(&h);
			expect_counts(path ? "f64" : "f32", E[col].fmt, &h, E[col].c);
			expect_events(path ? "f64" : "f32", &cfg, xd, NK, &h);
			/* binade 0 holds 1 and -1.5; binade -8 holds 2^-8 */
			CHECK(h.hist[0 - FPL_HIST_EMIN] == 2, "bin 0");
			CHECK(h.hist[-8 - FPL_HIST_EMIN] == 1, "bin -8");
			CHECK(h.lo == -140 && h.hi == 127, "%s: bins %d..%d, expected -140..127", E[col].fmt, h.lo, h.hi);
			fpl_hist_release(&h);
		}
	}
	/* e4m3fn with saturation: the same six overflow (now to +-448) */
	fpl_hist_config cfg;
	fpl_hist h;
	cfg_for(&cfg, "e4m3fn");
	cfg.fmt.overflow = FPL_OVF_SATURATE;
	fpl_format_finish(&cfg.fmt);
	fpl_hist_init(&h, &cfg);
	fpl_hist_add_f32(&h, xf, NK);
	fpl_hist_finish(&h);
	expect_counts("saturating", "e4m3fn", &h, E[3].c);
	expect_events("saturating", &cfg, xd, NK, &h);
	fpl_hist_release(&h);
}

/* Relative errors on exactly known cases. */
static void test_errors(void)
{
	/* fp16: 1 + 2^-11 is a tie -> 1 (error 2^-11/(1+2^-11)); 2^-25 -> 0
	 * (error 1); 3 exact. */
	double x[3] = { 1 + 0x1p-11, 0x1p-25, 3 };
	fpl_hist_config cfg;
	fpl_hist h;
	cfg_for(&cfg, "fp16");
	fpl_hist_init(&h, &cfg);
	fpl_hist_add(&h, x, 3);
	fpl_hist_finish(&h);
	double e0 = 0x1p-11 / (1 + 0x1p-11);
	CHECK(h.err_n == 3, "err_n %llu", (unsigned long long)h.err_n);
	CHECK(h.err_max == 1, "err_max %a", h.err_max);
	CHECK(fabs(h.err_sum - (1 + e0)) < 1e-15, "err_sum %a", h.err_sum);
	CHECK(fabs(h.err_sumsq - (1 + e0 * e0)) < 1e-15, "err_sumsq %a", h.err_sumsq);
	fpl_hist_release(&h);
}

/* APS: hand-derived k. */
static void test_aps(void)
{
	fpl_format f;
	/* e4m3fn, amax 1000 = 1.953*2^9: k = 8-9 = -1 gives 500 -> rounds to
	 * 512 > 448, overflow; so k = -2 (250). */
	fpl_format_lookup(&f, "e4m3fn");
	int k = fpl_hist_aps_k(&f, FPL_RND_NE, 1000);
	CHECK(k == -2, "aps e4m3fn 1000: k %d, expected -2", k);
	/* fp16, amax 1000: k = 15-9 = 6, 64000 <= 65504: k = 6 */
	fpl_format_lookup(&f, "fp16");
	k = fpl_hist_aps_k(&f, FPL_RND_NE, 1000);
	CHECK(k == 6, "aps fp16 1000: k %d, expected 6", k);
	/* fp16, amax 2^-20: k = 15+20 = 35, 2^15 fits */
	k = fpl_hist_aps_k(&f, FPL_RND_NE, 0x1p-20);
	CHECK(k == 35, "aps fp16 2^-20: k %d, expected 35", k);
	/* fp16, amax 65535 = (2-2^-16)*2^15: 65535 rounds to 65536 -> overflow, k = -1 */
	k = fpl_hist_aps_k(&f, FPL_RND_NE, 65535);
	CHECK(k == -1, "aps fp16 65535: k %d, expected -1", k);
	/* toward zero never overflows by rounding up: k = 0 */
	k = fpl_hist_aps_k(&f, FPL_RND_TZ, 65535);
	CHECK(k == 0, "aps fp16 65535 tz: k %d, expected 0", k);

	/* A tensor {2^-30, 2^-26, 2^-20} in fp16 with --aps: amax 2^-20 -> k 35:
	 * 2^5, 2^9, 2^15: all normal.  Without scaling: 2^-30 and 2^-26 become zero
	 * (below 2^-25), 2^-20 subnormal. */
	float x[3] = { 0x1p-30f, 0x1p-26f, 0x1p-20f };
	for (int aps = 0; aps < 2; aps++) {
		fpl_hist_config cfg;
		fpl_hist h;
		cfg_for(&cfg, "fp16");
		cfg.scaling = aps ? FPL_HSCALE_APS : FPL_HSCALE_FIXED;
		fpl_hist_init(&h, &cfg);
		if (fpl_hist_needs_scan(&h))
			fpl_hist_scan_f32(&h, x, 3);
		fpl_hist_add_f32(&h, x, 3);
		fpl_hist_finish(&h);
		if (aps) {
			CHECK(h.normal == 3 && h.scale_log2 == 35, "aps tensor: normal %llu k %d", (unsigned long long)h.normal,
				       h.scale_log2);
			/* shown histogram is of scaled values: bins 5, 9, 15 */
			CHECK(h.hist[5 - FPL_HIST_EMIN] == 1 && h.hist[15 - FPL_HIST_EMIN] == 1 &&
				h.hist_in[-30 - FPL_HIST_EMIN] == 1, "aps bins");
		} else
			CHECK(h.became_zero == 2 && h.subnormal == 1, "plain tensor: under %llu sub %llu",
				       (unsigned long long)h.became_zero, (unsigned long long)h.subnormal);
		/* suggestions: APS k = 35 either way */
		CHECK(h.aps_k == 35, "suggested aps k %d", h.aps_k);
		/* best k: loss 0 needs -30+k >= -24-1 i.e. k >= 5 (binade -26+k must
		 * not be <= -26) and -20+k <= 15 i.e. k <= 35; middle of [4..35]?  The
		 * estimate counts binade e as lost to zero when e + k <= -26, so k >= -4
		 * for 2^-30: k in [-4+... ] -- see below */
		CHECK(h.best_loss == 0, "best loss %llu", (unsigned long long)h.best_loss);
		/* zero-loss range: -30 + k >= -25 (k >= 5) and -20 + k <= 15 (k <= 35);
		 * middle (5+35)/2 = 20 */
		CHECK(h.best_k == 20, "best k %d, expected 20", h.best_k);
		fpl_hist_release(&h);
	}
}

/* MX: one block of 32 in e4m3fn (emax 8).  Values: 1.5*2^-20 (the block
 * max, binade -20), 2^-24, 2^-30, 2^-35, 2^-40 and 27 zeros.  Shared
 * exponent -20 - 8 = -28, so the cast sees 1.5*2^8 = 384 (normal), 2^4
 * (normal), 2^-2 (normal), 2^-7 (subnormal: 2^-9 <= v < 2^-6), 2^-12
 * (below 2^-10: becomes zero).  A second block of 32 with a single 2^140
 * (shared exponent 140 - 8 = 132, clamped to e8m0's 127, so the cast sees
 * 2^13 > 448: overflow) and 31 values 1.0 (seen as 2^-127: become zero).
 * Events by hand: 2^-12 and the 31 2^-127 are tiny and inexact (underflow,
 * inexact: 32), 2^13 overflows (overflow, inexact); the rest are exact. */
static void test_mx(void)
{
	double x[64] = { 0 };
	x[0] = 1.5 * 0x1p-20;
	x[1] = 0x1p-24;
	x[2] = 0x1p-30;
	x[3] = 0x1p-35;
	x[4] = 0x1p-40;
	x[32] = 0x1p140;
	for (int i = 33; i < 64; i++)
		x[i] = 1.0;
	fpl_hist_config cfg;
	fpl_hist h;
	cfg_for(&cfg, "e4m3fn");
	cfg.scaling = FPL_HSCALE_MX;
	cfg.mx_block = 32;
	fpl_hist_init(&h, &cfg);
	/* in odd pieces, to exercise the block carry */
	fpl_hist_add(&h, x, 7);
	fpl_hist_add(&h, x + 7, 40);
	fpl_hist_add(&h, x + 47, 17);
	fpl_hist_finish(&h);
	CHECK(h.mx_blocks == 2, "mx blocks %llu", (unsigned long long)h.mx_blocks);
	CHECK(h.zeros == 27 && h.normal == 3 && h.subnormal == 1 && h.became_zero == 32 &&
		h.overflow == 1, "mx: zeros %llu normal %llu sub %llu under %llu ovf %llu",
		       (unsigned long long)h.zeros, (unsigned long long)h.normal,
		       (unsigned long long)h.subnormal, (unsigned long long)h.became_zero,
		       (unsigned long long)h.overflow);
	CHECK(h.events[0] == 33 && h.events[1] == 32 && h.events[2] == 1 && h.events[6] == 0,
	      "mx events: inexact %llu underflow %llu overflow %llu flushed %llu",
	      (unsigned long long)h.events[0], (unsigned long long)h.events[1],
	      (unsigned long long)h.events[2], (unsigned long long)h.events[6]);
	fpl_hist_release(&h);
}

/* Loss scale as a number (not a power of two): 2^-26 * 1000 = 1.49e-5,
 * fp16 subnormal (2^-24 = 5.96e-8 <= v < 2^-14 = 6.1e-5). */
static void test_number_scale(void)
{
	double x[2] = { 0x1p-26, 0x1p-40 };	/* 2^-40*1000 ~ 9.1e-10 < 2^-25: becomes zero */
	fpl_hist_config cfg;
	fpl_hist h;
	cfg_for(&cfg, "fp16");
	cfg.scale = 1000;
	fpl_hist_init(&h, &cfg);
	fpl_hist_add(&h, x, 2);
	fpl_hist_finish(&h);
	CHECK(h.subnormal == 1 && h.became_zero == 1, "scale 1000: sub %llu under %llu", (unsigned long long)h.subnormal,
		       (unsigned long long)h.became_zero);
	CHECK(!h.scale_pow2, "1000 is not a power of two");
	fpl_hist_release(&h);
}

/*
 * The IEEE underflow flag and "became zero" differ (fp16, ne; min
 * subnormal 2^-24):
 *   1.5*2^-25 = 0.75*2^-24 rounds to 2^-24: underflow (tiny, inexact),
 *     subnormal, not zero; error 2^-24 - 1.5*2^-25 = 2^-26 (relative 1/3);
 *   2^-26 rounds to 0: underflow and became zero; error 2^-26 (relative 1);
 *   2^-20, a subnormal held exactly: no flag, error 0;
 *   1: normal, exact; +0: a zero (its absolute error 0 counts).
 * inexact 2, underflow 2, became_zero 1, subnormal 2; absolute error:
 * n 5, sum 2^-25, sum of squares 2^-51, max 2^-26; relative: n 4, sum
 * 4/3, max 1.  The same through the f64 path, the f32 fast path and MX
 * blocks of 1 (each value's own scale: 2^(e - 15), so each is cast as a
 * power of two times 1 or 1.5: no event at all).
 */
static void test_events_fp16(void)
{
	double x[5] = { 1.5 * 0x1p-25, 0x1p-26, 0x1p-20, 1, 0 };
	float xf[5];
	for (int i = 0; i < 5; i++)
		xf[i] = (float)x[i];
	for (int path = 0; path < 2; path++) {
		fpl_hist_config cfg;
		fpl_hist h;
		cfg_for(&cfg, "fp16");
		fpl_hist_init(&h, &cfg);
		if (path)
			fpl_hist_add(&h, x, 5);
		else
			fpl_hist_add_f32(&h, xf, 5);
		fpl_hist_finish(&h);
		const char *p = path ? "f64" : "f32";
		CHECK(h.events[0] == 2 && h.events[1] == 2 && h.became_zero == 1 && h.subnormal == 2 &&
		      h.normal == 1 && h.zeros == 1 && h.events[6] == 0,
		      "%s: inexact %llu underflow %llu became_zero %llu subnormal %llu", p,
		      (unsigned long long)h.events[0], (unsigned long long)h.events[1],
		      (unsigned long long)h.became_zero, (unsigned long long)h.subnormal);
		CHECK(h.abs_n == 5 && h.abs_sum == 0x1p-25 && h.abs_sumsq == 0x1p-51 &&
		      h.abs_max == 0x1p-26, "%s: abs n %llu sum %a sumsq %a max %a", p,
		      (unsigned long long)h.abs_n, h.abs_sum, h.abs_sumsq, h.abs_max);
		CHECK(h.err_n == 4 && fabs(h.err_sum - 4.0 / 3) < 1e-6 && h.err_max == 1,
		      "%s: rel n %llu sum %a max %a", p, (unsigned long long)h.err_n, h.err_sum,
		      h.err_max);
		fpl_hist_release(&h);
	}
	fpl_hist_config cfg;
	fpl_hist h;
	cfg_for(&cfg, "fp16");
	cfg.scaling = FPL_HSCALE_MX;
	cfg.mx_block = 1;
	fpl_hist_init(&h, &cfg);
	fpl_hist_add(&h, x, 5);
	fpl_hist_finish(&h);
	CHECK(h.events[0] == 0 && h.events[1] == 0 && h.became_zero == 0 && h.abs_n == 5 &&
	      h.abs_max == 0, "mx 1: inexact %llu underflow %llu abs max %a",
	      (unsigned long long)h.events[0], (unsigned long long)h.events[1], h.abs_max);
	fpl_hist_release(&h);
}

/*
 * flushed: fp16 with FTZ (round with subnormals, then a tiny result is
 * +-0).  2^-20 (exact as a subnormal) and 0.75*2^-24 (rounds to 2^-24)
 * are tiny: flushed, underflow, inexact and became zero; 1 is exact.
 * Absolute errors 2^-20 and 0.75*2^-24, max 2^-20.  The CLI has no FTZ
 * switch, so this is the only test of the count.
 */
static void test_flushed(void)
{
	double x[3] = { 0x1p-20, 0.75 * 0x1p-24, 1 };
	float xf[3] = { 0x1p-20f, 0.75f * 0x1p-24f, 1 };
	for (int path = 0; path < 2; path++) {
		fpl_hist_config cfg;
		fpl_hist h;
		cfg_for(&cfg, "fp16");
		cfg.fmt.subnormal = FPL_SUB_FTZ;
		CHECK(fpl_format_finish(&cfg.fmt) == 0, "ftz format");
		fpl_hist_init(&h, &cfg);
		if (path)
			fpl_hist_add(&h, x, 3);
		else
			fpl_hist_add_f32(&h, xf, 3);
		fpl_hist_finish(&h);
		CHECK(h.events[6] == 2 && h.events[1] == 2 && h.events[0] == 2 && h.became_zero == 2 &&
		      h.subnormal == 0 && h.normal == 1, "ftz %s: flushed %llu underflow %llu "
		      "became_zero %llu subnormal %llu", path ? "f64" : "f32",
		      (unsigned long long)h.events[6], (unsigned long long)h.events[1],
		      (unsigned long long)h.became_zero, (unsigned long long)h.subnormal);
		CHECK(h.abs_max == 0x1p-20 && h.abs_sum == 0x1p-20 + 0.75 * 0x1p-24,
		      "ftz: abs max %a sum %a", h.abs_max, h.abs_sum);
		fpl_hist_release(&h);
	}
}

/*
 * Scaled values binary64 cannot hold are cast exactly from x*s:
 * 2^-1000 * 2^-100 = 2^-1100 (0 in binary64) is tiny: in fp16 ne it
 * becomes zero (underflow, inexact); toward +inf it rounds up to 2^-24
 * (subnormal, underflow, inexact).  2^1000 * 2^100 (inf in binary64)
 * overflows: overflow class 1 and the overflow flag 1; no absolute error
 * for it (v not finite), 2^-1100 for the zero (ne).
 */
static void test_extreme_scale(void)
{
	double x[2] = { 0x1p-1000, 0x1p+1000 };
	for (int tp = 0; tp < 2; tp++) {
		fpl_hist_config cfg;
		fpl_hist h;
		cfg_for(&cfg, "fp16");
		cfg.rnd = tp ? FPL_RND_TP : FPL_RND_NE;
		cfg.scale = 0x1p-100;
		fpl_hist_init(&h, &cfg);
		fpl_hist_add(&h, x, 1);
		fpl_hist_finish(&h);
		CHECK(h.became_zero == !tp && h.subnormal == !!tp && h.events[1] == 1 &&
		      h.events[0] == 1, "2^-1100 %s: became_zero %llu subnormal %llu underflow %llu",
		      tp ? "tp" : "ne", (unsigned long long)h.became_zero,
		      (unsigned long long)h.subnormal, (unsigned long long)h.events[1]);
		CHECK(h.abs_n == 1 && h.abs_max == (tp ? 0x1p-24 : 0) && h.err_max == (tp ? INFINITY : 1),
		      "2^-1100 %s: abs n %llu max %a rel %a", tp ? "tp" : "ne",
		      (unsigned long long)h.abs_n, h.abs_max, h.err_max);
		fpl_hist_release(&h);
		cfg.scale = 0x1p100;
		fpl_hist_init(&h, &cfg);
		fpl_hist_add(&h, x + 1, 1);
		fpl_hist_finish(&h);
		CHECK(h.overflow == 1 && h.events[2] == 1 && h.abs_n == 0,
		      "2^1100: overflow %llu flag %llu abs n %llu", (unsigned long long)h.overflow,
		      (unsigned long long)h.events[2], (unsigned long long)h.abs_n);
		fpl_hist_release(&h);
	}
}

/*
 * The exact path: 0.1 in fp16 is 1638 * 2^-14 = 0.0999755859375, so its
 * absolute error is 0.1 - 0.0999755859375 = 2.44140625e-05 (exactly, in
 * decimal), measured as relative error times |v| (within a few roundings);
 * inexact 1, no underflow.
 */
static void test_exact_abs(void)
{
	fpl_wide w;
	double xd;
	CHECK(fpl_parse_number("0.1", &xd, &w) == 1, "0.1 is not a binary64");
	fpl_inexact ix = { 0, w };
	fpl_hist_config cfg;
	fpl_hist h;
	cfg_for(&cfg, "fp16");
	fpl_hist_init(&h, &cfg);
	fpl_hist_add_exact(&h, &xd, 1, &ix, 1);
	fpl_hist_finish(&h);
	CHECK(h.abs_n == 1 && fabs(h.abs_max - 2.44140625e-05) < 1e-20 && h.events[0] == 1 &&
	      h.events[1] == 0, "exact 0.1: abs n %llu max %.17g inexact %llu",
	      (unsigned long long)h.abs_n, h.abs_max, (unsigned long long)h.events[0]);
	/* merge: counts and events add, maxima stay */
	fpl_hist t;
	fpl_hist_init(&t, &cfg);
	fpl_hist_merge(&t, &h);
	fpl_hist_merge(&t, &h);
	CHECK(t.abs_n == 2 && t.abs_max == h.abs_max && t.abs_sum == 2 * h.abs_sum &&
	      t.events[0] == 2, "merge: abs n %llu events %llu", (unsigned long long)t.abs_n,
	      (unsigned long long)t.events[0]);
	fpl_hist_release(&t);
	fpl_hist_release(&h);
}

/* Run the known tensor through a file and compare with the in-memory counts. */
static void hist_file(const char *path, const char *fmt, uint64_t out[6], const char *want_name)
{
	fpl_tensor_file *tf;
	char err[512];
	memset(out, 0xff, 6 * sizeof *out);
	if (!h_check(fpl_tensor_open(&tf, path, NULL, err, sizeof err) == 0)) {
		h_fail("open %s: %s", path, err);
		return;
	}
	long i = fpl_tensor_find(tf, want_name);
	CHECK(i >= 0, "%s: no tensor '%s'", path, want_name);
	if (i >= 0) {
		fpl_tensor_stream *s;
		fpl_hist_config cfg;
		fpl_hist h;
		cfg_for(&cfg, fmt);
		fpl_hist_init(&h, &cfg);
		if (fpl_tensor_stream_open(&s, tf, (size_t)i, err, sizeof err) == 0) {
			float buf[5];	/* small, to cross chunk boundaries */
			size_t got;
			while (fpl_tensor_stream_read_f32(s, buf, 5, &got, err, sizeof err) == 0 && got)
				fpl_hist_add_f32(&h, buf, got);
			fpl_tensor_stream_close(s);
		} else
			h_fail("stream %s: %s", path, err);
		fpl_hist_finish(&h);
		got_counts(&h, out);
		fpl_hist_release(&h);
	}
	fpl_tensor_close(tf);
}

static void test_files(void)
{
	float xf[NK];
	for (size_t i = 0; i < NK; i++)
		xf[i] = kval(i);
	const char *npy = tf_path("known.npy");
	tf_npy_f32(npy, xf, NK);
	size_t len;
	char dict[128];
	snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu,), }", NK);
	unsigned char *img = tf_npy_image(1, dict, xf, sizeof xf, &len);
	struct tf_member m[2] = { { "other.npy", img, len }, { "known.npy", img, len } };
	tf_npz(tf_path("known-stored.npz"), m, 2, 0);
	tf_npz(tf_path("known-deflated.npz"), m, 2, 1);
	char json[256];
	snprintf(json, sizeof json,
		 "{\"__metadata__\":{\"format\":\"pt\"},\"known\":{\"dtype\":\"F32\",\"shape\":[%zu],"
		 "\"data_offsets\":[0,%zu]}}", NK, sizeof xf);
	tf_safetensors(tf_path("known.safetensors"), json, xf, sizeof xf);
	for (int col = 0; col < 4; col++) {
		uint64_t a[6], b[6], c[6], d[6];
		hist_file(npy, E[col].fmt, a, "known");
		hist_file(tf_path("known-stored.npz"), E[col].fmt, b, "known");
		hist_file(tf_path("known-deflated.npz"), E[col].fmt, c, "known");
		hist_file(tf_path("known.safetensors"), E[col].fmt, d, "known");
		for (int i = 0; i < 6; i++)
			CHECK(a[i] == E[col].c[i] && b[i] == a[i] && c[i] == a[i] && d[i] == a[i], "%s class %d: npy %llu npz %llu/%llu safetensors %llu, expected %llu",
				       E[col].fmt, i, (unsigned long long)a[i],
				       (unsigned long long)b[i], (unsigned long long)c[i],
				       (unsigned long long)d[i], (unsigned long long)E[col].c[i]);
	}
	free(img);
}

/* A large stream in chunks gives the same counts as one call (f32 path). */
static void test_chunking(void)
{
	h_rng r;
	h_rng_init(&r, 7);
	size_t n = 100003;
	float *x = malloc(n * sizeof *x);
	for (size_t i = 0; i < n; i++)
		x[i] = (float)h_rng_value(&r, -40, 20, 24, 1);
	fpl_hist_config cfg;
	fpl_hist a, b;
	cfg_for(&cfg, "e5m2");
	fpl_hist_init(&a, &cfg);
	fpl_hist_init(&b, &cfg);
	fpl_hist_add_f32(&a, x, n);
	for (size_t i = 0; i < n; i += 777)
		fpl_hist_add_f32(&b, x + i, n - i < 777 ? n - i : 777);
	fpl_hist_finish(&a);
	fpl_hist_finish(&b);
	uint64_t ga[6], gb[6];
	got_counts(&a, ga);
	got_counts(&b, gb);
	CHECK(memcmp(ga, gb, sizeof ga) == 0 && a.count == n && b.count == n, "chunked counts differ");
	uint64_t sum = 0;
	for (int i = 0; i < 6; i++)
		sum += ga[i];
	CHECK(sum == n, "classes sum to %llu, not %zu", (unsigned long long)sum, n);
	CHECK(memcmp(a.hist, b.hist, sizeof a.hist) == 0, "chunked bins differ");
	/* merge of a into a fresh total doubles nothing but adds */
	fpl_hist t;
	fpl_hist_init(&t, &cfg);
	fpl_hist_merge(&t, &a);
	fpl_hist_merge(&t, &b);
	CHECK(t.count == 2 * n && t.became_zero == 2 * a.became_zero, "merge");
	fpl_hist_release(&a);
	fpl_hist_release(&b);
	fpl_hist_release(&t);
	free(x);
}

#ifdef FPL_HAVE_X86_KERNELS
/*
 * The AVX2 binary32 classification (x86/classify_avx2.c) against the
 * portable loop (classify.c) on the same v and y: counts, bins, extremes
 * and maxima bit for bit; the sums within a bound.  Both sum the relative
 * error in binary32 per block of 1024 (recursive summation of at most 1024
 * terms errs by at most 1023 * 2^-24 < 2^-14 of the sum of the terms, all
 * >= 0, on either side), so err_sum and err_sumsq may differ by 2^-13 of
 * their value; the absolute error is summed in binary64 (at most ~10^4
 * terms here: < 2^-39 each side), allowed 2^-36.
 */
/* The fast loop being compared, for the messages. */
static const char *loop_name = "avx2";

static int near_sum(double a, double b, double rel)
{
	return a == b || fabs(a - b) <= rel * fmax(fabs(a), fabs(b));
}

static void same_classify(const char *what, const fpl_hist *p, const fpl_hist *q)
{
	const char *lp = loop_name;
	const uint64_t cp[] = { p->count, p->zeros, p->nan_inf, p->became_zero, p->subnormal,
				p->normal, p->ovf_direct, p->err_n, p->abs_n };
	const uint64_t cq[] = { q->count, q->zeros, q->nan_inf, q->became_zero, q->subnormal,
				q->normal, q->ovf_direct, q->err_n, q->abs_n };
	static const char *nm[] = { "count", "zeros", "nan_inf", "became_zero", "subnormal",
				    "normal", "ovf_direct", "err_n", "abs_n" };
	for (size_t i = 0; i < sizeof cp / sizeof *cp; i++)
		if (!h_check(cp[i] == cq[i]))
			h_fail("%s %s: %s = %llu, portable %llu", lp, what, nm[i],
			       (unsigned long long)cq[i], (unsigned long long)cp[i]);
	CHECK(h_same(p->err_max, q->err_max), "%s %s: err_max %a, portable %a", lp, what,
	      q->err_max, p->err_max);
	CHECK(h_same(p->abs_max, q->abs_max), "%s %s: abs_max %a, portable %a", lp, what,
	      q->abs_max, p->abs_max);
	CHECK(h_same(p->amax, q->amax) && h_same(p->amin, q->amin),
	      "%s %s: amax/amin %a %a, portable %a %a", lp, what, q->amax, q->amin, p->amax, p->amin);
	CHECK(memcmp(p->hist, q->hist, sizeof p->hist) == 0, "%s %s: exponent bins differ", lp, what);
	CHECK(memcmp(p->hist_in, q->hist_in, sizeof p->hist_in) == 0,
	      "%s %s: input exponent bins differ", lp, what);
	CHECK(near_sum(p->err_sum, q->err_sum, 0x1p-13) &&
		      near_sum(p->err_sumsq, q->err_sumsq, 0x1p-13),
	      "%s %s: err_sum %a sumsq %a, portable %a %a", lp, what, q->err_sum, q->err_sumsq,
	      p->err_sum, p->err_sumsq);
	CHECK(near_sum(p->abs_sum, q->abs_sum, 0x1p-36) &&
		      near_sum(p->abs_sumsq, q->abs_sumsq, 0x1p-36),
	      "%s %s: abs_sum %a sumsq %a, portable %a %a", lp, what, q->abs_sum, q->abs_sumsq,
	      p->abs_sum, p->abs_sumsq);
}

/* One random binary32 of the mix: the special table, binary32 subnormals
 * and extremes, values around the formats' thresholds, and wide random. */
static float mixed_value(h_rng *r)
{
	static const uint32_t edge[] = { 0x00000001u, 0x00000003u, 0x007fffffu, 0x00800000u,
					 0x80400000u, 0x7f7fffffu, 0xff7fffffu, 0x7f800001u,
					 0xffc00000u, 0x47800000u, 0x477ff000u, 0x43f00000u,
					 0x37000000u, 0x33000001u, 0x3b000000u, 0x7f000000u };
	uint64_t c = h_rng_below(r, 16);
	uint32_t b;
	float f;
	if (c == 0)
		return kval((size_t)h_rng_below(r, NK));
	if (c == 1) {
		b = edge[h_rng_below(r, sizeof edge / sizeof *edge)];
		memcpy(&f, &b, 4);
		return f;
	}
	if (c == 2) {	/* any bit pattern */
		b = (uint32_t)h_rng_next(r);
		memcpy(&f, &b, 4);
		return f;
	}
	if (c < 6)	/* binary32 subnormals and small normals */
		return (float)h_rng_value(r, -149, -120, 24, 0);
	return (float)h_rng_value(r, -30, 20, 24, 1);
}

typedef void (*classify_fn)(fpl_hist *h, const float *v, const float *y, size_t n);

/* The AVX-512 loop fused with the scaling and the cast, as hist.c calls
 * it: from the unscaled x that v (in cmp_classify's arrays cur_v, cur_x)
 * was scaled from (x * 2^k rounds like ldexpf); y is cast again from h's
 * state, which draws nothing in the modes compared. */
static const float *cur_v, *cur_x;

static void round_classify_avx512(fpl_hist *h, const float *v, const float *y, size_t n)
{
	(void)y;
	if (hist_add_f32_avx512(h, cur_x + (v - cur_v), n))
		h_fail("avx512 fused: cast failed");
}

static int has_avx512(void)
{
	const fpl_cpu_features *c = fpl_cpu();
	return c->avx512f && c->avx512bw && c->avx512dq && c->avx512vl && c->fma;
}

/* fn (name nm) against the portable loop on the mix of every format, mode
 * and scale below. */
static void cmp_classify(const char *nm, classify_fn fn, uint64_t seed)
{
	loop_name = nm;
	static const char *fmts[] = { "fp16", "bf16", "e5m2", "e4m3fn" };
	static const fpl_rnd modes[] = { FPL_RND_NE, FPL_RND_TP, FPL_RND_TZ };
	static const size_t lens[] = { 0, 1, 7, 8, 9, 31, 32, 33, 255, 1023, 1024, 1025, 4099 };
	static const int ks[] = { 0, 3, -5 };
	size_t nmax = 4099;
	float *x = malloc(nmax * sizeof *x), *v = malloc(nmax * sizeof *v);
	float *y = malloc(nmax * sizeof *y);
	h_rng r;
	h_rng_init(&r, seed);
	char what[96];
	cur_v = v;
	cur_x = x;
	for (size_t fi = 0; fi < sizeof fmts / sizeof *fmts; fi++)
		for (size_t mi = 0; mi < sizeof modes / sizeof *modes; mi++)
			for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++)
				for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
					size_t n = lens[li];
					int k = ks[ki];
					fpl_hist_config cfg;
					cfg_for(&cfg, fmts[fi]);
					cfg.rnd = modes[mi];
					for (size_t i = 0; i < n; i++) {
						x[i] = mixed_value(&r);
						v[i] = ldexpf(x[i], k);
					}
					if (fpl_round_array_f32(&cfg.fmt, y, v, n, cfg.rnd, &cfg.st)) {
						h_fail("round_array_f32 %s failed", fmts[fi]);
						continue;
					}
					fpl_hist p, q;
					fpl_hist_init(&p, &cfg);
					fpl_hist_init(&q, &cfg);
					p.scale_log2 = q.scale_log2 = k;
					/* two calls each, split unevenly: the second starts
					 * from the first's err_max, abs_max and extremes */
					size_t a = n / 3;
					hist_classify_f32(&p, v, y, a);
					hist_classify_f32(&p, v + a, y + a, n - a);
					/* (the fused loop casts again, from q's
					 * state: the modes here draw nothing) */
					fn(&q, v, y, a);
					fn(&q, v + a, y + a, n - a);
					snprintf(what, sizeof what, "%s %s k=%d n=%zu", fmts[fi],
						 fpl_rnd_name(modes[mi]), k, n);
					same_classify(what, &p, &q);
					/* the extremes from x itself (|v| = |x| 2^k exactly
					 * unless v is a binary32 subnormal) */
					float emx = 0, emn = INFINITY;
					for (size_t i = 0; i < n; i++) {
						float av = fabsf(v[i]);
						if (av > 0 && isfinite(av)) {
							emx = av > emx ? av : emx;
							emn = av < emn ? av : emn;
						}
					}
					if (emx > 0)
						CHECK(p.amax == ldexp(emx, -k) && p.amin == ldexp(emn, -k),
						      "%s: amax/amin %a %a, expected %a %a", what, p.amax,
						      p.amin, ldexp(emx, -k), ldexp(emn, -k));
					fpl_hist_release(&p);
					fpl_hist_release(&q);
				}
	free(x);
	free(v);
	free(y);
}

static void test_avx2_classify(void)
{
	const fpl_cpu_features *cpu = fpl_cpu();
	if (!cpu->avx2 || !cpu->fma) {
		h_note("skip AVX2 classification: this CPU lacks avx2");
		return;
	}
	cmp_classify("avx2", hist_classify_f32_avx2, 14);
}

/* The AVX-512 loop (x86/classify_avx512.c) the same way, alone and fused
 * with the cast; then on data whose blocks span more binades than its
 * compare-counted window (48), and all in one binade. */
static void test_avx512_classify(void)
{
	if (!has_avx512()) {
		h_note("skip AVX-512 classification: this CPU lacks avx512f/bw/dq/vl");
		return;
	}
	cmp_classify("avx512", hist_classify_f32_avx512, 16);
	cmp_classify("avx512 fused", round_classify_avx512, 17);
	loop_name = "avx512";
	size_t n = 5000;
	float *v = malloc(n * sizeof *v), *y = malloc(n * sizeof *y);
	h_rng r;
	h_rng_init(&r, 18);
	/* 3, 4: blocks of 1024 without NaN/inf in v or y (the fast pass)
	 * beside blocks with one (done again by the full pass): a NaN, an
	 * infinity or a value that overflows e5m2 in a few blocks only, with
	 * zeros and binary32 subnormals (4: many) */
	static const uint32_t rare[] = { 0x7fc00000u, 0xff800000u, 0x7f800000u, 0x48000000u,
					 0xc7800000u, 0x00000001u, 0x80000000u, 0x00000000u };
	for (int wide = 0; wide < 5; wide++) {
		for (size_t i = 0; i < n; i++) {
			v[i] = wide == 2   ? (float)h_rng_value(&r, 3, 3, 24, 0)
			       : wide == 1 ? (float)h_rng_value(&r, -100, 100, 24, 0)
			       : wide >= 3 ? (float)h_rng_value(&r, -12, 2, 24, wide == 4)
					   : (float)h_rng_value(&r, -20, 20, 24, 0);
			uint32_t b = rare[(i / 7) % (sizeof rare / sizeof *rare)];
			if (wide == 3 && (i == 1000 || i == 2500 || i == 4100))
				b = i == 1000 ? 0x7fc00000u : i == 2500 ? 0x48000000u : 0xff800000u;
			if ((wide == 3 && (i == 1000 || i == 2500 || i == 4100)) ||
			    (wide == 4 && i % 7 == 3))
				memcpy(&v[i], &b, 4);
			if (wide == 3 && (i == 300 || i == 4500))
				v[i] = i == 300 ? -0.0f : 0x1p-140f;
			if (wide == 4 && i % 11 == 5)
				v[i] = ldexpf(v[i], -130);	/* binary32 subnormal */
		}
		fpl_hist_config cfg;
		cfg_for(&cfg, "e5m2");
		fpl_round_array_f32(&cfg.fmt, y, v, n, cfg.rnd, &cfg.st);
		fpl_hist p, q;
		fpl_hist_init(&p, &cfg);
		fpl_hist_init(&q, &cfg);
		hist_classify_f32(&p, v, y, n);
		hist_classify_f32_avx512(&q, v, y, n);
		same_classify(wide == 2   ? "one binade"
			      : wide == 1 ? "200 binades"
			      : wide == 3 ? "rare specials"
			      : wide == 4 ? "many specials"
					  : "40 binades",
			      &p, &q);
		if (wide >= 3) {
			/* the specials counted (a test that the blocks differ) */
			CHECK(q.nan_inf > 0 && q.ovf_direct > 0 && q.zeros > 0,
			      "avx512 %d: nan_inf %llu ovf %llu zeros %llu", wide,
			      (unsigned long long)q.nan_inf, (unsigned long long)q.ovf_direct,
			      (unsigned long long)q.zeros);
			fpl_hist_release(&p);
			fpl_hist_release(&q);
			continue;
		}
		/* the bins by hand: every v here is a binary32 normal */
		uint64_t bins[FPL_HIST_NBINS] = { 0 };
		for (size_t i = 0; i < n; i++)
			bins[ilogbf(v[i]) - FPL_HIST_EMIN]++;
		CHECK(memcmp(bins, q.hist, sizeof bins) == 0, "avx512 bins %d: not by hand", wide);
		fpl_hist_release(&p);
		fpl_hist_release(&q);
	}
	free(v);
	free(y);
	loop_name = "avx2";
}

/* The public path: FPLAB_KERNELS=ref's portable loop against the other
 * kernel sets (avx2, and avx512 where the CPU runs it) on a long tensor
 * with APS scaling (k != 0). */
static void public_set(const char *dflt);

static void test_avx2_public(void)
{
	const fpl_cpu_features *cpu = fpl_cpu();
	if (!cpu->avx2 || !cpu->fma)
		return;
	const char *dflt = fpl_kernels_selected();
	if (!strcmp(dflt, "ref"))
		return;
	char keep[16];
	snprintf(keep, sizeof keep, "%s", dflt);
	public_set("avx2");
	if (has_avx512())
		public_set("avx512");
	fpl_kernels_select(keep);
}

static void public_set(const char *dflt)
{
	loop_name = dflt;
	h_rng r;
	h_rng_init(&r, 15);
	size_t n = 50001;
	float *x = malloc(n * sizeof *x);
	for (size_t i = 0; i < n; i++)
		x[i] = (float)h_rng_value(&r, -40, 6, 24, 1);
	fpl_hist_config cfg;
	cfg_for(&cfg, "e4m3fn");
	cfg.scaling = FPL_HSCALE_APS;
	fpl_hist h[2];
	for (int w = 0; w < 2; w++) {
		if (w == 0 && fpl_kernels_select("ref")) {
			h_fail("cannot select the ref kernels");
			break;
		}
		if (w == 1)
			fpl_kernels_select(dflt);
		fpl_hist_init(&h[w], &cfg);
		fpl_hist_scan_f32(&h[w], x, n);
		fpl_hist_add_f32(&h[w], x, n);
		fpl_hist_finish(&h[w]);
	}
	CHECK(h[0].scale_log2 != 0, "APS scale 2^%d", h[0].scale_log2);
	same_classify("public e4m3fn aps", &h[0], &h[1]);
	CHECK(h[0].overflow == h[1].overflow && h[0].best_k == h[1].best_k, "public: finish differs");
	fpl_hist_release(&h[0]);
	fpl_hist_release(&h[1]);
	/* unscaled N(0, 1) data, subnormal-heavy in fp6/fp4 (the binary32
	 * rounding kernels' branch-free spans), every mode: the same counts
	 * and events under both kernel sets */
	static const char *const fm[] = { "e4m3fn", "e4m3fnuz", "e2m1", "e3m2" };
	for (size_t i = 0; i < n; i++) {
		double u1 = ((double)(h_rng_next(&r) >> 11) + 0.5) * 0x1p-53;
		double u2 = (double)(h_rng_next(&r) >> 11) * 0x1p-53;
		x[i] = (float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
	}
	for (size_t fi = 0; fi < sizeof fm / sizeof *fm; fi++)
		for (int rm = 0; rm < FPL_RND_COUNT; rm++) {
			char what[64];
			cfg_for(&cfg, fm[fi]);
			cfg.rnd = (fpl_rnd)rm;
			for (int w = 0; w < 2; w++) {
				fpl_kernels_select(w ? dflt : "ref");
				fpl_hist_init(&h[w], &cfg);
				fpl_hist_add_f32(&h[w], x, n);
				fpl_hist_finish(&h[w]);
			}
			snprintf(what, sizeof what, "public %s %s N(0,1)", fm[fi],
				 fpl_rnd_name((fpl_rnd)rm));
			same_classify(what, &h[0], &h[1]);
			CHECK(memcmp(h[0].events, h[1].events, sizeof h[0].events) == 0,
			      "%s: events differ", what);
			fpl_hist_release(&h[0]);
			fpl_hist_release(&h[1]);
		}
	fpl_kernels_select(dflt);
	free(x);
}

/*
 * fpl_hist_add_f32 under every kernel set against FPLAB_KERNELS=ref (the
 * scalar engine's casts and the portable loop, hist.c's reference path):
 * 18 formats (fp8 OCP, fnuz, fp6, fp4, fp16, bf16 with and without
 * subnormals, tf32, e3m4, e4m3b11fnuz, a saturating e5m2, tininess before
 * rounding, CPFloat's E4M3 with its max below the binade's top, DAZ, FTZ),
 * every mode, 2^16 values each (18 * 9 * 2^16 > 10^7 in all): the counts, bins, extremes, maxima and events equal, the sums
 * within same_classify's bounds.  The values, by block of 2048 (the
 * AVX-512 loop's), cycle through gradient-like data (log-normal
 * magnitudes 2^-40..2^10, the bench's), N(0, 1), values next to the
 * format's thresholds (max and the overflow boundary, the least normal
 * and subnormal and the half of the latter, in binary32 ulps), the mix
 * with NaN, infinities, zeros and binary32 subnormals, and gradient-like
 * data with one NaN (the AVX-512 cast's fallback block).  Every third
 * mode takes APS scaling (k != 0); the tensor goes in three calls.
 */
static float near_value(h_rng *r, const fpl_format *f)
{
	const double th[] = { f->max,
			      f->max * (1 + ldexp(1, -f->m - 1)),
			      f->min_normal,
			      f->min_normal * (1 - ldexp(1, -f->m - 2)),
			      f->min_subnormal,
			      f->min_subnormal / 2,
			      f->min_subnormal * 1.5,
			      1.0 + ldexp(1, -f->m - 1) };
	float v = (float)th[h_rng_below(r, sizeof th / sizeof *th)];
	int d = (int)h_rng_below(r, 7) - 3;
	uint32_t b;
	memcpy(&b, &v, 4);
	b += (uint32_t)d;
	memcpy(&v, &b, 4);
	return h_rng_below(r, 2) ? -v : v;
}

static float gauss_value(h_rng *r)
{
	double u1 = ((double)(h_rng_next(r) >> 11) + 0.5) * 0x1p-53;
	double u2 = (double)(h_rng_next(r) >> 11) * 0x1p-53;
	return (float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
}

static void fill_fused(float *x, size_t n, h_rng *r, const fpl_format *f)
{
	for (size_t i = 0; i < n; i++) {
		size_t b = i / 2048;
		switch (b % 5) {
		case 0:
		case 4:
			x[i] = (float)(exp2(8.0 * gauss_value(r) - 15)) * (h_rng_below(r, 2) ? -1 : 1);
			break;
		case 1:
			x[i] = gauss_value(r);
			break;
		case 2:
			x[i] = near_value(r, f);
			break;
		default:
			x[i] = mixed_value(r);
			break;
		}
		if (b % 5 == 4 && i % 2048 == 777)
			x[i] = NAN;
	}
}

static void test_fused_public(void)
{
	const fpl_cpu_features *cpu = fpl_cpu();
	const char *dflt = fpl_kernels_selected();
	if (!cpu->avx2 || !cpu->fma || !strcmp(dflt, "ref"))
		return;
	char keep[16];
	snprintf(keep, sizeof keep, "%s", dflt);
	const char *sets[2] = { "avx2", has_avx512() ? "avx512" : NULL };
	static const char *const names[] = { "e4m3fn", "e5m2",	    "e4m3fnuz", "e5m2fnuz",
					     "e3m2",   "e2m3",	    "e2m1",	"fp16",
					     "bf16",   "bf16+sub",  "e3m4",	"e4m3b11fnuz",
					     "e5m2sat", "e4m3fn-before", "p4:-6:8", "tf32",
					     "e5m2daz", "e4m3fn-ftz" };
	const size_t n = 1u << 16;
	float *x = malloc(n * sizeof *x);
	h_rng r;
	h_rng_init(&r, 19);
	for (size_t fi = 0; fi < sizeof names / sizeof *names; fi++) {
		fpl_format f;
		const char *base = !strcmp(names[fi], "bf16+sub")	 ? "bf16"
				   : !strcmp(names[fi], "e5m2sat")	 ? "e5m2"
				   : !strcmp(names[fi], "e5m2daz")	 ? "e5m2"
				   : !strcmp(names[fi], "e4m3fn-ftz")	 ? "e4m3fn"
				   : !strcmp(names[fi], "e4m3fn-before") ? "e4m3fn"
									 : names[fi];
		if (!strcmp(names[fi], "p4:-6:8")) {
			/* CPFloat's E4M3 preset: max 480 below its binade's top */
			if (fpl_format_params(&f, 4, -6, 8)) {
				h_fail("fpl_format_params(4, -6, 8)");
				continue;
			}
		} else if (fpl_format_lookup(&f, base)) {
			h_fail("format %s not found", base);
			continue;
		}
		if (!strcmp(names[fi], "bf16+sub"))
			f.subnormal = FPL_SUB_YES;
		if (!strcmp(names[fi], "e5m2sat"))
			f.overflow = FPL_OVF_SATURATE;
		if (!strcmp(names[fi], "e5m2daz"))
			f.daz = 1;
		if (!strcmp(names[fi], "e4m3fn-ftz"))
			f.subnormal = FPL_SUB_FTZ;
		if (!strcmp(names[fi], "e4m3fn-before"))
			f.tininess = FPL_TINY_BEFORE;
		if (fpl_format_finish(&f)) {
			h_fail("format %s", names[fi]);
			continue;
		}
		for (int rm = 0; rm < FPL_RND_COUNT; rm++) {
			fill_fused(x, n, &r, &f);
			fpl_hist_config cfg;
			fpl_hist_config_init(&cfg, &f);
			cfg.rnd = (fpl_rnd)rm;
			cfg.st.seed = 1234 + (uint64_t)rm;
			if (rm % 3 == 1)
				cfg.scaling = FPL_HSCALE_APS;
			fpl_hist ref;
			for (int w = -1; w < 2; w++) {
				if (w >= 0 && !sets[w])
					continue;
				if (fpl_kernels_select(w < 0 ? "ref" : sets[w])) {
					h_fail("cannot select kernels %s", w < 0 ? "ref" : sets[w]);
					continue;
				}
				fpl_hist hh, *h = w < 0 ? &ref : &hh;
				fpl_hist_init(h, &cfg);
				if (fpl_hist_needs_scan(h))
					fpl_hist_scan_f32(h, x, n);
				size_t a = n / 3 + 5, b = 2 * n / 3 + 1000;
				CHECK(fpl_hist_add_f32(h, x, a) == 0 && fpl_hist_add_f32(h, x + a, b - a) == 0 &&
					      fpl_hist_add_f32(h, x + b, n - b) == 0,
				      "fused %s: add failed", names[fi]);
				fpl_hist_finish(h);
				if (w < 0)
					continue;
				char what[96];
				snprintf(what, sizeof what, "%s %s %s k=%d", sets[w], names[fi],
					 fpl_rnd_name((fpl_rnd)rm), h->scale_log2);
				loop_name = sets[w];
				same_classify(what, &ref, h);
				CHECK(memcmp(ref.events, h->events, sizeof ref.events) == 0 &&
					      ref.overflow == h->overflow && ref.normal == h->normal,
				      "%s: events or overflow differ (inexact %llu/%llu underflow "
				      "%llu/%llu overflow %llu/%llu)",
				      what, (unsigned long long)h->events[0],
				      (unsigned long long)ref.events[0], (unsigned long long)h->events[1],
				      (unsigned long long)ref.events[1], (unsigned long long)h->events[2],
				      (unsigned long long)ref.events[2]);
				CHECK(h->scale_log2 == ref.scale_log2, "%s: scale differs", what);
				fpl_hist_release(h);
			}
			fpl_hist_release(&ref);
		}
	}
	loop_name = "avx2";
	fpl_kernels_select(keep);
	free(x);
}
#else
static void test_fused_public(void)
{
}

static void test_avx2_classify(void)
{
	h_note("skip AVX2 classification: not compiled in (NATIVE=0)");
}

static void test_avx2_public(void)
{
}

static void test_avx512_classify(void)
{
}
#endif

int main(void)
{
	h_init("thist");
	test_known();
	test_errors();
	test_aps();
	test_mx();
	test_number_scale();
	test_events_fp16();
	test_flushed();
	test_extreme_scale();
	test_exact_abs();
	test_files();
	test_chunking();
	test_avx2_classify();
	test_avx512_classify();
	test_avx2_public();
	test_fused_public();
	return h_done();
}

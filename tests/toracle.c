/* SPDX-License-Identifier: MIT */
/*
 * tests/toracle.c - hand-derived cases, checked against both the MPFR
 * oracle (so the oracle itself is tested: a wrong oracle would make every
 * other test wrong the same way as a wrong engine) and the engine.
 * Every expected value below was worked out by hand from
 * src/engine/SEMANTICS.md; the comment on each line says why.
 */
#include <math.h>
#include <stdio.h>

#include "harness.h"
#include "oracle.h"

#define I FPL_FLAG_INEXACT
#define U FPL_FLAG_UNDERFLOW
#define O FPL_FLAG_OVERFLOW
#define Z FPL_FLAG_DIVBYZERO
#define V FPL_FLAG_INVALID
#define S FPL_FLAG_SATURATED
#define F FPL_FLAG_FLUSHED

#define PNAN_FN 0x7ffe000000000000ull	/* e4m3fn NaN, sign 0 */
#define DNAN 0xfff8000000000000ull	/* default NaN: sign 1, quiet bit */
#define QNAN 0x7ff8000000000000ull

struct hcase {
	const char *fmt;
	int sw;		/* 1: tininess before; 2: ftz; 4: daz; 8: saturate */
	oracle_op op;
	fpl_rnd rnd;
	double a, b, c;
	double want;
	uint64_t want_bits;	/* used when nonzero (NaNs) */
	unsigned fl;
	const char *why;
};

#define NE FPL_RND_NE
#define NA FPL_RND_NA
#define NZ FPL_RND_NZ
#define TP FPL_RND_TP
#define TN FPL_RND_TN
#define TZ FPL_RND_TZ
#define OD FPL_RND_OD

static const struct hcase cases[] = {
	{ "e4m3fn", 0, OR_ROUND, NE, 464, 0, 0, 448, 0, I, "tie 448|480: 448 has even significand 1.110" },
	{ "e4m3fn", 0, OR_ROUND, NE, 465, 0, 0, 0, PNAN_FN, O | I, "rounds to 480 > max 448: overflow, NaN" },
	{ "e4m3fn", 0, OR_ROUND, TZ, 1e300, 0, 0, 448, 0, O | I, "tz overflow gives max" },
	{ "e4m3fn", 0, OR_ROUND, TP, -1e300, 0, 0, -448, 0, O | I, "tp, negative overflow: -max" },
	{ "e4m3fn", 8, OR_ROUND, NE, 1e300, 0, 0, 448, 0, O | I | S, "saturating" },
	{ "e4m3fn", 0, OR_ROUND, NE, 0x1p-10, 0, 0, 0, 0, U | I, "half the smallest subnormal: tie to 0" },
	{ "e4m3fn", 0, OR_ROUND, NA, 0x1p-10, 0, 0, 0x1p-9, 0, U | I, "ties away" },
	{ "e4m3fn", 0, OR_ROUND, NE, -0x1.8p-10, 0, 0, -0x1p-9, 0, U | I, "0.75 of min subnormal" },
	{ "e4m3fn", 0, OR_ROUND, TP, -0x1p-12, 0, 0, -0.0, 0, U | I, "tiny negative up: -0" },
	{ "e4m3fn", 2, OR_ROUND, NE, 0x1p-8, 0, 0, 0, 0, U | I | F, "ftz: exact subnormal flushed" },
	{ "e4m3fn", 0, OR_DIV, NE, 1, 0, 0, 0, PNAN_FN, Z | V, "1/0 in fn: inf has no code" },
	{ "fp16", 0, OR_ROUND, NE, 65520, 0, 0, INFINITY, 0, O | I, "65520 ties to 65536 (even): inf" },
	{ "fp16", 0, OR_ROUND, NE, 0x1.ffdfffp15, 0, 0, 65504, 0, I, "just below the tie" },
	{ "fp16", 0, OR_ROUND, NE, 0x1p-25, 0, 0, 0, 0, U | I, "half min subnormal ties to 0" },
	{ "fp16", 0, OR_ROUND, NE, 0x1.000001p-25, 0, 0, 0x1p-24, 0, U | I, "above half" },
	{ "fp16", 0, OR_ROUND, NE, 0x1.002p0, 0, 0, 1, 0, I, "1+2^-11 tie to even" },
	{ "fp16", 0, OR_ROUND, NA, 0x1.002p0, 0, 0, 0x1.004p0, 0, I, "ties away" },
	{ "fp16", 0, OR_ROUND, NZ, 0x1.002p0, 0, 0, 1, 0, I, "ties to zero" },
	{ "fp16", 0, OR_ROUND, OD, 0x1.002p0, 0, 0, 0x1.004p0, 0, I, "odd: trunc 1 is even" },
	{ "fp16", 0, OR_ROUND, OD, 0x1.006p0, 0, 0, 0x1.004p0, 0, I, "odd: trunc is odd" },
	{ "fp16", 0, OR_ROUND, TP, -0x1.002p0, 0, 0, -1, 0, I, "tp negative" },
	{ "fp16", 0, OR_ROUND, TN, -0x1.002p0, 0, 0, -0x1.004p0, 0, I, "tn negative" },
	{ "fp16", 0, OR_ROUND, NE, 0x1.ffep-15, 0, 0, 0x1p-14, 0, I, "rounds up to 2^emin: not tiny after" },
	{ "fp16", 1, OR_ROUND, NE, 0x1.ffep-15, 0, 0, 0x1p-14, 0, U | I, "tiny before rounding" },
	{ "fp16", 0, OR_ADD, NE, 1, -1, 0, 0, 0, 0, "x + (-x) = +0" },
	{ "fp16", 0, OR_ADD, TN, 1, -1, 0, -0.0, 0, 0, "x + (-x) = -0 in tn" },
	{ "fp16", 0, OR_ADD, NE, -0.0, -0.0, 0, -0.0, 0, 0, "(-0) + (-0) = -0" },
	{ "fp16", 0, OR_SUB, NE, 0.0, 0.0, 0, 0.0, 0, 0, "0 - 0 = +0" },
	{ "fp16", 0, OR_SQRT, NE, -0.0, 0, 0, -0.0, 0, 0, "sqrt(-0) = -0" },
	{ "fp16", 0, OR_SQRT, NE, -1, 0, 0, 0, DNAN, V, "sqrt(-1): default NaN" },
	{ "fp16", 0, OR_MUL, NE, 0, INFINITY, 0, 0, DNAN, V, "0 * inf" },
	{ "fp16", 0, OR_DIV, NE, -1, 0, 0, -INFINITY, 0, Z, "-1/0" },
	{ "fp16", 0, OR_FMA, NE, 1, 1, -1, 0, 0, 0, "fma exact zero: +0" },
	{ "fp16", 0, OR_FMA, TN, 0, -1, 0, -0.0, 0, 0, "fma: (+0*-1) + 0 = -0 + +0 in tn" },
	{ "fp16", 0, OR_FMA, NE, 0x1.004p0, 0x1.004p0, -1, 0x1p-9, 0, I,
	  "fma: (1+2^-10)^2 - 1 = 2^-9 (1 + 2^-11), a tie: even" },
	{ "fp16", 0, OR_FMA, OD, 0x1.004p0, 0x1.004p0, -1, 0x1.004p-9, 0, I,
	  "fma od: the same tie, trunc even: odd neighbour" },
	{ "fp16", 0, OR_FMA, NE, 0x1.004p0, 0x1.004p0, -0x1.ffcp-1, 0x1.4p-9, 0, I,
	  "fma: exact 2561 * 2^-20 = 1.0100000000|1 * 2^-9, a tie: even" },
	{ "e5m2", 0, OR_ROUND, NE, 61440, 0, 0, INFINITY, 0, O | I, "tie 57344|65536: even is 2^16, overflow" },
	{ "e5m2", 8, OR_ROUND, NE, 61440, 0, 0, 57344, 0, O | I | S, "saturating ieee: max" },
	{ "e5m2", 4, OR_ADD, NE, 0x1p-16, 0, 0, 0, 0, 0, "daz: subnormal operand is +0" },
	{ "e2m1", 0, OR_ROUND, NE, 7, 0, 0, 6, 0, O | I | S, "7 ties to 8 > max 6: none saturates" },
	{ "e2m1", 0, OR_ROUND, NE, 5, 0, 0, 4, 0, I, "tie 4|6: 4 even" },
	{ "e2m1", 0, OR_ROUND, NE, 0.25, 0, 0, 0, 0, U | I, "tie 0|0.5 (quantum 0.5): 0" },
	{ "e2m1", 0, OR_ROUND, TP, INFINITY, 0, 0, 6, 0, S, "inf input in a none format: max" },
	{ "e8m0", 0, OR_ROUND, NE, 3, 0, 0, 4, 0, I, "precision 1: a tie goes to the larger (MPFR)" },
	{ "e8m0", 0, OR_ROUND, NE, 0, 0, 0, 0, QNAN, V, "no zero in e8m0" },
	{ "e8m0", 0, OR_ROUND, NE, -2, 0, 0, 0, QNAN, V, "unsigned" },
	{ "e8m0", 0, OR_ROUND, NE, 0x1p-130, 0, 0, 0x1p-127, 0, U | I, "below the smallest scale" },
	{ "e8m0", 0, OR_ROUND, NE, 0x1p200, 0, 0, 0, QNAN, O | I, "overflow: NaN" },
	{ "e4m3fnuz", 0, OR_ROUND, NE, -0.0, 0, 0, 0.0, 0, 0, "fnuz has no -0" },
	{ "e4m3fnuz", 0, OR_SUB, TN, 1, 1, 0, 0.0, 0, 0, "fnuz: tn zero sum is +0" },
	{ "e4m3fnuz", 0, OR_SQRT, NE, -1, 0, 0, 0, QNAN, V, "fnuz default NaN is +NaN" },
	{ "fp32", 0, OR_ROUND, NE, 0x1.fffffefffffffp127, 0, 0, 0x1.fffffep127, 0, I, "below the fp32 overflow tie" },
	{ "fp32", 0, OR_ROUND, NE, 0x1.ffffffp127, 0, 0, INFINITY, 0, O | I, "fp32 overflow tie goes up" },
	{ "bf16", 0, OR_ROUND, NE, 0x1.018p0, 0, 0, 0x1.02p0, 0, I, "bf16 tie 1.0000001|1.0000010: even up" },
	{ "fp16", 0, OR_ROUND, NE, -(double)NAN, 0, 0, 0, DNAN, 0, "-qNaN keeps sign and quiet bit" },
};

static double nan_with(uint64_t b)
{
	return h_from_bits(b);
}

/* oracle_eval_modes (shared MPFR work) equals one oracle_eval per mode. */
static void cross_check_modes(void)
{
	static const char *fmts[] = { "fp16", "e4m3fn", "e5m2", "e2m1", "e8m0", "bf16", "e4m3fnuz" };
	static const fpl_rnd all[9] = { FPL_RND_NE, FPL_RND_NA, FPL_RND_NZ, FPL_RND_TP, FPL_RND_TN,
					 FPL_RND_TZ, FPL_RND_SP, FPL_RND_SE, FPL_RND_OD };
	h_rng r;
	int i, k;

	h_rng_init(&r, 99);
	for (i = 0; i < 200000; i++) {
		fpl_format f;
		oracle_fmt o;
		oracle_res many[9], one;
		double x[3];
		oracle_op op = (oracle_op)h_rng_below(&r, 7);
		uint64_t draw = h_rng_next(&r);
		fpl_format_lookup(&f, fmts[h_rng_below(&r, 7)]);
		f.subnormal = (fpl_subnormal)h_rng_below(&r, 3);
		f.tininess = (fpl_tininess)h_rng_below(&r, 2);
		f.daz = (int)h_rng_below(&r, 2);
		fpl_format_finish(&f);
		oracle_fmt_init(&o, &f);
		for (k = 0; k < 3; k++)
			x[k] = h_rng_value(&r, o.emin - o.m - 3, o.emax + 1, (int)h_rng_below(&r, 12) + 1, 1);
		oracle_eval_modes(&o, op, x, all, 9, draw, 32, many);
		for (k = 0; k < 9; k++) {
			oracle_eval(&o, op, x, all[k], draw, 32, &one);
			if (!h_check(h_same(one.value, many[k].value) && one.flags == many[k].flags &&
				     h_same(one.lo, many[k].lo) && h_same(one.hi, many[k].hi) &&
				     one.T == many[k].T))
				h_fail("oracle_eval_modes differs from oracle_eval: %s op %d mode %d (%a, %a, %a): %a/%#x vs %a/%#x",
				       f.name, (int)op, (int)all[k], x[0], x[1], x[2], many[k].value,
				       many[k].flags, one.value, one.flags);
		}
	}
}

int main(void)
{
	size_t i;
	fpl_state st;

	h_init("toracle");
	fpl_state_init(&st, h_seed());
	for (i = 0; i < sizeof cases / sizeof *cases; i++) {
		const struct hcase *c = &cases[i];
		fpl_format f;
		oracle_fmt o;
		oracle_res r;
		double x[3] = { c->a, c->b, c->c }, want = c->want_bits ? nan_with(c->want_bits) : c->want;
		double got = 0;

		if (fpl_format_lookup(&f, c->fmt) != 0) {
			h_fail("case %zu: no format %s", i, c->fmt);
			continue;
		}
		if (c->sw & 1)
			f.tininess = FPL_TINY_BEFORE;
		if (c->sw & 2)
			f.subnormal = FPL_SUB_FTZ;
		if (c->sw & 4)
			f.daz = 1;
		if (c->sw & 8)
			f.overflow = FPL_OVF_SATURATE;
		fpl_format_finish(&f);
		oracle_fmt_init(&o, &f);
		oracle_eval(&o, c->op, x, c->rnd, 0, 32, &r);
		if (!h_check(h_same(r.value, want) && r.flags == c->fl)) {
			char a[80], b[80];
			printf("toracle: ORACLE WRONG on case %zu (%s): %s op %d (%a, %a, %a): hand %a {%s}, oracle %a {%s}\n",
			       i, c->why, c->fmt, (int)c->op, c->a, c->b, c->c, want,
			       h_flags(c->fl, a, sizeof a), r.value, h_flags(r.flags, b, sizeof b));
		}
		st.flags = 0;
		switch (c->op) {
		case OR_ROUND: got = fpl_round(&f, c->a, c->rnd, &st); break;
		case OR_ADD: got = fpl_add(&f, c->a, c->b, c->rnd, &st); break;
		case OR_SUB: got = fpl_sub(&f, c->a, c->b, c->rnd, &st); break;
		case OR_MUL: got = fpl_mul(&f, c->a, c->b, c->rnd, &st); break;
		case OR_DIV: got = fpl_div(&f, c->a, c->b, c->rnd, &st); break;
		case OR_SQRT: got = fpl_sqrt(&f, c->a, c->rnd, &st); break;
		case OR_FMA: got = fpl_fma(&f, c->a, c->b, c->c, c->rnd, &st); break;
		default: break;
		}
		h_expect(c->why, &f, c->rnd, c->op == OR_FMA ? 3 : 2, x, want, c->fl, got, st.flags);
	}

	/* stochastic rounding, hand-worked: fp16, x = 1 + 2^-12 is a quarter
	 * of the way from 1 to 1 + 2^-10, so T = 2^30 with R = 32 and the
	 * result rounds away iff the top 32 bits of the draw are >= 3 * 2^30 */
	{
		fpl_format f;
		oracle_fmt o;
		oracle_res r;
		double x = 0x1.004p0 - 0x1.0p-10 + 0x1p-12;	/* 1 + 2^-12 */
		uint64_t lim = 3ull << 30;
		fpl_format_lookup(&f, "fp16");
		oracle_fmt_init(&o, &f);
		oracle_eval(&o, OR_ROUND, &x, FPL_RND_SP, lim << 32, 32, &r);
		h_check(h_same(r.value, 0x1.004p0) && r.T == 1ull << 30);
		if (!h_same(r.value, 0x1.004p0) || r.T != 1ull << 30)
			h_fail("oracle sp: draw at the threshold must round away (got %a, T %llu)",
			       r.value, (unsigned long long)r.T);
		oracle_eval(&o, OR_ROUND, &x, FPL_RND_SP, (lim - 1) << 32 | 0xffffffffu, 32, &r);
		if (!h_check(h_same(r.value, 1.0)))
			h_fail("oracle sp: draw below the threshold must round toward zero (got %a)", r.value);
		oracle_eval(&o, OR_ROUND, &x, FPL_RND_SP, 3ull << 62, 2, &r);
		if (!h_check(h_same(r.value, 0x1.004p0) && r.T == 1))
			h_fail("oracle sp R=2: T must be 1 and r=3 rounds away (got %a)", r.value);
		oracle_eval(&o, OR_ROUND, &x, FPL_RND_SP, 2ull << 62, 2, &r);
		if (!h_check(h_same(r.value, 1.0)))
			h_fail("oracle sp R=2: r=2 rounds toward zero (got %a)", r.value);
		oracle_eval(&o, OR_ROUND, &x, FPL_RND_SE, 1ull << 63, 32, &r);
		if (!h_check(h_same(r.value, 0x1.004p0)))
			h_fail("oracle se: bit 63 set rounds away (got %a)", r.value);
		oracle_eval(&o, OR_ROUND, &x, FPL_RND_SE, ~0ull >> 1, 32, &r);
		if (!h_check(h_same(r.value, 1.0)))
			h_fail("oracle se: bit 63 clear rounds toward zero (got %a)", r.value);
	}
	cross_check_modes();
	oracle_thread_done();
	return h_done();
}

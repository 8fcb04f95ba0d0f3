/* SPDX-License-Identifier: MIT */
/*
 * tests/tparts.c - fpl_round_parts: a value wider than binary64, given as
 * (hi:lo + t) 2^exp, rounded once.
 *
 *  - Against MPFR: the wide values are exact results a*b + c of binary64
 *    operands (up to ~3300 significant bits, magnitudes from 2^-2148 to
 *    2^2047), computed exactly here with MPFR, truncated to 128 bits
 *    toward zero with sticky = inexact (MPFR's ternary value), and
 *    sometimes shifted right over trailing zeros (hi = 0 and unnormalized
 *    forms).  The expected result is the oracle's fma on the same
 *    operands (tests/oracle.c), which rounds the exact value: seven
 *    deterministic modes plus sp (random R) and se with the draw the
 *    engine uses, value bits and flags.  Operand kinds: anywhere (deep
 *    underflow and overflow beyond binary64 included), near a rounding
 *    boundary of the format (midpoints and representable values, +-tiny),
 *    a short value with a tail 54..200 bits below it (the 128-bit window's
 *    edge), and 106-bit products.  Formats: fp64, e11m52, fp32, tf32,
 *    bf16, fp16, e5m2, e4m3fn, e4m3fnuz, e3m2, e2m1, e8m0, CPFloat's E4M3
 *    (4,-6,8), switch variants (no-round subnormals, ftz, tininess before,
 *    saturation, daz, explim 0) and random eXmY (e 1..11, m 0..52).
 *  - Hand-derived special inputs: +-0 (sticky 0) is the oracle's +-0; a
 *    zero with sticky, exp = -10^6, -2^40 and INT64_MIN round like any
 *    value far below 2^-1075 (the oracle's 1.5 * 2^-2000: no mode, R or
 *    draw tells them apart, and T = 0 in sp); exp = 10^6, 2^40 and
 *    INT64_MAX - 200 overflow like 1.5 * 2^1500; a short significand with
 *    sticky is that value plus less than any rounding can see (the
 *    oracle's v + 2^(E-200)).
 *  - DAZ does not apply (SEMANTICS.md): daz formats are compared with the
 *    oracle of the same format without daz.
 *  - For a binary64 x (zeros and subnormals included) in any of its
 *    representations, fpl_round_parts returns exactly fpl_round's value,
 *    flags, counts and counter, in all nine modes, with soft errors on.
 *    This one compares the engine with itself, as the contract states.
 * Random cases: 40000 per format in check (10000 under AddressSanitizer),
 * 400000 in check-long; a quarter of that for the switch variants.
 */
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oracle.h"

static const fpl_rnd all_modes[9] = {
	FPL_RND_NE, FPL_RND_NA, FPL_RND_NZ, FPL_RND_TP, FPL_RND_TN, FPL_RND_TZ, FPL_RND_OD,
	FPL_RND_SP, FPL_RND_SE
};

/* The arguments of fpl_round_parts. */
struct wide {
	int neg;
	int64_t exp;
	uint64_t hi, lo;
	int sticky;
};

struct ctx {
	const fpl_format *f;	/* the format under test */
	oracle_fmt o;		/* the oracle's view, DAZ off */
	uint64_t nrand;
	uint64_t salt;
};

/* Thread-local MPFR scratch: the exact a*b + c and its 128-bit truncation. */
static _Thread_local int t_init;
static _Thread_local mpfr_t t_a, t_b, t_c, t_exact, t_trunc;
static _Thread_local mpz_t t_z, t_r;

static void scratch_init(void)
{
	if (t_init)
		return;
	mpfr_inits2(53, t_a, t_b, t_c, (mpfr_ptr)0);
	mpfr_init2(t_exact, 4400);	/* 2047 + 2148 + 106 bits hold any a*b + c */
	mpfr_init2(t_trunc, 128);
	mpz_inits(t_z, t_r, (mpz_ptr)0);
	t_init = 1;
}

static void scratch_done(void)
{
	if (!t_init)
		return;
	mpfr_clears(t_a, t_b, t_c, t_exact, t_trunc, (mpfr_ptr)0);
	mpz_clears(t_z, t_r, (mpz_ptr)0);
	t_init = 0;
	oracle_thread_done();	/* also frees MPFR's caches */
}

static int ctz128(uint64_t hi, uint64_t lo)
{
	if (lo)
		return __builtin_ctzll(lo);
	return hi ? 64 + __builtin_ctzll(hi) : 128;
}

/* Shift right by k bits (0 <= k <= the trailing zeros): same value. */
static void shift_right(struct wide *w, int k)
{
	if (k >= 64) {
		w->lo = w->hi >> (k - 64);
		w->hi = 0;
	} else if (k > 0) {
		w->lo = (w->lo >> k) | (w->hi << (64 - k));
		w->hi >>= k;
	}
	w->exp += k;
}

/*
 * The exact a*b + c (nonzero) as fpl_round_parts wants it: truncated to
 * 128 bits toward zero, sticky = inexact; then, one time in three, shifted
 * right over some of its trailing zeros.  Returns 0 when a*b + c = 0.
 */
static int exact_wide(const double x[3], struct wide *w, h_rng *r)
{
	int t, z;

	mpfr_set_d(t_a, x[0], MPFR_RNDN);
	mpfr_set_d(t_b, x[1], MPFR_RNDN);
	mpfr_set_d(t_c, x[2], MPFR_RNDN);
	if (mpfr_fma(t_exact, t_a, t_b, t_c, MPFR_RNDN) != 0)
		h_fail("tparts: a*b + c not exact in 4400 bits (%a, %a, %a)", x[0], x[1], x[2]);
	if (mpfr_zero_p(t_exact))
		return 0;
	t = mpfr_set(t_trunc, t_exact, MPFR_RNDZ);
	w->neg = mpfr_signbit(t_trunc) != 0;
	w->sticky = t != 0;
	w->exp = mpfr_get_z_2exp(t_z, t_trunc);
	mpz_abs(t_z, t_z);
	mpz_fdiv_r_2exp(t_r, t_z, 64);
	w->lo = mpz_get_ui(t_r);
	mpz_fdiv_q_2exp(t_z, t_z, 64);
	w->hi = mpz_get_ui(t_z);
	z = ctz128(w->hi, w->lo);
	if (h_rng_below(r, 3) == 0 && z > 0)
		shift_right(w, (int)h_rng_below(r, (uint64_t)z + 1));
	return 1;
}

static int clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* A value of the format (finite, nonzero), exponent anywhere in its range. */
static double format_value(const oracle_fmt *o, h_rng *r)
{
	int lo_e = o->emin - o->m, E, lsb;
	double v;

	E = lo_e + (int)h_rng_below(r, (uint64_t)(o->emax - lo_e + 1));
	lsb = (E < o->emin ? o->emin : E) - o->m;
	v = h_rng_value(r, E, E, E - lsb + 1, 0);
	if (fabs(v) > o->max)
		v = copysign(o->max, v);
	return v;
}

/* 2^e * (1 + eps) as a product a*b of binary64 values, for e down to
 * -2200 or so; eps is 0 or +-2^-k (1 <= k <= 52). */
static void power_product(h_rng *r, int e, double *a, double *b)
{
	int ea = e / 2, eb = e - ea;
	double eps = 0;
	uint64_t u = h_rng_below(r, 3);

	if (u)
		eps = ldexp(u == 1 ? 1 : -1, -1 - (int)h_rng_below(r, 52));
	*a = ldexp(1, ea);
	*b = ldexp(1 + eps, eb);
}

/* Operands a, b (nonzero) and c of one random case for format o. */
static void pick_operands(const oracle_fmt *o, h_rng *r, double x[3])
{
	int kind = (int)h_rng_below(r, 4), T, ea, E, qe, d;
	int sa = (int)h_rng_below(r, 2);

	switch (kind) {
	case 0:	/* anywhere: a*b at 2^T, c nothing, near, or far */
		if (h_rng_below(r, 8) == 0)
			T = -2140 + (int)h_rng_below(r, 2140 + 2040);
		else
			T = o->emin - o->m - 70 + (int)h_rng_below(r, (uint64_t)(o->emax - o->emin + o->m + 74));
		ea = clampi(T / 2 + (int)h_rng_below(r, 41) - 20, -1022, 1023);
		x[0] = h_rng_value(r, ea, ea, 1 + (int)h_rng_below(r, 53), 0);
		x[1] = h_rng_value(r, clampi(T - ea, -1074, 1023), clampi(T - ea, -1074, 1023),
				   1 + (int)h_rng_below(r, 53), 0);
		switch (h_rng_below(r, 3)) {
		case 0:
			x[2] = h_rng_below(r, 2) ? 0.0 : -0.0;
			break;
		case 1:	/* close to a*b: cancellation, long sums */
			E = clampi(T - 110 + (int)h_rng_below(r, 113), -1074, 1023);
			x[2] = h_rng_value(r, E, E, 1 + (int)h_rng_below(r, 53), 0);
			break;
		default:
			E = clampi(T - 400 + (int)h_rng_below(r, 801), -1074, 1023);
			x[2] = h_rng_value(r, E, E, 1 + (int)h_rng_below(r, 53), 0);
		}
		break;
	case 1:	/* v + a*b, a*b = +-(1 + eps) times a quantum, half, or far less */
		x[2] = format_value(o, r);
		E = ilogb(x[2]);
		qe = (E < o->emin ? o->emin : E) - o->m;
		switch (h_rng_below(r, 4)) {
		case 0: d = qe; break;
		case 1: case 2: d = qe - 1; break;
		default: d = qe - 2 - (int)h_rng_below(r, 140);
		}
		power_product(r, d, &x[0], &x[1]);
		break;
	case 2:	/* a short value with a tail 54..200 bits below it */
		x[2] = h_rng_value(r, o->emin - o->m - 2, o->emax + 1, 1 + (int)h_rng_below(r, 53), 0);
		d = ilogb(x[2]) - 54 - (int)h_rng_below(r, 147);
		power_product(r, d, &x[0], &x[1]);
		x[1] = h_rng_value(r, ilogb(x[1]), ilogb(x[1]), 1 + (int)h_rng_below(r, 53), 0);
		break;
	default:	/* a*b with up to 106 bits, c = 0 */
		T = o->emin - o->m - 3 + (int)h_rng_below(r, (uint64_t)(o->emax - o->emin + o->m + 6));
		ea = clampi(T / 2, -1022, 1023);
		x[0] = h_rng_value(r, ea, ea, 53, 0);
		x[1] = h_rng_value(r, clampi(T - ea, -1074, 1023), clampi(T - ea, -1074, 1023), 53, 0);
		x[2] = 0.0;
	}
	if (sa)
		x[0] = -x[0];
}

static void print_wide(const struct wide *w)
{
	h_note("  parts: negative %d, exp %lld, hi 0x%016llx, lo 0x%016llx, sticky %d", w->neg,
	       (long long)w->exp, (unsigned long long)w->hi, (unsigned long long)w->lo, w->sticky);
}

/*
 * fpl_round_parts(w) in all nine modes against the oracle's `op` on x
 * (whose exact result w stands for).  Every mode uses draw `idx`; sp uses
 * R random bits.
 */
static void check_modes(const struct ctx *c, const struct wide *w, oracle_op op, const double *x,
			int R, fpl_state *st)
{
	oracle_res res[9];
	uint64_t idx = st->counter;
	int k, nops = op == OR_FMA ? 3 : op == OR_ROUND ? 1 : 2;

	st->sr_bits = R;
	oracle_eval_modes(&c->o, op, x, all_modes, 9, fpl_random_draw(st->seed, st->stream, idx), R,
			  res);
	for (k = 0; k < 9; k++) {
		double got;

		st->counter = idx;
		st->flags = 0;
		got = fpl_round_parts(c->f, w->neg, w->exp, w->hi, w->lo, w->sticky, all_modes[k], st);
		if (!h_expect("round_parts", c->f, all_modes[k], nops, x, res[k].value, res[k].flags,
			      got, st->flags))
			print_wide(w);
		if (!h_check(st->counter == idx + 1))
			h_fail("round_parts: counter %llu after draw %llu",
			       (unsigned long long)st->counter, (unsigned long long)idx);
	}
	st->counter = idx + 1;
}

/* The hand-derived special inputs (see the top of the file). */
static void check_specials(const struct ctx *c, fpl_state *st, h_rng *r)
{
	static const int64_t far_lo[] = { -1000000, -(1ll << 40), INT64_MIN };
	static const int64_t far_hi[] = { 1000000, 1ll << 40, INT64_MAX - 200 };
	struct wide w;
	double x[3];
	int s, i, k;

	for (s = 0; s < 2; s++) {
		/* +-0 */
		memset(&w, 0, sizeof w);
		w.neg = s;
		w.exp = (int64_t)h_rng_below(r, 4000) - 2000;
		x[0] = s ? -0.0 : 0.0;
		check_modes(c, &w, OR_ROUND, x, 32, st);
		/* deep underflow: 0 + sticky, or far-off exponents */
		x[0] = s ? -0x1.8p-1000 : 0x1.8p-1000;
		x[1] = 0x1p-1000;
		w.sticky = 1;
		check_modes(c, &w, OR_MUL, x, 1 + (int)h_rng_below(r, 32), st);
		for (i = 0; i < 3; i++)
			for (k = 0; k < 4; k++) {
				w.hi = k & 1 ? h_rng_next(r) | 1ull << 63 : 0;
				w.lo = k & 2 || !w.hi ? h_rng_next(r) | 1 : 0;
				w.sticky = k == 3;
				w.exp = far_lo[i];
				check_modes(c, &w, OR_MUL, x, 1 + (int)h_rng_below(r, 32), st);
			}
		/* overflow far beyond binary64 */
		x[0] = s ? -0x1.8p750 : 0x1.8p750;
		x[1] = 0x1p750;
		for (i = 0; i < 3; i++)
			for (k = 0; k < 4; k++) {
				w.hi = k & 1 ? h_rng_next(r) : 1;
				w.lo = h_rng_next(r);
				w.sticky = k >= 2;
				w.exp = far_hi[i];
				check_modes(c, &w, OR_MUL, x, 1 + (int)h_rng_below(r, 32), st);
			}
	}
}

/* A short significand with sticky: v + something below every grid. */
static void check_short_sticky(const struct ctx *c, fpl_state *st, h_rng *r)
{
	double x[3], v = h_rng_value(r, c->o.emin - c->o.m - 3, c->o.emax + 2, 53, 0);
	uint64_t sig = (uint64_t)ldexp(fabs(frexp(v, &(int){ 0 })), 53);
	int E = ilogb(v), lz;
	struct wide w;

	/* v = sig * 2^(E - 52); as lo only, or with hi */
	memset(&w, 0, sizeof w);
	w.neg = v < 0;
	w.lo = sig;
	w.exp = E - 52;
	w.sticky = 1;
	lz = (int)h_rng_below(r, 12);
	w.lo <<= lz;
	w.exp -= lz;
	if (h_rng_below(r, 2)) {	/* the same with the bits in hi */
		w.hi = w.lo;
		w.lo = 0;
		w.exp -= 64;
	}
	x[2] = v;
	power_product(r, E - 200, &x[0], &x[1]);
	x[1] = fabs(x[1]);	/* eps may be nonzero: still far below */
	if (v < 0)
		x[0] = -fabs(x[0]);
	else
		x[0] = fabs(x[0]);
	check_modes(c, &w, OR_FMA, x, 1 + (int)h_rng_below(r, 32), st);
}

static void oracle_worker(void *arg, int k, int nth)
{
	struct ctx *c = arg;
	fpl_state st;
	h_rng r;
	uint64_t i;

	scratch_init();
	fpl_state_init(&st, h_seed() ^ c->salt);
	st.stream = (uint64_t)k;
	h_rng_init(&r, c->salt * 64 + (uint64_t)k);
	if (k == 0)
		check_specials(c, &st, &r);
	for (i = (uint64_t)k; i < c->nrand; i += (uint64_t)nth) {
		double x[3];
		struct wide w;
		int R = h_rng_below(&r, 2) ? 32 : 1 + (int)h_rng_below(&r, 32);

		pick_operands(&c->o, &r, x);
		if (exact_wide(x, &w, &r))
			check_modes(c, &w, OR_FMA, x, R, &st);
		if (i % 16 == 0)
			check_short_sticky(c, &st, &r);
	}
	scratch_done();
}

/* fpl_round_parts == fpl_round for binary64 inputs, flips on. */
static void agree_worker(void *arg, int k, int nth)
{
	struct ctx *c = arg;
	fpl_state s1, s2;
	h_rng r;
	uint64_t i;
	int j;

	fpl_state_init(&s1, h_seed() ^ c->salt);
	s1.flip = (fpl_flip)(k % 3);
	s1.flip_prob = 0.25;
	s1.sr_bits = 1 + (int)(c->salt % 32);
	s2 = s1;
	h_rng_init(&r, c->salt * 64 + 32 + (uint64_t)k);
	for (i = (uint64_t)k; i < c->nrand; i += (uint64_t)nth) {
		double x = h_rng_value(&r, c->o.emin - c->o.m - 80, c->o.emax + 3,
				       1 + (int)h_rng_below(&r, 53), 0);
		struct wide w;
		int sh;

		if (h_rng_below(&r, 50) == 0)
			x = h_rng_below(&r, 2) ? -0.0 : 0.0;
		memset(&w, 0, sizeof w);
		w.neg = signbit(x) != 0;
		if (x != 0) {
			int e;
			double fr = frexp(fabs(x), &e);

			w.lo = (uint64_t)ldexp(fr, 53);		/* |x| = lo * 2^(e - 53) */
			w.exp = e - 53;
			sh = (int)h_rng_below(&r, 76);		/* anywhere in the 128 bits */
			if (sh >= 64 - 53 && sh < 64) {
				w.hi = w.lo >> (64 - sh);
				w.lo <<= sh;
			} else if (sh >= 64) {
				w.hi = w.lo << (sh - 64);
				w.lo = 0;
			} else {
				w.lo <<= sh;
			}
			w.exp -= sh;
		} else {
			w.exp = (int64_t)h_rng_below(&r, 200) - 100;
		}
		for (j = 0; j < 9; j++) {
			double a = fpl_round(c->f, x, all_modes[j], &s1);
			double b = fpl_round_parts(c->f, w.neg, w.exp, w.hi, w.lo, 0, all_modes[j], &s2);

			if (!h_expect("round_parts vs fpl_round", c->f, all_modes[j], 1, &x, a, s1.flags,
				      b, s2.flags))
				print_wide(&w);
			s1.flags = s2.flags = 0;
		}
	}
	if (!h_check(s1.counter == s2.counter && !memcmp(s1.count, s2.count, sizeof s1.count)))
		h_fail("round_parts vs fpl_round: %s: counters or flag counts differ", c->f->name);
}

static void run_format(const fpl_format *f, uint64_t nrand)
{
	static uint64_t salt;
	unsigned long long before = h_failures();
	fpl_format nodaz = *f;
	struct ctx c;
	char desc[200];

	memset(&c, 0, sizeof c);
	c.f = f;
	nodaz.daz = 0;
	oracle_fmt_init(&c.o, &nodaz);
	c.nrand = nrand;
	c.salt = ++salt;
	h_parallel(h_threads(), oracle_worker, &c);
	h_parallel(h_threads(), agree_worker, &c);
	h_note("%-30s %llu random cases x 9 modes, %llu failures",
	       h_format_desc(f, desc, sizeof desc), (unsigned long long)nrand,
	       (unsigned long long)(h_failures() - before));
}

/* f with one switch changed; 0 when the combination is not a format. */
static int variant(fpl_format *v, const fpl_format *f, int which)
{
	*v = *f;
	switch (which) {
	case 0: v->subnormal = FPL_SUB_NO_ROUND; break;
	case 1: v->subnormal = FPL_SUB_FTZ; break;
	case 2: v->tininess = FPL_TINY_BEFORE; break;
	case 3: v->overflow = FPL_OVF_SATURATE; break;
	case 4: v->daz = 1; v->subnormal = FPL_SUB_FTZ; break;
	default: v->explim = 0; break;
	}
	return fpl_format_finish(v) == 0;
}

int main(void)
{
	static const char *named[] = { "fp64", "fp32", "tf32", "bf16", "fp16", "e5m2", "e4m3fn",
				       "e4m3fnuz", "e3m2", "e2m1", "e8m0" };
	static const char *switched[] = { "fp64", "bf16", "e4m3fn" };
	uint64_t n = h_sanitized() ? 10000 : h_scale(40000, 400000);
	int i, w, nrandfmt = h_long() ? 16 : 6;
	fpl_format f, v;
	h_rng r;

	h_init("tparts");
	for (i = 0; i < (int)(sizeof named / sizeof *named); i++) {
		if (!h_check(fpl_format_lookup(&f, named[i]) == 0)) {
			h_fail("lookup %s", named[i]);
			continue;
		}
		run_format(&f, n);
	}
	if (h_check(fpl_format_ieee(&f, 11, 52) == 0))
		run_format(&f, n);
	if (h_check(fpl_format_params(&f, 4, -6, 8) == 0))	/* CPFloat's E4M3: emax_limit */
		run_format(&f, n);
	for (i = 0; i < 3; i++) {
		if (!h_check(fpl_format_lookup(&f, switched[i]) == 0))
			continue;
		for (w = 0; w < 6; w++)
			if (variant(&v, &f, w))
				run_format(&v, n / 4);
	}
	h_rng_init(&r, 4242);
	for (i = 0; i < nrandfmt; i++) {
		int e = 1 + (int)h_rng_below(&r, 11), m = (int)h_rng_below(&r, 53);

		if (e == 1 && m == 0)	/* e1m0 has no nonzero finite value */
			m = 1;

		if (!h_check(fpl_format_ieee(&f, e, m) == 0)) {
			h_fail("fpl_format_ieee(%d, %d)", e, m);
			continue;
		}
		run_format(&f, n);
	}
	return h_done();
}

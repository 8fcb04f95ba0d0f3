/* SPDX-License-Identifier: MIT */
/*
 * tests/tnumber.c - exact decimal input (fplab/number.h): fpl_parse_number,
 * fpl_round_wide, fpl_wide_scale, fpl_wide_ilogb, fpl_wide_relerr, and its
 * use by fpl_hist_add_exact (fplab/hist.h).  MPFR is the oracle throughout.
 *
 *  1. End to end: a*b of random binary64 a, b (products spread over each
 *     format's subnormal range, normal range, near max, exact ties of the
 *     format, and anywhere from 2^-2148 to 2^2047) is exact in MPFR; it is
 *     written as an exact decimal (or hex) string by MPFR in several
 *     styles, the exactness checked by reading it back with mpfr_strtofr
 *     (ternary 0, equal).  fpl_parse_number must return 1 exactly when
 *     binary64 cannot hold a*b, *out must be the binary64 product (RNE,
 *     rounded once), *w its value, and fpl_round_wide must equal the
 *     oracle's a*b (tests/oracle.c) bit for bit, flags included, in the
 *     seven deterministic modes, for fp16, bf16, e4m3fn, e5m2, fp32, fp64,
 *     e2m1 and a random eXmY.  Perturbed strings (the decimal plus or
 *     minus far less than 2^-130 |a*b|, see perturbed()) are checked
 *     against the oracle's fma a*b +- c with a tiny double c, and against
 *     the oracle's a*b by the tie/representable argument given there.
 *  2. Hand cases of issue 9 with expected values derived in comments, run
 *     in a fresh thread (MPFR's default exponent range, which
 *     fpl_parse_number widens for the call) and in the main thread with
 *     MPFR's widest range: both must give the same results.
 *  3. fpl_wide_scale against the exact product in MPFR truncated to 128
 *     bits; 4. fpl_wide_ilogb against mpfr_get_exp - 1, fpl_wide_relerr
 *     against |y - v| / |v| computed exactly and rounded once by MPFR.
 *  5. fpl_hist_add_exact: class counts, error count and maximum, extremes
 *     and both exponent histograms of tensors read from product strings,
 *     against the oracle's a*(b s), for scale s = 1, 2^k and 3 2^k, ne and
 *     tz (values binary64 holds chosen so that x s is one too); and
 *     the hand cases classify differently through fpl_hist_add
 *     (binary64 only), so this test catches the old behaviour.
 * Random cases: 15000 products per format in check (1500 under
 * AddressSanitizer), 150000 in check-long; 100000 wide-arithmetic cases
 * (10000, 1000000); hist tensors of 20000 (fp16: crosses HIST_CHUNK) and
 * 3000 values.
 */
#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oracle.h"

#define NM 7	/* h_det_modes: ne na nz tp tn tz od */
#define ZPAD 40	/* digits appended to perturb an exact decimal */

/* ------------------------------------------------------------ scratch */

static _Thread_local int t_init;
static _Thread_local mpfr_t t_a, t_b, t_v, t_rd, t_w, t_t;
static _Thread_local mpz_t t_z;

static void scratch_init(void)
{
	if (t_init)
		return;
	mpfr_inits2(53, t_a, t_b, (mpfr_ptr)0);
	mpfr_inits2(128, t_v, t_rd, t_w, t_t, (mpfr_ptr)0);
	mpz_init(t_z);
	t_init = 1;
}

static void scratch_done(void)
{
	if (!t_init)
		return;
	mpfr_clears(t_a, t_b, t_v, t_rd, t_w, t_t, (mpfr_ptr)0);
	mpz_clear(t_z);
	t_init = 0;
	oracle_thread_done();	/* also frees MPFR's caches */
}

/* r = the value of *w, exactly (r has at least 128 bits). */
static void wide_to_mpfr(mpfr_ptr r, const fpl_wide *w)
{
	mpz_set_ui(t_z, w->hi);
	mpz_mul_2exp(t_z, t_z, 64);
	mpz_add_ui(t_z, t_z, w->lo);
	if (mpfr_set_z_2exp(r, t_z, (mpfr_exp_t)w->exp, MPFR_RNDN) != 0)
		h_fail("tnumber: test bug: wide value not exact in MPFR");
	if (w->negative)
		mpfr_neg(r, r, MPFR_RNDN);
}

/* *w = v, a nonzero number of exactly 128 bits, in MPFR's normal form. */
static void mpfr_to_wide(fpl_wide *w, mpfr_srcptr v)
{
	memset(w, 0, sizeof *w);
	w->negative = mpfr_signbit(v) != 0;
	w->exp = mpfr_get_z_2exp(t_z, v);
	mpz_abs(t_z, t_z);
	w->lo = mpz_getlimbn(t_z, 0);
	w->hi = mpz_getlimbn(t_z, 1);
}

static void print_wide(const char *what, const fpl_wide *w)
{
	h_note("  %s: negative %d, exp %lld, hi 0x%016llx, lo 0x%016llx, sticky %d", what,
	       w->negative, (long long)w->exp, (unsigned long long)w->hi,
	       (unsigned long long)w->lo, w->sticky);
}

/* Does *w hold the value of v (128 bits) with this sticky bit? */
static int wide_is(const fpl_wide *w, mpfr_srcptr v, int sticky)
{
	if ((w->hi == 0 && w->lo == 0) || w->sticky != sticky)
		return 0;
	wide_to_mpfr(t_w, w);
	return mpfr_equal_p(t_w, v) && (mpfr_signbit(t_w) != 0) == (mpfr_signbit(v) != 0);
}

/* ------------------------------------------------------------ strings */

/*
 * The decimal digits of |v| (exact): |v| = 0.D * 10^X, D without trailing
 * zeros.  v = M 2^E with M < 2^p: for E >= 0 it is an integer of at most
 * 0.30103 EXP + 1 digits; for E < 0 it is M 5^k / 10^k (k = -E), whose
 * significant digits are those of the integer M 5^k, at most
 * 0.30103 p + 0.69898 k + 1.  Asking mpfr_get_str for more digits than
 * that gives the exact expansion padded with zeros.
 */
static char *exact_digits(mpfr_srcptr v, long *X)
{
	mpfr_exp_t ex = mpfr_get_exp(v), e2 = ex - (mpfr_exp_t)mpfr_get_prec(v);
	size_t n, len;
	char *s, *d;
	mpfr_exp_t x10;

	if (e2 >= 0)
		n = (size_t)(0.30103 * (double)ex) + 3;
	else
		n = (size_t)(0.30103 * (double)mpfr_get_prec(v) + 0.69898 * (double)-e2) + 3;
	s = mpfr_get_str(NULL, &x10, 10, n, v, MPFR_RNDN);
	if (!s)
		return NULL;
	d = strdup(s[0] == '-' ? s + 1 : s);
	mpfr_free_str(s);
	if (!d)
		return NULL;
	len = strlen(d);
	while (len > 1 && d[len - 1] == '0')
		d[--len] = 0;
	*X = (long)x10;
	return d;
}

/*
 * sign 0.D 10^X written in one of several styles: 0 "d.ddde-5", 1
 * "+D.DDDE+05" (explicit signs, upper case), 2 "0.ddde-4", 3 fixed point
 * (only when -40 < X < 60, else style 0).  Returns a malloc'd string.
 */
static char *write_decimal(int neg, const char *D, long X, int style)
{
	size_t len = strlen(D), cap = len + 200;
	char *s = malloc(cap), *p = s;
	const char *sg = neg ? "-" : style == 1 ? "+" : "";

	if (!s)
		return NULL;
	if (style == 3 && (X <= -40 || X >= 60))
		style = 0;
	switch (style) {
	case 0:
	case 1:
		p += sprintf(p, "%s%c", sg, D[0]);
		if (len > 1)
			p += sprintf(p, ".%s", D + 1);
		sprintf(p, style ? "E%+03ld" : "e%ld", X - 1);
		break;
	case 2:
		sprintf(p, "%s0.%se%ld", sg, D, X);
		break;
	default:
		p += sprintf(p, "%s", sg);
		if (X <= 0) {
			p += sprintf(p, "0.");
			for (long i = 0; i < -X; i++)
				*p++ = '0';
			sprintf(p, "%s", D);
		} else if ((long)len <= X) {
			p += sprintf(p, "%s", D);
			for (long i = 0; i < X - (long)len; i++)
				*p++ = '0';
			sprintf(p, ".0");
		} else {
			memcpy(p, D, (size_t)X);
			p += X;
			sprintf(p, ".%s", D + X);
		}
	}
	return s;
}

/* ----------------------------------------------------------- formats */

struct fctx {
	fpl_format f;
	oracle_fmt o;
	uint64_t n;
	uint64_t salt;
};

static int clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* A binary64 with leading exponent ex and `bits` significant bits, the
 * last one set (so products of two of them have a known length). */
static double odd_value(h_rng *r, int ex, int bits)
{
	uint64_t s;

	ex = clampi(ex, -1074, 1023);
	bits = clampi(bits, 1, 53);
	if (ex - (bits - 1) < -1074)
		bits = ex + 1075;
	s = (h_rng_next(r) & ((1ull << (bits - 1)) - 1)) | 1 | (1ull << (bits - 1));
	return ldexp((double)s, ex - (bits - 1));
}

/*
 * Operands a, b (nonzero) whose product lands at leading exponent about
 * T: anywhere in the format's range, in its subnormal range, near its
 * max, on its ties (odd significands of a+b bits = m+2 or m+3 bits, so
 * the product often has exactly m+2 bits: a midpoint when normal), or
 * anywhere a product of binary64 values can be.
 */
static void pick_product(const oracle_fmt *o, h_rng *r, double x[2])
{
	int lo = o->emin - o->m - 3, kind = (int)h_rng_below(r, 6), T, ea, eb;
	int ba = 1 + (int)h_rng_below(r, 53), bb = 1 + (int)h_rng_below(r, 53), odd = 0;

	switch (kind) {
	case 1:
		T = lo + (int)h_rng_below(r, (uint64_t)(o->emin - lo + 1));
		break;
	case 2:
		T = o->emax - 1 + (int)h_rng_below(r, 3);
		ba = bb = 53;
		break;
	case 3:
		T = lo + (int)h_rng_below(r, (uint64_t)(o->emax + 2 - lo));
		ba = 1 + (int)h_rng_below(r, (uint64_t)(o->m + 2 < 53 ? o->m + 2 : 53));
		bb = o->m + 2 + (int)h_rng_below(r, 2) - ba;
		odd = 1;
		break;
	case 4:
		T = -2140 + (int)h_rng_below(r, 2140 + 2040);
		break;
	default:
		T = lo + (int)h_rng_below(r, (uint64_t)(o->emax + 2 - lo));
	}
	ea = clampi(T / 2 + (int)h_rng_below(r, 41) - 20, -1074, 1023);
	eb = clampi(T - ea, -1074, 1023);
	if (odd) {
		x[0] = odd_value(r, ea, ba);
		x[1] = odd_value(r, eb, bb);
	} else {
		x[0] = h_rng_value(r, ea, ea, ba, 0);
		x[1] = h_rng_value(r, eb, eb, bb, 0);
	}
	if (h_rng_below(r, 2))
		x[0] = -x[0];
	if (h_rng_below(r, 2))
		x[1] = -x[1];
}

/* t_v = a*b exactly (128 bits hold 106). */
static void exact_product(const double x[2])
{
	mpfr_set_d(t_a, x[0], MPFR_RNDN);
	mpfr_set_d(t_b, x[1], MPFR_RNDN);
	if (mpfr_mul(t_v, t_a, t_b, MPFR_RNDN) != 0)
		h_fail("tnumber: test bug: %a * %a not exact in 128 bits", x[0], x[1]);
}

/* Is s exactly t_v (read back at 128 bits, ternary 0)? */
static int string_is_exact(const char *s)
{
	char *end;
	int t = mpfr_strtofr(t_rd, s, &end, 0, MPFR_RNDN);
	return t == 0 && *end == 0 && mpfr_equal_p(t_rd, t_v);
}

/*
 * The binary64 nearest to |t_v| + dir d (d > 0 infinitesimal: far below
 * any binary64 quantum near v), RNE, computed in MPFR: v itself
 * when binary64 holds it, else the neighbour on v's side of the midpoint
 * of its two binary64 neighbours (2^1024 standing for the one above
 * DBL_MAX), the side of dir when v is that midpoint.
 */
static double nearest64(int dir)
{
	double dz = mpfr_get_d(t_v, MPFR_RNDZ), da = mpfr_get_d(t_v, MPFR_RNDA);
	mpfr_t mid;
	int c;

	if (mpfr_cmp_d(t_v, dz) == 0)
		return dz;
	mpfr_init2(mid, 128);
	if (isinf(da))
		mpfr_set_si_2exp(mid, da < 0 ? -1 : 1, 1024, MPFR_RNDN);
	else
		mpfr_set_d(mid, da, MPFR_RNDN);
	mpfr_add_d(mid, mid, dz, MPFR_RNDN);	/* exact: neighbours, 128 bits */
	mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
	c = mpfr_cmpabs(t_v, mid);
	mpfr_clear(mid);
	if (c == 0)
		c = dir;
	return c < 0 ? dz : da;
}

/*
 * number.h: when binary64 cannot hold the number, *out is its nearest
 * binary64 rounded once from the number (not the C library's strtod,
 * which on glibc 2.36 misrounds part of binary64's subnormal range:
 * 0x0.84cb8ea65c05acp-1022 gives ...05a).  The expected value is the
 * correctly rounded one, from MPFR or from one IEEE multiplication.
 */

/* --------------------------------------------- 1. parsing end to end */

static void report_string(const char *s)
{
	h_note("  string: \"%.300s%s\"", s, strlen(s) > 300 ? "..." : "");
}

/*
 * The decimal of a*b moved by far less than any rounding can see:
 * dir = +1: D followed by ZPAD zeros and a 1; dir = -1: D's last digit
 * decremented and ZPAD + 1 nines appended; either way |v'| = |v| +- 10^
 * (X - len - ZPAD - 1), and |v| >= 10^(X-1), so the change is below
 * 10^-41 |v| < 2^-136 |v| (less than an ulp of v at 128 bits).
 *
 * What v' must round to, soundly:
 *  (a) The oracle's fma a*b + c with c = sign * 2^min(ilogb(v) - 120,
 *      1023) (a binary64 when ilogb(v) >= -954, and below
 *      2^(ilogb(v) - 106) as needed here for every ilogb(v) up to 2047).  v = a*b is a multiple of
 *      2^(ilogb(v) - 105) (two significands of at most 53 bits); every
 *      point where a deterministic rounding of some format (m <= 52) or
 *      one of its flags changes - representable values and midpoints at
 *      the unbounded exponent, the subnormal grid, the tininess and
 *      overflow thresholds - is a multiple of 2^(ilogb(v) - 55) or
 *      coarser within [v/2, 2v].  So the open intervals of length
 *      2^(ilogb(v) - 106) on either side of v contain no such point; v'
 *      and v +- |c| lie in the same one and round identically, value
 *      and flags, in every mode.
 *  (b) From the oracle's a*b alone, values only (any ilogb): when v is
 *      not a tie (na and nz agree), ne, na and nz of v' give that value;
 *      at a tie, v' above rounds as na, below as nz.  When v is not
 *      representable (tz inexact), v' lies in the same gap between
 *      representable values, so tp, tn, tz and od give v's values.
 */
static void perturbed(const struct fctx *c, const double x[2], const char *D, long X, int dir,
		      const oracle_res *rv, fpl_state *st)
{
	size_t len = strlen(D);
	char *P = malloc(len + ZPAD + 2), *s;
	int neg = mpfr_signbit(t_v) != 0, rc;
	fpl_wide w;
	double d;

	if (!P)
		return;
	memcpy(P, D, len);
	if (dir > 0) {
		memset(P + len, '0', ZPAD);
		P[len + ZPAD] = '1';
	} else {
		P[len - 1] = (char)(P[len - 1] - 1);	/* D ends in a nonzero digit */
		memset(P + len, '9', ZPAD);
		P[len + ZPAD] = '9';
	}
	P[len + ZPAD + 1] = 0;
	s = write_decimal(neg, P, X, 2);
	free(P);
	if (!s)
		return;
	rc = fpl_parse_number(s, &d, &w);
	if (!h_check(rc == 1)) {
		h_fail("parse (perturbed %+d): returned %d, expected 1", dir, rc);
		report_string(s);
		free(s);
		return;
	}
	/* *w: v' truncated to 128 bits is v (dir > 0) or v's predecessor at
	 * 128 bits (dir < 0: v - 10^-40 |v| lies above it), sticky set */
	mpfr_set(t_t, t_v, MPFR_RNDN);
	if (dir < 0) {
		if (neg)
			mpfr_nextabove(t_t);
		else
			mpfr_nextbelow(t_t);
	}
	if (!h_check(wide_is(&w, t_t, 1))) {
		h_fail("parse (perturbed %+d): wide value is not the 128-bit truncation", dir);
		report_string(s);
		print_wide("got", &w);
	}
	{
		double e = nearest64(dir);
		if (!h_check(h_same(d, e))) {
			h_fail("parse (perturbed %+d): nearest binary64 %a, expected %a", dir, d, e);
			report_string(s);
		}
	}
	/* (a) */
	if (mpfr_get_exp(t_v) - 1 >= -954) {
		double y[3] = { x[0], x[1], 0 };
		oracle_res res[NM];
		int sv = neg ? -1 : 1;

		int ce = (int)(mpfr_get_exp(t_v) - 1) - 120;
		y[2] = ldexp((double)(sv * dir), ce < 1023 ? ce : 1023);
		oracle_eval_modes(&c->o, OR_FMA, y, h_det_modes, NM, 0, 32, res);
		for (int k = 0; k < NM; k++) {
			double g;
			st->flags = 0;
			g = fpl_round_wide(&c->f, &w, h_det_modes[k], st);
			if (!h_expect("round_wide (perturbed, fma oracle)", &c->f, h_det_modes[k], 3, y,
				      res[k].value, res[k].flags, g, st->flags))
				report_string(s);
		}
	}
	/* (b) */
	{
		int tie = !h_same(rv[1].value, rv[2].value);
		int repr = !(rv[5].flags & FPL_FLAG_INEXACT);
		for (int k = 0; k < NM; k++) {
			double g, e;
			int near = k < 3;

			if (!near && repr)
				continue;
			st->flags = 0;
			g = fpl_round_wide(&c->f, &w, h_det_modes[k], st);
			e = !near ? rv[k].value : !tie ? rv[0].value : dir > 0 ? rv[1].value : rv[2].value;
			if (!h_check(h_same(g, e))) {
				char desc[200];
				h_fail("round_wide (perturbed %+d, from a*b's oracle) %s mode %s (%a, %a): "
				       "expected %a [0x%016llx], got %a [0x%016llx]", dir,
				       h_format_desc(&c->f, desc, sizeof desc),
				       fpl_rnd_name(h_det_modes[k]), x[0], x[1], e,
				       (unsigned long long)h_bits(e), g, (unsigned long long)h_bits(g));
				report_string(s);
			}
		}
	}
	free(s);
}

/* One product a*b through a string, in every deterministic mode. */
static void product_case(const struct fctx *c, h_rng *r, fpl_state *st)
{
	double x[2], d, p;
	oracle_res res[NM];
	fpl_wide w;
	long X;
	char *D, *s;
	int style = (int)h_rng_below(r, 5), rc, want;

	pick_product(&c->o, r, x);
	p = x[0] * x[1];	/* binary64 RNE: the nearest binary64 of the product */
	exact_product(x);
	oracle_eval_modes(&c->o, OR_MUL, x, h_det_modes, NM, 0, 32, res);
	D = exact_digits(t_v, &X);
	if (!D)
		return;
	if (style == 4) {
		if (mpfr_asprintf(&s, "%Ra", t_v) < 0)
			s = NULL;
	} else {
		s = write_decimal(mpfr_signbit(t_v) != 0, D, X, style);
	}
	if (!s) {
		free(D);
		return;
	}
	if (!h_check(string_is_exact(s))) {
		h_fail("tnumber: test bug: string of %a * %a is not exact", x[0], x[1]);
		report_string(s);
	}
	want = !(isfinite(p) && mpfr_cmp_d(t_v, p) == 0);
	rc = fpl_parse_number(s, &d, &w);
	if (!h_check(rc == want && h_same(d, p))) {	/* p: a*b rounded once */
		h_fail("parse %a * %a: returned %d with %a [0x%016llx], expected %d with %a "
		       "[0x%016llx]", x[0], x[1], rc, d, (unsigned long long)h_bits(d), want, p,
		       (unsigned long long)h_bits(p));
		report_string(s);
	}
	if (rc == 1) {
		if (!h_check(wide_is(&w, t_v, 0))) {
			h_fail("parse %a * %a: wide value is not the product", x[0], x[1]);
			report_string(s);
			print_wide("got", &w);
		}
		for (int k = 0; k < NM; k++) {
			double g;
			st->flags = 0;
			g = fpl_round_wide(&c->f, &w, h_det_modes[k], st);
			if (!h_expect("round_wide", &c->f, h_det_modes[k], 2, x, res[k].value,
				      res[k].flags, g, st->flags))
				report_string(s);
		}
	}
	if (h_rng_below(r, 2))
		perturbed(c, x, D, X, h_rng_below(r, 2) ? 1 : -1, res, st);
	if (style == 4)
		mpfr_free_str(s);
	else
		free(s);
	free(D);
}

static void parse_worker(void *arg, int k, int nth)
{
	const struct fctx *c = arg;
	fpl_state st;
	h_rng r;

	scratch_init();
	fpl_state_init(&st, h_seed());
	h_rng_init(&r, c->salt * 64 + (uint64_t)k);
	for (uint64_t i = (uint64_t)k; i < c->n; i += (uint64_t)nth)
		product_case(c, &r, &st);
	scratch_done();
}

/* ------------------------------------------------------ 2. hand cases */

#define I_ FPL_FLAG_INEXACT
#define U_ FPL_FLAG_UNDERFLOW
#define O_ FPL_FLAG_OVERFLOW

/*
 * Expected values derived by hand.  fp16: min subnormal 2^-24, min normal
 * 2^-14, max 65504 = (2 - 2^-10) 2^15 (its significand is all ones: odd),
 * and the overflow threshold in nearest modes is the midpoint 65520
 * between max and 2^16.  Overflow raises overflow|inexact and gives inf
 * in ne/na/nz, max in tz/od and toward zero (SEMANTICS.md step 4).
 *
 * "2.98023223876953125e-08" is 2^-25 exactly (5^25 = 298023223876953125),
 * the fp16 midpoint between 0 and 2^-24; the string with ...0001 is
 * 2^-25 + 10^-37: above the tie, so every nearest mode and od give 2^-24
 * (od: truncation 0 is even, inexact, so the odd neighbour 2^-24), tz
 * and tn give 0; tiny in every case (underflow|inexact).  Its nearest
 * binary64 is 2^-25 (10^-37 is far below half an ulp, 2^-78).  The exact
 * 2^-25 is a binary64 (returns 0), the tie itself: 0 in ne (even),
 * underflow|inexact; ...124999... is just below the tie: 0 in nearest
 * modes.
 * "65519.99999999999999999" lies below 65520 by 10^-17: max 65504 in
 * nearest modes, inexact, no overflow; tp gives inf (overflow); its
 * nearest binary64 is 65520 (ulp 2^-37 there).  "65520.00...01" lies
 * above the threshold: inf (overflow|inexact) in ne; tz truncates it to
 * 65504 at the unbounded exponent, so no overflow there, only inexact.
 * "1e-400" (about 2^-1328.8) is far below 2^-25: +0 in ne/tz/tn,
 * 2^-24 in tp and od, underflow|inexact; nearest binary64 +0.
 * "1e400": +inf (overflow|inexact) in ne, 65504 in tz/tn; binary64 +inf.
 * fp64: "0x1.00000000000000000001p0" = 1 + 2^-80 (hex float of 81 bits):
 * 1.0 in ne/tz, 1 + 2^-52 in tp and od (1.0 is even), inexact; binary64
 * nearest 1.0.  "1e-2000000000" and "1e2000000000" lie beyond MPFR's
 * default exponent range (about 2^+-2^30), inside its widest one (which
 * fpl_parse_number uses), and "1e+-99999999999999999999" beyond every
 * range: they round like any number far below 2^-1075 or
 * far above 2^1024: 0 / min subnormal (tp), inf / max (tz).
 * e4m3fn (max 448 = 1.75 2^8, no inf): the would-be next value 480 makes
 * 464 the overflow midpoint: 463.99... gives 448 (inexact), 464.00...1
 * overflows in ne to NaN keeping the sign (overflow|inexact); tz
 * truncates it to 448 at the unbounded exponent, so no overflow: 448,
 * inexact.
 */
static const struct hand {
	const char *s, *fmt;
	fpl_rnd rnd;
	int rc;		/* fpl_parse_number's return */
	double near;	/* its nearest binary64 */
	double want;	/* the number rounded once */
	unsigned flags;
} HAND[] = {
	{ "2.98023223876953125000000000001e-08", "fp16", FPL_RND_NE, 1, 0x1p-25, 0x1p-24, I_ | U_ },
	{ "2.98023223876953125000000000001e-08", "fp16", FPL_RND_NZ, 1, 0x1p-25, 0x1p-24, I_ | U_ },
	{ "2.98023223876953125000000000001e-08", "fp16", FPL_RND_OD, 1, 0x1p-25, 0x1p-24, I_ | U_ },
	{ "2.98023223876953125000000000001e-08", "fp16", FPL_RND_TZ, 1, 0x1p-25, 0.0, I_ | U_ },
	{ "2.98023223876953124999999999999e-08", "fp16", FPL_RND_NE, 1, 0x1p-25, 0.0, I_ | U_ },
	{ "2.98023223876953124999999999999e-08", "fp16", FPL_RND_NA, 1, 0x1p-25, 0.0, I_ | U_ },
	{ "2.98023223876953124999999999999e-08", "fp16", FPL_RND_TP, 1, 0x1p-25, 0x1p-24, I_ | U_ },
	{ "2.98023223876953125e-08", "fp16", FPL_RND_NE, 0, 0x1p-25, 0.0, I_ | U_ },
	{ "65519.99999999999999999", "fp16", FPL_RND_NE, 1, 65520.0, 65504.0, I_ },
	{ "65519.99999999999999999", "fp16", FPL_RND_NA, 1, 65520.0, 65504.0, I_ },
	{ "65519.99999999999999999", "fp16", FPL_RND_TZ, 1, 65520.0, 65504.0, I_ },
	{ "65519.99999999999999999", "fp16", FPL_RND_TP, 1, 65520.0, INFINITY, I_ | O_ },
	{ "65520.00000000000000001", "fp16", FPL_RND_NE, 1, 65520.0, INFINITY, I_ | O_ },
	{ "65520.00000000000000001", "fp16", FPL_RND_TZ, 1, 65520.0, 65504.0, I_ },
	{ "1e-400", "fp16", FPL_RND_NE, 1, 0.0, 0.0, I_ | U_ },
	{ "1e-400", "fp16", FPL_RND_TP, 1, 0.0, 0x1p-24, I_ | U_ },
	{ "1e-400", "fp16", FPL_RND_OD, 1, 0.0, 0x1p-24, I_ | U_ },
	{ "-1e-400", "fp16", FPL_RND_NE, 1, -0.0, -0.0, I_ | U_ },
	{ "-1e-400", "fp16", FPL_RND_TZ, 1, -0.0, -0.0, I_ | U_ },
	{ "-1e-400", "fp16", FPL_RND_TN, 1, -0.0, -0x1p-24, I_ | U_ },
	{ "1e400", "fp16", FPL_RND_NE, 1, INFINITY, INFINITY, I_ | O_ },
	{ "1e400", "fp16", FPL_RND_TZ, 1, INFINITY, 65504.0, I_ | O_ },
	{ "1e400", "fp16", FPL_RND_TN, 1, INFINITY, 65504.0, I_ | O_ },
	{ "-1e400", "fp16", FPL_RND_TP, 1, -INFINITY, -65504.0, I_ | O_ },
	{ "0x1.00000000000000000001p0", "fp64", FPL_RND_NE, 1, 1.0, 1.0, I_ },
	{ "0x1.00000000000000000001p0", "fp64", FPL_RND_TZ, 1, 1.0, 1.0, I_ },
	{ "0x1.00000000000000000001p0", "fp64", FPL_RND_TP, 1, 1.0, 0x1.0000000000001p0, I_ },
	{ "0x1.00000000000000000001p0", "fp64", FPL_RND_OD, 1, 1.0, 0x1.0000000000001p0, I_ },
	{ "1e-2000000000", "fp16", FPL_RND_NE, 1, 0.0, 0.0, I_ | U_ },
	{ "1e-2000000000", "fp16", FPL_RND_TP, 1, 0.0, 0x1p-24, I_ | U_ },
	{ "1e-2000000000", "fp64", FPL_RND_NE, 1, 0.0, 0.0, I_ | U_ },
	{ "1e-2000000000", "fp64", FPL_RND_TP, 1, 0.0, 0x1p-1074, I_ | U_ },
	{ "-1e-2000000000", "fp64", FPL_RND_TN, 1, -0.0, -0x1p-1074, I_ | U_ },
	{ "-1e-2000000000", "fp64", FPL_RND_NE, 1, -0.0, -0.0, I_ | U_ },
	{ "1e2000000000", "fp16", FPL_RND_NE, 1, INFINITY, INFINITY, I_ | O_ },
	{ "1e2000000000", "fp16", FPL_RND_TZ, 1, INFINITY, 65504.0, I_ | O_ },
	{ "1e2000000000", "fp64", FPL_RND_TZ, 1, INFINITY, DBL_MAX, I_ | O_ },
	{ "-1e2000000000", "fp64", FPL_RND_TP, 1, -INFINITY, -DBL_MAX, I_ | O_ },
	{ "-1e2000000000", "fp64", FPL_RND_NE, 1, -INFINITY, -INFINITY, I_ | O_ },
	{ "1e-99999999999999999999", "fp64", FPL_RND_TP, 1, 0.0, 0x1p-1074, I_ | U_ },
	{ "1e-99999999999999999999", "fp64", FPL_RND_NE, 1, 0.0, 0.0, I_ | U_ },
	{ "1e99999999999999999999", "fp64", FPL_RND_TZ, 1, INFINITY, DBL_MAX, I_ | O_ },
	{ "1e99999999999999999999", "fp64", FPL_RND_NA, 1, INFINITY, INFINITY, I_ | O_ },
	{ "463.99999999999999999999", "e4m3fn", FPL_RND_NE, 1, 464.0, 448.0, I_ },
	{ "464.00000000000000000001", "e4m3fn", FPL_RND_NE, 1, 464.0, NAN, I_ | O_ },
	{ "-464.00000000000000000001", "e4m3fn", FPL_RND_NE, 1, -464.0, -NAN, I_ | O_ },
	{ "464.00000000000000000001", "e4m3fn", FPL_RND_TZ, 1, 464.0, 448.0, I_ },
};
#define NHAND (sizeof HAND / sizeof HAND[0])

/*
 * Other numerals: the return value and *out (derived by hand): binary64
 * holds 0.5, 1e22 (5^22 < 2^53), 0x1p-1074, -0, inf and nan (returns 0);
 * not 0.1, 1e23 (5^23 > 2^53) or 2^-1075 = 2.47e-324 rounded (returns 1).
 */
static const struct numeral {
	const char *s;
	int rc;
	double out;
} NUM[] = {
	{ "0.5", 0, 0.5 },
	{ "-0", 0, -0.0 },
	{ "-0.000e-5000", 0, -0.0 },
	{ "0e99999999999999999999", 0, 0.0 },
	{ "1e22", 0, 1e22 },
	{ "0x1p-1074", 0, 0x1p-1074 },
	{ "0X1.8P+1", 0, 3.0 },
	{ "inf", 0, INFINITY },
	{ "-Infinity", 0, -INFINITY },
	{ "nan", 0, NAN },
	{ "-NaN", 0, -NAN },
	{ "0.1", 1, 0.1 },
	{ "1e23", 1, 1e23 },
	{ "-2.5e-324", 1, -0x1p-1074 },
	{ "0x1.fffffffffffff8p1023", 1, INFINITY },
};

static const char *const BAD[] = { "", " 1", "1 ", "\t1", "abc", "1e", "--1", "0x", "1,5",
				    "1e5x", "infx", "0b101", "1..2" };

static void check_hand_one(const struct hand *h, int deflt)
{
	fpl_format f;
	fpl_state st;
	fpl_wide w;
	double d, g;
	int rc;

	if (!h_check(fpl_format_lookup(&f, h->fmt) == 0)) {
		h_fail("lookup %s", h->fmt);
		return;
	}
	memset(&w, 0, sizeof w);
	rc = fpl_parse_number(h->s, &d, &w);
	if (!h_check(rc == h->rc && h_same(d, h->near)))
		h_fail("hand \"%s\" (%s MPFR range): parse returned %d with %a, expected %d with %a",
		       h->s, deflt ? "default" : "widest", rc, d, h->rc, h->near);
	fpl_state_init(&st, 1);
	g = rc == 1 ? fpl_round_wide(&f, &w, h->rnd, &st) : fpl_round(&f, d, h->rnd, &st);
	if (isnan(h->want) && isnan(g) && signbit(g) == signbit(h->want) && st.flags == h->flags) {
		h_check(1);	/* the NaN's payload is not the point here */
		return;
	}
	if (!h_expect(deflt ? "hand case (default MPFR range)" : "hand case (widest MPFR range)",
		      &f, h->rnd, 1, &h->near, h->want, h->flags, g, st.flags))
		h_note("  string: \"%s\"", h->s);
}

/* Below MPFR's range, a number is a zero with sticky: ilogb INT64_MIN,
 * relative error 1 against 0 (number.h). */
static void check_below_range(const char *s)
{
	fpl_wide w;
	double d;

	if (fpl_parse_number(s, &d, &w) != 1)
		return;	/* reported by check_hand_one */
	if (!h_check(w.hi == 0 && w.lo == 0 && w.sticky && fpl_wide_ilogb(&w) == INT64_MIN &&
		     fpl_wide_relerr(&w, 0.0) == 1.0)) {
		h_fail("\"%s\" below MPFR's default range: ilogb %lld, relerr(0) %a", s,
		       (long long)fpl_wide_ilogb(&w), fpl_wide_relerr(&w, 0.0));
		print_wide("got", &w);
	}
}

static void check_hand(int deflt)
{
	for (size_t i = 0; i < NHAND; i++)
		check_hand_one(&HAND[i], deflt);
	for (size_t i = 0; i < sizeof NUM / sizeof NUM[0]; i++) {
		fpl_wide w;
		double d;
		int rc = fpl_parse_number(NUM[i].s, &d, &w);
		int same = isnan(NUM[i].out) ? isnan(d) && signbit(d) == signbit(NUM[i].out)
					     : h_same(d, NUM[i].out);
		if (!h_check(rc == NUM[i].rc && same))
			h_fail("parse \"%s\": returned %d with %a, expected %d with %a", NUM[i].s, rc,
			       d, NUM[i].rc, NUM[i].out);
	}
	for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
		fpl_wide w;
		double d;
		int rc = fpl_parse_number(BAD[i], &d, &w);
		if (!h_check(rc == FPL_EPARSE))
			h_fail("parse \"%s\": returned %d, expected FPL_EPARSE", BAD[i], rc);
	}
	if (deflt) {
		check_below_range("1e-99999999999999999999");
		check_below_range("-1e-99999999999999999999");
	}
	{
		/* ilogb of hand numbers: log2(10) = 3.3219280948873623..., so
		 * 400 log2(10) = 1328.77 and 2e9 log2(10) = 6643856189.77 */
		static const struct { const char *s; int64_t e; int widest_only; } L[] = {
			{ "1e-400", -1329, 0 }, { "1e400", 1328, 0 }, { "65519.99999999999999999", 15, 0 },
			{ "0x1.00000000000000000001p0", 0, 0 }, { "-0.1", -4, 0 },
			{ "1e-2000000000", -6643856190, 1 }, { "1e2000000000", 6643856189, 1 },
		};
		for (size_t i = 0; i < sizeof L / sizeof L[0]; i++) {
			fpl_wide w;
			double d;
			if (deflt && L[i].widest_only)
				continue;
			if (fpl_parse_number(L[i].s, &d, &w) != 1)
				continue;
			if (!h_check(fpl_wide_ilogb(&w) == L[i].e))
				h_fail("ilogb \"%s\": %lld, expected %lld", L[i].s,
				       (long long)fpl_wide_ilogb(&w), (long long)L[i].e);
		}
	}
}

static void *hand_thread(void *arg)
{
	(void)arg;
	/* a fresh thread: MPFR's default exponent range (thread-local) */
	check_hand(mpfr_get_emin() > -(1l << 40));
	mpfr_free_cache();
	return NULL;
}

/* --------------------------------------------------- 3, 4. wide maths */

/* A random wide number: normalised (hi's top bit set) unless told. */
static void random_wide(h_rng *r, fpl_wide *w, int normal)
{
	memset(w, 0, sizeof *w);
	w->negative = (int)h_rng_below(r, 2);
	w->hi = h_rng_next(r);
	w->lo = h_rng_next(r);
	if (h_rng_below(r, 4) == 0)	/* runs of ones or zeros */
		w->lo = h_rng_below(r, 2) ? ~0ull << h_rng_below(r, 64) : 0;
	if (normal) {
		w->hi |= 1ull << 63;
	} else {
		switch (h_rng_below(r, 3)) {
		case 0: w->hi = 0; w->lo |= 1; break;
		case 1: w->hi >>= h_rng_below(r, 64); break;
		default: w->hi = (w->hi >> h_rng_below(r, 64)) | 1;
		}
		if (!w->hi && !w->lo)
			w->lo = 1;	/* nonzero: the zero with sticky is tested apart */
	}
	w->exp = (int64_t)h_rng_below(r, 6001) - 3000;
	if (h_rng_below(r, 16) == 0)
		w->exp = (int64_t)h_rng_below(r, 2ull << 40) - (1ll << 40);
	w->sticky = (int)h_rng_below(r, 2);
}

/* A finite positive binary64 scale of every kind. */
static double random_scale(h_rng *r)
{
	switch (h_rng_below(r, 8)) {
	case 0: return ldexp(1.0, (int)h_rng_below(r, 2098) - 1074);
	case 1: return fabs(h_rng_value(r, -1074, -1023, 1 + (int)h_rng_below(r, 53), 0));
	case 2: {
		static const double S[] = { 1.0, DBL_MAX, DBL_MIN, 0x1p-1074, 0x1.fffffffffffffp0,
					    0x1.0000000000001p0, 3.0, 0.1 };
		return S[h_rng_below(r, sizeof S / sizeof S[0])];
	}
	default:
		return fabs(h_rng_value(r, -1022, 1023, 1 + (int)h_rng_below(r, 53), 0));
	}
}

static void check_scale_one(h_rng *r, mpfr_ptr p256)
{
	fpl_wide w, got, want;
	double s = random_scale(r);
	int normal = h_rng_below(r, 4) != 0, t, ok;

	random_wide(r, &w, normal);
	got = w;
	fpl_wide_scale(&got, s);
	wide_to_mpfr(t_w, &w);
	if (mpfr_mul_d(p256, t_w, s, MPFR_RNDN) != 0)	/* 181 bits at most */
		h_fail("tnumber: test bug: scaled product not exact");
	t = mpfr_set(t_t, p256, MPFR_RNDZ);	/* truncation to 128 bits */
	mpfr_to_wide(&want, t_t);
	want.sticky = w.sticky || t != 0;
	if (normal)	/* the same normal form: hi's top bit set */
		ok = got.hi == want.hi && got.lo == want.lo && got.exp == want.exp &&
		     got.sticky == want.sticky && got.negative == want.negative;
	else
		ok = wide_is(&got, t_t, want.sticky) && got.negative == want.negative;
	if (!h_check(ok)) {
		h_fail("fpl_wide_scale by %a [0x%016llx]", s, (unsigned long long)h_bits(s));
		print_wide("input", &w);
		print_wide("got", &got);
		print_wide("expected", &want);
	}
	/* ilogb of both (wide_is may have reused t_w) */
	wide_to_mpfr(t_w, &w);
	if (!h_check(fpl_wide_ilogb(&w) == (int64_t)mpfr_get_exp(t_w) - 1))
		h_fail("fpl_wide_ilogb: %lld, expected %lld", (long long)fpl_wide_ilogb(&w),
		       (long long)mpfr_get_exp(t_w) - 1);
	if (!h_check(fpl_wide_ilogb(&got) == (int64_t)mpfr_get_exp(t_t) - 1))
		h_fail("fpl_wide_ilogb after scale: %lld, expected %lld",
		       (long long)fpl_wide_ilogb(&got), (long long)mpfr_get_exp(t_t) - 1);
}

/*
 * |y - v| / |v| for v = *w (its 128 bits): the difference exactly (at
 * the precision its bits span), the quotient rounded once to 53 bits.
 * Returns 0 when the case is too wide to compute or the quotient would be
 * a subnormal binary64 (beyond DBL_MAX it is inf, as for the library).
 */
static int relerr_expect(const fpl_wide *w, double y, double *out)
{
	mpfr_t d, q;
	long top, bot, prec;
	int ok = 1;

	wide_to_mpfr(t_w, w);
	top = (long)mpfr_get_exp(t_w);
	bot = (long)w->exp;
	if (y != 0) {
		int ey = ilogb(y);
		top = top > ey + 1 ? top : ey + 1;
		bot = bot < (ey - 52 < -1074 ? -1074 : ey - 52) ? bot : (ey - 52 < -1074 ? -1074 : ey - 52);
	}
	prec = top - bot + 2;
	if (prec > 20000)
		return 0;
	mpfr_init2(d, prec < 128 ? 128 : prec);
	mpfr_init2(q, 53);
	if (mpfr_sub_d(d, t_w, y, MPFR_RNDN) != 0)
		ok = 0;
	mpfr_div(q, d, t_w, MPFR_RNDN);
	mpfr_abs(q, q, MPFR_RNDN);
	if (!mpfr_zero_p(q) && mpfr_get_exp(q) <= -1021)
		ok = 0;
	*out = mpfr_get_d(q, MPFR_RNDN);
	mpfr_clears(d, q, (mpfr_ptr)0);
	return ok;
}

/* One random case; deep: v's quantum 2^exp in [2^-1074, 2^-824), where
 * v's magnitude lies near binary64's subnormal range and the library's
 * fast path must hand over to MPFR (a seed once met one at 2^-983). */
static void check_relerr_one(h_rng *r, const fpl_format *fmts, int nf, int deep)
{
	fpl_wide w;
	double y, e, g;
	fpl_state st;

	random_wide(r, &w, h_rng_below(r, 4) != 0);
	w.exp = deep ? (int64_t)h_rng_below(r, 250) - 1074 : (int64_t)h_rng_below(r, 2401) - 1300;
	wide_to_mpfr(t_w, &w);
	switch (h_rng_below(r, 5)) {
	case 0:
		y = 0;
		break;
	case 1:
		y = mpfr_get_d(t_w, MPFR_RNDN);
		break;
	case 2:
		fpl_state_init(&st, 0);
		y = fpl_round_wide(&fmts[h_rng_below(r, (uint64_t)nf)], &w,
				   h_det_modes[h_rng_below(r, NM)], &st);
		break;
	case 3: {
		int e0 = clampi((int)mpfr_get_exp(t_w) - 1, -1074, 1023);
		y = h_rng_value(r, e0 - 3, e0 + 3, 1 + (int)h_rng_below(r, 53), 0);
		break;
	}
	default:
		y = nextafter(mpfr_get_d(t_w, MPFR_RNDN), h_rng_below(r, 2) ? INFINITY : -INFINITY);
	}
	if (!isfinite(y) || !relerr_expect(&w, y, &e))
		return;
	g = fpl_wide_relerr(&w, y);
	if (!h_check(h_same(g, e))) {
		h_fail("fpl_wide_relerr(y = %a): %a [0x%016llx], expected %a [0x%016llx]", y, g,
		       (unsigned long long)h_bits(g), e, (unsigned long long)h_bits(e));
		print_wide("w", &w);
	}
}

static void check_wide_maths(uint64_t n, const fpl_format *fmts, int nf)
{
	mpfr_t p256;
	fpl_wide z;
	h_rng r;

	scratch_init();
	mpfr_init2(p256, 256);
	h_rng_init(&r, 0x5ca1e);
	for (uint64_t i = 0; i < n; i++)
		check_scale_one(&r, p256);
	for (uint64_t i = 0; i < n; i++)
		check_relerr_one(&r, fmts, nf, 0);
	for (uint64_t i = 0; i < n / 4; i++)
		check_relerr_one(&r, fmts, nf, 1);
	/* the case a seed met: v near 2^-983, whose division residual is
	 * subnormal; expected value from MPFR (relerr_expect) */
	{
		fpl_wide v = { .negative = 0, .exp = -1058, .hi = 0xb44,
			       .lo = 0x70533dfe0696f217ull, .sticky = 0 };
		double y = 0x1.688e0a67cp-983, e;
		if (!h_check(relerr_expect(&v, y, &e) && h_same(fpl_wide_relerr(&v, y), e)))
			h_fail("fpl_wide_relerr near 2^-983: %a, expected %a",
			       fpl_wide_relerr(&v, y), e);
	}
	/* a zero with sticky stays one; ilogb INT64_MIN */
	memset(&z, 0, sizeof z);
	z.sticky = 1;
	fpl_wide_scale(&z, 0x1p1000);
	if (!h_check(z.hi == 0 && z.lo == 0 && z.sticky && fpl_wide_ilogb(&z) == INT64_MIN))
		h_fail("fpl_wide_scale of a zero with sticky");
	mpfr_clear(p256);
	h_note("wide maths: %llu scale+ilogb and %llu relerr cases", (unsigned long long)n,
	       (unsigned long long)(n + n / 4 + 1));
}

/* -------------------------------------------------- 4b. fpl_wide_hold */
/*
 * fpl_wide_hold's promise, checked against the engine's one rounding of
 * the number itself (fpl_round_wide, which the oracle sweeps above check):
 * where it returns 1, rounding the held binary64 into f (fpl_round), and
 * scaling it by 2^k first (fpl_round_parts, as APS does) while the number
 * and the scaled number lie in binary64's normal range, gives the same
 * bits and flags, in every mode, with the same draw.  The numbers sit on
 * f's boundaries: their top p bits random, then a run of equal bits (a
 * tie, or just above or below one, for every mode's decision) down to
 * around binary64's last bit, then random bits, zeros or only sticky, at
 * magnitudes about f's and binary64's range ends.  Where it must return 1
 * (p <= 51, sp with p + R <= 52) a 0 is a failure too.
 */
static void hold_wide(h_rng *r, fpl_wide *w, int p, int64_t E)
{
	unsigned __int128 s = ((unsigned __int128)h_rng_next(r) << 64) | h_rng_next(r);
	int a = p - 1 + (int)h_rng_below(r, 4), b = 48 + (int)h_rng_below(r, 24), i;
	int c = (int)h_rng_below(r, 2);

	if (h_rng_below(r, 4)) {	/* bits a..b-1 from the top all c */
		for (i = a; i < b && i < 128; i++) {
			unsigned __int128 bit = (unsigned __int128)1 << (127 - i);
			s = c ? s | bit : s & ~bit;
		}
		if (h_rng_below(r, 2) && b < 128)	/* nothing below the run */
			s &= ~(((unsigned __int128)1 << (127 - b)) - 1) << 1;
	}
	s |= (unsigned __int128)1 << 127;
	memset(w, 0, sizeof *w);
	w->negative = (int)h_rng_below(r, 2);
	w->hi = (uint64_t)(s >> 64);
	w->lo = (uint64_t)s;
	w->sticky = (int)h_rng_below(r, 2);
	w->exp = E - 127;
}

static int64_t hold_exponent(h_rng *r, const fpl_format *f)
{
	static const int edges[] = { -1077, -1075, -1074, -1073, -1060, -1023, -1022, -1021,
				     1022, 1023, 1024, 1030 };

	switch (h_rng_below(r, 4)) {
	case 0: return f->emin - f->m - 3 + (int64_t)h_rng_below(r, 6);
	case 1: return f->emax - 1 + (int64_t)h_rng_below(r, 3);
	case 2: return edges[h_rng_below(r, sizeof edges / sizeof edges[0])];
	default: return (int64_t)h_rng_below(r, 2111) - 1080;
	}
}

static void check_hold_one(h_rng *r, const fpl_format *f)
{
	fpl_rnd rnd = (fpl_rnd)h_rng_below(r, FPL_RND_COUNT);
	int R = h_rng_below(r, 2) ? 32 : 1 + (int)h_rng_below(r, 32);
	int K = rnd == FPL_RND_SP ? R + 1 : 2, b64 = f->m == 52 && f->max == DBL_MAX;
	int must = f->m + K <= 52 && f->emin - f->m - K >= -1074;
	int64_t E = hold_exponent(r, f);
	fpl_state s1, s2;
	fpl_wide w, w2;
	double h, want, got;
	int ex, k, e;

	hold_wide(r, &w, f->m + 1, E);
	ex = fpl_wide_hold(&w, f, rnd, R, &h);
	if (f->emax >= 1023 && E >= 1024 && rnd != FPL_RND_NE && rnd != FPL_RND_NA &&
	    rnd != FPL_RND_NZ)
		must = 0;	/* DBL_MAX may stay at f's max, without overflow */
	if (must && !h_check(ex))
		h_fail("fpl_wide_hold: 0 for %s in %s, R %d", f->name, fpl_rnd_name(rnd), R);
	if (!ex)
		return;
	fpl_state_init(&s1, 77);
	s1.sr_bits = R;
	s1.counter = h_rng_next(r) >> 20;
	s2 = s1;
	want = fpl_round_wide(f, &w, rnd, &s1);
	got = fpl_round(f, h, rnd, &s2);
	if (!h_check(h_same(want, got) && (b64 || s1.flags == s2.flags))) {
		char f1[64], f2[64];
		h_fail("fpl_wide_hold into %s, %s, R %d: held %a, rounds to %a (%s), the number "
		       "to %a (%s)", f->name, fpl_rnd_name(rnd), R, h, got,
		       h_flags(s2.flags, f2, sizeof f2), want, h_flags(s1.flags, f1, sizeof f1));
		print_wide("number", &w);
	}
	/* scaled by 2^k, both in binary64's normal range */
	k = (int)h_rng_below(r, 121) - 60;
	if (E < -1022 || E > 1023 || E + k < -1022 || E + k > 1023 || b64)
		return;
	w2 = w;
	w2.exp += k;
	fpl_state_init(&s1, 78);
	s1.sr_bits = R;
	s2 = s1;
	want = fpl_round_wide(f, &w2, rnd, &s1);
	h = frexp(fabs(h), &e);	/* held = h 2^e, 1/2 <= h < 1 */
	got = fpl_round_parts(f, w.negative, (int64_t)e - 53 + k, 0, (uint64_t)ldexp(h, 53), 0,
			      rnd, &s2);
	if (!h_check(h_same(want, got) && s1.flags == s2.flags)) {
		char f1[64], f2[64];
		h_fail("fpl_wide_hold into %s, %s, R %d, scaled by 2^%d: %a (%s), the number "
		       "%a (%s)", f->name, fpl_rnd_name(rnd), R, k, got,
		       h_flags(s2.flags, f2, sizeof f2), want, h_flags(s1.flags, f1, sizeof f1));
		print_wide("number", &w);
	}
}

static void check_hold(uint64_t n, const fpl_format *fmts, int nf)
{
	fpl_format f[32];
	int k = 0, i;
	h_rng r;

	for (i = 0; i < nf && k < 28; i++)
		f[k++] = fmts[i];
	fpl_format_ieee(&f[k++], 11, 50);	/* the widest exact one */
	fpl_format_ieee(&f[k++], 11, 51);	/* 52 bits: never exact */
	fpl_format_ieee(&f[k++], 8, 28);	/* exact but for sp at R > 23 */
	fpl_format_ieee(&f[k++], 11, 10);	/* fp16's precision, binary64's range */
	h_rng_init(&r, 0x401d);
	for (i = 0; i < k; i++)
		for (uint64_t j = 0; j < n; j++)
			check_hold_one(&r, &f[i]);
	h_note("fpl_wide_hold: %llu numbers x %d formats", (unsigned long long)n, k);
}

/* ------------------------------------------------------------ 5. hist */

struct tensor {
	size_t n, nix;
	double *x;
	double *a, *b;		/* the factors (0 for the special values) */
	fpl_inexact *ix;
};

static void tensor_free(struct tensor *t)
{
	free(t->x);
	free(t->a);
	free(t->b);
	free(t->ix);
}

/* Is x*s a binary64 (finite, nonzero, exact)? */
static int exact_times(double x, double s)
{
	double p = x * s;

	if (p == 0 || !isfinite(p))
		return 0;
	mpfr_set_d(t_a, x, MPFR_RNDN);
	mpfr_mul_d(t_w, t_a, s, MPFR_RNDN);	/* exact: 106 bits */
	return mpfr_cmp_d(t_w, p) == 0;
}

/*
 * n values read from strings: "0", "-0", "inf", "-inf", "nan" first, then
 * products a*b (placed about 2^-k so that the scaled ones cover the
 * format's range) written exactly, whose scaled b*s is a binary64 (so the
 * oracle's a*(b s) is the scaled number), and, where binary64 holds a*b,
 * whose a*b*s is a binary64 too (fpl_hist_add scales those in binary64).
 */
static int tensor_make(struct tensor *t, const struct fctx *c, size_t n, int k, double sc,
		       h_rng *r)
{
	static const char *sp[] = { "0", "-0", "inf", "-inf", "nan" };
	size_t i = 0;

	memset(t, 0, sizeof *t);
	t->x = malloc(n * sizeof *t->x);
	t->a = calloc(n, sizeof *t->a);
	t->b = calloc(n, sizeof *t->b);
	t->ix = malloc(n * sizeof *t->ix);
	if (!t->x || !t->a || !t->b || !t->ix)
		return -1;
	for (; i < 5 && i < n; i++) {
		fpl_wide w;
		if (fpl_parse_number(sp[i], &t->x[i], &w) != 0)
			h_fail("parse \"%s\"", sp[i]);
	}
	while (i < n) {
		double x[2], p;
		fpl_wide w;
		long X;
		char *D, *s;
		int rc;

		pick_product(&c->o, r, x);
		/* shift the product's place so that the scaled one covers the range */
		x[1] = ldexp(x[1], -k);
		p = x[0] * x[1];
		if (x[1] == 0 || !exact_times(x[1], sc))
			continue;	/* b s is not a binary64 */
		exact_product(x);
		if (isfinite(p) && mpfr_cmp_d(t_v, p) == 0 && !exact_times(p, sc))
			continue;	/* binary64 would not scale it exactly */
		D = exact_digits(t_v, &X);
		s = D ? write_decimal(mpfr_signbit(t_v) != 0, D, X, (int)h_rng_below(r, 4)) : NULL;
		free(D);
		if (!s)
			return -1;
		rc = fpl_parse_number(s, &t->x[i], &w);
		free(s);
		if (rc < 0) {
			h_fail("hist tensor: parse failed");
			return -1;
		}
		if (rc == 1) {
			t->ix[t->nix].pos = i;
			t->ix[t->nix++].w = w;
		}
		t->a[i] = x[0];
		t->b[i] = x[1];
		i++;
	}
	t->n = n;
	return 0;
}

/* Expected results, from the oracle and MPFR, for scale 2^k and mode rnd. */
struct hexpect {
	uint64_t c[6];	/* zeros nan_inf underflow subnormal normal overflow */
	uint64_t err_n;
	double err_max, amax, amin;
	uint64_t *hist, *hist_in;
};

static int bin_of_mpfr(mpfr_srcptr v)
{
	long e = (long)mpfr_get_exp(v) - 1;
	return e < FPL_HIST_EMIN ? FPL_HIST_EMIN : e > FPL_HIST_EMAX ? FPL_HIST_EMAX : (int)e;
}

static void hist_expect(const struct fctx *c, const struct tensor *t, double sc, fpl_rnd rnd,
			struct hexpect *e)
{
	memset(e->c, 0, sizeof e->c);
	memset(e->hist, 0, FPL_HIST_NBINS * sizeof *e->hist);
	memset(e->hist_in, 0, FPL_HIST_NBINS * sizeof *e->hist_in);
	e->err_n = 0;
	e->err_max = 0;
	e->amax = 0;
	e->amin = INFINITY;
	for (size_t i = 0; i < t->n; i++) {
		double x = t->x[i], ops[2] = { t->a[i], t->b[i] * sc }, rel;
		unsigned fl;
		double y;

		if (x == 0 && t->a[i] == 0) {
			e->c[0]++;
			continue;
		}
		if (t->a[i] == 0) {
			e->c[1]++;
			continue;
		}
		if (fabs(x) > 0 && isfinite(x)) {
			e->amax = fabs(x) > e->amax ? fabs(x) : e->amax;
			e->amin = fabs(x) < e->amin ? fabs(x) : e->amin;
		}
		y = oracle_op2(&c->o, OR_MUL, ops[0], ops[1], rnd, &fl);
		exact_product(ops);	/* the scaled number */
		e->hist[bin_of_mpfr(t_v) - FPL_HIST_EMIN]++;
		{
			double un[2] = { t->a[i], t->b[i] };
			exact_product(un);
			e->hist_in[bin_of_mpfr(t_v) - FPL_HIST_EMIN]++;
			exact_product(ops);
		}
		if (!isfinite(y) || (fl & FPL_FLAG_OVERFLOW)) {
			e->c[5]++;
			if (!isfinite(y))
				continue;
		} else if (y == 0) {
			e->c[2]++;
		} else if (fabs(y) < c->o.min_normal) {
			e->c[3]++;
		} else {
			e->c[4]++;
		}
		{
			fpl_wide w;
			mpfr_set(t_t, t_v, MPFR_RNDN);
			mpfr_to_wide(&w, t_t);
			if (relerr_expect(&w, y, &rel)) {
				e->err_n++;
				e->err_max = rel > e->err_max ? rel : e->err_max;
			} else {
				e->err_n++;	/* too wide to compute: count only */
			}
		}
	}
}

static void hist_compare(const char *what, const fpl_hist *h, const struct hexpect *e)
{
	static const char *names[6] = { "zeros", "nan_inf", "underflow", "subnormal", "normal",
					"overflow" };
	uint64_t g[6] = { h->zeros, h->nan_inf, h->became_zero, h->subnormal, h->normal, h->overflow };
	int bins_ok = 1;

	for (int i = 0; i < 6; i++)
		if (!h_check(g[i] == e->c[i]))
			h_fail("%s: %s = %llu, expected %llu", what, names[i], (unsigned long long)g[i],
			       (unsigned long long)e->c[i]);
	if (!h_check(h->err_n == e->err_n))
		h_fail("%s: err_n = %llu, expected %llu", what, (unsigned long long)h->err_n,
		       (unsigned long long)e->err_n);
	/* values binary64 holds get their error in binary64 arithmetic
	 * (two roundings): compare the maximum to within 2^-50 */
	if (!h_check(fabs(h->err_max - e->err_max) <= 0x1p-50 * e->err_max))
		h_fail("%s: err_max = %a, expected %a", what, h->err_max, e->err_max);
	if (!h_check(h->amax == e->amax && h->amin == e->amin))
		h_fail("%s: amax/amin = %a/%a, expected %a/%a", what, h->amax, h->amin, e->amax,
		       e->amin);
	for (int i = 0; i < FPL_HIST_NBINS; i++)
		if (h->hist[i] != e->hist[i] || h->hist_in[i] != e->hist_in[i]) {
			if (bins_ok)
				h_fail("%s: bin 2^%d: hist %llu (expected %llu), hist_in %llu "
				       "(expected %llu)", what, i + FPL_HIST_EMIN,
				       (unsigned long long)h->hist[i], (unsigned long long)e->hist[i],
				       (unsigned long long)h->hist_in[i],
				       (unsigned long long)e->hist_in[i]);
			bins_ok = 0;
		}
	h_check(bins_ok);
}

static void check_hist_format(const struct fctx *c, size_t n, h_rng *r)
{
	static const fpl_rnd modes[2] = { FPL_RND_NE, FPL_RND_TZ };
	struct hexpect e;
	fpl_hist *h = malloc(sizeof *h);
	char what[200], desc[200];

	e.hist = calloc(FPL_HIST_NBINS, sizeof *e.hist);
	e.hist_in = calloc(FPL_HIST_NBINS, sizeof *e.hist_in);
	if (!h || !e.hist || !e.hist_in) {
		h_fail("out of memory");
		goto out;
	}
	/* scale 1, 2^k (exact in the wide path: exp += k) and 3 2^k
	 * (fpl_wide_scale) */
	for (int v = 0; v < 3; v++) {
		int k = v ? (int)h_rng_below(r, 41) - 20 : 0;
		double sc;
		struct tensor t;

		if (v && k == 0)
			k = 7;
		sc = ldexp(v == 2 ? 3.0 : 1.0, k);
		if (tensor_make(&t, c, n, k, sc, r) != 0) {
			h_fail("hist tensor: out of memory");
			tensor_free(&t);
			goto out;
		}
		for (int m = 0; m < 2; m++) {
			fpl_hist_config cfg;
			int rc;

			fpl_hist_config_init(&cfg, &c->f);
			cfg.rnd = modes[m];
			cfg.scaling = FPL_HSCALE_FIXED;
			cfg.scale = sc;
			snprintf(what, sizeof what, "hist_add_exact %s mode %s scale %a (%zu values, "
				 "%zu inexact)", h_format_desc(&c->f, desc, sizeof desc),
				 fpl_rnd_name(modes[m]), sc, t.n, t.nix);
			rc = fpl_hist_init(h, &cfg);
			if (rc == 0)
				rc = fpl_hist_add_exact(h, t.x, t.n, t.ix, t.nix);
			if (rc == 0)
				rc = fpl_hist_finish(h);
			if (!h_check(rc == 0)) {
				h_fail("%s: status %d", what, rc);
				fpl_hist_release(h);
				continue;
			}
			hist_expect(c, &t, sc, modes[m], &e);
			hist_compare(what, h, &e);
			fpl_hist_release(h);
		}
		tensor_free(&t);
	}
out:
	free(h);
	free(e.hist);
	free(e.hist_in);
}

/*
 * The hand cases in fp16, ne, through the exact path and through
 * binary64 only (derived above with HAND): 65519.99999999999999999 is
 * normal (65504) exactly but its binary64 65520 overflows; 2^-25 + 10^-37
 * is subnormal (2^-24) exactly but its binary64 2^-25 is a tie that
 * rounds to 0 (underflow); 1e400 overflows exactly but its binary64 is
 * inf (nan_inf).
 */
static void check_hist_old_new(void)
{
	static const char *S[3] = { "65519.99999999999999999", "2.98023223876953125000000000001e-08",
				    "1e400" };
	/* zeros nan_inf underflow subnormal normal overflow */
	static const uint64_t exact[6] = { 0, 0, 0, 1, 1, 1 }, old[6] = { 0, 1, 1, 0, 0, 1 };
	double x[3];
	fpl_inexact ix[3];
	size_t nix = 0;
	fpl_hist_config cfg;
	fpl_hist *h = malloc(sizeof *h);
	fpl_format f;

	if (!h || fpl_format_lookup(&f, "fp16") != 0) {
		free(h);
		h_fail("hist old/new: setup");
		return;
	}
	for (size_t i = 0; i < 3; i++) {
		fpl_wide w;
		if (fpl_parse_number(S[i], &x[i], &w) == 1) {
			ix[nix].pos = i;
			ix[nix++].w = w;
		}
	}
	fpl_hist_config_init(&cfg, &f);
	for (int pass = 0; pass < 2; pass++) {
		const uint64_t *e = pass ? old : exact;
		int rc = fpl_hist_init(h, &cfg);
		if (rc == 0)
			rc = pass ? fpl_hist_add(h, x, 3) : fpl_hist_add_exact(h, x, 3, ix, nix);
		if (rc == 0)
			rc = fpl_hist_finish(h);
		uint64_t g[6] = { h->zeros, h->nan_inf, h->became_zero, h->subnormal, h->normal,
				  h->overflow };
		if (!h_check(rc == 0 && nix == 3 && !memcmp(g, e, sizeof g)))
			h_fail("hist %s of the issue's cases: status %d, counts %llu %llu %llu %llu "
			       "%llu %llu, expected %llu %llu %llu %llu %llu %llu",
			       pass ? "binary64" : "exact", rc, (unsigned long long)g[0],
			       (unsigned long long)g[1], (unsigned long long)g[2],
			       (unsigned long long)g[3], (unsigned long long)g[4],
			       (unsigned long long)g[5], (unsigned long long)e[0],
			       (unsigned long long)e[1], (unsigned long long)e[2],
			       (unsigned long long)e[3], (unsigned long long)e[4],
			       (unsigned long long)e[5]);
		fpl_hist_release(h);
	}
	/* bad inexact lists: unsorted, out of range */
	if (nix == 3) {
		fpl_inexact bad[2] = { ix[1], ix[0] };
		int rc1, rc2;
		fpl_hist_init(h, &cfg);
		rc1 = fpl_hist_add_exact(h, x, 3, bad, 2);
		bad[0] = ix[0];
		bad[1] = ix[2];
		bad[1].pos = 3;
		rc2 = fpl_hist_add_exact(h, x, 3, bad, 2);
		fpl_hist_release(h);
		if (!h_check(rc1 == FPL_EINVAL && rc2 == FPL_EINVAL))
			h_fail("hist_add_exact with a bad inexact list: %d, %d", rc1, rc2);
	}
	free(h);
}

/* --------------------------------------------------------------- main */

int main(void)
{
	static const char *named[] = { "fp16", "bf16", "e4m3fn", "e5m2", "fp32", "fp64", "e2m1" };
	enum { NF = sizeof named / sizeof named[0] + 1 };
	struct fctx c[NF];
	fpl_format fmts[NF];
	uint64_t n = h_sanitized() ? 1500 : h_scale(15000, 150000);
	pthread_t th;
	h_rng r;
	int nf = 0;

	h_init("tnumber");
	/* 2. in a fresh thread first: MPFR's default exponent range */
	if (!h_check(pthread_create(&th, NULL, hand_thread, NULL) == 0))
		h_fail("cannot create a thread");
	else
		pthread_join(th, NULL);
	/* from here on this thread uses MPFR's widest range (as the oracle does) */
	mpfr_set_emin(mpfr_get_emin_min());
	mpfr_set_emax(mpfr_get_emax_max());
	check_hand(0);

	h_rng_init(&r, 9);
	for (size_t i = 0; i < NF; i++) {
		fpl_format *f = &fmts[nf];
		if (i + 1 < NF) {
			if (!h_check(fpl_format_lookup(f, named[i]) == 0)) {
				h_fail("lookup %s", named[i]);
				continue;
			}
		} else {
			int e = 2 + (int)h_rng_below(&r, 10), m = (int)h_rng_below(&r, 53);
			if (!h_check(fpl_format_ieee(f, e, m) == 0)) {
				h_fail("fpl_format_ieee(%d, %d)", e, m);
				continue;
			}
		}
		memset(&c[nf], 0, sizeof c[nf]);
		c[nf].f = *f;
		oracle_fmt_init(&c[nf].o, f);
		c[nf].n = n;
		c[nf].salt = (uint64_t)nf + 1;
		nf++;
	}

	/* 1. */
	for (int i = 0; i < nf; i++) {
		unsigned long long before = h_failures();
		char desc[200];
		h_parallel(h_threads(), parse_worker, &c[i]);
		h_note("%-40s %llu products through strings x 7 modes, %llu failures",
		       h_format_desc(&c[i].f, desc, sizeof desc), (unsigned long long)n,
		       (unsigned long long)(h_failures() - before));
	}

	/* 3, 4. */
	check_wide_maths(h_sanitized() ? 10000 : h_scale(100000, 1000000), fmts, nf);
	check_hold(h_sanitized() ? 3000 : h_scale(30000, 300000), fmts, nf);

	/* 5. */
	scratch_init();
	check_hist_old_new();
	for (int i = 0; i < nf; i++) {
		unsigned long long before = h_failures();
		char desc[200];
		size_t hn = i == 0 ? 20000 : h_sanitized() ? 500 : h_long() ? 30000 : 3000;
		check_hist_format(&c[i], hn, &r);
		h_note("%-40s hist_add_exact, %zu values x 3 scales x 2 modes, %llu failures",
		       h_format_desc(&c[i].f, desc, sizeof desc), hn,
		       (unsigned long long)(h_failures() - before));
	}
	scratch_done();
	return h_done();
}

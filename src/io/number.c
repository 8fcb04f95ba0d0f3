/* SPDX-License-Identifier: MIT */
/*
 * number.c - fpl_parse_number and arithmetic on the exact numbers it
 * returns (fplab/number.h).
 *
 * Why 128 bits toward zero plus a sticky bit suffice: a target format has
 * at most 53 significant bits and stochastic rounding reads at most 32
 * bits below the last kept one, so every rounding decision (round bit,
 * the bits below it, their being all zero) is a function of the leading
 * 53 + 32 + 1 bits and of whether anything nonzero follows.  Truncating
 * toward zero keeps the leading bits and folds the rest into sticky, so
 * fpl_round_parts() sees exactly what it would see for the number itself.
 * MPFR does the decimal-to-binary conversion (mpfr_strtofr is correctly
 * rounded, and its ternary value says whether bits were lost).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>
#include <pthread.h>
#include <errno.h>

#include <gmp.h>
#include <mpfr.h>

#include <fplab/error.h>
#include <fplab/number.h>
#include <fplab/ops.h>

/* Is s (after its sign) an inf or nan spelling rather than a numeral? */
static int special_spelling(const char *s)
{
	if (*s == '+' || *s == '-')
		s++;
	return tolower((unsigned char)*s) == 'i' || tolower((unsigned char)*s) == 'n';
}

static void restore_range(mpfr_exp_t emin, mpfr_exp_t emax)
{
	mpfr_set_emin(emin);
	mpfr_set_emax(emax);
}

static fpl_format fp64_format;

static void fp64_init(void)
{
	fpl_format_lookup(&fp64_format, "fp64");
}

/* *w rounded to nearest-even binary64, once. */
static double nearest_binary64(const fpl_wide *w)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	fpl_state st;

	pthread_once(&once, fp64_init);
	fpl_state_init(&st, 0);
	return fpl_round_wide(&fp64_format, w, FPL_RND_NE, &st);
}

/*
 * "nan(0xP)", "snan", "snan(0xP)" with an optional sign: a NaN with the
 * binary64 payload P (the 51 fraction bits below the quiet bit; decimal
 * or 0x hex), quiet or signalling.  Returns 1 and sets *out, 0 when s is
 * not such a spelling, FPL_EPARSE for a bad payload (too wide, or a
 * signalling NaN with payload 0, which would be an infinity).
 */
static int nan_spelling(const char *s, double *out)
{
	int neg = *s == '-', sig;
	unsigned long long p = 0;
	uint64_t bits;
	char *end;

	if (*s == '+' || *s == '-')
		s++;
	sig = (s[0] == 's' || s[0] == 'S');
	if (strncasecmp(s + sig, "nan", 3))
		return 0;
	s += sig + 3;
	if (!*s && !sig)
		return 0;	/* plain "nan": strtod's */
	if (*s == '(') {
		if (!isdigit((unsigned char)s[1]))
			return FPL_EPARSE;
		errno = 0;
		p = strtoull(s + 1, &end, 0);
		if (errno || *end != ')' || end[1])
			return FPL_EPARSE;
	} else if (*s)
		return FPL_EPARSE;
	else
		p = 1;	/* "snan": the smallest signalling payload */
	if (p >> 51 || (sig && p == 0))
		return FPL_EPARSE;
	bits = (uint64_t)neg << 63 | 0x7ffull << 52 | (sig ? 0 : 1ull << 51) | p;
	memcpy(out, &bits, sizeof *out);
	return 1;
}

FPL_API int fpl_parse_number(const char *s, double *out, fpl_wide *w)
{
	uint64_t limb[2] = { 0, 0 };
	size_t nlimb;
	char *end;
	double d;
	mpfr_t v;
	mpz_t z;
	int t, rc;

	if (!s || !*s || isspace((unsigned char)*s) || !out || !w)
		return FPL_EPARSE;
	rc = nan_spelling(s, out);
	if (rc)
		return rc < 0 ? rc : 0;
	d = strtod(s, &end);
	if (end == s || *end)
		return FPL_EPARSE;
	*out = d;	/* ERANGE is fine: +-inf or the rounded tiny value */
	if (special_spelling(s))
		return 0;
	/* Toward zero at 128 bits: the truncation, and t != 0 when bits were
	 * lost.  MPFR's widest exponent range (about 2^+-2^62) keeps 1e-400 and
	 * 1e400 as they are; beyond it, RNDZ gives 0 or the largest number
	 * with t != 0, which round like the exact value. */
	/* MPFR's exponent range is the calling thread's: widen it here, so
	 * that a caller who narrowed it (binary64 emulation does) still gets
	 * 1e-400 as itself */
	mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
	mpfr_set_emin(mpfr_get_emin_min());
	mpfr_set_emax(mpfr_get_emax_max());
	mpfr_init2(v, 128);
	t = mpfr_strtofr(v, s, &end, 0, MPFR_RNDZ);
	if (*end) {	/* strtod's grammar accepted it; MPFR must too */
		mpfr_clear(v);
		restore_range(emin, emax);
		return FPL_EPARSE;
	}
	d = mpfr_get_d(v, MPFR_RNDN);
	if (t == 0 && mpfr_cmp_d(v, d) == 0) {	/* binary64 holds it: exact */
		*out = d;
		mpfr_clear(v);
		restore_range(emin, emax);
		return 0;
	}
	memset(w, 0, sizeof *w);
	w->negative = mpfr_signbit(v) != 0;
	w->sticky = t != 0;
	rc = 1;
	if (!mpfr_zero_p(v)) {
		mpz_init(z);
		w->exp = mpfr_get_z_2exp(z, v);	/* |v| = |z| 2^exp, |z| < 2^128 */
		mpz_export(limb, &nlimb, -1, sizeof limb[0], 0, 0, z);	/* low word first */
		w->lo = limb[0];
		w->hi = limb[1];
		mpz_clear(z);
	}
	mpfr_clear(v);
	restore_range(emin, emax);
	/* the nearest binary64 from the exact number, not from strtod: some C
	 * libraries misround deep subnormals (glibc 2.36 drops the bits below
	 * the round bit there) */
	*out = nearest_binary64(w);
	return rc;
}

FPL_API double fpl_round_wide(const fpl_format *f, const fpl_wide *w, fpl_rnd rnd,
			      fpl_state *st)
{
	return fpl_round_parts(f, w->negative, w->exp, w->hi, w->lo, w->sticky, rnd, st);
}

/*
 * The fast path of fpl_wide_relerr, in binary64 with error-free steps
 * (Ziv's strategy: an approximation with an error bound; when the bound
 * cannot decide the rounding, return 0 and let MPFR decide).
 *
 * v = N 2^exp with N < 2^128 splits exactly into three binary64 pieces
 * A1 + A2 + A3 (53, 53 and at most 22 bits) when every piece is a normal
 * or subnormal binary64 (exp >= -1074, v < 2^1023).  d = y - v: TwoSum
 * gives s + e = y - A1 exactly; c = e - A2 - A3 is rounded twice, with an
 * error below 2^-103 |v| (e, A2 and A3 are below 2^-51 |v|).  Then
 * q = d / v is formed as qh + ql, qh = Dh / A1 and the residual exact by
 * fma; its error is below 2^-98 q + 2^-100 absolute.  When qh + ql +-
 * that bound rounds to the same binary64, it is the correctly rounded
 * ratio (tests/tnumber.c checks it against MPFR).  Those bounds are
 * relative, so they hold only while no step underflows: a step whose
 * result is subnormal (the residual of qh, about 2^-106 |d|, is for
 * |v| near 2^-983) errs by up to 2^-1075 absolute, 2^-1075 / |v| in q.
 * Hence |v| >= 2^-900 (exp + L >= -900): then every such error is below
 * 2^-170 in q, inside the bound's 2^-100; smaller v go to MPFR.
 */
static int relerr_fast(const fpl_wide *w, double y, double *out)
{
	int L = w->hi ? 128 - __builtin_clzll(w->hi) : 64 - __builtin_clzll(w->lo);
	unsigned __int128 n = ((unsigned __int128)w->hi << 64) | w->lo, r;
	double a1, a2, a3, A1, A2, A3, s, e, c, bb, dh, dl, qh, ql, res, err, v2, q1, q2;
	int sh = L - 53, sh2;

	if (sh < 0 || w->exp < -1074 || w->exp + L < -900 || w->exp + L > 1022 || !isfinite(y))
		return 0;
	a1 = (double)(uint64_t)(n >> sh);
	r = n - ((n >> sh) << sh);
	sh2 = sh > 53 ? sh - 53 : 0;
	a2 = (double)(uint64_t)(r >> sh2);
	a3 = (double)(uint64_t)(r - ((r >> sh2) << sh2));
	A1 = ldexp(a1, (int)w->exp + sh);
	A2 = ldexp(a2, (int)w->exp + sh2);
	A3 = ldexp(a3, (int)w->exp);
	if (w->negative) {
		A1 = -A1;
		A2 = -A2;
		A3 = -A3;
	}
	s = y - A1;		/* TwoSum(y, -A1) */
	bb = s - y;
	e = (y - (s - bb)) + (-A1 - bb);
	c = (e - A2) - A3;
	dh = s + c;		/* Fast2Sum is not safe: TwoSum again */
	bb = dh - s;
	dl = (s - (dh - bb)) + (c - bb);
	v2 = A2 + A3;
	qh = dh / A1;
	res = fma(-qh, A1, dh);	/* exact */
	ql = (res + dl - qh * v2) / (A1 + v2);
	err = 0x1p-98 * fabs(qh) + 0x1p-100;
	q1 = qh + (ql + err);
	q2 = qh + (ql - err);
	if (q1 != q2 || fabs(q1) < 0x1p-1000)
		return 0;
	*out = fabs(q1);
	return 1;
}

FPL_API double fpl_wide_relerr(const fpl_wide *w, double y)
{
	uint64_t limb[2] = { w->lo, w->hi };
	mpfr_t v, d, q;
	mpz_t z;
	double e;

	if (!w->hi && !w->lo)
		return y == 0 ? 1 : INFINITY;	/* v is below every binary64 */
	if (y == 0)
		return 1;
	if (relerr_fast(w, y, &e))
		return e;
	mpz_init(z);
	mpz_import(z, 2, -1, sizeof limb[0], 0, 0, limb);
	mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
	mpfr_set_emin(mpfr_get_emin_min());
	mpfr_set_emax(mpfr_get_emax_max());
	mpfr_inits2(256, v, d, (mpfr_ptr)0);
	mpfr_init2(q, 53);
	mpfr_set_z_2exp(v, z, w->exp, MPFR_RNDN);	/* exact: 128 bits */
	if (w->negative)
		mpfr_neg(v, v, MPFR_RNDN);
	/* y is v rounded: the difference spans about 128 bits, exact in 256 */
	mpfr_sub_d(d, v, y, MPFR_RNDN);
	mpfr_div(q, d, v, MPFR_RNDN);
	e = fabs(mpfr_get_d(q, MPFR_RNDN));
	mpfr_clears(v, d, q, (mpfr_ptr)0);
	mpz_clear(z);
	restore_range(emin, emax);
	return e;
}

static int clz64(uint64_t x)
{
	return x ? __builtin_clzll(x) : 64;
}

FPL_API int64_t fpl_wide_ilogb(const fpl_wide *w)
{
	if (w->hi)
		return w->exp + 127 - clz64(w->hi);
	if (w->lo)
		return w->exp + 63 - clz64(w->lo);
	return INT64_MIN;
}

/*
 * (hi:lo) * m, m the 53-bit integer significand of s, is a product of at
 * most 181 bits held exactly in three words; the top 128 bits are kept
 * and the rest goes to sticky.  Truncation again, so the sticky argument
 * of the file comment still holds.
 */
FPL_API void fpl_wide_scale(fpl_wide *w, double s)
{
	int e;
	uint64_t m = (uint64_t)ldexp(frexp(s, &e), 53);	/* s = m 2^(e-53) */
	unsigned __int128 lo = (unsigned __int128)w->lo * m;
	unsigned __int128 hi = (unsigned __int128)w->hi * m + (uint64_t)(lo >> 64);
	uint64_t p0 = (uint64_t)lo, p1 = (uint64_t)hi, p2 = (uint64_t)(hi >> 64);
	int shift;

	w->exp += e - 53;
	if (!p2) {
		w->hi = p1;
		w->lo = p0;
		return;
	}
	/* drop the low `shift` bits of p2:p1:p0 so that 128 remain; p2 < 2^53
	 * (hi < 2^64, m < 2^53), so 1 <= shift <= 53 and no shift is by 64 */
	shift = 64 - clz64(p2);
	w->sticky |= (p0 << (64 - shift)) != 0;
	w->lo = (p0 >> shift) | (p1 << (64 - shift));
	w->hi = (p1 >> shift) | (p2 << (64 - shift));
	w->exp += shift;
}

/*
 * Reading a number once (fpl_wide_hold).
 *
 * Round to odd, RO(v): v truncated to binary64's quantum q64(v) (2^(E-52)
 * for 2^E <= |v| < 2^(E+1), at least 2^-1074), its last bit then set
 * when bits were lost; beyond DBL_MAX, DBL_MAX (odd); below 2^-1074,
 * 2^-1074.  Then RO(v) and v agree on (a) their sign, (b) whether they
 * are multiples of any quantum Q >= 2 q64 (an inexact RO(v) is an odd
 * multiple of q64), (c) their truncation to any such multiple, and (d)
 * which side of the midpoint of two consecutive multiples of Q >= 4 q64
 * they lie on, and whether they lie on it (the midpoint is a multiple of
 * 2 q64; RO(v) moves v by less than q64 without crossing a multiple of
 * q64, and is on the midpoint only when v is).  f rounds at quantum
 * qF(x) = 2^(max(E, emin) - m) (or coarser: no subnormals), so when
 * qF >= 4 q64 at every magnitude, every deterministic mode (ne na nz: (d);
 * tp tn tz: (a)(c); od and the inexact flag: (b)(c)) picks the same
 * neighbour for RO(v) as for v.  sp reads the R bits below qF by
 * truncation, and RO(v) holds them exactly when qF >= 2^(R+1) q64; se
 * reads only (b).  qF >= 2^K q64 everywhere reads m + K <= 52 in
 * binary64's normal range and emin - m - K >= -1074 below it.
 *
 * The flags follow the value: tininess (before rounding: |v| < 2^emin,
 * with 2^emin an even multiple of q64, so (d)-like; after: the rounding
 * at precision m+1 with unbounded exponent, the same argument) and
 * overflow.  Beyond DBL_MAX: when emax < 1023, DBL_MAX and v both lie
 * beyond f's top binade, and each mode overflows both alike.  When emax =
 * 1023, f's rounding threshold (2 - 2^-(m+1)) 2^1023 lies below DBL_MAX
 * (m <= 50), so ne, na and nz overflow both; the other modes may keep
 * DBL_MAX at f's max without the overflow that v >= 2^1024 raises, and
 * fpl_wide_hold says so.
 *
 * Scaling by 2^k (APS, a power-of-two loss scale): RO(v) 2^k = RO(v 2^k)
 * while neither leaves binary64's normal range, so the argument holds
 * for the scaled value.  Otherwise (53-bit formats): v rounded in rnd
 * into binary64 is v rounded into f when f is binary64 (f rounds it
 * again exactly); a 52-bit format would round twice.
 */
static int is_binary64(const fpl_format *f)
{
	return f->m == 52 && f->min_subnormal == 0x1p-1074 && f->max == 0x1.fffffffffffffp1023 &&
	       !f->daz;
}

FPL_API int fpl_wide_hold(const fpl_wide *w, const fpl_format *f, fpl_rnd rnd, int sr_bits,
			  double *out)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	int R = sr_bits < 1 ? 1 : sr_bits > 32 ? 32 : sr_bits;
	int K = rnd == FPL_RND_SP ? R + 1 : 2;
	int stochastic = rnd == FPL_RND_SP || rnd == FPL_RND_SE;
	fpl_state st;

	pthread_once(&once, fp64_init);
	fpl_state_init(&st, 0);
	if (f->m + K <= 52 && f->emin - f->m - K >= -1074) {
		*out = fpl_round_wide(&fp64_format, w, FPL_RND_OD, &st);
		/* DBL_MAX standing for a larger v: only the nearest modes
		 * overflow both when f's top binade is binary64's */
		return f->emax < 1023 || fpl_wide_ilogb(w) < 1024 || rnd == FPL_RND_NE ||
		       rnd == FPL_RND_NA || rnd == FPL_RND_NZ;
	}
	if (stochastic) {
		*out = f->m <= 51 ? fpl_round_wide(&fp64_format, w, FPL_RND_OD, &st)
			: fpl_round_wide(&fp64_format, w, FPL_RND_NE, &st);
		return 0;
	}
	*out = fpl_round_wide(&fp64_format, w, rnd, &st);
	return is_binary64(f);
}

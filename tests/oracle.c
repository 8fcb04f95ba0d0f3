/* SPDX-License-Identifier: MIT */
/*
 * tests/oracle.c - the MPFR reference (see oracle.h).  Written from
 * src/engine/SEMANTICS.md and the recipe in oracle.h without looking at
 * the engine's rounding code.
 *
 * The finite case, for an exact nonzero result x of sign s:
 *  1. Z and A: x rounded at precision p toward zero and away from zero in
 *     MPFR's wide range (no exponent limits): the two candidates with
 *     unbounded exponent.  The mode picks one ("away" or not): ne from
 *     MPFR's RNDN; na/nz: RNDN unless x is exactly the midpoint (checked by
 *     computing x at precision p+3, which holds any midpoint exactly); od:
 *     Z unless inexact and Z is an even multiple of the quantum; tp/tn by
 *     the sign; sp: T + r >= 2^R with T = x truncated R bits below the
 *     quantum (x computed at the matching precision in RNDZ); se: bit 63.
 *  2. The pick W decides overflow (|W| > max) and tininess after rounding
 *     (|W| < 2^emin).  Overflow results follow SEMANTICS.md's table.
 *  3. Below 2^emin, the same choice is made again among the bounded
 *     candidates, each obtained by oracle.h's recipe: compute at p, narrow
 *     the range (emin-m+1 with subnormals, emin+1 without, emax+1), call
 *     mpfr_check_range and mpfr_subnormalize with the ternary and mode.
 *  4. ftz flushes a tiny result; underflow = tiny and inexact; fnuz has no
 *     -0; e8m0 has no zero and no sign.
 */
#include "oracle.h"

#include <math.h>
#include <mpfr.h>
#include <string.h>

#define SIGN_BIT 0x8000000000000000ull
#define EXP_MASK 0x7ff0000000000000ull
#define QUIET 0x0008000000000000ull
#define FRAC 0x000fffffffffffffull

static _Thread_local int t_init;
static _Thread_local mpfr_t t_a, t_b, t_c;	/* operands, 53 bits */
static _Thread_local mpfr_t t_z, t_aw, t_n, t_u, t_v, t_max, t_zs, t_as;
static _Thread_local mpz_t t_q;
static _Thread_local oracle_op t_op;

static uint64_t bits(double x)
{
	uint64_t u;
	memcpy(&u, &x, sizeof u);
	return u;
}

static double from_bits(uint64_t u)
{
	double x;
	memcpy(&x, &u, sizeof x);
	return x;
}

static int is_nan(double x)
{
	return (bits(x) & ~SIGN_BIT) > EXP_MASK;
}

static int is_snan(double x)
{
	return is_nan(x) && !(bits(x) & QUIET);
}

static int sign_of(double x)
{
	return (int)(bits(x) >> 63);
}

static void setup(void)
{
	if (t_init)
		return;
	mpfr_inits2(53, t_a, t_b, t_c, t_z, t_aw, t_n, t_u, t_v, t_max, t_zs, t_as, (mpfr_ptr)0);
	mpz_init(t_q);
	/* the wide range: MPFR's defaults are far beyond binary64's */
	mpfr_set_emin(mpfr_get_emin_min());
	mpfr_set_emax(mpfr_get_emax_max());
	t_init = 1;
}

void oracle_thread_done(void)
{
	if (!t_init)
		return;
	mpfr_clears(t_a, t_b, t_c, t_z, t_aw, t_n, t_u, t_v, t_max, t_zs, t_as, (mpfr_ptr)0);
	mpz_clear(t_q);
	mpfr_free_cache();
	t_init = 0;
}

/* ------------------------------------------------------------ formats */

void oracle_fmt_init(oracle_fmt *o, const fpl_format *f)
{
	memset(o, 0, sizeof *o);
	o->e = f->e;
	o->m = f->m;
	o->bias = f->bias;
	o->sub = f->subnormal;
	o->daz = f->daz;
	o->spec = f->specials;
	o->saturate = f->overflow != FPL_OVF_INF || f->specials == FPL_SPEC_NONE;
	/* SEMANTICS.md "Saturation and infinities": only saturate-keep-inf
	 * keeps an exact infinity, and only where the format has one */
	o->keep_inf = f->overflow == FPL_OVF_SATURATE_KEEP_INF || !o->saturate;
	o->tiny = f->tininess;
	o->nan = f->nan_rule;
	o->explim = f->explim;
	if (o->spec == FPL_SPEC_E8M0) {
		o->emin = -o->bias;	/* code 0 is 2^-bias: no zero, no subnormals */
		o->emax = (1 << o->e) - 2 - o->bias;
	} else {
		o->emin = 1 - o->bias;
		o->emax = (1 << o->e) - (o->spec == FPL_SPEC_IEEE ? 2 : 1) - o->bias;
	}
	if (f->emax_limit_set)
		o->emax = f->emax_limit;
	if (!f->explim) {
		o->emin = -1022;
		o->emax = 1023;
	}
	if (o->spec == FPL_SPEC_E8M0)
		o->max = ldexp(1, o->emax);
	else if (o->emax < o->emin)	/* e = 1, IEEE-style: only subnormals are finite */
		o->max = ldexp((double)((1ull << o->m) - 1), o->emin - o->m);
	else if (o->spec == FPL_SPEC_FN && f->explim
		 && o->emax == (1 << o->e) - 1 - o->bias)
		/* the all-ones fraction of the encoding's top binade is NaN;
		 * below a cap, or in binary64's range, every fraction is finite */
		o->max = ldexp(2 - ldexp(1, 1 - o->m), o->emax);
	else
		o->max = ldexp(2 - ldexp(1, -o->m), o->emax);
	o->min_normal = ldexp(1, o->emin);
}

int oracle_nbits(const oracle_fmt *o)
{
	return o->spec == FPL_SPEC_E8M0 ? o->e + o->m : 1 + o->e + o->m;
}

static uint64_t top_mask(int k)	/* the top k bits of a binary64 fraction */
{
	return k <= 0 ? 0 : k >= 52 ? FRAC : FRAC & ~(FRAC >> k);
}

static double nan_canonical(const oracle_fmt *o)
{
	if (o->spec == FPL_SPEC_FN)
		return from_bits(EXP_MASK | top_mask(o->m) | QUIET);
	return from_bits(EXP_MASK | QUIET);
}

/* The NaN of an invalid operation. */
static double nan_default(const oracle_fmt *o)
{
	if (o->nan == FPL_NAN_CANONICAL)
		return nan_canonical(o);
	switch (o->spec) {
	case FPL_SPEC_FN:
		return from_bits(SIGN_BIT | EXP_MASK | top_mask(o->m) | QUIET);
	case FPL_SPEC_FNUZ:
	case FPL_SPEC_E8M0:
		return from_bits(EXP_MASK | QUIET);
	default:
		return from_bits(SIGN_BIT | EXP_MASK | QUIET);
	}
}

/* A NaN operand, quieted and narrowed to the format (x86 rule). */
static double nan_narrow(const oracle_fmt *o, double v)
{
	uint64_t u = bits(v) | QUIET;

	if (o->nan == FPL_NAN_CANONICAL)
		return nan_canonical(o);
	switch (o->spec) {
	case FPL_SPEC_IEEE:
		return from_bits((u & (SIGN_BIT | EXP_MASK | top_mask(o->m))) | QUIET);
	case FPL_SPEC_FN:
		return from_bits((u & SIGN_BIT) | EXP_MASK | top_mask(o->m) | QUIET);
	case FPL_SPEC_NONE:
		return from_bits((u & SIGN_BIT) | EXP_MASK | QUIET);
	default:
		return from_bits(EXP_MASK | QUIET);
	}
}

/* The NaN that replaces an overflowing result in fn/fnuz/e8m0. */
static double nan_overflow(const oracle_fmt *o, int s)
{
	if (o->nan == FPL_NAN_CANONICAL)
		return nan_canonical(o);
	if (o->spec == FPL_SPEC_FN)
		return from_bits((s ? SIGN_BIT : 0) | EXP_MASK | top_mask(o->m) | QUIET);
	return from_bits(EXP_MASK | QUIET);
}

double oracle_decode(const oracle_fmt *o, uint64_t c, int *ok)
{
	int nb = oracle_nbits(o);
	uint64_t frac, ex, allexp = (1ull << o->e) - 1;
	int s;
	double v;

	*ok = 1;
	c &= nb >= 64 ? ~0ull : (1ull << nb) - 1;
	frac = c & ((1ull << o->m) - 1);
	ex = (c >> o->m) & allexp;
	s = o->spec == FPL_SPEC_E8M0 ? 0 : (int)((c >> (o->e + o->m)) & 1);
	switch (o->spec) {
	case FPL_SPEC_E8M0:
		if (ex == allexp)
			return from_bits(EXP_MASK | QUIET);
		return ldexp(1, (int)ex - o->bias);
	case FPL_SPEC_IEEE:
		if (ex == allexp) {
			if (frac == 0)
				return s ? -INFINITY : INFINITY;
			return from_bits((s ? SIGN_BIT : 0) | EXP_MASK | (frac << (52 - o->m)));
		}
		break;
	case FPL_SPEC_FN:
		if (ex == allexp && frac == (1ull << o->m) - 1)
			return from_bits((s ? SIGN_BIT : 0) | EXP_MASK | (frac << (52 - o->m)));
		break;
	case FPL_SPEC_FNUZ:
		if (s && ex == 0 && frac == 0)
			return from_bits(EXP_MASK | QUIET);
		break;
	default:
		break;
	}
	if (ex == 0)
		v = ldexp((double)frac, 1 - o->bias - o->m);
	else
		v = ldexp((double)(frac | (1ull << o->m)), (int)ex - o->bias - o->m);
	return s ? -v : v;
}

/* ------------------------------------------------------------ MPFR core */

/* The operation at precision prec in mode rm, in the current range. */
static int op_at(mpfr_ptr r, mpfr_prec_t prec, mpfr_rnd_t rm)
{
	mpfr_set_prec(r, prec);
	switch (t_op) {
	case OR_ROUND:
	case OR_CONVERT:
		return mpfr_set(r, t_a, rm);
	case OR_ADD:
		return mpfr_add(r, t_a, t_b, rm);
	case OR_SUB:
		return mpfr_sub(r, t_a, t_b, rm);
	case OR_MUL:
		return mpfr_mul(r, t_a, t_b, rm);
	case OR_DIV:
		return mpfr_div(r, t_a, t_b, rm);
	case OR_SQRT:
		return mpfr_sqrt(r, t_a, rm);
	case OR_FMA:
		return mpfr_fma(r, t_a, t_b, t_c, rm);
	}
	return 0;
}

/* oracle.h's recipe: narrow the range, check_range + subnormalize. */
static int bound(const oracle_fmt *o, mpfr_ptr r, int t, mpfr_rnd_t rm)
{
	mpfr_exp_t emin0 = mpfr_get_emin(), emax0 = mpfr_get_emax();

	mpfr_set_emin(o->sub == FPL_SUB_NO_ROUND ? o->emin + 1 : o->emin - o->m + 1);
	mpfr_set_emax(o->emax + 1 > o->emin + 1 ? o->emax + 1 : o->emin + 1);
	t = mpfr_check_range(r, t, rm);
	if (o->sub != FPL_SUB_NO_ROUND)
		t = mpfr_subnormalize(r, t, rm);
	mpfr_set_emin(emin0);
	mpfr_set_emax(emax0);
	return t;
}

static int rounded(const oracle_fmt *o, mpfr_ptr r, mpfr_rnd_t rm, int bounded)
{
	int t = op_at(r, o->m + 1, rm);
	return bounded ? bound(o, r, t, rm) : t;
}

/* Is r an odd multiple of 2^qexp?  (r is a multiple of it.) */
static int odd_at(mpfr_srcptr r, long qexp)
{
	mpfr_exp_t e;

	if (mpfr_zero_p(r))
		return 0;
	e = mpfr_get_z_2exp(t_q, r);
	if (e > qexp)
		return 0;
	mpz_abs(t_q, t_q);
	return mpz_tstbit(t_q, (mp_bitcnt_t)(qexp - e));
}

/* Is the exact result the midpoint of z and a? */
static int is_midpoint(const oracle_fmt *o, mpfr_srcptr z, mpfr_srcptr a)
{
	int t;

	mpfr_set_prec(t_v, o->m + 8);
	mpfr_add(t_v, z, a, MPFR_RNDN);	/* exact: both are multiples of one quantum */
	mpfr_div_2ui(t_v, t_v, 1, MPFR_RNDN);
	t = op_at(t_u, o->m + 4, MPFR_RNDZ);
	return t == 0 && mpfr_equal_p(t_u, t_v);
}

/* T = floor((|x| - |z|) / 2^qexp * 2^R), z = x truncated at 2^qexp,
 * E = floor(log2 |x|). */
static uint64_t sr_T(mpfr_srcptr z, long qexp, int R, long E)
{
	long P = E - (qexp - R) + 1;

	if (P < 1)
		return 0;
	op_at(t_u, P, MPFR_RNDZ);
	mpfr_set_prec(t_v, P + 2);
	mpfr_abs(t_u, t_u, MPFR_RNDN);
	if (mpfr_signbit(z))	/* |u| - |z|, exact in P+2 bits */
		mpfr_add(t_v, t_u, z, MPFR_RNDN);
	else
		mpfr_sub(t_v, t_u, z, MPFR_RNDN);
	mpfr_mul_2si(t_v, t_v, R - qexp, MPFR_RNDN);
	return mpfr_get_uj(t_v, MPFR_RNDZ);
}

/* Pick between z (toward zero) and a (away): 1 for a. */
static int choose(const oracle_fmt *o, fpl_rnd rnd, int bounded, mpfr_srcptr z, mpfr_srcptr a,
		  int exact, int s, long qexp, long E, uint64_t draw, int R, uint64_t *T)
{
	*T = 0;
	if (exact)
		return 0;
	switch (rnd) {
	case FPL_RND_NA:
	case FPL_RND_NZ:
		if (is_midpoint(o, z, a))
			return rnd == FPL_RND_NA;
		/* fall through */
	case FPL_RND_NE:
		rounded(o, t_n, MPFR_RNDN, bounded);
		return !mpfr_equal_p(t_n, z);
	case FPL_RND_TP:
		return !s;
	case FPL_RND_TN:
		return s;
	case FPL_RND_TZ:
		return 0;
	case FPL_RND_OD:
		return !odd_at(z, qexp);
	case FPL_RND_SP:
		*T = sr_T(z, qexp, R, E);
		return *T + (draw >> (64 - R)) >= (1ull << R);
	case FPL_RND_SE:
		return (int)(draw >> 63);
	default:
		return 0;
	}
}

static void set(oracle_res *res, double v, unsigned fl)
{
	res->value = v;
	res->flags = fl;
}

/* An overflow: the mode's table, then the format's lack of inf. */
static void overflow(const oracle_fmt *o, fpl_rnd rnd, int s, int away, int trunc_over,
		     double *v, unsigned *fl)
{
	int inf;

	*fl = FPL_FLAG_OVERFLOW | FPL_FLAG_INEXACT;
	switch (rnd) {
	case FPL_RND_TZ:
	case FPL_RND_OD:
		inf = 0;
		break;
	case FPL_RND_TP:
		inf = !s;
		break;
	case FPL_RND_TN:
		inf = s;
		break;
	case FPL_RND_SP:
	case FPL_RND_SE:
		inf = away || trunc_over;
		break;
	default:
		inf = 1;
	}
	if (inf && o->saturate) {
		inf = 0;
		*fl |= FPL_FLAG_SATURATED;
	}
	if (!inf)
		*v = s ? -o->max : o->max;
	else if (o->spec == FPL_SPEC_IEEE)
		*v = s ? -INFINITY : INFINITY;
	else
		*v = nan_overflow(o, s);
}

static double signed_zero(const oracle_fmt *o, int s)
{
	return (s && o->spec != FPL_SPEC_FNUZ) ? -0.0 : 0.0;
}

/* Result and flags when the bounded choice is `away_s`. */
static void finish_tiny(const oracle_fmt *o, fpl_rnd rnd, int s, int away_s, int exact_s,
			int tiny, mpfr_srcptr zs, mpfr_srcptr as, double *v, unsigned *fl)
{
	mpfr_srcptr r = away_s ? as : zs;

	if (mpfr_cmpabs(r, t_max) > 0) {
		/* only when emax < emin (e = 1, IEEE-style: no normal binade):
		 * the exact value is below 2^emin, so SEMANTICS.md's rule
		 * "underflow = tiny and inexact" holds besides the overflow */
		overflow(o, rnd, s, away_s, mpfr_cmpabs(zs, t_max) > 0, v, fl);
		if (tiny)
			*fl |= FPL_FLAG_UNDERFLOW;
		return;
	}
	if (o->sub == FPL_SUB_FTZ && tiny) {
		*v = signed_zero(o, s);
		*fl = FPL_FLAG_UNDERFLOW | FPL_FLAG_INEXACT | FPL_FLAG_FLUSHED;
		return;
	}
	*v = mpfr_zero_p(r) ? signed_zero(o, s) : mpfr_get_d(r, MPFR_RNDN);
	*fl = exact_s ? 0 : FPL_FLAG_INEXACT | (tiny ? FPL_FLAG_UNDERFLOW : 0);
}

/* What one choice between z and a needs, computed once for all modes. */
struct pick_cache {
	int n_done, n_away;	/* RNDN's pick */
	int mid_done, mid;	/* the exact value is the midpoint */
	int odd_done, odd;	/* z is an odd multiple of the quantum */
};

static int choose_c(const oracle_fmt *o, fpl_rnd rnd, int bounded, mpfr_srcptr z, mpfr_srcptr a,
		    int exact, int s, long qexp, long E, uint64_t draw, int R, uint64_t *T,
		    struct pick_cache *pc)
{
	*T = 0;
	if (exact)
		return 0;
	switch (rnd) {
	case FPL_RND_NA:
	case FPL_RND_NZ:
		if (!pc->mid_done) {
			pc->mid = is_midpoint(o, z, a);
			pc->mid_done = 1;
		}
		if (pc->mid)
			return rnd == FPL_RND_NA;
		/* fall through */
	case FPL_RND_NE:
		if (!pc->n_done) {
			rounded(o, t_n, MPFR_RNDN, bounded);
			pc->n_away = !mpfr_equal_p(t_n, z);
			pc->n_done = 1;
		}
		return pc->n_away;
	case FPL_RND_OD:
		if (!pc->odd_done) {
			pc->odd = odd_at(z, qexp);
			pc->odd_done = 1;
		}
		return !pc->odd;
	default:
		return choose(o, rnd, bounded, z, a, exact, s, qexp, E, draw, R, T);
	}
}

static void same_all(oracle_res *res, int nm, double v, unsigned fl)
{
	int k;

	for (k = 0; k < nm; k++) {
		memset(&res[k], 0, sizeof res[k]);
		set(&res[k], v, fl);
		res[k].lo = res[k].hi = v;
		res[k].lo_flags = res[k].hi_flags = fl;
	}
}

/*
 * The finite case: the operation's exact result is finite (maybe zero),
 * rounded in each of the nm modes (the MPFR work that does not depend on
 * the mode is done once).
 */
static void round_finite(const oracle_fmt *o, const fpl_rnd *modes, int nm, uint64_t draw, int R,
			 oracle_res *res)
{
	struct pick_cache pw, ps;
	int s, exact, k, zover, aover, exact_s = 0, tinyb = 0;
	long E, qexp_s;

	memset(&pw, 0, sizeof pw);
	memset(&ps, 0, sizeof ps);
	exact = op_at(t_z, o->m + 1, MPFR_RNDZ) == 0;
	if (mpfr_zero_p(t_z)) {	/* exact cancellation: x + (-x), fma likewise */
		for (k = 0; k < nm; k++) {
			if (o->spec == FPL_SPEC_E8M0)
				same_all(&res[k], 1, nan_default(o), FPL_FLAG_INVALID);
			else	/* +0, but -0 in tn */
				same_all(&res[k], 1, signed_zero(o, modes[k] == FPL_RND_TN), 0);
		}
		return;
	}
	s = mpfr_signbit(t_z) != 0;
	E = (long)mpfr_get_exp(t_z) - 1;
	if (o->spec == FPL_SPEC_E8M0 && s) {
		same_all(res, nm, nan_default(o), FPL_FLAG_INVALID);
		return;
	}
	if (o->spec == FPL_SPEC_E8M0 && E < o->emin) {
		same_all(res, nm, o->min_normal, FPL_FLAG_UNDERFLOW | FPL_FLAG_INEXACT);
		return;
	}
	mpfr_set_d(t_max, o->max, MPFR_RNDN);
	op_at(t_aw, o->m + 1, MPFR_RNDA);
	zover = mpfr_cmpabs(t_z, t_max) > 0;
	aover = mpfr_cmpabs(t_aw, t_max) > 0;
	qexp_s = o->sub == FPL_SUB_NO_ROUND ? o->emin : o->emin - o->m;
	if (E < o->emin) {	/* the bounded candidates, once */
		exact_s = rounded(o, t_zs, MPFR_RNDZ, 1) == 0;
		rounded(o, t_as, MPFR_RNDA, 1);
		tinyb = 1;
	}
	for (k = 0; k < nm; k++) {
		fpl_rnd rnd = modes[k];
		oracle_res *r = &res[k];
		int stoch = rnd == FPL_RND_SP || rnd == FPL_RND_SE;
		uint64_t T;
		int away = choose_c(o, rnd, 0, t_z, t_aw, exact, s, E - o->m, E, draw, R, &T, &pw);

		memset(r, 0, sizeof *r);
		r->R = R;
		if (!tinyb) {
			mpfr_srcptr w = away ? t_aw : t_z;
			r->T = T;
			if (zover)
				overflow(o, rnd, s, 0, 1, &r->lo, &r->lo_flags);
			else
				r->lo = mpfr_get_d(t_z, MPFR_RNDN), r->lo_flags = exact ? 0 : FPL_FLAG_INEXACT;
			if (aover)
				overflow(o, rnd, s, 1, zover, &r->hi, &r->hi_flags);
			else
				r->hi = mpfr_get_d(t_aw, MPFR_RNDN), r->hi_flags = exact ? 0 : FPL_FLAG_INEXACT;
			if (mpfr_cmpabs(w, t_max) > 0)
				overflow(o, rnd, s, away, zover, &r->value, &r->flags);
			else
				set(r, mpfr_get_d(w, MPFR_RNDN), exact ? 0 : FPL_FLAG_INEXACT);
			r->stochastic_split = stoch && !exact;
		} else {
			/* below 2^emin: tininess after rounding uses the wide pick */
			int tiny_after = (long)mpfr_get_exp(away ? t_aw : t_z) - 1 < o->emin;
			int tiny = o->tiny == FPL_TINY_BEFORE ? 1 : tiny_after;
			int away_s = choose_c(o, rnd, 1, t_zs, t_as, exact_s, s, qexp_s, E, draw, R, &T, &ps);

			finish_tiny(o, rnd, s, away_s, exact_s, tiny, t_zs, t_as, &r->value, &r->flags);
			finish_tiny(o, rnd, s, 0, exact_s, tiny, t_zs, t_as, &r->lo, &r->lo_flags);
			finish_tiny(o, rnd, s, 1, exact_s, tiny, t_zs, t_as, &r->hi, &r->hi_flags);
			r->T = T;
			r->R = R;
			r->stochastic_split = stoch && !exact_s;
		}
	}
}

/*
 * An exact infinite result of sign s (extra: divbyzero or 0).  Without
 * inf: +-max (saturated) or NaN (invalid).  SEMANTICS.md does not say
 * which NaN; the oracle uses the one that replaces an overflowing result
 * of the same sign (fn keeps the sign, as ml_dtypes does for inf).
 */
static void exact_inf(const oracle_fmt *o, int s, unsigned extra, oracle_res *res)
{
	if (o->spec == FPL_SPEC_IEEE && o->keep_inf)
		set(res, s ? -INFINITY : INFINITY, extra);
	else if (o->spec == FPL_SPEC_E8M0 && s)
		set(res, nan_default(o), extra | FPL_FLAG_INVALID);
	else if (o->saturate)
		set(res, s ? -o->max : o->max, extra | FPL_FLAG_SATURATED);
	else
		set(res, nan_overflow(o, s), extra | FPL_FLAG_INVALID);
}

static void exact_zero(const oracle_fmt *o, int s, oracle_res *res)
{
	if (o->spec == FPL_SPEC_E8M0)
		set(res, nan_default(o), FPL_FLAG_INVALID);
	else
		set(res, signed_zero(o, s), 0);
}

static void invalid(const oracle_fmt *o, oracle_res *res)
{
	set(res, nan_default(o), FPL_FLAG_INVALID);
}

static int nops(oracle_op op)
{
	switch (op) {
	case OR_ADD:
	case OR_SUB:
	case OR_MUL:
	case OR_DIV:
		return 2;
	case OR_FMA:
		return 3;
	default:
		return 1;
	}
}

static double daz(double v, double thr)
{
	if (thr > 0 && v != 0 && fabs(v) < thr)
		return sign_of(v) ? -0.0 : 0.0;
	return v;
}

/* Special operands (after NaN and DAZ); returns 1 when res is set. */
static int specials(const oracle_fmt *o, oracle_op op, double a, double b, double c,
		    fpl_rnd rnd, oracle_res *res, int *zero_sign)
{
	int sa = sign_of(a), sb = sign_of(b), sc = sign_of(c);

	*zero_sign = rnd == FPL_RND_TN;
	switch (op) {
	case OR_ROUND:
	case OR_CONVERT:
		if (isinf(a))
			return exact_inf(o, sa, 0, res), 1;
		if (a == 0)
			return exact_zero(o, sa, res), 1;
		return 0;
	case OR_SUB:
		sb ^= 1;
		/* fall through */
	case OR_ADD:
		if (isinf(a) && isinf(b) && sa != sb)
			return invalid(o, res), 1;
		if (isinf(a) || isinf(b))
			return exact_inf(o, isinf(a) ? sa : sb, 0, res), 1;
		if (a == 0 && b == 0)
			return exact_zero(o, sa == sb ? sa : rnd == FPL_RND_TN, res), 1;
		return 0;
	case OR_MUL:
		if ((isinf(a) && b == 0) || (isinf(b) && a == 0))
			return invalid(o, res), 1;
		if (isinf(a) || isinf(b))
			return exact_inf(o, sa ^ sb, 0, res), 1;
		if (a == 0 || b == 0)
			return exact_zero(o, sa ^ sb, res), 1;
		return 0;
	case OR_DIV:
		if ((isinf(a) && isinf(b)) || (a == 0 && b == 0))
			return invalid(o, res), 1;
		if (isinf(a))
			return exact_inf(o, sa ^ sb, 0, res), 1;
		if (isinf(b) || a == 0)
			return exact_zero(o, sa ^ sb, res), 1;
		if (b == 0)
			return exact_inf(o, sa ^ sb, FPL_FLAG_DIVBYZERO, res), 1;
		return 0;
	case OR_SQRT:
		if (a == 0)
			return exact_zero(o, sa, res), 1;
		if (sa)
			return invalid(o, res), 1;
		if (isinf(a))
			return exact_inf(o, 0, 0, res), 1;
		return 0;
	case OR_FMA: {
		int sp = sa ^ sb;
		int pinf = isinf(a) || isinf(b);
		if ((isinf(a) && b == 0) || (isinf(b) && a == 0))
			return invalid(o, res), 1;
		if (pinf && isinf(c) && sp != sc)
			return invalid(o, res), 1;
		if (pinf || isinf(c))
			return exact_inf(o, pinf ? sp : sc, 0, res), 1;
		if ((a == 0 || b == 0) && c == 0)
			return exact_zero(o, sp == sc ? sp : rnd == FPL_RND_TN, res), 1;
		return 0;
	}
	}
	return 0;
}

void oracle_eval_modes(const oracle_fmt *o, oracle_op op, const double *x, const fpl_rnd *modes,
		       int nm, uint64_t draw, int R, oracle_res *res)
{
	int n = nops(op), i, k, zero_sign;
	double v[3] = { 0, 0, 0 };
	unsigned inv = 0;

	setup();
	for (i = 0; i < n; i++) {
		v[i] = x[i];
		if (is_snan(v[i]))
			inv = FPL_FLAG_INVALID;
	}
	for (i = 0; i < n; i++)
		if (is_nan(v[i])) {
			same_all(res, nm, nan_narrow(o, v[i]), inv);
			for (k = 0; k < nm; k++)
				res[k].R = R;
			return;
		}
	if (op == OR_CONVERT)
		v[0] = daz(v[0], x[1]);
	else if (op != OR_ROUND && o->daz)
		for (i = 0; i < n; i++)
			v[i] = daz(v[i], o->min_normal);
	/* whether an operand is special does not depend on the mode; what
	 * the result is may (the sign of an exact zero sum) */
	for (k = 0; k < nm; k++) {
		memset(&res[k], 0, sizeof res[k]);
		res[k].R = R;
		if (!specials(o, op, v[0], v[1], v[2], modes[k], &res[k], &zero_sign))
			break;
		res[k].lo = res[k].hi = res[k].value;
		res[k].lo_flags = res[k].hi_flags = res[k].flags;
	}
	if (k < nm) {
		t_op = op;
		mpfr_set_d(t_a, v[0], MPFR_RNDN);
		mpfr_set_d(t_b, v[1], MPFR_RNDN);
		mpfr_set_d(t_c, v[2], MPFR_RNDN);
		round_finite(o, modes, nm, draw, R, res);
	}
}

void oracle_eval(const oracle_fmt *o, oracle_op op, const double *x, fpl_rnd rnd,
		 uint64_t draw, int R, oracle_res *res)
{
	oracle_eval_modes(o, op, x, &rnd, 1, draw, R, res);
}

double oracle_round(const oracle_fmt *o, double x, fpl_rnd rnd, unsigned *flags)
{
	oracle_res r;
	oracle_eval(o, OR_ROUND, &x, rnd, 0, 32, &r);
	*flags = r.flags;
	return r.value;
}

double oracle_op2(const oracle_fmt *o, oracle_op op, double a, double b, fpl_rnd rnd,
		  unsigned *flags)
{
	double x[3] = { a, b, 0 };
	oracle_res r;
	oracle_eval(o, op, x, rnd, 0, 32, &r);
	*flags = r.flags;
	return r.value;
}

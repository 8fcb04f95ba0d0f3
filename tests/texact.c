/* SPDX-License-Identifier: MIT */
/*
 * tests/texact.c - the exact accumulator (fplab/exact.h) against MPFR.
 *
 * Every expected value comes from MPFR or from tests/oracle.c: the exact
 * sum of a list of terms is accumulated in MPFR at 4400 bits, where every
 * sum of binary64 values and products is exact (terms are multiples of
 * 2^-2148 below 2^2048, so a sum of fewer than 2^100 of them needs fewer
 * than 4300 bits; each mpfr_fma / mpfr_add_d is checked to be exact).
 *
 *  1. Hand cases: the empty sum, x + (-x), 2^1023 + 2^1023 (overflows
 *     binary64), 2^-1074 * 2^-1074 (below every binary64, sign kept),
 *     DBL_MAX^2 sums, a one-bit tail 2149 bits below 1, the specials
 *     (NaN, +-inf, inf - inf, inf * 0, inf * -2, NaN * 0 ...), and a
 *     value doubled with fpl_exact_add_exact up to 2^383 DBL_MAX^2 (the
 *     top limbs, far beyond the 2^60 terms the header promises).
 *  2. Random lists (1 to 250 terms) of binary64 values and products:
 *     exponents across the whole range (subnormals, products down to
 *     2^-2148 and up to 2^2047), values and products around a format's
 *     range, exact negations of earlier terms, the negated binary64
 *     rounding of an earlier product (leaving only its low half) or of
 *     the whole sum so far (huge cancellation), a format's values plus
 *     half a quantum (exact ties), tiny tails, rare specials.  For each:
 *       - fpl_exact_value == mpfr_get_d(sum, RNDN) bit for bit;
 *         fpl_exact_sign == the sign; the special counts;
 *       - fpl__exact_window == the sum truncated to 128 bits by MPFR;
 *       - fpl_exact_round in all nine modes (sp with random R 1..32) into
 *         fp16, bf16, e4m3fn, fp32, e5m2 or fp64, with subnormals and
 *         without (no-round or ftz), equal to the oracle, value, flags,
 *         counts and counter; fpl__exact_round_ix gives the same with the
 *         state untouched.  The oracle cannot take a 4000-bit number, so
 *         it rounds a stand-in a*b + c (representative() argues why it
 *         rounds exactly like the sum);
 *       - fpl_exact_neg (value, sign, counts swapped, twice = identity);
 *       - fpl_exact_add_exact: the list split in two and the halves added
 *         gives the accumulator of the whole list, limb for limb;
 *         fpl__exact_add_dot (strided) likewise;
 *       - fpl_exact_abserr == |y - sum| rounded by MPFR; fpl_exact_relerr
 *         faithful: one of the two binary64 values around the ratio
 *         MPFR computes at 300 bits; y the sum's binary64 value, its
 *         neighbours, its rounding into the format, 0, random, specials.
 *  3. binary32 dot products (fpl__exact_add_dot_f32) against MPFR.
 *  4. Speed, printed, not asserted: fpl_exact_add_product calls per
 *     second, and a 256x256x256 reference GEMM through fpl__exact_add_dot.
 * Random lists: 300000 in check (15000 under AddressSanitizer), 3000000
 * in check-long.
 */
#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "oracle.h"
#include "accum/exact_internal.h"

#define PREC 4400	/* every sum here is exact at this precision */
#define MAXT 256

static const fpl_rnd all_modes[9] = {
	FPL_RND_NE, FPL_RND_NA, FPL_RND_NZ, FPL_RND_TP, FPL_RND_TN, FPL_RND_TZ, FPL_RND_OD,
	FPL_RND_SP, FPL_RND_SE
};

static const char *const fmt_names[] = { "fp16", "bf16", "e4m3fn", "fp32", "e5m2", "fp64" };
#define NFMT 6

/* A format in three flavours: subnormals, no-round, ftz. */
struct fmt3 {
	fpl_format f[3];
	oracle_fmt o[3];
};
static struct fmt3 g_fmt[NFMT];

struct term {
	double a, b;
	int prod;	/* a*b, else a */
};

struct list {
	int n;
	struct term t[MAXT];
	uint64_t nan, pinf, ninf;	/* special terms, counted by IEEE's rules */
};

/* ------------------------------------------------------------ scratch */

static _Thread_local int t_init;
static _Thread_local mpfr_t t_s, t_d, t_a, t_b, t_v, t_w, t_lo, t_hi;
static _Thread_local mpz_t t_z;

static void scratch_init(void)
{
	if (t_init)
		return;
	mpfr_inits2(PREC, t_s, t_d, (mpfr_ptr)0);
	mpfr_inits2(53, t_a, t_b, (mpfr_ptr)0);
	mpfr_inits2(128, t_v, t_w, (mpfr_ptr)0);
	mpfr_inits2(300, t_lo, t_hi, (mpfr_ptr)0);
	mpz_init(t_z);
	t_init = 1;
}

static void scratch_done(void)
{
	if (!t_init)
		return;
	mpfr_clears(t_s, t_d, t_a, t_b, t_v, t_w, t_lo, t_hi, (mpfr_ptr)0);
	mpz_clear(t_z);
	t_init = 0;
	oracle_thread_done();
}

/* -------------------------------------------------------- the oracle side */

/* t_s += the term (finite terms only), exactly. */
static void mpfr_add_term(const struct term *t)
{
	int tern;

	if (t->prod) {
		mpfr_set_d(t_a, t->a, MPFR_RNDN);
		mpfr_set_d(t_b, t->b, MPFR_RNDN);
		tern = mpfr_fma(t_s, t_a, t_b, t_s, MPFR_RNDN);
	} else {
		tern = mpfr_add_d(t_s, t_s, t->a, MPFR_RNDN);
	}
	if (tern != 0)
		h_fail("texact: the MPFR sum is not exact (%a, %a)", t->a, t->b);
}

/* A special term's kind by IEEE arithmetic: 0 none, 1 NaN, 2 +inf, 3 -inf. */
static int special_kind(const struct term *t)
{
	double v;

	if (t->prod) {
		if (isfinite(t->a) && isfinite(t->b))
			return 0;
		v = t->a * t->b;	/* inf * 0 = NaN, inf * x = +-inf */
	} else {
		v = t->a;
	}
	if (isnan(v))
		return 1;
	if (isinf(v))
		return v > 0 ? 2 : 3;
	return 0;
}

/* Append a term: to the list, its special counts and the MPFR sum t_s. */
static void push(struct list *L, double a, double b, int prod)
{
	struct term *t;

	if (L->n >= MAXT)
		return;
	t = &L->t[L->n++];
	t->a = a;
	t->b = prod ? b : 1.0;
	t->prod = prod;
	switch (special_kind(t)) {
	case 0: mpfr_add_term(t); break;
	case 1: L->nan++; break;
	case 2: L->pinf++; break;
	default: L->ninf++;
	}
}

static int list_is_nan(const struct list *L)
{
	return L->nan || (L->pinf && L->ninf);
}

/* The expected special value (NaN stands for any NaN), or 0 when finite. */
static int list_special(const struct list *L, double *v)
{
	if (list_is_nan(L))
		*v = NAN;
	else if (L->pinf || L->ninf)
		*v = L->pinf ? INFINITY : -INFINITY;
	else
		return 0;
	return 1;
}

/*
 * Operands x[3] whose exact a*b + c rounds exactly as the nonzero value
 * S = t_s rounds, in every format with m <= 52, emin >= -1022, emax <=
 * 1023, every mode, and sp with R <= 32, flags included.
 *  - Every decision of the oracle (tests/oracle.c: truncations and
 *    roundings at precision m+1..m+4, sp's T read R <= 32 bits below the
 *    quantum, the subnormal grid down to 2^-1074 and its T down to
 *    2^-1106, tininess, overflow) is a function of the sign, the leading
 *    exponent E, and the truncations of S at quanta 2^j, j >= q + 2 with
 *    q = max(E - 100, -1110), together with their exactness.  Rounding S
 *    to odd at 2^q (truncate, then set the 2^q bit when bits were lost)
 *    gives V with the same truncation at every such 2^j, exact exactly
 *    when S is: V rounds as S does.
 *  - E <= 1023: V = H + L, H = V truncated to binary64 (53 bits, or the
 *    2^-1074 grid), L = V - H with at most 48 bits from 2^-1110 up:
 *    c = H, and a*b = L as (L 2^200) * 2^-200 when L is small.
 *  - E >= 1024: the truncation at precision m+1 already exceeds every
 *    such format's max, so every mode overflows the same way whatever the
 *    bits (sp and se too: the oracle's overflow gives inf when the
 *    truncation overflows); 1.5 2^1500 with the sign stands for S.
 */
static void representative(double x[3])
{
	long E = (long)mpfr_get_exp(t_s) - 1, q = E - 100 > -1110 ? E - 100 : -1110;
	int neg = mpfr_signbit(t_s) != 0;

	if (E >= 1024) {
		x[0] = neg ? -0x1.8p750 : 0x1.8p750;
		x[1] = 0x1p750;
		x[2] = 0;
		return;
	}
	mpfr_mul_2si(t_d, t_s, -q, MPFR_RNDN);		/* exact */
	mpfr_get_z(t_z, t_d, MPFR_RNDZ);
	if (mpfr_cmp_z(t_d, t_z) != 0) {		/* round to odd */
		if (neg) {	/* t_z may be 0: the sign is S's */
			mpz_neg(t_z, t_z);
			mpz_setbit(t_z, 0);
			mpz_neg(t_z, t_z);
		} else {
			mpz_setbit(t_z, 0);
		}
	}
	if (mpfr_set_z_2exp(t_v, t_z, q, MPFR_RNDN) != 0)	/* <= 102 bits */
		h_fail("texact: representative not exact");
	x[2] = mpfr_get_d(t_v, MPFR_RNDZ);
	mpfr_sub_d(t_w, t_v, x[2], MPFR_RNDN);			/* L, exact */
	if (!mpfr_zero_p(t_w) && mpfr_get_exp(t_w) < 0) {
		mpfr_mul_2ui(t_w, t_w, 200, MPFR_RNDN);
		x[1] = 0x1p-200;
	} else {
		x[1] = 1;
	}
	x[0] = mpfr_get_d(t_w, MPFR_RNDN);
	if (mpfr_cmp_d(t_w, x[0]) != 0)
		h_fail("texact: representative's low part is not a binary64");
	if (x[0] == 0 && x[2] == 0)
		h_fail("texact: representative of a nonzero value is zero");
}

/* ----------------------------------------------------------- the checks */

static void report_list(const struct list *L)
{
	int i;

	h_note("  list of %d terms:", L->n);
	for (i = 0; i < L->n && i < 40; i++) {
		if (L->t[i].prod)
			h_note("    %a * %a", L->t[i].a, L->t[i].b);
		else
			h_note("    %a", L->t[i].a);
	}
}

/* Value, sign, counts and window of e against L and t_s. */
static int check_reading(const fpl_exact *e, const struct list *L)
{
	double want, got = fpl_exact_value(e);
	int sgn, ok, neg, sticky, nz;
	uint64_t hi, lo;
	int64_t exp;

	if (list_special(L, &want)) {
		sgn = isnan(want) ? 2 : want > 0 ? 1 : -1;
		ok = isnan(want) ? isnan(got) : h_same(got, want);
	} else {
		sgn = mpfr_sgn(t_s) > 0 ? 1 : mpfr_sgn(t_s) < 0 ? -1 : 0;
		want = mpfr_zero_p(t_s) ? 0.0 : mpfr_get_d(t_s, MPFR_RNDN);
		ok = h_same(got, want);
	}
	if (!h_check(ok))
		h_fail("fpl_exact_value: expected %a, got %a", want, got);
	if (!h_check(fpl_exact_sign(e) == sgn))
		h_fail("fpl_exact_sign: expected %d, got %d", sgn, fpl_exact_sign(e));
	if (!h_check(e->nan == L->nan && e->pinf == L->pinf && e->ninf == L->ninf))
		h_fail("special counts: expected %llu %llu %llu, got %llu %llu %llu",
		       (unsigned long long)L->nan, (unsigned long long)L->pinf,
		       (unsigned long long)L->ninf, (unsigned long long)e->nan,
		       (unsigned long long)e->pinf, (unsigned long long)e->ninf);
	/* the window: MPFR's 128-bit truncation, normalized */
	nz = fpl__exact_window(e, &neg, &exp, &hi, &lo, &sticky);
	if (mpfr_zero_p(t_s)) {
		ok = !nz && !hi && !lo && !sticky;
	} else {
		int t = mpfr_set(t_v, t_s, MPFR_RNDZ) != 0;
		mpfr_exp_t ze;
		size_t nb;

		mpfr_abs(t_v, t_v, MPFR_RNDN);
		ze = mpfr_get_z_2exp(t_z, t_v);
		nb = mpz_sizeinbase(t_z, 2);
		mpz_mul_2exp(t_z, t_z, 128 - nb);
		ze -= (mpfr_exp_t)(128 - nb);
		mpz_fdiv_q_2exp(t_z, t_z, 64);
		ok = nz && neg == (mpfr_signbit(t_s) != 0) && sticky == t && exp == ze &&
		     hi == mpz_get_ui(t_z) && (hi >> 63);
		mpfr_set_z_2exp(t_w, t_z, ze + 64, MPFR_RNDN);
		mpfr_sub(t_w, t_v, t_w, MPFR_RNDN);		/* the low 64 bits, exact */
		ok = ok && mpfr_cmp_ui_2exp(t_w, lo, ze) == 0;
	}
	if (!h_check(ok))
		h_fail("fpl__exact_window: negative %d, exp %lld, hi %016llx, lo %016llx, "
		       "sticky %d differs from MPFR's truncation", neg, (long long)exp,
		       (unsigned long long)hi, (unsigned long long)lo, sticky);
	return ok;
}

/* Rounding in all nine modes against the oracle's op on x. */
static int check_round(const fpl_exact *e, const fpl_format *f, const oracle_fmt *o,
		       oracle_op op, const double *x, h_rng *r, fpl_state *st)
{
	oracle_res res[9];
	uint64_t idx = st->counter;
	int R = h_rng_below(r, 2) ? 32 : 1 + (int)h_rng_below(r, 32), k, i, ok = 1;

	st->sr_bits = R;
	oracle_eval_modes(o, op, x, all_modes, 9, fpl_random_draw(st->seed, st->stream, idx), R,
			  res);
	for (k = 0; k < 9; k++) {
		fpl_state before;
		unsigned fl = 0;
		double got, got2;

		st->counter = idx;
		fpl_state_clear_flags(st);
		got = fpl_exact_round(e, f, all_modes[k], st);
		ok &= h_expect("fpl_exact_round", f, all_modes[k], op == OR_FMA ? 3 : 1, x,
			       res[k].value, res[k].flags, got, st->flags);
		for (i = 0; i < FPL_NFLAGS; i++)
			if (st->count[i] != ((st->flags >> i) & 1))
				break;
		if (!h_check(st->counter == idx + 1 && i == FPL_NFLAGS)) {
			ok = 0;
			h_fail("fpl_exact_round: counter %llu after draw %llu, or counts wrong",
			       (unsigned long long)st->counter, (unsigned long long)idx);
		}
		before = *st;
		got2 = fpl__exact_round_ix(e, f, all_modes[k], st, idx, &fl);
		if (!h_check(h_same(got, got2) && fl == st->flags &&
			     !memcmp(&before, st, sizeof before))) {
			ok = 0;
			h_fail("fpl__exact_round_ix differs from fpl_exact_round (%s)",
			       fpl_rnd_name(all_modes[k]));
		}
	}
	st->counter = idx + 1;
	return ok;
}

/* Round e into format flavour (fi, v) against the oracle. */
static int check_round_fmt(const fpl_exact *e, const struct list *L, int fi, int v, h_rng *r,
			   fpl_state *st)
{
	double x[3], sv;

	if (list_special(L, &sv)) {
		x[0] = isnan(sv) ? fpl_exact_value(e) : sv;	/* which NaN is the library's */
		return check_round(e, &g_fmt[fi].f[v], &g_fmt[fi].o[v], OR_ROUND, x, r, st);
	}
	if (mpfr_zero_p(t_s)) {		/* an exact zero rounds as +0 */
		x[0] = 0.0;
		return check_round(e, &g_fmt[fi].f[v], &g_fmt[fi].o[v], OR_ROUND, x, r, st);
	}
	representative(x);
	return check_round(e, &g_fmt[fi].f[v], &g_fmt[fi].o[v], OR_FMA, x, r, st);
}

/* Negation: value and sign negated, counts swapped, twice the identity. */
static int check_neg(const fpl_exact *e, const struct list *L)
{
	fpl_exact n = *e;
	double v = fpl_exact_value(e), w;
	int s = fpl_exact_sign(e), ok;

	fpl_exact_neg(&n);
	w = fpl_exact_value(&n);
	if (list_is_nan(L))
		ok = isnan(w) && fpl_exact_sign(&n) == 2;
	else if (mpfr_zero_p(t_s) && !L->pinf && !L->ninf)
		ok = h_same(w, 0.0) && fpl_exact_sign(&n) == 0;
	else
		ok = h_same(w, -v) && fpl_exact_sign(&n) == -s;
	ok = ok && n.pinf == e->ninf && n.ninf == e->pinf && n.nan == e->nan;
	fpl_exact_neg(&n);
	ok = ok && !memcmp(&n, e, sizeof n);
	if (!h_check(ok))
		h_fail("fpl_exact_neg: value %a sign %d, negated %a sign %d", v, s, w,
		       fpl_exact_sign(&n));
	return ok;
}

/* abserr and relerr for one y. */
static int check_err(const fpl_exact *e, const struct list *L, double y)
{
	double ga = fpl_exact_abserr(e, y), gr = fpl_exact_relerr(e, y), wa, lo, hi, sv;
	int ok;

	if (list_special(L, &sv) || !isfinite(y)) {
		if (isnan(y) || (list_special(L, &sv) && isnan(sv)))
			ok = isnan(ga) && isnan(gr);
		else if (list_special(L, &sv) && h_same(sv, y))
			ok = h_same(ga, 0.0) && h_same(gr, 0.0);
		else
			ok = h_same(ga, INFINITY) && h_same(gr, INFINITY);
		if (!h_check(ok))
			h_fail("abserr/relerr (specials) y = %a: got %a, %a", y, ga, gr);
		return ok;
	}
	if (mpfr_sub_d(t_d, t_s, y, MPFR_RNDN) != 0)
		h_fail("texact: sum - y not exact");
	mpfr_abs(t_d, t_d, MPFR_RNDN);
	wa = mpfr_zero_p(t_d) ? 0.0 : mpfr_get_d(t_d, MPFR_RNDN);
	if (!h_check(h_same(ga, wa)))
		h_fail("fpl_exact_abserr(y = %a): expected %a, got %a", y, wa, ga);
	if (mpfr_zero_p(t_s)) {
		lo = hi = y == 0 ? 0.0 : INFINITY;
	} else if (mpfr_zero_p(t_d)) {
		lo = hi = 0.0;
	} else {
		mpfr_div(t_lo, t_d, t_s, MPFR_RNDZ);
		mpfr_abs(t_lo, t_lo, MPFR_RNDN);
		mpfr_div(t_hi, t_d, t_s, MPFR_RNDA);
		mpfr_abs(t_hi, t_hi, MPFR_RNDN);
		lo = mpfr_get_d(t_lo, MPFR_RNDD);
		hi = mpfr_get_d(t_hi, MPFR_RNDU);
	}
	ok = h_same(gr, lo) || h_same(gr, hi);
	if (!h_check(ok))
		h_fail("fpl_exact_relerr(y = %a): expected %a or %a (faithful), got %a", y, lo, hi,
		       gr);
	return ok && h_same(ga, wa);
}

/* A few y for the error functions. */
static int check_errors(const fpl_exact *e, const struct list *L, int fi, h_rng *r)
{
	double v = fpl_exact_value(e), y[8];
	fpl_state st;
	int k, n = 0, ok = 1;

	fpl_state_init(&st, 1);
	y[n++] = v;
	y[n++] = nextafter(v, INFINITY);
	y[n++] = nextafter(v, -INFINITY);
	y[n++] = fpl_exact_round(e, &g_fmt[fi].f[0], FPL_RND_NE, &st);
	y[n++] = h_rng_below(r, 2) ? 0.0 : -0.0;
	y[n++] = h_rng_value(r, -1074, 1023, 1 + (int)h_rng_below(r, 53), 1);
	if (h_rng_below(r, 8) == 0)
		y[n++] = (double[]){ NAN, INFINITY, -INFINITY, DBL_MAX }[h_rng_below(r, 4)];
	for (k = 0; k < n; k++)
		ok &= check_err(e, L, y[k]);
	return ok;
}

/* Build the accumulator of terms [from, to) of L. */
static void accumulate(fpl_exact *e, const struct list *L, int from, int to)
{
	int i;

	fpl_exact_init(e);
	for (i = from; i < to; i++) {
		if (L->t[i].prod)
			fpl_exact_add_product(e, L->t[i].a, L->t[i].b);
		else
			fpl_exact_add(e, L->t[i].a);
	}
}

/* add_exact of two halves, and the strided dot, against the whole. */
static int check_compose(const fpl_exact *e, const struct list *L, h_rng *r)
{
	fpl_exact A, B;
	double a[MAXT], b[3 * MAXT];
	size_t stride = 1 + h_rng_below(r, 3);
	int j = (int)h_rng_below(r, (uint64_t)L->n + 1), i, ok;

	accumulate(&A, L, 0, j);
	accumulate(&B, L, j, L->n);
	fpl_exact_add_exact(&A, &B);
	ok = !memcmp(&A, e, sizeof A);
	if (!h_check(ok))
		h_fail("fpl_exact_add_exact: terms [0,%d) + [%d,%d) differ from the whole list", j,
		       j, L->n);
	for (i = 0; i < L->n; i++) {
		a[i] = L->t[i].a;
		b[(size_t)i * stride] = L->t[i].b;	/* 1.0 for a plain term */
	}
	fpl_exact_init(&B);
	fpl__exact_add_dot(&B, a, b, (size_t)L->n, stride);
	if (!h_check(!memcmp(&B, e, sizeof B))) {
		ok = 0;
		h_fail("fpl__exact_add_dot (stride %zu) differs from the term by term sum", stride);
	}
	return ok;
}

/* Every check of one list; fi: the format of the rounding checks. */
static void check_list(const struct list *L, int fi, h_rng *r, fpl_state *st)
{
	fpl_exact e;
	int ok;

	accumulate(&e, L, 0, L->n);
	ok = check_reading(&e, L);
	ok &= check_round_fmt(&e, L, fi, 0, r, st);
	ok &= check_round_fmt(&e, L, fi, 1 + (int)h_rng_below(r, 2), r, st);
	ok &= check_neg(&e, L);
	ok &= check_compose(&e, L, r);
	ok &= check_errors(&e, L, fi, r);
	if (!ok)
		report_list(L);
}

/* -------------------------------------------------------- 1. hand cases */

static void list_start(struct list *L)
{
	memset(L, 0, sizeof *L);
	mpfr_set_zero(t_s, 1);
}

static void hand_cases(fpl_state *st, h_rng *r)
{
	static const struct {
		const char *what;
		int n;
		struct term t[4];
	} cases[] = {
		{ "empty", 0, { { 0, 0, 0 } } },
		{ "x + -x", 2, { { 1.5, 1, 0 }, { -1.5, 1, 0 } } },
		{ "2^1023 + 2^1023", 2, { { 0x1p1023, 1, 0 }, { 0x1p1023, 1, 0 } } },
		{ "-2^1023 - 2^1023", 2, { { -0x1p1023, 1, 0 }, { -0x1p1023, 1, 0 } } },
		{ "2^-1074 * 2^-1074", 1, { { 0x1p-1074, 0x1p-1074, 1 } } },
		{ "-2^-1074 * 2^-1074", 1, { { -0x1p-1074, 0x1p-1074, 1 } } },
		{ "2^-1074 * 0.5 (a binary64 tie)", 1, { { 0x1p-1074, 0.5, 1 } } },
		{ "2^-1074 * 0.75", 1, { { 0x1p-1074, 0.75, 1 } } },
		{ "DBL_MAX^2", 1, { { DBL_MAX, DBL_MAX, 1 } } },
		{ "-DBL_MAX^2", 1, { { -DBL_MAX, DBL_MAX, 1 } } },
		{ "DBL_MAX^2 - DBL_MAX^2 + 1", 3,
		  { { DBL_MAX, DBL_MAX, 1 }, { -DBL_MAX, DBL_MAX, 1 }, { 1, 1, 0 } } },
		{ "DBL_MAX^2 + 2^-2148 - DBL_MAX^2", 3,
		  { { DBL_MAX, DBL_MAX, 1 }, { 0x1p-1074, 0x1p-1074, 1 },
		    { -DBL_MAX, DBL_MAX, 1 } } },
		{ "1 + 2^-2148", 2, { { 1, 1, 0 }, { 0x1p-1074, 0x1p-1074, 1 } } },
		{ "-1 - 2^-2148", 2, { { -1, 1, 0 }, { -0x1p-1074, 0x1p-1074, 1 } } },
		{ "DBL_MAX + DBL_MAX - DBL_MAX", 3,
		  { { DBL_MAX, 1, 0 }, { DBL_MAX, 1, 0 }, { -DBL_MAX, 1, 0 } } },
		{ "NaN", 1, { { NAN, 1, 0 } } },
		{ "inf", 1, { { INFINITY, 1, 0 } } },
		{ "-inf + 1", 2, { { -INFINITY, 1, 0 }, { 1, 1, 0 } } },
		{ "inf - inf", 2, { { INFINITY, 1, 0 }, { -INFINITY, 1, 0 } } },
		{ "inf * 0", 1, { { INFINITY, 0.0, 1 } } },
		{ "-0 * inf", 1, { { -0.0, INFINITY, 1 } } },
		{ "inf * -2 + 5", 2, { { INFINITY, -2, 1 }, { 5, 1, 0 } } },
		{ "-inf * -inf", 1, { { -INFINITY, -INFINITY, 1 } } },
		{ "NaN * 0", 1, { { NAN, 0.0, 1 } } },
		{ "inf + NaN", 2, { { INFINITY, 1, 0 }, { NAN, 1, 0 } } },
		{ "inf + inf + 2^-2148", 3,
		  { { INFINITY, 1, 0 }, { INFINITY, 1, 0 }, { 0x1p-1074, 0x1p-1074, 1 } } },
	};
	struct list L;
	size_t c;
	int i, fi, v;

	for (c = 0; c < sizeof cases / sizeof *cases; c++) {
		unsigned long long before = h_failures();
		fpl_exact e;

		list_start(&L);
		for (i = 0; i < cases[c].n; i++)
			push(&L, cases[c].t[i].a, cases[c].t[i].b, cases[c].t[i].prod);
		accumulate(&e, &L, 0, L.n);
		check_reading(&e, &L);
		for (fi = 0; fi < NFMT; fi++)
			for (v = 0; v < 3; v++)
				check_round_fmt(&e, &L, fi, v, r, st);
		check_neg(&e, &L);
		check_compose(&e, &L, r);
		check_errors(&e, &L, 5, r);
		if (h_failures() != before)
			h_note("  in hand case \"%s\"", cases[c].what);
	}
}

/* DBL_MAX^2 (negated when neg) doubled k times with add_exact, k to 383:
 * the leading bit reaches bit 4606 of 4608. */
static void doubling(int neg, fpl_state *st, h_rng *r)
{
	struct list L;
	fpl_exact e, c;
	int k;

	list_start(&L);
	push(&L, neg ? -DBL_MAX : DBL_MAX, DBL_MAX, 1);
	accumulate(&e, &L, 0, 1);
	for (k = 1; k <= 383; k++) {
		c = e;
		fpl_exact_add_exact(&e, &c);
		mpfr_mul_2ui(t_s, t_s, 1, MPFR_RNDN);
		if (k % 20 && k < 375)
			continue;
		if (!check_reading(&e, &L) || !check_round_fmt(&e, &L, k % NFMT, 0, r, st) ||
		    !check_neg(&e, &L) || !check_err(&e, &L, 0.0) || !check_err(&e, &L, -DBL_MAX))
			h_note("  in DBL_MAX^2 * 2^%d", k);
	}
}

/* ------------------------------------------------------ 2. random lists */

struct ctx {
	uint64_t nlists;
};

static int clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static double value_at(h_rng *r, int E)
{
	E = clampi(E, -1074, 1023);
	return h_rng_value(r, E, E, 1 + (int)h_rng_below(r, 53), 0);
}

/* A product a*b near 2^T (T in -2148..2046). */
static void push_product_at(struct list *L, h_rng *r, int T)
{
	int ea = clampi(T / 2 + (int)h_rng_below(r, 41) - 20, -1074, 1023);

	push(L, value_at(r, ea), value_at(r, clampi(T - ea, -1074, 1023)), 1);
}

/* A value of the focus format (a rounding boundary of it). */
static double format_value(const oracle_fmt *o, h_rng *r)
{
	int lo_e = o->emin - o->m, E = lo_e + (int)h_rng_below(r, (uint64_t)(o->emax - lo_e + 1));
	int lsb = (E < o->emin ? o->emin : E) - o->m;
	double v = h_rng_value(r, E, E, E - lsb + 1, 0);

	return fabs(v) > o->max ? copysign(o->max, v) : v;
}

/* Half a quantum of the focus format at the current sum (or smaller). */
static void push_half_quantum(struct list *L, const oracle_fmt *o, h_rng *r)
{
	long E = mpfr_zero_p(t_s) ? o->emin : (long)mpfr_get_exp(t_s) - 1;
	int below = (int)h_rng_below(r, 3) * (int)h_rng_below(r, 40);	/* 0: exactly half */
	int qe = (int)((E < o->emin ? o->emin : E) - o->m) - 1 - below;
	double h = ldexp(h_rng_below(r, 2) ? 1.0 : -1.0, clampi(qe, -1074, 1023));

	push(L, h, 1, 0);
}

static void push_special(struct list *L, h_rng *r)
{
	switch (h_rng_below(r, 5)) {
	case 0: push(L, NAN, 1, 0); break;
	case 1: push(L, h_rng_below(r, 2) ? INFINITY : -INFINITY, 1, 0); break;
	case 2: push(L, INFINITY, h_rng_below(r, 2) ? 0.0 : -0.0, 1); break;
	case 3: push(L, -INFINITY, value_at(r, (int)h_rng_below(r, 2000) - 1000), 1); break;
	default: push(L, value_at(r, 3), NAN, 1);
	}
}

/* One term of a random list. */
static void push_random(struct list *L, const oracle_fmt *o, h_rng *r)
{
	int lo = o->emin - o->m - 40, span = o->emax + 2 - lo + 1, j;

	switch (h_rng_below(r, 16)) {
	case 0: case 1:		/* a binary64 anywhere, subnormals included */
		push(L, value_at(r, -1074 + (int)h_rng_below(r, 2098)), 1, 0);
		break;
	case 2: case 3:		/* a product anywhere: 2^-2148 .. 2^2047 */
		push(L, value_at(r, -1074 + (int)h_rng_below(r, 2098)),
		     value_at(r, -1074 + (int)h_rng_below(r, 2098)), 1);
		break;
	case 4: case 5:		/* around the format's range */
		push(L, value_at(r, lo + (int)h_rng_below(r, (uint64_t)span)), 1, 0);
		break;
	case 6: case 7:
		push_product_at(L, r, lo + (int)h_rng_below(r, (uint64_t)span));
		break;
	case 8:			/* exact cancellation of an earlier term */
		if (L->n) {
			j = (int)h_rng_below(r, (uint64_t)L->n);
			push(L, -L->t[j].a, L->t[j].b, L->t[j].prod);
		}
		break;
	case 9:			/* an earlier product minus its binary64 rounding */
		if (L->n && L->t[L->n - 1].prod && isfinite(L->t[L->n - 1].a * L->t[L->n - 1].b))
			push(L, -(L->t[L->n - 1].a * L->t[L->n - 1].b), 1, 0);
		break;
	case 10:		/* the sum so far cancelled down to its tail */
		if (mpfr_get_exp(t_s) < 1024 && !mpfr_zero_p(t_s))
			push(L, -mpfr_get_d(t_s, MPFR_RNDN), 1, 0);
		break;
	case 11:		/* tiny: subnormals and products below 2^-2000 */
		if (h_rng_below(r, 2))
			push(L, value_at(r, -1074 + (int)h_rng_below(r, 30)), 1, 0);
		else
			push_product_at(L, r, -2148 + (int)h_rng_below(r, 150));
		break;
	case 12:		/* huge products, up to 2^2047 */
		push_product_at(L, r, 1900 + (int)h_rng_below(r, 147));
		break;
	case 13:
		push(L, format_value(o, r), 1, 0);
		break;
	case 14:
		push_half_quantum(L, o, r);
		break;
	default:
		if (h_rng_below(r, 8) == 0)
			push_special(L, r);
		else
			push_product_at(L, r, lo + (int)h_rng_below(r, (uint64_t)span));
	}
}

static void random_list(struct list *L, const oracle_fmt *o, h_rng *r)
{
	int n = h_rng_below(r, 32) ? 1 + (int)h_rng_below(r, 12) : 100 + (int)h_rng_below(r, 150);

	list_start(L);
	if (h_rng_below(r, 3) == 0) {	/* start on a format value: ties follow */
		push(L, format_value(o, r), 1, 0);
		if (h_rng_below(r, 2))
			push_half_quantum(L, o, r);
	}
	while (L->n < n)
		push_random(L, o, r);
}

static void random_worker(void *arg, int k, int nth)
{
	struct ctx *c = arg;
	struct list *L = malloc(sizeof *L);
	fpl_state st;
	h_rng r;
	uint64_t i;

	if (!L)
		return;
	scratch_init();
	fpl_state_init(&st, h_seed() ^ 0x65786163ull);
	st.stream = (uint64_t)k;
	h_rng_init(&r, 100 + (uint64_t)k);
	st.counter = h_rng_next(&r) >> 4;
	if (k == 0) {
		hand_cases(&st, &r);
		doubling(0, &st, &r);
		doubling(1, &st, &r);
	}
	for (i = (uint64_t)k; i < c->nlists; i += (uint64_t)nth) {
		int fi = (int)(i % NFMT);

		random_list(L, &g_fmt[fi].o[0], &r);
		check_list(L, fi, &r, &st);
	}
	free(L);
	scratch_done();
}

/* --------------------------------------------------- 3. binary32 dots */

/* A binary32 value with leading exponent E (-149..127). */
static float float_at(h_rng *r, int E)
{
	int bits = 1 + (int)h_rng_below(r, 24);

	if (E < -126 && bits > E + 150)
		bits = E + 150;
	return (float)h_rng_value(r, E, E, bits, 0);	/* exact in binary32 */
}

static void f32_dots(h_rng *r)
{
	float a[300], b[600];
	fpl_exact e;
	int it, i, n;

	scratch_init();
	for (it = 0; it < 2000; it++) {
		n = 1 + (int)h_rng_below(r, 300);
		mpfr_set_zero(t_s, 1);
		for (i = 0; i < n; i++) {
			a[i] = float_at(r, -149 + (int)h_rng_below(r, 277));
			b[2 * i] = float_at(r, -149 + (int)h_rng_below(r, 277));
			mpfr_set_d(t_a, a[i], MPFR_RNDN);
			mpfr_set_d(t_b, b[2 * i], MPFR_RNDN);
			mpfr_fma(t_s, t_a, t_b, t_s, MPFR_RNDN);
		}
		fpl_exact_init(&e);
		fpl__exact_add_dot_f32(&e, a, b, (size_t)n, 2);
		if (!h_check(h_same(fpl_exact_value(&e), mpfr_get_d(t_s, MPFR_RNDN))))
			h_fail("fpl__exact_add_dot_f32 (n = %d): expected %a, got %a", n,
			       mpfr_get_d(t_s, MPFR_RNDN), fpl_exact_value(&e));
	}
	scratch_done();
}

/* ------------------------------------------------------------ 4. speed */

static double seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void speed(h_rng *r)
{
	enum { N = 256 };
	double *A = malloc(N * N * sizeof *A), *B = malloc(N * N * sizeof *B), sink = 0, t0, t1;
	fpl_exact e;
	size_t i, j;

	if (!A || !B) {
		free(A);
		free(B);
		return;
	}
	for (i = 0; i < (size_t)N * N; i++) {
		A[i] = h_rng_value(r, -8, 4, 53, 0);
		B[i] = h_rng_value(r, -8, 4, 53, 0);
	}
	fpl_exact_init(&e);
	t0 = seconds();
	for (j = 0; j < 256; j++)
		for (i = 0; i < (size_t)N * N; i++)
			fpl_exact_add_product(&e, A[i], B[i ^ j]);
	t1 = seconds();
	sink += fpl_exact_value(&e);
	h_note("speed: fpl_exact_add_product %.1f M/s (%d M calls in %.3f s)",
	       256.0 * N * N / (t1 - t0) * 1e-6, 256 * N * N >> 20, t1 - t0);
	t0 = seconds();
	for (i = 0; i < N; i++)
		for (j = 0; j < N; j++) {
			fpl_exact_init(&e);
			fpl__exact_add_dot(&e, A + i * N, B + j, N, N);
			sink += fpl_exact_value(&e);
		}
	t1 = seconds();
	h_note("speed: 256x256x256 exact GEMM (fpl__exact_add_dot + fpl_exact_value) %.3f s, "
	       "%.1f M products/s (checksum %a)", t1 - t0, (double)N * N * N / (t1 - t0) * 1e-6,
	       sink);
	free(A);
	free(B);
}

/* ------------------------------------------------------------------ main */

static void formats(void)
{
	int i, v;

	for (i = 0; i < NFMT; i++) {
		if (!h_check(fpl_format_lookup(&g_fmt[i].f[0], fmt_names[i]) == 0))
			h_skip("format lookup failed");
		for (v = 0; v < 3; v++) {
			fpl_format *f = &g_fmt[i].f[v];

			if (v) {
				*f = g_fmt[i].f[0];
				f->subnormal = v == 1 ? FPL_SUB_NO_ROUND : FPL_SUB_FTZ;
				if (!h_check(fpl_format_finish(f) == 0))
					h_fail("fpl_format_finish(%s, subnormal variant %d)",
					       fmt_names[i], v);
			}
			oracle_fmt_init(&g_fmt[i].o[v], f);
		}
	}
}

int main(void)
{
	struct ctx c;
	h_rng r;

	h_init("texact");
	formats();
	c.nlists = h_sanitized() ? 15000 : h_scale(300000, 3000000);
	h_parallel(h_threads(), random_worker, &c);
	h_note("random lists: %llu, each checked in 2 of %d format flavours x 9 modes",
	       (unsigned long long)c.nlists, 3 * NFMT);
	h_rng_init(&r, 7);
	f32_dots(&r);
	speed(&r);
	return h_done();
}

/* SPDX-License-Identifier: MIT */
/*
 * tests/treduce.c - reductions (fplab/reduce.h): fpl_reduce and
 * fpl_reduce_reference.
 *
 * Expected values never come from the code under test:
 *  - fpl_reduce against a straight-line reimplementation of every op over
 *    the public scalar operations (fpl_round, fpl_add, fpl_sub, fpl_mul,
 *    fpl_fma, fpl_div, fpl_sqrt) on a state whose counter is set to the
 *    draw index reduce.h's layout gives each rounding, the sums of the
 *    sequential, pairwise, blocked and kahan orders written out here as
 *    accum.h states them, and exp/log from MPFR (128 bits toward zero,
 *    rounded once by fpl_round_parts); the other orders' sums are
 *    fpl_accum_sum / fpl_accum_dot on the same terms (tested by taccum);
 *    bit for bit, with flags, counts and the counter's advance;
 *  - fpl_reduce_reference against MPFR at high precision: the exact value
 *    rounded to odd at 200 bits, then to binary64 (one correct rounding),
 *    where the header promises correct rounding; for softmax and
 *    logsumexp, RN(v - b) <= result <= RN(v + b) with b the stated bound;
 *  - hand facts (sums and means of ones, var of 1..4, softmax of {0,0}).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include <fplab/accum.h>
#include <fplab/reduce.h>

#include "harness.h"

/* ------------------------------------------------------------ model reference */

typedef struct ref {
	const fpl_accum_model *m;
	fpl_state *st;
	uint64_t c0;
} ref;

static void at(ref *R, uint64_t d)
{
	R->st->counter = R->c0 + d;
}

static double r_add(ref *R, double x, double y, uint64_t d)
{
	at(R, d);
	return fpl_add(&R->m->acc, x, y, R->m->acc_rnd, R->st);
}

static double r_sub(ref *R, double x, double y, uint64_t d)
{
	at(R, d);
	return fpl_sub(&R->m->acc, x, y, R->m->acc_rnd, R->st);
}

static double r_div(ref *R, double x, double y, uint64_t d)
{
	at(R, d);
	return fpl_div(&R->m->acc, x, y, R->m->acc_rnd, R->st);
}

static double r_out(ref *R, double x, uint64_t d)
{
	if (!R->m->out_set)
		return x;
	at(R, d);
	return fpl_round(&R->m->out, x, R->m->out_rnd, R->st);
}

/* s + a*b as the model's product term (fma at d1, or mul at d0, add at d1). */
static double r_prod(ref *R, double s, double a, double b, uint64_t d0, uint64_t d1)
{
	double p;

	if (R->m->prod_exact) {
		at(R, d1);
		return fpl_fma(&R->m->acc, a, b, s, R->m->acc_rnd, R->st);
	}
	at(R, d0);
	p = fpl_mul(&R->m->prod, a, b, R->m->prod_rnd, R->st);
	return r_add(R, s, p, d1);
}

/* exp or log by MPFR, 128 bits toward zero, rounded once. */
static double r_fn(ref *R, int is_log, double x, uint64_t d)
{
	const fpl_format *f = &R->m->acc;
	fpl_rnd rnd = R->m->acc_rnd;
	mpfr_t a, y;
	mpfr_exp_t emin, emax;
	mpz_t z;
	long e;
	int t, neg;
	double r;

	at(R, d);
	if (f->daz && x != 0 && fabs(x) < f->min_normal)
		x = copysign(0.0, x);
	if (isnan(x))
		return fpl_sqrt(f, x, rnd, R->st);	/* the NaN, as one operand */
	if (is_log && x == 0)
		return fpl_div(f, -1.0, 0.0, rnd, R->st);	/* -inf, divide-by-zero */
	if (is_log && signbit(x))
		return fpl_sqrt(f, -1.0, rnd, R->st);	/* invalid */
	if (isinf(x))
		return fpl_sqrt(f, x > 0 ? x : 0.0, rnd, R->st);
	if (!is_log && fabs(x) > 0x1p40)
		return fpl_round_parts(f, 0, x > 0 ? 1L << 50 : 0, x > 0 ? 1ull << 63 : 0, 0, 1,
				       rnd, R->st);
	emin = mpfr_get_emin();
	emax = mpfr_get_emax();
	mpfr_set_emin(mpfr_get_emin_min());
	mpfr_set_emax(mpfr_get_emax_max());
	mpfr_init2(a, 53);
	mpfr_init2(y, 128);
	mpz_init(z);
	mpfr_set_d(a, x, MPFR_RNDN);
	t = is_log ? mpfr_log(y, a, MPFR_RNDZ) : mpfr_exp(y, a, MPFR_RNDZ);
	if (mpfr_zero_p(y)) {
		r = fpl_round_parts(f, 0, 0, 0, 0, t != 0, rnd, R->st);
	} else {
		neg = mpfr_signbit(y) != 0;
		e = mpfr_get_z_2exp(z, y);
		mpz_abs(z, z);
		r = fpl_round_parts(f, neg, e, mpz_getlimbn(z, 1), mpz_getlimbn(z, 0), t != 0, rnd,
				    R->st);
	}
	mpz_clear(z);
	mpfr_clear(a);
	mpfr_clear(y);
	mpfr_set_emin(emin);
	mpfr_set_emax(emax);
	return r;
}

/* The sum of t[k] (sum) or t[k]*t[k] under the model without output
 * rounding, step s at draw base + s; the terms are values of `tf`. */
typedef struct sumjob {
	ref *R;
	const double *t;
	double *pv;		/* product values (rounded products) */
	int exact;
	uint64_t P, base;
	size_t K;
} sumjob;

static double term(sumjob *J, size_t k)
{
	return J->pv ? J->pv[k] : J->t[k];
}

static double plus(sumjob *J, double s, size_t k, uint64_t step)
{
	if (J->exact) {
		at(J->R, J->base + step);
		return fpl_fma(&J->R->m->acc, J->t[k], J->t[k], s, J->R->m->acc_rnd, J->R->st);
	}
	return r_add(J->R, s, term(J, k), J->base + step);
}

static double seq(sumjob *J, size_t lo, size_t hi)
{
	double s = 0.0;
	size_t k;

	for (k = lo; k < hi; k++)
		s = plus(J, s, k, J->P + k);
	return s;
}

static double pw(sumjob *J, size_t lo, size_t hi)
{
	size_t L = J->R->m->leaf, n = hi - lo, h;
	double l, r;

	if (n <= L)
		return seq(J, lo, hi);
	h = L * (((n + L - 1) / L + 1) / 2);
	l = pw(J, lo, lo + h);
	r = pw(J, lo + h, hi);
	return r_add(J->R, l, r, J->base + J->P + J->K + (lo + h) / L - 1);
}

static double kahan(sumjob *J)
{
	const fpl_accum_model *m = J->R->m;
	double s = 0.0, c = 0.0, y, u, w;
	size_t k;

	for (k = 0; k < J->K; k++) {
		uint64_t st = J->base + J->P + 4 * k;
		if (J->exact) {
			at(J->R, st);
			y = fpl_fma(&m->acc, J->t[k], J->t[k], isnan(c) ? c : -c, m->acc_rnd,
				    J->R->st);
		} else {
			y = r_sub(J->R, term(J, k), c, st);
		}
		u = r_add(J->R, s, y, st + 1);
		w = r_sub(J->R, u, s, st + 2);
		c = r_sub(J->R, w, y, st + 3);
		s = u;
	}
	return s;
}

static double blocked(sumjob *J)
{
	const fpl_accum_model *m = J->R->m;
	double R = 0.0, b;
	size_t k0, B = m->block;

	for (k0 = 0; k0 < J->K; k0 += B) {
		b = seq(J, k0, J->K - k0 < B ? J->K : k0 + B);
		at(J->R, J->base + J->P + J->K + k0 / B);
		R = fpl_add(&m->promo, R, b, m->acc_rnd, J->R->st);
	}
	return R;
}

/* Other orders: fpl_accum_sum / fpl_accum_dot on the same terms, loaded
 * "given" in format tf, with the counter placed so that step 0 lands on
 * base (the loads of a sum take n + 1 draws, of a dot 2n + 1). */
static double via_accum(ref *R, int sum, size_t n, const double *t, const fpl_format *tf,
			uint64_t base)
{
	fpl_accum_model m = *R->m;
	double r = 0.0;
	int e;

	m.a = m.b = *tf;
	m.a_load = m.b_load = FPL_LOAD_GIVEN;
	m.out_set = 0;
	R->st->counter = R->c0 + base - (sum ? n + 1 : 2 * n + 1);
	e = sum ? fpl_accum_sum(&r, &m, n, t, 1, NULL, NULL, R->st)
		: fpl_accum_dot(&r, &m, n, t, 1, t, 1, NULL, NULL, R->st);
	if (!h_check(e == 0))
		h_fail("via_accum: status %d", e);
	return r;
}

static double r_sum(ref *R, int sum, size_t n, const double *t, const fpl_format *tf,
		    uint64_t base)
{
	const fpl_accum_model *m = R->m;
	sumjob J = { R, t, NULL, !sum && m->prod_exact, 0, base, n };
	double *pv = NULL, r;
	size_t k;

	switch (m->order) {
	case FPL_ORDER_SEQUENTIAL:
	case FPL_ORDER_PAIRWISE:
	case FPL_ORDER_KAHAN:
	case FPL_ORDER_BLOCKED:
		break;
	default:
		return via_accum(R, sum, n, t, tf, base);
	}
	if (!sum && !m->prod_exact) {
		pv = malloc((n ? n : 1) * sizeof *pv);
		for (k = 0; k < n; k++) {
			at(R, base + k);
			pv[k] = fpl_mul(&m->prod, t[k], t[k], m->prod_rnd, R->st);
		}
		J.pv = pv;
		J.P = n;
	}
	switch (m->order) {
	case FPL_ORDER_PAIRWISE: r = n ? pw(&J, 0, n) : 0.0; break;
	case FPL_ORDER_KAHAN: r = kahan(&J); break;
	case FPL_ORDER_BLOCKED: r = blocked(&J); break;
	default: r = seq(&J, 0, n); break;
	}
	free(pv);
	return r;
}

static uint64_t steps(const fpl_accum_model *m, size_t n, int sum)
{
	return fpl_accum_steps(m, n, sum);
}

static double nan_of(const fpl_accum_model *m)
{
	(void)m;
	return NAN;
}

/* The whole op, straight-line, as reduce.h's layout says. */
static void model_ref(double *out, fpl_reduce_op op, unsigned flags, const fpl_accum_model *m,
		      size_t n, const double *x, fpl_state *st)
{
	ref R = { m, st, st->counter };
	double *xs = malloc((n ? n : 1) * sizeof *xs), *t = malloc((n ? n : 1) * sizeof *t);
	uint64_t B = n + 1, S1 = steps(m, n, 1), S2 = steps(m, n, 0), b2, b3;
	size_t k, div = n - ((flags & FPL_REDUCE_SAMPLE) ? 1 : 0);
	double s, mu, M, e, delta, q;

	for (k = 0; k < n; k++) {
		at(&R, k);
		xs[k] = fpl_round(&m->a, x[k], m->a_rnd, st);
	}
	switch (op) {
	case FPL_REDUCE_SUM:
		s = r_sum(&R, 1, n, xs, &m->a, B);
		out[0] = r_out(&R, s, B + S1 - 1);
		break;
	case FPL_REDUCE_MEAN:
		if (!n) {
			out[0] = nan_of(m);
			break;
		}
		s = r_sum(&R, 1, n, xs, &m->a, B);
		out[0] = r_out(&R, r_div(&R, s, (double)n, B + S1), B + S1 + 1);
		break;
	case FPL_REDUCE_VAR:
		if (!n || !div) {
			out[0] = nan_of(m);
			break;
		}
		s = r_sum(&R, 1, n, xs, &m->a, B);
		mu = r_div(&R, s, (double)n, B + S1);
		for (k = 0; k < n; k++)
			t[k] = r_sub(&R, xs[k], mu, B + S1 + 1 + k);
		b2 = B + S1 + 1 + n;
		s = r_sum(&R, 0, n, t, &m->acc, b2);
		out[0] = r_out(&R, r_div(&R, s, (double)div, b2 + S2), b2 + S2 + 1);
		break;
	case FPL_REDUCE_VAR_WELFORD:
		if (!n || !div) {
			out[0] = nan_of(m);
			break;
		}
		mu = 0.0;
		s = 0.0;
		for (k = 1; k <= n; k++) {
			uint64_t d = B + 6 * (k - 1);
			delta = r_sub(&R, xs[k - 1], mu, d);
			q = r_div(&R, delta, (double)k, d + 1);
			mu = r_add(&R, mu, q, d + 2);
			e = r_sub(&R, xs[k - 1], mu, d + 3);
			s = r_prod(&R, s, delta, e, d + 4, d + 5);
		}
		out[0] = r_out(&R, r_div(&R, s, (double)div, B + 6 * n), B + 6 * n + 1);
		break;
	case FPL_REDUCE_NORM2:
		s = r_sum(&R, 0, n, xs, &m->a, B);
		at(&R, B + S2);
		s = fpl_sqrt(&m->acc, s, m->acc_rnd, st);
		out[0] = r_out(&R, s, B + S2 + 1);
		break;
	case FPL_REDUCE_SOFTMAX:
	case FPL_REDUCE_LOGSUMEXP:
		if (!n) {
			if (op == FPL_REDUCE_LOGSUMEXP)
				out[0] = nan_of(m);
			break;
		}
		M = -INFINITY;
		for (k = 0; k < n; k++) {
			if (isnan(xs[k])) {
				M = xs[k];
				break;
			}
			if (xs[k] > M || (xs[k] == M && !signbit(xs[k])))
				M = xs[k];
		}
		if (isinf(M))
			M = 0.0;
		for (k = 0; k < n; k++)
			t[k] = r_sub(&R, xs[k], M, B + k);
		for (k = 0; k < n; k++)
			t[k] = r_fn(&R, 0, t[k], B + n + k);
		s = r_sum(&R, 1, n, t, &m->acc, B + 2 * n);
		b3 = B + 2 * n + S1;
		if (op == FPL_REDUCE_LOGSUMEXP) {
			s = r_fn(&R, 1, s, b3);
			out[0] = r_out(&R, r_add(&R, M, s, b3 + 1), b3 + 2);
		} else {
			for (k = 0; k < n; k++)
				t[k] = r_div(&R, t[k], s, b3 + k);
			for (k = 0; k < n; k++)
				out[k] = r_out(&R, t[k], b3 + n + k);
		}
		break;
	default:
		break;
	}
	st->counter = R.c0 + fpl_reduce_draws(op, m, n);
	free(xs);
	free(t);
}

/* ------------------------------------------------------------ model tests */

static int same_out(double a, double b)
{
	return h_same(a, b) || (isnan(a) && isnan(b));
}

static void fmt(fpl_format *f, const char *name)
{
	if (fpl_format_lookup(f, name))
		h_fail("no format %s", name);
}

static double gen(h_rng *g, int kind, int specials)
{
	switch (kind) {
	case 0: return h_rng_value(g, -3, 3, 53, specials);
	case 1: return (double)(int)h_rng_below(g, 9) - 4.0;
	case 2: return 1000.0 + h_rng_value(g, -6, -2, 53, specials);
	default: return h_rng_value(g, -30, 20, 53, specials);
	}
}

static void check_model(fpl_reduce_op op, unsigned flags, const fpl_accum_model *m, size_t n,
			const double *x, uint64_t seed, const char *what)
{
	fpl_state s1, s2;
	double o1[64], o2[64];
	size_t k, no = fpl_reduce_outputs(op, n);
	int r, ok, q;

	fpl_state_init(&s1, seed);
	s1.counter = seed % 1000;
	s2 = s1;
	r = fpl_reduce(o1, op, flags, m, n, x, 1, &s1);
	model_ref(o2, op, flags, m, n, x, &s2);
	ok = r == 0 && s1.flags == s2.flags && s1.counter == s2.counter;
	for (q = 0; q < FPL_NFLAGS; q++)
		ok = ok && s1.count[q] == s2.count[q];
	for (k = 0; k < no; k++)
		ok = ok && same_out(o1[k], o2[k]);
	if (!h_check(ok)) {
		char b1[80], b2[80];
		h_fail("%s %s%s n=%zu: status %d, got %a [%s] ctr %llu, expected %a [%s] ctr %llu",
		       fpl_reduce_name(op), flags ? "sample " : "", what, n, r, no ? o1[0] : 0.0,
		       h_flags(s1.flags, b1, sizeof b1), (unsigned long long)s1.counter,
		       no ? o2[0] : 0.0, h_flags(s2.flags, b2, sizeof b2),
		       (unsigned long long)s2.counter);
		for (k = 0; k < no && k < 8; k++)
			if (!same_out(o1[k], o2[k]))
				h_note("   out[%zu] got %a expected %a", k, o1[k], o2[k]);
	}
}

static void test_model(void)
{
	static const char *accs[] = { "fp16", "bf16", "e4m3fn", "fp32" };
	static const fpl_rnd modes[] = { FPL_RND_NE, FPL_RND_TZ, FPL_RND_SP };
	static const char *orders[] = { "sequential", "pairwise", "pairwise:4", "kahan",
					"blocked:8", "blocked:4:bf16", "neumaier", "fused:4",
					"pairs", "evenodd:4" };
	h_rng g;
	size_t a, mo, o, it, iters = h_scale(3, 20);

	h_rng_init(&g, 11);
	for (a = 0; a < 4; a++)
		for (mo = 0; mo < 3; mo++)
			for (o = 0; o < sizeof orders / sizeof *orders; o++)
				for (it = 0; it < iters; it++) {
					fpl_accum_model m;
					double x[64];
					size_t n = h_rng_below(&g, 40), k;
					int kind = (int)h_rng_below(&g, 4), sp = h_rng_below(&g, 4) == 0;
					int op;
					char what[120];

					fpl_accum_init(&m);
					fmt(&m.acc, accs[a]);
					m.acc_rnd = modes[mo];
					if (h_rng_below(&g, 2))
						m.a = m.acc;
					m.a_rnd = modes[h_rng_below(&g, 3)];
					m.prod_exact = (int)h_rng_below(&g, 2);
					m.prod = m.acc;
					m.prod_rnd = modes[h_rng_below(&g, 3)];
					fpl_accum_parse_order(&m, orders[o]);
					if (h_rng_below(&g, 3) == 0) {
						m.out_set = 1;
						fmt(&m.out, "bf16");
						m.out_rnd = modes[h_rng_below(&g, 3)];
					}
					for (k = 0; k < n; k++)
						x[k] = gen(&g, kind, sp);
					snprintf(what, sizeof what, "acc %s:%d a %s order %s prod %s out %d",
						 accs[a], (int)modes[mo], m.a.name, orders[o],
						 m.prod_exact ? "exact" : "rounded", m.out_set);
					for (op = 0; op < FPL_REDUCE_COUNT; op++) {
						uint64_t seed = h_rng_next(&g);
						check_model((fpl_reduce_op)op, 0, &m, n, x, seed, what);
						if (op == FPL_REDUCE_VAR || op == FPL_REDUCE_VAR_WELFORD)
							check_model((fpl_reduce_op)op, FPL_REDUCE_SAMPLE,
								    &m, n, x, seed, what);
					}
				}
}

/* ------------------------------------------------------------ reference tests */

#define XP 2400		/* holds every sum of binary64 values exactly */

/* v (exact or truncated toward zero with ternary t) rounded to odd at 200
 * bits, then to binary64: the correct rounding of the real number. */
static double odd64(mpfr_t v, int t)
{
	mpfr_t w;
	mpz_t z;
	long e;
	double r;

	mpfr_init2(w, 200);
	t |= mpfr_set(w, v, MPFR_RNDZ);
	if (t && !mpfr_zero_p(w)) {
		int neg = mpfr_signbit(w) != 0;
		mpz_init(z);
		e = mpfr_get_z_2exp(z, w);
		mpz_abs(z, z);
		mpz_setbit(z, 0);
		if (neg)
			mpz_neg(z, z);
		mpfr_set_z_2exp(w, z, e, MPFR_RNDN);
		mpz_clear(z);
	}
	r = mpfr_get_d(w, MPFR_RNDN);
	mpfr_clear(w);
	return r;
}

static void mp_sum(mpfr_t s, size_t n, const double *x, int squares)
{
	mpfr_t t;
	size_t k;

	mpfr_set_zero(s, 1);
	mpfr_init2(t, 110);
	for (k = 0; k < n; k++) {
		mpfr_set_d(t, x[k], MPFR_RNDN);
		if (squares)
			mpfr_sqr(t, t, MPFR_RNDN);
		mpfr_add(s, s, t, MPFR_RNDN);	/* exact: precision suffices */
	}
	mpfr_clear(t);
}

/* The correctly rounded sum, mean, var or norm2 (finite inputs). */
static double mp_exact_op(fpl_reduce_op op, unsigned flags, size_t n, const double *x)
{
	mpfr_t s, p, q, r;
	size_t d = n - ((flags & FPL_REDUCE_SAMPLE) ? 1 : 0);
	double res;
	int t = 0;

	mpfr_init2(s, XP);
	mpfr_init2(p, 2 * XP);
	mpfr_init2(q, 4 * XP);
	mpfr_init2(r, 200);
	mp_sum(s, n, x, 0);
	mp_sum(p, n, x, 1);
	switch (op) {
	case FPL_REDUCE_SUM:
		t = mpfr_set(r, s, MPFR_RNDZ);
		break;
	case FPL_REDUCE_MEAN:
		t = mpfr_div_ui(r, s, (unsigned long)n, MPFR_RNDZ);
		break;
	case FPL_REDUCE_NORM2:
		t = mpfr_sqrt(r, p, MPFR_RNDZ);
		break;
	default:
		mpfr_sqr(q, s, MPFR_RNDN);
		mpfr_mul_ui(p, p, (unsigned long)n, MPFR_RNDN);
		mpfr_sub(q, p, q, MPFR_RNDN);	/* exact */
		mpfr_set_ui(s, (unsigned long)n, MPFR_RNDN);
		mpfr_mul_ui(s, s, (unsigned long)d, MPFR_RNDN);	/* n d, exact */
		t = mpfr_div(r, q, s, MPFR_RNDZ);
		break;
	}
	res = odd64(r, t);
	mpfr_clears(s, p, q, r, (mpfr_ptr)0);
	return res;
}

static double max_err_soft;

/* Softmax and logsumexp within the stated bound. */
static void check_soft(fpl_reduce_op op, size_t n, const double *x, const char *what)
{
	double got[64], M = -INFINITY, lo, hi;
	unsigned long c = 0;
	mpfr_t S, e, v, L, b;
	size_t k, no = fpl_reduce_outputs(op, n);
	int r = fpl_reduce_reference(got, op, 0, n, x, 1);

	if (!h_check(r == 0))
		h_fail("reference %s: status %d", fpl_reduce_name(op), r);
	for (k = 0; k < n; k++)
		M = x[k] > M ? x[k] : M;
	mpfr_inits2(400, S, e, v, L, b, (mpfr_ptr)0);
	/* S = c + T, c the count of maxima: log S = log c + log1p(T/c) keeps
	 * log S accurate when S is within 2^-400 of 1 */
	mpfr_set_zero(S, 1);
	for (k = 0; k < n; k++) {
		if (x[k] == M) {
			c++;
			continue;
		}
		mpfr_set_d(e, x[k], MPFR_RNDN);
		mpfr_sub_d(e, e, M, MPFR_RNDN);
		mpfr_exp(e, e, MPFR_RNDN);
		mpfr_add(S, S, e, MPFR_RNDN);
	}
	mpfr_div_ui(L, S, c, MPFR_RNDN);
	mpfr_log1p(L, L, MPFR_RNDN);
	mpfr_set_ui(e, c, MPFR_RNDN);
	mpfr_log(e, e, MPFR_RNDN);
	mpfr_add(L, L, e, MPFR_RNDN);
	mpfr_add_ui(S, S, c, MPFR_RNDN);
	for (k = 0; k < no; k++) {
		if (op == FPL_REDUCE_LOGSUMEXP) {
			mpfr_add_d(v, L, M, MPFR_RNDN);
			mpfr_mul_2si(b, L, -90, MPFR_RNDN);
		} else {
			mpfr_set_d(v, x[k], MPFR_RNDN);
			mpfr_sub_d(v, v, M, MPFR_RNDN);
			mpfr_exp(v, v, MPFR_RNDN);
			mpfr_div(v, v, S, MPFR_RNDN);
			mpfr_mul_2si(b, v, -90, MPFR_RNDN);
			mpfr_abs(b, b, MPFR_RNDN);
		}
		mpfr_set_ui_2exp(e, 1, -1200, MPFR_RNDN);
		mpfr_add(b, b, e, MPFR_RNDN);
		mpfr_sub(e, v, b, MPFR_RNDN);
		lo = mpfr_get_d(e, MPFR_RNDN);
		mpfr_add(e, v, b, MPFR_RNDN);
		hi = mpfr_get_d(e, MPFR_RNDN);
		if (!h_check(got[k] >= lo && got[k] <= hi))
			h_fail("reference %s %s n=%zu out[%zu]: got %a, allowed [%a, %a]",
			       fpl_reduce_name(op), what, n, k, got[k], lo, hi);
		if (got[k] != mpfr_get_d(v, MPFR_RNDN))
			h_note("reference %s %s: not the nearest (allowed by the bound)",
			       fpl_reduce_name(op), what);
		/* the measured relative error before rounding cannot be seen
		 * after it; record the binary64 one */
		if (mpfr_cmpabs_ui(v, 0) > 0 && mpfr_get_exp(v) > -1021) {	/* normal */
			mpfr_set_d(e, got[k], MPFR_RNDN);
			mpfr_sub(e, e, v, MPFR_RNDN);
			mpfr_div(e, e, v, MPFR_RNDN);
			if (fabs(mpfr_get_d(e, MPFR_RNDN)) > max_err_soft)
				max_err_soft = fabs(mpfr_get_d(e, MPFR_RNDN));
		}
	}
	mpfr_clears(S, e, v, L, b, (mpfr_ptr)0);
}

static void check_exact(fpl_reduce_op op, unsigned flags, size_t n, const double *x,
			const char *what)
{
	double got, want = mp_exact_op(op, flags, n, x);
	int r = fpl_reduce_reference(&got, op, flags, n, x, 1);

	if (!h_check(r == 0 && h_same(got, want)))
		h_fail("reference %s%s %s n=%zu: got %a, expected %a", fpl_reduce_name(op),
		       flags ? " sample" : "", what, n, got, want);
}

static void check_all_ref(size_t n, const double *x, const char *what)
{
	check_exact(FPL_REDUCE_SUM, 0, n, x, what);
	if (n) {
		check_exact(FPL_REDUCE_MEAN, 0, n, x, what);
		check_exact(FPL_REDUCE_VAR, 0, n, x, what);
		check_exact(FPL_REDUCE_VAR_WELFORD, 0, n, x, what);
		check_soft(FPL_REDUCE_SOFTMAX, n, x, what);
		check_soft(FPL_REDUCE_LOGSUMEXP, n, x, what);
	}
	if (n > 1)
		check_exact(FPL_REDUCE_VAR, FPL_REDUCE_SAMPLE, n, x, what);
	check_exact(FPL_REDUCE_NORM2, 0, n, x, what);
}

static void test_reference(void)
{
	h_rng g;
	size_t it, iters = h_scale(300, 5000), k;
	double x[64];

	h_rng_init(&g, 12);
	for (it = 0; it < iters; it++) {
		size_t n = 1 + h_rng_below(&g, 40);
		int kind = (int)h_rng_below(&g, 6);
		for (k = 0; k < n; k++) {
			switch (kind) {
			case 0: x[k] = h_rng_value(&g, -5, 5, 53, 0); break;
			case 1: x[k] = 1e8 + h_rng_value(&g, -10, 0, 53, 0); break;	/* large mean */
			case 2: x[k] = h_rng_value(&g, -1074, 1023, 53, 0); break;	/* huge range */
			case 3: x[k] = h_rng_value(&g, -3, 12, 53, 0); break;	/* softmax range */
			case 4: x[k] = h_rng_value(&g, -1074, -1000, 53, 0); break;	/* subnormal */
			default: x[k] = 0x1.8p3; break;	/* all equal */
			}
		}
		check_all_ref(n, x, kind == 1 ? "large-mean" : kind == 2 ? "huge-range"
				    : kind == 4 ? "tiny" : kind == 5 ? "equal" : "random");
	}
	/* near-cancelling variance: x = 2^52 + {0, 1, 2} ... */
	for (k = 0; k < 5; k++)
		x[k] = 0x1p52 + (double)k;
	check_all_ref(5, x, "2^52+k");
	/* softmax, logsumexp: -inf entries and a spread beyond exp's range */
	{
		double y[5] = { 0.0, -INFINITY, -800.0, -1e300, 3.0 }, o[5];
		check_soft(FPL_REDUCE_SOFTMAX, 4, y, "-inf/-800");	/* without the 3 */
		fpl_reduce_reference(o, FPL_REDUCE_SOFTMAX, 0, 5, y, 1);
		h_check(o[1] == 0 && o[3] == 0 && !signbit(o[1]));
		check_soft(FPL_REDUCE_LOGSUMEXP, 2, (double[]){ 0.0, -700.0 }, "0,-700");
		check_soft(FPL_REDUCE_LOGSUMEXP, 3, (double[]){ -1e-300, -760.0, -1e-300 },
			   "log near 1");
	}
	/* specials */
	{
		double y[3] = { 1.0, NAN, 2.0 }, o[3];
		size_t op;
		for (op = 0; op < FPL_REDUCE_COUNT; op++) {
			fpl_reduce_reference(o, (fpl_reduce_op)op, 0, 3, y, 1);
			h_check(isnan(o[0]));
		}
		y[1] = INFINITY;
		fpl_reduce_reference(o, FPL_REDUCE_LOGSUMEXP, 0, 3, y, 1);
		h_check(o[0] == INFINITY);
		fpl_reduce_reference(o, FPL_REDUCE_SOFTMAX, 0, 3, y, 1);
		h_check(o[0] == 0 && isnan(o[1]) && o[2] == 0);
		fpl_reduce_reference(o, FPL_REDUCE_VAR, 0, 3, y, 1);
		h_check(isnan(o[0]));
		fpl_reduce_reference(o, FPL_REDUCE_NORM2, 0, 3, y, 1);
		h_check(o[0] == INFINITY);
		y[0] = y[1] = y[2] = -INFINITY;
		fpl_reduce_reference(o, FPL_REDUCE_LOGSUMEXP, 0, 3, y, 1);
		h_check(o[0] == -INFINITY);
		fpl_reduce_reference(o, FPL_REDUCE_SOFTMAX, 0, 3, y, 1);
		h_check(isnan(o[0]) && isnan(o[2]));
	}
	h_note("softmax/logsumexp reference: max relative error after rounding %.3g", max_err_soft);
}

/* ------------------------------------------------------------ hand facts */

static void test_hand(void)
{
	static double ones[4096], x4[4] = { 1, 2, 3, 4 }, z2[2] = { 0, 0 };
	fpl_accum_model m;
	fpl_state st;
	double r, o[2];
	size_t k;

	for (k = 0; k < 4096; k++)
		ones[k] = 1.0;
	fpl_accum_init(&m);
	fmt(&m.acc, "fp16");
	fpl_state_init(&st, 1);
	/* 2048 + 1 is a tie in fp16 (spacing 2 above 2048): even, 2048 stays */
	fpl_reduce(&r, FPL_REDUCE_SUM, 0, &m, 4096, ones, 1, &st);
	h_check(r == 2048);
	fpl_reduce(&r, FPL_REDUCE_MEAN, 0, &m, 4096, ones, 1, &st);
	h_check(r == 0.5);	/* 2048 / 4096 */
	fpl_accum_parse_order(&m, "kahan");
	fpl_reduce(&r, FPL_REDUCE_SUM, 0, &m, 4096, ones, 1, &st);
	h_check(r == 4096);
	fpl_accum_parse_order(&m, "pairwise");
	fpl_reduce(&r, FPL_REDUCE_SUM, 0, &m, 4096, ones, 1, &st);
	h_check(r == 4096);	/* every partial sum is a power of two */
	/* var of 1..4: mean 2.5, squares of deviations 2.25+0.25+0.25+2.25 = 5 */
	fpl_accum_init(&m);
	fpl_reduce(&r, FPL_REDUCE_VAR, 0, &m, 4, x4, 1, &st);
	h_check(r == 1.25);
	fpl_reduce(&r, FPL_REDUCE_VAR_WELFORD, 0, &m, 4, x4, 1, &st);
	h_check(r == 1.25);
	fpl_reduce(&r, FPL_REDUCE_VAR, FPL_REDUCE_SAMPLE, &m, 4, x4, 1, &st);
	h_check(r == (double)(5.0f / 3.0f));	/* 5/3 rounded to fp32 */
	fpl_reduce_reference(&r, FPL_REDUCE_VAR, 0, 4, x4, 1);
	h_check(r == 1.25);
	fpl_reduce_reference(&r, FPL_REDUCE_VAR, FPL_REDUCE_SAMPLE, 4, x4, 1);
	h_check(r == 5.0 / 3.0);
	/* softmax {0,0}: exp(0) = 1, S = 2, 1/2 */
	fpl_reduce(o, FPL_REDUCE_SOFTMAX, 0, &m, 2, z2, 1, &st);
	h_check(o[0] == 0.5 && o[1] == 0.5);
	fpl_reduce_reference(o, FPL_REDUCE_SOFTMAX, 0, 2, z2, 1);
	h_check(o[0] == 0.5 && o[1] == 0.5);
	/* logsumexp {0,0} = log 2: in fp32 0x1.62e43p-1 (0.693147182), binary64 */
	fpl_reduce(&r, FPL_REDUCE_LOGSUMEXP, 0, &m, 2, z2, 1, &st);
	h_check(r == 0x1.62e43p-1);
	fpl_reduce_reference(&r, FPL_REDUCE_LOGSUMEXP, 0, 2, z2, 1);
	h_check(r == 0x1.62e42fefa39efp-1);
	/* n = 0 and n = 1 */
	fpl_reduce(&r, FPL_REDUCE_SUM, 0, &m, 0, NULL, 1, &st);
	h_check(h_same(r, 0.0));
	fpl_reduce(&r, FPL_REDUCE_MEAN, 0, &m, 0, NULL, 1, &st);
	h_check(isnan(r));
	fpl_reduce(&r, FPL_REDUCE_VAR, FPL_REDUCE_SAMPLE, &m, 1, x4, 1, &st);
	h_check(isnan(r));
	fpl_reduce(&r, FPL_REDUCE_VAR, 0, &m, 1, x4, 1, &st);
	h_check(h_same(r, 0.0));
	fpl_reduce(&r, FPL_REDUCE_NORM2, 0, &m, 0, NULL, 1, &st);
	h_check(h_same(r, 0.0));
	h_check(!(st.flags & FPL_FLAG_INVALID));
	/* names */
	for (k = 0; k < FPL_REDUCE_COUNT; k++) {
		fpl_reduce_op op;
		h_check(fpl_reduce_parse(fpl_reduce_name((fpl_reduce_op)k), &op) == 0 && op == k);
	}
	{
		fpl_reduce_op op;
		h_check(fpl_reduce_parse("median", &op) == FPL_ENOTFOUND);
	}
	/* sum equals fpl_accum_sum, counter included */
	{
		fpl_state a, b;
		double y[7] = { 1, 0x1p-12, 3, -5, 0x1.8p-20, 7, 1e4 }, ra, rb;
		fpl_accum_init(&m);
		fmt(&m.acc, "bf16");
		m.acc_rnd = FPL_RND_SP;
		fpl_state_init(&a, 99);
		b = a;
		fpl_reduce(&ra, FPL_REDUCE_SUM, 0, &m, 7, y, 1, &a);
		fpl_accum_sum(&rb, &m, 7, y, 1, NULL, NULL, &b);
		h_check(h_same(ra, rb) && a.counter == b.counter && a.flags == b.flags);
	}
}

/* reduce.c's switch: exp and log through MPFR only. */
extern int fpl__reduce_mpfr_only;

/*
 * exp and log's binary64 shortcut against MPFR alone (reduce.c): softmax
 * and logsumexp of pairs and triples of values of the format, over the
 * whole range (subnormals, values whose exp overflows or underflows the
 * format), every mode, stochastic ones included: the same outputs,
 * flags, counts and counter.
 */
static void test_shortcut(void)
{
	static const char *accs[] = { "fp16", "bf16", "e5m2", "e4m3fn", "fp32", "fp16+ftz",
				      "e4m3fn+sat", "fp64" };
	h_rng g;
	size_t a, it, iters = h_scale(400, 4000);
	int mo, op;

	h_rng_init(&g, 21);
	for (a = 0; a < sizeof accs / sizeof *accs; a++)
		for (mo = 0; mo < FPL_RND_COUNT; mo++)
			for (it = 0; it < iters; it++) {
				fpl_accum_model m;
				fpl_state s1, s2;
				double x[3], o1[3], o2[3];
				size_t n = 2 + h_rng_below(&g, 2), k;
				int ok, q;

				fpl_accum_init(&m);
				if (fpl_accum_parse_spec(accs[a], &m.acc, &m.acc_rnd, NULL))
					h_fail("no format %s", accs[a]);
				m.a = m.acc;
				m.acc_rnd = (fpl_rnd)mo;
				for (k = 0; k < n; k++) {
					double v = h_rng_value(&g, m.acc.emin - m.acc.m - 1, m.acc.emax < 12 ?
							       m.acc.emax + 1 : 12, 53, 0);
					fpl_state t;
					fpl_state_init(&t, 1);
					x[k] = fpl_round(&m.acc, v, FPL_RND_NE, &t);
				}
				op = h_rng_below(&g, 2) ? FPL_REDUCE_SOFTMAX : FPL_REDUCE_LOGSUMEXP;
				fpl_state_init(&s1, h_rng_next(&g));
				s2 = s1;
				fpl__reduce_mpfr_only = 1;
				ok = fpl_reduce(o1, (fpl_reduce_op)op, 0, &m, n, x, 1, &s1) == 0;
				fpl__reduce_mpfr_only = 0;
				ok = ok && fpl_reduce(o2, (fpl_reduce_op)op, 0, &m, n, x, 1, &s2) == 0;
				ok = ok && s1.flags == s2.flags && s1.counter == s2.counter;
				for (q = 0; q < FPL_NFLAGS; q++)
					ok = ok && s1.count[q] == s2.count[q];
				for (k = 0; k < fpl_reduce_outputs((fpl_reduce_op)op, n); k++)
					ok = ok && same_out(o1[k], o2[k]);
				if (!h_check(ok))
					h_fail("exp/log shortcut: %s %s %s of %zu values (%a, %a): %a vs "
					       "MPFR %a", fpl_reduce_name((fpl_reduce_op)op), accs[a],
					       fpl_rnd_name((fpl_rnd)mo), n, x[0], x[1], o2[0], o1[0]);
			}
	h_note("exp and log: the binary64 shortcut equals MPFR in every mode");
}

int main(void)
{
	h_init("treduce");
	test_shortcut();
	test_hand();
	test_reference();
	test_model();
	return h_done();
}

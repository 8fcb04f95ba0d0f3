/* SPDX-License-Identifier: MIT */
/*
 * reduce.c - fpl_reduce: sum, mean, variance, 2-norm, softmax and
 * log-sum-exp of a vector under an accumulation model (fplab/reduce.h).
 *
 * The invariant a reader must know: every rounding takes its draw index
 * from the layout of reduce.h (loads, then phases laid end to end), and
 * every sum of n terms is one tile of the accumulation layer
 * (fpl__acc_tile_run, the code behind fpl_accum_sum) run with its step 0
 * at the phase's base, so a reduction's sums are bit for bit the sums
 * fpl_accum_sum and fpl_accum_dot compute.  Nothing touches the state
 * until the end: flags and counts are gathered here and committed once,
 * and only on success.
 *
 * exp and log: the engine has neither.  MPFR computes exp(x) or log(x) of
 * the binary64 operand at 128 bits, rounded toward zero; its ternary
 * value says whether bits were lost, and fpl_round_parts' contract
 * (fplab/ops.h) is exactly that such a truncation plus sticky rounds like
 * the real number itself, in every mode, stochastic ones included.  MPFR's
 * exponent range is widened for the call (exp(x) of |x| < 2^40 stays in
 * range) and restored; beyond |x| = 2^40 the result is handed over as a
 * number far above every format (x > 0) or as a deep underflow (x < 0),
 * which round exactly as the real number does (round_parts.c's FAR).
 * A shortcut decides most roundings into narrow formats without MPFR
 * (expolog_fast); it gives the same bits and flags or declines.
 */
#include <fenv.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gmp.h>
#include <mpfr.h>

#include <fplab/reduce.h>

#include "accum/accum_internal.h"

#if GMP_NUMB_BITS != 64
#error "reduce.c reads MPFR significands as 64-bit GMP limbs"
#endif

static const char *const names[FPL_REDUCE_COUNT] = {
	"sum", "mean", "var", "var-welford", "norm2", "softmax", "logsumexp",
};

const char *fpl_reduce_name(fpl_reduce_op op)
{
	return (unsigned)op < FPL_REDUCE_COUNT ? names[op] : "?";
}

int fpl_reduce_parse(const char *s, fpl_reduce_op *op)
{
	int i;

	if (!s || !op)
		return FPL_EINVAL;
	for (i = 0; i < FPL_REDUCE_COUNT; i++)
		if (!strcmp(s, names[i])) {
			*op = (fpl_reduce_op)i;
			return 0;
		}
	return FPL_ENOTFOUND;
}

size_t fpl_reduce_outputs(fpl_reduce_op op, size_t n)
{
	return op == FPL_REDUCE_SOFTMAX ? n : 1;
}

/* Phase lengths of reduce.h's layout. */
typedef struct layout {
	uint64_t n, S1, S2;	/* terms, steps of a value sum, of a sum of products */
	uint64_t B;		/* first draw after the loads and the reserved slot */
} layout;

static void layout_of(layout *L, const fpl_accum_model *m, size_t n)
{
	L->n = n;
	L->S1 = fpl_accum_steps(m, n, 1);
	L->S2 = fpl_accum_steps(m, n, 0);
	L->B = (uint64_t)n + 1;
}

/* Draws of op, counted from c0 (reduce.h lists each layout). */
static uint64_t draws_of(fpl_reduce_op op, const layout *L)
{
	uint64_t n = L->n;

	switch (op) {
	case FPL_REDUCE_SUM: return L->B + L->S1;
	case FPL_REDUCE_MEAN: return L->B + L->S1 + 2;
	case FPL_REDUCE_VAR: return L->B + L->S1 + 1 + n + L->S2 + 2;
	case FPL_REDUCE_VAR_WELFORD: return L->B + 6 * n + 2;
	case FPL_REDUCE_NORM2: return L->B + L->S2 + 2;
	case FPL_REDUCE_SOFTMAX: return L->B + 2 * n + L->S1 + 2 * n;
	case FPL_REDUCE_LOGSUMEXP: return L->B + 2 * n + L->S1 + 3;
	default: return 0;
	}
}

uint64_t fpl_reduce_draws(fpl_reduce_op op, const fpl_accum_model *mod, size_t n)
{
	layout L;

	if (!mod || (unsigned)op >= FPL_REDUCE_COUNT)
		return 0;
	layout_of(&L, mod, n);
	return draws_of(op, &L);
}

/* ------------------------------------------------------------ context */

typedef struct ctx {
	const fpl_accum_model *full;	/* the model as given */
	fpl_accum_model m;		/* the same without output rounding */
	const fpl_state *st;
	uint64_t c0;
	uint64_t cnt[FPL_NFLAGS];
	unsigned fl;
	double *scratch;		/* fused: 2F+1 doubles */
	int mp;				/* MPFR variables initialised */
	mpfr_t mx, my;
	mpz_t z;
	mpfr_exp_t emin, emax;
} ctx;

static void note(ctx *c, unsigned f)
{
	c->fl |= f;
	while (f) {
		c->cnt[__builtin_ctz(f)]++;
		f &= f - 1;
	}
}

/* One rounding into acc at draw c0 + d. */
static double add(ctx *c, double x, double y, uint64_t d)
{
	unsigned f = 0;
	double r = fpl__add_ix(&c->m.acc, x, y, c->m.acc_rnd, c->st, c->c0 + d, &f);
	note(c, f);
	return r;
}

static double sub(ctx *c, double x, double y, uint64_t d)
{
	return add(c, x, fpl__neg_num(y), d);
}

static double dvd(ctx *c, double x, double y, uint64_t d)
{
	unsigned f = 0;
	double r = fpl__div_ix(&c->m.acc, x, y, c->m.acc_rnd, c->st, c->c0 + d, &f);
	note(c, f);
	return r;
}

static double sqrt_(ctx *c, double x, uint64_t d)
{
	unsigned f = 0;
	double r = fpl__sqrt_ix(&c->m.acc, x, c->m.acc_rnd, c->st, c->c0 + d, &f);
	note(c, f);
	return r;
}

/* s + a*b as the model's term: fma (exact product) at draw d1, or the
 * product rounded into prod at draw d0 and then added at d1. */
static double add_product(ctx *c, double s, double a, double b, uint64_t d0, uint64_t d1)
{
	const fpl_accum_model *m = &c->m;
	unsigned f = 0;
	double p;

	if (m->prod_exact) {
		p = fpl__fma_ix(&m->acc, a, b, s, m->acc_rnd, c->st, c->c0 + d1, &f);
		note(c, f);
		return p;
	}
	p = fpl__mul_ix(&m->prod, a, b, m->prod_rnd, c->st, c->c0 + d0, &f);
	note(c, f);
	return add(c, s, p, d1);
}

/* The result rounded into out when the model says so, at draw c0 + d. */
static double output(ctx *c, double x, uint64_t d)
{
	unsigned f = 0;
	double r;

	if (!c->full->out_set)
		return x;
	r = fpl__round_ix(&c->full->out, x, c->full->out_rnd, c->st, c->c0 + d, &f);
	note(c, f);
	return r;
}

/* A NaN result without an operation (n too small): no flag. */
static double no_value(const ctx *c)
{
	return fpl__nan_default(c->full->out_set ? &c->full->out : &c->m.acc);
}

/*
 * A sum of the n terms t[] (sum = 1) or of the products t[k]*t[k] (sum =
 * 0) under model m, its step s at draw c0 + base + s: one tile of the
 * accumulation layer, as fpl_accum_sum / fpl_accum_dot run it.
 */
static double phase(ctx *c, const fpl_accum_model *m, int sum, size_t n, const double *t,
		    uint64_t base)
{
	fpl__acc_job J;
	fpl__acc_tile T;
	double r;
	int q;

	memset(&J, 0, sizeof J);
	J.m = m;
	J.st = c->st;
	J.M = J.N = 1;
	J.K = n;
	J.sum = sum;
	J.A = t;
	J.B = sum ? NULL : t;
	J.C = NULL;
	J.base = c->c0 + base;
	J.MN = 1;
	fpl_format_ieee(&J.f64, 11, 52);
	fpl_state_init(&J.plain, 0);
	memset(&T, 0, sizeof T);
	T.J = &J;
	T.nj = 1;
	T.scratch = c->scratch;
	fpl__acc_tile_run(&T, &r);
	c->fl |= T.fl[0];
	for (q = 0; q < FPL_NFLAGS; q++)
		c->cnt[q] += T.cnt[q];
	return r;
}

/* ------------------------------------------------------------ exp, log */

static void mp_start(ctx *c)
{
	if (c->mp)
		return;
	c->emin = mpfr_get_emin();
	c->emax = mpfr_get_emax();
	mpfr_set_emin(mpfr_get_emin_min());
	mpfr_set_emax(mpfr_get_emax_max());
	mpfr_init2(c->mx, 64);
	mpfr_init2(c->my, 128);
	mpz_init(c->z);
	c->mp = 1;
}

static void mp_end(ctx *c)
{
	if (!c->mp)
		return;
	mpfr_clear(c->mx);
	mpfr_clear(c->my);
	mpz_clear(c->z);
	mpfr_set_emin(c->emin);
	mpfr_set_emax(c->emax);
	c->mp = 0;
}

/*
 * exp(x) (is_log 0) or log(x) (is_log 1) of a value of acc (acc's DAZ
 * applies), correctly rounded into acc at draw c0 + d.  Specials:
 * exp(+-inf) = +inf, +0; log(+-0) = -inf with divide-by-zero; log of a
 * negative number (-inf included) is invalid; log(+inf) = +inf; a NaN
 * propagates (a signaling one raises invalid).
 */
int fpl__reduce_mpfr_only;

/*
 * The binary64 shortcut: y = exp(x) or log(x) from the C library, whose
 * error in round-to-nearest is below one binary64 ulp (glibc documents
 * about 0.51), so the exact value lies strictly between lo and hi, four
 * binary64 ulps below and above y.  For a fixed draw every mode of the
 * engine rounds monotonically (a larger real never gives a smaller
 * result), so when lo and hi round to the same result with the same
 * flags, both with inexact, every real between them does too, the exact
 * value included: its result is theirs, and so are its flags (it is
 * inexact, since e^x and log x are not binary64 numbers for x != 0 and
 * x != 1, excluded here, and tininess and overflow are monotone in the
 * magnitude, equal at both ends).  Otherwise (a result near a rounding
 * boundary, or a format too wide for 8 ulps of binary64 to fit in one of
 * its rounding intervals) it declines and MPFR decides.  Flips, a
 * rounding mode other than nearest in the C environment, and results
 * that are not normal binary64 numbers decline too.  1 when decided.
 */
static int expolog_fast(ctx *c, int is_log, double x, uint64_t idx, double *r, unsigned *fl)
{
	const fpl_format *f = &c->m.acc;
	unsigned fl_lo = 0, fl_hi = 0;
	double y, lo, hi, rl, rh;
	int i;

	if (fpl__reduce_mpfr_only || (c->st->flip != FPL_FLIP_NONE && c->st->flip_prob > 0)
	    || (is_log ? x == 1 : x == 0) || fegetround() != FE_TONEAREST)
		return 0;
	y = is_log ? log(x) : exp(x);
	lo = hi = y;
	for (i = 0; i < 4; i++) {
		lo = nextafter(lo, -INFINITY);
		hi = nextafter(hi, INFINITY);
	}
	if (!isnormal(lo) || !isnormal(hi) || (lo < 0) != (hi < 0))
		return 0;
	rl = fpl__round_ix(f, lo, c->m.acc_rnd, c->st, idx, &fl_lo);
	rh = fpl__round_ix(f, hi, c->m.acc_rnd, c->st, idx, &fl_hi);
	if (fpl__bits(rl) != fpl__bits(rh) || fl_lo != fl_hi || !(fl_lo & FPL_FLAG_INEXACT))
		return 0;
	*r = rl;
	*fl = fl_lo;
	return 1;
}

static double expolog(ctx *c, int is_log, double x, uint64_t d)
{
	const fpl_format *f = &c->m.acc;
	uint64_t idx = c->c0 + d, hi = 0, lo = 0;
	unsigned fl = 0;
	int64_t e = 0;
	int tern, neg = 0;
	double r;

	x = fpl__daz(f, x);
	if (fpl__isnan(x)) {
		r = fpl__nan_pick(f, &x, 1, &fl);
	} else if (is_log && x == 0) {
		fl |= FPL_FLAG_DIVBYZERO;
		r = fpl__inf(f, 1, &fl);
	} else if (is_log && fpl__signbit(x)) {
		r = fpl__nan_invalid(f, &fl);
	} else if (fpl__isinf(x)) {
		r = x > 0 ? fpl__inf(f, 0, &fl) : fpl__zero(f, 0, &fl);
	} else if (!is_log && (x > 0x1p40 || x < -0x1p40)) {
		/* e^x beyond 2^(2^40) or below 2^-(2^40): far outside every format */
		if (x > 0)
			hi = 1ull << 63, e = (int64_t)1 << 50;
		r = fpl__round_parts_ix(f, 0, x > 0 ? e : 0, hi, 0, 1, c->m.acc_rnd, c->st,
					idx, &fl);
		note(c, fl);
		return r;
	} else if (expolog_fast(c, is_log, x, idx, &r, &fl)) {
		note(c, fl);
		return r;
	} else {
		mp_start(c);
		mpfr_set_d(c->mx, x, MPFR_RNDN);	/* exact: 64 >= 53 bits */
		tern = is_log ? mpfr_log(c->my, c->mx, MPFR_RNDZ)
			      : mpfr_exp(c->my, c->mx, MPFR_RNDZ);
		if (!mpfr_zero_p(c->my)) {
			mpfr_exp_t ze = mpfr_get_z_2exp(c->z, c->my);	/* my = z * 2^ze */
			neg = mpfr_signbit(c->my) != 0;
			mpz_abs(c->z, c->z);
			hi = mpz_getlimbn(c->z, 1);
			lo = mpz_getlimbn(c->z, 0);
			e = (int64_t)ze;
		}
		r = fpl__round_parts_ix(f, neg, e, hi, lo, tern != 0, c->m.acc_rnd, c->st, idx,
					&fl);
		note(c, fl);
		return r;	/* round_parts applied the flips */
	}
	note(c, fl);
	return fpl__finish(f, r, c->st, idx);
}

/* ------------------------------------------------------------ the ops */

static double mean(ctx *c, size_t n, const double *x, const layout *L)
{
	double s = phase(c, &c->m, 1, n, x, L->B);
	return output(c, dvd(c, s, (double)n, L->B + L->S1), L->B + L->S1 + 1);
}

static double var2(ctx *c, size_t n, const double *x, double *t, size_t div, const layout *L)
{
	uint64_t b = L->B, b2 = b + L->S1 + 1 + n;
	double s = phase(c, &c->m, 1, n, x, b), m;
	size_t k;

	m = dvd(c, s, (double)n, b + L->S1);
	for (k = 0; k < n; k++)
		t[k] = sub(c, x[k], m, b + L->S1 + 1 + k);
	s = phase(c, &c->m, 0, n, t, b2);
	return output(c, dvd(c, s, (double)div, b2 + L->S2), b2 + L->S2 + 1);
}

static double welford(ctx *c, size_t n, const double *x, size_t div, const layout *L)
{
	double m = 0.0, s = 0.0, delta, q, e;
	size_t k;

	for (k = 1; k <= n; k++) {
		uint64_t d = L->B + 6 * (uint64_t)(k - 1);
		delta = sub(c, x[k - 1], m, d);
		q = dvd(c, delta, (double)k, d + 1);
		m = add(c, m, q, d + 2);
		e = sub(c, x[k - 1], m, d + 3);
		s = add_product(c, s, delta, e, d + 4, d + 5);
	}
	return output(c, dvd(c, s, (double)div, L->B + 6 * n), L->B + 6 * n + 1);
}

static double norm2(ctx *c, size_t n, const double *x, const layout *L)
{
	double s = phase(c, &c->m, 0, n, x, L->B);
	return output(c, sqrt_(c, s, L->B + L->S2), L->B + L->S2 + 1);
}

/* The shift of softmax and logsumexp: max_k x_k (exact; the first NaN if
 * any), replaced by 0 when infinite. */
static double shift(size_t n, const double *x)
{
	double M = -__builtin_inf();
	size_t k;

	for (k = 0; k < n; k++) {
		if (fpl__isnan(x[k]))
			return x[k];
		if (x[k] > M || (x[k] == M && !fpl__signbit(x[k])))
			M = x[k];
	}
	return fpl__isinf(M) ? 0.0 : M;
}

/* e[k] = exp(x_k - M); returns M. */
static double exps(ctx *c, size_t n, const double *x, double *e, const layout *L)
{
	double M = shift(n, x);
	size_t k;

	for (k = 0; k < n; k++)
		e[k] = sub(c, x[k], M, L->B + k);
	for (k = 0; k < n; k++)
		e[k] = expolog(c, 0, e[k], L->B + n + k);
	return M;
}

static double logsumexp(ctx *c, size_t n, const double *x, double *e, const layout *L)
{
	uint64_t b3 = L->B + 2 * n + L->S1;
	double M = exps(c, n, x, e, L), s = phase(c, &c->m, 1, n, e, L->B + 2 * n);

	s = expolog(c, 1, s, b3);
	return output(c, add(c, M, s, b3 + 1), b3 + 2);
}

static void softmax(ctx *c, double *out, size_t n, const double *x, double *e,
		    const layout *L)
{
	uint64_t b3 = L->B + 2 * n + L->S1;
	double s;
	size_t k;

	exps(c, n, x, e, L);
	s = phase(c, &c->m, 1, n, e, L->B + 2 * n);
	for (k = 0; k < n; k++)
		e[k] = dvd(c, e[k], s, b3 + k);
	for (k = 0; k < n; k++)
		out[k] = output(c, e[k], b3 + n + k);
}

/* ------------------------------------------------------------ driver */

/* Load x into xs (draw c0 + k), as fpl_accum_sum loads its terms. */
static int load(ctx *c, double *xs, size_t n, const double *x, ptrdiff_t incx)
{
	const fpl_accum_model *m = c->full;
	size_t k;

	if (m->a_block) {	/* the one block load (load.c), x as 1 x n */
		uint64_t cnt[FPL_NFLAGS] = { 0 };
		int r, q;
		for (k = 0; k < n; k++)
			xs[k] = x[(ptrdiff_t)k * incx];
		if ((r = fpl__acc_load_operand(xs, 1, n, m, 0, c->st, c->c0, cnt, NULL)))
			return r;
		for (q = 0; q < FPL_NFLAGS; q++) {
			c->cnt[q] += cnt[q];
			if (cnt[q])
				c->fl |= 1u << q;
		}
		return 0;
	}
	for (k = 0; k < n; k++) {
		double v = x[(ptrdiff_t)k * incx];
		if (m->a_load == FPL_LOAD_GIVEN) {
			if (!fpl__acc_is_value(&m->a, v))
				return FPL_ERANGE;
			xs[k] = v;
		} else {
			unsigned f = 0;
			xs[k] = fpl__round_ix(&m->a, v, m->a_rnd, c->st, c->c0 + k, &f);
			note(c, f);
		}
	}
	return 0;
}

static void compute(ctx *c, double *out, fpl_reduce_op op, unsigned flags, size_t n,
		    double *xs, double *t, const layout *L)
{
	size_t div = n - ((flags & FPL_REDUCE_SAMPLE) ? 1 : 0);

	switch (op) {
	case FPL_REDUCE_SUM:
		out[0] = phase(c, c->full, 1, n, xs, L->B);
		break;
	case FPL_REDUCE_MEAN:
		out[0] = n ? mean(c, n, xs, L) : no_value(c);
		break;
	case FPL_REDUCE_VAR:
		out[0] = n && div ? var2(c, n, xs, t, div, L) : no_value(c);
		break;
	case FPL_REDUCE_VAR_WELFORD:
		out[0] = n && div ? welford(c, n, xs, div, L) : no_value(c);
		break;
	case FPL_REDUCE_NORM2:
		out[0] = norm2(c, n, xs, L);
		break;
	case FPL_REDUCE_SOFTMAX:
		softmax(c, out, n, xs, t, L);
		break;
	case FPL_REDUCE_LOGSUMEXP:
		out[0] = n ? logsumexp(c, n, xs, t, L) : no_value(c);
		break;
	default:
		break;
	}
}

int fpl_reduce(double *out, fpl_reduce_op op, unsigned flags, const fpl_accum_model *mod,
	       size_t n, const double *x, ptrdiff_t incx, fpl_state *st)
{
	double *xs = NULL, *t = NULL, *scratch = NULL;
	layout L;
	ctx c;
	int r, q;

	if (!out || !mod || !st || (n && !x) || (unsigned)op >= FPL_REDUCE_COUNT
	    || (flags & ~FPL_REDUCE_SAMPLE))
		return FPL_EINVAL;
	if ((r = fpl_accum_check(mod, st)))
		return r;
	if (mod->order == FPL_ORDER_BLOCK)
		return FPL_EINVAL;	/* no products to block */
	if (n > ((size_t)1 << 58))
		return FPL_ERANGE;
	memset(&c, 0, sizeof c);
	c.full = mod;
	c.m = *mod;
	c.m.out_set = 0;
	c.st = st;
	c.c0 = st->counter;
	xs = malloc((n ? n : 1) * sizeof *xs);
	t = malloc((n ? n : 1) * sizeof *t);
	if (mod->order == FPL_ORDER_FUSED)
		scratch = malloc((2 * mod->block + 1) * sizeof *scratch);
	if (!xs || !t || (mod->order == FPL_ORDER_FUSED && !scratch)) {
		r = FPL_ENOMEM;
		goto done;
	}
	c.scratch = scratch;
	if ((r = load(&c, xs, n, x, incx)))
		goto done;
	layout_of(&L, mod, n);
	compute(&c, out, op, flags, n, xs, t, &L);
	mp_end(&c);
	for (q = 0; q < FPL_NFLAGS; q++)
		st->count[q] += c.cnt[q];
	st->flags |= c.fl;
	st->counter = c.c0 + draws_of(op, &L);
done:
	free(xs);
	free(t);
	free(scratch);
	return r;
}

/* SPDX-License-Identifier: MIT */
/*
 * error.c - the loads of fpl_accum_gemm replayed for the exact reference,
 * and the model's unit roundoff and classical error bound
 * (fplab/accum_error.h).  The comparison itself is in error_gemm.c.
 *
 * The invariant: fpl_accum_gemm_loads gives the bits fpl_accum_gemm feeds
 * its chains: the same gathering into dense row-major buffers, the same
 * "given" test, the same fpl_round_array call on a private copy of the
 * state with the counter at the range accum.h's schedule assigns (A at
 * c0, B at c0 + M*K, C at c0 + M*K + K*N; a sum has no B range).
 *
 * The bound.  Every order here computes, barring overflow and underflow,
 * R = sum_k x_k prod_{i <= K'} (1 + d_ki) (x_0..x_{K-1} the exact terms
 * a_k b_k, x_K = C), with |d_ki| <= u; Higham's Lemma 3.1 then gives
 * |R - E| <= gamma_K' sum_k |x_k|, gamma_n = n u / (1 - n u).  K' is the
 * most roundings a term goes through; fpl_accum_bound's comment in the
 * header lists it per order and says why.  u is 2^-p for the nearest
 * modes and 2^(1-p) for the directed, odd and stochastic ones (a result
 * one of the two neighbours of the exact value).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/accum_error.h>

#include "accum/accum_internal.h"

/* ------------------------------------------------------------ loads */

int fpl_accum_gemm_loads(double *al, double *bl, double *cl, const fpl_accum_model *mod,
			 size_t m, size_t n, size_t kk, const double *a, size_t lda,
			 int transa, const double *b, size_t ldb, int transb,
			 const double *c, size_t ldc, const fpl_state *st)
{
	size_t nA, nB, nC, i, k;
	ptrdiff_t sai = transa ? 1 : (ptrdiff_t)lda, sak = transa ? (ptrdiff_t)lda : 1;
	ptrdiff_t sbk = transb ? 1 : (ptrdiff_t)ldb, sbj = transb ? (ptrdiff_t)ldb : 1;
	uint64_t c0;
	int r, sum = b == NULL;

	if (!mod || !st || (sum && n != 1))
		return FPL_EINVAL;
	if ((r = fpl_accum_check(mod, st)))
		return r;
	if (m == 0 || n == 0)
		return 0;
	if ((c && (ldc < n || !cl))
	    || (kk && (!a || !al || (!transa && lda < kk) || (transa && lda < m)))
	    || (kk && !sum && (!bl || (!transb && ldb < n) || (transb && ldb < kk))))
		return FPL_EINVAL;
	if (__builtin_mul_overflow(m, kk, &nA) || __builtin_mul_overflow(kk, sum ? 0 : n, &nB)
	    || __builtin_mul_overflow(m, n, &nC) || nA > ((size_t)1 << 58)
	    || nB > ((size_t)1 << 58))
		return FPL_ERANGE;
	for (i = 0; i < m; i++)
		for (k = 0; k < kk; k++)
			al[i * kk + k] = a[(ptrdiff_t)i * sai + (ptrdiff_t)k * sak];
	for (k = 0; k < kk && !sum; k++)
		for (i = 0; i < n; i++)
			bl[k * n + i] = b[(ptrdiff_t)k * sbk + (ptrdiff_t)i * sbj];
	for (i = 0; c && i < nC; i++)
		cl[i] = c[(i / n) * ldc + i % n];
	c0 = st->counter;
	if ((r = fpl__acc_load(al, nA, &mod->a, mod->a_load, mod->a_rnd, st, c0, NULL))
	    || (r = fpl__acc_load(bl, nB, &mod->b, mod->b_load, mod->b_rnd, st, c0 + nA, NULL)))
		return r;
	if (c)
		return fpl__acc_load(cl, nC, fpl__acc_sum_format(mod), mod->a_load, mod->acc_rnd,
				     st, c0 + nA + nB, NULL);
	return 0;
}

/* ------------------------------------------------------------ the bound */

/* Unit roundoff of one rounding into f in mode rnd. */
static double fmt_u(const fpl_format *f, fpl_rnd rnd)
{
	int nearest = rnd == FPL_RND_NE || rnd == FPL_RND_NA || rnd == FPL_RND_NZ;
	return ldexp(1.0, nearest ? -(f->m + 1) : -f->m);
}

double fpl_accum_unit_roundoff(const fpl_accum_model *mod)
{
	double u, v;

	if (!mod)
		return NAN;
	u = fmt_u(&mod->acc, mod->acc_rnd);
	if (!mod->prod_exact && (v = fmt_u(&mod->prod, mod->prod_rnd)) > u)
		u = v;
	if (fpl__acc_promotes(mod) && (v = fmt_u(&mod->promo, mod->acc_rnd)) > u)
		u = v;
	if (mod->out_set && (v = fmt_u(&mod->out, mod->out_rnd)) > u)
		u = v;
	/* fused:F:W: the alignment moves the group's exact sum by at most
	 * (F+1) quanta 2^(E-W+1) (tz; half that in ne), each at most
	 * 2^(1-W) max|x| <= 2^(1-W) sum|x|: a perturbation of every term by a
	 * relative amount below v, i.e. one more "rounding" per group. */
	if (mod->order == FPL_ORDER_FUSED && mod->fused_w > 0) {
		v = ldexp((double)mod->block + 1,
			  mod->fused_rnd == FPL_RND_NE ? -mod->fused_w : 1 - mod->fused_w);
		if (v > u)
			u = v;
	}
	return u;
}

static double cdiv(double a, double b)
{
	return ceil(a / b);
}

/* ceil(log2 n) for n >= 1. */
static double clog2(double n)
{
	double d = 0, p = 1;

	while (p < n) {
		p *= 2;
		d += 1;
	}
	return d;
}

/* K': the most roundings one term (or C) goes through (accum_error.h). */
static double kprime(const fpl_accum_model *m, size_t k)
{
	double K = (double)k, L = (double)m->leaf, B = (double)m->block, n;

	if (k == 0)
		return m->out_set ? 1 : 0;
	switch (m->order) {
	case FPL_ORDER_PAIRWISE:
		n = fmin(L, K) + clog2(cdiv(K, L)) + 1;
		break;
	case FPL_ORDER_BLOCKED:
		n = fmin(B, K) + cdiv(K, B);
		break;
	case FPL_ORDER_FUSED:
		n = cdiv(K, B) * (m->fused_w > 0 ? 2 : 1);
		break;
	case FPL_ORDER_EVENODD:
		n = ceil(fmin(B, K) / 2) + 1 + cdiv(K, B);
		break;
	case FPL_ORDER_PAIRS:	/* a zero pad adds no error; blocks as blocked */
		n = m->pair_block ? fmin((double)m->pair_block, K) + cdiv(K, (double)m->pair_block)
				  : K;
		break;
	case FPL_ORDER_KAHAN:
	case FPL_ORDER_NEUMAIER:
		n = K + 1;
		break;
	default:	/* sequential */
		n = K;
		break;
	}
	return n + (m->prod_exact ? 0 : 1) + (m->out_set ? 1 : 0);
}

double fpl_accum_bound(const fpl_accum_model *mod, size_t k)
{
	double u, n;

	if (!mod)
		return NAN;
	u = fpl_accum_unit_roundoff(mod);
	n = kprime(mod, k);
	if (n == 0)
		return 0;
	return n * u >= 1 ? INFINITY : n * u / (1 - n * u);
}

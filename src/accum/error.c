/* SPDX-License-Identifier: MIT */
/*
 * error.c - the loads of fpl_accum_gemm replayed for the exact reference
 * (fplab/accum_error.h).  The comparison itself is in error_gemm.c, the
 * unit roundoff and the classical bound in bound.c.
 *
 * The invariant: fpl_accum_gemm_loads gives the bits fpl_accum_gemm feeds
 * its chains: the same gathering into dense row-major buffers, the same
 * "given" test, the same fpl_round_array call on a private copy of the
 * state with the counter at the range accum.h's schedule assigns (A at
 * c0, B at c0 + M*K, C at c0 + M*K + K*N; a sum has no B range).
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
	return fpl_accum_gemm_loads_blocks(al, bl, cl, mod, m, n, kk, a, lda, transa, b, ldb,
					   transb, c, ldc, st, NULL, NULL);
}

int fpl_accum_gemm_loads_blocks(double *al, double *bl, double *cl, const fpl_accum_model *mod,
				size_t m, size_t n, size_t kk, const double *a, size_t lda,
				int transa, const double *b, size_t ldb, int transb,
				const double *c, size_t ldc, const fpl_state *st,
				fpl_block_stats *sa, fpl_block_stats *sb)
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
	if ((r = fpl__acc_load_operand(al, m, kk, mod, 0, st, c0, NULL, sa))
	    || (r = fpl__acc_load_operand(bl, kk, sum ? 0 : n, mod, 1, st, c0 + nA, NULL, sb)))
		return r;
	if (c)
		return fpl__acc_load(cl, nC, fpl__acc_sum_format(mod), mod->a_load, fpl__acc_sum_rnd(mod),
				     st, c0 + nA + nB, NULL);
	return 0;
}

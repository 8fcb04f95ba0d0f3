/* SPDX-License-Identifier: MIT */
/*
 * chain_fused.c - the FUSED64 path: the fused order (fused:F, exact
 * groups, fused_w = 0) with exact products, run across a tile of
 * outputs: each group's S + F products summed in binary64 with TwoSum
 * (chain_fused_body.h; on AVX-512 and AVX2 by x86/chain_fused_avx512.c
 * and x86/chain_fused_avx2.c, the same bits), then rounded once into acc
 * by the kernel set's block rounding, the way chain_fast.c rounds a step.
 *
 * Why a lane's result is fpl__acc_fused_group's.  The reference sums the
 * group exactly (fpl_exact) and rounds the real sum once with the
 * group's draw index: fpl__exact_round_ix, that is fpl__round_parts_ix of
 * the sum's window; for a real sum that is a finite nonzero binary64 x,
 * that is fpl__round_unp of x's value as fpl__round_ix(acc, x) unpacks it
 * (both normalise the same value, with no sticky bit), then fpl__finish:
 * the same rounding.  Here x is that binary64 when the lane is not bad:
 *  - the products are exact: every a of A's format and b of B's has at
 *    most m_a+1 and m_b+1 significant bits, (m_a+1)+(m_b+1) <= 53, and
 *    |a b| lies in [2^(qa+qb), 2^(emax_a+emax_b+2)) with qa+qb >= -1074
 *    and emax_a+emax_b+2 <= 1023 (chain_fast.c's argument (1));
 *  - no partial sum overflows: |S| < 2^(emax_acc+1) and each product is
 *    below 2^hp, so every partial sum is below 2^(max(emax_acc+1, hp) +
 *    log2(F+1)) <= 2^1023 (checked below), so TwoSum's identity s + p =
 *    t + err holds exactly for every addition;
 *  - every error is 0 (bad not set), so each t is the exact partial sum,
 *    and the last one the exact group sum.
 * acc's DAZ would flush operands first (fused.c): a DAZ accumulator does
 * not take this path.  Lanes the reference does instead, from the
 * group's own operands and draw index (fpl__acc_fused_group): bad lanes
 * (an inexact addition, or an inf or NaN operand), a zero or non-finite
 * sum (the zero-sign rule over all terms, the specials), and whatever
 * the block kernel marks (tiny results, overflow: every lane that could
 * raise a flag other than inexact; chain_fast.c).  An unmarked lane
 * raises inexact iff the rounded y differs from x, counted here.
 */
#include <math.h>
#include <string.h>

#include <fplab/kernels.h>

#include "accum/accum_internal.h"

#define NT FPL__ACC_TILE
#define INEX_INDEX __builtin_ctz(FPL_FLAG_INEXACT)

#define FUSED_SUMS_NAME fused_sums
#define FUSED_SUMS_STORAGE static
#include "accum/chain_fused_body.h"

uint64_t fpl__acc_fused_avx2_runs;

int fpl__acc_fused64_ok(const fpl__acc_job *J)
{
	const fpl_accum_model *m = J->m;
	const fpl_format *a = &m->a, *b = &m->b, *c = &m->acc;
	int hp = a->emax + b->emax + 2, top = c->emax + 1 > hp ? c->emax + 1 : hp, lg = 0;
	size_t n;

	if (m->order != FPL_ORDER_FUSED || m->fused_w || m->fused_promote || J->sum || !m->prod_exact || m->block < 1)
		return 0;
	if (!a->explim || !b->explim || !c->explim || c->daz)
		return 0;
	for (n = m->block + 1; n > 1; n = (n + 1) / 2)
		lg++;	/* ceil(log2(F+1)) */
	return (a->m + 1) + (b->m + 1) <= 53 && a->emin - a->m + b->emin - b->m >= -1074
	       && hp <= 1023 && top + lg <= 1023;
}

/* The reference for lane jj of the group [k0, k1) from s. */
static double group_ref(fpl__acc_tile *T, size_t k0, size_t k1, double s, uint64_t idx,
			size_t jj)
{
	const fpl__acc_job *J = T->J;
	double *ops = T->scratch;
	unsigned fl = 0;
	size_t k;
	double r;

	ops[0] = s;
	for (k = k0; k < k1; k++) {
		ops[1 + 2 * (k - k0)] = J->A[T->i * J->K + k];
		ops[2 + 2 * (k - k0)] = J->B[k * J->N + T->j0 + jj];
	}
	r = fpl__acc_fused_group(J->m, ops, k1 - k0, J->st, idx, &fl);
	fpl__acc_note(T, jj, fl);
	return r;
}

int fpl__acc_fused64_tile(fpl__acc_tile *T, double *res)
{
	const fpl__acc_job *J = T->J;
	const size_t K = J->K, F = J->m->block, nj = T->nj;
	const double *arow = J->A + T->i * J->K, *b = J->B + T->j0;
	double sum[NT], y[NT];
	uint64_t spc[NT], ninex = 0, navx2 = 0;
	unsigned char bad[NT];
	size_t k0, jj;

	if (!T->scratch)
		return 0;
	for (jj = 0; jj < nj; jj++)
		res[jj] = J->C ? J->C[T->i * J->N + T->j0 + jj] : 0.0;
	for (k0 = 0; k0 < K; k0 += F) {
		const size_t k1 = K - k0 < F ? K : k0 + F;
		const uint64_t idx0 = fpl__acc_idx(T, k0 / F, 0);
		fpl_kcounts kc;

		memcpy(sum, res, nj * sizeof *sum);
		memset(bad, 0, sizeof bad);
#ifdef FPL_HAVE_X86_KERNELS
		if (J->simd >= 2)
			fpl__acc_fused_sums_avx512(arow, b, J->N, nj, k0, k1, sum, bad);
		else if (J->simd == 1)
			fpl__acc_fused_sums_avx2(arow, b, J->N, nj, k0, k1, sum, bad), navx2++;
		else
#endif
			fused_sums(arow, b, J->N, nj, k0, k1, sum, bad);
		for (jj = 0; jj < nj; jj++) {
			uint64_t z = (fpl__bits(sum[jj]) & ~FPL__SIGN_BIT) - 1;
			spc[jj] = bad[jj] | (z >= 0x7fefffffffffffffull);	/* zero, inf, NaN */
		}
		J->k->round(&J->kp, y, sum, nj, spc, 1, 0, idx0, &kc);
		for (jj = 0; jj < nj; jj++) {
			if (spc[jj]) {
				res[jj] = group_ref(T, k0, k1, res[jj], idx0 + jj, jj);
			} else {
				uint64_t inex = y[jj] != sum[jj];
				T->fl[jj] |= (unsigned)inex * FPL_FLAG_INEXACT;
				ninex += inex;
				res[jj] = y[jj];
			}
		}
	}
	T->cnt[INEX_INDEX] += ninex;
	if (navx2)
		__atomic_fetch_add(&fpl__acc_fused_avx2_runs, navx2, __ATOMIC_RELAXED);
	fpl__acc_tile_out(T, res);
	return 1;
}

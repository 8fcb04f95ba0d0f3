/* SPDX-License-Identifier: MIT */
/*
 * dot.c - one tile of outputs (row i, columns j0..j0+nj-1) under every
 * order of accum.h, step by step on the engine's _ix operations.
 *
 * Every rounding here names its step number as accum.h's schedule lists
 * it, and fpl__acc_idx turns (step, output) into the draw index; the loop
 * order (steps outer, outputs inner) is free, since no draw depends on
 * it.  Products rounded into `prod` are computed exactly once, at the
 * point their term is first used, with draw step k.  This is the
 * reference: a job that chain_fast.c gives a fast path leaves here at
 * once, and falls back to it tile by tile when the fast path declines.
 */
#include <math.h>

#include "accum/accum_internal.h"

#define NT FPL__ACC_TILE

typedef struct run {
	fpl__acc_tile *T;
	const fpl_accum_model *m;
	const fpl_state *st;
	const fpl_format *acc;
	fpl_rnd r;
	uint64_t P;		/* steps taken by rounded products */
	int exact;		/* terms are exact products a_k * b_k */
} run;

static double a_of(const run *R, size_t k)
{
	const fpl__acc_job *J = R->T->J;
	return J->A[R->T->i * J->K + k];
}

static double b_of(const run *R, size_t k, size_t jj)
{
	const fpl__acc_job *J = R->T->J;
	return J->B[k * J->N + R->T->j0 + jj];
}

/* Term k of output jj as a value (sums; rounded products: step k). */
static double term_value(run *R, size_t k, size_t jj)
{
	unsigned f = 0;
	double p;

	if (R->T->J->sum)
		return a_of(R, k);
	p = fpl__mul_ix(&R->m->prod, a_of(R, k), b_of(R, k, jj), R->m->prod_rnd, R->st,
			fpl__acc_idx(R->T, k, jj), &f);
	fpl__acc_note(R->T, jj, f);
	return p;
}

static void term_values(run *R, size_t k, double *tv)
{
	size_t jj;
	if (!R->exact)
		for (jj = 0; jj < R->T->nj; jj++)
			tv[jj] = term_value(R, k, jj);
}

/* x + y in f, one rounding, step s of output jj. */
/* x + y rounded once into f in mode r, at draw step s of output jj. */
static double add_fr(run *R, const fpl_format *f, fpl_rnd r, double x, double y, uint64_t s,
		     size_t jj)
{
	unsigned fl = 0;
	double z = fpl__add_ix(f, x, y, r, R->st, fpl__acc_idx(R->T, s, jj), &fl);
	fpl__acc_note(R->T, jj, fl);
	return z;
}

static double add_f(run *R, const fpl_format *f, double x, double y, uint64_t s, size_t jj)
{
	return add_fr(R, f, R->r, x, y, s, jj);
}

static double add(run *R, double x, double y, uint64_t s, size_t jj)
{
	return add_f(R, R->acc, x, y, s, jj);
}

static double fma_(run *R, double a, double b, double c, uint64_t s, size_t jj)
{
	unsigned fl = 0;
	double z = fpl__fma_ix(R->acc, a, b, c, R->r, R->st, fpl__acc_idx(R->T, s, jj), &fl);
	fpl__acc_note(R->T, jj, fl);
	return z;
}

/* acc + t_k: fma for an exact product, add for a value. */
static double add_term(run *R, size_t k, size_t jj, double acc, const double *tv, uint64_t s)
{
	if (R->exact)
		return fma_(R, a_of(R, k), b_of(R, k, jj), acc, s, jj);
	return add(R, acc, tv[jj], s, jj);
}

/* Sum terms [k0, k1) sequentially into s[], the term k at step P + k. */
static void chain(run *R, size_t k0, size_t k1, double *s)
{
	double tv[NT];
	size_t k, jj;

	for (k = k0; k < k1; k++) {
		term_values(R, k, tv);
		for (jj = 0; jj < R->T->nj; jj++)
			s[jj] = add_term(R, k, jj, s[jj], tv, R->P + k);
	}
}

static void zeros(double *s, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		s[i] = 0.0;
}

/* Pairwise: leaves [l0, l1) into out[]. */
static void pw_node(run *R, size_t l0, size_t l1, double *out)
{
	size_t L = R->m->leaf, K = R->T->J->K, mid, jj;
	double tmp[NT];

	if (l1 - l0 == 1) {
		zeros(out, R->T->nj);
		chain(R, l0 * L, l1 * L < K ? l1 * L : K, out);
		return;
	}
	mid = l0 + (l1 - l0 + 1) / 2;
	pw_node(R, l0, mid, out);
	pw_node(R, mid, l1, tmp);
	for (jj = 0; jj < R->T->nj; jj++)
		out[jj] = add(R, out[jj], tmp[jj], R->P + K + mid - 1, jj);
}

static void pairwise(run *R, double *s)
{
	size_t K = R->T->J->K, nl = (K + R->m->leaf - 1) / R->m->leaf, jj;
	double t[NT];

	if (nl == 0)
		zeros(t, R->T->nj);
	else
		pw_node(R, 0, nl, t);
	for (jj = 0; jj < R->T->nj; jj++)
		s[jj] = R->T->J->C ? add(R, s[jj], t[jj], R->P + K + (nl ? nl : 1) - 1, jj) : t[jj];
}

/* blocked; a keep_first job (pairs:B over its permuted copy, gemm.c)
 * without C takes block 0's result as R, as pairs:B does. */
static void blocked(run *R, double *s)
{
	size_t K = R->T->J->K, B = R->m->block, k0, jj;
	double blk[NT];

	for (k0 = 0; k0 < K; k0 += B) {
		zeros(blk, R->T->nj);
		chain(R, k0, K - k0 < B ? K : k0 + B, blk);
		for (jj = 0; jj < R->T->nj; jj++)
			s[jj] = k0 || R->T->J->C || !R->T->J->keep_first
					? add_f(R, &R->m->promo, s[jj], blk[jj], R->P + K + k0 / B, jj)
					: blk[jj];
	}
}

static void kahan(run *R, double *s)
{
	double c[NT], tv[NT];
	size_t K = R->T->J->K, k, jj;

	zeros(c, R->T->nj);
	for (k = 0; k < K; k++) {
		uint64_t st = R->P + 4 * k;
		term_values(R, k, tv);
		for (jj = 0; jj < R->T->nj; jj++) {
			double y, u, w;
			if (R->exact)
				y = fma_(R, a_of(R, k), b_of(R, k, jj), fpl__neg_num(c[jj]), st, jj);
			else
				y = add(R, tv[jj], fpl__neg_num(c[jj]), st, jj);
			u = add(R, s[jj], y, st + 1, jj);
			w = add(R, u, fpl__neg_num(s[jj]), st + 2, jj);
			c[jj] = add(R, w, fpl__neg_num(y), st + 3, jj);
			s[jj] = u;
		}
	}
}

/* |s| >= |t_k|, exactly, as the unit reads them (acc's DAZ); 0 on NaN. */
static int not_smaller(run *R, double s, size_t k, size_t jj, const double *tv)
{
	const fpl_format *f = R->acc;
	double a, b, z;
	unsigned fl = 0;

	s = fpl__daz(f, s);
	if (!R->exact)
		return fabs(s) >= fabs(fpl__daz(f, tv[jj]));
	a = fpl__daz(f, a_of(R, k));
	b = fpl__daz(f, b_of(R, k, jj));
	if (isnan(s) || isnan(a) || isnan(b))
		return 0;
	if (isinf(a) || isinf(b))
		return a != 0 && b != 0 && isinf(s);
	if (a == 0 || b == 0 || isinf(s))
		return 1;
	if (s == 0)
		return 0;
	/* sign of |a||b| - |s|: round-to-odd never turns a nonzero into 0 */
	z = fpl__fma_ix(&R->T->J->f64, fabs(a), fabs(b), -fabs(s), FPL_RND_OD,
			&R->T->J->plain, 0, &fl);
	return z <= 0;
}

static void neumaier(run *R, double *s)
{
	double c[NT], tv[NT];
	size_t K = R->T->J->K, k, jj;

	zeros(c, R->T->nj);
	for (k = 0; k < K; k++) {
		uint64_t st = R->P + 4 * k;
		term_values(R, k, tv);
		for (jj = 0; jj < R->T->nj; jj++) {
			int ge = not_smaller(R, s[jj], k, jj, tv);
			double u = add_term(R, k, jj, s[jj], tv, st), w, v;
			if (ge) {
				w = add(R, s[jj], fpl__neg_num(u), st + 1, jj);
				v = add_term(R, k, jj, w, tv, st + 2);
			} else {
				if (R->exact)
					w = fma_(R, a_of(R, k), b_of(R, k, jj), fpl__neg_num(u),
						 st + 1, jj);
				else
					w = add(R, tv[jj], fpl__neg_num(u), st + 1, jj);
				v = add(R, w, s[jj], st + 2, jj);
			}
			c[jj] = add(R, c[jj], v, st + 3, jj);
			s[jj] = u;
		}
	}
	for (jj = 0; jj < R->T->nj; jj++)
		s[jj] = add(R, s[jj], c[jj], R->P + 4 * K, jj);
}

/* The chain over pairs [i0, i1) of the K terms, onto s. */
static void pair_chain(run *R, size_t i0, size_t i1, double *s)
{
	size_t K = R->T->J->K, i, jj;
	double tv[NT];

	for (i = i0; i < i1; i++) {
		uint64_t st = R->P + 2 * i;
		if (2 * i + 1 < K) {
			term_values(R, 2 * i + 1, tv);
			for (jj = 0; jj < R->T->nj; jj++)
				s[jj] = add_term(R, 2 * i + 1, jj, s[jj], tv, st);
		} else {	/* the zero pad of an odd K */
			for (jj = 0; jj < R->T->nj; jj++)
				s[jj] = R->exact ? fma_(R, 0.0, 0.0, s[jj], st, jj)
						 : add(R, s[jj], 0.0, st, jj);
		}
		term_values(R, 2 * i, tv);
		for (jj = 0; jj < R->T->nj; jj++)
			s[jj] = add_term(R, 2 * i, jj, s[jj], tv, st + 1);
	}
}

/* pairs: one chain from S; pairs:B: chains over blocks of B terms from
 * +0, added in promo: C + block 0 (beta = 1) or block 0 itself, then
 * + block j. */
static void pairs(run *R, double *s)
{
	size_t K = R->T->J->K, np = (K + 1) / 2, B = fpl__pair_block(R->m, K), i0, jj;
	double blk[NT];

	if (!B) {
		pair_chain(R, 0, np, s);
		return;
	}
	for (i0 = 0; i0 < np; i0 += B / 2) {
		zeros(blk, R->T->nj);
		pair_chain(R, i0, np - i0 < B / 2 ? np : i0 + B / 2, blk);
		for (jj = 0; jj < R->T->nj; jj++)
			s[jj] = i0 || R->T->J->C ? add_f(R, &R->m->promo, s[jj], blk[jj],
							R->P + 2 * np + 2 * i0 / B, jj)
						 : blk[jj];
	}
}

static void evenodd(run *R, double *s)
{
	size_t K = R->T->J->K, B = R->m->block, k0, k, jj;
	double ch[2][NT], tv[NT];

	for (k0 = 0; k0 < K; k0 += B) {
		size_t k1 = K - k0 < B ? K : k0 + B;
		uint64_t st = R->P + K + 2 * (k0 / B);
		zeros(ch[0], R->T->nj);
		zeros(ch[1], R->T->nj);
		for (k = k0; k < k1; k++) {
			double *c = ch[(k - k0) & 1];
			term_values(R, k, tv);
			for (jj = 0; jj < R->T->nj; jj++)
				c[jj] = add_term(R, k, jj, c[jj], tv, R->P + k);
		}
		for (jj = 0; jj < R->T->nj; jj++) {
			double u = add(R, ch[0][jj], ch[1][jj], st, jj);
			s[jj] = add(R, s[jj], u, st + 1, jj);
		}
	}
}

/* The fused groups of [kb, ke) into s (F divides kb). */
static void fused_chain(run *R, size_t kb, size_t ke, double *s)
{
	size_t F = R->m->block, k0, k, jj;
	double *ops = R->T->scratch;

	for (k0 = kb; k0 < ke; k0 += F) {
		size_t k1 = ke - k0 < F ? ke : k0 + F;
		for (jj = 0; jj < R->T->nj; jj++) {
			unsigned fl = 0;
			ops[0] = s[jj];
			for (k = k0; k < k1; k++) {
				ops[1 + 2 * (k - k0)] = R->exact ? a_of(R, k) : term_value(R, k, jj);
				ops[2 + 2 * (k - k0)] = R->exact ? b_of(R, k, jj) : 1.0;
			}
			s[jj] = fpl__acc_fused_group(R->m, ops, k1 - k0, R->st,
						     fpl__acc_idx(R->T, R->P + k0 / F, jj), &fl);
			fpl__acc_note(R->T, jj, fl);
		}
	}
}

/* fused, and fused/P: each block of P a fused chain from +0 in acc,
 * added into promo in promo_rnd as blocked() adds its blocks. */
static void fused(run *R, double *s)
{
	size_t K = R->T->J->K, P = R->m->fused_promote, Q, k0, jj;
	double blk[NT];

	if (!P) {
		fused_chain(R, 0, K, s);
		return;
	}
	Q = (K + R->m->block - 1) / R->m->block;
	for (k0 = 0; k0 < K; k0 += P) {
		zeros(blk, R->T->nj);
		fused_chain(R, k0, K - k0 < P ? K : k0 + P, blk);
		for (jj = 0; jj < R->T->nj; jj++)
			s[jj] = k0 || R->T->J->C || !R->T->J->keep_first
					? add_fr(R, &R->m->promo, R->m->promo_rnd, s[jj], blk[jj],
						 R->P + Q + k0 / P, jj)
					: blk[jj];
	}
}

/*
 * block (accum.h): per K-block j, P_j = the exact sum of the element
 * products rounded once into promo (a fused group from +0 under a model
 * whose accumulator is promo), then S + (P_j X_A) X_B as a fused group of
 * one product (one rounding into acc, the product exact: P_j X_A is
 * exact in binary64 by fpl_accum_check's condition, and the group sums
 * any binary64 product exactly), then S (s_A s_B) with a tensor scale.
 *
 * Element values: a loaded value is y = e X s exactly (block.h), D = X s
 * is exact in binary64 (at most 4 + 24 bits for every scale format with
 * a tensor scale; X alone otherwise), so y / D is e exactly: the
 * quotient is representable, and division is correctly rounded.  A NaN
 * block has X = NaN, so its e and P_j are NaN and the output is NaN.
 */
/*
 * May a block's inner sum run in binary64 (block_order)?  Every element
 * product is exact in binary64 ((pa + pb) <= 53 bits) and a multiple of
 * 2^(qa + qb) (q the element formats' smallest quantum), each below
 * 2^(ha + hb) (h one above the largest binade), so every partial sum of
 * B of them is a multiple of 2^(qa + qb) below 2^(ha + hb + ceil(log2 B)):
 * exact in binary64 when that span is at most 53 bits (e4m3, e2m1, e2m3,
 * e3m2 and int8 elements: at most 41; not e5m2).  The sum is then the
 * exact sum, rounded once by fpl__round_ix as the fused group rounds it.
 * Left to the group: a DAZ inner format (its operands are flushed), mode
 * tn (its zero-sum rule gives -0 where binary64 gives +0; in the other
 * modes a zero sum is +0 both ways, since the group counts S = +0 among
 * its terms) and NaN blocks (checked per block).  FPLAB_ACCUM=ref keeps
 * the group (tests/tblockgemm.c compares the two).
 */
static int block_fast_inner(const fpl_accum_model *m)
{
	const fpl_format *ea = &m->a_blk.elem, *eb = &m->b_blk.elem;
	int lg = 0;
	size_t n;

	for (n = fpl__acc_kblock(m); n > 1; n = (n + 1) / 2)
		lg++;	/* ceil(log2 B) */
	return !m->promo.daz && m->promo_rnd != FPL_RND_TN && (ea->m + 1) + (eb->m + 1) <= 53
	       && (ea->emax + 1) + (eb->emax + 1) + lg - (ea->emin - ea->m) - (eb->emin - eb->m)
			  <= 53;
}

static void block_order(run *R, double *s)
{
	const fpl__acc_job *J = R->T->J;
	const fpl_accum_model *m = R->m;
	const size_t K = J->K, B = fpl__acc_kblock(m), nb = (K + B - 1) / B;
	fpl_accum_model inner = *m, outer = *m;
	double *ops = R->T->scratch;
	const int fast = block_fast_inner(m) && fpl__acc_fast_allowed();
	size_t j, k, jj;

	inner.acc = m->promo;
	inner.acc_rnd = m->promo_rnd;
	inner.fused_w = outer.fused_w = 0;
	inner.fused_ref = outer.fused_ref = FPL_FUSED_LEAD;
	for (j = 0; j < nb; j++) {
		const size_t k0 = j * B, k1 = K - k0 < B ? K : k0 + B;
		const double xa = J->As[R->T->i * nb + j], da = xa * J->ats;
		for (jj = 0; jj < R->T->nj; jj++) {
			const size_t col = R->T->j0 + jj;
			const double xb = J->Bs[j * J->N + col], db = xb * J->bts;
			unsigned fl = 0;
			double p;

			if (fast && !isnan(da) && !isnan(db)) {
				double sum = 0.0;
				for (k = k0; k < k1; k++)
					sum += (a_of(R, k) / da) * (b_of(R, k, jj) / db);
				p = fpl__round_ix(&m->promo, sum, m->promo_rnd, R->st,
						  fpl__acc_idx(R->T, j, jj), &fl);
			} else {
				ops[0] = 0.0;
				for (k = k0; k < k1; k++) {
					ops[1 + 2 * (k - k0)] = a_of(R, k) / da;
					ops[2 + 2 * (k - k0)] = b_of(R, k, jj) / db;
				}
				p = fpl__acc_fused_group(&inner, ops, k1 - k0, R->st,
							 fpl__acc_idx(R->T, j, jj), &fl);
			}
			fpl__acc_note(R->T, jj, fl);
			fl = 0;
			if (fast && !isnan(p) && !isnan(s[jj])) {
				/* one term: the group is fma(P X_A, X_B, S), the same
				 * exact sum rounded once, DAZ on the same three
				 * operands, IEEE's zero-sum rule, inf - inf invalid;
				 * only the choice among NaN operands differs */
				s[jj] = fpl__fma_ix(&m->acc, p * xa, xb, s[jj], m->acc_rnd, R->st,
						    fpl__acc_idx(R->T, nb + j, jj), &fl);
			} else {
				ops[0] = s[jj];
				ops[1] = p * xa;
				ops[2] = xb;
				s[jj] = fpl__acc_fused_group(&outer, ops, 1, R->st,
							     fpl__acc_idx(R->T, nb + j, jj), &fl);
			}
			fpl__acc_note(R->T, jj, fl);
		}
	}
	if (!m->a_blk.tensor_scale && !m->b_blk.tensor_scale)
		return;
	for (jj = 0; jj < R->T->nj; jj++) {
		unsigned fl = 0;
		s[jj] = fpl__mul_ix(&m->acc, s[jj], J->ats * J->bts, m->acc_rnd, R->st,
				    fpl__acc_idx(R->T, 2 * nb, jj), &fl);
		fpl__acc_note(R->T, jj, fl);
	}
}

void fpl__acc_tile_out(fpl__acc_tile *T, double *res)
{
	const fpl__acc_job *J = T->J;
	const fpl_accum_model *m = J->m;
	uint64_t s;
	size_t jj;

	if (!m->out_set)
		return;
	s = fpl_accum_steps(m, J->K, J->sum) - 1;
	for (jj = 0; jj < T->nj; jj++) {
		unsigned fl = 0;
		res[jj] = fpl__round_ix(&m->out, res[jj], m->out_rnd, J->st, fpl__acc_idx(T, s, jj),
					&fl);
		fpl__acc_note(T, jj, fl);
	}
}

void fpl__acc_tile_run(fpl__acc_tile *T, double *res)
{
	const fpl__acc_job *J = T->J;
	const fpl_accum_model *m = J->m;
	run R = { T, m, J->st, &m->acc, m->acc_rnd, 0, !J->sum && m->prod_exact };
	size_t jj;

	if (J->path != FPL__ACC_REF && fpl__acc_fast_tile(T, res))
		return;
	R.P = (!J->sum && !m->prod_exact) ? J->K : 0;
	for (jj = 0; jj < T->nj; jj++)
		res[jj] = J->C ? J->C[T->i * J->N + T->j0 + jj] : 0.0;
	switch (m->order) {
	case FPL_ORDER_PAIRWISE: pairwise(&R, res); break;
	case FPL_ORDER_BLOCKED: blocked(&R, res); break;
	case FPL_ORDER_KAHAN: kahan(&R, res); break;
	case FPL_ORDER_NEUMAIER: neumaier(&R, res); break;
	case FPL_ORDER_FUSED: fused(&R, res); break;
	case FPL_ORDER_PAIRS: pairs(&R, res); break;
	case FPL_ORDER_EVENODD: evenodd(&R, res); break;
	case FPL_ORDER_BLOCK: block_order(&R, res); break;
	default: chain(&R, 0, J->K, res); break;
	}
	fpl__acc_tile_out(T, res);
}

/* SPDX-License-Identifier: MIT */
/*
 * accum/chain_blocked.c - chains in mode tz by truncation: the steps of
 * a chain from +0 with exact products into an accumulator in mode tz
 * (fplab's fp8-e4m3 training policy: e4m3fn or e5m2 inputs, e8m13 in tz,
 * blocked:128:fp32), each step one binary64 sum whose bits are masked to
 * the accumulator's precision.  chain_fast.c chooses this for a job whose
 * path is EXACT64 or ODD64 and that meets the condition below (plan(),
 * J->tz_trunc) and hands it every chain range (chain_range); the block
 * additions in promo and the output rounding stay chain_fast.c's.
 *
 * The condition (fpl__acc_tz_ok):
 *  (M) exact products (not a sum), acc_rnd tz; order blocked (each chain
 *      starts from +0; C enters only the promo additions) or sequential
 *      without C (one chain from +0); acc with exponent limits, no DAZ,
 *      specials ieee, fn or none (signed zeros as binary64's); a and b
 *      with exponent limits; no flips.
 *  (Q) q = (a.emin - a.m) + (b.emin - b.m) >= acc.emin.
 *  (D) every loaded value of A and B is finite, and with max|A| < 2^ea,
 *      max|B| < 2^eb, L <= 2^el (L the chain length: the block, or K),
 *      X = ea + eb + el: X - q <= 53 and 2^X <= acc.max.
 *
 * Claim: then every step s' = fpl__fma_ix(acc, a, b, s) in mode tz of
 * every chain is bits(fl64(s + a*b)) & keep, where keep clears the 52 -
 * acc.m low bits, and it raises inexact alone, exactly when the mask
 * changes the bits.
 *
 * Proof.  (1) Every value of a format f is an integer multiple of
 * 2^(f.emin - f.m) (a normal one of binade E >= emin is a multiple of
 * 2^(E - f.m), a subnormal one of 2^(emin - f.m)); so a*b is an integer
 * multiple of 2^q, and |a*b| <= max|A| max|B|.
 * (2) Invariant: each running sum s of a chain is an integer multiple of
 * 2^q with |s| <= n max|A| max|B| after n steps.  It holds for +0.  At
 * a step, x = s + a*b (exact) is a multiple of 2^q with |x| <= (n+1)
 * max|A| max|B| < 2^X (n + 1 <= L).  If x != 0 then |x| >= 2^q >=
 * 2^acc.emin (Q), so x lies in a normal binade E of acc, and |x| < 2^X
 * <= acc.max (D): the tz rounding of x is x with its bits below 2^(E -
 * acc.m) cleared, of magnitude <= |x| and a value of acc (in an fn or
 * none format, every number of the grid up to max is one); when 2^(E -
 * acc.m) >= 2^q it is a multiple of 2^(E - acc.m), hence of 2^q,
 * otherwise x is on the grid already and is returned as it is.
 * (3) Binary64: x / 2^q is an integer of magnitude below 2^(X - q) <=
 * 2^53 and 2^q >= 2^acc.emin >= 2^-1022, so x is a binary64 number, and
 * so is a*b (the same argument for one term): a*b, s + a*b and fma(a, b,
 * s) computed in binary64 (any mode, contracted or not) are x exactly.
 * (4) Truncation: x != 0 is normal in binary64 (|x| >= 2^-1022) with its
 * binade E in the exponent field; keeping the acc.m leading fraction
 * bits of its encoding and clearing the others is the tz rounding of
 * (2).  The engine's result then raises inexact iff it differs from x
 * (not tiny: >= 2^acc.emin; no overflow: <= acc.max; finite operands:
 * no invalid): iff the mask changed the bits.
 * (5) Zeros: x == 0 exactly.  The engine returns a zero by the sum rule
 * (equal signs keep theirs, different ones give +0 in every mode but
 * tn: +0 in tz), no flags; binary64's round-to-nearest addition or fma
 * of an exact zero sum gives the same zero, and the mask keeps it.
 * (6) Skipping a zero a (skip0): with every b finite, a*b = +-0 and x =
 * s: for s != 0 the step returns s exactly (a value, no flags), for s =
 * +0 it returns +0 (5).  A lane becomes -0 only from an exact zero sum
 * of two -0 (by (2) a nonzero x never rounds to zero, by (5) different
 * signs give +0), so when no lane holds -0 as a range starts none does
 * during it, and its zero-a steps change nothing: the kernels test that
 * as they start.
 * Mode tz takes no draws, so the step numbers play no part here.
 *
 * The block additions (fpl__acc_tz_promo, when J->tz_trunc is 2: a
 * blocked job whose promo has no DAZ, exponent limits and signed zeros
 * as above): r' = fpl__add_ix(promo, r, blk) in tz.  t = r + blk in
 * binary64 with Knuth's TwoSum error e (exact identity for finite r and
 * blk, which are far below binary64's overflow; -ffp-contract=off keeps
 * the additions apart).  When e == 0, t is the exact sum: if t == 0 the
 * engine's zero is binary64's (5); if 2^promo.emin <= |t| <= promo.max,
 * the engine's result is t truncated to promo's precision, bits(t) &
 * keep (4), inexact alone and iff the mask changes t.  Every other lane
 * (e != 0, tiny, above max, inf or NaN: C may hold them) runs
 * fpl__add_ix itself with its draw index, as chain_fast.c's promo_add
 * does.
 */
#include <math.h>
#include <string.h>

#include <fplab/kernels.h>

#include "accum/chain_blocked.h"

#define NT FPL__ACC_TILE
#define INEX_INDEX __builtin_ctz(FPL_FLAG_INEXACT)

uint64_t fpl__acc_tz_runs[3], fpl__acc_tz_promo_runs;

#define TZ_KERNEL_NAME fpl__acc_tz_kernel_c
#define TZ_PROMO_NAME fpl__acc_tz_promo_lanes_c
#define TZ_MAXBITS_NAME fpl__acc_tz_maxbits_c
#define TZ_KERNEL_STORAGE
#include "accum/chain_blocked_body.h"

/* The least e with |x[i]| < 2^e for every i < n (-2000 when all are
 * zero): 0, or -1 when some x[i] is inf or NaN.  The bits of |x|, as
 * integers, order the finite values as the values and put inf and NaN
 * above them all (a branch-free maximum the compiler vectorises, on the
 * job's instruction set). */
static int mag_exp(const fpl__acc_job *J, const double *x, size_t n, int *e)
{
	uint64_t mx;
	double v;

#ifdef FPL_HAVE_X86_KERNELS
	if (J->simd >= 2)
		mx = fpl__acc_tz_maxbits_avx512(x, n);
	else if (J->simd == 1)
		mx = fpl__acc_tz_maxbits_avx2(x, n);
	else
#endif
		mx = fpl__acc_tz_maxbits_c(x, n);
	(void)J;
	if (mx >= 0x7ff0000000000000ull)
		return -1;
	memcpy(&v, &mx, sizeof v);
	if (v == 0)
		*e = -2000;
	else
		frexp(v, e);	/* v = f 2^e, 1/2 <= f < 1 */
	return 0;
}

/* The least e with n <= 2^e. */
static int len_exp(size_t n)
{
	int e = 0;

	while (e < 63 && ((uint64_t)1 << e) < n)
		e++;
	return e;
}

static int model_ok(const fpl__acc_job *J)
{
	const fpl_accum_model *m = J->m;
	const fpl_format *c = &m->acc;

	if (J->sum || !m->prod_exact || m->acc_rnd != FPL_RND_TZ || J->K == 0)
		return 0;
	if (!(m->order == FPL_ORDER_BLOCKED || (m->order == FPL_ORDER_SEQUENTIAL && !J->C)))
		return 0;
	if (!c->explim || c->daz || !m->a.explim || !m->b.explim || c->m > 52
	    || (c->specials != FPL_SPEC_IEEE && c->specials != FPL_SPEC_FN
		&& c->specials != FPL_SPEC_NONE))
		return 0;
	if (J->st->flip != FPL_FLIP_NONE && J->st->flip_prob > 0)
		return 0;
	return (m->a.emin - m->a.m) + (m->b.emin - m->b.m) >= c->emin;	/* (Q) */
}

/* The block additions' condition on promo (the header comment). */
static int promo_ok(const fpl_format *p)
{
	return p->explim && !p->daz && p->m <= 52
	       && (p->specials == FPL_SPEC_IEEE || p->specials == FPL_SPEC_FN
		   || p->specials == FPL_SPEC_NONE);
}

int fpl__acc_tz_ok(const fpl__acc_job *J)
{
	const fpl_accum_model *m = J->m;
	int q, ea, eb, X;
	size_t L;

	if (!model_ok(J))
		return 0;
	q = (m->a.emin - m->a.m) + (m->b.emin - m->b.m);
	if (mag_exp(J, J->A, J->M * J->K, &ea) || mag_exp(J, J->B, J->K * J->N, &eb))
		return 0;
	L = m->order == FPL_ORDER_BLOCKED && m->block < J->K ? m->block : J->K;
	X = ea + eb + len_exp(L);
	if (X < -1100)	/* A or B all zero: every sum is a zero */
		X = -1100;
	if (!(X - q <= 53 && X <= 1023 && ldexp(1.0, X) <= m->acc.max))	/* (D) */
		return 0;
	return m->order == FPL_ORDER_BLOCKED && promo_ok(&m->promo) ? 2 : 1;
}

void fpl__acc_tz_chain(fpl__acc_tile *T, size_t k0, size_t k1, double *s)
{
	const fpl__acc_job *J = T->J;
	const double *arow = J->A + T->i * J->K, *b = J->B + T->j0;
	const uint64_t keep = ~(((uint64_t)1 << (52 - J->m->acc.m)) - 1);
	const size_t nj = T->nj;
	uint64_t inex[NT], *pi = NULL, total = 0;
	int kind = 0;
	size_t jj;

	if (!(J->st->untracked & FPL_FLAG_INEXACT)) {
		memset(inex, 0, sizeof inex);
		pi = inex;
	}
#ifdef FPL_HAVE_X86_KERNELS
	kind = J->simd;
	if (kind >= 2)
		fpl__acc_tz_kernel_avx512(arow, b, J->N, nj, k0, k1, keep, s, pi);
	else if (kind == 1)
		fpl__acc_tz_kernel_avx2(arow, b, J->N, nj, k0, k1, keep, s, pi);
	else
#endif
		fpl__acc_tz_kernel_c(arow, b, J->N, nj, k0, k1, keep, s, pi);
	__atomic_fetch_add(&fpl__acc_tz_runs[kind > 2 ? 2 : kind], 1, __ATOMIC_RELAXED);
	if (!pi)
		return;
	for (jj = 0; jj < nj; jj++) {
		if (inex[jj])
			T->fl[jj] |= FPL_FLAG_INEXACT;
		total += inex[jj];
	}
	T->cnt[INEX_INDEX] += total;
}

void fpl__acc_tz_promo(fpl__acc_tile *T, uint64_t idx0, double *res, const double *blk)
{
	const fpl__acc_job *J = T->J;
	const fpl_format *p = &J->m->promo;
	const uint64_t keep = ~(((uint64_t)1 << (52 - p->m)) - 1);
	const uint64_t minb = fpl__bits(p->min_normal), maxb = fpl__bits(p->max);
	const size_t nj = T->nj;
	uint64_t y[NT], cls[NT], ninex = 0;
	size_t jj;

#ifdef FPL_HAVE_X86_KERNELS
	if (J->simd >= 2)
		fpl__acc_tz_promo_lanes_avx512(res, blk, nj, keep, minb, maxb, y, cls);
	else if (J->simd == 1)
		fpl__acc_tz_promo_lanes_avx2(res, blk, nj, keep, minb, maxb, y, cls);
	else
#endif
		fpl__acc_tz_promo_lanes_c(res, blk, nj, keep, minb, maxb, y, cls);
	for (jj = 0; jj < nj; jj++) {
		if (cls[jj] == 2) {
			unsigned fl = 0;
			res[jj] = fpl__add_ix(p, res[jj], blk[jj], FPL_RND_TZ, J->st, idx0 + jj, &fl);
			fpl__acc_note(T, jj, fl);
			continue;
		}
		memcpy(&res[jj], &y[jj], sizeof y[jj]);
		T->fl[jj] |= (unsigned)cls[jj] * FPL_FLAG_INEXACT;
		ninex += cls[jj];
	}
	T->cnt[INEX_INDEX] += ninex;
	__atomic_fetch_add(&fpl__acc_tz_promo_runs, 1, __ATOMIC_RELAXED);
}

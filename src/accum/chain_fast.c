/* SPDX-License-Identifier: MIT */
/*
 * chain_fast.c - the binary64 step kernels: sequential, blocked and
 * evenodd chains with exact products run across a tile of outputs, one
 * step k at a time, on the kernel set's block rounding
 * (kernels_internal.h), and the choice of a job's path (FPLAB_ACCUM,
 * chain_fma.c).  pairs and pairs:B come here as sequential and blocked
 * jobs over a permuted copy of A and B (gemm.c says why that is the same
 * computation); evenodd runs its two chains on the data as it is, each
 * step k into the even or the odd chain, then its two additions per
 * block as add steps (below), so every step keeps its own number.
 *
 * The invariant: each step of each output gets exactly the reference's
 * value, flags, counts and draw (fpl__acc_idx(T, P + k, jj)); a lane this
 * file cannot do is handed to the reference's own operation,
 * fpl__fma_ix, with the same operands and draw.
 *
 * Why a step is the reference's fma.  The reference computes s' =
 * fpl__fma_ix(acc, a, b, s): the exact a*b + s rounded once into acc.
 *  EXACT64: when exact64_ok() holds, t = s + a*b computed in binary64 is
 *    that exact value for every finite a (a value of A's format), b (of
 *    B's) and s (of acc), so s' = fpl__round_ix(acc, t): the block kernel
 *    gives exactly that for the lanes it does not mark (array.c's
 *    obligations).  Proof of exactness: every value of a format f is an
 *    integer multiple of q_f = 2^(emin_f - m_f) (its smallest quantum), of
 *    magnitude below 2^(emax_f + 1).  (1) a*b: a = A*q_a, b = B*q_b with
 *    integers |A| < 2^(m_a+1), |B| < 2^(m_b+1) after removing trailing
 *    zeros down to the value's own binade (a value's significand has
 *    m_f + 1 bits), so a*b has at most (m_a+1)+(m_b+1) <= 53 significant
 *    bits and lies in [2^(log2 q_a + log2 q_b), 2^(emax_a+emax_b+2)):
 *    binary64 holds it exactly when q_a*q_b >= 2^-1074 and emax_a +
 *    emax_b + 2 <= 1023.  (2) s + a*b: both are integer multiples of
 *    Q = min(q_a*q_b, q_acc) and |s + a*b| < 2^(emax_acc+1) +
 *    2^(emax_a+emax_b+2) <= 2^H, H = max(emax_acc + 1, emax_a + emax_b +
 *    2) + 1, so (s + a*b)/Q is an integer below 2^(H - log2 Q): exactly
 *    representable, and the binary64 sum is exact, when H - log2 Q <= 53
 *    (and 2^Q >= 2^-1074, 2^H <= 2^1023).  The multiplication and the
 *    addition are therefore both exact (no contraction: -ffp-contract=off
 *    changes nothing here, as an fma would be exact too).  Example:
 *    e4m3fn x e4m3fn into fp16: products 8 bits, q_a*q_b = 2^-18, q_acc =
 *    2^-24, H = max(16, 18) + 1 = 19: 19 + 24 = 43 <= 53.
 *    Lanes left to fpl__fma_ix: a non-finite t (some operand inf or NaN:
 *    the fma's NaN priority and invalid rules), t == 0 (the sign of an
 *    exact zero sum, and fnuz), and whatever the kernel marks (tiny
 *    results, overflow, ...).  acc's DAZ would change the operands: a
 *    DAZ accumulator does not take this path.
 *  ODD64: otherwise, when the kernel set can do array fma in acc
 *    (array.c's fast_ok conditions for an operation), t is the set's
 *    exact-to-odd intermediate of a*b + s, which fpl_fma_array rounds the
 *    same way: the set's proof obligations (kernel_body.h, array.c) give
 *    fpl__fma_ix's bits for every unmarked lane (DAZ included, through
 *    the operand window).
 * An add step (evenodd's even + odd and S + u, both in acc): x and y are
 * values of acc, multiples of q_acc below 2^(emax_acc+1), so x + y is a
 * multiple of Q <= q_acc below 2^(emax_acc+2) <= 2^H: exact in binary64
 * under EXACT64's condition, as (2) above; under ODD64 the set's add
 * intermediate is the one fpl_add_array rounds (acc's DAZ included).
 * Under the verified NE64 variant (x86/chain_ne_avx512.c, on AVX2
 * x86/chain_ne64_avx2.c) x + y is
 * binary64's rounded sum with TwoSum's exact error, and a lane whose
 * error is not 0 is left to fpl__add_ix too (t is then exact otherwise).
 * Mode sp on AVX-512 (x86/chain_sp_avx512.c) and AVX2 (x86/
 * chain_sp_avx2.c): sequential and blocked EXACT64 chains run that
 * kernel (one lane per output, draws in registers, its header argues
 * each lane), and so do jobs whose products alone are exact
 * (verify_sp_ok: EXACT64 with J->verify, each step's sum checked by
 * TwoSum there); step() and add_step() never run those.
 * The lean NE64 kernels (chain_ne.c: lean_ok's static condition, a bound
 * per range of steps) keep every lane; chain_ne.c argues them.  Evenodd
 * with a binary32 accumulator runs whole tiles in binary32 on AVX-512 or
 * AVX2 (eo32_ok; x86/chain_ne_avx512.c and chain_ne.c argue them).
 * Sequential and blocked:B:fp32 in mode ne with inputs and accumulator
 * inside binary32 (bf16, fp16, e4m3fn, e5m2 into fp16 or bf16) run whole
 * tiles in binary32 on AVX-512 (ro32_ok; x86/chain_ro32_avx512.c argues
 * them: a round to odd from two fma with embedded rounding, then one
 * rounding into acc, the 2p+2 double-rounding argument with 24 >= m+3),
 * and on AVX2 (x86/chain_ro32_avx2.c: one fma, TwoSum's error, one
 * rounding into acc corrected where the binary32 sum fell on a tie).
 * Lanes left to fpl__add_ix: as for a step (zero or non-finite t, marks).
 * Flags of an unmarked lane: the block kernel (sub = 0) marks every lane
 * whose result is tiny, overflows or is special, so an unmarked lane can
 * raise only inexact, and it is inexact exactly when the rounded y
 * differs from t (t is the exact value, or for ODD64 an odd 53-bit value
 * no format of p <= 51 bits holds).  Those are counted here per output.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/kernels.h>

#include "accum/accum_internal.h"
#include "accum/chain_blocked.h"
#include "accum/x86/chain_ro32_avx2.h"
#include "util/scratch.h"

#define NT FPL__ACC_TILE
#define INEX_INDEX __builtin_ctz(FPL_FLAG_INEXACT)

/* FPLAB_ACCUM: "" or "auto" (0), "ref" (1), "nosimd" (2: fast paths
 * without the AVX2 fma kernel), "avx2" (3: without the AVX-512 kernels);
 * anything else is an error. */
static int accum_env(int *mode)
{
	const char *e = getenv("FPLAB_ACCUM");

	if (!e || !*e || !strcmp(e, "auto"))
		*mode = 0;
	else if (!strcmp(e, "ref"))
		*mode = 1;
	else if (!strcmp(e, "nosimd"))
		*mode = 2;
	else if (!strcmp(e, "avx2"))
		*mode = 3;
	else
		return FPL_ENOTFOUND;
	return 0;
}

/* The block kernels' parameters for rounding into f in mode rnd: the
 * same values array.c's run() computes for an array call (keep the two
 * in step: the kernels' correctness argument assumes exactly these). */
static void kparams_init(fpl_kparams *kp, const fpl_format *f, fpl_rnd rnd, const fpl_state *st)
{
	int R = rnd == FPL_RND_SP ? st->sr_bits : 32, i;

	memset(kp, 0, sizeof *kp);
	kp->rnd = rnd;
	kp->s = (uint64_t)(52 - f->m);
	kp->sr_bits = (uint64_t)R;
	kp->zero_special = f->specials == FPL_SPEC_FNUZ;
	kp->sub_fast = f->subnormal == FPL_SUB_YES;
	kp->tiny_before = f->tininess == FPL_TINY_BEFORE;
	kp->emin_b = (uint64_t)(f->emin + 1023);
	kp->qsub_bits = fpl__bits(ldexp(1.0, f->emin - f->m));
	kp->deep_ok = R + f->m - f->emin <= 1023;
	kp->deep_scale = kp->deep_ok ? ldexp(1.0, R + f->m - f->emin) : 0;
	kp->min_bits = fpl__bits(f->min_normal);
	kp->max_bits = fpl__bits(f->max);
	kp->key = fpl__draw_key(st->seed, st->stream);
	kp->lo_bits = fpl__bits(f->daz && f->min_normal > 0x1p-450 ? f->min_normal : 0x1p-450);
	kp->hi_bits = fpl__bits(0x1p450);
	kp->ovf_sat = (uint64_t)fpl__saturates(f);
	for (i = 0; i < 2; i++)
		kp->ovf_bits[i] = fpl__bits(fpl__saturates(f) ? (i ? -f->max : f->max)
					    : fpl__has_inf(f) ? (i ? -INFINITY : INFINITY)
					    : fpl__nan_signed(f, i));
}

/* log2 of the smallest quantum of f (min_subnormal is 2^(emin - m)). */
static int qlog(const fpl_format *f)
{
	return f->emin - f->m;
}

/* The exactness condition of the header comment. */
static int exact64_ok(const fpl_accum_model *m)
{
	const fpl_format *a = &m->a, *b = &m->b, *c = &m->acc;
	int qp = qlog(a) + qlog(b), Q = qp < qlog(c) ? qp : qlog(c);
	int hp = a->emax + b->emax + 2, H = (c->emax + 1 > hp ? c->emax + 1 : hp) + 1;

	if (!a->explim || !b->explim || !c->explim || c->daz)
		return 0;
	return (a->m + 1) + (b->m + 1) <= 53 && qp >= -1074 && hp <= 1023 && Q >= -1074
	       && H <= 1023 && H - Q <= 53;
}

/* The verified NE64 variant (x86/chain_ne_avx512.c): mode ne, exact
 * binary64 products (condition (1) of the header comment), no sum s + p
 * of a value of acc and a product reaching 2^1023, acc's m <= 50 (the
 * kernel's rounding), and, when acc reads denormals as zero (the
 * reference then flushes the step's operands below 2^emin), no such
 * operand among the loaded A, B and C and no subnormal results (a
 * running sum is the next step's operand).  evenodd runs its two chains
 * k by k on the kernel (stride 2) and its additions as add steps, each
 * checked by TwoSum (add_step). */
static int below_min(const double *x, size_t n, double min)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (x[i] != 0 && fabs(x[i]) < min)
			return 1;
	return 0;
}

/* Both verified variants' condition on the formats: every product a*b
 * exact in binary64 (at most 53 significant bits, its quantum at least
 * 2^-1074) and no sum of a value of acc and a product reaching 2^1023. */
static int products_exact64(const fpl_format *a, const fpl_format *b, const fpl_format *c)
{
	int hp = a->emax + b->emax + 2, top = c->emax + 1 > hp ? c->emax + 1 : hp;

	return (a->m + 1) + (b->m + 1) <= 53 && a->emin - a->m + b->emin - b->m >= -1074
	       && top + 1 <= 1023;
}

static int verify_ok(const fpl__acc_job *J)
{
	const fpl_accum_model *m = J->m;
	const fpl_format *a = &m->a, *b = &m->b, *c = &m->acc;

	if (m->acc_rnd != FPL_RND_NE || c->m > 50 || !a->explim || !b->explim || !c->explim)
		return 0;
	/* with DAZ, a subnormal result would be flushed as the next step's
	 * operand: only formats without subnormal results */
	if (c->daz && c->subnormal == FPL_SUB_YES)
		return 0;
	if (!products_exact64(a, b, c))
		return 0;
	if (c->daz && (below_min(J->A, J->M * J->K, c->min_normal)
		       || below_min(J->B, J->K * J->N, c->min_normal)
		       || (J->C && below_min(J->C, J->M * J->N, c->min_normal))))
		return 0;
	return 1;
}

/* Are the sp kernels there for J: x86/chain_sp_avx512.c (J->simd >= 2)
 * or x86/chain_sp_avx2.c (J->simd == 1), both for acc's m <= 50? */
static int sp_kernels(const fpl__acc_job *J)
{
#ifdef FPL_HAVE_X86_KERNELS
	return J->simd >= 1 && J->m->acc.m <= 50;
#else
	(void)J;
	return 0;
#endif
}

/* The verified sp variant (x86/chain_sp_avx512.c or _avx2.c, J->verify
 * on the EXACT64 path): mode sp, exact binary64 products (condition (1) of the
 * header comment), no sum s + p of a value of acc and a product reaching
 * 2^1023 (TwoSum's error then exact), no DAZ accumulator (its operands
 * would be flushed).  Only for sequential and blocked, whose chains
 * (chain_range) always run that kernel: step() and add_step() never see
 * such a job. */
static int verify_sp_ok(const fpl__acc_job *J)
{
	const fpl_accum_model *m = J->m;
	const fpl_format *a = &m->a, *b = &m->b, *c = &m->acc;

	if (m->acc_rnd != FPL_RND_SP || !sp_kernels(J) || c->daz || !a->explim || !b->explim
	    || !c->explim || m->order == FPL_ORDER_EVENODD)
		return 0;
	return products_exact64(a, b, c);
}

/* array.c's fast_ok for a rounding (round = 1) or an operation into f. */
static int kernel_ok(const fpl_format *f, fpl_rnd rnd, const fpl_state *st, int round)
{
	if (st->flip != FPL_FLIP_NONE && st->flip_prob > 0)
		return 0;
	if (f->specials == FPL_SPEC_E8M0 || f->emax < f->emin || f->m > 51)
		return 0;
	if (round)
		return 1;
	if (f->m > 50 || f->e > 9 || !f->explim)
		return 0;
	return !(rnd == FPL_RND_SP && f->m + 1 + (int)st->sr_bits > 52);
}

uint64_t fpl__acc_path_runs[FPL__ACC_NPATHS];
uint64_t fpl__acc_eo32_runs;

int fpl__acc_fast_allowed(void)
{
	int mode;

	return !accum_env(&mode) && mode != 1;
}

/* J->Bp for the AVX-512 NE64 kernel and the lean kernels: a panel's rows
 * contiguous, so the K x 64 slice that a column of tiles reads stays in
 * cache (with B's own stride of N doubles the rows of a panel fall into
 * few cache sets); columns past N are +0.  For a lean job also J->bmax
 * (chain_ne.c's bound): the largest |b| of each row of each panel, inf
 * when one of them is a NaN, so that every bound built on it fails. */
static int pack_b(fpl__acc_job *J)
{
	const size_t np = (J->N + NT - 1) / NT, K = J->K, N = J->N;
	size_t p, k, jj;

	J->Bp = fpl__scratch_alloc(np * K * NT * sizeof *J->Bp);
	if (!J->Bp)
		return FPL_ENOMEM;
	if (J->lean) {
		J->bmax = fpl__scratch_alloc(np * K * sizeof *J->bmax);
		if (!J->bmax)
			return FPL_ENOMEM;
	}
	if (J->lean == 2) {
		J->bmin = fpl__scratch_alloc(np * K * sizeof *J->bmin);
		if (!J->bmin)
			return FPL_ENOMEM;
	}
	for (p = 0; p < np; p++) {
		const size_t w = N - p * NT < NT ? N - p * NT : NT;
		for (k = 0; k < K; k++) {
			const double *b = J->B + k * N + p * NT;
			double *d = J->Bp + (p * K + k) * NT, mx = 0, mn = INFINITY;
			memcpy(d, b, w * sizeof *d);
			for (jj = w; jj < NT; jj++)
				d[jj] = 0.0;
			if (!J->lean)
				continue;
			for (jj = 0; jj < w; jj++) {
				double v = fabs(b[jj]);
				mx = v > mx ? v : mx;
				mn = v != 0 && v < mn ? v : mn;
				if (v != v)
					break;
			}
			J->bmax[p * K + k] = jj < w ? INFINITY : mx;
			if (J->lean == 2)
				J->bmin[p * K + k] = mn;
		}
	}
	return 0;
}

/* The binary32 evenodd kernels' condition (x86/chain_ne_avx512.c and
 * chain_ne.c argue them): order evenodd in mode ne, acc's finite values
 * those of IEEE binary32, A's and B's values binary32 values, fewer than
 * 2^30 steps per output (their 32-bit counts), and verify_ok's data
 * conditions: on AVX-512 (1) the verified NE64 path, on AVX2 (2) also
 * every product exact in binary32 (m_a + m_b + 2 <= 24); else 0. */
static int fits32(const fpl_format *f)
{
	return f->explim && f->m <= 23 && f->emin - f->m >= -149 && f->max <= 0x1.fffffep127;
}

static int eo32_ok(const fpl__acc_job *J)
{
	const fpl_accum_model *m = J->m;
	const fpl_format *c = &m->acc;

	if (m->order != FPL_ORDER_EVENODD || m->acc_rnd != FPL_RND_NE || J->path == FPL__ACC_REF
	    || c->m != 23 || c->emin != -126 || c->max != 0x1.fffffep127 || !fits32(&m->a)
	    || !fits32(&m->b) || J->K >= (1u << 30))
		return 0;
	if (J->simd >= 2)
		return J->path == FPL__ACC_NE64 && J->verify;
	return J->simd == 1 && m->a.m + m->b.m + 2 <= 24 && verify_ok(J) ? 2 : 0;
}

/* J->Bf for the binary32 evenodd kernels: B packed as Bp, in binary32
 * (exact: B's values are binary32 values, eo32_ok). */
static int pack_bf(fpl__acc_job *J)
{
	const size_t np = (J->N + NT - 1) / NT, K = J->K, N = J->N;
	size_t p, k, jj;

	J->Bf = fpl__scratch_alloc(np * K * NT * sizeof *J->Bf);
	if (!J->Bf)
		return FPL_ENOMEM;
	for (p = 0; p < np; p++)
		for (k = 0; k < K; k++)
			for (jj = 0; jj < NT; jj++)
				J->Bf[(p * K + k) * NT + jj] =
					p * NT + jj < N ? (float)J->B[k * N + p * NT + jj] : 0.0f;
	return 0;
}

/* The lean kernels' static condition (chain_ne.c argues it): NE64
 * without verify (so every step's s + a*b is exact in binary64, mode
 * ne), acc with subnormals, no DAZ and a signed zero (not fnuz), and
 * every product a multiple of acc's smallest quantum (q_a * q_b >=
 * q_acc), so that a sum below 2^emin is a value of acc. */
static int lean_ok(const fpl__acc_job *J)
{
	const fpl_format *a = &J->m->a, *b = &J->m->b, *c = &J->m->acc;

	return J->path == FPL__ACC_NE64 && !J->verify && J->simd >= 1
	       && c->subnormal == FPL_SUB_YES && !c->daz && c->specials != FPL_SPEC_FNUZ
	       && c->specials != FPL_SPEC_E8M0 && qlog(a) + qlog(b) >= qlog(c) && c->m <= 50;
}

/* The AVX2 lean kernel with exactness checked per range (J->lean == 2,
 * chain_ne.c's lean2 argues it): AVX2 without the AVX-512 kernels
 * (there the binary32 tiles run these jobs), sequential in mode ne, a
 * job the static condition EXACT64 does not cover, every product exact
 * in binary64 with a sum below 2^1023 (products_exact64), products and
 * values of acc multiples of 2^-1022 or more (no binary64 subnormal
 * sums), and acc as for lean_ok (subnormals, no DAZ, a signed zero, m
 * <= 50) whose values span at most 53 bits: 2^(emax+1) <= 2^53 q_acc. */
static int lean2_ok(const fpl__acc_job *J)
{
	const fpl_accum_model *m = J->m;
	const fpl_format *a = &m->a, *b = &m->b, *c = &m->acc;

	return J->simd == 1 && m->order == FPL_ORDER_SEQUENTIAL && m->acc_rnd == FPL_RND_NE
	       && !exact64_ok(m) && a->explim && b->explim && c->explim
	       && products_exact64(a, b, c) && qlog(a) + qlog(b) >= -1022 && qlog(c) >= -1022
	       && c->subnormal == FPL_SUB_YES && !c->daz && c->specials != FPL_SPEC_FNUZ
	       && c->specials != FPL_SPEC_E8M0 && c->m <= 50 && c->emax + 1 - qlog(c) <= 53;
}

/* The binary32 tiles' condition (x86/chain_ro32_avx512.c argues them):
 * AVX-512 (on AVX2 alone x86/chain_ro32_avx2.c, with its conditions (P)
 * and (M) too), sequential or blocked in mode ne on a fast path, A's and B's
 * values binary32 values (fits32), acc's too with m <= 21 (two spare
 * bits for the round to odd), its quanta at least 2^-147, max >= 2^emax,
 * some binade between 2^emin and 2^top (top = min(emax, 104 + m)), emin
 * >= -126 (acc's normal binades binary32-normal), no DAZ; blocked adds
 * in IEEE binary32 without DAZ; fewer than 2^30 steps per output
 * (32-bit counts).  Sequential jobs that the lean kernels
 * take (chain_ne.c: e4m3fn into fp16) stay there: they run faster.  2
 * (lean tiles, x86/chain_ro32_avx512.c's (5)) when acc has subnormals
 * and a signed zero and every product is a multiple of acc's smallest
 * quantum (q_a * q_b >= q_acc), else 1. */
static int ro32_ok(const fpl__acc_job *J)
{
	const fpl_accum_model *m = J->m;
	const fpl_format *c = &m->acc, *p = &m->promo;
	const int top = c->emax < 104 + c->m ? c->emax : 104 + c->m;

#ifndef FPL_HAVE_X86_KERNELS
	return 0;	/* the kernels are native x86 files */
#endif
	if (J->simd < 1 || J->path == FPL__ACC_REF || m->acc_rnd != FPL_RND_NE || J->sum
	    || J->K >= (1u << 30)
	    || (m->order != FPL_ORDER_SEQUENTIAL && m->order != FPL_ORDER_BLOCKED))
		return 0;
	/* emin >= -126: both kernels take C and the kept binades from s's
	 * binary32 exponent field, wrong for binary32 subnormals */
	if (!fits32(&m->a) || !fits32(&m->b) || !fits32(c) || c->m > 21 || c->daz
	    || c->emin < -126 || c->emin - c->m < -147 || c->max < ldexp(1.0, c->emax)
	    || top <= c->emin + 1)
		return 0;
	/* on AVX2 the jobs of chain_ne.c's lean2 stay there: faster */
	if (J->simd == 1 && (m->a.m + m->b.m + 2 > 24 || J->lean == 2
			     || c->max + ldexp(1.0, top) > 0x1.fffffep127))
		return 0;
	/* sequential chains that the lean kernels may run are faster there */
	if (m->order == FPL_ORDER_SEQUENTIAL ? lean_ok(J)
	    : !(p->m == 23 && p->emin == -126 && p->max == 0x1.fffffep127 && !p->daz
		&& p->explim))
		return 0;
	/* 2: lean tiles (every sum a multiple of acc's smallest quantum) */
	return c->subnormal == FPL_SUB_YES && c->specials != FPL_SPEC_FNUZ
			       && qlog(&m->a) + qlog(&m->b) >= qlog(c) ? 2 : 1;
}

#ifdef FPL_HAVE_X86_KERNELS
/* May the AVX-512 kernels run: the CPU has them and the kernel set in
 * use is avx512 (FPLAB_KERNELS=avx2 or ref caps them, as it caps the
 * native kernels)? */
static int avx512_ok(void)
{
	return fpl_cpu()->avx512f && !strcmp(fpl_kernels_selected(), "avx512");
}
#endif

/* Does a job's chain_range run x86/chain_sp_avx512.c or _avx2.c: EXACT64
 * in mode sp with sp_kernels? */
static int sp_simd(const fpl__acc_job *J)
{
	return J->path == FPL__ACC_EXACT64 && J->m->acc_rnd == FPL_RND_SP && sp_kernels(J);
}

/* The least J->simd that runs verified NE64 jobs: the AVX-512 kernel
 * and, where the x86 kernels are built, x86/chain_ne64_avx2.c (its
 * chains: ne64_chain below). */
#ifdef FPL_HAVE_X86_KERNELS
#define VERIFY_SIMD 1
#else
#define VERIFY_SIMD 2
#endif

static int plan(fpl__acc_job *J)
{
	const fpl_accum_model *m = J->m;
	int mode, r, ks;

	J->path = FPL__ACC_REF;
	if ((r = accum_env(&mode)))
		return r;
	if (mode != 1 && fpl__acc_fused64_ok(J)) {
		J->simd = (mode == 0 || mode == 3) && fpl_cpu()->avx2 && fpl_cpu()->fma;
#ifdef FPL_HAVE_X86_KERNELS
		if (J->simd && mode == 0 && avx512_ok())
			J->simd = 2;
#endif
		J->k = fpl__kernels_get(&ks);
		if (J->k && !ks && kernel_ok(&m->acc, m->acc_rnd, J->st, 1)) {
			J->path = FPL__ACC_FUSED64;
			kparams_init(&J->kp, &m->acc, m->acc_rnd, J->st);
		}
		return 0;
	}
	if (mode == 1 || J->sum || !m->prod_exact || J->K == 0
	    || (m->order != FPL_ORDER_SEQUENTIAL && m->order != FPL_ORDER_BLOCKED
		&& m->order != FPL_ORDER_EVENODD))
		return 0;
	J->simd = (mode == 0 || mode == 3) && fpl_cpu()->avx2 && fpl_cpu()->fma;
#ifdef FPL_HAVE_X86_KERNELS
	if (J->simd && mode == 0 && avx512_ok() && m->acc.m <= 50)
		J->simd = 2;
#endif
	if (m->order == FPL_ORDER_SEQUENTIAL
	    && !(lean2_ok(J) && kernel_ok(&m->acc, m->acc_rnd, J->st, 1))) {
		r = fpl__acc_fma32_prepare(J);
		if (r < 0)
			return r;
		if (r) {
			J->path = FPL__ACC_FMA32;
			return 0;
		}
	}
	J->k = fpl__kernels_get(&ks);
	if (!J->k || ks)
		return 0;
	if (exact64_ok(m) && kernel_ok(&m->acc, m->acc_rnd, J->st, 1))
		/* evenodd steps one k at a time into two chains: not NE64's
		 * ranges, and EXACT64 gives the same bits */
		J->path = m->acc_rnd == FPL_RND_NE && m->order != FPL_ORDER_EVENODD
				  && m->acc.m <= 50 ? FPL__ACC_NE64 : FPL__ACC_EXACT64;
	else if (kernel_ok(&m->acc, m->acc_rnd, J->st, 1) && lean2_ok(J))
		J->path = FPL__ACC_NE64, J->lean = 2;
	else if (J->simd >= VERIFY_SIMD && kernel_ok(&m->acc, m->acc_rnd, J->st, 1)
		 && verify_ok(J))
		J->path = FPL__ACC_NE64, J->verify = 1;
	else if (kernel_ok(&m->acc, m->acc_rnd, J->st, 1) && verify_sp_ok(J))
		J->path = FPL__ACC_EXACT64, J->verify = 1;
	else if (kernel_ok(&m->acc, m->acc_rnd, J->st, 0))
		J->path = FPL__ACC_ODD64;
	if (J->path != FPL__ACC_REF)
		kparams_init(&J->kp, &m->acc, m->acc_rnd, J->st);
	if (J->path != FPL__ACC_REF && m->order == FPL_ORDER_BLOCKED && !m->promo.daz
	    && m->promo.explim && kernel_ok(&m->promo, m->acc_rnd, J->st, 1)) {
		J->promo_fast = 1;
		kparams_init(&J->kpp, &m->promo, m->acc_rnd, J->st);
	}
	J->tz_trunc = (J->path == FPL__ACC_EXACT64 || J->path == FPL__ACC_ODD64) && !J->verify
			      ? fpl__acc_tz_ok(J) : 0;
	/* evenodd in binary32 and the binary32 tiles read Bf, never Bp */
	if ((J->eo32 = eo32_ok(J)) || (J->ro32 = ro32_ok(J)))
		return pack_bf(J);
	if (!J->lean)
		J->lean = lean_ok(J);
	if ((J->path == FPL__ACC_NE64 && (J->simd >= 2 || J->verify)) || J->lean
	    || (sp_simd(J) && m->order != FPL_ORDER_EVENODD))
		return pack_b(J);
	return 0;
}


int fpl__acc_fast_plan(fpl__acc_job *J)
{
	int r = plan(J);

	if (!r)
		__atomic_fetch_add(&fpl__acc_path_runs[J->path], 1, __ATOMIC_RELAXED);
	return r;
}

void fpl__acc_fast_release(fpl__acc_job *J)
{
	fpl__scratch_free(J->Af);
	fpl__scratch_free(J->Bf);
	fpl__scratch_free(J->Bp);
	fpl__scratch_free(J->bmax);
	fpl__scratch_free(J->bmin);
	J->Af = J->Bf = NULL;
	J->Bp = J->bmax = J->bmin = NULL;
}

/* Lane classes for EXACT64: a zero or non-finite t goes to the engine. */
static inline uint64_t zero_or_special(double t)
{
	return (fpl__bits(t) & ~FPL__SIGN_BIT) - 1 >= 0x7fefffffffffffffull;
}

/* A step's lanes: the intermediates, the rounded values, the marks. */
typedef struct lanes {
	double t[NT], y[NT], av[NT];
	uint64_t spc[NT];
} lanes;

/* Round the step's intermediates w->t into w->y by the set's block
 * kernel (lanes marked in w->spc stay marked), noting the inexact of
 * every unmarked lane (the header comment: y != t). */
static void round_step(fpl__acc_tile *T, uint64_t idx0, lanes *w)
{
	const fpl__acc_job *J = T->J;
	uint64_t ninex = 0;
	fpl_kcounts kc;
	size_t jj;

	J->k->round(&J->kp, w->y, w->t, T->nj, w->spc, 1, 0, idx0, &kc);
	for (jj = 0; jj < T->nj; jj++) {
		uint64_t inex = (w->spc[jj] == 0) & (w->y[jj] != w->t[jj]);
		T->fl[jj] |= (unsigned)inex * FPL_FLAG_INEXACT;
		ninex += inex;
	}
	T->cnt[INEX_INDEX] += ninex;
}

/*
 * fpl__fma_ix(acc, a, b, s) without the engine where the product is a
 * zero: 1 with *r set, 0 to leave the lane to the engine.  a and b
 * finite, a == 0 or b == 0 (DAZ flushes no zero, and keeps a flushed
 * operand's sign), s a value of acc:
 *  - s == 0: the engine's (+-0) + (+-0) rule, sign sp = sign(a) ^
 *    sign(b) when sign(s) == sp, else (rnd == tn); fpl__zero makes it +0
 *    in fnuz (e8m0 never reaches the fast paths: kernel_ok), no flags,
 *    no draw (fpl__finish flips nothing: kernel_ok refuses flips);
 *  - s normal and finite, acc without DAZ: fpl__round_ix(acc, s), the
 *    exact value s itself, no flags.
 * Anything else (a subnormal s, whose rounding may note underflow or
 * be flushed by DAZ; an infinite or NaN operand) goes to the engine.
 */
static inline int zero_product(const fpl_accum_model *m, double a, double b, double s,
			       double *r)
{
	int sp;

	if (!isfinite(a) || !isfinite(b) || (a != 0 && b != 0))
		return 0;
	if (s == 0) {
		sp = fpl__signbit(a) ^ fpl__signbit(b);
		sp = sp == fpl__signbit(s) ? sp : m->acc_rnd == FPL_RND_TN;
		*r = m->acc.specials == FPL_SPEC_FNUZ ? 0.0 : sp ? -0.0 : 0.0;
		return 1;
	}
	if (!m->acc.daz && isfinite(s) && fabs(s) >= m->acc.min_normal) {
		*r = s;
		return 1;
	}
	return 0;
}

/* One step k (step number k: exact products take no steps of their own)
 * of every chain of the tile: s[jj] = fma(a_k, b_kj, s[jj]) in acc.  A
 * zero a_k (a zero pixel, a ReLU's zero) skips the kernels: each lane is
 * zero_product's, or the engine's. */
static void step(fpl__acc_tile *T, size_t k, double *s, lanes *w)
{
	const fpl__acc_job *J = T->J;
	const fpl_accum_model *m = J->m;
	const size_t nj = T->nj;
	const double a = J->A[T->i * J->K + k], *b = J->B + k * J->N + T->j0;
	const uint64_t idx0 = fpl__acc_idx(T, k, 0);
	double *t = w->t, *av = w->av;
	uint64_t *spc = w->spc;
	size_t jj;

	if (a == 0) {
		for (jj = 0; jj < nj; jj++) {
			unsigned fl = 0;
			if (zero_product(m, a, b[jj], s[jj], &s[jj]))
				continue;
			s[jj] = fpl__fma_ix(&m->acc, a, b[jj], s[jj], m->acc_rnd, J->st, idx0 + jj,
					    &fl);
			fpl__acc_note(T, jj, fl);
		}
		return;
	}
	if (J->path != FPL__ACC_ODD64) {	/* EXACT64 */
		for (jj = 0; jj < nj; jj++) {
			t[jj] = s[jj] + a * b[jj];
			spc[jj] = zero_or_special(t[jj]);
		}
	} else {
		for (jj = 0; jj < nj; jj++)
			av[jj] = a;
		J->k->odd[FPL_KOP_FMA](&J->kp, t, av, b, s, nj, spc);
	}
	round_step(T, idx0, w);
	for (jj = 0; jj < nj; jj++) {
		if (spc[jj]) {
			unsigned fl = 0;
			if (zero_product(m, a, b[jj], s[jj], &s[jj]))
				continue;
			s[jj] = fpl__fma_ix(&m->acc, a, b[jj], s[jj], m->acc_rnd, J->st, idx0 + jj,
					    &fl);
			fpl__acc_note(T, jj, fl);
		} else {
			s[jj] = w->y[jj];
		}
	}
}

/* Step sn of every output of the tile: s[jj] = x[jj] + y[jj] in acc
 * (fpl__add_ix: NaN priority x; s may be x or y).  x and y are values
 * of acc: for EXACT64 their binary64 sum is exact (the header comment's
 * bound, with a*b replaced by a value of acc), for ODD64 the set's add
 * intermediate is the one fpl_add_array rounds. */
static void add_step(fpl__acc_tile *T, uint64_t sn, const double *x, const double *y,
		     double *s, lanes *w)
{
	const fpl__acc_job *J = T->J;
	const fpl_accum_model *m = J->m;
	const size_t nj = T->nj;
	const uint64_t idx0 = fpl__acc_idx(T, sn, 0);
	size_t jj;

	if (J->verify) {	/* NE64 verified: x + y with TwoSum's error */
		for (jj = 0; jj < nj; jj++) {
			double t = x[jj] + y[jj], bb = t - x[jj];
			double e = (x[jj] - (t - bb)) + (y[jj] - bb);
			w->t[jj] = t;
			w->spc[jj] = (e != 0) | zero_or_special(t);
		}
	} else if (J->path != FPL__ACC_ODD64) {	/* EXACT64 (evenodd takes NE64
						 * only verified) */
		for (jj = 0; jj < nj; jj++) {
			w->t[jj] = x[jj] + y[jj];
			w->spc[jj] = zero_or_special(w->t[jj]);
		}
	} else {
		J->k->odd[FPL_KOP_ADD](&J->kp, w->t, x, y, NULL, nj, w->spc);
	}
	round_step(T, idx0, w);
	for (jj = 0; jj < nj; jj++) {
		if (w->spc[jj]) {
			unsigned fl = 0;
			s[jj] = fpl__add_ix(&m->acc, x[jj], y[jj], m->acc_rnd, J->st, idx0 + jj, &fl);
			fpl__acc_note(T, jj, fl);
		} else {
			s[jj] = w->y[jj];
		}
	}
}

/* x86/chain_sp_avx512.c (or _avx2.c) over [k0, k1), its per-lane
 * inexact counts noted in T. */
#ifdef FPL_HAVE_X86_KERNELS
static void sp_chain(fpl__acc_tile *T, size_t k0, size_t k1, double *s)
{
	uint64_t inex[NT], total = 0;
	size_t jj;

	memset(inex, 0, sizeof inex);
	if (T->J->simd >= 2)
		fpl__acc_sp64_avx512(T, k0, k1, 1, s, inex);
	else
		fpl__acc_sp64_avx2(T, k0, k1, 1, s, inex);
	for (jj = 0; jj < T->nj; jj++) {
		if (inex[jj])
			T->fl[jj] |= FPL_FLAG_INEXACT;
		total += inex[jj];
	}
	T->cnt[INEX_INDEX] += total;
}
#endif

/* The NE64 chains over k = k0, k0+ks, ... below k1 of the tile in s[]:
 * verified jobs on AVX2 (J->simd == 1) on x86/chain_ne64_avx2.c, the
 * others on chain_ne.c (which runs the AVX-512 kernel). */
static void ne64_chain(fpl__acc_tile *T, size_t k0, size_t k1, size_t ks, double *s)
{
#ifdef FPL_HAVE_X86_KERNELS
	if (T->J->verify && T->J->simd == 1) {
		fpl__acc_ne64_avx2(T, k0, k1, ks, s);
		return;
	}
#endif
	fpl__acc_ne64_chain(T, k0, k1, ks, s);
}

/* The chains [k0, k1) of the tile in s[]. */
static void chain_range(fpl__acc_tile *T, size_t k0, size_t k1, double *s, lanes *w)
{
	size_t k;

	if (T->J->path == FPL__ACC_NE64) {
		ne64_chain(T, k0, k1, 1, s);
		return;
	}
	if (T->J->tz_trunc) {
		fpl__acc_tz_chain(T, k0, k1, s);
		return;
	}
#ifdef FPL_HAVE_X86_KERNELS
	if (sp_simd(T->J)) {
		sp_chain(T, k0, k1, s);
		return;
	}
#endif
	for (k = k0; k < k1; k++)
		step(T, k, s, w);
}

/* The block additions R + blk in promo with the set's rounding
 * (J->promo_fast): r = R + blk in binary64 with Knuth's TwoSum error e
 * (exact identity: R and blk are finite values of formats with exponent
 * limits far inside binary64's, so no overflow; -ffp-contract=off keeps
 * the additions apart).  When e == 0, r is the exact sum and fpl__add_ix
 * (promo, R, blk) is the engine's one rounding of it with the same draw:
 * the block kernel's result on the lanes it does not mark (chain_fast.c's
 * header: an unmarked lane raises only inexact, iff y != r).  A lane
 * with e != 0, a zero or non-finite r, or a mark runs fpl__add_ix. */
static void promo_add(fpl__acc_tile *T, uint64_t idx0, double *res, const double *blk,
		      lanes *w)
{
	const fpl__acc_job *J = T->J;
	const fpl_accum_model *m = J->m;
	uint64_t ninex = 0;
	fpl_kcounts kc;
	size_t jj;

	if (J->tz_trunc == 2) {	/* chain_blocked.c, the same bits */
		fpl__acc_tz_promo(T, idx0, res, blk);
		return;
	}
	for (jj = 0; jj < T->nj; jj++) {
		double x = res[jj], y = blk[jj], t = x + y, bb = t - x;
		double e = (x - (t - bb)) + (y - bb);
		w->t[jj] = t;
		w->spc[jj] = (e != 0) | zero_or_special(t);
	}
	J->k->round(&J->kpp, w->y, w->t, T->nj, w->spc, 1, 0, idx0, &kc);
	for (jj = 0; jj < T->nj; jj++) {
		if (w->spc[jj]) {
			unsigned fl = 0;
			res[jj] = fpl__add_ix(&m->promo, res[jj], blk[jj], m->acc_rnd, J->st,
					      idx0 + jj, &fl);
			fpl__acc_note(T, jj, fl);
		} else {
			uint64_t inex = w->y[jj] != w->t[jj];
			T->fl[jj] |= (unsigned)inex * FPL_FLAG_INEXACT;
			ninex += inex;
			res[jj] = w->y[jj];
		}
	}
	T->cnt[INEX_INDEX] += ninex;
}

/* blocked: chains from +0, each block added into promo (R = block 0 for
 * a keep_first job without C). */
static void blocked(fpl__acc_tile *T, double *res, lanes *w)
{
	const fpl__acc_job *J = T->J;
	const fpl_accum_model *m = J->m;
	const size_t K = J->K, B = m->block;
	double blk[NT];
	size_t k0, jj;

	for (k0 = 0; k0 < K; k0 += B) {
		for (jj = 0; jj < T->nj; jj++)
			blk[jj] = 0.0;
		chain_range(T, k0, K - k0 < B ? K : k0 + B, blk, w);
		if (J->promo_fast && !(!k0 && !J->C && J->keep_first)) {
			promo_add(T, fpl__acc_idx(T, K + k0 / B, 0), res, blk, w);
			continue;
		}
		for (jj = 0; jj < T->nj; jj++) {
			unsigned fl = 0;
			if (!k0 && !J->C && J->keep_first) {
				res[jj] = blk[jj];
				continue;
			}
			res[jj] = fpl__add_ix(&m->promo, res[jj], blk[jj], m->acc_rnd, J->st,
					      fpl__acc_idx(T, K + k0 / B, jj), &fl);
			fpl__acc_note(T, jj, fl);
		}
	}
}

/* evenodd: per block [k0, k1), step k of the term k into the even or
 * the odd chain (by k - k0), both from +0, then u = even + odd (step K +
 * 2j) and S = S + u (step K + 2j + 1), all in acc: dot.c's evenodd()
 * step for step.  A shorter last block runs the k it has. */
static void evenodd(fpl__acc_tile *T, double *res, lanes *w)
{
	const fpl__acc_job *J = T->J;
	const size_t K = J->K, B = J->m->block;
	double ch[2][NT];
	size_t k0, k, jj;

#if defined(__x86_64__) || defined(__i386__)
	if (J->eo32) {
		__atomic_fetch_add(&fpl__acc_eo32_runs, 1, __ATOMIC_RELAXED);
#ifdef FPL_HAVE_X86_KERNELS
		if (J->eo32 == 1)
			fpl__acc_eo32_avx512(T, res);
		else
#endif
			fpl__acc_eo32_avx2(T, res);
		return;
	}
#endif
	for (k0 = 0; k0 < K; k0 += B) {
		const size_t k1 = K - k0 < B ? K : k0 + B;
		const uint64_t sn = K + 2 * (k0 / B);
		for (jj = 0; jj < T->nj; jj++)
			ch[0][jj] = ch[1][jj] = 0.0;
		if (J->path == FPL__ACC_NE64) {	/* verified: the kernel, stride 2 */
			ne64_chain(T, k0, k1, 2, ch[0]);
			if (k0 + 1 < k1)
				ne64_chain(T, k0 + 1, k1, 2, ch[1]);
		} else {
			for (k = k0; k < k1; k++)
				step(T, k, ch[(k - k0) & 1], w);
		}
		add_step(T, sn, ch[0], ch[1], ch[0], w);
		add_step(T, sn + 1, res, ch[0], res, w);
	}
}

int fpl__acc_fast_tile(fpl__acc_tile *T, double *res)
{
	const fpl__acc_job *J = T->J;
	const fpl_accum_model *m = J->m;
	size_t jj;
	lanes w;

	if (J->path == FPL__ACC_FMA32)
		return fpl__acc_fma32_tile(T, res);
	if (J->path == FPL__ACC_FUSED64)
		return fpl__acc_fused64_tile(T, res);
	for (jj = 0; jj < T->nj; jj++)
		res[jj] = J->C ? J->C[T->i * J->N + T->j0 + jj] : 0.0;
#ifdef FPL_HAVE_X86_KERNELS
	if (J->ro32 && (J->simd >= 2 ? fpl__acc_ro32_avx512(T, res) : fpl__acc_ro32_avx2(T, res))) {
		fpl__acc_tile_out(T, res);
		return 1;
	}
#endif
	if (m->order == FPL_ORDER_SEQUENTIAL)
		chain_range(T, 0, J->K, res, &w);
	else if (m->order == FPL_ORDER_EVENODD)
		evenodd(T, res, &w);
	else
		blocked(T, res, &w);
	fpl__acc_tile_out(T, res);
	return 1;
}

/* SPDX-License-Identifier: MIT */
/*
 * block/block_f32.h - what the binary32 entry (block_f32.c) shares with
 * its vector kernels (x86/block_f32_avx512.c, x86/block_f32_avx2.c): the
 * per-call parameters, the per-thread event counts, and the per-block
 * scale in scalar integer arithmetic.
 *
 * Invariant: a kernel run over blocks [id0, id1) of the view (1-D blocks
 * of `tr` consecutive elements along rows of `R`, the last block of a row
 * shorter) writes y for exactly those blocks' elements and adds their
 * events into its acc; element j (flat index) uses draw c0 + j.
 */
#ifndef FPLAB_BLOCK_F32_H
#define FPLAB_BLOCK_F32_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/block.h>

typedef struct fpl__bq {
	/* the tensor: rows of R elements, blocks of tr along each row */
	size_t R, tr, nbr;
	uint64_t c0;		/* draw index of x[0] */
	uint64_t key;		/* fpl__draw_key(seed, stream) */
	uint32_t rmask;		/* the top sr_bits bits of a 32-bit word */
	int sp;			/* 1: FPL_RND_SP, 0: FPL_RND_NE */
	/* the element format */
	int m, emin, emax;
	int tiny_before;
	float maxe;		/* its largest finite value */
	uint32_t smax;		/* max_e's significand, 24 bits (rceil) */
	/* the scale */
	fpl_block_rule rule;
	int kmin, kmax;		/* power-of-two rules: 2^k within the scale format */
	int amax;		/* 1: the amax rule (below) */
	int q32;		/* amax rule: binary32 quotients */
	double s;		/* tensor scale (1 without ts) */
	double dv;		/* max_e * s, exact */
	int sm, semin;		/* the scale format: mantissa bits, emin */
	double smaxv, sminv;	/* its largest and smallest positive value */
	/* for fpl__bq_block_scalar */
	const fpl_format *elem;
	const fpl_state *st;
	fpl_rnd rnd;
} fpl__bq;

typedef struct fpl__bq_acc {
	uint64_t count[FPL_NFLAGS];
	fpl_block_stats s;
} fpl__bq_acc;

typedef void (*fpl__bq_kernel)(const fpl__bq *p, float *y, const float *x, size_t id0,
			       size_t id1, fpl__bq_acc *a);

#ifdef FPL_HAVE_X86_KERNELS
void fpl__bq_avx512(const fpl__bq *p, float *y, const float *x, size_t id0, size_t id1,
		    fpl__bq_acc *a);
/* max |x_j| bits over the finite x_j (0 if none), for the tensor scale */
uint32_t fpl__bq_finite_umax_avx512(const float *x, size_t n);
void fpl__bq_avx2(const fpl__bq *p, float *y, const float *x, size_t id0, size_t id1,
		  fpl__bq_acc *a);
uint32_t fpl__bq_finite_umax_avx2(const float *x, size_t n);	/* the same with AVX2 */
#endif

/* Block [lo, hi) with scale X (D = X s) by the scalar engine, exactly as
 * block_quant.c's round_block (for the rare blocks a kernel leaves). */
void fpl__bq_block_scalar(const fpl__bq *p, float *y, const float *x, size_t lo, size_t hi,
			  double X, float amax, fpl__bq_acc *a);

/* The element range [*lo, *hi) of block id. */
static inline void fpl__bq_range(const fpl__bq *p, size_t id, size_t *lo, size_t *hi)
{
	size_t row = id / p->nbr, br = id % p->nbr, l = row * p->R + br * p->tr;
	size_t len = p->R - br * p->tr < p->tr ? p->R - br * p->tr : p->tr;

	*lo = l;
	*hi = l + len;
}

/*
 * The exponent k of a power-of-two rule's scale for a block whose largest
 * magnitude has the binary32 bits umax (0 < umax < 0x7f800000), as
 * fpl__blk_pow2_exp computes it from the binary64 value (block_quant.c):
 * with amax = S 2^(E-23), S the 24-bit significand (normalized also for
 * a subnormal amax) and m the element's stored mantissa bits,
 *   floor: E - emax_e;
 *   ceil:  the same after amax is rounded up to m + 1 bits, which moves
 *          E up by one exactly when the top m + 1 bits of S are all ones
 *          and a bit below them is set;
 *   even:  as ceil with "the bits below are at least half of the last
 *          kept bit" (a tie rounds to even, and all ones is odd);
 *   rceil: ceil(log2(amax / max_e)) = E - emax_e + (S > S_max): both
 *          significands in [1, 2), their quotient's log lies in (-1, 1).
 * k is then clamped into [kmin, kmax], *clamped set.
 */
static inline int fpl__bq_kpow2(const fpl__bq *p, uint32_t umax, int *clamped)
{
	int E, k, lz;
	uint32_t S, top, low, ones = (2u << p->m) - 1;

	if (umax >= 0x800000u) {
		E = (int)(umax >> 23) - 127;
		S = (umax & 0x7fffffu) | 0x800000u;
	} else {
		lz = __builtin_clz(umax) - 8;
		S = umax << lz;
		E = -126 - lz;
	}
	top = S >> (23 - p->m);
	low = S & ((1u << (23 - p->m)) - 1);
	switch (p->rule) {
	case FPL_BRULE_CEIL:
		E += top == ones && low != 0;
		k = E - p->emax;
		break;
	case FPL_BRULE_EVEN:
		E += top == ones && low >= (1u << (22 - p->m));
		k = E - p->emax;
		break;
	case FPL_BRULE_RCEIL:
		k = E - p->emax + (S > p->smax);
		break;
	default:
		k = E - p->emax;
		break;
	}
	if (k < p->kmin || k > p->kmax) {
		*clamped = 1;
		k = k < p->kmin ? p->kmin : p->kmax;
	}
	return k;
}

/* v > 0 (finite, normal binary64) rounded to nearest-even into the scale
 * format (sm mantissa bits, smallest normal binade semin, subnormals),
 * saturating at smaxv; *sat set when it did. */
static inline double fpl__bq_round_scale(const fpl__bq *p, double v, int *sat)
{
	union { double d; uint64_t u; } c = { v };
	int e = (int)(c.u >> 52) - 1023, q = (e > p->semin ? e : p->semin) - p->sm;
	/* v 2^-q < 2^(sm+1) <= 2^51: adding 2^52 rounds it to an integer
	 * (nearest-even, the default mode), subtracting is exact; |q| is far
	 * below 1022 (v from a binary32 quotient, the scale format's range
	 * within 2^+-200, block_f32.c) */
	union { uint64_t u; double d; } dn = { (uint64_t)(1023 - q) << 52 }, up = { (uint64_t)(1023 + q) << 52 };
	double t = v * dn.d, r = (t + 0x1p52) - 0x1p52;	/* powers of two: exact */

	r *= up.d;
	if (r > p->smaxv) {
		*sat = 1;
		r = p->smaxv;
	}
	return r;
}

/*
 * The amax rule's scale X for a block of largest magnitude amax (> 0,
 * finite), as block_quant.c's amax_scale: exact: amax / dv rounded once;
 * the binary64 quotient rounds to the same scale value, since a scale
 * format of sm <= 10 bits has midpoints of at most 12 significant bits,
 * amax has 24 and dv at most 27 (max_e of <= 3 bits times a binary32 s):
 * amax / dv is a midpoint exactly (then the division is exact) or
 * differs from every midpoint by more than 2^-40 of its value, far more
 * than the binary64 rounding error 2^-53, which therefore cannot carry it
 * across one.  q32: the quotient of the binary32 roundings, rounded
 * again, as the reference does.  A result below the smallest positive
 * value becomes it (*clamped).
 */
static inline double fpl__bq_amax_scale(const fpl__bq *p, float amax, int *clamped)
{
	double q = p->q32 ? (double)(amax / (float)p->dv) : (double)amax / p->dv, X;

	X = q > 0 && q <= 0x1p1000 ? fpl__bq_round_scale(p, q, clamped) : q > 0 ? p->smaxv : 0;
	if (q > 0x1p1000)
		*clamped = 1;
	if (!(X >= p->sminv)) {
		X = p->sminv;
		*clamped = 1;
	}
	return X;
}

#endif

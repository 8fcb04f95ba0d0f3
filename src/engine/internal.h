/* SPDX-License-Identifier: MIT */
/*
 * engine/internal.h - the engine's private interface.
 *
 * Every operation reduces to one representation of its exact result, the
 * unpacked value
 *
 *     |x| = sig * 2^(exp - 127) + t,   2^127 <= sig < 2^128,  0 <= t < 2^(exp-127)
 *
 * where `sticky` says whether t != 0.  Operations may "jam" (OR) lost bits
 * into bit 0 or bit 1 of sig instead of setting sticky: rounding reads
 * nothing below bit 43 of sig except to decide inexactness (the lowest bit
 * it needs is the R-th random-rounding bit below a 53-bit precision,
 * 127 - 52 - 32 = 43), so a jam there changes no result.
 * fpl__round_unp() then rounds that exact value once into the format.
 *
 * Internal scalar functions (suffix _ix) take the random draw index and
 * return their flags through *fl instead of touching st, so that array
 * kernels running in several threads can share one read-only state.
 */
#ifndef FPLAB_ENGINE_INTERNAL_H
#define FPLAB_ENGINE_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include <fplab/fplab.h>

typedef unsigned __int128 fpl_u128;

typedef struct fpl_unp {
	int sign;	/* 1 for negative */
	int exp;	/* leading-bit exponent: 2^exp <= |x| < 2^(exp+1) */
	fpl_u128 sig;	/* normalized: bit 127 set */
	int sticky;	/* exact value has nonzero bits below sig */
} fpl_unp;

static inline uint64_t fpl__bits(double x)
{
	uint64_t u;
	memcpy(&u, &x, sizeof u);
	return u;
}

static inline double fpl__from_bits(uint64_t u)
{
	double x;
	memcpy(&x, &u, sizeof x);
	return x;
}

#define FPL__SIGN_BIT 0x8000000000000000ull
#define FPL__QUIET_BIT 0x0008000000000000ull
#define FPL__EXP_MASK 0x7ff0000000000000ull
#define FPL__FRAC_MASK 0x000fffffffffffffull

static inline int fpl__signbit(double x)
{
	return (int)(fpl__bits(x) >> 63);
}

static inline int fpl__isnan(double x)
{
	return (fpl__bits(x) & ~FPL__SIGN_BIT) > FPL__EXP_MASK;
}

static inline int fpl__issnan(double x)
{
	return fpl__isnan(x) && !(fpl__bits(x) & FPL__QUIET_BIT);
}

static inline int fpl__isinf(double x)
{
	return (fpl__bits(x) & ~FPL__SIGN_BIT) == FPL__EXP_MASK;
}

static inline double fpl__signed_zero(int sign)
{
	return fpl__from_bits(sign ? FPL__SIGN_BIT : 0);
}

static inline int fpl__clz128(fpl_u128 x)
{
	uint64_t hi = (uint64_t)(x >> 64);
	if (hi)
		return __builtin_clzll(hi);
	return 64 + __builtin_clzll((uint64_t)x);
}

/*
 * Split a finite nonzero binary64 into sign, leading exponent and a 53-bit
 * integer significand with bit 52 set: |x| = sig53 * 2^(exp - 52).
 * Binary64 subnormals are normalized.
 */
static inline void fpl__split(double x, int *sign, int *exp, uint64_t *sig53)
{
	uint64_t u = fpl__bits(x);
	int be = (int)((u >> 52) & 0x7ff);
	uint64_t f = u & FPL__FRAC_MASK;

	*sign = (int)(u >> 63);
	if (be) {
		*exp = be - 1023;
		*sig53 = f | (1ull << 52);
	} else {
		int lz = __builtin_clzll(f) - 11;	/* shift to bring the top bit to 52 */
		*exp = -1022 - lz;
		*sig53 = f << lz;
	}
}

/* The same, as an unpacked exact value. */
static inline void fpl__unpack(double x, fpl_unp *u)
{
	uint64_t s;
	fpl__split(x, &u->sign, &u->exp, &s);
	u->sig = (fpl_u128)s << 75;
	u->sticky = 0;
}

/* Is the format one without infinities? */
static inline int fpl__has_inf(const fpl_format *f)
{
	return f->specials == FPL_SPEC_IEEE;
}

static inline int fpl__saturates(const fpl_format *f)
{
	return (f->overflow != FPL_OVF_INF && f->overflow != FPL_OVF_INF_ALWAYS)
	       || f->specials == FPL_SPEC_NONE;
}

/* Does an exact infinite result (an inf input, x/0) become +-max?  Only
 * FPL_OVF_SATURATE_KEEP_INF keeps it in a format that has inf. */
static inline int fpl__saturates_inf(const fpl_format *f)
{
	return fpl__saturates(f)
	       && !(f->overflow == FPL_OVF_SATURATE_KEEP_INF && fpl__has_inf(f));
}

/* DAZ: an operand below 2^emin reads as a signed zero. */
static inline double fpl__daz(const fpl_format *f, double x)
{
	if (f->daz && x != 0 && (x < f->min_normal && x > -f->min_normal))
		return fpl__signed_zero(fpl__signbit(x));
	return x;
}

/* Round an exact nonzero value once into f (round_pack.c). */
double fpl__round_unp(const fpl_format *f, const fpl_unp *u, fpl_rnd rnd,
		      const fpl_state *st, uint64_t idx, unsigned *fl);

/* A zero result of sign `sign` in f (+0 in fnuz; e8m0 has no zero: NaN). */
double fpl__zero(const fpl_format *f, int sign, unsigned *fl);

/* An exact infinite result in f: inf, or NaN (invalid), or +-max (saturated). */
double fpl__inf(const fpl_format *f, int sign, unsigned *fl);

/* NaN results (nan.c). */
double fpl__nan_narrow(const fpl_format *f, double nan);
double fpl__nan_default(const fpl_format *f);
double fpl__nan_canonical(const fpl_format *f);
/* First NaN among the n operands, quieted and narrowed (or canonical);
 * raises invalid if any operand is a signaling NaN. */
double fpl__nan_pick(const fpl_format *f, const double *ops, int n, unsigned *fl);
/* The NaN standing for a signed infinity or overflow where there is no
 * inf: fn keeps the sign; others give their one NaN. */
double fpl__nan_signed(const fpl_format *f, int sign);
/* The NaN of an invalid operation. */
double fpl__nan_invalid(const fpl_format *f, unsigned *fl);

/* Apply the state's soft-error model to a rounded result (flip.c). */
double fpl__flip(const fpl_format *f, double r, const fpl_state *st, uint64_t idx);

static inline double fpl__finish(const fpl_format *f, double r, const fpl_state *st,
				 uint64_t idx)
{
	if (st->flip != FPL_FLIP_NONE && st->flip_prob > 0)
		return fpl__flip(f, r, st, idx);
	return r;
}

/* OR flags into the state and count one event per raised flag. */
static inline void fpl__commit(fpl_state *st, unsigned fl)
{
	st->flags |= fl;
	while (fl) {
		int i = __builtin_ctz(fl);
		st->count[i]++;
		fl &= fl - 1;
	}
}

/* Internal scalar operations with an explicit draw index. */
double fpl__round_ix(const fpl_format *f, double x, fpl_rnd rnd, const fpl_state *st,
		     uint64_t idx, unsigned *fl);
double fpl__add_ix(const fpl_format *f, double a, double b, fpl_rnd rnd,
		   const fpl_state *st, uint64_t idx, unsigned *fl);
double fpl__mul_ix(const fpl_format *f, double a, double b, fpl_rnd rnd,
		   const fpl_state *st, uint64_t idx, unsigned *fl);
double fpl__div_ix(const fpl_format *f, double a, double b, fpl_rnd rnd,
		   const fpl_state *st, uint64_t idx, unsigned *fl);
double fpl__sqrt_ix(const fpl_format *f, double a, fpl_rnd rnd, const fpl_state *st,
		    uint64_t idx, unsigned *fl);
double fpl__fma_ix(const fpl_format *f, double a, double b, double c, fpl_rnd rnd,
		   const fpl_state *st, uint64_t idx, unsigned *fl);
/* fpl_round_parts (round_parts.c). */
double fpl__round_parts_ix(const fpl_format *f, int negative, int64_t exp, uint64_t hi,
			   uint64_t lo, int sticky, fpl_rnd rnd, const fpl_state *st, uint64_t idx,
			   unsigned *fl);
/* fpl_min (want = -1) or fpl_max (want = 1). */
double fpl__minmax_ix(const fpl_format *f, double a, double b, int want, fpl_rnd rnd,
		      const fpl_state *st, uint64_t idx, unsigned *fl);

/* Negation that leaves NaNs alone (x86 SUB returns the NaN operand as is). */
static inline double fpl__neg_num(double x)
{
	return fpl__isnan(x) ? x : fpl__from_bits(fpl__bits(x) ^ FPL__SIGN_BIT);
}

/* The counter-based generator (state.c explains it), inline so that the
 * array kernels can vectorize it: draw i of a stream is
 * mix64(key + (i+1) * golden), the key mixing the seed and the stream. */
static inline uint64_t fpl__mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint64_t fpl__draw_key(uint64_t seed, uint64_t stream)
{
	return fpl__mix64(seed + 0x9e3779b97f4a7c15ull) ^ fpl__mix64(~stream * 0xd1342543de82ef95ull);
}

static inline uint64_t fpl__draw(uint64_t key, uint64_t index)
{
	return fpl__mix64(key + (index + 1) * 0x9e3779b97f4a7c15ull);
}

/* Key for flip draws, so flips and stochastic rounding are independent. */
#define FPL__FLIP_KEY 0x666c6970ull

#endif

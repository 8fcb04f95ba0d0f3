/* SPDX-License-Identifier: MIT */
/*
 * arith.c - the array operations of a step: the engine's fpl_*_array,
 * or, for plain IEEE binary64 in ne with no flips, the same operations
 * in C double arithmetic (the FP64 reference and the binary64 parts of
 * any policy run at memory speed).  FPLAB_OPTIM=ref in the environment
 * forces the engine ("" or "auto": the fast path; anything else: the
 * operations fail with FPL_ENOTFOUND, no silent fallback).
 *
 * Why the binary64 fast path gives the engine's bits, flags and counts:
 *  - binary64 +, -, *, / and sqrt in round-to-nearest-even are exact IEEE
 *    operations in C (the build has -ffp-contract=off and no fast-math),
 *    and the engine rounds the exact result once into binary64 in ne: the
 *    same number;
 *  - a lane where anything special can happen (an operand or result
 *    that is inf or NaN, a division by zero, a product, quotient or root
 *    near the ends of the exponent range) is handed to the engine's
 *    scalar operation with draw index counter + i, so NaN payloads,
 *    invalid, overflow and underflow are the engine's own;
 *  - every other lane can raise only inexact, and is inexact exactly
 *    when the error-free transform's error term is nonzero: TwoSum for a
 *    sum (exact for finite operands without overflow: a sum never
 *    underflows inexactly), Dekker's TwoProduct with Veltkamp's split for
 *    a product (exact when |a|, |b| < 2^995 and 2^-960 <= |ab| <= 2^1000,
 *    so no split overflows and every partial product and the error term
 *    are multiples of ulp(a)ulp(b) >= 2^-1064, representable), and r*b ==
 *    a (r*r == a for a root) checked with the same TwoProduct.
 *
 * There is no binary32 fast path: the engine's fp32 array operations run
 * the kernel set's SIMD kernels (AVX-512 or AVX2: round-to-odd in
 * binary64, then one rounding), and an exact C path at the baseline ISA
 * (TwoSum/TwoProduct, round-to-odd, a (float) conversion per lane) measured
 * 3 to 4 times slower per element than them.
 * The fast path needs the C environment in round-to-nearest with no
 * flush-to-zero or denormals-are-zero (MXCSR on x86); otherwise the
 * engine runs.
 * The counter advances by n as the array functions advance it.
 */
#include <fenv.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define ARITH_X86 1
#endif

#include <fplab/array.h>
#include <fplab/error.h>

#include "engine/internal.h"
#include "optim/optim_internal.h"

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_SQRT, OP_ROUND };

int opt__fast64(const fpl_format *f, fpl_rnd rnd, const fpl_state *st)
{
	return rnd == FPL_RND_NE && (st->flip == FPL_FLIP_NONE || !(st->flip_prob > 0))
	       && f->e == 11 && f->m == 52 && f->bias == 1023 && f->subnormal == FPL_SUB_YES
	       && !f->daz && f->specials == FPL_SPEC_IEEE && f->overflow == FPL_OVF_INF
	       && !f->emax_limit_set;
}

/* FPLAB_OPTIM: "" or "auto" (0), "ref" (1: the engine); else an error.
 * Read on every call (no global state; one getenv per array). */
static int optim_env(int *ref)
{
	const char *e = getenv("FPLAB_OPTIM");

	if (!e || !*e || !strcmp(e, "auto"))
		*ref = 0;
	else if (!strcmp(e, "ref"))
		*ref = 1;
	else
		return FPL_ENOTFOUND;
	return 0;
}

/* C arithmetic is IEEE round-to-nearest-even with gradual underflow. */
static int env_ok(void)
{
#ifdef ARITH_X86
	unsigned csr = _mm_getcsr();
	if (csr & ((1u << 15) | (1u << 6) | (3u << 13)))
		return 0;
#endif
	return fegetround() == FE_TONEAREST;
}

const double *opt__bcast(double *k, double c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		k[i] = c;
	return k;
}

/* a*b == p exactly (Dekker), under the range conditions of the header. */
static int prod_is(double a, double b, double p)
{
	const double sp = 134217729.0;	/* 2^27 + 1 */
	double ca = sp * a, cb = sp * b;
	double ah = ca - (ca - a), al = a - ah;
	double bh = cb - (cb - b), bl = b - bh;
	double e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;

	return e == 0;
}

static int in_range(double x, double lo, double hi)
{
	double y = fabs(x);
	return y >= lo && y <= hi;
}

/* One lane: 1 when handled (r set, *inexact set), 0 for the engine. */
static int fast_lane(int op, double a, double b, double *r, int *inexact)
{
	double z, t;

	switch (op) {
	case OP_ADD:
	case OP_SUB:
		if (op == OP_SUB)
			b = -b;
		z = a + b;
		if (!isfinite(z))
			return 0;
		t = z - a;
		*inexact = ((a - (z - t)) + (b - t)) != 0;
		break;
	case OP_MUL:
		z = a * b;
		if (!isfinite(z))
			return 0;
		if (a == 0 || b == 0) {
			*inexact = 0;
			break;
		}
		if (!in_range(z, 0x1p-960, 0x1p1000) || fabs(a) >= 0x1p995 || fabs(b) >= 0x1p995)
			return 0;
		*inexact = !prod_is(a, b, z);
		break;
	case OP_DIV:
		if (!isfinite(a) || !isfinite(b) || b == 0)
			return 0;
		z = a / b;
		if (a == 0) {
			*inexact = 0;
			break;
		}
		if (!in_range(a, 0x1p-900, 0x1p900) || !in_range(b, 0x1p-900, 0x1p900)
		    || !in_range(z, 0x1p-900, 0x1p900))
			return 0;
		*inexact = !prod_is(z, b, a);
		break;
	case OP_SQRT:
		if (!isfinite(a) || a < 0)
			return 0;
		if (a == 0) {
			z = a;
			*inexact = 0;
			break;
		}
		if (!in_range(a, 0x1p-900, 0x1p900))
			return 0;
		z = sqrt(a);
		*inexact = !prod_is(z, z, a);
		break;
	default:
		if (!isfinite(a))
			return 0;
		z = a;
		*inexact = 0;
		break;
	}
	*r = z;
	return 1;
}

static double engine_lane(int op, const fpl_format *f, double a, double b, const fpl_state *st,
			  uint64_t idx, unsigned *fl)
{
	switch (op) {
	case OP_ADD: return fpl__add_ix(f, a, b, FPL_RND_NE, st, idx, fl);
	case OP_SUB: return fpl__add_ix(f, a, fpl__neg_num(b), FPL_RND_NE, st, idx, fl);
	case OP_MUL: return fpl__mul_ix(f, a, b, FPL_RND_NE, st, idx, fl);
	case OP_DIV: return fpl__div_ix(f, a, b, FPL_RND_NE, st, idx, fl);
	case OP_SQRT: return fpl__sqrt_ix(f, a, FPL_RND_NE, st, idx, fl);
	default: return fpl__round_ix(f, a, FPL_RND_NE, st, idx, fl);
	}
}

static int fast(int op, const fpl_format *f, fpl_state *st, double *z, const double *a,
		const double *b, size_t n)
{
	uint64_t inexact = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		double r, bi = b ? b[i] : 0;
		int ix;

		if (fast_lane(op, a[i], bi, &r, &ix)) {
			inexact += (uint64_t)ix;
		} else {
			unsigned fl = 0;
			r = engine_lane(op, f, a[i], bi, st, st->counter + i, &fl);
			fpl__commit(st, fl);
		}
		z[i] = r;
	}
	if (inexact) {
		st->flags |= FPL_FLAG_INEXACT;
		st->count[0] += inexact;
	}
	st->counter += n;
	return 0;
}

/* The fast path for f, or 0 for the engine; or a negative status. */
static int path(const fpl_format *f, fpl_rnd rnd, const fpl_state *st)
{
	int ref, rc;

	if ((rc = optim_env(&ref)) != 0)
		return rc;
	if (ref || !env_ok())
		return 0;
	return opt__fast64(f, rnd, st);
}

/* op through the path for f: 1 done (*rc its status), 0 for the engine. */
static int dispatch(int op, const fpl_format *f, fpl_rnd rnd, fpl_state *st, double *z,
		    const double *a, const double *b, size_t n, int *rc)
{
	int p = path(f, rnd, st);

	if (p < 0) {
		*rc = p;
		return 1;
	}
	if (!p)
		return 0;
	if (n && (!z || !a || (op != OP_SQRT && op != OP_ROUND && !b))) {
		*rc = FPL_EINVAL;
		return 1;
	}
	*rc = fast(op, f, st, z, a, b, n);
	return 1;
}

int opt__add(const fpl_format *f, fpl_rnd r, fpl_state *st, double *z, const double *a,
	     const double *b, size_t n)
{
	int rc;

	if (dispatch(OP_ADD, f, r, st, z, a, b, n, &rc))
		return rc;
	return fpl_add_array(f, z, a, b, n, r, st);
}

int opt__sub(const fpl_format *f, fpl_rnd r, fpl_state *st, double *z, const double *a,
	     const double *b, size_t n)
{
	int rc;

	if (dispatch(OP_SUB, f, r, st, z, a, b, n, &rc))
		return rc;
	return fpl_sub_array(f, z, a, b, n, r, st);
}

int opt__mul(const fpl_format *f, fpl_rnd r, fpl_state *st, double *z, const double *a,
	     const double *b, size_t n)
{
	int rc;

	if (dispatch(OP_MUL, f, r, st, z, a, b, n, &rc))
		return rc;
	return fpl_mul_array(f, z, a, b, n, r, st);
}

int opt__div(const fpl_format *f, fpl_rnd r, fpl_state *st, double *z, const double *a,
	     const double *b, size_t n)
{
	int rc;

	if (dispatch(OP_DIV, f, r, st, z, a, b, n, &rc))
		return rc;
	return fpl_div_array(f, z, a, b, n, r, st);
}

int opt__sqrt(const fpl_format *f, fpl_rnd r, fpl_state *st, double *z, const double *a,
	      size_t n)
{
	int rc;

	if (dispatch(OP_SQRT, f, r, st, z, a, NULL, n, &rc))
		return rc;
	return fpl_sqrt_array(f, z, a, n, r, st);
}

int opt__round(const fpl_format *f, fpl_rnd r, fpl_state *st, double *z, const double *a,
	       size_t n)
{
	int rc;

	if (dispatch(OP_ROUND, f, r, st, z, a, NULL, n, &rc))
		return rc;
	return fpl_round_array(f, z, a, n, r, st);
}

/* No fast path: a binary64 fma needs the engine (or a hardware fma the
 * baseline build does not assume). */
int opt__fma(const fpl_format *f, fpl_rnd r, fpl_state *st, double *z, const double *a,
	     const double *b, const double *c, size_t n)
{
	int ref, rc;

	if ((rc = optim_env(&ref)) != 0)
		return rc;
	return fpl_fma_array(f, z, a, b, c, n, r, st);
}

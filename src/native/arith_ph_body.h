/* SPDX-License-Identifier: MIT */
/*
 * native/arith_ph_body.h - the array driver of the element-wise fp16
 * add, mul and fma (32 lanes at a time, the operation and the mode
 * chosen per vector, a tail through zero-padded copies), written once
 * and included twice: by x86/arith_avx512fp16.c with AVX512-FP16
 * intrinsics and embedded rounding, and by tests/tnative_kernels.c with
 * fplab's engine per lane, so that the driver the kernel ships is tested
 * on any CPU and only the intrinsic mapping is left to the native test.
 *
 * The includer defines, before including:
 *   AR_ARITH             the name of the entry point to define
 *   AR_LINKAGE           its storage class (empty, or static)
 *   AR_VEC               a vector of 32 fp16 encodings
 *   AR_LOAD(p)           AR_VEC from the 32 uint16_t at p (no alignment)
 *   AR_STORE(p, v)       the 32 encodings of v to p (no alignment)
 *   AR_NE AR_TN AR_TP AR_TZ
 *                        the four modes as AR_ADD and friends take them
 *                        (compile-time constants: embedded rounding)
 *   AR_ADD(x, y, r)      per lane x + y rounded once in mode r
 *   AR_MUL(x, y, r)      per lane x * y
 *   AR_FMA(x, y, z, r)   per lane x * y + z, one rounding
 * with x the first operand in NaN priority, then y, then z.
 *
 * The entry point's contract is fpl_native_arith_f16's (fplab/native.h)
 * after native.c's checks: op one of the three, rnd one of ne tn tp tz,
 * the arrays valid for n elements (c only for fma).  Element i of the
 * output depends on element i of the inputs only, and every vector is
 * loaded before its result is stored, so out may be a, b or c.
 */
#include <stdint.h>
#include <string.h>

#include <fplab/native.h>

/* o[0..32) = op(a, b, c) in mode rnd, 32 lanes. */
static void ar_vector(fpl_native_arith_op op, fpl_rnd rnd, const uint16_t *a,
		      const uint16_t *b, const uint16_t *c, uint16_t *o)
{
	const AR_VEC x = AR_LOAD(a), y = AR_LOAD(b);
	AR_VEC r;

	if (op == FPL_NATIVE_FMA) {
		const AR_VEC z = AR_LOAD(c);
		switch (rnd) {
		case FPL_RND_TN: r = AR_FMA(x, y, z, AR_TN); break;
		case FPL_RND_TP: r = AR_FMA(x, y, z, AR_TP); break;
		case FPL_RND_TZ: r = AR_FMA(x, y, z, AR_TZ); break;
		default: r = AR_FMA(x, y, z, AR_NE); break;
		}
	} else if (op == FPL_NATIVE_MUL) {
		switch (rnd) {
		case FPL_RND_TN: r = AR_MUL(x, y, AR_TN); break;
		case FPL_RND_TP: r = AR_MUL(x, y, AR_TP); break;
		case FPL_RND_TZ: r = AR_MUL(x, y, AR_TZ); break;
		default: r = AR_MUL(x, y, AR_NE); break;
		}
	} else {
		switch (rnd) {
		case FPL_RND_TN: r = AR_ADD(x, y, AR_TN); break;
		case FPL_RND_TP: r = AR_ADD(x, y, AR_TP); break;
		case FPL_RND_TZ: r = AR_ADD(x, y, AR_TZ); break;
		default: r = AR_ADD(x, y, AR_NE); break;
		}
	}
	AR_STORE(o, r);
}

AR_LINKAGE int AR_ARITH(fpl_native_arith_op op, fpl_rnd rnd, const uint16_t *a,
			const uint16_t *b, const uint16_t *c, size_t n, uint16_t *out)
{
	const int fma = op == FPL_NATIVE_FMA;
	size_t i;

	for (i = 0; i + 32 <= n; i += 32)
		ar_vector(op, rnd, a + i, b + i, fma ? c + i : a + i, out + i);
	if (i < n) {	/* the tail: zero-padded copies, the padding discarded */
		uint16_t ta[32], tb[32], tc[32], to[32];
		const size_t r = n - i;
		memset(ta, 0, sizeof ta);
		memset(tb, 0, sizeof tb);
		memset(tc, 0, sizeof tc);
		memcpy(ta, a + i, r * sizeof *ta);
		memcpy(tb, b + i, r * sizeof *tb);
		if (fma)
			memcpy(tc, c + i, r * sizeof *tc);
		ar_vector(op, rnd, ta, tb, tc, to);
		memcpy(out + i, to, r * sizeof *to);
	}
	return 0;
}

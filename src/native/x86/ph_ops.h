/* SPDX-License-Identifier: MIT */
/*
 * x86/ph_ops.h - AVX512-FP16 add, mul and fma on zmm with the rounding
 * mode embedded and the operand ROLES fixed, for x86/arith_avx512fp16.c
 * and x86/gemm_avx512fp16.c (compiled with -mavx512fp16 only).
 *
 * Why assembly and not _mm512_add_round_ph and friends: addition and
 * multiplication commute, so a compiler may (and gcc 12 does) emit
 * vaddph z, b, a for _mm512_add_round_ph(a, b) and vfmadd132ph with the
 * multiplicands swapped for _mm512_fmadd_round_ph(a, b, c).  The values
 * are the same, but which NaN comes out when both operands are NaNs is
 * not: the instruction returns the first NaN source (Intel SDM vol. 1,
 * table 4-7, SSE/AVX column; for VFMADD231, the NaN of src2, then src3,
 * then the destination, as QEMU's x86 FMA models it from the SDM's "FMA
 * numeric behavior").  Here, for the intrinsic-like call f(x, y[, z]):
 *   vaddph/vmulph {r}, y, x, r      (AT&T) = r = x op y, src1 = x
 *   vfmadd231ph {r}, y, x, z        (AT&T) = z = x*y + z, src2 = x, src3 = y
 * so x is always first, y second, z (the addend) last: fplab's x86 rule
 * for fpl_add(x, y), fpl_mul(x, y), fpl_fma(x, y, z).  Not volatile: the
 * compiler may schedule them; r is a constant after inlining, so each
 * switch below folds to one instruction.
 *
 * Modes: 0 ne %{rn-sae%}, 1 tn {rd-sae}, 2 tp {ru-sae}, 3 tz {rz-sae}
 * (sae: no exception recorded, MXCSR neither read nor written).
 */
#ifndef FPL_NATIVE_X86_PH_OPS_H
#define FPL_NATIVE_X86_PH_OPS_H

#include <immintrin.h>

#define PHOP_NE 0
#define PHOP_TN 1
#define PHOP_TP 2
#define PHOP_TZ 3

static inline __attribute__((always_inline)) __m512h phop_add(__m512h x, __m512h y, int r)
{
	__m512h s;

	switch (r) {
	case PHOP_TN: __asm__("vaddph %{rd-sae%}, %2, %1, %0" : "=v"(s) : "v"(x), "v"(y)); break;
	case PHOP_TP: __asm__("vaddph %{ru-sae%}, %2, %1, %0" : "=v"(s) : "v"(x), "v"(y)); break;
	case PHOP_TZ: __asm__("vaddph %{rz-sae%}, %2, %1, %0" : "=v"(s) : "v"(x), "v"(y)); break;
	default: __asm__("vaddph %{rn-sae%}, %2, %1, %0" : "=v"(s) : "v"(x), "v"(y)); break;
	}
	return s;
}

static inline __attribute__((always_inline)) __m512h phop_mul(__m512h x, __m512h y, int r)
{
	__m512h s;

	switch (r) {
	case PHOP_TN: __asm__("vmulph %{rd-sae%}, %2, %1, %0" : "=v"(s) : "v"(x), "v"(y)); break;
	case PHOP_TP: __asm__("vmulph %{ru-sae%}, %2, %1, %0" : "=v"(s) : "v"(x), "v"(y)); break;
	case PHOP_TZ: __asm__("vmulph %{rz-sae%}, %2, %1, %0" : "=v"(s) : "v"(x), "v"(y)); break;
	default: __asm__("vmulph %{rn-sae%}, %2, %1, %0" : "=v"(s) : "v"(x), "v"(y)); break;
	}
	return s;
}

/* x*y + z, one rounding: VFMADD231PH z, x, y. */
static inline __attribute__((always_inline)) __m512h phop_fma(__m512h x, __m512h y, __m512h z,
							     int r)
{
	switch (r) {
	case PHOP_TN: __asm__("vfmadd231ph %{rd-sae%}, %2, %1, %0" : "+v"(z) : "v"(x), "v"(y)); break;
	case PHOP_TP: __asm__("vfmadd231ph %{ru-sae%}, %2, %1, %0" : "+v"(z) : "v"(x), "v"(y)); break;
	case PHOP_TZ: __asm__("vfmadd231ph %{rz-sae%}, %2, %1, %0" : "+v"(z) : "v"(x), "v"(y)); break;
	default: __asm__("vfmadd231ph %{rn-sae%}, %2, %1, %0" : "+v"(z) : "v"(x), "v"(y)); break;
	}
	return z;
}

#endif

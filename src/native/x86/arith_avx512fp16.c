/* SPDX-License-Identifier: MIT */
/*
 * x86/arith_avx512fp16.c - element-wise fp16 add, mul and fma on
 * AVX512-FP16 (VADDPH, VMULPH, VFMADD*PH on zmm, 32 lanes) with the mode
 * in the instruction (embedded rounding, {rn,rd,ru,rz}-sae): fplab's
 * native twin of fpl_add, fpl_mul and fpl_fma in fp16 (fplab/native.h,
 * fpl_native_arith_f16).
 *
 * The driver (vectors of 32, the tail through padded copies) is
 * native/arith_ph_body.h, shared with the portable twin that
 * tests/tnative_kernels.c runs on every CPU; this file gives it the
 * vector operations.
 *
 * Why the bits equal the engine's fp16 in the same mode:
 *  - AVX512-FP16 computes IEEE binary16 with subnormals as inputs and
 *    results, ignores MXCSR.DAZ and MXCSR.FTZ, and with embedded rounding
 *    ignores MXCSR.RC too (and suppresses exceptions: SAE); VFMADD*PH
 *    rounds once (Intel AVX512-FP16 architecture specification; measured
 *    on Granite Rapids by issue 14's author).  fplab's "fp16" is that
 *    format (no DAZ, subnormals kept, tininess after rounding), and
 *    fpl_add, fpl_mul, fpl_fma round the exact result once.
 *  - Signed zeros: IEEE 754 (x + -x is +0, -0 in tn), as the engine.
 *  - NaNs: the first NaN source operand, quieted (Intel SDM vol. 1,
 *    table 4-7, "Rules for handling NaNs", SSE/AVX column, for two
 *    operands; for VFMADD231PH z, x, y: x, then y, then z, as QEMU's x86
 *    FMA emulation takes it from the SDM's FMA numeric behaviour); inf*0,
 *    inf-inf: the default NaN 0xfe00.  The engine's x86 rule takes the
 *    first NaN of (a, b) or (a, b, c), so a must be the instruction's
 *    first source, b the second: x86/ph_ops.h pins the roles with inline
 *    assembly because gcc 12 commutes the intrinsics' operands
 *    (_mm512_add_round_ph(a, b) became vaddph z, b, a).  The AVX512-FP16
 *    rule is inferred from the FP32 one, not measured:
 *    tests/tnative_kernels.c checks it on a CPU that has the instructions.
 */
#include "native/native_internal.h"
#include "native/x86/ph_ops.h"

#define AR_ARITH fpl__native_ph_arith
#define AR_LINKAGE
#define AR_VEC __m512h
#define AR_LOAD(p) _mm512_castsi512_ph(_mm512_loadu_si512((const void *)(p)))
#define AR_STORE(p, v) _mm512_storeu_si512((void *)(p), _mm512_castph_si512(v))
#define AR_NE PHOP_NE
#define AR_TN PHOP_TN
#define AR_TP PHOP_TP
#define AR_TZ PHOP_TZ
#define AR_ADD(x, y, r) phop_add((x), (y), (r))
#define AR_MUL(x, y, r) phop_mul((x), (y), (r))
#define AR_FMA(x, y, z, r) phop_fma((x), (y), (z), (r))

#include "native/arith_ph_body.h"

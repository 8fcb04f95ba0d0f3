/* SPDX-License-Identifier: MIT */
/*
 * x86/gemm_avx512fp16.c - the fp16 GEMM on AVX512-FP16's VFMADD231PH:
 * fplab's native twin of the profile "fp16-fma" (fp16 inputs as given,
 * exact products, an IEEE binary16 accumulator in nearest even, one
 * sequential chain per output from C or +0).
 *
 * The driver (packing into fp16 encodings, 8 x 64 register blocks of 16
 * zmm chains, rows split over threads, C through a tile of encodings,
 * tails) is native/gemm_ph_body.h, shared with the portable twin that
 * tests/tnative_kernels.c runs on every CPU; this file gives it the
 * vector operations.
 *
 * What one step computes: c_j = a_j * b_j + c_j per 16-bit lane, the
 * exact product and sum rounded ONCE to binary16 in the embedded mode
 * {rn-sae} (nearest even; MXCSR.RC not read, no exception recorded);
 * subnormal inputs and results as they are (AVX512-FP16 ignores
 * MXCSR.DAZ and FTZ); NaN: the first NaN of the two multiplicands then
 * the addend, quieted; inf*0 and inf-inf the default NaN 0xfe00
 * (fplab-native(7) gives the sources and what is measured).
 *
 * Why the bits equal fpl_accum_gemm with the profile "fp16-fma":
 *  - The profile's order is sequential with exact products and an fp16
 *    accumulator: s = +0 or C, then s = fma(a_k, b_k, s) for k = 0 ..
 *    kk-1, each rounded once in ne into fp16 (no DAZ, subnormals kept),
 *    the engine's NaN rule the first NaN of (a_k, b_k, s).
 *  - Each output here is one such chain in one lane: from C's encoding
 *    (beta = 1) or +0, k ascending, never split; which chains share a
 *    register block, a row tail (1 x 64 blocks) and a narrow panel (the
 *    padded lanes' chains are discarded) change neither a chain's
 *    operands nor its order.  kk = 0 stores C (or +0) back unchanged.
 *  - Packing and unpacking are by the bits (native/f16_bits.h), so
 *    NaN payloads, signaling NaNs and -0 arrive as given.
 * The row split over threads changes nothing either.
 *
 * Operand order: PH_STEP is x86/ph_ops.h's VFMADD231PH c, a, b with
 * A's broadcast as src2 and B's panel as src3, pinned by inline assembly:
 * through _mm512_fmadd_round_ph(a, b, c) gcc 12 emitted vfmadd231ph
 * c, b, a, which puts B's NaN first.  With embedded rounding no operand
 * can be a memory broadcast, so the broadcast is a vpbroadcastw.  The
 * NaN rule (src2, src3, then the accumulator, quieted) is the SDM's for
 * FP32/FP64 FMA, assumed for FP16 and checked by tests/tnative_kernels.c
 * on hardware that has it.
 */
#include "native/native_internal.h"
#include "native/x86/ph_ops.h"

#define PH_GEMM fpl__native_ph_gemm
#define PH_LINKAGE
#define PH_ACC __m512h
#define PH_LOAD(p) _mm512_castsi512_ph(_mm512_load_si512((const void *)(p)))
#define PH_STORE(p, v) _mm512_store_si512((void *)(p), _mm512_castph_si512(v))
#define PH_BCAST(p) _mm512_castsi512_ph(_mm512_set1_epi16((short)*(p)))
#define PH_STEP(c, a, b) ((c) = phop_fma((a), (b), (c), PHOP_NE))
#define PH_ENV_ENTER() ((void)0)
#define PH_ENV_LEAVE() ((void)0)
#define PH_MIN_WORK 1e6

#include "native/gemm_ph_body.h"

/* SPDX-License-Identifier: MIT */
/*
 * x86/gemm_avx512bf16.c - the bf16 GEMM on AVX512-BF16's VDPBF16PS:
 * fplab's native twin of the profile "avx512bf16" (order `pairs`).
 *
 * The driver (packing into bf16 pairs, 8 x 32 register blocks of 16
 * zmm chains, rows split over threads, tails) is native/gemm_dpbf16_body.h,
 * shared with the portable twin that tests/tnative_kernels.c runs on
 * every CPU; this file gives it the five vector operations.
 *
 * What one instruction computes (Intel SDM vol. 2, VDPBF16PS; DESIGN.md
 * §5, measured bit for bit on Zen 5 and Granite Rapids): for each 32-bit
 * lane j, holding the bf16 pair (lo = bits 0..15, hi = bits 16..31) of
 * both sources,
 *     c_j = fma(src1_j.lo, src2_j.lo, fma(src1_j.hi, src2_j.hi, c_j)),
 * each fma forming the exact product of two bf16 values and adding it to
 * the binary32 accumulator with ONE rounding to nearest even; every input
 * (the two bf16 values and the accumulator) is read as zero when it is
 * denormal (DAZ), and a result that is tiny after rounding becomes the
 * zero of its sign (FTZ), in both steps; NaN priority src1.lo, src2.lo,
 * src1.hi, src2.hi, c, the NaN quieted; inf*0 or inf-inf gives the
 * default NaN 0xffc00000; no exception flag.  The instruction neither
 * reads nor writes MXCSR (its rounding, DAZ and FTZ are fixed); each
 * worker still runs under MXCSR 0x1f80 and puts its own back, so nothing
 * here depends on what the caller set, now or in a later instruction set.
 *
 * Why the bits equal fpl_accum_gemm with the profile "avx512bf16":
 *  - The profile's accumulator is binary32 with DAZ on every operand of
 *    every step, FTZ with tininess after rounding, mode ne; its terms are
 *    exact products of the given bf16 values; its fma's NaN rule takes
 *    the first NaN among (a_k, b_k, acc).  The order `pairs` runs, per
 *    pair (2i, 2i+1), acc = fma(a_2i, b_2i, fma(a_2i+1, b_2i+1, acc)):
 *    the high element first, as the instruction does.  A's pair is the
 *    broadcast src1, B's the loaded src2, so the instruction's priority
 *    src1.lo > src2.lo > src1.hi > src2.hi > c is the profile's
 *    (a_2i, b_2i, then the first step's a_2i+1, b_2i+1, acc).
 *  - Each output is one chain: from C (beta = 1, loaded as it is; a
 *    denormal C is read as zero by the first step, as the profile's DAZ
 *    does) or +0, the pairs i = 0 .. ceil(kk/2)-1 in ascending order,
 *    never split into blocks whose partial sums are added.  A register
 *    block runs 16 x 16 independent chains side by side; which chains
 *    share a block, a row tail (1 x 32 blocks) and a narrow last panel
 *    (through a zero-padded copy of C; the padded lanes' chains are
 *    discarded) do not touch any chain's operands or order.
 *  - An odd kk: the last pair's high element is +0 in both A and B, so
 *    the first step of that pair is fma(+0, +0, acc), exactly the
 *    profile's pad (which returns acc, but turns -0 into +0).
 *  - kk = 0: no step; C is stored back unchanged, or +0.
 * So every output, NaN payloads and signed zeros included, is the
 * profile's.  The row split over threads changes nothing either.
 *
 * Operand order: _mm512_dpbf16_ps(c, a, b) is VDPBF16PS c, a (src1),
 * b (src2), and neither gcc 12 nor clang 14 commutes a and b: the
 * disassembly shows A's broadcast (vpbroadcastd / vbroadcastss) as the
 * middle operand and B's panel as the first, in a register or folded as
 * a memory operand, never an embedded {1to16} broadcast (which could
 * only be src2).  A compiler that swapped them would change which NaN
 * wins when A and B both hold one; tests/tnative_kernels.c would see it
 * on a machine with AVX512-BF16.
 */
#include <immintrin.h>

#include "native/native_internal.h"

#define DP_GEMM fpl__native_dpbf16_gemm
#define DP_LINKAGE
#define DP_ACC __m512
#define DP_PAIRS __m512bh
#define DP_ZEROC() _mm512_setzero_ps()
#define DP_LOADC(p) _mm512_loadu_ps(p)
#define DP_STOREC(p, v) _mm512_storeu_ps((p), (v))
#define DP_LOADB(p) ((__m512bh)_mm512_load_si512((const void *)(p)))
#define DP_BCAST(p) ((__m512bh)_mm512_set1_epi32((int)*(p)))
#define DP_STEP(c, a, b) ((c) = _mm512_dpbf16_ps((c), (a), (b)))
#define DP_ENV_ENTER()                    \
	const unsigned dp_csr = _mm_getcsr(); \
	_mm_setcsr(0x1f80)
#define DP_ENV_LEAVE() _mm_setcsr(dp_csr)
/* one thread below 6.4e7 (400^3): two spawns (pack, compute) of 15-60 us
 * each cost more than half the work saves (Zen 5, 1 vs 2 threads) */
#define DP_MIN_WORK 6.4e7

#include "native/gemm_dpbf16_body.h"

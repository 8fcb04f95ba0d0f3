/* SPDX-License-Identifier: MIT */
/*
 * x86/cvt_avx512bf16.c - binary32 to bf16 with AVX512-BF16's
 * VCVTNEPS2BF16, sixteen lanes at a time, the last partial vector under a
 * lane mask (masked load and store: no byte outside x[0..n) or out[0..n)
 * is touched).
 *
 * What the instruction computes (Intel SDM vol. 2, VCVTNEPS2BF16; and
 * DESIGN.md §5, measured identical on all 2^32 inputs on Zen 5 and
 * Granite Rapids): round to nearest even, always; a zero or fp32
 * denormal input gives the zero of its sign (denormals are read as
 * zero); an infinity keeps its top 16 bits; a NaN keeps its sign and top
 * 16 bits with the quiet bit (bf16 bit 6) forced; a finite normal x
 * gives the top half of x + 0x7fff + bit 16 of x, an integer add that
 * carries into the exponent on overflow (so overflow gives inf).  MXCSR
 * is neither read nor written and no exception is raised, so the
 * caller's MXCSR does not matter and nothing needs restoring.
 *
 * Its emulated twin is fplab's bf16 with subnormal = ftz and tininess =
 * before (exactly the inputs below 2^-126 are tiny and become +-0), in
 * mode ne, through fpl_round_array_f32 (tests/tnative.c argues it;
 * tests/tnative_kernels.c checks this kernel against it).  Only ne
 * exists: other modes are FPL_EUNSUPPORTED.
 */
#include <immintrin.h>

#include <fplab/error.h>

#include "native/native_internal.h"

int fpl__native_bf16_round(fpl_rnd rnd, const float *x, size_t n, uint16_t *out)
{
	size_t i = 0;

	if (rnd != FPL_RND_NE)
		return FPL_EUNSUPPORTED;
	for (; i + 16 <= n; i += 16) {
		const __m256bh h = _mm512_cvtneps_pbh(_mm512_loadu_ps(x + i));
		_mm256_storeu_si256((__m256i *)(void *)(out + i), (__m256i)h);
	}
	if (i < n) {	/* 1..15 lanes: masked, so nothing beyond n is read or written */
		const __mmask16 k = (__mmask16)((1u << (n - i)) - 1u);
		const __m256bh h = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(k, x + i));
		_mm256_mask_storeu_epi16(out + i, k, (__m256i)h);
	}
	return 0;
}

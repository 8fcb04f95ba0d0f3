/* SPDX-License-Identifier: MIT */
/*
 * x86/cvt_f16c.c - binary32 to fp16 with F16C's VCVTPS2PH, eight lanes
 * at a time, the rounding in the immediate (imm8 bit 2 clear: MXCSR.RC
 * is not read): 0 nearest-even, 1 toward -inf, 2 toward +inf, 3 toward
 * zero.  Tiny results are fp16 subnormals (MXCSR.FTZ does not apply), and
 * a NaN keeps its sign and top fraction bits with the quiet bit set:
 * exactly fplab's fp16 (tests/tnative.c states and checks why).  The
 * exception flags the instruction raises in MXCSR are discarded: MXCSR is
 * saved and put back.
 */
#include <immintrin.h>
#include <string.h>

#include <fplab/error.h>

#include "native/native_internal.h"

#define CVT_LOOP(IMM)                                                                   \
	do {                                                                            \
		for (; i + 8 <= n; i += 8)                                              \
			_mm_storeu_si128((__m128i *)(out + i),                          \
					 _mm256_cvtps_ph(_mm256_loadu_ps(x + i), (IMM))); \
		if (i < n) {                                                    \
			float t[8] = { 0 };                                     \
			uint16_t h[8];                                          \
			memcpy(t, x + i, (n - i) * sizeof *t);                  \
			_mm_storeu_si128((__m128i *)h,                          \
					 _mm256_cvtps_ph(_mm256_loadu_ps(t), (IMM)));     \
			memcpy(out + i, h, (n - i) * sizeof *h);                \
		}                                                               \
	} while (0)

int fpl__native_f16c_round(fpl_rnd rnd, const float *x, size_t n, uint16_t *out)
{
	const unsigned csr = _mm_getcsr();
	size_t i = 0;

	switch (rnd) {
	case FPL_RND_NE:
		CVT_LOOP(0);
		break;
	case FPL_RND_TN:
		CVT_LOOP(1);
		break;
	case FPL_RND_TP:
		CVT_LOOP(2);
		break;
	case FPL_RND_TZ:
		CVT_LOOP(3);
		break;
	default:
		return FPL_EUNSUPPORTED;
	}
	_mm_setcsr(csr);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* x86/round_avx512.c - kernel_body.h compiled with AVX-512F/DQ/BW/VL and
 * FMA (Makefile: X86_AVX512_FLAGS; only the x86/ files get them), plus a
 * streaming block store and the direct rounding of round_direct.c.
 * kernels.c selects it only after CPUID and XGETBV confirm the features. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

/* Non-temporal copy: peel to a 64-byte boundary, stream whole cache
 * lines, copy the tail; the sfence orders the streamed stores before any
 * later store of this thread (and before the join that publishes them). */
static void avx512_store_stream(double *dst, const double *src, size_t n)
{
	size_t j = 0;

	while (j < n && ((uintptr_t)(dst + j) & 63))
		dst[j] = src[j], j++;
	for (; j + 8 <= n; j += 8)
		_mm512_stream_pd(dst + j, _mm512_loadu_pd(src + j));
	memcpy(dst + j, src + j, (n - j) * sizeof *src);
	_mm_sfence();
}

#define KERNEL_SET fpl__kernels_avx512
#define KERNEL_NAME "avx512"
#define KERNEL_HAVE_FMA 1
#define KERNEL_STORE_STREAM avx512_store_stream
#define KERNEL_ROUND_DIRECT fpl__round_direct_avx512
#include "kernels/kernel_body.h"

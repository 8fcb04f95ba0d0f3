/* SPDX-License-Identifier: MIT */
/* x86/round_avx2.c - kernel_body.h compiled with AVX2 and FMA only
 * (Makefile: X86_AVX2_FLAGS), for x86-64 CPUs without AVX-512: the block
 * loops vectorize four binary64 lanes wide and the products use the
 * hardware fma instead of Dekker's; plain rounding goes through the
 * direct kernel of x86/round_direct_avx2.c.  kernels.c selects it only after
 * CPUID and XGETBV confirm AVX2, FMA and the OS's YMM state. */
#define KERNEL_SET fpl__kernels_avx2
#define KERNEL_NAME "avx2"
#define KERNEL_HAVE_FMA 1
#define KERNEL_ROUND_DIRECT fpl__round_direct_avx2
#include "kernels/kernel_body.h"

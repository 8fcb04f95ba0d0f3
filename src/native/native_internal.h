/* SPDX-License-Identifier: MIT */
/*
 * native/native_internal.h - the native kernel registry's entries and the
 * kernels' entry points.  native.c holds the table; each kernel lives in
 * its own file under native/x86/, compiled with its ISA flags only (see
 * the Makefile's NATIVE_ISA), and is called only after its usable() said
 * yes.
 */
#ifndef FPL_NATIVE_INTERNAL_H
#define FPL_NATIVE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/native.h>

typedef int (*fpl__native_gemm_fn)(int beta, size_t m, size_t n, size_t kk, const float *a,
				   const float *b, float *c, int threads);
typedef int (*fpl__native_round_fn)(fpl_rnd rnd, const float *x, size_t n, uint16_t *out);
typedef int (*fpl__native_arith_fn)(fpl_native_arith_op op, fpl_rnd rnd, const uint16_t *a,
				    const uint16_t *b, const uint16_t *c, size_t n,
				    uint16_t *out);

typedef struct fpl__native_impl {
	fpl_native_kernel pub;
	int (*usable)(const char **why);	/* CPU and OS checks; may request AMX */
	fpl__native_gemm_fn gemm;		/* FPL_NATIVE_GEMM */
	fpl__native_round_fn round;		/* FPL_NATIVE_ROUND */
	fpl__native_arith_fn arith;		/* FPL_NATIVE_ARITH */
} fpl__native_impl;

/* x86/cvt_f16c.c: VCVTPS2PH, modes ne tn tp tz. */
int fpl__native_f16c_round(fpl_rnd rnd, const float *x, size_t n, uint16_t *out);

/* x86/gemm_fma32.c: the binary32 fma GEMM (profile fp32-fma). */
int fpl__native_fma32_gemm(int beta, size_t m, size_t n, size_t kk, const float *a,
			   const float *b, float *c, int threads);

/* x86/gemm_fma32_avx512.c: the same GEMM on AVX-512 (profile fp32-fma,
 * the same bits as fpl__native_fma32_gemm). */
int fpl__native_fma32_avx512_gemm(int beta, size_t m, size_t n, size_t kk, const float *a,
				  const float *b, float *c, int threads);

/* native.c: fpl__native_fma32_avx512_gemm where this CPU has AVX512F and
 * the kernel set allows AVX-512, else fpl__native_fma32_gemm (which needs
 * avx2+fma, checked by the caller): the same bits either way. */
int fpl__native_fma32_gemm_best(int beta, size_t m, size_t n, size_t kk, const float *a,
				const float *b, float *c, int threads);

/* x86/cvt_avx512bf16.c: VCVTNEPS2BF16, mode ne. */
int fpl__native_bf16_round(fpl_rnd rnd, const float *x, size_t n, uint16_t *out);

/* x86/gemm_avx512bf16.c: VDPBF16PS GEMM (profile avx512bf16). */
int fpl__native_dpbf16_gemm(int beta, size_t m, size_t n, size_t kk, const float *a,
			    const float *b, float *c, int threads);

/* x86/gemm_amx.c: TDPBF16PS GEMM (profile amx-bf16). */
int fpl__native_amx_gemm(int beta, size_t m, size_t n, size_t kk, const float *a,
			 const float *b, float *c, int threads);

/* x86/gemm_avx512fp16.c: VFMADD231PH GEMM (profile fp16-fma); the
 * inputs (and C when beta = 1) are fp16 values, checked by the caller. */
int fpl__native_ph_gemm(int beta, size_t m, size_t n, size_t kk, const float *a,
			const float *b, float *c, int threads);

/* x86/arith_avx512fp16.c: VADDPH, VMULPH, VFMADD*PH with embedded
 * rounding, modes ne tn tp tz; arguments checked by the caller. */
int fpl__native_ph_arith(fpl_native_arith_op op, fpl_rnd rnd, const uint16_t *a,
			 const uint16_t *b, const uint16_t *c, size_t n, uint16_t *out);

/* native.c: 1 when every element of x[0..n) is a binary16 value held in
 * a float (native/f16_bits.h), else 0. */
int fpl__native_all_f16(const float *x, size_t n);

/* native.c: 1 when every element of x[0..n) has its low 16 bits zero (a
 * bf16 value held in a float), else 0. */
int fpl__native_all_bf16(const float *x, size_t n);

#endif

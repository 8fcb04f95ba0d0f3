/* SPDX-License-Identifier: MIT */
/*
 * fplab/native.h - this CPU's own arithmetic, beside the emulation that
 * reproduces it.
 *
 * A native kernel computes with the CPU's instructions (F16C's VCVTPS2PH,
 * FMA3's VFMADD231PS, AVX512-BF16's VCVTNEPS2BF16 and VDPBF16PS, AMX's
 * TDPBF16PS, AVX512-FP16's VADDPH, VMULPH and VFMADD*PH).  Each one names
 * its emulated twin: for a GEMM, the accumulation profile (fplab/accum.h,
 * fpl_accum_profile) whose model gives the same bits on every input; for
 * a conversion, the format and modes fpl_round_array_f32 reproduces; for
 * element-wise arithmetic, the format whose fpl_add, fpl_mul and fpl_fma
 * (fplab/ops.h) in the same mode give the same encodings.  The kernels live in a registry,
 * one entry per (operation, profile), each with the CPU features it needs;
 * an entry this build or this CPU cannot run says why, and calling it is
 * FPL_EUNSUPPORTED, never a silent fallback to the emulation.
 *
 * Only the translation units under src/native/x86/ get ISA flags; the
 * registry and the checks run on any CPU.  AMX tile data is requested
 * from the kernel (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)
 * the first time an AMX kernel's usability is asked.
 *
 * Thread safety: all functions may be called from any thread.
 */
#ifndef FPLAB_NATIVE_H
#define FPLAB_NATIVE_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/export.h>
#include <fplab/format.h>
#include <fplab/state.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fpl_native_op {
	FPL_NATIVE_GEMM = 0,	/* C = A.B or A.B + C, results held in binary32 */
	FPL_NATIVE_ROUND,	/* binary32 array -> 16-bit encodings */
	FPL_NATIVE_ARITH	/* element-wise add, mul, fma on 16-bit encodings */
} fpl_native_op;

/* The operations of an FPL_NATIVE_ARITH kernel. */
typedef enum fpl_native_arith_op {
	FPL_NATIVE_ADD = 0,	/* out = a + b */
	FPL_NATIVE_MUL,		/* out = a * b */
	FPL_NATIVE_FMA		/* out = a * b + c, rounded once */
} fpl_native_arith_op;

typedef struct fpl_native_kernel {
	const char *name;	/* "fma32-avx512", "fma32", "f16c", "avx512bf16-cvt", "avx512bf16", "amx-bf16",
				   "avx512fp16", "avx512fp16-arith" */
	fpl_native_op op;
	const char *profile;	/* GEMM: the accumulation profile it equals ("fp32-fma",
				   "avx512bf16", "amx-bf16", "fp16-fma"); ROUND and ARITH:
				   the format ("fp16", "bf16") */
	const char *modes;	/* ROUND, ARITH: the modes it has, "ne tn tp tz"; GEMM: NULL */
	const char *needs;	/* the CPU features it needs, e.g. "avx512_bf16" */
	const char *blocking;	/* one line: how the kernel orders its additions */
} fpl_native_kernel;

/* Every kernel compiled into this build, usable or not, in a fixed order;
 * *count receives their number. */
FPL_API const fpl_native_kernel *fpl_native_kernels(size_t *count);

/* The kernel for (op, profile) - profile a GEMM profile name or, for
 * ROUND and ARITH, a format name - the first one usable here when several
 * are compiled in (fma32-avx512 before fma32), else the first of them (its
 * fpl_native_usable says why not), or NULL when none is compiled in. */
FPL_API const fpl_native_kernel *fpl_native_find(fpl_native_op op, const char *profile);

/*
 * 1 when this build has the kernel and this CPU and OS can run it (CPUID,
 * XGETBV, and for AMX the tile-data permission) and the kernel set in use
 * allows it (fplab/kernels.h: under FPLAB_KERNELS=ref no native kernel
 * runs, under avx2 none that needs AVX-512); else 0, and *why (when
 * why is not NULL) receives a static line naming what is missing, e.g.
 * "this CPU lacks avx512_bf16".  On 1, *why is "" .
 */
FPL_API int fpl_native_usable(const fpl_native_kernel *k, const char **why);

/*
 * GEMM on the kernel's hardware, row-major and contiguous:
 *   C[i*n + j] = sum over kk of A[i*kk + k] * B[k*n + j]
 * from +0 (beta = 0) or from C[i*n + j] (beta = 1), each output exactly as
 * the kernel's profile computes it (fpl_accum_gemm with that profile, a
 * and b given, gives the same bits, NaN payloads included, where the
 * kernel's entry in fplab-native(7) says so).  A and B hold values of
 * the profile's input format (for bf16 profiles, floats whose low 16 bits
 * are zero; for fp16-fma, floats that are binary16 values, NaNs with
 * their low 13 fraction bits zero): anything else is FPL_ERANGE, nothing
 * written.  For fp16-fma, C (read when beta = 1) must hold binary16
 * values too, and every result is one, held in a float.  threads >= 1
 * splits the rows; the bits do not depend on it.  The MXCSR of the calling
 * thread is not read (the kernels set what they need and restore it).
 * Returns 0, FPL_EINVAL (NULL, op not GEMM), FPL_EUNSUPPORTED (not usable
 * here), FPL_ERANGE or FPL_ENOMEM.
 */
FPL_API int fpl_native_gemm(const fpl_native_kernel *k, int beta, size_t m, size_t n, size_t kk,
			    const float *a, const float *b, float *c, int threads);

/*
 * Conversion on the kernel's hardware: out[i] = the encoding, in the
 * kernel's format, of x[i] rounded in mode rnd (one of the kernel's
 * modes; others are FPL_EUNSUPPORTED).  Returns 0, FPL_EINVAL (op not
 * ROUND) or FPL_EUNSUPPORTED.
 */
FPL_API int fpl_native_round_f32(const fpl_native_kernel *k, fpl_rnd rnd, const float *x,
				 size_t n, uint16_t *out);

/*
 * Element-wise arithmetic on the kernel's hardware, on encodings of its
 * format (for "fp16": IEEE binary16 codes, subnormals, infinities and NaN
 * payloads as they are), for i < n:
 *   FPL_NATIVE_ADD  out[i] = a[i] + b[i]
 *   FPL_NATIVE_MUL  out[i] = a[i] * b[i]
 *   FPL_NATIVE_FMA  out[i] = a[i] * b[i] + c[i], one rounding
 * each exact result rounded once in mode rnd (one of the kernel's modes;
 * others are FPL_EUNSUPPORTED), exactly as fpl_add, fpl_mul and fpl_fma
 * in the format and mode compute it (no DAZ or FTZ, tininess after
 * rounding, the x86 NaN rule: the first NaN of a, b, c quieted, the
 * default NaN for an invalid operation; fplab-native(7) says where this
 * is documented and where measured).  No exception flags are returned;
 * MXCSR is neither read nor changed.  c is read only for FPL_NATIVE_FMA
 * (it may be NULL otherwise).  out may be the same array as a, b or c,
 * but must not overlap one partially.  Returns 0, FPL_EINVAL (NULL
 * arrays with n > 0, op not ARITH, an unknown operation) or
 * FPL_EUNSUPPORTED (not usable here, or a mode the kernel lacks).
 */
FPL_API int fpl_native_arith_f16(const fpl_native_kernel *k, fpl_native_arith_op op,
				 fpl_rnd rnd, const uint16_t *a, const uint16_t *b,
				 const uint16_t *c, size_t n, uint16_t *out);

#ifdef __cplusplus
}
#endif
#endif

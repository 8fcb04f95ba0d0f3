/* SPDX-License-Identifier: MIT */
/*
 * fplab/native.h - this CPU's own arithmetic, beside the emulation that
 * reproduces it.
 *
 * A native kernel computes with the CPU's instructions (F16C's VCVTPS2PH,
 * FMA3's VFMADD231PS, AVX512-BF16's VCVTNEPS2BF16 and VDPBF16PS, AMX's
 * TDPBF16PS).  Each one names its emulated twin: for a GEMM, the
 * accumulation profile (fplab/accum.h, fpl_accum_profile) whose model
 * gives the same bits on every input; for a conversion, the format and
 * modes fpl_round_array_f32 reproduces.  The kernels live in a registry,
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
	FPL_NATIVE_GEMM = 0,	/* C = A.B or A.B + C, binary32 results */
	FPL_NATIVE_ROUND	/* binary32 array -> 16-bit encodings */
} fpl_native_op;

typedef struct fpl_native_kernel {
	const char *name;	/* "fma32", "f16c", "avx512bf16-cvt", "avx512bf16", "amx-bf16" */
	fpl_native_op op;
	const char *profile;	/* GEMM: the accumulation profile it equals ("fp32-fma",
				   "avx512bf16", "amx-bf16"); ROUND: the format ("fp16", "bf16") */
	const char *modes;	/* ROUND: the modes it has, "ne tn tp tz"; GEMM: NULL */
	const char *needs;	/* the CPU features it needs, e.g. "avx512_bf16" */
	const char *blocking;	/* one line: how the kernel orders its additions */
} fpl_native_kernel;

/* Every kernel compiled into this build, usable or not, in a fixed order;
 * *count receives their number. */
FPL_API const fpl_native_kernel *fpl_native_kernels(size_t *count);

/* The kernel for (op, profile) - profile a GEMM profile name or, for
 * ROUND, a format name - or NULL when none is compiled in. */
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
 * are zero): anything else is FPL_ERANGE, nothing written.  threads >= 1
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
 * modes; others are FPL_EUNSUPPORTED).  Returns 0, FPL_EINVAL or
 * FPL_EUNSUPPORTED.
 */
FPL_API int fpl_native_round_f32(const fpl_native_kernel *k, fpl_rnd rnd, const float *x,
				 size_t n, uint16_t *out);

#ifdef __cplusplus
}
#endif
#endif

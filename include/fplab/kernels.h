/* SPDX-License-Identifier: MIT */
/*
 * fplab/kernels.h - CPU features and kernel sets.
 *
 * Array operations run through a table of kernels filled with the portable
 * reference kernels first and then overridden by the best set the CPU and
 * OS support (CPUID and XGETBV are both checked).  The environment variable
 * FPLAB_KERNELS=ref|avx512 forces a set; an unknown or unavailable one is an
 * error reported by fpl_kernels_status(), never a silent fallback.
 */
#ifndef FPLAB_KERNELS_H
#define FPLAB_KERNELS_H

#include <fplab/export.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fpl_cpu_features {
	int avx2, fma;			/* CPUID and OS support (YMM state) */
	int avx512f, avx512dq, avx512bw, avx512vl;	/* and ZMM/opmask state */
	int avx512_bf16, avx512_fp16;
	int amx_tile, amx_bf16;		/* CPUID only; tile data needs a permission request */
} fpl_cpu_features;

/* Detect the features of this CPU (cached after the first call). */
FPL_API const fpl_cpu_features *fpl_cpu(void);

/* Space-separated names of the kernel sets compiled in, e.g. "ref avx512". */
FPL_API const char *fpl_kernels_compiled(void);

/* Name of the kernel set in use ("ref", "avx512"). */
FPL_API const char *fpl_kernels_selected(void);

/* Why that set was chosen, one line, e.g. "avx512: cpu has avx512f/dq/bw/vl". */
FPL_API const char *fpl_kernels_reason(void);

/* 0, or the error from FPLAB_KERNELS (FPL_ENOTFOUND, FPL_EUNSUPPORTED);
 * array operations then fail with that status. */
FPL_API int fpl_kernels_status(void);

/* Force a kernel set by name; returns 0, FPL_ENOTFOUND or FPL_EUNSUPPORTED. */
FPL_API int fpl_kernels_select(const char *name);

#ifdef __cplusplus
}
#endif
#endif

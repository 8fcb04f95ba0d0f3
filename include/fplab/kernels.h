/* SPDX-License-Identifier: MIT */
/*
 * fplab/kernels.h - CPU features and kernel sets.
 *
 * Array operations run through a table of kernels filled with the portable
 * reference kernels first and then overridden by the best set the CPU and
 * OS support (CPUID and XGETBV are both checked).  The environment variable
 * FPLAB_KERNELS=ref|avx512 forces a set; an unknown or unavailable one is an
 * error reported by fpl_kernels_status(), never a silent fallback.
 *
 * Thread safety: every function here may be called from any thread, also
 * while other threads run array operations.  Detection and the first
 * selection happen once, on first use; fpl_kernels_select() replaces the
 * whole selection (set, status and reason) at once, and an array call
 * already running finishes with the set it started with.  The kernel sets
 * give the same bits, so a switch changes speed, never results.
 */
#ifndef FPLAB_KERNELS_H
#define FPLAB_KERNELS_H

#include <fplab/export.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fpl_cpu_features {
	int avx2, fma, f16c;		/* CPUID and OS support (YMM state) */
	int avx512f, avx512dq, avx512bw, avx512vl;	/* and ZMM/opmask state */
	int avx512_bf16, avx512_fp16;
	int amx_tile, amx_bf16;		/* CPUID only; tile data needs a permission request */
} fpl_cpu_features;

/* Detect the features of this CPU (once; the struct is read-only and
 * lives as long as the program). */
FPL_API const fpl_cpu_features *fpl_cpu(void);

/* Space-separated names of the kernel sets compiled in, e.g. "ref avx512". */
FPL_API const char *fpl_kernels_compiled(void);

/* Name of the kernel set in use ("ref", "avx512"). */
FPL_API const char *fpl_kernels_selected(void);

/* Why that set was chosen, one line, e.g. "avx512: forced".  The string
 * stays valid (unchanged) after a later fpl_kernels_select(). */
FPL_API const char *fpl_kernels_reason(void);

/* 0, or the error from FPLAB_KERNELS (FPL_ENOTFOUND, FPL_EUNSUPPORTED);
 * array operations then fail with that status. */
FPL_API int fpl_kernels_status(void);

/* Force a kernel set by name ("ref", "avx512"); returns 0 (and clears an
 * FPLAB_KERNELS error), or FPL_ENOTFOUND for an unknown name,
 * FPL_EUNSUPPORTED for a set this build or CPU cannot run, FPL_EINVAL for
 * NULL, leaving the selection unchanged. */
FPL_API int fpl_kernels_select(const char *name);

#ifdef __cplusplus
}
#endif
#endif

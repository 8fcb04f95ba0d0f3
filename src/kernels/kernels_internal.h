/* SPDX-License-Identifier: MIT */
/*
 * kernels/kernels_internal.h - the kernel table behind the array API.
 *
 * A kernel set is a table of block functions.  Each handles the common
 * case of a block of elements branch-free (so the compiler vectorizes it)
 * and marks in spc[] the lanes it cannot do exactly -- specials, tiny or
 * overflowing results, operands outside a safe window -- which the array
 * driver then recomputes with the scalar engine.  The fast path is
 * therefore an optimisation only: every lane's bits are the scalar
 * engine's bits (array.c states the proof obligations).
 */
#ifndef FPLAB_KERNELS_INTERNAL_H
#define FPLAB_KERNELS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/internal.h"

/* Everything a rounding block needs, precomputed once per call. */
typedef struct fpl_kparams {
	fpl_rnd rnd;
	uint64_t s;		/* 52 - m: binary64 fraction bits below the kept ones */
	uint64_t sr_bits;	/* (64-bit fields: 32-bit lanes would stop vectorization) */
	uint64_t zero_special;	/* 1: zero results go to the scalar path (fnuz: no -0) */
	uint64_t sub_fast;	/* 1: gradual underflow, tiny lanes done here */
	uint64_t tiny_before;	/* 1: tininess before rounding */
	uint64_t emin_b;	/* emin + 1023, the biased binary64 exponent of 2^emin */
	uint64_t min_bits;	/* bits of 2^emin */
	uint64_t qsub_bits;	/* bits of 2^(emin-m), the smallest quantum */
	double deep_scale;	/* 2^(R+m-emin): |x|/q in R-bit units, for sp */
	uint64_t deep_ok;	/* 1: deep_scale is representable */
	uint64_t max_bits;	/* bits of max: larger rounded magnitudes are special */
	uint64_t key;		/* random key of (seed, stream) */
	uint64_t lo_bits;	/* operand window for the ops: [lo, hi] or zero */
	uint64_t hi_bits;
	uint64_t ovf_bits[2];	/* an overflow the mode sends to "inf", by sign: */
	uint64_t ovf_sat;	/* +-inf, NaN or (ovf_sat = 1: saturated) +-max */
} fpl_kparams;

/* What a rounding block reports: lanes left to the scalar engine, tiny
 * input lanes, and inexact results and underflows among the other lanes. */
typedef struct fpl_kcounts {
	size_t special, tiny, inexact, underflow;
	size_t overflow, saturated;	/* direct kernels only; 0 otherwise */
} fpl_kcounts;

/* Round n binary64 values x into y (y != x).  Lanes the kernel cannot do
 * get spc[j] != 0 and an unspecified y[j]: bit 0 for the scalar engine,
 * bit 1 for a tiny lane, which the sub = 1 variant (gradual underflow,
 * heavier) resolves when p->sub_fast.  With spc_in, bit 0 of spc[] is
 * read first and stays set.  idx0 is the draw index of x[0].  Counts
 * cover the lanes left with spc[j] = 0. */
typedef void (*fpl_kround)(const fpl_kparams *p, double *y, const double *x, size_t n,
			   uint64_t *spc, int spc_in, int sub, uint64_t idx0, fpl_kcounts *out);

/* Exact-to-odd binary64 intermediates of an operation: t[j] is the exact
 * result rounded to odd at 53 bits, or spc[j] = 1.  Unused operand
 * pointers may be NULL. */
typedef enum fpl_kop { FPL_KOP_ADD, FPL_KOP_SUB, FPL_KOP_MUL, FPL_KOP_DIV, FPL_KOP_SQRT,
		       FPL_KOP_FMA, FPL_KOP_COUNT } fpl_kop;
typedef void (*fpl_kodd)(const fpl_kparams *p, double *t, const double *a, const double *b,
			 const double *c, size_t n, uint64_t *spc);

/* Copy a finished block to its destination.  For large arrays the
 * destination is not read again soon, so a set may use non-temporal
 * stores, which save the read-for-ownership of every written line. */
typedef void (*fpl_kstore)(double *dst, const double *src, size_t n);

/* The scalar engine for element j of a direct call (its input x), which
 * also counts the element's flags; ctx is the caller's. */
typedef double (*fpl_kslow)(void *ctx, size_t j, double x);

/* Round n values x straight into z (z may equal x): binary64 arrays, or
 * with f32 binary32 arrays (for formats whose values all fit binary32),
 * with non-temporal stores when `stream`, ordered by a fence before
 * returning.  A set that has this does the whole common case in
 * registers (no scratch block, no spc array) and calls slow() for the
 * lanes it cannot do, before storing their vector.  idx0 is the draw
 * index of x[0]; counts cover the lanes not given to slow(), overflows
 * included; out->special is their number and out->tiny is not computed. */
typedef void (*fpl_kdirect)(const fpl_kparams *p, void *z, const void *x, int f32, size_t n,
			    uint64_t idx0, int stream, fpl_kslow slow, void *ctx,
			    fpl_kcounts *out);

typedef struct fpl_kernels {
	const char *name;
	fpl_kround round;
	fpl_kodd odd[FPL_KOP_COUNT];
	fpl_kstore store_stream;
	fpl_kdirect round_direct;	/* NULL: round goes through round() */
} fpl_kernels;

extern const fpl_kernels fpl__kernels_ref;
#ifdef FPL_HAVE_X86_KERNELS
extern const fpl_kernels fpl__kernels_avx512;
extern const fpl_kernels fpl__kernels_avx2;
void fpl__round_direct_avx512(const fpl_kparams *p, void *z, const void *x, int f32, size_t n,
			      uint64_t idx0, int stream, fpl_kslow slow, void *ctx,
			      fpl_kcounts *out);
void fpl__round_direct_avx2(const fpl_kparams *p, void *z, const void *x, int f32, size_t n,
			    uint64_t idx0, int stream, fpl_kslow slow, void *ctx,
			    fpl_kcounts *out);
#endif

/* Whether large outputs should be written with non-temporal stores on
 * this CPU (cpu.c; the array driver asks). */
int fpl__cpu_stream_stores(void);

/* The table in use (kernels.c); NULL when FPLAB_KERNELS named a set that
 * cannot be used (see fpl_kernels_status()).  Safe to call from any thread
 * at any time; fpl_kernels_select() may swap the set between two calls, so
 * an array call reads it once and uses that table throughout. */
const fpl_kernels *fpl__kernels(void);
/* The same, with the status that goes with it read from the same selection
 * (fpl__kernels() then fpl_kernels_status() could straddle a swap and
 * report 0 for a NULL table). */
const fpl_kernels *fpl__kernels_get(int *status);

#endif

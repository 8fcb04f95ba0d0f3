/* SPDX-License-Identifier: MIT */
/*
 * accum/x86/chain_ro32_avx2.h - the binary32 tiles of sequential and
 * blocked:B:fp32 jobs in mode ne on AVX2 (x86/chain_ro32_avx2.c, the
 * twin of x86/chain_ro32_avx512.c; chain_fast.c's ro32_ok chooses it
 * with J->simd == 1).
 */
#ifndef FPLAB_ACCUM_CHAIN_RO32_AVX2_H
#define FPLAB_ACCUM_CHAIN_RO32_AVX2_H

#include <stdint.h>

#include "accum/accum_internal.h"

/* The whole tile (J->ro32 set, J->simd == 1: A's, B's and acc's values
 * binary32 values, every product of a value of A's format and one of
 * B's at most 24 significant bits), res[] holding the initial values in
 * and the results out (before the output rounding), flags and counts
 * noted in T, exactly as the reference leaves them: 1, or 0 (nothing
 * touched) when an initial value is not a binary32 value bit for bit.
 * Needs a CPU with AVX2 and FMA.  Reads no control state and changes
 * none (MXCSR in its default nearest-even mode, as everywhere here). */
int fpl__acc_ro32_avx2(fpl__acc_tile *T, double *res);

/* Tiles run by it, and registers whose sum needed the midpoint
 * correction (tests; atomic, never read here). */
extern uint64_t fpl__acc_ro32_avx2_runs, fpl__acc_ro32_avx2_mids;

#endif

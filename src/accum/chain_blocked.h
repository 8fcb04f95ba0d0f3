/* SPDX-License-Identifier: MIT */
/*
 * accum/chain_blocked.h - the truncation chains (chain_blocked.c): the
 * steps of chains that start from +0 (blocked, sequential without C)
 * with exact products into an accumulator in mode tz, each step one
 * binary64 sum truncated to the accumulator's precision by a mask of
 * its bits.  chain_blocked.c proves when that is the reference's fma;
 * chain_fast.c's chain_range hands such a job's ranges here.
 */
#ifndef FPLAB_ACCUM_CHAIN_BLOCKED_H
#define FPLAB_ACCUM_CHAIN_BLOCKED_H

#include <stddef.h>
#include <stdint.h>

#include "accum/accum_internal.h"

/* May the job's chains run here (the model, and the loaded A and B, meet
 * chain_blocked.c's condition)?  0 no; 1 the chains; 2 the chains and
 * the block additions in promo (fpl__acc_tz_promo).  Reads nothing but
 * J. */
int fpl__acc_tz_ok(const fpl__acc_job *J);

/* The chains [k0, k1) of the tile in s[] (step numbers k), as
 * chain_fast.c's step() would leave s, T->fl and T->cnt.  Only for a job
 * with J->tz_trunc set, and s[] as its chains hold it (from +0). */
void fpl__acc_tz_chain(fpl__acc_tile *T, size_t k0, size_t k1, double *s);

/* Blocked (J->tz_trunc == 2): res[jj] = res[jj] + blk[jj] in promo in
 * mode tz, the draw of lane jj idx0 + jj, as chain_fast.c's promo_add
 * would leave res, T->fl and T->cnt. */
void fpl__acc_tz_promo(fpl__acc_tile *T, uint64_t idx0, double *res, const double *blk);
/* Its lanes (chain_blocked_body.h's TZ_PROMO_NAME contract): portable,
 * AVX2, AVX-512 instances of one loop. */
void fpl__acc_tz_promo_lanes_c(const double *res, const double *blk, size_t nj, uint64_t keep,
			       uint64_t minb, uint64_t maxb, uint64_t *y, uint64_t *cls);
void fpl__acc_tz_promo_lanes_avx2(const double *res, const double *blk, size_t nj,
				  uint64_t keep, uint64_t minb, uint64_t maxb, uint64_t *y,
				  uint64_t *cls);
void fpl__acc_tz_promo_lanes_avx512(const double *res, const double *blk, size_t nj,
				    uint64_t keep, uint64_t minb, uint64_t maxb, uint64_t *y,
				    uint64_t *cls);
/* The largest bits of |x[i]| (chain_blocked_body.h's TZ_MAXBITS_NAME):
 * portable, AVX2, AVX-512 instances of one loop. */
uint64_t fpl__acc_tz_maxbits_c(const double *x, size_t n);
uint64_t fpl__acc_tz_maxbits_avx2(const double *x, size_t n);
uint64_t fpl__acc_tz_maxbits_avx512(const double *x, size_t n);
/* Its calls (for tests/taccum_blocked.c; atomic, never read). */
extern uint64_t fpl__acc_tz_promo_runs;

/* Chain ranges run here, by kernel (0 portable, 1 AVX2, 2 AVX-512), for
 * tests/taccum_blocked.c to see that a kernel ran (atomic, never read). */
extern uint64_t fpl__acc_tz_runs[3];

/*
 * The kernels, all with one contract: for k in [k0, k1), s[jj] =
 * bits(s[jj] + arow[k] * b[k*ldb + jj]) & keep for jj < nj (nj <=
 * FPL__ACC_TILE), the steps with arow[k] == 0 skipped when no lane of s
 * holds -0 as the call starts (chain_blocked.c, (6)); when inex is not
 * NULL, inex[jj] += 1 for each step whose mask changed the sum.
 * chain_blocked.c (portable), x86/chain_blocked_avx2.c (the same loop
 * compiled for AVX2) and x86/chain_blocked_avx512.c (intrinsics, the
 * running sums in registers); their sums are exact under the condition,
 * so every kernel gives the same bits.
 */
void fpl__acc_tz_kernel_c(const double *arow, const double *b, size_t ldb, size_t nj,
			  size_t k0, size_t k1, uint64_t keep, double *s, uint64_t *inex);
void fpl__acc_tz_kernel_avx2(const double *arow, const double *b, size_t ldb, size_t nj,
			     size_t k0, size_t k1, uint64_t keep, double *s, uint64_t *inex);
void fpl__acc_tz_kernel_avx512(const double *arow, const double *b, size_t ldb, size_t nj,
			       size_t k0, size_t k1, uint64_t keep, double *s,
			       uint64_t *inex);

#endif

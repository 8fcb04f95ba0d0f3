/* SPDX-License-Identifier: MIT */
/*
 * fplab/accum_error.h - how far a simulated dot product, sum or GEMM is
 * from the exact result, measured by the library itself (fpl_exact, no
 * MPFR at run time).
 *
 * The reference is the exact value of the same computation on the
 * inputs AS LOADED (rounded into the model's input formats, or given):
 * the errors reported are those of the accumulation (products, additions,
 * output rounding), the ones the classical bound gamma_K speaks about.
 * A caller that wants the error against the inputs before loading passes
 * those instead (the CLI's --reference given).
 */
#ifndef FPLAB_ACCUM_ERROR_H
#define FPLAB_ACCUM_ERROR_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/accum.h>
#include <fplab/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The loads fpl_accum_gemm performs for an operation starting at draw
 * c0 = st->counter (accum.h's schedule: A element (i,k) draw c0 + i*K + k,
 * B element (k,j) c0 + M*K + k*N + j, C element (i,j) c0 + M*K + K*N +
 * i*N + j), into dense row-major buffers:
 *   al[i*kk + k] = A[i][k] loaded into mod->a   (m*kk entries),
 *   bl[k*n + j]  = B[k][j] loaded into mod->b   (kk*n entries),
 *   cl[i*n + j]  = C[i][j] loaded into the running-sum format (promo for
 *                  blocked, acc otherwise) with a_load's kind, in acc_rnd,
 * where A, B and C are read from a, b and c as fpl_accum_gemm reads them
 * (lda and transa, ldb and transb, ldc; c NULL: beta = 0, cl untouched).
 * The same bits as the loads inside fpl_accum_gemm, and the same check of
 * given inputs; st is read only (no flags, no counter change), so a
 * caller runs fpl_accum_gemm with the same st afterwards (or before).
 * A dot product is m = n = 1 (a with lda = kk, transa = 0; b with ldb = 1,
 * transb = 0); a sum is m = n = 1 and b = NULL (bl not used; a sum has no
 * B range, so C's draws start at c0 + kk).  b = NULL requires n = 1.  The
 * buffers may not overlap the inputs.  Returns 0, FPL_ERANGE (a given
 * input is not a value of its format; the buffers then hold partial
 * loads), FPL_EINVAL (NULL or too short arguments, or what
 * fpl_accum_check rejects) or FPL_EFORMAT.  m = 0 or n = 0 loads nothing.
 */
FPL_API int fpl_accum_gemm_loads(double *al, double *bl, double *cl, const fpl_accum_model *mod,
				 size_t m, size_t n, size_t kk, const double *a, size_t lda,
				 int transa, const double *b, size_t ldb, int transb,
				 const double *c, size_t ldc, const fpl_state *st);

/*
 * As fpl_accum_gemm_loads, adding the block events of A's load into *sa
 * and B's into *sb (fplab/block.h; either may be NULL; untouched for an
 * operand that is not in a block format).
 */
FPL_API int fpl_accum_gemm_loads_blocks(double *al, double *bl, double *cl,
					const fpl_accum_model *mod, size_t m, size_t n,
					size_t kk, const double *a, size_t lda, int transa,
					const double *b, size_t ldb, int transb, const double *c,
					size_t ldc, const fpl_state *st, fpl_block_stats *sa,
					fpl_block_stats *sb);

/*
 * The unit roundoff u of the model's accumulation: the largest over the
 * roundings a term can see -- the accumulator's (acc_rnd), the product
 * format's when products are rounded (prod_rnd), the promotion format's
 * for blocked (acc_rnd), the output format's when out_set (out_rnd) --
 * of 2^-p for the nearest modes (ne, na, nz) and 2^(1-p) for the others
 * (directed, odd, stochastic: the result is one of the two neighbours).
 * For fused:F:W the alignment counts as one more rounding per group, of
 * unit roundoff (F+1) 2^(1-W) (tz) or (F+1) 2^-W (ne): each of the F+1
 * aligned terms moves by less than one quantum 2^(E-W+1) (half of it in
 * ne), and 2^E <= the largest |term| <= the sum of the |terms|.
 *
 * fpl_accum_bound is the classical gamma_K' = K' u / (1 - K' u) (+inf when
 * K' u >= 1, 0 when K' = 0), K' being the most roundings a term (or C)
 * goes through in a chain of inner length K (Higham, "Accuracy and
 * Stability of Numerical Algorithms", Lemma 3.1 and §3.1, §4.2):
 *   sequential, pairs      K
 *   pairwise:L             min(L, K) + ceil(log2 ceil(K/L)) + 1: a leaf's
 *                          chain starts from +0, so its first term is
 *                          rounded too (an exact product is not a value
 *                          of acc); the tree's depth; then S + T
 *   blocked:B, pairs:B     min(B, K) + ceil(K/B): the block's chain from
 *                          +0, then one promotion per block (pairs: the +0
 *                          pad of an odd K is exact, not counted)
 *   evenodd:B              ceil(min(B, K)/2) + 1 + ceil(K/B): a chain of
 *                          half a block, even + odd, one S + u per block
 *   fused:F                ceil(K/F), twice that with W (the alignment)
 *   block                  1 + ceil(K/B) (+ 1 with a tensor scale): the
 *                          block's inner rounding, one addition per block
 *                          (the scalings are exact but for underflow);
 *                          u includes the inner format's (promo_rnd)
 *   kahan, neumaier        K + 1: their own bound 2u + O(K u^2) (Higham
 *                          (4.8), Neumaier 1974) lies below gamma_{K+1}
 *                          whenever K u is small; not a proof for K u
 *                          near 1, where gamma_{K+1} is huge anyway
 * plus 1 when products are rounded and 1 when the output is rounded;
 * K = 0 gives K' = 0 (+1 for the output).  beta is not an argument, so
 * K' counts C's roundings as if beta = 1 (for pairwise the final S + T,
 * for pairs:B the addition C + block 0), one too many without C; a sum
 * gets the +1 of rounded products too.  fplab-models(7) has the same
 * table (src/accum/bound.c computes it).
 * NaN for a NULL mod.
 */
FPL_API double fpl_accum_unit_roundoff(const fpl_accum_model *mod);
FPL_API double fpl_accum_bound(const fpl_accum_model *mod, size_t k);

/* Errors of a batch of outputs against their exact values.  "e finite"
 * means the exact value has no infinite or NaN term (it may still lie
 * beyond binary64's range); "r finite" that the result is not inf/NaN.
 *
 * The one rule for results that failed: a result r that is NaN or
 * infinite while e is finite has relative and absolute error +inf (it
 * enters max_rel, median_rel, mean_rel and rms_rel as +inf, max_abs and
 * normwise are +inf), so a failed computation never looks accurate.  An
 * output whose e is not finite (a NaN or infinite input, inf * 0) is not
 * compared at all: it enters only the nan and inf counts, when r is one. */
typedef struct fpl_accum_errors {
	uint64_t outputs;	/* outputs compared: m*n */
	uint64_t rel_n;		/* those with e finite, and nonzero or r not finite */
	/* |r - e| / |e| over the rel_n outputs (fpl_exact_relerr: faithful;
	 * +inf for r NaN or infinite): maximum, median (an even count: the
	 * mean of the two middle values, (a + b)/2 in binary64) and mean
	 * (their sum in output order / rel_n); all 0 when rel_n = 0 */
	double max_rel, median_rel, mean_rel;
	double max_abs;		/* max |r - e| over outputs with e finite (or 0) */
	uint64_t became_zero;	/* r = +-0, e finite nonzero */
	uint64_t nonfinite;	/* r inf or NaN while e is finite */
	/*
	 * normwise = ||R - E||_F / || |A||B| + |C| ||_F over the outputs with
	 * e and r finite (0 when the denominator is 0; +inf when nonfinite >
	 * 0): |r - e| correctly
	 * rounded, |A||B| + |C| exact then rounded, the sums of squares in
	 * binary64 (scaled by a power of two against overflow) in output
	 * order, so the ratio is good to about 2^-53 times the output count;
	 * an entry beyond binary64 (rounded to +inf) makes its norm +inf and
	 * the ratio 0, +inf or NaN.  bound = fpl_accum_bound(mod, kk).  The componentwise bound
	 * |R - E| <= bound (|A||B| + |C|) holds for every order here, in
	 * every mode (kahan and neumaier: see fpl_accum_bound), so normwise
	 * <= bound unless an output overflowed or a rounding underflowed
	 * (then the bound says nothing).
	 */
	double normwise, bound;
	/* sqrt(mean of the squared relative errors) over the rel_n outputs
	 * (+inf with one of them infinite; 0 when rel_n = 0), the squares
	 * scaled by a power of two against overflow */
	double rms_rel;
	uint64_t nan;		/* results r that are NaN, whatever e */
	uint64_t inf;		/* results r that are +-inf, whatever e */
	uint64_t compared;	/* outputs with e finite (the others are not compared) */
} fpl_accum_errors;

/*
 * Compare the simulated results r (r[i*ldr + j], i < m, j < n) with the
 * exact values of C = A.B (+ C) over the given a, b, c (c NULL: beta 0;
 * layouts as fpl_accum_gemm, C[i][j] = c[i*ldc + j]; b NULL: n must be 1,
 * output i is the sum of row i of A, plus C[i][0]).  exact, when not
 * NULL, receives the exact values rounded to nearest binary64 (index
 * i*n + j; overflow gives +-inf, a NaN or inf*0 term the default NaN).
 * mod is used for the bound only.  Every exact value is an fpl_exact;
 * relative errors come from fpl_exact_relerr (so 1e-17 errors of an fp64
 * accumulator are measured, not lost).  Work is split by rows over
 * `threads` threads (< 1: one); the result does not depend on it.
 * Returns 0, FPL_EINVAL (NULL or too short arguments, a model
 * fpl_accum_check rejects) or FPL_ENOMEM; *err is written only on
 * success.
 */
FPL_API int fpl_accum_errors_gemm(fpl_accum_errors *err, double *exact, const double *r,
				  size_t ldr, const fpl_accum_model *mod, size_t m, size_t n,
				  size_t kk, const double *a, size_t lda, int transa,
				  const double *b, size_t ldb, int transb, const double *c,
				  size_t ldc, int threads);

/*
 * As fpl_accum_errors_gemm, and, when progress is not NULL, *progress is
 * increased by n*(kk+1) (the terms of a row of outputs) as each row is
 * done, with an atomic relaxed addition (__atomic_fetch_add), so another
 * thread may read it (__atomic_load_n) to show how far the comparison is;
 * m*n*(kk+1) is added in all when it succeeds.
 */
FPL_API int fpl_accum_errors_gemm_progress(fpl_accum_errors *err, double *exact,
					   const double *r, size_t ldr,
					   const fpl_accum_model *mod, size_t m, size_t n,
					   size_t kk, const double *a, size_t lda, int transa,
					   const double *b, size_t ldb, int transb,
					   const double *c, size_t ldc, int threads,
					   uint64_t *progress);

#ifdef __cplusplus
}
#endif
#endif

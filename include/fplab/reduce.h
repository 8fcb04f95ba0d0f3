/* SPDX-License-Identifier: MIT */
/*
 * fplab/reduce.h - reductions of a vector under an accumulation model:
 * sum, mean, variance (two-pass and Welford), 2-norm, softmax and
 * log-sum-exp, with a reference correctly rounded to binary64 or better
 * computed by the library itself (no MPFR).
 *
 * Semantics.  The n inputs are loaded into the model's A format (as
 * fpl_accum_sum loads them: a_load, a_rnd; FPL_LOAD_GIVEN checks them).
 * Every sum of n terms (sum, the sums inside mean, var, norm2, softmax
 * and logsumexp) runs through the model's order and accumulator exactly
 * as fpl_accum_sum runs it (sums of squares as fpl_accum_dot(t, t) runs
 * it, with the model's products), from +0, without its output rounding;
 * its result is in acc (in promo for blocked).  Every other operation
 * (the division by n, x - mean, squares, sqrt, x - max, exp, log, the
 * division of softmax) is ONE rounding into the accumulator format in
 * acc_rnd, with acc's DAZ on its operands (n and k are exact binary64
 * integers); exp and log are correctly rounded into the format (the
 * exact function value rounded once, in every mode, stochastic ones
 * included).  The result is then rounded into the output format when
 * the model sets one (out_set; fpl_round, no DAZ).  Each op below states
 * its steps; every rounding has a fixed draw index (Draws), so the bits
 * never depend on threads.
 *   sum        S = sum_k x_k; bit for bit fpl_accum_sum (draws included)
 *   mean       S / n
 *   var        two-pass: m = S / n; d_k = x_k - m; Q = sum_k d_k*d_k under
 *              the model (products d_k*d_k as the model's products, exact
 *              or rounded into prod); Q / n (population variance), Q /
 *              (n - 1) with FPL_REDUCE_SAMPLE
 *   var_welford  Welford's update (Welford 1962, as Knuth TAOCP 4.2.2),
 *              from m = +0, s = +0, for k = 1..n: delta = x_k - m;
 *              q = delta / k; m = m + q; e = x_k - m; s = s + delta*e,
 *              the last as the model adds a product (exact: one fma;
 *              rounded: delta*e into prod, then the add); then s / n or
 *              s / (n - 1).  (Step 1 gives m = x_1 and s = +0 when x_1 is
 *              a value of acc: Welford's m_1 = x_1, s_1 = 0.)  The model's
 *              order is not used: Welford is its own sequential order.
 *   norm2      sqrt(sum_k x_k*x_k), the sum of squares under the model
 *              (the model's products)
 *   logsumexp  M = max_k x_k, exact (no rounding, no draw; IEEE maximum,
 *              the first NaN when there is one), replaced by 0 when it is
 *              infinite (as PyTorch's logsumexp does, so that all -inf
 *              gives -inf and a +inf gives +inf); d_k = x_k - M;
 *              e_k = exp(d_k); S = sum_k e_k; L = log(S); result M + L
 *   softmax    M, d_k, e_k, S as for logsumexp; y_k = e_k / S (n outputs;
 *              an all -inf input gives 0/0, NaN with invalid; +inf inputs
 *              give inf/inf = NaN at their place)
 * exp and log of specials: exp(+inf) = +inf, exp(-inf) = +0, log(+-0) =
 * -inf with divide-by-zero, log of a negative number is invalid (the
 * default NaN), log(+inf) = +inf; an infinite result in a format without
 * infinities becomes NaN or max as fpl_div's x/0 does; NaNs propagate.
 * Degenerate sizes: n = 0: sum +0 (rounded into out when set), norm2 +0
 * likewise, mean, var, var_welford and logsumexp NaN, softmax no output;
 * n = 1 with FPL_REDUCE_SAMPLE: var and var_welford NaN.  These NaNs are
 * the default NaN of the out format (acc when out is not set), with no
 * flag raised; the loads still happen.
 *
 * Draws.  With c0 = st->counter on entry, n terms, S1 =
 * fpl_accum_steps(mod, n, 1) (a value sum) and S2 = fpl_accum_steps(mod,
 * n, 0) (a sum of products), draws are laid out from c0 in this order;
 * "a sum at b" is a sum whose step s (accum.h's schedule with M = N = 1)
 * uses draw b + s, s < S1 or S2, its last step (the output rounding of
 * fpl_accum_sum) being unused except for `sum`:
 *   every op   load of x_k at c0 + k; c0 + n reserved (fpl_accum_sum's
 *              initial value); B = c0 + n + 1
 *   sum        the sum at B, its output rounding at B + S1 - 1;
 *              draws n + 1 + S1 (as fpl_accum_sum)
 *   mean       the sum at B; S/n at B + S1; output at B + S1 + 1;
 *              draws n + 1 + S1 + 2
 *   var        the sum at B; m at B + S1; d_k at B + S1 + 1 + k; the sum
 *              of squares at B2 = B + S1 + 1 + n; Q/n at B2 + S2; output
 *              at B2 + S2 + 1; draws 2n + 2 + S1 + S2 + 2
 *   var_welford  step k (1..n) at W = B + 6(k-1): delta W, q W+1, m W+2,
 *              e W+3, the rounded product W+4 (unused when exact), s W+5;
 *              s/n at B + 6n; output at B + 6n + 1; draws 7n + 3
 *   norm2      the sum of squares at B; sqrt at B + S2; output at
 *              B + S2 + 1; draws n + 1 + S2 + 2
 *   logsumexp  d_k at B + k; e_k at B + n + k; the sum at B + 2n; with
 *              B3 = B + 2n + S1: L at B3, M + L at B3 + 1, output at
 *              B3 + 2; draws 3n + 1 + S1 + 3
 *   softmax    d_k, e_k and the sum as logsumexp; y_k at B3 + k; output
 *              k at B3 + n + k; draws 5n + 1 + S1
 * Every range is reserved whether or not it is used (degenerate sizes,
 * unused products, no output format), and st->counter advances by
 * fpl_reduce_draws(op, mod, n) on success.
 *
 * Events.  The flags of every rounding (loads included) are OR-ed into
 * st->flags and counted in st->count, one count per flag per rounding.
 * On error nothing is written and the state is untouched.
 */
#ifndef FPLAB_REDUCE_H
#define FPLAB_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/accum.h>
#include <fplab/export.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fpl_reduce_op {
	FPL_REDUCE_SUM = 0,
	FPL_REDUCE_MEAN,
	FPL_REDUCE_VAR,		/* two-pass */
	FPL_REDUCE_VAR_WELFORD,
	FPL_REDUCE_NORM2,
	FPL_REDUCE_SOFTMAX,
	FPL_REDUCE_LOGSUMEXP,
	FPL_REDUCE_COUNT
} fpl_reduce_op;

#define FPL_REDUCE_SAMPLE 1u	/* var: divide by n - 1 */

/* "sum", "mean", "var", "var-welford", "norm2", "softmax", "logsumexp";
 * "?" for a value out of range. */
FPL_API const char *fpl_reduce_name(fpl_reduce_op op);
/* Parse those names; 0, FPL_ENOTFOUND, or FPL_EINVAL (a NULL argument). */
FPL_API int fpl_reduce_parse(const char *s, fpl_reduce_op *op);
/* Number of outputs: n for softmax, else 1. */
FPL_API size_t fpl_reduce_outputs(fpl_reduce_op op, size_t n);

/*
 * out[0..fpl_reduce_outputs) = op(x[k*incx], k < n) under the model, as
 * the semantics above say; flags and counts into st; draws from
 * st->counter, which then advances by fpl_reduce_draws(op, mod, n).
 * `flags` is 0 or FPL_REDUCE_SAMPLE (var and var_welford only; ignored by
 * the others).  One thread whatever st->threads says.  Returns 0,
 * FPL_EINVAL (a NULL pointer, x NULL with n > 0, an unknown op or flag, a
 * model fpl_accum_check rejects), FPL_EFORMAT (likewise), FPL_ERANGE (an
 * input not in its format under FPL_LOAD_GIVEN, or n > 2^58), FPL_ENOMEM.
 */
FPL_API int fpl_reduce(double *out, fpl_reduce_op op, unsigned flags,
		       const fpl_accum_model *mod, size_t n, const double *x, ptrdiff_t incx,
		       fpl_state *st);
/* The draws fpl_reduce uses (the layout above); 0 for a NULL model or
 * an unknown op. */
FPL_API uint64_t fpl_reduce_draws(fpl_reduce_op op, const fpl_accum_model *mod, size_t n);

/*
 * The reference: op of the real numbers x[k*incx] (the values as given:
 * pass loaded inputs to measure the reduction alone), computed without
 * MPFR, in binary64:
 *  - sum, mean, var, var_welford, norm2: correctly rounded (nearest
 *    even), exactly computed before that one rounding (var: the exact
 *    n sum x^2 - (sum x)^2 over n^2, or n(n-1) with FPL_REDUCE_SAMPLE;
 *    var and var_welford have the same reference);
 *  - softmax: RN(v') with |v' - v| <= 2^-90 |v| + 2^-1200;
 *  - logsumexp: RN(v') with |v' - v| <= 2^-90 log(S) + 2^-1200, S =
 *    sum_k exp(x_k - max): relative 2^-90 when max x_k >= 0, absolute
 *    only when a negative max and log S cancel;
 * (2^-1200 is 2^-125 of binary64's smallest subnormal: dropped terms
 * below 2^-1298.)  reduce_ref.c argues each bound.  Specials: a NaN
 * input gives NaN; sum and mean of infinities as fpl_exact adds them
 * (one kind gives it, both NaN); var of an infinity is NaN; norm2 of an
 * infinity +inf; logsumexp +inf when an x_k is +inf, -inf when all are
 * -inf; softmax NaN at +inf entries and +0 elsewhere when an x_k is +inf,
 * NaN everywhere when all are -inf.  n = 0: sum and norm2 +0, mean, var
 * and logsumexp NaN, softmax nothing; n = 1 with FPL_REDUCE_SAMPLE: NaN.
 * Returns 0, FPL_EINVAL (as fpl_reduce), FPL_ENOMEM (softmax and
 * logsumexp keep two n-element buffers).  Thread-safe.
 */
FPL_API int fpl_reduce_reference(double *out, fpl_reduce_op op, unsigned flags, size_t n,
				 const double *x, ptrdiff_t incx);

#ifdef __cplusplus
}
#endif
#endif

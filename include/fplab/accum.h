/* SPDX-License-Identifier: MIT */
/*
 * fplab/accum.h - accumulation models: how a dot product, a sum or every
 * output of a GEMM is computed (input formats, products, accumulator,
 * order of the additions, output), with named profiles for hardware.
 *
 * Every rounding of an operation has a fixed random-draw index (the
 * schedule below), so results never depend on the thread count, the
 * blocking or the evaluation order, stochastic modes included.
 *
 * ---------------------------------------------------------------- model
 * Terms.  Term k of an output is a_k * b_k: the exact product when
 * prod_exact, else p_k = a_k*b_k rounded once into `prod` in prod_rnd
 * (fpl_mul: prod's DAZ applies to a_k and b_k).  A sum has no products:
 * its term k is the loaded x_k.  "acc + t" below is, for an exact
 * product, fma(a_k, b_k, acc) (one rounding, exact product, acc's DAZ on
 * all three operands, NaN priority a_k, b_k, acc) and for a value term
 * fpl_add(acc, t) (NaN priority acc, t); either way ONE rounding into the
 * accumulator format `acc` in acc_rnd.  Exact products are exact for
 * every binary64 input (fp64 inputs included): no order needs a product
 * as a binary64 value (neumaier compares |s| with |a_k*b_k| exactly).
 *
 * Loads.  A and B elements are loaded into the formats `a` and `b`:
 * a_load = FPL_LOAD_ROUND rounds each element once (fpl_round, mode
 * a_rnd); FPL_LOAD_GIVEN uses the values as given, and the operation
 * fails with FPL_ERANGE (nothing written, state untouched) when one is not
 * a value of its format (a NaN counts as a value of a format with NaNs,
 * an infinity of a format with infinities, a subnormal of a format with
 * subnormals or ftz).  The initial value C (beta = 1) is loaded like A
 * (the same load kind) into the format of the running sum (`promo` for
 * blocked, `acc` otherwise), in acc_rnd when rounded.  beta = 0 starts
 * from +0.  All chains below start from +0 or C, never from a term.
 *
 * Block formats.  With a_block (b_block; fpl_accum_set_block), A (B) is
 * loaded by fpl_block_round(a_blk, ...) over the whole operand, A as an
 * M x K matrix blocked along its last axis, B as K x N blocked along
 * axis 0, so both are cut along K (a dot product: x as 1 x K, y as K x 1;
 * a sum: x as 1 x K): element (i, k) of A takes draw c0 + i*K + k and B's
 * (k, j) c0 + M*K + k*N + j, as the plain loads, and the loaded value is
 * the dequantized e * X (* s).  Its flags and counts are the elements'
 * roundings (block.h); block events go to fpl_accum_gemm_loads_blocks.
 * Every order then runs on the dequantized values: exactly as on any
 * other binary64 inputs, since exact products a_k * b_k are exact (fma)
 * whatever the values, so the only difference from a plain format is
 * what was loaded.  FPL_LOAD_GIVEN is not available for a block operand
 * (FPL_EINVAL).
 *
 * Orders (K terms t_0..t_{K-1}, S = C or +0):
 *  sequential      S = S + t_k for k = 0..K-1.
 *  pairwise:L      leaves of L consecutive terms [jL, jL+L) (the last one
 *                  shorter), each summed sequentially from +0; a range of
 *                  n leaves (n >= 2) splits after ceil(n/2) leaves (so a
 *                  range of n terms splits at L*ceil(ceil(n/L)/2)), the
 *                  two halves are summed recursively and added, left +
 *                  right.  The tree's value T, then S + T (only when beta
 *                  = 1; K = 0 gives T = +0).  Default L = 1: the textbook
 *                  recursive pairwise summation (Higham, §4.2, bound
 *                  gamma_{ceil(log2 K)}); pairwise:128 is numpy-sized.
 *  blocked:B[:FMT] blocks of B terms [jB, jB+B), each summed sequentially
 *                  from +0 in acc; R (in the promotion format `promo`,
 *                  default fp32, mode acc_rnd, starting from S) = R + block
 *                  after each block, in order.
 *  kahan           s = S, c = +0; per term: y = t - c; u = s + y;
 *                  c = (u - s) - y; s = u.  Result s.  (Higham (4.7).)
 *                  Every operation one rounding in acc/acc_rnd; t - c of
 *                  an exact product is fma(a_k, b_k, -c).
 *  neumaier        s = S, c = +0; per term: u = s + t; if |s| >= |t|
 *                  (compared exactly, both read through acc's DAZ; false
 *                  when either is NaN) then
 *                  v = (s - u) + t else v = (t - u) + s; c = c + v; s = u.
 *                  Result s + c.  (Neumaier 1974.)  t - u of an exact
 *                  product is fma(a_k, b_k, -u), (s - u) + t is
 *                  fma(a_k, b_k, s - u).
 *  fused:F[:W[:M]] groups of F terms [jF, jF+F); per group, the running
 *                  sum S and the F terms are added as one multi-term sum
 *                  and rounded once into acc (S = round(S + sum)).
 *                  Operands read through acc's DAZ.  Specials: the first
 *                  NaN among S, a_0, b_0, a_1, b_1, ... (quieted, as
 *                  fma), else the default NaN with invalid for inf*0 or
 *                  +inf and -inf together, else the infinity.  Without W
 *                  the sum is exact.  With W (1..64), every nonzero term
 *                  (S included) is first aligned to E, the largest leading
 *                  exponent (floor(log2|x|)) among the group's nonzero
 *                  terms: it is rounded to a multiple of 2^(E-W+1) (W bits
 *                  from bit E down) in mode M = tz (default) or ne, on
 *                  its magnitude; the aligned terms are then summed
 *                  exactly.  A zero sum follows IEEE's sum rule over the
 *                  F+1 terms: all zeros of one sign give that zero, any
 *                  other zero sum is +0 (-0 in tn).
 *  fused:F:W:M:expsum  the same, E the largest alignment exponent of a
 *                  matrix unit: ea+eb+1 for a product a*b (ea, eb the
 *                  inputs' exponents floor(log2|x|), a subnormal input's
 *                  clamped at its format's emin: the top of the [1,4)
 *                  significand field), eS+1 for S (eS clamped at acc's
 *                  emin); a sum's term x counts as x*1.
 *  fused:.../P[:FMT] blocks of P terms (P a multiple of F) [jP, jP+P),
 *                  each a fused chain from +0 in acc, added in order into
 *                  R in FMT (default fp32) in its mode (default ne),
 *                  R = C, or +0 with the first block added to it (so a -0
 *                  block gives +0): the promotion of fp8 GEMMs.
 *  pairs           VDPBF16PS's chain: k in pairs (2i, 2i+1); per pair
 *                  S = fma(a_2i, b_2i, fma(a_2i+1, b_2i+1, S)): the odd
 *                  (high) element first.  An odd K is padded with a +0
 *                  pair element (a_K = b_K = +0), as a zero-padded buffer
 *                  is: fma(+0, +0, S) returns S but turns -0 into +0
 *                  (except in tn, where -0 + +0 is -0).
 *  pairs:B[:FMT]   the same chains over blocks of B (even) terms [jB,
 *                  jB+B), each from +0 in acc (only the last block can be
 *                  odd, and is padded as above); the block results are
 *                  added in order in promo (default fp32, mode acc_rnd):
 *                  R = C + block 0 (beta = 1) or R = block 0 (beta = 0,
 *                  no addition, so a -0 that FTZ left in the chain
 *                  stays), then R = R + block j for j >= 1: a GEMM that
 *                  splits K into blocks of VDPBF16PS chains and adds the
 *                  block results (oneDNN, profile onednn-bf16).  With
 *                  beta = 0 and K <= B this is the one chain of pairs.
 *  pairs:B/L[:FMT] pairs:B when K <= L, pairs:L when K > L (L even): a
 *                  blocking that follows K, as oneDNN 2.6's on
 *                  AVX512_CORE_BF16 does (profile onednn-bf16: 512/1024,
 *                  blocks of 512 up to K = 1024, of 1024 above).
 *  evenodd[:B]     TDPBF16PS's tile chain, per block of B (default 32) k
 *                  values [jB, jB+B): an even chain over the k with k-jB
 *                  even and an odd chain over the others, each from +0 in
 *                  ascending k, then u = even + odd, then S = S + u (NaN
 *                  priority: S first).  A last, shorter block runs its
 *                  chains over the k it has.  In every mode but tn that
 *                  is padding it with terms whose product is -0 (a = -0,
 *                  b = +0: fma(-0, +0, x) = x for every x but +0 in tn),
 *                  not with +0 products: under FTZ a chain can hold -0
 *                  (a tiny negative result flushed), which fma(+0, +0,
 *                  -0) would turn into +0.
 *  block[:FMT[:MODE]]  block-scaled matrix units (OCP MX v1.0 §6.2's dot
 *                  product, Blackwell's block-scaled MMA) as a MODEL: no
 *                  hardware here checks it.  Needs A and B in 1-D block
 *                  formats of the same block size B > 0, exact products.
 *                  Per K-block j (k in [jB, jB+B), the last one shorter),
 *                  with e_k the element values (the loaded value over
 *                  its block's scale times tensor scale: exact) and
 *                  X_A(i,j), X_B(j,col) the block scales:
 *                    P_j = the exact sum of e^A_k * e^B_k rounded once
 *                          into FMT (promo, default fp32) in MODE
 *                          (promo_rnd, default ne), as fused:B from +0;
 *                    S   = S + P_j * X_A * X_B, one rounding into acc in
 *                          acc_rnd, the product exact (fused:1 of S and
 *                          the product (P_j * X_A) * X_B; P_j * X_A is
 *                          exact in binary64, fpl_accum_check demands it);
 *                  then, when either format has a tensor scale (NVFP4's
 *                  ts), S = S * (s_A * s_B), one rounding into acc (the
 *                  scale of cuBLAS's epilogue; s_A * s_B exact).  A NaN
 *                  block (NaN scale) makes its outputs NaN.
 * Output: when out_set, the result is rounded once into `out` in out_rnd
 * (fpl_round: no DAZ); otherwise it is left as it is (in acc, or in
 * promo for blocked).
 *
 * ---------------------------------------------------------------- schedule
 * An operation with M x N outputs (a dot or a sum: M = N = 1), inner
 * length K, uses the draws c0 = st->counter onwards:
 *   A element (i, k):           c0 + i*K + k
 *   B element (k, j):           c0 + M*K + k*N + j          (none in a sum)
 *   C element (i, j):           c0 + M*K + K*N + i*N + j
 *   rounding step s of output o = i*N + j:
 *                               c0 + L + s*M*N + o,  L = M*K + K*N + M*N
 * and then st->counter += L + S*M*N, S = fpl_accum_steps(model, K, sum).
 * Every range is reserved whether or not it is used.  Step numbers, with
 * P = K when products are rounded (product k is step k), else P = 0:
 *   sequential, pairwise, blocked, evenodd: the rounding that adds term k
 *     is step P + k;
 *   pairwise: the tree node that joins leaves [.., m) and [m, ..) is step
 *     P + K + m - 1; S + T is step P + K + max(nleaves, 1) - 1 (nleaves =
 *     ceil(K/L));
 *   blocked: R + block j is step P + K + j;
 *   kahan: y, u, (u - s), c of term k are steps P + 4k + 0..3;
 *   neumaier: u, (s - u) or (t - u), + t or + s, c + v of term k are steps
 *     P + 4k + 0..3, s + c is step P + 4K;
 *   fused: group j is step P + j; fused/P: R + block j is step
 *     P + ceil(K/F) + j;
 *   pairs: the odd element of pair i is step P + 2i, the even one P+2i+1
 *     (i counted over all of K); pairs:B: R + block j is step
 *     P + 2*ceil(K/2) + j (unused for j = 0 when beta = 0);
 *   evenodd: even + odd of block j is step P + K + 2j, S + u is
 *     P + K + 2j + 1;
 *   block: P_j of block j is step j, S + P_j X_A X_B is step nb + j
 *     (nb = ceil(K/B)), the tensor-scale product step 2*nb;
 *   the output rounding is step S - 1 (the last).
 * Loads and roundings that cannot be inexact (values of the format) use
 * their index and change nothing, as fpl_round does.
 *
 * ---------------------------------------------------------------- speed
 * The results, flags and counts above do not depend on how they are
 * computed.  Sequential, blocked, pairs, pairs:B and evenodd orders with
 * exact products run fast paths where the model (and for the binary32
 * one, the loaded data) allows: many outputs' chains side by side with
 * each step formed exactly in binary64 and rounded by vector code, or
 * each chain on the CPU's binary32 fma (src/accum/chain_*.c state the
 * conditions and prove the equality; fused:F groups are summed with
 * TwoSum and rounded once, and ne chains whose steps are not exact by
 * the formats alone are checked step by step on AVX-512, each lane the
 * check fails going to the reference); pairs and pairs:B run as
 * sequential and blocked chains over a permuted k order, evenodd as its
 * two chains on the same step kernels.  The block order sums a block's
 * element products in binary64 where that is exact and adds the scaled
 * sum by one fma (src/accum/dot.c states when).  Everything else runs on
 * the engine's scalar operations.
 * The environment variable FPLAB_ACCUM chooses: unset, "" or "auto" (the
 * fast paths), "nosimd" (the fast paths without their AVX2 kernels),
 * "avx2" (without their AVX-512 kernels), or "ref" (the scalar reference
 * only, for tests and comparisons); any other
 * value makes the operations fail with FPL_ENOTFOUND.
 *
 * ---------------------------------------------------------------- events
 * Flags of every rounding (loads included) are OR-ed into st->flags and
 * counted in st->count, one count per flag per rounding, as the scalar
 * operations count.  The functions never print or exit; they return 0 or
 * a negative FPL_E* status, and on error leave outputs and state alone.
 */
#ifndef FPLAB_ACCUM_H
#define FPLAB_ACCUM_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/block.h>
#include <fplab/export.h>
#include <fplab/format.h>
#include <fplab/state.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fpl_accum_order {
	FPL_ORDER_SEQUENTIAL = 0,
	FPL_ORDER_PAIRWISE,
	FPL_ORDER_BLOCKED,
	FPL_ORDER_KAHAN,
	FPL_ORDER_NEUMAIER,
	FPL_ORDER_FUSED,
	FPL_ORDER_PAIRS,	/* VDPBF16PS */
	FPL_ORDER_EVENODD,	/* TDPBF16PS */
	FPL_ORDER_BLOCK,	/* block-scaled matrix units (a model) */
	FPL_ORDER_COUNT
} fpl_accum_order;

typedef enum fpl_load {
	FPL_LOAD_ROUND = 0,	/* round into the format (mode a_rnd / b_rnd) */
	FPL_LOAD_GIVEN		/* already values of the format; checked */
} fpl_load;

#define FPL_ACCUM_FUSED_WMAX 64

/* The exponent a fused:F:W group aligns its terms to (fplab-models(7)). */
enum {
	FPL_FUSED_LEAD = 0,	/* the largest leading exponent of the terms and S */
	FPL_FUSED_EXPSUM	/* the largest of ea+eb+1 over the products (an input's
				 * exponent clamped at its format's emin) and eS+1 */
};

typedef struct fpl_accum_model {
	fpl_format a, b;		/* input formats */
	fpl_load a_load, b_load;
	fpl_rnd a_rnd, b_rnd;		/* load modes (FPL_LOAD_ROUND) */
	int prod_exact;			/* 1: exact products; 0: rounded into prod */
	fpl_format prod;
	fpl_rnd prod_rnd;
	fpl_format acc;			/* accumulator */
	fpl_rnd acc_rnd;
	fpl_accum_order order;
	size_t leaf;			/* pairwise: L >= 1 */
	size_t block;			/* blocked: B; fused: F; evenodd: B (>= 1) */
	size_t pair_block;		/* pairs: 0 = one chain, else B (even) */
	size_t pair_long;		/* pairs:B/L: 0, else L (even): blocks of L
					 * instead of B when K > L */
	fpl_format promo;		/* blocked, pairs:B: promotion format */
	int fused_w;			/* fused: 0 = exact, else W in 1..64 */
	fpl_rnd fused_rnd;		/* fused alignment: FPL_RND_TZ or FPL_RND_NE */
	int fused_ref;			/* fused alignment reference: FPL_FUSED_LEAD or
					 * FPL_FUSED_EXPSUM (needs W) */
	size_t fused_promote;		/* fused: 0, or P (a multiple of F): blocks of P
					 * terms from +0, each added into promo */
	fpl_rnd promo_rnd;		/* fused:F/P's promotion mode (blocked and pairs
					 * use acc_rnd) */
	int out_set;			/* 1: round the result into out */
	fpl_format out;
	fpl_rnd out_rnd;
	/* block-scaled inputs (Block formats above): set by fpl_accum_set_block */
	int a_block, b_block;		/* 1: A (B) is loaded in blocks of a_blk (b_blk) */
	fpl_block_format a_blk, b_blk;
} fpl_accum_model;

/*
 * Make A's (which = 0) or B's (which = 1) input format the block format
 * *b, or clear it (b NULL: the operand goes back to fp32, rounded).
 * 1-D blocks are cut along K: the descriptor's axis is set to A's last
 * axis (-1) or B's first (0), whatever *b says; tiles and whole-tensor
 * blocks are taken as they are, over A as M x K and B as K x N.  The
 * operand is then loaded by fpl_block_round (mode a_rnd / b_rnd) and
 * m->a (m->b) becomes a format holding every dequantized value (precision
 * and range of element times scale times tensor scale, binary64 when none
 * narrower does), named after the block format; it is used for the fast
 * paths' exactness conditions, never for rounding.  Returns 0,
 * FPL_EINVAL (m NULL, which not 0 or 1) or FPL_EFORMAT (fpl_block_check
 * rejects the edited descriptor).
 */
FPL_API int fpl_accum_set_block(fpl_accum_model *m, int which, const fpl_block_format *b);

/*
 * Defaults: A = B = fp32 rounded in ne, exact products (prod = fp32, ne),
 * acc fp32 ne, sequential, leaf 1, block 128, pair_block 0, promo fp32, fused exact (W
 * 0, tz), no output rounding.  Returns 0 or FPL_EINVAL (m NULL).
 */
FPL_API int fpl_accum_init(fpl_accum_model *m);

/*
 * Set the order from its spelling: "sequential", "pairwise[:L]",
 * "blocked:B[:FMT]", "kahan", "neumaier", "fused:F[:W[:tz|ne[:expsum]]][/P[:FMT]]",
 * "pairs[:B[/L][:FMT]]", "evenodd[:B]", "block[:FMT[:MODE]]" (FMT, MODE
 * into promo, promo_rnd).  Only the order fields change.  Returns 0,
 * FPL_ENOTFOUND (unknown order or format) or FPL_EPARSE (bad number,
 * missing B/F, W outside 1..64, mode other than tz/ne), m unchanged then.
 */
FPL_API int fpl_accum_parse_order(fpl_accum_model *m, const char *s);

/*
 * A format with switches and a mode, as the CLI spells them:
 * "NAME[+daz][+ftz][+nosub][+sat][:MODE]", NAME as fpl_format_lookup
 * takes it, MODE as fpl_rnd_parse, or ":given" where `given` is not NULL
 * (*given = 1; else 0).  *rnd is left alone when no mode is given.
 * Returns 0, FPL_ENOTFOUND or FPL_EPARSE (outputs unchanged then).
 */
FPL_API int fpl_accum_parse_spec(const char *s, fpl_format *f, fpl_rnd *rnd, int *given);

/*
 * Replace the whole model by a named profile (fpl_accum_profiles lists
 * them).  0 or FPL_ENOTFOUND (m unchanged).
 */
FPL_API int fpl_accum_profile(fpl_accum_model *m, const char *name);

typedef struct fpl_accum_profile_entry {
	const char *name;
	const char *summary;	/* one line, for `fplab models` */
} fpl_accum_profile_entry;
/* The profiles, in a fixed order; *count receives their number. */
FPL_API const fpl_accum_profile_entry *fpl_accum_profiles(size_t *count);

/* "sequential", "pairwise", ... or "?" (no parameters). */
FPL_API const char *fpl_accum_order_name(fpl_accum_order o);

typedef struct fpl_accum_order_entry {
	fpl_accum_order order;
	const char *name;	/* as fpl_accum_order_name */
	const char *spelling;	/* with its parameters: "pairwise[:L]" */
	const char *summary;	/* one line, for `fplab models` */
} fpl_accum_order_entry;
/* The orders, in enum order (FPL_ORDER_COUNT of them); *count receives
 * their number.  The one table fpl_accum_parse_order reads names from. */
FPL_API const fpl_accum_order_entry *fpl_accum_orders(size_t *count);

/*
 * The model in the CLI's spelling, NUL-terminated, into buf: "--profile
 * NAME" when it equals a profile, else "-f A --prod P --acc C --order O"
 * ("--a-format A --b-format B" when they differ; "--out-format O" when
 * out_set), each format as fpl_accum_parse_spec reads it with its mode
 * or ":given".  Returns 0, FPL_EINVAL, or FPL_ERANGE when size is too
 * small (buf then holds a truncated, terminated string).
 */
FPL_API int fpl_accum_describe(const fpl_accum_model *m, char *buf, size_t size);

/* The parts of a model's spelling, as fpl_accum_describe writes them
 * after its options (and the CLI's model columns show them). */
typedef enum fpl_accum_part {
	FPL_PART_A,	/* input A: a block format's name:MODE, else FMT:MODE|given */
	FPL_PART_B,	/* input B, the same */
	FPL_PART_PROD,	/* "exact" or FMT:MODE */
	FPL_PART_ACC,	/* FMT:MODE */
	FPL_PART_ORDER,	/* NAME[:parameters], as fpl_accum_parse_order reads it */
	FPL_PART_OUT	/* FMT:MODE, or "none" when !out_set */
} fpl_accum_part;

/*
 * One part of the model's spelling (never "--profile"), NUL-terminated,
 * into buf; each format as NAME[+switches] with the switches that differ
 * from the catalogue's NAME ("+custom" for a difference no switch says).
 * Returns 0, FPL_EINVAL, or FPL_ERANGE when size is too small (buf then
 * holds a truncated, terminated string).
 */
FPL_API int fpl_accum_describe_part(const fpl_accum_model *m, fpl_accum_part part, char *buf,
				    size_t size);

/*
 * Is the model usable?  0, or FPL_EINVAL (a mode out of range, leaf or
 * block 0, fused W above 64 or fused mode not tz/ne, stochastic mode
 * with st->sr_bits outside 1..32 when st is not NULL, an odd pair_block
 * or pair_long, a pair_long without pair_block or not above it; a block
 * operand loaded as given; the block order without two 1-D block formats
 * of one block size, with rounded products, or where P_j * X_A is not
 * exact in binary64: FMT's precision plus A's scale precision above 53,
 * or their exponent ranges beyond binary64's) or FPL_EFORMAT (a format
 * fpl_format_finish or a block descriptor fpl_block_check rejects).
 */
FPL_API int fpl_accum_check(const fpl_accum_model *m, const fpl_state *st);

/* S, the rounding steps per output for inner length k (see schedule);
 * `sum` = 1 for fpl_accum_sum (no products). */
FPL_API uint64_t fpl_accum_steps(const fpl_accum_model *m, size_t k, int sum);

/*
 * *r = x . y under the model: x_k = x[k*incx], y_k = y[k*incy] (k < n),
 * initial value *c when c is not NULL (beta = 1), else +0.  *flags_out,
 * when not NULL, receives the flags raised by this output's steps
 * (loads excluded).  r may alias c.
 */
FPL_API int fpl_accum_dot(double *r, const fpl_accum_model *m, size_t n, const double *x,
			  ptrdiff_t incx, const double *y, ptrdiff_t incy, const double *c,
			  unsigned *flags_out, fpl_state *st);

/* *r = sum of x[k*incx], k < n (terms loaded into the A format; B and
 * the product fields are not used), from *c or +0.  As fpl_accum_dot. */
FPL_API int fpl_accum_sum(double *r, const fpl_accum_model *m, size_t n, const double *x,
			  ptrdiff_t incx, const double *c, unsigned *flags_out, fpl_state *st);

/*
 * C = A.B (beta = 0) or A.B + C (beta = 1), row-major:
 *   A[i][k] = a[i*lda + k]  (transa: a[k*lda + i]),  i < m, k < kk
 *   B[k][j] = b[k*ldb + j]  (transb: b[j*ldb + k]),  j < n
 *   C[i][j] = c[i*ldc + j]
 * every output computed under the model; flags_out, when not NULL, has
 * m*n entries (index i*n + j) receiving each output's flags.  Outputs
 * are split over st->threads threads; the bits, flags and counts do not
 * depend on it.  A and B may not alias C.  FPL_ENOMEM when the load
 * buffers (m*kk + kk*n doubles) cannot be allocated.
 * Flags in st->untracked (fplab/state.h) are neither raised nor counted
 * nor put in flags_out, by these three functions; with inexact
 * untracked, a binary32-fma model (exact products, IEEE binary32
 * accumulator in ne, sequential, no output rounding, no flips) on
 * binary32 data runs as one register-blocked GEMM on the hardware fma:
 * the same bits, much faster.
 */
FPL_API int fpl_accum_gemm(double *c, size_t ldc, const fpl_accum_model *mod, int beta,
			   size_t m, size_t n, size_t kk, const double *a, size_t lda,
			   int transa, const double *b, size_t ldb, int transb,
			   unsigned *flags_out, fpl_state *st);

#ifdef __cplusplus
}
#endif
#endif

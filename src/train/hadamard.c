/* SPDX-License-Identifier: MIT */
/*
 * hadamard.c - the 16-point random Hadamard transform of NVFP4 training
 * (train_internal.h, key rht of fplab/train.h): its sign vector from a
 * seed, and the transform of a matrix along its row index.
 *
 * The invariant: R = (1/4) H16 diag(s) is orthogonal (H16 H16 = 16 I,
 * H16 symmetric, s_i = +-1), so R^T R = I and (R G)^T (R H) = G^T H: the
 * transform moves values between the rows of a block without changing
 * the weight gradient a GEMM computes from them exactly; only what the
 * quantization of the rotated operands loses changes.
 *
 * H16 is Sylvester's Hadamard matrix, H16[i][j] = (-1)^popcount(i & j)
 * (H1 = [1], H2n = [[Hn, Hn], [Hn, -Hn]]).  It factors into four
 * butterfly stages, one per bit of the index: stage h (h = 1, 2, 4, 8)
 * replaces each pair (v_i, v_{i+h}) with i & h = 0 by (v_i + v_{i+h},
 * v_i - v_{i+h}).  After the four stages v_i = sum_j (-1)^popcount(i&j)
 * v_j (each stage contributes the sign of one bit of i & j): 16 * 4 = 64
 * additions per 16-vector instead of 16 * 15 for the matrix product.
 *
 * Arithmetic: binary64, nearest-even, every addition rounded.  The signs
 * and the factor 1/4 are exact (barring a binary64 subnormal result), so
 * each output is a tree of 15 rounded additions of the 16 +-inputs: when
 * the inputs are integer multiples of one 2^e below 2^(e+49) in
 * magnitude every partial sum is a multiple of 2^e below 2^(e+53), and
 * the transform is exact; otherwise an output's error is at most gamma_4
 * * sum_j |x_j| / 4 (gamma_4 = 4u / (1 - 4u), u = 2^-53: a tree of depth
 * 4, Higham section 4.2).  Operands stored in
 * binary32 or narrower whose 16 values span fewer than about 25 binades
 * are in the exact case.  The rotated values are then rounded once more
 * by the operand's quantization (a block format in nvfp4): GPU kernels
 * compute the same product in fp32 on tensor cores, so they may differ
 * from fplab in the last fp32 bit of a rotated value, before it is
 * quantized to 4 bits.
 * Specials propagate as the additions do: an infinity among 16 inputs
 * makes every output of its block infinite or NaN, a NaN every one NaN.
 */
#include <string.h>

#include <fplab/state.h>

#include "train/train_internal.h"

void tr__rht_signs(uint64_t seed, double s[TR_RHT_N])
{
	unsigned i;

	for (i = 0; i < TR_RHT_N; i++)
		s[i] = fpl_random_draw(seed, TR_STREAM_RHT, i) >> 63 ? -1.0 : 1.0;
}

/* The butterflies of one block of 16 rows y[0..16) of `cols` values
 * (row i at y + i*ld), in place: rows i = sum_j H16[i][j] rows j. */
static void fwht16(double *y, size_t ld, size_t cols)
{
	size_t h, i, j;

	for (h = 1; h < TR_RHT_N; h <<= 1)
		for (i = 0; i < TR_RHT_N; i++) {
			double *a, *b;

			if (i & h)
				continue;
			a = y + i * ld;
			b = y + (i + h) * ld;
			for (j = 0; j < cols; j++) {
				double u = a[j], v = b[j];

				a[j] = u + v;
				b[j] = u - v;
			}
		}
}

void tr__rht_rows(double *y, size_t ldy, const double *x, size_t ldx, size_t rows, size_t cols,
		  const double s[TR_RHT_N], int transpose)
{
	size_t r0, i, j, full = rows - rows % TR_RHT_N;

	for (r0 = 0; r0 < full; r0 += TR_RHT_N) {
		double *yb = y + r0 * ldy;
		const double *xb = x + r0 * ldx;

		/* R x = (1/4) H16 (s .* x); R^T x = s .* ((1/4) H16 x) */
		for (i = 0; i < TR_RHT_N; i++) {
			double f = transpose ? 1.0 : s[i];

			for (j = 0; j < cols; j++)
				yb[i * ldy + j] = f * xb[i * ldx + j];
		}
		fwht16(yb, ldy, cols);
		for (i = 0; i < TR_RHT_N; i++) {
			double f = transpose ? 0.25 * s[i] : 0.25;

			for (j = 0; j < cols; j++)
				yb[i * ldy + j] *= f;
		}
	}
	if (y != x)	/* the tail: copied as it is */
		for (i = full; i < rows; i++)
			memcpy(y + i * ldy, x + i * ldx, cols * sizeof *y);
}

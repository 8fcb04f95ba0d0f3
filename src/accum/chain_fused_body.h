/* SPDX-License-Identifier: MIT */
/*
 * accum/chain_fused_body.h - the sums of one fused group across a tile
 * (chain_fused.c), included by chain_fused.c (portable), by
 * x86/chain_fused_avx512.c (the same loop compiled for AVX-512) and by
 * x86/chain_fused_avx2.c (for the lanes its registers leave over): one
 * function, FUSED_SUMS_NAME (FUSED_SUMS_STORAGE: static or empty), so
 * all give the same bits by construction.  x86/chain_fused_avx2.c's own
 * loop argues its equality with this one in its header.
 *
 * For each lane jj: sum[jj] = S + a_k0 b_k0j + ... + a_k1-1 b_k1-1j in
 * binary64, term by term, with Knuth's TwoSum error of every addition;
 * bad[jj] is set when some error is not zero (the binary64 sum is then
 * not the real one) or NaN (an operand was inf or NaN).  The products
 * are exact (chain_fused.c's static condition), so when bad[jj] stays 0
 * sum[jj] is exactly the real group sum.  TwoSum (s + p = t + err
 * exactly, for any binary64 s, p whose sum does not overflow, in mode
 * ne) needs the additions as written: the build's -ffp-contract=off
 * keeps them from being fused.
 */
FUSED_SUMS_STORAGE void FUSED_SUMS_NAME(const double *restrict arow, const double *restrict b, size_t ldb,
		     size_t nj, size_t k0, size_t k1, double *restrict sum,
		     unsigned char *restrict bad)
{
	size_t k, jj;

	for (k = k0; k < k1; k++) {
		const double a = arow[k], *restrict bk = b + k * ldb;
		for (jj = 0; jj < nj; jj++) {
			double p = a * bk[jj], s = sum[jj], t = s + p, bb = t - s;
			double err = (s - (t - bb)) + (p - bb);
			bad[jj] |= err != 0;
			sum[jj] = t;
		}
	}
}

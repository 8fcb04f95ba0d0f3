/* SPDX-License-Identifier: MIT */
/*
 * accum/chain_blocked_body.h - the truncation kernel of chain_blocked.h
 * as a loop over the tile's lanes (vectorised by the compiler), included
 * by chain_blocked.c (portable) and x86/chain_blocked_avx2.c (the same
 * loop compiled for AVX2): one function TZ_KERNEL_NAME (TZ_KERNEL_STORAGE:
 * static or empty).  a * b and s + a*b are exact under chain_blocked.c's
 * condition, so the build's -ffp-contract=off (or a contraction) changes
 * no bit; the mask is applied to the bits of the sum.
 */
#include <string.h>

TZ_KERNEL_STORAGE void TZ_KERNEL_NAME(const double *arow, const double *b, size_t ldb, size_t nj,
				      size_t k0, size_t k1, uint64_t keep, int skip0, double *s,
				      uint64_t *inex)
{
	uint64_t u[FPL__ACC_TILE];
	size_t k, jj;

	memcpy(u, s, nj * sizeof *u);
	for (k = k0; k < k1; k++) {
		const double a = arow[k], *restrict bk = b + k * ldb;

		if (a == 0 && skip0)
			continue;
		if (inex) {
			for (jj = 0; jj < nj; jj++) {
				double x, t;
				uint64_t v;
				memcpy(&x, &u[jj], sizeof x);
				t = x + a * bk[jj];
				memcpy(&v, &t, sizeof v);
				inex[jj] += (v & keep) != v;
				u[jj] = v & keep;
			}
		} else {
			for (jj = 0; jj < nj; jj++) {
				double x, t;
				uint64_t v;
				memcpy(&x, &u[jj], sizeof x);
				t = x + a * bk[jj];
				memcpy(&v, &t, sizeof v);
				u[jj] = v & keep;
			}
		}
	}
	memcpy(s, u, nj * sizeof *u);
}

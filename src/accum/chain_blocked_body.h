/* SPDX-License-Identifier: MIT */
/*
 * accum/chain_blocked_body.h - chain_blocked.h's loops over a tile's
 * lanes (vectorised by the compiler), included by chain_blocked.c
 * (portable) and x86/chain_blocked_avx2.c and x86/chain_blocked_avx512.c
 * (the same loops compiled for AVX2 and AVX-512), so every instance gives
 * the same bits: the truncation kernel TZ_KERNEL_NAME, when defined, and
 * the block additions' lanes TZ_PROMO_NAME and the scan TZ_MAXBITS_NAME,
 * each when defined (storage TZ_KERNEL_STORAGE: static or empty).  In the kernel a * b and
 * s + a*b are exact under chain_blocked.c's condition, so the build's
 * -ffp-contract=off (or a contraction) changes no bit; the mask is
 * applied to the bits of the sum.  The block additions need TwoSum's
 * additions as written: -ffp-contract=off keeps them apart.
 */
#include <string.h>

#ifdef TZ_KERNEL_NAME
TZ_KERNEL_STORAGE void TZ_KERNEL_NAME(const double *arow, const double *b, size_t ldb, size_t nj,
				      size_t k0, size_t k1, uint64_t keep, double *s, uint64_t *inex)
{
	uint64_t u[FPL__ACC_TILE], neg0 = 0;
	size_t k, jj;
	int skip0;

	memcpy(u, s, nj * sizeof *u);
	for (jj = 0; jj < nj; jj++)	/* skip0: no lane holds -0 */
		neg0 |= u[jj] == 0x8000000000000000ull;
	skip0 = !neg0;
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
#endif

#ifdef TZ_PROMO_NAME
/* For lane jj < nj of res + blk (chain_blocked.c's block additions):
 * y[jj] = the bits of the binary64 sum t, masked by keep; cls[jj] = 2
 * when the lane needs the engine (TwoSum's error not 0, or t neither
 * zero nor of magnitude bits in [minb, maxb]), else 1 when the mask
 * changed t, else 0. */
TZ_KERNEL_STORAGE void TZ_PROMO_NAME(const double *res, const double *blk, size_t nj,
				     uint64_t keep, uint64_t minb, uint64_t maxb, uint64_t *y,
				     uint64_t *cls)
{
	size_t jj;

	for (jj = 0; jj < nj; jj++) {
		double x = res[jj], b = blk[jj], t = x + b, bb = t - x;
		double e = (x - (t - bb)) + (b - bb);
		uint64_t u, a, slow;
		memcpy(&u, &t, sizeof u);
		a = u & 0x7fffffffffffffffull;
		slow = (e != 0) | ((a != 0) & (a - minb > maxb - minb));
		y[jj] = u & keep;
		cls[jj] = slow ? 2 : (u & keep) != u;
	}
}
#endif

#ifdef TZ_MAXBITS_NAME
/* The largest bits of |x[i]|, i < n, as integers (0 for n == 0). */
TZ_KERNEL_STORAGE uint64_t TZ_MAXBITS_NAME(const double *x, size_t n)
{
	uint64_t mx = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t u;
		memcpy(&u, &x[i], sizeof u);
		u &= 0x7fffffffffffffffull;
		mx = u > mx ? u : mx;
	}
	return mx;
}
#endif

/* SPDX-License-Identifier: MIT */
/*
 * exact_gemm.c - the GEMM error reference's blocked path: E = A B and
 * G = |A| |B| for a block of outputs in binary64, by a register-blocked
 * GEMM kernel (x86/exact_gemm_avx512.c, x86/exact_gemm_avx2.c, or the
 * portable one below), and the certificate that proves, output by
 * output, that the binary64 numbers are the exact values.
 *
 * The certificate.  Let row i of A hold finite entries, each a multiple
 * of 2^qa (qa = the least weight of a set bit over the row's nonzero
 * entries; a zero row takes qa = 0), and column j of B likewise with qb;
 * let g = qa + qb with -1074 <= g <= 970, and T = 2^(g + 53).  Every
 * product a_k b_k and every sum of a subset of the products is then an
 * integer multiple of 2^g, and every such multiple below T in magnitude
 * is a finite binary64 (2^g is not below binary64's quantum 2^-1074, T
 * <= 2^1023).  The kernels evaluate G = sum |a_k||b_k| as a tree of
 * roundings of nonnegative quantities (products, fma, additions, in any
 * order and grouping: per lane, per block of K, then the blocks), each
 * node correctly rounded and monotone in its inputs.  Claim: the
 * computed G' < T if and only if the exact G < T, and then G' = G and
 * every node of the tree was exact.  Proof: every node's computed value
 * is at most the root's (a rounding of the node plus nonnegative terms,
 * at least the node since the node is a binary64).  If G' < T, go up
 * from the leaves: a node whose inputs are exact has an exact value that
 * is a subset sum, a multiple of 2^g; were it >= T its rounding would be
 * >= T (T is a binary64, rounding is monotone), and so would be the
 * root: hence it is < T, representable, and computed exactly.  If G' >=
 * T then G >= T, for otherwise every node is a subset sum below T and
 * exact, and G' = G.  E's tree (a different one, the same shapes) has
 * nodes that are signed subset sums, each at most the matching subset
 * sum of magnitudes <= G < T in magnitude, multiples of 2^g: every node
 * exact, E' = E.  So the test G' < T (one comparison per output)
 * proves both sums exact, with no condition on K or on the significand
 * widths (an fma's product, or a separate multiplication, is a node like
 * the others); it fails only where the exact sums do not fit binary64's
 * 53 bits on the grid 2^g, and those outputs go to the other paths.
 * The bound T grows with the mutant's slack (the tests' wrong
 * certificate, caught because it differs from the long accumulator).
 *
 * Why G is a GEMM and not a cheap bound.  A rigorous O(n^2) upper bound U
 * >= G (row maximum times column sum, Cauchy-Schwarz) would serve the
 * certificate as well (U < T gives G < T), but G is also a reading: it
 * is the output's entry of |A||B| (den, the normwise denominator), which
 * must be the exact value rounded, bit for bit.  So E and G are both
 * needed in full, two fma's per term (one product, then its magnitude
 * added by a masked addition, measured slower), and the kernel is bound
 * by its fma's: on the Zen 5 of 2026-11 this AVX-512 kernel alone runs
 * at 115-122 GFLOP/s of a measured 128 peak, about 100 inside the
 * reference (B streamed from L3 once per block of 48 rows).
 *
 * C's entry c and the readings are error_gemm.c's (gemm_output): the
 * sums with c are formed by TwoSum and kept only when exact, and so are
 * y - e; then every reading is one IEEE operation on exact operands.
 * Without C, the AVX-512 kernel set also does those readings 8 outputs
 * at a time (x86/exact_gemm_avx512.c, gk->rd: the same operations).
 *
 * Blocking (BLIS's loops): B is packed once into panels of nr columns
 * (k-major, columns past N are zero); for each block of up to MC rows
 * and each slice of KC values of k, the rows are packed into micro
 * panels of mr rows holding a and |a| for each k, and the kernel adds the
 * mr x nr products of a micro panel and a B panel into the block's E and
 * G tiles.  Zero padding only adds exact zeros.  Every kernel computes
 * the same exact sums when the certificate holds: the bits do not depend
 * on the kernel set, and FPLAB_KERNELS=ref runs the portable kernel.
 */
#include <stdlib.h>
#include <string.h>

#include <fplab/kernels.h>

#include "accum/exact_internal.h"
#include "util/scratch.h"

#define MC 48
#define KC 1024

/* The portable micro kernel: e[r*ldo + c] += sum_k a_k b_k over the
 * micro panel ap (per k: 4 values of a, then their magnitudes) and the
 * panel bp (per k: 4 values of b), g the same of the magnitudes. */
static void mk_c(size_t kc, const double *ap, const double *bp, double *e, double *g,
		 size_t ldo)
{
	double E[4][4], G[4][4];
	size_t k, r, c;

	for (r = 0; r < 4; r++)
		for (c = 0; c < 4; c++) {
			E[r][c] = e[r * ldo + c];
			G[r][c] = g[r * ldo + c];
		}
	for (k = 0; k < kc; k++, ap += 8, bp += 4)
		for (r = 0; r < 4; r++)
			for (c = 0; c < 4; c++) {
				E[r][c] += ap[r] * bp[c];
				G[r][c] += ap[4 + r] * __builtin_fabs(bp[c]);
			}
	for (r = 0; r < 4; r++)
		for (c = 0; c < 4; c++) {
			e[r * ldo + c] = E[r][c];
			g[r * ldo + c] = G[r][c];
		}
}

int fpl__exact_gemm_env(int *mode)
{
	const char *s = getenv("FPLAB_EXACT");

	if (!s || !*s || !strcmp(s, "auto"))
		*mode = 0;
	else if (!strcmp(s, "long"))
		*mode = -1;
	else if (!strcmp(s, "nogemm"))
		*mode = 1;
	else
		return -1;
	return 0;
}

void fpl__exact_gemm_pick(fpl__exact_gemm *gk)
{
	gk->mr = 4;
	gk->nr = 4;
	gk->mk = mk_c;
	gk->rd = NULL;
#ifdef FPL_HAVE_X86_KERNELS
	{
		const char *sel = fpl_kernels_selected();
		const fpl_cpu_features *cpu = fpl_cpu();

		if (!strcmp(sel, "avx512") && cpu->avx512f) {
			gk->mr = FPL__EXACT_AVX512_MR;
			gk->nr = FPL__EXACT_AVX512_NR;
			gk->mk = fpl__exact_mk_avx512;
			gk->rd = fpl__exact_rd_avx512;
		} else if (strcmp(sel, "ref") && cpu->avx2 && cpu->fma) {
			gk->mr = FPL__EXACT_AVX2_MR;
			gk->nr = FPL__EXACT_AVX2_NR;
			gk->mk = fpl__exact_mk_avx2;
		}
	}
#endif
}

int fpl__exact_gemm_pack_b(fpl__exact_gemm *gk, const double *B, ptrdiff_t sk, ptrdiff_t sj,
			   size_t N, size_t K)
{
	size_t nr = (size_t)gk->nr, np = (N + nr - 1) / nr, p, k, k0, c, n;

	gk->N = N;
	gk->K = K;
	gk->np = np;
	if (__builtin_mul_overflow(np * nr, K ? K : 1, &n))
		return -1;
	gk->bp = fpl__scratch_alloc(n * sizeof *gk->bp);	/* reused: util/scratch.h */
	if (!gk->bp)
		return -1;
	/* blocks of 64 values of k: B's rows (sj = 1) are then read a
	 * stretch at a time, not one panel's width per row */
	for (k0 = 0; k0 < K; k0 += 64) {
		size_t k1 = K - k0 < 64 ? K : k0 + 64;
		for (p = 0; p < np; p++) {
			double *d = gk->bp + p * nr * K;
			if (sj == 1 && N - p * nr >= nr) {	/* a full panel, rows contiguous */
				for (k = k0; k < k1; k++) {
					const double *s = B + (ptrdiff_t)k * sk + (ptrdiff_t)(p * nr);
					for (c = 0; c < nr; c++)
						d[k * nr + c] = s[c];
				}
				continue;
			}
			for (k = k0; k < k1; k++)
				for (c = 0; c < nr; c++) {
					size_t j = p * nr + c;
					d[k * nr + c] = j < N ? B[(ptrdiff_t)k * sk + (ptrdiff_t)j * sj] : 0.0;
				}
		}
	}
	return 0;
}

void fpl__exact_gemm_release(fpl__exact_gemm *gk)
{
	fpl__scratch_free(gk->bp);
	gk->bp = NULL;
}

size_t fpl__exact_gemm_rows(const fpl__exact_gemm *gk)
{
	return ((size_t)MC + (size_t)gk->mr - 1) / (size_t)gk->mr * (size_t)gk->mr;
}

int fpl__exact_gemm_block(const fpl__exact_gemm *gk, const double *A, size_t rows, size_t q0,
			  size_t q1, double *E, double *G, double *apack)
{
	size_t mr = (size_t)gk->mr, nr = (size_t)gk->nr, K = gk->K, ld = (q1 - q0) * nr;
	size_t mp = (rows + mr - 1) / mr, k0, kc, p, q, r, k;

	if (rows > (size_t)MC || q0 >= q1 || q1 > gk->np)
		return -1;
	memset(E, 0, mp * mr * ld * sizeof *E);
	memset(G, 0, mp * mr * ld * sizeof *G);
	for (k0 = 0; k0 < K; k0 += kc) {
		kc = K - k0 < KC ? K - k0 : KC;
		/* micro panels: per k, mr values of a then their magnitudes */
		for (p = 0; p < mp; p++) {
			double *d = apack + p * 2 * mr * kc;
			const double *a = A + p * mr * K + k0;
			size_t nv = rows - p * mr < mr ? rows - p * mr : mr;
			/* k outermost: the panel is written in order, the
			 * rows read side by side */
			for (k = 0; k < kc; k++, d += 2 * mr) {
				for (r = 0; r < nv; r++) {
					d[r] = a[r * K + k];
					d[mr + r] = __builtin_fabs(a[r * K + k]);
				}
				for (; r < mr; r++)
					d[r] = d[mr + r] = 0.0;
			}
		}
		for (q = q0; q < q1; q++) {
			const double *b = gk->bp + q * nr * K + k0 * nr;
			for (p = 0; p < mp; p++)
				gk->mk(kc, apack + p * 2 * mr * kc, b, E + p * mr * ld + (q - q0) * nr,
				       G + p * mr * ld + (q - q0) * nr, ld);
		}
	}
	return 0;
}

size_t fpl__exact_gemm_apack_len(const fpl__exact_gemm *gk)
{
	return fpl__exact_gemm_rows(gk) * 2 * KC;
}

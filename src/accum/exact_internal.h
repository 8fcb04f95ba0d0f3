/* SPDX-License-Identifier: MIT */
/*
 * accum/exact_internal.h - the exact accumulator's private interface, for
 * the simulators (dot products, GEMM, reductions) built on it.
 *
 * The invariant a reader must know: an fpl_exact's value is the integer
 * limb[] (two's complement, 72 x 64 bits) times 2^FPL_EXACT_LSB, plus the
 * special counts; every function here keeps it exact (exact.c argues the
 * range).  Like the engine's _ix functions, fpl__exact_round_ix takes the
 * draw index explicitly and returns its flags through *fl, reading st
 * only, so that threads can share one state.
 */
#ifndef FPLAB_ACCUM_EXACT_INTERNAL_H
#define FPLAB_ACCUM_EXACT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/exact.h>

/* fpl_exact_round with draw `idx`: flags are OR-ed into *fl (not counted),
 * st is not written. */
double fpl__exact_round_ix(const fpl_exact *e, const fpl_format *f, fpl_rnd rnd,
			   const fpl_state *st, uint64_t idx, unsigned *fl);

/* e += sum of a[i] * b[i*stride] for i = 0..n-1, exactly (a row of A times
 * a column of a row-major B: stride = B's row length). */
void fpl__exact_add_dot(fpl_exact *e, const double *a, const double *b, size_t n,
			size_t stride);

/* The same for binary32 operands (every binary32 product is exact in the
 * accumulator too: it is a product of binary64 values). */
void fpl__exact_add_dot_f32(fpl_exact *e, const float *a, const float *b, size_t n,
			    size_t stride);

/* 1 when the value is a finite zero (no special terms, every limb 0). */
int fpl__exact_is_zero(const fpl_exact *e);

/*
 * The finite value's magnitude as fpl_round_parts wants it: 0 for zero
 * (*hi = *lo = 0, *exp = FPL_EXACT_LSB, *sticky = 0); otherwise 1, with
 * |value| = (hi*2^64 + lo + t) * 2^exp, bit 63 of hi set (the window
 * starts at the leading bit), t = 0 when *sticky is 0 and 0 < t < 1
 * otherwise.  *negative is the sign.  Special counts are ignored.
 */
int fpl__exact_window(const fpl_exact *e, int *negative, int64_t *exp, uint64_t *hi,
		      uint64_t *lo, int *sticky);

/* (hi:lo + t) 2^exp, a window as fpl__exact_window gives it, rounded once
 * to nearest-even binary64: fpl_exact_value's rounding. */
double fpl__exact_nearest64(int neg, int64_t exp, uint64_t hi, uint64_t lo, int sticky);

/*
 * fpl_exact_relerr's quotient from the two windows: |d| = |y - e| with
 * window (dhi:dlo) 2^dx, d != 0, and |e| with top word ehi (bit 63 set)
 * 2^(ex + 64), e != 0.  Only these bits matter (the window's sticky bits
 * do not): so any exact representation of e and d that gives the same
 * windows gives the same relative error, bit for bit.
 */
double fpl__exact_relerr_parts(int64_t dx, uint64_t dhi, uint64_t dlo, int64_t ex, uint64_t ehi);

/* e += (-1)^neg mag 2^exp, exactly: FPL_EXACT_LSB <= exp, exp + 128 <=
 * 2048 (every value built from binary64 products is in that range). */
void fpl__exact_add_u128(fpl_exact *e, unsigned __int128 mag, int neg, int64_t exp);

/* ------------------------------------------------ exact_fast.c's grid path */

/* An exact dot product held as E 2^s, with G 2^s the sum of the magnitudes
 * of its terms (|A||B| + |C|'s entry); |E|, G < 2^125. */
typedef struct fpl__grid_sum {
	__int128 E, G;
	int s;
} fpl__grid_sum;

/* A row on its grid: every entry is v 2^q with an integer |v| < 2^w and
 * at most p significant bits; w = -1: not eligible.  For the compensated
 * path: fin (no NaN or infinity), and hmin, hmax, the least and largest
 * h over the nonzero entries (|x| < 2^h, x >= 2^(h-1)); hmin > hmax for
 * a zero row. */
typedef struct fpl__grid_row {
	int q, w, p;
	int fin, hmin, hmax;
	int t;	/* the least weight of a set bit (0 for a zero row), when fin */
} fpl__grid_row;

/*
 * Rows x[i*K .. i*K+K) as integers on a grid (exact_fast.c's header): for
 * each row either row[i].w = -1 (not eligible: a NaN or infinity, or
 * wider than 62 bits) or v[i*K + k] 2^row[i].q = x[i*K + k] exactly with
 * |v| < 2^row[i].w, w <= 62.  Returns 1 when some row is eligible.
 * v NULL: the rows' descriptions only.
 */
int fpl__exact_grid_rows(int64_t *v, fpl__grid_row *row, const double *x, size_t rows, size_t K);

/* The integers v[0..K) of one eligible row x (row->w >= 0, its
 * description from fpl__exact_grid_rows or fpl__exact_grid_cols), as
 * fpl__exact_grid_rows forms them. */
void fpl__exact_grid_ints(int64_t *v, const fpl__grid_row *row, const double *x, size_t K);

/*
 * *g = the exact sum of x[k] y[k] 2^(qx+qy), k < K, plus c (ry NULL: a
 * sum, of x[k] 2^qx, plus c), when the certificate holds: both rows
 * eligible, wx + wy + bitlength(K) <= 124 + slack, c on the grid.
 * Returns 1 then, 0 when it does not hold (take the long accumulator),
 * and -1 when it holds but x (or, for a dot product, y) is NULL and the
 * sum needs the integer rows (the binary64 sums do not apply): the
 * caller forms them and calls again.  a and b are the same rows as
 * binary64 (x[k] 2^qx = a[k], y[k] 2^qy = b[k]; b unused for a sum).
 * slack is 0; the tests pass a positive one to check that a wrong
 * certificate is caught.
 */
int fpl__exact_grid_dot(fpl__grid_sum *g, const int64_t *x, const fpl__grid_row *rx,
			const int64_t *y, const fpl__grid_row *ry, const double *a,
			const double *b, size_t K, double c, int slack);

/* fpl_exact_value of the sum and of its magnitudes, bit for bit. */
double fpl__grid_value(const fpl__grid_sum *g);
double fpl__grid_den(const fpl__grid_sum *g);

/* fpl_exact_abserr and fpl_exact_relerr of the sum against a finite y,
 * bit for bit. */
void fpl__grid_errors(const fpl__grid_sum *g, double y, double *abserr, double *rel);

/*
 * The compensated path (exact_fast.c): for rows a, b (K entries, their
 * fpl__grid_row's) and a finite c, *elo <= e <= *ehi and *glo <= g <=
 * *ghi, e the exact dot product plus c and g the sum of the magnitudes of
 * its terms, the four bounds exact values built from a triple-double sum
 * (TwoProduct, TwoSum) and a rigorous bound on its error.  Returns 0 when
 * the rows are outside the range where the bound is proven, or when a
 * quick look says the bounds cannot decide the readings against the
 * result y (then the caller takes the long accumulator).  slack > 0 (the tests' mutant)
 * drops the bound.
 */
int fpl__exact_cert_dot(fpl_exact *elo, fpl_exact *ehi, fpl_exact *glo, fpl_exact *ghi,
			const double *a, const fpl__grid_row *ra, const double *b,
			const fpl__grid_row *rb, size_t K, double c, double y, int slack);

/* ------------------------------------------------ exact_gemm.c's blocked path */

/* A micro kernel: for the micro panel ap (per k: mr values of a, then
 * their magnitudes) and the B panel bp (per k: nr values of b), e[r*ldo
 * + c] += sum_k a b and g[r*ldo + c] += sum_k |a| |b| over k < kc, in any
 * order (exact_gemm.c's certificate does not depend on it). */
typedef void (*fpl__exact_mk)(size_t kc, const double *ap, const double *bp, double *e,
			      double *g, size_t ldo);

/* error_gemm.c's output classes (the bits of its cls array). */
enum {
	FPL__EXACT_C_REL = 1, FPL__EXACT_C_ABS = 2, FPL__EXACT_C_ZERO = 4,
	FPL__EXACT_C_NONFIN = 8, FPL__EXACT_C_NAN = 16, FPL__EXACT_C_INF = 32
};

/*
 * A readings kernel: error_gemm.c's gemm_outputs for n outputs of one
 * row of a GEMM without C, done in the common case only.  Output c (c <
 * n) has the binary64 sums te[c] and tg[c], the result y[c], g = ta +
 * tb[c] (tb[c]: column c's least weight t, or below -2^20 for a column
 * that is not finite; the row is finite).  When -1074 <= g <= 970, tg[c]
 * < 2^min(g + 53 + slack, 1023), y[c] is finite and TwoSum proves y[c] -
 * te[c] exact, it writes ex[c] (when ex is not NULL), rel[c], ab[c],
 * dn[c] and cls[c] exactly as gemm_outputs does; it writes nothing for
 * the other outputs, their indices go to left[] (increasing), and their
 * count is returned.  Portable twin: gemm_outputs's own loop.
 */
typedef size_t (*fpl__exact_rd)(size_t n, const double *te, const double *tg, const double *y,
				const int *tb, int ta, int slack, double *ex, double *rel,
				double *ab, double *dn, unsigned char *cls, uint32_t *left);
size_t fpl__exact_rd_avx512(size_t n, const double *te, const double *tg, const double *y,
			    const int *tb, int ta, int slack, double *ex, double *rel,
			    double *ab, double *dn, unsigned char *cls, uint32_t *left);

#define FPL__EXACT_AVX512_MR 6
#define FPL__EXACT_AVX512_NR 16
#define FPL__EXACT_AVX2_MR 6
#define FPL__EXACT_AVX2_NR 8
void fpl__exact_mk_avx512(size_t kc, const double *ap, const double *bp, double *e, double *g,
			  size_t ldo);
void fpl__exact_mk_avx2(size_t kc, const double *ap, const double *bp, double *e, double *g,
			size_t ldo);

/* The blocked path's kernel and B (N x K, transposed) packed in panels
 * of nr columns (np of them). */
typedef struct fpl__exact_gemm {
	int mr, nr;
	fpl__exact_mk mk;
	fpl__exact_rd rd;	/* or NULL: gemm_outputs's own loop */
	size_t N, K, np;
	double *bp;
} fpl__exact_gemm;

/* FPLAB_EXACT: unset or "auto" 0 (every fast path), "long" -1 (the long
 * accumulator for every output), "nogemm" 1 (not the blocked path);
 * another value: returns -1. */
int fpl__exact_gemm_env(int *mode);

/* The kernel for the selected kernel set (fplab/kernels.h): avx512,
 * avx2 (also when avx512 is selected on a CPU without it), else the
 * portable one.  Every one gives the same bits where the certificate
 * holds. */
void fpl__exact_gemm_pick(fpl__exact_gemm *gk);

/* Packs B (K x N, entry (k, j) at B[k*sk + j*sj]) into gk->bp (a block
 * of util/scratch.h, which fpl__exact_gemm_release gives back); -1 when
 * memory is short. */
int fpl__exact_gemm_pack_b(fpl__exact_gemm *gk, const double *B, ptrdiff_t sk, ptrdiff_t sj,
			   size_t N, size_t K);

/* fpl__exact_grid_rows(NULL, row, Bt, N, K) from gk's packed panels:
 * the descriptions of B's N columns, the same values for finite columns
 * (a NaN or an infinity marks the column not finite either way). */
void fpl__exact_grid_cols(fpl__grid_row *row, const fpl__exact_gemm *gk);
void fpl__exact_gemm_release(fpl__exact_gemm *gk);

/* The most rows of a block (a multiple of mr, at least 48), and the
 * length of the A packing buffer fpl__exact_gemm_block needs. */
size_t fpl__exact_gemm_rows(const fpl__exact_gemm *gk);
size_t fpl__exact_gemm_apack_len(const fpl__exact_gemm *gk);

/* For rows A[0..rows) (rows <= 48, each K long) and B's panels q0 <= q <
 * q1: E[r*ld + c] = the binary64 evaluation of sum_k A[r][k] B[k][q0*nr
 * + c], G the same of the magnitudes, ld = (q1 - q0) nr; E and G hold
 * fpl__exact_gemm_rows(gk) x ld entries, apack
 * fpl__exact_gemm_apack_len(gk).  Exact where exact_gemm.c's
 * certificate holds.  Returns -1 on bad arguments. */
int fpl__exact_gemm_block(const fpl__exact_gemm *gk, const double *A, size_t rows, size_t q0,
			  size_t q1, double *E, double *G, double *apack);

/* e = the sum, as an fpl_exact. */
void fpl__grid_to_exact(const fpl__grid_sum *g, fpl_exact *e);

/*
 * error_gemm.c's per-output reference (fpl_accum_errors_gemm's first
 * half), for the tests: over packed pa (m x kk) and pbt (n x kk, B
 * transposed; NULL for sums), output o = i*n + j gets exact[o] (exact NULL: not kept), and, as
 * its class cls[o] says, rel[o], abserr[o], den[o] (the others are left
 * unwritten).  mode -1: the long accumulator for every output; 0: the
 * grid path where its certificate holds; > 0: the grid path with its
 * certificate widened by `mode` bits (wrong: the tests' mutant).
 * *ngrid (when not NULL) is increased by the outputs the grid path did.
 */
int fpl__accum_errors_outputs(double *exact, double *rel, double *abserr, double *den,
			      unsigned char *cls, const double *r, size_t ldr, size_t m,
			      size_t n, size_t kk, const double *pa, const double *pbt,
			      const double *c, size_t ldc, int mode, int threads,
			      uint64_t *progress, uint64_t *ngrid);

/* The same with the blocked path (exact_gemm.c) allowed when `blocked`
 * is 1 (fpl__accum_errors_outputs allows it); *nblock (when not NULL) is
 * increased by the outputs that path did. */
/* B may be given as pbt or, pbt NULL, as b with entry (k, j) at b[k*sbk
 * + j*sbj] (both NULL: sums).  Returns 0, or FPL_ENOMEM. */
int fpl__accum_errors_outputs_ex(double *exact, double *rel, double *abserr, double *den,
				 unsigned char *cls, const double *r, size_t ldr, size_t m,
				 size_t n, size_t kk, const double *pa, const double *pbt,
				 const double *b, ptrdiff_t sbk, ptrdiff_t sbj, const double *c,
				 size_t ldc, int mode, int blocked, int threads,
				 uint64_t *progress, uint64_t *ngrid, uint64_t *nblock);

#endif

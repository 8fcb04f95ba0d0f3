/* SPDX-License-Identifier: MIT */
/*
 * accum/accum_internal.h - the accumulation layer's private interface.
 *
 * The invariant a reader must know: every rounding of an output's chain
 * takes its draw index from fpl__acc_idx(job, step, output), the schedule
 * of accum.h, and nothing else; so a tile of outputs may be computed by
 * any thread in any order and give the same bits.  The unit of work is a
 * tile: one row i of outputs, columns j0 .. j0+nj-1 (nj <= FPL__ACC_TILE),
 * run step by step, each step over the whole tile (the shape a vectorised
 * kernel would take).
 */
#ifndef FPLAB_ACCUM_INTERNAL_H
#define FPLAB_ACCUM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/accum.h>

#include "engine/internal.h"
#include "kernels/kernels_internal.h"

#define FPL__ACC_TILE 64

/* pairs:B/L's block length at inner length K (K even or odd: L is even,
 * so K > L iff K rounded up to even is): L when L && K > L, else B. */
static inline size_t fpl__pair_block(const fpl_accum_model *m, size_t K)
{
	return m->pair_long && K > m->pair_long ? m->pair_long : m->pair_block;
}

/* Which implementation runs a job's chains (chain_fast.c chooses):
 * the reference (dot.c, the engine's scalar _ix operations), the
 * binary64 step kernels (sequential, blocked or evenodd, exact products:
 * each step's acc + a*b formed exactly in binary64, or to odd by the
 * kernel set's fma, then rounded by the set's block kernel), or binary32
 * hardware fma (chain_fma.c).  pairs and pairs:B reach them as
 * sequential and blocked jobs over a permuted copy (gemm.c).  Every path
 * gives the reference's bits, flags and counts; FPLAB_ACCUM=ref
 * (accum.h) forces the reference. */
enum { FPL__ACC_REF = 0, FPL__ACC_EXACT64, FPL__ACC_ODD64, FPL__ACC_FMA32, FPL__ACC_NE64,
       FPL__ACC_FUSED64, FPL__ACC_NPATHS };

/* One operation, its inputs already loaded into their formats. */
typedef struct fpl__acc_job {
	const fpl_accum_model *m;
	const fpl_state *st;
	size_t M, N, K;
	int sum;		/* value terms (fpl_accum_sum): no B, no products */
	const double *A;	/* M x K row-major, loaded */
	const double *B;	/* K x N row-major, loaded; NULL for a sum */
	const double *C;	/* M x N row-major, loaded initial values, or NULL */
	int keep_first;		/* blocked without C: block 0's result is R itself,
				 * not +0 + block 0 in promo (pairs:B run over its
				 * permuted copy, gemm.c) */
	uint64_t base;		/* draw index of step 0 of output 0 */
	uint64_t MN;
	fpl_format f64;		/* binary64, for exact comparisons */
	fpl_state plain;	/* no flips: the state of those comparisons */
	/* fast paths (chain_fast.c, chain_fma.c); path 0 = reference */
	int path;		/* FPL__ACC_* */
	int simd;		/* 1: fma32, ne64 and sp may use their AVX2 kernels;
				 * 2: also the AVX-512 ones (x86/) */
	const fpl_kernels *k;	/* binary64 paths: the kernel set, read once */
	fpl_kparams kp;		/* its parameters for acc and acc_rnd */
	int promo_fast;		/* blocked: the block additions in promo by
				 * the set's rounding too (chain_fast.c) */
	fpl_kparams kpp;	/* the parameters for promo and acc_rnd */
	float *Af, *Bf;		/* fma32 path: A and B as binary32; eo32: Bf (owned) */
	int verify;		/* ne64 on AVX-512 or AVX2 only: steps not exact
				 * by the static condition, each checked by TwoSum
				 * (x86/chain_ne_avx512.c, x86/chain_ne64_avx2.c) */
	double *Bp;		/* ne64 on AVX-512 or verified: B packed by
				 * column panels of FPL__ACC_TILE, panel p's (k, jj) at
				 * Bp[(p*K + k)*FPL__ACC_TILE + jj] (owned), or NULL */
	int whole;		/* fma32 path without inexact tracking: the whole
				 * GEMM in one register-blocked kernel */
	int tz_trunc;		/* EXACT64 or ODD64 in mode tz: 1 the chains by
				 * truncation, 2 also blocked's promo additions
				 * (chain_blocked.h) */
	int lean;		/* ne64 without verify whose tiny sums are exact
				 * (chain_ne.c: the lean kernels); Bp is then set;
				 * 2: the AVX2 lean kernel with exactness checked
				 * per range (chain_ne.c's lean2, chain_fast.c's
				 * lean2_ok) */
	double *bmax;		/* lean: bmax[p*K + k] = max |B[k][j]| over panel p's
				 * columns (inf where one is NaN) (owned) */
	double *bmin;		/* lean 2: the least nonzero |B[k][j]| over panel
				 * p's columns (inf where none), as bmax (owned) */
	int eo32;		/* evenodd in binary32 (chain_fast.c's eo32_ok): 1 on
				 * AVX-512 (x86/chain_ne_avx512.c), 2 on AVX2
				 * (chain_ne.c); Bf then holds B packed as Bp, in
				 * binary32 */
	int ro32;		/* sequential or blocked tiles in binary32 on
				 * AVX-512 (chain_fast.c's ro32_ok,
				 * x86/chain_ro32_avx512.c); Bf then holds B
				 * packed as for eo32 */
	/* the block order (dot.c): A's block scales As[i*nb + j], B's
	 * Bs[j*N + col] (nb = ceil(K/B), NaN for a NaN block) and the tensor
	 * scales (1 without ts) */
	const double *As, *Bs;
	double ats, bts;
} fpl__acc_job;

/* A tile being computed: flags per output and event counts. */
typedef struct fpl__acc_tile {
	const fpl__acc_job *J;
	size_t i, j0, nj;
	unsigned fl[FPL__ACC_TILE];
	uint64_t cnt[FPL_NFLAGS];
	double *scratch;	/* fused: 2F+1 doubles */
} fpl__acc_tile;

static inline uint64_t fpl__acc_idx(const fpl__acc_tile *T, uint64_t step, size_t jj)
{
	const fpl__acc_job *J = T->J;
	return J->base + step * J->MN + (uint64_t)(T->i * J->N + T->j0 + jj);
}

/* Record the flags of one rounding of output jj. */
static inline void fpl__acc_note(fpl__acc_tile *T, size_t jj, unsigned f)
{
	T->fl[jj] |= f;
	while (f) {
		T->cnt[__builtin_ctz(f)]++;
		f &= f - 1;
	}
}

/* Is x a value of f (accum.h, Loads: rounding it to nearest into f, ftz
 * read as subnormals and without DAZ, gives x back; NaN and inf by the
 * specials)?  (load.c) */
int fpl__acc_is_value(const fpl_format *f, double x);
/* Load buf[0..n) into f in place: check it (FPL_LOAD_GIVEN: FPL_ERANGE
 * for a non-value) or round it with draws c0, c0+1, ... of a copy of st,
 * adding the flag counts into cnt (may be NULL).  0 or a status. */
int fpl__acc_load(double *buf, size_t n, const fpl_format *f, fpl_load kind, fpl_rnd rnd,
		  const fpl_state *st, uint64_t c0, uint64_t *cnt);

/*
 * Load operand `which` (0: A, rows x cols = M x K; 1: B, K x N) in place
 * by the model's rule: a block operand by fpl_block_round over the whole
 * matrix (accum.h, Block formats; its events added into bs when not
 * NULL), any other by fpl__acc_load.  Draws c0 + row-major index either
 * way.  0 or a status.  (load.c; the one load of gemm.c, error.c and
 * reduce.c.)
 */
int fpl__acc_load_operand(double *buf, size_t rows, size_t cols, const fpl_accum_model *m,
			  int which, const fpl_state *st, uint64_t c0, uint64_t *cnt,
			  fpl_block_stats *bs);

/* The block order's K-block: A's 1-D block size. */
static inline size_t fpl__acc_kblock(const fpl_accum_model *m)
{
	return m->a_blk.size > 0 ? (size_t)m->a_blk.size : 1;
}

/* Compute the tile's outputs into res[0..nj) (dot.c). */
void fpl__acc_tile_run(fpl__acc_tile *T, double *res);

/* The output rounding (step S-1) of the tile's results, when out_set
 * (dot.c); the fast paths end with it as the reference does. */
void fpl__acc_tile_out(fpl__acc_tile *T, double *res);

/*
 * chain_fast.c: choose J->path for a job whose inputs are loaded (reads
 * FPLAB_ACCUM), preparing what the path needs.  0, FPL_ENOTFOUND for an
 * unknown FPLAB_ACCUM value, or FPL_ENOMEM.  fpl__acc_fast_release frees
 * what it prepared.  fpl__acc_fast_tile runs a tile on the chosen fast
 * path: 1 when done (res, T->fl, T->cnt as the reference would leave
 * them), 0 when the caller must run the reference on the untouched tile.
 */
int fpl__acc_fast_plan(fpl__acc_job *J);
/* Jobs run so far on each path (FPL__ACC_*), for tests/taccum_fast.c to
 * see that a path was taken; updated atomically, never read here. */
extern uint64_t fpl__acc_path_runs[FPL__ACC_NPATHS];
void fpl__acc_fast_release(fpl__acc_job *J);
int fpl__acc_fast_tile(fpl__acc_tile *T, double *res);

/* chain_fma.c: can the job run on binary32 hardware fma (checks the
 * model and the loaded data; sets J->Af, J->Bf)?  1 yes, 0 no,
 * FPL_ENOMEM.  The tile runner: as fpl__acc_fast_tile. */
int fpl__acc_fma32_prepare(fpl__acc_job *J);
int fpl__acc_fma32_tile(fpl__acc_tile *T, double *res);
/* The whole job (J->whole) in `threads` threads, into out[i*soi + j*soj]
 * with flags_out (when not NULL) all 0: 1 done, 0 when some output
 * overflowed (nothing written; the tiles then run), FPL_ENOMEM. */
/* Jobs completed by fpl__acc_fma32_whole (for tests/taccum_fast.c). */
extern uint64_t fpl__acc_whole_runs;
int fpl__acc_fma32_whole(const fpl__acc_job *J, double *out, ptrdiff_t soi, ptrdiff_t soj,
			 unsigned *flags_out, int threads);

/* chain_ne.c: EXACT64 chains in mode ne, rounded in registers: the
 * chains over k = k0, k0+ks, ... below k1 of the tile in s[] (step
 * numbers k), flags and counts noted in T. */
void fpl__acc_ne64_chain(fpl__acc_tile *T, size_t k0, size_t k1, size_t ks, double *s);
/* The reference's step for lane jj of the tile (fpl__fma_ix into acc
 * with draw idx), its flags noted in T: what a kernel cannot do. */
double fpl__acc_ne64_slow(fpl__acc_tile *T, double a, double b, double s, uint64_t idx,
			  size_t jj);
/* x86/chain_ne_avx512.c (J->simd >= 2; acc->m <= 50): the same chains
 * with every lane's running sum in registers; cnt[jj] += the number of
 * inexact steps of lane jj that the kernel rounded itself (the slow
 * lanes' flags go to T by fpl__acc_ne64_slow). */
void fpl__acc_ne64_avx512(fpl__acc_tile *T, size_t k0, size_t k1, size_t ks, double *s,
			  uint64_t *cnt);
/* Chain ranges run by it (for tests/taccum_fast.c; atomic, never read). */
extern uint64_t fpl__acc_ne64_avx512_runs;
/* x86/chain_ne64_avx2.c (J->verify with J->simd == 1): the verified
 * chains on AVX2, over k = k0, k0+ks, ... below k1 of the tile in s[]
 * (step numbers k), flags and counts noted in T.  Ranges run and group
 * steps redone lane by lane (tests; atomic). */
void fpl__acc_ne64_avx2(fpl__acc_tile *T, size_t k0, size_t k1, size_t ks, double *s);
extern uint64_t fpl__acc_ne64_avx2_runs, fpl__acc_ne64_avx2_redos;
/* x86/chain_ne_avx512.c, the lean kernel (J->lean, chain_ne.c states
 * when a range may run it): the 64 chains of s[0..64) over k = k0, k0+ks,
 * ... below k1, a_k = arow[k], b_kj = bp[k*64 + j]; cnt[j] += the
 * inexact steps of lane j.  No lane is left to the reference. */
void fpl__acc_ne64_lean_avx512(const double *arow, const double *bp, size_t k0, size_t k1,
			       size_t ks, int m, double *s, uint64_t *cnt);
/* Chunks run by the lean kernels, AVX-512 or AVX2 (tests; atomic). */
extern uint64_t fpl__acc_ne64_lean_runs;
/* Ranges run by the AVX2 lean kernel with exactness checked per range
 * (J->lean == 2, chain_ne.c), lanes of them rerun for a tiny sum, weak
 * steps checked by TwoSum (tests; atomic). */
extern uint64_t fpl__acc_ne64_lean2_runs, fpl__acc_ne64_lean2_reruns, fpl__acc_ne64_lean2_weak;
/* x86/chain_ne_avx512.c (J->eo32): the evenodd tile in binary32, res[]
 * holding the initial values in and the results out (before the output
 * rounding), flags and counts noted in T. */
void fpl__acc_eo32_avx512(fpl__acc_tile *T, double *res);
/* The same on AVX2 (J->eo32 == 2, chain_ne.c). */
void fpl__acc_eo32_avx2(fpl__acc_tile *T, double *res);
/* Tiles run by it (tests; atomic). */
extern uint64_t fpl__acc_eo32_runs;
/* x86/chain_sp_avx512.c (J->path EXACT64, acc_rnd sp, J->simd >= 2,
 * so acc->m <= 50): the EXACT64 chains in mode sp, every lane's running
 * sum and draws in registers; cnt[jj] += the inexact steps of lane jj
 * that the kernel rounded itself (the others' flags go to T by
 * fpl__acc_ne64_slow, which runs any mode).  Its ranges run: as above. */
void fpl__acc_sp64_avx512(fpl__acc_tile *T, size_t k0, size_t k1, size_t ks, double *s,
			  uint64_t *cnt);
extern uint64_t fpl__acc_sp64_avx512_runs;
/* x86/chain_sp_avx2.c: the same chains on AVX2 (J->simd == 1, acc->m <=
 * 50: chain_fast.c's sp_simd), the same contract; its ranges run. */
void fpl__acc_sp64_avx2(fpl__acc_tile *T, size_t k0, size_t k1, size_t ks, double *s,
			uint64_t *cnt);
extern uint64_t fpl__acc_sp64_avx2_runs;
/* For tests: hi[i] = the high 32 bits of fpl__mix64(z[i]) as that
 * kernel computes them (kernels/x86/draw_avx2.h; with xs = 0 bit 0 is
 * unspecified), for i below n rounded down to a multiple of 4. */
void fpl__acc_sp64_avx2_draws(const uint64_t *z, size_t n, int xs, uint64_t *hi);

/* x86/chain_ro32_avx512.c (J->ro32): the whole sequential or blocked
 * tile, res[] holding the initial values in and the results out (before
 * the output rounding), flags and counts noted in T: 1, or 0 (nothing
 * touched) when an initial value is not a binary32 value bit for bit. */
int fpl__acc_ro32_avx512(fpl__acc_tile *T, double *res);
/* Tiles run by it (tests; atomic). */
extern uint64_t fpl__acc_ro32_runs;

/* chain_fused.c: can the job run the FUSED64 path (exact fused groups,
 * exact binary64 products, no partial sum overflowing: the static part;
 * the kernel set is checked by the caller)?  The tile runner: as
 * fpl__acc_fast_tile.  x86/chain_fused_avx512.c: its group sums on
 * AVX-512 (J->simd >= 2), chain_fused_body.h's contract;
 * x86/chain_fused_avx2.c: the same on AVX2 (J->simd == 1). */
int fpl__acc_fused64_ok(const fpl__acc_job *J);
int fpl__acc_fused64_tile(fpl__acc_tile *T, double *res);
void fpl__acc_fused_sums_avx512(const double *arow, const double *b, size_t ldb, size_t nj,
				size_t k0, size_t k1, double *sum, unsigned char *bad);
void fpl__acc_fused_sums_avx2(const double *arow, const double *b, size_t ldb, size_t nj,
			      size_t k0, size_t k1, double *sum, unsigned char *bad);
/* Calls of it (tests; atomic). */
extern uint64_t fpl__acc_fused_avx2_runs;

/*
 * fused.c: one group of a fused order: S plus the nt terms ops[1+2t] *
 * ops[2+2t] (ops[0] = S; values have 1.0 as their second factor), summed
 * as accum.h says and rounded once into m->acc with draw idx.
 */
double fpl__acc_fused_group(const fpl_accum_model *m, double *ops, size_t nt,
			    const fpl_state *st, uint64_t idx, unsigned *fl);

/* 1 unless FPLAB_ACCUM asks for the reference path only (or is invalid:
 * fpl__acc_fast_plan then reports the error). */
int fpl__acc_fast_allowed(void);

/* reduce.c: 1 makes exp and log always go through MPFR (tests compare
 * the shortcut with it); 0 by default. */
extern int fpl__reduce_mpfr_only;

/* f = the catalogue format `name` (model.c). */
void fpl__acc_fmt(fpl_format *f, const char *name);

/* Does the model add block results in promo (blocked, pairs:B, fused/P)? */
static inline int fpl__acc_promotes(const fpl_accum_model *m)
{
	return m->order == FPL_ORDER_BLOCKED || (m->order == FPL_ORDER_PAIRS && m->pair_block)
	       || (m->order == FPL_ORDER_FUSED && m->fused_promote);
}

/* The mode of the additions into promo: promo_rnd for fused/P, acc_rnd
 * for blocked and pairs:B. */
static inline fpl_rnd fpl__acc_promo_rnd(const fpl_accum_model *m)
{
	return m->order == FPL_ORDER_FUSED ? m->promo_rnd : m->acc_rnd;
}

/* The running-sum format: promo for blocked and pairs:B, acc otherwise. */
static inline const fpl_format *fpl__acc_sum_format(const fpl_accum_model *m)
{
	return fpl__acc_promotes(m) ? &m->promo : &m->acc;
}

/* The running-sum format's mode (C is loaded into the sum format in it). */
static inline fpl_rnd fpl__acc_sum_rnd(const fpl_accum_model *m)
{
	return fpl__acc_promotes(m) ? fpl__acc_promo_rnd(m) : m->acc_rnd;
}

#endif

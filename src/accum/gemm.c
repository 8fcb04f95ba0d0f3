/* SPDX-License-Identifier: MIT */
/*
 * gemm.c - the drivers: fpl_accum_gemm, fpl_accum_dot and fpl_accum_sum
 * load their inputs (the draw ranges of accum.h's schedule), split the
 * outputs into tiles (one row, up to FPL__ACC_TILE columns), run the
 * tiles in st->threads threads and merge the flags.
 *
 * Before the tiles run, chain_fast.c picks the job's path (the
 * reference, or a fast path that gives the same bits, flags and counts).
 * A pairs or pairs:B job with exact products is first rewritten as a
 * sequential or blocked job over a permuted, padded copy of A and B
 * (permute_pairs; accum_run argues the equality), which the fast paths
 * take; when none does, the job runs as written, on dot.c's pairs().
 * A job on the binary32 fma path whose caller does not track inexact
 * (st->untracked) runs as one register-blocked GEMM instead of tiles.
 * Flags in st->untracked are dropped here, after every path.
 *
 * The invariant: nothing here decides a draw index but the load ranges;
 * a tile's roundings take theirs from the schedule, so which thread runs
 * which tile changes no bit.  The state is read-only while threads run
 * and is written once at the end (flags, counts, counter), and only on
 * success.
 */
#include <stdlib.h>
#include <string.h>

#include "accum/accum_internal.h"
#include "util/parallel.h"
#include "util/scratch.h"

/* One operation as strides: A[i][k] = a[i*sai + k*sak], and so on. */
typedef struct opdesc {
	size_t M, N, K;
	int sum;
	const double *a, *b, *c;
	ptrdiff_t sai, sak, sbk, sbj, sci, scj;
	double *out;
	ptrdiff_t soi, soj;
	unsigned *flags_out;
} opdesc;

typedef struct worker {
	const fpl__acc_job *J;
	const opdesc *d;
	size_t t0, t1;		/* tiles */
	uint64_t cnt[FPL_NFLAGS];
	double *scratch;
} worker;

static void *work(void *arg)
{
	worker *w = arg;
	const fpl__acc_job *J = w->J;
	const opdesc *d = w->d;
	size_t t, jj, q;
	double res[FPL__ACC_TILE];

	for (t = w->t0; t < w->t1; t++) {
		fpl__acc_tile T;
		memset(&T, 0, sizeof T);
		T.J = J;
		/* column panel by column panel, rows within a panel: the
		 * panel's K x 64 slice of B stays in cache across the rows
		 * (tiles are independent, accum_internal.h: any order) */
		T.i = t % J->M;
		T.j0 = (t / J->M) * FPL__ACC_TILE;
		T.nj = J->N - T.j0 < FPL__ACC_TILE ? J->N - T.j0 : FPL__ACC_TILE;
		T.scratch = w->scratch;
		fpl__acc_tile_run(&T, res);
		for (jj = 0; jj < T.nj; jj++) {
			size_t j = T.j0 + jj;
			d->out[(ptrdiff_t)T.i * d->soi + (ptrdiff_t)j * d->soj] = res[jj];
			if (d->flags_out)
				d->flags_out[T.i * J->N + j] = T.fl[jj] & ~J->st->untracked;
		}
		for (q = 0; q < FPL_NFLAGS; q++)
			w->cnt[q] += T.cnt[q];
		if (J->st->progress)
			__atomic_fetch_add(J->st->progress, (uint64_t)T.nj * J->K, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Run the tiles in `threads` threads (contiguous ranges of tiles). */
static int run_tiles(const fpl__acc_job *J, const opdesc *d, int threads, uint64_t *cnt)
{
	size_t ntiles = J->M * ((J->N + FPL__ACC_TILE - 1) / FPL__ACC_TILE), q;
	size_t scratch = J->m->order == FPL_ORDER_FUSED ? 2 * J->m->block + 1
			 : J->m->order == FPL_ORDER_BLOCK ? 2 * fpl__acc_kblock(J->m) + 1 : 0;
	worker w[FPL_MAX_THREADS];
	int t, st = 0;

	threads = fpl__spawn_threads(threads, ntiles,
				     (double)J->M * (double)J->N * ((double)J->K + 1), 8192);
	memset(w, 0, sizeof w);
	for (t = 0; t < threads; t++) {
		w[t].J = J;
		w[t].d = d;
		fpl__spawn_share(ntiles, threads, t, &w[t].t0, &w[t].t1);
		if (scratch && !(w[t].scratch = malloc(scratch * sizeof(double))))
			st = FPL_ENOMEM;
	}
	if (!st) {
		fpl__spawn(work, w, sizeof *w, threads);
	}
	for (t = 0; t < threads; t++) {
		for (q = 0; q < FPL_NFLAGS; q++)
			cnt[q] += w[t].cnt[q];
		free(w[t].scratch);
	}
	return st;
}

static int size_mul(size_t a, size_t b, size_t *r)
{
	return __builtin_mul_overflow(a, b, r) ? FPL_ERANGE : 0;
}

/*
 * The permuted, padded copy of a pairs job (accum_run says why it is
 * the same computation): *Ap and *Bp (scratch, the caller frees them)
 * hold A and B over k = 1, 0, 3, 2, ..., with +0 in place of k = K when
 * K is odd; *seq is m as sequential (pairs) or blocked:B:promo (pairs:B)
 * and J runs it.  0, FPL_ERANGE or FPL_ENOMEM.
 */
static int permute_pairs(const fpl_accum_model *m, const opdesc *d, const double *A,
			 const double *B, fpl__acc_job *J, fpl_accum_model *seq, double **Ap,
			 double **Bp)
{
	const size_t K = d->K, KP = K + (K & 1);
	size_t nA, nB, i, k;
	double *a, *b;

	if (size_mul(d->M, KP, &nA) || size_mul(KP, d->N, &nB))
		return FPL_ERANGE;
	*Ap = a = fpl__scratch_alloc(nA * sizeof *a);
	*Bp = b = fpl__scratch_alloc(nB * sizeof *b);
	if (!a || !b)
		return FPL_ENOMEM;
	for (i = 0; i < d->M; i++)
		for (k = 0; k < KP; k++)
			a[i * KP + k] = (k ^ 1) < K ? A[i * K + (k ^ 1)] : 0.0;
	for (k = 0; k < KP; k++)
		for (i = 0; i < d->N; i++)
			b[k * d->N + i] = (k ^ 1) < K ? B[(k ^ 1) * d->N + i] : 0.0;
	*seq = *m;
	if (m->pair_block) {
		seq->order = FPL_ORDER_BLOCKED;
		seq->block = fpl__pair_block(m, K);
		J->keep_first = 1;
	} else {
		seq->order = FPL_ORDER_SEQUENTIAL;
	}
	J->m = seq;
	J->K = KP;
	J->A = a;
	J->B = b;
	return 0;
}

/*
 * The block order's scales (accum.h), from the operands before loading:
 * fpl_block_scales gives the scales fpl_block_round uses (same
 * descriptor, same data, no draw), A's as an M x nb grid, B's as nb x N.
 * 0, FPL_ENOMEM or the status of fpl_block_scales.
 */
static int block_scales(const fpl_accum_model *m, const opdesc *d, const double *A,
			const double *B, double **As, double **Bs, double *ats, double *bts)
{
	const size_t nb = (d->K + fpl__acc_kblock(m) - 1) / fpl__acc_kblock(m);
	const size_t da[2] = { d->M, d->K }, db[2] = { d->K, d->N };
	int r;

	*As = malloc((d->M * nb + 1) * sizeof **As);
	*Bs = malloc((nb * d->N + 1) * sizeof **Bs);
	if (!*As || !*Bs)
		return FPL_ENOMEM;
	*ats = *bts = 1.0;
	if (!d->K)
		return 0;
	if ((r = fpl_block_scales(&m->a_blk, *As, ats, A, da, 2, NULL)))
		return r;
	return fpl_block_scales(&m->b_blk, *Bs, bts, B, db, 2, NULL);
}

static int accum_run(const fpl_accum_model *m, const opdesc *d, fpl_state *st)
{
	size_t nA, nB, nC, i, k;
	uint64_t cnt[FPL_NFLAGS] = { 0 }, c0, L, S;
	double *A = NULL, *B = NULL, *C = NULL, *Ap = NULL, *Bp = NULL, *As = NULL, *Bs = NULL;
	fpl_accum_model seq;
	fpl__acc_job J;
	int r;

	memset(&J, 0, sizeof J);
	if (!st || !m || !d->out || (d->K && (!d->a || (!d->sum && !d->b))))
		return FPL_EINVAL;
	if ((r = fpl_accum_check(m, st)))
		return r;
	if (d->sum && m->order == FPL_ORDER_BLOCK)
		return FPL_EINVAL;	/* a sum has no products to block */
	if (size_mul(d->M, d->K, &nA) || size_mul(d->K, d->sum ? 0 : d->N, &nB)
	    || size_mul(d->M, d->N, &nC) || nA > ((size_t)1 << 58) || nB > ((size_t)1 << 58))
		return FPL_ERANGE;
	A = fpl__scratch_alloc(nA * sizeof *A);
	B = fpl__scratch_alloc(nB * sizeof *B);
	C = d->c ? fpl__scratch_alloc(nC * sizeof *C) : NULL;
	if (!A || !B || (d->c && !C)) {
		r = FPL_ENOMEM;
		goto out;
	}
	for (i = 0; i < d->M; i++)
		for (k = 0; k < d->K; k++)
			A[i * d->K + k] = d->a[(ptrdiff_t)i * d->sai + (ptrdiff_t)k * d->sak];
	for (k = 0; k < d->K && !d->sum; k++)
		for (i = 0; i < d->N; i++)
			B[k * d->N + i] = d->b[(ptrdiff_t)k * d->sbk + (ptrdiff_t)i * d->sbj];
	for (i = 0; C && i < nC; i++)
		C[i] = d->c[(ptrdiff_t)(i / d->N) * d->sci + (ptrdiff_t)(i % d->N) * d->scj];
	c0 = st->counter;
	if (m->order == FPL_ORDER_BLOCK && !d->sum
	    && (r = block_scales(m, d, A, B, &As, &Bs, &J.ats, &J.bts)))
		goto out;
	if ((r = fpl__acc_load_operand(A, d->M, d->K, m, 0, st, c0, cnt, NULL))
	    || (r = fpl__acc_load_operand(B, d->K, d->sum ? 0 : d->N, m, 1, st, c0 + nA, cnt,
					  NULL))
	    || (C && (r = fpl__acc_load(C, nC, fpl__acc_sum_format(m), m->a_load, fpl__acc_sum_rnd(m),
					st, c0 + nA + nB, cnt))))
		goto out;
	L = (uint64_t)nA + nB + nC;
	S = fpl_accum_steps(m, d->K, d->sum);
	J.m = m;
	J.st = st;
	J.M = d->M;
	J.N = d->N;
	J.K = d->K;
	J.sum = d->sum;
	J.A = A;
	J.B = d->sum ? NULL : B;
	J.C = C;
	J.As = As;
	J.Bs = Bs;
	if (m->order == FPL_ORDER_PAIRS && m->prod_exact && !d->sum && d->K
	    && fpl__acc_fast_allowed()) {
		/* pairs is the sequential chain over k = 1, 0, 3, 2, ..., with
		 * the +0 pad element in place of k = K when K is odd: the same
		 * operations on the same operands, and the same step numbers
		 * (position q of that order is step q: the odd element of pair
		 * i is step 2i, the even one 2i + 1, accum.h), hence the same
		 * draws and counts.  So it runs as a sequential job over the
		 * permuted, padded copy, and takes the sequential fast paths
		 * (FPLAB_ACCUM=ref keeps dot.c's pairs(), the reference).
		 * pairs:B is blocked:B:promo over that copy: B is even, so
		 * block j of the copy, positions [jB, jB+B), holds exactly the
		 * pairs of block j (the pad included), each chain from +0; its
		 * R + block j is step KP + j = 2*ceil(K/2) + j, and the output
		 * step KP + ceil(KP/B) is pairs:B's, since ceil(KP/B) =
		 * ceil(K/B) for an even B.  The one difference, block 0 taken
		 * as it is without C, is keep_first. */
		if ((r = permute_pairs(m, d, A, B, &J, &seq, &Ap, &Bp)))
			goto out;
	}
	J.base = c0 + L;
	J.MN = nC;
	fpl_format_ieee(&J.f64, 11, 52);
	fpl_state_init(&J.plain, 0);
	if ((r = fpl__acc_fast_plan(&J)))
		goto out;
	if (J.path == FPL__ACC_REF && J.m == &seq) {
		/* no fast path for it: the reference runs the order itself */
		J.m = m;
		J.K = d->K;
		J.A = A;
		J.B = B;
		J.keep_first = 0;
	}
	r = 0;
	if (J.path == FPL__ACC_FMA32 && J.whole)
		r = fpl__acc_fma32_whole(&J, d->out, d->soi, d->soj, d->flags_out, st->threads);
	r = r < 0 ? r : r ? 0 : run_tiles(&J, d, st->threads, cnt);
	fpl__acc_fast_release(&J);
	if (r)
		goto out;
	for (i = 0; i < FPL_NFLAGS; i++) {
		if (st->untracked & (1u << i))
			continue;
		st->count[i] += cnt[i];
		if (cnt[i])
			st->flags |= 1u << i;
	}
	st->counter = c0 + L + S * nC;
out:
	free(As);
	free(Bs);
	fpl__scratch_free(Ap);
	fpl__scratch_free(Bp);
	fpl__scratch_free(A);
	fpl__scratch_free(B);
	fpl__scratch_free(C);
	return r;
}

int fpl_accum_gemm(double *c, size_t ldc, const fpl_accum_model *mod, int beta, size_t m,
		   size_t n, size_t kk, const double *a, size_t lda, int transa,
		   const double *b, size_t ldb, int transb, unsigned *flags_out, fpl_state *st)
{
	opdesc d;

	memset(&d, 0, sizeof d);
	if (!c || (m && n && ldc < n) || (beta != 0 && beta != 1))
		return FPL_EINVAL;
	if (m == 0 || n == 0)
		return mod && st ? fpl_accum_check(mod, st) : FPL_EINVAL;
	d.M = m;
	d.N = n;
	d.K = kk;
	d.a = a;
	d.sai = transa ? 1 : (ptrdiff_t)lda;
	d.sak = transa ? (ptrdiff_t)lda : 1;
	d.b = b;
	d.sbk = transb ? 1 : (ptrdiff_t)ldb;
	d.sbj = transb ? (ptrdiff_t)ldb : 1;
	d.c = beta ? c : NULL;
	d.sci = d.soi = (ptrdiff_t)ldc;
	d.scj = d.soj = 1;
	d.out = c;
	d.flags_out = flags_out;
	if (kk && ((!transa && lda < kk) || (transa && lda < m) || (!transb && ldb < n)
		   || (transb && ldb < kk)))
		return FPL_EINVAL;
	return accum_run(mod, &d, st);
}

int fpl_accum_dot(double *r, const fpl_accum_model *m, size_t n, const double *x,
		  ptrdiff_t incx, const double *y, ptrdiff_t incy, const double *c,
		  unsigned *flags_out, fpl_state *st)
{
	opdesc d;

	memset(&d, 0, sizeof d);
	d.M = d.N = 1;
	d.K = n;
	d.a = x;
	d.sak = incx;
	d.b = y;
	d.sbk = incy;
	d.c = c;
	d.out = r;
	d.flags_out = flags_out;
	return accum_run(m, &d, st);
}

int fpl_accum_sum(double *r, const fpl_accum_model *m, size_t n, const double *x,
		  ptrdiff_t incx, const double *c, unsigned *flags_out, fpl_state *st)
{
	opdesc d;

	memset(&d, 0, sizeof d);
	d.M = d.N = 1;
	d.K = n;
	d.sum = 1;
	d.a = x;
	d.sak = incx;
	d.c = c;
	d.out = r;
	d.flags_out = flags_out;
	return accum_run(m, &d, st);
}

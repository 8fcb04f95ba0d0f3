/* SPDX-License-Identifier: MIT */
/*
 * allreduce_round.c - one node's roundings in an all-reduce
 * (fplab/allreduce.h): the configuration defaults, the APS shift, the
 * initial cast, the send and the add.  The MPI runner calls exactly
 * these, and so does the simulator, which is what makes their bits equal.
 *
 * The invariant a reader must know: every rounding takes its draw from
 * the explicit index of the header's layout (cast e, send (2s+1)n + e,
 * add (2s+2)n + e), never from node->counter, so a rank, a thread or a
 * simulated node computes the same bits whatever else it has done.
 *
 * APS's k: with max|g| = m = M1 * 2^a and comm.max = M2 * 2^b (M1, M2
 * the 53-bit integer significands of fpl__split), P * m * 2^k <
 * comm.max reads A * 2^d < M2 with A = P * M1 (an integer below 2^85)
 * and d = a - b + k.  The largest such d is lm - la or one less, where
 * la and lm are the bit lengths of A and M2: at d = lm - la both sides
 * have the same length, and at d - 1 the left one is shorter.  The
 * comparison is between integers, so k is exact, not a binary64 guess.
 */
#include <math.h>
#include <string.h>

#include <fplab/block.h>

#include <fplab/allreduce.h>
#include <fplab/error.h>
#include <fplab/ops.h>

#include "engine/internal.h"

void fpl_ar_config_init(fpl_ar_config *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof *cfg);
	cfg->algo = FPL_AR_RING;
	cfg->nodes = 1;
	cfg->group = 1;
	fpl_format_lookup(&cfg->comm, "fp32");	/* binary32, by its catalogue name */
	cfg->acc = cfg->comm;
	cfg->comm_rnd = FPL_RND_NE;
	cfg->acc_rnd = FPL_RND_NE;
	cfg->scaling = FPL_AR_SCALE_NONE;
	cfg->loss_scale = 1;
	cfg->keep_fp32 = 0;
	cfg->threads = 1;
}

/* The formats and modes a layer really uses (keep_fp32: binary32, ne). */
typedef struct eff {
	fpl_format f32;
	const fpl_format *comm, *acc;
	fpl_rnd comm_rnd, acc_rnd;
	fpl_ar_scaling scaling;
	const fpl_block_format *blk;	/* a block comm format, or NULL */
} eff;

static void effective(eff *E, const fpl_ar_config *cfg)
{
	if (cfg->keep_fp32) {
		fpl_format_ieee(&E->f32, 8, 23);
		E->comm = E->acc = &E->f32;
		E->comm_rnd = E->acc_rnd = FPL_RND_NE;
		E->scaling = FPL_AR_SCALE_NONE;
		E->blk = NULL;
	} else {
		E->comm = &cfg->comm;
		E->acc = &cfg->acc;
		E->comm_rnd = cfg->comm_rnd;
		E->acc_rnd = cfg->acc_rnd;
		E->scaling = cfg->scaling;
		E->blk = cfg->comm_is_block ? &cfg->comm_block : NULL;
	}
}

/*
 * A block comm format: x[0..len-1] quantized and dequantized as one 1-D
 * tensor (blocks from x[0]) into y, element j drawing index base + j.
 * fpl_block_round numbers its draws from st->counter, so the counter is
 * set to base for the call and restored after: the node's counter is
 * neither read nor changed, as for the plain roundings.  The flags and
 * counts of the element roundings go into node as fpl__commit puts
 * them.  fpl_block_round fails only for want of memory (the arguments are
 * valid by construction); y is then NaN, so the failure shows in the
 * result and its nan count instead of passing unnoticed.
 */
static void block_round(double *y, const double *x, size_t len, uint64_t base, const eff *E,
			fpl_state *node)
{
	uint64_t saved = node->counter;
	size_t dims[1] = { len }, j;

	if (!len)
		return;
	node->counter = base;
	if (fpl_block_round(E->blk, y, x, dims, 1, E->comm_rnd, node, NULL))
		for (j = 0; j < len; j++)
			y[j] = NAN;
	node->counter = saved;
}

static int bitlen128(unsigned __int128 x)
{
	uint64_t hi = (uint64_t)(x >> 64);
	return hi ? 128 - __builtin_clzll(hi) : 64 - __builtin_clzll((uint64_t)x);
}

int fpl_ar_aps_shift(const fpl_ar_config *cfg, double global_max_abs)
{
	unsigned __int128 A, B;
	int sa, ea, sb, eb, la, lb, d;
	uint64_t Ma, Mb;
	double m = fabs(global_max_abs), M;

	if (!cfg || cfg->keep_fp32 || cfg->scaling != FPL_AR_SCALE_APS || cfg->nodes == 0)
		return 0;
	M = cfg->comm.max;
	if (m == 0 || !isfinite(m) || !(M > 0) || !isfinite(M))
		return 0;
	fpl__split(m, &sa, &ea, &Ma);
	fpl__split(M, &sb, &eb, &Mb);
	A = (unsigned __int128)cfg->nodes * Ma;
	B = Mb;
	la = bitlen128(A);
	lb = bitlen128(B);
	d = lb - la;
	/* A * 2^d < B?  Both sides have lb bits, so the shifts stay in 128. */
	if (!(d >= 0 ? (A << d) < B : A < (B << -d)))
		d--;
	/* d = a - b + k with a = ea - 52, b = eb - 52 */
	return d - ea + eb;
}

void fpl_ar_round_cast(double *y, const double *g, size_t len, uint64_t lo, int shift,
		       const fpl_ar_config *cfg, fpl_state *node)
{
	eff E;
	size_t j;

	effective(&E, cfg);
	if (E.blk) {	/* scaling is none: fpl_allreduce refuses the others */
		block_round(y, g, len, lo, &E, node);
		return;
	}
	for (j = 0; j < len; j++) {
		double x = g[j], r;
		uint64_t idx = lo + j;
		unsigned fl = 0;

		if (E.scaling == FPL_AR_SCALE_LOSS) {
			r = fpl__mul_ix(E.comm, x, cfg->loss_scale, E.comm_rnd, node, idx, &fl);
		} else if (E.scaling == FPL_AR_SCALE_APS && shift != 0 && isfinite(x) && x != 0) {
			int s, e;
			uint64_t sig;
			fpl__split(x, &s, &e, &sig);
			r = fpl__round_parts_ix(E.comm, s, (int64_t)e - 52 + shift, 0, sig, 0,
						E.comm_rnd, node, idx, &fl);
		} else {
			r = fpl__round_ix(E.comm, x, E.comm_rnd, node, idx, &fl);
		}
		y[j] = r;
		fpl__commit(node, fl);
	}
}

void fpl_ar_round_send(double *y, const double *x, size_t len, uint64_t lo, uint32_t step,
		       const fpl_ar_config *cfg, uint64_t n, fpl_state *node)
{
	uint64_t base = (2 * (uint64_t)step + 1) * n + lo;
	eff E;
	size_t j;

	effective(&E, cfg);
	if (E.blk) {
		block_round(y, x, len, base, &E, node);
		return;
	}
	for (j = 0; j < len; j++) {
		unsigned fl = 0;
		y[j] = fpl__round_ix(E.comm, x[j], E.comm_rnd, node, base + j, &fl);
		fpl__commit(node, fl);
	}
}

void fpl_ar_round_add(double *dst, const double *recv, size_t len, uint64_t lo, uint32_t step,
		      const fpl_ar_config *cfg, uint64_t n, fpl_state *node)
{
	uint64_t base = (2 * (uint64_t)step + 2) * n + lo;
	eff E;
	size_t j;

	effective(&E, cfg);
	for (j = 0; j < len; j++) {
		unsigned fl = 0;
		dst[j] = fpl__add_ix(E.acc, dst[j], recv[j], E.acc_rnd, node, base + j, &fl);
		fpl__commit(node, fl);
	}
}

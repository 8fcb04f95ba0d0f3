/* SPDX-License-Identifier: MIT */
/*
 * util/gen.h - the seeded test-data generators of `fplab dot`, `gemm`,
 * `reduce` and `allreduce` (--gen, --layers), shared with fplab-mpi so
 * that an MPI rank generates exactly the gradients the simulation does.
 *
 * Value i of stream s under seed k is a pure function of (k, s, i):
 * uniform and ints use the 53 high bits of fpl_random_draw(k,
 * FPL__GEN_STREAM + s, i), the same on every platform; loguniform those
 * bits, exp2 and the draw's lowest bit as the sign; normal and
 * lognormal use draws 2i and 2i+1 (Box-Muller) and libm.
 */
#ifndef FPLAB_UTIL_GEN_H
#define FPLAB_UTIL_GEN_H

#include <stddef.h>
#include <stdint.h>

enum fpl__gen_kind {
	FPL__GEN_NONE = 0,	/* no generator chosen */
	FPL__GEN_ONES,
	FPL__GEN_UNIFORM,	/* uniform:A,B, A <= B */
	FPL__GEN_NORMAL,	/* normal:MU,SIGMA, SIGMA >= 0 */
	FPL__GEN_LOGNORMAL,	/* lognormal:MU,SIGMA: exp of normal */
	FPL__GEN_INTS,		/* ints:A,B, integers A <= B, |A|, |B| <= 2^40 */
	FPL__GEN_LOGUNIFORM	/* loguniform:A,B: +-2^U, U uniform in [A, B), random
				 * sign; -1074 <= A <= B <= 1023 */
};

struct fpl__gen {
	enum fpl__gen_kind kind;
	double p, q;
};

/* Added to every stream, so generated data never shares draws with the
 * rounding streams of the same seed. */
#define FPL__GEN_STREAM 0x67656e0000000000ull

/* The stream of node i's layer l in `fplab allreduce` and fplab-mpi. */
#define FPL__GEN_LAYER_STREAM(l, i) (((uint64_t)(l) + 1) << 32 | (uint64_t)(i))

/*
 * Parse "ones", "uniform:A,B", "normal:MU,SIGMA", "lognormal:MU,SIGMA",
 * "ints:A,B" or "loguniform:A,B" into *g.  Returns 0; -1 for an unknown kind (g unchanged);
 * -2 for parameters that are missing, extra (ones takes none), not
 * finite numbers or outside the ranges above (g->kind set, so a message
 * can say what was expected).
 */
int fpl__gen_parse(struct fpl__gen *g, const char *s);

/* x[i] = value i of stream `stream` under `seed`, i < n (ones: 1). */
void fpl__gen_fill(const struct fpl__gen *g, uint64_t seed, uint64_t stream, double *x,
		   size_t n);

#endif

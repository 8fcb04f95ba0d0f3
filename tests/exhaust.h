/* SPDX-License-Identifier: MIT */
/*
 * tests/exhaust.h - exhaustive operand sweeps over a small format, shared
 * by tarith8 (every small format, default switches) and tswitch (switch
 * combinations).  Operands are every code of the format, decoded by the
 * oracle's hand decoder (NaNs, infinities and both zeros included); each
 * result of the engine is compared with the oracle's, value bits and
 * flags, and the state's per-flag counters with the expected counts.
 */
#ifndef FPLAB_TESTS_EXHAUST_H
#define FPLAB_TESTS_EXHAUST_H

#include <fplab/fplab.h>

enum {
	EX_ADD = 1 << 0,
	EX_SUB = 1 << 1,
	EX_MUL = 1 << 2,
	EX_DIV = 1 << 3,
	EX_SQRT = 1 << 4,
	EX_ROUND = 1 << 5,	/* every code, and every midpoint between neighbours */
	EX_ALL = 0x3f
};

/*
 * Run the ops of `opmask` in the modes of `modemask` (bit r for fpl_rnd r)
 * over every operand (pair) of f, with `threads` threads.  Operands come
 * from the codes of `codes_from` (usually f itself; the switch tests use
 * the plain format, so that subnormal codes still appear as operands).
 * Returns the number of results compared.
 */
unsigned long long exhaust_run(const fpl_format *f, const fpl_format *codes_from,
			       unsigned opmask, unsigned modemask, int threads);

/* fma on `ntriples` random triples of codes, each in every mode of modemask. */
unsigned long long exhaust_fma(const fpl_format *f, const fpl_format *codes_from,
			       uint64_t ntriples, unsigned modemask, int threads);

#define EX_DET_MODES ((1u << FPL_RND_NE) | (1u << FPL_RND_NA) | (1u << FPL_RND_NZ) | \
		      (1u << FPL_RND_TP) | (1u << FPL_RND_TN) | (1u << FPL_RND_TZ) | \
		      (1u << FPL_RND_OD))

#endif

/* SPDX-License-Identifier: MIT */
/*
 * tests/oracle.h - the MPFR reference for fplab's scalar semantics.
 *
 * The oracle implements src/engine/SEMANTICS.md (its base rules and the
 * decisions beyond them) from scratch, with GNU MPFR doing every rounding.
 * The recipe (the MPFR manual's section on mpfr_subnormalize says more):
 *  - precision p = m+1; MPFR writes x = 0.1b...b 2^E, so its exponents are
 *    IEEE's plus one: mpfr_set_emax(emax+1), and mpfr_set_emin(emin-m+1)
 *    with subnormals, mpfr_set_emin(emin+1) without;
 *  - compute the operation at precision p in MPFR's default (wide) range,
 *    then narrow the range, call mpfr_check_range(x, t, rnd) and
 *    mpfr_subnormalize(x, t, rnd) with the same ternary t and mode, and
 *    restore the range;
 *  - round-to-odd: the RNDZ result, plus one quantum away from zero when
 *    inexact and even; ties-away: the RNDN result unless the exact value is
 *    the midpoint of the RNDZ and RNDA results (ties-to-zero likewise);
 *  - the IEEE underflow flag, the overflow table and every special-value
 *    rule are computed here, not taken from MPFR (MPFR's own underflow
 *    flag means something else).
 *
 * From the engine the oracle takes only the primary fields of a format
 * descriptor (e, m, bias and the switches); emin, emax and max are derived
 * here from SEMANTICS.md's formulas (see oracle_fmt).  The random draw of
 * a stochastic mode is an input: the caller obtains it from
 * fpl_random_draw(), the generator being part of the definition.
 *
 * MPFR is used with thread-local variables, so several threads may call
 * the oracle at once; each thread calls oracle_thread_done() at its end.
 */
#ifndef FPLAB_TESTS_ORACLE_H
#define FPLAB_TESTS_ORACLE_H

#include <stdint.h>

#include <fplab/fplab.h>

typedef enum oracle_op {
	OR_ROUND = 0,	/* x rounded into the format (no DAZ) */
	OR_ADD,
	OR_SUB,
	OR_MUL,
	OR_DIV,
	OR_SQRT,
	OR_FMA,
	OR_CONVERT	/* like OR_ROUND, but DAZ of the source format applies
			 * (the caller passes the source's DAZ threshold) */
} oracle_op;

/* A format as the oracle sees it: primary fields plus its own derived ones. */
typedef struct oracle_fmt {
	int e, m, bias;
	fpl_subnormal sub;
	int daz;
	fpl_specials spec;
	int saturate;		/* overflow = saturate(-keep-inf), or specials none */
	int keep_inf;		/* an exact inf stays inf (ieee): not saturating, or keep-inf */
	fpl_tininess tiny;
	fpl_nan_rule nan;
	int explim;
	/* derived here */
	int emin, emax;		/* normal binades emin..emax */
	double max;		/* largest finite value */
	double min_normal;	/* 2^emin */
} oracle_fmt;

/* Take the primary fields of f and derive the rest independently. */
void oracle_fmt_init(oracle_fmt *o, const fpl_format *f);

typedef struct oracle_res {
	double value;
	unsigned flags;
	/* Stochastic modes (finite inexact results; otherwise lo == hi ==
	 * value): the results of rounding toward zero (lo) and away from
	 * zero (hi), each with its flags, and P(away) = T / 2^R exactly. */
	double lo, hi;
	unsigned lo_flags, hi_flags;
	uint64_t T;
	int R;
	int stochastic_split;	/* 1 when lo and hi differ as choices */
} oracle_res;

/*
 * The expected result of `op` on x[0..] (1, 2 or 3 operands; OR_SUB is
 * x[0] - x[1]; OR_FMA is x[0]*x[1] + x[2]) in format o, mode rnd.  For sp
 * and se, `draw` is the 64-bit random draw and `R` the number of random
 * bits (1..32); they are ignored otherwise.  For OR_CONVERT, x[1] is the
 * source format's 2^emin when its DAZ is on, else 0.
 */
void oracle_eval(const oracle_fmt *o, oracle_op op, const double *x, fpl_rnd rnd,
		 uint64_t draw, int R, oracle_res *res);

/*
 * The same for several modes at once (res[k] for modes[k]): the MPFR work
 * shared by the modes is done once.  Equal to nm calls of oracle_eval.
 */
void oracle_eval_modes(const oracle_fmt *o, oracle_op op, const double *x, const fpl_rnd *modes,
		       int nm, uint64_t draw, int R, oracle_res *res);

/* Shorthands. */
double oracle_round(const oracle_fmt *o, double x, fpl_rnd rnd, unsigned *flags);
double oracle_op2(const oracle_fmt *o, oracle_op op, double a, double b, fpl_rnd rnd,
		  unsigned *flags);

/*
 * The value of code c (right-aligned) of format o, decoded from the bit
 * fields by hand: sign, biased exponent, fraction; NaN payloads in the top
 * bits of the binary64 fraction.  Returns 0 and sets *ok = 0 for a code
 * that does not exist (-0 of fnuz is a NaN there, so every code exists
 * except in no format; *ok is kept for symmetry).
 */
double oracle_decode(const oracle_fmt *o, uint64_t c, int *ok);
/* Width of a code. */
int oracle_nbits(const oracle_fmt *o);

/* Free this thread's MPFR variables and caches. */
void oracle_thread_done(void);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * fplab/state.h - rounding modes, exception flags and the explicit state.
 *
 * fplab has no global mode or flag variables.  Every operation takes the
 * rounding mode as an argument and an fpl_state that receives the sticky
 * flags and per-event counters and supplies the random stream for
 * stochastic rounding and soft errors.  A simulated device owns one state.
 */
#ifndef FPLAB_STATE_H
#define FPLAB_STATE_H

#include <stdint.h>

#include <fplab/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Rounding modes.  CPFloat's numeric codes are given for the CLI; use
 * fpl_rnd_parse() to accept either spelling.
 */
typedef enum fpl_rnd {
	FPL_RND_NE = 0,	/* nearest, ties to even            [CPFloat 1] */
	FPL_RND_NA,	/* nearest, ties away from zero     [-1] */
	FPL_RND_NZ,	/* nearest, ties toward zero        [0] */
	FPL_RND_TP,	/* toward +inf                      [2] */
	FPL_RND_TN,	/* toward -inf                      [3] */
	FPL_RND_TZ,	/* toward zero                      [4] */
	FPL_RND_SP,	/* stochastic, proportional         [5] */
	FPL_RND_SE,	/* stochastic, equal probability    [6] */
	FPL_RND_OD,	/* round to odd                     [7] */
	FPL_RND_COUNT
} fpl_rnd;

/* Parse "ne".."od" or a CPFloat code "-1".."7"; returns 0 or FPL_ENOTFOUND. */
FPL_API int fpl_rnd_parse(const char *s, fpl_rnd *out);
/* Two-letter name of a mode ("ne"), or "?" when out of range. */
FPL_API const char *fpl_rnd_name(fpl_rnd r);
/* 1 for sp and se, 0 otherwise. */
FPL_API int fpl_rnd_is_stochastic(fpl_rnd r);

/* Exception flags (sticky bits) and the index of each in fpl_state.count. */
enum {
	FPL_FLAG_INEXACT = 1u << 0,
	FPL_FLAG_UNDERFLOW = 1u << 1,	/* tiny and inexact */
	FPL_FLAG_OVERFLOW = 1u << 2,
	FPL_FLAG_DIVBYZERO = 1u << 3,
	FPL_FLAG_INVALID = 1u << 4,
	FPL_FLAG_SATURATED = 1u << 5,	/* overflow or inf replaced by +-max */
	FPL_FLAG_FLUSHED = 1u << 6	/* tiny result replaced by +-0 (ftz) */
};
#define FPL_NFLAGS 7

/* Short names of the flags, in bit order: "inexact", "underflow", ... */
FPL_API const char *fpl_flag_name(int bit_index);

/* Soft-error injection, as CPFloat's `flip`. */
typedef enum fpl_flip {
	FPL_FLIP_NONE = 0,
	FPL_FLIP_FRACTION,	/* flip one random bit of the stored fraction */
	FPL_FLIP_ANY		/* flip one random bit of the whole encoding */
} fpl_flip;

/*
 * The explicit state.  Initialise with fpl_state_init(); copy it freely.
 *
 * Random numbers are counter-based: draw number i of stream s under seed k
 * is a fixed function of (k, s, i).  A scalar operation uses draw
 * `counter` and increments it; an array operation of n elements uses
 * draws counter .. counter+n-1 (element j gets counter+j) and then adds n,
 * so results do not depend on threads, vector width or evaluation order.
 */
typedef struct fpl_state {
	unsigned flags;			/* sticky FPL_FLAG_* bits */
	uint64_t count[FPL_NFLAGS];	/* how many results raised each flag */
	uint64_t seed;			/* random key */
	uint64_t stream;		/* stream number (a simulated device, a layer...) */
	uint64_t counter;		/* index of the next draw */
	int sr_bits;			/* R, random bits for sp: 1..32, default 32;
					 * set with fpl_state_set_sr_bits() */
	fpl_flip flip;			/* soft errors after rounding */
	double flip_prob;		/* probability of a flip per rounded result */
	int threads;			/* array operations: threads to use, 0 or 1 = one */
	unsigned untracked;		/* FPL_FLAG_* bits the caller does not need; see below */
	uint64_t *progress;		/* NULL, or a counter of work done; see below */
} fpl_state;

/*
 * untracked: 0 (the default) tracks every flag.  The accumulation
 * functions (fplab/accum.h: fpl_accum_dot, fpl_accum_sum,
 * fpl_accum_gemm) neither raise nor count the flags set here, loads
 * included, and leave them out of flags_out; a fast path may then skip
 * the per-step checks they would cost (FPL_FLAG_INEXACT: the binary32
 * hardware fma path runs a register-blocked kernel with no exactness
 * test per step).  The results are the same bits either way.  Other
 * operations ignore the field.  fpl_state_fork copies it.
 *
 * progress: NULL (the default), or a counter that fpl_accum_gemm adds
 * the terms it has finished to (nj * K for each finished tile of nj
 * outputs, atomically, from any of its threads), so that another thread
 * can show how far a long GEMM is.  It may fall short of m * n * K: a path
 * that runs the whole GEMM at once (the native binary32 kernel) adds
 * nothing.  The results never depend on it; fpl_state_fork does not copy
 * it.
 */

/* Zero flags and counts, set the seed, stream 0, counter 0, sr_bits 32,
 * no flips, one thread. */
FPL_API void fpl_state_init(fpl_state *st, uint64_t seed);

/*
 * Set R, the number of random bits of sp rounding: 0, or FPL_EINVAL (the
 * state unchanged) for bits outside 1..32 or a NULL st.
 *
 * The field may also be written directly.  An out-of-range sr_bits is
 * never undefined behaviour: array operations in sp mode reject it with
 * FPL_EINVAL (before touching the output or the counter); the scalar
 * operations, which return no status, use R clamped to 1..32 (0 and
 * negative values act as 1, values above 32 as 32) and raise no flag.
 * Modes other than sp ignore sr_bits.
 */
FPL_API int fpl_state_set_sr_bits(fpl_state *st, int bits);

/*
 * Derive the state of simulated unit `id` (a node, an output element, a
 * layer) from `parent`, with its own random stream:
 *   child->seed = parent->seed; sr_bits, flip, flip_prob, threads and
 *   untracked are copied; flags and counts are zero; child->counter = 0; and
 *   child->stream = a mixing function of (parent->stream, parent->counter,
 *   id), one-to-one in id for a given parent position.
 * So children of one parent position with different ids draw unrelated
 * numbers, the same (parent position, id) always gives the same child,
 * and the result of a simulation does not depend on which thread runs
 * which child.  The parent is not changed: a simulator that forks the
 * children of one operation advances parent->counter afterwards, so the
 * next operation forks fresh ones.  (One operation over many outputs
 * needs no fork: fplab/accum.h gives every rounding its own draw index
 * of one stream.)
 * Copying a state is not a fork: a copy draws the very numbers its
 * original draws.  child may not alias parent.
 */
FPL_API void fpl_state_fork(const fpl_state *parent, fpl_state *child, uint64_t id);

/* Clear flags and counts; the random position is kept. */
FPL_API void fpl_state_clear_flags(fpl_state *st);

/*
 * Draw number `index` of (seed, stream): 64 uniformly distributed bits.
 * Pure function of its arguments (splitmix64-style mixing of a key and a
 * Weyl sequence).
 */
FPL_API uint64_t fpl_random_draw(uint64_t seed, uint64_t stream, uint64_t index);

#ifdef __cplusplus
}
#endif
#endif

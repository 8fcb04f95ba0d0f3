/* SPDX-License-Identifier: MIT */
/*
 * tests/harness.h - what every test program shares: the random seed
 * (printed, and taken from FPLAB_SEED so a failure replays), the
 * FPLAB_LONG switch for `make check-long`, check counters, failure
 * reports (format, mode, operands in %a, expected and got, flags), a small
 * private random generator and a two-thread work splitter.
 *
 * Exit statuses: 0 pass, 1 fail, 77 skipped.  Counters are atomic, so the
 * check and failure functions may be called from several threads.
 */
#ifndef FPLAB_TESTS_HARNESS_H
#define FPLAB_TESTS_HARNESS_H

#include <stdint.h>
#include <stddef.h>

#include <fplab/fplab.h>

#include "oracle.h"

#define H_SKIP 77

/* Read FPLAB_SEED and FPLAB_LONG, print "NAME: seed S", start the clock. */
void h_init(const char *name);
/* The run's seed. */
uint64_t h_seed(void);
/* 1 under `make check-long` (FPLAB_LONG set and not "0"). */
int h_long(void);
/* n in check, n_long in check-long. */
uint64_t h_scale(uint64_t n, uint64_t n_long);
/* 1 in an AddressSanitizer build (make check SANITIZE=1): the slowest
 * sweeps then thin their random or structured samples (never the
 * exhaustive pair sweeps), since that run looks for memory errors. */
int h_sanitized(void);
/* Print the summary line and return the exit status (0 or 1). */
int h_done(void);
/* Print why and exit 77. */
void h_skip(const char *why);

/* Count one check; count a failure when `ok` is 0.  Returns ok. */
int h_check(int ok);
/* Count a failure and print the message (the first few; FPLAB_TEST_MAXFAIL
 * sets how many).  Right after a failed h_check (`if (!h_check(c))
 * h_fail(...)`) the failure is counted once, not twice. */
void h_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t h_failures(void);
/* Print a progress note on stdout. */
void h_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The same flags, counter and event counts in two states (a fast path
 * against its reference). */
int h_same_state(const fpl_state *a, const fpl_state *b);
/* Bit-exact equality of doubles (sign of zero and NaN payload included). */
int h_same(double a, double b);
uint64_t h_bits(double x);
double h_from_bits(uint64_t u);
/* The binary32 with bits u, and the bits of x. */
float h_f32(uint32_t u);
uint32_t h_bits32(float x);
/* The binary32 with bits b as a binary64, by the bits: a signaling NaN
 * stays signaling (a float -> double conversion would quiet it). */
double h_widen32(uint32_t b);

/* "inexact|underflow" style names of a flag set, into buf. */
const char *h_flags(unsigned fl, char *buf, size_t len);
/* One line describing a format's primary fields, into buf. */
const char *h_format_desc(const fpl_format *f, char *buf, size_t len);
/* The catalogue format `name` (a failed check when there is none). */
fpl_format h_format(const char *name);

/* Seconds on the monotonic clock (for timing notes). */
double h_now(void);

/*
 * Compare one scalar result with the expected one; on a mismatch report
 * what, the format, the mode, the operands (%a), expected and got (value
 * in %a and bits, and flags).  Returns 1 when equal.
 */
int h_expect(const char *what, const fpl_format *f, fpl_rnd rnd, int nops,
	     const double *ops, double exp_v, unsigned exp_fl, double got_v, unsigned got_fl);

/* Private random generator (splitmix64); h_rng_init mixes the run seed. */
typedef struct h_rng {
	uint64_t s;
} h_rng;
void h_rng_init(h_rng *r, uint64_t salt);
uint64_t h_rng_next(h_rng *r);
/* Uniform in [0, n). */
uint64_t h_rng_below(h_rng *r, uint64_t n);
/*
 * A random binary64 value of format-like shape: sign, exponent in
 * [elo, ehi] (leading-bit exponent), `bits` significant bits (1..53) with
 * TestFloat-style weighting (random, long runs of ones/zeros); occasionally
 * a zero, an infinity or a NaN when `specials` is set.
 */
double h_rng_value(h_rng *r, int elo, int ehi, int bits, int specials);

/* Run fn(arg, k, nthreads) for k = 0..nthreads-1 in nthreads threads. */
void h_parallel(int nthreads, void (*fn)(void *arg, int k, int n), void *arg);
/* Threads to use for heavy loops: 2 unless FPLAB_TEST_THREADS says otherwise. */
int h_threads(void);

/* Modes, as a list. */
extern const fpl_rnd h_det_modes[7];	/* ne na nz tp tn tz od */

/*
 * The engine's scalar function for oracle operation `op` (OR_ROUND ..
 * OR_FMA) on operands x[0..2]: the code under test, in one place, so that
 * every test calls the same function for the same operation.
 */
double h_engine(const fpl_format *f, oracle_op op, const double *x, fpl_rnd r, fpl_state *st);

#endif

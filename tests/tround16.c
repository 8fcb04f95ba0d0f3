/* SPDX-License-Identifier: MIT */
/*
 * tests/tround16.c - binary32 -> binary16 rounding (fpl_round on the
 * binary32 value, and fpl_round_array_f32), in the seven deterministic
 * modes.  make check: for every binary32 exponent from far below fp16's
 * subnormals to above its overflow threshold, both signs, every pattern of
 * the 13 low fraction bits (the bits fp16 drops from a normal value) under
 * 48 patterns of the top 10 bits (16 fixed, 32 random; 4 under
 * AddressSanitizer), plus a stride through all other floats
 * (tiny, huge, inf, NaN payloads).  make check-long: all 2^32 floats.
 * Expected values: tests/oracle.c (MPFR).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oracle.h"

struct job {
	fpl_format f;
	oracle_fmt o;
	uint64_t lo, hi;	/* range of work items */
	int full;		/* 1: item = float bits; 0: structured */
	unsigned long long n[16];
};

#define NTOPS 48
/* patterns of the 10 fraction bits fp16 keeps: 16 fixed, the rest drawn
 * from the run's seed in main() */
static uint32_t tops[NTOPS] = { 0x000, 0x001, 0x002, 0x003, 0x155, 0x1ff, 0x200, 0x201,
				0x2aa, 0x3fe, 0x3ff, 0x0f0, 0x30f, 0x100, 0x2ff, 0x3c3 };

/* Structured item i: exponent field 97..143 (2^-30..2^16), 16 top
 * patterns, 2^13 low patterns, 2 signs; beyond that a stride. */
static uint32_t item_bits(uint64_t i, int *ok)
{
	const uint64_t ntops = h_sanitized() ? 4 : NTOPS;
	const uint64_t per = 2ull * ntops * 8192, nexp = 143 - 97 + 1;
	*ok = 1;
	if (i < nexp * per) {
		uint32_t ex = 97 + (uint32_t)(i / per), r = (uint32_t)(i % per);
		uint32_t sign = r & 1, top = tops[(r >> 1) % ntops], low = (uint32_t)((r >> 1) / ntops);
		return sign << 31 | ex << 23 | top << 13 | low;
	}
	i -= nexp * per;
	if (i < (1ull << 32) / 4099)
		return (uint32_t)(i * 4099 + 17);	/* a stride through everything */
	*ok = 0;
	return 0;
}

static void worker(void *arg, int k, int nth)
{
	struct job *j = arg;
	fpl_state st;
	uint64_t i;
	unsigned long long n = 0;
	int r;

	fpl_state_init(&st, h_seed());
	for (i = j->lo + (uint64_t)k; i < j->hi; i += (uint64_t)nth) {
		int ok = 1;
		uint32_t u = j->full ? (uint32_t)i : item_bits(i, &ok);
		double x;
		if (!ok)
			break;
		x = (double)h_f32(u);	/* exact, NaN payloads included (quiet bit may be set) */
		if (x != x && !(u & 0x00400000u))
			continue;	/* float -> double quiets sNaNs: tested in tspecial */
		oracle_res w[7];
		oracle_eval_modes(&j->o, OR_ROUND, &x, h_det_modes, 7, 0, 32, w);
		for (r = 0; r < 7; r++) {
			fpl_rnd m = h_det_modes[r];
			double got;
			st.flags = 0;
			got = fpl_round(&j->f, x, m, &st);
			h_expect("round f32", &j->f, m, 1, &x, w[r].value, w[r].flags, got, st.flags);
			n++;
		}
	}
	j->n[k] = n;
	oracle_thread_done();
}

int main(void)
{
	struct job *j = calloc(1, sizeof *j);
	unsigned long long total = 0;
	int k, nth = h_threads();

	h_init("tround16");
	if (fpl_format_lookup(&j->f, "fp16") != 0) {
		h_fail("no fp16");
		return h_done();
	}
	oracle_fmt_init(&j->o, &j->f);
	{
		h_rng r;
		h_rng_init(&r, 16);
		for (k = 16; k < NTOPS; k++)
			tops[k] = (uint32_t)h_rng_below(&r, 1024);
	}
	if (h_long()) {
		uint64_t step = 1ull << 28, b;
		j->full = 1;
		for (b = 0; b < (1ull << 32); b += step) {
			j->lo = b;
			j->hi = b + step;
			h_parallel(nth, worker, j);
			for (k = 0; k < nth; k++)
				total += j->n[k];
			h_note("floats below 0x%09llx done", (unsigned long long)(b + step));
		}
	} else {
		j->lo = 0;
		j->hi = ~0ull;
		h_parallel(nth, worker, j);
		for (k = 0; k < nth; k++)
			total += j->n[k];
	}
	h_note("%llu roundings compared", total);
	free(j);
	oracle_thread_done();
	return h_done();
}

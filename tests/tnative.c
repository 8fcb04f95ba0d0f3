/* SPDX-License-Identifier: MIT */
/*
 * tests/tnative.c - the engine against this CPU's own conversion
 * instructions: a reference independent of MPFR.  Every expected value
 * and flag comes from an instruction; the engine is only ever the thing
 * compared.
 *
 *  1. binary32 -> fp16: VCVTPS2PH (F16C, the VEX form) with the rounding
 *     in its immediate (imm8[2] = 0, so MXCSR.RC is not read; imm8[1:0]
 *     0 nearest-even, 1 down, 2 up, 3 toward zero) against fp16 in modes
 *     ne, tn, tp, tz: fpl_round_array_f32 on blocks of 2^16 floats, bit
 *     for bit (the hardware half widened by VCVTPH2PS, which is exact), so
 *     the sign of zero and NaN payloads are compared too; and fpl_round,
 *     value and flags, on a sample: MXCSR is loaded with its default
 *     0x1f80 (all exceptions masked, no FTZ, no DAZ), one value is
 *     converted (the other three lanes are +0 and raise nothing), MXCSR is
 *     read back in the same asm statement, and PE UE OE IE ZE must equal
 *     the engine's inexact underflow overflow invalid divbyzero.  DE (a
 *     denormal operand) has no engine counterpart and is ignored.
 *  2. fp16 -> binary32: VCVTPH2PS against fpl_decode for all 65536 codes,
 *     and fpl_encode of both values gives the code back.
 *  3. binary32 -> bf16: VCVTNEPS2BF16 (AVX512_BF16), values only (it
 *     raises no flags), against fpl_round_array_f32 and fpl_round in a
 *     bf16 set up as below, and fpl_convert from a DAZ binary32 into
 *     plain bf16.
 *
 * What the instructions do (Intel SDM vol. 2, VCVTPS2PH, VCVTPH2PS,
 * VCVTNEPS2BF16), and why the engine must agree:
 *  - VCVTPS2PH rounds once in the imm8 mode; tiny results become fp16
 *    subnormals (MXCSR.FTZ is ignored); NaNs are quieted and keep the sign
 *    and the top fraction bits.  x86 detects tininess AFTER rounding and,
 *    with underflow masked, raises UE only when the result is also
 *    inexact.  fplab's fp16 (formats/fp16.fmt) is ieee, subnormals yes,
 *    tininess after, x86 NaN rule; SEMANTICS.md defines underflow as tiny
 *    and inexact and narrows a NaN to its sign, quiet bit and next m-1
 *    fraction bits, which is the hardware's truncation with the quiet bit
 *    forced.  So values, NaN payloads and all five flags must agree on
 *    every input; the test checks those format fields first.
 *  - VCVTPH2PS is exact, ignores MXCSR.DAZ and quiets a signaling NaN;
 *    fpl_decode keeps it signaling, so a NaN is compared with its quiet
 *    bit forced (payload and sign still compared).
 *  - VCVTNEPS2BF16 always rounds to nearest-even, neither reads nor
 *    writes MXCSR and raises nothing.  Its pseudo-code: a zero or
 *    denormal input gives a zero of the same sign (inputs are read as
 *    zero, DAZ); an infinity keeps its top 16 bits; a NaN keeps its top
 *    16 bits with fraction bit 6 set (quieted); a normal x gives the top
 *    16 bits of x + 0x7fff + x[16] (integer add: nearest-even, and
 *    overflow carries into the exponent to give inf).  No normal input
 *    rounds below 2^-126, so the "output denormals are flushed" clause
 *    never acts.  In fplab this is bf16 with subnormal = ftz and
 *    tininess = before: exactly the inputs below 2^-126 are tiny, and
 *    flushing gives +-0 (the array and fpl_round paths do not apply DAZ,
 *    whose contract covers operands of arithmetic); equivalently
 *    fpl_convert from binary32 with daz = 1 into ordinary bf16.
 *
 * Sizes.  make check: fp16 - every binary32 whose exponent field is 0
 * (zeros and denormals), 100..114 (fp16's subnormal range and its edges,
 * binades 2^-27..2^-13), 141..143 (binades 2^14..2^16: 65504, 65520,
 * overflow) or 255 (inf, NaN), both signs, 335 million inputs, plus 2^26
 * random ones (three in four with an exponent in fp16's range, one in
 * four with the 13 dropped bits on a tie pattern), each in the four
 * modes.  All 2^32 floats in one mode would take about 50 s of both
 * cores here (overflowing lanes take the engine's scalar path), too much
 * for make check.  bf16 - all 2^32 floats (about 4 s).  Flags:
 * fpl_round on a table (TestFloat style: exponent classes x significand
 * patterns, both signs, and every float just below 2^-14 and 2^16 with
 * the top ten fraction bits set, where UE and OE switch) and 2^20 random
 * inputs, each in the four modes.  Under AddressSanitizer: every
 * 4th input of the fp16 ranges and 2^23 random ones, every 64th float and
 * 2^22 random ones for bf16, 2^16 random scalar inputs.  make check-long:
 * all 2^32 floats in the four fp16 modes and in bf16, and 2^24 random
 * scalar inputs (about 3.5 minutes).
 *
 * Skips (exit 77) off x86-64, or when the CPU has neither F16C nor
 * AVX512_BF16; a note says which part did not run when only one is there.
 * The intrinsic functions carry target attributes, so the file builds
 * with the project's baseline x86-64 flags.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#if !defined(__x86_64__)

int main(void)
{
	h_init("tnative");
	h_skip("not an x86-64 CPU: no F16C or AVX512_BF16 instructions to compare with");
	return 0;
}

#else

#include <cpuid.h>
#include <immintrin.h>

#define CH (1u << 16)		/* floats per block */
#define MXCSR_DEFAULT 0x1f80u	/* all exceptions masked, nearest, no FTZ/DAZ */
#define MAXTH 16

/* ------------------------------------------------------------- hardware */

/* 1 when the CPU has F16C and the OS saves YMM state.  clang 14 has no
 * "f16c" for __builtin_cpu_supports, so the bit is read with CPUID. */
static int have_f16c(void)
{
	unsigned a, b, c, d;

	if (!__builtin_cpu_supports("avx") || !__get_cpuid(1, &a, &b, &c, &d))
		return 0;
	return (c >> 29) & 1;
}

static int have_bf16(void)
{
	return __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512f")
	       && __builtin_cpu_supports("avx512vl");
}

/* The engine's mode fp16_modes[m] is VCVTPS2PH's rounding immediate m. */
static const fpl_rnd fp16_modes[4] = { FPL_RND_NE, FPL_RND_TN, FPL_RND_TP, FPL_RND_TZ };
static const char *const imm_names[4] = { "imm 0 (nearest-even)", "imm 1 (down)",
					  "imm 2 (up)", "imm 3 (toward zero)" };

/* e[i] = VCVTPH2PS(VCVTPS2PH(x[i], imm)) for n a multiple of 8. */
__attribute__((target("avx,f16c")))
static void hw_fp16_block(float *e, const float *x, size_t n, int imm)
{
	size_t i;

	for (i = 0; i < n; i += 8) {
		__m256 v = _mm256_loadu_ps(x + i);
		__m128i h;
		switch (imm) {
		case 0: h = _mm256_cvtps_ph(v, 0); break;
		case 1: h = _mm256_cvtps_ph(v, 1); break;
		case 2: h = _mm256_cvtps_ph(v, 2); break;
		default: h = _mm256_cvtps_ph(v, 3); break;
		}
		_mm256_storeu_ps(e + i, _mm256_cvtph_ps(h));
	}
}

/* Load MXCSR with its default, convert lane 0, read MXCSR back: one asm
 * statement, so the compiler cannot move the conversion past either. */
#define CVT_FLAGS(IMM)                                                                      \
	__asm__ __volatile__("ldmxcsr %[c0]\n\tvcvtps2ph $" #IMM ", %[v], %[h]\n\tstmxcsr %[c1]" \
			     : [h] "=x"(h), [c1] "=m"(c1)                                   \
			     : [v] "x"(v), [c0] "m"(c0))

/* The fp16 code of the binary32 with bits xb, and MXCSR after converting
 * it alone in mode imm. */
__attribute__((target("avx,f16c")))
static unsigned hw_fp16_one(uint32_t xb, int imm, unsigned *mxcsr)
{
	__m128 v = _mm_castsi128_ps(_mm_cvtsi32_si128((int)xb));
	__m128i h;
	unsigned c0 = MXCSR_DEFAULT, c1 = 0;

	switch (imm) {
	case 0: CVT_FLAGS(0); break;
	case 1: CVT_FLAGS(1); break;
	case 2: CVT_FLAGS(2); break;
	default: CVT_FLAGS(3); break;
	}
	*mxcsr = c1;
	return (unsigned)_mm_cvtsi128_si32(h) & 0xffffu;
}

/* VCVTPH2PS of 8 codes. */
__attribute__((target("avx,f16c")))
static void hw_half8_to_f32(float *e, const uint16_t *codes)
{
	_mm256_storeu_ps(e, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)codes)));
}

/* e[i] = VCVTNEPS2BF16(x[i]) widened (bf16 bits << 16), n a multiple of 16. */
__attribute__((target("avx512bf16,avx512f,avx512vl")))
static void hw_bf16_block(float *e, const float *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i += 16) {
		__m256bh b = _mm512_cvtneps_pbh(_mm512_loadu_ps(x + i));
		__m512i w = _mm512_slli_epi32(_mm512_cvtepu16_epi32((__m256i)b), 16);
		_mm512_storeu_si512((void *)(e + i), w);
	}
}

/* The bf16 code of one binary32 (the 128-bit form of the instruction). */
__attribute__((target("avx512bf16,avx512f,avx512vl")))
static unsigned hw_bf16_one(uint32_t xb)
{
	__m128bh b = _mm_cvtneps_pbh(_mm_castsi128_ps(_mm_cvtsi32_si128((int)xb)));
	return (unsigned)_mm_cvtsi128_si32((__m128i)b) & 0xffffu;
}

/* MXCSR exception flags as fplab flags; DE (bit 1) has no counterpart. */
static unsigned flags_of_mxcsr(unsigned mx)
{
	unsigned fl = 0;

	if (mx & 0x01u)
		fl |= FPL_FLAG_INVALID;
	if (mx & 0x04u)
		fl |= FPL_FLAG_DIVBYZERO;
	if (mx & 0x08u)
		fl |= FPL_FLAG_OVERFLOW;
	if (mx & 0x10u)
		fl |= FPL_FLAG_UNDERFLOW;
	if (mx & 0x20u)
		fl |= FPL_FLAG_INEXACT;
	return fl;
}

/* ---------------------------------------------------------------- sweeps */

/*
 * A sweep: blocks of CH inputs, each compared in every mode.  Blocks
 * 0 .. nseg*per-1 run through whole segments (one sign and exponent
 * field: 2^23 floats), every stride-th input from an offset drawn per
 * block; the nrand blocks after them hold random inputs.  Blocks are
 * dealt to threads round-robin; the inputs of a block depend only on
 * the run's seed and the block's number.
 */
typedef struct sweep {
	const char *name;
	int bf16;			/* 0: VCVTPS2PH in nmodes modes; 1: VCVTNEPS2BF16 */
	int nmodes;
	const fpl_format *f;
	uint32_t seg[512];		/* sign << 31 | exponent field << 23 */
	unsigned nseg;
	uint32_t stride;
	uint64_t nrand;
	int progress;			/* print progress notes (long runs) */
	unsigned long long n[MAXTH];	/* comparisons, per thread */
} sweep;

static uint64_t per_seg(const sweep *s)
{
	return (1ull << 23) / ((uint64_t)CH * s->stride);
}

static uint64_t nblocks(const sweep *s)
{
	return s->nseg * per_seg(s) + s->nrand;
}

static const uint32_t fp16_lows[] = { 0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff,
				      0x2000, 0x3000, 0x0800, 0x17ff };
static const uint32_t bf16_lows[] = { 0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff,
				      0x10000, 0x18000, 0x4000, 0xbfff };

/* A random binary32 for fp16: three in four with the exponent field in
 * 100..143, one in four with the 13 bits fp16 drops on a tie pattern. */
static uint32_t draw_fp16(h_rng *r)
{
	uint64_t u = h_rng_next(r);
	uint32_t b = (uint32_t)u;

	if (((u >> 32) & 3) != 0)
		b = (b & 0x807fffffu) | (100u + (uint32_t)((u >> 34) % 44)) << 23;
	if (((u >> 48) & 3) == 0)
		b = (b & ~0x1fffu) | fp16_lows[(u >> 50) % (sizeof fp16_lows / sizeof *fp16_lows)];
	return b;
}

/* A random binary32 for bf16: any bits, one in four with the 16 bits bf16
 * drops on a tie pattern. */
static uint32_t draw_bf16(h_rng *r)
{
	uint64_t u = h_rng_next(r);
	uint32_t b = (uint32_t)u;

	if (((u >> 48) & 3) == 0)
		b = (b & ~0xffffu) ^ bf16_lows[(u >> 50) % (sizeof bf16_lows / sizeof *bf16_lows)];
	return b;
}

static void fill(const sweep *s, uint64_t blk, float *x)
{
	uint64_t per = per_seg(s);
	h_rng r;
	uint32_t i;

	h_rng_init(&r, (uint64_t)(s->bf16 + 1) << 48 ^ blk);
	if (blk < s->nseg * per) {
		uint32_t base = s->seg[blk / per];
		uint32_t first = (uint32_t)(blk % per) * CH * s->stride;
		uint32_t off = s->stride > 1 ? (uint32_t)h_rng_below(&r, s->stride) : 0;
		for (i = 0; i < CH; i++)
			x[i] = h_f32(base | (first + i * s->stride + off));
	} else {
		for (i = 0; i < CH; i++)
			x[i] = h_f32(s->bf16 ? draw_bf16(&r) : draw_fp16(&r));
	}
}

/* Report each element of a block where engine and hardware differ. */
static void report(const sweep *s, int m, const float *x, const float *y, const float *e)
{
	uint32_t i, bad = 0;

	for (i = 0; i < CH; i++) {
		uint32_t xb = h_bits32(x[i]), yb = h_bits32(y[i]), eb = h_bits32(e[i]);
		unsigned mx = 0, code;
		if (yb == eb || ++bad > 4)	/* counted once below beyond 4 a block */
			continue;
		code = s->bf16 ? hw_bf16_one(xb) : hw_fp16_one(xb, m, &mx);
		h_fail("%s fpl_round_array_f32 mode %s: input 0x%08x (%a): %s 0x%04x = %a "
		       "[0x%08x], engine %a [0x%08x]",
		       s->name, fpl_rnd_name(s->bf16 ? FPL_RND_NE : fp16_modes[m]), xb,
		       (double)x[i], s->bf16 ? "VCVTNEPS2BF16" : imm_names[m], code, (double)e[i],
		       eb, (double)y[i], yb);
	}
	if (bad > 4)
		h_fail("%s mode %s: %u more mismatches in this block of %u", s->name,
		       fpl_rnd_name(s->bf16 ? FPL_RND_NE : fp16_modes[m]), bad - 4, CH);
}

static void sweep_worker(void *arg, int k, int nth)
{
	sweep *s = arg;
	float *x = malloc(CH * sizeof *x), *y = malloc(CH * sizeof *y), *e = malloc(CH * sizeof *e);
	uint64_t blk, nb = nblocks(s);
	unsigned long long n = 0;
	fpl_state st;
	int m;

	if (!x || !y || !e) {
		h_fail("out of memory");
		goto out;
	}
	_mm_setcsr(MXCSR_DEFAULT);
	fpl_state_init(&st, h_seed());
	for (blk = (uint64_t)k; blk < nb; blk += (uint64_t)nth) {
		fill(s, blk, x);
		for (m = 0; m < s->nmodes; m++) {
			fpl_rnd rnd = s->bf16 ? FPL_RND_NE : fp16_modes[m];
			int rc = fpl_round_array_f32(s->f, y, x, CH, rnd, &st);
			if (!h_check(rc == 0)) {
				h_fail("%s: fpl_round_array_f32 mode %s returned %d (%s)", s->name,
				       fpl_rnd_name(rnd), rc, fpl_strerror(rc));
				goto out;
			}
			if (s->bf16)
				hw_bf16_block(e, x, CH);
			else
				hw_fp16_block(e, x, CH, m);
			if (!h_check(memcmp(y, e, CH * sizeof *y) == 0))
				report(s, m, x, y, e);
			n += CH;
		}
		if (s->progress && k == 0 && blk * 8 / nb != (blk + (uint64_t)nth) * 8 / nb)
			h_note("%s: %llu of %llu blocks", s->name, (unsigned long long)blk + 1,
			       (unsigned long long)nb);
	}
out:
	s->n[k] = n;
	free(x);
	free(y);
	free(e);
}

static unsigned long long run_sweep(sweep *s)
{
	unsigned long long total = 0;
	int k, nth = h_threads();

	if (nth > MAXTH)
		nth = MAXTH;
	memset(s->n, 0, sizeof s->n);
	h_parallel(nth, sweep_worker, s);
	for (k = 0; k < nth; k++)
		total += s->n[k];
	return total;
}

/* Every segment with one of the exponent fields ex[0..nex-1], both signs. */
static void add_segments(sweep *s, const unsigned *ex, unsigned nex)
{
	unsigned i, sign;

	for (i = 0; i < nex; i++)
		for (sign = 0; sign < 2; sign++)
			s->seg[s->nseg++] = sign << 31 | ex[i] << 23;
}

static void all_segments(sweep *s)
{
	unsigned i;

	for (i = 0; i < 512; i++)
		s->seg[s->nseg++] = (i & 1) << 31 | (i >> 1) << 23;
}

/* ------------------------------------------------- scalar, with flags */

typedef struct scalar_job {
	const fpl_format *fp16, *bf16, *bf16hw, *fp32daz;
	int do_fp16, do_bf16;
	const uint32_t *table;
	uint64_t ntable, nrand;
	unsigned long long n[MAXTH][2];	/* results compared; UE cases, see scalar_fp16 */
} scalar_job;

/* One binary32 in the four modes: value and flags.  Counts in n[1] the
 * inputs below 2^-14 whose inexact result is not tiny after rounding:
 * there tininess before and after rounding disagree about UE. */
static void scalar_fp16(const scalar_job *J, uint32_t xb, fpl_state *st, unsigned long long *n)
{
	double x = h_widen32(xb);
	int m;

	for (m = 0; m < 4; m++) {
		unsigned mx, code = hw_fp16_one(xb, m, &mx), want_fl = flags_of_mxcsr(mx);
		uint16_t c8[8] = { (uint16_t)code };
		float w[8];
		double want, got;
		char d[200], f1[80], f2[80];

		hw_half8_to_f32(w, c8);
		want = (double)w[0];
		st->flags = 0;
		got = fpl_round(J->fp16, x, fp16_modes[m], st);
		if (!h_check(h_same(want, got) && st->flags == want_fl))
			h_fail("fpl_round %s mode %s: binary32 0x%08x (%a): VCVTPS2PH %s gives "
			       "0x%04x = %a [0x%016llx] and MXCSR 0x%04x {%s}; engine %a [0x%016llx] "
			       "{%s}",
			       h_format_desc(J->fp16, d, sizeof d), fpl_rnd_name(fp16_modes[m]), xb,
			       x, imm_names[m], code, want, (unsigned long long)h_bits(want), mx,
			       h_flags(want_fl, f1, sizeof f1), got, (unsigned long long)h_bits(got),
			       h_flags(st->flags, f2, sizeof f2));
		n[0]++;
		if (x > -0x1p-14 && x < 0x1p-14 && (mx & 0x20u) && !(mx & 0x10u))
			n[1]++;
	}
}

/* One binary32 into bf16 as VCVTNEPS2BF16 does it, by two routes; values
 * only (the instruction raises no flags). */
static void scalar_bf16(const scalar_job *J, uint32_t xb, fpl_state *st, unsigned long long *n)
{
	unsigned code = hw_bf16_one(xb);
	double x = h_widen32(xb), want = (double)h_f32(code << 16);
	double got1 = fpl_round(J->bf16hw, x, FPL_RND_NE, st);
	double got2 = fpl_convert(J->bf16, J->fp32daz, x, FPL_RND_NE, st);

	if (!h_check(h_same(want, got1)))
		h_fail("fpl_round bf16 (subnormal ftz, tininess before) mode ne: binary32 0x%08x "
		       "(%a): VCVTNEPS2BF16 gives 0x%04x = %a [0x%016llx]; engine %a [0x%016llx]",
		       xb, x, code, want, (unsigned long long)h_bits(want), got1,
		       (unsigned long long)h_bits(got1));
	if (!h_check(h_same(want, got2)))
		h_fail("fpl_convert to bf16 from binary32 with daz, mode ne: binary32 0x%08x (%a): "
		       "VCVTNEPS2BF16 gives 0x%04x = %a [0x%016llx]; engine %a [0x%016llx]",
		       xb, x, code, want, (unsigned long long)h_bits(want), got2,
		       (unsigned long long)h_bits(got2));
	n[0] += 2;
}

static void scalar_worker(void *arg, int k, int nth)
{
	scalar_job *J = arg;
	unsigned long long n[2] = { 0, 0 };
	uint64_t i;
	fpl_state st;

	_mm_setcsr(MXCSR_DEFAULT);
	fpl_state_init(&st, h_seed());
	for (i = (uint64_t)k; i < J->ntable + J->nrand; i += (uint64_t)nth) {
		uint32_t xb;
		if (i < J->ntable) {
			xb = J->table[i];
		} else {	/* input i depends on the seed and i only */
			h_rng r;
			h_rng_init(&r, 0x5ca1a7ull << 32 ^ i);
			xb = (i & 1) ? draw_bf16(&r) : draw_fp16(&r);
		}
		if (J->do_fp16)
			scalar_fp16(J, xb, &st, n);
		if (J->do_bf16)
			scalar_bf16(J, xb, &st, n);
	}
	J->n[k][0] = n[0];
	J->n[k][1] = n[1];
}

/* TestFloat-style table: exponent classes x significand patterns x signs;
 * then, exhaustively, the 2^13 floats below 2^-14 and below 2^16 whose top
 * ten fraction bits are ones (where UE and OE switch), both signs. */
static uint32_t *make_table(uint64_t *count)
{
	static const unsigned ex[] = { 0, 1, 2, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109,
				       110, 111, 112, 113, 114, 115, 116, 125, 126, 127, 128,
				       129, 140, 141, 142, 143, 144, 150, 200, 253, 254, 255 };
	static const uint32_t fr[] = { 0, 1, 2, 3, 0x7fffff, 0x7ffffe, 0x400000, 0x400001,
				       0x3fffff, 0x200000, 0x000fff, 0x001000, 0x001001, 0x001fff,
				       0x002000, 0x003000, 0x7fe000, 0x7ff000, 0x7fefff, 0x7ff001,
				       0x00ffff, 0x008000, 0x008001, 0x018000, 0x010000, 0x7f8000,
				       0x7fc000, 0x7f7fff, 0x7f8001, 0x3ff000, 0x401000 };
	const size_t nex = sizeof ex / sizeof *ex, nfr = sizeof fr / sizeof *fr;
	uint32_t *t = malloc((nex * (nfr + 46) + 2 * 8192) * 2 * sizeof *t);
	size_t i, j, n = 0;

	if (!t)
		return NULL;
	for (i = 0; i < nex; i++) {
		uint32_t e = ex[i] << 23;
		for (j = 0; j < nfr + 46; j++) {
			uint32_t f = j < nfr ? fr[j]
				     : j < nfr + 23 ? 1u << (j - nfr)
						    : 0x7fffffu & ~(1u << (j - nfr - 23));
			t[n++] = e | f;
			t[n++] = 0x80000000u | e | f;
		}
	}
	for (i = 0; i < 2; i++)
		for (j = 0; j < 8192; j++) {
			uint32_t b = (i ? 142u : 112u) << 23 | 0x7fe000u | (uint32_t)j;
			t[n++] = b;
			t[n++] = 0x80000000u | b;
		}
	*count = n;
	return t;
}

/* ----------------------------------------------------------- decoding */

/* All fp16 codes: VCVTPH2PS against fpl_decode; fpl_encode round trips. */
static void decode_all(const fpl_format *fp16)
{
	uint16_t codes[8];
	float w[8];
	unsigned c, i;

	for (c = 0; c < 65536; c += 8) {
		for (i = 0; i < 8; i++)
			codes[i] = (uint16_t)(c + i);
		hw_half8_to_f32(w, codes);
		for (i = 0; i < 8; i++) {
			unsigned code = c + i;
			double want = (double)w[i], got = fpl_decode(fp16, code);
			int nan = want != want;
			/* the hardware quiets a signaling NaN; fpl_decode keeps it */
			uint64_t gotq = h_bits(got) | (nan ? 0x0008000000000000ull : 0);
			uint64_t e1 = fpl_encode(fp16, got), e2 = fpl_encode(fp16, want);

			if (!h_check(gotq == h_bits(want) && (got != got) == nan))
				h_fail("fp16 decode 0x%04x: VCVTPH2PS %a [0x%08x] (as binary64 "
				       "0x%016llx), fpl_decode %a [0x%016llx]",
				       code, want, h_bits32(w[i]), (unsigned long long)h_bits(want), got,
				       (unsigned long long)h_bits(got));
			if (!h_check(e1 == code))
				h_fail("fp16 encode(decode(0x%04x)) = 0x%llx", code,
				       (unsigned long long)e1);
			if (!h_check(e2 == (nan ? code | 0x200u : code)))
				h_fail("fp16 encode(VCVTPH2PS(0x%04x) = %a) = 0x%llx", code, want,
				       (unsigned long long)e2);
		}
	}
}

/* --------------------------------------------------------------- main */

static int check_formats(const fpl_format *fp16, const fpl_format *bf16)
{
	char d[200];
	int ok = 1;

	/* the assumptions the header comment rests on */
	if (!h_check(fp16->e == 5 && fp16->m == 10 && fp16->bias == 15
		     && fp16->subnormal == FPL_SUB_YES && !fp16->daz
		     && fp16->specials == FPL_SPEC_IEEE && fp16->overflow == FPL_OVF_INF
		     && fp16->tininess == FPL_TINY_AFTER && fp16->nan_rule == FPL_NAN_X86)) {
		h_fail("fp16 is no longer IEEE binary16 with x86 tininess and NaNs: %s",
		       h_format_desc(fp16, d, sizeof d));
		ok = 0;
	}
	if (!h_check(bf16->e == 8 && bf16->m == 7 && bf16->bias == 127
		     && bf16->specials == FPL_SPEC_IEEE && bf16->overflow == FPL_OVF_INF
		     && bf16->nan_rule == FPL_NAN_X86)) {
		h_fail("bf16 is not the format this test assumes: %s", h_format_desc(bf16, d, sizeof d));
		ok = 0;
	}
	return ok;
}

int main(void)
{
	static const unsigned fp16_ex[] = { 0, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109,
					    110, 111, 112, 113, 114, 141, 142, 143, 255 };
	static sweep s16, sbf;
	static scalar_job sj;
	fpl_format fp16, bf16, bf16hw, fp32daz;
	int do16, dobf, san = h_sanitized();
	unsigned mx;
	char d[200];

	h_init("tnative");
	__builtin_cpu_init();
	do16 = have_f16c();
	dobf = have_bf16();
	if (!do16 && !dobf)
		h_skip("this CPU has neither F16C nor AVX512_BF16");
	if (!do16)
		h_note("skip the fp16 comparisons (VCVTPS2PH, VCVTPH2PS): this CPU lacks f16c");
	if (!dobf)
		h_note("skip the bf16 comparisons (VCVTNEPS2BF16): this CPU lacks avx512_bf16");

	mx = _mm_getcsr();
	if ((mx & 0xffc0u) != MXCSR_DEFAULT)
		h_note("MXCSR was 0x%04x (not the default 0x1f80): reset for the test", mx);
	_mm_setcsr(MXCSR_DEFAULT);

	if (fpl_format_lookup(&fp16, "fp16") != 0 || fpl_format_lookup(&bf16, "bf16") != 0
	    || fpl_format_lookup(&fp32daz, "fp32") != 0) {
		h_fail("fp16, bf16 or fp32 not found");
		return h_done();
	}
	if (!check_formats(&fp16, &bf16))
		return h_done();
	bf16hw = bf16;
	snprintf(bf16hw.name, sizeof bf16hw.name, "bf16/vcvtneps2bf16");
	bf16hw.subnormal = FPL_SUB_FTZ;
	bf16hw.tininess = FPL_TINY_BEFORE;
	fp32daz.daz = 1;
	if (!h_check(fpl_format_finish(&bf16hw) == 0 && fpl_format_finish(&fp32daz) == 0)) {
		h_fail("cannot finish the bf16 (ftz, tininess before) or fp32 (daz) formats");
		return h_done();
	}
	h_note("kernels: selected \"%s\"; bf16 as VCVTNEPS2BF16: %s", fpl_kernels_selected(),
	       h_format_desc(&bf16hw, d, sizeof d));

	if (do16) {
		decode_all(&fp16);
		h_note("fp16: all 65536 codes decoded (VCVTPH2PS) and encoded");
	}

	/* scalar, with flags */
	sj = (scalar_job){ .fp16 = &fp16, .bf16 = &bf16, .bf16hw = &bf16hw, .fp32daz = &fp32daz,
			   .do_fp16 = do16, .do_bf16 = dobf };
	sj.table = make_table(&sj.ntable);
	if (!sj.table) {
		h_fail("out of memory");
		return h_done();
	}
	sj.nrand = h_long() ? 1ull << 24 : san ? 1ull << 16 : 1ull << 20;
	h_parallel(h_threads(), scalar_worker, &sj);
	{
		unsigned long long n = 0, after = 0;
		int k;
		for (k = 0; k < MAXTH; k++) {
			n += sj.n[k][0];
			after += sj.n[k][1];
		}
		h_note("scalar: %llu table and %llu random inputs, %llu results compared",
		       (unsigned long long)sj.ntable, (unsigned long long)sj.nrand, n);
		if (do16)
			h_note("fp16 flags: %llu conversions were tiny before rounding, inexact, "
			       "and had UE clear (tininess after rounding)", after);
	}
	free((void *)sj.table);

	if (do16) {
		s16.name = "fp16";
		s16.nmodes = 4;
		s16.f = &fp16;
		if (h_long()) {
			all_segments(&s16);
			s16.stride = 1;
			s16.progress = 1;
		} else {
			add_segments(&s16, fp16_ex, sizeof fp16_ex / sizeof *fp16_ex);
			s16.stride = san ? 4 : 1;
			s16.nrand = (san ? 1ull << 23 : 1ull << 26) / CH;
		}
		h_note("fp16: %llu comparisons with VCVTPS2PH (imm 0-3) done", run_sweep(&s16));
	}
	if (dobf) {
		sbf.name = "bf16";
		sbf.bf16 = 1;
		sbf.nmodes = 1;
		sbf.f = &bf16hw;
		if (san) {
			all_segments(&sbf);
			sbf.stride = 64;
			sbf.nrand = (1ull << 22) / CH;
		} else {
			all_segments(&sbf);
			sbf.stride = 1;
			sbf.progress = h_long();
		}
		h_note("bf16: %llu comparisons with VCVTNEPS2BF16 done", run_sweep(&sbf));
	}
	return h_done();
}

#endif

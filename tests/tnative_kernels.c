/* SPDX-License-Identifier: MIT */
/*
 * tests/tnative_kernels.c - every kernel of the native registry
 * (fplab/native.h) against its emulated twin, bit for bit, on this CPU;
 * and the drivers of the bf16 and fp16 kernels (native/gemm_dpbf16_body.h,
 * native/gemm_amx_body.h, native/gemm_ph_body.h, native/arith_ph_body.h)
 * run on any CPU with plain-C instructions.
 *
 *  1. GEMM kernels (fma32-avx512, fma32, avx512bf16, amx-bf16, avx512fp16):
 *     fpl_native_gemm against
 *     fpl_accum_gemm with the kernel's profile on the reference path
 *     (FPLAB_ACCUM=ref, so the expected bits never come from a hardware
 *     fma path that might share code with the kernel): shapes with
 *     remainders in m and n (block sizes 6/8/32 rows, 16/32 columns) and
 *     k = 0, 1, 2, 3, 7, 31, 32, 33, 63, 64, 65, 511, 512, 513, 1025;
 *     beta 0 and 1; 1 and 2 threads (some shapes big enough that the
 *     kernels really split rows); data: moderate, wide exponent range,
 *     tiny (denormal inputs, products near 2^-126 so steps flush to
 *     zero), specials (+-0, +-inf, NaNs with payloads, quiet and
 *     signaling; for bf16 profiles payloads in the top 16 bits; for
 *     fp16-fma everything, C included, at fp16's scale: gen16),
 *     huge (products that overflow binary32 in the chain, inf - inf) and
 *     a mix of all; at least 10^6 outputs per kernel.  Output floats are
 *     compared by their bits, NaN payloads included.  Before the random
 *     cases, crafted ones: chains that end at -0 (tiny negative products
 *     flushed by FTZ) with C = -0 or a negative denormal, k odd and even,
 *     where a wrong pad (a +0 pad in AMX's K tail, a -0 pad in
 *     VDPBF16PS's odd k) changes the sign of a zero output.  The
 *     fp32-fma kernels then run fp32_sweep (every m and n in 1 .. 67, K
 *     to 4096 across fma32-avx512's K blocks, 1-3 threads), and
 *     fpl_native_find must pick fma32-avx512 where usable, else fma32.
 *  2. ROUND kernels: fpl_native_round_f32 against fpl_round_array_f32
 *     then fpl_encode, in each of the kernel's modes: f16c against fp16,
 *     avx512bf16-cvt against bf16 with subnormal = ftz and tininess =
 *     before (tests/tnative.c says why that is VCVTNEPS2BF16); inputs: a
 *     TestFloat-style table, whole exponent segments around the
 *     subnormal and overflow edges of the format (sampled), random bits
 *     with tie patterns; more than 10^6 per mode.
 *  2b. ARITH (avx512fp16-arith): fpl_native_arith_f16 against fplab's
 *     fp16 (fpl_add, fpl_mul, fpl_fma, element by element) in ne, tn, tp
 *     and tz: a TestFloat-style table of fp16 operands crossed, then
 *     random encodings, cancelling pairs and fma addends near -a*b, in
 *     blocks whose length is not a multiple of 32; then lengths 0 .. 100
 *     in place (out == a) with a guard past the end; more than 6 10^6
 *     triples.
 *  3. The portable twins: the VDPBF16PS and TDPBF16PS drivers, with one
 *     instruction computed per lane in plain C from DESIGN.md §5
 *     (tw_fma below: an independent implementation of the step, exact
 *     through binary64 and round-to-odd, not the engine), against the
 *     profiles "avx512bf16" and "amx-bf16", as in 1, on every CPU.  Only
 *     the intrinsic mappings of x86/gemm_avx512bf16.c and x86/gemm_amx.c
 *     are then left to part 1 on a CPU that has the instructions.  And
 *     VCVTNEPS2BF16 by its pseudo-code against the emulation part 2
 *     uses for avx512bf16-cvt, so that side of the comparison is checked
 *     here too.  The VFMADD231PH driver with tw_arith16 (an fp16 fma
 *     from IEEE 754 through binary64 and round-to-odd, not the engine)
 *     against the profile "fp16-fma", as in 1.  The fp16 array driver
 *     with the engine in each lane, as in 2b, and the engine's fp16 add,
 *     mul and fma against tw_arith16 in the four modes (about 1.6 10^6
 *     triples), so the expected side of 2b is checked on every CPU too.
 *
 * A kernel this CPU cannot run prints a line naming it and why; with
 * FPLAB_KERNELS=ref every native kernel is skipped (saying so) and only
 * the twins run.  fma32: gemm_fma32.c relies on this CPU's fma taking the
 * NaN of a, then b, then the accumulator; a probe checks that first, and
 * where it differs NaN outputs are compared only as "both NaN" (a note
 * says so).  avx512fp16: the same probe, but a difference is a failure:
 * fplab-native(7) states that rule for VFMADD231PH, inferred, not
 * measured, and this is where it is measured.
 *
 * Time: about 25 s here (release, two threads; 40 s on one; the fp32
 * sweeps 8 s of it), 110 s under ASan, of which the fp16 twins take 7 s and 16 s; the
 * references run on fplab's scalar path, the twins one step per lane.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/native.h>

#include "harness.h"
#include "native/f16_bits.h"
#include "native/native_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TW_ENV_ENTER()                    \
	const unsigned tw_csr = _mm_getcsr(); \
	_mm_setcsr(0x1f80)
#define TW_ENV_LEAVE() _mm_setcsr(tw_csr)
#else
#define TW_ENV_ENTER() ((void)0)
#define TW_ENV_LEAVE() ((void)0)
#endif

/* ------------------------------------------------------------ bits */

static int nan32(uint32_t u)
{
	return (u & 0x7fffffffu) > 0x7f800000u;
}

/* A binary64 holding a binary32 value back to its bits (NaN payload by
 * the bits). */
static uint32_t narrow(double x)
{
	uint64_t u = h_bits(x);

	if (x != x)
		return (uint32_t)(u >> 63) << 31 | 0x7f800000u | (uint32_t)(u >> 29 & 0x7fffffu);
	return h_bits32((float)x);
}

/* --------------------------------------------- the portable instructions */

static uint32_t tw_daz(uint32_t u)
{
	return (u & 0x7f800000u) ? u : u & 0x80000000u;
}

/*
 * One step of VDPBF16PS or TDPBF16PS on binary32 bits (a bf16 operand is
 * its bits << 16): fma(a, b, c) with every operand read as zero when
 * denormal, the exact a*b + c rounded once to binary32 in nearest-even,
 * a result tiny after rounding (below 2^-126 when rounded with an
 * unbounded exponent) flushed to the zero of its sign; NaN: the first of
 * a, b, c, quieted; inf*0 and inf-inf the default NaN 0xffc00000.
 *
 * Exactness: a*b has at most 48 significant bits and |a*b| is 0, inf or
 * in [2^-252, 2^256], so it is exact in binary64; TwoSum gives s + e =
 * a*b + c exactly (no overflow); s made odd toward e when e != 0 is
 * a*b + c rounded to odd at 53 bits, and rounding that to 24 bits is the
 * single rounding (53 >= 24 + 2).  Below 2^-100 the value is scaled by
 * 2^64 first so that the 24-bit rounding is not the subnormal one.
 */
static uint32_t tw_fma(uint32_t a, uint32_t b, uint32_t c)
{
	double x, y, z, p, s, bb, e;

	a = tw_daz(a);
	b = tw_daz(b);
	c = tw_daz(c);
	if (nan32(a))
		return a | 0x400000u;
	if (nan32(b))
		return b | 0x400000u;
	if (nan32(c))
		return c | 0x400000u;
	x = (double)h_f32(a);
	y = (double)h_f32(b);
	z = (double)h_f32(c);
	if ((isinf(x) && y == 0) || (isinf(y) && x == 0))
		return 0xffc00000u;
	p = x * y;
	if (isinf(p) || isinf(z)) {
		if (isinf(p) && isinf(z) && (p > 0) != (z > 0))
			return 0xffc00000u;
		return h_bits32((float)(p + z));
	}
	s = p + z;
	bb = s - p;
	e = (p - (s - bb)) + (z - bb);
	if (e != 0 && !(h_bits(s) & 1))
		s = nextafter(s, e > 0 ? INFINITY : -INFINITY);
	if (fabs(s) < 0x1p-100) {
		float t = (float)(s * 0x1p64);
		if (fabsf(t) < 0x1p-62f)
			return signbit(s) ? 0x80000000u : 0u;
		return h_bits32(t * 0x1p-64f);
	}
	return h_bits32((float)s);
}

#define TW_ONE 0x3f800000u

/* VDPBF16PS: 16 lanes. */
typedef struct tw_acc {
	uint32_t u[16];
} tw_acc;
typedef struct tw_pairs {
	uint32_t u[16];
} tw_pairs;

static tw_acc tw_zero(void)
{
	tw_acc v;
	memset(&v, 0, sizeof v);
	return v;
}

static tw_acc tw_loadc(const float *p)
{
	tw_acc v;
	memcpy(v.u, p, sizeof v.u);
	return v;
}

static void tw_storec(float *p, tw_acc v)
{
	memcpy(p, v.u, sizeof v.u);
}

static tw_pairs tw_loadp(const uint32_t *p)
{
	tw_pairs v;
	memcpy(v.u, p, sizeof v.u);
	return v;
}

static tw_pairs tw_bcast(const uint32_t *p)
{
	tw_pairs v;
	int j;
	for (j = 0; j < 16; j++)
		v.u[j] = *p;
	return v;
}

/* c_j = fma(a.lo, b.lo, fma(a.hi, b.hi, c_j)): DESIGN.md §5. */
static tw_acc tw_dp(tw_acc c, tw_pairs a, tw_pairs b)
{
	int j;
	for (j = 0; j < 16; j++) {
		uint32_t t = tw_fma(a.u[j] & 0xffff0000u, b.u[j] & 0xffff0000u, c.u[j]);
		c.u[j] = tw_fma(a.u[j] << 16, b.u[j] << 16, t);
	}
	return c;
}

#define DP_GEMM tw_dpbf16_gemm
#define DP_LINKAGE static
#define DP_ACC tw_acc
#define DP_PAIRS tw_pairs
#define DP_ZEROC() tw_zero()
#define DP_LOADC(p) tw_loadc(p)
#define DP_STOREC(p, v) tw_storec((p), (v))
#define DP_LOADB(p) tw_loadp(p)
#define DP_BCAST(p) tw_bcast(p)
#define DP_STEP(c, a, b) ((c) = tw_dp((c), (a), (b)))
#define DP_ENV_ENTER() TW_ENV_ENTER()
#define DP_ENV_LEAVE() TW_ENV_LEAVE()
#define DP_MIN_WORK 0
#include "native/gemm_dpbf16_body.h"

/* TDPBF16PS: eight tiles of 16 rows x 16 words, per thread. */
static _Thread_local uint32_t tw_tmm[8][256];

static void tw_tile_load(int t, const void *p, size_t s)
{
	int r;
	for (r = 0; r < 16; r++)
		memcpy(tw_tmm[t] + 16 * r, (const char *)p + (size_t)r * s, 64);
}

static void tw_tile_store(int t, void *p, size_t s)
{
	int r;
	for (r = 0; r < 16; r++)
		memcpy((char *)p + (size_t)r * s, tw_tmm[t] + 16 * r, 64);
}

/* Per element: even and odd chains from +0 over the 16 pairs, then
 * C = C + (even + odd), C first in NaN priority: DESIGN.md §5. */
static void tw_amx_dp(int c, int a, int b)
{
	int r, j, p;

	for (r = 0; r < 16; r++)
		for (j = 0; j < 16; j++) {
			uint32_t ev = 0, od = 0, u;
			for (p = 0; p < 16; p++) {
				uint32_t x = tw_tmm[a][16 * r + p], y = tw_tmm[b][16 * p + j];
				ev = tw_fma(x << 16, y << 16, ev);
				od = tw_fma(x & 0xffff0000u, y & 0xffff0000u, od);
			}
			u = tw_fma(TW_ONE, ev, od);
			tw_tmm[c][16 * r + j] = tw_fma(TW_ONE, tw_tmm[c][16 * r + j], u);
		}
}

#define AMX_GEMM tw_amx_gemm
#define AMX_LINKAGE static
#define AMX_ENTER() TW_ENV_ENTER()
#define AMX_LEAVE() TW_ENV_LEAVE()
#define AMX_ZERO(t) memset(tw_tmm[t], 0, sizeof tw_tmm[t])
#define AMX_LOADC(t, p, s) tw_tile_load(t, p, s)
#define AMX_STOREC(t, p, s) tw_tile_store(t, p, s)
#define AMX_LOADT(t, p) tw_tile_load(t, p, 64)
#define AMX_DP(c, a, b) tw_amx_dp(c, a, b)
#define AMX_MIN_WORK 0
#include "native/gemm_amx_body.h"

/* ------------------------------------------ the portable fp16 instructions */

static int nan16(uint16_t h)
{
	return (h & 0x7fffu) > 0x7c00u;
}

static double d16(uint16_t h)
{
	return (double)h_f32(fpl__f16_to_f32(h));
}

/*
 * x rounded to binary16 in mode rnd (FPL_RND_NE, TN, TP, TZ), encoded;
 * x finite and nonzero, exact or rounded to odd at 53 bits (which keeps
 * at least 2 bits below fp16's quantum 2^max(e-10, -24) at every
 * magnitude below 2^33, so the second rounding is the correct one).
 * The quantum q = 2^(max(e, -14) - 10) is a power of two, so x/q is
 * exact and rint/floor/ceil/trunc round it to an integer in the mode;
 * a result above 65504 overflows as IEEE 754 says for the mode.
 */
static uint16_t tw_round16(double x, fpl_rnd rnd)
{
	const uint16_t s = signbit(x) ? 0x8000u : 0u;
	int e = ilogb(x);
	double q, r;

	if (e < -14)
		e = -14;
	q = ldexp(1.0, e - 10);
	switch (rnd) {
	case FPL_RND_TN: r = floor(x / q); break;
	case FPL_RND_TP: r = ceil(x / q); break;
	case FPL_RND_TZ: r = trunc(x / q); break;
	default: r = nearbyint(x / q); break;
	}
	r *= q;
	if (fabs(r) > 65504.0) {
		int inf = rnd == FPL_RND_NE || (rnd == FPL_RND_TP && !s) || (rnd == FPL_RND_TN && s);
		return (uint16_t)(s | (inf ? 0x7c00u : 0x7bffu));
	}
	if (r == 0)
		return s;
	return fpl__f32_to_f16(h_bits32((float)r));
}

/*
 * One fp16 add (x + y), mul (x * y) or fma (x * y + z) in mode rnd, from
 * IEEE 754 and the x86 NaN rule, written without fplab's engine: NaN
 * operands first (the first of x, y, z, quieted), then invalid (inf*0,
 * inf - inf: the default NaN 0xfe00), then infinite results, then the
 * exact result (x + y and x * y are exact in binary64; x*y + z through
 * TwoSum and rounding to odd, as tw_fma) rounded once; an exact zero sum
 * is -0 in tn, +0 otherwise, unless both addends are zeros of one sign.
 */
static uint16_t tw_arith16(fpl_native_arith_op op, fpl_rnd rnd, uint16_t a, uint16_t b,
			   uint16_t c)
{
	double x, y, z, p, s, bb, e;

	if (nan16(a))
		return a | 0x200u;
	if (nan16(b))
		return b | 0x200u;
	if (op == FPL_NATIVE_FMA && nan16(c))
		return c | 0x200u;
	x = d16(a);
	y = d16(b);
	if (op == FPL_NATIVE_ADD) {
		p = x;
		z = y;
	} else {
		if ((isinf(x) && y == 0) || (isinf(y) && x == 0))
			return 0xfe00u;
		p = x * y;
		z = op == FPL_NATIVE_FMA ? d16(c) : 0.0;
		if (op == FPL_NATIVE_MUL) {
			if (isinf(p))
				return signbit(p) ? 0xfc00u : 0x7c00u;
			return p == 0 ? (uint16_t)(signbit(p) ? 0x8000u : 0u) : tw_round16(p, rnd);
		}
	}
	if (isinf(p) || isinf(z)) {
		if (isinf(p) && isinf(z) && (p > 0) != (z > 0))
			return 0xfe00u;
		return (isinf(p) ? p : z) > 0 ? 0x7c00u : 0xfc00u;
	}
	s = p + z;
	bb = s - p;
	e = (p - (s - bb)) + (z - bb);
	if (s == 0 && e == 0) {
		if (p == 0 && z == 0 && signbit(p) == signbit(z))
			return signbit(p) ? 0x8000u : 0u;
		return rnd == FPL_RND_TN ? 0x8000u : 0u;
	}
	if (e != 0 && !(h_bits(s) & 1))
		s = nextafter(s, e > 0 ? INFINITY : -INFINITY);
	return tw_round16(s, rnd);
}

/* VFMADD231PH: 32 lanes of fp16 encodings. */
typedef struct tw_ph {
	uint16_t u[32];
} tw_ph;

static tw_ph tw_ph_load(const uint16_t *p)
{
	tw_ph v;
	memcpy(v.u, p, sizeof v.u);
	return v;
}

static tw_ph tw_ph_bcast(const uint16_t *p)
{
	tw_ph v;
	int j;
	for (j = 0; j < 32; j++)
		v.u[j] = *p;
	return v;
}

/* c_j = fma(a_j, b_j, c_j) in nearest even: one VFMADD231PH c, a, b. */
static tw_ph tw_ph_fma(tw_ph c, tw_ph a, tw_ph b)
{
	int j;
	for (j = 0; j < 32; j++)
		c.u[j] = tw_arith16(FPL_NATIVE_FMA, FPL_RND_NE, a.u[j], b.u[j], c.u[j]);
	return c;
}

#define PH_GEMM tw_ph_gemm
#define PH_LINKAGE static
#define PH_ACC tw_ph
#define PH_LOAD(p) tw_ph_load(p)
#define PH_STORE(p, v) memcpy((p), (v).u, sizeof (v).u)
#define PH_BCAST(p) tw_ph_bcast(p)
#define PH_STEP(c, a, b) ((c) = tw_ph_fma((c), (a), (b)))
#define PH_ENV_ENTER() TW_ENV_ENTER()
#define PH_ENV_LEAVE() TW_ENV_LEAVE()
#define PH_MIN_WORK 0
#include "native/gemm_ph_body.h"

/* The element-wise driver with fplab's engine in each lane: the twin of
 * avx512fp16-arith (its expected side, the engine called element by
 * element, is then independent of the driver). */
static fpl_format tw_fp16;
static fpl_state tw_st;

static uint16_t eng16(fpl_native_arith_op op, fpl_rnd rnd, uint16_t a, uint16_t b, uint16_t c)
{
	const double x = fpl_decode(&tw_fp16, a), y = fpl_decode(&tw_fp16, b);
	double r;

	if (op == FPL_NATIVE_ADD)
		r = fpl_add(&tw_fp16, x, y, rnd, &tw_st);
	else if (op == FPL_NATIVE_MUL)
		r = fpl_mul(&tw_fp16, x, y, rnd, &tw_st);
	else
		r = fpl_fma(&tw_fp16, x, y, fpl_decode(&tw_fp16, c), rnd, &tw_st);
	return (uint16_t)fpl_encode(&tw_fp16, r);
}

static tw_ph tw_ph_op(fpl_native_arith_op op, fpl_rnd rnd, tw_ph x, tw_ph y, tw_ph z)
{
	tw_ph r;
	int j;
	for (j = 0; j < 32; j++)
		r.u[j] = eng16(op, rnd, x.u[j], y.u[j], z.u[j]);
	return r;
}

#define AR_ARITH tw_ph_arith_drv
#define AR_LINKAGE static
#define AR_VEC tw_ph
#define AR_LOAD(p) tw_ph_load(p)
#define AR_STORE(p, v) memcpy((p), (v).u, sizeof (v).u)
#define AR_NE FPL_RND_NE
#define AR_TN FPL_RND_TN
#define AR_TP FPL_RND_TP
#define AR_TZ FPL_RND_TZ
#define AR_ADD(x, y, r) tw_ph_op(FPL_NATIVE_ADD, (r), (x), (y), (x))
#define AR_MUL(x, y, r) tw_ph_op(FPL_NATIVE_MUL, (r), (x), (y), (x))
#define AR_FMA(x, y, z, r) tw_ph_op(FPL_NATIVE_FMA, (r), (x), (y), (z))
#include "native/arith_ph_body.h"

/* ------------------------------------------------------------- data */

enum { D_NORMAL, D_WIDE, D_TINY, D_SPECIAL, D_HUGE, D_MIX, D_COUNT };
static const char *const kind_names[D_COUNT] = { "moderate", "wide", "tiny", "special",
						 "huge", "mix" };

enum { IN_FP32, IN_BF16, IN_FP16 };

/* A random fp16 value of kind `kind` as binary32 bits: the same kinds at
 * fp16's scale (wide: every binade; tiny: subnormals, zeros, the
 * smallest normals and values near 2^-12 whose products are subnormal;
 * special: +-0, +-inf, NaNs with payloads, quiet or signaling,
 * subnormals; huge: 2^7 .. 2^10, whose products and sums overflow). */
static uint32_t gen16(h_rng *g, int kind, uint32_t sp)
{
	uint64_t u = h_rng_next(g);
	uint32_t sign = (uint32_t)(u >> 63) << 15, mant = (uint32_t)u & 0x3ffu, e;
	uint32_t r = (uint32_t)(u >> 32), top = 1u << (r % 10);

	if (kind == D_MIX)
		kind = (int)(r >> 20) % D_MIX;
	switch (kind) {
	case D_WIDE:
		e = 1 + r % 30;
		break;
	case D_TINY:
		switch (r % 8) {
		case 0: e = 0; mant |= top; break;
		case 1: e = 0; mant = 0; break;
		case 2: e = 1 + (r >> 8) % 3; break;
		default: e = 15 - 13 + (r >> 8) % 4; break;
		}
		break;
	case D_SPECIAL:
		switch ((r >> 12) % sp ? 4 : r % 16) {
		case 0: e = 0; mant = 0; break;
		case 1: e = 31; mant = 0; break;
		case 2: e = 31; mant |= top; break;	/* NaN, quiet or signaling */
		case 3: e = 0; mant |= top; break;
		default: e = 15 - 3 + (r >> 8) % 6; break;
		}
		break;
	case D_HUGE:
		e = 15 + 7 + (r >> 8) % 4;
		break;
	default:
		e = 15 - 3 + (r >> 8) % 6;
		break;
	}
	return fpl__f16_to_f32((uint16_t)(sign | e << 10 | mant));
}

/* A random binary32 of kind `kind`; in IN_BF16: a bf16 value (low 16
 * bits 0); IN_FP16: an fp16 value (gen16).  Specials are about 1 in 4
 * elements, and 1 in 4*sp (sp >= 1), so that long chains do not all end
 * in NaN. */
static uint32_t gen(h_rng *g, int kind, int in, uint32_t sp)
{
	const int bf16 = in == IN_BF16;
	uint64_t u = h_rng_next(g);
	uint32_t sign = (uint32_t)(u >> 63) << 31, mant = (uint32_t)u & 0x7fffffu, e;
	uint32_t r = (uint32_t)(u >> 32), top = 1u << (bf16 ? 16 + r % 7 : r % 23);

	if (in == IN_FP16)
		return gen16(g, kind, sp);
	if (kind == D_MIX)
		kind = (int)(r >> 20) % D_MIX;
	switch (kind) {
	case D_WIDE:
		e = 1 + r % 254;
		break;
	case D_TINY:	/* denormals, the smallest normals, products near 2^-126 */
		switch (r % 8) {
		case 0: e = 0; mant |= top; break;
		case 1: e = 0; mant = 0; break;
		case 2: e = 1 + (r >> 8) % 3; break;
		default: e = 127 - 70 + (r >> 8) % 16; break;
		}
		break;
	case D_SPECIAL:
		switch ((r >> 12) % sp ? 4 : r % 16) {
		case 0: e = 0; mant = 0; break;
		case 1: e = 255; mant = 0; break;
		case 2: e = 255; mant |= top; break;	/* NaN, quiet or signaling */
		case 3: e = 0; mant |= top; break;
		default: e = 127 - 3 + (r >> 8) % 6; break;
		}
		break;
	case D_HUGE:	/* products 2^112 .. 2^132: the chain overflows */
		e = 127 + 56 + (r >> 8) % 10;
		break;
	default:
		e = 127 - 3 + (r >> 8) % 6;
		break;
	}
	u = sign | e << 23 | mant;
	return bf16 ? (uint32_t)u & 0xffff0000u : (uint32_t)u;
}

/* --------------------------------------------------------------- GEMM */

typedef int (*gemm_fn)(int beta, size_t m, size_t n, size_t kk, const float *a, const float *b,
		       float *c, int threads);

typedef struct gtest {
	const char *name;		/* for messages */
	const char *profile;
	const fpl_native_kernel *k;	/* a native kernel, or NULL: fn */
	gemm_fn fn;
	fpl_accum_model model;
	int in;				/* inputs: IN_FP32, IN_BF16 or IN_FP16 values */
	int nan_loose;			/* compare NaN outputs as "both NaN" */
	unsigned long long outputs;	/* outputs compared */
	unsigned long long nans;	/* of which NaN */
	unsigned long long negz;	/* of which -0 */
	unsigned long long fails;
} gtest;

static int call(gtest *T, int beta, size_t m, size_t n, size_t kk, const float *a,
		const float *b, float *c, int threads)
{
	if (T->k)
		return fpl_native_gemm(T->k, beta, m, n, kk, a, b, c, threads);
	return T->fn(beta, m, n, kk, a, b, c, threads);
}

/* want[] = the profile's C (bits) for a, b, c0 (the reference path). */
static int reference(gtest *T, int beta, size_t m, size_t n, size_t kk, const float *a,
		     const float *b, const float *c0, uint32_t *want)
{
	double *ad = malloc((m * kk + 1) * sizeof *ad), *bd = malloc((kk * n + 1) * sizeof *bd);
	double *cd = malloc((m * n + 1) * sizeof *cd);
	fpl_state st;
	size_t i;
	int rc = FPL_ENOMEM;

	if (ad && bd && cd) {
		for (i = 0; i < m * kk; i++)
			ad[i] = h_widen32(h_bits32(a[i]));
		for (i = 0; i < kk * n; i++)
			bd[i] = h_widen32(h_bits32(b[i]));
		for (i = 0; i < m * n; i++)
			cd[i] = h_widen32(h_bits32(c0[i]));
		fpl_state_init(&st, h_seed());
		st.threads = h_threads();
		setenv("FPLAB_ACCUM", "ref", 1);
		rc = fpl_accum_gemm(cd, n, &T->model, beta, m, n, kk, ad, kk, 0, bd, n, 0, NULL,
				    &st);
		unsetenv("FPLAB_ACCUM");
		for (i = 0; rc == 0 && i < m * n; i++)
			want[i] = narrow(cd[i]);
	}
	free(ad);
	free(bd);
	free(cd);
	return rc;
}

/* Compare got with want; report the first few mismatches. */
static void compare(gtest *T, const char *what, size_t m, size_t n, size_t kk, const float *a,
		    const float *b, const float *c0, const uint32_t *want, const float *got)
{
	size_t i, bad = 0;

	for (i = 0; i < m * n; i++) {
		uint32_t g = h_bits32(got[i]), w = want[i];
		int ok = g == w || (T->nan_loose && nan32(g) && nan32(w));
		T->outputs++;
		T->nans += nan32(w);
		T->negz += w == 0x80000000u;
		if (ok)
			continue;
		T->fails++;
		if (++bad <= 3) {
			size_t r = i / n, j = i % n;
			h_fail("%s %s: C[%zu][%zu] of %zu x %zu x %zu: profile 0x%08x (%a), got "
			       "0x%08x (%a); C0 0x%08x, A[%zu][0] 0x%08x, B[0][%zu] 0x%08x",
			       T->name, what, r, j, m, n, kk, w, (double)h_f32(w), g, (double)h_f32(g),
			       h_bits32(c0[i]), r, kk ? h_bits32(a[r * kk]) : 0u, j,
			       kk ? h_bits32(b[j]) : 0u);
		}
	}
	if (bad > 3)
		h_fail("%s %s: %zu mismatches of %zu outputs (%zu x %zu x %zu)", T->name, what, bad,
		       m * n, m, n, kk);
	h_check(bad == 0);
}

/* The most threads gemm_case runs the kernel with (from 1). */
static int case_threads = 2;

/* One shape, one data kind, one beta: the reference once, then the
 * kernel with 1 .. case_threads threads. */
static void gemm_case(gtest *T, size_t m, size_t n, size_t kk, int kind, int beta, h_rng *g)
{
	float *a = malloc((m * kk + 1) * sizeof *a), *b = malloc((kk * n + 1) * sizeof *b);
	float *c0 = malloc(m * n * sizeof *c0), *c = malloc(m * n * sizeof *c);
	uint32_t *want = malloc(m * n * sizeof *want);
	const uint32_t sp = kk > 16 ? (uint32_t)(kk / 16) : 1;
	char what[96];
	size_t i;
	int th, rc;

	if (!a || !b || !c0 || !c || !want) {
		h_fail("out of memory");
		goto out;
	}
	for (i = 0; i < m * kk; i++)
		a[i] = h_f32(gen(g, kind, T->in, sp));
	for (i = 0; i < kk * n; i++)
		b[i] = h_f32(gen(g, kind, T->in, sp));
	for (i = 0; i < m * n; i++)	/* C: binary32, or fp16 for an fp16 accumulator */
		c0[i] = h_f32(gen(g, kind, T->in == IN_FP16 ? IN_FP16 : IN_FP32, 1));
	rc = reference(T, beta, m, n, kk, a, b, c0, want);
	if (!h_check(rc == 0)) {
		h_fail("%s: fpl_accum_gemm (%zu x %zu x %zu) returned %d (%s)", T->name, m, n, kk,
		       rc, fpl_strerror(rc));
		goto out;
	}
	for (th = 1; th <= case_threads; th++) {
		memcpy(c, c0, m * n * sizeof *c);
		rc = call(T, beta, m, n, kk, a, b, c, th);
		snprintf(what, sizeof what, "%s data, beta %d, %d thread%s", kind_names[kind], beta,
			 th, th > 1 ? "s" : "");
		if (!h_check(rc == 0)) {
			h_fail("%s %s: returned %d (%s)", T->name, what, rc, fpl_strerror(rc));
			continue;
		}
		compare(T, what, m, n, kk, a, b, c0, want, c);
	}
out:
	free(a);
	free(b);
	free(c0);
	free(c);
	free(want);
}

/* Edge shapes: every kind and beta.  Remainders against the blocks of
 * all three kernels (6 x 16, 8 x 32, 32 x 32 with K tiles of 32). */
static const size_t edge_shapes[][3] = {
	{ 1, 1, 0 },	{ 2, 3, 0 },	{ 1, 1, 1 },	 { 1, 1, 2 },	  { 1, 1, 3 },
	{ 2, 3, 1 },	{ 3, 5, 2 },	{ 7, 31, 3 },	 { 8, 32, 31 },	  { 9, 33, 32 },
	{ 15, 17, 33 }, { 16, 16, 63 }, { 17, 47, 64 },	 { 6, 64, 65 },	  { 33, 65, 7 },
	{ 5, 20, 511 }, { 3, 33, 512 }, { 4, 31, 513 },	 { 31, 64, 96 },  { 40, 48, 100 },
	{ 12, 40, 1025 }, { 64, 128, 129 },
};
/* Bulk shapes: many outputs, short chains; one per (kind, beta). */
static const size_t bulk_shapes[][3] = {
	{ 250, 101, 5 }, { 97, 263, 6 }, { 131, 190, 7 }, { 201, 129, 4 },
	{ 77, 333, 9 },	 { 160, 161, 8 },
};
#define NEDGE (sizeof edge_shapes / sizeof *edge_shapes)
#define NBULK (sizeof bulk_shapes / sizeof *bulk_shapes)

/* Crafted: chains that end at -0 (a tiny negative product flushed) with
 * C = -0, odd and even K, for the sign of zero through pads. */
static void gemm_crafted(gtest *T)
{
	static const size_t ks[] = { 1, 2, 3, 4, 5, 31, 33, 34, 63, 65 };
	/* products 2^-140 (binary32 accumulators: flushed or rounded to -0)
	 * or 2^-28 (fp16: rounded to -0); C -0 or the negative smallest
	 * subnormal of the accumulator */
	const float tiny = T->in == IN_FP16 ? 0x1p-14f : 0x1p-70f;
	const uint32_t cden = T->in == IN_FP16 ? 0xb3800000u : 0x80000001u;
	size_t q, i;

	for (q = 0; q < sizeof ks / sizeof *ks; q++) {
		const size_t kk = ks[q], m = 3, n = 5;
		float a[3 * 65], b[65 * 5], c0[15], c[15];
		uint32_t want[15];
		int beta, th;
		for (i = 0; i < m * kk; i++)
			a[i] = (i % 3 == 2) ? 0.0f : -tiny;
		for (i = 0; i < kk * n; i++)
			b[i] = (i % 7 == 3) ? -0.0f : tiny;
		for (i = 0; i < m * n; i++)
			c0[i] = (i & 1) ? -0.0f : h_f32(cden);
		for (beta = 0; beta <= 1; beta++) {
			if (!h_check(reference(T, beta, m, n, kk, a, b, c0, want) == 0)) {
				h_fail("%s: crafted reference failed", T->name);
				return;
			}
			for (th = 1; th <= 2; th++) {
				memcpy(c, c0, sizeof c);
				if (!h_check(call(T, beta, m, n, kk, a, b, c, th) == 0))
					h_fail("%s: crafted call failed", T->name);
				else
					compare(T, beta ? "crafted -0, beta 1" : "crafted -0, beta 0", m,
						n, kk, a, b, c0, want, c);
			}
		}
	}
}

static void gemm_test(gtest *T, uint64_t salt)
{
	h_rng g;
	size_t s;
	int kind, beta, q = 0;
	double t0 = h_now();

	h_rng_init(&g, salt);
	gemm_crafted(T);
	for (s = 0; s < NEDGE; s++) {
		const size_t *sh = edge_shapes[s];
		for (kind = 0; kind < D_COUNT; kind++)
			for (beta = 0; beta <= 1; beta++)
				gemm_case(T, sh[0], sh[1], sh[2], kind, beta, &g);
	}
	for (kind = 0; kind < D_COUNT; kind++)
		for (beta = 0; beta <= 1; beta++, q++) {
			const size_t *sh = bulk_shapes[(size_t)q % NBULK];
			gemm_case(T, sh[0], sh[1], sh[2], kind, beta, &g);
		}
	h_note("%s: %llu outputs compared with profile %s (%llu NaN, %llu -0), %llu "
	       "mismatches%s (%.1f s)",
	       T->name, T->outputs, T->profile, T->nans, T->negz, T->fails,
	       T->nan_loose ? ", NaNs compared as \"both NaN\"" : "", h_now() - t0);
	if (!h_check(T->outputs >= 1000000))
		h_fail("%s: only %llu outputs compared (want at least 10^6)", T->name, T->outputs);
}

/*
 * fp32-fma kernels (fma32, fma32-avx512), beyond gemm_test: every m and
 * every n in 1 .. 67 (with k = 1 .. 67 varied alongside, against the
 * 6 x 16, 6 x 32 register blocks), K across fma32-avx512's K blocks of
 * 256 (255 .. 257, 511, 768, 4096: a chain continued from C between
 * blocks must keep every bit), M across its 144-row A blocks and N across
 * its 2048-column B blocks; 1, 2 and 3 threads, and two shapes above both
 * kernels' one-thread work sizes (1.6e7 and 4e7 fmas), so rows are
 * really split.  Data kinds and beta rotate.
 */
static void fp32_sweep(gtest *T, uint64_t salt)
{
	static const size_t big[][3] = {
		{ 7, 45, 255 },	 { 5, 33, 256 },   { 6, 32, 257 },  { 13, 67, 511 },
		{ 9, 40, 768 },	 { 7, 45, 4096 },  { 150, 20, 300 }, { 3, 2100, 9 },
		{ 97, 130, 4096 }, { 301, 263, 520 },
	};
	const unsigned long long before = T->outputs;
	h_rng g;
	size_t q, m;
	double t0 = h_now();

	h_rng_init(&g, salt);
	case_threads = 3;
	for (m = 1; m <= 67; m++)	/* m and n = 68 - m both run through 1 .. 67 */
		gemm_case(T, m, 68 - m, 1 + (m * 29) % 67, (int)(m % D_COUNT), (int)(m & 1), &g);
	for (q = 0; q < sizeof big / sizeof *big; q++)
		gemm_case(T, big[q][0], big[q][1], big[q][2], (int)(q % D_COUNT),
			  (int)((q >> 1) & 1), &g);
	case_threads = 2;
	h_note("%s: sizes 1 .. 67, K to 4096, 1-3 threads: %llu more outputs (%.1f s)", T->name,
	       T->outputs - before, h_now() - t0);
}

/*
 * The NaN priority of fma32 (VFMADD231PS) and avx512fp16 (VFMADD231PH):
 * does this CPU's fma, as the kernel uses it, take the NaN of a, then b,
 * then the accumulator, as the profiles fp32-fma and fp16-fma do?  A
 * 9 x 67 x 1 product with beta = 1 (full 6 x 16 and 8 x 64 blocks, row
 * tails and narrow panels: every code path of both kernels), every
 * arrangement of three distinct NaN payloads and numbers.
 */
static int fma32_nan_probe(gtest *T)
{
	enum { PM = 9, PN = 67 };
	/* three distinct payloads; for fp16 fp16 NaNs (0x7e01, 0x7e02,
	 * 0xfe03 held in floats; the first one signaling: 0x7c01) */
	const int h = T->in == IN_FP16;
	const uint32_t na = h ? 0x7f802000u : 0x7fc00011u, nb = h ? 0x7fc04000u : 0x7fc00022u;
	const uint32_t nc = h ? 0xffc06000u : 0xffc00033u;
	float a[PM], b[PN], c0[PM * PN], c[PM * PN];
	uint32_t want[PM * PN];
	int pat, ok = 1;
	size_t i;

	for (pat = 1; pat < 8; pat++) {
		for (i = 0; i < PM; i++)
			a[i] = (pat & 1) ? h_f32(na) : 1.5f;
		for (i = 0; i < PN; i++)
			b[i] = (pat & 2) ? h_f32(nb) : 2.5f;
		for (i = 0; i < PM * PN; i++)
			c0[i] = c[i] = (pat & 4) ? h_f32(nc) : 0.25f;
		if (reference(T, 1, PM, PN, 1, a, b, c0, want) != 0
		    || fpl_native_gemm(T->k, 1, PM, PN, 1, a, b, c, 1) != 0)
			return 0;
		for (i = 0; i < PM * PN; i++)
			if (h_bits32(c[i]) != want[i]) {
				h_note("%s: this CPU's fma returns NaN 0x%08x where the profile "
				       "takes 0x%08x (a %s, b %s, acc %s; output %zu)", T->name,
				       h_bits32(c[i]), want[i], (pat & 1) ? "NaN" : "number",
				       (pat & 2) ? "NaN" : "number", (pat & 4) ? "NaN" : "number", i);
				ok = 0;
				break;
			}
	}
	return ok;
}

/* -------------------------------------------------------------- ROUND */

#define CH (1u << 16)

static const uint32_t round_exps_fp16[] = { 0, 1, 101, 102, 103, 111, 112, 113, 114, 127,
					    141, 142, 143, 144, 254, 255 };
static const uint32_t round_exps_bf16[] = { 0, 1, 2, 126, 127, 128, 253, 254, 255 };

/* The specials and edges (TestFloat style): exponent fields around both
 * formats' subnormal, normal and overflow edges x significand patterns
 * (ties and near-ties of both formats' dropped bits), both signs. */
static uint32_t special_input(uint32_t i)
{
	static const uint32_t ex[] = { 0, 1, 2, 101, 102, 103, 111, 112, 113, 114, 126, 127, 128,
				       141, 142, 143, 144, 253, 254, 255 };
	static const uint32_t fr[] = { 0, 1, 0x7fffff, 0x400000, 0x3fffff, 0x400001, 0x000fff,
				       0x001000, 0x001001, 0x002000, 0x003000, 0x7fe000, 0x7ff000,
				       0x7fefff, 0x008000, 0x008001, 0x007fff, 0x018000, 0x010000,
				       0x7f8000, 0x7fc000, 0x7f7fff, 0x7f0000, 0x200000 };
	const uint32_t nex = sizeof ex / sizeof *ex, nfr = sizeof fr / sizeof *fr;

	i %= 2 * nex * nfr;
	return (i & 1) << 31 | ex[i / 2 % nex] << 23 | fr[i / 2 / nex];
}

/* Input block blk: the specials, whole-segment samples, then random ones. */
static void round_fill(float *x, uint64_t blk, const uint32_t *ex, size_t nex, int bf16)
{
	const uint64_t segs = 2 * nex, per = 2;	/* blocks per segment: 2 x 2^16 of 2^23 */
	h_rng g;
	uint32_t i;

	h_rng_init(&g, 0x60d0ull << 40 ^ blk ^ (uint64_t)bf16 << 32);
	if (blk == 0) {
		for (i = 0; i < CH; i++)
			x[i] = h_f32(special_input(i));
		return;
	}
	blk--;
	if (blk < segs * per) {
		const uint32_t seg = (uint32_t)(blk / per);
		const uint32_t base = (seg & 1) << 31 | ex[seg / 2] << 23;
		const uint32_t off = (uint32_t)h_rng_below(&g, 64);
		for (i = 0; i < CH; i++)	/* stride 64, two blocks cover the segment */
			x[i] = h_f32(base | ((uint32_t)(blk % per) * CH * 64 + i * 64 + off) % 0x800000u);
		return;
	}
	for (i = 0; i < CH; i++) {
		uint64_t u = h_rng_next(&g);
		uint32_t b = (uint32_t)u;
		if (((u >> 32) & 3) == 0)	/* a tie or near-tie in the dropped bits */
			b = (b & (bf16 ? 0xffff0000u : 0xffffe000u))
			    | ((bf16 ? 0x8000u : 0x1000u) ^ (uint32_t)((u >> 40) & 1));
		x[i] = h_f32(b);
	}
}

typedef int (*round_fn)(const fpl_native_kernel *k, fpl_rnd rnd, const float *x, size_t n,
			uint16_t *out);

/* VCVTNEPS2BF16 by its pseudo-code (Intel SDM; tests/tnative.c): a
 * denormal input reads as zero, a NaN keeps its top half with the quiet
 * bit set, any other x gives the top half of x + 0x7fff + bit 16 of x.
 * The portable twin of avx512bf16-cvt: it checks this test's expected
 * side on every CPU. */
static int tw_cvtneps2bf16(const fpl_native_kernel *k, fpl_rnd rnd, const float *x, size_t n,
			   uint16_t *out)
{
	size_t i;

	(void)k;
	if (rnd != FPL_RND_NE)
		return FPL_EUNSUPPORTED;
	for (i = 0; i < n; i++) {
		uint32_t u = h_bits32(x[i]);
		if (nan32(u))
			out[i] = (uint16_t)(u >> 16 | 0x40u);
		else if ((u & 0x7f800000u) == 0)
			out[i] = (uint16_t)(u >> 31 << 15);
		else
			out[i] = (uint16_t)((u + 0x7fffu + (u >> 16 & 1u)) >> 16);
	}
	return 0;
}

/*
 * The conversion `conv` (a native kernel's, or a twin's), named `name`,
 * into `format` ("fp16" or "bf16") in each of `modes`, against
 * fpl_round_array_f32 then fpl_encode.
 */
static void round_test(const char *name, const char *format, const char *modes, round_fn conv,
		       const fpl_native_kernel *k)
{
	const int bf16 = !strcmp(format, "bf16");
	const uint32_t *ex = bf16 ? round_exps_bf16 : round_exps_fp16;
	const size_t nex = bf16 ? sizeof round_exps_bf16 / sizeof *round_exps_bf16
				: sizeof round_exps_fp16 / sizeof *round_exps_fp16;
	const uint64_t nblk = 1 + 2 * nex * 2 + (h_sanitized() ? 4 : 16);
	float *x = malloc(CH * sizeof *x), *y = malloc(CH * sizeof *y);
	uint16_t *code = malloc(CH * sizeof *code);
	unsigned long long n = 0, bad = 0;
	fpl_format f;
	fpl_state st;
	char mbuf[64], *save = NULL, *w;
	uint64_t blk;

	if (!x || !y || !code || fpl_format_lookup(&f, format) != 0) {
		h_fail("%s: out of memory or no format %s", name, format);
		goto out;
	}
	if (bf16) {	/* VCVTNEPS2BF16: tests/tnative.c */
		f.subnormal = FPL_SUB_FTZ;
		f.tininess = FPL_TINY_BEFORE;
		if (!h_check(fpl_format_finish(&f) == 0)) {
			h_fail("cannot finish bf16 (ftz, tininess before)");
			goto out;
		}
	}
	fpl_state_init(&st, h_seed());
	snprintf(mbuf, sizeof mbuf, "%s", modes);
	for (w = strtok_r(mbuf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		fpl_rnd rnd;
		if (!h_check(fpl_rnd_parse(w, &rnd) == 0)) {
			h_fail("%s: mode %s not known", name, w);
			continue;
		}
		for (blk = 0; blk < nblk; blk++) {
			uint32_t i, nb = 0;
			int rc;
			round_fill(x, blk, ex, nex, bf16);
			rc = fpl_round_array_f32(&f, y, x, CH, rnd, &st);
			rc = rc ? rc : conv(k, rnd, x, CH, code);
			if (!h_check(rc == 0)) {
				h_fail("%s mode %s: returned %d (%s)", name, w, rc, fpl_strerror(rc));
				break;
			}
			for (i = 0; i < CH; i++) {
				uint64_t want = fpl_encode(&f, h_widen32(h_bits32(y[i])));
				if (want == code[i])
					continue;
				if (++nb <= 3)
					h_fail("%s mode %s: input 0x%08x (%a): emulation 0x%04x, "
					       "kernel 0x%04x", name, w, h_bits32(x[i]),
					       (double)x[i], (unsigned)want, code[i]);
			}
			h_check(nb == 0);
			bad += nb;
			n += CH;
		}
		/* a short tail: the kernel's last partial vector */
		{
			uint16_t c7[7];
			uint32_t i;
			fpl_round_array_f32(&f, y, x, 7, rnd, &st);
			if (h_check(conv(k, rnd, x, 7, c7) == 0))
				for (i = 0; i < 7; i++)
					if (!h_check(fpl_encode(&f, h_widen32(h_bits32(y[i]))) == c7[i]))
						h_fail("%s mode %s: tail of 7, element %u", name, w,
						       i);
		}
	}
	{	/* no kernel rounds to odd: a mode it lacks is FPL_EUNSUPPORTED */
		uint16_t c1;
		int rc = conv(k, FPL_RND_OD, x, 1, &c1);
		if (!h_check(rc == FPL_EUNSUPPORTED))
			h_fail("%s mode od: returned %d, not FPL_EUNSUPPORTED", name, rc);
	}
	h_note("%s: %llu conversions compared with %s (modes %s), %llu mismatches", name, n,
	       bf16 ? "bf16 (ftz, tininess before)" : format, modes, bad);
out:
	free(x);
	free(y);
	free(code);
}

/* ------------------------------------------------------------- ARITH */

/* The fp16 operand table (TestFloat style): exponent fields 0 (zero and
 * subnormals), 1, 2, 14, 15, 16, 29, 30 (the largest binade), 31 (inf
 * and NaNs) x significand patterns, both signs: 9 x 12 x 2 = 216. */
static uint16_t table16(uint32_t i)
{
	static const uint16_t ex[] = { 0, 1, 2, 14, 15, 16, 29, 30, 31 };
	static const uint16_t fr[] = { 0, 1, 2, 0x3ff, 0x3fe, 0x200, 0x1ff, 0x201, 0x100,
				       0x155, 0x2aa, 0x3c0 };
	const uint32_t nex = sizeof ex / sizeof *ex, nfr = sizeof fr / sizeof *fr;

	i %= 2 * nex * nfr;
	return (uint16_t)((i & 1) << 15 | (uint32_t)ex[i / 2 % nex] << 10 | fr[i / 2 / nex]);
}

#define T16 216u
#define AR_CH (65536u - 7u)	/* a block: not a multiple of 32, so every block has a tail */

/*
 * Operand block blk for op: block 0 the table's pairs (add, mul: every
 * pair, c from the table too; fma: triples sampled), the others random:
 * uniform encodings (NaNs 1 in 32), operands of close magnitude and
 * opposite sign (cancellation), and for fma c near -a*b (so the sum
 * cancels and the single rounding shows).
 */
static void arith_fill(uint16_t *a, uint16_t *b, uint16_t *c, uint64_t blk, int op)
{
	h_rng g;
	uint32_t i;

	h_rng_init(&g, 0xa417ull << 40 ^ blk << 8 ^ (uint64_t)op);
	for (i = 0; i < AR_CH; i++) {
		uint64_t u = h_rng_next(&g);
		if (blk == 0) {
			a[i] = table16(i % T16);
			b[i] = table16(i / T16 % T16);
			c[i] = table16(op == FPL_NATIVE_FMA ? (uint32_t)(u % T16) : i);
			continue;
		}
		a[i] = (uint16_t)u;
		b[i] = (uint16_t)(u >> 16);
		c[i] = (uint16_t)(u >> 32);
		switch ((u >> 48) % 4) {
		case 0:	/* b close to -a */
			b[i] = (uint16_t)((a[i] ^ 0x8000u) + (uint16_t)((u >> 52) % 7) - 3u);
			break;
		case 1:	/* c close to -(a*b) */
			if (!nan16(a[i]) && !nan16(b[i])) {
				double p = d16(a[i]) * d16(b[i]);
				if (p != 0 && !isinf(p) && fabs(p) < 65504.0)
					c[i] = (uint16_t)(tw_round16(-p, FPL_RND_NE)
							  ^ (uint16_t)((u >> 52) & 3));
			}
			break;
		default:
			break;
		}
	}
}

typedef int (*arith_fn)(const fpl_native_kernel *k, fpl_native_arith_op op, fpl_rnd rnd,
			const uint16_t *a, const uint16_t *b, const uint16_t *c, size_t n,
			uint16_t *out);

/* The twin: arith_ph_body.h with the engine in each lane. */
static int tw_ph_arith(const fpl_native_kernel *k, fpl_native_arith_op op, fpl_rnd rnd,
		       const uint16_t *a, const uint16_t *b, const uint16_t *c, size_t n,
		       uint16_t *out)
{
	(void)k;
	return tw_ph_arith_drv(op, rnd, a, b, c, n, out);
}

static const char *const aop_names[] = { "add", "mul", "fma" };

/*
 * fn (a kernel's, or the twin's), named name, in each op and mode, on
 * nblk blocks of operands, against fplab's engine in fp16 called element
 * by element (eng16); with model, also the engine against tw_arith16,
 * the independent model (which checks the expected side itself).  Then
 * short lengths (0, 1, 31, 32, 33, 63, 65, 100) with out == a.
 */
static void arith_test(const char *name, arith_fn fn, const fpl_native_kernel *k,
		       uint64_t nblk, int model)
{
	static const fpl_rnd rnds[] = { FPL_RND_NE, FPL_RND_TN, FPL_RND_TP, FPL_RND_TZ };
	static const size_t lens[] = { 0, 1, 31, 32, 33, 63, 65, 100 };
	uint16_t *a = malloc(AR_CH * sizeof *a), *b = malloc(AR_CH * sizeof *b);
	uint16_t *c = malloc(AR_CH * sizeof *c), *o = malloc(AR_CH * sizeof *o);
	unsigned long long n = 0, bad = 0, mbad = 0, nans = 0;
	int op, q;
	uint64_t blk;
	double t0 = h_now();

	if (!a || !b || !c || !o) {
		h_fail("%s: out of memory", name);
		goto out;
	}
	for (op = 0; op < 3; op++)
		for (q = 0; q < 4; q++) {
			const fpl_rnd rnd = rnds[q];
			for (blk = 0; blk < nblk; blk++) {
				uint32_t i, nb = 0, mb = 0;
				int rc;
				arith_fill(a, b, c, blk, op);
				rc = fn(k, (fpl_native_arith_op)op, rnd, a, b, c, AR_CH, o);
				if (!h_check(rc == 0)) {
					h_fail("%s %s %s: returned %d (%s)", name, aop_names[op],
					       fpl_rnd_name(rnd), rc, fpl_strerror(rc));
					break;
				}
				for (i = 0; i < AR_CH; i++) {
					const uint16_t w = eng16((fpl_native_arith_op)op, rnd, a[i],
								 b[i], c[i]);
					nans += nan16(w);
					if (model && w != tw_arith16((fpl_native_arith_op)op, rnd,
								     a[i], b[i], c[i])
					    && ++mb <= 3)
						h_fail("%s: engine fp16 %s %s (0x%04x, 0x%04x, "
						       "0x%04x) = 0x%04x, the model says 0x%04x",
						       name, aop_names[op], fpl_rnd_name(rnd), a[i],
						       b[i], c[i], w,
						       tw_arith16((fpl_native_arith_op)op, rnd, a[i],
								  b[i], c[i]));
					if (w != o[i] && ++nb <= 3)
						h_fail("%s %s %s: (0x%04x, 0x%04x, 0x%04x) element "
						       "%u: engine 0x%04x, kernel 0x%04x", name,
						       aop_names[op], fpl_rnd_name(rnd), a[i], b[i],
						       c[i], i, w, o[i]);
				}
				h_check(nb == 0 && mb == 0);
				bad += nb;
				mbad += mb;
				n += AR_CH;
			}
			for (blk = 0; blk < sizeof lens / sizeof *lens; blk++) {
				const size_t len = lens[blk];
				uint16_t w[100];
				size_t i;
				arith_fill(a, b, c, 1000 + blk, op);
				for (i = 0; i < len; i++)
					w[i] = eng16((fpl_native_arith_op)op, rnd, a[i], b[i], c[i]);
				a[len] = 0x1234u;	/* past the end: must stay */
				if (!h_check(fn(k, (fpl_native_arith_op)op, rnd, a, b, c, len, a)
					     == 0))
					h_fail("%s: length %zu failed", name, len);
				for (i = 0; i < len; i++)
					if (!h_check(a[i] == w[i])) {
						h_fail("%s %s %s: length %zu, in place, element %zu: "
						       "engine 0x%04x, kernel 0x%04x", name,
						       aop_names[op], fpl_rnd_name(rnd), len, i,
						       w[i], a[i]);
						break;
					}
				if (!h_check(a[len] == 0x1234u))
					h_fail("%s: length %zu wrote past the end", name, len);
			}
		}
	if (k) {	/* a mode the kernel lacks, a bad op */
		if (!h_check(fn(k, FPL_NATIVE_ADD, FPL_RND_OD, a, b, c, 1, o) == FPL_EUNSUPPORTED
			     && fn(k, (fpl_native_arith_op)7, FPL_RND_NE, a, b, c, 1, o)
				== FPL_EINVAL
			     && fn(k, FPL_NATIVE_FMA, FPL_RND_NE, a, b, NULL, 1, o) == FPL_EINVAL))
			h_fail("%s: mode od, op 7 or fma without c not refused", name);
	}
	if (model)
		h_note("%s: %llu operand triples (add, mul, fma x ne tn tp tz) compared with "
		       "fplab's fp16 (%llu NaN), %llu mismatches; fplab's fp16 against the "
		       "independent model, %llu mismatches (%.1f s)", name, n, nans, bad, mbad,
		       h_now() - t0);
	else
		h_note("%s: %llu operand triples (add, mul, fma x ne tn tp tz) compared with "
		       "fplab's fp16 (%llu NaN), %llu mismatches (%.1f s)", name, n, nans, bad,
		       h_now() - t0);
	if (!h_check(n >= 1000000))
		h_fail("%s: only %llu triples compared (want at least 10^6)", name, n);
out:
	free(a);
	free(b);
	free(c);
	free(o);
}

/* --------------------------------------------------------------- main */

static int profile_model(fpl_accum_model *m, const char *name)
{
	int rc = fpl_accum_profile(m, name);
	if (!h_check(rc == 0))
		h_fail("profile %s: %d (%s)", name, rc, fpl_strerror(rc));
	return rc == 0;
}

/* A bf16 GEMM refuses a float that is not a bf16 value (low 16 bits not
 * zero) at any position of A or B, FPL_ERANGE with C untouched: k = 1 ..
 * 19 (the check's 8-float steps and its tail), every position. */
static void bf16_range(const fpl_native_kernel *k)
{
	float a[19], b[19], c = 7.0f;
	size_t kk, pos, i;
	int side, bad = 0;

	for (kk = 1; kk <= 19; kk++)
		for (side = 0; side < 2; side++)
			for (pos = 0; pos < kk; pos++) {
				for (i = 0; i < kk; i++)
					a[i] = b[i] = 1.5f;
				(side ? b : a)[pos] = h_f32(0x3fc00001u);	/* 1.5 + 2^-22 */
				c = 7.0f;
				if (fpl_native_gemm(k, 1, 1, 1, kk, a, b, &c, 1) != FPL_ERANGE
				    || c != 7.0f)
					bad++;
			}
	for (i = 0; i < 19; i++)
		a[i] = b[i] = 1.5f;
	c = 0.0f;	/* and all bf16: accepted, 19 * 2.25 */
	if (!h_check(bad == 0 && fpl_native_gemm(k, 1, 1, 1, 19, a, b, &c, 1) == 0
		     && c == 42.75f))
		h_fail("%s: %d non-bf16 inputs not refused with FPL_ERANGE (or a bf16 one "
		       "refused, C %g)", k->name, bad, (double)c);
}

/* fpl_native_find for fp32-fma: fma32-avx512 where it is usable, else
 * fma32 where that is (FPLAB_KERNELS=avx2, a CPU without AVX-512), else
 * the first compiled one, not usable (FPLAB_KERNELS=ref). */
static void fp32_find(const fpl_native_kernel *k, size_t nk, const char *set)
{
	const fpl_native_kernel *f = fpl_native_find(FPL_NATIVE_GEMM, "fp32-fma");
	const fpl_native_kernel *k512 = NULL, *k2 = NULL;
	const char *want;
	size_t i;

	for (i = 0; i < nk; i++) {
		if (!strcmp(k[i].name, "fma32-avx512"))
			k512 = &k[i];
		if (!strcmp(k[i].name, "fma32"))
			k2 = &k[i];
	}
	if (!k512 || !k2) {
		h_check(nk == 0 && !f);
		return;
	}
	want = fpl_native_usable(k512, NULL) ? "fma32-avx512"
	       : fpl_native_usable(k2, NULL) ? "fma32" : "fma32-avx512";
	if (!h_check(f && !strcmp(f->name, want)))
		h_fail("fpl_native_find(GEMM, fp32-fma) gives %s, want %s", f ? f->name : "NULL",
		       want);
	/* the set caps it: avx2 never gives the AVX-512 kernel, ref none usable */
	if (set && !strcmp(set, "avx2") && !h_check(!fpl_native_usable(k512, NULL)))
		h_fail("FPLAB_KERNELS=avx2 leaves fma32-avx512 usable");
	if (set && !strcmp(set, "ref") && !h_check(!f || !fpl_native_usable(f, NULL)))
		h_fail("FPLAB_KERNELS=ref leaves %s usable", f->name);
	h_note("fpl_native_find(GEMM, fp32-fma): %s", f ? f->name : "NULL");
#ifdef FPL_HAVE_X86_KERNELS
	/* the accumulation layer's entry: the same bits as the kernel found */
	if (f && fpl_native_usable(f, NULL) && fpl_native_usable(k2, NULL)) {
		enum { BM = 7, BN = 37, BK = 300 };
		static float a[BM * BK], b[BK * BN], c1[BM * BN], c2[BM * BN];
		h_rng g;
		h_rng_init(&g, 0x5eed);
		for (i = 0; i < BM * BK; i++)
			a[i] = h_f32(gen(&g, D_MIX, IN_FP32, 16));
		for (i = 0; i < BK * BN; i++)
			b[i] = h_f32(gen(&g, D_MIX, IN_FP32, 16));
		for (i = 0; i < BM * BN; i++)
			c1[i] = c2[i] = h_f32(gen(&g, D_NORMAL, IN_FP32, 1));
		if (!h_check(fpl_native_gemm(f, 1, BM, BN, BK, a, b, c1, 2) == 0
			     && fpl__native_fma32_gemm_best(1, BM, BN, BK, a, b, c2, 2) == 0
			     && !memcmp(c1, c2, sizeof c1)))
			h_fail("fpl__native_fma32_gemm_best differs from %s", f->name);
	}
#endif
}

int main(void)
{
	const char *ks = getenv("FPLAB_KERNELS");
	const int ref = ks && !strcmp(ks, "ref");
	const fpl_native_kernel *k;
	size_t nk, i;
	static gtest tw[3];

	h_init("tnative_kernels");
	if (fpl_format_lookup(&tw_fp16, "fp16") != 0) {
		h_fail("no format fp16");
		return h_done();
	}
	fpl_state_init(&tw_st, h_seed());
	k = fpl_native_kernels(&nk);
	if (nk == 0)
		h_note("skip: this build has no native kernels (not x86-64, or NATIVE=0)");
	for (i = 0; i < nk; i++) {
		const char *why = "";
		if (ref) {
			h_note("skip %s: FPLAB_KERNELS=ref (native kernels not run)", k[i].name);
			continue;
		}
		if (!fpl_native_usable(&k[i], &why)) {
			h_note("skip %s: %s", k[i].name, why);
			continue;
		}
		if (k[i].op == FPL_NATIVE_ROUND) {
			round_test(k[i].name, k[i].profile, k[i].modes, fpl_native_round_f32,
				   &k[i]);
		} else if (k[i].op == FPL_NATIVE_ARITH) {
			arith_test(k[i].name, fpl_native_arith_f16, &k[i], 8, 0);
		} else {
			static gtest T;
			memset(&T, 0, sizeof T);
			T.name = k[i].name;
			T.k = &k[i];
			T.profile = k[i].profile;
			T.in = !strcmp(k[i].profile, "fp32-fma")   ? IN_FP32
			       : !strcmp(k[i].profile, "fp16-fma") ? IN_FP16
								   : IN_BF16;
			if (!profile_model(&T.model, k[i].profile))
				continue;
			if (T.in != IN_BF16 && !fma32_nan_probe(&T)) {
				T.nan_loose = 1;
				h_note("%s: this CPU's fma NaN priority differs from the profile's: "
				       "NaN outputs compared only as \"both NaN\"", T.name);
				/* fp16: fplab-native(7) states the rule; the hardware
				 * contradicts it, so the documentation is wrong */
				if (T.in == IN_FP16)
					h_fail("%s: VFMADD231PH's NaN priority is not a, b, acc as "
					       "fplab-native(7) says", T.name);
			}
			gemm_test(&T, 0x6e00 + i);
			if (T.in == IN_BF16)
				bf16_range(&k[i]);
			if (T.in == IN_FP32)
				fp32_sweep(&T, 0x6f00 + i);
		}
	}

	fp32_find(k, nk, ks);

	/* the portable twins, on every CPU */
	round_test("twin-avx512bf16-cvt", "bf16", "ne", tw_cvtneps2bf16, NULL);
	tw[0].name = "twin-avx512bf16";
	tw[0].profile = "avx512bf16";
	tw[0].fn = tw_dpbf16_gemm;
	tw[0].in = IN_BF16;
	tw[1].name = "twin-amx-bf16";
	tw[1].profile = "amx-bf16";
	tw[1].fn = tw_amx_gemm;
	tw[1].in = IN_BF16;
	tw[2].name = "twin-avx512fp16";
	tw[2].profile = "fp16-fma";
	tw[2].fn = tw_ph_gemm;
	tw[2].in = IN_FP16;
	if (profile_model(&tw[0].model, tw[0].profile))
		gemm_test(&tw[0], 0x7e00);
	if (profile_model(&tw[1].model, tw[1].profile))
		gemm_test(&tw[1], 0x7e01);
	if (profile_model(&tw[2].model, tw[2].profile))
		gemm_test(&tw[2], 0x7e02);
	arith_test("twin-avx512fp16-arith", tw_ph_arith, NULL, 2, 1);
	return h_done();
}

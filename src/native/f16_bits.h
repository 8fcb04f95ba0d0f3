/* SPDX-License-Identifier: MIT */
/*
 * native/f16_bits.h - IEEE binary16 encodings to and from the binary32
 * that holds the same value, by the bits, for the fp16 kernels, their
 * drivers and their tests.  Plain C, no ISA flags: the AVX512-FP16
 * kernels and their portable twins pack and unpack through these, so the
 * conversions are part of what the twins test.
 *
 * The invariant: an fp16 value held in a float is the float whose bits
 * fpl__f16_to_f32() gives, NaNs included (sign, quiet bit and the 9
 * payload bits in the top 10 fraction bits of the float, the low 13
 * zero), which is also where fpl_decode and a conversion through binary64
 * put them.  Every function is exact; none reads MXCSR or quiets a NaN.
 */
#ifndef FPL_NATIVE_F16_BITS_H
#define FPL_NATIVE_F16_BITS_H

#include <stdint.h>

/* The binary32 bits of the fp16 value with encoding h. */
static inline uint32_t fpl__f16_to_f32(uint16_t h)
{
	const uint32_t s = (uint32_t)(h >> 15) << 31, e = (uint32_t)(h >> 10) & 0x1fu;
	uint32_t m = h & 0x3ffu, p = 0;

	if (e == 0x1f)
		return s | 0x7f800000u | m << 13;
	if (e)
		return s | (e + 112) << 23 | m << 13;
	if (!m)
		return s;
	while (m >> (p + 1))	/* p: the leading bit of m, 0..9 */
		p++;
	/* m * 2^-24 = 2^(p-24) * 1.f: biased exponent p - 24 + 127 */
	return s | (p + 103) << 23 | (m << (23 - p) & 0x7fffffu);
}

/* The fp16 encoding of the binary32 bits u, which must hold an fp16
 * value (fpl__f32_is_f16); any other u gives some encoding. */
static inline uint16_t fpl__f32_to_f16(uint32_t u)
{
	const uint32_t s = u >> 31 << 15, e = u >> 23 & 0xffu, m = u & 0x7fffffu;

	if (e == 0xff)
		return (uint16_t)(s | 0x7c00u | m >> 13);
	if (e >= 113)	/* 2^-14 and up: normal */
		return (uint16_t)(s | ((e - 112) << 10 & 0x7c00u) | m >> 13);
	if (e < 103)	/* zero (below 2^-24 nothing else is an fp16 value) */
		return (uint16_t)s;
	/* subnormal: (2^23 + m) * 2^(e-150) = code * 2^-24 */
	return (uint16_t)(s | (0x800000u | m) >> (126 - e));
}

/* 1 when the binary32 bits u hold an fp16 value (a NaN whose low 13
 * fraction bits are zero included), else 0. */
static inline int fpl__f32_is_f16(uint32_t u)
{
	const uint32_t e = u >> 23 & 0xffu;

	if (e > 142 && e != 0xff)
		return 0;
	return fpl__f16_to_f32(fpl__f32_to_f16(u)) == u;
}

#endif

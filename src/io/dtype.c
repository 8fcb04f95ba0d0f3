/* SPDX-License-Identifier: MIT */
/*
 * dtype.c - element types of tensor files: names, sizes, and decoding of
 * stored elements (either byte order) to binary32 or binary64.
 *
 * Invariant: decoding f32/f16/bf16/e4m3fn/e5m2 to binary32 is exact, NaN
 * sign and payload kept (shifted into the top fraction bits); f64 to
 * binary32 rounds to nearest-even, as a C conversion does.  An integer is
 * converted by one C conversion (nearest-even, once, from the integer
 * itself), and one binary64 cannot hold is listed by io_decode_int().
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>

#include "io/io.h"

static const char *const dt_names[] = {
	[FPL_DT_UNKNOWN] = "unknown", [FPL_DT_F64] = "f64",   [FPL_DT_F32] = "f32",
	[FPL_DT_F16] = "f16",	      [FPL_DT_BF16] = "bf16", [FPL_DT_E4M3FN] = "e4m3fn",
	[FPL_DT_E5M2] = "e5m2",	      [FPL_DT_TEXT] = "text",	    [FPL_DT_I8] = "int8",
	[FPL_DT_I16] = "int16",	      [FPL_DT_I32] = "int32",	    [FPL_DT_I64] = "int64",
	[FPL_DT_U8] = "uint8",	      [FPL_DT_U16] = "uint16",	    [FPL_DT_U32] = "uint32",
	[FPL_DT_U64] = "uint64",
};

FPL_API int fpl_dtype_is_int(fpl_dtype t)
{
	return t >= FPL_DT_I8 && t <= FPL_DT_U64;
}

FPL_API const char *fpl_dtype_name(fpl_dtype t)
{
	if ((unsigned)t >= sizeof dt_names / sizeof dt_names[0])
		return "unknown";
	return dt_names[t];
}

FPL_API int fpl_dtype_parse(const char *s, fpl_dtype *out)
{
	static const struct {
		const char *name;
		fpl_dtype t;
	} tab[] = {
		{ "f64", FPL_DT_F64 },	       { "float64", FPL_DT_F64 },     { "fp64", FPL_DT_F64 },
		{ "double", FPL_DT_F64 },      { "f8", FPL_DT_F64 },	      { "F64", FPL_DT_F64 },
		{ "f32", FPL_DT_F32 },	       { "float32", FPL_DT_F32 },     { "fp32", FPL_DT_F32 },
		{ "float", FPL_DT_F32 },       { "single", FPL_DT_F32 },      { "f4", FPL_DT_F32 },
		{ "f16", FPL_DT_F16 },	       { "float16", FPL_DT_F16 },     { "fp16", FPL_DT_F16 },
		{ "half", FPL_DT_F16 },	       { "f2", FPL_DT_F16 },	      { "bf16", FPL_DT_BF16 },
		{ "bfloat16", FPL_DT_BF16 },   { "e4m3fn", FPL_DT_E4M3FN },  { "e4m3", FPL_DT_E4M3FN },
		{ "float8_e4m3fn", FPL_DT_E4M3FN }, { "f8_e4m3", FPL_DT_E4M3FN },
		{ "e5m2", FPL_DT_E5M2 },       { "float8_e5m2", FPL_DT_E5M2 }, { "f8_e5m2", FPL_DT_E5M2 },
		{ "text", FPL_DT_TEXT },
		{ "int8", FPL_DT_I8 },	       { "int16", FPL_DT_I16 },	      { "int32", FPL_DT_I32 },
		{ "int64", FPL_DT_I64 },       { "uint8", FPL_DT_U8 },	      { "uint16", FPL_DT_U16 },
		{ "uint32", FPL_DT_U32 },      { "uint64", FPL_DT_U64 },
	};
	if (!s || !out)
		return FPL_EINVAL;
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (strcasecmp(s, tab[i].name) == 0) {
			*out = tab[i].t;
			return 0;
		}
	return FPL_ENOTFOUND;
}

FPL_API size_t fpl_dtype_size(fpl_dtype t)
{
	switch (t) {
	case FPL_DT_F64:
	case FPL_DT_I64:
	case FPL_DT_U64: return 8;
	case FPL_DT_F32:
	case FPL_DT_I32:
	case FPL_DT_U32: return 4;
	case FPL_DT_F16:
	case FPL_DT_BF16:
	case FPL_DT_I16:
	case FPL_DT_U16: return 2;
	case FPL_DT_E4M3FN:
	case FPL_DT_E5M2:
	case FPL_DT_I8:
	case FPL_DT_U8: return 1;
	default: return 0;
	}
}

int io_mul_overflow(uint64_t a, uint64_t b, uint64_t *out)
{
	if (__builtin_mul_overflow(a, b, out))
		return -1;
	return 0;
}

static inline float f32_from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/*
 * binary32 bits -> binary64, bit for bit: a C conversion of a signalling
 * NaN quietens it on x86 (and loses the invalid flag it would raise when
 * used), so NaNs are widened by hand: sign, payload shifted into place.
 */
static inline double f64_from_f32_bits(uint32_t u)
{
	if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu)) {
		uint64_t b = (uint64_t)(u >> 31) << 63 | 0x7ffull << 52 | (uint64_t)(u & 0x7fffffu) << 29;
		double d;
		memcpy(&d, &b, 8);
		return d;
	}
	return (double)f32_from_bits(u);
}

/* binary16 bits -> binary32 bits, exactly. */
static inline uint32_t f16_bits_to_f32(uint32_t h)
{
	uint32_t s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
	if (e == 0x1f)
		return s | 0x7f800000u | (m << 13);
	if (e == 0) {
		if (m == 0)
			return s;
		/* m * 2^-24, exact in binary32 */
		float v = (float)m * 0x1p-24f;
		uint32_t u;
		memcpy(&u, &v, 4);
		return s | u;
	}
	return s | ((e + 112) << 23) | (m << 13);
}

/* OCP e4m3fn bits -> binary32 bits: bias 7, no inf, NaN = S.1111.111. */
static inline uint32_t e4m3fn_bits_to_f32(uint32_t b)
{
	uint32_t s = (b & 0x80u) << 24, e = (b >> 3) & 0xf, m = b & 7;
	if (e == 15 && m == 7)
		return s | 0x7fc00000u;
	if (e == 0) {
		if (m == 0)
			return s;
		float v = (float)m * 0x1p-9f;
		uint32_t u;
		memcpy(&u, &v, 4);
		return s | u;
	}
	return s | ((e + 120) << 23) | (m << 20);
}

static inline uint64_t load_be_le(const unsigned char *p, size_t size, int be)
{
	uint64_t v = 0;
	if (be)
		for (size_t i = 0; i < size; i++)
			v = v << 8 | p[i];
	else
		for (size_t i = size; i-- > 0;)
			v = v << 8 | p[i];
	return v;
}

/* One element (not f64) as binary32 bits. */
static inline uint32_t narrow_bits(fpl_dtype t, uint64_t v)
{
	switch (t) {
	case FPL_DT_F32: return (uint32_t)v;
	case FPL_DT_F16: return f16_bits_to_f32((uint32_t)v);
	case FPL_DT_BF16: return (uint32_t)v << 16;
	case FPL_DT_E4M3FN: return e4m3fn_bits_to_f32((uint32_t)v);
	case FPL_DT_E5M2: return f16_bits_to_f32((uint32_t)v << 8);
	default: return 0x7fc00000u;
	}
}

void io_decode_f32(fpl_dtype t, int be, const unsigned char *src, float *dst, size_t n)
{
	size_t sz = fpl_dtype_size(t);
	if (t == FPL_DT_F32 && !be) {
		memcpy(dst, src, n * 4);
		return;
	}
	if (t == FPL_DT_F64) {
		for (size_t i = 0; i < n; i++) {
			uint64_t v = load_be_le(src + 8 * i, 8, be);
			double d;
			memcpy(&d, &v, 8);
			dst[i] = (float)d;
		}
		return;
	}
	if (t == FPL_DT_BF16 && !be) {
		for (size_t i = 0; i < n; i++) {
			uint32_t u = (uint32_t)(src[2 * i] | src[2 * i + 1] << 8) << 16;
			dst[i] = f32_from_bits(u);
		}
		return;
	}
	for (size_t i = 0; i < n; i++)
		dst[i] = f32_from_bits(narrow_bits(t, load_be_le(src + sz * i, sz, be)));
}

void io_decode_f64(fpl_dtype t, int be, const unsigned char *src, double *dst, size_t n)
{
	size_t sz = fpl_dtype_size(t);
	if (t == FPL_DT_F64) {
		if (!be) {
			memcpy(dst, src, n * 8);
			return;
		}
		for (size_t i = 0; i < n; i++) {
			uint64_t v = load_be_le(src + 8 * i, 8, 1);
			memcpy(&dst[i], &v, 8);
		}
		return;
	}
	for (size_t i = 0; i < n; i++)
		dst[i] = f64_from_f32_bits(narrow_bits(t, load_be_le(src + sz * i, sz, be)));
}

/* Does binary64 hold the integer of magnitude m (at most 53 significant bits)? */
static int exact64(uint64_t m)
{
	return m == 0 || 64 - __builtin_clzll(m) - __builtin_ctzll(m) <= 53;
}

int io_decode_int(fpl_dtype t, int be, const unsigned char *src, double *d, float *f,
		  size_t n, size_t base, int (*note)(void *, size_t, const fpl_wide *),
		  void *ctx)
{
	size_t sz = fpl_dtype_size(t);
	int sgn = t >= FPL_DT_I8 && t <= FPL_DT_I64;
	for (size_t i = 0; i < n; i++) {
		uint64_t u = load_be_le(src + sz * i, sz, be), m = u;
		int neg = 0;
		if (sgn && sz < 8 && (u >> (8 * sz - 1) & 1))
			u |= ~(uint64_t)0 << (8 * sz);	/* sign-extend */
		if (sgn && (int64_t)u < 0) {
			neg = 1;
			m = -u;	/* |v|, 2^63 included */
			if (f)
				f[i] = (float)(int64_t)u;
			else
				d[i] = (double)(int64_t)u;
		} else if (f)
			f[i] = (float)u;
		else
			d[i] = (double)u;
		if (!exact64(m)) {
			fpl_wide w = { neg, 0, 0, m, 0 };	/* m 2^0, exactly */
			if (note(ctx, base + i, &w))
				return -1;
		}
	}
	return 0;
}

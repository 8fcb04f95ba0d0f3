/* SPDX-License-Identifier: MIT */
/*
 * fplab/codec.h - encodings: a value of a format <-> its bit pattern.
 *
 * Codes are right-aligned in a uint64_t: sign at bit nbits-1, then the
 * biased exponent, then the stored fraction (e8m0: exponent only).
 * NaN payloads: the format's fraction holds the top m bits of the binary64
 * fraction (the quiet bit first), so decode(encode(x)) == x bit for bit
 * for every value of the format, NaNs included.
 */
#ifndef FPLAB_CODEC_H
#define FPLAB_CODEC_H

#include <stdint.h>

#include <fplab/export.h>
#include <fplab/format.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The code of x.  x should be a value of f; any other x is first rounded
 * to nearest-even, flags discarded.  -0 in fnuz gives 0.  A value with no
 * code -- NaN in a format without NaN codes (specials none, or ieee with
 * m = 0), a negative number or zero in e8m0 -- has none: fpl_encode_checked
 * returns FPL_ERANGE (and *code = 0) for it, 0 otherwise.
 */
FPL_API int fpl_encode_checked(const fpl_format *f, double x, uint64_t *code);

/*
 * The same, returning FPL_CODE_NONE for a value without a code.  In a
 * 64-bit format (fp64) UINT64_MAX is also a real code (a NaN with every
 * bit set), so there only fpl_encode_checked tells the two apart.
 */
#define FPL_CODE_NONE UINT64_MAX
FPL_API uint64_t fpl_encode(const fpl_format *f, double x);

/* The value of code `c` (bits above f->nbits are ignored). */
FPL_API double fpl_decode(const fpl_format *f, uint64_t c);

/* The format's canonical quiet NaN as a binary64 (sign 0 unless the
 * format's only NaN is negative-looking, e.g. fnuz, which decodes as +NaN). */
FPL_API double fpl_default_nan(const fpl_format *f);

#ifdef __cplusplus
}
#endif
#endif

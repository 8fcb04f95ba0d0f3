/* SPDX-License-Identifier: MIT */
/*
 * fplab/block.h - block-scaled formats (OCP MX v1.0, NVFP4, per-block
 * fp8 scaling) as formats: an element format, a scale format, a block
 * shape and a scale rule.
 *
 * A tensor x (row-major, dims[0..ndims-1]) is cut into blocks; block b
 * gets a scale X_b (a value of the scale format) and each element x_j of
 * the block is stored as the element e_j = round(x_j / D_b) in the
 * element format, D_b = X_b (or X_b * s with a per-tensor fp32 scale s,
 * NVFP4's second level).  A kernel sees the dequantized value
 * e_j * X_b (* s).  Everything below is deterministic given (spec, x,
 * dims, rnd, seed, stream, counter) and does not depend on the thread
 * count.
 *
 * From "-f mxfp4" to a quantized tensor in one call:
 *
 *     fpl_block_format b;
 *     char err[160];
 *     if (fpl_block_parse(&b, "mxfp4", err, sizeof err)) ...  (err says why)
 *     fpl_block_round(&b, y, x, dims, ndims, rnd, st, &stats);
 *
 * fpl_block_parse returns FPL_ENOTFOUND (err empty) for a string that is
 * not a block spec, so an option parser tries it first and falls back to
 * fpl_format_lookup / fpl_format_load (src/cli: cli_round_finish does, for
 * the commands that set block_ok; the finished struct cli_round then has
 * is_block = 1, block = the descriptor and fmt = block.elem).
 *
 * A path (a slash, or the .fmt suffix) names a .fmt file; one with a line
 * "block = SPEC" (and at most a "name = NAME" beside it) is that block
 * format (fplab-formats(5)); any other file is not a block spec.
 *
 * Spec grammar (case-insensitive; fields separated by ':'):
 *
 *     SPEC  := NAME (':' FIELD)*  |  'block:' ELEM ':' SCALE (':' FIELD)*
 *     NAME  := mxfp8 (alias mxfp8-e4m3) | mxfp8-e5m2 | mxfp6-e3m2 |
 *              mxfp6-e2m3 | mxfp4 | mxint8 | nvfp4
 *     ELEM  := any fplab format name or eXmY, or int8 (MXINT8's element)
 *     SCALE := any fplab format name or eXmY (e8m0, e4m3fn, fp32, ...)
 *     FIELD := SHAPE | RULE | OPTION, each kind at most once, any order
 *     SHAPE := B          1-D blocks of B elements along the last axis
 *            | B@AXIS     1-D blocks of B along AXIS (0-based; negative
 *                         counts from the end: -1 last, -2 the one before)
 *            | RxC        2-D tiles of R rows x C columns over the last two
 *                         axes (a 1-D tensor is one row)
 *            | row        one block per row (last axis)
 *            | col        one block per column (second-to-last axis)
 *            | tensor     the whole tensor one block
 *     RULE  := floor | ceil | even | rceil | amax
 *     OPTION:= ts         two levels: a per-tensor fp32 scale s (needs amax)
 *            | q32        quotients and the combined scale in binary32
 *                         first, as GPU kernels compute them
 *            | exact      quotients exact, rounded once (the default)
 *
 * Defaults of the general form: shape 32, rule floor, exact quotient.  A
 * FIELD after a NAME overrides that field of the named format
 * ("mxfp8:rceil", "mxfp4:16@0", "nvfp4:q32").  The named formats:
 *
 *     mxfp8      block:e4m3fn:e8m0:32:floor     8.25 bits per value
 *     mxfp8-e5m2 block:e5m2:e8m0:32:floor       8.25
 *     mxfp6-e3m2 block:e3m2:e8m0:32:floor       6.25
 *     mxfp6-e2m3 block:e2m3:e8m0:32:floor       6.25
 *     mxfp4      block:e2m1:e8m0:32:floor       4.25
 *     mxint8     block:int8:e8m0:32:floor       8.25
 *     nvfp4      block:e2m1:e4m3fn:16:amax:ts   4.5 (+ 32 bits per tensor)
 *
 * Scale rules (emax_e = exponent of the element format's largest binade,
 * max_e its largest finite value; amax = max |x_j| over the block):
 *   floor  X = 2^(floor(log2 amax) - emax_e)              (OCP MX v1.0)
 *   ceil   as floor with amax first rounded toward +inf to the element's
 *          precision (m_e + 1 bits, unbounded exponent)   (microxcaling)
 *   even   as floor with amax first rounded to nearest-even to the
 *          element's precision                             (microxcaling)
 *   rceil  X = 2^ceil(log2(amax / max_e)), computed exactly: the largest
 *          element never saturates                 (cuBLAS, Transformer Engine)
 *   amax   X = amax / max_e (/ s with ts) rounded to nearest-even into the
 *          scale format, saturating                   (NVFP4, fp8 per block)
 * With ts: s = amax(tensor) / (max_scale * max_e) rounded to nearest-even
 * into binary32 (NVFP4: amax / (448 * 6)).
 *
 * Quotient: exact (default): e_j = round(x_j / D_b), the exact quotient
 * rounded once in mode rnd into the element format.  q32: D' =
 * fp32(X_b * s), q = fp32(fp32(x_j) / D'), e_j = round(q) (the binary32
 * steps nearest-even); for power-of-two scales and binary32 inputs both
 * give the same bits.  Elements always saturate: a quotient beyond the
 * element's largest finite value becomes +-max_e (OCP's clamp), with the
 * engine's `saturated` flag.
 *
 * The stated rules (also in fplab-formats(5)):
 *  - zeros: a block whose amax is 0 gets the scale 1 (every accepted scale
 *    format holds 1); its elements are the signed zeros of x.
 *  - NaN or inf: a block holding a NaN or an infinity gets the scale
 *    format's NaN (e8m0 0xFF, the spec's NaN scale); every element of the
 *    block dequantizes to NaN; its element codes are the element format's
 *    NaN code where there is one, else 0.  With ts, s is computed over the
 *    finite elements only.
 *  - scale out of range: a power-of-two scale beyond the scale format's
 *    range is clamped to its largest power of two or its smallest positive
 *    value; an amax-rule scale that overflows saturates to max_scale; one
 *    below the smallest positive scale value (0 included) becomes that
 *    value; s likewise within binary32.  Each such block (or tensor) is
 *    counted in scale_range.  Elements are then rounded as usual.
 *  - underflow: elements are rounded with the element format's own
 *    subnormals (e2m1 holds 0.5); a nonzero x_j whose element is +-0 is
 *    counted in `flushed` (and raises underflow as the engine does).
 *  - a last block shorter than B (a dimension not a multiple of the block
 *    side): allowed, as OCP allows; it is scaled by its own amax and the
 *    scale tensor has ceil(len / B) entries along that axis.
 *
 * Random draws: element j (its row-major position in x) uses draw
 * st->counter + j, exactly as fpl_round_array numbers elements; afterwards
 * st->counter has grown by the number of elements (NaN blocks included),
 * so stochastic rounding of elements is the same on any thread count.
 * Scale roundings take no draw and raise no flag in st.  Element roundings
 * OR their flags into st->flags and count them in st->count.
 *
 * Scale tensor: the scales of the blocks, row-major over the block grid:
 * dims with the blocked axis (1-D), the last two axes (tiles) replaced by
 * their block counts, a row's (row) or column's (col) axis by 1, or [1]
 * (tensor); see fpl_block_layout.
 */
#ifndef FPLAB_BLOCK_H
#define FPLAB_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/export.h>
#include <fplab/format.h>
#include <fplab/state.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fpl_block_shape {
	FPL_BLOCK_1D = 0,	/* `size` consecutive elements along `axis` (size 0: the whole axis) */
	FPL_BLOCK_TILE,		/* rows x cols tiles over the last two axes */
	FPL_BLOCK_TENSOR	/* the whole tensor */
} fpl_block_shape;

typedef enum fpl_block_rule {
	FPL_BRULE_FLOOR = 0,
	FPL_BRULE_CEIL,
	FPL_BRULE_EVEN,
	FPL_BRULE_RCEIL,
	FPL_BRULE_AMAX
} fpl_block_rule;

typedef enum fpl_block_quot {
	FPL_BQUOT_EXACT = 0,	/* exact quotient, rounded once */
	FPL_BQUOT_FP32		/* binary32 scale product and quotient first */
} fpl_block_quot;

#define FPL_BLOCK_NAME_MAX 64
#define FPL_BLOCK_MAX_DIMS 8

/*
 * A block format.  Fill it with fpl_block_parse (the fields may then be
 * edited, e.g. `axis` to block a GEMM's B operand along K = axis 0;
 * call fpl_block_check after editing).
 */
typedef struct fpl_block_format {
	char name[FPL_BLOCK_NAME_MAX];	/* "mxfp4", or the canonical general spelling */
	fpl_format elem;	/* element format, overflow = FPL_OVF_SATURATE */
	int elem_int;		/* 1: MXINT8's element: code = int8 k, value k * 2^-6,
				 * |k| <= 127 (elem is then e1m6, bias 1, no specials) */
	fpl_format scale;	/* scale format */
	fpl_block_shape shape;
	int size;		/* FPL_BLOCK_1D: B, or 0 for the whole axis (row, col) */
	int axis;		/* FPL_BLOCK_1D: the blocked axis; negative from the end */
	int rows, cols;		/* FPL_BLOCK_TILE */
	fpl_block_rule rule;
	int tensor_scale;	/* 1: two levels, a per-tensor binary32 scale s */
	fpl_block_quot quot;
} fpl_block_format;

/* Per-call block events (added to, never cleared, by the calls below). */
typedef struct fpl_block_stats {
	uint64_t blocks;		/* blocks quantized */
	uint64_t elements;		/* elements quantized */
	uint64_t saturated;		/* elements clamped to +-max_e (engine's saturated flag) */
	uint64_t flushed;		/* nonzero x_j whose element is +-0 */
	uint64_t amax_saturated;	/* blocks whose largest |x_j| saturated */
	uint64_t scale_range;		/* scales (and tensor scales) clamped into range */
	uint64_t nan_blocks;		/* blocks given the NaN scale (NaN or inf inside) */
	uint64_t zero_blocks;		/* blocks whose amax is 0 */
} fpl_block_stats;

FPL_API void fpl_block_stats_init(fpl_block_stats *s);
/* Every count of part added into total (the runs of two tensors, threads,
 * ...). */
FPL_API void fpl_block_stats_add(fpl_block_stats *total, const fpl_block_stats *part);

/*
 * Parse a spec (grammar above) into b.  Returns 0; FPL_ENOTFOUND when s is
 * not a block spec at all (neither "block:..." nor a named block format,
 * with or without fields): err is then "" and the caller tries the plain
 * formats; FPL_EFORMAT for a block spec with a bad part, err naming the
 * part and the problem ("block format 'mxfp4:0': block size '0' must be a
 * positive integer").  err may be NULL when errlen is 0.
 */
FPL_API int fpl_block_parse(fpl_block_format *b, const char *s, char *err, size_t errlen);

/* 1 when s is spelled as a block spec (fpl_block_parse would not return
 * FPL_ENOTFOUND), valid or not; 0 otherwise. */
FPL_API int fpl_block_is_spec(const char *s);

/* Validate an edited descriptor: 0, or FPL_EFORMAT with err (as parse). */
FPL_API int fpl_block_check(const fpl_block_format *b, char *err, size_t errlen);

/* Canonical general spelling of b ("block:e2m1:e8m0:32:floor") into buf. */
FPL_API void fpl_block_spec(const fpl_block_format *b, char *buf, size_t len);

/* The named block formats, in catalogue order. */
typedef struct fpl_block_entry {
	const char *name;	/* "mxfp8" */
	const char *aliases;	/* space-separated, "" if none */
	const char *spec;	/* its general spelling */
	const char *source;	/* where the definition comes from */
} fpl_block_entry;
FPL_API const fpl_block_entry *fpl_block_catalogue(size_t *count);

/*
 * Bits per value, scales included: elem.nbits + scale.nbits / (elements
 * per block), plus 32 / (elements of the tensor) with ts.  dims NULL:
 * for the nominal block (B, or R*C) and without the per-tensor term; 0
 * when that depends on the tensor (row, col, tensor).  With dims, short
 * last blocks count as they are stored (one scale each).
 */
FPL_API double fpl_block_bits(const fpl_block_format *b, const size_t *dims, int ndims);

/*
 * The block grid of a tensor: *nblocks scales, shaped sdims[0..*sndims-1]
 * (at most FPL_BLOCK_MAX_DIMS; sdims/sndims may be NULL).  Returns 0, or
 * FPL_EINVAL (ndims outside 1..FPL_BLOCK_MAX_DIMS, an axis outside the
 * tensor, a zero dimension is allowed and gives 0 blocks).
 */
FPL_API int fpl_block_layout(const fpl_block_format *b, const size_t *dims, int ndims,
			     size_t *nblocks, size_t *sdims, int *sndims);

/*
 * Quantize x (dims as above, n = product of dims elements) into element
 * codes codes[n] (row-major as x; MXINT8: the int8 two's complement in the
 * low 8 bits; else fpl_encode of the element format), scale codes
 * scales[nblocks] (fpl_encode of the scale format; NaN scale = its NaN
 * code) and *tscale (s as a binary64, 1 without ts; may be NULL without
 * ts).  Flags, draws and stats as stated above.  stats may be NULL.
 * Returns 0, FPL_EINVAL (NULL pointer with n > 0, bad dims, mode out of
 * range, sr_bits out of range in sp), FPL_ENOMEM.
 */
FPL_API int fpl_block_quantize(const fpl_block_format *b, uint64_t *codes, uint64_t *scales,
			       double *tscale, const double *x, const size_t *dims, int ndims,
			       fpl_rnd rnd, fpl_state *st, fpl_block_stats *stats);

/*
 * The values a kernel sees: y_j = decode(codes_j) * decode(scale of j's
 * block) * tscale, exact whenever the product fits binary64's precision
 * (every named format), NaN in a block whose scale is NaN.  Codes with
 * bits beyond the element (scale) width are FPL_ERANGE.  Returns 0 or
 * FPL_EINVAL / FPL_ERANGE.
 */
FPL_API int fpl_block_dequantize(const fpl_block_format *b, double *y, const uint64_t *codes,
				 const uint64_t *scales, double tscale, const size_t *dims,
				 int ndims);

/*
 * Quantize-dequantize in one call (the load path): y = dequantize(
 * quantize(x)), bit for bit, with quantize's flags, draws and stats.
 * y may alias x exactly.  Same returns as fpl_block_quantize.
 */
FPL_API int fpl_block_round(const fpl_block_format *b, double *y, const double *x,
			    const size_t *dims, int ndims, fpl_rnd rnd, fpl_state *st,
			    fpl_block_stats *stats);

/*
 * The binary32 load path: fpl_block_round on the (exact) binary64 images
 * of the binary32 x, each dequantized value then rounded once to binary32
 * (nearest-even): y_j = (float)y64_j, with fpl_block_round's flags,
 * draws (element j uses st->counter + j) and stats, so the results do not
 * depend on the thread count.  For every named format with a power-of-two
 * scale the dequantized values are binary32 numbers and y is exact, except
 * that under ceil, even and rceil an element within its last ulp of
 * FLT_MAX can dequantize to 2^128, which becomes +-inf; with NVFP4's
 * tensor scale, y is e_j * X_b * s rounded once (as a GPU kernel's fp32
 * product (e_j X_b) s, e_j X_b being exact).  y may alias x exactly.
 *
 * Speed: 1-D blocks along the last axis (or per row) in nearest-even or
 * sp element rounding, with a power-of-two rule and exact quotients or
 * the amax rule (exact or q32, with or without ts), run in one vector
 * pass per block with the avx512 kernel set (the avx2 set: the
 * power-of-two rules; fplab-formats(5) gives the figures); anything else
 * widens to binary64 and takes fpl_block_round.  The kernel and the
 * binary64 route give the same bits, flags and stats.  Same returns as
 * fpl_block_round.
 */
FPL_API int fpl_block_round_f32(const fpl_block_format *b, float *y, const float *x,
				const size_t *dims, int ndims, fpl_rnd rnd, fpl_state *st,
				fpl_block_stats *stats);

/* The scale values (decoded: NaN for a NaN block) of x's blocks, without
 * rounding any element: scales[nblocks], *tscale as quantize.  For hist's
 * block view.  Returns as fpl_block_quantize; st is not touched. */
FPL_API int fpl_block_scales(const fpl_block_format *b, double *scales, double *tscale,
			     const double *x, const size_t *dims, int ndims,
			     fpl_block_stats *stats);

/*
 * Packed storage (issue 25): element codes and scale codes as two tensors
 * of unsigned integers, little-endian.  A code of w bits is stored in the
 * narrowest of 1, 2, 4, 8 bytes that holds it, except w <= 4: two codes
 * per byte along the last axis, the first in the low nibble (Blackwell's
 * FP4 operands, ml_dtypes' float4_e2m1fn packing), each row starting on a
 * byte (a last axis of odd length L gives ceil(L/2) bytes, the last high
 * nibble 0).  fpl_block_code_bytes: bytes per stored code (1 for w <= 8,
 * nibbles included), and *per_byte (2 for w <= 4, else 1) when not NULL.
 */
FPL_API int fpl_block_code_bytes(int nbits, int *per_byte);

/* Pack n = prod(dims) codes of `nbits` bits (row-major, last axis
 * dims[ndims-1]) into out; returns the bytes written, or 0 (bad dims or
 * a code wider than nbits: nothing meaningful written). */
FPL_API size_t fpl_block_pack(void *out, const uint64_t *codes, int nbits, const size_t *dims,
			      int ndims);
/* The inverse: n codes from packed bytes `in` of `len` bytes; returns 0
 * or FPL_EPARSE (len is not the packed size of dims). */
FPL_API int fpl_block_unpack(uint64_t *codes, const void *in, size_t len, int nbits,
			     const size_t *dims, int ndims);

/* Short names: "floor", "1d"... */
FPL_API const char *fpl_block_rule_name(fpl_block_rule r);

#ifdef __cplusplus
}
#endif
#endif

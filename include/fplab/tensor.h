/* SPDX-License-Identifier: MIT */
/*
 * fplab/tensor.h - reading and writing tensor dumps.
 *
 * A tensor file holds one or more named tensors: .npy (one, named after
 * the file), .npz (one per member), .safetensors (one per header entry),
 * raw binary (one, dtype given by the caller) or text (one, numbers
 * separated by white space, tabs or commas -- CSV as np.savetxt(...,
 * delimiter=',') writes it; an empty field "1,,2" is an error naming the
 * line -- and '#' comments).  Data are streamed: opening
 * reads headers only, and a stream converts elements to binary64 (or
 * binary32) chunk by chunk, so a file larger than memory works.
 *
 * Errors come back as a status code plus a message in the caller's buffer
 * naming the file (and tensor) and the problem, e.g.
 *   "x.npy: header says 1000 elements of 4 bytes but 3996 bytes follow".
 */
#ifndef FPLAB_TENSOR_H
#define FPLAB_TENSOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <fplab/export.h>
#include <fplab/number.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fpl_dtype {
	FPL_DT_UNKNOWN = 0,
	FPL_DT_F64,
	FPL_DT_F32,
	FPL_DT_F16,
	FPL_DT_BF16,
	FPL_DT_E4M3FN,
	FPL_DT_E5M2,
	FPL_DT_TEXT,		/* decimal or C99 hex text */
	/* Integers (.npy '<i4', .safetensors I32, ...), each read exactly:
	 * a stream delivers its nearest binary64 (binary32) and lists an
	 * integer binary64 cannot hold (|v| > 2^53 with more than 53
	 * significant bits) in fpl_tensor_stream_inexact(), as a decimal of
	 * text, so a caller rounds the integer itself once. */
	FPL_DT_I8,
	FPL_DT_I16,
	FPL_DT_I32,
	FPL_DT_I64,
	FPL_DT_U8,
	FPL_DT_U16,
	FPL_DT_U32,
	FPL_DT_U64
} fpl_dtype;

/* "f64", "f32", "f16", "bf16", "e4m3fn", "e5m2", "text", "int8",
 * "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64". */
FPL_API const char *fpl_dtype_name(fpl_dtype t);
/* Nonzero for the integer dtypes (FPL_DT_I8 .. FPL_DT_U64). */
FPL_API int fpl_dtype_is_int(fpl_dtype t);
/* Parse one of those names (and "float32", "float16", "bfloat16", ...;
 * the integers by their full names only: "u8" is numpy's uint64 but
 * safetensors' U8). */
FPL_API int fpl_dtype_parse(const char *s, fpl_dtype *out);
/* Bytes per element, 0 for text. */
FPL_API size_t fpl_dtype_size(fpl_dtype t);

typedef enum fpl_tensor_kind {
	FPL_TK_AUTO = 0,	/* from the extension, then the magic bytes */
	FPL_TK_NPY,
	FPL_TK_NPZ,
	FPL_TK_SAFETENSORS,
	FPL_TK_RAW,
	FPL_TK_TEXT
} fpl_tensor_kind;

/*
 * How to open a file.  Zero-initialise, then set what applies; an option
 * set for a kind it does not apply to is an error (FPL_EINVAL), not
 * ignored:
 *   dtype      raw: the element type (required).  .npy and .npz: what the
 *              raw codes of a one- or two-byte unsigned-integer or void
 *              dtype hold, numpy having no bf16 or fp8 (ml_dtypes and
 *              PyTorch save them so): '<u2', '>u2', '|V2' as bf16, f16 or
 *              uint16, '|u1', '|V1' as e4m3fn, e5m2 or uint8 (integers);
 *              a width other than the dtype's size is an error,
 *              and so, in an .npy, is a float dtype other than dtype (an
 *              .npz's float members keep their own, but some member must
 *              fit).  Without it, raw codes are refused with a hint.  Not
 *              for text (except FPL_DT_TEXT) nor .safetensors.
 *   offset     raw: bytes to skip before the data.
 *   count      raw: elements to read, 0 = to the end.
 *   big_endian raw: byte order of the elements.
 */
typedef struct fpl_tensor_opts {
	fpl_tensor_kind kind;	/* FPL_TK_AUTO to detect */
	fpl_dtype dtype;	/* raw: element type; npy/npz: what raw codes hold */
	uint64_t offset;	/* raw only */
	uint64_t count;		/* raw only */
	int big_endian;		/* raw only */
	/* The caller will stream tensors more than once (hist --aps): input
	 * that cannot be read twice (stdin, a pipe, a FIFO, a character
	 * device) is first copied into an unlinked temporary file (in
	 * $TMPDIR, else /tmp) of at most spool_max bytes (0: FPL_SPOOL_MAX);
	 * larger input is refused with FPL_ERANGE and a message.  Spooled
	 * stdin is then detected like a file (npy, npz, safetensors, text). */
	int reread;
	uint64_t spool_max;
} fpl_tensor_opts;

#define FPL_SPOOL_MAX ((uint64_t)4 << 30)	/* 4 GiB */

#define FPL_TENSOR_MAXDIM 16
#define FPL_TENSOR_NAME_MAX 512

typedef struct fpl_tensor_info {
	char name[FPL_TENSOR_NAME_MAX];
	fpl_dtype dtype;
	int big_endian;
	int ndim;
	uint64_t shape[FPL_TENSOR_MAXDIM];
	uint64_t count;		/* product of shape (text: number of values, known after reading) */
	/* .npy and .npz members: the header's fortran_order.  Streams always
	 * deliver storage order, so with fortran_order the logical element
	 * (i0, i1, ...) comes at i0 + shape[0] * (i1 + shape[1] * ...): a
	 * writer that keeps storage order must keep the flag (and the shape). */
	int fortran_order;
} fpl_tensor_info;

typedef struct fpl_tensor_file fpl_tensor_file;	/* opaque */
typedef struct fpl_tensor_stream fpl_tensor_stream;	/* opaque */

/*
 * Open `path` ("-" is stdin for raw and text) with opts (NULL: all zero),
 * reading headers only.  The kind comes from opts.kind, else from the
 * extension (.npy .npz .safetensors; .txt .text .dat are text), else from
 * the first bytes, else raw when opts.dtype names a binary type, else text.
 * Checks that every tensor's bytes fit the file exactly (a .safetensors
 * file's tensors must tile its data section: no overlap, gap or trailing
 * bytes, as its reference implementation requires).  Returns 0 or a
 * negative status with a message in err naming the file (and tensor):
 * FPL_EINVAL for an option that does not apply (see fpl_tensor_opts),
 * FPL_EPARSE for a malformed file, FPL_EUNSUPPORTED for a dtype fplab
 * does not read (in an .npz or .safetensors file such a tensor is listed
 * instead, and refused by fpl_tensor_stream_open).
 */
FPL_API int fpl_tensor_open(fpl_tensor_file **out, const char *path,
			    const fpl_tensor_opts *opts, char *err, size_t errlen);
FPL_API void fpl_tensor_close(fpl_tensor_file *tf);

/* Number of tensors, and the description of tensor i. */
FPL_API size_t fpl_tensor_count(const fpl_tensor_file *tf);
FPL_API const fpl_tensor_info *fpl_tensor_get(const fpl_tensor_file *tf, size_t i);
/* Index of the tensor called `name`, or -1. */
FPL_API long fpl_tensor_find(const fpl_tensor_file *tf, const char *name);

/* Stream the elements of tensor i, in storage order (C order, or column-
 * major when info.fortran_order: a writer keeps the flag or reorders). */
FPL_API int fpl_tensor_stream_open(fpl_tensor_stream **out, fpl_tensor_file *tf, size_t i,
				   char *err, size_t errlen);
/* Read up to cap elements as binary64 into buf; *got receives the number
 * read, 0 at the end.  Returns 0 or a negative status (truncated data,
 * a non-number in text naming its line). */
FPL_API int fpl_tensor_stream_read(fpl_tensor_stream *s, double *buf, size_t cap, size_t *got,
				   char *err, size_t errlen);
/* The same into binary32 (exact for f32/f16/bf16/fp8 data; f64, text
 * and integer data are rounded to nearest, once). */
FPL_API int fpl_tensor_stream_read_f32(fpl_tensor_stream *s, float *buf, size_t cap,
				       size_t *got, char *err, size_t errlen);
/*
 * Text tensors are read exactly (fplab/number.h): after a read, the
 * numbers of that read which binary64 cannot hold (0.1, 1e-400, 1e400)
 * are listed here, and so are the integers of an integer tensor that
 * binary64 cannot hold (2^53 + 1), *n of them in order, `pos` indexing the read's buf,
 * whose element there is the nearest binary64 (the f32 read holds the
 * number rounded once to binary32 instead).  Callers that round values
 * (hist, round, the simulators) round w itself, once.  Empty for binary
 * floating-point data; the list stays valid until the next read or close.
 */
FPL_API const fpl_inexact *fpl_tensor_stream_inexact(const fpl_tensor_stream *s, size_t *n);
FPL_API void fpl_tensor_stream_close(fpl_tensor_stream *s);

/*
 * `s` made safe to print, into buf (cap bytes, always terminated): tab,
 * newline and carriage return as \t \n \r, a backslash as \\, other
 * control bytes (below 0x20, and 0x7f) as \xNN; other bytes unchanged.
 * Truncates at a whole escape when buf is too small (4 x strlen(s) + 1
 * always suffices).  Returns buf.  Used for tensor names and input tokens
 * in every message, chart and TSV row.
 */
FPL_API char *fpl_escape(char *buf, size_t cap, const char *s);
/* A buffer size that holds any escaped tensor name. */
#define FPL_ESCAPED_NAME_MAX (4 * FPL_TENSOR_NAME_MAX + 1)

/*
 * Write a little-endian .npy (version 1.0) of n elements of dtype f64 or
 * f32 (bf16 is written as '<u2'), shape {n}, to an open FILE.  Returns 0
 * or FPL_EIO.  For atomic files, write to a temporary and rename.
 */
FPL_API int fpl_npy_write_header(FILE *fp, fpl_dtype dtype, uint64_t n);

/* The same with any shape (ndim 0..FPL_TENSOR_MAXDIM; 0 is a scalar);
 * f16 is written as '<f2', e4m3fn and e5m2 as their codes, '|u1', and
 * u8, u16, u32, u64 as '|u1' '<u2' '<u4' '<u8' (packed block codes).  Added
 * for the sample generator and tests. */
FPL_API int fpl_npy_write_header_shape(FILE *fp, fpl_dtype dtype, int ndim,
				       const uint64_t *shape);
/* The same with fortran_order (nonzero: the data that follow are in
 * column-major storage order, as fpl_tensor_info.fortran_order says). */
FPL_API int fpl_npy_write_header_ex(FILE *fp, fpl_dtype dtype, int ndim,
				    const uint64_t *shape, int fortran_order);

/*
 * The header of a .safetensors file holding n tensors t[0..n), whose data
 * (each t[i].shape's product of elements of t[i].dtype, little-endian, in
 * C order: the format has no Fortran order) must follow in that order:
 * the 8-byte length and the JSON object, data_offsets tiling the data
 * exactly, padded with spaces to a multiple of 8.  dtypes U8 U16 U32 U64
 * (packed block codes) and F64 F32 F16 BF16
 * F8_E4M3 (e4m3fn) F8_E5M2.  Returns 0, FPL_EINVAL (another dtype, a
 * repeated name or "__metadata__"), FPL_ENOMEM or FPL_EIO.
 */
FPL_API int fpl_safetensors_write_header(FILE *fp, size_t n, const fpl_tensor_info *t);

/*
 * A zip archive of stored members written front to back (a pipe works),
 * for .npz files: open, then per member begin (its name, e.g. "x.npy"),
 * write its bytes (any number of calls), end; close(z, 1) writes the
 * central directory and frees z, close(z, 0) only frees it.  No zip64: an
 * archive past 4 GiB gives FPL_ERANGE.  Other errors: FPL_EINVAL (calls
 * out of order, an empty name), FPL_ENOMEM, FPL_EIO.
 */
typedef struct fpl_zip_writer fpl_zip_writer;	/* opaque */
FPL_API int fpl_zip_writer_open(fpl_zip_writer **out, FILE *fp);
FPL_API int fpl_zip_member_begin(fpl_zip_writer *z, const char *name);
FPL_API int fpl_zip_member_write(fpl_zip_writer *z, const void *data, size_t n);
FPL_API int fpl_zip_member_end(fpl_zip_writer *z);
FPL_API int fpl_zip_writer_close(fpl_zip_writer *z, int finish);

#ifdef __cplusplus
}
#endif
#endif

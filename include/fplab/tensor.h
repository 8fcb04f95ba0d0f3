/* SPDX-License-Identifier: MIT */
/*
 * fplab/tensor.h - reading and writing tensor dumps.
 *
 * A tensor file holds one or more named tensors: .npy (one, named after
 * the file), .npz (one per member), .safetensors (one per header entry),
 * raw binary (one, dtype given by the caller) or text (one, numbers
 * separated by white space, '#' comments).  Data are streamed: opening
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
	FPL_DT_TEXT		/* decimal or C99 hex text */
} fpl_dtype;

/* "f64", "f32", "f16", "bf16", "e4m3fn", "e5m2", "text". */
FPL_API const char *fpl_dtype_name(fpl_dtype t);
/* Parse one of those names (and "float32", "float16", "bfloat16", ...). */
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

/* How to open a file. */
typedef struct fpl_tensor_opts {
	fpl_tensor_kind kind;	/* FPL_TK_AUTO to detect */
	fpl_dtype dtype;	/* raw: required; npy: overrides <u2/<V2 as bf16 */
	uint64_t offset;	/* raw: bytes to skip */
	uint64_t count;		/* raw: elements to read, 0 = to the end */
	int big_endian;		/* raw: byte order */
} fpl_tensor_opts;

#define FPL_TENSOR_MAXDIM 16
#define FPL_TENSOR_NAME_MAX 512

typedef struct fpl_tensor_info {
	char name[FPL_TENSOR_NAME_MAX];
	fpl_dtype dtype;
	int big_endian;
	int ndim;
	uint64_t shape[FPL_TENSOR_MAXDIM];
	uint64_t count;		/* product of shape (text: number of values, known after reading) */
} fpl_tensor_info;

typedef struct fpl_tensor_file fpl_tensor_file;	/* opaque */
typedef struct fpl_tensor_stream fpl_tensor_stream;	/* opaque */

/* Open `path` ("-" is stdin for raw and text).  Returns 0 or a negative
 * status with a message in err. */
FPL_API int fpl_tensor_open(fpl_tensor_file **out, const char *path,
			    const fpl_tensor_opts *opts, char *err, size_t errlen);
FPL_API void fpl_tensor_close(fpl_tensor_file *tf);

/* Number of tensors, and the description of tensor i. */
FPL_API size_t fpl_tensor_count(const fpl_tensor_file *tf);
FPL_API const fpl_tensor_info *fpl_tensor_get(const fpl_tensor_file *tf, size_t i);
/* Index of the tensor called `name`, or -1. */
FPL_API long fpl_tensor_find(const fpl_tensor_file *tf, const char *name);

/* Stream the elements of tensor i, in storage order. */
FPL_API int fpl_tensor_stream_open(fpl_tensor_stream **out, fpl_tensor_file *tf, size_t i,
				   char *err, size_t errlen);
/* Read up to cap elements as binary64 into buf; *got receives the number
 * read, 0 at the end.  Returns 0 or a negative status (truncated data,
 * a non-number in text naming its line). */
FPL_API int fpl_tensor_stream_read(fpl_tensor_stream *s, double *buf, size_t cap, size_t *got,
				   char *err, size_t errlen);
/* The same into binary32 (exact for f32/f16/bf16/fp8 data; f64 and text
 * data are rounded to nearest). */
FPL_API int fpl_tensor_stream_read_f32(fpl_tensor_stream *s, float *buf, size_t cap,
				       size_t *got, char *err, size_t errlen);
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
 * f16 is written as '<f2'.  Added for the sample generator and tests. */
FPL_API int fpl_npy_write_header_shape(FILE *fp, fpl_dtype dtype, int ndim,
				       const uint64_t *shape);

#ifdef __cplusplus
}
#endif
#endif

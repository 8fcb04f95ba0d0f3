/* SPDX-License-Identifier: MIT */
/*
 * src/io/io.h - private parts of the tensor reader (fplab/tensor.h).
 *
 * Invariant: opening a file reads headers only and checks that every
 * tensor's bytes (shape x dtype) fit exactly in the bytes that hold it, so
 * streaming never trusts a header; a stream still checks every read and
 * reports a short read as truncation (the file may change under us).
 */
#ifndef FPLAB_IO_H
#define FPLAB_IO_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include <fplab/error.h>
#include <fplab/number.h>
#include <fplab/tensor.h>

#include "util/errmsg.h"

struct zip;

/* One tensor of a file, with where its bytes are. */
struct io_tensor {
	fpl_tensor_info info;
	uint64_t data_off;	/* npy/safetensors/raw: file offset; npz: offset in the member */
	uint64_t nbytes;	/* bytes of data (count * size), unknown for stdin/text */
	int64_t member;		/* npz: index of the zip member */
	char bad[256];		/* non-empty: why this tensor cannot be streamed */
};

struct fpl_tensor_file {
	char *path;		/* as given, to open */
	char *shown;		/* path escaped (fpl_escape), for messages */
	const char *base;	/* file name without directories */
	fpl_tensor_kind kind;
	fpl_tensor_opts opts;
	int fd;			/* npy, safetensors, raw; -1 otherwise */
	int is_stdin;
	int streamed;		/* stdin: already read once */
	int spooled;		/* fd is an unlinked copy of stdin or a pipe */
	int sequential;		/* stdin or a pipe: read(), once, length unknown */
	uint64_t size;		/* file size (regular files) */
	struct zip *zip;	/* npz */
	size_t n;
	struct io_tensor *t;
};

/* Bytes of the private read buffer of a stream. */
#define IO_BUFBYTES (1u << 16)

struct zip_file;

struct fpl_tensor_stream {
	fpl_tensor_file *tf;
	struct io_tensor *t;
	fpl_dtype dtype;
	int be;
	size_t esize;
	uint64_t pos;		/* fd sources: next file offset */
	uint64_t left;		/* elements left, UINT64_MAX when unknown (stdin) */
	uint64_t done;		/* elements delivered */
	int fd;			/* fd source, or -1 */
	int sequential;		/* fd is a pipe/stdin: read(), not pread() */
	struct zip_file *zf;	/* npz member */
	unsigned char *buf;	/* IO_BUFBYTES */
	size_t carry;		/* sequential: bytes of a partial element at buf[0] */
	/* text */
	FILE *fp;
	int own_fp;
	char *line;
	size_t linecap;
	char *cur;		/* next character of `line` to scan, NULL = read a line */
	long lineno;
	int eof;
	/* text: the numbers of the last read that binary64 cannot hold */
	fpl_inexact *inx;
	size_t ninx, capinx;
	fpl_format f32fmt;	/* f32 reads of text round the exact number once */
	fpl_state f32st;
};

/* "FILE" or "FILE: tensor 'NAME'" for messages about stream s. */
const char *io_where(const fpl_tensor_stream *s, char *buf, size_t cap);

/* Append {pos, *w} to the stream's list of inexact numbers (text.c):
 * 0, or -1 when out of memory. */
int io_note_inexact(fpl_tensor_stream *s, size_t pos, const fpl_wide *w);

/* Text streams (text.c). */
int io_text_stream_open(fpl_tensor_stream *s, char *err, size_t errlen);
int io_text_read(fpl_tensor_stream *s, double *d, float *f, size_t cap, size_t *got,
		 char *err, size_t errlen);

/* ------------------------------------------------------------ messages */
/* snprintf into err (if not NULL) and return status (util/errmsg.h). */
#define io_fail fpl__fail

/* ------------------------------------------------------------ dtypes */
/* Decode n elements of dtype t (byte order be) from src. */
void io_decode_f64(fpl_dtype t, int be, const unsigned char *src, double *dst, size_t n);
void io_decode_f32(fpl_dtype t, int be, const unsigned char *src, float *dst, size_t n);
/* Decode n integers of dtype t into d (binary64) or f (binary32), each by
 * one conversion to nearest; each integer binary64 cannot hold is passed
 * to note(ctx, base + its index, its exact fpl_wide).  0, or -1 when note
 * failed. */
int io_decode_int(fpl_dtype t, int be, const unsigned char *src, double *d, float *f,
		  size_t n, size_t base, int (*note)(void *, size_t, const fpl_wide *),
		  void *ctx);

/* ------------------------------------------------------------ npy header */
/*
 * Parse an .npy header held in `buf` (len bytes from the magic on).
 * On success fills info (dtype, byte order, shape, count) and *hdr_len
 * (bytes before the data).  Returns 0, FPL_EPARSE when more bytes are
 * needed or the header is malformed (*need > len tells how many bytes),
 * or FPL_EUNSUPPORTED; message "problem" without file name in err.
 */
int io_npy_parse(const unsigned char *buf, size_t len, fpl_dtype override,
		 fpl_tensor_info *info, uint64_t *hdr_len, size_t *need,
		 char *err, size_t errlen);
/* Bytes to read first to learn an npy header's length. */
#define IO_NPY_PREFIX 12

/* count * size, or -1 on overflow of uint64_t. */
int io_mul_overflow(uint64_t a, uint64_t b, uint64_t *out);

/* ------------------------------------------------------------ readers */
int io_npy_open(fpl_tensor_file *tf, char *err, size_t errlen);
int io_npz_open(fpl_tensor_file *tf, char *err, size_t errlen);
int io_safetensors_open(fpl_tensor_file *tf, char *err, size_t errlen);
int io_raw_open(fpl_tensor_file *tf, char *err, size_t errlen);
int io_text_open(fpl_tensor_file *tf, char *err, size_t errlen);

/* Read exactly n bytes at offset off of fd; returns bytes read or -1. */
long long io_pread_full(int fd, void *buf, size_t n, uint64_t off);

/* Allocate tf->t with n zeroed entries; returns 0 or FPL_ENOMEM. */
int io_tensors_alloc(fpl_tensor_file *tf, size_t n);

/* Name a tensor after the file (x.npy -> "x"). */
void io_name_from_file(fpl_tensor_file *tf, char *name, size_t cap);

#endif

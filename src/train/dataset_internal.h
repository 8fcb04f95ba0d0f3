/* SPDX-License-Identifier: MIT */
/*
 * src/train/dataset_internal.h - private parts of the data-set loaders
 * (fplab/dataset.h): the size limit, label bookkeeping, and a reader of
 * integer tensors (.npy, .npz members, .safetensors entries), which the
 * tensor readers of fplab/tensor.h do not deliver (they hold floats).
 *
 * Invariant: every size read from a file is checked against DS_MAX_ELEMS
 * with __builtin_mul_overflow before anything is allocated, and every
 * read is checked for shortness: a loader never trusts a header.
 */
#ifndef FPLAB_TRAIN_DATASET_INTERNAL_H
#define FPLAB_TRAIN_DATASET_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/dataset.h>
#include <fplab/number.h>
#include <fplab/tensor.h>

#include "util/errmsg.h"

/* Largest number of feature elements (n*d) a data set may hold. */
#define DS_MAX_ELEMS ((uint64_t)1 << 31)
/* Labels are in 0..DS_MAX_LABEL. */
#define DS_MAX_LABEL 65535

/* snprintf into err (when errlen > 0) and return status. */
#define ds_fail fpl__fail

/* ds->classes = 1 + the largest of ds->y[0..n) (at least 2). */
void ds_set_classes(fpl_dataset *ds);

/*
 * An integer tensor (numpy 'i' 'u' 'b' kinds, safetensors I8..U64 and
 * BOOL) opened for sequential reading of its elements in storage order.
 */
typedef struct ds_int_tensor {
	char kind;		/* 'i' signed, 'u' unsigned, 'b' bool */
	int width;		/* bytes per element: 1, 2, 4, 8 */
	int big_endian;
	int ndim;
	uint64_t shape[FPL_TENSOR_MAXDIM];
	uint64_t count;
	uint64_t done;		/* elements read */
	int fortran_order;
	/* source: fd at pos (npy, safetensors) or a zip member */
	int fd;
	uint64_t pos;
	void *zip;		/* zip_t */
	void *zf;		/* zip_file_t */
	char where[600];	/* "FILE" or "FILE: tensor 'NAME'", for messages */
} ds_int_tensor;

/*
 * Open tensor `name` (NULL: the file's only tensor) of `path` (.npy,
 * .npz or .safetensors, told by the first bytes) if it is an integer
 * tensor.  Returns 0; FPL_ENOTFOUND when the file or tensor exists but
 * is not an integer one (no message: the caller has its own); else an
 * error with a message (FPL_EIO, FPL_EPARSE, FPL_ENOMEM).
 */
int ds_int_open(ds_int_tensor *t, const char *path, const char *name, char *err,
		size_t errlen);
/* Read the next n elements, converted to binary32 (one rounding, ne) into
 * f or to binary64 into d (exact up to 2^53; one of them non-NULL).
 * Returns 0 or FPL_EIO/FPL_EPARSE (truncated, corrupt member). */
int ds_int_read(ds_int_tensor *t, float *f, double *d, size_t n, char *err, size_t errlen);
/* As ds_int_read into d, and each integer binary64 cannot hold (above
 * 2^53, more than 53 significant bits; d has its nearest) appended to
 * the list *l (*nl entries, *cap allocated, grown with realloc) as its
 * exact fpl_wide, pos counted from the tensor's first element in storage
 * order, so that the caller can round the integer itself once.  Also
 * FPL_ENOMEM. */
int ds_int_read_exact(ds_int_tensor *t, double *d, size_t n, fpl_inexact **l, size_t *nl,
		      size_t *cap, char *err, size_t errlen);
void ds_int_close(ds_int_tensor *t);

#endif

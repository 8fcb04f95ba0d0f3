/* SPDX-License-Identifier: MIT */
/*
 * dataset_tensors.c - fpl_dataset_load_tensors(): features and labels
 * from .npy, .npz (path:NAME) and .safetensors (path:NAME) files.
 *
 * Floating-point tensors are streamed by fplab/tensor.h (binary32 reads:
 * exact from f32/f16/bf16/fp8, one rounding ne from f64); integer
 * tensors, which that reader lists but refuses, by dataset_int.c (one
 * conversion to binary32, ne; labels to binary64, exact).  A tensor in
 * Fortran order is put back into C order (example i at x[i*d]).
 *
 * Invariant: nothing is allocated before the shapes are checked (features
 * n x ..., labels n, n*d <= DS_MAX_ELEMS); values are checked as they
 * are converted (features finite, labels integers in 0..DS_MAX_LABEL).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <fplab/error.h>

#include "train/dataset_internal.h"

#define CHUNK 4096

/* One tensor being read: through fplab/tensor.h, or as integers. */
struct src {
	char path[4096];
	const char *name;	/* NULL: the file's only tensor */
	char where[4700];	/* for messages */
	fpl_tensor_file *tf;
	fpl_tensor_stream *s;
	ds_int_tensor it;
	int is_int;
	int ndim;
	uint64_t shape[FPL_TENSOR_MAXDIM];
	uint64_t count;
	int fortran_order;
};

/* spec is a file, or FILE:NAME. */
static int split_spec(struct src *s, const char *spec, char *err, size_t errlen)
{
	struct stat st;
	const char *colon = strrchr(spec, ':');
	if (strlen(spec) >= sizeof s->path)
		return ds_fail(err, errlen, FPL_EINVAL, "%.64s...: file name too long", spec);
	strcpy(s->path, spec);
	s->name = NULL;
	if (stat(spec, &st) != 0 && colon && colon[1] && colon != spec) {
		s->path[colon - spec] = 0;
		s->name = colon + 1;
	}
	if (s->name)
		snprintf(s->where, sizeof s->where, "%s: tensor '%s'", s->path, s->name);
	else
		snprintf(s->where, sizeof s->where, "%s", s->path);
	return 0;
}

/* Open through fplab/tensor.h; FPL_EUNSUPPORTED: try the integer reader. */
static int open_float(struct src *s, char *err, size_t errlen)
{
	int rc = fpl_tensor_open(&s->tf, s->path, NULL, err, errlen);
	if (rc)
		return rc;
	long i = -1;
	size_t nt = fpl_tensor_count(s->tf);
	if (s->name)
		i = fpl_tensor_find(s->tf, s->name);
	else if (nt == 1)
		i = 0;
	if (i < 0)
		return s->name ? ds_fail(err, errlen, FPL_ENOTFOUND, "%s: no tensor '%s'", s->path,
					 s->name)
			       : ds_fail(err, errlen, FPL_EINVAL,
					 "%s: holds %zu tensors: name one as %s:NAME", s->path, nt,
					 s->path);
	const fpl_tensor_info *in = fpl_tensor_get(s->tf, (size_t)i);
	s->ndim = in->ndim;
	memcpy(s->shape, in->shape, sizeof s->shape);
	s->count = in->count;
	s->fortran_order = in->fortran_order;
	return fpl_tensor_stream_open(&s->s, s->tf, (size_t)i, err, errlen);
}

static int src_open(struct src *s, const char *spec, char *err, size_t errlen)
{
	char first[1024] = "";
	memset(s, 0, sizeof *s);
	s->it.fd = -1;
	int rc = split_spec(s, spec, err, errlen);
	if (rc)
		return rc;
	rc = open_float(s, first, sizeof first);
	if (rc != FPL_EUNSUPPORTED) {
		if (rc)
			ds_fail(err, errlen, rc, "%s", first);
		return rc;
	}
	rc = ds_int_open(&s->it, s->path, s->name, err, errlen);
	if (rc == FPL_ENOTFOUND)
		return ds_fail(err, errlen, FPL_EUNSUPPORTED, "%s", first);
	if (rc)
		return rc;
	s->is_int = 1;
	s->ndim = s->it.ndim;
	memcpy(s->shape, s->it.shape, sizeof s->shape);
	s->count = s->it.count;
	s->fortran_order = s->it.fortran_order;
	return 0;
}

static void src_close(struct src *s)
{
	fpl_tensor_stream_close(s->s);
	fpl_tensor_close(s->tf);
	ds_int_close(&s->it);
}

/* Exactly n elements into f (binary32) or d (binary64). */
static int src_read(struct src *s, float *f, double *d, size_t n, char *err, size_t errlen)
{
	if (s->is_int)
		return ds_int_read(&s->it, f, d, n, err, errlen);
	size_t done = 0, got;
	while (done < n) {
		int rc = f ? fpl_tensor_stream_read_f32(s->s, f + done, n - done, &got, err, errlen)
			   : fpl_tensor_stream_read(s->s, d + done, n - done, &got, err, errlen);
		if (rc)
			return rc;
		if (got == 0)
			return ds_fail(err, errlen, FPL_EPARSE, "%s: truncated data", s->where);
		done += got;
	}
	return 0;
}

/* Features of the first nk examples (of n) into x, in C order. */
static int read_features(struct src *s, float *x, uint64_t n, uint64_t nk, uint64_t d,
			 char *err, size_t errlen)
{
	if (!s->fortran_order) {
		int rc = src_read(s, x, NULL, (size_t)(nk * d), err, errlen);
		for (size_t k = 0; rc == 0 && k < (size_t)(nk * d); k++)
			if (!isfinite(x[k]))
				return ds_fail(err, errlen, FPL_EPARSE,
					       "%s: example %zu, feature %zu is not finite (%g)",
					       s->where, k / (size_t)d, k % (size_t)d, (double)x[k]);
		return rc;
	}
	/* Storage index i0 + n*(i1 + s1*(i2 + ...)): walk it, tracking the
	 * C-order offset jc of (i1, i2, ...) within an example. */
	uint64_t idx[FPL_TENSOR_MAXDIM] = { 0 }, i0 = 0, jc = 0;
	float buf[CHUNK];
	for (uint64_t done = 0; done < s->count;) {
		size_t k = s->count - done < CHUNK ? (size_t)(s->count - done) : CHUNK;
		int rc = src_read(s, buf, NULL, k, err, errlen);
		if (rc)
			return rc;
		for (size_t j = 0; j < k; j++) {
			if (i0 < nk) {
				if (!isfinite(buf[j]))
					return ds_fail(err, errlen, FPL_EPARSE,
						       "%s: example %llu, feature %llu is not finite (%g)",
						       s->where, (unsigned long long)i0,
						       (unsigned long long)jc, (double)buf[j]);
				x[i0 * d + jc] = buf[j];
			}
			if (++i0 < n)
				continue;
			i0 = 0;
			for (int a = 1; a < s->ndim; a++) {	/* next (i1, i2, ...), i1 fastest */
				uint64_t stride = 1;
				for (int b = a + 1; b < s->ndim; b++)
					stride *= s->shape[b];
				if (++idx[a] < s->shape[a]) {
					jc += stride;
					break;
				}
				idx[a] = 0;
				jc -= (s->shape[a] - 1) * stride;
			}
		}
		done += k;
	}
	return 0;
}

/* The first nk labels into y, each an integer in 0..DS_MAX_LABEL. */
static int read_labels(struct src *s, int32_t *y, uint64_t nk, char *err, size_t errlen)
{
	double buf[CHUNK];
	for (uint64_t done = 0; done < nk;) {
		size_t k = nk - done < CHUNK ? (size_t)(nk - done) : CHUNK;
		int rc = src_read(s, NULL, buf, k, err, errlen);
		if (rc)
			return rc;
		for (size_t j = 0; j < k; j++) {
			double v = buf[j];
			if (!(v >= 0 && v <= DS_MAX_LABEL && v == floor(v)))
				return ds_fail(err, errlen, FPL_EPARSE,
					       "%s: label %llu is %.17g: labels are integers in 0..%d",
					       s->where, (unsigned long long)(done + j), v,
					       DS_MAX_LABEL);
			y[done + j] = (int32_t)v;
		}
		done += k;
	}
	return 0;
}

/* Check shapes, allocate and read both tensors into ds. */
static int load(fpl_dataset *ds, struct src *fx, struct src *fy, size_t limit, char *err,
		size_t errlen)
{
	if (fx->ndim < 2)
		return ds_fail(err, errlen, FPL_EPARSE,
			       "%s: features have %d dimension%s; need 2 or more (examples x ...)",
			       fx->where, fx->ndim, fx->ndim == 1 ? "" : "s");
	if (fy->ndim != 1)
		return ds_fail(err, errlen, FPL_EPARSE,
			       "%s: labels have %d dimensions; need 1 (one label per example)",
			       fy->where, fy->ndim);
	uint64_t n = fx->shape[0], d = 1, nk, nd;
	for (int a = 1; a < fx->ndim; a++)
		d *= fx->shape[a];	/* count = n*d did not overflow */
	if (fy->shape[0] != n)
		return ds_fail(err, errlen, FPL_EPARSE, "%s: %llu labels for the %llu examples of %s",
			       fy->where, (unsigned long long)fy->shape[0], (unsigned long long)n,
			       fx->where);
	if (n == 0 || d == 0)
		return ds_fail(err, errlen, FPL_EPARSE, "%s: %s", fx->where,
			       n == 0 ? "holds no examples" : "examples have no features");
	nk = limit && limit < n ? limit : n;
	if (__builtin_mul_overflow(nk, d, &nd) || nd > DS_MAX_ELEMS)
		return ds_fail(err, errlen, FPL_ERANGE,
			       "%s: %llu examples of %llu features exceed the limit of %llu values",
			       fx->where, (unsigned long long)nk, (unsigned long long)d,
			       (unsigned long long)DS_MAX_ELEMS);
	ds->x = malloc((size_t)nd * sizeof *ds->x);
	ds->y = malloc((size_t)nk * sizeof *ds->y);
	if (!ds->x || !ds->y)
		return ds_fail(err, errlen, FPL_ENOMEM, "%s: out of memory", fx->where);
	ds->n = (size_t)nk;
	ds->d = (size_t)d;
	int rc = read_features(fx, ds->x, n, nk, d, err, errlen);
	return rc ? rc : read_labels(fy, ds->y, nk, err, errlen);
}

FPL_API int fpl_dataset_load_tensors(fpl_dataset *ds, const char *features, const char *labels,
				     size_t limit, char *err, size_t errlen)
{
	if (!ds || !features || !labels)
		return ds_fail(err, errlen, FPL_EINVAL, "tensors: missing data set or file name");
	memset(ds, 0, sizeof *ds);
	struct src *fx = malloc(sizeof *fx), *fy = malloc(sizeof *fy);
	if (!fx || !fy) {
		free(fx);
		free(fy);
		return ds_fail(err, errlen, FPL_ENOMEM, "out of memory");
	}
	int rc = src_open(fx, features, err, errlen);
	if (rc == 0) {
		rc = src_open(fy, labels, err, errlen);
		if (rc == 0)
			rc = load(ds, fx, fy, limit, err, errlen);
		src_close(fy);
	}
	src_close(fx);
	free(fx);
	free(fy);
	if (rc) {
		fpl_dataset_free(ds);
		return rc;
	}
	ds_set_classes(ds);
	return 0;
}

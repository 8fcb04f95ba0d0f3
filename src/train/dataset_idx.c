/* SPDX-License-Identifier: MIT */
/*
 * dataset_idx.c - fpl_dataset_load_idx(): an IDX images file and an IDX
 * labels file (LeCun's MNIST format), each plain or gzip-compressed.
 *
 * Format: big-endian magic 0x0000TTDD (TT the element type, DD the number
 * of dimensions), DD big-endian uint32 sizes, then the elements in C
 * order.  Only TT = 0x08 (unsigned byte) is accepted.  zlib's gzread
 * reads plain files unchanged, so one path serves both.
 *
 * Pixels become b/255 rounded once to binary32 (nearest-even).  The table
 * below computes (float)((double)b / 255.0): the division is correctly
 * rounded to binary64, and rounding that again to binary32 is the
 * correct rounding of b/255 because b/255 (0 < b < 255) is the 8-bit
 * pattern of b repeated forever in binary, so its bits 25..53 after the
 * leading one can never read 1000...0 (a binary32 tie) nor lie within
 * one binary64 ulp of it: no double-rounding case exists.  (The test
 * compares all 256 values with MPFR.)
 *
 * Invariant: sizes are multiplied with overflow checks and bounded by
 * DS_MAX_ELEMS before any allocation; every short read is an error
 * naming the file, and a gzip stream that ends early or fails its CRC
 * is reported (gzerror), never taken as data.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <fplab/error.h>

#include "train/dataset_internal.h"

#define IDX_MAXDIM 255

struct idx_file {
	const char *path;
	gzFile gz;
	int ndim;
	uint64_t n;		/* dims[0] */
	uint64_t d;		/* product of the other dims (1 for labels) */
};

/* Status and message for the end or failure of a gzread on f. */
static int gz_problem(struct idx_file *f, const char *what, char *err, size_t errlen)
{
	int zerr = Z_OK;
	const char *msg = gzerror(f->gz, &zerr), *c;
	if (msg && strncmp(msg, "<fd:", 4) == 0 && (c = strstr(msg, ": ")) != NULL)
		msg = c + 2;	/* gzdopen's name for the file: ours is better */
	if (zerr == Z_ERRNO)
		return ds_fail(err, errlen, FPL_EIO, "%s: cannot read %s: %s", f->path, what,
			       strerror(errno));
	if (zerr == Z_MEM_ERROR)
		return ds_fail(err, errlen, FPL_ENOMEM, "%s: out of memory", f->path);
	return ds_fail(err, errlen, FPL_EPARSE, "%s: corrupt or truncated gzip stream: %s",
		       f->path, msg && *msg ? msg : "unknown zlib error");
}

/*
 * Read up to n bytes; *got receives how many.  A clean end of file gives
 * 0 with *got < n (the caller reports the truncation); a gzip stream cut
 * short or failing its check, or a read error, gives an error.
 */
static int gz_read_full(struct idx_file *f, void *buf, uint64_t n, uint64_t *got,
			const char *what, char *err, size_t errlen)
{
	unsigned char *p = buf;
	*got = 0;
	while (*got < n) {
		uint64_t left = n - *got;
		unsigned chunk = left > (1u << 30) ? 1u << 30 : (unsigned)left;
		int r = gzread(f->gz, p + *got, chunk);
		if (r < 0)
			return gz_problem(f, what, err, errlen);
		if (r == 0)
			break;
		*got += (uint64_t)r;
	}
	if (*got < n) {
		int zerr = Z_OK;
		gzerror(f->gz, &zerr);
		if (zerr != Z_OK && zerr != Z_STREAM_END)
			return gz_problem(f, what, err, errlen);
	}
	return 0;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Open f->path and read its header; labels: 1 dimension, else 2 or more. */
static int idx_open(struct idx_file *f, const char *path, int labels, char *err, size_t errlen)
{
	unsigned char h[4 * IDX_MAXDIM];
	uint64_t got;
	memset(f, 0, sizeof *f);
	f->path = path;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ds_fail(err, errlen, FPL_EIO, "%s: cannot open: %s", path, strerror(errno));
	f->gz = gzdopen(fd, "rb");
	if (!f->gz) {
		close(fd);
		return ds_fail(err, errlen, FPL_ENOMEM, "%s: out of memory", path);
	}
	gzbuffer(f->gz, 1u << 18);
	int rc = gz_read_full(f, h, 4, &got, "header", err, errlen);
	if (rc)
		return rc;
	if (got == 0)
		return ds_fail(err, errlen, FPL_EPARSE, "%s: empty file", path);
	if (got < 4)
		return ds_fail(err, errlen, FPL_EPARSE,
			       "%s: truncated header: %llu of 4 magic bytes", path,
			       (unsigned long long)got);
	if (h[0] != 0 || h[1] != 0)
		return ds_fail(err, errlen, FPL_EPARSE,
			       "%s: bad magic 0x%08lx: not an IDX file", path,
			       (unsigned long)be32(h));
	if (h[2] != 0x08)
		return ds_fail(err, errlen, FPL_EPARSE,
			       "%s: element type 0x%02x is not supported (only 0x08, unsigned byte)",
			       path, h[2]);
	f->ndim = h[3];
	if (labels && f->ndim != 1)
		return ds_fail(err, errlen, FPL_EPARSE,
			       "%s: a labels file has 1 dimension, this one has %d", path, f->ndim);
	if (!labels && f->ndim < 2)
		return ds_fail(err, errlen, FPL_EPARSE,
			       "%s: an images file has 2 or more dimensions, this one has %d", path,
			       f->ndim);
	uint64_t want = 4 * (uint64_t)f->ndim;
	rc = gz_read_full(f, h, want, &got, "header", err, errlen);
	if (rc)
		return rc;
	if (got < want)
		return ds_fail(err, errlen, FPL_EPARSE,
			       "%s: truncated header: %llu of %llu bytes of dimensions", path,
			       (unsigned long long)got, (unsigned long long)want);
	f->n = be32(h);
	f->d = 1;
	for (int k = 1; k < f->ndim; k++)
		if (__builtin_mul_overflow(f->d, (uint64_t)be32(h + 4 * k), &f->d) ||
		    f->d > DS_MAX_ELEMS)
			return ds_fail(err, errlen, FPL_ERANGE,
				       "%s: images of more than %llu bytes are not supported", path,
				       (unsigned long long)DS_MAX_ELEMS);
	if (f->n == 0 || f->d == 0)
		return ds_fail(err, errlen, FPL_EPARSE, "%s: %s", path,
			       f->n == 0 ? "holds no examples" : "a dimension is 0");
	return 0;
}

/* Read exactly n bytes of data; when `whole`, also check nothing follows. */
static int idx_data(struct idx_file *f, unsigned char *buf, uint64_t n, int whole, char *err,
		    size_t errlen)
{
	uint64_t got;
	int rc = gz_read_full(f, buf, n, &got, "data", err, errlen);
	if (rc)
		return rc;
	if (got < n)
		return ds_fail(err, errlen, FPL_EPARSE,
			       "%s: truncated: expected %llu bytes of data, got %llu", f->path,
			       (unsigned long long)n, (unsigned long long)got);
	if (whole) {
		unsigned char extra[64];
		rc = gz_read_full(f, extra, sizeof extra, &got, "data", err, errlen);
		if (rc)
			return rc;
		if (got)
			return ds_fail(err, errlen, FPL_EPARSE,
				       "%s: trailing data after the bytes the header announces",
				       f->path);
	}
	return 0;
}

/* Images and labels of a pair of opened files into ds.  Images are read
 * in chunks of IDX_CHUNK bytes converted at once, so the bytes stay in
 * cache and no second copy of the file is held. */
#define IDX_CHUNK (1u << 20)
static int idx_load(fpl_dataset *ds, struct idx_file *im, struct idx_file *lb, size_t limit,
		    char *err, size_t errlen)
{
	if (im->n != lb->n)
		return ds_fail(err, errlen, FPL_EPARSE,
			       "%s: %llu labels for the %llu images of %s", lb->path,
			       (unsigned long long)lb->n, (unsigned long long)im->n, im->path);
	uint64_t n = limit && limit < im->n ? limit : im->n, nd;
	int whole = n == im->n;
	if (__builtin_mul_overflow(n, im->d, &nd) || nd > DS_MAX_ELEMS)
		return ds_fail(err, errlen, FPL_ERANGE,
			       "%s: %llu images of %llu pixels exceed the limit of %llu values "
			       "(pass a smaller limit)", im->path, (unsigned long long)n,
			       (unsigned long long)im->d, (unsigned long long)DS_MAX_ELEMS);
	float table[256];
	for (int b = 0; b < 256; b++)
		table[b] = (float)((double)b / 255.0);	/* see the file comment */

	size_t cap = nd < IDX_CHUNK ? (size_t)nd : IDX_CHUNK;
	unsigned char *raw = malloc(cap > n ? cap : (size_t)n);
	ds->x = malloc((size_t)nd * sizeof *ds->x);
	ds->y = malloc((size_t)n * sizeof *ds->y);
	if (!raw || !ds->x || !ds->y) {
		free(raw);
		return ds_fail(err, errlen, FPL_ENOMEM, "%s: out of memory for %llu images",
			       im->path, (unsigned long long)n);
	}
	int rc = 0;
	for (uint64_t done = 0; rc == 0 && done < nd;) {
		size_t k = nd - done < cap ? (size_t)(nd - done) : cap;
		uint64_t got;
		rc = gz_read_full(im, raw, k, &got, "data", err, errlen);
		if (rc == 0 && got < k)
			rc = ds_fail(err, errlen, FPL_EPARSE,
				     "%s: truncated: expected %llu bytes of data, got %llu", im->path,
				     (unsigned long long)nd, (unsigned long long)(done + got));
		for (size_t i = 0; rc == 0 && i < k; i++)
			ds->x[done + i] = table[raw[i]];
		done += k;
	}
	if (rc == 0 && whole)
		rc = idx_data(im, raw, 0, whole, err, errlen);
	if (rc == 0)
		rc = idx_data(lb, raw, n, whole, err, errlen);
	if (rc == 0)
		for (size_t i = 0; i < (size_t)n; i++)
			ds->y[i] = raw[i];
	free(raw);
	ds->n = (size_t)n;
	ds->d = (size_t)im->d;
	return rc;
}

FPL_API int fpl_dataset_load_idx(fpl_dataset *ds, const char *images, const char *labels,
				 size_t limit, char *err, size_t errlen)
{
	struct idx_file im, lb;
	if (!ds || !images || !labels)
		return ds_fail(err, errlen, FPL_EINVAL, "idx: missing data set or file name");
	memset(ds, 0, sizeof *ds);
	memset(&lb, 0, sizeof lb);
	int rc = idx_open(&im, images, 0, err, errlen);
	if (rc == 0)
		rc = idx_open(&lb, labels, 1, err, errlen);
	if (rc == 0)
		rc = idx_load(ds, &im, &lb, limit, err, errlen);
	if (im.gz)
		gzclose(im.gz);
	if (lb.gz)
		gzclose(lb.gz);
	if (rc) {
		fpl_dataset_free(ds);
		return rc;
	}
	ds_set_classes(ds);
	return 0;
}

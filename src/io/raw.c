/* SPDX-License-Identifier: MIT */
/*
 * raw.c - raw binary files: one tensor of a dtype the caller names, after
 * an optional byte offset, optionally limited to a count of elements;
 * little-endian unless opts.big_endian.  stdin and pipes are read
 * sequentially (their length is known at the end only).
 *
 * Invariant: for a regular file the element count is settled at open:
 * the bytes after the offset must hold exactly `count` elements (or, with
 * count 0, a whole number of elements).
 */
#include <string.h>

#include "io/io.h"

int io_raw_open(fpl_tensor_file *tf, char *err, size_t errlen)
{
	const char *name = tf->is_stdin ? "stdin" : tf->shown;
	fpl_dtype dt = tf->opts.dtype;
	size_t es = fpl_dtype_size(dt);
	if (es == 0)
		return io_fail(err, errlen, FPL_EINVAL, "%s: raw input needs a dtype "
			       "(f64, f32, f16, bf16, e4m3fn or e5m2)", name);
	int rc = io_tensors_alloc(tf, 1);
	if (rc)
		return io_fail(err, errlen, rc, "%s: out of memory", name);
	struct io_tensor *t = &tf->t[0];
	io_name_from_file(tf, t->info.name, sizeof t->info.name);
	t->info.dtype = dt;
	t->info.big_endian = es > 1 && tf->opts.big_endian;
	t->info.ndim = 1;
	t->data_off = tf->opts.offset;
	uint64_t off = tf->opts.offset, cnt = tf->opts.count;
	if (tf->sequential) {
		/* stdin or a pipe: the count is what is there (0 = to the end) */
		t->info.count = cnt;
		t->info.shape[0] = cnt;
		return 0;
	}
	if (off > tf->size)
		return io_fail(err, errlen, FPL_ERANGE,
			       "%s: offset %llu beyond the end of the file (%llu bytes)", name,
			       (unsigned long long)off, (unsigned long long)tf->size);
	uint64_t avail = tf->size - off, nb;
	if (cnt) {
		if (io_mul_overflow(cnt, es, &nb) || nb > avail)
			return io_fail(err, errlen, FPL_EPARSE,
				       "%s: %llu elements of %zu bytes asked for at offset %llu "
				       "but only %llu bytes follow", name, (unsigned long long)cnt,
				       es, (unsigned long long)off, (unsigned long long)avail);
	} else {
		if (avail % es)
			return io_fail(err, errlen, FPL_EPARSE,
				       "%s: %llu bytes after offset %llu are not a whole number of "
				       "%zu-byte %s elements", name, (unsigned long long)avail,
				       (unsigned long long)off, es, fpl_dtype_name(dt));
		cnt = avail / es;
		nb = avail;
	}
	t->info.count = cnt;
	t->info.shape[0] = cnt;
	t->nbytes = cnt * es;
	return 0;
}

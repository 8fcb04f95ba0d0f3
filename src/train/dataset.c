/* SPDX-License-Identifier: MIT */
/*
 * dataset.c - fpl_dataset_fashion_mnist() (the four IDX files of Debian's
 * dataset-fashion-mnist, with or without .gz), fpl_dataset_free() and the
 * helpers the loaders share (messages, the class count).
 *
 * Invariant: a data set is either wholly owned (x and y from malloc, n,
 * d, classes consistent) or all zero; no loader returns a half-filled one.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <fplab/error.h>

#include "train/dataset_internal.h"

void ds_set_classes(fpl_dataset *ds)
{
	int32_t m = 1;
	for (size_t i = 0; i < ds->n; i++)
		if (ds->y[i] > m)
			m = ds->y[i];
	ds->classes = (unsigned)m + 1;
}

FPL_API void fpl_dataset_free(fpl_dataset *ds)
{
	if (!ds)
		return;
	free(ds->x);
	free(ds->y);
	memset(ds, 0, sizeof *ds);
}

/* dir/base.gz if it is a file, else dir/base if it is, else "" (absent). */
static int find_file(char *out, size_t cap, const char *dir, const char *base)
{
	struct stat st;
	if ((size_t)snprintf(out, cap, "%s/%s.gz", dir, base) < cap && stat(out, &st) == 0)
		return 1;
	if ((size_t)snprintf(out, cap, "%s/%s", dir, base) < cap && stat(out, &st) == 0)
		return 1;
	return 0;
}

FPL_API int fpl_dataset_fashion_mnist(fpl_dataset *ds, const char *dir, int test, size_t limit,
				      char *err, size_t errlen)
{
	static const char *const names[2][2] = {
		{ "train-images-idx3-ubyte", "train-labels-idx1-ubyte" },
		{ "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte" },
	};
	char images[4096], labels[4096];
	if (!ds)
		return ds_fail(err, errlen, FPL_EINVAL, "fashion-mnist: no data set to fill");
	memset(ds, 0, sizeof *ds);
	if (!dir)
		dir = FPL_FASHION_MNIST_DIR;
	const char *const *nm = names[test ? 1 : 0];
	/* the package's directory: say how to get it; the caller's: say what
	 * is missing there */
	const char *pkg = strcmp(dir, FPL_FASHION_MNIST_DIR) ? "" :
			  " (install the Debian package dataset-fashion-mnist)";
	struct stat st;
	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return ds_fail(err, errlen, FPL_ENOTFOUND, "fashion-mnist: no directory '%s'%s",
			       dir, pkg);
	for (int k = 0; k < 2; k++) {
		char *p = k ? labels : images;
		if (!find_file(p, sizeof images, dir, nm[k]))
			return ds_fail(err, errlen, FPL_ENOTFOUND,
				       "fashion-mnist: no %s (nor %s.gz) in '%s'%s", nm[k], nm[k],
				       dir, pkg);
	}
	return fpl_dataset_load_idx(ds, images, labels, limit, err, errlen);
}

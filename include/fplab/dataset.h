/* SPDX-License-Identifier: MIT */
/*
 * fplab/dataset.h - labelled data sets for `fplab train`: Fashion-MNIST
 * (or any IDX pair, gzip-compressed or not), a user's features and
 * labels in .npy/.npz files, and a small generated set for tests.
 *
 * A data set is n examples of d features (binary32, row-major, example
 * i at x[i*d]) with labels y[i] in 0..classes-1.  IDX images are scaled
 * to [0, 1] by dividing the byte by 255 (one binary32 rounding, ne).
 */
#ifndef FPLAB_DATASET_H
#define FPLAB_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/export.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fpl_dataset {
	size_t n;		/* examples */
	size_t d;		/* features per example */
	unsigned classes;	/* 1 + the largest label (at least 2) */
	float *x;		/* n*d features, owned */
	int32_t *y;		/* n labels, owned */
} fpl_dataset;

/* Where Debian's dataset-fashion-mnist installs its four IDX files. */
#define FPL_FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"

/*
 * Read an IDX pair (http://yann.lecun.com/exdb/mnist/ format: big-endian
 * magic 0x0000TTDD with type TT = 0x08 unsigned byte and DD dimensions,
 * then DD big-endian uint32 sizes, then the data), each file plain or
 * gzip-compressed (zlib's gzread reads both).  images: 0x08 type, 2 or
 * more dimensions (n x rows x cols...: d is the product of the rest);
 * labels: 0x08 type, 1 dimension n, values < 256.  At most `limit`
 * examples are kept (0: all), the first ones.
 * Returns 0, or FPL_EIO (cannot open or read: err says which file and
 * why), FPL_EPARSE (bad magic, type, dimensions, truncated data, counts
 * that differ between the two files: err says what), FPL_ENOMEM.  err
 * (errlen bytes, may be NULL when errlen is 0) gets a one-line message
 * naming the file.  *ds is zeroed on error.
 */
FPL_API int fpl_dataset_load_idx(fpl_dataset *ds, const char *images, const char *labels,
				 size_t limit, char *err, size_t errlen);

/*
 * Fashion-MNIST from `dir` (NULL: FPL_FASHION_MNIST_DIR): the training
 * set (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz; 60000
 * examples) when test is 0, the test set (t10k-*; 10000) when 1; the
 * files are tried with and without the .gz suffix.  As
 * fpl_dataset_load_idx; FPL_ENOTFOUND when the directory or a file is
 * absent (err names which; for FPL_FASHION_MNIST_DIR also the Debian
 * package dataset-fashion-mnist).
 */
FPL_API int fpl_dataset_fashion_mnist(fpl_dataset *ds, const char *dir, int test, size_t limit,
				      char *err, size_t errlen);

/*
 * Features and labels from tensor files (.npy, .npz member "NAME" written
 * as path:NAME, .safetensors tensor path:NAME, read with fplab/tensor.h):
 * features of 2 or more dimensions (n x ...; any numeric dtype, converted
 * to binary32 with one rounding, ne; values that are not finite
 * rejected), labels 1-dimensional of n integers (integer dtypes, or
 * floating values that are integers) in 0..65535.  As above for limit,
 * errors (FPL_EPARSE also for shapes that do not match) and *ds.
 */
FPL_API int fpl_dataset_load_tensors(fpl_dataset *ds, const char *features, const char *labels,
				     size_t limit, char *err, size_t errlen);

/*
 * A generated set for fast tests: `classes` Gaussian blobs in d
 * dimensions, n examples, example i of class i % classes; the class
 * centres and the noise are pure functions of seed (fplab's counter-based
 * generator), features in [0, 1] (clamped), so the set is the same on
 * every platform.  Linearly separable enough that a small MLP learns it
 * in a few epochs.  FPL_EINVAL (n = 0, d = 0, classes < 2), FPL_ENOMEM.
 */
FPL_API int fpl_dataset_generate(fpl_dataset *ds, size_t n, size_t d, unsigned classes,
				 uint64_t seed);

/* Free what a loader allocated; *ds zeroed.  NULL is a no-op. */
FPL_API void fpl_dataset_free(fpl_dataset *ds);

#ifdef __cplusplus
}
#endif
#endif

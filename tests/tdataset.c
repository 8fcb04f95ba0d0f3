/* SPDX-License-Identifier: MIT */
/*
 * tests/tdataset.c - the data-set loaders (fplab/dataset.h): IDX pairs
 * written here byte by byte, plain and gzip-compressed, every pixel
 * compared with MPFR's correctly rounded binary32 of b/255; every kind of
 * malformed IDX input (each a status and a message naming the file);
 * Fashion-MNIST when dataset-fashion-mnist is installed (class counts
 * published by its authors, and the first label and image read back by
 * an independent inflate() reader written here); features and labels in
 * .npy/.npz/.safetensors files written here (float and integer dtypes,
 * Fortran order, limits, bad values and shapes); the generated set
 * (determinism, shapes, labels, range, and a nearest-class-mean
 * classifier computed here that must reach 90%).
 */
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

#include <fplab/fplab.h>
#include <fplab/dataset.h>

#include "harness.h"
#include "tfiles.h"

#define CHECK(cond, ...)                               \
	do {                                           \
		if (!h_check(cond))                     \
			h_fail(__VA_ARGS__);          \
	} while (0)

/* ------------------------------------------------------------ helpers */

/* The correctly rounded binary32 of b/255, from MPFR (200 bits, then one
 * rounding to nearest-even). */
static float px_expected(unsigned b)
{
	mpfr_t q;
	mpfr_init2(q, 200);
	mpfr_set_ui(q, b, MPFR_RNDN);
	mpfr_div_ui(q, q, 255, MPFR_RNDN);
	float f = mpfr_get_flt(q, MPFR_RNDN);
	mpfr_clear(q);
	return f;
}

/* The correctly rounded binary32 of a binary64, from MPFR. */
static float f32_of(double v)
{
	mpfr_t q;
	mpfr_init2(q, 53);
	mpfr_set_d(q, v, MPFR_RNDN);
	float f = mpfr_get_flt(q, MPFR_RNDN);
	mpfr_clear(q);
	return f;
}

static uint32_t fbits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void put_le(unsigned char *p, uint64_t v, int size)
{
	for (int i = 0; i < size; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* An IDX image: magic 00 00 type ndim, the dims, then `data`. */
static size_t idx_image(unsigned char *out, int type, int ndim, const uint32_t *dims,
			const unsigned char *data, size_t n)
{
	out[0] = 0;
	out[1] = 0;
	out[2] = (unsigned char)type;
	out[3] = (unsigned char)ndim;
	for (int k = 0; k < ndim; k++)
		put_be32(out + 4 + 4 * k, dims[k]);
	if (n)
		memcpy(out + 4 + 4 * ndim, data, n);
	return 4 + 4 * (size_t)ndim + n;
}

static void write_gz(const char *path, const void *data, size_t n)
{
	gzFile g = gzopen(path, "wb");
	if (!g || (n && gzwrite(g, data, (unsigned)n) != (int)n) || gzclose(g) != Z_OK) {
		fprintf(stderr, "cannot write %s\n", path);
		exit(1);
	}
}

static void write_file(const char *path, const void *data, size_t n, int gz)
{
	if (gz)
		write_gz(path, data, n);
	else
		tf_write(path, data, n);
}

static int zeroed(const fpl_dataset *ds)
{
	return ds->n == 0 && ds->d == 0 && ds->classes == 0 && !ds->x && !ds->y;
}

/* Expect status `want`, a message containing `frag` and `frag2` (NULL:
 * not checked), and a zeroed data set. */
static void expect_err(const char *what, int rc, int want, const fpl_dataset *ds,
		       const char *err, const char *frag, const char *frag2)
{
	CHECK(rc == want, "%s: status %d (%s), expected %d; message '%s'", what, rc,
	      fpl_strerror(rc), want, err);
	CHECK(strstr(err, frag) != NULL, "%s: message '%s' lacks '%s'", what, err, frag);
	if (frag2)
		CHECK(strstr(err, frag2) != NULL, "%s: message '%s' lacks '%s'", what, err, frag2);
	CHECK(zeroed(ds), "%s: data set not zeroed after an error", what);
	if (getenv("TDATASET_SHOW"))	/* review the messages: TDATASET_SHOW=1 */
		h_note("%s: %s", what, err);
}

/* ------------------------------------------------------------ IDX */

/* 5 images of 3x2 pixels, 5 labels 0 3 1 3 2 (4 classes). */
static const unsigned char img5[30] = {
	0,   255, 1,   128, 254, 127, /* */ 2,   3,	  4,   5,   6,	 7,
	250, 251, 252, 253, 85,	 170, /* */ 51,	 102, 153, 204, 17,  34,
	9,   99,  199, 200, 201, 77,
};
static const unsigned char lab5[5] = { 0, 3, 1, 3, 2 };

static void write_pair(const char *im, const char *lb, int gz)
{
	unsigned char buf[512];
	const uint32_t di[3] = { 5, 3, 2 }, dl[1] = { 5 };
	write_file(im, buf, idx_image(buf, 8, 3, di, img5, 30), gz);
	write_file(lb, buf, idx_image(buf, 8, 1, dl, lab5, 5), gz);
}

static void check_pair(const char *what, const fpl_dataset *ds, size_t n)
{
	CHECK(ds->n == n && ds->d == 6 && ds->classes == (n >= 2 ? 4u : 2u),
	      "%s: n %zu d %zu classes %u, expected %zu 6 %u", what, ds->n, ds->d, ds->classes, n,
	      n >= 2 ? 4u : 2u);
	if (ds->n != n || ds->d != 6)
		return;
	for (size_t i = 0; i < n * 6; i++) {
		float e = px_expected(img5[i]);
		CHECK(fbits(ds->x[i]) == fbits(e), "%s: pixel %zu is %a, expected %a (byte %u)", what,
		      i, (double)ds->x[i], (double)e, img5[i]);
	}
	for (size_t i = 0; i < n; i++)
		CHECK(ds->y[i] == lab5[i], "%s: label %zu is %d, expected %d", what, i, ds->y[i],
		      lab5[i]);
}

static void test_idx_good(void)
{
	char err[512];
	fpl_dataset ds;
	for (int gz = 0; gz < 2; gz++) {
		const char *im = tf_path(gz ? "im.gz" : "im"), *lb = tf_path(gz ? "lb.gz" : "lb");
		write_pair(im, lb, gz);
		const char *what = gz ? "idx gzip" : "idx plain";
		int rc = fpl_dataset_load_idx(&ds, im, lb, 0, err, sizeof err);
		CHECK(rc == 0, "%s: %s", what, err);
		if (rc == 0)
			check_pair(what, &ds, 5);
		fpl_dataset_free(&ds);
		CHECK(zeroed(&ds), "%s: free did not zero the data set", what);
		/* limit: the first 2, then 1 (classes then from labels {0}: 2) */
		rc = fpl_dataset_load_idx(&ds, im, lb, 2, err, sizeof err);
		CHECK(rc == 0, "%s limit 2: %s", what, err);
		if (rc == 0)
			check_pair("idx limit 2", &ds, 2);
		fpl_dataset_free(&ds);
		rc = fpl_dataset_load_idx(&ds, im, lb, 1, err, sizeof err);
		CHECK(rc == 0, "%s limit 1: %s", what, err);
		if (rc == 0)
			check_pair("idx limit 1", &ds, 1);
		fpl_dataset_free(&ds);
		rc = fpl_dataset_load_idx(&ds, im, lb, 99, err, sizeof err);
		CHECK(rc == 0, "%s limit 99: %s", what, err);
		if (rc == 0)
			check_pair("idx limit 99", &ds, 5);
		fpl_dataset_free(&ds);
	}
	fpl_dataset_free(NULL);

	/* every byte value: 256 images of 1x1 (labels b % 7), and 4 dims */
	unsigned char data[256], lab[256], buf[1024];
	for (int b = 0; b < 256; b++) {
		data[b] = (unsigned char)b;
		lab[b] = (unsigned char)(b % 7);
	}
	const uint32_t di[4] = { 256, 1, 1, 1 }, dl[1] = { 256 };
	tf_write(tf_path("all"), buf, idx_image(buf, 8, 4, di, data, 256));
	tf_write(tf_path("alll"), buf, idx_image(buf, 8, 1, dl, lab, 256));
	int rc = fpl_dataset_load_idx(&ds, tf_path("all"), tf_path("alll"), 0, err, sizeof err);
	CHECK(rc == 0 && ds.n == 256 && ds.d == 1 && ds.classes == 7,
	      "idx all bytes: rc %d n %zu d %zu classes %u: %s", rc, ds.n, ds.d, ds.classes, err);
	if (rc == 0 && ds.n == 256)
		for (int b = 0; b < 256; b++) {
			float e = px_expected((unsigned)b);
			CHECK(fbits(ds.x[b]) == fbits(e), "idx: byte %d gives %a, expected %a", b,
			      (double)ds.x[b], (double)e);
			CHECK(ds.y[b] == b % 7, "idx: label %d is %d", b, ds.y[b]);
		}
	fpl_dataset_free(&ds);
}

/* Write images and labels images as given and expect an error. */
static void idx_bad(const char *what, const void *im, size_t imn, const void *lb, size_t lbn,
		    int gz, int want, const char *bad_file, const char *frag)
{
	char err[512] = "";
	fpl_dataset ds;
	const char *pi = tf_path(gz ? "bad-im.gz" : "bad-im"),
		   *pl = tf_path(gz ? "bad-lb.gz" : "bad-lb");
	write_file(pi, im, imn, gz);
	write_file(pl, lb, lbn, gz);
	memset(&ds, 0x5a, sizeof ds);
	int rc = fpl_dataset_load_idx(&ds, pi, pl, 0, err, sizeof err);
	expect_err(what, rc, want, &ds, err, strcmp(bad_file, "im") == 0 ? pi : pl, frag);
}

static void test_idx_bad(void)
{
	unsigned char im[512], lb[512], x[512];
	const uint32_t di[3] = { 5, 3, 2 }, dl[1] = { 5 }, dl2[2] = { 5, 1 }, dl4[1] = { 4 };
	size_t imn = idx_image(im, 8, 3, di, img5, 30), lbn = idx_image(lb, 8, 1, dl, lab5, 5);
	char err[512];
	fpl_dataset ds;

	for (int gz = 0; gz < 2; gz++) {
		memcpy(x, im, imn);
		x[0] = 0x1f;	/* not zero */
		idx_bad("bad magic", x, imn, lb, lbn, gz, FPL_EPARSE, "im", "magic");
		memcpy(x, lb, lbn);
		x[1] = 0x08;
		idx_bad("bad magic in labels", im, imn, x, lbn, gz, FPL_EPARSE, "lb", "magic");
		memcpy(x, im, imn);
		x[2] = 0x0d;	/* float */
		idx_bad("wrong type", x, imn, lb, lbn, gz, FPL_EPARSE, "im", "0x0d");
		idx_bad("truncated magic", im, 3, lb, lbn, gz, FPL_EPARSE, "im", "truncated header");
		idx_bad("truncated dims", im, 10, lb, lbn, gz, FPL_EPARSE, "im", "truncated header");
		idx_bad("truncated data", im, imn - 10, lb, lbn, gz, FPL_EPARSE, "im",
			"truncated: expected 30 bytes of data, got 20");
		idx_bad("truncated labels", im, imn, lb, lbn - 1, gz, FPL_EPARSE, "lb",
			"truncated: expected 5 bytes of data, got 4");
		idx_bad("empty images", im, 0, lb, lbn, gz, FPL_EPARSE, "im", "empty");
		idx_bad("empty labels", im, imn, lb, 0, gz, FPL_EPARSE, "lb", "empty");
		size_t n = idx_image(x, 8, 1, dl4, lab5, 4);
		idx_bad("count mismatch", im, imn, x, n, gz, FPL_EPARSE, "lb", "4 labels");
		n = idx_image(x, 8, 2, dl2, lab5, 5);
		idx_bad("2-D labels", im, imn, x, n, gz, FPL_EPARSE, "lb", "1 dimension");
		n = idx_image(x, 8, 1, dl, img5, 5);
		idx_bad("1-D images", x, n, lb, lbn, gz, FPL_EPARSE, "im", "2 or more");
		memcpy(x, im, imn);
		x[imn] = 7;	/* one byte more than announced */
		idx_bad("trailing data", x, imn + 1, lb, lbn, gz, FPL_EPARSE, "im", "after");
	}

	/* n*d past 2^31 elements: ERANGE before any allocation or data read */
	{
		const uint32_t big[3] = { 4000000, 1000, 1000 }, bl[1] = { 4000000 };
		const uint32_t huge[3] = { 0xffffffffu, 0xffffffffu, 0xffffffffu };
		size_t n = idx_image(x, 8, 3, big, NULL, 0), m = idx_image(lb, 8, 1, bl, NULL, 0);
		idx_bad("huge n*d", x, n, lb, m, 0, FPL_ERANGE, "im", "exceed");
		n = idx_image(x, 8, 3, huge, NULL, 0);
		idx_bad("overflowing dims", x, n, lb, m, 0, FPL_ERANGE, "im", "not supported");
	}

	/* a nonexistent file */
	write_pair(tf_path("ok-im"), tf_path("ok-lb"), 0);
	int rc = fpl_dataset_load_idx(&ds, tf_path("nonexistent"), tf_path("ok-lb"), 0, err,
				      sizeof err);
	expect_err("nonexistent images", rc, FPL_EIO, &ds, err, "nonexistent", "cannot open");
	rc = fpl_dataset_load_idx(&ds, tf_path("ok-im"), tf_path("nope"), 0, err, sizeof err);
	expect_err("nonexistent labels", rc, FPL_EIO, &ds, err, "nope", "cannot open");
	rc = fpl_dataset_load_idx(&ds, tf_tmpdir(), tf_path("ok-lb"), 0, err, sizeof err);
	CHECK(rc == FPL_EIO && zeroed(&ds), "a directory as images: status %d: %s", rc, err);
	rc = fpl_dataset_load_idx(&ds, tf_path("ok-im"), tf_path("ok-lb"), 0, NULL, 0);
	CHECK(rc == 0, "err NULL, errlen 0: status %d", rc);
	fpl_dataset_free(&ds);
	rc = fpl_dataset_load_idx(&ds, tf_path("nonexistent"), tf_path("ok-lb"), 0, NULL, 0);
	CHECK(rc == FPL_EIO, "err NULL on error: status %d", rc);

	/* corrupt gzip streams: a flipped byte in the deflate data (the CRC or
	 * inflate fails), and a stream cut short */
	unsigned char big[4096], gzb[8192];
	const uint32_t db[3] = { 64, 8, 8 }, dlb[1] = { 64 };
	h_rng r;
	h_rng_init(&r, 11);
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (unsigned char)h_rng_below(&r, 256);
	unsigned char labs[64] = { 0 };
	size_t n = idx_image(x, 8, 1, dlb, labs, 64);
	write_gz(tf_path("cl.gz"), x, n);
	unsigned char *raw = malloc(4096 + 64);
	n = idx_image(raw, 8, 3, db, big, 4096);
	write_gz(tf_path("c.gz"), raw, n);
	free(raw);
	FILE *fp = fopen(tf_path("c.gz"), "rb");
	size_t zn = fp ? fread(gzb, 1, sizeof gzb, fp) : 0;
	if (fp)
		fclose(fp);
	CHECK(zn > 100, "cannot read back c.gz");
	if (zn > 100) {
		gzb[zn / 2] ^= 0x55;
		tf_write(tf_path("c1.gz"), gzb, zn);
		rc = fpl_dataset_load_idx(&ds, tf_path("c1.gz"), tf_path("cl.gz"), 0, err,
					  sizeof err);
		expect_err("corrupt gzip", rc, FPL_EPARSE, &ds, err, "c1.gz", "gzip");
		gzb[zn / 2] ^= 0x55;
		gzb[zn - 3] ^= 0x01;	/* the stored length (ISIZE) */
		tf_write(tf_path("c2.gz"), gzb, zn);
		rc = fpl_dataset_load_idx(&ds, tf_path("c2.gz"), tf_path("cl.gz"), 0, err,
					  sizeof err);
		expect_err("gzip trailer", rc, FPL_EPARSE, &ds, err, "c2.gz", "gzip");
		gzb[zn - 3] ^= 0x01;
		tf_write(tf_path("c3.gz"), gzb, zn * 2 / 3);
		rc = fpl_dataset_load_idx(&ds, tf_path("c3.gz"), tf_path("cl.gz"), 0, err,
					  sizeof err);
		expect_err("gzip cut short", rc, FPL_EPARSE, &ds, err, "c3.gz", "gzip");
	}
}

/* ------------------------------------------------------------ Fashion-MNIST */

/* Inflate the first `want` bytes of gzip file `path` (an independent
 * reader: zlib's inflate() on the file's bytes, not gzread). */
static int gunzip_prefix(const char *path, unsigned char *out, size_t want)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return -1;
	z_stream z;
	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		fclose(fp);
		return -1;
	}
	unsigned char in[16384];
	z.next_out = out;
	z.avail_out = (uInt)want;
	int zr = Z_OK;
	while (z.avail_out > 0 && zr == Z_OK) {
		if (z.avail_in == 0) {
			size_t r = fread(in, 1, sizeof in, fp);
			if (r == 0)
				break;
			z.next_in = in;
			z.avail_in = (uInt)r;
		}
		zr = inflate(&z, Z_NO_FLUSH);
	}
	int ok = z.avail_out == 0;
	inflateEnd(&z);
	fclose(fp);
	return ok ? 0 : -1;
}

static void test_fashion_missing(void)
{
	char err[512];
	fpl_dataset ds;
	char dir[600];
	snprintf(dir, sizeof dir, "%s/fm", tf_tmpdir());
	mkdir(dir, 0700);
	int rc = fpl_dataset_fashion_mnist(&ds, dir, 0, 0, err, sizeof err);
	expect_err("fashion-mnist absent", rc, FPL_ENOTFOUND, &ds, err,
		   "no train-images-idx3-ubyte (nor train-images-idx3-ubyte.gz) in", dir);
	CHECK(!strstr(err, "apt") && !strstr(err, "package"),
	      "a directory of the caller's names no package: %s", err);
	/* a directory that does not exist is said to be missing */
	char none[700];
	snprintf(none, sizeof none, "%s/none", dir);
	rc = fpl_dataset_fashion_mnist(&ds, none, 0, 0, err, sizeof err);
	expect_err("fashion-mnist no directory", rc, FPL_ENOTFOUND, &ds, err, "no directory",
		   none);
	/* plain (not .gz) files in a directory of our own */
	char im[700], lb[700];
	snprintf(im, sizeof im, "%s/t10k-images-idx3-ubyte", dir);
	snprintf(lb, sizeof lb, "%s/t10k-labels-idx1-ubyte", dir);
	write_pair(im, lb, 0);
	rc = fpl_dataset_fashion_mnist(&ds, dir, 1, 0, err, sizeof err);
	CHECK(rc == 0, "fashion-mnist plain files: %s", err);
	if (rc == 0)
		check_pair("fashion-mnist plain files", &ds, 5);
	fpl_dataset_free(&ds);
	rc = fpl_dataset_fashion_mnist(&ds, dir, 0, 0, err, sizeof err);
	CHECK(rc == FPL_ENOTFOUND, "fashion-mnist: test files only, train asked: %d", rc);
}

static void test_fashion(void)
{
	char err[512], path[600];
	fpl_dataset ds;
	snprintf(path, sizeof path, "%s/train-labels-idx1-ubyte.gz", FPL_FASHION_MNIST_DIR);
	struct stat st;
	if (stat(path, &st) != 0) {
		h_note("note: %s absent (Debian package dataset-fashion-mnist): Fashion-MNIST "
		       "checks skipped", path);
		return;
	}
	for (int test = 0; test < 2; test++) {
		const char *what = test ? "fashion-mnist test" : "fashion-mnist train";
		size_t n = test ? 10000 : 60000;
		double t0 = h_now();
		int rc = fpl_dataset_fashion_mnist(&ds, NULL, test, 0, err, sizeof err);
		double t = h_now() - t0;
		h_note("%s: loaded in %.3f s", what, t);
		CHECK(rc == 0, "%s: %s", what, err);
		if (rc)
			continue;
		CHECK(ds.n == n && ds.d == 784 && ds.classes == 10, "%s: n %zu d %zu classes %u",
		      what, ds.n, ds.d, ds.classes);
		if (ds.n != n || ds.d != 784)
			goto next;
		/* the authors' table: 7000 images per class, 6000 train, 1000 test */
		size_t hist[10] = { 0 }, bad = 0;
		for (size_t i = 0; i < ds.n; i++)
			if (ds.y[i] >= 0 && ds.y[i] < 10)
				hist[ds.y[i]]++;
			else
				bad++;
		CHECK(bad == 0, "%s: %zu labels outside 0..9", what, bad);
		for (int c = 0; c < 10; c++)
			CHECK(hist[c] == n / 10, "%s: class %d has %zu examples, expected %zu", what, c,
			      hist[c], n / 10);
		size_t out = 0;
		for (size_t i = 0; i < ds.n * ds.d; i++)
			out += !(ds.x[i] >= 0.0f && ds.x[i] <= 1.0f);
		CHECK(out == 0, "%s: %zu pixels outside [0, 1]", what, out);
		/* the first label and image, read back independently; both sets
		 * begin with an ankle boot, class 9 */
		unsigned char lab[9], img[16 + 784];
		snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte.gz", FPL_FASHION_MNIST_DIR,
			 test ? "t10k" : "train");
		CHECK(gunzip_prefix(path, lab, 9) == 0, "%s: cannot inflate %s", what, path);
		CHECK(ds.y[0] == lab[8] && lab[8] == 9, "%s: first label %d, file says %d", what,
		      ds.y[0], lab[8]);
		snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte.gz", FPL_FASHION_MNIST_DIR,
			 test ? "t10k" : "train");
		CHECK(gunzip_prefix(path, img, sizeof img) == 0, "%s: cannot inflate %s", what, path);
		size_t mism = 0;
		for (int k = 0; k < 784; k++)
			mism += fbits(ds.x[k]) != fbits(px_expected(img[16 + k]));
		CHECK(mism == 0, "%s: %zu pixels of the first image differ", what, mism);
		/* limit: the first examples of the full set */
		fpl_dataset lim;
		rc = fpl_dataset_fashion_mnist(&lim, NULL, test, 100, err, sizeof err);
		CHECK(rc == 0 && lim.n == 100 && lim.d == 784, "%s limit 100: %s", what, err);
		if (rc == 0 && lim.n == 100)
			CHECK(memcmp(lim.x, ds.x, 100 * 784 * sizeof *ds.x) == 0 &&
			      memcmp(lim.y, ds.y, 100 * sizeof *ds.y) == 0,
			      "%s: limit 100 differs from the full set's start", what);
		fpl_dataset_free(&lim);
next:
		fpl_dataset_free(&ds);
	}
}

/* ------------------------------------------------------------ tensors */

static void npy(const char *name, const char *descr, const char *shape, int fortran,
		const void *data, size_t nbytes)
{
	char dict[256];
	snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr,
		 fortran ? "True" : "False", shape);
	tf_npy(tf_path(name), 1, dict, data, nbytes);
}

static unsigned char *npy_mem(const char *descr, const char *shape, const void *data,
			      size_t nbytes, size_t *len)
{
	char dict[256];
	snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
		 descr, shape);
	return tf_npy_image(1, dict, data, nbytes, len);
}

static void tload(const char *what, const char *fx, const char *fy, size_t limit,
		  fpl_dataset *ds, char *err, size_t errlen)
{
	char px[600], py[600];
	snprintf(px, sizeof px, "%s/%s", tf_tmpdir(), fx);
	snprintf(py, sizeof py, "%s/%s", tf_tmpdir(), fy);
	int rc = fpl_dataset_load_tensors(ds, px, py, limit, err, errlen);
	CHECK(rc == 0, "%s: status %d: %s", what, rc, err);
}

static void tbad(const char *what, const char *fx, const char *fy, int want, const char *frag,
		 const char *frag2)
{
	char px[600], py[600], err[1024] = "";
	fpl_dataset ds;
	snprintf(px, sizeof px, "%s/%s", tf_tmpdir(), fx);
	snprintf(py, sizeof py, "%s/%s", tf_tmpdir(), fy);
	int rc = fpl_dataset_load_tensors(&ds, px, py, 0, err, sizeof err);
	expect_err(what, rc, want, &ds, err, frag, frag2);
}

/* x[i] must equal want[i] bit for bit, y[i] wanty[i]. */
static void expect_ds(const char *what, const fpl_dataset *ds, size_t n, size_t d,
		      unsigned classes, const float *want, const int32_t *wanty)
{
	CHECK(ds->n == n && ds->d == d && ds->classes == classes,
	      "%s: n %zu d %zu classes %u, expected %zu %zu %u", what, ds->n, ds->d, ds->classes,
	      n, d, classes);
	if (ds->n != n || ds->d != d)
		return;
	for (size_t i = 0; i < n * d; i++)
		CHECK(fbits(ds->x[i]) == fbits(want[i]), "%s: x[%zu] is %a, expected %a", what, i,
		      (double)ds->x[i], (double)want[i]);
	for (size_t i = 0; i < n; i++)
		CHECK(ds->y[i] == wanty[i], "%s: y[%zu] is %d, expected %d", what, i, ds->y[i],
		      wanty[i]);
}

static void test_tensors(void)
{
	char err[1024];
	fpl_dataset ds;
	/* features 4x3: f32 and f64 (values that round), labels 0 2 1 2 */
	static const double xv[12] = { 0.1, -2.5, 1e-3, 3.0, 0.0, 1.0 / 3, 65504.0, -0.0,
				       0x1.000001p0, 0x1.0000018p0, 7.0, 1e30 };
	static const int32_t yv[4] = { 0, 2, 1, 2 };
	unsigned char f8[96], f4[48], i8[32], u1[4], i2be[8], f4y[16];
	float want[12];
	for (int i = 0; i < 12; i++) {
		uint64_t u;
		memcpy(&u, &xv[i], 8);
		put_le(f8 + 8 * i, u, 8);
		want[i] = f32_of(xv[i]);
		put_le(f4 + 4 * i, fbits(want[i]), 4);
	}
	for (int i = 0; i < 4; i++) {
		put_le(i8 + 8 * i, (uint64_t)yv[i], 8);
		u1[i] = (unsigned char)yv[i];
		i2be[2 * i] = 0;
		i2be[2 * i + 1] = (unsigned char)yv[i];
		put_le(f4y + 4 * i, fbits((float)yv[i]), 4);
	}
	npy("x64.npy", "<f8", "(4, 3)", 0, f8, 96);
	npy("x32.npy", "<f4", "(4, 3)", 0, f4, 48);
	npy("y64.npy", "<i8", "(4,)", 0, i8, 32);
	npy("yu1.npy", "|u1", "(4,)", 0, u1, 4);
	npy("yi2.npy", ">i2", "(4,)", 0, i2be, 8);
	npy("yf4.npy", "<f4", "(4,)", 0, f4y, 16);
	const char *ys[4] = { "y64.npy", "yu1.npy", "yi2.npy", "yf4.npy" };
	for (int k = 0; k < 2; k++)
		for (int j = 0; j < 4; j++) {
			char what[100];
			snprintf(what, sizeof what, "npy %s + %s", k ? "x64" : "x32", ys[j]);
			tload(what, k ? "x64.npy" : "x32.npy", ys[j], 0, &ds, err, sizeof err);
			expect_ds(what, &ds, 4, 3, 3, want, yv);
			fpl_dataset_free(&ds);
		}
	tload("npy limit 1", "x64.npy", "y64.npy", 1, &ds, err, sizeof err);
	expect_ds("npy limit 1", &ds, 1, 3, 2, want, yv);
	fpl_dataset_free(&ds);
	tload("npy limit 3", "x32.npy", "yu1.npy", 3, &ds, err, sizeof err);
	expect_ds("npy limit 3", &ds, 3, 3, 3, want, yv);
	fpl_dataset_free(&ds);

	/* 3-D features in Fortran order: logical (i, a, b) of shape (2, 2, 3)
	 * is stored at i + 2*(a + 2*b); value 100i + 10a + b */
	unsigned char fo[48];
	float wfo[12];
	for (int i = 0; i < 2; i++)
		for (int a = 0; a < 2; a++)
			for (int b = 0; b < 3; b++) {
				float v = (float)(100 * i + 10 * a + b);
				put_le(fo + 4 * (i + 2 * (a + 2 * b)), fbits(v), 4);
				wfo[i * 6 + a * 3 + b] = v;
			}
	npy("xfo.npy", "<f4", "(2, 2, 3)", 1, fo, 48);
	npy("y2.npy", "<i8", "(2,)", 0, i8, 16);
	tload("fortran order", "xfo.npy", "y2.npy", 0, &ds, err, sizeof err);
	expect_ds("fortran order", &ds, 2, 6, 3, wfo, yv);
	fpl_dataset_free(&ds);
	tload("fortran order limit", "xfo.npy", "y2.npy", 1, &ds, err, sizeof err);
	expect_ds("fortran order limit", &ds, 1, 6, 2, wfo, yv);
	fpl_dataset_free(&ds);

	/* integer features: bytes converted to binary32 as they are */
	static const unsigned char xb[6] = { 0, 1, 255, 17, 128, 3 };
	float wb[6];
	for (int i = 0; i < 6; i++)
		wb[i] = (float)xb[i];	/* small integers: exact */
	npy("xu1.npy", "|u1", "(2, 3)", 0, xb, 6);
	tload("u1 features", "xu1.npy", "y2.npy", 0, &ds, err, sizeof err);
	expect_ds("u1 features", &ds, 2, 3, 3, wb, yv);
	fpl_dataset_free(&ds);

	/* npz, stored and deflated: x (f32 4x3) and y (i8) */
	size_t lx, ly, lyf;
	unsigned char *mx = npy_mem("<f4", "(4, 3)", f4, 48, &lx),
		      *my = npy_mem("<i8", "(4,)", i8, 32, &ly),
		      *myf = npy_mem("<f4", "(4,)", f4y, 16, &lyf);
	struct tf_member m[3] = { { "x.npy", mx, lx }, { "y.npy", my, ly }, { "yf.npy", myf, lyf } };
	for (int defl = 0; defl < 2; defl++) {
		const char *f = defl ? "d.npz" : "s.npz";
		char fx[64], fy[64], fyf[64];
		tf_npz(tf_path(f), m, 3, defl);
		snprintf(fx, sizeof fx, "%s:x", f);
		snprintf(fy, sizeof fy, "%s:y", f);
		snprintf(fyf, sizeof fyf, "%s:yf", f);
		tload(f, fx, fy, 0, &ds, err, sizeof err);
		expect_ds(f, &ds, 4, 3, 3, want, yv);
		fpl_dataset_free(&ds);
		tload(f, fx, fyf, 2, &ds, err, sizeof err);
		expect_ds(f, &ds, 2, 3, 3, want, yv);
		fpl_dataset_free(&ds);
		snprintf(fy, sizeof fy, "%s:nope", f);
		tbad("npz missing member", fx, fy, FPL_ENOTFOUND, "nope", f);
		tbad("npz without a name", f, fy, FPL_EINVAL, f, "NAME");
	}
	/* a stored member whose bytes changed: libzip's CRC check at its end */
	{
		FILE *fp = fopen(tf_path("s.npz"), "rb");
		unsigned char zb[4096];
		size_t zn = fp ? fread(zb, 1, sizeof zb, fp) : 0;
		if (fp)
			fclose(fp);
		unsigned char *hit = memmem(zb, zn, my + ly - 32, 32);
		CHECK(hit != NULL, "cannot find y's data in s.npz");
		if (hit) {
			hit[8] ^= 1;	/* label 1: 2 -> 3, still valid */
			tf_write(tf_path("sc.npz"), zb, zn);
			tbad("npz member with a bad CRC", "sc.npz:x", "sc.npz:y", FPL_EPARSE,
			     "sc.npz: tensor 'y'", "CRC");
		}
	}
	free(mx);
	free(my);
	free(myf);

	/* safetensors: x F32 [4,3], y I64 / U8 / F64 */
	unsigned char st[48 + 32 + 4 + 32];
	memcpy(st, f4, 48);
	memcpy(st + 48, i8, 32);
	memcpy(st + 80, u1, 4);
	for (int i = 0; i < 4; i++) {
		double v = yv[i];
		uint64_t u;
		memcpy(&u, &v, 8);
		put_le(st + 84 + 8 * i, u, 8);
	}
	tf_safetensors(tf_path("a.safetensors"),
		       "{\"x\": {\"dtype\": \"F32\", \"shape\": [4, 3], \"data_offsets\": [0, 48]}, "
		       "\"y\": {\"dtype\": \"I64\", \"shape\": [4], \"data_offsets\": [48, 80]}, "
		       "\"yb\": {\"dtype\": \"U8\", \"shape\": [4], \"data_offsets\": [80, 84]}, "
		       "\"yd\": {\"dtype\": \"F64\", \"shape\": [4], \"data_offsets\": [84, 116]}}",
		       st, sizeof st);
	const char *sy[3] = { "a.safetensors:y", "a.safetensors:yb", "a.safetensors:yd" };
	for (int j = 0; j < 3; j++) {
		tload(sy[j], "a.safetensors:x", sy[j], 0, &ds, err, sizeof err);
		expect_ds(sy[j], &ds, 4, 3, 3, want, yv);
		fpl_dataset_free(&ds);
	}

	/* errors */
	unsigned char bad[32];
	put_le(bad, fbits(0.5f), 4);
	memcpy(bad + 4, f4y + 4, 12);
	npy("yhalf.npy", "<f4", "(4,)", 0, bad, 16);
	tbad("non-integer label", "x32.npy", "yhalf.npy", FPL_EPARSE, "yhalf.npy", "0.5");
	put_le(bad, fbits(-1.0f), 4);
	npy("yneg.npy", "<f4", "(4,)", 0, bad, 16);
	tbad("negative float label", "x32.npy", "yneg.npy", FPL_EPARSE, "yneg.npy", "-1");
	memcpy(bad, i8, 32);
	put_le(bad + 8, (uint64_t)-3, 8);
	npy("yneg8.npy", "<i8", "(4,)", 0, bad, 32);
	tbad("negative int label", "x32.npy", "yneg8.npy", FPL_EPARSE, "yneg8.npy", "-3");
	put_le(bad + 8, 65536, 8);
	npy("ybig.npy", "<i8", "(4,)", 0, bad, 32);
	tbad("label too large", "x32.npy", "ybig.npy", FPL_EPARSE, "ybig.npy", "65536");
	put_le(bad, fbits(NAN), 4);
	tf_npy(tf_path("ynan.npy"), 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
	       bad, 4);
	npy("y3.npy", "<i8", "(3,)", 0, i8, 24);
	tbad("shape mismatch", "x32.npy", "y3.npy", FPL_EPARSE, "3 labels", "4 examples");
	npy("y22.npy", "<i8", "(2, 2)", 0, i8, 32);
	tbad("2-D labels", "x32.npy", "y22.npy", FPL_EPARSE, "y22.npy", "1");
	npy("x1d.npy", "<f4", "(12,)", 0, f4, 48);
	tbad("1-D features", "x1d.npy", "y64.npy", FPL_EPARSE, "x1d.npy", "2 or more");
	unsigned char fnan[48];
	memcpy(fnan, f4, 48);
	put_le(fnan + 4 * 7, fbits(NAN), 4);
	npy("xnan.npy", "<f4", "(4, 3)", 0, fnan, 48);
	tbad("NaN feature", "xnan.npy", "y64.npy", FPL_EPARSE, "xnan.npy", "not finite");
	put_le(fnan + 4 * 7, fbits(INFINITY), 4);
	npy("xinf.npy", "<f4", "(4, 3)", 0, fnan, 48);
	tbad("infinite feature", "xinf.npy", "y64.npy", FPL_EPARSE, "xinf.npy", "not finite");
	npy("xtr.npy", "<f4", "(4, 3)", 0, f4, 40);	/* 8 bytes short */
	tbad("truncated features", "xtr.npy", "y64.npy", FPL_EPARSE, "xtr.npy", "bytes");
	npy("ytr.npy", "<i8", "(4,)", 0, i8, 30);	/* 2 bytes short */
	tbad("truncated int labels", "x32.npy", "ytr.npy", FPL_EPARSE, "ytr.npy", "bytes");
	npy("yc.npy", "<c8", "(4,)", 0, i8, 32);
	tbad("complex labels", "x32.npy", "yc.npy", FPL_EUNSUPPORTED, "yc.npy", "c8");
	tbad("nonexistent", "nothere.npy", "y64.npy", FPL_EIO, "nothere.npy", NULL);
	tf_write(tf_path("empty.npy"), "", 0);
	tbad("empty file", "x32.npy", "empty.npy", FPL_EPARSE, "empty.npy", NULL);
	tbad("safetensors missing tensor", "a.safetensors:x", "a.safetensors:zz", FPL_ENOTFOUND,
	     "zz", NULL);
}

/* ------------------------------------------------------------ generated */

static void test_generate(void)
{
	fpl_dataset a, b, c;
	const size_t n = 2000, d = 20;
	const unsigned k = 5;
	CHECK(fpl_dataset_generate(&a, n, d, k, 42) == 0, "generate failed");
	CHECK(fpl_dataset_generate(&b, n, d, k, 42) == 0, "generate failed");
	CHECK(fpl_dataset_generate(&c, n, d, k, 43) == 0, "generate failed");
	CHECK(a.n == n && a.d == d && a.classes == k, "generate: n %zu d %zu classes %u", a.n, a.d,
	      a.classes);
	CHECK(memcmp(a.x, b.x, n * d * sizeof *a.x) == 0 && memcmp(a.y, b.y, n * sizeof *a.y) == 0,
	      "generate: same seed, different data");
	CHECK(memcmp(a.x, c.x, n * d * sizeof *a.x) != 0, "generate: seeds 42 and 43 agree");
	size_t out = 0, lab = 0, ends = 0;
	for (size_t i = 0; i < n * d; i++) {
		out += !(a.x[i] >= 0.0f && a.x[i] <= 1.0f);
		ends += a.x[i] == 0.0f || a.x[i] == 1.0f;
	}
	for (size_t i = 0; i < n; i++)
		lab += a.y[i] != (int32_t)(i % k);
	CHECK(out == 0, "generate: %zu features outside [0, 1]", out);
	CHECK(lab == 0, "generate: %zu labels are not i %% classes", lab);
	CHECK(ends < n * d / 100, "generate: %zu features clamped", ends);
	/* a prefix of a longer set is the shorter set */
	fpl_dataset p;
	CHECK(fpl_dataset_generate(&p, 7, d, k, 42) == 0 &&
	      memcmp(p.x, a.x, 7 * d * sizeof *a.x) == 0, "generate: prefix differs");
	fpl_dataset_free(&p);

	/* nearest class mean, fitted on the first half, tested on the second */
	double mean[5][20] = { { 0 } };
	size_t cnt[5] = { 0 }, right = 0;
	for (size_t i = 0; i < n / 2; i++) {
		cnt[a.y[i]]++;
		for (size_t j = 0; j < d; j++)
			mean[a.y[i]][j] += a.x[i * d + j];
	}
	for (unsigned c2 = 0; c2 < k; c2++)
		for (size_t j = 0; j < d; j++)
			mean[c2][j] /= (double)cnt[c2];
	for (size_t i = n / 2; i < n; i++) {
		double best = INFINITY;
		unsigned arg = 0;
		for (unsigned c2 = 0; c2 < k; c2++) {
			double s = 0;
			for (size_t j = 0; j < d; j++) {
				double t = a.x[i * d + j] - mean[c2][j];
				s += t * t;
			}
			if (s < best) {
				best = s;
				arg = c2;
			}
		}
		right += (int32_t)arg == a.y[i];
	}
	double acc = (double)right / (double)(n - n / 2);
	h_note("generated set: nearest-class-mean accuracy %.4f", acc);
	CHECK(acc > 0.9, "generate: nearest-class-mean accuracy %.3f", acc);
	fpl_dataset_free(&a);
	fpl_dataset_free(&b);
	fpl_dataset_free(&c);

	fpl_dataset z;
	CHECK(fpl_dataset_generate(&z, 0, 3, 2, 1) == FPL_EINVAL && zeroed(&z), "generate n=0");
	CHECK(fpl_dataset_generate(&z, 3, 0, 2, 1) == FPL_EINVAL && zeroed(&z), "generate d=0");
	CHECK(fpl_dataset_generate(&z, 3, 3, 1, 1) == FPL_EINVAL && zeroed(&z),
	      "generate classes=1");
	CHECK(fpl_dataset_generate(&z, SIZE_MAX / 2, 4, 2, 1) != 0 && zeroed(&z),
	      "generate: overflowing n*d accepted");
	CHECK(fpl_dataset_generate(&z, 3, 2, 10, 1) == 0 && z.classes == 10 && z.y[2] == 2,
	      "generate n < classes");
	fpl_dataset_free(&z);
}

/* Every proper prefix of valid files is refused cleanly (no crash, no
 * out-of-bounds read under the sanitizers, a zeroed data set). */
static void test_prefixes(void)
{
	unsigned char im[512], lb[512], full[512];
	const uint32_t di[3] = { 5, 3, 2 }, dl[1] = { 5 };
	size_t imn = idx_image(im, 8, 3, di, img5, 30), lbn = idx_image(lb, 8, 1, dl, lab5, 5);
	char err[1024];
	fpl_dataset ds;
	size_t bad = 0;
	tf_write(tf_path("p-lb"), lb, lbn);
	for (size_t k = 0; k < imn; k++) {
		tf_write(tf_path("p-im"), im, k);
		int rc = fpl_dataset_load_idx(&ds, tf_path("p-im"), tf_path("p-lb"), 0, err,
					      sizeof err);
		bad += rc != FPL_EPARSE || !zeroed(&ds) || !strstr(err, "p-im");
	}
	CHECK(bad == 0, "%zu prefixes of an IDX file not refused cleanly", bad);
	/* integer labels (own reader) and safetensors (integer entry) */
	static const char *names[2] = { "y64.npy", "a.safetensors" };
	for (int f = 0; f < 2; f++) {
		FILE *fp = fopen(tf_path(names[f]), "rb");
		size_t n = fp ? fread(full, 1, sizeof full, fp) : 0;
		if (fp)
			fclose(fp);
		CHECK(n > 0, "cannot read back %s", names[f]);
		bad = 0;
		char px[600], py[600];
		snprintf(px, sizeof px, "%s/%s", tf_tmpdir(), f ? "a.safetensors:x" : "x32.npy");
		snprintf(py, sizeof py, "%s/%s", tf_tmpdir(), f ? "p.safetensors:y" : "p.npy");
		for (size_t k = 0; k < n; k++) {
			tf_write(tf_path(f ? "p.safetensors" : "p.npy"), full, k);
			int rc = fpl_dataset_load_tensors(&ds, px, py, 0, err, sizeof err);
			bad += rc >= 0 || !zeroed(&ds) || !strstr(err, f ? "p.safetensors" : "p.npy");
		}
		CHECK(bad == 0, "%zu prefixes of %s not refused cleanly", bad, names[f]);
	}
}

int main(void)
{
	(void)tf_npy_f32;
	h_init("tdataset");
	test_idx_good();
	test_idx_bad();
	test_fashion_missing();
	test_fashion();
	test_tensors();
	test_prefixes();
	test_generate();
	return h_done();
}

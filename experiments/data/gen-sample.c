/* SPDX-License-Identifier: MIT */
/*
 * gen-sample.c - make the sample gradient dump shipped in
 * experiments/data (run ./make-sample.sh, which builds and runs this).
 *
 * Synthetic per-layer activation-gradient tensors of a small convnet, as
 * in the mixed-precision seeds: |g| is log-normal per layer, layers far
 * from the loss have smaller gradients (most of conv1 lies below fp16's
 * 2^-24), fc1 has 5% exact zeros (dead ReLUs), and the head layer next
 * to the loss has gradients up to about 2^6, so a large loss scale makes
 * it overflow fp16 while the lower layers still underflow.  For each value:
 * exponent e = floor(mu + sigma * n) with n ~ N(0,1) approximated by the
 * Irwin-Hall sum of 12 uniforms (integer arithmetic, exact in binary64),
 * a uniform 23-bit significand and a uniform sign; the binary32 value is
 * assembled from its bits.  No libm call, a fixed splitmix64 seed and a
 * fixed zip timestamp: the files are bit-for-bit reproducible.
 *
 * Writes sample-grads.npz (deflated, one .npy member per tensor),
 * sample-grads.safetensors (F32, same tensors, same order) and
 * sample-conv1.npy (the first tensor alone).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

static uint64_t rng = 0x5eed2026f91ab123ull;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static const struct layer {
	const char *name;
	int ndim;
	unsigned shape[4];
	double mu, sigma, zeros;
} L[] = {
	{ "conv1.weight.grad", 4, { 16, 3, 3, 3 }, -27, 3.0, 0 },
	{ "conv2.weight.grad", 4, { 32, 16, 3, 3 }, -24, 3.0, 0 },
	{ "conv3.weight.grad", 4, { 32, 32, 3, 3 }, -21, 2.5, 0 },
	{ "fc1.weight.grad", 2, { 64, 128 }, -18, 3.0, 0.05 },
	{ "fc1.bias.grad", 1, { 64 }, -14, 2.0, 0 },
	{ "fc2.weight.grad", 2, { 10, 64 }, -12, 2.5, 0 },
	{ "fc2.bias.grad", 1, { 10 }, -8, 1.5, 0 },
	{ "head.weight.grad", 2, { 10, 100 }, 0, 2.5, 0 },
};
#define NL (sizeof L / sizeof L[0])

static size_t count_of(const struct layer *l)
{
	size_t n = 1;
	for (int i = 0; i < l->ndim; i++)
		n *= l->shape[i];
	return n;
}

static float value(const struct layer *l)
{
	if (l->zeros > 0 && (double)(next() >> 11) * 0x1p-53 < l->zeros)
		return 0.0f;
	uint64_t s = 0;
	for (int i = 0; i < 12; i++)
		s += next() >> 32;
	double n = ((double)s - 6 * 0x1p32) * 0x1p-32;	/* ~N(0,1), exact */
	int e = (int)floor(l->mu + l->sigma * n);
	if (e < -126)
		e = -126;	/* keep to binary32 normals */
	if (e > 127)
		e = 127;
	uint32_t bits = (uint32_t)(next() >> 63) << 31 | (uint32_t)(e + 127) << 23 |
			(uint32_t)(next() >> 41);
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

/* An .npy image ('<f4', C order) of n floats. */
static unsigned char *npy(const struct layer *l, const float *x, size_t *len)
{
	char dict[160], dims[80] = "";
	for (int i = 0; i < l->ndim; i++)
		sprintf(dims + strlen(dims), "%u,%s", l->shape[i], i + 1 < l->ndim ? " " : "");
	if (l->ndim > 1)	/* numpy writes (16, 3, 3, 3) */
		dims[strlen(dims) - 1] = 0;
	int dl = snprintf(dict, sizeof dict,
			  "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", dims);
	size_t hl = (size_t)dl + 1;
	hl += (64 - (10 + hl) % 64) % 64;
	size_t n = count_of(l);
	*len = 10 + hl + 4 * n;
	unsigned char *b = malloc(*len);
	memcpy(b, "\x93NUMPY\x01\x00", 8);
	b[8] = (unsigned char)(hl & 0xff);
	b[9] = (unsigned char)(hl >> 8);
	memcpy(b + 10, dict, (size_t)dl);
	memset(b + 10 + dl, ' ', hl - (size_t)dl - 1);
	b[10 + hl - 1] = '\n';
	memcpy(b + 10 + hl, x, 4 * n);	/* little-endian host (x86-64) */
	return b;
}

static void die(const char *what)
{
	fprintf(stderr, "gen-sample: %s\n", what);
	exit(1);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	char path[1024];
	float *x[NL];
	for (size_t i = 0; i < NL; i++) {
		size_t n = count_of(&L[i]);
		x[i] = malloc(n * sizeof(float));
		for (size_t j = 0; j < n; j++)
			x[i][j] = value(&L[i]);
	}

	/* .npz, deflated, fixed timestamps */
	snprintf(path, sizeof path, "%s/sample-grads.npz", dir);
	remove(path);
	int err;
	zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
	if (!z)
		die("cannot create the .npz");
	unsigned char *img[NL];
	for (size_t i = 0; i < NL; i++) {
		size_t len;
		char mname[128];
		img[i] = npy(&L[i], x[i], &len);
		snprintf(mname, sizeof mname, "%s.npy", L[i].name);
		zip_source_t *s = zip_source_buffer(z, img[i], len, 0);
		zip_int64_t idx = s ? zip_file_add(z, mname, s, ZIP_FL_OVERWRITE) : -1;
		if (idx < 0 || zip_set_file_compression(z, (zip_uint64_t)idx, ZIP_CM_DEFLATE, 9) < 0 ||
		    zip_file_set_mtime(z, (zip_uint64_t)idx, 1767225600, 0) < 0)	/* 2026-01-01 */
			die(zip_strerror(z));
		if (i == 0) {
			snprintf(path, sizeof path, "%s/sample-conv1.npy", dir);
			FILE *fp = fopen(path, "wb");
			if (!fp || fwrite(img[0], 1, len, fp) != len || fclose(fp))
				die("cannot write sample-conv1.npy");
		}
	}
	if (zip_close(z) < 0)
		die("cannot write the .npz");
	for (size_t i = 0; i < NL; i++)
		free(img[i]);

	/* .safetensors: header padded with spaces to a multiple of 8 */
	char *hdr = malloc(8192);
	size_t off = 0, hl = 0;
	hl += (size_t)sprintf(hdr + hl, "{\"__metadata__\":{\"source\":\"fplab experiments/data/gen-sample.c\"}");
	for (size_t i = 0; i < NL; i++) {
		size_t nb = 4 * count_of(&L[i]);
		hl += (size_t)sprintf(hdr + hl, ",\"%s\":{\"dtype\":\"F32\",\"shape\":[", L[i].name);
		for (int d = 0; d < L[i].ndim; d++)
			hl += (size_t)sprintf(hdr + hl, "%s%u", d ? "," : "", L[i].shape[d]);
		hl += (size_t)sprintf(hdr + hl, "],\"data_offsets\":[%zu,%zu]}", off, off + nb);
		off += nb;
	}
	hdr[hl++] = '}';
	while (hl % 8)
		hdr[hl++] = ' ';
	snprintf(path, sizeof path, "%s/sample-grads.safetensors", dir);
	FILE *fp = fopen(path, "wb");
	if (!fp)
		die("cannot write the .safetensors");
	unsigned char n8[8];
	for (int i = 0; i < 8; i++)
		n8[i] = (unsigned char)((uint64_t)hl >> (8 * i));
	fwrite(n8, 1, 8, fp);
	fwrite(hdr, 1, hl, fp);
	for (size_t i = 0; i < NL; i++)
		fwrite(x[i], 4, count_of(&L[i]), fp);
	if (fclose(fp))
		die("write error");
	free(hdr);
	for (size_t i = 0; i < NL; i++)
		free(x[i]);
	return 0;
}

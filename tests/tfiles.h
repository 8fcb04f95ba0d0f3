/* SPDX-License-Identifier: MIT */
/*
 * tests/tfiles.h - writing small tensor files by hand for the I/O and
 * histogram tests: .npy with any header text, .npz through libzip (stored
 * or deflated), .safetensors with a JSON header written literally.  These
 * writers are deliberately independent of src/io (the code under test).
 * Header-only (static functions) so each test program includes it alone.
 */
#ifndef FPLAB_TESTS_TFILES_H
#define FPLAB_TESTS_TFILES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>

/* A private temporary directory, removed by tf_cleanup(). */
static char tf_dir[256];

static void tf_cleanup(void)
{
	if (tf_dir[0]) {
		char cmd[300];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tf_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", tf_dir);
	}
}

static const char *tf_tmpdir(void)
{
	if (!tf_dir[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(tf_dir, sizeof tf_dir, "%s/fplab-test-XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(tf_dir)) {
			perror("mkdtemp");
			exit(1);
		}
		atexit(tf_cleanup);
	}
	return tf_dir;
}

/* Path of `name` in the temporary directory (static buffer rotation). */
static const char *tf_path(const char *name)
{
	static char bufs[8][512];
	static int k;
	char *b = bufs[k++ & 7];
	snprintf(b, 512, "%s/%s", tf_tmpdir(), name);
	return b;
}

static void tf_write(const char *path, const void *data, size_t n)
{
	FILE *fp = fopen(path, "wb");
	if (!fp || (n && fwrite(data, 1, n, fp) != n) || fclose(fp) != 0) {
		perror(path);
		exit(1);
	}
}

/*
 * An .npy image in memory: version major (1, 2 or 3), the dict text as
 * given (padded to 64 bytes with spaces and '\n'), then the data bytes.
 * Returns a malloc'd buffer and its size in *len.
 */
static unsigned char *tf_npy_image(int major, const char *dict, const void *data, size_t nbytes,
				   size_t *len)
{
	size_t pre = major == 1 ? 10 : 12, dl = strlen(dict);
	size_t hl = dl + 1;
	hl += (64 - (pre + hl) % 64) % 64;
	*len = pre + hl + nbytes;
	unsigned char *b = malloc(*len);
	memcpy(b, "\x93NUMPY", 6);
	b[6] = (unsigned char)major;
	b[7] = 0;
	if (major == 1) {
		b[8] = (unsigned char)(hl & 0xff);
		b[9] = (unsigned char)(hl >> 8);
	} else {
		for (int i = 0; i < 4; i++)
			b[8 + i] = (unsigned char)(hl >> (8 * i));
	}
	memcpy(b + pre, dict, dl);
	memset(b + pre + dl, ' ', hl - dl - 1);
	b[pre + hl - 1] = '\n';
	if (nbytes)
		memcpy(b + pre + hl, data, nbytes);
	return b;
}

static void tf_npy(const char *path, int major, const char *dict, const void *data, size_t nbytes)
{
	size_t len;
	unsigned char *b = tf_npy_image(major, dict, data, nbytes, &len);
	tf_write(path, b, len);
	free(b);
}

/* A 1-D '<f4' .npy of n floats. */
static void tf_npy_f32(const char *path, const float *x, size_t n)
{
	char dict[128];
	snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu,), }", n);
	tf_npy(path, 1, dict, x, n * 4);
}

struct tf_member {
	const char *name;	/* e.g. "a.npy" */
	const void *data;
	size_t len;
};

/* An .npz (zip) of members, each stored (deflate 0) or deflated (1). */
static void tf_npz(const char *path, const struct tf_member *m, int n, int deflate)
{
	int err;
	unlink(path);
	zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
	if (!z) {
		fprintf(stderr, "zip_open %s: %d\n", path, err);
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		zip_source_t *s = zip_source_buffer(z, m[i].data, m[i].len, 0);
		zip_int64_t idx = s ? zip_file_add(z, m[i].name, s, ZIP_FL_OVERWRITE) : -1;
		if (idx < 0 ||
		    zip_set_file_compression(z, (zip_uint64_t)idx,
					     deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) < 0) {
			fprintf(stderr, "zip add %s: %s\n", m[i].name, zip_strerror(z));
			exit(1);
		}
	}
	if (zip_close(z) < 0) {
		fprintf(stderr, "zip_close %s: %s\n", path, zip_strerror(z));
		exit(1);
	}
}

/* A .safetensors file: header JSON text as given, then the data bytes. */
static void tf_safetensors(const char *path, const char *json, const void *data, size_t nbytes)
{
	size_t jl = strlen(json);
	unsigned char *b = malloc(8 + jl + nbytes + 1);
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)((uint64_t)jl >> (8 * i));
	memcpy(b + 8, json, jl);
	if (nbytes)
		memcpy(b + 8 + jl, data, nbytes);
	tf_write(path, b, 8 + jl + nbytes);
	free(b);
}

#endif

/* SPDX-License-Identifier: MIT */
/*
 * tests/tio.c - the tensor readers (fplab/tensor.h): .npy versions 1-3 in
 * both byte orders and every dtype, bf16/fp8 via the dtype override,
 * .npz stored and deflated, .safetensors with every supported dtype, raw
 * with offset/count/byte order, text; then every bad input of issue 4
 * item 6 (truncated, lying headers, unsupported dtypes, unknown names,
 * empty and all-NaN tensors), each a clear error naming file and tensor,
 * or a tensor that reads normally.  Expected values are written out by
 * hand from the format definitions.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <fplab/fplab.h>

#include "harness.h"
#include "tfiles.h"

#define CHECK(cond, ...)                                 \
	do {                                             \
		if (!h_check(cond))                       \
			h_note("FAIL: " __VA_ARGS__);   \
	} while (0)

/* Read every element of tensor `name` of `path` as binary64. */
static int read_all(const char *path, const fpl_tensor_opts *o, const char *name, double *out,
		    size_t cap, size_t *n, char *err, size_t errlen)
{
	fpl_tensor_file *tf;
	*n = 0;
	int rc = fpl_tensor_open(&tf, path, o, err, errlen);
	if (rc)
		return rc;
	long i = name ? fpl_tensor_find(tf, name) : 0;
	if (i < 0) {
		snprintf(err, errlen, "no tensor '%s'", name);
		fpl_tensor_close(tf);
		return FPL_ENOTFOUND;
	}
	fpl_tensor_stream *s;
	rc = fpl_tensor_stream_open(&s, tf, (size_t)i, err, errlen);
	if (rc == 0) {
		size_t got;
		do {
			size_t c = cap - *n < 3 ? cap - *n : 3;	/* tiny chunks */
			rc = fpl_tensor_stream_read(s, out + *n, c, &got, err, errlen);
			*n += got;
		} while (rc == 0 && got && *n < cap);
		fpl_tensor_stream_close(s);
	}
	fpl_tensor_close(tf);
	return rc;
}

static void expect_values(const char *what, const double *got, size_t n, const double *want,
			  size_t wn)
{
	CHECK(n == wn, "%s: %zu values, expected %zu", what, n, wn);
	for (size_t i = 0; i < n && i < wn; i++) {
		int ok = isnan(want[i]) ? isnan(got[i]) : h_same(got[i], want[i]);
		CHECK(ok, "%s: value %zu is %a, expected %a", what, i, got[i], want[i]);
	}
}

/* Expect an error whose message contains every one of the fragments. */
static void expect_error(const char *what, int rc, const char *err, const char *f1,
			 const char *f2)
{
	CHECK(rc < 0, "%s: expected an error, got success", what);
	if (rc < 0) {
		CHECK(strstr(err, f1) != NULL, "%s: message '%s' lacks '%s'", what, err, f1);
		if (f2)
			CHECK(strstr(err, f2) != NULL, "%s: message '%s' lacks '%s'", what, err, f2);
	}
}

static const double vals[5] = { 1.0, -2.5, 0x1p-20, 65504.0, -0.0 };

static void put_be(unsigned char *p, uint64_t v, int size)
{
	for (int i = 0; i < size; i++)
		p[i] = (unsigned char)(v >> (8 * (size - 1 - i)));
}
static void put_le(unsigned char *p, uint64_t v, int size)
{
	for (int i = 0; i < size; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void test_npy(void)
{
	char err[512];
	double got[64];
	size_t n;
	/* f8 little-endian v1, f8 big-endian v2, f4 big-endian v3 */
	unsigned char le8[40], be8[40], be4[20], le2[10];
	/* binary16 codes of vals: 1 = 0x3c00, -2.5 = 0xc100, 2^-20 = 0x0010
	 * (subnormal 16 * 2^-24), 65504 = 0x7bff, -0 = 0x8000 */
	static const uint16_t h16[5] = { 0x3c00, 0xc100, 0x0010, 0x7bff, 0x8000 };
	/* binary32 bits: 1 = 0x3f800000, -2.5 = 0xc0200000, 2^-20 = 0x35800000,
	 * 65504 = 0x477fe000, -0 = 0x80000000 */
	static const uint32_t b32[5] = { 0x3f800000, 0xc0200000, 0x35800000, 0x477fe000,
					 0x80000000 };
	for (int i = 0; i < 5; i++) {
		uint64_t u = h_bits(vals[i]);
		put_le(le8 + 8 * i, u, 8);
		put_be(be8 + 8 * i, u, 8);
		put_be(be4 + 4 * i, b32[i], 4);
		put_le(le2 + 2 * i, h16[i], 2);
	}
	tf_npy(tf_path("a.npy"), 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }", le8, 40);
	tf_npy(tf_path("b.npy"), 2, "{'descr': '>f8', 'fortran_order': False, 'shape': (5,), }", be8, 40);
	tf_npy(tf_path("c.npy"), 3, "{\"descr\": \">f4\", \"fortran_order\": True, \"shape\": (5, 1)}", be4, 20);
	tf_npy(tf_path("d.npy"), 1, "{'shape': (1, 5), 'fortran_order': False, 'descr': '<f2'}", le2, 10);
	const char *files[4] = { "a.npy", "b.npy", "c.npy", "d.npy" };
	for (int k = 0; k < 4; k++) {
		int rc = read_all(tf_path(files[k]), NULL, NULL, got, 64, &n, err, sizeof err);
		CHECK(rc == 0, "%s: %s", files[k], err);
		expect_values(files[k], got, n, vals, 5);
	}
	/* the info of c.npy */
	fpl_tensor_file *tf;
	if (fpl_tensor_open(&tf, tf_path("c.npy"), NULL, err, sizeof err) == 0) {
		const fpl_tensor_info *in = fpl_tensor_get(tf, 0);
		CHECK(in->dtype == FPL_DT_F32 && in->big_endian && in->ndim == 2 && in->shape[0] == 5 &&
		      in->shape[1] == 1 && in->count == 5 && strcmp(in->name, "c") == 0,
		      "c.npy info: %s %d %d %llu", in->name, in->dtype, in->ndim,
		      (unsigned long long)in->count);
		fpl_tensor_close(tf);
	}
	/* the f32 reader gives the same values */
	float gf[8];
	if (fpl_tensor_open(&tf, tf_path("c.npy"), NULL, err, sizeof err) == 0) {
		fpl_tensor_stream *s;
		size_t got2 = 0;
		if (fpl_tensor_stream_open(&s, tf, 0, err, sizeof err) == 0) {
			fpl_tensor_stream_read_f32(s, gf, 8, &got2, err, sizeof err);
			fpl_tensor_stream_close(s);
		}
		CHECK(got2 == 5 && gf[1] == -2.5f && gf[2] == 0x1p-20f && signbit(gf[4]),
		      "c.npy as f32");
		fpl_tensor_close(tf);
	}

	/* bf16 as <u2 with the override: 0x3f80 = 1, 0xc020 = -2.5,
	 * 0x3580 = 2^-20, 0x7f80 = inf, 0x0001 = 2^-133 */
	unsigned char bf[10];
	static const uint16_t bfc[5] = { 0x3f80, 0xc020, 0x3580, 0x7f80, 0x0001 };
	const double bfv[5] = { 1, -2.5, 0x1p-20, INFINITY, 0x1p-133 };
	for (int i = 0; i < 5; i++)
		put_le(bf + 2 * i, bfc[i], 2);
	tf_npy(tf_path("bf.npy"), 1, "{'descr': '<u2', 'fortran_order': False, 'shape': (5,), }", bf, 10);
	tf_npy(tf_path("bfv.npy"), 1, "{'descr': '<V2', 'fortran_order': False, 'shape': (5,), }", bf, 10);
	fpl_tensor_opts o = { 0 };
	int rc = read_all(tf_path("bf.npy"), &o, NULL, got, 64, &n, err, sizeof err);
	expect_error("<u2 without --dtype", rc, err, "bf.npy", "--dtype bf16");
	o.dtype = FPL_DT_BF16;
	rc = read_all(tf_path("bf.npy"), &o, NULL, got, 64, &n, err, sizeof err);
	CHECK(rc == 0, "bf.npy: %s", err);
	expect_values("bf16 <u2", got, n, bfv, 5);
	rc = read_all(tf_path("bfv.npy"), &o, NULL, got, 64, &n, err, sizeof err);
	CHECK(rc == 0, "bfv.npy: %s", err);
	expect_values("bf16 <V2", got, n, bfv, 5);

	/* fp8 as |u1: e4m3fn 0x38 = 1, 0xb8 = -1, 0x7e = 448, 0x7f = NaN,
	 * 0x01 = 2^-9, 0x08 = 2^-6; e5m2 0x3c = 1, 0x7b = 57344, 0x7c = inf,
	 * 0x01 = 2^-16, 0xfe = NaN, 0x04 = 2^-14 */
	unsigned char e4[6] = { 0x38, 0xb8, 0x7e, 0x7f, 0x01, 0x08 };
	unsigned char e5[6] = { 0x3c, 0x7b, 0x7c, 0x01, 0xfe, 0x04 };
	const double e4v[6] = { 1, -1, 448, NAN, 0x1p-9, 0x1p-6 };
	const double e5v[6] = { 1, 57344, INFINITY, 0x1p-16, NAN, 0x1p-14 };
	tf_npy(tf_path("e4.npy"), 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (6,), }", e4, 6);
	tf_npy(tf_path("e5.npy"), 1, "{'descr': '|V1', 'fortran_order': False, 'shape': (6,), }", e5, 6);
	o.dtype = FPL_DT_E4M3FN;
	rc = read_all(tf_path("e4.npy"), &o, NULL, got, 64, &n, err, sizeof err);
	CHECK(rc == 0, "e4.npy: %s", err);
	expect_values("e4m3fn", got, n, e4v, 6);
	o.dtype = FPL_DT_E5M2;
	rc = read_all(tf_path("e5.npy"), &o, NULL, got, 64, &n, err, sizeof err);
	CHECK(rc == 0, "e5.npy: %s", err);
	expect_values("e5m2", got, n, e5v, 6);

	/* a scalar: shape () */
	tf_npy(tf_path("scalar.npy"), 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", le8, 8);
	rc = read_all(tf_path("scalar.npy"), NULL, NULL, got, 64, &n, err, sizeof err);
	CHECK(rc == 0 && n == 1 && got[0] == 1.0, "scalar.npy: %s", err);
}

static void test_npz_safetensors(void)
{
	char err[512];
	double got[64];
	size_t n, l1, l2;
	unsigned char le8[40];
	for (int i = 0; i < 5; i++)
		put_le(le8 + 8 * i, h_bits(vals[i]), 8);
	unsigned char *a = tf_npy_image(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }", le8, 40, &l1);
	unsigned char *b = tf_npy_image(2, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", le8, 16, &l2);
	struct tf_member m[2] = { { "layer1/grad.npy", a, l1 }, { "b.npy", b, l2 } };
	for (int deflate = 0; deflate < 2; deflate++) {
		const char *p = tf_path(deflate ? "d.npz" : "s.npz");
		tf_npz(p, m, 2, deflate);
		fpl_tensor_file *tf;
		int rc = fpl_tensor_open(&tf, p, NULL, err, sizeof err);
		CHECK(rc == 0, "%s: %s", p, err);
		if (rc)
			continue;
		CHECK(fpl_tensor_count(tf) == 2 && fpl_tensor_find(tf, "layer1/grad") == 0 &&
		      fpl_tensor_find(tf, "b") == 1 && fpl_tensor_find(tf, "c") == -1,
		      "npz listing");
		fpl_tensor_close(tf);
		rc = read_all(p, NULL, "layer1/grad", got, 64, &n, err, sizeof err);
		CHECK(rc == 0, "%s: %s", p, err);
		expect_values(deflate ? "npz deflated" : "npz stored", got, n, vals, 5);
		rc = read_all(p, NULL, "b", got, 64, &n, err, sizeof err);
		expect_values("npz b", got, n, vals, 2);
	}
	free(a);
	free(b);

	/* safetensors with every dtype: F64 (vals), F32 {1,-2.5}, F16 {1,-2.5},
	 * BF16 {1,-2.5}, F8_E4M3 {448, 2^-9}, F8_E5M2 {57344, 2^-16} */
	unsigned char data[40 + 8 + 4 + 4 + 2 + 2];
	size_t o = 0;
	memcpy(data, le8, 40);
	o = 40;
	put_le(data + o, 0x3f800000, 4), put_le(data + o + 4, 0xc0200000, 4), o += 8;
	put_le(data + o, 0x3c00, 2), put_le(data + o + 2, 0xc100, 2), o += 4;
	put_le(data + o, 0x3f80, 2), put_le(data + o + 2, 0xc020, 2), o += 4;
	data[o++] = 0x7e, data[o++] = 0x01;
	data[o++] = 0x7b, data[o++] = 0x01;
	const char *json =
		"{\"f64\":{\"dtype\":\"F64\",\"shape\":[5],\"data_offsets\":[0,40]},"
		"\"f32\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[40,48]},"
		"\"f16\":{\"dtype\":\"F16\",\"shape\":[1,2],\"data_offsets\":[48,52]},"
		"\"bf16\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[52,56]},"
		"\"e4\":{\"dtype\":\"F8_E4M3\",\"shape\":[2],\"data_offsets\":[56,58]},"
		"\"e5\":{\"dtype\":\"F8_E5M2\",\"shape\":[2],\"data_offsets\":[58,60]},"
		"\"__metadata__\":{\"x\":\"y\"}}";
	tf_safetensors(tf_path("m.safetensors"), json, data, o);
	fpl_tensor_file *tf;
	int rc = fpl_tensor_open(&tf, tf_path("m.safetensors"), NULL, err, sizeof err);
	CHECK(rc == 0, "m.safetensors: %s", err);
	if (rc == 0) {
		CHECK(fpl_tensor_count(tf) == 6, "safetensors count %zu", fpl_tensor_count(tf));
		CHECK(strcmp(fpl_tensor_get(tf, 0)->name, "f64") == 0 &&
		      strcmp(fpl_tensor_get(tf, 5)->name, "e5") == 0, "safetensors keeps header order");
		fpl_tensor_close(tf);
	}
	const double two[2] = { 1, -2.5 }, e4v[2] = { 448, 0x1p-9 }, e5v[2] = { 57344, 0x1p-16 };
	rc = read_all(tf_path("m.safetensors"), NULL, "f64", got, 64, &n, err, sizeof err);
	expect_values("st f64", got, n, vals, 5);
	const char *names[3] = { "f32", "f16", "bf16" };
	for (int k = 0; k < 3; k++) {
		rc = read_all(tf_path("m.safetensors"), NULL, names[k], got, 64, &n, err, sizeof err);
		CHECK(rc == 0, "st %s: %s", names[k], err);
		expect_values(names[k], got, n, two, 2);
	}
	rc = read_all(tf_path("m.safetensors"), NULL, "e4", got, 64, &n, err, sizeof err);
	expect_values("st e4m3", got, n, e4v, 2);
	rc = read_all(tf_path("m.safetensors"), NULL, "e5", got, 64, &n, err, sizeof err);
	expect_values("st e5m2", got, n, e5v, 2);
}

static void test_raw_text(void)
{
	char err[512];
	double got[64];
	size_t n;
	unsigned char buf[4 + 20];
	memset(buf, 0xAA, 4);	/* 4 bytes of junk to skip */
	static const uint32_t b32[5] = { 0x3f800000, 0xc0200000, 0x35800000, 0x477fe000,
					 0x80000000 };
	for (int i = 0; i < 5; i++)
		put_be(buf + 4 + 4 * i, b32[i], 4);
	tf_write(tf_path("x.bin"), buf, sizeof buf);
	fpl_tensor_opts o = { .kind = FPL_TK_RAW, .dtype = FPL_DT_F32, .offset = 4, .big_endian = 1 };
	int rc = read_all(tf_path("x.bin"), &o, NULL, got, 64, &n, err, sizeof err);
	CHECK(rc == 0, "raw: %s", err);
	expect_values("raw f32 be offset 4", got, n, vals, 5);
	o.count = 3;
	rc = read_all(tf_path("x.bin"), &o, NULL, got, 64, &n, err, sizeof err);
	expect_values("raw count 3", got, n, vals, 3);
	o.count = 6;
	rc = read_all(tf_path("x.bin"), &o, NULL, got, 64, &n, err, sizeof err);
	expect_error("raw count too large", rc, err, "x.bin", "only 20 bytes follow");
	o.count = 0;
	o.offset = 3;
	rc = read_all(tf_path("x.bin"), &o, NULL, got, 64, &n, err, sizeof err);
	expect_error("raw ragged", rc, err, "x.bin", "not a whole number");
	o.offset = 100;
	rc = read_all(tf_path("x.bin"), &o, NULL, got, 64, &n, err, sizeof err);
	expect_error("raw offset", rc, err, "x.bin", "beyond the end");
	o = (fpl_tensor_opts){ .kind = FPL_TK_RAW };
	rc = read_all(tf_path("x.bin"), &o, NULL, got, 64, &n, err, sizeof err);
	expect_error("raw without dtype", rc, err, "x.bin", "needs a dtype");

	const char *txt = "# comment\n1 -2.5\t0x1p-20 # trailing\n\n65504 -0\n";
	tf_write(tf_path("t.txt"), txt, strlen(txt));
	rc = read_all(tf_path("t.txt"), NULL, NULL, got, 64, &n, err, sizeof err);
	CHECK(rc == 0, "text: %s", err);
	expect_values("text", got, n, vals, 5);
	const char *bad = "1\n2\n3 abc 4\n";
	tf_write(tf_path("bad.txt"), bad, strlen(bad));
	rc = read_all(tf_path("bad.txt"), NULL, NULL, got, 64, &n, err, sizeof err);
	expect_error("text non-number", rc, err, "bad.txt: line 3", "'abc'");
	const char *sp = "inf -inf nan 1e400\n";
	tf_write(tf_path("sp.txt"), sp, strlen(sp));
	rc = read_all(tf_path("sp.txt"), NULL, NULL, got, 64, &n, err, sizeof err);
	const double spv[4] = { INFINITY, -INFINITY, NAN, INFINITY };
	expect_values("text specials", got, n, spv, 4);
}

/* Issue 4 item 6: each bad input a clear error naming file (and tensor). */
static void test_bad(void)
{
	char err[512];
	double got[64];
	size_t n, len;
	float f[4] = { 1, 2, 3, 4 };
	int rc;
	const char *d4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";

	/* truncated data: header says 4 floats, 3 present */
	tf_npy(tf_path("trunc.npy"), 1, d4, f, 12);
	rc = read_all(tf_path("trunc.npy"), NULL, NULL, got, 64, &n, err, sizeof err);
	expect_error("truncated npy", rc, err, "trunc.npy", "header says 4 elements of 4 bytes but 12 bytes follow");
	/* lying header: more bytes than the shape says */
	tf_npy(tf_path("long.npy"), 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f, 16);
	rc = read_all(tf_path("long.npy"), NULL, NULL, got, 64, &n, err, sizeof err);
	expect_error("lying npy", rc, err, "long.npy", "16 bytes follow");
	/* truncated header */
	unsigned char *img = tf_npy_image(1, d4, f, 16, &len);
	tf_write(tf_path("hdr.npy"), img, 30);
	rc = read_all(tf_path("hdr.npy"), NULL, NULL, got, 64, &n, err, sizeof err);
	expect_error("truncated header", rc, err, "hdr.npy", "truncated header");
	tf_write(tf_path("tiny.npy"), img, 5);
	rc = read_all(tf_path("tiny.npy"), NULL, NULL, got, 64, &n, err, sizeof err);
	expect_error("5-byte npy", rc, err, "tiny.npy", "truncated");
	/* bad magic */
	img[1] = 'X';
	tf_write(tf_path("magic.npy"), img, len);
	rc = read_all(tf_path("magic.npy"), NULL, NULL, got, 64, &n, err, sizeof err);
	expect_error("bad magic", rc, err, "magic.npy", "not an .npy");
	free(img);
	/* unsupported dtypes and versions */
	tf_npy(tf_path("int.npy"), 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", f, 16);
	rc = read_all(tf_path("int.npy"), NULL, NULL, got, 64, &n, err, sizeof err);
	expect_error("int npy", rc, err, "int.npy", "unsupported dtype '<i4'");
	tf_npy(tf_path("rec.npy"), 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }", f, 16);
	rc = read_all(tf_path("rec.npy"), NULL, NULL, got, 64, &n, err, sizeof err);
	expect_error("structured npy", rc, err, "rec.npy", "structured");
	img = tf_npy_image(1, d4, f, 16, &len);
	img[6] = 9;
	tf_write(tf_path("v9.npy"), img, len);
	free(img);
	rc = read_all(tf_path("v9.npy"), NULL, NULL, got, 64, &n, err, sizeof err);
	expect_error("version 9", rc, err, "v9.npy", "version 9");
	tf_npy(tf_path("garb.npy"), 1, "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (4,), }", f, 16);
	rc = read_all(tf_path("garb.npy"), NULL, NULL, got, 64, &n, err, sizeof err);
	expect_error("garbage header", rc, err, "garb.npy", "malformed header");
	tf_npy(tf_path("huge.npy"), 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }", f, 16);
	rc = read_all(tf_path("huge.npy"), NULL, NULL, got, 64, &n, err, sizeof err);
	expect_error("overflowing shape", rc, err, "huge.npy", "too large");

	/* empty tensor: reads fine, zero elements */
	tf_npy(tf_path("empty.npy"), 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", f, 0);
	rc = read_all(tf_path("empty.npy"), NULL, NULL, got, 64, &n, err, sizeof err);
	CHECK(rc == 0 && n == 0, "empty.npy: rc %d n %zu %s", rc, n, err);
	/* all-NaN tensor: reads fine */
	float nanv[3] = { NAN, NAN, NAN };
	tf_npy_f32(tf_path("nan.npy"), nanv, 3);
	rc = read_all(tf_path("nan.npy"), NULL, NULL, got, 64, &n, err, sizeof err);
	CHECK(rc == 0 && n == 3 && isnan(got[0]) && isnan(got[2]), "nan.npy");

	/* missing file, directory */
	rc = read_all(tf_path("nope.npy"), NULL, NULL, got, 64, &n, err, sizeof err);
	expect_error("missing file", rc, err, "nope.npy", "cannot open");
	rc = read_all(tf_tmpdir(), NULL, NULL, got, 64, &n, err, sizeof err);
	expect_error("directory", rc, err, "directory", NULL);

	/* npz: unknown tensor name; a member that is not .npy; a truncated archive;
	 * a member with a lying header; an unsupported member dtype */
	size_t l1;
	unsigned char *a = tf_npy_image(1, d4, f, 16, &l1);
	unsigned char *bad = tf_npy_image(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", f, 16, &len);
	unsigned char *intm = tf_npy_image(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", f, 16, &len);
	struct tf_member m1[2] = { { "a.npy", a, l1 }, { "readme.txt", "hi", 2 } };
	tf_npz(tf_path("txt.npz"), m1, 2, 0);
	rc = read_all(tf_path("txt.npz"), NULL, "a", got, 64, &n, err, sizeof err);
	expect_error("npz non-npy member", rc, err, "txt.npz", "readme.txt");
	struct tf_member m2[2] = { { "a.npy", a, l1 }, { "lie.npy", bad, len } };
	tf_npz(tf_path("lie.npz"), m2, 2, 1);
	rc = read_all(tf_path("lie.npz"), NULL, "a", got, 64, &n, err, sizeof err);
	expect_error("npz lying member", rc, err, "lie.npz: tensor 'lie'", "header says 5 elements");
	struct tf_member m3[2] = { { "a.npy", a, l1 }, { "steps.npy", intm, len } };
	tf_npz(tf_path("int.npz"), m3, 2, 1);
	rc = read_all(tf_path("int.npz"), NULL, "a", got, 64, &n, err, sizeof err);
	CHECK(rc == 0 && n == 4, "int.npz: other tensors still readable: %s", err);
	rc = read_all(tf_path("int.npz"), NULL, "steps", got, 64, &n, err, sizeof err);
	expect_error("npz int member", rc, err, "int.npz: tensor 'steps'", "unsupported dtype '<i8'");
	rc = read_all(tf_path("int.npz"), NULL, "zzz", got, 64, &n, err, sizeof err);
	expect_error("unknown tensor", rc, err, "zzz", NULL);
	/* truncated zip: cut the stored archive in half */
	struct tf_member m4[1] = { { "a.npy", a, l1 } };
	tf_npz(tf_path("cut.npz"), m4, 1, 0);
	FILE *fp = fopen(tf_path("cut.npz"), "rb");
	unsigned char zbuf[4096];
	size_t zl = fread(zbuf, 1, sizeof zbuf, fp);
	fclose(fp);
	tf_write(tf_path("cut.npz"), zbuf, zl / 2);
	rc = read_all(tf_path("cut.npz"), NULL, "a", got, 64, &n, err, sizeof err);
	expect_error("truncated npz", rc, err, "cut.npz", NULL);
	/* deflated member with corrupted data: the CRC or inflate catches it */
	unsigned char big[4096];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (unsigned char)(i * 7);
	unsigned char *bigm = tf_npy_image(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1024,), }", big, 4096, &len);
	struct tf_member m5[1] = { { "big.npy", bigm, len } };
	tf_npz(tf_path("crc.npz"), m5, 1, 0);
	fp = fopen(tf_path("crc.npz"), "rb");
	static unsigned char cbuf[8192];
	size_t cl = fread(cbuf, 1, sizeof cbuf, fp);
	fclose(fp);
	cbuf[30 + 7 + 64 + 2000] ^= 0x55;	/* a data byte of the stored member */
	tf_write(tf_path("crc.npz"), cbuf, cl);
	rc = read_all(tf_path("crc.npz"), NULL, "big", got, 64, &n, err, sizeof err);
	double *all = malloc(2048 * sizeof *all);
	rc = read_all(tf_path("crc.npz"), NULL, "big", all, 2048, &n, err, sizeof err);
	expect_error("npz CRC", rc, err, "crc.npz: tensor 'big'", NULL);
	free(all);
	free(a);
	free(bad);
	free(intm);
	free(bigm);

	/* safetensors: offsets beyond the data; shape x dtype != bytes; header
	 * size beyond the file; bad JSON; unsupported dtype (listed, refused
	 * when read); duplicate names */
	tf_safetensors(tf_path("off.safetensors"),
		       "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", f, 12);
	rc = read_all(tf_path("off.safetensors"), NULL, "a", got, 64, &n, err, sizeof err);
	expect_error("st offsets", rc, err, "off.safetensors: tensor 'a'", "beyond");
	tf_safetensors(tf_path("lie.safetensors"),
		       "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,16]}}", f, 16);
	rc = read_all(tf_path("lie.safetensors"), NULL, "a", got, 64, &n, err, sizeof err);
	expect_error("st lying shape", rc, err, "lie.safetensors: tensor 'a'", "header says 3 elements");
	unsigned char hb[16] = { 0xff, 0xff, 0, 0, 0, 0, 0, 0, '{', '}' };
	tf_write(tf_path("hsize.safetensors"), hb, 10);
	rc = read_all(tf_path("hsize.safetensors"), NULL, NULL, got, 64, &n, err, sizeof err);
	expect_error("st header size", rc, err, "hsize.safetensors", "exceeds the file");
	tf_safetensors(tf_path("json.safetensors"), "{\"a\":{\"dtype\":", f, 16);
	rc = read_all(tf_path("json.safetensors"), NULL, NULL, got, 64, &n, err, sizeof err);
	expect_error("st bad json", rc, err, "json.safetensors", "bad JSON");
	tf_safetensors(tf_path("dup.safetensors"),
		       "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
		       "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", f, 8);
	rc = read_all(tf_path("dup.safetensors"), NULL, "a", got, 64, &n, err, sizeof err);
	expect_error("st duplicate", rc, err, "dup.safetensors", "bad JSON");
	tf_safetensors(tf_path("i64.safetensors"),
		       "{\"step\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]},"
		       "\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", f, 16);
	rc = read_all(tf_path("i64.safetensors"), NULL, "w", got, 64, &n, err, sizeof err);
	CHECK(rc == 0 && n == 2 && got[0] == 3, "i64.safetensors w: %s", err);
	rc = read_all(tf_path("i64.safetensors"), NULL, "step", got, 64, &n, err, sizeof err);
	expect_error("st I64", rc, err, "i64.safetensors: tensor 'step'", "unsupported dtype 'I64'");
	tf_safetensors(tf_path("empty.safetensors"),
		       "{\"e\":{\"dtype\":\"BF16\",\"shape\":[0, 7],\"data_offsets\":[0,0]}}", f, 0);
	rc = read_all(tf_path("empty.safetensors"), NULL, "e", got, 64, &n, err, sizeof err);
	CHECK(rc == 0 && n == 0, "empty safetensors tensor: %s", err);
}

/* The header writer: our reader accepts it, shape and values round-trip. */
static void test_write(void)
{
	const char *p = tf_path("w.npy");
	FILE *fp = fopen(p, "wb");
	uint64_t shape[2] = { 2, 3 };
	int rc = fpl_npy_write_header_shape(fp, FPL_DT_F64, 2, shape);
	double v[6] = { 1, 2, 3, 4, 5, -0.0 };
	fwrite(v, 8, 6, fp);
	fclose(fp);
	CHECK(rc == 0, "write header");
	FILE *r = fopen(p, "rb");
	unsigned char hd[10];
	size_t got = fread(hd, 1, 10, r);
	fclose(r);
	size_t total = 10 + (size_t)(hd[8] | hd[9] << 8);
	CHECK(got == 10 && total % 64 == 0, "header length %zu is not a multiple of 64", total);
	double back[8];
	size_t n;
	char err[256];
	rc = read_all(p, NULL, NULL, back, 8, &n, err, sizeof err);
	expect_values("written npy", back, n, v, 6);
	fp = fopen(p, "wb");
	CHECK(fpl_npy_write_header(fp, FPL_DT_E4M3FN, 3) == FPL_EINVAL, "fp8 not writable");
	fclose(fp);
}

int main(void)
{
	h_init("tio");
	test_npy();
	test_npz_safetensors();
	test_raw_text();
	test_bad();
	test_write();
	return h_done();
}

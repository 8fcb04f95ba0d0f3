/* SPDX-License-Identifier: MIT */
/*
 * tests/tio.c - the tensor readers (fplab/tensor.h): .npy versions 1-3 in
 * both byte orders and every dtype, bf16/fp8 via the dtype override,
 * .npz stored and deflated, .safetensors with every supported dtype, raw
 * with offset/count/byte order, text; then every bad input of issue 4
 * item 6 (truncated, lying headers, unsupported dtypes, unknown names,
 * empty and all-NaN tensors), each a clear error naming file and tensor,
 * or a tensor that reads normally; issue 9 point 6: .safetensors tensors
 * that overlap, leave gaps or trailing bytes, the dtype override of raw
 * codes ('<u2', '|V1', ...) in .npy and .npz, and options that do not
 * apply to the input.  Expected values are written out by hand from the
 * format definitions.
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
	tf_npy(tf_path("cplx.npy"), 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", f, 16);
	rc = read_all(tf_path("cplx.npy"), NULL, NULL, got, 64, &n, err, sizeof err);
	expect_error("complex npy", rc, err, "cplx.npy", "unsupported dtype '<c8'");
	{	/* a bool .npy is listed with its shape (train's integer reader reads it),
		 * refused when streamed */
		fpl_tensor_file *tf;
		tf_npy(tf_path("bool.npy"), 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }", f, 4);
		rc = fpl_tensor_open(&tf, tf_path("bool.npy"), NULL, err, sizeof err);
		CHECK(rc == 0, "bool npy: open refused: %s", err);
		if (rc == 0) {
			const fpl_tensor_info *ti = fpl_tensor_get(tf, 0);
			CHECK(fpl_tensor_count(tf) == 1 && ti && ti->ndim == 1 && ti->shape[0] == 4
			      && ti->dtype == FPL_DT_UNKNOWN, "bool npy: listed as %zu tensors",
			      fpl_tensor_count(tf));
			fpl_tensor_close(tf);
		}
		rc = read_all(tf_path("bool.npy"), NULL, NULL, got, 64, &n, err, sizeof err);
		expect_error("bool npy", rc, err, "bool.npy", "unsupported dtype '|b1'");
	}
	/* a file name with control characters is escaped in messages */
	{
		char bad[4200];	/* a real ESC byte in the name on disk */
		snprintf(bad, sizeof bad, "%s", tf_path("e\x1b[31m.npy"));
		tf_npy(bad, 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", f, 16);
		rc = read_all(bad, NULL, NULL, got, 64, &n, err, sizeof err);
		expect_error("escaped name", rc, err, "e\\x1b[31m.npy", "unsupported dtype");
		CHECK(!strchr(err, 0x1b), "escaped name: raw ESC in '%s'", err);
	}
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
	{	/* an integer member is read: the bytes of f as two int64 */
		int64_t iv[2];
		memcpy(iv, f, 16);
		CHECK(rc == 0 && n == 2 && got[0] == (double)iv[0] && got[1] == (double)iv[1],
		      "npz int member: rc %d n %zu: %s", rc, n, err);
	}
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
	{	/* an I64 tensor is read: the first 8 bytes of f */
		int64_t iv;
		memcpy(&iv, f, 8);
		CHECK(rc == 0 && n == 1 && got[0] == (double)iv, "st I64: rc %d n %zu: %s", rc, n, err);
	}
	tf_safetensors(tf_path("empty.safetensors"),
		       "{\"e\":{\"dtype\":\"BF16\",\"shape\":[0, 7],\"data_offsets\":[0,0]}}", f, 0);
	rc = read_all(tf_path("empty.safetensors"), NULL, "e", got, 64, &n, err, sizeof err);
	CHECK(rc == 0 && n == 0, "empty safetensors tensor: %s", err);
}

/* Issue 9 point 6: .safetensors tensors must tile the data section as the
 * format's reference implementation requires (sorted by offsets: begin at
 * 0, each where the previous ends, the last at the end of the file). */
static void test_tiling(void)
{
	char err[512];
	double got[64];
	size_t n;
	int rc;
	float f[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	const char *p;

	p = tf_path("overlap.safetensors");
	tf_safetensors(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
			  "\"b\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[8,24]}}", f, 24);
	rc = read_all(p, NULL, "a", got, 64, &n, err, sizeof err);
	expect_error("st overlap", rc, err, "overlap.safetensors: tensor 'b': data_offsets [8, 24] "
		     "overlap tensor 'a' [0, 16]", NULL);
	p = tf_path("same.safetensors");	/* two names for the same bytes */
	tf_safetensors(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
			  "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", f, 8);
	rc = read_all(p, NULL, "a", got, 64, &n, err, sizeof err);
	expect_error("st aliased", rc, err, "same.safetensors: tensor 'b'", "overlap tensor 'a' [0, 8]");
	p = tf_path("gap0.safetensors");
	tf_safetensors(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", f, 16);
	rc = read_all(p, NULL, "a", got, 64, &n, err, sizeof err);
	expect_error("st gap before the first", rc, err,
		     "gap0.safetensors: data_offsets leave a gap of 8 bytes before tensor 'a'", NULL);
	p = tf_path("gap.safetensors");	/* header order is not offset order */
	tf_safetensors(p, "{\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[16,24]},"
			  "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", f, 24);
	rc = read_all(p, NULL, "a", got, 64, &n, err, sizeof err);
	expect_error("st gap between", rc, err,
		     "gap.safetensors: data_offsets leave a gap of 8 bytes before tensor 'b'", NULL);
	p = tf_path("trail.safetensors");
	tf_safetensors(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", f, 28);
	rc = read_all(p, NULL, "a", got, 64, &n, err, sizeof err);
	expect_error("st trailing bytes", rc, err, "trail.safetensors: 12 bytes after the last tensor",
		     NULL);
	p = tf_path("none.safetensors");
	tf_safetensors(p, "{\"__metadata__\":{}}", f, 4);
	rc = read_all(p, NULL, NULL, got, 64, &n, err, sizeof err);
	expect_error("st data without tensors", rc, err, "none.safetensors: 4 data bytes but no tensors",
		     NULL);
	/* a tensor of a dtype fplab does not read still counts in the tiling */
	p = tf_path("i8gap.safetensors");
	tf_safetensors(p, "{\"s\":{\"dtype\":\"I8\",\"shape\":[4],\"data_offsets\":[0,4]},"
			  "\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", f, 12);
	rc = read_all(p, NULL, "w", got, 64, &n, err, sizeof err);
	expect_error("st gap after an I8 tensor", rc, err, "gap of 4 bytes before tensor 'w'", NULL);
	/* a zero-size tensor inside another one */
	p = tf_path("zin.safetensors");
	tf_safetensors(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
			  "\"z\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,8]}}", f, 16);
	rc = read_all(p, NULL, "a", got, 64, &n, err, sizeof err);
	expect_error("st zero-size inside", rc, err, "tensor 'z': data_offsets [8, 8] overlap tensor 'a'",
		     NULL);
	/* names in messages are escaped */
	p = tf_path("esc.safetensors");
	tf_safetensors(p, "{\"a\\nb\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", f, 12);
	rc = read_all(p, NULL, NULL, got, 64, &n, err, sizeof err);
	expect_error("st escaped name", rc, err, "before tensor 'a\\nb'", NULL);
	CHECK(rc >= 0 || !strchr(err, '\n'), "st escaped name: raw newline in '%s'", err);

	/* valid: zero-size tensors at the start, between and at the end, in
	 * any header order, and an I8 tensor in the tiling */
	p = tf_path("zero.safetensors");
	tf_safetensors(p, "{\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]},"
			  "\"z0\":{\"dtype\":\"BF16\",\"shape\":[0],\"data_offsets\":[0,0]},"
			  "\"z1\":{\"dtype\":\"F32\",\"shape\":[3,0],\"data_offsets\":[8,8]},"
			  "\"s\":{\"dtype\":\"I8\",\"shape\":[4],\"data_offsets\":[16,20]},"
			  "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
			  "\"z2\":{\"dtype\":\"F16\",\"shape\":[0],\"data_offsets\":[20,20]}}", f, 20);
	fpl_tensor_file *tf;
	rc = fpl_tensor_open(&tf, p, NULL, err, sizeof err);
	CHECK(rc == 0, "zero.safetensors: %s", err);
	if (rc == 0) {
		CHECK(fpl_tensor_count(tf) == 6 && strcmp(fpl_tensor_get(tf, 0)->name, "b") == 0 &&
		      strcmp(fpl_tensor_get(tf, 5)->name, "z2") == 0, "zero.safetensors listing");
		fpl_tensor_close(tf);
	}
	const double bv[2] = { 3, 4 };
	rc = read_all(p, NULL, "b", got, 64, &n, err, sizeof err);
	CHECK(rc == 0, "zero.safetensors b: %s", err);
	expect_values("tiled b", got, n, bv, 2);
	rc = read_all(p, NULL, "z1", got, 64, &n, err, sizeof err);
	CHECK(rc == 0 && n == 0, "zero.safetensors z1: %s", err);
}

/* Issue 9 point 6: what raw codes of '<u2', '|V2', '|u1', '|V1' hold. */
/* Read tensor 0 of path (opts o) in one read of up to cap binary64 (or
 * binary32 into fo), keeping the inexact list. */
static int read_once(const char *path, const fpl_tensor_opts *o, double *d, float *fo, size_t cap,
		     size_t *got, fpl_inexact *inx, size_t *ninx, char *err, size_t errlen)
{
	fpl_tensor_file *tf;
	fpl_tensor_stream *s;
	int rc = fpl_tensor_open(&tf, path, o, err, errlen);
	*got = *ninx = 0;
	if (rc)
		return rc;
	rc = fpl_tensor_stream_open(&s, tf, 0, err, errlen);
	if (rc == 0) {
		rc = d ? fpl_tensor_stream_read(s, d, cap, got, err, errlen)
		       : fpl_tensor_stream_read_f32(s, fo, cap, got, err, errlen);
		size_t n;
		const fpl_inexact *v = fpl_tensor_stream_inexact(s, &n);
		for (size_t i = 0; i < n && i < 8; i++)
			inx[i] = v[i];
		*ninx = n;
		fpl_tensor_stream_close(s);
	}
	fpl_tensor_close(tf);
	return rc;
}

/* Integer tensors (issue 23 item 8): every integer exactly, an integer
 * binary64 cannot hold listed as itself.  Expected values by hand: a
 * tie between binary64 neighbours goes to the even significand. */
static void test_ints(void)
{
	char err[512];
	double got[16];
	float gf[8];
	fpl_inexact inx[8];
	size_t n, ni;
	int rc;
	fpl_tensor_opts o;
	unsigned char b[64];

	/* int32, both byte orders: -5 0 7 INT32_MIN */
	const int32_t i4[4] = { -5, 0, 7, INT32_MIN };
	const double i4v[4] = { -5, 0, 7, -2147483648.0 };
	for (int k = 0; k < 4; k++)
		put_le(b + 4 * k, (uint32_t)i4[k], 4);
	tf_npy(tf_path("i4.npy"), 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", b, 16);
	rc = read_once(tf_path("i4.npy"), NULL, got, NULL, 16, &n, inx, &ni, err, sizeof err);
	CHECK(rc == 0 && ni == 0, "<i4: rc %d ninx %zu: %s", rc, ni, err);
	expect_values("<i4", got, n, i4v, 4);
	for (int k = 0; k < 4; k++)
		put_be(b + 4 * k, (uint32_t)i4[k], 4);
	tf_npy(tf_path("i4be.npy"), 1, "{'descr': '>i4', 'fortran_order': False, 'shape': (4,), }", b, 16);
	rc = read_once(tf_path("i4be.npy"), NULL, got, NULL, 16, &n, inx, &ni, err, sizeof err);
	CHECK(rc == 0, ">i4: %s", err);
	expect_values(">i4", got, n, i4v, 4);
	/* int8 and int16 extremes, uint32 max */
	b[0] = 0x80, b[1] = 0x7f;
	tf_npy(tf_path("i1.npy"), 1, "{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }", b, 2);
	rc = read_once(tf_path("i1.npy"), NULL, got, NULL, 16, &n, inx, &ni, err, sizeof err);
	CHECK(rc == 0 && n == 2 && got[0] == -128 && got[1] == 127, "|i1: %s", err);
	put_le(b, 0x8000, 2), put_le(b + 2, 1, 2), put_le(b + 4, 0xffffffffu, 4);
	tf_npy(tf_path("i2.npy"), 1, "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }", b, 4);
	rc = read_once(tf_path("i2.npy"), NULL, got, NULL, 16, &n, inx, &ni, err, sizeof err);
	CHECK(rc == 0 && n == 2 && got[0] == -32768 && got[1] == 1, "<i2: %s", err);
	tf_npy(tf_path("u4.npy"), 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (1,), }", b + 4, 4);
	rc = read_once(tf_path("u4.npy"), NULL, got, NULL, 16, &n, inx, &ni, err, sizeof err);
	CHECK(rc == 0 && n == 1 && got[0] == 4294967295.0, "<u4: %s", err);

	/* int64 beyond 2^53: 2^53+1 and -(2^53+1) tie to 2^53 (even), 2^53 and
	 * INT64_MIN = -2^63 are exact, INT64_MAX = 2^63-1 rounds to 2^63 */
	const uint64_t p53 = (uint64_t)1 << 53;
	const uint64_t i8[5] = { p53 + 1, -(p53 + 1), p53, (uint64_t)1 << 63, ((uint64_t)1 << 63) - 1 };
	const double i8v[5] = { 0x1p53, -0x1p53, 0x1p53, -0x1p63, 0x1p63 };
	for (int k = 0; k < 5; k++)
		put_le(b + 8 * k, i8[k], 8);
	tf_npy(tf_path("i8.npy"), 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }", b, 40);
	rc = read_once(tf_path("i8.npy"), NULL, got, NULL, 16, &n, inx, &ni, err, sizeof err);
	CHECK(rc == 0, "<i8: %s", err);
	expect_values("<i8 nearest", got, n, i8v, 5);
	CHECK(ni == 3 && inx[0].pos == 0 && inx[1].pos == 1 && inx[2].pos == 4,
	      "<i8: %zu inexact (want 3 at 0, 1, 4)", ni);
	if (ni == 3) {
		CHECK(!inx[0].w.negative && inx[0].w.hi == 0 && inx[0].w.lo == p53 + 1 &&
		      inx[0].w.exp == 0 && !inx[0].w.sticky, "<i8: 2^53+1 not held exactly");
		CHECK(inx[1].w.negative && inx[1].w.lo == p53 + 1, "<i8: -(2^53+1) not held exactly");
		CHECK(!inx[2].w.negative && inx[2].w.lo == ((uint64_t)1 << 63) - 1,
		      "<i8: 2^63-1 not held exactly");
		/* rounded once into binary64 toward +inf: 2^53+2, the integer's own rounding */
		fpl_format f64;
		fpl_state st;
		fpl_format_lookup(&f64, "fp64");
		fpl_state_init(&st, 0);
		CHECK(fpl_round_wide(&f64, &inx[0].w, FPL_RND_TP, &st) == 0x1p53 + 2,
		      "<i8: 2^53+1 toward +inf is not 2^53+2");
	}
	/* the same big-endian, and binary32 reads: one rounding from the integer */
	for (int k = 0; k < 5; k++)
		put_be(b + 8 * k, i8[k], 8);
	tf_npy(tf_path("i8be.npy"), 1, "{'descr': '>i8', 'fortran_order': False, 'shape': (5,), }", b, 40);
	rc = read_once(tf_path("i8be.npy"), NULL, got, NULL, 16, &n, inx, &ni, err, sizeof err);
	CHECK(rc == 0 && ni == 3, ">i8: rc %d ninx %zu: %s", rc, ni, err);
	expect_values(">i8 nearest", got, n, i8v, 5);
	rc = read_once(tf_path("i8be.npy"), NULL, NULL, gf, 8, &n, inx, &ni, err, sizeof err);
	CHECK(rc == 0 && n == 5 && gf[0] == 0x1p53f && gf[4] == 0x1p63f && ni == 3, ">i8 f32: %s", err);
	put_le(b, 16777217, 4);	/* 2^24 + 1 ties to 2^24 in binary32 */
	tf_npy(tf_path("i4f.npy"), 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", b, 4);
	rc = read_once(tf_path("i4f.npy"), NULL, NULL, gf, 8, &n, inx, &ni, err, sizeof err);
	CHECK(rc == 0 && n == 1 && gf[0] == 0x1p24f && ni == 0, "<i4 2^24+1 as f32: %g", gf[0]);
	/* uint64: 2^64-1 -> 2^64; 2^53+3 ties to 2^53+4 (even); both listed */
	put_le(b, UINT64_MAX, 8), put_le(b + 8, p53 + 3, 8);
	tf_npy(tf_path("u8.npy"), 1, "{'descr': '<u8', 'fortran_order': False, 'shape': (2,), }", b, 16);
	rc = read_once(tf_path("u8.npy"), NULL, got, NULL, 16, &n, inx, &ni, err, sizeof err);
	CHECK(rc == 0 && n == 2 && got[0] == 0x1p64 && got[1] == 0x1p53 + 4 && ni == 2 &&
	      inx[0].w.lo == UINT64_MAX && inx[1].w.lo == p53 + 3, "<u8: %s", err);

	/* '|u1' and '<u2': integers only when the caller says so */
	memset(&o, 0, sizeof o);
	b[0] = 255, b[1] = 0;
	tf_npy(tf_path("u1i.npy"), 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }", b, 2);
	o.dtype = FPL_DT_U8;
	rc = read_once(tf_path("u1i.npy"), &o, got, NULL, 16, &n, inx, &ni, err, sizeof err);
	CHECK(rc == 0 && n == 2 && got[0] == 255 && got[1] == 0, "|u1 as uint8: %s", err);
	o.dtype = FPL_DT_I8;
	rc = read_once(tf_path("u1i.npy"), &o, got, NULL, 16, &n, inx, &ni, err, sizeof err);
	CHECK(rc == FPL_EINVAL, "|u1 as int8: status %d", rc);
	expect_error("|u1 as int8", rc, err, "--dtype int8 does not apply", "e4m3fn|e5m2|uint8");
	put_le(b, 0xffff, 2);
	tf_npy(tf_path("u2i.npy"), 1, "{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", b, 2);
	o.dtype = FPL_DT_U16;
	rc = read_once(tf_path("u2i.npy"), &o, got, NULL, 16, &n, inx, &ni, err, sizeof err);
	CHECK(rc == 0 && n == 1 && got[0] == 65535, "<u2 as uint16: %s", err);
	o.dtype = FPL_DT_F32;
	rc = read_once(tf_path("i4.npy"), &o, got, NULL, 16, &n, inx, &ni, err, sizeof err);
	expect_error("<i4 with --dtype f32", rc, err, "--dtype f32 does not apply", "'<i4' is int32");
	o.dtype = FPL_DT_I32;
	rc = read_once(tf_path("i4.npy"), &o, got, NULL, 16, &n, inx, &ni, err, sizeof err);
	CHECK(rc == 0 && n == 4, "<i4 with its own dtype: %s", err);
	/* raw input of an integer dtype, big-endian: 0xfffe = -2 */
	b[0] = 0xff, b[1] = 0xfe;
	tf_write(tf_path("i2.bin"), b, 2);
	memset(&o, 0, sizeof o);
	o.kind = FPL_TK_RAW, o.dtype = FPL_DT_I16, o.big_endian = 1;
	rc = read_once(tf_path("i2.bin"), &o, got, NULL, 16, &n, inx, &ni, err, sizeof err);
	CHECK(rc == 0 && n == 1 && got[0] == -2, "raw int16 be: %s", err);
	/* .safetensors U16 and I8 */
	b[0] = 0xff, b[1] = 0xff, b[2] = 0xfb, b[3] = 0x20, b[4] = b[5] = b[6] = b[7] = 0x20;
	tf_safetensors(tf_path("ints.safetensors"),
		       "{\"u\":{\"dtype\":\"U16\",\"shape\":[1],\"data_offsets\":[0,2]},"
		       "\"i\":{\"dtype\":\"I8\",\"shape\":[1],\"data_offsets\":[2,3]}}", b, 3);
	rc = read_all(tf_path("ints.safetensors"), NULL, "u", got, 16, &n, err, sizeof err);
	CHECK(rc == 0 && n == 1 && got[0] == 65535, "st U16: %s", err);
	rc = read_all(tf_path("ints.safetensors"), NULL, "i", got, 16, &n, err, sizeof err);
	CHECK(rc == 0 && n == 1 && got[0] == -5, "st I8: %s", err);
	/* names */
	fpl_dtype t;
	CHECK(fpl_dtype_parse("uint8", &t) == 0 && t == FPL_DT_U8, "parse uint8");
	CHECK(fpl_dtype_parse("u8", &t) != 0, "'u8' (uint64 in numpy, U8 in safetensors) parsed");
	CHECK(!strcmp(fpl_dtype_name(FPL_DT_I64), "int64") && fpl_dtype_size(FPL_DT_U16) == 2 &&
	      fpl_dtype_is_int(FPL_DT_U64) && !fpl_dtype_is_int(FPL_DT_F64), "int dtype names");
}

static void test_override(void)
{
	char err[512];
	double got[64];
	size_t n, l1, l2;
	int rc;
	fpl_tensor_opts o = { 0 };
	/* bf16 0x3f80 = 1, 0xc020 = -2.5; f16 0x3c00 = 1, 0xc100 = -2.5 */
	unsigned char bfle[4], bfbe[4], h16[4], e4[2] = { 0x38, 0xc4 };
	put_le(bfle, 0x3f80, 2), put_le(bfle + 2, 0xc020, 2);
	put_be(bfbe, 0x3f80, 2), put_be(bfbe + 2, 0xc020, 2);
	put_le(h16, 0x3c00, 2), put_le(h16 + 2, 0xc100, 2);
	const double two[2] = { 1, -2.5 }, e4v[2] = { 1, -3 };	/* e4m3fn 0xc4 = -1.5 * 2 */
	const char *u2 = "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }";

	tf_npy(tf_path("u2.npy"), 1, u2, bfle, 4);
	rc = read_all(tf_path("u2.npy"), &o, NULL, got, 64, &n, err, sizeof err);
	expect_error("<u2 without dtype", rc, err,
		     "u2.npy: dtype '<u2' holds raw codes of a type numpy lacks or uint16 integers; "
		     "say which with --dtype bf16|f16|uint16", NULL);
	tf_npy(tf_path("be.npy"), 1, "{'descr': '>u2', 'fortran_order': False, 'shape': (2,), }", bfbe, 4);
	o.dtype = FPL_DT_BF16;
	rc = read_all(tf_path("be.npy"), &o, NULL, got, 64, &n, err, sizeof err);
	CHECK(rc == 0, "be.npy: %s", err);
	expect_values("bf16 >u2", got, n, two, 2);
	tf_npy(tf_path("h.npy"), 1, "{'descr': '|V2', 'fortran_order': False, 'shape': (2,), }", h16, 4);
	o.dtype = FPL_DT_F16;
	rc = read_all(tf_path("h.npy"), &o, NULL, got, 64, &n, err, sizeof err);
	CHECK(rc == 0, "h.npy: %s", err);
	expect_values("f16 |V2", got, n, two, 2);
	o.dtype = FPL_DT_E4M3FN;
	rc = read_all(tf_path("u2.npy"), &o, NULL, got, 64, &n, err, sizeof err);
	CHECK(rc == FPL_EINVAL, "width mismatch: status %d", rc);
	expect_error("width mismatch 1 vs 2", rc, err,
		     "u2.npy: --dtype e4m3fn is 1 byte but the file's '<u2' is 2", NULL);
	tf_npy(tf_path("u1.npy"), 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }", e4, 2);
	rc = read_all(tf_path("u1.npy"), &o, NULL, got, 64, &n, err, sizeof err);
	CHECK(rc == 0, "u1.npy: %s", err);
	expect_values("e4m3fn |u1", got, n, e4v, 2);
	o.dtype = FPL_DT_BF16;
	rc = read_all(tf_path("u1.npy"), &o, NULL, got, 64, &n, err, sizeof err);
	expect_error("width mismatch 2 vs 1", rc, err,
		     "u1.npy: --dtype bf16 is 2 bytes but the file's '|u1' is 1", NULL);
	o.dtype = FPL_DT_UNKNOWN;
	rc = read_all(tf_path("u1.npy"), &o, NULL, got, 64, &n, err, sizeof err);
	expect_error("|u1 without dtype", rc, err, "u1.npy: dtype '|u1' holds raw codes",
		     "--dtype e4m3fn|e5m2|uint8");
	/* a float .npy: its own dtype is the only one that applies */
	float f[2] = { 1, -2.5f };
	tf_npy_f32(tf_path("f4.npy"), f, 2);
	o.dtype = FPL_DT_BF16;
	rc = read_all(tf_path("f4.npy"), &o, NULL, got, 64, &n, err, sizeof err);
	CHECK(rc == FPL_EINVAL, "f4.npy with bf16: status %d", rc);
	expect_error("float npy with another dtype", rc, err, "f4.npy: --dtype bf16 does not apply",
		     "'<f4' is f32");
	o.dtype = FPL_DT_F32;
	rc = read_all(tf_path("f4.npy"), &o, NULL, got, 64, &n, err, sizeof err);
	CHECK(rc == 0, "f4.npy with f32: %s", err);
	expect_values("f4 with its own dtype", got, n, two, 2);

	/* .npz: raw-code members take the override, float members keep theirs */
	unsigned char *a = tf_npy_image(1, u2, bfle, 4, &l1);
	unsigned char *b = tf_npy_image(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
					f, 8, &l2);
	struct tf_member m[2] = { { "codes.npy", a, l1 }, { "w.npy", b, l2 } };
	tf_npz(tf_path("mix.npz"), m, 2, 1);
	o.dtype = FPL_DT_BF16;
	rc = read_all(tf_path("mix.npz"), &o, "codes", got, 64, &n, err, sizeof err);
	CHECK(rc == 0, "mix.npz codes: %s", err);
	expect_values("npz bf16 <u2", got, n, two, 2);
	rc = read_all(tf_path("mix.npz"), &o, "w", got, 64, &n, err, sizeof err);
	CHECK(rc == 0, "mix.npz w: %s", err);
	expect_values("npz f4 beside an override", got, n, two, 2);
	o.dtype = FPL_DT_UNKNOWN;
	rc = read_all(tf_path("mix.npz"), &o, "w", got, 64, &n, err, sizeof err);
	CHECK(rc == 0 && n == 2, "mix.npz w without dtype: %s", err);
	rc = read_all(tf_path("mix.npz"), &o, "codes", got, 64, &n, err, sizeof err);
	expect_error("npz <u2 without dtype", rc, err, "mix.npz: tensor 'codes'",
		     "holds raw codes of a type numpy lacks or uint16 integers; say which with "
		     "--dtype bf16|f16|uint16");
	o.dtype = FPL_DT_E5M2;
	rc = read_all(tf_path("mix.npz"), &o, "w", got, 64, &n, err, sizeof err);
	expect_error("npz width mismatch", rc, err, "mix.npz: tensor 'codes'",
		     "--dtype e5m2 is 1 byte but the file's '<u2' is 2");
	struct tf_member mf[1] = { { "w.npy", b, l2 } };
	tf_npz(tf_path("f.npz"), mf, 1, 0);
	o.dtype = FPL_DT_BF16;
	rc = read_all(tf_path("f.npz"), &o, "w", got, 64, &n, err, sizeof err);
	expect_error("npz without raw codes", rc, err, "f.npz: --dtype bf16 does not apply", NULL);
	free(a);
	free(b);
}

/* Issue 9 point 6: options that do not apply to the input are errors. */
static void test_opts(void)
{
	char err[512];
	double got[64];
	size_t n;
	int rc;
	float f[2] = { 1, 2 };
	tf_npy_f32(tf_path("o.npy"), f, 2);
	fpl_tensor_opts o = { .offset = 8 };
	rc = read_all(tf_path("o.npy"), &o, NULL, got, 64, &n, err, sizeof err);
	CHECK(rc == FPL_EINVAL, "npy --offset: status %d", rc);
	expect_error("npy offset", rc, err, "o.npy: --offset applies to raw input only", NULL);
	size_t len;
	unsigned char *img = tf_npy_image(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
					  f, 8, &len);
	struct tf_member m[1] = { { "x.npy", img, len } };
	tf_npz(tf_path("o.npz"), m, 1, 0);
	free(img);
	o = (fpl_tensor_opts){ .count = 1 };
	rc = read_all(tf_path("o.npz"), &o, NULL, got, 64, &n, err, sizeof err);
	expect_error("npz count", rc, err, "o.npz: --count applies to raw input only", NULL);
	tf_safetensors(tf_path("o.safetensors"),
		       "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", f, 8);
	o = (fpl_tensor_opts){ .big_endian = 1 };
	rc = read_all(tf_path("o.safetensors"), &o, NULL, got, 64, &n, err, sizeof err);
	expect_error("st big-endian", rc, err, "o.safetensors: --big-endian applies to raw input only",
		     NULL);
	o = (fpl_tensor_opts){ .dtype = FPL_DT_F32 };
	rc = read_all(tf_path("o.safetensors"), &o, NULL, got, 64, &n, err, sizeof err);
	CHECK(rc == FPL_EINVAL, "safetensors dtype: status %d", rc);
	expect_error("st dtype", rc, err, "o.safetensors: --dtype does not apply", NULL);
	tf_write(tf_path("o.txt"), "1 2\n", 4);
	o = (fpl_tensor_opts){ .offset = 1 };
	rc = read_all(tf_path("o.txt"), &o, NULL, got, 64, &n, err, sizeof err);
	expect_error("text offset", rc, err, "o.txt: --offset applies to raw input only", NULL);
	o = (fpl_tensor_opts){ .dtype = FPL_DT_BF16 };
	rc = read_all(tf_path("o.txt"), &o, NULL, got, 64, &n, err, sizeof err);
	expect_error("text dtype", rc, err, "o.txt: --dtype bf16 does not apply to text input", NULL);
	o = (fpl_tensor_opts){ .dtype = FPL_DT_TEXT };
	rc = read_all(tf_path("o.txt"), &o, NULL, got, 64, &n, err, sizeof err);
	CHECK(rc == 0 && n == 2, "text with dtype text: %s", err);
	rc = read_all(tf_path("o.npy"), &o, NULL, got, 64, &n, err, sizeof err);
	expect_error("npy dtype text", rc, err, "o.npy: --dtype text applies to text input only", NULL);
	/* raw takes them all (test_raw_text reads with offset, count, byte order) */
	unsigned char raw[12] = { 0xAA, 0xAA, 0xAA, 0xAA };
	put_be(raw + 4, 0xc0200000, 4), put_be(raw + 8, 0x3f800000, 4);
	tf_write(tf_path("o.bin"), raw, sizeof raw);
	o = (fpl_tensor_opts){ .dtype = FPL_DT_F32, .offset = 4, .count = 1, .big_endian = 1 };
	rc = read_all(tf_path("o.bin"), &o, NULL, got, 64, &n, err, sizeof err);
	CHECK(rc == 0 && n == 1 && got[0] == -2.5, "raw with every option: %s", err);
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
	CHECK(fpl_npy_write_header(fp, FPL_DT_TEXT, 3) == FPL_EINVAL, "text not writable");
	fclose(fp);

	/* fortran_order survives the round trip, in the header and the info;
	 * fp8 codes are written as '|u1' and read back with the dtype given */
	fp = fopen(p, "wb");
	rc = fpl_npy_write_header_ex(fp, FPL_DT_F64, 2, shape, 1);
	fwrite(v, 8, 6, fp);
	fclose(fp);
	CHECK(rc == 0, "write fortran header");
	fpl_tensor_file *tf = NULL;
	rc = fpl_tensor_open(&tf, p, NULL, err, sizeof err);
	CHECK(rc == 0, "open fortran npy: %s", err);
	if (!rc) {
		const fpl_tensor_info *in = fpl_tensor_get(tf, 0);
		CHECK(in->fortran_order == 1 && in->ndim == 2 && in->shape[0] == 2 &&
		      in->shape[1] == 3 && in->count == 6, "fortran info: order %d, ndim %d",
		      in->fortran_order, in->ndim);
		fpl_tensor_close(tf);
	}
	rc = read_all(p, NULL, NULL, back, 8, &n, err, sizeof err);
	expect_values("fortran npy in storage order", back, n, v, 6);
	fp = fopen(p, "wb");
	unsigned char codes[3] = { 0x38, 0x7e, 0xb8 };	/* e4m3fn 1, 448, -1 */
	rc = fpl_npy_write_header(fp, FPL_DT_E4M3FN, 3);
	fwrite(codes, 1, 3, fp);
	fclose(fp);
	CHECK(rc == 0, "write fp8 header");
	fpl_tensor_opts o = { .dtype = FPL_DT_E4M3FN };
	double want8[3] = { 1, 448, -1 };
	rc = read_all(p, &o, NULL, back, 8, &n, err, sizeof err);
	CHECK(rc == 0, "read fp8 npy: %s", err);
	expect_values("fp8 npy", back, n, want8, 3);
}

/* The .npz (zip) and .safetensors writers: fplab's own reader, which
 * checks CRC-free layout, tiling and shapes, reads back what they wrote. */
static void test_writers(void)
{
	const char *p = tf_path("w.npz");
	double v[6] = { 1, 2, 3, 4, 5, -0.0 }, back[8];
	float f[2] = { 1.5f, -2.0f };
	uint64_t shape[2] = { 2, 3 }, two = 2;
	fpl_zip_writer *z = NULL;
	fpl_tensor_file *tf = NULL;
	char err[256];
	size_t n;
	int rc;

	FILE *fp = fopen(p, "wb");
	char *mem = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&mem, &len);
	rc = fpl_zip_writer_open(&z, fp);
	CHECK(rc == 0 && m, "zip open");
	fpl_npy_write_header_ex(m, FPL_DT_F64, 2, shape, 1);
	fclose(m);
	rc = fpl_zip_member_begin(z, "x.npy") || fpl_zip_member_write(z, mem, len) ||
	     fpl_zip_member_write(z, v, sizeof v) || fpl_zip_member_end(z);
	free(mem);
	m = open_memstream(&mem, &len);
	fpl_npy_write_header(m, FPL_DT_F32, 2);
	fclose(m);
	rc = rc || fpl_zip_member_begin(z, "y.npy") || fpl_zip_member_write(z, mem, len) ||
	     fpl_zip_member_write(z, f, sizeof f) || fpl_zip_member_end(z);
	free(mem);
	CHECK(rc == 0, "zip members");
	CHECK(fpl_zip_member_end(z) == FPL_EINVAL, "zip end without begin");
	CHECK(fpl_zip_writer_close(z, 1) == 0, "zip close");
	fclose(fp);
	rc = fpl_tensor_open(&tf, p, NULL, err, sizeof err);
	CHECK(rc == 0, "open written npz: %s", err);
	if (!rc) {
		CHECK(fpl_tensor_count(tf) == 2, "npz members: %zu", fpl_tensor_count(tf));
		const fpl_tensor_info *x = fpl_tensor_get(tf, 0), *y = fpl_tensor_get(tf, 1);
		CHECK(!strcmp(x->name, "x") && x->fortran_order && x->ndim == 2 &&
		      x->shape[1] == 3 && !strcmp(y->name, "y") && y->dtype == FPL_DT_F32,
		      "npz member infos");
		fpl_tensor_close(tf);
	}
	rc = read_all(p, NULL, "y", back, 8, &n, err, sizeof err);
	double wanty[2] = { 1.5, -2.0 };
	CHECK(rc == 0, "read npz member y: %s", err);
	expect_values("npz member y", back, n, wanty, 2);

	/* safetensors: two tensors tiling the data, a scalar */
	fpl_tensor_info t[2];
	memset(t, 0, sizeof t);
	strcpy(t[0].name, "w\"q");	/* a name JSON must escape */
	t[0].dtype = FPL_DT_F64, t[0].ndim = 2, t[0].shape[0] = 2, t[0].shape[1] = 3;
	strcpy(t[1].name, "b");
	t[1].dtype = FPL_DT_F32, t[1].ndim = 1, t[1].shape[0] = two;
	p = tf_path("w.safetensors");
	fp = fopen(p, "wb");
	rc = fpl_safetensors_write_header(fp, 2, t);
	fwrite(v, 8, 6, fp);
	fwrite(f, 4, 2, fp);
	fclose(fp);
	CHECK(rc == 0, "safetensors header");
	rc = read_all(p, NULL, "w\"q", back, 8, &n, err, sizeof err);
	CHECK(rc == 0, "read safetensors: %s", err);
	expect_values("safetensors tensor", back, n, v, 6);
	rc = read_all(p, NULL, "b", back, 8, &n, err, sizeof err);
	expect_values("safetensors second tensor", back, n, wanty, 2);
	strcpy(t[1].name, t[0].name);
	fp = fopen(p, "wb");
	CHECK(fpl_safetensors_write_header(fp, 2, t) == FPL_EINVAL, "repeated name refused");
	t[1].dtype = FPL_DT_TEXT;
	strcpy(t[1].name, "c");
	CHECK(fpl_safetensors_write_header(fp, 2, t) == FPL_EINVAL, "text dtype refused");
	fclose(fp);
}

/* Text separators: blanks, tabs and one comma (CSV); an empty field is an
 * error naming the line. */
static void test_csv(void)
{
	static const char good[] = "1,2\n3\t4 , 5\n# c\n-0.5\n";
	static const char bad[] = "1,2\n3,,4\n";
	double back[8], want[6] = { 1, 2, 3, 4, 5, -0.5 };
	size_t n;
	char err[256];
	int rc;

	tf_write(tf_path("c.txt"), good, sizeof good - 1);
	rc = read_all(tf_path("c.txt"), NULL, NULL, back, 8, &n, err, sizeof err);
	CHECK(rc == 0, "csv: %s", err);
	expect_values("csv", back, n, want, 6);
	tf_write(tf_path("b.txt"), bad, sizeof bad - 1);
	rc = read_all(tf_path("b.txt"), NULL, NULL, back, 8, &n, err, sizeof err);
	expect_error("csv empty field", rc, err, "line 2: empty field", NULL);
	tf_write(tf_path("b.txt"), "1,\n", 3);
	rc = read_all(tf_path("b.txt"), NULL, NULL, back, 8, &n, err, sizeof err);
	expect_error("csv trailing comma", rc, err, "line 1: empty field", NULL);
}

int main(void)
{
	h_init("tio");
	test_npy();
	test_npz_safetensors();
	test_raw_text();
	test_bad();
	test_tiling();
	test_override();
	test_ints();
	test_opts();
	test_write();
	test_csv();
	test_writers();
	return h_done();
}

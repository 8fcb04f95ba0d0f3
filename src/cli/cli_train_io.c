/* SPDX-License-Identifier: MIT */
/*
 * cli_train_io.c - the data and the model file of `fplab train`: the
 * --data and --test-data sources (Fashion-MNIST, a generated set, a
 * user's tensor files) loaded through fplab/dataset.h, and -o
 * FILE.safetensors, the final stored weights of each policy.
 *
 * Invariant: a generated test set is the continuation of the generated
 * training set (examples N.. of the same generator and seed, so the same
 * class centres and fresh noise), never a second set from another seed,
 * whose centres would differ; the model file is written through
 * cli_output (a temporary renamed over FILE), so FILE never holds part of
 * a model.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/dataset.h>
#include <fplab/tensor.h>

#include "cli/cli.h"

/* error() with paths and arguments escaped (cli_escaped_msg); -1. */
#define terr(...) cli_escaped_msg(NULL, __VA_ARGS__)

/* generated[:N[:D[:C]]]: 0 with the fields filled, or -2 (message printed). */
static int parse_generated(const char *o, const char *s, size_t *n, size_t *d, unsigned *c)
{
	char buf[128], *f[4], *p;
	size_t nf = 0, i;
	uint64_t v[3] = { CLI_TRAIN_GEN_N, CLI_TRAIN_GEN_D, CLI_TRAIN_GEN_C };
	static const uint64_t max[3] = { (uint64_t)1 << 31, (uint64_t)1 << 20, 65536 };
	static const char *const what[3] = { "N", "D", "C" };

	if (strlen(s) >= sizeof buf)
		return terr("%s '%.40s...': too long", o, s), -2;
	strcpy(buf, s);
	for (p = buf; p && nf < 4; nf++) {
		f[nf] = p;
		p = strchr(p, ':');
		if (p)
			*p++ = 0;
	}
	if (p)
		return terr("%s '%s': expected generated[:N[:D[:C]]]", o, s), -2;
	for (i = 1; i < nf; i++)
		if (cli_parse_u64(f[i], &v[i - 1]) || v[i - 1] < (i == 3 ? 2u : 1u) ||
		    v[i - 1] > max[i - 1])
			return terr("%s '%s': %s '%s' is not a count %d..%llu", o, s, what[i - 1],
				    f[i], i == 3 ? 2 : 1, (unsigned long long)max[i - 1]), -2;
	*n = (size_t)v[0];
	*d = (size_t)v[1];
	*c = (unsigned)v[2];
	return 0;
}

/* Rows [lo, lo + n) of src into a new data set dst.  0 or -1. */
static int slice(fpl_dataset *dst, const fpl_dataset *src, size_t lo, size_t n)
{
	memset(dst, 0, sizeof *dst);
	dst->x = malloc((n * src->d + 1) * sizeof *dst->x);
	dst->y = malloc((n + 1) * sizeof *dst->y);
	if (!dst->x || !dst->y) {
		fpl_dataset_free(dst);
		return terr("out of memory");
	}
	memcpy(dst->x, src->x + lo * src->d, n * src->d * sizeof *dst->x);
	memcpy(dst->y, src->y + lo, n * sizeof *dst->y);
	dst->n = n;
	dst->d = src->d;
	dst->classes = src->classes;
	return 0;
}

/* FEATURES,LABELS (each PATH or PATH:NAME); 0, -1 or -2. */
static int load_files(const char *o, const char *s, fpl_dataset *ds, size_t limit, char *desc,
		      size_t desclen)
{
	char buf[4096], err[512];
	char *comma;
	int rc;

	if (strlen(s) >= sizeof buf)
		return terr("%s: a path too long", o), -2;
	strcpy(buf, s);
	comma = strchr(buf, ',');
	if (!comma || comma == buf || !comma[1] || strchr(comma + 1, ','))
		return terr("%s '%s': expected fashion-mnist, generated[:N[:D[:C]]] or "
			    "FEATURES,LABELS (tensor files: .npy, .npz:NAME, .safetensors:NAME)",
			    o, s), -2;
	*comma = 0;
	rc = fpl_dataset_load_tensors(ds, buf, comma + 1, limit, err, sizeof err);
	if (rc)
		return terr("%s: %s", o, err[0] ? err : fpl_strerror(rc));
	snprintf(desc, desclen, "%s", s);
	return 0;
}

static int load_fashion(const char *o, const char *dir, int test, fpl_dataset *ds, size_t limit)
{
	char err[512];
	int rc = fpl_dataset_fashion_mnist(ds, dir, test, limit, err, sizeof err);

	/* the library's message names the directory or the file missing,
	 * and the package only for the package's directory */
	if (rc == FPL_ENOTFOUND && dir)
		return terr("--data-dir: %s", err[0] ? err : "Fashion-MNIST not found");
	if (rc == FPL_ENOTFOUND)
		return terr("%s; or give --data-dir DIR, or --data generated for a small generated "
			    "set", err[0] ? err : "Fashion-MNIST not found");
	if (rc)
		return terr("%s: %s", o, err[0] ? err : fpl_strerror(rc));
	return 0;
}

int cli_train_load(struct cli_train_data *d, const char *data, const char *data_dir,
		   const char *test_data, size_t train_limit, size_t test_limit, uint64_t seed)
{
	int rc;

	memset(d, 0, sizeof *d);
	if (!data)
		data = "fashion-mnist";
	if (data_dir && strcmp(data, "fashion-mnist") && (!test_data ||
							   strcmp(test_data, "fashion-mnist")))
		return terr("--data-dir applies to Fashion-MNIST, and --data is '%s'", data), -2;
	if (test_data && !strncmp(test_data, "generated", 9))
		return terr("--test-data: a generated test set comes with --data generated "
			    "(its continuation); give --test-limit for its size"), -2;
	if (!strcmp(data, "fashion-mnist")) {
		if ((rc = load_fashion("--data fashion-mnist", data_dir, 0, &d->train, train_limit)))
			return rc;
		snprintf(d->desc, sizeof d->desc, "Fashion-MNIST%s", train_limit ? " (first "
			 "examples)" : "");
		if (!test_data) {
			if ((rc = load_fashion("--data fashion-mnist", data_dir, 1, &d->test,
					       test_limit)))
				return rc;
			d->has_test = 1;
		}
	} else if (!strncmp(data, "generated", 9) && (!data[9] || data[9] == ':')) {
		fpl_dataset all;
		size_t n, dim, m;
		unsigned c;

		if ((rc = parse_generated("--data", data, &n, &dim, &c)))
			return rc;
		if (train_limit && train_limit < n)
			n = train_limit;
		m = test_limit ? test_limit : (n / 4 ? n / 4 : 1);
		if (test_data)
			m = 0;
		rc = fpl_dataset_generate(&all, n + m, dim, c, seed);
		if (rc)
			return terr("--data '%s': %s", data, fpl_strerror(rc));
		rc = slice(&d->train, &all, 0, n);
		if (!rc && m)
			rc = slice(&d->test, &all, n, m);
		d->has_test = m > 0;
		fpl_dataset_free(&all);
		if (rc)
			return rc;
		snprintf(d->desc, sizeof d->desc, "generated set (%zu features, %u classes)", dim,
			 c);
	} else if ((rc = load_files("--data", data, &d->train, train_limit, d->desc,
				    sizeof d->desc))) {
		return rc;
	}
	if (test_data && strcmp(test_data, "none")) {
		if (!strcmp(test_data, "fashion-mnist"))
			rc = load_fashion("--test-data fashion-mnist", data_dir, 1, &d->test,
					  test_limit);
		else
			rc = load_files("--test-data", test_data, &d->test, test_limit, d->test_desc,
					sizeof d->test_desc);
		if (rc)
			return rc;
		d->has_test = 1;
	}
	if (d->has_test && d->test.d != d->train.d)
		return terr("the test set has %zu features per example, the training set %zu",
			    d->test.d, d->train.d), -1;
	return 0;
}

void cli_train_data_release(struct cli_train_data *d)
{
	fpl_dataset_free(&d->train);
	fpl_dataset_free(&d->test);
}

/* ------------------------------------------------------------ the model */
/* Does every value of f fit binary32 (precision, range, subnormals)? */
int cli_train_fits_f32(const fpl_format *f)
{
	return f->m <= 23 && f->emax <= 127 && f->min_subnormal >= 0x1p-149 &&
	       f->min_normal >= 0x1p-126;
}

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
	int i;

	for (i = 0; i < bytes; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* n values of v as little-endian binary32 or binary64 on fp; 0 or -1. */
static int put_values(FILE *fp, const double *v, size_t n, int f32)
{
	unsigned char buf[8 * 512];
	size_t i, k = 0, w = f32 ? 4 : 8;

	for (i = 0; i < n; i++) {
		if (f32) {
			float x = (float)v[i];	/* exact: the value is in binary32 */
			uint32_t b;

			memcpy(&b, &x, 4);
			put_le(buf + k, b, 4);
		} else {
			uint64_t b;

			memcpy(&b, &v[i], 8);
			put_le(buf + k, b, 8);
		}
		k += w;
		if (k == sizeof buf || i + 1 == n) {
			if (fwrite(buf, 1, k, fp) != k)
				return -1;
			k = 0;
		}
	}
	return 0;
}

int cli_train_write_model(struct cli_output *o, const struct cli_train_model *m, size_t nm)
{
	fpl_tensor_info *ti;
	size_t i, l, nt = 0, k = 0;
	int rc = 0;

	for (i = 0; i < nm; i++)
		nt += 2 * (m[i].nsizes - 1);
	ti = calloc(nt ? nt : 1, sizeof *ti);
	if (!ti) {
		cli_output_close(o, 0);
		return terr("out of memory");
	}
	for (i = 0; i < nm; i++)
		for (l = 1; l < m[i].nsizes; l++, k += 2) {
			fpl_tensor_info *w = &ti[k], *b = &ti[k + 1];

			snprintf(w->name, sizeof w->name, "%s%sW%zu", m[i].prefix ? m[i].prefix : "",
				 m[i].prefix ? "/" : "", l);
			snprintf(b->name, sizeof b->name, "%s%sb%zu", m[i].prefix ? m[i].prefix : "",
				 m[i].prefix ? "/" : "", l);
			w->dtype = b->dtype = m[i].f32 ? FPL_DT_F32 : FPL_DT_F64;
			w->ndim = 2;
			w->shape[0] = m[i].sizes[l];
			w->shape[1] = m[i].sizes[l - 1];
			w->count = w->shape[0] * w->shape[1];
			b->ndim = 1;
			b->shape[0] = b->count = m[i].sizes[l];
		}
	rc = fpl_safetensors_write_header(o->fp, nt, ti);
	if (rc == FPL_EINVAL) {
		terr("-o '%s': two tensors with the same name", o->path);
		free(ti);
		cli_output_close(o, 0);
		return -1;
	}
	for (i = 0, k = 0; !rc && i < nm; i++)
		for (l = 1; l < m[i].nsizes && !rc; l++, k += 2)
			if (put_values(o->fp, m[i].w[l - 1], ti[k].count, m[i].f32) ||
			    put_values(o->fp, m[i].b[l - 1], ti[k + 1].count, m[i].f32))
				rc = -1;
	free(ti);
	if (rc) {
		cli_output_error(o);
		cli_output_close(o, 0);
		return -1;
	}
	return cli_output_close(o, 1);
}

/* SPDX-License-Identifier: MIT */
/*
 * cli_accum_input.c - the file inputs of `dot`, `gemm` and `reduce`: whole
 * tensors (-a, -b, -x: .npy, .npz members, .safetensors tensors, text).
 * Generated inputs (--gen) come from util/gen.h.
 *
 * Invariant: a tensor is returned in C (logical) order whatever its
 * storage order.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

/* --------------------------------------------------------- tensor input */
void cli_tensor_release(struct cli_tensor *t)
{
	free(t->v);
	memset(t, 0, sizeof *t);
}

/* Select tensor `name` of r's file (NULL: the only one). */
static int select_tensor(struct cli_reader *r, const char *path, const char *name)
{
	size_t n = fpl_tensor_count(r->tf), i;
	long idx = 0;
	char err[1024], list[512];
	size_t k = 0;
	int rc;

	list[0] = 0;
	for (i = 0; i < n && k < sizeof list - 64; i++)
		k += (size_t)snprintf(list + k, sizeof list - k, "%s'%s'", i ? ", " : "",
				      fpl_tensor_get(r->tf, i)->name);
	if (name) {
		idx = fpl_tensor_find(r->tf, name);
		if (idx < 0)
			return error("'%s' has no tensor '%s'; it holds %s", path, name, list);
	} else if (n > 1) {
		return error("'%s' holds %zu tensors (%s): name one as %s:NAME", path, n, list, path);
	}
	if (idx == 0)
		return 0;
	fpl_tensor_stream_close(r->ts);
	r->ts = NULL;
	r->ti = (size_t)idx;
	err[0] = 0;
	rc = fpl_tensor_stream_open(&r->ts, r->tf, r->ti, err, sizeof err);
	if (rc)
		return error("%s", err[0] ? err : fpl_strerror(rc));
	r->info = fpl_tensor_get(r->tf, r->ti);
	return 0;
}

int cli_tensor_read_member(struct cli_tensor *t, const char *path, const char *name)
{
	char *spec;
	int rc;

	if (!name)
		return cli_tensor_read(t, path);
	spec = malloc(strlen(path) + strlen(name) + 2);
	if (!spec)
		return error("out of memory");
	sprintf(spec, "%s:%s", path, name);
	rc = cli_tensor_read(t, spec);
	free(spec);
	return rc;
}

int cli_tensor_read(struct cli_tensor *t, const char *arg)
{
	struct cli_reader r;
	char *path = strdup(arg), *name = NULL, *colon;
	size_t cap = 1024, got;
	int rc = 0;

	memset(t, 0, sizeof *t);
	if (!path)
		return error("out of memory");
	/* FILE:NAME when FILE exists and FILE:NAME does not */
	colon = strrchr(path, ':');
	if (colon && access(path, F_OK)) {
		*colon = 0;
		if (!access(path, F_OK))
			name = colon + 1;
		else
			*colon = ':';
	}
	if (!strcmp(path, "-")) {
		free(path);
		return error("tensor input needs a file name, not stdin");
	}
	if (cli_reader_open(&r, path, CLI_IN_TEXT, NULL, FPL_DT_UNKNOWN)) {
		free(path);
		return -1;
	}
	if (r.tf) {
		rc = select_tensor(&r, path, name);
		if (!rc) {
			t->ndim = r.info->ndim;
			memcpy(t->shape, r.info->shape, sizeof t->shape);
			cap = r.info->count ? (size_t)r.info->count : 1;
			if (r.info->count > SIZE_MAX / 16)
				rc = error("'%s': tensor too large", arg);
		}
	} else if (name) {
		rc = error("'%s' is a text file: it holds no tensor '%s'", path, name);
	}
	t->v = rc ? NULL : malloc(cap * sizeof *t->v);
	if (!rc && !t->v)
		rc = error("out of memory");
	while (!rc) {
		size_t want = cap - t->n;

		if (r.tf && !want)
			break;
		if (!want) {
			double *v = realloc(t->v, 2 * cap * sizeof *v);

			if (!v) {
				rc = error("out of memory");
				break;
			}
			t->v = v;
			cap *= 2;
			want = cap - t->n;
		}
		rc = cli_reader_read(&r, t->v + t->n, want, &got);
		if (rc || !got)
			break;
		t->n += got;
	}
	if (!rc && r.tf && t->n != r.info->count)
		rc = error("'%s': truncated tensor", arg);
	if (!rc && r.tf && r.info->fortran_order && t->ndim > 1) {
		double *c = malloc(t->n * sizeof *c + 1);

		if (!c) {
			rc = error("out of memory");
		} else {
			cli_fortran_to_c(c, t->v, t->ndim, t->shape);
			free(t->v);
			t->v = c;
		}
	}
	if (!rc && !r.tf) {
		t->ndim = 1;
		t->shape[0] = t->n;
	}
	cli_reader_release(&r);
	free(path);
	if (rc)
		cli_tensor_release(t);
	return rc ? -1 : 0;
}

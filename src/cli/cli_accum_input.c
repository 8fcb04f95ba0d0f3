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
#include "accum/accum_internal.h"	/* fpl__acc_is_value: the load's own test */
#include "train/dataset_internal.h"	/* ds_int_*: integer tensors, shared with train */

/* --------------------------------------------------------- tensor input */
void cli_tensor_release(struct cli_tensor *t)
{
	free(t->v);
	free(t->inx);
	memset(t, 0, sizeof *t);
}

/* Select tensor `name` of r's file (NULL: the only one). */
static int select_tensor(struct cli_reader *r, const char *path, const char *name)
{
	size_t n = fpl_tensor_count(r->tf), i;
	long idx = 0;
	char err[1024], list[512], sp[CLI_WHAT_MAX], sn[FPL_ESCAPED_NAME_MAX];
	size_t k = 0;
	int rc;

	list[0] = 0;
	for (i = 0; i < n && k < sizeof list - 64; i++)
		k += (size_t)snprintf(list + k, sizeof list - k, "%s'%s'", i ? ", " : "",
				      fpl_escape(sn, sizeof sn, fpl_tensor_get(r->tf, i)->name));
	fpl_escape(sp, sizeof sp, path);
	if (name) {
		idx = fpl_tensor_find(r->tf, name);
		if (idx < 0)
			return error("'%s' has no tensor '%s'; it holds %s", sp,
				     fpl_escape(sn, sizeof sn, name), list);
	} else if (n > 1) {
		return error("'%s' holds %zu tensors (%s): name one as %s:NAME", sp, n, list, sp);
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

/* Append the inexact numbers of a read (pos from t->n on) to t. */
static int keep_inexact(struct cli_tensor *t, const struct cli_inexact_list *l)
{
	fpl_inexact *v = realloc(t->inx, (t->ninx + l->n) * sizeof *v);
	size_t i;

	if (!v)
		return error("out of memory");
	t->inx = v;
	for (i = 0; i < l->n; i++) {
		v[t->ninx] = l->v[i];
		v[t->ninx++].pos += t->n;
	}
	return 0;
}

/* path:name (or path when name is NULL) read by `read`. */
static int read_member(struct cli_tensor *t, const char *path, const char *name,
		       int (*read)(struct cli_tensor *, const char *))
{
	char *spec;
	int rc;

	if (!name)
		return read(t, path);
	spec = malloc(strlen(path) + strlen(name) + 2);
	if (!spec)
		return error("out of memory");
	sprintf(spec, "%s:%s", path, name);
	rc = read(t, spec);
	free(spec);
	return rc;
}

int cli_tensor_read_member(struct cli_tensor *t, const char *path, const char *name)
{
	return read_member(t, path, name, cli_tensor_read);
}

int cli_tensor_read_member_exact(struct cli_tensor *t, const char *path, const char *name)
{
	return read_member(t, path, name, cli_tensor_read_exact);
}

static const char *index_of(const struct cli_tensor *t, size_t p, char *buf, size_t cap);

/* C-order index of element p of a column-major tensor of `shape`. */
static size_t fortran_index(size_t p, int ndim, const uint64_t *shape)
{
	size_t c = 0, q = p;
	uint64_t idx[FPL_TENSOR_MAXDIM];
	int d;

	for (d = 0; d < ndim; d++) {
		idx[d] = shape[d] ? q % shape[d] : 0;
		q = shape[d] ? q / shape[d] : 0;
	}
	for (d = 0; d < ndim; d++)
		c = c * (size_t)shape[d] + (size_t)idx[d];
	return c;
}

static int cmp_pos(const void *a, const void *b)
{
	size_t p = ((const fpl_inexact *)a)->pos, q = ((const fpl_inexact *)b)->pos;

	return p < q ? -1 : p > q;
}

/*
 * An integer tensor (.npy, .npz member, .safetensors: numpy's i, u and b
 * kinds), read by the reader `train` uses (ds_int_*), into t: each
 * integer as a binary64 when binary64 holds it, else its nearest binary64
 * and the integer itself in t->inx, rounded once by the load like a
 * decimal of text.  1 when path:name is not such a tensor (nothing
 * printed: the caller reads it as usual), 0 done, -1 failed (message).
 */
/* Is the open integer tensor an .npy or an .npz member (not .safetensors,
 * whose U8 and U16 are integers)? */
static int npy_source(const ds_int_tensor *it)
{
	unsigned char m[6];

	return it->zip || (pread(it->fd, m, sizeof m, 0) == (ssize_t)sizeof m
			   && !memcmp(m, "\x93NUMPY", 6));
}

static int int_tensor_read(struct cli_tensor *t, const char *path, const char *name)
{
	ds_int_tensor it;
	char err[1024];
	size_t cap = 0, i;
	int rc;

	if (!cli_is_tensor_file(path))
		return 1;
	if (ds_int_open(&it, path, name, err, sizeof err)) {
		ds_int_close(&it);	/* opened at most partly: close is safe */
		return 1;
	}
	if (it.kind == 'u' && it.width <= 2 && npy_source(&it)) {
		/* '|u1' and '<u2' hold uint8/uint16 or raw codes of a type numpy
		 * lacks (fp8, bf16: ml_dtypes): the one rule of every command,
		 * and these have no --dtype to say which */
		rc = error("'%s': dtype '%cu%d' holds raw codes of a type numpy lacks (%s) or "
			   "uint%d integers, and this command cannot be told which: save it with "
			   "a float dtype or a wider integer one", it.where,
			   it.width == 1 ? '|' : it.big_endian ? '>' : '<', it.width,
			   it.width == 1 ? "e4m3fn, e5m2" : "bf16, f16", 8 * it.width);
		ds_int_close(&it);
		return rc;
	}
	if (it.count > SIZE_MAX / 16) {
		ds_int_close(&it);
		return error("'%s': tensor too large", it.where);
	}
	t->ndim = it.ndim;
	memcpy(t->shape, it.shape, sizeof t->shape);
	t->n = (size_t)it.count;
	t->dtype = FPL_DT_UNKNOWN;	/* binary64 out */
	t->int_src = 1;
	t->v = malloc((t->n + 1) * sizeof *t->v);
	if (!t->v) {
		ds_int_close(&it);
		return error("out of memory");
	}
	err[0] = 0;
	rc = ds_int_read_exact(&it, t->v, t->n, &t->inx, &t->ninx, &cap, err, sizeof err);
	ds_int_close(&it);
	if (rc)
		return error("%s", err[0] ? err : fpl_strerror(rc));
	if (it.fortran_order && t->ndim > 1) {
		double *c = malloc(t->n * sizeof *c + 1);

		if (!c)
			return error("out of memory");
		cli_fortran_to_c(c, t->v, t->ndim, t->shape);
		free(t->v);
		t->v = c;
		for (i = 0; i < t->ninx; i++)
			t->inx[i].pos = fortran_index(t->inx[i].pos, t->ndim, t->shape);
		qsort(t->inx, t->ninx, sizeof *t->inx, cmp_pos);
	}
	return 0;
}

int cli_tensor_read(struct cli_tensor *t, const char *arg)
{
	char sa[CLI_WHAT_MAX], at[128];
	int rc = cli_tensor_read_exact(t, arg);

	if (rc || !t->ninx)
		return rc;
	/* no exact load behind this caller: an integer binary64 cannot hold
	 * is refused (rounding it here and again in a format would round it
	 * twice); a decimal of text keeps its nearest binary64 */
	if (!t->int_src) {
		free(t->inx);
		t->inx = NULL;
		t->ninx = 0;
		return 0;
	}
	rc = error("'%s': %s = %.17g (nearest binary64) is an integer that binary64 cannot "
		   "hold: this command would round it twice; give it as a float tensor",
		   fpl_escape(sa, sizeof sa, arg), index_of(t, t->inx[0].pos, at, sizeof at),
		   t->v[t->inx[0].pos]);
	cli_tensor_release(t);
	return rc;
}

int cli_tensor_read_exact(struct cli_tensor *t, const char *arg)
{
	struct cli_reader r;
	char *path = strdup(arg), *name = NULL, *colon;
	size_t cap = 1024, got;
	char sa[CLI_WHAT_MAX], sn[FPL_ESCAPED_NAME_MAX];
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
	rc = int_tensor_read(t, path, name);
	if (rc <= 0) {
		free(path);
		if (rc)
			cli_tensor_release(t);
		return rc;
	}
	rc = 0;
	if (cli_reader_open(&r, path, CLI_IN_TEXT, NULL, FPL_DT_UNKNOWN)) {
		free(path);
		return -1;
	}
	if (r.tf) {
		rc = select_tensor(&r, path, name);
		if (!rc) {
			t->ndim = r.info->ndim;
			t->dtype = r.info->dtype;
			memcpy(t->shape, r.info->shape, sizeof t->shape);
			cap = r.info->count ? (size_t)r.info->count : 1;
			if (r.info->count > SIZE_MAX / 16)
				rc = error("'%s': tensor too large", fpl_escape(sa, sizeof sa, arg));
		}
	} else if (name) {
		rc = error("'%s' is a text file: it holds no tensor '%s'",
			   fpl_escape(sa, sizeof sa, path), fpl_escape(sn, sizeof sn, name));
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
		if (r.inexact.n && (rc = keep_inexact(t, &r.inexact)))
			break;
		t->n += got;
	}
	if (!rc && r.tf && t->n != r.info->count)
		rc = error("'%s': truncated tensor", fpl_escape(sa, sizeof sa, arg));
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

/* ------------------------------------------------------------ operands */
const char *cli_what(char *buf, const char *opt, const char *file)
{
	size_t k = (size_t)snprintf(buf, CLI_WHAT_MAX, "%s ", opt);

	if (k < CLI_WHAT_MAX)
		fpl_escape(buf + k, CLI_WHAT_MAX - k, file ? file : "");
	return buf;
}

/* "element 7" (a vector) or "element [1, 2]" (its index in the file). */
static const char *index_of(const struct cli_tensor *t, size_t p, char *buf, size_t cap)
{
	size_t k = 0, q = p;
	uint64_t idx[FPL_TENSOR_MAXDIM];
	int d;

	if (t->ndim <= 1) {
		snprintf(buf, cap, "element %zu", p);
		return buf;
	}
	for (d = t->ndim - 1; d >= 0; d--) {
		idx[d] = t->shape[d] ? q % t->shape[d] : 0;
		q = t->shape[d] ? q / t->shape[d] : 0;
	}
	k = (size_t)snprintf(buf, cap, "element [");
	for (d = 0; d < t->ndim && k < cap; d++)
		k += (size_t)snprintf(buf + k, cap - k, "%s%llu", d ? ", " : "",
				      (unsigned long long)idx[d]);
	if (k < cap)
		snprintf(buf + k, cap - k, "]");
	return buf;
}

/* The logical index (the load's draw offset) of stored element p. */
static uint64_t logical_of(const struct cli_operand *o, size_t p)
{
	size_t rows = o->cols ? o->t->n / o->cols : 0;

	if (!o->trans || !o->cols)
		return p;
	/* stored (r, c) is logical (c, r) of a cols x rows operand */
	return (uint64_t)(p % o->cols) * rows + p / o->cols;
}

int cli_operand_exact(const struct cli_operand *o, const char *why)
{
	char at[128];

	if (!o->t->ninx)
		return 0;
	return error("%s: %s is a number that binary64 cannot hold (nearest %.17g): %s",
		     o->what, index_of(o->t, o->t->inx[0].pos, at, sizeof at),
		     o->t->v[o->t->inx[0].pos], why);
}

int cli_operands_native_exact(const struct cli_tensor *a, const char *afile,
			      const struct cli_tensor *b, const char *bfile)
{
	static const char why[] = "the native kernel takes binary32 values";
	char wa[CLI_WHAT_MAX], wb[CLI_WHAT_MAX];
	struct cli_operand oa = { a, cli_what(wa, "-a", afile), 1, 0, 0, 0 };
	struct cli_operand ob = { b, cli_what(wb, "-b", bfile), 1, 0, 0, 1 };

	return cli_operand_exact(&oa, why) || cli_operand_exact(&ob, why) ? -1 : 0;
}

int cli_operand_load(struct cli_model_job *j, const struct cli_operand *o, double **out)
{
	const fpl_accum_model *m = &j->mod;
	const fpl_format *f = o->b ? &m->b : &m->a;
	const char *spec = o->b ? j->b : j->a;
	fpl_rnd rnd = o->b ? m->b_rnd : m->a_rnd;
	const struct cli_tensor *t = o->t;
	char at[128];
	size_t i, q;

	*out = NULL;
	if (o->b ? m->b_block : m->a_block)	/* quantized from binary64 values */
		return cli_operand_exact(o, "a block format quantizes binary64 values; give "
					 "the input as binary64");
	if ((o->b ? m->b_load : m->a_load) == FPL_LOAD_GIVEN) {
		if (t->ninx)
			return error("%s: %s, a number that binary64 cannot hold (nearest %.17g), "
				     "is not a value of its format (%.*s): inputs taken as given "
				     "(':given', or a profile's) must be; round them with -f FORMAT",
				     o->what, index_of(t, t->inx[0].pos, at, sizeof at),
				     t->v[t->inx[0].pos], (int)strcspn(spec, ":"), spec);
		for (i = 0; i < t->n; i++)
			if (!fpl__acc_is_value(f, t->v[i]))
				return error("%s: %s = %.17g is not a value of its format (%.*s): "
					     "inputs taken as given (':given', or a profile's) must "
					     "be; round them with -f FORMAT", o->what,
					     index_of(t, i, at, sizeof at), t->v[i],
					     (int)strcspn(spec, ":"), spec);
		return 0;
	}
	if (!t->ninx)
		return 0;
	*out = malloc(t->n * sizeof **out);
	if (!*out)
		return error("out of memory");
	memcpy(*out, t->v, t->n * sizeof **out);
	for (i = 0; i < t->ninx; i++) {
		fpl_state s = j->st;

		fpl_state_clear_flags(&s);
		s.flip = FPL_FLIP_NONE;
		s.counter = j->st.counter + o->d0 + logical_of(o, t->inx[i].pos);
		(*out)[t->inx[i].pos] = fpl_round_wide(f, &t->inx[i].w, rnd, &s);
		for (q = 0; q < FPL_NFLAGS; q++)
			if (!(j->st.untracked & (1u << q)))
				j->st.count[q] += s.count[q];
		j->st.flags |= s.flags & ~j->st.untracked;
	}
	return 0;
}

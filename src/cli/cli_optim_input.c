/* SPDX-License-Identifier: MIT */
/*
 * cli_optim_input.c - the weights and gradient streams of `fplab optim`:
 * generated from per-tensor distributions (--sizes, --weights, --grads,
 * --spikes, --seed) or read from tensor files (--init, -g per step,
 * --grad-stack).
 *
 * Invariant: the gradient of tensor j at step s (0-based) is a pure
 * function of (seed, j, s) -- or of the files and s mod their number --
 * never of the thread count, the policies or what was asked before.
 * Streams (util/gen.h adds FPL__GEN_STREAM to each): the initial weights
 * of tensor j use CLI_OPTIM_W_STREAM(j), its gradient at step s
 * CLI_OPTIM_G_STREAM(j, s), and the spike decision of step s is draw s of
 * CLI_OPTIM_SPIKE_STREAM; none meets the streams of allreduce (below 2^45)
 * or of --gen (1, 2).
 *
 * A number of the files that binary64 cannot hold (a decimal such as 0.1
 * or 1e400, an int64 beyond 2^53) is kept exactly beside its buffer and
 * held, for each run, as the run's first rounding of it reads it once
 * (fpl_wide_hold): the weights' into the master (fp32-master, split) or
 * the weight format, a gradient's into `grad` (the backward pass's cast);
 * for a block slot, as into its element format (an amax rule's scale may
 * see the held value: not exact).
 *
 * A file tensor's dims (the first file that gives them) are kept for the
 * block grid of block slots: blocks along the last axis of each row.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

void cli_optim_data_release(struct cli_optim_data *d)
{
	size_t i;

	for (i = 0; i < d->nt; i++)
		free(d->w0 ? d->w0[i] : NULL);
	for (i = 0; i < d->nbufs; i++)
		free(d->bufs[i]);
	for (i = 0; d->winx && i < d->nt; i++)
		free(d->winx[i]);
	for (i = 0; d->ginx && i < d->nfiles * d->nt; i++)
		free(d->ginx[i]);
	free(d->winx);
	free(d->nwinx);
	free(d->ginx);
	free(d->nginx);
	free(d->bufs);
	free(d->w0);
	free(d->sizes);
	free(d->names);
	free(d->wgen);
	free(d->ggen);
	free(d->gp);
	free(d->shapes);
	memset(d, 0, sizeof *d);
}

/* ---------------------------------------------------------- generated */
/* One GEN of option `o` into g; 0 or -2 (message printed). */
static int gen_one(const char *o, const char *s, struct fpl__gen *g)
{
	static const char *const names[] = { "ones", "uniform", "normal", "lognormal", "ints",
					       "loguniform" };
	int rc = fpl__gen_parse(g, s);

	if (rc == -1) {
		char name[64];
		size_t len = strcspn(s, ":");

		snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), s);
		error("%s '%s': unknown generator '%s'%s%s%s", o, s, name,
		      cli_closest(name, names, 6) ? "; did you mean '" : "",
		      cli_closest(name, names, 6) ? cli_closest(name, names, 6) : "",
		      cli_closest(name, names, 6) ? "'?" : "");
	} else if (rc) {
		error("%s '%s': expected %s", o, s, g->kind == FPL__GEN_ONES ? "ones (no parameters)"
		      : g->kind == FPL__GEN_INTS ? "ints:A,B (integers, A <= B)"
		      : g->kind == FPL__GEN_UNIFORM ? "uniform:A,B (A <= B)"
		      : g->kind == FPL__GEN_NORMAL ? "normal:MU,SIGMA (SIGMA >= 0)"
		      : g->kind == FPL__GEN_LOGUNIFORM ? "loguniform:A,B (-1074 <= A <= B <= 1023)"
		      : "lognormal:MU,SIGMA (SIGMA >= 0)");
	}
	return rc ? -2 : 0;
}

/* GEN[;GEN...] of option `o`: one per tensor, or one for all (nt known). */
static int gen_list(const char *o, const char *spec, size_t nt, struct fpl__gen **out)
{
	char *copy = strdup(spec), *p, *semi;
	size_t k = 0, n = 1, i;
	struct fpl__gen *g;
	int rc = 0;

	for (i = 0; spec[i]; i++)
		n += spec[i] == ';';
	if (n != 1 && n != nt) {
		free(copy);
		error("%s '%s': %zu distributions for %zu tensors: give one for all or one per "
		      "tensor", o, spec, n, nt);
		return -2;
	}
	g = calloc(nt > n ? nt : n, sizeof *g);

	if (!copy || !g) {
		free(copy);
		free(g);
		error("out of memory");
		return -1;
	}
	for (p = copy; !rc; p = semi + 1) {
		semi = strchr(p, ';');
		if (semi)
			*semi = 0;
		rc = gen_one(o, p, &g[k++]);
		if (!semi)
			break;
	}
	for (; !rc && k < nt; k++)
		g[k] = g[0];
	free(copy);
	if (rc)
		free(g);
	else
		*out = g;
	return rc;
}

int cli_optim_sizes(struct cli_optim_data *d, const char *spec)
{
	char *copy = strdup(spec), *tok, *save = NULL;
	int rc = 0;

	if (!copy)
		return error("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		uint64_t n;
		size_t *s;

		if (cli_parse_u64(tok, &n) || n < 1 || n > ((uint64_t)1 << 32)) {
			error("--sizes '%s': '%s' is not a tensor size 1..2^32", spec, tok);
			rc = -2;
		} else if (d->nt == CLI_OPTIM_MAX_TENSORS) {
			error("--sizes '%s': more than %d tensors", spec, CLI_OPTIM_MAX_TENSORS);
			rc = -2;
		} else if (!(s = realloc(d->sizes, (d->nt + 1) * sizeof *s))) {
			rc = error("out of memory");
		} else {
			d->sizes = s;
			s[d->nt++] = (size_t)n;
		}
	}
	if (!rc && !d->nt) {
		error("--sizes '%s': no size", spec);
		rc = -2;
	}
	free(copy);
	return rc;
}

int cli_optim_gens(struct cli_optim_data *d, const char *weights, const char *grads)
{
	int rc = 0;

	if (weights)
		rc = gen_list("--weights", weights, d->nt, &d->wgen);
	if (!rc && grads)
		rc = gen_list("--grads", grads, d->nt, &d->ggen);
	return rc;
}

/* Names tensor0.. and the w0 pointer array for d->nt tensors. */
static int alloc_tensors(struct cli_optim_data *d)
{
	size_t j;

	d->names = calloc(d->nt, sizeof *d->names);
	d->w0 = calloc(d->nt, sizeof *d->w0);
	d->winx = calloc(d->nt, sizeof *d->winx);
	d->nwinx = calloc(d->nt, sizeof *d->nwinx);
	if (!d->names || !d->w0 || !d->winx || !d->nwinx)
		return error("out of memory");
	for (j = 0; j < d->nt; j++)
		snprintf(d->names[j], sizeof d->names[j], "tensor%zu", j);
	return 0;
}

int cli_optim_generate_weights(struct cli_optim_data *d, uint64_t seed)
{
	size_t j;

	if (!d->names && alloc_tensors(d))
		return -1;
	d->total = 0;
	for (j = 0; j < d->nt; j++) {
		d->w0[j] = malloc(d->sizes[j] * sizeof *d->w0[j]);
		if (!d->w0[j])
			return error("out of memory for %zu weights", d->sizes[j]);
		fpl__gen_fill(&d->wgen[j], seed, CLI_OPTIM_W_STREAM(j), d->w0[j], d->sizes[j]);
		d->total += d->sizes[j];
	}
	d->seed = seed;
	return 0;
}

/* ---------------------------------------------------------- files */
/* Tensor j's dims from a file's shape (ndim dims from shape[skip]): the
 * leading ones merged when there are more than a block grid takes, a
 * scalar one element; kept only when no file gave them before.  0 or -1. */
static int set_shape(struct cli_optim_data *d, size_t j, int ndim, const uint64_t *shape,
		     int skip)
{
	fpl_opt_shape *s;
	size_t p;
	int k, n = ndim - skip, lead;

	if (!d->shapes && !(d->shapes = calloc(d->nt, sizeof *d->shapes)))
		return error("out of memory");
	s = &d->shapes[j];
	if (s->ndims)
		return 0;
	if (n < 1) {
		s->ndims = 1;
		s->dims[0] = d->sizes[j];
		return 0;
	}
	lead = n > FPL_BLOCK_MAX_DIMS ? n - FPL_BLOCK_MAX_DIMS + 1 : 1;
	s->dims[0] = 1;
	for (k = 0; k < lead; k++)
		s->dims[0] *= (size_t)shape[skip + k];
	for (k = lead; k < n; k++)
		s->dims[k - lead + 1] = (size_t)shape[skip + k];
	s->ndims = n - lead + 1;
	for (k = 0, p = 1; k < s->ndims; k++)
		p *= s->dims[k];
	if (p != d->sizes[j]) {	/* not the tensor's: one row */
		s->ndims = 1;
		s->dims[0] = d->sizes[j];
	}
	return 0;
}

/* Keep buffer p (owned by d from now on); 0 or -1 (p freed). */
static int keep(struct cli_optim_data *d, double *p)
{
	double **b = realloc(d->bufs, (d->nbufs + 1) * sizeof *b);

	if (!b) {
		free(p);
		return error("out of memory");
	}
	d->bufs = b;
	b[d->nbufs++] = p;
	return 0;
}

/* The tensors of `path`: count and (when info is not NULL) their infos
 * copied.  A text file is one tensor (*text = 1).  0 or -1. */
static int list_file(const char *what, const char *path, size_t *n, fpl_tensor_info **info,
		     int *text)
{
	fpl_tensor_file *tf;
	char err[1024];
	size_t i;
	int rc;

	*text = !cli_is_tensor_file(path);
	*info = NULL;
	if (*text) {
		*n = 1;
		return 0;
	}
	err[0] = 0;
	rc = fpl_tensor_open(&tf, path, NULL, err, sizeof err);
	if (rc)
		return error("%s: %s", what, err[0] ? err : fpl_strerror(rc));
	*n = fpl_tensor_count(tf);
	if (!*n || *n > CLI_OPTIM_MAX_TENSORS) {
		fpl_tensor_close(tf);
		return error("%s '%s' holds %zu tensors (1..%d needed)", what, path, *n,
			     CLI_OPTIM_MAX_TENSORS);
	}
	*info = malloc(*n * sizeof **info);
	if (!*info) {
		fpl_tensor_close(tf);
		return error("out of memory");
	}
	for (i = 0; i < *n; i++)
		(*info)[i] = *fpl_tensor_get(tf, i);
	fpl_tensor_close(tf);
	return 0;
}

int cli_optim_read_init(struct cli_optim_data *d, const char *path)
{
	fpl_tensor_info *info;
	size_t j, n;
	int text;

	if (list_file("--init", path, &n, &info, &text))
		return -1;
	d->nt = n;
	d->sizes = calloc(n, sizeof *d->sizes);
	if (!d->sizes || alloc_tensors(d)) {
		free(info);
		return error("out of memory");
	}
	d->total = 0;
	for (j = 0; j < n; j++) {
		struct cli_tensor t;

		if (!text)
			snprintf(d->names[j], sizeof d->names[j], "%s", info[j].name);
		if (cli_tensor_read_member_exact(&t, path, text ? NULL : info[j].name)) {
			free(info);
			return -1;
		}
		if (!t.n) {
			cli_tensor_release(&t);
			free(info);
			return error("--init '%s': tensor '%s' is empty", path, d->names[j]);
		}
		d->sizes[j] = t.n;
		d->w0[j] = t.v;
		d->winx[j] = t.inx;	/* d owns them now */
		d->nwinx[j] = t.ninx;
		d->total += t.n;
		if (set_shape(d, j, t.ndim, t.shape, 0)) {
			free(info);
			return -1;
		}
	}
	free(info);
	return 0;
}

/* The gradient pointer table for `steps` steps of d->nt tensors. */
static int alloc_steps(struct cli_optim_data *d, size_t steps)
{
	d->gp = calloc(steps * d->nt, sizeof *d->gp);
	d->ginx = calloc(steps * d->nt, sizeof *d->ginx);
	d->nginx = calloc(steps * d->nt, sizeof *d->nginx);
	if (!d->gp || !d->ginx || !d->nginx)
		return error("out of memory");
	d->nfiles = steps;
	return 0;
}

int cli_optim_read_steps(struct cli_optim_data *d, const char *const *files, size_t nfiles)
{
	size_t s, j, n;

	for (s = 0; s < nfiles; s++) {
		fpl_tensor_info *info;
		int text;
		char what[64];

		snprintf(what, sizeof what, "-g (step %zu)", s + 1);
		if (list_file(what, files[s], &n, &info, &text))
			return -1;
		if (!d->nt) {	/* sizes from the first file */
			d->nt = n;
			d->sizes = calloc(n, sizeof *d->sizes);
			if (!d->sizes || alloc_tensors(d)) {
				free(info);
				return error("out of memory");
			}
			for (j = 0; j < n; j++) {
				d->sizes[j] = text ? 0 : (size_t)info[j].count;
				if (!text)
					snprintf(d->names[j], sizeof d->names[j], "%s", info[j].name);
			}
		}
		if (!s && alloc_steps(d, nfiles)) {
			free(info);
			return -1;
		}
		if (n != d->nt) {
			free(info);
			return error("-g '%s' (step %zu) holds %zu tensors, but the weights are %zu "
				     "tensors", files[s], s + 1, n, d->nt);
		}
		for (j = 0; j < n; j++) {
			struct cli_tensor t;

			if (cli_tensor_read_member_exact(&t, files[s], text ? NULL : info[j].name)) {
				free(info);
				return -1;
			}
			if (!d->sizes[j])
				d->sizes[j] = t.n;
			if (t.n != d->sizes[j]) {
				error("-g '%s' (step %zu): tensor %zu '%s' has %zu values, but the "
				      "weights of tensor %zu '%s' are %zu", files[s], s + 1, j + 1,
				      text ? files[s] : info[j].name, t.n, j + 1, d->names[j],
				      d->sizes[j]);
				cli_tensor_release(&t);
				free(info);
				return -1;
			}
			if (keep(d, t.v)) {
				free(t.inx);
				free(info);
				return -1;
			}
			d->gp[s * d->nt + j] = t.v;
			d->ginx[s * d->nt + j] = t.inx;
			d->nginx[s * d->nt + j] = t.ninx;
			d->ginx_any |= t.ninx != 0;
			if (!s && set_shape(d, j, t.ndim, t.shape, 0)) {
				free(info);
				return -1;
			}
		}
		free(info);
	}
	return 0;
}

/* t's inexact numbers (t a stack of per-value steps for tensor j) into
 * the lists of their steps; t.inx freed.  0 or -1. */
static int split_inexact(struct cli_optim_data *d, struct cli_tensor *t, size_t j, size_t per)
{
	size_t i, k, q;

	for (i = 0; i < t->ninx; i = k) {
		size_t s = t->inx[i].pos / per, slot = s * d->nt + j;
		fpl_inexact *v;

		for (k = i; k < t->ninx && t->inx[k].pos / per == s; k++)
			;
		v = malloc((k - i) * sizeof *v);
		if (!v) {
			free(t->inx);
			return error("out of memory");
		}
		memcpy(v, t->inx + i, (k - i) * sizeof *v);
		for (q = 0; q < k - i; q++)
			v[q].pos -= s * per;
		d->ginx[slot] = v;
		d->nginx[slot] = k - i;
		d->ginx_any = 1;
	}
	free(t->inx);
	return 0;
}

int cli_optim_read_stack(struct cli_optim_data *d, const char *path)
{
	fpl_tensor_info *info;
	size_t j, n;
	uint64_t steps = 0;
	int text;

	if (list_file("--grad-stack", path, &n, &info, &text))
		return -1;
	if (text)
		return error("--grad-stack '%s': not an .npy, .npz or .safetensors file", path);
	for (j = 0; j < n; j++) {
		if (info[j].ndim < 2 || !info[j].shape[0]) {
			error("--grad-stack '%s': tensor '%s' has no leading step axis (it needs "
			      "2 or more dimensions, the first the steps)", path, info[j].name);
			free(info);
			return -1;
		}
		if (!j)
			steps = info[j].shape[0];
		if (info[j].shape[0] != steps) {
			error("--grad-stack '%s': tensor '%s' stacks %llu steps, tensor '%s' %llu",
			      path, info[j].name, (unsigned long long)info[j].shape[0],
			      info[0].name, (unsigned long long)steps);
			free(info);
			return -1;
		}
	}
	if (!d->nt) {
		d->nt = n;
		d->sizes = calloc(n, sizeof *d->sizes);
		if (!d->sizes || alloc_tensors(d)) {
			free(info);
			return error("out of memory");
		}
		for (j = 0; j < n; j++) {
			d->sizes[j] = (size_t)(info[j].count / steps);
			snprintf(d->names[j], sizeof d->names[j], "%s", info[j].name);
		}
	}
	if (n != d->nt) {
		free(info);
		return error("--grad-stack '%s' holds %zu tensors, but the weights are %zu tensors",
			     path, n, d->nt);
	}
	if (alloc_steps(d, (size_t)steps)) {
		free(info);
		return -1;
	}
	for (j = 0; j < n; j++) {
		struct cli_tensor t;
		size_t per = (size_t)(info[j].count / steps), s;

		if (per != d->sizes[j]) {
			error("--grad-stack '%s': tensor '%s' has %zu values per step, but the weights "
			      "of tensor %zu '%s' are %zu", path, info[j].name, per, j + 1,
			      d->names[j], d->sizes[j]);
			free(info);
			return -1;
		}
		if (cli_tensor_read_member_exact(&t, path, info[j].name)) {
			free(info);
			return -1;
		}
		if (keep(d, t.v)) {
			free(t.inx);
			free(info);
			return -1;
		}
		if (set_shape(d, j, info[j].ndim, info[j].shape, 1)) {
			free(t.inx);
			free(info);
			return -1;
		}
		/* C order: step s's slice is contiguous */
		for (s = 0; s < steps; s++)
			d->gp[s * d->nt + j] = t.v + s * per;
		if (split_inexact(d, &t, j, per)) {
			free(info);
			return -1;
		}
	}
	free(info);
	return 0;
}

/* ---------------------------------------------------------- per step */
int cli_optim_spike(const struct cli_optim_data *d, uint64_t s)
{
	uint64_t r;

	if (!(d->spike_p > 0))
		return 0;
	r = fpl_random_draw(d->seed, FPL__GEN_STREAM + CLI_OPTIM_SPIKE_STREAM, s) >> 11;
	return (double)r * 0x1p-53 < d->spike_p;
}

void cli_optim_grads(const struct cli_optim_data *d, uint64_t s, double *const *G)
{
	size_t j, i;
	int spike = cli_optim_spike(d, s);

	for (j = 0; j < d->nt; j++) {
		if (d->nfiles)
			memcpy(G[j], d->gp[(size_t)(s % d->nfiles) * d->nt + j],
			       d->sizes[j] * sizeof *G[j]);
		else
			fpl__gen_fill(&d->ggen[j], d->seed, CLI_OPTIM_G_STREAM(j, s), G[j],
				      d->sizes[j]);
		if (spike)
			for (i = 0; i < d->sizes[j]; i++)
				G[j][i] *= d->spike_f;
	}
}

/* ---------------------------------------------------- read once, per run */
/* Held for a block slot (b not NULL) whose elements are f: as for f
 * after a power-of-two scale (fpl_wide_hold's caveat), so an amax rule's
 * scale may not see the number itself. */
static int hold(const fpl_wide *w, const fpl_format *f, const fpl_block_format *b, fpl_rnd rnd,
		int sr_bits, double *x)
{
	int exact = fpl_wide_hold(w, f, rnd, sr_bits, x);

	return exact && !(b && (b->rule == FPL_BRULE_AMAX || b->tensor_scale));
}

int cli_optim_hold_w0(const struct cli_optim_data *d, const fpl_opt_policy *p, int sr_bits)
{
	int master = p->master == FPL_MASTER_FP32 || p->master == FPL_MASTER_SPLIT;
	const fpl_format *f = master ? &p->master_fmt : &p->weight;
	const fpl_block_format *b = master ? (p->master_is_block ? &p->master_block : NULL)
				    : (p->weight_is_block ? &p->weight_block : NULL);
	fpl_rnd rnd = master ? FPL_RND_NE : p->weight_rnd;
	size_t j, i;
	int exact = 1;

	for (j = 0; d->winx && j < d->nt; j++)
		for (i = 0; i < d->nwinx[j]; i++)
			exact &= hold(&d->winx[j][i].w, f, b, rnd, sr_bits,
				      &d->w0[j][d->winx[j][i].pos]);
	return exact;
}

int cli_optim_hold_grads(const struct cli_optim_data *d, uint64_t s, const double *const *G,
			 double *const *Gr, const fpl_opt_policy *p, int sr_bits)
{
	size_t slot = d->nfiles ? (size_t)(s % d->nfiles) * d->nt : 0, j, i;
	int spike = cli_optim_spike(d, s), exact = 1;

	for (j = 0; j < d->nt; j++) {
		const fpl_inexact *v = d->nfiles ? d->ginx[slot + j] : NULL;

		memcpy(Gr[j], G[j], d->sizes[j] * sizeof *G[j]);
		for (i = 0; v && i < d->nginx[slot + j]; i++) {
			double *x = &Gr[j][v[i].pos];

			exact &= hold(&v[i].w, &p->grad, p->grad_is_block ? &p->grad_block : NULL,
				      p->grad_rnd, sr_bits, x);
			if (spike)
				*x *= d->spike_f;	/* as cli_optim_grads */
		}
	}
	return exact;
}

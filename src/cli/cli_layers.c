/* SPDX-License-Identifier: MIT */
/*
 * cli_layers.c - the per-node gradients of `fplab allreduce`: layers
 * generated from --layers, read one tensor file per node (--inputs) or
 * from one file stacking the nodes along axis 0 (--stacked); the
 * --fp32-layers selection; and the format SPEC of --comm and --acc.
 *
 * Invariant: every layer holds the same number of values on every node,
 * node-major (node i's values are contiguous), and generated values depend
 * only on (seed, layer, node, index), never on threads or sweep position.
 * A number of a file that binary64 cannot hold (a decimal such as 0.1 or
 * 1e400, an int64 beyond 2^53) is kept exactly beside the layer and held
 * in it as the combination about to run reads it once (cli_layers_hold).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#define MAX_LAYERS 4096

void cli_layers_release(struct cli_layers *ls)
{
	size_t i;

	for (i = 0; i < ls->n; i++) {
		free(ls->l[i].g);
		free(ls->l[i].inx);
	}
	free(ls->l);
	memset(ls, 0, sizeof *ls);
}

/* A new layer at the end (zeroed, named layerN); NULL after a message. */
static struct cli_layer *push(struct cli_layers *ls)
{
	struct cli_layer *l;

	if (ls->n == MAX_LAYERS) {
		error("more than %d layers", MAX_LAYERS);
		return NULL;
	}
	l = realloc(ls->l, (ls->n + 1) * sizeof *l);
	if (!l) {
		error("out of memory");
		return NULL;
	}
	ls->l = l;
	l += ls->n;
	memset(l, 0, sizeof *l);
	snprintf(l->name, sizeof l->name, "layer%zu", ls->n);
	ls->n++;
	return l;
}

/* ------------------------------------------------------------ --layers */
/* One LAYER = [Kx]SIZE:GEN (item `idx` of spec, for messages); 0 or -2. */
static int parse_layer(struct cli_layers *ls, const char *spec, const char *item, size_t idx)
{
	struct cli_model mo;
	char num[32];
	const char *colon = strchr(item, ':'), *x;
	uint64_t k = 1, size;
	size_t len;

	if (!colon) {
		error("--layers '%s': layer %zu '%s' is not SIZE:GEN (e.g. 1000:normal:0,1e-3)",
		      spec, idx + 1, item);
		return -2;
	}
	len = (size_t)(colon - item);
	x = memchr(item, 'x', len);
	if (x) {
		snprintf(num, sizeof num, "%.*s", (int)((size_t)(x - item) % 31), item);
		if ((size_t)(x - item) > 30 || cli_parse_u64(num, &k) || k < 1 || k > MAX_LAYERS) {
			error("--layers '%s': layer %zu: '%.*s' is not a repeat count 1..%d", spec,
			      idx + 1, (int)(x - item), item, MAX_LAYERS);
			return -2;
		}
		len -= (size_t)(x + 1 - item);
		item = x + 1;
	}
	snprintf(num, sizeof num, "%.*s", (int)(len % 31), item);
	if (len > 30 || cli_parse_u64(num, &size) || size < 1 || size > ((uint64_t)1 << 34)) {
		error("--layers '%s': layer %zu: '%.*s' is not a size 1..2^34", spec, idx + 1,
		      (int)len, item);
		return -2;
	}
	/* the distribution exactly as --gen reads it */
	cli_model_init(&mo);
	if (cli_model_option(&mo, CLI_OPT_GEN, colon + 1) != 1) {
		error("--layers '%s': layer %zu has a bad distribution '%s'", spec, idx + 1,
		      colon + 1);
		return -2;
	}
	while (k--) {
		struct cli_layer *l = push(ls);

		if (!l)
			return -2;
		l->n = (size_t)size;
		l->ndim = 1;
		l->shape[0] = size;
		l->gen = mo.gen;
	}
	return 0;
}

int cli_layers_parse(struct cli_layers *ls, const char *spec)
{
	char *copy = strdup(spec), *p, *semi;
	size_t idx = 0;
	int rc = 0;

	if (!copy)
		return error("out of memory");
	for (p = copy; !rc; p = semi + 1, idx++) {
		semi = strchr(p, ';');
		if (semi)
			*semi = 0;
		if (!*p) {
			error("--layers '%s': layer %zu is empty", spec, idx + 1);
			rc = -2;
		} else {
			rc = parse_layer(ls, spec, p, idx);
		}
		if (!semi)
			break;
	}
	free(copy);
	return rc;
}

int cli_layers_generate(struct cli_layers *ls, uint32_t nodes, uint64_t seed)
{
	size_t l;
	uint32_t i;

	ls->nodes = nodes;
	for (l = 0; l < ls->n; l++) {
		struct cli_layer *y = &ls->l[l];

		if (y->n > SIZE_MAX / sizeof *y->g / nodes)
			return error("layer %zu: %zu values on %u nodes do not fit in memory", l,
				     y->n, nodes);
		y->g = malloc(y->n * nodes * sizeof *y->g);
		if (!y->g)
			return error("out of memory for %zu values on %u nodes", y->n, nodes);
		for (i = 0; i < nodes; i++)
			fpl__gen_fill(&y->gen, seed, FPL__GEN_LAYER_STREAM(l, i), y->g + (size_t)i * y->n,
				     y->n);
	}
	return 0;
}

/* ---------------------------------------------------------- tensor files */
/* Keep t's inexact numbers in l, their positions moved by off.  0 or -1. */
static int keep_inexact(struct cli_layer *l, const struct cli_tensor *t, size_t off)
{
	fpl_inexact *v;
	size_t i;

	if (!t->ninx)
		return 0;
	v = realloc(l->inx, (l->ninx + t->ninx) * sizeof *v);
	if (!v)
		return error("out of memory");
	l->inx = v;
	for (i = 0; i < t->ninx; i++) {
		v[l->ninx] = t->inx[i];
		v[l->ninx++].pos += off;
	}
	return 0;
}

int cli_layers_hold(struct cli_layer *l, const fpl_format *f, fpl_rnd rnd, int sr_bits)
{
	size_t i;
	int exact = 1;

	for (i = 0; i < l->ninx; i++)
		exact &= fpl_wide_hold(&l->inx[i].w, f, rnd, sr_bits, &l->g[l->inx[i].pos]);
	return exact;
}

/* The tensor names of a tensor file, in file order ((*names)[k] point
 * into *tf, which the caller closes).  0 or -1. */
static int list_tensors(const char *path, fpl_tensor_file **tf, size_t *n)
{
	char err[1024];
	int rc;

	err[0] = 0;
	rc = fpl_tensor_open(tf, path, NULL, err, sizeof err);
	if (rc)
		return error("%s", err[0] ? err : fpl_strerror(rc));
	*n = fpl_tensor_count(*tf);
	if (!*n) {
		fpl_tensor_close(*tf);
		return error("'%s' holds no tensor", path);
	}
	return 0;
}

int cli_layers_read_nodes(struct cli_layers *ls, const char *const *files, size_t nfiles)
{
	fpl_tensor_file *tf = NULL;
	size_t nt = 1, k, i;
	int tensors = cli_is_tensor_file(files[0]);

	if (tensors && list_tensors(files[0], &tf, &nt))
		return -1;
	for (k = 0; k < nt; k++) {
		struct cli_layer *l = push(ls);

		if (!l) {
			fpl_tensor_close(tf);
			return -1;
		}
		if (tf)
			snprintf(l->name, sizeof l->name, "%s", fpl_tensor_get(tf, k)->name);
	}
	fpl_tensor_close(tf);
	ls->nodes = (uint32_t)nfiles;
	for (i = 0; i < nfiles; i++) {
		if (cli_is_tensor_file(files[i]) != tensors)
			return error("--inputs: '%s' and '%s' are not both tensor files", files[0],
				     files[i]);
		tf = NULL;
		if (tensors) {
			if (list_tensors(files[i], &tf, &k))
				return -1;
			if (k != nt) {
				fpl_tensor_close(tf);
				return error("--inputs: '%s' holds %zu tensors, '%s' %zu: every node "
					     "needs the same layers", files[i], k, files[0], nt);
			}
		}
		for (k = 0; k < nt; k++) {
			struct cli_layer *l = &ls->l[k];
			struct cli_tensor t;
			size_t got;

			/* layer k is tensor k of each file, whatever its name there
			 * (a .npy is named after its file: grad_rank0, grad_rank1) */
			if (cli_tensor_read_member_exact(&t, files[i], tf ? fpl_tensor_get(tf, k)->name
						   : NULL)) {
				fpl_tensor_close(tf);
				return -1;
			}
			if (!i) {
				l->n = t.n;
				l->ndim = t.ndim;
				memcpy(l->shape, t.shape, sizeof l->shape);
				l->g = t.n <= SIZE_MAX / sizeof *l->g / nfiles
					? malloc((t.n * nfiles + 1) * sizeof *l->g) : NULL;
				if (!l->g) {
					cli_tensor_release(&t);
					fpl_tensor_close(tf);
					return error("out of memory");
				}
			} else if (t.n != l->n) {
				got = t.n;
				cli_tensor_release(&t);
				fpl_tensor_close(tf);
				return error("--inputs: layer '%s' has %zu values in '%s' but %zu in "
					     "'%s': every node needs the same layer sizes", l->name, got,
					     files[i], l->n, files[0]);
			}
			memcpy(l->g + i * l->n, t.v, t.n * sizeof *t.v);
			if (keep_inexact(l, &t, i * l->n)) {
				cli_tensor_release(&t);
				fpl_tensor_close(tf);
				return -1;
			}
			cli_tensor_release(&t);
		}
		fpl_tensor_close(tf);
	}
	return 0;
}

int cli_layers_read_stacked(struct cli_layers *ls, const char *path, uint32_t nodes)
{
	fpl_tensor_file *tf;
	size_t nt, k;

	if (!cli_is_tensor_file(path))
		return error("--stacked '%s': not an .npy, .npz or .safetensors file", path);
	if (list_tensors(path, &tf, &nt))
		return -1;
	for (k = 0; k < nt; k++) {
		const fpl_tensor_info *ti = fpl_tensor_get(tf, k);
		struct cli_layer *l = push(ls);

		if (!l) {
			fpl_tensor_close(tf);
			return -1;
		}
		snprintf(l->name, sizeof l->name, "%s", ti->name);
		if (ti->ndim < 1 || ti->shape[0] < 1 || ti->shape[0] > UINT32_MAX) {
			error("--stacked '%s': tensor '%s' has no leading node axis", path, ti->name);
			fpl_tensor_close(tf);
			return -1;
		}
		if (!nodes)
			nodes = (uint32_t)ti->shape[0];
		if (ti->shape[0] != nodes) {
			error("--stacked '%s': tensor '%s' stacks %llu nodes, not %u", path, ti->name,
			      (unsigned long long)ti->shape[0], nodes);
			fpl_tensor_close(tf);
			return -2;
		}
		l->ndim = ti->ndim - 1;
		memcpy(l->shape, ti->shape + 1, (size_t)l->ndim * sizeof *l->shape);
	}
	fpl_tensor_close(tf);
	ls->nodes = nodes;
	for (k = 0; k < nt; k++) {
		struct cli_layer *l = &ls->l[k];
		struct cli_tensor t;

		if (cli_tensor_read_member_exact(&t, path, l->name))
			return -1;
		/* C order: node i's slice is contiguous */
		l->n = t.n / nodes;
		l->g = t.v;
		l->inx = t.inx;
		l->ninx = t.ninx;
	}
	return 0;
}

/* ------------------------------------------------------- --fp32-layers */
int cli_layers_fp32(struct cli_layers *ls, const char *list)
{
	char *copy = strdup(list), *tok, *save = NULL;
	const char **names;
	size_t i;
	int rc = 0;

	names = malloc((ls->n + 2) * sizeof *names);
	if (!copy || !names) {
		free(copy);
		free(names);
		return error("out of memory");
	}
	for (i = 0; i < ls->n; i++)
		names[i] = ls->l[i].name;
	names[ls->n] = "first";
	names[ls->n + 1] = "last";
	for (tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		uint64_t idx;

		for (i = 0; i < ls->n; i++)
			if (!strcmp(tok, ls->l[i].name))
				break;
		if (i == ls->n && !strcmp(tok, "first"))
			i = 0;
		else if (i == ls->n && !strcmp(tok, "last"))
			i = ls->n - 1;
		else if (i == ls->n && !cli_parse_u64(tok, &idx)) {
			if (idx >= ls->n) {
				error("--fp32-layers: layer index %s is not below %zu, the number of "
				      "layers", tok, ls->n);
				rc = -2;
				break;
			}
			i = (size_t)idx;
		}
		if (i == ls->n) {
			cli_unknown("layer", tok, names, ls->n + 2);
			rc = -2;
			break;
		}
		ls->l[i].fp32 = 1;
	}
	free(copy);
	free(names);
	return rc;
}

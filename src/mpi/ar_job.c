/* SPDX-License-Identifier: MIT */
/*
 * ar_job.c - the argument list of fplab-mpi and fplab-mpi-sim, their
 * gradients (generated from the seed, or read per node) and their result
 * file.  No MPI here: fplab-mpi-sim, the simulation side of the MPI
 * test, links this file with plain cc.
 *
 * Invariant: the gradients of (layer, node) are a pure function of the
 * arguments and of that node's input file.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/ar_job.h"

int ar_error(const struct ar_job *j, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", j->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static const char usage_text[] =
	"usage: %s --layer N:DIST [--layer N:DIST...] [--nodes P]\n"
	"    [--algo ALGO,...] [--group G,...] [--comm SPEC,...] [--acc SPEC,...]\n"
	"    [--scale none|loss:S|aps,...] [-r MODE] [--keep-fp32 L,...] [--seed N]\n"
	"    [--sr-bits R] [--in PATTERN|FILE,...] [-o FILE] [--tsv]\n"
	"DIST: ones, uniform:A,B, normal:MU,SIGMA, lognormal:MU,SIGMA, ints:A,B;\n"
	"ALGO: sequential, ring, tree, hier[:G], hier-ring[:G]; SPEC: FORMAT[+switches][:MODE].\n";

static int usage(const struct ar_job *j, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int usage(const struct ar_job *j, const char *fmt, ...)
{
	va_list ap;

	if (j->quiet)
		return 2;
	fprintf(stderr, "%s: ", j->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fprintf(stderr, usage_text, j->prog);
	return 2;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -1 : 0;
}

static int parse_double(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return !*s || *end || errno == ERANGE ? -1 : 0;
}

/* N:DIST, DIST as util/gen.h parses it */
static int layer_parse(struct ar_layer *L, const char *s)
{
	char buf[32];
	const char *colon = strchr(s, ':');

	if (!colon || (size_t)(colon - s) >= sizeof buf)
		return -1;
	memcpy(buf, s, (size_t)(colon - s));
	buf[colon - s] = 0;
	if (parse_u64(buf, &L->n) || !L->n)
		return -1;
	return fpl__gen_parse(&L->gen, colon + 1) ? -1 : 0;
}

/* Split a comma list into a copy (*store) and its pieces; the count, or
 * 0 for an empty piece or too many. */
static size_t split(const char *s, char **store, const char **out)
{
	size_t n = 0;
	char *p, *c;

	*store = strdup(s);
	if (!*store)
		return 0;
	for (p = *store;; p = c + 1) {
		c = strchr(p, ',');
		if (c)
			*c = 0;
		if (!*p || n == AR_MAX_LIST)
			return 0;
		out[n++] = p;
		if (!c)
			return n;
	}
}

static int parse_scale(struct ar_combo *c, const char *s)
{
	c->loss_scale = 1;
	if (!strcmp(s, "none"))
		c->scaling = FPL_AR_SCALE_NONE;
	else if (!strcmp(s, "aps"))
		c->scaling = FPL_AR_SCALE_APS;
	else if (!strncmp(s, "loss:", 5) && !parse_double(s + 5, &c->loss_scale) &&
		 c->loss_scale > 0 && isfinite(c->loss_scale))
		c->scaling = FPL_AR_SCALE_LOSS;
	else
		return -1;
	return 0;
}

static int keep_parse(struct ar_job *j, const char *s, uint64_t **keep, size_t *nkeep)
{
	const char *v[AR_MAX_LIST];
	char *store;
	size_t n = split(s, &store, v), i;

	*keep = n ? malloc(n * sizeof **keep) : NULL;
	for (i = 0; *keep && i < n; i++)
		if (parse_u64(v[i], &(*keep)[i]))
			break;
	free(store);
	*nkeep = i;
	return !n || i < n ? usage(j, "--keep-fp32: '%s' is not a list of layer indices", s) : 0;
}

/* The options as given (lists as strings). */
struct raw {
	const char *algo, *group, *comm, *acc, *scale, *rmode, *keep;
};

enum { O_NODES = 256, O_ALGO, O_GROUP, O_COMM, O_ACC, O_SCALE, O_KEEP, O_SEED, O_SRBITS,
       O_LAYER, O_IN, O_TSV };

/* One option; 0 or the status of ar_job_parse. */
static int option(struct ar_job *j, int c, const char *arg, struct raw *r)
{
	uint64_t u;

	switch (c) {
	case O_NODES:
		if (parse_u64(arg, &u) || !u || u > UINT32_MAX)
			return usage(j, "--nodes: '%s' is not a positive integer", arg);
		j->nodes = (uint32_t)u;
		return 0;
	case O_ALGO: r->algo = arg; return 0;
	case O_GROUP: r->group = arg; return 0;
	case O_COMM: r->comm = arg; return 0;
	case O_ACC: r->acc = arg; return 0;
	case 'r': r->rmode = arg; return 0;
	case O_SCALE: r->scale = arg; return 0;
	case O_KEEP: r->keep = arg; return 0;
	case O_SEED:
		return parse_u64(arg, &j->seed) ? usage(j, "--seed: '%s' is not a non-negative integer",
							arg) : 0;
	case O_SRBITS:
		if (parse_u64(arg, &u) || u < 1 || u > 32)
			return usage(j, "--sr-bits: '%s' is not in 1..32", arg);
		j->sr_bits = (int)u;
		return 0;
	case O_LAYER: {
		struct ar_layer *L = realloc(j->layer, (j->nlayers + 1) * sizeof *L);

		if (!L)
			return ar_error(j, "out of memory");
		j->layer = L;
		memset(&L[j->nlayers], 0, sizeof *L);
		if (layer_parse(&L[j->nlayers], arg))
			return usage(j, "--layer: '%s' is not N:DIST", arg);
		j->nlayers++;
		return 0;
	}
	case O_IN: j->in = arg; return 0;
	case 'o': j->out = arg; return 0;
	case O_TSV: j->tsv = 1; return 0;
	default:
		return usage(j, "unknown option");
	}
}

/* The lists of one kind: pieces into v, count into *n; 0 or 2. */
static int list(struct ar_job *j, const char *opt, const char *s, const char *def,
		char **store, const char **v, size_t *n)
{
	*n = split(s ? s : def, store, v);
	return *n ? 0 : usage(j, "%s: '%s' is not a comma list of at most %d values", opt, s,
			      AR_MAX_LIST);
}

/* One value of each list into c; 0 or 2. */
static int combo_set(struct ar_job *j, struct ar_combo *c, const char *comm, const char *acc,
		     const char *scale, fpl_rnd r)
{
	c->comm_rnd = c->acc_rnd = r;
	if (fpl_accum_parse_spec(comm, &c->comm, &c->comm_rnd, NULL))
		return usage(j, "--comm: '%s' is not FORMAT[+switches][:MODE]", comm);
	if (fpl_accum_parse_spec(acc, &c->acc, &c->acc_rnd, NULL))
		return usage(j, "--acc: '%s' is not FORMAT[+switches][:MODE]", acc);
	if (parse_scale(c, scale))
		return usage(j, "--scale: '%s' is not none, loss:S or aps", scale);
	snprintf(c->comm_s, sizeof c->comm_s, "%s", comm);
	snprintf(c->acc_s, sizeof c->acc_s, "%s", acc);
	snprintf(c->scale_s, sizeof c->scale_s, "%s", scale);
	return 0;
}

/* One algorithm spelling: ALGO, hier:G or hier-ring:G; 0 or -1. */
static int algo_one(const char *s, fpl_ar_algo *a, uint64_t *g)
{
	char buf[64], *colon;

	snprintf(buf, sizeof buf, "%s", s);
	*g = 0;
	colon = strchr(buf, ':');
	if (colon) {
		*colon = 0;
		if (parse_u64(colon + 1, g) || !*g || *g > UINT32_MAX)
			return -1;
	}
	if (fpl_ar_algo_parse(buf, a) || (colon && !fpl_ar_algo_grouped(*a)))
		return -1;
	return 0;
}

/* The cross product, in cmd_allreduce's order. */
static int combos(struct ar_job *j, const struct raw *r)
{
	const char *va[AR_MAX_LIST], *vg[AR_MAX_LIST], *vc[AR_MAX_LIST], *vx[AR_MAX_LIST],
		*vs[AR_MAX_LIST];
	char *st[5] = { NULL, NULL, NULL, NULL, NULL };
	size_t na, ng, nc, nx, ns, a, g, c, x, s, k = 0;
	fpl_rnd rnd = FPL_RND_NE;
	int rc;

	if (r->rmode && fpl_rnd_parse(r->rmode, &rnd))
		return usage(j, "-r: '%s' is not a rounding mode", r->rmode);
	rc = list(j, "--algo", r->algo, "ring", &st[0], va, &na);
	if (!rc)
		rc = list(j, "--group", r->group, "1", &st[1], vg, &ng);
	if (!rc)
		rc = list(j, "--comm", r->comm, "fp32", &st[2], vc, &nc);
	if (!rc)
		rc = list(j, "--acc", r->acc, "fp32", &st[3], vx, &nx);
	if (!rc)
		rc = list(j, "--scale", r->scale, "none", &st[4], vs, &ns);
	if (!rc)
		j->combo = calloc(na * ng * nc * nx * ns, sizeof *j->combo);
	if (!rc && !j->combo)
		rc = ar_error(j, "out of memory");
	for (a = 0; !rc && a < na; a++) {
		fpl_ar_algo al;
		uint64_t gg;

		if (algo_one(va[a], &al, &gg)) {
			rc = usage(j, "--algo: '%s' is not sequential, ring, tree, hier[:G], hier-ring[:G]", va[a]);
			break;
		}
		for (g = 0; !rc && g < (fpl_ar_algo_grouped(al) && !gg ? ng : 1); g++) {
			uint64_t G = gg;

			if (fpl_ar_algo_grouped(al) && !G && (parse_u64(vg[g], &G) || !G || G > UINT32_MAX))
				rc = usage(j, "--group: '%s' is not a positive integer", vg[g]);
			for (c = 0; !rc && c < nc; c++)
				for (x = 0; !rc && x < nx; x++)
					for (s = 0; !rc && s < ns; s++, k++) {
						j->combo[k].algo = al;
						j->combo[k].group = fpl_ar_algo_grouped(al) ? (uint32_t)G : 1;
						rc = combo_set(j, &j->combo[k], vc[c], vx[x], vs[s], rnd);
					}
		}
	}
	j->ncombo = k;
	for (a = 0; a < 5; a++)
		free(st[a]);
	return rc;
}

int ar_job_parse(struct ar_job *j, const char *prog, int quiet, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "nodes", required_argument, NULL, O_NODES },
		{ "algo", required_argument, NULL, O_ALGO },
		{ "group", required_argument, NULL, O_GROUP },
		{ "comm", required_argument, NULL, O_COMM },
		{ "acc", required_argument, NULL, O_ACC },
		{ "scale", required_argument, NULL, O_SCALE },
		{ "keep-fp32", required_argument, NULL, O_KEEP },
		{ "seed", required_argument, NULL, O_SEED },
		{ "sr-bits", required_argument, NULL, O_SRBITS },
		{ "layer", required_argument, NULL, O_LAYER },
		{ "in", required_argument, NULL, O_IN },
		{ "tsv", no_argument, NULL, O_TSV },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct raw r = { NULL, NULL, NULL, NULL, NULL, NULL, NULL };
	uint64_t *keep = NULL;
	size_t nkeep = 0, i;
	int c, rc = 0;

	memset(j, 0, sizeof *j);
	j->prog = prog;
	j->quiet = quiet;
	j->sr_bits = 32;
	opterr = 0;
	optind = 1;
	while (!rc && (c = getopt_long(argc, argv, "+hr:o:", longopts, NULL)) != -1) {
		if (c == 'h') {
			if (!quiet)
				printf(usage_text, prog);
			return 1;
		}
		if (c == '?' || c == ':') {
			rc = usage(j, "bad option '%s'", argv[optind - 1]);
			break;
		}
		rc = option(j, c, optarg, &r);
	}
	if (!rc && optind < argc)
		rc = usage(j, "unexpected argument '%s'", argv[optind]);
	if (!rc)
		rc = combos(j, &r);
	if (!rc && j->in && j->nlayers)
		rc = usage(j, "--in and --layer exclude each other");
	if (!rc && !j->in && !j->nlayers)
		rc = usage(j, "no gradients: give --layer N:DIST or --in PATTERN");
	if (!rc && j->in)
		rc = ar_job_layers_from_input(j);
	if (!rc && r.keep)
		rc = keep_parse(j, r.keep, &keep, &nkeep);
	for (i = 0; !rc && i < nkeep; i++) {
		if (keep[i] >= j->nlayers)
			rc = usage(j, "--keep-fp32: no layer %llu", (unsigned long long)keep[i]);
		else
			j->layer[keep[i]].keep_fp32 = 1;
	}
	free(keep);
	if (rc)
		ar_job_release(j);
	return rc;
}

void ar_job_release(struct ar_job *j)
{
	free(j->layer);
	free(j->combo);
	j->layer = NULL;
	j->combo = NULL;
	j->nlayers = j->ncombo = 0;
}

void ar_job_config(const struct ar_job *j, size_t a, size_t l, uint32_t nodes,
		   fpl_ar_config *cfg)
{
	const struct ar_combo *c = &j->combo[a];

	fpl_ar_config_init(cfg);
	cfg->algo = c->algo;
	cfg->nodes = nodes;
	cfg->group = c->group;
	cfg->comm = c->comm;
	cfg->acc = c->acc;
	cfg->comm_rnd = c->comm_rnd;
	cfg->acc_rnd = c->acc_rnd;
	cfg->scaling = c->scaling;
	cfg->loss_scale = c->loss_scale;
	cfg->keep_fp32 = j->layer[l].keep_fp32;
	cfg->threads = 1;
}

void ar_job_state(const struct ar_job *j, fpl_state *st)
{
	fpl_state_init(st, j->seed);
	fpl_state_set_sr_bits(st, j->sr_bits);
	st->threads = 1;
}

void ar_job_print_header(void)
{
	int k;

	printf("algo\tcomm\tacc\tscale\tlayer\tn\tsteps\tbytes_sent\tscale_log2");
	for (k = 0; k < FPL_NFLAGS; k++)
		printf("\t%s", fpl_flag_name(k));
	printf("\tnodes_agree\n");
}

void ar_job_print_combo(const struct ar_job *j, size_t a)
{
	const struct ar_combo *c = &j->combo[a];

	if (fpl_ar_algo_grouped(c->algo))
		printf("%s:%u", fpl_ar_algo_name(c->algo), (unsigned)c->group);
	else
		printf("%s", fpl_ar_algo_name(c->algo));
	printf("\t%s\t%s\t%s", c->comm_s, c->acc_s, c->scale_s);
}

/* ----------------------------------------------------------- gradients */
/* Node's file: PATTERN with every "{}" replaced by the node number, or
 * piece `node` of FILE,FILE,... (a new string; NULL when none). */
static char *input_path(const struct ar_job *j, uint32_t node)
{
	size_t len = strlen(j->in) + 1, k = 0;
	const char *p;
	char *s;

	if (!strstr(j->in, "{}")) {
		const char *v[AR_MAX_LIST];
		char *store;
		size_t n = split(j->in, &store, v);

		s = node < n ? strdup(v[node]) : NULL;
		free(store);
		return s;
	}
	for (p = j->in; (p = strstr(p, "{}")); p += 2)
		len += 10;
	s = malloc(len);
	if (!s)
		return NULL;
	for (p = j->in; *p; ) {
		if (p[0] == '{' && p[1] == '}') {
			k += (size_t)snprintf(s + k, len - k, "%u", (unsigned)node);
			p += 2;
		} else {
			s[k++] = *p++;
		}
	}
	s[k] = 0;
	return s;
}

int ar_job_check_nodes(const struct ar_job *j, uint32_t nodes)
{
	const char *v[AR_MAX_LIST];
	char *store;
	size_t n;

	if (!j->in || strstr(j->in, "{}"))
		return 0;
	n = split(j->in, &store, v);
	free(store);
	if (n == nodes)
		return 0;
	return ar_error(j, "--in names %zu files for %u nodes", n, (unsigned)nodes);
}

/* Open node's input file: 0 or -1 (message printed). */
static int input_open(const struct ar_job *j, uint32_t node, fpl_tensor_file **tf, char **path)
{
	char err[512];
	int rc;

	*path = input_path(j, node);
	if (!*path)
		return ar_error(j, "--in: no file for node %u", (unsigned)node);
	err[0] = 0;
	rc = fpl_tensor_open(tf, *path, NULL, err, sizeof err);
	if (rc) {
		ar_error(j, "%s", err[0] ? err : fpl_strerror(rc));
		free(*path);
		return -1;
	}
	return 0;
}

int ar_job_layers_from_input(struct ar_job *j)
{
	fpl_tensor_file *tf;
	char *path;
	size_t i, n;

	if (input_open(j, 0, &tf, &path))
		return -1;
	n = fpl_tensor_count(tf);
	j->layer = n ? calloc(n, sizeof *j->layer) : NULL;
	if (!n || !j->layer) {
		fpl_tensor_close(tf);
		ar_error(j, n ? "out of memory" : "'%s' holds no tensor", path);
		free(path);
		return -1;
	}
	for (i = 0; i < n; i++)
		j->layer[i].n = fpl_tensor_get(tf, i)->count;
	j->nlayers = n;
	fpl_tensor_close(tf);
	free(path);
	return 0;
}

/* Tensor l of node's file into x: its size must be j->layer[l].n. */
static int read_layer(const struct ar_job *j, size_t l, uint32_t node, double *x)
{
	fpl_tensor_file *tf;
	fpl_tensor_stream *ts = NULL;
	char *path, err[512];
	size_t got, have = 0;
	int rc;

	if (input_open(j, node, &tf, &path))
		return -1;
	rc = -1;
	if (fpl_tensor_count(tf) != j->nlayers || fpl_tensor_get(tf, l)->count != j->layer[l].n) {
		ar_error(j, "'%s': expected %zu tensors, tensor %zu of %llu values, as node 0's file",
			 path, j->nlayers, l, (unsigned long long)j->layer[l].n);
		goto out;
	}
	err[0] = 0;
	if ((rc = fpl_tensor_stream_open(&ts, tf, l, err, sizeof err))) {
		rc = ar_error(j, "'%s': %s", path, err[0] ? err : fpl_strerror(rc));
		goto out;
	}
	while (have < j->layer[l].n) {
		err[0] = 0;
		rc = fpl_tensor_stream_read(ts, x + have, (size_t)j->layer[l].n - have, &got, err,
					    sizeof err);
		if (rc || !got) {
			rc = ar_error(j, "'%s': %s", path, rc ? (err[0] ? err : fpl_strerror(rc)) :
				      "short tensor");
			goto out;
		}
		have += got;
	}
	rc = 0;
out:
	if (ts)
		fpl_tensor_stream_close(ts);
	fpl_tensor_close(tf);
	free(path);
	return rc;
}

int ar_job_gradient(const struct ar_job *j, size_t l, uint32_t node, double *x)
{
	if (j->in)
		return read_layer(j, l, node, x);
	fpl__gen_fill(&j->layer[l].gen, j->seed, FPL__GEN_LAYER_STREAM(l, node), x,
		      (size_t)j->layer[l].n);
	return 0;
}

/* ---------------------------------------------------------- the result */
static int is_npy(const char *path)
{
	size_t n = strlen(path);

	return n >= 4 && !strcmp(path + n - 4, ".npy");
}

int ar_out_open(FILE **fp, const struct ar_job *j, uint64_t total)
{
	*fp = NULL;
	if (!j->out)
		return 0;
	*fp = fopen(j->out, "wb");
	if (!*fp)
		return ar_error(j, "cannot open '%s': %s", j->out, strerror(errno));
	if (is_npy(j->out) && fpl_npy_write_header(*fp, FPL_DT_F64, total)) {
		fclose(*fp);
		*fp = NULL;
		return ar_error(j, "cannot write '%s': %s", j->out, strerror(errno));
	}
	return 0;
}

int ar_out_write(FILE *fp, const struct ar_job *j, const double *x, uint64_t n)
{
	if (fp && fwrite(x, sizeof *x, (size_t)n, fp) != n)
		return ar_error(j, "cannot write '%s': %s", j->out, strerror(errno));
	return 0;
}

int ar_out_close(FILE *fp, const struct ar_job *j)
{
	if (fp && (ferror(fp) | fclose(fp)))
		return ar_error(j, "cannot write '%s': %s", j->out, strerror(errno));
	return 0;
}

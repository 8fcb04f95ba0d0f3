/* SPDX-License-Identifier: MIT */
/*
 * cmd_allreduce.c - `fplab allreduce`: all-reduce per-node gradients
 * layer by layer under a schedule (sequential, ring, tree, hier:G), a
 * communication and an accumulator format and a scaling (none, loss:S,
 * aps), against the exact sum (fplab/allreduce.h); a sweep of every
 * combination of the --algo, --group, --comm, --acc and --scale lists.
 *
 * Invariant: each combination starts from a fresh state (the run's seed,
 * counter 0) and the layers are reduced in file order, one
 * fpl_allreduce() each, so a row group equals the same combination run
 * alone; the per-layer rows come from the library's report unchanged and
 * the total row only sums, averages and maximises them.
 *
 * --mpi: fplab execs fplab-mpi with the same arguments; under mpirun
 * every rank runs this very command again (src/mpi/ar_cli.h), each
 * layer's all-reduce done by the ranks (rank = node), so the rows come
 * from the same code, row writer and total as the simulation's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fplab/allreduce.h>

#include "cli/cli.h"
#include "mpi/ar_cli.h"

const struct ar_backend *cmd_allreduce_mpi;

static const char allreduce_usage[] =
	"usage: fplab allreduce [--nodes P] [--algo ALGO,...] [--group G,...]\n"
	"    [--comm SPEC,...] [--acc SPEC,...] [--scale none|loss:S|aps,...]\n"
	"    [--fp32-layers LIST] [-r MODE] [--seed N] [--sr-bits R] [--threads N]\n"
	"    [--layers LAYERS | --inputs FILE,... | --stacked FILE] [-o FILE]\n"
	"    [--tsv|--json|--ndjson] [--mpi]\n";

enum {
	OPT_NODES = CLI_OPT_CMD, OPT_ALGO, OPT_GROUP, OPT_COMM, OPT_ACC, OPT_SCALE,
	OPT_FP32, OPT_LAYERS, OPT_INPUTS, OPT_STACKED, OPT_MPI
};

#define MAX_LIST 64	/* values of one comma list */

/* Without a source: one layer the size of ResNet-50's first convolution
 * (the layer of the APS paper's Table 9), positive lognormal values of
 * gradient size, so the report measures round-off, not cancellation. */
#define DEFAULT_LAYERS "9408:lognormal:-8,1"

/* One value of --scale. */
struct scale {
	fpl_ar_scaling kind;
	double s;		/* loss:S */
	const char *spell;
};

/* One value of --comm or --acc (is_block: --comm only, a block format
 * whose element format is f). */
struct spec {
	fpl_format f;
	fpl_rnd rnd;
	int is_block;
	fpl_block_format blk;
	char spell[CLI_SPEC_MAX];
};

static struct allreduce_opts {
	struct cli_round ro;	/* -r, --seed, --sr-bits, --threads */
	long nodes;		/* -1: not given */
	const char *algo, *group, *comm, *acc, *scale, *fp32, *layers, *inputs, *stacked;
	const char *output;
	int mpi;
	enum cli_report report;
} opt;

static const char *const algo_names[] = { "sequential", "ring", "tree", "hier", "hier-ring" };
static const char *const scale_names[] = { "none", "loss", "aps" };

static int parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "round", required_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, CLI_OPT_SEED },
		{ "sr-bits", required_argument, NULL, CLI_OPT_SR_BITS },
		{ "threads", required_argument, NULL, CLI_OPT_THREADS },
		CLI_REPORT_LONGOPTS,
		{ "nodes", required_argument, NULL, OPT_NODES },
		{ "algo", required_argument, NULL, OPT_ALGO },
		{ "group", required_argument, NULL, OPT_GROUP },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "acc", required_argument, NULL, OPT_ACC },
		{ "scale", required_argument, NULL, OPT_SCALE },
		{ "fp32-layers", required_argument, NULL, OPT_FP32 },
		{ "layers", required_argument, NULL, OPT_LAYERS },
		{ "inputs", required_argument, NULL, OPT_INPUTS },
		{ "stacked", required_argument, NULL, OPT_STACKED },
		{ "mpi", no_argument, NULL, OPT_MPI },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, rc;

	memset(&opt, 0, sizeof opt);
	opt.nodes = -1;
	optind = 0;
	cli_round_init(&opt.ro);
	while ((c = getopt_long(argc, argv, "hr:o:", longopts, NULL)) != -1) {
		rc = cli_round_option(&opt.ro, c, optarg);
		if (rc < 0)
			return usage_error(allreduce_usage, NULL);
		if (rc > 0 || cli_report_option(&opt.report, c))
			continue;
		switch (c) {
		case 'h': return -1;
		case 'o': opt.output = optarg; break;
		case OPT_NODES:
			if (cli_parse_long(optarg, &opt.nodes) || opt.nodes < 1 || opt.nodes > 65536)
				return usage_error(allreduce_usage, "--nodes: '%s' is not a node count "
						   "1..65536", optarg);
			break;
		case OPT_ALGO: opt.algo = optarg; break;
		case OPT_GROUP: opt.group = optarg; break;
		case OPT_COMM: opt.comm = optarg; break;
		case OPT_ACC: opt.acc = optarg; break;
		case OPT_SCALE: opt.scale = optarg; break;
		case OPT_FP32: opt.fp32 = optarg; break;
		case OPT_LAYERS: opt.layers = optarg; break;
		case OPT_INPUTS: opt.inputs = optarg; break;
		case OPT_STACKED: opt.stacked = optarg; break;
		case OPT_MPI: opt.mpi = 1; break;
		default: return usage_error(allreduce_usage, NULL);
		}
	}
	if (optind < argc)
		return usage_error(allreduce_usage, "unexpected argument '%s'", argv[optind]);
	if (opt.ro.rnd_arg && strchr(opt.ro.rnd_arg, ','))
		return usage_error(allreduce_usage, "-r takes one mode; give a mode per format "
				   "as --comm FORMAT:MODE,... or --acc FORMAT:MODE,...");
	if (!!opt.layers + !!opt.inputs + !!opt.stacked > 1)
		return usage_error(allreduce_usage, "--layers, --inputs and --stacked are three "
				   "sources: give one");
	if (!opt.layers && !opt.inputs && !opt.stacked)
		opt.layers = DEFAULT_LAYERS;
	if (cmd_allreduce_mpi)
		opt.mpi = 1;	/* fplab-mpi runs the command as --mpi */
	if (opt.layers && opt.nodes < 0 && !opt.mpi)
		return usage_error(allreduce_usage, "--layers needs --nodes P");
	if (opt.mpi && opt.nodes > 0 && cmd_allreduce_mpi &&
	    opt.nodes != cmd_allreduce_mpi->size)
		return usage_error(allreduce_usage, "--nodes %ld but mpirun started %d ranks (--mpi: "
				   "one node per rank)", opt.nodes, cmd_allreduce_mpi->size);
	return 0;
}

/* ---------------------------------------------------------- the lists */
/* Split a comma list into out (pieces in *store); the count, or 0 after
 * a message. */
static size_t split(const char *o, const char *s, char **store, const char **out)
{
	size_t n = 0;
	char *p;

	*store = strdup(s);
	if (!*store) {
		error("out of memory");
		return 0;
	}
	for (p = *store;; p++) {
		char *c = strchr(p, ',');

		if (c)
			*c = 0;
		if (!*p || n == MAX_LIST) {
			error("%s '%s': not a comma list of at most %d values", o, s, MAX_LIST);
			return 0;
		}
		out[n++] = p;
		if (!c)
			return n;
		p = c;
	}
}

/* The number of values of a comma list. */
static uint32_t list_len(const char *s)
{
	uint32_t n = 1;

	for (; *s; s++)
		n += *s == ',';
	return n;
}

/* Split a comma list of any length: the pieces into *out (allocated, as
 * *store); the count, or 0 after a message (an empty piece). */
static size_t split_all(const char *o, const char *s, char **store, const char ***out)
{
	size_t n = list_len(s), k = 0;
	char *p;

	*store = strdup(s);
	*out = malloc(n * sizeof **out);
	if (!*store || !*out) {
		error("out of memory");
		return 0;
	}
	for (p = *store;; p++) {
		char *c = strchr(p, ',');

		if (c)
			*c = 0;
		if (!*p) {
			error("%s '%s': an empty file name", o, s);
			return 0;
		}
		(*out)[k++] = p;
		if (!c)
			return k;
		p = c;
	}
}

/* Every list of the sweep, parsed. */
struct lists {
	fpl_ar_algo algo[MAX_LIST];
	uint32_t group[MAX_LIST];
	struct spec comm[MAX_LIST], acc[MAX_LIST];
	struct scale scale[MAX_LIST];
	size_t nalgo, ngroup, ncomm, nacc, nscale;
	size_t ncombo;		/* configurations of the sweep */
	int has_hier, acc_default;
	char *store[5];
};

static void lists_release(struct lists *l)
{
	int i;

	for (i = 0; i < 5; i++)
		free(l->store[i]);
}

/*
 * A block format as a --comm item: SPEC or SPEC:MODE (fplab/block.h's
 * grammar; MODE as -r, for the elements).  1 when v is not spelled as a
 * block spec (the caller tries the plain formats), 0 with *b, *rnd and
 * *has_mode set, or -2 after a message.
 */
static int block_item(const char *o, const char *v, fpl_block_format *b, fpl_rnd *rnd,
		      int *has_mode)
{
	char err[256], head[CLI_SPEC_MAX];
	const char *colon = strrchr(v, ':');
	fpl_rnd r;

	if (!fpl_block_is_spec(v))
		return 1;
	*has_mode = 0;
	if (!fpl_block_parse(b, v, err, sizeof err))
		return 0;
	if (colon && !fpl_rnd_parse(colon + 1, &r) && (size_t)(colon - v) < sizeof head) {
		char err2[256];

		snprintf(head, sizeof head, "%.*s", (int)(colon - v), v);
		if (!fpl_block_parse(b, head, err2, sizeof err2)) {
			*rnd = r;
			*has_mode = 1;
			return 0;
		}
	}
	error("%s: %s", o, err[0] ? err : "not a block format");
	return -2;
}

/* --comm or --acc items into specs (mode: -r where the item gives none). */
static int specs(const char *o, const char *arg, char **store, struct spec *sp, size_t *n)
{
	const char *v[MAX_LIST];
	size_t i;
	int has_mode;

	if (!(*n = split(o, arg, store, v)))
		return -2;
	for (i = 0; i < *n; i++) {
		int rc;

		sp[i].rnd = opt.ro.rnd;
		sp[i].is_block = 0;
		rc = !strcmp(o, "--comm") ? block_item(o, v[i], &sp[i].blk, &sp[i].rnd, &has_mode)
			: 1;
		if (rc == 0) {
			sp[i].is_block = 1;
			sp[i].f = sp[i].blk.elem;
		} else if (rc < 0) {
			return -2;
		} else if (fpl_block_is_spec(v[i])) {
			return error("%s '%s': a block-scaled format is a communication format; the "
				     "accumulator (--acc) holds plain values", o, v[i]), -2;
		} else if (cli_format_spec(o, v[i], &sp[i].f, &sp[i].rnd, NULL, &has_mode)) {
			return -2;
		}
		snprintf(sp[i].spell, sizeof sp[i].spell, has_mode ? "%s" : "%s:%s", v[i],
			 fpl_rnd_name(sp[i].rnd));
	}
	return 0;
}

static int scales(const char *arg, char **store, struct lists *l)
{
	const char *v[MAX_LIST];
	size_t i;

	if (!(l->nscale = split("--scale", arg, store, v)))
		return -2;
	for (i = 0; i < l->nscale; i++) {
		struct scale *s = &l->scale[i];

		s->spell = v[i];
		if (!strcmp(v[i], "none")) {
			s->kind = FPL_AR_SCALE_NONE;
		} else if (!strcmp(v[i], "aps")) {
			s->kind = FPL_AR_SCALE_APS;
		} else if (!strncmp(v[i], "loss:", 5)) {
			s->kind = FPL_AR_SCALE_LOSS;
			if (cli_parse_double(v[i] + 5, &s->s) || !(s->s > 0) || !isfinite(s->s))
				return error("--scale '%s': expected loss:S with S > 0 finite", v[i]), -2;
		} else {
			char name[64];

			snprintf(name, sizeof name, "%.*s", (int)(strcspn(v[i], ":") % 63), v[i]);
			cli_unknown("scaling", name, scale_names, 3);
			return -2;
		}
	}
	return 0;
}

/* All lists, checked against P (0: not known yet).  0 or -2. */
static int make_lists(struct lists *l, uint32_t nodes)
{
	const char *v[MAX_LIST];
	size_t i, j;

	memset(l, 0, sizeof *l);
	l->algo[0] = FPL_AR_RING;
	l->nalgo = 1;
	if (opt.algo) {
		if (!(l->nalgo = split("--algo", opt.algo, &l->store[0], v)))
			return -2;
		for (i = 0; i < l->nalgo; i++)
			if (fpl_ar_algo_parse(v[i], &l->algo[i])) {
				cli_unknown("algorithm", v[i], algo_names, 5);
				return -2;
			}
	}
	for (i = 0; i < l->nalgo; i++)
		if (fpl_ar_algo_grouped(l->algo[i])) {
			if (!opt.group)
				return error("--algo %s needs --group G (the nodes per group)",
					     fpl_ar_algo_name(l->algo[i])), -2;
			l->has_hier = 1;
		}
	if (!l->has_hier && opt.group)
		return error("--group applies to --algo hier and hier-ring"), -2;
	l->ngroup = 1;
	if (opt.group) {
		if (!(l->ngroup = split("--group", opt.group, &l->store[1], v)))
			return -2;
		for (i = 0; i < l->ngroup; i++) {
			long g;

			if (cli_parse_long(v[i], &g) || g < 1 || g > 65536)
				return error("--group: '%s' is not a group size 1..65536", v[i]), -2;
			l->group[i] = (uint32_t)g;
			if (nodes && nodes % l->group[i])
				return error("--group %ld does not divide --nodes %u into equal groups",
					     g, nodes), -2;
		}
	}
	if (specs("--comm", opt.comm ? opt.comm : "fp32", &l->store[2], l->comm, &l->ncomm))
		return -2;
	l->acc_default = !opt.acc;
	if (opt.acc && specs("--acc", opt.acc, &l->store[3], l->acc, &l->nacc))
		return -2;
	if (!opt.acc)
		l->nacc = 1;	/* the --comm format of each combination */
	l->scale[0].spell = "none";
	l->nscale = 1;
	if (opt.scale && scales(opt.scale, &l->store[4], l))
		return -2;
	for (i = 0; i < l->ncomm; i++)
		for (j = 0; l->comm[i].is_block && j < l->nscale; j++) {
			if (l->scale[j].kind != FPL_AR_SCALE_NONE)
				return error("--comm %s with --scale %s: a block format carries its "
					     "own scales; give --scale none", l->comm[i].spell,
					     l->scale[j].spell), -2;
			if (opt.mpi)
				return error("--comm %s with --mpi: block formats over MPI are not "
					     "implemented (the simulation takes them)",
					     l->comm[i].spell), -2;
		}
	for (i = 0; i < l->nalgo; i++)
		for (j = 0; j < i; j++)
			if (l->algo[i] == l->algo[j])
				return error("--algo lists '%s' twice", algo_names[l->algo[i]]), -2;
	for (i = 0; i < l->nalgo; i++)
		l->ncombo += fpl_ar_algo_grouped(l->algo[i]) ? l->ngroup : 1;
	l->ncombo *= l->ncomm * l->nacc * l->nscale;
	return 0;
}

/* ---------------------------------------------------------- the report */
static const char *const cols[] = {
	"algo", "group", "comm", "acc", "scale", "layer", "n", "nodes", "steps",
	"bytes_per_node", "scale_log2", "mean_rel_error", "max_rel_error", "inexact",
	"underflow", "overflow", "saturated", "flushed", "invalid", "became_zero", "nan", "inf",
	"bits_per_value"	/* last: the columns before keep their places */
};
#define NCOLS (sizeof cols / sizeof *cols)

/* One combination of the sweep. */
struct combo {
	fpl_ar_config cfg;
	const char *comm, *acc, *scale;
	char group[16];
};

/* A row of layer `layer` (or the total); fp32: the layer is one of
 * --fp32-layers, reduced in binary32 in ne without scaling whatever c
 * says, and labelled so. */
static void row(struct cli_table *t, const struct combo *c, const char *layer,
		const fpl_ar_report *r, double scale_log2, int fp32)
{
	/* the engine's flag indices of the count columns, as cli_errstats */
	static const int flag[6] = { 0, 1, 2, 5, 6, 4 };
	int i;

	cli_table_str(t, fpl_ar_algo_name(c->cfg.algo));
	if (fpl_ar_algo_grouped(c->cfg.algo))
		cli_table_str(t, c->group);
	else
		cli_table_none(t);
	cli_table_str(t, fp32 ? "fp32:ne" : c->comm);
	cli_table_str(t, fp32 ? "fp32:ne" : c->acc);
	cli_table_str(t, fp32 ? "none" : c->scale);
	cli_table_str(t, layer);
	cli_table_int(t, (long long)r->n);
	cli_table_int(t, (long long)c->cfg.nodes);
	cli_table_int(t, (long long)r->steps);
	cli_table_int(t, (long long)r->bytes_sent);
	cli_table_num(t, scale_log2);
	cli_table_num(t, r->avg_rel);
	cli_table_num(t, r->max_rel);
	for (i = 0; i < 6; i++)
		cli_table_int(t, (long long)r->count[flag[i]]);
	cli_table_int(t, (long long)r->became_zero);
	cli_table_int(t, (long long)r->nan);
	cli_table_int(t, (long long)r->inf);
	cli_table_num(t, r->bits_per_value);
}

/* Add layer report r into the total tot (avg_rel holds the sum so far). */
static void add_total(fpl_ar_report *tot, const fpl_ar_report *r)
{
	int f;

	tot->n += r->n;
	tot->steps += r->steps;
	tot->bytes_sent += r->bytes_sent;
	tot->bits_per_value += r->bits_per_value * (double)r->n;	/* divided by n at the end */
	tot->avg_rel += r->avg_rel * (double)r->rel_n;
	tot->rel_n += r->rel_n;
	if (r->max_rel > tot->max_rel || isnan(r->max_rel))
		tot->max_rel = r->max_rel;
	tot->nan += r->nan;
	tot->inf += r->inf;
	tot->became_zero += r->became_zero;
	for (f = 0; f < FPL_NFLAGS; f++)
		tot->count[f] += r->count[f];
}

static size_t progress_done;	/* layers reduced so far, for the progress bar */

/* Hold layer y's numbers that binary64 cannot hold as c's cast reads them
 * (cli_layers_hold: --fp32-layers cast into binary32, ne); a warning, once
 * per combination (*warned), when they may round otherwise than the
 * numbers themselves. */
static void hold(const struct combo *c, struct cli_layer *y, int *warned)
{
	fpl_format f32;

	fpl_format_ieee(&f32, 8, 23);
	if (cli_layers_hold(y, y->fp32 ? &f32 : &c->cfg.comm, y->fp32 ? FPL_RND_NE
			    : c->cfg.comm_rnd, opt.ro.st.sr_bits) || *warned)
		return;
	*warned = 1;
	warning("layer '%s', --comm %s: a number of the inputs that binary64 cannot hold "
		"is cast from its nearest or odd binary64, not once from itself (see "
		"fplab-allreduce(1), reading a number once)", y->name, c->comm);
}

/* Run combination c over every layer: rows, then the total; out (the
 * sum of the layer sizes) receives the results. */
static int run_combo(struct cli_table *t, struct combo *c, struct cli_layers *ls, double *out)
{
	fpl_ar_report rep, tot;
	fpl_state st = opt.ro.st;
	const double **g = malloc(ls->nodes * sizeof *g);
	double k, kmin = INFINITY;
	size_t l, off = 0;
	uint32_t i;
	int rc = 0, warned = 0;

	if (!g)
		return error("out of memory");
	st.counter = 0;
	memset(&tot, 0, sizeof tot);
	for (l = 0; l < ls->n && !rc; l++) {
		struct cli_layer *y = &ls->l[l];

		for (i = 0; i < ls->nodes; i++)
			g[i] = y->g + (size_t)i * y->n;
		c->cfg.keep_fp32 = y->fp32;
		if (y->ninx)
			hold(c, y, &warned);
		if (cmd_allreduce_mpi) {
			rc = cmd_allreduce_mpi->allreduce(out + off, &rep, &c->cfg, g, y->n, &st,
							  opt.ro.st.threads);
			rep.bits_per_value = y->fp32 ? 32 : c->cfg.comm.nbits;	/* plain only */
		}
		else
			rc = fpl_allreduce(out + off, &rep, &c->cfg, g, y->n, &st);
		if (rc) {
			rc = error("layer '%s': %s", y->name, fpl_strerror(rc));
			break;
		}
		if (!rep.nodes_agree)
			warning("layer '%s': the nodes end with different bits (%s)", y->name,
				fpl_ar_algo_name(c->cfg.algo));
		k = c->cfg.scaling == FPL_AR_SCALE_LOSS && !y->fp32 ? log2(c->cfg.loss_scale)
			: rep.scale_log2;
		if (!y->fp32 && k < kmin)
			kmin = k;
		row(t, c, y->name, &rep, k, y->fp32);
		add_total(&tot, &rep);
		off += y->n;
		cli_progress_step(++progress_done);
	}
	if (!rc) {
		tot.avg_rel = tot.rel_n ? tot.avg_rel / (double)tot.rel_n : 0;
		tot.bits_per_value = tot.n ? tot.bits_per_value / (double)tot.n : 0;
		row(t, c, "total", &tot, isinf(kmin) ? 0 : kmin, 0);
	}
	free(g);
	return rc;
}

/* ----------------------------------------------------------- the inputs */
static int load(struct cli_layers *ls)
{
	int rc;

	memset(ls, 0, sizeof *ls);
	if (opt.layers) {
		rc = cli_layers_parse(ls, opt.layers);
		if (rc)
			return rc;
		return cli_layers_generate(ls, (uint32_t)opt.nodes, opt.ro.st.seed);
	}
	if (opt.inputs && cmd_allreduce_mpi && list_len(opt.inputs) != (uint32_t)opt.nodes) {
		error("--inputs names %u files but mpirun started %ld ranks: one file per node, "
		      "one node per rank", list_len(opt.inputs), opt.nodes);
		return -2;
	}
	if (opt.stacked)
		return cli_layers_read_stacked(ls, opt.stacked, opt.nodes > 0 ? (uint32_t)opt.nodes : 0);
	{
		const char **v = NULL;
		char *store = NULL;
		size_t n = split_all("--inputs", opt.inputs, &store, &v);

		if (!n) {
			free(store);
			free(v);
			return -2;
		}
		if (opt.nodes > 0 && (size_t)opt.nodes != n) {
			free(store);
			free(v);
			error("--nodes %ld but --inputs names %zu files, one per node", opt.nodes, n);
			return -2;
		}
		rc = cli_layers_read_nodes(ls, v, n);
		free(store);
		free(v);
		return rc;
	}
}

/* -o: the results of every layer, one tensor each, in their shapes. */
static int write_output(const struct cli_layers *ls, const double *out)
{
	struct cli_writer w;
	fpl_tensor_info info;
	uint64_t total = 0;
	size_t l, off = 0;
	int rc = 0;

	for (l = 0; l < ls->n; l++)
		total += ls->l[l].n;
	if (cli_writer_open(&w, opt.output, cli_out_from_path(opt.output, CLI_OUT_TEXT), NULL,
			    total))
		return -1;
	for (l = 0; l < ls->n && !rc; l++) {
		memset(&info, 0, sizeof info);
		snprintf(info.name, sizeof info.name, "%s", ls->l[l].name);
		info.dtype = FPL_DT_F64;
		info.ndim = ls->l[l].ndim;
		memcpy(info.shape, ls->l[l].shape, sizeof info.shape);
		info.count = ls->l[l].n;
		rc = cli_writer_tensor(&w, &info, FPL_DT_UNKNOWN);
		if (!rc)
			rc = cli_writer_put(&w, out + off, ls->l[l].n);
		off += ls->l[l].n;
	}
	return cli_writer_close(&w, !rc);
}

/* ------------------------------------------------------------- the run */
static int sweep(struct lists *li, struct cli_layers *ls, double *out)
{
	static struct spec fp32_acc;

	struct cli_table t;
	struct combo c;
	size_t a, g, m, k, s;
	int rc = 0;

	fpl_format_lookup(&fp32_acc.f, "fp32");
	fp32_acc.rnd = FPL_RND_NE;
	snprintf(fp32_acc.spell, sizeof fp32_acc.spell, "fp32:ne");
	cli_table_begin(&t, stdout, opt.report, cols, (int)NCOLS);
	progress_done = 0;
	if (!cmd_allreduce_mpi || !cmd_allreduce_mpi->rank)
		cli_progress_start("allreduce", li->ncombo * ls->n);
	for (a = 0; a < li->nalgo && !rc; a++)
		for (g = 0; g < (fpl_ar_algo_grouped(li->algo[a]) ? li->ngroup : 1) && !rc; g++)
			for (m = 0; m < li->ncomm && !rc; m++)
				for (k = 0; k < li->nacc && !rc; k++)
					for (s = 0; s < li->nscale && !rc; s++) {
						const struct spec *acc = li->acc_default ? &li->comm[m]
							: &li->acc[k];

						if (li->acc_default && li->comm[m].is_block)
							acc = &fp32_acc;	/* a block format is no accumulator */

						fpl_ar_config_init(&c.cfg);
						c.cfg.algo = li->algo[a];
						c.cfg.nodes = ls->nodes;
						c.cfg.group = fpl_ar_algo_grouped(li->algo[a]) ? li->group[g] : 1;
						c.cfg.comm = li->comm[m].f;
						c.cfg.comm_is_block = li->comm[m].is_block;
						c.cfg.comm_block = li->comm[m].blk;
						c.cfg.comm_rnd = li->comm[m].rnd;
						c.cfg.acc = acc->f;
						c.cfg.acc_rnd = acc->rnd;
						c.cfg.scaling = li->scale[s].kind;
						c.cfg.loss_scale = li->scale[s].kind == FPL_AR_SCALE_LOSS
							? li->scale[s].s : 1;
						c.cfg.threads = opt.ro.st.threads;
						c.comm = li->comm[m].spell;
						c.acc = acc->spell;
						c.scale = li->scale[s].spell;
						snprintf(c.group, sizeof c.group, "%u", c.cfg.group);
						rc = run_combo(&t, &c, ls, out);
					}
	cli_progress_end();
	if (rc)
		cli_table_abandon(&t);
	else
		cli_table_end(&t);
	return rc;
}

/* ------------------------------------------------------------ --mpi */
/* The fplab-mpi next to this fplab (the build or install directory),
 * else "fplab-mpi" for a search of PATH. */
static const char *mpi_helper(char *buf, size_t len)
{
	ssize_t k = readlink("/proc/self/exe", buf, len - 16);
	char *slash;

	if (k > 0) {
		buf[k] = 0;
		slash = strrchr(buf, '/');
		if (slash) {
			strcpy(slash + 1, "fplab-mpi");
			if (!access(buf, X_OK))
				return buf;
		}
	}
	return "fplab-mpi";
}

/* Does argv ask for --mpi (before a "--")? */
static int wants_mpi(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--mpi"))
			return 1;
	return 0;
}

/*
 * `mpirun -np P fplab allreduce --mpi ...`: each rank becomes
 * `fplab-mpi allreduce ...` with the same arguments (exec keeps the
 * process MPI started), which parses, checks and reports with this very
 * file.  Returns only on error.
 */
static int mpi_exec(int argc, char **argv)
{
	char **av = malloc(((size_t)argc + 2) * sizeof *av), path[PATH_MAX];
	int i;

	if (!av)
		return error("out of memory"), CLI_EXIT_FAIL;
	av[0] = "fplab-mpi";
	av[1] = "allreduce";
	for (i = 1; i < argc; i++)
		av[i + 1] = argv[i];
	av[argc + 1] = NULL;
	if (cli_flush_stdout()) {
		free(av);
		return CLI_EXIT_FAIL;
	}
	execvp(mpi_helper(path, sizeof path), av);
	error("--mpi: cannot run %s: %s (build it with `make`, which needs Open MPI's "
	      "mpicc)", mpi_helper(path, sizeof path), strerror(errno));
	free(av);
	return CLI_EXIT_FAIL;
}

/*
 * On MPI ranks other than 0: stdout goes nowhere (rank 0 prints the
 * report), and stderr into a temporary file until the inputs are read, so
 * that a message every rank would print (a usage error, a missing file)
 * is printed once, by rank 0, and one that only this rank has is still
 * shown (hush_end with show).
 */
struct hush {
	int saved;
	FILE *tmp;
};

static void hush_begin(struct hush *h)
{
	int null = open("/dev/null", O_WRONLY);

	fflush(stdout);
	if (null >= 0) {
		dup2(null, STDOUT_FILENO);
		close(null);
	}
	fflush(stderr);
	h->saved = -1;
	h->tmp = tmpfile();
	if (h->tmp && (h->saved = dup(STDERR_FILENO)) >= 0)
		dup2(fileno(h->tmp), STDERR_FILENO);
}

static void hush_end(struct hush *h, int show)
{
	char buf[4096];
	size_t k;

	fflush(stderr);
	if (h->saved >= 0) {
		dup2(h->saved, STDERR_FILENO);
		close(h->saved);
		h->saved = -1;
	}
	if (!h->tmp)
		return;
	if (show) {
		rewind(h->tmp);
		while ((k = fread(buf, 1, sizeof buf, h->tmp)) > 0)
			fwrite(buf, 1, k, stderr);
	}
	fclose(h->tmp);
	h->tmp = NULL;
}

/* FNV-1a (by 64-bit words) over the layers' sizes and every node's
 * values: the ranks of an MPI run must have read the same gradients
 * (files can differ from machine to machine). */
static unsigned long long fingerprint(const struct cli_layers *ls)
{
	unsigned long long h = 14695981039346656037ULL;
	size_t l, k;

	for (l = 0; l < ls->n; l++) {
		size_t len = ls->l[l].n * ls->nodes;

		h = (h ^ ls->l[l].n) * 1099511628211ULL;
		for (k = 0; k < len; k++) {	/* a word at a time */
			uint64_t w;

			memcpy(&w, ls->l[l].g + k, sizeof w);
			h = (h ^ w) * 1099511628211ULL;
		}
	}
	return h;
}

/* The inputs and the lists against them: 0, CLI_EXIT_USAGE or
 * CLI_EXIT_FAIL (message printed). */
static int prepare(struct lists *li, struct cli_layers *ls)
{
	int rc = load(ls);

	if (!rc && opt.fp32)
		rc = cli_layers_fp32(ls, opt.fp32);
	if (!rc && (rc = make_lists(li, ls->nodes)))
		lists_release(li);
	if (!rc && opt.output && li->ncombo > 1) {
		rc = usage_error(allreduce_usage, "-o %s: a sweep of %zu configurations has no "
				 "single result; run one to write it", opt.output, li->ncombo);
		lists_release(li);
		return rc;
	}
	if (!rc)
		return 0;
	return rc == -2 ? usage_error(allreduce_usage, NULL) : CLI_EXIT_FAIL;
}

int cmd_allreduce(int argc, char **argv)
{
	const struct ar_backend *be = cmd_allreduce_mpi;
	struct hush h = { -1, NULL };
	struct lists li;
	struct cli_layers ls;
	double *out = NULL;
	size_t l, total = 0;
	int rc, alone = 0;

	if (!be && wants_mpi(argc, argv))
		return mpi_exec(argc, argv);
	if (be && be->rank)
		hush_begin(&h);
	rc = parse_args(argc, argv);
	if (rc) {
		rc = rc < 0 ? usage_help(allreduce_usage) : rc;
		hush_end(&h, 0);
		return rc;
	}
	if (be)
		opt.nodes = be->size;
	if (!opt.ro.has_threads) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);

		opt.ro.st.threads = be ? 1 : cores < 1 ? 1 : cores > 1024 ? 1024 : (int)cores;
	}
	/* the lists first (usage errors before any file is read), against P
	 * when it is known */
	rc = make_lists(&li, opt.nodes > 0 ? (uint32_t)opt.nodes : opt.inputs ? list_len(opt.inputs)
			: 0);
	lists_release(&li);
	if (rc) {
		rc = usage_error(allreduce_usage, NULL);
		hush_end(&h, 0);
		return rc;
	}
	memset(&ls, 0, sizeof ls);
	rc = prepare(&li, &ls);
	if (be)		/* the inputs may differ from rank to rank */
		rc = be->agree(rc, &alone);
	hush_end(&h, alone);
	if (!rc && be && !be->same(fingerprint(&ls))) {
		if (!be->rank)
			error("the ranks read different gradients (files that differ from machine "
			      "to machine?): every rank needs the same inputs");
		lists_release(&li);
		rc = CLI_EXIT_FAIL;
	}
	if (rc) {
		cli_layers_release(&ls);
		return rc;
	}
	for (l = 0; l < ls.n; l++)
		total += ls.l[l].n;
	if (!(out = malloc((total + 1) * sizeof *out))) {
		error("out of memory");
		rc = CLI_EXIT_FAIL;
		goto done;
	}
	rc = sweep(&li, &ls, out);
	if (!rc && opt.output && (!be || !be->rank))
		rc = write_output(&ls, out);
	rc = rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
done:
	free(out);
	lists_release(&li);
	cli_layers_release(&ls);
	return rc;
}

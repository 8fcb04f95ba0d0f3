/* SPDX-License-Identifier: MIT */
/*
 * cmd_optim.c - `fplab optim`: N optimizer steps (fplab/optim.h) on the
 * same weights and true gradients under several precision policies side
 * by side and under the FP64 reference, reporting what each policy lost:
 * updates that vanished, the drift of its weights and master from the
 * reference's, the loss scale and skipped steps, overflow and underflow
 * counts, memory per parameter; --svg plots drift and the vanished
 * fraction against the step.
 *
 * Invariant: every run (the reference and each policy) is its own
 * fpl_optim created from the same initial weights and a fresh state of
 * the run's seed, and step s hands every run the same true gradients
 * (cli_optim_grads, a pure function of seed, tensor and step), so a
 * policy's rows do not depend on which other policies run beside it nor
 * on --threads (the runs of a step go to threads, each run's bits are
 * the library's).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fplab/optim.h>

#include "cli/cli.h"
#include "cli/cli_plot.h"

static const char optim_usage[] =
	"usage: fplab optim [--optim sgd|adagrad|adam|adamw|lamb] [--lr X]\n"
	"    [--momentum X] [--dampening X] [--nesterov] [--weight-decay X]\n"
	"    [--lr-decay X] [--initial-accumulator X] [--betas B1,B2] [--eps X]\n"
	"    [--policy SPEC]...\n"
	"    [--loss-scale none|S|dynamic[:INIT[:GROWTH[:BACKOFF[:INTERVAL]]]]|aps]\n"
	"    [--steps N] [--every N] [--sizes N,...] [--weights GEN[;GEN...]]\n"
	"    [--grads GEN[;GEN...]] [--spikes P:F] [--init FILE] [-g FILE]...\n"
	"    [--grad-stack FILE] [--seed N] [--sr-bits R] [--threads N] [--svg FILE]\n"
	"    [--tsv|--json|--ndjson]\n";

enum {
	OPT_POLICY = CLI_OPT_CMD, OPT_LOSS_SCALE, OPT_STEPS, OPT_EVERY, OPT_SIZES, OPT_WEIGHTS, OPT_GRADS, OPT_SPIKES, OPT_INIT, OPT_GRAD_STACK,
	OPT_SVG
};

#define MAX_POLICIES 64
#define MAX_STEP_FILES 65536
#define SVG_POINTS 2000		/* points per series at most (steps are bucketed) */

static const char *const default_policies[] = {
	"none:fp16", "fp32-master:fp16", "none:bf16", "split:bf16"
};
static const char *const master_names[] = { "none", "fp32-master", "split", "kahan",
					      "stochastic" };

static struct optim_opts {
	struct cli_round ro;		/* --seed, --sr-bits, --threads */
	struct cli_hyper hy;		/* --optim and the hyperparameters as given */
	fpl_opt_hyper hyper;
	const char *policy[MAX_POLICIES];
	size_t npolicy;
	const char *loss_scale;
	uint64_t steps, every;
	int has_steps;
	const char *sizes, *weights, *grads, *spikes, *init, *stack, *svg;
	const char **gfiles;
	size_t ngfiles;
	enum cli_report report;
} opt;

/* ------------------------------------------------------------ parsing */
/* A count option 1..max.  0 or CLI_EXIT_USAGE. */
static int count(const char *o, const char *s, uint64_t max, uint64_t *out)
{
	if (cli_parse_u64(s, out) || *out < 1 || *out > max)
		return usage_error(optim_usage, "%s '%s' is not a count 1..%llu", o, s,
				   (unsigned long long)max);
	return 0;
}

static int parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seed", required_argument, NULL, CLI_OPT_SEED },
		{ "sr-bits", required_argument, NULL, CLI_OPT_SR_BITS },
		{ "threads", required_argument, NULL, CLI_OPT_THREADS },
		CLI_REPORT_LONGOPTS,
		CLI_HYPER_LONGOPTS,
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "loss-scale", required_argument, NULL, OPT_LOSS_SCALE },
		{ "steps", required_argument, NULL, OPT_STEPS },
		{ "every", required_argument, NULL, OPT_EVERY },
		{ "sizes", required_argument, NULL, OPT_SIZES },
		{ "weights", required_argument, NULL, OPT_WEIGHTS },
		{ "grads", required_argument, NULL, OPT_GRADS },
		{ "spikes", required_argument, NULL, OPT_SPIKES },
		{ "init", required_argument, NULL, OPT_INIT },
		{ "grad", required_argument, NULL, 'g' },
		{ "grad-stack", required_argument, NULL, OPT_GRAD_STACK },
		{ "svg", required_argument, NULL, OPT_SVG },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, rc;

	memset(&opt, 0, sizeof opt);
	opt.steps = 1000;
	optind = 0;
	cli_round_init(&opt.ro);
	cli_hyper_init(&opt.hy);
	opt.gfiles = calloc((size_t)argc + 1, sizeof *opt.gfiles);
	if (!opt.gfiles)
		return error("out of memory"), CLI_EXIT_FAIL;
	while ((c = getopt_long(argc, argv, "hg:", longopts, NULL)) != -1) {
		rc = cli_round_option(&opt.ro, c, optarg);
		if (!rc)
			rc = cli_hyper_option(&opt.hy, c, optarg);
		if (rc < 0)
			return usage_error(optim_usage, NULL);
		if (rc > 0 || cli_report_option(&opt.report, c))
			continue;
		switch (c) {
		case 'h': return -1;
		case OPT_POLICY:
			if (opt.npolicy == MAX_POLICIES)
				return usage_error(optim_usage, "more than %d --policy options",
						   MAX_POLICIES);
			opt.policy[opt.npolicy++] = optarg;
			break;
		case OPT_LOSS_SCALE: opt.loss_scale = optarg; break;
		case OPT_STEPS:
			if (count("--steps", optarg, (uint64_t)1 << 32, &opt.steps))
				return CLI_EXIT_USAGE;
			opt.has_steps = 1;
			break;
		case OPT_EVERY:
			if (count("--every", optarg, (uint64_t)1 << 32, &opt.every))
				return CLI_EXIT_USAGE;
			break;
		case OPT_SIZES: opt.sizes = optarg; break;
		case OPT_WEIGHTS: opt.weights = optarg; break;
		case OPT_GRADS: opt.grads = optarg; break;
		case OPT_SPIKES: opt.spikes = optarg; break;
		case OPT_INIT: opt.init = optarg; break;
		case 'g': opt.gfiles[opt.ngfiles++] = optarg; break;
		case OPT_GRAD_STACK: opt.stack = optarg; break;
		case OPT_SVG:
			if (!cli_plot_svg_name_ok(optarg))
				return usage_error(optim_usage, "--svg '%s': the picture is SVG: give a "
						   "name ending in .svg (or - for stdout)", optarg);
			opt.svg = optarg;
			break;
		default: return usage_error(optim_usage, NULL);
		}
	}
	if (optind < argc)
		return usage_error(optim_usage, "unexpected argument '%s'", argv[optind]);
	return 0;
}

/* --loss-scale or a policy's scale= (o names it): fpl_opt_scaler_parse's
 * spelling, an unknown word with a suggestion.  0 or -2. */
static int scaling(const char *o, const char *s, fpl_opt_scaler *sc)
{
	static const char *const names[] = { "none", "dynamic", "aps" };
	char err[512], name[64];
	int rc = fpl_opt_scaler_parse(sc, s, err, sizeof err);

	if (rc == FPL_ENOTFOUND) {
		snprintf(name, sizeof name, "%.*s", (int)(strcspn(s, ":") % 63), s);
		cli_unknown("loss scaling", name, names, 3);
	} else if (rc) {
		error("%s %s", o, err);
	}
	return rc ? -2 : 0;
}

/* One run: a policy (or the reference) and what it has lost so far. */
struct run {
	const char *name;	/* the SPEC as written; NULL for the reference */
	fpl_opt_config cfg;
	fpl_optim *o;
	fpl_opt_report rep;	/* of the last step */
	int rc;			/* of the last step */
	uint64_t nonzero, vanished, stale, skipped, ovf, unf, gunf;
	uint64_t bnz, bvan;	/* the current SVG bucket */
	fpl_block_stats blk;	/* block events of every slot, every step */
	fpl_opt_memory mem;
	double *m;		/* the carrier (fpl_optim_master), all tensors */
	double *drift_s, *vfrac_s;	/* SVG series */
	double **G;		/* its gradients when the files hold numbers that
				 * binary64 cannot hold (cli_optim_hold_grads) */
	size_t nG;		/* buffers of G */
	int warned;		/* of such a number (hold_warning) */
};

/* An arithmetic slot (arith, unscale) given a block format (fplab/block.h):
 * refused, the semantic rule of fplab-optim(1).  -2 after the message. */
static int block_refused(const char *o, const char *v)
{
	error("%s '%s' is a block-scaled format: an arithmetic slot rounds the result of each "
	      "scalar operation, and a block's scale, a function of a whole block of stored "
	      "values, cannot define one result; give a plain format (weight, master, grad and "
	      "state take block formats)", o, v);
	return -2;
}

/*
 * BLOCK[:MODE] (fplab/block.h's spelling, its own fields included; a last
 * field that is a mode by its name rounds the elements) into b and, with
 * a mode, *rnd (*has_mode = 1).  1 when v is not spelled as a block spec,
 * 0, or -2 after a message naming o.
 */
static int block_value(const char *o, const char *v, fpl_block_format *b, fpl_rnd *rnd,
		       int *has_mode)
{
	char err[256], e2[256], head[256];
	const char *colon = strrchr(v, ':');
	fpl_rnd r;

	*has_mode = 0;
	if (!fpl_block_is_spec(v))
		return 1;
	if (!fpl_block_parse(b, v, err, sizeof err))
		return 0;
	if (colon && strlen(v) < sizeof head && !fpl_rnd_parse(colon + 1, &r)
	    && !strcmp(colon + 1, fpl_rnd_name(r))) {
		snprintf(head, sizeof head, "%.*s", (int)(colon - v), v);
		if (!fpl_block_parse(b, head, e2, sizeof e2)) {
			*rnd = r;
			*has_mode = 1;
			return 0;
		}
	}
	if (err[0])
		error("%s: %s", o, err);
	else
		error("%s '%s': not a block format", o, v);
	return -2;
}

/* A storage slot's value, plain FMT[:MODE] or BLOCK[:MODE], into f, rnd
 * and (*is_block, b); arith and unscale (b NULL) take plain ones only. */
static int key_format(const char *spec, const char *key, const char *v, fpl_format *f,
		      fpl_rnd *rnd, int *is_block, fpl_block_format *b)
{
	char o[96];
	fpl_block_format nb;
	int has_mode, rc;

	snprintf(o, sizeof o, "--policy '%s': %s", spec, key);
	if (!b && fpl_block_is_spec(v))
		return block_refused(o, v);
	if (b && (rc = block_value(o, v, &nb, rnd, &has_mode)) != 1) {
		if (rc)
			return rc;
		*is_block = 1;
		*b = nb;
		*f = nb.elem;
		return 0;
	}
	if (cli_format_spec(o, v, f, rnd, NULL, &has_mode))
		return -2;
	if (is_block)
		*is_block = 0;
	return 0;
}

static int key_mode(const char *spec, const char *key, const char *v, fpl_rnd *rnd)
{
	if (fpl_rnd_parse(v, rnd))
		return error("--policy '%s': %s '%s' is not a rounding mode (ne na nz tp tn tz "
			     "od sp se)", spec, key, v), -2;
	return 0;
}

/* KEY=VALUE of policy `spec` into p and sc; 0 or -2. */
static int policy_key(const char *spec, char *kv, fpl_opt_policy *p, fpl_opt_scaler *sc,
		      int *has_scale)
{
	static const char *const keys[] = { "grad", "grad-rnd", "unscale", "unscale-rnd",
					     "state", "state-rnd", "arith", "arith-rnd", "master",
					     "scale" };
	char *eq = strchr(kv, '='), *v;
	fpl_rnd ignore;

	if (!eq || eq == kv)
		return error("--policy '%s': '%s' is not KEY=VALUE", spec, kv), -2;
	*eq = 0;
	v = eq + 1;
	if (!strcmp(kv, "grad"))
		return key_format(spec, kv, v, &p->grad, &p->grad_rnd, &p->grad_is_block,
				  &p->grad_block);
	if (!strcmp(kv, "grad-rnd"))
		return key_mode(spec, kv, v, &p->grad_rnd);
	if (!strcmp(kv, "unscale"))
		return key_format(spec, kv, v, &p->unscale, &p->unscale_rnd, NULL, NULL);
	if (!strcmp(kv, "unscale-rnd"))
		return key_mode(spec, kv, v, &p->unscale_rnd);
	if (!strcmp(kv, "state"))
		return key_format(spec, kv, v, &p->state, &p->state_rnd, &p->state_is_block,
				  &p->state_block);
	if (!strcmp(kv, "state-rnd"))
		return key_mode(spec, kv, v, &p->state_rnd);
	if (!strcmp(kv, "arith"))
		return key_format(spec, kv, v, &p->arith, &p->arith_rnd, NULL, NULL);
	if (!strcmp(kv, "arith-rnd"))
		return key_mode(spec, kv, v, &p->arith_rnd);
	if (!strcmp(kv, "master")) {
		if (p->master != FPL_MASTER_FP32 && p->master != FPL_MASTER_SPLIT)
			return error("--policy '%s': master= applies to fp32-master and split",
				     spec), -2;
		ignore = FPL_RND_NE;
		if (key_format(spec, kv, v, &p->master_fmt, &ignore, &p->master_is_block,
			       &p->master_block))
			return -2;
		if (p->master_is_block && p->master == FPL_MASTER_SPLIT)
			return error("--policy '%s': master=%s is a block format; split's master is "
				     "binary32 (the weight is its top bits): a block master needs "
				     "fp32-master", spec, v), -2;
		if (p->master_is_block && ignore != FPL_RND_NE)
			return error("--policy '%s': master=%s: the master is rounded in ne, its "
				     "elements too", spec, v), -2;
		return 0;
	}
	if (!strcmp(kv, "scale")) {
		char o[96];

		snprintf(o, sizeof o, "--policy '%s': scale", spec);
		*has_scale = 1;
		return scaling(o, v, sc);
	}
	cli_unknown("policy key", kv, keys, sizeof keys / sizeof *keys);
	return -2;
}

/* STRATEGY:FORMAT[:MODE][,KEY=VALUE...] into r's config; 0 or -2. */
static int policy(const char *spec, struct run *r, const fpl_opt_scaler *dflt)
{
	char buf[512], *colon, *comma, *kv, *save = NULL;
	fpl_opt_master m;
	fpl_format w;
	fpl_block_format wb;
	fpl_rnd rnd = FPL_RND_NE;
	int has_mode, has_scale = 0, rc, is_block;

	if (strlen(spec) >= sizeof buf)
		return error("--policy '%.40s...': too long", spec), -2;
	snprintf(buf, sizeof buf, "%s", spec);
	colon = strchr(buf, ':');
	comma = strchr(buf, ',');
	if (!colon || (comma && comma < colon))
		return error("--policy '%s': expected STRATEGY:FORMAT[:MODE][,KEY=VALUE...] "
			     "(STRATEGY one of none fp32-master split kahan stochastic)", spec), -2;
	*colon = 0;
	if (fpl_opt_master_parse(buf, &m)) {
		char o[64];

		snprintf(o, sizeof o, "strategy");
		cli_unknown(o, buf, master_names, 5);
		return -2;
	}
	if (comma && (!comma[1] || comma[strlen(comma) - 1] == ',' || strstr(comma, ",,")))
		return error("--policy '%s': an empty KEY=VALUE", spec), -2;
	if (comma)
		*comma = 0;
	is_block = block_value("--policy", colon + 1, &wb, &rnd, &has_mode);
	if (is_block < 0)
		return -2;
	is_block = !is_block;
	if (!is_block && cli_format_spec("--policy", colon + 1, &w, &rnd, NULL, &has_mode))
		return -2;
	rc = is_block ? fpl_opt_policy_preset_block(&r->cfg.policy, m, &wb)
		      : fpl_opt_policy_preset(&r->cfg.policy, m, &w);
	if (is_block && rc)
		return error("--policy '%s': %s keeps %s; a block weight takes none, stochastic "
			     "or fp32-master", spec, fpl_opt_master_name(m), m == FPL_MASTER_SPLIT
			     ? "the weight as the top bits of a binary32 master"
			     : "a compensation computed in the weight's format"), -2;
	if (rc == FPL_EFORMAT)
		return error("--policy '%s': split needs a weight format that is the top bits of "
			     "binary32 (8 exponent bits, fewer than 23 fraction bits: bf16, e8m3...)",
			     spec), -2;
	if (rc)
		return error("--policy '%s': %s", spec, fpl_strerror(rc)), -2;
	if (has_mode) {
		if (m == FPL_MASTER_STOCHASTIC) {
			if (rnd != FPL_RND_SP && rnd != FPL_RND_SE)
				return error("--policy '%s': stochastic rounds the weight in sp or se, "
					     "not %s", spec, fpl_rnd_name(rnd)), -2;
			r->cfg.policy.weight_sr = rnd;
		} else if (m == FPL_MASTER_SPLIT && rnd != FPL_RND_TZ) {
			return error("--policy '%s': split stores the truncation of the master "
				     "(tz), not %s", spec, fpl_rnd_name(rnd)), -2;
		} else {
			r->cfg.policy.weight_rnd = rnd;
		}
	}
	r->cfg.scaler = *dflt;
	for (kv = comma ? strtok_r(comma + 1, ",", &save) : NULL; kv;
	     kv = strtok_r(NULL, ",", &save))
		if (policy_key(spec, kv, &r->cfg.policy, &r->cfg.scaler, &has_scale))
			return -2;
	if (r->cfg.policy.grad_is_block && r->cfg.scaler.kind == FPL_OPT_SCALE_APS)
		return error("--policy '%s': the gradients are a block format (%s), whose block "
			     "scales do what APS's per-tensor shift would; give scale=none, S or "
			     "dynamic", spec, r->cfg.policy.grad_block.name), -2;
	r->name = spec;
	return 0;
}

/* ------------------------------------------------------------ the run */
/* A run's first rounding of a number of the files may not be the number's. */
static void hold_warning(const struct run *r, const char *what)
{
	warning("%s: %s: a number that binary64 cannot hold is rounded from its nearest or "
		"odd binary64, not once from itself (see fplab-optim(1), reading a number once)",
		r->name ? r->name : "the FP64 reference", what);
}

static void free_buffers(double **G, size_t n)
{
	size_t j;

	for (j = 0; G && j < n; j++)
		free(G[j]);
	free(G);
}

/* One gradient buffer per tensor of d; NULL when out of memory. */
static double **grad_buffers(const struct cli_optim_data *d)
{
	double **G = calloc(d->nt, sizeof *G);
	size_t j;

	for (j = 0; G && j < d->nt; j++)
		if (!(G[j] = malloc((d->sizes[j] + 1) * sizeof *G[j]))) {
			free_buffers(G, j);
			return NULL;
		}
	return G;
}

static int make_runs(struct run *runs, size_t nrun, const struct cli_optim_data *d)
{
	fpl_state st = opt.ro.st;
	size_t i;
	int rc;

	st.counter = 0;
	for (i = 0; i < nrun; i++) {
		struct run *r = &runs[i];

		r->cfg.hyper = opt.hyper;
		r->cfg.shapes = d->shapes;
		r->cfg.threads = opt.ro.st.threads / (int)nrun > 1 ? opt.ro.st.threads / (int)nrun : 1;
		if (!cli_optim_hold_w0(d, &r->cfg.policy, opt.ro.st.sr_bits))
			hold_warning(r, "the initial weights");
		rc = fpl_optim_create(&r->o, &r->cfg, d->nt, d->sizes,
				      (const double *const *)d->w0, &st);
		if (rc)
			return error("%s: %s", r->name ? r->name : "the FP64 reference",
				     fpl_strerror(rc));
		fpl_opt_memory_per_param(&r->cfg, &r->mem);
		r->m = malloc((d->total + 1) * sizeof *r->m);
		if (!r->m || (d->ginx_any && !(r->G = grad_buffers(d))))
			return error("out of memory");
		r->nG = r->G ? d->nt : 0;
	}
	return 0;
}

struct step_job {
	struct run *runs;
	size_t lo, hi, stride;
	const double *const *G;
};

static void *step_runs(void *arg)
{
	struct step_job *j = arg;
	size_t i;

	for (i = j->lo; i < j->hi; i += j->stride)
		j->runs[i].rc = fpl_optim_step(j->runs[i].o, j->runs[i].G
					       ? (const double *const *)j->runs[i].G : j->G,
					       &j->runs[i].rep);
	return NULL;
}

/* One step of every run, the runs spread over up to `threads` threads. */
static int step_all(struct run *runs, size_t nrun, const double *const *G, int threads)
{
	pthread_t tid[MAX_POLICIES + 1];
	struct step_job job[MAX_POLICIES + 1];
	size_t t, nt = (size_t)threads < nrun ? (size_t)threads : nrun, started = 0;

	if (nt < 1)
		nt = 1;
	for (t = 0; t < nt; t++)
		job[t] = (struct step_job){ runs, t, nrun, nt, G };
	for (t = 1; t < nt; t++) {
		if (pthread_create(&tid[t], NULL, step_runs, &job[t]))
			break;
		started = t;
	}
	for (t = started + 1; t < nt; t++)	/* threads that did not start */
		step_runs(&job[t]);
	step_runs(&job[0]);
	for (t = 1; t <= started; t++)
		pthread_join(tid[t], NULL);
	for (t = 0; t < nrun; t++)
		if (runs[t].rc)
			return error("step failed (%s): %s", runs[t].name ? runs[t].name
				     : "the FP64 reference", fpl_strerror(runs[t].rc));
	return 0;
}

/* Add a step's report into the run's cumulative counts. */
static void account(struct run *r)
{
	const fpl_opt_report *p = &r->rep;
	int i;

	r->nonzero += p->nonzero;
	r->vanished += p->vanished;
	r->stale += p->stale;
	r->skipped += (uint64_t)!!p->skipped;
	r->ovf += p->grad_count[2] + p->update_count[2];
	r->unf += p->grad_count[1] + p->update_count[1];
	r->gunf += p->grad_count[1];
	r->bnz += p->nonzero;
	r->bvan += p->vanished;
	for (i = 0; i < FPL_OPT_NSLOTS; i++) {
		r->blk.elements += p->block[i].elements;
		r->blk.saturated += p->block[i].saturated;
		r->blk.flushed += p->block[i].flushed;
		r->blk.amax_saturated += p->block[i].amax_saturated;
		r->blk.scale_range += p->block[i].scale_range;
	}
}

/* Does r's policy hold a block format in some slot? */
static int has_blocks(const struct run *r)
{
	const fpl_opt_policy *p = &r->cfg.policy;

	return p->weight_is_block || p->master_is_block || p->grad_is_block || p->state_is_block;
}

/* ||a - b|| / ||b|| over n values (0 when equal; inf when ||b|| is 0). */
static double rel_dist(const double *a, const double *b, size_t n)
{
	double num = 0, den = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		double e = a[i] - b[i];

		if (a[i] == b[i])
			e = 0;	/* equal infinities */
		num += e * e;
		den += b[i] * b[i];
	}
	if (num == 0)
		return 0;
	return den == 0 ? INFINITY : sqrt(num / den);
}

/* The stored weights of all tensors into out. */
static void weights(const fpl_optim *o, const struct cli_optim_data *d, double *out)
{
	size_t j;

	for (j = 0; j < d->nt; j++) {
		memcpy(out, fpl_optim_weights(o, j), d->sizes[j] * sizeof *out);
		out += d->sizes[j];
	}
}

static void masters(const fpl_optim *o, const struct cli_optim_data *d, double *out)
{
	size_t j;

	for (j = 0; j < d->nt; j++) {
		fpl_optim_master(o, j, out);
		out += d->sizes[j];
	}
}

/* Split: the fraction of stored weights that differ from the master
 * rounded to nearest even into the weight format (m holds the master). */
static double split_differs(const struct run *r, const struct cli_optim_data *d)
{
	fpl_state st;
	uint64_t diff = 0;
	size_t j, i, k = 0;

	fpl_state_init(&st, 0);
	for (j = 0; j < d->nt; j++) {
		const double *w = fpl_optim_weights(r->o, j);

		for (i = 0; i < d->sizes[j]; i++, k++) {
			double ne = fpl_round(&r->cfg.policy.weight, r->m[k], FPL_RND_NE, &st);

			diff += !(ne == w[i] && signbit(ne) == signbit(w[i])) &&
				!(isnan(ne) && isnan(w[i]));
		}
	}
	return d->total ? (double)diff / (double)d->total : 0;
}

static const char *const cols[] = {
	"policy", "optim", "step", "nonzero", "vanished", "vanished_frac", "stale_frac", "drift",
	"master_drift", "loss_scale", "skipped", "opt_overflow", "opt_underflow", "grad_underflow",
	"bytes_per_param", "weight_bytes", "master_bytes", "state_bytes", "split_rne_differs",
	"saturated", "flushed", "amax_saturated", "scale_clamped"
};
#define NCOLS (sizeof cols / sizeof *cols)

static double frac(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

/* One report row of run r after step `step` (ref: the reference run,
 * its weights in wref; w a scratch buffer). */
static void row(struct cli_table *t, struct run *r, uint64_t step, const double *wref,
		double *w, const struct cli_optim_data *d)
{
	cli_table_str(t, r->name);
	cli_table_str(t, fpl_opt_algo_name(opt.hyper.algo));
	cli_table_int(t, (long long)step);
	cli_table_int(t, (long long)r->nonzero);
	cli_table_int(t, (long long)r->vanished);
	cli_table_num(t, frac(r->vanished, r->nonzero));
	cli_table_num(t, frac(r->stale, r->nonzero));
	weights(r->o, d, w);
	cli_table_num(t, rel_dist(w, wref, d->total));
	masters(r->o, d, r->m);
	cli_table_num(t, rel_dist(r->m, wref, d->total));
	cli_table_num(t, r->rep.scale);
	cli_table_int(t, (long long)r->skipped);
	cli_table_int(t, (long long)r->ovf);
	cli_table_int(t, (long long)r->unf);
	cli_table_int(t, (long long)r->gunf);
	cli_table_num(t, r->mem.total);
	cli_table_num(t, r->mem.weight);
	cli_table_num(t, r->mem.master);
	cli_table_num(t, r->mem.state);
	if (r->cfg.policy.master == FPL_MASTER_SPLIT)
		cli_table_num(t, split_differs(r, d));
	else
		cli_table_none(t);
	if (has_blocks(r)) {
		cli_table_int(t, (long long)r->blk.saturated);
		cli_table_int(t, (long long)r->blk.flushed);
		cli_table_int(t, (long long)r->blk.amax_saturated);
		cli_table_int(t, (long long)r->blk.scale_range);
	} else {
		cli_table_none(t);
		cli_table_none(t);
		cli_table_none(t);
		cli_table_none(t);
	}
}

/* --svg: drift (log when it spans 1.5 decades) and the per-step vanished
 * fraction (an axis from 0) against the step. */
static int write_svg(struct run *runs, size_t nrun, size_t npts, const double *x,
		     const struct cli_optim_data *d)
{
	struct cli_plot_series *ds = calloc(nrun, sizeof *ds), *vs = calloc(nrun, sizeof *vs);
	struct cli_plot_panel p[2];
	struct cli_plot pl;
	struct cli_output o;
	char title[160], sub[256];
	size_t i;
	int rc;

	if (!ds || !vs) {
		free(ds);
		free(vs);
		return error("out of memory");
	}
	for (i = 1; i < nrun; i++) {
		ds[i - 1] = (struct cli_plot_series){ runs[i].name, NULL, runs[i].drift_s, npts };
		vs[i - 1] = (struct cli_plot_series){ runs[i].name, NULL, runs[i].vfrac_s, npts };
	}
	p[0] = (struct cli_plot_panel){ "drift ||w - w_ref|| / ||w_ref||", 1, NAN, NAN, ds,
					nrun - 1 };
	p[1] = (struct cli_plot_panel){ "vanished updates (fraction of the step's)", 0, 0, NAN, vs,
					nrun - 1 };
	snprintf(title, sizeof title, "fplab optim: %s, lr %g, %llu step%s",
		 fpl_opt_algo_name(opt.hyper.algo), opt.hyper.lr, (unsigned long long)opt.steps,
		 opt.steps == 1 ? "" : "s");
	snprintf(sub, sizeof sub, "%zu parameters in %zu tensor%s; drift of the stored weights "
		 "from the FP64 reference run%s", d->total, d->nt, d->nt == 1 ? "" : "s",
		 npts < opt.steps ? "; a point per bucket of steps" : "");
	pl = (struct cli_plot){ title, sub, "step", x, npts, p, 2, 1, 0 };
	if (cli_output_open(&o, opt.svg)) {
		free(ds);
		free(vs);
		return -1;
	}
	cli_plot_svg(o.fp, &pl);
	rc = cli_output_close(&o, 1);
	free(ds);
	free(vs);
	return rc;
}

/* --sizes N,...: every piece a size, as every comma list of fplab (no
 * empty piece: "10," and "10,,20" are refused).  0, -2 or -1. */
static int sizes(struct cli_optim_data *d, const char *spec)
{
	size_t n = strlen(spec);

	if (!n || spec[0] == ',' || spec[n - 1] == ',' || strstr(spec, ",,"))
		return error("--sizes '%s': an empty size (give sizes joined by ',', e.g. "
			     "1000,10)", spec), -2;
	return cli_optim_sizes(d, spec);
}

/* The weights of --init `path` all finite: a NaN or an infinity is named
 * by its tensor and index (0-based, numpy's).  0 or -1. */
static int finite_init(const struct cli_optim_data *d, const char *path)
{
	size_t j, i;

	for (j = 0; j < d->nt; j++)
		for (i = 0; i < d->sizes[j]; i++)
			if (!isfinite(d->w0[j][i])) {
				char v[CLI_VALUE_MAX];

				if (cli_is_tensor_file(path))
					return error("--init '%s': tensor '%s', index %zu, is %s: the "
						     "initial weights must be finite", path,
						     d->names[j], i, cli_shortest(v, d->w0[j][i]));
				return error("--init '%s': value %zu (index %zu) is %s: the initial "
					     "weights must be finite", path, i + 1, i,
					     cli_shortest(v, d->w0[j][i]));
			}
	return 0;
}

/* The sources and sizes of the data; 0, -2 (usage) or -1. */
static int load(struct cli_optim_data *d)
{
	int rc = 0;

	memset(d, 0, sizeof *d);
	if (opt.init && opt.sizes)
		return error("--sizes and --init both give the tensor sizes: give one"), -2;
	if (opt.init && opt.weights)
		return error("--weights and --init both give the initial weights: give one"), -2;
	if ((opt.ngfiles || opt.stack) && opt.grads)
		return error("--grads generates gradients; -g and --grad-stack read them: give "
			     "one source"), -2;
	if (opt.ngfiles && opt.stack)
		return error("-g and --grad-stack are two gradient sources: give one"), -2;
	if (opt.init)
		rc = cli_optim_read_init(d, opt.init) ? -1 : finite_init(d, opt.init);
	else if (opt.sizes)
		rc = sizes(d, opt.sizes);
	else if (!opt.ngfiles && !opt.stack)
		rc = cli_optim_sizes(d, "10000");
	if (!rc && opt.ngfiles)
		rc = cli_optim_read_steps(d, opt.gfiles, opt.ngfiles);
	else if (!rc && opt.stack)
		rc = cli_optim_read_stack(d, opt.stack);
	else if (!rc)
		rc = cli_optim_gens(d, NULL, opt.grads ? opt.grads : "loguniform:-14,-5");
	if (!rc && !opt.init)
		rc = cli_optim_gens(d, opt.weights ? opt.weights : "loguniform:-16,-4", NULL);
	if (!rc && !opt.init)
		rc = cli_optim_generate_weights(d, opt.ro.st.seed);
	if (rc)
		return rc;
	d->seed = opt.ro.st.seed;
	if (!rc && opt.spikes) {
		char p[64];
		const char *c = strchr(opt.spikes, ':');

		if (!c || (size_t)(c - opt.spikes) >= sizeof p)
			return error("--spikes '%s' is not P:F", opt.spikes), -2;
		snprintf(p, sizeof p, "%.*s", (int)(c - opt.spikes), opt.spikes);
		if (cli_parse_double(p, &d->spike_p) || !(d->spike_p >= 0 && d->spike_p <= 1))
			return error("--spikes '%s': P must be a probability in [0, 1]", opt.spikes),
			       -2;
		if (cli_parse_double(c + 1, &d->spike_f) || isnan(d->spike_f))
			return error("--spikes '%s': F '%s' is not a number", opt.spikes, c + 1), -2;
	}
	if (!rc && !opt.has_steps && d->nfiles)
		opt.steps = d->nfiles;
	return rc;
}

/* The runs: the reference first, then every policy. */
static int policies(struct run **out, size_t *n)
{
	const char *const *specs = opt.npolicy ? opt.policy : default_policies;
	size_t np = opt.npolicy ? opt.npolicy : 4, i;
	fpl_opt_scaler dflt;
	struct run *r = calloc(np + 1, sizeof *r);

	*out = r;
	*n = np + 1;
	if (!r)
		return error("out of memory");
	fpl_opt_scaler_init(&dflt);
	if (opt.loss_scale && scaling("--loss-scale", opt.loss_scale, &dflt))
		return -2;
	fpl_opt_policy_reference(&r[0].cfg.policy);
	fpl_opt_scaler_init(&r[0].cfg.scaler);
	for (i = 0; i < np; i++)
		if (policy(specs[i], &r[i + 1], &dflt))
			return -2;
	return 0;
}

static void free_runs(struct run *runs, size_t n)
{
	size_t i;

	for (i = 0; runs && i < n; i++) {
		fpl_optim_free(runs[i].o);
		free(runs[i].m);
		free_buffers(runs[i].G, runs[i].nG);
		free(runs[i].drift_s);
		free(runs[i].vfrac_s);
	}
	free(runs);
}

/* Each run's gradients of step s: G with the files' numbers that binary64
 * cannot hold as the run's cast reads them (a warning the first time one
 * may not round as itself). */
static void hold_grads(struct run *runs, size_t nrun, const struct cli_optim_data *d,
		       uint64_t s, double *const *G)
{
	size_t i;

	for (i = 0; i < nrun; i++)
		if (!cli_optim_hold_grads(d, s, (const double *const *)G, runs[i].G,
					  &runs[i].cfg.policy, opt.ro.st.sr_bits) && !runs[i].warned) {
			hold_warning(&runs[i], "the gradients");
			runs[i].warned = 1;
		}
}

/* Every step: rows every --every steps and at the last, SVG buckets. */
static int simulate(struct run *runs, size_t nrun, const struct cli_optim_data *d)
{
	double **G = calloc(d->nt, sizeof *G), *wref = malloc((d->total + 1) * sizeof *wref);
	double *w = malloc((d->total + 1) * sizeof *w), *x = NULL;
	uint64_t bucket = opt.steps > SVG_POINTS ? (opt.steps + SVG_POINTS - 1) / SVG_POINTS : 1;
	size_t npts = 0, i, j;
	struct cli_table t;
	uint64_t s;
	int rc = 0;

	for (j = 0; G && j < d->nt; j++)
		if (!(G[j] = malloc((d->sizes[j] + 1) * sizeof *G[j])))
			rc = -1;
	if (!G || !wref || !w || rc)
		rc = error("out of memory");
	if (!rc && opt.svg) {
		size_t cap = (size_t)((opt.steps + bucket - 1) / bucket) + 1;

		x = malloc(cap * sizeof *x);
		for (i = 0; i < nrun && x; i++) {
			runs[i].drift_s = malloc(cap * sizeof *runs[i].drift_s);
			runs[i].vfrac_s = malloc(cap * sizeof *runs[i].vfrac_s);
			if (!runs[i].drift_s || !runs[i].vfrac_s)
				break;
		}
		if (!x || i < nrun)
			rc = error("out of memory");
	}
	cli_table_begin(&t, stdout, opt.report, cols, (int)NCOLS);
	cli_progress_start("optim", (size_t)opt.steps);
	for (s = 0; s < opt.steps && !rc; s++) {
		int last = s + 1 == opt.steps, report = last || (opt.every && (s + 1) % opt.every == 0);
		int point = x && ((s + 1) % bucket == 0 || last);

		cli_optim_grads(d, s, G);
		if (d->ginx_any)
			hold_grads(runs, nrun, d, s, G);
		rc = step_all(runs, nrun, (const double *const *)G, opt.ro.st.threads);
		if (rc)
			break;
		for (i = 0; i < nrun; i++)
			account(&runs[i]);
		if (report || point)
			weights(runs[0].o, d, wref);
		if (point) {
			x[npts] = (double)(s + 1);
			for (i = 1; i < nrun; i++) {
				weights(runs[i].o, d, w);
				runs[i].drift_s[npts] = rel_dist(w, wref, d->total);
				runs[i].vfrac_s[npts] = runs[i].bnz ? (double)runs[i].bvan /
					(double)runs[i].bnz : NAN;
				runs[i].bnz = runs[i].bvan = 0;
			}
			npts++;
		}
		if (report)
			for (i = 1; i < nrun; i++)
				row(&t, &runs[i], s + 1, wref, w, d);
		cli_progress_step((size_t)(s + 1));
	}
	cli_progress_end();
	cli_table_end(&t);
	if (!rc && opt.svg)
		rc = write_svg(runs, nrun, npts, x, d);
	for (j = 0; G && j < d->nt; j++)
		free(G[j]);
	free(G);
	free(wref);
	free(w);
	free(x);
	return rc;
}

int cmd_optim(int argc, char **argv)
{
	struct cli_optim_data d;
	struct run *runs = NULL;
	size_t nrun = 0;
	int rc;

	memset(&d, 0, sizeof d);
	rc = parse_args(argc, argv);
	if (rc < 0) {
		free(opt.gfiles);
		return usage_help(optim_usage);
	}
	if (!rc) {
		fpl_opt_hyper_init(&opt.hyper, opt.hy.algo);
		rc = cli_hyper_finish(&opt.hy, &opt.hyper, optim_usage);
	}
	if (!rc && policies(&runs, &nrun))
		rc = usage_error(optim_usage, NULL);
	if (!rc && !opt.ro.has_threads) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);

		opt.ro.st.threads = cores < 1 ? 1 : cores > 1024 ? 1024 : (int)cores;
	}
	if (!rc && opt.ngfiles > MAX_STEP_FILES)
		rc = usage_error(optim_usage, "more than %d -g files", MAX_STEP_FILES);
	if (!rc) {
		int lr = load(&d);

		rc = lr == -2 ? usage_error(optim_usage, NULL) : lr ? CLI_EXIT_FAIL : 0;
	}
	if (!rc && make_runs(runs, nrun, &d))
		rc = CLI_EXIT_FAIL;
	if (!rc && simulate(runs, nrun, &d))
		rc = CLI_EXIT_FAIL;
	free_runs(runs, nrun);
	cli_optim_data_release(&d);
	free(opt.gfiles);
	return rc;
}

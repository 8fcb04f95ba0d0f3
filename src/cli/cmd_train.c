/* SPDX-License-Identifier: MIT */
/*
 * cmd_train.c - `fplab train`: train a multi-layer perceptron on
 * Fashion-MNIST (or a generated set, or the user's tensor files) under
 * one or more precision policies (fplab/train.h), data-parallel over
 * simulated nodes, reporting per epoch (or every N steps) the training
 * loss, test loss and accuracy, vanished updates, overflow and underflow
 * per tensor kind, skipped steps, loss scale and time; --svg plots loss
 * and accuracy against the epoch, -o saves the final weights.
 *
 * Invariant: every policy gets a trainer made from the same config (the
 * seed gives the initial weights and every epoch's order), so the
 * policies start from the same weights and see the same batches; the
 * bits never depend on --threads (the library's guarantee), and a row's
 * counts cover the steps since the previous row of its policy.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fplab/dataset.h>
#include <fplab/train.h>

#include "cli/cli.h"
#include "cli/cli_plot.h"

static const char train_usage[] =
	"usage: fplab train [--layers N-N-...] [--epochs N] [--batch B] [--every N]\n"
	"    [--optim sgd|adagrad|adam|adamw|lamb] [--lr X] [--momentum X]\n"
	"    [--dampening X] [--nesterov] [--weight-decay X] [--lr-decay X]\n"
	"    [--initial-accumulator X] [--betas B1,B2] [--eps X]\n"
	"    [--policy NAME|FILE]... [--set KEY=VALUE]... [--policy-dump]\n"
	"    [--data SOURCE] [--data-dir DIR] [--test-data SOURCE|none]\n"
	"    [--train-limit N] [--test-limit N] [--nodes P] [--algo ALGO] [--group G]\n"
	"    [--comm SPEC] [--comm-acc SPEC] [--scale none|loss:S|aps]\n"
	"    [--fp32-layers LIST] [--seed N] [--threads N] [-o FILE.safetensors]\n"
	"    [--svg FILE] [--tsv|--json|--ndjson]\n";

enum {
	OPT_LAYERS = CLI_OPT_CMD, OPT_EPOCHS, OPT_BATCH, OPT_EVERY, OPT_POLICY, OPT_SET, OPT_DUMP, OPT_DATA, OPT_DATA_DIR, OPT_TEST_DATA,
	OPT_TRAIN_LIMIT, OPT_TEST_LIMIT, OPT_NODES, OPT_ALGO, OPT_GROUP, OPT_COMM, OPT_COMM_ACC,
	OPT_SCALE, OPT_FP32, OPT_SEED, OPT_THREADS, OPT_SVG
};

#define MAX_POLICIES 64
#define MAX_SETS 256

/* fpl_train_policy_set's keys, for suggestions */
static const char *const policy_keys[] = {
	"fwd", "bwd", "red", "fwd.in", "fwd.a", "fwd.b", "fwd.prod", "fwd.acc", "fwd.order",
	"fwd.out", "fwd.profile", "bwd.in", "bwd.a", "bwd.b", "bwd.prod", "bwd.acc", "bwd.order",
	"bwd.out", "bwd.profile", "red.in", "red.a", "red.b", "red.prod", "red.acc", "red.order",
	"red.out", "red.profile", "act", "grad", "master", "weight", "weight-sr", "master-format",
	"state", "arith", "unscale", "loss-scale", "comm", "comm-acc", "comm-scale", "algo",
	"comm-fp32", "fwd.a-block", "fwd.b-block", "bwd.a-block", "bwd.b-block", "rht"
};

static struct train_opts {
	const char *layers;
	uint64_t epochs, batch, every, seed, train_limit, test_limit;
	long threads;			/* 0: every online processor */
	struct cli_hyper hy;		/* --optim and the hyperparameters as given */
	const char *policy[MAX_POLICIES];
	size_t npolicy;
	const char *set[MAX_SETS];
	size_t nset;
	int dump;
	const char *data, *data_dir, *test_data;
	long nodes;
	const char *ar_algo, *group, *comm, *comm_acc, *scale, *fp32;
	const char *output, *svg;
	enum cli_report report;
} opt;

/* ------------------------------------------------------------ messages */
/* Messages with arguments, file names and what files hold escaped
 * (cli_escaped_msg): never raw on the terminal. */
#define terr(...) cli_escaped_msg(NULL, __VA_ARGS__)
#define tusage(...) cli_escaped_msg(train_usage, __VA_ARGS__)

/* ------------------------------------------------------------ parsing */
/* A count option 1..max.  0 or CLI_EXIT_USAGE. */
static int count(const char *o, const char *s, uint64_t max, uint64_t *out)
{
	if (cli_parse_u64(s, out) || *out < 1 || *out > max)
		return tusage("%s '%s' is not a count 1..%llu", o, s,
			      (unsigned long long)max);
	return 0;
}

static int parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_REPORT_LONGOPTS,
		{ "layers", required_argument, NULL, OPT_LAYERS },
		{ "epochs", required_argument, NULL, OPT_EPOCHS },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "every", required_argument, NULL, OPT_EVERY },
		CLI_HYPER_LONGOPTS,
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "set", required_argument, NULL, OPT_SET },
		{ "policy-dump", no_argument, NULL, OPT_DUMP },
		{ "data", required_argument, NULL, OPT_DATA },
		{ "data-dir", required_argument, NULL, OPT_DATA_DIR },
		{ "test-data", required_argument, NULL, OPT_TEST_DATA },
		{ "train-limit", required_argument, NULL, OPT_TRAIN_LIMIT },
		{ "test-limit", required_argument, NULL, OPT_TEST_LIMIT },
		{ "nodes", required_argument, NULL, OPT_NODES },
		{ "algo", required_argument, NULL, OPT_ALGO },
		{ "group", required_argument, NULL, OPT_GROUP },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "comm-acc", required_argument, NULL, OPT_COMM_ACC },
		{ "scale", required_argument, NULL, OPT_SCALE },
		{ "fp32-layers", required_argument, NULL, OPT_FP32 },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "output", required_argument, NULL, 'o' },
		{ "svg", required_argument, NULL, OPT_SVG },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, rc;

	memset(&opt, 0, sizeof opt);
	opt.epochs = 1;
	opt.batch = 128;
	opt.seed = 1;
	opt.nodes = 1;
	cli_hyper_init(&opt.hy);
	optind = 0;
	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		rc = cli_hyper_option(&opt.hy, c, optarg);
		if (rc < 0)
			return usage_error(train_usage, NULL);
		if (rc > 0 || cli_report_option(&opt.report, c))
			continue;
		switch (c) {
		case 'h': return -1;
		case 'o': opt.output = optarg; break;
		case OPT_LAYERS: opt.layers = optarg; break;
		case OPT_EPOCHS:
			if (count("--epochs", optarg, 1000000, &opt.epochs))
				return CLI_EXIT_USAGE;
			break;
		case OPT_BATCH:
			if (count("--batch", optarg, (uint64_t)1 << 24, &opt.batch))
				return CLI_EXIT_USAGE;
			break;
		case OPT_EVERY:
			if (count("--every", optarg, (uint64_t)1 << 40, &opt.every))
				return CLI_EXIT_USAGE;
			break;
		case OPT_POLICY:
			if (opt.npolicy == MAX_POLICIES)
				return tusage("more than %d --policy options",
					      MAX_POLICIES);
			opt.policy[opt.npolicy++] = optarg;
			break;
		case OPT_SET:
			if (opt.nset == MAX_SETS)
				return tusage("more than %d --set options", MAX_SETS);
			opt.set[opt.nset++] = optarg;
			break;
		case OPT_DUMP: opt.dump = 1; break;
		case OPT_DATA: opt.data = optarg; break;
		case OPT_DATA_DIR: opt.data_dir = optarg; break;
		case OPT_TEST_DATA: opt.test_data = optarg; break;
		case OPT_TRAIN_LIMIT:
			if (count("--train-limit", optarg, (uint64_t)1 << 40, &opt.train_limit))
				return CLI_EXIT_USAGE;
			break;
		case OPT_TEST_LIMIT:
			if (count("--test-limit", optarg, (uint64_t)1 << 40, &opt.test_limit))
				return CLI_EXIT_USAGE;
			break;
		case OPT_NODES:
			if (cli_parse_long(optarg, &opt.nodes) || opt.nodes < 1 || opt.nodes > 65536)
				return tusage("--nodes: '%s' is not a node count "
					      "1..65536", optarg);
			break;
		case OPT_ALGO: opt.ar_algo = optarg; break;
		case OPT_GROUP: opt.group = optarg; break;
		case OPT_COMM: opt.comm = optarg; break;
		case OPT_COMM_ACC: opt.comm_acc = optarg; break;
		case OPT_SCALE: opt.scale = optarg; break;
		case OPT_FP32: opt.fp32 = optarg; break;
		case OPT_SEED:
			if (cli_parse_u64(optarg, &opt.seed))
				return tusage("--seed '%s' is not an unsigned integer",
					      optarg);
			break;
		case OPT_THREADS:
			if (cli_parse_long(optarg, &opt.threads) || opt.threads < 0 ||
			    opt.threads > 1024)
				return tusage("--threads '%s' is not a count 0..1024",
					      optarg);
			break;
		case OPT_SVG:
			if (!cli_plot_svg_name_ok(optarg))
				return tusage("--svg '%s': the picture is SVG: give a name ending in "
					      ".svg (or - for stdout)", optarg);
			opt.svg = optarg;
			break;
		default: return usage_error(train_usage, NULL);
		}
	}
	if (optind < argc)
		return tusage("unexpected argument '%s'", argv[optind]);
	return 0;
}

/* The optimizer: sgd lr 0.1 momentum 0.9 (fpl_train_config_init) unless
 * --optim names another, then PyTorch's defaults; the options as given. */
static int hyper(fpl_opt_hyper *h)
{
	fpl_train_config c;

	fpl_train_config_init(&c);
	if (opt.hy.algo == FPL_OPT_SGD)
		*h = c.hyper;
	else
		fpl_opt_hyper_init(h, opt.hy.algo);
	return cli_hyper_finish(&opt.hy, h, train_usage);
}

/* --layers N-N-...: 0 or CLI_EXIT_USAGE. */
static int parse_layers(const char *s, fpl_train_config *c)
{
	const char *p = s;
	size_t n = 0;

	while (1) {
		char num[32];
		size_t len = strcspn(p, "-");
		uint64_t v;

		if (n == FPL_TRAIN_MAX_LAYERS + 1)
			return tusage("--layers '%s': at most %d layers (%d sizes)",
				      s, FPL_TRAIN_MAX_LAYERS, FPL_TRAIN_MAX_LAYERS + 1);
		if (!len || len >= sizeof num)
			return tusage("--layers '%s': expected sizes joined by '-', "
				      "e.g. 784-256-10", s);
		snprintf(num, sizeof num, "%.*s", (int)len, p);
		if (cli_parse_u64(num, &v) || v < 1 || v > ((uint64_t)1 << 24))
			return tusage("--layers '%s': '%s' is not a layer size "
				      "1..16777216", s, num);
		c->sizes[n++] = (size_t)v;
		p += len;
		if (!*p)
			break;
		p++;
	}
	if (n < 2)
		return tusage("--layers '%s': give at least the inputs and the "
			      "classes, e.g. 784-10", s);
	c->nsizes = n;
	return 0;
}

/* ------------------------------------------------------------ policies */
struct pol {
	fpl_train_policy p;
	char tag[256];		/* "+KEY=VALUE" of each override that changed it */
	char raw[400];		/* p.name and tag; unique among the run's */
	char name[800];		/* raw escaped (fpl_escape): the report's, the files' */
};

static int is_file(const char *path)
{
	struct stat sb;

	return !stat(path, &sb) && S_ISREG(sb.st_mode);
}

/* key=value into p; what names the source for messages.  0 or -2. */
static int set_key(fpl_train_policy *p, const char *what, const char *key, const char *value)
{
	char err[512];
	int rc = fpl_train_policy_set(p, key, value, err, sizeof err);

	if (rc == FPL_ENOTFOUND) {
		const char *c = cli_closest(key, policy_keys,
					    sizeof policy_keys / sizeof *policy_keys);

		if (c)
			return terr("%s: unknown policy key '%s'; did you mean '%s'?", what, key,
				    c), -2;
		return terr("%s: unknown policy key '%s' (fplab-train(1) lists them)", what,
			    key), -2;
	}
	if (rc)
		return terr("%s: %s", what, err[0] ? err : fpl_strerror(rc)), -2;
	return 0;
}

/* The policy as a policy file (malloc'd; NULL when out of memory). */
static char *describe(const fpl_train_policy *p)
{
	size_t n = fpl_train_policy_describe(p, NULL, 0);
	char *buf = malloc(n + 1);

	if (buf)
		fpl_train_policy_describe(p, buf, n + 1);
	return buf;
}

/* One override: key (and key2 when not NULL) = value, for option `what`;
 * when it changes the policy, "+label=value" joins the policy's tag (the
 * label alone for a value with blanks: a model), so its name says what
 * it is.  0, -1 (memory) or -2. */
static int override(struct pol *pp, const char *what, const char *key, const char *key2,
		    const char *value, const char *label)
{
	char *before = describe(&pp->p), *after;
	size_t k = strlen(pp->tag);
	int changed;

	if (!before)
		return terr("out of memory");
	if (set_key(&pp->p, what, key, value) || (key2 && set_key(&pp->p, what, key2, value))) {
		free(before);
		return -2;
	}
	after = describe(&pp->p);
	changed = !after || strcmp(before, after);
	free(before);
	free(after);
	if (changed && value[strcspn(value, " \t")])
		snprintf(pp->tag + k, sizeof pp->tag - k, "+%s", label);
	else if (changed)
		snprintf(pp->tag + k, sizeof pp->tag - k, "+%s=%s", label, value);
	return 0;
}

/* The data-parallel options as policy keys, then --set.  0, -1 or -2. */
static int overrides(struct pol *pp)
{
	char v[256];
	size_t i;
	int rc;

	if (opt.ar_algo) {
		if (!strcmp(opt.ar_algo, "hier"))
			snprintf(v, sizeof v, "hier:%s", opt.group ? opt.group : "");
		else
			snprintf(v, sizeof v, "%s", opt.ar_algo);
		if ((rc = override(pp, "--algo", "algo", NULL, v, "algo")))
			return rc;
	}
	/* as fplab allreduce: without --comm-acc, sums in the --comm format,
	 * or in fp32 for a block format (no accumulator) */
	if (opt.comm && (rc = override(pp, "--comm", "comm", opt.comm_acc || fpl_block_is_spec(
					       opt.comm) ? NULL : "comm-acc", opt.comm, "comm")))
		return rc;
	if (opt.comm && !opt.comm_acc && fpl_block_is_spec(opt.comm)
	    && (rc = override(pp, "--comm", "comm-acc", NULL, "fp32:ne", "comm-acc")))
		return rc;
	if (opt.comm_acc && (rc = override(pp, "--comm-acc", "comm-acc", NULL, opt.comm_acc,
					   "comm-acc")))
		return rc;
	if (opt.scale && (rc = override(pp, "--scale", "comm-scale", NULL, opt.scale,
					"comm-scale")))
		return rc;
	if (opt.fp32) {
		const char *s = opt.fp32;
		size_t k = 0;

		/* allreduce's `first` is layer 1 here */
		for (i = 0; s[i] && k + 8 < sizeof v; i++) {
			if (!strncmp(s + i, "first", 5) && (i == 0 || s[i - 1] == ',') &&
			    (s[i + 5] == 0 || s[i + 5] == ',')) {
				v[k++] = '1';
				i += 4;
			} else {
				v[k++] = s[i];
			}
		}
		v[k] = 0;
		if ((rc = override(pp, "--fp32-layers", "comm-fp32", NULL, v, "comm-fp32")))
			return rc;
	}
	for (i = 0; i < opt.nset; i++) {
		char kv[1024], *eq, *key, *val, what[1100];

		snprintf(what, sizeof what, "--set '%s'", opt.set[i]);
		if (strlen(opt.set[i]) >= sizeof kv || !(eq = strchr(opt.set[i], '=')) ||
		    eq == opt.set[i])
			return terr("%s: expected KEY=VALUE", what), -2;
		strcpy(kv, opt.set[i]);
		eq = kv + (eq - opt.set[i]);
		*eq = 0;
		key = kv;
		val = eq + 1;
		key[strcspn(key, " \t")] = 0;
		val += strspn(val, " \t");
		if ((rc = override(pp, what, key, NULL, val, key)))
			return rc;
	}
	return 0;
}

/* One --policy: a preset, else a file.  0, -1 (file unreadable or
 * malformed) or -2 (unknown preset). */
static int load_policy(struct pol *p, const char *spec)
{
	const char *const *names = fpl_train_presets();
	const char *close;
	char err[1024];
	size_t n = 0, k;
	int rc;

	if (!fpl_train_policy_preset(&p->p, spec)) {
		snprintf(p->p.name, sizeof p->p.name, "%s", spec);
		return 0;
	}
	if (is_file(spec) || strchr(spec, '/') || strchr(spec, '.')) {
		rc = fpl_train_policy_load(&p->p, spec, err, sizeof err);
		if (rc)
			return terr("--policy: %s", err[0] ? err : fpl_strerror(rc)), -1;
		return 0;
	}
	while (names[n])
		n++;
	close = cli_closest(spec, (const char *const *)names, n);
	if (close)
		return terr("unknown preset '%s' (and no policy file of that name); did you mean "
			    "'%s'?", spec, close), -2;
	for (n = 0, k = 0; names[n] && k < sizeof err; n++)
		k += (size_t)snprintf(err + k, sizeof err - k, "%s%s", n ? ", " : "", names[n]);
	return terr("unknown preset '%s' (and no policy file of that name); the presets: %s",
		    spec, err), -2;
}

/* Every policy, overridden, with unique names.  0, -1 or -2. */
static int policies(struct pol **out, size_t *np)
{
	static const char *const dflt[] = { "fp32" };
	const char *const *specs = opt.npolicy ? opt.policy : dflt;
	size_t n = opt.npolicy ? opt.npolicy : 1, i, j;
	struct pol *p = calloc(n, sizeof *p);
	int rc;

	*out = p;
	*np = n;
	if (!p)
		return terr("out of memory");
	for (i = 0; i < n; i++) {
		char full[sizeof p->p.name + sizeof p->tag];

		if ((rc = load_policy(&p[i], specs[i])) || (rc = overrides(&p[i])))
			return rc;
		snprintf(full, sizeof full, "%s%s", p[i].p.name, p[i].tag);
		snprintf(p[i].p.name, sizeof p[i].p.name, "%.*s", (int)sizeof p[i].p.name - 1,
			 full);	/* for --policy-dump */
		snprintf(p[i].raw, sizeof p[i].raw - 24, "%s", full);
		for (j = 0; j < i; j++)	/* a name given twice: NAME-K, K its position */
			if (!strcmp(p[j].raw, p[i].raw)) {
				snprintf(p[i].raw + strlen(p[i].raw), 24, "-%zu", i + 1);
				break;
			}
		fpl_escape(p[i].name, sizeof p[i].name, p[i].raw);
	}
	return 0;
}

/* ------------------------------------------------------------ the run */
static const char *const cols[] = {
	"policy", "epoch", "step", "train_loss", "test_loss", "test_accuracy", "vanished_frac",
	"act_overflow", "act_underflow", "grad_overflow", "grad_underflow", "comm_overflow",
	"comm_underflow", "opt_overflow", "opt_underflow", "skipped", "loss_scale", "seconds"
};
#define NCOLS (sizeof cols / sizeof *cols)
#define F_UNF 1		/* fpl_state count[] index of FPL_FLAG_UNDERFLOW */
#define F_OVF 2		/* and of FPL_FLAG_OVERFLOW */

/* One policy's run: its trainer, what happened since its last row, and
 * its SVG series. */
struct run {
	const char *name;	/* escaped, for the report */
	const char *raw;	/* as given, for messages (terr escapes) */
	fpl_trainer *tr;
	fpl_train_stats st;
	const struct cli_train_data *data;
	struct cli_table *t;
	uint64_t epoch;		/* 1-based, the epoch in progress */
	uint64_t step;		/* steps of this policy so far */
	size_t per_epoch;	/* steps per epoch */
	double t0;		/* start of the training since the last row */
	double *x, *loss, *tloss, *acc;	/* SVG series: training and test loss, accuracy */
	size_t npts, cap;
	size_t done0;		/* progress: steps of the policies before */
	int rc;			/* an error inside the progress callback */
};

/* A report row for r after its step r->step; done: steps of this epoch. */
static int row(struct run *r, size_t done)
{
	struct cli_table *t = r->t;
	const fpl_train_stats *s = &r->st;
	double secs = cli_now() - r->t0, acc = NAN, loss = NAN;
	double tl = s->loss_n ? s->loss_sum / (double)s->loss_n : NAN;
	int rc;

	if (r->data->has_test) {
		rc = fpl_trainer_evaluate(r->tr, &r->data->test, &acc, &loss);
		if (rc)
			return terr("%s: evaluating the test set: %s", r->raw, fpl_strerror(rc));
	}
	cli_table_str(t, r->name);
	cli_table_int(t, (long long)r->epoch);
	cli_table_int(t, (long long)r->step);
	cli_table_num(t, tl);
	if (r->data->has_test) {
		cli_table_num(t, loss);
		cli_table_num(t, acc);
	} else {
		cli_table_none(t);
		cli_table_none(t);
	}
	cli_table_num(t, s->updates ? (double)s->vanished / (double)s->updates : 0);
	cli_table_int(t, (long long)s->act_count[F_OVF]);
	cli_table_int(t, (long long)s->act_count[F_UNF]);
	cli_table_int(t, (long long)s->grad_count[F_OVF]);
	cli_table_int(t, (long long)s->grad_count[F_UNF]);
	cli_table_int(t, (long long)s->comm_count[F_OVF]);
	cli_table_int(t, (long long)s->comm_count[F_UNF]);
	cli_table_int(t, (long long)s->opt_count[F_OVF]);
	cli_table_int(t, (long long)s->opt_count[F_UNF]);
	cli_table_int(t, (long long)s->skipped);
	cli_table_num(t, s->scale);
	cli_table_num(t, secs);
	/* a long run's rows as they come; a full disk stops the run */
	if (t->kind != CLI_REPORT_TEXT && cli_flush_stdout())
		return -1;
	if (r->x && r->npts < r->cap) {
		r->x[r->npts] = (double)(r->epoch - 1) + (double)done / (double)r->per_epoch;
		r->loss[r->npts] = tl;
		r->tloss[r->npts] = loss;
		r->acc[r->npts] = acc;
		r->npts++;
	}
	memset(&r->st, 0, sizeof r->st);
	r->st.scale = s->scale;
	r->t0 = cli_now();
	return 0;
}

static void on_step(void *ctx, size_t done, size_t total)
{
	struct run *r = ctx;

	r->step++;
	cli_progress_step(r->done0 + (size_t)(r->epoch - 1) * total + done);
	if (opt.every && r->step % opt.every == 0 && done < total && !r->rc)
		r->rc = row(r, done);
}

/* Train policy p for every epoch; its final weights into m.  0 or -1. */
static int train_one(struct run *r, const fpl_train_config *cfg, const struct pol *p,
		     struct cli_train_model *m)
{
	size_t l;
	int rc;

	rc = fpl_trainer_create(&r->tr, cfg, &p->p);
	if (rc)
		return terr("policy %s: %s", p->raw, rc == FPL_EINVAL ?
			    "the policy does not fit the run (see fplab-train(1))" :
			    fpl_strerror(rc));
	r->name = p->name;
	r->raw = p->raw;
	for (r->epoch = 1; r->epoch <= opt.epochs; r->epoch++) {
		r->t0 = cli_now();
		rc = fpl_trainer_epoch(r->tr, &r->data->train, &r->st, on_step, r);
		if (rc)
			return terr("policy %s, epoch %llu: %s", p->raw,
				    (unsigned long long)r->epoch, fpl_strerror(rc));
		if (r->rc || row(r, r->per_epoch))
			return -1;
	}
	if (m) {
		m->prefix = NULL;
		m->nsizes = cfg->nsizes;
		memcpy(m->sizes, cfg->sizes, sizeof m->sizes);
		m->f32 = cli_train_fits_f32(&p->p.opt.weight);
		for (l = 1; l < cfg->nsizes; l++) {
			size_t nw = cfg->sizes[l] * cfg->sizes[l - 1];

			m->w[l - 1] = malloc(nw * sizeof *m->w[l - 1]);
			m->b[l - 1] = malloc(cfg->sizes[l] * sizeof *m->b[l - 1]);
			if (!m->w[l - 1] || !m->b[l - 1])
				return terr("out of memory");
			memcpy(m->w[l - 1], fpl_trainer_weights(r->tr, l), nw * sizeof(double));
			memcpy(m->b[l - 1], fpl_trainer_bias(r->tr, l),
			       cfg->sizes[l] * sizeof(double));
		}
	}
	return 0;
}

/* --svg: the training loss, the test loss and the test accuracy against
 * the epoch (the losses on a log axis when they span 1.5 decades); with no
 * test set, the training loss alone. */
static int write_svg(struct cli_output *o, struct run *runs, size_t nrun,
		     const fpl_train_config *cfg, const struct cli_train_data *d)
{
	struct cli_plot_series *ls = calloc(3 * nrun + 1, sizeof *ls);
	struct cli_plot_series *ts = ls + nrun, *as = ls + 2 * nrun;
	struct cli_plot_panel p[3];
	struct cli_plot pl;
	char title[256], sub[512], net[160];
	size_t i, k = 0;

	if (!ls) {
		cli_output_close(o, 0);
		return terr("out of memory");
	}
	for (i = 0; i < nrun; i++) {
		ls[i] = (struct cli_plot_series){ runs[i].name, runs[i].x, runs[i].loss, runs[i].npts };
		ts[i] = (struct cli_plot_series){ runs[i].name, runs[i].x, runs[i].tloss,
						  runs[i].npts };
		as[i] = (struct cli_plot_series){ runs[i].name, runs[i].x, runs[i].acc, runs[i].npts };
	}
	p[0] = (struct cli_plot_panel){ "training loss (mean batch loss since the previous point)",
					1, NAN, NAN, ls, nrun };
	p[1] = (struct cli_plot_panel){ "test loss", 1, NAN, NAN, ts, nrun };
	p[2] = (struct cli_plot_panel){ "test accuracy", 0, NAN, NAN, as, nrun };
	for (i = 0; i < cfg->nsizes; i++)
		k += (size_t)snprintf(net + k, k < sizeof net ? sizeof net - k : 0, "%s%zu",
				      i ? "-" : "", cfg->sizes[i]);
	snprintf(title, sizeof title, "fplab train: MLP %s, %s lr %g, batch %zu, %u node%s", net,
		 fpl_opt_algo_name(cfg->hyper.algo), cfg->hyper.lr, cfg->batch, cfg->nodes,
		 cfg->nodes == 1 ? "" : "s");
	snprintf(sub, sizeof sub, "%.200s: %zu training examples, %zu test; seed %llu",
		 d->desc, d->train.n, d->has_test ? d->test.n : (size_t)0,
		 (unsigned long long)cfg->seed);
	pl = (struct cli_plot){ title, sub, "epoch", NULL, 0, p, d->has_test ? 3 : 1, 1, 0 };
	cli_plot_svg(o->fp, &pl);
	free(ls);
	return cli_output_close(o, 1);
}

/* Warn about data-parallel settings that one node never uses. */
static void single_node_warnings(const struct pol *p, size_t np)
{
	size_t i;

	if (opt.nodes > 1)
		return;
	if (opt.ar_algo || opt.group || opt.comm || opt.comm_acc || opt.scale || opt.fp32) {
		warning("--algo, --group, --comm, --comm-acc, --scale and --fp32-layers apply to "
			"the all-reduce, which --nodes 1 skips");
		return;
	}
	for (i = 0; i < np; i++)	/* a policy about its all-reduce (aps-e4m3-comm) */
		if (p[i].p.comm.scaling != FPL_AR_SCALE_NONE)
			warning("policy %s all-reduces its gradients in %s%s, but with --nodes 1 "
				"nothing is all-reduced: give --nodes P", p[i].name,
				p[i].p.comm.comm.name, p[i].p.comm.scaling == FPL_AR_SCALE_APS ?
				" with APS" : "");
}

/* Checks that need the data and the policies.  0, -1 or -2. */
static int check_run(const fpl_train_config *cfg, const struct pol *p, size_t np,
		     const struct cli_train_data *d)
{
	unsigned classes = d->train.classes;
	size_t i, L = cfg->nsizes - 1;

	if (d->has_test && d->test.classes > classes)
		classes = d->test.classes;
	if (cfg->sizes[0] != d->train.d)
		return terr("--layers: the first size is %zu, but the data have %zu features per "
			    "example", cfg->sizes[0], d->train.d), -2;
	if (cfg->sizes[L] != classes)
		return terr("--layers: the last size is %zu, but the data have %u classes "
			    "(labels 0..%u)", cfg->sizes[L], classes, classes - 1), -2;
	if (cfg->batch > d->train.n)
		return terr("--batch %zu is larger than the training set (%zu examples): no "
			    "step", cfg->batch, d->train.n), -2;
	if (cfg->batch < cfg->nodes)
		return terr("--batch %zu is smaller than --nodes %u: a node needs an example",
			    cfg->batch, cfg->nodes), -2;
	for (i = 0; i < np; i++) {
		uint32_t m = p[i].p.comm_fp32 & ~FPL_TRAIN_COMM_FP32_LAST;

		if (p[i].p.comm.algo == FPL_AR_HIER && cfg->nodes % p[i].p.comm.group)
			return terr("policy %s: hier:%u needs a group that divides --nodes %u",
				    p[i].raw, p[i].p.comm.group, cfg->nodes), -2;
		if (m != FPL_TRAIN_COMM_FP32_ALL && (m >> L))
			return terr("policy %s: comm-fp32 names a layer above %zu, the network's "
				    "last", p[i].raw, L), -2;
	}
	/* every policy against the network, before the first step: a given
	 * input its format cannot hold, then whatever else the trainer
	 * refuses (it is made and dropped) */
	for (i = 0; i < np; i++) {
		char err[1024];
		fpl_trainer *tr;
		int rc;

		if (fpl_train_policy_check(&p[i].p, cfg, err, sizeof err))
			return terr("policy %s: %s", p[i].raw, err), -2;
		rc = fpl_trainer_create(&tr, cfg, &p[i].p);
		fpl_trainer_free(tr);
		if (rc)
			return terr("policy %s: %s", p[i].raw, rc == FPL_EINVAL ?
				    "the policy does not fit the run (see fplab-train(1))" :
				    fpl_strerror(rc)), rc == FPL_ENOMEM ? -1 : -2;
	}
	return 0;
}

static int dump(const struct pol *p, size_t np)
{
	size_t i;

	for (i = 0; i < np; i++) {
		size_t n = fpl_train_policy_describe(&p[i].p, NULL, 0);
		char *buf = malloc(n + 1);

		if (!buf)
			return terr("out of memory"), CLI_EXIT_FAIL;
		fpl_train_policy_describe(&p[i].p, buf, n + 1);
		printf("%s%s", i ? "\n" : "", buf);
		free(buf);
	}
	return CLI_EXIT_OK;
}

/* Can `path` be written?  Its temporary made and removed at once (a
 * device or a FIFO, written in place, is left alone).  0 or -1. */
static int probe(const char *path)
{
	struct cli_output o;
	struct stat sb;

	if (!strcmp(path, "-") || (!stat(path, &sb) && !S_ISREG(sb.st_mode)))
		return 0;
	if (cli_output_open(&o, path))
		return -1;
	cli_output_close(&o, 0);
	return 0;
}

/* Every policy, one after another; the rows, then -o and --svg.  An exit
 * status. */
static int run_all(const fpl_train_config *cfg, const struct pol *p, size_t np,
		   const struct cli_train_data *d)
{
	struct run *runs = calloc(np, sizeof *runs);
	struct cli_train_model *models = opt.output ? calloc(np, sizeof *models) : NULL;
	struct cli_output mo, so;
	int rc = 0;
	size_t per = d->train.n / cfg->batch, i, l;
	struct cli_table t;

	if (!runs || (opt.output && !models)) {
		free(runs);
		free(models);
		return terr("out of memory"), CLI_EXIT_FAIL;
	}
	/* an unwritable place fails before the training; the files
	 * themselves are made at the end (a kill -9 leaves no temporary) */
	if ((opt.output && probe(opt.output)) || (opt.svg && probe(opt.svg)))
		rc = -1;
	cli_table_begin(&t, stdout, opt.report, cols, (int)NCOLS);
	cli_progress_start("train", np * (size_t)opt.epochs * per);
	for (i = 0; i < np && !rc; i++) {
		struct run *r = &runs[i];

		r->data = d;
		r->t = &t;
		r->per_epoch = per;
		r->done0 = i * (size_t)opt.epochs * per;
		if (opt.svg) {
			r->cap = (size_t)opt.epochs * (opt.every ? per / opt.every + 1 : 1) + 1;
			r->x = malloc(r->cap * sizeof *r->x);
			r->loss = malloc(r->cap * sizeof *r->loss);
			r->tloss = malloc(r->cap * sizeof *r->tloss);
			r->acc = malloc(r->cap * sizeof *r->acc);
			if (!r->x || !r->loss || !r->tloss || !r->acc) {
				rc = terr("out of memory");
				break;
			}
		}
		rc = train_one(r, cfg, &p[i], models ? &models[i] : NULL);
		if (models)
			models[i].prefix = np > 1 ? p[i].name : NULL;
		fpl_trainer_free(r->tr);
		r->tr = NULL;
	}
	cli_progress_end();
	if (rc)
		cli_table_abandon(&t);
	else
		cli_table_end(&t);
	if (!rc && cli_flush_stdout())	/* a report not written: no files either */
		rc = -1;
	if (!rc && opt.output)
		rc = cli_output_open(&mo, opt.output) || cli_train_write_model(&mo, models, np) ? -1
		     : 0;
	if (!rc && opt.svg)
		rc = cli_output_open(&so, opt.svg) ? -1 : write_svg(&so, runs, np, cfg, d);
	for (i = 0; i < np; i++) {
		free(runs[i].x);
		free(runs[i].loss);
		free(runs[i].tloss);
		free(runs[i].acc);
		for (l = 0; models && l < FPL_TRAIN_MAX_LAYERS; l++) {
			free(models[i].w[l]);
			free(models[i].b[l]);
		}
	}
	free(runs);
	free(models);
	return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

int cmd_train(int argc, char **argv)
{
	struct cli_train_data d;
	fpl_train_config cfg;
	struct pol *p = NULL;
	size_t np = 0;
	int rc;

	memset(&d, 0, sizeof d);
	fpl_train_config_init(&cfg);
	rc = parse_args(argc, argv);
	if (rc < 0)
		return usage_help(train_usage);
	if (!rc)
		rc = hyper(&cfg.hyper);
	if (!rc && opt.layers)
		rc = parse_layers(opt.layers, &cfg);
	if (!rc && opt.group && (!opt.ar_algo || strcmp(opt.ar_algo, "hier")))
		rc = tusage("--group applies to --algo hier");
	if (!rc && opt.ar_algo && !strcmp(opt.ar_algo, "hier") && !opt.group)
		rc = tusage("--algo hier needs --group G");
	if (!rc && opt.output) {
		const char *dot = strrchr(opt.output, '.');

		if (!dot || strcmp(dot, ".safetensors"))
			rc = tusage("-o '%s': the model is written as "
				    ".safetensors: name the file FILE.safetensors", opt.output);
	}
	if (!rc) {
		int pr = policies(&p, &np);

		rc = pr == -2 ? usage_error(train_usage, NULL) : pr ? CLI_EXIT_FAIL : 0;
	}
	if (!rc && opt.dump) {
		rc = dump(p, np);
		free(p);
		return rc;
	}
	if (!rc) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);

		cfg.batch = (size_t)opt.batch;
		cfg.nodes = (uint32_t)opt.nodes;
		cfg.seed = opt.seed;
		cfg.threads = opt.threads ? (int)opt.threads :
			      cores < 1 ? 1 : cores > 1024 ? 1024 : (int)cores;
		single_node_warnings(p, np);
	}
	if (!rc) {
		int lr = cli_train_load(&d, opt.data, opt.data_dir, opt.test_data,
					(size_t)opt.train_limit, (size_t)opt.test_limit, opt.seed);

		rc = lr == -2 ? usage_error(train_usage, NULL) : lr ? CLI_EXIT_FAIL : 0;
	}
	if (!rc && !opt.layers) {	/* features - 256 - classes */
		cfg.sizes[0] = d.train.d;
		cfg.sizes[2] = d.has_test && d.test.classes > d.train.classes ? d.test.classes :
			       d.train.classes;
	}
	if (!rc) {
		int cr = check_run(&cfg, p, np, &d);

		rc = cr == -2 ? CLI_EXIT_USAGE : cr ? CLI_EXIT_FAIL : 0;
	}
	if (!rc)
		rc = run_all(&cfg, p, np, &d);
	free(p);
	cli_train_data_release(&d);
	return rc;
}

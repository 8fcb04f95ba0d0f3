/* SPDX-License-Identifier: MIT */
/*
 * cli_model.c - the model options `dot`, `gemm` and `reduce` share and
 * their grid: a sweep is every combination of the -f, -r, --acc and
 * --order lists (cli_accum_input.c has the inputs, cli_accum.c the report
 * and the run, cli_progress.c the progress bar).
 *
 * Invariant: each job of a grid starts from a fresh state (counter 0,
 * the run's seed), so a row of a sweep has the bits of the same model run
 * alone, and no job's bits depend on the thread count (fplab/accum.h).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

#define MAX_LIST 64	/* values of one comma list */

/* An argument as messages show it: control characters escaped
 * (fpl_escape), as the README promises for every name a user gives. */
#define ESC_MAX (4 * 256 + 1)
static const char *esc(char *buf, const char *s)
{
	return fpl_escape(buf, ESC_MAX, s);
}

void cli_model_init(struct cli_model *mo)
{
	memset(mo, 0, sizeof *mo);
	cli_round_init(&mo->ro);
}

/* --gen: util/gen.h parses; the messages are the CLI's. */
static int gen_parse(struct fpl__gen *g, const char *s)
{
	static const char *const names[] = { "ones", "uniform", "normal", "lognormal", "ints",
					       "loguniform" };
	int rc = fpl__gen_parse(g, s);

	if (rc == -1) {
		char name[64];
		size_t len = strcspn(s, ":");

		char e[ESC_MAX];

		snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), s);
		cli_unknown("generator", esc(e, name), names, 6);
	} else if (rc && g->kind == FPL__GEN_ONES) {
		char e[ESC_MAX];

		error("--gen '%s': ones takes no parameters", esc(e, s));
	} else if (rc) {
		char e[ESC_MAX];

		error("--gen '%s': expected %s", esc(e, s), g->kind == FPL__GEN_INTS ? "ints:A,B (integers, "
		      "A <= B)" : g->kind == FPL__GEN_UNIFORM ? "uniform:A,B (A <= B)" :
		      g->kind == FPL__GEN_NORMAL ? "normal:MU,SIGMA (SIGMA >= 0)" :
		      g->kind == FPL__GEN_LOGUNIFORM ? "loguniform:A,B (-1074 <= A <= B <= 1023)" :
		      "lognormal:MU,SIGMA (SIGMA >= 0)");
	}
	return rc ? -2 : 0;
}

const char *cli_arg_shown(const char *arg)
{
	/* a few persistent copies: the option parsers keep the pointer */
	static char ring[8][ESC_MAX];
	static unsigned next;
	const char *p;

	for (p = arg; p && *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			break;
	if (!p || !*p)
		return arg;
	return esc(ring[next++ % 8], arg);
}

int cli_model_option(struct cli_model *mo, int c, const char *arg)
{
	/* an argument with a control character is wrong for every option
	 * of cli_round_option; its escaped copy fails the same way and shows
	 * safely (the model's own options, -f included, escape their
	 * messages) */
	int rc = cli_round_option(&mo->ro, c, c == 'f' ? arg : cli_arg_shown(arg));

	if (rc)
		return rc;
	switch (c) {
	case CLI_OPT_A_FORMAT: mo->a_format = arg; return 1;
	case CLI_OPT_B_FORMAT: mo->b_format = arg; return 1;
	case CLI_OPT_PROD: mo->prod = arg; return 1;
	case CLI_OPT_ACC: mo->acc = arg; return 1;
	case CLI_OPT_ORDER: mo->order = arg; return 1;
	case CLI_OPT_OUT_FORMAT: mo->out_format = arg; return 1;
	case CLI_OPT_PROFILE: mo->profile = arg; return 1;
	case CLI_OPT_GEN:
		return gen_parse(&mo->gen, arg) ? -2 : 1;
	case CLI_OPT_REFERENCE:
		if (!strcmp(arg, "given"))
			mo->reference_given = 1;
		else if (!strcmp(arg, "loaded"))
			mo->reference_given = 0;
		else {
			char e[ESC_MAX];

			error("--reference: '%s' is not loaded or given", esc(e, arg));
			return -2;
		}
		return 1;
	default:
		return 0;
	}
}

/* ------------------------------------------------------------ the grid */
/* Split a comma list (a copy into *store); pieces into out.  Returns the
 * count, or 0 after a message (an empty piece, too many). */
static size_t split(const char *opt, const char *s, char **store, const char **out)
{
	size_t n = 0;
	char *p;

	*store = strdup(s);
	if (!*store) {
		error("out of memory");
		return 0;
	}
	for (p = *store;; ) {
		char *c = strchr(p, ',');

		if (c)
			*c = 0;
		if (!*p || n == MAX_LIST) {
			char e[ESC_MAX];

			error("%s '%s': not a comma list of at most %d values", opt, esc(e, s),
			      MAX_LIST);
			return 0;
		}
		out[n++] = p;
		if (!c)
			return n;
		p = c + 1;
	}
}

/* A spec into f/rnd (rnd untouched without ":MODE"); *has_mode says
 * whether it gave one.  0 or -2 after a message naming the option. */
int cli_format_spec(const char *opt, const char *s, fpl_format *f, fpl_rnd *rnd, int *given,
		    int *has_mode)
{
	int rc = fpl_accum_parse_spec(s, f, rnd, given);
	char e[ESC_MAX], en[ESC_MAX];

	if (!rc) {
		*has_mode = strchr(s, ':') && !(given && *given);
		return 0;
	}
	if (rc == FPL_ENOTFOUND && fpl_block_is_spec(s)
	    && (!strcmp(opt, "--acc") || !strcmp(opt, "--prod") || !strcmp(opt, "--out-format"))) {
		/* the model's inputs take block formats (input_spec); its
		 * arithmetic formats cannot */
		error("%s '%s': a block-scaled format is a load format: give it to -f, "
		      "--a-format or --b-format; %s takes a plain format", opt, esc(e, s), opt);
	} else if (rc == FPL_ENOTFOUND && fpl_block_is_spec(s)) {
		/* fplab/block.h: until the command loads block formats */
		error("%s '%s': a block-scaled format; this command does not take block formats "
		      "yet (round does)", opt, esc(e, s));
	} else if (rc == FPL_ENOTFOUND) {
		size_t n;
		const char *const *names = cli_format_names(&n);
		char name[64];

		snprintf(name, sizeof name, "%.*s", (int)strcspn(s, "+:") % 63, s);
		error("%s '%s': unknown format '%s'%s%s%s", opt, esc(e, s), esc(en, name),
		      cli_closest(name, names, n) ? "; did you mean '" : "",
		      cli_closest(name, names, n) ? cli_closest(name, names, n) : "",
		      cli_closest(name, names, n) ? "'?" : "");
	} else if (rc == FPL_EFORMAT) {
		fpl_format plain;
		char name[FPL_FORMAT_NAME_MAX + 32];

		snprintf(name, sizeof name, "%.*s", (int)strcspn(s, "+:") % (int)(sizeof name - 1), s);
		if (fpl_format_lookup(&plain, name) == FPL_EFORMAT)
			error("%s '%s': impossible format '%s': exponent bits must be 1..11 and "
			      "mantissa bits 0..52", opt, esc(e, s), esc(en, name));
		else {
			const char *sw = s + strlen(name);

			snprintf(name, sizeof name, "%.*s", (int)strcspn(sw, ":") % (int)(sizeof name - 1),
				 sw);
			error("%s '%s': impossible format with the switches %s", opt, esc(e, s),
			      esc(en, name));
		}
	} else {
		char modes[64] = "";
		size_t k = 0;
		int r;

		for (r = 0; r < FPL_RND_COUNT; r++)
			k += (size_t)snprintf(modes + k, k < sizeof modes ? sizeof modes - k : 0,
					      "%s%s", r ? " " : "", fpl_rnd_name((fpl_rnd)r));
		error("%s '%s': expected FORMAT[+daz][+ftz][+nosub][+sat][:MODE%s] (MODE one of "
		      "%s)", opt, esc(e, s), given ? "|:given" : "", modes);
	}
	return -2;
}

/* --order ORDER into m; 0 or -2.  The names and spellings in the
 * messages are the library's table (fpl_accum_orders). */
static int order(fpl_accum_model *m, const char *s)
{
	int rc = fpl_accum_parse_order(m, s);
	size_t len = strcspn(s, ":"), i, no, k = 0;
	const fpl_accum_order_entry *o = fpl_accum_orders(&no);
	const char *names[FPL_ORDER_COUNT];
	char name[64], list[256] = "", e[ESC_MAX];
	int found = 0;

	if (!rc)
		return 0;
	snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), s);
	for (i = 0; i < no && i < FPL_ORDER_COUNT; i++) {
		names[i] = o[i].name;
		found |= !strcmp(name, o[i].name);
		k += (size_t)snprintf(list + k, k < sizeof list ? sizeof list - k : 0, "%s%s",
				      i == 0 ? "" : i + 1 == no ? " or " : ", ", o[i].spelling);
	}
	if (!found)
		cli_unknown("order", esc(e, name), names, i);
	else if (rc == FPL_ENOTFOUND)
		error("--order '%s': unknown promotion format", esc(e, s));
	else
		error("--order '%s': expected %s (L, B, F >= 1, B of pairs even, W in 1..64, expsum with a W, P a multiple of F)",
		      esc(e, s), list);
	return -2;
}

/* The column spellings of a finished model: the library's
 * (fpl_accum_describe_part), so the columns and fpl_accum_describe never
 * disagree. */
static void spell(struct cli_model_job *j)
{
	const fpl_accum_model *m = &j->mod;

	fpl_accum_describe_part(m, FPL_PART_A, j->a, sizeof j->a);
	fpl_accum_describe_part(m, FPL_PART_B, j->b, sizeof j->b);
	fpl_accum_describe_part(m, FPL_PART_PROD, j->prod, sizeof j->prod);
	fpl_accum_describe_part(m, FPL_PART_ACC, j->acc, sizeof j->acc);
	fpl_accum_describe_part(m, FPL_PART_ORDER, j->order, sizeof j->order);
	fpl_accum_describe_part(m, FPL_PART_OUT, j->out, sizeof j->out);
}

/* Which roundings got their mode from a spec (the rest take -r). */
struct given_modes {
	int a, b, prod, acc, out;
};

/* The fixed part of every job: profile, --a/b-format, --prod,
 * --out-format.  0 or -2. */
static int base_model(const struct cli_model *mo, fpl_accum_model *m, struct given_modes *gm)
{
	fpl_accum_init(m);
	memset(gm, 0, sizeof *gm);
	if (mo->profile) {
		size_t n, i;
		const fpl_accum_profile_entry *p = fpl_accum_profiles(&n);
		const char *names[64];
		char list[512] = "", e[ESC_MAX];
		size_t k = 0;

		if (fpl_accum_profile(m, mo->profile)) {
			for (i = 0; i < n && i < 64; i++) {
				names[i] = p[i].name;
				k += (size_t)snprintf(list + k, k < sizeof list ? sizeof list - k : 0,
						      " %s", p[i].name);
			}
			if (!cli_closest(mo->profile, names, i))
				error("unknown profile '%s' (profiles:%s)", esc(e, mo->profile), list);
			else
				cli_unknown("profile", esc(e, mo->profile), names, i);
			return -2;
		}
		/* a profile's own roundings keep their modes: -r does not change
		 * them (a spec given with the profile may) */
		gm->a = gm->b = gm->prod = gm->acc = gm->out = 1;
	}
	if (mo->prod) {
		if (!strcmp(mo->prod, "exact")) {
			m->prod_exact = 1;
		} else {
			if (cli_format_spec("--prod", mo->prod, &m->prod, &m->prod_rnd, NULL,
					    &gm->prod))
				return -2;
			m->prod_exact = 0;
		}
	}
	if (mo->out_format) {
		if (cli_format_spec("--out-format", mo->out_format, &m->out, &m->out_rnd, NULL,
				    &gm->out))
			return -2;
		m->out_set = 1;
	}
	return 0;
}

/*
 * A block format (fplab/block.h) as an input SPEC: BLOCK[:MODE], BLOCK
 * as fpl_block_parse reads it (its own fields included: mxfp8:rceil,
 * mxfp4:16), a last field that is a mode taken as the load's mode.
 * Operand `which` (0 A, 1 B, 2 both) of m becomes it, blocked along K
 * (fpl_accum_set_block).  1 when s is no block spec (nothing done), 0
 * done (*has_mode set), -2 after a message naming the option.
 */
static int block_spec(const char *opt, const char *s, fpl_accum_model *m, int which,
		      int *has_mode)
{
	fpl_block_format b;
	char err[256], head[256], e[ESC_MAX];
	const char *colon = strrchr(s, ':');
	fpl_rnd r = FPL_RND_NE;
	int rc, w;

	if (!fpl_block_is_spec(s))
		return 1;
	*has_mode = 0;
	rc = fpl_block_parse(&b, s, err, sizeof err);
	if (rc && colon && strlen(s) < sizeof head) {
		char e2[32];

		snprintf(head, sizeof head, "%.*s", (int)(colon - s), s);
		if (!strcmp(colon + 1, "given")) {
			error("%s '%s': a block format is quantized when loaded; it has no "
			      "':given' (give the values to quantize)", opt, esc(e, s));
			return -2;
		}
		/* a mode by its name only: the numeric aliases (0..8) read as
		 * block sizes */
		if (!fpl_rnd_parse(colon + 1, &r) && !strcmp(colon + 1, fpl_rnd_name(r))
		    && !fpl_block_parse(&b, head, e2, sizeof e2)) {
			rc = 0;
			*has_mode = 1;
		}
	}
	if (rc) {
		if (err[0])	/* it names the spec */
			error("%s: %s", opt, esc(e, err));
		else
			error("%s '%s': not a block format", opt, esc(e, s));
		return -2;
	}
	for (w = 0; w < 2; w++) {
		if (which != 2 && which != w)
			continue;
		if (fpl_accum_set_block(m, w, &b)) {
			error("%s '%s': the block format cannot be cut along K", opt, esc(e, s));
			return -2;
		}
		if (*has_mode)
			*(w ? &m->b_rnd : &m->a_rnd) = r;
	}
	return 0;
}

/* One input SPEC into operand `which` (0 A, 1 B, 2 both): a block
 * format, or a plain one (cli_format_spec).  0 or -2. */
static int input_spec(const char *opt, const char *s, fpl_accum_model *m, int which,
		      int *has_mode)
{
	int given = 0, rc = block_spec(opt, s, m, which, has_mode);

	if (rc <= 0)
		return rc;
	if (which != 1) {
		fpl_accum_set_block(m, 0, NULL);
		if (cli_format_spec(opt, s, &m->a, &m->a_rnd, &given, has_mode))
			return -2;
		m->a_load = given ? FPL_LOAD_GIVEN : FPL_LOAD_ROUND;
	}
	if (which == 2) {
		m->b_block = 0;
		m->b = m->a;
		m->b_rnd = m->a_rnd;
		m->b_load = m->a_load;
	} else if (which == 1) {
		fpl_accum_set_block(m, 1, NULL);
		if (cli_format_spec(opt, s, &m->b, &m->b_rnd, &given, has_mode))
			return -2;
		m->b_load = given ? FPL_LOAD_GIVEN : FPL_LOAD_ROUND;
	}
	return 0;
}

/* Input formats of one job: -f item f (or NULL), then --a/b-format. */
static int input_formats(const struct cli_model *mo, const char *f, fpl_accum_model *m,
			 struct given_modes *gm)
{
	if (f) {
		if (input_spec("-f", f, m, 2, &gm->a))
			return -2;
		gm->b = gm->a;
	}
	if (mo->a_format && input_spec("--a-format", mo->a_format, m, 0, &gm->a))
		return -2;
	if (mo->b_format && input_spec("--b-format", mo->b_format, m, 1, &gm->b))
		return -2;
	return 0;
}

/* The rounding options this layer does not model: refused, not ignored. */
static int refused(const struct cli_round *ro)
{
	const char *o = ro->has_params ? "--params" : ro->subnormal >= 0 ? "--subnormal"
		: ro->saturation >= 0 ? "--saturation" : ro->infinity >= 0 ? "--infinity"
		: ro->explim >= 0 ? "--explim" : ro->tininess >= 0 ? "--tininess"
		: ro->st.flip != FPL_FLIP_NONE ? "--flip" : ro->has_prob ? "-p" : NULL;

	if (!o)
		return 0;
	error("%s is not an option of the accumulation models: give a format's switches in its "
	      "spec (fp16+nosub, e4m3fn+sat, fp32+daz+ftz); see fplab-models(7)", o);
	return -2;
}

struct lists {
	const char *v[4][MAX_LIST];
	size_t n[4];
	char *store[4];
};

static void lists_release(struct lists *l)
{
	int i;

	for (i = 0; i < 4; i++)
		free(l->store[i]);
}

/* The block order's demands (fplab/accum.h), each with its message.
 * 0 or -2. */
static int block_order_check(const fpl_accum_model *m)
{
	const char *why = NULL;
	char buf[160];

	if (m->order != FPL_ORDER_BLOCK)
		return 0;
	if (!m->a_block || !m->b_block)
		why = "needs both operands in block formats (-f mxfp8, or --a-format and "
		      "--b-format BLOCK)";
	else if (m->a_blk.shape != FPL_BLOCK_1D || m->b_blk.shape != FPL_BLOCK_1D
		 || m->a_blk.size < 1 || m->b_blk.size < 1)
		why = "needs 1-D blocks of a fixed size along K (not tiles, row, col or tensor)";
	else if (m->a_blk.size != m->b_blk.size) {
		snprintf(buf, sizeof buf, "needs one block size for A and B (A's is %d, B's %d)",
			 m->a_blk.size, m->b_blk.size);
		why = buf;
	} else if (!m->prod_exact)
		why = "forms the element products exactly: give no --prod, or --prod exact";
	if (!why)
		return 0;
	error("--order block %s", why);
	return -2;
}

/* One job of the grid: -f item f, mode r (NULL: none given), acc, ord. */
static int make_job(const struct cli_model *mo, struct cli_model_job *j, const char *f,
		    const char *r, const char *acc, const char *ord)
{
	struct given_modes gm;
	fpl_rnd mode = FPL_RND_NE;
	int rc;

	if ((rc = base_model(mo, &j->mod, &gm)) || (rc = input_formats(mo, f, &j->mod, &gm)))
		return rc;
	if (acc && cli_format_spec("--acc", acc, &j->mod.acc, &j->mod.acc_rnd, NULL, &gm.acc))
		return -2;
	if (ord && order(&j->mod, ord))
		return -2;
	if (r) {
		fpl_rnd_parse(r, &mode);	/* checked by cli_round_option */
		if (!gm.a)
			j->mod.a_rnd = mode;
		if (!gm.b)
			j->mod.b_rnd = mode;
		if (!gm.prod)
			j->mod.prod_rnd = mode;
		if (!gm.acc)
			j->mod.acc_rnd = mode;
		if (!gm.out)
			j->mod.out_rnd = mode;
	}
	j->st = mo->ro.st;
	j->st.counter = 0;
	if (!mo->ro.has_threads) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);

		j->st.threads = cores < 1 ? 1 : cores > 1024 ? 1024 : (int)cores;
	}
	if ((rc = block_order_check(&j->mod)))
		return rc;
	rc = fpl_accum_check(&j->mod, &j->st);
	if (rc) {
		error("the model is not usable: %s", fpl_strerror(rc));
		return -2;
	}
	spell(j);
	return 0;
}

int cli_model_grid(const struct cli_model *mo, struct cli_model_job **jobs, size_t *n)
{
	static const char *const opts[4] = { "-f", "-r", "--acc", "--order" };
	const char *args[4];
	struct lists l;
	size_t i0, i1, i2, i3, k = 0, total = 1;
	int i, rc = 0;

	*jobs = NULL;
	*n = 0;
	if (refused(&mo->ro))
		return -2;
	args[0] = mo->ro.format_arg;
	args[1] = mo->ro.rnd_arg;
	args[2] = mo->acc;
	args[3] = mo->order;
	memset(&l, 0, sizeof l);
	for (i = 0; i < 4; i++) {
		if (!args[i]) {
			l.v[i][0] = NULL;
			l.n[i] = 1;
		} else if (!(l.n[i] = split(opts[i], args[i], &l.store[i], l.v[i]))) {
			lists_release(&l);
			return -2;
		}
		total *= l.n[i];
	}
	*jobs = calloc(total, sizeof **jobs);
	if (!*jobs) {
		lists_release(&l);
		return error("out of memory");
	}
	for (i0 = 0; i0 < l.n[0] && !rc; i0++)
		for (i1 = 0; i1 < l.n[1] && !rc; i1++)
			for (i2 = 0; i2 < l.n[2] && !rc; i2++)
				for (i3 = 0; i3 < l.n[3] && !rc; i3++)
					rc = make_job(mo, &(*jobs)[k++], l.v[0][i0], l.v[1][i1],
						      l.v[2][i2], l.v[3][i3]);
	lists_release(&l);
	if (rc) {
		free(*jobs);
		*jobs = NULL;
		return rc;
	}
	for (k = 0; k < total; k++)
		(*jobs)[k].generated = mo->gen.kind != 0;
	*n = total;
	return 0;
}

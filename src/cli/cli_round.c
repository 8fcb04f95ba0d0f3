/* SPDX-License-Identifier: MIT */
/*
 * cli_round.c - the rounding options every command that rounds shares
 * (format, mode, switches, seed, flips), parsed the same way everywhere.
 *
 * Invariant: nothing here exits; every failure prints one message through
 * error() (or usage_error()) and returns a negative value.
 */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include "cli/cli.h"

/* ------------------------------------------- shared rounding options */
void cli_round_init(struct cli_round *ro)
{
	memset(ro, 0, sizeof *ro);
	ro->rnd = FPL_RND_NE;
	fpl_state_init(&ro->st, 0);
	ro->format_arg = NULL;
	ro->subnormal = ro->saturation = ro->infinity = ro->explim = ro->tininess = -1;
}

static const char *const rnd_names[] = {
	"ne", "na", "nz", "tp", "tn", "tz", "sp", "se", "od",
	"-1", "0", "1", "2", "3", "4", "5", "6", "7"
};

/*
 * --params P,EMIN,EMAX (CPFloat: precision P counts the implicit bit) or
 * chop's two-number T,EMAX (t significand bits, implicit bit included;
 * chop's emin = 1 - emax), stored as P = T, EMIN = 1 - EMAX.
 */
static int parse_params(struct cli_round *ro, const char *arg)
{
	long v[3];
	char *copy = strdup(arg), *tok, *save = NULL;
	int k = 0;

	if (!copy)
		return error("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (k == 3 || cli_parse_long(tok, &v[k]) || v[k] < -100000 || v[k] > 100000)
			break;
		k++;
	}
	free(copy);
	if (tok || k < 2) {
		error("--params: '%s' is not P,EMIN,EMAX (CPFloat) or T,EMAX (chop): "
		      "two or three integers", arg);
		return -2;
	}
	ro->has_params = 1;
	ro->p = (int)v[0];
	if (k == 2) {		/* chop: t, emax; emin = 1 - emax */
		ro->emax = (int)v[1];
		ro->emin = (int)(1 - v[1]);
	} else {
		ro->emin = (int)v[1];
		ro->emax = (int)v[2];
	}
	return 0;
}

/* An unknown -r value: the closest mode, or every mode with its code. */
static void unknown_mode(const char *arg)
{
	const char *s = cli_closest(arg, rnd_names, 9);

	if (s)
		error("unknown rounding mode '%s'; did you mean '%s'?", arg, s);
	else
		error("unknown rounding mode '%s'; the modes (CPFloat code): ne nearest, ties "
		      "to even (1), na ties away (-1), nz ties to zero (0), tp toward +inf (2), "
		      "tn toward -inf (3), tz toward zero (4), sp stochastic proportional (5), "
		      "se stochastic equal (6), od round to odd (7)", arg);
}

/* -r MODE or a comma list of modes: each checked, the first kept in rnd. */
static int parse_modes(struct cli_round *ro, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int k = 0, rc = 1;

	if (!copy)
		return error("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok && rc == 1; tok = strtok_r(NULL, ",", &save)) {
		fpl_rnd r;

		if (fpl_rnd_parse(tok, &r)) {
			unknown_mode(tok);
			rc = -2;
		} else if (!k++) {
			ro->rnd = r;
		}
	}
	free(copy);
	if (rc == 1 && !k) {
		error("-r: '%s' names no rounding mode", arg);
		rc = -2;
	}
	if (rc == 1)
		ro->rnd_arg = arg;
	return rc;
}

int cli_round_option(struct cli_round *ro, int c, const char *arg)
{
	long v;
	uint64_t u;
	double d;
	int rc = 0, sw;

	switch (c) {
	case 'f':
		ro->format_arg = arg;
		return 1;
	case 'r':
		return parse_modes(ro, arg);
	case 'p':
		if (cli_parse_double(arg, &d) || !(d >= 0 && d <= 1)) {
			error("-p: '%s' is not a probability in [0,1]", arg);
			return -2;
		}
		ro->st.flip_prob = d;
		ro->has_prob = 1;
		return 1;
	case CLI_OPT_PARAMS:
		rc = parse_params(ro, arg);
		return rc ? (rc == -1 ? -2 : rc) : 1;
	case CLI_OPT_SUBNORMAL:
		/* 0, 1, or ftz (2): x86's flush to zero, as a .fmt file's
		 * "subnormal = ftz" */
		if (!strcmp(arg, "ftz")) {
			ro->subnormal = 2;
			return 1;
		}
		if (cli_parse_long(arg, &v) || v < 0 || v > 1) {
			error("--subnormal: '%s' is not 0, 1 or ftz", arg);
			return -2;
		}
		ro->subnormal = (int)v;
		return 1;
	case CLI_OPT_SATURATION:
		rc = cli_parse_switch("--saturation", arg, 2, &ro->saturation);
		break;
	case CLI_OPT_TININESS:
		if (!strcmp(arg, "after"))
			ro->tininess = FPL_TINY_AFTER;
		else if (!strcmp(arg, "before"))
			ro->tininess = FPL_TINY_BEFORE;
		else {
			error("--tininess: '%s' is not before or after", arg);
			return -2;
		}
		return 1;
	case CLI_OPT_INFINITY:
		rc = cli_parse_switch("--infinity", arg, 1, &ro->infinity);
		break;
	case CLI_OPT_EXPLIM:
		rc = cli_parse_switch("--explim", arg, 1, &ro->explim);
		break;
	case CLI_OPT_FLIP:
		rc = cli_parse_switch("--flip", arg, 2, &sw);
		if (!rc)
			ro->st.flip = (fpl_flip)sw;
		break;
	case CLI_OPT_SEED:
		if (cli_parse_u64(arg, &u)) {
			error("--seed: '%s' is not a non-negative integer", arg);
			return -2;
		}
		ro->st.seed = u;
		return 1;
	case CLI_OPT_SR_BITS:
		if (cli_parse_long(arg, &v) || v < 1 || v > 32) {
			error("--sr-bits: '%s' is not an integer in 1..32", arg);
			return -2;
		}
		ro->st.sr_bits = (int)v;
		return 1;
	case CLI_OPT_THREADS: {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);

		if (cli_parse_long(arg, &v) || v < 0 || v > 1024) {
			error("--threads: '%s' is not an integer in 0..1024", arg);
			return -2;
		}
		if (cores < 1)
			cores = 1;
		if (v == 0)	/* 0: one per core */
			v = cores;
		else if (v > cores) {
			/* more threads than cores only adds switching (16 times
			 * slower at 1024): use the cores, and say so */
			warning("--threads %ld: this machine has %ld processor%s online; using %ld",
				v, cores, cores == 1 ? "" : "s", cores);
			v = cores;
		}
		ro->st.threads = (int)v;
		ro->has_threads = 1;
		return 1;
	}
	default:
		return 0;
	}
	return rc ? -2 : 1;
}

/* Catalogue names and aliases, split once. */
static const char **names_list;
static char *names_store;
static size_t names_count;

static void free_names(void)
{
	free(names_list);
	free(names_store);
}

const char *const *cli_format_names(size_t *n)
{
	char *store;
	size_t count, bcount, i, k = 0, len = 0;
	const fpl_format_entry *cat;
	const fpl_block_entry *bcat;
	char *p;

	if (names_list) {
		*n = names_count;
		return names_list;
	}
	cat = fpl_format_catalogue(&count);
	bcat = fpl_block_catalogue(&bcount);
	for (i = 0; i < count; i++)
		len += strlen(cat[i].name) + strlen(cat[i].aliases ? cat[i].aliases : "") + 2;
	for (i = 0; i < bcount; i++)
		len += strlen(bcat[i].name) + strlen(bcat[i].aliases) + 2;
	store = malloc(len + 32);
	names_list = malloc((len + 4) * sizeof *names_list);
	if (!store || !names_list) {
		free(store);
		free(names_list);
		names_list = NULL;
		store = NULL;
		*n = 0;
		return NULL;
	}
	p = store;
	for (i = 0; i < count + bcount; i++) {
		/* the plain formats, then the block formats (fplab/block.h) */
		const char *nm = i < count ? cat[i].name : bcat[i - count].name;
		const char *a = i < count ? (cat[i].aliases ? cat[i].aliases : "")
					  : bcat[i - count].aliases;

		names_list[k++] = strcpy(p, nm);
		p += strlen(p) + 1;
		while (*a) {
			size_t w;

			while (*a == ' ')
				a++;
			w = strcspn(a, " ");
			if (!w)
				break;
			memcpy(p, a, w);
			p[w] = 0;
			names_list[k++] = p;
			p += w + 1;
			a += w;
		}
	}
	names_list[k++] = strcpy(p, "custom");
	p += strlen(p) + 1;
	names_list[k++] = strcpy(p, "c");
	names_count = k;
	names_store = store;
	atexit(free_names);
	*n = k;
	return names_list;
}

static int is_fmt_path(const char *name)
{
	size_t n = strlen(name);

	return strchr(name, '/') || (n > 4 && !strcmp(name + n - 4, ".fmt"));
}

int cli_format_resolve(fpl_format *f, const char *name)
{
	char err[512];
	int rc;

	if (!*name) {
		error("empty format name");
		return -2;
	}
	if (is_fmt_path(name)) {
		err[0] = 0;
		rc = fpl_format_load(f, name, err, sizeof err);
		if (rc)
			return error("%s", err[0] ? err : fpl_strerror(rc));
		return 0;
	}
	rc = fpl_format_lookup(f, name);
	if (rc == FPL_EFORMAT) {
		error("impossible format '%s': exponent bits must be 1..11 and mantissa bits 0..52",
		      name);
		return -2;
	}
	if (rc) {
		size_t n;
		const char *const *names = cli_format_names(&n);

		cli_unknown("format", name, names, n);
		return -2;
	}
	return 0;
}

static int is_custom(const char *name)
{
	return !strcasecmp(name, "c") || !strcasecmp(name, "custom");
}

static int is_bf16(const fpl_format *f)
{
	return !strcmp(f->name, "bf16");
}

/*
 * --infinity 0 on an IEEE-style format: no infinity code, same finite
 * range.  The descriptor's `fn` specials (NaN only at all ones) with the
 * finite binades capped at the IEEE emax keep every finite value and make
 * overflow give NaN (or max when saturating).
 */
static int drop_infinity(fpl_format *f)
{
	/* the encoding's top finite binade (not binary64's with explim 0) */
	int emax = f->emax_limit_set ? f->emax_limit : (1 << f->e) - 2 - f->bias;

	if (f->specials != FPL_SPEC_IEEE)
		return 0;
	f->specials = FPL_SPEC_FN;
	f->emax_limit_set = 1;
	f->emax_limit = emax;
	return fpl_format_finish(f);
}

/*
 * -f naming a block format (fplab/block.h): the descriptor into ro->block,
 * its element format into ro->fmt.  Only for commands that set block_ok;
 * the switches of a plain format do not apply (the element is spelled in
 * the spec instead).
 */
static int finish_block(struct cli_round *ro, const char *name)
{
	char err[256];
	int rc;

	if (!ro->block_ok) {
		error("-f %s: a block-scaled format scales whole blocks of a tensor by their "
		      "largest value, and this command rounds each result on its own; "
		      "quantize tensors with fplab round (hist, dot, gemm, reduce, allreduce, "
		      "optim and train take block formats too)", name);
		return -2;
	}
	if (ro->has_params || ro->subnormal >= 0 || ro->saturation >= 0 || ro->infinity >= 0
	    || ro->explim >= 0 || ro->tininess >= 0) {
		error("-f %s: --params, --subnormal, --saturation, --infinity, --explim and "
		      "--tininess apply to plain formats; a block format names its element "
		      "format in its spec (block:ELEM:SCALE:...)", name);
		return -2;
	}
	rc = fpl_block_parse(&ro->block, name, err, sizeof err);
	if (rc) {
		error("%s", err[0] ? err : fpl_strerror(rc));
		return -2;
	}
	ro->is_block = 1;
	ro->fmt = ro->block.elem;
	return 0;
}

int cli_round_finish(struct cli_round *ro)
{
	const char *name = ro->format_arg ? ro->format_arg : "fp16";
	fpl_format *f = &ro->fmt;
	int rc;

	ro->is_block = 0;
	if (fpl_block_is_spec(name) && !(ro->format_arg && strchr(ro->format_arg, ',')))
		return finish_block(ro, name);

	if ((ro->rnd_arg && strchr(ro->rnd_arg, ',')) ||
	    (ro->format_arg && strchr(ro->format_arg, ',') && access(ro->format_arg, F_OK))) {
		error("%s %s: a comma list is a sweep, which this command does not run; give "
		      "one value", ro->rnd_arg && strchr(ro->rnd_arg, ',') ? "-r" : "-f",
		      ro->rnd_arg && strchr(ro->rnd_arg, ',') ? ro->rnd_arg : ro->format_arg);
		return -2;
	}
	if (ro->has_params && ro->format_arg && !is_custom(ro->format_arg)) {
		error("--params needs -f custom (got -f %s)", ro->format_arg);
		return -2;
	}
	if (ro->has_params || is_custom(name)) {
		if (!ro->has_params) {
			error("-f %s needs --params P,EMIN,EMAX (or chop's T,EMAX)", name);
			return -2;
		}
		rc = fpl_format_params(f, ro->p, ro->emin, ro->emax);
		if (rc) {
			error("impossible format --params %d,%d,%d: need 1 <= P <= 53, "
			      "-1022 <= EMIN <= EMAX <= 1023", ro->p, ro->emin, ro->emax);
			return -2;
		}
	} else {
		rc = cli_format_resolve(f, name);
		if (rc)
			return rc;
		/* CPFloat's MATLAB interface: bfloat16 without subnormals */
		if (ro->subnormal < 0 && is_bf16(f) && !is_fmt_path(name))
			f->subnormal = FPL_SUB_NO_ROUND;
	}
	if (ro->subnormal >= 0)
		f->subnormal = ro->subnormal == 2   ? FPL_SUB_FTZ
			       : ro->subnormal == 1 ? FPL_SUB_YES
						    : FPL_SUB_NO_ROUND;
	if (ro->has_prob && ro->st.flip == FPL_FLIP_NONE) {
		error("-p PROB needs --flip 1 or 2 (soft errors are off without it)");
		return -2;
	}
	if (ro->saturation >= 0)
		f->overflow = ro->saturation == 2 ? FPL_OVF_SATURATE_KEEP_INF
			      : ro->saturation ? FPL_OVF_SATURATE : FPL_OVF_INF;
	if (ro->tininess >= 0)
		f->tininess = (fpl_tininess)ro->tininess;
	if (ro->explim >= 0)
		f->explim = ro->explim;
	rc = fpl_format_finish(f);
	if (!rc && ro->infinity == 0)
		rc = drop_infinity(f);
	if (!rc && ro->infinity == 1 && f->specials != FPL_SPEC_IEEE) {
		error("--infinity 1: format '%s' has no infinity code (specials %s)", f->name,
		      fpl_specials_name(f->specials));
		return -2;
	}
	if (rc) {
		error("impossible format '%s' with these switches", f->name);
		return -2;
	}
	return 0;
}

/* ------------------------------------------------------------- sweeps */
/* Split s at commas into g->store; the pieces' pointers into out[], at
 * most max of them.  Returns their number, or 0 for an empty piece. */
static size_t split_list(char *s, const char **out, size_t max)
{
	size_t n = 0;
	char *p = s;

	for (;;) {
		char *c = strchr(p, ',');

		if (c)
			*c = 0;
		if (!*p || n == max)
			return 0;
		out[n++] = p;
		if (!c)
			return n;
		p = c + 1;
	}
}

int cli_round_grid(const struct cli_round *base, struct cli_grid *g)
{
	const char *fmts[64], *modes[64];
	const char *farg = base->format_arg ? base->format_arg : "fp16";
	const char *rarg = base->rnd_arg ? base->rnd_arg : fpl_rnd_name(base->rnd);
	size_t lf = strlen(farg) + 1, i, j;
	struct stat sb;
	int rc;

	memset(g, 0, sizeof *g);
	g->store = malloc(lf + strlen(rarg) + 1);
	if (!g->store)
		return error("out of memory");
	memcpy(g->store, farg, lf);
	strcpy(g->store + lf, rarg);
	if (is_fmt_path(farg) && !stat(farg, &sb)) {
		fmts[0] = g->store;
		g->nformats = 1;
	} else {
		g->nformats = split_list(g->store, fmts, 64);
	}
	g->nmodes = split_list(g->store + lf, modes, 64);
	if (!g->nformats || !g->nmodes) {
		error("%s: '%s' is not a comma list of at most 64 %s", g->nformats ? "-r" : "-f",
		      g->nformats ? rarg : farg, g->nformats ? "modes" : "formats");
		cli_grid_release(g);
		return -2;
	}
	g->ro = calloc(g->nformats * g->nmodes, sizeof *g->ro);
	if (!g->ro) {
		cli_grid_release(g);
		return error("out of memory");
	}
	for (i = 0; i < g->nformats; i++) {
		for (j = 0; j < g->nmodes; j++) {
			struct cli_round *ro = &g->ro[g->n];

			*ro = *base;
			ro->format_arg = base->format_arg ? fmts[i] : NULL;
			fpl_rnd_parse(modes[j], &ro->rnd);	/* checked by -r */
			ro->rnd_arg = NULL;
			g->n++;
			rc = cli_round_finish(ro);
			if (rc) {
				cli_grid_release(g);
				return rc;
			}
		}
	}
	return 0;
}

void cli_grid_release(struct cli_grid *g)
{
	free(g->ro);
	free(g->store);
	memset(g, 0, sizeof *g);
}

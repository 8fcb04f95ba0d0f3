/* SPDX-License-Identifier: MIT */
/*
 * cli_hyper.c - the optimizer options of `fplab optim` and `fplab train`
 * (cli.h, "optimizer hyperparameters"): --optim and the hyperparameters,
 * kept as given while parsing and checked and converted afterwards, when
 * the optimizer they must apply to is known.
 *
 * Invariant: every message names the option as the user wrote it (its
 * control characters escaped), and an option not given leaves the
 * command's default in the fpl_opt_hyper.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const char *const algo_names[] = { "sgd", "adagrad", "adam", "adamw", "lamb" };

/* usage_error() with arguments escaped (cli_escaped_msg). */
#define husage cli_escaped_msg

void cli_hyper_init(struct cli_hyper *h)
{
	memset(h, 0, sizeof *h);
	h->algo = FPL_OPT_SGD;
}

int cli_hyper_option(struct cli_hyper *h, int c, const char *arg)
{
	switch (c) {
	case CLI_OPT_OPTIM:
		if (fpl_opt_algo_parse(arg, &h->algo)) {
			char shown[256];

			cli_unknown("optimizer", fpl_escape(shown, sizeof shown, arg), algo_names, 5);
			return -2;
		}
		return 1;
	case CLI_OPT_LR: h->lr = arg; return 1;
	case CLI_OPT_MOMENTUM: h->momentum = arg; return 1;
	case CLI_OPT_DAMPENING: h->dampening = arg; return 1;
	case CLI_OPT_NESTEROV: h->nesterov = 1; return 1;
	case CLI_OPT_WEIGHT_DECAY: h->weight_decay = arg; return 1;
	case CLI_OPT_LR_DECAY: h->lr_decay = arg; return 1;
	case CLI_OPT_INIT_ACC: h->init_acc = arg; return 1;
	case CLI_OPT_BETAS: h->betas = arg; return 1;
	case CLI_OPT_EPS: h->eps = arg; return 1;
	default: return 0;
	}
}

/* Option o's value s (NULL: not given) into *out: finite and >= 0. */
static int number(const char *usage, const char *o, const char *s, double *out)
{
	if (!s)
		return 0;
	if (cli_parse_double(s, out) || isnan(*out))
		return husage(usage, "%s '%s' is not a number", o, s);
	if (!isfinite(*out) || *out < 0)
		return husage(usage, "%s '%s' must be a finite number >= 0", o, s);
	return 0;
}

/* Option o, given when `given`, applies to the optimizers `which` (ok). */
static int applies(const char *usage, const struct cli_hyper *h, const char *o, int given,
		   int ok, const char *which)
{
	if (given && !ok)
		return husage(usage, "%s applies to --optim %s, not %s", o, which,
			      fpl_opt_algo_name(h->algo));
	return 0;
}

/* --betas B1,B2 into out->beta1 and beta2, each in [0, 1). */
static int betas(const char *usage, const char *s, fpl_opt_hyper *out)
{
	char b1[64];
	const char *comma = strchr(s, ',');
	size_t len = comma ? (size_t)(comma - s) : 0;

	if (!comma || len >= sizeof b1 || strchr(comma + 1, ','))
		return husage(usage, "--betas '%s' is not B1,B2", s);
	snprintf(b1, sizeof b1, "%.*s", (int)len, s);
	if (cli_parse_double(b1, &out->beta1) || isnan(out->beta1))
		return husage(usage, "--betas: beta1 '%s' is not a number", b1);
	if (cli_parse_double(comma + 1, &out->beta2) || isnan(out->beta2))
		return husage(usage, "--betas: beta2 '%s' is not a number", comma + 1);
	if (!(out->beta1 >= 0 && out->beta1 < 1))
		return husage(usage, "--betas: beta1 must be in [0, 1)");
	if (!(out->beta2 >= 0 && out->beta2 < 1))
		return husage(usage, "--betas: beta2 must be in [0, 1)");
	return 0;
}

int cli_hyper_finish(const struct cli_hyper *h, fpl_opt_hyper *out, const char *usage)
{
	fpl_opt_algo a = h->algo;
	int sgd = a == FPL_OPT_SGD, adagrad = a == FPL_OPT_ADAGRAD;
	int adam = a == FPL_OPT_ADAM || a == FPL_OPT_ADAMW || a == FPL_OPT_LAMB;

	if (applies(usage, h, "--momentum", !!h->momentum, sgd, "sgd") ||
	    applies(usage, h, "--dampening", !!h->dampening, sgd, "sgd") ||
	    applies(usage, h, "--nesterov", h->nesterov, sgd, "sgd") ||
	    applies(usage, h, "--lr-decay", !!h->lr_decay, adagrad, "adagrad") ||
	    applies(usage, h, "--initial-accumulator", !!h->init_acc, adagrad, "adagrad") ||
	    applies(usage, h, "--betas", !!h->betas, adam, "adam, adamw or lamb") ||
	    applies(usage, h, "--eps", !!h->eps, !sgd, "adagrad, adam, adamw or lamb"))
		return CLI_EXIT_USAGE;
	if (number(usage, "--lr", h->lr, &out->lr) ||
	    number(usage, "--momentum", h->momentum, &out->momentum) ||
	    number(usage, "--weight-decay", h->weight_decay, &out->weight_decay) ||
	    number(usage, "--lr-decay", h->lr_decay, &out->lr_decay) ||
	    number(usage, "--initial-accumulator", h->init_acc, &out->initial_accumulator_value) ||
	    number(usage, "--eps", h->eps, &out->eps))
		return CLI_EXIT_USAGE;
	if (h->dampening && (cli_parse_double(h->dampening, &out->dampening) ||
			     !isfinite(out->dampening)))
		return husage(usage, "--dampening '%s' is not a finite number", h->dampening);
	if (h->betas && betas(usage, h->betas, out))
		return CLI_EXIT_USAGE;
	if (h->nesterov)
		out->nesterov = 1;
	if (out->nesterov && (!(out->momentum > 0) || out->dampening != 0))
		return husage(usage, "--nesterov needs --momentum > 0 and --dampening 0");
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * cmd_models.c - `fplab models`: the orders of accumulation and the named
 * hardware profiles that --order and --profile accept, with their
 * meaning (fplab/accum.h; fplab-models(7) gives the exact semantics).
 *
 * Invariant: the profiles come from fpl_accum_profiles(), so a profile
 * the library adds is listed without a change here; every order spelling
 * below is one fpl_accum_parse_order() reads.
 */
#include <string.h>

#include "cli/cli.h"

static const char models_usage[] =
	"usage: fplab models [--tsv|--json|--ndjson]\n";

static const struct {
	const char *spelling, *meaning;
} orders[] = {
	{ "sequential", "S = S + t_k for k = 0..K-1, one rounding into the accumulator each" },
	{ "pairwise[:L]", "a tree: leaves of L terms (default 1) summed sequentially, halves "
			  "joined recursively, then S + tree" },
	{ "blocked:B[:FMT]", "blocks of B terms summed in the accumulator from +0, each added "
			     "into a promotion format (default fp32)" },
	{ "kahan", "compensated summation (Kahan), every operation in the accumulator format" },
	{ "neumaier", "compensated summation (Neumaier): the larger of s and t decides the "
		      "correction; result s + c" },
	{ "fused:F[:W[:tz|ne]]", "groups of F terms and S added as one multi-term sum, rounded "
				 "once; W: terms aligned to W bits (tz or ne)" },
	{ "pairs[:B[:FMT]]", "VDPBF16PS: k in pairs, fma of the odd (high) element first, then "
			     "the even; B: chains over blocks of B from +0, each added into FMT" },
	{ "evenodd[:B]", "TDPBF16PS: per block of B (default 32) an even and an odd fma chain "
			 "from +0, then S + (even + odd)" },
};

int cmd_models(int argc, char **argv)
{
	static const char *const cols[] = { "kind", "name", "meaning" };
	static const struct option longopts[] = {
		CLI_REPORT_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	enum cli_report report = CLI_REPORT_TEXT;
	const fpl_accum_profile_entry *p;
	struct cli_table t;
	size_t np, i;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (cli_report_option(&report, c))
			continue;
		if (c == 'h')
			return usage_help(models_usage);
		return usage_error(models_usage, NULL);
	}
	if (optind < argc)
		return usage_error(models_usage, "unexpected argument '%s'", argv[optind]);
	p = fpl_accum_profiles(&np);
	cli_table_begin(&t, stdout, report, cols, 3);
	for (i = 0; i < sizeof orders / sizeof *orders; i++) {
		cli_table_str(&t, "order");
		cli_table_str(&t, orders[i].spelling);
		cli_table_str(&t, orders[i].meaning);
	}
	for (i = 0; i < np; i++) {
		cli_table_str(&t, "profile");
		cli_table_str(&t, p[i].name);
		cli_table_str(&t, p[i].summary);
	}
	cli_table_end(&t);
	return CLI_EXIT_OK;
}

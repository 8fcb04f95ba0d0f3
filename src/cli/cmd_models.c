/* SPDX-License-Identifier: MIT */
/*
 * cmd_models.c - `fplab models`: the orders of accumulation and the named
 * hardware profiles that --order and --profile accept, with their
 * meaning (fplab/accum.h; fplab-models(7) gives the exact semantics).
 *
 * Invariant: the orders and profiles come from the library's tables
 * (fpl_accum_orders(), fpl_accum_profiles()), the ones its parsers read,
 * so an order or profile the library adds is listed without a change
 * here, as it is in the CLI's messages (cli_model.c).
 */
#include <string.h>

#include "cli/cli.h"

static const char models_usage[] =
	"usage: fplab models [--tsv|--json|--ndjson]\n";

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
	const fpl_accum_order_entry *o;
	struct cli_table t;
	size_t np, no, i;
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
	o = fpl_accum_orders(&no);
	cli_table_begin(&t, stdout, report, cols, 3);
	for (i = 0; i < no; i++) {
		cli_table_str(&t, "order");
		cli_table_str(&t, o[i].spelling);
		cli_table_str(&t, o[i].summary);
	}
	for (i = 0; i < np; i++) {
		cli_table_str(&t, "profile");
		cli_table_str(&t, p[i].name);
		cli_table_str(&t, p[i].summary);
	}
	cli_table_end(&t);
	return CLI_EXIT_OK;
}

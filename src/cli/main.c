/* SPDX-License-Identifier: MIT */
/*
 * main.c - `fplab COMMAND ...`: the sorted command table, dispatch,
 * `--version`, and the final check of stdout (`fplab help` is
 * cmd_help.c).
 *
 * Invariant: `cli_commands` stays sorted by name (a test checks it), and
 * every command's exit status passes through exit_status(), so output
 * lost on stdout or stderr (a full disk) turns a success into status 1.
 * A command sees argv[0] = "fplab: NAME", so getopt's own messages start
 * like every other one.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <mpfr.h>

#include "cli/cli.h"

/* Keep sorted by name; see the checklist in cli.h. */
const struct cli_command cli_commands[] = {
	{ "allreduce", cmd_allreduce, "all-reduce per-node gradients in a low-precision format" },
	{ "calc", cmd_calc, "element-wise arithmetic in a format: add sub mul div fma sqrt ..." },
	{ "dot", cmd_dot, "a dot product under an accumulation model, with its exact error" },
	{ "formats", cmd_formats, "the catalogue of formats, one format's details, or all its codes" },
	{ "gemm", cmd_gemm, "C = A.B with every output under an accumulation model, exact errors" },
	{ "help", cmd_help, "show the manual page of fplab or of a command" },
	{ "hist", cmd_hist, "underflow/overflow histograms of tensor dumps for a format" },
	{ "info", cmd_info, "versions, compiler, CPU features and kernel sets" },
	{ "models", cmd_models, "the orders and hardware profiles of the accumulation models" },
	{ "optim", cmd_optim, "optimizer steps under precision policies: lost updates, drift" },
	{ "reduce", cmd_reduce, "sum mean var norm2 softmax logsumexp under an accumulation model" },
	{ "round", cmd_round, "round numbers from files or stdin into a format" },
	{ "train", cmd_train, "train an MLP under precision policies, data-parallel: loss, accuracy" },
};
const size_t cli_ncommands = sizeof cli_commands / sizeof *cli_commands;

static const char main_usage[] =
	"usage: fplab COMMAND [OPTIONS] [FILE...]\n"
	"   or: fplab help [COMMAND]\n"
	"   or: fplab --version\n";

static void list_commands(FILE *fp)
{
	size_t i;

	fputs("\ncommands:\n", fp);
	for (i = 0; i < cli_ncommands; i++)
		fprintf(fp, "  %-9s %s\n", cli_commands[i].name, cli_commands[i].summary);
	fputs("\n'fplab COMMAND -h' shows a command's options; 'fplab help COMMAND' its manual.\n",
	      fp);
}

const struct cli_command *cli_find_command(const char *name)
{
	size_t i;

	for (i = 0; i < cli_ncommands; i++)
		if (!strcmp(cli_commands[i].name, name))
			return &cli_commands[i];
	return NULL;
}

/* Is `arg` (dashes or not) close to --version ("version", "-version")? */
static int near_version(const char *arg)
{
	static const char *const v[] = { "version" };

	arg += strspn(arg, "-");
	return cli_closest(arg, v, 1) != NULL;
}

int cli_unknown_command(const char *name)
{
	const char *names[64];
	size_t i, n = cli_ncommands < 64 ? cli_ncommands : 64;

	for (i = 0; i < n; i++)
		names[i] = cli_commands[i].name;
	if (!cli_closest(name, names, n) && near_version(name)) {
		error("unknown command '%s'; did you mean 'fplab --version'?", name);
		return CLI_EXIT_USAGE;
	}
	cli_unknown("command", name, names, n);
	fputs("run 'fplab -h' for the list of commands\n", stderr);
	return CLI_EXIT_USAGE;
}

/* ---------------------------------------------------------------- main */
/*
 * The exit status of a command that returned `rc`: output lost on stdout
 * (a full disk) or on stderr turns success into 1.  One
 * message for stdout, none when the command failed (it said why); none
 * can be shown for stderr.
 */
static int exit_status(int rc)
{
	if (rc != CLI_EXIT_OK) {
		fflush(stdout);
		return rc;
	}
	if (cli_flush_stdout())
		rc = CLI_EXIT_FAIL;
	if (fflush(stderr) || ferror(stderr))
		rc = CLI_EXIT_FAIL;
	return rc;
}

int main(int argc, char **argv)
{
	const struct cli_command *cmd;
	static char prog[64];
	int rc;

	if (argc < 2)
		return usage_error(main_usage, NULL);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(main_usage, stdout);
		list_commands(stdout);
		return cli_flush_stdout() ? CLI_EXIT_FAIL : CLI_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("fplab %s (libfplab %s, MPFR %s)\n", FPL_VERSION_STRING, fpl_version(),
		       mpfr_get_version());
		return cli_flush_stdout() ? CLI_EXIT_FAIL : CLI_EXIT_OK;
	}
	if (argv[1][0] == '-') {
		if (near_version(argv[1]))
			error("unknown option '%s'; did you mean '--version'?", argv[1]);
		else
			error("unknown option '%s'", argv[1]);
		return usage_error(main_usage, NULL);
	}
	cmd = cli_find_command(argv[1]);
	if (!cmd)
		return cli_unknown_command(argv[1]);
	cli_cmd = cmd->name;
	/* getopt prints "argv[0]: unrecognized option ...": make its argv[0]
	 * "fplab: CMD" so its messages start like every other one. */
	snprintf(prog, sizeof prog, "fplab: %s", cmd->name);
	argv[1] = prog;
	optind = 0;	/* glibc: full getopt reset for the command */
	rc = cmd->fn(argc - 1, argv + 1);
	return exit_status(rc);
}

/* SPDX-License-Identifier: MIT */
/*
 * main.c - `fplab COMMAND ...`: the sorted command table, dispatch,
 * `fplab help [COMMAND]`, `--version`, and the final check of stdout.
 *
 * Invariant: `cli_commands` stays sorted by name (a test checks it), and
 * every command's exit status passes through exit_status(), so output
 * lost on stdout or stderr (a full disk) turns a success into status 1.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpfr.h>

#include "cli/cli.h"

/* Keep sorted by name; see the checklist in cli.h. */
const struct cli_command cli_commands[] = {
	{ "calc", cmd_calc, "element-wise arithmetic in a format: add sub mul div fma sqrt ..." },
	{ "formats", cmd_formats, "the catalogue of formats, one format's details, or all its codes" },
	{ "help", cmd_help, "show the manual page of fplab or of a command" },
	{ "hist", cmd_hist, "underflow/overflow histograms of tensor dumps for a format" },
	{ "info", cmd_info, "versions, compiler, CPU features and kernel sets" },
	{ "round", cmd_round, "round numbers from files or stdin into a format" },
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

static const struct cli_command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < cli_ncommands; i++)
		if (!strcmp(cli_commands[i].name, name))
			return &cli_commands[i];
	return NULL;
}

static int unknown_command(const char *name)
{
	const char *names[64];
	size_t i, n = cli_ncommands < 64 ? cli_ncommands : 64;

	for (i = 0; i < n; i++)
		names[i] = cli_commands[i].name;
	cli_unknown("command", name, names, n);
	fputs("run 'fplab -h' for the list of commands\n", stderr);
	return CLI_EXIT_USAGE;
}

/* ---------------------------------------------------------------- help */
static const char help_usage[] =
	"usage: fplab help [COMMAND]\n";

/* Is `path` a regular file? */
static int is_file(const char *path)
{
	struct stat sb;

	return !stat(path, &sb) && S_ISREG(sb.st_mode);
}

/*
 * The man page `page` (e.g. "fplab-round.1") next to the binary: the
 * source tree (build/DIR/fplab -> ../../man, ./fplab -> man) or an
 * installation (PREFIX/bin/fplab -> PREFIX/share/man/man1).
 */
static int find_page(const char *page, char *out, size_t len)
{
	static const char *const rel[] = {
		"../../man", "../man", "man", "../share/man/man1", "../share/man/man5"
	};
	char exe[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
	char *slash;
	size_t i;

	if (k <= 0)
		return -1;
	exe[k] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	for (i = 0; i < sizeof rel / sizeof *rel; i++) {
		snprintf(out, len, "%s/%s/%s", exe, rel[i], page);
		if (is_file(out))
			return 0;
	}
	return -1;
}

int cmd_help(int argc, char **argv)
{
	char page[128], path[PATH_MAX + 160];
	const char *topic = argc > 1 ? argv[1] : NULL;

	if (topic && (!strcmp(topic, "-h") || !strcmp(topic, "--help")))
		return usage_help(help_usage);
	if (argc > 2)
		return usage_error(help_usage, "too many arguments");
	if (topic && !find_command(topic))
		return unknown_command(topic);
	if (topic)
		snprintf(page, sizeof page, "fplab-%s.1", topic);
	else
		snprintf(page, sizeof page, "fplab.1");
	if (cli_flush_stdout())
		return CLI_EXIT_FAIL;
	if (!find_page(page, path, sizeof path)) {
		execlp("man", "man", "-l", path, (char *)NULL);
	} else {
		char name[128];

		snprintf(name, sizeof name, "%.*s", (int)(strlen(page) - 2), page);
		execlp("man", "man", name, (char *)NULL);
	}
	error("cannot run man to show %s: %s", page, strerror(errno));
	return CLI_EXIT_FAIL;
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
		error("unknown option '%s'", argv[1]);
		return usage_error(main_usage, NULL);
	}
	cmd = find_command(argv[1]);
	if (!cmd)
		return unknown_command(argv[1]);
	cli_cmd = cmd->name;
	optind = 0;	/* glibc: full getopt reset for the command */
	rc = cmd->fn(argc - 1, argv + 1);
	return exit_status(rc);
}

/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_cli.c - libFuzzer target: the `hist` and `round`
 * commands run in-process on a file holding the input, through their real
 * entry points cmd_hist() and cmd_round(), so the bytes go through the
 * command line, the file-type detection, every reader and the number
 * parser as a user's file would.
 *
 * Input layout: byte 0 picks the argument set (argsets[]), byte 1 the file
 * name (names[]: by extension, or none so that the magic bytes or the text
 * fallback decide), the rest is the file.  Any crash, sanitizer report or
 * leak is a bug; a non-zero exit status is fine, exit() or abort() is not.
 *
 * Invariant: the commands' stdout is /dev/null (fd 1) and so is the FILE
 * `stderr` they print to, but fd 2 stays the real stderr, where libFuzzer
 * (which captured the original `stderr` FILE at start-up) and the
 * sanitizers report.  Built with main.c compiled as -Dmain=fplab_main.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* "FILE" is replaced by the input's path, "DIR" by the scratch directory. */
static const char *const argsets[][12] = {
	{ "hist", "FILE" },
	{ "hist", "--tsv", "FILE" },
	{ "hist", "--json", "-f", "e4m3fn", "FILE" },
	{ "hist", "--aps", "FILE" },
	{ "hist", "--mx", "32", "FILE" },
	{ "hist", "--svg", "/dev/null", "FILE" },
	{ "hist", "--svg", "DIR/h.svg", "--json", "-f", "e5m2", "--aps", "FILE" },
	{ "hist", "--dtype", "f16", "--offset", "3", "--count", "100", "FILE" },
	{ "hist", "--dtype", "bf16", "--big-endian", "--tsv", "-f", "e2m1", "FILE" },
	{ "hist", "--tensor", "a", "--tsv", "-f", "e8m0", "--mx", "7", "FILE" },
	{ "hist", "-f", "e3m2", "--scale", "2^-3", "--loss-scale", "1024", "-r", "sp", "FILE" },
	{ "hist", "--json", "FILE", "FILE" },
	{ "round", "-f", "fp16", "FILE" },
	{ "round", "-f", "bf16", "-r", "sp", "--stats", "FILE" },
	{ "round", "--in", "npy", "--out", "bits", "-f", "e5m2", "FILE" },
	{ "round", "--in", "f16", "--out", "hex", "-f", "e4m3fn", "FILE" },
	{ "round", "--in", "codes", "-f", "e5m2", "--out", "npy", "FILE" },
	{ "round", "--in", "bf16", "--json", "-f", "e4m3fnuz", "FILE" },
	{ "round", "-f", "e4m3fn", "--out", "bits", "--saturation", "1", "--subnormal", "0", "FILE" },
	{ "round", "--in", "f32", "--out", "npy", "-o", "DIR/r.npy", "-r", "se", "--seed", "7", "FILE" },
	{ "round", "--params", "5,-6,7", "-r", "od", "--out", "hex", "--tsv", "FILE" },
	{ "round", "-f", "e2m3", "-r", "sp", "--sr-bits", "5", "--flip", "1", "-p", "0.5", "FILE" },
	{ "round", "--in", "f64", "--out", "f32", "-f", "tf32", "FILE", "FILE" },
	{ "round", "--out", "npy", "-o", "DIR/r.npy", "--stats", "--json", "FILE" },
	{ "round", "-f", "fp16,e4m3fn", "-r", "ne,sp", "--ndjson", "FILE" },
	{ "round", "-f", "bf16", "--flags", "--out", "bits", "FILE" },
};
#define NARGSETS (sizeof argsets / sizeof *argsets)

static const char *const names[] = { "x", "x.npy", "x.npz", "x.safetensors", "x.txt" };
#define NNAMES (sizeof names / sizeof *names)

static char dir[256];	/* the scratch directory */
static FILE *real_stderr;	/* the harness's own messages */

static void remove_dir(void)
{
	static const char *const files[] = { "h.svg", "r.npy" };
	char p[300];

	for (size_t i = 0; i < NNAMES; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		unlink(p);
	}
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, files[i]);
		unlink(p);
	}
	rmdir(dir);
}

/* Write data[0..size) to `path`; abort (a harness failure) if impossible. */
static void write_file(const char *path, const uint8_t *data, size_t size)
{
	FILE *fp = fopen(path, "wb");

	if (!fp || (size && fwrite(data, 1, size, fp) != size) || fclose(fp))
		abort();
}

/* Run the command line `args` on `path`, as main() would; returns the
 * exit status. */
static int run(const char *const *args, const char *path)
{
	static char store[12][320];
	char *argv[13];
	int argc = 0;

	for (const char *const *a = args; argc < 12 && *a; a++, argc++) {
		if (!strcmp(*a, "FILE"))
			snprintf(store[argc], sizeof store[argc], "%s", path);
		else if (!strncmp(*a, "DIR/", 4))
			snprintf(store[argc], sizeof store[argc], "%s/%s", dir, *a + 4);
		else
			snprintf(store[argc], sizeof store[argc], "%s", *a);
		argv[argc] = store[argc];
	}
	argv[argc] = NULL;
	cli_cmd = argv[0];
	optind = 0;
	int rc = !strcmp(argv[0], "hist") ? cmd_hist(argc, argv) : cmd_round(argc, argv);
	if (cli_flush_stdout() && rc == CLI_EXIT_OK)
		rc = CLI_EXIT_FAIL;
	clearerr(stdout);
	cli_cmd = NULL;
	return rc;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *t = getenv("TMPDIR");
	(void)argc;
	(void)argv;

	snprintf(dir, sizeof dir, "%s/fplab-fuzz-cli-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir))
		abort();
	atexit(remove_dir);
	/* stdout (fd 1) and the commands' `stderr` go to /dev/null; fd 2 stays */
	int fd = open("/dev/null", O_WRONLY);
	FILE *null = fdopen(open("/dev/null", O_WRONLY), "w");
	if (fd < 0 || !null || dup2(fd, 1) < 0)
		abort();
	close(fd);
	real_stderr = stderr;
	stderr = null;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t k = size > 0 ? data[0] % NARGSETS : 0;
	size_t f = size > 1 ? data[1] % NNAMES : 0;
	size_t skip = size < 2 ? size : 2;
	char path[300];

	snprintf(path, sizeof path, "%s/%s", dir, names[f]);
	write_file(path, data + skip, size - skip);
	int rc = run(argsets[k], path);
	if (rc < 0 || rc > 2) {
		fprintf(real_stderr, "fuzz_cli: %s: exit status %d is not 0, 1 or 2\n",
			argsets[k][0], rc);
		abort();
	}
	unlink(path);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_cli.c - libFuzzer target: the `hist`, `round`, `dot`,
 * `gemm`, `reduce`, `allreduce`, `optim` and `train` commands run
 * in-process on a file holding the input, through their real entry points
 * (cmd_hist(), cmd_round(), ... found in the command table), so the bytes
 * go through the command line, the file-type detection, every reader and
 * the number parser as a user's file would, and on into the accumulation
 * models, the all-reduce schedules, the optimizer policies and training
 * (a policy file too).  Sizes stay small: one input must run in well
 * under the 10 s timeout under AddressSanitizer.
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

/* Every "FILE" in an argument is replaced by the input's path ("FILE:a"
 * names the member or tensor a, "FILE,FILE" gives it twice), a leading
 * "DIR" by the scratch directory.  tests/fuzz/run.sh makes a seed of each
 * seed file for each set: keep each set on one line starting with
 * '\t{ "'. */
#define MAXARGS 24
static const char *const argsets[][MAXARGS] = {
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
	{ "dot", "-a", "FILE", "-b", "FILE", "--acc", "fp16,bf16", "--order", "sequential,pairwise:4,kahan", "--threads", "1" },
	{ "dot", "-a", "FILE", "-b", "FILE", "-f", "e4m3fn", "--acc", "fp16:sp", "--order", "blocked:8:fp32,neumaier", "--tsv" },
	{ "dot", "-a", "FILE:a", "-b", "FILE", "--a-format", "e5m2", "--prod", "fp16", "--order", "fused:4:12:tz", "-o", "DIR/r.npy" },
	{ "dot", "-a", "FILE", "-b", "FILE", "--profile", "avx512bf16", "--backend", "both", "--json" },
	{ "dot", "-a", "FILE", "-b", "FILE", "--profile", "fp32-fma", "--backend", "native", "--reference", "given" },
	{ "gemm", "-a", "FILE", "-b", "FILE", "--acc", "fp16", "--order", "sequential,blocked:2:fp32", "--threads", "1", "--tsv" },
	{ "gemm", "-a", "FILE", "-b", "FILE", "--transb", "-f", "e4m3fn", "--acc", "bf16:sp", "--order", "pairs:4", "-o", "DIR/r.npy" },
	{ "gemm", "-a", "FILE", "-b", "FILE", "--transa", "--profile", "fp32-fma", "--backend", "both", "--ndjson" },
	{ "gemm", "-a", "FILE", "-b", "FILE", "--profile", "onednn-bf16", "--out-format", "bf16", "--json" },
	{ "gemm", "-a", "FILE", "-b", "FILE", "--profile", "fp16-fma", "--backend", "both" },
	{ "gemm", "-a", "FILE:a", "-b", "FILE:a", "--transa", "--profile", "amx-bf16", "--threads", "1" },
	{ "reduce", "sum", "-x", "FILE", "--acc", "fp16,e5m2", "--order", "sequential,pairwise,kahan", "--threads", "1" },
	{ "reduce", "mean", "-x", "FILE", "--acc", "bf16", "--order", "neumaier", "--tsv" },
	{ "reduce", "var", "-x", "FILE", "-f", "e4m3fn", "--acc", "fp16:sp", "--seed", "3", "--json" },
	{ "reduce", "norm2", "-x", "FILE", "--acc", "e5m2", "--order", "fused:8" },
	{ "reduce", "var", "-x", "FILE", "--acc", "bf16,fp16", "--order", "pairwise:2", "--sample", "--tsv" },
	{ "reduce", "softmax", "-x", "FILE", "--acc", "bf16", "-o", "DIR/r.npy" },
	{ "reduce", "logsumexp", "-x", "FILE:a", "--acc", "fp16", "--order", "blocked:4:fp32", "--ndjson" },
	{ "allreduce", "--stacked", "FILE", "--comm", "e5m2", "--algo", "ring,hier", "--group", "2", "--threads", "1", "--tsv" },
	{ "allreduce", "--inputs", "FILE,FILE,FILE", "--comm", "e4m3fn", "--scale", "none,aps", "--algo", "tree" },
	{ "allreduce", "--stacked", "FILE", "--comm", "e3m2", "--acc", "fp16", "--scale", "loss:1024", "--fp32-layers", "last", "-o", "DIR/r.npz" },
	{ "allreduce", "--inputs", "FILE,FILE", "--comm", "e2m1:sp", "--algo", "sequential", "--seed", "5", "--json" },
	{ "optim", "--init", "FILE", "-g", "FILE", "-g", "FILE", "--policy", "none:fp16", "--policy", "fp32-master:fp16", "--tsv" },
	{ "optim", "--init", "FILE", "-g", "FILE", "--optim", "adam", "--policy", "split:bf16", "--policy", "kahan:bf16", "--steps", "3" },
	{ "optim", "--grad-stack", "FILE", "--weights", "normal:0,1", "--optim", "lamb", "--policy", "stochastic:bf16:sp", "--json" },
	{ "optim", "-g", "FILE", "--loss-scale", "dynamic:1024:2:0.5:2", "--policy", "fp32-master:fp16", "--every", "1", "--svg", "DIR/h.svg" },
	{ "optim", "--init", "FILE", "-g", "FILE", "--optim", "adagrad", "--loss-scale", "aps", "--policy", "none:e5m2", "--ndjson" },
	{ "train", "--policy", "FILE", "--data", "generated:16:4:3", "--layers", "4-3-3", "--batch", "4", "--test-data", "none", "--threads", "1" },
	{ "train", "--policy", "FILE", "--policy-dump" },
	{ "train", "--policy", "bf16-mixed", "--set", "act=fp16", "--policy", "FILE", "--data", "generated:8:4:2", "--layers", "4-2", "--batch", "2", "--nodes", "2", "--tsv" },
	{ "train", "--data", "FILE,FILE", "--layers", "4-3-2", "--train-limit", "64", "--batch", "8", "--test-data", "none", "--threads", "1" },
	{ "train", "--data", "FILE:a,FILE:b", "--test-data", "FILE:a,FILE:b", "--layers", "2-2", "--batch", "1", "--policy", "fp16-mixed", "--json" },
	{ "train", "--data", "FILE,FILE", "--train-limit", "2", "--batch", "1", "--test-data", "none", "--policy", "fp8-e4m3", "--threads", "1" },
};
#define NARGSETS (sizeof argsets / sizeof *argsets)

static const char *const names[] = { "x", "x.npy", "x.npz", "x.safetensors", "x.txt" };
#define NNAMES (sizeof names / sizeof *names)

static char dir[256];	/* the scratch directory */
static FILE *real_stderr;	/* the harness's own messages */

static void remove_dir(void)
{
	static const char *const files[] = { "h.svg", "r.npy", "r.npz" };
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

/* Copy the argument `a` into `out` (of `cap` bytes), every "FILE"
 * replaced by `path` and a leading "DIR" by the scratch directory. */
static void expand(char *out, size_t cap, const char *a, const char *path)
{
	size_t n = 0;

	if (!strncmp(a, "DIR/", 4)) {
		n = (size_t)snprintf(out, cap, "%s", dir);
		a += 3;
	}
	while (*a && n + 1 < cap) {
		if (!strncmp(a, "FILE", 4)) {
			n += (size_t)snprintf(out + n, cap - n, "%s", path);
			a += 4;
		} else {
			out[n++] = *a++;
		}
		if (n >= cap)
			abort();	/* an argument too long for the harness */
	}
	if (*a)
		abort();
	out[n] = 0;
}

/* Run the command line `args` on `path`, as main() would; returns the
 * exit status. */
static int run(const char *const *args, const char *path)
{
	static char store[MAXARGS][1024];
	char *argv[MAXARGS + 1];
	int argc = 0;

	for (const char *const *a = args; argc < MAXARGS && *a; a++, argc++) {
		expand(store[argc], sizeof store[argc], *a, path);
		argv[argc] = store[argc];
	}
	argv[argc] = NULL;
	const struct cli_command *cmd = cli_find_command(argv[0]);
	if (!cmd)
		abort();	/* a harness error: no such command */
	cli_cmd = argv[0];
	optind = 0;
	int rc = cmd->fn(argc, argv);
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

/* SPDX-License-Identifier: MIT */
/*
 * cmd_info.c - `fplab info`: versions, compiler, CPU features detected,
 * kernel sets compiled and selected.
 *
 * Invariant: every line comes from the library (fpl_cpu, fpl_kernels_*)
 * or MPFR at run time, except the compiler, fixed when fplab was built.
 */
#include <string.h>

#include <mpfr.h>

#include "cli/cli.h"

static const char info_usage[] =
	"usage: fplab info [--tsv|--json]\n";

static struct info_opts {
	enum cli_report report;
} opt;

#if defined(__clang__)
#define COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define COMPILER "gcc " __VERSION__
#else
#define COMPILER "unknown"
#endif

/* Add one key/value row. */
static void row(struct cli_table *t, const char *key, const char *value)
{
	cli_table_str(t, key);
	cli_table_str(t, value);
}

int cmd_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_REPORT_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const cols[] = { "key", "value" };
	const fpl_cpu_features *cpu;
	struct cli_table t;
	char status[160];
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (cli_report_option(&opt.report, c))
			continue;
		if (c == 'h')
			return usage_help(info_usage);
		return usage_error(info_usage, NULL);
	}
	if (optind < argc)
		return usage_error(info_usage, "unexpected argument '%s'", argv[optind]);
	cpu = fpl_cpu();
	cli_table_begin(&t, stdout, opt.report, cols, 2);
	row(&t, "fplab", FPL_VERSION_STRING);
	row(&t, "libfplab", fpl_version());
	row(&t, "mpfr", mpfr_get_version());
	row(&t, "compiler", COMPILER);
	row(&t, "avx2", cpu->avx2 ? "yes" : "no");
	row(&t, "fma", cpu->fma ? "yes" : "no");
	row(&t, "f16c", cpu->f16c ? "yes" : "no");
	row(&t, "avx512f", cpu->avx512f ? "yes" : "no");
	row(&t, "avx512dq", cpu->avx512dq ? "yes" : "no");
	row(&t, "avx512bw", cpu->avx512bw ? "yes" : "no");
	row(&t, "avx512vl", cpu->avx512vl ? "yes" : "no");
	row(&t, "avx512_bf16", cpu->avx512_bf16 ? "yes" : "no");
	row(&t, "avx512_fp16", cpu->avx512_fp16 ? "yes" : "no");
	row(&t, "amx_tile", cpu->amx_tile ? "yes" : "no");
	row(&t, "amx_bf16", cpu->amx_bf16 ? "yes" : "no");
	row(&t, "kernels_compiled", fpl_kernels_compiled());
	row(&t, "kernels_selected", fpl_kernels_selected());
	row(&t, "kernels_reason", fpl_kernels_reason());
	if (fpl_kernels_status())
		snprintf(status, sizeof status, "error: %s", fpl_strerror(fpl_kernels_status()));
	else
		snprintf(status, sizeof status, "ok");
	row(&t, "kernels_status", status);
	{	/* the native kernels: each one usable, or why not */
		size_t n, i;
		const fpl_native_kernel *k = fpl_native_kernels(&n);
		for (i = 0; i < n; i++) {
			char key[64], val[256];
			const char *why;
			int ok = fpl_native_usable(&k[i], &why);
			snprintf(key, sizeof key, "native_%s", k[i].name);
			snprintf(val, sizeof val, "%s: %s %s%s%s", ok ? "yes" : "no",
				 k[i].op == FPL_NATIVE_GEMM    ? "gemm, profile"
				 : k[i].op == FPL_NATIVE_ROUND ? "round into"
							       : "add mul fma in",
				 k[i].profile, ok ? "" : "; ", ok ? "" : why);
			row(&t, key, val);
		}
	}
	cli_table_end(&t);
	if (fpl_kernels_status())
		return error("FPLAB_KERNELS: %s", fpl_strerror(fpl_kernels_status())),
			CLI_EXIT_FAIL;
	return CLI_EXIT_OK;
}

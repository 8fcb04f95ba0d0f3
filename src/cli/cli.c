/* SPDX-License-Identifier: MIT */
/*
 * cli.c - helpers shared by the fplab commands: messages, name
 * suggestions and number parsing.
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

const char *cli_cmd;

/* ------------------------------------------------------------ messages */
/*
 * The message fmt, ap on stderr after `prefix`, on one line.  Every
 * argument that can come from a user (a file name, an option's value, a
 * token of a file) is meant to be escaped by its caller (fpl_escape);
 * as the last line of defence a control byte that still reaches here is
 * written as \xHH, so no message can move the cursor, recolour the
 * terminal or split a line of a log.
 */
__attribute__((format(printf, 2, 0)))
static void put_message(const char *prefix, const char *fmt, va_list ap)
{
	char stack[1024], *buf = stack;
	const unsigned char *p;
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(stack, sizeof stack, fmt, aq);
	va_end(aq);
	if (n >= (int)sizeof stack && (buf = malloc((size_t)n + 1)) != NULL)
		vsnprintf(buf, (size_t)n + 1, fmt, ap);
	else if (!buf)
		buf = stack;	/* out of memory: the message cut */
	fflush(stdout);
	fputs(prefix, stderr);
	for (p = (const unsigned char *)(n < 0 ? "(message lost)" : buf); *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			fprintf(stderr, "\\x%02x", *p);
		else
			fputc(*p, stderr);
	fputc('\n', stderr);
	if (buf != stack)
		free(buf);
}

__attribute__((format(printf, 1, 0)))
static void vmessage(const char *fmt, va_list ap)
{
	char prefix[128];

	if (cli_cmd)
		snprintf(prefix, sizeof prefix, "fplab: %s: ", cli_cmd);
	else
		snprintf(prefix, sizeof prefix, "fplab: ");
	put_message(prefix, fmt, ap);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	put_message("fplab: warning: ", fmt, ap);
	va_end(ap);
}

int usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vmessage(fmt, ap);
		va_end(ap);
	}
	if (usage)
		fputs(usage, stderr);
	return CLI_EXIT_USAGE;
}

int cli_escaped_msg(const char *usage, const char *fmt, ...)
{
	char raw[2048], shown[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	fpl_escape(shown, sizeof shown, raw);
	return usage ? usage_error(usage, "%s", shown) : error("%s", shown);
}

/*
 * The block `-h` appends for a command that rounds (its usage names
 * "-r MODE"): the modes with CPFloat's codes and the most used formats.
 * It starts with a blank line, so the usage lines above it stay exactly
 * the man page's SYNOPSIS (tests/cli/synopsis.sh stops at the blank).
 */
static const char round_help[] =
	"\n"
	"rounding modes (-r NAME or CPFloat's code):\n"
	"  ne  1  nearest, ties to even     tz  4  toward zero\n"
	"  na -1  nearest, ties away        od  7  to odd\n"
	"  nz  0  nearest, ties to zero     sp  5  stochastic, proportional\n"
	"  tp  2  toward +inf               se  6  stochastic, equal odds\n"
	"  tn  3  toward -inf\n"
	"formats (-f): fp64 fp32 tf32 fp16 (h) bf16 (b) e5m2 e4m3fn (q43) e4m3fnuz\n"
	"  e3m2 e2m3 e2m1, any eXmY, --params P,EMIN,EMAX or a .fmt file;\n"
	"  'fplab formats' lists them all with their aliases.\n"
	"'fplab help COMMAND' shows the manual page.\n";

int usage_help(const char *usage)
{
	fputs(usage, stdout);
	if (strstr(usage, "[-r MODE]"))
		fputs(round_help, stdout);
	return CLI_EXIT_OK;
}

/*
 * Edit distance, case-folded: Levenshtein with adjacent transpositions
 * counted as one edit (optimal string alignment), three rows.
 */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t row[3][65];

	if (la > 64 || lb > 64)
		return (size_t)-1;
	for (j = 0; j <= lb; j++)
		row[0][j] = j;
	for (i = 1; i <= la; i++) {
		size_t *cur = row[i % 3], *prev = row[(i + 2) % 3], *prev2 = row[(i + 1) % 3];
		int ca = tolower((unsigned char)a[i - 1]);

		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			int cb = tolower((unsigned char)b[j - 1]);
			size_t d = prev[j - 1] + (ca != cb);

			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < d)
				d = prev2[j - 2] + 1;
			cur[j] = d;
		}
	}
	return row[la % 3][lb];
}

/* Do a and b hold the same letters (case-folded), in any order? */
static int anagram(const char *a, const char *b)
{
	int count[256] = { 0 };
	size_t i;

	if (strlen(a) != strlen(b))
		return 0;
	for (i = 0; a[i]; i++) {
		count[tolower((unsigned char)a[i])]++;
		count[tolower((unsigned char)b[i])]--;
	}
	for (i = 0; i < 256; i++)
		if (count[i])
			return 0;
	return 1;
}

const char *cli_closest(const char *name, const char *const *cands, size_t n)
{
	size_t best = (size_t)-1, bestd = 0, limit = (strlen(name) + 2) / 3, i;
	const char *pick = NULL;

	if (limit < 1)
		limit = 1;
	for (i = 0; i < n; i++) {
		size_t d = distance(name, cands[i]), score;

		if (d == (size_t)-1)
			continue;
		/* ties go to a candidate with the same letters (a typo'd order) */
		score = 2 * d + !anagram(name, cands[i]);
		if (score < best) {
			best = score;
			bestd = d;
			pick = cands[i];
		}
	}
	return pick && bestd <= limit ? pick : NULL;
}

int cli_unknown(const char *what, const char *name, const char *const *cands, size_t n)
{
	const char *s = cli_closest(name, cands, n);

	if (s)
		return error("unknown %s '%s'; did you mean '%s'?", what, name, s);
	return error("unknown %s '%s'", what, name);
}

int cli_name_index(const char *what, const char *name, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(name, names[i]))
			return (int)i;
	cli_unknown(what, name, names, n);
	return -1;
}

/* ------------------------------------------------------ parsing helpers */
int cli_parse_long(const char *s, long *out)
{
	char *end;
	long v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end)
		return -1;
	/* ERANGE is fine: overflow gives +-inf, underflow the rounded value */
	*out = v;
	return 0;
}

int cli_parse_switch(const char *opt, const char *s, int max, int *out)
{
	long v;

	if (cli_parse_long(s, &v) || v < 0 || v > max) {
		if (max == 1)
			error("%s: '%s' is not 0 or 1", opt, s);
		else
			error("%s: '%s' is not an integer in 0..%d", opt, s, max);
		return -2;
	}
	*out = (int)v;
	return 0;
}

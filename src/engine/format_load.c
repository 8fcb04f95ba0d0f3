/* SPDX-License-Identifier: MIT */
/*
 * format_load.c - the strict .fmt parser (fplab-formats(5)).
 *
 * One `key = value` per line, '#' starts a comment.  Keys: name aliases e
 * m bias subnormal daz specials overflow tininess nan explim emax_limit.
 * An unknown key, a repeated key, a malformed or impossible value, or a
 * missing e or m is an error naming the file and the line.  Unset switches
 * take the IEEE defaults and bias defaults to 2^(e-1)-1.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"

typedef struct keyword {
	const char *word;
	int value;
} keyword;

static const keyword subnormal_words[] = {
	{ "yes", FPL_SUB_YES }, { "no-round", FPL_SUB_NO_ROUND }, { "ftz", FPL_SUB_FTZ }, { 0, 0 } };
static const keyword specials_words[] = {
	{ "ieee", FPL_SPEC_IEEE }, { "fn", FPL_SPEC_FN }, { "fnuz", FPL_SPEC_FNUZ },
	{ "none", FPL_SPEC_NONE }, { "e8m0", FPL_SPEC_E8M0 }, { 0, 0 } };
static const keyword overflow_words[] = {
	{ "inf", FPL_OVF_INF }, { "saturate", FPL_OVF_SATURATE },
	{ "saturate-keep-inf", FPL_OVF_SATURATE_KEEP_INF }, { "inf-always", FPL_OVF_INF_ALWAYS },
	{ 0, 0 } };
static const keyword tininess_words[] = {
	{ "after", FPL_TINY_AFTER }, { "before", FPL_TINY_BEFORE }, { 0, 0 } };
static const keyword nan_words[] = {
	{ "x86", FPL_NAN_X86 }, { "canonical", FPL_NAN_CANONICAL }, { "ones", FPL_NAN_ONES },
	{ 0, 0 } };
static const keyword bool_words[] = { { "0", 0 }, { "1", 1 }, { 0, 0 } };

static int word_value(const keyword *k, const char *s, int *out)
{
	for (; k->word; k++)
		if (!strcmp(k->word, s)) {
			*out = k->value;
			return 0;
		}
	return -1;
}

static int int_value(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = 0;
	return s;
}

enum { K_NAME, K_ALIASES, K_E, K_M, K_BIAS, K_SUB, K_DAZ, K_SPEC, K_OVF, K_TINY, K_NAN,
       K_EXPLIM, K_EMAXLIM, K_COUNT };
static const char *const keys[K_COUNT] = {
	"name", "aliases", "e", "m", "bias", "subnormal", "daz", "specials", "overflow",
	"tininess", "nan", "explim", "emax_limit"
};

/* Apply one key; returns NULL or a description of the problem. */
static const char *apply(fpl_format *f, int k, const char *v, int *bias_set)
{
	int x;

	switch (k) {
	case K_NAME:
		if (!*v || strlen(v) >= sizeof f->name || strchr(v, ' '))
			return "name must be one word of at most 31 characters";
		strcpy(f->name, v);
		return NULL;
	case K_ALIASES:
		return NULL;
	case K_E:
		return int_value(v, 1, 11, &f->e) ? "e must be an integer from 1 to 11" : NULL;
	case K_M:
		return int_value(v, 0, 52, &f->m) ? "m must be an integer from 0 to 52" : NULL;
	case K_BIAS:
		*bias_set = 1;
		return int_value(v, -2048, 2048, &f->bias) ? "bias must be an integer" : NULL;
	case K_SUB:
		if (word_value(subnormal_words, v, &x))
			return "subnormal must be yes, no-round or ftz";
		f->subnormal = (fpl_subnormal)x;
		return NULL;
	case K_DAZ:
		return word_value(bool_words, v, &f->daz) ? "daz must be 0 or 1" : NULL;
	case K_SPEC:
		if (word_value(specials_words, v, &x))
			return "specials must be ieee, fn, fnuz, none or e8m0";
		f->specials = (fpl_specials)x;
		return NULL;
	case K_OVF:
		if (word_value(overflow_words, v, &x))
			return "overflow must be inf, saturate or saturate-keep-inf";
		f->overflow = (fpl_overflow)x;
		return NULL;
	case K_TINY:
		if (word_value(tininess_words, v, &x))
			return "tininess must be after or before";
		f->tininess = (fpl_tininess)x;
		return NULL;
	case K_NAN:
		if (word_value(nan_words, v, &x))
			return "nan must be x86 or canonical";
		f->nan_rule = (fpl_nan_rule)x;
		return NULL;
	case K_EXPLIM:
		return word_value(bool_words, v, &f->explim) ? "explim must be 0 or 1" : NULL;
	case K_EMAXLIM:
		f->emax_limit_set = 1;
		return int_value(v, -1100, 1100, &f->emax_limit) ? "emax_limit must be an integer" : NULL;
	}
	return "unknown key";
}

int fpl_format_load(fpl_format *f, const char *path, char *err, size_t errlen)
{
	FILE *fp = fopen(path, "r");
	char line[1024];
	int lineno = 0, seen[K_COUNT] = { 0 }, bias_set = 0, k, rc;

	if (!fp) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return FPL_EIO;
	}
	memset(f, 0, sizeof *f);
	f->explim = 1;
	while (fgets(line, sizeof line, fp)) {
		char *s, *eq, *key, *val;
		const char *problem;

		lineno++;
		if (!strchr(line, '\n') && !feof(fp)) {
			snprintf(err, errlen, "%s: line %d: line too long", path, lineno);
			goto fail;
		}
		if ((s = strchr(line, '#')))
			*s = 0;
		s = trim(line);
		if (!*s)
			continue;
		if (!(eq = strchr(s, '='))) {
			snprintf(err, errlen, "%s: line %d: expected 'key = value'", path, lineno);
			goto fail;
		}
		*eq = 0;
		key = trim(s);
		val = trim(eq + 1);
		for (k = 0; k < K_COUNT && strcmp(keys[k], key); k++)
			;
		if (k == K_COUNT) {
			snprintf(err, errlen, "%s: line %d: unknown key '%s'", path, lineno, key);
			goto fail;
		}
		if (seen[k]++) {
			snprintf(err, errlen, "%s: line %d: '%s' given twice", path, lineno, key);
			goto fail;
		}
		if ((problem = apply(f, k, val, &bias_set))) {
			snprintf(err, errlen, "%s: line %d: '%s': %s", path, lineno, val, problem);
			goto fail;
		}
	}
	if (ferror(fp)) {
		snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
		fclose(fp);
		return FPL_EIO;
	}
	fclose(fp);
	if (!seen[K_E] || !seen[K_M]) {
		snprintf(err, errlen, "%s: missing '%s'", path, seen[K_E] ? "m" : "e");
		return FPL_EFORMAT;
	}
	if (!bias_set)
		f->bias = (1 << (f->e - 1)) - 1;
	rc = fpl_format_finish(f);
	if (rc)
		snprintf(err, errlen, "%s: impossible format (e=%d m=%d bias=%d specials=%s)", path,
			 f->e, f->m, f->bias, fpl_specials_name(f->specials));
	return rc;
fail:
	fclose(fp);
	return FPL_EFORMAT;
}

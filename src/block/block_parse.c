/* SPDX-License-Identifier: MIT */
/*
 * block_parse.c - block format specs (fplab/block.h's grammar), the named
 * block formats, validation and bits per value.
 *
 * Invariant: a descriptor that leaves fpl_block_parse or passes
 * fpl_block_check can be quantized: its scale format holds 1 and a NaN,
 * its element format saturates, and its shape is positive.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <fplab/codec.h>
#include <fplab/ops.h>

#include "block/block_internal.h"

static const fpl_block_entry catalogue[] = {
	{ "mxfp8", "mxfp8-e4m3", "block:e4m3fn:e8m0:32:floor", "OCP MX v1.0 (2023), MXFP8 (E4M3)" },
	{ "mxfp8-e5m2", "", "block:e5m2:e8m0:32:floor", "OCP MX v1.0 (2023), MXFP8 (E5M2)" },
	{ "mxfp6-e3m2", "", "block:e3m2:e8m0:32:floor", "OCP MX v1.0 (2023), MXFP6 (E3M2)" },
	{ "mxfp6-e2m3", "", "block:e2m3:e8m0:32:floor", "OCP MX v1.0 (2023), MXFP6 (E2M3)" },
	{ "mxfp4", "", "block:e2m1:e8m0:32:floor", "OCP MX v1.0 (2023), MXFP4 (E2M1)" },
	{ "mxint8", "", "block:int8:e8m0:32:floor", "OCP MX v1.0 (2023), MXINT8" },
	{ "nvfp4", "", "block:e2m1:e4m3fn:16:amax:ts",
	  "NVIDIA NVFP4 (Blackwell): E4M3 block scale, FP32 tensor scale" },
};
#define NCAT (sizeof catalogue / sizeof catalogue[0])

static const char *const rule_names[] = { "floor", "ceil", "even", "rceil", "amax" };

const fpl_block_entry *fpl_block_catalogue(size_t *count)
{
	*count = NCAT;
	return catalogue;
}

const char *fpl_block_rule_name(fpl_block_rule r)
{
	return (unsigned)r < 5 ? rule_names[r] : "?";
}

void fpl_block_stats_init(fpl_block_stats *s)
{
	memset(s, 0, sizeof *s);
}

void fpl_block_stats_add(fpl_block_stats *total, const fpl_block_stats *part)
{
	total->blocks += part->blocks;
	total->elements += part->elements;
	total->saturated += part->saturated;
	total->flushed += part->flushed;
	total->amax_saturated += part->amax_saturated;
	total->scale_range += part->scale_range;
	total->nan_blocks += part->nan_blocks;
	total->zero_blocks += part->zero_blocks;
}

static void say(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* The catalogue entry whose name or alias is the first `len` chars of s. */
static const fpl_block_entry *named(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < NCAT; i++) {
		const char *a = catalogue[i].aliases;

		if (strlen(catalogue[i].name) == len && !strncasecmp(s, catalogue[i].name, len))
			return &catalogue[i];
		if (*a && strlen(a) == len && !strncasecmp(s, a, len))
			return &catalogue[i];
	}
	return NULL;
}

/* A path as -f takes one: a slash, or the .fmt suffix. */
static int is_path(const char *s)
{
	size_t n = strlen(s);

	return strchr(s, '/') || (n > 4 && !strcmp(s + n - 4, ".fmt"));
}

/*
 * A .fmt file naming a block format: a line "block = SPEC", beside which
 * only comments, blank lines and "name = NAME" may appear.  Returns 1
 * (spec into spec[], the display name into nm[] or ""), 0 when the file
 * has no block line or cannot be read (the plain loader then reports),
 * or FPL_EFORMAT with err "FILE: line N: problem".
 */
static int fmt_block(const char *path, char *spec, size_t slen, char *nm, size_t nlen,
		     char *err, size_t errlen)
{
	FILE *fp = fopen(path, "r");
	char line[512];
	int ln = 0, found = 0, bad = 0;

	nm[0] = spec[0] = 0;
	if (!fp)
		return 0;
	while (fgets(line, sizeof line, fp)) {
		char *p = line, *eq, *k, *v, *e;

		ln++;
		p[strcspn(p, "#\n")] = 0;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			continue;
		eq = strchr(p, '=');
		k = p;
		v = eq ? eq + 1 : p + strlen(p);
		for (e = eq ? eq : v; e > k && isspace((unsigned char)e[-1]); e--)
			;
		*e = 0;
		while (isspace((unsigned char)*v))
			v++;
		for (e = v + strlen(v); e > v && isspace((unsigned char)e[-1]); e--)
			;
		*e = 0;
		if (eq && !strcmp(k, "block")) {
			found = found ? -1 : ln;
			snprintf(spec, slen, "%s", v);
		} else if (eq && !strcmp(k, "name")) {
			snprintf(nm, nlen, "%s", v);
		} else if (!bad) {
			bad = ln;
		}
	}
	fclose(fp);
	if (found > 0 && bad) {
		say(err, errlen, "%s: line %d: only 'block' and 'name' apply to a block format "
		    "(its spec names the element and scale formats)", path, bad);
		return FPL_EFORMAT;
	}
	if (found < 0) {
		say(err, errlen, "%s: 'block' given twice", path);
		return FPL_EFORMAT;
	}
	return found > 0;
}

int fpl_block_is_spec(const char *s)
{
	size_t head;
	char sp[FPL_BLOCK_NAME_MAX * 4], nm[FPL_BLOCK_NAME_MAX];

	if (!s)
		return 0;
	if (is_path(s))
		return fmt_block(s, sp, sizeof sp, nm, sizeof nm, NULL, 0) != 0;
	head = strcspn(s, ":");
	return (head == 5 && !strncasecmp(s, "block", 5) && s[5] == ':') || named(s, head);
}

int fpl__blk_int8_format(fpl_format *f)
{
	int rc = fpl_format_ieee(f, 1, 6);

	if (rc)
		return rc;
	snprintf(f->name, sizeof f->name, "int8");
	f->bias = 1;
	f->specials = FPL_SPEC_NONE;
	f->overflow = FPL_OVF_SATURATE;
	return fpl_format_finish(f);
}

int fpl_block_check(const fpl_block_format *b, char *err, size_t errlen)
{
	fpl_state st;
	uint64_t code;

	fpl_state_init(&st, 0);
	if (b->shape == FPL_BLOCK_1D && (b->size < 0 || b->axis < -FPL_BLOCK_MAX_DIMS
					 || b->axis >= FPL_BLOCK_MAX_DIMS)) {
		say(err, errlen, "block format '%s': block size %d or axis %d out of range",
		    b->name, b->size, b->axis);
		return FPL_EFORMAT;
	}
	if (b->shape == FPL_BLOCK_TILE && (b->rows < 1 || b->cols < 1)) {
		say(err, errlen, "block format '%s': tile %dx%d must have positive sides",
		    b->name, b->rows, b->cols);
		return FPL_EFORMAT;
	}
	if (b->scale.specials == FPL_SPEC_NONE || fpl_encode_checked(&b->scale, fpl_default_nan(&b->scale), &code)) {
		say(err, errlen, "block format '%s': scale format '%s' cannot hold a scale: it has "
		    "no NaN code for blocks holding NaN or infinity", b->name, b->scale.name);
		return FPL_EFORMAT;
	}
	if (fpl_round(&b->scale, 1.0, FPL_RND_NE, &st) != 1.0) {
		say(err, errlen, "block format '%s': scale format '%s' cannot hold a scale: 1 is "
		    "not one of its values", b->name, b->scale.name);
		return FPL_EFORMAT;
	}
	if (b->tensor_scale && b->rule != FPL_BRULE_AMAX) {
		say(err, errlen, "block format '%s': ts (a per-tensor scale) needs the amax rule",
		    b->name);
		return FPL_EFORMAT;
	}
	if (b->tensor_scale && b->scale.m > 28) {
		say(err, errlen, "block format '%s': ts needs a scale format of at most 29 bits "
		    "of precision (got '%s')", b->name, b->scale.name);
		return FPL_EFORMAT;
	}
	if (!(b->elem.max > 0) || b->elem.specials == FPL_SPEC_E8M0) {
		say(err, errlen, "block format '%s': '%s' cannot be an element format", b->name,
		    b->elem.name);
		return FPL_EFORMAT;
	}
	return 0;
}

void fpl_block_spec(const fpl_block_format *b, char *buf, size_t len)
{
	char shape[48];

	if (b->shape == FPL_BLOCK_TENSOR)
		snprintf(shape, sizeof shape, "tensor");
	else if (b->shape == FPL_BLOCK_TILE)
		snprintf(shape, sizeof shape, "%dx%d", b->rows, b->cols);
	else if (b->size == 0 && (b->axis == -1 || b->axis == -2))
		snprintf(shape, sizeof shape, "%s", b->axis == -1 ? "row" : "col");
	else if (b->size == 0)
		snprintf(shape, sizeof shape, "0@%d", b->axis);
	else if (b->axis == -1)
		snprintf(shape, sizeof shape, "%d", b->size);
	else
		snprintf(shape, sizeof shape, "%d@%d", b->size, b->axis);
	snprintf(buf, len, "block:%s:%s:%s:%s%s%s", b->elem.name, b->scale.name, shape,
		 fpl_block_rule_name(b->rule), b->tensor_scale ? ":ts" : "",
		 b->quot == FPL_BQUOT_FP32 ? ":q32" : "");
}

/* Parse a decimal integer filling the whole of [s, s+len); 0 or -1. */
static int whole_int(const char *s, size_t len, long *v)
{
	char buf[32], *end;

	if (!len || len >= sizeof buf)
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	*v = strtol(buf, &end, 10);
	return *end || end == buf ? -1 : 0;
}

/* One shape field; 1 parsed, 0 not a shape, FPL_EFORMAT bad shape. */
static int parse_shape(fpl_block_format *b, const char *t, const char *spec, char *err,
		       size_t errlen)
{
	size_t len = strlen(t);
	const char *at = strchr(t, '@'), *x = strpbrk(t, "xX");
	long v, w;

	if (!strcasecmp(t, "row") || !strcasecmp(t, "col")) {
		b->shape = FPL_BLOCK_1D;
		b->size = 0;
		b->axis = tolower((unsigned char)t[0]) == 'r' ? -1 : -2;
		return 1;
	}
	if (!strcasecmp(t, "tensor")) {
		b->shape = FPL_BLOCK_TENSOR;
		return 1;
	}
	if (!isdigit((unsigned char)t[0]) && t[0] != '-' && t[0] != '+')
		return 0;
	if (x) {
		if (whole_int(t, (size_t)(x - t), &v) || whole_int(x + 1, len - (size_t)(x - t) - 1, &w)
		    || v < 1 || w < 1 || v > 1 << 30 || w > 1 << 30) {
			say(err, errlen, "block format '%s': tile '%s' is not RxC with positive "
			    "integers R and C", spec, t);
			return FPL_EFORMAT;
		}
		b->shape = FPL_BLOCK_TILE;
		b->rows = (int)v;
		b->cols = (int)w;
		return 1;
	}
	if (whole_int(t, at ? (size_t)(at - t) : len, &v) || v < 1 || v > 1 << 30) {
		say(err, errlen, "block format '%s': block size '%.*s' must be a positive integer",
		    spec, (int)(at ? (size_t)(at - t) : len), t);
		return FPL_EFORMAT;
	}
	w = -1;
	if (at && (whole_int(at + 1, strlen(at + 1), &w) || w < -FPL_BLOCK_MAX_DIMS
		   || w >= FPL_BLOCK_MAX_DIMS)) {
		say(err, errlen, "block format '%s': axis '%s' is not an integer in %d..%d", spec,
		    at + 1, -FPL_BLOCK_MAX_DIMS, FPL_BLOCK_MAX_DIMS - 1);
		return FPL_EFORMAT;
	}
	b->shape = FPL_BLOCK_1D;
	b->size = (int)v;
	b->axis = (int)w;
	return 1;
}

/* One FIELD (shape, rule or option); seen[] catches repeats. */
static int parse_field(fpl_block_format *b, const char *t, const char *spec, int seen[3],
		       char *err, size_t errlen)
{
	int k, rc;

	for (k = 0; k < 5; k++) {
		if (!strcasecmp(t, rule_names[k])) {
			if (seen[1]++)
				goto twice;
			b->rule = (fpl_block_rule)k;
			return 0;
		}
	}
	if (!strcasecmp(t, "ts")) {
		b->tensor_scale = 1;
		return 0;
	}
	if (!strcasecmp(t, "q32") || !strcasecmp(t, "exact")) {
		if (seen[2]++)
			goto twice;
		b->quot = t[0] == 'q' || t[0] == 'Q' ? FPL_BQUOT_FP32 : FPL_BQUOT_EXACT;
		return 0;
	}
	rc = parse_shape(b, t, spec, err, errlen);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		if (seen[0]++)
			goto twice;
		return 0;
	}
	say(err, errlen, "block format '%s': '%s' is not a block shape (B, B@AXIS, RxC, row, "
	    "col, tensor), a scale rule (floor, ceil, even, rceil, amax) or an option (ts, q32, "
	    "exact)", spec, t);
	return FPL_EFORMAT;
twice:
	say(err, errlen, "block format '%s': '%s' sets the %s a second time", spec, t,
	    seen[0] > 1 ? "block shape" : seen[1] > 1 ? "scale rule" : "quotient mode");
	return FPL_EFORMAT;
}

/* ELEM or SCALE of the general form. */
static int parse_part(fpl_format *f, int *is_int, const char *t, const char *what,
		      const char *spec, char *err, size_t errlen)
{
	int rc;

	if (is_int && (!strcasecmp(t, "int8") || !strcasecmp(t, "mxint8"))) {
		*is_int = 1;
		return fpl__blk_int8_format(f);
	}
	rc = fpl_format_lookup(f, t);
	if (rc) {
		say(err, errlen, "block format '%s': %s format '%s' is %s", spec, what, t,
		    rc == FPL_EFORMAT ? "impossible (exponent bits 1..11, mantissa bits 0..52)"
				      : "not a format fplab knows (see fplab formats)");
		return FPL_EFORMAT;
	}
	return 0;
}

static int parse_copy(fpl_block_format *b, char *s, const char *spec, char *err, size_t errlen)
{
	char *save = NULL, *head = strtok_r(s, ":", &save), *t;
	const fpl_block_entry *e = named(head, strlen(head));
	int seen[3] = { 0, 0, 0 }, rc, general = !e;

	if (e) {	/* a named format: its general spelling, then the overrides */
		char base[FPL_BLOCK_NAME_MAX];

		snprintf(base, sizeof base, "%s", e->spec);
		rc = parse_copy(b, base, spec, err, errlen);
		if (rc)
			return rc;
		memset(seen, 0, sizeof seen);
	} else {
		char *elem = strtok_r(NULL, ":", &save), *scale = elem ? strtok_r(NULL, ":", &save) : NULL;

		if (!elem || !scale) {
			say(err, errlen, "block format '%s': the general form is block:ELEM:SCALE"
			    "[:SHAPE][:RULE][:OPTION...]", spec);
			return FPL_EFORMAT;
		}
		if (parse_part(&b->elem, &b->elem_int, elem, "element", spec, err, errlen)
		    || parse_part(&b->scale, NULL, scale, "scale", spec, err, errlen))
			return FPL_EFORMAT;
		b->elem.overflow = FPL_OVF_SATURATE;
		fpl_format_finish(&b->elem);
		b->shape = FPL_BLOCK_1D;
		b->size = 32;
		b->axis = -1;
	}
	while ((t = strtok_r(NULL, ":", &save))) {
		rc = parse_field(b, t, spec, seen, err, errlen);
		if (rc)
			return rc;
		general = 1;
	}
	if (general)
		fpl_block_spec(b, b->name, sizeof b->name);
	else
		snprintf(b->name, sizeof b->name, "%s", e->name);
	return fpl_block_check(b, err, errlen);
}

int fpl_block_parse(fpl_block_format *b, const char *s, char *err, size_t errlen)
{
	char *copy;
	int rc;

	if (err && errlen)
		err[0] = 0;
	if (b && s && is_path(s)) {	/* a .fmt file: "block = SPEC" */
		char sp[FPL_BLOCK_NAME_MAX * 4], nm[FPL_BLOCK_NAME_MAX], e2[256];

		rc = fmt_block(s, sp, sizeof sp, nm, sizeof nm, err, errlen);
		if (rc <= 0)
			return rc ? rc : FPL_ENOTFOUND;
		if (!fpl_block_is_spec(sp) || is_path(sp)) {
			say(err, errlen, "%s: 'block = %s' is not a block spec (block:ELEM:SCALE... "
			    "or a named block format)", s, sp);
			return FPL_EFORMAT;
		}
		rc = fpl_block_parse(b, sp, e2, sizeof e2);
		if (rc)
			say(err, errlen, "%s: %s", s, e2);
		else if (nm[0])
			snprintf(b->name, sizeof b->name, "%s", nm);
		return rc;
	}
	if (!b || !s || !fpl_block_is_spec(s))
		return FPL_ENOTFOUND;
	if (strstr(s, "::") || s[strlen(s) - 1] == ':') {
		say(err, errlen, "block format '%s': empty field", s);
		return FPL_EFORMAT;
	}
	copy = strdup(s);
	if (!copy)
		return FPL_ENOMEM;
	memset(b, 0, sizeof *b);
	rc = parse_copy(b, copy, s, err, errlen);
	free(copy);
	return rc;
}

double fpl_block_bits(const fpl_block_format *b, const size_t *dims, int ndims)
{
	size_t nb, n = 1;
	int i;

	if (!dims) {
		double per = b->shape == FPL_BLOCK_TILE ? (double)b->rows * b->cols
			     : b->shape == FPL_BLOCK_1D && b->size > 0 ? b->size : 0;

		return per > 0 ? b->elem.nbits + b->scale.nbits / per : 0;
	}
	if (fpl_block_layout(b, dims, ndims, &nb, NULL, NULL))
		return 0;
	for (i = 0; i < ndims; i++)
		n *= dims[i];
	if (!n)
		return 0;
	return b->elem.nbits + ((double)nb * b->scale.nbits + (b->tensor_scale ? 32 : 0)) / (double)n;
}

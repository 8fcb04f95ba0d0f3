/* SPDX-License-Identifier: MIT */
/*
 * format_catalogue.c - the named formats (SEMANTICS.md's table) and name
 * lookup.  Named formats and their aliases win over the eXmY pattern, so
 * "e4m3" is OCP e4m3fn (the format users mean) and the IEEE-style 4/3
 * format is "e4m3ieee".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/internal.h"

typedef struct named {
	fpl_format_entry entry;
	int e, m, bias;
	fpl_specials specials;
} named;

static const named table[] = {
	{ { "fp64", "d double binary64 float64", "IEEE 754-2019 binary64" }, 11, 52, 1023, FPL_SPEC_IEEE },
	{ { "fp32", "s single binary32 float32", "IEEE 754-2019 binary32" }, 8, 23, 127, FPL_SPEC_IEEE },
	{ { "tf32", "t TensorFloat-32 tensorfloat32", "NVIDIA TensorFloat-32 (A100 whitepaper, 2020)" }, 8, 10, 127, FPL_SPEC_IEEE },
	{ { "fp16", "h half binary16 float16", "IEEE 754-2019 binary16" }, 5, 10, 15, FPL_SPEC_IEEE },
	{ { "bf16", "b bfloat16", "Google bfloat16 (top half of binary32)" }, 8, 7, 127, FPL_SPEC_IEEE },
	{ { "e5m2", "q52 fp8-e5m2 E5M2 float8_e5m2", "OCP OFP8 v1.0 (2023), E5M2" }, 5, 2, 15, FPL_SPEC_IEEE },
	{ { "e4m3fn", "e4m3 q43 fp8-e4m3 E4M3 float8_e4m3fn", "OCP OFP8 v1.0 (2023), E4M3" }, 4, 3, 7, FPL_SPEC_FN },
	{ { "e4m3ieee", "float8_e4m3", "IEEE-style 4/3 (ml_dtypes float8_e4m3)" }, 4, 3, 7, FPL_SPEC_IEEE },
	{ { "e4m3fnuz", "float8_e4m3fnuz", "Graphcore/AMD FP8 E4M3 FNUZ (ml_dtypes)" }, 4, 3, 8, FPL_SPEC_FNUZ },
	{ { "e5m2fnuz", "float8_e5m2fnuz", "Graphcore/AMD FP8 E5M2 FNUZ (ml_dtypes)" }, 5, 2, 16, FPL_SPEC_FNUZ },
	{ { "e4m3b11fnuz", "float8_e4m3b11fnuz", "ml_dtypes float8_e4m3b11fnuz (bias 11)" }, 4, 3, 11, FPL_SPEC_FNUZ },
	{ { "e3m4", "float8_e3m4", "ml_dtypes float8_e3m4 (IEEE-style)" }, 3, 4, 3, FPL_SPEC_IEEE },
	{ { "e3m2", "fp6-e3m2 float6_e3m2fn", "OCP MX v1.0 (2023), FP6 E3M2" }, 3, 2, 3, FPL_SPEC_NONE },
	{ { "e2m3", "fp6-e2m3 float6_e2m3fn", "OCP MX v1.0 (2023), FP6 E2M3" }, 2, 3, 1, FPL_SPEC_NONE },
	{ { "e2m1", "fp4 fp4-e2m1 float4_e2m1fn", "OCP MX v1.0 (2023), FP4 E2M1" }, 2, 1, 1, FPL_SPEC_NONE },
	{ { "e8m0", "float8_e8m0fnu e8m0fnu", "OCP MX v1.0 (2023), E8M0 scale" }, 8, 0, 127, FPL_SPEC_E8M0 },
};

#define NTABLE (sizeof table / sizeof table[0])

const fpl_format_entry *fpl_format_catalogue(size_t *count)
{
	static fpl_format_entry entries[NTABLE];
	size_t i;

	for (i = 0; i < NTABLE; i++)
		entries[i] = table[i].entry;
	*count = NTABLE;
	return entries;
}

/* Is `name` one of the space-separated words of `list`? */
static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	while (*list) {
		size_t w = strcspn(list, " ");
		if (w == n && !strncasecmp(list, name, n))
			return 1;
		list += w;
		list += strspn(list, " ");
	}
	return 0;
}

static int from_named(fpl_format *f, const named *t)
{
	memset(f, 0, sizeof *f);
	snprintf(f->name, sizeof f->name, "%s", t->entry.name);
	f->e = t->e;
	f->m = t->m;
	f->bias = t->bias;
	f->specials = t->specials;
	f->explim = 1;
	if (t->specials == FPL_SPEC_NONE)
		f->overflow = FPL_OVF_SATURATE;
	return fpl_format_finish(f);
}

/* eXmY with decimal X and Y and nothing else. */
static int parse_exmy(const char *s, int *e, int *m)
{
	char *end;
	long x, y;

	if (s[0] != 'e' && s[0] != 'E')
		return 0;
	if (s[1] < '0' || s[1] > '9')
		return 0;
	x = strtol(s + 1, &end, 10);
	if (*end != 'm' && *end != 'M')
		return 0;
	if (end[1] < '0' || end[1] > '9')
		return 0;
	y = strtol(end + 1, &end, 10);
	if (*end)
		return 0;
	*e = x > 99 ? 99 : (int)x;
	*m = y > 99 ? 99 : (int)y;
	return 1;
}

int fpl_format_lookup(fpl_format *f, const char *name)
{
	size_t i;
	int e, m;

	if (!name)
		return FPL_EINVAL;
	for (i = 0; i < NTABLE; i++)
		if (!strcasecmp(name, table[i].entry.name) || in_list(table[i].entry.aliases, name))
			return from_named(f, &table[i]);
	if (parse_exmy(name, &e, &m)) {
		if (e < 1 || e > 11 || m < 0 || m > 52)
			return FPL_EFORMAT;
		return fpl_format_ieee(f, e, m);
	}
	return FPL_ENOTFOUND;
}

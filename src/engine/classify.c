/* SPDX-License-Identifier: MIT */
/* classify.c - the class of a value of a format. */
#include "engine/internal.h"

fpl_class fpl_classify(const fpl_format *f, double x)
{
	if (fpl__isnan(x))
		return FPL_CLASS_NAN;
	if (fpl__isinf(x))
		return FPL_CLASS_INF;
	if (x == 0)
		return FPL_CLASS_ZERO;
	if (x < f->min_normal && x > -f->min_normal)
		return FPL_CLASS_SUBNORMAL;
	return FPL_CLASS_NORMAL;
}

const char *fpl_class_name(fpl_class c)
{
	static const char *const names[] = { "zero", "subnormal", "normal", "inf", "nan" };
	return (unsigned)c < 5 ? names[c] : "?";
}

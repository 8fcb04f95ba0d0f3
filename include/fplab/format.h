/* SPDX-License-Identifier: MIT */
/*
 * fplab/format.h - floating-point format descriptors.
 *
 * A format is data: exponent and mantissa widths, bias, and a handful of
 * switches (subnormals, specials, overflow, tininess, daz).  Every value of
 * every supported format embeds exactly in binary64, so values travel as
 * `double` everywhere in fplab.  The derived constants (emin, emax, max,
 * ...) are filled in by fpl_format_finish() and must not be edited by hand.
 */
#ifndef FPLAB_FORMAT_H
#define FPLAB_FORMAT_H

#include <stdint.h>
#include <stddef.h>

#include <fplab/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How values below 2^emin are treated. */
typedef enum fpl_subnormal {
	FPL_SUB_YES = 0,	/* gradual underflow, IEEE 754 */
	FPL_SUB_NO_ROUND,	/* no subnormals: round in the mode to 0 or +-2^emin (CPFloat subnormal=0) */
	FPL_SUB_FTZ		/* round with subnormals, then a tiny result becomes +-0 (x86 FTZ) */
} fpl_subnormal;

/* Which codes are special. */
typedef enum fpl_specials {
	FPL_SPEC_IEEE = 0,	/* top exponent: inf (fraction 0) and NaNs */
	FPL_SPEC_FN,		/* OCP "finite": no inf, NaN = S.1..1.1..1 only */
	FPL_SPEC_FNUZ,		/* no inf, no -0, one NaN = 1.0..0.0..0 (0x80 for 8 bits) */
	FPL_SPEC_NONE,		/* every code finite, no inf and no NaN; always saturates */
	FPL_SPEC_E8M0		/* OCP MX scale: unsigned, no zero, NaN = all ones */
} fpl_specials;

/* What an overflowing result becomes (see fpl_round() for the mode table). */
/*
 * FPL_OVF_SATURATE is the OCP OFP8 saturating conversion and CPFloat's
 * saturation: no result is infinite, an infinite input or an exact
 * infinite result (x/0, inf+1) included.  FPL_OVF_SATURATE_KEEP_INF
 * saturates only finite overflows and keeps exact infinities in a format
 * that has them (fplab's rule before 0.1.1); see SEMANTICS.md.
 * FPL_OVF_INF_ALWAYS gives +-inf for every overflow in every rounding
 * mode, toward zero included: a matrix unit that truncates its sums'
 * significands but keeps IEEE's overflow to infinity (NVIDIA's tensor
 * cores, fplab-models(7)); a format without inf gives NaN as FPL_OVF_INF.
 */
typedef enum fpl_overflow {
	FPL_OVF_INF = 0,		/* IEEE rule by rounding mode; NaN where there is no inf */
	FPL_OVF_SATURATE,		/* +-max instead of +-inf or NaN, infinite inputs too */
	FPL_OVF_SATURATE_KEEP_INF,	/* overflow gives +-max; an exact inf stays inf (ieee) */
	FPL_OVF_INF_ALWAYS		/* overflow gives +-inf in every mode (tz too) */
} fpl_overflow;

/* When a result counts as tiny (for the underflow flag and FTZ). */
typedef enum fpl_tininess {
	FPL_TINY_AFTER = 0,	/* after rounding, x86 and RISC-V */
	FPL_TINY_BEFORE		/* before rounding, ARM */
} fpl_tininess;

/* Which NaN an operation returns. */
typedef enum fpl_nan_rule {
	FPL_NAN_X86 = 0,	/* first NaN operand quieted; invalid gives sign 1, quiet bit only */
	FPL_NAN_CANONICAL,	/* always the format's canonical quiet NaN */
	FPL_NAN_ONES		/* always +NaN with every fraction bit set (NVIDIA's
				 * 0x7fffffff in fp32); canonical where no such code */
} fpl_nan_rule;

#define FPL_FORMAT_NAME_MAX 32

/*
 * A format descriptor.  Set the first block (or use a constructor below),
 * then call fpl_format_finish() to validate it and fill the derived block.
 */
typedef struct fpl_format {
	char name[FPL_FORMAT_NAME_MAX];	/* canonical name, e.g. "bf16" or "e6m9" */
	int e;				/* exponent bits, 1..11 (8 for e8m0) */
	int m;				/* stored mantissa bits, 0..52; precision p = m+1 */
	int bias;			/* exponent bias; default 2^(e-1)-1 */
	fpl_subnormal subnormal;
	int daz;			/* 1: operands below 2^emin are read as +-0 */
	fpl_specials specials;
	fpl_overflow overflow;
	fpl_tininess tininess;
	fpl_nan_rule nan_rule;
	int explim;			/* 1 (default): the format's exponent range; 0: binary64's */
	int emax_limit_set;		/* 1: finite values stop at binade emax_limit (CPFloat --params) */
	int emax_limit;

	/* derived by fpl_format_finish() */
	int nbits;			/* width of an encoding: 1+e+m, e+m for e8m0 */
	int emin;			/* exponent of the smallest normal binade */
	int emax;			/* exponent of the largest finite binade */
	double max;			/* largest finite value */
	double min_normal;		/* 2^emin */
	double min_subnormal;		/* 2^(emin-m); equals min_normal without subnormals */
	double epsilon;			/* 2^-m */
} fpl_format;

/*
 * Fill `f` with the IEEE-style format of `e` exponent and `m` mantissa bits
 * (bias 2^(e-1)-1, subnormals, inf and NaN) and finish it.
 * Returns 0, or FPL_EFORMAT when e is outside 1..11 or m outside 0..52.
 */
FPL_API int fpl_format_ieee(fpl_format *f, int e, int m);

/*
 * CPFloat-style format: precision p (counting the implicit bit), normal
 * exponents emin..emax, inf and NaN as values, subnormals.  The encoding
 * is the narrowest IEEE-style one that holds the range (bias 1-emin); when
 * its top binade lies above emax, emax_limit caps the finite values, so
 * CPFloat's E4M3 preset (4,-6,8), max 480, is expressed exactly.
 * Returns 0 or FPL_EFORMAT (p outside 1..53, emin > emax, emin < -1022,
 * emax > 1023).
 */
FPL_API int fpl_format_params(fpl_format *f, int p, int emin, int emax);

/*
 * Look up a named format or alias (case-insensitive: "bf16", "half",
 * "E4M3", "q52", ...) or the pattern eXmY.  Named formats win over the
 * pattern.  Returns 0, FPL_ENOTFOUND for an unknown name, or FPL_EFORMAT
 * for an eXmY outside the supported widths.
 */
FPL_API int fpl_format_lookup(fpl_format *f, const char *name);

/*
 * Validate the primary fields and compute the derived ones.  Returns 0 or
 * FPL_EFORMAT.  Call again after changing any switch.
 */
FPL_API int fpl_format_finish(fpl_format *f);

/*
 * Parse a .fmt file (see fplab-formats(5)).  On error returns FPL_EFORMAT
 * or FPL_EIO and writes "FILE: line N: problem" into `err` (size errlen).
 */
FPL_API int fpl_format_load(fpl_format *f, const char *path, char *err, size_t errlen);

/* The named formats, in catalogue order; `*count` receives their number. */
typedef struct fpl_format_entry {
	const char *name;	/* canonical name */
	const char *aliases;	/* space-separated aliases, "" if none */
	const char *source;	/* where the definition comes from */
} fpl_format_entry;
FPL_API const fpl_format_entry *fpl_format_catalogue(size_t *count);

/* Classes of values, for encode tables and histograms. */
typedef enum fpl_class {
	FPL_CLASS_ZERO = 0,
	FPL_CLASS_SUBNORMAL,
	FPL_CLASS_NORMAL,
	FPL_CLASS_INF,
	FPL_CLASS_NAN
} fpl_class;

/* Class of `x`, a value of `f`. */
FPL_API fpl_class fpl_classify(const fpl_format *f, double x);

/* Short names for the enum values ("yes", "fnuz", "saturate", ...). */
FPL_API const char *fpl_subnormal_name(fpl_subnormal s);
FPL_API const char *fpl_specials_name(fpl_specials s);
FPL_API const char *fpl_class_name(fpl_class c);
FPL_API const char *fpl_nan_rule_name(fpl_nan_rule r);	/* "x86", "canonical", "ones" */

#ifdef __cplusplus
}
#endif
#endif

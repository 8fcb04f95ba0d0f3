/* SPDX-License-Identifier: MIT */
/*
 * tests/tcodec.c - encodings.  For every code of every format of 19 bits
 * or fewer (the named ones, tf32, and every IEEE-style eXmY with
 * e+m <= 7), a stride through fp32 and random fp64 codes:
 *  - fpl_decode equals the oracle's hand decoder (bit fields -> value,
 *    NaN payload in the top fraction bits), bit for bit;
 *  - fpl_encode of that value gives the code back (every code is a
 *    distinct value; fnuz's 0x80 is its NaN, fn's S.1111.111 its NaNs);
 *  - fpl_classify gives the class read off the bit fields;
 *  - fpl_encode of a value that is not of the format equals the code of
 *    its nearest-even rounding (the oracle's); values with no code
 *    (NaN in none formats and in m = 0 ieee formats, zero or negative in
 *    e8m0) give FPL_CODE_NONE; -0 in fnuz gives 0;
 *  - fpl_default_nan is the canonical quiet NaN.
 */
#include <math.h>
#include <string.h>
#include <stdio.h>

#include "harness.h"
#include "oracle.h"

static fpl_class hand_class(const oracle_fmt *o, double v)
{
	if (v != v)
		return FPL_CLASS_NAN;
	if (isinf(v))
		return FPL_CLASS_INF;
	if (v == 0)
		return FPL_CLASS_ZERO;
	return fabs(v) < o->min_normal ? FPL_CLASS_SUBNORMAL : FPL_CLASS_NORMAL;
}

static void one_code(const fpl_format *f, const oracle_fmt *o, uint64_t c)
{
	int ok;

	if (f->nbits < 64)	/* the strides below run over 64-bit patterns */
		c &= (1ull << f->nbits) - 1;
	double want = oracle_decode(o, c, &ok), got = fpl_decode(f, c);
	uint64_t back;

	if (!h_check(h_same(want, got))) {
		h_fail("%s: decode(%#llx) = %a [%#llx], want %a [%#llx]", f->name,
		       (unsigned long long)c, got, (unsigned long long)h_bits(got), want,
		       (unsigned long long)h_bits(want));
		return;
	}
	back = fpl_encode(f, want);
	if (!h_check(back == c))
		h_fail("%s: encode(%a) = %#llx, want %#llx", f->name, want, (unsigned long long)back,
		       (unsigned long long)c);
	if (!h_check(fpl_classify(f, want) == hand_class(o, want)))
		h_fail("%s: classify(%a) = %d, want %d", f->name, want, (int)fpl_classify(f, want),
		       (int)hand_class(o, want));
}

static void others(const fpl_format *f, const oracle_fmt *o, h_rng *r, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		double x = h_rng_value(r, o->emin - o->m - 3, o->emax + 2, 53, 0);
		unsigned fl;
		double y = oracle_round(o, x, FPL_RND_NE, &fl);
		uint64_t want = FPL_CODE_NONE, got = fpl_encode(f, x);
		if (y == y || (o->spec != FPL_SPEC_NONE && !(o->spec == FPL_SPEC_IEEE && o->m == 0)))
			want = fpl_encode(f, y);	/* y is a value of f: checked above */
		if (o->spec == FPL_SPEC_E8M0 && !(x > 0))
			want = FPL_CODE_NONE;
		if (!h_check(got == want))
			h_fail("%s: encode(%a) = %#llx, want the code %#llx of its rounding %a", f->name,
			       x, (unsigned long long)got, (unsigned long long)want, y);
	}
	/* values without a code, and -0 */
	{
		double qnan = h_from_bits(0x7ff8000000000000ull), nz = -0.0;
		uint64_t c;
		if (o->spec == FPL_SPEC_NONE || (o->spec == FPL_SPEC_IEEE && o->m == 0))
			if (!h_check(fpl_encode(f, qnan) == FPL_CODE_NONE))
				h_fail("%s: encode(NaN) must be FPL_CODE_NONE", f->name);
		if (o->spec == FPL_SPEC_E8M0)
			if (!h_check(fpl_encode(f, 0.0) == FPL_CODE_NONE && fpl_encode(f, -2.0) == FPL_CODE_NONE))
				h_fail("%s: encode(0) and encode(-2) must be FPL_CODE_NONE", f->name);
		c = fpl_encode(f, nz);
		if (o->spec == FPL_SPEC_FNUZ && !h_check(c == 0))
			h_fail("%s: encode(-0) = %#llx, want 0", f->name, (unsigned long long)c);
		if (o->spec == FPL_SPEC_IEEE && !h_check(c == 1ull << (o->e + o->m)))
			h_fail("%s: encode(-0) = %#llx", f->name, (unsigned long long)c);
	}
	/* the default NaN */
	{
		double d = fpl_default_nan(f), want = NAN;
		int check = 1;
		switch (o->spec) {
		case FPL_SPEC_FN:
			want = h_from_bits(0x7ff0000000000000ull | (0x000fffffffffffffull & ~(0x000fffffffffffffull >> o->m)));
			break;
		case FPL_SPEC_IEEE:
			check = o->m > 0;
			/* fall through */
		case FPL_SPEC_FNUZ:
		case FPL_SPEC_E8M0:
			want = h_from_bits(0x7ff8000000000000ull);
			break;
		default:
			check = 0;
		}
		if (check && !h_check(h_same(d, want)))
			h_fail("%s: default NaN %#llx, want %#llx", f->name, (unsigned long long)h_bits(d),
			       (unsigned long long)h_bits(want));
	}
}

static void run(const fpl_format *f, h_rng *r)
{
	oracle_fmt o;
	uint64_t c, n;

	oracle_fmt_init(&o, f);
	if (!h_check(f->nbits == oracle_nbits(&o)))
		h_fail("%s: nbits %d, want %d", f->name, f->nbits, oracle_nbits(&o));
	if (f->nbits <= 19) {
		n = 1ull << f->nbits;
		for (c = 0; c < n; c++)
			one_code(f, &o, c);
	} else if (f->nbits <= 32) {
		for (c = 0; c < (1ull << 32); c += 65521)
			one_code(f, &o, c);
		for (c = 0; c < 70000; c++)	/* around the special codes */
			one_code(f, &o, (c * 0x101u) ^ (c & 1 ? 0x7f800000u : 0) ^ (c & 2 ? 0x80000000u : 0));
	} else {
		for (c = 0; c < 200000; c++)
			one_code(f, &o, h_rng_next(r) >> (h_rng_below(r, 4) == 0 ? h_rng_below(r, 64) : 0));
	}
	others(f, &o, r, 20000);
}

/*
 * fpl_encode_checked tells "no code" from a code of all ones, which only a
 * 64-bit format has: fp64's NaN with sign, exponent and payload all ones
 * (bits 0xffffffffffffffff by construction), which fpl_encode cannot tell
 * from FPL_CODE_NONE.  Values with no code (NaN in e2m1, 0 in e8m0) give
 * FPL_ERANGE.
 */
static void encode_checked(void)
{
	fpl_format d, n, e8;
	uint64_t bits = UINT64_MAX, c = 0;
	double x;

	memcpy(&x, &bits, sizeof x);
	if (!h_check(fpl_format_lookup(&d, "fp64") == 0 && fpl_format_lookup(&n, "e2m1") == 0 &&
		     fpl_format_lookup(&e8, "e8m0") == 0))
		return;
	if (!h_check(fpl_encode_checked(&d, x, &c) == 0 && c == UINT64_MAX))
		h_fail("fp64: the all-ones NaN must encode as 0xffffffffffffffff, got %#llx",
		       (unsigned long long)c);
	if (!h_check(fpl_encode_checked(&d, 1.0, &c) == 0 && c == 0x3ff0000000000000ull))
		h_fail("fp64: 1.0 must encode as 0x3ff0000000000000");
	if (!h_check(fpl_encode_checked(&n, NAN, &c) == FPL_ERANGE && c == 0))
		h_fail("e2m1: NaN has no code (FPL_ERANGE)");
	if (!h_check(fpl_encode_checked(&e8, 0.0, &c) == FPL_ERANGE))
		h_fail("e8m0: 0 has no code (FPL_ERANGE)");
	if (!h_check(fpl_encode_checked(&e8, 1.0, &c) == 0 && c == 127))
		h_fail("e8m0: 1.0 must encode as 127");
}

int main(void)
{
	static const char *named[] = { "fp64", "fp32", "tf32", "fp16", "bf16", "e5m2", "e4m3fn",
				       "e4m3ieee", "e4m3fnuz", "e5m2fnuz", "e4m3b11fnuz", "e3m4",
				       "e3m2", "e2m3", "e2m1", "e8m0" };
	h_rng r;
	size_t i;
	int e, m;

	h_init("tcodec");
	h_rng_init(&r, 5);
	encode_checked();
	for (i = 0; i < sizeof named / sizeof *named; i++) {
		fpl_format f;
		if (!h_check(fpl_format_lookup(&f, named[i]) == 0)) {
			h_fail("lookup %s", named[i]);
			continue;
		}
		run(&f, &r);
	}
	for (e = 1; e <= 11; e++)
		for (m = 0; e + m <= (e >= 8 ? 19 : 7); m++) {
			fpl_format f;
			if (h_check(fpl_format_ieee(&f, e, m) == 0))
				run(&f, &r);
		}
	oracle_thread_done();
	return h_done();
}

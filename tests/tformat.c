/* SPDX-License-Identifier: MIT */
/*
 * tests/tformat.c - format descriptors and the formats/ files.
 *  - every named format of src/engine/SEMANTICS.md, by name and by each alias
 *    (fpl_format_lookup, case-insensitive): e, m, bias, specials, nbits,
 *    emin, emax, max, min_normal, min_subnormal, epsilon against the hand
 *    values below (copied from SEMANTICS.md's table, not computed); the
 *    oracle's own derivation (oracle_fmt_init) against them too;
 *  - the catalogue lists exactly those formats;
 *  - eXmY, CPFloat-style (p, emin, emax) and bad names;
 *  - every formats/NAME.fmt file: fpl_format_load gives the same format as
 *    the lookup, and its header lines "# max:", "# min_normal:",
 *    "# min_subnormal:", "# epsilon:" equal the hand values; every named
 *    format has a file and every file a named format;
 *  - the parser's errors (unknown key, impossible value, malformed line,
 *    missing file) name the file and the line;
 *  - switches (issue 10): chop's t,emax as params (p = t, emin = 1 - emax),
 *    the three overflow rules on infinite inputs and x/0 (SEMANTICS.md
 *    "Saturation and infinities"), --infinity 0 with --explim 0, and the
 *    .fmt keyword saturate-keep-inf.  Expected values are derived by hand
 *    in the comments.
 * Directory of the files: $FPLAB_FORMATS_DIR, else "formats".
 */
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "harness.h"
#include "oracle.h"

struct hand {
	const char *name, *aliases;
	int e, m, bias;
	fpl_specials spec;
	int nbits, emin, emax;
	double max, min_normal, min_sub, eps;
};

#define IE FPL_SPEC_IEEE
static const struct hand H[] = {
	{ "fp64", "d double binary64", 11, 52, 1023, IE, 64, -1022, 1023, DBL_MAX, 0x1p-1022, 0x1p-1074, 0x1p-52 },
	{ "fp32", "s single binary32", 8, 23, 127, IE, 32, -126, 127, 0x1.fffffep127, 0x1p-126, 0x1p-149, 0x1p-23 },
	{ "tf32", "t TensorFloat-32", 8, 10, 127, IE, 19, -126, 127, 0x1.ffcp127, 0x1p-126, 0x1p-136, 0x1p-10 },
	{ "fp16", "h half binary16", 5, 10, 15, IE, 16, -14, 15, 65504, 0x1p-14, 0x1p-24, 0x1p-10 },
	{ "bf16", "b bfloat16", 8, 7, 127, IE, 16, -126, 127, 0x1.fep127, 0x1p-126, 0x1p-133, 0x1p-7 },
	{ "e5m2", "q52 fp8-e5m2 E5M2", 5, 2, 15, IE, 8, -14, 15, 57344, 0x1p-14, 0x1p-16, 0.25 },
	{ "e4m3fn", "e4m3 q43 fp8-e4m3 E4M3", 4, 3, 7, FPL_SPEC_FN, 8, -6, 8, 448, 0x1p-6, 0x1p-9, 0.125 },
	{ "e4m3ieee", "float8_e4m3", 4, 3, 7, IE, 8, -6, 7, 240, 0x1p-6, 0x1p-9, 0.125 },
	{ "e4m3fnuz", "", 4, 3, 8, FPL_SPEC_FNUZ, 8, -7, 7, 240, 0x1p-7, 0x1p-10, 0.125 },
	{ "e5m2fnuz", "", 5, 2, 16, FPL_SPEC_FNUZ, 8, -15, 15, 57344, 0x1p-15, 0x1p-17, 0.25 },
	{ "e4m3b11fnuz", "", 4, 3, 11, FPL_SPEC_FNUZ, 8, -10, 4, 30, 0x1p-10, 0x1p-13, 0.125 },
	{ "e3m4", "", 3, 4, 3, IE, 8, -2, 3, 15.5, 0.25, 0x1p-6, 0.0625 },
	{ "e3m2", "", 3, 2, 3, FPL_SPEC_NONE, 6, -2, 4, 28, 0.25, 0.0625, 0.25 },
	{ "e2m3", "", 2, 3, 1, FPL_SPEC_NONE, 6, 0, 2, 7.5, 1, 0.125, 0.125 },
	{ "e2m1", "", 2, 1, 1, FPL_SPEC_NONE, 4, 0, 2, 6, 1, 0.5, 0.5 },
	/* e8m0: no subnormals, so min_subnormal = min_normal (format.h) */
	{ "e8m0", "", 8, 0, 127, FPL_SPEC_E8M0, 8, -127, 127, 0x1p127, 0x1p-127, 0x1p-127, 1 },
};
#define NH (sizeof H / sizeof *H)

static const char *dir(void)
{
	const char *d = getenv("FPLAB_FORMATS_DIR");
	return d && *d ? d : "formats";
}

static void check_constants(const char *what, const fpl_format *f, const struct hand *h)
{
	if (!h_check(f->e == h->e && f->m == h->m && f->bias == h->bias && f->specials == h->spec))
		h_fail("%s: e/m/bias/specials %d/%d/%d/%d, want %d/%d/%d/%d", what, f->e, f->m,
		       f->bias, (int)f->specials, h->e, h->m, h->bias, (int)h->spec);
	if (!h_check(f->nbits == h->nbits && f->emin == h->emin && f->emax == h->emax))
		h_fail("%s: nbits/emin/emax %d/%d/%d, want %d/%d/%d", what, f->nbits, f->emin,
		       f->emax, h->nbits, h->emin, h->emax);
	if (!h_check(f->max == h->max && f->min_normal == h->min_normal &&
		     f->min_subnormal == h->min_sub && f->epsilon == h->eps))
		h_fail("%s: max/min_normal/min_subnormal/epsilon %a/%a/%a/%a, want %a/%a/%a/%a", what,
		       f->max, f->min_normal, f->min_subnormal, f->epsilon, h->max, h->min_normal,
		       h->min_sub, h->eps);
}

static void named(void)
{
	size_t i, count = 0;
	const fpl_format_entry *cat = fpl_format_catalogue(&count);

	if (!h_check(cat != NULL && count == NH))
		h_fail("catalogue lists %zu formats, want %zu", count, NH);
	for (i = 0; i < NH; i++) {
		const struct hand *h = &H[i];
		fpl_format f;
		oracle_fmt o;
		char al[128], *tok, *save;
		size_t k;
		int found = 0;

		if (!h_check(fpl_format_lookup(&f, h->name) == 0)) {
			h_fail("lookup(\"%s\") failed", h->name);
			continue;
		}
		check_constants(h->name, &f, h);
		if (!h_check(strcmp(f.name, h->name) == 0))
			h_fail("lookup(\"%s\") is named \"%s\"", h->name, f.name);
		oracle_fmt_init(&o, &f);
		if (!h_check(o.max == h->max && o.min_normal == h->min_normal && o.emin == h->emin &&
			     o.emax == h->emax))
			h_fail("oracle's derivation for %s: max %a emin %d emax %d", h->name, o.max,
			       o.emin, o.emax);
		snprintf(al, sizeof al, "%s", h->aliases);
		for (tok = strtok_r(al, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			fpl_format g;
			char upper[64];
			int rc = fpl_format_lookup(&g, tok);
			if (!h_check(rc == 0 && strcmp(g.name, h->name) == 0))
				h_fail("alias \"%s\" gives %d \"%s\", want \"%s\"", tok, rc,
				       rc == 0 ? g.name : "", h->name);
			for (k = 0; tok[k] && k < 63; k++)
				upper[k] = (char)(tok[k] >= 'a' && tok[k] <= 'z' ? tok[k] - 32 : tok[k]);
			upper[k] = 0;
			rc = fpl_format_lookup(&g, upper);
			if (!h_check(rc == 0 && strcmp(g.name, h->name) == 0))
				h_fail("alias \"%s\" (upper case) gives %d", upper, rc);
		}
		for (k = 0; cat && k < count; k++)
			found |= strcmp(cat[k].name, h->name) == 0 && cat[k].source && cat[k].source[0];
		if (!h_check(found))
			h_fail("%s missing from the catalogue (or without a source)", h->name);
	}
}

static void patterns(void)
{
	fpl_format f;
	int rc;

	rc = fpl_format_lookup(&f, "e6m9");
	if (!h_check(rc == 0 && f.e == 6 && f.m == 9 && f.bias == 31 && f.specials == FPL_SPEC_IEEE &&
		     f.max == 0x1.ff8p31 && f.min_subnormal == 0x1p-39))
		h_fail("e6m9: rc %d e %d m %d bias %d max %a", rc, f.e, f.m, f.bias, f.max);
	rc = fpl_format_lookup(&f, "e11m52");
	if (!h_check(rc == 0 && f.max == DBL_MAX && f.min_subnormal == 0x1p-1074))
		h_fail("e11m52 must be binary64");
	rc = fpl_format_lookup(&f, "e3m0");
	if (!h_check(rc == 0 && f.max == 8 && f.min_normal == 0.25 && f.epsilon == 1))
		h_fail("e3m0 (APS paper): max %a min_normal %a", f.max, f.min_normal);
	/* e = 1 (bias 0): no normal binade, so max is the largest subnormal
	 * 0.111b * 2^1 = 1.75, not SEMANTICS.md's (2 - 2^-m) 2^emax */
	rc = fpl_format_lookup(&f, "e1m3");
	if (!h_check(rc == 0 && f.max == 1.75 && f.emin == 1 && f.min_subnormal == 0.25))
		h_fail("e1m3: max %a emin %d min_subnormal %a (want 0x1.cp+0, 1, 0x1p-2)", f.max,
		       f.emin, f.min_subnormal);
	rc = fpl_format_lookup(&f, "E4M3");
	if (!h_check(rc == 0 && f.specials == FPL_SPEC_FN && f.max == 448))
		h_fail("E4M3 must be OCP e4m3fn (named formats win over eXmY)");
	if (!h_check(fpl_format_lookup(&f, "e12m3") == FPL_EFORMAT))
		h_fail("e12m3 must be FPL_EFORMAT");
	if (!h_check(fpl_format_lookup(&f, "e5m53") == FPL_EFORMAT))
		h_fail("e5m53 must be FPL_EFORMAT");
	if (!h_check(fpl_format_lookup(&f, "nosuchformat") == FPL_ENOTFOUND))
		h_fail("an unknown name must be FPL_ENOTFOUND");
	if (!h_check(fpl_format_ieee(&f, 0, 3) == FPL_EFORMAT && fpl_format_ieee(&f, 4, -1) == FPL_EFORMAT))
		h_fail("fpl_format_ieee must reject e = 0 and m = -1");
	/* CPFloat's E4M3 preset: p = 4, emin = -6, emax = 8: max 480 */
	rc = fpl_format_params(&f, 4, -6, 8);
	if (!h_check(rc == 0 && f.max == 480 && f.min_normal == 0x1p-6 && f.min_subnormal == 0x1p-9 &&
		     f.emax == 8 && f.emin == -6))
		h_fail("params(4,-6,8): rc %d max %a min_normal %a min_sub %a emax %d", rc, f.max,
		       f.min_normal, f.min_subnormal, f.emax);
	rc = fpl_format_params(&f, 11, -14, 15);
	if (!h_check(rc == 0 && f.max == 65504 && f.min_subnormal == 0x1p-24))
		h_fail("params(11,-14,15) must be binary16");
	if (!h_check(fpl_format_params(&f, 54, -14, 15) == FPL_EFORMAT &&
		     fpl_format_params(&f, 4, 3, 2) == FPL_EFORMAT &&
		     fpl_format_params(&f, 4, -1023, 8) == FPL_EFORMAT))
		h_fail("params must reject p = 54, emin > emax, emin < -1022");
}

/* Parse "# key: number" from a file header. */
static int header_value(const char *path, const char *key, double *v)
{
	FILE *fp = fopen(path, "r");
	char line[512];
	size_t kl = strlen(key);
	int found = 0;

	if (!fp)
		return 0;
	while (fgets(line, sizeof line, fp))
		if (line[0] == '#' && strncmp(line + 2, key, kl) == 0 && line[2 + kl] == ':') {
			char *end;
			*v = strtod(line + 3 + kl, &end);
			found = end != line + 3 + kl;
		}
	fclose(fp);
	return found;
}

static void files(void)
{
	size_t i, nfiles = 0;
	DIR *d = opendir(dir());
	struct dirent *de;

	if (!h_check(d != NULL)) {
		h_fail("cannot open directory %s", dir());
		return;
	}
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		int known = 0;
		if (l < 5 || strcmp(de->d_name + l - 4, ".fmt") != 0)
			continue;
		nfiles++;
		for (i = 0; i < NH; i++)
			known |= strlen(H[i].name) == l - 4 && strncmp(H[i].name, de->d_name, l - 4) == 0;
		if (!h_check(known))
			h_fail("%s/%s is not a named format", dir(), de->d_name);
	}
	closedir(d);
	for (i = 0; i < NH; i++) {
		const struct hand *h = &H[i];
		char path[512], err[512];
		fpl_format f, g;
		double v;
		int rc;

		snprintf(path, sizeof path, "%s/%s.fmt", dir(), h->name);
		err[0] = 0;
		rc = fpl_format_load(&f, path, err, sizeof err);
		if (!h_check(rc == 0)) {
			h_fail("fpl_format_load(%s) = %d: %s", path, rc, err);
			continue;
		}
		check_constants(path, &f, h);
		fpl_format_lookup(&g, h->name);
		if (!h_check(strcmp(f.name, g.name) == 0 && f.subnormal == g.subnormal &&
			     f.daz == g.daz && f.tininess == g.tininess && f.nan_rule == g.nan_rule &&
			     f.explim == g.explim && f.emax_limit_set == g.emax_limit_set &&
			     (f.overflow == g.overflow || f.specials == FPL_SPEC_NONE)))
			h_fail("%s: switches differ from the built-in %s", path, h->name);
		if (!h_check(header_value(path, "max", &v) && v == h->max))
			h_fail("%s: header \"# max:\" missing or not %a", path, h->max);
		if (!h_check(header_value(path, "min_normal", &v) && v == h->min_normal))
			h_fail("%s: header \"# min_normal:\" missing or not %a", path, h->min_normal);
		if (h->spec != FPL_SPEC_E8M0 &&
		    !h_check(header_value(path, "min_subnormal", &v) && v == h->min_sub))
			h_fail("%s: header \"# min_subnormal:\" missing or not %a", path, h->min_sub);
		if (!h_check(header_value(path, "epsilon", &v) && v == h->eps))
			h_fail("%s: header \"# epsilon:\" missing or not %a", path, h->eps);
	}
	if (!h_check(nfiles == NH))
		h_fail("%s holds %zu .fmt files, want %zu", dir(), nfiles, NH);
}

/* Write `text` to a temporary file, load it, expect an error naming the
 * file and `line`. */
static void bad_file(const char *text, int line, const char *why)
{
	char path[] = "/tmp/fplab-tformat-XXXXXX", err[512], want[64];
	fpl_format f;
	FILE *fp;
	int fd = mkstemp(path), rc;

	if (fd < 0 || !(fp = fdopen(fd, "w"))) {
		h_fail("cannot create a temporary file");
		return;
	}
	fputs(text, fp);
	fclose(fp);
	err[0] = 0;
	rc = fpl_format_load(&f, path, err, sizeof err);
	snprintf(want, sizeof want, "line %d", line);
	if (!h_check(rc == FPL_EFORMAT && strstr(err, path) && strstr(err, want)))
		h_fail("%s: status %d, message \"%s\" (want FPL_EFORMAT naming %s and %s)", why, rc,
		       err, path, want);
	remove(path);
}

static void parser(void)
{
	static const char head[] = "# test\nname = t1\n";
	char buf[512], err[512];
	fpl_format f;
	int rc;

	snprintf(buf, sizeof buf, "%se = 4\nm = 3\ncolour = blue\n", head);
	bad_file(buf, 5, "unknown key");
	snprintf(buf, sizeof buf, "%se = 12\nm = 3\n", head);
	bad_file(buf, 3, "e = 12");
	snprintf(buf, sizeof buf, "%se = 4\nm = 53\n", head);
	bad_file(buf, 4, "m = 53");
	snprintf(buf, sizeof buf, "%se = 4\nm = 3\nspecials = weird\n", head);
	bad_file(buf, 5, "specials = weird");
	snprintf(buf, sizeof buf, "%se = 4\nm = 3\nsubnormal = maybe\n", head);
	bad_file(buf, 5, "subnormal = maybe");
	snprintf(buf, sizeof buf, "%se = 4\nm = 3\noverflow = maybe\n", head);
	bad_file(buf, 5, "overflow = maybe");
	snprintf(buf, sizeof buf, "%se = 4\nm = 3\ndaz = 2\n", head);
	bad_file(buf, 5, "daz = 2");
	snprintf(buf, sizeof buf, "%se = 4\nm = x3\n", head);
	bad_file(buf, 4, "m = x3");
	snprintf(buf, sizeof buf, "%se = 4\nthis line has no equals sign\n", head);
	bad_file(buf, 4, "no '='");
	rc = fpl_format_load(&f, "/nonexistent/dir/x.fmt", err, sizeof err);
	if (!h_check(rc == FPL_EIO && strstr(err, "/nonexistent/dir/x.fmt")))
		h_fail("missing file: status %d, message \"%s\"", rc, err);
}

/* Round x in f (with its overflow rule ovf) and compare value and flags. */
static void inf_case(const char *name, fpl_overflow ovf, double x, double want, unsigned wfl)
{
	fpl_format f;
	fpl_state st;
	double got;

	if (!h_check(fpl_format_lookup(&f, name) == 0)) {
		h_fail("%s does not resolve", name);
		return;
	}
	f.overflow = ovf;
	if (!h_check(fpl_format_finish(&f) == 0)) {
		h_fail("%s with overflow %d does not finish", name, (int)ovf);
		return;
	}
	fpl_state_init(&st, 1);
	got = fpl_round(&f, x, FPL_RND_NE, &st);
	if (!h_check((got == want || (got != got && want != want)) && st.flags == wfl))
		h_fail("%s overflow %d: round(%a) = %a flags %#x, want %a flags %#x", name,
		       (int)ovf, x, got, st.flags, want, wfl);
}

/* inf-always: every overflow is inf, in tz, tn and od too (SEMANTICS.md
 * step 4); values below the overflow threshold keep their mode's result. */
static void inf_always(void)
{
	static const fpl_rnd modes[] = { FPL_RND_NE, FPL_RND_TZ, FPL_RND_TN, FPL_RND_TP, FPL_RND_OD };
	fpl_format f;
	fpl_state st;
	size_t i;

	fpl_format_lookup(&f, "fp16");
	f.overflow = FPL_OVF_INF_ALWAYS;
	fpl_format_finish(&f);
	for (i = 0; i < sizeof modes / sizeof *modes; i++) {
		double got;
		fpl_state_init(&st, 1);
		got = fpl_round(&f, -1e9, modes[i], &st);
		if (!h_check(got == -INFINITY
			     && st.flags == (FPL_FLAG_OVERFLOW | FPL_FLAG_INEXACT)))
			h_fail("fp16 inf-always: round(-1e9, %s) = %a flags %#x, want -inf",
			       fpl_rnd_name(modes[i]), got, st.flags);
		fpl_state_init(&st, 1);
		got = fpl_round(&f, 65519.0, modes[i], &st);	/* below the tie: no overflow */
		if (!h_check(got == (modes[i] == FPL_RND_TP ? INFINITY : 65504.0)
			     || (modes[i] == FPL_RND_OD && got == 65504.0)))
			h_fail("fp16 inf-always: round(65519, %s) = %a", fpl_rnd_name(modes[i]), got);
	}
}

/* nan = ones: every NaN result is +NaN with all fraction bits set
 * (0x7fffffff in fp32), an invalid operation's and a NaN operand's. */
static void nan_ones(void)
{
	fpl_format f;
	fpl_state st;
	double r;

	fpl_format_lookup(&f, "fp32");
	f.nan_rule = FPL_NAN_ONES;
	fpl_format_finish(&f);
	fpl_state_init(&st, 1);
	r = fpl_add(&f, INFINITY, -INFINITY, FPL_RND_NE, &st);
	if (!h_check(h_bits32((float)r) == 0x7fffffffu))
		h_fail("fp32 nan=ones: inf - inf = %08x, want 7fffffff", h_bits32((float)r));
	r = fpl_add(&f, -NAN, 1.0, FPL_RND_NE, &st);
	if (!h_check(h_bits32((float)r) == 0x7fffffffu))
		h_fail("fp32 nan=ones: -NaN + 1 = %08x, want 7fffffff", h_bits32((float)r));
	if (!h_check(!strcmp(fpl_nan_rule_name(FPL_NAN_ONES), "ones")))
		h_fail("nan rule name");
}

static void switches(void)
{
	fpl_format f, g;
	fpl_state st;
	double r;
	char path[] = "/tmp/fplab-tformat-XXXXXX", err[512];
	int fd, rc;
	FILE *fp;

	/* chop's q43 is t = 4, emax = 7, so emin = 1 - 7 = -6: precision 4,
	 * max = (2 - 2^-3) 2^7 = 240, which is e4m3ieee's (bias 7, ieee). */
	rc = fpl_format_params(&f, 4, 1 - 7, 7);
	if (!h_check(rc == 0 && f.max == 240 && f.emin == -6 && f.emax == 7 &&
		     fpl_format_lookup(&g, "e4m3ieee") == 0 && g.max == f.max && g.e == f.e &&
		     g.m == f.m && g.bias == f.bias && g.specials == f.specials))
		h_fail("params(4,-6,7) (chop q43): rc %d max %a, want e4m3ieee's 240", rc, f.max);
	/* chop's half: t = 11, emax = 15 -> emin -14: binary16, max 65504 */
	rc = fpl_format_params(&f, 11, 1 - 15, 15);
	if (!h_check(rc == 0 && f.max == 65504 && f.e == 5 && f.bias == 15))
		h_fail("params(11,-14,15) (chop half) must be fp16");

	/* overflow rules: 0..3 finish, 4 does not */
	fpl_format_lookup(&f, "fp16");
	f.overflow = FPL_OVF_SATURATE_KEEP_INF;
	if (!h_check(fpl_format_finish(&f) == 0))
		h_fail("overflow = saturate-keep-inf must finish");
	f.overflow = FPL_OVF_INF_ALWAYS;
	if (!h_check(fpl_format_finish(&f) == 0))
		h_fail("overflow = inf-always must finish");
	f.overflow = (fpl_overflow)4;
	if (!h_check(fpl_format_finish(&f) == FPL_EFORMAT))
		h_fail("overflow = 4 must be refused");

	/* infinite input, fp16: inf keeps it (exact, no flag); saturate gives
	 * +-65504 with saturated (OCP OFP8 saturation); keep-inf keeps it */
	inf_case("fp16", FPL_OVF_INF, -INFINITY, -INFINITY, 0);
	inf_case("fp16", FPL_OVF_SATURATE, INFINITY, 65504, FPL_FLAG_SATURATED);
	inf_case("fp16", FPL_OVF_SATURATE, -INFINITY, -65504, FPL_FLAG_SATURATED);
	inf_case("fp16", FPL_OVF_SATURATE_KEEP_INF, -INFINITY, -INFINITY, 0);
	/* a finite overflow saturates under both saturating rules:
	 * 1e9 > 65520 (the tie above max) -> 65504, overflow|inexact|saturated */
	inf_case("fp16", FPL_OVF_SATURATE_KEEP_INF, 1e9, 65504,
		 FPL_FLAG_OVERFLOW | FPL_FLAG_INEXACT | FPL_FLAG_SATURATED);
	inf_case("fp16", FPL_OVF_SATURATE, -1e9, -65504,
		 FPL_FLAG_OVERFLOW | FPL_FLAG_INEXACT | FPL_FLAG_SATURATED);
	inf_always();
	nan_ones();
	/* e4m3fn has no inf: NaN with invalid, or 448 under either rule */
	inf_case("e4m3fn", FPL_OVF_INF, INFINITY, NAN, FPL_FLAG_INVALID);
	inf_case("e4m3fn", FPL_OVF_SATURATE, INFINITY, 448, FPL_FLAG_SATURATED);
	inf_case("e4m3fn", FPL_OVF_SATURATE_KEEP_INF, -INFINITY, -448, FPL_FLAG_SATURATED);
	/* e8m0 is unsigned: -inf is NaN with invalid under every rule */
	inf_case("e8m0", FPL_OVF_SATURATE, -INFINITY, NAN, FPL_FLAG_INVALID);

	/* an exact infinite result too: 1/0 in saturating fp16 is 65504 with
	 * divbyzero|saturated; keep-inf gives inf with divbyzero */
	fpl_format_lookup(&f, "fp16");
	f.overflow = FPL_OVF_SATURATE;
	fpl_format_finish(&f);
	fpl_state_init(&st, 1);
	r = fpl_div(&f, 1, 0, FPL_RND_NE, &st);
	if (!h_check(r == 65504 && st.flags == (FPL_FLAG_DIVBYZERO | FPL_FLAG_SATURATED)))
		h_fail("saturating fp16 1/0 = %a flags %#x, want 65504 divbyzero|saturated", r,
		       st.flags);
	f.overflow = FPL_OVF_SATURATE_KEEP_INF;
	fpl_format_finish(&f);
	fpl_state_init(&st, 1);
	r = fpl_div(&f, -1, 0, FPL_RND_NE, &st);
	if (!h_check(r == -INFINITY && st.flags == FPL_FLAG_DIVBYZERO))
		h_fail("keep-inf fp16 -1/0 = %a flags %#x, want -inf divbyzero", r, st.flags);

	/* --infinity 0 on fp16 is fn capped at the encoding's top finite
	 * binade 15: every fraction of binade 15 is finite, max 65504.  With
	 * explim 0 as well (CPFloat's binary64 range without infinities) the
	 * range is binary64's: max = (2 - 2^-10) 2^1023 = 0x1.ffcp1023. */
	fpl_format_lookup(&f, "fp16");
	f.specials = FPL_SPEC_FN;
	f.emax_limit_set = 1;
	f.emax_limit = 15;
	rc = fpl_format_finish(&f);
	if (!h_check(rc == 0 && f.max == 65504))
		h_fail("fp16 without inf: rc %d max %a, want 65504", rc, f.max);
	f.explim = 0;
	rc = fpl_format_finish(&f);
	if (!h_check(rc == 0 && f.max == 0x1.ffcp1023 && f.emax == 1023 && f.emin == -1022))
		h_fail("fp16 without inf, explim 0: rc %d max %a, want 0x1.ffcp1023", rc, f.max);

	/* the .fmt keyword */
	fd = mkstemp(path);
	if (!h_check(fd >= 0 && (fp = fdopen(fd, "w")) != NULL)) {
		h_fail("cannot create a temporary file");
		return;
	}
	fputs("e = 5\nm = 10\noverflow = saturate-keep-inf\n", fp);
	fclose(fp);
	rc = fpl_format_load(&f, path, err, sizeof err);
	if (!h_check(rc == 0 && f.overflow == FPL_OVF_SATURATE_KEEP_INF))
		h_fail("overflow = saturate-keep-inf: status %d (%s)", rc, err);
	remove(path);
}

int main(void)
{
	h_init("tformat");
	named();
	patterns();
	files();
	parser();
	switches();
	oracle_thread_done();
	return h_done();
}

/* SPDX-License-Identifier: MIT */
/*
 * cli.c - helpers shared by the fplab commands: messages, name
 * suggestions, number parsing, the shared rounding options, text and
 * binary input, value output, atomic output files and report tables.
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

#include <mpfr.h>

#include "cli/cli.h"

const char *cli_cmd;

/* ------------------------------------------------------------ messages */
__attribute__((format(printf, 1, 0)))
static void vmessage(const char *fmt, va_list ap)
{
	fflush(stdout);
	if (cli_cmd)
		fprintf(stderr, "fplab: %s: ", cli_cmd);
	else
		fputs("fplab: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
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

	fflush(stdout);
	fputs("fplab: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
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

int usage_help(const char *usage)
{
	fputs(usage, stdout);
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

int cli_parse_double_odd(const char *s, double *out)
{
	mpfr_t v;
	char *end;
	double d;
	int t;
	uint64_t u;

	if (cli_parse_double(s, out))
		return -1;
	d = fabs(*out);
	if (!(d >= 0x1p-1022 && d <= DBL_MAX))	/* zero, subnormal, inf, nan */
		return 0;
	mpfr_init2(v, 53);
	t = mpfr_strtofr(v, s, &end, 0, MPFR_RNDZ);
	if (*end || !mpfr_number_p(v)) {	/* a spelling MPFR reads otherwise */
		mpfr_clear(v);
		return 0;
	}
	d = mpfr_get_d(v, MPFR_RNDZ);		/* exact: 53 bits, in range */
	mpfr_clear(v);
	if (fabs(d) < 0x1p-1022 || fabs(d) > DBL_MAX)
		return 0;
	if (t) {
		memcpy(&u, &d, sizeof u);
		u |= 1;
		memcpy(&d, &u, sizeof d);
	}
	*out = d;
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

/* ------------------------------------------- shared rounding options */
void cli_round_init(struct cli_round *ro)
{
	memset(ro, 0, sizeof *ro);
	ro->rnd = FPL_RND_NE;
	fpl_state_init(&ro->st, 0);
	ro->format_arg = NULL;
	ro->subnormal = ro->saturation = ro->infinity = ro->explim = -1;
}

static const char *const rnd_names[] = {
	"ne", "na", "nz", "tp", "tn", "tz", "sp", "se", "od",
	"-1", "0", "1", "2", "3", "4", "5", "6", "7"
};

static int parse_params(struct cli_round *ro, const char *arg)
{
	long v[3];
	char *copy = strdup(arg), *tok, *save = NULL;
	int k = 0;

	if (!copy)
		return error("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (k == 3 || cli_parse_long(tok, &v[k]) || v[k] < -100000 || v[k] > 100000)
			break;
		k++;
	}
	free(copy);
	if (tok || k != 3) {
		error("--params: '%s' is not P,EMIN,EMAX (three integers)", arg);
		return -2;
	}
	ro->has_params = 1;
	ro->p = (int)v[0];
	ro->emin = (int)v[1];
	ro->emax = (int)v[2];
	return 0;
}

int cli_round_option(struct cli_round *ro, int c, const char *arg)
{
	long v;
	uint64_t u;
	double d;
	int rc = 0, sw;

	switch (c) {
	case 'f':
		ro->format_arg = arg;
		return 1;
	case 'r':
		if (fpl_rnd_parse(arg, &ro->rnd)) {
			cli_unknown("rounding mode", arg, rnd_names, 9);
			return -2;
		}
		return 1;
	case 'p':
		if (cli_parse_double(arg, &d) || !(d >= 0 && d <= 1)) {
			error("-p: '%s' is not a probability in [0,1]", arg);
			return -2;
		}
		ro->st.flip_prob = d;
		return 1;
	case CLI_OPT_PARAMS:
		rc = parse_params(ro, arg);
		return rc ? (rc == -1 ? -2 : rc) : 1;
	case CLI_OPT_SUBNORMAL:
		rc = cli_parse_switch("--subnormal", arg, 1, &ro->subnormal);
		break;
	case CLI_OPT_SATURATION:
		rc = cli_parse_switch("--saturation", arg, 1, &ro->saturation);
		break;
	case CLI_OPT_INFINITY:
		rc = cli_parse_switch("--infinity", arg, 1, &ro->infinity);
		break;
	case CLI_OPT_EXPLIM:
		rc = cli_parse_switch("--explim", arg, 1, &ro->explim);
		break;
	case CLI_OPT_FLIP:
		rc = cli_parse_switch("--flip", arg, 2, &sw);
		if (!rc)
			ro->st.flip = (fpl_flip)sw;
		break;
	case CLI_OPT_SEED:
		if (cli_parse_u64(arg, &u)) {
			error("--seed: '%s' is not a non-negative integer", arg);
			return -2;
		}
		ro->st.seed = u;
		return 1;
	case CLI_OPT_SR_BITS:
		if (cli_parse_long(arg, &v) || v < 1 || v > 32) {
			error("--sr-bits: '%s' is not an integer in 1..32", arg);
			return -2;
		}
		ro->st.sr_bits = (int)v;
		return 1;
	case CLI_OPT_THREADS:
		if (cli_parse_long(arg, &v) || v < 0 || v > 1024) {
			error("--threads: '%s' is not an integer in 0..1024", arg);
			return -2;
		}
		ro->st.threads = (int)v;
		return 1;
	default:
		return 0;
	}
	return rc ? -2 : 1;
}

/* Catalogue names and aliases, split once. */
static const char **names_list;
static char *names_store;
static size_t names_count;

static void free_names(void)
{
	free(names_list);
	free(names_store);
}

const char *const *cli_format_names(size_t *n)
{
	char *store;
	size_t count, i, k = 0, len = 0;
	const fpl_format_entry *cat;
	char *p;

	if (names_list) {
		*n = names_count;
		return names_list;
	}
	cat = fpl_format_catalogue(&count);
	for (i = 0; i < count; i++)
		len += strlen(cat[i].name) + strlen(cat[i].aliases ? cat[i].aliases : "") + 2;
	store = malloc(len + 32);
	names_list = malloc((len + 4) * sizeof *names_list);
	if (!store || !names_list) {
		free(store);
		free(names_list);
		names_list = NULL;
		store = NULL;
		*n = 0;
		return NULL;
	}
	p = store;
	for (i = 0; i < count; i++) {
		const char *a = cat[i].aliases ? cat[i].aliases : "";

		names_list[k++] = strcpy(p, cat[i].name);
		p += strlen(p) + 1;
		while (*a) {
			size_t w;

			while (*a == ' ')
				a++;
			w = strcspn(a, " ");
			if (!w)
				break;
			memcpy(p, a, w);
			p[w] = 0;
			names_list[k++] = p;
			p += w + 1;
			a += w;
		}
	}
	names_list[k++] = strcpy(p, "custom");
	p += strlen(p) + 1;
	names_list[k++] = strcpy(p, "c");
	names_count = k;
	names_store = store;
	atexit(free_names);
	*n = k;
	return names_list;
}

static int is_fmt_path(const char *name)
{
	size_t n = strlen(name);

	return strchr(name, '/') || (n > 4 && !strcmp(name + n - 4, ".fmt"));
}

int cli_format_resolve(fpl_format *f, const char *name)
{
	char err[512];
	int rc;

	if (!*name) {
		error("empty format name");
		return -2;
	}
	if (is_fmt_path(name)) {
		err[0] = 0;
		rc = fpl_format_load(f, name, err, sizeof err);
		if (rc)
			return error("%s", err[0] ? err : fpl_strerror(rc));
		return 0;
	}
	rc = fpl_format_lookup(f, name);
	if (rc == FPL_EFORMAT) {
		error("impossible format '%s': exponent bits must be 1..11 and mantissa bits 0..52",
		      name);
		return -2;
	}
	if (rc) {
		size_t n;
		const char *const *names = cli_format_names(&n);

		cli_unknown("format", name, names, n);
		return -2;
	}
	return 0;
}

static int is_custom(const char *name)
{
	return !strcasecmp(name, "c") || !strcasecmp(name, "custom");
}

static int is_bf16(const fpl_format *f)
{
	return !strcmp(f->name, "bf16");
}

/*
 * --infinity 0 on an IEEE-style format: no infinity code, same finite
 * range.  The descriptor's `fn` specials (NaN only at all ones) with the
 * finite binades capped at the IEEE emax keep every finite value and make
 * overflow give NaN (or max when saturating).
 */
static int drop_infinity(fpl_format *f)
{
	int emax = f->emax;

	if (f->specials != FPL_SPEC_IEEE)
		return 0;
	f->specials = FPL_SPEC_FN;
	f->emax_limit_set = 1;
	f->emax_limit = emax;
	return fpl_format_finish(f);
}

int cli_round_finish(struct cli_round *ro)
{
	const char *name = ro->format_arg ? ro->format_arg : "fp16";
	fpl_format *f = &ro->fmt;
	int rc;

	if (ro->has_params && ro->format_arg && !is_custom(ro->format_arg)) {
		error("--params needs -f custom (got -f %s)", ro->format_arg);
		return -2;
	}
	if (ro->has_params || is_custom(name)) {
		if (!ro->has_params) {
			error("-f %s needs --params P,EMIN,EMAX", name);
			return -2;
		}
		rc = fpl_format_params(f, ro->p, ro->emin, ro->emax);
		if (rc) {
			error("impossible format --params %d,%d,%d: need 1 <= P <= 53, "
			      "-1022 <= EMIN <= EMAX <= 1023", ro->p, ro->emin, ro->emax);
			return -2;
		}
	} else {
		rc = cli_format_resolve(f, name);
		if (rc)
			return rc;
		/* CPFloat's MATLAB interface: bfloat16 without subnormals */
		if (ro->subnormal < 0 && is_bf16(f) && !is_fmt_path(name))
			f->subnormal = FPL_SUB_NO_ROUND;
	}
	if (ro->subnormal >= 0)
		f->subnormal = ro->subnormal ? FPL_SUB_YES : FPL_SUB_NO_ROUND;
	if (ro->saturation >= 0)
		f->overflow = ro->saturation ? FPL_OVF_SATURATE : FPL_OVF_INF;
	if (ro->explim >= 0)
		f->explim = ro->explim;
	rc = fpl_format_finish(f);
	if (!rc && ro->infinity == 0)
		rc = drop_infinity(f);
	if (!rc && ro->infinity == 1 && f->specials != FPL_SPEC_IEEE) {
		error("--infinity 1: format '%s' has no infinity code (specials %s)", f->name,
		      fpl_specials_name(f->specials));
		return -2;
	}
	if (rc) {
		error("impossible format '%s' with these switches", f->name);
		return -2;
	}
	return 0;
}

int cli_report_option(enum cli_report *kind, int c)
{
	if (c == CLI_OPT_TSV)
		*kind = CLI_REPORT_TSV;
	else if (c == CLI_OPT_JSON)
		*kind = CLI_REPORT_JSON;
	else
		return 0;
	return 1;
}

/* -------------------------------------------------------- text input */
int cli_text_open(struct cli_text *t, const char *path)
{
	memset(t, 0, sizeof *t);
	if (!path || !strcmp(path, "-")) {
		t->fp = stdin;
		return 0;
	}
	t->name = path;
	t->fp = fopen(path, "r");
	if (!t->fp)
		return error("cannot open '%s': %s", path, strerror(errno));
	t->own = 1;
	return 0;
}

void cli_text_release(struct cli_text *t)
{
	if (t->own && t->fp)
		fclose(t->fp);
	free(t->buf);
	memset(t, 0, sizeof *t);
}

static int text_where(const struct cli_text *t, char *buf, size_t len)
{
	if (t->name)
		return snprintf(buf, len, "%s: line %ld", t->name, t->line);
	return snprintf(buf, len, "line %ld", t->line);
}

/* Parse the numbers of t->pos (a NUL-terminated rest of the line) into
 * vals, at most max; leaves t->pos at the rest, or NULL at the line's end. */
static int text_tokens(struct cli_text *t, double *vals, size_t max, size_t *n)
{
	static const char blanks[] = " \t\r\n\v\f";
	char where[600];
	char *p = t->pos;
	size_t k = 0;

	for (;;) {
		char *tok, save;
		size_t len;

		p += strspn(p, blanks);
		if (!*p) {
			t->pos = NULL;
			break;
		}
		if (k == max) {
			t->pos = p;
			break;
		}
		tok = p;
		len = strcspn(p, blanks);
		save = p[len];
		p[len] = 0;
		if (t->to_odd ? cli_parse_double_odd(tok, &vals[k]) : cli_parse_double(tok, &vals[k])) {
			text_where(t, where, sizeof where);
			if (len > 40)
				return error("%s: '%.40s...' is not a number", where, tok);
			return error("%s: '%s' is not a number", where, tok);
		}
		p[len] = save;
		p += len;
		k++;
	}
	*n = k;
	t->partial = t->pos != NULL;
	return 0;
}

int cli_text_line(struct cli_text *t, double *vals, size_t max, size_t *n)
{
	char where[600];
	ssize_t len;

	*n = 0;
	if (t->pos)
		return text_tokens(t, vals, max, n) ? -1 : 1;
	for (;;) {
		char *p;

		errno = 0;
		len = getline(&t->buf, &t->cap, t->fp);
		if (len < 0) {
			if (ferror(t->fp))
				return error("read error on '%s': %s", t->name ? t->name : "stdin",
					     strerror(errno ? errno : EIO));
			t->partial = 0;
			return 0;
		}
		t->line++;
		if ((size_t)len != strlen(t->buf)) {
			text_where(t, where, sizeof where);
			return error("%s: NUL byte in text input (binary file? use --in)", where);
		}
		p = strchr(t->buf, '#');
		if (p)
			*p = 0;
		t->pos = t->buf;
		if (text_tokens(t, vals, max, n))
			return -1;
		if (*n)
			return 1;
	}
}

/* ------------------------------------------------------ binary input */
static const char *const in_names[] = {
	"text", "f64", "f32", "f16", "bf16", "npy", "codes"
};

int cli_in_parse(const char *s, enum cli_in_kind *out)
{
	size_t i;

	for (i = 0; i < sizeof in_names / sizeof *in_names; i++)
		if (!strcmp(s, in_names[i])) {
			*out = (enum cli_in_kind)i;
			return 0;
		}
	cli_unknown("input kind", s, in_names, sizeof in_names / sizeof *in_names);
	return -2;
}

static size_t code_bytes(const fpl_format *f)
{
	return f->nbits <= 8 ? 1 : f->nbits <= 16 ? 2 : f->nbits <= 32 ? 4 : 8;
}

static size_t in_elem_size(const struct cli_reader *r)
{
	switch (r->kind) {
	case CLI_IN_F64: return 8;
	case CLI_IN_F32: return 4;
	case CLI_IN_F16:
	case CLI_IN_BF16: return 2;
	case CLI_IN_CODES: return code_bytes(r->codes_fmt);
	default: return 0;
	}
}

int cli_reader_open(struct cli_reader *r, const char *path, enum cli_in_kind kind,
		    const fpl_format *codes_fmt)
{
	char err[1024];
	int rc;

	memset(r, 0, sizeof *r);
	r->kind = kind;
	r->codes_fmt = codes_fmt;
	r->name = (path && strcmp(path, "-")) ? path : NULL;
	if (kind == CLI_IN_TEXT)
		return cli_text_open(&r->text, path);
	if (kind == CLI_IN_NPY) {
		fpl_tensor_opts o;

		if (!r->name)
			return error("--in npy needs a file name, not stdin");
		memset(&o, 0, sizeof o);
		o.kind = FPL_TK_NPY;
		err[0] = 0;
		rc = fpl_tensor_open(&r->tf, path, &o, err, sizeof err);
		if (!rc)
			rc = fpl_tensor_stream_open(&r->ts, r->tf, 0, err, sizeof err);
		if (rc) {
			error("%s", err[0] ? err : fpl_strerror(rc));
			cli_reader_release(r);
			return -1;
		}
		return 0;
	}
	if (!r->name) {
		r->fp = stdin;
		return 0;
	}
	r->fp = fopen(path, "rb");
	if (!r->fp)
		return error("cannot open '%s': %s", path, strerror(errno));
	r->own = 1;
	return 0;
}

/* Binary16 and bfloat16 bit patterns to binary64, exactly. */
static double half_to_double(unsigned h)
{
	unsigned s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
	double v;

	if (e == 31) {
		if (!m)
			return s ? -INFINITY : INFINITY;
		{
			uint64_t b = ((uint64_t)s << 63) | (0x7ffULL << 52) | ((uint64_t)m << 42);

			memcpy(&v, &b, sizeof v);
			return v;
		}
	}
	v = e ? ldexp(1024 + m, (int)e - 25) : ldexp(m, -24);
	return s ? -v : v;
}

static double bf16_to_double(unsigned h)
{
	uint32_t b = (uint32_t)h << 16;
	float f;

	memcpy(&f, &b, sizeof f);
	return (double)f;
}

static uint64_t load_le(const unsigned char *p, size_t w)
{
	uint64_t v = 0;

	while (w--)
		v = (v << 8) | p[w];
	return v;
}

int cli_reader_read(struct cli_reader *r, double *buf, size_t cap, size_t *got)
{
	char err[1024];
	size_t w = in_elem_size(r), k, i;
	const char *name = r->name ? r->name : "stdin";
	int rc;

	*got = 0;
	if (r->kind == CLI_IN_TEXT) {
		/* values in any layout: gather whole lines; a line is at most cap */
		while (*got < cap) {
			size_t n;

			rc = cli_text_line(&r->text, buf + *got, cap - *got, &n);
			if (rc < 0)
				return -1;
			if (rc == 0)
				break;
			*got += n;
		}
		r->done += *got;
		return 0;
	}
	if (r->kind == CLI_IN_NPY) {
		err[0] = 0;
		rc = fpl_tensor_stream_read(r->ts, buf, cap, got, err, sizeof err);
		if (rc)
			return error("%s", err[0] ? err : fpl_strerror(rc));
		r->done += *got;
		return 0;
	}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (r->kind == CLI_IN_F64) {
		/* the file's bytes are the values: read them in place */
		k = fread(buf, 1, cap * 8, r->fp);
		if (k < cap * 8 && ferror(r->fp))
			return error("read error on '%s': %s", name, strerror(errno ? errno : EIO));
		if (k % 8)
			return error("'%s': truncated: %zu trailing bytes after %llu elements of 8 bytes",
				     name, k % 8, (unsigned long long)(r->done + k / 8));
		*got = k / 8;
		r->done += *got;
		return 0;
	}
#endif
	if (r->rawcap < cap * w) {
		free(r->raw);
		r->raw = malloc(cap * w);
		if (!r->raw) {
			r->rawcap = 0;
			return error("out of memory");
		}
		r->rawcap = cap * w;
	}
	k = fread(r->raw, 1, cap * w, r->fp);
	if (k < cap * w && ferror(r->fp))
		return error("read error on '%s': %s", name, strerror(errno ? errno : EIO));
	if (k % w)
		return error("'%s': truncated: %zu trailing bytes after %llu elements of %zu bytes",
			     name, k % w, (unsigned long long)(r->done + k / w), w);
	k /= w;
	for (i = 0; i < k; i++) {
		const unsigned char *p = r->raw + i * w;
		uint64_t b = load_le(p, w);

		switch (r->kind) {
		case CLI_IN_F64:
			memcpy(&buf[i], &b, 8);
			break;
		case CLI_IN_F32: {
			uint32_t b32 = (uint32_t)b;
			float fl;

			memcpy(&fl, &b32, 4);
			buf[i] = fl;
			break;
		}
		case CLI_IN_F16:
			buf[i] = half_to_double((unsigned)b);
			break;
		case CLI_IN_BF16:
			buf[i] = bf16_to_double((unsigned)b);
			break;
		default:
			if (r->codes_fmt->nbits < 64 && (b >> r->codes_fmt->nbits))
				return error("'%s': element %llu: code 0x%llx has more than %d bits",
					     name, (unsigned long long)(r->done + i),
					     (unsigned long long)b, r->codes_fmt->nbits);
			buf[i] = fpl_decode(r->codes_fmt, b);
			break;
		}
	}
	*got = k;
	r->done += k;
	return 0;
}

void cli_reader_release(struct cli_reader *r)
{
	if (r->kind == CLI_IN_TEXT)
		cli_text_release(&r->text);
	if (r->ts)
		fpl_tensor_stream_close(r->ts);
	if (r->tf)
		fpl_tensor_close(r->tf);
	if (r->own && r->fp)
		fclose(r->fp);
	free(r->raw);
	memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------- value output */
static const char *const out_names[] = { "text", "hex", "bits", "f64", "f32", "npy" };

int cli_out_parse(const char *s, enum cli_out_kind *out)
{
	size_t i;

	for (i = 0; i < sizeof out_names / sizeof *out_names; i++)
		if (!strcmp(s, out_names[i])) {
			*out = (enum cli_out_kind)i;
			return 0;
		}
	cli_unknown("output kind", s, out_names, sizeof out_names / sizeof *out_names);
	return -2;
}

char *cli_shortest(char *buf, double x)
{
	char e[CLI_VALUE_MAX];
	int prec, ex;

	if (isnan(x))
		return strcpy(buf, "nan");
	if (isinf(x))
		return strcpy(buf, x < 0 ? "-inf" : "inf");
	/* fewest significant digits that read back exactly */
	for (prec = 1; prec < 17; prec++) {
		snprintf(e, sizeof e, "%.*e", prec - 1, x);
		if (strtod(e, NULL) == x)
			break;
	}
	snprintf(e, sizeof e, "%.*e", prec - 1, x);
	ex = atoi(strchr(e, 'e') + 1);
	/* plain notation for moderate exponents, as %g would choose */
	if (ex >= -4 && ex < 17)
		snprintf(buf, CLI_VALUE_MAX, "%.*f", prec - 1 - ex > 0 ? prec - 1 - ex : 0, x);
	else
		snprintf(buf, CLI_VALUE_MAX, "%s", e);
	return buf;
}

char *cli_value_str(char *buf, double x, enum cli_out_kind kind, const fpl_format *f)
{
	uint64_t c;

	switch (kind) {
	case CLI_OUT_HEX:
		if (isnan(x))
			return strcpy(buf, "nan");
		snprintf(buf, CLI_VALUE_MAX, "%a", x);
		return buf;
	case CLI_OUT_BITS:
		c = fpl_encode(f, x);
		if (c == FPL_CODE_NONE)
			return strcpy(buf, "none");
		return cli_code_str(buf, f, c);
	default:
		return cli_shortest(buf, x);
	}
}

char *cli_code_str(char *buf, const fpl_format *f, uint64_t c)
{
	static const char hex[] = "0123456789abcdef";
	int digits = (f->nbits + 3) / 4, i;

	if (digits < 1)
		digits = 1;
	if (digits > 16)
		digits = 16;
	buf[0] = '0';
	buf[1] = 'x';
	for (i = 0; i < digits; i++)
		buf[2 + i] = hex[(c >> (4 * (digits - 1 - i))) & 15];
	buf[2 + digits] = 0;
	return buf;
}

/* ------------------------------------------------------ atomic output */
int cli_output_open(struct cli_output *o, const char *path)
{
	int fd;

	memset(o, 0, sizeof *o);
	if (!path || !strcmp(path, "-")) {
		o->fp = stdout;
		return 0;
	}
	o->path = strdup(path);
	if (!o->path)
		return error("out of memory");
	{
		struct stat sb;

		/* a device or FIFO (/dev/null, /dev/full, a pipe) is written in
		 * place: renaming over it would replace the node by a file */
		if (!stat(path, &sb) && !S_ISREG(sb.st_mode)) {
			o->fp = fopen(path, "wb");
			if (!o->fp) {
				error("cannot open '%s': %s", path, strerror(errno));
				free(o->path);
				o->path = NULL;
				return -1;
			}
			return 0;
		}
	}
	o->tmp = malloc(strlen(path) + 32);
	if (!o->tmp) {
		free(o->path);
		free(o->tmp);
		memset(o, 0, sizeof *o);
		return error("out of memory");
	}
	sprintf(o->tmp, "%s.tmp-XXXXXX", path);
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		error("cannot create '%s': %s", path, strerror(errno));
		free(o->path);
		free(o->tmp);
		memset(o, 0, sizeof *o);
		return -1;
	}
	/* mkstemp makes 0600; give the usual umask-governed mode */
	{
		mode_t um = umask(0);

		umask(um);
		fchmod(fd, 0666 & ~um);
	}
	o->fp = fdopen(fd, "wb");
	if (!o->fp) {
		close(fd);
		unlink(o->tmp);
		free(o->path);
		free(o->tmp);
		memset(o, 0, sizeof *o);
		return error("cannot create '%s': %s", path, strerror(errno));
	}
	return 0;
}

int cli_output_close(struct cli_output *o, int ok)
{
	int rc = 0;

	if (!o->fp)
		return ok ? 0 : -1;
	if (!o->path) {
		o->fp = NULL;
		return ok ? 0 : -1;
	}
	if (ok) {
		errno = 0;
		if (fflush(o->fp) || ferror(o->fp))
			rc = error("write error on '%s': %s", o->path, strerror(errno ? errno : EIO));
		if (fclose(o->fp) && !rc)
			rc = error("write error on '%s': %s", o->path, strerror(errno ? errno : EIO));
		if (!rc && o->tmp && rename(o->tmp, o->path))
			rc = error("cannot rename '%s' to '%s': %s", o->tmp, o->path, strerror(errno));
	} else {
		fclose(o->fp);
		rc = -1;
	}
	if (rc && o->tmp)
		unlink(o->tmp);
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof *o);
	return rc;
}

int cli_flush_stdout(void)
{
	errno = 0;
	if (fflush(stdout) || ferror(stdout))
		return error("write error on stdout: %s", strerror(errno ? errno : EIO));
	return 0;
}

/* ------------------------------------------------------------ writer */
int cli_writer_open(struct cli_writer *w, const char *path, enum cli_out_kind kind,
		    const fpl_format *f, uint64_t known)
{
	memset(w, 0, sizeof *w);
	w->kind = kind;
	w->f = f;
	w->known = known;
	if (cli_output_open(&w->out, path))
		return -1;
	if (kind == CLI_OUT_NPY) {
		if (known == UINT64_MAX) {
			w->spool = tmpfile();
			if (!w->spool) {
				cli_output_close(&w->out, 0);
				return error("cannot create a temporary file: %s", strerror(errno));
			}
		} else if (fpl_npy_write_header(w->out.fp, FPL_DT_F64, known)) {
			cli_output_close(&w->out, 0);
			return error("write error on '%s': %s", path ? path : "stdout",
				     strerror(errno ? errno : EIO));
		}
	}
	return 0;
}

static int put_binary(struct cli_writer *w, FILE *fp, const double *v, size_t n)
{
	size_t es = w->kind == CLI_OUT_F32 ? 4 : 8, i;
	unsigned char *p;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (es == 8) {
		if (fwrite(v, 8, n, fp) != n)
			return error("write error on '%s': %s", w->out.path ? w->out.path : "stdout",
				     strerror(errno ? errno : EIO));
		return 0;
	}
#endif
	if (w->bufcap < n * es) {
		free(w->buf);
		w->buf = malloc(n * es);
		w->bufcap = w->buf ? n * es : 0;
		if (!w->buf)
			return error("out of memory");
	}
	p = w->buf;
	for (i = 0; i < n; i++) {
		uint64_t b;
		size_t k;

		if (es == 4) {
			float fl = (float)v[i];
			uint32_t b32;

			memcpy(&b32, &fl, 4);
			b = b32;
		} else {
			memcpy(&b, &v[i], 8);
		}
		for (k = 0; k < es; k++)
			*p++ = (unsigned char)(b >> (8 * k));
	}
	if (fwrite(w->buf, es, n, fp) != n)
		return error("write error on '%s': %s", w->out.path ? w->out.path : "stdout",
			     strerror(errno ? errno : EIO));
	return 0;
}

int cli_writer_put(struct cli_writer *w, const double *v, size_t n)
{
	char s[CLI_VALUE_MAX];
	size_t i;

	w->n += n;
	switch (w->kind) {
	case CLI_OUT_F64:
	case CLI_OUT_F32:
		return put_binary(w, w->out.fp, v, n);
	case CLI_OUT_NPY:
		return put_binary(w, w->spool ? w->spool : w->out.fp, v, n);
	default:
		for (i = 0; i < n; i++) {
			fputs(cli_value_str(s, v[i], w->kind, w->f), w->out.fp);
			fputc('\n', w->out.fp);
		}
		if (ferror(w->out.fp))
			return error("write error on '%s': %s",
				     w->out.path ? w->out.path : "stdout", strerror(errno ? errno : EIO));
		return 0;
	}
}

static int copy_spool(struct cli_writer *w)
{
	char buf[65536];
	size_t k;

	if (fflush(w->spool) || ferror(w->spool) || fseek(w->spool, 0, SEEK_SET))
		return error("temporary file: %s", strerror(errno ? errno : EIO));
	if (fpl_npy_write_header(w->out.fp, FPL_DT_F64, w->n))
		return error("write error on '%s': %s", w->out.path ? w->out.path : "stdout",
			     strerror(errno ? errno : EIO));
	while ((k = fread(buf, 1, sizeof buf, w->spool)) > 0)
		if (fwrite(buf, 1, k, w->out.fp) != k)
			return error("write error on '%s': %s",
				     w->out.path ? w->out.path : "stdout", strerror(errno ? errno : EIO));
	if (ferror(w->spool))
		return error("temporary file: %s", strerror(errno ? errno : EIO));
	return 0;
}

int cli_writer_close(struct cli_writer *w, int ok)
{
	int rc = 0;

	if (ok && w->kind == CLI_OUT_NPY) {
		if (w->spool)
			rc = copy_spool(w);
		else if (w->n != w->known)
			rc = error("internal: npy header announced %llu values, wrote %llu",
				   (unsigned long long)w->known, (unsigned long long)w->n);
	}
	if (w->spool)
		fclose(w->spool);
	free(w->buf);
	rc = cli_output_close(&w->out, ok && !rc) || rc ? -1 : 0;
	memset(w, 0, sizeof *w);
	return rc;
}

/* ------------------------------------------- machine-readable reports */
void cli_json_str(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", fp);
		else if (c == '\t')
			fputs("\\t", fp);
		else if (c < 0x20)
			fprintf(fp, "\\u%04x", c);
		else
			fputc(c, fp);
	}
	fputc('"', fp);
}

void cli_table_begin(struct cli_table *t, FILE *fp, enum cli_report kind,
		     const char *const *cols, int ncols)
{
	int i;

	memset(t, 0, sizeof *t);
	t->fp = fp;
	t->kind = kind;
	t->cols = cols;
	t->ncols = ncols;
	if (kind == CLI_REPORT_TSV) {
		for (i = 0; i < ncols; i++)
			fprintf(fp, "%s%c", cols[i], i + 1 < ncols ? '\t' : '\n');
	} else if (kind == CLI_REPORT_JSON) {
		fputc('[', fp);
	} else {
		for (i = 0; i < ncols; i++)
			cli_table_str(t, cols[i]);
	}
}

/* One cell, already text; `quote` for JSON strings. */
static void table_cell(struct cli_table *t, const char *s, int quote)
{
	if (t->kind == CLI_REPORT_TEXT) {
		if (t->ncells == t->capcells) {
			size_t nc = t->capcells ? 2 * t->capcells : 64;
			char **c = realloc(t->cells, nc * sizeof *c);

			if (!c)
				return;
			t->cells = c;
			t->capcells = nc;
		}
		t->cells[t->ncells++] = strdup(s);
	} else if (t->kind == CLI_REPORT_TSV) {
		fputs(s, t->fp);
		fputc(t->col + 1 < t->ncols ? '\t' : '\n', t->fp);
	} else {
		fputs(t->col ? ", " : (t->rows ? ",\n {" : "\n {"), t->fp);
		cli_json_str(t->fp, t->cols[t->col]);
		fputs(": ", t->fp);
		if (quote)
			cli_json_str(t->fp, s);
		else
			fputs(s, t->fp);
		if (t->col + 1 == t->ncols)
			fputc('}', t->fp);
	}
	if (++t->col == t->ncols) {
		t->col = 0;
		t->rows++;
	}
}

void cli_table_str(struct cli_table *t, const char *s)
{
	table_cell(t, s ? s : "", 1);
}

void cli_table_num(struct cli_table *t, double x)
{
	char buf[CLI_VALUE_MAX];

	cli_shortest(buf, x);
	table_cell(t, buf, !isfinite(x));
}

void cli_table_int(struct cli_table *t, long long v)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%lld", v);
	table_cell(t, buf, 0);
}

void cli_table_end(struct cli_table *t)
{
	size_t i, *width;
	int c;

	if (t->kind == CLI_REPORT_JSON) {
		fputs(t->rows ? "\n]\n" : "]\n", t->fp);
		return;
	}
	if (t->kind != CLI_REPORT_TEXT)
		return;
	width = calloc((size_t)t->ncols, sizeof *width);
	for (i = 0; width && i < t->ncells; i++) {
		size_t l = t->cells[i] ? strlen(t->cells[i]) : 0;

		c = (int)(i % (size_t)t->ncols);
		if (l > width[c])
			width[c] = l;
	}
	for (i = 0; i < t->ncells; i++) {
		const char *s = t->cells[i] ? t->cells[i] : "";

		c = (int)(i % (size_t)t->ncols);
		if (c + 1 == t->ncols || !width)
			fprintf(t->fp, "%s\n", s);
		else
			fprintf(t->fp, "%-*s  ", (int)width[c], s);
		free(t->cells[i]);
	}
	free(width);
	free(t->cells);
	t->cells = NULL;
	t->ncells = t->capcells = 0;
}

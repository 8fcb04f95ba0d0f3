/* SPDX-License-Identifier: MIT */
/*
 * model.c - the accumulation model as data: defaults, the spelling of
 * orders and format specs, validation, and the step count of the draw
 * schedule (accum.h).  Profiles and descriptions are in profile.c.
 *
 * The invariant: fpl_accum_describe (profile.c) prints what
 * fpl_accum_parse_spec and fpl_accum_parse_order read back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accum/accum_internal.h"

void fpl__acc_fmt(fpl_format *f, const char *name)
{
	if (fpl_format_lookup(f, name) != 0)
		fpl_format_ieee(f, 8, 23);	/* unreachable: catalogue names */
}

int fpl_accum_init(fpl_accum_model *m)
{
	if (!m)
		return FPL_EINVAL;
	memset(m, 0, sizeof *m);
	fpl__acc_fmt(&m->a, "fp32");
	m->b = m->a;
	m->prod = m->a;
	m->acc = m->a;
	m->promo = m->a;
	m->out = m->a;
	m->a_load = m->b_load = FPL_LOAD_ROUND;
	m->a_rnd = m->b_rnd = m->prod_rnd = m->acc_rnd = m->out_rnd = FPL_RND_NE;
	m->prod_exact = 1;
	m->order = FPL_ORDER_SEQUENTIAL;
	m->leaf = 1;
	m->block = 128;
	m->pair_block = 0;
	m->pair_long = 0;
	m->fused_w = 0;
	m->fused_rnd = FPL_RND_TZ;
	m->fused_ref = FPL_FUSED_LEAD;
	m->fused_promote = 0;
	m->promo_rnd = FPL_RND_NE;
	return 0;
}

/* The orders: the names parse_order reads, the spellings and meanings
 * `fplab models`, the help and the messages list.  Index = enum value. */
static const fpl_accum_order_entry orders[FPL_ORDER_COUNT] = {
	{ FPL_ORDER_SEQUENTIAL, "sequential", "sequential",
	  "S = S + t_k for k = 0..K-1, one rounding into the accumulator each" },
	{ FPL_ORDER_PAIRWISE, "pairwise", "pairwise[:L]",
	  "a tree: leaves of L terms (default 1) summed sequentially, halves joined "
	  "recursively; C + tree when C is given" },
	{ FPL_ORDER_BLOCKED, "blocked", "blocked:B[:FMT]",
	  "blocks of B terms summed in the accumulator from +0, each added into a promotion "
	  "format (default fp32)" },
	{ FPL_ORDER_KAHAN, "kahan", "kahan",
	  "compensated summation (Kahan), every operation in the accumulator format" },
	{ FPL_ORDER_NEUMAIER, "neumaier", "neumaier",
	  "compensated summation (Neumaier): the larger of s and t decides the correction; "
	  "result s + c" },
	{ FPL_ORDER_FUSED, "fused", "fused:F[:W[:tz|ne[:expsum]]][/P[:FMT]]",
	  "groups of F terms and S added as one multi-term sum, rounded once; W: terms "
	  "aligned to W bits (tz or ne) below the largest leading exponent, or with expsum "
	  "below the largest exponent sum ea+eb+1 (matrix units); /P: blocks of P terms from "
	  "+0, each added into FMT (default fp32:ne)" },
	{ FPL_ORDER_PAIRS, "pairs", "pairs[:B[/L][:FMT]]",
	  "VDPBF16PS: k in pairs, fma of the odd (high) element first, then the even; B: "
	  "chains over blocks of B from +0, each added into FMT; B/L: blocks of L when K > L" },
	{ FPL_ORDER_EVENODD, "evenodd", "evenodd[:B]",
	  "TDPBF16PS: per block of B (default 32) an even and an odd fma chain from +0, then "
	  "S + (even + odd)" },
	{ FPL_ORDER_BLOCK, "block", "block[:FMT[:MODE]]",
	  "block-scaled matrix units (a model): per K-block of the block formats, the exact "
	  "sum of the element products rounded once into FMT (default fp32:ne), times the two "
	  "block scales, added into the accumulator" },
};

const fpl_accum_order_entry *fpl_accum_orders(size_t *count)
{
	if (count)
		*count = FPL_ORDER_COUNT;
	return orders;
}

const char *fpl_accum_order_name(fpl_accum_order o)
{
	return (unsigned)o < FPL_ORDER_COUNT ? orders[o].name : "?";
}

/* A decimal size >= 1 ending at ':' or NUL; *end past it. */
static int parse_size(const char *s, size_t *v, const char **end)
{
	char *e;
	unsigned long long x;

	if (*s < '0' || *s > '9')
		return FPL_EPARSE;
	x = strtoull(s, &e, 10);
	if (x == 0 || (*e && *e != ':') || x > ((size_t)1 << 40))
		return FPL_EPARSE;
	*v = (size_t)x;
	*end = e;
	return 0;
}

/* pairs' "B[/L]" at s into t (both even, L > B); *end after them. */
static int parse_pair_sizes(const char *s, fpl_accum_model *t, const char **end)
{
	const char *slash = strchr(s, '/'), *colon = strchr(s, ':');
	char num[32];
	size_t len;

	if (!slash || (colon && colon < slash))
		return parse_size(s, &t->pair_block, end) || t->pair_block % 2 ? FPL_EPARSE : 0;
	len = (size_t)(slash - s);
	if (len >= sizeof num)
		return FPL_EPARSE;
	memcpy(num, s, len);
	num[len] = 0;
	if (parse_size(num, &t->pair_block, end) || parse_size(slash + 1, &t->pair_long, end)
	    || t->pair_block % 2 || t->pair_long % 2 || t->pair_long <= t->pair_block)
		return FPL_EPARSE;
	return 0;
}

/*
 * fused's ":F[:W[:tz|ne[:expsum]]][/P[:FMT[:MODE]]]" at s into t: the
 * part before '/' names the groups, the part after it the promotion.
 */
static int parse_fused(const char *s, fpl_accum_model *t)
{
	char head[96];
	const char *slash = strchr(s, '/'), *p;
	size_t len = slash ? (size_t)(slash - s) : strlen(s), n;
	int st;

	if (len >= sizeof head)
		return FPL_EPARSE;
	memcpy(head, s, len);
	head[len] = 0;
	t->fused_w = 0;
	t->fused_rnd = FPL_RND_TZ;
	t->fused_ref = FPL_FUSED_LEAD;
	t->fused_promote = 0;
	if (!head[0] || parse_size(head + 1, &t->block, &p))
		return FPL_EPARSE;
	if (*p) {
		if (parse_size(p + 1, &n, &p) || n > FPL_ACCUM_FUSED_WMAX)
			return FPL_EPARSE;
		t->fused_w = (int)n;
	}
	for (int seen_mode = 0, seen_ref = 0; *p; ) {	/* tz|ne and expsum, once each */
		size_t w = strcspn(p + 1, ":");
		if (w == 2 && (!strncmp(p + 1, "ne", 2) || !strncmp(p + 1, "tz", 2)) && !seen_mode++)
			t->fused_rnd = p[1] == 'n' ? FPL_RND_NE : FPL_RND_TZ;
		else if (w == 6 && !strncmp(p + 1, "expsum", 6) && !seen_ref++)
			t->fused_ref = FPL_FUSED_EXPSUM;
		else
			return FPL_EPARSE;
		p += 1 + w;
	}
	if (t->fused_ref == FPL_FUSED_EXPSUM && !t->fused_w)
		return FPL_EPARSE;
	if (!slash)
		return 0;
	if (parse_size(slash + 1, &t->fused_promote, &p) || t->fused_promote % t->block)
		return FPL_EPARSE;
	fpl__acc_fmt(&t->promo, "fp32");
	t->promo_rnd = FPL_RND_NE;
	if (*p && (st = fpl_accum_parse_spec(p + 1, &t->promo, &t->promo_rnd, NULL)))
		return st;
	return 0;
}

int fpl_accum_parse_order(fpl_accum_model *m, const char *s)
{
	fpl_accum_model t;
	const char *p;
	size_t len;
	int o, st;

	if (!m || !s)
		return FPL_EINVAL;
	t = *m;
	len = strcspn(s, ":");
	for (o = 0; o < FPL_ORDER_COUNT; o++)
		if (strlen(orders[o].name) == len && !strncmp(s, orders[o].name, len))
			break;
	if (o == FPL_ORDER_COUNT)
		return FPL_ENOTFOUND;
	t.order = (fpl_accum_order)o;
	p = s + len;
	switch (t.order) {
	case FPL_ORDER_PAIRWISE:
		t.leaf = 1;
		if (*p && (parse_size(p + 1, &t.leaf, &p) || *p))
			return FPL_EPARSE;
		break;
	case FPL_ORDER_EVENODD:
		t.block = 32;
		if (*p && (parse_size(p + 1, &t.block, &p) || *p))
			return FPL_EPARSE;
		break;
	case FPL_ORDER_BLOCKED:
		if (!*p || parse_size(p + 1, &t.block, &p))
			return FPL_EPARSE;
		fpl__acc_fmt(&t.promo, "fp32");
		if (*p && (st = fpl_accum_parse_spec(p + 1, &t.promo, NULL, NULL)))
			return st;
		break;
	case FPL_ORDER_PAIRS:
		t.pair_block = t.pair_long = 0;
		if (!*p)
			break;
		if (parse_pair_sizes(p + 1, &t, &p))
			return FPL_EPARSE;
		fpl__acc_fmt(&t.promo, "fp32");
		if (*p && (st = fpl_accum_parse_spec(p + 1, &t.promo, NULL, NULL)))
			return st;
		break;
	case FPL_ORDER_FUSED:
		if ((st = parse_fused(p, &t)))
			return st;
		break;
	case FPL_ORDER_BLOCK:	/* the inner format and mode, into promo */
		fpl__acc_fmt(&t.promo, "fp32");
		t.promo_rnd = FPL_RND_NE;
		if (*p && (st = fpl_accum_parse_spec(p + 1, &t.promo, &t.promo_rnd, NULL)))
			return st;
		break;
	default:
		if (*p)
			return FPL_EPARSE;
	}
	*m = t;
	return 0;
}

static const struct {
	const char *sw;
	int what;
} switches[] = { { "daz", 0 }, { "ftz", 1 }, { "nosub", 2 }, { "sat", 3 }, { "inf", 4 }, { "nanones", 5 } };

int fpl_accum_parse_spec(const char *s, fpl_format *f, fpl_rnd *rnd, int *given)
{
	char name[FPL_FORMAT_NAME_MAX + 32];
	const char *colon, *q;
	size_t len = strcspn(s ? s : "", "+:");
	fpl_format t;
	fpl_rnd r = rnd ? *rnd : FPL_RND_NE;
	int g = 0, st;

	if (!s || !f || len == 0 || len >= sizeof name)
		return s && f ? FPL_EPARSE : FPL_EINVAL;
	memcpy(name, s, len);
	name[len] = 0;
	if ((st = fpl_format_lookup(&t, name)))
		return st;
	q = s + len;
	while (*q == '+') {
		size_t w = strcspn(q + 1, "+:"), i;
		for (i = 0; i < sizeof switches / sizeof *switches; i++)
			if (strlen(switches[i].sw) == w && !strncmp(q + 1, switches[i].sw, w))
				break;
		switch (i) {
		case 0: t.daz = 1; break;
		case 1: t.subnormal = FPL_SUB_FTZ; break;
		case 2: t.subnormal = FPL_SUB_NO_ROUND; break;
		case 3: t.overflow = FPL_OVF_SATURATE; break;
		case 4: t.overflow = FPL_OVF_INF_ALWAYS; break;
		case 5: t.nan_rule = FPL_NAN_ONES; break;
		default: return FPL_EPARSE;
		}
		q += 1 + w;
	}
	if (fpl_format_finish(&t))
		return FPL_EFORMAT;
	colon = q;
	if (*colon == ':') {
		if (given && !strcmp(colon + 1, "given"))
			g = 1;
		else if (!rnd || fpl_rnd_parse(colon + 1, &r))
			return FPL_EPARSE;
	} else if (*colon) {
		return FPL_EPARSE;
	}
	*f = t;
	if (rnd)
		*rnd = r;
	if (given)
		*given = g;
	return 0;
}

/* ------------------------------------------------------------ checking */

/* ilogb of f's smallest quantum and one above its largest binade. */
static int lo_exp(const fpl_format *f)
{
	return f->emin - f->m;
}

static int hi_exp(const fpl_format *f)
{
	return f->emax + 1;
}

/* The block operands and the block order (accum.h, fpl_accum_check). */
static int check_blocks(const fpl_accum_model *m)
{
	const fpl_format *in = &m->promo, *sa = &m->a_blk.scale;

	if ((m->a_block && fpl_block_check(&m->a_blk, NULL, 0))
	    || (m->b_block && fpl_block_check(&m->b_blk, NULL, 0)))
		return FPL_EFORMAT;
	if ((m->a_block && m->a_load != FPL_LOAD_ROUND)
	    || (m->b_block && m->b_load != FPL_LOAD_ROUND))
		return FPL_EINVAL;
	if (m->order != FPL_ORDER_BLOCK)
		return 0;
	if (!m->a_block || !m->b_block || !m->prod_exact || m->a_blk.shape != FPL_BLOCK_1D
	    || m->b_blk.shape != FPL_BLOCK_1D || m->a_blk.size < 1
	    || m->a_blk.size != m->b_blk.size)
		return FPL_EINVAL;
	/* P_j * X_A exact in binary64: at most 53 bits, within its range */
	if ((in->m + 1) + (sa->m + 1) > 53 || hi_exp(in) + hi_exp(sa) > 1023
	    || lo_exp(in) + lo_exp(sa) < -1074)
		return FPL_EINVAL;
	/* X s exact in binary64 with a tensor scale (dot.c's element values) */
	if ((m->a_blk.tensor_scale && sa->m + 1 + 24 > 53)
	    || (m->b_blk.tensor_scale && m->b_blk.scale.m + 1 + 24 > 53))
		return FPL_EINVAL;
	return 0;
}

/* An IEEE format holding every dequantized value of b (precision and
 * exponent range of element times scale times tensor scale), or
 * binary64 when none narrower does; named after b. */
static void block_values(fpl_format *f, const fpl_block_format *b)
{
	const fpl_format *e = &b->elem, *s = &b->scale;
	int m = e->m + (s->m ? s->m + 1 : 0) + (b->tensor_scale ? 24 : 0);
	int hi = hi_exp(e) + hi_exp(s) + (b->tensor_scale ? 128 : 0);
	int lo = lo_exp(e) + lo_exp(s) + (b->tensor_scale ? -149 : 0), x;

	for (x = 2; x <= 11; x++) {
		int emax = (1 << (x - 1)) - 1, q = 2 - (1 << (x - 1)) - m;
		if (m <= 52 && emax >= hi && q <= lo)
			break;
	}
	if (x > 11 || m > 52)
		fpl_format_ieee(f, 11, 52);
	else
		fpl_format_ieee(f, x, m);
	snprintf(f->name, sizeof f->name, "%.*s", (int)sizeof f->name - 1, b->name);
}

int fpl_accum_set_block(fpl_accum_model *m, int which, const fpl_block_format *b)
{
	fpl_block_format t;

	if (!m || (which != 0 && which != 1))
		return FPL_EINVAL;
	if (!b) {
		if (which) {
			m->b_block = 0;
			fpl__acc_fmt(&m->b, "fp32");
		} else {
			m->a_block = 0;
			fpl__acc_fmt(&m->a, "fp32");
		}
		return 0;
	}
	t = *b;
	if (t.shape == FPL_BLOCK_1D)
		t.axis = which ? 0 : -1;
	if (fpl_block_check(&t, NULL, 0))
		return FPL_EFORMAT;
	if (which) {
		m->b_block = 1;
		m->b_blk = t;
		m->b_load = FPL_LOAD_ROUND;
		block_values(&m->b, &t);
	} else {
		m->a_block = 1;
		m->a_blk = t;
		m->a_load = FPL_LOAD_ROUND;
		block_values(&m->a, &t);
	}
	return 0;
}

static int bad_format(const fpl_format *f)
{
	fpl_format t = *f;
	return fpl_format_finish(&t) != 0;
}

int fpl_accum_check(const fpl_accum_model *m, const fpl_state *st)
{
	const fpl_rnd r[] = { m ? m->a_rnd : 0, m ? m->b_rnd : 0, m ? m->prod_rnd : 0,
			      m ? m->acc_rnd : 0, m ? m->out_rnd : 0 };
	size_t i;

	if (!m || (unsigned)m->order >= FPL_ORDER_COUNT)
		return FPL_EINVAL;
	for (i = 0; i < sizeof r / sizeof *r; i++) {
		if ((unsigned)r[i] >= FPL_RND_COUNT)
			return FPL_EINVAL;
		if (r[i] == FPL_RND_SP && st && (st->sr_bits < 1 || st->sr_bits > 32))
			return FPL_EINVAL;
	}
	if (m->leaf == 0 || m->block == 0 || m->pair_block % 2 || m->pair_long % 2
	    || (m->pair_long && (!m->pair_block || m->pair_long <= m->pair_block))
	    || m->fused_w < 0 || m->fused_w > FPL_ACCUM_FUSED_WMAX
	    || (m->fused_rnd != FPL_RND_TZ && m->fused_rnd != FPL_RND_NE)
	    || (m->fused_ref != FPL_FUSED_LEAD
		&& (m->fused_ref != FPL_FUSED_EXPSUM || !m->fused_w || !m->prod_exact))
	    || (m->fused_promote && m->fused_promote % m->block)
	    || (unsigned)m->promo_rnd >= FPL_RND_COUNT
	    || (m->promo_rnd == FPL_RND_SP && st && (st->sr_bits < 1 || st->sr_bits > 32)))
		return FPL_EINVAL;
	if (bad_format(&m->a) || bad_format(&m->b) || bad_format(&m->prod) || bad_format(&m->acc)
	    || bad_format(&m->promo) || bad_format(&m->out))
		return FPL_EFORMAT;
	return check_blocks(m);
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

uint64_t fpl_accum_steps(const fpl_accum_model *m, size_t k, int sum)
{
	uint64_t K = k, P = (!sum && !m->prod_exact) ? K : 0, Q;

	switch (m->order) {
	case FPL_ORDER_PAIRWISE: {
		uint64_t nl = ceil_div(K, m->leaf);
		Q = K + (nl ? nl : 1);
		break;
	}
	case FPL_ORDER_BLOCKED: Q = K + ceil_div(K, m->block); break;
	case FPL_ORDER_KAHAN: Q = 4 * K; break;
	case FPL_ORDER_NEUMAIER: Q = 4 * K + 1; break;
	case FPL_ORDER_FUSED:
		Q = ceil_div(K, m->block) + (m->fused_promote ? ceil_div(K, m->fused_promote) : 0);
		break;
	case FPL_ORDER_PAIRS:
		Q = 2 * ceil_div(K, 2)
		    + (m->pair_block ? ceil_div(K, fpl__pair_block(m, K)) : 0);
		break;
	case FPL_ORDER_EVENODD: Q = K + 2 * ceil_div(K, m->block); break;
	case FPL_ORDER_BLOCK:
		Q = 2 * (m->a_blk.size > 0 ? ceil_div(K, (uint64_t)m->a_blk.size) : 0) + 1;
		break;
	default: Q = K; break;
	}
	return P + Q + 1;
}

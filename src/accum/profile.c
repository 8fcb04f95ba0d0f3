/* SPDX-License-Identifier: MIT */
/*
 * profile.c - the named profiles (hardware dot-product units as models)
 * and fpl_accum_describe, which prints a model in the CLI's spelling.
 *
 * The invariant: a model equal to a profile describes itself as
 * "--profile NAME"; any other as options that fpl_accum_parse_spec and
 * fpl_accum_parse_order (model.c) read back into the same model.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "accum/accum_internal.h"
#include "util/sbuf.h"

/* Primary fields equal (the name aside). */
static int same_format(const fpl_format *x, const fpl_format *y)
{
	return x->e == y->e && x->m == y->m && x->bias == y->bias && x->subnormal == y->subnormal
	       && x->daz == y->daz && x->specials == y->specials && x->overflow == y->overflow
	       && x->tininess == y->tininess && x->nan_rule == y->nan_rule
	       && x->explim == y->explim && x->emax_limit_set == y->emax_limit_set
	       && (!x->emax_limit_set || x->emax_limit == y->emax_limit);
}

/* ------------------------------------------------------------ profiles */

static const fpl_accum_profile_entry profiles[] = {
	{ "fp32-fma", "fp32 inputs as given, exact products, fp32 accumulator, ne, sequential "
		      "from +0: a C fmaf loop" },
	{ "fp32-mul-add", "fp32 inputs as given, products rounded to fp32 (ne), then an fp32 "
			  "ne add, sequential" },
	{ "avx512bf16", "VDPBF16PS chain: bf16 inputs as given, k in pairs, odd element first, "
			"fp32 fma with DAZ/FTZ/RNE per element" },
	{ "amx-bf16", "TDPBF16PS: per 32 k, even and odd fp32 fma chains (DAZ/FTZ/RNE) from +0, "
		      "then C + (even + odd)" },
	{ "onednn-bf16", "oneDNN 2.6 bf16 matmul on AVX512_CORE_BF16 (no AMX): VDPBF16PS chains "
			 "over blocks of 512 k (K <= 1024) or 1024 k (K > 1024) from +0, block "
			 "results added in IEEE fp32 (ne)" },
	{ "fp16-fma", "fp16 inputs as given, exact products, IEEE fp16 accumulator (subnormals "
		      "kept), ne, sequential from +0: a VFMADD231PH loop" },
	{ "h100-bf16", "NVIDIA H100 tensor cores, bf16 GEMM with fp32 output (cuBLAS): groups "
		       "of 16 products and the sum aligned to 27 bits below the largest "
		       "exponent sum, truncated, the group sum truncated into fp32 (overflow "
		       "still inf): fused:16:27:tz:expsum, recorded on the GPU" },
	{ "h100-fp16", "NVIDIA H100 tensor cores, fp16 GEMM with fp32 output: as h100-bf16 "
		       "with fp16 inputs" },
	{ "h100-fp8", "NVIDIA H100 fp8 GEMM (torch._scaled_mm, fp32 output, use_fast_accum "
		      "off): e4m3fn inputs, groups of 32 products aligned to 15 bits, truncated "
		      "into a 14-bit (e8m13) sum; every 128 k the block is added into fp32 (ne): "
		      "fused:32:15:tz:expsum/128:fp32:ne" },
	{ "h100-fp8-fast", "as h100-fp8 with use_fast_accum on: one e8m13 chain over all of "
			   "K, no promotion" },
};
#define NPROFILES (sizeof profiles / sizeof *profiles)

const fpl_accum_profile_entry *fpl_accum_profiles(size_t *count)
{
	if (count)
		*count = NPROFILES;
	return profiles;
}

/* How each profile sets the fields that differ from fpl_accum_init's
 * model with both inputs taken as given. */
static void build_fp32_mul_add(fpl_accum_model *t)
{
	t->prod_exact = 0;
}

/* bf16 operands; the fp32 unit reads denormals as zero (DAZ on every
 * operand of every step) and flushes tiny results (FTZ, tininess after
 * rounding), RNE */
static void bf16_unit(fpl_accum_model *t, fpl_accum_order order)
{
	fpl__acc_fmt(&t->a, "bf16");
	t->b = t->a;
	t->acc.daz = 1;
	t->acc.subnormal = FPL_SUB_FTZ;
	fpl_format_finish(&t->acc);
	t->order = order;
	t->block = 32;
}

static void build_avx512bf16(fpl_accum_model *t)
{
	bf16_unit(t, FPL_ORDER_PAIRS);
}

static void build_amx_bf16(fpl_accum_model *t)
{
	bf16_unit(t, FPL_ORDER_EVENODD);
}

/* oneDNN 2.6's brgemm matmul (brg:avx512_core_bf16): K split into blocks
 * of 512 when K <= 1024, of 1024 when K > 1024 (measured with `fplab gemm
 * --backend onednn` at K = 1..8192, M = N = 16..256, 1 and 2 threads),
 * each block's VDPBF16PS chain from +0, the block results added by an
 * ordinary fp32 add (promo = IEEE binary32, default MXCSR) */
static void build_onednn_bf16(fpl_accum_model *t)
{
	bf16_unit(t, FPL_ORDER_PAIRS);
	t->pair_block = 512;
	t->pair_long = 1024;
}

/* AVX512-FP16: binary16 throughout, subnormals kept, no DAZ or FTZ, one
 * rounding per fma, the x86 NaN rule (the catalogue's fp16); the order
 * sequential from the init */
static void build_fp16_fma(fpl_accum_model *t)
{
	fpl__acc_fmt(&t->a, "fp16");
	t->b = t->a;
	t->acc = t->a;
}

/* NVIDIA's tensor cores as recorded on an H100 (tools/tensorcore_probe.py,
 * tests/data/h100, fplab-models(7)): groups of F products and the running
 * sum aligned to W bits below the largest exponent sum (expsum),
 * truncated, summed exactly, the sum truncated into acc; an overflow
 * still gives inf (+inf switch) */
static void tensor_core(fpl_accum_model *t, const char *in, const char *acc, size_t F, int W)
{
	fpl__acc_fmt(&t->a, in);
	t->b = t->a;
	fpl__acc_fmt(&t->acc, acc);
	t->acc.overflow = FPL_OVF_INF_ALWAYS;
	t->acc.nan_rule = FPL_NAN_ONES;
	fpl_format_finish(&t->acc);
	t->acc_rnd = FPL_RND_TZ;
	t->order = FPL_ORDER_FUSED;
	t->block = F;
	t->fused_w = W;
	t->fused_rnd = FPL_RND_TZ;
	t->fused_ref = FPL_FUSED_EXPSUM;
}

static void build_h100_bf16(fpl_accum_model *t)
{
	tensor_core(t, "bf16", "fp32", 16, 27);
}

static void build_h100_fp16(fpl_accum_model *t)
{
	tensor_core(t, "fp16", "fp32", 16, 27);
}

/* cuBLAS's fp8 kernels without fast accumulation add the tensor cores'
 * 14-bit partial sum into an fp32 register every 128 k (4 wgmma of 32) */
static void build_h100_fp8(fpl_accum_model *t)
{
	tensor_core(t, "e4m3fn", "e8m13", 32, 15);
	t->fused_promote = 128;
	fpl__acc_fmt(&t->promo, "fp32");	/* a CUDA-core fp32 add: its NaN too */
	t->promo.nan_rule = FPL_NAN_ONES;
	fpl_format_finish(&t->promo);
	t->promo_rnd = FPL_RND_NE;
}

static void build_h100_fp8_fast(fpl_accum_model *t)
{
	tensor_core(t, "e4m3fn", "e8m13", 32, 15);
}

/* The builders, in the order of profiles[] (fp32-fma is the plain
 * model): the names are written once, in that table. */
static void (*const builders[])(fpl_accum_model *t) = {
	NULL, build_fp32_mul_add, build_avx512bf16, build_amx_bf16, build_onednn_bf16,
	build_fp16_fma, build_h100_bf16, build_h100_fp16, build_h100_fp8, build_h100_fp8_fast,
};
_Static_assert(sizeof builders / sizeof *builders == NPROFILES,
	       "one builder per profile, in the order of profiles[]");

int fpl_accum_profile(fpl_accum_model *m, const char *name)
{
	fpl_accum_model t;
	size_t i;

	if (!m || !name)
		return FPL_EINVAL;
	for (i = 0; i < NPROFILES; i++)
		if (!strcmp(name, profiles[i].name))
			break;
	if (i == NPROFILES)
		return FPL_ENOTFOUND;
	fpl_accum_init(&t);
	t.a_load = t.b_load = FPL_LOAD_GIVEN;
	if (builders[i])
		builders[i](&t);
	*m = t;
	return 0;
}

/* The profile m equals, or -1.  Parameters an order does not read are
 * not compared. */
static int which_profile(const fpl_accum_model *m)
{
	size_t i;

	for (i = 0; i < NPROFILES; i++) {
		fpl_accum_model p;
		fpl_accum_profile(&p, profiles[i].name);
		if (!m->a_block && !m->b_block && same_format(&p.a, &m->a) && same_format(&p.b, &m->b)
		    && p.a_load == m->a_load
		    && p.b_load == m->b_load && p.prod_exact == m->prod_exact
		    && (p.prod_exact || (same_format(&p.prod, &m->prod) && p.prod_rnd == m->prod_rnd))
		    && same_format(&p.acc, &m->acc) && p.acc_rnd == m->acc_rnd
		    && p.order == m->order && !m->out_set
		    && (p.order != FPL_ORDER_EVENODD || p.block == m->block)
		    && (p.order != FPL_ORDER_PAIRS
			|| (p.pair_block == m->pair_block && p.pair_long == m->pair_long
			    && (!p.pair_block || same_format(&p.promo, &m->promo))))
		    && (p.order != FPL_ORDER_FUSED
			|| (p.block == m->block && p.fused_w == m->fused_w
			    && p.fused_rnd == m->fused_rnd && p.fused_ref == m->fused_ref
			    && p.fused_promote == m->fused_promote
			    && (!p.fused_promote || (same_format(&p.promo, &m->promo)
						     && p.promo_rnd == m->promo_rnd)))))
			return (int)i;
	}
	return -1;
}

/* ---------------------------------------------------------- describing */

/* NAME[+switches], the switches being those that differ from the
 * catalogue's NAME ("+custom" for differences a switch cannot say). */
static void put_format(fpl__sbuf *b, const fpl_format *f)
{
	fpl_format c;

	fpl__sbuf_put(b, "%s", f->name);
	if (fpl_format_lookup(&c, f->name))
		return;
	if (f->daz && !c.daz) {
		fpl__sbuf_put(b, "+daz");
		c.daz = 1;
	}
	if (f->subnormal != c.subnormal) {
		fpl__sbuf_put(b, f->subnormal == FPL_SUB_FTZ ? "+ftz" : f->subnormal == FPL_SUB_NO_ROUND
			? "+nosub" : "+custom");
		c.subnormal = f->subnormal;
	}
	if (f->overflow == FPL_OVF_SATURATE && c.overflow != FPL_OVF_SATURATE) {
		fpl__sbuf_put(b, "+sat");
		c.overflow = FPL_OVF_SATURATE;
	}
	if (f->overflow == FPL_OVF_INF_ALWAYS && c.overflow != FPL_OVF_INF_ALWAYS) {
		fpl__sbuf_put(b, "+inf");
		c.overflow = FPL_OVF_INF_ALWAYS;
	}
	if (f->nan_rule == FPL_NAN_ONES && c.nan_rule != FPL_NAN_ONES) {
		fpl__sbuf_put(b, "+nanones");
		c.nan_rule = FPL_NAN_ONES;
	}
	if (!same_format(&c, f))
		fpl__sbuf_put(b, "+custom");
}

static void put_spec(fpl__sbuf *b, const fpl_format *f, fpl_rnd r, int given)
{
	put_format(b, f);
	fpl__sbuf_put(b, ":%s", given ? "given" : fpl_rnd_name(r));
}

/* An input's spec: a block format by its name (with its fields), which
 * the CLI's -f reads back, else put_spec. */
static void put_input(fpl__sbuf *b, const fpl_accum_model *m, int which)
{
	const fpl_block_format *k = which ? &m->b_blk : &m->a_blk;

	if (!(which ? m->b_block : m->a_block)) {
		put_spec(b, which ? &m->b : &m->a, which ? m->b_rnd : m->a_rnd,
			 (which ? m->b_load : m->a_load) == FPL_LOAD_GIVEN);
		return;
	}
	fpl__sbuf_put(b, "%s:%s", k->name, fpl_rnd_name(which ? m->b_rnd : m->a_rnd));
}

static void put_order(fpl__sbuf *b, const fpl_accum_model *m)
{
	fpl__sbuf_put(b, "%s", fpl_accum_order_name(m->order));
	switch (m->order) {
	case FPL_ORDER_PAIRWISE:
		fpl__sbuf_put(b, ":%zu", m->leaf);
		break;
	case FPL_ORDER_EVENODD:
		fpl__sbuf_put(b, ":%zu", m->block);
		break;
	case FPL_ORDER_BLOCKED:
		fpl__sbuf_put(b, ":%zu:", m->block);
		put_format(b, &m->promo);
		break;
	case FPL_ORDER_PAIRS:
		if (m->pair_block) {
			fpl__sbuf_put(b, ":%zu", m->pair_block);
			if (m->pair_long)
				fpl__sbuf_put(b, "/%zu", m->pair_long);
			fpl__sbuf_put(b, ":");
			put_format(b, &m->promo);
		}
		break;
	case FPL_ORDER_BLOCK:
		fpl__sbuf_put(b, ":");
		put_spec(b, &m->promo, m->promo_rnd, 0);
		break;
	case FPL_ORDER_FUSED:
		fpl__sbuf_put(b, ":%zu", m->block);
		if (m->fused_w)
			fpl__sbuf_put(b, ":%d:%s%s", m->fused_w, fpl_rnd_name(m->fused_rnd),
				      m->fused_ref == FPL_FUSED_EXPSUM ? ":expsum" : "");
		if (m->fused_promote) {
			fpl__sbuf_put(b, "/%zu:", m->fused_promote);
			put_spec(b, &m->promo, m->promo_rnd, 0);
		}
		break;
	default:
		break;
	}
}

/* Part P of m (fpl_accum_describe_part) appended to b. */
static void put_part(fpl__sbuf *b, const fpl_accum_model *m, fpl_accum_part p)
{
	switch (p) {
	case FPL_PART_A:
	case FPL_PART_B:
		put_input(b, m, p == FPL_PART_B);
		break;
	case FPL_PART_PROD:
		if (m->prod_exact)
			fpl__sbuf_put(b, "exact");
		else
			put_spec(b, &m->prod, m->prod_rnd, 0);
		break;
	case FPL_PART_ACC:
		put_spec(b, &m->acc, m->acc_rnd, 0);
		break;
	case FPL_PART_ORDER:
		put_order(b, m);
		break;
	case FPL_PART_OUT:
		if (m->out_set)
			put_spec(b, &m->out, m->out_rnd, 0);
		else
			fpl__sbuf_put(b, "none");
		break;
	}
}

int fpl_accum_describe_part(const fpl_accum_model *m, fpl_accum_part part, char *buf,
			    size_t size)
{
	fpl__sbuf b = { buf, size, 0 };

	if (!m || !buf || size == 0 || part < FPL_PART_A || part > FPL_PART_OUT)
		return FPL_EINVAL;
	buf[0] = 0;
	put_part(&b, m, part);
	return b.len < size ? 0 : FPL_ERANGE;
}

int fpl_accum_describe(const fpl_accum_model *m, char *buf, size_t size)
{
	fpl__sbuf b = { buf, size, 0 };
	int p;

	if (!m || !buf || size == 0)
		return FPL_EINVAL;
	buf[0] = 0;
	p = which_profile(m);
	if (p >= 0) {
		fpl__sbuf_put(&b, "--profile %s", profiles[p].name);
	} else {
		int ab = same_format(&m->a, &m->b) && !strcmp(m->a.name, m->b.name)
			 && m->a_load == m->b_load && m->a_block == m->b_block
			 && (m->a_load == FPL_LOAD_GIVEN || m->a_rnd == m->b_rnd);
		fpl__sbuf_put(&b, ab ? "-f " : "--a-format ");
		put_part(&b, m, FPL_PART_A);
		if (!ab) {
			fpl__sbuf_put(&b, " --b-format ");
			put_part(&b, m, FPL_PART_B);
		}
		fpl__sbuf_put(&b, " --prod ");
		put_part(&b, m, FPL_PART_PROD);
		fpl__sbuf_put(&b, " --acc ");
		put_part(&b, m, FPL_PART_ACC);
		fpl__sbuf_put(&b, " --order ");
		put_part(&b, m, FPL_PART_ORDER);
		if (m->out_set) {
			fpl__sbuf_put(&b, " --out-format ");
			put_part(&b, m, FPL_PART_OUT);
		}
	}
	return b.len < size ? 0 : FPL_ERANGE;
}

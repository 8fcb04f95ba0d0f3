/* SPDX-License-Identifier: MIT */
/*
 * hist.c - the life of an fpl_hist: configuration, the optional scan pass
 * (APS), adding values in chunks through the engine's array rounding,
 * finishing (overflow and event accounting, suggestions) and merging.
 *
 * Invariant: values reach the engine in chunks of at most HIST_CHUNK, in
 * storage order, so element j of a tensor uses random draw j of the
 * configured stream whatever the caller's chunking; MX blocks never
 * straddle an engine call because whole blocks are gathered first.
 * Every cast of an element is an engine call on h->cfg.st, so its
 * count[] is the run's event count.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/array.h>
#include <fplab/error.h>
#include <fplab/kernels.h>
#include <fplab/number.h>
#include <fplab/ops.h>

#include "hist/hist_internal.h"

/* Index of the overflow flag in fpl_state.count. */
#define OVF_INDEX 2

FPL_API void fpl_hist_config_init(fpl_hist_config *cfg, const fpl_format *fmt)
{
	memset(cfg, 0, sizeof *cfg);
	if (fmt)
		cfg->fmt = *fmt;
	cfg->rnd = FPL_RND_NE;
	fpl_state_init(&cfg->st, 0);
	cfg->scaling = FPL_HSCALE_FIXED;
	cfg->scale = 1.0;
	cfg->mx_block = 32;
}

static int exp2_exact(double s, int *k)
{
	int e;
	double f = frexp(s, &e);
	if (f != 0.5)
		return 0;
	*k = e - 1;
	return 1;
}

FPL_API int fpl_hist_init(fpl_hist *h, const fpl_hist_config *cfg)
{
	if (!h || !cfg)
		return FPL_EINVAL;
	memset(h, 0, sizeof *h);
	h->cfg = *cfg;
	if ((unsigned)cfg->rnd >= FPL_RND_COUNT)
		return FPL_EINVAL;
	if (cfg->scaling == FPL_HSCALE_FIXED && !(cfg->scale > 0 && isfinite(cfg->scale)))
		return FPL_EINVAL;
	if (cfg->scaling == FPL_HSCALE_MX && (cfg->mx_block < 1 || cfg->mx_block > HIST_MX_MAX))
		return FPL_EINVAL;
	if ((unsigned)cfg->scaling > FPL_HSCALE_MX)
		return FPL_EINVAL;
	memset(h->cfg.st.count, 0, sizeof h->cfg.st.count);
	h->cfg.st.flags = 0;
	h->cfg.st.counter = 0;
	h->amin = INFINITY;
	h->scale = cfg->scaling == FPL_HSCALE_FIXED ? cfg->scale : 1.0;
	h->scale_pow2 = exp2_exact(h->scale, &h->scale_log2);
	if (!h->scale_pow2)
		h->scale_log2 = 0;
	h->scale_varies = cfg->scaling == FPL_HSCALE_MX;
	const fpl_format *f = &h->cfg.fmt;
	h->e_minnorm = f->emin;
	h->e_minsub = f->subnormal == FPL_SUB_YES ? f->emin - f->m : f->emin;
	h->e_max = f->emax;
	h->lo = h->in_lo = 1;
	h->hi = h->in_hi = 0;
	h->xs = malloc(HIST_CHUNK * sizeof(double));
	h->y = malloc(HIST_CHUNK * sizeof(double));
	h->xf = malloc(HIST_F32_CHUNK * sizeof(float));
	h->yf = malloc(HIST_F32_CHUNK * sizeof(float));
	h->mxbuf = cfg->scaling == FPL_HSCALE_MX ? malloc(HIST_CHUNK * sizeof(double)) : NULL;
	h->mxk = cfg->scaling == FPL_HSCALE_MX ? malloc(HIST_CHUNK * sizeof(int)) : NULL;
	if (!h->xs || !h->y || !h->xf || !h->yf ||
	    (cfg->scaling == FPL_HSCALE_MX && (!h->mxbuf || !h->mxk))) {
		fpl_hist_release(h);
		return FPL_ENOMEM;
	}
	return 0;
}

FPL_API void fpl_hist_release(fpl_hist *h)
{
	if (!h)
		return;
	free(h->xs);
	free(h->y);
	free(h->xf);
	free(h->yf);
	free(h->mxbuf);
	free(h->mxk);
	free(h->mxinx);
	free(h->wide);
	h->wide = NULL;
	h->capwide = 0;
	h->mxk = NULL;
	h->mxinx = NULL;
	h->mxninx = h->mxcapinx = 0;
	h->xs = h->y = h->mxbuf = NULL;
	h->xf = h->yf = NULL;
}

FPL_API int fpl_hist_needs_scan(const fpl_hist *h)
{
	return h->cfg.scaling == FPL_HSCALE_APS && !h->scanned;
}

FPL_API void fpl_hist_scan(fpl_hist *h, const double *x, size_t n)
{
	double mx = h->amax, mn = h->amin;
	for (size_t i = 0; i < n; i++) {
		double a = fabs(x[i]);
		if (a == 0 || !isfinite(a))
			continue;
		mx = a > mx ? a : mx;
		mn = a < mn ? a : mn;
	}
	h->amax = mx;
	h->amin = mn;
}

FPL_API void fpl_hist_scan_f32(fpl_hist *h, const float *x, size_t n)
{
	float mx = (float)h->amax, mn = h->amin > 3e38 ? INFINITY : (float)h->amin;
	for (size_t i = 0; i < n; i++) {
		float a = fabsf(x[i]);
		if (a == 0 || !isfinite(a))
			continue;
		mx = a > mx ? a : mx;
		mn = a < mn ? a : mn;
	}
	h->amax = mx;
	h->amin = mn;
}

/* After the scan: settle the APS scale. */
static void aps_settle(fpl_hist *h)
{
	if (h->cfg.scaling != FPL_HSCALE_APS || h->scanned)
		return;
	h->scanned = 1;
	int k = h->amax > 0 ? fpl_hist_aps_k(&h->cfg.fmt, h->cfg.rnd, h->amax) : 0;
	h->scale_log2 = k;
	h->scale_pow2 = 1;
	h->scale = ldexp(1.0, k);
}

/* The exponent bin of an exact number: its binade, clamped to the bins
 * (numbers beyond binary64's range count in the end bins). */
static int bin_of(const fpl_wide *w)
{
	int64_t e = fpl_wide_ilogb(w);
	return e < FPL_HIST_EMIN ? FPL_HIST_EMIN : e > FPL_HIST_EMAX ? FPL_HIST_EMAX : (int)e;
}

/* Multiply by 2^k exactly where binary64 allows (k may exceed 1023). */
static void scale_pow2(double *v, const double *x, size_t n, int k)
{
	int a = k / 2, b = k - a;
	double sa = ldexp(1.0, a), sb = ldexp(1.0, b);
	for (size_t i = 0; i < n; i++)
		v[i] = x[i] * sa * sb;
}

/* x (finite nonzero) as an exact fpl_wide: |x| = M 2^(e-53) with M the
 * 53-bit integer significand, = (M 2^11) 2^64 2^(e-128). */
static fpl_wide wide_of(double x)
{
	int e;
	double f = frexp(fabs(x), &e);
	fpl_wide w = { signbit(x) != 0, (int64_t)e - 128, (uint64_t)ldexp(f, 53) << 11, 0, 0 };
	return w;
}

/* |v| of *w to within a few binary64 roundings: +inf beyond binary64's
 * range, 0 below it. */
static double wide_abs(const fpl_wide *w)
{
	int64_t e = w->exp + 64;
	if (!w->hi && !w->lo)
		return 0;
	if (e > 1100)
		return INFINITY;
	if (e < -1300)
		return 0;
	return ldexp((double)w->hi, (int)e) + ldexp((double)w->lo, (int)w->exp);
}

/*
 * One value binary64 could not hold (a decimal read from text, or a
 * product x*s beyond binary64's range), unscaled *wx, scaled *wv:
 * classified like hist_classify_f64 does a binary64 one, but cast once
 * from the exact number (fpl_round_wide), binned by its exact binade and
 * measured against the exact number; the absolute error is the relative
 * one times |v| rounded to binary64 (within a few roundings of |y - v|;
 * |y| when |v| is below binary64's range, none when above).  xnear is the
 * nearest binary64 of x, used only for the extremes amax/amin.
 */
static void classify_wide(fpl_hist *h, double xnear, const fpl_wide *wx, const fpl_wide *wv)
{
	double ax = fabs(xnear);
	double y = fpl_round_wide(&h->cfg.fmt, wv, h->cfg.rnd, &h->cfg.st);
	double ay = fabs(y);

	h->count++;
	if (ax > 0 && isfinite(ax)) {
		h->amax = ax > h->amax ? ax : h->amax;
		h->amin = ax < h->amin ? ax : h->amin;
	}
	h->hist_in[bin_of(wx) - FPL_HIST_EMIN]++;
	h->hist[bin_of(wv) - FPL_HIST_EMIN]++;
	if (!isfinite(ay)) {
		h->ovf_direct++;
		return;
	}
	if (ay == 0)
		h->became_zero++;
	else if (ay < h->cfg.fmt.min_normal)
		h->subnormal++;
	else
		h->normal++;
	double r = fpl_wide_relerr(wv, y);
	h->err_n++;
	h->err_sum += r;
	h->err_sumsq += r * r;
	if (r > h->err_max)
		h->err_max = r;
	double av = wide_abs(wv);
	if (isfinite(av)) {
		double d = av == 0 ? ay : r * av;
		h->abs_n++;
		h->abs_sum += d;
		h->abs_sumsq += d * d;
		if (d > h->abs_max)
			h->abs_max = d;
	}
}

/*
 * The exact numbers to cast in x[0..n) (scaled into h->xs): ix (pos minus
 * base indexes x) and every finite nonzero x whose product xs binary64
 * cannot hold (0 or +-inf), merged in order into h->wide.  Sets *out to
 * the list (ix itself when there are no such products) and *nout to its
 * length; returns 0 or FPL_ENOMEM.
 */
static int exact_list(fpl_hist *h, const double *x, size_t n, const fpl_inexact *ix,
		      size_t nix, size_t base, const fpl_inexact **out, size_t *nout)
{
	size_t extra = 0;
	for (size_t i = 0; i < n; i++) {
		double av = fabs(h->xs[i]), ax = fabs(x[i]);
		extra += !(av > 0 && av < INFINITY) && ax > 0 && ax < INFINITY;
	}
	*out = ix;
	*nout = nix;
	if (!extra)
		return 0;
	if (nix + extra > h->capwide) {
		fpl_inexact *w = realloc(h->wide, (nix + extra) * sizeof *w);
		if (!w)
			return FPL_ENOMEM;
		h->wide = w;
		h->capwide = nix + extra;
	}
	size_t k = 0, m = 0;
	for (size_t i = 0; i < n; i++) {
		if (k < nix && ix[k].pos - base == i) {
			h->wide[m++] = ix[k++];
			continue;
		}
		double av = fabs(h->xs[i]), ax = fabs(x[i]);
		if (!(av > 0 && av < INFINITY) && ax > 0 && ax < INFINITY) {
			h->wide[m].pos = base + i;
			h->wide[m++].w = wide_of(x[i]);
		}
	}
	*out = h->wide;
	*nout = m;
	return 0;
}

/*
 * Cast h->xs[0..n) (x scaled) and classify, in storage order: the runs of
 * binary64 values through the array engine, each inexact number ix[] (pos
 * minus base is its index in x) and each product binary64 cannot hold
 * (exact_list) on its own from its exact value, scaled by 2^k (k =
 * blockk[pos / B] for MX blocks, else the configured scale).  Element j
 * takes random draw j either way: the array call advances the state's
 * counter by its length and fpl_round_wide by one.
 */
static int cast_segments(fpl_hist *h, const double *x, size_t n, const fpl_inexact *ix,
			 size_t nix, size_t base, const int *blockk)
{
	size_t a = 0;
	int rc = exact_list(h, x, n, ix, nix, base, &ix, &nix);
	if (rc)
		return rc;
	for (size_t k = 0; k <= nix; k++) {
		size_t b = k < nix ? ix[k].pos - base : n;
		if (b > a) {
			rc = fpl_round_array(&h->cfg.fmt, h->y + a, h->xs + a, b - a, h->cfg.rnd,
					     &h->cfg.st);
			if (rc)
				return rc;
			hist_classify_f64(h, x + a, h->xs + a, h->y + a, b - a);
		}
		if (k == nix)
			break;
		fpl_wide wv = ix[k].w;
		if (blockk)
			wv.exp += blockk[b / (size_t)h->cfg.mx_block];
		else if (h->scale_pow2)
			wv.exp += h->scale_log2;
		else
			fpl_wide_scale(&wv, h->scale);
		classify_wide(h, x[b], &ix[k].w, &wv);
		a = b + 1;
	}
	return 0;
}

/* FIXED or APS scaling in binary64, n <= HIST_CHUNK. */
static int add_plain64(fpl_hist *h, const double *x, size_t n, const fpl_inexact *ix,
		       size_t nix, size_t base)
{
	if (h->scale_pow2)
		scale_pow2(h->xs, x, n, h->scale_log2);
	else
		for (size_t i = 0; i < n; i++)
			h->xs[i] = x[i] * h->scale;
	return cast_segments(h, x, n, ix, nix, base, NULL);
}

/* MX: n is a multiple of the block size except at the very end.  A block's
 * scale comes from the binary64 values (an inexact number by its nearest
 * binary64); each element is then cast exactly as x / X. */
static int add_mx_blocks(fpl_hist *h, const double *x, size_t n, const fpl_inexact *ix,
			 size_t nix)
{
	size_t B = (size_t)h->cfg.mx_block;
	int emax = h->cfg.fmt.emax;
	for (size_t b = 0; b < n; b += B) {
		size_t e = b + B < n ? b + B : n;
		double amax = 0;
		for (size_t i = b; i < e; i++) {
			double a = fabs(x[i]);
			if (isfinite(a) && a > amax)
				amax = a;
		}
		int sx = 0;
		if (amax > 0) {
			sx = ilogb(amax) - emax;
			sx = sx < -127 ? -127 : sx > 127 ? 127 : sx;
		}
		h->mxk[b / B] = -sx;
		double inv = ldexp(1.0, -sx);
		for (size_t i = b; i < e; i++)
			h->xs[i] = x[i] * inv;
		h->mx_blocks++;
	}
	return cast_segments(h, x, n, ix, nix, 0, h->mxk);
}

/* Keep the inexact numbers of the values gathered in mxbuf, pos relative to
 * mxbuf. */
static int mx_note(fpl_hist *h, const fpl_inexact *ix, size_t nix, size_t shift)
{
	for (size_t k = 0; k < nix; k++) {
		if (h->mxninx == h->mxcapinx) {
			size_t cap = h->mxcapinx ? 2 * h->mxcapinx : 16;
			fpl_inexact *v = realloc(h->mxinx, cap * sizeof *v);
			if (!v)
				return FPL_ENOMEM;
			h->mxinx = v;
			h->mxcapinx = cap;
		}
		h->mxinx[h->mxninx] = ix[k];
		h->mxinx[h->mxninx++].pos += shift;
	}
	return 0;
}

static int add_mx(fpl_hist *h, const double *x, size_t n, const fpl_inexact *ix, size_t nix)
{
	size_t B = (size_t)h->cfg.mx_block, per = HIST_CHUNK / B * B, off = 0;
	while (n > 0) {
		size_t take = per - h->mxfill < n ? per - h->mxfill : n;
		size_t k0 = 0;
		while (k0 < nix && ix[k0].pos < off + take)
			k0++;
		int rc = mx_note(h, ix, k0, h->mxfill - off);
		if (rc)
			return rc;
		if (k0)	/* ix may be NULL when nix == 0 */
			ix += k0;
		nix -= k0;
		memcpy(h->mxbuf + h->mxfill, x, take * sizeof *x);
		h->mxfill += take;
		x += take;
		n -= take;
		off += take;
		if (h->mxfill == per) {
			rc = add_mx_blocks(h, h->mxbuf, per, h->mxinx, h->mxninx);
			if (rc)
				return rc;
			h->mxfill = 0;
			h->mxninx = 0;
		}
	}
	return 0;
}

FPL_API int fpl_hist_add_exact(fpl_hist *h, const double *x, size_t n, const fpl_inexact *ix,
				size_t nix)
{
	if (!h || (n && !x) || (nix && !ix) || h->finished)
		return FPL_EINVAL;
	for (size_t k = 0; k < nix; k++)
		if (ix[k].pos >= n || (k && ix[k].pos <= ix[k - 1].pos))
			return FPL_EINVAL;
	aps_settle(h);
	if (h->cfg.scaling == FPL_HSCALE_MX)
		return add_mx(h, x, n, ix, nix);
	size_t off = 0;
	while (n > 0) {
		size_t m = n < HIST_CHUNK ? n : HIST_CHUNK, k0 = 0;
		while (k0 < nix && ix[k0].pos < off + m)
			k0++;
		int rc = add_plain64(h, x, m, ix, k0, off);
		if (rc)
			return rc;
		if (k0)	/* ix may be NULL when nix == 0 */
			ix += k0;
		nix -= k0;
		x += m;
		n -= m;
		off += m;
	}
	return 0;
}

FPL_API int fpl_hist_add(fpl_hist *h, const double *x, size_t n)
{
	return fpl_hist_add_exact(h, x, n, NULL, 0);
}

/* Can binary32 values be scaled by 2^k and cast in binary32, exactly? */
static int f32_ok(const fpl_hist *h)
{
	const fpl_format *f = &h->cfg.fmt;
	if (h->cfg.scaling == FPL_HSCALE_MX || !h->scale_pow2 || h->cfg.fmt.e > 8 ||
	    f->m > 23 || f->emin < -126 || f->emax > 127 || !f->explim)
		return 0;
	int k = h->scale_log2;
	if (k == 0)
		return 1;
	if (h->cfg.scaling != FPL_HSCALE_APS)
		return 0;	/* extremes unknown */
	if (k > 0)
		return h->amax == 0 || ldexp(h->amax, k) < 0x1p127;
	return h->amin > 3.5e38 || ldexp(h->amin, k) >= 0x1p-126;
}

typedef void (*classify_f32_fn)(fpl_hist *h, const float *v, const float *y, size_t n);

/* The binary32 classification loop: the AVX-512 one (fused with the cast)
 * where the selected kernel set is "avx512" (the CPU runs it), the AVX2
 * one where it is "avx2" or the CPU lacks AVX-512, the portable one for
 * "ref" (FPLAB_KERNELS or fpl_kernels_select); same results.  Sets *fused
 * when the loop also casts.  (The AVX2 one casts too where
 * hist_add_f32_avx2 can do the cast in its lanes; it says when not.) */
static classify_f32_fn classify_f32_pick(int *fused)
{
	*fused = 0;
#ifdef FPL_HAVE_X86_KERNELS
	const fpl_cpu_features *c = fpl_cpu();
	const char *ks = fpl_kernels_selected();
	if (c->avx512f && c->avx512bw && c->avx512dq && c->avx512vl && c->fma &&
	    strcmp(ks, "avx512") == 0) {
		*fused = 1;
		return hist_classify_f32_avx512;
	}
	if (c->avx2 && c->fma && strcmp(ks, "ref") != 0)
		return hist_classify_f32_avx2;
#endif
	return hist_classify_f32;
}

FPL_API int fpl_hist_add_f32(fpl_hist *h, const float *x, size_t n)
{
	if (!h || (n && !x) || h->finished)
		return FPL_EINVAL;
	aps_settle(h);
	int fast = f32_ok(h);
	int fused;
	classify_f32_fn classify = classify_f32_pick(&fused);
#ifdef FPL_HAVE_X86_KERNELS
	if (fast && fused) {
		int rc = hist_add_f32_avx512(h, x, n);
		if (rc != FPL_EFORMAT)
			return rc;
		fast = 0;
	}
	if (fast && classify == hist_classify_f32_avx2) {
		int rc = hist_add_f32_avx2(h, x, n);
		if (rc != 1)
			return rc;
	}
#endif
	while (n > 0) {
		size_t m = n < HIST_CHUNK ? n : HIST_CHUNK;
		int rc = FPL_EFORMAT;
		if (fast) {
			const float *v = x;
			if (h->scale_log2) {
				float s = ldexpf(1.0f, h->scale_log2);
				for (size_t i = 0; i < m; i++)
					h->xf[i] = x[i] * s;
				v = h->xf;
			}
			rc = fpl_round_array_f32(&h->cfg.fmt, h->yf, v, m, h->cfg.rnd, &h->cfg.st);
			if (rc == 0)
				classify(h, v, h->yf, m);
			if (rc == FPL_EFORMAT)
				fast = 0;
		}
		if (!fast) {
			/* widen, then the binary64 path (uses h->y as the widened copy is
			 * not allowed: xs and y are its scratch) */
			double tmp[512];
			for (size_t i0 = 0; i0 < m; i0 += 512) {
				size_t c = m - i0 < 512 ? m - i0 : 512;
				for (size_t i = 0; i < c; i++)
					tmp[i] = x[i0 + i];
				rc = fpl_hist_add(h, tmp, c);
				if (rc)
					return rc;
			}
			rc = 0;
		}
		if (rc)
			return rc;
		x += m;
		n -= m;
	}
	return 0;
}

FPL_API int fpl_hist_finish(fpl_hist *h)
{
	if (!h)
		return FPL_EINVAL;
	if (h->finished)
		return 0;
	aps_settle(h);
	if (h->cfg.scaling == FPL_HSCALE_MX && h->mxfill) {
		int rc = add_mx_blocks(h, h->mxbuf, h->mxfill, h->mxinx, h->mxninx);
		if (rc)
			return rc;
		h->mxfill = 0;
		h->mxninx = 0;
	}
	/* Unscaled runs: the input histogram is the presented one (the f32
	 * path leaves hist_in alone when k = 0). */
	if (!h->scale_varies && h->scale == 1.0)
		memcpy(h->hist_in, h->hist, sizeof h->hist);
	/* Saturated overflows looked normal to the classifier. */
	memcpy(h->events, h->cfg.st.count, sizeof h->events);
	uint64_t flagged = h->events[OVF_INDEX];
	uint64_t sat = flagged > h->ovf_direct ? flagged - h->ovf_direct : 0;
	if (sat > h->normal)
		sat = h->normal;
	h->normal -= sat;
	h->overflow = h->ovf_direct + sat;
	hist_suggest(h);
	h->finished = 1;
	return 0;
}

FPL_API void fpl_hist_merge(fpl_hist *total, const fpl_hist *part)
{
	total->count += part->count;
	total->zeros += part->zeros;
	total->nan_inf += part->nan_inf;
	total->became_zero += part->became_zero;
	total->subnormal += part->subnormal;
	total->normal += part->normal;
	total->overflow += part->overflow;
	total->err_n += part->err_n;
	total->err_sum += part->err_sum;
	total->err_sumsq += part->err_sumsq;
	if (part->err_max > total->err_max)
		total->err_max = part->err_max;
	total->abs_n += part->abs_n;
	total->abs_sum += part->abs_sum;
	total->abs_sumsq += part->abs_sumsq;
	if (part->abs_max > total->abs_max)
		total->abs_max = part->abs_max;
	for (int i = 0; i < FPL_NFLAGS; i++)
		total->events[i] += part->events[i];
	if (part->amax > total->amax)
		total->amax = part->amax;
	if (part->amin < total->amin)
		total->amin = part->amin;
	if (part->scale != total->scale || part->scale_varies)
		total->scale_varies = 1;
	total->mx_blocks += part->mx_blocks;
	for (int i = 0; i < FPL_HIST_NBINS; i++) {
		total->hist[i] += part->hist[i];
		total->hist_in[i] += part->hist_in[i];
	}
	total->finished = 1;
	hist_suggest(total);
}

/* SPDX-License-Identifier: MIT */
/*
 * classify.c - the per-element loop of `hist`: class counts, exponent
 * bins and the relative and absolute error of the cast, from bit
 * patterns.
 *
 * Invariant: the class of an element depends only on its input x (zero,
 * NaN/inf) and its cast y (zero, subnormal, normal, non-finite); casts
 * that overflowed to +-max (saturation) look normal here and are moved to
 * `overflow` at the end from the engine's overflow flag count
 * (fpl_hist_finish), so this loop needs no per-element flags.
 * The binary32 loop has an AVX2 twin, x86/classify_avx2.c; hist.c picks
 * one for each fpl_hist_add_f32 call.
 */
#include <math.h>
#include <string.h>

#include <fplab/ops.h>

#include "hist/hist_internal.h"

void hist_classify_f64(fpl_hist *h, const double *x, const double *v, const double *y,
		       size_t n)
{
	uint64_t z = 0, ni = 0, bz = 0, sub = 0, nor = 0, ovf = 0, en = 0, an = 0;
	double es = 0, esq = 0, emx = h->err_max, xmax = h->amax, xmin = h->amin;
	double as = 0, asq = 0, amx = h->abs_max;
	const double mn = h->cfg.fmt.min_normal;
	uint64_t *hb = h->hist - FPL_HIST_EMIN, *hi = h->hist_in - FPL_HIST_EMIN;
	for (size_t i = 0; i < n; i++) {
		double ax = fabs(x[i]);
		if (ax == 0) {
			z++;
			double d = fabs(y[i]);	/* v = +-0 */
			if (isfinite(d)) {
				an++, as += d, asq += d * d;
				amx = d > amx ? d : amx;
			}
			continue;
		}
		if (!isfinite(ax)) {
			ni++;
			continue;
		}
		/* v is finite nonzero: cast_segments casts the others exactly */
		uint64_t ub;
		xmax = ax > xmax ? ax : xmax;
		xmin = ax < xmin ? ax : xmin;
		memcpy(&ub, &ax, 8);
		hi[hist_ilogb64(ub)]++;
		double av = fabs(v[i]);
		memcpy(&ub, &av, 8);
		hb[hist_ilogb64(ub)]++;
		double ay = fabs(y[i]);
		if (!isfinite(ay)) {
			ovf++;
			continue;
		}
		if (ay == 0)
			bz++;
		else if (ay < mn)
			sub++;
		else
			nor++;
		double d = fabs(y[i] - v[i]), r = d / av;
		en++;
		es += r;
		esq += r * r;
		emx = r > emx ? r : emx;
		an++;
		as += d;
		asq += d * d;
		amx = d > amx ? d : amx;
	}
	h->zeros += z;
	h->nan_inf += ni;
	h->became_zero += bz;
	h->subnormal += sub;
	h->normal += nor;
	h->ovf_direct += ovf;
	h->err_n += en;
	h->err_sum += es;
	h->err_sumsq += esq;
	h->err_max = emx;
	h->abs_n += an;
	h->abs_sum += as;
	h->abs_sumsq += asq;
	h->abs_max = amx;
	h->amax = xmax;
	h->amin = xmin;
	h->count += n;
}

/*
 * The portable binary32 loop, the reference for x86/classify_avx2.c (used
 * instead where the CPU has AVX2 and the kernel set is not "ref"; same
 * counts, bins, extremes and maxima bit for bit, sums up to summation
 * order).  hist_f32_acc_init/_subnormals/_commit are shared by both.
 * Branch-free and split in two loops on purpose: the classes of
 * gradient-like data are close to random from one element to the next
 * (branches would mispredict), and the counting loop below has no
 * memory-carried dependency, so the compiler vectorises it; the exponent
 * bins go to four interleaved local histograms (binary32 binades
 * -149..128) so that runs of equal binades do not serialise on one counter.
 * Classes of finite nonzero x: y == 0 became zero, 0 < |y| < min normal sub,
 * |y| not finite over, else normal (saturated overflows are moved later).
 * With no scaling (k = 0) hist_in equals hist and is copied at the end
 * (fpl_hist_finish), so only hist is counted here.
 * The relative error (at most about 1 unless saturating) is summed in
 * binary32 per block of 1024; the absolute error, which can reach 2^128,
 * in binary64 (its square would overflow binary32).  |y - v| itself is
 * exact in binary32 whenever y is within a factor 2 of v (Sterbenz) or
 * zero, and otherwise rounded once.
 */
#define B32_LO (-149)
typedef int32_t v8i __attribute__((vector_size(16)));
typedef float v8f __attribute__((vector_size(16)));
typedef double v8d __attribute__((vector_size(32)));	/* the VL lanes widened */
#define VL 4	/* lanes: one SSE2 register */

void hist_f32_acc_init(hist_f32_acc *a, const fpl_hist *h)
{
	memset(a, 0, sizeof *a);
	a->emx = (float)h->err_max;
	a->bmin = 0x7f800000u;
}

uint32_t hist_f32_subnormals(hist_f32_acc *a, const float *v, size_t m)
{
	uint32_t c = 0;
	for (size_t i = 0; i < m; i++) {
		uint32_t ux;
		memcpy(&ux, &v[i], 4);
		ux &= 0x7fffffffu;
		if (ux && ux < 0x00800000u) {
			a->dsub[hist_ilogb32(ux) - B32_LO]++;
			c++;
		}
	}
	return c;
}

void hist_f32_commit(fpl_hist *h, const hist_f32_acc *a, size_t n)
{
	const int k = h->scale_log2;
	uint64_t *hb = h->hist - FPL_HIST_EMIN, *hi = h->hist_in - FPL_HIST_EMIN - k;
	for (int b = 1; b < 255; b++) {
		uint64_t c = a->bins[b];
		if (!c)
			continue;
		hb[b - 127] += c;
		if (k)
			hi[b - 127] += c;
	}
	for (int b = 0; b < 23; b++) {
		if (!a->dsub[b])
			continue;
		hb[b + B32_LO] += a->dsub[b];
		if (k)
			hi[b + B32_LO] += a->dsub[b];
	}
	h->zeros += a->nz;
	h->nan_inf += a->nni;
	h->became_zero += a->nun;
	h->subnormal += a->nsub;
	h->ovf_direct += a->nov;
	h->normal += n - a->nz - a->nni - a->nun - a->nsub - a->nov;
	h->err_n += a->en;
	h->err_sum += a->es;
	h->err_sumsq += a->esq;
	h->err_max = a->emx;
	h->abs_n += a->an;
	h->abs_sum += a->as;
	h->abs_sumsq += a->asq;
	h->abs_max = a->amxa > h->abs_max ? a->amxa : h->abs_max;
	if (a->bmax) {
		float fmax, fmin;
		memcpy(&fmax, &a->bmax, 4);
		memcpy(&fmin, &a->bmin, 4);
		double dmax = ldexp(fmax, -k), dmin = ldexp(fmin, -k);
		h->amax = dmax > h->amax ? dmax : h->amax;
		h->amin = dmin < h->amin ? dmin : h->amin;
	}
	h->count += n;
}

int hist_cast_setup(hist_cast *hc, const fpl_hist *h)
{
	const fpl_format *f = &h->cfg.fmt;
	const fpl_state *st = &h->cfg.st;
	const fpl_rnd rnd = h->cfg.rnd;
	if (rnd != FPL_RND_NE && rnd != FPL_RND_TZ && rnd != FPL_RND_TP && rnd != FPL_RND_TN)
		return 0;
	if (f->specials == FPL_SPEC_E8M0 || !f->explim || f->m > 22 || f->emin < -126 ||
	    f->emax > 127 || f->emin > f->emax)
		return 0;
	if (st->flip != FPL_FLIP_NONE && st->flip_prob > 0)
		return 0;
	/* emin >= -126 and m <= 22: Q = 2^(emin-m) >= 2^-148 is a float */
	hc->tiny_fb = f->subnormal != FPL_SUB_YES || f->daz ||
		      (f->tininess != FPL_TINY_BEFORE && f->emin < -125);
	const float fmin = (float)f->min_normal, fmax = (float)f->max;
	memcpy(&hc->min, &fmin, 4);
	memcpy(&hc->max, &fmax, 4);
	hc->s = 23 - f->m;
	hc->tiny_before = f->tininess == FPL_TINY_BEFORE;
	hc->C = ldexpf(1.0f, f->emin - f->m + 23);
	hc->Q = ldexpf(1.0f, f->emin - f->m);
	/* an overflow: its result and events from the scalar engine, on an
	 * input that overflows in every mode (they depend only on the mode
	 * and the sign) */
	for (int sg = 0; sg < 2; sg++) {
		fpl_state ps;
		fpl_state_init(&ps, st->seed);
		float yo = (float)fpl_round(f, sg ? -2 * f->max : 2 * f->max, rnd, &ps);
		uint32_t b;
		memcpy(&b, &yo, 4);
		*(sg ? &hc->aovn : &hc->aovp) = b & 0x7fffffffu;
		memcpy(sg ? hc->dneg : hc->dpos, ps.count, sizeof ps.count);
	}
	return 1;
}

void hist_classify_f32(fpl_hist *h, const float *v, const float *y, size_t n)
{
	const float mnf = (float)h->cfg.fmt.min_normal;
	uint32_t mn;
	memcpy(&mn, &mnf, 4);
	hist_f32_acc t;
	hist_f32_acc_init(&t, h);
	uint64_t sub[4][256];	/* by biased exponent */
	memset(sub, 0, sizeof sub);
	const uint32_t inf = 0x7f800000u;
	for (size_t i0 = 0; i0 < n; i0 += 1024) {
		size_t m = n - i0 < 1024 ? n - i0 : 1024;
		const float *vv = v + i0, *yy = y + i0;
		uint32_t cz = 0, cni = 0, cun = 0, csub = 0, cov = 0, cok = 0, cab = 0, mx = 0,
			 mi = inf;
		float acc = 0, acc2 = 0, amx = 0, dmx = 0;
		double dacc = 0, dacc2 = 0;
		size_t i = 0;
		{
			/* VL lanes with GCC vector extensions (SSE2 on baseline x86-64);
			 * all compared values are < 2^31, so signed lanes compare
			 * correctly */
			const v8i vinf = (v8i){ 0 } + (int32_t)inf, vmn = (v8i){ 0 } + (int32_t)mn;
			const v8i absm = (v8i){ 0 } + 0x7fffffff, one_bits = (v8i){ 0 } + 0x3f800000;
			v8i kz = { 0 }, kni = { 0 }, kun = { 0 }, ksub = { 0 }, kov = { 0 }, kok = { 0 };
			v8i kab = { 0 }, kmx = { 0 }, kmi = vinf;
			v8f fa = { 0 }, fa2 = { 0 }, fmx = { 0 }, dmxv = { 0 };
			v8d da = { 0 }, da2 = { 0 };
			for (; i + VL <= m; i += VL) {
				v8i ux, uy;
				v8f fv, fy;
				memcpy(&fv, vv + i, sizeof fv);
				memcpy(&fy, yy + i, sizeof fy);
				ux = (v8i)fv & absm;
				uy = (v8i)fy & absm;
				v8i z = ux == 0, ni = ux >= vinf, fin = ~(z | ni);
				v8i yov = uy >= vinf;
				kz -= z;
				kni -= ni;
				kun -= fin & (uy == 0);
				ksub -= fin & (uy != 0) & (uy < vmn);
				kov -= fin & yov;
				/* excluded lanes: 0 for the max, 0x7fffffff (above every
				 * finite |v|, and positive) for the min */
				v8i cx = ux & fin, cn = ux | (~fin & absm);
				v8i gt = cx > kmx, lt = cn < kmi;
				kmx = (cx & gt) | (kmx & ~gt);
				kmi = (cn & lt) | (kmi & ~lt);
				v8i ok = fin & ~yov;
				kok -= ok;
				v8f d = (v8f)((v8i)(fy - fv) & absm);
				v8f den = (v8f)((ux & ok) | (one_bits & ~ok));
				v8f r = (v8f)((v8i)(d / den) & ok);
				fa += r;
				fa2 += r * r;
				v8i rg = (v8i)r > (v8i)fmx;	/* r >= 0: compare as integers */
				fmx = (v8f)(((v8i)r & rg) | ((v8i)fmx & ~rg));
				/* absolute error over finite v (zeros too) with finite y */
				v8i okab = ~(ni | yov);
				kab -= okab;
				v8f dd = (v8f)((v8i)d & okab);
				v8d dw = __builtin_convertvector(dd, v8d);
				da += dw;
				da2 += dw * dw;
				v8i dg = (v8i)dd > (v8i)dmxv;
				dmxv = (v8f)(((v8i)dd & dg) | ((v8i)dmxv & ~dg));
			}
			for (int j = 0; j < VL; j++) {
				cz += (uint32_t)kz[j], cni += (uint32_t)kni[j], cun += (uint32_t)kun[j];
				csub += (uint32_t)ksub[j], cov += (uint32_t)kov[j], cok += (uint32_t)kok[j];
				mx = (uint32_t)kmx[j] > mx ? (uint32_t)kmx[j] : mx;
				mi = (uint32_t)kmi[j] < mi ? (uint32_t)kmi[j] : mi;
				acc += fa[j];
				acc2 += fa2[j];
				amx = fmx[j] > amx ? fmx[j] : amx;
				cab += (uint32_t)kab[j];
				dacc += da[j];
				dacc2 += da2[j];
				dmx = dmxv[j] > dmx ? dmxv[j] : dmx;
			}
		}
		for (; i < m; i++) {
			uint32_t ux, uy;
			memcpy(&ux, &vv[i], 4);
			memcpy(&uy, &yy[i], 4);
			ux &= 0x7fffffffu;
			uy &= 0x7fffffffu;
			uint32_t z = ux == 0, ni = ux >= inf, fin = 1 - z - ni;
			cz += z;
			cni += ni;
			cun += fin & (uy == 0);
			csub += fin & (uy != 0) & (uy < mn);
			uint32_t ov = fin & (uy >= inf);
			cov += ov;
			uint32_t fm = 0u - fin;
			uint32_t cx = ux & fm, cn = ux | ~fm;
			mx = cx > mx ? cx : mx;
			mi = cn < mi ? cn : mi;
			/* relative error over finite x != 0 with finite y */
			uint32_t ok = fin & (1 - ov);
			float a = fabsf(vv[i]), d = fabsf(yy[i] - vv[i]);
			float r = d / (ok ? a : 1.0f);
			r = ok ? r : 0.0f;
			acc += r;
			acc2 += r * r;
			amx = r > amx ? r : amx;
			cok += ok;
			uint32_t okab = (1 - ni) & (uy < inf);
			double dw = okab ? (double)d : 0.0;
			cab += okab;
			dacc += dw;
			dacc2 += dw * dw;
			dmx = okab && d > dmx ? d : dmx;
		}
		t.nz += cz, t.nni += cni, t.nun += cun, t.nsub += csub, t.nov += cov;
		t.en += cok, t.an += cab;
		t.es += acc, t.esq += acc2, t.as += dacc, t.asq += dacc2;
		t.emx = amx > t.emx ? amx : t.emx;
		t.amxa = dmx > t.amxa ? dmx : t.amxa;
		t.bmax = mx > t.bmax ? mx : t.bmax;
		t.bmin = mi < t.bmin ? mi : t.bmin;
		/* exponent bins by biased exponent (bin 0 also holds zeros and
		 * binary32 subnormals, bin 255 NaN/inf: both fixed below) */
		for (i = 0; i < m; i++) {
			uint32_t ux;
			memcpy(&ux, &vv[i], 4);
			sub[i & 3][(ux >> 23) & 0xff]++;
		}
		if (sub[0][0] + sub[1][0] + sub[2][0] + sub[3][0] > cz)
			(void)hist_f32_subnormals(&t, vv, m);	/* rare: own binades */
		for (int b = 0; b < 4; b++)
			sub[b][0] = sub[b][255] = 0;
	}
	for (int b = 1; b < 255; b++)
		t.bins[b] = sub[0][b] + sub[1][b] + sub[2][b] + sub[3][b];
	hist_f32_commit(h, &t, n);
}

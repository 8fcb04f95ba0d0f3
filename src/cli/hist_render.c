/* SPDX-License-Identifier: MIT */
/*
 * hist_render.c - the two pictures of `fplab hist`: the terminal chart
 * (one row per binade, Unicode eighth-block bars, the format's range
 * marked, ANSI colour only when asked) and the SVG document (a panel per
 * tensor with axes, the format's range shaded and the counts labelled).
 *
 * Invariant: both read the finished fpl_hist only; the SVG is a complete,
 * self-contained XML document (no external references; names escaped).
 */
#include <math.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/hist_render.h"

/* ------------------------------------------------------------ chart */
#define BAR_WIDTH 40

enum zone { Z_UNDER, Z_SUB, Z_NORMAL, Z_OVER };

static enum zone zone_of(const fpl_hist *h, int e)
{
	if (e > h->e_max)
		return Z_OVER;
	if (e >= h->e_minnorm)
		return Z_NORMAL;
	if (e >= h->e_minsub)
		return Z_SUB;
	return Z_UNDER;
}

static void bar(FILE *fp, uint64_t c, uint64_t max)
{
	static const char *const eighths[8] = { "", "\u258f", "\u258e", "\u258d",
						"\u258c", "\u258b", "\u258a", "\u2589" };
	int units = max ? (int)llround((double)c / (double)max * BAR_WIDTH * 8) : 0;
	if (c && units == 0)
		units = 1;
	int full = units / 8, cells = full + (units % 8 != 0);
	for (int i = 0; i < full; i++)
		fputs("\u2588", fp);
	fputs(eighths[units % 8], fp);
	for (int i = cells; i < BAR_WIDTH; i++)
		fputc(' ', fp);
}

static void pct(FILE *fp, const char *label, uint64_t v, uint64_t n)
{
	fprintf(fp, "  %s %llu (%.3g%%)", label, (unsigned long long)v, 100 * hist_frac(v, n));
}

void hist_chart_one(FILE *fp, const char *name, const struct hist_entry *e, const fpl_hist *h,
		    const struct hist_run *r, int colour)
{
	char shown[FPL_ESCAPED_NAME_MAX + 256];

	static const char *const zname[4] = { "under", "sub", "norm", "over" };
	static const char *const zcol[4] = { "\033[31m", "\033[33m", "\033[32m", "\033[31m" };
	char a[CLI_VALUE_MAX];

	fprintf(fp, "%s%s%s", colour ? "\033[1m" : "", fpl_escape(shown, sizeof shown, name),
		colour ? "\033[0m" : "");
	if (e) {
		fprintf(fp, "  %s [", fpl_dtype_name(e->dtype));
		for (int i = 0; i < e->ndim; i++)
			fprintf(fp, "%s%llu", i ? ", " : "", (unsigned long long)e->shape[i]);
		fputc(']', fp);
	}
	fprintf(fp, "  %llu values", (unsigned long long)h->count);
	if (h->scale_varies)
		fprintf(fp, ", scale %s", r->scaling);
	else if (h->scale != 1)
		h->scale_pow2 ? fprintf(fp, ", scaled by 2^%d", h->scale_log2)
			      : fprintf(fp, ", scaled by %s", cli_shortest(a, h->scale));
	fputc('\n', fp);
	fprintf(fp, "  zeros %llu  nan/inf %llu", (unsigned long long)h->zeros,
		(unsigned long long)h->nan_inf);
	pct(fp, " underflow", h->underflow, h->count);
	pct(fp, "subnormal", h->subnormal, h->count);
	pct(fp, "normal", h->normal, h->count);
	pct(fp, "overflow", h->overflow, h->count);
	fputc('\n', fp);
	if (h->err_n)
		fprintf(fp, "  relative error: max %.3g  mean %.3g  rms %.3g\n", h->err_max,
			h->err_sum / (double)h->err_n, sqrt(h->err_sumsq / (double)h->err_n));
	if (h->in_lo <= h->in_hi)
		fprintf(fp, "  suggested scale: 2^%d (APS: largest without overflow), "
			"2^%d (least underflow+overflow, about %llu values)\n", h->aps_k, h->best_k,
			(unsigned long long)h->best_loss);
	if (h->lo > h->hi) {
		fputs("  (no finite nonzero values)\n\n", fp);
		return;
	}
	uint64_t max = 0;
	for (int b = h->lo; b <= h->hi; b++)
		if (h->hist[b - FPL_HIST_EMIN] > max)
			max = h->hist[b - FPL_HIST_EMIN];
	/* rows: the data's binades and the format's marked ones (long empty
	 * stretches collapse to one row of dots) */
	int top = h->hi > h->e_max ? h->hi : h->e_max;
	int bottom = h->lo < h->e_minsub ? h->lo : h->e_minsub;
	int empty_run = 0;
	for (int b = top; b >= bottom; b--) {
		uint64_t c = h->hist[b - FPL_HIST_EMIN];
		int marked = b == h->e_max || b == h->e_minnorm || b == h->e_minsub;
		if (!c && !marked) {
			if (++empty_run == 2)
				fputs("     \u22ee\n", fp);
			if (empty_run >= 2)
				continue;
		} else
			empty_run = 0;
		enum zone z = zone_of(h, b);
		char lab[16];
		snprintf(lab, sizeof lab, "2^%d", b);
		fprintf(fp, "  %7s %-5s ", lab, zname[z]);
		if (colour)
			fputs(zcol[z], fp);
		bar(fp, c, max);
		if (colour)
			fputs("\033[0m", fp);
		fprintf(fp, " %10llu", (unsigned long long)c);
		if (b == h->e_max)
			fprintf(fp, "  \u2190 max %s", cli_shortest(a, r->fmt->max));
		if (b == h->e_minnorm)
			fprintf(fp, "  \u2190 min normal 2^%d", h->e_minnorm);
		if (b == h->e_minsub && h->e_minsub != h->e_minnorm)
			fprintf(fp, "  \u2190 min subnormal 2^%d", h->e_minsub);
		fputc('\n', fp);
	}
	fputc('\n', fp);
}

void hist_chart_head(FILE *fp, const struct hist_run *r)
{
	const fpl_format *f = r->fmt;
	char a[CLI_VALUE_MAX];
	fprintf(fp, "format %s: min subnormal 2^%d, min normal 2^%d, max %s; mode %s; scaling %s\n"
		"rows: floor(log2|x|) of the values cast (after scaling); under/sub/norm/over: "
		"where the binade falls\n\n",
		f->name, f->subnormal == FPL_SUB_YES ? f->emin - f->m : f->emin, f->emin,
		cli_shortest(a, f->max), fpl_rnd_name(r->rnd), r->scaling);
}

/* ------------------------------------------------------------ SVG */
#define PW 720	/* panel width */
#define PH 300	/* panel height */
#define HEAD 44	/* the page's heading, above the panels */
#define ML 70	/* margins: left, right, top, bottom */
#define MR 20
#define MT 70
#define MB 46

static void xml_text(FILE *fp, const char *raw)
{
	/* control characters are not allowed in XML 1.0: shown as \t, \x1b */
	char buf[FPL_ESCAPED_NAME_MAX + 256];
	const char *s = fpl_escape(buf, sizeof buf, raw);
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", fp); break;
		case '<': fputs("&lt;", fp); break;
		case '>': fputs("&gt;", fp); break;
		case '"': fputs("&quot;", fp); break;
		case '\'': fputs("&apos;", fp); break;
		default:
			fputc(*s, fp);
		}
	}
}

static void svg_panel(FILE *fp, int idx, double y0, const char *name, const fpl_hist *h,
		      const struct hist_run *r)
{
	int lo = h->lo <= h->hi ? h->lo : h->e_minsub, hi = h->lo <= h->hi ? h->hi : h->e_max;
	int xlo = (lo < h->e_minsub ? lo : h->e_minsub) - 1;
	int xhi = (hi > h->e_max ? hi : h->e_max) + 1;
	if (xhi - xlo + 1 > 72 && h->lo <= h->hi) {
		/* a wide format (bf16, fp32...): zoom on the data; the range
		 * marks beyond the edges are named there */
		xlo = lo - 4 < xlo ? xlo : lo - 4;
		xhi = hi + 4 > xhi ? xhi : hi + 4;
		if (xhi - xlo + 1 < 24) {
			int pad = (24 - (xhi - xlo + 1)) / 2 + 1;
			xlo -= pad;
			xhi += pad;
		}
	}
	double pw = PW - ML - MR, ph = PH - MT - MB, bw = pw / (xhi - xlo + 1);
	uint64_t max = 1;
	for (int b = lo; b <= hi && h->lo <= h->hi; b++)
		if (h->hist[b - FPL_HIST_EMIN] > max)
			max = h->hist[b - FPL_HIST_EMIN];
#define X(e) (ML + ((e) - xlo) * bw)
#define Y(c) (MT + ph - (double)(c) / (double)max * ph)
	fprintf(fp, "<g class=\"panel\" id=\"panel-%d\" data-tensor=\"", idx);
	xml_text(fp, name);
	fprintf(fp, "\" transform=\"translate(0,%.0f)\">\n", y0);
	fprintf(fp, "<rect x=\"0.5\" y=\"0.5\" width=\"%d\" height=\"%d\" fill=\"#fff\" "
		"stroke=\"#ccc\"/>\n", PW - 1, PH - 1);
	/* title and summary */
	fputs("<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">", fp);
	xml_text(fp, name);
	fputs("</text>\n", fp);
	/* two lines: one would run past the panel's right edge */
	fprintf(fp, "<text x=\"10\" y=\"35\" font-size=\"11\">%llu values: zeros %llu, "
		"nan/inf %llu</text>\n", (unsigned long long)h->count,
		(unsigned long long)h->zeros, (unsigned long long)h->nan_inf);
	fprintf(fp, "<text x=\"10\" y=\"49\" font-size=\"11\">underflow %llu (%.3g%%), "
		"subnormal %llu (%.3g%%), normal %llu (%.3g%%), overflow %llu (%.3g%%)</text>\n",
		(unsigned long long)h->underflow,
		100 * hist_frac(h->underflow, h->count), (unsigned long long)h->subnormal,
		100 * hist_frac(h->subnormal, h->count), (unsigned long long)h->normal,
		100 * hist_frac(h->normal, h->count), (unsigned long long)h->overflow,
		100 * hist_frac(h->overflow, h->count));
	/* the format's range, shaded (clipped to the axis): subnormal, normal */
#define CLIPX(e) X((e) < xlo ? xlo : (e) > xhi + 1 ? xhi + 1 : (e))
	if (h->e_minsub < h->e_minnorm)
		fprintf(fp, "<rect class=\"range-subnormal\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
			"height=\"%.0f\" fill=\"#fff2cc\"/>\n", CLIPX(h->e_minsub), MT,
			CLIPX(h->e_minnorm) - CLIPX(h->e_minsub), ph);
	fprintf(fp, "<rect class=\"range-normal\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
		"height=\"%.0f\" fill=\"#dcf2dc\"/>\n", CLIPX(h->e_minnorm), MT,
		CLIPX(h->e_max + 1) - CLIPX(h->e_minnorm), ph);
	char a[CLI_VALUE_MAX];
	int in_max = h->e_max + 1 <= xhi + 1;
	fprintf(fp, "<text x=\"%.2f\" y=\"%d\" font-size=\"10\" fill=\"#2a7a2a\" "
		"text-anchor=\"end\">%smax %s (2^%d)%s</text>\n", CLIPX(h->e_max + 1) - 2, MT + 12,
		in_max ? "" : "normal range continues to ", cli_shortest(a, r->fmt->max), h->e_max,
		in_max ? "" : " \u2192");
	if (h->e_minnorm >= xlo)
		fprintf(fp, "<text x=\"%.2f\" y=\"%d\" font-size=\"10\" fill=\"#2a7a2a\">min "
			"normal 2^%d</text>\n", CLIPX(h->e_minnorm) + 2, MT + 12, h->e_minnorm);
	else
		fprintf(fp, "<text x=\"%.2f\" y=\"%d\" font-size=\"10\" fill=\"#2a7a2a\">\u2190 min "
			"normal 2^%d</text>\n", X(xlo) + 2, MT + 24, h->e_minnorm);
	if (h->e_minsub < h->e_minnorm && h->e_minsub >= xlo)
		fprintf(fp, "<text x=\"%.2f\" y=\"%d\" font-size=\"10\" fill=\"#9a7a00\" "
			"text-anchor=\"end\">subnormal from 2^%d</text>\n", CLIPX(h->e_minnorm) - 2,
			MT + 24, h->e_minsub);
	else if (h->e_minsub < h->e_minnorm)
		fprintf(fp, "<text x=\"%.2f\" y=\"%d\" font-size=\"10\" fill=\"#9a7a00\">\u2190 "
			"subnormal from 2^%d</text>\n", X(xlo) + 2, MT + 36, h->e_minsub);
#undef CLIPX
	/* bars and their counts */
	for (int b = lo; b <= hi && h->lo <= h->hi; b++) {
		uint64_t c = h->hist[b - FPL_HIST_EMIN];
		if (!c)
			continue;
		enum zone z = zone_of(h, b);
		const char *col = z == Z_NORMAL ? "#3b7dd8" : z == Z_SUB ? "#d8a53b" : "#d83b3b";
		fprintf(fp, "<rect class=\"bar\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
			"fill=\"%s\"><title>2^%d: %llu</title></rect>\n", X(b) + 0.5, Y(c),
			bw > 1.5 ? bw - 1 : bw, MT + ph - Y(c), col, b, (unsigned long long)c);
		if (bw < 5 && c * 8 < max)
			continue;	/* too narrow to label every bar: the larger ones */
		if (bw >= 22)
			fprintf(fp, "<text class=\"count\" x=\"%.2f\" y=\"%.2f\" font-size=\"9\" "
				"text-anchor=\"middle\">%llu</text>\n", X(b) + bw / 2, Y(c) - 3,
				(unsigned long long)c);
		else
			fprintf(fp, "<text class=\"count\" font-size=\"8\" transform=\"translate(%.2f,%.2f) "
				"rotate(-90)\">%llu</text>\n", X(b) + bw / 2 + 3, Y(c) - 3,
				(unsigned long long)c);
	}
	if (h->lo > h->hi)
		fprintf(fp, "<text class=\"empty\" x=\"%.0f\" y=\"%.0f\" font-size=\"13\" "
			"text-anchor=\"middle\" fill=\"#555\">no finite nonzero values</text>\n",
			ML + pw / 2, MT + ph / 2);
	/* axes */
	fprintf(fp, "<g class=\"axes\" stroke=\"#333\" fill=\"none\">"
		"<line x1=\"%d\" y1=\"%.0f\" x2=\"%d\" y2=\"%.0f\"/>"
		"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.0f\"/></g>\n",
		ML, MT + ph, PW - MR, MT + ph, ML, MT, ML, MT + ph);
	int span = xhi - xlo + 1, step = 1;
	while (span / step > 14)
		step = step < 5 ? step + 1 : step * 2;
	for (int e = xlo; e <= xhi; e++) {
		if (((e % step) + step) % step)
			continue;
		fprintf(fp, "<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.0f\" stroke=\"#333\"/>"
			"<text x=\"%.2f\" y=\"%.0f\" font-size=\"10\" text-anchor=\"middle\">2"
			"<tspan dy=\"-5\" font-size=\"8\">%d</tspan></text>\n",
			X(e), MT + ph, X(e), MT + ph + 4, X(e), MT + ph + 17, e);
	}
	for (int t = 0; t <= 4; t++) {
		double c = (double)max * t / 4;
		fprintf(fp, "<line x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" stroke=\"#333\"/>"
			"<text x=\"%d\" y=\"%.2f\" font-size=\"10\" text-anchor=\"end\">%.4g</text>\n",
			ML - 4, Y(c), ML, Y(c), ML - 6, Y(c) + 3, c);
	}
	fprintf(fp, "<text x=\"%.0f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">"
		"floor(log2 |x|) of the values cast</text>\n", ML + pw / 2, PH - 8);
	fprintf(fp, "<text font-size=\"11\" text-anchor=\"middle\" "
		"transform=\"translate(16,%.0f) rotate(-90)\">count</text>\n", MT + ph / 2);
	fputs("</g>\n", fp);
#undef X
#undef Y
}

void hist_svg(FILE *fp, const struct hist_run *r)
{
	size_t np = r->n + (r->total != NULL);
	int note = r->more > 0 || np == 0;	/* a line below the panels */
	fprintf(fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%zu\" "
		"viewBox=\"0 0 %d %zu\" font-family=\"sans-serif\">\n",
		PW, np * PH + HEAD + 20 * note, PW, np * PH + HEAD + 20 * note);
	fprintf(fp, "<title>fplab hist: %s, mode %s, scaling ", r->fmt->name, fpl_rnd_name(r->rnd));
	xml_text(fp, r->scaling);
	fputs("</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/>\n", fp);
	fprintf(fp, "<text x=\"10\" y=\"18\" font-size=\"13\">fplab hist: format %s, mode %s, "
		"scaling ", r->fmt->name, fpl_rnd_name(r->rnd));
	xml_text(fp, r->scaling);
	fputs("</text>\n<text x=\"10\" y=\"35\" font-size=\"11\">shaded: the format's "
	      "subnormal (yellow) and normal (green) binades</text>\n", fp);
	for (size_t i = 0; i < r->n; i++)
		svg_panel(fp, (int)i, HEAD + (double)i * PH, r->e[i].name, &r->e[i].h, r);
	if (r->total)
		svg_panel(fp, (int)r->n, HEAD + (double)r->n * PH, "(total)", r->total, r);
	if (np == 0)
		fprintf(fp, "<text class=\"note\" x=\"10\" y=\"%d\" font-size=\"12\">no tensors "
			"in the input</text>\n", HEAD + 14);
	else if (r->more)
		fprintf(fp, "<text class=\"note\" x=\"10\" y=\"%.0f\" font-size=\"12\">and %zu "
			"more tensor%s without a panel (at most %d are drawn; the total counts "
			"all)</text>\n", HEAD + (double)np * PH + 14, r->more,
			r->more > 1 ? "s" : "", HIST_SVG_MAX);
	fputs("</svg>\n", fp);
}
